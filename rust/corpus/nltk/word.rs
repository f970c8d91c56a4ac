//! NLTK's `NLTKWordTokenizer` (`nltk/tokenize/destructive.py`, NLTK 3.10.4): the improved
//! Treebank rules that `word_tokenize` applies to each sentence.
//!
//! The rules are the same substitutions, in the same order, on the whole string: starting
//! quotes, punctuation, brackets, double dashes, ending quotes, contractions; then the string is
//! split on Python whitespace. Each rule is a hand-coded left-to-right scan beside the NLTK
//! pattern it replaces (the quote and clitic rules are checked against the `regex` crate's
//! `replace_all` of NLTK's pattern on every short string of the characters they involve), and
//! is skipped when the sentence lacks the bytes it needs. Some need more than a regex crate:
//! - the opening-apostrophe rule (a lookbehind and two lookaheads);
//! - the contractions, compiled by NLTK with the standard `re` module: `\b` there uses
//!   `str.isalnum()` (not UTS#18 `\w`), and `(?i)` lets `i` match `İ` and `ı`, `s` match `ſ`;
//! - `$`, which in Python also matches before a final `\n` (for each rule below the final `\n`
//!   is consumed by a greedy `\s*` or cannot be there, so `\z` is equivalent).

use std::sync::OnceLock;

use super::chars::{is_digit, is_py_space, is_re_word, is_space, is_word};

/// The bytes present in a sentence, plus those the rules can add: every rule only moves text
/// and inserts spaces, except that `"` and `''` become ``` `` ``` or `''`. So two bytes that
/// are not adjacent in the sentence never become adjacent, and a run of letters is never cut.
struct Bytes {
    seen: [bool; 256],
    /// `..` occurs (`\.{2,}` can match).
    double_dot: bool,
    /// `--` occurs.
    double_dash: bool,
    /// `nn`, `mm` or `tt` occurs (ASCII case-insensitively), which each contraction word
    /// without an apostrophe holds (`cannot`, `gimme`, `gonna`, `gotta`, `lemme`, `wanna`).
    double_nmt: bool,
}

impl Bytes {
    fn of(text: &str) -> Self {
        let mut seen = [false; 256];
        let (mut double_dot, mut double_dash, mut double_nmt) = (false, false, false);
        let mut prev = 0;
        for &b in text.as_bytes() {
            seen[b as usize] = true;
            if b == prev {
                double_dot |= b == b'.';
                double_dash |= b == b'-';
            }
            if b | 0x20 == prev | 0x20 {
                double_nmt |= matches!(b | 0x20, b'n' | b'm' | b't');
            }
            prev = b;
        }
        if seen[b'"' as usize] || seen[b'\'' as usize] {
            seen[b'`' as usize] = true;
            seen[b'\'' as usize] = true;
        }
        Bytes {
            seen,
            double_dot,
            double_dash,
            double_nmt,
        }
    }

    fn any(&self, bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| self.seen[b as usize])
    }
}

/// Last UTF-8 bytes of « “ ‘ „ (and the backtick): what STARTING_QUOTES 1 needs.
const OPEN_QUOTE_BYTES: &[u8] = b"`\xab\x9c\x98\x9e";
/// Last UTF-8 bytes of » ” ’.
const CLOSE_QUOTE_BYTES: &[u8] = b"\xbb\x9d\x99";
/// Last UTF-8 bytes of U+2012..U+2015.
const DASH_BYTES: &[u8] = b"\x92\x93\x94\x95";

/// The contractions' words, ASCII case-insensitively: `cannot|d'ye|...`.
fn contraction_words() -> &'static regex::bytes::Regex {
    static WORDS: OnceLock<regex::bytes::Regex> = OnceLock::new();
    WORDS.get_or_init(|| {
        regex::bytes::Regex::new(
            "(?i-u)cannot|d'ye|gimme|gonna|gotta|lemme|more'n|wanna| 'tis| 'twas",
        )
        .expect("a valid pattern")
    })
}

/// `text.replace(from, to)` without a copy when `from` is absent.
fn replace_literal(text: String, from: &str, to: &str) -> String {
    if text.contains(from) {
        text.replace(from, to)
    } else {
        text
    }
}

/// Tokenizes one sentence as `NLTKWordTokenizer().tokenize(text)` does, giving each token to
/// `emit` in order.
pub fn tokenize(text: &str, emit: impl FnMut(&str)) {
    if text.len() < SEGMENTED_FROM {
        tokenize_rules(text, emit);
    } else {
        tokenize_segments(text, emit);
    }
}

/// Text bytes from which [`tokenize_segments`] beats the rules on the whole text. Each rule
/// passes over the whole text, which is fast on a sentence (about 100 bytes, in cache, most
/// rules skipped by [`Bytes`]) but rewrites a long text (a line or a file with
/// `preserve_line=True`) several times; cutting it first, which looks at each character,
/// costs about 10 % more on sentences (Machado's, measured) and saves 35 % on its whole text.
const SEGMENTED_FROM: usize = 512;

/// [`tokenize`] on long texts: the text is cut at each `' '` between two [plain](is_plain)
/// characters, and each segment is tokenized on its own: a segment of plain characters alone
/// (most words of prose) is one token, unless it is a contraction word (`cannot`, `gonna`,
/// ...); one of [simple prose](simple_prose) is cut at its spaces and punctuation; the others
/// get the rules. The cut cannot change the tokens, because no rule looks across such a space:
/// - a match that holds the space, or that ends or starts beside it, needs a quote, `'`, `:`,
///   `,`, `.` or bracket on one side of it, or whitespace up to the end or start of the text
///   (`^"`, the final period, a final `:`), and plain characters are none of these;
/// - `\b` and `(?<!\w)` see a non-word character on the far side of the space just as at the
///   end of the text, and the rules that need a space after a match (`'s `, `n't `, `wanna `)
///   run after NLTK pads the text with a space at each end;
/// - rules only insert spaces and rewrite quotes, so the two plain neighbours stay plain.
///
/// `segments_are_whole_sentences` checks this against the rules on the whole sentence.
fn tokenize_segments(text: &str, mut emit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut start = 0; // of the current segment
    let mut segment_plain = true; // every character of the segment so far is plain
    let mut prev_plain = false; // the character before `i` is plain
    let mut cut: Option<usize> = None; // a ' ' after a plain character
    let mut i = 0;
    while i < bytes.len() {
        let (plain, n) = plain_char(text, i);
        if let Some(at) = cut.take() {
            if plain {
                tokenize_segment(&text[start..at], segment_plain, &mut emit);
                start = at + 1;
                segment_plain = true;
            }
        }
        if bytes[i] == b' ' && prev_plain {
            cut = Some(i);
        }
        segment_plain &= plain;
        prev_plain = plain;
        i += n;
    }
    tokenize_segment(&text[start..], segment_plain, &mut emit);
}

/// `text` in parts of at least `size` bytes (the last may be shorter), cut at spaces where
/// `tokenize_segments` cuts it, so that the tokens of the parts, one part after the other, are
/// those of `text` (also for Python's `str.split`, which any space cuts): long pieces of text
/// (a file with `preserve_line=True`, a line of a gigabyte) can then be tokenized in parallel.
pub fn split_at_cuts(text: &str, size: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    let mut from = size;
    while from < bytes.len() {
        let Some(found) = memchr::memchr(b' ', &bytes[from..]) else {
            break;
        };
        let at = from + found;
        from = at + 1;
        let before = text[..at].chars().next_back().is_some_and(is_plain);
        if before && plain_at(text, at + 1).is_some() {
            parts.push(&text[start..at]);
            start = at + 1;
            from = start + size;
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A character no rule treats apart from letters: a word character both for Python's `re`
/// (`str.isalnum()`: no combining mark, which is a word boundary to CONTRACTIONS' `\b`) and
/// for the `regex` module (UTS#18: no `²` or `½`), not `_`, and not one that Python's `(?i)`
/// folds to an ASCII letter of a contraction word (`İ`, `ı` to `i`, `ſ` to `s`).
fn is_plain(c: char) -> bool {
    match c {
        // the Latin letters of European languages, without a look at Unicode's tables
        'À'..='ÿ' => !matches!(c, '×' | '÷'),
        'Ā'..='ɏ' => !matches!(c, 'İ' | 'ı' | 'ſ'),
        _ => c != '_' && is_re_word(c) && is_word(c),
    }
}

/// The tokens of one segment of a sentence (see [`tokenize`]); `plain`: all its characters are.
fn tokenize_segment(segment: &str, plain: bool, emit: &mut impl FnMut(&str)) {
    if segment.is_empty() {
        return;
    }
    if plain {
        if !is_contraction(segment) {
            emit(segment);
            return;
        }
    } else if simple_prose(segment, &mut |_| ()) {
        simple_prose(segment, emit);
        return;
    }
    tokenize_rules(segment, emit);
}

/// Whether `word` is a contraction word that CONTRACTIONS2 cuts in two without an apostrophe.
fn is_contraction(word: &str) -> bool {
    matches!(word.len(), 5 | 6)
        && ["cannot", "gimme", "gonna", "gotta", "lemme", "wanna"]
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether the character at `i` of `s` (a character boundary before its end) is plain, and
/// its length.
fn plain_char(s: &str, i: usize) -> (bool, usize) {
    match s.as_bytes()[i] {
        b if b < 0x80 => (b.is_ascii_alphanumeric(), 1),
        _ => {
            let c = s[i..].chars().next().expect("a character boundary");
            (is_plain(c), c.len_utf8())
        }
    }
}

/// The length of the character at `i` of `s` if it is plain, else None (also at the end).
fn plain_at(s: &str, i: usize) -> Option<usize> {
    if i >= s.len() {
        return None;
    }
    let (plain, n) = plain_char(s, i);
    plain.then_some(n)
}

/// Tokenizes a segment of simple prose, which NLTK's rules only cut at spaces and around
/// punctuation that is always padded, and says whether it was one; `emit` gets the tokens
/// (call it with a no-op first to check, as a segment that is not gives some of its tokens
/// before saying so). Simple prose: words separated by `' '`, or by `, ` `: ` `; ` `? ` `! `,
/// and ended by one of `. ? ! , : ;` or nothing. A word is made of plain characters, single `-`
/// (only `--` is a rule) and `.` between a plain character and a plain character or `' '` (a
/// `.` inside the sentence: NLTK only splits the final one, or runs of them); none of its
/// alphanumeric pieces (between `-` and `.`) is a contraction word, which `\b` would find.
/// Its final `.`, after a word, ends the sentence, because a segment that does not end with a
/// plain character is the last one.
fn simple_prose(s: &str, emit: &mut impl FnMut(&str)) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        // a word
        let start = i;
        let mut piece = i; // start of the current alphanumeric piece
        loop {
            if let Some(n) = plain_at(s, i) {
                i += n;
                continue;
            }
            let boundary = match b.get(i) {
                Some(b'-') => b.get(i + 1) != Some(&b'-') && (i == 0 || b[i - 1] != b'-'),
                Some(b'.') => {
                    i > piece && (plain_at(s, i + 1).is_some() || b.get(i + 1) == Some(&b' '))
                }
                _ => false,
            };
            if !boundary {
                break;
            }
            if is_contraction(&s[piece..i]) {
                return false;
            }
            i += 1;
            piece = i;
        }
        if i == start || is_contraction(&s[piece..i]) {
            return false;
        }
        emit(&s[start..i]);
        // what follows it
        match b.get(i) {
            None => return true,
            Some(b' ') => i += 1,
            Some(&p @ (b',' | b';' | b'?' | b'!' | b'.' | b':')) => {
                if i + 1 == b.len() {
                    emit(&s[i..]);
                    return true;
                }
                if p == b'.' || b[i + 1] != b' ' {
                    return false;
                }
                emit(&s[i..=i]);
                i += 2;
            }
            Some(_) => return false,
        }
        if plain_at(s, i).is_none() && b.get(i) != Some(&b'-') {
            return false;
        }
    }
}

/// Tokenizes a text by NLTK's rules, one after the other over the whole text.
///
/// (Over 80 lines on purpose: NLTK's rules one after another in NLTK's order, each a few lines
/// under the comment that quotes it, so that the order can be checked against NLTK's source at a
/// glance.)
fn tokenize_rules(text: &str, emit: impl FnMut(&str)) {
    let present = Bytes::of(text);
    // (room for the spaces the rules add, so that those rewriting in place seldom reallocate)
    let mut owned = String::with_capacity(text.len() + text.len() / 8 + 16);
    owned.push_str(text);
    // STARTING_QUOTES 1: `([«“‘„]|[`]+)` -> ` \1 `.
    let mut t = pad(
        owned,
        &present,
        OPEN_QUOTE_BYTES,
        b"`\xc2\xe2",
        |s| match first(s) {
            Some(c @ ('«' | '“' | '‘' | '„')) => c.len_utf8(),
            Some('`') => run_of(s, b'`'),
            _ => 0,
        },
    );
    if t.starts_with('"') {
        t.replace_range(..1, "``");
    }
    if present.any(b"`") {
        t = replace_literal(t, "``", " `` ");
    }
    if present.any(b"\"'") {
        t = quote_after_opener(t);
    }
    if present.any(b"'") {
        t = opening_apostrophes(t);
    }
    t = final_period(t, is_closing_or_space, true);
    if present.any(b":,") {
        t = colons(t);
    }
    // `\.{2,}`, `[;@#$%&]`, `[\u2012-\u2015]` -> ` \g<0> `.
    if present.double_dot {
        t = pad(t, &present, b".", b".", |s| match run_of(s, b'.') {
            n if n >= 2 => n,
            _ => 0,
        });
    }
    t = pad(t, &present, b";@#$%&", b";@#$%&", |s| {
        one(s, |c| ";@#$%&".contains(c))
    });
    t = pad(t, &present, DASH_BYTES, b"\xe2", |s| {
        one(s, |c| ('\u{2012}'..='\u{2015}').contains(&c))
    });
    t = final_period(t, is_closing_ascii, false);
    t = pad(t, &present, b"?!", b"?!", |s| {
        one(s, |c| c == '?' || c == '!')
    });
    if present.any(b"'") {
        t = quote_space(t);
    }
    t = pad(t, &present, b"*", b"*", |s| one(s, |c| c == '*'));
    // PARENS_BRACKETS: `[\]\[\(\)\{\}\<\>]` -> ` \g<0> `.
    t = pad(t, &present, b"[](){}<>", b"[](){}<>", |s| {
        one(s, |c| "[](){}<>".contains(c))
    });
    if present.double_dash {
        t = replace_literal(t, "--", " -- ");
    }
    // ENDING_QUOTES 1: `([»”’])` -> ` \1 `.
    let close_quotes = |t| {
        pad(t, &present, CLOSE_QUOTE_BYTES, b"\xc2\xe2", |s| {
            one(s, |c| matches!(c, '»' | '”' | '’'))
        })
    };
    // Without `'` (nor `"`, which would add one), the rest only pads closing quotes: the other
    // rules need a `'`, or a contraction word, which no rule makes or cuts (`İ`, `ı`, `ſ`
    // aside: they fold to ASCII letters); and splitting on whitespace needs no collapsing
    // first.
    let quotes_or_contractions = present.any(b"'\xc4\xc5")
        || (present.double_nmt && contraction_words().is_match(text.as_bytes()));
    if !quotes_or_contractions {
        t = close_quotes(t);
        py_split(&t, emit);
        return;
    }
    let mut padded = String::with_capacity(t.len() + 2);
    padded.push(' ');
    padded.push_str(&t);
    padded.push(' ');
    t = close_quotes(padded);
    t = replace_literal(t, "''", " '' ");
    t = replace_literal(t, "\"", " '' ");
    t = collapse_spaces(&t);
    if present.any(b"'") {
        t = clitics_short(t);
        t = clitics_long(t);
    }
    // Most sentences hold no contraction: one search for all of them (ASCII case folding;
    // the non-ASCII folds `İ`, `ı`, `ſ` start with byte 0xC4 or 0xC5) decides.
    if present.any(b"\xc4\xc5") || contraction_words().is_match(t.as_bytes()) {
        for c in CONTRACTIONS2.iter().chain(&CONTRACTIONS3) {
            t = c.apply(t);
        }
    }
    py_split(&t, emit);
}

fn first(s: &str) -> Option<char> {
    s.chars().next()
}

/// The length of the run of `b` starting `s`.
fn run_of(s: &str, b: u8) -> usize {
    s.bytes().take_while(|&x| x == b).count()
}

/// The length of the first character of `s` if it is in `class`, else 0.
fn one(s: &str, class: impl Fn(char) -> bool) -> usize {
    first(s).filter(|&c| class(c)).map_or(0, char::len_utf8)
}

/// `regex.sub(pattern, r" \g<0> ", text)` for a pattern whose match at the start of a string
/// has the length `unit` gives (0: no match): each match surrounded by spaces, left to right.
/// Skipped when none of `triggers` is present; a match can only start at a byte of `starts`
/// (ASCII bytes or UTF-8 lead bytes, so always at a character boundary).
fn pad(
    text: String,
    present: &Bytes,
    triggers: &[u8],
    starts: &[u8],
    unit: impl Fn(&str) -> usize,
) -> String {
    if !present.any(triggers) {
        return text;
    }
    let mut is_start = [false; 256];
    for &b in starts {
        is_start[b as usize] = true;
    }
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_start[bytes[i] as usize] {
            i += 1;
            continue;
        }
        let n = unit(&text[i..]);
        if n == 0 {
            i += 1;
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        o.push_str(&text[copied..i]);
        o.push(' ');
        o.push_str(&text[i..i + n]);
        o.push(' ');
        i += n;
        copied = i;
    }
    match out {
        None => text,
        Some(mut o) => {
            o.push_str(&text[copied..]);
            o
        }
    }
}

/// PUNCTUATION 2 (`([:,])([^\d])` -> ` \1 \2`), then PUNCTUATION 3 (`([:,])$` -> ` \1 `):
/// each `:` or `,` followed by a non-digit is padded (that character is part of the match, so
/// it cannot start the next one), then a final `:` or `,` (one before a final `\n` was padded
/// by the first rule, so `$` is the end of the text).
fn colons(text: String) -> String {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = memchr::memchr2(b':', b',', &bytes[i..]) {
        let at = i + found;
        let Some(next) = text[at + 1..].chars().next() else {
            break;
        };
        i = at + 1;
        if is_digit(next) {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        o.push_str(&text[copied..at]);
        o.push(' ');
        o.push(char::from(bytes[at]));
        o.push(' ');
        o.push(next);
        i += next.len_utf8();
        copied = i;
    }
    let mut t = match out {
        None => text,
        Some(mut o) => {
            o.push_str(&text[copied..]);
            o
        }
    };
    if let Some(last @ (':' | ',')) = t.chars().next_back() {
        t.pop();
        t.push(' ');
        t.push(last);
        t.push(' ');
    }
    t
}

/// The class after the period in PUNCTUATION 1: `[\]\)}>"\'»”’ ]`.
fn is_closing_or_space(c: char) -> bool {
    matches!(
        c,
        ']' | ')' | '}' | '>' | '"' | '\'' | '»' | '”' | '’' | ' '
    )
}

/// The class after the period in PUNCTUATION 7: `[\]\)}>"\']`.
fn is_closing_ascii(c: char) -> bool {
    matches!(c, ']' | ')' | '}' | '>' | '"' | '\'')
}

/// PUNCTUATION 1 (`([^\.])(\.)([\]\)}>"\'»”’ ]*+)\s*$` -> `\1 \2 \3 `, `spaced`) and
/// PUNCTUATION 7 (`([^\.])(\.)([\]\)}>"\']*)\s*$` -> `\1 \2\3 `): the final period, followed
/// only by closing characters (`closing`) and whitespace. No `.` can follow the matched one, so
/// it is the last `.` of the text, and the match is unique. Rewritten in place: only the short
/// tail after the period moves.
fn final_period(mut text: String, closing: fn(char) -> bool, spaced: bool) -> String {
    let Some(dot) = text.rfind('.') else {
        return text;
    };
    if text[..dot].chars().next_back().is_none_or(|c| c == '.') {
        return text;
    }
    let after = &text[dot + 1..];
    let run = after
        .char_indices()
        .find(|&(_, c)| !closing(c))
        .map_or(after.len(), |(i, _)| i);
    if !after[run..].chars().all(is_space) {
        return text;
    }
    // text[..dot] + " ." + (" " if spaced) + the closing run + " "
    text.truncate(dot + 1 + run);
    text.insert(dot, ' ');
    if spaced {
        text.insert(dot + 2, ' ');
    }
    text.push(' ');
    text
}

/// For each byte: whether it can start a White_Space character (the ASCII spaces, and the
/// lead bytes of U+0085, U+00A0, U+1680, U+2000..U+205F and U+3000); the others are skipped
/// without decoding.
const SPACE_LEADS: [bool; 256] = {
    let mut t = [false; 256];
    let leads = [
        b'\t', b'\n', 0x0b, 0x0c, b'\r', b' ', 0xc2, 0xe1, 0xe2, 0xe3,
    ];
    let mut i = 0;
    while i < leads.len() {
        t[leads[i] as usize] = true;
        i += 1;
    }
    t
};

/// [`SPACE_LEADS`] and U+001C..U+001F: the bytes that can start a Python whitespace character.
const PY_SPACE_LEADS: [bool; 256] = {
    let mut t = SPACE_LEADS;
    let mut b = 0x1c;
    while b <= 0x1f {
        t[b] = true;
        b += 1;
    }
    t
};

/// Python's `text.split()`: each run of non-whitespace to `emit`, in order. A word's end is
/// looked for 8 bytes at a time (`space_candidates`); only the bytes that can start a
/// whitespace character are looked at one by one.
pub fn py_split(text: &str, mut emit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        while let Some(n) = py_space_at(text, i) {
            i += n;
        }
        if i >= bytes.len() {
            return;
        }
        let end = word_end(text, i + 1);
        emit(&text[i..end]);
        i = end;
    }
}

/// The length of the Python whitespace character at `i` of `text`, if there is one (None at the
/// end of the text too).
#[inline(always)]
fn py_space_at(text: &str, i: usize) -> Option<usize> {
    let &b = text.as_bytes().get(i)?;
    if !PY_SPACE_LEADS[b as usize] {
        return None;
    }
    if b < 0x80 {
        return Some(1);
    }
    let c = text[i..].chars().next().expect("a character boundary");
    is_py_space(c).then(|| c.len_utf8())
}

/// Where the first Python whitespace character at or after `i` starts (the text's length if
/// none does); `i` is a character boundary or a continuation byte (which starts nothing).
#[inline(always)]
fn word_end(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut candidates =
            space_candidates(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        while candidates != 0 {
            let at = i + candidates.trailing_zeros() as usize / 8;
            if py_space_at(text, at).is_some() {
                return at;
            }
            candidates &= candidates - 1;
        }
        i += 8;
    }
    while i < bytes.len() && py_space_at(text, i).is_none() {
        i += 1;
    }
    i
}

/// The high bit of each byte of `x` (8 bytes of text, the first in the low byte) that can start
/// a Python whitespace character ([`PY_SPACE_LEADS`]), and of some that cannot: every byte up to
/// 0x20, 0xc2, and 0xe0 to 0xe3. Each test is exact within its byte (no carry or borrow crosses
/// into the next), so no byte of [`PY_SPACE_LEADS`] is missed.
#[inline(always)]
fn space_candidates(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // bytes that are zero: (b & 0x7f) + 0x7f sets the high bit unless b & 0x7f is 0, and the
    // byte's own high bit is or-ed in
    let zero = |y: u64| !(((y & LOW7) + LOW7) | y) & HIGH;
    // ASCII bytes below 0x21: (b | 0x80) - 0x21 keeps its high bit unless b & 0x7f < 0x21
    let low = !((x | HIGH) - 0x21 * ONES) & !x & HIGH;
    low | zero(x ^ (0xc2 * ONES)) | zero((x & (0xfc * ONES)) ^ (0xe0 * ONES))
}

/// ENDING_QUOTES 4: `\s+` -> ` ` (`regex`'s `\s`: White_Space), copying the text between
/// spaces by slices.
fn collapse_spaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut start = 0; // of the current run of non-space characters
    let mut in_space = false;
    let mut i = 0;
    while i < bytes.len() {
        if !SPACE_LEADS[bytes[i] as usize] {
            if in_space {
                start = i;
                in_space = false;
            }
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().expect("a character boundary");
        let space = is_space(c);
        if space && !in_space {
            out.push_str(&text[start..i]);
            out.push(' ');
        } else if !space && in_space {
            start = i;
        }
        in_space = space;
        i += c.len_utf8();
    }
    if !in_space {
        out.push_str(&text[start..]);
    }
    out
}

/// STARTING_QUOTES 5: `(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)` -> `\1 ` (`regex`
/// module classes): a space after an apostrophe that opens a word, unless it starts a clitic.
fn opening_apostrophes(text: String) -> String {
    let mut out: Option<String> = None;
    let mut copied = 0;
    for i in memchr::memchr_iter(b'\'', text.as_bytes()) {
        if text[..i].chars().next_back().is_some_and(is_word) {
            continue;
        }
        let rest = &text[i + 1..];
        if rest.chars().next().is_some_and(is_word) && !starts_clitic(rest) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 8));
            o.push_str(&text[copied..=i]);
            o.push(' ');
            copied = i + 1;
        }
    }
    finish(text, out, copied)
}

/// The text a left-to-right rewrite made: `out` (`text[..copied]` rewritten) and the rest of
/// `text`, or `text` itself when nothing was rewritten.
fn finish(text: String, out: Option<String>, copied: usize) -> String {
    match out {
        None => text,
        Some(mut o) => {
            o.push_str(&text[copied..]);
            o
        }
    }
}

/// `regex.sub(r"([^' ...])(<part>) ", r"\1 \2 ", text)` for the parts that `part_at` finds: for
/// each `'` (left to right) it gives the part around it (its start and end, the end followed
/// by a space) or None. The character before the part must not be one of `excluded`, nor lie
/// in the previous match (whose final space is consumed): then a space goes before the part.
fn space_before_parts(
    text: String,
    excluded: &[char],
    part_at: impl Fn(&[u8], usize) -> Option<(usize, usize)>,
) -> String {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // end of the last match
    for k in memchr::memchr_iter(b'\'', bytes) {
        let Some((start, end)) = part_at(bytes, k) else {
            continue;
        };
        if start < copied || bytes.get(end) != Some(&b' ') {
            continue;
        }
        let Some(before) = text[copied..start].chars().next_back() else {
            continue;
        };
        if excluded.contains(&before) {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        o.push_str(&text[copied..start]);
        o.push(' ');
        o.push_str(&text[start..=end]);
        copied = end + 1;
    }
    finish(text, out, copied)
}

/// STARTING_QUOTES 4: `([ (\[{<])("|'')` -> `\1 `` `.
fn quote_after_opener(text: String) -> String {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let quote = match (bytes[i], &bytes[i + 1..]) {
            (b' ' | b'(' | b'[' | b'{' | b'<', [b'"', ..]) => 1,
            (b' ' | b'(' | b'[' | b'{' | b'<', [b'\'', b'\'', ..]) => 2,
            _ => {
                i += 1;
                continue;
            }
        };
        let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        o.push_str(&text[copied..=i]);
        o.push_str(" `` ");
        i += 1 + quote;
        copied = i;
    }
    finish(text, out, copied)
}

/// PUNCTUATION 9: `([^'])' ` -> `\1 ' `.
fn quote_space(text: String) -> String {
    space_before_parts(text, &['\''], |_, k| Some((k, k + 1)))
}

/// ENDING_QUOTES 5: `([^' ])('[sS]|'[mM]|'[dD]|') ` -> `\1 \2 `.
fn clitics_short(text: String) -> String {
    space_before_parts(text, &['\'', ' '], |b, k| match b.get(k + 1) {
        Some(b's' | b'S' | b'm' | b'M' | b'd' | b'D') if b.get(k + 2) == Some(&b' ') => {
            Some((k, k + 2))
        }
        _ => Some((k, k + 1)),
    })
}

/// ENDING_QUOTES 6: `([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ` -> `\1 \2 `.
fn clitics_long(text: String) -> String {
    space_before_parts(text, &['\'', ' '], |b, k| {
        let after = &b[k + 1..];
        if matches!(
            after,
            [b'l', b'l', ..] | [b'L', b'L', ..] | [b'r' | b'v', b'e', ..] | [b'R' | b'V', b'E', ..]
        ) {
            return Some((k, k + 3));
        }
        match (k.checked_sub(1).map(|j| b[j]), after.first()) {
            (Some(b'n'), Some(b't')) | (Some(b'N'), Some(b'T')) => Some((k - 1, k + 2)),
            _ => None,
        }
    })
}

/// `(?i)(?:re|ve|ll|m|t|s|d|n)\b` matches at the start of `rest` (which starts with `\w`).
fn starts_clitic(rest: &str) -> bool {
    let mut chars = rest.chars();
    let fold = |c: Option<char>| match c {
        Some('\u{17f}') => Some('s'),
        Some(c) => Some(c.to_ascii_lowercase()),
        None => None,
    };
    let first = fold(chars.next());
    let second = chars.clone().next();
    let ends_word = |c: Option<char>| !c.is_some_and(is_word);
    match first {
        Some('m' | 't' | 's' | 'd' | 'n') => ends_word(second),
        Some(f @ ('r' | 'v' | 'l')) => {
            let want = match f {
                'r' | 'v' => 'e',
                _ => 'l',
            };
            fold(second) == Some(want) && ends_word(chars.nth(1))
        }
        _ => false,
    }
}

/// One MacIntyre contraction of NLTK (`CONTRACTIONS2`, `CONTRACTIONS3`), compiled there with the
/// standard `re` module and replaced by ` \1 \2 `.
struct Contraction {
    /// A literal space before the first part (CONTRACTIONS3), consumed by the match.
    space_before: bool,
    first: &'static str,
    second: &'static str,
    /// The match must be followed by `re`'s `\s` (`(?=\s)`) instead of `\b`.
    space_after: bool,
}

const fn contraction(first: &'static str, second: &'static str) -> Contraction {
    Contraction {
        space_before: false,
        first,
        second,
        space_after: false,
    }
}

/// `(?i)\b(can)(not)\b` ... `(?i)\b(wan)(na)(?=\s)`.
const CONTRACTIONS2: [Contraction; 8] = [
    contraction("can", "not"),
    contraction("d", "'ye"),
    contraction("gim", "me"),
    contraction("gon", "na"),
    contraction("got", "ta"),
    contraction("lem", "me"),
    contraction("more", "'n"),
    Contraction {
        space_after: true,
        ..contraction("wan", "na")
    },
];

/// `(?i) ('t)(is)\b`, `(?i) ('t)(was)\b`.
const CONTRACTIONS3: [Contraction; 2] = [
    Contraction {
        space_before: true,
        ..contraction("'t", "is")
    },
    Contraction {
        space_before: true,
        ..contraction("'t", "was")
    },
];

/// `re`'s `(?i)` equality of a pattern character (ASCII lower case or `'`) and a text character.
fn re_ci_eq(pattern: char, c: char) -> bool {
    c.to_ascii_lowercase() == pattern
        || (pattern == 'i' && matches!(c, '\u{130}' | '\u{131}'))
        || (pattern == 's' && c == '\u{17f}')
}

/// The byte length of the text at the start of `text` matching `literal` case-insensitively.
fn match_ci(text: &str, literal: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    for p in literal.chars() {
        let (_, c) = chars.next()?;
        if !re_ci_eq(p, c) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| i))
}

impl Contraction {
    /// The match at byte `at` of `text`, if any: the lengths of the two parts.
    fn match_at(&self, text: &str, at: usize, prev: Option<char>) -> Option<(usize, usize)> {
        let rest = &text[at..];
        if !self.space_before && prev.is_some_and(is_re_word) {
            return None; // no \b before
        }
        let a = match_ci(rest, self.first)?;
        let b = match_ci(&rest[a..], self.second)?;
        let next = rest[a + b..].chars().next();
        let ok = if self.space_after {
            next.is_some_and(is_py_space)
        } else {
            !next.is_some_and(is_re_word)
        };
        ok.then_some((a, b))
    }

    fn apply(&self, text: String) -> String {
        let bytes = text.as_bytes();
        // Candidate starts: the first letter (either case), or the space before `'`.
        let candidates: Box<dyn Iterator<Item = usize>> = if self.space_before {
            Box::new(
                memchr::memchr_iter(b'\'', bytes)
                    .filter(|&i| i > 0 && bytes[i - 1] == b' ')
                    .map(|i| i - 1),
            )
        } else {
            let lead = self.first.as_bytes()[0];
            Box::new(memchr::memchr2_iter(lead, lead.to_ascii_uppercase(), bytes))
        };
        let mut out: Option<String> = None;
        let mut copied = 0; // text[..copied] is in `out`
        for i in candidates {
            if i < copied {
                continue;
            }
            let prev = text[..i].chars().next_back();
            let at = i + usize::from(self.space_before);
            if let Some((a, b)) = self.match_at(&text, at, prev) {
                let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
                o.push_str(&text[copied..i]);
                o.push(' ');
                o.push_str(&text[at..at + a]);
                o.push(' ');
                o.push_str(&text[at + a..at + a + b]);
                o.push(' ');
                copied = at + a + b;
            }
        }
        match out {
            None => text,
            Some(mut o) => {
                o.push_str(&text[copied..]);
                o
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::nltk::random_texts::random_texts;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize(text, |t| out.push(t.to_string()));
        out
    }

    fn rule_words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize_rules(text, |t| out.push(t.to_string()));
        out
    }

    fn segment_words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize_segments(text, |t| out.push(t.to_string()));
        out
    }

    #[test]
    fn plain_is_a_word_character_of_both_pythons_without_folds_to_ascii() {
        for c in ('\0'..='\u{10ffff}').filter(|c| !c.is_ascii()) {
            let expected = is_re_word(c) && is_word(c) && !matches!(c, 'İ' | 'ı' | 'ſ');
            assert_eq!(is_plain(c), expected, "{c:?}");
        }
        // a combining mark (a word boundary to Python's `re`) and a superscript digit (not a
        // word character to the `regex` module) are not plain
        assert!(!is_plain('\u{940}') && !is_plain('\u{301}') && !is_plain('²'));
    }

    #[test]
    fn segments_are_whole_sentences() {
        // plain characters and spaces beside every character a rule looks at
        let alphabet = [
            "a", "é", "1", " ", "'", "\"", ".", ",", ";", ":", "s", "(", "`", "-", "?", "!", "\t",
            "\u{a0}", "ı", "wanna", "Cannot", "n't", "'t", "is", "»", "“", "—", ")", "\u{940}",
            "²",
        ];
        for text in all_strings(&alphabet, 4) {
            assert_eq!(segment_words(&text), rule_words(&text), "{text:?}");
        }
        // and longer sentences, drawn from the same pieces
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..12 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            assert_eq!(segment_words(&text), rule_words(&text), "{text:?}");
        }
    }

    #[test]
    fn parts_split_at_cuts_give_the_tokens_of_the_whole() {
        let sentence = "Dr. Watson's here, isn't he? \"Yes\" -- gonna é (x) and so on...\t ";
        let text = sentence.repeat(40);
        for size in [1, 7, 64, 300, 5_000] {
            let parts = split_at_cuts(&text, size);
            assert!(parts.len() > 1 || size > text.len());
            assert!(parts[..parts.len() - 1].iter().all(|p| p.len() >= size));
            let mut joined = Vec::new();
            for p in &parts {
                tokenize(p, |t| joined.push(t.to_string()));
            }
            assert_eq!(joined, rule_words(&text), "size {size}");
            let mut split = Vec::new();
            for p in &parts {
                py_split(p, |t| split.push(t.to_string()));
            }
            assert_eq!(split, text.split_whitespace().collect::<Vec<_>>());
        }
    }

    #[test]
    fn nltk_docstring_example() {
        let s = "Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\n\
                 two of them.\nThanks.";
        assert_eq!(
            words(s),
            [
                "Good", "muffins", "cost", "$", "3.88", "(", "roughly", "3,36", "euros", ")", "in",
                "New", "York.", "Please", "buy", "me", "two", "of", "them.", "Thanks", "."
            ]
        );
    }

    /// Every string of up to `len` characters over `alphabet`.
    fn all_strings(alphabet: &[&str], len: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |a| format!("{s}{a}")))
                .collect();
            out.extend(last.iter().cloned());
        }
        out
    }

    /// NLTK's pattern, its replacement, and the scan that stands for them.
    type Rule = (&'static str, &'static str, fn(String) -> String);

    /// Each rule's scan gives what its pattern's `replace_all` gives, on every string of up to
    /// `len` characters over `alphabet`.
    fn assert_rules_are_patterns(rules: &[Rule], alphabet: &[&str], len: usize) {
        for &(pattern, replacement, rule) in rules {
            let regex = regex::Regex::new(pattern).unwrap();
            for text in all_strings(alphabet, len) {
                let expected = regex.replace_all(&text, replacement).into_owned();
                assert_eq!(rule(text.clone()), expected, "{pattern} on {text:?}");
            }
        }
    }

    #[test]
    fn hand_coded_rules_are_nltks_patterns() {
        let alphabet = [
            "'", "\"", " ", "s", "S", "n", "N", "t", "T", "l", "L", "r", "E", "(", "<", "é", "\n",
        ];
        let rules: [Rule; 4] = [
            (r#"([ (\[{<])("|'')"#, "${1} `` ", quote_after_opener),
            (r"([^'])' ", "${1} ' ", quote_space),
            (
                r"([^' ])('[sS]|'[mM]|'[dD]|') ",
                "${1} ${2} ",
                clitics_short,
            ),
            (
                r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ",
                "${1} ${2} ",
                clitics_long,
            ),
        ];
        assert_rules_are_patterns(&rules, &alphabet, 4);
    }

    #[test]
    fn final_period_is_nltks_patterns() {
        let alphabet = [".", "a", " ", "\n", ")", "'", "»", "\u{a0}"];
        let rules: [Rule; 2] = [
            (
                r#"([^\.])(\.)([\]\)}>"\'»”’ ]*)\s*$"#,
                "${1} ${2} ${3} ",
                |t| final_period(t, is_closing_or_space, true),
            ),
            (r#"([^\.])(\.)([\]\)}>"\']*)\s*$"#, "${1} ${2}${3} ", |t| {
                final_period(t, is_closing_ascii, false)
            }),
        ];
        assert_rules_are_patterns(&rules, &alphabet, 5);
    }

    #[test]
    fn py_split_is_str_split() {
        let split = |text: &str| {
            let mut out = Vec::new();
            py_split(text, |w| out.push(w.to_string()));
            out
        };
        // the Python spaces of each lead byte, characters sharing those lead bytes, ASCII
        let alphabet = [
            " ", "\n", "\x1c", "\x1f", "\u{85}", "\u{a0}", "\u{84}", "\u{a1}", "\u{1680}",
            "\u{2000}", "\u{2029}", "\u{200b}", "\u{3000}", "\u{3001}", "a", "é",
        ];
        for text in all_strings(&alphabet, 3) {
            let expected: Vec<&str> = text.split(is_py_space).filter(|w| !w.is_empty()).collect();
            assert_eq!(split(&text), expected, "{text:?}");
        }
        // longer strings of the same pieces, so that words and spaces fall at every place of the
        // 8-byte steps (and across them)
        for text in random_texts(&alphabet, 20_000) {
            let expected: Vec<&str> = text.split(is_py_space).filter(|w| !w.is_empty()).collect();
            assert_eq!(split(&text), expected, "{text:?}");
        }
        // every character: those that are Python spaces split, the others do not, also after
        // and within a run of 8 bytes or more
        for c in (0..=0x10_ffff_u32).filter_map(char::from_u32) {
            let text = format!("x{c}y");
            let long = format!("wxyz_abc{c}defghij{c}");
            let expected_long = if is_py_space(c) {
                vec!["wxyz_abc", "defghij"]
            } else {
                vec![&*long]
            };
            assert_eq!(split(&long), expected_long, "{c:?}");
            let expected = if is_py_space(c) {
                vec!["x", "y"]
            } else {
                vec![&*text]
            };
            assert_eq!(split(&text), expected, "{c:?}");
        }
    }

    #[test]
    fn space_candidates_marks_its_bytes_only() {
        let candidate = |b: u8| b <= 0x20 || b == 0xc2 || (0xe0..=0xe3).contains(&b);
        for b in 0..=255u8 {
            assert!(!PY_SPACE_LEADS[b as usize] || candidate(b), "{b:#x}");
            // at each place of the word, beside every other byte value
            for at in 0..8 {
                for other in 0..=255u8 {
                    let mut bytes = [other; 8];
                    bytes[at] = b;
                    let expected = bytes.iter().enumerate().fold(0u64, |m, (k, &x)| {
                        m | (u64::from(candidate(x)) << (8 * k + 7))
                    });
                    assert_eq!(
                        space_candidates(u64::from_le_bytes(bytes)),
                        expected,
                        "{bytes:x?}"
                    );
                }
            }
        }
    }

    #[test]
    fn collapse_spaces_as_regex_s_plus() {
        assert_eq!(collapse_spaces(" a \t\n b\x1c  c "), " a b\x1c c ");
        // every White_Space character, and characters sharing their lead bytes
        let spaces: String = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect();
        assert_eq!(collapse_spaces(&format!("x{spaces}y")), "x y");
        assert_eq!(
            collapse_spaces("\u{84}\u{a1}\u{1681}\u{2010}\u{3001}"),
            "\u{84}\u{a1}\u{1681}\u{2010}\u{3001}"
        );
        assert_eq!(collapse_spaces("a\u{3000}\u{a0}b é"), "a b é");
        assert_eq!(collapse_spaces(""), "");
    }

    #[test]
    fn quotes_and_contractions() {
        assert_eq!(
            words("\"I cannot,\" she said, 'wanna go?' 'Tis"),
            [
                "``", "I", "can", "not", ",", "''", "she", "said", ",", "'", "wan", "na", "go",
                "?", "'", "'", "Tis"
            ]
        );
        // no apostrophe: found through the doubled n, m or t of every such word
        assert_eq!(
            words("I GoNNa gotTa go, LeMme see"),
            ["I", "GoN", "Na", "got", "Ta", "go", ",", "LeM", "me", "see"]
        );
        assert_eq!(
            words("don't 'em GİMME"),
            ["do", "n't", "'", "em", "GİM", "ME"]
        );
    }
}
