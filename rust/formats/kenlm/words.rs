//! The vocabulary's words (`lm/vocab.cc` `ReadWords`): after the search structures, to the end
//! of the file, each word followed by a NUL byte, in KenLM's id order, `<unk>` (id 0) first.
//! A trie's ids are the order of the words' 64-bit hashes (its vocabulary is a sorted array of
//! hashes), so the words come in no readable order; the lookup structure before the search data
//! (hashes only) is not needed once the words are read.

use super::format_err;
use crate::corpus::vocab::{Vocab, BOS, EOS, UNK};
use crate::error::Result;

/// The words of a model of `count` unigrams, read from `bytes[start..]`, interned into a fastppl
/// [`Vocab`]: returns it and the fastppl id of each KenLM id.
pub fn read_words(bytes: &[u8], start: usize, count: u64, path: &str) -> Result<(Vocab, Vec<u32>)> {
    let region = bytes.get(start..).ok_or_else(|| {
        format_err(
            path,
            format!(
                "truncated KenLM binary file: {} bytes, but its vocabulary's words should start \
                 at byte {start}",
                bytes.len()
            ),
        )
    })?;
    if !region.starts_with(b"<unk>\0") {
        return Err(format_err(
            path,
            format!("KenLM binary file: no \"<unk>\" at byte {start}, where its words should start (truncated or corrupt?)"),
        ));
    }
    let Some(body) = region.strip_suffix(b"\0") else {
        return Err(format_err(
            path,
            "truncated KenLM binary file: its last word has no terminating NUL",
        ));
    };
    let mut vocab = Vocab::new();
    let mut ids = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(region.len()));
    let mut seen = vec![false; 3];
    for (k, raw) in body.split(|&b| b == 0).enumerate() {
        let word = std::str::from_utf8(raw).map_err(|_| {
            format_err(
                path,
                format!(
                    "KenLM binary file: word {k} is not UTF-8: {:?}",
                    String::from_utf8_lossy(raw)
                ),
            )
        })?;
        let id = vocab.intern(word);
        if id as usize == seen.len() {
            seen.push(true);
        } else if std::mem::replace(&mut seen[id as usize], true) {
            return Err(format_err(
                path,
                format!("KenLM binary file: the word {word:?} is listed twice"),
            ));
        }
        ids.push(id);
    }
    if ids.len() as u64 != count {
        return Err(format_err(
            path,
            format!(
                "KenLM binary file: {} words at its end, but its header counts {count} unigrams \
                 (truncated or corrupt?)",
                ids.len()
            ),
        ));
    }
    for (id, name) in [(BOS, "<s>"), (EOS, "</s>")] {
        if !seen[id as usize] {
            return Err(format_err(
                path,
                format!("the KenLM model has no {name}: fastppl, like KenLM by default, needs the sentence markers <s> and </s>"),
            ));
        }
    }
    debug_assert!(seen[UNK as usize]);
    Ok((vocab, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8], count: u64) -> Result<(Vocab, Vec<u32>)> {
        read_words(bytes, 2, count, "f")
    }

    #[test]
    fn maps_kenlm_ids_to_fastppl_ids() {
        let (vocab, ids) = read(b"..<unk>\0b\0</s>\0<s>\0a\0", 5).unwrap();
        assert_eq!(ids[0], UNK);
        assert_eq!((ids[2], ids[3]), (EOS, BOS));
        assert_eq!(vocab.word(ids[1]), "b");
        assert_eq!(vocab.word(ids[4]), "a");
    }

    #[test]
    fn refuses_what_kenlm_would_not_write() {
        let message = |b: &[u8], n| read(b, n).unwrap_err().to_string();
        assert!(message(b"..<s>\0</s>\0", 2).contains("no \"<unk>\""));
        assert!(message(b"..<unk>\0<s>\0</s>", 3).contains("terminating NUL"));
        assert!(message(b"..<unk>\0<s>\0</s>\0", 4).contains("3 words"));
        assert!(message(b"..<unk>\0<s>\0a\0", 3).contains("no </s>"));
        assert!(message(b"..<unk>\0<s>\0</s>\0<s>\0", 4).contains("twice"));
        assert!(message(b"..<unk>\0<s>\0</s>\0\xff\0", 4).contains("not UTF-8"));
        assert!(message(b".", 3).contains("truncated"));
    }
}
