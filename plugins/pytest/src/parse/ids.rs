//! Finding the node ids a section title can name, without a scan over every id per section: a
//! run with 100 000 failures has 100 000 sections and as many ids.
//!
//! A title names a test by its trailing `::` segments (`TestA.test_x[1]` is the end of
//! `tests/t.py::TestA::test_x[1]`), so ids are kept in a tree of their segments read from the end.
//! Each node lists, in report order, the ids that end with the segments on its path.

use super::outcome_slot;
use super::summary::Outcome;
use hashbrown::{DefaultHashBuilder, HashTable};
use smallvec::SmallVec;
use std::hash::BuildHasher;

/// A tree of the ids' `::` segments from the end. Built once per run with one entry per distinct
/// suffix: a segment's text is copied once, into `text`, and looking one up copies nothing.
#[derive(Debug, Default)]
pub struct SuffixIndex {
    /// Node 0 is the root.
    nodes: Vec<Node>,
    /// Every segment's text, end to end.
    text: String,
    /// The nodes below the root, found by (parent node, segment).
    children: HashTable<usize>,
    hasher: DefaultHashBuilder,
}

#[derive(Debug, Default)]
struct Node {
    parent: usize,
    /// The segment leading here from the parent, as a span of `text`.
    segment: (usize, usize),
    /// The items whose id ends with this node's segments, in the order they were added. Most
    /// nodes hold one (every id's own segments end in a node of their own), kept inline: a
    /// `Vec` each made two allocations per id.
    items: SmallVec<[usize; 1]>,
    /// Per outcome: how far along `items` every item is known to be used.
    cursors: [usize; 2],
}

impl SuffixIndex {
    /// Adds the id of item `item`; items must come in increasing order.
    pub fn insert(&mut self, id: &str, item: usize) {
        if self.nodes.is_empty() {
            self.nodes.push(Node::default());
        }
        let mut node = 0;
        for segment in id.rsplit("::") {
            node = match self.child(node, segment) {
                Some(child) => child,
                None => self.add_child(node, segment),
            };
            self.nodes[node].items.push(item);
        }
    }

    /// The items whose id is `tail` or ends with `::tail`, in order. (A tail that starts with
    /// `:` is not looked for in the `:::` run it would overlap; no pytest title starts so.)
    pub fn ending_with(&self, tail: &str) -> &[usize] {
        self.node(tail).map_or(&[], |node| &self.nodes[node].items)
    }

    /// The first item ending with `tail` that `used` does not reject. `used` must only ever turn
    /// from false to true for an item (for the same `key`): items found used are skipped for
    /// good, which keeps a whole run of lookups linear.
    pub fn first_unused(&mut self, tail: &str, key: Outcome, used: impl Fn(usize) -> bool) -> Option<usize> {
        let node = self.node(tail)?;
        let node = &mut self.nodes[node];
        let cursor = &mut node.cursors[outcome_slot(key)];
        while let Some(&item) = node.items.get(*cursor) {
            if !used(item) {
                return Some(item);
            }
            *cursor += 1;
        }
        None
    }

    fn node(&self, tail: &str) -> Option<usize> {
        if self.nodes.is_empty() {
            return None;
        }
        tail.rsplit("::").try_fold(0, |node, segment| self.child(node, segment))
    }

    fn child(&self, parent: usize, segment: &str) -> Option<usize> {
        let hash = self.hasher.hash_one((parent, segment));
        self.children.find(hash, |&n| self.is(n, parent, segment)).copied()
    }

    fn add_child(&mut self, parent: usize, segment: &str) -> usize {
        let (n, start) = (self.nodes.len(), self.text.len());
        self.text.push_str(segment);
        self.nodes.push(Node { parent, segment: (start, segment.len()), ..Node::default() });
        let hash = self.hasher.hash_one((parent, segment));
        let SuffixIndex { nodes, text, children, hasher } = self;
        let rehash = |&n: &usize| {
            let node = &nodes[n];
            let (start, len) = node.segment;
            hasher.hash_one((node.parent, &text[start..(start + len)]))
        };
        children.insert_unique(hash, n, rehash);
        n
    }

    fn is(&self, n: usize, parent: usize, segment: &str) -> bool {
        let node = &self.nodes[n];
        let (start, len) = node.segment;
        node.parent == parent && &self.text[start..(start + len)] == segment
    }
}

/// Whether `id` is `tail` or ends with `::tail`, segment for segment as [`SuffixIndex`] reads
/// them.
pub fn ends_with_segments(id: &str, tail: &str) -> bool {
    let mut segments = id.rsplit("::");
    tail.rsplit("::").all(|wanted| segments.next() == Some(wanted))
}

/// Items in the order they were added, and per key how far along every item is known to be
/// used: the first not yet used, found by walking forward, never back.
#[derive(Debug, Default)]
pub struct InOrder {
    items: Vec<usize>,
    cursors: [usize; 2],
}

impl InOrder {
    pub fn push(&mut self, item: usize) {
        self.items.push(item);
    }

    /// The first item `used` does not reject; `used` must only ever turn from false to true for
    /// an item (for the same `key`), as for [`SuffixIndex::first_unused`].
    pub fn first_unused(&mut self, key: Outcome, used: impl Fn(usize) -> bool) -> Option<usize> {
        let cursor = &mut self.cursors[outcome_slot(key)];
        while let Some(&item) = self.items.get(*cursor) {
            if !used(item) {
                return Some(item);
            }
            *cursor += 1;
        }
        None
    }
}

/// A set of ids, their text end to end in one buffer: a run with 100 000 failures adds as many,
/// and a `String` each made building the set and dropping it a tenth of the parse, their frees
/// scattered over the heap.
#[derive(Debug, Default)]
pub struct IdSet {
    /// Each id as a span of `text`.
    spans: HashTable<(usize, usize)>,
    text: String,
    hasher: DefaultHashBuilder,
}

impl IdSet {
    pub fn insert(&mut self, id: &str) {
        let hash = self.hasher.hash_one(id);
        let IdSet { spans, text, hasher } = self;
        let span = |&(start, len): &(usize, usize)| &text[start..(start + len)];
        if spans.find(hash, |s| span(s) == id).is_some() {
            return;
        }
        let new = (text.len(), id.len());
        text.push_str(id);
        let text = &*text;
        spans.insert_unique(hash, new, |&(start, len)| hasher.hash_one(&text[start..(start + len)]));
    }

    pub fn contains(&self, id: &str) -> bool {
        let hash = self.hasher.hash_one(id);
        self.spans.find(hash, |&(start, len)| &self.text[start..(start + len)] == id).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_ends_with_a_tail_segment_for_segment() {
        for (id, tail) in
            [("t.py::T::test_x[a::b]", "T::test_x[a::b]"), ("t.py::test_x", "t.py::test_x"), ("a:::b", "b")]
        {
            let mut index = SuffixIndex::default();
            index.insert(id, 0);
            assert!(ends_with_segments(id, tail), "{id} ends with {tail}");
            assert_eq!(index.ending_with(tail), [0], "the index agrees for {id} and {tail}");
        }
        for (id, tail) in
            [("t.py::test_xy", "y"), ("t.py::test_x", "u.py::test_x"), ("test_x", "t.py::test_x"), ("a:::b", ":b")]
        {
            let mut index = SuffixIndex::default();
            index.insert(id, 0);
            assert!(!ends_with_segments(id, tail), "{id} does not end with {tail}");
            assert!(index.ending_with(tail).is_empty(), "the index agrees for {id} and {tail}");
        }
    }

    #[test]
    fn in_order_items_are_walked_forward_per_key() {
        let mut order = InOrder::default();
        for i in [4, 7, 9] {
            order.push(i);
        }
        assert_eq!(order.first_unused(Outcome::Failed, |i| i == 4), Some(7));
        assert_eq!(order.first_unused(Outcome::Failed, |_| false), Some(7), "never back to an item found used");
        assert_eq!(order.first_unused(Outcome::Error, |_| false), Some(4), "each key has its own cursor");
        assert_eq!(order.first_unused(Outcome::Failed, |_| true), None);
    }

    #[test]
    fn an_id_set_holds_each_id_whole_and_once() {
        let mut set = IdSet::default();
        for id in ["t.py::test_a", "t.py::test_ab", "t.py::test_a", ""] {
            set.insert(id);
        }
        assert!(set.contains("t.py::test_a") && set.contains("t.py::test_ab") && set.contains(""));
        assert!(!set.contains("t.py::test_"), "a prefix of an id is not the id");
        assert!(!set.contains("py::test_a"));
        assert_eq!(set.spans.len(), 3);
        assert_eq!(set.text, "t.py::test_at.py::test_ab");
    }

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
