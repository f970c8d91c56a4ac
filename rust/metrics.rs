//! Token log-probabilities from raw logits, computed stably and in parallel.
//!
//! For each row `x` of a `(rows, vocab)` logits matrix and its target id `t`,
//! [`target_logprobs`] returns `x[t] - logsumexp(x)` in nats (natural log),
//! accumulated in `f64` whatever the input precision. No softmax row is ever
//! materialised: each row is read twice (its maximum, then the sum of
//! `exp(x - max)`), which keeps it in cache. A `-inf` logit (what vocabulary
//! masks write) is a probability of 0; NaN and `+inf` are refused. Half-precision rows are widened
//! into a per-thread `f32` buffer of one row. Rows are spread over rayon
//! threads; on x86-64 CPUs with AVX2+FMA (detected at run time) f32 rows use
//! an explicitly vectorised kernel.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use rayon::prelude::*;

use crate::error::Error;

/// What is wrong with the row of a [`LogitsError::NonFinite`].
const NON_FINITE: &str = "contains NaN or +infinity, or no finite value";

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
    /// A scored row holds NaN or `+inf`, or no finite value (all `-inf`).
    #[error("logits row {row} {}", NON_FINITE)]
    NonFinite { row: usize },
}

/// The core's error of the same message: [`Error::InvalidItem`] for a refused row (its index
/// the flat row number), [`Error::InvalidArgument`] otherwise.
impl From<LogitsError> for Error {
    fn from(e: LogitsError) -> Self {
        match e {
            LogitsError::NonFinite { row } => Error::InvalidItem {
                item: "logits row",
                index: row,
                reason: NON_FINITE.into(),
            },
            other => Error::invalid(other.to_string()),
        }
    }
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
/// row containing NaN or `+inf`, or no finite value. A `-inf` logit is a
/// probability of 0: the target's log-probability is `-inf` if its logit is.
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
    let kernel = W::kernel();
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
    /// The fastest row kernel for this precision on this CPU.
    fn kernel() -> RowKernel<Self> {
        row_logprob
    }
}

impl Wide for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }

    fn kernel() -> RowKernel<Self> {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return |row, target| {
                // SAFETY: the CPU supports AVX2 and FMA (checked above).
                unsafe { avx2::row_logprob(row, target) }
            };
        }
        row_logprob
    }
}

impl Wide for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

type RowKernel<W> = fn(&[W], usize) -> Option<f64>;

/// `row[target] - logsumexp(row)` in f64, or `None` if the row holds NaN or
/// `+inf`, or only `-inf`.
fn row_logprob<W: Wide>(row: &[W], target: usize) -> Option<f64> {
    let max = row_max(row);
    finish(row[target].to_f64(), max, exp_sum(row, max))
}

/// Largest value of a row (`-inf` for an empty or all `-inf` row); comparisons
/// skip NaN, which [`exp_sum`] then propagates.
#[inline(always)]
fn row_max<W: Wide>(row: &[W]) -> f64 {
    row.iter().fold(f64::NEG_INFINITY, |hi, x| {
        let x = x.to_f64();
        if x > hi {
            x
        } else {
            hi
        }
    })
}

/// `sum(exp(x - max))` over a row, in f64; NaN if the row holds NaN.
#[inline(always)]
fn exp_sum<W: Wide>(row: &[W], max: f64) -> f64 {
    row.iter().map(|x| exp_nonpositive(x.to_f64() - max)).sum()
}

/// The log-probability from a row's maximum and sum, if both are finite (a
/// `+inf` maximum, an all `-inf` row or a NaN in the sum are not); `-inf` for a
/// target whose logit is `-inf`.
#[inline(always)]
fn finish(target_value: f64, max: f64, sum: f64) -> Option<f64> {
    (max.is_finite() && sum.is_finite()).then(|| target_value - max - sum.ln())
}

/// AVX2+FMA row kernel for f32 rows: 8 values per step, f64 accumulation.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256d, _mm256_add_epi64, _mm256_add_pd, _mm256_blendv_pd, _mm256_castpd_si256,
        _mm256_castps256_ps128, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_cvtps_pd,
        _mm256_extractf128_ps, _mm256_fmadd_pd, _mm256_fnmadd_pd, _mm256_loadu_ps, _mm256_max_ps,
        _mm256_mul_pd, _mm256_set1_epi64x, _mm256_set1_pd, _mm256_set1_ps, _mm256_setzero_pd,
        _mm256_slli_epi64, _mm256_storeu_pd, _mm256_storeu_ps, _mm256_sub_pd, _CMP_LT_OQ,
    };

    use super::{exp_sum, finish, row_max, INV_FACTORIALS, LN2_HI, LN2_LO, SHIFTER};

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn row_logprob(row: &[f32], target: usize) -> Option<f64> {
        let (body, tail) = row.split_at(row.len() / 8 * 8);
        let mut hi = _mm256_set1_ps(f32::NEG_INFINITY);
        for chunk in body.chunks_exact(8) {
            hi = _mm256_max_ps(hi, _mm256_loadu_ps(chunk.as_ptr()));
        }
        let mut his = [0f32; 8];
        _mm256_storeu_ps(his.as_mut_ptr(), hi);
        // A NaN in the body may leave a NaN lane: treat it as non-finite (a NaN that
        // max_ps passed over is caught by the sum below, into which it propagates).
        if his.iter().any(|v| v.is_nan()) {
            return None;
        }
        let max = row_max(tail).max(row_max(&his));
        let shift = _mm256_set1_pd(max);
        let (mut acc_lo, mut acc_hi) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for chunk in body.chunks_exact(8) {
            let x = _mm256_loadu_ps(chunk.as_ptr());
            let x_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
            let x_hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x));
            acc_lo = _mm256_add_pd(acc_lo, exp_nonpositive(_mm256_sub_pd(x_lo, shift)));
            acc_hi = _mm256_add_pd(acc_hi, exp_nonpositive(_mm256_sub_pd(x_hi, shift)));
        }
        let mut sums = [0f64; 4];
        _mm256_storeu_pd(sums.as_mut_ptr(), _mm256_add_pd(acc_lo, acc_hi));
        let sum = sums.iter().sum::<f64>() + exp_sum(tail, max);
        finish(f64::from(row[target]), max, sum)
    }

    /// Four lanes of [`super::exp_nonpositive`].
    #[inline(always)]
    unsafe fn exp_nonpositive(d: __m256d) -> __m256d {
        let floor = _mm256_set1_pd(-708.0);
        let d = _mm256_blendv_pd(d, floor, _mm256_cmp_pd::<_CMP_LT_OQ>(d, floor));
        let shifter = _mm256_set1_pd(SHIFTER);
        let shifted = _mm256_fmadd_pd(d, _mm256_set1_pd(std::f64::consts::LOG2_E), shifter);
        let n = _mm256_sub_pd(shifted, shifter);
        let r = _mm256_fnmadd_pd(n, _mm256_set1_pd(LN2_HI), d);
        let r = _mm256_fnmadd_pd(n, _mm256_set1_pd(LN2_LO), r);
        let mut p = _mm256_set1_pd(INV_FACTORIALS[12]);
        for k in (0..12).rev() {
            p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(INV_FACTORIALS[k]));
        }
        let bits = _mm256_add_epi64(_mm256_castpd_si256(shifted), _mm256_set1_epi64x(1023));
        _mm256_mul_pd(p, _mm256_castsi256_pd(_mm256_slli_epi64::<52>(bits)))
    }
}

const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// Adding 1.5 * 2^52 rounds to an integer held in the low mantissa bits.
const SHIFTER: f64 = 6_755_399_441_055_744.0;

/// `exp(d)` for `d <= 0` to ~1 ulp, branch-free.
///
/// Values below -708 are clamped there (their terms are < 1e-307 next to the
/// row maximum's 1). NaN propagates.
#[inline(always)]
fn exp_nonpositive(d: f64) -> f64 {
    let d = if d < -708.0 { -708.0 } else { d };
    let shifted = d * std::f64::consts::LOG2_E + SHIFTER;
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
            let d = -f64::from(i) * 708.0 / 200_000.0;
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
        let vocab = 37; // not a multiple of the SIMD width
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
    fn f32_kernel_matches_portable_kernel() {
        let kernel = <f32 as Wide>::kernel();
        for len in [1usize, 7, 8, 9, 64, 1001] {
            let row: Vec<f32> = (0..len)
                .map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 150.0)
                .collect();
            for target in [0, len / 2, len - 1] {
                let (got, want) = (kernel(&row, target), row_logprob(&row, target));
                assert!((got.unwrap() - want.unwrap()).abs() < 1e-12, "len={len}");
            }
            for bad in [f32::NAN, f32::INFINITY] {
                for at in [0, len / 2, len - 1] {
                    let mut row = row.clone();
                    row[at] = bad;
                    assert_eq!(kernel(&row, 0), None, "len={len} at={at} bad={bad}");
                }
            }
            // a -inf logit (a vocabulary mask) is a probability of 0, in both kernels (a row
            // of one value, masked, has no finite value: below)
            for at in [0, len / 2, len - 1].into_iter().filter(|_| len > 1) {
                let mut row = row.clone();
                row[at] = f32::NEG_INFINITY;
                for target in [0, len / 2, len - 1] {
                    let (got, want) = (kernel(&row, target), row_logprob(&row, target));
                    if target == at {
                        assert_eq!(got, Some(f64::NEG_INFINITY), "len={len} at={at}");
                    } else {
                        assert!((got.unwrap() - want.unwrap()).abs() < 1e-12, "len={len}");
                    }
                }
            }
            let masked = vec![f32::NEG_INFINITY; len];
            assert_eq!(kernel(&masked, 0), None, "len={len}: no finite value");
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
        for bad in [f64::NAN, f64::INFINITY] {
            let row = [0.0, 1.0, 2.0, 0.0, bad, 1.0];
            assert_eq!(
                target_logprobs(Logits::F64(&row), 3, &[0, 0]),
                Err(LogitsError::NonFinite { row: 1 })
            );
        }
        let all_masked = [
            0.0,
            1.0,
            2.0,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        assert_eq!(
            target_logprobs(Logits::F64(&all_masked), 3, &[0, 0]),
            Err(LogitsError::NonFinite { row: 1 })
        );
    }

    /// A refused row becomes the core's error located at that row, of the same message; the
    /// other errors its plain invalid argument.
    #[test]
    fn a_refused_row_is_an_error_at_that_row() {
        let row = [0.0, 1.0, 2.0, 0.0, f64::NAN, 1.0];
        let err = target_logprobs(Logits::F64(&row), 3, &[0, 0]).unwrap_err();
        let message = err.to_string();
        match Error::from(err) {
            e @ Error::InvalidItem { index: 1, .. } => assert_eq!(e.to_string(), message),
            e => panic!("not located at row 1: {e:?}"),
        }
        let err = LogitsError::Shape { len: 6, vocab: 4 };
        assert!(
            matches!(Error::from(err.clone()), Error::InvalidArgument(m) if m == err.to_string())
        );
    }

    #[test]
    fn masked_logits_are_probabilities_of_zero() {
        // -inf logits (a vocabulary mask) leave the others' softmax that of the row without them
        let ninf = f64::NEG_INFINITY;
        let masked = [1.0, ninf, 2.0, ninf, 0.5];
        let kept = [1.0, 2.0, 0.5];
        let got = target_logprobs(Logits::F64(&masked), 5, &[2]).unwrap()[0];
        assert!((got - reference(&kept, 1)).abs() < 1e-15, "{got}");
        let f32s: Vec<f32> = masked.iter().map(|&x| x as f32).collect();
        let got32 = target_logprobs(Logits::F32(&f32s), 5, &[2]).unwrap()[0];
        assert!((got32 - reference(&kept, 1)).abs() < 1e-6, "{got32}");
        // a masked target has probability 0
        let zero = target_logprobs(Logits::F64(&masked), 5, &[1]).unwrap()[0];
        assert_eq!(zero, ninf);
    }
}
