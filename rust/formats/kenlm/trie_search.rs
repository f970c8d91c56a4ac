//! KenLM's trie search (`lm/search_trie.hh`, `lm/trie.{hh,cc}`, `lm/vocab.cc`
//! `SortedVocabulary`), used in place on the mapped file: the layout and the bit-level readers
//! are trie.rs's (which also converts a trie whole); scoring over it is mapped.rs's.
//!
//! The vocabulary is a u64 count then the sorted 64-bit murmur hashes of the words: a word's id
//! is its hash's position + 1 (`<unk>`, id 0, is not in the array). A node is a range of records
//! of the next order, the children of the n-gram found last (sorted by word); a word's unigram
//! record points at the bigrams ending with it, each bigram at the trigrams ending with it, and
//! so on, so the lookups walk back through the context as the probing search does. An n-gram
//! with no children is "independent left".

use std::sync::Arc;

use super::format_err;
use super::header::{Header, SearchKind};
use super::mapped::{KenlmModel, Search};
use super::trie::Trie;
use crate::error::Result;
use crate::util::mapped::{FileBytes, MappedSlice};
use crate::util::murmur::murmur_hash64a;

/// KenLM's trie search over a mapped file.
pub struct TrieSearch {
    trie: Trie,
    /// The words' hashes, sorted (id - 1 = position).
    hashes: MappedSlice<u64>,
    order: usize,
}

/// A KenLM trie scored in place.
pub type TrieModel = KenlmModel<TrieSearch>;

impl TrieSearch {
    /// The children of record `c` of order `m` (an empty range if they lie outside the file).
    #[inline]
    fn children(&self, m: usize, c: u64) -> (u64, u64) {
        match (self.trie.next(m, c), self.trie.next(m, c + 1)) {
            (Some(begin), Some(end)) => (begin, end),
            _ => (0, 0),
        }
    }
}

impl Search for TrieSearch {
    /// The records `begin..end` of the next order.
    type Node = (u64, u64);

    fn open(bytes: &Arc<FileBytes>, header: &Header, path: &str) -> Result<(Self, usize)> {
        let SearchKind::Trie {
            quantized,
            array_pointers,
        } = header.search
        else {
            return Err(format_err(path, "a KenLM probing file, not a trie"));
        };
        let trie = Trie::parse(bytes, header, quantized, array_pointers, path)?;
        let stored = super::read_u64(bytes, header.data_start).unwrap_or(0);
        // (every word but <unk>, which KenLM's sorted vocabulary does not store)
        if stored.checked_add(1) != Some(header.counts[0]) {
            return Err(format_err(
                path,
                format!(
                    "KenLM trie vocabulary of {stored} hashed words, but the header counts {} \
                     unigrams with <unk> (corrupt file?)",
                    header.counts[0]
                ),
            ));
        }
        let hashes = MappedSlice::new(
            Arc::clone(bytes),
            header.data_start + 8,
            8 * stored as usize,
        )
        .ok_or_else(|| format_err(path, "truncated KenLM binary file: its vocabulary"))?;
        let words_at = trie.end;
        Ok((
            TrieSearch {
                trie,
                hashes,
                order: header.counts.len(),
            },
            words_at,
        ))
    }

    /// `SortedVocabulary::Index`: 1 + the position of the word's hash.
    fn word_id(&self, word: &str) -> Option<u32> {
        let hash = murmur_hash64a(word.as_bytes(), 0);
        let at = self.hashes.as_slice().binary_search(&hash).ok()?;
        u32::try_from(at + 1).ok()
    }

    #[inline]
    fn unigram(&self, w: u32) -> (f32, f32, bool, (u64, u64)) {
        let (prob, backoff, _) = self.trie.unigram(u64::from(w));
        let node = self.children(1, u64::from(w));
        (prob, backoff, node.0 >= node.1, node)
    }

    #[inline]
    fn middle(&self, j: usize, w: u32, node: &mut (u64, u64)) -> Option<(f32, f32, bool)> {
        let m = j + 2;
        let c = self.trie.find(m, node.0, node.1, w)?;
        let (_, prob, backoff) = self.trie.record(m, c)?;
        *node = self.children(m, c);
        Some((prob, backoff, node.0 >= node.1))
    }

    #[inline]
    fn longest(&self, w: u32, node: (u64, u64)) -> Option<f32> {
        let c = self.trie.find(self.order, node.0, node.1, w)?;
        self.trie.record(self.order, c).map(|(_, prob, _)| prob)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::vocab::UNK;
    use crate::formats::kenlm::header::parse_header;
    use crate::formats::kenlm::read_kenlm_bytes;
    use crate::model::scorer::Scorer;
    use crate::util::job::Job;

    /// The trie fuzz seed (a trigram Kneser-Ney model of three English sentences, written by
    /// `tests/helpers/kenlm_trie.py`).
    const SMALL: &[u8] = include_bytes!("../../fuzz/seeds/kenlm_reader/small.trie.bin");

    /// In place and converted, the trie gives the same scores and n-gram lengths for every pair
    /// of words, `</s>` after each (the converted model sums in float64, hence 1e-6).
    #[test]
    fn in_place_scores_as_converted() {
        let bytes = Arc::new(FileBytes::read(SMALL, SMALL.len()).unwrap());
        let header = parse_header(&bytes, "small").unwrap();
        let mapped = TrieModel::open(Arc::clone(&bytes), header, "small".to_string()).unwrap();
        let converted = read_kenlm_bytes(&bytes, "small", &Job::none()).unwrap();
        let words = mapped.words().unwrap();
        assert_eq!(words[0], "<unk>");
        for a in &words {
            for b in &words {
                if a == "<s>" || b == "<s>" {
                    continue;
                }
                let ours = mapped.score_sentence_full(&[mapped.id(a), mapped.id(b)], true, true);
                let ids = [converted.id(a), converted.id(b)];
                let theirs = converted.score_sentence_full(&ids, true, true);
                for (x, y) in ours.iter().zip(&theirs) {
                    assert_eq!(x.1, y.1, "{a} {b}");
                    assert!((x.0 - y.0).abs() < 1e-6, "{a} {b}: {x:?} {y:?}");
                }
            }
        }
        assert_eq!(mapped.id("no such word"), UNK);
    }

    /// A vocabulary that stores fewer or more hashed words than every word but `<unk>` (what
    /// KenLM writes) is refused, not read with words missing.
    #[test]
    fn a_vocabulary_of_another_size_is_refused() {
        let header = parse_header(&FileBytes::read(SMALL, SMALL.len()).unwrap(), "small").unwrap();
        let at = header.data_start;
        let stored = u64::from_le_bytes(SMALL[at..at + 8].try_into().unwrap());
        assert_eq!(stored + 1, header.counts[0]);
        for wrong in [0, stored - 1, stored + 1, u64::MAX] {
            let mut data = SMALL.to_vec();
            data[at..at + 8].copy_from_slice(&wrong.to_le_bytes());
            let bytes = Arc::new(FileBytes::read(data.as_slice(), data.len()).unwrap());
            let header = parse_header(&bytes, "small").unwrap();
            let e = TrieModel::open(bytes, header, "small".to_string())
                .err()
                .unwrap();
            assert!(e
                .to_string()
                .contains(&format!("vocabulary of {wrong} hashed words")));
        }
    }
}
