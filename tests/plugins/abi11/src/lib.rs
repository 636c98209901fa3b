//! Test fixture: a plugin as libraries built against ABI 1.1 are (the plugin-api before formats):
//! its table ends at `parser_feed_batch`, and its header static says so. A host that speaks 1.2
//! must load it and run its tool, feeding lines in batches, without ever reaching for the format
//! slot the table does not have.

#[path = "../../handmade.rs"]
mod handmade;

use handmade::*;
use std::ffi::c_void;

/// The 1.0 table, then 1.1's slot: the whole table of ABI 1.1.
#[repr(C)]
pub struct Table11 {
    base: Table10,
    parser_feed_batch: Option<unsafe extern "C" fn(*mut c_void, *const RawLine, usize) -> u32>,
}

unsafe extern "C" fn manifest() -> RawOutcome {
    outcome(0, manifest_json("eleven"))
}

unsafe extern "C" fn parser_finish(parser: *mut c_void, _end: RawSlice) -> RawOutcome {
    let gathered = unsafe { &*parser.cast::<Gathered>() };
    let result = serde_json::json!({"diagnostics": diagnostics(gathered, &serde_json::json!({}))});
    outcome(0, result.to_string().into_bytes())
}

static TABLE: Table11 =
    Table11 { base: Table10::with(size_of::<Table11>(), manifest, parser_finish), parser_feed_batch: Some(feed_batch) };

#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static buildvise_plugin_abi: Header = Header { abi_version: 1, table_size: size_of::<Table11>() as u32 };

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_v1() -> *const Table11 {
    &TABLE
}
