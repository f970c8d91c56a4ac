//! Estimators: from n-gram counts to a [`Model`] in backoff form.
//!
//! The formulas, with c(hw) the count of n-gram (h, w), c(h.) = sum_w c(hw), N_k(h.) the number
//! of words w with c(hw) = k (N3+ and N1+ for >= 3 and >= 1), h' the history without its oldest
//! word and |V| the predictable vocabulary (every type, `</s>` and `<unk>`, never `<s>`):
//!
//! - MLE: c(hw)/c(h.), 0 for an unseen context.
//! - Additive (k): (c(hw)+k)/(c(h.)+k|V|), 1/|V| for an unseen context.
//! - Interpolated family, recursing down to p0(w) = 1/|V|:
//!   p(w|h) = alpha(hw) + gamma(h) p(w|h'), and p(w|h') when c(h.) = 0;
//!   Witten-Bell: alpha = c(hw)/(c(h.)+N1+(h.)), gamma = N1+(h.)/(c(h.)+N1+(h.));
//!   absolute discounting: alpha = max(c(hw)-D, 0)/c(h.), gamma = D N1+(h.)/c(h.);
//!   Kneser-Ney: the same on adjusted counts below the highest order (a(g) = number of distinct
//!   words before g, raw counts for n-grams starting with `<s>`); modified Kneser-Ney: D depends on
//!   the count (D1, D2, D3+) and gamma = (D1 N1 + D2 N2 + D3+ N3+)(h.)/c(h.), with the discounts of
//!   each order computed from its count-of-counts as KenLM's lmplz does.
//! - Stupid backoff (alpha): c(hw)/c(h.) if seen, else alpha S(w|h'); S(w) = c(w)/N. Not a
//!   probability.
//!
//! In backoff form, alpha + gamma p(w|h') is stored for every counted (h, w) and ln gamma(h) for
//! every context, which is exact: for an uncounted w, alpha is 0.
//!
//! **Pruning** ([`Pruning`], lmplz's `--prune`): an n-gram of order m >= 2 whose raw count is at
//! most the order's threshold is left out of the model and its alpha moves into its context's
//! gamma, so every distribution still sums to 1. As in lmplz, pruned n-grams still count in the
//! context totals c(h.), in Kneser-Ney's adjusted counts and in the count-of-counts behind the
//! discounts, but not in N1/N2/N3+(h.); with non-decreasing thresholds every prefix and suffix
//! of a kept n-gram is kept.

pub mod budgeted;
mod smoothing;

pub use smoothing::{DefaultValue, Parameter, Parameters, Smoothing, ESTIMATORS};

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::corpus::vocab::{self, Vocab, BOS};
use crate::error::{Error, Result};
use crate::model::{Fallback, Model, OrderTable};
use crate::ngram::counts::{NgramCounts, OrderCounts};
use crate::ngram::keys::{key_prefix, key_word};
use crate::ngram::probing::{Entry, Filled, ProbingTable};
use crate::util::huge_pages;
use crate::util::job::Job;
use crate::util::per_thread;
use crate::util::prefetch::prefetch_ahead;

/// Count thresholds per order below which n-grams are pruned (lmplz's `--prune`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pruning {
    /// Threshold of order m at index m-1 (0: keep every n-gram); empty when nothing is pruned.
    thresholds: Vec<u64>,
}

impl Pruning {
    /// No pruning.
    pub fn none() -> Self {
        Pruning::default()
    }

    /// Thresholds as lmplz reads `--prune`: one per order from unigrams up, the last one
    /// repeated for the remaining orders of `order`; they must not decrease (otherwise a kept
    /// n-gram could lose its prefix or suffix), and unigrams are never pruned (threshold 0).
    pub fn new(thresholds: &[u64], order: usize) -> Result<Self> {
        if thresholds.len() > order {
            return Err(Error::invalid(format!(
                "prune: {} thresholds given for a model of order {order} (one per order, \
                 unigrams first)",
                thresholds.len()
            )));
        }
        if let Some(&t) = thresholds.first().filter(|&&t| t != 0) {
            return Err(Error::invalid(format!(
                "prune: the unigram threshold must be 0, got {t} (to drop rare words, map them to \
                 <unk> with min_count instead)"
            )));
        }
        if let Some(&[before, after]) = thresholds.windows(2).find(|w| w[1] < w[0]) {
            return Err(Error::invalid(format!(
                "prune: thresholds must not decrease from one order to the next, got {after} \
                 after {before} (a kept n-gram would lose its prefix or suffix)"
            )));
        }
        if thresholds.iter().all(|&t| t == 0) {
            return Ok(Pruning::none());
        }
        let mut thresholds = thresholds.to_vec();
        let last = *thresholds.last().unwrap_or(&0);
        thresholds.resize(order, last);
        Ok(Pruning { thresholds })
    }

    /// Whether any n-gram can be pruned.
    pub fn is_active(&self) -> bool {
        !self.thresholds.is_empty()
    }

    /// Whether an n-gram of order `m` seen `raw_count` times is pruned.
    #[inline]
    pub fn prunes(&self, m: usize, raw_count: u64) -> bool {
        m >= 2 && self.thresholds.get(m - 1).is_some_and(|&t| raw_count <= t)
    }

    /// The thresholds per order (empty when nothing is pruned).
    pub fn thresholds(&self) -> &[u64] {
        &self.thresholds
    }
}

/// Count statistics of the continuations of one context.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ContextStats {
    /// Sum of the counts of every continuation, pruned ones included.
    total: u64,
    n1: u32,
    n2: u32,
    n3p: u32,
    /// Sum of the counts of the pruned continuations (their mass goes to gamma).
    pruned: u64,
}

impl ContextStats {
    /// Adds a continuation seen `c` (effective) times; `pruned` ones only count in the totals.
    pub(crate) fn add(&mut self, c: u32, pruned: bool) {
        self.total += u64::from(c);
        match Tally::of(c, pruned) {
            Tally::Pruned => self.pruned += u64::from(c),
            Tally::N1 => self.n1 += 1,
            Tally::N2 => self.n2 += 1,
            Tally::N3p => self.n3p += 1,
            Tally::Nothing => {}
        }
    }

    /// Adds the continuations counted in `other`.
    fn merge(&mut self, other: &ContextStats) {
        self.total += other.total;
        self.n1 += other.n1;
        self.n2 += other.n2;
        self.n3p += other.n3p;
        self.pruned += other.pruned;
    }

    fn distinct(&self) -> u32 {
        self.n1 + self.n2 + self.n3p
    }
}

/// The counter of [`ContextStats`] that a continuation goes to, besides the total.
enum Tally {
    Pruned,
    N1,
    N2,
    N3p,
    Nothing,
}

impl Tally {
    /// The counter of a continuation seen `c` (effective) times, `pruned` or not.
    #[inline]
    fn of(c: u32, pruned: bool) -> Self {
        match (pruned, c) {
            (true, _) => Tally::Pruned,
            (false, 0) => Tally::Nothing,
            (false, 1) => Tally::N1,
            (false, 2) => Tally::N2,
            (false, _) => Tally::N3p,
        }
    }
}

/// Contexts of one order up to which each thread sums their statistics in an array of its own
/// (1 MiB of [`ContextStats`]: it stays in a core's cache).
const PRIVATE_STATS_CONTEXTS: usize = (1 << 20) / size_of::<ContextStats>();

/// The [`ContextStats`] of every context of one order, gathered by all threads at once. Every
/// field is an integer sum, so the result does not depend on the order in which the threads add.
/// The sums of pruned counts live apart, allocated only when pruning is active: a context then
/// costs 24 bytes rather than 32 (at the in-memory fit's peak, the statistics of the 4-gram
/// contexts of a 5-gram model are its largest array).
struct SharedStats {
    /// Total and N1/N2/N3+ by context.
    counts: Vec<SharedCounts>,
    /// Sum of the pruned continuations' counts by context; empty when nothing is pruned.
    pruned: Vec<AtomicU64>,
}

/// The sums of [`ContextStats`] but the pruned counts, for one context.
#[derive(Debug, Default)]
struct SharedCounts {
    total: AtomicU64,
    n1: AtomicU32,
    n2: AtomicU32,
    n3p: AtomicU32,
}

impl SharedStats {
    /// Zeroed statistics for `contexts` contexts, with room for pruned counts if `pruning`.
    fn new(contexts: usize, pruning: bool) -> Self {
        let zeros = |n: usize| (0..n).into_par_iter().map(|_| AtomicU64::new(0)).collect();
        SharedStats {
            counts: huge_pages::par_collect(
                (0..contexts)
                    .into_par_iter()
                    .map(|_| SharedCounts::default()),
            ),
            pruned: if pruning { zeros(contexts) } else { Vec::new() },
        }
    }

    /// The statistics `sums` (one per context), with room for pruned counts if `pruning`.
    fn from_sums(sums: &[ContextStats], pruning: bool) -> Self {
        SharedStats {
            counts: sums
                .iter()
                .map(|s| SharedCounts {
                    total: AtomicU64::new(s.total),
                    n1: AtomicU32::new(s.n1),
                    n2: AtomicU32::new(s.n2),
                    n3p: AtomicU32::new(s.n3p),
                })
                .collect(),
            pruned: if pruning {
                sums.iter().map(|s| AtomicU64::new(s.pruned)).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Number of contexts.
    fn len(&self) -> usize {
        self.counts.len()
    }

    /// [`ContextStats::add`] to context `i`, from any thread; `pruned` only when pruning is
    /// active.
    #[inline]
    fn add(&self, i: usize, c: u32, pruned: bool) {
        let s = &self.counts[i];
        s.total.fetch_add(u64::from(c), Relaxed);
        let counter = match Tally::of(c, pruned) {
            Tally::Pruned => {
                self.pruned[i].fetch_add(u64::from(c), Relaxed);
                return;
            }
            Tally::N1 => &s.n1,
            Tally::N2 => &s.n2,
            Tally::N3p => &s.n3p,
            Tally::Nothing => return,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// The counters of context `i` (to prefetch them).
    #[inline]
    fn counters(&self, i: usize) -> &SharedCounts {
        &self.counts[i]
    }

    /// The statistics gathered for context `i` (read once every thread is done).
    #[inline]
    fn get(&self, i: usize) -> ContextStats {
        let s = &self.counts[i];
        ContextStats {
            total: s.total.load(Relaxed),
            n1: s.n1.load(Relaxed),
            n2: s.n2.load(Relaxed),
            n3p: s.n3p.load(Relaxed),
            pruned: self.pruned.get(i).map_or(0, |p| p.load(Relaxed)),
        }
    }
}

/// The entries of one order, by slot: word ids for unigrams, counting-table slots above.
struct OrderEntries<'a> {
    m: usize,
    vocab_len: usize,
    table: Option<&'a OrderCounts>,
}

impl OrderEntries<'_> {
    fn capacity(&self) -> usize {
        self.table.map_or(self.vocab_len, OrderCounts::capacity)
    }

    /// The key of the entry in `slot` (the word id for unigrams), if the slot is used.
    #[inline]
    fn key(&self, slot: usize) -> Option<u64> {
        match self.table {
            None => Some(slot as u64),
            Some(t) => t.key(slot),
        }
    }

    /// The context entry (order m-1) of a key; unigrams have the single empty context 0.
    #[inline]
    fn context(&self, key: u64) -> usize {
        if self.m == 1 {
            0
        } else {
            key_prefix(key) as usize
        }
    }

    /// The entry (order m-1) of the n-gram in `slot` without its oldest word.
    #[inline]
    fn suffix(&self, slot: usize, key: u64) -> usize {
        match (self.m, self.table) {
            (2, _) => key_word(key) as usize,
            (_, Some(t)) => t.suffix(slot) as usize,
            _ => 0,
        }
    }
}

/// Builds the model for `counts` (whose ids are those of `vocab`); reports its passes (about four
/// per order) to `job` and stops with [`Error::Cancelled`] when it is cancelled.
pub fn estimate(
    counts: NgramCounts,
    vocab: Vocab,
    bos_eos: bool,
    smoothing: Smoothing,
    pruning: &Pruning,
    job: &Job,
) -> Result<Model> {
    smoothing.validate()?;
    check_pruning(&smoothing, pruning)?;
    if counts.num_predicted == 0 {
        return Err(Error::EmptyCorpus(
            "cannot fit a model on a corpus with no token".into(),
        ));
    }
    let order = counts.order();
    // passes: adjusted counts and context statistics (one step per order each), probabilities
    // (order steps), tables (order - 1 steps)
    job.stage("estimating", 4 * order as u64 - 1)?;
    let mut passes = Passes::new(counts, vocab.len(), bos_eos, &smoothing, pruning, job);
    check_additive_scale(&smoothing, passes.vocab_size)?;
    let effective = passes.effective_counts();
    job.step(order as u64)?;
    let discounts = discounts_for(&smoothing, &effective, &passes)?;
    let (fallback, missing_weight) = fallback_of(&smoothing, passes.vocab_size);
    let Built {
        unigram_logp,
        unigram_weight,
        tables,
        counts: raw_counts,
    } = passes.build(effective, &discounts)?;
    let higher = tables
        .into_iter()
        .zip(raw_counts)
        .map(|(table, counts)| OrderTable { table, counts })
        .collect();
    Ok(Model {
        order,
        bos_eos,
        vocab,
        unigram_logp,
        unigram_weight,
        unigram_counts: std::mem::take(&mut passes.counts.unigrams),
        higher,
        fallback,
        missing_weight,
        normalized: smoothing.is_normalized(),
        smoothing: smoothing.name().to_string(),
        discounts,
    })
}

/// Refuses an additive `k` so large that k|V|, the denominator's part of every probability,
/// is not a finite number (every probability would be 0): long before that, from k|V| of about
/// 1e17 times the corpus, each distribution is 1/|V| to double precision.
fn check_additive_scale(smoothing: &Smoothing, vocab_size: f64) -> Result<()> {
    match *smoothing {
        Smoothing::Additive { k } if !(k * vocab_size).is_finite() => Err(Error::invalid(format!(
            "additive: k = {k:e} is too large for a vocabulary of {} words (k times the \
             vocabulary size overflows a double)",
            vocab_size as u64
        ))),
        _ => Ok(()),
    }
}

/// How a model of `smoothing` scores unstored n-grams, and the ln weight of an unseen context.
pub(crate) fn fallback_of(smoothing: &Smoothing, vocab_size: f64) -> (Fallback, f64) {
    match smoothing {
        Smoothing::Mle => (Fallback::Flat, f64::NEG_INFINITY),
        Smoothing::Additive { .. } => (Fallback::Flat, -(vocab_size.ln())),
        Smoothing::StupidBackoff { alpha } => (Fallback::Chain, alpha.ln()),
        _ => (Fallback::Chain, 0.0),
    }
}

/// The in-memory estimation's passes over the counting tables, each one order at a time or all
/// orders in parallel: effective counts, context statistics, probabilities, backoff tables. It
/// owns the counting tables so that it can free each one once the model's table of its order is
/// built.
struct Passes<'a> {
    counts: NgramCounts,
    vocab_len: usize,
    bos_eos: bool,
    /// |V|: the predictable vocabulary's size.
    vocab_size: f64,
    smoothing: &'a Smoothing,
    pruning: &'a Pruning,
    job: &'a Job,
}

impl<'a> Passes<'a> {
    fn new(
        counts: NgramCounts,
        vocab_len: usize,
        bos_eos: bool,
        smoothing: &'a Smoothing,
        pruning: &'a Pruning,
        job: &'a Job,
    ) -> Self {
        Passes {
            counts,
            vocab_len,
            bos_eos,
            vocab_size: (vocab_len - 1 - usize::from(!bos_eos)) as f64,
            smoothing,
            pruning,
            job,
        }
    }

    fn order(&self) -> usize {
        self.counts.order()
    }

    /// The entries of order `m`.
    fn level(&self, m: usize) -> OrderEntries<'_> {
        OrderEntries {
            m,
            vocab_len: self.vocab_len,
            table: (m >= 2).then(|| &self.counts.higher[m - 2]),
        }
    }

    /// The entries of every order, lowest first.
    fn levels(&self) -> Vec<OrderEntries<'_>> {
        (1..=self.order()).map(|m| self.level(m)).collect()
    }

    /// Whether word `w` can be predicted (never `<s>`; `</s>` only with sentence markers).
    fn predictable(&self, w: usize) -> bool {
        vocab::predictable(w as u32, self.bos_eos)
    }

    /// The key of the entry in `slot` of `level`, if it is used and predicts a predictable word.
    fn used(&self, level: &OrderEntries, slot: usize) -> Option<u64> {
        let key = level.key(slot)?;
        (level.m > 1 || self.predictable(slot)).then_some(key)
    }

    /// Whether the n-gram of order `m` in `slot` is pruned away.
    fn pruned(&self, m: usize, slot: usize) -> bool {
        self.pruning.is_active()
            && m >= 2
            && self
                .pruning
                .prunes(m, self.counts.higher[m - 2].count(slot).into())
    }

    /// The counts each order is estimated from, by slot: raw, or Kneser-Ney's adjusted counts.
    fn effective_counts(&self) -> Vec<Vec<u32>> {
        let counts = &self.counts;
        let levels = self.levels();
        let adjusted = self.smoothing.uses_adjusted_counts();
        let bos_starts = if adjusted {
            starts_with_bos(&levels[..self.order() - 1])
        } else {
            Vec::new()
        };
        (1..=self.order())
            .into_par_iter()
            .map(|m| {
                if self.job.is_cancelled() {
                    Vec::new()
                } else if adjusted && m < self.order() {
                    adjusted_counts(counts, &levels, &bos_starts, m)
                } else if m == 1 {
                    counts.unigrams.clone()
                } else {
                    (0..levels[m - 1].capacity())
                        .into_par_iter()
                        .map(|s| counts.higher[m - 2].count(s))
                        .collect()
                }
            })
            .collect()
    }

    /// The statistics of every context of order `m` (the entries of order m-1) from the
    /// effective counts `eff` of order m: one pass in slot order, on all cores. Few contexts
    /// (the single one of unigrams, the words of a small vocabulary) are summed in one private
    /// array per thread and added up at the end: shared counters would be written by every
    /// thread at once, each write taking the cache line from the other cores (2.1 ms for the
    /// unigrams of Machado's 31,352 words, 0.1 ms privately).
    fn context_stats(&self, m: usize, eff: &[u32]) -> SharedStats {
        // the contexts of order m are the entries of order m-1 (one empty context for unigrams)
        let contexts = match (m, self.job.is_cancelled()) {
            (_, true) => 0,
            (1, false) => 1,
            _ => self.level(m - 1).capacity(),
        };
        if contexts == 0 {
            // cancelled: nothing to gather, and no context to add to
            SharedStats::new(0, self.pruning.is_active())
        } else if contexts > PRIVATE_STATS_CONTEXTS {
            self.shared_stats(m, eff, contexts)
        } else {
            self.private_stats(m, eff, contexts)
        }
    }

    /// [`Passes::context_stats`] with counters shared by every thread.
    fn shared_stats(&self, m: usize, eff: &[u32], contexts: usize) -> SharedStats {
        let level = self.level(m);
        let st = SharedStats::new(contexts, self.pruning.is_active());
        eff.par_iter().enumerate().for_each(|(slot, &c)| {
            prefetch_ahead(slot, eff.len(), |ahead| {
                let key = self.used(&level, ahead)?;
                Some(st.counters(level.context(key)))
            });
            if let Some(key) = self.used(&level, slot) {
                st.add(level.context(key), c, self.pruned(m, slot));
            }
        });
        st
    }

    /// [`Passes::context_stats`] summed in one array per thread.
    fn private_stats(&self, m: usize, eff: &[u32], contexts: usize) -> SharedStats {
        let level = self.level(m);
        let sums = per_thread::fold(
            eff,
            || vec![ContextStats::default(); contexts],
            |stats, first, part| {
                for (slot, &c) in (first..).zip(part) {
                    if let Some(key) = self.used(&level, slot) {
                        stats[level.context(key)].add(c, self.pruned(m, slot));
                    }
                }
            },
            |a, b| a.iter_mut().zip(&b).for_each(|(x, y)| x.merge(y)),
        );
        SharedStats::from_sums(&sums, self.pruning.is_active())
    }

    /// The model's arrays, one order at a time, lowest first: the probabilities of order m, then
    /// the table of order m-1 (its entries' weights come from the statistics of order m), after
    /// which order m-1's probabilities and order m's statistics are freed, then its counting
    /// table (the raw counts kept for the model), and only then the statistics of order m+1 are
    /// gathered, so that at most one order's statistics and two orders' probabilities exist
    /// beside the tables at any time. One job step per order for the statistics, one for the
    /// probabilities and one per table.
    fn build(&mut self, mut effective: Vec<Vec<u32>>, discounts: &[[f64; 3]]) -> Result<Built> {
        let order = self.order();
        let mut built = Built {
            unigram_logp: Vec::new(),
            unigram_weight: Vec::new(),
            tables: Vec::with_capacity(order - 1),
            counts: Vec::with_capacity(order - 1),
        };
        let mut lower: Vec<f64> = Vec::new();
        for m in 1..=order {
            let d = discounts.get(m - 1).copied().unwrap_or([0.0; 3]);
            let eff = std::mem::take(&mut effective[m - 1]);
            let st = self.context_stats(m, &eff);
            self.job.step(1)?;
            let prob = self.probabilities_of(m, &eff, &st, &d, (m >= 2).then_some(&lower[..]));
            self.job.step(1)?;
            drop(eff);
            if m == 1 {
                built.unigram_logp = self.unigram_logp(&prob);
            } else {
                // the contexts of order m are the entries of order m-1
                let weights = self.context_weights(&st, &d);
                drop(st);
                if m == 2 {
                    built.unigram_weight = weights;
                } else {
                    let table = self.table(m - 1, &lower, Some(&weights));
                    drop((weights, std::mem::take(&mut lower)));
                    self.keep_table(&mut built, m - 1, table)?;
                }
            }
            lower = prob;
        }
        if order >= 2 {
            let table = self.table(order, &lower, None);
            drop(lower);
            self.keep_table(&mut built, order, table)?;
        } else {
            built.unigram_weight = vec![0.0; self.level(1).capacity()];
        }
        Ok(built)
    }

    /// Adds the model's `table` of order `m` >= 2 to `built` with the raw counts of its
    /// entries, taken out of the counting table, which is freed. The arrays the table was made
    /// of are freed first by the caller: the raw counts are copied while the counting table
    /// still exists, the fit's highest point of memory when they add to the arrays of the next
    /// order. One job step.
    fn keep_table(&mut self, built: &mut Built, m: usize, table: ProbingTable) -> Result<()> {
        built.tables.push(table);
        built.counts.push(self.counts.higher[m - 2].take_counts());
        self.job.step(1)
    }

    /// The probability of every entry of order `m` (linear domain) from its effective counts
    /// `eff`, the statistics `st` of its contexts, its discounts `d` and the probabilities of
    /// order m-1 (`lower`, none for unigrams).
    fn probabilities_of(
        &self,
        m: usize,
        eff: &[u32],
        st: &SharedStats,
        d: &[f64; 3],
        lower: Option<&[f64]>,
    ) -> Vec<f64> {
        let level = self.level(m);
        let slots = level.capacity();
        huge_pages::par_collect((0..slots).into_par_iter().map(|slot| {
            prefetch_ahead(slot, slots, |ahead| {
                let key = self.used(&level, ahead)?;
                Some(st.counters(level.context(key)))
            });
            if let Some(lp) = lower {
                prefetch_ahead(slot, slots, |ahead| {
                    let key = level.key(ahead)?;
                    Some(&lp[level.suffix(ahead, key)])
                });
            }
            let Some(key) = self.used(&level, slot).filter(|_| !self.job.is_cancelled()) else {
                return 0.0;
            };
            let s = st.get(level.context(key));
            let c = f64::from(eff[slot]);
            let total = s.total as f64;
            let lower = || match lower {
                None => 1.0 / self.vocab_size,
                Some(lp) => lp[level.suffix(slot, key)],
            };
            match *self.smoothing {
                Smoothing::Mle | Smoothing::StupidBackoff { .. } => c / total,
                Smoothing::Additive { k } => (c + k) / (total + k * self.vocab_size),
                _ if s.total == 0 => lower(),
                _ => {
                    let (a, b, c) = interpolation_terms(self.smoothing, eff[slot], &s, d);
                    (a + b * lower()) / c
                }
            }
        }))
    }

    /// The ln weight of each context whose statistics are `st` (the contexts of one order, whose
    /// discounts are `d`).
    fn context_weights(&self, st: &SharedStats, d: &[f64; 3]) -> Vec<f64> {
        (0..st.len())
            .into_par_iter()
            .map(|i| context_weight(self.smoothing, &st.get(i), d, self.vocab_size).ln())
            .collect()
    }

    /// ln p of every word (`-inf` for the words that cannot be predicted).
    fn unigram_logp(&self, prob: &[f64]) -> Vec<f64> {
        prob.iter()
            .enumerate()
            .map(|(id, &p)| {
                if self.predictable(id) {
                    p.ln()
                } else {
                    f64::NEG_INFINITY
                }
            })
            .collect()
    }

    /// The probing table of order `m` >= 2 from the probabilities of its entries and, below the
    /// highest order, their ln weights as contexts. A pruned n-gram's slot is
    /// [`Filled::Removed`], not free: the n-grams stored past it in its probe sequence stay
    /// reachable.
    fn table(&self, m: usize, prob: &[f64], weight: Option<&[f64]>) -> ProbingTable {
        let level = self.level(m);
        ProbingTable::from_slots(level.capacity(), |slot| match level.key(slot) {
            None => Filled::Free,
            Some(_) if self.job.is_cancelled() => Filled::Free,
            Some(_) if self.pruned(m, slot) => Filled::Removed,
            Some(key) => Filled::Entry(
                key,
                Entry {
                    logp: prob[slot].ln(),
                    weight: weight.map_or(0.0, |w| w[slot]),
                },
            ),
        })
    }
}

/// What [`Passes::build`] makes: the unigram arrays, the tables of orders 2..=N and their raw
/// counts by slot.
struct Built {
    unigram_logp: Vec<f64>,
    unigram_weight: Vec<f64>,
    tables: Vec<ProbingTable>,
    counts: Vec<Vec<u32>>,
}

/// An interpolated estimate as `(a, b, c)` with p(w|h) = (a + b p(w|h')) / c, for an n-gram
/// whose (effective) count is `count` in a context with statistics `s` (`s.total > 0`) and
/// discounts `d` of its order. The one formula shared by in-memory and external estimation, so
/// that both give the same bits.
pub(crate) fn interpolation_terms(
    smoothing: &Smoothing,
    count: u32,
    s: &ContextStats,
    d: &[f64; 3],
) -> (f64, f64, f64) {
    let c = f64::from(count);
    let total = s.total as f64;
    match *smoothing {
        Smoothing::WittenBell => {
            let n = f64::from(s.distinct());
            (c, n + s.pruned as f64, total + n)
        }
        Smoothing::AbsoluteDiscounting { .. }
        | Smoothing::KneserNey { .. }
        | Smoothing::ModifiedKneserNey { .. } => (
            c - count_discount(smoothing, count, d),
            gamma_numerator(smoothing, s, d),
            total,
        ),
        // not interpolated: the count's relative frequency
        _ => (c, 0.0, total),
    }
}

/// The discount taken from a count by a discounting estimator (never more than the count).
fn count_discount(smoothing: &Smoothing, count: u32, d: &[f64; 3]) -> f64 {
    match (*smoothing, count) {
        (_, 0) => 0.0,
        (Smoothing::ModifiedKneserNey { .. }, 1) => d[0],
        (Smoothing::ModifiedKneserNey { .. }, 2) => d[1],
        (Smoothing::ModifiedKneserNey { .. }, _) => d[2],
        (_, c) => d[0].min(f64::from(c)),
    }
}

/// The mass a discounting estimator gives to the lower order, times c(h.): the discounts of the
/// kept continuations plus the counts of the pruned ones.
fn gamma_numerator(smoothing: &Smoothing, s: &ContextStats, d: &[f64; 3]) -> f64 {
    let discounted = match smoothing {
        Smoothing::ModifiedKneserNey { .. } => {
            d[0] * f64::from(s.n1) + d[1] * f64::from(s.n2) + d[2] * f64::from(s.n3p)
        }
        _ => d[0] * f64::from(s.distinct()),
    };
    discounted + s.pruned as f64
}

/// The (linear) weight of a context: gamma for the interpolated family, the flat probability of
/// an unseen word for MLE and additive, alpha for stupid backoff.
pub(crate) fn context_weight(
    smoothing: &Smoothing,
    s: &ContextStats,
    d: &[f64; 3],
    vocab_size: f64,
) -> f64 {
    let total = s.total as f64;
    match *smoothing {
        Smoothing::Mle => 0.0,
        Smoothing::Additive { k } => k / (total + k * vocab_size),
        Smoothing::StupidBackoff { alpha } => alpha,
        _ if s.total == 0 => 1.0,
        Smoothing::WittenBell => {
            let n = f64::from(s.distinct());
            (n + s.pruned as f64) / (total + n)
        }
        Smoothing::AbsoluteDiscounting { .. }
        | Smoothing::KneserNey { .. }
        | Smoothing::ModifiedKneserNey { .. } => gamma_numerator(smoothing, s, d) / total,
    }
}

/// Which entries of each order 2..=`levels.len()` begin with `<s>`, as bitsets by slot (order m
/// at index m-2): a bigram when its first word is `<s>`, a longer n-gram when its prefix does
/// (one lookup in the small bitset of the order below rather than a walk down the counting
/// tables).
fn starts_with_bos(levels: &[OrderEntries]) -> Vec<Vec<u64>> {
    let mut sets: Vec<Vec<u64>> = Vec::with_capacity(levels.len().saturating_sub(1));
    for level in levels.iter().skip(1) {
        let below = sets.last();
        let capacity = level.capacity();
        let set = (0..capacity.div_ceil(64))
            .into_par_iter()
            .map(|w| {
                (w * 64..((w + 1) * 64).min(capacity)).fold(0u64, |bits, slot| {
                    let starts = level.key(slot).is_some_and(|key| {
                        let prefix = key_prefix(key);
                        match below {
                            None => prefix == BOS,
                            Some(b) => bit(b, prefix as usize),
                        }
                    });
                    bits | (u64::from(starts) << (slot % 64))
                })
            })
            .collect();
        sets.push(set);
    }
    sets
}

/// Bit `i` of a bitset.
#[inline]
fn bit(set: &[u64], i: usize) -> bool {
    set[i / 64] >> (i % 64) & 1 == 1
}

/// Kneser-Ney adjusted counts of order m < N: the number of distinct words seen before each
/// n-gram, except for n-grams starting with `<s>` (`bos_starts`, from [`starts_with_bos`]),
/// which keep their raw count. On all cores: the increments are atomic, and integer sums do not
/// depend on their order.
fn adjusted_counts(
    counts: &NgramCounts,
    levels: &[OrderEntries],
    bos_starts: &[Vec<u64>],
    m: usize,
) -> Vec<u32> {
    let level = &levels[m - 1];
    let adj: Vec<AtomicU32> = huge_pages::par_collect(
        (0..level.capacity())
            .into_par_iter()
            .map(|_| AtomicU32::new(0)),
    );
    let upper = &levels[m];
    let slots = upper.capacity();
    (0..slots).into_par_iter().for_each(|slot| {
        prefetch_ahead(slot, slots, |ahead| {
            let key = upper.key(ahead)?;
            Some(&adj[upper.suffix(ahead, key)])
        });
        if let Some(key) = upper.key(slot) {
            adj[upper.suffix(slot, key)].fetch_add(1, Relaxed);
        }
    });
    // in place (a `Vec` collected from its own `into_iter` of items of the same layout keeps its
    // memory): a copy would be fresh memory, which is slow to touch the first time
    let mut adj: Vec<u32> = adj.into_iter().map(AtomicU32::into_inner).collect();
    if m == 1 {
        adj[BOS as usize] = counts.unigrams[BOS as usize];
    } else {
        let starts = &bos_starts[m - 2];
        adj.par_iter_mut().enumerate().for_each(|(slot, a)| {
            if bit(starts, slot) {
                *a = counts.higher[m - 2].count(slot);
            }
        });
    }
    adj
}

/// Discounts per order: the fixed one for absolute discounting and Kneser-Ney, Chen & Goodman's
/// count-of-counts estimate for modified Kneser-Ney; none for the other estimators.
fn discounts_for(
    smoothing: &Smoothing,
    effective: &[Vec<u32>],
    passes: &Passes,
) -> Result<Vec<[f64; 3]>> {
    if !smoothing.is_discounted() {
        return Ok(Vec::new());
    }
    (1..=effective.len())
        .map(|m| {
            order_discounts(smoothing, m, || {
                let level = passes.level(m);
                effective[m - 1]
                    .par_iter()
                    .enumerate()
                    .fold(
                        || [0u64; 5],
                        |mut n, (slot, &c)| {
                            if (1..=4).contains(&c) && passes.used(&level, slot).is_some() {
                                n[c as usize] += 1;
                            }
                            n
                        },
                    )
                    .reduce(|| [0u64; 5], |a, b| std::array::from_fn(|i| a[i] + b[i]))
            })
        })
        .collect()
}

/// The discounts (D1, D2, D3+) of order `m`; `count_of_counts` gives n[1..=4] of the order's
/// effective counts (only modified Kneser-Ney asks for them). Zero for undiscounted estimators.
pub(crate) fn order_discounts(
    smoothing: &Smoothing,
    m: usize,
    count_of_counts: impl FnOnce() -> [u64; 5],
) -> Result<[f64; 3]> {
    match *smoothing {
        Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount } => {
            Ok([discount; 3])
        }
        Smoothing::ModifiedKneserNey { discount_fallback } => {
            modified_kn_discounts(m, count_of_counts(), discount_fallback)
        }
        _ => Ok([0.0; 3]),
    }
}

/// Chen & Goodman's discounts from count-of-counts `n[1..=4]`, in float32 as lmplz computes them.
///
/// lmplz forms Y's denominator `n1 + 2 n2` in float64 and rounds it to float32 once
/// (`static_cast<float>(s.n[1] + 2.0 * s.n[2])`); rounding n1 and n2 first and adding in float32
/// gives another Y, by one ulp, once n1 + 2 n2 passes 2^24 (large models' higher orders).
pub fn modified_kn_discounts(order: usize, n: [u64; 5], fallback: bool) -> Result<[f64; 3]> {
    let f = |i: usize| n[i] as f32;
    let y = f(1) / (n[1] as f64 + 2.0 * n[2] as f64) as f32;
    let mut d = [0.0f32; 3];
    let mut ok = true;
    for j in 1..=3usize {
        let dj = j as f32 - (j + 1) as f32 * y * f(j + 1) / f(j);
        if !(dj >= 0.0 && dj <= j as f32 && dj.is_finite()) {
            ok = false;
        }
        d[j - 1] = dj;
    }
    if ok {
        return Ok(d.map(f64::from));
    }
    if fallback {
        return Ok([0.5, 1.0, 1.5]);
    }
    Err(Error::invalid(format!(
        "modified Kneser-Ney: the discounts of order {order} are out of range ({:?}) from \
         count-of-counts n1..n4 = {:?}; the corpus is too small or too uniform for this order. \
         Pass discount_fallback=True (fastppl train --discount-fallback) to use D1=0.5, D2=1, \
         D3+=1.5 as lmplz --discount_fallback does",
        d,
        &n[1..]
    )))
}

/// Refuses pruning for the estimators whose mass cannot move to the lower order.
pub fn check_pruning(smoothing: &Smoothing, pruning: &Pruning) -> Result<()> {
    if pruning.is_active() && !smoothing.is_interpolated() {
        return Err(Error::invalid(format!(
            "prune: {} cannot prune n-grams (their probability mass must move to the lower \
             order); use modified_kneser_ney, kneser_ney, witten_bell or absolute_discounting",
            smoothing.name()
        )));
    }
    Ok(())
}

/// Counts `corpus` up to `order` and estimates a model with `smoothing`, leaving out the n-grams
/// that `pruning` prunes; `job` sees both steps and can cancel them.
pub fn fit(
    corpus: &crate::corpus::Corpus,
    order: usize,
    bos_eos: bool,
    smoothing: Smoothing,
    pruning: &Pruning,
    job: &Job,
) -> Result<Model> {
    smoothing.validate()?;
    check_pruning(&smoothing, pruning)?;
    let stream = crate::corpus::padded_stream::PaddedStream::new(corpus, bos_eos, None);
    let counts = crate::ngram::counts::count_ngrams(&stream, order, corpus.vocab().len(), job)?;
    drop(stream);
    estimate(
        counts,
        corpus.vocab().clone(),
        bos_eos,
        smoothing,
        pruning,
        job,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `<s>` bitsets against each n-gram's first word, found by walking its prefixes down.
    #[test]
    fn bos_bitsets_mark_the_ngrams_starting_with_bos() {
        use crate::corpus::padded_stream::PaddedStream;
        use crate::corpus::{Corpus, SentenceMode};
        let mut c = Corpus::new();
        c.push_whitespace_text("a b a c\nb a\na\nc a b a b\n", SentenceMode::Lines)
            .unwrap();
        c.finish();
        let stream = PaddedStream::new(&c, true, None);
        let counts =
            crate::ngram::counts::count_ngrams(&stream, 4, c.vocab().len(), &Job::none()).unwrap();
        let levels: Vec<OrderEntries> = (1..=4)
            .map(|m| OrderEntries {
                m,
                vocab_len: c.vocab().len(),
                table: (m >= 2).then(|| &counts.higher[m - 2]),
            })
            .collect();
        let sets = starts_with_bos(&levels);
        assert_eq!(sets.len(), 3);
        let mut marked = 0;
        for m in 2..=4 {
            for slot in 0..levels[m - 1].capacity() {
                let Some(mut key) = levels[m - 1].key(slot) else {
                    continue;
                };
                for k in (3..=m).rev() {
                    key = levels[k - 2].key(key_prefix(key) as usize).unwrap();
                }
                let first = key_prefix(key);
                assert_eq!(
                    bit(&sets[m - 2], slot),
                    first == BOS,
                    "order {m} slot {slot}"
                );
                marked += usize::from(first == BOS);
            }
        }
        assert!(marked > 0);
    }

    /// Statistics gathered on all cores, with and without room for pruned counts, against
    /// [`ContextStats::add`] one continuation after the other; a context's shared counts take
    /// less room than its full statistics.
    #[test]
    fn shared_stats_sum_as_context_stats_do() {
        assert!(size_of::<SharedCounts>() < size_of::<ContextStats>());
        let adds: Vec<(usize, u32, bool)> = (0..10_000u32)
            .map(|i| ((i * 7 % 13) as usize, i % 5, i % 11 == 0))
            .collect();
        for pruning in [false, true] {
            let shared = SharedStats::new(13, pruning);
            adds.par_iter()
                .for_each(|&(ctx, c, pruned)| shared.add(ctx, c, pruned && pruning));
            let mut expected = vec![ContextStats::default(); 13];
            for &(ctx, c, pruned) in &adds {
                expected[ctx].add(c, pruned && pruning);
            }
            assert_eq!(shared.len(), 13);
            for (i, e) in expected.iter().enumerate() {
                let s = shared.get(i);
                let fields = |s: &ContextStats| (s.total, s.n1, s.n2, s.n3p, s.pruned);
                assert_eq!(fields(&s), fields(e), "context {i}, pruning {pruning}");
            }
        }
    }

    /// Context statistics summed privately per thread and in shared counters agree, for every
    /// order of a small corpus, with and without pruning; once the job is cancelled, none are
    /// gathered.
    #[test]
    fn private_and_shared_context_stats_agree() {
        use crate::corpus::padded_stream::PaddedStream;
        use crate::corpus::{Corpus, SentenceMode};
        let mut c = Corpus::new();
        let mut text = String::new();
        for i in 0..3000 {
            let words = [i % 17, i % 5, (i * 7) % 23, i % 3].map(|w| format!("w{w}"));
            text.push_str(&words.join(" "));
            text.push('\n');
        }
        c.push_whitespace_text(&text, SentenceMode::Lines).unwrap();
        c.finish();
        let stream = PaddedStream::new(&c, true, None);
        let smoothing = Smoothing::ModifiedKneserNey {
            discount_fallback: false,
        };
        for pruning in [Pruning::none(), Pruning::new(&[0, 1], 4).unwrap()] {
            let counts =
                crate::ngram::counts::count_ngrams(&stream, 4, c.vocab().len(), &Job::none())
                    .unwrap();
            let job = Job::none();
            let passes = Passes::new(counts, c.vocab().len(), true, &smoothing, &pruning, &job);
            let effective = passes.effective_counts();
            for m in 1..=4 {
                let contexts = if m == 1 {
                    1
                } else {
                    passes.level(m - 1).capacity()
                };
                let eff = &effective[m - 1];
                let private = passes.private_stats(m, eff, contexts);
                let shared = passes.shared_stats(m, eff, contexts);
                let fields = |s: ContextStats| (s.total, s.n1, s.n2, s.n3p, s.pruned);
                assert!(private.len() == contexts && shared.len() == contexts);
                for i in 0..contexts {
                    assert_eq!(fields(private.get(i)), fields(shared.get(i)), "order {m}");
                }
            }
            // a cancelled job gathers nothing (and must not index an empty array)
            job.cancel();
            for m in 1..=4 {
                assert_eq!(passes.context_stats(m, &effective[m - 1]).len(), 0);
            }
        }
    }

    #[test]
    fn modified_kn_discounts_round_n1_plus_2n2_once_as_lmplz() {
        // n1 + 2 n2 = 211478577 is not a float32: lmplz rounds the float64 sum once (Y's
        // denominator 211478576), rounding n1 and 2 n2 first gave 211478592 and D1 one ulp lower
        // (0.57678396); the expected values are lmplz's float32 arithmetic (numpy.float32).
        let n = [0, 121_976_881, 44_750_348, 18_914_767, 7_806_689];
        let d = modified_kn_discounts(5, n, false).unwrap();
        assert_eq!(d, [0.576_784_f32, 1.268_626_8, 2.047_776_2].map(f64::from));
        assert_eq!(
            modified_kn_discounts(2, [0, 100, 40, 20, 10], false).unwrap(),
            [0.555_555_5_f32, 1.166_666_6, 1.888_888_8].map(f64::from)
        );
    }

    #[test]
    fn pruning_reads_thresholds_as_lmplz_does() {
        let p = Pruning::new(&[0, 1], 4).unwrap();
        assert_eq!(p.thresholds(), &[0, 1, 1, 1]);
        assert!(!p.prunes(1, 0));
        assert!(p.prunes(2, 1) && !p.prunes(2, 2) && p.prunes(4, 1));
        assert!(!Pruning::new(&[0, 0, 0], 3).unwrap().is_active());
        assert!(!Pruning::new(&[], 3).unwrap().is_active());
        for bad in [&[1u64][..], &[0, 2, 1], &[0, 1, 1, 1]] {
            assert!(matches!(
                Pruning::new(bad, 3),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}
