//! Splitting a byte stream into lines with bounded memory.

/// Longest line kept whole. A longer run of bytes without `\n` is cut into lines of this size, so
/// memory stays bounded whatever a process prints (a 10 MB line is still stored whole).
pub const MAX_LINE: usize = 16 << 20;

/// Appends to `ends` the offset of every `\n` in `block`.
pub fn line_ends(block: &[u8], ends: &mut Vec<usize>) {
    ends.extend(memchr::memchr_iter(b'\n', block));
}

/// Turns chunks of one stream into blocks of whole lines, each line ended by `\n`.
///
/// A block is handed on as one slice, not a line at a time: the log stores it with one write and
/// the parser's batch takes it with one copy, which is most of what keeping up with a flood of
/// short lines takes. Only a line split across chunks is copied here.
#[derive(Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    pub fn push(&mut self, mut chunk: &[u8], mut emit: impl FnMut(&[u8])) {
        if !self.pending.is_empty() {
            let Some(end) = memchr::memchr(b'\n', chunk) else {
                self.hold(chunk, &mut emit);
                return;
            };
            self.pending.extend_from_slice(&chunk[..=end]);
            emit(&self.pending);
            self.release();
            chunk = &chunk[end + 1..];
        }
        let whole = memchr::memrchr(b'\n', chunk).map_or(0, |end| end + 1);
        if whole > 0 {
            emit(&chunk[..whole]);
        }
        self.hold(&chunk[whole..], &mut emit);
    }

    /// Keeps the start of a line whose end has not come yet, cutting it at [`MAX_LINE`].
    fn hold(&mut self, mut part: &[u8], emit: &mut impl FnMut(&[u8])) {
        while self.pending.len() + part.len() > MAX_LINE {
            let take = MAX_LINE - self.pending.len();
            self.pending.extend_from_slice(&part[..take]);
            self.pending.push(b'\n');
            emit(&self.pending);
            self.release();
            part = &part[take..];
        }
        self.pending.extend_from_slice(part);
    }

    /// Empties the buffer, giving back the memory a long line took.
    fn release(&mut self) {
        if self.pending.capacity() > 1 << 20 {
            self.pending = Vec::new();
        } else {
            self.pending.clear();
        }
    }

    /// Emits the last line, with a `\n`, when the stream did not end with one, and says whether
    /// it did.
    pub fn finish(&mut self, mut emit: impl FnMut(&[u8])) -> bool {
        let unterminated = !self.pending.is_empty();
        if unterminated {
            self.pending.push(b'\n');
            emit(&self.pending);
        }
        self.pending = Vec::new();
        unterminated
    }
}

/// The lines of a block, without their `\n`.
#[cfg(test)]
pub fn each_line(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    block.strip_suffix(b"\n").unwrap_or(block).split(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_are_every_newline_whatever_the_alignment() {
        // Lines of every length from 0 to 70, so newlines fall at every place in a word, in the
        // remainder and at the edges; a byte with the high bit set must not match, nor its
        // neighbours.
        let mut block = Vec::new();
        for len in 0..70 {
            block.extend(std::iter::repeat_n(if len % 3 == 0 { 0x8a } else { b'x' }, len));
            block.push(b'\n');
        }
        for cut in 0..=block.len().min(100) {
            let part = &block[cut..];
            let mut ends = vec![7];
            line_ends(part, &mut ends);
            let want: Vec<usize> = std::iter::once(7).chain(memchr::memchr_iter(b'\n', part)).collect();
            assert_eq!(ends, want, "from byte {cut}");
        }
    }

    fn split(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut s = LineSplitter::default();
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, |block| {
                assert!(block.ends_with(b"\n"), "every block ends a line");
                out.extend(each_line(block).map(<[u8]>::to_vec));
            });
        }
        s.finish(|block| out.extend(each_line(block).map(<[u8]>::to_vec)));
        out
    }

    #[test]
    fn joins_lines_across_chunks() {
        assert_eq!(
            split(&[b"ab", b"c\nd", b"\n\nlast"]),
            vec![b"abc".to_vec(), b"d".to_vec(), vec![], b"last".to_vec()]
        );
        assert_eq!(split(&[b"a\nb\n", b"c\n"]), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
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
