//! Transparent huge pages for the large tables that lookups hit at random.
//!
//! A model's probing tables are gigabytes read at random addresses: with 4 KiB pages nearly every
//! lookup also misses the TLB and walks the page tables. Where the kernel runs transparent huge
//! pages in `madvise` mode (the default of many distributions), memory asked for with
//! `MADV_HUGEPAGE` before it is first touched gets 2 MiB pages; for a file mapping the kernel
//! then reads the file into huge page-cache folios and maps them whole (when the file is not
//! already cached in small pieces). On the Gutenberg 5-gram this made scoring about 1.35x faster
//! on one core (`benches/MEASUREMENTS.md`, "Huge pages").
//!
//! The advice is only a hint: where the kernel has no huge pages, or refuses the advice, memory
//! behaves as before and nothing else changes. On other systems the functions do nothing.
//!
//! Two `unsafe` blocks: the `madvise` calls in `advise_range` and [`release_beyond`].

use rayon::prelude::*;

/// Below this size the advice is not worth a system call (and the memory may sit in the heap).
const WORTH_IT: usize = 4 << 20;

/// An empty vector with room for `capacity` items, whose memory the kernel is asked to back with
/// huge pages when it is first written (fill it after this call, not before).
///
/// ```
/// let mut v: Vec<u64> = fastppl::util::huge_pages::vec_with_capacity(1 << 20);
/// v.resize(1 << 20, 7);
/// assert!(v.capacity() >= 1 << 20 && v.iter().all(|&x| x == 7));
/// ```
pub fn vec_with_capacity<T>(capacity: usize) -> Vec<T> {
    try_vec_with_capacity(capacity).expect("memory for a large array")
}

/// [`vec_with_capacity`], or the error of an allocation that failed (for callers that turn it
/// into a clear message rather than a panic).
///
/// ```
/// let v: Vec<u64> = fastppl::util::huge_pages::try_vec_with_capacity(1 << 20).unwrap();
/// assert!(v.is_empty() && v.capacity() >= 1 << 20);
/// assert!(fastppl::util::huge_pages::try_vec_with_capacity::<u64>(usize::MAX).is_err());
/// ```
pub fn try_vec_with_capacity<T>(
    capacity: usize,
) -> Result<Vec<T>, std::collections::TryReserveError> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(capacity)?;
    advise_range(v.as_ptr().cast(), capacity.saturating_mul(size_of::<T>()));
    Ok(v)
}

/// The items of `items` collected on all cores into memory asked for as huge pages (see
/// [`vec_with_capacity`]): for the arrays of the in-memory fit, read or updated at random
/// addresses, and first written here (fewer page faults and TLB misses than 4 KiB pages).
///
/// ```
/// use rayon::prelude::*;
/// let v: Vec<u32> = fastppl::util::huge_pages::par_collect((0..1u32 << 20).into_par_iter());
/// assert!(v.iter().enumerate().all(|(i, &x)| x as usize == i));
/// ```
pub fn par_collect<T: Send>(items: impl IndexedParallelIterator<Item = T>) -> Vec<T> {
    let mut v = vec_with_capacity(items.len());
    v.par_extend(items);
    v
}

/// Asks for huge pages on a read-only file mapping, before its pages are read.
pub fn advise_mapping(map: &memmap2::Mmap) {
    #[cfg(target_os = "linux")]
    {
        // a hint: a kernel without transparent huge pages answers EINVAL, which changes nothing
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// Has the kernel read every page of a file mapping now (for callers about to read them all).
pub fn populate_mapping(map: &memmap2::Mmap) {
    #[cfg(target_os = "linux")]
    {
        // a hint too (Linux >= 5.14): without it the pages are read when first touched
        let _ = map.advise(memmap2::Advice::PopulateRead);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// Gives the whole pages of `v`'s memory past its first `len` items back to the kernel, which
/// fills them with zeros if they are touched again: for a vector kept for reuse and taken for
/// fewer items, so that its unused part stops counting as the process's memory. Items past
/// `len` must not be read before they are written again (as for any vector's spare capacity).
pub fn release_beyond<T>(v: &Vec<T>, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = v.as_ptr() as usize;
        let first = (start + len.min(v.capacity()) * size_of::<T>()).next_multiple_of(PAGE);
        let end = (start + v.capacity() * size_of::<T>()) / PAGE * PAGE;
        if end.saturating_sub(first) < WORTH_IT || v.len() > len {
            return;
        }
        // SAFETY: MADV_DONTNEED on private anonymous memory drops the pages' contents, which
        // later reads see as zeros; the range lies inside `v`'s allocation (rounded inward to
        // page boundaries) and past its `len` items, none of which holds an initialized item
        // (`v.len() <= len`), so no value is changed and the allocator's bookkeeping, outside
        // the allocation, is untouched. An error leaves the memory as it was.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (v, len, WORTH_IT);
}

/// `MADV_HUGEPAGE` on the whole pages inside `[start, start + len)`, an allocation of ours.
fn advise_range(start: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        if len < WORTH_IT {
            return;
        }
        let first = (start as usize).next_multiple_of(PAGE);
        let end = (start as usize + len) / PAGE * PAGE;
        // SAFETY: MADV_HUGEPAGE changes neither the contents nor the validity of memory (it only
        // marks the range as a candidate for huge pages); the range lies inside an allocation this
        // process owns, whose start and end were rounded inward to page boundaries as madvise
        // requires. An error (no transparent huge pages) leaves the memory as it was.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len, WORTH_IT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_memory_holds_what_is_written() {
        let mut v: Vec<u32> = vec_with_capacity(3 << 20);
        v.extend(0..3 << 20);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().enumerate().all(|(i, &x)| x as usize == i));
        // small and empty requests are left alone
        assert!(vec_with_capacity::<u8>(0).is_empty());
        assert!(vec_with_capacity::<u8>(10).capacity() >= 10);
    }

    #[test]
    fn collected_items_keep_their_order() {
        for n in [0usize, 5, 3 << 20] {
            let v: Vec<usize> = par_collect((0..n).into_par_iter().map(|i| i * 3));
            assert_eq!(v.len(), n);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i * 3));
        }
    }
}
