//! `DeviceHasher`: chunk hashes computed on the agent by the tool's own kernel, for regions the
//! host cannot read.
//!
//! The kernel (`device_hash.hip`, the "lane-fold" hash documented there and mirrored by
//! [`lane_fold`]) is built by clang-22 at build time for gfx90a and gfx942 and embedded here. On
//! first use it is loaded on the agent through the runtime's original executable entries; its
//! kernel arguments and output live in the system kernarg pool (allocated through the original
//! pool entries, never tracked), and it runs on a queue of the tool's own, created with the
//! original `hsa_queue_create` (never intercepted), one 64-lane work-group per chunk. The host
//! waits on the dispatch's completion signal directly. A hasher that ends leaves its working
//! kernel to the agent's next one ([`KEPT`]) until the runtime shuts down.
//!
//! Regions with a host address are hashed on the host ([`HostHasher`]). When the device path
//! cannot be used (no code object for the target, a missing entry, a failed load or dispatch),
//! one warning is logged and such regions are restored whole.

use super::chunks::HostHasher;
use super::{ChunkHasher, Region};
use crate::inventory::OWN_EXECUTABLES;
use crate::runtime::Runtime;
use crate::sync::{AtomicBool, Mutex, Ordering};
use hsa_abi::ffi::{self, hsa_agent_t, hsa_queue_t, hsa_signal_t};
use std::time::{Duration, Instant};

/// The kernel's code objects, per target.
const CODE_OBJECTS: [(&str, &[u8]); 2] = [
    (
        "gfx90a",
        include_bytes!(concat!(env!("OUT_DIR"), "/device_hash-gfx90a.co")),
    ),
    (
        "gfx942",
        include_bytes!(concat!(env!("OUT_DIR"), "/device_hash-gfx942.co")),
    ),
];

/// The kernel's symbol.
const KERNEL: &std::ffi::CStr = c"kreplay_chunk_hash.kd";

/// Lanes per work-group (the hash depends on it).
pub const LANES: u32 = 64;

const P1: u64 = 0x9E37_79B9_7F4A_7C15;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// The kernel's hash of one chunk, computed on the host with `lanes` lanes (see
/// `device_hash.hip`): the reference the device results are checked against in tests.
pub fn lane_fold(chunk: &[u8], lanes: u32) -> u64 {
    let lanes = lanes.max(1);
    let len = chunk.len() as u64;
    let step = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(P1);
        h ^ (h >> 29)
    };
    let blocks = chunk.len() / 16;
    let mut h: Vec<u64> = (0..lanes)
        .map(|lane| {
            let mut h = len.wrapping_mul(P2) ^ (u64::from(lane) + 1).wrapping_mul(P1);
            for block in chunk[..16 * blocks]
                .chunks_exact(16)
                .skip(lane as usize)
                .step_by(lanes as usize)
            {
                for w in block.chunks_exact(8) {
                    h = step(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
                }
            }
            h
        })
        .collect();
    for tail in chunk[16 * blocks..].chunks(4) {
        let mut w = [0u8; 4];
        w[..tail.len()].copy_from_slice(tail);
        h[0] = step(h[0], u64::from(u32::from_le_bytes(w)));
    }
    let n = lanes as usize;
    let mut s = 1;
    while s < n {
        for l in (0..n).step_by(2 * s).filter(|l| l + s < n) {
            let j = h[l].wrapping_mul(P2) ^ h[l + s];
            h[l] = j ^ (j >> 31);
        }
        s *= 2;
    }
    let mut f = h[0];
    f ^= f >> 33;
    f = f.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    f ^ (f >> 33)
}

/// The kernel loaded on one agent, with its queue, signal and buffers.
struct Loaded {
    executable: ffi::hsa_executable_t,
    kernel_object: u64,
    group_segment: u32,
    private_segment: u32,
    kernarg_size: usize,
    queue: *mut hsa_queue_t,
    signal: hsa_signal_t,
    pool: ffi::hsa_amd_memory_pool_t,
    kernarg: *mut u8,
    /// Output buffer and its capacity in hashes.
    out: *mut u64,
    out_len: usize,
    /// Errors the runtime reports on `queue` (its error callback's data: lives as long).
    fault: std::sync::Arc<crate::queue_fault::QueueFault>,
}

// SAFETY: the pointers name runtime objects (queue, pool buffers) usable from any thread; the
// `Loaded` is only used under its mutex.
unsafe impl Send for Loaded {}

enum State {
    Unloaded,
    Ready(Loaded),
    /// The device path failed (warned once): regions without a host address are restored whole.
    Failed,
}

/// Where the host can read a region (`None`: not host-accessible).
type HostAddress = Box<dyn Fn(&Region) -> Option<usize> + Send + Sync>;

/// Hashes host-readable regions on the host, others with the tool's kernel on `agent`.
pub struct DeviceHasher {
    rt: Runtime,
    agent: hsa_agent_t,
    host: HostHasher,
    host_address: HostAddress,
    state: Mutex<State>,
    bound: Duration,
    warned: AtomicBool,
}

impl DeviceHasher {
    /// A hasher for regions of `agent`; `host_address` says where the host can read a region.
    /// A dispatch not complete after `bound` abandons the device path.
    pub fn new(
        rt: Runtime,
        agent: hsa_agent_t,
        host_address: impl Fn(&Region) -> Option<usize> + Send + Sync + Clone + 'static,
        bound: Duration,
    ) -> Self {
        Self {
            rt,
            agent,
            host: HostHasher::new(host_address.clone()),
            host_address: Box::new(host_address),
            state: Mutex::new(State::Unloaded),
            bound,
            warned: AtomicBool::new(false),
        }
    }

    fn fail(&self, why: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "kreplay: device-side chunk hashing on agent {:#x} is unavailable ({why}); regions the host cannot read are \
                 restored whole",
                self.agent.handle
            );
        }
    }

    /// The kernel loaded on the agent, or `Failed` (warned once).
    fn load(&self) -> State {
        match load(self.rt, self.agent) {
            Ok(l) => {
                tracing::debug!(
                    "kreplay: chunk hashing kernel loaded on agent {:#x}",
                    self.agent.handle
                );
                State::Ready(l)
            }
            Err(e) => {
                self.fail(&e);
                State::Failed
            }
        }
    }

    /// Hashes on the device; `Err` names what failed.
    fn hash_on_device(
        &self,
        loaded: &mut Loaded,
        region: &Region,
        chunk: usize,
    ) -> Result<Vec<u64>, String> {
        let n = region.size.div_ceil(chunk);
        let grid = (n as u64)
            .checked_mul(LANES as u64)
            .filter(|g| *g <= u32::MAX as u64)
            .ok_or("region has too many chunks")?;
        self.reserve_output(loaded, n)?;
        let args: [u64; 4] = [
            region.device as u64,
            region.size as u64,
            chunk as u64,
            loaded.out as u64,
        ];
        // SAFETY: `kernarg` holds `kernarg_size` >= 32 bytes (checked at load), owned by the tool.
        unsafe {
            std::ptr::write_bytes(loaded.kernarg, 0, loaded.kernarg_size);
            std::ptr::copy_nonoverlapping(args.as_ptr().cast::<u8>(), loaded.kernarg, 32);
        }
        self.submit(loaded, grid as u32)?;
        self.wait_for_completion(loaded)?;
        // SAFETY: the dispatch completed (acquire): `out` holds `n` hashes written by it.
        Ok(unsafe { std::slice::from_raw_parts(loaded.out, n) }.to_vec())
    }

    /// Makes the output buffer hold at least `n` hashes.
    fn reserve_output(&self, loaded: &mut Loaded, n: usize) -> Result<(), String> {
        if loaded.out_len >= n {
            return Ok(());
        }
        if !loaded.out.is_null() {
            // SAFETY: `out` was allocated by `alloc_shared` and no dispatch uses it.
            let _ = unsafe { (self.rt.originals().pool_free)(loaded.out.cast()) };
            loaded.out = std::ptr::null_mut();
            loaded.out_len = 0;
        }
        loaded.out = self.rt.alloc_shared(loaded.pool, self.agent, n * 8)?.cast();
        loaded.out_len = n;
        Ok(())
    }

    /// Writes one dispatch of `grid` lanes on the tool's queue and rings its doorbell.
    fn submit(&self, loaded: &Loaded, grid: u32) -> Result<(), String> {
        let k = self.rt.originals().kernel;
        let (Some(add_write_index), Some(load_read_index)) = (k.add_write_index, k.load_read_index)
        else {
            return Err("the runtime has no queue index entries".into());
        };
        // SAFETY: the tool's own signal, idle.
        unsafe { (self.rt.originals().signal_store_relaxed)(loaded.signal, 1) };
        // SAFETY: the tool's own live queue; only this thread (under the mutex) writes to it.
        let q = unsafe { &*loaded.queue };
        // SAFETY: the tool's own live queue.
        let index = unsafe { add_write_index(loaded.queue, 1) };
        // SAFETY: as above. The queue is private and every earlier dispatch completed.
        while index - unsafe { load_read_index(loaded.queue) } >= q.size as u64 {
            std::thread::yield_now();
        }
        let slot = (index % q.size as u64) as usize;
        let packet = ffi::hsa_kernel_dispatch_packet_t {
            header: 0,
            setup: 1 << ffi::HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
            workgroup_size_x: LANES as u16,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            reserved0: 0,
            grid_size_x: grid,
            grid_size_y: 1,
            grid_size_z: 1,
            private_segment_size: loaded.private_segment,
            group_segment_size: loaded.group_segment,
            kernel_object: loaded.kernel_object,
            kernarg_address: loaded.kernarg.cast(),
            reserved2: 0,
            completion_signal: loaded.signal,
        };
        let header: u16 = (ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH as u16)
            << ffi::HSA_PACKET_HEADER_TYPE
            | (ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE
            | (ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE;
        // SAFETY: the slot lies in the queue's ring (64-byte packets). The body is written
        // around the first word, which keeps the slot's INVALID header (a packet processor
        // polling the ring would take any other value, even 0, as a packet), and the header is
        // published last with a release store so the processor sees a complete packet.
        unsafe {
            let p = (q.base_address as *mut ffi::hsa_kernel_dispatch_packet_t).add(slot);
            std::ptr::copy_nonoverlapping(
                (&raw const packet).cast::<u8>().add(4),
                p.cast::<u8>().add(4),
                std::mem::size_of::<ffi::hsa_kernel_dispatch_packet_t>() - 4,
            );
            let word = &*(p as *const std::sync::atomic::AtomicU32);
            word.store(
                header as u32 | ((packet.setup as u32) << 16),
                Ordering::Release,
            );
            (self.rt.originals().signal_store_screlease)(q.doorbell_signal, index as i64);
        }
        Ok(())
    }

    /// Waits, within the hasher's bound, for the dispatch's completion signal; a queue error
    /// ends the wait at once.
    fn wait_for_completion(&self, loaded: &Loaded) -> Result<(), String> {
        let deadline = Instant::now() + self.bound;
        loop {
            // SAFETY: the tool's own live signal.
            let v = unsafe {
                (self.rt.originals().signal_wait_scacquire)(
                    loaded.signal,
                    ffi::HSA_SIGNAL_CONDITION_LT,
                    1,
                    50_000_000,
                    ffi::HSA_WAIT_STATE_BLOCKED,
                )
            };
            if v < 1 {
                return Ok(());
            }
            if let Some(st) = loaded.fault.status() {
                return Err(format!(
                    "the hashing dispatch failed on its queue (HSA status {st:#x}) and did not complete"
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the hashing dispatch did not complete within {} ms",
                    self.bound.as_millis()
                ));
            }
        }
    }
}

impl ChunkHasher for DeviceHasher {
    fn hash(&self, region: &Region, chunk: usize) -> Option<Vec<u64>> {
        if (self.host_address)(region).is_some() {
            return self.host.hash(region, chunk);
        }
        if !region.device.is_multiple_of(4) || !chunk.is_multiple_of(4) || region.size == 0 {
            return None;
        }
        let mut state = self.state.lock();
        if matches!(*state, State::Unloaded) {
            *state = match take_kept(self.agent) {
                Some(l) => State::Ready(l),
                None => self.load(),
            };
        }
        let State::Ready(loaded) = &mut *state else {
            return None;
        };
        match self.hash_on_device(loaded, region, chunk) {
            Ok(h) => Some(h),
            Err(e) => {
                self.fail(&e);
                // A dispatch that did not complete may still write the buffers: they are left
                // allocated (and the queue alive); anything else is released.
                let previous = std::mem::replace(&mut *state, State::Failed);
                if let State::Ready(l) = previous
                    && !e.contains("did not complete")
                {
                    release(self.rt, l);
                }
                None
            }
        }
    }
}

impl Drop for DeviceHasher {
    /// A working kernel is kept for the agent's next hasher while the tool is active.
    fn drop(&mut self) {
        if let State::Ready(l) = std::mem::replace(&mut *self.state.lock(), State::Failed) {
            keep(self.rt, self.agent, l);
        }
    }
}

/// Kernels of hashers that ended, by agent, with the runtime that loaded them: the next window's
/// hasher on the agent takes its kernel from here. Loading the code object (which ROCR follows
/// with a shader-cache invalidation) and creating the queue cost more than hashing a small
/// region, and every replayed dispatch has its own hasher.
static KEPT: Mutex<Vec<(u64, Runtime, Loaded)>> = Mutex::new(Vec::new());

/// Keeps `l` for the next hasher on `agent`, or releases it when the tool is not active or the
/// agent already has one kept.
fn keep(rt: Runtime, agent: hsa_agent_t, l: Loaded) {
    if crate::state::current() == crate::state::ToolState::Active {
        let mut kept = KEPT.lock();
        if !kept.iter().any(|(a, _, _)| *a == agent.handle) {
            kept.push((agent.handle, rt, l));
            return;
        }
    }
    release(rt, l);
}

/// The kernel kept for `agent`, if any.
fn take_kept(agent: hsa_agent_t) -> Option<Loaded> {
    let mut kept = KEPT.lock();
    let i = kept.iter().position(|(a, _, _)| *a == agent.handle)?;
    Some(kept.swap_remove(i).2)
}

/// Releases every kept kernel (the runtime instance is shutting down).
pub fn release_kept() {
    for (_, rt, l) in std::mem::take(&mut *KEPT.lock()) {
        release(rt, l);
    }
}

/// Forgets the kept kernels of an ended runtime instance without calling it.
pub fn forget_kept() {
    for (_, _, l) in std::mem::take(&mut *KEPT.lock()) {
        OWN_EXECUTABLES.released(l.executable.handle);
    }
}

/// The agent's target (`gfx942` of `gfx942:sramecc+:xnack-`).
fn target(rt: Runtime, agent: hsa_agent_t) -> String {
    let name = rt.agent_name(agent);
    name.split(':').next().unwrap_or_default().to_owned()
}

/// Loads the kernel on `agent` and creates its queue, signal and kernarg buffer.
fn load(rt: Runtime, agent: hsa_agent_t) -> Result<Loaded, String> {
    let k = rt.originals().kernel;
    if k.add_write_index.is_none() || k.load_read_index.is_none() {
        return Err(MISSING_ENTRY.into());
    }
    let arch = target(rt, agent);
    let code = CODE_OBJECTS
        .iter()
        .find(|(t, _)| *t == arch)
        .map(|(_, c)| *c)
        .ok_or_else(|| format!("no code object for {arch}"))?;
    let pool = rt.kernarg_pool().ok_or("no kernarg memory pool")?;
    let exe = load_executable(rt, agent, code)?;
    let result = (|| -> Result<Loaded, String> {
        let symbol = kernel_symbol(rt, exe, agent)?;
        let (queue, signal, fault) = create_queue(rt, agent)?;
        let kernarg = match rt.alloc_shared(pool, agent, symbol.kernarg_size) {
            Ok(p) => p,
            Err(e) => {
                rt.signal_destroy(signal);
                // SAFETY: the queue created above, idle.
                let _ = unsafe { (rt.originals().queue_destroy)(queue) };
                return Err(e);
            }
        };
        Ok(Loaded {
            executable: exe,
            kernel_object: symbol.kernel_object,
            group_segment: symbol.group_segment,
            private_segment: symbol.private_segment,
            kernarg_size: symbol.kernarg_size,
            queue,
            signal,
            pool,
            kernarg,
            out: std::ptr::null_mut(),
            out_len: 0,
            fault,
        })
    })();
    if result.is_err() {
        destroy_executable(rt, exe);
    }
    result
}

/// Destroys the tool's own executable `exe`, with nothing dispatched from it running.
fn destroy_executable(rt: Runtime, exe: ffi::hsa_executable_t) {
    // SAFETY: the tool's own executable, idle.
    let _ = unsafe { (rt.originals().executable_destroy)(exe) };
    OWN_EXECUTABLES.released(exe.handle);
}

const MISSING_ENTRY: &str = "the runtime's API table lacks an executable or queue entry";

/// Loads `code` on `agent` in a frozen executable of the tool's own (never tracked).
fn load_executable(
    rt: Runtime,
    agent: hsa_agent_t,
    code: &'static [u8],
) -> Result<ffi::hsa_executable_t, String> {
    let o = rt.originals();
    let k = o.kernel;
    let (Some(reader_create), Some(reader_destroy), Some(create), Some(load_co)) = (
        k.reader_create_from_memory,
        k.reader_destroy,
        k.executable_create_alt,
        k.load_agent_code_object,
    ) else {
        return Err(MISSING_ENTRY.into());
    };
    let mut reader = ffi::hsa_code_object_reader_t { handle: 0 };
    // SAFETY: `code` is a static code object; out-pointer to a local.
    let st = unsafe { reader_create(code.as_ptr().cast(), code.len(), &mut reader) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(format!(
            "hsa_code_object_reader_create_from_memory returned HSA status {st:#x}"
        ));
    }
    let mut exe = ffi::hsa_executable_t { handle: 0 };
    let result = (|| -> Result<(), String> {
        // SAFETY: out-pointer to a local; no options.
        let st = unsafe {
            create(
                ffi::HSA_PROFILE_FULL,
                ffi::HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &mut exe,
            )
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            return Err(format!(
                "hsa_executable_create_alt returned HSA status {st:#x}"
            ));
        }
        // Before its code is loaded: no capture lists it among the application's.
        OWN_EXECUTABLES.loaded(exe.handle);
        // SAFETY: live executable and reader; no options, no loaded-object handle wanted.
        let st = unsafe { load_co(exe, agent, reader, std::ptr::null(), std::ptr::null_mut()) };
        if st != ffi::HSA_STATUS_SUCCESS {
            return Err(format!(
                "hsa_executable_load_agent_code_object returned HSA status {st:#x}"
            ));
        }
        // SAFETY: the original freeze: the tool's own executable is not tracked.
        let st = unsafe { (o.executable_freeze)(exe, std::ptr::null()) };
        if st != ffi::HSA_STATUS_SUCCESS {
            return Err(format!("hsa_executable_freeze returned HSA status {st:#x}"));
        }
        Ok(())
    })();
    // SAFETY: the reader is no longer needed once the code object is loaded (or failed).
    let _ = unsafe { reader_destroy(reader) };
    match result {
        Ok(()) => Ok(exe),
        Err(e) => {
            if exe.handle != 0 {
                destroy_executable(rt, exe);
            }
            Err(e)
        }
    }
}

/// What a dispatch of the hashing kernel needs from its symbol.
struct KernelSymbol {
    kernel_object: u64,
    group_segment: u32,
    private_segment: u32,
    /// At least the 32 bytes of the kernel's arguments.
    kernarg_size: usize,
}

/// The hashing kernel's symbol in `exe`, loaded for `agent`.
fn kernel_symbol(
    rt: Runtime,
    exe: ffi::hsa_executable_t,
    agent: hsa_agent_t,
) -> Result<KernelSymbol, String> {
    let o = rt.originals();
    let get_symbol = o.kernel.get_symbol_by_name.ok_or(MISSING_ENTRY)?;
    let mut sym = ffi::hsa_executable_symbol_t { handle: 0 };
    // SAFETY: NUL-terminated name; out-pointer to a local.
    let st = unsafe { get_symbol(exe, KERNEL.as_ptr(), &agent, &mut sym) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(format!(
            "hsa_executable_get_symbol_by_name returned HSA status {st:#x}"
        ));
    }
    let (mut kernel_object, mut group, mut private, mut kernarg_size) = (0u64, 0u32, 0u32, 0u32);
    // SAFETY: each attribute writes the type named in the HSA specification.
    let ok = unsafe {
        (o.executable_symbol_get_info)(
            sym,
            ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
            (&raw mut kernel_object).cast(),
        ) == ffi::HSA_STATUS_SUCCESS
            && (o.executable_symbol_get_info)(
                sym,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                (&raw mut group).cast(),
            ) == ffi::HSA_STATUS_SUCCESS
            && (o.executable_symbol_get_info)(
                sym,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                (&raw mut private).cast(),
            ) == ffi::HSA_STATUS_SUCCESS
            && (o.executable_symbol_get_info)(
                sym,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                (&raw mut kernarg_size).cast(),
            ) == ffi::HSA_STATUS_SUCCESS
    };
    if !ok || kernel_object == 0 {
        return Err("the kernel's symbol information is unavailable".into());
    }
    Ok(KernelSymbol {
        kernel_object,
        group_segment: group,
        private_segment: private,
        kernarg_size: (kernarg_size as usize).max(32),
    })
}

type PrivateQueue = (
    *mut hsa_queue_t,
    hsa_signal_t,
    std::sync::Arc<crate::queue_fault::QueueFault>,
);

/// The tool's own queue on `agent` (the original, never intercepted `hsa_queue_create`), its
/// completion signal, and the record of errors the runtime reports on it.
fn create_queue(rt: Runtime, agent: hsa_agent_t) -> Result<PrivateQueue, String> {
    let signal = rt.signal_create(0).map_err(|e| e.to_string())?;
    let mut queue: *mut hsa_queue_t = std::ptr::null_mut();
    let fault = std::sync::Arc::new(crate::queue_fault::QueueFault::new(
        None,
        std::ptr::null_mut(),
    ));
    // SAFETY: the original (never intercepted) entry; out-pointer to a local; the error
    // callback's data is kept with the queue in `Loaded` (or leaked when the queue stays).
    let st = unsafe {
        (rt.originals().queue_create)(
            agent,
            64,
            ffi::HSA_QUEUE_TYPE_SINGLE,
            Some(crate::queue_fault::on_queue_error),
            std::sync::Arc::as_ptr(&fault).cast_mut().cast(),
            u32::MAX,
            u32::MAX,
            &mut queue,
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS || queue.is_null() {
        rt.signal_destroy(signal);
        return Err(format!("hsa_queue_create returned HSA status {st:#x}"));
    }
    Ok((queue, signal, fault))
}

/// Releases everything a [`Loaded`] holds (no dispatch in flight).
fn release(rt: Runtime, l: Loaded) {
    let o = rt.originals();
    // SAFETY: the tool's own objects, idle.
    unsafe {
        let _ = (o.queue_destroy)(l.queue);
        rt.signal_destroy(l.signal);
        let _ = (o.pool_free)(l.kernarg.cast());
        if !l.out.is_null() {
            let _ = (o.pool_free)(l.out.cast());
        }
    }
    destroy_executable(rt, l.executable);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_changes_the_hash() {
        for len in [1usize, 3, 4, 64, 255, 256, 1000, 4096 + 3] {
            let base: Vec<u8> = (0..len).map(|i| (i * 31 % 253) as u8).collect();
            let h = lane_fold(&base, LANES);
            for i in 0..len {
                for flip in [1u8, 0x80, 0xff] {
                    let mut b = base.clone();
                    b[i] ^= flip;
                    assert_ne!(
                        lane_fold(&b, LANES),
                        h,
                        "len {len}: byte {i} ^ {flip:#x} not seen"
                    );
                }
            }
        }
    }

    #[test]
    fn the_hash_depends_on_length_and_position() {
        assert_ne!(lane_fold(&[0; 64], LANES), lane_fold(&[0; 68], LANES));
        let mut a = vec![0u8; 512];
        let mut b = vec![0u8; 512];
        a[0] = 1;
        b[256] = 1; // lane 0 again, a later word
        assert_ne!(lane_fold(&a, LANES), lane_fold(&b, LANES));
        assert_eq!(
            lane_fold(&a, LANES),
            lane_fold(&a.clone(), LANES),
            "deterministic"
        );
    }

    /// The embedded kernel run on the emulator for `target`: one hash per `chunk` bytes of
    /// `data` placed `offset` bytes past a 16-byte boundary.
    fn hashes_on_the_emulator(target: &str, data: &[u8], offset: u64, chunk: u64) -> Vec<u64> {
        use amdgpu_emu::{Apertures, DispatchSetup, Emulator, RegionMemory, Target};
        const CODE: u64 = 0x1000_0000;
        const PACKET: u64 = 0x0F00_0000;
        const KERNARG: u64 = 0x0F10_0000;
        const DATA: u64 = 0x4000_0000;
        const OUT: u64 = 0x6000_0000;
        let (_, bytes) = CODE_OBJECTS.iter().find(|(t, _)| *t == target).unwrap();
        let co = amdgpu_emu::code_object::CodeObject::parse(bytes).unwrap();
        let kd = CODE + co.kernel("kreplay_chunk_hash").unwrap();
        let chunks = (data.len() as u64).div_ceil(chunk);
        let mut mem = RegionMemory::new();
        mem.add(CODE, co.image.len().next_multiple_of(8) as u64);
        mem.write(CODE, &co.image);
        mem.add(DATA, (offset + data.len() as u64).next_multiple_of(8));
        mem.write(DATA + offset, data);
        mem.add(OUT, 8 * chunks);
        mem.add(KERNARG, 64);
        let args = [DATA + offset, data.len() as u64, chunk, OUT];
        mem.write(KERNARG, &args.map(u64::to_le_bytes).concat());
        let mut packet = [0u8; 64];
        packet[4..6].copy_from_slice(&(LANES as u16).to_le_bytes());
        mem.add(PACKET, 64);
        mem.write(PACKET, &packet);
        let descriptor = &co.image[(kd - CODE) as usize..][..8];
        let setup = DispatchSetup {
            kernel_object: kd,
            kernel_name: Some("kreplay_chunk_hash"),
            code_range: CODE + co.text.start..CODE + co.text.end,
            grid: [LANES * chunks as u32, 1, 1],
            workgroup: [LANES, 1, 1],
            kernarg_address: KERNARG,
            group_segment_size: u32::from_le_bytes(descriptor[..4].try_into().unwrap()),
            private_segment_size: u32::from_le_bytes(descriptor[4..].try_into().unwrap()),
            dispatch_packet_address: PACKET,
            queue_address: 0,
            dispatch_id: 0,
            apertures: Apertures::default(),
        };
        let emulator = Emulator::new(Target::from_name(target).unwrap(), 1);
        emulator.dispatch(&setup, &mem).unwrap();
        mem.read(OUT, 8 * chunks as usize)
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn the_kernel_computes_the_lane_fold_on_both_targets() {
        let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        for (target, _) in CODE_OBJECTS {
            for (len, offset, chunk) in [
                (40_000, 0, 16_384), // whole blocks, a shorter last chunk
                (40_000, 4, 1_000),  // chunks with 8 tail bytes, a dword-aligned base
                (39_999, 0, 4_096),  // 15 tail bytes in the last chunk
                (13, 0, 4_096),      // no whole block
                (1_025, 1, 1_025),   // an odd base and one tail byte
            ] {
                let data = &data[..len];
                let got = hashes_on_the_emulator(target, data, offset, chunk as u64);
                let want: Vec<u64> = data.chunks(chunk).map(|c| lane_fold(c, LANES)).collect();
                assert_eq!(
                    got, want,
                    "{target}: {len} bytes at +{offset} in {chunk}-byte chunks"
                );
            }
        }
    }

    #[test]
    fn both_targets_are_embedded() {
        for (t, code) in CODE_OBJECTS {
            assert_eq!(&code[..4], b"\x7fELF", "{t}");
        }
    }
}
