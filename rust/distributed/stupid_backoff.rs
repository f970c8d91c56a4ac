//! Step 4 for stupid backoff (Brants et al. 2007, the estimator of Google's MapReduce models),
//! which only needs the raw counts of step 3: one task merges each order's partitions in prefix
//! order, where the n-grams of a context are contiguous, so each score c(hw)/c(h.) comes out of
//! one pass, and fills the tables in that order (the canonical layout of
//! [`crate::formats::binary`]). The model is then whole in that task's memory, as it is in every
//! process that loads it.

use std::path::Path;

use super::interpolate::unigram_counts;
use super::{adjusted_path, merge_each, read_vocab};
use crate::corpus::vocab;
use crate::error::{Error, Result};
use crate::estimate::{fallback_of, Smoothing};
use crate::formats::binary::SortedOrder;
use crate::model::Model;
use crate::ngram::probing::Entry;
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout};

/// The stupid-backoff model (`alpha` its back-off factor) of order `order` from step 3's files
/// of `partitions` partitions; `ngram_counts` are the summed n-grams per order (index m-1,
/// orders 2..=N). It is the model `fit` makes on all the shards, in the canonical layout.
pub fn stupid_backoff_model(
    job: &Path,
    partitions: usize,
    order: usize,
    alpha: f64,
    ngram_counts: &[u64],
    memory: usize,
    task: &Job,
) -> Result<Model> {
    if ngram_counts.len() != order {
        return Err(Error::invalid(format!(
            "ngram_counts needs one entry per order ({order}), got {}",
            ngram_counts.len()
        )));
    }
    let vocab = read_vocab(job)?;
    let unigram_counts = unigram_counts(job, partitions, vocab.len())?;
    // S(w) = c(w) / N, N the count of every predictable word (`<s>` is never predicted)
    let total: u64 = (0..vocab.len() as u32)
        .filter(|&w| vocab::predictable(w, true))
        .map(|w| u64::from(unigram_counts[w as usize]))
        .sum();
    if total == 0 {
        return Err(Error::EmptyCorpus(
            "cannot fit a model on a corpus with no token".into(),
        ));
    }
    let unigram_logp = unigram_counts
        .iter()
        .enumerate()
        .map(|(w, &c)| {
            if vocab::predictable(w as u32, true) {
                (f64::from(c) / total as f64).ln()
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    let smoothing = Smoothing::StupidBackoff { alpha };
    let (fallback, missing_weight) = fallback_of(&smoothing, vocab.len() as f64);
    let mut model = Model {
        order,
        bos_eos: true,
        unigram_logp,
        unigram_weight: vec![missing_weight; vocab.len()],
        vocab,
        unigram_counts,
        higher: Vec::with_capacity(order - 1),
        fallback,
        missing_weight,
        normalized: smoothing.is_normalized(),
        smoothing: smoothing.name().to_string(),
        discounts: Vec::new(),
    };
    task.stage("stupid backoff", ngram_counts[1..].iter().sum())?;
    for m in 2..=order {
        let len = usize::try_from(ngram_counts[m - 1])
            .map_err(|_| Error::invalid(format!("too many {m}-grams for this machine")))?;
        let table = fill_order(&model, job, partitions, m, len, alpha, memory, task)?;
        model.higher.push(table);
    }
    Ok(model)
}

/// The table of order `m` (`len` n-grams) from the partitions' prefix-sorted raw counts.
#[allow(clippy::too_many_arguments)]
fn fill_order(
    model: &Model,
    job: &Path,
    partitions: usize,
    m: usize,
    len: usize,
    alpha: f64,
    memory: usize,
    task: &Job,
) -> Result<crate::model::OrderTable> {
    let mut stream = merge_each(
        partitions,
        |p| adjusted_path(job, m, p),
        Layout::new(m, 1, KeyOrder::Prefix),
        false,
        memory,
    )?;
    let weight = if m < model.order { alpha.ln() } else { 0.0 };
    let mut table = SortedOrder::new(m, len, true);
    // the n-grams of the current context (its first m-1 words), m words and the count each
    let mut context: Vec<u32> = Vec::new();
    let mut done = 0;
    let mut flush = |context: &mut Vec<u32>| -> Result<()> {
        let total: u64 = context.chunks_exact(m + 1).map(|r| u64::from(r[m])).sum();
        for r in context.chunks_exact(m + 1) {
            let logp = (f64::from(r[m]) / total as f64).ln();
            table.push(model, &r[..m], Entry { logp, weight }, r[m])?;
        }
        context.clear();
        Ok(())
    };
    while let Some(r) = stream.next_record()? {
        task.tick(&mut done)?;
        if context.get(..m - 1).is_some_and(|c| c != &r[..m - 1]) {
            flush(&mut context)?;
        }
        context.extend_from_slice(r);
    }
    flush(&mut context)?;
    table.finish()
}
