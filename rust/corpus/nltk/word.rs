//! NLTK's `NLTKWordTokenizer` (`nltk/tokenize/destructive.py`, NLTK 3.10.4): the improved
//! Treebank rules that `word_tokenize` applies to each sentence.
//!
//! The rules are the same substitutions, in the same order, on the whole string: starting
//! quotes, punctuation, brackets, double dashes, ending quotes, contractions; then the string is
//! split on Python whitespace. Those that the `regex` crate expresses exactly are `regex`
//! patterns; the others are hand-coded, each beside the NLTK pattern it replaces:
//! - the opening-apostrophe rule (a lookbehind and two lookaheads);
//! - the contractions, compiled by NLTK with the standard `re` module: `\b` there uses
//!   `str.isalnum()` (not UTS#18 `\w`), and `(?i)` lets `i` match `İ` and `ı`, `s` match `ſ`;
//! - `$`, which in Python also matches before a final `\n` (for each rule below the final `\n`
//!   is consumed by a greedy `\s*` or cannot be there, so `\z` is equivalent).

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

use super::chars::{is_py_space, is_re_word, is_word};

/// One `regex.sub(pattern, replacement, text)` of NLTK.
struct Rule {
    pattern: Regex,
    replacement: &'static str,
}

impl Rule {
    fn new(pattern: &str, replacement: &'static str) -> Self {
        Rule {
            pattern: Regex::new(pattern).expect("a valid NLTK rule"),
            replacement,
        }
    }

    fn apply(&self, text: String) -> String {
        match self.pattern.replace_all(&text, self.replacement) {
            Cow::Borrowed(_) => text,
            Cow::Owned(s) => s,
        }
    }
}

/// The compiled rules, in NLTK's order, around the hand-coded ones.
struct Rules {
    /// STARTING_QUOTES 1: `([«“‘„]|[`]+)` -> ` \1 `.
    open_quotes: Rule,
    /// STARTING_QUOTES 4: `([ \(\[{<])(\"|\'{2})` -> `\1 `` `.
    quote_after_space: Rule,
    /// PUNCTUATION 1..10 (the first and the seventh end with `\s*$`).
    punctuation: [Rule; 10],
    /// PARENS_BRACKETS.
    brackets: Rule,
    /// ENDING_QUOTES 1: `([»”’])` -> ` \1 `.
    close_quotes: Rule,
    /// ENDING_QUOTES 4: `\s+` -> ` `.
    spaces: Rule,
    /// ENDING_QUOTES 5 and 6: clitics (`'s`, `n't` ...).
    clitics: [Rule; 2],
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| Rules {
        open_quotes: Rule::new("([«“‘„]|`+)", " ${1} "),
        quote_after_space: Rule::new(r#"([ (\[{<])("|'')"#, "${1} `` "),
        punctuation: [
            // The possessive `*+` of NLTK gives the same match as `*` here (the class holds
            // no character `\s*$` could need back).
            Rule::new(r#"([^.])(\.)([\])}>"'»”’ ]*)\s*\z"#, "${1} ${2} ${3} "),
            Rule::new(r"([:,])([^\d])", " ${1} ${2}"),
            Rule::new(r"([:,])\z", " ${1} "),
            Rule::new(r"\.{2,}", " ${0} "),
            Rule::new(r"[;@#$%&]", " ${0} "),
            Rule::new("[\u{2012}-\u{2015}]", " ${0} "),
            Rule::new(r#"([^.])(\.)([\])}>"']*)\s*\z"#, "${1} ${2}${3} "),
            Rule::new(r"[?!]", " ${0} "),
            Rule::new(r"([^'])' ", "${1} ' "),
            Rule::new(r"[*]", " ${0} "),
        ],
        brackets: Rule::new(r"[\]\[(){}<>]", " ${0} "),
        close_quotes: Rule::new("([»”’])", " ${1} "),
        spaces: Rule::new(r"\s+", " "),
        clitics: [
            Rule::new(r"([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
            Rule::new(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
        ],
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
pub fn tokenize(text: &str, mut emit: impl FnMut(&str)) {
    let r = rules();
    let mut t = r.open_quotes.apply(text.to_string());
    if t.starts_with('"') {
        t.replace_range(..1, "``");
    }
    t = replace_literal(t, "``", " `` ");
    t = r.quote_after_space.apply(t);
    t = opening_apostrophes(t);
    for rule in &r.punctuation {
        t = rule.apply(t);
    }
    t = r.brackets.apply(t);
    t = replace_literal(t, "--", " -- ");
    let mut padded = String::with_capacity(t.len() + 2);
    padded.push(' ');
    padded.push_str(&t);
    padded.push(' ');
    t = r.close_quotes.apply(padded);
    t = replace_literal(t, "''", " '' ");
    t = replace_literal(t, "\"", " '' ");
    t = r.spaces.apply(t);
    for rule in &r.clitics {
        t = rule.apply(t);
    }
    for c in CONTRACTIONS2 {
        t = c.apply(t);
    }
    for c in CONTRACTIONS3 {
        t = c.apply(t);
    }
    for token in t.split(is_py_space).filter(|s| !s.is_empty()) {
        emit(token);
    }
}

/// STARTING_QUOTES 5: `(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)` -> `\1 ` (`regex`
/// module classes): a space after an apostrophe that opens a word, unless it starts a clitic.
fn opening_apostrophes(text: String) -> String {
    if !text.contains('\'') {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    for (i, c) in text.char_indices() {
        out.push(c);
        if c == '\'' && !prev.is_some_and(is_word) {
            let rest = &text[i + 1..];
            if rest.chars().next().is_some_and(is_word) && !starts_clitic(rest) {
                out.push(' ');
            }
        }
        prev = Some(c);
    }
    out
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
        let lead = if self.space_before {
            b' '
        } else {
            self.first.as_bytes()[0]
        };
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let mut copied = 0; // text[..copied] is in `out`
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.to_ascii_lowercase() == lead && i >= copied {
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
                    i = at + a + b;
                    copied = i;
                    continue;
                }
            }
            i += 1;
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

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize(text, |t| out.push(t.to_string()));
        out
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

    #[test]
    fn quotes_and_contractions() {
        assert_eq!(
            words("\"I cannot,\" she said, 'wanna go?' 'Tis"),
            [
                "``", "I", "can", "not", ",", "''", "she", "said", ",", "'", "wan", "na", "go",
                "?", "'", "'", "Tis"
            ]
        );
        assert_eq!(
            words("don't 'em GİMME"),
            ["do", "n't", "'", "em", "GİM", "ME"]
        );
    }
}
