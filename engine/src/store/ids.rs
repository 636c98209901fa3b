//! Run ids: 8 characters, validated before any path is built.
//!
//! New ids are four random consonant-vowel syllables (`bafotemu`): every answer and every `log`
//! call carries the id, and pronounceable ids cost an agent about half the tokens of random
//! alphanumerics (o200k: `run bafotemu` 4 tokens, `run k3x9a2bq` 9). 14 × 5 syllables, four of
//! them: 24 million ids, uniqueness enforced by creating the run's directory exclusively.

use super::StoreError;

const CONSONANTS: &[u8] = b"bdfgklmnprstvz";
const VOWELS: &[u8] = b"aeiou";
/// What a valid id may hold: lowercase letters and digits (ids from older versions included).
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const LEN: usize = 8;

/// A fresh random id.
pub fn new_run_id() -> String {
    let mut bytes = [0u8; LEN];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to the clock, still made unique by the exclusive create.
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let mixed = nanos ^ (u128::from(std::process::id()) << 64);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (mixed >> (i * 7)) as u8;
        }
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let letters = if i % 2 == 0 { CONSONANTS } else { VOWELS };
            letters[usize::from(*b) % letters.len()] as char
        })
        .collect()
}

/// Accepts exactly what [`new_run_id`] makes, so that `../x` or `/etc` never reach the filesystem.
pub fn validate_run_id(id: &str) -> Result<&str, StoreError> {
    if id.len() == LEN && id.bytes().all(|b| ALPHABET.contains(&b)) {
        Ok(id)
    } else {
        Err(StoreError::BadRunId(id.chars().take(40).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_validate() {
        for _ in 0..100 {
            let id = new_run_id();
            assert_eq!(validate_run_id(&id).unwrap(), id);
        }
    }

    #[test]
    fn path_like_ids_are_refused() {
        for bad in ["../x", "../../../etc", "/etc/passwd", "abc", "ABCDEFGH", "abcdefgh/", "abcdefg.", ""] {
            assert!(validate_run_id(bad).is_err(), "{bad} accepted");
        }
    }
}
