//! Reading a command line an agent typed into its shell, for a client hook: the few shapes a hook
//! may rewrite, and nothing else.
//!
//! It is not a shell parser. It takes words (plain, in single quotes, in double quotes with
//! nothing to expand), `&&` and `;` between commands, `VAR=value` before a command, and, at the
//! end, `2>&1`, `| tail -N` or `| head -N` (what agents add to save tokens). Anything else a
//! shell would read differently from its words (expansions, globs, redirections, subshells,
//! other pipes, backgrounding, comments, escapes) makes the line unreadable here, and a hook
//! leaves an unreadable line as it is.

/// A line split into commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLine<'a> {
    /// The commands in order, each with the operator that follows it.
    pub commands: Vec<ShellCommand<'a>>,
    /// The `| tail -N` or `| head -N` the line ends with: the lines the agent wanted to see.
    pub lines_wanted: Option<Trim>,
}

/// One command of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand<'a> {
    /// The command as typed, without the operator after it.
    pub text: &'a str,
    /// `VAR=value` words before the command, as typed.
    pub assignments: Vec<&'a str>,
    /// The command's words, unquoted.
    pub words: Vec<String>,
    /// `&&` or `;` after it; None for the last.
    pub then: Option<&'static str>,
}

/// Where a command leaves the shell's working directory for the commands after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cd<'a> {
    /// Not a directory change.
    Stays,
    /// `cd DIR`.
    To(&'a str),
    /// `cd` alone (home), `cd -`, `cd` with options, `pushd`, `popd`: not known here.
    Unknown,
}

impl ShellCommand<'_> {
    /// Where this command moves the shell, as far as its words tell.
    pub fn cd(&self) -> Cd<'_> {
        match self.words.as_slice() {
            [cd, to] if cd == "cd" && !to.starts_with('-') => Cd::To(to),
            [first, ..] if matches!(first.as_str(), "cd" | "pushd" | "popd") => Cd::Unknown,
            _ => Cd::Stays,
        }
    }
}

/// How a line's output was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    Tail(u32),
    Head(u32),
}

impl Trim {
    pub fn lines(self) -> u32 {
        match self {
            Trim::Tail(n) | Trim::Head(n) => n,
        }
    }
}

/// A piece of the line: a word with where it is, or an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word { text: String, start: usize, end: usize },
    Op { op: &'static str, start: usize },
}

/// Reads `line`; None when it holds anything beyond the shapes above.
pub fn read(line: &str) -> Option<ShellLine<'_>> {
    let tokens = tokens(line)?;
    let (tokens, lines_wanted) = strip_trim(&tokens)?;
    let mut commands = Vec::new();
    for (part, then) in split_commands(tokens)? {
        commands.push(command(line, part, then)?);
    }
    (!commands.is_empty()).then_some(ShellLine { commands, lines_wanted })
}

/// The line's tokens; None at the first character a shell would treat specially.
fn tokens(line: &str) -> Option<Vec<Token>> {
    let bytes = line.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' => at += 1,
            b'&' if bytes.get(at + 1) == Some(&b'&') => {
                tokens.push(Token::Op { op: "&&", start: at });
                at += 2;
            }
            b';' => {
                tokens.push(Token::Op { op: ";", start: at });
                at += 1;
            }
            b'|' if bytes.get(at + 1) != Some(&b'|') => {
                tokens.push(Token::Op { op: "|", start: at });
                at += 1;
            }
            b'2' if line[at..].starts_with("2>&1") && ends_word(bytes.get(at + 4)) => {
                tokens.push(Token::Op { op: "2>&1", start: at });
                at += 4;
            }
            _ => {
                let (text, end) = word(line, at)?;
                tokens.push(Token::Word { text, start: at, end });
                at = end;
            }
        }
    }
    Some(tokens)
}

fn ends_word(next: Option<&u8>) -> bool {
    next.is_none_or(|b| matches!(b, b' ' | b'\t' | b'|' | b';' | b'&'))
}

/// The word starting at `start`, unquoted, and where it ends; None when it holds something a
/// shell would expand or treat as syntax.
fn word(line: &str, start: usize) -> Option<(String, usize)> {
    let bytes = line.as_bytes();
    let mut text = String::new();
    let mut at = start;
    // A `#` or `~` starting a word is a comment or a home directory.
    if matches!(bytes[at], b'#' | b'~') {
        return None;
    }
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' | b';' | b'|' | b'&' => break,
            b'\'' => {
                let close = at + 1 + line[at + 1..].find('\'')?;
                text.push_str(&line[at + 1..close]);
                at = close + 1;
            }
            b'"' => {
                let close = at + 1 + line[at + 1..].find('"')?;
                let inner = &line[at + 1..close];
                if inner.contains(['$', '`', '\\', '!']) {
                    return None;
                }
                text.push_str(inner);
                at = close + 1;
            }
            b'$' | b'`' | b'\\' | b'(' | b')' | b'<' | b'>' | b'*' | b'?' | b'[' | b'{' | b'}' | b'!' | b'\n'
            | b'\r' => return None,
            _ => {
                let next =
                    line[at..].find(|c: char| " \t;|&'\"$`\\()<>*?[{}!\n\r".contains(c)).map_or(line.len(), |n| at + n);
                text.push_str(&line[at..next]);
                at = next;
            }
        }
    }
    // An `&` alone, or `||`: nothing here is a word.
    (at > start).then_some((text, at))
}

/// The tokens without a final `2>&1`, `| tail -N` or `| head -N`, and the lines that asked for.
/// Any other `|` or `2>&1` makes the line unreadable.
fn strip_trim(tokens: &[Token]) -> Option<(&[Token], Option<Trim>)> {
    let pipe = tokens.iter().position(|t| matches!(t, Token::Op { op: "|", .. }));
    let (mut head, trim) = match pipe {
        None => (tokens, None),
        Some(at) => (&tokens[..at], Some(trim(&tokens[at + 1..])?)),
    };
    if let [rest @ .., Token::Op { op: "2>&1", .. }] = head {
        head = rest;
    }
    if head.iter().any(|t| matches!(t, Token::Op { op: "|" | "2>&1", .. })) {
        return None;
    }
    Some((head, trim))
}

/// `tail -N`, `tail -n N`, `head -N` or `head -n N`, and nothing after.
fn trim(tokens: &[Token]) -> Option<Trim> {
    let words: Vec<&str> = tokens
        .iter()
        .map(|t| match t {
            Token::Word { text, .. } => Some(text.as_str()),
            Token::Op { .. } => None,
        })
        .collect::<Option<_>>()?;
    let (program, count) = match words.as_slice() {
        [program, flag] => (*program, flag.strip_prefix('-')?),
        [program, "-n", count] => (*program, *count),
        _ => return None,
    };
    // Digits only: `tail -n +5` prints from the fifth line on, and u32 would read `+5` as 5.
    if !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let lines = count.parse::<u32>().ok().filter(|&n| n > 0)?;
    match program {
        "tail" => Some(Trim::Tail(lines)),
        "head" => Some(Trim::Head(lines)),
        _ => None,
    }
}

/// The commands between `&&` and `;`, each with the operator after it; None for an empty one.
fn split_commands(tokens: &[Token]) -> Option<Vec<(&[Token], Option<&'static str>)>> {
    let mut parts = Vec::new();
    let mut from = 0;
    for (at, token) in tokens.iter().enumerate() {
        if let Token::Op { op, .. } = token {
            parts.push((&tokens[from..at], Some(*op)));
            from = at + 1;
        }
    }
    match &tokens[from..] {
        [] if parts.last().is_some_and(|(_, op)| *op == Some(";")) => {
            // A line may end with `;`.
            if let Some(last) = parts.last_mut() {
                last.1 = None;
            }
        }
        rest => parts.push((rest, None)),
    }
    parts.iter().all(|(part, _)| !part.is_empty()).then_some(parts)
}

fn command<'a>(line: &'a str, tokens: &[Token], then: Option<&'static str>) -> Option<ShellCommand<'a>> {
    let span = |t: &Token| match t {
        Token::Word { start, end, .. } => (*start, *end),
        Token::Op { start, op } => (*start, start + op.len()),
    };
    let (start, end) = (span(tokens.first()?).0, span(tokens.last()?).1);
    let mut assignments = Vec::new();
    let mut words = Vec::new();
    for token in tokens {
        let Token::Word { text, start, end } = token else { return None };
        if words.is_empty() && is_assignment(&line[*start..*end]) {
            assignments.push(&line[*start..*end]);
        } else {
            words.push(text.clone());
        }
    }
    (!words.is_empty()).then_some(ShellCommand { text: &line[start..end], assignments, words, then })
}

/// `NAME=value`, as typed: a name a shell takes for a variable, then `=`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        read(line).unwrap().commands.into_iter().map(|c| c.words).collect()
    }

    #[test]
    fn reads_words_and_quotes() {
        assert_eq!(words("cargo test -p core"), [["cargo", "test", "-p", "core"]]);
        assert_eq!(words("cargo test 'a b' \"c d\" e'f'g"), [["cargo", "test", "a b", "c d", "efg"]]);
        assert_eq!(words("  pytest   -k 'x and not y'  "), [["pytest", "-k", "x and not y"]]);
    }

    #[test]
    fn splits_chains_and_keeps_each_command_as_typed() {
        let line = read("cd crates/core && RUST_LOG=debug cargo test; npm test").unwrap();
        let texts: Vec<_> = line.commands.iter().map(|c| (c.text, c.then)).collect();
        assert_eq!(
            texts,
            [("cd crates/core", Some("&&")), ("RUST_LOG=debug cargo test", Some(";")), ("npm test", None)]
        );
        assert_eq!(line.commands[1].assignments, ["RUST_LOG=debug"]);
        assert_eq!(line.commands[1].words, ["cargo", "test"]);
        assert_eq!(words("cargo build;"), [["cargo", "build"]]);
    }

    #[test]
    fn reads_the_trim_agents_add() {
        for (line, trim) in [
            ("cargo test 2>&1 | tail -30", Trim::Tail(30)),
            ("cargo test | tail -n 5", Trim::Tail(5)),
            ("npm test 2>&1 | head -40", Trim::Head(40)),
        ] {
            let read = read(line).unwrap();
            assert_eq!((read.lines_wanted, read.commands.len()), (Some(trim), 1), "{line}");
            assert_eq!(read.commands[0].text.split(' ').count(), 2, "{line}");
        }
        assert_eq!(read("cargo test 2>&1").unwrap().lines_wanted, None);
    }

    #[test]
    fn tells_where_a_command_moves_the_shell() {
        let cd = |line: &str, want: Cd<'_>| assert_eq!(read(line).unwrap().commands[0].cd(), want, "{line}");
        cd("cd crates/core", Cd::To("crates/core"));
        cd("cd \"my dir\"", Cd::To("my dir"));
        cd("cargo test", Cd::Stays);
        cd("echo cd", Cd::Stays);
        for line in ["cd", "cd -", "cd -P ..", "cd -- x", "cd a b", "pushd crates", "popd"] {
            cd(line, Cd::Unknown);
        }
    }

    #[test]
    fn anything_a_shell_reads_otherwise_is_unreadable() {
        for line in [
            "cargo test > out.txt",
            "cargo test < in",
            "cargo test | grep FAIL",
            "cargo test | tail -f",
            "cargo test | tail -0",
            "cargo test | tail -n +5",
            "cargo test | head -+5",
            "cargo test 2>&1 | tail -5 | head -2",
            "cargo test 2>&1 && npm test",
            "cargo test &",
            "cargo test || true",
            "(cd x && cargo test)",
            "cargo test $FLAGS",
            "cargo test \"$FLAGS\"",
            "cargo test `x`",
            "pytest tests/*.py",
            "cargo test # comment",
            "cd ~/src && cargo test",
            "cargo test \\\n --release",
            "cargo test 'unclosed",
            "cargo test && && npm test",
            "&& cargo test",
            "",
            "RUST_LOG=debug",
        ] {
            assert_eq!(read(line), None, "{line:?}");
        }
    }
}
