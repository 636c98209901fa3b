//! What parsers share when they gather results: deduplication of repeated diagnostics and
//! test-name joining.

use crate::types::Diagnostic;
use std::collections::HashSet;

/// Joins describe/suite titles and a test title the way results show them: `a > b > test`.
pub fn join_test_name<S: AsRef<str>>(parts: &[S]) -> String {
    parts.iter().map(|p| p.as_ref().trim()).filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" > ")
}

/// Diagnostics in first-seen order, each distinct one once. Tools repeat themselves (MSBuild after
/// `Build FAILED.`, cargo for lib and lib-test, jest's "Summary of all failing tests"); identity is
/// severity, file, line, column, code, message and test.
#[derive(Debug, Default)]
pub struct DiagnosticSet {
    items: Vec<Diagnostic>,
    seen: HashSet<Key>,
}

type Key = (crate::Severity, Option<String>, Option<u32>, Option<u32>, Option<String>, String, Option<String>);

fn key(d: &Diagnostic) -> Key {
    (d.severity, d.file.clone(), d.line, d.column, d.code.clone(), d.message.clone(), d.test.clone())
}

impl DiagnosticSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `d` unless an identical one is already here; returns whether it was added.
    pub fn push(&mut self, d: Diagnostic) -> bool {
        if self.seen.insert(key(&d)) {
            self.items.push(d);
            true
        } else {
            false
        }
    }

    /// True when an identical diagnostic is already here.
    pub fn contains(&self, d: &Diagnostic) -> bool {
        self.seen.contains(&key(d))
    }

    /// The last diagnostic added, to attach notes or extend its log range.
    pub fn last_mut(&mut self) -> Option<&mut Diagnostic> {
        self.items.last_mut()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_test_names() {
        assert_eq!(join_test_name(&["Calc ", "", "adds"]), "Calc > adds");
    }

    #[test]
    fn drops_exact_repeats_only() {
        let mut set = DiagnosticSet::new();
        let d = Diagnostic::error("boom").with_location("a.rs", Some(1), Some(2));
        assert!(set.push(d.clone()));
        assert!(!set.push(d.clone()));
        assert!(set.push(d.with_code("E1")));
        assert_eq!(set.len(), 2);
    }
}
