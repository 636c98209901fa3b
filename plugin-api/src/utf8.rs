//! UTF-8 validation of one line, for [`crate::Line::text`], which parsers call on most lines.
//!
//! `std::str::from_utf8` checks ASCII two words at a time only from an aligned address, and a
//! byte at a time before it and after a character beyond ASCII: on lines of a few dozen bytes,
//! that is most of them, and a line of build output costs it three to four times what this
//! costs. Here ASCII goes eight bytes at a time from wherever it starts, and each character
//! beyond ASCII is checked against the table of well-formed sequences (Unicode, Table 3-7).

/// `bytes` as text when they are valid UTF-8, exactly as `std::str::from_utf8` judges them.
#[inline]
pub(crate) fn as_str(bytes: &[u8]) -> Option<&str> {
    if !is_utf8(bytes) {
        return None;
    }
    // SAFETY: `is_utf8` accepts exactly the well-formed sequences of Unicode's Table 3-7, which
    // is what `str` requires; `tests` hold it to `std::str::from_utf8` over every lead byte and
    // second byte, and over random lines.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
}

const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

fn is_utf8(bytes: &[u8]) -> bool {
    is_ascii(bytes) || is_utf8_beyond_ascii(bytes)
}

/// Whether every byte is ASCII, with no branch per word: most lines are, and the walk below
/// costs several times more for them, as does `<[u8]>::is_ascii` on short lines.
#[inline]
fn is_ascii(bytes: &[u8]) -> bool {
    if let Some(last) = bytes.last_chunk::<8>() {
        let (words, _) = bytes.as_chunks::<8>();
        let any = words.iter().fold(u64::from_le_bytes(*last), |any, word| any | u64::from_le_bytes(*word));
        return any & HIGH == 0;
    }
    // Fewer than eight bytes: the first four and the last four, which may overlap.
    if let (Some(first), Some(last)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        return (u32::from_le_bytes(*first) | u32::from_le_bytes(*last)) & 0x8080_8080 == 0;
    }
    bytes.iter().all(u8::is_ascii)
}

#[inline(never)]
fn is_utf8_beyond_ascii(bytes: &[u8]) -> bool {
    let mut at = 0;
    while at < bytes.len() {
        let high = word_at(bytes, at) & HIGH;
        if high == 0 {
            at += 8;
            continue;
        }
        // The first byte beyond ASCII: the lowest set bit is the first byte in memory.
        at += high.trailing_zeros() as usize / 8;
        match char_len(&bytes[at..]) {
            Some(len) => at += len,
            None => return false,
        }
    }
    true
}

/// The eight bytes from `at`, the first the lowest; zeros for those past the end.
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let rest = &bytes[at..];
    if let Some(word) = rest.first_chunk() {
        return u64::from_le_bytes(*word);
    }
    // Fewer than eight left: the word that ends the line, without the bytes before `at`, rather
    // than a byte at a time.
    match bytes.last_chunk() {
        Some(last) => u64::from_le_bytes(*last) >> (8 * (8 - rest.len())),
        None => rest.iter().rev().fold(0, |word, &b| word << 8 | u64::from(b)),
    }
}

/// The length of the well-formed character beyond ASCII that `bytes` starts with; None when it
/// starts with no such character.
fn char_len(bytes: &[u8]) -> Option<usize> {
    // The length, and the range of the second byte, by the lead byte; every later byte is
    // 0x80..=0xBF.
    let (len, low, high) = match bytes[0] {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return None,
    };
    let rest = bytes.get(1..len)?;
    let in_range = (low..=high).contains(&rest[0]) && rest[1..].iter().all(|&b| b & 0xC0 == 0x80);
    in_range.then_some(len)
}

#[cfg(test)]
mod tests {
    use super::as_str;

    fn same_as_std(bytes: &[u8]) {
        assert_eq!(as_str(bytes), std::str::from_utf8(bytes).ok(), "{bytes:02x?}");
    }

    #[test]
    fn every_lead_and_second_byte_is_judged_as_std_judges_it() {
        // The bytes where a later byte's range begins or ends, and one on each side.
        const LATER: [u8; 8] = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xbf, 0xc0];
        for lead in 0..=255u8 {
            same_as_std(&[lead]);
            for second in 0..=255u8 {
                same_as_std(&[lead, second]);
                for third in LATER {
                    same_as_std(&[lead, second, third]);
                    for fourth in LATER {
                        same_as_std(&[lead, second, third, fourth]);
                    }
                }
            }
        }
    }

    #[test]
    fn a_byte_beyond_ascii_is_seen_wherever_it_falls() {
        for len in 0..40 {
            let ascii = vec![b'a'; len];
            assert!(super::is_ascii(&ascii), "{len} bytes");
            for at in 0..len {
                let mut line = ascii.clone();
                line[at] = 0x80;
                assert!(!super::is_ascii(&line), "at {at} of {len}");
                same_as_std(&line);
            }
        }
    }

    #[test]
    fn random_lines_are_judged_as_std_judges_them_wherever_a_character_falls() {
        const PIECES: [&[u8]; 10] = [
            b"a",
            b"build ok ",
            b"\xe2\x9c\x93",
            b"\xc3\xa9",
            b"\xf0\x9f\x98\x80",
            b"\xe2\x9c",
            b"\x80",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xc0\xaf",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let mut line = Vec::new();
            for _ in 0..next() % 12 {
                let piece = next() as usize % PIECES.len();
                // Mostly valid pieces, so that a line's invalid byte may come late.
                line.extend_from_slice(PIECES[if piece > 5 && next() % 4 != 0 { piece % 6 } else { piece }]);
            }
            same_as_std(&line);
        }
    }
}
