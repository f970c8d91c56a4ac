//! Python bindings for [`crate::metrics`].

use half::slice::HalfBitsSliceExt;
use half::{bf16, f16};
use numpy::{
    Element, IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

use super::errors::{invalid_argument, to_pyerr};
use crate::metrics::{target_logprobs, Logits};

/// Log-probability (nats) of each target under the softmax of its logits row.
///
/// `logits` is a C-contiguous `(rows, vocab)` array of float32, float64, or
/// uint16 holding the bits of float16/bfloat16 values (`half_format`
/// "float16" or "bfloat16"). `targets` (int64, one per row) < 0 are skipped
/// (output NaN). Runs without the GIL, rows in parallel.
#[pyfunction]
#[pyo3(signature = (logits, targets, half_format=None))]
fn logits_target_logprobs<'py>(
    py: Python<'py>,
    logits: &Bound<'py, PyAny>,
    targets: PyReadonlyArray1<'py, i64>,
    half_format: Option<&str>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let targets = targets.as_slice()?;
    let result = if let Ok(a) = logits.extract::<PyReadonlyArray2<'py, f32>>() {
        let (data, vocab) = rows(&a)?;
        py.detach(|| target_logprobs(Logits::F32(data), vocab, targets))
    } else if let Ok(a) = logits.extract::<PyReadonlyArray2<'py, f64>>() {
        let (data, vocab) = rows(&a)?;
        py.detach(|| target_logprobs(Logits::F64(data), vocab, targets))
    } else if let Ok(a) = logits.extract::<PyReadonlyArray2<'py, u16>>() {
        let (bits, vocab) = rows(&a)?;
        let logits = match half_format {
            Some("float16") => Logits::F16(bits.reinterpret_cast::<f16>()),
            Some("bfloat16") => Logits::Bf16(bits.reinterpret_cast::<bf16>()),
            _ => {
                return Err(invalid_argument(
                    "uint16 logits need half_format='float16' or 'bfloat16'".into(),
                ))
            }
        };
        py.detach(|| target_logprobs(logits, vocab, targets))
    } else {
        return Err(invalid_argument(
            "logits must be a 2-D float32, float64 or uint16 (half bits) numpy array".into(),
        ));
    };
    result
        .map(|v| v.into_pyarray(py))
        .map_err(|e| to_pyerr(e.into()))
}

/// The contiguous data of a 2-D array and its row length.
fn rows<'a, T: Element>(a: &'a PyReadonlyArray2<'_, T>) -> PyResult<(&'a [T], usize)> {
    Ok((a.as_slice()?, a.shape()[1]))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(logits_target_logprobs, m)?)
}
