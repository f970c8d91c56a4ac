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

use crate::counts::NgramCounts;
use crate::counts::OrderCounts;
use crate::error::{Error, Result};
use crate::model::{Fallback, Model, OrderTable};
use crate::probing::{Entry, ProbingTable};
use crate::table::pack;
use crate::table::{key_prefix, key_word, ShardedIndex, ShardedValues};
use crate::vocab::{Vocab, BOS, EOS};

/// An estimator and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Smoothing {
    /// Maximum likelihood.
    Mle,
    /// Add-k (Laplace for k = 1, Lidstone otherwise).
    Additive { k: f64 },
    /// Interpolated Witten-Bell.
    WittenBell,
    /// Interpolated absolute discounting with one discount.
    AbsoluteDiscounting { discount: f64 },
    /// Interpolated Kneser-Ney with one discount.
    KneserNey { discount: f64 },
    /// Interpolated modified Kneser-Ney (Chen & Goodman), KenLM's lmplz.
    ModifiedKneserNey { discount_fallback: bool },
    /// Stupid backoff (Brants et al. 2007).
    StupidBackoff { alpha: f64 },
}

impl Smoothing {
    /// The name used by the Python API.
    pub fn name(&self) -> &'static str {
        match self {
            Smoothing::Mle => "mle",
            Smoothing::Additive { .. } => "additive",
            Smoothing::WittenBell => "witten_bell",
            Smoothing::AbsoluteDiscounting { .. } => "absolute_discounting",
            Smoothing::KneserNey { .. } => "kneser_ney",
            Smoothing::ModifiedKneserNey { .. } => "modified_kneser_ney",
            Smoothing::StupidBackoff { .. } => "stupid_backoff",
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, v: f64, range: &str| {
            Err(Error::invalid(format!(
                "{}: {what} must be {range}, got {v}",
                self.name()
            )))
        };
        match *self {
            Smoothing::Additive { k } if !(k > 0.0 && k.is_finite()) => {
                bad("k", k, "a finite number > 0")
            }
            Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount }
                if !(discount > 0.0 && discount <= 1.0) =>
            {
                bad("discount", discount, "in (0, 1]")
            }
            Smoothing::StupidBackoff { alpha } if !(alpha > 0.0 && alpha.is_finite()) => {
                bad("alpha", alpha, "a finite number > 0")
            }
            _ => Ok(()),
        }
    }

    fn uses_adjusted_counts(&self) -> bool {
        matches!(
            self,
            Smoothing::KneserNey { .. } | Smoothing::ModifiedKneserNey { .. }
        )
    }
}

/// Count statistics of the continuations of one context.
#[derive(Debug, Clone, Copy, Default)]
struct ContextStats {
    total: u64,
    n1: u32,
    n2: u32,
    n3p: u32,
}

impl ContextStats {
    fn add(&mut self, c: u32) {
        self.total += u64::from(c);
        match c {
            0 => {}
            1 => self.n1 += 1,
            2 => self.n2 += 1,
            _ => self.n3p += 1,
        }
    }

    fn distinct(&self) -> u32 {
        self.n1 + self.n2 + self.n3p
    }
}

/// One order's view of the counts: its entries and how to find each one's context and suffix.
struct OrderView<'a> {
    /// order m (1-based)
    m: usize,
    index: Option<&'a ShardedIndex>,
    suffix: Option<&'a ShardedValues<u32>>,
}

impl OrderView<'_> {
    /// Context entry (order m-1) of entry `g`; unigrams have the single empty context 0.
    fn context(&self, g: u32, key: u64) -> u32 {
        let _ = g;
        match self.m {
            1 => 0,
            _ => key_prefix(key),
        }
    }

    /// Entry (order m-1) of the n-gram without its oldest word.
    fn suffix(&self, g: u32, key: u64) -> u32 {
        match self.m {
            1 => 0,
            2 => key_word(key),
            _ => self.suffix.expect("suffix links").get(g),
        }
    }

    /// Iterates `(entry, key)`; for unigrams the key is the word id.
    fn entries(&self, vocab_len: usize) -> Box<dyn Iterator<Item = (u32, u64)> + '_> {
        match self.index {
            None => Box::new((0..vocab_len as u32).map(|w| (w, u64::from(w)))),
            Some(index) => Box::new(index.iter()),
        }
    }
}

/// Builds the model for `counts` (whose ids are those of `vocab`).
pub fn estimate(
    counts: NgramCounts,
    vocab: Vocab,
    bos_eos: bool,
    smoothing: Smoothing,
) -> Result<Model> {
    smoothing.validate()?;
    if counts.num_predicted == 0 {
        return Err(Error::EmptyCorpus(
            "cannot fit a model on a corpus with no token".into(),
        ));
    }
    let order = counts.order();
    let vocab_len = vocab.len();
    let predictable = |w: u32| w != BOS && (bos_eos || w != EOS);
    let vocab_size = (vocab_len - 1 - usize::from(!bos_eos)) as f64;

    let views: Vec<OrderView> = (1..=order)
        .map(|m| OrderView {
            m,
            index: (m >= 2).then(|| &counts.higher[m - 2].index),
            suffix: (m >= 3).then(|| &counts.higher[m - 2].suffix),
        })
        .collect();

    // the counts each order is estimated from
    let raw: Vec<ShardedValues<u32>> =
        std::iter::once(ShardedValues::dense(counts.unigrams.clone()))
            .chain(counts.higher.iter().map(|o| o.counts.clone()))
            .collect();
    let effective = if smoothing.uses_adjusted_counts() {
        adjusted_counts(&counts, &views, &raw, vocab_len)
    } else {
        raw.clone()
    };

    // statistics of every context, per order: contexts of order m are entries of order m-1
    let stats: Vec<ShardedValues<ContextStats>> = (1..=order)
        .map(|m| {
            let mut st = if m == 1 {
                ShardedValues::dense(vec![ContextStats::default(); 1])
            } else if m == 2 {
                ShardedValues::dense(vec![ContextStats::default(); vocab_len])
            } else {
                ShardedValues::like(&counts.higher[m - 3].index, ContextStats::default())
            };
            let view = &views[m - 1];
            for (g, key) in view.entries(vocab_len) {
                if m == 1 && !predictable(g) {
                    continue;
                }
                st.get_mut(view.context(g, key))
                    .add(effective[m - 1].get(g));
            }
            st
        })
        .collect();

    let discounts = discounts_for(&smoothing, &effective, &views, vocab_len, &predictable)?;

    // probabilities, lowest order first (linear domain until the end)
    let mut prob: Vec<ShardedValues<f64>> = Vec::with_capacity(order);
    let mut weight: Vec<ShardedValues<f64>> = Vec::with_capacity(order);
    for m in 1..=order {
        let view = &views[m - 1];
        let eff = &effective[m - 1];
        let st = &stats[m - 1];
        let d = discounts.get(m - 1).copied().unwrap_or([0.0; 3]);
        let mut p = if m == 1 {
            ShardedValues::dense(vec![0.0; vocab_len])
        } else {
            ShardedValues::like(&counts.higher[m - 2].index, 0.0)
        };
        for (g, key) in view.entries(vocab_len) {
            if m == 1 && !predictable(g) {
                continue;
            }
            let s = st.get(view.context(g, key));
            let c = f64::from(eff.get(g));
            let total = s.total as f64;
            let lower = || {
                if m == 1 {
                    1.0 / vocab_size
                } else {
                    prob[m - 2].get(view.suffix(g, key))
                }
            };
            *p.get_mut(g) = match smoothing {
                Smoothing::Mle | Smoothing::StupidBackoff { .. } => c / total,
                Smoothing::Additive { k } => (c + k) / (total + k * vocab_size),
                _ if s.total == 0 => lower(),
                Smoothing::WittenBell => {
                    let n = f64::from(s.distinct());
                    (c + n * lower()) / (total + n)
                }
                Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount } => {
                    ((c - discount).max(0.0) + discount * f64::from(s.distinct()) * lower()) / total
                }
                Smoothing::ModifiedKneserNey { .. } => {
                    let dc = match eff.get(g) {
                        0 => 0.0,
                        1 => d[0],
                        2 => d[1],
                        _ => d[2],
                    };
                    (c - dc + gamma_numerator(&s, &d) * lower()) / total
                }
            };
        }
        prob.push(p);
        // weights of the contexts of order m (entries of order m-1)
        if m >= 2 {
            let w = stats[m - 1].map(|s| context_weight(&smoothing, s, &d, vocab_size));
            weight.push(w);
        }
    }

    let (fallback, missing_weight) = match smoothing {
        Smoothing::Mle => (Fallback::Flat, f64::NEG_INFINITY),
        Smoothing::Additive { .. } => (Fallback::Flat, -(vocab_size.ln())),
        Smoothing::StupidBackoff { alpha } => (Fallback::Chain, alpha.ln()),
        _ => (Fallback::Chain, 0.0),
    };

    // assemble, converting to natural logs
    let ln = |v: ShardedValues<f64>| v.map(|x| x.ln());
    let mut prob = prob.into_iter();
    let mut weight = weight.into_iter();
    let unigram_probs = prob.next().expect("order >= 1");
    let mut unigram_logp = ln(unigram_probs).into_shards().remove(0);
    for (id, lp) in unigram_logp.iter_mut().enumerate() {
        if !predictable(id as u32) {
            *lp = f64::NEG_INFINITY;
        }
    }
    let unigram_weight = match weight.next() {
        Some(w) => ln(w).into_shards().remove(0),
        None => vec![0.0; vocab_len],
    };
    let higher = freeze(counts.higher, prob, weight.collect(), ln);
    Ok(Model {
        order,
        bos_eos,
        vocab,
        unigram_logp,
        unigram_weight,
        unigram_counts: counts.unigrams,
        higher,
        fallback,
        missing_weight,
        normalized: !matches!(smoothing, Smoothing::StupidBackoff { .. }),
        smoothing: smoothing.name().to_string(),
        discounts: if matches!(
            smoothing,
            Smoothing::ModifiedKneserNey { .. }
                | Smoothing::KneserNey { .. }
                | Smoothing::AbsoluteDiscounting { .. }
        ) {
            discounts
        } else {
            Vec::new()
        },
    })
}

fn gamma_numerator(s: &ContextStats, d: &[f64; 3]) -> f64 {
    d[0] * f64::from(s.n1) + d[1] * f64::from(s.n2) + d[2] * f64::from(s.n3p)
}

/// The (linear) weight of a context: gamma for the interpolated family, the flat probability of
/// an unseen word for MLE and additive, alpha for stupid backoff.
fn context_weight(smoothing: &Smoothing, s: &ContextStats, d: &[f64; 3], vocab_size: f64) -> f64 {
    let total = s.total as f64;
    match *smoothing {
        Smoothing::Mle => 0.0,
        Smoothing::Additive { k } => k / (total + k * vocab_size),
        Smoothing::StupidBackoff { alpha } => alpha,
        _ if s.total == 0 => 1.0,
        Smoothing::WittenBell => {
            let n = f64::from(s.distinct());
            n / (total + n)
        }
        Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount } => {
            discount * f64::from(s.distinct()) / total
        }
        Smoothing::ModifiedKneserNey { .. } => gamma_numerator(s, d) / total,
    }
}

/// Kneser-Ney adjusted counts: below the highest order, the number of distinct words seen before
/// each n-gram, except for n-grams starting with `<s>`, which keep their raw count.
fn adjusted_counts(
    counts: &NgramCounts,
    views: &[OrderView],
    raw: &[ShardedValues<u32>],
    vocab_len: usize,
) -> Vec<ShardedValues<u32>> {
    let order = counts.order();
    // whether each entry starts with <s>
    let mut starts_bos: Vec<ShardedValues<bool>> = Vec::with_capacity(order);
    starts_bos.push(ShardedValues::dense(
        (0..vocab_len as u32).map(|w| w == BOS).collect(),
    ));
    for m in 2..=order {
        let index = &counts.higher[m - 2].index;
        let mut flags = ShardedValues::like(index, false);
        for (g, key) in index.iter() {
            *flags.get_mut(g) = starts_bos[m - 2].get(key_prefix(key));
        }
        starts_bos.push(flags);
    }
    let mut out = Vec::with_capacity(order);
    for m in 1..=order {
        if m == order {
            out.push(raw[m - 1].clone());
            continue;
        }
        let mut adj = if m == 1 {
            ShardedValues::dense(vec![0u32; vocab_len])
        } else {
            ShardedValues::like(&counts.higher[m - 2].index, 0u32)
        };
        let upper = &views[m];
        for (g, key) in upper.entries(vocab_len) {
            *adj.get_mut(upper.suffix(g, key)) += 1;
        }
        for (g, starts) in starts_bos[m - 1].iter() {
            if starts {
                *adj.get_mut(g) = raw[m - 1].get(g);
            }
        }
        out.push(adj);
    }
    out
}

/// Discounts per order: the fixed one for absolute discounting and Kneser-Ney, Chen & Goodman's
/// count-of-counts estimate for modified Kneser-Ney.
fn discounts_for(
    smoothing: &Smoothing,
    effective: &[ShardedValues<u32>],
    views: &[OrderView],
    vocab_len: usize,
    predictable: &dyn Fn(u32) -> bool,
) -> Result<Vec<[f64; 3]>> {
    let order = effective.len();
    match *smoothing {
        Smoothing::AbsoluteDiscounting { discount } | Smoothing::KneserNey { discount } => {
            Ok(vec![[discount; 3]; order])
        }
        Smoothing::ModifiedKneserNey { discount_fallback } => (1..=order)
            .map(|m| {
                let mut n = [0u64; 5];
                for (g, _) in views[m - 1].entries(vocab_len) {
                    if m == 1 && !predictable(g) {
                        continue;
                    }
                    let c = effective[m - 1].get(g) as usize;
                    if (1..=4).contains(&c) {
                        n[c] += 1;
                    }
                }
                modified_kn_discounts(m, n, discount_fallback)
            })
            .collect(),
        _ => Ok(Vec::new()),
    }
}

/// Chen & Goodman's discounts from count-of-counts `n[1..=4]`, in float32 as lmplz computes them.
pub fn modified_kn_discounts(order: usize, n: [u64; 5], fallback: bool) -> Result<[f64; 3]> {
    let f = |i: usize| n[i] as f32;
    let y = f(1) / (f(1) + 2.0 * f(2));
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
         Pass discount_fallback=True to use D1=0.5, D2=1, D3+=1.5 as lmplz --discount_fallback does",
        d,
        &n[1..]
    )))
}

/// Counts `corpus` up to `order` and estimates a model with `smoothing`.
pub fn fit(
    corpus: &crate::corpus::Corpus,
    order: usize,
    bos_eos: bool,
    smoothing: Smoothing,
) -> Result<Model> {
    smoothing.validate()?;
    let stream = crate::stream::PaddedStream::new(corpus, bos_eos, None);
    let counts = crate::counts::count_ngrams(&stream, order, corpus.vocab().len())?;
    drop(stream);
    estimate(counts, corpus.vocab().clone(), bos_eos, smoothing)
}

/// Moves the n-grams of orders 2..=N from the sharded counting tables into probing tables with
/// their natural-log probabilities and weights, renumbering the prefixes of each order's keys as
/// the order below gets its slots.
fn freeze(
    orders: Vec<OrderCounts>,
    prob: impl Iterator<Item = ShardedValues<f64>>,
    weights: Vec<ShardedValues<f64>>,
    ln: impl Fn(ShardedValues<f64>) -> ShardedValues<f64>,
) -> Vec<OrderTable> {
    let top = orders.len();
    let mut weights = weights.into_iter();
    let mut renumber: Option<ShardedValues<u32>> = None;
    let mut out = Vec::with_capacity(top);
    for (i, (oc, p)) in orders.into_iter().zip(prob).enumerate() {
        let logp = ln(p);
        let weight = (i + 1 < top).then(|| ln(weights.next().expect("weights below N")));
        let mut table = ProbingTable::with_entries(oc.index.len());
        let mut slots = ShardedValues::like(&oc.index, 0u32);
        let mut counts = vec![0u32; table.capacity()];
        for (g, key) in oc.index.iter() {
            let prefix = match &renumber {
                None => key_prefix(key),
                Some(r) => r.get(key_prefix(key)),
            };
            let entry = Entry {
                logp: logp.get(g),
                weight: weight.as_ref().map_or(0.0, |w| w.get(g)),
            };
            let slot = table.insert(pack(prefix, key_word(key)), entry);
            *slots.get_mut(g) = slot;
            counts[slot as usize] = oc.counts.get(g);
        }
        renumber = Some(slots);
        out.push(OrderTable { table, counts });
    }
    out
}
