//! `_core.Corpus`: a tokenized corpus owned by Rust.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::errors::{to_pyerr, type_error};
use super::nltk::PyPunktModel;
use crate::corpus::{clean, kenlm_tokens, Corpus, SentenceMode};

/// `text` as `fastppl.text.clean_text` leaves it (line ends first read as Python's text mode
/// reads them when `translate_newlines`).
fn cleaned<'a>(
    text: &'a str,
    translate_newlines: bool,
    skip_line_prefixes: &[String],
    lowercase: bool,
) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    let text = if translate_newlines {
        clean::translate_newlines(text)
    } else {
        Cow::Borrowed(text)
    };
    match clean::clean_text(&text, skip_line_prefixes, lowercase) {
        Cow::Borrowed(_) => text,
        Cow::Owned(cleaned) => Cow::Owned(cleaned),
    }
}

/// Documents of sentences of tokens, interned; built by `fastppl.Corpus`.
#[pyclass(name = "Corpus", module = "fastppl._core", frozen)]
pub struct PyCorpus {
    pub inner: std::sync::RwLock<Corpus>,
}

impl PyCorpus {
    /// Runs `f` on the corpus (read access).
    pub fn with<R>(&self, f: impl FnOnce(&Corpus) -> R) -> R {
        f(&self.inner.read().expect("corpus lock poisoned"))
    }

    pub fn with_mut<R>(&self, f: impl FnOnce(&mut Corpus) -> R) -> R {
        f(&mut self.inner.write().expect("corpus lock poisoned"))
    }
}

#[pymethods]
impl PyCorpus {
    #[new]
    fn new() -> Self {
        PyCorpus {
            inner: std::sync::RwLock::new(Corpus::new()),
        }
    }

    /// Appends sentences (an iterable of iterables of `str`) to the current document.
    fn add_sentences(&self, sentences: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut tokens: Vec<Bound<'_, PyString>> = Vec::new();
        for (i, sentence) in sentences.try_iter()?.enumerate() {
            let sentence = sentence?;
            if sentence.is_instance_of::<PyString>() {
                return Err(type_error(format!(
                    "sentence {i} is a str; expected a sequence of token strings \
                     (did you mean Corpus.from_text?)"
                )));
            }
            let sentence_tokens = sentence.try_iter().map_err(|err| {
                // not iterable (an __iter__ raising something else passes as it is)
                if !err.is_instance_of::<PyTypeError>(sentence.py()) {
                    return err;
                }
                let named = type_error(format!(
                    "sentence {i} ({}) is not iterable; expected a sequence of token strings",
                    sentence.get_type()
                ));
                named.set_cause(sentence.py(), Some(err));
                named
            })?;
            tokens.clear();
            for token in sentence_tokens {
                let token = token?;
                let s = token.cast_into::<PyString>().map_err(|e| {
                    type_error(format!(
                        "sentence {i}: tokens must be str, got {}",
                        e.into_inner().get_type()
                    ))
                })?;
                tokens.push(s);
            }
            let strs: Vec<&str> = tokens.iter().map(|t| t.to_str()).collect::<PyResult<_>>()?;
            self.with_mut(|c| c.push_sentence(strs.iter().copied()))
                .map_err(to_pyerr)?;
        }
        Ok(())
    }

    /// Splits `text` on whitespace (Python's `str.split()`) into sentences by `mode`
    /// (`"lines"`, `"terminators"` or `"none"`) and appends them.
    fn add_whitespace_text(&self, py: Python<'_>, text: &str, mode: &str) -> PyResult<()> {
        let mode = SentenceMode::parse(mode).map_err(to_pyerr)?;
        py.detach(|| self.with_mut(|c| c.push_whitespace_text(text, mode)))
            .map_err(to_pyerr)
    }

    /// Appends `text` tokenized as NLTK does: `words` (`"nltk"` or `"whitespace"`) on each Punkt
    /// sentence of `punkt` (None: NLTK's `preserve_line=True`), grouped by `sentences`
    /// (`"punkt"`, `"lines"`, `"terminators"` or `"none"`).
    #[pyo3(signature = (text, punkt, sentences, words="nltk", progress=None))]
    fn add_nltk_text(
        &self,
        py: Python<'_>,
        text: &str,
        punkt: Option<&Bound<'_, PyPunktModel>>,
        sentences: &str,
        words: &str,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        super::nltk::add_nltk_text(py, self, text, punkt, sentences, words, progress)
    }

    /// [`add_nltk_text`](Self::add_nltk_text) of a file's UTF-8 bytes (its line ends `\r\n` and
    /// `\r` read as `\n`, as Python's text mode does), cleaned as `fastppl.text.clean_text`
    /// does (lines starting with one of `skip_line_prefixes` dropped, then lowercased when
    /// `lowercase`), with no Python `str` of the text ever made (a third of the memory for
    /// large files); False, adding nothing, when `data` is not valid UTF-8 (the caller then
    /// decodes it in Python, for its error message).
    #[pyo3(signature = (data, punkt, sentences, words="nltk", skip_line_prefixes=Vec::new(), lowercase=false, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_nltk_bytes(
        &self,
        py: Python<'_>,
        data: &[u8],
        punkt: Option<&Bound<'_, PyPunktModel>>,
        sentences: &str,
        words: &str,
        skip_line_prefixes: Vec<String>,
        lowercase: bool,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(false);
        };
        let text = py.detach(|| cleaned(text, true, &skip_line_prefixes, lowercase));
        super::nltk::add_nltk_text(py, self, &text, punkt, sentences, words, progress)?;
        Ok(true)
    }

    /// Appends the sentences of `data`, whole lines of a file's UTF-8 bytes (the file read a
    /// piece at a time), read by `reader`: "kenlm" (as [`add_kenlm_text`](Self::add_kenlm_text))
    /// or "lines" (whitespace tokens, a sentence a line), after cleaning them as
    /// `fastppl.text.clean_text` does (line ends `\r\n` and `\r` read as `\n` first when
    /// `translate_newlines`), with no Python `str` made; False, adding nothing, when they are not
    /// valid UTF-8 (the caller then decodes the file in Python, for its error message).
    #[pyo3(signature = (data, reader, translate_newlines, skip_line_prefixes=Vec::new(), lowercase=false))]
    fn add_line_bytes(
        &self,
        py: Python<'_>,
        data: &[u8],
        reader: &str,
        translate_newlines: bool,
        skip_line_prefixes: Vec<String>,
        lowercase: bool,
    ) -> PyResult<bool> {
        let read: fn(&mut Corpus, &str) -> crate::error::Result<()> = match reader {
            "kenlm" => Corpus::push_kenlm_text,
            "lines" => |c, text| c.push_whitespace_text(text, SentenceMode::Lines),
            other => {
                return Err(to_pyerr(crate::error::Error::invalid(format!(
                    "unknown line reader {other:?} (expected 'kenlm' or 'lines')"
                ))))
            }
        };
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(false);
        };
        py.detach(|| {
            let text = cleaned(text, translate_newlines, &skip_line_prefixes, lowercase);
            self.with_mut(|c| read(c, &text))
        })
        .map_err(to_pyerr)?;
        Ok(true)
    }

    /// Appends the sentences of `text` read as KenLM reads them: one per line, ASCII whitespace
    /// only, blank lines kept as empty sentences.
    fn add_kenlm_text(&self, py: Python<'_>, text: &str) -> PyResult<()> {
        py.detach(|| self.with_mut(|c| c.push_kenlm_text(text)))
            .map_err(to_pyerr)
    }

    /// A new corpus in which the words seen fewer than `min_count` times and, when given, the
    /// words absent from `vocab` (a list) or from `vocab_text` (words separated by ASCII
    /// whitespace, as lmplz reads a vocabulary file) are `<unk>`.
    #[pyo3(signature = (min_count=1, vocab=None, vocab_text=None))]
    fn limit_vocab(
        &self,
        py: Python<'_>,
        min_count: u64,
        vocab: Option<Vec<String>>,
        vocab_text: Option<&str>,
    ) -> PyCorpus {
        let limited = py.detach(|| {
            let mut allowed: Option<hashbrown::HashSet<&str>> = None;
            if let Some(words) = &vocab {
                allowed
                    .get_or_insert_with(Default::default)
                    .extend(words.iter().map(String::as_str));
            }
            if let Some(text) = vocab_text {
                allowed
                    .get_or_insert_with(Default::default)
                    .extend(kenlm_tokens(text));
            }
            self.with(|c| c.limit_vocab(min_count, allowed.as_ref()))
        });
        PyCorpus {
            inner: std::sync::RwLock::new(limited),
        }
    }

    /// A new corpus in which each token of id `i` is replaced by the tokens `pieces[i]`
    /// (SentencePiece pieces of each vocabulary word), and the sentences of `whole` (index,
    /// tokens; increasing) by their tokens; releases the GIL.
    #[pyo3(signature = (pieces, whole=Vec::new()))]
    fn expand(
        &self,
        py: Python<'_>,
        pieces: Vec<Vec<String>>,
        whole: Vec<(usize, Vec<String>)>,
    ) -> PyResult<PyCorpus> {
        let expanded = py
            .detach(|| self.with(|c| c.expand(&pieces, &whole)))
            .map_err(to_pyerr)?;
        Ok(PyCorpus {
            inner: std::sync::RwLock::new(expanded),
        })
    }

    /// Indices of the sentences holding a word flagged in `flagged` (by id).
    fn sentences_with(&self, py: Python<'_>, flagged: Vec<bool>) -> Vec<usize> {
        py.detach(|| self.with(|c| c.sentences_with(&flagged)))
    }

    /// The vocabulary in id order (`<unk>`, `<s>`, `</s>` first), each `str` made from the
    /// spelling the vocabulary holds.
    fn vocab<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.with(|c| PyList::new(py, c.vocab().words()))
    }

    /// Closes the current document.
    fn end_document(&self) {
        self.with_mut(Corpus::end_document);
    }

    /// Closes the last document if it has sentences (or if there is no document yet).
    fn finish(&self) {
        self.with_mut(Corpus::finish);
    }

    #[getter]
    fn num_tokens(&self) -> usize {
        self.with(Corpus::num_tokens)
    }

    #[getter]
    fn num_sentences(&self) -> usize {
        self.with(Corpus::num_sentences)
    }

    #[getter]
    fn num_types(&self) -> usize {
        self.with(|c| c.vocab().len() - 3)
    }

    /// Document boundaries, in sentences (`num_documents + 1` offsets).
    fn document_offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.with(|c| {
            c.document_offsets()
                .iter()
                .map(|&x| x as u64)
                .collect::<Vec<_>>()
        })
        .into_pyarray(py)
    }

    /// Sentence lengths in tokens.
    fn sentence_lengths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.with(|c| {
            c.sentence_offsets()
                .windows(2)
                .map(|w| (w[1] - w[0]) as u64)
                .collect::<Vec<_>>()
        })
        .into_pyarray(py)
    }

    /// The tokens of sentences `start..stop` as lists of str; each word of the range is made
    /// one `str`, which the lists share.
    fn sentences<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        stop: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with(|c| {
            let mut words: hashbrown::HashMap<u32, Bound<'py, PyString>> =
                hashbrown::HashMap::new();
            let mut word = |id: u32| {
                words
                    .entry(id)
                    .or_insert_with(|| PyString::new(py, c.vocab().word(id)))
                    .clone()
            };
            let range = start.min(c.num_sentences())..stop.min(c.num_sentences());
            let sentences = range
                .map(|s| PyList::new(py, c.sentence(s).iter().map(|&id| word(id))))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, sentences)
        })
    }

    /// Occurrences of each token type, as a dict.
    fn token_counts(&self) -> std::collections::HashMap<String, u64> {
        self.with(|c| {
            let mut counts = vec![0u64; c.vocab().len()];
            for &id in c.ids() {
                counts[id as usize] += 1;
            }
            c.vocab()
                .words()
                .zip(counts)
                .filter(|&(_, n)| n > 0)
                .map(|(w, n)| (w.to_string(), n))
                .collect()
        })
    }
}

/// The compression fastppl reads of a file that starts with `head` (its first 10 bytes or more):
/// "gzip", "xz" or "bzip2" by its magic number (`util::compressed::Codec::from_magic`), or None.
/// For `fastppl.text` to decompress a text file by its first bytes, as the core does a model file.
#[pyfunction]
pub fn read_compression(head: &[u8]) -> Option<&'static str> {
    crate::util::compressed::Codec::from_magic(head).name()
}

/// The compression fastppl does not read of a file that starts with `head`: its name and the
/// command that decompresses it (`util::compressed::unread_compression`), or None. For
/// `fastppl.text` to refuse such a text file, as the core refuses such a model file.
#[pyfunction]
pub fn unread_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    crate::util::compressed::unread_compression(head)
}
