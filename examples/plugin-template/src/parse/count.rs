//! The closing count: `checker: 2 errors, 1 warning`, or `checker: no problems`.

use super::Found;
use buildvise_plugin_api::{Recogniser, Text, Wants};

pub(super) struct Count;

impl Recogniser<Found> for Count {
    fn wants(&self) -> Wants {
        Wants::starts(&["checker: "])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(counts) = line.text.strip_prefix("checker: ") else { return false };
        let errors = counts.split(", ").find_map(|part| {
            let (n, word) = part.split_once(' ')?;
            word.starts_with("error").then(|| n.parse().ok())?
        });
        found.reported_errors = Some(errors.unwrap_or(0));
        true
    }
}
