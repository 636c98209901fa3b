//! Test fixture: a library that claims ABI 1 but whose header says its table is 8 bytes, smaller
//! than the table of 1.0. The host must refuse it before calling its entry (which aborts).

#[repr(C)]
pub struct Header {
    abi_version: u32,
    abi_minor: u32,
    table_size: u32,
}

#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static buildvise_plugin_abi: Header = Header { abi_version: 1, abi_minor: 0, table_size: 8 };

/// What a host must never call for a table this short.
#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_entry() -> *const u8 {
    std::process::abort();
}
