//! NLTK's `PunktSentenceTokenizer` at inference (`nltk/tokenize/punkt.py`, NLTK 3.10.4):
//! sentence spans of a text, given a language's [`PunktParams`].
//!
//! The steps are NLTK's, in its order:
//! 1. `_match_potential_end_contexts`: each `.`, `?` or `!` followed by a non-word character or
//!    by whitespace and a token is a candidate; its context is the word before it (found by
//!    NLTK's rule, quirks included: `string.whitespace` only, and an index 0 counts as "none")
//!    up to the end of the next token; a candidate whose word overlaps the next candidate's is
//!    dropped;
//! 2. `text_contains_sentbreak`: the context is split into tokens by `PunktLanguageVars`' word
//!    regex (hand-coded: it needs lookaheads and a lazy `\S+?`), annotated by the first pass
//!    (sentence ends, ellipses, abbreviations) and the second pass (collocations, orthographic
//!    heuristic, sentence starters, initials and numbers); a break before the last token splits;
//! 3. `_slices_from_text`, then `_realign_boundaries` (closing quotes and brackets after a break
//!    join the sentence before it); the last sentence ends at `text.rstrip()`.
//!
//! Offsets are byte offsets into the `&str` (NLTK's are code points; every comparison is between
//! offsets of the same string, so the spans are the same sentences).

use std::borrow::Cow;
use std::ops::Range;

use super::chars::{
    is_ascii_whitespace, is_digit, is_py_lower, is_py_upper, is_space, is_word_not_digit,
    py_is_blank, py_rstrip,
};
use super::params::{ortho, PunktParams};

/// A sentence: `text[start..end]`, empty when `start >= end` (NLTK can yield an empty sentence
/// there, as Python's slicing does).
pub type Span = (usize, usize);

/// `PunktLanguageVars._re_non_word_chars`: characters that cannot appear within words.
fn is_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"'
            | ';'
            | '}'
            | ']'
            | '*'
            | ':'
            | '@'
            | '\''
            | '('
            | '{'
            | '['
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{ab}'
            | '\u{bb}'
            | '?'
            | '!'
    )
}

/// `PunktLanguageVars._re_word_start` excludes these from starting a word.
fn is_not_word_start(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}

/// `re_boundary_realignment`'s leading class: closing quotes and brackets.
fn is_realigned(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | ')'
            | ']'
            | '}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{ab}'
            | '\u{bb}'
    )
}

fn char_at(s: &str, i: usize) -> Option<char> {
    s[i..].chars().next()
}

/// `_re_multi_char_punct` (`\-{2,}|\.{2,}|(?:\.\s){2,}\.`) at byte `i` of `s`: its length.
/// (Asked at each character of the words of every Punkt context: the test of the first byte
/// is inlined.)
#[inline]
fn multi_char_at(s: &str, i: usize) -> Option<usize> {
    match s.as_bytes().get(i) {
        Some(b'-' | b'.') => multi_char_run(s, i),
        _ => None,
    }
}

/// [`multi_char_at`] at a `-` or `.`.
fn multi_char_run(s: &str, i: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let b = &bytes[i..];
    let run = |c: u8| b.iter().take_while(|&&x| x == c).count();
    match b {
        [b'-', b'-', ..] => return Some(run(b'-')),
        [b'.', b'.', ..] => return Some(run(b'.')),
        [b'.', ..] => {}
        _ => return None,
    }
    // (\.\s){n} greedily, then a final "." (backing off one repetition if needed); `end` is
    // the end of n repetitions, `before` the end of n - 1 (no allocation: called at each
    // character of the words of every Punkt context)
    let (mut n, mut end, mut before) = (0, i, i);
    while bytes.get(end) == Some(&b'.') {
        match char_at(s, end + 1) {
            Some(c) if is_space(c) => {
                before = end;
                end += 1 + c.len_utf8();
                n += 1;
            }
            _ => break,
        }
    }
    if n >= 2 && bytes.get(end) == Some(&b'.') {
        Some(end + 1 - i)
    } else if n >= 3 {
        Some(before + 1 - i)
    } else {
        None
    }
}

/// The lookahead after `\S+?` in `_word_tokenize_fmt`: a word ends before byte `j`.
fn word_ends_at(s: &str, j: usize) -> bool {
    let Some(c) = char_at(s, j) else {
        return true; // $
    };
    if is_space(c) || is_non_word(c) || multi_char_at(s, j).is_some() {
        return true;
    }
    if c == ',' {
        let k = j + 1;
        return match char_at(s, k) {
            None => true,
            Some(d) => is_space(d) || is_non_word(d) || multi_char_at(s, k).is_some(),
        };
    }
    false
}

/// `PunktLanguageVars.word_tokenize` (`_word_tokenize_fmt` with `findall`) on one line: gives
/// `word` each word in order, until it returns true (then so does this).
fn line_words<'a>(line: &'a str, word: &mut impl FnMut(&'a str) -> bool) -> bool {
    let mut i = 0;
    while let Some(c) = char_at(line, i) {
        if let Some(n) = multi_char_at(line, i) {
            if word(&line[i..i + n]) {
                return true;
            }
            i += n;
        } else if is_space(c) {
            i += c.len_utf8();
        } else if is_not_word_start(c) {
            if word(&line[i..i + c.len_utf8()]) {
                return true;
            }
            i += c.len_utf8();
        } else {
            let mut j = i + c.len_utf8();
            // (ASCII letters and digits never end a word: skipped without the tests)
            let bytes = line.as_bytes();
            while bytes.get(j).is_some_and(u8::is_ascii_alphanumeric) {
                j += 1;
            }
            while !word_ends_at(line, j) {
                j += char_at(line, j).map_or(0, char::len_utf8);
            }
            if word(&line[i..j]) {
                return true;
            }
            i = j;
        }
    }
    false
}

/// `PunktBaseClass._tokenize_words`: gives `word` the tokens of the lines that are not blank, in
/// order, until it returns true (then so does this).
fn words<'a>(text: &'a str, mut word: impl FnMut(&'a str) -> bool) -> bool {
    let mut line_words = |line| !py_is_blank(line) && line_words(line, &mut word);
    // (a Punkt context is most often one line: not split then)
    if memchr::memchr(b'\n', text.as_bytes()).is_none() {
        line_words(text)
    } else {
        text.split('\n').any(line_words)
    }
}

/// `PunktToken._RE_NUMERIC` (`^-?[\.,]?\d[\d,\.-]*\.?$`) matches the whole of `s`.
fn is_numeric(s: &str) -> bool {
    let mut rest = s.strip_prefix('-').unwrap_or(s);
    rest = rest
        .strip_prefix('.')
        .or_else(|| rest.strip_prefix(','))
        .unwrap_or(rest);
    let mut chars = rest.chars();
    chars.next().is_some_and(is_digit) && chars.all(|c| is_digit(c) || matches!(c, ',' | '.' | '-'))
}

/// `s.lower()`, borrowed when no character changes (every token of lowercased text, most of
/// the others): Punkt looks at every token of tens of thousands of contexts.
fn lowercased(s: &str) -> Cow<'_, str> {
    let unchanged = s.chars().all(|c| {
        if c.is_ascii() {
            !c.is_ascii_uppercase()
        } else if ('\u{df}'..='\u{ff}').contains(&c) {
            true // Latin-1's lowercase letters (and `÷`): left alone
        } else {
            let mut lower = c.to_lowercase();
            lower.next() == Some(c) && lower.next().is_none()
        }
    });
    if unchanged {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

/// The annotations of `PunktToken` that inference uses.
struct Token<'a> {
    tok: &'a str,
    period_final: bool,
    sentbreak: bool,
    abbr: bool,
    ellipsis: bool,
}

/// `type[:-1]` when the type is longer than one character and ends with a period.
fn without_period(typ: &str) -> &str {
    match typ.strip_suffix('.') {
        Some(t) if !t.is_empty() => t,
        _ => typ,
    }
}

impl<'a> Token<'a> {
    fn new(tok: &'a str) -> Self {
        Token {
            tok,
            period_final: tok.as_bytes().last() == Some(&b'.'),
            sentbreak: false,
            abbr: false,
            ellipsis: false,
        }
    }

    /// `type`: lowercased, numbers as `##number##`. (Made when asked: most decisions need the
    /// type of the token before the candidate only.)
    fn typ(&self) -> Cow<'a, str> {
        let lower = lowercased(self.tok);
        if is_numeric(&lower) {
            Cow::Borrowed("##number##")
        } else {
            lower
        }
    }

    fn type_no_sentperiod(&self) -> Cow<'a, str> {
        let typ = self.typ();
        if !self.sentbreak {
            return typ;
        }
        match typ {
            Cow::Borrowed(t) => Cow::Borrowed(without_period(t)),
            Cow::Owned(mut t) => {
                t.truncate(without_period(&t).len());
                Cow::Owned(t)
            }
        }
    }

    fn first_upper(&self) -> bool {
        self.tok.chars().next().is_some_and(is_py_upper)
    }

    fn first_lower(&self) -> bool {
        self.tok.chars().next().is_some_and(is_py_lower)
    }

    /// `_RE_ELLIPSIS` (`\.\.+$`).
    fn is_ellipsis(&self) -> bool {
        self.tok.len() >= 2 && self.tok.bytes().all(|b| b == b'.')
    }

    /// `_RE_INITIAL` (`[^\W\d]\.$`).
    fn is_initial(&self) -> bool {
        let mut chars = self.tok.chars();
        matches!(
            (chars.next(), chars.next(), chars.next()),
            (Some(c), Some('.'), None) if is_word_not_digit(c)
        )
    }
}

/// The answer of `_ortho_heuristic`.
#[derive(PartialEq, Eq)]
enum Starter {
    Yes,
    No,
    Unknown,
}

/// NLTK's Punkt sentence tokenizer with one language's parameters.
#[derive(Debug, Clone)]
pub struct Punkt {
    params: PunktParams,
    /// The first types of the collocations (a quick test before building a pair).
    collocation_firsts: hashbrown::HashSet<String>,
}

impl Punkt {
    /// A tokenizer with `params`.
    pub fn new(params: PunktParams) -> Self {
        let collocation_firsts = params.collocations.iter().map(|(a, _)| a.clone()).collect();
        Punkt {
            params,
            collocation_firsts,
        }
    }

    /// `_first_pass_annotation`.
    fn first_pass(&self, t: &mut Token<'_>) {
        let tok = t.tok;
        if matches!(tok, "." | "?" | "!") {
            t.sentbreak = true;
        } else if t.is_ellipsis() {
            t.ellipsis = true;
        } else if t.period_final && !tok.ends_with("..") {
            let stem = lowercased(&tok[..tok.len() - 1]);
            let abbrev = &self.params.abbrev_types;
            // the stem, or its last part after a `-` (the same when there is none)
            let last = stem.rfind('-').map(|k| &stem[k + 1..]);
            if abbrev.contains(&*stem) || last.is_some_and(|l| abbrev.contains(l)) {
                t.abbr = true;
            } else {
                t.sentbreak = true;
            }
        }
    }

    /// `_ortho_heuristic`: does `t` start a sentence?
    fn ortho_heuristic(&self, t: &Token<'_>) -> Starter {
        if matches!(t.tok, ";" | ":" | "," | "." | "!" | "?") {
            return Starter::No;
        }
        let context = self.params.ortho(&t.type_no_sentperiod());
        if t.first_upper() && context & ortho::LC != 0 && context & ortho::MID_UC == 0 {
            return Starter::Yes;
        }
        if t.first_lower() && (context & ortho::UC != 0 || context & ortho::BEG_LC == 0) {
            return Starter::No;
        }
        Starter::Unknown
    }

    /// `_second_pass_annotation` of `t1`, followed by `t2` (first pass only).
    fn second_pass(&self, t1: &mut Token<'_>, t2: &Token<'_>) {
        if !t1.period_final {
            return;
        }
        let typ = t1.typ();
        let typ = without_period(&typ);
        let initial = t1.is_initial();
        if self.collocation_firsts.contains(typ)
            && self
                .params
                .collocations
                .contains(&(typ.to_string(), t2.type_no_sentperiod().into_owned()))
        {
            t1.sentbreak = false;
            t1.abbr = true;
            return;
        }
        if (t1.abbr || t1.ellipsis) && !initial {
            if self.ortho_heuristic(t2) == Starter::Yes {
                t1.sentbreak = true;
                return;
            }
            if t2.first_upper()
                && self
                    .params
                    .sent_starters
                    .contains(&*t2.type_no_sentperiod())
            {
                t1.sentbreak = true;
                return;
            }
        }
        if initial || typ == "##number##" {
            let starter = self.ortho_heuristic(t2);
            if starter == Starter::No {
                t1.sentbreak = false;
                t1.abbr = true;
                return;
            }
            if starter == Starter::Unknown
                && initial
                && t2.first_upper()
                && self.params.ortho(&t2.type_no_sentperiod()) & ortho::LC == 0
            {
                t1.sentbreak = false;
                t1.abbr = true;
            }
        }
    }

    /// `text_contains_sentbreak`: a token other than the last is a sentence break. The second
    /// pass on a token needs the first pass on it and on the next token only, so the tokens are
    /// annotated as they come, two at a time, up to the first break.
    fn contains_sentbreak(&self, context: &str) -> bool {
        let mut before: Option<Token<'_>> = None;
        words(context, |word| {
            let mut token = Token::new(word);
            self.first_pass(&mut token);
            let found = before.as_mut().is_some_and(|t| {
                self.second_pass(t, &token);
                t.sentbreak
            });
            before = Some(token);
            found
        })
    }

    /// `_slices_from_text`: the sentence slices before realignment.
    /// The decisions are independent of each other, so they are taken on all cores.
    fn slices(&self, text: &str) -> Vec<Span> {
        use rayon::prelude::*;
        /// Candidates a task decides, at least.
        const TASK: usize = 4096;
        let candidates = candidates(text);
        let decide = |c: &Candidate| self.contains_sentbreak(&text[c.context.0..c.context.1]);
        // (a short text's few candidates on this thread: handing them to the pool and waiting
        // for them would take longer)
        let breaks: Vec<bool> = if candidates.len() <= TASK {
            candidates.iter().map(decide).collect()
        } else {
            candidates
                .par_iter()
                .with_min_len(TASK)
                .map(decide)
                .collect()
        };
        let mut slices = Vec::new();
        let mut last_break = 0;
        for (candidate, is_break) in candidates.iter().zip(breaks) {
            if is_break {
                slices.push((last_break, candidate.end));
                last_break = candidate.next_token.unwrap_or(candidate.end);
            }
        }
        slices.push((last_break, py_rstrip(text).len()));
        slices
    }

    /// The sentences of `text`, as `PunktSentenceTokenizer.span_tokenize(text)` gives them
    /// (boundaries realigned).
    pub fn sentence_spans(&self, text: &str) -> Vec<Span> {
        realign(text, &self.slices(text))
    }
}

/// A match of `period_context_re` with the context `_match_potential_end_contexts` gives it.
struct Candidate {
    /// End of the `[.?!]` character.
    end: usize,
    /// Start of `next_tok`, when the candidate is followed by whitespace and a token.
    next_token: Option<usize>,
    /// The context: from the word before to the end of `after_tok`.
    context: (usize, usize),
}

/// `period_context_re().finditer(text)`: each `[.?!]` followed by a non-word character, or by
/// whitespace and a token; yields (start, end of after_tok, start of next_tok).
/// Only those whose `[.?!]` lies in `part` are yielded (their lookahead may go past it).
fn period_contexts(
    text: &str,
    part: Range<usize>,
) -> impl Iterator<Item = (usize, usize, Option<usize>)> + '_ {
    let bytes = text.as_bytes();
    let from = part.start;
    memchr::memchr3_iter(b'.', b'?', b'!', &bytes[part]).filter_map(move |p| {
        let p = from + p;
        let after = p + 1;
        let c = char_at(text, after)?;
        if is_non_word(c) {
            return Some((p, after + c.len_utf8(), None));
        }
        if !is_space(c) {
            return None;
        }
        let tok = after
            + text[after..]
                .char_indices()
                .find(|&(_, c)| !is_space(c))
                .map(|(i, _)| i)?;
        let tok_end = text[tok..]
            .char_indices()
            .find(|&(_, c)| is_space(c))
            .map_or(text.len(), |(i, _)| tok + i);
        Some((p, tok_end, Some(tok)))
    })
}

/// `_match_potential_end_contexts`. A long text is cut into parts, one per core, each scanned
/// on its own (see [`part_starts`] for why the result is the same).
fn candidates(text: &str) -> Vec<Candidate> {
    use rayon::prelude::*;
    /// Bytes of text from which the scan is cut into parts.
    const PARALLEL_FROM: usize = 1 << 20;
    if text.len() < PARALLEL_FROM {
        return candidates_in(text, 0..text.len());
    }
    let starts = part_starts(text, rayon::current_num_threads());
    let parts: Vec<Vec<Candidate>> = starts
        .par_windows(2)
        .map(|w| candidates_in(text, w[0]..w[1]))
        .collect();
    parts.into_iter().flatten().collect()
}

/// The starts of the parts of `text` to scan for [`candidates`] (0 first), then its length:
/// about `parts` of equal size, each but the first starting after an ASCII whitespace
/// character (past byte 1). The scan of a part can then start afresh: between the first
/// `[.?!]` of a part and any match before it lies that whitespace, so the word of the first
/// starts after the last whitespace before it, whatever came earlier (the whitespace index of
/// `_get_last_whitespace_index` is above 0), and the last match of the part before is kept
/// (its word ends before this one starts), as that part keeps it at its end.
fn part_starts(text: &str, parts: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    for k in 1..parts {
        let from = (text.len() * k / parts).max(*starts.last().expect("not empty") + 2);
        let Some(at) = bytes.get(from..).and_then(|rest| {
            rest.iter()
                .position(|&b| is_ascii_whitespace(char::from(b)))
        }) else {
            break;
        };
        starts.push(from + at + 1);
    }
    starts.push(text.len());
    starts.dedup();
    starts
}

/// [`candidates`] of the `[.?!]` in `part` of `text`, which starts at 0 or after an ASCII
/// whitespace character (see [`part_starts`]).
fn candidates_in(text: &str, part: Range<usize>) -> Vec<Candidate> {
    let from = part.start;
    let mut out = Vec::new();
    let mut previous: Option<(usize, usize, Option<usize>)> = None;
    // (the first match of a later part looks back to the whitespace before the part, at an
    // index of 0 when it is the last: the word starts at the part)
    let mut previous_slice = (from, from.saturating_sub(1));
    for m in period_contexts(text, part) {
        let (start, _, _) = m;
        let before = &text[previous_slice.1..start];
        // `_get_last_whitespace_index`: an index 0 reads as "not found"
        let word_start = match before.rfind(is_ascii_whitespace) {
            Some(index) if index != 0 => previous_slice.1 + index + 1,
            _ => previous_slice.0,
        };
        if let Some(prev) = previous {
            if previous_slice.1 <= word_start {
                out.push(candidate(prev, previous_slice));
            }
        }
        previous = Some(m);
        previous_slice = (word_start, start);
    }
    if let Some(prev) = previous {
        out.push(candidate(prev, previous_slice));
    }
    out
}

fn candidate(m: (usize, usize, Option<usize>), word: Span) -> Candidate {
    let (start, after_end, next_token) = m;
    Candidate {
        end: start + 1,
        next_token,
        context: (word.0, after_end),
    }
}

/// `re_boundary_realignment.match(s)`: closing quotes/brackets followed by whitespace, `--` or
/// the end; gives (length of the quotes, end of the match).
fn realignment(s: &str) -> Option<(usize, usize)> {
    let quotes = s
        .char_indices()
        .find(|&(_, c)| !is_realigned(c))
        .map_or(s.len(), |(i, _)| i);
    if quotes == 0 {
        return None;
    }
    let rest = &s[quotes..];
    match rest.chars().next() {
        None => Some((quotes, quotes)),
        Some(c) if is_space(c) => {
            let ws = rest
                .char_indices()
                .find(|&(_, c)| !is_space(c))
                .map_or(rest.len(), |(i, _)| i);
            Some((quotes, quotes + ws))
        }
        Some(_) if rest.starts_with("--") => Some((quotes, quotes)),
        Some(_) => None,
    }
}

/// The text of a span, as Python's `text[start:end]`.
pub fn span_text(text: &str, (start, end): Span) -> &str {
    if start < end {
        &text[start..end]
    } else {
        ""
    }
}

/// `_realign_boundaries`.
fn realign(text: &str, slices: &[Span]) -> Vec<Span> {
    let mut out = Vec::with_capacity(slices.len());
    let mut shift = 0;
    for (i, &(start, stop)) in slices.iter().enumerate() {
        let sentence1 = (start + shift, stop);
        let Some(&sentence2) = slices.get(i + 1) else {
            if !span_text(text, sentence1).is_empty() {
                out.push(sentence1);
            }
            continue;
        };
        if let Some((quotes, end)) = realignment(span_text(text, sentence2)) {
            out.push((sentence1.0, sentence2.0 + quotes));
            shift = end;
        } else {
            shift = 0;
            if !span_text(text, sentence1).is_empty() {
                out.push(sentence1);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::nltk::random_texts::random_texts;

    fn english() -> Punkt {
        let mut params = PunktParams::default();
        for a in ["dr", "mr", "u.s", "e.g"] {
            params.abbrev_types.insert(a.to_string());
        }
        Punkt::new(params)
    }

    fn sentences(text: &str) -> Vec<&str> {
        english()
            .sentence_spans(text)
            .into_iter()
            .map(|s| span_text(text, s))
            .collect()
    }

    #[test]
    fn breaks_abbreviations_and_realignment() {
        assert_eq!(
            sentences("Dr. Smith went home. He slept.  "),
            ["Dr. Smith went home.", "He slept."]
        );
        assert_eq!(
            sentences("(He left.) Then?! \"Yes.\" No"),
            ["(He left.)", "Then?!", "\"Yes.\"", "No"]
        );
        assert_eq!(
            sentences("Very bad acting!!! I promise."),
            ["Very bad acting!!!", "I promise."]
        );
    }

    #[test]
    fn word_regex() {
        let mut out = Vec::new();
        line_words("Hello, world... (it's) --here a. . . b:c 3,5,", &mut |w| {
            out.push(w);
            false
        });
        assert_eq!(
            out,
            [
                "Hello", ",", "world", "...", "(", "it", "'s", ")", "--", "here", "a", ". . .",
                "b", ":", "c", "3,5", ","
            ]
        );
    }

    #[test]
    fn multi_char_punctuation_backs_off_as_the_regex_does() {
        // `\-{2,}|\.{2,}|(?:\.\s){2,}\.` at the start, leftmost alternative first
        let cases = [
            ("--x", Some(2)),
            ("---", Some(3)),
            ("...a", Some(3)),
            (". . .", Some(5)),
            (". . . x", Some(5)),
            (". . . . x", Some(7)),
            (". .\u{a0}.", Some(6)),
            (". . x", None),
            (". x", None),
            (".", None),
            ("-.", None),
            ("a..", None),
        ];
        for (text, expected) in cases {
            assert_eq!(multi_char_at(text, 0), expected, "{text:?}");
        }
    }

    #[test]
    fn candidates_of_parts_are_those_of_the_whole_text() {
        let fields = |c: &[Candidate]| -> Vec<(usize, Option<usize>, Span)> {
            c.iter().map(|c| (c.end, c.next_token, c.context)).collect()
        };
        let pieces = [
            ".", "!", "?", " ", "  ", "\n", "a", "Bc", "\"", ")", "é", "..", "\t",
        ];
        for text in random_texts(&pieces, 20_000) {
            let whole = fields(&candidates_in(&text, 0..text.len()));
            for parts in 2..6 {
                let starts = part_starts(&text, parts);
                let joined: Vec<Candidate> = starts
                    .windows(2)
                    .flat_map(|w| candidates_in(&text, w[0]..w[1]))
                    .collect();
                assert_eq!(fields(&joined), whole, "{text:?} in {starts:?}");
            }
        }
    }

    #[test]
    fn lowercased_borrows_only_what_lowercasing_leaves_alone() {
        for word in ["abc", "ação", "3.5", "", "ς", "日本"] {
            assert!(
                matches!(lowercased(word), Cow::Borrowed(w) if w == word),
                "{word}"
            );
        }
        for word in ["Abc", "AÇÃO", "ΟΔΟΣ", "İ", "Ǆ"] {
            assert_eq!(lowercased(word), word.to_lowercase(), "{word}");
            assert!(matches!(lowercased(word), Cow::Owned(_)), "{word}");
        }
        // every Latin-1 character: the fast path agrees with `to_lowercase`
        for c in '\u{80}'..='\u{ff}' {
            let word = c.to_string();
            let unchanged = word.to_lowercase() == word;
            assert_eq!(
                matches!(lowercased(&word), Cow::Borrowed(_)),
                unchanged,
                "{c}"
            );
        }
    }
}
