//! The `buildvise` binary: the command line ([`cli`]) and the MCP server ([`mcp`]), the two
//! surfaces over the application layer (`buildvise-app`). A surface maps its arguments onto a
//! call and prints the answer; it reaches nothing beneath the application, which this crate does
//! not depend on. Everything, including the exit code of buildvise's own failures, is decided by
//! [`cli::main`].

mod cli;
mod mcp;

fn main() {
    std::process::exit(cli::main());
}
