//! The GPU virtual-memory map: every allocation and registration the runtime made, which is
//! also the GPU page table. GPU addresses equal CPU addresses (device memory is host memory),
//! but for registered host memory, which GPUs reach at an address of its own
//! ([`vgpu::user_memory`]), as the driver maps user pages at a GPU address apart from the
//! CPU's.
//!
//! - `allocate`: anonymous mappings; a scratch allocation is a lazy reservation
//!   (`MAP_NORESERVE`); blocks of 2 MiB and more are 2 MiB aligned, as the driver places them;
//!   a large allocation the host cannot back now is refused (`vgpu::host_memory`);
//! - `register`: host memory the runtime pins (`hsa_amd_memory_lock`, HIP's pinned memory);
//! - `map`/`unmap`: which nodes an allocation is mapped to (pointer info reports them);
//! - pointer info and user data, as `hsaKmtQueryPointerInfo` returns them;
//! - [`Snapshot`]: the map as the emulator sees it during a dispatch. Memory freed while a
//!   dispatch runs stays mapped until no dispatch runs ([`DispatchGuard`]), so a kernel never
//!   touches unmapped host memory (it may read freed bytes, as a GPU may).

use crate::error::{Error, Result};
use crate::ffi::*;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use vgpu::user_memory;

/// Bits of `HsaMemFlags` the thunk looks at.
pub(crate) mod flag {
    /// `Scratch`.
    pub(crate) const SCRATCH: u32 = 1 << 9;
    /// `ExecuteAccess`.
    pub(crate) const EXECUTE: u32 = 1 << 12;
}

/// What an entry of the map is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// Allocated by the thunk (`hsaKmtAllocMemory`).
    Allocated,
    /// Host memory registered by the runtime.
    Registered,
}

struct Entry {
    size: u64,
    /// Registrations of this range not yet dropped (1 for allocations).
    count: u32,
    kind: Kind,
    node: u32,
    flags: u32,
    mapped: Box<[u32]>,
    registered: Box<[u32]>,
    user_data: usize,
}

/// A registration that a later registration covers entirely, kept out of the map's entries.
///
/// Lookups take the entry with the nearest lower start, so a registration lying inside
/// another, with bytes of the other after its end, would hide those bytes: an address there
/// finds the inner registration, which does not contain it, and a kernel touching valid pinned
/// memory faults. (HIP 5.2 leaves such pairs: it never unpins a pageable buffer, and a larger
/// buffer the host later places over a freed one is pinned in turn.) The covering registration
/// answers for every byte of the inner one, so the inner one leaves the entries; it is kept
/// here, with its count, so that its own deregistrations still succeed, and so that it comes
/// back should the covering registration go first.
struct AbsorbedRegistration {
    /// The start of the registration that covers it (an entry, or absorbed in turn).
    outer: u64,
    entry: Entry,
}

#[derive(Default)]
struct Map {
    entries: BTreeMap<u64, Entry>,
    /// Absorbed registrations by start.
    absorbed: BTreeMap<u64, AbsorbedRegistration>,
    snapshot: Option<Arc<Snapshot>>,
    /// Mappings freed while dispatches ran: (address, bytes).
    deferred: Vec<(u64, u64)>,
}

static MAP: Mutex<Option<Map>> = Mutex::new(None);
/// Dispatches running now.
static RUNNING: AtomicU64 = AtomicU64::new(0);

const BLOCK: u64 = 2 << 20;

/// The CPU address of `address`: a GPU address of registered memory (in the map) turned into
/// the CPU address of the same bytes; any other address itself.
fn cpu_address(m: &mut Map, address: u64) -> u64 {
    if !user_memory::is_agent_address(address) {
        return address;
    }
    let cpu = user_memory::host_address(address);
    let registered = m.absorbed.contains_key(&cpu)
        || containing(m, cpu).is_some_and(|(_, e)| e.kind == Kind::Registered);
    if registered { cpu } else { address }
}

/// The GPU address of the byte at `cpu` of an entry of kind `kind`.
fn gpu_address(kind: Kind, cpu: u64) -> u64 {
    match kind {
        Kind::Allocated => cpu,
        Kind::Registered => user_memory::agent_address(cpu),
    }
}

fn page_round(size: u64) -> u64 {
    size.div_ceil(4096) * 4096
}

fn with_map<R>(f: impl FnOnce(&mut Map) -> R) -> R {
    f(MAP.lock().get_or_insert_with(Map::default))
}

fn mmap(size: u64, align: u64, lazy: bool) -> Result<u64> {
    let span = size + if align > 4096 { align } else { 0 };
    let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    if lazy {
        flags |= libc::MAP_NORESERVE;
    }
    // SAFETY: a fresh anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Error::NoMemory(format!("cannot map {size} bytes")));
    }
    let start = p as u64;
    let aligned = start.next_multiple_of(align.max(4096));
    // SAFETY: trimming the unused head and tail of the mapping just made.
    unsafe {
        if aligned > start {
            libc::munmap(start as *mut _, (aligned - start) as usize);
        }
        let end = start + span;
        if aligned + size < end {
            libc::munmap((aligned + size) as *mut _, (end - aligned - size) as usize);
        }
    }
    Ok(aligned)
}

/// Drops the registrations that overlap a new mapping at `address..+size`: the host reused
/// their range, so their pages were unmapped (an application freed a buffer the runtime had
/// pinned and never unpinned, as HIP 5.2 leaves the pageable buffers of its copies). Left in
/// the map, such a registration would shadow the new allocation in every lookup. Of the
/// registrations they had absorbed, those outside the range come back.
fn forget_overlapped_registrations(m: &mut Map, address: u64, size: u64) {
    let end = address.saturating_add(size);
    // Entries below `end`, highest first, while they reach into the range (live entries do not
    // overlap, so the walk stops at the first that ends before `address`).
    let stale: Vec<u64> = m
        .entries
        .range(..end)
        .rev()
        .take_while(|(s, e)| **s + e.size > address)
        .filter(|(_, e)| e.kind == Kind::Registered)
        .map(|(s, _)| *s)
        .collect();
    for s in stale {
        if let Some(e) = m.entries.remove(&s) {
            tracing::debug!(
                "registration at {s:#x} ({} bytes) was unmapped without a deregistration (a new allocation at {address:#x} reuses its range); dropped",
                e.size
            );
            restore_absorbed(m, s, e.size, Some(address..end));
        }
    }
}

/// Enters a registration into the entries, or absorbs it into a registration that covers it;
/// the registrations it covers are absorbed into it. Registrations in the entries then never
/// contain one another, so whenever a registration holds an address, the one with the nearest
/// lower start does (the check of a lookup stays one step of the map).
fn place_registration(m: &mut Map, address: u64, entry: Entry) {
    let end = address.saturating_add(entry.size);
    // Only the nearest lower entry can cover it: an earlier registration covering it would
    // cover that entry too, and the entries hold no such pair.
    let covering = m
        .entries
        .range(..address)
        .next_back()
        .filter(|(s, e)| e.kind == Kind::Registered && end <= **s + e.size)
        .map(|(s, _)| *s);
    if let Some(outer) = covering {
        tracing::debug!(
            "registration at {address:#x} lies inside the registration at {outer:#x}; absorbed"
        );
        m.absorbed
            .insert(address, AbsorbedRegistration { outer, entry });
        return;
    }
    let covered: Vec<u64> = m
        .entries
        .range(address.saturating_add(1)..end)
        .filter(|(s, e)| e.kind == Kind::Registered && **s + e.size <= end)
        .map(|(s, _)| *s)
        .collect();
    for s in covered {
        let inner = m.entries.remove(&s).expect("listed above");
        tracing::debug!(
            "registration at {s:#x} lies inside the new registration at {address:#x}; absorbed"
        );
        m.absorbed.insert(
            s,
            AbsorbedRegistration {
                outer: address,
                entry: inner,
            },
        );
    }
    m.entries.insert(address, entry);
}

/// Places again the registrations absorbed by the one that was at `outer` (`size` bytes), now
/// gone: their bytes are theirs to answer for again. Those overlapping `unmapped` (the range
/// of a new allocation, whose pages were unmapped before) are dropped instead, and the
/// registrations they absorbed in turn are treated the same way.
fn restore_absorbed(m: &mut Map, outer: u64, size: u64, unmapped: Option<std::ops::Range<u64>>) {
    let mut gone = vec![(outer, size)];
    while let Some((outer, size)) = gone.pop() {
        // An absorbed registration lies inside its outer one, so it starts in the outer's range.
        let inner: Vec<u64> = m
            .absorbed
            .range(outer..outer.saturating_add(size))
            .filter(|(_, r)| r.outer == outer)
            .map(|(s, _)| *s)
            .collect();
        for s in inner {
            let entry = m.absorbed.remove(&s).expect("listed above").entry;
            if unmapped
                .as_ref()
                .is_some_and(|u| s < u.end && u.start < s + entry.size)
            {
                tracing::debug!(
                    "registration at {s:#x} ({} bytes) was unmapped without a deregistration; dropped",
                    entry.size
                );
                gone.push((s, entry.size));
            } else {
                place_registration(m, s, entry);
            }
        }
    }
}

fn munmap(address: u64, size: u64) {
    // SAFETY: `address..+size` is a mapping this module made and no longer lists.
    unsafe { libc::munmap(address as *mut _, size as usize) };
}

/// Bytes of the large allocations (not scratch) that nobody has touched yet.
fn untouched_large() -> u64 {
    let ranges: Vec<(usize, usize)> = with_map(|m| {
        m.entries
            .iter()
            .filter(|(_, e)| {
                e.kind == Kind::Allocated
                    && e.flags & flag::SCRATCH == 0
                    && vgpu::host_memory::is_checked(e.size)
            })
            .map(|(&a, e)| (a as usize, e.size as usize))
            .collect()
    });
    vgpu::host_memory::untouched_bytes(ranges.into_iter())
}

/// Allocates `size` bytes for `node` with `HsaMemFlags` bits `flags`.
pub(crate) fn allocate(node: u32, size: u64, flags: u32) -> Result<u64> {
    if size == 0 {
        return Err(Error::InvalidParameter("allocation size 0"));
    }
    let size = page_round(size);
    let scratch = flags & flag::SCRATCH != 0;
    if !scratch
        && vgpu::host_memory::is_checked(size)
        && let Some(why) = vgpu::host_memory::refusal(size, untouched_large())
    {
        return Err(Error::NoMemory(why));
    }
    let align = if size >= BLOCK { BLOCK } else { 4096 };
    let address = mmap(size, align, scratch)?;
    with_map(|m| {
        forget_overlapped_registrations(m, address, size);
        m.entries.insert(
            address,
            Entry {
                size,
                count: 1,
                kind: Kind::Allocated,
                node,
                flags,
                mapped: Box::new([]),
                registered: Box::new([]),
                user_data: 0,
            },
        );
        m.snapshot = None;
    });
    Ok(address)
}

/// Registers host memory (`address..+size`) for `nodes`. Registering a start address again
/// counts (each registration is dropped once), also when a larger registration absorbed it;
/// memory the thunk allocated cannot be registered. A registration that covers others, or lies
/// inside one, is placed by [`place_registration`].
pub(crate) fn register(address: u64, size: u64, nodes: &[u32]) -> Result<()> {
    if address == 0 || size == 0 {
        return Err(Error::InvalidParameter("registration of NULL or 0 bytes"));
    }
    with_map(|m| {
        let again = match m.entries.get(&address).map(|e| e.kind) {
            Some(Kind::Allocated) => return Err(Error::AlreadyRegistered(address)),
            Some(Kind::Registered) => m.entries.remove(&address),
            None => m.absorbed.remove(&address).map(|r| r.entry),
        };
        let entry = match again {
            // Registered again (HIP pins the same buffer per copy): counted, and the range
            // grows to the larger size. Placed again, as the larger range may cover other
            // registrations or no longer lie inside the one that absorbed it.
            Some(mut e) => {
                e.count += 1;
                e.size = e.size.max(size);
                e
            }
            None => Entry {
                size,
                count: 1,
                kind: Kind::Registered,
                node: 0,
                flags: 0,
                mapped: Box::new([]),
                registered: nodes.into(),
                user_data: 0,
            },
        };
        place_registration(m, address, entry);
        m.snapshot = None;
        Ok(())
    })
}

/// Frees an allocation or drops a registration (`address` is its start). Returns the range
/// and whether it held executable memory. A registration absorbed by a larger one is dropped
/// as any other (the larger one stays); the registrations a dropped one absorbed come back.
pub(crate) fn release(address: u64, expect: Kind) -> Result<(u64, u64, bool)> {
    with_map(|m| {
        let running = RUNNING.load(Ordering::Acquire) > 0;
        if expect == Kind::Registered
            && let Some(r) = m.absorbed.get_mut(&address)
        {
            if r.entry.count > 1 {
                r.entry.count -= 1;
                return Ok((address, r.entry.size, false));
            }
            let e = m.absorbed.remove(&address).expect("checked above").entry;
            restore_absorbed(m, address, e.size, None);
            m.snapshot = None;
            return Ok((address, e.size, false));
        }
        match m.entries.get(&address) {
            Some(e) if e.kind == expect => {}
            Some(_) | None if expect == Kind::Registered => {
                return Err(Error::NotRegistered(address));
            }
            _ => {
                return Err(Error::InvalidHandle(format!(
                    "no allocation at {address:#x}"
                )));
            }
        }
        if let Some(e) = m.entries.get_mut(&address).filter(|e| e.count > 1) {
            e.count -= 1;
            return Ok((address, e.size, false));
        }
        let e = m.entries.remove(&address).expect("checked above");
        if e.kind == Kind::Registered {
            restore_absorbed(m, address, e.size, None);
        }
        m.snapshot = None;
        if e.kind == Kind::Allocated {
            if running {
                m.deferred.push((address, e.size));
            } else {
                munmap(address, e.size);
            }
        }
        Ok((address, e.size, e.flags & flag::EXECUTE != 0))
    })
}

fn containing(m: &mut Map, address: u64) -> Option<(u64, &mut Entry)> {
    m.entries
        .range_mut(..=address)
        .next_back()
        .filter(|(s, e)| address < **s + e.size)
        .map(|(s, e)| (*s, e))
}

/// The entry `map` and `unmap` change: the absorbed registration starting at `address` (the
/// runtime maps and unmaps pinned memory by its start, and the nodes of the registration that
/// covers it are not the inner one's to change), else the entry holding `address`.
fn mapping_target(m: &mut Map, address: u64) -> Option<(u64, &mut Entry)> {
    if m.absorbed.contains_key(&address) {
        return m
            .absorbed
            .get_mut(&address)
            .map(|r| (address, &mut r.entry));
    }
    containing(m, address)
}

/// The allocation or registration holding `address` (a GPU address): (start, bytes), as GPU
/// addresses.
pub(crate) fn range_of(address: u64) -> Option<(u64, u64)> {
    with_map(|m| {
        let cpu = cpu_address(m, address);
        containing(m, cpu).map(|(s, e)| (gpu_address(e.kind, s), e.size))
    })
}

/// Records that the entry at `address` is mapped to `nodes` (all GPUs when empty); returns
/// the GPU address.
pub(crate) fn map(address: u64, nodes: &[u32]) -> Result<u64> {
    with_map(|m| {
        let address = cpu_address(m, address);
        let (start, e) = mapping_target(m, address)
            .ok_or_else(|| Error::InvalidHandle(format!("no memory at {address:#x} to map")))?;
        let all: Vec<u32>;
        let nodes = if nodes.is_empty() {
            all = (1..crate::topology::current().nodes.len() as u32).collect();
            &all[..]
        } else {
            nodes
        };
        e.mapped = nodes.into();
        Ok(gpu_address(e.kind, start.max(address)))
    })
}

/// Records that the entry at `address` is mapped to no node.
pub(crate) fn unmap(address: u64) -> Result<()> {
    with_map(|m| {
        let address = cpu_address(m, address);
        let (_, e) = mapping_target(m, address)
            .ok_or_else(|| Error::InvalidHandle(format!("no memory at {address:#x} to unmap")))?;
        e.mapped = Box::new([]);
        Ok(())
    })
}

/// Attaches the runtime's user data to the entry holding `address`.
pub(crate) fn set_user_data(address: u64, data: usize) -> Result<()> {
    with_map(|m| {
        let address = cpu_address(m, address);
        let (_, e) = containing(m, address).ok_or(Error::InvalidParameter(
            "user data for memory the thunk does not know",
        ))?;
        e.user_data = data;
        Ok(())
    })
}

/// Pointer info of `address`. The node arrays stay valid until the entry is mapped, unmapped
/// or freed again (as with the real thunk).
pub(crate) fn pointer_info(address: u64, info: &mut HsaPointerInfo) -> Result<()> {
    with_map(|m| {
        let address = cpu_address(m, address);
        let Some((start, e)) = containing(m, address) else {
            *info = HsaPointerInfo::default();
            info.Type = HSA_POINTER_UNKNOWN;
            return Err(Error::InvalidHandle(format!("no memory at {address:#x}")));
        };
        let mut p = HsaPointerInfo {
            Type: match e.kind {
                Kind::Allocated => HSA_POINTER_ALLOCATED,
                Kind::Registered => HSA_POINTER_REGISTERED_USER,
            },
            Node: e.node,
            CPUAddress: start as *mut _,
            GPUAddress: gpu_address(e.kind, start),
            SizeInBytes: e.size,
            NRegisteredNodes: e.registered.len() as u32,
            NMappedNodes: e.mapped.len() as u32,
            RegisteredNodes: e.registered.as_ptr(),
            MappedNodes: e.mapped.as_ptr(),
            UserData: e.user_data as *mut _,
            ..Default::default()
        };
        p.MemFlags.__bindgen_anon_1.Value = e.flags;
        *info = p;
        Ok(())
    })
}

/// Frees every allocation (the device is closed).
pub(crate) fn clear() {
    let old = MAP.lock().take();
    if let Some(m) = old {
        for (a, e) in m.entries {
            if e.kind == Kind::Allocated {
                munmap(a, e.size);
            }
        }
        for (a, s) in m.deferred {
            munmap(a, s);
        }
    }
}

/// The map as a dispatch sees it: sorted, disjoint `(start, end)` ranges of GPU addresses taken
/// when it started, and the entries made since (the runtime allocating for a running kernel, as
/// HIP's device `malloc` does through its host call), found in the live map when an address is
/// in none of the first. Entries freed while any dispatch runs stay mapped until none does.
pub(crate) struct Snapshot {
    ranges: Vec<(u64, u64)>,
}

impl Snapshot {
    /// Whether `address..+len` lies inside one entry.
    pub(crate) fn contains(&self, address: u64, len: u64) -> bool {
        self.entry_at(address)
            .is_some_and(|(_, end)| address.checked_add(len).is_some_and(|e| e <= end))
    }

    /// The entry holding `address`: (start, end).
    pub(crate) fn entry_at(&self, address: u64) -> Option<(u64, u64)> {
        self.at_start(address).or_else(|| made_since(address))
    }

    fn at_start(&self, address: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 <= address);
        let &(start, end) = self.ranges.get(i.checked_sub(1)?)?;
        (address < end).then_some((start, end))
    }
}

/// The entry of the live map holding GPU address `address`: (start, end) in GPU addresses.
fn made_since(address: u64) -> Option<(u64, u64)> {
    with_map(|m| {
        let cpu = cpu_address(m, address);
        let (s, e) = containing(m, cpu)?;
        let (start, end) = (gpu_address(e.kind, s), gpu_address(e.kind, s + e.size));
        (start..end).contains(&address).then_some((start, end))
    })
}

/// Keeps freed memory mapped while a dispatch runs.
pub(crate) struct DispatchGuard {
    pub(crate) snapshot: Arc<Snapshot>,
}

impl DispatchGuard {
    /// Starts a dispatch: takes the current map.
    pub(crate) fn begin() -> DispatchGuard {
        let snapshot = with_map(|m| {
            RUNNING.fetch_add(1, Ordering::AcqRel);
            m.snapshot
                .get_or_insert_with(|| {
                    let mut ranges: Vec<(u64, u64)> = m
                        .entries
                        .iter()
                        .map(|(s, e)| (gpu_address(e.kind, *s), gpu_address(e.kind, s + e.size)))
                        .collect();
                    ranges.sort_unstable();
                    Arc::new(Snapshot { ranges })
                })
                .clone()
        });
        DispatchGuard { snapshot }
    }
}

impl Drop for DispatchGuard {
    fn drop(&mut self) {
        let deferred = with_map(|m| {
            if RUNNING.fetch_sub(1, Ordering::AcqRel) == 1 {
                std::mem::take(&mut m.deferred)
            } else {
                Vec::new()
            }
        });
        for (a, s) in deferred {
            munmap(a, s);
        }
    }
}

/// Reads a `u64` of thunk memory; `None` when `address` is not inside the map.
pub(crate) fn read_u64(address: u64) -> Option<u64> {
    if !address.is_multiple_of(8) || !contains(address, 8) {
        return None;
    }
    // SAFETY: an aligned word inside a live entry of the map (host memory).
    Some(
        unsafe { std::sync::atomic::AtomicU64::from_ptr(address as *mut u64) }
            .load(Ordering::Acquire),
    )
}

/// The CPU address of `address..+len`, GPU addresses inside one entry of the map.
pub(crate) fn cpu_range(address: u64, len: u64) -> Option<u64> {
    with_map(|m| {
        let cpu = cpu_address(m, address);
        let (s, e) = containing(m, cpu)?;
        let through_alias = cpu != address;
        (cpu.checked_add(len)? <= s + e.size && (through_alias == (e.kind == Kind::Registered)))
            .then_some(cpu)
    })
}

/// Whether `address..+len` lies inside one entry of the map.
pub(crate) fn contains(address: u64, len: u64) -> bool {
    with_map(|m| containing(m, address).is_some_and(|(s, e)| address + len <= s + e.size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_mapped_described_and_freed() {
        let a = allocate(0, 5000, flag::EXECUTE).unwrap();
        assert!(a.is_multiple_of(4096));
        assert!(contains(a, 8192) && !contains(a, 8193));
        assert_eq!(map(a + 16, &[1]).unwrap(), a + 16);
        set_user_data(a + 100, 0x1234).unwrap();
        let mut info = HsaPointerInfo::default();
        pointer_info(a + 10, &mut info).unwrap();
        assert_eq!(info.Type, HSA_POINTER_ALLOCATED);
        assert_eq!((info.GPUAddress, info.SizeInBytes), (a, 8192));
        assert_eq!(info.UserData as usize, 0x1234);
        assert_eq!(info.NMappedNodes, 1);
        // SAFETY: the node array stays valid until the entry changes.
        assert_eq!(unsafe { *info.MappedNodes }, 1);
        // SAFETY: both union members are 32 bits of plain data.
        assert_eq!(
            unsafe { info.MemFlags.__bindgen_anon_1.Value },
            flag::EXECUTE
        );
        assert_eq!(release(a, Kind::Allocated).unwrap(), (a, 8192, true));
        assert!(pointer_info(a, &mut info).is_err());
        assert_eq!(info.Type, HSA_POINTER_UNKNOWN);
    }

    /// An entry of `size` bytes registered or allocated once.
    fn entry(size: u64, kind: Kind) -> Entry {
        Entry {
            size,
            count: 1,
            kind,
            node: 0,
            flags: 0,
            mapped: Box::new([]),
            registered: Box::new([]),
            user_data: 0,
        }
    }

    #[test]
    fn an_allocation_over_a_freed_registration_drops_it() {
        let mut m = Map::default();
        // Pinned host memory whose owners freed it without a deregistration (one reaching
        // into the range below, one inside it), one still live below, an allocation above.
        m.entries.insert(0x10_000, entry(0x1000, Kind::Registered));
        m.entries.insert(0x12_000, entry(0x2000, Kind::Registered));
        m.entries.insert(0x15_000, entry(0x1000, Kind::Registered));
        m.entries.insert(0x20_000, entry(0x1000, Kind::Allocated));
        // The host hands 0x13_000..0x18_000 to a new allocation.
        forget_overlapped_registrations(&mut m, 0x13_000, 0x5000);
        m.entries.insert(0x13_000, entry(0x5000, Kind::Allocated));
        let keys: Vec<u64> = m.entries.keys().copied().collect();
        assert_eq!(keys, [0x10_000, 0x13_000, 0x20_000]);
        // Every address of the new allocation finds it (a stale entry inside would shadow it).
        for p in [0x13_008, 0x15_008, 0x16_008] {
            assert_eq!(
                containing(&mut m, p).map(|(s, _)| s),
                Some(0x13_000),
                "{p:#x}"
            );
        }
        // An allocation never drops another allocation.
        forget_overlapped_registrations(&mut m, 0x20_000, 0x1000);
        assert_eq!(m.entries.len(), 3);
    }

    /// An allocation over a freed registration that had absorbed others drops those it
    /// overlaps; the others are still pinned, and come back.
    #[test]
    fn an_allocation_over_a_freed_outer_registration_keeps_the_absorbed_ones_outside_it() {
        let mut m = Map::default();
        // 0x10_000..0x18_000 pinned over two older registrations, one of them (0x15_000) with
        // a third inside it.
        place_registration(&mut m, 0x11_000, entry(0x1000, Kind::Registered));
        place_registration(&mut m, 0x15_100, entry(0x100, Kind::Registered));
        place_registration(&mut m, 0x15_000, entry(0x1000, Kind::Registered));
        place_registration(&mut m, 0x10_000, entry(0x8000, Kind::Registered));
        assert_eq!(m.entries.keys().copied().collect::<Vec<_>>(), [0x10_000]);
        // The host hands 0x14_000..0x20_000 to a new allocation.
        forget_overlapped_registrations(&mut m, 0x14_000, 0xc000);
        assert_eq!(m.entries.keys().copied().collect::<Vec<_>>(), [0x11_000]);
        assert!(m.absorbed.is_empty());
    }

    /// The GPU address of registered memory at CPU address `p`.
    fn gpu(p: u64) -> u64 {
        user_memory::agent_address(p)
    }

    /// Registered memory has a GPU address of its own: both addresses find it, GPUs reach it
    /// at its GPU address only, and that address leads back to the CPU bytes.
    #[test]
    fn registered_memory_answers_at_a_gpu_address_of_its_own() {
        let (_buf, p) = pinned(2, &[(0, 4096)]);
        assert_eq!(map(p, &[1]).unwrap(), gpu(p));
        for a in [p + 8, gpu(p) + 8] {
            let mut info = HsaPointerInfo::default();
            pointer_info(a, &mut info).unwrap();
            assert_eq!(
                (info.CPUAddress as u64, info.GPUAddress),
                (p, gpu(p)),
                "{a:#x}"
            );
        }
        assert_eq!(cpu_range(gpu(p) + 8, 8), Some(p + 8));
        assert_eq!(
            cpu_range(p + 8, 8),
            None,
            "not a GPU address of registered memory"
        );
        let guard = DispatchGuard::begin();
        assert!(guard.snapshot.contains(gpu(p) + 8, 8) && !guard.snapshot.contains(p + 8, 8));
        // The entry translates linearly from its start (the emulator keeps it as a span).
        let (start, end) = guard.snapshot.entry_at(gpu(p) + 100).unwrap();
        assert_eq!((start, end), (gpu(p), gpu(p) + 4096));
        assert_eq!(user_memory::host_address(start) + 100, p + 100);
        assert_eq!(guard.snapshot.entry_at(gpu(p) + 4096), None);
        assert_eq!(guard.snapshot.entry_at(p + 8), None);
        drop(guard);
        unmap(gpu(p)).unwrap();
        release(p, Kind::Registered).unwrap();
        assert_eq!(range_of(gpu(p)), None);
    }

    /// Pinned buffers at `(offset, bytes)` of a fresh buffer of `pages` pages, registered in
    /// that order; returns the buffer (kept alive by the caller) and its start.
    fn pinned(pages: usize, registrations: &[(u64, u64)]) -> (Vec<u8>, u64) {
        let buf = vec![0u8; pages * 4096];
        let p = buf.as_ptr() as u64;
        for &(offset, bytes) in registrations {
            register(p + offset, bytes, &[1]).unwrap();
        }
        (buf, p)
    }

    /// HIP 5.2 never unpins a pageable buffer: a larger buffer placed over a freed one and
    /// pinned in turn covers the old registration. Its bytes past the old one's end are found
    /// in it.
    #[test]
    fn a_registration_over_an_older_one_holds_the_bytes_past_the_older_end() {
        let (_buf, p) = pinned(4, &[(4096, 4096), (0, 4 * 4096)]);
        // Past the old registration's end first: there, the old one hid the new one's bytes.
        for a in [p + 2 * 4096 + 8, p + 4 * 4096 - 1, p + 8, p + 4096 + 8] {
            assert_eq!(range_of(a), Some((gpu(p), 4 * 4096)), "{a:#x}");
        }
        assert!(contains(p + 4096, 3 * 4096));
        let guard = DispatchGuard::begin();
        assert!(guard.snapshot.contains(gpu(p + 2 * 4096), 8));
        drop(guard);
        release(p, Kind::Registered).unwrap();
        release(p + 4096, Kind::Registered).unwrap();
        assert!(!contains(p + 4096, 1));
    }

    /// The absorbed registration is dropped once per registration, as before it was absorbed,
    /// and leaves the outer one, mapped as it was.
    #[test]
    fn an_absorbed_registration_drops_once_per_registration_and_leaves_the_outer() {
        let (_buf, p) = pinned(4, &[(4096, 4096), (4096, 4096), (0, 4 * 4096)]);
        map(p, &[1]).unwrap();
        // As the runtime unlocks: unmapped, then deregistered.
        for _ in 0..2 {
            unmap(p + 4096).unwrap();
            release(p + 4096, Kind::Registered).unwrap();
        }
        assert!(matches!(
            release(p + 4096, Kind::Registered),
            Err(Error::NotRegistered(_))
        ));
        let mut info = HsaPointerInfo::default();
        pointer_info(p + 2 * 4096 + 8, &mut info).unwrap();
        assert_eq!((info.GPUAddress, info.SizeInBytes), (gpu(p), 4 * 4096));
        assert_eq!(info.NMappedNodes, 1, "the outer registration stays mapped");
        assert_eq!(range_of(p + 4096 + 8), Some((gpu(p), 4 * 4096)));
        release(p, Kind::Registered).unwrap();
        assert!(!contains(p + 4096, 1));
    }

    /// When the outer registration goes first, those it absorbed hold their bytes again.
    #[test]
    fn an_absorbed_registration_comes_back_when_the_outer_goes_first() {
        let (_buf, p) = pinned(4, &[(4096, 4096), (4096, 4096), (0, 4 * 4096)]);
        release(p, Kind::Registered).unwrap();
        assert_eq!(range_of(p + 8), None);
        assert_eq!(range_of(p + 4096 + 8), Some((gpu(p + 4096), 4096)));
        assert_eq!(range_of(p + 2 * 4096 + 8), None);
        release(p + 4096, Kind::Registered).unwrap();
        assert!(contains(p + 4096, 8), "one registration remains");
        release(p + 4096, Kind::Registered).unwrap();
        assert!(!contains(p + 4096, 1));
    }

    /// An absorbed start registered again counts against its absorbed registration; grown
    /// past the outer one's end, it is an entry again.
    #[test]
    fn an_absorbed_start_registered_again_counts_and_may_outgrow_the_outer() {
        let (_buf, p) = pinned(4, &[(0, 2 * 4096), (4096, 100), (4096, 2 * 4096)]);
        assert_eq!(range_of(p + 8), Some((gpu(p), 2 * 4096)));
        assert_eq!(range_of(p + 4096 + 200), Some((gpu(p + 4096), 2 * 4096)));
        assert_eq!(range_of(p + 2 * 4096 + 8), Some((gpu(p + 4096), 2 * 4096)));
        release(p + 4096, Kind::Registered).unwrap();
        release(p + 4096, Kind::Registered).unwrap();
        assert!(release(p + 4096, Kind::Registered).is_err());
        assert_eq!(range_of(p + 4096 + 8), Some((gpu(p), 2 * 4096)));
        release(p, Kind::Registered).unwrap();
    }

    #[test]
    fn large_blocks_are_2_mib_aligned_and_scratch_is_lazy() {
        let a = allocate(1, 4 << 20, 0).unwrap();
        assert!(a.is_multiple_of(2 << 20));
        release(a, Kind::Allocated).unwrap();
        // 64 GiB of scratch is a reservation, not memory.
        let s = allocate(1, 64 << 30, flag::SCRATCH).unwrap();
        release(s, Kind::Allocated).unwrap();
    }

    #[test]
    fn registrations_count_and_grow() {
        let buf = vec![0u8; 3 * 4096];
        let p = buf.as_ptr() as u64;
        register(p, 4096, &[1]).unwrap();
        register(p, 8192, &[1]).unwrap();
        assert_eq!(range_of(p + 5000), Some((gpu(p), 8192)));
        release(p, Kind::Registered).unwrap();
        assert!(contains(p, 8), "one registration remains");
        release(p, Kind::Registered).unwrap();
        assert!(!contains(p, 8));
        assert!(matches!(
            release(p, Kind::Registered),
            Err(Error::NotRegistered(_))
        ));
    }

    #[test]
    fn memory_freed_during_a_dispatch_stays_mapped_until_it_ends() {
        let a = allocate(1, 4096, 0).unwrap();
        let guard = DispatchGuard::begin();
        assert!(guard.snapshot.contains(a, 4096));
        release(a, Kind::Allocated).unwrap();
        // SAFETY: still mapped (deferred): the write must not fault.
        unsafe { (a as *mut u8).write_volatile(1) };
        drop(guard);
        assert!(!contains(a, 1));
    }

    /// Memory the runtime allocates or registers while a dispatch runs (HIP's device `malloc`
    /// asks its host-call listener for it) is the kernel's too, at its GPU address.
    #[test]
    fn a_dispatch_reaches_memory_made_after_it_began() {
        let guard = DispatchGuard::begin();
        let a = allocate(1, 8192, 0).unwrap();
        assert_eq!(guard.snapshot.entry_at(a + 100), Some((a, a + 8192)));
        assert!(guard.snapshot.contains(a, 8192) && !guard.snapshot.contains(a + 8190, 4));
        let (_buf, p) = pinned(2, &[(0, 4096)]);
        assert!(
            guard.snapshot.contains(gpu(p) + 8, 8),
            "registered memory at its GPU address"
        );
        assert!(!guard.snapshot.contains(p + 8, 8), "not at its CPU address");
        release(p, Kind::Registered).unwrap();
        release(a, Kind::Allocated).unwrap();
        assert!(
            !guard.snapshot.contains(a, 8),
            "freed memory the dispatch never reached"
        );
        drop(guard);
    }
}
