//! Token log-probabilities from raw logits, computed stably and in parallel.
//!
//! For each row `x` of a `(rows, vocab)` logits matrix and its target id `t`,
//! [`target_logprobs`] returns `x[t] - logsumexp(x)` in nats (natural log),
//! accumulated in `f64` whatever the input precision. No softmax row is ever
//! materialised: each row is read twice (max/finiteness pass, then the sum of
//! `exp(x - max)`), which keeps it in cache. Half-precision rows are widened
//! into a per-thread `f32` buffer of one row. Rows are spread over rayon
//! threads; on x86-64 a copy of the row kernel compiled for AVX2+FMA is chosen
//! at run time.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use rayon::prelude::*;

/// Errors for malformed logits or targets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogitsError {
    /// The vocabulary size is zero or does not divide the logits length.
    #[error("logits of length {len} cannot be split into rows of vocabulary size {vocab}")]
    Shape { len: usize, vocab: usize },
    /// The number of targets differs from the number of logits rows.
    #[error("{targets} targets given for {rows} rows of logits")]
    TargetCount { targets: usize, rows: usize },
    /// A target id is `>= vocab`.
    #[error("label {label} at row {row} is outside the vocabulary [0, {vocab})")]
    LabelOutOfRange {
        row: usize,
        label: i64,
        vocab: usize,
    },
    /// A scored row holds NaN or an infinity.
    #[error("logits row {row} contains NaN or infinity")]
    NonFinite { row: usize },
}

/// A borrowed, C-contiguous logits buffer of one of the supported dtypes.
#[derive(Debug, Clone, Copy)]
pub enum Logits<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    F16(&'a [f16]),
    Bf16(&'a [bf16]),
}

impl Logits<'_> {
    fn len(&self) -> usize {
        match self {
            Logits::F32(s) => s.len(),
            Logits::F64(s) => s.len(),
            Logits::F16(s) => s.len(),
            Logits::Bf16(s) => s.len(),
        }
    }
}

/// Log-probability (nats) of `targets[i]` under the softmax of logits row `i`.
///
/// `logits` holds `targets.len()` rows of `vocab` values. A negative target
/// means "not scored": its row is not read and its output is NaN.
///
/// # Errors
/// [`LogitsError`] for inconsistent sizes, a target `>= vocab`, or a scored
/// row containing NaN or an infinity.
pub fn target_logprobs(
    logits: Logits<'_>,
    vocab: usize,
    targets: &[i64],
) -> Result<Vec<f64>, LogitsError> {
    let len = logits.len();
    if vocab == 0 || len % vocab != 0 {
        return Err(LogitsError::Shape { len, vocab });
    }
    if len / vocab != targets.len() {
        return Err(LogitsError::TargetCount {
            targets: targets.len(),
            rows: len / vocab,
        });
    }
    if let Some((row, &label)) = targets
        .iter()
        .enumerate()
        .find(|(_, &t)| t >= 0 && t as u64 >= vocab as u64)
    {
        return Err(LogitsError::LabelOutOfRange { row, label, vocab });
    }
    match logits {
        Logits::F32(s) => score_rows(s, vocab, targets, as_is),
        Logits::F64(s) => score_rows(s, vocab, targets, as_is),
        Logits::F16(s) => score_rows(s, vocab, targets, widen_half),
        Logits::Bf16(s) => score_rows(s, vocab, targets, widen_half),
    }
}

/// Maps an input row to a row of [`Wide`] values, possibly via a scratch buffer.
type Widen<T, W> = for<'a> fn(&'a [T], &'a mut Vec<W>) -> &'a [W];

fn as_is<'a, W>(row: &'a [W], _: &'a mut Vec<W>) -> &'a [W] {
    row
}

fn widen_half<'a, H>(row: &'a [H], buf: &'a mut Vec<f32>) -> &'a [f32]
where
    [H]: HalfFloatSliceExt,
{
    buf.resize(row.len(), 0.0);
    row.convert_to_f32_slice(buf);
    buf
}

fn score_rows<T: Sync, W: Wide>(
    data: &[T],
    vocab: usize,
    targets: &[i64],
    widen: Widen<T, W>,
) -> Result<Vec<f64>, LogitsError> {
    let kernel = row_kernel::<W>();
    data.par_chunks_exact(vocab)
        .zip(targets.par_iter())
        .enumerate()
        .map_init(Vec::new, |buf, (row, (values, &target))| {
            if target < 0 {
                return Ok(f64::NAN);
            }
            kernel(widen(values, buf), target as usize).ok_or(LogitsError::NonFinite { row })
        })
        .collect()
}

/// Input precisions the row kernel works on.
trait Wide: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
}

impl Wide for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Wide for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

type RowKernel<W> = fn(&[W], usize) -> Option<f64>;

/// The fastest row kernel this CPU supports.
fn row_kernel<W: Wide>() -> RowKernel<W> {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        return |row, target| {
            // SAFETY: the CPU supports AVX2 and FMA (checked above).
            unsafe { row_logprob_avx2(row, target) }
        };
    }
    row_logprob
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn row_logprob_avx2<W: Wide>(row: &[W], target: usize) -> Option<f64> {
    row_logprob(row, target)
}

/// Independent accumulators per row, so that the loops vectorise.
const LANES: usize = 8;

/// `row[target] - logsumexp(row)` in f64, or `None` if the row is not finite.
#[inline(always)]
fn row_logprob<W: Wide>(row: &[W], target: usize) -> Option<f64> {
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    let mut hi = [f64::NEG_INFINITY; LANES];
    let mut lo = [f64::INFINITY; LANES];
    for chunk in chunks.clone() {
        for i in 0..LANES {
            let x = chunk[i].to_f64();
            hi[i] = hi[i].max(x);
            lo[i] = lo[i].min(x);
        }
    }
    for (i, x) in tail.iter().enumerate() {
        hi[i] = hi[i].max(x.to_f64());
        lo[i] = lo[i].min(x.to_f64());
    }
    let max = hi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = lo.iter().copied().fold(f64::INFINITY, f64::min);
    // f64::max/min skip NaN, so NaN is caught by the sum below.
    if !(max.is_finite() && min.is_finite()) {
        return None;
    }
    let mut sums = [0.0f64; LANES];
    for chunk in chunks {
        for i in 0..LANES {
            sums[i] += exp_nonpositive(chunk[i].to_f64() - max);
        }
    }
    for (i, x) in tail.iter().enumerate() {
        sums[i] += exp_nonpositive(x.to_f64() - max);
    }
    let sum: f64 = sums.iter().sum();
    if !sum.is_finite() {
        return None;
    }
    Some(row[target].to_f64() - max - sum.ln())
}

/// `exp(d)` for `d <= 0` to ~1 ulp, branch-free so that it vectorises.
///
/// Values below -708 are clamped there (their terms are < 1e-307 next to the
/// row maximum's 1). NaN propagates.
#[inline(always)]
fn exp_nonpositive(d: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    // Adding 1.5 * 2^52 rounds to an integer held in the low mantissa bits.
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    let d = if d < -708.0 { -708.0 } else { d };
    let shifted = d * LOG2E + SHIFTER;
    let n = shifted - SHIFTER;
    let r = d - n * LN2_HI - n * LN2_LO;
    // Taylor series of exp(r), |r| <= ln(2)/2, truncation error < 2e-16.
    let mut p = INV_FACTORIALS[12];
    for k in (0..12).rev() {
        p = p * r + INV_FACTORIALS[k];
    }
    let scale = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    p * scale
}

/// `1 / k!` for `k = 0..=12`.
const INV_FACTORIALS: [f64; 13] = {
    let mut inv = [1.0; 13];
    let mut k = 1;
    while k < 13 {
        inv[k] = inv[k - 1] / k as f64;
        k += 1;
    }
    inv
};

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(row: &[f64], target: usize) -> f64 {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|x| (x - max).exp()).sum();
        row[target] - max - sum.ln()
    }

    #[test]
    fn exp_matches_std_over_range() {
        for i in 0..=200_000 {
            let d = -(i as f64) * 708.0 / 200_000.0;
            let (got, want) = (exp_nonpositive(d), d.exp());
            assert!(
                ((got - want) / want).abs() < 4e-16,
                "d={d} got={got} want={want}"
            );
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(-1e4) < 1e-300);
        assert!(exp_nonpositive(f64::NAN).is_nan());
    }

    #[test]
    fn matches_reference_for_all_dtypes() {
        let vocab = 37; // not a multiple of LANES
        let values: Vec<f64> = (0..3 * vocab)
            .map(|i| ((i * 7919) % 113) as f64 / 9.0 - 5.0)
            .collect();
        let targets = [0i64, 36, 17];
        let want: Vec<f64> = targets
            .iter()
            .enumerate()
            .map(|(r, &t)| reference(&values[r * vocab..(r + 1) * vocab], t as usize))
            .collect();
        let f32s: Vec<f32> = values.iter().map(|&x| x as f32).collect();
        let f16s: Vec<f16> = values.iter().map(|&x| f16::from_f64(x)).collect();
        let bf16s: Vec<bf16> = values.iter().map(|&x| bf16::from_f64(x)).collect();
        for (logits, tol) in [
            (Logits::F64(&values), 1e-13),
            (Logits::F32(&f32s), 1e-5),
            (Logits::F16(&f16s), 1e-2),
            (Logits::Bf16(&bf16s), 5e-2),
        ] {
            let got = target_logprobs(logits, vocab, &targets).unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < tol, "{logits:?}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn huge_logits_are_stable() {
        let row = [1e300, 1e300, -1e300];
        let got = target_logprobs(Logits::F64(&row), 3, &[0]).unwrap();
        assert!((got[0] + std::f64::consts::LN_2).abs() < 1e-12);
    }

    #[test]
    fn negative_targets_are_skipped_without_reading() {
        let row = [0.0, f64::NAN, 0.0, 0.0];
        let got = target_logprobs(Logits::F64(&row), 2, &[-1, 1]).unwrap();
        assert!(got[0].is_nan());
        assert!((got[1] + std::f64::consts::LN_2).abs() < 1e-15);
    }

    #[test]
    fn rejects_bad_input() {
        let row = [0.0f64; 6];
        assert_eq!(
            target_logprobs(Logits::F64(&row), 4, &[0]),
            Err(LogitsError::Shape { len: 6, vocab: 4 })
        );
        assert_eq!(
            target_logprobs(Logits::F64(&row), 3, &[0]),
            Err(LogitsError::TargetCount {
                targets: 1,
                rows: 2
            })
        );
        assert_eq!(
            target_logprobs(Logits::F64(&row), 3, &[0, 3]),
            Err(LogitsError::LabelOutOfRange {
                row: 1,
                label: 3,
                vocab: 3
            })
        );
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let row = [0.0, 1.0, 2.0, 0.0, bad, 1.0];
            assert_eq!(
                target_logprobs(Logits::F64(&row), 3, &[0, 0]),
                Err(LogitsError::NonFinite { row: 1 })
            );
        }
    }
}
