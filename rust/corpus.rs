//! A tokenized corpus: documents of sentences of interned tokens, stored flat.
//!
//! Tokens are kept unpadded; `<s>`/`</s>` are added by whoever consumes the corpus (see
//! [`crate::stream`]). Empty sentences are dropped on the way in: they hold no token to count or
//! score. The literal tokens `<s>` and `</s>` are refused (they are markers, not words); a literal
//! `<unk>` is taken as the unknown word, as KenLM does.

use crate::error::{Error, Result};
use crate::vocab::{Vocab, BOS, EOS};

/// How a whitespace-tokenized text is cut into sentences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentenceMode {
    /// Each non-empty line is a sentence.
    Lines,
    /// A sentence ends after a token `t` for which Python's `t in ".!?"` holds.
    Terminators,
    /// The whole text is one token sequence.
    Whole,
}

impl SentenceMode {
    /// Parses the names used by the Python API.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "lines" => Ok(Self::Lines),
            "terminators" => Ok(Self::Terminators),
            "none" => Ok(Self::Whole),
            other => Err(Error::invalid(format!(
                "unknown sentence mode {other:?} for the whitespace tokenizer \
                 (expected 'lines', 'terminators' or 'none')"
            ))),
        }
    }
}

/// True for the tokens after which the tutorial's rule `t in ".!?"` ends a sentence.
pub fn is_terminator(token: &str) -> bool {
    !token.is_empty() && ".!?".contains(token)
}

/// Python's `str.split()` whitespace: Unicode White_Space plus the ASCII separators 0x1c..0x1f.
fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Documents of sentences of token ids, with the vocabulary that interns them.
#[derive(Debug, Clone)]
pub struct Corpus {
    vocab: Vocab,
    ids: Vec<u32>,
    /// Start of each sentence in `ids`, plus the end: `sentences() + 1` entries.
    sentence_offsets: Vec<usize>,
    /// Start of each document in sentences, plus the end.
    document_offsets: Vec<usize>,
}

impl Default for Corpus {
    fn default() -> Self {
        Self::new()
    }
}

impl Corpus {
    /// An empty corpus with one open (empty) document.
    pub fn new() -> Self {
        Corpus {
            vocab: Vocab::new(),
            ids: Vec::new(),
            sentence_offsets: vec![0],
            document_offsets: vec![0],
        }
    }

    /// Appends one sentence to the current document; an empty one is dropped.
    pub fn push_sentence<'a>(&mut self, tokens: impl IntoIterator<Item = &'a str>) -> Result<()> {
        let start = self.ids.len();
        for token in tokens {
            let id = self.vocab.intern(token);
            if id == BOS || id == EOS {
                self.ids.truncate(start);
                return Err(Error::invalid(format!(
                    "sentence {} holds the reserved token {token:?}: sentence markers are \
                     added by fastppl (bos_eos=True), do not put them in the text",
                    self.num_sentences()
                )));
            }
            self.ids.push(id);
        }
        if self.ids.len() > start {
            self.sentence_offsets.push(self.ids.len());
        }
        Ok(())
    }

    /// Splits `text` on whitespace (Python's `str.split()` rules) and appends its sentences.
    pub fn push_whitespace_text(&mut self, text: &str, mode: SentenceMode) -> Result<()> {
        match mode {
            SentenceMode::Lines => {
                for line in text.lines() {
                    self.push_sentence(line.split(is_python_whitespace).filter(|t| !t.is_empty()))?;
                }
            }
            SentenceMode::Whole => {
                self.push_sentence(text.split(is_python_whitespace).filter(|t| !t.is_empty()))?;
            }
            SentenceMode::Terminators => {
                let mut sentence: Vec<&str> = Vec::new();
                for token in text.split(is_python_whitespace).filter(|t| !t.is_empty()) {
                    sentence.push(token);
                    if is_terminator(token) {
                        self.push_sentence(sentence.drain(..))?;
                    }
                }
                self.push_sentence(sentence)?;
            }
        }
        Ok(())
    }

    /// Closes the current document; the next sentences start a new one. A document with no
    /// sentence is kept (it has no token and is left out of macro averages).
    pub fn end_document(&mut self) {
        self.document_offsets.push(self.num_sentences());
    }

    /// Closes the last document if sentences were added since the last `end_document`.
    pub fn finish(&mut self) {
        if *self.document_offsets.last().unwrap() < self.num_sentences()
            || self.document_offsets.len() == 1
        {
            self.end_document();
        }
    }

    /// The vocabulary of this corpus.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// All token ids, sentences concatenated.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Number of (non-empty) sentences.
    pub fn num_sentences(&self) -> usize {
        self.sentence_offsets.len() - 1
    }

    /// Number of tokens (no sentence markers).
    pub fn num_tokens(&self) -> usize {
        self.ids.len()
    }

    /// Sentence boundaries: `num_sentences() + 1` offsets into [`Corpus::ids`].
    pub fn sentence_offsets(&self) -> &[usize] {
        &self.sentence_offsets
    }

    /// Document boundaries in sentences (closed documents only).
    pub fn document_offsets(&self) -> &[usize] {
        &self.document_offsets
    }

    /// The token ids of sentence `i`.
    pub fn sentence(&self, i: usize) -> &[u32] {
        &self.ids[self.sentence_offsets[i]..self.sentence_offsets[i + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(c: &Corpus, i: usize) -> Vec<&str> {
        c.sentence(i).iter().map(|&id| c.vocab().word(id)).collect()
    }

    #[test]
    fn terminators_follow_the_tutorial_rule() {
        assert!(is_terminator("."));
        assert!(is_terminator("!?"));
        assert!(is_terminator(".!?"));
        assert!(!is_terminator("?!"));
        assert!(!is_terminator(""));
        assert!(!is_terminator("..."));
    }

    #[test]
    fn whitespace_modes() {
        let mut c = Corpus::new();
        c.push_whitespace_text("a b . c\n\n d ? e", SentenceMode::Terminators)
            .unwrap();
        assert_eq!(c.num_sentences(), 3);
        assert_eq!(words(&c, 0), ["a", "b", "."]);
        assert_eq!(words(&c, 1), ["c", "d", "?"]);
        assert_eq!(words(&c, 2), ["e"]);
        let mut l = Corpus::new();
        l.push_whitespace_text("a b\n\n  \nc\u{a0}d\u{1f}e\n", SentenceMode::Lines)
            .unwrap();
        assert_eq!(l.num_sentences(), 2);
        assert_eq!(words(&l, 1), ["c", "d", "e"]);
        let mut w = Corpus::new();
        w.push_whitespace_text("a\nb", SentenceMode::Whole).unwrap();
        assert_eq!(w.num_sentences(), 1);
        assert_eq!(w.num_tokens(), 2);
    }

    #[test]
    fn reserved_markers_are_refused_and_nothing_is_half_added() {
        let mut c = Corpus::new();
        let err = c.push_sentence(["a", "</s>"]).unwrap_err();
        assert!(err.to_string().contains("</s>"));
        assert_eq!(c.num_tokens(), 0);
        assert_eq!(c.num_sentences(), 0);
    }

    #[test]
    fn documents() {
        let mut c = Corpus::new();
        c.push_sentence(["a"]).unwrap();
        c.end_document();
        c.push_sentence(["b"]).unwrap();
        c.push_sentence(Vec::<&str>::new()).unwrap();
        c.finish();
        assert_eq!(c.document_offsets(), &[0, 1, 2]);
    }
}
