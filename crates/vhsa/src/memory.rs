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

use crate::boundary::{c_slice, status_call, write_out};
use crate::error::{Error, Result};
use crate::runtime::ensure_open;
use crate::stats::{Direction, count_copy};
use crate::topology::{GRANULE, PoolKind};
use hsa_abi::ffi::*;
use hsa_abi::modern::{HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG, HSA_AMD_MEMORY_POOL_UNCACHED_FLAG};
use hsa_abi::{AmdExtTable, CoreApiTable};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::OnceLock;
use std::time::Duration;

/// How an allocation was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Pool or region allocation (also the loader's device memory): mapped by us.
    Mapped,
    /// `hsa_amd_memory_lock`: the application's memory, pinned.
    Locked,
}

#[derive(Clone, Debug)]
struct Allocation {
    size: usize,
    owner: u64,
    global_flags: u32,
    device: bool,
    origin: Origin,
    user_data: usize,
    accessible: Vec<u64>,
}

static ALLOCATIONS: RwLock<BTreeMap<usize, Allocation>> = RwLock::new(BTreeMap::new());

fn round_up(size: usize) -> usize {
    size.div_ceil(GRANULE) * GRANULE
}

fn map(size: usize, executable: bool) -> Result<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE | if executable { libc::PROT_EXEC } else { 0 };
    // SAFETY: anonymous private mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            round_up(size),
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Error::OutOfResources(format!(
            "cannot map {size} bytes: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(p.cast())
}

fn record(base: *mut u8, size: usize, owner: u64, global_flags: u32, device: bool, origin: Origin) {
    ALLOCATIONS.write().insert(
        base as usize,
        Allocation { size, owner, global_flags, device, origin, user_data: 0, accessible: vec![owner] },
    );
}

/// Bytes in use in each GPU's device pool, by owner agent.
static DEVICE_USED: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

fn release_device_bytes(owner: u64, size: usize) {
    if let Some(u) = DEVICE_USED.lock().get_mut(&owner) {
        *u = u.saturating_sub(round_up(size) as u64);
    }
}

/// Pool allocation flags: STANDARD 0, PCIE 1 << 0, CONTIGUOUS 1 << 1, then the newer ones.
const KNOWN_FLAGS: u32 = 1 | 2 | HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG | HSA_AMD_MEMORY_POOL_UNCACHED_FLAG;

/// Allocates `size` bytes owned by pool `pool` (flags: `hsa_amd_memory_pool_allocate` flags).
fn allocate_in_pool(pool: &crate::topology::Pool, size: usize, flags: u32) -> Result<*mut u8> {
    if size == 0 {
        return Err(Error::InvalidArgument("size is 0"));
    }
    if size as u64 > pool.size {
        return Err(Error::InvalidAllocation("size exceeds the pool's maximum allocation size"));
    }
    // Like the real runtime, flags this runtime does not know (newer ones) are ignored.
    if flags & !KNOWN_FLAGS != 0 {
        tracing::debug!("hsa_amd_memory_pool_allocate: ignoring unknown flags {:#x}", flags & !KNOWN_FLAGS);
    }
    let device = pool.kind == PoolKind::Device;
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
    let p = match map(size, flags & HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG != 0) {
        Ok(p) => p,
        Err(e) => {
            if device {
                release_device_bytes(pool.owner, size);
            }
            return Err(e);
        }
    };
    record(p, size, pool.owner, pool.global_flags(), device, Origin::Mapped);
    Ok(p)
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

fn free(ptr: *mut u8) -> Result<()> {
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
    // SAFETY: the mapping was created by `map` with this base and size.
    unsafe { libc::munmap(ptr.cast(), round_up(a.size)) };
    Ok(())
}

/// The allocation containing `p`: (base, allocation).
fn find(p: usize) -> Option<(usize, Allocation)> {
    let m = ALLOCATIONS.read();
    let (base, a) = m.range(..=p).next_back()?;
    (p < base + a.size.max(1)).then(|| (*base, a.clone()))
}

/// True when `p` lies in device memory.
fn is_device(p: usize) -> bool {
    let m = ALLOCATIONS.read();
    m.range(..=p).next_back().is_some_and(|(b, a)| p < b + a.size.max(1) && a.device)
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

/// Copies with counting and (for host<->device) the link model.
fn copy_bytes(dst: *mut u8, src: *const u8, size: usize) {
    let dir = Direction::of(is_device(src as usize), is_device(dst as usize));
    let start = std::time::Instant::now();
    // SAFETY: the caller checked both pointers for NULL; HSA requires both ranges be valid.
    unsafe { std::ptr::copy(src, dst, size) };
    if matches!(dir, Direction::HostToDevice | Direction::DeviceToHost)
        && let Some(bps) = link_bytes_per_sec()
    {
        let want = Duration::from_secs_f64(size as f64 / bps);
        if let Some(left) = want.checked_sub(start.elapsed()) {
            std::thread::sleep(left);
        }
    }
    count_copy(dir, size as u64);
}

// ---- copy engine -----------------------------------------------------------------------------

struct CopyJob {
    dst: usize,
    src: usize,
    size: usize,
    deps: Vec<u64>,
    completion: u64,
}

struct CopyEngine {
    jobs: VecDeque<CopyJob>,
    running: bool,
    stop: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

static ENGINE: Mutex<CopyEngine> =
    Mutex::new(CopyEngine { jobs: VecDeque::new(), running: false, stop: false, thread: None });
static ENGINE_CV: Condvar = Condvar::new();
static COPY_PROFILING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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
        copy_bytes(job.dst as *mut u8, job.src as *const u8, job.size);
        if let Some(s) = crate::signal::lookup(job.completion) {
            if COPY_PROFILING.load(std::sync::atomic::Ordering::Relaxed) {
                s.start_ts.store(start, std::sync::atomic::Ordering::Relaxed);
                s.end_ts.store(crate::topology::now_ns(), std::sync::atomic::Ordering::Relaxed);
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

fn submit_copy(job: CopyJob) -> Result<()> {
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

// ---- the C entries ---------------------------------------------------------------------------

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
            return Err(Error::OutOfResources("injected pool allocation failure (VHSA_FAULTS pool_alloc)".into()));
        }
        let m = allocate_in_pool(p, size, flags)?;
        write_out(ptr, m.cast(), "ptr is NULL")
    })
}

unsafe extern "C" fn hsa_amd_memory_pool_free_impl(ptr: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_memory_pool_free", || {
        ensure_open()?;
        free(ptr.cast())
    })
}

unsafe extern "C" fn hsa_memory_allocate_impl(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t {
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

unsafe extern "C" fn hsa_memory_copy_impl(dst: *mut c_void, src: *const c_void, size: usize) -> hsa_status_t {
    status_call("hsa_memory_copy", || {
        ensure_open()?;
        if dst.is_null() || src.is_null() {
            return Err(Error::InvalidArgument("dst or src is NULL"));
        }
        if crate::fault::copy_fails() {
            return Err(Error::Failed("injected copy failure (VHSA_FAULTS copy_count)".into()));
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
            return Err(Error::InvalidArgument("dep_signals must be NULL exactly when num_dep_signals is 0"));
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
            return Err(Error::Failed("injected copy failure (VHSA_FAULTS copy_count)".into()));
        }
        submit_copy(CopyJob {
            dst: dst as usize,
            src: src as usize,
            size,
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
        hsa_amd_memory_async_copy_impl(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal)
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
        let t = hsa_amd_profiling_async_copy_time_t {
            start: s.start_ts.load(std::sync::atomic::Ordering::Relaxed),
            end: s.end_ts.load(std::sync::atomic::Ordering::Relaxed),
        };
        write_out(time, t, "time is NULL")
    })
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
            return Err(Error::InvalidArgument("info->size is 0: set it to sizeof(hsa_amd_pointer_info_t)"));
        }
        let ours = std::mem::size_of::<hsa_amd_pointer_info_t>();
        let mut out = hsa_amd_pointer_info_t { size: caller_size.min(ours) as u32, ..Default::default() };
        let found = find(ptr as usize);
        let agents: Vec<u64> = match &found {
            Some((base, a)) => {
                out.type_ = if a.origin == Origin::Locked { HSA_EXT_POINTER_TYPE_LOCKED } else { HSA_EXT_POINTER_TYPE_HSA };
                out.agentBaseAddress = *base as *mut c_void;
                out.hostBaseAddress = *base as *mut c_void;
                out.sizeInBytes = a.size;
                out.userData = a.user_data as *mut c_void;
                out.agentOwner = hsa_agent_t { handle: a.owner };
                out.global_flags = a.global_flags;
                if a.device { a.accessible.clone() } else { crate::topology::system().agents.iter().map(|x| x.handle).collect() }
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
            let list = unsafe { alloc(agents.len().max(1) * std::mem::size_of::<hsa_agent_t>()) }.cast::<hsa_agent_t>();
            if list.is_null() {
                return Err(Error::OutOfResources("the caller's alloc callback returned NULL".into()));
            }
            for (i, h) in agents.iter().enumerate() {
                // SAFETY: `list` was allocated for `agents.len()` entries.
                unsafe { list.add(i).write(hsa_agent_t { handle: *h }) };
            }
            write_out(num_agents_accessible, agents.len() as u32, "num_agents_accessible")?;
            write_out(accessible, list, "accessible")?;
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_pointer_info_set_userdata_impl(ptr: *const c_void, userdata: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_pointer_info_set_userdata", || {
        ensure_open()?;
        let (base, _) = find(ptr as usize).ok_or(Error::InvalidArgument("pointer is not in an allocation of this runtime"))?;
        if let Some(a) = ALLOCATIONS.write().get_mut(&base) {
            a.user_data = userdata as usize;
        }
        Ok(())
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
            return Err(Error::InvalidArgument("num_agents is 0, agents or ptr is NULL, or flags is not NULL (reserved)"));
        }
        let list = c_slice(agents, num_agents as usize, "agents is NULL")?;
        for a in list {
            crate::topology::agent(a.handle)?;
        }
        let Some((base, _)) = find(ptr as usize) else {
            // Memory not allocated by the runtime (system memory) is accessible already.
            return Ok(());
        };
        if let Some(a) = ALLOCATIONS.write().get_mut(&base) {
            for ag in list {
                if !a.accessible.contains(&ag.handle) {
                    a.accessible.push(ag.handle);
                }
            }
        }
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
            return Err(Error::InvalidArgument("host_ptr or agent_ptr is NULL, or size is 0"));
        }
        for a in c_slice(agents.cast_const(), num_agent.max(0) as usize, "agents is NULL")? {
            crate::topology::agent(a.handle)?;
        }
        let cpu = crate::topology::system().agents[0].handle;
        record(host_ptr.cast(), size, cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, false, Origin::Locked);
        write_out(agent_ptr, host_ptr, "agent_ptr")
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
        let mut m = ALLOCATIONS.write();
        match m.get(&(host_ptr as usize)) {
            Some(a) if a.origin == Origin::Locked => {
                m.remove(&(host_ptr as usize));
                Ok(())
            }
            _ => Err(Error::InvalidArgument("pointer was not locked with hsa_amd_memory_lock")),
        }
    })
}

unsafe extern "C" fn hsa_amd_memory_fill_impl(ptr: *mut c_void, value: u32, count: usize) -> hsa_status_t {
    status_call("hsa_amd_memory_fill", || {
        ensure_open()?;
        if ptr.is_null() || !(ptr as usize).is_multiple_of(4) {
            return Err(Error::InvalidArgument("ptr is NULL or not 4-byte aligned"));
        }
        // SAFETY: non-NULL, aligned; HSA requires `count` writable u32s.
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
    amd.hsa_amd_profiling_async_copy_enable_fn = Some(hsa_amd_profiling_async_copy_enable_impl);
    amd.hsa_amd_profiling_get_async_copy_time_fn = Some(hsa_amd_profiling_get_async_copy_time_impl);
    amd.hsa_amd_pointer_info_fn = Some(hsa_amd_pointer_info_impl);
    amd.hsa_amd_pointer_info_set_userdata_fn = Some(hsa_amd_pointer_info_set_userdata_impl);
    amd.hsa_amd_agents_allow_access_fn = Some(hsa_amd_agents_allow_access_impl);
    amd.hsa_amd_memory_lock_fn = Some(hsa_amd_memory_lock_impl);
    amd.hsa_amd_memory_lock_to_pool_fn = Some(hsa_amd_memory_lock_to_pool_impl);
    amd.hsa_amd_memory_unlock_fn = Some(hsa_amd_memory_unlock_impl);
    amd.hsa_amd_memory_fill_fn = Some(hsa_amd_memory_fill_impl);
    amd.hsa_amd_memory_pool_can_migrate_fn = Some(hsa_amd_memory_pool_can_migrate_impl);
}
