//! The tokenizers on arbitrary text: NLTK's word tokenizer and Punkt (English parameters as
//! bundled), in every sentence grouping, KenLM's and whitespace splitting. Never a panic; every
//! token is a non-empty piece of the text's characters, and the corpus counts add up.
#![no_main]

use std::sync::OnceLock;

use fastppl::corpus::nltk::{word_tokenize, Grouping, Punkt, PunktParams, WordRule};
use fastppl::corpus::{Corpus, SentenceMode};
use fastppl::util::job::Job;
use libfuzzer_sys::fuzz_target;

fn punkt() -> &'static Punkt {
    static PUNKT: OnceLock<Punkt> = OnceLock::new();
    PUNKT.get_or_init(|| {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../python/fastppl/data/punkt_tab/english"
        );
        Punkt::new(PunktParams::load(std::path::Path::new(dir)).expect("bundled Punkt parameters"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let job = Job::none();
    let rules = [WordRule::Nltk, WordRule::Whitespace];
    for (p, rule) in [Some(punkt()), None].into_iter().flat_map(|p| rules.map(|r| (p, r))) {
        let mut batches = Vec::new();
        word_tokenize(p, text, rule, &job, &mut |b| batches.push(b))
            .expect("no cancellation here");
        let types: Vec<&str> = batches.iter().flat_map(|b| b.new_types()).collect();
        assert!(types.iter().all(|t| !t.is_empty()), "an empty token");
        assert!(
            batches.iter().flat_map(|b| b.tokens()).all(|t| (t as usize) < types.len()),
            "a token of no type"
        );
    }
    for grouping in [
        Grouping::Punkt,
        Grouping::Lines,
        Grouping::Terminators,
        Grouping::Whole,
    ] {
        for rule in [WordRule::Nltk, WordRule::Whitespace] {
            let mut corpus = Corpus::new();
            let _ = corpus.push_nltk_text(text, Some(punkt()), grouping, rule, &job);
        }
    }
    let mut corpus = Corpus::new();
    let _ = corpus.push_kenlm_text(text);
    for mode in [
        SentenceMode::Lines,
        SentenceMode::Terminators,
        SentenceMode::Whole,
    ] {
        let mut corpus = Corpus::new();
        if corpus.push_whitespace_text(text, mode).is_ok() {
            let lengths: usize = (0..corpus.num_sentences())
                .map(|s| corpus.sentence(s).len())
                .sum();
            assert_eq!(lengths, corpus.num_tokens());
        }
    }
});
