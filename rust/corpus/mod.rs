//! A tokenized corpus: documents of sentences of interned tokens, stored flat.
//!
//! Tokens are kept unpadded; `<s>`/`</s>` are added by whoever consumes the corpus (see
//! [`crate::corpus::padded_stream`]). Empty sentences are dropped on the way in (they hold no token to count or
//! score), except by [`Corpus::push_kenlm_text`]: KenLM reads a blank line as the sentence
//! `<s> </s>`, which has a `</s>` to count and score. The literal tokens `<s>` and `</s>` are refused (they are markers, not words); a literal
//! `<unk>` is taken as the unknown word, as KenLM does.

pub mod clean;
pub mod documents;
mod expand;
pub mod nltk;
pub mod padded_stream;
pub mod vocab;

use crate::corpus::vocab::{Vocab, BOS, EOS, RESERVED, UNK, UNSET};
use crate::error::{Error, Result};

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

/// KenLM's token separators: the ASCII whitespace of `util/spaces.cc` (`kSpaces`, used by
/// `query`): space, `\t`, `\n`, `\v`, `\f`, `\r`. No other byte, and no Unicode space (U+00A0,
/// U+3000 ...), separates tokens.
pub fn is_kenlm_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The tokens of `text` split as KenLM splits them (see [`is_kenlm_space`]). Every separator is
/// one ASCII byte, so the pieces of a `&str` are `&str`s.
pub fn kenlm_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_ascii() && is_kenlm_space(c as u8))
        .filter(|t| !t.is_empty())
}

/// The smallest piece of text that [`Corpus::push_line_pieces`] reads on a core of its own.
const PARALLEL_PIECE_BYTES: usize = 1 << 20;

/// `text` cut into at most `n` pieces of whole lines (each but the last ends with `\n`) of at
/// least `min` bytes (but the last), about equal; one piece (`text`) when it is too short.
fn line_pieces(text: &str, n: usize, min: usize) -> Vec<&str> {
    let n = n.min(text.len() / min.max(1)).max(1);
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..n {
        let target = (text.len() * i / n).max(start + min);
        let Some(newline) = text
            .as_bytes()
            .get(target..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
        else {
            break;
        };
        let end = target + newline + 1;
        if end >= text.len() {
            break;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces.push(&text[start..]);
    pieces
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

    /// An empty corpus with room for the words and tokens of about `text_bytes` bytes of text,
    /// so that its tables are seldom rebuilt as they grow: a distinct word per 64 bytes of a
    /// long text (4 MB of Gutenberg hold one per 53-62 bytes), nearly every word of a short one
    /// (see [`nltk::token_room`]).
    pub fn for_text(text_bytes: usize) -> Self {
        let mut corpus = Corpus::new();
        let words = nltk::type_room(text_bytes, 64);
        corpus.vocab.reserve(words, 8 * words);
        corpus.ids.reserve(nltk::token_room(text_bytes));
        corpus
    }

    /// Appends one sentence to the current document; an empty one is dropped.
    pub fn push_sentence<'a>(&mut self, tokens: impl IntoIterator<Item = &'a str>) -> Result<()> {
        self.push_sentence_with(tokens, false)
    }

    /// Appends one sentence; an empty one is kept when `keep_empty` (KenLM's blank line).
    fn push_sentence_with<'a>(
        &mut self,
        tokens: impl IntoIterator<Item = &'a str>,
        keep_empty: bool,
    ) -> Result<()> {
        for token in tokens {
            self.push_token(token)?;
        }
        self.end_sentence_with(keep_empty);
        Ok(())
    }

    /// Appends `token` to the sentence being built, which [`Corpus::end_sentence`] closes, and
    /// gives its id. A reserved marker (`<s>`, `</s>`) is an error, and drops the tokens of that
    /// sentence.
    pub fn push_token(&mut self, token: &str) -> Result<u32> {
        let id = self.vocab.intern(token);
        if id == BOS || id == EOS {
            self.ids.truncate(self.sentence_start());
            return Err(Error::InvalidItem {
                item: "sentence",
                index: self.num_sentences(),
                reason: format!(
                    "holds the reserved token {token:?}: sentence markers are added by fastppl \
                     (bos_eos=True), do not put them in the text"
                ),
            });
        }
        self.ids.push(id);
        Ok(id)
    }

    /// Appends the token of `id` to the sentence being built: an id that
    /// [`Corpus::push_token`] gave.
    fn push_id(&mut self, id: u32) {
        debug_assert!(id != BOS && id != EOS && (id as usize) < self.vocab.len());
        self.ids.push(id);
    }

    /// Closes the sentence built by [`Corpus::push_token`]; an empty one is dropped.
    pub fn end_sentence(&mut self) {
        self.end_sentence_with(false);
    }

    /// Where the sentence being built starts in `ids` (their end when it holds no token yet).
    fn sentence_start(&self) -> usize {
        self.sentence_offsets[self.num_sentences()]
    }

    /// Whether the sentence being built holds tokens.
    fn sentence_is_open(&self) -> bool {
        self.ids.len() > self.sentence_start()
    }

    fn end_sentence_with(&mut self, keep_empty: bool) {
        if keep_empty || self.sentence_is_open() {
            self.sentence_offsets.push(self.ids.len());
        }
    }

    /// Appends the sentences of `text` read exactly as KenLM's `lmplz` and `query` read them: one
    /// sentence per line (lines end at `\n` only), tokens separated by ASCII whitespace
    /// ([`is_kenlm_space`]), and a blank line (nothing but separators) is an empty sentence,
    /// which a model pads to `<s> </s>`. The `\n` that ends the text does not start another
    /// sentence; a last line without `\n` is a sentence when it holds a token.
    ///
    /// A long text is read on all cores, in pieces of whole lines (`Corpus::push_line_pieces`).
    pub fn push_kenlm_text(&mut self, text: &str) -> Result<()> {
        self.push_line_pieces(text, Corpus::push_kenlm_lines)
    }

    /// Reads `text` with `read`, which reads lines independently of each other (a sentence never
    /// spans two lines): a long text on all cores, in pieces of whole lines ([`line_pieces`]),
    /// each into a corpus of its own, appended in order ([`Corpus::append_known`]), which gives
    /// the same ids as reading the text in one go. Where a piece holds a reserved token, it is
    /// read again here after the pieces before it, so that the error and what was added before
    /// it are those of reading in one go.
    fn push_line_pieces(
        &mut self,
        text: &str,
        read: impl Fn(&mut Corpus, &str) -> Result<()> + Sync,
    ) -> Result<()> {
        let pieces = line_pieces(text, rayon::current_num_threads(), PARALLEL_PIECE_BYTES);
        self.push_pieces(&pieces, read)
    }

    /// [`Corpus::push_line_pieces`] of the text cut into `pieces`. Each piece is read into a
    /// vocabulary of its own, small and in cache, and each of its words then looked up in this
    /// corpus's vocabulary on the same core: on the Gutenberg shards the lookups of every token
    /// in a vocabulary of a million words (cache misses, nearly all of the reading) took twice
    /// as long as reading into a new one, and the core that did them kept the other waiting.
    fn push_pieces(
        &mut self,
        pieces: &[&str],
        read: impl Fn(&mut Corpus, &str) -> Result<()> + Sync,
    ) -> Result<()> {
        use rayon::prelude::*;
        let mut pieces = pieces;
        if self.sentence_is_open() {
            // a sentence is open: the first line goes on with it, so it is read here
            let Some((first, rest)) = pieces.split_first() else {
                return Ok(());
            };
            read(self, first)?;
            pieces = rest;
        }
        if let [only] = pieces {
            return read(self, only);
        }
        let this: &Corpus = self;
        let parts: Vec<Result<(Corpus, Vec<u32>)>> = pieces
            .par_iter()
            .map(|piece| {
                let mut part = Corpus::for_text(piece.len());
                read(&mut part, piece)?;
                let known = this.known_ids(&part);
                Ok((part, known))
            })
            .collect();
        for (piece, part) in pieces.iter().zip(parts) {
            match part {
                Ok((part, known)) => self.append_known(&part, known),
                Err(_) => return read(self, piece),
            }
        }
        Ok(())
    }

    /// [`Corpus::push_kenlm_text`] on this thread.
    fn push_kenlm_lines(&mut self, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut lines = body.split('\n').peekable();
        while let Some(line) = lines.next() {
            let last_unterminated = lines.peek().is_none() && !text.ends_with('\n');
            let mut tokens = kenlm_tokens(line).peekable();
            if last_unterminated && tokens.peek().is_none() {
                break; // trailing blanks with no newline: KenLM reads no sentence there
            }
            self.push_sentence_with(tokens, true)?;
        }
        Ok(())
    }

    /// Occurrences of each id of the vocabulary in the tokens (sentence markers excluded).
    pub fn id_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.vocab.len()];
        for &id in &self.ids {
            counts[id as usize] += 1;
        }
        counts
    }

    /// A copy whose tokens that `keep` refuses (given the id and the spelling) are `<unk>`.
    ///
    /// The copy's vocabulary holds the reserved tokens and the kept words only, in their
    /// original order, so a model fitted on it knows nothing of the replaced words (they are
    /// not in |V|). Sentence and document boundaries are unchanged.
    pub fn map_to_unk(&self, mut keep: impl FnMut(u32, &str) -> bool) -> Corpus {
        let mut vocab = Vocab::new();
        let old_to_new: Vec<u32> = self
            .vocab
            .words()
            .enumerate()
            .map(|(id, word)| {
                let id = id as u32;
                if id < RESERVED.len() as u32 {
                    id
                } else if keep(id, word) {
                    vocab.intern(word)
                } else {
                    UNK
                }
            })
            .collect();
        Corpus {
            vocab,
            ids: self.ids.iter().map(|&i| old_to_new[i as usize]).collect(),
            sentence_offsets: self.sentence_offsets.clone(),
            document_offsets: self.document_offsets.clone(),
        }
    }

    /// A copy in which the words seen fewer than `min_count` times, and, when `allowed` is given,
    /// the words it does not hold, are `<unk>` (see [`Corpus::map_to_unk`]).
    pub fn limit_vocab(
        &self,
        min_count: u64,
        allowed: Option<&hashbrown::HashSet<&str>>,
    ) -> Corpus {
        let counts = self.id_counts();
        self.map_to_unk(|id, word| {
            counts[id as usize] >= min_count && allowed.is_none_or(|a| a.contains(word))
        })
    }

    /// Splits `text` on whitespace (Python's `str.split()` rules) and appends its sentences.
    pub fn push_whitespace_text(&mut self, text: &str, mode: SentenceMode) -> Result<()> {
        match mode {
            SentenceMode::Lines => self.push_line_pieces(text, Corpus::push_whitespace_lines)?,
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

    /// [`Corpus::push_whitespace_text`] of `text` in [`SentenceMode::Lines`], on this thread.
    fn push_whitespace_lines(&mut self, text: &str) -> Result<()> {
        for line in text.lines() {
            self.push_sentence(line.split(is_python_whitespace).filter(|t| !t.is_empty()))?;
        }
        Ok(())
    }

    /// For each word of `part`'s vocabulary, its id here, or [`UNSET`] where it has none yet:
    /// looked up without changing this corpus, so that parts read on all cores are looked up
    /// there too (one lookup per word of a part, not per token), before
    /// [`Corpus::append_known`] adds them in order.
    pub fn known_ids(&self, part: &Corpus) -> Vec<u32> {
        part.vocab
            .words()
            .map(|w| self.vocab.get(w).unwrap_or(UNSET))
            .collect()
    }

    /// Appends the sentences of `part` (all closed) to the current document, as reading the
    /// text of `part` here would have: its words are interned in the order `part` first met
    /// them, so the ids of the words new here follow their first occurrences. `ids` are their
    /// ids here as [`Corpus::known_ids`] looked them up, maybe before the parts ahead of `part`
    /// were appended: a word it left [`UNSET`] is interned now, which also finds the words those
    /// parts added.
    pub fn append_known(&mut self, part: &Corpus, mut ids: Vec<u32>) {
        debug_assert!(!part.sentence_is_open() && !self.sentence_is_open());
        debug_assert_eq!(ids.len(), part.vocab.len());
        // the reserved words come first in both vocabularies, so they keep their ids
        for (id, word) in ids.iter_mut().zip(part.vocab.words()) {
            if *id == UNSET {
                *id = self.vocab.intern(word);
            }
        }
        let base = self.ids.len();
        self.ids.extend(part.ids.iter().map(|&id| ids[id as usize]));
        self.sentence_offsets
            .extend(part.sentence_offsets[1..].iter().map(|&end| base + end));
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
        // growth by doubling leaves up to half of each array unused: give it back
        self.ids.shrink_to_fit();
        self.sentence_offsets.shrink_to_fit();
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

    /// A reserved marker is an error located at its sentence, counted in the whole corpus, also
    /// when the text is read in pieces on all cores.
    #[test]
    fn a_reserved_marker_is_an_error_at_its_sentence() {
        let text = format!("{}y </s> z\nw\n", "w x\n".repeat(300));
        for n in [1, 4] {
            let mut c = Corpus::new();
            c.push_sentence(["a"]).unwrap();
            let err = c
                .push_pieces(&line_pieces(&text, n, 64), Corpus::push_kenlm_lines)
                .unwrap_err();
            let message = err.to_string();
            let Error::InvalidItem {
                item: "sentence",
                index: 301,
                reason,
            } = err
            else {
                panic!("not located at sentence 301: {err:?}");
            };
            assert!(
                reason.starts_with("holds the reserved token \"</s>\": "),
                "{reason}"
            );
            assert_eq!(message, format!("sentence 301 {reason}"));
        }
    }

    #[test]
    fn kenlm_lines_keep_blank_lines_and_split_on_ascii_whitespace_only() {
        let mut c = Corpus::new();
        c.push_kenlm_text("a\u{a0}b c\r\n\n \t\r\nd\x0be\x0cf\u{3000}g\n\nh")
            .unwrap();
        let got: Vec<Vec<&str>> = (0..c.num_sentences()).map(|i| words(&c, i)).collect();
        assert_eq!(
            got,
            vec![
                vec!["a\u{a0}b", "c"],
                vec![],
                vec![],
                vec!["d", "e", "f\u{3000}g"],
                vec![],
                vec!["h"],
            ]
        );
        let count = |t: &str| {
            let mut c = Corpus::new();
            c.push_kenlm_text(t).unwrap();
            c.num_sentences()
        };
        assert_eq!(count(""), 0);
        assert_eq!(count("\n"), 1);
        assert_eq!(count("\n\n"), 2);
        assert_eq!(count("a\n"), 1);
        assert_eq!(count("a"), 1);
        assert_eq!(count("a\n  "), 1);
        assert_eq!(count("a\n\x00"), 2); // NUL is a token byte for query
    }

    /// Pieces of whole lines, about equal, at least `min` bytes but the last, joined the text.
    #[test]
    fn line_pieces_cut_after_newlines() {
        let text = "aa\nb\n\ncccc\nd\ne";
        for n in 1..6 {
            for min in [1, 3, 100] {
                let pieces = line_pieces(text, n, min);
                assert_eq!(pieces.concat(), text, "{n} {min}");
                assert!(pieces.len() <= n.max(1));
                let (last, before) = pieces.split_last().unwrap();
                assert!(!last.is_empty());
                assert!(before.iter().all(|p| p.ends_with('\n') && p.len() >= min));
            }
        }
        assert_eq!(line_pieces("abc", 4, 1), ["abc"]);
        assert_eq!(line_pieces("", 2, 1), [""]);
    }

    /// Reading a text in pieces on all cores gives the corpus of reading it in one go (ids
    /// included), for KenLM's reading and whitespace lines, blank lines, `\r\n`, a last line
    /// without newline and an open sentence included; a reserved token in a later piece gives
    /// the same error and keeps the same sentences.
    #[test]
    fn text_read_in_pieces_is_read_as_in_one_go() {
        use std::fmt::Write as _;
        let mut text = String::new();
        for i in 0..3000 {
            writeln!(text, "w{} x{i} w{}", i % 97, i % 13).unwrap();
            if i % 7 == 0 {
                text.push_str(" \t\r\n");
            }
        }
        text.push_str("last w3 line");
        // with a sentence open before the text, and with none
        for open in [true, false] {
            read_in_pieces_as_in_one_go(&text, open);
        }
    }

    fn read_in_pieces_as_in_one_go(text: &str, open: bool) {
        let fresh = || {
            let mut c = Corpus::new();
            c.push_sentence(["w5", "before", "x7"]).unwrap();
            if open {
                c.push_token("open").unwrap();
            }
            c
        };
        let same = |a: &Corpus, b: &Corpus| {
            assert_eq!(a.ids(), b.ids());
            assert_eq!(a.sentence_offsets(), b.sentence_offsets());
            assert!(a.vocab().words().eq(b.vocab().words()));
        };
        let readers: [fn(&mut Corpus, &str) -> Result<()>; 2] =
            [Corpus::push_kenlm_lines, Corpus::push_whitespace_lines];
        for read in readers {
            let mut whole = fresh();
            read(&mut whole, text).unwrap();
            for n in [2, 3, 8] {
                let mut pieces = fresh();
                pieces.push_pieces(&line_pieces(text, n, 64), read).unwrap();
                same(&pieces, &whole);
            }
            let bad = text.replacen("x2500", "</s>", 1);
            let mut whole = fresh();
            let expected = read(&mut whole, &bad).unwrap_err().to_string();
            let mut pieces = fresh();
            let got = pieces
                .push_pieces(&line_pieces(&bad, 4, 64), read)
                .unwrap_err()
                .to_string();
            assert_eq!(got, expected);
            same(&pieces, &whole);
        }
    }

    #[test]
    fn limit_vocab_maps_rare_and_unlisted_words_to_unk() {
        let mut c = Corpus::new();
        c.push_sentence(["a", "b", "a", "c"]).unwrap();
        c.end_document();
        c.push_sentence(["c", "d", "a"]).unwrap();
        c.finish();
        let r = c.limit_vocab(2, None);
        let got: Vec<&str> = r.ids().iter().map(|&i| r.vocab().word(i)).collect();
        assert_eq!(got, ["a", "<unk>", "a", "c", "c", "<unk>", "a"]);
        assert_eq!(r.vocab().len(), 5);
        assert_eq!(r.document_offsets(), c.document_offsets());
        let allowed: hashbrown::HashSet<&str> = ["c", "d", "zzz"].into_iter().collect();
        let r = c.limit_vocab(1, Some(&allowed));
        let got: Vec<&str> = r.ids().iter().map(|&i| r.vocab().word(i)).collect();
        assert_eq!(got, ["<unk>", "<unk>", "<unk>", "c", "c", "d", "<unk>"]);
        assert_eq!(r.vocab().words().skip(3).collect::<Vec<_>>(), ["c", "d"]);
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
