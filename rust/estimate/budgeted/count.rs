//! Step 1 of budgeted estimation: every predicted token's longest n-gram, counted on disk in
//! context order.

use crate::corpus::vocab::{BOS, EOS};
use crate::corpus::Corpus;
use crate::error::Result;
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordStream, Sorter, WorkDir, PAD};

/// Step 1: every predicted token's longest n-gram (up to `order`), counted, in context order.
pub(super) fn count_highest(
    corpus: &Corpus,
    order: usize,
    memory: usize,
    dir: &WorkDir,
    job: &Job,
) -> Result<RecordStream> {
    let mut sorter = Sorter::new(
        Layout::new(order, 1, KeyOrder::Context),
        true,
        memory,
        dir,
        "counts",
    );
    highest_ngrams(corpus, order, None, job, |record| sorter.push(record))?;
    sorter.finish()
}

/// Hands `push` a record `[n-gram, 1]` for every predicted token's longest n-gram (up to
/// `order`; shorter ones at sentence starts are left-padded with [`PAD`]), with token ids
/// translated through `ids` if given (to another vocabulary's ids).
pub(crate) fn highest_ngrams(
    corpus: &Corpus,
    order: usize,
    ids: Option<&[u32]>,
    job: &Job,
    mut push: impl FnMut(&[u32]) -> Result<()>,
) -> Result<()> {
    job.stage("counting n-grams", corpus.num_sentences() as u64)?;
    let mut done = 0;
    let mut record = vec![PAD; order + 1];
    record[order] = 1;
    let mut sentence: Vec<u32> = Vec::new();
    for s in 0..corpus.num_sentences() {
        // <s> ... </s>, padded here rather than in a copy of the whole corpus
        sentence.clear();
        sentence.push(BOS);
        match ids {
            None => sentence.extend_from_slice(corpus.sentence(s)),
            Some(ids) => sentence.extend(corpus.sentence(s).iter().map(|&w| ids[w as usize])),
        }
        sentence.push(EOS);
        for end in 1..sentence.len() {
            let start = (end + 1).saturating_sub(order);
            let len = end + 1 - start;
            record[..order - len].fill(PAD);
            record[order - len..order].copy_from_slice(&sentence[start..=end]);
            push(&record)?;
        }
        job.tick(&mut done)?;
    }
    Ok(())
}
