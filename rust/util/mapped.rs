//! Read-only typed views into a memory-mapped file ([`MappedSlice`]): how a loaded binary model
//! uses its probing tables in place ([`crate::formats::binary`]).
//!
//! ## Safety
//! One `unsafe` block: [`MappedSlice::as_slice`] re-creates a slice that
//! `bytemuck::try_cast_slice` produced (alignment and length checked) from memory that the
//! `Arc<Mmap>` it holds keeps mapped and unchanged.

use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// A read-only `&[T]` view into a shared memory map, made only from a checked cast.
pub struct MappedSlice<T> {
    map: Arc<Mmap>,
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a MappedSlice is an `Arc<Mmap>` (Send + Sync) plus a shared borrow of immutable memory
// inside it, i.e. what `&[T]` is: Send and Sync when `T` is Sync.
unsafe impl<T: Sync> Send for MappedSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for MappedSlice<T> {}

impl<T: Pod> MappedSlice<T> {
    /// A view of `map[offset..offset + bytes]` as `[T]`, or `None` when the range is out of the
    /// map, or misaligned or not a whole number of `T` for a `T` view.
    pub fn new(map: Arc<Mmap>, offset: usize, bytes: usize) -> Option<Self> {
        let end = offset.checked_add(bytes)?;
        let raw = map.get(offset..end)?;
        let typed: &[T] = bytemuck::try_cast_slice(raw).ok()?;
        let ptr = NonNull::from(typed).cast::<T>();
        let len = typed.len();
        Some(MappedSlice { map, ptr, len })
    }
}

impl<T> MappedSlice<T> {
    /// The view.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` and `len` come from a `&[T]` that `bytemuck::try_cast_slice` made from
        // bytes of `self.map` (so aligned, in bounds, and valid for `T: Pod`, any bit pattern
        // being a valid `T`). The mapping is read-only and owned by the `Arc` held here, so it
        // stays mapped and is never written through for as long as `self` (and the returned
        // borrow) lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Clone for MappedSlice<T> {
    fn clone(&self) -> Self {
        MappedSlice {
            map: Arc::clone(&self.map),
            ptr: self.ptr,
            len: self.len,
        }
    }
}

impl<T> std::fmt::Debug for MappedSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedSlice({} elements)", self.len)
    }
}
