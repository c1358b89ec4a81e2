//! Memory: allocations in host memory (mmap), the allocation map behind `hsa_amd_pointer_info`,
//! synchronous copies, and the copy-engine thread for `hsa_amd_memory_async_copy`.
//!
//! Every allocation, whichever way it was made, is recorded with its owner agent and global
//! flags, so pointer information is exact for base and interior pointers. Host<->device copies
//! may be throttled by a link model (`VHSA_LINK_GBPS`, gigabytes per second).
//!
//! For the loader: [`allocate_device`] / [`free_device`] allocate an agent's device memory
//! without going through the API table (no fault injection); such memory answers
//! `hsa_amd_pointer_info` like pool memory.

use crate::aperture::Aperture;
use crate::error::{Error, Result};
use crate::stats::{Direction, count_copy};
use crate::topology::{GRANULE, PoolKind};
use hsa_abi::modern::{HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG, HSA_AMD_MEMORY_POOL_UNCACHED_FLAG};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How an allocation was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Pool or region allocation (also the loader's device memory): mapped by us.
    Mapped,
    /// `hsa_amd_memory_lock`: the application's memory, pinned.
    Locked,
    /// A handle mapped with `hsa_amd_vmem_map` (module `vmem`): unmapped there, not freed.
    Virtual,
    /// Another allocation's memory, imported with `hsa_amd_ipc_memory_attach` (module
    /// `shared_memory`): detached, not freed.
    Imported,
    /// An interop buffer mapped with `hsa_amd_interop_map_buffer`: unmapped, not freed.
    Interop,
}

/// A recorded allocation.
#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub(crate) size: usize,
    pub(crate) owner: u64,
    pub(crate) global_flags: u32,
    pub(crate) device: bool,
    pub(crate) origin: Origin,
    pub(crate) user_data: usize,
    /// Agents allowed to access it (the owner first).
    pub(crate) accessible: Vec<u64>,
}

impl Allocation {
    /// The bytes a kernel reaches from its base: a mapping this runtime made, rounded up to the
    /// 4 KiB granule (see [`MemoryView`]); someone else's memory, exactly its size.
    fn reach(&self) -> usize {
        match self.origin {
            Origin::Mapped => round_up(self.size),
            _ => self.size,
        }
    }
}

static ALLOCATIONS: RwLock<BTreeMap<usize, Allocation>> = RwLock::new(BTreeMap::new());

/// Locks are keyed by their agent address in the allocation map (`vgpu::user_memory`: the host
/// address plus 2^47); everything else by its host address, which agents use too.
pub(crate) fn lock_agent_address(host: usize) -> usize {
    vgpu::user_memory::agent_address(host as u64) as usize
}

/// The host address of agent address `addr` inside a live allocation (see
/// [`vgpu::user_memory::host_address`]).
pub(crate) fn host_address(addr: usize) -> usize {
    vgpu::user_memory::host_address(addr as u64) as usize
}

/// The host address of agent address `addr` when a lock holds it; otherwise `addr` itself (a
/// copy given a bad address then faults as it would without locks, rather than reaching
/// whatever host memory lies below it; a lock's host address stays what it is).
pub(crate) fn host_address_if_locked(addr: usize) -> usize {
    match find(addr) {
        Some((base, a)) if a.origin == Origin::Locked && addr >= base => host_address(addr),
        _ => addr,
    }
}

/// The host address of the agent range `addr..addr + len` when it lies inside one allocation.
pub(crate) fn host_range(addr: usize, len: usize) -> Option<usize> {
    let (base, a) = find(addr)?;
    // Agents reach locked memory at its agent address only (`find` also answers its host
    // address, below the base).
    (base <= addr && addr.checked_add(len)? <= base + a.size).then(|| host_address(addr))
}

fn round_up(size: usize) -> usize {
    size.div_ceil(GRANULE) * GRANULE
}

fn map(size: usize, executable: bool) -> Result<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE | if executable { libc::PROT_EXEC } else { 0 };
    // SAFETY: not at a fixed address: no existing memory is touched.
    unsafe { map_anonymous(0, round_up(size), prot, 0) }
        .map_err(|e| Error::OutOfResources(format!("cannot map {size} bytes: {e}")))
}

/// A private anonymous mapping of `len` bytes whose pages cost memory only once touched, with
/// `prot` and the `extra` flags, at `at` (a hint, or the address with `MAP_FIXED`).
///
/// # Safety
/// With `MAP_FIXED`, `at..at + len` must be memory of this module's that nothing else uses.
unsafe fn map_anonymous(at: usize, len: usize, prot: i32, extra: i32) -> std::io::Result<*mut u8> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | extra;
    // SAFETY: the caller's promise for a fixed address; otherwise nothing existing is touched.
    let p = unsafe { libc::mmap(at as *mut libc::c_void, len, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p.cast())
}

/// Bytes of this runtime's large mappings that nobody has touched yet: promised to a caller
/// but not in the host's count of used memory.
fn untouched_large() -> u64 {
    let ranges: Vec<(usize, usize)> = ALLOCATIONS
        .read()
        .iter()
        .filter(|(_, a)| a.origin == Origin::Mapped && vgpu::host_memory::is_checked(a.size as u64))
        .map(|(&base, a)| (base, round_up(a.size)))
        .collect();
    vgpu::host_memory::untouched_bytes(ranges.into_iter())
}

/// Records an allocation (mapped here, or made elsewhere: locked host memory, imports).
///
/// A new mapping over locked memory proves that memory's pages were unmapped: the application
/// freed a buffer it never unlocked (HIP 5.2 locks pageable buffers for copies and does not
/// unlock them), and the host reused the range. The stale locks it overlaps are forgotten, so
/// lookups inside the range find the new allocation.
///
/// Locking a base again replaces its lock. A lock that covers older locks, or lies inside one,
/// is entered by [`insert_lock`], which keeps nested locks from hiding each other's bytes. A
/// lock's `base` is its host address; it is entered at its agent address
/// ([`lock_agent_address`]), which is returned (for other allocations, `base` itself).
pub(crate) fn record(
    base: *mut u8,
    size: usize,
    owner: u64,
    global_flags: u32,
    device: bool,
    origin: Origin,
) -> usize {
    let mut m = ALLOCATIONS.write();
    let mut absorbed = ABSORBED_LOCKS.lock();
    let allocation = Allocation {
        size,
        owner,
        global_flags,
        device,
        origin,
        user_data: 0,
        accessible: vec![owner],
    };
    if origin == Origin::Locked {
        let agent = lock_agent_address(base as usize);
        // The locks the old one covered come back first: the new range may be smaller.
        forget_lock(&mut m, &mut absorbed, agent);
        insert_lock(&mut m, &mut absorbed, agent, allocation);
        return agent;
    }
    let extent = if origin == Origin::Mapped {
        round_up(size)
    } else {
        size
    };
    forget_overlapped_locks(
        &mut m,
        &mut absorbed,
        lock_agent_address(base as usize),
        extent.max(1),
    );
    m.insert(base as usize, allocation);
    base as usize
}

/// A lock that a later lock covers entirely, kept out of the allocation map.
///
/// Lookups take the entry with the nearest lower base, so a lock lying inside another, with
/// bytes of the other after its end, would hide those bytes: an address there finds the inner
/// lock, which does not contain it, and a kernel touching valid locked memory faults. (HIP 5.2
/// leaves such pairs: it never unlocks a pageable buffer, and a larger buffer the host later
/// places over a freed one is locked in turn.) The covering lock answers for every byte of the
/// inner one, so the inner one leaves the map; it is kept here so that its own unlock still
/// succeeds, and so that it comes back should the covering lock go first.
struct AbsorbedLock {
    /// The base of the lock that covers it (in the allocation map, or absorbed in turn).
    outer: usize,
    lock: Allocation,
}

/// Absorbed locks by base. Changed only under the allocation map's write lock, taken first.
static ABSORBED_LOCKS: Mutex<BTreeMap<usize, AbsorbedLock>> = Mutex::new(BTreeMap::new());

/// Enters a lock into the allocation map, or absorbs it into a lock of the map that covers it;
/// the locks of the map it covers are absorbed into it. Locks in the map then never contain
/// one another, so whenever a lock holds an address, the one with the nearest lower base does
/// (the check of a lookup stays one step of the map).
fn insert_lock(
    m: &mut BTreeMap<usize, Allocation>,
    absorbed: &mut BTreeMap<usize, AbsorbedLock>,
    base: usize,
    lock: Allocation,
) {
    let end = base.saturating_add(lock.size.max(1));
    // Only the nearest lower entry can cover it: an earlier lock covering it would cover that
    // entry too, and the map holds no such pair.
    let covering = m
        .range(..base)
        .next_back()
        .filter(|(b, a)| a.origin == Origin::Locked && end <= **b + a.size.max(1))
        .map(|(b, _)| *b);
    if let Some(outer) = covering {
        tracing::debug!("lock at {base:#x} lies inside the lock at {outer:#x}; absorbed");
        absorbed.insert(base, AbsorbedLock { outer, lock });
        return;
    }
    let covered: Vec<usize> = m
        .range(base.saturating_add(1)..end)
        .filter(|(b, a)| a.origin == Origin::Locked && **b + a.size.max(1) <= end)
        .map(|(b, _)| *b)
        .collect();
    for b in covered {
        let inner = m.remove(&b).expect("listed above");
        tracing::debug!("lock at {b:#x} lies inside the new lock at {base:#x}; absorbed");
        absorbed.insert(
            b,
            AbsorbedLock {
                outer: base,
                lock: inner,
            },
        );
    }
    m.insert(base, lock);
}

/// Forgets the lock at `base`, in the map or absorbed, and returns it; the locks it absorbed
/// come back ([`restore_absorbed_locks`]). `None` when no lock has that base.
fn forget_lock(
    m: &mut BTreeMap<usize, Allocation>,
    absorbed: &mut BTreeMap<usize, AbsorbedLock>,
    base: usize,
) -> Option<Allocation> {
    let lock = match m.get(&base) {
        Some(a) if a.origin == Origin::Locked => m.remove(&base)?,
        Some(_) => return None,
        None => absorbed.remove(&base)?.lock,
    };
    restore_absorbed_locks(m, absorbed, base, lock.size, None);
    Some(lock)
}

/// Enters again the locks absorbed by the lock that was at `outer` (`size` bytes), now gone:
/// their bytes are theirs to answer for again. Those overlapping `unmapped` (the range of a new
/// allocation, whose pages were unmapped before) are forgotten instead, and the locks they
/// absorbed in turn are treated the same way.
fn restore_absorbed_locks(
    m: &mut BTreeMap<usize, Allocation>,
    absorbed: &mut BTreeMap<usize, AbsorbedLock>,
    outer: usize,
    size: usize,
    unmapped: Option<std::ops::Range<usize>>,
) {
    let mut gone = vec![(outer, size)];
    while let Some((outer, size)) = gone.pop() {
        // An absorbed lock lies inside its outer one, so its base is in the outer's range.
        let inner: Vec<usize> = absorbed
            .range(outer..outer.saturating_add(size.max(1)))
            .filter(|(_, r)| r.outer == outer)
            .map(|(b, _)| *b)
            .collect();
        for b in inner {
            let lock = absorbed.remove(&b).expect("listed above").lock;
            let end = b + lock.size.max(1);
            if unmapped
                .as_ref()
                .is_some_and(|u| b < u.end && u.start < end)
            {
                tracing::debug!(
                    "locked memory at {b:#x} ({} bytes) was unmapped without an unlock; forgotten",
                    lock.size
                );
                gone.push((b, lock.size));
            } else {
                insert_lock(m, absorbed, b, lock);
            }
        }
    }
}

/// Removes the locked entries of `m` that overlap `base..base + len` (agent addresses of
/// locked memory); of the locks they had absorbed, those outside the range come back.
fn forget_overlapped_locks(
    m: &mut BTreeMap<usize, Allocation>,
    absorbed: &mut BTreeMap<usize, AbsorbedLock>,
    base: usize,
    len: usize,
) {
    let end = base.saturating_add(len);
    // Entries below `end`, highest first, while they reach into the range (live allocations do
    // not overlap, so the walk stops at the first that ends before `base`).
    let stale: Vec<usize> = m
        .range(..end)
        .rev()
        .take_while(|(b, a)| **b + a.size.max(1) > base)
        .filter(|(_, a)| a.origin == Origin::Locked)
        .map(|(b, _)| *b)
        .collect();
    for b in stale {
        if let Some(a) = m.remove(&b) {
            tracing::debug!(
                "locked memory at {b:#x} ({} bytes) was unmapped without an unlock (a new allocation at {base:#x} reuses its range); forgotten",
                a.size
            );
            restore_absorbed_locks(m, absorbed, b, a.size, Some(base..end));
        }
    }
}

/// Bytes in use in each GPU's device pool, by owner agent.
static DEVICE_USED: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

fn release_device_bytes(owner: u64, size: usize) {
    if let Some(u) = DEVICE_USED.lock().get_mut(&owner) {
        *u = u.saturating_sub(round_up(size) as u64);
    }
}

/// Pool allocation flags: STANDARD 0, PCIE 1 << 0, CONTIGUOUS 1 << 1, then the newer ones.
const KNOWN_FLAGS: u32 =
    1 | 2 | HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG | HSA_AMD_MEMORY_POOL_UNCACHED_FLAG;

/// Allocates `size` bytes owned by pool `pool` (flags: `hsa_amd_memory_pool_allocate` flags).
pub(crate) fn allocate_in_pool(
    pool: &crate::topology::Pool,
    size: usize,
    flags: u32,
) -> Result<*mut u8> {
    if size == 0 {
        return Err(Error::InvalidArgument("size is 0"));
    }
    if pool.kind == PoolKind::Group {
        return Err(Error::InvalidAllocation(
            "the GROUP pool is not allocatable (RUNTIME_ALLOC_ALLOWED is false)",
        ));
    }
    if size as u64 > pool.size {
        return Err(Error::InvalidAllocation(
            "size exceeds the pool's maximum allocation size",
        ));
    }
    // Like the real runtime, flags this runtime does not know (newer ones) are ignored.
    if flags & !KNOWN_FLAGS != 0 {
        tracing::debug!(
            "hsa_amd_memory_pool_allocate: ignoring unknown flags {:#x}",
            flags & !KNOWN_FLAGS
        );
    }
    if vgpu::host_memory::is_checked(size as u64)
        && let Some(why) = vgpu::host_memory::refusal(size as u64, untouched_large())
    {
        return Err(Error::OutOfResources(why));
    }
    let device = pool.is_device_memory();
    if device {
        let mut used = DEVICE_USED.lock();
        let now = used.get(&pool.owner).copied().unwrap_or(0);
        if now + round_up(size) as u64 > pool.size {
            return Err(Error::OutOfResources(format!(
                "the device pool has {} of {} bytes in use; {size} more do not fit",
                now, pool.size
            )));
        }
        used.insert(pool.owner, now + round_up(size) as u64);
    }
    let p = match place(size, device, flags) {
        Ok(p) => p,
        Err(e) => {
            if device {
                release_device_bytes(pool.owner, size);
            }
            return Err(e);
        }
    };
    record(
        p,
        size,
        pool.owner,
        pool.global_flags(),
        device,
        Origin::Mapped,
    );
    Ok(p)
}

/// The device aperture (module `aperture`): reserved at the first device allocation, `None`
/// when the host refused the reservation (device allocations are then mappings of their own).
static APERTURE: OnceLock<Option<Aperture>> = OnceLock::new();

/// The aperture's size: address space only; its pages cost memory once touched.
const APERTURE_BYTES: usize = 1 << 40;

fn aperture() -> Option<&'static Aperture> {
    APERTURE.get_or_init(reserve_aperture).as_ref()
}

/// The aperture, if one was reserved already.
fn reserved_aperture() -> Option<&'static Aperture> {
    APERTURE.get()?.as_ref()
}

fn reserve_aperture() -> Option<Aperture> {
    let len = APERTURE_BYTES + crate::aperture::LARGE;
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: not at a fixed address; the mapping is kept for the life of the process.
    let p = match unsafe { map_anonymous(0, len, rw, 0) } {
        Ok(p) => p.cast::<libc::c_void>(),
        Err(e) => {
            tracing::warn!(
                "no device aperture ({e}): device allocations get mappings of their own, and a \
                 kernel running past the end of one faults"
            );
            return None;
        }
    };
    let base = (p as usize).next_multiple_of(crate::aperture::LARGE);
    // SAFETY: our own mapping; a core dump needs none of its untouched pages.
    unsafe { libc::madvise(p, len, libc::MADV_DONTDUMP) };
    Some(Aperture::new(base, APERTURE_BYTES))
}

/// Maps `size` bytes for an allocation: device memory in the aperture, executable memory,
/// host memory and what the aperture has no room for as mappings of their own.
fn place(size: usize, device: bool, flags: u32) -> Result<*mut u8> {
    let executable = flags & HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG != 0;
    if device
        && !executable
        && let Some(p) = aperture().and_then(|a| a.take(round_up(size)))
    {
        return Ok(p as *mut u8);
    }
    map(size, executable)
}

/// Gives back the `len` bytes at `base` of a freed allocation that no view can reach: in the
/// aperture they become fresh zero pages (no longer shared with an IPC importer either) and free
/// for the next allocation; a mapping of its own is unmapped.
fn release(base: usize, len: usize) {
    match reserved_aperture() {
        Some(a) if a.holds(base) => {
            // Renewed before it is free again: the next allocation may take it at once.
            renew(base, len);
            a.give_back(base, len);
        }
        // SAFETY: the mapping was created with this base and length and is no longer in the
        // allocation map; no view can reach it.
        _ => unsafe {
            libc::munmap(base as *mut libc::c_void, len);
        },
    }
}

/// Replaces `len` bytes at `base`, inside the aperture, with fresh private zero pages.
fn renew(base: usize, len: usize) {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: `base..base + len` is a freed allocation in the aperture that no view reaches;
    // only its pages are replaced.
    match unsafe { map_anonymous(base, len, rw, libc::MAP_FIXED) } {
        // SAFETY: the pages just mapped; marked as the rest of the aperture is, so the host
        // merges them back into one mapping with it.
        Ok(p) => unsafe {
            libc::madvise(p.cast(), len, libc::MADV_DONTDUMP);
        },
        Err(e) => tracing::warn!("freed device memory at {base:#x} keeps its bytes: {e}"),
    }
}

/// Allocates device memory of a GPU agent without the API table (for the loader's variable
/// storage). Reported by `hsa_amd_pointer_info` as coarse-grained memory of that agent.
pub(crate) fn allocate_device(agent: u64, size: usize) -> Result<*mut u8> {
    let a = crate::topology::agent(agent)?;
    let pool = a
        .pools
        .iter()
        .filter_map(|p| crate::topology::pool(*p))
        .find(|p| p.kind == PoolKind::Device)
        .ok_or(Error::InvalidAgent(agent))?;
    allocate_in_pool(pool, size.max(1), 0)
}

/// Frees memory from [`allocate_device`] (or any mapped allocation).
pub(crate) fn free_device(ptr: *mut u8) -> Result<()> {
    free(ptr)
}

/// Frees a mapped allocation by its base address (NULL is a no-op).
pub(crate) fn free(ptr: *mut u8) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let a = {
        let mut m = ALLOCATIONS.write();
        match m.get(&(ptr as usize)) {
            Some(a) if a.origin == Origin::Mapped => m.remove(&(ptr as usize)).unwrap(),
            // The real runtime's status for a pointer it did not allocate.
            _ => {
                return Err(Error::InvalidAllocation(
                    "pointer is not the base of a live allocation of this runtime (pass the pointer the allocation returned)",
                ));
            }
        }
    };
    if a.device {
        release_device_bytes(a.owner, a.size);
    }
    release_when_unused(ptr as usize, round_up(a.size));
    Ok(())
}

// ---- views for executors that reach memory through host pointers ------------------------------

/// Dispatches holding a [`MemoryView`], and the memory freed while any did.
struct InFlight {
    views: usize,
    deferred: Vec<(usize, usize)>,
}

static IN_FLIGHT: Mutex<InFlight> = Mutex::new(InFlight {
    views: 0,
    deferred: Vec::new(),
});

/// Releases the `len` bytes at `base` of an allocation that left the allocation map once no
/// view that may include them is alive: a kernel still running may read them, and on a GPU
/// freed memory keeps its bytes until it is allocated again.
fn release_when_unused(base: usize, len: usize) {
    {
        let mut f = IN_FLIGHT.lock();
        if f.views > 0 {
            f.deferred.push((base, len));
            return;
        }
    }
    release(base, len);
}

/// The allocations live when a dispatch started, as sorted (base, bytes) ranges, and those made
/// while it runs (a host thread allocating for the kernel, as HIP's device `malloc` does through
/// its host call), looked up in the allocation map when an address is in none of the first.
/// While the view lives, memory freed by the application stays mapped and keeps its bytes (its
/// release waits for the last view), so host pointers into the view's allocations never
/// dangle. Device memory is the whole device aperture (module `aperture`), any other allocation
/// this runtime mapped its whole mapping, rounded up to the 4 KiB granule, as a GPU's
/// page-granular allocations do: a kernel reading or writing past the end of a buffer (as some
/// of AMD's library kernels do) reaches the aperture's or the mapping's other bytes rather than
/// faulting. Locked, imported and interop memory is someone else's, and covers exactly its
/// bytes.
pub(crate) struct MemoryView {
    ranges: Vec<(u64, u64)>,
}

impl MemoryView {
    /// A view of every allocation this runtime made or locked.
    pub(crate) fn take() -> MemoryView {
        // Counted before the snapshot: a free after it defers its unmap.
        IN_FLIGHT.lock().views += 1;
        let aperture = reserved_aperture();
        let mut ranges: Vec<(u64, u64)> = ALLOCATIONS
            .read()
            .iter()
            .filter(|(b, _)| !aperture.is_some_and(|a| a.holds(**b)))
            .map(|(b, a)| (*b as u64, a.reach() as u64))
            .chain(
                aperture
                    .map(Aperture::range)
                    .map(|(b, len)| (b as u64, len as u64)),
            )
            .collect();
        ranges.sort_unstable();
        MemoryView { ranges }
    }

    /// Whether `addr..addr + len` (agent addresses) lies inside one allocation of the view.
    pub(crate) fn contains(&self, addr: u64, len: u64) -> bool {
        self.allocation_at(addr)
            .is_some_and(|(base, size)| addr.checked_add(len).is_some_and(|end| end <= base + size))
    }

    /// The allocation of the view holding agent address `addr`: (base, size).
    pub(crate) fn allocation_at(&self, addr: u64) -> Option<(u64, u64)> {
        self.at_start(addr).or_else(|| allocated_since(addr))
    }

    fn at_start(&self, addr: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        let &(base, size) = self.ranges.get(i.checked_sub(1)?)?;
        (addr - base < size).then_some((base, size))
    }
}

/// The live allocation holding agent address `addr`, for a view that did not list it: (base,
/// bytes reached). It stays mapped while that view lives, as every allocation freed then does.
fn allocated_since(addr: u64) -> Option<(u64, u64)> {
    let addr_here = usize::try_from(addr).ok()?;
    if let Some(a) = reserved_aperture().filter(|a| a.holds(addr_here)) {
        let (base, len) = a.range();
        return Some((base as u64, len as u64));
    }
    let m = ALLOCATIONS.read();
    let (base, a) = m.range(..=addr_here).next_back()?;
    let reach = a.reach() as u64;
    let base = *base as u64;
    (addr - base < reach).then_some((base, reach))
}

impl Drop for MemoryView {
    fn drop(&mut self) {
        let deferred = {
            let mut f = IN_FLIGHT.lock();
            f.views -= 1;
            if f.views > 0 {
                Vec::new()
            } else {
                std::mem::take(&mut f.deferred)
            }
        };
        for (base, len) in deferred {
            release(base, len);
        }
    }
}

/// The allocation containing `p`: (base, allocation). The base of locked memory is its agent
/// address; a host address inside locked memory finds the lock too.
pub(crate) fn find(p: usize) -> Option<(usize, Allocation)> {
    let m = ALLOCATIONS.read();
    let holder = |p: usize| {
        let (base, a) = m.range(..=p).next_back()?;
        (p < base + a.size.max(1)).then(|| (*base, a.clone()))
    };
    holder(p).or_else(|| {
        (!vgpu::user_memory::is_agent_address(p as u64))
            .then(|| holder(lock_agent_address(p)))
            .flatten()
            .filter(|(_, a)| a.origin == Origin::Locked)
    })
}

/// True when `p` lies in device memory.
fn is_device(p: usize) -> bool {
    let m = ALLOCATIONS.read();
    m.range(..=p)
        .next_back()
        .is_some_and(|(b, a)| p < b + a.size.max(1) && a.device)
}

// ---- link model ------------------------------------------------------------------------------

fn link_bytes_per_sec() -> Option<f64> {
    static LINK: OnceLock<Option<f64>> = OnceLock::new();
    *LINK.get_or_init(|| {
        let v = std::env::var("VHSA_LINK_GBPS").ok()?;
        match v.trim().parse::<f64>() {
            Ok(g) if g > 0.0 && g.is_finite() => Some(g * 1e9),
            _ => {
                eprintln!("vhsa: VHSA_LINK_GBPS=`{v}` is not a positive number of gigabytes per second; copies are not throttled");
                None
            }
        }
    })
}

/// When the modelled link has carried every byte handed to it so far.
static LINK_FREE: Mutex<Option<Instant>> = Mutex::new(None);

/// Waits shorter than this are not slept (the debt carries over to the next copy).
const LINK_SLACK: Duration = Duration::from_micros(200);

/// The link model: `bytes` that began to move at `began` occupy the link after everything
/// before them; the caller returns once the link has carried them. Throttling follows the
/// accumulated bytes, so many small copies are held to the same rate as one large copy.
fn throttle(bytes: usize, began: Instant, bytes_per_sec: f64) {
    let busy = Duration::from_secs_f64(bytes as f64 / bytes_per_sec);
    let done = {
        let mut free = LINK_FREE.lock();
        let start = free.map_or(began, |f| f.max(began));
        let done = start + busy;
        *free = Some(done);
        done
    };
    if let Some(left) = done.checked_duration_since(Instant::now())
        && left >= LINK_SLACK
    {
        std::thread::sleep(left);
    }
}

/// A contiguous piece of a copy: (destination, source, bytes).
pub(crate) type Segment = (usize, usize, usize);

/// Copies `segments` as one copy: counted once, throttled (host<->device) on their total.
pub(crate) fn copy_segments(segments: &[Segment]) {
    let Some(&(dst0, src0, _)) = segments.first() else {
        return;
    };
    let dir = Direction::of(is_device(src0), is_device(dst0));
    let began = Instant::now();
    let mut total = 0usize;
    for &(dst, src, size) in segments {
        let (dst, src) = (host_address_if_locked(dst), host_address_if_locked(src));
        // SAFETY: HSA requires both ranges be valid; locked memory's agent addresses were
        // turned into the host addresses of the same bytes.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
        total += size;
    }
    if matches!(dir, Direction::HostToDevice | Direction::DeviceToHost)
        && let Some(bps) = link_bytes_per_sec()
    {
        throttle(total, began, bps);
    }
    count_copy(dir, total as u64);
}

/// Copies with counting and (for host<->device) the link model.
pub(crate) fn copy_bytes(dst: *mut u8, src: *const u8, size: usize) {
    copy_segments(&[(dst as usize, src as usize, size)]);
}

/// The rows of a 3D box copy between pitched buffers: `range` is (bytes, rows, slices), the
/// offsets (byte, row, slice); each buffer is (base, row pitch, slice pitch).
pub(crate) fn rect_segments(
    dst: (usize, usize, usize),
    dst_offset: (usize, usize, usize),
    src: (usize, usize, usize),
    src_offset: (usize, usize, usize),
    range: (usize, usize, usize),
) -> Vec<Segment> {
    let mut out = Vec::with_capacity(range.1 * range.2);
    for z in 0..range.2 {
        for y in 0..range.1 {
            let d = dst.0 + (dst_offset.2 + z) * dst.2 + (dst_offset.1 + y) * dst.1 + dst_offset.0;
            let s = src.0 + (src_offset.2 + z) * src.2 + (src_offset.1 + y) * src.1 + src_offset.0;
            out.push((d, s, range.0));
        }
    }
    out
}

// ---- copy engine -----------------------------------------------------------------------------

/// An asynchronous copy: runs after every dependency signal reached 0, then decrements the
/// completion signal.
pub(crate) struct CopyJob {
    pub(crate) segments: Vec<Segment>,
    pub(crate) deps: Vec<u64>,
    pub(crate) completion: u64,
}

struct CopyEngine {
    jobs: VecDeque<CopyJob>,
    running: bool,
    stop: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

static ENGINE: Mutex<CopyEngine> = Mutex::new(CopyEngine {
    jobs: VecDeque::new(),
    running: false,
    stop: false,
    thread: None,
});
static ENGINE_CV: Condvar = Condvar::new();
/// `hsa_amd_profiling_async_copy_enable`: copies record start and end times in their signal.
pub(crate) static COPY_PROFILING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

fn engine_loop() {
    loop {
        let job = {
            let mut e = ENGINE.lock();
            loop {
                if e.stop {
                    return;
                }
                if let Some(j) = e.jobs.pop_front() {
                    break j;
                }
                ENGINE_CV.wait(&mut e);
            }
        };
        for d in &job.deps {
            if let Some(s) = crate::signal::lookup(*d) {
                s.wait(|v| v == 0, None);
            }
        }
        let start = crate::topology::now_ns();
        copy_segments(&job.segments);
        if let Some(s) = crate::signal::lookup(job.completion) {
            if COPY_PROFILING.load(std::sync::atomic::Ordering::Relaxed) {
                s.set_times(start, crate::topology::now_ns());
            }
            s.subtract(1);
        }
    }
}

/// Stops the copy-engine thread after the queued copies (last `hsa_shut_down`).
pub(crate) fn stop_copy_engine() {
    let t = {
        let mut e = ENGINE.lock();
        if !e.running {
            return;
        }
        e.jobs.clear();
        e.stop = true;
        e.running = false;
        ENGINE_CV.notify_all();
        e.thread.take()
    };
    if let Some(t) = t {
        let _ = t.join();
    }
}

/// Queues an asynchronous copy on the copy engine (started on first use).
pub(crate) fn submit_copy(job: CopyJob) -> Result<()> {
    let mut e = ENGINE.lock();
    if !e.running {
        e.stop = false;
        let t = std::thread::Builder::new()
            .name("vhsa-copy".into())
            .spawn(engine_loop)
            .map_err(|err| Error::OutOfResources(format!("cannot start the copy engine: {err}")))?;
        e.thread = Some(t);
        e.running = true;
    }
    e.jobs.push_back(job);
    ENGINE_CV.notify_one();
    Ok(())
}

/// Sets the user data of the allocation containing `ptr`.
pub(crate) fn set_user_data(ptr: usize, user_data: usize) -> Result<()> {
    let (base, _) = find(ptr).ok_or(Error::InvalidArgument(
        "pointer is not in an allocation of this runtime",
    ))?;
    if let Some(a) = ALLOCATIONS.write().get_mut(&base) {
        a.user_data = user_data;
    }
    Ok(())
}

/// Adds `agents` to the agents allowed to access the allocation at `base`.
pub(crate) fn allow_access(base: usize, agents: &[u64]) {
    if let Some(a) = ALLOCATIONS.write().get_mut(&base) {
        for ag in agents {
            if !a.accessible.contains(ag) {
                a.accessible.push(*ag);
            }
        }
    }
}

/// Forgets a range mapped by `vmem` (its pages are replaced there). A dispatch holding a view
/// keeps working on host pointers: the file pages stay until `vmem` replaces them.
pub(crate) fn forget_virtual(base: usize) {
    let mut m = ALLOCATIONS.write();
    if m.get(&base).is_some_and(|a| a.origin == Origin::Virtual) {
        m.remove(&base);
    }
}

/// Waits until no [`MemoryView`] is alive (a dispatch that may hold host pointers into memory
/// about to be replaced has ended). Logs once a second while it waits.
pub(crate) fn wait_for_views_to_end(what: &str) {
    let began = Instant::now();
    let mut warned = 0;
    while IN_FLIGHT.lock().views > 0 {
        let waited = began.elapsed().as_secs();
        if waited > warned {
            warned = waited;
            tracing::warn!(
                "{what}: waiting for running emulated dispatches to end ({waited} s) before the memory goes"
            );
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Forgets an imported or interop mapping (`origin`) at `base` and unmaps its `round(size)`
/// bytes once no dispatch view can reach them.
pub(crate) fn release_shared(base: usize, origin: Origin, round: fn(usize) -> usize) -> Result<()> {
    let a = {
        let mut m = ALLOCATIONS.write();
        match m.get(&base) {
            Some(a) if a.origin == origin => m.remove(&base).unwrap(),
            _ => {
                return Err(Error::InvalidArgument(
                    "pointer is not the address an attach or interop map returned",
                ));
            }
        }
    };
    release_when_unused(base, round(a.size));
    Ok(())
}

/// Forgets host memory locked with `hsa_amd_memory_lock`. A lock absorbed by a larger one
/// unlocks as any other (the larger one stays); the locks a lock absorbed come back.
pub(crate) fn unlock(host_ptr: usize) -> Result<()> {
    let mut m = ALLOCATIONS.write();
    let mut absorbed = ABSORBED_LOCKS.lock();
    forget_lock(&mut m, &mut absorbed, lock_agent_address(host_ptr))
        .map(|_| ())
        .ok_or(Error::InvalidArgument(
            "pointer was not locked with hsa_amd_memory_lock",
        ))
}

/// The agents' view of memory for executors: every allocation this runtime made or locked.
pub(crate) struct RuntimeMemory;

impl crate::executor::DeviceMemory for RuntimeMemory {
    fn read(
        &self,
        address: u64,
        out: &mut [u8],
    ) -> std::result::Result<(), crate::executor::MemoryFault> {
        let fault = crate::executor::MemoryFault {
            address,
            len: out.len(),
        };
        let host = host_range(address as usize, out.len()).ok_or(fault)?;
        // SAFETY: the range lies inside a live allocation of this runtime (checked above), whose
        // bytes are at its host address.
        unsafe { std::ptr::copy(host as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn write(
        &self,
        address: u64,
        bytes: &[u8],
    ) -> std::result::Result<(), crate::executor::MemoryFault> {
        let fault = crate::executor::MemoryFault {
            address,
            len: bytes.len(),
        };
        let host = host_range(address as usize, bytes.len()).ok_or(fault)?;
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy(bytes.as_ptr(), host as *mut u8, bytes.len()) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that take memory views: one view defers every unmap until it ends, so a test
    /// that checks an unmap must not run beside another's view.
    static VIEWS: Mutex<()> = Mutex::new(());

    /// Whether the page at `p` is mapped (`mincore` fails with ENOMEM for unmapped memory).
    fn mapped(p: *mut u8) -> bool {
        let mut v = 0u8;
        // SAFETY: `mincore` only inspects the page tables; `v` receives one byte per page.
        unsafe { libc::mincore(p.cast(), 1, &mut v) == 0 }
    }

    /// A lock left behind by a freed buffer does not shadow the allocation that reuses its range.
    #[test]
    fn a_mapping_over_a_lock_whose_pages_were_freed_forgets_the_lock() {
        // Six granules of our own: the application's buffer lies in the first four and is
        // locked in granule 2 (and a few bytes at the start); the buffer is freed without an
        // unlock and the host hands granules 1-5 to this runtime's next mapping.
        let own = map(6 * GRANULE, false).unwrap() as usize;
        let (locked, kept, mapped) = (own + 2 * GRANULE, own, own + GRANULE);
        record(locked as *mut u8, GRANULE, 1, 0, false, Origin::Locked);
        record(kept as *mut u8, 16, 1, 0, false, Origin::Locked);
        record(mapped as *mut u8, 5 * GRANULE, 1, 0, true, Origin::Mapped);
        // Every address of the mapping finds it: the stale lock inside would shadow the rest.
        for p in [locked + 8, locked + GRANULE + 8] {
            let (base, found) = find(p).unwrap();
            assert_eq!((base, found.origin), (mapped, Origin::Mapped));
        }
        assert!(unlock(locked).is_err(), "the stale lock is gone");
        // The lock before the mapping, not inside it, is kept.
        assert_eq!(find(kept + 8).unwrap().1.origin, Origin::Locked);
        unlock(kept).unwrap();
        free(mapped as *mut u8).unwrap();
        // SAFETY: the first granule of our own mapping (`free` unmaps the rest once unused).
        unsafe { libc::munmap(own as *mut libc::c_void, GRANULE) };
    }

    /// Locks `(offset, bytes)` inside a fresh range of `granules` granules; returns its base.
    fn locked_range(granules: usize, locks: &[(usize, usize)]) -> usize {
        let own = map(granules * GRANULE, false).unwrap() as usize;
        for &(offset, bytes) in locks {
            record(
                (own + offset) as *mut u8,
                bytes,
                1,
                0,
                false,
                Origin::Locked,
            );
        }
        own
    }

    /// The base (as a host address) and origin of the allocation holding `p`.
    fn holder(p: usize) -> Option<(usize, Origin)> {
        find(p).map(|(base, a)| (host_address(base), a.origin))
    }

    /// HIP 5.2 never unlocks a pageable buffer: a larger buffer placed over a freed one and
    /// locked in turn covers the old lock. Its bytes past the old lock's end are found in it.
    #[test]
    fn a_lock_over_an_older_lock_holds_the_bytes_past_the_older_end() {
        // The old lock: granule 1; the new one: granules 0-3.
        let own = locked_range(4, &[(GRANULE, GRANULE), (0, 4 * GRANULE)]);
        // Past the old lock's end first: there, the old lock hid the new one's bytes.
        for p in [
            own + 2 * GRANULE + 8,
            own + 4 * GRANULE - 1,
            own + 8,
            own + GRANULE + 8,
        ] {
            assert_eq!(holder(p), Some((own, Origin::Locked)), "{p:#x}");
        }
        {
            let _views = VIEWS.lock();
            let agent = lock_agent_address(own + 2 * GRANULE);
            assert!(MemoryView::take().contains(agent as u64, 8));
        }
        unlock(own).unwrap();
        unlock(own + GRANULE).unwrap();
        assert_eq!(holder(own + GRANULE), None);
        // SAFETY: the range `locked_range` mapped; nothing of this runtime refers to it.
        unsafe { libc::munmap(own as *mut libc::c_void, 4 * GRANULE) };
    }

    /// A lock made inside a larger one leaves the larger one holding all its bytes.
    #[test]
    fn a_lock_inside_a_larger_lock_leaves_the_larger_one_holding_its_bytes() {
        let own = locked_range(4, &[(0, 4 * GRANULE), (GRANULE, 16)]);
        for p in [own + GRANULE + 8, own + GRANULE + 16, own + 3 * GRANULE] {
            assert_eq!(holder(p), Some((own, Origin::Locked)), "{p:#x}");
        }
        // Locked again, larger but still inside: still absorbed, and unlocked once.
        record(
            (own + GRANULE) as *mut u8,
            GRANULE,
            1,
            0,
            false,
            Origin::Locked,
        );
        assert_eq!(holder(own + 2 * GRANULE + 8), Some((own, Origin::Locked)));
        unlock(own + GRANULE).unwrap();
        assert!(unlock(own + GRANULE).is_err());
        unlock(own).unwrap();
        // SAFETY: as above.
        unsafe { libc::munmap(own as *mut libc::c_void, 4 * GRANULE) };
    }

    /// The absorbed lock unlocks once, as before it was absorbed, and leaves the outer lock.
    #[test]
    fn an_absorbed_lock_unlocks_once_and_leaves_the_outer_lock() {
        let own = locked_range(4, &[(GRANULE, GRANULE), (0, 4 * GRANULE)]);
        unlock(own + GRANULE).unwrap();
        assert!(
            unlock(own + GRANULE).is_err(),
            "a second unlock is the application's error"
        );
        for p in [own + GRANULE + 8, own + 2 * GRANULE + 8] {
            assert_eq!(holder(p), Some((own, Origin::Locked)), "{p:#x}");
        }
        unlock(own).unwrap();
        assert_eq!(holder(own + GRANULE + 8), None);
        // SAFETY: as above.
        unsafe { libc::munmap(own as *mut libc::c_void, 4 * GRANULE) };
    }

    /// When the outer lock goes first, the locks it absorbed hold their bytes again.
    #[test]
    fn an_absorbed_lock_comes_back_when_the_outer_lock_goes_first() {
        // Two old locks (granules 1 and 2, the second with one nested in it) under a new one.
        let own = locked_range(
            4,
            &[
                (GRANULE, GRANULE),
                (2 * GRANULE + 64, 64),
                (2 * GRANULE, GRANULE),
                (0, 4 * GRANULE),
            ],
        );
        unlock(own).unwrap();
        assert_eq!(holder(own + 8), None);
        assert_eq!(
            holder(own + GRANULE + 8),
            Some((own + GRANULE, Origin::Locked))
        );
        for p in [own + 2 * GRANULE + 8, own + 2 * GRANULE + 200] {
            assert_eq!(
                holder(p),
                Some((own + 2 * GRANULE, Origin::Locked)),
                "{p:#x}"
            );
        }
        assert_eq!(holder(own + 3 * GRANULE + 8), None);
        unlock(own + GRANULE).unwrap();
        unlock(own + 2 * GRANULE).unwrap();
        assert_eq!(
            holder(own + 2 * GRANULE + 64),
            Some((own + 2 * GRANULE + 64, Origin::Locked))
        );
        unlock(own + 2 * GRANULE + 64).unwrap();
        assert_eq!(holder(own + 2 * GRANULE + 64), None);
        // SAFETY: as above.
        unsafe { libc::munmap(own as *mut libc::c_void, 4 * GRANULE) };
    }

    /// A mapping over a stale outer lock forgets the absorbed locks it overlaps; those outside
    /// it are still locked, and come back.
    #[test]
    fn a_mapping_over_an_outer_lock_keeps_the_absorbed_locks_outside_it() {
        let own = locked_range(
            8,
            &[(GRANULE, GRANULE), (5 * GRANULE, GRANULE), (0, 4 * GRANULE)],
        );
        // Granule 5 is locked on its own; granule 1 is absorbed. The host hands granules 2-7
        // to a new mapping: the outer lock is stale, the lock of granule 1 is not.
        let mapped = own + 2 * GRANULE;
        record(mapped as *mut u8, 6 * GRANULE, 1, 0, true, Origin::Mapped);
        assert_eq!(holder(own + 8), None);
        assert_eq!(
            holder(own + GRANULE + 8),
            Some((own + GRANULE, Origin::Locked))
        );
        assert_eq!(
            holder(own + 5 * GRANULE + 8),
            Some((mapped, Origin::Mapped))
        );
        unlock(own + GRANULE).unwrap();
        assert!(unlock(own).is_err() && unlock(own + 5 * GRANULE).is_err());
        free(mapped as *mut u8).unwrap();
        // SAFETY: the first two granules of our own mapping (`free` unmaps the rest).
        unsafe { libc::munmap(own as *mut libc::c_void, 2 * GRANULE) };
    }

    /// A small allocation of this runtime's covers its granule, as on a GPU; a locked
    /// application buffer covers exactly its bytes.
    #[test]
    fn a_view_covers_the_granule_of_a_mapped_allocation_and_exactly_a_locked_one_linearly() {
        let _views = VIEWS.lock();
        let a = map(288, false).unwrap();
        record(a, 288, 1, 0, true, Origin::Mapped);
        let mut host = vec![0u8; 3 * GRANULE];
        let locked = host[GRANULE..].as_mut_ptr();
        record(locked, 288, 1, 0, false, Origin::Locked);
        let view = MemoryView::take();
        assert!(
            view.contains(a as u64 + 288, 8),
            "the bytes after a small buffer"
        );
        assert!(view.contains(a as u64 + GRANULE as u64 - 8, 8));
        assert!(
            !view.contains(a as u64 + GRANULE as u64 - 4, 8),
            "past the granule"
        );
        let agent = lock_agent_address(locked as usize) as u64;
        assert!(view.contains(agent + 280, 8));
        assert!(
            !view.contains(agent + 288, 8),
            "the application's bytes after a locked buffer are not the kernel's"
        );
        assert!(
            !view.contains(locked as u64, 8),
            "agents reach locked memory at its agent address only"
        );
        // Each allocation translates linearly from its base (the emulator keeps it as a span).
        let g = GRANULE as u64;
        assert_eq!(view.allocation_at(a as u64 + 300), Some((a as u64, g)));
        assert_eq!(view.allocation_at(agent + 200), Some((agent, 288)));
        assert_eq!(view.allocation_at(agent + 288), None);
        assert_eq!(view.allocation_at(locked as u64), None);
        let base_host = host_address(agent as usize);
        assert_eq!(base_host, locked as usize);
        assert_eq!(host_address(agent as usize + 200), base_host + 200);
        drop(view);
        unlock(locked as usize).unwrap();
        free(a).unwrap();
    }

    /// Locked memory has an agent address of its own (HIP keeps a record per address of a
    /// registered buffer and removes both); both addresses find the lock, and the agent address
    /// leads back to the host bytes.
    #[test]
    fn a_lock_answers_at_an_agent_address_of_its_own() {
        let mut host = vec![7u8; 3 * GRANULE];
        let locked = host[GRANULE..].as_mut_ptr() as usize;
        let agent = record(locked as *mut u8, 512, 1, 0, false, Origin::Locked);
        assert_eq!(agent, lock_agent_address(locked));
        assert_ne!(agent, locked);
        for p in [agent + 100, locked + 100] {
            assert_eq!(
                find(p).map(|(b, a)| (b, a.origin)),
                Some((agent, Origin::Locked))
            );
        }
        assert_eq!(host_address(agent + 100), locked + 100);
        assert_eq!(host_address_if_locked(agent + 100), locked + 100);
        assert_eq!(
            host_address_if_locked(agent + 4096),
            agent + 4096,
            "past the lock: not turned into a host address"
        );
        assert_eq!(host_range(agent + 8, 8), Some(locked + 8));
        assert_eq!(host_range(locked + 8, 8), None);
        let mut out = [0u8; 4];
        crate::executor::DeviceMemory::read(&RuntimeMemory, agent as u64 + 4, &mut out).unwrap();
        assert_eq!(out, [7; 4]);
        unlock(locked).unwrap();
        assert!(find(agent).is_none() && find(locked).is_none());
    }

    #[test]
    fn a_view_covers_live_allocations_and_keeps_freed_ones_mapped_until_it_ends() {
        let _views = VIEWS.lock();
        let a = map(4096, false).unwrap();
        record(a, 4096, 1, 0, true, Origin::Mapped);
        let view = MemoryView::take();
        assert!(view.contains(a as u64, 4096));
        assert!(view.contains(a as u64 + 4092, 4));
        assert!(
            !view.contains(a as u64 + 4093, 4),
            "a range crossing the end is outside"
        );
        assert!(!view.contains(a as u64 - 1, 1));
        free(a).unwrap();
        assert!(
            find(a as usize).is_none(),
            "freed memory leaves the allocation map at once"
        );
        assert!(mapped(a), "but stays mapped while a view may reach it");
        // SAFETY: still mapped (checked above); written only by this test.
        unsafe { a.write_volatile(7) };
        assert!(
            !MemoryView::take().contains(a as u64, 1),
            "a later view does not include it"
        );
        drop(view);
        assert!(!mapped(a), "unmapped once the last view ended");
    }

    /// Device allocations lie side by side in the aperture, which views cover whole: a kernel
    /// running past a small buffer reaches the aperture's other bytes. A freed allocation comes
    /// back zeroed. Executable and host memory are mappings of their own.
    #[test]
    fn device_allocations_lie_in_one_aperture_that_views_cover() {
        let _views = VIEWS.lock();
        let place_recorded = |size, device, flags| {
            let p = place(size, device, flags).unwrap();
            record(p, size, 1, 0, device, Origin::Mapped);
            p
        };
        let (a, b) = (place_recorded(800, true, 0), place_recorded(800, true, 0));
        let (base, len) = reserved_aperture().unwrap().range();
        assert!(a as usize >= base && (b as usize) < base + len);
        let view = MemoryView::take();
        let far = a as u64 + 35_528;
        assert!(
            view.contains(far, 8),
            "past both buffers, inside the aperture"
        );
        assert_eq!(view.allocation_at(far), Some((base as u64, len as u64)));
        assert!(!view.contains((base + len) as u64 - 4, 8));
        drop(view);
        // SAFETY: both are live allocations of 800 bytes.
        unsafe { (a.write_volatile(7), b.write_volatile(9)) };
        free(a).unwrap();
        // SAFETY: the aperture stays mapped.
        assert_eq!(unsafe { (a.read_volatile(), b.read_volatile()) }, (0, 9));
        for (device, flags) in [(true, HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG), (false, 0)] {
            let own = place_recorded(800, device, flags);
            assert!(
                (own as usize).wrapping_sub(base) >= len,
                "a mapping of its own"
            );
            free(own).unwrap();
        }
        free(b).unwrap();
    }

    /// Memory allocated while a dispatch runs (HIP's device `malloc` asks its host-call listener
    /// for it) is the kernel's too, and stays mapped while the view lives, freed or not.
    #[test]
    fn a_view_reaches_allocations_made_after_it_was_taken() {
        let _views = VIEWS.lock();
        let view = MemoryView::take();
        let a = map(288, false).unwrap();
        record(a, 288, 1, 0, true, Origin::Mapped);
        let g = GRANULE as u64;
        assert!(
            view.contains(a as u64 + g - 8, 8),
            "the new allocation's granule"
        );
        assert!(!view.contains(a as u64 + g - 4, 8), "past the granule");
        assert_eq!(view.allocation_at(a as u64 + 100), Some((a as u64, g)));
        free(a).unwrap();
        assert!(
            !view.contains(a as u64, 8),
            "a freed allocation the view never reached"
        );
        assert!(mapped(a), "freed while a view lives: kept mapped");
        drop(view);
        assert!(!mapped(a));
    }
}
