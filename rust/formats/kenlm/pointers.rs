//! Where the children of a middle-order trie record start (`lm/bhiksha.{hh,cc}`): record `i`'s
//! children in the next order are the records `next(i)..next(i + 1)`.
//!
//! - Inline (plain tries): `next(i)` is a field of record `i`, wide enough for the next order's
//!   count.
//! - Array-compressed (`build_binary -a B`, Raj and Whittaker 2003): the record holds only the
//!   low bits of `next(i)`; the high bits are the position of the last entry `<= i` in a sorted
//!   array of u64s (entry `h` = the first record whose pointer has high bits `h`). The block
//!   before the order's records is a version byte (0), the bit budget B (one byte), then from the
//!   next multiple of 8 one u64 of padding and the array. How many low bits are chopped off is
//!   not stored: it is recomputed from B and the counts as KenLM does (`ChopBits`).

use super::bits::{required_bits, BitArray};
use super::{format_err, read_u64};
use crate::error::Result;

/// The array-compressed block's version (`kArrayBhikshaVersion`).
const ARRAY_VERSION: u8 = 0;

/// How the child pointers of one middle order are stored.
#[derive(Debug, Clone)]
pub enum Pointers {
    Inline { bits: u8 },
    Array { low_bits: u8, starts: Vec<u64> },
}

/// The bit budget of array-compressed pointers, from the block of the first middle order at
/// `bytes[at..]` (KenLM reads it from there for every order).
pub fn array_budget(bytes: &[u8], at: usize, path: &str) -> Result<u8> {
    match bytes.get(at..at + 2) {
        Some(&[ARRAY_VERSION, budget]) => Ok(budget),
        Some(&[version, _]) => Err(format_err(
            path,
            format!("KenLM pointer compression version {version}, expected {ARRAY_VERSION}"),
        )),
        _ => Err(format_err(
            path,
            "truncated KenLM binary file: it ends inside the trie",
        )),
    }
}

/// (low bits chopped off, length of the array) for pointers of `records` records (one more
/// than the order's count) into `max_next` records, with a budget of `budget` bits: the chop
/// that saves the most bits net of the array's size, the smallest on ties (`ChopBits`).
fn array_shape(records: u64, max_next: u64, budget: u8) -> (u8, u64) {
    let required = required_bits(max_next);
    let mut best = (0u8, i128::MAX);
    for chop in 0..=required.min(budget) {
        let table = i128::from(max_next >> (required - chop)) * 64;
        let change = table - i128::from(records) * i128::from(chop);
        if change < best.1 {
            best = (chop, change);
        }
    }
    (best.0, (max_next >> (required - best.0)) + 1)
}

impl Pointers {
    /// The pointers of a middle order of `count` records pointing into `max_next` records:
    /// `block` starts at byte `at` of the file `bytes` (alignment is counted from the file's
    /// start, which KenLM maps at a page boundary). Returns them and the bytes the array block
    /// takes before the records (0 for inline pointers).
    pub fn parse(
        bytes: &[u8],
        at: usize,
        count: u64,
        max_next: u64,
        array_budget: Option<u8>,
        path: &str,
    ) -> Result<(Pointers, usize)> {
        let Some(budget) = array_budget else {
            return Ok((
                Pointers::Inline {
                    bits: required_bits(max_next),
                },
                0,
            ));
        };
        let (chop, len) = array_shape(count + 1, max_next, budget);
        let truncated = || format_err(path, "truncated KenLM binary file: it ends inside the trie");
        let block = usize::try_from(8 * (1 + len) + 7).map_err(|_| truncated())?;
        if at.checked_add(block).is_none_or(|end| end > bytes.len()) {
            return Err(truncated());
        }
        let first = at.div_ceil(8) * 8 + 8;
        let starts = (0..len as usize)
            .map(|h| read_u64(bytes, first + 8 * h))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(truncated)?;
        Ok((
            Pointers::Array {
                low_bits: required_bits(max_next) - chop,
                starts,
            },
            block,
        ))
    }

    /// Bits of a record taken by its pointer.
    pub fn bits(&self) -> u8 {
        match self {
            Pointers::Inline { bits } => *bits,
            Pointers::Array { low_bits, .. } => *low_bits,
        }
    }

    /// `next(index)`, its stored bits at bit `offset` of the record; `None` past the end or when
    /// the array has no entry <= `index` (a corrupt file).
    #[inline]
    pub fn next(&self, array: &BitArray<'_>, index: u64, offset: u64) -> Option<u64> {
        let low = array.field(index, offset, self.bits())?;
        match self {
            Pointers::Inline { .. } => Some(low),
            Pointers::Array { low_bits, starts } => {
                let high = starts.partition_point(|&s| s <= index).checked_sub(1)? as u64;
                Some(high.checked_shl(u32::from(*low_bits))? | low)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chops_as_kenlm() {
        // a budget of 0 bits: nothing chopped, an array of one entry (0)
        assert_eq!(array_shape(1000, 5000, 0), (0, 1));
        // many records pointing into few: chopping every bit costs one u64 per pointer value
        let (chop, len) = array_shape(1_000_000, 1000, 22);
        assert_eq!(chop, required_bits(1000));
        assert_eq!(len, 1001);
    }

    #[test]
    fn array_pointers_add_the_high_bits() {
        // low bits 2: next = 0, 3, 5, 9 for records 0..4 (high parts 0, 0, 1, 2)
        let starts = vec![0, 2, 3];
        let p = Pointers::Array {
            low_bits: 2,
            starts,
        };
        let lows = [0u8, 3, 1, 1];
        let bytes: Vec<u8> = lows.iter().copied().chain([0; 8]).collect();
        let array = BitArray::new(&bytes, 8);
        let next: Vec<u64> = (0..4).map(|i| p.next(&array, i, 0).unwrap()).collect();
        assert_eq!(next, vec![0, 3, 5, 9]);
        let empty = Pointers::Array {
            low_bits: 2,
            starts: vec![1],
        };
        assert_eq!(empty.next(&array, 0, 0), None);
    }
}
