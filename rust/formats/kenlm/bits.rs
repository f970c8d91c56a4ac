//! Bit-packed records (`util/bit_packing.hh`): the trie's orders are arrays of fixed-width
//! records, each a sequence of fields of 1 to 57 bits, least significant bit first (little-endian
//! files), record `i` starting at bit `i * width`.

/// A field of at most this many bits is read with one 8-byte load.
pub const MAX_FIELD_BITS: u8 = 57;

/// The number of bits that hold every value up to `max` (KenLM's `RequiredBits`: 0 for 0).
pub fn required_bits(max: u64) -> u8 {
    (u64::BITS - max.leading_zeros()) as u8
}

/// Fixed-width records over bytes; reads are bounds-checked (`None` past the end).
#[derive(Debug, Clone, Copy)]
pub struct BitArray<'a> {
    bytes: &'a [u8],
    /// Bits per record.
    pub width: u64,
}

impl<'a> BitArray<'a> {
    pub fn new(bytes: &'a [u8], width: u8) -> Self {
        BitArray {
            bytes,
            width: u64::from(width),
        }
    }

    /// The `len`-bit field (`len <= 57`) at bit `offset` of record `index`.
    #[inline]
    pub fn field(&self, index: u64, offset: u64, len: u8) -> Option<u64> {
        debug_assert!(len <= MAX_FIELD_BITS);
        let bit = index.checked_mul(self.width)?.checked_add(offset)?;
        let byte = usize::try_from(bit / 8).ok()?;
        let word = self.bytes.get(byte..byte.checked_add(8)?)?;
        let word = u64::from_le_bytes(word.try_into().ok()?);
        Some((word >> (bit % 8)) & ((1u64 << len) - 1))
    }

    /// A float32 stored whole at bit `offset` of record `index`.
    #[inline]
    pub fn float(&self, index: u64, offset: u64) -> Option<f32> {
        let bits = self.field(index, offset, 32)?;
        Some(f32::from_bits(bits as u32))
    }

    /// A float32 <= 0 stored without its sign bit (31 bits, KenLM's `NonPositiveFloat31`).
    #[inline]
    pub fn non_positive_float(&self, index: u64, offset: u64) -> Option<f32> {
        let bits = self.field(index, offset, 31)?;
        Some(f32::from_bits(bits as u32 | 0x8000_0000))
    }
}

/// Bytes for `records + 1` records of `width` bits and the 8 bytes an 8-byte load may run past
/// the last one (KenLM's `BitPacked::BaseSize`); `None` on overflow.
pub fn packed_bytes(records: u64, width: u8) -> Option<u64> {
    let bits = records.checked_add(1)?.checked_mul(u64::from(width))?;
    Some(bits.checked_add(7)? / 8 + 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_bits_as_kenlm() {
        assert_eq!(required_bits(0), 0);
        assert_eq!(required_bits(1), 1);
        assert_eq!(required_bits(2), 2);
        assert_eq!(required_bits(255), 8);
        assert_eq!(required_bits(256), 9);
        assert_eq!(required_bits(u64::MAX), 64);
    }

    #[test]
    fn reads_fields_across_bytes_and_stops_at_the_end() {
        // records of 13 bits: a 5-bit field then an 8-bit one, values (i, 200 + i)
        let width = 13u8;
        let mut bytes = vec![0u8; packed_bytes(10, width).unwrap() as usize];
        for i in 0..10u64 {
            for (offset, len, value) in [(0u64, 5u64, i), (5, 8, 200 + i)] {
                for b in 0..len {
                    if value >> b & 1 == 1 {
                        let at = i * u64::from(width) + offset + b;
                        bytes[(at / 8) as usize] |= 1 << (at % 8);
                    }
                }
            }
        }
        let a = BitArray::new(&bytes, width);
        for i in 0..10 {
            assert_eq!(a.field(i, 0, 5), Some(i));
            assert_eq!(a.field(i, 5, 8), Some(200 + i));
        }
        assert_eq!(a.field(1 << 40, 0, 5), None);
        assert_eq!(a.field(u64::MAX, 0, 5), None);
    }

    #[test]
    fn floats_with_and_without_sign() {
        let mut bytes = vec![0u8; 16];
        bytes[..4].copy_from_slice(&(-1.25f32).to_bits().to_le_bytes());
        let a = BitArray::new(&bytes, 32);
        assert_eq!(a.float(0, 0), Some(-1.25));
        assert_eq!(a.non_positive_float(0, 0), Some(-1.25));
        bytes[3] &= 0x7f;
        assert_eq!(
            BitArray::new(&bytes, 32).non_positive_float(0, 0),
            Some(-1.25)
        );
    }
}
