//! Splitting a byte stream into lines with bounded memory.

/// Longest line kept whole. A longer run of bytes without `\n` is cut into lines of this size, so
/// memory stays bounded whatever a process prints (a 10 MB line is still stored whole).
pub const MAX_LINE: usize = 16 << 20;

/// Turns chunks of one stream into lines (without the `\n`).
#[derive(Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, mut chunk: &[u8], mut emit: impl FnMut(&[u8])) {
        while let Some(pos) = memchr_newline(chunk) {
            if self.pending.is_empty() {
                emit(&chunk[..pos]);
            } else {
                self.pending.extend_from_slice(&chunk[..pos]);
                emit(&self.pending);
                self.release();
            }
            chunk = &chunk[pos + 1..];
        }
        while self.pending.len() + chunk.len() > MAX_LINE {
            let take = MAX_LINE - self.pending.len();
            self.pending.extend_from_slice(&chunk[..take]);
            emit(&self.pending);
            self.release();
            chunk = &chunk[take..];
        }
        self.pending.extend_from_slice(chunk);
    }

    /// Empties the buffer, giving back the memory a long line took.
    fn release(&mut self) {
        if self.pending.capacity() > 1 << 20 {
            self.pending = Vec::new();
        } else {
            self.pending.clear();
        }
    }

    /// Emits the last line when the stream did not end with `\n`.
    pub fn finish(&mut self, mut emit: impl FnMut(&[u8])) {
        if !self.pending.is_empty() {
            emit(&self.pending);
        }
        self.pending = Vec::new();
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, |l| out.push(l.to_vec()));
        }
        s.finish(|l| out.push(l.to_vec()));
        out
    }

    #[test]
    fn joins_lines_across_chunks() {
        assert_eq!(
            split(&[b"ab", b"c\nd", b"\n\nlast"]),
            vec![b"abc".to_vec(), b"d".to_vec(), vec![], b"last".to_vec()]
        );
    }

    #[test]
    fn cuts_endless_lines() {
        let big = vec![b'x'; MAX_LINE + 10];
        let out = split(&[&big, b"\n"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].len(), MAX_LINE);
        assert_eq!(out[1].len(), 10);
    }
}
