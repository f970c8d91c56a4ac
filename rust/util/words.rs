//! Copies and comparisons of a few words (the ids and payload of one record), without the libc
//! calls of the slice methods: `extend_from_slice` and `copy_from_slice` with a length known only
//! at run time call `memcpy`, whose call and size dispatch cost more than copying the 12-28 bytes
//! of an n-gram record (such copies were about a tenth of the CPU time of a budgeted estimation's
//! last stage), so copies here have a length fixed at compile time where it is small; and slice
//! equality calls `memcmp` (2.9 % of that estimation's CPU time), so comparisons here loop.

/// Calls `$f::<N>($args)` with N the value of `$len` when it is 1 to 8, else `$f::<0>($args)`
/// (0 standing for "a length known at run time").
macro_rules! with_fixed_len {
    ($len:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $len {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            _ => $f::<0>($($arg),*),
        }
    };
}
pub(crate) use with_fixed_len;

#[inline(always)]
fn extend_fixed<const N: usize>(v: &mut Vec<u32>, src: &[u32]) {
    if N == 0 {
        v.extend_from_slice(src);
    } else {
        v.extend_from_slice(&src[..N]);
    }
}

#[inline(always)]
fn copy_fixed<const N: usize>(dst: &mut [u32], src: &[u32]) {
    if N == 0 {
        dst.copy_from_slice(src);
    } else {
        dst[..N].copy_from_slice(&src[..N]);
    }
}

/// Appends `src` to `v` (as `extend_from_slice`).
#[inline(always)]
pub fn extend_words(v: &mut Vec<u32>, src: &[u32]) {
    with_fixed_len!(src.len(), extend_fixed(v, src));
}

/// Copies `src` into `dst`, of the same length (as `copy_from_slice`).
#[inline(always)]
pub fn copy_words(dst: &mut [u32], src: &[u32]) {
    assert_eq!(dst.len(), src.len(), "copy_words: lengths differ");
    with_fixed_len!(src.len(), copy_fixed(dst, src));
}

/// Whether two keys (or parts of records) hold the same words (as `a == b`).
#[inline]
pub fn equal_words(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_compares_every_length_as_the_slice_methods_do() {
        let src: Vec<u32> = (1..=13).collect();
        for len in 0..=12 {
            let mut v = vec![99];
            extend_words(&mut v, &src[..len]);
            let mut expected = vec![99];
            expected.extend_from_slice(&src[..len]);
            assert_eq!(v, expected);
            let mut dst = vec![0; len];
            copy_words(&mut dst, &src[..len]);
            assert_eq!(dst, &src[..len]);
            assert!(equal_words(&dst, &src[..len]));
            assert_eq!(equal_words(&dst, &src[1..=len]), len == 0);
        }
        assert!(!equal_words(&src[..2], &src[..3]));
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn copy_refuses_unequal_lengths() {
        copy_words(&mut [0; 3], &[1, 2]);
    }
}
