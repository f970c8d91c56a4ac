//! Counting every n-gram of orders 1..=N of a padded stream, in parallel.
//!
//! Order m is counted in one pass over the stream once order m-1 is done: the entry number of the
//! (m-1)-gram ending at each position (kept in an array the size of the stream) gives the prefix
//! of the m-gram ending at the next position, and the suffix of the m-gram ending at the same
//! position. Each shard of order m is filled by its own thread, which skips the keys of the
//! other shards, so there is no locking and no merge; an n-gram costs one hash probe.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::stream::PaddedStream;
use crate::table::{hash_key, pack, ShardedIndex, ShardedValues, NONE};

/// Highest order accepted: beyond this nothing is gained and the tables only grow.
pub const MAX_ORDER: usize = 64;

/// The n-grams of one order >= 2 with their counts and suffix links.
#[derive(Debug, Clone)]
pub struct OrderCounts {
    /// The n-grams: key = (prefix entry of order m-1, last word).
    pub index: ShardedIndex,
    /// Occurrences of each n-gram.
    pub counts: ShardedValues<u32>,
    /// Entry number (order m-1) of each n-gram without its first word.
    pub suffix: ShardedValues<u32>,
}

/// Counts of all orders 1..=N.
#[derive(Debug, Clone)]
pub struct NgramCounts {
    /// Occurrences of each word id as a predicted token (`<s>` is never counted).
    pub unigrams: Vec<u32>,
    /// Orders 2..=N, at index m-2.
    pub higher: Vec<OrderCounts>,
    /// Number of predicted tokens.
    pub num_predicted: u64,
}

impl NgramCounts {
    /// The order N.
    pub fn order(&self) -> usize {
        self.higher.len() + 1
    }

    /// The entry number of the n-gram `ids` (order `ids.len()`), if it was seen; for one word
    /// it is the word id itself.
    pub fn find(&self, ids: &[u32]) -> Option<u32> {
        if ids.len() > self.order() {
            return None;
        }
        find_chain(ids, self.unigrams.len(), |m, prefix, w| {
            self.higher[m - 2].index.find(prefix, w)
        })
    }

    /// Count of the n-gram `ids` (0 if unseen).
    pub fn count(&self, ids: &[u32]) -> u64 {
        match (ids.len(), self.find(ids)) {
            (1, Some(w)) => u64::from(self.unigrams[w as usize]),
            (m, Some(e)) if m >= 2 => u64::from(self.higher[m - 2].counts.get(e)),
            _ => 0,
        }
    }
}

/// Looks up an n-gram one order at a time: `find(m, prefix, word)` answers for order m >= 2.
pub fn find_chain(
    ids: &[u32],
    vocab_len: usize,
    find: impl Fn(usize, u32, u32) -> Option<u32>,
) -> Option<u32> {
    let (&first, rest) = ids.split_first()?;
    if first as usize >= vocab_len {
        return None;
    }
    let mut entry = first;
    for (i, &w) in rest.iter().enumerate() {
        entry = find(i + 2, entry, w)?;
    }
    Some(entry)
}

/// Number of shards for `threads` workers: the next power of two (at least 2, so that counting
/// uses both cores of a small machine).
fn shard_shift(threads: usize) -> u32 {
    threads.max(2).next_power_of_two().trailing_zeros()
}

/// Counts orders 1..=`order` of `stream`, whose ids are below `vocab_len`.
pub fn count_ngrams(stream: &PaddedStream, order: usize, vocab_len: usize) -> Result<NgramCounts> {
    if order == 0 || order > MAX_ORDER {
        return Err(Error::invalid(format!(
            "order must be between 1 and {MAX_ORDER}, got {order}"
        )));
    }
    let unigrams = count_unigrams(stream, vocab_len)?;
    let shift = shard_shift(rayon::current_num_threads());
    let mut higher = Vec::with_capacity(order.saturating_sub(1));
    // entry number of the (m-1)-gram ending at each position; order 1: the ids themselves.
    let mut previous: Option<Vec<AtomicU32>> = None;
    for m in 2..=order {
        let current: Vec<AtomicU32> = (0..stream.ids.len())
            .map(|_| AtomicU32::new(NONE))
            .collect();
        let counts = match &previous {
            None => count_order(stream, m, shift, &stream.ids[..], &current)?,
            Some(prev) => count_order(stream, m, shift, &prev[..], &current)?,
        };
        let empty = counts.index.is_empty();
        higher.push(counts);
        if empty {
            // nothing of order m means nothing of any higher order either
            for _ in m + 1..=order {
                higher.push(OrderCounts {
                    index: ShardedIndex::new(shift),
                    counts: ShardedValues::from_shards(vec![Vec::new(); 1 << shift], shift),
                    suffix: ShardedValues::from_shards(vec![Vec::new(); 1 << shift], shift),
                });
            }
            break;
        }
        previous = Some(current);
    }
    Ok(NgramCounts {
        unigrams,
        higher,
        num_predicted: stream.num_predicted() as u64,
    })
}

fn count_unigrams(stream: &PaddedStream, vocab_len: usize) -> Result<Vec<u32>> {
    let first = stream.first_predicted();
    let chunk = (stream.num_sentences() / (4 * rayon::current_num_threads())).max(1024);
    let sentence_ranges: Vec<(usize, usize)> = (0..stream.num_sentences())
        .step_by(chunk)
        .map(|s| (s, (s + chunk).min(stream.num_sentences())))
        .collect();
    let partial: Vec<Vec<u64>> = sentence_ranges
        .par_iter()
        .map(|&(a, b)| {
            let mut c = vec![0u64; vocab_len];
            for s in a..b {
                let (start, end) = (stream.offsets[s], stream.offsets[s + 1]);
                for &w in &stream.ids[start + first..end] {
                    c[w as usize] += 1;
                }
            }
            c
        })
        .collect();
    let mut total = vec![0u64; vocab_len];
    for p in partial {
        for (t, x) in total.iter_mut().zip(p) {
            *t += x;
        }
    }
    total
        .into_iter()
        .map(|c| u32::try_from(c).map_err(|_| count_overflow()))
        .collect()
}

fn count_overflow() -> Error {
    Error::Overflow(
        "an n-gram occurs more than 2^32-1 times; corpus too large for 32-bit counts".into(),
    )
}

/// Read access to "entry number of the n-gram ending at position p" arrays.
trait Positions: Sync {
    fn at(&self, p: usize) -> u32;
}

impl Positions for [u32] {
    #[inline]
    fn at(&self, p: usize) -> u32 {
        self[p]
    }
}

impl Positions for [AtomicU32] {
    #[inline]
    fn at(&self, p: usize) -> u32 {
        self[p].load(Ordering::Relaxed)
    }
}

fn count_order<P: Positions + ?Sized>(
    stream: &PaddedStream,
    m: usize,
    shift: u32,
    previous: &P,
    current: &[AtomicU32],
) -> Result<OrderCounts> {
    let mut index = ShardedIndex::new(shift);
    let first = stream.first_predicted();
    let shard_of = |h: u64| ((h >> 32) as usize) & ((1usize << shift) - 1);
    let filled: Vec<(Vec<u32>, Vec<u32>)> = index
        .shards_mut()
        .par_iter_mut()
        .enumerate()
        .map(|(me, shard)| {
            let mut counts: Vec<u32> = Vec::new();
            let mut suffix: Vec<u32> = Vec::new();
            for s in 0..stream.num_sentences() {
                let (start, end) = (stream.offsets[s], stream.offsets[s + 1]);
                let window = (start + first).max(start + m - 1)..end;
                for (p, slot) in current
                    .iter()
                    .enumerate()
                    .take(window.end)
                    .skip(window.start)
                {
                    let key = pack(previous.at(p - 1), stream.ids[p]);
                    let hash = hash_key(key);
                    if shard_of(hash) != me {
                        continue;
                    }
                    let (local, new) = shard.find_or_insert(key, hash);
                    if new {
                        counts.push(0);
                        suffix.push(previous.at(p));
                    }
                    let c = &mut counts[local as usize];
                    *c = c.checked_add(1).ok_or_else(count_overflow)?;
                    slot.store((local << shift) | me as u32, Ordering::Relaxed);
                }
            }
            shard.shrink_to_fit();
            Ok((counts, suffix))
        })
        .collect::<Result<_>>()?;
    let (counts, suffix): (Vec<_>, Vec<_>) = filled.into_iter().unzip();
    Ok(OrderCounts {
        index,
        counts: ShardedValues::from_shards(counts, shift),
        suffix: ShardedValues::from_shards(suffix, shift),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use std::collections::HashMap;

    fn corpus(text: &str) -> Corpus {
        let mut c = Corpus::new();
        for line in text.lines() {
            c.push_sentence(line.split_whitespace()).unwrap();
        }
        c.finish();
        c
    }

    /// Counts by brute force over windows, as the conventions define them.
    fn naive(stream: &PaddedStream, order: usize) -> HashMap<Vec<u32>, u64> {
        let mut out = HashMap::new();
        for s in 0..stream.num_sentences() {
            let sent = &stream.ids[stream.offsets[s]..stream.offsets[s + 1]];
            for i in stream.first_predicted()..sent.len() {
                for m in 1..=order.min(i + 1) {
                    *out.entry(sent[i + 1 - m..=i].to_vec()).or_insert(0) += 1;
                }
            }
        }
        out
    }

    #[test]
    fn counts_match_brute_force() {
        let c = corpus("a b a b c\nb a\na\nc c c c a b");
        for bos_eos in [true, false] {
            let stream = PaddedStream::new(&c, bos_eos, None);
            for order in 1..=5 {
                let counts = count_ngrams(&stream, order, c.vocab().len()).unwrap();
                let expected = naive(&stream, order);
                let mut seen = 0;
                for (gram, &n) in &expected {
                    assert_eq!(counts.count(gram), n, "{gram:?} bos_eos={bos_eos}");
                    seen += 1;
                }
                let stored: usize = 1 + counts.higher.iter().map(|o| o.index.len()).sum::<usize>();
                let distinct_unigrams = expected.keys().filter(|g| g.len() == 1).count();
                assert_eq!(stored - 1 + distinct_unigrams, seen);
                assert_eq!(counts.count(&[3, 3, 3, 3, 3, 3]), 0);
            }
        }
    }

    #[test]
    fn bad_orders_are_refused() {
        let c = corpus("a b");
        let stream = PaddedStream::new(&c, true, None);
        assert!(count_ngrams(&stream, 0, 5).is_err());
        assert!(count_ngrams(&stream, MAX_ORDER + 1, 5).is_err());
    }

    #[test]
    fn suffix_links_point_at_the_suffix() {
        let c = corpus("a b c d\nb c d");
        let stream = PaddedStream::new(&c, true, None);
        let counts = count_ngrams(&stream, 3, c.vocab().len()).unwrap();
        let abc = counts.find(&[3, 4, 5]).unwrap();
        let bc = counts.find(&[4, 5]).unwrap();
        assert_eq!(counts.higher[1].suffix.get(abc), bc);
        assert_eq!(counts.higher[0].suffix.get(bc), 5);
    }
}
