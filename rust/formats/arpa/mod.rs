//! ARPA back-off language model files, read and written as KenLM does (`lm/read_arpa.cc`,
//! `lm/common/print.cc`), streamed line by line and (de)compressed on the fly (see
//! [`crate::util::compressed`]).
//!
//! ## Format
//! ```text
//! \data\
//! ngram 1=<count>
//! ...
//!
//! \1-grams:
//! <log10 p>\t<word>\t<log10 backoff>
//! ...
//!
//! \N-grams:
//! <log10 p>\t<w1> ... <wN>
//!
//! \end\
//! ```
//! Values are log10 in the file and natural logs in [`Model`] (ln = log10 · ln 10).
//!
//! ## Reading (KenLM's rules unless said otherwise)
//! - Blank lines and lines starting with `#` may come before `\data\`; the counts must be
//!   `ngram 1=`, `ngram 2=`, ... in order. Each section must hold exactly the announced number of
//!   n-grams, fields separated by tabs (words by spaces); lines with no tab at all are split on
//!   whitespace. After `\end\` only blank lines may follow.
//! - A missing backoff is 0 (weight 1). A backoff on the highest order must be 0. A positive log
//!   probability, a NaN or an infinite backoff is an error (KenLM's default).
//! - `-99` (SRILM's spelling of log10 0) means probability 0 / weight 0.
//! - `<unk>`, `<s>`, `</s>` get ids 0, 1, 2 wherever they appear. `<s>` is never predicted, so its
//!   probability is ignored. A file without `<unk>` gets `<unk>` with log10 probability -100 as
//!   KenLM substitutes (`Config::unknown_missing_logprob`); a file without `<s>` or `</s>` is refused,
//!   as KenLM does by default (`sentence_marker_missing = THROW_UP`).
//! - A word of a higher-order n-gram that is not among the unigrams is an error (KenLM: "was not
//!   seen in the unigrams").
//! - The context (prefix) of every n-gram must be an (n-1)-gram of the file: KenLM refuses the
//!   file otherwise ("The context of every n-gram should appear as an (n-1)-gram",
//!   `lm/search_hashed.cc` ActivateLowerMiddle), and so does fastppl.
//! - A missing suffix (files pruned by SRILM can hold `a b c` without `b c`) is allowed: KenLM
//!   inserts a "blank" entry for it whose probability is what backing off gives and whose backoff
//!   is 0 (`lm/search_hashed.cc` FindLower/AdjustLower); fastppl does the same, so scores agree
//!   with KenLM's. Blanks are stored (and written back by [`write_arpa`]), so `ngram_counts` can
//!   exceed the header's counts.
//! - A duplicate n-gram is an error.
//!
//! ## Writing
//! KenLM's layout: the header, then each order with `<unk>` first among unigrams and every
//! n-gram below the highest order carrying a backoff column (0 included); `<s>` is written with
//! log10 probability 0 as lmplz does. Values are rounded to float32 and printed with the
//! shortest digits that read back to the same float32, in decimal notation unless the magnitude is
//! below 1e-6 (double-conversion's `ToShortestSingle` with KenLM's settings). Probability or
//! weight 0 is written `-99`.

mod write;

use std::f64::consts::LN_10;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::corpus::vocab::{Vocab, BOS, EOS, UNK};
use crate::error::{Error, Result};
use crate::model::{Fallback, Model, OrderTable};
use crate::ngram::keys::MAX_ORDER;
use crate::ngram::probing::ProbingTable;
use crate::util::compressed::open_read;
use crate::util::job::Job;

pub use write::{
    check_arpa_tokens, check_writable, write_arpa, write_arpa_to, ArpaFile, ArpaWriter,
};

/// log10 probability KenLM gives `<unk>` when the file has none.
pub const UNKNOWN_MISSING_LOG10: f64 = -100.0;

/// Longest line accepted (1 MiB, newline included): ARPA lines are a few numbers and at most
/// [`MAX_ORDER`] words, and the bound keeps one huge line (a decompression bomb) from exhausting
/// memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Most n-grams of one order allocated for before any is read: the header's counts are hints,
/// never trusted for more room than this (tables grow as n-grams arrive).
const INITIAL_ENTRIES: u64 = 1 << 16;

/// Shortest n-gram line ("p\tw\n"), bounding how many n-grams a file of a given size can hold.
const MIN_LINE_BYTES: u64 = 4;

/// Compression ratio assumed when bounding the n-grams a file can hold by its size (xz reaches
/// 8 on ARPA text; plain files are overestimated, which the header's counts cap).
const COMPRESSION_RATIO: u64 = 16;

/// N-gram lines read between two reports to the job (and checks for cancellation).
const PROGRESS_LINES: u64 = 1 << 16;

/// Reads an ARPA file (plain, .gz, .xz or .bz2, detected from its first bytes), reporting
/// n-grams read to `job` (which can cancel it).
pub fn read_arpa(path: &Path, job: &Job) -> Result<Model> {
    let reader = open_read(path)?;
    // room for at most as many n-grams as the (possibly compressed) bytes could hold, taking a
    // compression ratio of COMPRESSION_RATIO: an underestimate only costs tables growing as lines
    // arrive
    let bytes = std::fs::metadata(path).map_err(Error::io(path))?.len();
    let hint = bytes.saturating_mul(COMPRESSION_RATIO) / MIN_LINE_BYTES + 1;
    read_arpa_hinted(reader, &path.display().to_string(), hint, job)
}

/// Line reader with a 1-based line number and one line of push-back.
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    line: usize,
    held: bool,
    eof: bool,
    path: String,
}

impl<R: BufRead> Lines<R> {
    fn fail(&self, message: impl Into<String>) -> Error {
        Error::ModelFormat {
            path: self.path.clone(),
            line: self.line,
            message: message.into(),
        }
    }

    /// Moves to the next line; false at the end of the file.
    fn advance(&mut self) -> Result<bool> {
        if self.held {
            self.held = false;
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.buf.clear();
        let limited = &mut (&mut self.reader).take(MAX_LINE_BYTES as u64 + 1);
        let n = match limited.read_until(b'\n', &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.line += 1;
                return Err(self.fail(format!("cannot read the file here: {e}")));
            }
        };
        if n == 0 {
            self.eof = true;
            return Ok(false);
        }
        self.line += 1;
        if self.buf.len() > MAX_LINE_BYTES {
            return Err(self.fail(format!(
                "line longer than {MAX_LINE_BYTES} bytes (the limit for an ARPA line)"
            )));
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if let Err(e) = std::str::from_utf8(&self.buf) {
            return Err(self.fail(format!(
                "not valid UTF-8 (byte {} of the line)",
                e.valid_up_to() + 1
            )));
        }
        Ok(true)
    }

    /// The current line (checked UTF-8 by [`Lines::advance`]).
    fn text(&self) -> &str {
        std::str::from_utf8(&self.buf).unwrap_or("")
    }

    /// Makes the next [`Lines::advance`] return the current line again.
    fn hold(&mut self) {
        self.held = true;
    }
}

fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_whitespace())
}

/// At most 60 characters of `s`, quoted, for messages.
fn quote(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{:?}...", &s[..i]),
        None => format!("{s:?}"),
    }
}

/// `\m-grams:` -> m.
fn section_order(s: &str) -> Option<usize> {
    s.strip_prefix('\\')?.strip_suffix("-grams:")?.parse().ok()
}

/// A log10 value from the file in natural log; -99 is log10 0.
fn parse_log10(field: &str) -> Option<f64> {
    // read as a float32, as KenLM stores ARPA values: the shortest digits that the writer prints
    // for a float32 then come back as that very float32 (read as a float64, a value halfway
    // between two float32s could round to the other one when written again)
    let v = f64::from(field.parse::<f32>().ok()?);
    if v.is_nan() {
        return None;
    }
    Some(if v == -99.0 {
        f64::NEG_INFINITY
    } else {
        v * LN_10
    })
}

/// Reads an ARPA model from `reader`; `path` names it in error messages.
pub fn read_arpa_from(reader: impl BufRead, path: &str) -> Result<Model> {
    read_arpa_hinted(reader, path, INITIAL_ENTRIES, &Job::none())
}

/// [`read_arpa_from`], allocating at most `room` entries per order from the header's counts.
fn read_arpa_hinted(reader: impl BufRead, path: &str, room: u64, job: &Job) -> Result<Model> {
    let mut lines = Lines {
        reader,
        buf: Vec::new(),
        line: 0,
        held: false,
        eof: false,
        path: path.to_string(),
    };

    // \data\
    loop {
        if !lines.advance()? {
            return Err(lines.fail("no \\data\\ line: the file is empty or holds only comments"));
        }
        let t = lines.text();
        if is_blank(t) || t.starts_with('#') {
            continue;
        }
        if t.trim_end() == "\\data\\" {
            break;
        }
        let hint = if lines.buf.starts_with(&[0x1f, 0x8b]) {
            " (this looks like gzip data inside a compressed file)"
        } else {
            ""
        };
        return Err(lines.fail(format!(
            "expected \\data\\ as the first line that is not blank or a # comment, got {}{hint}",
            quote(t)
        )));
    }

    // ngram m=count
    let mut announced: Vec<u64> = Vec::new();
    loop {
        if !lines.advance()? {
            return Err(lines.fail("the file ends inside the \\data\\ header (truncated?)"));
        }
        let t = lines.text().trim();
        if t.is_empty() {
            break;
        }
        if t.starts_with('\\') {
            lines.hold();
            break;
        }
        let Some(rest) = t.strip_prefix("ngram") else {
            return Err(lines.fail(format!(
                "expected a count line \"ngram {}=<count>\" or a blank line, got {}",
                announced.len() + 1,
                quote(t)
            )));
        };
        let parsed = rest.split_once('=').and_then(|(m, c)| {
            Some((
                m.trim().parse::<usize>().ok()?,
                c.trim().parse::<u64>().ok()?,
            ))
        });
        match parsed {
            Some((m, c)) if m == announced.len() + 1 => announced.push(c),
            Some((m, _)) => {
                return Err(lines.fail(format!(
                    "count lines must be ngram 1=, ngram 2=, ... in order; expected ngram {}=, got \
                     ngram {m}=",
                    announced.len() + 1
                )))
            }
            None => {
                return Err(lines.fail(format!(
                    "bad count line {}: expected \"ngram {}=<count>\"",
                    quote(t),
                    announced.len() + 1
                )))
            }
        }
    }
    // (the header's counts are untrusted: for the progress bar only)
    let announced_total = announced.iter().fold(0u64, |t, &c| t.saturating_add(c));
    job.stage("reading ARPA", announced_total)?;
    let order = announced.len();
    if order == 0 {
        return Err(lines.fail("the \\data\\ header announces no n-gram count"));
    }
    if order > MAX_ORDER {
        return Err(lines.fail(format!("order {order} is above the maximum {MAX_ORDER}")));
    }

    let mut model = Model {
        order,
        bos_eos: true,
        vocab: Vocab::new(),
        unigram_logp: vec![f64::NAN; 3],
        unigram_weight: vec![0.0; 3],
        unigram_counts: Vec::new(),
        higher: Vec::with_capacity(order - 1),
        fallback: Fallback::Chain,
        missing_weight: 0.0,
        normalized: true,
        smoothing: "arpa".to_string(),
        discounts: Vec::new(),
    };

    for m in 1..=order {
        // \m-grams:
        loop {
            if !lines.advance()? {
                return Err(lines.fail(format!(
                    "the file ends before the \\{m}-grams: section (truncated?)"
                )));
            }
            if !is_blank(lines.text()) {
                break;
            }
        }
        let t = lines.text().trim_end();
        match section_order(t) {
            Some(k) if k == m => {}
            Some(k) => {
                return Err(lines.fail(format!(
                    "expected the \\{m}-grams: section, got \\{k}-grams:{}",
                    if k > order {
                        format!(" (the header announces {order} orders)")
                    } else {
                        String::new()
                    }
                )))
            }
            None if t == "\\end\\" => {
                return Err(lines.fail(format!(
                    "\\end\\ before the \\{m}-grams: section announced in the header"
                )))
            }
            None => {
                return Err(lines.fail(format!(
                    "expected the \\{m}-grams: section header, got {}{}",
                    quote(t),
                    if t.starts_with('\\') {
                        " (unknown section)"
                    } else {
                        ""
                    }
                )))
            }
        }
        if m >= 2 {
            model.higher.push(OrderTable {
                table: ProbingTable::with_entries(announced[m - 1].min(room) as usize),
                counts: Vec::new(),
            });
        }
        let expected = announced[m - 1];
        let mut seen: u64 = 0;
        let mut ids: Vec<u32> = Vec::with_capacity(m);
        loop {
            if !lines.advance()? {
                return Err(lines.fail(format!(
                    "the file ends inside \\{m}-grams: after {seen} of the {expected} n-grams \
                     announced (truncated?)"
                )));
            }
            let t = lines.text();
            if is_blank(t) || t.starts_with('\\') {
                lines.hold();
                break;
            }
            if seen == expected {
                return Err(lines.fail(format!(
                    "\\{m}-grams: holds more n-grams than the {expected} announced in the header"
                )));
            }
            let (logp, words, backoff) = split_fields(t, m).map_err(|msg| lines.fail(msg))?;
            let logp = parse_log10(logp)
                .ok_or_else(|| lines.fail(format!("bad log10 probability {}", quote(logp))))?;
            if logp > 0.0 {
                return Err(lines.fail(format!(
                    "positive log10 probability {} (a probability above 1)",
                    logp / LN_10
                )));
            }
            let weight = match backoff {
                None => 0.0,
                Some(b) => match parse_log10(b) {
                    Some(w) if w != f64::INFINITY => w,
                    _ => return Err(lines.fail(format!("bad log10 backoff {}", quote(b)))),
                },
            };
            if m == order && weight != 0.0 {
                return Err(lines.fail(format!(
                    "non-zero backoff {} on an n-gram of the highest order",
                    quote(backoff.unwrap_or(""))
                )));
            }
            if m == 1 {
                // ASCII whitespace only, as KenLM: U+00A0 and friends are part of words
                let word = words.trim_matches(|c: char| c.is_ascii_whitespace());
                let before = model.vocab.len();
                let id = model.vocab.intern(word);
                if (id as usize) < before {
                    if !model.unigram_logp[id as usize].is_nan() {
                        return Err(lines.fail(format!("duplicate unigram {}", quote(word))));
                    }
                } else {
                    model.unigram_logp.push(f64::NAN);
                    model.unigram_weight.push(0.0);
                }
                model.unigram_logp[id as usize] = logp;
                model.unigram_weight[id as usize] = weight;
            } else {
                ids.clear();
                for w in words.split_ascii_whitespace() {
                    match model.vocab.get(w) {
                        Some(id) => ids.push(id),
                        None => {
                            return Err(lines.fail(format!(
                                "word {} is not among the unigrams (which must list the whole \
                                 vocabulary)",
                                quote(w)
                            )))
                        }
                    }
                }
                let Some(prefix) = model.find(&ids[..m - 1]) else {
                    return Err(lines.fail(format!(
                        "the context of the {m}-gram {} is not among the {}-grams (KenLM \
                         refuses such files too: \"the context of every n-gram should appear as \
                         an (n-1)-gram\")",
                        quote(words),
                        m - 1
                    )));
                };
                if m >= 3 {
                    if let Err(ln_p) = model.ensure_ngram(&ids[1..]) {
                        return Err(lines.fail(format!(
                            "the {m}-gram {} has a suffix missing from the file, whose \
                             probability by backing off is above 1 (log10 {}): the file's \
                             backoff weights are not those of a probability model",
                            quote(words),
                            ln_p / LN_10
                        )));
                    }
                }
                // inserting a blank suffix may have moved the prefix to a new slot
                let prefix = model.find(&ids[..m - 1]).unwrap_or(prefix);
                if !model.insert_ngram(m, prefix, ids[m - 1], logp, weight) {
                    return Err(lines.fail(format!("duplicate {m}-gram {}", quote(words))));
                }
            }
            seen += 1;
            if seen % PROGRESS_LINES == 0 {
                job.step(PROGRESS_LINES)?;
            }
        }
        if seen != expected {
            return Err(lines.fail(format!(
                "\\{m}-grams: holds {seen} n-grams but the header announces {expected}"
            )));
        }
        if m == 1 {
            for (id, name) in [(BOS, "<s>"), (EOS, "</s>")] {
                if model.unigram_logp[id as usize].is_nan() {
                    return Err(lines.fail(format!(
                        "the unigrams have no {name}: fastppl, like KenLM by default, needs the \
                         sentence markers <s> and </s>"
                    )));
                }
            }
            if model.unigram_logp[UNK as usize].is_nan() {
                model.unigram_logp[UNK as usize] = UNKNOWN_MISSING_LOG10 * LN_10;
                model.unigram_weight[UNK as usize] = 0.0;
            }
            model.unigram_logp[BOS as usize] = f64::NEG_INFINITY;
        }
    }

    // \end\
    loop {
        if !lines.advance()? {
            return Err(lines.fail("the file ends without \\end\\ (truncated?)"));
        }
        if !is_blank(lines.text()) {
            break;
        }
    }
    let t = lines.text().trim_end();
    if t != "\\end\\" {
        let msg = match section_order(t) {
            Some(k) => format!(
                "section \\{k}-grams: is not announced in the \\data\\ header (which stops at \
                 order {order})"
            ),
            None => format!("expected \\end\\, got {}", quote(t)),
        };
        return Err(lines.fail(msg));
    }
    while lines.advance()? {
        if !is_blank(lines.text()) {
            return Err(lines.fail(format!(
                "unexpected line after \\end\\: {}",
                quote(lines.text())
            )));
        }
    }
    Ok(model)
}

/// Splits an n-gram line of order `m` into (log10 p, words, backoff).
fn split_fields(line: &str, m: usize) -> std::result::Result<(&str, &str, Option<&str>), String> {
    let wrong_length =
        |k: usize| format!("an n-gram of {k} word(s) in the \\{m}-grams: section (expected {m})");
    if line.contains('\t') {
        let mut parts = line.split('\t');
        let logp = parts.next().unwrap_or("").trim();
        let Some(words) = parts.next() else {
            return Err("expected <log10 p>\\t<words>[\\t<backoff>]".into());
        };
        let backoff = parts.next().map(str::trim);
        if parts.next().is_some() {
            return Err(
                "too many tab-separated fields: expected <log10 p>\\t<words>[\\t<backoff>]".into(),
            );
        }
        let k = words.split_ascii_whitespace().count();
        if k != m {
            return Err(wrong_length(k));
        }
        let backoff = backoff.filter(|b| !b.is_empty());
        Ok((logp, words, backoff))
    } else {
        // whitespace-separated: p w1 .. wm [backoff]
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.len() != m + 1 && fields.len() != m + 2 {
            return Err(format!(
                "{} field(s) where a {m}-gram line has {} or {}: <log10 p> <{m} words> [<backoff>]",
                fields.len(),
                m + 1,
                m + 2
            ));
        }
        // words as a sub-slice of the line
        let start = fields[1].as_ptr() as usize - line.as_ptr() as usize;
        let last = fields[m];
        let end = last.as_ptr() as usize - line.as_ptr() as usize + last.len();
        Ok((fields[0], &line[start..end], fields.get(m + 1).copied()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str =
        "\\data\\\nngram 1=5\nngram 2=4\n\n\\1-grams:\n-1.0\t<unk>\t0\n-99\t<s>\t-0.5\n\
                        -0.5\t</s>\t0\n-0.4\ta\t-0.3\n-0.6\tb\t-0.2\n\n\\2-grams:\n-0.2\t<s> a\n\
                        -0.3\ta b\n-0.1\tb </s>\n-0.4\ta </s>\n\n\\end\\\n";

    fn read(text: &str) -> Result<Model> {
        read_arpa_from(text.as_bytes(), "test.arpa")
    }

    fn line_of(err: Error) -> usize {
        match err {
            Error::ModelFormat { line, .. } => line,
            other => panic!("not a format error: {other}"),
        }
    }

    #[test]
    fn values_halfway_between_two_float32s_round_trip() {
        // a backoff of -124987740, the shortest form of a float32 lying halfway between two
        // float32s: read as a float64 it was written back as the other one (found by fuzzing;
        // the input is the fuzz target's regression seed)
        let seed = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/rust/fuzz/seeds/arpa_reader/regression-float32-halfway.arpa"
        );
        let bytes = std::fs::read(seed).unwrap();
        let mut first = Vec::new();
        write_arpa_to(&read_arpa_from(&bytes[..], "seed").unwrap(), &mut first).unwrap();
        let mut second = Vec::new();
        write_arpa_to(&read_arpa_from(&first[..], "again").unwrap(), &mut second).unwrap();
        assert!(
            first == second,
            "the ARPA text changed when read and written again"
        );
    }

    #[test]
    fn a_blank_above_probability_one_is_refused() {
        // "a b" is missing: its blank gets p(b) * backoff(a) = 10^(-0.5 + 3) > 1 (found by
        // fuzzing: written back, such a blank made a file the reader refuses)
        let text = "\\data\\\nngram 1=4\nngram 2=1\nngram 3=1\n\n\\1-grams:\n-99\t<s>\t0\n\
                    -0.5\t</s>\n-1\ta\t3\n-0.5\tb\n\n\\2-grams:\n-0.1\t<s> a\t0\n\n\\3-grams:\n\
                    -0.2\t<s> a b\n\n\\end\\\n";
        let err = read(text).unwrap_err();
        assert!(
            err.to_string()
                .contains("probability by backing off is above 1"),
            "{err}"
        );
        assert_eq!(line_of(err), 16);
    }

    #[test]
    fn header_counts_are_hints_not_allocations() {
        for count in ["999999999999", "18446744073709551615", "100000000"] {
            let text = TINY.replace("ngram 2=4", &format!("ngram 2={count}"));
            let err = read(&text).unwrap_err().to_string();
            let expected = format!("holds 4 n-grams but the header announces {count}");
            assert!(err.ends_with(&expected), "{err}");
        }
        // tables sized below the counts grow as n-grams arrive: same model as with full room
        let small = read_arpa_hinted(TINY.as_bytes(), "t", 1, &Job::none()).unwrap();
        let full = read(TINY).unwrap();
        assert_eq!(small.ngram_counts(), full.ngram_counts());
        let ids: Vec<u32> = ["a", "b", "b", "a"]
            .iter()
            .map(|w| full.vocab.get(w).unwrap())
            .collect();
        let scores = |m: &Model| {
            let mut out = Vec::new();
            m.score_sentence(&ids, |_, lp| out.push(lp.to_bits()));
            out
        };
        assert_eq!(scores(&small), scores(&full));
    }

    #[test]
    fn overlong_line_is_refused_without_reading_it_whole() {
        // an endless line: the reader stops at the limit
        let endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let err = read_arpa_from(endless, "bomb.arpa")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 1: line longer than 1048576 bytes"),
            "{err}"
        );
        let long_comment = format!("#{}\n{TINY}", "c".repeat(MAX_LINE_BYTES - 2));
        assert!(read(&long_comment).is_ok());
    }

    #[test]
    fn reads_and_scores_with_backoff() {
        let model = read(TINY).unwrap();
        assert_eq!(model.order, 2);
        assert_eq!(model.vocab.len(), 5);
        assert_eq!(model.ngram_counts(), vec![4, 4]);
        let a = model.vocab.get("a").unwrap();
        let b = model.vocab.get("b").unwrap();
        // p(a | <s>) stored; p(a | b) = bo(b) + p(a)
        let mut st = model.sentence_start();
        assert!((model.score(&mut st, a) / LN_10 + 0.2).abs() < 1e-7); // (values are read as float32)
        let mut st = model.state_after(&[b]);
        assert!((model.score(&mut st, a) / LN_10 - (-0.2 - 0.4)).abs() < 1e-7);
        assert_eq!(model.unigram_logp[BOS as usize], f64::NEG_INFINITY);
    }

    #[test]
    fn write_then_read_back() {
        let model = read(TINY).unwrap();
        let mut out = Vec::new();
        write_arpa_to(&model, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "\\data\\\nngram 1=5\nngram 2=4\n\n\\1-grams:\n-1\t<unk>\t0\n0\t<s>\t-0.5\n"
        ));
        let again = read(&text).unwrap();
        assert_eq!(again.ngram_counts(), model.ngram_counts());
        let mut o2 = Vec::new();
        write_arpa_to(&again, &mut o2).unwrap();
        assert_eq!(String::from_utf8(o2).unwrap(), text);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(line_of(read("hello\n").unwrap_err()), 1);
        assert_eq!(
            line_of(read(&TINY.replace("ngram 2=4", "ngram 3=4")).unwrap_err()),
            3
        );
        assert_eq!(
            line_of(read(&TINY.replace("-0.3\ta b", "x\ta b")).unwrap_err()),
            14
        );
        assert_eq!(
            line_of(read(&TINY.replace("-0.3\ta b", "-0.3\ta b c")).unwrap_err()),
            14
        );
        assert_eq!(
            line_of(read(&TINY.replace("-0.3\ta b", "-0.2\t<s> a")).unwrap_err()),
            14
        );
        assert_eq!(
            line_of(read(&TINY.replace("ngram 2=4", "ngram 2=5")).unwrap_err()),
            17
        );
        assert_eq!(
            line_of(read(&TINY.replace("\\end\\\n", "")).unwrap_err()),
            17
        );
        assert_eq!(line_of(read(&TINY[..100]).unwrap_err()), 10);
        assert_eq!(
            line_of(read(&TINY.replace("\\2-grams:", "\\3-grams:")).unwrap_err()),
            12
        );
        assert_eq!(
            line_of(read(&TINY.replace("\\2-grams:", "\\foo:")).unwrap_err()),
            12
        );
        let mut bytes = TINY.as_bytes().to_vec();
        let at = TINY.find("a\t-0.3").unwrap();
        bytes[at] = 0xff;
        assert_eq!(line_of(read_arpa_from(&bytes[..], "x").unwrap_err()), 9);
    }

    #[test]
    fn missing_unk_and_missing_contexts() {
        let text = "\\data\\\nngram 1=4\nngram 2=1\nngram 3=1\n\n\\1-grams:\n-99\t<s>\t-0.5\n\
                    -0.5\t</s>\t-0.1\n-0.4\ta\t-0.3\n-0.6\tb\t-0.2\n\n\\2-grams:\n-0.2\t<s> a\t-0.7\n\n\
                    \\3-grams:\n-0.05\t<s> a b\n\n\\end\\\n";
        let model = read(text).unwrap();
        let no_prefix = text.replace("-0.2\t<s> a\t-0.7", "-0.2\t<s> b\t-0.7");
        assert_eq!(line_of(read(&no_prefix).unwrap_err()), 16);
        assert_eq!(model.unigram_logp[UNK as usize], -100.0 * LN_10);
        // "a b" (suffix of "<s> a b") was inserted as a blank: p(b|a) = bo(a) + p(b)
        assert_eq!(model.ngram_counts(), vec![4, 2, 1]);
        let a = model.vocab.get("a").unwrap();
        let b = model.vocab.get("b").unwrap();
        let mut st = model.state_after(&[a]);
        assert!((model.score(&mut st, b) / LN_10 - (-0.3 - 0.6)).abs() < 1e-7);
        let mut st = model.sentence_start();
        model.score(&mut st, a);
        assert!((model.score(&mut st, b) / LN_10 + 0.05).abs() < 1e-7);
    }

    #[test]
    fn mutated_files_never_panic() {
        const ALPHABET: &[u8] = b"\t\n -.0123456789abs<>/\\";
        // xorshift: deterministic, no dependency
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut loaded = 0;
        for _ in 0..3000 {
            let mut bytes = TINY.as_bytes().to_vec();
            for _ in 0..1 + next(4) {
                let at = next(bytes.len() + 1);
                match next(4) {
                    0 => bytes.truncate(at),
                    1 => bytes.insert(at, next(256) as u8),
                    2 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ if at < bytes.len() => bytes[at] = ALPHABET[next(ALPHABET.len())],
                    _ => {}
                }
            }
            if let Ok(model) = read_arpa_from(&bytes[..], "fuzz") {
                loaded += 1;
                let mut out = Vec::new();
                write_arpa_to(&model, &mut out).unwrap();
                read_arpa_from(&out[..], "again").unwrap();
            }
        }
        assert!(loaded > 0);
    }
}
