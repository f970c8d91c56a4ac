//! Prefetching: hints that let a cache miss overlap other work.

/// Asks the CPU to start loading the cache line of `value`: a hint that lets a lookup's cache
/// miss overlap other work (counting and scoring issue it a few keys ahead, the ARPA writer a
/// few words ahead).
#[inline]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p: *const T = value;
        // SAFETY: prefetching is only a hint to the cache; it never faults, reads nothing into
        // the program's state, and the pointer comes from a reference.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
