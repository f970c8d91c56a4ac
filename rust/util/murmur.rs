//! MurmurHash64A (Austin Appleby's public-domain 64-bit hash), the hash KenLM's binary files
//! key their vocabularies by (`util/murmur_hash.cc`, `lm/vocab.cc` `HashForVocab`, seed 0):
//! 8-byte little-endian blocks, then the 0-7 tail bytes, then a final mix.

const M: u64 = 0xc6a4_a793_5bd1_e995;
const R: u32 = 47;

/// MurmurHash64A of `bytes` with `seed`, as on a little-endian machine.
pub fn murmur_hash64a(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(M);
    let mut blocks = bytes.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8-byte chunk"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written out step by step for a 9-byte input (one block, a one-byte tail).
    #[test]
    fn one_block_and_a_tail() {
        let bytes = b"abcdefghi";
        let mut h = 9u64.wrapping_mul(M);
        let mut k = u64::from_le_bytes(*b"abcdefgh").wrapping_mul(M);
        k ^= k >> R;
        h = (h ^ k.wrapping_mul(M)).wrapping_mul(M);
        h = (h ^ u64::from(b'i')).wrapping_mul(M);
        h ^= h >> R;
        h = h.wrapping_mul(M);
        assert_eq!(murmur_hash64a(bytes, 0), h ^ (h >> R));
    }

    #[test]
    fn empty_input_is_the_mixed_seed() {
        let mut h = 7u64;
        h ^= h >> R;
        h = h.wrapping_mul(M);
        assert_eq!(murmur_hash64a(b"", 7), h ^ (h >> R));
    }
}
