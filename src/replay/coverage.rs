//! Whether the tool sees everything a replay on an agent depends on, and what its snapshot
//! covers.
//!
//! **What a snapshot covers** ([`capture`]): everything a kernel on the agent can write that the
//! tool can see, that is
//!
//! - the tracked allocations the agent owns, and those of other agents it was given access to
//!   (the runtime's accessible-agent list at allocation time, then `hsa_amd_agents_allow_access`);
//! - every writable segment of every code object loaded for the agent (less its RELRO part),
//!   which holds the module-scope variables of any linkage, listed as symbols or not;
//! - variable symbols of the agent that lie outside those segments;
//! - the ranges a client included for the agent,
//!
//! less every range a client excluded. Allocations made on a thread while it runs a client
//! callback are the client's and never tracked.
//!
//! A snapshot restores only what the inventory knows, and the drains only wait for work the tool
//! counted. Two things can escape them; each makes replays on the agent decline (the reason is
//! logged once per kernel and kind of gap) instead of restoring part of the memory a kernel writes:
//!
//! - **Unfenced queues.** A client that registers after dispatches ran with the service off
//!   finds queues whose earlier work went through the fast path, uncounted. Every queue that
//!   existed at that moment is marked; its next submission through the slow path first submits
//!   a counted barrier packet (which completes only after everything earlier on the queue), and
//!   clears the mark. Until then a replay on its agent cannot prove the queue idle.
//! - **Foreign queues.** A queue the tool did not wrap (created through
//!   `hsa_amd_queue_intercept_create` directly, by the application or another tool, or a plain
//!   queue after the intercept queue could not be created) runs work the drains never see.
//!
//! Libraries loaded as tools before kreplay are not a gap for the application's data: the
//! application cannot allocate before `hsa_init` has loaded every tool, so all of its memory
//! goes through the wrapped entries. What such a library allocated in its own `OnLoad` is its
//! own memory; `OnLoad` warns once that it is not tracked.

pub use super::decline::CoverageGap;
use super::decline::DeclineReason;
use super::{INVENTORY, QUEUES, QueueState};
use crate::loader::{self, EXECUTABLES};
use crate::runtime::Runtime;
use crate::snapshot::ranges::CLIENT_RANGES;
use crate::snapshot::{
    CaptureError, DeviceCopy, Region, RegionKind, RestoreScope, Snapshot, SnapshotStore,
};
use crate::sync::{Mutex, Ordering};
use hsa_abi::ffi::hsa_agent_t;
use std::collections::{HashMap, HashSet};

/// Live queues the tool did not wrap: queue address -> agent handle.
static FOREIGN: Mutex<Option<HashMap<usize, u64>>> = Mutex::new(None);
/// `(kind of gap, kernel)` already warned about.
static GAPS_REPORTED: Mutex<Option<HashSet<(u8, String)>>> = Mutex::new(None);

/// Marks every queue created so far as unfenced. Called when a client registers after the
/// service was off, i.e. after dispatches may have run untracked.
pub fn mark_queues_unfenced() {
    for q in QUEUES.all() {
        q.unfenced.store(true, Ordering::Release);
    }
}

/// Records a queue the tool did not wrap.
pub fn foreign_queue_created(queue: usize, agent: u64) {
    FOREIGN
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(queue, agent);
}

/// Forgets a foreign queue (destroyed); false when it was not one.
pub fn foreign_queue_destroyed(queue: usize) -> bool {
    FOREIGN
        .lock()
        .as_mut()
        .is_some_and(|m| m.remove(&queue).is_some())
}

/// Forgets every foreign queue (the runtime instance that owned them shut down).
pub fn forget_foreign_queues() {
    *FOREIGN.lock() = None;
}

/// Checks the agent of `queue` before a snapshot. The caller holds the agent's writer lock, so
/// no queue of the agent can be fenced or submit concurrently.
pub fn check(queue: &QueueState) -> Result<(), CoverageGap> {
    let agent = queue.agent.handle;
    let count = FOREIGN
        .lock()
        .as_ref()
        .map_or(0, |m| m.values().filter(|&&a| a == agent).count());
    if count > 0 {
        return Err(CoverageGap::ForeignQueues { count });
    }
    let mut unfenced: Vec<u64> = QUEUES
        .all()
        .iter()
        .filter(|q| q.agent.handle == agent && q.unfenced.load(Ordering::Acquire))
        .map(|q| q.queue_id)
        .collect();
    if !unfenced.is_empty() {
        unfenced.sort_unstable();
        let queues = unfenced
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(CoverageGap::Unfenced { queues });
    }
    Ok(())
}

/// True the first time a gap of this kind is reported for `kernel` (the warning is logged once
/// per kernel and kind of gap: a user sees every kernel that is not replayed, and why).
pub fn first_report(gap: &CoverageGap, kernel: &str) -> bool {
    let kind = match gap {
        CoverageGap::Unfenced { .. } => 0,
        CoverageGap::ForeignQueues { .. } => 1,
    };
    GAPS_REPORTED
        .lock()
        .get_or_insert_with(HashSet::new)
        .insert((kind, kernel.to_owned()))
}

/// The regions of a snapshot on `agent` (see the module documentation), in capture order.
/// `held` keeps every listed executable alive until the capture is done.
fn regions(
    rt: Runtime,
    agent: hsa_agent_t,
    held: &crate::inventory::ExecutablesHeld<'_>,
) -> Result<Vec<Region>, CaptureError> {
    let enumeration = |e: crate::runtime::HsaError| CaptureError::SymbolEnumeration(e.to_string());
    let tracked = INVENTORY.writable_by(agent.handle);
    let segments = loader::code_object_segments(rt, agent, held).map_err(enumeration)?;
    let variables = loader::module_variables(rt, agent, held).map_err(enumeration)?;
    let inside = |v: &Region| {
        segments
            .iter()
            .any(|s| s.device <= v.device && v.device + v.size <= s.device + s.size)
    };
    let outside: Vec<Region> = variables.into_iter().filter(|v| !inside(v)).collect();
    let count = tracked.len() + segments.len() + outside.len();
    let mut regions: Vec<Region> = Vec::new();
    regions
        .try_reserve_exact(count)
        .map_err(|_| CaptureError::Metadata { regions: count })?;
    regions.extend(tracked.iter().map(|a| Region {
        kind: RegionKind::Allocation { base: a.base },
        device: a.base,
        size: a.size,
    }));
    regions.extend(segments);
    regions.extend(outside);
    Ok(CLIENT_RANGES.lock().apply(agent.handle, regions))
}

/// Captures everything a replay on `agent` must restore into `store`, restored per `scope`.
/// `admit` sees the region list and the store before anything is copied and may decline (for
/// example when the bytes the store would keep in host memory do not fit there). No executable
/// is destroyed during the capture; the snapshot restores a region of an executable only while
/// it lives.
pub fn capture(
    rt: Runtime,
    agent: hsa_agent_t,
    copier: &dyn DeviceCopy,
    store: Box<dyn SnapshotStore>,
    scope: Box<dyn RestoreScope>,
    admit: impl FnOnce(&[Region], &dyn SnapshotStore) -> Result<(), DeclineReason>,
) -> Result<Snapshot, DeclineReason> {
    let held = EXECUTABLES.hold();
    let regions = regions(rt, agent, &held)?;
    admit(&regions, store.as_ref())?;
    Ok(Snapshot::capture_tracked(
        regions, store, scope, copier, &INVENTORY, &held,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_queues_are_counted_until_destroyed() {
        foreign_queue_created(0xf00, 77);
        assert!(foreign_queue_destroyed(0xf00));
        assert!(!foreign_queue_destroyed(0xf00), "a queue is forgotten once");
        assert!(
            !foreign_queue_destroyed(0xbad),
            "an unknown queue is not foreign"
        );
    }

    #[test]
    fn gaps_name_what_to_do() {
        let g = CoverageGap::ForeignQueues { count: 2 };
        assert!(
            g.to_string()
                .contains("2 queue(s) on this agent were not created through hsa_queue_create")
        );
        let g = CoverageGap::Unfenced {
            queues: "3, 4".into(),
        };
        assert!(g.to_string().contains("queue(s) 3, 4"));
    }

    #[test]
    fn gaps_are_reported_once_per_kernel_and_kind() {
        let unfenced = |q: &str| CoverageGap::Unfenced { queues: q.into() };
        let foreign = CoverageGap::ForeignQueues { count: 1 };
        assert!(first_report(&unfenced("3"), "k_once_a"));
        assert!(
            !first_report(&unfenced("5"), "k_once_a"),
            "the same kind for the same kernel is reported once"
        );
        assert!(
            first_report(&unfenced("3"), "k_once_b"),
            "another kernel is reported too"
        );
        assert!(
            first_report(&foreign, "k_once_a"),
            "another kind for the same kernel is reported too"
        );
        assert!(!first_report(&foreign, "k_once_a"));
    }
}
