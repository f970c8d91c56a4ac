//! Records merged ahead on a thread of their own, handed over in blocks.
//!
//! A [`RecordStream`] decodes its runs' frames and plays its merge tree on the thread that asks
//! for its records: about a third of a budgeted context pass's time (order 3 of the Gutenberg
//! 5-gram, perf). Where that pass is the only work of the moment (the low orders, before any
//! large section is written beside it), [`ReadAhead`] moves the merge to the other core.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

#[cfg(doc)]
use super::RecordStream;
use super::Records;
use crate::error::Result;
use crate::util::channel_thread::close_and_join;

/// Records per block handed over.
const BLOCK_RECORDS: usize = 1 << 14;

/// Blocks in flight: filled and not yet read, besides the one being read and the one filling.
const BLOCKS_AHEAD: usize = 2;

/// The records of a [`RecordStream`] (or any [`Records`]), in the same order, merged by a thread
/// of its own while they are read here. Dropping it stops that thread (after at most one block)
/// and waits for it, so that the stream's files are closed when it returns.
pub struct ReadAhead {
    width: usize,
    /// Filled blocks (an error ends them), and the emptied ones sent back for reuse.
    full: Option<Receiver<Result<Vec<u32>>>>,
    empty: SyncSender<Vec<u32>>,
    block: Vec<u32>,
    at: usize,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `stream` (records of `width` words) on a thread of its own.
    pub fn new(mut stream: impl Records + Send + 'static, width: usize) -> Self {
        let (to_read, full) = sync_channel::<Result<Vec<u32>>>(BLOCKS_AHEAD);
        let (empty, emptied) = sync_channel::<Vec<u32>>(BLOCKS_AHEAD + 2);
        let thread = std::thread::spawn(move || loop {
            let mut block = emptied
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BLOCK_RECORDS * width));
            block.clear();
            let mut end = false;
            while block.len() < BLOCK_RECORDS * width {
                match stream.next_record() {
                    Ok(Some(record)) => {
                        debug_assert_eq!(record.len(), width, "records of the width given");
                        block.extend_from_slice(record);
                    }
                    Ok(None) => {
                        end = true;
                        break;
                    }
                    Err(e) => {
                        // the records before the error first
                        if !block.is_empty() {
                            let _ = to_read.send(Ok(block));
                        }
                        let _ = to_read.send(Err(e));
                        return;
                    }
                }
            }
            // a send fails once the reader is dropped: stop
            if (!block.is_empty() && to_read.send(Ok(block)).is_err()) || end {
                return;
            }
        });
        ReadAhead {
            width,
            full: Some(full),
            empty,
            block: Vec::new(),
            at: 0,
            thread: Some(thread),
        }
    }

    /// Takes the next block; false at the end of the records.
    fn next_block(&mut self) -> Result<bool> {
        let done = std::mem::take(&mut self.block);
        if done.capacity() > 0 {
            // (the thread may have ended, with no use for it)
            let _ = self.empty.try_send(done);
        }
        self.at = 0;
        let received = self.full.as_ref().map(Receiver::recv);
        match received {
            Some(Ok(Ok(block))) => {
                self.block = block;
                Ok(true)
            }
            Some(Ok(Err(e))) => Err(e),
            // the thread ended after its last block, or panicked: `stop` says which
            _ => {
                self.stop();
                Ok(false)
            }
        }
    }

    /// Stops the thread and waits for it; its panic, if any, resumes here.
    fn stop(&mut self) {
        if let Some(Err(panic)) = close_and_join(&mut self.full, &mut self.thread) {
            std::panic::resume_unwind(panic);
        }
    }
}

impl Records for ReadAhead {
    #[inline]
    fn next_record(&mut self) -> Result<Option<&[u32]>> {
        if self.at == self.block.len() && !self.next_block()? {
            return Ok(None);
        }
        let record = &self.block[self.at..self.at + self.width];
        self.at += self.width;
        Ok(Some(record))
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // (a panic of the thread is not resumed while dropping)
        let _ = close_and_join(&mut self.full, &mut self.thread);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{collect, KeyOrder, Layout, RecordStream, Sorter, WorkDir};
    use super::*;

    fn stream(dir: &WorkDir, records: u32) -> RecordStream {
        let layout = Layout::new(2, 1, KeyOrder::Prefix);
        // small runs: the stream merges several
        let mut sorter = Sorter::new(layout, false, 0, dir, "ahead");
        for i in 0..records {
            sorter.push(&[i * 7919 % 1000, i % 13, i]).unwrap();
        }
        sorter.finish().unwrap()
    }

    #[test]
    fn hands_out_the_streams_records_in_order() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        // none, less than a block, several blocks and a part
        for n in [0, 5, 3 * BLOCK_RECORDS as u32 + 17] {
            let expected = collect(stream(&dir, n));
            assert_eq!(expected.len(), n as usize);
            assert_eq!(collect(ReadAhead::new(stream(&dir, n), 3)), expected, "{n}");
        }
    }

    /// Hands out `n` records of one word, then fails (or panics).
    struct Failing {
        n: u32,
        record: [u32; 1],
        panic: bool,
    }

    impl Records for Failing {
        fn next_record(&mut self) -> Result<Option<&[u32]>> {
            if self.record[0] == self.n {
                assert!(!self.panic, "the source panicked");
                return Err(crate::error::Error::invalid("the source failed"));
            }
            self.record[0] += 1;
            Ok(Some(&self.record))
        }
    }

    #[test]
    fn an_error_of_the_source_reaches_the_reader_after_the_records_before_it() {
        let n = BLOCK_RECORDS as u32 + 3;
        let mut ahead = ReadAhead::new(
            Failing {
                n,
                record: [0],
                panic: false,
            },
            1,
        );
        for i in 1..=n {
            assert_eq!(ahead.next_record().unwrap(), Some(&[i][..]));
        }
        let err = ahead.next_record().unwrap_err();
        assert!(err.to_string().contains("the source failed"), "{err}");
    }

    #[test]
    #[should_panic(expected = "the source panicked")]
    fn a_panic_of_the_source_resumes_in_the_reader() {
        let mut ahead = ReadAhead::new(
            Failing {
                n: 2,
                record: [0],
                panic: true,
            },
            1,
        );
        while ahead.next_record().unwrap().is_some() {}
    }

    #[test]
    fn dropped_early_stops_its_thread() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let mut ahead = ReadAhead::new(stream(&dir, 10 * BLOCK_RECORDS as u32), 3);
        assert!(ahead.next_record().unwrap().is_some());
        drop(ahead);
        // the stream's runs were closed and removed with it: the directory is empty
        let left = std::fs::read_dir(dir.file("x").parent().unwrap())
            .unwrap()
            .count();
        assert_eq!(left, 0);
    }
}
