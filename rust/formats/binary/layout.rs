//! The byte layout of fastppl's binary model files, and the parsing and checking of their header
//! and section table (shared by the writer, [`super::save()`], and the reader, [`super::load()`]).
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
//! | 6    | m     | the probing table of order m: slots of 24 bytes (key u64, ln p f64, ln weight f64), exactly as [`ProbingTable`](crate::ngram::probing::ProbingTable) holds them; extra = number of occupied slots |
//! | 7    | m     | raw counts of order m by slot (u32 × slots, or empty)            |
//!
//! with kinds 6 and 7 repeated for m = 2..=N.

use xxhash_rust::xxh3::Xxh3;

use crate::corpus::vocab::RESERVED;
use crate::error::{Error, Result};
use crate::model::Fallback;
use crate::ngram::keys::MAX_ORDER;
use crate::ngram::probing::Slot;

/// The first 8 bytes of every fastppl binary model file.
pub const MAGIC: [u8; 8] = *b"\x89FPPL\r\n\x1a";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
pub(super) const ENDIAN_MARK: u32 = 0x0102_0304;
/// Sections start at multiples of this (a cache line; also any element's alignment).
pub const ALIGN: usize = 64;
pub(super) const FIXED_HEADER: usize = 80;
pub(super) const CHECKSUM_AT: usize = 24;
pub(super) const ROW: usize = 40;

pub(super) const KIND_WORD_LENGTHS: u32 = 1;
pub(super) const KIND_WORD_BYTES: u32 = 2;
pub(super) const KIND_UNIGRAM_LOGP: u32 = 3;
pub(super) const KIND_UNIGRAM_WEIGHT: u32 = 4;
pub(super) const KIND_UNIGRAM_COUNTS: u32 = 5;
pub(super) const KIND_SLOTS: u32 = 6;
pub(super) const KIND_COUNTS: u32 = 7;

pub(super) fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

/// The checksum of a whole file, the checksum field read as zero.
pub(super) fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&bytes[..CHECKSUM_AT]);
    h.update(&[0u8; 8]);
    h.update(&bytes[CHECKSUM_AT + 8..]);
    h.digest()
}

/// Little-endian reader over the header, failing with a format error at the end.
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) path: &'a str,
}

impl Cursor<'_> {
    pub(super) fn take(&mut self, n: usize) -> Result<&[u8]> {
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

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(super) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
}

pub(super) fn format_err(path: &str, message: impl Into<String>) -> Error {
    Error::BinaryFormat {
        path: path.to_string(),
        message: message.into(),
    }
}

/// A section as its table row states it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub(super) kind: u32,
    pub(super) order: u32,
    pub(super) offset: usize,
    pub(super) bytes: usize,
    pub(super) count: usize,
    pub(super) extra: usize,
}

pub(super) fn flag(value: u8, what: &str, path: &str) -> Result<bool> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(format_err(
            path,
            format!("{what} flag is {other}, not 0 or 1"),
        )),
    }
}

pub(super) fn to_usize(x: u64, what: &str, path: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| format_err(path, format!("{what} {x} is too large")))
}

/// Checks the magic bytes, version, endianness marker and file length at the start of `head`
/// (at least the first 24 bytes of a file of `size` bytes).
pub(super) fn check_fixed_header(head: &[u8], size: u64, p: &str) -> Result<()> {
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
                format!("truncated: {size} bytes, the header says {file_len}")
            } else {
                format!("{size} bytes, the header says {file_len}")
            },
        ));
    }
    Ok(())
}

/// The header fields after the header length: order, flags, vocabulary size, smoothing name and
/// discounts (offsets 40 to the section table), each checked.
pub(super) struct Header {
    pub(super) order: usize,
    pub(super) nsections: usize,
    pub(super) bos_eos: bool,
    pub(super) fallback: Fallback,
    pub(super) normalized: bool,
    pub(super) has_counts: bool,
    pub(super) missing_weight: f64,
    pub(super) vocab_len: usize,
    pub(super) smoothing: String,
    pub(super) discounts: Vec<[f64; 3]>,
}

pub(super) fn parse_header(c: &mut Cursor<'_>) -> Result<Header> {
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
pub(super) fn parse_section_table(
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
