//! `PassPhase` and localized control: packets a client attaches during PASS ENTER.
//!
//! The arm window and the attached packets are thread-local and live for one replay loop, so
//! only the replaying thread's passes see them and global state never changes.

use crate::api::{ApiError, kreplay_packet_position_t};
use std::cell::{Cell, RefCell};

/// Where a pass is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassPhase {
    /// Before the dispatch is submitted; localized control is armed.
    Enter,
    /// After the dispatch and its completion handler finished.
    Exit,
}

/// Packets attached for the current loop.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttachedPackets {
    /// Submitted before the dispatch of each pass.
    pub before: Vec<[u8; 64]>,
    /// Submitted after the dispatch of each pass.
    pub after: Vec<[u8; 64]>,
}

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LOOP: RefCell<Option<AttachedPackets>> = const { RefCell::new(None) };
}

/// True inside a PASS ENTER callback on this thread.
pub fn is_armed() -> bool {
    ARMED.with(Cell::get)
}

/// Records packets for the current loop (PASS ENTER only).
pub fn attach(packets: &[[u8; 64]], position: kreplay_packet_position_t) -> Result<(), ApiError> {
    if !is_armed() {
        return Err(ApiError::NotArmed);
    }
    LOOP.with(|l| {
        let mut l = l.borrow_mut();
        let set = l.get_or_insert_with(AttachedPackets::default);
        match position {
            kreplay_packet_position_t::KREPLAY_PACKET_BEFORE => set.before.extend_from_slice(packets),
            kreplay_packet_position_t::KREPLAY_PACKET_AFTER => set.after.extend_from_slice(packets),
        }
    });
    Ok(())
}

/// Owns the loop's attached packets; dropping it clears them.
pub struct LoopScope(());

impl LoopScope {
    /// Starts a loop with no attached packets.
    pub fn begin() -> Self {
        LOOP.with(|l| *l.borrow_mut() = None);
        LoopScope(())
    }

    /// The packets attached so far.
    pub fn packets(&self) -> AttachedPackets {
        LOOP.with(|l| l.borrow().clone().unwrap_or_default())
    }
}

impl Drop for LoopScope {
    fn drop(&mut self) {
        LOOP.with(|l| *l.borrow_mut() = None);
        ARMED.with(|a| a.set(false));
    }
}

/// Arms localized control for the duration of a PASS ENTER callback. Disarms on drop, so a
/// panicking callback cannot leave it armed.
pub struct ArmGuard(());

impl ArmGuard {
    /// Arms.
    pub fn arm(_scope: &LoopScope) -> Self {
        ARMED.with(|a| a.set(true));
        ArmGuard(())
    }
}

impl Drop for ArmGuard {
    fn drop(&mut self) {
        ARMED.with(|a| a.set(false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: kreplay_packet_position_t = kreplay_packet_position_t::KREPLAY_PACKET_BEFORE;

    #[test]
    fn attach_only_while_armed_and_sticky_for_the_loop() {
        assert_eq!(attach(&[[1; 64]], BEFORE), Err(ApiError::NotArmed));
        let scope = LoopScope::begin();
        {
            let _g = ArmGuard::arm(&scope);
            attach(&[[1; 64]], BEFORE).unwrap();
            attach(&[[2; 64]], kreplay_packet_position_t::KREPLAY_PACKET_AFTER).unwrap();
        }
        assert_eq!(attach(&[[3; 64]], BEFORE), Err(ApiError::NotArmed), "disarmed after PASS ENTER");
        assert_eq!(scope.packets().before, vec![[1; 64]], "kept for the following passes");
        assert_eq!(scope.packets().after, vec![[2; 64]]);
        drop(scope);
        assert_eq!(LoopScope::begin().packets(), AttachedPackets::default(), "a new loop starts empty");
    }

    #[test]
    fn a_panicking_callback_cannot_leave_control_armed() {
        let scope = LoopScope::begin();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = ArmGuard::arm(&scope);
            panic!("client callback failed");
        }));
        assert!(r.is_err());
        assert!(!is_armed());
    }
}
