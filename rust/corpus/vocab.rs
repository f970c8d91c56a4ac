//! Vocabulary interning: token string <-> dense `u32` id.
//!
//! Ids 0, 1, 2 are reserved for `<unk>`, `<s>` and `</s>` (KenLM puts `<unk>` first too), so
//! every vocabulary, whatever text it was built from, agrees on them.

use std::sync::Arc;

use crate::util::interner::Interner;

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

/// No id: the place of a word whose id is not known yet (never an id, as a vocabulary holds
/// fewer than 2^32 - 1 words).
pub const UNSET: u32 = u32::MAX;

/// The spellings of the reserved ids, in id order.
pub const RESERVED: [&str; 3] = ["<unk>", "<s>", "</s>"];

/// A string interner with the reserved tokens at ids 0..3.
///
/// Cloning is cheap: clones share one table (a model fitted on a corpus holds the corpus's
/// vocabulary, not a copy of it) until one of them adds a word, which then copies it. Two
/// vocabularies that share a table translate to each other without a lookup
/// ([`Vocab::translation_from`]).
#[derive(Debug, Clone)]
pub struct Vocab {
    table: Arc<Interner>,
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
            table: Arc::default(),
        };
        for w in RESERVED {
            v.intern(w);
        }
        v
    }

    /// The id of `word`, adding it if new.
    pub fn intern(&mut self, word: &str) -> u32 {
        if let Some(id) = self.table.get(word) {
            return id;
        }
        Arc::make_mut(&mut self.table).intern(word)
    }

    /// Makes room for `words` more words of `bytes` bytes in all, without rehashing (used when
    /// loading a model).
    pub fn reserve(&mut self, words: usize, bytes: usize) {
        Arc::make_mut(&mut self.table).reserve(words, bytes);
    }

    /// The id of `word`, if it is in the vocabulary.
    pub fn get(&self, word: &str) -> Option<u32> {
        self.table.get(word)
    }

    /// The id of `word`, or [`UNK`].
    pub fn id_or_unk(&self, word: &str) -> u32 {
        self.get(word).unwrap_or(UNK)
    }

    /// The spelling of `id`.
    #[inline]
    pub fn word(&self, id: u32) -> &str {
        self.table.spelling(id)
    }

    /// Starts loading where the spelling of `id` is kept: a hint for code that will look up
    /// many words in no order (see [`Interner::prefetch_place`]).
    #[inline]
    pub fn prefetch_place(&self, id: u32) {
        self.table.prefetch_place(id);
    }

    /// Starts loading the spelling of `id`, some time after [`Vocab::prefetch_place`] of it.
    #[inline]
    pub fn prefetch_word(&self, id: u32) {
        self.table.prefetch_spelling(id);
    }

    /// Number of ids, reserved ones included.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Never true: the reserved tokens are always there.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// All spellings in id order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        (0..self.len() as u32).map(|id| self.table.spelling(id))
    }

    /// For each id of `other`, the id of the same spelling here (or [`UNK`]): the identity,
    /// with no lookup, when both share one table (a model and the corpus it was fitted on).
    pub fn translation_from(&self, other: &Vocab) -> Vec<u32> {
        if Arc::ptr_eq(&self.table, &other.table) {
            return (0..self.len() as u32).collect();
        }
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

    #[test]
    fn clones_share_their_table_until_one_grows() {
        let mut a = Vocab::new();
        a.intern("x");
        let mut b = a.clone();
        assert_eq!(a.translation_from(&b), vec![0, 1, 2, 3]);
        assert_eq!(b.intern("x"), 3);
        assert!(
            Arc::ptr_eq(&a.table, &b.table),
            "a known word copies nothing"
        );
        assert_eq!(b.intern("y"), 4);
        assert!(!Arc::ptr_eq(&a.table, &b.table));
        assert_eq!((a.len(), a.get("y")), (4, None));
        assert_eq!(b.translation_from(&a), vec![0, 1, 2, 3]);
        assert_eq!(a.translation_from(&b), vec![0, 1, 2, 3, UNK]);
        b.reserve(10, 40);
        assert_eq!(b.get("y"), Some(4));
    }
}
