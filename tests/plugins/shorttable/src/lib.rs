//! Test fixture: a library that claims ABI version 1 but whose table is only the 8-byte header.
//! The host must refuse it on `struct_size` before reading any function pointer.

#[repr(C)]
pub struct Header {
    abi_version: u32,
    struct_size: u32,
}

static HEADER: Header = Header { abi_version: 1, struct_size: size_of::<Header>() as u32 };

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_v1() -> *const Header {
    &HEADER
}
