//! # fastppl core
//!
//! Counting, smoothing and scoring of n-gram language models, usable and tested without Python;
//! `py/` is the only place that knows about Python.
//!
//! ## The tree
//! One folder per concern, from the bottom up:
//!
//! | module       | holds                                                                 |
//! |--------------|-----------------------------------------------------------------------|
//! | [`error`]    | the one error type; `Error::invalid`, `Error::io(path)`               |
//! | [`util`]     | knows no n-grams: compressed files, disk sorts, mapped views, floats  |
//! | [`metrics`]  | logits to log-probabilities (stands apart: uses nothing else here)     |
//! | [`corpus`]   | tokens interned as ids, sentence modes, tokenizers, vocab, padded stream |
//! | [`ngram`]    | keys (packing, `EMPTY`, `find_chain`, `MAX_ORDER`), counts, probing tables |
//! | [`model`]    | the model in backoff form, its scoring state, the `Scorer` trait, corpus scoring |
//! | [`formats`]  | ARPA (reader, [`formats::arpa::ArpaWriter`]), the binary format, KenLM's binaries (scored in place; tries also converted) |
//! | [`estimate`] | [`estimate::Smoothing`] (the estimator list), pruning, fit, budgeted |
//! | `py`         | the only PyO3 code (feature `python`, on by default)                   |
//!
//! Arrows only point down: `py -> estimate -> formats -> model -> ngram -> corpus -> util ->
//! error`, so there is no import circle and each layer is tested without the ones above it
//! (the unit test `arrows_only_point_down` below checks every `crate::` path outside unit tests).
//!
//! ## Design
//! - **Ids, not strings.** A [`corpus::Corpus`] interns tokens into `u32` ids once
//!   ([`corpus::vocab::Vocab`], with `<unk>`, `<s>`, `</s>` at ids 0, 1, 2); everything after
//!   that works on flat id arrays with sentence offsets.
//! - **One key shape for every order.** An n-gram of order m >= 2 is keyed by the entry number
//!   of its (m-1)-word prefix and its last word, packed in a `u64` ([`ngram::keys`]). Keys are 8
//!   bytes whatever the order, no n-gram ever allocates, and scoring a token looks up the n-grams
//!   ending at it one order at a time from the entries that ended at the previous token: the same
//!   walk KenLM's `FullScore` does over its probing tables.
//! - **Parallel without locks.** Order m is counted in one pass over the stream once order m-1 is
//!   done ([`ngram::counts`]), all threads adding into one open-addressing table (slots claimed by
//!   compare-and-swap, counts added atomically) sized from a HyperLogLog estimate. A slot's
//!   position is the n-gram's entry number from then on: the model's tables ([`ngram::probing`])
//!   are built slot for slot, with no rehashing. Measured on 56 M Gutenberg tokens (2 cores):
//!   counting orders 1-5 takes 11 s and 3.5 GB; this replaced sharded hashbrown tables plus a
//!   rebuild, which took 3x longer.
//! - **Latency, not arithmetic.** A large model does not fit in cache, so scoring is bound by
//!   memory latency. fastppl's own models score a batch of sentences one order at a time
//!   ([`model::by_order`]): the lookups of one order are independent, sorted by slot and
//!   prefetched ahead (1.35x faster per core than the scorer before it on a 5-gram of 119 M
//!   n-grams). Other scorers score 8 sentences side by side and prefetch the slots of each one's
//!   next token ([`model::interleaved`]), which tripled throughput on a 28 M-trigram model.
//! - **One model shape for every estimator.** Each estimator ([`estimate`]) compiles to backoff
//!   form ([`model`]): ln p for every counted n-gram and a weight for every context. For the
//!   interpolated family (Witten-Bell, absolute discounting, Kneser-Ney, modified Kneser-Ney) this
//!   is exact (it is what an ARPA file holds); MLE and add-k use a flat fallback instead. Scoring
//!   is then the same code for every estimator.
//! - **Exactness.** Probabilities are stored as `f64` natural logs and summed per sentence in
//!   `f64`; modified Kneser-Ney discounts are computed in `f32` as lmplz does, so that fitted
//!   models reproduce KenLM's ARPA files.
//! - **One scoring code for every model.** Scoring ([`model::score`], the `py` bindings) is
//!   generic over [`model::scorer::Scorer`] (word ids, a state, one word scored at a time),
//!   monomorphized for each model type: fastppl's [`model::Model`] and KenLM's binary files
//!   used in place ([`formats::kenlm::KenlmModel`], probing or trie), which opens in
//!   milliseconds where converting a large trie took minutes.
//! - **Saved models are mapped, not parsed.** [`formats::binary`] writes a model's probing tables
//!   byte for byte; loading maps the file and uses the tables in place (validated first,
//!   checksummed), so it costs little more than rebuilding the vocabulary.
//!
//! - **Tokenization is NLTK's, natively.** `tokenizer="nltk"` is a rule-for-rule port of NLTK
//!   3.10.4's Punkt and `NLTKWordTokenizer` ([`corpus::nltk`]), checked token for token against
//!   NLTK on 320 MB of Gutenberg text; it reads Punkt's `punkt_tab` files directly.
//!
//! Errors are values ([`error::Error`]); nothing here panics on user input.

pub mod corpus;
pub mod distributed;
pub mod error;
pub mod estimate;
pub mod formats;
pub mod metrics;
pub mod model;
pub mod ngram;
#[cfg(feature = "python")]
mod py;
pub mod util;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The top-level modules from the bottom up: a module may use those before it, never those
    /// after it (`metrics` stands apart and uses none of the others).
    const LAYERS: [&str; 10] = [
        "error",
        "util",
        "metrics",
        "corpus",
        "ngram",
        "model",
        "formats",
        "estimate",
        "distributed",
        "py",
    ];

    fn layer(module: &str) -> usize {
        LAYERS
            .iter()
            .position(|&m| m == module)
            .unwrap_or_else(|| panic!("module {module} is not in LAYERS"))
    }

    /// Every `crate::<module>` path in the `.rs` files of `dir` (unit tests and comments left
    /// out), with its file; `rust/fuzz`, a crate of its own, is not part of the tree.
    fn uses(dir: &Path, found: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("rust/fuzz") {
                    uses(&path, found);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (at, _) in line.match_indices("crate::") {
                    let rest = &line[at + "crate::".len()..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    found.push((path.display().to_string(), rest[..end].to_string()));
                }
            }
        }
    }

    #[test]
    fn arrows_only_point_down() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rust");
        let mut found = Vec::new();
        uses(&root, &mut found);
        assert!(found.len() > 50, "too few paths found: {}", found.len());
        let upward: Vec<String> = found
            .iter()
            .filter_map(|(file, used)| {
                let relative = Path::new(file).strip_prefix(&root).unwrap();
                let first = relative.iter().next().unwrap().to_str().unwrap();
                let module = first.trim_end_matches(".rs");
                if module == "lib" {
                    return None;
                }
                (layer(used) > layer(module)).then(|| format!("{file} uses crate::{used}"))
            })
            .collect();
        assert!(upward.is_empty(), "upward imports: {upward:#?}");
    }
}
