//! Entries of memory: pool and region allocation, copies, pointer information, locking, IPC
//! export and import, interop buffers.

use crate::boundary::{c_slice, status_call, write_out};
use crate::error::Error;
use crate::memory::{
    COPY_PROFILING, CopyJob, Origin, allocate_in_pool, copy_bytes, find, free, record, submit_copy,
};
use crate::open_state::ensure_open;
use hsa_abi::ffi::*;
use hsa_abi::modern::{hsa_amd_memory_access_desc_t, hsa_amd_vmem_alloc_handle_t};
use hsa_abi::{AmdExtTable, CoreApiTable};
use std::ffi::c_void;

unsafe extern "C" fn hsa_amd_memory_pool_allocate_impl(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_memory_pool_allocate", || {
        ensure_open()?;
        if ptr.is_null() || size == 0 {
            return Err(Error::InvalidArgument("ptr is NULL or size is 0"));
        }
        let p = crate::topology::pool(pool.handle).ok_or(Error::InvalidPool(pool.handle))?;
        if crate::fault::pool_allocation_fails() {
            return Err(Error::OutOfResources(
                "injected pool allocation failure (VHSA_FAULTS pool_alloc)".into(),
            ));
        }
        let m = allocate_in_pool(p, size, flags)?;
        write_out(ptr, m.cast(), "ptr is NULL")
    })
}

unsafe extern "C" fn hsa_amd_memory_pool_free_impl(ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_memory_pool_free", || {
        ensure_open()?;
        free(ptr.cast())?;
        crate::shared_memory::forget_export(ptr as usize);
        Ok(())
    })
}

unsafe extern "C" fn hsa_memory_allocate_impl(
    region: hsa_region_t,
    size: usize,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    status_call("hsa_memory_allocate", || {
        ensure_open()?;
        if ptr.is_null() || size == 0 {
            return Err(Error::InvalidArgument("ptr is NULL or size is 0"));
        }
        let p = crate::topology::pool(region.handle).ok_or(Error::InvalidRegion(region.handle))?;
        let m = allocate_in_pool(p, size, 0)?;
        write_out(ptr, m.cast(), "ptr is NULL")
    })
}

unsafe extern "C" fn hsa_memory_free_impl(ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_memory_free", || {
        ensure_open()?;
        free(ptr.cast())
    })
}

unsafe extern "C" fn hsa_memory_copy_impl(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> hsa_status_t {
    status_call("hsa_memory_copy", || {
        ensure_open()?;
        if dst.is_null() || src.is_null() {
            return Err(Error::InvalidArgument("dst or src is NULL"));
        }
        if crate::fault::copy_fails() {
            return Err(Error::Failed(
                "injected copy failure (VHSA_FAULTS copy_count)".into(),
            ));
        }
        if size > 0 {
            copy_bytes(dst.cast(), src.cast(), size);
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_memory_async_copy_impl(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    status_call("hsa_amd_memory_async_copy", || {
        ensure_open()?;
        if dst.is_null() || src.is_null() {
            return Err(Error::InvalidArgument("dst or src is NULL"));
        }
        if (num_dep_signals == 0) != dep_signals.is_null() {
            return Err(Error::InvalidArgument(
                "dep_signals must be NULL exactly when num_dep_signals is 0",
            ));
        }
        crate::topology::agent(dst_agent.handle)?;
        crate::topology::agent(src_agent.handle)?;
        let deps = c_slice(dep_signals, num_dep_signals as usize, "dep_signals is NULL")?;
        for d in deps {
            crate::signal::get(d.handle)?;
        }
        crate::signal::get(completion_signal.handle)?;
        if size == 0 {
            // As in the real runtime: nothing is copied and the completion signal is untouched.
            return Ok(());
        }
        if crate::fault::copy_fails() {
            return Err(Error::Failed(
                "injected copy failure (VHSA_FAULTS copy_count)".into(),
            ));
        }
        submit_copy(CopyJob {
            segments: vec![(dst as usize, src as usize, size)],
            deps: deps.iter().map(|d| d.handle).collect(),
            completion: completion_signal.handle,
        })
    })
}

/// Reads a `hsa_dim3_t` from C as (x, y, z).
fn dim3(p: *const hsa_dim3_t) -> (usize, usize, usize) {
    // SAFETY: the caller checked `p` for NULL; it points to one hsa_dim3_t.
    let d = unsafe { p.read_unaligned() };
    (d.x as usize, d.y as usize, d.z as usize)
}

/// Reads a `hsa_pitched_ptr_t` from C as (base, row pitch, slice pitch).
fn pitched(p: *const hsa_pitched_ptr_t) -> (usize, usize, usize) {
    // SAFETY: the caller checked `p` for NULL; it points to one hsa_pitched_ptr_t.
    let d = unsafe { p.read_unaligned() };
    (d.base as usize, d.pitch, d.slice)
}

unsafe extern "C" fn hsa_amd_memory_async_copy_rect_impl(
    dst: *const hsa_pitched_ptr_t,
    dst_offset: *const hsa_dim3_t,
    src: *const hsa_pitched_ptr_t,
    src_offset: *const hsa_dim3_t,
    range: *const hsa_dim3_t,
    copy_agent: hsa_agent_t,
    dir: hsa_amd_copy_direction_t,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
) -> hsa_status_t {
    status_call("hsa_amd_memory_async_copy_rect", || {
        ensure_open()?;
        // The real runtime's order: pointers, dependency list, direction, then the agent.
        if dst.is_null()
            || src.is_null()
            || dst_offset.is_null()
            || src_offset.is_null()
            || range.is_null()
        {
            return Err(Error::InvalidArgument(
                "dst, src, dst_offset, src_offset or range is NULL",
            ));
        }
        if (num_dep_signals == 0) != dep_signals.is_null() {
            return Err(Error::InvalidArgument(
                "dep_signals must be NULL exactly when num_dep_signals is 0",
            ));
        }
        if dir == hsaHostToHost || dir > hsaDeviceToDevice {
            return Err(Error::InvalidArgument(
                "dir must be hsaHostToDevice, hsaDeviceToHost or hsaDeviceToDevice",
            ));
        }
        let agent = crate::topology::agent(copy_agent.handle)?;
        if agent.kind() != crate::topology::AgentKind::Gpu {
            return Err(Error::InvalidAgent(copy_agent.handle));
        }
        let deps = c_slice(dep_signals, num_dep_signals as usize, "dep_signals is NULL")?;
        for d in deps {
            crate::signal::get(d.handle)?;
        }
        crate::signal::get(completion_signal.handle)?;
        let (dst, src, dst_offset, src_offset, range) = (
            pitched(dst),
            pitched(src),
            dim3(dst_offset),
            dim3(src_offset),
            dim3(range),
        );
        if dst.0 == 0 || src.0 == 0 {
            return Err(Error::InvalidArgument("dst->base or src->base is NULL"));
        }
        // Rows must fit their pitch and slices their slice pitch.
        for (buf, off) in [(dst, dst_offset), (src, src_offset)] {
            let rows_fit = off.0 + range.0 <= buf.1;
            let slices_fit = range.2 <= 1 || (off.1 + range.1) * buf.1 <= buf.2;
            if !rows_fit || !slices_fit {
                return Err(Error::InvalidArgument(
                    "the copied box does not fit a buffer's pitch: offset.x + range.x must not exceed the row pitch, rows the slice pitch",
                ));
            }
        }
        if range.0 == 0 || range.1 == 0 || range.2 == 0 {
            return Ok(());
        }
        if crate::fault::copy_fails() {
            return Err(Error::Failed(
                "injected copy failure (VHSA_FAULTS copy_count)".into(),
            ));
        }
        submit_copy(CopyJob {
            segments: crate::memory::rect_segments(dst, dst_offset, src, src_offset, range),
            deps: deps.iter().map(|d| d.handle).collect(),
            completion: completion_signal.handle,
        })
    })
}

unsafe extern "C" fn hsa_amd_memory_async_copy_on_engine_impl(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const hsa_signal_t,
    completion_signal: hsa_signal_t,
    _engine_id: u32,
    _force_copy_on_sdma: bool,
) -> hsa_status_t {
    // SAFETY: same contract as hsa_amd_memory_async_copy.
    unsafe {
        hsa_amd_memory_async_copy_impl(
            dst,
            dst_agent,
            src,
            src_agent,
            size,
            num_dep_signals,
            dep_signals,
            completion_signal,
        )
    }
}

unsafe extern "C" fn hsa_amd_profiling_async_copy_enable_impl(enable: bool) -> hsa_status_t {
    status_call("hsa_amd_profiling_async_copy_enable", || {
        ensure_open()?;
        COPY_PROFILING.store(enable, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time_impl(
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_async_copy_time_t,
) -> hsa_status_t {
    status_call("hsa_amd_profiling_get_async_copy_time", || {
        ensure_open()?;
        let s = crate::signal::get(signal.handle)?;
        let (start, end) = s.times();
        let t = hsa_amd_profiling_async_copy_time_t { start, end };
        write_out(time, t, "time is NULL")
    })
}

/// `VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE` (read once): `0` makes `hsa_amd_pointer_info` report no
/// host address for device-pool memory, as on a discrete GPU without large-BAR host access, so
/// tools take their device-side paths. The memory itself stays host memory.
fn device_memory_host_accessible() -> bool {
    static ACCESSIBLE: std::sync::LazyLock<bool> = std::sync::LazyLock::new(
        || match std::env::var("VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE") {
            Err(_) => true,
            Ok(v) if v == "1" => true,
            Ok(v) if v == "0" => false,
            Ok(v) => {
                eprintln!(
                    "vhsa: VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE=`{v}` is neither 0 nor 1; device memory is reported host-accessible"
                );
                true
            }
        },
    );
    *ACCESSIBLE
}

unsafe extern "C" fn hsa_amd_pointer_info_impl(
    ptr: *const c_void,
    info: *mut hsa_amd_pointer_info_t,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut hsa_agent_t,
) -> hsa_status_t {
    status_call("hsa_amd_pointer_info", || {
        ensure_open()?;
        if ptr.is_null() || info.is_null() {
            return Err(Error::InvalidArgument("ptr or info is NULL"));
        }
        // SAFETY: non-NULL; the caller sets `size` before the call.
        let caller_size = unsafe { (*info).size } as usize;
        if caller_size == 0 {
            return Err(Error::InvalidArgument(
                "info->size is 0: set it to sizeof(hsa_amd_pointer_info_t)",
            ));
        }
        let ours = std::mem::size_of::<hsa_amd_pointer_info_t>();
        let mut out = hsa_amd_pointer_info_t {
            size: caller_size.min(ours) as u32,
            ..Default::default()
        };
        let found = find(ptr as usize);
        let agents: Vec<u64> = match &found {
            Some((base, a)) => {
                out.type_ = match a.origin {
                    Origin::Locked => HSA_EXT_POINTER_TYPE_LOCKED,
                    Origin::Imported => HSA_EXT_POINTER_TYPE_IPC,
                    Origin::Interop => HSA_EXT_POINTER_TYPE_GRAPHICS,
                    Origin::Mapped | Origin::Virtual => HSA_EXT_POINTER_TYPE_HSA,
                };
                out.agentBaseAddress = *base as *mut c_void;
                // Device memory may be reported as not host-accessible (`VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE=0`).
                if !a.device || device_memory_host_accessible() {
                    out.hostBaseAddress = crate::memory::host_address(*base) as *mut c_void;
                }
                out.sizeInBytes = a.size;
                out.userData = a.user_data as *mut c_void;
                out.agentOwner = hsa_agent_t { handle: a.owner };
                out.global_flags = a.global_flags;
                if a.device {
                    a.accessible.clone()
                } else {
                    crate::topology::system()
                        .agents
                        .iter()
                        .map(|x| x.handle)
                        .collect()
                }
            }
            None => {
                out.type_ = HSA_EXT_POINTER_TYPE_UNKNOWN;
                Vec::new()
            }
        };
        // Write only the fields the caller's structure has.
        // SAFETY: `info` holds at least `out.size` bytes (the caller's declared size, capped).
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&raw const out).cast::<u8>(),
                info.cast::<u8>(),
                (out.size as usize).max(std::mem::size_of::<u32>()),
            )
        };
        // As in the real runtime: the list is produced only when all three of alloc, the count
        // and the list pointer are given, and never for memory the runtime does not know.
        if let Some(alloc) = alloc
            && found.is_some()
            && !num_agents_accessible.is_null()
            && !accessible.is_null()
        {
            // SAFETY: the caller's allocator.
            let list = unsafe { alloc(agents.len().max(1) * std::mem::size_of::<hsa_agent_t>()) }
                .cast::<hsa_agent_t>();
            if list.is_null() {
                return Err(Error::OutOfResources(
                    "the caller's alloc callback returned NULL".into(),
                ));
            }
            for (i, h) in agents.iter().enumerate() {
                // SAFETY: `list` was allocated for `agents.len()` entries.
                unsafe { list.add(i).write(hsa_agent_t { handle: *h }) };
            }
            write_out(
                num_agents_accessible,
                agents.len() as u32,
                "num_agents_accessible",
            )?;
            write_out(accessible, list, "accessible")?;
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_pointer_info_set_userdata_impl(
    ptr: *const c_void,
    userdata: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_pointer_info_set_userdata", || {
        ensure_open()?;
        crate::memory::set_user_data(ptr as usize, userdata as usize)
    })
}

unsafe extern "C" fn hsa_amd_agents_allow_access_impl(
    num_agents: u32,
    agents: *const hsa_agent_t,
    flags: *const u32,
    ptr: *const c_void,
) -> hsa_status_t {
    status_call("hsa_amd_agents_allow_access", || {
        ensure_open()?;
        if num_agents == 0 || agents.is_null() || !flags.is_null() || ptr.is_null() {
            return Err(Error::InvalidArgument(
                "num_agents is 0, agents or ptr is NULL, or flags is not NULL (reserved)",
            ));
        }
        let list = c_slice(agents, num_agents as usize, "agents is NULL")?;
        for a in list {
            crate::topology::agent(a.handle)?;
        }
        let Some((base, _)) = find(ptr as usize) else {
            // Memory not allocated by the runtime (system memory) is accessible already.
            return Ok(());
        };
        crate::memory::allow_access(base, &list.iter().map(|a| a.handle).collect::<Vec<_>>());
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_memory_lock_impl(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_memory_lock", || {
        ensure_open()?;
        if host_ptr.is_null() || size == 0 || agent_ptr.is_null() {
            return Err(Error::InvalidArgument(
                "host_ptr or agent_ptr is NULL, or size is 0",
            ));
        }
        for a in c_slice(
            agents.cast_const(),
            num_agent.max(0) as usize,
            "agents is NULL",
        )? {
            crate::topology::agent(a.handle)?;
        }
        if (host_ptr as usize).saturating_add(size) > vgpu::user_memory::ALIAS as usize {
            return Err(Error::InvalidArgument(
                "host_ptr..host_ptr + size reaches past 2^47, where vhsa places the agent addresses of locked memory",
            ));
        }
        let cpu = crate::topology::system().agents[0].handle;
        let agent = record(
            host_ptr.cast(),
            size,
            cpu,
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            false,
            Origin::Locked,
        );
        write_out(agent_ptr, agent as *mut c_void, "agent_ptr")
    })
}

unsafe extern "C" fn hsa_amd_memory_lock_to_pool_impl(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    _pool: hsa_amd_memory_pool_t,
    _flags: u32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    // SAFETY: same contract as hsa_amd_memory_lock.
    unsafe { hsa_amd_memory_lock_impl(host_ptr, size, agents, num_agent, agent_ptr) }
}

unsafe extern "C" fn hsa_amd_memory_unlock_impl(host_ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_memory_unlock", || {
        ensure_open()?;
        crate::memory::unlock(host_ptr as usize)
    })
}

unsafe extern "C" fn hsa_amd_memory_fill_impl(
    ptr: *mut c_void,
    value: u32,
    count: usize,
) -> hsa_status_t {
    status_call("hsa_amd_memory_fill", || {
        ensure_open()?;
        if ptr.is_null() || !(ptr as usize).is_multiple_of(4) {
            return Err(Error::InvalidArgument("ptr is NULL or not 4-byte aligned"));
        }
        let ptr = crate::memory::host_address_if_locked(ptr as usize) as *mut c_void;
        // SAFETY: non-NULL, aligned; HSA requires `count` writable u32s (locked memory's agent
        // address turned into the host address of the same bytes).
        unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u32>(), count) }.fill(value);
        Ok(())
    })
}

unsafe extern "C" fn hsa_memory_register_impl(ptr: *mut c_void, _size: usize) -> hsa_status_t {
    status_call("hsa_memory_register", || {
        ensure_open()?;
        if ptr.is_null() {
            return Err(Error::InvalidArgument("ptr is NULL"));
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_memory_deregister_impl(ptr: *mut c_void, _size: usize) -> hsa_status_t {
    // SAFETY: same checks as register.
    unsafe { hsa_memory_register_impl(ptr, 0) }
}

unsafe extern "C" fn hsa_memory_assign_agent_impl(
    ptr: *mut c_void,
    agent: hsa_agent_t,
    _access: hsa_access_permission_t,
) -> hsa_status_t {
    status_call("hsa_memory_assign_agent", || {
        ensure_open()?;
        crate::topology::agent(agent.handle)?;
        if ptr.is_null() {
            return Err(Error::InvalidArgument("ptr is NULL"));
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_memory_pool_can_migrate_impl(
    src: hsa_amd_memory_pool_t,
    dst: hsa_amd_memory_pool_t,
    result: *mut bool,
) -> hsa_status_t {
    status_call("hsa_amd_memory_pool_can_migrate", || {
        ensure_open()?;
        crate::topology::pool(src.handle).ok_or(Error::InvalidPool(src.handle))?;
        crate::topology::pool(dst.handle).ok_or(Error::InvalidPool(dst.handle))?;
        write_out(result, false, "result is NULL")
    })
}

// ---- virtual memory (hsa_amd_vmem_*) ----------------------------------------------------------

unsafe extern "C" fn hsa_amd_vmem_address_reserve_impl(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    flags: u64,
) -> hsa_status_t {
    // SAFETY: same contract, alignment 0.
    unsafe { hsa_amd_vmem_address_reserve_align_impl(va, size, address, 0, flags) }
}

unsafe extern "C" fn hsa_amd_vmem_address_reserve_align_impl(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    alignment: u64,
    flags: u64,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_address_reserve", || {
        ensure_open()?;
        if va.is_null() || size == 0 {
            return Err(Error::InvalidArgument("va is NULL or size is 0"));
        }
        if flags != 0 {
            return Err(Error::InvalidArgument("flags must be 0"));
        }
        let base = crate::vmem::reserve(size, address, alignment)?;
        write_out(va, base as *mut c_void, "va is NULL")
    })
}

unsafe extern "C" fn hsa_amd_vmem_address_free_impl(va: *mut c_void, size: usize) -> hsa_status_t {
    status_call("hsa_amd_vmem_address_free", || {
        ensure_open()?;
        if va.is_null() || size == 0 {
            return Err(Error::InvalidArgument("va is NULL or size is 0"));
        }
        crate::vmem::free(va as usize, size)
    })
}

unsafe extern "C" fn hsa_amd_vmem_handle_create_impl(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    type_: u32,
    flags: u64,
    handle: *mut hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_handle_create", || {
        ensure_open()?;
        if handle.is_null() || size == 0 {
            return Err(Error::InvalidArgument("handle is NULL or size is 0"));
        }
        let p = crate::topology::pool(pool.handle).ok_or(Error::InvalidPool(pool.handle))?;
        let h = crate::vmem::create_handle(p, pool.handle, size, type_, flags)?;
        write_out(
            handle,
            hsa_amd_vmem_alloc_handle_t { handle: h },
            "handle is NULL",
        )
    })
}

unsafe extern "C" fn hsa_amd_vmem_handle_release_impl(
    handle: hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_handle_release", || {
        ensure_open()?;
        crate::vmem::release_handle(handle.handle)
    })
}

unsafe extern "C" fn hsa_amd_vmem_map_impl(
    va: *mut c_void,
    size: usize,
    in_offset: usize,
    handle: hsa_amd_vmem_alloc_handle_t,
    flags: u64,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_map", || {
        ensure_open()?;
        if va.is_null() || size == 0 {
            return Err(Error::InvalidArgument("va is NULL or size is 0"));
        }
        crate::vmem::map(va as usize, size, in_offset, handle.handle, flags)
    })
}

unsafe extern "C" fn hsa_amd_vmem_unmap_impl(va: *mut c_void, size: usize) -> hsa_status_t {
    status_call("hsa_amd_vmem_unmap", || {
        ensure_open()?;
        if va.is_null() || size == 0 {
            return Err(Error::InvalidArgument("va is NULL or size is 0"));
        }
        crate::vmem::unmap(va as usize, size)
    })
}

unsafe extern "C" fn hsa_amd_vmem_set_access_impl(
    va: *mut c_void,
    size: usize,
    desc: *const hsa_amd_memory_access_desc_t,
    desc_cnt: usize,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_set_access", || {
        ensure_open()?;
        if va.is_null() || size == 0 || desc.is_null() || desc_cnt == 0 {
            return Err(Error::InvalidArgument(
                "va or desc is NULL, or size or desc_cnt is 0",
            ));
        }
        let mut agents = Vec::with_capacity(desc_cnt);
        for d in c_slice(desc, desc_cnt, "desc is NULL")? {
            if d.permissions > HSA_ACCESS_PERMISSION_RW {
                return Err(Error::InvalidArgument(
                    "permissions must be an hsa_access_permission_t (0 to 3)",
                ));
            }
            crate::topology::agent(d.agent_handle.handle)?;
            agents.push((d.agent_handle.handle, d.permissions));
        }
        crate::vmem::set_access(va as usize, size, &agents)
    })
}

unsafe extern "C" fn hsa_amd_vmem_get_access_impl(
    va: *mut c_void,
    perms: *mut u32,
    agent: hsa_agent_t,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_get_access", || {
        ensure_open()?;
        if va.is_null() || perms.is_null() {
            return Err(Error::InvalidArgument("va or perms is NULL"));
        }
        crate::topology::agent(agent.handle)?;
        let p = crate::vmem::access(va as usize, agent.handle)?;
        write_out(perms, p, "perms is NULL")
    })
}

unsafe extern "C" fn hsa_amd_vmem_retain_alloc_handle_impl(
    handle: *mut hsa_amd_vmem_alloc_handle_t,
    addr: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_retain_alloc_handle", || {
        ensure_open()?;
        if handle.is_null() || addr.is_null() {
            return Err(Error::InvalidArgument("handle or addr is NULL"));
        }
        let h = crate::vmem::retain(addr as usize)?;
        write_out(
            handle,
            hsa_amd_vmem_alloc_handle_t { handle: h },
            "handle is NULL",
        )
    })
}

unsafe extern "C" fn hsa_amd_vmem_get_alloc_properties_from_handle_impl(
    handle: hsa_amd_vmem_alloc_handle_t,
    pool: *mut hsa_amd_memory_pool_t,
    type_: *mut u32,
) -> hsa_status_t {
    status_call("hsa_amd_vmem_get_alloc_properties_from_handle", || {
        ensure_open()?;
        if pool.is_null() || type_.is_null() {
            return Err(Error::InvalidArgument("pool or type is NULL"));
        }
        let (p, t) = crate::vmem::properties(handle.handle)?;
        write_out(pool, hsa_amd_memory_pool_t { handle: p }, "pool is NULL")?;
        write_out(type_, t, "type is NULL")
    })
}

unsafe extern "C" fn hsa_amd_ipc_memory_create_impl(
    ptr: *mut c_void,
    len: usize,
    handle: *mut hsa_amd_ipc_memory_t,
) -> hsa_status_t {
    status_call("hsa_amd_ipc_memory_create", || {
        ensure_open()?;
        if ptr.is_null() || handle.is_null() {
            return Err(Error::InvalidArgument("ptr or handle is NULL"));
        }
        let words = crate::shared_memory::export(ptr as usize, len)?;
        write_out(
            handle,
            hsa_amd_ipc_memory_t { handle: words },
            "handle is NULL",
        )
    })
}

unsafe extern "C" fn hsa_amd_ipc_memory_attach_impl(
    handle: *const hsa_amd_ipc_memory_t,
    len: usize,
    num_agents: u32,
    mapping_agents: *const hsa_agent_t,
    mapped_ptr: *mut *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_ipc_memory_attach", || {
        ensure_open()?;
        if handle.is_null() || mapped_ptr.is_null() {
            return Err(Error::InvalidArgument("handle or mapped_ptr is NULL"));
        }
        let owner = first_gpu_of(mapping_agents, num_agents)?;
        // SAFETY: non-NULL; the caller's handle.
        let words = unsafe { (*handle).handle };
        let va = crate::shared_memory::import(&words, len, owner)?;
        write_out(mapped_ptr, va as *mut c_void, "mapped_ptr is NULL")
    })
}

unsafe extern "C" fn hsa_amd_ipc_memory_detach_impl(mapped_ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_ipc_memory_detach", || {
        ensure_open()?;
        crate::shared_memory::release(mapped_ptr as usize, Origin::Imported)
    })
}

/// The owner of shared memory mapped for `agents`: the first GPU listed, else the first GPU.
fn first_gpu_of(agents: *const hsa_agent_t, n: u32) -> crate::error::Result<u64> {
    let list = if n == 0 {
        &[][..]
    } else {
        c_slice(agents, n as usize, "agents is NULL")?
    };
    for a in list {
        crate::topology::agent(a.handle)?;
    }
    let system = crate::topology::system();
    let gpus: Vec<u64> = system
        .agents
        .iter()
        .filter(|a| a.kind() == crate::topology::AgentKind::Gpu)
        .map(|a| a.handle)
        .collect();
    list.iter()
        .map(|a| a.handle)
        .find(|h| gpus.contains(h))
        .or_else(|| gpus.first().copied())
        .ok_or(Error::InvalidArgument("no GPU agent to map the memory for"))
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn hsa_amd_interop_map_buffer_impl(
    num_agents: u32,
    agents: *mut hsa_agent_t,
    interop_handle: i32,
    flags: u32,
    size: *mut usize,
    ptr: *mut *mut c_void,
    metadata_size: *mut usize,
    metadata: *mut *const c_void,
) -> hsa_status_t {
    status_call("hsa_amd_interop_map_buffer", || {
        ensure_open()?;
        if num_agents == 0 || agents.is_null() || size.is_null() || ptr.is_null() || flags != 0 {
            return Err(Error::InvalidArgument(
                "num_agents is 0, agents, size or ptr is NULL, or flags is not 0 (reserved)",
            ));
        }
        let owner = first_gpu_of(agents, num_agents)?;
        let (va, bytes) = crate::shared_memory::map_interop(interop_handle, owner)?;
        if !metadata_size.is_null() {
            write_out(metadata_size, 0, "metadata_size")?;
        }
        if !metadata.is_null() {
            write_out(metadata, std::ptr::null(), "metadata")?;
        }
        write_out(size, bytes, "size is NULL")?;
        write_out(ptr, va as *mut c_void, "ptr is NULL")
    })
}

unsafe extern "C" fn hsa_amd_interop_unmap_buffer_impl(ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_interop_unmap_buffer", || {
        ensure_open()?;
        crate::shared_memory::release(ptr as usize, Origin::Interop)
    })
}

/// Fills this module's slots.
pub(crate) fn install(core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    core.hsa_memory_allocate_fn = Some(hsa_memory_allocate_impl);
    core.hsa_memory_free_fn = Some(hsa_memory_free_impl);
    core.hsa_memory_copy_fn = Some(hsa_memory_copy_impl);
    core.hsa_memory_register_fn = Some(hsa_memory_register_impl);
    core.hsa_memory_deregister_fn = Some(hsa_memory_deregister_impl);
    core.hsa_memory_assign_agent_fn = Some(hsa_memory_assign_agent_impl);
    amd.hsa_amd_memory_pool_allocate_fn = Some(hsa_amd_memory_pool_allocate_impl);
    amd.hsa_amd_memory_pool_free_fn = Some(hsa_amd_memory_pool_free_impl);
    amd.hsa_amd_memory_async_copy_fn = Some(hsa_amd_memory_async_copy_impl);
    amd.hsa_amd_memory_async_copy_on_engine_fn = Some(hsa_amd_memory_async_copy_on_engine_impl);
    amd.hsa_amd_memory_async_copy_rect_fn = Some(hsa_amd_memory_async_copy_rect_impl);
    amd.hsa_amd_profiling_async_copy_enable_fn = Some(hsa_amd_profiling_async_copy_enable_impl);
    amd.hsa_amd_profiling_get_async_copy_time_fn = Some(hsa_amd_profiling_get_async_copy_time_impl);
    amd.hsa_amd_pointer_info_fn = Some(hsa_amd_pointer_info_impl);
    amd.hsa_amd_pointer_info_set_userdata_fn = Some(hsa_amd_pointer_info_set_userdata_impl);
    amd.hsa_amd_agents_allow_access_fn = Some(hsa_amd_agents_allow_access_impl);
    amd.hsa_amd_memory_lock_fn = Some(hsa_amd_memory_lock_impl);
    amd.hsa_amd_memory_lock_to_pool_fn = Some(hsa_amd_memory_lock_to_pool_impl);
    amd.hsa_amd_memory_unlock_fn = Some(hsa_amd_memory_unlock_impl);
    amd.hsa_amd_ipc_memory_create_fn = Some(hsa_amd_ipc_memory_create_impl);
    amd.hsa_amd_ipc_memory_attach_fn = Some(hsa_amd_ipc_memory_attach_impl);
    amd.hsa_amd_ipc_memory_detach_fn = Some(hsa_amd_ipc_memory_detach_impl);
    amd.hsa_amd_interop_map_buffer_fn = Some(hsa_amd_interop_map_buffer_impl);
    amd.hsa_amd_interop_unmap_buffer_fn = Some(hsa_amd_interop_unmap_buffer_impl);
    amd.hsa_amd_memory_fill_fn = Some(hsa_amd_memory_fill_impl);
    amd.hsa_amd_memory_pool_can_migrate_fn = Some(hsa_amd_memory_pool_can_migrate_impl);
    amd.hsa_amd_vmem_address_reserve_fn = Some(hsa_amd_vmem_address_reserve_impl);
    amd.hsa_amd_vmem_address_reserve_align_fn = Some(hsa_amd_vmem_address_reserve_align_impl);
    amd.hsa_amd_vmem_address_free_fn = Some(hsa_amd_vmem_address_free_impl);
    amd.hsa_amd_vmem_handle_create_fn = Some(hsa_amd_vmem_handle_create_impl);
    amd.hsa_amd_vmem_handle_release_fn = Some(hsa_amd_vmem_handle_release_impl);
    amd.hsa_amd_vmem_map_fn = Some(hsa_amd_vmem_map_impl);
    amd.hsa_amd_vmem_unmap_fn = Some(hsa_amd_vmem_unmap_impl);
    amd.hsa_amd_vmem_set_access_fn = Some(hsa_amd_vmem_set_access_impl);
    amd.hsa_amd_vmem_get_access_fn = Some(hsa_amd_vmem_get_access_impl);
    amd.hsa_amd_vmem_retain_alloc_handle_fn = Some(hsa_amd_vmem_retain_alloc_handle_impl);
    amd.hsa_amd_vmem_get_alloc_properties_from_handle_fn =
        Some(hsa_amd_vmem_get_alloc_properties_from_handle_impl);
}
