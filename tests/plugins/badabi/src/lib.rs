//! Test fixture: a library that exports the buildvise entry symbol but speaks ABI version 99.
//! The host must skip it and say why in `list`.

/// The two fields every ABI version starts with; nothing follows, since the host must stop
/// reading at the unknown version.
#[repr(C)]
pub struct Header {
    abi_version: u32,
    struct_size: u32,
}

static HEADER: Header = Header { abi_version: 99, struct_size: size_of::<Header>() as u32 };

#[unsafe(no_mangle)]
pub extern "C" fn buildvise_plugin_v1() -> *const Header {
    &HEADER
}
