//! [`PrefixSet`]: which of many prefixes a line starts with, at the cost of one lookup for most
//! lines.

/// Prefixes, each with a value, looked up by a line's first byte: a line is compared only with
/// the prefixes that start with the same byte, so a line that starts like none of them costs one
/// load. [`crate::Recognisers`] dispatches on it; a parser may use it for its own sets of words
/// (status verbs, markers). `plugin-api/benches/dispatch.rs` measures it.
pub struct PrefixSet<T> {
    /// For each byte, the prefixes starting with it, in the order they were inserted.
    buckets: Vec<Vec<(&'static [u8], T)>>,
}

impl<T: Copy> Default for PrefixSet<T> {
    fn default() -> Self {
        PrefixSet { buckets: (0..256).map(|_| Vec::new()).collect() }
    }
}

impl<T: Copy> PrefixSet<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `prefix` with `value`.
    ///
    /// # Panics
    /// On an empty prefix: every line starts with it, which says nothing about a line.
    pub fn insert(&mut self, prefix: &'static str, value: T) {
        let prefix = prefix.as_bytes();
        let first = *prefix.first().expect("an empty prefix matches every line: use a test for that");
        self.buckets[usize::from(first)].push((prefix, value));
    }

    /// The values of the prefixes `bytes` starts with, in the order they were inserted.
    pub fn matches<'a>(&'a self, bytes: &'a [u8]) -> impl Iterator<Item = T> + 'a {
        let bucket = bytes.first().map_or(&[][..], |&first| &self.buckets[usize::from(first)]);
        bucket.iter().filter(|(prefix, _)| starts_with(bytes, prefix)).map(|&(_, value)| value)
    }

    /// The value of the first prefix (in the order they were inserted) `bytes` starts with.
    #[inline]
    pub fn first_match(&self, bytes: &[u8]) -> Option<T> {
        self.matches(bytes).next()
    }

    /// Whether no line could match: no prefix was inserted.
    pub fn is_empty(&self) -> bool {
        self.buckets.iter().all(Vec::is_empty)
    }
}

/// `bytes.starts_with(prefix)`, compared a byte at a time: prefixes are a few bytes, and the call
/// to `memcmp` that `starts_with` makes of a slice of unknown length cost more than comparing them
/// (the dispatch bench).
#[inline]
fn starts_with(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes.iter().zip(prefix).all(|(b, p)| b == p)
}

#[cfg(test)]
mod tests {
    use super::PrefixSet;

    #[test]
    fn a_line_matches_every_prefix_it_starts_with_in_insertion_order() {
        let mut set = PrefixSet::new();
        for (i, prefix) in ["error", "e", "warning", "err", "✓", "✗"].into_iter().enumerate() {
            set.insert(prefix, i);
        }
        let matches = |line: &str| set.matches(line.as_bytes()).collect::<Vec<_>>();
        assert_eq!(matches("error: x"), [0, 1, 3]);
        assert_eq!(matches("eh"), [1]);
        assert_eq!(matches("warn"), Vec::<usize>::new(), "a line shorter than the prefix");
        assert_eq!(matches("✓ passes"), [4], "a character beyond ASCII, by its bytes");
        assert_eq!(matches("✗ fails"), [5], "one that shares its first byte with another");
        assert_eq!(matches(""), Vec::<usize>::new());
        assert_eq!(set.first_match(b"error"), Some(0));
        assert_eq!(set.first_match(b"note"), None);
        assert!(!set.is_empty());
        assert!(PrefixSet::<()>::new().is_empty());
    }

    #[test]
    #[should_panic(expected = "an empty prefix matches every line")]
    fn an_empty_prefix_is_refused() {
        PrefixSet::new().insert("", ());
    }
}
