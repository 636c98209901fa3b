//! Run ids: 8 random characters from a small alphabet, validated before any path is built.

use super::StoreError;

const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
const LEN: usize = 8;

/// A fresh random id. Uniqueness is enforced by creating its directory exclusively.
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
    bytes.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect()
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
