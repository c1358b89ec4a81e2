//! Virtual memory (`hsa_amd_vmem_*`): address reservations, physical handles and mappings.
//!
//! A reservation is an inaccessible anonymous mapping. A handle is a memory file of the handle's
//! size, owned by a pool; mapping a handle maps (part of) that file over its reserved range, so
//! two mappings of one handle share bytes. A mapped range is recorded in the allocation map as
//! memory of the pool's owner agent (coarse-grained device memory for a device pool), so pointer
//! information, copies, native kernels and the emulator reach it like a pool allocation.

use crate::error::{Error, Result};
use crate::memory::Origin;
use crate::topology::{GRANULE, PoolKind};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Physical memory behind a handle.
struct Handle {
    fd: OwnedFd,
    size: usize,
    pool: u64,
    owner: u64,
    device: bool,
    global_flags: u32,
    memory_type: u32,
    /// Live mappings of the handle.
    maps: usize,
    /// The creator's reference plus one per `retain`; the memory goes when it is 0 and unmapped.
    refs: usize,
}

struct Mapping {
    size: usize,
    handle: u64,
    /// Permissions set by `hsa_amd_vmem_set_access`, by agent (none until set).
    access: BTreeMap<u64, u32>,
}

#[derive(Default)]
struct State {
    /// Reserved ranges by base: size.
    reservations: BTreeMap<usize, usize>,
    handles: BTreeMap<u64, Handle>,
    mappings: BTreeMap<usize, Mapping>,
    next_handle: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATE.lock();
    f(g.get_or_insert_with(State::default))
}

fn os_error(what: &str) -> Error {
    Error::OutOfResources(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// Reserves `size` bytes of address space aligned to `alignment` (0: the page size). `address`
/// is a hint, as in the real runtime.
pub(crate) fn reserve(size: usize, address: u64, alignment: u64) -> Result<usize> {
    if size == 0 || !size.is_multiple_of(GRANULE) {
        return Err(Error::InvalidArgument(
            "size must be a non-zero multiple of the 4 KiB page size",
        ));
    }
    let align = if alignment == 0 {
        GRANULE
    } else {
        alignment as usize
    };
    if !align.is_power_of_two() || !align.is_multiple_of(GRANULE) {
        return Err(Error::InvalidArgument(
            "alignment must be 0 or a power of two multiple of the 4 KiB page size",
        ));
    }
    let len = size
        .checked_add(align - GRANULE)
        .ok_or(Error::InvalidArgument("size plus alignment overflows"))?;
    // SAFETY: an anonymous inaccessible mapping; the hint is not MAP_FIXED, so nothing existing is replaced.
    let p = unsafe {
        libc::mmap(
            address as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_error(&format!(
            "cannot reserve {size} bytes of address space"
        )));
    }
    let start = p as usize;
    let base = start.next_multiple_of(align);
    // Give back the slack on both sides of the aligned range.
    // SAFETY: both pieces belong to the mapping just made and are outside the kept range.
    unsafe {
        if base > start {
            libc::munmap(start as *mut libc::c_void, base - start);
        }
        let end = base + size;
        if start + len > end {
            libc::munmap(end as *mut libc::c_void, start + len - end);
        }
    }
    with_state(|s| s.reservations.insert(base, size));
    Ok(base)
}

/// Frees a reservation made by [`reserve`]; nothing may be mapped in it.
pub(crate) fn free(va: usize, size: usize) -> Result<()> {
    with_state(|s| {
        match s.reservations.get(&va) {
            Some(&n) if n == size => {}
            Some(_) => {
                return Err(Error::InvalidArgument(
                    "size is not the size of the reservation at va",
                ));
            }
            None => {
                return Err(Error::InvalidArgument(
                    "va is not the base of a range reserved with hsa_amd_vmem_address_reserve",
                ));
            }
        }
        if s.mappings.range(va..va + size).next().is_some() {
            return Err(Error::Status(hsa_abi::ffi::HSA_STATUS_ERROR_RESOURCE_FREE));
        }
        s.reservations.remove(&va);
        // SAFETY: the reservation was mapped by `reserve` with this base and size and holds no mapping.
        unsafe { libc::munmap(va as *mut libc::c_void, size) };
        Ok(())
    })
}

/// Creates a handle of `size` bytes in `pool` (`memory_type` 0 or 1, `flags` 0).
pub(crate) fn create_handle(
    pool: &crate::topology::Pool,
    pool_handle: u64,
    size: usize,
    memory_type: u32,
    flags: u64,
) -> Result<u64> {
    if size == 0 || !size.is_multiple_of(GRANULE) {
        return Err(Error::InvalidArgument(
            "size must be a non-zero multiple of the pool's 4 KiB granule",
        ));
    }
    if memory_type > 1 {
        return Err(Error::InvalidArgument(
            "type must be MEMORY_TYPE_NONE (0) or MEMORY_TYPE_PINNED (1)",
        ));
    }
    if flags != 0 {
        return Err(Error::InvalidArgument("flags must be 0"));
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
    // SAFETY: a NUL-terminated name; the call creates a new file descriptor.
    let raw = unsafe { libc::memfd_create(c"vhsa-vmem".as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(os_error("cannot create the handle's memory"));
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: sizing our own fresh memory file.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
        return Err(os_error(&format!(
            "cannot size the handle's memory to {size} bytes"
        )));
    }
    let h = Handle {
        fd,
        size,
        pool: pool_handle,
        owner: pool.owner,
        device: pool.is_device_memory(),
        global_flags: pool.global_flags(),
        memory_type,
        maps: 0,
        refs: 1,
    };
    Ok(with_state(|s| {
        s.next_handle += 1;
        let id = 0x7600_0000_0000 + s.next_handle;
        s.handles.insert(id, h);
        id
    }))
}

/// Drops the creator's (or a retain's) reference; the memory goes with the last mapping.
pub(crate) fn release_handle(handle: u64) -> Result<()> {
    with_state(|s| {
        let h = s
            .handles
            .get_mut(&handle)
            .filter(|h| h.refs > 0)
            .ok_or(Error::InvalidArgument(
                "handle is not a live handle of hsa_amd_vmem_handle_create",
            ))?;
        h.refs -= 1;
        if h.refs == 0 && h.maps == 0 {
            s.handles.remove(&handle);
        }
        Ok(())
    })
}

/// Maps `size` bytes of `handle` from `offset` at `va`, inside one reservation.
pub(crate) fn map(va: usize, size: usize, offset: usize, handle: u64, flags: u64) -> Result<()> {
    if flags != 0 {
        return Err(Error::InvalidArgument("flags must be 0"));
    }
    if size == 0 || !size.is_multiple_of(GRANULE) || !offset.is_multiple_of(GRANULE) {
        return Err(Error::InvalidArgument(
            "size and in_offset must be multiples of the 4 KiB page size, size non-zero",
        ));
    }
    with_state(|s| {
        let end = va
            .checked_add(size)
            .ok_or(Error::InvalidArgument("va + size overflows"))?;
        let inside = s
            .reservations
            .range(..=va)
            .next_back()
            .is_some_and(|(b, n)| end <= b + n);
        if !inside {
            return Err(Error::InvalidArgument(
                "va..va + size is not inside one reserved range",
            ));
        }
        let overlaps = s
            .mappings
            .range(..end)
            .next_back()
            .is_some_and(|(b, m)| b + m.size > va);
        if overlaps {
            return Err(Error::InvalidArgument(
                "va..va + size overlaps a range already mapped",
            ));
        }
        let h = s
            .handles
            .get_mut(&handle)
            .filter(|h| h.refs > 0)
            .ok_or(Error::InvalidArgument(
                "handle is not a live handle of hsa_amd_vmem_handle_create",
            ))?;
        if offset.checked_add(size).is_none_or(|e| e > h.size) {
            return Err(Error::InvalidArgument(
                "in_offset + size exceeds the handle's size",
            ));
        }
        // SAFETY: replaces pages of our own reservation (checked above) with the handle's file.
        let p = unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                h.fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("cannot map the handle"));
        }
        h.maps += 1;
        crate::memory::record(
            va as *mut u8,
            size,
            h.owner,
            h.global_flags,
            h.device,
            Origin::Virtual,
        );
        s.mappings.insert(
            va,
            Mapping {
                size,
                handle,
                access: BTreeMap::new(),
            },
        );
        Ok(())
    })
}

/// Unmaps the mapping at `va` of `size` bytes; the range stays reserved.
pub(crate) fn unmap(va: usize, size: usize) -> Result<()> {
    with_state(|s| {
        match s.mappings.get(&va) {
            Some(m) if m.size == size => {}
            _ => {
                return Err(Error::InvalidArgument(
                    "va..va + size is not a range mapped with hsa_amd_vmem_map",
                ));
            }
        }
        let m = s.mappings.remove(&va).unwrap();
        crate::memory::forget_virtual(va);
        // A dispatch that started before may hold host pointers into the range: its pages stay
        // until it ends, as freed pool memory does.
        crate::memory::wait_for_views_to_end("hsa_amd_vmem_unmap");
        // SAFETY: puts our reservation's inaccessible pages back over the range mapped by `map`.
        unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if let Some(h) = s.handles.get_mut(&m.handle) {
            h.maps -= 1;
            if h.maps == 0 && h.refs == 0 {
                s.handles.remove(&m.handle);
            }
        }
        Ok(())
    })
}

/// Sets access of every agent of `agents` (handle, permission 0..=3) to the mappings covering `va..va + size`.
pub(crate) fn set_access(va: usize, size: usize, agents: &[(u64, u32)]) -> Result<()> {
    with_state(|s| {
        let end = va
            .checked_add(size)
            .ok_or(Error::InvalidArgument("va + size overflows"))?;
        let covered: Vec<usize> = s.mappings.range(va..end).map(|(b, _)| *b).collect();
        let starts_mapped = s.mappings.contains_key(&va);
        if size == 0 || !starts_mapped || covered.iter().any(|b| b + s.mappings[b].size > end) {
            return Err(Error::InvalidArgument(
                "va..va + size is not made of ranges mapped with hsa_amd_vmem_map",
            ));
        }
        let allowed: Vec<u64> = agents
            .iter()
            .filter(|(_, p)| *p != 0)
            .map(|(a, _)| *a)
            .collect();
        for b in covered {
            if let Some(m) = s.mappings.get_mut(&b) {
                m.access.extend(agents.iter().copied());
            }
            crate::memory::allow_access(b, &allowed);
        }
        Ok(())
    })
}

/// The access of `agent` to the mapping containing `va`.
pub(crate) fn access(va: usize, agent: u64) -> Result<u32> {
    with_state(|s| {
        s.mappings
            .range(..=va)
            .next_back()
            .filter(|(b, m)| va < *b + m.size)
            .map(|(_, m)| m.access.get(&agent).copied().unwrap_or(0))
            .ok_or(Error::InvalidArgument(
                "va is not in a range mapped with hsa_amd_vmem_map",
            ))
    })
}

/// The handle mapped at `addr` (any address of the mapping), with one more reference.
pub(crate) fn retain(addr: usize) -> Result<u64> {
    with_state(|s| {
        let handle = s
            .mappings
            .range(..=addr)
            .next_back()
            .filter(|(b, m)| addr < *b + m.size)
            .map(|(_, m)| m.handle)
            .ok_or(Error::InvalidArgument(
                "addr is not in a range mapped with hsa_amd_vmem_map",
            ))?;
        if let Some(h) = s.handles.get_mut(&handle) {
            h.refs += 1;
        }
        Ok(handle)
    })
}

/// A handle's pool and memory type.
pub(crate) fn properties(handle: u64) -> Result<(u64, u32)> {
    with_state(|s| {
        s.handles
            .get(&handle)
            .filter(|h| h.refs > 0 || h.maps > 0)
            .map(|h| (h.pool, h.memory_type))
            .ok_or(Error::InvalidArgument(
                "handle is not a live handle of hsa_amd_vmem_handle_create",
            ))
    })
}
