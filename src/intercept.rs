//! Every interceptor the tool installs in the HSA API table, and `OnLoad`/`OnUnload`.
//!
//! Each interceptor runs inside a panic boundary; on a panic it logs and calls the original
//! entry, so the application keeps running. Unless the tool is active, each one chains
//! straight to the original (calls after `OnUnload`, from late destructors, are harmless).

use crate::diagnostics::panic_boundary;
use crate::host_memory::{HOST_ALLOCATIONS, MemoryKind};
use crate::inventory::{self, Classification, PointerFacts};
use crate::replay::{self, INVENTORY, QUEUES, QueueState, VMEM_HANDLES, coverage};
use crate::runtime::{self, Originals, Runtime, TableError};
use crate::state::{self, ReplayService, ToolState};
use crate::sync::Arc;
use hsa_abi::ffi::{self, hsa_agent_t, hsa_queue_t, hsa_status_t};
use hsa_abi::modern::hsa_amd_queue_intercept_packet_writer;
use hsa_abi::{AmdExtTable, CoreApiTable, HsaApiTable, ImageExtTable, TablePtr, write_slot};
use std::ffi::{c_char, c_void};

fn originals() -> &'static Originals {
    // Interceptors are only installed after the originals were saved.
    runtime::originals().expect("interceptor installed without saved originals")
}

/// An interceptor's body under the panic boundary: on a panic, `fallback` (the runtime's
/// original entry) runs instead.
fn boundary<R>(what: &str, body: impl FnOnce() -> R, fallback: impl FnOnce() -> R) -> R {
    panic_boundary(what, body, fallback)
}

fn record_allocation(ptr: *mut c_void) {
    let Some(rt) = Runtime::get() else { return };
    if inventory::in_client_callback() {
        tracing::trace!(
            "allocation {ptr:p} made from a replay client's callback: the client's own, not tracked"
        );
        return;
    }
    let info = rt.pointer_info(ptr as usize);
    let gpu = info.as_ref().is_some_and(|i| rt.agent_is_gpu(i.owner));
    let facts = info.as_ref().map(|i| PointerFacts {
        pointer_type: i.pointer_type,
        size: i.size,
        agent: i.owner.handle,
        agent_is_gpu: gpu,
        global_flags: i.global_flags,
    });
    let base = match &info {
        Some(i) if i.agent_base != 0 => i.agent_base,
        _ => ptr as usize,
    };
    forget_stale_locks(base, info.as_ref().map_or(1, |i| i.size));
    match inventory::classify(base, facts) {
        Classification::Tracked(a) => {
            let access = info.map(|i| i.access).unwrap_or_default();
            INVENTORY.record_with_access(a, &access)
        }
        other => {
            let kind = info
                .as_ref()
                .and_then(|i| MemoryKind::of(i.pointer_type, i.global_flags, gpu));
            match (kind, &info) {
                (Some(kind), Some(i)) if i.size > 0 => {
                    HOST_ALLOCATIONS.record(base, i.host_base, i.size, kind, i.owner.handle);
                }
                _ => tracing::trace!("allocation {ptr:p} not tracked: {other:?}"),
            }
        }
    }
}

/// The runtime handed out `base..base + size`: locked memory the inventory still lists there was
/// unmapped by the application without an unlock, and is forgotten.
fn forget_stale_locks(base: usize, size: usize) {
    for a in HOST_ALLOCATIONS.forget_stale_locks(base, size) {
        tracing::debug!(
            "{} was unmapped without an unlock (its range now holds a new allocation at {base:#x}); forgotten",
            a.describe()
        );
    }
}

/// An application allocation that failed for lack of memory is retried once after the tool
/// freed its idle snapshot buffers (if it held any).
fn retry_after_releasing_snapshots(
    st: hsa_status_t,
    allocate: impl FnOnce() -> hsa_status_t,
) -> hsa_status_t {
    if st != ffi::HSA_STATUS_ERROR_OUT_OF_RESOURCES || state::current() != ToolState::Active {
        return st;
    }
    let released = boundary(
        "allocation retry",
        crate::snapshot::release_idle_buffers,
        || 0,
    );
    if released == 0 {
        return st;
    }
    tracing::debug!(
        "an allocation failed for lack of memory; retried after freeing {released} bytes of idle snapshot buffers"
    );
    allocate()
}

unsafe extern "C" fn memory_allocate(
    region: ffi::hsa_region_t,
    size: usize,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the application's call.
    let allocate = || unsafe { (o.memory_allocate)(region, size, ptr) };
    let st = retry_after_releasing_snapshots(allocate(), allocate);
    if st == ffi::HSA_STATUS_SUCCESS && state::records_allocations() && !ptr.is_null() {
        // SAFETY: success wrote the pointer.
        let p = unsafe { *ptr };
        boundary("hsa_memory_allocate", || record_allocation(p), || ());
    }
    st
}

unsafe extern "C" fn pool_allocate(
    pool: ffi::hsa_amd_memory_pool_t,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the application's call.
    let allocate = || unsafe { (o.pool_allocate)(pool, size, flags, ptr) };
    let st = retry_after_releasing_snapshots(allocate(), allocate);
    if st == ffi::HSA_STATUS_SUCCESS
        && state::records_allocations()
        && !ptr.is_null()
        && !inventory::excluded_by_alloc_flags(flags)
    {
        // SAFETY: success wrote the pointer.
        let p = unsafe { *ptr };
        boundary(
            "hsa_amd_memory_pool_allocate",
            || record_allocation(p),
            || (),
        );
    }
    st
}

fn forget(ptr: *mut c_void) {
    if state::current() != ToolState::Finished && !ptr.is_null() {
        boundary(
            "free",
            || {
                if INVENTORY.forget(ptr as usize).is_none() {
                    let _ = HOST_ALLOCATIONS.forget(ptr as usize);
                }
            },
            || (),
        );
    }
}

unsafe extern "C" fn memory_free(ptr: *mut c_void) -> hsa_status_t {
    forget(ptr);
    // SAFETY: forwarded argument.
    unsafe { (originals().memory_free)(ptr) }
}

unsafe extern "C" fn pool_free(ptr: *mut c_void) -> hsa_status_t {
    forget(ptr);
    // SAFETY: forwarded argument.
    unsafe { (originals().pool_free)(ptr) }
}

/// Records memory the application locked (`host` for `size` bytes, `agent_ptr` the address
/// agents use) in the host inventory.
fn record_locked(host: *mut c_void, size: usize, st: hsa_status_t, agent_ptr: *mut *mut c_void) {
    if st != ffi::HSA_STATUS_SUCCESS
        || !state::records_allocations()
        || agent_ptr.is_null()
        || host.is_null()
        || size == 0
        || inventory::in_client_callback()
    {
        return;
    }
    // SAFETY: success wrote the agent address.
    let agent_addr = unsafe { *agent_ptr } as usize;
    boundary(
        "hsa_amd_memory_lock",
        || {
            let base = if agent_addr == 0 {
                host as usize
            } else {
                agent_addr
            };
            HOST_ALLOCATIONS.record(base, host as usize, size, MemoryKind::Locked, 0);
        },
        || (),
    );
}

unsafe extern "C" fn memory_lock(
    host: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    let Some(lock) = originals().memory_lock else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { lock(host, size, agents, num_agent, agent_ptr) };
    record_locked(host, size, st, agent_ptr);
    st
}

unsafe extern "C" fn memory_lock_to_pool(
    host: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    pool: ffi::hsa_amd_memory_pool_t,
    flags: u32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    let Some(lock) = originals().memory_lock_to_pool else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { lock(host, size, agents, num_agent, pool, flags, agent_ptr) };
    record_locked(host, size, st, agent_ptr);
    st
}

unsafe extern "C" fn memory_unlock(host: *mut c_void) -> hsa_status_t {
    let Some(unlock) = originals().memory_unlock else {
        return ffi::HSA_STATUS_ERROR;
    };
    forget(host);
    // SAFETY: forwarded argument.
    unsafe { unlock(host) }
}

unsafe extern "C" fn ipc_memory_attach(
    handle: *const ffi::hsa_amd_ipc_memory_t,
    len: usize,
    num_agents: u32,
    agents: *const hsa_agent_t,
    mapped: *mut *mut c_void,
) -> hsa_status_t {
    let Some(attach) = originals().shared.ipc_attach else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { attach(handle, len, num_agents, agents, mapped) };
    record_shared(st, mapped);
    st
}

unsafe extern "C" fn ipc_memory_detach(mapped: *mut c_void) -> hsa_status_t {
    let Some(detach) = originals().shared.ipc_detach else {
        return ffi::HSA_STATUS_ERROR;
    };
    forget(mapped);
    // SAFETY: forwarded argument.
    unsafe { detach(mapped) }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn interop_map_buffer(
    num_agents: u32,
    agents: *mut hsa_agent_t,
    interop_handle: i32,
    flags: u32,
    size: *mut usize,
    ptr: *mut *mut c_void,
    metadata_size: *mut usize,
    metadata: *mut *const c_void,
) -> hsa_status_t {
    let Some(map) = originals().shared.interop_map else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe {
        map(
            num_agents,
            agents,
            interop_handle,
            flags,
            size,
            ptr,
            metadata_size,
            metadata,
        )
    };
    record_shared(st, ptr);
    st
}

unsafe extern "C" fn interop_unmap_buffer(ptr: *mut c_void) -> hsa_status_t {
    let Some(unmap) = originals().shared.interop_unmap else {
        return ffi::HSA_STATUS_ERROR;
    };
    forget(ptr);
    // SAFETY: forwarded argument.
    unsafe { unmap(ptr) }
}

/// Records memory another process or API shares with the application (the address a
/// successful attach or map wrote to `out`), with the kind the runtime's pointer facts give.
fn record_shared(st: hsa_status_t, out: *mut *mut c_void) {
    if st != ffi::HSA_STATUS_SUCCESS || out.is_null() || !state::records_allocations() {
        return;
    }
    // SAFETY: success wrote the mapped address.
    let ptr = unsafe { *out };
    boundary("shared memory mapping", || record_allocation(ptr), || ());
}

/// The GPU agent whose coarse-grained device pool is `pool`, if any.
fn pool_agent(rt: Runtime, pool: ffi::hsa_amd_memory_pool_t) -> Option<hsa_agent_t> {
    let iterate = rt.originals().kernel.iterate_agents?;
    let mut agents: Vec<hsa_agent_t> = Vec::new();
    unsafe extern "C" fn collect(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        let pushed = panic_boundary(
            "the agent collection",
            || {
                // SAFETY: `data` is the Vec passed by `pool_agent`, alive during the iteration.
                unsafe { &mut *data.cast::<Vec<hsa_agent_t>>() }.push(agent);
                true
            },
            || false,
        );
        if pushed {
            ffi::HSA_STATUS_SUCCESS
        } else {
            ffi::HSA_STATUS_INFO_BREAK
        }
    }
    // SAFETY: `collect` only uses `agents` during the call.
    unsafe { iterate(Some(collect), (&raw mut agents).cast()) };
    agents
        .into_iter()
        .filter(|a| rt.agent_is_gpu(*a))
        .find(|a| {
            crate::snapshot::device_pool(rt, *a).is_some_and(|(p, _)| p.handle == pool.handle)
        })
}

/// `hsa_amd_vmem_handle_create`: a handle of a GPU's device pool is listed, so that its
/// mappings are tracked as memory of that GPU.
unsafe extern "C" fn vmem_handle_create(
    pool: ffi::hsa_amd_memory_pool_t,
    size: usize,
    memory_type: u32,
    flags: u64,
    handle: *mut hsa_abi::modern::hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    let Some(create) = originals().vmem.handle_create else {
        return ffi::HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { create(pool, size, memory_type, flags, handle) };
    if st == ffi::HSA_STATUS_SUCCESS
        && state::records_allocations()
        && !handle.is_null()
        && !inventory::in_client_callback()
    {
        // SAFETY: success wrote the handle.
        let h = unsafe { *handle };
        boundary(
            "hsa_amd_vmem_handle_create",
            || {
                let Some(rt) = Runtime::get() else { return };
                match pool_agent(rt, pool) {
                    Some(agent) => VMEM_HANDLES.created(h.handle, agent.handle),
                    None => tracing::trace!(
                        "virtual-memory handle {:#x} is not of a GPU's device pool: not tracked",
                        h.handle
                    ),
                }
            },
            || (),
        );
    }
    st
}

unsafe extern "C" fn vmem_handle_release(
    handle: hsa_abi::modern::hsa_amd_vmem_alloc_handle_t,
) -> hsa_status_t {
    let Some(release) = originals().vmem.handle_release else {
        return ffi::HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    if state::current() != ToolState::Finished {
        boundary(
            "hsa_amd_vmem_handle_release",
            || VMEM_HANDLES.released(handle.handle),
            || (),
        );
    }
    // SAFETY: forwarded argument.
    unsafe { release(handle) }
}

/// `hsa_amd_vmem_map`: a mapping of a listed handle is tracked as an allocation of its agent.
unsafe extern "C" fn vmem_map(
    va: *mut c_void,
    size: usize,
    in_offset: usize,
    handle: hsa_abi::modern::hsa_amd_vmem_alloc_handle_t,
    flags: u64,
) -> hsa_status_t {
    let Some(map) = originals().vmem.map else {
        return ffi::HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { map(va, size, in_offset, handle, flags) };
    if st == ffi::HSA_STATUS_SUCCESS
        && state::records_allocations()
        && !va.is_null()
        && !inventory::in_client_callback()
    {
        boundary(
            "hsa_amd_vmem_map",
            || match VMEM_HANDLES.agent(handle.handle) {
                Some(agent) => {
                    forget_stale_locks(va as usize, size);
                    INVENTORY.record(inventory::Allocation {
                        base: va as usize,
                        size,
                        agent,
                    })
                }
                None => tracing::trace!(
                    "mapping {va:p} of an untracked virtual-memory handle: not tracked"
                ),
            },
            || (),
        );
    }
    st
}

/// `hsa_amd_vmem_unmap`: the mapping leaves the inventory.
unsafe extern "C" fn vmem_unmap(va: *mut c_void, size: usize) -> hsa_status_t {
    let Some(unmap) = originals().vmem.unmap else {
        return ffi::HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    forget(va);
    // SAFETY: forwarded arguments.
    unsafe { unmap(va, size) }
}

/// `hsa_amd_vmem_set_access`: agents given access to tracked mappings can write them, so
/// replays on them capture the mappings.
unsafe extern "C" fn vmem_set_access(
    va: *mut c_void,
    size: usize,
    desc: *const hsa_abi::modern::hsa_amd_memory_access_desc_t,
    desc_cnt: usize,
) -> hsa_status_t {
    let Some(set_access) = originals().vmem.set_access else {
        return ffi::HSA_STATUS_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { set_access(va, size, desc, desc_cnt) };
    if st == ffi::HSA_STATUS_SUCCESS
        && state::records_allocations()
        && !desc.is_null()
        && desc_cnt > 0
    {
        boundary(
            "hsa_amd_vmem_set_access",
            || {
                // SAFETY: the runtime accepted `desc_cnt` descriptors at `desc`.
                let list = unsafe { std::slice::from_raw_parts(desc, desc_cnt) };
                let agents: Vec<u64> = list
                    .iter()
                    .filter(|d| d.permissions != 0)
                    .map(|d| d.agent_handle.handle)
                    .collect();
                INVENTORY.grant_range(va as usize, size, &agents);
            },
            || (),
        );
    }
    st
}

/// `hsa_amd_agents_allow_access`: the agents given access to a tracked allocation can write it,
/// so replays on them capture it.
unsafe extern "C" fn agents_allow_access(
    num_agents: u32,
    agents: *const hsa_agent_t,
    flags: *const u32,
    ptr: *const c_void,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { (o.agents_allow_access)(num_agents, agents, flags, ptr) };
    if st == ffi::HSA_STATUS_SUCCESS
        && state::records_allocations()
        && !agents.is_null()
        && num_agents > 0
    {
        boundary(
            "hsa_amd_agents_allow_access",
            || {
                // SAFETY: the runtime accepted `num_agents` agents at `agents`.
                let list = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
                let handles: Vec<u64> = list.iter().map(|a| a.handle).collect();
                INVENTORY.grant(ptr as usize, &handles);
            },
            || (),
        );
    }
    st
}

/// Runs a host write into `dst` (a copy or fill of the application) under the reader side of the
/// gate of the agent owning `dst`, so it never lands inside a replay window (where the next
/// restore would revert it). An asynchronous one is counted in flight until `completion` fires.
/// One that waits on `deps` signals also waits while a deferred replay window holds an agent
/// (`replay::deferred::copy_fence`).
fn fenced_write(
    what: &str,
    dst: *const c_void,
    completion: Option<ffi::hsa_signal_t>,
    deps: u32,
    call: impl Fn() -> hsa_status_t,
) -> hsa_status_t {
    if !state::is_active() {
        return call();
    }
    let done = completion.map_or(0, |s| s.handle);
    boundary(what, || replay::deferred::copy_fence(deps, done), || ());
    let fence = boundary(what, || replay::fence_host_write(dst as usize), || None);
    let before = match (&fence, completion, Runtime::get()) {
        (Some(_), Some(s), Some(rt)) if s.handle != 0 => Some((s, rt.signal_load(s))),
        _ => None,
    };
    let st = call();
    if st == ffi::HSA_STATUS_SUCCESS
        && let (Some(f), Some((s, v))) = (&fence, before)
    {
        boundary(what, || f.count_async(s, v), || ());
    }
    st
}

/// `hsa_executable_destroy`: runs exclusively of any capture or restore of the executable's
/// memory (see [`crate::inventory::ExecutableInventory`]), and drops its kernel names.
unsafe extern "C" fn executable_destroy(executable: ffi::hsa_executable_t) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded argument of the application's call.
    let original = || unsafe { (o.executable_destroy)(executable) };
    if state::current() == ToolState::Finished {
        return original();
    }
    let mut status: Option<hsa_status_t> = None;
    boundary(
        "hsa_executable_destroy",
        || {
            crate::loader::EXECUTABLES.destroying(executable.handle, || {
                status = Some(original());
                replay::NAMES.forget_executable(executable.handle);
            })
        },
        || (),
    );
    // A panic before the runtime was called: call it now; after: report what it said.
    status.unwrap_or_else(original)
}

/// `hsa_executable_freeze`: the executable's kernels become dispatchable, so kernel objects the
/// loader did not know so far may resolve now.
unsafe extern "C" fn executable_freeze(
    executable: ffi::hsa_executable_t,
    options: *const c_char,
) -> hsa_status_t {
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { (originals().executable_freeze)(executable, options) };
    if st == ffi::HSA_STATUS_SUCCESS && state::current() != ToolState::Finished {
        boundary(
            "hsa_executable_freeze",
            || replay::NAMES.executables_changed(),
            || (),
        );
    }
    st
}

unsafe extern "C" fn memory_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the application's call.
    fenced_write("hsa_memory_copy", dst, None, 0, || unsafe {
        (o.memory_copy)(dst, src, size)
    })
}

unsafe extern "C" fn memory_fill(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    let Some(f) = originals().host_writes.memory_fill else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    fenced_write("hsa_amd_memory_fill", ptr, None, 0, || unsafe {
        f(ptr, value, count)
    })
}

/// Records where a new image's texels are, so host writes into it can be fenced.
fn image_created(what: &str, st: hsa_status_t, image: *mut ffi::hsa_ext_image_t, data: usize) {
    if st == ffi::HSA_STATUS_SUCCESS && !image.is_null() {
        boundary(
            what,
            // SAFETY: the runtime wrote the handle on success; the pointer is the caller's.
            || inventory::IMAGE_DATA.created(unsafe { (*image).handle }, data),
            || (),
        );
    }
}

unsafe extern "C" fn image_create(
    agent: hsa_agent_t,
    descriptor: *const ffi::hsa_ext_image_descriptor_t,
    data: *const c_void,
    access: ffi::hsa_access_permission_t,
    image: *mut ffi::hsa_ext_image_t,
) -> hsa_status_t {
    let Some(f) = originals().images.create else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe { f(agent, descriptor, data, access, image) };
    image_created("hsa_ext_image_create", st, image, data as usize);
    st
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn image_create_with_layout(
    agent: hsa_agent_t,
    descriptor: *const ffi::hsa_ext_image_descriptor_t,
    data: *const c_void,
    access: ffi::hsa_access_permission_t,
    layout: ffi::hsa_ext_image_data_layout_t,
    row_pitch: usize,
    slice_pitch: usize,
    image: *mut ffi::hsa_ext_image_t,
) -> hsa_status_t {
    let Some(f) = originals().images.create_with_layout else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    let st = unsafe {
        f(
            agent,
            descriptor,
            data,
            access,
            layout,
            row_pitch,
            slice_pitch,
            image,
        )
    };
    image_created("hsa_ext_image_create_with_layout", st, image, data as usize);
    st
}

unsafe extern "C" fn image_destroy(
    agent: hsa_agent_t,
    image: ffi::hsa_ext_image_t,
) -> hsa_status_t {
    let Some(f) = originals().images.destroy else {
        return ffi::HSA_STATUS_ERROR;
    };
    boundary(
        "hsa_ext_image_destroy",
        || inventory::IMAGE_DATA.destroyed(image.handle),
        || (),
    );
    // SAFETY: forwarded arguments of the application's call.
    unsafe { f(agent, image) }
}

/// The texels of `image` as the destination of a fenced host write (NULL, which no allocation
/// holds, for an image the tool did not see created).
fn image_texels(what: &str, image: ffi::hsa_ext_image_t) -> *const c_void {
    boundary(what, || inventory::IMAGE_DATA.data(image.handle), || None).unwrap_or(0)
        as *const c_void
}

unsafe extern "C" fn image_import(
    agent: hsa_agent_t,
    src: *const c_void,
    row_pitch: usize,
    slice_pitch: usize,
    dst: ffi::hsa_ext_image_t,
    region: *const ffi::hsa_ext_image_region_t,
) -> hsa_status_t {
    let Some(f) = originals().images.import else {
        return ffi::HSA_STATUS_ERROR;
    };
    const WHAT: &str = "hsa_ext_image_import";
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(WHAT, image_texels(WHAT, dst), None, 0, || unsafe {
        f(agent, src, row_pitch, slice_pitch, dst, region)
    })
}

unsafe extern "C" fn image_copy(
    agent: hsa_agent_t,
    src: ffi::hsa_ext_image_t,
    src_offset: *const ffi::hsa_dim3_t,
    dst: ffi::hsa_ext_image_t,
    dst_offset: *const ffi::hsa_dim3_t,
    range: *const ffi::hsa_dim3_t,
) -> hsa_status_t {
    let Some(f) = originals().images.copy else {
        return ffi::HSA_STATUS_ERROR;
    };
    const WHAT: &str = "hsa_ext_image_copy";
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(WHAT, image_texels(WHAT, dst), None, 0, || unsafe {
        f(agent, src, src_offset, dst, dst_offset, range)
    })
}

unsafe extern "C" fn image_clear(
    agent: hsa_agent_t,
    image: ffi::hsa_ext_image_t,
    data: *const c_void,
    region: *const ffi::hsa_ext_image_region_t,
) -> hsa_status_t {
    let Some(f) = originals().images.clear else {
        return ffi::HSA_STATUS_ERROR;
    };
    const WHAT: &str = "hsa_ext_image_clear";
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(WHAT, image_texels(WHAT, image), None, 0, || unsafe {
        f(agent, image, data, region)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn async_copy(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_deps: u32,
    deps: *const ffi::hsa_signal_t,
    completion: ffi::hsa_signal_t,
) -> hsa_status_t {
    let Some(f) = originals().host_writes.async_copy else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(
        "hsa_amd_memory_async_copy",
        dst,
        Some(completion),
        num_deps,
        || unsafe {
            f(
                dst, dst_agent, src, src_agent, size, num_deps, deps, completion,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn async_copy_on_engine(
    dst: *mut c_void,
    dst_agent: hsa_agent_t,
    src: *const c_void,
    src_agent: hsa_agent_t,
    size: usize,
    num_deps: u32,
    deps: *const ffi::hsa_signal_t,
    completion: ffi::hsa_signal_t,
    engine: u32,
    force_sdma: bool,
) -> hsa_status_t {
    let Some(f) = originals().host_writes.async_copy_on_engine else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(
        "hsa_amd_memory_async_copy_on_engine",
        dst,
        Some(completion),
        num_deps,
        || unsafe {
            f(
                dst, dst_agent, src, src_agent, size, num_deps, deps, completion, engine,
                force_sdma,
            )
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn async_copy_rect(
    dst: *const ffi::hsa_pitched_ptr_t,
    dst_offset: *const ffi::hsa_dim3_t,
    src: *const ffi::hsa_pitched_ptr_t,
    src_offset: *const ffi::hsa_dim3_t,
    range: *const ffi::hsa_dim3_t,
    agent: hsa_agent_t,
    dir: ffi::hsa_amd_copy_direction_t,
    num_deps: u32,
    deps: *const ffi::hsa_signal_t,
    completion: ffi::hsa_signal_t,
) -> hsa_status_t {
    let Some(f) = originals().host_writes.async_copy_rect else {
        return ffi::HSA_STATUS_ERROR;
    };
    // SAFETY: a non-NULL `dst` points to the caller's pitched-pointer description.
    let base = if dst.is_null() {
        std::ptr::null()
    } else {
        unsafe { (*dst).base.cast_const() }
    };
    // SAFETY: forwarded arguments of the application's call.
    fenced_write(
        "hsa_amd_memory_async_copy_rect",
        base,
        Some(completion),
        num_deps,
        || unsafe {
            f(
                dst, dst_offset, src, src_offset, range, agent, dir, num_deps, deps, completion,
            )
        },
    )
}

/// A store into an application signal: it is being used again, so copies counted on it are
/// complete (see [`crate::replay::signal_reused`]).
fn signal_stored(what: &str, signal: ffi::hsa_signal_t) {
    // Copies are counted only while the replay service is on: one relaxed load otherwise.
    if state::service() != ReplayService::Off && state::is_active() {
        boundary(what, || replay::signal_reused(signal), || ());
    }
}

/// The four ways an application stores into a signal; one interceptor serves them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum SignalStore {
    Relaxed,
    Screlease,
    SilentRelaxed,
    SilentScrelease,
}

impl SignalStore {
    const ALL: [SignalStore; 4] = [
        SignalStore::Relaxed,
        SignalStore::Screlease,
        SignalStore::SilentRelaxed,
        SignalStore::SilentScrelease,
    ];

    /// The runtime's entry this store wraps.
    fn entry(self) -> &'static str {
        match self {
            SignalStore::Relaxed => "hsa_signal_store_relaxed",
            SignalStore::Screlease => "hsa_signal_store_screlease",
            SignalStore::SilentRelaxed => "hsa_signal_silent_store_relaxed",
            SignalStore::SilentScrelease => "hsa_signal_silent_store_screlease",
        }
    }

    /// The original the interceptor chains to.
    fn original(
        self,
        o: &Originals,
    ) -> unsafe extern "C" fn(ffi::hsa_signal_t, ffi::hsa_signal_value_t) {
        match self {
            SignalStore::Relaxed => o.signal_store_relaxed,
            SignalStore::Screlease => o.signal_store_screlease,
            SignalStore::SilentRelaxed => o.signal_silent_store_relaxed,
            SignalStore::SilentScrelease => o.signal_silent_store_screlease,
        }
    }
}

/// The interceptor of every signal store (`STORE` is a [`SignalStore`] as `u8`): notes the
/// reuse, then forwards to the runtime's own store.
unsafe extern "C" fn signal_store<const STORE: u8>(
    signal: ffi::hsa_signal_t,
    value: ffi::hsa_signal_value_t,
) {
    let store = SignalStore::ALL[usize::from(STORE)];
    signal_stored(store.entry(), signal);
    // SAFETY: forwarded arguments.
    unsafe { store.original(originals())(signal, value) }
}

unsafe extern "C" fn signal_destroy(signal: ffi::hsa_signal_t) -> hsa_status_t {
    if state::current() != ToolState::Finished {
        boundary(
            "hsa_signal_destroy",
            || replay::signal_destroyed(signal),
            || (),
        );
    }
    // SAFETY: forwarded argument.
    unsafe { (originals().signal_destroy)(signal) }
}

use hsa_abi::modern::hsa_queue_error_callback as ErrorCallback;

unsafe extern "C" fn queue_create(
    agent: hsa_agent_t,
    size: u32,
    type_: ffi::hsa_queue_type32_t,
    callback: ErrorCallback,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the application's call.
    let original = || unsafe {
        (o.queue_create)(
            agent,
            size,
            type_,
            callback,
            data,
            private_segment_size,
            group_segment_size,
            queue,
        )
    };
    if !state::is_active() || queue.is_null() {
        return original();
    }
    // `OnUnload` waits for a queue creation in progress, so the runtime cannot shut down between
    // the creation and the interceptor's registration.
    let Some(_creation) = state::Submission::enter() else {
        return original();
    };
    boundary(
        "hsa_queue_create",
        || {
            // The runtime gets the tool's error callback, which records the error for the
            // replay window and calls the application's: the fault lives as long as the queue.
            let fault = Arc::new(crate::queue_fault::QueueFault::new(callback, data));
            // SAFETY: forwarded arguments; the intercept queue has the same contract. The
            // callback data outlives the queue (held by its `QueueState`).
            let st = unsafe {
                (o.intercept_create)(
                    agent,
                    size,
                    type_,
                    Some(crate::queue_fault::on_queue_error),
                    Arc::as_ptr(&fault).cast_mut().cast(),
                    private_segment_size,
                    group_segment_size,
                    queue,
                )
            };
            if st != ffi::HSA_STATUS_SUCCESS {
                tracing::warn!(
                    "hsa_amd_queue_intercept_create failed ({st:#x}); the queue is created without replay support"
                );
                return create_untracked(agent, queue, original);
            }
            // SAFETY: success wrote the queue.
            let q = unsafe { *queue };
            enable_pass_timing(q);
            fault.created(q);
            track_queue(agent, q, fault)
        },
        original,
    )
}

/// Creates the application's queue the plain way (the intercept queue was refused): it runs,
/// and replay knows it as a queue it cannot see into.
fn create_untracked(
    agent: hsa_agent_t,
    queue: *mut *mut hsa_queue_t,
    original: impl FnOnce() -> hsa_status_t,
) -> hsa_status_t {
    let st = original();
    if st == ffi::HSA_STATUS_SUCCESS {
        // SAFETY: success wrote the queue.
        coverage::foreign_queue_created(unsafe { *queue } as usize, agent.handle);
    }
    st
}

/// Turns on the runtime's dispatch timestamps on `q`, which pass times come from.
fn enable_pass_timing(q: *mut hsa_queue_t) {
    // SAFETY: a queue the runtime just created.
    let st = unsafe { (originals().profiler_enable)(q, 1) };
    if st != ffi::HSA_STATUS_SUCCESS {
        tracing::warn!(
            "enabling profiling on queue {q:p} failed ({st:#x}); pass times will be unavailable"
        );
    }
}

/// Registers the write interceptor of the new intercept queue `q` and records its state;
/// a queue whose interceptor the runtime refuses runs unreplayed. Always a success: the
/// application's queue exists either way.
fn track_queue(
    agent: hsa_agent_t,
    q: *mut hsa_queue_t,
    fault: Arc<crate::queue_fault::QueueFault>,
) -> hsa_status_t {
    let Some(rt) = Runtime::get() else {
        // The runtime keeps the error callback's data until the queue is destroyed.
        let _ = Arc::into_raw(fault);
        return ffi::HSA_STATUS_SUCCESS;
    };
    let state = Arc::new(QueueState {
        fault: fault.clone(),
        // SAFETY: the runtime just created `q`.
        ..unsafe { QueueState::new(rt, agent, q) }
    });
    let raw = Arc::into_raw(state.clone());
    // SAFETY: `raw` stays alive until the queue is destroyed (`queue_destroy`).
    let st = unsafe {
        (originals().intercept_register)(q, Some(write_interceptor), raw.cast_mut().cast())
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        tracing::warn!(
            "registering the write interceptor on queue {q:p} failed ({st:#x}); the queue is not replayed"
        );
        // SAFETY: the runtime refused the pointer; reclaim it.
        drop(unsafe { Arc::from_raw(raw) });
        if let Some(c) = state.counter {
            rt.signal_destroy(c);
        }
        coverage::foreign_queue_created(q as usize, agent.handle);
        // The runtime keeps the error callback's data until the queue is destroyed.
        let _ = Arc::into_raw(fault);
        return ffi::HSA_STATUS_SUCCESS;
    }
    if let Some(c) = state.counter {
        replay::IN_FLIGHT.add_counter(agent.handle, state.queue_id, c);
    }
    QUEUES.insert(state, raw as usize);
    ffi::HSA_STATUS_SUCCESS
}

unsafe extern "C" fn queue_destroy(queue: *mut hsa_queue_t) -> hsa_status_t {
    let o = originals();
    let entry = if state::current() == ToolState::Finished {
        None
    } else {
        boundary(
            "hsa_queue_destroy",
            || {
                let ours = QUEUES.remove(queue);
                if ours.is_none() {
                    coverage::foreign_queue_destroyed(queue as usize);
                }
                ours
            },
            || None,
        )
    };
    if let Some((q, _)) = &entry {
        boundary(
            "hsa_queue_destroy",
            || replay::deferred::queue_destroyed(q.queue_id),
            || (),
        );
        // The queue's last completion handlers report to the client; let them finish.
        replay::settle_handlers(std::slice::from_ref(q));
        boundary(
            "hsa_queue_destroy",
            || single_use_writer::queue_destroyed(q.queue_id),
            || (),
        );
    }
    let gates = entry
        .as_ref()
        .map(|(q, _)| std::mem::take(&mut *q.gates.lock()))
        .unwrap_or_default();
    let counter = entry.as_ref().and_then(|(q, _)| q.counter);
    if let Some(c) = counter {
        boundary(
            "hsa_queue_destroy",
            || replay::IN_FLIGHT.remove_counter(c),
            || (),
        );
    }
    // SAFETY: forwarded argument.
    let st = unsafe { (o.queue_destroy)(queue) };
    if let (Some(c), Some(rt)) = (counter, Runtime::get()) {
        // Nothing reads it any more: the drains forgot it and its barrier packets went with the queue.
        rt.signal_destroy(c);
    }
    if let Some(rt) = Runtime::get() {
        // The packets that would have lowered them went with the queue.
        gates.iter().for_each(|g| rt.signal_destroy(g.passed));
    }
    if let Some((_, raw)) = entry {
        // SAFETY: the interceptor user data leaked at creation; the queue is gone, so no
        // interceptor call can use it any more.
        unsafe { Arc::decrement_strong_count(raw as *const QueueState) };
    }
    st
}

/// `hsa_amd_queue_intercept_create` called by the application or another tool: the queue is not
/// the tool's (its work is neither replayed nor drained), so replays on its agent decline while
/// it lives (see [`coverage`]).
unsafe extern "C" fn intercept_create(
    agent: hsa_agent_t,
    size: u32,
    type_: ffi::hsa_queue_type32_t,
    callback: ErrorCallback,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let o = originals();
    // SAFETY: forwarded arguments of the caller.
    let st = unsafe {
        (o.intercept_create)(
            agent,
            size,
            type_,
            callback,
            data,
            private_segment_size,
            group_segment_size,
            queue,
        )
    };
    if st == ffi::HSA_STATUS_SUCCESS && state::is_active() && !queue.is_null() {
        // SAFETY: success wrote the queue.
        let q = unsafe { *queue } as usize;
        boundary(
            "hsa_amd_queue_intercept_create",
            || coverage::foreign_queue_created(q, agent.handle),
            || (),
        );
    }
    st
}

/// The write interceptor registered on every queue the tool creates. With no replay service it
/// forwards the packets unchanged after one relaxed load; otherwise it runs the replay slow path.
///
/// # Safety
/// Called by the runtime with `count` packets, the queue's registered `data` and a writer.
pub unsafe extern "C" fn write_interceptor(
    pkts: *const c_void,
    count: u64,
    user_pkt_index: u64,
    data: *mut c_void,
    writer: hsa_amd_queue_intercept_packet_writer,
) {
    let Some(writer) = writer else { return };
    // Fast path: one relaxed load, no lock, no allocation, and no stack frame: everything else
    // is in `submit_with_service`, so this compiles to a few compares and a tail call.
    if state::service() == ReplayService::Off || data.is_null() {
        // SAFETY: forwarding the runtime's own packets unchanged.
        unsafe { writer(pkts, count) };
        return;
    }
    // SAFETY: the runtime's arguments, forwarded.
    unsafe { submit_with_service(pkts, count, user_pkt_index, data, writer) }
}

/// The write interceptor's path while a replay service is on: the submission is offered to the
/// replay engine. Kept out of line so that the fast path above needs no stack frame.
///
/// # Safety
/// As [`write_interceptor`], with `data` non-NULL.
#[inline(never)]
unsafe fn submit_with_service(
    pkts: *const c_void,
    count: u64,
    user_pkt_index: u64,
    data: *mut c_void,
    writer: unsafe extern "C" fn(*const c_void, u64),
) {
    // A reference of this call's own: an application thread may destroy the queue while this
    // submission is still in the handler (its dispatch can complete first), and the
    // registration's reference goes with the queue.
    // SAFETY: `data` is the `Arc<QueueState>` pointer registered with this queue (from
    // `Arc::into_raw`), alive until the queue is destroyed. vhsa's destroy waits for a handler
    // call in progress; on a runtime that does not, only the instructions before this line are
    // exposed.
    let q = unsafe {
        Arc::increment_strong_count(data.cast::<QueueState>().cast_const());
        Arc::from_raw(data.cast::<QueueState>().cast_const())
    };
    // `OnUnload` waits for this submission before the runtime tears down; once it started,
    // the packets go through unchanged.
    let Some(_submission) = state::Submission::enter() else {
        // SAFETY: as in the fast path.
        unsafe { writer(pkts, count) };
        return;
    };
    let mut forwarded: usize = 0;
    // ROCm 5.x's writer works once per handler call: later writes go to a side queue.
    let writer = single_use_writer::enter(writer, q.agent, q.queue_id);
    let submitted = panic_boundary(
        "the write interceptor",
        || {
            // SAFETY: the runtime passes `count` packets.
            unsafe {
                replay::on_submit(
                    &q,
                    pkts,
                    count,
                    user_pkt_index + count,
                    writer,
                    &mut forwarded,
                )
            };
            true
        },
        || false,
    );
    single_use_writer::leave();
    if !submitted {
        let done = (forwarded as u64).min(count);
        if done < count {
            // SAFETY: as in the fast path: the packets not forwarded yet, unchanged.
            unsafe {
                writer(
                    pkts.cast::<u8>().add(done as usize * 64).cast(),
                    count - done,
                )
            };
        }
    }
}

/// ROCm 5.x's intercept-queue packet writer may be called only once per handler call: it steps
/// down the handler chain with a thread-local index it never restores (ROCm 6.0 restores it), so
/// a second call runs past the bottom of the chain. On those runtimes (root table major 1) the
/// first write of a handler call goes through the writer, followed by a barrier packet that
/// completes a fence signal of the queue; every later write of the same call goes to a side queue
/// of its own (one per intercepted queue, created with the runtime's original `hsa_queue_create`,
/// profiling on), behind a barrier packet that waits for that fence. So later writes run after
/// everything written before them, as on one queue, and never after a fault suspended the queue.
/// The fence and the side queue are released when their intercepted queue is destroyed, and
/// at `OnUnload` (the side queue first runs what it holds, bounded by the drain timeout).
mod single_use_writer {
    use crate::runtime;
    use crate::tool_queue::{self, Packet, Writer};
    use hsa_abi::ffi::{self, hsa_agent_t, hsa_signal_t};
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::ffi::c_void;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, OnceLock};

    /// Set by `OnLoad` on a ROCm 5.x runtime.
    pub(super) static NEEDED: AtomicBool = AtomicBool::new(false);

    /// The handler call in progress on this thread.
    #[derive(Clone, Copy)]
    struct Frame {
        real: Writer,
        agent: u64,
        /// The intercepted queue's id (never reused in a process).
        queue: u64,
        writes: u32,
    }

    thread_local! {
        static FRAME: Cell<Option<Frame>> = const { Cell::new(None) };
    }

    /// Per intercepted queue: the fence its first writes complete, and its side queue (none until
    /// a later write needs it).
    struct Side {
        fence: hsa_signal_t,
        queue: Option<tool_queue::ToolQueue>,
    }
    fn sides() -> &'static Mutex<HashMap<u64, Side>> {
        static SIDES: OnceLock<Mutex<HashMap<u64, Side>>> = OnceLock::new();
        SIDES.get_or_init(Default::default)
    }

    /// The writer to hand to the replay for this handler call of queue `queue` (its id).
    pub(super) fn enter(real: Writer, agent: hsa_agent_t, queue: u64) -> Writer {
        if !NEEDED.load(Ordering::Relaxed) {
            return real;
        }
        FRAME.with(|f| {
            f.set(Some(Frame {
                real,
                agent: agent.handle,
                queue,
                writes: 0,
            }))
        });
        write
    }

    /// The handler call is over.
    pub(super) fn leave() {
        FRAME.with(|f| f.set(None));
    }

    unsafe extern "C" fn write(pkts: *const c_void, count: u64) {
        let Some(mut frame) = FRAME.with(|f| f.get()) else {
            return;
        };
        frame.writes += 1;
        FRAME.with(|f| f.set(Some(frame)));
        let Some(side) = side(&frame, frame.writes > 1) else {
            if frame.writes == 1 {
                // SAFETY: the runtime's writer, called once in this handler call.
                unsafe { (frame.real)(pkts, count) };
            }
            return;
        };
        // SAFETY: `count` packets at `pkts`, as the writer contract gives them.
        let given = unsafe { std::slice::from_raw_parts(pkts.cast::<Packet>(), count as usize) };
        if frame.writes == 1 {
            let Some(o) = runtime::originals() else {
                return;
            };
            let mut all = Vec::with_capacity(given.len() + 1);
            all.extend_from_slice(given);
            all.push(tool_queue::barrier(0, side.fence.handle));
            // SAFETY: the runtime's entry on the queue's own fence signal.
            unsafe { (o.signal_add_screlease)(side.fence, 1) };
            // SAFETY: the runtime's writer, called once in this handler call.
            unsafe { (frame.real)(all.as_ptr().cast(), all.len() as u64) };
        } else {
            let mut all = Vec::with_capacity(given.len() + 1);
            all.push(tool_queue::barrier(side.fence.handle, 0));
            all.extend_from_slice(given);
            if let Some(queue) = side.queue {
                queue.submit(&all);
            }
        }
    }

    /// Releases the fence and the side queue of the intercepted queue `queue` (its id), which
    /// is being destroyed (called before the runtime destroys it, so a barrier of the side queue
    /// waiting on the fence can still be satisfied).
    pub(super) fn queue_destroyed(queue: u64) {
        let side = sides().lock().ok().and_then(|mut m| m.remove(&queue));
        if let Some(side) = side {
            release(queue, side);
        }
    }

    /// Releases every fence and side queue (the tool unloads; no submission is in flight).
    pub(super) fn release_all() {
        let all: Vec<(u64, Side)> = sides()
            .lock()
            .map(|mut m| m.drain().collect())
            .unwrap_or_default();
        for (queue, side) in all {
            release(queue, side);
        }
    }

    /// Destroys a side queue once it ran what it holds (bounded by the drain timeout), then
    /// its fence.
    fn release(queue: u64, side: Side) {
        let Some(o) = runtime::originals() else {
            return;
        };
        if let Some(side_queue) = side.queue {
            if !side_queue.idle(*crate::replay::DRAIN_TIMEOUT) {
                tracing::warn!(
                    "the side queue of queue {queue} still held replay writes after {} ms; it is destroyed with them",
                    crate::replay::DRAIN_TIMEOUT.as_millis()
                );
            }
            // Nothing writes to it any more (its intercepted queue is being destroyed, or the
            // tool unloads).
            side_queue.destroy();
        }
        // SAFETY: the tool's own fence signal; only the side queue's barriers (gone) and the
        // intercepted queue's writes (over) used it.
        unsafe { (o.signal_destroy)(side.fence) };
        tracing::debug!(
            "kreplay: released the replay-write fence{} of queue {queue}",
            if side.queue.is_none() {
                ""
            } else {
                " and side queue"
            }
        );
    }

    /// The side state of the frame's queue: its fence, created on first use, and its side queue
    /// when `with_queue` (created on the first later write).
    fn side(frame: &Frame, with_queue: bool) -> Option<Side> {
        let o = runtime::originals()?;
        let mut map = sides().lock().ok()?;
        if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(frame.queue) {
            let mut fence = hsa_signal_t { handle: 0 };
            // SAFETY: the runtime's original entry with a valid out-pointer.
            let st = unsafe { (o.amd_signal_create)(0, 0, std::ptr::null(), 0, &mut fence) };
            if st != ffi::HSA_STATUS_SUCCESS {
                tracing::error!(
                    "cannot create the fence signal for replay writes (status {st:#x})"
                );
                return None;
            }
            slot.insert(Side { fence, queue: None });
        }
        let s = map.get_mut(&frame.queue)?;
        if with_queue && s.queue.is_none() {
            let agent = hsa_agent_t {
                handle: frame.agent,
            };
            let q = tool_queue::create(agent)
                .map_err(|st| {
                    tracing::error!(
                        "cannot create the side queue for replay writes (status {st:#x})"
                    )
                })
                .ok()?;
            tracing::debug!(
                "kreplay: created a side queue for the replay writes of queue {}",
                frame.queue
            );
            s.queue = Some(q);
        }
        Some(Side {
            fence: s.fence,
            queue: s.queue,
        })
    }
}

/// Why `OnLoad` declined.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error("the HSA API table pointer is NULL")]
    NullTable,
    #[error(
        "the runtime's root API table has major version {0}; kreplay needs ROCm 5.0 or later (major 1 to 3)"
    )]
    RootMajor(u32),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(
        "another copy of kreplay ({0}) is already loaded in this process and intercepts the runtime"
    )]
    SecondCopy(String),
    #[error(
        "kreplay is already the active tool of this runtime instance (OnLoad called twice without OnUnload)"
    )]
    AlreadyLoaded,
    #[error(
        "the API table still holds kreplay's own entries from an earlier runtime instance, and no original entries were saved"
    )]
    StillWrapped,
}

/// Path of the library holding `addr`, when it is another copy of kreplay.
fn other_kreplay_copy(addr: *const c_void) -> Option<String> {
    let mut mine: libc::Dl_info = unsafe_zeroed();
    let mut theirs: libc::Dl_info = unsafe_zeroed();
    // SAFETY: out-pointers to locals; addresses of functions.
    unsafe {
        if libc::dladdr(write_interceptor as *const c_void, &mut mine) == 0
            || libc::dladdr(addr, &mut theirs) == 0
        {
            return None;
        }
    }
    if theirs.dli_fbase == mine.dli_fbase || theirs.dli_fname.is_null() {
        return None;
    }
    // SAFETY: `dli_fname` is a NUL-terminated path owned by the loader.
    let handle = unsafe { libc::dlopen(theirs.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return None;
    }
    // SAFETY: a live handle; the symbol name is NUL-terminated.
    let sym = unsafe { libc::dlsym(handle, c"kreplay_register".as_ptr()) };
    // SAFETY: balances the NOLOAD open.
    unsafe { libc::dlclose(handle) };
    // SAFETY: as above.
    let name = unsafe { std::ffi::CStr::from_ptr(theirs.dli_fname) }
        .to_string_lossy()
        .into_owned();
    (!sym.is_null()).then_some(name)
}

/// The `HSA_TOOLS_LIB` entries listed (and loaded) before this library: they ran their
/// `OnLoad` before the allocate entries were wrapped. Empty when this library is not found in
/// the list (loaded some other way).
fn tools_loaded_before_me() -> Vec<String> {
    let Ok(list) = std::env::var("HSA_TOOLS_LIB") else {
        return Vec::new();
    };
    let mut mine: libc::Dl_info = unsafe_zeroed();
    // SAFETY: out-pointer to a local; the address of a function of this library.
    if unsafe { libc::dladdr(write_interceptor as *const c_void, &mut mine) } == 0
        || mine.dli_fname.is_null()
    {
        return Vec::new();
    }
    // SAFETY: the loader's NUL-terminated path of this library; NOLOAD only looks it up.
    let me = unsafe { libc::dlopen(mine.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if me.is_null() {
        return Vec::new();
    }
    let mut before = Vec::new();
    let mut found = false;
    // A value the runtime could not parse loaded no tool at all.
    for entry in hsa_abi::tools_lib::parse(&list).unwrap_or_default() {
        let Ok(c) = std::ffi::CString::new(entry.as_str()) else {
            continue;
        };
        // SAFETY: a NUL-terminated name; NOLOAD only looks up an already loaded object.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        // SAFETY: balances the NOLOAD open above.
        unsafe { libc::dlclose(h) };
        if h == me {
            found = true;
            break;
        }
        before.push(entry);
    }
    // SAFETY: balances the NOLOAD open of this library.
    unsafe { libc::dlclose(me) };
    if found { before } else { Vec::new() }
}

/// Keeps this library mapped for the life of the process, whatever the runtime does with its
/// handle: queues keep calling [`write_interceptor`] (a thread may ring a doorbell while
/// `hsa_shut_down` runs, and the runtime closes its tools before it destroys the queues), and a
/// later `hsa_init` loads the tool again with its state intact. False when the loader refused.
fn pin_in_memory() -> bool {
    let mut mine: libc::Dl_info = unsafe_zeroed();
    // SAFETY: out-pointer to a local; the address of a function of this library.
    if unsafe { libc::dladdr(write_interceptor as *const c_void, &mut mine) } == 0
        || mine.dli_fname.is_null()
    {
        return false;
    }
    // SAFETY: the loader's NUL-terminated path of this library, already loaded (NOLOAD). The
    // handle is deliberately never closed.
    let h = unsafe {
        libc::dlopen(
            mine.dli_fname,
            libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    };
    !h.is_null()
}

fn unsafe_zeroed() -> libc::Dl_info {
    // SAFETY: `Dl_info` is plain data for which all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// Writes one table slot per line of `slots!`: `when` the runtime provides what the
/// interceptor chains to, `table.field` gets `function` as the slot's type.
macro_rules! slots {
    ($($when:expr => $table:ident: $ty:ident . $field:ident = $f:expr, as $fty:ty;)*) => {
        $(
            if $when {
                write_slot!($table, $ty, $field, {
                    let f: $fty = Some($f);
                    f
                })
                .map_err(TableError::from)?;
            }
        )*
    };
}

/// Puts every interceptor into the runtime's tables, one line per slot. An interceptor whose
/// originals the runtime lacks is not installed (the application then calls the runtime
/// directly, and the tool never needs that entry).
fn install_interceptors(
    core: TablePtr<CoreApiTable>,
    amd: TablePtr<AmdExtTable>,
    o: &Originals,
) -> Result<(), LoadError> {
    use hsa_abi::modern as m;
    const RELAXED: u8 = SignalStore::Relaxed as u8;
    const SCRELEASE: u8 = SignalStore::Screlease as u8;
    const SILENT_RELAXED: u8 = SignalStore::SilentRelaxed as u8;
    const SILENT_SCRELEASE: u8 = SignalStore::SilentScrelease as u8;
    let w = o.host_writes;
    let v = o.vmem;
    let locks = o.memory_lock.is_some() && o.memory_unlock.is_some();
    let ipc = o.shared.ipc_attach.is_some() && o.shared.ipc_detach.is_some();
    let interop = o.shared.interop_map.is_some() && o.shared.interop_unmap.is_some();
    let vmem = v.handle_create.is_some()
        && v.handle_release.is_some()
        && v.map.is_some()
        && v.unmap.is_some();
    slots! {
        true => core: CoreApiTable.hsa_queue_create_fn = queue_create, as ffi::hsa_queue_create_fn_t;
        true => core: CoreApiTable.hsa_queue_destroy_fn = queue_destroy, as ffi::hsa_queue_destroy_fn_t;
        true => core: CoreApiTable.hsa_memory_allocate_fn = memory_allocate, as ffi::hsa_memory_allocate_fn_t;
        true => core: CoreApiTable.hsa_memory_free_fn = memory_free, as ffi::hsa_memory_free_fn_t;
        true => amd: AmdExtTable.hsa_amd_memory_pool_allocate_fn = pool_allocate, as ffi::hsa_amd_memory_pool_allocate_fn_t;
        true => amd: AmdExtTable.hsa_amd_memory_pool_free_fn = pool_free, as ffi::hsa_amd_memory_pool_free_fn_t;
        true => core: CoreApiTable.hsa_executable_destroy_fn = executable_destroy, as ffi::hsa_executable_destroy_fn_t;
        true => core: CoreApiTable.hsa_executable_freeze_fn = executable_freeze, as ffi::hsa_executable_freeze_fn_t;
        true => amd: AmdExtTable.hsa_amd_agents_allow_access_fn = agents_allow_access, as ffi::hsa_amd_agents_allow_access_fn_t;
        true => core: CoreApiTable.hsa_memory_copy_fn = memory_copy, as ffi::hsa_memory_copy_fn_t;
        true => core: CoreApiTable.hsa_signal_destroy_fn = signal_destroy, as ffi::hsa_signal_destroy_fn_t;
        true => core: CoreApiTable.hsa_signal_store_relaxed_fn = signal_store::<RELAXED>, as ffi::hsa_signal_store_relaxed_fn_t;
        true => core: CoreApiTable.hsa_signal_store_screlease_fn = signal_store::<SCRELEASE>, as ffi::hsa_signal_store_screlease_fn_t;
        true => core: CoreApiTable.hsa_signal_silent_store_relaxed_fn = signal_store::<SILENT_RELAXED>, as ffi::hsa_signal_silent_store_relaxed_fn_t;
        true => core: CoreApiTable.hsa_signal_silent_store_screlease_fn = signal_store::<SILENT_SCRELEASE>, as ffi::hsa_signal_silent_store_screlease_fn_t;
        w.memory_fill.is_some() => amd: AmdExtTable.hsa_amd_memory_fill_fn = memory_fill, as ffi::hsa_amd_memory_fill_fn_t;
        w.async_copy.is_some() => amd: AmdExtTable.hsa_amd_memory_async_copy_fn = async_copy, as ffi::hsa_amd_memory_async_copy_fn_t;
        w.async_copy_on_engine.is_some() => amd: AmdExtTable.hsa_amd_memory_async_copy_on_engine_fn = async_copy_on_engine, as m::hsa_amd_memory_async_copy_on_engine_fn_t;
        w.async_copy_rect.is_some() => amd: AmdExtTable.hsa_amd_memory_async_copy_rect_fn = async_copy_rect, as ffi::hsa_amd_memory_async_copy_rect_fn_t;
        locks => amd: AmdExtTable.hsa_amd_memory_lock_fn = memory_lock, as ffi::hsa_amd_memory_lock_fn_t;
        locks => amd: AmdExtTable.hsa_amd_memory_unlock_fn = memory_unlock, as ffi::hsa_amd_memory_unlock_fn_t;
        locks && o.memory_lock_to_pool.is_some() => amd: AmdExtTable.hsa_amd_memory_lock_to_pool_fn = memory_lock_to_pool, as ffi::hsa_amd_memory_lock_to_pool_fn_t;
        ipc => amd: AmdExtTable.hsa_amd_ipc_memory_attach_fn = ipc_memory_attach, as ffi::hsa_amd_ipc_memory_attach_fn_t;
        ipc => amd: AmdExtTable.hsa_amd_ipc_memory_detach_fn = ipc_memory_detach, as ffi::hsa_amd_ipc_memory_detach_fn_t;
        interop => amd: AmdExtTable.hsa_amd_interop_map_buffer_fn = interop_map_buffer, as ffi::hsa_amd_interop_map_buffer_fn_t;
        interop => amd: AmdExtTable.hsa_amd_interop_unmap_buffer_fn = interop_unmap_buffer, as ffi::hsa_amd_interop_unmap_buffer_fn_t;
        vmem => amd: AmdExtTable.hsa_amd_vmem_handle_create_fn = vmem_handle_create, as m::hsa_amd_vmem_handle_create_fn_t;
        vmem => amd: AmdExtTable.hsa_amd_vmem_handle_release_fn = vmem_handle_release, as m::hsa_amd_vmem_handle_release_fn_t;
        vmem => amd: AmdExtTable.hsa_amd_vmem_map_fn = vmem_map, as m::hsa_amd_vmem_map_fn_t;
        vmem => amd: AmdExtTable.hsa_amd_vmem_unmap_fn = vmem_unmap, as m::hsa_amd_vmem_unmap_fn_t;
        v.set_access.is_some() => amd: AmdExtTable.hsa_amd_vmem_set_access_fn = vmem_set_access, as m::hsa_amd_vmem_set_access_fn_t;
        true => amd: AmdExtTable.hsa_amd_queue_intercept_create_fn = intercept_create, as m::hsa_amd_queue_intercept_create_fn_t;
    }
    Ok(())
}

/// Puts the image interceptors into the runtime's image table (each where the runtime has the
/// entry).
fn install_image_interceptors(
    image: TablePtr<ImageExtTable>,
    e: &runtime::ImageEntries,
) -> Result<(), LoadError> {
    slots! {
        e.create.is_some() => image: ImageExtTable.hsa_ext_image_create_fn = image_create, as ffi::hsa_ext_image_create_fn_t;
        e.create_with_layout.is_some() => image: ImageExtTable.hsa_ext_image_create_with_layout_fn = image_create_with_layout, as ffi::hsa_ext_image_create_with_layout_fn_t;
        e.destroy.is_some() => image: ImageExtTable.hsa_ext_image_destroy_fn = image_destroy, as ffi::hsa_ext_image_destroy_fn_t;
        e.import.is_some() => image: ImageExtTable.hsa_ext_image_import_fn = image_import, as ffi::hsa_ext_image_import_fn_t;
        e.copy.is_some() => image: ImageExtTable.hsa_ext_image_copy_fn = image_copy, as ffi::hsa_ext_image_copy_fn_t;
        e.clear.is_some() => image: ImageExtTable.hsa_ext_image_clear_fn = image_clear, as ffi::hsa_ext_image_clear_fn_t;
    }
    Ok(())
}

fn load(table: *mut HsaApiTable) -> Result<(), LoadError> {
    if table.is_null() {
        return Err(LoadError::NullTable);
    }
    let from = state::current();
    if !matches!(from, ToolState::Uninitialised | ToolState::Finished) {
        return Err(LoadError::AlreadyLoaded);
    }
    // SAFETY: the runtime hands a live root table; its header is readable.
    let root = unsafe { *table };
    // Major 1 is ROCm 5.x: its AMD extension table is remapped by hsa-abi (`layout`).
    if !(hsa_abi::ROOT_MAJOR_LEGACY..=hsa_abi::ROOT_MAJOR).contains(&root.version.major_id) {
        return Err(LoadError::RootMajor(root.version.major_id));
    }
    single_use_writer::NEEDED.store(
        root.version.major_id == hsa_abi::ROOT_MAJOR_LEGACY,
        std::sync::atomic::Ordering::Relaxed,
    );
    let covers = |offset: usize| offset + 8 <= root.version.minor_id as usize;
    if !covers(std::mem::offset_of!(HsaApiTable, amd_ext_)) {
        return Err(TableError::Missing("amd_ext").into());
    }
    // SAFETY: pointers from the live root table, valid while the runtime is initialised.
    let core = unsafe { TablePtr::new(root.core_) }.ok_or(TableError::Missing("core"))?;
    // SAFETY: as above.
    let amd = unsafe { TablePtr::new(root.amd_ext_) }.ok_or(TableError::Missing("amd_ext"))?;
    // SAFETY: as above; the image table is optional (a runtime without the extension).
    let image = covers(std::mem::offset_of!(HsaApiTable, image_ext_))
        .then(|| unsafe { TablePtr::new(root.image_ext_) })
        .flatten();
    let mut o = Originals::read(core, amd)?;
    o.images = runtime::ImageEntries::read(image);
    for addr in [
        o.queue_create as *const c_void,
        o.memory_allocate as *const c_void,
        o.pool_allocate as *const c_void,
    ] {
        if let Some(path) = other_kreplay_copy(addr) {
            return Err(LoadError::SecondCopy(path));
        }
    }
    if from == ToolState::Finished {
        // A new runtime instance after `hsa_shut_down`: what the tool knew is gone with the old
        // one. A runtime that kept its table still holds this library's entries: they chain to
        // the originals saved by the earlier `OnLoad`, which stay.
        replay::forget_runtime_instance();
        // The built-in client, once it took the service, keeps it; a tool registers again.
        let kept = crate::replay::contract::client().is_some();
        state::set_service(if kept {
            ReplayService::On
        } else {
            ReplayService::Undecided
        });
    }
    let mine: ffi::hsa_queue_create_fn_t = Some(queue_create);
    if mine.map(|f| f as usize) == Some(o.queue_create as usize) {
        if runtime::originals().is_none() {
            return Err(LoadError::StillWrapped);
        }
    } else {
        runtime::install(o);
    }
    if from == ToolState::Uninitialised {
        if !pin_in_memory() {
            tracing::warn!(
                "kreplay could not keep itself loaded (dlopen RTLD_NODELETE failed): a doorbell rung while hsa_shut_down unloads \
                 the tools may call into unmapped code"
            );
        }
        // SAFETY: registers a function of this library, which stays mapped (above) until exit.
        if unsafe { libc::atexit(settle_at_exit) } != 0 {
            tracing::debug!("atexit refused: records of dispatches completing at exit may be lost");
        }
    }
    if !state::advance(from, ToolState::Active) {
        return Err(LoadError::AlreadyLoaded);
    }
    install_interceptors(core, amd, &o)?;
    if let Some(image) = image
        && let Err(e) = install_image_interceptors(image, &o.images)
    {
        tracing::warn!(
            "kreplay could not wrap the image entries ({e}): host writes into images are not fenced"
        );
    }
    let earlier = tools_loaded_before_me();
    if !earlier.is_empty() {
        tracing::warn!(
            "{} loaded before kreplay in HSA_TOOLS_LIB: memory and queues it created in its own OnLoad are not tracked \
             (the application's are); list libkreplay.so first if that library's kernels write the application's memory",
            earlier.join(", ")
        );
    }
    crate::client::check_env();
    crate::settings::load();
    crate::replay::contract::set_fallback_client(crate::client::install_from_env);
    // An invalid KREPLAY_DRAIN_DECLINE_MS is reported now, not at the first replay.
    let _ = &*replay::DRAIN_DECLINE;
    Ok(())
}

/// How long the process's exit waits for the tool's completion handlers.
const EXIT_SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// At process exit: many programs (HIP's among them) never call `hsa_shut_down`, and a
/// dispatch that ran once gets its record from a handler that runs after the application's own
/// completion signal, so a program exiting right after its last synchronisation would lose that
/// record. Waits (bounded) for those handlers and flushes the records. Registered with `atexit`
/// once, at the first `OnLoad`, after the runtime's own exit handlers, so it runs before them.
extern "C" fn settle_at_exit() {
    panic_boundary(
        "exit",
        || {
            if state::current() == ToolState::Active {
                replay::settle_handlers_within(
                    &QUEUES.all(),
                    EXIT_SETTLE.min(*replay::DRAIN_TIMEOUT),
                );
                crate::client::flush();
            }
        },
        || (),
    );
}

/// Entry point called by the HSA runtime after it loads the library as a tool.
///
/// Validates the table, saves the original entries and installs the interceptors. Returns
/// false (the runtime then unloads the library) with one log line when the table is
/// unsupported or another copy of kreplay already intercepts the runtime.
///
/// # Safety
/// Called by the runtime with its live API table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OnLoad(
    table: *mut HsaApiTable,
    _runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const c_char,
) -> bool {
    panic_boundary(
        "OnLoad",
        || {
            crate::diagnostics::init_logging();
            match load(table) {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!("kreplay declines to load: {e}");
                    eprintln!("kreplay: declining to load: {e}");
                    false
                }
            }
        },
        || false,
    )
}

/// Called by the runtime on the last `hsa_shut_down`. Waits (bounded by
/// `KREPLAY_DRAIN_TIMEOUT_MS`) for submissions inside the replay path and for the tool's
/// completion handlers, releases a tool's registration (its library may be unloaded next) and
/// flushes the built-in client's records. Afterwards every interceptor chains to the original
/// entry; a later `hsa_init` calls `OnLoad` again.
#[unsafe(no_mangle)]
pub extern "C" fn OnUnload() {
    panic_boundary(
        "OnUnload",
        || {
            if state::advance(ToolState::Active, ToolState::ShuttingDown) {
                replay::deferred::release_all();
                if !state::wait_for_submissions(*replay::DRAIN_TIMEOUT) {
                    tracing::warn!(
                        "hsa_shut_down: a submission of another thread was still inside a replay window after {} ms; the runtime \
                     shuts down under it",
                        replay::DRAIN_TIMEOUT.as_millis()
                    );
                }
                replay::settle_handlers(&QUEUES.all());
                single_use_writer::release_all();
                {
                    let _decision = state::SERVICE_DECISION.lock();
                    crate::replay::contract::release_client();
                    state::set_service(ReplayService::Off);
                }
                crate::snapshot::close_buffers();
                crate::client::end_runtime_instance();
                crate::client::flush();
                state::advance(ToolState::ShuttingDown, ToolState::Finished);
            }
        },
        || (),
    );
}
