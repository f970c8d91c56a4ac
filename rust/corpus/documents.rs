//! A batch of texts read as documents in one call (`NGramModel.evaluate_texts`, the scoring
//! actors of `fastppl.ray`): each text cleaned as `fastppl.text.clean_text` does, tokenized as
//! `Corpus.from_texts` does with its native tokenizers, and closed as a document.

use super::clean::clean_text;
use super::nltk::{Grouping, Punkt, WordRule};
use super::{Corpus, SentenceMode};
use crate::error::Result;
use crate::util::job::Job;

/// How a text becomes sentences.
#[derive(Debug, Clone, Copy)]
pub enum Tokenizer<'p> {
    /// Split on whitespace, cut into sentences by the mode ([`Corpus::push_whitespace_text`]).
    Whitespace(SentenceMode),
    /// KenLM's reading: a sentence per line, blank lines kept ([`Corpus::push_kenlm_text`]).
    Kenlm,
    /// NLTK's rules ([`Corpus::push_nltk_text`]).
    Nltk {
        /// Punkt's model (None: NLTK's `preserve_line=True`).
        punkt: Option<&'p Punkt>,
        /// How Punkt sentences make corpus sentences.
        grouping: Grouping,
        /// The word tokenizer.
        rule: WordRule,
    },
}

/// How each text of a batch is read.
#[derive(Debug, Clone)]
pub struct Reading<'p> {
    /// The tokenizer.
    pub tokenizer: Tokenizer<'p>,
    /// Lines starting with one of these are dropped (compared before lowercasing).
    pub skip_line_prefixes: Vec<String>,
    /// Lowercase the text.
    pub lowercase: bool,
}

impl Corpus {
    /// A corpus of `texts`, one document each (an empty text is an empty document), read by
    /// `reading`.
    ///
    /// ```
    /// use fastppl::corpus::documents::{Reading, Tokenizer};
    /// use fastppl::corpus::{Corpus, SentenceMode};
    /// use fastppl::util::job::Job;
    /// let reading = Reading {
    ///     tokenizer: Tokenizer::Whitespace(SentenceMode::Lines),
    ///     skip_line_prefixes: vec!["#".into()],
    ///     lowercase: true,
    /// };
    /// let texts = ["# title\nA b\nc".to_string(), String::new(), "D".to_string()];
    /// let c = Corpus::from_documents(&texts, &reading, &Job::none()).unwrap();
    /// assert_eq!((c.num_tokens(), c.num_sentences()), (4, 3));
    /// assert_eq!(c.document_offsets(), &[0, 2, 2, 3]);
    /// ```
    pub fn from_documents(texts: &[String], reading: &Reading<'_>, job: &Job) -> Result<Corpus> {
        let mut corpus = Corpus::new();
        for text in texts {
            let text = clean_text(text, &reading.skip_line_prefixes, reading.lowercase);
            match reading.tokenizer {
                Tokenizer::Whitespace(mode) => corpus.push_whitespace_text(&text, mode)?,
                Tokenizer::Kenlm => corpus.push_kenlm_text(&text)?,
                Tokenizer::Nltk {
                    punkt,
                    grouping,
                    rule,
                } => corpus.push_nltk_text(&text, punkt, grouping, rule, job)?,
            }
            corpus.end_document();
        }
        Ok(corpus)
    }
}
