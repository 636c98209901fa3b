//! `hook codex`: Codex CLI's `PreToolUse` hook on its `Bash` tool (docs/hooks.md cites the
//! contract).
//!
//! Codex applies `updatedInput` only beside `permissionDecision: "allow"`, and that `allow`
//! skips Codex's approval prompt and its automatic review. So a line is rewritten only when
//! Codex would run it without asking anyway: the session never asks (`approval_policy =
//! "never"`, which Codex names `bypassPermissions` to its hooks), or every command of it matches
//! an `allow` rule of the user's `rules/*.rules`. A `prompt` or `forbidden` rule that matches a
//! command stops the rewrite in every mode. A project's own rules only ever stop it: Codex loads
//! them only in a project the user trusts, which the hook cannot see.

use super::pre_tool_use::Call;
use std::path::{Path, PathBuf};

/// The answer that runs `line` instead, when Codex would run `typed` (the commands of the line
/// as typed) without asking.
pub fn answer(call: &Call, line: &str, typed: &[String], rules: &Rules) -> Option<String> {
    let words: Vec<Vec<String>> = typed.iter().map(|c| shlex::split(c)).collect::<Option<_>>()?;
    let decided = |w: &Vec<String>, decisions: &[Decision]| {
        rules.rules.iter().any(|r| decisions.contains(&r.decision) && r.matches(w))
    };
    if words.iter().any(|w| decided(w, &[Decision::Prompt, Decision::Forbidden])) {
        return None;
    }
    let allowed = |w: &Vec<String>| rules.rules.iter().any(|r| r.user && r.decision == Decision::Allow && r.matches(w));
    if !call.never_asks && !words.iter().all(allowed) {
        return None;
    }
    Some(call.approved_rewrite(line))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Allow,
    Prompt,
    Forbidden,
}

/// One `prefix_rule`: for each leading word, the words it may be.
#[derive(Debug)]
struct Rule {
    pattern: Vec<Vec<String>>,
    decision: Decision,
    /// From the user's own layer, the only one whose `allow` the hook takes.
    user: bool,
}

impl Rule {
    fn matches(&self, words: &[String]) -> bool {
        words.len() >= self.pattern.len() && self.pattern.iter().zip(words).all(|(any, word)| any.contains(word))
    }
}

/// The exec-policy rules of the user's layer and of the project's folders.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// The rules of `codex_home/rules/*.rules` and of `.codex/rules/*.rules` in `cwd` and each
    /// folder above it; None when one of those files cannot be read as rules: rules not read
    /// cannot be honoured.
    pub fn load(codex_home: Option<&Path>, cwd: &Path) -> Option<Rules> {
        let mut rules = Rules::default();
        let mut layers: Vec<(PathBuf, bool)> = codex_home.map(|h| (h.join("rules"), true)).into_iter().collect();
        layers.extend(cwd.ancestors().map(|dir| (dir.join(".codex/rules"), false)));
        for (dir, user) in layers {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            for entry in entries {
                let path = entry.ok()?.path();
                if path.extension().is_some_and(|e| e == "rules") {
                    let text = std::fs::read_to_string(&path).ok()?;
                    rules.rules.extend(parse(&text)?.into_iter().map(|(pattern, decision)| Rule {
                        pattern,
                        decision,
                        user,
                    }));
                }
            }
        }
        Some(rules)
    }
}

/// A value of a rules file, as far as the hook reads them.
#[derive(Debug)]
enum Literal {
    Str(String),
    List(Vec<Literal>),
}

/// The `prefix_rule` calls of a rules file (Starlark, of which the hook reads calls with
/// keyword arguments of strings and lists); None for anything else in it.
fn parse(text: &str) -> Option<Vec<(Vec<Vec<String>>, Decision)>> {
    let mut at = Cursor { chars: text.chars().collect(), at: 0 };
    let mut rules = Vec::new();
    while at.skip_blank() {
        let name = at.ident()?;
        at.expect('(')?;
        let mut args = Vec::new();
        while !at.eat(')') {
            let key = at.ident()?;
            at.expect('=')?;
            args.push((key, at.literal()?));
            if !at.eat(',') {
                at.expect(')')?;
                break;
            }
        }
        match name.as_str() {
            "prefix_rule" => rules.push(prefix_rule(&args)?),
            // Where a program lives: nothing the hook decides on.
            "host_executable" => {}
            _ => return None,
        }
    }
    Some(rules)
}

/// A `prefix_rule`'s pattern and decision (`allow` when it names none, as Codex reads it).
fn prefix_rule(args: &[(String, Literal)]) -> Option<(Vec<Vec<String>>, Decision)> {
    let arg = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let Some(Literal::List(items)) = arg("pattern") else { return None };
    let pattern = items
        .iter()
        .map(|item| match item {
            Literal::Str(word) => Some(vec![word.clone()]),
            Literal::List(any) => {
                any.iter().map(|w| if let Literal::Str(w) = w { Some(w.clone()) } else { None }).collect()
            }
        })
        .collect::<Option<Vec<_>>>()?;
    let decision = match arg("decision") {
        None => Decision::Allow,
        Some(Literal::Str(d)) if d == "allow" => Decision::Allow,
        Some(Literal::Str(d)) if d == "prompt" => Decision::Prompt,
        Some(Literal::Str(d)) if d == "forbidden" => Decision::Forbidden,
        Some(_) => return None,
    };
    (!pattern.is_empty()).then_some((pattern, decision))
}

struct Cursor {
    chars: Vec<char>,
    at: usize,
}

impl Cursor {
    /// Skips blanks and `#` comments; false at the end.
    fn skip_blank(&mut self) -> bool {
        while let Some(&c) = self.chars.get(self.at) {
            if c == '#' {
                while self.chars.get(self.at).is_some_and(|&c| c != '\n') {
                    self.at += 1;
                }
            } else if c.is_whitespace() {
                self.at += 1;
            } else {
                return true;
            }
        }
        false
    }

    fn eat(&mut self, want: char) -> bool {
        let found = self.skip_blank() && self.chars[self.at] == want;
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, want: char) -> Option<()> {
        self.eat(want).then_some(())
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_blank();
        let start = self.at;
        while self.chars.get(self.at).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
            self.at += 1;
        }
        (self.at > start).then(|| self.chars[start..self.at].iter().collect())
    }

    fn literal(&mut self) -> Option<Literal> {
        if self.eat('[') {
            let mut items = Vec::new();
            while !self.eat(']') {
                items.push(self.literal()?);
                if !self.eat(',') {
                    self.expect(']')?;
                    break;
                }
            }
            return Some(Literal::List(items));
        }
        self.skip_blank();
        let quote = *self.chars.get(self.at).filter(|c| **c == '"' || **c == '\'')?;
        self.at += 1;
        let mut text = String::new();
        loop {
            match *self.chars.get(self.at)? {
                c if c == quote => break,
                // Escapes and strings across lines are read otherwise by Starlark than here.
                '\\' | '\n' => return None,
                c => text.push(c),
            }
            self.at += 1;
        }
        self.at += 1;
        Some(Literal::Str(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const RULES: &str = r#"
# Written by Codex when the user chose "don't ask again".
prefix_rule(pattern=["cargo", "test"], decision="allow")
prefix_rule(
    pattern = ["npm", ["test", "run"]],
    decision = "allow",
    justification = "tests",
    match = ["npm test", "npm run lint"],
)
prefix_rule(pattern = ["cargo", "publish"], decision = "forbidden",)
"#;

    fn call(command: &str, mode: &str) -> Call {
        let payload = json!({
            "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/p",
            "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": mode,
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "c",
        });
        Call::read(&payload.to_string()).unwrap()
    }

    fn rules(text: &str, user: bool) -> Rules {
        let rules =
            parse(text).unwrap().into_iter().map(|(pattern, decision)| Rule { pattern, decision, user }).collect();
        Rules { rules }
    }

    fn typed(commands: &[&str]) -> Vec<String> {
        commands.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn reads_the_rules_codex_writes_and_documents() {
        let parsed = parse(RULES).unwrap();
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[1].0, vec![vec!["npm".to_string()], vec!["test".to_string(), "run".to_string()]]);
        assert_eq!(parsed[2].1, Decision::Forbidden);
        assert_eq!(parse(r#"prefix_rule(pattern=["ls"])"#).unwrap()[0].1, Decision::Allow);
        // Anything else Starlark can say is not read, so the file's rules cannot be honoured.
        assert!(parse("load('x.star', 'y')\n").is_none());
        assert!(parse(r#"prefix_rule(pattern=PATTERN)"#).is_none());
        assert!(parse(r#"prefix_rule(pattern=["a\"b"])"#).is_none());
    }

    #[test]
    fn rewrites_only_what_codex_runs_without_asking() {
        let user = rules(RULES, true);
        let said =
            answer(&call("cargo test", "default"), "bv exec cargo.test", &typed(&["cargo test"]), &user).unwrap();
        let said: Value = serde_json::from_str(&said).unwrap();
        assert_eq!(said["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(said["hookSpecificOutput"]["updatedInput"], json!({"command": "bv exec cargo.test"}));
        assert!(answer(&call("x", "default"), "x", &typed(&["npm run lint", "cargo test --lib"]), &user).is_some());
        assert!(answer(&call("x", "default"), "x", &typed(&["cargo build"]), &user).is_none());
        assert!(answer(&call("x", "default"), "x", &typed(&["cargo test", "rm -rf x"]), &user).is_none());
        // A session that never asks runs anything, except what a rule forbids or asks about.
        assert!(answer(&call("x", "bypassPermissions"), "x", &typed(&["cargo build"]), &Rules::default()).is_some());
        assert!(answer(&call("x", "bypassPermissions"), "x", &typed(&["cargo publish"]), &user).is_none());
        // A project's rules may stop a rewrite, never allow one.
        let project = rules(RULES, false);
        assert!(answer(&call("x", "default"), "x", &typed(&["cargo test"]), &project).is_none());
    }

    #[test]
    fn a_rules_file_that_cannot_be_read_stops_the_rewrite() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), RULES).unwrap();
        let loaded = Rules::load(Some(home.path()), Path::new("/nonexistent/p")).unwrap();
        assert_eq!(loaded.rules.len(), 3);
        std::fs::write(home.path().join("rules/other.rules"), "x = 1").unwrap();
        assert!(Rules::load(Some(home.path()), Path::new("/nonexistent/p")).is_none());
    }
}
