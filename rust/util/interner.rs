//! Strings interned into dense ids, their spellings kept one after the other in one string.
//!
//! One allocation holds every spelling (not one each), and the hash index finds a spelling by
//! its place in that string. Each entry of the index also holds the first 8 bytes of its
//! spelling, so that a probe compares the lengths and those bytes in registers, and reads the
//! spelling only for the bytes after them: most tokens and words are that short, and comparing
//! them as slices meant a `memcmp` call and a second cache line per probe (the `memcmp` calls
//! alone were a fifth of the native tokenizer's interning time on Machado). Strings of up to 8
//! bytes are hashed from the same 8 bytes by one multiplication. Used where many short strings
//! are interned at a high rate (the tokens of a batch of text, the types of a Punkt model, the
//! words of a corpus's or a model's vocabulary).

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use crate::util::prefetch::prefetch;

/// Strings and their ids `0..len()`, in order of first interning.
#[derive(Debug, Clone, Default)]
pub struct Interner {
    /// The spellings, one after the other.
    bytes: String,
    /// End of each spelling in `bytes`.
    ends: Vec<usize>,
    /// Ids by the hash of their spelling.
    index: HashTable<Entry>,
    hasher: KeyHasher,
}

/// Hashes spellings: those of up to 8 bytes from their [`head`] and length, by one folded
/// multiplication (as foldhash mixes its short inputs), the others by foldhash. Seeded at random,
/// as foldhash is.
#[derive(Debug, Clone)]
struct KeyHasher {
    long: DefaultHashBuilder,
    /// The random seed of the short keys' hash, drawn from foldhash's.
    seed: u64,
}

impl Default for KeyHasher {
    fn default() -> Self {
        let long = DefaultHashBuilder::default();
        let seed = long.hash_one(0u8);
        KeyHasher { long, seed }
    }
}

impl KeyHasher {
    #[inline(always)]
    fn hash(&self, key: &[u8], key_head: u64) -> u64 {
        /// An odd constant with bits spread over the word (the fractional part of pi).
        const MIX: u64 = 0x243f_6a88_85a3_08d3;
        if key.len() <= 8 {
            let product = u128::from(key_head ^ self.seed) * u128::from(MIX ^ key.len() as u64);
            (product as u64) ^ ((product >> 64) as u64)
        } else {
            self.long.hash_one(key)
        }
    }
}

/// An id in the index, with the first bytes of its spelling and the place of the spelling in
/// `bytes` (so that a probe needs no look at `ends`).
#[derive(Debug, Clone, Copy)]
struct Entry {
    head: u64,
    start: usize,
    len: u32,
    id: u32,
}

impl Entry {
    #[inline]
    fn spelling(self, bytes: &str) -> &[u8] {
        &bytes.as_bytes()[self.start..self.start + self.len as usize]
    }

    /// Whether this is the entry of `key`, whose [`head`] is `key_head`.
    #[inline(always)]
    fn is(self, key: &[u8], key_head: u64, bytes: &str) -> bool {
        self.len as usize == key.len()
            && self.head == key_head
            && (key.len() <= 8 || self.spelling(bytes)[8..] == key[8..])
    }
}

/// The first 8 bytes of `key` as a little-endian number, zero-padded: with the length, the whole
/// of a key of up to 8 bytes. Reads whole words where the key has them (two overlapping reads
/// for 4 to 7 bytes, whose common bytes are the same).
#[inline(always)]
fn head(key: &[u8]) -> u64 {
    let len = key.len();
    if let Some(first) = key.first_chunk::<8>() {
        u64::from_le_bytes(*first)
    } else if len >= 4 {
        let low = u64::from(u32::from_le_bytes([key[0], key[1], key[2], key[3]]));
        let high = u64::from(u32::from_le_bytes([
            key[len - 4],
            key[len - 3],
            key[len - 2],
            key[len - 1],
        ]));
        low | (high << (8 * (len - 4)))
    } else if len > 0 {
        // 1 to 3 bytes: the first, the middle and the last cover them all
        u64::from(key[0])
            | (u64::from(key[len / 2]) << (8 * (len / 2)))
            | (u64::from(key[len - 1]) << (8 * (len - 1)))
    } else {
        0
    }
}

impl Interner {
    /// An empty interner with room for `strings` strings of `bytes` bytes in all.
    pub fn with_capacity(strings: usize, bytes: usize) -> Self {
        Interner {
            bytes: String::with_capacity(bytes),
            ends: Vec::with_capacity(strings),
            index: HashTable::with_capacity(strings),
            hasher: KeyHasher::default(),
        }
    }

    /// Makes room for `strings` more strings of `bytes` more bytes in all.
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(strings);
        let (all, hasher) = (&self.bytes, &self.hasher);
        self.index
            .reserve(strings, |e| hasher.hash(e.spelling(all), e.head));
    }

    /// The id of `s`, interning it if new (it then gets the next id, `len()` before the call).
    #[inline]
    pub fn intern(&mut self, s: &str) -> u32 {
        let key = s.as_bytes();
        let key_head = head(key);
        let hash = self.hasher.hash(key, key_head);
        if let Some(id) = self.find(hash, key, key_head) {
            return id;
        }
        let entry = Entry {
            head: key_head,
            start: self.bytes.len(),
            len: u32::try_from(key.len()).expect("a string under 4 GiB"),
            id: u32::try_from(self.ends.len()).expect("fewer than 2^32 strings"),
        };
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
        let (all, hasher) = (&self.bytes, &self.hasher);
        self.index
            .insert_unique(hash, entry, |e| hasher.hash(e.spelling(all), e.head));
        entry.id
    }

    /// The id of `s`, if interned.
    #[inline]
    pub fn get(&self, s: &str) -> Option<u32> {
        let key = s.as_bytes();
        let key_head = head(key);
        self.find(self.hasher.hash(key, key_head), key, key_head)
    }

    #[inline]
    fn find(&self, hash: u64, key: &[u8], key_head: u64) -> Option<u32> {
        let all = &self.bytes;
        self.index
            .find(hash, |e| e.is(key, key_head, all))
            .map(|e| e.id)
    }

    /// Where the spelling of string `i` (< `len()`) starts in `bytes`.
    #[inline]
    fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// The spelling of `id`.
    #[inline]
    pub fn spelling(&self, id: u32) -> &str {
        let i = id as usize;
        &self.bytes[self.start(i)..self.ends[i]]
    }

    /// Starts loading where the spelling of `id` is recorded (a hint, see [`prefetch`]; a
    /// [`Interner::prefetch_spelling`] of the same id a little later then reads it from the
    /// cache).
    #[inline]
    pub fn prefetch_place(&self, id: u32) {
        if let Some(end) = self.ends.get(id as usize) {
            prefetch(end);
        }
    }

    /// Starts loading the spelling of `id` (a hint; it reads where the spelling is).
    #[inline]
    pub fn prefetch_spelling(&self, id: u32) {
        let i = id as usize;
        if i < self.len() {
            if let Some(first) = self.bytes.as_bytes().get(self.start(i)) {
                prefetch(first);
            }
        }
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_order_of_first_interning() {
        let mut i = Interner::with_capacity(2, 4);
        let words = ["a", "b", "a", "ab", "", "b", ""];
        let ids: Vec<u32> = words.iter().map(|w| i.intern(w)).collect();
        assert_eq!(ids, [0, 1, 0, 2, 3, 1, 3]);
        assert_eq!(i.len(), 4);
        assert_eq!(
            (0..4).map(|id| i.spelling(id)).collect::<Vec<_>>(),
            ["a", "b", "ab", ""]
        );
        assert_eq!((i.get("ab"), i.get("ba")), (Some(2), None));
        // growing past the room asked for keeps every id
        i.reserve(1000, 4000);
        for n in 0..1000 {
            i.intern(&format!("w{n}"));
        }
        assert_eq!(
            (i.get("w999"), i.get("a"), i.len()),
            (Some(1003), Some(0), 1004)
        );
    }

    #[test]
    fn heads_hold_short_keys_whole_and_long_keys_differ_after_them() {
        // every key of 0 to 8 bytes over a few bytes (NUL included): the head and the length
        // tell it apart from every other
        let alphabet = [0u8, b'a', 0xc3, 0xff];
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = keys.clone();
        for _ in 1..=8 {
            last = last
                .iter()
                .flat_map(|k| alphabet.iter().map(move |&b| [&k[..], &[b]].concat()))
                .collect();
            keys.extend(last.iter().cloned());
        }
        let mut seen = std::collections::HashSet::new();
        for k in &keys {
            let mut expected = [0u8; 8];
            expected[..k.len()].copy_from_slice(k);
            assert_eq!(head(k), u64::from_le_bytes(expected), "{k:?}");
            assert!(seen.insert((head(k), k.len())), "{k:?}");
        }
        // strings that share their first 8 bytes, or differ only in length or in a NUL
        let mut i = Interner::default();
        let words = [
            "abcdefgh",
            "abcdefghi",
            "abcdefghj",
            "abcdefgh\0",
            "abc",
            "abc\0",
            "",
            "\0",
            "abcdefghij_long_tail_1",
            "abcdefghij_long_tail_2",
            "açúcar",
            "açúcares",
        ];
        let ids: Vec<u32> = words.iter().map(|w| i.intern(w)).collect();
        assert_eq!(ids, (0..words.len() as u32).collect::<Vec<_>>());
        for (id, w) in words.iter().enumerate() {
            assert_eq!((i.get(w), i.intern(w)), (Some(id as u32), id as u32));
        }
        assert_eq!(i.get("abcdefghij_long_tail_3"), None);
    }
}
