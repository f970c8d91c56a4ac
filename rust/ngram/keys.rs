//! N-gram keys: how an n-gram is named in every table.
//!
//! An n-gram of order m >= 2 is keyed by `(entry number of its (m-1)-token prefix, last word)`
//! packed into a `u64`, so a key is 8 bytes whatever the order and no n-gram ever needs a heap
//! allocation (KenLM's probing tables hash whole n-grams; chaining through the prefix gives the
//! same lookups one order at a time, which is what scoring does anyway). Unigrams need no table:
//! their entry number is the word id. Entry numbers are slots of probing tables
//! ([`crate::ngram::probing`], [`crate::ngram::counts`]).

/// Highest order accepted: beyond this nothing is gained and the tables only grow.
pub const MAX_ORDER: usize = 64;

/// Marks "no entry" in arrays of entry numbers.
pub const NONE: u32 = u32::MAX;

/// Marks an empty slot (no valid key has `u32::MAX` as its prefix).
pub const EMPTY: u64 = u64::MAX;

/// Marks a slot whose n-gram was left out of a table built slot for slot from a counting table
/// (a pruned n-gram, see [`crate::ngram::probing::ProbingTable::from_slots`]): it holds no
/// n-gram, but lookups probe past it as past a taken slot, so that the keys stored after it in
/// its probe sequence stay reachable (an empty slot there would end their lookups). Its prefix
/// is `u32::MAX`, as [`EMPTY`]'s: no valid key matches it.
pub const REMOVED: u64 = u64::MAX - 1;

/// Whether the slot holding `key` holds no n-gram ([`EMPTY`] or [`REMOVED`]).
#[inline]
pub fn is_free(key: u64) -> bool {
    key_prefix(key) == NONE
}

/// Packs a prefix entry number and a word id into a key.
#[inline]
pub fn pack(prefix: u32, word: u32) -> u64 {
    (u64::from(prefix) << 32) | u64::from(word)
}

/// The prefix entry number of a key.
#[inline]
pub fn key_prefix(key: u64) -> u32 {
    (key >> 32) as u32
}

/// The last word of a key.
#[inline]
pub fn key_word(key: u64) -> u32 {
    key as u32
}

/// A 64-bit mix (MurmurHash3's finaliser): every key bit affects every hash bit.
#[inline]
pub fn hash_key(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The home slot of `key` in a table of `capacity` slots (multiply-shift range reduction:
/// uniform over any capacity, no power of two needed).
#[inline]
pub fn home_slot(key: u64, capacity: usize) -> usize {
    ((u128::from(hash_key(key)) * capacity as u128) >> 64) as usize
}

/// Looks up an n-gram one order at a time: `find(m, prefix, word)` answers for order m >= 2.
pub fn find_chain(
    ids: &[u32],
    vocab_len: usize,
    find: impl Fn(usize, u32, u32) -> Option<u32>,
) -> Option<u32> {
    let (&first, rest) = ids.split_first()?;
    if first as usize >= vocab_len {
        return None;
    }
    let mut entry = first;
    for (i, &w) in rest.iter().enumerate() {
        entry = find(i + 2, entry, w)?;
    }
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_homes_stay_in_range() {
        let k = pack(7, 9);
        assert_eq!((key_prefix(k), key_word(k)), (7, 9));
        for cap in [1usize, 2, 3, 1000, 1 << 20] {
            for p in 0..200u32 {
                assert!(home_slot(pack(p, p + 1), cap) < cap);
            }
        }
        assert_ne!(hash_key(pack(1, 2)), hash_key(pack(2, 1)));
    }
}
