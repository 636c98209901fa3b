//! What the hand-made plugin `abinext` needs: the C layouts of ABI 1.0, written out by hand (the
//! fixture must not depend on the current plugin-api, whose layout it tests), and a tiny plugin
//! behind them: one tool `NAME.sh` that runs a shell script, and a parser that reports each
//! `error: MSG` line.
//!
//! Included with `#[path]` by each fixture; not a crate of its own.

#![allow(dead_code)]

use std::ffi::c_void;

/// The table of ABI 1.0.
#[repr(C)]
pub struct Table10 {
    pub manifest: unsafe extern "C" fn() -> RawOutcome,
    pub plan: unsafe extern "C" fn(RawSlice) -> RawOutcome,
    pub parser_new: unsafe extern "C" fn(RawSlice, *mut *mut c_void) -> RawOutcome,
    pub format_parser_new: unsafe extern "C" fn(RawSlice, RawSlice, *mut *mut c_void) -> RawOutcome,
    pub parser_feed: unsafe extern "C" fn(*mut c_void, *const RawLine, usize) -> u32,
    pub parser_finish: unsafe extern "C" fn(*mut c_void, RawSlice) -> RawOutcome,
    pub parser_progress: unsafe extern "C" fn(*mut c_void) -> RawOutcome,
    pub parser_free: unsafe extern "C" fn(*mut c_void),
    pub buffer_free: unsafe extern "C" fn(RawBuf),
}

impl Table10 {
    /// The 1.0 table of a hand-made plugin whose `manifest` and `parser_finish` are its own.
    pub const fn with(
        manifest: unsafe extern "C" fn() -> RawOutcome,
        parser_finish: unsafe extern "C" fn(*mut c_void, RawSlice) -> RawOutcome,
    ) -> Self {
        Table10 {
            manifest,
            plan,
            parser_new,
            format_parser_new,
            parser_feed,
            parser_finish,
            parser_progress,
            parser_free,
            buffer_free,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawSlice {
    pub ptr: *const u8,
    pub len: usize,
}

impl RawSlice {
    pub unsafe fn bytes<'a>(self) -> &'a [u8] {
        // SAFETY: the host lends `len` readable bytes at `ptr` for the call this slice came with.
        if self.len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(self.ptr, self.len) } }
    }
}

#[repr(C)]
pub struct RawBuf {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

#[repr(C)]
pub struct RawOutcome {
    pub status: u32,
    pub buf: RawBuf,
}

pub fn outcome(status: u32, bytes: Vec<u8>) -> RawOutcome {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    RawOutcome { status, buf: RawBuf { ptr: bytes.as_mut_ptr(), len: bytes.len(), cap: bytes.capacity() } }
}

pub unsafe extern "C" fn buffer_free(buf: RawBuf) {
    if !buf.ptr.is_null() {
        // SAFETY: the buffer is one `outcome` made from a Vec of this library, freed once.
        drop(unsafe { Vec::from_raw_parts(buf.ptr, buf.len, buf.cap) });
    }
}

pub fn manifest_json(name: &str) -> Vec<u8> {
    format!(
        r#"{{"name":"{name}","version":"0.0.0","tools":[{{"name":"{name}.sh","description":"Run a shell script (hand-made test plugin)"}}]}}"#
    )
    .into_bytes()
}

pub unsafe extern "C" fn plan(request: RawSlice) -> RawOutcome {
    // SAFETY: the host lends the request for this call.
    let request: serde_json::Value = serde_json::from_slice(unsafe { request.bytes() }).unwrap_or_default();
    let script = request["args"][0].as_str().unwrap_or("echo 'error: default'; exit 1");
    outcome(0, serde_json::json!({"program": "sh", "args": ["-c", script]}).to_string().into_bytes())
}

/// The parser: error lines so far.
pub struct Gathered {
    pub errors: Vec<(u64, String)>,
}

pub unsafe extern "C" fn parser_new(_context: RawSlice, out: *mut *mut c_void) -> RawOutcome {
    // SAFETY: the host passes a pointer valid for one write.
    unsafe { *out = Box::into_raw(Box::new(Gathered { errors: Vec::new() })).cast() };
    outcome(0, Vec::new())
}

/// Exports no format: refuses every name.
pub unsafe extern "C" fn format_parser_new(_format: RawSlice, _context: RawSlice, _out: *mut *mut c_void) -> RawOutcome {
    outcome(1, b"no formats".to_vec())
}

pub unsafe extern "C" fn parser_feed(parser: *mut c_void, lines: *const RawLine, count: usize) -> u32 {
    // SAFETY: the host lends a live parser and `count` lines, for this call.
    let (gathered, lines) = unsafe { (&mut *parser.cast::<Gathered>(), std::slice::from_raw_parts(lines, count)) };
    for line in lines {
        // SAFETY: the host lends each line's bytes for this call.
        if let Some(message) = unsafe { line.bytes.bytes() }.strip_prefix(b"error: ") {
            gathered.errors.push((line.number, String::from_utf8_lossy(message).into_owned()));
        }
    }
    0
}

pub unsafe extern "C" fn parser_free(parser: *mut c_void) {
    // SAFETY: the handle is one `parser_new` boxed, freed once by the host.
    drop(unsafe { Box::from_raw(parser.cast::<Gathered>()) });
}

pub unsafe extern "C" fn parser_progress(parser: *mut c_void) -> RawOutcome {
    // SAFETY: the host passes a live parser of this plugin.
    let gathered = unsafe { &*parser.cast::<Gathered>() };
    outcome(0, format!(r#"{{"errors":{}}}"#, gathered.errors.len()).into_bytes())
}

/// The diagnostics as ABI 1.0 JSON, each with `extra` merged in.
pub fn diagnostics(gathered: &Gathered, extra: &serde_json::Value) -> Vec<serde_json::Value> {
    gathered
        .errors
        .iter()
        .map(|(line, message)| {
            let mut d = serde_json::json!({"severity": "error", "message": message, "logRange": {"start": line, "end": line}});
            if let (Some(d), Some(extra)) = (d.as_object_mut(), extra.as_object()) {
                d.extend(extra.clone());
            }
            d
        })
        .collect()
}

/// One line of a batch.
#[repr(C)]
pub struct RawLine {
    pub stream: u32,
    pub number: u64,
    pub bytes: RawSlice,
}

/// The `buildvise_plugin_abi` header static.
#[repr(C)]
pub struct Header {
    pub abi_version: u32,
    pub abi_minor: u32,
    pub table_size: u32,
}
