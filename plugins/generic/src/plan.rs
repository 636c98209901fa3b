//! The tools and the command each one runs.

use buildvise_plugin_api::{CommandPlan, PlanRequest, ToolSpec, cache_dir, is_absolute};

/// `(tool, program, description, args hint)`. The description is the command, as agents know
/// these tools.
const TOOLS: &[(&str, &str, &str, Option<&str>)] = &[
    ("make", "make", "make", Some("targets and make flags")),
    ("cmake", "cmake", "cmake", Some("-B build, or --build build")),
    ("ninja", "ninja", "ninja", Some("targets and ninja flags")),
    ("ctest", "ctest", "ctest", Some("--test-dir build and ctest flags")),
    ("go.build", "go", "go build ./...", Some("flags; packages replace ./...")),
    ("go.test", "go", "go test ./...", Some("flags; packages replace ./...")),
    ("go.vet", "go", "go vet ./...", Some("flags; packages replace ./...")),
    ("python.mypy", "mypy", "mypy", Some("flags and paths (default .)")),
    ("python.ruff", "ruff", "ruff check", Some("flags and paths (default .)")),
];

/// Every tool; those whose program `found` says is not installed are marked unavailable, so the
/// host lists only what can run here and still parses saved logs of the others.
pub(crate) fn tools(found: impl Fn(&str) -> bool) -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|(name, program, description, hint)| {
            let spec = ToolSpec::new(*name, *description);
            // Only where the plan runs the command as typed: `go test` alone tests one package
            // where go.test's plan tests ./..., and `mypy` alone checks nothing.
            let spec = match *name {
                "make" => spec.runs(&["make"]),
                "cmake" => spec.runs(&["cmake"]),
                "ninja" => spec.runs(&["ninja"]),
                "ctest" => spec.runs(&["ctest"]),
                "python.ruff" => spec.runs(&["ruff", "check"]),
                _ => spec,
            };
            let spec = match hint {
                Some(hint) => spec.with_args_hint(*hint),
                None => spec,
            };
            match found(program) {
                true => spec,
                false => spec.unavailable(format!("`{program}` is not on PATH; install it to use {name}")),
            }
        })
        .collect()
}

/// The formats a tool's output is read with; their recognisers are offered a line in the order
/// `parse` registers them.
pub(crate) fn formats_of(tool: &str) -> &'static [&'static str] {
    match tool {
        // A CMake project's makefiles run cmake again when a CMakeLists.txt changed,
        // `cmake --build` runs make or ninja, and its `test` target runs ctest: each may print
        // the others' lines. `make check` runs automake's test harness, and a C++ project's
        // tests are often GoogleTest programs.
        "make" | "cmake" | "ninja" | "ctest" => {
            &["make", "cmake", "ninja", "ctest", "automake", "gtest", "gcc", "fallback"]
        }
        "go.build" | "go.test" | "go.vet" => &["go"],
        "python.mypy" => &["mypy"],
        "python.ruff" => &["ruff"],
        _ => &["fallback"],
    }
}

pub(crate) fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let args = &request.args;
    match request.tool.as_str() {
        "make" => {
            check_make_args(args, request)?;
            Ok(CommandPlan::new("make").with_args(args.iter().cloned()))
        }
        "cmake" => {
            check_cmake_args(args, request)?;
            Ok(CommandPlan::new("cmake").with_args(args.iter().cloned()))
        }
        "ninja" => {
            check_paths(args, request, NINJA_PATHS)?;
            Ok(CommandPlan::new("ninja").with_args(args.iter().cloned()))
        }
        "ctest" => {
            check_paths(args, request, CTEST_PATHS)?;
            Ok(CommandPlan::new("ctest").with_args(args.iter().cloned()))
        }
        "go.build" | "go.test" | "go.vet" => {
            let verb = &request.tool[3..];
            let packages = check_go_args(args, request)?;
            // Go's build cache and module cache.
            let caches = [cache_dir("GOCACHE", ".cache/go-build"), cache_dir("GOMODCACHE", "go/pkg/mod")];
            let mut plan = CommandPlan::new("go")
                .with_args([verb])
                .with_args(args.iter().cloned())
                .with_caches(caches.into_iter().flatten());
            if !packages {
                plan = plan.with_args(["./..."]);
            }
            Ok(plan)
        }
        "python.mypy" => {
            let paths = check_mypy_args(args, request)?;
            // Its cache is in the project unless MYPY_CACHE_DIR moves it.
            let cache = std::env::var("MYPY_CACHE_DIR").ok().filter(|d| is_absolute(d));
            let plan =
                CommandPlan::new(venv_program(&request.cwd, "mypy")).with_args(args.iter().cloned()).with_caches(cache);
            Ok(if paths { plan } else { plan.with_args(["."]) })
        }
        "python.ruff" => {
            let paths = check_ruff_args(args, request)?;
            // `--no-fix` too: a project's `fix = true` would otherwise make a check edit files.
            let cache = std::env::var("RUFF_CACHE_DIR").ok().filter(|d| is_absolute(d));
            let plan = CommandPlan::new(venv_program(&request.cwd, "ruff"))
                .with_args(["check", "--no-fix"])
                .with_args(args.iter().cloned())
                .with_caches(cache);
            Ok(if paths { plan } else { plan.with_args(["."]) })
        }
        other => {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.0).collect();
            Err(format!("unknown tool `{other}`; the generic plugin offers {}", names.join(", ")))
        }
    }
}

/// The project's own copy of `program` (`.venv/bin/…`, `venv/bin/…`) when it has one, else the
/// one on PATH.
fn venv_program(cwd: &str, program: &str) -> String {
    [".venv", "venv"]
        .iter()
        .map(|venv| format!("{cwd}/{venv}/bin/{program}"))
        .find(|path| std::path::Path::new(path).is_file())
        .unwrap_or_else(|| program.to_string())
}

/// One option of `args` at `i`: its name and its value (inline after `=`, attached to a short
/// option, or the next argument) when `option` takes one.
fn value_of<'a>(args: &'a [String], i: usize, names: &[&'a str]) -> Option<(&'a str, Option<&'a str>)> {
    let arg = args[i].as_str();
    for name in names {
        if arg == *name {
            return Some((arg, args.get(i + 1).map(String::as_str)));
        }
        if let Some(rest) = arg.strip_prefix(name) {
            // go takes `-flag=value` as GNU tools take `--flag=value`.
            if name.len() > 2 {
                if let Some(value) = rest.strip_prefix('=') {
                    return Some((name, Some(value)));
                }
            } else if name.len() == 2 && !rest.is_empty() {
                return Some((name, Some(rest)));
            }
        }
    }
    None
}

/// Whether `args` name something to check (a positional argument that is not an option's value).
fn has_positional(args: &[String], takes_value: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == "--" {
            return i + 1 < args.len();
        }
        if !arg.starts_with('-') {
            return true;
        }
        if takes_value.contains(&arg.as_str()) {
            i += 1;
        }
        i += 1;
    }
    false
}

const MAKE_PATHS: &[&str] = &["-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir"];

/// Paths make reads stay inside the roots; `--eval` is refused, for it makes a call run a recipe
/// the Makefile does not have. Targets and variable overrides pass: they are how make is used.
fn check_make_args(args: &[String], request: &PlanRequest) -> Result<(), String> {
    for i in 0..args.len() {
        if args[i].starts_with("--eval") || args[i].starts_with("-E") {
            return Err("`--eval` adds make code to the run; put the rule in the Makefile and name its target".into());
        }
        if let Some((flag, Some(path))) = value_of(args, i, MAKE_PATHS) {
            request.check_path(flag, path)?;
        }
    }
    Ok(())
}

/// cmake's options that name a folder or a file it reads or writes.
const CMAKE_PATHS: &[&str] = &["-S", "-B", "--build", "-C", "-P", "--install", "--toolchain", "--graphviz"];

/// `-E` is refused: it is cmake's portable shell (`cmake -E rm -r …`), not a configure or a build.
/// Paths stay inside the roots.
fn check_cmake_args(args: &[String], request: &PlanRequest) -> Result<(), String> {
    if args.iter().any(|a| a == "-E") {
        return Err("`-E` runs a command, not a configure or a build; run that command yourself".into());
    }
    check_paths(args, request, CMAKE_PATHS)
}

const NINJA_PATHS: &[&str] = &["-C", "-f"];

const CTEST_PATHS: &[&str] = &["--test-dir", "-O", "--output-log", "--output-junit", "--resource-spec-file"];

/// The values of `options` in `args` stay inside the roots.
fn check_paths(args: &[String], request: &PlanRequest, options: &[&str]) -> Result<(), String> {
    for i in 0..args.len() {
        if let Some((flag, Some(path))) = value_of(args, i, options) {
            request.check_path(flag, path)?;
        }
    }
    Ok(())
}

/// go's flags that take a value, for telling a package from a flag's value.
const GO_VALUE_FLAGS: &[&str] = &[
    "-run",
    "-skip",
    "-bench",
    "-benchtime",
    "-count",
    "-timeout",
    "-tags",
    "-p",
    "-cpu",
    "-parallel",
    "-mod",
    "-ldflags",
    "-gcflags",
    "-asmflags",
    "-covermode",
    "-coverpkg",
    "-list",
    "-shuffle",
    "-fuzz",
    "-fuzztime",
    "-buildmode",
    "-compiler",
    "-installsuffix",
    "-pkgdir",
    "-C",
    "-o",
    "-modfile",
    "-overlay",
    "-coverprofile",
    "-cpuprofile",
    "-memprofile",
    "-blockprofile",
    "-mutexprofile",
    "-trace",
    "-outputdir",
    "-pgo",
];

/// go's flags whose value is a file or directory it reads or writes.
const GO_PATHS: &[&str] = &[
    "-C",
    "-o",
    "-modfile",
    "-overlay",
    "-pkgdir",
    "-coverprofile",
    "-cpuprofile",
    "-memprofile",
    "-blockprofile",
    "-mutexprofile",
    "-trace",
    "-outputdir",
    "-pgo",
];

/// Refuses the flags that name a program for go to run and `-json` (the answer reads go's text);
/// checks paths; returns whether packages were named.
fn check_go_args(args: &[String], request: &PlanRequest) -> Result<bool, String> {
    for i in 0..args.len() {
        let name = args[i].split('=').next().unwrap_or_default().replacen("--", "-", 1);
        if ["-exec", "-toolexec", "-vettool"].contains(&name.as_str()) {
            return Err(format!("`{name}` makes go run another program; leave it out"));
        }
        if name == "-json" {
            return Err("`-json` replaces the output this tool reads; leave it out".into());
        }
        if let Some((flag, Some(path))) = value_of(args, i, GO_PATHS) {
            request.check_path(flag, path)?;
        }
    }
    Ok(has_positional(args, GO_VALUE_FLAGS))
}

const MYPY_PATHS: &[&str] = &[
    "--config-file",
    "--cache-dir",
    "--python-executable",
    "--junit-xml",
    "--custom-typeshed-dir",
    "--html-report",
    "--txt-report",
    "--xml-report",
    "--linecount-report",
    "--linecoverage-report",
    "--lineprecision-report",
    "--any-exprs-report",
    "--cobertura-xml-report",
    "--memory-xml-report",
    "--xslt-html-report",
    "--xslt-txt-report",
];

const MYPY_VALUE_FLAGS: &[&str] = &[
    "--python-version",
    "--platform",
    "--exclude",
    "--always-true",
    "--always-false",
    "--enable-error-code",
    "--disable-error-code",
    "--follow-imports",
    "--package-root",
    "--shadow-file",
];

/// `--install-types` pip-installs packages, refused; paths stay inside the roots. Returns
/// whether the call names what to check (paths, `-p`, `-m`, `-c`).
fn check_mypy_args(args: &[String], request: &PlanRequest) -> Result<bool, String> {
    let mut targets = false;
    for i in 0..args.len() {
        if args[i] == "--install-types" {
            return Err("`--install-types` installs packages; install stubs in the project's venv yourself".into());
        }
        if let Some((flag, Some(path))) = value_of(args, i, MYPY_PATHS) {
            request.check_path(flag, path)?;
        }
        targets |= ["-p", "--package", "-m", "--module", "-c", "--command"].contains(&args[i].as_str());
    }
    let takes_value: Vec<&str> = MYPY_PATHS.iter().chain(MYPY_VALUE_FLAGS).copied().collect();
    Ok(targets || has_positional(args, &takes_value))
}

const RUFF_VALUE_FLAGS: &[&str] = &[
    "--config",
    "--cache-dir",
    "--output-file",
    "-o",
    "--output-format",
    "--select",
    "--ignore",
    "--extend-select",
    "--extend-ignore",
    "--per-file-ignores",
    "--extend-per-file-ignores",
    "--exclude",
    "--extend-exclude",
    "--fixable",
    "--unfixable",
    "--extend-fixable",
    "--target-version",
    "--line-length",
    "--dummy-variable-rgx",
    "--stdin-filename",
];

/// Refuses what edits files (`--fix`, `--fix-only`, `--add-noqa`) or never ends (`--watch`);
/// paths stay inside the roots. Returns whether paths were named.
fn check_ruff_args(args: &[String], request: &PlanRequest) -> Result<bool, String> {
    for i in 0..args.len() {
        let name = args[i].split('=').next().unwrap_or_default();
        if ["--fix", "--fix-only", "--add-noqa", "--unsafe-fixes"].contains(&name) {
            return Err(format!(
                "`{name}` edits source files, which python.ruff does not do; run `ruff check --fix` yourself"
            ));
        }
        if name == "--watch" || name == "-w" {
            return Err("`--watch` never ends; run python.ruff again instead".into());
        }
        // `--config` takes a file, or a `key = value` override.
        if let Some((flag, Some(path))) = value_of(args, i, &["--config", "--cache-dir", "--output-file", "-o"])
            && !(flag == "--config" && path.contains('='))
        {
            request.check_path(flag, path)?;
        }
    }
    Ok(has_positional(args, RUFF_VALUE_FLAGS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, args: &[&str]) -> PlanRequest {
        PlanRequest::new(tool, args.iter().map(|a| a.to_string()).collect(), "/bv-plan/proj", "/bv-runs/r1")
            .with_roots(vec!["/bv-plan/proj".into()])
    }

    fn command(tool: &str, args: &[&str]) -> Vec<String> {
        let plan = plan(&request(tool, args)).expect("a plan");
        std::iter::once(plan.program).chain(plan.args).collect()
    }

    #[test]
    fn a_tool_whose_program_is_not_installed_is_unavailable() {
        let available = |found: &dyn Fn(&str) -> bool| {
            tools(found).into_iter().filter(|t| t.unavailable.is_none()).map(|t| t.name).collect::<Vec<_>>()
        };
        assert_eq!(available(&|p| p == "make"), ["make"]);
        assert_eq!(available(&|p| p == "go" || p == "ruff"), ["go.build", "go.test", "go.vet", "python.ruff"]);
        let mypy = tools(|_| false).into_iter().find(|t| t.name == "python.mypy").expect("python.mypy");
        assert_eq!(mypy.unavailable.as_deref(), Some("`mypy` is not on PATH; install it to use python.mypy"));
        for t in tools(|_| true) {
            assert!(t.description.split_whitespace().count() <= 4, "{}", t.name);
            assert!(t.args_hint.as_deref().is_none_or(|h| h.split_whitespace().count() <= 6), "{}", t.name);
            assert!(!t.mutates_workspace);
        }
    }

    #[test]
    fn builds_the_commands() {
        assert_eq!(command("make", &["check", "-j4"]), ["make", "check", "-j4"]);
        assert_eq!(command("cmake", &["--build", "build"]), ["cmake", "--build", "build"]);
        assert_eq!(command("ninja", &["-C", "build"]), ["ninja", "-C", "build"]);
        assert_eq!(command("ctest", &["--test-dir", "build"]), ["ctest", "--test-dir", "build"]);
        assert_eq!(command("go.test", &[]), ["go", "test", "./..."]);
        assert_eq!(
            command("go.test", &["-run", "TestX/sub", "-v"]),
            ["go", "test", "-run", "TestX/sub", "-v", "./..."]
        );
        assert_eq!(command("go.vet", &["./calc/"]), ["go", "vet", "./calc/"]);
        assert_eq!(command("python.mypy", &["--strict"]), ["mypy", "--strict", "."]);
        assert_eq!(command("python.mypy", &["-p", "pkg"]), ["mypy", "-p", "pkg"]);
        assert_eq!(command("python.ruff", &["--select", "F"]), ["ruff", "check", "--no-fix", "--select", "F", "."]);
        assert_eq!(command("python.ruff", &["src"]), ["ruff", "check", "--no-fix", "src"]);
    }

    #[test]
    fn refuses_what_edits_runs_other_programs_or_replaces_the_output() {
        for (tool, args, says) in [
            ("python.ruff", &["--fix"][..], "edits source files"),
            ("python.ruff", &["--fix-only"], "edits source files"),
            ("python.ruff", &["--watch"], "never ends"),
            ("python.mypy", &["--install-types"], "installs packages"),
            ("go.test", &["-exec", "sh"], "another program"),
            ("go.build", &["-toolexec=x"], "another program"),
            ("go.test", &["-json"], "replaces the output"),
            ("make", &["--eval=all:;@id"], "adds make code"),
            ("cmake", &["-E", "rm", "-rf", "src"], "runs a command"),
            ("cargo.build", &[], "unknown tool"),
        ] {
            let err = plan(&request(tool, args)).expect_err(says);
            assert!(err.contains(says), "{err}");
        }
    }

    #[test]
    fn path_options_must_stay_inside_the_roots() {
        for (tool, args) in [
            ("make", &["-C", "/elsewhere"][..]),
            ("make", &["-C/elsewhere"]),
            ("make", &["--directory=../x"]),
            ("make", &["-f", "/elsewhere/Makefile"]),
            ("cmake", &["-S", ".", "-B", "/elsewhere/build"]),
            ("cmake", &["--build", "../build"]),
            ("ninja", &["-C", "/elsewhere"]),
            ("ctest", &["--test-dir", "/elsewhere"]),
            ("go.test", &["-C", "/elsewhere"]),
            ("go.build", &["-o", "/elsewhere/bin"]),
            ("go.test", &["-coverprofile=/elsewhere/c.out"]),
            ("python.mypy", &["--config-file", "/elsewhere/mypy.ini"]),
            ("python.mypy", &["--cache-dir=/elsewhere/c"]),
            ("python.ruff", &["--config", "/elsewhere/ruff.toml"]),
            ("python.ruff", &["--cache-dir", "../c"]),
        ] {
            let err = plan(&request(tool, args)).expect_err("outside");
            assert!(err.contains("points outside"), "{tool} {args:?}: {err}");
        }
        assert!(plan(&request("make", &["-C", "sub", "-f", "Other.mk"])).is_ok());
        assert!(plan(&request("cmake", &["-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Debug"])).is_ok());
        assert!(plan(&request("python.ruff", &["--config", "line-length = 100"])).is_ok());
    }
}
