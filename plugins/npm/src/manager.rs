//! Which package manager runs a project's scripts: npm, pnpm, yarn (classic or berry) or bun.
//!
//! A call may name one with a first argument `--pm=NAME`; otherwise the project says which, the
//! way the managers themselves find out: the `packageManager` field of a package.json (what
//! corepack reads), else a lockfile, in the folder of the call or the nearest folder above it that
//! has either (a workspace's lockfile is at its root). A project that says nothing uses npm.
//!
//! A named manager must agree with the project's: `pnpm test` typed in an npm project is refused
//! rather than run with npm, so a hook that rewrites a typed line never changes what it runs.

use std::path::{Path, PathBuf};

/// The argument that names the manager, first in a call's arguments: `--pm=pnpm`.
pub const NAMED: &str = "--pm=";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    Npm,
    Pnpm,
    /// Yarn 1.x, `yarn.lock` in its own format.
    YarnClassic,
    /// Yarn 2 and later, whose lockfile has `__metadata:` and whose settings are `.yarnrc.yml`.
    YarnBerry,
    Bun,
}

impl Manager {
    /// The program that runs it.
    pub fn program(self) -> &'static str {
        match self {
            Manager::Npm => "npm",
            Manager::Pnpm => "pnpm",
            Manager::YarnClassic | Manager::YarnBerry => "yarn",
            Manager::Bun => "bun",
        }
    }

    /// The name a caller gives it: both yarns are `yarn`, the project says which.
    fn from_name(name: &str) -> Option<Manager> {
        match name {
            "npm" => Some(Manager::Npm),
            "pnpm" => Some(Manager::Pnpm),
            "yarn" => Some(Manager::YarnClassic),
            "bun" => Some(Manager::Bun),
            _ => None,
        }
    }

    /// `install` that fails rather than change the lockfile, as `npm ci` does.
    pub fn frozen_install(self) -> &'static [&'static str] {
        match self {
            Manager::Npm => &["ci"],
            Manager::Pnpm | Manager::YarnClassic | Manager::Bun => &["install", "--frozen-lockfile"],
            Manager::YarnBerry => &["install", "--immutable"],
        }
    }

    /// The options `install` may take with this manager: none that names a place, a program or a
    /// package, so none that needs a check. npm's are checked by the npm plan instead.
    pub fn install_options(self) -> &'static [&'static str] {
        match self {
            Manager::Npm => &[],
            Manager::Pnpm => &["--frozen-lockfile", "--prefer-offline", "--offline", "--ignore-scripts"],
            Manager::YarnClassic => {
                &["--frozen-lockfile", "--pure-lockfile", "--prefer-offline", "--offline", "--ignore-scripts"]
            }
            Manager::YarnBerry => &["--immutable", "--immutable-cache", "--check-cache"],
            Manager::Bun => &["--frozen-lockfile", "--ignore-scripts", "--production", "--no-save"],
        }
    }
}

/// The manager a call runs, and whether the caller named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub manager: Manager,
    pub named: bool,
}

/// What a project says about its manager, and where it says it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Detected {
    manager: Manager,
    /// `pnpm-lock.yaml in /repo`, for a refusal to point at.
    evidence: String,
}

/// The manager for a call in `cwd` with `args`, and the arguments without `--pm=NAME`.
pub fn choose<'a>(cwd: &Path, args: &'a [String]) -> Result<(Choice, &'a [String]), String> {
    let detected = detect(cwd);
    let Some(name) = args.first().and_then(|a| a.strip_prefix(NAMED)) else {
        let manager = detected.map_or(Manager::Npm, |d| d.manager);
        return Ok((Choice { manager, named: false }, args));
    };
    let Some(named) = Manager::from_name(name) else {
        return Err(format!("`{NAMED}{name}`: the package manager is npm, pnpm, yarn or bun"));
    };
    let manager = match detected {
        Some(d) if d.manager.program() != named.program() => {
            return Err(format!(
                "`{NAMED}{name}`: this project uses {} ({}); leave out {NAMED} to run it",
                d.manager.program(),
                d.evidence
            ));
        }
        Some(d) => d.manager,
        None => named,
    };
    Ok((Choice { manager, named: true }, &args[1..]))
}

/// The lockfiles, in the order they win when a folder holds more than one: npm's is the one most
/// often left behind by a project that moved to another manager.
const LOCKFILES: &[(&str, Manager)] = &[
    ("bun.lock", Manager::Bun),
    ("bun.lockb", Manager::Bun),
    ("pnpm-lock.yaml", Manager::Pnpm),
    ("yarn.lock", Manager::YarnClassic),
    ("package-lock.json", Manager::Npm),
    ("npm-shrinkwrap.json", Manager::Npm),
];

/// The nearest folder from `cwd` up whose package.json names a manager or that holds a lockfile.
fn detect(cwd: &Path) -> Option<Detected> {
    cwd.ancestors().find_map(|dir| {
        if let Some(manager) = package_manager_field(&dir.join("package.json")) {
            let evidence = format!("packageManager in {}", dir.join("package.json").display());
            return Some(Detected { manager: yarn_flavour(manager, dir), evidence });
        }
        let (file, manager) = LOCKFILES.iter().find(|(file, _)| dir.join(file).is_file())?;
        Some(Detected { manager: yarn_flavour(*manager, dir), evidence: format!("{file} in {}", dir.display()) })
    })
}

/// `packageManager: "pnpm@9.1.0"` (corepack's field); yarn's major version says which yarn.
fn package_manager_field(path: &PathBuf) -> Option<Manager> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let field = value.get("packageManager")?.as_str()?;
    let (name, version) = field.split_once('@').unwrap_or((field, ""));
    match Manager::from_name(name)? {
        Manager::YarnClassic => {
            let major: u32 = version.split('.').next()?.parse().ok()?;
            Some(if major >= 2 { Manager::YarnBerry } else { Manager::YarnClassic })
        }
        manager => Some(manager),
    }
}

/// A yarn project without a version named is berry when it has berry's settings file or
/// lockfile format.
fn yarn_flavour(manager: Manager, dir: &Path) -> Manager {
    if manager != Manager::YarnClassic {
        return manager;
    }
    let berry_lock = std::fs::read_to_string(dir.join("yarn.lock"))
        .is_ok_and(|text| text.lines().take(16).any(|l| l.starts_with("__metadata:")));
    if berry_lock || dir.join(".yarnrc.yml").is_file() { Manager::YarnBerry } else { manager }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::testing::ScratchDir;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    fn manager_in(dir: &Path) -> Manager {
        choose(dir, &[]).expect("chosen").0.manager
    }

    #[test]
    fn the_project_says_which_manager_by_field_then_lockfile_up_to_its_root() {
        let root = ScratchDir::new("buildvise-npm-manager");
        let app = root.join("packages/app");
        std::fs::create_dir_all(&app).expect("workspace dir");
        std::fs::write(app.join("package.json"), r#"{"name":"app"}"#).expect("package.json");
        assert_eq!(manager_in(&app), Manager::Npm, "nothing said");
        std::fs::write(root.join("pnpm-lock.yaml"), "lockfileVersion: '9.0'\n").expect("lockfile");
        assert_eq!(manager_in(&app), Manager::Pnpm, "the workspace root's lockfile");
        std::fs::write(root.join("package-lock.json"), "{}").expect("leftover");
        assert_eq!(manager_in(&app), Manager::Pnpm, "npm's lockfile loses to another's");
        std::fs::write(root.join("package.json"), r#"{"packageManager":"yarn@4.1.0"}"#).expect("field");
        assert_eq!(manager_in(&app), Manager::YarnBerry, "the field wins over a lockfile");
        std::fs::write(app.join("package.json"), r#"{"packageManager":"yarn@1.22.22"}"#).expect("field");
        assert_eq!(manager_in(&app), Manager::YarnClassic, "the nearest folder wins");
        std::fs::write(app.join("package.json"), r#"{"packageManager":"bun@1.1.0+sha256.abc"}"#).expect("field");
        assert_eq!(manager_in(&app), Manager::Bun);
    }

    #[test]
    fn yarn_lockfiles_say_which_yarn() {
        let dir = ScratchDir::new("buildvise-npm-manager");
        std::fs::write(dir.join("yarn.lock"), "# yarn lockfile v1\n\n").expect("classic");
        assert_eq!(manager_in(&dir), Manager::YarnClassic);
        std::fs::write(dir.join("yarn.lock"), "# This file is generated\n\n__metadata:\n  version: 8\n")
            .expect("berry");
        assert_eq!(manager_in(&dir), Manager::YarnBerry);
        std::fs::write(dir.join("yarn.lock"), "").expect("empty");
        std::fs::write(dir.join(".yarnrc.yml"), "nodeLinker: node-modules\n").expect("settings");
        assert_eq!(manager_in(&dir), Manager::YarnBerry);
        std::fs::write(dir.join("bun.lockb"), "").expect("bun");
        assert_eq!(manager_in(&dir), Manager::Bun);
    }

    #[test]
    fn a_named_manager_runs_only_where_the_project_agrees() {
        let dir = ScratchDir::new("buildvise-npm-manager");
        let typed = args(&["--pm=pnpm", "x"]);
        let (choice, rest) = choose(&dir, &typed).expect("nothing said: the named one");
        assert_eq!((choice, rest), (Choice { manager: Manager::Pnpm, named: true }, &args(&["x"])[..]));
        std::fs::write(dir.join("package-lock.json"), "{}").expect("lockfile");
        let err = choose(&dir, &args(&["--pm=pnpm"])).expect_err("npm project");
        assert!(err.contains("this project uses npm (package-lock.json in") && err.contains("leave out"), "{err}");
        assert_eq!(choose(&dir, &args(&["--pm=npm"])).expect("agrees").0.manager, Manager::Npm);
        std::fs::remove_file(dir.join("package-lock.json")).expect("remove");
        std::fs::write(dir.join("yarn.lock"), "__metadata:\n").expect("berry");
        assert_eq!(choose(&dir, &args(&["--pm=yarn"])).expect("yarn").0.manager, Manager::YarnBerry);
        let err = choose(&dir, &args(&["--pm=deno"])).expect_err("unknown");
        assert!(err.contains("npm, pnpm, yarn or bun"), "{err}");
        let later = args(&["--", "--pm=npm"]);
        let (choice, rest) = choose(&dir, &later).expect("only first");
        assert_eq!((choice.named, rest.len()), (false, 2));
    }
}
