//! The fuzz test links the four plugin crates. Each exports the same ABI entry points
//! (`buildvise_plugin_v1`, `buildvise_plugin_abi`) for the host to find in its own library; in one
//! test executable they are duplicates nobody calls, so the linker keeps the first. The switch is
//! GNU ld's, which lld and gold share.
fn main() {
    println!("cargo:rustc-link-arg-tests=-Wl,--allow-multiple-definition");
}
