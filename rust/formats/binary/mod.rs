//! fastppl's own binary model format: written once, loaded by memory-mapping the file, so that
//! loading does no per-n-gram work (the probing tables are used in place, straight from the page
//! cache).
//!
//! ## Layout (version 1, every number little-endian)
//! ```text
//! offset  size  field
//!      0     8  magic b"\x89FPPL\r\n\x1a" (the \r\n and \x1a catch text-mode mangling)
//!      8     4  format version (u32, 1)
//!     12     4  endianness marker 0x01020304 (u32; bytes 04 03 02 01 in a little-endian file)
//!     16     8  file length in bytes (u64): catches truncation before anything else
//!     24     8  checksum: xxh3-64 of the whole file with these 8 bytes read as zero
//!     32     8  header length in bytes (u64): the fixed part, strings, discounts, sections table
//!     40     4  order N (u32)
//!     44     4  number of sections (u32, 5 + 2 (N - 1))
//!     48     1  bos_eos (0/1)
//!     49     1  fallback (0 chain, 1 flat)
//!     50     1  normalized (0/1)
//!     51     1  has training counts (0/1)
//!     52     4  reserved (0)
//!     56     8  missing_weight (f64)
//!     64     8  vocabulary size V (u64, reserved tokens included)
//!     72     4  smoothing name length S (u32)
//!     76     4  number of discount triples D (u32, at most N)
//!     80     S  smoothing name (UTF-8), zero-padded to a multiple of 8
//!      .  24 D  discounts (D1, D2, D3+) per order (f64)
//!      .  40 K  section table, one 40-byte row per section:
//!               kind (u32), order (u32), offset (u64), byte length (u64),
//!               element count (u64), extra (u64: the number of entries of a slot table)
//! ```
//! Sections follow in this order, each starting at a multiple of 64 bytes (zero padding between):
//!
//! | kind | order | content                                                          |
//! |------|-------|------------------------------------------------------------------|
//! | 1    | 1     | byte length of each word (u32 × V)                               |
//! | 2    | 1     | the words' UTF-8 bytes, concatenated in id order                 |
//! | 3    | 1     | ln p of each word (f64 × V)                                      |
//! | 4    | 1     | ln weight of each word as a context (f64 × V)                    |
//! | 5    | 1     | raw unigram counts (u32 × V, or empty when the model has none)   |
//! | 6    | m     | the probing table of order m: slots of 24 bytes (key u64, ln p f64, ln weight f64), exactly as [`ProbingTable`] holds them; extra = number of occupied slots |
//! | 7    | m     | raw counts of order m by slot (u32 × slots, or empty)            |
//!
//! with kinds 6 and 7 repeated for m = 2..=N.
//!
//! ## Loading
//! The file is mapped read-only; the slot tables become views into the mapping
//! ([`MappedSlice`]), and the small per-word arrays and the count arrays are copied. The
//! vocabulary's hash map is rebuilt (O(V)). Everything the code relies on is validated before a
//! view is made: magic, version, endianness, file length, section bounds, alignment and sizes,
//! element counts against V and against each other, UTF-8 and uniqueness of the words, and that
//! every slot table has at least one empty slot and at most `u32::MAX` slots (lookups stop at an
//! empty slot; slot numbers are `u32`). With `verify` (the default) the checksum is checked and
//! every occupied slot is checked too: its word is a vocabulary id, its prefix an occupied slot
//! of the order below, and the number of occupied slots the one the header states. Without
//! `verify` the body is trusted: a corrupted body then gives wrong numbers (or a clean error, or
//! a panic turned into an exception when writing it as ARPA, or, if corruption filled every
//! empty slot of a table, a lookup that never ends) but never undefined behavior, since every
//! access is bounds-checked.
//!
//! ## Safety
//! No `unsafe` block here: mapping the file ([`FileBytes::map`]) is unsafe because the file could
//! be changed by another process while mapped; [`save`] writes a temporary file and renames it over
//! the target, so re-saving a model over the file it was loaded from replaces the file rather
//! than changing the mapped bytes. The views into the mapping are [`MappedSlice`]s, whose one
//! `unsafe` block is explained in [`crate::util::mapped`].

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use xxhash_rust::xxh3::Xxh3;

use crate::corpus::vocab::{Vocab, RESERVED};
use crate::error::{Error, Result};
use crate::model::{Fallback, Model, OrderTable};
use crate::ngram::keys::{key_prefix, key_word, EMPTY, MAX_ORDER};
use crate::ngram::probing::{ProbingTable, Slot};
use crate::util::atomic::AtomicFile;
use crate::util::job::Job;
use crate::util::mapped::{FileBytes, MappedSlice};

/// The first 8 bytes of every fastppl binary model file.
pub const MAGIC: [u8; 8] = *b"\x89FPPL\r\n\x1a";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
const ENDIAN_MARK: u32 = 0x0102_0304;
/// Sections start at multiples of this (a cache line; also any element's alignment).
pub const ALIGN: usize = 64;
const FIXED_HEADER: usize = 80;
const CHECKSUM_AT: usize = 24;
const ROW: usize = 40;

const KIND_WORD_LENGTHS: u32 = 1;
const KIND_WORD_BYTES: u32 = 2;
const KIND_UNIGRAM_LOGP: u32 = 3;
const KIND_UNIGRAM_WEIGHT: u32 = 4;
const KIND_UNIGRAM_COUNTS: u32 = 5;
const KIND_SLOTS: u32 = 6;
const KIND_COUNTS: u32 = 7;

fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

/// One section to write.
struct SectionBytes<'a> {
    kind: u32,
    order: u32,
    bytes: &'a [u8],
    count: u64,
    extra: u64,
}

/// Writes `model` to `path` in the binary format (through a temporary file renamed over `path`,
/// so a reader never sees a half-written file and a model mapped from `path` keeps its bytes);
/// reports bytes written to `job`, and leaves no file when it is cancelled.
pub fn save(model: &Model, path: &Path, job: &Job) -> Result<()> {
    if cfg!(target_endian = "big") {
        return Err(Error::invalid(
            "fastppl binary model files are little-endian; this host is big-endian",
        ));
    }
    let v = model.vocab.len();
    if model.unigram_logp.len() != v || model.unigram_weight.len() != v {
        return Err(Error::invalid(
            "model unigram arrays do not match its vocabulary",
        ));
    }
    let mut lengths: Vec<u32> = Vec::with_capacity(v);
    let mut words: Vec<u8> = Vec::new();
    for w in model.vocab.words() {
        lengths.push(
            u32::try_from(w.len()).map_err(|_| Error::invalid("a word is longer than 4 GiB"))?,
        );
        words.extend_from_slice(w.as_bytes());
    }
    let has_counts = !model.unigram_counts.is_empty();
    let mut sections = vec![
        SectionBytes {
            kind: KIND_WORD_LENGTHS,
            order: 1,
            bytes: bytemuck::cast_slice(&lengths),
            count: v as u64,
            extra: 0,
        },
        SectionBytes {
            kind: KIND_WORD_BYTES,
            order: 1,
            bytes: &words,
            count: words.len() as u64,
            extra: 0,
        },
        SectionBytes {
            kind: KIND_UNIGRAM_LOGP,
            order: 1,
            bytes: bytemuck::cast_slice(&model.unigram_logp),
            count: v as u64,
            extra: 0,
        },
        SectionBytes {
            kind: KIND_UNIGRAM_WEIGHT,
            order: 1,
            bytes: bytemuck::cast_slice(&model.unigram_weight),
            count: v as u64,
            extra: 0,
        },
        SectionBytes {
            kind: KIND_UNIGRAM_COUNTS,
            order: 1,
            bytes: bytemuck::cast_slice(&model.unigram_counts),
            count: model.unigram_counts.len() as u64,
            extra: 0,
        },
    ];
    for (i, t) in model.higher.iter().enumerate() {
        let m = (i + 2) as u32;
        sections.push(SectionBytes {
            kind: KIND_SLOTS,
            order: m,
            bytes: t.table.slot_bytes(),
            count: t.table.capacity() as u64,
            extra: t.table.len() as u64,
        });
        sections.push(SectionBytes {
            kind: KIND_COUNTS,
            order: m,
            bytes: bytemuck::cast_slice(&t.counts),
            count: t.counts.len() as u64,
            extra: 0,
        });
    }

    // header
    let smoothing = model.smoothing.as_bytes();
    let smoothing_padded = smoothing.len().div_ceil(8) * 8;
    let header_len =
        FIXED_HEADER + smoothing_padded + 24 * model.discounts.len() + ROW * sections.len();
    let mut offsets = Vec::with_capacity(sections.len());
    let mut end = align_up(header_len);
    for s in &sections {
        offsets.push(end);
        end = align_up(end + s.bytes.len());
    }
    let file_len = sections
        .last()
        .zip(offsets.last())
        .map_or(header_len, |(s, &o)| o + s.bytes.len());

    let mut h: Vec<u8> = Vec::with_capacity(header_len);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&ENDIAN_MARK.to_le_bytes());
    h.extend_from_slice(&(file_len as u64).to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes()); // checksum, filled in last
    h.extend_from_slice(&(header_len as u64).to_le_bytes());
    h.extend_from_slice(&(model.order as u32).to_le_bytes());
    h.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    h.push(u8::from(model.bos_eos));
    h.push(match model.fallback {
        Fallback::Chain => 0,
        Fallback::Flat => 1,
    });
    h.push(u8::from(model.normalized));
    h.push(u8::from(has_counts));
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&model.missing_weight.to_le_bytes());
    h.extend_from_slice(&(v as u64).to_le_bytes());
    h.extend_from_slice(&(smoothing.len() as u32).to_le_bytes());
    h.extend_from_slice(&(model.discounts.len() as u32).to_le_bytes());
    debug_assert_eq!(h.len(), FIXED_HEADER);
    h.extend_from_slice(smoothing);
    h.resize(FIXED_HEADER + smoothing_padded, 0);
    for d in &model.discounts {
        for x in d {
            h.extend_from_slice(&x.to_le_bytes());
        }
    }
    for (s, &o) in sections.iter().zip(&offsets) {
        h.extend_from_slice(&s.kind.to_le_bytes());
        h.extend_from_slice(&s.order.to_le_bytes());
        h.extend_from_slice(&(o as u64).to_le_bytes());
        h.extend_from_slice(&(s.bytes.len() as u64).to_le_bytes());
        h.extend_from_slice(&s.count.to_le_bytes());
        h.extend_from_slice(&s.extra.to_le_bytes());
    }
    debug_assert_eq!(h.len(), header_len);

    job.stage("writing model", file_len as u64)?;
    write_file(AtomicFile::create(path)?, &h, &sections, &offsets, job)
}

/// Bytes written between two reports to the job (and checks for cancellation).
const WRITE_PIECE: usize = 16 << 20;

/// Writes the header and sections, patches the checksum in and replaces the target.
fn write_file(
    file: AtomicFile,
    header: &[u8],
    sections: &[SectionBytes<'_>],
    offsets: &[usize],
    job: &Job,
) -> Result<()> {
    let target = file.target().to_path_buf();
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut hasher = Xxh3::new();
    let zeros = [0u8; ALIGN];
    let mut pos = 0usize;
    let mut put = |w: &mut BufWriter<AtomicFile>, bytes: &[u8], pos: &mut usize| -> Result<()> {
        for piece in bytes.chunks(WRITE_PIECE) {
            hasher.update(piece);
            *pos += piece.len();
            w.write_all(piece).map_err(Error::io(&target))?;
            job.step(piece.len() as u64)?;
        }
        Ok(())
    };
    put(&mut w, header, &mut pos)?;
    for (s, &o) in sections.iter().zip(offsets) {
        put(&mut w, &zeros[..o - pos], &mut pos)?;
        put(&mut w, s.bytes, &mut pos)?;
    }
    let sum = hasher.digest();
    let mut file = w
        .into_inner()
        .map_err(|e| Error::io(&target)(e.into_error()))?;
    file.seek(SeekFrom::Start(CHECKSUM_AT as u64))
        .and_then(|_| file.write_all(&sum.to_le_bytes()))
        .map_err(Error::io(&target))?;
    file.commit()
}

/// The checksum of a whole file, the checksum field read as zero.
fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&bytes[..CHECKSUM_AT]);
    h.update(&[0u8; 8]);
    h.update(&bytes[CHECKSUM_AT + 8..]);
    h.digest()
}

/// Little-endian reader over the header, failing with a format error at the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a str,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let out = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(out)
            }
            None => Err(format_err(
                self.path,
                format!(
                    "truncated header (needs more than {} bytes)",
                    self.bytes.len()
                ),
            )),
        }
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
}

fn format_err(path: &str, message: impl Into<String>) -> Error {
    Error::BinaryFormat {
        path: path.to_string(),
        message: message.into(),
    }
}

/// A section as its table row states it.
#[derive(Debug, Clone, Copy)]
struct Row {
    kind: u32,
    order: u32,
    offset: usize,
    bytes: usize,
    count: usize,
    extra: usize,
}

fn flag(value: u8, what: &str, path: &str) -> Result<bool> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(format_err(
            path,
            format!("{what} flag is {other}, not 0 or 1"),
        )),
    }
}

fn to_usize(x: u64, what: &str, path: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| format_err(path, format!("{what} {x} is too large")))
}

/// Loads a model written by [`save`]; `verify` checks the checksum and every slot (see the
/// module documentation); `mmap` maps the file, else it is read into memory (for files that other
/// programs may rewrite in place). `job` can cancel it between its steps (reading, checking).
pub fn load(path: &Path, verify: bool, mmap: bool, job: &Job) -> Result<Model> {
    let name = path.display().to_string();
    let p = name.as_str();
    if cfg!(target_endian = "big") {
        return Err(format_err(
            p,
            "binary model files need a little-endian host",
        ));
    }
    // stat before opening: opening a FIFO for reading would block until a writer comes
    let meta = std::fs::metadata(path).map_err(Error::io(path))?;
    if meta.is_dir() {
        return Err(format_err(p, "is a directory, not a model file"));
    }
    if !meta.is_file() {
        return Err(format_err(p, "is not a regular file"));
    }
    let size = meta.len();
    if size < FIXED_HEADER as u64 {
        return Err(format_err(
            p,
            if size == 0 {
                "empty file, not a fastppl binary model".to_string()
            } else {
                format!("truncated: {size} bytes, shorter than the {FIXED_HEADER}-byte header")
            },
        ));
    }
    job.stage("loading model", size)?;
    let mut file = File::open(path).map_err(Error::io(path))?;
    // the fixed header is read and checked before anything is mapped, so that a large file that
    // is not a model (or of another version) costs one small read
    let mut head = [0u8; FIXED_HEADER];
    file.read_exact(&mut head).map_err(Error::io(path))?;
    check_fixed_header(&head, size, p)?;
    let bytes = if mmap {
        // (verifying reads every page: then have the kernel map them all at once)
        FileBytes::map(&file, verify).map_err(Error::io(path))?
    } else {
        file.seek(SeekFrom::Start(0)).map_err(Error::io(path))?;
        let len = usize::try_from(size).map_err(|_| format_err(p, "too large for this host"))?;
        FileBytes::read(file, len).map_err(Error::io(path))?
    };
    let map = Arc::new(bytes);
    job.check()?;
    parse(&map, p, verify)
}

/// Checks the magic bytes, version, endianness marker and file length at the start of `head`
/// (at least the first 24 bytes of a file of `size` bytes).
fn check_fixed_header(head: &[u8], size: u64, p: &str) -> Result<()> {
    let mut c = Cursor {
        bytes: head,
        pos: 0,
        path: p,
    };
    if c.take(8)? != MAGIC {
        return Err(format_err(
            p,
            "not a fastppl binary model (wrong magic bytes; ARPA files are read with from_arpa, \
             KenLM binary files with from_kenlm_binary, and from_file tells them apart)",
        ));
    }
    let version = c.u32()?;
    if version != VERSION {
        return Err(format_err(
            p,
            if version > VERSION {
                format!(
                    "format version {version} is newer than this fastppl reads ({VERSION}); \
                     upgrade fastppl"
                )
            } else {
                format!("unsupported format version {version}")
            },
        ));
    }
    let mark = c.u32()?;
    if mark != ENDIAN_MARK {
        return Err(format_err(
            p,
            format!("bad endianness marker {mark:#010x} (expected {ENDIAN_MARK:#010x})"),
        ));
    }
    let file_len = c.u64()?;
    if file_len != size {
        return Err(format_err(
            p,
            if file_len > size {
                format!("truncated: {} bytes, the header says {file_len}", size)
            } else {
                format!("{} bytes, the header says {file_len}", size)
            },
        ));
    }
    Ok(())
}

fn parse(map: &Arc<FileBytes>, p: &str, verify: bool) -> Result<Model> {
    let bytes: &[u8] = map;
    check_fixed_header(bytes, bytes.len() as u64, p)?;
    let mut c = Cursor {
        bytes,
        pos: CHECKSUM_AT,
        path: p,
    };
    let stored_sum = c.u64()?;
    if !verify {
        return parse_rest(map, c, false);
    }
    // the checksum runs beside the parsing (which validates everything it reads on its own); a
    // mismatch is the error reported, whatever the parsing found
    let (sum, parsed) = rayon::join(|| checksum(bytes), || parse_rest(map, c, true));
    if sum != stored_sum {
        return Err(format_err(
            p,
            format!(
                "checksum mismatch (stored {stored_sum:#018x}, computed {sum:#018x}): the file \
                 is corrupt"
            ),
        ));
    }
    parsed
}

/// Parses what follows the checksum field.
fn parse_rest<'a>(map: &'a Arc<FileBytes>, mut c: Cursor<'a>, verify: bool) -> Result<Model> {
    let bytes: &[u8] = map;
    let p = c.path;
    let header_len = to_usize(c.u64()?, "header length", p)?;
    if header_len > bytes.len() || header_len < FIXED_HEADER {
        return Err(format_err(
            p,
            format!("header length {header_len} out of range"),
        ));
    }
    c.bytes = &bytes[..header_len];
    let h = parse_header(&mut c)?;
    let rows = parse_section_table(&mut c, h.nsections, header_len, bytes.len())?;
    check_padding(bytes, &rows, header_len, verify, p)?;
    let (vocab_len, has_counts) = (h.vocab_len, h.has_counts);
    let vocab = parse_vocab(bytes, &rows, vocab_len, p)?;

    // unigrams (copied: O(V), small next to the tables)
    check_count(&rows[2], vocab_len, "the unigram probabilities", p)?;
    check_count(&rows[3], vocab_len, "the unigram weights", p)?;
    let unigram_logp: Vec<f64> = bytemuck::pod_collect_to_vec(section(bytes, &rows[2]));
    let unigram_weight: Vec<f64> = bytemuck::pod_collect_to_vec(section(bytes, &rows[3]));
    check_count(
        &rows[4],
        if has_counts { vocab_len } else { 0 },
        "the unigram counts",
        p,
    )?;
    let unigram_counts: Vec<u32> = bytemuck::pod_collect_to_vec(section(bytes, &rows[4]));

    let higher = parse_higher(map, &rows, &h, verify, p)?;
    let Header {
        order,
        bos_eos,
        fallback,
        normalized,
        missing_weight,
        smoothing,
        discounts,
        ..
    } = h;
    Ok(Model {
        order,
        bos_eos,
        vocab,
        unigram_logp,
        unigram_weight,
        unigram_counts,
        higher,
        fallback,
        missing_weight,
        normalized,
        smoothing,
        discounts,
    })
}

/// The header fields after the header length: order, flags, vocabulary size, smoothing name and
/// discounts (offsets 40 to the section table), each checked.
struct Header {
    order: usize,
    nsections: usize,
    bos_eos: bool,
    fallback: Fallback,
    normalized: bool,
    has_counts: bool,
    missing_weight: f64,
    vocab_len: usize,
    smoothing: String,
    discounts: Vec<[f64; 3]>,
}

fn parse_header(c: &mut Cursor<'_>) -> Result<Header> {
    let p = c.path;
    let order = c.u32()? as usize;
    if order == 0 || order > MAX_ORDER {
        return Err(format_err(
            p,
            format!("order {order} out of range 1..={MAX_ORDER}"),
        ));
    }
    let nsections = c.u32()? as usize;
    let expected_sections = 5 + 2 * (order - 1);
    if nsections != expected_sections {
        return Err(format_err(
            p,
            format!("{nsections} sections, an order-{order} model has {expected_sections}"),
        ));
    }
    let bos_eos = flag(c.u8()?, "bos_eos", p)?;
    let fallback = match c.u8()? {
        0 => Fallback::Chain,
        1 => Fallback::Flat,
        other => return Err(format_err(p, format!("unknown fallback kind {other}"))),
    };
    let normalized = flag(c.u8()?, "normalized", p)?;
    let has_counts = flag(c.u8()?, "counts", p)?;
    if c.u32()? != 0 {
        return Err(format_err(p, "reserved header bytes are not zero"));
    }
    let missing_weight = c.f64()?;
    let vocab_len = to_usize(c.u64()?, "vocabulary size", p)?;
    if vocab_len < RESERVED.len() || vocab_len > u32::MAX as usize {
        return Err(format_err(
            p,
            format!("vocabulary size {vocab_len} out of range"),
        ));
    }
    let smoothing_len = c.u32()? as usize;
    let ndiscounts = c.u32()? as usize;
    if ndiscounts > order {
        return Err(format_err(
            p,
            format!("{ndiscounts} discount triples for an order-{order} model"),
        ));
    }
    let smoothing = c.take(smoothing_len.div_ceil(8) * 8)?;
    if smoothing[smoothing_len..].iter().any(|&b| b != 0) {
        return Err(format_err(p, "smoothing name padding is not zero"));
    }
    let smoothing = std::str::from_utf8(&smoothing[..smoothing_len])
        .map_err(|_| format_err(p, "smoothing name is not UTF-8"))?
        .to_string();
    let mut discounts = Vec::with_capacity(ndiscounts);
    for _ in 0..ndiscounts {
        discounts.push([c.f64()?, c.f64()?, c.f64()?]);
    }
    Ok(Header {
        order,
        nsections,
        bos_eos,
        fallback,
        normalized,
        has_counts,
        missing_weight,
        vocab_len,
        smoothing,
        discounts,
    })
}

/// The section table: one row per section, each of the kind and order its position requires,
/// aligned, in bounds, after the one before, and of a whole number of elements.
fn parse_section_table(
    c: &mut Cursor<'_>,
    nsections: usize,
    header_len: usize,
    file_len: usize,
) -> Result<Vec<Row>> {
    let p = c.path;
    let mut rows = Vec::with_capacity(nsections);
    let mut prev_end = header_len;
    for i in 0..nsections {
        let row = Row {
            kind: c.u32()?,
            order: c.u32()?,
            offset: to_usize(c.u64()?, "section offset", p)?,
            bytes: to_usize(c.u64()?, "section length", p)?,
            count: to_usize(c.u64()?, "section element count", p)?,
            extra: to_usize(c.u64()?, "section entry count", p)?,
        };
        let (kind, m) = match i {
            0..5 => (i as u32 + 1, 1),
            _ => (KIND_SLOTS + ((i - 5) % 2) as u32, ((i - 5) / 2 + 2) as u32),
        };
        if row.kind != kind || row.order != m {
            return Err(format_err(
                p,
                format!(
                    "section {i} is of kind {} order {}, expected kind {kind} order {m}",
                    row.kind, row.order
                ),
            ));
        }
        if row.offset % ALIGN != 0 {
            return Err(format_err(
                p,
                format!(
                    "section {i} at offset {} is not {ALIGN}-byte aligned",
                    row.offset
                ),
            ));
        }
        let end = row.offset.checked_add(row.bytes);
        if row.offset < prev_end || end.is_none_or(|e| e > file_len) {
            return Err(format_err(
                p,
                format!(
                    "section {i} ({} bytes at offset {}) is out of bounds or overlaps the one \
                     before (file of {} bytes)",
                    row.bytes, row.offset, file_len
                ),
            ));
        }
        prev_end = end.unwrap_or(usize::MAX);
        let elem = match kind {
            KIND_WORD_BYTES => 1,
            KIND_WORD_LENGTHS | KIND_UNIGRAM_COUNTS | KIND_COUNTS => 4,
            KIND_UNIGRAM_LOGP | KIND_UNIGRAM_WEIGHT => 8,
            _ => size_of::<Slot>(),
        };
        if row.count.checked_mul(elem) != Some(row.bytes) {
            return Err(format_err(
                p,
                format!(
                    "section {i}: {} bytes do not hold {} elements of {elem} bytes",
                    row.bytes, row.count
                ),
            ));
        }
        if kind != KIND_SLOTS && row.extra != 0 {
            return Err(format_err(p, format!("section {i}: nonzero extra field")));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Checks that the sections end the file and, with `verify`, that the padding between them is
/// zero.
fn check_padding(
    bytes: &[u8],
    rows: &[Row],
    header_len: usize,
    verify: bool,
    p: &str,
) -> Result<()> {
    let prev_end = rows.last().map_or(header_len, |r| r.offset + r.bytes);
    if verify {
        // the padding is covered by the checksum; it must also be zero (nothing hides there)
        let mut start = header_len;
        for r in rows {
            if bytes[start..r.offset].iter().any(|&b| b != 0) {
                return Err(format_err(p, "nonzero padding between sections"));
            }
            start = r.offset + r.bytes;
        }
    }
    if prev_end != bytes.len() {
        return Err(format_err(
            p,
            format!(
                "{} trailing bytes after the last section",
                bytes.len() - prev_end
            ),
        ));
    }
    Ok(())
}

/// The bytes of section `r` (in bounds: checked by [`parse_section_table`]).
fn section<'b>(bytes: &'b [u8], r: &Row) -> &'b [u8] {
    &bytes[r.offset..r.offset + r.bytes]
}

/// Checks that section `r`, described as `what`, holds `want` elements.
fn check_count(r: &Row, want: usize, what: &str, p: &str) -> Result<()> {
    if r.count != want {
        return Err(format_err(
            p,
            format!("{what} has {} elements, expected {want}", r.count),
        ));
    }
    Ok(())
}

/// The vocabulary from the word length and word byte sections: UTF-8, the reserved words first,
/// no word twice.
fn parse_vocab(bytes: &[u8], rows: &[Row], vocab_len: usize, p: &str) -> Result<Vocab> {
    // vocabulary
    check_count(&rows[0], vocab_len, "the word length table", p)?;
    let lengths: Vec<u32> = bytemuck::pod_collect_to_vec(section(bytes, &rows[0]));
    let words = section(bytes, &rows[1]);
    let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
    if total != words.len() as u64 {
        return Err(format_err(
            p,
            format!(
                "word lengths add up to {total} bytes, the word section holds {}",
                words.len()
            ),
        ));
    }
    let words = std::str::from_utf8(words).map_err(|e| {
        format_err(
            p,
            format!("the words are not UTF-8 (at byte {})", e.valid_up_to()),
        )
    })?;
    let mut vocab = Vocab::new();
    vocab.reserve(vocab_len - RESERVED.len());
    let mut at = 0usize;
    for (id, &l) in lengths.iter().enumerate() {
        let end = at + l as usize;
        let word = words.get(at..end).ok_or_else(|| {
            format_err(p, format!("word {id} does not end on a character boundary"))
        })?;
        at = end;
        let got = if id < RESERVED.len() {
            if word != RESERVED[id] {
                return Err(format_err(
                    p,
                    format!("word {id} is {word:?}, expected {:?}", RESERVED[id]),
                ));
            }
            id as u32
        } else {
            vocab.intern(word)
        };
        if got as usize != id {
            return Err(format_err(p, format!("word {word:?} appears twice")));
        }
    }

    Ok(vocab)
}

/// The tables of orders 2..=N: views into the map, each checked slot by slot with `verify`.
fn parse_higher(
    map: &Arc<FileBytes>,
    rows: &[Row],
    h: &Header,
    verify: bool,
    p: &str,
) -> Result<Vec<OrderTable>> {
    let (order, vocab_len, has_counts) = (h.order, h.vocab_len, h.has_counts);
    // higher orders: the slot tables are views into the map
    let mut higher: Vec<OrderTable> = Vec::with_capacity(order - 1);
    for m in 2..=order {
        let slots_row = &rows[5 + 2 * (m - 2)];
        let counts_row = &rows[6 + 2 * (m - 2)];
        let capacity = slots_row.count;
        let entries = slots_row.extra;
        if capacity == 0 || capacity > u32::MAX as usize || entries >= capacity {
            return Err(format_err(
                p,
                format!(
                    "order {m}: {entries} entries in {capacity} slots (needs at least one empty \
                     slot and at most 2^32 - 1 slots)"
                ),
            ));
        }
        check_count(
            counts_row,
            if has_counts { capacity } else { 0 },
            &format!("the order-{m} counts"),
            p,
        )?;
        let view = MappedSlice::<Slot>::new(Arc::clone(map), slots_row.offset, slots_row.bytes)
            .ok_or_else(|| format_err(p, format!("order {m}: slot table cannot be viewed")))?;
        let table = ProbingTable::from_mapped(view, entries);
        if verify {
            let below = match m {
                2 => None,
                _ => Some(&higher[m - 3].table),
            };
            check_slots(&table, vocab_len, below)
                .map_err(|msg| format_err(p, format!("order {m}: {msg}")))?;
        }
        higher.push(OrderTable {
            table,
            counts: bytemuck::pod_collect_to_vec(section(map, counts_row)),
        });
    }

    Ok(higher)
}

/// Checks every occupied slot: its word is an id, its prefix an occupied entry of the order
/// below (a word id at order 2), and the number of occupied slots is `table.len()`. Runs on all
/// cores.
fn check_slots(
    table: &ProbingTable,
    vocab_len: usize,
    below: Option<&ProbingTable>,
) -> std::result::Result<(), String> {
    use rayon::prelude::*;
    let capacity = table.capacity() as u32;
    let occupied = (0..capacity)
        .into_par_iter()
        .with_min_len(1 << 16)
        .try_fold(
            || 0usize,
            |n, i| {
                let key = table.key(i);
                if key == EMPTY {
                    return Ok(n);
                }
                let w = key_word(key) as usize;
                if w >= vocab_len {
                    return Err(format!("slot {i}: word id {w} is not in the vocabulary"));
                }
                let prefix = key_prefix(key);
                let ok = match below {
                    None => (prefix as usize) < vocab_len,
                    Some(t) => (prefix as usize) < t.capacity() && t.key(prefix) != EMPTY,
                };
                if !ok {
                    return Err(format!(
                        "slot {i}: prefix {prefix} is not an entry of the order below"
                    ));
                }
                Ok(n + 1)
            },
        )
        .try_reduce(|| 0, |a, b| Ok(a + b))?;
    if occupied != table.len() {
        return Err(format!(
            "{occupied} occupied slots, the header says {}",
            table.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use crate::estimate::{fit, Pruning, Smoothing};
    use crate::model::scorer::Scorer;
    use std::path::PathBuf;

    const TEXT: &str = "a b c a b\nb c d a\na a b c d e\nc d e f\nb c a d\n";

    fn fitted(order: usize, smoothing: Smoothing, bos_eos: bool) -> Model {
        let mut c = Corpus::new();
        c.push_whitespace_text(TEXT, crate::corpus::SentenceMode::Lines)
            .unwrap();
        c.finish();
        fit(
            &c,
            order,
            bos_eos,
            smoothing,
            &Pruning::none(),
            &Job::none(),
        )
        .unwrap()
    }

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("fastppl-binary-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn scores(m: &Model) -> Vec<u64> {
        let mut out = Vec::new();
        for line in TEXT.lines().chain(["f e d c b a", "z a b q"]) {
            let ids: Vec<u32> = line.split(' ').map(|w| m.id(w)).collect();
            out.extend(
                m.score_sentence_full(&ids, true, true)
                    .iter()
                    .map(|(x, _)| x.to_bits()),
            );
        }
        out
    }

    fn assert_same(a: &Model, b: &Model) {
        assert_eq!(a.order, b.order);
        assert_eq!(a.bos_eos, b.bos_eos);
        assert_eq!(a.fallback, b.fallback);
        assert_eq!(a.normalized, b.normalized);
        assert_eq!(a.smoothing, b.smoothing);
        assert_eq!(a.discounts, b.discounts);
        assert_eq!(a.missing_weight.to_bits(), b.missing_weight.to_bits());
        assert_eq!(
            a.vocab.words().collect::<Vec<_>>(),
            b.vocab.words().collect::<Vec<_>>()
        );
        assert_eq!(a.unigram_counts, b.unigram_counts);
        assert_eq!(a.ngram_counts(), b.ngram_counts());
        for (x, y) in a.higher.iter().zip(&b.higher) {
            assert_eq!(x.counts, y.counts);
            assert_eq!(x.table.slot_bytes(), y.table.slot_bytes());
            assert!(y.table.is_mapped());
        }
        assert_eq!(scores(a), scores(b));
    }

    #[test]
    fn round_trips_every_estimator() {
        let d = dir();
        let cases = [
            (
                3,
                Smoothing::ModifiedKneserNey {
                    discount_fallback: true,
                },
                true,
            ),
            (4, Smoothing::KneserNey { discount: 0.75 }, false),
            (2, Smoothing::Mle, true),
            (3, Smoothing::Additive { k: 0.5 }, false),
            (3, Smoothing::StupidBackoff { alpha: 0.4 }, true),
            (1, Smoothing::WittenBell, true),
        ];
        for (i, (order, s, bos_eos)) in cases.into_iter().enumerate() {
            let m = fitted(order, s, bos_eos);
            let path = d.join(format!("m{i}.fppl"));
            save(&m, &path, &Job::none()).unwrap();
            for verify in [true, false] {
                assert_same(&m, &load(&path, verify, true, &Job::none()).unwrap());
            }
            // a loaded model saves to the same bytes
            let again = d.join(format!("m{i}.again.fppl"));
            save(
                &load(&path, true, true, &Job::none()).unwrap(),
                &again,
                &Job::none(),
            )
            .unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&again).unwrap()
            );
        }
    }

    #[test]
    fn a_mapped_table_copies_itself_when_written() {
        let d = dir();
        let m = fitted(2, Smoothing::Mle, true);
        let path = d.join("cow.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let mut loaded = load(&path, true, true, &Job::none()).unwrap();
        let t = &mut loaded.higher[0].table;
        assert!(t.is_mapped());
        let key = crate::ngram::keys::pack(5, 5);
        if t.find(key).is_none() && t.has_room() {
            t.insert(key, crate::ngram::probing::Entry::default());
            assert!(!t.is_mapped());
            assert!(t.find(key).is_some());
        }
    }

    fn expect_error(bytes: &[u8], name: &str, verify: bool) -> String {
        let path = dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        match load(&path, verify, true, &Job::none()) {
            Err(Error::BinaryFormat { message, .. }) => message,
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("loaded a bad file"),
        }
    }

    #[test]
    fn rejects_bad_files_without_panicking() {
        let d = dir();
        let m = fitted(
            3,
            Smoothing::ModifiedKneserNey {
                discount_fallback: true,
            },
            true,
        );
        let path = d.join("good.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let good = std::fs::read(&path).unwrap();
        assert!(expect_error(&[], "empty", true).contains("empty"));
        assert!(expect_error(&good[..good.len() - 1], "short", true).contains("truncated"));
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(expect_error(&bad, "magic", true).contains("magic"));
        let mut bad = good.clone();
        bad[8] = 2;
        assert!(expect_error(&bad, "version", true).contains("newer"));
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(expect_error(&bad, "sum", true).contains("checksum"));
        // every truncation and every single-byte flip: an error or (unverified body) a model
        for cut in 0..good.len() {
            assert!(load_bytes(&good[..cut], true).is_err());
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x5a;
            assert!(
                load_bytes(&bad, true).is_err(),
                "flip at {i} was not detected"
            );
            if let Ok(model) = load_bytes(&bad, false) {
                let _ = scores(&model);
            }
        }
    }

    fn load_bytes(bytes: &[u8], verify: bool) -> Result<Model> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir().join(format!("bytes-{n}"));
        std::fs::write(&path, bytes).unwrap();
        let out = load(&path, verify, true, &Job::none());
        let _ = std::fs::remove_file(&path);
        out
    }

    #[test]
    fn checks_slots_when_verifying() {
        let d = dir();
        let m = fitted(3, Smoothing::KneserNey { discount: 0.5 }, true);
        let path = d.join("slots.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let good = std::fs::read(&path).unwrap();
        let loaded = load(&path, true, true, &Job::none()).unwrap();
        // point the key of the first occupied order-3 slot to a prefix beyond order 2's table
        let (_, key, _) = loaded.higher[1].table.iter().next().unwrap();
        let off = good
            .windows(8)
            .position(|w| w == key.to_le_bytes())
            .filter(|o| o % 8 == 0)
            .unwrap();
        let mut bad = good.clone();
        let bogus = crate::ngram::keys::pack(u32::MAX - 1, key_word(key));
        bad[off..off + 8].copy_from_slice(&bogus.to_le_bytes());
        // fix the checksum so that only the slot check can catch it
        let sum = checksum(&bad);
        bad[CHECKSUM_AT..CHECKSUM_AT + 8].copy_from_slice(&sum.to_le_bytes());
        let msg = expect_error(&bad, "prefix", true);
        assert!(msg.contains("prefix"), "{msg}");
        // unverified, it loads; lookups stay in bounds
        let model = load_bytes(&bad, false).unwrap();
        let _ = scores(&model);
    }

    #[test]
    fn a_directory_and_a_missing_file_are_errors() {
        let d = dir();
        assert!(matches!(
            load(&d, true, true, &Job::none()),
            Err(Error::BinaryFormat { .. })
        ));
        match load(&d.join("missing"), true, true, &Job::none()) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            _ => panic!("expected a not-found error"),
        }
    }
}
