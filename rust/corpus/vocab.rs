//! Vocabulary interning: token string <-> dense `u32` id.
//!
//! Ids 0, 1, 2 are reserved for `<unk>`, `<s>` and `</s>` (KenLM puts `<unk>` first too), so
//! every vocabulary, whatever text it was built from, agrees on them.

use hashbrown::HashMap;

/// Id of `<unk>`, the stand-in for every out-of-vocabulary token.
pub const UNK: u32 = 0;
/// Id of `<s>`, the sentence-start context (never predicted).
pub const BOS: u32 = 1;
/// Id of `</s>`, the predicted end of a sentence.
pub const EOS: u32 = 2;
/// Whether word `id` can be predicted by a model (`bos_eos`: with sentence markers): never
/// `<s>`, and `</s>` only with the markers.
pub fn predictable(id: u32, bos_eos: bool) -> bool {
    id != BOS && (bos_eos || id != EOS)
}

/// The spellings of the reserved ids, in id order.
pub const RESERVED: [&str; 3] = ["<unk>", "<s>", "</s>"];

/// A string interner with the reserved tokens at ids 0..3.
#[derive(Debug, Clone)]
pub struct Vocab {
    ids: HashMap<Box<str>, u32>,
    words: Vec<Box<str>>,
}

impl Default for Vocab {
    fn default() -> Self {
        Self::new()
    }
}

impl Vocab {
    /// A vocabulary holding only the reserved tokens.
    pub fn new() -> Self {
        let mut v = Vocab {
            ids: HashMap::new(),
            words: Vec::new(),
        };
        for w in RESERVED {
            v.intern(w);
        }
        v
    }

    /// The id of `word`, adding it if new.
    pub fn intern(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = u32::try_from(self.words.len()).expect("vocabulary larger than 2^32 types");
        self.words.push(word.into());
        self.ids.insert(word.into(), id);
        id
    }

    /// Makes room for `additional` more words without rehashing (used when loading a model).
    pub fn reserve(&mut self, additional: usize) {
        self.ids.reserve(additional);
        self.words.reserve(additional);
    }

    /// The id of `word`, if it is in the vocabulary.
    pub fn get(&self, word: &str) -> Option<u32> {
        self.ids.get(word).copied()
    }

    /// The id of `word`, or [`UNK`].
    pub fn id_or_unk(&self, word: &str) -> u32 {
        self.get(word).unwrap_or(UNK)
    }

    /// The spelling of `id`.
    pub fn word(&self, id: u32) -> &str {
        &self.words[id as usize]
    }

    /// Number of ids, reserved ones included.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Never true: the reserved tokens are always there.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// All spellings in id order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|w| &**w)
    }

    /// For each id of `other`, the id of the same spelling here (or [`UNK`]).
    pub fn translation_from(&self, other: &Vocab) -> Vec<u32> {
        other.words().map(|w| self.id_or_unk(w)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_ids_come_first() {
        let mut v = Vocab::new();
        assert_eq!(v.get("<unk>"), Some(UNK));
        assert_eq!(v.get("<s>"), Some(BOS));
        assert_eq!(v.get("</s>"), Some(EOS));
        assert_eq!(v.intern("a"), 3);
        assert_eq!(v.intern("a"), 3);
        assert_eq!(v.word(3), "a");
        assert_eq!(v.id_or_unk("zzz"), UNK);
    }

    #[test]
    fn translation_maps_unknown_to_unk() {
        let mut a = Vocab::new();
        a.intern("x");
        let mut b = Vocab::new();
        b.intern("y");
        b.intern("x");
        assert_eq!(a.translation_from(&b), vec![0, 1, 2, 0, 3]);
    }
}
