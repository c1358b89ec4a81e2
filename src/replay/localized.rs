//! Localized control: packets a client attaches during PASS ENTER (the phase of a pass in
//! which it is armed), for the passes that follow (sticky) or for that pass only.
//!
//! The arm window and the attached packets are thread-local and live for one replay loop, so
//! only the replaying thread's passes see them and global state never changes.

use super::contract::ApiError;
use crate::abi::kreplay_packet_position_t;
use std::cell::{Cell, RefCell};

/// Packets attached around the dispatch: for the whole loop (`before`, `after`), and for the
/// pass whose PASS ENTER is running (`before_pass`, `after_pass`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttachedPackets {
    /// Submitted before the dispatch of each pass.
    pub before: Vec<[u8; 64]>,
    /// Submitted after the dispatch of each pass.
    pub after: Vec<[u8; 64]>,
    /// Submitted before the dispatch of this pass only.
    pub before_pass: Vec<[u8; 64]>,
    /// Submitted after the dispatch of this pass only.
    pub after_pass: Vec<[u8; 64]>,
}

impl AttachedPackets {
    fn len(&self) -> usize {
        self.before.len() + self.after.len() + self.before_pass.len() + self.after_pass.len()
    }
}

/// One pass's packets in submission order around the dispatch: the loop's BEFORE packets then
/// the pass's own before it, the pass's own then the loop's AFTER packets after it (packets of
/// one pass sit nearest the dispatch).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassPackets {
    /// Submitted before the dispatch.
    pub before: Vec<[u8; 64]>,
    /// Submitted after the dispatch.
    pub after: Vec<[u8; 64]>,
}

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LOOP: RefCell<Option<AttachedPackets>> = const { RefCell::new(None) };
    /// Packets the current loop's queue holds (its size); 0 outside a loop.
    static CAPACITY: Cell<usize> = const { Cell::new(0) };
}

static ROOM_WARNING: crate::sync::OnceFlag = crate::sync::OnceFlag::new();

/// Slots of a pass's submission that are not the client's: the dispatch, and one packet the
/// tool may add to the same submission (a barrier or a completion marker).
pub const TOOL_SLOTS_PER_PASS: usize = 2;

/// Checks that `count` more packets fit the current pass: with the packets already attached
/// for it (the loop's and the pass's own) and the tool's own ([`TOOL_SLOTS_PER_PASS`]), a
/// pass's packets must fit the queue at once, or the submission of the pass could never
/// complete.
pub fn check_room(count: usize) -> Result<(), ApiError> {
    if !is_armed() {
        return Err(ApiError::NotArmed);
    }
    let capacity = CAPACITY.with(Cell::get);
    let attached = LOOP.with(|l| l.borrow().as_ref().map_or(0, AttachedPackets::len));
    let fits = attached
        .checked_add(count)
        .and_then(|n| n.checked_add(TOOL_SLOTS_PER_PASS))
        .is_some_and(|n| n <= capacity);
    if !fits {
        if ROOM_WARNING.first() {
            tracing::warn!(
                "kreplay_pass_attach_packets refused {count} packet(s): with the {attached} already attached and the dispatch \
                 they do not fit the replayed queue of {capacity} packets (at most {} attached packets in all)",
                capacity.saturating_sub(TOOL_SLOTS_PER_PASS)
            );
        }
        return Err(ApiError::InvalidArgument);
    }
    Ok(())
}

/// True inside a PASS ENTER callback on this thread.
pub fn is_armed() -> bool {
    ARMED.with(Cell::get)
}

/// Records packets for the current loop or pass (PASS ENTER only).
pub fn attach(packets: &[[u8; 64]], position: kreplay_packet_position_t) -> Result<(), ApiError> {
    use kreplay_packet_position_t as P;
    check_room(packets.len())?;
    LOOP.with(|l| {
        let mut l = l.borrow_mut();
        let set = l.get_or_insert_with(AttachedPackets::default);
        let list = match position {
            P::KREPLAY_PACKET_BEFORE => &mut set.before,
            P::KREPLAY_PACKET_AFTER => &mut set.after,
            P::KREPLAY_PACKET_BEFORE_PASS => &mut set.before_pass,
            P::KREPLAY_PACKET_AFTER_PASS => &mut set.after_pass,
        };
        list.extend_from_slice(packets);
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
    outer_capacity: usize,
}

impl LoopScope {
    /// Starts a loop with no attached packets on a queue of `capacity` packets.
    pub fn begin(capacity: usize) -> Self {
        LoopScope {
            outer: LOOP.with(|l| l.borrow_mut().take()),
            outer_capacity: CAPACITY.with(|c| c.replace(capacity)),
        }
    }

    /// The packets attached so far.
    pub fn packets(&self) -> AttachedPackets {
        LOOP.with(|l| l.borrow().clone().unwrap_or_default())
    }

    /// The packets of the pass whose PASS ENTER just ran, in submission order; the pass's own
    /// packets are forgotten (the loop's stay for the passes that follow).
    pub fn take_pass(&self) -> PassPackets {
        LOOP.with(|l| {
            let mut l = l.borrow_mut();
            let Some(set) = l.as_mut() else {
                return PassPackets::default();
            };
            let mut before = set.before.clone();
            before.append(&mut set.before_pass);
            let mut after = std::mem::take(&mut set.after_pass);
            after.extend_from_slice(&set.after);
            PassPackets { before, after }
        })
    }
}

impl Drop for LoopScope {
    fn drop(&mut self) {
        let outer = self.outer.take();
        LOOP.with(|l| *l.borrow_mut() = outer);
        CAPACITY.with(|c| c.set(self.outer_capacity));
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
        Disarmed {
            was_armed: ARMED.with(|a| a.replace(false)),
        }
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
        let scope = LoopScope::begin(64);
        {
            let _g = ArmGuard::arm(&scope);
            attach(&[[1; 64]], BEFORE).unwrap();
            attach(&[[2; 64]], kreplay_packet_position_t::KREPLAY_PACKET_AFTER).unwrap();
        }
        assert_eq!(
            attach(&[[3; 64]], BEFORE),
            Err(ApiError::NotArmed),
            "disarmed after PASS ENTER"
        );
        assert_eq!(
            scope.packets().before,
            vec![[1; 64]],
            "kept for the following passes"
        );
        assert_eq!(scope.packets().after, vec![[2; 64]]);
        drop(scope);
        assert_eq!(
            LoopScope::begin(64).packets(),
            AttachedPackets::default(),
            "a new loop starts empty"
        );
    }

    #[test]
    fn packets_of_one_pass_run_in_that_pass_only_and_nearest_the_dispatch() {
        use kreplay_packet_position_t as P;
        let scope = LoopScope::begin(64);
        {
            let _g = ArmGuard::arm(&scope);
            attach(&[[1; 64]], P::KREPLAY_PACKET_BEFORE).unwrap();
            attach(&[[2; 64]], P::KREPLAY_PACKET_BEFORE_PASS).unwrap();
            attach(&[[3; 64]], P::KREPLAY_PACKET_AFTER_PASS).unwrap();
            attach(&[[4; 64]], P::KREPLAY_PACKET_AFTER).unwrap();
        }
        assert_eq!(
            scope.take_pass(),
            PassPackets {
                before: vec![[1; 64], [2; 64]],
                after: vec![[3; 64], [4; 64]],
            },
            "loop packets outermost, the pass's own nearest the dispatch"
        );
        assert_eq!(
            scope.take_pass(),
            PassPackets {
                before: vec![[1; 64]],
                after: vec![[4; 64]],
            },
            "the next pass keeps only the loop's packets"
        );
        {
            let _g = ArmGuard::arm(&scope);
            attach(&[[5; 64]], P::KREPLAY_PACKET_AFTER_PASS).unwrap();
        }
        assert_eq!(scope.take_pass().after, vec![[5; 64], [4; 64]]);
    }

    #[test]
    fn packets_of_one_pass_count_against_the_queue_until_the_pass_is_taken() {
        use kreplay_packet_position_t as P;
        let scope = LoopScope::begin(8);
        {
            let _g = ArmGuard::arm(&scope);
            attach(&[[1; 64]; 6], P::KREPLAY_PACKET_BEFORE_PASS).unwrap();
            assert_eq!(
                attach(&[[1; 64]], P::KREPLAY_PACKET_AFTER),
                Err(ApiError::InvalidArgument),
                "6 + the tool's 2 fill the queue"
            );
        }
        scope.take_pass();
        let _g = ArmGuard::arm(&scope);
        attach(&[[1; 64]; 6], P::KREPLAY_PACKET_AFTER_PASS).unwrap();
    }

    #[test]
    fn a_nested_loop_keeps_the_outer_loops_packets_and_arm_state() {
        let outer = LoopScope::begin(64);
        let guard = ArmGuard::arm(&outer);
        attach(&[[1; 64]], BEFORE).unwrap();
        {
            // A dispatch submitted from the outer PASS ENTER callback, replayed on another agent.
            let _submit = Disarmed::begin();
            assert_eq!(
                attach(&[[9; 64]], BEFORE),
                Err(ApiError::NotArmed),
                "the nested dispatch's callbacks are not armed"
            );
            let inner = LoopScope::begin(64);
            assert_eq!(
                inner.packets(),
                AttachedPackets::default(),
                "the inner loop starts empty"
            );
            {
                let _g = ArmGuard::arm(&inner);
                attach(&[[2; 64]], BEFORE).unwrap();
            }
            assert_eq!(inner.packets().before, vec![[2; 64]]);
        }
        assert!(is_armed(), "still inside the outer PASS ENTER");
        attach(&[[3; 64]], BEFORE).unwrap();
        drop(guard);
        assert_eq!(
            outer.packets().before,
            vec![[1; 64], [3; 64]],
            "the inner loop neither cleared nor joined the outer packets"
        );
    }

    #[test]
    fn attached_packets_and_the_dispatch_must_fit_the_queue() {
        let scope = LoopScope::begin(8);
        let _g = ArmGuard::arm(&scope);
        assert_eq!(
            attach(&[[1; 64]; 8], BEFORE),
            Err(ApiError::InvalidArgument),
            "8 + the dispatch > 8"
        );
        assert_eq!(
            attach(&[[1; 64]; 7], BEFORE),
            Err(ApiError::InvalidArgument),
            "a slot stays for the tool's own packet"
        );
        assert_eq!(
            check_room(usize::MAX),
            Err(ApiError::InvalidArgument),
            "no overflow"
        );
        attach(&[[1; 64]; 4], BEFORE).unwrap();
        attach(
            &[[2; 64]; 2],
            kreplay_packet_position_t::KREPLAY_PACKET_AFTER,
        )
        .unwrap();
        assert_eq!(
            attach(&[[3; 64]], BEFORE),
            Err(ApiError::InvalidArgument),
            "6 attached + the tool's 2 fill the queue"
        );
        assert_eq!(
            scope.packets().before.len() + scope.packets().after.len(),
            6,
            "a refused attach attaches nothing"
        );
        {
            let _submit = Disarmed::begin();
            let inner = LoopScope::begin(64);
            let _g = ArmGuard::arm(&inner);
            attach(&[[4; 64]; 32], BEFORE).unwrap();
        }
        assert_eq!(
            attach(&[[3; 64]], BEFORE),
            Err(ApiError::InvalidArgument),
            "the outer loop's queue size is back"
        );
    }

    #[test]
    fn a_panicking_callback_cannot_leave_control_armed() {
        let scope = LoopScope::begin(64);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = ArmGuard::arm(&scope);
            panic!("client callback failed");
        }));
        assert!(r.is_err());
        assert!(!is_armed());
    }
}
