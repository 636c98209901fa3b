//! Test fixture: a plugin as libraries built against ABI 1.0 are, written without the current
//! plugin-api: its table ends at `buffer_free` (no optional slots), and it has no
//! `buildvise_plugin_abi` header static. A newer host must load it and run its tool, feeding
//! lines one call each.

#[path = "../../handmade.rs"]
mod handmade;

use handmade::*;
use std::ffi::c_void;

unsafe extern "C" fn manifest() -> RawOutcome {
    outcome(0, manifest_json("old"))
}

unsafe extern "C" fn parser_finish(parser: *mut c_void, _end: RawSlice) -> RawOutcome {
    let gathered = unsafe { &*parser.cast::<Gathered>() };
    let result = serde_json::json!({"diagnostics": diagnostics(gathered, &serde_json::json!({}))});
    outcome(0, result.to_string().into_bytes())
}

static TABLE: Table10 = Table10::with(size_of::<Table10>(), manifest, parser_finish);

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_v1() -> *const Table10 {
    &TABLE
}
