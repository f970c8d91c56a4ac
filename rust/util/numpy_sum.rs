//! Sums of floats added in the order `numpy.sum` adds them, so that a total computed here equals,
//! bit for bit, NumPy's over the same values: results made without loading NumPy (an
//! evaluation's totals) keep the figures of those made with it.

/// Values summed one after another at the leaves of NumPy's pairwise summation.
const LEAF: usize = 8;

/// Values summed in eight running sums before a block is halved.
const BLOCK: usize = 128;

/// `numpy.sum` of a contiguous float64 array holding `values`: `0.0` plus their pairwise sum,
/// which splits a block of more than 128 values in two (the first half's length a multiple of
/// 8), adds up a block of 8 to 128 in eight running sums combined as a tree, and fewer than 8
/// one after another from -0.0.
pub fn numpy_sum(values: &[f64]) -> f64 {
    0.0 + pairwise(values)
}

fn pairwise(a: &[f64]) -> f64 {
    let n = a.len();
    if n < LEAF {
        a.iter().fold(-0.0, |sum, &x| sum + x)
    } else if n <= BLOCK {
        let mut r = [0.0; LEAF];
        r.copy_from_slice(&a[..LEAF]);
        let whole = n - n % LEAF;
        for block in a[LEAF..whole].chunks_exact(LEAF) {
            for (sum, &x) in r.iter_mut().zip(block) {
                *sum += x;
            }
        }
        let tree = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        a[whole..].iter().fold(tree, |sum, &x| sum + x)
    } else {
        let half = n / 2 - (n / 2) % LEAF;
        pairwise(&a[..half]) + pairwise(&a[half..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fewer than 8 values: in order; an empty sum and a sum of -0.0 are +0.0, as NumPy's.
    #[test]
    fn short_sums_add_in_order() {
        assert_eq!(numpy_sum(&[]).to_bits(), 0.0f64.to_bits());
        assert_eq!(numpy_sum(&[-0.0]).to_bits(), 0.0f64.to_bits());
        assert_eq!(numpy_sum(&[1e16, 1.0, 1.0]), (1e16 + 1.0) + 1.0);
        assert_eq!(numpy_sum(&[-1.5, f64::NEG_INFINITY]), f64::NEG_INFINITY);
    }

    /// From 8 values on, eight running sums: 1e16 followed by fifteen 1.0 rounds only the one
    /// that shares its running sum, where a sum in order rounds every one.
    #[test]
    fn blocks_use_eight_running_sums() {
        let mut values = vec![1.0; 16];
        values[0] = 1e16;
        let r0 = 1e16 + 1.0;
        let expected = ((r0 + 2.0) + (2.0 + 2.0)) + ((2.0 + 2.0) + (2.0 + 2.0));
        assert_eq!(numpy_sum(&values), expected);
        let sequential = values.iter().fold(0.0, |s, &x| s + x);
        assert_ne!(numpy_sum(&values), sequential);
    }

    /// Above 128 values the block is halved, the first half a multiple of 8 long.
    #[test]
    fn long_sums_split_in_halves() {
        let values: Vec<f64> = (0..300).map(|i| 1.0 / f64::from(i + 1)).collect();
        let expected = pairwise(&values[..144]) + pairwise(&values[144..]);
        assert_eq!(numpy_sum(&values), 0.0 + expected);
    }
}
