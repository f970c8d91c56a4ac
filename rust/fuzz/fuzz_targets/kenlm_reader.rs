//! The KenLM binary reader on arbitrary bytes: a model or a `BinaryFormat` error, never a panic,
//! an abort or a hang; a model it accepts scores and writes ARPA.
#![no_main]

use fastppl::formats::arpa::write_arpa_to;
use fastppl::formats::kenlm::read_kenlm_bytes;
use fastppl::util::job::Job;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = read_kenlm_bytes(data, "fuzz.bin", &Job::none()) {
        let mut state = model.sentence_start();
        for w in 0..model.vocab.len() as u32 {
            model.score(&mut state, w);
        }
        let mut text = Vec::new();
        let _ = write_arpa_to(&model, &mut text);
    }
});
