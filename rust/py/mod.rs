use pyo3::prelude::*;

mod metrics;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    metrics::register(m)?;
    Ok(())
}
