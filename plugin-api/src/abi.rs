//! ABI v1: the `#[repr(C)]` table a plugin library exports, and the glue that implements it over
//! the safe [`Plugin`] trait.
//!
//! A library exports two symbols. [`HEADER_SYMBOL`] is a static [`AbiHeader`]: the ABI version and
//! table size, readable without calling into the plugin. [`ENTRY_SYMBOL`] is a function returning
//! a pointer to the static [`PluginTableV1`]. Structured values cross as UTF-8 JSON; a buffer is
//! freed by the side that allocated it ([`PluginTableV1::buffer_free`] for buffers the plugin
//! returns). Output lines cross as raw byte slices, the hot path. Every function catches panics: a
//! panic becomes an error value and the host process lives on.
//!
//! **How the table grows.** Within ABI version 1, functions are only ever appended, and every
//! function added after 1.0 is an optional slot (`Option<fn>`): a host uses a slot only when the
//! table's `struct_size` covers it and it is not null. So a plugin built against an older crate
//! loads in a newer host (which falls back to what 1.0 offers), and a newer plugin loads in an
//! older host (which reads the prefix it knows). A change that cannot be made this way is a new
//! `abi_version`, and the host refuses versions it does not speak.
//!
//! | minor | adds |
//! |---|---|
//! | 1.0 | `manifest` … `buffer_free` (required) |
//! | 1.1 | `parser_feed_batch` (optional) |
//! | 1.2 | `format_parser_new` (optional), and the manifest's `formats` |
//! | 1.3 | `parser_feed_block` (optional) |
//!
//! Plugin authors never touch this module: `export_plugin!(MyPlugin)` does it all.

use crate::plugin::{Parser, Plugin};
use crate::types::{Line, ParseContext, PlanRequest, RunEnd, Stream};
use std::any::Any;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// The version of the table layout below. A host refuses any other.
pub const ABI_VERSION: u32 = 1;

/// The newest minor of [`ABI_VERSION`] this crate speaks (the last row of the table above).
/// `buildvise --version` names it: a plugin from a later minor loads, but its newer slots go unused.
pub const ABI_MINOR: u32 = 3;

/// The exported function's name, NUL-terminated for `dlsym`.
pub const ENTRY_SYMBOL: &[u8] = b"buildvise_plugin_v1\0";

/// The exported [`AbiHeader`] static's name, NUL-terminated for `dlsym`. Libraries built before it
/// existed lack it; the host then reads the same two numbers from the table.
pub const HEADER_SYMBOL: &[u8] = b"buildvise_plugin_abi\0";

/// The signature of [`ENTRY_SYMBOL`].
pub type EntryFn = unsafe extern "C" fn() -> *const PluginTableV1;

/// The table size of ABI 1.0: the header and the eight functions every plugin has. A host needs
/// at least this much.
pub const TABLE_SIZE_1_0: u32 = std::mem::offset_of!(PluginTableV1, parser_feed_batch) as u32;

/// What a host can learn of a library before running any of its code.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbiHeader {
    pub abi_version: u32,
    /// `struct_size` of the table the entry function returns.
    pub table_size: u32,
}

impl AbiHeader {
    /// The header of a library built against this crate.
    pub const CURRENT: AbiHeader =
        AbiHeader { abi_version: ABI_VERSION, table_size: size_of::<PluginTableV1>() as u32 };
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

/// One line of a batch for `parser_feed_batch`.
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

/// One line of a [`RawBlock`]: where it starts in the block's bytes, and its length.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawSpan {
    pub start: u32,
    pub len: u32,
}

/// Lines of a [`RawBlock`] printed on one stream and numbered one after another: the spans from
/// `at` to the next run's `at` (the last run's, to the end), the first of them numbered `first`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRun {
    /// [`STREAM_STDOUT`] or [`STREAM_STDERR`].
    pub stream: u32,
    pub first: u64,
    pub at: u64,
}

impl RawRun {
    /// Where each of `runs` ends among `span_count` spans: at the next run's first span, the
    /// last at the end. None when the runs do not start at the first span and go forward within
    /// the spans (no spans and no runs is an empty block).
    pub fn ends(runs: &[RawRun], span_count: usize) -> Option<impl Iterator<Item = usize> + Clone + '_> {
        let ends = runs.iter().skip(1).map(|run| run.at).chain([span_count as u64]);
        let in_order = runs.first().map_or(span_count == 0, |first| first.at == 0)
            && runs.iter().zip(ends.clone()).all(|(run, end)| run.at <= end);
        in_order.then(|| ends.map(|end| end as usize))
    }
}

/// Lines for `parser_feed_block`, as the host gathers them: their bytes end to end, a span for
/// each, and the runs that give their streams and numbers. Eight bytes a line cross, where a
/// batch of [`RawLine`]s is 32 the host must write first.
#[repr(C)]
pub struct RawBlock {
    pub bytes: RawSlice,
    pub spans: *const RawSpan,
    pub span_count: usize,
    /// In order; the first at span 0.
    pub runs: *const RawRun,
    pub run_count: usize,
}

/// `status` 0: `buf` holds the JSON value; 1: `buf` holds a UTF-8 error message.
#[repr(C)]
pub struct RawOutcome {
    pub status: u32,
    pub buf: RawBuf,
}

pub const STATUS_OK: u32 = 0;
pub const STATUS_ERROR: u32 = 1;

/// Stream tags for `parser_feed`.
pub const STREAM_STDOUT: u32 = 1;
pub const STREAM_STDERR: u32 = 2;

pub type FeedBatchFn = unsafe extern "C" fn(parser: *mut c_void, lines: *const RawLine, count: usize) -> u32;

/// The 1.3 slot: feeds a block's lines in order, as `parser_feed` would one by one. Returns as
/// `parser_feed` does; a block whose spans or runs do not fit it fails the parser.
pub type FeedBlockFn = unsafe extern "C" fn(parser: *mut c_void, block: *const RawBlock) -> u32;

/// The 1.2 slot: format name (UTF-8) and JSON [`ParseContext`] → a parser handle in `*out`, as
/// `parser_new` gives one.
pub type FormatParserNewFn =
    unsafe extern "C" fn(format: RawSlice, context: RawSlice, out: *mut *mut c_void) -> RawOutcome;

/// The function table of ABI v1. New functions are only ever appended, as optional slots, and
/// `struct_size` tells the host how many there are.
#[repr(C)]
pub struct PluginTableV1 {
    pub abi_version: u32,
    pub struct_size: u32,
    /// → JSON [`crate::Manifest`].
    pub manifest: unsafe extern "C" fn() -> RawOutcome,
    /// JSON [`PlanRequest`] → JSON [`crate::CommandPlan`], or an error message.
    pub plan: unsafe extern "C" fn(request: RawSlice) -> RawOutcome,
    /// JSON [`ParseContext`] → a parser handle in `*out` (status 0, empty buffer).
    pub parser_new: unsafe extern "C" fn(context: RawSlice, out: *mut *mut c_void) -> RawOutcome,
    /// Feeds one line. Returns 0, or 1 once the parser has failed (later lines are ignored and
    /// `parser_finish` reports the failure).
    pub parser_feed: unsafe extern "C" fn(parser: *mut c_void, stream: u32, number: u64, line: RawSlice) -> u32,
    /// JSON [`RunEnd`] → JSON [`crate::ParseResult`]. The handle stays valid until `parser_free`.
    pub parser_finish: unsafe extern "C" fn(parser: *mut c_void, end: RawSlice) -> RawOutcome,
    pub parser_free: unsafe extern "C" fn(parser: *mut c_void),
    /// → JSON [`crate::Progress`] of a parser still being fed.
    pub parser_progress: unsafe extern "C" fn(parser: *mut c_void) -> RawOutcome,
    pub buffer_free: unsafe extern "C" fn(buf: RawBuf),
    /// 1.1: feeds `count` lines in one call, as `parser_feed` would one by one. Returns as
    /// `parser_feed` does.
    pub parser_feed_batch: Option<FeedBatchFn>,
    /// 1.2: a parser of one exported format. Its handle is used like `parser_new`'s.
    pub format_parser_new: Option<FormatParserNewFn>,
    /// 1.3: feeds a [`RawBlock`]'s lines in one call.
    pub parser_feed_block: Option<FeedBlockFn>,
}

static PLUGIN: OnceLock<Result<Box<dyn Plugin>, String>> = OnceLock::new();

static TABLE: PluginTableV1 = PluginTableV1 {
    abi_version: ABI_VERSION,
    struct_size: size_of::<PluginTableV1>() as u32,
    manifest: ffi_manifest,
    plan: ffi_plan,
    parser_new: ffi_parser_new,
    parser_feed: ffi_parser_feed,
    parser_finish: ffi_parser_finish,
    parser_free: ffi_parser_free,
    parser_progress: ffi_parser_progress,
    buffer_free: ffi_buffer_free,
    parser_feed_batch: Some(ffi_parser_feed_batch),
    format_parser_new: Some(ffi_format_parser_new),
    parser_feed_block: Some(ffi_parser_feed_block),
};

/// Called by `export_plugin!`'s entry symbol: builds the plugin once and returns the table.
#[doc(hidden)]
pub fn install(make: fn() -> Box<dyn Plugin>) -> *const PluginTableV1 {
    PLUGIN.get_or_init(|| {
        quiet_panics();
        catch_unwind(make).map_err(|p| format!("plugin constructor panicked: {}", panic_text(&*p)))
    });
    &TABLE
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

fn plugin() -> Result<&'static dyn Plugin, String> {
    match PLUGIN.get() {
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

unsafe extern "C" fn ffi_manifest() -> RawOutcome {
    guarded("manifest", || json(&plugin()?.manifest()))
}

unsafe extern "C" fn ffi_plan(request: RawSlice) -> RawOutcome {
    // SAFETY: the host lends the request for the duration of this call.
    let bytes = unsafe { request.as_bytes() };
    guarded("plan", || {
        let request: PlanRequest = parse_json(bytes, "plan request")?;
        json(&plugin()?.plan(&request)?)
    })
}

/// What a parser handle points to. The parser stays here until `parser_free`, whatever happened
/// to it, so that it is dropped exactly once and always inside `catch_unwind`.
struct ParserSlot {
    parser: Box<dyn Parser>,
    failure: Option<String>,
    finished: bool,
}

impl ParserSlot {
    /// Feeds `lines` (stream, number, bytes) in order.
    fn feed<'a>(&mut self, lines: impl IntoIterator<Item = (u32, u64, &'a [u8])>) -> u32 {
        self.feeding(|parser, at| {
            for (stream, number, bytes) in lines {
                *at = number;
                parser.feed(Line::new(stream_of(stream), number, bytes));
            }
        })
    }

    /// Runs `feed`, which gives the parser lines and notes the number of each in its second
    /// argument, inside one `catch_unwind`: one per line cost a tenth of what the host spends per
    /// line. A panic stops the feeding and is reported with the number of the line being fed.
    fn feeding(&mut self, feed: impl FnOnce(&mut dyn Parser, &mut u64)) -> u32 {
        if self.failure.is_some() || self.finished {
            return STATUS_ERROR;
        }
        let parser = &mut *self.parser;
        let mut at = 0;
        let fed = catch_unwind(AssertUnwindSafe(|| feed(parser, &mut at)));
        match fed {
            Ok(()) => STATUS_OK,
            Err(p) => {
                self.failure = Some(format!("parser panicked at log line {at}: {}", panic_text(&*p)));
                STATUS_ERROR
            }
        }
    }

    /// Fails the parser for what the host sent, unless it failed already.
    fn refuse(&mut self, why: &str) -> u32 {
        self.failure.get_or_insert_with(|| why.to_string());
        STATUS_ERROR
    }
}

/// # Safety
/// `parser` is null or a live handle from `parser_new`, used from one thread at a time.
unsafe fn slot<'a>(parser: *mut c_void) -> Option<&'a mut ParserSlot> {
    // SAFETY: guaranteed by the caller.
    unsafe { parser.cast::<ParserSlot>().as_mut() }
}

unsafe extern "C" fn ffi_parser_new(context: RawSlice, out: *mut *mut c_void) -> RawOutcome {
    // SAFETY: the host lends the context for the duration of this call.
    let bytes = unsafe { context.as_bytes() };
    // SAFETY: the host passes a valid out-pointer or null.
    unsafe {
        new_parser("parser_new", out, || {
            let context: ParseContext = parse_json(bytes, "parse context")?;
            Ok(plugin()?.parser(&context))
        })
    }
}

unsafe extern "C" fn ffi_format_parser_new(format: RawSlice, context: RawSlice, out: *mut *mut c_void) -> RawOutcome {
    // SAFETY: the host lends both for the duration of this call.
    let (format, bytes) = unsafe { (format.as_bytes(), context.as_bytes()) };
    // SAFETY: the host passes a valid out-pointer or null.
    unsafe {
        new_parser("format_parser_new", out, || {
            let format = std::str::from_utf8(format).map_err(|_| "host sent a format name that is not UTF-8")?;
            let context: ParseContext = parse_json(bytes, "parse context")?;
            plugin()?.format_parser(format, &context).ok_or_else(|| format!("this plugin exports no format `{format}`"))
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

unsafe extern "C" fn ffi_parser_feed(parser: *mut c_void, stream: u32, number: u64, line: RawSlice) -> u32 {
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else { return STATUS_ERROR };
    // SAFETY: the host lends the line for the duration of this call.
    slot.feed([(stream, number, unsafe { line.as_bytes() })])
}

unsafe extern "C" fn ffi_parser_feed_batch(parser: *mut c_void, lines: *const RawLine, count: usize) -> u32 {
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else { return STATUS_ERROR };
    if count == 0 {
        return if slot.failure.is_some() { STATUS_ERROR } else { STATUS_OK };
    }
    if lines.is_null() {
        return STATUS_ERROR;
    }
    // SAFETY: the host lends `count` lines, and the bytes they point to, for this call.
    let lines = unsafe { std::slice::from_raw_parts(lines, count) };
    // SAFETY: as above.
    slot.feed(lines.iter().map(|line| (line.stream, line.number, unsafe { line.bytes.as_bytes() })))
}

unsafe extern "C" fn ffi_parser_feed_block(parser: *mut c_void, block: *const RawBlock) -> u32 {
    const OUTSIDE: &str = "the host sent a block whose spans or runs fall outside it";
    // SAFETY: the handle came from parser_new and has not been freed.
    let Some(slot) = (unsafe { slot(parser) }) else { return STATUS_ERROR };
    // SAFETY: the host lends the block, its tables and its bytes for this call.
    let Some(block) = (unsafe { block.as_ref() }) else { return STATUS_ERROR };
    // SAFETY: as above.
    let (bytes, spans, runs) =
        unsafe { (block.bytes.as_bytes(), table(block.spans, block.span_count), table(block.runs, block.run_count)) };
    let Some(ends) = RawRun::ends(runs, spans.len()) else { return slot.refuse(OUTSIDE) };
    let mut outside = false;
    // Loops of its own rather than [`ParserSlot::feed`] over a chain of iterators: on the bench's
    // npm flood those took 3.4% of the run's samples, these 2%.
    let status = slot.feeding(|parser, at| {
        for (run, end) in runs.iter().zip(ends) {
            let stream = stream_of(run.stream);
            for (number, span) in (run.first..).zip(&spans[run.at as usize..end]) {
                let Some(line) = bytes.get(span.start as usize..span.start as usize + span.len as usize) else {
                    outside = true;
                    return;
                };
                *at = number;
                parser.feed(Line::new(stream, number, line));
            }
        }
    });
    if outside { slot.refuse(OUTSIDE) } else { status }
}

/// The stream a tag names; an unknown tag reads as stdout.
fn stream_of(tag: u32) -> Stream {
    if tag == STREAM_STDERR { Stream::Stderr } else { Stream::Stdout }
}

/// The `count` entries at `start`.
///
/// # Safety
/// `start` points at `count` live entries, or `count` is 0.
unsafe fn table<'a, T>(start: *const T, count: usize) -> &'a [T] {
    if count == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(start, count) }
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
        #[cfg(panic = "abort")]
        compile_error!(
            "buildvise plugins must be built with panic = \"unwind\": the host catches a plugin's panics, and \
             with panic = \"abort\" a single panic would end the host process; remove `panic = \"abort\"` from \
             the profile that builds this plugin"
        );

        /// The plugin's ABI version and table size, readable without running its code.
        #[unsafe(no_mangle)]
        #[allow(non_upper_case_globals)]
        pub static buildvise_plugin_abi: $crate::abi::AbiHeader = $crate::abi::AbiHeader::CURRENT;

        /// The buildvise plugin entry point (ABI v1).
        #[unsafe(no_mangle)]
        pub extern "C" fn buildvise_plugin_v1() -> *const $crate::abi::PluginTableV1 {
            fn make() -> ::std::boxed::Box<dyn $crate::Plugin> {
                ::std::boxed::Box::new(<$plugin as ::std::default::Default>::default())
            }
            $crate::abi::install(make)
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

    /// Feeds `spans` and `runs` over `bytes` to a new parser as one block; the status, and what
    /// the parser reports or the error it failed with.
    fn feed_block(bytes: &[u8], spans: &[RawSpan], runs: &[RawRun]) -> (u32, Result<Vec<String>, String>) {
        let table = install(|| Box::new(Echo));
        let block = RawBlock {
            bytes: RawSlice::new(bytes),
            spans: spans.as_ptr(),
            span_count: spans.len(),
            runs: runs.as_ptr(),
            run_count: runs.len(),
        };
        // SAFETY: the table is this crate's own; the handle is used once and freed; the block
        // and its tables live across the calls that are lent them.
        unsafe {
            let table = &*table;
            let mut parser = std::ptr::null_mut();
            let made = (table.parser_new)(RawSlice::new(br#"{"tool": "echo.run", "cwd": "/p"}"#), &mut parser);
            assert_eq!(made.status, STATUS_OK);
            (table.buffer_free)(made.buf);
            let status = (table.parser_feed_block.expect("the 1.3 slot"))(parser, &block);
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
            (status, result)
        }
    }

    fn run(stream: u32, first: u64, at: u64) -> RawRun {
        RawRun { stream, first, at }
    }

    #[test]
    fn a_blocks_lines_arrive_in_order_with_their_runs_streams_and_numbers() {
        let bytes = b"onetwothree\x1bfour";
        let spans = [
            RawSpan { start: 0, len: 3 },
            RawSpan { start: 3, len: 3 },
            RawSpan { start: 6, len: 5 },
            RawSpan { start: 11, len: 5 },
        ];
        let runs = [run(STREAM_STDOUT, 7, 0), run(STREAM_STDERR, 9, 2), run(STREAM_STDOUT, 20, 3)];
        let (status, lines) = feed_block(bytes, &spans, &runs);
        assert_eq!(status, STATUS_OK);
        assert_eq!(lines.unwrap(), ["out 7 one", "out 8 two", "err 9 three", "out 20 \u{1b}four"]);
        assert_eq!(feed_block(b"", &[], &[]), (STATUS_OK, Ok(Vec::new())), "an empty block is no lines");
    }

    #[test]
    fn a_parser_that_panics_on_a_blocks_line_is_reported_with_that_lines_number() {
        let spans = [RawSpan { start: 0, len: 2 }, RawSpan { start: 2, len: 4 }];
        let (status, result) = feed_block(b"okboom", &spans, &[run(STREAM_STDOUT, 41, 0)]);
        assert_eq!(status, STATUS_ERROR);
        let error = result.expect_err("the parser failed");
        assert!(error.contains("parser panicked at log line 42: a line that ends parsers"), "{error}");
    }

    #[test]
    fn a_block_that_does_not_fit_its_spans_or_runs_fails_the_parser_and_says_why() {
        let spans = [RawSpan { start: 0, len: 2 }, RawSpan { start: 2, len: 3 }];
        let cases: [(&[RawSpan], &[RawRun]); 5] = [
            (&spans[..], &[run(STREAM_STDOUT, 1, 1)]),
            (&spans[..], &[run(STREAM_STDOUT, 1, 0), run(STREAM_STDOUT, 5, 3)]),
            (&spans[..], &[run(STREAM_STDOUT, 1, 0), run(STREAM_STDERR, 5, 2), run(STREAM_STDOUT, 9, 1)]),
            (&spans[..], &[]),
            (&[RawSpan { start: 3, len: 2 }], &[run(STREAM_STDOUT, 1, 0)]),
        ];
        for (spans, runs) in cases {
            let (status, result) = feed_block(b"abcd", spans, runs);
            assert_eq!(status, STATUS_ERROR, "{spans:?} {runs:?}");
            assert!(result.is_err_and(|e| e.contains("fall outside it")), "{spans:?} {runs:?}");
        }
    }

    #[test]
    fn table_sizes_grow_by_appending() {
        // The header, then eight pointers.
        let pointer = size_of::<*const u8>();
        assert_eq!(TABLE_SIZE_1_0 as usize, 8 + 8 * pointer);
        // 1.1, 1.2 and 1.3 each appended one slot.
        assert_eq!(AbiHeader::CURRENT.table_size as usize, TABLE_SIZE_1_0 as usize + 3 * pointer);
        assert_eq!(std::mem::offset_of!(PluginTableV1, format_parser_new), TABLE_SIZE_1_0 as usize + pointer);
        assert_eq!(std::mem::offset_of!(PluginTableV1, parser_feed_block), TABLE_SIZE_1_0 as usize + 2 * pointer);
        // An optional slot costs no more than a plain function pointer, and null means absent.
        assert_eq!(size_of::<Option<FeedBatchFn>>(), pointer);
        assert_eq!(size_of::<Option<FormatParserNewFn>>(), pointer);
        assert_eq!(size_of::<Option<FeedBlockFn>>(), pointer);
    }
}
