//! Test fixture: a plugin from a future minor version of ABI 1. Its table has the slots this host
//! knows and two more it does not (which must never be called), its header static says so, and
//! its results carry words this host does not know: a severity `hint`, fields `fix` and `later`.
//! The host must load it, use what it knows, and read unknown words as the nearest known ones.

#[path = "../../handmade.rs"]
mod handmade;

use handmade::*;
use std::ffi::c_void;

/// The 1.0 table, then 1.1's, 1.2's and 1.3's slots (no formats, no blocks: left null), then two
/// slots of a minor version this host does not know.
#[repr(C)]
pub struct TableNext {
    base: Table10,
    parser_feed_batch: Option<unsafe extern "C" fn(*mut c_void, *const RawLine, usize) -> u32>,
    format_parser_new: Option<unsafe extern "C" fn(RawSlice, RawSlice, *mut *mut c_void) -> RawOutcome>,
    parser_feed_block: Option<unsafe extern "C" fn(*mut c_void, *const c_void) -> u32>,
    future_one: Option<unsafe extern "C" fn()>,
    future_two: Option<unsafe extern "C" fn()>,
}

unsafe extern "C" fn manifest() -> RawOutcome {
    outcome(0, manifest_json("next"))
}

unsafe extern "C" fn parser_finish(parser: *mut c_void, _end: RawSlice) -> RawOutcome {
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

static TABLE: TableNext = TableNext {
    base: Table10::with(size_of::<TableNext>(), manifest, parser_finish),
    parser_feed_batch: Some(feed_batch),
    format_parser_new: None,
    parser_feed_block: None,
    future_one: Some(never),
    future_two: Some(never),
};

#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static buildvise_plugin_abi: Header = Header { abi_version: 1, table_size: size_of::<TableNext>() as u32 };

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_v1() -> *const TableNext {
    &TABLE
}
