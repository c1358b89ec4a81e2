//! The JSON-lines records of kreplay's built-in client (`kreplay-<pid>.jsonl`, described in
//! `docs/formats.md`): the tool library writes them ([`DispatchRecord::lines`]) and the
//! command line reads them back ([`parse`], [`Joiner`]). One `pass` line per pass, then one
//! `dispatch` line per dispatch; readers ignore unknown fields and kinds. A pass that collected
//! hardware counters carries its group and [`CounterValue`]s; the dispatch line says what
//! collection did ([`PmcStatus`]).
//!
//! Times are CLOCK_BOOTTIME nanoseconds, the clock rocprofiler-sdk uses (`"clock":"boottime"`
//! on every line). Records of older tools carry no `clock` and are CLOCK_MONOTONIC; the reader
//! moves them to CLOCK_BOOTTIME with the offset between the two clocks at reading time.

mod clock;
mod read;
mod write;

pub use clock::{BOOTTIME, boottime_minus_monotonic_ns, now_boottime_ns};
pub use read::{Collected, Dispatch, Joiner, Pass, parse};
pub use write::{DispatchRecord, PassRecord};

use serde::{Deserialize, Serialize};

/// Totals of the snapshot taken before the first pass.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotStats {
    /// Regions saved.
    pub regions: u64,
    /// Bytes saved.
    pub bytes: u64,
    /// Start (ns).
    pub start_ns: u64,
    /// End (ns).
    pub end_ns: u64,
    /// Where the snapshot was kept (`host`, `device`, `mixed`); empty when the record does not
    /// say.
    #[serde(default)]
    pub store: String,
}

/// Totals of the restores between passes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreStats {
    /// Restores done.
    pub count: u64,
    /// Regions restored, summed over restores.
    pub regions: u64,
    /// Bytes restored, summed over restores.
    pub bytes: u64,
    /// Regions left alone because the kernel did not write them.
    #[serde(default)]
    pub skipped_regions: u64,
    /// Time spent restoring.
    pub ns: u64,
}

/// The launch geometry of a dispatch and the thread that submitted it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    /// Kernel thread id of the submitting thread.
    #[serde(default)]
    pub tid: u64,
    /// Kernel object of the dispatch packet.
    #[serde(default)]
    pub kernel_object: u64,
    /// Grid size x, y, z (work-items).
    pub grid_size: [u64; 3],
    /// Work-group size x, y, z.
    pub workgroup_size: [u64; 3],
    /// Private segment bytes per work-item (the packet's scratch size).
    #[serde(default)]
    pub private_segment_size: u64,
    /// Group segment bytes per work-group (the packet's LDS size).
    #[serde(default)]
    pub group_segment_size: u64,
}

/// What the kernel's code object says about it (its kernel descriptor and symbol), when the
/// tool could read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSymbol {
    /// Kernel-argument segment bytes.
    pub kernarg_segment_size: u64,
    /// Kernel-argument segment alignment, when known (the kernel descriptor does not hold it).
    #[serde(default)]
    pub kernarg_segment_alignment: Option<u64>,
    /// Static group segment (LDS) bytes.
    pub group_segment_size: u64,
    /// Static private segment (scratch) bytes per work-item.
    pub private_segment_size: u64,
    /// Scalar registers.
    pub sgpr_count: u64,
    /// Architected vector registers.
    pub arch_vgpr_count: u64,
    /// Accumulation vector registers.
    pub accum_vgpr_count: u64,
}

/// What a replay window did with host and fine-grained memory the dispatch could reach.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostMemory {
    /// The policy in force (`KREPLAY_HOST_MEMORY`: `snapshot`, `decline`, `ignore`).
    #[serde(default)]
    pub policy: String,
    /// Host or fine-grained allocations the dispatch could reach.
    #[serde(default)]
    pub reachable: u64,
    /// Bytes captured before the first pass.
    #[serde(default)]
    pub saved_bytes: u64,
    /// Bytes written back over the window's restores.
    #[serde(default)]
    pub restored_bytes: u64,
    /// Allocations the kernel wrote that were not restored between passes.
    #[serde(default)]
    pub unrestored: Vec<String>,
    /// Allocations written during the window by another writer (loop stopped, writes kept).
    #[serde(default)]
    pub other_writers: Vec<String>,
    /// Verify mode: allocations different after the last pass from after the first.
    #[serde(default)]
    pub verify_mismatches: Vec<String>,
}

/// One counter's value in one pass: instances summed, with the instances kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterValue {
    /// Counter or derived-metric name (`SQ_WAVES`).
    pub name: String,
    /// The value, instances summed (a derived metric's value).
    pub value: f64,
    /// One value per block instance (shader engine, compute unit), in instance order; empty
    /// for derived metrics.
    #[serde(default)]
    pub instances: Vec<f64>,
    /// `exact` or `model`.
    #[serde(default)]
    pub exactness: String,
    /// A derived metric rather than a hardware counter.
    #[serde(default)]
    pub derived: bool,
    /// A derived metric whose inputs came from different passes (asked for explicitly).
    #[serde(default)]
    pub cross_pass: bool,
}

/// What counter collection did for one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmcStatus {
    /// Counter groups configured (G); pass p collects group p mod G.
    pub groups: u64,
    /// Groups collected in at least one pass, ascending.
    #[serde(default)]
    pub collected: Vec<u64>,
    /// Groups not collected (the dispatch ran fewer passes than groups: declined or stopped).
    #[serde(default)]
    pub missing: Vec<u64>,
    /// Why collection failed for this dispatch, if it did.
    #[serde(default)]
    pub error: Option<String>,
}
