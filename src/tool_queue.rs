//! Queues the tool creates for itself beside an application's queue, through the runtime's
//! original entries: ROCm 5.x's second writes of a handler call, and replay windows run off the
//! submitting thread (`replay::deferred`). They are written like any AQL queue (reserve a slot,
//! body first, header last with release, ring the doorbell), which needs no interceptor call.

use crate::runtime;
use hsa_abi::ffi::{self, hsa_agent_t, hsa_queue_t};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// One AQL packet.
pub type Packet = [u8; 64];

/// A packet writer: the runtime's intercept-queue writer for the handler call in progress, or
/// one of the tool's own.
pub type Writer = unsafe extern "C" fn(*const std::ffi::c_void, u64);

/// Packets a tool queue holds.
const SIZE: u32 = 1024;

/// A barrier-AND packet with the barrier bit and system-scope fences: it waits for everything
/// before it on its queue and for `dep` (0: nothing more), then lowers `completion` (0: none).
pub fn barrier(dep: u64, completion: u64) -> Packet {
    let header: u16 = ffi::HSA_PACKET_TYPE_BARRIER_AND as u16
        | (1 << ffi::HSA_PACKET_HEADER_BARRIER)
        | ((ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | ((ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    let mut p = [0u8; 64];
    p[..2].copy_from_slice(&header.to_le_bytes());
    p[8..16].copy_from_slice(&dep.to_le_bytes());
    p[56..64].copy_from_slice(&completion.to_le_bytes());
    p
}

/// A queue the tool created (see [`create`]), alive until [`ToolQueue::destroy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolQueue(*mut hsa_queue_t);
// SAFETY: a runtime queue, written through the runtime's thread-safe index entries.
unsafe impl Send for ToolQueue {}
// SAFETY: as above.
unsafe impl Sync for ToolQueue {}

/// Creates a queue on `agent` with profiling on (the times of the dispatches it runs are read
/// like those of the application's queue).
pub fn create(agent: hsa_agent_t) -> Result<ToolQueue, ffi::hsa_status_t> {
    let o = runtime::originals().ok_or(ffi::HSA_STATUS_ERROR_NOT_INITIALIZED)?;
    let mut q: *mut hsa_queue_t = std::ptr::null_mut();
    // SAFETY: the runtime's original entry with a valid out-pointer.
    let st = unsafe {
        (o.queue_create)(
            agent,
            SIZE,
            ffi::HSA_QUEUE_TYPE_MULTI,
            None,
            std::ptr::null_mut(),
            u32::MAX,
            u32::MAX,
            &mut q,
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS || q.is_null() {
        return Err(st);
    }
    // SAFETY: a queue just created.
    unsafe { (o.profiler_enable)(q, 1) };
    Ok(ToolQueue(q))
}

impl ToolQueue {
    /// Copies the packets into the queue (headers last, with release) and rings it.
    pub fn submit(self, pkts: &[Packet]) {
        let Some(o) = runtime::originals() else {
            return;
        };
        let (Some(add), Some(read)) = (o.kernel.add_write_index, o.kernel.load_read_index) else {
            tracing::error!("the runtime lacks the queue-index entries; a replay write is dropped");
            return;
        };
        let q = self.0;
        // SAFETY: a live queue of the runtime.
        let (base, size) = unsafe { ((*q).base_address.cast::<Packet>(), u64::from((*q).size)) };
        for p in pkts {
            // SAFETY: the runtime's entries on its own queue.
            let idx = unsafe { add(q, 1) };
            // SAFETY: as above.
            while idx - unsafe { read(q) } >= size {
                std::thread::yield_now();
            }
            // SAFETY: slot `idx % size` of the ring is free (the read index passed it); the
            // header is published last with release ordering.
            unsafe {
                let slot = base.add((idx % size) as usize);
                let header = u16::from_le_bytes([p[0], p[1]]);
                std::ptr::copy_nonoverlapping(p.as_ptr().add(2), slot.cast::<u8>().add(2), 62);
                AtomicU16::from_ptr(slot.cast::<u16>()).store(header, Ordering::Release);
                (o.signal_store_screlease)((*q).doorbell_signal, idx as i64);
            }
        }
    }

    /// Waits until the queue's packet processor consumed every packet written to it, at most
    /// `bound`.
    pub fn idle(self, bound: Duration) -> bool {
        let Some(o) = runtime::originals() else {
            return true;
        };
        let (Some(add), Some(read)) = (o.kernel.add_write_index, o.kernel.load_read_index) else {
            return true;
        };
        let deadline = Instant::now() + bound;
        loop {
            // SAFETY: the runtime's entries on the tool's own live queue; adding 0 reads the
            // write index.
            let (written, done) = unsafe { (add(self.0, 0), read(self.0)) };
            if done >= written {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Destroys the queue; nothing writes to it any more.
    pub fn destroy(self) {
        if let Some(o) = runtime::originals() {
            // SAFETY: the tool's own queue, created by [`create`].
            unsafe { (o.queue_destroy)(self.0) };
        }
    }
}
