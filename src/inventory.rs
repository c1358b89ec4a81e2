//! The live things a snapshot may capture: device allocations ([`AllocationInventory`]) and
//! executables ([`ExecutableInventory`]), less the tool's own ([`OwnExecutables`]).
//!
//! Allocations are recorded by the four allocate/free interceptors; classification
//! ([`classify`]) keeps only coarse-grained, non-kernarg GPU memory that was not allocated with
//! the EXECUTABLE flag. Virtual-memory mappings are recorded by the `hsa_amd_vmem_map`/`unmap`
//! interceptors, for handles listed in [`VmemHandles`]. Each allocation also records the agents
//! that may access it (the runtime's answer at allocation time, then every
//! `hsa_amd_agents_allow_access` or `hsa_amd_vmem_set_access`), so a replay
//! on an agent captures the peer memory its kernels can write. Allocations made on a thread
//! that runs a replay client's callback are the client's own and are not recorded
//! ([`ClientCallbackScope`]).

use crate::sync::{AtomicU64, LazyLock, Mutex, Ordering, RwLock};
use hsa_abi::ffi;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};

/// Virtual-memory handles (`hsa_amd_vmem_handle_create`) whose memory the inventory tracks once
/// mapped: handle -> the GPU agent owning the handle's coarse-grained pool. Handles of other
/// pools are not listed, so their mappings are not tracked.
#[derive(Debug, Default)]
pub struct VmemHandles {
    agents: Mutex<HashMap<u64, u64>>,
}

impl VmemHandles {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lists `handle` as memory of `agent`.
    pub fn created(&self, handle: u64, agent: u64) {
        self.agents.lock().insert(handle, agent);
    }

    /// Forgets `handle` (released); its live mappings stay tracked until unmapped.
    pub fn released(&self, handle: u64) {
        self.agents.lock().remove(&handle);
    }

    /// The agent owning `handle`'s memory, when tracked.
    pub fn agent(&self, handle: u64) -> Option<u64> {
        self.agents.lock().get(&handle).copied()
    }

    /// Forgets every handle (the runtime instance shut down).
    pub fn clear(&self) {
        self.agents.lock().clear();
    }
}

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
    let Some(f) = facts else {
        return Classification::Unknown;
    };
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
    Classification::Tracked(Allocation {
        base,
        size: f.size,
        agent: f.agent,
    })
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
    live: RwLock<BTreeMap<usize, Record>>,
    next_serial: AtomicU64,
}

#[derive(Debug)]
struct Record {
    allocation: Allocation,
    serial: u64,
    /// Agents other than the owner that may access the allocation.
    peers: Vec<u64>,
}

impl AllocationInventory {
    /// An empty inventory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an allocation (replacing any stale entry at the same base).
    pub fn record(&self, a: Allocation) {
        self.record_with_access(a, &[]);
    }

    /// Records an allocation that the agents `access` (besides its owner) may access.
    pub fn record_with_access(&self, a: Allocation, access: &[u64]) {
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        let mut peers: Vec<u64> = access.iter().copied().filter(|&h| h != a.agent).collect();
        peers.sort_unstable();
        peers.dedup();
        self.live.write().insert(
            a.base,
            Record {
                allocation: a,
                serial,
                peers,
            },
        );
    }

    /// Records that `agents` were given access to the tracked allocation containing `ptr`
    /// (`hsa_amd_agents_allow_access`); false when no tracked allocation contains it.
    pub fn grant(&self, ptr: usize, agents: &[u64]) -> bool {
        let mut live = self.live.write();
        let Some((_, r)) = live.range_mut(..=ptr).next_back() else {
            return false;
        };
        if ptr - r.allocation.base >= r.allocation.size {
            return false;
        }
        for &h in agents {
            if h != r.allocation.agent && !r.peers.contains(&h) {
                r.peers.push(h);
            }
        }
        true
    }

    /// Records that `agents` were given access to every tracked allocation overlapping
    /// `base..base + size` (`hsa_amd_vmem_set_access` over one or more mappings); the number of
    /// allocations granted.
    pub fn grant_range(&self, base: usize, size: usize, agents: &[u64]) -> usize {
        let end = base.saturating_add(size);
        let mut live = self.live.write();
        let mut granted = 0;
        for (_, r) in live.range_mut(..end).rev() {
            if r.allocation.base.saturating_add(r.allocation.size) <= base {
                break;
            }
            for &h in agents {
                if h != r.allocation.agent && !r.peers.contains(&h) {
                    r.peers.push(h);
                }
            }
            granted += 1;
        }
        granted
    }

    /// Forgets the allocation at `base`; `None` (harmless) when it was not tracked.
    pub fn forget(&self, base: usize) -> Option<Allocation> {
        self.live.write().remove(&base).map(|r| r.allocation)
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
        self.live
            .read()
            .values()
            .map(|r| r.allocation)
            .filter(|a| a.agent == agent)
            .collect()
    }

    /// The allocations a kernel on `agent` can write, ordered by address: those it owns and
    /// those of other agents it was given access to.
    pub fn writable_by(&self, agent: u64) -> Vec<Allocation> {
        self.live
            .read()
            .values()
            .filter(|r| r.allocation.agent == agent || r.peers.contains(&agent))
            .map(|r| r.allocation)
            .collect()
    }

    /// The agents whose snapshots can hold the tracked allocation that contains `addr` (its
    /// owner and the agents given access to it), sorted and without repeats; empty when no
    /// tracked allocation contains `addr`.
    pub fn agents_containing(&self, addr: usize) -> Vec<u64> {
        let live = self.live.read();
        let Some(r) = live
            .values()
            .find(|r| addr >= r.allocation.base && addr - r.allocation.base < r.allocation.size)
        else {
            return Vec::new();
        };
        let mut agents = Vec::with_capacity(1 + r.peers.len());
        agents.push(r.allocation.agent);
        agents.extend_from_slice(&r.peers);
        agents.sort_unstable();
        agents.dedup();
        agents
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
    pub fn with_same<R>(
        &self,
        base: usize,
        size: usize,
        serial: Option<u64>,
        f: impl FnOnce() -> R,
    ) -> Result<(R, u64), StaleAllocation> {
        let live = self.live.read();
        match live.get(&base) {
            None => Err(StaleAllocation::Freed),
            Some(r) if r.allocation.size < size => Err(StaleAllocation::Shrunk {
                now: r.allocation.size,
            }),
            Some(r) if serial.is_some_and(|want| want != r.serial) => {
                Err(StaleAllocation::Replaced)
            }
            Some(r) => Ok((f(), r.serial)),
        }
    }
}

thread_local! {
    /// Depth of replay-client callbacks running on this thread.
    static IN_CLIENT_CALLBACK: Cell<u32> = const { Cell::new(0) };
}

/// Executables the tool loaded for its own kernel (the chunk hash, kept between windows): they
/// hold none of the application's memory or kernels, and the tool destroys them outside the
/// destruction barrier of [`ExecutableInventory`], so captures (whose restores write into the
/// executables they listed) and kernel-name scans skip them.
pub struct OwnExecutables(Mutex<Vec<u64>>);

/// The tool's own live executables.
pub static OWN_EXECUTABLES: OwnExecutables = OwnExecutables(Mutex::new(Vec::new()));

impl OwnExecutables {
    /// The tool loaded executable `handle`.
    pub fn loaded(&self, handle: u64) {
        self.0.lock().push(handle);
    }

    /// The tool destroyed (or forgot, with its runtime instance) executable `handle`.
    pub fn released(&self, handle: u64) {
        self.0.lock().retain(|&h| h != handle);
    }

    /// Whether executable `handle` is the tool's own.
    pub fn contains(&self, handle: u64) -> bool {
        self.0.lock().contains(&handle)
    }
}

/// The data address of each live image (`hsa_ext_image_create` and `_with_layout`), by image
/// handle: a host write into an image (`hsa_ext_image_import`, `_copy`, `_clear`) is fenced at
/// the allocation holding its data, as copies into that allocation are.
pub struct ImageData(LazyLock<Mutex<HashMap<u64, usize>>>);

/// The live images of the application.
pub static IMAGE_DATA: ImageData = ImageData(LazyLock::new(Default::default));

impl ImageData {
    /// Image `handle` holds its texels at `data`.
    pub fn created(&self, handle: u64, data: usize) {
        self.0.lock().insert(handle, data);
    }

    /// Image `handle` was destroyed.
    pub fn destroyed(&self, handle: u64) {
        self.0.lock().remove(&handle);
    }

    /// Where image `handle` holds its texels (`None` for an image created before the tool
    /// loaded or not by the application).
    pub fn data(&self, handle: u64) -> Option<usize> {
        self.0.lock().get(&handle).copied()
    }
}

/// Marks the current thread as running a replay client's callback for its lifetime: memory the
/// client allocates meanwhile is its own and is not recorded in the inventory.
pub struct ClientCallbackScope(());

impl ClientCallbackScope {
    /// Enters a callback (nests).
    pub fn enter() -> Self {
        IN_CLIENT_CALLBACK.with(|d| d.set(d.get() + 1));
        ClientCallbackScope(())
    }
}

impl Drop for ClientCallbackScope {
    fn drop(&mut self) {
        IN_CLIENT_CALLBACK.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// True while this thread runs a replay client's callback.
pub fn in_client_callback() -> bool {
    IN_CLIENT_CALLBACK.with(|d| d.get() > 0)
}

/// The executables the tool has seen, each with a serial number, so memory captured from one
/// executable is never written after it was destroyed, nor into another executable that got
/// the same handle. Synchronized.
///
/// Destruction is exclusive: [`ExecutableInventory::destroying`] holds the write side while the
/// runtime destroys an executable, so an executable listed under [`ExecutableInventory::hold`]
/// (or checked by [`ExecutableInventory::with_same`]) cannot be unloaded while its memory is read
/// or written.
#[derive(Debug, Default)]
pub struct ExecutableInventory {
    barrier: RwLock<()>,
    serials: Mutex<HashMap<u64, u64>>,
    next_serial: AtomicU64,
}

/// The read side of the executable barrier: no executable is destroyed while it is held.
pub struct ExecutablesHeld<'a> {
    inventory: &'a ExecutableInventory,
    _guard: crate::sync::RwLockReadGuard<'a, ()>,
}

impl ExecutableInventory {
    /// An empty inventory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every executable (the runtime instance that loaded them shut down).
    pub fn forget_all(&self) {
        self.serials.lock().clear();
    }

    /// Holds off destruction until the returned guard is dropped. Do not call
    /// [`ExecutableInventory::with_same`] or `hold` again while holding it.
    pub fn hold(&self) -> ExecutablesHeld<'_> {
        ExecutablesHeld {
            inventory: self,
            _guard: self.barrier.read(),
        }
    }

    /// Runs `destroy` (the runtime's `hsa_executable_destroy`) exclusively, after forgetting
    /// `handle`.
    pub fn destroying<R>(&self, handle: u64, destroy: impl FnOnce() -> R) -> R {
        let _exclusive = self.barrier.write();
        self.serials.lock().remove(&handle);
        destroy()
    }

    /// Runs `f` when `handle` is still the executable that had `serial`, with destruction held
    /// off for the duration; `None` when it was destroyed (or its handle reused) since.
    pub fn with_same<R>(&self, handle: u64, serial: u64, f: impl FnOnce() -> R) -> Option<R> {
        let held = self.hold();
        held.is_same(handle, serial).then(f)
    }

    /// Live executables known to the tool.
    pub fn len(&self) -> usize {
        self.serials.lock().len()
    }

    /// True when no executable is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> ExecutablesHeld<'a> {
    /// The inventory held.
    pub fn inventory(&self) -> &'a ExecutableInventory {
        self.inventory
    }

    /// The serial of a live executable the runtime just listed (a new one when it is new to
    /// the tool).
    pub fn observe(&self, handle: u64) -> u64 {
        let inv = self.inventory;
        *inv.serials
            .lock()
            .entry(handle)
            .or_insert_with(|| inv.next_serial.fetch_add(1, Ordering::Relaxed))
    }

    /// True when `handle` is still the executable that had `serial`.
    pub fn is_same(&self, handle: u64, serial: u64) -> bool {
        self.inventory.serials.lock().get(&handle) == Some(&serial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(flags: u32, gpu: bool) -> PointerFacts {
        PointerFacts {
            pointer_type: ffi::HSA_EXT_POINTER_TYPE_HSA,
            size: 64,
            agent: 7,
            agent_is_gpu: gpu,
            global_flags: flags,
        }
    }

    #[test]
    fn classification_keeps_only_coarse_device_memory() {
        let coarse = ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
        assert_eq!(
            classify(0x1000, Some(facts(coarse, true))),
            Classification::Tracked(Allocation {
                base: 0x1000,
                size: 64,
                agent: 7
            })
        );
        assert_eq!(
            classify(1, Some(facts(coarse | 1, true))),
            Classification::Kernarg
        );
        assert_eq!(classify(1, Some(facts(1, false))), Classification::Kernarg);
        assert_eq!(
            classify(1, Some(facts(2, true))),
            Classification::FineGrained
        );
        assert_eq!(
            classify(1, Some(facts(8 | coarse, true))),
            Classification::FineGrained
        );
        assert_eq!(
            classify(1, Some(facts(coarse, false))),
            Classification::Host
        );
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
        inv.record(Allocation {
            base: 0x2000,
            size: 32,
            agent: 1,
        });
        inv.record(Allocation {
            base: 0x1000,
            size: 16,
            agent: 1,
        });
        inv.record(Allocation {
            base: 0x9000,
            size: 16,
            agent: 2,
        });
        assert_eq!(
            inv.owned_by(1).iter().map(|a| a.base).collect::<Vec<_>>(),
            vec![0x1000, 0x2000]
        );
        assert_eq!(inv.owned_by(2).len(), 1);
        assert_eq!(inv.with_live(0x2000, 32, || 5), Some(5));
        assert_eq!(
            inv.with_live(0x2000, 33, || 5),
            None,
            "a region bigger than the live allocation is refused"
        );
        assert_eq!(inv.agents_containing(0x2000 + 31), vec![1]);
        assert!(inv.agents_containing(0x2000 + 32).is_empty());
        assert_eq!(inv.agents_containing(0x9000), vec![2]);
        assert!(inv.forget(0x2000).is_some());
        assert_eq!(inv.with_live(0x2000, 1, || 5), None);
        assert!(
            inv.forget(0xdead).is_none(),
            "freeing an unknown pointer is harmless"
        );
        assert_eq!(inv.len(), 2);
    }

    #[test]
    fn peer_memory_is_writable_by_the_agents_given_access() {
        let inv = AllocationInventory::new();
        inv.record_with_access(
            Allocation {
                base: 0x1000,
                size: 0x100,
                agent: 1,
            },
            &[1],
        );
        inv.record_with_access(
            Allocation {
                base: 0x8000,
                size: 0x100,
                agent: 2,
            },
            &[2, 3],
        );
        inv.record(Allocation {
            base: 0x9000,
            size: 0x100,
            agent: 2,
        });
        let bases = |agent| {
            inv.writable_by(agent)
                .iter()
                .map(|a| a.base)
                .collect::<Vec<_>>()
        };
        assert_eq!(bases(1), vec![0x1000]);
        assert_eq!(
            bases(3),
            vec![0x8000],
            "access reported by the runtime at allocation time"
        );
        assert!(
            inv.grant(0x9080, &[1]),
            "an interior pointer names its allocation"
        );
        assert_eq!(bases(1), vec![0x1000, 0x9000]);
        assert!(
            !inv.grant(0x9100, &[1]),
            "one past the end is not the allocation"
        );
        assert!(!inv.grant(0x10, &[1]));
        assert_eq!(inv.owned_by(2).len(), 2);
    }

    #[test]
    fn a_range_grant_reaches_every_overlapping_allocation() {
        let inv = AllocationInventory::new();
        inv.record(Allocation {
            base: 0x1000,
            size: 0x1000,
            agent: 1,
        });
        inv.record(Allocation {
            base: 0x2000,
            size: 0x1000,
            agent: 1,
        });
        inv.record(Allocation {
            base: 0x4000,
            size: 0x1000,
            agent: 1,
        });
        assert_eq!(inv.grant_range(0x1800, 0x1000, &[2, 1]), 2);
        let bases = |agent| {
            inv.writable_by(agent)
                .iter()
                .map(|a| a.base)
                .collect::<Vec<_>>()
        };
        assert_eq!(bases(2), vec![0x1000, 0x2000]);
        assert_eq!(
            inv.grant_range(0x3000, 0x1000, &[2]),
            0,
            "the gap between allocations"
        );
        assert_eq!(inv.grant_range(0x3000, 0x1001, &[3]), 1);
        assert_eq!(bases(3), vec![0x4000]);
    }

    #[test]
    fn allocations_in_client_callbacks_are_marked_per_thread() {
        assert!(!in_client_callback());
        {
            let _outer = ClientCallbackScope::enter();
            let _inner = ClientCallbackScope::enter();
            assert!(in_client_callback());
            assert!(
                !std::thread::spawn(in_client_callback).join().unwrap(),
                "other threads are not in the callback"
            );
        }
        assert!(!in_client_callback());
    }

    #[test]
    fn a_destroyed_executable_is_not_the_captured_one() {
        let exes = ExecutableInventory::new();
        let serial = exes.hold().observe(0xe1);
        assert_eq!(
            exes.hold().observe(0xe1),
            serial,
            "one serial while it lives"
        );
        assert_eq!(exes.with_same(0xe1, serial, || 7), Some(7));
        assert_eq!(exes.destroying(0xe1, || 5), 5);
        assert_eq!(exes.with_same(0xe1, serial, || 7), None);
        let again = exes.hold().observe(0xe1);
        assert_ne!(again, serial, "a reused handle is a new executable");
        assert_eq!(exes.with_same(0xe1, serial, || 7), None);
        assert_eq!(exes.len(), 1);
    }

    #[test]
    fn a_new_allocation_at_a_captured_address_is_not_the_captured_one() {
        let inv = AllocationInventory::new();
        inv.record(Allocation {
            base: 0x4000,
            size: 64,
            agent: 1,
        });
        let ((), serial) = inv.with_same(0x4000, 64, None, || ()).unwrap();
        assert_eq!(
            inv.with_same(0x4000, 64, Some(serial), || 1)
                .map(|(r, _)| r),
            Ok(1),
            "the same allocation"
        );
        inv.forget(0x4000);
        assert_eq!(
            inv.with_same(0x4000, 64, Some(serial), || 1),
            Err(StaleAllocation::Freed)
        );
        inv.record(Allocation {
            base: 0x4000,
            size: 64,
            agent: 1,
        });
        assert_eq!(
            inv.with_same(0x4000, 64, Some(serial), || 1),
            Err(StaleAllocation::Replaced)
        );
        assert_eq!(
            inv.with_same(0x4000, 128, None, || 1),
            Err(StaleAllocation::Shrunk { now: 64 })
        );
        assert!(
            inv.with_live(0x4000, 64, || 1).is_some(),
            "without a serial any live allocation of the size qualifies"
        );
    }
}
