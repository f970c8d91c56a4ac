//! Criterion benchmarks of the core operations on the bundled Machado de Assis corpus
//! (`python/fastppl/data/machado.txt.xz`, ~534 k words), with throughput in tokens (bytes for
//! reading ARPA): counting, estimation, ARPA writing and reading, scoring.
//!
//! `cargo bench --bench core` (timings are only meaningful from this optimized build).

use std::hint::black_box;
use std::io::Read;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use fastppl::corpus::padded_stream::PaddedStream;
use fastppl::corpus::{Corpus, SentenceMode};
use fastppl::estimate::{fit, Pruning, Smoothing};
use fastppl::formats::arpa::{read_arpa_from, write_arpa_to};
use fastppl::model::score::{score_corpus, OovPolicy};
use fastppl::ngram::counts::count_ngrams;
use fastppl::util::compressed::open_read;
use fastppl::util::job::Job;

const ORDER: usize = 4;
const SMOOTHING: Smoothing = Smoothing::ModifiedKneserNey {
    discount_fallback: false,
};

/// The Machado corpus, one sentence per line, its `%` header left out: the first 9 of every 10
/// lines for training, the 10th held out for scoring.
fn machado() -> (Corpus, Corpus) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/fastppl/data/machado.txt.xz");
    let mut text = String::new();
    open_read(&path).unwrap().read_to_string(&mut text).unwrap();
    let (mut train, mut test) = (String::new(), String::new());
    let lines = text.lines().filter(|l| !l.starts_with('%'));
    for (i, line) in lines.enumerate() {
        let part = if i % 10 == 9 { &mut test } else { &mut train };
        part.push_str(line);
        part.push('\n');
    }
    let corpus = |text: &str| {
        let mut c = Corpus::new();
        c.push_whitespace_text(text, SentenceMode::Lines).unwrap();
        c.finish();
        c
    };
    (corpus(&train), corpus(&test))
}

/// Predicted tokens of a corpus (each sentence's tokens and its `</s>`).
fn predicted(corpus: &Corpus) -> u64 {
    (corpus.num_tokens() + corpus.num_sentences()) as u64
}

fn bench(c: &mut Criterion) {
    let (train, test) = machado();
    let model = fit(
        &train,
        ORDER,
        true,
        SMOOTHING,
        &Pruning::none(),
        &Job::none(),
    )
    .unwrap();
    let mut arpa = Vec::new();
    write_arpa_to(&model, &mut arpa).unwrap();

    let mut g = c.benchmark_group("machado");
    g.sample_size(10);
    g.throughput(Throughput::Elements(predicted(&train)));
    g.bench_function("count orders 1-4", |b| {
        b.iter(|| {
            let stream = PaddedStream::new(&train, true, None);
            count_ngrams(&stream, ORDER, train.vocab().len(), &Job::none()).unwrap()
        });
    });
    g.bench_function("fit 4-gram modified Kneser-Ney", |b| {
        b.iter(|| {
            fit(
                &train,
                ORDER,
                true,
                SMOOTHING,
                &Pruning::none(),
                &Job::none(),
            )
            .unwrap()
        });
    });
    g.throughput(Throughput::Bytes(arpa.len() as u64));
    g.bench_function("write ARPA", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(arpa.len());
            write_arpa_to(black_box(&model), &mut out).unwrap();
            out
        });
    });
    g.bench_function("read ARPA", |b| {
        b.iter(|| read_arpa_from(black_box(&arpa[..]), "machado.arpa").unwrap());
    });
    g.throughput(Throughput::Elements(predicted(&test)));
    g.bench_function("score held-out text", |b| {
        b.iter(|| {
            score_corpus(
                &model,
                black_box(&test),
                OovPolicy::Unk,
                false,
                &Job::none(),
            )
            .unwrap()
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
