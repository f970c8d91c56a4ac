//! The ids of a vocabulary's words for the reader's many lookups (every word of every n-gram
//! line): an open-addressing table whose slots hold each word's hash and, when short, its bytes,
//! so that a lookup usually reads one slot. [`Vocab`]'s map keeps every word in an allocation
//! of its own, one more cache miss per lookup: that miss was a third of the reading time of a
//! 1.3 GB trigram ARPA file.

use hashbrown::HashMap;
use xxhash_rust::xxh3::xxh3_64;

use crate::corpus::vocab::Vocab;
use crate::ngram::keys::NONE;
use crate::util::prefetch::prefetch;

/// Words up to this many bytes are kept in their slot.
const INLINE: usize = 19;

/// One word: 32 bytes, two to a cache line.
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    hash: u64,
    /// The word's id, [`NONE`] in an empty slot.
    id: u32,
    /// The word's length in bytes when it is at most [`INLINE`], else `u8::MAX`.
    len: u8,
    bytes: [u8; INLINE],
}

/// The ids of the words of a [`Vocab`], looked up by spelling.
pub struct WordIndex {
    slots: Vec<Slot>,
    /// The words longer than [`INLINE`] bytes, by id.
    long: HashMap<u32, Box<str>>,
}

impl WordIndex {
    /// The index of every word of `vocab`.
    pub fn new(vocab: &Vocab) -> Self {
        let capacity = (vocab.len() * 3 / 2 + 1).next_power_of_two();
        let empty = Slot {
            hash: 0,
            id: NONE,
            len: 0,
            bytes: [0; INLINE],
        };
        let mut index = WordIndex {
            slots: vec![empty; capacity],
            long: HashMap::new(),
        };
        for id in 0..vocab.len() as u32 {
            let word = vocab.word(id).as_bytes();
            let hash = xxh3_64(word);
            let mut i = index.home(hash);
            while index.slots[i].id != NONE {
                i = (i + 1) & (capacity - 1);
            }
            let slot = &mut index.slots[i];
            *slot = Slot { hash, id, ..empty };
            if word.len() <= INLINE {
                slot.len = word.len() as u8;
                slot.bytes[..word.len()].copy_from_slice(word);
            } else {
                slot.len = u8::MAX;
                index.long.insert(id, vocab.word(id).into());
            }
        }
        index
    }

    fn home(&self, hash: u64) -> usize {
        (hash as usize) & (self.slots.len() - 1)
    }

    /// Asks the CPU to start loading the slot where `word` is looked up first (a hint: the
    /// reader issues it some lines ahead of the lookup).
    pub fn prefetch(&self, word: &[u8]) {
        prefetch(&self.slots[self.home(xxh3_64(word))]);
    }

    /// The id of `word`, if it is in the vocabulary.
    pub fn get(&self, word: &str) -> Option<u32> {
        self.get_bytes(word.as_bytes())
    }

    /// [`WordIndex::get`] for a word given as bytes.
    pub fn get_bytes(&self, word: &[u8]) -> Option<u32> {
        let hash = xxh3_64(word);
        let mut i = self.home(hash);
        loop {
            let slot = &self.slots[i];
            if slot.id == NONE {
                return None;
            }
            if slot.hash == hash {
                let same = if word.len() <= INLINE {
                    usize::from(slot.len) == word.len() && &slot.bytes[..word.len()] == word
                } else {
                    slot.len == u8::MAX
                        && self.long.get(&slot.id).map(|w| w.as_bytes()) == Some(word)
                };
                if same {
                    return Some(slot.id);
                }
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_word_and_no_other() {
        let mut vocab = Vocab::new();
        let long = "a word longer than the nineteen bytes kept inline";
        for w in ["a", "ab", "abc", "ñandú", long, "x".repeat(INLINE).as_str()] {
            vocab.intern(w);
        }
        for i in 0..1000 {
            vocab.intern(&format!("w{i}"));
        }
        let index = WordIndex::new(&vocab);
        for id in 0..vocab.len() as u32 {
            assert_eq!(index.get(vocab.word(id)), Some(id));
            index.prefetch(vocab.word(id).as_bytes());
        }
        let absent = [
            "",
            "abcd",
            "w1000",
            "x",
            &"x".repeat(INLINE + 1),
            &long[1..],
        ];
        for w in absent {
            assert_eq!(index.get(w), None, "{w:?}");
        }
    }
}
