//! The binary model loader on arbitrary file contents, with `verify` on and off and from memory
//! or a mapping: an error or a model that then scores and writes (ARPA, binary) without a
//! panic or an endless loop. Verified models must also round-trip through `save`.
#![no_main]

use std::path::PathBuf;

use fastppl::corpus::vocab::EOS;
use fastppl::formats::binary::{load, save};
use fastppl::util::job::Job;
use libfuzzer_sys::fuzz_target;

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fastppl-fuzz-{}-{name}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch("model.fppl");
    std::fs::write(&path, data).expect("scratch file");
    let job = Job::none();
    for (verify, mmap) in [(true, true), (false, true), (false, false)] {
        let Ok(model) = load(&path, verify, mmap, &job) else {
            continue;
        };
        let ids: Vec<u32> = (0..model.vocab_size().min(64) as u32)
            .chain([EOS])
            .collect();
        let mut state = model.sentence_start();
        for &w in &ids {
            let _ = model.score_full(&mut state, w);
        }
        let _ = fastppl::formats::arpa::write_arpa_to(&model, &mut Vec::new());
        let copy = scratch("copy.fppl");
        save(&model, &copy, &job).expect("a loaded model saves");
        if verify {
            load(&copy, true, true, &job).expect("a saved model loads");
        }
    }
});
