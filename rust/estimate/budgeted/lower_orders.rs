//! Step 2 of budgeted estimation, in context order: the lower orders and their effective counts
//! derived from the highest order's counts in one pass, each order coming out in context order
//! with no sort of its own.
//!
//! In context order (w(m-1), ..., w1, then wm) the m-grams that share a context are contiguous,
//! and so are the (m+1)-grams whose suffixes share one (their words w2 ... wm): so one block of
//! the order above at a time gives every m-gram of one context, with its raw count (the sum of
//! those of the (m+1)-grams it ends) and its distinct left extensions (those (m+1)-grams that are
//! real n-grams, not shorter ones padded). Sorted by their last word, the block's m-grams come
//! out in context order; and the blocks of order m, handed down the same way, make the blocks
//! of order m-1. The order above a unigram is every bigram: the unigrams are summed by word id.
//!
//! The suffix-order pass of `adjust.rs` gives the same counts, but each order then needs a sort
//! into context order; here only the highest order is sorted (when it is counted).

use super::adjust::{Adjusted, Tally};
use crate::error::Result;
use crate::estimate::{Pruning, Smoothing};
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordReader, RecordWriter, Records, WorkDir, PAD};
use crate::util::words::{equal_words, extend_words};

/// Step 2 from `counts`: the highest order's n-grams (`[gram, count]`, left-padded with [`PAD`]
/// where shorter at sentence starts) in context order, each once. Every order 2..=N comes back
/// in context order, in a file of the work directory.
pub(super) fn lower_orders(
    counts: impl Records,
    order: usize,
    vocab_len: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    dir: &WorkDir,
    job: &Job,
) -> Result<Adjusted<RecordReader>> {
    let estimator = (smoothing, pruning);
    derive_lower_orders(counts, order, vocab_len, estimator, dir, job, SUM_AT)
}

/// [`lower_orders`], summing a block's ends once it holds `sum_at` of them (tests use few).
fn derive_lower_orders(
    mut counts: impl Records,
    order: usize,
    vocab_len: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    dir: &WorkDir,
    job: &Job,
    sum_at: usize,
) -> Result<Adjusted<RecordReader>> {
    job.stage("adjusting counts", 0)?;
    let mut done = 0;
    let mut derive = Derivation {
        tally: Tally::new(order, vocab_len, smoothing, pruning),
        files: (2..=order)
            .map(|m| RecordWriter::create(dir, "adjusted", Layout::new(m, 1, KeyOrder::Context)))
            .collect::<Result<_>>()?,
        blocks: (0..order).map(|_| Block::default()).collect(),
        unigram_raw: vec![0; vocab_len],
        unigram_extensions: vec![0; vocab_len],
        row: Vec::with_capacity(order + 1),
        sum_at,
    };
    while let Some(r) = counts.next_record()? {
        job.tick(&mut done)?;
        let (gram, count) = (&r[..order], u64::from(r[order]));
        if gram[0] != PAD {
            derive.write(gram, count, 0)?;
        }
        derive.add(order - 1, gram, count)?;
    }
    for m in (2..order).rev() {
        derive.finish_block(m)?;
    }
    derive.finish()
}

/// The m-grams of one context being summed (m >= 2): their last words, each with the raw count
/// and the left extensions (0 or 1: whether it is a real n-gram, not a shorter one padded) of an
/// (m+1)-gram ending in it, in the order they came, or already summed by word.
#[derive(Default)]
struct Block {
    context: Vec<u32>,
    ends: Vec<End>,
    /// The length at which the ends are summed next (0: the pass's least).
    sum_at: usize,
}

/// A last word of a block, with the (m+1)-grams' raw counts and left extensions summed so far.
struct End {
    word: u32,
    extensions: u32,
    raw: u64,
}

/// Ends held by a block before those of the same word are summed: a context with more
/// continuations (a frequent word's, as the context of bigrams) then takes memory in proportion
/// to its distinct last words, at most the vocabulary (16 bytes a word, twice), not to its
/// (m+1)-grams.
const SUM_AT: usize = 1 << 20;

impl Block {
    /// Sums the ends of the same word, in order of words.
    fn sum_by_word(&mut self) {
        // the (m+1)-grams of each of the block's contexts come sorted by last word
        if !self.ends.is_sorted_by_key(|e| e.word) {
            self.ends.sort_unstable_by_key(|e| e.word);
        }
        self.ends.dedup_by(|end, sum| {
            let same = end.word == sum.word;
            if same {
                sum.raw += end.raw;
                sum.extensions += end.extensions;
            }
            same
        });
    }
}

/// The state of the pass: one block per order below the highest (index m), the unigrams'
/// sums, and where each order's n-grams go.
struct Derivation<'a> {
    tally: Tally<'a>,
    /// Orders 2..=N (index m-2), in context order.
    files: Vec<RecordWriter<'a>>,
    /// Index m, for m in 2..N (0 and 1 unused).
    blocks: Vec<Block>,
    unigram_raw: Vec<u64>,
    unigram_extensions: Vec<u32>,
    /// Scratch for one record.
    row: Vec<u32>,
    /// Ends a block holds before they are summed by word, at least.
    sum_at: usize,
}

impl Derivation<'_> {
    /// Adds `longer`, an (m+1)-gram (its first word [`PAD`] where it is a shorter n-gram padded)
    /// seen `raw` times, to the m-gram it ends; (m+1)-grams come in context order.
    fn add(&mut self, m: usize, longer: &[u32], raw: u64) -> Result<()> {
        debug_assert_eq!(longer.len(), m + 1);
        let (real, last) = (longer[0] != PAD, longer[m]);
        if m == 1 {
            self.unigram_raw[last as usize] += raw;
            self.unigram_extensions[last as usize] += u32::from(real);
            return Ok(());
        }
        let context = &longer[1..m];
        let block = &self.blocks[m];
        if !block.ends.is_empty() && !equal_words(&block.context, context) {
            self.finish_block(m)?;
        }
        let block = &mut self.blocks[m];
        if block.ends.is_empty() {
            block.context.clear();
            extend_words(&mut block.context, context);
        }
        block.ends.push(End {
            word: last,
            extensions: u32::from(real),
            raw,
        });
        if block.ends.len() >= block.sum_at.max(self.sum_at) {
            block.sum_by_word();
            block.sum_at = 2 * block.ends.len();
        }
        Ok(())
    }

    /// Writes the m-grams of order m's block (if any) in context order, and hands each to
    /// order m-1.
    fn finish_block(&mut self, m: usize) -> Result<()> {
        let mut block = std::mem::take(&mut self.blocks[m]);
        block.sum_by_word();
        let mut gram = Vec::with_capacity(m);
        for end in &block.ends {
            gram.clear();
            extend_words(&mut gram, &block.context);
            gram.push(end.word);
            if gram[0] != PAD {
                self.write(&gram, end.raw, end.extensions)?;
            }
            self.add(m - 1, &gram, end.raw)?;
        }
        block.ends.clear();
        block.sum_at = 0;
        self.blocks[m] = block;
        Ok(())
    }

    /// Writes the m-gram `gram` (a real n-gram, m >= 2) with its effective count.
    fn write(&mut self, gram: &[u32], raw: u64, extensions: u32) -> Result<()> {
        let m = gram.len();
        let effective = self
            .tally
            .effective(gram, raw, extensions)?
            .expect("an n-gram of order 2 or more");
        self.row.clear();
        extend_words(&mut self.row, gram);
        self.row.push(effective);
        self.files[m - 2].push(&self.row)
    }

    /// The unigrams' effective counts, and every order's file to read.
    fn finish(mut self) -> Result<Adjusted<RecordReader>> {
        for w in 0..self.unigram_raw.len() {
            let raw = self.unigram_raw[w];
            if raw > 0 {
                self.tally
                    .effective(&[w as u32], raw, self.unigram_extensions[w])?;
            }
        }
        let higher = self
            .files
            .into_iter()
            .map(RecordWriter::into_reader)
            .collect::<Result<Vec<_>>>()?;
        Ok(self.tally.into_adjusted(higher))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Corpus, SentenceMode};
    use crate::estimate::budgeted::{adjust, highest_ngrams};
    use crate::util::spill::{collect, RecordStream, Sorter};

    fn corpus() -> Corpus {
        // a few words over many short sentences: n-grams of every order repeat, and those at
        // sentence starts are padded
        let mut state = 7u64;
        let mut draw = |below: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % below
        };
        let mut text = String::new();
        for _ in 0..400 {
            for _ in 0..=draw(12) {
                text.push_str(["a", "b", "c", "d", "e", "f"][draw(6) as usize]);
                text.push(' ');
            }
            text.push('\n');
        }
        let mut c = Corpus::new();
        c.push_whitespace_text(&text, SentenceMode::Lines).unwrap();
        c.finish();
        c
    }

    fn counted(c: &Corpus, order: usize, key_order: KeyOrder, dir: &WorkDir) -> RecordStream {
        let mut sorter = Sorter::new(Layout::new(order, 1, key_order), true, 0, dir, "t");
        highest_ngrams(c, order, None, &Job::none(), |r| sorter.push(r)).unwrap();
        sorter.finish().unwrap()
    }

    /// The suffix-order pass, each order then sorted in context order, and this one agree on
    /// every effective count, count-of-counts and n-gram, in the same order.
    #[test]
    fn derives_what_the_suffix_order_pass_and_its_sorts_give() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let c = corpus();
        let vocab_len = c.vocab().len();
        for smoothing in [
            Smoothing::ModifiedKneserNey {
                discount_fallback: true,
            },
            Smoothing::WittenBell,
        ] {
            for (order, prune) in [(2, &[][..]), (3, &[]), (5, &[]), (4, &[0, 1, 1])] {
                let pruning = Pruning::new(prune, order).unwrap();
                let estimator = (&smoothing, &pruning);
                let by_sort = adjust(
                    counted(&c, order, KeyOrder::Suffix, &dir),
                    (order, KeyOrder::Context),
                    vocab_len,
                    estimator,
                    0,
                    &dir,
                    &Job::none(),
                )
                .unwrap();
                let sorted: Vec<Vec<Vec<u32>>> = by_sort.higher.into_iter().map(collect).collect();
                // summing each block's ends every 3 of them: the memory bound's path too
                for sum_at in [3, SUM_AT] {
                    let derived = derive_lower_orders(
                        counted(&c, order, KeyOrder::Context, &dir),
                        order,
                        vocab_len,
                        estimator,
                        &dir,
                        &Job::none(),
                        sum_at,
                    )
                    .unwrap();
                    let case = format!("{smoothing:?} order {order} prune {prune:?}");
                    assert_eq!(derived.unigrams, by_sort.unigrams, "{case}");
                    assert_eq!(derived.count_of_counts, by_sort.count_of_counts, "{case}");
                    assert_eq!(derived.ngram_counts, by_sort.ngram_counts, "{case}");
                    assert!(derived.ngram_counts[order - 1] > 10, "{case}");
                    for (m, file) in derived.higher.into_iter().enumerate() {
                        assert_eq!(collect(file), sorted[m], "{case}: order {}", m + 2);
                    }
                }
            }
        }
    }
}
