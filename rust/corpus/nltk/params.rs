//! Punkt's parameters for one language, read from NLTK's `punkt_tab/<language>/` text files
//! (`nltk/tokenize/punkt.py`, `load_punkt_params`; `nltk/tabdata.py`, `PunktDecoder`).
//!
//! | file | one line is |
//! |---|---|
//! | `abbrev_types.txt` | an abbreviation type (lowercased, without its final period) |
//! | `collocations.tab` | two types separated by a tab: a collocation across a period |
//! | `sent_starters.txt` | a type that often starts a sentence |
//! | `ortho_context.tab` | a type, a tab, and its orthographic context flags (an integer) |
//!
//! Lines end at `\n`, `\r\n` or `\r` (the files are read in Python's text mode). A line of a
//! `.tab` file that is not two tab-separated fields, or a flag that is not an integer, is an
//! error naming the file and line; NLTK fails on the latter too, and a collocation with another
//! number of fields could never match.

use std::path::Path;

use hashbrown::HashSet;

use crate::error::{Error, Result};
use crate::util::interner::Interner;

/// Orthographic context flags (`_ORTHO_*` in punkt.py): where a type was seen, in which case.
pub mod ortho {
    /// Seen in upper case at the start of a sentence.
    pub const BEG_UC: i64 = 1 << 1;
    /// Seen in upper case inside a sentence.
    pub const MID_UC: i64 = 1 << 2;
    /// Seen in upper case at an unknown position.
    pub const UNK_UC: i64 = 1 << 3;
    /// Seen in lower case at the start of a sentence.
    pub const BEG_LC: i64 = 1 << 4;
    /// Seen in lower case inside a sentence.
    pub const MID_LC: i64 = 1 << 5;
    /// Seen in lower case at an unknown position.
    pub const UNK_LC: i64 = 1 << 6;
    /// Seen in upper case anywhere.
    pub const UC: i64 = BEG_UC + MID_UC + UNK_UC;
    /// Seen in lower case anywhere.
    pub const LC: i64 = BEG_LC + MID_LC + UNK_LC;
}

/// The trained parameters of Punkt for one language.
#[derive(Debug, Clone, Default)]
pub struct PunktParams {
    /// Abbreviation types, lowercased, without their final period.
    pub abbrev_types: HashSet<String>,
    /// Pairs (type before a period, type after it) that do not break a sentence.
    pub collocations: HashSet<(String, String)>,
    /// Types that frequently start a sentence.
    pub sent_starters: HashSet<String>,
    /// Orthographic context flags of each type (see [`ortho`]); absent types have 0.
    pub ortho_context: OrthoContext,
}

/// The orthographic context flags of each type: the types interned into one string (a language
/// has about 20,000: one allocation for them all, not one each; loading the English parameters
/// took 2.3 ms with a `String` per type), their flags by id.
#[derive(Debug, Clone, Default)]
pub struct OrthoContext {
    types: Interner,
    flags: Vec<i64>,
}

impl OrthoContext {
    /// Room for `types` types spelled in `bytes` bytes in all.
    fn reserve(&mut self, types: usize, bytes: usize) {
        self.types.reserve(types, bytes);
        self.flags.reserve(types);
    }

    /// Sets the flags of `typ`; a later line for the same type replaces an earlier one, as in
    /// NLTK's dict.
    pub fn insert(&mut self, typ: &str, flags: i64) {
        let id = self.types.intern(typ) as usize;
        if id == self.flags.len() {
            self.flags.push(flags);
        } else {
            self.flags[id] = flags;
        }
    }

    /// The flags of `typ` (0 when never seen).
    pub fn get(&self, typ: &str) -> i64 {
        self.types.get(typ).map_or(0, |id| self.flags[id as usize])
    }

    /// Number of types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// True when no type has flags.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
}

impl PunktParams {
    /// Reads the four files of `dir` (a `punkt_tab/<language>/` folder).
    pub fn load(dir: &Path) -> Result<Self> {
        let mut params = PunktParams::default();
        let file = |name: &str| -> Result<(String, String)> {
            let path = dir.join(name);
            let shown = path.display().to_string();
            let bytes = std::fs::read(&path).map_err(|source| Error::Io {
                path: shown.clone(),
                source,
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let offset = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..offset]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                Error::PunktData {
                    path: shown.clone(),
                    line,
                    message: format!("not valid UTF-8 at byte offset {offset}"),
                }
            })?;
            Ok((shown, text))
        };
        let (_, text) = file("abbrev_types.txt")?;
        params.abbrev_types = lines(&text).map(str::to_string).collect();
        let (_, text) = file("sent_starters.txt")?;
        params.sent_starters = lines(&text).map(str::to_string).collect();
        let (path, text) = file("collocations.tab")?;
        for (i, line) in lines(&text).enumerate() {
            let (a, b) = two_fields(line, &path, i + 1)?;
            params.collocations.insert((a.to_string(), b.to_string()));
        }
        let (path, text) = file("ortho_context.tab")?;
        // (about 20,000 lines: room for them all at once, rather than growing the table)
        params.ortho_context.reserve(
            memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1,
            text.len(),
        );
        for (i, line) in lines(&text).enumerate() {
            let (typ, flags) = two_fields(line, &path, i + 1)?;
            let flags: i64 = flags.trim().parse().map_err(|_| Error::PunktData {
                path: path.clone(),
                line: i + 1,
                message: format!("the flags {flags:?} of {typ:?} are not an integer"),
            })?;
            params.ortho_context.insert(typ, flags);
        }
        Ok(params)
    }

    /// The orthographic context flags of `typ` (0 when never seen).
    pub fn ortho(&self, typ: &str) -> i64 {
        self.ortho_context.get(typ)
    }
}

/// The lines of a file read in Python's text mode (ending at `\n`, `\r\n` or `\r`), without
/// their line ends.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr2(b'\n', b'\r', rest.as_bytes()).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            usize::from(end < rest.len())
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// The two tab-separated fields of line `line` of `path`.
fn two_fields<'a>(text: &'a str, path: &str, line: usize) -> Result<(&'a str, &'a str)> {
    let mut fields = text.split('\t');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(a), Some(b), None) => Ok((a, b)),
        _ => Err(Error::PunktData {
            path: path.to_string(),
            line,
            message: format!("expected two tab-separated fields, got {text:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_as_in_python_text_mode() {
        let got: Vec<&str> = lines("a\r\nb\rc\n\nd").collect();
        assert_eq!(got, ["a", "b", "c", "", "d"]);
        assert_eq!(lines("").count(), 0);
        assert_eq!(lines("x\n").collect::<Vec<_>>(), ["x"]);
    }

    #[test]
    fn malformed_files_name_file_and_line() {
        let dir = std::env::temp_dir().join(format!("fastppl-punkt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["abbrev_types.txt", "sent_starters.txt", "collocations.tab"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        std::fs::write(dir.join("ortho_context.tab"), "the\t36\nfoo\tbar\n").unwrap();
        let err = PunktParams::load(&dir).unwrap_err().to_string();
        assert!(err.contains("ortho_context.tab, line 2"), "{err}");
        std::fs::write(dir.join("ortho_context.tab"), "the\t36\n").unwrap();
        std::fs::write(dir.join("collocations.tab"), "a\tb\nc\n").unwrap();
        let err = PunktParams::load(&dir).unwrap_err().to_string();
        assert!(err.contains("collocations.tab, line 2"), "{err}");
        std::fs::write(dir.join("collocations.tab"), "a\tb\n").unwrap();
        std::fs::write(dir.join("ortho_context.tab"), "the\t36\na\t2\nthe\t40\n").unwrap();
        let params = PunktParams::load(&dir).unwrap();
        // a type given twice keeps its last flags, as NLTK's dict does
        assert_eq!((params.ortho("the"), params.ortho("a")), (40, 2));
        assert_eq!((params.ortho("th"), params.ortho("")), (0, 0));
        assert_eq!(params.ortho_context.len(), 2);
        assert!(params.collocations.contains(&("a".into(), "b".into())));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
