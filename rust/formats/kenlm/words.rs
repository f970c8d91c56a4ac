//! The vocabulary's words (`lm/vocab.cc` `ReadWords`): after the search structures, to the end
//! of the file, each word followed by a NUL byte, in KenLM's id order, `<unk>` (id 0) first.
//! A trie's ids are the order of the words' 64-bit hashes (its vocabulary is a sorted array of
//! hashes), so the words come in no readable order; the lookup structure before the search data
//! (hashes only) is not needed once the words are read.

use super::format_err;
use crate::corpus::vocab::{Vocab, BOS, EOS, UNK};
use crate::error::Result;

/// Checks the word list of a model of `count` unigrams at `bytes[start..]` (to the end of the
/// file) as far as a scan of its bytes can, so that a truncated or overlong list is refused when
/// the file is opened, not when its words are first read: `<unk>` first, a NUL after the last
/// word, and `count` words. KenLM's `ReadWords` counts a word per NUL (`strlen` from word to
/// word, empty words included) and refuses a list of another length; the count here is the same.
/// Opening stays fast: one pass over the list's bytes (15.6 MB for 1.3 M words: 6 ms), no word
/// decoded; what needs the words themselves (UTF-8, duplicates) is [`read_words`]'s.
pub fn check_words(bytes: &[u8], start: usize, count: u64, path: &str) -> Result<()> {
    let region = match bytes.get(start..) {
        Some(region) if !region.is_empty() => region,
        _ => {
            return Err(format_err(
                path,
                format!(
                    "truncated KenLM binary file: {} bytes, but its word list should start at \
                     byte {start}",
                    bytes.len()
                ),
            ))
        }
    };
    if !region.starts_with(b"<unk>\0") {
        return Err(format_err(
            path,
            format!(
                "KenLM binary file: no \"<unk>\" at byte {start}, where its word list should \
                 start (truncated or corrupt?)"
            ),
        ));
    }
    if region.last() != Some(&0) {
        return Err(format_err(
            path,
            format!(
                "truncated KenLM binary file: its word list ends inside a word (no terminating \
                 NUL) after {} of {count} words",
                count_nuls(region)
            ),
        ));
    }
    let words = count_nuls(region);
    if words < count {
        return Err(format_err(
            path,
            format!(
                "truncated KenLM binary file: the word list ends after {words} of {count} words"
            ),
        ));
    }
    if words > count {
        return Err(format_err(
            path,
            format!(
                "KenLM binary file: {words} words in the word list at its end, but its header \
                 counts {count} unigrams (extra bytes after the list, or corrupt?)"
            ),
        ));
    }
    Ok(())
}

/// The NUL bytes in `bytes` (a loop the compiler vectorizes; counting byte-wide lanes a block at
/// a time was no faster on a list of 15 MB: about 5 ms either way, bounded by memory).
fn count_nuls(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == 0).count() as u64
}

/// The words of a model of `count` unigrams, read from `bytes[start..]`, interned into a fastppl
/// [`Vocab`]: returns it and the fastppl id of each KenLM id. The list is checked first as
/// [`check_words`] does.
pub fn read_words(bytes: &[u8], start: usize, count: u64, path: &str) -> Result<(Vocab, Vec<u32>)> {
    check_words(bytes, start, count, path)?;
    let region = &bytes[start..];
    let body = &region[..region.len() - 1];
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
    debug_assert_eq!(ids.len() as u64, count);
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
        assert!(message(b"..<unk>\0<s>\0</s>", 3).contains("terminating NUL) after 2 of 3"));
        assert!(message(b"..<unk>\0<s>\0</s>\0", 4).contains("ends after 3 of 4 words"));
        assert!(message(b"..<unk>\0<s>\0</s>\0x\0", 3).contains("4 words in the word list"));
        assert!(message(b"..<unk>\0<s>\0a\0", 3).contains("no </s>"));
        assert!(message(b"..<unk>\0<s>\0</s>\0<s>\0", 4).contains("twice"));
        assert!(message(b"..<unk>\0<s>\0</s>\0\xff\0", 4).contains("not UTF-8"));
        assert!(message(b".", 3).contains("truncated"));
        assert!(message(b"..", 3).contains("should start at byte 2"));
    }

    /// Every cut of a word list (right after the body, inside a word, between two words) and
    /// every list with bytes added is refused by the scan alone, with the file named.
    #[test]
    fn the_scan_refuses_every_cut_and_every_addition() {
        let list: &[u8] = b"<unk>\0<s>\0</s>\0b\0a\0";
        let file = [b"body".as_slice(), list].concat();
        check_words(&file, 4, 5, "f").unwrap();
        for cut in 4..file.len() {
            let e = check_words(&file[..cut], 4, 5, "f")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("f: ") && e.contains("truncated"),
                "{cut}: {e}"
            );
        }
        let e = check_words(&file[..file.len() - 2], 4, 5, "f").unwrap_err();
        assert!(e.to_string().contains("ends after 4 of 5 words"), "{e}");
        for extra in [b"c\0".as_slice(), b"\0", b"c"] {
            let longer = [file.as_slice(), extra].concat();
            assert!(check_words(&longer, 4, 5, "f").is_err(), "{extra:?}");
        }
        // KenLM counts an empty word (a NUL after a NUL) as a word; so does the scan
        check_words(b"<unk>\0\0</s>\0", 0, 3, "f").unwrap();
    }
}
