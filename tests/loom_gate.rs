//! Model test of the replay-gate protocol: in-flight counting, the agent-wide drain and the
//! reader/writer gate, explored over thread interleavings by loom. Built only under
//! `--cfg loom`, where `kreplay::sync::protocol` is loom's lock and atomics:
//!
//! `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" cargo test --release -p kreplay --test loom_gate`
//!
//! The model mirrors the tool's code paths on one agent with two queues:
//! - an ordinary (non-replayed) submit takes the reader side (`ReplayGate::submit`), counts its
//!   completion handler in flight, then hands the packet to the device;
//! - the device runs the kernel (writes device memory), then the handler uncounts it;
//! - a replay takes the writer side (`ReplayGate::window`), waits until no handler of the agent
//!   is in flight (the agent-wide drain), snapshots, runs passes with restores between them.
//!
//! Properties: no non-replayed submit lands between the snapshot and the last restore; a
//! kernel's write never races the snapshot or a restore (loom reports any unsynchronized
//! access to the memory cell); memory ends as one execution of each dispatch.

#![cfg(loom)]

use kreplay::replay::gate::{AgentLock, ReplayGate};
use kreplay::sync::protocol::{self, AtomicU64};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};

const REPLAY_PASSES: u32 = 2;
const ORDINARY_ADDS: u32 = 10;

struct Agent {
    lock: AgentLock,
    /// Completion handlers in flight, per queue.
    in_flight: [AtomicU64; 2],
    /// Device memory both kernels write.
    memory: UnsafeCell<u32>,
    /// Set between the snapshot and the last restore of the replay.
    window_open: AtomicBool,
    /// The ordinary packet reached the device.
    submitted: AtomicBool,
}

impl Agent {
    fn new() -> Self {
        Self {
            lock: protocol::new_gate_lock(),
            in_flight: [AtomicU64::new(0), AtomicU64::new(0)],
            memory: UnsafeCell::new(0),
            window_open: AtomicBool::new(false),
            submitted: AtomicBool::new(false),
        }
    }

    /// The agent-wide drain's condition: no handler of any queue in flight.
    fn idle(&self) -> bool {
        self.in_flight
            .iter()
            .all(|c| c.load(Ordering::Acquire) == 0)
    }
}

/// Queue 1: an ordinary dispatch, submitted under the reader side.
fn ordinary_submit(a: &Agent) {
    let _submit = ReplayGate::submit(&a.lock);
    assert!(
        !a.window_open.load(Ordering::SeqCst),
        "a non-replayed submit landed inside a replay window"
    );
    a.in_flight[1].fetch_add(1, Ordering::AcqRel);
    a.submitted.store(true, Ordering::Release);
}

/// The device running queue 1's kernel, then its completion handler.
fn device_and_handler(a: &Agent) {
    while !a.submitted.load(Ordering::Acquire) {
        loom::thread::yield_now();
    }
    a.memory.with_mut(|m| {
        // SAFETY: loom tracks this access; a race with the replay is reported as a failure.
        unsafe { *m += ORDINARY_ADDS }
    });
    a.in_flight[1].fetch_sub(1, Ordering::AcqRel);
}

/// Queue 0: a replayed dispatch, the whole window under the writer side.
fn replay_window(a: &Agent) {
    let _window = ReplayGate::window(&a.lock);
    while !a.idle() {
        loom::thread::yield_now();
    }
    // SAFETY: loom tracks the accesses below.
    let snapshot = a.memory.with(|m| unsafe { *m });
    a.window_open.store(true, Ordering::SeqCst);
    for pass in 0..REPLAY_PASSES {
        a.memory.with_mut(|m| {
            // SAFETY: as above.
            unsafe {
                assert_eq!(*m, snapshot, "pass {pass} did not see the snapshot");
                *m += 1;
            }
        });
        if pass + 1 < REPLAY_PASSES {
            // SAFETY: as above.
            a.memory.with_mut(|m| unsafe { *m = snapshot });
        }
    }
    a.window_open.store(false, Ordering::SeqCst);
}

#[test]
fn no_ordinary_submit_lands_inside_a_replay_window() {
    let mut model = loom::model::Builder::new();
    // Bounded so the exploration finishes in seconds; every interleaving with up to three
    // preemptions is checked.
    model.preemption_bound = Some(3);
    model.check(|| {
        let a = Arc::new(Agent::new());
        let submitter = {
            let a = a.clone();
            loom::thread::spawn(move || ordinary_submit(&a))
        };
        let device = {
            let a = a.clone();
            loom::thread::spawn(move || device_and_handler(&a))
        };
        replay_window(&a);
        submitter.join().unwrap();
        device.join().unwrap();
        // SAFETY: every thread joined.
        let end = a.memory.with(|m| unsafe { *m });
        assert_eq!(
            end,
            ORDINARY_ADDS + 1,
            "memory is not one execution of each dispatch"
        );
    });
}
