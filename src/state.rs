//! The tool's global state machine: uninitialised -> active -> shutting down -> finished.
//!
//! Interceptors read it with one relaxed load and fall straight through to the original entry
//! unless the tool is active. A second switch, [`ReplayService`], says whether a replay client
//! is configured; when it is off, a dispatch costs one more relaxed load. Allocations are
//! recorded whenever the tool is active, whatever the switch says, so a client that registers
//! late finds a complete inventory.
//!
//! The machine may go round more than once: after `OnUnload` (the last `hsa_shut_down`), a new
//! `hsa_init` calls `OnLoad` again and the tool becomes active for the new runtime instance.
//! `OnUnload` first waits until no submission is inside the replay path ([`Submission`]), so a
//! replay window never outlives the runtime it uses.

use crate::sync::{AtomicU8, AtomicUsize, Mutex, Ordering};
use std::cell::Cell;
use std::time::Duration;

/// Lifecycle of the tool inside the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ToolState {
    /// `OnLoad` has not completed (or never ran: the library is only linked).
    Uninitialised = 0,
    /// Interceptors installed and working.
    Active = 1,
    /// `OnUnload` is running.
    ShuttingDown = 2,
    /// `OnUnload` finished: every interceptor chains to the original until a new runtime
    /// instance calls `OnLoad` again.
    Finished = 3,
}

static STATE: AtomicU8 = AtomicU8::new(ToolState::Uninitialised as u8);

impl ToolState {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => ToolState::Uninitialised,
            1 => ToolState::Active,
            2 => ToolState::ShuttingDown,
            _ => ToolState::Finished,
        }
    }
}

/// The current state (one relaxed load).
#[inline]
pub fn current() -> ToolState {
    ToolState::from_u8(STATE.load(Ordering::Relaxed))
}

/// True while interceptors should do their work (one relaxed load).
#[inline]
pub fn is_active() -> bool {
    STATE.load(Ordering::Relaxed) == ToolState::Active as u8
}

/// Moves from `from` to `to`; false when the state was not `from`. Sequentially consistent, so
/// [`Submission::enter`] and [`wait_for_submissions`] see each other (see there).
pub fn advance(from: ToolState, to: ToolState) -> bool {
    STATE
        .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Submissions inside the replay path, over all threads.
static SUBMITTING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Submissions inside the replay path on this thread (callbacks may submit again).
    static MINE: Cell<usize> = const { Cell::new(0) };
}

/// A submission inside the replay path. While one exists, `OnUnload` waits (bounded) before it
/// lets the runtime tear down, so a window never runs against a runtime that shut down.
pub struct Submission(());

impl Submission {
    /// Enters the replay path; `None` (forward the packets unchanged) unless the tool is active.
    ///
    /// The count goes up before the state is read and `OnUnload` moves the state before it reads
    /// the count (both sequentially consistent): either this call sees the tool shutting down, or
    /// `OnUnload` sees this submission and waits for it.
    pub fn enter() -> Option<Self> {
        SUBMITTING.fetch_add(1, Ordering::SeqCst);
        if STATE.load(Ordering::SeqCst) == ToolState::Active as u8 {
            MINE.with(|m| m.set(m.get() + 1));
            Some(Submission(()))
        } else {
            SUBMITTING.fetch_sub(1, Ordering::SeqCst);
            None
        }
    }
}

impl Drop for Submission {
    fn drop(&mut self) {
        MINE.with(|m| m.set(m.get() - 1));
        SUBMITTING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits until no other thread's submission is inside the replay path (this thread's own, when
/// `hsa_shut_down` is called from a replay callback, cannot finish first). False when `bound`
/// passed first.
pub fn wait_for_submissions(bound: Duration) -> bool {
    let mine = MINE.with(Cell::get);
    let deadline = std::time::Instant::now() + bound;
    while SUBMITTING.load(Ordering::SeqCst) > mine {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

/// Whether a replay client is configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ReplayService {
    /// No decision yet: the first dispatch checks for a client once.
    Undecided = 0,
    /// No client (yet): dispatches are forwarded unchanged. A later `kreplay_register` turns
    /// the service on.
    Off = 1,
    /// A client is configured: dispatches go through the replay gate.
    On = 2,
}

static SERVICE: AtomicU8 = AtomicU8::new(ReplayService::Undecided as u8);

/// Serializes the two rare moves of the switch out of `Undecided`/`Off` (the first dispatch's
/// decision and a client's registration), so a registration sees exactly whether dispatches
/// already ran untracked. Never taken on the dispatch path once the service is decided.
pub static SERVICE_DECISION: Mutex<()> = Mutex::new(());

/// The replay service switch (one relaxed load).
#[inline]
pub fn service() -> ReplayService {
    match SERVICE.load(Ordering::Relaxed) {
        0 => ReplayService::Undecided,
        1 => ReplayService::Off,
        _ => ReplayService::On,
    }
}

/// Sets the replay service switch.
pub fn set_service(s: ReplayService) {
    SERVICE.store(s as u8, Ordering::Release);
}

/// Turns the service on (a client registered); returns the previous state. `Off` means
/// dispatches already ran on the fast path, untracked.
pub fn turn_service_on() -> ReplayService {
    match SERVICE.swap(ReplayService::On as u8, Ordering::AcqRel) {
        0 => ReplayService::Undecided,
        1 => ReplayService::Off,
        _ => ReplayService::On,
    }
}

/// Sets `Off` only if no decision was made yet (a client that registers concurrently wins).
pub fn settle_service_off() {
    let _ = SERVICE.compare_exchange(
        ReplayService::Undecided as u8,
        ReplayService::Off as u8,
        Ordering::AcqRel,
        Ordering::Acquire,
    );
}

/// True when allocations must be recorded: for the whole time the tool is active (from
/// `OnLoad` to `OnUnload`), whether or not a client exists, because one may register later.
#[inline]
pub fn records_allocations() -> bool {
    is_active()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submission_counts_only_while_the_tool_is_active() {
        // This test binary never runs OnLoad: the tool is not active.
        assert_eq!(current(), ToolState::Uninitialised);
        assert!(Submission::enter().is_none());
        assert_eq!(
            SUBMITTING.load(Ordering::SeqCst),
            0,
            "a refused entry leaves no count behind"
        );
        assert!(wait_for_submissions(Duration::from_millis(1)));
    }

    #[test]
    fn state_round_trip() {
        for s in [
            ToolState::Uninitialised,
            ToolState::Active,
            ToolState::ShuttingDown,
            ToolState::Finished,
        ] {
            assert_eq!(ToolState::from_u8(s as u8), s);
        }
    }
}
