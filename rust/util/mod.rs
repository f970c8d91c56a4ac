//! Generic machinery that knows no n-grams: atomic file replacement, files written by a thread of their own (and how such threads end), compressed files, writes past the page cache, files copied as they grow, sorting on disk, memory-mapped
//! views and huge pages for them, KenLM's float formatting and string hash, a long call's cancel flag and progress,
//! sums with one accumulator per thread, sums in NumPy's order, prefetch hints, strings interned into one allocation, copies of a few words.

pub mod atomic;
pub mod background_write;
pub mod channel_thread;
pub mod compressed;
pub mod direct_write;
pub mod float_format;
pub mod growing_file;
pub mod huge_pages;
pub mod interner;
pub mod job;
pub mod mapped;
pub mod murmur;
pub mod numpy_sum;
pub mod per_thread;
pub mod prefetch;
pub mod spill;
pub mod words;
