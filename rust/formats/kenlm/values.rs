//! How a trie stores the log10 probability and backoff of its n-grams of order >= 2
//! (`lm/quantize.{hh,cc}`): whole float32s, or bin numbers into per-order tables of bin centers
//! (`build_binary -q P -b B`). Unigrams are never quantized.
//!
//! - Plain: a middle order's record holds the probability as a 31-bit float (its sign bit, always
//!   set, dropped) then the backoff as a float32; the highest order only the probability.
//! - Quantized: the search area starts with a block of version 2, P, B (one byte each, then 5 of
//!   padding), then for each middle order a table of 2^P probability centers and one of 2^B
//!   backoff centers, then 2^P probability centers for the highest order (float32 each). A middle
//!   record holds the backoff bin (B bits) then the probability bin (P bits); bins 0 and 1 of a
//!   backoff table are -0.0 and 0.0 (KenLM's "no extension" marks: both are backoff 0).

use super::bits::BitArray;
use super::{format_err, read_u32};
use crate::error::Result;

/// The quantization block's version (`kSeparatelyQuantizeVersion`).
const QUANTIZE_VERSION: u8 = 2;

/// The most bits KenLM allows for a bin number.
const MAX_BIN_BITS: u8 = 25;

/// Bin centers of one table.
#[derive(Debug, Clone)]
pub struct Bins {
    bits: u8,
    centers: Vec<f32>,
}

impl Bins {
    fn read(search: &[u8], at: usize, bits: u8) -> Option<(Bins, usize)> {
        let n = 1usize << bits;
        // checked before allocating: up to 2^25 centers
        if at.checked_add(4 * n)? > search.len() {
            return None;
        }
        let centers = (0..n)
            .map(|i| read_u32(search, at + 4 * i).map(f32::from_bits))
            .collect::<Option<Vec<f32>>>()?;
        Some((Bins { bits, centers }, at + 4 * n))
    }

    #[inline]
    fn decode(&self, array: &BitArray<'_>, index: u64, offset: u64) -> Option<f32> {
        let bin = array.field(index, offset, self.bits)?;
        self.centers.get(bin as usize).copied()
    }
}

/// The value encoding of a trie.
#[derive(Debug, Clone)]
pub enum Values {
    Plain,
    Quantized {
        /// (probability, backoff) tables of orders 2..N-1.
        middle: Vec<(Bins, Bins)>,
        /// Probability table of order N.
        longest: Bins,
    },
}

impl Values {
    /// Reads the quantization block at the start of `search` (for `quantized` files) of a model
    /// of order `order`; returns the encoding and the bytes it takes.
    pub fn parse(
        search: &[u8],
        order: usize,
        quantized: bool,
        path: &str,
    ) -> Result<(Values, usize)> {
        if !quantized {
            return Ok((Values::Plain, 0));
        }
        let truncated = || {
            format_err(
                path,
                "truncated KenLM binary file: it ends inside the quantization tables",
            )
        };
        let head = search.get(..3).ok_or_else(truncated)?;
        let (version, prob_bits, backoff_bits) = (head[0], head[1], head[2]);
        if version != QUANTIZE_VERSION {
            return Err(format_err(
                path,
                format!("KenLM quantization version {version}, expected {QUANTIZE_VERSION}"),
            ));
        }
        for (what, bits) in [("probability", prob_bits), ("backoff", backoff_bits)] {
            if !(1..=MAX_BIN_BITS).contains(&bits) {
                return Err(format_err(
                    path,
                    format!(
                        "KenLM quantization: {bits} bits per {what}, expected 1 to {MAX_BIN_BITS}"
                    ),
                ));
            }
        }
        let mut at = 8;
        let mut middle = Vec::with_capacity(order - 2);
        for _ in 2..order {
            let (prob, next) = Bins::read(search, at, prob_bits).ok_or_else(truncated)?;
            let (backoff, next) = Bins::read(search, next, backoff_bits).ok_or_else(truncated)?;
            middle.push((prob, backoff));
            at = next;
        }
        let (longest, end) = Bins::read(search, at, prob_bits).ok_or_else(truncated)?;
        Ok((Values::Quantized { middle, longest }, end))
    }

    /// Bits of a middle order's record taken by its values.
    pub fn middle_bits(&self) -> u8 {
        match self {
            Values::Plain => 63,
            Values::Quantized { longest, .. } => longest.bits + self.backoff_bits(),
        }
    }

    fn backoff_bits(&self) -> u8 {
        match self {
            Values::Plain => 32,
            Values::Quantized { middle, .. } => middle.first().map_or(0, |(_, b)| b.bits),
        }
    }

    /// Bits of a highest-order record taken by its value.
    pub fn longest_bits(&self) -> u8 {
        match self {
            Values::Plain => 31,
            Values::Quantized { longest, .. } => longest.bits,
        }
    }

    /// (log10 p, log10 backoff) of record `index` of middle order `m`, its values at bit `offset`.
    #[inline]
    pub fn middle(
        &self,
        m: usize,
        array: &BitArray<'_>,
        index: u64,
        offset: u64,
    ) -> Option<(f32, f32)> {
        match self {
            Values::Plain => Some((
                array.non_positive_float(index, offset)?,
                array.float(index, offset + 31)?,
            )),
            Values::Quantized { middle, .. } => {
                let (prob, backoff) = middle.get(m - 2)?;
                Some((
                    prob.decode(array, index, offset + u64::from(backoff.bits))?,
                    backoff.decode(array, index, offset)?,
                ))
            }
        }
    }

    /// log10 p of record `index` of the highest order, its value at bit `offset`.
    #[inline]
    pub fn longest(&self, array: &BitArray<'_>, index: u64, offset: u64) -> Option<f32> {
        match self {
            Values::Plain => array.non_positive_float(index, offset),
            Values::Quantized { longest, .. } => longest.decode(array, index, offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(prob_bits: u8, backoff_bits: u8, order: usize) -> Vec<u8> {
        let mut b = vec![QUANTIZE_VERSION, prob_bits, backoff_bits, 0, 0, 0, 0, 0];
        for m in 2..=order {
            for i in 0..(1u32 << prob_bits) {
                b.extend_from_slice(&(-(i as f32) - m as f32 / 10.0).to_le_bytes());
            }
            if m < order {
                for i in 0..(1u32 << backoff_bits) {
                    b.extend_from_slice(&(i as f32 / 100.0).to_le_bytes());
                }
            }
        }
        b
    }

    #[test]
    fn decodes_bins_of_each_order() {
        let b = block(2, 3, 3);
        let (values, len) = Values::parse(&b, 3, true, "f").unwrap();
        assert_eq!(len, b.len());
        assert_eq!((values.middle_bits(), values.longest_bits()), (5, 2));
        // a middle record: backoff bin 5 (3 bits) then probability bin 2 (2 bits)
        let record = [5u8 | (2 << 3), 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let array = BitArray::new(&record, 5);
        assert_eq!(values.middle(2, &array, 0, 0), Some((-2.2, 0.05)));
        let array = BitArray::new(&record, 2);
        assert_eq!(values.longest(&array, 0, 0), Some(-1.3));
    }

    #[test]
    fn refuses_bad_blocks() {
        let mut b = block(2, 3, 3);
        b[0] = 1;
        assert!(Values::parse(&b, 3, true, "f")
            .unwrap_err()
            .to_string()
            .contains("version 1"));
        let mut b = block(2, 3, 3);
        b[1] = 0;
        assert!(Values::parse(&b, 3, true, "f")
            .unwrap_err()
            .to_string()
            .contains("0 bits"));
        let b = block(2, 3, 3);
        assert!(Values::parse(&b[..b.len() - 1], 3, true, "f")
            .unwrap_err()
            .to_string()
            .contains("truncated"));
    }
}
