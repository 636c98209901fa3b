//! Finding the node ids a section title can name, without a scan over every id per section: a
//! run with 100 000 failures has 100 000 sections and as many ids.
//!
//! A title names a test by its trailing `::` segments (`TestA.test_x[1]` is the end of
//! `tests/t.py::TestA::test_x[1]`), so ids are kept in a tree of their segments read from the end.
//! Each node lists, in report order, the ids that end with the segments on its path.

use super::summary::Outcome;
use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct SuffixIndex {
    /// (parent node, segment) → node; node 0 is the root.
    children: HashMap<(usize, String), usize>,
    /// Per node, the items whose id ends with the node's segments, in the order they were added.
    items: Vec<Vec<usize>>,
    /// Per node and outcome: how far along `items` every item is known to be used.
    cursors: HashMap<(usize, Outcome), usize>,
}

impl SuffixIndex {
    /// Adds the id of item `item`; items must come in increasing order.
    pub fn insert(&mut self, id: &str, item: usize) {
        if self.items.is_empty() {
            self.items.push(Vec::new());
        }
        let mut node = 0;
        for segment in id.rsplit("::") {
            let next = self.items.len();
            node = *self.children.entry((node, segment.to_string())).or_insert(next);
            if node == next {
                self.items.push(Vec::new());
            }
            self.items[node].push(item);
        }
    }

    /// The items whose id is `tail` or ends with `::tail`, in order. (A tail that starts with
    /// `:` is not looked for in the `:::` run it would overlap; no pytest title starts so.)
    pub fn ending_with(&self, tail: &str) -> &[usize] {
        self.node(tail).map_or(&[], |node| &self.items[node])
    }

    /// The first item ending with `tail` that `used` does not reject. `used` must only ever turn
    /// from false to true for an item (for the same `key`): items found used are skipped for
    /// good, which keeps a whole run of lookups linear.
    pub fn first_unused(&mut self, tail: &str, key: Outcome, used: impl Fn(usize) -> bool) -> Option<usize> {
        let node = self.node(tail)?;
        let cursor = self.cursors.entry((node, key)).or_default();
        while let Some(&item) = self.items[node].get(*cursor) {
            if !used(item) {
                return Some(item);
            }
            *cursor += 1;
        }
        None
    }

    fn node(&self, tail: &str) -> Option<usize> {
        tail.rsplit("::").try_fold(0, |node, segment| self.children.get(&(node, segment.to_string())).copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ids_by_their_trailing_segments() {
        let mut index = SuffixIndex::default();
        for (i, id) in
            ["t.py::TestA::test_x[a::b]", "u.py::test_x[a::b]", "t.py::TestB::test_x[a::b]"].iter().enumerate()
        {
            index.insert(id, i);
        }
        assert_eq!(index.ending_with("test_x[a::b]"), [0, 1, 2]);
        assert_eq!(index.ending_with("TestA::test_x[a::b]"), [0]);
        assert_eq!(index.ending_with("u.py::test_x[a::b]"), [1]);
        assert!(index.ending_with("x[a::b]").is_empty());
        assert!(index.ending_with("").is_empty());
        assert_eq!(index.ending_with("b]").len(), 3, "a bracket's `::` splits like any other");
    }

    #[test]
    fn used_items_are_skipped_once_and_for_all() {
        let mut index = SuffixIndex::default();
        for i in 0..4 {
            index.insert(&format!("m{i}.py::test"), i);
        }
        let used = [true, false, true, false];
        assert_eq!(index.first_unused("test", Outcome::Failed, |i| used[i]), Some(1));
        assert_eq!(index.first_unused("test", Outcome::Failed, |i| i < 3), Some(3));
        assert_eq!(index.first_unused("test", Outcome::Error, |_| false), Some(0), "each outcome has its own cursor");
        assert_eq!(index.first_unused("nope", Outcome::Failed, |_| false), None);
    }
}
