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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 3), "abc…");
        // `é` is two bytes: a cut in its middle backs off to before it.
        assert_eq!(clip("aé", 2), "a…");
        assert_eq!(clip("ééé", 0), "…");
    }
}
