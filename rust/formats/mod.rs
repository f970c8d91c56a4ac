//! Model files: ARPA text (read and write) and fastppl's own memory-mapped binary format.

pub mod arpa;
pub mod binary;
