//! Test fixture: a library built for ABI 2.1, a major this host does not speak. Its header says
//! so, and its entry must never be called (it aborts). The host must skip it and name both
//! versions in `list`.

/// The header static, laid out as every ABI version lays it out.
#[repr(C)]
pub struct Header {
    abi_version: u32,
    abi_minor: u32,
    table_size: u32,
}

#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static buildvise_plugin_abi: Header = Header { abi_version: 2, abi_minor: 1, table_size: 1024 };

/// What a host of another major must never call.
#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_entry() -> *const u8 {
    std::process::abort();
}
