//! ABI 1: the `#[repr(C)]` table a plugin library exports, and the glue that implements it over
//! the safe [`Plugin`] trait.
//!
//! A library exports three symbols. [`HEADER_SYMBOL`] is a static [`AbiHeader`]: the ABI version
//! and the table's size, which the host reads before it calls anything. [`ENTRY_AT_SYMBOL`]
//! (since 1.1) is a function returning a pointer to the static [`PluginTable`] of the library's
//! plugin at an index, null past the last: one library may hold several plugins, as the one
//! buildvise ships holds its five, sharing one copy of std and the crates they all use.
//! [`ENTRY_SYMBOL`] returns the first plugin's table, for hosts of ABI 1.0, which know no other. Structured values cross as UTF-8
//! JSON; a buffer is freed by the side that allocated it ([`PluginTable::buffer_free`] for
//! buffers the plugin returns). Output lines cross as batches of [`RawLine`]s, the hot path.
//! Every function catches panics: a panic becomes an error value and the host process lives on.
//!
//! **How the table grows** (the rules in docs/plugins.md, "Stability"). [`ABI_VERSION`] is the
//! major: a host loads only libraries of its own major, and refuses others naming both. Within a
//! major, a function is only ever added at the end of the table, as an optional slot
//! (`Option<fn>`), and [`ABI_MINOR`] goes up by one. A host uses a slot only when the header's
//! `table_size` covers it and it is not null, and never reads past `table_size`: a plugin of a
//! later minor loads in an older host (which reads the part it knows), and a plugin of an older
//! minor in a newer host (which goes without the slots it lacks). The table of 1.0 has no
//! optional slot: every function in it is required.
//!
//! Plugin authors never touch this module: `export_plugin!(MyPlugin)` does it all.
#![allow(unsafe_code)]

use crate::plugin::{Parser, Plugin};
use crate::types::{Line, ParseContext, PlanRequest, RunEnd, Stream};
use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// The major version of the ABI: the layout of [`AbiHeader`] and of the first [`PluginTable`].
pub const ABI_VERSION: u32 = 1;

/// How many additions ABI 1 has had since 1.0, each optional: 1.1 added [`ENTRY_AT_SYMBOL`].
/// Which slots a table has is told by its header's `table_size`, not by this number.
pub const ABI_MINOR: u32 = 1;

/// The exported [`AbiHeader`] static's name, NUL-terminated for `dlsym`.
pub const HEADER_SYMBOL: &[u8] = b"buildvise_plugin_abi\0";

/// The exported function's name, NUL-terminated for `dlsym`.
pub const ENTRY_SYMBOL: &[u8] = b"buildvise_plugin_entry\0";

/// The signature of [`ENTRY_SYMBOL`].
pub type EntryFn = unsafe extern "C" fn() -> *const PluginTable;

/// The exported function giving the table of the plugin at an index (since ABI 1.1).
pub const ENTRY_AT_SYMBOL: &[u8] = b"buildvise_plugin_entry_at\0";

/// The signature of [`ENTRY_AT_SYMBOL`]: the table of plugin `index`, null past the last.
pub type EntryAtFn = unsafe extern "C" fn(index: u32) -> *const PluginTable;

/// The most plugins one library exports: a host asks for no index past it.
pub const MAX_PLUGINS: usize = 8;

/// The size of the table of ABI 1.0, which every plugin of major 1 has at least.
pub const TABLE_SIZE_1_0: u32 = size_of::<PluginTable>() as u32;

/// What a host learns of a library before it calls into it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbiHeader {
    /// [`ABI_VERSION`] of the crate the library was built with.
    pub abi_version: u32,
    /// [`ABI_MINOR`] of that crate, for messages: which slots exist is told by `table_size`.
    pub abi_minor: u32,
    /// The size of the table the entry function returns.
    pub table_size: u32,
}

impl AbiHeader {
    /// The header of a library built against this crate.
    pub const CURRENT: AbiHeader =
        AbiHeader { abi_version: ABI_VERSION, abi_minor: ABI_MINOR, table_size: size_of::<PluginTable>() as u32 };
}

/// Bytes lent for the duration of one call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawSlice {
    pub ptr: *const u8,
    pub len: usize,
}

impl RawSlice {
    pub fn new(bytes: &[u8]) -> Self {
        RawSlice { ptr: bytes.as_ptr(), len: bytes.len() }
    }

    /// # Safety
    /// `ptr` must point to `len` readable bytes that outlive `'a`.
    pub unsafe fn as_bytes<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            &[]
        } else {
            // SAFETY: the caller guarantees the pointer and length.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

/// One line of a batch for `parser_feed`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawLine {
    /// [`STREAM_STDOUT`] or [`STREAM_STDERR`].
    pub stream: u32,
    /// 1-based number in the stored log.
    pub number: u64,
    pub bytes: RawSlice,
}

/// A buffer allocated by the plugin, given to the host, and freed with `buffer_free`.
#[repr(C)]
pub struct RawBuf {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

impl RawBuf {
    fn from_vec(bytes: Vec<u8>) -> Self {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        RawBuf { ptr: bytes.as_mut_ptr(), len: bytes.len(), cap: bytes.capacity() }
    }

    /// # Safety
    /// The buffer must be alive (not yet freed).
    pub unsafe fn as_bytes(&self) -> &[u8] {
        if self.len == 0 {
            &[]
        } else {
            // SAFETY: the plugin built this from a live Vec of `len` bytes.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

/// `status` 0: `buf` holds the JSON value; 1: `buf` holds a UTF-8 error message.
#[repr(C)]
pub struct RawOutcome {
    pub status: u32,
    pub buf: RawBuf,
}

pub const STATUS_OK: u32 = 0;
pub const STATUS_ERROR: u32 = 1;

/// Stream tags of a [`RawLine`].
pub const STREAM_STDOUT: u32 = 1;
pub const STREAM_STDERR: u32 = 2;

/// The function table of ABI 1.0. Later minors append optional slots (see the module's doc).
#[repr(C)]
pub struct PluginTable {
    /// → JSON [`crate::Manifest`].
    pub manifest: unsafe extern "C" fn() -> RawOutcome,
    /// JSON [`PlanRequest`] → JSON [`crate::CommandPlan`], or an error message.
    pub plan: unsafe extern "C" fn(request: RawSlice) -> RawOutcome,
    /// JSON [`ParseContext`] → a parser handle in `*out` (status 0, empty buffer).
    pub parser_new: unsafe extern "C" fn(context: RawSlice, out: *mut *mut c_void) -> RawOutcome,
    /// A format name (UTF-8) and a JSON [`ParseContext`] → a parser of that one format, for a
    /// tool defined in a config file; its handle is used like `parser_new`'s.
    pub format_parser_new:
        unsafe extern "C" fn(format: RawSlice, context: RawSlice, out: *mut *mut c_void) -> RawOutcome,
    /// Feeds `count` lines in order. Returns 0, or 1 once the parser has failed (later lines are
    /// ignored and `parser_finish` reports the failure).
    pub parser_feed: unsafe extern "C" fn(parser: *mut c_void, lines: *const RawLine, count: usize) -> u32,
    /// JSON [`RunEnd`] → JSON [`crate::ParseResult`]. The handle stays valid until `parser_free`.
    pub parser_finish: unsafe extern "C" fn(parser: *mut c_void, end: RawSlice) -> RawOutcome,
    /// → JSON [`crate::Progress`] of a parser still being fed.
    pub parser_progress: unsafe extern "C" fn(parser: *mut c_void) -> RawOutcome,
    pub parser_free: unsafe extern "C" fn(parser: *mut c_void),
    pub buffer_free: unsafe extern "C" fn(buf: RawBuf),
}

/// The library's plugins, in the order `export_plugins!` names them, each built once, or why its
/// constructor failed.
static PLUGINS: OnceLock<Vec<Result<Box<dyn Plugin>, String>>> = OnceLock::new();

/// One table per index. The functions that act for a plugin (its manifest, plans and parsers)
/// know it by the index they were made for; a parser's handle carries its own state.
static TABLES: [PluginTable; MAX_PLUGINS] =
    [table::<0>(), table::<1>(), table::<2>(), table::<3>(), table::<4>(), table::<5>(), table::<6>(), table::<7>()];

const fn table<const N: usize>() -> PluginTable {
    PluginTable {
        manifest: ffi_manifest::<N>,
        plan: ffi_plan::<N>,
        parser_new: ffi_parser_new::<N>,
        format_parser_new: ffi_format_parser_new::<N>,
        parser_feed: ffi_parser_feed,
        parser_finish: ffi_parser_finish,
        parser_progress: ffi_parser_progress,
        parser_free: ffi_parser_free,
        buffer_free: ffi_buffer_free,
    }
}

/// A plugin of type `P`, as `export_plugins!` makes each.
#[doc(hidden)]
pub fn make<P: Plugin + Default + 'static>() -> Box<dyn Plugin> {
    Box::new(P::default())
}

/// Called by `export_plugins!`'s entry symbols: builds the library's plugins once and returns
/// the table of the one at `index`, or null past the last.
#[doc(hidden)]
pub fn install(makers: &[fn() -> Box<dyn Plugin>], index: u32) -> *const PluginTable {
    let count = built(makers, quiet_panics);
    usize::try_from(index).ok().filter(|&index| index < count).map_or(std::ptr::null(), |index| &TABLES[index])
}

/// The tables of a plugin library linked into the host's own executable (a static build, which
/// cannot load libraries), in the library's order: what [`ENTRY_AT_SYMBOL`] gives a host that
/// loads it.
pub struct Linked {
    pub tables: Vec<&'static PluginTable>,
}

/// Called by `export_plugins!`'s `linked_plugins`: builds the library's plugins once and returns
/// their tables. The host's panic hook stays: it is the host's process.
#[doc(hidden)]
pub fn linked(makers: &[fn() -> Box<dyn Plugin>]) -> Linked {
    let count = built(makers, || ());
    Linked { tables: TABLES[..count].iter().collect() }
}

/// Builds the plugins of `makers` the first time it is called, after `first`; how many there are.
fn built(makers: &[fn() -> Box<dyn Plugin>], first: impl FnOnce()) -> usize {
    let plugins = PLUGINS.get_or_init(|| {
        first();
        let built = |make: &fn() -> Box<dyn Plugin>| {
            catch_unwind(*make).map_err(|p| format!("plugin constructor panicked: {}", panic_text(&*p)))
        };
        makers.iter().take(MAX_PLUGINS).map(built).collect()
    });
    plugins.len()
}

thread_local! {
    /// Where the last panic on this thread happened, for the error value that reports it.
    static PANIC_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Every panic in a plugin is caught and reported in the answer; printing it on the host's stderr
/// too (an MCP client's log) would say it twice. The hook keeps its location for the report. A
/// plugin library links its own copy of std, so this hook is the library's alone.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        PANIC_AT.with(|slot| *slot.borrow_mut() = at);
    }));
}

fn plugin(index: usize) -> Result<&'static dyn Plugin, String> {
    match PLUGINS.get().and_then(|plugins| plugins.get(index)) {
        Some(Ok(plugin)) => Ok(plugin.as_ref()),
        Some(Err(message)) => Err(message.clone()),
        None => Err("plugin used before its entry symbol was called".to_string()),
    }
}

/// The panic's message, and where it happened when the hook saw it.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    };
    match PANIC_AT.with(|slot| slot.borrow_mut().take()) {
        Some(at) => format!("{message} (at {at})"),
        None => message,
    }
}

fn outcome(result: Result<Vec<u8>, String>) -> RawOutcome {
    match result {
        Ok(bytes) => RawOutcome { status: STATUS_OK, buf: RawBuf::from_vec(bytes) },
        Err(message) => RawOutcome { status: STATUS_ERROR, buf: RawBuf::from_vec(message.into_bytes()) },
    }
}

/// Runs `f`, turning a panic into an error value.
fn guarded(what: &str, f: impl FnOnce() -> Result<Vec<u8>, String>) -> RawOutcome {
    let result =
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(format!("{what} panicked: {}", panic_text(&*p))));
    outcome(result)
}

fn json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, String> {
    serde_json::to_vec(value).map_err(|e| format!("could not encode JSON: {e}"))
}

fn parse_json<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8], what: &str) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("host sent an invalid {what}: {e}"))
}

unsafe extern "C" fn ffi_manifest<const N: usize>() -> RawOutcome {
    guarded("manifest", || json(&plugin(N)?.manifest()))
}

unsafe extern "C" fn ffi_plan<const N: usize>(request: RawSlice) -> RawOutcome {
    // SAFETY: the host lends the request for the duration of this call.
    let bytes = unsafe { request.as_bytes() };
    guarded("plan", || {
        let request: PlanRequest = parse_json(bytes, "plan request")?;
        json(&plugin(N)?.plan(&request)?)
    })
}

/// What a parser handle points to. The parser stays here until `parser_free`, whatever happened
/// to it, so that it is dropped exactly once and always inside `catch_unwind`.
struct ParserSlot {
    parser: Box<dyn Parser>,
    failure: Option<String>,
    finished: bool,
}

/// # Safety
/// `parser` is null or a live handle from `parser_new`, used from one thread at a time.
unsafe fn slot<'a>(parser: *mut c_void) -> Option<&'a mut ParserSlot> {
    // SAFETY: guaranteed by the caller.
    unsafe { parser.cast::<ParserSlot>().as_mut() }
}

unsafe extern "C" fn ffi_parser_new<const N: usize>(context: RawSlice, out: *mut *mut c_void) -> RawOutcome {
    // SAFETY: the host lends the context for the duration of this call.
    let bytes = unsafe { context.as_bytes() };
    // SAFETY: the host passes a valid out-pointer or null.
    unsafe {
        new_parser("parser_new", out, || {
            let context: ParseContext = parse_json(bytes, "parse context")?;
            Ok(plugin(N)?.parser(&context))
        })
    }
}

unsafe extern "C" fn ffi_format_parser_new<const N: usize>(
    format: RawSlice,
    context: RawSlice,
    out: *mut *mut c_void,
) -> RawOutcome {
    // SAFETY: the host lends both for the duration of this call.
    let (format, bytes) = unsafe { (format.as_bytes(), context.as_bytes()) };
    // SAFETY: the host passes a valid out-pointer or null.
    unsafe {
        new_parser("format_parser_new", out, || {
            let format = std::str::from_utf8(format).map_err(|_| "host sent a format name that is not UTF-8")?;
            let context: ParseContext = parse_json(bytes, "parse context")?;
            plugin(N)?
                .format_parser(format, &context)
                .ok_or_else(|| format!("this plugin exports no format `{format}`"))
        })
    }
}

/// Makes a parser with `make` and puts its handle in `*out` (null when it failed).
///
/// # Safety
/// `out` is null or valid for one write.
unsafe fn new_parser(
    what: &str,
    out: *mut *mut c_void,
    make: impl FnOnce() -> Result<Box<dyn Parser>, String>,
) -> RawOutcome {
    let mut handle: *mut c_void = std::ptr::null_mut();
    let result = guarded(what, || {
        let parser = make()?;
        handle = Box::into_raw(Box::new(ParserSlot { parser, failure: None, finished: false })).cast();
        Ok(Vec::new())
    });
    if !out.is_null() {
        // SAFETY: guaranteed by the caller.
        unsafe { *out = handle };
    }
    result
}

unsafe extern "C" fn ffi_parser_feed(parser: *mut c_void, lines: *const RawLine, count: usize) -> u32 {
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else { return STATUS_ERROR };
    if slot.failure.is_some() || slot.finished {
        return STATUS_ERROR;
    }
    if count == 0 {
        return STATUS_OK;
    }
    if lines.is_null() {
        slot.failure = Some("the host sent a batch of lines with no address".to_string());
        return STATUS_ERROR;
    }
    // SAFETY: the host lends `count` lines, and the bytes each points to, for this call.
    let lines = unsafe { std::slice::from_raw_parts(lines, count) };
    let parser = &mut *slot.parser;
    let mut at = 0;
    // One `catch_unwind` for the batch, not one per line: a panic stops the feeding, and is
    // reported with the number of the line being fed.
    let fed = catch_unwind(AssertUnwindSafe(|| {
        for line in lines {
            at = line.number;
            // SAFETY: as above.
            let bytes = unsafe { line.bytes.as_bytes() };
            parser.feed(Line::new(stream_of(line.stream), line.number, bytes));
        }
    }));
    match fed {
        Ok(()) => STATUS_OK,
        Err(p) => {
            slot.failure = Some(format!("parser panicked at log line {at}: {}", panic_text(&*p)));
            STATUS_ERROR
        }
    }
}

/// The stream a tag names; an unknown tag reads as stdout.
fn stream_of(tag: u32) -> Stream {
    if tag == STREAM_STDERR { Stream::Stderr } else { Stream::Stdout }
}

unsafe extern "C" fn ffi_parser_finish(parser: *mut c_void, end: RawSlice) -> RawOutcome {
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else {
        return outcome(Err("parser_finish got a null parser".to_string()));
    };
    // SAFETY: the host lends the end record for the duration of this call.
    let bytes = unsafe { end.as_bytes() };
    guarded("parser finish", || {
        if let Some(failure) = slot.failure.take() {
            return Err(failure);
        }
        if std::mem::replace(&mut slot.finished, true) {
            return Err("parser finished twice".to_string());
        }
        let end: RunEnd = parse_json(bytes, "run end")?;
        json(&slot.parser.finish(&end))
    })
}

unsafe extern "C" fn ffi_parser_progress(parser: *mut c_void) -> RawOutcome {
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else {
        return outcome(Err("parser_progress got a null parser".to_string()));
    };
    guarded("parser progress", || match &slot.failure {
        None if !slot.finished => json(&slot.parser.progress()),
        None => Err("parser already finished".to_string()),
        Some(failure) => Err(failure.clone()),
    })
}

unsafe extern "C" fn ffi_parser_free(parser: *mut c_void) {
    if parser.is_null() {
        return;
    }
    // SAFETY: the handle came from Box::into_raw in parser_new and is freed once.
    let slot = unsafe { Box::from_raw(parser.cast::<ParserSlot>()) };
    // A parser's Drop may panic too; it must not unwind into the host.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(slot)));
}

unsafe extern "C" fn ffi_buffer_free(buf: RawBuf) {
    if buf.ptr.is_null() {
        return;
    }
    // SAFETY: the buffer came from RawBuf::from_vec in this library and is freed once.
    drop(unsafe { Vec::from_raw_parts(buf.ptr, buf.len, buf.cap) });
}

/// Exports a [`Plugin`] as a buildvise plugin library. The type must implement `Default`.
///
/// ```ignore
/// #[derive(Default)]
/// struct MyPlugin;
/// impl buildvise_plugin_api::Plugin for MyPlugin { /* … */ }
/// buildvise_plugin_api::export_plugin!(MyPlugin);
/// ```
///
/// A plugin must unwind on panic: with `panic = "abort"` one bad line would take the host down,
/// so the macro refuses to compile under it.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        $crate::export_plugins!($plugin);
    };
}

/// Exports several [`Plugin`]s from one library (at most [`MAX_PLUGINS`]), in the order named:
/// what a library holding a family of plugins uses, so that they share one copy of std and of
/// the crates they all use. Each type must implement `Default`. A host of ABI 1.0 loads only
/// the first.
///
/// ```ignore
/// buildvise_plugin_api::export_plugins!(CargoPlugin, NpmPlugin);
/// ```
#[macro_export]
macro_rules! export_plugins {
    ($($plugin:ty),+ $(,)?) => {
        #[cfg(panic = "abort")]
        compile_error!(
            "buildvise plugins must be built with panic = \"unwind\": the host catches a plugin's panics, and \
             with panic = \"abort\" a single panic would end the host process; remove `panic = \"abort\"` from \
             the profile that builds this plugin"
        );

        const _: () = assert!(
            [$(stringify!($plugin)),+].len() <= $crate::abi::MAX_PLUGINS,
            "a library exports at most buildvise_plugin_api::abi::MAX_PLUGINS plugins"
        );

        /// The plugins' ABI version and table size, read by the host before it calls anything.
        #[unsafe(no_mangle)]
        #[allow(non_upper_case_globals)]
        pub static buildvise_plugin_abi: $crate::abi::AbiHeader = $crate::abi::AbiHeader::CURRENT;

        /// The table of the plugin at `index`, null past the last.
        #[unsafe(no_mangle)]
        pub extern "C" fn buildvise_plugin_entry_at(index: u32) -> *const $crate::abi::PluginTable {
            $crate::abi::install(&[$($crate::abi::make::<$plugin>),+], index)
        }

        /// The first plugin's table, for a host of ABI 1.0.
        #[unsafe(no_mangle)]
        pub extern "C" fn buildvise_plugin_entry() -> *const $crate::abi::PluginTable {
            buildvise_plugin_entry_at(0)
        }

        /// These plugins, for a host that links this library into its executable rather than
        /// loading it.
        pub fn linked_plugins() -> $crate::abi::Linked {
            $crate::abi::linked(&[$($crate::abi::make::<$plugin>),+])
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommandPlan, Diagnostic, Manifest, ParseResult};

    /// A plugin whose parser reports each line it was fed as a diagnostic: `stream number text`.
    #[derive(Default)]
    struct Echo;

    struct EchoParser(Vec<Diagnostic>);

    impl Plugin for Echo {
        fn manifest(&self) -> Manifest {
            Manifest::new("echo", "1", Vec::new())
        }
        fn plan(&self, _: &PlanRequest) -> Result<CommandPlan, String> {
            Err("no tools".into())
        }
        fn parser(&self, _: &ParseContext) -> Box<dyn Parser> {
            Box::new(EchoParser(Vec::new()))
        }
    }

    impl Parser for EchoParser {
        fn feed(&mut self, line: Line<'_>) {
            let stream = if line.stream == Stream::Stderr { "err" } else { "out" };
            assert!(line.bytes != b"boom", "a line that ends parsers");
            self.0.push(Diagnostic::error(format!("{stream} {} {}", line.number, line.text())));
        }
        fn finish(&mut self, _: &RunEnd) -> ParseResult {
            ParseResult::new(std::mem::take(&mut self.0))
        }
    }

    /// A second plugin in the same library, known by its manifest alone.
    #[derive(Default)]
    struct Second;

    impl Plugin for Second {
        fn manifest(&self) -> Manifest {
            Manifest::new("second", "2", Vec::new())
        }
        fn plan(&self, _: &PlanRequest) -> Result<CommandPlan, String> {
            Err("no tools either".into())
        }
        fn parser(&self, _: &ParseContext) -> Box<dyn Parser> {
            Box::new(EchoParser(Vec::new()))
        }
    }

    /// The library these tests make: the first call to `install` builds it for the process.
    const MAKERS: &[fn() -> Box<dyn Plugin>] = &[make::<Echo>, make::<Second>];

    fn line(stream: u32, number: u64, bytes: &'static [u8]) -> RawLine {
        RawLine { stream, number, bytes: RawSlice::new(bytes) }
    }

    /// Feeds each batch to a new parser, in order; the status of each feed, and what the parser
    /// reports or the error it failed with.
    fn feed(batches: &[&[RawLine]]) -> (Vec<u32>, Result<Vec<String>, String>) {
        let table = install(MAKERS, 0);
        // SAFETY: the table is this crate's own; the handle is used once and freed; the lines
        // and their bytes live across the calls that are lent them.
        unsafe {
            let table = &*table;
            let mut parser = std::ptr::null_mut();
            let made = (table.parser_new)(RawSlice::new(br#"{"tool": "echo.run", "cwd": "/p"}"#), &mut parser);
            assert_eq!(made.status, STATUS_OK);
            (table.buffer_free)(made.buf);
            let statuses =
                batches.iter().map(|lines| (table.parser_feed)(parser, lines.as_ptr(), lines.len())).collect();
            let end = (table.parser_finish)(parser, RawSlice::new(b"{}"));
            let text = String::from_utf8_lossy(end.buf.as_bytes()).into_owned();
            let ok = end.status == STATUS_OK;
            (table.buffer_free)(end.buf);
            (table.parser_free)(parser);
            let result = if ok {
                let result: ParseResult = serde_json::from_str(&text).expect("a parse result");
                Ok(result.diagnostics.into_iter().map(|d| d.message).collect())
            } else {
                Err(text)
            };
            (statuses, result)
        }
    }

    #[test]
    fn a_batchs_lines_arrive_in_order_with_their_streams_and_numbers() {
        let first = [line(STREAM_STDOUT, 7, b"one"), line(STREAM_STDERR, 8, b"two")];
        let second = [line(STREAM_STDOUT, 20, b"\x1bfour"), line(STREAM_STDOUT, 21, b"")];
        let (statuses, lines) = feed(&[&first, &[], &second]);
        assert_eq!(statuses, [STATUS_OK; 3]);
        assert_eq!(lines.unwrap(), ["out 7 one", "err 8 two", "out 20 \u{1b}four", "out 21 "]);
    }

    #[test]
    fn a_parser_that_panics_is_reported_with_the_line_it_was_fed_and_takes_no_more() {
        let batch = [line(STREAM_STDOUT, 41, b"ok"), line(STREAM_STDOUT, 42, b"boom"), line(STREAM_STDOUT, 43, b"x")];
        let (statuses, result) = feed(&[&batch, &[line(STREAM_STDOUT, 44, b"later")]]);
        assert_eq!(statuses, [STATUS_ERROR, STATUS_ERROR]);
        let error = result.expect_err("the parser failed");
        assert!(error.contains("parser panicked at log line 42: a line that ends parsers"), "{error}");
    }

    #[test]
    fn the_header_says_the_table_of_1_0_is_nine_functions() {
        let pointer = size_of::<*const u8>();
        assert_eq!(TABLE_SIZE_1_0 as usize, 9 * pointer);
        assert_eq!(AbiHeader::CURRENT, AbiHeader { abi_version: 1, abi_minor: 1, table_size: TABLE_SIZE_1_0 });
    }

    #[test]
    fn each_plugin_of_a_library_answers_from_its_own_table_and_none_is_past_the_last() {
        let name = |index: u32| {
            let table = install(MAKERS, index);
            // SAFETY: a non-null table is one of this crate's statics; the buffer is freed once.
            unsafe {
                let table = table.as_ref()?;
                let outcome = (table.manifest)();
                let manifest: Manifest = serde_json::from_slice(outcome.buf.as_bytes()).expect("a manifest");
                (table.buffer_free)(outcome.buf);
                Some(manifest.name)
            }
        };
        assert_eq!(
            [name(0), name(1), name(2), name(u32::MAX)],
            [Some("echo".into()), Some("second".into()), None, None]
        );
        // Linked into the host's executable, the library gives the same tables.
        let loaded: Vec<*const PluginTable> = (0..2).map(|i| install(MAKERS, i)).collect();
        let linked: Vec<*const PluginTable> = linked(MAKERS).tables.into_iter().map(std::ptr::from_ref).collect();
        assert_eq!(linked, loaded);
    }
}
