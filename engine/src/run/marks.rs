//! A run's mark: the value of [`MARK`] in its command's environment, which whatever the command
//! starts inherits, so that a run's processes can be told apart from any other's (see
//! `leftovers` on Unix); and how the processes a run left are named in its answer.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks a run's processes.
pub const MARK: &str = "BUILDVISE_RUN";

/// A session's marks share a random prefix, so that no other buildvise, nor a process started
/// with a copy of an old environment, carries one of ours.
pub(super) fn new_session() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // Without randomness, the pid and the clock still tell this process's marks apart.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        bytes = ((u64::from(std::process::id()) << 32) ^ nanos as u64).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The session of runs that no guard watches.
pub(super) fn unguarded_session() -> &'static str {
    static SESSION: OnceLock<String> = OnceLock::new();
    SESSION.get_or_init(new_session)
}

/// A fresh mark in `session`: the value `MARK` gets for one run.
pub(super) fn new_mark(session: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{session}.{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// `sleep ×2, sh`: each name once, in the order found, with how many processes had it when more
/// than one did; at most `most` names, then `…`.
pub fn names(names: &[String], most: usize) -> String {
    let mut distinct: Vec<(&str, usize)> = Vec::new();
    for name in names {
        match distinct.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => *count += 1,
            None => distinct.push((name, 1)),
        }
    }
    let mut said: Vec<String> = distinct
        .iter()
        .take(most)
        .map(|&(name, count)| if count > 1 { format!("{name} ×{count}") } else { name.to_string() })
        .collect();
    if distinct.len() > most {
        said.push("…".to_string());
    }
    said.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_said_once_each_with_their_count() {
        let said = |list: &[&str], most| names(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>(), most);
        assert_eq!(said(&["sleep", "sh", "sleep"], 3), "sleep ×2, sh");
        assert_eq!(said(&["a", "b", "c", "d"], 3), "a, b, c, …");
    }
}
