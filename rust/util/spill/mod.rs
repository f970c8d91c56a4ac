//! Sorting more records than fit in memory, for [`crate::estimate::budgeted`].
//!
//! A record is a fixed number of `u32` words: a key of token ids, then a payload. A [`Sorter`]
//! collects records up to its memory budget, sorts them on all cores and writes the sorted run to
//! a file in a work directory, in the compact form of `run_codec` (about half the bytes of
//! fixed-width records); [`Sorter::finish`] writes what is left as a last run and merges the
//! runs into one sorted [`RecordStream`]. Keys are compared in one of three orders: prefix order
//! (w1, w2, ..., wm lexicographically: the continuations of a context are contiguous), suffix
//! order (wm, ..., w2, w1: n-grams sharing a suffix are contiguous, as lmplz sorts them) or
//! context order (w(m-1), ..., w1, then wm: the continuations of a context are contiguous, and
//! the contexts come in suffix order). A
//! sorter can also combine records with equal keys by adding their first payload word (a count),
//! in each run and again while merging, or keep a value of the records' leading key words apart
//! ([`Sorter::with_prefix_values`]), which comes out sorted beside them.

use std::cmp::Ordering;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use rayon::prelude::*;

mod read_ahead;
mod recycled;
mod run_codec;

pub use read_ahead::ReadAhead;

use crate::error::{Error, Result};
use crate::util::background_write::BackgroundWriter;
use crate::util::huge_pages;
use crate::util::prefetch::prefetch_ahead;
use crate::util::words::{copy_words, extend_words};
use recycled::Recycled;
use run_codec::FrameReader;

/// A key word that is no token id: fills the left of a shorter n-gram's key, and sorts after
/// every id.
pub const PAD: u32 = u32::MAX;

/// How keys are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// w1, w2, ..., wm.
    Prefix,
    /// wm, ..., w2, w1.
    Suffix,
    /// w(m-1), ..., w2, w1, then wm: the context in suffix order, then the predicted word.
    Context,
}

/// The shape and order of the records of one file or stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Words of key (token ids) at the start of each record.
    pub key_len: usize,
    /// Words per record, key included.
    pub width: usize,
    /// How keys compare.
    pub order: KeyOrder,
}

impl Layout {
    /// A layout of `key_len` key words and `payload` payload words.
    pub fn new(key_len: usize, payload: usize, order: KeyOrder) -> Self {
        assert!(
            key_len > 0 || order != KeyOrder::Context,
            "context order needs a key of at least one word"
        );
        Layout {
            key_len,
            width: key_len + payload,
            order,
        }
    }

    /// Compares the keys of two records.
    #[inline]
    pub fn compare(&self, a: &[u32], b: &[u32]) -> Ordering {
        let (a, b) = (&a[..self.key_len], &b[..self.key_len]);
        match self.order {
            KeyOrder::Prefix => a.cmp(b),
            KeyOrder::Suffix => a.iter().rev().cmp(b.iter().rev()),
            KeyOrder::Context => {
                let word = |r: &[u32], k| r[self.key_position(k)];
                (0..self.key_len)
                    .map(|k| word(a, k))
                    .cmp((0..self.key_len).map(|k| word(b, k)))
            }
        }
    }

    /// The position in a record of the `k`-th key word in comparison order (the most
    /// significant first).
    #[inline]
    pub(super) fn key_position(&self, k: usize) -> usize {
        match self.order {
            KeyOrder::Prefix => k,
            KeyOrder::Suffix => self.key_len - 1 - k,
            KeyOrder::Context if k + 1 < self.key_len => self.key_len - 2 - k,
            KeyOrder::Context => self.key_len - 1,
        }
    }

    fn bytes(&self) -> usize {
        self.width * 4
    }
}

/// Records handed out in order, one at a time: a file's or a merge's.
pub trait Records {
    /// The next record, or `None` at the end.
    fn next_record(&mut self) -> Result<Option<&[u32]>>;
}

impl Records for RecordReader {
    #[inline]
    fn next_record(&mut self) -> Result<Option<&[u32]>> {
        RecordReader::next_record(self)
    }
}

impl Records for RecordStream {
    #[inline]
    fn next_record(&mut self) -> Result<Option<&[u32]>> {
        RecordStream::next_record(self)
    }
}

/// A directory for spilled runs, removed with everything in it when dropped.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    next: AtomicUsize,
    runs: AtomicUsize,
    bytes: AtomicU64,
    /// The sort keys of runs written, kept for the next runs.
    keys: Arc<Recycled<u128>>,
    /// The record buffers of sorters finished, kept for the next sorters.
    buffers: Recycled<u32>,
}

impl WorkDir {
    /// Creates a fresh directory inside `parent`.
    pub fn new(parent: &Path) -> Result<Self> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = parent.join(format!("fastppl-{}-{stamp}", std::process::id()));
        fs::create_dir_all(&path).map_err(Error::io(&path))?;
        Ok(WorkDir {
            path,
            next: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            keys: Arc::default(),
            buffers: Recycled::default(),
        })
    }

    /// Number of sorted runs written so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Relaxed)
    }

    /// Bytes written to the directory so far (runs and intermediate files).
    pub fn bytes_written(&self) -> u64 {
        self.bytes.load(Relaxed)
    }

    /// Counts `bytes` written to a file of the directory ([`bytes_written`](WorkDir::bytes_written)).
    pub fn wrote(&self, bytes: usize) {
        self.bytes.fetch_add(bytes as u64, Relaxed);
    }

    /// Frees the arrays kept for later sorts (record buffers and sort keys): once no sorter
    /// will fill again, they would only hold memory.
    pub fn free_sort_memory(&self) {
        self.buffers.clear();
        self.keys.clear();
    }

    /// A new file name in the directory (the file is not created).
    pub fn file(&self, what: &str) -> PathBuf {
        let n = self.next.fetch_add(1, Relaxed);
        self.path.join(format!("{n:05}-{what}"))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// A run's record numbers in sorted order, in the memory of its sort keys where it was sorted by
/// packed keys (returned to the pool once the run is written).
enum SortedIndex {
    InKeys { keys: Vec<u128>, len: usize },
    Own(Vec<u32>),
}

impl SortedIndex {
    fn as_slice(&self) -> &[u32] {
        match self {
            SortedIndex::InKeys { keys, len } => &bytemuck::cast_slice(keys)[..*len],
            SortedIndex::Own(index) => index,
        }
    }

    /// Gives the memory of the keys back to `pool`.
    fn recycle(self, pool: &Recycled<u128>) {
        if let SortedIndex::InKeys { keys, .. } = self {
            pool.put(keys);
        }
    }
}

/// Writes records to a file, in the order given (by a thread of its own, see
/// [`BackgroundWriter`]).
pub struct RecordWriter<'d> {
    dir: &'d WorkDir,
    file: BackgroundWriter<u32>,
    /// Records not handed to the writer yet (a buffer of words, so that a record's copy into it
    /// has the record's length, see [`extend_words`]).
    buffer: Vec<u32>,
    path: PathBuf,
    layout: Layout,
    records: u64,
}

impl<'d> RecordWriter<'d> {
    /// Words buffered before a write (1 MiB).
    const BUFFER_WORDS: usize = 1 << 18;

    /// Creates a new file in `dir`, named after `what`.
    pub fn create(dir: &'d WorkDir, what: &str, layout: Layout) -> Result<Self> {
        let path = dir.file(what);
        let file = File::create(&path).map_err(Error::io(&path))?;
        // three buffers: one filling, one being written, one written and waiting
        let (file, buffer) = BackgroundWriter::new(file, 3, Self::BUFFER_WORDS);
        Ok(RecordWriter {
            dir,
            file,
            buffer,
            path,
            layout,
            records: 0,
        })
    }

    /// Appends one record.
    #[inline]
    pub fn push(&mut self, record: &[u32]) -> Result<()> {
        debug_assert_eq!(record.len(), self.layout.width);
        // written before it would outgrow its 1 MiB (a width that does not divide it would
        // otherwise reallocate it to twice that, once per file)
        if self.buffer.len() + record.len() > Self::BUFFER_WORDS {
            self.write_buffer()?;
        }
        self.records += 1;
        extend_words(&mut self.buffer, record);
        Ok(())
    }

    fn write_buffer(&mut self) -> Result<()> {
        self.file
            .hand_over(&mut self.buffer)
            .map_err(Error::io(&self.path))
    }

    /// Writes what is buffered and returns a reader of the file, from its start.
    pub fn into_reader(mut self) -> Result<RecordReader> {
        self.write_buffer()?;
        self.file.finish().map_err(Error::io(&self.path))?;
        self.dir.wrote(self.records as usize * self.layout.bytes());
        RecordReader::open(self.path, self.layout, 1 << 20)
    }
}

/// Reads the records of a file written by [`RecordWriter`], and deletes the file when done
/// (unless opened by [`RecordStream::merge_files`], whose files belong to the caller).
pub struct RecordReader {
    input: File,
    path: PathBuf,
    remove: bool,
    layout: Layout,
    /// For a sorted run in frames ([`run_codec`]); `None` for records of fixed width.
    frames: Option<FrameReader>,
    /// Records read ahead, whole ones only; `block[pos..len]` not handed out yet.
    block: Vec<u32>,
    pos: usize,
    len: usize,
    /// Bytes of the file still to read (the end of a span).
    left: u64,
}

impl RecordReader {
    /// Reads `path` in blocks of about `buffer` bytes.
    fn open(path: PathBuf, layout: Layout, buffer: usize) -> Result<Self> {
        RecordReader::open_span(path, layout, buffer, 0..u64::MAX)
    }

    /// Reads the records of `path`, a file that stays in place (another task may read it).
    pub fn open_kept(path: PathBuf, layout: Layout) -> Result<Self> {
        let mut reader = RecordReader::open(path, layout, 1 << 20)?;
        reader.remove = false;
        Ok(reader)
    }

    /// Reads the records `span` (indices; the end may lie past the file's end) of `path`.
    fn open_span(path: PathBuf, layout: Layout, buffer: usize, span: Range<u64>) -> Result<Self> {
        let mut input = File::open(&path).map_err(Error::io(&path))?;
        let bytes = layout.bytes() as u64;
        if span.start > 0 {
            input
                .seek(SeekFrom::Start(span.start * bytes))
                .map_err(Error::io(&path))?;
        }
        let records = (buffer / layout.bytes()).max(1);
        Ok(RecordReader {
            input,
            path,
            remove: true,
            layout,
            frames: None,
            block: vec![0; records * layout.width],
            pos: 0,
            len: 0,
            left: (span.end.saturating_sub(span.start)).saturating_mul(bytes),
        })
    }

    /// Reads a sorted run written by a [`Sorter`] (in frames), deleting it when done.
    fn open_run(path: PathBuf, layout: Layout) -> Result<Self> {
        let input = File::open(&path).map_err(Error::io(&path))?;
        Ok(RecordReader {
            input,
            path,
            remove: true,
            layout,
            frames: Some(FrameReader::new()),
            block: Vec::new(),
            pos: 0,
            len: 0,
            left: u64::MAX,
        })
    }

    /// Reads the next block of whole records; `len` is 0 at the end of the file.
    fn refill(&mut self) -> Result<()> {
        if let Some(frames) = &mut self.frames {
            if !frames
                .next_frame(&mut self.input, &self.layout, &mut self.block)
                .map_err(Error::io(&self.path))?
            {
                self.block.clear();
            }
            self.pos = 0;
            self.len = self.block.len();
            return Ok(());
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.block);
        let want = bytes
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let bytes = &mut bytes[..want];
        let mut filled = 0;
        while filled < bytes.len() {
            match self.input.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.path)(e)),
            }
        }
        if filled % self.layout.bytes() != 0 {
            return Err(Error::io(&self.path)(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file ends inside a record (was it truncated?)",
            )));
        }
        self.pos = 0;
        self.len = filled / 4;
        self.left -= filled as u64;
        Ok(())
    }

    /// The next record, or `None` at the end of the file.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<&[u32]>> {
        self.fill()?;
        let start = self.pos;
        if start == self.len {
            return Ok(None);
        }
        self.pos += self.layout.width;
        Ok(Some(&self.block[start..self.pos]))
    }

    /// Reads the next block if every record of this one was handed out (or none was read yet),
    /// so that [`head`](RecordReader::head) is the next record.
    fn fill(&mut self) -> Result<()> {
        if self.pos == self.len {
            self.refill()?;
        }
        Ok(())
    }

    /// The next record without moving past it (after [`fill`](RecordReader::fill) or
    /// [`step`](RecordReader::step)); `None` at the end of the file.
    #[inline]
    fn head(&self) -> Option<&[u32]> {
        (self.pos < self.len).then(|| &self.block[self.pos..self.pos + self.layout.width])
    }

    /// Moves past the [`head`](RecordReader::head) record.
    #[inline]
    fn step(&mut self) -> Result<()> {
        self.pos += self.layout.width;
        self.fill()
    }

    /// Reads the next record into `record`; false at the end of the file.
    pub fn read_into(&mut self, record: &mut [u32]) -> Result<bool> {
        match self.next_record()? {
            Some(r) => {
                copy_words(record, r);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl Drop for RecordReader {
    fn drop(&mut self) {
        if self.remove {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A run being sorted and written in the background: its file, that of its prefix values (if
/// kept), the bytes written and its buffer (emptied) once done.
type PendingRun = std::thread::JoinHandle<Result<(PathBuf, Option<PathBuf>, usize, Vec<u32>)>>;

/// Sorts records within a memory budget, spilling sorted runs to disk. A full buffer is sorted
/// and written by a background thread while the next one fills. The two buffers are allocated
/// once (asking for huge pages) and take turns: fresh memory is slow to touch the first time,
/// and the sort's gathers read a buffer at random.
pub struct Sorter<'d> {
    /// The layout of the records pushed (with their prefix value, if any).
    layout: Layout,
    /// The layout of the prefix values kept apart, if any (see [`Sorter::with_prefix_values`]).
    prefix_values: Option<Layout>,
    combine: bool,
    buffer: Vec<u32>,
    /// The buffer of the last run written, empty, for the next run to fill.
    spare: Vec<u32>,
    capacity: usize,
    dir: &'d WorkDir,
    name: String,
    runs: Vec<PathBuf>,
    /// The prefix values of each run, beside it (with `prefix_values`).
    prefix_runs: Vec<PathBuf>,
    pending: Option<PendingRun>,
}

impl<'d> Sorter<'d> {
    /// A sorter that holds at most about `budget` bytes of records in memory (at least a few
    /// thousand records); `combine` adds up the first payload word of records with equal keys.
    pub fn new(layout: Layout, combine: bool, budget: usize, dir: &'d WorkDir, name: &str) -> Self {
        // the buffer filling, and the one being spilled: itself and the sort keys of its
        // records (a packed key and an index, 36 bytes at most; the keys' array is kept for
        // later runs, see `Recycled`); and a buffer's worth in reserve (it held the combined
        // copy of a run before counts were combined in place), which keeps the 5-gram of
        // Gutenberg at 1.64-1.69 GB under a 2 GiB budget, 0.89 GB under 1 GiB (November 28;
        // 1.76-1.83 GB under 2 GiB since November 29, the vocabulary's share counted closer;
        // 1.60-1.61 GB once buffers and keys are reused, the pages they do not need given back)
        let capacity = (budget / (3 * layout.bytes() + 36)).max(4096);
        Sorter {
            layout,
            prefix_values: None,
            combine,
            buffer: Vec::new(),
            spare: Vec::new(),
            capacity,
            dir,
            name: name.to_string(),
            runs: Vec::new(),
            prefix_runs: Vec::new(),
            pending: None,
        }
    }

    /// A sorter of records of `layout` (prefix order) that each carry one more word: a value of
    /// their first `prefix_len` key words, the same in all records that share them (the weight
    /// of an n-gram's context, say). The runs leave it out; beside each run, each of its
    /// records' prefixes is written once with its value (see `run_codec::PrefixValues`), no sort
    /// needed: [`Sorter::finish_with_prefix_values`] gives both, merged. Never combines.
    pub fn with_prefix_values(
        layout: Layout,
        prefix_len: usize,
        budget: usize,
        dir: &'d WorkDir,
        name: &str,
    ) -> Self {
        assert!(
            layout.order == KeyOrder::Prefix && (1..=layout.key_len).contains(&prefix_len),
            "prefix values are of leading key words in prefix order"
        );
        let pushed = Layout {
            width: layout.width + 1,
            ..layout
        };
        let mut sorter = Sorter::new(pushed, false, budget, dir, name);
        sorter.prefix_values = Some(Layout::new(prefix_len, 1, KeyOrder::Prefix));
        sorter
    }

    /// Adds one record.
    #[inline]
    pub fn push(&mut self, record: &[u32]) -> Result<()> {
        debug_assert_eq!(record.len(), self.layout.width);
        if self.buffer.capacity() == 0 {
            self.buffer = self.empty_buffer()?;
        }
        extend_words(&mut self.buffer, record);
        if self.buffer.len() == self.capacity * self.layout.width {
            self.spill()?;
        }
        Ok(())
    }

    /// The spare buffer, or one from the work directory's pool (see [`Recycled`]).
    fn empty_buffer(&mut self) -> Result<Vec<u32>> {
        if self.spare.capacity() > 0 {
            return Ok(std::mem::take(&mut self.spare));
        }
        let words = self.capacity * self.layout.width;
        self.dir
            .buffers
            .take(words)
            .map_err(|_| no_sort_memory("a sort buffer", words * 4))
    }

    /// Hands the full buffer to a background thread that sorts it and writes it as a run
    /// (after the previous run is done, so that at most two buffers exist).
    fn spill(&mut self) -> Result<()> {
        self.wait_for_run()?;
        let mut buffer = std::mem::take(&mut self.buffer);
        let path = self
            .dir
            .file(&format!("{}-run{}", self.name, self.runs.len()));
        let (layout, combine, prefix_values) = (self.layout, self.combine, self.prefix_values);
        let run_layout = self.run_layout();
        let prefix_path = prefix_values.map(|_| path.with_extension("prefixes"));
        let pool = Arc::clone(&self.dir.keys);
        self.pending = Some(std::thread::spawn(move || {
            let index = sorted_index(&mut buffer, layout, combine, &pool)?;
            let create = |path: &Path| -> Result<BufWriter<File>> {
                Ok(BufWriter::with_capacity(
                    1 << 20,
                    File::create(path).map_err(Error::io(path))?,
                ))
            };
            let mut out = create(&path)?;
            let mut prefix_out = prefix_path.as_deref().map(create).transpose()?;
            let prefixes = prefix_values
                .zip(prefix_out.as_mut())
                .map(|(layout, out)| run_codec::PrefixValues { layout, out });
            let written =
                run_codec::write_run(&buffer, index.as_slice(), &run_layout, &mut out, prefixes);
            index.recycle(&pool);
            let bytes = written
                .and_then(|bytes| out.flush().map(|()| bytes))
                .map_err(Error::io(&path))?;
            if let (Some(out), Some(path)) = (prefix_out.as_mut(), prefix_path.as_ref()) {
                out.flush().map_err(Error::io(path))?;
            }
            buffer.clear();
            Ok((path, prefix_path, bytes, buffer))
        }));
        Ok(())
    }

    /// Waits for the run being written, if any, and records it.
    fn wait_for_run(&mut self) -> Result<()> {
        if let Some(pending) = self.pending.take() {
            let (path, prefix_path, bytes, buffer) = pending
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            let spare = std::mem::replace(&mut self.spare, buffer);
            self.dir.buffers.put(spare);
            self.runs.push(path);
            self.prefix_runs.extend(prefix_path);
            self.dir.runs.fetch_add(1, Relaxed);
            self.dir.wrote(bytes);
        }
        Ok(())
    }

    /// Sorts what is left, writes it as a last run and returns the merge of all runs: after
    /// this the sorter's buffers are back in the work directory's pool, and the stream holds
    /// only read buffers.
    pub fn finish(self) -> Result<RecordStream> {
        debug_assert!(
            self.prefix_values.is_none(),
            "see finish_with_prefix_values"
        );
        self.finish_runs().map(|(records, _)| records)
    }

    /// [`Sorter::finish`] of a sorter [`with_prefix_values`](Sorter::with_prefix_values): the
    /// records (without their values), and the prefix values `[prefix, value]` in prefix order
    /// (a prefix once per run and frame that holds it, the copies side by side).
    pub fn finish_with_prefix_values(self) -> Result<(RecordStream, RecordStream)> {
        let (records, values) = self.finish_runs()?;
        Ok((records, values.expect("a sorter with prefix values")))
    }

    /// The layout of the runs: that of the records pushed, less their prefix value.
    fn run_layout(&self) -> Layout {
        Layout {
            width: self.layout.width - usize::from(self.prefix_values.is_some()),
            ..self.layout
        }
    }

    fn finish_runs(mut self) -> Result<(RecordStream, Option<RecordStream>)> {
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        self.wait_for_run()?;
        // (the buffer being filled was handed to the last run: the spare is all that is left)
        self.dir.buffers.put(std::mem::take(&mut self.spare));
        let merge = |runs: Vec<PathBuf>, layout: Layout, combine: bool| {
            let readers = runs
                .into_iter()
                .map(|path| RecordReader::open_run(path, layout))
                .collect::<Result<Vec<_>>>()?;
            RecordStream::new(layout, combine, readers)
        };
        let records = merge(
            std::mem::take(&mut self.runs),
            self.run_layout(),
            self.combine,
        )?;
        let values = self
            .prefix_values
            .map(|layout| merge(std::mem::take(&mut self.prefix_runs), layout, false))
            .transpose()?;
        Ok((records, values))
    }
}

/// Keys packed into a `u128` whose integer order is the layout's key order: the words as the
/// digits of a number, the most significant one first (the last word for suffix order). Word
/// values are those of the buffer, at most `max`, or [`PAD`], packed as `max + 1`.
struct PackedKeys {
    layout: Layout,
    max: u32,
    digits: Digits,
    /// Bits of the largest key.
    bits: u32,
}

/// How a key's words become one number.
#[derive(Clone, Copy)]
enum Digits {
    /// A whole number of bits per word: the fastest to pack.
    Bits(u32),
    /// Base `max + 2`: fewer bits where a whole number of bits per word would not leave room
    /// for the record's index beside the key. Gutenberg's 1.29 M words take 21 bits, 105 for a
    /// 5-gram's key (a run of 8 M records at most beside it), but 101.5 bits in base 1.29 M + 1.
    Base(u64),
}

impl PackedKeys {
    /// The packing for the keys of `buffer` that leaves `spare` bits of the 128 free where it can,
    /// if they fit in 128 bits.
    fn for_records(buffer: &[u32], layout: Layout, spare: u32) -> Option<Self> {
        let max = buffer
            .par_chunks_exact(layout.width)
            .map(|r| {
                r[..layout.key_len]
                    .iter()
                    .copied()
                    .filter(|&w| w != PAD)
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let len = u32::try_from(layout.key_len).ok()?;
        let base = u64::from(max) + 2;
        let word_bits = 64 - (base - 1).leading_zeros();
        let (digits, bits) = if word_bits * len + spare <= 128 {
            (Digits::Bits(word_bits), word_bits * len)
        } else {
            let keys = u128::from(base).checked_pow(len)?;
            (Digits::Base(base), 128 - (keys - 1).leading_zeros())
        };
        Some(PackedKeys {
            layout,
            max,
            digits,
            bits,
        })
    }

    #[inline]
    fn key(&self, record: &[u32]) -> u128 {
        match self.digits {
            Digits::Bits(bits) => self.fold(record, |k, w| k << bits | w),
            Digits::Base(base) => self.fold(record, |k, w| k * u128::from(base) + w),
        }
    }

    /// The words of `record`'s key, most significant first, folded into a number by `digit`.
    #[inline(always)]
    fn fold(&self, record: &[u32], digit: impl Fn(u128, u128) -> u128) -> u128 {
        let word =
            |k: u128, &w: &u32| digit(k, u128::from(if w == PAD { self.max + 1 } else { w }));
        let key = &record[..self.layout.key_len];
        match self.layout.order {
            KeyOrder::Prefix => key.iter().fold(0, word),
            KeyOrder::Suffix => key.iter().rev().fold(0, word),
            KeyOrder::Context => {
                let (context, last) = key.split_at(key.len() - 1);
                word(context.iter().rev().fold(0, word), &last[0])
            }
        }
    }
}

impl Drop for Sorter<'_> {
    fn drop(&mut self) {
        // a run still being written (after an error elsewhere) must be on disk before its work
        // directory is removed
        if let Some(pending) = self.pending.take() {
            let _ = pending.join();
        }
    }
}

/// The error of an allocation of `bytes` for `what` that failed.
fn no_sort_memory(what: &str, bytes: usize) -> Error {
    Error::invalid(format!(
        "cannot allocate {what} of {} MiB for the memory budget: give a smaller budget \
         (-S / memory=)",
        bytes >> 20
    ))
}

/// The numbers of `buffer`'s records in sorted order (sorted in an array of keys from `pool`
/// where they pack into 128 bits with the number); with `combine`, only the first record of
/// each key, with the counts of the others added to it (see [`combine_in_place`]).
fn sorted_index(
    buffer: &mut [u32],
    layout: Layout,
    combine: bool,
    pool: &Recycled<u128>,
) -> Result<SortedIndex> {
    let width = layout.width;
    let records = buffer.len() / width;
    // bits of a record's index
    let index_bits = 32 - (records.saturating_sub(1) as u32).leading_zeros();
    match PackedKeys::for_records(buffer, layout, index_bits) {
        Some(packed) if packed.bits + index_bits <= 128 => {
            // each key as a 128-bit integer that compares as the record does, with the record's
            // index in its low bits: the fastest sort (16-byte items)
            let mut keys = pool
                .take(records)
                .map_err(|_| no_sort_memory("the keys of a sort", records * 16))?;
            keys.par_extend(
                buffer
                    .par_chunks_exact(width)
                    .enumerate()
                    .map(|(i, r)| packed.key(r) << index_bits | i as u128),
            );
            keys.par_sort_unstable();
            let len = numbers_over_keys(
                &mut keys[..records],
                index_bits,
                combine.then_some((buffer, layout)),
            )?;
            Ok(SortedIndex::InKeys { keys, len })
        }
        Some(packed) => {
            // the keys as 128-bit integers that compare as the records do: a fast sort
            let mut keys: Vec<(u128, u32)> = huge_pages::par_collect(
                buffer
                    .par_chunks_exact(width)
                    .enumerate()
                    .map(|(i, r)| (packed.key(r), i as u32)),
            );
            keys.par_sort_unstable_by_key(|&(k, _)| k);
            let index = keys.into_iter().map(|(_, i)| i).collect();
            combined(buffer, index, layout, combine)
        }
        None => {
            let mut index: Vec<u32> = (0..records as u32).collect();
            let record = |i: u32| &buffer[i as usize * width..(i as usize + 1) * width];
            index.par_sort_unstable_by(|&a, &b| layout.compare(record(a), record(b)));
            combined(buffer, index, layout, combine)
        }
    }
}

/// `index` (the numbers of `buffer`'s records in sorted order), combined if `combine`.
fn combined(
    buffer: &mut [u32],
    mut index: Vec<u32>,
    layout: Layout,
    combine: bool,
) -> Result<SortedIndex> {
    if combine {
        let kept = combine_in_place(buffer, &mut index, layout)?;
        index.truncate(kept);
    }
    Ok(SortedIndex::Own(index))
}

/// Writes the record numbers held in the low `index_bits` of the sorted `keys` over them, as
/// `u32`s from the front (number k, bytes 4k..4k + 4, lies in key k / 4, read before); returns
/// how many. With `combine` (the records and their layout), records of equal keys are combined
/// as [`combine_in_place`] does, but found equal by their packed keys, side by side: only the
/// records of repeated keys are read (their counts added).
fn numbers_over_keys(
    keys: &mut [u128],
    index_bits: u32,
    combine: Option<(&mut [u32], Layout)>,
) -> Result<usize> {
    let mask = (1u128 << index_bits) - 1;
    let number = |key: u128| (key & mask) as u32;
    let Some((buffer, layout)) = combine else {
        for k in 0..keys.len() {
            let n = number(keys[k]);
            bytemuck::cast_slice_mut::<u128, u32>(keys)[k] = n;
        }
        return Ok(keys.len());
    };
    let count = |n: u32| n as usize * layout.width + layout.key_len;
    let mut kept = 0;
    let mut first: Option<(u128, u32)> = None;
    for k in 0..keys.len() {
        let (key, n) = (keys[k] >> index_bits, number(keys[k]));
        match first {
            Some((first_key, first_n)) if first_key == key => {
                let more = buffer[count(n)];
                add_count(&mut buffer[count(first_n)], more)?;
            }
            _ => {
                bytemuck::cast_slice_mut::<u128, u32>(keys)[kept] = n;
                kept += 1;
                first = Some((key, n));
            }
        }
    }
    Ok(kept)
}

/// Combines the records of equal keys of `buffer` (sorted by `index`): adds their counts (the
/// first payload word) into the first record of each key, and moves those to the front of
/// `index`; returns how many there are.
fn combine_in_place(buffer: &mut [u32], index: &mut [u32], layout: Layout) -> Result<usize> {
    let (width, count) = (layout.width, layout.key_len);
    let mut kept = 0;
    for k in 0..index.len() {
        // the records are read in sorted order, from all over the buffer: fetch ahead
        prefetch_ahead(k, index.len(), |ahead| {
            buffer.get(index[ahead] as usize * width)
        });
        let i = index[k] as usize * width;
        if kept > 0 {
            let first = index[kept - 1] as usize * width;
            if layout.compare(&buffer[first..first + width], &buffer[i..i + width])
                == Ordering::Equal
            {
                let more = buffer[i + count];
                add_count(&mut buffer[first + count], more)?;
                continue;
            }
        }
        index[kept] = index[k];
        kept += 1;
    }
    Ok(kept)
}

fn add_count(into: &mut u32, count: u32) -> Result<()> {
    *into = into.checked_add(count).ok_or_else(|| {
        Error::Overflow("an n-gram count exceeds 2^32 - 1 occurrences".to_string())
    })?;
    Ok(())
}

/// The head record of source `s` of a merge; `None` for a source at its end or past the last one.
#[inline]
fn head_of(sources: &[RecordReader], s: usize) -> Option<&[u32]> {
    sources.get(s).and_then(RecordReader::head)
}

/// A head record's place in a merge, as two integers compared in turn: the first
/// [`WORDS`](MergeKey::WORDS) words of its key, most significant first (the layout's order),
/// then its source, so that equal keys come out lowest source first. A key is made once per
/// record and compared at each level of the tree, without the records' slices, lengths and
/// bounds checks (the merge's comparisons went from 12 % to 6 % of a 5-gram estimation's CPU).
/// Longer keys compare their other words, from the records, only when these five tie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct MergeKey {
    /// Words 1-4 (absent ones 0).
    first_words: u128,
    /// Word 5 in the high half, the source in the low one.
    fifth_word_and_source: u64,
}

impl MergeKey {
    /// Key words held.
    const WORDS: usize = 5;

    /// After every record: the key of a source at its end, or past the last one (a record's
    /// source is below `u32::MAX`).
    const END: MergeKey = MergeKey {
        first_words: u128::MAX,
        fifth_word_and_source: u64::MAX,
    };

    /// The key of source `s`'s head.
    #[inline]
    fn of_head(layout: &Layout, sources: &[RecordReader], s: usize) -> MergeKey {
        let Some(record) = head_of(sources, s) else {
            return MergeKey::END;
        };
        let key = &record[..layout.key_len];
        let mut words = [0u32; MergeKey::WORDS];
        match layout.order {
            KeyOrder::Prefix => words.iter_mut().zip(key).for_each(|(w, &k)| *w = k),
            KeyOrder::Suffix => words
                .iter_mut()
                .zip(key.iter().rev())
                .for_each(|(w, &k)| *w = k),
            KeyOrder::Context => {
                let (context, last) = key.split_at(key.len() - 1);
                words
                    .iter_mut()
                    .zip(context.iter().rev().chain(last))
                    .for_each(|(w, &k)| *w = k);
            }
        }
        let source = u32::try_from(s).expect("fewer than 2^32 - 1 sources");
        debug_assert!(source < u32::MAX);
        MergeKey {
            first_words: words[..4].iter().fold(0, |k, &w| (k << 32) | u128::from(w)),
            fifth_word_and_source: u64::from(words[4]) << 32 | u64::from(source),
        }
    }

    /// Whether the two keys' words are equal (whatever their sources).
    #[inline]
    fn same_words(self, other: MergeKey) -> bool {
        self.first_words == other.first_words
            && self.fifth_word_and_source >> 32 == other.fifth_word_and_source >> 32
    }
}

/// The records (by index) of a file in prefix order (`layout`) whose first key word lies in
/// `first`: found by binary search, reading one word per step.
pub fn first_word_span(path: &Path, layout: Layout, first: Range<u32>) -> Result<Range<u64>> {
    use std::os::unix::fs::FileExt;
    debug_assert_eq!(layout.order, KeyOrder::Prefix);
    let file = File::open(path).map_err(Error::io(path))?;
    let bytes = layout.bytes() as u64;
    let len = file.metadata().map_err(Error::io(path))?.len();
    if len % bytes != 0 {
        return Err(Error::io(path)(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the file ends inside a record (was it truncated?)",
        )));
    }
    let first_word = |i: u64| -> Result<u32> {
        let mut word = [0u8; 4];
        file.read_exact_at(&mut word, i * bytes)
            .map_err(Error::io(path))?;
        Ok(u32::from_ne_bytes(word))
    };
    // the first record whose first word is >= `bound`
    let lower_bound = |bound: u32| -> Result<u64> {
        let (mut lo, mut hi) = (0, len / bytes);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if first_word(mid)? < bound {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    };
    Ok(lower_bound(first.start)?..lower_bound(first.end)?)
}

/// Sorted records, merged from runs on disk: a tournament tree of losers over the sources picks
/// the smallest head record in one comparison per level, and records are handed out where their
/// source read them (copied only to add up the counts of equal keys).
pub struct RecordStream {
    layout: Layout,
    combine: bool,
    sources: Vec<RecordReader>,
    /// `tree[0]`: the source of the smallest head; `tree[node]` for `node` in `1..leaves`
    /// (`leaves`: the tree's length, a power of two): the loser of the match at that node (leaf
    /// `leaves + i` is source `i`; sources past the last one, and those at their end, lose every
    /// match).
    tree: Vec<usize>,
    /// The [`MergeKey`] of each leaf's head ([`MergeKey::END`] past the sources' ends), which
    /// the matches compare.
    keys: Vec<MergeKey>,
    /// The source whose head was handed out by the last [`next_record`](RecordStream::next_record),
    /// to move past before the next one.
    handed_out: Option<usize>,
    current: Vec<u32>,
}

impl RecordStream {
    fn new(layout: Layout, combine: bool, mut sources: Vec<RecordReader>) -> Result<Self> {
        for source in &mut sources {
            source.fill()?;
        }
        let leaves = sources.len().next_power_of_two();
        let keys = (0..leaves)
            .map(|s| MergeKey::of_head(&layout, &sources, s))
            .collect();
        let mut stream = RecordStream {
            layout,
            combine,
            sources,
            tree: vec![0; leaves],
            keys,
            handed_out: None,
            current: vec![0; layout.width],
        };
        if leaves > 1 {
            stream.tree[0] = stream.play(1);
        }
        Ok(stream)
    }

    /// Plays the matches of the subtree at `node`: records their losers, returns the winner.
    fn play(&mut self, node: usize) -> usize {
        let leaves = self.tree.len();
        if node >= leaves {
            return node - leaves;
        }
        let (a, b) = (self.play(2 * node), self.play(2 * node + 1));
        let (winner, loser) = if self.before(b, a) { (b, a) } else { (a, b) };
        self.tree[node] = loser;
        winner
    }

    /// Whether source `a`'s head comes before source `b`'s (equal keys: the lower source first;
    /// a source at its end, or past the last one, comes after every other).
    #[inline]
    fn before(&self, a: usize, b: usize) -> bool {
        let (x, y) = (self.keys[a], self.keys[b]);
        if self.layout.key_len > MergeKey::WORDS && x.same_words(y) {
            return self.before_by_records(a, b);
        }
        x < y
    }

    /// [`before`](RecordStream::before) by the whole records.
    fn before_by_records(&self, a: usize, b: usize) -> bool {
        let head = |s| head_of(&self.sources, s);
        match (head(a), head(b)) {
            (Some(x), Some(y)) => match self.layout.compare(x, y) {
                Ordering::Equal => a < b,
                o => o == Ordering::Less,
            },
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => a < b,
        }
    }

    /// Moves source `s` (the winner) past its head and replays its matches up to the root.
    fn advance(&mut self, s: usize) -> Result<()> {
        self.sources[s].step()?;
        self.keys[s] = MergeKey::of_head(&self.layout, &self.sources, s);
        let mut winner = s;
        let leaf = self.tree.len() + s;
        let mut node = leaf / 2;
        while node > 0 {
            let loser = self.tree[node];
            if self.before(loser, winner) {
                self.tree[node] = winner;
                winner = loser;
            }
            node /= 2;
        }
        self.tree[0] = winner;
        Ok(())
    }

    /// The merge of sorted files of records (each in `layout`'s order), read in blocks that
    /// share `budget` bytes; the files are left in place (a retried task reads them again).
    pub fn merge_files(
        paths: &[PathBuf],
        layout: Layout,
        combine: bool,
        budget: usize,
    ) -> Result<Self> {
        let spans: Vec<(PathBuf, Range<u64>)> =
            paths.iter().map(|p| (p.clone(), 0..u64::MAX)).collect();
        RecordStream::merge_spans(&spans, layout, combine, budget)
    }

    /// [`merge_files`](RecordStream::merge_files) of spans of records (by index) of the files.
    pub fn merge_spans(
        spans: &[(PathBuf, Range<u64>)],
        layout: Layout,
        combine: bool,
        budget: usize,
    ) -> Result<Self> {
        let buffer = (budget / (spans.len() + 1)).clamp(1 << 16, 1 << 22);
        let readers = spans
            .iter()
            .map(|(path, span)| {
                let mut reader =
                    RecordReader::open_span(path.clone(), layout, buffer, span.clone())?;
                reader.remove = false;
                Ok(reader)
            })
            .collect::<Result<Vec<_>>>()?;
        RecordStream::new(layout, combine, readers)
    }

    /// The next record in key order, or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<&[u32]>> {
        if let Some(s) = self.handed_out.take() {
            self.advance(s)?;
        }
        let winner = self.tree[0];
        if !self.combine {
            let head = head_of(&self.sources, winner);
            self.handed_out = head.is_some().then_some(winner);
            return Ok(head);
        }
        let Some(head) = head_of(&self.sources, winner) else {
            return Ok(None);
        };
        copy_words(&mut self.current, head);
        self.advance(winner)?;
        let k = self.layout.key_len;
        loop {
            let winner = self.tree[0];
            match head_of(&self.sources, winner) {
                Some(r) if self.layout.compare(r, &self.current) == Ordering::Equal => {
                    add_count(&mut self.current[k], r[k])?;
                    self.advance(winner)?;
                }
                _ => return Ok(Some(&self.current)),
            }
        }
    }
}

/// Every record of `records`, copied, in order (for tests).
#[cfg(test)]
pub(crate) fn collect(mut records: impl Records) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    while let Some(r) = records.next_record().unwrap() {
        out.push(r.to_vec());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `records` sorted as `layout` compares them, those of equal keys combined into the first
    /// (counts, the first payload word, added): what a combining [`Sorter`] gives.
    fn sorted_and_combined(mut records: Vec<Vec<u32>>, layout: Layout) -> Vec<Vec<u32>> {
        records.sort_by(|a, b| layout.compare(a, b));
        records.dedup_by(|b, a| {
            let equal = layout.compare(a, b) == Ordering::Equal;
            if equal {
                a[layout.key_len] += b[layout.key_len];
            }
            equal
        });
        records
    }

    fn records(n: u32) -> Vec<[u32; 3]> {
        // pseudo-random keys with many repeats
        (0..n)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                [h % 7, (h >> 8) % 5, 1]
            })
            .collect()
    }

    #[test]
    fn packed_keys_sort_and_combine_as_the_layout_compares() {
        // small ids with padding (keys and index packed in 128 bits), 23-bit ids (keys and
        // index in 128 bits only in base max + 2), 24-bit ids (keys packed alone) and ids too
        // large for a 5-word key in 128 bits (compared); one pool of key arrays for all, so
        // that later sorts reuse the arrays of earlier ones
        let pool = Recycled::<u128>::default();
        for (len, scale) in [
            (3usize, 1000u32),
            (5, 1000),
            (5, 5 << 20),
            (5, 1 << 24),
            (5, 1 << 30),
        ] {
            for order in [KeyOrder::Prefix, KeyOrder::Suffix, KeyOrder::Context] {
                let layout = Layout::new(len, 1, order);
                let mut buffer = Vec::new();
                for i in 0..20_000u32 {
                    // each key about three times
                    let h = (i % 7000).wrapping_mul(2_654_435_761);
                    for j in 0..len as u32 {
                        let w = (h >> (j * 3)) % 11;
                        buffer.push(if w == 10 { PAD } else { w * (scale / 10) });
                    }
                    buffer.push(i % 3 + 1);
                }
                let packed = PackedKeys::for_records(&buffer, layout, 0);
                assert_eq!(packed.is_some(), scale < (1 << 25), "{len} {scale}");
                // 20 000 records: 15 bits of index
                let with_index = PackedKeys::for_records(&buffer, layout, 15);
                let in_base = matches!(with_index.map(|p| p.digits), Some(Digits::Base(_)));
                assert_eq!(
                    in_base,
                    scale == 5 << 20 || scale == 1 << 24,
                    "{len} {scale}"
                );
                let index = sorted_index(&mut buffer, layout, false, &pool).unwrap();
                let mut expected: Vec<&[u32]> = buffer.chunks_exact(len + 1).collect();
                expected.sort_by(|a, b| layout.compare(a, b));
                let got: Vec<&[u32]> = index
                    .as_slice()
                    .iter()
                    .map(|&i| &buffer[i as usize * (len + 1)..][..=len])
                    .collect();
                for (g, e) in got.iter().zip(&expected) {
                    assert_eq!(layout.compare(g, e), Ordering::Equal);
                }
                assert_eq!(got.len(), expected.len());
                index.recycle(&pool);
                // combined: the first record of each key, with the counts of all added up
                let expected = sorted_and_combined(
                    buffer.chunks_exact(len + 1).map(<[u32]>::to_vec).collect(),
                    layout,
                );
                let index = sorted_index(&mut buffer, layout, true, &pool).unwrap();
                let got: Vec<Vec<u32>> = index
                    .as_slice()
                    .iter()
                    .map(|&i| buffer[i as usize * (len + 1)..][..=len].to_vec())
                    .collect();
                assert!(got.len() < 20_000, "{len} {scale}: some keys repeat");
                assert_eq!(got, expected, "{len} {scale} {order:?}");
                index.recycle(&pool);
            }
        }
    }

    #[test]
    fn spilled_and_in_memory_sorts_agree_and_combine_counts() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        for order in [KeyOrder::Prefix, KeyOrder::Suffix, KeyOrder::Context] {
            let layout = Layout::new(2, 1, order);
            let input = records(50_000);
            let run = |budget: usize| {
                let mut s = Sorter::new(layout, true, budget, &dir, "t");
                for r in &input {
                    s.push(r).unwrap();
                }
                collect(s.finish().unwrap())
            };
            let small = run(0); // 4096-record runs: 13 of them
            let large = run(1 << 30);
            assert_eq!(small, large);
            let total: u32 = small.iter().map(|r| r[2]).sum();
            assert_eq!(total, 50_000);
            assert_eq!(small.len(), 35);
            for w in small.windows(2) {
                assert_eq!(layout.compare(&w[0], &w[1]), Ordering::Less);
            }
        }
        let files = fs::read_dir(&dir.path).unwrap().count();
        assert_eq!(files, 0, "runs are deleted once merged");
        // 50 000 records in runs of 4096: 13 runs per small sort, 1 per large one
        assert_eq!(dir.runs(), 3 * (13 + 1));
    }

    #[test]
    fn prefix_values_come_out_beside_the_records_in_prefix_order() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let layout = Layout::new(3, 1, KeyOrder::Prefix);
        // 3-word keys, each record with a payload word and the value of its first two words
        let value = |a: u32, b: u32| a * 1000 + b;
        let input: Vec<[u32; 5]> = (0..30_000u32)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                let (a, b) = (h % 13, (h >> 8) % 11);
                [a, b, i, h >> 16, value(a, b)]
            })
            .collect();
        for budget in [0, 1 << 30] {
            let mut sorter = Sorter::with_prefix_values(layout, 2, budget, &dir, "p");
            for r in &input {
                sorter.push(r).unwrap();
            }
            let (records, values) = sorter.finish_with_prefix_values().unwrap();
            let mut expected: Vec<Vec<u32>> = input.iter().map(|r| r[..4].to_vec()).collect();
            expected.sort();
            assert_eq!(collect(records), expected, "budget {budget}");
            // each prefix (13 * 11 of them) at least once, copies side by side, in order
            let mut values = collect(values);
            assert!(values.iter().all(|v| v[2] == value(v[0], v[1])));
            assert!(values.windows(2).all(|w| w[0] <= w[1]));
            values.dedup();
            assert_eq!(values.len(), 13 * 11, "budget {budget}");
        }
        assert_eq!(fs::read_dir(&dir.path).unwrap().count(), 0);
    }

    #[test]
    fn merges_order_keys_of_any_length_and_pad_words() {
        // 1-, 5- and 7-word keys; the 7-word ones tie in the five words a merge key holds and
        // differ after them; PAD words sort after every id
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        for key_len in [1usize, 5, 7] {
            for order in [KeyOrder::Prefix, KeyOrder::Suffix, KeyOrder::Context] {
                let layout = Layout::new(key_len, 1, order);
                let input: Vec<Vec<u32>> = (0..20_000u32)
                    .map(|i| {
                        let h = i.wrapping_mul(2_654_435_761);
                        let mut r: Vec<u32> = (0..key_len as u32)
                            .map(|k| match (h >> (3 * k)) % 4 {
                                3 => PAD,
                                w => w + u32::from(key_len == 7 && !(2..=4).contains(&k)) * 9,
                            })
                            .collect();
                        r.push(1);
                        r
                    })
                    .collect();
                let mut sorter = Sorter::new(layout, true, 0, &dir, "t");
                for r in &input {
                    sorter.push(r).unwrap();
                }
                let merged = collect(sorter.finish().unwrap());
                let expected = sorted_and_combined(input, layout);
                assert_eq!(merged, expected, "{key_len} words, {order:?}");
            }
        }
    }

    #[test]
    fn suffix_order_groups_shared_suffixes() {
        let layout = Layout::new(2, 0, KeyOrder::Suffix);
        assert_eq!(layout.compare(&[9, 1], &[0, 2]), Ordering::Less);
        assert_eq!(layout.compare(&[0, 2], &[1, 2]), Ordering::Less);
        let prefix = Layout::new(2, 0, KeyOrder::Prefix);
        assert_eq!(prefix.compare(&[9, 1], &[0, 2]), Ordering::Greater);
    }

    #[test]
    fn context_order_sorts_contexts_in_suffix_order_then_the_last_word() {
        let layout = Layout::new(3, 0, KeyOrder::Context);
        // contexts (w1 w2) compare by w2 first, then w1; the last word only within a context
        assert_eq!(layout.compare(&[9, 1, 9], &[0, 2, 0]), Ordering::Less);
        assert_eq!(layout.compare(&[0, 2, 9], &[1, 2, 0]), Ordering::Less);
        assert_eq!(layout.compare(&[1, 2, 0], &[1, 2, 9]), Ordering::Less);
        assert_eq!(layout.compare(&[1, 2, 3], &[1, 2, 3]), Ordering::Equal);
        let positions: Vec<usize> = (0..4)
            .map(|k| Layout::new(4, 1, KeyOrder::Context).key_position(k))
            .collect();
        assert_eq!(positions, [2, 1, 0, 3]);
        assert_eq!(Layout::new(1, 1, KeyOrder::Context).key_position(0), 0);
    }

    #[test]
    fn records_round_trip_through_files_and_files_are_removed() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let layout = Layout::new(1, 2, KeyOrder::Prefix);
        let mut w = RecordWriter::create(&dir, "w", layout).unwrap();
        let path = w.path.clone();
        w.push(&[1, 2, 3]).unwrap();
        w.push(&[4, 5, 6]).unwrap();
        let mut r = w.into_reader().unwrap();
        assert_eq!(r.next_record().unwrap(), Some(&[1, 2, 3][..]));
        assert_eq!(r.next_record().unwrap(), Some(&[4, 5, 6][..]));
        assert_eq!(r.next_record().unwrap(), None);
        drop(r);
        assert!(!path.exists());
        let parent = dir.path.clone();
        drop(dir);
        assert!(!parent.exists());
    }

    #[test]
    fn spans_by_first_word_merge_what_they_cover_and_keep_their_files() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let layout = Layout::new(2, 1, KeyOrder::Prefix);
        // two sorted files: first words 0, 2, 2, 5 and 1, 2, 7
        let files: Vec<PathBuf> = [
            &[[0, 9, 1], [2, 1, 1], [2, 4, 1], [5, 0, 1]][..],
            &[[1, 1, 1], [2, 2, 1], [7, 7, 1]],
        ]
        .iter()
        .map(|rows| {
            let path = dir.file("f");
            let bytes: Vec<u8> = rows
                .iter()
                .flat_map(|r| bytemuck::cast_slice(r).to_vec())
                .collect();
            fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
        assert_eq!(first_word_span(&files[0], layout, 2..5).unwrap(), 1..3);
        assert_eq!(first_word_span(&files[1], layout, 2..5).unwrap(), 1..2);
        assert_eq!(first_word_span(&files[0], layout, 6..9).unwrap(), 4..4);
        assert_eq!(
            first_word_span(&files[1], layout, 0..u32::MAX).unwrap(),
            0..3
        );
        let spans: Vec<(PathBuf, Range<u64>)> = files
            .iter()
            .map(|f| (f.clone(), first_word_span(f, layout, 1..3).unwrap()))
            .collect();
        let merged = collect(RecordStream::merge_spans(&spans, layout, false, 1 << 16).unwrap());
        assert_eq!(
            merged,
            vec![vec![1, 1, 1], vec![2, 1, 1], vec![2, 2, 1], vec![2, 4, 1]]
        );
        assert!(
            files.iter().all(|f| f.exists()),
            "inputs stay for a retried task"
        );
        fs::write(&files[1], [0u8; 5]).unwrap();
        let err = first_word_span(&files[1], layout, 0..1).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
    }
}
