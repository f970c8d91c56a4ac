//! Python bindings: the only place PyO3 appears. Arguments are converted to owned Rust data,
//! the work runs with the GIL released, and core errors become `fastppl.errors` exceptions here.

mod context;
mod corpus;
mod distributed;
mod errors;
mod job;
mod metrics;
mod model;
mod nltk;
mod scores;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_ORDER", crate::ngram::keys::MAX_ORDER)?;
    m.add(
        "BINARY_MAGIC",
        pyo3::types::PyBytes::new(m.py(), &crate::formats::binary::MAGIC),
    )?;
    m.add(
        "KENLM_MAGIC",
        pyo3::types::PyBytes::new(m.py(), crate::formats::kenlm::MAGIC_PREFIX),
    )?;
    model::register_smoothings(m)?;
    m.add_class::<corpus::PyCorpus>()?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<context::PyContextScorer>()?;
    m.add_class::<nltk::PyPunktModel>()?;
    m.add_class::<scores::PyScores>()?;
    m.add_function(wrap_pyfunction!(nltk::nltk_word_tokenize, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::read_compression, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::unread_compression, m)?)?;
    m.add_function(wrap_pyfunction!(model::count_ngrams, m)?)?;
    m.add_function(wrap_pyfunction!(model::train_arpa, m)?)?;
    m.add_function(wrap_pyfunction!(model::check_output, m)?)?;
    m.add("MIN_MEMORY", crate::estimate::budgeted::MIN_MEMORY)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_check, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_shard_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_merge_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_count, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_adjust, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_interpolate, m)?)?;
    m.add_function(wrap_pyfunction!(distributed::distributed_assemble, m)?)?;
    m.add_function(wrap_pyfunction!(
        distributed::distributed_stupid_backoff,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(distributed::canonical_binary, m)?)?;
    metrics::register(m)?;
    Ok(())
}
