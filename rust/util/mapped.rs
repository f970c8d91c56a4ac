//! Read-only typed views into a file's bytes ([`MappedSlice`] over [`FileBytes`]): how a loaded
//! binary model uses its probing tables in place ([`crate::formats::binary`]), whether the file
//! is memory-mapped or was read into memory.
//!
//! ## Safety
//! Two `unsafe` blocks: [`FileBytes::map`] (mapping a file), and [`MappedSlice::as_slice`] re-creates a slice that
//! `bytemuck::try_cast_slice` produced (alignment and length checked) from memory that the
//! `Arc<FileBytes>` it holds keeps alive and unchanged.

use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

use super::huge_pages;

/// The bytes of a file: memory-mapped, or read into memory (8-byte aligned, so that they can be
/// viewed as the same types as a mapping, which is page-aligned).
pub enum FileBytes {
    Mapped(Mmap),
    /// The file's bytes, in words so that they are aligned, and the byte length.
    Read(Vec<u64>, usize),
}

impl FileBytes {
    /// Maps `file` read-only, asking for huge pages (see [`super::huge_pages`]); `populate` has
    /// the kernel read every page now (for callers that are about to read them all).
    pub fn map(file: &std::fs::File, populate: bool) -> std::io::Result<FileBytes> {
        // SAFETY: mapping a file is unsafe only because another process could change the file
        // while it is mapped; fastppl itself never writes a file in place (outputs are written
        // to a temporary file renamed over the target), the bytes read through a mapping are
        // bounds-checked views of types for which any bit pattern is valid, and the contract
        // left to users (do not truncate or rewrite a loaded file in place) is documented.
        let map = unsafe { Mmap::map(file) }?;
        // the advice must come before the pages are read for the kernel to read them as huge ones
        huge_pages::advise_mapping(&map);
        if populate {
            huge_pages::populate_mapping(&map);
        }
        Ok(FileBytes::Mapped(map))
    }

    /// Reads `len` bytes of `reader` into aligned memory.
    pub fn read(mut reader: impl std::io::Read, len: usize) -> std::io::Result<FileBytes> {
        let mut words = huge_pages::vec_with_capacity(len.div_ceil(8));
        words.resize(len.div_ceil(8), 0u64);
        reader.read_exact(&mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len])?;
        Ok(FileBytes::Read(words, len))
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(map) => map,
            FileBytes::Read(words, len) => &bytemuck::cast_slice(words)[..*len],
        }
    }
}

/// A read-only `&[T]` view into shared file bytes, made only from a checked cast.
pub struct MappedSlice<T> {
    map: Arc<FileBytes>,
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a MappedSlice is an `Arc<FileBytes>` (Send + Sync) plus a shared borrow of immutable memory
// inside it, i.e. what `&[T]` is: Send and Sync when `T` is Sync.
unsafe impl<T: Sync> Send for MappedSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for MappedSlice<T> {}

impl<T: Pod> MappedSlice<T> {
    /// A view of `map[offset..offset + bytes]` as `[T]`, or `None` when the range is out of the
    /// map, or misaligned or not a whole number of `T` for a `T` view.
    pub fn new(map: Arc<FileBytes>, offset: usize, bytes: usize) -> Option<Self> {
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
        // being a valid `T`). The bytes (a read-only mapping, or a buffer nothing mutates after
        // reading) are owned by the `Arc` held here, so they stay in place and are never written
        // through for as long as `self` (and the returned borrow) lives.
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
