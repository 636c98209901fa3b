//! The `buildvise` binary: the command line's edge, where errors become messages and exit codes.

fn main() {
    match buildvise::cli::main() {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("buildvise: {e:#}");
            std::process::exit(2);
        }
    }
}
