//! The text cleaning that `fastppl.text.clean_text` defines, for text the core reads itself
//! (files handed over as UTF-8 bytes): line ends as Python's text mode reads them, lines that
//! start with given prefixes dropped, and lowercasing.
//!
//! Lowercasing is Unicode's full lowercase mapping with the final-sigma rule, as Python's
//! `str.lower` does; both follow their own Unicode tables (Python 3.11's are Unicode 14, Rust's
//! newer), so characters that got a lowercase form after Unicode 14 can differ, as for the
//! tokenizer's character classes.

use std::borrow::Cow;

/// `text` with `"\r\n"` and `"\r"` read as `"\n"` (Python's universal newlines).
pub fn translate_newlines(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` without the lines that start with any of `prefixes` (lines end at `"\n"`, which a
/// kept line keeps), then lowercased when `lowercase`; prefixes are compared before
/// lowercasing. Borrows `text` when nothing changes.
pub fn clean_text<'a>(text: &'a str, prefixes: &[String], lowercase: bool) -> Cow<'a, str> {
    let kept = if prefixes.is_empty() {
        Cow::Borrowed(text)
    } else {
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if !prefixes.iter().any(|p| line.starts_with(p.as_str())) {
                out.push_str(line);
            }
        }
        Cow::Owned(out)
    };
    if lowercase {
        Cow::Owned(kept.to_lowercase())
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn drops_prefixed_lines_and_keeps_the_rest_as_they_were() {
        let text = "% header\n# Capítulo I\nEra uma vez.\n#x";
        assert_eq!(
            clean_text(text, &prefixes(&["#", "%"]), false),
            "Era uma vez.\n"
        );
        assert_eq!(clean_text("a\n\nb", &prefixes(&["#"]), false), "a\n\nb");
        // prefixes are compared before lowercasing
        assert_eq!(clean_text("Ab\nab\n", &prefixes(&["a"]), true), "ab\n");
    }

    #[test]
    fn borrows_when_nothing_changes() {
        assert!(matches!(clean_text("a\nb", &[], false), Cow::Borrowed(_)));
        assert!(matches!(translate_newlines("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn lowercases_as_python_does() {
        // full mappings (one character to two) and the final sigma, as str.lower
        assert_eq!(clean_text("İ ΟΔΟΣ ΟΔΟΣ.", &[], true), "i\u{307} οδος οδος.");
        assert_eq!(clean_text("ΣΑ Σ", &[], true), "σα σ");
    }

    #[test]
    fn newlines_as_python_text_mode() {
        assert_eq!(translate_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
    }
}
