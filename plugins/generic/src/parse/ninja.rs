//! ninja's own lines: its errors (`ninja: error: unknown target 'x'`), its warnings, the
//! directory `-C` made it enter, and the edge that failed (`FAILED: CMakeFiles/x.dir/x.c.o`).
//!
//! A failed edge is a consequence, as make's failed recipe is: the command under it printed why.
//! `ninja: build stopped: subcommand failed.` says it once more and is dropped.

use super::Found;
use buildvise_plugin_api::{Diagnostic, Recogniser, Text, Wants};

pub(crate) struct Ninja;

impl Recogniser<Found> for Ninja {
    fn wants(&self) -> Wants {
        Wants::starts(&["ninja: ", "FAILED: "])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if let Some(edge) = text.strip_prefix("FAILED: ") {
            let message = format!("`{}` failed", edge.trim());
            found.consequences.push(Diagnostic::error(message).with_log_range(number, number));
            return true;
        }
        let Some(rest) = text.strip_prefix("ninja: ") else { return false };
        if let Some(dir) = rest.strip_prefix("Entering directory `") {
            // Relative to where ninja started, which is the cwd: `build`, not `/…/build`.
            let dir = dir.trim_end_matches('\'');
            let dir =
                if buildvise_plugin_api::is_absolute(dir) { dir.to_string() } else { format!("{}/{dir}", found.cwd) };
            found.dirs.push(dir);
        } else if let Some(error) = rest.strip_prefix("error: ") {
            found.push(Diagnostic::error(error.trim()).with_log_range(number, number));
        } else if let Some(warning) = rest.strip_prefix("warning: ") {
            found.push(Diagnostic::warning(warning.trim()).with_log_range(number, number).from_toolchain());
        }
        // Anything else (`build stopped: subcommand failed.`, `no work to do.`) is progress.
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    const FORMATS: &[&str] = &["ninja", "gcc", "fallback"];

    #[test]
    fn a_failed_edge_explained_by_the_compiler_is_not_repeated() {
        // ninja 1.11.1 and gcc 12.2.0 under `cmake --build`, which passes absolute paths.
        let log = "\
[1/55] Building C object CMakeFiles/cJSON_test.dir/test.c.o
FAILED: CMakeFiles/cJSON_test.dir/test.c.o 
/usr/bin/cc -Wall -o CMakeFiles/cJSON_test.dir/test.c.o -c /home/dev/src/demo/test.c
/home/dev/src/demo/test.c: In function ‘create_objects’:
/home/dev/src/demo/test.c:173:5: error: too few arguments to function ‘cJSON_AddNumberToObject’
ninja: build stopped: subcommand failed.
";
        assert_eq!(
            brief(&parse(FORMATS, log, 1)),
            ["error test.c:173:5 too few arguments to function ‘cJSON_AddNumberToObject’"]
        );
        let silent = "FAILED: gen/x.h \ntools/gen.sh\nninja: build stopped: subcommand failed.\n";
        assert_eq!(brief(&parse(FORMATS, silent, 1)), ["error - `gen/x.h` failed"]);
    }

    #[test]
    fn reads_ninja_s_own_errors_and_the_directory_it_entered() {
        let unknown = "ninja: error: unknown target 'nosuch'\n";
        assert_eq!(brief(&parse(FORMATS, unknown, 1)), ["error - unknown target 'nosuch'"]);
        // meson's build folder: paths relative to it.
        let log = "\
ninja: Entering directory `build'
[1/2] Compiling C object demo.p/src_main.c.o
FAILED: demo.p/src_main.c.o 
cc -Idemo.p -c ../src/main.c
../src/main.c:3:5: error: ‘y’ undeclared (first use in this function)
ninja: build stopped: subcommand failed.
";
        assert_eq!(
            brief(&parse(FORMATS, log, 1)),
            ["error src/main.c:3:5 ‘y’ undeclared (first use in this function)"]
        );
    }
}
