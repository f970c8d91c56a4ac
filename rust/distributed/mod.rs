//! Estimation spread over tasks that share a directory (the Ray driver is `fastppl/ray.py`).
//!
//! The budgeted pipeline of [`crate::estimate::budgeted`], cut at its sorts into tasks that may run on
//! different machines. They exchange sorted record files in a job directory that every task can
//! read; the driver only hands out file names and sums small per-task figures.
//!
//! 1. **Vocabulary** (one task per shard, then one merge): each shard's words in order of first
//!    appearance ([`write_shard_vocab`]); their union, shard by shard ([`merge_vocab`]), is the
//!    vocabulary `Corpus.from_files` builds on all the shards, so token ids agree everywhere.
//! 2. **Count** (one task per shard, [`count_shard`]): the shard's highest-order n-grams in the
//!    global ids, hash-partitioned by their **last word** and sorted in suffix order within
//!    each partition; one file per (partition, shard).
//! 3. **Adjust** (one task per partition, [`adjust_partition`]): the merge of the partition's
//!    files is a suffix-ordered stream in which every n-gram sharing a suffix (of any length) is
//!    contiguous, because a suffix ends with the partition's last words; so the adjusted
//!    (continuation) counts and the count-of-counts of the n-grams ending in those words come
//!    out of it exactly. Writes each order's n-grams in prefix order, the effective count of
//!    its unigrams and its n-grams per first word (by which step 4 cuts its ranges); returns its
//!    count-of-counts, which the driver sums.
//! 4. **Interpolate and write** (`interpolate`), with the summed count-of-counts, which every
//!    task turns into the same discounts; the n-grams are cut in ranges of their first word for
//!    the context statistics and the writing, and in the partitions of step 3 for the join with
//!    the order below:
//!    - a. per range ([`context_range`]): each order's contexts' statistics and weights, and the
//!      terms of the range's n-grams, sent to the partition of their last word;
//!    - b. per partition ([`join_partition`]): the probabilities of each order, lowest first,
//!      sent to the range of their first word;
//!    - c. per range ([`write_range`]): the range's lines of each ARPA section;
//!    - d. once ([`assemble_arpa`]): the header, then each section's pieces in range order.
//!
//!    Stupid backoff has no ARPA form and needs no discounts: one task builds its binary model
//!    from step 3's raw counts instead ([`stupid_backoff_model`]).
//!
//! Files are written under a temporary name and renamed, so a task that dies and is retried
//! never leaves a torn file for another to read; inputs are never deleted by their readers.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::corpus::vocab::{Vocab, RESERVED};
use crate::corpus::Corpus;
use crate::error::{Error, Result};
use crate::estimate::budgeted::{self, adjust, highest_ngrams};
use crate::estimate::{Pruning, Smoothing};
use crate::util::job::Job;
use crate::util::spill::{KeyOrder, Layout, RecordStream, Sorter, WorkDir};

/// Checks what the tasks will be asked to estimate, before any runs: an interpolated estimator
/// (the ARPA form) or stupid backoff (binary output, [`stupid_backoff_model`]), order
/// 2..=`MAX_ORDER`, valid parameters and pruning.
pub fn check_estimator(order: usize, smoothing: &Smoothing, pruning: &Pruning) -> Result<()> {
    if !matches!(smoothing, Smoothing::StupidBackoff { .. }) {
        return budgeted::check_estimator(order, smoothing, pruning, "distributed estimation");
    }
    smoothing.validate()?;
    crate::estimate::check_pruning(smoothing, pruning)?;
    if !(2..=crate::ngram::keys::MAX_ORDER).contains(&order) {
        return Err(Error::invalid(format!(
            "order must be in 2..={} for distributed estimation, got {order}",
            crate::ngram::keys::MAX_ORDER
        )));
    }
    Ok(())
}

/// A shard's vocabulary file (step 1).
pub fn shard_vocab_path(job: &Path, shard: usize) -> PathBuf {
    job.join("vocab").join(format!("s{shard:05}.txt"))
}

/// The global vocabulary file (step 1).
pub fn vocab_path(job: &Path) -> PathBuf {
    job.join("vocab.txt")
}

fn counts_path(job: &Path, partition: usize, shard: usize) -> PathBuf {
    job.join("counts")
        .join(format!("p{partition:05}"))
        .join(format!("s{shard:05}.bin"))
}

mod interpolate;

mod stupid_backoff;

pub use interpolate::{
    assemble_arpa, context_range, join_partition, word_ranges, write_range, Step,
};
pub use stupid_backoff::stupid_backoff_model;

fn adjusted_path(job: &Path, order: usize, partition: usize) -> PathBuf {
    job.join("adjusted")
        .join(format!("o{order}"))
        .join(format!("p{partition:05}.bin"))
}

fn unigrams_path(job: &Path, partition: usize) -> PathBuf {
    job.join("unigrams").join(format!("p{partition:05}.bin"))
}

/// A partition's n-grams (orders 2..=N) per first word, u64 by word id (step 3): what the
/// ranges of step 4 are cut by.
fn first_words_path(job: &Path, partition: usize) -> PathBuf {
    job.join("first").join(format!("p{partition:05}.bin"))
}

/// The partition of an n-gram ending in `word` (a fixed hash: every process agrees).
pub fn partition_of(word: u32, partitions: usize) -> usize {
    ((u64::from(word).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % partitions as u64) as usize
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes `path` through `write` on a temporary file in the same directory, then renames it:
/// readers see the whole file or none.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<()>,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let temp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map_or("out".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let result = (|| {
        let file = std::fs::File::create(&temp).map_err(io_error(&temp))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        out.flush().map_err(io_error(&temp))?;
        std::fs::rename(&temp, path).map_err(io_error(path))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// The merge of the sorted files `path(0..n)` (see [`RecordStream::merge_files`]).
fn merge_each(
    n: usize,
    path: impl Fn(usize) -> PathBuf,
    layout: Layout,
    combine: bool,
    memory: usize,
) -> Result<RecordStream> {
    let inputs: Vec<PathBuf> = (0..n).map(path).collect();
    RecordStream::merge_files(&inputs, layout, combine, memory)
}

/// Writes the records of `stream` to `path`, showing each to `each`.
fn write_stream(path: &Path, mut stream: RecordStream, mut each: impl FnMut(&[u32])) -> Result<()> {
    write_atomically(path, |out| {
        while let Some(r) = stream.next_record()? {
            each(r);
            out.write_all(bytemuck::cast_slice(r))
                .map_err(io_error(path))?;
        }
        Ok(())
    })
}

/// Step 1, per shard: writes the words of `corpus` (not the reserved ones), one per line in id
/// order (first appearance).
pub fn write_shard_vocab(corpus: &Corpus, path: &Path) -> Result<()> {
    let vocab = corpus.vocab();
    write_atomically(path, |out| {
        for word in vocab.words().skip(RESERVED.len()) {
            if word.contains('\n') {
                return Err(Error::invalid(format!(
                    "a token holds a line break ({word:?}): it cannot be written to ARPA"
                )));
            }
            out.write_all(word.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .map_err(io_error(path))?;
        }
        Ok(())
    })
}

/// Reads a vocabulary file written by [`write_shard_vocab`] or [`merge_vocab`] into `vocab`.
fn read_vocab_into(vocab: &mut Vocab, path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path).map_err(io_error(path))?;
    for word in text.lines() {
        vocab.intern(word);
    }
    Ok(())
}

/// The global vocabulary (step 1's output).
pub fn read_vocab(job: &Path) -> Result<Vocab> {
    let mut vocab = Vocab::new();
    read_vocab_into(&mut vocab, &vocab_path(job))?;
    Ok(vocab)
}

/// Step 1, once: the union of the shards' vocabularies, shard by shard, each in its order;
/// returns its size (reserved words included).
pub fn merge_vocab(job: &Path, shards: usize) -> Result<usize> {
    let mut vocab = Vocab::new();
    for shard in 0..shards {
        read_vocab_into(&mut vocab, &shard_vocab_path(job, shard))?;
    }
    write_atomically(&vocab_path(job), |out| {
        for word in vocab.words().skip(RESERVED.len()) {
            out.write_all(word.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .map_err(io_error(&vocab_path(job)))?;
        }
        Ok(())
    })?;
    Ok(vocab.len())
}

/// Step 2, per shard: counts the highest-order n-grams of `corpus` (shard number `shard`) in the
/// global vocabulary's ids, within `memory` bytes of sort buffers, and writes one suffix-sorted
/// file per partition.
pub fn count_shard(
    corpus: &Corpus,
    job: &Path,
    shard: usize,
    order: usize,
    partitions: usize,
    memory: usize,
    task: &Job,
) -> Result<()> {
    if partitions == 0 {
        return Err(Error::invalid("partitions must be at least 1".to_string()));
    }
    let vocab = read_vocab(job)?;
    let ids = vocab.translation_from(corpus.vocab());
    let dir = WorkDir::new(job)?;
    let layout = Layout::new(order, 1, KeyOrder::Suffix);
    let mut sorters: Vec<Sorter> = (0..partitions)
        .map(|_| Sorter::new(layout, true, memory / partitions, &dir, "counts"))
        .collect();
    highest_ngrams(corpus, order, Some(&ids), task, |record| {
        sorters[partition_of(record[order - 1], partitions)].push(record)
    })?;
    for (partition, sorter) in sorters.into_iter().enumerate() {
        write_stream(
            &counts_path(job, partition, shard),
            sorter.finish()?,
            |_| {},
        )?;
    }
    Ok(())
}

/// What a partition's adjust step sums into the global figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSummary {
    /// Count-of-counts n[1..=4] of the effective counts of orders 2..=N (index m-1; index 0,
    /// the unigrams', is derived by every task of step 4 from the summed unigram counts).
    pub count_of_counts: Vec<[u64; 5]>,
    /// N-grams kept per order 2..=N (index m-1; index 0 is 0).
    pub ngram_counts: Vec<u64>,
}

/// Step 3, per partition: merges the partition's count files of `shards` shards and derives
/// the effective counts of every order, written for step 4.
pub fn adjust_partition(
    job: &Path,
    partition: usize,
    shards: usize,
    order: usize,
    (smoothing, pruning): (&Smoothing, &Pruning),
    memory: usize,
    task: &Job,
) -> Result<PartitionSummary> {
    let vocab_len = read_vocab(job)?.len();
    let counts = merge_each(
        shards,
        |shard| counts_path(job, partition, shard),
        Layout::new(order, 1, KeyOrder::Suffix),
        true,
        memory,
    )?;
    let dir = WorkDir::new(job)?;
    let adjusted = adjust(
        counts,
        (order, KeyOrder::Prefix),
        vocab_len,
        (smoothing, pruning),
        memory,
        &dir,
        task,
    )?;
    let mut first_words = vec![0u64; vocab_len];
    for (i, stream) in adjusted.higher.into_iter().enumerate() {
        write_stream(&adjusted_path(job, i + 2, partition), stream, |r| {
            first_words[r[0] as usize] += 1;
        })?;
    }
    for (path, bytes) in [
        (
            unigrams_path(job, partition),
            bytemuck::cast_slice(&adjusted.unigrams),
        ),
        (
            first_words_path(job, partition),
            bytemuck::cast_slice(&first_words),
        ),
    ] {
        write_atomically(&path, |out| out.write_all(bytes).map_err(io_error(&path)))?;
    }
    let mut ngram_counts = adjusted.ngram_counts;
    ngram_counts[0] = 0;
    Ok(PartitionSummary {
        count_of_counts: adjusted.count_of_counts,
        ngram_counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::SentenceMode;

    fn corpus(text: &str) -> Corpus {
        let mut c = Corpus::new();
        c.push_whitespace_text(text, SentenceMode::Lines).unwrap();
        c.finish();
        c
    }

    fn shards() -> Vec<String> {
        (0..5)
            .map(|i| {
                format!("the cat sat on the mat {i}\na dog saw the cat\nthe mat {i} and a log\n")
                    .repeat(i + 1)
            })
            .collect()
    }

    /// Steps 1 to 3 on `shards` in `job`; the summed summaries of step 3.
    fn count_and_adjust(
        shards: &[String],
        job: &Path,
        order: usize,
        partitions: usize,
        estimator: (&Smoothing, &Pruning),
    ) -> PartitionSummary {
        for (s, text) in shards.iter().enumerate() {
            write_shard_vocab(&corpus(text), &shard_vocab_path(job, s)).unwrap();
        }
        merge_vocab(job, shards.len()).unwrap();
        for (s, text) in shards.iter().enumerate() {
            count_shard(
                &corpus(text),
                job,
                s,
                order,
                partitions,
                1 << 20,
                &Job::none(),
            )
            .unwrap();
        }
        let mut totals = PartitionSummary {
            count_of_counts: vec![[0; 5]; order],
            ngram_counts: vec![0; order],
        };
        for p in 0..partitions {
            let s = adjust_partition(
                job,
                p,
                shards.len(),
                order,
                estimator,
                1 << 20,
                &Job::none(),
            )
            .unwrap();
            for m in 0..order {
                totals.ngram_counts[m] += s.ngram_counts[m];
                for k in 0..5 {
                    totals.count_of_counts[m][k] += s.count_of_counts[m][k];
                }
            }
        }
        totals
    }

    #[test]
    fn stupid_backoff_gives_the_canonical_single_machine_file() {
        let shards = shards();
        let whole = corpus(&shards.concat());
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let smoothing = Smoothing::StupidBackoff { alpha: 0.4 };
        for order in 2..=5 {
            let job = dir.file("job");
            let totals = count_and_adjust(&shards, &job, order, 3, (&smoothing, &Pruning::none()));
            // the ranges' weights: every n-gram of orders 2..=N counted once, by its first word
            let first: Vec<u64> =
                interpolate::sum_partition_files(3, read_vocab(&job).unwrap().len(), |p| {
                    first_words_path(&job, p)
                })
                .unwrap();
            assert_eq!(
                first.iter().sum::<u64>(),
                totals.ngram_counts[1..].iter().sum::<u64>()
            );
            let model = stupid_backoff_model(
                &job,
                3,
                order,
                0.4,
                &totals.ngram_counts,
                1 << 20,
                &Job::none(),
            )
            .unwrap();
            let fitted = crate::estimate::fit(
                &whole,
                order,
                true,
                smoothing,
                &Pruning::none(),
                &Job::none(),
            )
            .unwrap();
            let (ours, theirs) = (dir.file("ours.fppl"), dir.file("theirs.fppl"));
            crate::formats::binary::save(&model, &ours, &Job::none()).unwrap();
            let canonical = crate::formats::binary::canonical(&fitted).unwrap();
            crate::formats::binary::save(&canonical, &theirs, &Job::none()).unwrap();
            assert!(
                std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
                "order {order}"
            );
        }
    }

    #[test]
    fn stupid_backoff_of_no_token_is_an_error_not_nan() {
        let dir = WorkDir::new(&std::env::temp_dir()).unwrap();
        let job = dir.file("job");
        let none = (&Smoothing::StupidBackoff { alpha: 0.4 }, &Pruning::none());
        let totals = count_and_adjust(&[String::new(), String::new()], &job, 3, 2, none);
        let err =
            stupid_backoff_model(&job, 2, 3, 0.4, &totals.ngram_counts, 1 << 20, &Job::none())
                .unwrap_err();
        assert!(matches!(err, Error::EmptyCorpus(_)), "{err}");
    }

    #[test]
    fn stupid_backoff_is_checked_like_the_others() {
        let sb = Smoothing::StupidBackoff { alpha: 0.4 };
        assert!(check_estimator(3, &sb, &Pruning::none()).is_ok());
        let err = check_estimator(1, &sb, &Pruning::none()).unwrap_err();
        assert!(err.to_string().contains("order must be in 2.."), "{err}");
        let err = check_estimator(3, &sb, &Pruning::new(&[0, 1], 3).unwrap()).unwrap_err();
        assert!(err.to_string().contains("cannot prune"), "{err}");
        let bad = Smoothing::StupidBackoff { alpha: -1.0 };
        assert!(check_estimator(3, &bad, &Pruning::none()).is_err());
        assert!(check_estimator(3, &Smoothing::Mle, &Pruning::none()).is_err());
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one end-to-end scenario, every pass in order
    fn shards_and_partitions_give_the_single_machine_file() {
        let shards = shards();
        let whole = corpus(&shards.concat());
        let job = WorkDir::new(&std::env::temp_dir()).unwrap();
        for (smoothing, order, prune) in [
            (
                Smoothing::ModifiedKneserNey {
                    discount_fallback: true,
                },
                2,
                &[][..],
            ),
            (
                Smoothing::ModifiedKneserNey {
                    discount_fallback: true,
                },
                4,
                &[0, 1, 1],
            ),
            (Smoothing::WittenBell, 3, &[]),
            (
                Smoothing::AbsoluteDiscounting { discount: 0.5 },
                5,
                &[0, 0, 1, 1],
            ),
        ] {
            let job_path = job.file("job");
            let pruning = Pruning::new(prune, order).unwrap();
            let partitions = 3;
            let totals = count_and_adjust(
                &shards,
                &job_path,
                order,
                partitions,
                (&smoothing, &pruning),
            );
            let step = Step {
                job: &job_path,
                partitions,
                order,
                smoothing: &smoothing,
                memory: 1 << 20,
            };
            let none = Job::none();
            for r in 0..partitions {
                context_range(step, &totals, r, &none).unwrap();
            }
            for p in 0..partitions {
                join_partition(step, &totals, p, &none).unwrap();
            }
            for r in 0..partitions {
                write_range(step, &totals, r, &none).unwrap();
            }
            let out = job.file("model.arpa");
            let counts = assemble_arpa(&job_path, partitions, totals.ngram_counts, &out).unwrap();
            assert_eq!(counts.len(), order);
            let model =
                crate::estimate::fit(&whole, order, true, smoothing, &pruning, &Job::none())
                    .unwrap();
            let mut expected = Vec::new();
            crate::formats::arpa::write_arpa_to(&model, &mut expected).unwrap();
            assert_eq!(
                String::from_utf8(std::fs::read(&out).unwrap()).unwrap(),
                String::from_utf8(expected).unwrap(),
                "{smoothing:?} order {order} prune {prune:?}"
            );
        }
    }
}
