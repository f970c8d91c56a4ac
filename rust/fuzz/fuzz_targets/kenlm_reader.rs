//! The KenLM binary reader on arbitrary bytes: a model or a `BinaryFormat` error, never a panic,
//! an abort or a hang; a file it opens scores in place (and lists its words), a trie it converts
//! scores and writes ARPA.
#![no_main]

use std::sync::Arc;

use fastppl::formats::arpa::write_arpa_to;
use fastppl::formats::kenlm::{open_kenlm_bytes, read_kenlm_bytes, KenlmBinary};
use fastppl::model::scorer::Scorer;
use fastppl::util::job::Job;
use fastppl::util::mapped::FileBytes;
use libfuzzer_sys::fuzz_target;

/// Scores every id from a sentence start, and `</s>`.
fn score_every_word<M: Scorer>(model: &M, words: u32) {
    let mut state = model.sentence_start();
    for w in 0..words {
        model.prefetch(&state, w);
        model.score(&mut state, w);
    }
    model.score(&mut state, model.eos());
}

fuzz_target!(|data: &[u8]| {
    let Ok(bytes) = FileBytes::read(data, data.len()) else {
        return;
    };
    let bytes = Arc::new(bytes);
    match open_kenlm_bytes(Arc::clone(&bytes), "fuzz.bin") {
        Ok(KenlmBinary::Probing(model)) => {
            score_every_word(&model, model.counts()[0] as u32);
            let _ = model.words();
        }
        Ok(KenlmBinary::Trie(model)) => {
            score_every_word(&model, model.counts()[0] as u32);
            let _ = model.words();
        }
        Err(_) => {}
    }
    if let Ok(model) = read_kenlm_bytes(&bytes, "fuzz.bin", &Job::none()) {
        score_every_word(&model, model.vocab.len() as u32);
        let mut text = Vec::new();
        let _ = write_arpa_to(&model, &mut text);
    }
});
