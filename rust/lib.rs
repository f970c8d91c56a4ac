//! # fastppl core
//!
//! Counting, smoothing and scoring of n-gram language models, usable and tested without Python;
//! `py/` is the only place that knows about Python.
//!
//! ## Design
//! - **Ids, not strings.** A [`corpus::Corpus`] interns tokens into `u32` ids once
//!   ([`vocab::Vocab`], with `<unk>`, `<s>`, `</s>` at ids 0, 1, 2); everything after that works on
//!   flat id arrays with sentence offsets.
//! - **One key shape for every order.** An n-gram of order m >= 2 is keyed by the entry number
//!   of its (m-1)-word prefix and its last word, packed in a `u64` ([`table`]). Keys are 8 bytes
//!   whatever the order, no n-gram ever allocates, and scoring a token looks up the n-grams ending
//!   at it one order at a time from the entries that ended at the previous token: the same walk
//!   KenLM's `FullScore` does over its probing tables.
//! - **Parallel without locks.** Order m is counted in one pass over the stream once order m-1 is
//!   done ([`counts`]), all threads adding into one open-addressing table (slots claimed by
//!   compare-and-swap, counts added atomically) sized from a HyperLogLog estimate. A slot's
//!   position is the n-gram's entry number from then on: the model's tables ([`probing`]) are
//!   built slot for slot, with no rehashing. Measured on 56 M Gutenberg tokens (2 cores):
//!   counting orders 1-5 takes 11 s and 3.5 GB; this replaced sharded hashbrown tables plus a
//!   rebuild, which took 3x longer.
//! - **Latency, not arithmetic.** A large model does not fit in cache, so scoring is bound by
//!   memory latency; each thread scores 8 sentences side by side and prefetches the slots of
//!   each one's next token ([`score`]), which tripled throughput on a 28 M-trigram model.
//! - **One model shape for every estimator.** Each estimator ([`estimate`]) compiles to backoff
//!   form ([`model`]): ln p for every counted n-gram and a weight for every context. For the
//!   interpolated family (Witten-Bell, absolute discounting, Kneser-Ney, modified Kneser-Ney) this
//!   is exact (it is what an ARPA file holds); MLE and add-k use a flat fallback instead. Scoring
//!   is then the same code for every estimator.
//! - **Exactness.** Probabilities are stored as `f64` natural logs and summed per sentence in
//!   `f64`; modified Kneser-Ney discounts are computed in `f32` as lmplz does, so that fitted
//!   models reproduce KenLM's ARPA files.
//! - **Saved models are mapped, not parsed.** [`binary`] writes a model's probing tables byte for
//!   byte; loading maps the file and uses the tables in place (validated first, checksummed), so
//!   it costs little more than rebuilding the vocabulary.
//!
//! Errors are values ([`error::Error`]); nothing here panics on user input.

pub mod arpa;
pub mod binary;
pub mod compressed;
pub mod corpus;
pub mod counts;
pub mod distributed;
pub mod error;
pub mod estimate;
pub mod external;
pub mod kenlm_float;
pub mod metrics;
pub mod model;
pub mod probing;
mod py;
pub mod score;
pub mod spill;
pub mod stream;
pub mod table;
pub mod vocab;
