//! JavaScript stack frames, as Node, Jest, Vitest, Mocha and node:test print them, and the rule
//! for which one locates a failure: the first frame inside the project.

use buildvise_plugin_api::split_location;

/// A location in a frame: file as printed (`file://` already removed), 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub column: Option<u32>,
}

/// Reads `at fn (file:line:col)`, `at file:line:col`, Vitest's `❯ fn file:line:col` and the
/// bare `fn (file:line:col)` of node:test's YAML. The text must already be trimmed; callers
/// check the leading `at ` or `❯ ` themselves.
pub fn parse(text: &str) -> Option<Frame> {
    let text = text.trim_end();
    let location = match text.strip_suffix(')') {
        Some(inner) => &inner[inner.rfind('(')? + 1..],
        None => text.rsplit(' ').next()?,
    };
    let location = location.strip_prefix("file://").unwrap_or(location);
    let (file, line, column) = split_location(location)?;
    Some(Frame { file: file.to_string(), line, column })
}

/// True for a frame in the project's own code: not a dependency, not Node's internals.
pub fn in_project(frame: &Frame) -> bool {
    let file = frame.file.as_str();
    !(file.starts_with("node:")
        || file.starts_with("internal/")
        || file.starts_with('<')
        || file.contains("node_modules/")
        || file.contains("node_modules\\")
        || file == "native")
}

/// The frame on a stack line (`at ...`), when it lies in the project.
pub fn project_frame(trimmed: &str) -> Option<Frame> {
    let rest = trimmed.strip_prefix("at ")?;
    parse(rest).filter(in_project)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_frame_shapes() {
        let f = parse("Object.toEqual (test/strings.test.js:20:53)").expect("frame");
        assert_eq!((f.file.as_str(), f.line, f.column), ("test/strings.test.js", 20, Some(53)));
        let f =
            parse("Object.throwingMatcher [as toThrow] (node_modules/expect/build/index.js:2235:93)").expect("frame");
        assert!(!in_project(&f));
        assert_eq!(parse("test/ledger.test.ts:25:25").map(|f| f.line), Some(25));
        let f = parse("TestContext.<anonymous> (file:///srv/app/test/math.test.js:10:12)").expect("frame");
        assert_eq!(f.file, "/srv/app/test/math.test.js");
        assert_eq!(parse("parseTask src/queue.ts:35:11").map(|f| f.file), Some("src/queue.ts".into()));
    }

    #[test]
    fn skips_internal_frames() {
        assert_eq!(project_frame("at new Promise (<anonymous>)"), None);
        assert_eq!(project_frame("at process.processImmediate (node:internal/timers:478:21)"), None);
        assert_eq!(project_frame("not a frame"), None);
        assert!(project_frame("at run (src/a.js:1:2)").is_some());
        assert_eq!(parse("at (broken"), None);
    }
}
