//! Removing terminal escape sequences. The host strips lines before parsers see them; plugins use
//! this for artifacts and for text they pull out of JSON.

/// Removes ANSI/VT escape sequences (CSI such as colours, OSC such as hyperlinks, and two-byte
/// escapes) and a trailing `\r`. Returns the input unchanged, without copying, when it holds none.
pub fn strip_ansi(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let trimmed = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    // One SIMD pass over the line: most lines carry no escape at all. (0x9b, the 8-bit CSI, is
    // not looked for: in UTF-8 text it is an ordinary continuation byte.)
    let Some(first) = memchr::memchr(0x1b, trimmed) else {
        return std::borrow::Cow::Borrowed(trimmed);
    };
    // The text between escapes is copied a run at a time: byte by byte, a coloured line cost
    // more than parsing it.
    let mut out = Vec::with_capacity(trimmed.len());
    let mut i = 0;
    let mut escape = Some(first);
    while let Some(at) = escape {
        out.extend_from_slice(&trimmed[i..at]);
        i = if at + 1 < trimmed.len() { skip_escape(trimmed, at + 1) } else { at + 1 };
        escape = memchr::memchr(0x1b, &trimmed[i..]).map(|next| i + next);
    }
    out.extend_from_slice(&trimmed[i..]);
    std::borrow::Cow::Owned(out)
}

/// `i` points just past ESC; returns the index after the sequence.
fn skip_escape(s: &[u8], i: usize) -> usize {
    match s[i] {
        b'[' => {
            // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
            let mut j = i + 1;
            while j < s.len() && !(0x40..=0x7e).contains(&s[j]) {
                j += 1;
            }
            (j + 1).min(s.len())
        }
        b']' | b'P' | b'_' | b'^' => {
            // OSC and friends: up to BEL or ESC \.
            let mut j = i + 1;
            while j < s.len() {
                if s[j] == 0x07 {
                    return j + 1;
                }
                if s[j] == 0x1b && j + 1 < s.len() && s[j + 1] == b'\\' {
                    return j + 2;
                }
                j += 1;
            }
            s.len()
        }
        _ => i + 1,
    }
}

/// [`strip_ansi`] for text.
pub fn strip_ansi_str(text: &str) -> std::borrow::Cow<'_, str> {
    match strip_ansi(text.as_bytes()) {
        std::borrow::Cow::Borrowed(_) if !text.ends_with('\r') => std::borrow::Cow::Borrowed(text),
        stripped => std::borrow::Cow::Owned(String::from_utf8_lossy(&stripped).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_links_and_carriage_return() {
        let line = b"\x1b[1m\x1b[31merror\x1b[0m: \x1b]8;;file:///a.rs\x07a.rs\x1b]8;;\x1b\\ done\r";
        assert_eq!(&*strip_ansi(line), b"error: a.rs done");
    }

    #[test]
    fn leaves_plain_text_borrowed() {
        assert!(matches!(strip_ansi(b"plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(strip_ansi_str("a\x1b[32mb"), "ab");
    }

    #[test]
    fn survives_truncated_escapes() {
        assert_eq!(&*strip_ansi(b"x\x1b[31"), b"x");
        assert_eq!(&*strip_ansi(b"x\x1b"), b"x");
        assert_eq!(&*strip_ansi(b"\x1b[1ma\x1b]8;;u\x1b\\b\x1b"), b"ab");
    }
}
