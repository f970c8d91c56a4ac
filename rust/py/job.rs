//! Long calls: the work runs on its own thread with the GIL released while the calling thread
//! watches it, so that Ctrl-C (or any signal with a Python handler, such as the CLI's SIGTERM
//! handler) stops it within one poll and a progress callback sees it move.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::error::Result;
use crate::py::errors::to_pyerr;
use crate::util::job::Job;

/// How often the calling thread checks for signals and reports progress.
const POLL: Duration = Duration::from_millis(20);

/// Runs `work` on a new thread (GIL released) and waits for it, every [`POLL`]: runs Python's
/// signal handlers (`py.check_signals()`) and calls `progress(stage, done, total)` if given. A
/// handler that raises (KeyboardInterrupt on Ctrl-C) cancels the job; the work stops at its next
/// check (outputs it was writing are dropped, never committed) and that exception is raised.
pub fn run<T: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Job) -> Result<T> + Send,
) -> PyResult<T> {
    let job = Job::none();
    let (sender, receiver) = channel();
    // (a Receiver is not Sync; the Mutex lets the GIL-free closures below borrow it)
    let receiver = Mutex::new(receiver);
    let wait = |timeout: Option<Duration>| {
        let receiver = receiver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match timeout {
            Some(t) => receiver.recv_timeout(t),
            None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
        }
    };
    std::thread::scope(|scope| {
        let job = &job;
        scope.spawn(move || {
            // a panic is a bug; catch it so that it becomes an exception, not an abort
            let _ = sender.send(catch_unwind(AssertUnwindSafe(|| work(job))));
        });
        loop {
            let outcome = match py.detach(|| wait(Some(POLL))) {
                Ok(outcome) => outcome,
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(raised) = py.check_signals().and_then(|()| report(progress, job)) {
                        job.cancel();
                        // wait for the work to stop: it must not outlive the data it borrows
                        let _ = py.detach(|| wait(None));
                        return Err(raised);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "internal error: the work thread vanished",
                    ))
                }
            };
            return match outcome {
                Ok(result) => {
                    report(progress, job)?;
                    result.map_err(to_pyerr)
                }
                Err(panic) => Err(PyRuntimeError::new_err(format!(
                    "internal error (please report): {}",
                    panic_message(&*panic)
                ))),
            };
        }
    })
}

/// [`run`], or for `small` work with no progress callback (too short to interrupt or to watch:
/// a short text, one of many documents) the work on this thread with the GIL released, saving
/// a thread's start.
pub fn run_unless_small<T: Send>(
    py: Python<'_>,
    small: bool,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Job) -> Result<T> + Send,
) -> PyResult<T> {
    if small && progress.is_none() {
        py.detach(|| work(&Job::none())).map_err(to_pyerr)
    } else {
        run(py, progress, work)
    }
}

/// Text bytes below which tokenizing is `small` for [`run_unless_small`] (well under a second).
pub const SMALL_TEXT: usize = 1 << 20;

/// Calls `progress(stage, done, total)` with the job's counters.
fn report(progress: Option<&Bound<'_, PyAny>>, job: &Job) -> PyResult<()> {
    if let Some(callback) = progress {
        let now = job.progress();
        if !now.stage.is_empty() {
            callback.call1((now.stage, now.done, now.total))?;
        }
    }
    Ok(())
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}
