//! The text cleaning that `fastppl.text.clean_text` defines, for text the core reads itself
//! (files handed over as UTF-8 bytes): line ends as Python's text mode reads them, lines that
//! start with given prefixes dropped, and lowercasing.
//!
//! Lowercasing is Unicode's full lowercase mapping with the final-sigma rule, as Python's
//! `str.lower` does; both follow their own Unicode tables (Python 3.11's are Unicode 14, Rust's
//! newer), so characters that got a lowercase form after Unicode 14 can differ, as for the
//! tokenizer's character classes.

use std::borrow::Cow;

use rayon::prelude::*;

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
///
/// Runs on all cores, on blocks of whole lines: a line is filtered on its own, and lowercasing
/// is the same on each line alone (its only context, the final sigma, looks at the letters
/// around a `Σ` and stops at a `"\n"`, neither cased nor case-ignorable).
pub fn clean_text<'a>(text: &'a str, prefixes: &[String], lowercase: bool) -> Cow<'a, str> {
    if prefixes.is_empty() && !lowercase {
        return Cow::Borrowed(text);
    }
    let blocks: Vec<String> = line_blocks(text, BLOCK_BYTES)
        .par_iter()
        .map(|block| clean_lines(block, prefixes, lowercase))
        .collect();
    Cow::Owned(blocks.concat())
}

/// Text bytes per block of lines cleaned by one task (at least; a block ends at a line end).
const BLOCK_BYTES: usize = 1 << 18;

/// `text` cut after a `"\n"` every `size` bytes or so.
fn line_blocks(text: &str, size: usize) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while rest.len() > size {
        let Some(end) = memchr::memchr(b'\n', &rest.as_bytes()[size..]) else {
            break;
        };
        let (block, after) = rest.split_at(size + end + 1);
        blocks.push(block);
        rest = after;
    }
    blocks.push(rest);
    blocks
}

/// [`clean_text`] of whole lines, on one thread: each kept line is copied (lowercased) once.
fn clean_lines(text: &str, prefixes: &[String], lowercase: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if prefixes.iter().any(|p| line.starts_with(p.as_str())) {
            continue;
        }
        if lowercase {
            push_lowercase(&mut out, line);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Appends `str::to_lowercase` of `text` to `out`, faster on text of mostly Latin letters: runs
/// of ASCII are lowercased as bytes, Latin-1 letters by their fixed offset, other characters by
/// `char::to_lowercase` (which is context-free); text holding a `Σ`, whose lowercase depends on
/// the letters around it, goes to `str::to_lowercase` whole.
fn push_lowercase(out: &mut String, text: &str) {
    if text.contains('Σ') {
        out.push_str(&text.to_lowercase());
        return;
    }
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let start = out.len();
        out.push_str(&rest[..ascii]);
        out[start..].make_ascii_lowercase();
        rest = &rest[ascii..];
        let Some(c) = rest.chars().next() else {
            break;
        };
        match c {
            // Latin-1's capitals À..Þ (but ×): their lowercase is 0x20 above
            '\u{c0}'..='\u{de}' if c != '\u{d7}' => {
                out.push(char::from_u32(c as u32 + 0x20).expect("a Latin-1 letter"));
            }
            '\u{80}'..='\u{ff}' => out.push(c),
            _ => out.extend(c.to_lowercase()),
        }
        rest = &rest[c.len_utf8()..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes(p: &[&str]) -> Vec<String> {
        p.iter().map(ToString::to_string).collect()
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
    fn blocks_of_whole_lines_clean_as_the_whole_text() {
        let text = "ΟΔΟΣ\n# x\nΣ.Σ\nAbc ΣΑΣ\n\n%\nend";
        let whole = clean_lines(text, &prefixes(&["#", "%"]), true);
        assert_eq!(whole, "οδος\nσ.ς\nabc σας\n\nend");
        for size in 0..text.len() + 2 {
            let blocks = line_blocks(text, size);
            assert_eq!(blocks.concat(), text);
            assert!(blocks[..blocks.len() - 1].iter().all(|b| b.ends_with('\n')));
            let cleaned: String = blocks
                .iter()
                .map(|b| clean_lines(b, &prefixes(&["#", "%"]), true))
                .collect();
            assert_eq!(cleaned, whole);
        }
    }

    #[test]
    fn lowercase_as_str_to_lowercase() {
        // every character, between letters (a text with a Σ, whose lowercase depends on them,
        // is lowercased by `str::to_lowercase` itself)
        for c in (0..=0x10_ffff_u32).filter_map(char::from_u32) {
            for text in [format!("A{c}b É{c}"), format!("ΣA{c}")] {
                let mut out = String::new();
                push_lowercase(&mut out, &text);
                assert_eq!(out, text.to_lowercase(), "{c:?}");
            }
        }
    }

    #[test]
    fn newlines_as_python_text_mode() {
        assert_eq!(translate_newlines("a\r\nb\rc\n"), "a\nb\nc\n");
    }
}
