//! One loaded plugin library: the only place the host calls through the C ABI, and one of the two
//! places in the host allowed `unsafe` (the other is `run::guard`, which forks).
//!
//! Everything unsafe about plugins lives here: reading the ABI header, resolving the entry symbols,
//! reading the function tables (never past the table of 1.0, which the header says it covers),
//! and moving buffers across. The rest of the host sees [`PluginLibrary`] and [`ParserHandle`].
#![allow(unsafe_code)]

use buildvise_plugin_api::abi::{self, AbiHeader, PluginTable, RawLine, RawOutcome, RawSlice};
use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, ParseResult, PlanRequest, Progress, RunEnd, Stream};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a library could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    #[error("cannot load: {0}")]
    Open(String),
    #[error("no `buildvise_plugin_abi` or `buildvise_plugin_entry` symbol: not a buildvise plugin")]
    NoEntry,
    #[error(
        "built for plugin ABI {found}.{found_minor}, this buildvise speaks ABI {expected}.{expected_minor}: rebuild the plugin against a buildvise-plugin-api of ABI {expected}"
    )]
    AbiVersion { found: u32, found_minor: u32, expected: u32, expected_minor: u32 },
    #[error("function table of {found} bytes, at least {expected} expected: rebuild the plugin")]
    TableSize { found: u32, expected: u32 },
    #[error("its manifest could not be read: {0}")]
    Manifest(String),
    #[error("it holds {found} plugins, and no plugin number {index}")]
    NoSuchPlugin { index: usize, found: usize },
}

/// A call into a plugin that did not give a usable answer: the plugin's own message (a refused
/// plan says what to send instead; a failed parser, why), or what was wrong with its answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginError {
    #[error("{0}")]
    Reported(String),
    #[error("plugin {plugin} answered {what} that buildvise cannot read ({detail}); update or report the plugin")]
    BadAnswer { plugin: String, what: &'static str, detail: String },
    #[error("the plugin library {} cannot be loaded any more: {reason}; run `buildvise list` to see the state of every plugin", path.display())]
    Load { path: PathBuf, reason: String },
    #[error("the plugin library {} changed after buildvise read what it offers; run the call again", path.display())]
    Changed { path: PathBuf },
}

/// A loaded plugin: one of the plugins its library exports (most export one; the library
/// buildvise ships exports five). The library is never unloaded, on any path (unloading Rust
/// libraries with thread-locals is not safe, and a library whose code ran may have left threads
/// or handlers behind), so its table stays valid for the life of the process.
pub struct PluginLibrary {
    pub path: PathBuf,
    /// Which of the library's plugins this is, from 0.
    pub index: usize,
    pub manifest: Manifest,
    table: &'static PluginTable,
}

impl PluginLibrary {
    /// Every plugin the library at `path` exports, in its order.
    pub fn load(path: &Path) -> Result<Vec<Arc<Self>>, LoadError> {
        let tables = tables(path)?;
        tables.into_iter().enumerate().map(|(index, table)| Self::read(path, index, table)).collect()
    }

    /// Every plugin of a library linked into this executable (the static build's shipped
    /// plugins); `path` is the executable's.
    pub fn linked(path: &Path, linked: &abi::Linked) -> Result<Vec<Arc<Self>>, LoadError> {
        let tables = linked.tables.iter().copied().enumerate();
        tables.map(|(index, table)| Self::read(path, index, table)).collect()
    }

    /// The plugin at `index` of the library at `path`; the others' manifests are not asked for.
    pub fn load_one(path: &Path, index: usize) -> Result<Arc<Self>, LoadError> {
        let tables = tables(path)?;
        let table = *tables.get(index).ok_or(LoadError::NoSuchPlugin { index, found: tables.len() })?;
        Self::read(path, index, table)
    }

    fn read(path: &Path, index: usize, table: &'static PluginTable) -> Result<Arc<Self>, LoadError> {
        // SAFETY: manifest takes no arguments and returns an owned buffer.
        let manifest_json = take(table, unsafe { (table.manifest)() }).map_err(LoadError::Manifest)?;
        let manifest: Manifest =
            serde_json::from_slice(&manifest_json).map_err(|e| LoadError::Manifest(e.to_string()))?;
        Ok(Arc::new(PluginLibrary { path: path.to_path_buf(), index, manifest, table }))
    }

    pub fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, PluginError> {
        let json = serde_json::to_vec(request).map_err(|e| self.bad_answer("a plan request", e))?;
        // SAFETY: the request buffer lives across the call; the result is an owned buffer.
        let bytes =
            take(self.table, unsafe { (self.table.plan)(RawSlice::new(&json)) }).map_err(PluginError::Reported)?;
        serde_json::from_slice(&bytes).map_err(|e| self.bad_answer("a plan", e))
    }

    pub fn parser(self: &Arc<Self>, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        let json = serde_json::to_vec(context).map_err(|e| self.bad_answer("a parse context", e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: the context buffer lives across the call; `handle` is a valid out-pointer.
        take(self.table, unsafe { (self.table.parser_new)(RawSlice::new(&json), &mut handle) })
            .map_err(PluginError::Reported)?;
        self.handle(handle)
    }

    /// A parser of one of the manifest's formats, for a tool defined in a config file.
    pub fn format_parser(self: &Arc<Self>, format: &str, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        let json = serde_json::to_vec(context).map_err(|e| self.bad_answer("a parse context", e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: both buffers live across the call; `handle` is a valid out-pointer.
        take(self.table, unsafe {
            (self.table.format_parser_new)(RawSlice::new(format.as_bytes()), RawSlice::new(&json), &mut handle)
        })
        .map_err(PluginError::Reported)?;
        self.handle(handle)
    }

    fn handle(self: &Arc<Self>, handle: *mut c_void) -> Result<ParserHandle, PluginError> {
        if handle.is_null() {
            return Err(self.bad_answer("no parser", "a null handle"));
        }
        Ok(ParserHandle { library: Arc::clone(self), handle, batch: Vec::new(), failed_at: None })
    }

    fn bad_answer(&self, what: &'static str, detail: impl ToString) -> PluginError {
        PluginError::BadAnswer { plugin: self.manifest.name.clone(), what, detail: detail.to_string() }
    }
}

/// Loads the library at `path` (once per process: the loader shares a library opened twice) and
/// returns the table of each plugin it exports.
fn tables(path: &Path) -> Result<Vec<&'static PluginTable>, LoadError> {
    // SAFETY: loading runs the library's initialisers; plugin libraries are code the operator
    // installed (never a project's), the same trust as the buildvise binary itself.
    let library = unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::Open(e.to_string()))?;
    // Its initialisers ran: from here on it stays loaded, whatever the checks below decide.
    let library: &'static libloading::Library = Box::leak(Box::new(library));
    // SAFETY: the symbol, when present, is a static `AbiHeader`, whose layout every ABI
    // version keeps.
    let header = unsafe { library.get::<*const AbiHeader>(abi::HEADER_SYMBOL) }.map_err(|_| LoadError::NoEntry)?;
    // SAFETY: the symbol's address points at the static, mapped for the life of the process.
    let header = unsafe { (*header).read_unaligned() };
    check_header(&header)?;
    // SAFETY: both entry symbols' types are fixed by ABI 1, whose major the header just confirmed.
    if let Ok(entry_at) = unsafe { library.get::<abi::EntryAtFn>(abi::ENTRY_AT_SYMBOL) } {
        let tables: Vec<&'static PluginTable> = (0..abi::MAX_PLUGINS as u32)
            // SAFETY: calling an entry function is how plugins are initialised; it catches
            // panics, and answers null past the library's last plugin. A non-null table is a
            // static of the library, at least as large as the table of 1.0 (checked above),
            // which is all this host reads of it; the library is never unloaded.
            .map_while(|index| unsafe { entry_at(index).as_ref() })
            .collect();
        return if tables.is_empty() { Err(LoadError::NoEntry) } else { Ok(tables) };
    }
    // A library of ABI 1.0, which holds one plugin.
    // SAFETY: as for `buildvise_plugin_entry_at`.
    let entry = unsafe { library.get::<abi::EntryFn>(abi::ENTRY_SYMBOL) }.map_err(|_| LoadError::NoEntry)?;
    // SAFETY: calling an entry function is how a plugin is initialised; it catches panics. A
    // non-null table is a static of the library, at least as large as the table of 1.0 (checked
    // above), which is all this host reads of it; the library is never unloaded.
    let table = unsafe { entry().as_ref() }.ok_or(LoadError::NoEntry)?;
    Ok(vec![table])
}

fn check_header(header: &AbiHeader) -> Result<(), LoadError> {
    if header.abi_version != abi::ABI_VERSION {
        return Err(LoadError::AbiVersion {
            found: header.abi_version,
            found_minor: header.abi_minor,
            expected: abi::ABI_VERSION,
            expected_minor: abi::ABI_MINOR,
        });
    }
    if header.table_size < abi::TABLE_SIZE_1_0 {
        return Err(LoadError::TableSize { found: header.table_size, expected: abi::TABLE_SIZE_1_0 });
    }
    Ok(())
}

/// Copies an outcome's buffer and frees it in the plugin.
fn take(table: &PluginTable, outcome: RawOutcome) -> Result<Vec<u8>, String> {
    // SAFETY: the buffer is alive until buffer_free below.
    let bytes = unsafe { outcome.buf.as_bytes() }.to_vec();
    // SAFETY: the buffer came from this plugin and is freed once.
    unsafe { (table.buffer_free)(outcome.buf) };
    if outcome.status == abi::STATUS_OK { Ok(bytes) } else { Err(String::from_utf8_lossy(&bytes).into_owned()) }
}

/// One parser instance inside a plugin. Used from one thread at a time (every method takes
/// `&mut self` or `self`).
pub struct ParserHandle {
    library: Arc<PluginLibrary>,
    handle: *mut c_void,
    /// The batch being lent to the plugin, kept to reuse its allocation; empty between calls, so
    /// that it never holds a pointer to lines that are gone.
    batch: Vec<RawLine>,
    /// The line the parser failed at; later lines are dropped.
    failed_at: Option<u64>,
}

// SAFETY: the plugin contract requires parsers to be `Send` (the trait bound in plugin-api), the
// handle is only ever used by its one owner, and `batch` holds no pointer between calls.
unsafe impl Send for ParserHandle {}

impl ParserHandle {
    /// Feeds lines, in order, in one call: each its stream, its number in the log, and its bytes.
    pub fn feed<'a>(&mut self, lines: impl IntoIterator<Item = (Stream, u64, &'a [u8])>) {
        if self.failed_at.is_some() {
            return;
        }
        self.batch.extend(lines.into_iter().map(|(stream, number, bytes)| RawLine {
            stream: tag(stream),
            number,
            bytes: RawSlice::new(bytes),
        }));
        let Some(first) = self.batch.first().map(|line| line.number) else { return };
        // SAFETY: the handle is live; the lines and the bytes they point to are borrowed for 'a,
        // which outlasts the call, and the batch is emptied before they are released.
        let status = unsafe { (self.library.table.parser_feed)(self.handle, self.batch.as_ptr(), self.batch.len()) };
        self.batch.clear();
        if status != abi::STATUS_OK {
            self.failed_at = Some(first);
        }
    }

    pub fn progress(&mut self) -> Option<Progress> {
        if self.failed_at.is_some() {
            return None;
        }
        // SAFETY: the handle is live.
        let bytes = take(self.library.table, unsafe { (self.library.table.parser_progress)(self.handle) }).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The parse result, or why the parser failed (a panic in feed or finish, an unreadable
    /// result).
    pub fn finish(self, end: &RunEnd) -> Result<ParseResult, PluginError> {
        let json = serde_json::to_vec(end).map_err(|e| self.library.bad_answer("a run end", e))?;
        // SAFETY: the handle is live; the end record is lent for the call.
        let outcome = unsafe { (self.library.table.parser_finish)(self.handle, RawSlice::new(&json)) };
        let bytes = take(self.library.table, outcome).map_err(PluginError::Reported)?;
        serde_json::from_slice(&bytes).map_err(|e| self.library.bad_answer("a result", e))
    }
}

impl Drop for ParserHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from parser_new and is freed once, here.
        unsafe { (self.library.table.parser_free)(self.handle) };
    }
}

/// The ABI's tag for `stream`.
fn tag(stream: Stream) -> u32 {
    if stream == Stream::Stderr { abi::STREAM_STDERR } else { abi::STREAM_STDOUT }
}
