//! Large arrays kept for reuse: fresh memory is slow to touch the first time (the kernel zeroes
//! every page it hands out, and on a virtual machine each fresh page is a fault in the host too),
//! and the sorts of a budgeted estimation ask for arrays of about the same few sizes, one
//! sort after another: of the 3.9 GB of huge pages the 5-gram of Gutenberg faulted in under a
//! 2 GiB budget, 3.65 GB were sort buffers, each freed just before another of nearly its size
//! was asked for.

use std::collections::TryReserveError;
use std::sync::{Mutex, PoisonError};

use crate::util::huge_pages;

/// A pool of empty vectors for reuse. It holds no more of them than were in use at once, and no
/// more memory in each than its last use touched (the pages past what a vector is taken for are
/// given back to the kernel); [`Recycled::clear`] lets go of them all.
#[derive(Debug)]
pub struct Recycled<T>(Mutex<Vec<Vec<T>>>);

impl<T> Default for Recycled<T> {
    fn default() -> Self {
        Recycled(Mutex::new(Vec::new()))
    }
}

impl<T> Recycled<T> {
    /// An empty vector with room for `n` items: the smallest free one that has it (its memory
    /// past the first `n` items given back), or else a new one, asked for as huge pages with room
    /// for twice as many (address space only: pages are memory once touched), so that the
    /// slightly larger sizes asked for next fit in it. On such a miss every free vector is let
    /// go: the sizes asked for have outgrown them.
    pub fn take(&self, n: usize) -> Result<Vec<T>, TryReserveError> {
        let mut free = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // (a few vectors: as many as sorts run at once)
        let fit = (0..free.len())
            .filter(|&i| free[i].capacity() >= n)
            .min_by_key(|&i| free[i].capacity());
        if let Some(i) = fit {
            let v = free.swap_remove(i);
            drop(free);
            huge_pages::release_beyond(&v, n);
            return Ok(v);
        }
        let unfit = std::mem::take(&mut *free);
        drop(free);
        drop(unfit);
        huge_pages::try_vec_with_capacity(n.saturating_mul(2))
            .or_else(|_| huge_pages::try_vec_with_capacity(n))
    }

    /// Gives `v` back (emptied) for later use.
    pub fn put(&self, mut v: Vec<T>) {
        if v.capacity() == 0 {
            return;
        }
        v.clear();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(v);
    }

    /// Frees every vector held.
    pub fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    #[cfg(test)]
    fn capacities(&self) -> Vec<usize> {
        let mut c: Vec<usize> = self.0.lock().unwrap().iter().map(Vec::capacity).collect();
        c.sort_unstable();
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_the_smallest_fit_or_a_roomy_new_one() {
        let pool = Recycled::<u128>::default();
        for n in [100, 300, 200] {
            pool.put(Vec::with_capacity(n));
        }
        pool.put(Vec::new());
        let fit = pool.take(150).unwrap();
        assert!((200..300).contains(&fit.capacity()), "{}", fit.capacity());
        assert_eq!(pool.capacities(), [100, 300]);
        pool.put(fit);
        // none fits: a new vector with room to grow, and the free ones are let go
        let new = pool.take(1000).unwrap();
        assert!(new.capacity() >= 2000 && new.is_empty());
        assert!(pool.capacities().is_empty());
        pool.put(new);
        assert!(pool.take(1500).unwrap().capacity() >= 2000);
        pool.put(Vec::with_capacity(10));
        pool.clear();
        assert!(pool.capacities().is_empty());
        assert!(pool.take(usize::MAX).is_err());
    }

    #[test]
    fn a_large_vector_taken_for_fewer_items_holds_what_is_written_again() {
        // its pages past the items taken for are given back, and zero-filled when touched again
        let pool = Recycled::<u32>::default();
        let mut v = pool.take(8 << 20).unwrap();
        v.extend(0..8 << 20);
        pool.put(v);
        let mut v = pool.take(1 << 20).unwrap();
        assert!(v.is_empty() && v.capacity() >= 8 << 20);
        v.extend((0..8 << 20).map(|x| x ^ 5));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 ^ 5));
    }
}
