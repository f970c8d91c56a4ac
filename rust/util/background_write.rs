//! A file written by a thread of its own: the caller fills a buffer and hands it over whole, and
//! goes on filling another while the thread writes it.
//!
//! A write to a file copies its bytes into the page cache on the thread that calls it (on the
//! virtual machines of this project, about a second a gigabyte of the thread's time, most of it
//! the host mapping fresh pages). Budgeted estimation writes each order's probabilities in
//! context order (1.67 GB for the Gutenberg 5-gram model) from its context pass, the one thread
//! that the interpolation waits for; handed to a writer thread, that copy runs on the other core.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::util::channel_thread::close_and_join;

/// Writes buffers of `T` (plain data, written as their bytes) to a file on a thread of its own,
/// in the order handed over; at most `buffers` exist at once (the one filling included).
pub struct BackgroundWriter<T> {
    full: Option<SyncSender<Vec<T>>>,
    empty: Receiver<Vec<T>>,
    thread: Option<JoinHandle<io::Result<File>>>,
    /// Buffers made so far, and how many may be.
    made: usize,
    buffers: usize,
    capacity: usize,
}

impl<T: bytemuck::Pod + Send + 'static> BackgroundWriter<T> {
    /// A writer of `file` with `buffers` (at least 2) buffers of `capacity` items each; returns it
    /// and the first buffer to fill.
    pub fn new(mut file: File, buffers: usize, capacity: usize) -> (Self, Vec<T>) {
        let buffers = buffers.max(2);
        let (full, to_write) = sync_channel::<Vec<T>>(buffers);
        let (written, empty) = sync_channel::<Vec<T>>(buffers);
        let thread = std::thread::spawn(move || {
            for mut buffer in to_write {
                file.write_all(bytemuck::cast_slice(&buffer))?;
                buffer.clear();
                // the owner may be gone (done, or dropped after an error elsewhere)
                let _ = written.send(buffer);
            }
            Ok(file)
        });
        let writer = BackgroundWriter {
            full: Some(full),
            empty,
            thread: Some(thread),
            made: 1,
            buffers,
            capacity,
        };
        (writer, Vec::with_capacity(capacity))
    }

    /// Hands `buffer` (full) to the thread and puts an empty one in its place: one it wrote
    /// already, a new one while fewer than `buffers` exist, else the next it writes (waiting).
    pub fn hand_over(&mut self, buffer: &mut Vec<T>) -> io::Result<()> {
        let next = match self.empty.try_recv() {
            Ok(empty) => empty,
            Err(_) if self.made < self.buffers => {
                self.made += 1;
                Vec::with_capacity(self.capacity)
            }
            Err(_) => match self.empty.recv() {
                Ok(empty) => empty,
                // the thread ended: a write failed
                Err(_) => return Err(self.stop()),
            },
        };
        let full = std::mem::replace(buffer, next);
        let sent = self.full.as_ref().map(|sender| sender.send(full));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(self.stop()),
        }
    }

    /// Waits until everything handed over is written; returns the file.
    pub fn finish(mut self) -> io::Result<File> {
        close_and_join(&mut self.full, &mut self.thread)
            .expect("the thread runs until finish or drop")
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// The error that ended the thread (or a broken pipe if it ended without one).
    fn stop(&mut self) -> io::Error {
        match close_and_join(&mut self.full, &mut self.thread) {
            Some(Ok(Err(e))) => e,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            _ => io::ErrorKind::BrokenPipe.into(),
        }
    }
}

impl<T> Drop for BackgroundWriter<T> {
    fn drop(&mut self) {
        // the file is closed before this returns (its directory may be removed next)
        let _ = close_and_join(&mut self.full, &mut self.thread);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("fastppl-background-{name}-{}", std::process::id()))
    }

    #[test]
    fn writes_the_buffers_in_the_order_handed_over() {
        let p = path("order");
        let (mut writer, mut buffer) =
            BackgroundWriter::<u32>::new(File::create(&p).unwrap(), 2, 4);
        let mut expected = Vec::new();
        for i in 0..1000u32 {
            buffer.push(i);
            expected.push(i);
            if buffer.len() == 4 {
                writer.hand_over(&mut buffer).unwrap();
                assert!(buffer.is_empty() && buffer.capacity() >= 4);
            }
        }
        buffer.push(7);
        expected.push(7);
        writer.hand_over(&mut buffer).unwrap();
        drop(writer.finish().unwrap());
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes, bytemuck::cast_slice::<u32, u8>(&expected));
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_failed_write_is_the_error_of_a_later_call() {
        // a file open only for reading: every write fails
        let p = path("fail");
        std::fs::write(&p, b"").unwrap();
        let (mut writer, mut buffer) = BackgroundWriter::<u32>::new(File::open(&p).unwrap(), 2, 4);
        let mut failed = None;
        for _ in 0..10 {
            buffer.extend_from_slice(&[1, 2, 3, 4]);
            if let Err(e) = writer.hand_over(&mut buffer) {
                failed = Some(e);
                break;
            }
        }
        let error = match failed {
            Some(e) => e,
            None => writer.finish().unwrap_err(),
        };
        assert_ne!(error.kind(), io::ErrorKind::BrokenPipe, "{error}");
        std::fs::remove_file(&p).unwrap();
    }
}
