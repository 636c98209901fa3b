//! The bench links the four plugin crates to time their parsers in-process. Each exports the
//! same ABI entry points (`buildvise_plugin_v1`, `buildvise_plugin_abi`) for the host to find in
//! its own library; in one executable they are duplicates nobody calls, so the linker keeps the
//! first. The switch is GNU ld's, which lld and gold share.
fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--allow-multiple-definition");
}
