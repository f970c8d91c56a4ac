//! The checks that need more than the header: zero padding between sections, and every occupied
//! slot of a table pointing at a word and at an entry of the order below.

use super::layout::{format_err, Row};
use crate::error::Result;
use crate::ngram::keys::{is_free, key_prefix, key_word};
use crate::ngram::probing::ProbingTable;

/// Checks that the sections end the file and, with `verify`, that the padding between them is
/// zero.
pub(super) fn check_padding(
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

/// Checks every occupied slot: its word is an id, its prefix an occupied entry of the order
/// below (a word id at order 2), and the number of occupied slots is `table.len()`. Runs on all
/// cores.
pub(super) fn check_slots(
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
                if is_free(key) {
                    return Ok(n);
                }
                let w = key_word(key) as usize;
                if w >= vocab_len {
                    return Err(format!("slot {i}: word id {w} is not in the vocabulary"));
                }
                let prefix = key_prefix(key);
                let ok = match below {
                    None => (prefix as usize) < vocab_len,
                    Some(t) => (prefix as usize) < t.capacity() && !is_free(t.key(prefix)),
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
