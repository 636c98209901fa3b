//! Tokens as the agent's model counts them: OpenAI's o200k_base encoding (tiktoken-rs), on
//! ordinary text: a special token's spelling in a log or an answer is text to the model, as it
//! is in any tool result. This is the one place buildvise counts tokens.
//!
//! Loading the encoding takes about 130 ms and counting runs at about 20 MB/s a core, so nothing
//! on the exec path counts: [`count`] loads the encoding on its first call, and [`count_all`]
//! counts many texts and logs on every core with flat memory, for `gain`.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, mpsc};
use tiktoken_rs::CoreBPE;

static O200K: LazyLock<CoreBPE> = LazyLock::new(|| {
    // The vocabulary is compiled into tiktoken-rs: failing to build it is a broken build.
    tiktoken_rs::o200k_base().expect("tiktoken-rs builds its compiled-in o200k_base encoding")
});

/// The o200k_base tokens of `text`, as ordinary text.
pub fn count(text: &str) -> usize {
    O200K.count_ordinary(text)
}

/// What [`count_all`] counts into one of its sums.
pub(crate) enum Source {
    /// A raw log, read in pieces.
    Log(std::fs::File),
    Text(String),
}

/// Bytes of a log counted at a time: small enough that the pieces in flight (two per worker, one
/// per worker being counted, one being read) keep memory flat, large enough that handing one on
/// costs nothing beside the 50 ms it takes to count.
const PIECE: usize = 1 << 20;
/// A log with no place to cut (see [`cut`]) in this many bytes is cut at a line end anyway, which
/// may split one of o200k's pieces in two; no log seen has such a stretch.
const MOST_UNCUT: usize = 64 << 20;

/// The tokens of every source, added into `sums` sums (`sources` pairs each with the index of
/// its sum), counted on every core. A sum is None when one of its logs could not be read.
pub(crate) fn count_all(sources: impl Iterator<Item = (usize, Source)>, sums: usize) -> Vec<Option<u64>> {
    let totals: Vec<AtomicU64> = (0..sums).map(|_| AtomicU64::new(0)).collect();
    let failed: Vec<AtomicBool> = (0..sums).map(|_| AtomicBool::new(false)).collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let (send, receive) = mpsc::sync_channel::<(usize, Vec<u8>)>(workers * 2);
    let receive = Mutex::new(receive);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    // The lock is held only while waiting for the next piece, not while counting it.
                    let next = receive.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((sum, bytes)) = next else { break };
                    let tokens = count(&String::from_utf8_lossy(&bytes)) as u64;
                    totals[sum].fetch_add(tokens, Ordering::Relaxed);
                }
            });
        }
        for (sum, source) in sources {
            let sent = match source {
                Source::Text(text) => send.send((sum, text.into_bytes())).is_ok(),
                Source::Log(file) => pieces(file, PIECE, |piece| send.send((sum, piece)).is_ok()).unwrap_or(false),
            };
            if !sent {
                failed[sum].store(true, Ordering::Relaxed);
            }
        }
        drop(send);
    });
    totals.into_iter().zip(failed).map(|(total, failed)| (!failed.into_inner()).then(|| total.into_inner())).collect()
}

/// Reads `file` to its end, handing on pieces of about `size` bytes cut where [`cut`] allows;
/// false when `each` did.
fn pieces(mut file: impl Read, size: usize, mut each: impl FnMut(Vec<u8>) -> bool) -> std::io::Result<bool> {
    let mut held = Vec::with_capacity(size);
    loop {
        let read = (&mut file).take(size as u64).read_to_end(&mut held)?;
        if read < size {
            return Ok(held.is_empty() || each(held));
        }
        let at = cut(&held).or_else(|| {
            (held.len() >= MOST_UNCUT).then(|| memchr::memrchr(b'\n', &held).map_or(held.len(), |i| i + 1))
        });
        if let Some(at) = at {
            let rest = held.split_off(at);
            if !each(std::mem::replace(&mut held, rest)) {
                return Ok(false);
            }
        }
    }
}

/// The last place in `bytes` where a cut leaves the tokens of both sides adding up to those of
/// the whole: right after a `\n` followed by a byte that is neither whitespace nor `/` (an ASCII
/// letter, digit, punctuation or ESC). o200k first splits text into pieces by a pattern and
/// encodes each piece alone; a piece holding a `\n` is whitespace, or punctuation followed by
/// line ends and slashes, so it ends at such a byte, and no piece starts before a `\n` and goes
/// on past it. Cutting at an ASCII byte also keeps UTF-8 decoding the same on both sides.
fn cut(bytes: &[u8]) -> Option<usize> {
    memchr::memrchr_iter(b'\n', bytes)
        .map(|i| i + 1)
        .find(|&after| bytes.get(after).is_some_and(|&b| b == 0x1b || (b.is_ascii_graphic() && b != b'/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_o200k_tokens_of_ordinary_text() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // A special token's spelling is text, not the one special token.
        assert!(count("<|endoftext|>") > 1);
    }

    #[test]
    fn cuts_only_after_a_line_end_followed_by_no_whitespace_or_slash() {
        assert_eq!(cut(b"a\nb\n c"), Some(2));
        assert_eq!(cut(b"a\n b\n\n/c\n\tx\n"), None);
        assert_eq!(cut(b"}\n{\"a\":1}\n\x1b[31mred"), Some(10));
        assert_eq!(cut(b"no line end"), None);
        // Why not at any line end: o200k takes a run of line ends as one piece.
        assert_ne!(count("a\n") + count("\nb"), count("a\n\nb"));
        assert_eq!(count("a\n\n") + count("b"), count("a\n\nb"));
    }

    /// Every captured log of the project, counted whole and in pieces of about 64 bytes:
    /// the sums are the same.
    #[test]
    fn a_log_counted_in_pieces_counts_as_it_does_whole() {
        let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cases");
        let mut logs = Vec::new();
        let mut dirs = vec![cases];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "log") {
                    logs.push(path);
                }
            }
        }
        assert!(logs.len() > 20, "the captured cases hold logs: {logs:?}");
        let mut cuts = 0;
        for path in logs {
            let bytes = std::fs::read(&path).unwrap();
            let whole = count(&String::from_utf8_lossy(&bytes));
            let mut counted = 0;
            pieces(&bytes[..], 64, |piece| {
                counted += count(&String::from_utf8_lossy(&piece));
                cuts += 1;
                true
            })
            .unwrap();
            assert_eq!(counted, whole, "{}", path.display());
        }
        assert!(cuts > 1000, "the logs were cut often enough to mean something: {cuts}");
    }

    #[test]
    fn count_all_adds_texts_and_logs_into_their_sums() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("output.log");
        let line = "error[E0308]: mismatched types\n   --> src/main.rs:4:5\n";
        let text = line.repeat(PIECE / line.len() * 3);
        std::fs::write(&log, &text).unwrap();
        let sources = vec![
            (0, Source::Text("hello world".into())),
            (1, Source::Log(std::fs::File::open(&log).unwrap())),
            (0, Source::Text("hello world".into())),
        ];
        assert_eq!(count_all(sources.into_iter(), 3), [Some(4), Some(count(&text) as u64), Some(0)]);
    }

    #[test]
    fn pieces_are_cut_where_allowed_and_hold_the_whole_file() {
        let text = "x\n".repeat(PIECE) + "tail";
        let mut seen = Vec::new();
        assert!(
            pieces(text.as_bytes(), PIECE, |piece| {
                seen.push(piece);
                true
            })
            .unwrap()
        );
        assert!(seen.len() > 1 && seen.iter().all(|p| p.len() <= PIECE + 1), "{}", seen.len());
        assert_eq!(seen.concat(), text.as_bytes());
    }
}
