//! Small line-shape helpers shared by the readers of pytest's output.

/// Longest text kept from one line, in bytes. pytest's own lines are far shorter; a huge line of
/// captured output must not be copied whole into a diagnostic.
const MAX_KEPT: usize = 400;

/// `text` cut to at most [`MAX_KEPT`] bytes by the shared [`buildvise_plugin_api::clip`].
pub fn clip(text: &str) -> String {
    buildvise_plugin_api::clip(text, MAX_KEPT).into_owned()
}

/// The title of a separator line drawn with `sep` (`==== FAILURES ====`, `____ test_x ____`,
/// `---- Captured stdout call ----`), or None when the line is not one. A separator without a
/// title, or the `_ _ _` line between traceback entries, has no title and gives None.
pub fn sep_title(line: &str, sep: u8) -> Option<&str> {
    let ruled = |end: Option<&u8>| end == Some(&sep);
    let inner = trim_rules(line, sep);
    if inner.is_empty() || !ruled(line.as_bytes().first()) || !ruled(line.as_bytes().last()) {
        return None;
    }
    let title = inner.strip_prefix(' ')?.strip_suffix(' ')?.trim();
    (title.bytes().any(|b| b != sep && b != b' ')).then_some(title)
}

/// `line` without the `sep` bytes (ASCII) it starts and ends with.
pub fn trim_rules(line: &str, sep: u8) -> &str {
    let bytes = line.as_bytes();
    let start = rule_len(bytes.chunks_exact(8), bytes.iter(), sep);
    let end = bytes.len() - rule_len(bytes.rchunks_exact(8), bytes.iter().rev(), sep);
    &line[start..end.max(start)]
}

/// How many `sep` bytes a line starts (or ends) with, given its bytes eight at a time and one at a
/// time from that end. The rules are most of a separator line: they are compared eight bytes at a
/// time, not decoded a `char` at a time as `trim_start_matches` would.
fn rule_len<'a>(chunks: impl Iterator<Item = &'a [u8]>, bytes: impl Iterator<Item = &'a u8>, sep: u8) -> usize {
    let whole = chunks.take_while(|chunk| *chunk == [sep; 8]).count() * 8;
    whole + bytes.skip(whole).take_while(|&&b| b == sep).count()
}

/// Whether `text` holds `::`, as node ids do. `str::contains` builds a searcher on every call,
/// which costs more than the search on a line.
pub fn has_double_colon(text: &[u8]) -> bool {
    memchr::memchr_iter(b':', text).any(|at| text.get(at + 1) == Some(&b':'))
}

/// True for a Python class name as pytest prints it (`KeyError`, `Failed`, `pkg.CustomError`):
/// identifier characters and dots, the last part starting with a capital letter.
pub fn is_exception_name(name: &str) -> bool {
    is_dotted_identifier(name)
        && name.rsplit('.').next().is_some_and(|last| last.starts_with(|c: char| c.is_uppercase()))
}

/// `a.b_c.D` — what can stand where pytest prints a type name.
pub fn is_dotted_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// The exception class at the start of `Type: message` or a bare `Type`, when it looks like one,
/// as its [`class_code`].
pub fn leading_exception(text: &str) -> Option<&str> {
    let name = match text.split_once(':') {
        Some((name, rest)) if rest.is_empty() || rest.starts_with(' ') => name,
        Some(_) => return None,
        None => text,
    };
    is_exception_name(name).then(|| class_code(name))
}

/// `Type: message` with a warning's module left out, as [`class_code`] names the warning
/// (`PytestRemovedIn9Warning: …` for `pytest.PytestRemovedIn9Warning: …`), so that the answer,
/// which leaves out a message's leading code, does not say the class twice.
pub fn without_warning_module(text: &str) -> &str {
    match leading_exception(text).zip(text.split_once(':')) {
        Some((code, (name, _))) if code.len() < name.len() => &text[name.len() - code.len()..],
        _ => text,
    }
}

/// The code a class printed as `name` is reported under. A warning is its class alone, as the
/// warnings summary prints it (`PytestRemovedIn9Warning`), though a warning turned into an
/// exception is printed with its module (`E   pytest.PytestRemovedIn9Warning: …`): one warning
/// keeps one code however it surfaced, and the class is the word to search the docs and the code
/// for. Other exceptions keep the name as printed (`json.decoder.JSONDecodeError`).
pub fn class_code(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((_, class)) if class.ends_with("Warning") => class,
        _ => name,
    }
}

/// A location line: `path:line`, `path:line: rest`. The path holds no whitespace (pytest prints
/// paths relative to the cwd, or absolute) unless it is a `<frozen ...>` pseudo-path; a Windows
/// drive letter is part of the path.
pub fn split_location_line(line: &str) -> Option<(&str, u32, &str)> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let bytes = line.as_bytes();
    // A location found after a space or tab has a path with whitespace: only a pseudo-path may.
    // So the colons are looked for only up to there, in one pass.
    let reach =
        if line.starts_with('<') { bytes.len() } else { memchr::memchr2(b' ', b'\t', bytes).unwrap_or(bytes.len()) };
    for colon in memchr::memchr_iter(b':', &bytes[..reach]) {
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let end = colon + 1 + digits;
        if digits > 0 && (end == bytes.len() || bytes[end] == b':') {
            let path = &line[..colon];
            let plain = !path.contains(char::is_whitespace) || path.starts_with('<');
            let number = line[colon + 1..end].parse::<u32>().ok()?;
            if !path.is_empty() && plain {
                let rest = if end == bytes.len() { "" } else { &line[end + 1..] };
                return Some((path, number, rest));
            }
            return None;
        }
    }
    None
}

/// `File "path", line N` (Python's own traceback frame, also inside pytest's `E` lines).
pub fn python_frame(text: &str) -> Option<(&str, u32)> {
    let rest = text.trim_start().strip_prefix("File \"")?;
    let (path, rest) = rest.split_once("\", line ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let line = rest[..digits].parse().ok()?;
    Some((path, line))
}

/// Splits `node_id - message` as the short summary prints it. Node ids hold no spaces except
/// inside a parametrize id, which can itself contain ` - `: when the id has brackets the split
/// happens after the closing one.
pub fn split_id_message(text: &str) -> (&str, Option<&str>) {
    let dash = match (text.find(" - "), text.find('[')) {
        (None, _) => None,
        (Some(dash), None) => Some(dash),
        (Some(dash), Some(open)) if dash < open => Some(dash),
        (Some(_), Some(open)) => text[open..].find("] - ").map(|close| open + close + 1),
    };
    match dash {
        Some(d) => (&text[..d], Some(&text[d + 3..])),
        None => (text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(sep_title("==== FAILURES ====", b'='), Some("FAILURES"));
        assert_eq!(sep_title("___ test_x[a b] ___", b'_'), Some("test_x[a b]"));
        assert_eq!(sep_title("_ TestA.test_long_name _", b'_'), Some("TestA.test_long_name"));
        assert_eq!(sep_title("_ _ _ _ _ _ _ _", b'_'), None);
        assert_eq!(sep_title("========", b'='), None);
        assert_eq!(sep_title("== x", b'='), None);
        assert_eq!(sep_title("- generated xml file: /a/junit.xml -", b'-'), Some("generated xml file: /a/junit.xml"));
    }

    #[test]
    fn locations() {
        assert_eq!(split_location_line("tests/t.py:19: AssertionError"), Some(("tests/t.py", 19, " AssertionError")));
        assert_eq!(split_location_line("tests/t.py:33: "), Some(("tests/t.py", 33, " ")));
        assert_eq!(split_location_line("/abs/t.py:25"), Some(("/abs/t.py", 25, "")));
        assert_eq!(split_location_line(r"C:\p\t.py:4: in f"), Some((r"C:\p\t.py", 4, " in f")));
        assert_eq!(
            split_location_line("<frozen importlib._bootstrap>:1204: in _gcd"),
            Some(("<frozen importlib._bootstrap>", 1204, " in _gcd"))
        );
        assert_eq!(split_location_line("x = 'a:1: B'"), None);
        assert_eq!(split_location_line("    tests/t.py:1: E"), None);
        assert_eq!(split_location_line("t.py:99999999999: E"), None);
    }

    #[test]
    fn exception_names() {
        assert_eq!(leading_exception("KeyError: 'x'"), Some("KeyError"));
        assert_eq!(leading_exception("requests.HTTPError"), Some("requests.HTTPError"));
        // pytest 8.4.2's `E` line for a warning turned into an error: the class alone, as the
        // long style's closing line (`structures.py:467: PytestRemovedIn9Warning`) names it.
        assert_eq!(
            leading_exception("pytest.PytestRemovedIn9Warning: Marks applied to fixtures have no effect"),
            Some("PytestRemovedIn9Warning")
        );
        assert_eq!(
            without_warning_module("pytest.PytestRemovedIn9Warning: Marks applied to fixtures have no effect"),
            "PytestRemovedIn9Warning: Marks applied to fixtures have no effect"
        );
        assert_eq!(without_warning_module("json.decoder.JSONDecodeError: bad"), "json.decoder.JSONDecodeError: bad");
        assert_eq!(leading_exception("assert 1 == 2"), None);
        assert_eq!(leading_exception("Differing items:"), None);
        assert_eq!(leading_exception("http://x: y"), None);
    }

    #[test]
    fn ids_and_messages() {
        assert_eq!(split_id_message("t.py::a - KeyError: 'b'"), ("t.py::a", Some("KeyError: 'b'")));
        assert_eq!(
            split_id_message("t.py::p[a b - c] - assert 'a b - c' == 1"),
            ("t.py::p[a b - c]", Some("assert 'a b - c' == 1"))
        );
        assert_eq!(split_id_message("t.py::p[-0.5-0--1.0]"), ("t.py::p[-0.5-0--1.0]", None));
        assert_eq!(split_id_message("t.py::p[x - y]"), ("t.py::p[x - y]", None));
        assert_eq!(split_id_message("t.py"), ("t.py", None));
        assert_eq!(clip(&"é".repeat(300)).len(), 400 + "…".len());
    }
}
