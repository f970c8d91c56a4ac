//! Model files: ARPA text (read and write), fastppl's own memory-mapped binary format, and
//! KenLM's binary files (read).

pub mod arpa;
pub mod binary;
pub mod kenlm;
