//! `buildvise list`.
//!
//! Besides the answer an agent gets over MCP, a person at the command line sees where each plugin
//! was loaded from, or, when none loaded, where buildvise looked and how to get them. Agents never
//! get these lines: they pay for every token and cannot act on a library's path.

use super::{Cli, app, print_json, print_text};
use buildvise_app::{Access, Config, LoadedPlugin};
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// List the formats plugins export, for tools defined in config (`formats = ["eslint"]`).
    #[arg(long)]
    formats: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, false)?;
    // The tools of the project here: those its buildvise.toml defines are listed too.
    if args.formats {
        let formats = app.formats();
        if args.json {
            print_json(&serde_json::to_value(&formats)?)?;
        } else {
            let width = formats.iter().map(|f| f.name.len()).max().unwrap_or(0);
            let lines: String = formats.iter().map(|f| format!("{:width$}  {}\n", f.name, f.description)).collect();
            print_text(&lines)?;
        }
        return Ok(0);
    }
    let cwd = std::env::current_dir()?;
    let mut rendered = app.list(&Access::anywhere(), &cwd);
    let plugins = app.plugins();
    if args.json {
        if let Some(view) = rendered.structured.as_object_mut() {
            view.insert("plugins".into(), serde_json::to_value(&plugins)?);
            view.insert("searched".into(), serde_json::to_value(app.plugins_searched())?);
        }
        print_json(&rendered.structured)?;
    } else {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        rendered.text.push_str(&origins_text(&plugins, app.plugins_searched(), home.as_deref()));
        print_text(&rendered.text)?;
    }
    // A script that checks its set-up with `buildvise list` learns that nothing can run.
    Ok(if plugins.is_empty() { 1 } else { 0 })
}

/// A `plugins:` section naming each library and the plugins it holds (the one buildvise ships
/// holds five); with none, the directories searched and the ways to get plugins.
fn origins_text(origins: &[LoadedPlugin], searched: &[PathBuf], home: Option<&Path>) -> String {
    let mut text = String::new();
    if origins.is_empty() {
        let searched: Vec<String> = searched.iter().map(|d| shown(d, home)).collect();
        let _ = writeln!(text, "searched: {}", searched.join(", "));
        let _ = writeln!(
            text,
            "get plugins: run `cargo xtask install` in a clone of buildvise (the binary and its plugins, \
             into ~/.local), or point --plugin-dir or BUILDVISE_PLUGIN_PATH at a directory of {}buildvise_plugin_*{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        return text;
    }
    text.push_str("plugins:\n");
    let mut libraries: Vec<(&Path, Vec<&str>)> = Vec::new();
    for o in origins {
        match libraries.iter_mut().find(|(path, _)| *path == o.path) {
            Some((_, names)) => names.push(&o.name),
            None => libraries.push((&o.path, vec![&o.name])),
        }
    }
    let libraries: Vec<(&Path, String)> = libraries.into_iter().map(|(path, names)| (path, names.join(", "))).collect();
    let width = libraries.iter().map(|(_, names)| names.len()).max().unwrap_or(0);
    for (path, names) in libraries {
        let _ = writeln!(text, "  {names:width$}  {}", shown(path, home));
    }
    text
}

/// `path`, with `~` for the home directory it is under: shorter, and the same on every machine.
fn shown(path: &Path, home: Option<&Path>) -> String {
    // A home of `/` would turn every path into `~/…`, which says nothing.
    let home = home.filter(|h| h.parent().is_some());
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => Path::new("~").join(rest).display().to_string(),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_library_and_its_plugins_in_a_section_of_its_own() {
        let plugin = |name: &str, path: &str| LoadedPlugin {
            name: name.to_string(),
            version: "0.1.0".to_string(),
            path: PathBuf::from(path),
        };
        let shipped = "/home/me/.local/lib/buildvise/plugins/libbuildvise_plugin_toolchains.so";
        let origins =
            [plugin("cargo", shipped), plugin("npm", shipped), plugin("x", "/opt/buildvise/libbuildvise_plugin_x.so")];
        let text = origins_text(&origins, &[], Some(Path::new("/home/me")));
        assert_eq!(
            text,
            "plugins:\n  cargo, npm  ~/.local/lib/buildvise/plugins/libbuildvise_plugin_toolchains.so\n  \
             x           /opt/buildvise/libbuildvise_plugin_x.so\n"
        );
    }

    #[test]
    fn without_plugins_says_where_it_looked_and_how_to_get_them() {
        let searched = [PathBuf::from("/home/me/bin"), PathBuf::from("/usr/lib/buildvise/plugins")];
        let text = origins_text(&[], &searched, Some(Path::new("/home/me")));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "searched: ~/bin, /usr/lib/buildvise/plugins");
        assert!(lines[1].contains("`cargo xtask install`") && lines[1].contains("BUILDVISE_PLUGIN_PATH"), "{text}");
    }

    #[test]
    fn a_home_of_root_is_not_shortened() {
        assert_eq!(shown(Path::new("/usr/lib/x.so"), Some(Path::new("/"))), "/usr/lib/x.so");
        assert_eq!(shown(Path::new("/home/mel/x.so"), Some(Path::new("/home/me"))), "/home/mel/x.so");
    }
}
