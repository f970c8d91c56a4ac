//! A corpus re-tokenized word by word: each token replaced by a sequence of sub-word tokens
//! (the SentencePiece pieces of each distinct word, computed once per word, not once per
//! occurrence), sentences and documents kept; the sentences that must be cut whole are given
//! whole.

use crate::corpus::vocab::{BOS, EOS};
use crate::corpus::Corpus;
use crate::error::{Error, Result};

impl Corpus {
    /// The corpus with every token of id `i` replaced by the tokens `pieces[i]` (one entry per
    /// id of the vocabulary; unused ids may have any), except the sentences of `whole`
    /// (sentence index, its tokens; in increasing order), which get those tokens. A sentence
    /// whose tokens all become nothing stays, empty; the pieces `<s>` and `</s>` are refused.
    pub fn expand(&self, pieces: &[Vec<String>], whole: &[(usize, Vec<String>)]) -> Result<Corpus> {
        if pieces.len() != self.vocab.len() {
            return Err(Error::invalid(format!(
                "expected the pieces of each of the {} words of the vocabulary, got {}",
                self.vocab.len(),
                pieces.len()
            )));
        }
        if whole.windows(2).any(|w| w[0].0 >= w[1].0)
            || whole.last().is_some_and(|w| w.0 >= self.num_sentences())
        {
            return Err(Error::invalid(
                "the sentences given whole must be increasing sentence indices",
            ));
        }
        let mut used = vec![false; pieces.len()];
        for &id in &self.ids {
            used[id as usize] = true;
        }
        let mut out = Corpus::new();
        let mut new_ids: Vec<Vec<u32>> = Vec::with_capacity(pieces.len());
        for (word, word_pieces) in pieces.iter().enumerate() {
            if !used[word] {
                new_ids.push(Vec::new());
                continue;
            }
            let ids = out.intern_pieces(word_pieces, self.vocab.word(word as u32))?;
            new_ids.push(ids);
        }
        out.ids.reserve(self.ids.len() * 2);
        out.sentence_offsets.reserve(self.num_sentences());
        let mut whole = whole.iter().peekable();
        for s in 0..self.num_sentences() {
            if let Some((_, tokens)) = whole.next_if(|w| w.0 == s) {
                let ids = out.intern_pieces(tokens, &format!("sentence {s}"))?;
                out.ids.extend_from_slice(&ids);
            } else {
                for &id in self.sentence(s) {
                    out.ids.extend_from_slice(&new_ids[id as usize]);
                }
            }
            out.sentence_offsets.push(out.ids.len());
        }
        out.document_offsets.clone_from(&self.document_offsets);
        Ok(out)
    }

    /// Indices of the sentences holding a token whose id is flagged in `flagged`.
    pub fn sentences_with(&self, flagged: &[bool]) -> Vec<usize> {
        (0..self.num_sentences())
            .filter(|&s| {
                self.sentence(s)
                    .iter()
                    .any(|&id| flagged.get(id as usize).copied().unwrap_or(false))
            })
            .collect()
    }

    /// The ids of `tokens` (the pieces of `what`), interned; the markers are refused.
    fn intern_pieces(&mut self, tokens: &[String], what: &str) -> Result<Vec<u32>> {
        tokens
            .iter()
            .map(|p| match self.vocab.intern(p) {
                BOS | EOS => Err(Error::invalid(format!(
                    "{what:?} is cut into the piece {p:?}, a sentence marker"
                ))),
                id => Ok(id),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(corpus: &Corpus, cut: impl Fn(&str) -> Vec<&str>) -> Vec<Vec<String>> {
        corpus
            .vocab()
            .words()
            .map(|w| cut(w).into_iter().map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn each_word_becomes_its_pieces_sentences_and_documents_kept() {
        let mut corpus = Corpus::new();
        corpus.push_kenlm_text("ab c\n\nc\n").unwrap();
        corpus.end_document();
        corpus.push_kenlm_text("c ab\n").unwrap();
        corpus.end_document();
        let table = pieces(&corpus, |w| match w {
            "ab" => vec!["_a", "b"],
            "c" => vec![],
            _ => vec!["never used"],
        });
        let whole = [(2, vec!["c".to_string(), "c".to_string()])];
        let out = corpus.expand(&table, &whole).unwrap();
        let words = |s: usize| -> Vec<&str> {
            out.sentence(s)
                .iter()
                .map(|&i| out.vocab().word(i))
                .collect()
        };
        assert_eq!(out.num_sentences(), 4);
        assert_eq!(words(0), ["_a", "b"]);
        assert!(words(1).is_empty());
        assert_eq!(words(2), ["c", "c"]); // given whole
        let flagged: Vec<bool> = corpus.vocab().words().map(|w| w == "ab").collect();
        assert_eq!(corpus.sentences_with(&flagged), [0, 3]);
        assert_eq!(words(3), ["_a", "b"]);
        assert_eq!(out.document_offsets, corpus.document_offsets);
        assert!(out.vocab().get("never used").is_none());
    }

    #[test]
    fn refuses_markers_and_tables_of_the_wrong_size() {
        let mut corpus = Corpus::new();
        corpus.push_kenlm_text("a\n").unwrap();
        let err = corpus
            .expand(&pieces(&corpus, |_| vec!["</s>"]), &[])
            .unwrap_err();
        assert!(err.to_string().contains("sentence marker"), "{err}");
        let err = corpus.expand(&[], &[]).unwrap_err();
        assert!(err.to_string().contains("expected the pieces"), "{err}");
        let table = pieces(&corpus, |w| vec![w]);
        let err = corpus.expand(&table, &[(1, vec![])]).unwrap_err();
        assert!(
            err.to_string().contains("increasing sentence indices"),
            "{err}"
        );
    }
}
