//! Memory a kernel can write outside the device snapshot: host memory it was given (fine- and
//! coarse-grained system pools, memory locked with `hsa_amd_memory_lock`) and fine-grained
//! device memory.
//!
//! - [`inventory`]: every such allocation the tool sees, with its [`MemoryKind`].
//! - [`reach`]: which of them a dispatch can reach (pointers in its kernel arguments, and
//!   pointers stored in host memory it reaches).
//! - [`policy`]: what a replay does with reachable host memory (`KREPLAY_HOST_MEMORY`).
//! - [`access`]: copies to and from those allocations that fail instead of faulting where the
//!   application can unmap the memory behind the tool's back (locked memory).
//! - [`capture`]: the host-memory snapshot, its restore between passes, and the check after
//!   every pass that finds writes made by someone other than the kernel during the window.
//!
//! This module sits beside `snapshot` and below `replay`: it never calls into the replay window.

pub mod access;
pub mod capture;
pub mod inventory;
pub mod policy;
pub mod reach;

pub use inventory::{HostAllocation, HostInventory, MemoryKind};

use crate::sync::LazyLock;

/// The live host and fine-grained allocations of the application.
pub static HOST_ALLOCATIONS: LazyLock<HostInventory> = LazyLock::new(HostInventory::new);

/// What one replay window did with host memory (records and the client's summary).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostMemoryReport {
    /// The policy in force (`KREPLAY_HOST_MEMORY`).
    pub policy: String,
    /// Host or fine-grained allocations the dispatch could reach.
    pub reachable: u32,
    /// Bytes captured before the first pass.
    pub saved_bytes: u64,
    /// Bytes written back over the window's restores.
    pub restored_bytes: u64,
    /// Allocations the kernel wrote that were not restored between passes (each pass wrote
    /// them again): `"<kind> memory at <address> (<size> bytes)"`.
    pub unrestored: Vec<String>,
    /// Allocations written during the window by someone other than the kernel (the loop
    /// stopped; their writes were kept).
    pub other_writers: Vec<String>,
    /// Verify mode: allocations whose bytes after the last pass differ from those after the
    /// first.
    pub verify_mismatches: Vec<String>,
}

impl HostAllocation {
    /// `"<kind> memory at <address> (<size> bytes)"`.
    pub fn describe(&self) -> String {
        format!(
            "{} memory at {:#x} ({} bytes)",
            self.kind.name(),
            self.base,
            self.size
        )
    }
}
