//! The layers of docs/architecture.md ("What depends on what"), held by a test: within each crate,
//! which top-level module names which, read from the sources. Every edge must be one the table
//! below allows, and the table has no cycle, so neither do the modules. Between crates the
//! compiler holds the layers already: the binary depends on the application alone, and the
//! application on the engine.
//!
//! A module names another through `crate::other` or, from a top-level module's own file,
//! `super::other`; comments are not read. A test module inside a file counts like the rest of it.

mod common;

use common::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A top-level module, and the modules it may name.
type Layer = (&'static str, &'static [&'static str]);

/// Each crate's source folder, and for each of its top-level modules those it may name. A module
/// missing from a crate's table may name none.
const LAYERS: &[(&str, &[Layer])] = &[
    (
        "engine/src",
        &[
            ("config", &["sandbox", "store"]),
            ("history", &["describe", "outcome", "store"]),
            ("outcome", &["store"]),
            ("parse", &["config", "outcome", "plugins", "store"]),
            ("plugins", &["store"]),
            ("render", &["gain", "history", "outcome", "plugins", "store", "tools"]),
            ("run", &["sandbox"]),
            ("tools", &["config", "parse", "plugins"]),
        ],
    ),
    (
        "app/src",
        &[("discover", &["tokens"]), ("exec", &["sink", "slots"]), ("gain", &["tokens"]), ("rewrite", &["exec"])],
    ),
    ("src", &[("cli", &["mcp"])]),
];

/// One place a module names another.
#[derive(Debug)]
struct Use {
    from: String,
    to: String,
    file: PathBuf,
    line: usize,
}

#[test]
fn every_module_names_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for (folder, allowed) in LAYERS {
        let allowed: BTreeMap<&str, &[&str]> = allowed.iter().copied().collect();
        for found in uses(&root().join(folder)) {
            if !allowed.get(found.from.as_str()).is_some_and(|to| to.contains(&found.to.as_str())) {
                let file = found.file.strip_prefix(root()).unwrap_or(&found.file);
                wrong.push(format!("{}:{}: {} names {}", file.display(), found.line, found.from, found.to));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "modules name layers the table in docs/architecture.md does not allow; move the item to \
         the layer it belongs to, or change the table and the docs together:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_layers_have_no_cycle() {
    for (folder, allowed) in LAYERS {
        let edges: BTreeMap<&str, &[&str]> = allowed.iter().copied().collect();
        if let Some(cycle) = cycle(&edges) {
            panic!("the layers of {folder} go round: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_check_sees_a_module_naming_another() {
    // What `uses` must find, on sources made for it: a path, a `super::` path from a top-level
    // file, a nested `use`; and what it must not: comments, a module naming itself.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("parse")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod parse;\nmod store;\nmod render;\n").unwrap();
    std::fs::write(src.join("parse/mod.rs"), "use crate::store::Log;\n// crate::render is only said\n").unwrap();
    std::fs::write(src.join("parse/saved.rs"), "use crate::{render::X, parse::Y};\nfn f() { super::g() }\n").unwrap();
    std::fs::write(src.join("store.rs"), "fn f() { super::render::page() }\n").unwrap();
    std::fs::write(src.join("render.rs"), "").unwrap();
    let found: BTreeSet<(String, String)> = uses(src).into_iter().map(|u| (u.from, u.to)).collect();
    let expected = [("parse", "store"), ("parse", "render"), ("store", "render")];
    assert_eq!(found, expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect());
    let round: BTreeMap<&str, &[&str]> = [("a", &["b"][..]), ("b", &["c"][..]), ("c", &["a"][..])].into();
    assert_eq!(cycle(&round), Some(vec!["a", "b", "c", "a"]));
}

/// Every place a top-level module of the crate in `src` names another.
fn uses(src: &Path) -> Vec<Use> {
    let modules: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let module = if path.is_dir() { name } else { name.strip_suffix(".rs")?.to_string() };
            (!["lib", "main", "snapshots"].contains(&module.as_str())).then_some(module)
        })
        .collect();
    let mut found = Vec::new();
    for module in &modules {
        let (file, folder) = (src.join(format!("{module}.rs")), src.join(module));
        let files = if file.is_file() { vec![file] } else { rust_files(&folder) };
        for file in files {
            // `super::` reaches the crate root only from the module's own top file.
            let top = file.parent() == Some(src) || file == folder.join("mod.rs");
            let text = std::fs::read_to_string(&file).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for to in named(code, top) {
                    if &to != module && modules.contains(&to) {
                        found.push(Use { from: module.clone(), to, file: file.clone(), line: i + 1 });
                    }
                }
            }
        }
    }
    found
}

/// The first segments after `crate::` (and `super::` from a top-level file) in a line of code,
/// braces of a `use` included.
fn named(code: &str, top: bool) -> Vec<String> {
    let mut names = Vec::new();
    let prefixes: &[&str] = if top { &["crate::", "super::"] } else { &["crate::"] };
    for prefix in prefixes {
        for (at, _) in code.match_indices(prefix) {
            let preceded = code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
            if preceded {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let words = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or_default().split(',').collect(),
                None => vec![rest],
            };
            for word in words {
                let word = word.trim();
                let end = word.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(word.len());
                names.push(word[..end].to_string());
            }
        }
    }
    names
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A cycle among `edges`, as the modules it passes through, the first again at the end.
fn cycle<'a>(edges: &BTreeMap<&'a str, &[&'a str]>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        node: &'a str,
        edges: &BTreeMap<&'a str, &[&'a str]>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(at) = path.iter().position(|&n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node);
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for &next in edges.get(node).copied().unwrap_or_default() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|&node| visit(node, edges, &mut Vec::new(), &mut done))
}
