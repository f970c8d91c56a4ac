//! A file copied while it is still being written: one thread writes it through a
//! [`GrowingWriter`], another [`follows`](GrowingFile::follow) it, copying each part as soon as it
//! is written, until the writer is dropped.
//!
//! Budgeted estimation writes the last ARPA section to a file of its own while the section before
//! it is written to the model, then copies it after that section. Copied as it grows, most of it
//! is in the model by the time its last lines are written, instead of all of it being copied then
//! (1.55 GB for the Gutenberg 5-gram model).

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::{Condvar, Mutex, PoisonError};

/// What the writer has written so far, and whether it is done.
#[derive(Debug, Default)]
struct Written {
    bytes: u64,
    closed: bool,
}

/// The state shared by a file's writer and its follower.
#[derive(Debug, Default)]
pub struct GrowingFile {
    written: Mutex<Written>,
    grew: Condvar,
}

/// Writes a [`GrowingFile`]: each write is announced to the follower; dropping the writer (at the
/// end, after an error or in a panic) tells the follower that the file will not grow any more.
pub struct GrowingWriter<'a> {
    file: File,
    shared: &'a GrowingFile,
}

impl GrowingFile {
    pub fn new() -> Self {
        Self::default()
    }

    /// The writer of `file` (empty, just created).
    pub fn writer(&self, file: File) -> GrowingWriter<'_> {
        GrowingWriter { file, shared: self }
    }

    fn update(&self, change: impl FnOnce(&mut Written)) {
        change(&mut self.written.lock().unwrap_or_else(PoisonError::into_inner));
        self.grew.notify_all();
    }

    /// Waits until more than `copied` bytes are written or the writer is gone; returns the bytes
    /// written and whether the writer is gone.
    fn wait_past(&self, copied: u64) -> (u64, bool) {
        let guard = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let written = self
            .grew
            .wait_while(guard, |w| w.bytes <= copied && !w.closed)
            .unwrap_or_else(PoisonError::into_inner);
        (written.bytes, written.closed)
    }

    /// Copies the file, read from `reader` (opened on it before anything was written), as it
    /// grows: `copy` gets each newly written part to copy (a reader of exactly that many bytes)
    /// and returns the bytes it copied. Returns the bytes copied in all once the writer is gone
    /// (whether it finished or failed: its thread reports that).
    pub fn follow(
        &self,
        mut reader: File,
        mut copy: impl FnMut(&mut io::Take<&mut File>) -> io::Result<u64>,
    ) -> io::Result<u64> {
        let mut copied = 0;
        loop {
            let (written, closed) = self.wait_past(copied);
            if written > copied {
                let part = written - copied;
                if copy(&mut (&mut reader).take(part))? != part {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "a file being copied as it was written ended early (was it changed?)",
                    ));
                }
                copied = written;
            } else if closed {
                return Ok(copied);
            }
        }
    }
}

impl Write for GrowingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.shared.update(|w| w.bytes += n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for GrowingWriter<'_> {
    fn drop(&mut self) {
        self.shared.update(|w| w.closed = true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufWriter;

    fn paths(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("fastppl-growing-{}-{name}", std::process::id()))
    }

    /// Follows a file written in many small parts, some of them after pauses, or cut short.
    fn copy_while_written(parts: usize, fail_after: Option<usize>) -> (Vec<u8>, Vec<u8>) {
        let path = paths(&format!("{parts}-{fail_after:?}"));
        let file = File::create(&path).unwrap();
        let reader = File::open(&path).unwrap();
        let growing = GrowingFile::new();
        let mut expected = Vec::new();
        let mut copied = Vec::new();
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                let mut out = BufWriter::with_capacity(64, growing.writer(file));
                let mut all = Vec::new();
                for i in 0..parts {
                    if fail_after == Some(i) {
                        return all;
                    }
                    let line = format!("line {i}\n").repeat(i % 7 + 1);
                    out.write_all(line.as_bytes()).unwrap();
                    all.extend_from_slice(line.as_bytes());
                    if i % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
                out.flush().unwrap();
                all
            });
            let total = growing
                .follow(reader, |part| io::copy(part, &mut copied))
                .unwrap();
            expected = writer.join().unwrap();
            assert_eq!(total, copied.len() as u64);
        });
        std::fs::remove_file(&path).unwrap();
        (expected, copied)
    }

    #[test]
    fn copies_every_byte_in_order_as_it_is_written() {
        for parts in [0, 1, 500] {
            let (expected, copied) = copy_while_written(parts, None);
            assert_eq!(copied, expected, "{parts} parts");
        }
    }

    /// A writer dropped early (an error in its thread) ends the copy with what it wrote, flushed
    /// by its buffer's drop: the follower never waits forever.
    #[test]
    fn a_writer_gone_early_ends_the_copy() {
        let (expected, copied) = copy_while_written(500, Some(120));
        assert_eq!(copied, expected);
        assert!(!copied.is_empty());
    }

    #[test]
    fn a_file_shorter_than_announced_is_an_error() {
        let path = paths("short");
        let file = File::create(&path).unwrap();
        let reader = File::open(&path).unwrap();
        let growing = GrowingFile::new();
        {
            let mut w = growing.writer(file);
            w.write_all(b"0123456789").unwrap();
            w.file.set_len(4).unwrap();
        }
        let err = growing
            .follow(reader, |part| io::copy(part, &mut io::sink()))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        std::fs::remove_file(&path).unwrap();
    }
}
