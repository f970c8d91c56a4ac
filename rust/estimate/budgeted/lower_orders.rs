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
    mut counts: impl Records,
    order: usize,
    vocab_len: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    dir: &WorkDir,
    job: &Job,
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
/// of an (m+1)-gram ending in it and whether that one is a real n-gram (not a shorter one
/// padded), in the order they came.
#[derive(Default)]
struct Block {
    context: Vec<u32>,
    ends: Vec<(u32, u64, bool)>,
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
        block.ends.push((last, raw, real));
        Ok(())
    }

    /// Writes the m-grams of order m's block (if any) in context order, and hands each to
    /// order m-1.
    fn finish_block(&mut self, m: usize) -> Result<()> {
        let Block { context, mut ends } = std::mem::take(&mut self.blocks[m]);
        // the (m+1)-grams of one context's sub-blocks come each sorted by last word
        if !ends.is_sorted_by_key(|e| e.0) {
            ends.sort_unstable_by_key(|e| e.0);
        }
        let mut gram = Vec::with_capacity(m);
        let mut i = 0;
        while i < ends.len() {
            let last = ends[i].0;
            let (mut raw, mut extensions) = (0u64, 0u32);
            while i < ends.len() && ends[i].0 == last {
                raw += ends[i].1;
                extensions += u32::from(ends[i].2);
                i += 1;
            }
            gram.clear();
            extend_words(&mut gram, &context);
            gram.push(last);
            if gram[0] != PAD {
                self.write(&gram, raw, extensions)?;
            }
            self.add(m - 1, &gram, raw)?;
        }
        ends.clear();
        self.blocks[m] = Block { context, ends };
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
