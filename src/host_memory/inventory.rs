//! The application's host and fine-grained allocations, by the address kernels use.

use crate::sync::{AtomicBool, AtomicU64, Ordering, RwLock};
use hsa_abi::ffi;
use std::collections::BTreeMap;
use std::ops::Range;

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

/// True when `a`'s kernel range, or its host range where that lies elsewhere, overlaps `r`.
fn overlaps(a: &HostAllocation, r: &Range<usize>) -> bool {
    let reaches = |start: usize| start < r.end && r.start < start.saturating_add(a.size.max(1));
    reaches(a.base) || (a.host != a.base && reaches(a.host))
}

/// A lock that another lock covers entirely, kept out of the live map.
///
/// Lookups take the entry with the nearest lower base, so a lock lying inside another, with
/// bytes of the other after its end, would hide those bytes: an address there finds the inner
/// lock, which does not contain it, and a kernel argument pointing into valid locked memory is
/// taken for one pointing nowhere (the memory is neither captured nor declined, and the replay
/// is silently wrong). HIP 5.2 leaves such pairs: it never unlocks a pageable buffer, and a
/// larger buffer the host later places over a freed one is locked in turn. The covering lock
/// holds every byte of the inner one, so the inner one leaves the live map; it is kept here so
/// that its own unlock is still recognized, so that it comes back should the covering lock go
/// first, and so that an address inside it answers to it when it is the newer of the two (see
/// [`Entries::holding`]).
#[derive(Clone, Copy, Debug)]
struct AbsorbedLock {
    /// The kernel address of the lock that covers it (live, or absorbed in turn).
    outer: usize,
    /// The lock, serial included: it is the same lock when it comes back.
    lock: HostAllocation,
}

/// What the inventory's lock guards: the live allocations and the absorbed locks, under one
/// lock so that no lookup sees a lock between the two maps and no second lock order exists.
#[derive(Debug, Default)]
struct Entries {
    /// The live allocations by kernel address. Locks here never contain one another.
    live: BTreeMap<usize, HostAllocation>,
    /// The absorbed locks by kernel address. No base is both here and in `live`.
    absorbed: BTreeMap<usize, AbsorbedLock>,
}

impl Entries {
    /// The allocation holding the kernel address `addr`. The live entry holding it is one step
    /// of the map: live locks never contain one another (see [`AbsorbedLock`]), so the entry
    /// with the nearest lower base is the one that can hold `addr`. When that entry is a lock,
    /// the newest of it and of the locks it absorbed that hold `addr` answers: the host can only
    /// have placed a newer buffer there after freeing the older one (or pinned a part of a live
    /// buffer again), so the pointer a kernel was given belongs to the newer lock, and on a GPU
    /// that maps each lock at an address of its own it reaches only that lock's bytes. The
    /// older lock's other bytes may be the host's heap again, which no replay must restore.
    fn holding(&self, addr: usize) -> Option<HostAllocation> {
        let live = self
            .live
            .range(..=addr)
            .next_back()
            .map(|(_, a)| *a)
            .filter(|a| a.contains(addr))?;
        if live.kind != MemoryKind::Locked || self.absorbed.is_empty() {
            return Some(live);
        }
        // Absorbed locks lie inside their outer lock, so those holding `addr` start between the
        // live lock's base and `addr`.
        let newest = self
            .absorbed
            .range(live.base..=addr)
            .map(|(_, r)| r.lock)
            .filter(|l| l.contains(addr))
            .fold(live, |n, l| if l.serial > n.serial { l } else { n });
        Some(newest)
    }

    /// Enters a lock into the live map, or absorbs it into a live lock that covers it; the live
    /// locks it covers are absorbed into it. Live locks then never contain one another, so
    /// whenever a lock holds an address, the one with the nearest lower base does, and a lookup
    /// stays one step of the map.
    fn insert_lock(&mut self, lock: HostAllocation) {
        let base = lock.base;
        let end = base.saturating_add(lock.size.max(1));
        // Where a live lock ends (`None` for other allocations, which absorb nothing).
        let lock_end = |b: usize, a: &HostAllocation| {
            (a.kind == MemoryKind::Locked).then(|| b.saturating_add(a.size.max(1)))
        };
        // Only the nearest lower entry can cover it: an earlier lock covering it would cover
        // that entry too (or overlap it only in part, and then that entry covers it as well),
        // and the live map holds no lock inside another.
        let covering = self
            .live
            .range(..base)
            .next_back()
            .filter(|(b, a)| lock_end(**b, a).is_some_and(|e| e >= end))
            .map(|(b, _)| *b);
        if let Some(outer) = covering {
            self.absorbed.insert(base, AbsorbedLock { outer, lock });
            return;
        }
        let covered: Vec<usize> = self
            .live
            .range(base.saturating_add(1)..end)
            .filter(|(b, a)| lock_end(**b, a).is_some_and(|e| e <= end))
            .map(|(b, _)| *b)
            .collect();
        for b in covered {
            let inner = self.live.remove(&b).expect("listed above");
            self.absorbed.insert(
                b,
                AbsorbedLock {
                    outer: base,
                    lock: inner,
                },
            );
        }
        self.live.insert(base, lock);
    }

    /// Removes the entry at the kernel address `base` (live, or an absorbed lock) if `same`
    /// holds for it, and returns it; the locks it absorbed come back
    /// ([`Entries::restore_absorbed`], with `unmapped` and `forgotten`).
    fn remove(
        &mut self,
        base: usize,
        same: impl Fn(&HostAllocation) -> bool,
        unmapped: Option<&Range<usize>>,
        forgotten: &mut Vec<HostAllocation>,
    ) -> Option<HostAllocation> {
        let a = match self.live.get(&base) {
            Some(a) if same(a) => self.live.remove(&base)?,
            Some(_) => return None,
            None => match self.absorbed.get(&base) {
                Some(r) if same(&r.lock) => self.absorbed.remove(&base)?.lock,
                _ => return None,
            },
        };
        self.restore_absorbed(a.base, a.size, unmapped, forgotten);
        Some(a)
    }

    /// Enters again the locks absorbed by the lock that was at `outer` (`size` bytes), now gone:
    /// their bytes are theirs to answer for again. Those overlapping `unmapped` (the range of a
    /// new allocation, whose pages were unmapped before) are forgotten instead and pushed to
    /// `forgotten`, and the locks they absorbed in turn are treated the same way.
    fn restore_absorbed(
        &mut self,
        outer: usize,
        size: usize,
        unmapped: Option<&Range<usize>>,
        forgotten: &mut Vec<HostAllocation>,
    ) {
        if self.absorbed.is_empty() {
            return;
        }
        let mut gone = vec![(outer, size)];
        while let Some((outer, size)) = gone.pop() {
            // An absorbed lock lies inside its outer one, so its base is in the outer's range.
            let inner: Vec<usize> = self
                .absorbed
                .range(outer..outer.saturating_add(size.max(1)))
                .filter(|(_, r)| r.outer == outer)
                .map(|(b, _)| *b)
                .collect();
            for b in inner {
                let lock = self.absorbed.remove(&b).expect("listed above").lock;
                if unmapped.is_some_and(|u| overlaps(&lock, u)) {
                    forgotten.push(lock);
                    gone.push((b, lock.size));
                } else {
                    self.insert_lock(lock);
                }
            }
        }
    }
}

/// The live host and fine-grained allocations, keyed by the address kernels use.
/// Synchronized: every method may be called from any thread.
///
/// A lock lying inside another lock is absorbed by it (see [`AbsorbedLock`]): it is not live
/// ([`HostInventory::all`] sees the outer lock; lookups find it only where it is the newer
/// lock), but forgetting it succeeds, and it is live again once the outer lock is forgotten.
#[derive(Debug, Default)]
pub struct HostInventory {
    entries: RwLock<Entries>,
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
    ///
    /// A lock replaces the lock at its address: the locks the old one absorbed come back first,
    /// since the new range may be smaller, and the new lock absorbs or is absorbed as
    /// [`AbsorbedLock`] says. Any other allocation there means the runtime handed the range out
    /// again, so the locks an old lock there absorbed come back only outside the new range.
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
        let mut entries = self.entries.write();
        let mut forgotten = Vec::new();
        if kind == MemoryKind::Locked {
            entries.remove(base, |_| true, None, &mut forgotten);
            entries.insert_lock(a);
        } else {
            let range = base..base.saturating_add(size.max(1));
            entries.remove(base, |_| true, Some(&range), &mut forgotten);
            entries.live.insert(base, a);
        }
        a
    }

    /// Forgets the allocation at `ptr` (its kernel or its host address). An absorbed lock is
    /// forgotten as any other (its outer lock stays live); the locks a forgotten lock absorbed
    /// are live again.
    pub fn forget(&self, ptr: usize) -> Option<HostAllocation> {
        let mut entries = self.entries.write();
        let mut forgotten = Vec::new();
        if let Some(a) = entries.remove(ptr, |_| true, None, &mut forgotten) {
            return Some(a);
        }
        let key = entries
            .live
            .values()
            .find(|a| a.host == ptr)
            .or_else(|| {
                entries
                    .absorbed
                    .values()
                    .map(|r| &r.lock)
                    .find(|a| a.host == ptr)
            })
            .map(|a| a.base)?;
        entries.remove(key, |_| true, None, &mut forgotten)
    }

    /// Forgets everything (the runtime instance shut down).
    pub fn clear(&self) {
        let mut entries = self.entries.write();
        entries.live.clear();
        entries.absorbed.clear();
    }

    /// The allocation holding the kernel address `addr`: the live entry holding it, or, when
    /// that is a lock, the newest of it and the locks it absorbed that hold `addr` (see
    /// [`Entries::holding`]).
    pub fn containing(&self, addr: usize) -> Option<HostAllocation> {
        self.entries.read().holding(addr)
    }

    /// The allocations holding the kernel addresses `addrs` (one per address that lies in one,
    /// repeats included, each as [`HostInventory::containing`] finds it), looked up under one
    /// read lock.
    pub fn containing_each(&self, addrs: &[usize]) -> Vec<HostAllocation> {
        let entries = self.entries.read();
        let live = &entries.live;
        let (Some((&first, _)), Some((_, last))) = (live.first_key_value(), live.last_key_value())
        else {
            return Vec::new();
        };
        // The last entry ends last, since no live entry contains another.
        let end = last.base + last.size;
        addrs
            .iter()
            .filter(|&&a| a >= first && a < end)
            .filter_map(|&a| entries.holding(a))
            .collect()
    }

    /// Every live allocation, by address (absorbed locks are not: their outer locks hold their
    /// bytes).
    pub fn all(&self) -> Vec<HostAllocation> {
        self.entries.read().live.values().copied().collect()
    }

    /// Number of live allocations.
    pub fn len(&self) -> usize {
        self.entries.read().live.len()
    }

    /// True when none is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets `a` if it is still the live allocation at its address (same serial); true when
    /// it was. An absorbed lock is not live, so it is not forgotten here; the locks `a` absorbed
    /// are live again.
    pub fn forget_same(&self, a: &HostAllocation) -> bool {
        let mut entries = self.entries.write();
        let same = entries
            .live
            .get(&a.base)
            .is_some_and(|l| l.serial == a.serial);
        if same {
            entries.remove(a.base, |_| true, None, &mut Vec::new());
        }
        same
    }

    /// Forgets the locked allocations whose kernel or host range overlaps `base..base + size`,
    /// and returns them: the runtime just handed out that range, so their pages were unmapped
    /// (the application freed memory it had not unlocked, which HIP's lazily released pins of
    /// pageable buffers allow) and the address now belongs to something else. The locks a
    /// forgotten lock absorbed are forgotten (and returned) too where they overlap the range,
    /// and live again elsewhere: their pages outside it are still locked.
    pub fn forget_stale_locks(&self, base: usize, size: usize) -> Vec<HostAllocation> {
        let range = base..base.saturating_add(size.max(1));
        let end = range.end;
        // Found under the read side (most allocations overlap nothing, and a replay window may
        // be copying under it); forgotten under the write side if still the same.
        let stale: Vec<HostAllocation> = {
            let entries = self.entries.read();
            // By kernel address: the entries below `end`, highest first, while they reach into
            // the range (live allocations do not overlap). Absorbed locks lie inside live ones,
            // so they go with them.
            let mut stale: Vec<HostAllocation> = entries
                .live
                .range(..end)
                .rev()
                .take_while(|(_, a)| a.base.saturating_add(a.size) > base)
                .map(|(_, a)| *a)
                .filter(|a| a.kind == MemoryKind::Locked)
                .collect();
            // By host address: only locks whose host address differs from their kernel one; an
            // absorbed lock's host range may overlap where its outer lock's does not.
            if self.remapped_locks.load(Ordering::Relaxed) {
                let by_host = |a: &HostAllocation| {
                    a.kind == MemoryKind::Locked
                        && a.host != a.base
                        && overlaps(a, &range)
                        && !(a.base < end && base < a.base.saturating_add(a.size))
                };
                stale.extend(entries.live.values().copied().filter(|a| by_host(a)));
                stale.extend(
                    entries
                        .absorbed
                        .values()
                        .map(|r| r.lock)
                        .filter(|a| by_host(a)),
                );
            }
            stale
        };
        if stale.is_empty() {
            return stale;
        }
        let mut entries = self.entries.write();
        let mut forgotten = Vec::new();
        for a in stale {
            // Still the same (a lock met earlier in the list may have forgotten it already);
            // listed before the absorbed locks it takes along.
            let at = forgotten.len();
            let same = |l: &HostAllocation| l.serial == a.serial;
            if let Some(a) = entries.remove(a.base, same, Some(&range), &mut forgotten) {
                forgotten.insert(at, a);
            }
        }
        forgotten
    }

    /// Runs `f` while `a` is still recorded (same serial), live or absorbed by a lock around it,
    /// holding off its free; `None` when it was freed (or replaced) since.
    pub fn with_same<R>(&self, a: &HostAllocation, f: impl FnOnce() -> R) -> Option<R> {
        let entries = self.entries.read();
        let same = |l: &HostAllocation| l.serial == a.serial && l.size == a.size;
        let recorded = entries.live.get(&a.base).is_some_and(same)
            || entries.absorbed.get(&a.base).is_some_and(|r| same(&r.lock));
        recorded.then(f)
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

    /// Records a lock seen by kernels at its host address.
    fn lock(inv: &HostInventory, base: usize, size: usize) -> HostAllocation {
        inv.record(base, base, size, MemoryKind::Locked, 0)
    }

    /// HIP 5.2 never unlocks a pageable buffer: a larger buffer placed over a freed one and
    /// locked in turn covers the old lock. Its bytes past the old lock's end are found in it, in
    /// whichever order the two were locked; the bytes of both answer to the newer lock.
    #[test]
    fn a_lock_around_another_holds_the_bytes_past_the_inner_end() {
        for outer_first in [false, true] {
            let inv = HostInventory::new();
            let (outer, inner) = if outer_first {
                let outer = lock(&inv, 0x10_000, 0x4000);
                (outer, lock(&inv, 0x11_000, 0x1000))
            } else {
                let inner = lock(&inv, 0x11_000, 0x1000);
                (lock(&inv, 0x10_000, 0x4000), inner)
            };
            // Past the inner lock's end first: there, the inner lock hid the outer one's bytes.
            for p in [0x12_008, 0x13_fff, 0x10_008] {
                assert_eq!(
                    inv.containing(p),
                    Some(outer),
                    "{p:#x}, outer first: {outer_first}"
                );
            }
            let newer = if outer_first { inner } else { outer };
            for p in [0x11_000, 0x11_fff] {
                assert_eq!(
                    inv.containing(p),
                    Some(newer),
                    "{p:#x}, outer first: {outer_first}"
                );
            }
            assert_eq!(
                inv.containing_each(&[0x12_008, 0x11_008, 0x13_fff, 0x14_000]),
                vec![outer, newer, outer],
                "outer first: {outer_first}"
            );
            // Only the outer lock is live; the inner one is still recorded, so a capture of it
            // reads it.
            assert_eq!(inv.all(), vec![outer]);
            assert_eq!(inv.with_same(&outer, || 7), Some(7));
            assert_eq!(inv.with_same(&inner, || 7), Some(7));
            assert!(
                !inv.forget_same(&inner),
                "not live, so not forgotten as live"
            );
            assert_eq!(inv.forget(0x11_000), Some(inner));
            assert_eq!(inv.with_same(&inner, || 7), None, "unlocked");
            assert_eq!(inv.containing(0x11_008), Some(outer));
        }
    }

    /// The absorbed lock is forgotten once, as before it was absorbed, and leaves the outer lock.
    #[test]
    fn forgetting_an_absorbed_lock_leaves_the_outer_lock() {
        let inv = HostInventory::new();
        let inner = lock(&inv, 0x11_000, 0x1000);
        let outer = lock(&inv, 0x10_000, 0x4000);
        assert_eq!(inv.forget(0x11_000), Some(inner));
        assert_eq!(inv.forget(0x11_000), None, "a second unlock finds nothing");
        for p in [0x11_008, 0x12_008] {
            assert_eq!(inv.containing(p), Some(outer), "{p:#x}");
        }
        assert_eq!(inv.forget(0x10_000), Some(outer));
        assert_eq!(inv.containing(0x11_008), None);
        assert!(inv.is_empty());
        // Locked again at the inner base, larger but still inside: absorbed again, not added.
        let outer = lock(&inv, 0x10_000, 0x4000);
        lock(&inv, 0x11_000, 0x10);
        let inner = lock(&inv, 0x11_000, 0x1000);
        assert_eq!(inv.containing(0x12_008), Some(outer));
        assert_eq!(inv.forget(0x11_000), Some(inner));
        assert_eq!(inv.forget(0x11_000), None);
        assert_eq!(inv.all(), vec![outer]);
    }

    /// When the outer lock goes first, the locks it absorbed hold their bytes again, and a lock
    /// nested in one of them is absorbed by it in turn.
    #[test]
    fn forgetting_the_outer_lock_first_restores_the_absorbed_ones() {
        let inv = HostInventory::new();
        let first = lock(&inv, 0x11_000, 0x1000);
        let nested = lock(&inv, 0x12_040, 0x40);
        let second = lock(&inv, 0x12_000, 0x1000);
        // Seen by kernels elsewhere than by the host: forgotten by either address.
        let remapped = inv.record(0x13_800, 0x90_000, 0x100, MemoryKind::Locked, 0);
        let outer = lock(&inv, 0x10_000, 0x4000);
        assert_eq!(inv.all(), vec![outer]);
        assert_eq!(inv.forget(0x10_000), Some(outer));
        assert_eq!(inv.containing(0x10_008), None);
        assert_eq!(inv.containing(0x11_008), Some(first));
        for p in [0x12_008, 0x12_040, 0x12_0c8, 0x12_fff] {
            assert_eq!(inv.containing(p), Some(second), "{p:#x}");
        }
        assert_eq!(inv.containing(0x13_808), Some(remapped));
        assert_eq!(inv.all(), vec![first, second, remapped]);
        // The same locks, serials included.
        assert_eq!(inv.with_same(&first, || 7), Some(7));
        assert_eq!(inv.forget(0x90_000), Some(remapped));
        // The outer lock may also go by `forget_same` (its pages were found gone).
        let outer = lock(&inv, 0x10_000, 0x4000);
        assert!(inv.forget_same(&outer));
        assert_eq!(inv.all(), vec![first, second]);
        assert_eq!(inv.forget(0x12_000), Some(second));
        assert_eq!(inv.containing(0x12_048), Some(nested));
        assert_eq!(inv.containing(0x12_088), None);
        // Locked again at its base with a smaller range: the locks past the new end come back.
        let outer = lock(&inv, 0x10_000, 0x4000);
        let small = lock(&inv, 0x10_000, 0x2000);
        assert_ne!(small, outer);
        assert_eq!(inv.all(), vec![small, nested]);
        assert_eq!(inv.containing(0x12_808), None);
        assert_eq!(inv.containing(0x11_008), Some(small));
        assert_eq!(inv.forget(0x11_000), Some(first));
        assert_eq!(inv.containing(0x11_008), Some(small));
    }

    /// A new allocation over a stale outer lock forgets the absorbed locks it overlaps; those
    /// outside it are still locked, and come back.
    #[test]
    fn a_new_allocation_over_an_outer_lock_keeps_the_absorbed_locks_outside_it() {
        let inv = HostInventory::new();
        let kept = lock(&inv, 0x11_000, 0x1000);
        let overlapped = lock(&inv, 0x12_800, 0x1000);
        let inside = lock(&inv, 0x12_900, 0x10);
        let alone = lock(&inv, 0x15_000, 0x1000);
        let outer = lock(&inv, 0x10_000, 0x4000);
        // Seen by kernels inside the outer lock, but by the host inside the new allocation.
        let remapped = inv.record(0x11_800, 0x17_000, 0x100, MemoryKind::Locked, 0);
        assert_eq!(inv.all(), vec![outer, alone]);
        // The host hands 0x12_000..0x18_000 to a new allocation: every lock there is stale.
        let mut stale = inv.forget_stale_locks(0x12_000, 0x6000);
        stale.sort_by_key(|a| a.serial);
        assert_eq!(stale, vec![overlapped, inside, alone, outer, remapped]);
        assert_eq!(inv.all(), vec![kept]);
        assert_eq!(inv.containing(0x11_808), Some(kept));
        assert_eq!(inv.forget(0x11_000), Some(kept));
        assert!(inv.is_empty());
        // A runtime allocation recorded at a lock's address replaces it the same way.
        let kept = lock(&inv, 0x11_000, 0x1000);
        let other = lock(&inv, 0x12_800, 0x100);
        lock(&inv, 0x10_000, 0x4000);
        let pool = inv.record(0x10_000, 0x10_000, 0x100, MemoryKind::FineGrainedSystem, 1);
        assert_eq!(inv.all(), vec![pool, kept, other]);
        inv.clear();
        assert!(inv.is_empty() && inv.forget(0x11_000).is_none());
    }
}
