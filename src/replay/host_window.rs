//! Host memory in a replay window: which host and fine-grained allocations the dispatch can
//! reach, what the policy does with them, and the checks after each pass (see
//! `crate::host_memory`).
//!
//! - `snapshot` (default): reachable allocations are captured after the drains and restored
//!   between passes; a capture that does not fit the process's memory, reaches memory the host
//!   cannot read or memory seen written by another writer declines the replay. After every later
//!   pass the chunks the first pass changed are compared with its result: a difference stops the
//!   loop, keeps every write, and the allocation is declined from then on.
//!   HIP's copy and fill kernels write their destination without reading it: the host memory
//!   they reach is not captured (see [`writes_without_reading`]).
//! - `decline`: a dispatch that reaches any such allocation is declined.
//! - memory another process or API may write (IPC-imported, interop) is declined under both
//!   `snapshot` and `decline`: no drain or fence orders those writers with the window.
//! - `ignore`: nothing is captured; the allocations are hashed before and after the first pass,
//!   and one the kernel wrote is reported as written but not restored.
//!
//! Verify mode also hashes every other host allocation before the first pass, after it and after
//! the last pass: a kernel writing one (through a pointer the tool cannot see) is reported as
//! unrestored, and one that differs after the last pass is reported as a mismatch naming the
//! kernel and the allocation.

use super::NAMES;
use super::decline::DeclineReason;
use crate::host_memory::capture::{self, HostSnapshot};
use crate::host_memory::policy::{self, HostMemoryPolicy};
use crate::host_memory::{HOST_ALLOCATIONS, HostAllocation, HostMemoryReport, reach};
use crate::runtime::Runtime;
use crate::sync::Mutex;
use hsa_abi::ffi::{hsa_agent_t, hsa_kernel_dispatch_packet_t};
use std::collections::HashSet;

/// An allocation not captured but watched: its hash before the first pass and after it.
struct Watched {
    allocation: HostAllocation,
    before: Option<u64>,
    after_first: Option<u64>,
}

/// Host memory of one open window.
pub(super) struct HostWindow {
    snapshot: Option<HostSnapshot>,
    watched: Vec<Watched>,
    verify: bool,
    kernel: String,
    report: HostMemoryReport,
}

/// `(kernel, what)` pairs already warned about.
static WARNED: Mutex<Option<HashSet<(String, String)>>> = Mutex::new(None);

fn warn_once(kernel: &str, what: &str, text: &str) {
    let first = WARNED
        .lock()
        .get_or_insert_with(HashSet::new)
        .insert((kernel.to_owned(), what.to_owned()));
    if first {
        tracing::warn!("{text} (reported once per kernel and allocation)");
    } else {
        tracing::debug!("{text}");
    }
}

fn kinds(allocations: &[HostAllocation]) -> String {
    let mut names: Vec<&str> = allocations.iter().map(|a| a.kind.name()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

/// The host allocations the dispatch reaches. Kernel arguments the host cannot read reach, as
/// far as the tool can tell, every host allocation.
fn reachable(
    rt: Runtime,
    agent: hsa_agent_t,
    pkt: &hsa_kernel_dispatch_packet_t,
) -> Vec<HostAllocation> {
    let size = NAMES
        .kernarg_size(agent, pkt.kernel_object)
        .map(|s| s as usize);
    match reach::kernel_arguments(rt, pkt.kernarg_address as usize, size) {
        Some(args) => reach::reachable(&HOST_ALLOCATIONS, &args),
        None => HOST_ALLOCATIONS.all(),
    }
}

/// Applies the policy before the device snapshot; an error declines the replay.
pub(super) fn open(
    rt: Runtime,
    agent: hsa_agent_t,
    pkt: &hsa_kernel_dispatch_packet_t,
    kernel: &str,
    verify: bool,
) -> Result<HostWindow, DeclineReason> {
    let policy = policy::current().map_err(DeclineReason::Configuration)?;
    let mut w = HostWindow {
        snapshot: None,
        watched: Vec::new(),
        verify,
        kernel: kernel.to_owned(),
        report: HostMemoryReport {
            policy: policy.name().to_owned(),
            ..Default::default()
        },
    };
    if HOST_ALLOCATIONS.is_empty() {
        return Ok(w);
    }
    // Memory a client excluded (its own buffers) is never captured: an allocation with an
    // excluded part is left out whole.
    let mut reached = reachable(rt, agent, pkt);
    {
        let ranges = crate::snapshot::ranges::CLIENT_RANGES.lock();
        reached.retain(|a| !ranges.excludes_part_of(a.base, a.size));
    }
    w.report.reachable = reached.len() as u32;
    if policy != HostMemoryPolicy::Ignore {
        refuse_memory_written_elsewhere(&reached)?;
    }
    match policy {
        HostMemoryPolicy::Decline if !reached.is_empty() => {
            return Err(DeclineReason::HostReachable(format!(
                "the dispatch can reach {} host allocation(s) ({}) and the host-memory policy is {}",
                reached.len(),
                kinds(&reached),
                policy::setting(policy)
            )));
        }
        HostMemoryPolicy::Snapshot if !reached.is_empty() && writes_without_reading(kernel) => {
            tracing::debug!(
                "kernel {kernel} writes its destination without reading it: the {} host allocation(s) it reaches \
                 are not captured, every pass writes the same bytes",
                reached.len()
            );
        }
        HostMemoryPolicy::Snapshot if !reached.is_empty() => {
            crate::snapshot::budget::check(capture::bytes_needed(&reached))?;
            let snap = HostSnapshot::capture(&HOST_ALLOCATIONS, &reached)
                .map_err(|e| DeclineReason::HostReachable(e.to_string()))?;
            w.report.saved_bytes = snap.saved_bytes();
            w.snapshot = Some(snap);
        }
        _ => w.watch(&reached),
    }
    if verify {
        let others: Vec<HostAllocation> = HOST_ALLOCATIONS
            .all()
            .into_iter()
            .filter(|a| !reached.iter().any(|r| r.base == a.base))
            .collect();
        w.watch(&others);
    }
    Ok(w)
}

/// HIP's copy and fill kernels (ROCclr's blits: buffer, rectangle and image copies and fills)
/// write their destination without reading it, from a source that is not the destination. Host
/// memory they reach is therefore left out of the capture: every pass writes the same bytes, and
/// nothing is ever written back over the pages the runtime locked around a pageable buffer,
/// where other threads keep their heap (their stores during the first pass would otherwise be
/// taken for the kernel's and reverted before the second).
fn writes_without_reading(kernel: &str) -> bool {
    ["__amd_rocclr_copy", "__amd_rocclr_fill"]
        .iter()
        .any(|p| kernel.starts_with(p))
}

/// Memory another process or API may write (IPC-imported, interop) is never captured: its
/// writers cannot be fenced, so a restore could undo their writes. Declines unless the policy
/// is `ignore`.
fn refuse_memory_written_elsewhere(reached: &[HostAllocation]) -> Result<(), DeclineReason> {
    let shared: Vec<HostAllocation> = reached
        .iter()
        .copied()
        .filter(|a| a.kind.written_elsewhere())
        .collect();
    if shared.is_empty() {
        return Ok(());
    }
    Err(DeclineReason::HostReachable(format!(
        "the dispatch can reach {} allocation(s) shared with another process or API ({}): their other \
         writers cannot be fenced, so restoring them could lose those writes \
         (the policy ignore, KREPLAY_HOST_MEMORY=ignore or kreplay_set_host_memory_policy, replays \
         without restoring)",
        shared.len(),
        kinds(&shared)
    )))
}

impl HostWindow {
    /// Before the first pass: the captured host memory still holds what was captured (see
    /// [`HostSnapshot::unchanged_since_capture`]); otherwise the replay is declined.
    pub(super) fn unchanged_since_capture(&mut self) -> Result<(), DeclineReason> {
        match self.snapshot.as_mut() {
            Some(s) => s
                .unchanged_since_capture(&HOST_ALLOCATIONS)
                .map_err(|e| DeclineReason::HostReachable(e.to_string())),
            None => Ok(()),
        }
    }

    fn watch(&mut self, allocations: &[HostAllocation]) {
        self.watched.extend(allocations.iter().map(|a| Watched {
            allocation: *a,
            before: capture::fingerprint(&HOST_ALLOCATIONS, a),
            after_first: None,
        }));
    }

    /// After pass `pass` completed. Returns why the loop must stop (another writer was seen).
    pub(super) fn after_pass(&mut self, pass: u32) -> Option<String> {
        if pass == 0 {
            self.first_pass_done();
        }
        let diverged = self
            .snapshot
            .as_mut()
            .map(|s| s.after_pass(&HOST_ALLOCATIONS, pass))
            .unwrap_or_default();
        if diverged.is_empty() {
            return None;
        }
        for d in &diverged {
            tracing::debug!(
                "kernel {}: {} after pass {pass}: {} byte(s) differed from the first pass, {} put back",
                self.kernel,
                d.allocation.describe(),
                d.differing,
                d.recovered
            );
        }
        let names: Vec<String> = diverged.iter().map(|d| d.allocation.describe()).collect();
        let text = format!(
            "{} changed during the replay window by a writer other than the kernel (a host thread, another agent) \
             or by a kernel that is not deterministic; the loop stopped after pass {pass}, no write was reverted, \
             and later dispatches that reach it are declined",
            names.join(", ")
        );
        for n in &names {
            warn_once(&self.kernel, n, &format!("kernel {}: {text}", self.kernel));
        }
        self.report.other_writers.extend(names);
        self.snapshot = None;
        Some(text)
    }

    fn first_pass_done(&mut self) {
        for w in &mut self.watched {
            w.after_first = capture::fingerprint(&HOST_ALLOCATIONS, &w.allocation);
            if w.after_first != w.before {
                let d = w.allocation.describe();
                warn_once(
                    &self.kernel,
                    &d,
                    &format!(
                        "kernel {} wrote {d}, which kreplay did not restore between passes: every pass wrote it again \
                         (policy {})",
                        self.kernel,
                        policy::current()
                            .map(policy::setting)
                            .unwrap_or_else(|_| self.report.policy.clone())
                    ),
                );
                self.report.unrestored.push(d);
            }
        }
    }

    /// Restores the captured host memory before the next pass.
    pub(super) fn restore(&mut self) {
        if let Some(s) = self.snapshot.as_mut() {
            self.report.restored_bytes += s.restore(&HOST_ALLOCATIONS);
        }
    }

    /// Ends the window: verify mode compares the watched allocations with their state after the
    /// first pass.
    pub(super) fn finish(mut self, passes: usize) -> HostMemoryReport {
        if self.verify && passes > 1 {
            for w in &self.watched {
                let now = capture::fingerprint(&HOST_ALLOCATIONS, &w.allocation);
                if now != w.after_first {
                    let d = w.allocation.describe();
                    warn_once(
                        &self.kernel,
                        &format!("verify {d}"),
                        &format!(
                            "verify mode: kernel {} left {d} different after the last pass from after the first pass",
                            self.kernel
                        ),
                    );
                    self.report.verify_mismatches.push(d);
                }
            }
        }
        self.report
    }
}
