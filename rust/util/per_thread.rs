//! Folding a slice on all cores into one accumulator per thread.
//!
//! Where every item adds to a small array (counts by word, statistics by context), threads that
//! share one array write the same cache lines at once and take them from each other; an array
//! per thread, added up at the end, costs one merge instead. Rayon's own `fold` makes one
//! accumulator per split of the work, which for an accumulator the size of a vocabulary means
//! many of them, each zeroed: here there is one per thread.

use rayon::prelude::*;

/// Cuts `items` into one part per thread; on each, `fold(acc, first, part)` adds the part (whose
/// first item is `items[first]`) to an accumulator made by `zero`; `merge(a, b)` adds `b` into
/// `a`. `zero()` when there is no item.
///
/// ```
/// let items: Vec<u64> = (1..=100).collect();
/// let sum = fastppl::util::per_thread::fold(
///     &items,
///     || 0u64,
///     |acc, _, part| *acc += part.iter().sum::<u64>(),
///     |a, b| *a += b,
/// );
/// assert_eq!(sum, 5050);
/// ```
pub fn fold<T: Sync, A: Send>(
    items: &[T],
    zero: impl Fn() -> A + Sync,
    fold: impl Fn(&mut A, usize, &[T]) + Sync,
    merge: impl Fn(&mut A, A) + Sync,
) -> A {
    let part = items.len().div_ceil(rayon::current_num_threads()).max(1);
    items
        .par_chunks(part)
        .enumerate()
        .map(|(i, chunk)| {
            let mut acc = zero();
            fold(&mut acc, i * part, chunk);
            acc
        })
        .reduce_with(|mut a, b| {
            merge(&mut a, b);
            a
        })
        .unwrap_or_else(zero)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part is told where it starts: a histogram of positions modulo 7 comes out whole.
    #[test]
    fn parts_know_their_offsets_and_merge_whole() {
        for n in [0usize, 1, 5, 1000] {
            let items = vec![(); n];
            let hist = fold(
                &items,
                || [0usize; 7],
                |acc, first, part| {
                    for i in first..first + part.len() {
                        acc[i % 7] += 1;
                    }
                },
                |a, b| a.iter_mut().zip(b).for_each(|(x, y)| *x += y),
            );
            let expected: Vec<usize> = (0..7)
                .map(|r| (0..n).filter(|i| i % 7 == r).count())
                .collect();
            assert_eq!(hist.to_vec(), expected, "n = {n}");
        }
    }
}
