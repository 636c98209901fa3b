//! A client's settings file, changed the way its user keeps it: the one writer `hook install` and
//! `mcp install` share.
//!
//! The file is the user's, so a change leaves everything else of it as it was:
//! - a file reached through a symlink is written where the link points, and the link stays a link
//!   (dotfile managers keep settings that way);
//! - its mode stays, and the `.bak` of it gets the same mode: `~/.claude.json` is private, and a
//!   copy of it readable by everyone would leak what the mode protects. A new file is private where
//!   the client's own file is;
//! - a byte-order mark stays, since the client read the file with it;
//! - comments and layout stay, because the edit is made in the file's syntax tree (JSON with
//!   comments through `jsonc-parser`'s CST, TOML through `toml_edit`) rather than by printing a
//!   parsed value again;
//! - the file as it was is kept beside it as `.bak` before a change, and the new text goes in
//!   through a file beside it renamed over it, so the client never reads half a file.
//!
//! A second run that has nothing to change writes nothing. A project's file is meant to be
//! committed, so it names `buildvise`, which PATH finds on every machine, never a path of this one.

use anyhow::Context;
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The program a project's file names: PATH finds it on every machine the file goes to.
pub const PROGRAM: &str = "buildvise";

const BOM: &str = "\u{feff}";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    User,
}

/// The user's directories the clients keep their settings in, from the environment.
#[derive(Debug, Default)]
pub struct UserDirs {
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME`, when set (else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `$COPILOT_HOME`, when set (else `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, when set (else `~/.config`).
    pub config_home: Option<PathBuf>,
}

impl UserDirs {
    pub fn from_env() -> UserDirs {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        UserDirs {
            home: var(if cfg!(windows) { "USERPROFILE" } else { "HOME" }),
            codex_home: var("CODEX_HOME"),
            copilot_home: var("COPILOT_HOME"),
            // The XDG spec says to ignore a relative directory, as the clients do.
            config_home: var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()),
        }
    }

    pub fn home(&self) -> anyhow::Result<&Path> {
        self.home.as_deref().context("HOME is not set; set it, or use --scope project")
    }

    /// Codex's directory: `$CODEX_HOME`, else `~/.codex`.
    pub fn codex(&self) -> anyhow::Result<PathBuf> {
        self.codex_home.clone().map_or_else(|| self.home().map(|h| h.join(".codex")), Ok)
    }
}

/// `buildvise` when PATH finds this very binary, else this binary's full path.
pub fn command_name() -> String {
    let exe = std::env::current_exe().ok().and_then(|e| std::fs::canonicalize(e).ok());
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| std::fs::canonicalize(dir.join(PROGRAM)).ok() == exe)
    });
    match exe {
        Some(exe) if !on_path => exe.display().to_string(),
        _ => PROGRAM.to_string(),
    }
}

/// How a client is to start buildvise: a program and the words before buildvise's own
/// arguments, matching how it was installed: `npx -y buildvise`, `uvx buildvise`, or the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    /// The file will name `buildvise`, which PATH does not find as this binary.
    pub needs_path: bool,
}

impl Launch {
    /// The launch as one shell line followed by `rest` (a hook's command is a line).
    pub fn line(&self, rest: &str) -> String {
        let mut words = vec![self.program.as_str()];
        words.extend(self.args.iter().map(String::as_str));
        format!("{} {rest}", words.join(" "))
    }

    /// The arguments a client passes for buildvise's `args`.
    pub fn with(&self, args: &[&str]) -> Vec<String> {
        self.args.iter().cloned().chain(args.iter().map(|a| a.to_string())).collect()
    }
}

/// Who started this binary, as `BUILDVISE_LAUNCHER` or its own path says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    /// Run from npx's cache, which it may clear: a client must run `npx -y buildvise` again.
    Npx,
    /// An npm package installed in a project or globally (npm's `buildvise` command, if any).
    Npm,
    /// Run by `uvx` from uv's cache: a client must run `uvx buildvise` again.
    Uvx,
}

impl Installer {
    /// From the npm package's launcher (`BUILDVISE_LAUNCHER`, which a user may set too), else from
    /// where this binary lies: an environment in uv's cache (`archive-v0/…/bin/`) is one `uvx`
    /// made. Anything else is a binary a person put somewhere (pipx, `uv tool install`, `pip`,
    /// an archive, `cargo xtask install`), run by its name or path.
    pub fn detect(launcher: Option<&str>, exe: Option<&Path>) -> Option<Installer> {
        match launcher {
            Some("npx") => return Some(Installer::Npx),
            Some("npm") => return Some(Installer::Npm),
            Some("uvx") => return Some(Installer::Uvx),
            _ => {}
        }
        let env = exe?.parent()?.parent()?;
        let in_uv_cache = env.components().any(|c| c.as_os_str().to_string_lossy().starts_with("archive-v"));
        (in_uv_cache && env.join("pyvenv.cfg").is_file()).then_some(Installer::Uvx)
    }
}

/// What a file for `scope` runs: the launcher buildvise was installed with, else `program(scope)`.
pub fn launch(scope: Scope) -> Launch {
    let exe = std::env::current_exe().ok().and_then(|e| std::fs::canonicalize(e).ok());
    let launcher = std::env::var("BUILDVISE_LAUNCHER").ok();
    let words = |program: &str, args: &[&str]| Launch {
        program: program.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        needs_path: false,
    };
    match Installer::detect(launcher.as_deref(), exe.as_deref()) {
        Some(Installer::Npx) => words("npx", &["-y", PROGRAM]),
        Some(Installer::Uvx) => words("uvx", &[PROGRAM]),
        // npm's own `buildvise` command, where a global install put it on PATH; else the project's
        // install, which npx finds first.
        Some(Installer::Npm) if path_has(PROGRAM) => words(PROGRAM, &[]),
        Some(Installer::Npm) => words("npx", &["-y", PROGRAM]),
        None => {
            let program = program(scope);
            let needs_path = needs_path(&program);
            Launch { program, args: Vec::new(), needs_path }
        }
    }
}

/// Whether a directory of PATH holds a file named `name`, leaving out `node_modules/.bin`, which
/// npx puts first on PATH for a project's own packages: only a global install's command is there
/// for a client started elsewhere.
fn path_has(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| !dir.ends_with("node_modules/.bin") && dir.join(name).is_file())
    })
}

/// The program a file for `scope` names: `buildvise` in a project's file, which goes to other
/// machines; in the user's own, this binary's path when PATH does not find it.
pub fn program(scope: Scope) -> String {
    match scope {
        Scope::Project => PROGRAM.to_string(),
        Scope::User => command_name(),
    }
}

/// A file that names `program` will not run this binary: PATH does not find it as `buildvise`.
fn needs_path(program: &str) -> bool {
    program == PROGRAM && command_name() != PROGRAM
}

/// The warning for a file at `path` that names `buildvise` when PATH does not find this binary.
pub fn path_warning(path: &Path) -> String {
    format!(
        "buildvise: {} names `buildvise`, which PATH does not find as this binary; put it on PATH \
         (cargo xtask install), or the client will not find it",
        path.display()
    )
}

/// What an install did to a settings file, or would do with `--show`.
#[derive(Debug)]
pub struct Outcome {
    pub path: PathBuf,
    pub changed: bool,
    /// The file's text after the change; None when there is no file (or it goes).
    pub text: Option<String>,
    /// The file names `buildvise`, which PATH does not find as this binary.
    pub needs_path: bool,
}

/// A settings file as read: where it really is, and its text.
#[derive(Debug)]
pub struct SettingsFile {
    /// The file itself, with every symlink on the way followed.
    pub path: PathBuf,
    /// The text as read, byte-order mark and all; None when there is no file.
    before: Option<String>,
}

impl SettingsFile {
    /// Reads the file at `path` (through any symlink); a missing file reads as None.
    pub fn read(path: &Path) -> anyhow::Result<SettingsFile> {
        let path = through_links(path);
        let before = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}; check its permissions", path.display()));
            }
        };
        Ok(SettingsFile { path, before })
    }

    /// The text without its byte-order mark; None when there is no file.
    pub fn text(&self) -> Option<&str> {
        self.before.as_deref().map(|t| t.strip_prefix(BOM).unwrap_or(t))
    }

    /// Whether `text` (without a mark, as [`SettingsFile::text`] gives it) differs from the file.
    pub fn changes(&self, text: Option<&str>) -> bool {
        text != self.text()
    }

    /// Makes the file hold `text` (None: no file) unless it already does, or only says so with
    /// `show`; `program` is what the entry runs, `private` as in [`SettingsFile::write`].
    pub fn settle(
        self,
        text: Option<String>,
        launch: &Launch,
        remove: bool,
        show: bool,
        private: bool,
    ) -> anyhow::Result<Outcome> {
        let changed = self.changes(text.as_deref());
        if changed && !show {
            self.write(text.as_deref(), private)?;
        }
        let needs_path = !remove && launch.needs_path;
        Ok(Outcome { path: self.path, changed, text, needs_path })
    }

    /// Puts `text` in place of the file (None removes it), keeping the old file as `.bak`, the
    /// mode, and a byte-order mark; a new file is made private when `private`.
    pub fn write(&self, text: Option<&str>, private: bool) -> anyhow::Result<()> {
        let path = &self.path;
        let dir = path.parent().context("a settings file has a directory")?;
        let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
        if let Some(before) = &self.before {
            replace(&beside(path, ".bak"), before, mode.clone(), true)?;
        }
        let Some(text) = text else {
            return std::fs::remove_file(path)
                .with_context(|| format!("cannot remove {}; check its directory's permissions", path.display()));
        };
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}; check its parent's permissions", dir.display()))?;
        let marked = self.before.as_deref().is_some_and(|t| t.starts_with(BOM));
        let text = if marked { format!("{BOM}{text}") } else { text.to_string() };
        let mode = mode.or_else(|| private.then(private_mode).flatten());
        let hide = private || mode.is_some();
        replace(path, &text, mode, hide)
    }
}

/// `path` with every symlink followed, also one whose target does not exist yet (writing creates
/// it there, and the link stays).
fn through_links(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    // A loop of links ends here; reading it then says what is wrong.
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else { break };
        path = match path.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    path
}

fn beside(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(ext);
    path.with_file_name(name)
}

#[cfg(unix)]
fn private_mode() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn private_mode() -> Option<std::fs::Permissions> {
    None
}

/// Writes `text` to `path` through a file beside it renamed over it, with `mode` when given.
/// With `hide`, the file beside it is made readable by its owner only from the start, so that
/// what a private file holds is never readable by others, not even for a moment.
fn replace(path: &Path, text: &str, mode: Option<std::fs::Permissions>, hide: bool) -> anyhow::Result<()> {
    use std::io::Write;
    let tmp = beside(path, ".tmp");
    let cannot = |what: &Path| format!("cannot write {}; check its directory's permissions", what.display());
    // A file left by a run that died would keep its own mode: start afresh.
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if hide {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = hide;
    let mut file = options.open(&tmp).with_context(|| cannot(&tmp))?;
    file.write_all(text.as_bytes()).with_context(|| cannot(&tmp))?;
    drop(file);
    if let Some(mode) = mode {
        std::fs::set_permissions(&tmp, mode).with_context(|| format!("cannot set {}'s mode", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| cannot(path))
}

/// How a client reads its JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Plain JSON: a comment would break the client's read, so a file with one is refused.
    Json,
    /// JSON with comments and trailing commas (JSONC), as VS Code and Gemini CLI read theirs.
    Jsonc,
}

/// A JSON settings file's value, to change, and its syntax tree, which the change is written
/// back into so that comments and layout stay.
pub struct JsonDoc {
    /// The file's value; change it, then take [`JsonDoc::text`].
    pub value: Value,
    read: Value,
    tree: Option<CstRootNode>,
}

impl JsonDoc {
    /// `text` (without a byte-order mark) read as `syntax`; None or blank text is `{}`.
    pub fn parse(text: Option<&str>, syntax: Syntax, path: &Path) -> anyhow::Result<JsonDoc> {
        let unreadable = || {
            let what = if syntax == Syntax::Json { "JSON" } else { "JSON with comments" };
            format!("{} is not {what} as the client reads it; fix it, then run again", path.display())
        };
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Ok(JsonDoc { value: Value::Object(Map::new()), read: Value::Object(Map::new()), tree: None });
        };
        if syntax == Syntax::Json {
            serde_json::from_str::<Value>(text).with_context(unreadable)?;
        }
        // What VS Code's JSONC reader takes besides JSON: comments and trailing commas, no more.
        let options = ParseOptions {
            allow_comments: true,
            allow_trailing_commas: true,
            allow_loose_object_property_names: false,
            allow_missing_commas: false,
            allow_single_quoted_strings: false,
            allow_hexadecimal_numbers: false,
            allow_unary_plus_numbers: false,
            allow_bare_decimal_point_numbers: false,
            allow_non_finite_numbers: false,
            allow_extended_string_escapes: false,
        };
        let tree = CstRootNode::parse(text, &options).map_err(|e| anyhow::anyhow!("{e}")).with_context(unreadable)?;
        let value = tree.to_serde_value().with_context(unreadable)?;
        Ok(JsonDoc { read: value.clone(), value, tree: Some(tree) })
    }

    /// The file's text with the changes made to [`JsonDoc::value`]: each one made where it is in
    /// the file, the rest as it was. A new file is printed plainly.
    pub fn text(&self) -> String {
        let Some(tree) = &self.tree else {
            return serde_json::to_string_pretty(&self.value).unwrap_or_default() + "\n";
        };
        sync(Holder::Root(tree.clone()), &self.read, &self.value);
        tree.to_string()
    }
}

/// What holds a value in the tree, so that the value can be replaced whole.
enum Holder {
    Root(CstRootNode),
    Prop(CstObjectProp),
    Element(CstArray, CstNode),
}

impl Holder {
    fn node(&self) -> Option<CstNode> {
        match self {
            Holder::Root(root) => root.value(),
            Holder::Prop(prop) => prop.value(),
            Holder::Element(_, node) => Some(node.clone()),
        }
    }

    fn replace(self, value: &Value) {
        match self {
            Holder::Root(root) => root.set_value(input(value)),
            Holder::Prop(prop) => prop.set_value(input(value)),
            Holder::Element(array, node) => {
                let index = node.element_index().unwrap_or(array.elements().len());
                node.remove();
                array.insert(index, input(value));
            }
        }
    }
}

/// Makes the value `holder` holds, `old`, into `new` with the fewest changes to the tree: an
/// object's other members and an array's other elements, with their comments, stay untouched.
fn sync(holder: Holder, old: &Value, new: &Value) {
    if old == new {
        return;
    }
    let node = holder.node();
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            if let Some(object) = node.as_ref().and_then(CstNode::as_object) {
                return sync_object(&object, old, new);
            }
        }
        (Value::Array(old), Value::Array(new)) => {
            if let Some(array) = node.as_ref().and_then(CstNode::as_array)
                && sync_array(&array, old, new)
            {
                return;
            }
        }
        _ => {}
    }
    holder.replace(new);
}

fn sync_object(object: &CstObject, old: &Map<String, Value>, new: &Map<String, Value>) {
    for prop in object.properties() {
        let Some(name) = prop.decoded_name() else { continue };
        match (old.get(&name), new.get(&name)) {
            (_, None) => prop.remove(),
            (Some(was), Some(is)) => sync(Holder::Prop(prop), was, is),
            (None, Some(is)) => prop.set_value(input(is)),
        }
    }
    for (name, value) in new {
        if !old.contains_key(name) {
            object.append(name, input(value));
        }
    }
}

/// Changes the elements in place when the lengths agree, or takes out or puts in the elements
/// that make the difference when one list is the other with some left out; false when neither
/// holds, and the array is replaced whole.
fn sync_array(array: &CstArray, old: &[Value], new: &[Value]) -> bool {
    let elements = array.elements();
    if elements.len() != old.len() {
        return false;
    }
    if old.len() == new.len() {
        for ((element, was), is) in elements.into_iter().zip(old).zip(new) {
            sync(Holder::Element(array.clone(), element), was, is);
        }
        return true;
    }
    if new.len() < old.len() && within(new, old) {
        let mut kept = new.iter().peekable();
        for (element, was) in elements.into_iter().zip(old) {
            if kept.peek() == Some(&was) {
                kept.next();
            } else {
                element.remove();
            }
        }
        return true;
    }
    if old.len() < new.len() && within(old, new) {
        let mut kept = old.iter().peekable();
        for (index, is) in new.iter().enumerate() {
            if kept.peek() == Some(&is) {
                kept.next();
            } else {
                array.insert(index, input(is));
            }
        }
        return true;
    }
    false
}

/// Whether `part` is `whole` with some elements left out, order kept.
fn within(part: &[Value], whole: &[Value]) -> bool {
    let mut rest = whole.iter();
    part.iter().all(|p| rest.any(|w| w == p))
}

fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_is_the_npm_launchers_word_else_uvs_cache_else_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Installer::detect(Some("npx"), None), Some(Installer::Npx));
        assert_eq!(Installer::detect(Some("npm"), None), Some(Installer::Npm));
        assert_eq!(Installer::detect(Some("uvx"), None), Some(Installer::Uvx));
        // uvx's environments live in uv's cache, `archive-v0/<hash>/`, each a venv.
        let cached = dir.path().join("uv/archive-v0/a1b2");
        std::fs::create_dir_all(cached.join("bin")).unwrap();
        std::fs::write(cached.join("pyvenv.cfg"), "uv = 0.9.0\n").unwrap();
        assert_eq!(Installer::detect(None, Some(&cached.join("bin/buildvise"))), Some(Installer::Uvx));
        assert_eq!(Installer::detect(Some("other"), Some(&cached.join("bin/buildvise"))), Some(Installer::Uvx));
        // A tool uv installed for good, pipx's or a venv: run by name like any installed binary.
        let tool = dir.path().join("uv/tools/buildvise");
        std::fs::create_dir_all(tool.join("bin")).unwrap();
        std::fs::write(tool.join("pyvenv.cfg"), "uv = 0.9.0\n").unwrap();
        assert_eq!(Installer::detect(None, Some(&tool.join("bin/buildvise"))), None);
        assert_eq!(Installer::detect(None, Some(Path::new("/usr/local/bin/buildvise"))), None);
        assert_eq!(Installer::detect(None, None), None);
    }

    #[test]
    fn a_launch_is_a_line_for_a_hook_and_words_for_a_server() {
        let npx = Launch { program: "npx".into(), args: vec!["-y".into(), PROGRAM.into()], needs_path: false };
        assert_eq!(npx.line("hook claude"), "npx -y buildvise hook claude");
        assert_eq!(npx.with(&["serve"]), ["-y", "buildvise", "serve"]);
        let plain = Launch { program: PROGRAM.into(), args: Vec::new(), needs_path: false };
        assert_eq!(plain.line("hook claude"), "buildvise hook claude");
        assert_eq!(plain.with(&["serve"]), ["serve"]);
    }
    use serde_json::json;

    fn edit(text: &str, syntax: Syntax, change: impl FnOnce(&mut Value)) -> String {
        let mut doc = JsonDoc::parse(Some(text), syntax, Path::new("f.json")).unwrap();
        change(&mut doc.value);
        let out = doc.text();
        let reread = JsonDoc::parse(Some(&out), syntax, Path::new("f.json")).unwrap();
        assert_eq!(reread.value, doc.value, "the text holds the value:\n{out}");
        out
    }

    #[test]
    fn comments_and_layout_stay_around_an_edit() {
        let text = "{\n  // the servers\n  \"servers\": {\n    \"other\": {\"command\": \"x\"}, // theirs\n  },\n  /* inputs */ \"inputs\": [],\n}\n";
        let out = edit(text, Syntax::Jsonc, |v| {
            v["servers"]["buildvise"] = json!({"type": "stdio", "command": "buildvise", "args": ["serve"]});
        });
        for kept in ["// the servers", "// theirs", "/* inputs */ \"inputs\": [],", "\"other\": {\"command\": \"x\"}"] {
            assert!(out.contains(kept), "{kept:?} is gone:\n{out}");
        }
        let back = edit(&out, Syntax::Jsonc, |v| {
            v["servers"].as_object_mut().unwrap().remove("buildvise");
        });
        assert!(back.contains("// theirs") && !back.contains("buildvise"), "{back}");
    }

    #[test]
    fn an_element_in_the_middle_goes_and_the_others_keep_their_comments() {
        let text = "[\n  1, // one\n  2,\n  3 // three\n]";
        let out = edit(text, Syntax::Jsonc, |v| *v = json!([1, 3]));
        assert!(out.contains("// one") && out.contains("// three") && !out.contains('2'), "{out}");
        let out = edit(&out, Syntax::Jsonc, |v| *v = json!([1, 2, 3, 4]));
        assert!(out.contains("// one") && out.contains("// three"), "{out}");
    }

    #[test]
    fn plain_json_refuses_comments_and_a_blank_file_is_an_empty_object() {
        let err = JsonDoc::parse(Some("{ // no\n}"), Syntax::Json, Path::new("f.json")).err().unwrap();
        assert!(format!("{err:#}").contains("f.json is not JSON as the client reads it; fix it"), "{err:#}");
        assert!(JsonDoc::parse(Some("{'a': 1}"), Syntax::Jsonc, Path::new("f.json")).is_err());
        assert_eq!(JsonDoc::parse(Some(" \n"), Syntax::Json, Path::new("f.json")).unwrap().value, json!({}));
    }

    #[cfg(unix)]
    #[test]
    fn a_write_keeps_the_link_the_mode_and_the_mark_and_backs_up_privately() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "\u{feff}{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        let file = SettingsFile::read(&link).unwrap();
        assert_eq!(file.path, real);
        assert_eq!(file.text(), Some("{}"));
        file.write(Some("{\"a\": 1}\n"), false).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "\u{feff}{\"a\": 1}\n");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&real), 0o600);
        assert_eq!(mode(&dir.path().join("real.json.bak")), 0o600, "the copy is as private as the file");
        let new = dir.path().join("new/private.json");
        SettingsFile::read(&new).unwrap().write(Some("{}\n"), true).unwrap();
        assert_eq!(mode(&new), 0o600);
        // A link to a file not made yet: the file is made where it points.
        std::os::unix::fs::symlink(dir.path().join("later.json"), dir.path().join("dangling.json")).unwrap();
        SettingsFile::read(&dir.path().join("dangling.json")).unwrap().write(Some("{}\n"), false).unwrap();
        assert!(std::fs::symlink_metadata(dir.path().join("dangling.json")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(dir.path().join("later.json")).unwrap(), "{}\n");
    }
}
