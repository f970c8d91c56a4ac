//! Prefetching: hints that let a cache miss overlap other work.

/// How many items ahead a pass over a table's slots (or a buffer's records) prefetches what the
/// item at that distance will touch (enough to cover a DRAM miss at a few nanoseconds an item).
pub const SLOTS_AHEAD: usize = 16;

/// Asks the CPU to start loading the cache line of `value`: a hint that lets a lookup's cache
/// miss overlap other work (counting and scoring issue it a few keys ahead, the ARPA writer a
/// few words ahead).
#[inline]
pub fn prefetch<T>(value: &T) {
    prefetch_address(std::ptr::from_ref(value).cast());
}

/// [`prefetch`] of the cache line of `value` and of the line after it: a probe of a hash table
/// (slots of 12 to 24 bytes, probes of one to three slots) usually ends within those two.
#[inline]
pub fn prefetch_two_lines<T>(value: &T) {
    let p: *const i8 = std::ptr::from_ref(value).cast();
    prefetch_address(p);
    // (past the end of `value`'s allocation, perhaps: `wrapping_add` computes the address
    // without `add`'s in-bounds requirement, and a prefetch may name any address)
    prefetch_address(p.wrapping_add(64));
}

#[inline]
fn prefetch_address(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is only a hint to the cache; it never faults, whatever the address,
    // and reads nothing into the program's state.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p);
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// In a pass over items `0..len` in increasing order (as each of rayon's splits runs), called
/// at item `i`: prefetches what item `i + SLOTS_AHEAD` will touch, `target(i + SLOTS_AHEAD)`
/// (nothing past the end or where `target` gives nothing). Random updates of a large array
/// (atomic adds, whose misses cannot overlap one another) then find their cache line loaded.
#[inline]
pub fn prefetch_ahead<'a, T: 'a>(
    i: usize,
    len: usize,
    target: impl FnOnce(usize) -> Option<&'a T>,
) {
    let ahead = i + SLOTS_AHEAD;
    if ahead < len {
        if let Some(value) = target(ahead) {
            prefetch(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target asked for is the item `SLOTS_AHEAD` further, and none past the end.
    #[test]
    fn asks_for_the_item_ahead_and_none_past_the_end() {
        let items: Vec<u32> = (0..40).collect();
        let mut asked = Vec::new();
        for i in 0..items.len() {
            prefetch_ahead(i, items.len(), |j| {
                asked.push(j);
                items.get(j)
            });
        }
        assert_eq!(asked, (SLOTS_AHEAD..40).collect::<Vec<_>>());
    }
}
