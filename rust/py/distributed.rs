//! `_core.distributed_*`: the tasks of distributed estimation (see `distributed/`), called by
//! `fastppl.ray` in Ray workers; each releases the GIL.

use std::path::PathBuf;

use pyo3::prelude::*;

use super::corpus::PyCorpus;
use super::errors::to_pyerr;
use super::job;
use crate::distributed::{self, PartitionSummary};
use crate::error::Error;
use crate::estimate::{Parameters, Pruning, Smoothing};

/// An estimator and its pruning, parsed and checked.
fn estimator(
    order: usize,
    smoothing: &str,
    (k, discount, alpha, discount_fallback): (Option<f64>, Option<f64>, Option<f64>, bool),
    prune: &[u64],
) -> Result<(Smoothing, Pruning), Error> {
    let params = Parameters {
        k,
        discount,
        alpha,
        discount_fallback,
    };
    let smoothing = Smoothing::parse(smoothing, &params)?;
    let pruning = Pruning::new(prune, order)?;
    distributed::check_estimator(order, &smoothing, &pruning)?;
    Ok((smoothing, pruning))
}

/// Checks the estimator of a distributed estimation (raises what a task would).
#[pyfunction]
#[pyo3(signature = (order, smoothing, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new()))]
pub fn distributed_check(
    order: usize,
    smoothing: &str,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
    prune: Vec<u64>,
) -> PyResult<()> {
    estimator(
        order,
        smoothing,
        (k, discount, alpha, discount_fallback),
        &prune,
    )
    .map(|_| ())
    .map_err(to_pyerr)
}

/// Step 1 per shard: writes the shard's words (first-appearance order) to the job directory.
#[pyfunction]
pub fn distributed_shard_vocab(
    py: Python<'_>,
    corpus: &PyCorpus,
    job: PathBuf,
    shard: usize,
) -> PyResult<()> {
    let path = distributed::shard_vocab_path(&job, shard);
    py.detach(|| corpus.with(|c| distributed::write_shard_vocab(c, &path)))
        .map_err(to_pyerr)
}

/// Step 1 once: merges the shards' words into the vocabulary; returns its size.
#[pyfunction]
pub fn distributed_merge_vocab(py: Python<'_>, job: PathBuf, shards: usize) -> PyResult<usize> {
    py.detach(|| distributed::merge_vocab(&job, shards))
        .map_err(to_pyerr)
}

/// Step 2 per shard: counts the shard and writes its partitioned, sorted count files.
#[pyfunction]
pub fn distributed_count(
    py: Python<'_>,
    corpus: &PyCorpus,
    job: PathBuf,
    shard: usize,
    order: usize,
    partitions: usize,
    memory: usize,
) -> PyResult<()> {
    job::run(py, None, |task| {
        corpus.with(|c| distributed::count_shard(c, &job, shard, order, partitions, memory, task))
    })
}

/// Step 3 per partition: merges its counts and writes its effective counts; returns
/// (count-of-counts per order, n-grams kept per order).
#[pyfunction]
#[pyo3(signature = (job, partition, shards, order, smoothing, memory, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn distributed_adjust(
    py: Python<'_>,
    job: PathBuf,
    partition: usize,
    shards: usize,
    order: usize,
    smoothing: &str,
    memory: usize,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
    prune: Vec<u64>,
) -> PyResult<(Vec<[u64; 5]>, Vec<u64>)> {
    let (smoothing, pruning) = estimator(
        order,
        smoothing,
        (k, discount, alpha, discount_fallback),
        &prune,
    )
    .map_err(to_pyerr)?;
    let summary = job::run(py, None, |task| {
        distributed::adjust_partition(
            &job,
            partition,
            shards,
            order,
            (&smoothing, &pruning),
            memory,
            task,
        )
    })?;
    Ok((summary.count_of_counts, summary.ngram_counts))
}

/// Step 4a, 4b or 4c (`stage`: "context", "join" or "write") for range or partition `index`,
/// with the summed figures of step 3.
#[pyfunction]
#[pyo3(signature = (stage, job, partitions, index, order, smoothing, count_of_counts, ngram_counts, memory, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn distributed_interpolate(
    py: Python<'_>,
    stage: &str,
    job: PathBuf,
    partitions: usize,
    index: usize,
    order: usize,
    smoothing: &str,
    count_of_counts: Vec<[u64; 5]>,
    ngram_counts: Vec<u64>,
    memory: usize,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
    prune: Vec<u64>,
) -> PyResult<()> {
    let (smoothing, _) = estimator(
        order,
        smoothing,
        (k, discount, alpha, discount_fallback),
        &prune,
    )
    .map_err(to_pyerr)?;
    if count_of_counts.len() != order || ngram_counts.len() != order {
        return Err(to_pyerr(Error::invalid(format!(
            "count_of_counts and ngram_counts need one entry per order ({order})"
        ))));
    }
    if index >= partitions {
        return Err(to_pyerr(Error::invalid(format!(
            "index {index} is not below partitions ({partitions})"
        ))));
    }
    let run: fn(distributed::Step<'_>, &PartitionSummary, usize, &crate::util::job::Job) -> _ =
        match stage {
            "context" => distributed::context_range,
            "join" => distributed::join_partition,
            "write" => distributed::write_range,
            _ => {
                return Err(to_pyerr(Error::invalid(format!(
                    "stage must be 'context', 'join' or 'write', got {stage:?}"
                ))))
            }
        };
    let totals = PartitionSummary {
        count_of_counts,
        ngram_counts,
    };
    let step = distributed::Step {
        job: &job,
        partitions,
        order,
        smoothing: &smoothing,
        memory,
    };
    job::run(py, None, |task| run(step, &totals, index, task))
}

/// Step 4d once: writes the ARPA file from the pieces of step 4c; returns the n-grams per order
/// as its header states them.
#[pyfunction]
pub fn distributed_assemble(
    py: Python<'_>,
    job: PathBuf,
    partitions: usize,
    ngram_counts: Vec<u64>,
    path: PathBuf,
) -> PyResult<Vec<u64>> {
    if ngram_counts.is_empty() {
        return Err(to_pyerr(Error::invalid(
            "ngram_counts needs one entry per order".to_string(),
        )));
    }
    py.detach(|| distributed::assemble_arpa(&job, partitions, ngram_counts, &path))
        .map_err(to_pyerr)
}

/// Step 4 for stupid backoff, once: builds the model from step 3's raw counts (with the summed
/// n-grams per order) and saves it in the binary format at `path`; returns the n-grams per
/// order (every vocabulary word for unigrams, as an ARPA header counts them).
#[pyfunction]
#[pyo3(signature = (job, partitions, ngram_counts, memory, path, order, smoothing, k=None, discount=None, alpha=None, discount_fallback=false, prune=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn distributed_stupid_backoff(
    py: Python<'_>,
    job: PathBuf,
    partitions: usize,
    ngram_counts: Vec<u64>,
    memory: usize,
    path: PathBuf,
    order: usize,
    smoothing: &str,
    k: Option<f64>,
    discount: Option<f64>,
    alpha: Option<f64>,
    discount_fallback: bool,
    prune: Vec<u64>,
) -> PyResult<Vec<u64>> {
    let (smoothing, _) = estimator(
        order,
        smoothing,
        (k, discount, alpha, discount_fallback),
        &prune,
    )
    .map_err(to_pyerr)?;
    let Smoothing::StupidBackoff { alpha } = smoothing else {
        return Err(to_pyerr(Error::invalid(format!(
            "distributed_stupid_backoff builds stupid backoff models, got {}",
            smoothing.name()
        ))));
    };
    job::run(py, None, |task| {
        let model = distributed::stupid_backoff_model(
            &job,
            partitions,
            order,
            alpha,
            &ngram_counts,
            memory,
            task,
        )?;
        crate::formats::binary::save(&model, &path, task)?;
        Ok(std::iter::once(model.vocab.len() as u64)
            .chain(model.higher.iter().map(|t| t.table.len() as u64))
            .collect())
    })
}

/// Rewrites the binary model `source` (checksum verified) at `target` with its tables in the
/// canonical layout (`formats::binary::canonical`).
#[pyfunction]
pub fn canonical_binary(py: Python<'_>, source: PathBuf, target: PathBuf) -> PyResult<()> {
    job::run(py, None, |task| {
        let model = crate::formats::binary::load(&source, true, true, task)?;
        let canonical = crate::formats::binary::canonical(&model)?;
        crate::formats::binary::save(&canonical, &target, task)
    })
}
