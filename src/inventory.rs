//! `AllocationInventory`: the live device allocations a snapshot may capture.
//!
//! Populated by the four allocate/free interceptors; classification ([`classify`]) keeps only
//! coarse-grained, non-kernarg GPU memory that was not allocated with the EXECUTABLE flag.

use crate::sync::{AtomicU64, Ordering, RwLock};
use hsa_abi::ffi;
use std::collections::HashMap;

/// One tracked allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Device address of the first byte.
    pub base: usize,
    /// Size in bytes.
    pub size: usize,
    /// Handle of the owning agent.
    pub agent: u64,
}

/// What `hsa_amd_pointer_info` said about an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerFacts {
    /// `HSA_EXT_POINTER_TYPE_*`.
    pub pointer_type: u32,
    /// `sizeInBytes`.
    pub size: usize,
    /// `agentOwner.handle`.
    pub agent: u64,
    /// True when the owning agent is a GPU.
    pub agent_is_gpu: bool,
    /// `global_flags` of the pool (`HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*`).
    pub global_flags: u32,
}

/// The decision for one allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classification {
    /// Coarse-grained device memory: tracked.
    Tracked(Allocation),
    /// Allocated with the EXECUTABLE flag (runtime kernarg pools, trace buffers).
    Executable,
    /// Kernel-argument memory.
    Kernarg,
    /// Fine-grained (or extended-scope fine-grained) memory.
    FineGrained,
    /// Host memory or memory owned by a CPU agent.
    Host,
    /// `hsa_amd_pointer_info` failed or did not know the pointer.
    Unknown,
}

/// Pool allocation flag EXECUTABLE (newer than the installed headers).
pub const EXECUTABLE_FLAG: u32 = hsa_abi::modern::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG;

/// True when an allocation with these pool-allocate flags must not even be queried.
#[inline]
pub fn excluded_by_alloc_flags(flags: u32) -> bool {
    flags & EXECUTABLE_FLAG != 0
}

/// Classifies an allocation of `base` from its pointer facts.
pub fn classify(base: usize, facts: Option<PointerFacts>) -> Classification {
    let Some(f) = facts else { return Classification::Unknown };
    if f.pointer_type != ffi::HSA_EXT_POINTER_TYPE_HSA || f.size == 0 {
        return if f.pointer_type == ffi::HSA_EXT_POINTER_TYPE_LOCKED {
            Classification::Host
        } else {
            Classification::Unknown
        };
    }
    let g = f.global_flags;
    if g & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0 {
        return Classification::Kernarg;
    }
    if g & (ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
        | hsa_abi::modern::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED)
        != 0
    {
        return Classification::FineGrained;
    }
    if !f.agent_is_gpu {
        return Classification::Host;
    }
    if g & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED == 0 {
        return Classification::Unknown;
    }
    Classification::Tracked(Allocation { base, size: f.size, agent: f.agent })
}

/// Why a captured allocation may no longer be written: it is not the allocation captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StaleAllocation {
    /// Nothing is tracked at the base address any more.
    #[error("it was freed or shrunk since the snapshot")]
    Freed,
    /// The allocation at the base address is smaller than the captured region.
    #[error("it was freed or shrunk since the snapshot (now {now} bytes)")]
    Shrunk {
        /// Size of the live allocation.
        now: usize,
    },
    /// The captured allocation was freed and a new one was made at the same address.
    #[error("it was freed and replaced by a new allocation since the snapshot")]
    Replaced,
}

/// The live tracked allocations, keyed by base address. Synchronized: every method may be
/// called from any thread.
///
/// Each record gets a serial number, so a region captured from one allocation is never written
/// to a later allocation that happens to get the same address.
#[derive(Debug, Default)]
pub struct AllocationInventory {
    live: RwLock<HashMap<usize, (Allocation, u64)>>,
    next_serial: AtomicU64,
}

impl AllocationInventory {
    /// An empty inventory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an allocation (replacing any stale entry at the same base).
    pub fn record(&self, a: Allocation) {
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        self.live.write().insert(a.base, (a, serial));
    }

    /// Forgets the allocation at `base`; `None` (harmless) when it was not tracked.
    pub fn forget(&self, base: usize) -> Option<Allocation> {
        self.live.write().remove(&base).map(|(a, _)| a)
    }

    /// Forgets every allocation (the runtime instance that owned them shut down).
    pub fn clear(&self) {
        self.live.write().clear();
    }

    /// Number of tracked allocations.
    pub fn len(&self) -> usize {
        self.live.read().len()
    }

    /// True when nothing is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The allocations owned by `agent`, ordered by address.
    pub fn owned_by(&self, agent: u64) -> Vec<Allocation> {
        let mut v: Vec<Allocation> = self.live.read().values().map(|(a, _)| *a).filter(|a| a.agent == agent).collect();
        v.sort_by_key(|a| a.base);
        v
    }

    /// Runs `f` under the read lock when `base` is still a live allocation of at least `size`
    /// bytes, so a concurrent free cannot slip between the check and `f`. Returns `None` when
    /// the allocation was freed or shrunk.
    pub fn with_live<R>(&self, base: usize, size: usize, f: impl FnOnce() -> R) -> Option<R> {
        self.with_same(base, size, None, f).ok().map(|(r, _)| r)
    }

    /// Like [`AllocationInventory::with_live`], and when `serial` is given, only when the live
    /// allocation is the one that had that serial (not a new allocation at the same address).
    /// Returns `f`'s result and the allocation's serial.
    pub fn with_same<R>(&self, base: usize, size: usize, serial: Option<u64>, f: impl FnOnce() -> R) -> Result<(R, u64), StaleAllocation> {
        let live = self.live.read();
        match live.get(&base) {
            None => Err(StaleAllocation::Freed),
            Some((a, _)) if a.size < size => Err(StaleAllocation::Shrunk { now: a.size }),
            Some((_, s)) if serial.is_some_and(|want| want != *s) => Err(StaleAllocation::Replaced),
            Some((_, s)) => Ok((f(), *s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(flags: u32, gpu: bool) -> PointerFacts {
        PointerFacts { pointer_type: ffi::HSA_EXT_POINTER_TYPE_HSA, size: 64, agent: 7, agent_is_gpu: gpu, global_flags: flags }
    }

    #[test]
    fn classification_keeps_only_coarse_device_memory() {
        let coarse = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
        assert_eq!(
            classify(0x1000, Some(facts(coarse, true))),
            Classification::Tracked(Allocation { base: 0x1000, size: 64, agent: 7 })
        );
        assert_eq!(classify(1, Some(facts(coarse | 1, true))), Classification::Kernarg);
        assert_eq!(classify(1, Some(facts(1, false))), Classification::Kernarg);
        assert_eq!(classify(1, Some(facts(2, true))), Classification::FineGrained);
        assert_eq!(classify(1, Some(facts(8 | coarse, true))), Classification::FineGrained);
        assert_eq!(classify(1, Some(facts(coarse, false))), Classification::Host);
        assert_eq!(classify(1, None), Classification::Unknown);
        let mut locked = facts(coarse, true);
        locked.pointer_type = ffi::HSA_EXT_POINTER_TYPE_LOCKED;
        assert_eq!(classify(1, Some(locked)), Classification::Host);
        assert!(excluded_by_alloc_flags(EXECUTABLE_FLAG));
        assert!(!excluded_by_alloc_flags(0));
    }

    #[test]
    fn inventory_is_agent_scoped_and_revalidates() {
        let inv = AllocationInventory::new();
        inv.record(Allocation { base: 0x2000, size: 32, agent: 1 });
        inv.record(Allocation { base: 0x1000, size: 16, agent: 1 });
        inv.record(Allocation { base: 0x9000, size: 16, agent: 2 });
        assert_eq!(inv.owned_by(1).iter().map(|a| a.base).collect::<Vec<_>>(), vec![0x1000, 0x2000]);
        assert_eq!(inv.owned_by(2).len(), 1);
        assert_eq!(inv.with_live(0x2000, 32, || 5), Some(5));
        assert_eq!(inv.with_live(0x2000, 33, || 5), None, "a region bigger than the live allocation is refused");
        assert!(inv.forget(0x2000).is_some());
        assert_eq!(inv.with_live(0x2000, 1, || 5), None);
        assert!(inv.forget(0xdead).is_none(), "freeing an unknown pointer is harmless");
        assert_eq!(inv.len(), 2);
    }

    #[test]
    fn a_new_allocation_at_a_captured_address_is_not_the_captured_one() {
        let inv = AllocationInventory::new();
        inv.record(Allocation { base: 0x4000, size: 64, agent: 1 });
        let ((), serial) = inv.with_same(0x4000, 64, None, || ()).unwrap();
        assert_eq!(inv.with_same(0x4000, 64, Some(serial), || 1).map(|(r, _)| r), Ok(1), "the same allocation");
        inv.forget(0x4000);
        assert_eq!(inv.with_same(0x4000, 64, Some(serial), || 1), Err(StaleAllocation::Freed));
        inv.record(Allocation { base: 0x4000, size: 64, agent: 1 });
        assert_eq!(inv.with_same(0x4000, 64, Some(serial), || 1), Err(StaleAllocation::Replaced));
        assert_eq!(inv.with_same(0x4000, 128, None, || 1), Err(StaleAllocation::Shrunk { now: 64 }));
        assert!(inv.with_live(0x4000, 64, || 1).is_some(), "without a serial any live allocation of the size qualifies");
    }
}
