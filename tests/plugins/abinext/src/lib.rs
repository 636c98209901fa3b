//! Test fixture: a plugin from a future minor version of ABI 1. Its table has the slots of 1.0
//! and two more this host does not know (which must never be called), its header says so, and
//! its results carry words this host does not know: a severity `hint`, fields `fix` and `later`.
//! The host must load it, use what it knows, and read unknown words as the nearest known ones.

#[path = "../../handmade.rs"]
mod handmade;

use handmade::*;
use std::ffi::c_void;

/// The 1.0 table, then two slots of a minor version this host does not know.
#[repr(C)]
pub struct TableNext {
    base: Table10,
    future_one: Option<unsafe extern "C" fn()>,
    future_two: Option<unsafe extern "C" fn()>,
}

unsafe extern "C" fn manifest() -> RawOutcome {
    outcome(0, manifest_json("next"))
}

unsafe extern "C" fn parser_finish(parser: *mut c_void, _end: RawSlice) -> RawOutcome {
    // SAFETY: the host passes a live parser of this plugin.
    let gathered = unsafe { &*parser.cast::<Gathered>() };
    let mut found = diagnostics(gathered, &serde_json::json!({"fix": {"replace": "x"}}));
    found.push(serde_json::json!({"severity": "hint", "message": "a word from the future", "file": "src/a.rs"}));
    let result = serde_json::json!({"diagnostics": found, "later": {"anything": 1}});
    outcome(0, result.to_string().into_bytes())
}

/// A slot this host must never call.
unsafe extern "C" fn never() {
    std::process::abort();
}

static TABLE: TableNext =
    TableNext { base: Table10::with(manifest, parser_finish), future_one: Some(never), future_two: Some(never) };

#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static buildvise_plugin_abi: Header =
    Header { abi_version: 1, abi_minor: 2, table_size: size_of::<TableNext>() as u32 };

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_entry() -> *const TableNext {
    &TABLE
}
