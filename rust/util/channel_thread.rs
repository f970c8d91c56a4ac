//! Ending a thread that works through a channel: its end of the channel closed, then joined.
//!
//! [`crate::util::background_write`] and [`crate::util::spill::ReadAhead`] each run a thread fed
//! or drained through a channel; closing the owner's end (a send or receive of the thread's then
//! fails) is what stops that thread, and joining it is what closes its files before the owner's
//! directory may be removed.

use std::thread::JoinHandle;

/// Closes `channel` (the owner's end) and waits for `thread`, if still there: its result, or its
/// panic; `None` if it was ended before.
pub fn close_and_join<C, T>(
    channel: &mut Option<C>,
    thread: &mut Option<JoinHandle<T>>,
) -> Option<std::thread::Result<T>> {
    *channel = None;
    thread.take().map(JoinHandle::join)
}
