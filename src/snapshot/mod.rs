//! `Snapshot` and `restore`: what a replay window saves before the first pass and writes back
//! between passes.
//!
//! Two choices are strategies behind one interface:
//!
//! - where a snapshot is kept: [`SnapshotStore`] ([`HostStore`]: host buffers, pinned when the
//!   runtime can lock them; [`TieredStore`]: each region in a buffer of the agent's own pool
//!   while a budget allows, in host memory otherwise);
//! - how much is restored: [`RestoreScope`] ([`RestoreAll`]: every byte; [`ChangedChunks`]:
//!   chunks hashed while capturing and after the first pass, and only those that differ are
//!   written back).
//!
//! Device copies go through [`DeviceCopy`], device buffers through [`DeviceMemory`], hashing
//! through [`ChunkHasher`], so the engine runs against fakes in unit tests; [`DeviceHasher`] hashes
//! regions the host cannot read with the tool's own kernel on the agent.

pub mod budget;
mod chunks;
pub mod density;
pub mod device_hash;
pub(crate) mod host;
pub mod ranges;
mod reaper;
mod runtime_copy;
pub mod settings;
mod tiered;

pub use chunks::{ChangedChunks, ChunkHasher, HostHasher};
pub use device_hash::DeviceHasher;
pub use host::{HostPinning, HostStore, release_idle_host_buffers};
pub use runtime_copy::{AgentCopy, LockPinning, buffers_of, device_pool, host_address, plan};
pub use tiered::{AgentBuffers, DeviceMemory, TieredStore};
pub use tiered::{agent_buffers, release_idle_device_buffers};

/// Idle snapshot buffers (host and device) are returned to the system after this long.
pub const IDLE_RETURN: std::time::Duration = std::time::Duration::from_secs(2);

/// Frees every idle snapshot buffer now (an application allocation failed for lack of
/// memory); the bytes released.
pub fn release_idle_buffers() -> u64 {
    release_idle_device_buffers(std::time::Duration::ZERO)
        + release_idle_host_buffers(std::time::Duration::ZERO)
}

/// The reaper's sweep: frees the host and device buffers idle for [`IDLE_RETURN`], returns the
/// idle bytes that remain in both pools.
fn sweep_idle_buffers() -> u64 {
    release_idle_host_buffers(IDLE_RETURN);
    release_idle_device_buffers(IDLE_RETURN);
    host::idle_host_bytes() + tiered::idle_device_bytes()
}

/// Starts returning idle buffers in the background (a pool has just been given one back).
fn start_reaper() {
    reaper::ensure_running(sweep_idle_buffers);
}

/// Frees every idle buffer and stops returning them in the background, forgets the agents'
/// buffer pools and releases the kept hashing kernels (the runtime instance is shutting down:
/// nothing may call it afterwards).
pub fn close_buffers() {
    reaper::close();
    release_idle_buffers();
    tiered::forget_agents();
    device_hash::release_kept();
}

/// Forgets every buffer and kept hashing kernel of an ended runtime instance without calling it
/// (its device memory and locks ended with it; host mappings are unmapped), and lets idle
/// buffers be returned in the background again. Called when a new runtime instance starts.
pub fn forget_runtime_instance() {
    tiered::forget_agents();
    device_hash::forget_kept();
    host::forget_idle();
    reaper::reopen();
}

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

/// One copy of a batch: `len` bytes from `src` to `dst` (addresses in the runtime's space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyOp {
    /// Destination address.
    pub dst: usize,
    /// Source address.
    pub src: usize,
    /// Bytes.
    pub len: usize,
}

/// Moves bytes between device and host memory.
pub trait DeviceCopy {
    /// Copies `len` bytes from `src` to `dst`.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes in the runtime's address space.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed>;

    /// Copies every op between buffers of the replaying agent's own memory, several in flight,
    /// and runs `during` while they are (the default copies one after the other, then runs it).
    /// Returns once every submitted copy completed; the first failure is returned.
    ///
    /// # Safety
    /// Every op's ranges must be valid device memory of the agent for `len` bytes.
    unsafe fn copy_on_device(
        &self,
        ops: &[CopyOp],
        during: &mut dyn FnMut(),
    ) -> Result<(), CopyFailed> {
        for op in ops {
            // SAFETY: forwarded caller contract.
            unsafe { self.copy(op.dst as *mut u8, op.src as *const u8, op.len)? };
        }
        during();
        Ok(())
    }
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

/// Why a snapshot could not be captured (the replay window declines the dispatch for it; the
/// window's own reasons are in `replay::decline`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
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
    /// `KREPLAY_SNAPSHOT=device` and the region does not fit in the device budget.
    #[error(
        "the region at {device:#x} ({size} bytes) does not fit in device memory (KREPLAY_SNAPSHOT=device; lower KREPLAY_DEVICE_RESERVE_MB or use auto)"
    )]
    DeviceRoom {
        /// Device address of the region.
        device: usize,
        /// Bytes requested.
        size: usize,
    },
    /// Module-scope variables could not be enumerated.
    #[error("enumerating module-scope variables failed: {0}")]
    SymbolEnumeration(String),
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

impl CaptureError {
    /// A short tag for records (`copy`, `symbols`, ...).
    pub fn tag(&self) -> &'static str {
        match self {
            CaptureError::HostAllocation { .. } => "host allocation",
            CaptureError::DeviceRoom { .. } => "device memory",
            CaptureError::Copy { .. } => "copy",
            CaptureError::Metadata { .. } => "metadata",
            CaptureError::SymbolEnumeration(_) => "symbols",
            CaptureError::HostMemory { .. } => "host memory",
        }
    }
}

/// Where captured bytes are kept.
pub trait SnapshotStore: Send {
    /// Makes room for `regions` regions; an error is a metadata failure.
    fn reserve(&mut self, regions: &[Region]) -> Result<(), CaptureError>;
    /// Captures region `index` (device -> store); `during` runs while the copy is in flight
    /// (or after it), while the region's bytes are still those captured.
    fn keep(
        &mut self,
        index: usize,
        region: &Region,
        copier: &dyn DeviceCopy,
        during: &mut dyn FnMut(),
    ) -> Result<(), CaptureError>;
    /// Writes `ranges` (relative to the region start) of region `index` back to the device.
    fn put_back(
        &self,
        index: usize,
        region: &Region,
        ranges: &[Range<usize>],
        copier: &dyn DeviceCopy,
    ) -> Result<(), CopyFailed>;
    /// Bytes held by the store.
    fn bytes_held(&self) -> u64;
    /// Bytes held in device memory (the rest is in host memory).
    fn device_bytes(&self) -> u64 {
        0
    }
    /// Bytes a capture of `regions` would keep in host memory (every byte, unless the store
    /// keeps some in device memory); for the host-memory budget, asked before the capture.
    fn host_bound(&self, regions: &[Region]) -> u64 {
        regions.iter().map(|r| r.size as u64).sum()
    }
    /// True when [`SnapshotStore::put_back`] of `range` alone is one copy, so a failure wrote
    /// none of it.
    fn one_copy(&self, _index: usize, _range: &Range<usize>) -> bool {
        true
    }
}

/// What a scope found after a pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassCheck {
    /// Chunks written outside the set learned after the first pass (verify mode).
    pub unexpected_chunks: u64,
    /// The restore that follows writes every byte back.
    pub full: bool,
}

/// Runs the closure while region `index` is still the memory captured (its allocation not
/// freed, its executable not destroyed), holding off a free meanwhile; false, without running
/// it, when it is gone.
pub type RegionHold<'a> = &'a dyn Fn(usize, &mut dyn FnMut()) -> bool;

/// A [`RegionHold`] for memory that cannot go away (tests, client ranges).
pub fn always_held(_: usize, f: &mut dyn FnMut()) -> bool {
    f();
    true
}

/// How much of each region is written back between passes.
pub trait RestoreScope: Send {
    /// Region `index` is being captured (its bytes are those the snapshot keeps).
    fn on_capture(&mut self, _index: usize, _region: &Region) {}
    /// Called after each pass, before the restore that follows it. Reads a region only inside
    /// `hold` (a region freed since the capture is not read: the restore skips it).
    fn after_pass(&mut self, regions: &[Region], hold: RegionHold<'_>) -> PassCheck;
    /// The byte ranges of region `index` to write back.
    fn ranges(&self, index: usize, region: &Region) -> Vec<Range<usize>>;
    /// The restore ended; `complete` is false when a region failed, so the
    /// device is not known to hold the captured bytes where the scope did not look.
    fn restored(&mut self, _complete: bool) {}
}

/// Restores every byte of every region.
#[derive(Debug, Default, Clone, Copy)]
pub struct RestoreAll;

impl RestoreScope for RestoreAll {
    fn after_pass(&mut self, _: &[Region], _: RegionHold<'_>) -> PassCheck {
        PassCheck {
            unexpected_chunks: 0,
            full: true,
        }
    }
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
    /// Bytes of the snapshot kept in the agent's memory (the rest is in host memory).
    pub device_bytes: u64,
}

impl CaptureStats {
    /// Where the snapshot is kept, for records: `"device"` (every byte in the agent's memory),
    /// `"host"` (every byte in host memory, also an empty snapshot) or `"mixed"`.
    pub fn store_kind(&self) -> &'static str {
        match self.device_bytes {
            0 => "host",
            d if d >= self.bytes => "device",
            _ => "mixed",
        }
    }
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
    /// Chunks written outside the learned set (verify mode); nonzero means this restore was full.
    pub unexpected_chunks: u64,
    /// Every byte was written back (not only the changed chunks).
    pub full: bool,
    /// Start (monotonic ns).
    pub start_ns: u64,
    /// End (monotonic ns).
    pub end_ns: u64,
}

/// Attempts of each restore copy before the restore gives up.
pub const RESTORE_ATTEMPTS: u32 = 3;

/// A region whose restore copy failed [`RESTORE_ATTEMPTS`] times.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the copy back into {what} at {device:#x} ({size} bytes) failed {RESTORE_ATTEMPTS} times: {source}"
)]
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
        f.debug_struct("Snapshot")
            .field("regions", &self.regions.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Snapshot {
    /// Captures `regions` into `store`. Any failure returns the reason; nothing partial is kept.
    pub fn capture(
        regions: Vec<Region>,
        mut store: Box<dyn SnapshotStore>,
        scope: Box<dyn RestoreScope>,
        copier: &dyn DeviceCopy,
    ) -> Result<Self, CaptureError> {
        let start_ns = monotonic_ns();
        let mut scope = scope;
        store.reserve(&regions)?;
        for (i, r) in regions.iter().enumerate() {
            store.keep(i, r, copier, &mut || scope.on_capture(i, r))?;
        }
        let bytes = store.bytes_held();
        let stats = CaptureStats {
            regions: regions.len() as u64,
            bytes,
            start_ns,
            end_ns: monotonic_ns(),
            device_bytes: store.device_bytes(),
        };
        Ok(Self {
            regions,
            serials: Vec::new(),
            executables: None,
            store,
            scope,
            stats,
        })
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
    ) -> Result<Self, CaptureError> {
        let mut scope = scope;
        let start_ns = monotonic_ns();
        store.reserve(&regions)?;
        let mut kept: Vec<Region> = Vec::new();
        let mut serials: Vec<Option<u64>> = Vec::new();
        kept.try_reserve_exact(regions.len())
            .map_err(|_| CaptureError::Metadata {
                regions: regions.len(),
            })?;
        serials
            .try_reserve_exact(regions.len())
            .map_err(|_| CaptureError::Metadata {
                regions: regions.len(),
            })?;
        for r in regions {
            let index = kept.len();
            let serial = match &r.kind {
                RegionKind::Allocation { base } => {
                    match inventory.with_same(*base, r.device - base + r.size, None, || {
                        store.keep(index, &r, copier, &mut || scope.on_capture(index, &r))
                    }) {
                        Ok((kept_ok, serial)) => {
                            kept_ok?;
                            Some(serial)
                        }
                        Err(stale) => {
                            tracing::debug!(
                                "snapshot left out the allocation at {:#x} ({} bytes): {stale}",
                                r.device,
                                r.size
                            );
                            continue;
                        }
                    }
                }
                kind => {
                    if let Some(exe) = kind.executable()
                        && !executables.is_same(exe.handle, exe.serial)
                    {
                        tracing::debug!(
                            "snapshot left out {:#x} ({} bytes): its executable was destroyed",
                            r.device,
                            r.size
                        );
                        continue;
                    }
                    store.keep(index, &r, copier, &mut || scope.on_capture(index, &r))?;
                    None
                }
            };
            kept.push(r);
            serials.push(serial);
        }
        let bytes = store.bytes_held();
        let stats = CaptureStats {
            regions: kept.len() as u64,
            bytes,
            start_ns,
            end_ns: monotonic_ns(),
            device_bytes: store.device_bytes(),
        };
        Ok(Self {
            regions: kept,
            serials,
            executables: Some(executables.inventory()),
            store,
            scope,
            stats,
        })
    }

    /// The captured regions.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// Capture totals.
    pub fn stats(&self) -> CaptureStats {
        self.stats
    }

    /// Bytes of the snapshot held in device memory.
    pub fn device_bytes(&self) -> u64 {
        self.store.device_bytes()
    }

    /// Whether region `i` still exists as captured (its allocation or executable lives);
    /// a region that is gone is warned about.
    fn still_present(&self, i: usize, inventory: &AllocationInventory) -> bool {
        let r = &self.regions[i];
        match &r.kind {
            RegionKind::Allocation { base } => {
                let serial = self.serials.get(i).copied().flatten();
                let len = r.device - base + r.size;
                match inventory.with_same(*base, len, serial, || ()) {
                    Ok(_) => true,
                    Err(stale) => {
                        tracing::warn!(
                            "restore skipped the allocation at {:#x} ({} bytes): {stale}",
                            r.device,
                            r.size
                        );
                        false
                    }
                }
            }
            kind => match (kind.executable(), self.executables) {
                (Some(exe), Some(executables))
                    if executables
                        .with_same(exe.handle, exe.serial, || ())
                        .is_none() =>
                {
                    warn_destroyed(r, exe.handle);
                    false
                }
                _ => true,
            },
        }
    }

    /// Writes the captured bytes back. Allocations are re-validated under the inventory read
    /// lock and skipped with a warning when freed, shrunk or (for a snapshot taken with
    /// [`Snapshot::capture_tracked`]) replaced by a new allocation at the same address; regions
    /// of executables are written only while their executable lives (destruction held off
    /// during the copy), and skipped with a warning otherwise. A failed copy is retried (up to
    /// [`RESTORE_ATTEMPTS`] in all); when it still fails the restore stops there and reports it
    /// in [`RestoreReport::failure`]: the caller must not run another pass on that memory.
    ///
    /// The scope decides the bytes; after a failed restore the next one is complete again.
    pub fn restore(
        &mut self,
        inventory: &AllocationInventory,
        copier: &dyn DeviceCopy,
    ) -> RestoreReport {
        let mut rep = RestoreReport {
            start_ns: monotonic_ns(),
            ..Default::default()
        };
        let (regions, serials, executables) = (&self.regions, &self.serials, self.executables);
        let hold = |i: usize, f: &mut dyn FnMut()| -> bool {
            let r = &regions[i];
            match &r.kind {
                RegionKind::Allocation { base } => {
                    let serial = serials.get(i).copied().flatten();
                    inventory
                        .with_same(*base, r.device - base + r.size, serial, f)
                        .is_ok()
                }
                kind => match (kind.executable(), executables) {
                    (Some(exe), Some(executables)) => {
                        executables.with_same(exe.handle, exe.serial, f).is_some()
                    }
                    _ => always_held(i, f),
                },
            }
        };
        let check = self.scope.after_pass(&self.regions, &hold);
        rep.unexpected_chunks = check.unexpected_chunks;
        rep.full = check.full;
        for (i, r) in self.regions.iter().enumerate() {
            let ranges = self.scope.ranges(i, r);
            if ranges.is_empty() {
                // Nothing to write back, unless the region is gone (then it is skipped).
                if self.still_present(i, inventory) {
                    rep.regions += 1;
                } else {
                    rep.skipped += 1;
                }
                continue;
            }
            let written_before = rep.bytes;
            // A failed copy writes nothing, so only one that was a single copy leaves the
            // region as the last pass left it (a batch may have written some of its copies).
            let single_copy = ranges.len() == 1 && self.store.one_copy(i, &ranges[0]);
            let store = &self.store;
            let write = || put_back_retrying(store.as_ref(), i, r, &ranges, copier);
            let outcome = match &r.kind {
                RegionKind::Allocation { base } => {
                    let serial = self.serials.get(i).copied().flatten();
                    match inventory.with_same(*base, r.device - base + r.size, serial, write) {
                        Ok((o, _)) => o,
                        Err(stale) => {
                            tracing::warn!(
                                "restore skipped the allocation at {:#x} ({} bytes): {stale}",
                                r.device,
                                r.size
                            );
                            rep.skipped += 1;
                            continue;
                        }
                    }
                }
                kind => match (kind.executable(), self.executables) {
                    (Some(exe), Some(executables)) => {
                        match executables.with_same(exe.handle, exe.serial, write) {
                            Some(o) => o,
                            None => {
                                warn_destroyed(r, exe.handle);
                                rep.skipped += 1;
                                continue;
                            }
                        }
                    }
                    _ => write(),
                },
            };
            match outcome {
                Ok(n) => {
                    rep.regions += 1;
                    rep.bytes += n;
                }
                Err(source) => {
                    rep.failure = Some(RestoreFailure {
                        what: r.kind.described(),
                        device: r.device,
                        size: r.size,
                        source,
                        nothing_written: written_before == 0 && single_copy,
                    });
                    break;
                }
            }
        }
        self.scope.restored(rep.failure.is_none());
        rep.end_ns = monotonic_ns();
        rep
    }
}

#[cfg(test)]
mod tests;

/// Writes the captured bytes of `ranges` of region `i` back, retrying the whole batch up to
/// [`RESTORE_ATTEMPTS`] times (the bytes are the captured ones); the bytes written.
fn put_back_retrying(
    store: &dyn SnapshotStore,
    i: usize,
    r: &Region,
    ranges: &[Range<usize>],
    copier: &dyn DeviceCopy,
) -> Result<u64, CopyFailed> {
    let mut attempt = 1;
    loop {
        match store.put_back(i, r, ranges, copier) {
            Ok(()) => break,
            Err(e) if attempt >= RESTORE_ATTEMPTS => return Err(e),
            Err(e) => {
                tracing::debug!(
                    "restore copy of {} ranges of {:#x} failed ({e}); retrying",
                    ranges.len(),
                    r.device
                );
                attempt += 1;
            }
        }
    }
    Ok(ranges.iter().map(|x| x.len() as u64).sum())
}

impl RegionKind {
    /// The region as a restore failure names it (`the variable x`, `the allocation`).
    fn described(&self) -> String {
        match self {
            RegionKind::Allocation { .. } => "the allocation".to_owned(),
            RegionKind::ModuleVariable { name, .. } => format!("the variable {name}"),
            RegionKind::CodeObjectSegment { .. } => "the code-object segment".to_owned(),
            RegionKind::ClientRange => "the client-included range".to_owned(),
        }
    }
}

/// Warns (once, then at debug level) that a region of a destroyed executable is skipped.
fn warn_destroyed(r: &Region, executable: u64) {
    if DESTROYED_WARNING.first() {
        tracing::warn!(
            "restore skipped {:#x} ({} bytes): its executable {executable:#x} was destroyed since the snapshot \
             (later such skips are logged at debug level)",
            r.device,
            r.size
        );
    } else {
        tracing::debug!(
            "restore skipped {:#x} ({} bytes): its executable {executable:#x} was destroyed since the snapshot",
            r.device,
            r.size
        );
    }
}
