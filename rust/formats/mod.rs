//! Model files: ARPA text (read and write), fastppl's own memory-mapped binary format, and
//! KenLM's binary files (read).

pub mod arpa;
pub mod binary;
pub mod kenlm;

use std::f64::consts::LN_10;

/// A model file's float32 log10 value as a float64 natural log; `-99` is log10 0 (SRILM's
/// spelling, which ARPA files and KenLM's binary files share).
pub(crate) fn ln_from_log10(value: f32) -> f64 {
    if value == -99.0 {
        f64::NEG_INFINITY
    } else {
        f64::from(value) * LN_10
    }
}
