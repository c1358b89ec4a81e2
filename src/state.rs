//! The tool's global state machine: uninitialised -> active -> shutting down -> finished.
//!
//! Interceptors read it with one relaxed load and fall straight through to the original entry
//! unless the tool is active. A second switch, [`ReplayService`], says whether a replay client
//! is configured; when it is off, a dispatch costs one more relaxed load. Allocations are
//! recorded whenever the tool is active, whatever the switch says, so a client that registers
//! late finds a complete inventory.

use crate::sync::{AtomicU8, Mutex, Ordering};

/// Lifecycle of the tool inside the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ToolState {
    /// `OnLoad` has not completed.
    Uninitialised = 0,
    /// Interceptors installed and working.
    Active = 1,
    /// `OnUnload` is running.
    ShuttingDown = 2,
    /// `OnUnload` finished, or the tool declined: every interceptor chains to the original.
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

/// Moves from `from` to `to`; false when the state was not `from`.
pub fn advance(from: ToolState, to: ToolState) -> bool {
    STATE.compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire).is_ok()
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
    fn state_round_trip() {
        for s in [ToolState::Uninitialised, ToolState::Active, ToolState::ShuttingDown, ToolState::Finished] {
            assert_eq!(ToolState::from_u8(s as u8), s);
        }
    }
}
