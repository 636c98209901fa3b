//! The `buildvise` binary. Everything, including the exit code of buildvise's own failures, is
//! decided by [`buildvise::cli::main`].

fn main() {
    std::process::exit(buildvise::cli::main());
}
