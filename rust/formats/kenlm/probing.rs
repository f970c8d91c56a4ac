//! KenLM's probing search (`build_binary probing`, its default), used in place on the mapped
//! file: `lm/vocab.{hh,cc}` (`ProbingVocabulary`), `lm/search_hashed.{hh,cc}`, `lm/value.hh`,
//! `util/probing_hash_table.hh`. Scoring over it is mapped.rs's.
//!
//! ## Layout (after the header, all little-endian)
//! ```text
//! vocabulary   version u32 (0), bound u32 (= unigrams), then a probing table of
//!              12-byte entries (murmur hash of the word u64, id u32)
//! unigrams     (n1 + 1) x (log10 prob f32, log10 backoff f32), by id
//! orders 2..N-1  a probing table each of 16-byte entries (n-gram hash u64, prob f32, backoff f32)
//! order N      a probing table of 12-byte entries (n-gram hash u64, prob f32)
//! words        NUL-terminated, in id order
//! ```
//! A table of n entries has `max(n + 1, multiplier * n)` buckets (float32 product); a key
//! goes to bucket `key % buckets` and probes linearly, wrapping; key 0 marks an empty bucket.
//! The hash of the n-gram `w1 .. wn` starts from `wn`'s id and folds in `w(n-1)`, .., `w1`
//! ([`combine`]): the order in which scoring walks back from the predicted word.
//!
//! ## Values
//! A stored prob's sign bit is KenLM's "independent left" flag: set (as for every ordinary
//! negative log10) when no longer stored n-gram ends with this one, clear (a positive value)
//! when one does; the probability is the value with the sign bit set. A backoff of -0.0 means
//! the n-gram extends nothing to the right, so a state need not keep it.
//!
//! Every lookup is bounds-checked and probes at most a table's length, so a corrupt file gives
//! wrong numbers or an error, never a panic or a hang.

use std::sync::Arc;

use super::format_err;
use super::header::{Header, SearchKind};
use super::mapped::{KenlmModel, Search};
use crate::error::Result;
use crate::util::mapped::{FileBytes, MappedSlice};
use crate::util::murmur::murmur_hash64a;
use crate::util::prefetch::prefetch_two_lines;

/// KenLM's `CombineWordHash`: the hash of an n-gram extended to the left by word `next`.
#[inline]
fn combine(current: u64, next: u32) -> u64 {
    current.wrapping_mul(8_978_948_897_894_561_157)
        ^ (1 + u64::from(next)).wrapping_mul(17_894_857_484_156_487_943)
}

/// Buckets of a probing table of `entries` entries (`ProbingHashTable::Size` with `DivMod`).
fn buckets(entries: u64, multiplier: f32) -> u64 {
    // (KenLM's float32 product, truncated)
    let scaled = (multiplier * entries as f32) as u64;
    (entries + 1).max(scaled)
}

/// The 64-bit key at the start of an entry of u32 words.
#[inline]
fn key_of(entry: &[u32]) -> u64 {
    u64::from(entry[0]) | (u64::from(entry[1]) << 32)
}

/// Sign bit of a float32.
const SIGN: u32 = 1 << 31;

/// The probability of a stored value (sign bit set) and whether it is independent left.
#[inline]
fn prob_and_independence(bits: u32) -> (f32, bool) {
    (f32::from_bits(bits | SIGN), bits & SIGN != 0)
}

/// The section `(start, len)` of `bytes` as a slice of `T`.
fn view<T: bytemuck::Pod>(
    bytes: &Arc<FileBytes>,
    (start, len): (usize, usize),
    path: &str,
) -> Result<MappedSlice<T>> {
    MappedSlice::new(Arc::clone(bytes), start, len)
        .ok_or_else(|| format_err(path, format!("misaligned section at byte {start}")))
}

/// A probing table of entries of `W` u32 words (key first), in place.
struct Table<const W: usize> {
    entries: MappedSlice<[u32; W]>,
}

impl<const W: usize> Table<W> {
    /// The entry with `key`, probing at most the whole table.
    #[inline]
    fn find(&self, key: u64) -> Option<&[u32; W]> {
        let slots = self.entries.as_slice();
        let n = slots.len();
        let mut at = (key % n as u64) as usize;
        for _ in 0..n {
            let entry = &slots[at];
            match key_of(entry) {
                k if k == key => return Some(entry),
                0 => return None,
                _ => at = if at + 1 == n { 0 } else { at + 1 },
            }
        }
        None
    }

    /// Starts loading the probe of `key`: its bucket's cache line and the next (buckets of 12
    /// or 16 bytes, and a probe often reads the next). On lmplz's Gutenberg 5-gram the second
    /// line made one core score 1.31-1.33x faster on an Intel Xeon host
    /// (`benches/MEASUREMENTS.md`).
    #[inline]
    fn prefetch(&self, key: u64) {
        let slots = self.entries.as_slice();
        prefetch_two_lines(&slots[(key % slots.len() as u64) as usize]);
    }
}

/// KenLM's probing search over a mapped file (see the module notes).
pub struct ProbingSearch {
    vocab: Table<3>,
    /// (prob bits, backoff bits) by id.
    unigrams: MappedSlice<[u32; 2]>,
    /// Orders 2..N-1 at index m-2.
    middle: Vec<Table<4>>,
    longest: Table<3>,
}

/// A KenLM probing file scored in place.
pub type ProbingModel = KenlmModel<ProbingSearch>;

/// Refuses a file that is not a plain probing file (rest-cost probing files, tries).
fn check_kind(header: &Header, path: &str) -> Result<()> {
    match header.search {
        SearchKind::Probing { rest: false } => Ok(()),
        SearchKind::Probing { rest: true } => Err(format_err(
            path,
            "KenLM rest-cost probing binaries (build_binary rest) are not read: rebuild the file \
             as probing (build_binary probing ...) or trie, or load the ARPA file",
        )),
        SearchKind::Trie { .. } => Err(format_err(path, "a KenLM trie, not a probing file")),
    }
}

/// Checks the probing vocabulary's header at byte `at`: version 0, and as many words as the
/// file's header counts unigrams.
fn check_vocabulary_header(bytes: &[u8], at: usize, unigrams: u64, path: &str) -> Result<()> {
    let version = super::read_u32(bytes, at).unwrap_or(u32::MAX);
    let bound = super::read_u32(bytes, at + 4).unwrap_or(0);
    if version != 0 {
        return Err(format_err(
            path,
            format!("KenLM probing vocabulary version {version}, expected 0"),
        ));
    }
    if u64::from(bound) != unigrams {
        return Err(format_err(
            path,
            format!(
                "KenLM probing vocabulary of {bound} words, but the header counts {unigrams} \
                 unigrams (corrupt file?)"
            ),
        ));
    }
    Ok(())
}

impl Search for ProbingSearch {
    /// The hash of the n-gram looked up last.
    type Node = u64;
    const PREFETCHES: bool = true;

    fn open(bytes: &Arc<FileBytes>, header: &Header, path: &str) -> Result<(Self, usize)> {
        check_kind(header, path)?;
        let counts = &header.counts;
        let order = counts.len();
        let multiplier = header.probing_multiplier;
        let truncated = |what: &str, end: u64| {
            format_err(
                path,
                format!(
                    "truncated KenLM binary file: {} bytes, but its {what} end at byte {end}",
                    bytes.len()
                ),
            )
        };
        // (saturating: a hostile multiplier makes a table too large for any file, not a wrap)
        let mut at = header.data_start as u64;
        let mut section = |what: &str, bytes_needed: u64| -> Result<(usize, usize)> {
            let start = at;
            at = at.saturating_add(bytes_needed);
            if at > bytes.len() as u64 {
                return Err(truncated(what, at));
            }
            Ok((start as usize, bytes_needed as usize))
        };
        let (vocab_header, _) = section("vocabulary header", 8)?;
        let vocab_table = section(
            "vocabulary",
            buckets(counts[0], multiplier).saturating_mul(12),
        )?;
        let unigram_table = section("unigrams", 8 * (counts[0] + 1))?;
        let middle_tables = (1..order - 1)
            .map(|m| {
                section(
                    &format!("{}-grams", m + 1),
                    buckets(counts[m], multiplier).saturating_mul(16),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let longest_table = section(
            &format!("{order}-grams"),
            buckets(counts[order - 1], multiplier).saturating_mul(12),
        )?;
        let words_at = at as usize;
        check_vocabulary_header(bytes, vocab_header, counts[0], path)?;
        let search = ProbingSearch {
            vocab: Table {
                entries: view(bytes, vocab_table, path)?,
            },
            unigrams: view(bytes, unigram_table, path)?,
            middle: middle_tables
                .into_iter()
                .map(|t| {
                    Ok(Table {
                        entries: view(bytes, t, path)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            longest: Table {
                entries: view(bytes, longest_table, path)?,
            },
        };
        Ok((search, words_at))
    }

    /// `ProbingVocabulary::Index`: the id stored under the word's hash.
    fn word_id(&self, word: &str) -> Option<u32> {
        self.vocab
            .find(murmur_hash64a(word.as_bytes(), 0))
            .map(|e| e[2])
    }

    #[inline]
    fn unigram(&self, w: u32) -> (f32, f32, bool, u64) {
        let u = self.unigrams.as_slice();
        let [p, b] = u.get(w as usize).unwrap_or(&u[0]);
        let (prob, independent) = prob_and_independence(*p);
        (prob, f32::from_bits(*b), independent, u64::from(w))
    }

    #[inline]
    fn middle(&self, j: usize, w: u32, node: &mut u64) -> Option<(f32, f32, bool)> {
        *node = combine(*node, w);
        let e = self.middle[j].find(*node)?;
        let (prob, independent) = prob_and_independence(e[2]);
        Some((prob, f32::from_bits(e[3]), independent))
    }

    #[inline]
    fn longest(&self, w: u32, node: u64) -> Option<f32> {
        self.longest
            .find(combine(node, w))
            .map(|e| f32::from_bits(e[2]))
    }

    #[inline]
    fn prefetch(&self, j: usize, w: u32, node: u64) {
        let key = combine(node, w);
        match self.middle.get(j) {
            Some(table) => table.prefetch(key),
            None => self.longest.prefetch(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::vocab::UNK;
    use crate::formats::kenlm::header::parse_header;
    use crate::model::scorer::Scorer;

    /// `build_binary -s probing` of the ARPA file in `model::context`'s tests (the fuzz seed).
    const TINY: &[u8] = include_bytes!("../../fuzz/seeds/kenlm_reader/tiny.probing.bin");

    fn tiny() -> ProbingModel {
        let bytes = Arc::new(FileBytes::read(TINY, TINY.len()).unwrap());
        let header = parse_header(&bytes, "tiny").unwrap();
        ProbingModel::open(bytes, header, "tiny".to_string()).unwrap()
    }

    /// `echo "a b c" | query tiny.probing.bin`: `a=3 2 -0.2 b=4 2 -0.3 c=5 3 -0.1 </s>=2 1 -0.7`.
    #[test]
    fn scores_are_querys() {
        let model = tiny();
        let ids: Vec<u32> = ["a", "b", "c"].iter().map(|w| model.id(w)).collect();
        assert_eq!(ids, vec![3, 4, 5]);
        let got = model.score_sentence_full(&ids, true, true);
        let want = [(-0.2, 2), (-0.3, 2), (-0.1, 3), (-0.7, 1)];
        for ((lp, n), (log10, m)) in got.into_iter().zip(want) {
            assert_eq!(n, m);
            assert!((lp - f64::from(log10 as f32) * std::f64::consts::LN_10).abs() < 1e-9);
        }
        assert_eq!(model.id("zzz"), UNK);
        assert_eq!(model.words().unwrap()[3..], ["a", "b", "c"]);
    }

    /// "a b" keeps both words (its backoff is -0.1); after "c" nothing is kept (KenLM's state).
    #[test]
    fn states_keep_what_extends() {
        let model = tiny();
        let [a, b, c] = ["a", "b", "c"].map(|w| model.id(w));
        assert_eq!(model.state_after(&[a, b]).context(), vec![a, b]);
        let (lp, n, after) = model.score_word(&[a, b], c).unwrap();
        assert_eq!((n, after), (3, vec![]));
        assert!((lp - f64::from(-0.1f32) * std::f64::consts::LN_10).abs() < 1e-9);
        // "a b </s>" is not stored: "b </s>" (-0.5) plus the backoff of "a b" (-0.1)
        let (lp, n, _) = model.score_word(&[a, b], model.eos()).unwrap();
        assert!(model.score_word(&[99], a).is_err());
        assert_eq!(n, 2);
        let want = f64::from(-0.5f32 + -0.1f32) * std::f64::consts::LN_10;
        assert!((lp - want).abs() < 1e-6);
    }

    #[test]
    fn bucket_counts_are_kenlms() {
        assert_eq!(buckets(10, 1.5), 15);
        assert_eq!(buckets(3, 1.0), 4);
        assert_eq!(buckets(0, 1.5), 1);
    }

    #[test]
    fn values_carry_independence_in_the_sign_bit() {
        assert_eq!(prob_and_independence((-0.5f32).to_bits()), (-0.5, true));
        assert_eq!(prob_and_independence(0.5f32.to_bits()), (-0.5, false));
    }

    #[test]
    fn a_full_table_is_probed_once_around() {
        let mut words = vec![0u32; 3 * 4];
        for (k, e) in words.chunks_mut(3).enumerate() {
            e[0] = 10 + k as u32; // every bucket taken, key 5 absent
            e[2] = k as u32;
        }
        let bytes: Vec<u8> = bytemuck::cast_slice(&words).to_vec();
        let map = Arc::new(FileBytes::read(&bytes[..], bytes.len()).unwrap());
        let table = Table::<3> {
            entries: MappedSlice::new(map, 0, bytes.len()).unwrap(),
        };
        assert_eq!(table.find(5), None);
        assert_eq!(table.find(12).map(|e| e[2]), Some(2));
    }
}
