//! Writing a model in the binary format.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

use super::layout::{
    align_up, ALIGN, CHECKSUM_AT, ENDIAN_MARK, FIXED_HEADER, KIND_COUNTS, KIND_SLOTS,
    KIND_UNIGRAM_COUNTS, KIND_UNIGRAM_LOGP, KIND_UNIGRAM_WEIGHT, KIND_WORD_BYTES,
    KIND_WORD_LENGTHS, MAGIC, ROW, VERSION,
};
use crate::error::{Error, Result};
use crate::model::{Fallback, Model};
use crate::util::atomic::AtomicFile;
use crate::util::compressed::names_compression;
use crate::util::job::Job;

/// One section to write.
struct SectionBytes<'a> {
    kind: u32,
    order: u32,
    bytes: &'a [u8],
    count: u64,
    extra: u64,
}

/// Refuses, with [`Error::InvalidArgument`] naming it, a `path` whose name says the file is
/// compressed (`.gz`, `.xz`, `.bz2`, `.zst`...: [`names_compression`]): a binary model is never
/// compressed (it is memory-mapped where it lies), so the file would be a plain one under a
/// compressed name.
fn check_name(path: &Path) -> Result<()> {
    if !names_compression(path) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{}: fastppl's binary models are not compressed (they are memory-mapped when loaded): \
         name it .fppl, or write the model as ARPA, which .gz, .xz and .bz2 compress",
        path.display()
    )))
}

/// Gives the error [`save`] would give for `path` before it writes (a compressed name, and those
/// of [`AtomicFile::check`]: a directory, a device, a missing or read-only folder), and writes
/// nothing: for a long computation whose model goes to `path`, to fail before it starts.
pub fn check(path: &Path) -> Result<()> {
    check_name(path)?;
    AtomicFile::check(path)
}

/// Writes `model` to `path` in the binary format (through a temporary file renamed over `path`,
/// so a reader never sees a half-written file and a model mapped from `path` keeps its bytes);
/// reports bytes written to `job`, and leaves no file when it is cancelled. A name that says
/// the file is compressed is refused (`check_name`).
pub fn save(model: &Model, path: &Path, job: &Job) -> Result<()> {
    check_name(path)?;
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
    let sections = sections_of(model, &lengths, &words);
    let (header, offsets, file_len) = header_of(model, &sections);
    job.stage("writing model", file_len as u64)?;
    write_file(AtomicFile::create(path)?, &header, &sections, &offsets, job)
}

/// The sections of `model`, in file order (the word lengths and bytes are built by the caller).
fn sections_of<'a>(model: &'a Model, lengths: &'a [u32], words: &'a [u8]) -> Vec<SectionBytes<'a>> {
    let v = model.vocab.len();
    let mut sections = vec![
        SectionBytes {
            kind: KIND_WORD_LENGTHS,
            order: 1,
            bytes: bytemuck::cast_slice(lengths),
            count: v as u64,
            extra: 0,
        },
        SectionBytes {
            kind: KIND_WORD_BYTES,
            order: 1,
            bytes: words,
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
    sections
}

/// The header of a file holding `sections`, their offsets, and the file's length.
fn header_of(model: &Model, sections: &[SectionBytes<'_>]) -> (Vec<u8>, Vec<usize>, usize) {
    let v = model.vocab.len();
    let has_counts = !model.unigram_counts.is_empty();
    let smoothing = model.smoothing.as_bytes();
    let smoothing_padded = smoothing.len().div_ceil(8) * 8;
    let header_len =
        FIXED_HEADER + smoothing_padded + 24 * model.discounts.len() + ROW * sections.len();
    let mut offsets = Vec::with_capacity(sections.len());
    let mut end = align_up(header_len);
    for s in sections {
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
    (h, offsets, file_len)
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
