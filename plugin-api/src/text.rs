//! Cutting text to size for an answer.

use std::borrow::Cow;

/// `text` cut to at most `max_bytes` bytes on a character boundary, with `…` marking the cut.
/// Headlines and notes pass through this so that a 10 MB line never becomes a 10 MB message.
pub fn clip(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// Where `finder` occurs in `haystack`, left to right. A parser builds its searchers once (in a
/// `LazyLock`) and calls this on every line: `Finder::find_iter` copies the searcher on every
/// call, which costs more than searching a line.
pub fn occurrences<'h>(finder: &'h memchr::memmem::Finder<'_>, haystack: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + finder.find(haystack.get(from..)?)?;
        from = at + 1;
        Some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_are_every_match_left_to_right_overlaps_included() {
        let finder = memchr::memmem::Finder::new("aa");
        assert_eq!(occurrences(&finder, b"aaa-aa").collect::<Vec<_>>(), [0, 1, 4]);
        assert_eq!(occurrences(&finder, b"").count(), 0);
    }

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 3), "abc…");
        // `é` is two bytes: a cut in its middle backs off to before it.
        assert_eq!(clip("aé", 2), "a…");
        assert_eq!(clip("ééé", 0), "…");
    }
}
