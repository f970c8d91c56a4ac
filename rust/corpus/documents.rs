//! A batch of texts read as documents in one call (`NGramModel.evaluate_texts`, the scoring
//! actors of `fastppl.ray`): each text cleaned as `fastppl.text.clean_text` does, tokenized as
//! `Corpus.from_texts` does with its native tokenizers, and closed as a document.

use rayon::prelude::*;

use super::clean::clean_text;
use super::nltk::{Grouping, Punkt, WordRule};
use super::{Corpus, SentenceMode};
use crate::error::{Error, Result};
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

/// Texts read at a time by [`Corpus::from_documents_in_parallel`]: each of them on one core,
/// all cores busy. Bounds what a batch of long texts holds at once beside the corpus.
const TEXTS_PER_WINDOW: usize = 1024;

impl Corpus {
    /// A corpus of `texts`, one document each (an empty text is an empty document), read by
    /// `reading`. The first error, in the order of the texts, is returned, naming its document
    /// (0-based).
    ///
    /// With the NLTK tokenizer and more than one thread, the texts are read on all cores
    /// (`Corpus::from_documents_in_parallel`); otherwise one after the other, straight into
    /// the corpus (a short text is then tokenized on the calling thread, and the whitespace
    /// and KenLM readings cost less than a corpus of their own per text would).
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
        if matches!(reading.tokenizer, Tokenizer::Nltk { .. }) && rayon::current_num_threads() > 1 {
            return Self::from_documents_in_parallel(texts, reading, job);
        }
        let mut corpus = Corpus::new();
        for (i, text) in texts.iter().enumerate() {
            job.check()?;
            corpus
                .push_document_text(text, reading, job)
                .map_err(|e| naming_document(e, i))?;
            corpus.end_document();
        }
        Ok(corpus)
    }

    /// [`Corpus::from_documents`] with the texts read on all cores, each on one thread into a
    /// corpus of its own, then appended in order ([`Corpus::append_known`]): the same corpus as
    /// reading them one after the other. A batch holds many short texts, and a text's own
    /// parallel passes would hand work from thread to thread several times per text, which
    /// costs more than reading a short text when the other core sits idle (a thread woken on
    /// an idle core: ~70 µs a text for 20-line texts with the NLTK tokenizer).
    fn from_documents_in_parallel(
        texts: &[String],
        reading: &Reading<'_>,
        job: &Job,
    ) -> Result<Corpus> {
        let mut corpus = Corpus::new();
        for (window, group) in texts.chunks(TEXTS_PER_WINDOW).enumerate() {
            job.check()?;
            let known: &Corpus = &corpus;
            let parts: Vec<Result<(Corpus, Vec<u32>)>> = group
                .par_iter()
                .map(|text| {
                    let mut part = Corpus::for_text(text.len());
                    part.push_document_text(text, reading, job)?;
                    let ids = known.known_ids(&part);
                    Ok((part, ids))
                })
                .collect();
            for (i, part) in parts.into_iter().enumerate() {
                let (part, ids) =
                    part.map_err(|e| naming_document(e, window * TEXTS_PER_WINDOW + i))?;
                corpus.append_known(&part, ids);
                corpus.end_document();
            }
        }
        Ok(corpus)
    }

    /// Appends the sentences of one text read by `reading` to the current document.
    fn push_document_text(&mut self, text: &str, reading: &Reading<'_>, job: &Job) -> Result<()> {
        let text = clean_text(text, &reading.skip_line_prefixes, reading.lowercase);
        match reading.tokenizer {
            Tokenizer::Whitespace(mode) => self.push_whitespace_text(&text, mode),
            Tokenizer::Kenlm => self.push_kenlm_text(&text),
            Tokenizer::Nltk {
                punkt,
                grouping,
                rule,
            } => self.push_nltk_text(&text, punkt, grouping, rule, job),
        }
    }
}

/// `e` with the document it is about named, where it is about the text.
fn naming_document(e: Error, document: usize) -> Error {
    match e {
        Error::InvalidArgument(_) | Error::InvalidItem { .. } => {
            Error::invalid(format!("document {document}: {e}"))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::nltk::PunktParams;
    use crate::corpus::SentenceMode;

    /// The corpus of `texts` read one after the other into one corpus.
    fn one_after_the_other(texts: &[String], reading: &Reading<'_>) -> Corpus {
        let mut corpus = Corpus::new();
        for text in texts {
            corpus
                .push_document_text(text, reading, &Job::none())
                .unwrap();
            corpus.end_document();
        }
        corpus
    }

    fn assert_same(a: &Corpus, b: &Corpus) {
        assert_eq!(a.ids(), b.ids());
        assert_eq!(a.sentence_offsets(), b.sentence_offsets());
        assert_eq!(a.document_offsets(), b.document_offsets());
        assert!(a.vocab().words().eq(b.vocab().words()));
    }

    #[test]
    fn documents_read_in_parallel_make_the_corpus_read_one_after_the_other() {
        // more texts than a window, words shared across texts and new ones, empty texts,
        // blank lines (KenLM's empty sentences), terminators inside lines
        let texts: Vec<String> = (0..2 * TEXTS_PER_WINDOW + 37)
            .map(|i| match i % 5 {
                0 => String::new(),
                1 => format!("Dr. Smith saw w{i}. It's fine!\n\nw{} and w{i} ?", i / 3),
                2 => format!("# skipped {i}\nA b . c\n \nd{i} e"),
                3 => "\n\n".to_string(),
                _ => format!("\"Quoted,\" said w{}. Then -- nothing...", i % 7),
            })
            .collect();
        let mut params = PunktParams::default();
        params.abbrev_types.insert("dr".to_string());
        let punkt = Punkt::new(params);
        let mut tokenizers = vec![
            Tokenizer::Kenlm,
            Tokenizer::Whitespace(SentenceMode::Lines),
            Tokenizer::Whitespace(SentenceMode::Terminators),
        ];
        for grouping in [
            Grouping::Punkt,
            Grouping::Lines,
            Grouping::Terminators,
            Grouping::Whole,
        ] {
            for punkt in [None, Some(&punkt)] {
                tokenizers.push(Tokenizer::Nltk {
                    punkt,
                    grouping,
                    rule: WordRule::Nltk,
                });
            }
        }
        for tokenizer in tokenizers {
            for lowercase in [false, true] {
                let reading = Reading {
                    tokenizer,
                    skip_line_prefixes: vec!["#".into()],
                    lowercase,
                };
                let expected = one_after_the_other(&texts, &reading);
                let got = Corpus::from_documents_in_parallel(&texts, &reading, &Job::none());
                assert_same(&got.unwrap(), &expected);
                let got = Corpus::from_documents(&texts, &reading, &Job::none()).unwrap();
                assert_same(&got, &expected);
            }
        }
    }

    #[test]
    fn the_first_bad_document_is_named() {
        let reading = Reading {
            tokenizer: Tokenizer::Whitespace(SentenceMode::Lines),
            skip_line_prefixes: Vec::new(),
            lowercase: false,
        };
        let mut texts = vec!["a b".to_string(); TEXTS_PER_WINDOW + 9];
        texts[TEXTS_PER_WINDOW + 3] = "a <s> b".into();
        texts[TEXTS_PER_WINDOW + 7] = "</s>".into();
        for read in [Corpus::from_documents, Corpus::from_documents_in_parallel] {
            let msg = read(&texts, &reading, &Job::none())
                .unwrap_err()
                .to_string();
            assert!(
                msg.starts_with(&format!("document {}: ", TEXTS_PER_WINDOW + 3))
                    && msg.contains("reserved token \"<s>\""),
                "{msg}"
            );
        }
    }

    #[test]
    fn a_cancelled_job_stops_the_batch() {
        let reading = Reading {
            tokenizer: Tokenizer::Kenlm,
            skip_line_prefixes: Vec::new(),
            lowercase: false,
        };
        let job = Job::none();
        job.cancel();
        let texts = vec!["a".to_string(); 3];
        for read in [Corpus::from_documents, Corpus::from_documents_in_parallel] {
            assert!(matches!(
                read(&texts, &reading, &job),
                Err(Error::Cancelled)
            ));
        }
    }
}
