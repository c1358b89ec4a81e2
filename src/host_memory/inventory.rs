//! The application's host and fine-grained allocations, by the address kernels use.

use crate::sync::{AtomicBool, AtomicU64, Ordering, RwLock};
use hsa_abi::ffi;
use std::collections::BTreeMap;

/// What kind of memory an allocation is (see `docs/limitations.md` for each kind's handling).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Fine-grained memory owned by a GPU agent.
    FineGrainedDevice,
    /// Fine-grained system memory (HIP's `hipHostMalloc` default and coherent/mapped memory).
    FineGrainedSystem,
    /// Coarse-grained system memory (HIP's non-coherent `hipHostMalloc`).
    CoarseSystem,
    /// Application memory locked with `hsa_amd_memory_lock` or `_to_pool` (HIP's
    /// `hipHostRegister`).
    Locked,
    /// Another process's memory imported with `hsa_amd_ipc_memory_attach` (HIP's
    /// `hipIpcOpenMemHandle`).
    IpcImported,
    /// A buffer of another API mapped with `hsa_amd_interop_map_buffer`.
    Interop,
}

impl MemoryKind {
    /// The name records and messages use.
    pub fn name(self) -> &'static str {
        match self {
            MemoryKind::FineGrainedDevice => "fine-grained device",
            MemoryKind::FineGrainedSystem => "fine-grained system",
            MemoryKind::CoarseSystem => "coarse-grained system",
            MemoryKind::Locked => "locked host",
            MemoryKind::IpcImported => "IPC-imported",
            MemoryKind::Interop => "interop",
        }
    }

    /// True for memory another process or API may write at any time: no drain or fence of
    /// this process orders its writes with the window, so a restore could undo them.
    pub fn written_elsewhere(self) -> bool {
        matches!(self, MemoryKind::IpcImported | MemoryKind::Interop)
    }

    /// The kind of an allocation from what `hsa_amd_pointer_info` said; `None` for memory the
    /// device snapshot covers (coarse-grained GPU memory) or never needs (kernel arguments).
    pub fn of(pointer_type: u32, global_flags: u32, owner_is_gpu: bool) -> Option<MemoryKind> {
        match pointer_type {
            ffi::HSA_EXT_POINTER_TYPE_LOCKED => return Some(MemoryKind::Locked),
            ffi::HSA_EXT_POINTER_TYPE_IPC => return Some(MemoryKind::IpcImported),
            ffi::HSA_EXT_POINTER_TYPE_GRAPHICS => return Some(MemoryKind::Interop),
            _ => {}
        }
        if pointer_type != ffi::HSA_EXT_POINTER_TYPE_HSA
            || global_flags & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0
        {
            return None;
        }
        let fine = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
            | hsa_abi::modern::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED;
        match (global_flags & fine != 0, owner_is_gpu) {
            (true, true) => Some(MemoryKind::FineGrainedDevice),
            (true, false) => Some(MemoryKind::FineGrainedSystem),
            (false, false) => Some(MemoryKind::CoarseSystem),
            (false, true) => None,
        }
    }
}

/// One host or fine-grained allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAllocation {
    /// The address kernels use for the first byte.
    pub base: usize,
    /// The address the host uses for the first byte; 0 when the host cannot access it.
    pub host: usize,
    /// Size in bytes.
    pub size: usize,
    /// Its kind.
    pub kind: MemoryKind,
    /// Handle of the owning agent.
    pub owner: u64,
    /// Serial number: a later allocation at the same address has another.
    pub serial: u64,
}

impl HostAllocation {
    /// True when `addr` (a kernel's address) lies inside.
    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr - self.base < self.size
    }
}

/// The live host and fine-grained allocations, keyed by the address kernels use.
/// Synchronized: every method may be called from any thread.
#[derive(Debug, Default)]
pub struct HostInventory {
    live: RwLock<BTreeMap<usize, HostAllocation>>,
    next_serial: AtomicU64,
    /// Whether some locked allocation was recorded at a kernel address other than its host one.
    remapped_locks: AtomicBool,
}

impl HostInventory {
    /// An empty inventory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an allocation (replacing a stale entry at the same address); returns it.
    pub fn record(
        &self,
        base: usize,
        host: usize,
        size: usize,
        kind: MemoryKind,
        owner: u64,
    ) -> HostAllocation {
        let a = HostAllocation {
            base,
            host,
            size,
            kind,
            owner,
            serial: self.next_serial.fetch_add(1, Ordering::Relaxed),
        };
        if kind == MemoryKind::Locked && host != base {
            self.remapped_locks.store(true, Ordering::Relaxed);
        }
        self.live.write().insert(base, a);
        a
    }

    /// Forgets the allocation at `ptr` (its kernel or its host address).
    pub fn forget(&self, ptr: usize) -> Option<HostAllocation> {
        let mut live = self.live.write();
        if let Some(a) = live.remove(&ptr) {
            return Some(a);
        }
        let key = live.values().find(|a| a.host == ptr).map(|a| a.base)?;
        live.remove(&key)
    }

    /// Forgets everything (the runtime instance shut down).
    pub fn clear(&self) {
        self.live.write().clear();
    }

    /// The allocation holding the kernel address `addr`.
    pub fn containing(&self, addr: usize) -> Option<HostAllocation> {
        self.live
            .read()
            .range(..=addr)
            .next_back()
            .map(|(_, a)| *a)
            .filter(|a| a.contains(addr))
    }

    /// The allocations holding the kernel addresses `addrs` (one per address that lies in one,
    /// repeats included), looked up under one read lock.
    pub fn containing_each(&self, addrs: &[usize]) -> Vec<HostAllocation> {
        let live = self.live.read();
        let (Some((&first, _)), Some((_, last))) = (live.first_key_value(), live.last_key_value())
        else {
            return Vec::new();
        };
        let end = last.base + last.size;
        addrs
            .iter()
            .filter(|&&a| a >= first && a < end)
            .filter_map(|&a| {
                live.range(..=a)
                    .next_back()
                    .map(|(_, x)| *x)
                    .filter(|x| x.contains(a))
            })
            .collect()
    }

    /// Every live allocation, by address.
    pub fn all(&self) -> Vec<HostAllocation> {
        self.live.read().values().copied().collect()
    }

    /// Number of live allocations.
    pub fn len(&self) -> usize {
        self.live.read().len()
    }

    /// True when none is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets `a` if it is still the live allocation at its address (same serial); true when
    /// it was.
    pub fn forget_same(&self, a: &HostAllocation) -> bool {
        let mut live = self.live.write();
        let same = live.get(&a.base).is_some_and(|l| l.serial == a.serial);
        if same {
            live.remove(&a.base);
        }
        same
    }

    /// Forgets the locked allocations whose kernel or host range overlaps `base..base + size`,
    /// and returns them: the runtime just handed out that range, so their pages were unmapped
    /// (the application freed memory it had not unlocked, which HIP's lazily released pins of
    /// pageable buffers allow) and the address now belongs to something else.
    pub fn forget_stale_locks(&self, base: usize, size: usize) -> Vec<HostAllocation> {
        let end = base.saturating_add(size.max(1));
        let overlaps = |start: usize, len: usize| start < end && base < start.saturating_add(len);
        // Found under the read side (most allocations overlap nothing, and a replay window may
        // be copying under it); forgotten under the write side if still the same.
        let stale: Vec<HostAllocation> = {
            let live = self.live.read();
            // By kernel address: the entries below `end`, highest first, while they reach into
            // the range (live allocations do not overlap).
            let mut stale: Vec<HostAllocation> = live
                .range(..end)
                .rev()
                .take_while(|(_, a)| overlaps(a.base, a.size))
                .map(|(_, a)| *a)
                .filter(|a| a.kind == MemoryKind::Locked)
                .collect();
            // By host address: only locks whose host address differs from their kernel one.
            if self.remapped_locks.load(Ordering::Relaxed) {
                stale.extend(live.values().copied().filter(|a| {
                    a.kind == MemoryKind::Locked
                        && a.host != a.base
                        && overlaps(a.host, a.size)
                        && !overlaps(a.base, a.size)
                }));
            }
            stale
        };
        stale.into_iter().filter(|a| self.forget_same(a)).collect()
    }

    /// Runs `f` while `a` is still live (same serial), holding off its free; `None` when it was
    /// freed (or replaced) since.
    pub fn with_same<R>(&self, a: &HostAllocation, f: impl FnOnce() -> R) -> Option<R> {
        let live = self.live.read();
        let same = live
            .get(&a.base)
            .is_some_and(|l| l.serial == a.serial && l.size == a.size);
        same.then(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_pointer_facts() {
        let fine = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
        let coarse = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
        let hsa = ffi::HSA_EXT_POINTER_TYPE_HSA;
        assert_eq!(
            MemoryKind::of(hsa, fine, false),
            Some(MemoryKind::FineGrainedSystem)
        );
        assert_eq!(
            MemoryKind::of(hsa, fine, true),
            Some(MemoryKind::FineGrainedDevice)
        );
        assert_eq!(
            MemoryKind::of(hsa, coarse, false),
            Some(MemoryKind::CoarseSystem)
        );
        assert_eq!(MemoryKind::of(hsa, coarse, true), None, "device snapshot");
        assert_eq!(
            MemoryKind::of(
                hsa,
                fine | ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
                false
            ),
            None,
            "kernel arguments"
        );
        assert_eq!(
            MemoryKind::of(ffi::HSA_EXT_POINTER_TYPE_LOCKED, 0, false),
            Some(MemoryKind::Locked)
        );
        assert_eq!(
            MemoryKind::of(ffi::HSA_EXT_POINTER_TYPE_UNKNOWN, 0, false),
            None
        );
        let coarse = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
        let ipc = MemoryKind::of(ffi::HSA_EXT_POINTER_TYPE_IPC, coarse, true);
        assert_eq!(ipc, Some(MemoryKind::IpcImported));
        let interop = MemoryKind::of(ffi::HSA_EXT_POINTER_TYPE_GRAPHICS, coarse, true);
        assert_eq!(interop, Some(MemoryKind::Interop));
        assert!(ipc.unwrap().written_elsewhere() && interop.unwrap().written_elsewhere());
        assert!(!MemoryKind::Locked.written_elsewhere());
    }

    #[test]
    fn a_new_allocation_over_a_locked_range_forgets_the_stale_lock() {
        let inv = HostInventory::new();
        // Locked memory seen by kernels at its host address, and one seen at another address.
        let stale = inv.record(0x10_000, 0x10_000, 0x4000, MemoryKind::Locked, 0);
        let elsewhere = inv.record(0x90_000, 0x20_000, 0x1000, MemoryKind::Locked, 0);
        let pool = inv.record(0x40_000, 0x40_000, 0x1000, MemoryKind::FineGrainedSystem, 1);
        // A range next to the locks takes none of them.
        assert!(inv.forget_stale_locks(0x14_000, 0x1000).is_empty());
        assert!(inv.forget_stale_locks(0x30_000, 0x20_000).is_empty());
        assert_eq!(inv.len(), 3);
        // New allocations inside the first lock's range and over the second's host range.
        assert_eq!(inv.forget_stale_locks(0x12_000, 0x100), vec![stale]);
        assert_eq!(inv.forget_stale_locks(0x1f_f00, 0x200), vec![elsewhere]);
        assert_eq!(inv.all(), vec![pool]);
        // Only locks: a runtime allocation at the same range is not stale.
        assert!(inv.forget_stale_locks(0x40_000, 0x1000).is_empty());
        assert!(inv.forget_same(&pool));
        assert!(!inv.forget_same(&pool));
    }

    #[test]
    fn lookups_find_the_allocation_holding_an_address_until_it_is_freed() {
        let inv = HostInventory::new();
        let a = inv.record(0x1000, 0x1000, 0x100, MemoryKind::FineGrainedSystem, 1);
        let b = inv.record(0x8000, 0x9000, 0x10, MemoryKind::Locked, 1);
        assert_eq!(inv.containing(0x10ff), Some(a));
        assert_eq!(inv.containing(0x1100), None, "one past the end");
        assert_eq!(inv.containing(0x8008), Some(b));
        assert_eq!(inv.with_same(&a, || 7), Some(7));
        assert_eq!(
            inv.forget(0x9000),
            Some(b),
            "locked memory forgotten by its host address"
        );
        assert_eq!(inv.forget(0x1000), Some(a));
        assert_eq!(inv.with_same(&a, || 7), None);
        let again = inv.record(0x1000, 0x1000, 0x100, MemoryKind::FineGrainedSystem, 1);
        assert_ne!(again.serial, a.serial);
        assert_eq!(
            inv.with_same(&a, || 7),
            None,
            "a new allocation at the same address"
        );
        assert!(!inv.is_empty());
    }
}
