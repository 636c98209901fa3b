//! One loaded plugin library: the only place the host calls through the C ABI, and one of the
//! places in the host allowed `unsafe` (the others are `run::guard`, which forks, and
//! `run::lines::line_ends`, which compares 32 bytes at a time).
//!
//! Everything unsafe about plugins lives here: reading the ABI header, resolving the entry symbol,
//! copying the function table (only as far as the library says it reaches), and moving buffers
//! across. The rest of the host sees [`PluginLibrary`] and [`ParserHandle`].
#![allow(unsafe_code)]

use buildvise_plugin_api::abi::{
    self, AbiHeader, FeedBatchFn, FeedBlockFn, FormatParserNewFn, PluginTableV1, RawBlock, RawBuf, RawLine, RawOutcome,
    RawRun, RawSlice, RawSpan,
};
use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, ParseResult, PlanRequest, Progress, RunEnd, Stream};
use std::ffi::c_void;
use std::marker::PhantomData;
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
        "ABI version {found}, this buildvise speaks ABI {expected}: rebuild the plugin against a buildvise-plugin-api of ABI {expected}"
    )]
    AbiVersion { found: u32, expected: u32 },
    #[error("function table of {found} bytes, at least {expected} expected: rebuild the plugin")]
    TableSize { found: u32, expected: u32 },
    #[error("its manifest could not be read: {0}")]
    Manifest(String),
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

/// The functions of a loaded table, copied once. Optional slots are `None` when the library's
/// table does not reach them (built against an older plugin-api) or leaves them null.
#[derive(Clone, Copy)]
struct Table {
    plan: unsafe extern "C" fn(RawSlice) -> RawOutcome,
    parser_new: unsafe extern "C" fn(RawSlice, *mut *mut c_void) -> RawOutcome,
    parser_feed: unsafe extern "C" fn(*mut c_void, u32, u64, RawSlice) -> u32,
    parser_finish: unsafe extern "C" fn(*mut c_void, RawSlice) -> RawOutcome,
    parser_free: unsafe extern "C" fn(*mut c_void),
    parser_progress: unsafe extern "C" fn(*mut c_void) -> RawOutcome,
    buffer_free: unsafe extern "C" fn(RawBuf),
    parser_feed_batch: Option<FeedBatchFn>,
    format_parser_new: Option<FormatParserNewFn>,
    parser_feed_block: Option<FeedBlockFn>,
}

/// A loaded plugin. The library stays mapped for the life of the process (unloading Rust
/// libraries with thread-locals is not safe), so the copied function pointers stay valid.
pub struct PluginLibrary {
    pub path: PathBuf,
    pub manifest: Manifest,
    /// The size of the library's table: which optional functions of ABI 1.x it has.
    pub table_size: u32,
    table: Table,
}

impl PluginLibrary {
    pub fn load(path: &Path) -> Result<Arc<Self>, LoadError> {
        // SAFETY: loading runs the library's initialisers; plugin libraries are code the operator
        // installed (never a project's), the same trust as the buildvise binary itself.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::Open(e.to_string()))?;
        // The header static, when the library has it, is checked before any plugin code runs.
        // SAFETY: the symbol, when present, is a static `AbiHeader` (ABI v1 fixes its type).
        if let Ok(header) = unsafe { library.get::<*const AbiHeader>(abi::HEADER_SYMBOL) } {
            // SAFETY: the symbol's address points at the static, mapped while `library` lives.
            let header = unsafe { (*header).read_unaligned() };
            check_header(header.abi_version, header.table_size)?;
        }
        // SAFETY: the symbol's type is fixed by ABI v1.
        let entry = unsafe { library.get::<abi::EntryFn>(abi::ENTRY_SYMBOL) }.map_err(|_| LoadError::NoEntry)?;
        // SAFETY: calling the entry function is how a plugin is initialised; it catches panics.
        let table_ptr = unsafe { entry() };
        if table_ptr.is_null() {
            return Err(LoadError::NoEntry);
        }
        // Read the header fields before trusting any more of the table's layout.
        // SAFETY: every ABI version starts with these two u32 fields.
        let (version, size) = unsafe { ((*table_ptr).abi_version, (*table_ptr).struct_size) };
        check_header(version, size)?;
        // SAFETY: the table is at least 1.0-sized (checked above) and static in a library that is
        // never unloaded; fields past what `size` covers are never read.
        let table = unsafe { copy_table(table_ptr, size) };
        std::mem::forget(library);
        // SAFETY: `manifest` is a 1.0 field, present in every valid table.
        let manifest_fn = unsafe { std::ptr::addr_of!((*table_ptr).manifest).read() };
        // SAFETY: manifest takes no arguments and returns an owned buffer.
        let manifest_json = take(&table, unsafe { manifest_fn() }).map_err(LoadError::Manifest)?;
        let manifest: Manifest =
            serde_json::from_slice(&manifest_json).map_err(|e| LoadError::Manifest(e.to_string()))?;
        Ok(Arc::new(PluginLibrary { path: path.to_path_buf(), manifest, table_size: size, table }))
    }

    pub fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, PluginError> {
        let json = serde_json::to_vec(request).map_err(|e| self.bad_answer("a plan request", e))?;
        // SAFETY: the request buffer lives across the call; the result is an owned buffer.
        let bytes =
            take(&self.table, unsafe { (self.table.plan)(RawSlice::new(&json)) }).map_err(PluginError::Reported)?;
        serde_json::from_slice(&bytes).map_err(|e| self.bad_answer("a plan", e))
    }

    pub fn parser(self: &Arc<Self>, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        let json = serde_json::to_vec(context).map_err(|e| self.bad_answer("a parse context", e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: the context buffer lives across the call; `handle` is a valid out-pointer.
        take(&self.table, unsafe { (self.table.parser_new)(RawSlice::new(&json), &mut handle) })
            .map_err(PluginError::Reported)?;
        self.handle(handle)
    }

    /// A parser of one of the manifest's formats, for a tool defined in a config file.
    pub fn format_parser(self: &Arc<Self>, format: &str, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        let Some(format_parser_new) = self.table.format_parser_new else {
            // The manifest of a library without the slot cannot have named formats; a host that
            // got here anyway says what to do rather than trusting the manifest.
            return Err(PluginError::Reported(format!(
                "plugin {} was built before formats existed (ABI 1.2); rebuild it to use its format `{format}`",
                self.manifest.name
            )));
        };
        let json = serde_json::to_vec(context).map_err(|e| self.bad_answer("a parse context", e))?;
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: both buffers live across the call; `handle` is a valid out-pointer.
        take(&self.table, unsafe {
            format_parser_new(RawSlice::new(format.as_bytes()), RawSlice::new(&json), &mut handle)
        })
        .map_err(PluginError::Reported)?;
        self.handle(handle)
    }

    fn handle(self: &Arc<Self>, handle: *mut c_void) -> Result<ParserHandle, PluginError> {
        if handle.is_null() {
            return Err(self.bad_answer("no parser", "a null handle"));
        }
        Ok(ParserHandle { library: Arc::clone(self), handle, failed_at: None })
    }

    fn bad_answer(&self, what: &'static str, detail: impl ToString) -> PluginError {
        PluginError::BadAnswer { plugin: self.manifest.name.clone(), what, detail: detail.to_string() }
    }
}

fn check_header(version: u32, size: u32) -> Result<(), LoadError> {
    if version != abi::ABI_VERSION {
        return Err(LoadError::AbiVersion { found: version, expected: abi::ABI_VERSION });
    }
    if size < abi::TABLE_SIZE_1_0 {
        return Err(LoadError::TableSize { found: size, expected: abi::TABLE_SIZE_1_0 });
    }
    Ok(())
}

/// Copies the functions of a table of `size` bytes.
///
/// # Safety
/// `table` points at a live table of at least `size` bytes, and `size` ≥ [`abi::TABLE_SIZE_1_0`].
unsafe fn copy_table(table: *const PluginTableV1, size: u32) -> Table {
    let reaches = |offset: usize, len: usize| offset + len <= size as usize;
    // An optional slot, of type `Option<$kind>`: read when the table reaches past it, else absent.
    macro_rules! optional {
        ($slot:ident: $kind:ty) => {
            if reaches(std::mem::offset_of!(PluginTableV1, $slot), size_of::<Option<$kind>>()) {
                std::ptr::addr_of!((*table).$slot).read()
            } else {
                None
            }
        };
    }
    // SAFETY: 1.0 fields lie within the checked size; each is read on its own through a raw
    // pointer, never through a reference to a whole (possibly shorter) table.
    unsafe {
        Table {
            plan: std::ptr::addr_of!((*table).plan).read(),
            parser_new: std::ptr::addr_of!((*table).parser_new).read(),
            parser_feed: std::ptr::addr_of!((*table).parser_feed).read(),
            parser_finish: std::ptr::addr_of!((*table).parser_finish).read(),
            parser_free: std::ptr::addr_of!((*table).parser_free).read(),
            parser_progress: std::ptr::addr_of!((*table).parser_progress).read(),
            buffer_free: std::ptr::addr_of!((*table).buffer_free).read(),
            parser_feed_batch: optional!(parser_feed_batch: FeedBatchFn),
            format_parser_new: optional!(format_parser_new: FormatParserNewFn),
            parser_feed_block: optional!(parser_feed_block: FeedBlockFn),
        }
    }
}

/// Copies an outcome's buffer and frees it in the plugin.
fn take(table: &Table, outcome: RawOutcome) -> Result<Vec<u8>, String> {
    // SAFETY: the buffer is alive until buffer_free below.
    let bytes = unsafe { outcome.buf.as_bytes() }.to_vec();
    // SAFETY: the buffer came from this plugin and is freed once.
    unsafe { (table.buffer_free)(outcome.buf) };
    if outcome.status == abi::STATUS_OK { Ok(bytes) } else { Err(String::from_utf8_lossy(&bytes).into_owned()) }
}

/// One line lent to [`ParserHandle::feed_batch`]. It is the ABI's [`RawLine`] itself, so a batch
/// goes to the plugin as it is, with no copy of its table.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct LineRef<'a> {
    raw: RawLine,
    bytes: PhantomData<&'a [u8]>,
}

impl<'a> LineRef<'a> {
    pub fn new(stream: Stream, number: u64, bytes: &'a [u8]) -> Self {
        LineRef { raw: RawLine { stream: tag(stream), number, bytes: RawSlice::new(bytes) }, bytes: PhantomData }
    }

    pub fn stream(&self) -> Stream {
        if self.raw.stream == abi::STREAM_STDERR { Stream::Stderr } else { Stream::Stdout }
    }

    pub fn number(&self) -> u64 {
        self.raw.number
    }

    pub fn bytes(&self) -> &'a [u8] {
        // SAFETY: `new` took the slice from a borrow that lives for 'a.
        unsafe { self.raw.bytes.as_bytes() }
    }
}

/// Lines lent to [`ParserHandle::feed_block`] as the host gathers them: their bytes end to end,
/// a span of `bytes` for each, and the runs of one stream that number them (the ABI's own
/// tables, so a plugin of ABI 1.3 gets them with no copy).
#[derive(Clone, Copy)]
pub struct LineBlock<'a> {
    bytes: &'a [u8],
    spans: &'a [RawSpan],
    runs: &'a [RawRun],
}

impl<'a> LineBlock<'a> {
    /// None when the runs do not start at the first span and go forward within them. The spans
    /// are not looked at here: the plugin checks each before it reads the line (a first pass over
    /// them would cost the parser's thread what reading them costs), and [`LineBlock::lines`] ends
    /// at one that falls outside `bytes`.
    pub fn new(bytes: &'a [u8], spans: &'a [RawSpan], runs: &'a [RawRun]) -> Option<Self> {
        RawRun::ends(runs, spans.len()).map(|_| LineBlock { bytes, spans, runs })
    }

    /// The lines in order, up to a span that falls outside the bytes.
    pub fn lines(&self) -> impl Iterator<Item = LineRef<'a>> + use<'a> {
        let LineBlock { bytes, spans, runs } = *self;
        // `new` checked the runs, so their ends are there.
        let ends = RawRun::ends(runs, spans.len()).into_iter().flatten();
        let numbered = runs.iter().zip(ends).flat_map(move |(run, end)| {
            (run.first..).zip(&spans[run.at as usize..end]).map(move |(number, span)| (run.stream, number, span))
        });
        numbered.map_while(move |(stream, number, span)| {
            let line = bytes.get(span.start as usize..span.start as usize + span.len as usize)?;
            Some(LineRef { raw: RawLine { stream, number, bytes: RawSlice::new(line) }, bytes: PhantomData })
        })
    }
}

/// The ABI's tag for `stream`.
pub fn tag(stream: Stream) -> u32 {
    if stream == Stream::Stderr { abi::STREAM_STDERR } else { abi::STREAM_STDOUT }
}

/// One parser instance inside a plugin. Used from one thread at a time (every method takes
/// `&mut self` or `self`).
pub struct ParserHandle {
    library: Arc<PluginLibrary>,
    handle: *mut c_void,
    /// The line the parser failed at; later lines are dropped.
    failed_at: Option<u64>,
}

// SAFETY: the plugin contract requires parsers to be `Send` (the trait bound in plugin-api), and
// the handle is only ever used by its one owner.
unsafe impl Send for ParserHandle {}

impl ParserHandle {
    /// Feeds lines, in one call when the plugin has `parser_feed_batch` (ABI 1.1), else one call
    /// each.
    pub fn feed_batch(&mut self, lines: &[LineRef<'_>]) {
        if self.failed_at.is_some() || lines.is_empty() {
            return;
        }
        let status = match self.library.table.parser_feed_batch {
            Some(feed_batch) => {
                // SAFETY: the handle is live; the lines (`RawLine`s, by `repr(transparent)`) and
                // their bytes are lent for the call.
                unsafe { feed_batch(self.handle, lines.as_ptr().cast::<RawLine>(), lines.len()) }
            }
            None => {
                let mut status = abi::STATUS_OK;
                for l in lines {
                    // SAFETY: the handle is live; the line is lent for the call.
                    status = unsafe {
                        (self.library.table.parser_feed)(self.handle, l.raw.stream, l.raw.number, l.raw.bytes)
                    };
                    if status != abi::STATUS_OK {
                        break;
                    }
                }
                status
            }
        };
        if status != abi::STATUS_OK {
            self.failed_at = Some(lines[0].number());
        }
    }

    /// Feeds a block of lines, in one call with no copy when the plugin has `parser_feed_block`
    /// (ABI 1.3), else as [`ParserHandle::feed_batch`] does.
    pub fn feed_block(&mut self, block: &LineBlock<'_>) {
        if self.failed_at.is_some() || block.spans.is_empty() {
            return;
        }
        let Some(feed_block) = self.library.table.parser_feed_block else {
            self.feed_batch(&block.lines().collect::<Vec<_>>());
            return;
        };
        let raw = RawBlock {
            bytes: RawSlice::new(block.bytes),
            spans: block.spans.as_ptr(),
            span_count: block.spans.len(),
            runs: block.runs.as_ptr(),
            run_count: block.runs.len(),
        };
        // SAFETY: the handle is live; the block, its tables and its bytes are lent for the call (the
        // plugin-api checks that they fit one another before it reads a line).
        if unsafe { feed_block(self.handle, &raw) } != abi::STATUS_OK {
            self.failed_at = Some(block.runs[0].first);
        }
    }

    /// Feeds one line.
    pub fn feed(&mut self, stream: Stream, number: u64, bytes: &[u8]) {
        self.feed_batch(&[LineRef::new(stream, number, bytes)]);
    }

    pub fn progress(&mut self) -> Option<Progress> {
        if self.failed_at.is_some() {
            return None;
        }
        // SAFETY: the handle is live.
        let bytes = take(&self.library.table, unsafe { (self.library.table.parser_progress)(self.handle) }).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The parse result, or why the parser failed (a panic in feed or finish, an unreadable
    /// result).
    pub fn finish(self, end: &RunEnd) -> Result<ParseResult, PluginError> {
        let json = serde_json::to_vec(end).map_err(|e| self.library.bad_answer("a run end", e))?;
        // SAFETY: the handle is live; the end record is lent for the call.
        let outcome = unsafe { (self.library.table.parser_finish)(self.handle, RawSlice::new(&json)) };
        let bytes = take(&self.library.table, outcome).map_err(PluginError::Reported)?;
        serde_json::from_slice(&bytes).map_err(|e| self.library.bad_answer("a result", e))
    }
}

impl Drop for ParserHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from parser_new and is freed once, here.
        unsafe { (self.library.table.parser_free)(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u32, len: u32) -> RawSpan {
        RawSpan { start, len }
    }

    fn run(stream: Stream, first: u64, at: u64) -> RawRun {
        RawRun { stream: tag(stream), first, at }
    }

    #[test]
    fn a_block_gives_its_lines_with_their_runs_streams_and_numbers() {
        let spans = [span(0, 3), span(3, 0), span(3, 4)];
        let runs = [run(Stream::Stderr, 4, 0), run(Stream::Stdout, 10, 2)];
        let block = LineBlock::new(b"onefour", &spans, &runs).expect("a block that fits");
        let lines: Vec<_> = block.lines().map(|l| (l.stream(), l.number(), l.bytes())).collect();
        assert_eq!(lines, [(Stream::Stderr, 4, &b"one"[..]), (Stream::Stderr, 5, b""), (Stream::Stdout, 10, b"four")]);
    }

    #[test]
    fn a_block_whose_spans_or_runs_do_not_fit_is_refused() {
        let spans = [span(0, 3), span(3, 4)];
        let fits = |bytes: &[u8], spans: &[RawSpan], runs: &[RawRun]| LineBlock::new(bytes, spans, runs).is_some();
        assert!(fits(b"onefour", &spans, &[run(Stream::Stdout, 1, 0)]));
        assert!(!fits(b"onefour", &spans, &[run(Stream::Stdout, 1, 1)]), "no run for the first span");
        assert!(
            !fits(b"onefour", &spans, &[run(Stream::Stdout, 1, 0), run(Stream::Stdout, 5, 3)]),
            "a run past the spans"
        );
        assert!(!fits(b"onefour", &spans, &[]), "lines with no run");
        assert!(fits(b"", &[], &[]), "no lines");
        let runs = [run(Stream::Stdout, 1, 0)];
        let short = LineBlock::new(b"onefou", &spans, &runs).expect("runs that fit");
        let lines: Vec<_> = short.lines().map(|l| l.bytes()).collect();
        assert_eq!(lines, [b"one"], "the lines end at a span past the bytes");
    }
}
