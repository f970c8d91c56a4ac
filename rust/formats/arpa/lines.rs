//! The lines of an ARPA file, read in blocks by a thread of their own: decompression (serial)
//! overlaps with parsing, and a block of whole lines can be parsed on all cores at once.
//!
//! [`read_blocks`] runs on the reader thread: it reads [`BLOCK_BYTES`] at a time, cuts them at
//! the last line break (the rest starts the next block), numbers the lines and refuses a line
//! longer than [`MAX_LINE_BYTES`] as soon as it is seen (a line with no end, such as a
//! decompression bomb's, is never held whole). [`Lines`], on the parsing side, walks the blocks
//! line by line (the header, `\end\`) or hands out the unread lines of a block at once (the
//! n-gram sections); both give every error the number of its line.

use std::io::{ErrorKind, Read};
use std::sync::mpsc::{Receiver, SyncSender};

use crate::error::{Error, Result};

use super::MAX_LINE_BYTES;

/// Bytes read from the file per block (then cut at a line break).
pub const BLOCK_BYTES: usize = 4 << 20;

/// Blocks read ahead of the parser: bounds the memory of a reader faster than the parser.
pub const BLOCKS_AHEAD: usize = 2;

/// Whole lines of the file.
#[derive(Debug, Default)]
pub struct Block {
    bytes: Vec<u8>,
    /// The end of each line in `bytes` (after its line break, if any).
    ends: Vec<usize>,
    /// The number of the block's first line (1-based).
    first_line: usize,
}

impl Block {
    /// Number of lines.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The line number of line `i` of the block (1-based, in the file).
    pub fn line_number(&self, i: usize) -> usize {
        self.first_line + i
    }

    /// Line `i` of the block without its line break (`\n` or `\r\n`).
    pub fn line(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let mut line = &self.bytes[start..self.ends[i]];
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        line.strip_suffix(b"\r").unwrap_or(line)
    }
}

/// A format error at line `line` of `path`.
pub fn error_at(path: &str, line: usize, message: impl Into<String>) -> Error {
    Error::ModelFormat {
        path: path.to_string(),
        line,
        message: message.into(),
    }
}

/// A line as text; the error message says where it is not UTF-8.
pub fn utf8(line: &[u8]) -> std::result::Result<&str, String> {
    std::str::from_utf8(line)
        .map_err(|e| format!("not valid UTF-8 (byte {} of the line)", e.valid_up_to() + 1))
}

/// Reads `reader` into blocks of whole lines sent to `blocks`, `block_bytes` at a time (cut at
/// the last line break), until the end of the file, an error (sent as the last item) or the
/// receiver hanging up; `path` names the file in errors.
pub fn read_blocks(
    mut reader: impl Read,
    path: &str,
    block_bytes: usize,
    blocks: &SyncSender<Result<Block>>,
) {
    // lines sent so far; the start of the next line, carried over
    let mut lines = 0;
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut bytes = std::mem::take(&mut carry);
        let start = bytes.len();
        bytes.resize(start + block_bytes, 0);
        let (filled, failure) = fill(&mut reader, &mut bytes[start..]);
        bytes.truncate(start + filled);
        let eof = filled < block_bytes && failure.is_none();
        let mut ends: Vec<usize> = memchr::memchr_iter(b'\n', &bytes[start..])
            .map(|at| start + at + 1)
            .collect();
        if eof && ends.last().copied().unwrap_or(0) < bytes.len() {
            ends.push(bytes.len());
        }
        let mut end = 0;
        let mut overlong = None;
        for (i, &e) in ends.iter().enumerate() {
            if e - end > MAX_LINE_BYTES {
                overlong = Some(i);
                break;
            }
            end = e;
        }
        if overlong.is_none() && bytes.len() - end > MAX_LINE_BYTES {
            // the unfinished last line is already too long
            overlong = Some(ends.len());
        }
        if let Some(i) = overlong {
            ends.truncate(i);
            end = ends.last().copied().unwrap_or(0);
        }
        carry.extend_from_slice(&bytes[end..]);
        bytes.truncate(end);
        let block = Block {
            bytes,
            ends,
            first_line: lines + 1,
        };
        lines += block.len();
        if block.len() > 0 && blocks.send(Ok(block)).is_err() {
            return;
        }
        let last = if overlong.is_some() {
            Some(format!(
                "line longer than {MAX_LINE_BYTES} bytes (the limit for an ARPA line)"
            ))
        } else {
            failure.map(|e| format!("cannot read the file here: {e}"))
        };
        if let Some(message) = last {
            let _ = blocks.send(Err(error_at(path, lines + 1, message)));
            return;
        }
        if eof {
            return;
        }
    }
}

/// Reads into `buf` until it is full or the file ends: the bytes read, and the error that
/// stopped it early.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

/// The parsing side: the lines of the blocks in order, with the number of the current one.
pub struct Lines<'a> {
    blocks: Receiver<Result<Block>>,
    block: Block,
    /// The block after `block` (or the reader's error), when received ahead by
    /// [`Lines::with_next`].
    ahead: Option<Result<Block>>,
    /// Index in `block` of the next unread line.
    next: usize,
    /// The number of the current (last read) line; 0 before the first.
    line: usize,
    /// Whether the current line is to be read again ([`Lines::hold`]).
    held: bool,
    ended: bool,
    path: &'a str,
}

impl<'a> Lines<'a> {
    /// The lines of the blocks sent to `blocks` by [`read_blocks`] from the file `path`.
    pub fn new(blocks: Receiver<Result<Block>>, path: &'a str) -> Self {
        Lines {
            blocks,
            block: Block::default(),
            ahead: None,
            next: 0,
            line: 0,
            held: false,
            ended: false,
            path,
        }
    }

    /// The file's name, for messages.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// An error at the current line.
    pub fn fail(&self, message: impl Into<String>) -> Error {
        error_at(self.path, self.line, message)
    }

    /// Makes sure an unread line is at hand; false at the end of the file.
    fn fill(&mut self) -> Result<bool> {
        while self.next == self.block.len() {
            match self.ahead.take().or_else(|| self.receive()) {
                Some(block) => {
                    self.block = block?;
                    self.next = 0;
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// The next block from the reader thread (or its error); `None` at the end of the file.
    fn receive(&mut self) -> Option<Result<Block>> {
        if self.ended {
            return None;
        }
        let block = self.blocks.recv().ok();
        self.ended = block.is_none();
        block
    }

    /// Moves to the next line (checked to be UTF-8); false at the end of the file.
    pub fn advance(&mut self) -> Result<bool> {
        if self.held {
            self.held = false;
            self.next += 1;
            return Ok(true);
        }
        if !self.fill()? {
            return Ok(false);
        }
        self.next += 1;
        self.line += 1;
        utf8(self.raw()).map_err(|message| self.fail(message))?;
        Ok(true)
    }

    /// The current line's bytes.
    pub fn raw(&self) -> &[u8] {
        self.block.line(self.next - 1)
    }

    /// The current line (checked UTF-8 by [`Lines::advance`]).
    pub fn text(&self) -> &str {
        std::str::from_utf8(self.raw()).unwrap_or("")
    }

    /// Makes the next [`Lines::advance`] return the current line again.
    pub fn hold(&mut self) {
        self.next -= 1;
        self.held = true;
    }

    /// The unread lines of the current block (the next block's when it is all read): the block
    /// and the index of its first unread line; `None` at the end of the file. Lines are not
    /// checked for UTF-8; [`Lines::skip`] marks them read.
    pub fn pending(&mut self) -> Result<Option<(&Block, usize)>> {
        debug_assert!(!self.held, "a held line is read with advance");
        Ok(self.fill()?.then_some((&self.block, self.next)))
    }

    /// The current block and the block after it (received ahead, so that it can be parsed while
    /// the current one's lines are added); `None` for the next one at the end of the file or
    /// where the reader failed (its error comes when that block is reached).
    pub fn with_next(&mut self) -> (&Block, Option<&Block>) {
        if self.ahead.is_none() {
            self.ahead = self.receive();
        }
        (
            &self.block,
            self.ahead.as_ref().and_then(|b| b.as_ref().ok()),
        )
    }

    /// Marks the next `n` lines of the block read: the last of them is the current line.
    pub fn skip(&mut self, n: usize) {
        debug_assert!(self.next + n <= self.block.len());
        self.next += n;
        self.line += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `text` with its number, read with [`Lines::advance`] from blocks read by a
    /// thread of their own, as the ARPA reader reads them.
    fn all_lines(text: &[u8]) -> Result<Vec<(usize, String)>> {
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel(BLOCKS_AHEAD);
            s.spawn(move || read_blocks(text, "t", BLOCK_BYTES, &tx));
            let mut lines = Lines::new(rx, "t");
            let mut out = Vec::new();
            while lines.advance()? {
                out.push((lines.line, lines.text().to_string()));
            }
            Ok(out)
        })
    }

    #[test]
    fn lines_are_numbered_across_blocks() {
        // lines straddling the block boundary, one without a final line break
        let mut text = Vec::new();
        let mut expected = Vec::new();
        let mut n = 0;
        while text.len() < 2 * BLOCK_BYTES + 100 {
            n += 1;
            let line = format!("line {n} {}", "x".repeat(n % 977));
            text.extend_from_slice(line.as_bytes());
            text.extend_from_slice(if n % 3 == 0 { b"\r\n" } else { b"\n" });
            expected.push((n, line));
        }
        text.extend_from_slice(b"last");
        expected.push((n + 1, "last".to_string()));
        assert_eq!(all_lines(&text).unwrap(), expected);
    }

    /// A reader that fails.
    struct Failing;

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("the disk is on fire"))
        }
    }

    #[test]
    fn the_next_block_read_ahead_is_read_in_its_turn() {
        // blocks of 4 bytes: "a\nb\n", "cc\n", then the reader's error at line 4
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel(BLOCKS_AHEAD);
            s.spawn(move || read_blocks(b"a\nb\ncc\n".chain(Failing), "t", 4, &tx));
            let mut lines = Lines::new(rx, "t");
            assert!(lines.advance().unwrap());
            let (block, next) = lines.with_next();
            assert_eq!((block.len(), block.line(1)), (2, &b"b"[..]));
            let next = next.unwrap();
            assert_eq!(
                (next.len(), next.line(0), next.line_number(0)),
                (1, &b"cc"[..], 3)
            );
            // asked again, the same block ahead; then the lines in order
            assert_eq!(lines.with_next().1.unwrap().line(0), b"cc");
            let mut read = Vec::new();
            let failure = loop {
                match lines.advance() {
                    Ok(true) => read.push((lines.line, lines.text().to_string())),
                    Ok(false) => panic!("the reader's error was lost"),
                    Err(e) => break e,
                }
                if lines.line == 3 {
                    // only the reader's error is ahead: no block is handed out for it
                    assert!(lines.with_next().1.is_none());
                }
            };
            assert_eq!(read, [(2, "b".to_string()), (3, "cc".to_string())]);
            match failure {
                Error::ModelFormat { line, message, .. } => {
                    assert_eq!(line, 4);
                    assert!(message.contains("the disk is on fire"), "{message}");
                }
                other => panic!("{other:?}"),
            }
        });
    }

    #[test]
    fn an_overlong_line_is_refused_where_it_is() {
        let mut text = b"a\nb\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        text.extend_from_slice(b"\nc\n");
        match all_lines(&text) {
            Err(Error::ModelFormat { line, message, .. }) => {
                assert_eq!(line, 3);
                assert!(message.starts_with("line longer than"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // one byte shorter (the line break included) it is read
        let mut text = b"a\nb\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES - 1));
        text.extend_from_slice(b"\nc\n");
        assert_eq!(all_lines(&text).unwrap().len(), 4);
    }
}
