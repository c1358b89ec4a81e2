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

mod host;

pub use host::HostStore;

use crate::inventory::AllocationInventory;
use crate::runtime::monotonic_ns;
use std::ops::Range;

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

/// Where a captured region comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// A tracked allocation: re-validated against the inventory before each restore.
    Allocation,
    /// A module-scope variable of a loaded executable: always present, restored directly.
    ModuleVariable {
        /// Symbol name, for messages.
        name: String,
    },
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
    /// A variable that concerns every replay has an invalid value (reported once at load).
    #[error("{0}")]
    Configuration(&'static str),
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
            DeclineReason::Configuration(_) => "configuration",
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Regions written back.
    pub regions: u64,
    /// Bytes written back.
    pub bytes: u64,
    /// Allocations skipped because they were freed or shrunk since the capture.
    pub skipped: u64,
    /// Regions whose copy failed (logged and skipped).
    pub failed: u64,
    /// Start (monotonic ns).
    pub start_ns: u64,
    /// End (monotonic ns).
    pub end_ns: u64,
}

/// A complete capture of one agent's memory, owned by the replay window that took it.
pub struct Snapshot {
    regions: Vec<Region>,
    /// Per region: the inventory serial of the captured allocation (see
    /// [`Snapshot::capture_tracked`]); empty or `None` when not known.
    serials: Vec<Option<u64>>,
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
        Ok(Self { regions, serials: Vec::new(), store, scope, stats })
    }

    /// Like [`Snapshot::capture`], with the allocations checked against `inventory`: each
    /// allocation region is copied under the inventory read lock, so a concurrent free cannot
    /// unmap it during the copy (one freed since `regions` was listed is left out: it is no
    /// longer the application's memory), and the snapshot remembers which allocation it copied,
    /// so a restore never writes it to a new allocation at the same address.
    pub fn capture_tracked(
        regions: Vec<Region>,
        mut store: Box<dyn SnapshotStore>,
        scope: Box<dyn RestoreScope>,
        copier: &dyn DeviceCopy,
        inventory: &AllocationInventory,
    ) -> Result<Self, DeclineReason> {
        let start_ns = monotonic_ns();
        store.reserve(&regions)?;
        let mut kept: Vec<Region> = Vec::new();
        let mut serials: Vec<Option<u64>> = Vec::new();
        kept.try_reserve_exact(regions.len()).map_err(|_| DeclineReason::Metadata { regions: regions.len() })?;
        serials.try_reserve_exact(regions.len()).map_err(|_| DeclineReason::Metadata { regions: regions.len() })?;
        for r in regions {
            let index = kept.len();
            let serial = match r.kind {
                RegionKind::Allocation => match inventory.with_same(r.device, r.size, None, || store.keep(index, &r, copier)) {
                    Ok((kept_ok, serial)) => {
                        kept_ok?;
                        Some(serial)
                    }
                    Err(stale) => {
                        tracing::debug!("snapshot left out the allocation at {:#x} ({} bytes): {stale}", r.device, r.size);
                        continue;
                    }
                },
                RegionKind::ModuleVariable { .. } => {
                    store.keep(index, &r, copier)?;
                    None
                }
            };
            kept.push(r);
            serials.push(serial);
        }
        let bytes = store.bytes_held();
        let stats = CaptureStats { regions: kept.len() as u64, bytes, start_ns, end_ns: monotonic_ns() };
        Ok(Self { regions: kept, serials, store, scope, stats })
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
    /// [`Snapshot::capture_tracked`]) replaced by a new allocation at the same address; module
    /// variables are written directly; a failed copy is logged and skipped.
    pub fn restore(&mut self, inventory: &AllocationInventory, copier: &dyn DeviceCopy) -> RestoreReport {
        let mut rep = RestoreReport { start_ns: monotonic_ns(), ..Default::default() };
        self.scope.after_pass(&self.regions, self.store.as_ref(), copier);
        for (i, r) in self.regions.iter().enumerate() {
            let ranges = self.scope.ranges(i, r);
            let write = || -> Result<u64, CopyFailed> {
                let mut n = 0;
                for range in ranges.iter().cloned() {
                    n += range.len() as u64;
                    self.store.put_back(i, r, range, copier)?;
                }
                Ok(n)
            };
            let outcome = match &r.kind {
                RegionKind::Allocation => match inventory.with_same(r.device, r.size, self.serials.get(i).copied().flatten(), write) {
                    Ok((o, _)) => o,
                    Err(stale) => {
                        tracing::warn!("restore skipped the allocation at {:#x} ({} bytes): {stale}", r.device, r.size);
                        rep.skipped += 1;
                        continue;
                    }
                },
                RegionKind::ModuleVariable { .. } => write(),
            };
            match outcome {
                Ok(n) => {
                    rep.regions += 1;
                    rep.bytes += n;
                }
                Err(e) => {
                    tracing::warn!("restore of the region at {:#x} ({} bytes) failed and was skipped: {e}", r.device, r.size);
                    rep.failed += 1;
                }
            }
        }
        rep.end_ns = monotonic_ns();
        rep
    }
}

#[cfg(test)]
mod tests;
