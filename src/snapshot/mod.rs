//! `Snapshot` and `restore`: what a replay window saves before the first pass and writes back
//! between passes.
//!
//! Two choices are strategies behind one interface:
//!
//! - where a snapshot is kept: [`SnapshotStore`] ([`HostStore`] now; a device-resident store
//!   later implements the same trait);
//! - how much is restored: [`RestoreScope`] ([`RestoreAll`] now; a written-subset scope later
//!   compares after the first pass and narrows the ranges it returns).
//!
//! Device copies go through [`DeviceCopy`], so the engine runs against a fake in unit tests.

pub mod budget;
mod host;
pub mod ranges;

pub use host::HostStore;

use crate::inventory::{AllocationInventory, ExecutableInventory, ExecutablesHeld};
use crate::runtime::monotonic_ns;
use crate::sync::OnceFlag;
use std::ops::Range;

/// The first restore that skips a region of a destroyed executable warns; later ones log at
/// debug level (an executable unloaded during a long loop would otherwise warn every pass).
static DESTROYED_WARNING: OnceFlag = OnceFlag::new();

/// A copy that the runtime refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("copy of {len} bytes failed: {detail}")]
pub struct CopyFailed {
    /// Bytes requested.
    pub len: usize,
    /// What the runtime said.
    pub detail: String,
}

/// Moves bytes between device and host memory.
pub trait DeviceCopy {
    /// Copies `len` bytes from `src` to `dst`.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes in the runtime's address space.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed>;
}

/// An executable as the tool saw it: its handle and the serial the
/// [`ExecutableInventory`] gave it, so a destroyed executable (or a new one with the same handle)
/// is recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutableRef {
    /// `hsa_executable_t.handle`.
    pub handle: u64,
    /// Serial in the executable inventory.
    pub serial: u64,
}

/// Where a captured region comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// (Part of) a tracked allocation starting at `base`: re-validated against the inventory
    /// before each restore.
    Allocation {
        /// Base address of the allocation the region lies in.
        base: usize,
    },
    /// A module-scope variable of a loaded executable (a variable symbol).
    ModuleVariable {
        /// Symbol name, for messages.
        name: String,
        /// Its executable: the variable is restored only while that executable lives.
        executable: Option<ExecutableRef>,
    },
    /// A writable segment of a code object loaded on the agent (every variable of any
    /// linkage lives in one).
    CodeObjectSegment {
        /// Its executable: the segment is restored only while that executable lives.
        executable: ExecutableRef,
    },
    /// A range a client asked to include (`kreplay_snapshot_include_range`): restored as is.
    ClientRange,
}

impl RegionKind {
    /// The executable the region belongs to, if any.
    pub fn executable(&self) -> Option<ExecutableRef> {
        match self {
            RegionKind::ModuleVariable { executable, .. } => *executable,
            RegionKind::CodeObjectSegment { executable } => Some(*executable),
            RegionKind::Allocation { .. } | RegionKind::ClientRange => None,
        }
    }
}

/// One captured region of device memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Origin of the region.
    pub kind: RegionKind,
    /// Device address.
    pub device: usize,
    /// Size in bytes.
    pub size: usize,
}

/// Why a snapshot is incomplete, which declines replay of the dispatch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclineReason {
    /// The host buffer of a region could not be allocated.
    #[error("host allocation of {size} bytes failed for the region at {device:#x}")]
    HostAllocation {
        /// Device address of the region.
        device: usize,
        /// Bytes requested.
        size: usize,
    },
    /// The device-to-host copy of a region failed.
    #[error("device-to-host copy of the region at {device:#x} failed: {source}")]
    Copy {
        /// Device address of the region.
        device: usize,
        /// The failure.
        source: CopyFailed,
    },
    /// The region list itself could not be reserved.
    #[error("reserving snapshot metadata for {regions} regions failed")]
    Metadata {
        /// Number of regions.
        regions: usize,
    },
    /// Module-scope variables could not be enumerated.
    #[error("enumerating module-scope variables failed: {0}")]
    SymbolEnumeration(String),
    /// The client asked for an unbounded loop without a continue callback.
    #[error("an unbounded pass count needs a continue callback")]
    UnboundedWithoutContinue,
    /// Memory or work on the agent escapes the inventory or the drains.
    #[error("{0}")]
    Coverage(crate::replay::coverage::CoverageGap),
    /// The queue drain or the agent-wide drain did not finish within the decline bound.
    #[error("{detail} within {bound_ms} ms (KREPLAY_DRAIN_DECLINE_MS); that work may wait for this dispatch")]
    Drain {
        /// What did not finish.
        detail: String,
        /// The bound.
        bound_ms: u64,
    },
    /// A replay setting of the environment is invalid.
    #[error("{0}")]
    Configuration(String),
    /// The snapshot would not fit in the memory the process can still use.
    #[error(
        "the snapshot needs {needed} bytes of host memory but only {available} bytes are available ({limit}), \
         less than needed plus a margin of {margin} bytes"
    )]
    HostMemory {
        /// Bytes the snapshot would allocate.
        needed: u64,
        /// Bytes the process can still use.
        available: u64,
        /// Which limit is the tightest.
        limit: String,
        /// Head room kept.
        margin: u64,
    },
}

impl DeclineReason {
    /// A short tag for records (`copy`, `symbols`, ...).
    pub fn tag(&self) -> &'static str {
        match self {
            DeclineReason::HostAllocation { .. } => "host allocation",
            DeclineReason::Copy { .. } => "copy",
            DeclineReason::Metadata { .. } => "metadata",
            DeclineReason::SymbolEnumeration(_) => "symbols",
            DeclineReason::UnboundedWithoutContinue => "unbounded without continue",
            DeclineReason::Coverage(_) => "coverage",
            DeclineReason::Drain { .. } => "drain",
            DeclineReason::Configuration(_) => "configuration",
            DeclineReason::HostMemory { .. } => "host memory",
        }
    }
}

/// Where captured bytes are kept.
pub trait SnapshotStore: Send {
    /// Makes room for `regions` regions; an error is a metadata failure.
    fn reserve(&mut self, regions: &[Region]) -> Result<(), DeclineReason>;
    /// Captures region `index` (device -> store).
    fn keep(&mut self, index: usize, region: &Region, copier: &dyn DeviceCopy) -> Result<(), DeclineReason>;
    /// Writes `range` (relative to the region start) of region `index` back to the device.
    fn put_back(&self, index: usize, region: &Region, range: Range<usize>, copier: &dyn DeviceCopy)
    -> Result<(), CopyFailed>;
    /// Bytes held by the store.
    fn bytes_held(&self) -> u64;
}

/// How much of each region is written back between passes.
pub trait RestoreScope: Send {
    /// Called after each pass, before the restore that follows it.
    fn after_pass(&mut self, regions: &[Region], store: &dyn SnapshotStore, copier: &dyn DeviceCopy);
    /// The byte ranges of region `index` to write back.
    fn ranges(&self, index: usize, region: &Region) -> Vec<Range<usize>>;
}

/// Restores every byte of every region.
#[derive(Debug, Default, Clone, Copy)]
pub struct RestoreAll;

impl RestoreScope for RestoreAll {
    fn after_pass(&mut self, _: &[Region], _: &dyn SnapshotStore, _: &dyn DeviceCopy) {}
    #[allow(clippy::single_range_in_vec_init)]
    fn ranges(&self, _: usize, region: &Region) -> Vec<Range<usize>> {
        vec![0..region.size]
    }
}

/// Totals of one capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Regions captured.
    pub regions: u64,
    /// Bytes captured.
    pub bytes: u64,
    /// Capture start (monotonic ns).
    pub start_ns: u64,
    /// Capture end (monotonic ns).
    pub end_ns: u64,
}

/// Outcome of one restore.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Regions written back.
    pub regions: u64,
    /// Bytes written back.
    pub bytes: u64,
    /// Regions skipped because their allocation was freed or shrunk, or their executable
    /// destroyed, since the capture.
    pub skipped: u64,
    /// The copy that still failed after its retries; the restore stopped there.
    pub failure: Option<RestoreFailure>,
    /// Start (monotonic ns).
    pub start_ns: u64,
    /// End (monotonic ns).
    pub end_ns: u64,
}

/// Attempts of each restore copy before the restore gives up.
pub const RESTORE_ATTEMPTS: u32 = 3;

/// A region whose restore copy failed [`RESTORE_ATTEMPTS`] times.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the copy back into {what} at {device:#x} ({size} bytes) failed {RESTORE_ATTEMPTS} times: {source}")]
pub struct RestoreFailure {
    /// `allocation` or `variable <name>`.
    pub what: String,
    /// Device address of the region.
    pub device: usize,
    /// Size of the region.
    pub size: usize,
    /// The last failure.
    pub source: CopyFailed,
    /// True when this restore had written nothing before the failure (device memory is still as
    /// the last pass left it, on the assumption that a failed copy writes nothing).
    pub nothing_written: bool,
}

/// A complete capture of one agent's memory, owned by the replay window that took it.
pub struct Snapshot {
    regions: Vec<Region>,
    /// Per region: the inventory serial of the captured allocation (see
    /// [`Snapshot::capture_tracked`]); empty or `None` when not known.
    serials: Vec<Option<u64>>,
    /// The executables regions of executables are checked against before a restore (`None`:
    /// written directly, for snapshots taken with [`Snapshot::capture`]).
    executables: Option<&'static ExecutableInventory>,
    store: Box<dyn SnapshotStore>,
    scope: Box<dyn RestoreScope>,
    stats: CaptureStats,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("regions", &self.regions.len()).field("stats", &self.stats).finish()
    }
}

impl Snapshot {
    /// Captures `regions` into `store`. Any failure returns the reason; nothing partial is kept.
    pub fn capture(
        regions: Vec<Region>,
        mut store: Box<dyn SnapshotStore>,
        scope: Box<dyn RestoreScope>,
        copier: &dyn DeviceCopy,
    ) -> Result<Self, DeclineReason> {
        let start_ns = monotonic_ns();
        store.reserve(&regions)?;
        for (i, r) in regions.iter().enumerate() {
            store.keep(i, r, copier)?;
        }
        let bytes = store.bytes_held();
        let stats = CaptureStats { regions: regions.len() as u64, bytes, start_ns, end_ns: monotonic_ns() };
        Ok(Self { regions, serials: Vec::new(), executables: None, store, scope, stats })
    }

    /// Like [`Snapshot::capture`], with the allocations checked against `inventory`: each
    /// allocation region is copied under the inventory read lock, so a concurrent free cannot
    /// unmap it during the copy (one freed since `regions` was listed is left out: it is no
    /// longer the application's memory), and the snapshot remembers which allocation it copied,
    /// so a restore never writes it to a new allocation at the same address. Regions of
    /// executables are copied while `executables` holds off destruction (one destroyed since
    /// `regions` was listed is left out), and restored only while that executable lives.
    pub fn capture_tracked(
        regions: Vec<Region>,
        mut store: Box<dyn SnapshotStore>,
        scope: Box<dyn RestoreScope>,
        copier: &dyn DeviceCopy,
        inventory: &AllocationInventory,
        executables: &ExecutablesHeld<'static>,
    ) -> Result<Self, DeclineReason> {
        let start_ns = monotonic_ns();
        store.reserve(&regions)?;
        let mut kept: Vec<Region> = Vec::new();
        let mut serials: Vec<Option<u64>> = Vec::new();
        kept.try_reserve_exact(regions.len()).map_err(|_| DeclineReason::Metadata { regions: regions.len() })?;
        serials.try_reserve_exact(regions.len()).map_err(|_| DeclineReason::Metadata { regions: regions.len() })?;
        for r in regions {
            let index = kept.len();
            let serial = match &r.kind {
                RegionKind::Allocation { base } => {
                    match inventory.with_same(*base, r.device - base + r.size, None, || store.keep(index, &r, copier)) {
                        Ok((kept_ok, serial)) => {
                            kept_ok?;
                            Some(serial)
                        }
                        Err(stale) => {
                            tracing::debug!("snapshot left out the allocation at {:#x} ({} bytes): {stale}", r.device, r.size);
                            continue;
                        }
                    }
                }
                kind => {
                    if let Some(exe) = kind.executable()
                        && !executables.is_same(exe.handle, exe.serial)
                    {
                        tracing::debug!("snapshot left out {:#x} ({} bytes): its executable was destroyed", r.device, r.size);
                        continue;
                    }
                    store.keep(index, &r, copier)?;
                    None
                }
            };
            kept.push(r);
            serials.push(serial);
        }
        let bytes = store.bytes_held();
        let stats = CaptureStats { regions: kept.len() as u64, bytes, start_ns, end_ns: monotonic_ns() };
        Ok(Self { regions: kept, serials, executables: Some(executables.inventory()), store, scope, stats })
    }

    /// The captured regions.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Capture totals.
    pub fn stats(&self) -> CaptureStats {
        self.stats
    }

    /// Writes the captured bytes back. Allocations are re-validated under the inventory read
    /// lock and skipped with a warning when freed, shrunk or (for a snapshot taken with
    /// [`Snapshot::capture_tracked`]) replaced by a new allocation at the same address; regions
    /// of executables are written only while their executable lives (destruction held off
    /// during the copy), and skipped with a warning otherwise. A failed copy is retried (up to
    /// [`RESTORE_ATTEMPTS`] in all); when it still fails the restore stops there and reports it
    /// in [`RestoreReport::failure`]: the caller must not run another pass on that memory.
    pub fn restore(&mut self, inventory: &AllocationInventory, copier: &dyn DeviceCopy) -> RestoreReport {
        let mut rep = RestoreReport { start_ns: monotonic_ns(), ..Default::default() };
        self.scope.after_pass(&self.regions, self.store.as_ref(), copier);
        for (i, r) in self.regions.iter().enumerate() {
            let ranges = self.scope.ranges(i, r);
            let written_before = rep.bytes;
            // Bytes of this region written so far (ranges already done), kept across the retry.
            let mut done = 0u64;
            let write = |done: &mut u64| -> Result<u64, CopyFailed> {
                let mut n = 0;
                for range in ranges.iter().cloned() {
                    let len = range.len() as u64;
                    let mut attempt = 1;
                    loop {
                        match self.store.put_back(i, r, range.clone(), copier) {
                            Ok(()) => break,
                            Err(e) if attempt >= RESTORE_ATTEMPTS => return Err(e),
                            Err(e) => {
                                tracing::debug!("restore copy of {len} bytes at {:#x} failed ({e}); retrying", r.device + range.start);
                                attempt += 1;
                            }
                        }
                    }
                    n += len;
                    *done += len;
                }
                Ok(n)
            };
            let outcome = match &r.kind {
                RegionKind::Allocation { base } => {
                    let serial = self.serials.get(i).copied().flatten();
                    match inventory.with_same(*base, r.device - base + r.size, serial, || write(&mut done)) {
                        Ok((o, _)) => o,
                        Err(stale) => {
                            tracing::warn!("restore skipped the allocation at {:#x} ({} bytes): {stale}", r.device, r.size);
                            rep.skipped += 1;
                            continue;
                        }
                    }
                }
                kind => match (kind.executable(), self.executables) {
                    (Some(exe), Some(executables)) => match executables.with_same(exe.handle, exe.serial, || write(&mut done)) {
                        Some(o) => o,
                        None => {
                            if DESTROYED_WARNING.first() {
                                tracing::warn!(
                                    "restore skipped {:#x} ({} bytes): its executable {:#x} was destroyed since the snapshot \
                                     (later such skips are logged at debug level)",
                                    r.device,
                                    r.size,
                                    exe.handle
                                );
                            } else {
                                tracing::debug!(
                                    "restore skipped {:#x} ({} bytes): its executable {:#x} was destroyed since the snapshot",
                                    r.device,
                                    r.size,
                                    exe.handle
                                );
                            }
                            rep.skipped += 1;
                            continue;
                        }
                    },
                    _ => write(&mut done),
                },
            };
            match outcome {
                Ok(n) => {
                    rep.regions += 1;
                    rep.bytes += n;
                }
                Err(source) => {
                    let what = match &r.kind {
                        RegionKind::Allocation { .. } => "the allocation".to_owned(),
                        RegionKind::ModuleVariable { name, .. } => format!("the variable {name}"),
                        RegionKind::CodeObjectSegment { .. } => "the code-object segment".to_owned(),
                        RegionKind::ClientRange => "the client-included range".to_owned(),
                    };
                    rep.failure = Some(RestoreFailure {
                        what,
                        device: r.device,
                        size: r.size,
                        source,
                        nothing_written: written_before == 0 && done == 0,
                    });
                    break;
                }
            }
        }
        rep.end_ns = monotonic_ns();
        rep
    }
}

#[cfg(test)]
mod tests;
