//! The command processor: one thread per AQL queue, standing in for the GPU's micro-engine.
//!
//! Doorbell stores cannot be trapped in user space, so each processor polls its queue's write
//! index: 256 re-checks (yielding the CPU) after the last packet, then sleeps that double from
//! 20 µs to [`MAX_IDLE_SLEEP`]. The thunk's own entry points (event waits, `SetEvent`, queue creation
//! and updates) wake every processor at once ([`wake_all`]), so a runtime that waits for a
//! completion is served without the polling delay.
//!
//! Packets are processed by vgpu's shared AQL processor ([`vgpu::aql`]); this module supplies
//! what is specific to ROCR underneath:
//! - signals are `amd_signal_t` memory owned by ROCR (value at +8, mailbox at +16, event id at
//!   +24, start/end timestamps at +32/+40); a completion decrements the value, writes the
//!   timestamps when the queue's `ENABLE_PROFILING` property is set, then writes the event id
//!   to the mailbox and raises the interrupt;
//! - vendor packets of format 1 run ROCR's PM4 indirect buffer: its `ACQUIRE_MEM` (instruction
//!   cache invalidation after a code-object load) makes the emulators forget decoded code;
//! - a packet error is reported as the hardware does: the error code goes into the queue's
//!   `queue_inactive_signal` (2 dimensions, 8 null code, 32 packet format, 0x20000000 memory
//!   violation, 0x40000000 illegal instruction, 0x80000000 trap) with an interrupt, and ROCR's
//!   handler calls the queue's error callback. A memory violation is by default a GPU page
//!   fault instead: the memory events get the fault and ROCR reports it and aborts the
//!   process, as on real hardware. `VKFD_VM_FAULT=queue-error` reports it as a queue error
//!   (the process lives on; for tests).

use crate::error::{Error, Result};
use hsa_abi::ffi::*;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use vgpu::aql::{DispatchError, QueueBackend};

/// The longest sleep of an idle processor between two polls.
pub(crate) const MAX_IDLE_SLEEP: Duration = Duration::from_millis(5);

/// Offsets in `amd_queue_t`.
const READ_DISPATCH_ID: u64 = std::mem::offset_of!(amd_queue_t, read_dispatch_id) as u64;
const QUEUE_PROPERTIES: u64 = std::mem::offset_of!(amd_queue_t, queue_properties) as u64;
const INACTIVE_SIGNAL: u64 = std::mem::offset_of!(amd_queue_t, queue_inactive_signal) as u64;
/// Offsets in `amd_signal_t`.
const SIGNAL_VALUE: u64 = std::mem::offset_of!(amd_signal_t, __bindgen_anon_1) as u64;
const SIGNAL_MAILBOX: u64 = std::mem::offset_of!(amd_signal_t, event_mailbox_ptr) as u64;
const SIGNAL_EVENT_ID: u64 = std::mem::offset_of!(amd_signal_t, event_id) as u64;
const SIGNAL_START: u64 = std::mem::offset_of!(amd_signal_t, start_ts) as u64;
const SIGNAL_END: u64 = std::mem::offset_of!(amd_signal_t, end_ts) as u64;

/// Hardware error codes ROCR's queue-error handler decodes.
fn hardware_error_code(status: hsa_status_t) -> i64 {
    match status {
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => 2,
        HSA_STATUS_ERROR_INVALID_ALLOCATION => 4,
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT => 8,
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => 32,
        HSA_STATUS_ERROR_INVALID_ARGUMENT => 64,
        HSA_STATUS_ERROR_INVALID_ISA => 128,
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => 0x2000_0000,
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => 0x4000_0000,
        _ => 0x8000_0000,
    }
}

/// The wake-up every processor sleeps on.
static WAKE: Mutex<u64> = Mutex::new(0);
static WOKEN: Condvar = Condvar::new();

/// Wakes every command processor (and every barrier waiting on a signal).
pub(crate) fn wake_all() {
    *WAKE.lock() += 1;
    WOKEN.notify_all();
}

fn sleep_until_woken(limit: Duration) {
    if limit.is_zero() {
        std::thread::yield_now();
        return;
    }
    let mut g = WAKE.lock();
    let generation = *g;
    let deadline = Instant::now() + limit;
    while *g == generation {
        if WOKEN.wait_until(&mut g, deadline).timed_out() {
            return;
        }
    }
}

/// One AQL queue and its processor.
pub(crate) struct CommandProcessor {
    pub(crate) id: u64,
    pub(crate) node: u32,
    ring: u64,
    packets: u32,
    /// `amd_queue_t` of the queue (the read pointer ROCR gives lies at +128 in it).
    amd_queue: u64,
    stop: AtomicBool,
    suspended: AtomicBool,
    pub(crate) cu_mask: Mutex<Vec<u32>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The 64-bit doorbell ROCR stores to (never read: the write index is polled).
    doorbell: Box<AtomicU64>,
}

static QUEUES: Mutex<Option<HashMap<u64, Arc<CommandProcessor>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static VM_FAULT_WARNED: AtomicU32 = AtomicU32::new(0);

/// What ROCR passes to `hsaKmtCreateQueue` for an AQL queue.
pub(crate) struct QueueSpec {
    pub(crate) node: u32,
    pub(crate) ring: u64,
    pub(crate) ring_bytes: u64,
    pub(crate) read_pointer: u64,
}

/// Creates a queue and starts its processor; returns (queue id, doorbell address).
pub(crate) fn create(spec: QueueSpec) -> Result<(u64, u64)> {
    if crate::topology::gpu_model(spec.node).is_none() {
        return Err(Error::InvalidNode(spec.node));
    }
    let packets = spec.ring_bytes / vgpu::aql::PACKET_BYTES as u64;
    if spec.ring == 0 || packets == 0 || !packets.is_power_of_two() {
        return Err(Error::InvalidParameter("AQL ring"));
    }
    if spec.read_pointer < READ_DISPATCH_ID || !spec.read_pointer.is_multiple_of(8) {
        return Err(Error::InvalidParameter("the AQL read pointer"));
    }
    let cp = Arc::new(CommandProcessor {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        node: spec.node,
        ring: spec.ring,
        packets: packets as u32,
        amd_queue: spec.read_pointer - READ_DISPATCH_ID,
        stop: AtomicBool::new(false),
        suspended: AtomicBool::new(false),
        cu_mask: Mutex::new(Vec::new()),
        thread: Mutex::new(None),
        doorbell: Box::new(AtomicU64::new(0)),
    });
    let runner = cp.clone();
    let thread = std::thread::Builder::new()
        .name(format!("vkfd-cp-{}", cp.id))
        .spawn(move || run_guarded(&runner))
        .map_err(|e| Error::NoMemory(format!("cannot start a command processor: {e}")))?;
    *cp.thread.lock() = Some(thread);
    let doorbell = (&*cp.doorbell) as *const AtomicU64 as u64;
    let id = cp.id;
    QUEUES
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(id, cp);
    Ok((id, doorbell))
}

/// The processor's thread. A panic in it (a defect of the thunk or of the emulator) must not
/// end the thread silently, leaving the queue's waits to hang: it is caught here, logged with
/// its message, and the queue is put in error as the hardware reports a failed queue (its
/// inactive signal, so ROCR calls the application's queue error callback). The queue then runs
/// nothing more; destroying it is still possible.
fn run_guarded(cp: &CommandProcessor) {
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vgpu::aql::run(cp)));
    if let Err(payload) = ran {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        tracing::error!(
            "queue {} on node {}: the command processor failed ({message}); the queue is put in \
             error and runs nothing more",
            cp.id,
            cp.node
        );
        // A panic while raising the error must not escape the thread either.
        let _ =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cp.raise(HSA_STATUS_ERROR)));
    }
}

/// `VKFD_TEST_CP_PANIC=N` (for tests): the command processor panics instead of running the
/// N-th kernel dispatch of the process (counting from 1), so the report of a failed processor
/// can be tested. Unset or invalid: never.
fn injected_panic() -> bool {
    static AT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    static DISPATCHES: AtomicU64 = AtomicU64::new(0);
    let at = *AT.get_or_init(|| {
        std::env::var("VKFD_TEST_CP_PANIC")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&n| n > 0)
    });
    at.is_some_and(|n| DISPATCHES.fetch_add(1, Ordering::Relaxed) + 1 == n)
}

/// A queue by id.
pub(crate) fn get(id: u64) -> Result<Arc<CommandProcessor>> {
    QUEUES
        .lock()
        .as_ref()
        .and_then(|m| m.get(&id).cloned())
        .ok_or_else(|| Error::InvalidHandle(format!("queue {id}")))
}

/// Suspends (`percentage` 0) or resumes a queue.
pub(crate) fn update(id: u64, percentage: u32) -> Result<()> {
    tracing::debug!("queue {id}: update to {percentage} %");
    get(id)?.suspended.store(percentage == 0, Ordering::Release);
    wake_all();
    Ok(())
}

/// Stops a queue: a running dispatch is abandoned, the processor joined.
pub(crate) fn destroy(id: u64) -> Result<()> {
    let cp = QUEUES
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&id))
        .ok_or_else(|| Error::InvalidHandle(format!("queue {id}")))?;
    stop(&cp);
    Ok(())
}

fn stop(cp: &CommandProcessor) {
    cp.stop.store(true, Ordering::Release);
    wake_all();
    let t = cp.thread.lock().take();
    if let Some(t) = t
        && t.thread().id() != std::thread::current().id()
    {
        let _ = t.join();
    }
}

/// Stops every queue (the device is closed).
pub(crate) fn destroy_all() {
    let all: Vec<_> = QUEUES
        .lock()
        .take()
        .map(|m| m.into_values().collect())
        .unwrap_or_default();
    for cp in all {
        stop(&cp);
    }
}

fn atomic_i64<'a>(address: u64) -> Option<&'a AtomicI64> {
    if !address.is_multiple_of(8) || !crate::vm::contains(address, 8) {
        return None;
    }
    // SAFETY: an aligned word of live thunk memory (host memory).
    Some(unsafe { AtomicI64::from_ptr(address as *mut i64) })
}

/// Decrements (or stores) a signal's value, records times, and raises its interrupt.
fn deliver(signal: u64, new_value: Option<i64>, times: Option<(u64, u64)>) {
    let Some(value) = atomic_i64(signal + SIGNAL_VALUE) else {
        tracing::warn!("completion signal {signal:#x} is not memory of the thunk");
        return;
    };
    if let Some((start, end)) = times
        && let (Some(s), Some(e)) = (
            atomic_i64(signal + SIGNAL_START),
            atomic_i64(signal + SIGNAL_END),
        )
    {
        s.store(start as i64, Ordering::Relaxed);
        e.store(end as i64, Ordering::Relaxed);
    }
    match new_value {
        Some(v) => value.store(v, Ordering::Release),
        None => {
            let before = value.fetch_sub(1, Ordering::AcqRel);
            if before <= 0 {
                // A signal at or below zero before completion is stale or reused: worth a look.
                tracing::warn!("completion signal {signal:#x} decremented from {before}");
            }
        }
    }
    let mailbox = crate::vm::read_u64(signal + SIGNAL_MAILBOX).filter(|&m| m != 0);
    if let Some(mailbox) = mailbox {
        // SAFETY: `signal` is an `amd_signal_t` in thunk memory (checked above).
        let id = unsafe { ((signal + SIGNAL_EVENT_ID) as *const u32).read_volatile() };
        crate::events::post(mailbox, id);
    }
    wake_all();
}

impl CommandProcessor {
    fn properties(&self) -> u32 {
        // SAFETY: `amd_queue` is ROCR's `amd_queue_t` in thunk memory, alive while the queue is.
        unsafe { ((self.amd_queue + QUEUE_PROPERTIES) as *const u32).read_volatile() }
    }

    /// Raises a packet error as the hardware does.
    fn raise(&self, status: hsa_status_t) {
        self.suspended.store(true, Ordering::Release);
        if status == HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION && !vm_fault_as_queue_error() {
            let address = crate::dispatch::last_fault_address(self.id).unwrap_or(0);
            if crate::events::memory_fault(self.node, address) {
                return;
            }
            if VM_FAULT_WARNED.fetch_add(1, Ordering::Relaxed) == 0 {
                tracing::warn!(
                    "no memory event is registered: the page fault is reported as a queue error"
                );
            }
        }
        // SAFETY: as in `properties`.
        let inactive =
            unsafe { ((self.amd_queue + INACTIVE_SIGNAL) as *const u64).read_volatile() };
        if inactive == 0 {
            tracing::error!(
                "queue {}: packet error {status:#x} and no inactive signal to report it",
                self.id
            );
            return;
        }
        deliver(inactive, Some(hardware_error_code(status)), None);
    }
}

/// `VKFD_VM_FAULT=queue-error`: page faults become queue errors.
fn vm_fault_as_queue_error() -> bool {
    static MODE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| std::env::var("VKFD_VM_FAULT").is_ok_and(|v| v.trim() == "queue-error"))
}

impl QueueBackend for CommandProcessor {
    fn ring(&self) -> (*mut u8, u32) {
        (self.ring as *mut u8, self.packets)
    }

    fn read_index(&self) -> &AtomicU64 {
        // SAFETY: `read_dispatch_id` of ROCR's `amd_queue_t`, 8-byte aligned, alive while the
        // queue is; ROCR reads it atomically.
        unsafe { AtomicU64::from_ptr((self.amd_queue + READ_DISPATCH_ID) as *mut u64) }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    fn suspended(&self) -> bool {
        self.suspended.load(Ordering::Acquire)
    }

    fn wait_for_packet(&self, _slot: *mut u8, idle: u32) {
        sleep_until_woken(vgpu::aql::idle_sleep(idle, MAX_IDLE_SLEEP));
    }

    fn profiling(&self) -> bool {
        self.properties() & AMD_QUEUE_PROPERTIES_ENABLE_PROFILING as u32 != 0
    }

    fn now(&self) -> u64 {
        crate::clock::now_ns()
    }

    fn signal_value(&self, handle: u64) -> Option<i64> {
        atomic_i64(handle + SIGNAL_VALUE).map(|v| v.load(Ordering::Acquire))
    }

    fn wait_signal(&self, _handle: u64, deadline: Instant) {
        let step = deadline
            .saturating_duration_since(Instant::now())
            .min(MAX_IDLE_SLEEP);
        sleep_until_woken(step);
    }

    fn complete(&self, handle: u64, times: Option<(u64, u64)>) {
        deliver(handle, None, times);
    }

    fn dispatch(
        &self,
        slot: *mut u8,
        packet: &hsa_kernel_dispatch_packet_t,
    ) -> std::result::Result<(), DispatchError> {
        if injected_panic() {
            panic!("injected by VKFD_TEST_CP_PANIC");
        }
        crate::dispatch::run(
            &crate::dispatch::DispatchQueue {
                id: self.id,
                node: self.node,
                amd_queue: self.amd_queue,
            },
            &self.stop,
            slot as u64,
            packet,
        )
    }

    fn vendor_packet(&self, slot: *mut u8, format: u8) -> std::result::Result<(), DispatchError> {
        if format != vgpu::aql::AMD_FORMAT_PM4_IB {
            return Err(DispatchError::Failed(
                HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
                format!("AMD vendor packet format {format} is not processed"),
            ));
        }
        crate::pm4::run_indirect_buffer(self.node, slot)
    }

    fn processed(&self, packet_type: u32) {
        crate::stats::count(packet_type);
    }

    fn counter_file(&self) -> Option<&vgpu::pmc::CounterFile> {
        crate::dispatch::counter_file(self.node)
    }

    fn counter_packet_refused(&self, message: &str) {
        tracing::warn!(
            "queue {} on node {}: counter packet refused: {message}",
            self.id,
            self.node
        );
    }

    fn host_bytes(&self, addr: u64, len: usize) -> Option<*mut u8> {
        crate::vm::cpu_range(addr, len as u64).map(|cpu| cpu as *mut u8)
    }

    fn report(&self, status: hsa_status_t, message: &str) {
        tracing::error!("queue {} on node {}: {message}", self.id, self.node);
        self.raise(status);
    }
}
