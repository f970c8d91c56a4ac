//! The character classes of the Python code being ported, which differ from Rust's own.
//!
//! NLTK 3.10.4 compiles most tokenizer patterns with the third-party `regex` module, whose
//! Unicode `\w`, `\d` and `\s` follow UTS#18 as the `regex` crate does (`\s` is White_Space);
//! the contraction patterns use the standard `re` module, whose `\w` is `str.isalnum()` plus `_`
//! (letters and numbers, but no combining marks); `str.split()`, `str.strip()` and
//! `str.isspace()` also count U+001C..U+001F as whitespace. Each class here is named after the
//! Python construct it reproduces.

use std::sync::OnceLock;

/// A set of code points, with an ASCII table in front of sorted ranges.
struct CharClass {
    ascii: [bool; 128],
    ranges: Vec<(char, char)>,
}

impl CharClass {
    /// The class of a regex-syntax character class pattern (`\w`, `[\pL\pN_]` ...).
    fn from_pattern(pattern: &str) -> Self {
        use regex_syntax::hir::{Class, HirKind};
        let hir = regex_syntax::Parser::new()
            .parse(pattern)
            .expect("a valid class pattern");
        let ranges: Vec<(char, char)> = match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
            _ => unreachable!("{pattern} is not a Unicode class"),
        };
        let mut ascii = [false; 128];
        for (i, slot) in ascii.iter_mut().enumerate() {
            let c = char::from(i as u8);
            *slot = ranges.iter().any(|&(a, b)| a <= c && c <= b);
        }
        CharClass { ascii, ranges }
    }

    #[inline]
    fn contains(&self, c: char) -> bool {
        if c.is_ascii() {
            return self.ascii[c as usize];
        }
        self.ranges
            .binary_search_by(|&(a, b)| {
                if b < c {
                    std::cmp::Ordering::Less
                } else if a > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }
}

fn class(cell: &'static OnceLock<CharClass>, pattern: &str) -> &'static CharClass {
    cell.get_or_init(|| CharClass::from_pattern(pattern))
}

/// `\w` of Python's `regex` module (UTS#18: alphabetic, marks, decimal digits, connector
/// punctuation, join controls).
#[inline]
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    regex_syntax::is_word_character(c)
}

/// `\d` of Python's `regex` module: decimal digits (Nd).
#[inline]
pub fn is_digit(c: char) -> bool {
    static DIGITS: OnceLock<CharClass> = OnceLock::new();
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    class(&DIGITS, r"\d").contains(c)
}

/// `[^\W\d]` of Python's `regex` module: a word character that is not a decimal digit.
#[inline]
pub fn is_word_not_digit(c: char) -> bool {
    is_word(c) && !is_digit(c)
}

/// `\s` of Python's `regex` module: Unicode White_Space (not U+001C..U+001F).
#[inline]
pub fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// Python's `str.isspace()`, `str.split()` and `str.strip()` whitespace: White_Space plus the
/// separators U+001C..U+001F.
#[inline]
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `\w` of Python's standard `re` module: `str.isalnum()` (letters and numbers) or `_`.
#[inline]
pub fn is_re_word(c: char) -> bool {
    static RE_WORD: OnceLock<CharClass> = OnceLock::new();
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    class(&RE_WORD, r"[\p{L}\p{N}_]").contains(c)
}

/// Python's `str.isupper()` of one character.
#[inline]
pub fn is_py_upper(c: char) -> bool {
    c.is_uppercase()
}

/// Python's `str.islower()` of one character.
#[inline]
pub fn is_py_lower(c: char) -> bool {
    c.is_lowercase()
}

/// The characters of `string.whitespace` (ASCII only), which Punkt uses to find the word before
/// a candidate sentence end.
#[inline]
pub fn is_ascii_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Python's `str.rstrip()`.
pub fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
}

/// Python's `str.strip()` is empty.
pub fn py_is_blank(s: &str) -> bool {
    s.chars().all(is_py_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_python() {
        assert!(is_word('é') && is_word('\u{0901}') && !is_word('²'));
        assert!(is_re_word('²') && is_re_word('½') && !is_re_word('\u{0901}'));
        assert!(is_digit('٣') && !is_digit('²'));
        assert!(is_py_space('\u{1c}') && !is_space('\u{1c}') && is_space('\u{3000}'));
        assert!(!is_space('\u{200b}'));
        assert_eq!(py_rstrip("ab \u{1f}\n"), "ab");
    }
}
