//! Long calls: the work runs on its own thread with the GIL released while the calling thread
//! watches it, so that Ctrl-C (or any signal with a Python handler, such as the CLI's SIGTERM
//! handler) stops it within one poll and a progress callback sees it move.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    run_streaming(py, progress, |job, _| work(job), |()| Ok(()))
}

/// What the work thread of [`run_streaming`] sends the calling thread.
enum Message<T, P> {
    /// A part of the result, for `consume`.
    Part(P),
    /// The work's end.
    Done(std::thread::Result<Result<T>>),
}

/// [`run`] for work that makes its result in parts: each part the work hands to its second
/// argument is given to `consume` on the calling thread (with the GIL: building Python objects)
/// while the work goes on. An error from `consume` cancels the work and is raised.
pub fn run_streaming<T: Send, P: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Job, &mut (dyn FnMut(P) + Send)) -> Result<T> + Send,
    mut consume: impl FnMut(P) -> PyResult<()>,
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
    // cancels the job and waits for the work to stop (it must not outlive the data it
    // borrows), dropping the parts it still sends
    let stop = |raised: PyErr| {
        job.cancel();
        py.detach(|| while let Ok(Message::Part(_)) = wait(None) {});
        Err(raised)
    };
    std::thread::scope(|scope| {
        let job = &job;
        scope.spawn(move || {
            let mut send_part = |part| {
                // (the receiver is gone only once the calling thread returned, after Done)
                let _ = sender.send(Message::Part(part));
            };
            // a panic is a bug; catch it so that it becomes an exception, not an abort
            let outcome = catch_unwind(AssertUnwindSafe(|| work(job, &mut send_part)));
            let _ = sender.send(Message::Done(outcome));
        });
        let mut checked = Instant::now();
        loop {
            let message = py.detach(|| wait(Some(POLL)));
            if !matches!(message, Ok(Message::Done(_))) && checked.elapsed() >= POLL {
                checked = Instant::now();
                if let Err(raised) = py.check_signals().and_then(|()| report(progress, job)) {
                    return stop(raised);
                }
            }
            let outcome = match message {
                Ok(Message::Part(part)) => {
                    if let Err(raised) = consume(part) {
                        return stop(raised);
                    }
                    continue;
                }
                Ok(Message::Done(outcome)) => outcome,
                Err(RecvTimeoutError::Timeout) => continue,
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
    run_streaming_unless_small(py, small, progress, |job, _| work(job), |()| Ok(()))
}

/// [`run_streaming`], or for `small` work with no progress callback the work on this thread
/// with the GIL released (see [`run_unless_small`]), then `consume` on each of its parts.
pub fn run_streaming_unless_small<T: Send, P: Send>(
    py: Python<'_>,
    small: bool,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Job, &mut (dyn FnMut(P) + Send)) -> Result<T> + Send,
    mut consume: impl FnMut(P) -> PyResult<()>,
) -> PyResult<T> {
    if !small || progress.is_some() {
        return run_streaming(py, progress, work, consume);
    }
    let mut parts = Vec::new();
    let result = py
        .detach(|| work(&Job::none(), &mut |part| parts.push(part)))
        .map_err(to_pyerr)?;
    parts.into_iter().try_for_each(&mut consume)?;
    Ok(result)
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
