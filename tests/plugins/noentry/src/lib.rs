//! Test fixture: a library named like a buildvise plugin that exports neither `buildvise_plugin_abi` nor `buildvise_plugin_entry`.
//! The host must skip it and say why in `list`.

#[unsafe(no_mangle)]
pub extern "C" fn not_a_buildvise_entry() -> u32 {
    7
}
