//! Reading a model file written by [`super::save()`]: mapped or read, checked, then viewed in place.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use super::layout::{
    check_fixed_header, checksum, format_err, parse_header, parse_section_table, to_usize, Cursor,
    Header, Row, CHECKSUM_AT, FIXED_HEADER,
};
use super::verify::{check_padding, check_slots};
use crate::corpus::vocab::{Vocab, RESERVED};
use crate::error::{Error, Result};
use crate::model::{Model, OrderTable};
use crate::ngram::probing::{ProbingTable, Slot};
use crate::util::job::Job;
use crate::util::mapped::{FileBytes, MappedSlice};

/// Loads a model written by [`super::save()`]; `verify` checks the checksum and every slot (see the
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
        return Err(Error::is_a_directory(path));
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

pub(super) fn parse(map: &Arc<FileBytes>, p: &str, verify: bool) -> Result<Model> {
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

/// The bytes of section `r` (in bounds: checked by [`parse_section_table`]).
pub(super) fn section<'b>(bytes: &'b [u8], r: &Row) -> &'b [u8] {
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
    vocab.reserve(vocab_len - RESERVED.len(), words.len());
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
