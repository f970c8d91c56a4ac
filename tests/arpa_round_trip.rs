//! Integration test through the public Rust API: fit -> ARPA text -> read back -> score. The
//! model read back must score a held-out text as the fitted one does (up to the float32 log10
//! values an ARPA file holds) and write the same ARPA text again.

use fastppl::corpus::{Corpus, SentenceMode};
use fastppl::estimate::{fit, Parameters, Pruning, Smoothing, ESTIMATORS};
use fastppl::formats::arpa::{read_arpa_from, write_arpa_to};
use fastppl::model::score::{score_corpus, OovPolicy};
use fastppl::model::Model;
use fastppl::util::job::Job;

/// `sentences` lines of words drawn from a skewed 40-word vocabulary by a fixed LCG.
fn text(sentences: usize, seed: u64) -> String {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let mut out = String::new();
    for _ in 0..sentences {
        let len = 3 + next() % 9;
        let words: Vec<String> = (0..len)
            .map(|_| format!("w{}", (next() % 40) * (next() % 40) / 40))
            .collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

fn corpus(text: &str) -> Corpus {
    let mut c = Corpus::new();
    c.push_whitespace_text(text, SentenceMode::Lines).unwrap();
    c.finish();
    c
}

fn sentence_logprobs(model: &Model, corpus: &Corpus) -> Vec<f64> {
    let scores = score_corpus(model, corpus, OovPolicy::Unk, false, &Job::none()).unwrap();
    scores
        .logprob
        .iter()
        .zip(&scores.oov_logprob)
        .map(|(a, b)| a + b)
        .collect()
}

#[test]
fn every_arpa_estimator_survives_a_round_trip() {
    let train = corpus(&text(400, 7));
    let held_out = corpus(&text(50, 99));
    let params = Parameters {
        discount_fallback: true,
        ..Parameters::default()
    };
    let mut written = 0;
    for (name, _) in ESTIMATORS {
        let smoothing = Smoothing::parse(name, &params).unwrap();
        if !smoothing.is_interpolated() {
            continue;
        }
        for order in [2, 3, 4] {
            let model = fit(
                &train,
                order,
                true,
                smoothing,
                &Pruning::none(),
                &Job::none(),
            )
            .unwrap();
            let mut arpa = Vec::new();
            write_arpa_to(&model, &mut arpa).unwrap();
            let again = read_arpa_from(&arpa[..], name).unwrap();
            assert_eq!(
                again.ngram_counts(),
                model.ngram_counts(),
                "{name} order {order}"
            );

            let (ours, theirs) = (
                sentence_logprobs(&model, &held_out),
                sentence_logprobs(&again, &held_out),
            );
            assert_eq!(ours.len(), 50);
            for (a, b) in ours.iter().zip(&theirs) {
                assert!(a.is_finite() && *a < 0.0, "{name} order {order}: {a}");
                // float32 log10 values: ~1e-7 relative each, summed over a sentence
                assert!(
                    (a - b).abs() <= 1e-5 * a.abs(),
                    "{name} order {order}: {a} vs {b}"
                );
            }

            let mut again_text = Vec::new();
            write_arpa_to(&again, &mut again_text).unwrap();
            assert_eq!(again_text, arpa, "{name} order {order}: the text changed");
            written += 1;
        }
    }
    assert_eq!(written, 4 * 3);
}
