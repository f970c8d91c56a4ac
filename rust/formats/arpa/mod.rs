//! ARPA back-off language model files, read and written as KenLM does (`lm/read_arpa.cc`,
//! `lm/common/print.cc`), streamed and (de)compressed on the fly (see
//! [`crate::util::compressed`]). Reading parses blocks of lines on all cores (`read.rs`, with
//! the blocks read by a thread of their own in `lines.rs`); writing formats batches of lines on
//! all cores (`write.rs`).
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
//! Values are log10 in the file and natural logs in [`Model`](crate::model::Model) (ln = log10 · ln 10).
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

mod lines;
mod read;
mod word_index;
mod write;

pub use read::{read_arpa, read_arpa_from};
pub(crate) use write::WordsOfRows;
pub use write::{
    check_arpa_tokens, check_writable, write_arpa, write_arpa_to, ArpaFile, ArpaWriter,
};

/// log10 probability KenLM gives `<unk>` when the file has none.
pub const UNKNOWN_MISSING_LOG10: f64 = -100.0;

/// Longest line accepted (1 MiB, newline included): ARPA lines are a few numbers and at most
/// [`crate::ngram::keys::MAX_ORDER`] words, and the bound keeps one huge line (a decompression bomb) from
/// exhausting memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use std::f64::consts::LN_10;

    use super::read::read_arpa_hinted;
    use super::*;
    use crate::corpus::vocab::{BOS, UNK};
    use crate::error::{Error, Result};
    use crate::model::scorer::Scorer;
    use crate::model::Model;
    use crate::util::job::Job;

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
        let small = read_arpa_hinted(TINY.as_bytes(), "t", 1, 1 << 20, &Job::none()).unwrap();
        let full = read(TINY).unwrap();
        assert_eq!(small.ngram_counts(), full.ngram_counts());
        let ids: Vec<u32> = ["a", "b", "b", "a"]
            .iter()
            .map(|w| full.vocab.get(w).unwrap())
            .collect();
        let scores = |m: &Model| {
            m.score_sentence_full(&ids, true, true)
                .iter()
                .map(|(lp, _)| lp.to_bits())
                .collect::<Vec<u64>>()
        };
        assert_eq!(scores(&small), scores(&full));
    }

    /// The ARPA text of the model read from `text` in blocks of `block_bytes` with tables sized
    /// for at most `room` entries at first, and the bytes of its tables' slots (which say where
    /// each n-gram landed); or the line of the error.
    fn read_in_blocks(
        text: &str,
        block_bytes: usize,
        room: u64,
    ) -> std::result::Result<(Vec<u8>, Vec<Vec<u8>>), usize> {
        let model = read_arpa_hinted(text.as_bytes(), "t", room, block_bytes, &Job::none())
            .map_err(line_of)?;
        let mut out = Vec::new();
        write_arpa_to(&model, &mut out).unwrap();
        let slots = model
            .higher
            .iter()
            .map(|order| order.table.slot_bytes().to_vec())
            .collect();
        Ok((out, slots))
    }

    /// An ARPA trigram file of `words` words besides the markers, its lines in a shuffled order:
    /// every 7th word pair is missing, with the triples it is the context of, so that the triples
    /// it is the suffix of need blank entries.
    fn shuffled_trigrams(words: u32) -> String {
        use std::fmt::Write;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut shuffle = |lines: &mut Vec<String>| {
            for i in (1..lines.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                lines.swap(i, (x % (i as u64 + 1)) as usize);
            }
        };
        let pair = |a: u32, b: u32| (a * 31 + b * 17) % 3 == 0;
        let missing = |a: u32, b: u32| (a * 5 + b) % 7 == 0;
        let name = |w: u32| format!("w{w}");
        let mut unigrams: Vec<String> = ["<unk>", "<s>", "</s>"]
            .iter()
            .map(|w| format!("-2.5\t{w}\t-0.25"))
            .collect();
        unigrams.extend((0..words).map(|w| format!("-2.{w}\t{}\t-0.{w}5", name(w))));
        let mut bigrams = Vec::new();
        let mut trigrams = Vec::new();
        for a in 0..words {
            for b in (0..words).filter(|&b| pair(a, b)) {
                if !missing(a, b) {
                    bigrams.push(format!("-1.{b}\t{} {}\t-0.{a}", name(a), name(b)));
                    for c in (0..words).filter(|&c| (a + b + c) % 4 == 0) {
                        trigrams.push(format!("-0.{c}\t{} {} {}", name(a), name(b), name(c)));
                    }
                }
            }
        }
        let mut text = format!(
            "\\data\\\nngram 1={}\nngram 2={}\nngram 3={}\n",
            unigrams.len(),
            bigrams.len(),
            trigrams.len()
        );
        for (m, mut lines) in [(1, unigrams), (2, bigrams), (3, trigrams)] {
            shuffle(&mut lines);
            write!(text, "\n\\{m}-grams:\n{}\n", lines.join("\n")).unwrap();
        }
        text + "\n\\end\\\n"
    }

    #[test]
    fn blocks_parsed_while_others_are_added_give_the_same_tables() {
        let text = shuffled_trigrams(60);
        for room in [1, 1 << 20] {
            let (arpa, slots) = read_in_blocks(&text, 1 << 30, room).unwrap();
            for block_bytes in [64, 333, 1000, 4096] {
                let (a, s) = read_in_blocks(&text, block_bytes, room).unwrap();
                assert!(a == arpa, "ARPA text, blocks of {block_bytes}, room {room}");
                assert!(
                    s == slots,
                    "table slots, blocks of {block_bytes}, room {room}"
                );
            }
        }
        // the file needs blanks, and holds many blocks of each size above
        let announced: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("ngram 2="))
            .and_then(|c| c.parse().ok())
            .unwrap();
        let model = read_arpa_from(text.as_bytes(), "t").unwrap();
        assert!(model.ngram_counts()[1] > announced + 100);
        assert!(text.len() > 50 * 4096, "{}", text.len());
    }

    #[test]
    fn blocks_cut_anywhere_read_the_same() {
        // TINY (and KenLM's order, by suffix), a file with blank suffixes and missing <unk>, and
        // files with errors in every section
        let suffix_order = TINY.replace(
            "-0.2\t<s> a\n-0.3\ta b\n-0.1\tb </s>\n-0.4\ta </s>\n",
            "-0.1\tb </s>\n-0.4\ta </s>\n-0.2\t<s> a\n-0.3\ta b\n",
        );
        let blanks = "\\data\\\nngram 1=4\nngram 2=2\nngram 3=2\n\n\\1-grams:\n-99\t<s>\t-0.5\n\
                      -0.5\t</s>\t-0.1\n-0.4\ta\t-0.3\n-0.6\tb\t-0.2\n\n\\2-grams:\n\
                      -0.2\t<s> a\t-0.7\n-0.3\ta b\t-0.1\n\n\\3-grams:\n-0.05\t<s> a b\n\
                      -0.07\ta b </s>\n\n\\end\\\n";
        let texts = [
            TINY.to_string(),
            suffix_order,
            blanks.to_string(),
            TINY.replace("-0.3\ta b", "x\ta b"),
            TINY.replace("-0.3\ta b", "-0.2\t<s> a"),
            TINY.replace("-0.6\tb\t", "-0.6\ta\t"),
            TINY.replace("ngram 2=4", "ngram 2=3"),
            TINY.replace("ngram 2=4", "ngram 2=5"),
            TINY.replace("b </s>", "c </s>"),
            blanks.replace("<s> a b", "<s> b a"),
            blanks.replace("-0.07\ta b </s>", "-0.07\ta b </s> </s>"),
            TINY.replace("\\end\\\n", ""),
        ];
        for text in &texts {
            for room in [1, 1 << 20] {
                let whole = read_in_blocks(text, 1 << 20, room);
                for block_bytes in 1..=text.len() + 1 {
                    assert_eq!(
                        read_in_blocks(text, block_bytes, room),
                        whole,
                        "blocks of {block_bytes} bytes, room {room}, text {text:?}"
                    );
                }
            }
        }
        // a pair of valid texts and the errors were all reached
        let (read, refused): (Vec<_>, Vec<_>) = texts
            .iter()
            .map(|t| read_in_blocks(t, 1 << 20, 1))
            .partition(std::result::Result::is_ok);
        assert_eq!((read.len(), refused.len()), (3, 9));
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
            for _ in 0..=next(4) {
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
