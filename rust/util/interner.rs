//! Strings interned into dense ids, their spellings kept one after the other in one string.
//!
//! One allocation holds every spelling (not one each), and the hash index finds a spelling by
//! its place in that string: a probe compares the lengths, then the bytes. Used where many short
//! strings are interned at a high rate (the tokens of a batch of text, the types of a Punkt
//! model, the words of a corpus's or a model's vocabulary).

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
    hasher: DefaultHashBuilder,
}

/// An id in the index, with the place of its spelling in `bytes` (so that a probe needs no look
/// at `ends`).
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    len: u32,
    id: u32,
}

impl Entry {
    #[inline]
    fn spelling(self, bytes: &str) -> &[u8] {
        &bytes.as_bytes()[self.start..self.start + self.len as usize]
    }
}

impl Interner {
    /// An empty interner with room for `strings` strings of `bytes` bytes in all.
    pub fn with_capacity(strings: usize, bytes: usize) -> Self {
        Interner {
            bytes: String::with_capacity(bytes),
            ends: Vec::with_capacity(strings),
            index: HashTable::with_capacity(strings),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// Makes room for `strings` more strings of `bytes` more bytes in all.
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(strings);
        let (all, hasher) = (&self.bytes, &self.hasher);
        self.index
            .reserve(strings, |e| hasher.hash_one(e.spelling(all)));
    }

    /// The id of `s`, interning it if new (it then gets the next id, `len()` before the call).
    #[inline]
    pub fn intern(&mut self, s: &str) -> u32 {
        let key = s.as_bytes();
        let hash = self.hasher.hash_one(key);
        if let Some(id) = self.find(hash, key) {
            return id;
        }
        let entry = Entry {
            start: self.bytes.len(),
            len: u32::try_from(key.len()).expect("a string under 4 GiB"),
            id: u32::try_from(self.ends.len()).expect("fewer than 2^32 strings"),
        };
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
        let (all, hasher) = (&self.bytes, &self.hasher);
        self.index
            .insert_unique(hash, entry, |e| hasher.hash_one(e.spelling(all)));
        entry.id
    }

    /// The id of `s`, if interned.
    #[inline]
    pub fn get(&self, s: &str) -> Option<u32> {
        let key = s.as_bytes();
        self.find(self.hasher.hash_one(key), key)
    }

    #[inline]
    fn find(&self, hash: u64, key: &[u8]) -> Option<u32> {
        let all = &self.bytes;
        self.index
            .find(hash, |e| {
                e.len as usize == key.len() && e.spelling(all) == key
            })
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
}
