//! A long call's cancel flag and progress counters, shared by the thread doing the work and the
//! thread watching it (the Python bindings poll it for Ctrl-C and to draw a progress bar).
//!
//! Work checks the flag at chunk boundaries ([`Job::check`], a relaxed atomic load), so a
//! cancelled call returns [`Error::Cancelled`] within one chunk's time; it reports progress as a
//! stage name and units done of a total ([`Job::stage`], [`Job::advance`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Units between two reports of [`Job::tick`].
pub const TICKS: u64 = 1 << 16;

/// The cancel flag and progress counters of one long call.
#[derive(Debug, Default)]
pub struct Job {
    cancelled: AtomicBool,
    done: AtomicU64,
    total: AtomicU64,
    stage: Mutex<&'static str>,
}

/// What a [`Job`] reports: the stage it is in, and the units of that stage done of `total` (0
/// when the total is not known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub stage: &'static str,
    pub done: u64,
    pub total: u64,
}

impl Job {
    /// A job nobody cancels or watches: for callers (and tests) that do not care.
    pub fn none() -> Self {
        Self::default()
    }

    /// Asks the work to stop at its next check.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// True once [`Job::cancel`] was called: parallel loops test it to skip their remaining
    /// chunks, then return [`Job::check`]'s error.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// [`Error::Cancelled`] once the job is cancelled.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Enters stage `name` of `total` units (0: unknown), with none done yet; checks the flag.
    pub fn stage(&self, name: &'static str, total: u64) -> Result<()> {
        *self
            .stage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = name;
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.check()
    }

    /// Counts `units` more of the current stage done.
    #[inline]
    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    /// Counts `units` more done and checks the flag: the usual call at the end of a chunk.
    #[inline]
    pub fn step(&self, units: u64) -> Result<()> {
        self.advance(units);
        self.check()
    }

    /// Counts one unit done in `local` (a loop's own counter), reporting and checking every
    /// [`TICKS`] units: for sequential loops over many small items.
    #[inline]
    pub fn tick(&self, local: &mut u64) -> Result<()> {
        *local += 1;
        if *local % TICKS == 0 {
            self.step(TICKS)
        } else {
            Ok(())
        }
    }

    /// The stage and its counters now.
    pub fn progress(&self) -> Progress {
        Progress {
            stage: *self
                .stage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            done: self.done.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_job_fails_its_next_check() {
        let job = Job::none();
        assert!(job.check().is_ok());
        job.cancel();
        assert!(job.is_cancelled());
        assert!(matches!(job.check(), Err(Error::Cancelled)));
        assert!(matches!(job.step(1), Err(Error::Cancelled)));
    }

    #[test]
    fn stages_reset_their_counters() {
        let job = Job::none();
        assert_eq!(job.progress().stage, "");
        job.stage("counting order 2", 100).unwrap();
        job.advance(30);
        job.step(12).unwrap();
        assert_eq!(
            job.progress(),
            Progress {
                stage: "counting order 2",
                done: 42,
                total: 100
            }
        );
        let mut local = 0;
        for _ in 0..TICKS + 5 {
            job.tick(&mut local).unwrap();
        }
        assert_eq!(job.progress().done, 42 + TICKS);
        job.stage("writing", 0).unwrap();
        assert_eq!(job.progress().done, 0);
        assert_eq!(job.progress().total, 0);
    }

    #[test]
    fn progress_is_seen_from_another_thread() {
        let job = Job::none();
        std::thread::scope(|s| {
            s.spawn(|| {
                job.stage("scoring", 10).unwrap();
                job.advance(10);
            });
        });
        assert_eq!(job.progress().done, 10);
        job.cancel();
        std::thread::scope(|s| {
            assert!(s.spawn(|| job.check()).join().unwrap().is_err());
        });
    }
}
