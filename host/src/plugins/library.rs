//! One loaded plugin library: the only place the host calls through the C ABI.
//!
//! Everything unsafe about plugins lives here: resolving the entry symbol, checking the table, and
//! moving buffers across. The rest of the host sees [`PluginLibrary`] and [`ParserHandle`].

use buildvise_plugin_api::abi::{self, PluginTableV1, RawOutcome, RawSlice};
use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, ParseResult, PlanRequest, Progress, RunEnd, Stream};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a library could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    #[error("cannot load: {0}")]
    Open(String),
    #[error("no `buildvise_plugin_v1` symbol: not a buildvise plugin, or built for another ABI")]
    NoEntry,
    #[error(
        "ABI version {found}, this buildvise speaks {expected}: rebuild the plugin against buildvise-plugin-api {expected}.x"
    )]
    AbiVersion { found: u32, expected: u32 },
    #[error("function table of {found} bytes, at least {expected} expected: rebuild the plugin")]
    TableSize { found: u32, expected: u32 },
    #[error("manifest: {0}")]
    Manifest(String),
}

/// A loaded plugin. The library stays mapped for the life of the process (unloading Rust
/// libraries with thread-locals is not safe), so `'static` borrows of the table are sound.
pub struct PluginLibrary {
    pub path: PathBuf,
    pub manifest: Manifest,
    table: &'static PluginTableV1,
}

// SAFETY: the table is immutable static data and plugin functions are required by the contract
// (Plugin: Send + Sync) to be callable from any thread.
unsafe impl Send for PluginLibrary {}
// SAFETY: as above.
unsafe impl Sync for PluginLibrary {}

impl PluginLibrary {
    pub fn load(path: &Path) -> Result<Arc<Self>, LoadError> {
        // SAFETY: loading runs the library's initialisers; plugin libraries are trusted code the
        // user installed, the same trust as the buildvise binary itself.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::Open(e.to_string()))?;
        // SAFETY: the symbol's type is fixed by ABI v1.
        let entry = unsafe { library.get::<abi::EntryFn>(abi::ENTRY_SYMBOL) }.map_err(|_| LoadError::NoEntry)?;
        // SAFETY: calling the entry function is how a plugin is initialised; it catches panics.
        let table_ptr = unsafe { entry() };
        if table_ptr.is_null() {
            return Err(LoadError::NoEntry);
        }
        // Read the two header fields before trusting the rest of the table's layout.
        // SAFETY: every ABI version starts with these two u32 fields.
        let (version, size) = unsafe { ((*table_ptr).abi_version, (*table_ptr).struct_size) };
        if version != abi::ABI_VERSION {
            return Err(LoadError::AbiVersion { found: version, expected: abi::ABI_VERSION });
        }
        let expected = size_of::<PluginTableV1>() as u32;
        if size < expected {
            return Err(LoadError::TableSize { found: size, expected });
        }
        std::mem::forget(library);
        // SAFETY: the table is static in a library that is never unloaded.
        let table: &'static PluginTableV1 = unsafe { &*table_ptr };
        // SAFETY: manifest takes no arguments and returns an owned buffer.
        let manifest_json = take(table, unsafe { (table.manifest)() }).map_err(LoadError::Manifest)?;
        let manifest: Manifest =
            serde_json::from_slice(&manifest_json).map_err(|e| LoadError::Manifest(e.to_string()))?;
        Ok(Arc::new(PluginLibrary { path: path.to_path_buf(), manifest, table }))
    }

    pub fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        let json = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        // SAFETY: the request buffer lives across the call; the result is an owned buffer.
        let bytes = take(self.table, unsafe { (self.table.plan)(RawSlice::new(&json)) })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("plugin {} returned an invalid plan: {e}", self.manifest.name))
    }

    pub fn parser(self: &Arc<Self>, context: &ParseContext) -> Result<ParserHandle, String> {
        let json = serde_json::to_vec(context).map_err(|e| e.to_string())?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: the context buffer lives across the call; `handle` is a valid out-pointer.
        take(self.table, unsafe { (self.table.parser_new)(RawSlice::new(&json), &mut handle) })?;
        if handle.is_null() {
            return Err(format!("plugin {} returned no parser", self.manifest.name));
        }
        Ok(ParserHandle { library: Arc::clone(self), handle, failure: None })
    }
}

/// Copies an outcome's buffer and frees it in the plugin.
fn take(table: &PluginTableV1, outcome: RawOutcome) -> Result<Vec<u8>, String> {
    // SAFETY: the buffer is alive until buffer_free below.
    let bytes = unsafe { outcome.buf.as_bytes() }.to_vec();
    // SAFETY: the buffer came from this plugin and is freed once.
    unsafe { (table.buffer_free)(outcome.buf) };
    if outcome.status == abi::STATUS_OK { Ok(bytes) } else { Err(String::from_utf8_lossy(&bytes).into_owned()) }
}

/// One parser instance inside a plugin. Not shareable between threads at once: the owner feeds
/// it and asks it for progress from one thread.
pub struct ParserHandle {
    library: Arc<PluginLibrary>,
    handle: *mut c_void,
    failure: Option<String>,
}

// SAFETY: the handle is used from one thread at a time (`&mut self` everywhere); parsers are Send.
unsafe impl Send for ParserHandle {}

impl ParserHandle {
    /// Feeds one line; after the parser has failed, further lines are dropped.
    pub fn feed(&mut self, stream: Stream, number: u64, line: &[u8]) {
        if self.failure.is_some() {
            return;
        }
        let tag = if stream == Stream::Stderr { abi::STREAM_STDERR } else { abi::STREAM_STDOUT };
        // SAFETY: the handle is live; the line is lent for the call.
        let status = unsafe { (self.library.table.parser_feed)(self.handle, tag, number, RawSlice::new(line)) };
        if status != abi::STATUS_OK {
            self.failure = Some(format!("parser failed at log line {number}"));
        }
    }

    pub fn progress(&mut self) -> Option<Progress> {
        if self.failure.is_some() {
            return None;
        }
        // SAFETY: the handle is live.
        let bytes = take(self.library.table, unsafe { (self.library.table.parser_progress)(self.handle) }).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The parse result, or the reason the parser failed (a panic in feed or finish).
    pub fn finish(self, end: &RunEnd) -> Result<ParseResult, String> {
        let json = serde_json::to_vec(end).map_err(|e| e.to_string())?;
        // SAFETY: the handle is live; the end record is lent for the call.
        let bytes =
            take(self.library.table, unsafe { (self.library.table.parser_finish)(self.handle, RawSlice::new(&json)) })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("plugin {} returned an invalid result: {e}", self.library.manifest.name))
    }
}

impl Drop for ParserHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from parser_new and is freed once, here.
        unsafe { (self.library.table.parser_free)(self.handle) };
    }
}
