//! N-grams as ids: their packed keys, counting them, and the probing tables that hold them.

pub mod counts;
pub mod keys;
pub mod probing;
