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
///
/// Loops can nest on a thread: a callback of one loop may submit a dispatch on another agent,
/// whose window runs its own loop inside the callback. The inner scope sets the outer loop's
/// packets aside and puts them back when it ends.
pub struct LoopScope {
    outer: Option<AttachedPackets>,
}

impl LoopScope {
    /// Starts a loop with no attached packets.
    pub fn begin() -> Self {
        LoopScope { outer: LOOP.with(|l| l.borrow_mut().take()) }
    }

    /// The packets attached so far.
    pub fn packets(&self) -> AttachedPackets {
        LOOP.with(|l| l.borrow().clone().unwrap_or_default())
    }
}

impl Drop for LoopScope {
    fn drop(&mut self) {
        let outer = self.outer.take();
        LOOP.with(|l| *l.borrow_mut() = outer);
        ARMED.with(|a| a.set(false));
    }
}

/// Disarms localized control while a submission is handled on this thread (the dispatch's own
/// callbacks are not the PASS ENTER of an enclosing loop); restores the previous state on drop.
pub struct Disarmed {
    was_armed: bool,
}

impl Disarmed {
    /// Disarms until dropped.
    pub fn begin() -> Self {
        Disarmed { was_armed: ARMED.with(|a| a.replace(false)) }
    }
}

impl Drop for Disarmed {
    fn drop(&mut self) {
        ARMED.with(|a| a.set(self.was_armed));
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
    fn a_nested_loop_keeps_the_outer_loops_packets_and_arm_state() {
        let outer = LoopScope::begin();
        let guard = ArmGuard::arm(&outer);
        attach(&[[1; 64]], BEFORE).unwrap();
        {
            // A dispatch submitted from the outer PASS ENTER callback, replayed on another agent.
            let _submit = Disarmed::begin();
            assert_eq!(attach(&[[9; 64]], BEFORE), Err(ApiError::NotArmed), "the nested dispatch's callbacks are not armed");
            let inner = LoopScope::begin();
            assert_eq!(inner.packets(), AttachedPackets::default(), "the inner loop starts empty");
            {
                let _g = ArmGuard::arm(&inner);
                attach(&[[2; 64]], BEFORE).unwrap();
            }
            assert_eq!(inner.packets().before, vec![[2; 64]]);
        }
        assert!(is_armed(), "still inside the outer PASS ENTER");
        attach(&[[3; 64]], BEFORE).unwrap();
        drop(guard);
        assert_eq!(outer.packets().before, vec![[1; 64], [3; 64]], "the inner loop neither cleared nor joined the outer packets");
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
