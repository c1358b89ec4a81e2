//! The stores on a real agent: copies, device buffers, pinning and host access through the
//! runtime's original entries (never the wrapped table, so nothing here is tracked as the
//! application's).

use super::{AgentBuffers, CopyFailed, CopyOp, DeviceCopy, DeviceMemory, HostPinning, Region};
use crate::runtime::Runtime;
use hsa_abi::ffi::{self, hsa_agent_t, hsa_signal_t};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// Device-to-device copies submitted per wave (each wave shares one completion signal).
const IN_FLIGHT: usize = 32;

/// Copies on one agent: `hsa_memory_copy` for host transfers, `hsa_amd_memory_async_copy`
/// (several in flight) between buffers of the agent's memory.
pub struct AgentCopy {
    rt: Runtime,
    agent: hsa_agent_t,
    signal: Option<hsa_signal_t>,
    bound: Duration,
}

impl AgentCopy {
    /// Copies on `agent`; a wave of device copies not complete after `bound` is fatal (the
    /// copies could still write the application's memory).
    pub fn new(rt: Runtime, agent: hsa_agent_t, bound: Duration) -> Self {
        let signal = rt
            .originals()
            .host_writes
            .async_copy
            .and_then(|_| rt.signal_create(0).ok());
        Self {
            rt,
            agent,
            signal,
            bound,
        }
    }

    /// Waits until `signal` drops below `below`.
    fn wait_below(&self, signal: hsa_signal_t, below: i64) {
        let deadline = Instant::now() + self.bound;
        loop {
            // SAFETY: a live signal of the tool.
            let v = unsafe {
                (self.rt.originals().signal_wait_scacquire)(
                    signal,
                    ffi::HSA_SIGNAL_CONDITION_LT,
                    below,
                    50_000_000,
                    ffi::HSA_WAIT_STATE_BLOCKED,
                )
            };
            if v < below {
                return;
            }
            if Instant::now() >= deadline {
                crate::diagnostics::fatal(&format!(
                    "device-to-device snapshot copies on agent {:#x} did not complete within {} ms; they could still write \
                     the application's memory. Raise KREPLAY_DRAIN_TIMEOUT_MS if the device is legitimately slow.",
                    self.agent.handle,
                    self.bound.as_millis()
                ));
            }
        }
    }
}

impl Drop for AgentCopy {
    fn drop(&mut self) {
        if let Some(s) = self.signal.take() {
            self.rt.signal_destroy(s);
        }
    }
}

impl DeviceCopy for AgentCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        // SAFETY: forwarded caller contract.
        unsafe { self.rt.copy(dst.cast(), src.cast(), len) }.map_err(|e| CopyFailed {
            len,
            detail: e.to_string(),
        })
    }

    unsafe fn copy_on_device(
        &self,
        ops: &[CopyOp],
        during: &mut dyn FnMut(),
    ) -> Result<(), CopyFailed> {
        let (Some(async_copy), Some(signal)) =
            (self.rt.originals().host_writes.async_copy, self.signal)
        else {
            for op in ops {
                // SAFETY: forwarded caller contract.
                unsafe { self.copy(op.dst as *mut u8, op.src as *const u8, op.len)? };
            }
            during();
            return Ok(());
        };
        let mut during = Some(during);
        let mut result = Ok(());
        for wave in ops.chunks(IN_FLIGHT) {
            // SAFETY: the tool's own live signal, not in use by an earlier wave (waited below).
            unsafe { (self.rt.originals().signal_store_relaxed)(signal, wave.len() as i64) };
            let mut submitted = 0usize;
            for op in wave {
                // SAFETY: forwarded caller contract; the tool's own live signal; no dependencies.
                let st = unsafe {
                    async_copy(
                        op.dst as *mut c_void,
                        self.agent,
                        op.src as *const c_void,
                        self.agent,
                        op.len,
                        0,
                        std::ptr::null(),
                        signal,
                    )
                };
                if st != ffi::HSA_STATUS_SUCCESS {
                    result = Err(CopyFailed {
                        len: op.len,
                        detail: format!("hsa_amd_memory_async_copy returned HSA status {st:#x}"),
                    });
                    break;
                }
                submitted += 1;
            }
            if let Some(d) = during.take() {
                d();
            }
            // Each completed copy decrements the signal by one; the unsubmitted ones never will.
            self.wait_below(signal, (wave.len() - submitted) as i64 + 1);
            result.clone()?;
        }
        if let Some(d) = during.take() {
            d();
        }
        result
    }
}

/// Snapshot buffers in one pool of the agent, through the original pool entries.
pub struct PoolMemory {
    rt: Runtime,
    pool: ffi::hsa_amd_memory_pool_t,
}

impl DeviceMemory for PoolMemory {
    fn allocate(&self, size: usize) -> Option<usize> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the original entry, so the buffer is not tracked.
        let st = unsafe { (self.rt.originals().pool_allocate)(self.pool, size, 0, &mut p) };
        (st == ffi::HSA_STATUS_SUCCESS && !p.is_null()).then_some(p as usize)
    }

    fn free(&self, ptr: usize) {
        // SAFETY: a buffer from `allocate`, no longer used by any snapshot.
        let _ = unsafe { (self.rt.originals().pool_free)(ptr as *mut c_void) };
    }
}

/// The agent's coarse-grained device pool the runtime allocates from, and its size.
pub fn device_pool(rt: Runtime, agent: hsa_agent_t) -> Option<(ffi::hsa_amd_memory_pool_t, u64)> {
    let (iterate, info) = (
        rt.originals().agent_iterate_memory_pools?,
        rt.originals().memory_pool_get_info?,
    );
    struct Search {
        info: unsafe extern "C" fn(
            ffi::hsa_amd_memory_pool_t,
            ffi::hsa_amd_memory_pool_info_t,
            *mut c_void,
        ) -> ffi::hsa_status_t,
        found: Option<(ffi::hsa_amd_memory_pool_t, u64)>,
    }
    unsafe extern "C" fn visit(
        pool: ffi::hsa_amd_memory_pool_t,
        data: *mut c_void,
    ) -> ffi::hsa_status_t {
        let r = std::panic::catch_unwind(|| {
            // SAFETY: `data` is the `Search` passed by `device_pool`, alive during the iteration.
            let s = unsafe { &mut *data.cast::<Search>() };
            let mut segment: ffi::hsa_amd_segment_t = 0;
            let mut flags: u32 = 0;
            let mut alloc = false;
            let mut size: usize = 0;
            // SAFETY: each attribute writes the type named in the HSA specification.
            let ok = unsafe {
                (s.info)(
                    pool,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                    (&raw mut segment).cast(),
                ) == ffi::HSA_STATUS_SUCCESS
                    && (s.info)(
                        pool,
                        ffi::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                        (&raw mut flags).cast(),
                    ) == ffi::HSA_STATUS_SUCCESS
                    && (s.info)(
                        pool,
                        ffi::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                        (&raw mut alloc).cast(),
                    ) == ffi::HSA_STATUS_SUCCESS
                    && (s.info)(
                        pool,
                        ffi::HSA_AMD_MEMORY_POOL_INFO_SIZE,
                        (&raw mut size).cast(),
                    ) == ffi::HSA_STATUS_SUCCESS
            };
            if ok
                && segment == ffi::HSA_AMD_SEGMENT_GLOBAL
                && flags & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0
                && alloc
            {
                s.found = Some((pool, size as u64));
                return ffi::HSA_STATUS_INFO_BREAK;
            }
            ffi::HSA_STATUS_SUCCESS
        });
        r.unwrap_or(ffi::HSA_STATUS_INFO_BREAK)
    }
    let mut s = Search { info, found: None };
    // SAFETY: `visit` only uses `s` during the call.
    unsafe { iterate(agent, Some(visit), (&raw mut s).cast()) };
    s.found
}

/// The snapshot buffers of `agent` (made the first time), or `None` when it has no pool the
/// tool can allocate from.
pub fn buffers_of(rt: Runtime, agent: hsa_agent_t) -> Option<(std::sync::Arc<AgentBuffers>, u64)> {
    let (pool, size) = device_pool(rt, agent)?;
    let b = super::agent_buffers(agent.handle, || {
        Some(AgentBuffers::new(Box::new(PoolMemory { rt, pool })))
    })?;
    Some((b, size))
}

/// Pins host buffers with `hsa_amd_memory_lock` for every agent.
pub struct LockPinning(pub Runtime);

impl HostPinning for LockPinning {
    fn pin(&self, ptr: *mut u8, len: usize) -> Option<*mut u8> {
        let lock = self.0.originals().memory_lock?;
        let mut agent_ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: `ptr` is a live mapping of `len` bytes owned by the caller; no agent list.
        let st = unsafe { lock(ptr.cast(), len, std::ptr::null_mut(), 0, &mut agent_ptr) };
        if st != ffi::HSA_STATUS_SUCCESS {
            return None;
        }
        if agent_ptr.is_null() {
            self.unpin(ptr);
            return None;
        }
        Some(agent_ptr.cast())
    }

    fn unpin(&self, ptr: *mut u8) {
        if let Some(unlock) = self.0.originals().memory_unlock {
            // SAFETY: memory pinned by `pin`.
            let _ = unsafe { unlock(ptr.cast()) };
        }
    }
}

/// Where the host can read `region`, per `hsa_amd_pointer_info` (`None`: not host-accessible).
pub fn host_address(rt: Runtime, region: &Region) -> Option<usize> {
    let mut info = ffi::hsa_amd_pointer_info_t {
        size: std::mem::size_of::<ffi::hsa_amd_pointer_info_t>() as u32,
        ..Default::default()
    };
    // SAFETY: `info.size` is set; no block list is requested.
    let st = unsafe {
        (rt.originals().pointer_info)(
            region.device as *const c_void,
            &mut info,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS
        || info.hostBaseAddress.is_null()
        || info.agentBaseAddress.is_null()
    {
        return None;
    }
    let offset = region.device.checked_sub(info.agentBaseAddress as usize)?;
    (offset + region.size <= info.sizeInBytes).then(|| info.hostBaseAddress as usize + offset)
}

/// The store and scope of a capture on `agent` for `settings`; `tracked_bytes` is the
/// application's tracked memory on the agent (counted against the device budget). With
/// `whole`, every byte is restored without hashing (a kernel known to rewrite most of its
/// footprint, see [`super::density`]); verify mode always hashes. Regions the host cannot read
/// are hashed on the agent by the tool's kernel ([`super::DeviceHasher`]), each dispatch bounded
/// by `bound`.
pub fn plan(
    rt: Runtime,
    agent: hsa_agent_t,
    settings: &super::settings::SnapshotSettings,
    tracked_bytes: u64,
    whole: bool,
    bound: Duration,
) -> (Box<dyn super::SnapshotStore>, Box<dyn super::RestoreScope>) {
    use super::settings::{SnapshotMode, api_verify, default_reserve};
    use super::{ChangedChunks, DeviceHasher, HostStore, RestoreAll, TieredStore};
    let verify = settings.verify || api_verify();
    let changed = || -> Box<dyn super::RestoreScope> {
        if whole && !verify {
            return Box::new(RestoreAll);
        }
        let hasher = DeviceHasher::new(rt, agent, move |r: &Region| host_address(rt, r), bound);
        Box::new(ChangedChunks::new(
            Box::new(hasher),
            settings.chunk_bytes,
            verify,
        ))
    };
    let pinning: std::sync::Arc<dyn HostPinning> = std::sync::Arc::new(LockPinning(rt));
    match settings.mode {
        // The original engine: pageable host buffers, every byte restored.
        SnapshotMode::HostFull => (Box::new(HostStore::new()), Box::new(RestoreAll)),
        SnapshotMode::Host => (Box::new(HostStore::pinned(pinning)), changed()),
        SnapshotMode::Auto | SnapshotMode::Device => {
            let (buffers, budget) = match buffers_of(rt, agent) {
                Some((b, pool)) => {
                    let reserve = settings
                        .device_reserve
                        .unwrap_or_else(|| default_reserve(pool));
                    (
                        Some(b),
                        pool.saturating_sub(tracked_bytes).saturating_sub(reserve),
                    )
                }
                None => (None, 0),
            };
            let store = TieredStore::new(
                buffers,
                budget,
                settings.mode == SnapshotMode::Device,
                Some(pinning),
            );
            (Box::new(store), changed())
        }
    }
}
