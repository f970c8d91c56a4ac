//! Counting every n-gram of orders 1..=N of a padded stream, on all cores.
//!
//! Order m is counted in one pass over the stream once order m-1 is done: the entry number of the
//! (m-1)-gram ending at each position (kept in an array the size of the stream) gives the prefix
//! of the m-gram ending at the next position, and the suffix of the m-gram ending at the same
//! position. Each order goes into one open-addressing table shared by all threads, which claim
//! empty slots with a compare-and-swap and add to counts atomically (no locks, no merge); the
//! table is sized beforehand from a HyperLogLog estimate of the number of distinct keys, and a
//! slot's position is the n-gram's entry number for good: the model's probing tables are built
//! slot for slot from these ([`crate::ngram::probing::ProbingTable::from_slots`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use crate::corpus::padded_stream::PaddedStream;
use crate::error::{Error, Result};
use crate::ngram::keys::{find_chain, hash_key, home_slot, pack, EMPTY, MAX_ORDER, NONE};
use crate::util::job::Job;
use crate::util::per_thread;
use crate::util::prefetch::prefetch;

/// Slots per estimated key: an expected load of 0.77, where linear probing is still short.
const SLOTS_PER_KEY: f64 = 1.3;
/// How many positions ahead counting prefetches table slots.
const LOOKAHEAD: usize = 16;
/// Fill level at which counting stops and restarts with a table twice as large.
const MAX_LOAD: f64 = 0.9;

/// One slot of a counting table.
#[derive(Debug)]
#[repr(C)]
struct CountSlot {
    key: AtomicU64,
    count: AtomicU32,
    suffix: AtomicU32,
}

/// The n-grams of one order >= 2: a probing table of (key, count, suffix link).
#[derive(Debug)]
pub struct OrderCounts {
    slots: Vec<CountSlot>,
    len: usize,
}

impl OrderCounts {
    fn with_capacity(capacity: usize) -> Self {
        OrderCounts {
            // not in huge pages: measured no faster (benches/MEASUREMENTS.md, "Huge pages")
            slots: (0..capacity)
                .into_par_iter()
                .map(|_| CountSlot {
                    key: AtomicU64::new(EMPTY),
                    count: AtomicU32::new(0),
                    suffix: AtomicU32::new(NONE),
                })
                .collect(),
            len: 0,
        }
    }

    /// Number of slots; entry numbers are below it.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of distinct n-grams.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no n-gram was counted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The key in slot `slot`, or `None` for an empty slot.
    #[inline]
    pub fn key(&self, slot: usize) -> Option<u64> {
        let k = self.slots[slot].key.load(Relaxed);
        (k != EMPTY).then_some(k)
    }

    /// The count in slot `slot` (0 for an empty slot).
    #[inline]
    pub fn count(&self, slot: usize) -> u32 {
        self.slots[slot].count.load(Relaxed)
    }

    /// The entry number (order m-1) of the n-gram in slot `slot` without its oldest word.
    #[inline]
    pub fn suffix(&self, slot: usize) -> u32 {
        self.slots[slot].suffix.load(Relaxed)
    }

    /// The slot of `key`, if counted.
    pub fn find(&self, key: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = home_slot(key, self.slots.len());
        loop {
            match self.slots[i].key.load(Relaxed) {
                k if k == key => return Some(i as u32),
                EMPTY => return None,
                _ => i = if i + 1 == self.slots.len() { 0 } else { i + 1 },
            }
        }
    }

    /// Starts loading the home slot of `key` (see [`crate::util::prefetch::prefetch`]).
    #[inline]
    fn prefetch(&self, key: u64) {
        prefetch(&self.slots[home_slot(key, self.slots.len())]);
    }

    /// Adds one occurrence of `key` (whose suffix entry is `suffix`); returns its slot and
    /// whether it is new, or `None` if every slot is taken. Safe to call from many threads.
    #[inline]
    fn add(&self, key: u64, suffix: u32) -> Result<Option<(u32, bool)>> {
        let n = self.slots.len();
        let mut i = home_slot(key, n);
        for _ in 0..n {
            let slot = &self.slots[i];
            let mut current = slot.key.load(Relaxed);
            if current == EMPTY {
                match slot.key.compare_exchange(EMPTY, key, Relaxed, Relaxed) {
                    Ok(_) => {
                        slot.suffix.store(suffix, Relaxed);
                        // add, not store: another thread may already have counted this key
                        slot.count.fetch_add(1, Relaxed);
                        return Ok(Some((i as u32, true)));
                    }
                    Err(actual) => current = actual,
                }
            }
            if current == key {
                if slot.count.fetch_add(1, Relaxed) == u32::MAX {
                    return Err(count_overflow());
                }
                return Ok(Some((i as u32, false)));
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
        Ok(None)
    }

    /// The counts by slot, taken out (for the model) as soon as the table is no longer needed:
    /// the table is left empty (no slot) and its memory is freed.
    pub fn take_counts(&mut self) -> Vec<u32> {
        self.len = 0;
        std::mem::take(&mut self.slots)
            .into_par_iter()
            .map(|s| s.count.into_inner())
            .collect()
    }
}

/// Counts of all orders 1..=N.
#[derive(Debug)]
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
            self.higher[m - 2].find(pack(prefix, w))
        })
    }

    /// Count of the n-gram `ids` (0 if unseen).
    pub fn count(&self, ids: &[u32]) -> u64 {
        match (ids.len(), self.find(ids)) {
            (1, Some(w)) => u64::from(self.unigrams[w as usize]),
            (m, Some(e)) if m >= 2 => u64::from(self.higher[m - 2].count(e as usize)),
            _ => 0,
        }
    }

    /// Number of distinct n-grams per order (unigrams: the word types seen as predicted tokens).
    pub fn distinct(&self) -> Vec<usize> {
        std::iter::once(self.unigrams.iter().filter(|&&n| n > 0).count())
            .chain(self.higher.iter().map(OrderCounts::len))
            .collect()
    }
}

fn count_overflow() -> Error {
    Error::Overflow(
        "an n-gram occurs more than 2^32-1 times; corpus too large for 32-bit counts".into(),
    )
}

/// Counts orders 1..=`order` of `stream`, whose ids are below `vocab_len`; reports each order
/// as a stage of `job` (tokens done) and stops with [`Error::Cancelled`] when it is cancelled.
pub fn count_ngrams(
    stream: &PaddedStream,
    order: usize,
    vocab_len: usize,
    job: &Job,
) -> Result<NgramCounts> {
    if order == 0 || order > MAX_ORDER {
        return Err(Error::invalid(format!(
            "order must be between 1 and {MAX_ORDER}, got {order}"
        )));
    }
    let chunks = sentence_chunks(stream);
    // one stage for every order: tokens read, once per order
    job.stage("counting n-grams", stream.ids.len() as u64 * order as u64)?;
    let unigrams = count_unigrams(stream, &chunks, vocab_len, job)?;
    let mut higher = Vec::with_capacity(order - 1);
    // entry number of the (m-1)-gram ending at each position; for m = 2 the ids themselves
    let mut previous: Option<Vec<u32>> = None;
    for m in 2..=order {
        let prev = previous.as_deref().unwrap_or(&stream.ids);
        // the highest order is the prefix of nothing: its entry numbers are not recorded
        let (counts, current) = count_order(stream, &chunks, m, prev, m < order, job)?;
        higher.push(counts);
        previous = current;
    }
    Ok(NgramCounts {
        unigrams,
        higher,
        num_predicted: stream.num_predicted() as u64,
    })
}

/// Sentence ranges of about equal token counts, several per thread.
fn sentence_chunks(stream: &PaddedStream) -> Vec<(usize, usize)> {
    let target = (stream.ids.len() / (16 * rayon::current_num_threads())).max(1 << 14);
    let mut chunks = Vec::new();
    let mut start = 0;
    for s in 0..stream.num_sentences() {
        if stream.offsets[s + 1] - stream.offsets[start] >= target {
            chunks.push((start, s + 1));
            start = s + 1;
        }
    }
    if start < stream.num_sentences() {
        chunks.push((start, stream.num_sentences()));
    }
    chunks
}

fn count_unigrams(
    stream: &PaddedStream,
    chunks: &[(usize, usize)],
    vocab_len: usize,
    job: &Job,
) -> Result<Vec<u32>> {
    let first = stream.first_predicted();
    let total = per_thread::fold(
        chunks,
        || vec![0u64; vocab_len],
        |c, _, part| {
            for &(a, b) in part {
                if job.is_cancelled() {
                    break;
                }
                job.advance((stream.offsets[b] - stream.offsets[a]) as u64);
                for s in a..b {
                    let (start, end) = (stream.offsets[s], stream.offsets[s + 1]);
                    for &w in &stream.ids[start + first..end] {
                        c[w as usize] += 1;
                    }
                }
            }
        },
        |a, b| a.iter_mut().zip(b).for_each(|(x, y)| *x += y),
    );
    job.check()?;
    total
        .into_iter()
        .map(|c| u32::try_from(c).map_err(|_| count_overflow()))
        .collect()
}

/// Calls `f(p)` for every position p of sentences `a..b` that ends an m-gram.
#[inline]
fn for_each_window(
    stream: &PaddedStream,
    m: usize,
    (a, b): (usize, usize),
    mut f: impl FnMut(usize),
) {
    let first = stream.first_predicted();
    for s in a..b {
        let (start, end) = (stream.offsets[s], stream.offsets[s + 1]);
        for p in (start + first).max(start + m - 1)..end {
            f(p);
        }
    }
}

/// Counts order m; returns its table and, when `record`, the entry number of the m-gram ending
/// at each position.
fn count_order(
    stream: &PaddedStream,
    chunks: &[(usize, usize)],
    m: usize,
    prev: &[u32],
    record: bool,
    job: &Job,
) -> Result<(OrderCounts, Option<Vec<u32>>)> {
    let key_at = |p: usize| pack(prev[p - 1], stream.ids[p]);
    let estimate = chunks
        .par_iter()
        .fold(HyperLogLog::new, |mut hll, &chunk| {
            if !job.is_cancelled() {
                for_each_window(stream, m, chunk, |p| hll.add(hash_key(key_at(p))));
            }
            hll
        })
        .reduce(HyperLogLog::new, HyperLogLog::merge)
        .estimate();
    job.check()?;
    let mut capacity = ((estimate * 1.02 + 64.0) * SLOTS_PER_KEY) as usize;
    loop {
        if let Some(done) = fill_order(stream, chunks, m, prev, capacity, record, job)? {
            return Ok(done);
        }
        capacity *= 2; // the estimate was too low: count again in a larger table
    }
}

/// Counts order m into a table of `capacity` slots (recording each position's entry number when
/// `record`); `None` if it fills up.
fn fill_order(
    stream: &PaddedStream,
    chunks: &[(usize, usize)],
    m: usize,
    prev: &[u32],
    capacity: usize,
    record: bool,
    job: &Job,
) -> Result<Option<(OrderCounts, Option<Vec<u32>>)>> {
    let key_at = |p: usize| pack(prev[p - 1], stream.ids[p]);
    let mut table = OrderCounts::with_capacity(capacity);
    let mut current = if record {
        vec![NONE; stream.ids.len()]
    } else {
        Vec::new()
    };
    let full = AtomicBool::new(false);
    let distinct = AtomicUsize::new(0);
    let limit = (capacity as f64 * MAX_LOAD) as usize;
    // split `current` along the chunks so that each task writes its own positions
    let mut parts = Vec::with_capacity(chunks.len());
    let mut rest: &mut [u32] = &mut current;
    let mut consumed = 0;
    for &(a, b) in chunks {
        let (start, end) = (stream.offsets[a], stream.offsets[b]);
        let part = if record {
            let (_, tail) = rest.split_at_mut(start - consumed);
            let (part, tail) = tail.split_at_mut(end - start);
            rest = tail;
            consumed = end;
            Some(part)
        } else {
            None
        };
        parts.push((part, (a, b)));
    }
    let table_ref = &table;
    parts.into_par_iter().try_for_each(|(mut part, chunk)| {
        let (offset, end) = (stream.offsets[chunk.0], stream.offsets[chunk.1]);
        job.step((end - offset) as u64)?;
        let mut new_here = 0usize;
        let mut result = Ok(());
        for_each_window(stream, m, chunk, |p| {
            if result.is_err() || full.load(Relaxed) || job.is_cancelled() {
                return;
            }
            if p + LOOKAHEAD < end {
                // (a key across a sentence start is garbage: a wasted hint, nothing more)
                table_ref.prefetch(key_at(p + LOOKAHEAD));
            }
            match table_ref.add(key_at(p), prev[p]) {
                Ok(None) => full.store(true, Relaxed),
                Ok(Some((slot, new))) => {
                    if let Some(part) = part.as_deref_mut() {
                        part[p - offset] = slot;
                    }
                    if new {
                        new_here += 1;
                        if new_here == 1024 {
                            if distinct.fetch_add(new_here, Relaxed) + new_here > limit {
                                full.store(true, Relaxed);
                            }
                            new_here = 0;
                        }
                    }
                }
                Err(e) => result = Err(e),
            }
        });
        if distinct.fetch_add(new_here, Relaxed) + new_here > limit {
            full.store(true, Relaxed);
        }
        result
    })?;
    if full.load(Relaxed) {
        return Ok(None);
    }
    table.len = distinct.into_inner();
    Ok(Some((table, record.then_some(current))))
}

/// A HyperLogLog sketch (2^12 registers, ~1.6% standard error) of the number of distinct hashes.
struct HyperLogLog {
    registers: Vec<u8>,
}

impl HyperLogLog {
    const BITS: u32 = 12;

    fn new() -> Self {
        HyperLogLog {
            registers: vec![0; 1 << Self::BITS],
        }
    }

    #[inline]
    fn add(&mut self, hash: u64) {
        let index = (hash >> (64 - Self::BITS)) as usize;
        let rank = ((hash << Self::BITS) | (1 << (Self::BITS - 1))).leading_zeros() as u8 + 1;
        let r = &mut self.registers[index];
        *r = (*r).max(rank);
    }

    fn merge(mut self, other: Self) -> Self {
        for (a, b) in self.registers.iter_mut().zip(other.registers) {
            *a = (*a).max(b);
        }
        self
    }

    fn estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self
            .registers
            .iter()
            .map(|&r| 2f64.powi(-i32::from(r)))
            .sum();
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln() // linear counting for small sets
        } else {
            raw
        }
    }
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
                let counts = count_ngrams(&stream, order, c.vocab().len(), &Job::none()).unwrap();
                let expected = naive(&stream, order);
                for (gram, &n) in &expected {
                    assert_eq!(counts.count(gram), n, "{gram:?} bos_eos={bos_eos}");
                }
                let distinct: usize = counts.distinct().iter().sum();
                assert_eq!(distinct, expected.len());
                assert_eq!(counts.count(&[3, 3, 3, 3, 3, 3]), 0);
            }
        }
    }

    #[test]
    fn a_too_small_table_is_regrown() {
        // many distinct bigrams: whatever the estimate, every count must come out right
        let text = (0..3000)
            .map(|i| format!("w{} w{}", i % 97, i % 89))
            .collect::<Vec<_>>()
            .join("\n");
        let c = corpus(&text);
        let stream = PaddedStream::new(&c, true, None);
        let chunks = sentence_chunks(&stream);
        assert!(
            fill_order(&stream, &chunks, 2, &stream.ids, 8, true, &Job::none())
                .unwrap()
                .is_none()
        );
        let counts = count_ngrams(&stream, 2, c.vocab().len(), &Job::none()).unwrap();
        for (gram, n) in naive(&stream, 2) {
            assert_eq!(counts.count(&gram), n);
        }
    }

    #[test]
    fn hyperloglog_is_close() {
        for n in [10u64, 1000, 100_000] {
            let mut h = HyperLogLog::new();
            for i in 0..n {
                h.add(hash_key(i));
                h.add(hash_key(i));
            }
            let e = h.estimate();
            assert!((e - n as f64).abs() < 0.06 * n as f64 + 2.0, "{n} -> {e}");
        }
    }

    #[test]
    fn bad_orders_are_refused() {
        let c = corpus("a b");
        let stream = PaddedStream::new(&c, true, None);
        assert!(count_ngrams(&stream, 0, 5, &Job::none()).is_err());
        assert!(count_ngrams(&stream, MAX_ORDER + 1, 5, &Job::none()).is_err());
    }

    #[test]
    fn suffix_links_point_at_the_suffix() {
        let c = corpus("a b c d\nb c d");
        let stream = PaddedStream::new(&c, true, None);
        let counts = count_ngrams(&stream, 3, c.vocab().len(), &Job::none()).unwrap();
        let abc = counts.find(&[3, 4, 5]).unwrap();
        let bc = counts.find(&[4, 5]).unwrap();
        assert_eq!(counts.higher[1].suffix(abc as usize), bc);
        assert_eq!(counts.higher[0].suffix(bc as usize), 5);
    }
}
