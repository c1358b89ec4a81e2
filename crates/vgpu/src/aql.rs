//! The AQL packet processor both back ends run: vhsa's queues and vkfd's command processors.
//!
//! One processor serves one queue, on its own thread. It consumes packets in order at the read
//! index: it waits while the slot's header is INVALID, executes the packet, sets the header
//! INVALID and advances the read index with release ordering (producers reuse a slot once the
//! read index has passed it), then completes the packet's signal. A waiter woken by the
//! completion thus finds the read index past the packet, as on hardware, whose packet processor
//! advances it when it takes the packet. Packets run one at a time, so the barrier bit and
//! fences hold by construction.
//!
//! What differs between the back ends sits behind [`QueueBackend`]: how the ring and read index
//! are reached, how signals are read and waited for (vhsa's signal objects, or `amd_signal_t`
//! memory owned by the real runtime), how a completion is delivered (with the mailbox
//! interrupt under vkfd), how dispatches run, and how a packet error reaches the runtime. The
//! packet decoding, the barrier and barrier-value semantics and the statuses of malformed
//! packets are here, once.
//!
//! | packet | processing |
//! |---|---|
//! | KERNEL_DISPATCH | zero dimensions: `INCOMPATIBLE_ARGUMENTS`; null kernel object: `INVALID_CODE_OBJECT`; otherwise [`QueueBackend::dispatch`] |
//! | BARRIER_AND / BARRIER_OR | waits until all / any non-null dependency signal reads 0 |
//! | VENDOR_SPECIFIC, AMD format 2 (barrier value) | waits until `(value & mask) <cond> compare` |
//! | VENDOR_SPECIFIC, AMD format 1 (PM4 indirect buffer) holding a counter payload | the agent's [`crate::pmc::CounterFile`] (start, read, stop); a payload it refuses completes and is logged, a malformed one is `INVALID_PACKET_FORMAT` |
//! | VENDOR_SPECIFIC, other AMD formats | [`QueueBackend::vendor_packet`] (vkfd runs ROCR's PM4 indirect buffer) |
//! | anything else | `INVALID_PACKET_FORMAT` |
//!
//! A packet error suspends the queue (no later packet runs, as on hardware): the packet stays at
//! the head and [`QueueBackend::report`] tells the runtime.

use hsa_abi::ffi::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes per AQL packet.
pub const PACKET_BYTES: usize = 64;

/// The INVALID header value.
pub const INVALID_HEADER: u16 = HSA_PACKET_TYPE_INVALID as u16;

/// The AMD vendor-packet format of the barrier-value packet.
pub const AMD_FORMAT_BARRIER_VALUE: u8 = HSA_AMD_PACKET_TYPE_BARRIER_VALUE as u8;

/// The AMD vendor-packet format of a PM4 indirect buffer (ROCR's cache invalidation).
pub const AMD_FORMAT_PM4_IB: u8 = 1;

/// Packet type of a header.
#[inline]
pub fn packet_type(header: u16) -> u32 {
    u32::from(header & 0xFF)
}

/// The header word of a slot.
///
/// # Safety
///
/// `slot` points at a 64-byte packet slot that outlives the returned reference.
#[inline]
pub unsafe fn header<'a>(slot: *mut u8) -> &'a AtomicU16 {
    // SAFETY: the caller's promise; slots are 64-byte aligned and headers are accessed
    // atomically by producers and the processor.
    unsafe { AtomicU16::from_ptr(slot.cast::<u16>()) }
}

/// Whether a signal condition holds (`hsa_signal_condition_t`; an unknown condition never
/// holds).
pub fn condition_holds(cond: u32, value: i64, compare: i64) -> bool {
    match cond {
        HSA_SIGNAL_CONDITION_EQ => value == compare,
        HSA_SIGNAL_CONDITION_NE => value != compare,
        HSA_SIGNAL_CONDITION_LT => value < compare,
        HSA_SIGNAL_CONDITION_GTE => value >= compare,
        _ => false,
    }
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchError {
    /// The queue is being destroyed and the dispatch was given up; nobody waits for it.
    Abandoned,
    /// The dispatch failed with a queue error: the status the runtime reports and a message for
    /// the log.
    Failed(hsa_status_t, String),
}

/// What a packet processor needs from the queue it serves.
pub trait QueueBackend {
    /// The ring's base address and its size in packets (a power of two).
    fn ring(&self) -> (*mut u8, u32);
    /// The read index the processor advances.
    fn read_index(&self) -> &AtomicU64;
    /// True once the queue is being destroyed: the processor returns.
    fn stopping(&self) -> bool;
    /// True while the queue is suspended (after an error, or on the runtime's request).
    fn suspended(&self) -> bool;
    /// Blocks until the slot at the read index may hold a packet, the queue resumes or it stops;
    /// may return early. `idle` counts consecutive empty polls since the last packet.
    fn wait_for_packet(&self, slot: *mut u8, idle: u32);
    /// True when the queue records dispatch start and end times.
    fn profiling(&self) -> bool;
    /// The device timestamp.
    fn now(&self) -> u64;
    /// The current value of a signal; `None` when the handle is not a signal.
    fn signal_value(&self, handle: u64) -> Option<i64>;
    /// Waits until the signal may have changed or `deadline` passes; may return early.
    fn wait_signal(&self, handle: u64, deadline: Instant);
    /// Completes a packet: decrements its completion signal (and wakes its waiters).
    /// `times` are (start, end) when the queue records them.
    fn complete(&self, handle: u64, times: Option<(u64, u64)>);
    /// Runs a kernel dispatch whose packet was copied out of `slot`.
    fn dispatch(
        &self,
        slot: *mut u8,
        packet: &hsa_kernel_dispatch_packet_t,
    ) -> Result<(), DispatchError>;
    /// Processes a vendor-specific packet of an AMD format other than barrier value.
    fn vendor_packet(&self, slot: *mut u8, format: u8) -> Result<(), DispatchError>;
    /// Suspends the queue on a packet error and tells the runtime.
    fn report(&self, status: hsa_status_t, message: &str);
    /// Called after each packet completed, with its type (for statistics).
    fn processed(&self, _packet_type: u32) {}
    /// The counter file of the queue's agent; without one, counter packets go to
    /// [`QueueBackend::vendor_packet`].
    fn counter_file(&self) -> Option<&crate::pmc::CounterFile> {
        None
    }
    /// A host view of `len` bytes at device address `addr`, when all of them are memory of
    /// this runtime.
    fn host_bytes(&self, _addr: u64, _len: usize) -> Option<*mut u8> {
        None
    }
    /// A counter packet the counter file refused (it still completes, the queue runs on): the
    /// back end logs `message`.
    fn counter_packet_refused(&self, _message: &str) {}
}

/// Runs the processor until the queue stops.
pub fn run<Q: QueueBackend>(q: &Q) {
    let mut idle = 0u32;
    loop {
        if q.stopping() {
            return;
        }
        let (base, size) = q.ring();
        let idx = q.read_index().load(Ordering::Relaxed);
        let slot = slot(base, size, idx);
        // SAFETY: `slot` lies in the ring, which outlives the processor.
        let h = unsafe { header(slot) }.load(Ordering::Acquire);
        if packet_type(h) == HSA_PACKET_TYPE_INVALID || q.suspended() {
            q.wait_for_packet(slot, idle);
            idle = idle.saturating_add(1);
            continue;
        }
        idle = 0;
        let Some(done) = execute(q, slot, h) else {
            continue;
        };
        // SAFETY: as above.
        unsafe { header(slot) }.store(INVALID_HEADER, Ordering::Release);
        q.read_index().store(idx + 1, Ordering::Release);
        if done.signal != 0 {
            q.complete(done.signal, done.times);
        }
    }
}

/// A packet that ran: its completion signal (0 for none) and times, read before the slot was
/// released.
struct Done {
    signal: u64,
    times: Option<(u64, u64)>,
}

/// The slot of `index` in a ring of `size` packets at `base`.
pub fn slot(base: *mut u8, size: u32, index: u64) -> *mut u8 {
    let i = (index % u64::from(size.max(1))) as usize;
    base.wrapping_add(i * PACKET_BYTES)
}

fn read_u64(slot: *mut u8, at: usize) -> u64 {
    // SAFETY: `at + 8 <= 64`, inside the packet slot.
    unsafe { slot.add(at).cast::<u64>().read_volatile() }
}

/// Executes one packet; `None` when it failed (reported, queue suspended) or was abandoned.
fn execute<Q: QueueBackend>(q: &Q, slot: *mut u8, h: u16) -> Option<Done> {
    let start = if q.profiling() { q.now() } else { 0 };
    let outcome = match packet_type(h) {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => kernel_dispatch(q, slot),
        HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR => {
            let deps: Vec<u64> = (0..5)
                .map(|i| read_u64(slot, 8 + 8 * i))
                .filter(|&s| s != 0)
                .collect();
            let any = packet_type(h) == HSA_PACKET_TYPE_BARRIER_OR;
            wait_until(q, &deps, |values| {
                let zero = |v: &Option<i64>| v.is_none_or(|v| v == 0);
                if any {
                    values.iter().any(zero)
                } else {
                    values.iter().all(zero)
                }
            });
            Ok(())
        }
        HSA_PACKET_TYPE_VENDOR_SPECIFIC => {
            // SAFETY: byte 2 of a vendor packet is its AMD format.
            let format = unsafe { slot.add(2).read_volatile() };
            if format == AMD_FORMAT_BARRIER_VALUE {
                barrier_value(q, slot);
                Ok(())
            } else if format == AMD_FORMAT_PM4_IB {
                pm4_indirect_buffer(q, slot)
            } else {
                q.vendor_packet(slot, format)
            }
        }
        _ => Err(DispatchError::Failed(
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
            format!(
                "packet type {} is not processed by this queue",
                packet_type(h)
            ),
        )),
    };
    match outcome {
        Ok(()) => {
            q.processed(packet_type(h));
            Some(Done {
                signal: read_u64(slot, 56),
                times: q.profiling().then(|| (start, q.now())),
            })
        }
        Err(DispatchError::Abandoned) => None,
        Err(DispatchError::Failed(status, message)) => {
            if !q.stopping() {
                q.report(status, &message);
            }
            None
        }
    }
}

fn kernel_dispatch<Q: QueueBackend>(q: &Q, slot: *mut u8) -> Result<(), DispatchError> {
    // SAFETY: the slot holds a dispatch packet, published by the header read with acquire
    // ordering; it is copied out whole.
    let packet = unsafe { slot.cast::<hsa_kernel_dispatch_packet_t>().read_volatile() };
    if packet.setup & 3 == 0 {
        return Err(DispatchError::Failed(
            HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
            "the dispatch packet has zero dimensions".into(),
        ));
    }
    if packet.kernel_object == 0 {
        return Err(DispatchError::Failed(
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
            "the dispatch packet's kernel object is null".into(),
        ));
    }
    q.dispatch(slot, &packet)
}

/// A PM4 indirect-buffer packet: a counter payload runs on the agent's counter file; any other
/// buffer goes to the back end.
fn pm4_indirect_buffer<Q: QueueBackend>(q: &Q, slot: *mut u8) -> Result<(), DispatchError> {
    let mut jump = [0u32; 4];
    for (i, d) in jump.iter_mut().enumerate() {
        // SAFETY: the jump command lies at bytes 4..20 of the 64-byte packet.
        *d = unsafe { slot.add(4 + 4 * i).cast::<u32>().read_volatile() };
    }
    let (Some(file), Some((base, dwords))) =
        (q.counter_file(), crate::pmc::parse_indirect_buffer(jump))
    else {
        return q.vendor_packet(slot, AMD_FORMAT_PM4_IB);
    };
    let Some(ib) = q.host_bytes(base, dwords as usize * 4) else {
        return q.vendor_packet(slot, AMD_FORMAT_PM4_IB);
    };
    // SAFETY: `host_bytes` vouched for `dwords` dwords of live memory at `ib`.
    let ib = unsafe { std::slice::from_raw_parts(ib.cast::<u32>().cast_const(), dwords as usize) };
    if !crate::pmc::Payload::is_payload(ib) {
        return q.vendor_packet(slot, AMD_FORMAT_PM4_IB);
    }
    let refused = |m: String| {
        DispatchError::Failed(
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
            format!("counter packet refused: {m}"),
        )
    };
    let payload = crate::pmc::Payload::decode(ib).map_err(refused)?;
    if let Err(m) = file.execute(&payload, |addr, len| q.host_bytes(addr, len)) {
        q.counter_packet_refused(&m);
    }
    Ok(())
}

fn barrier_value<Q: QueueBackend>(q: &Q, slot: *mut u8) {
    let signal = read_u64(slot, 8);
    let value = read_u64(slot, 16) as i64;
    let mask = read_u64(slot, 24) as i64;
    // SAFETY: byte 32 of a barrier-value packet is its condition.
    let cond = unsafe { slot.add(32).cast::<u32>().read_volatile() };
    if signal == 0 {
        return;
    }
    wait_until(q, &[signal], |v| {
        v[0].is_none_or(|v| condition_holds(cond, v & mask, value))
    });
}

/// Waits until `done` holds over the signals' values (a handle that is no signal reads `None`)
/// or the queue stops. Waits on the first signal that keeps `done` false, a short step at a
/// time when several signals are involved.
fn wait_until<Q: QueueBackend>(q: &Q, signals: &[u64], done: impl Fn(&[Option<i64>]) -> bool) {
    if signals.is_empty() {
        return;
    }
    loop {
        let values: Vec<Option<i64>> = signals.iter().map(|&s| q.signal_value(s)).collect();
        if done(&values) || q.stopping() {
            return;
        }
        let target = signals
            .iter()
            .zip(&values)
            .find(|(_, v)| v.is_some_and(|v| v != 0))
            .map_or(signals[0], |(s, _)| *s);
        let step = if signals.len() > 1 {
            Duration::from_millis(2)
        } else {
            Duration::from_millis(100)
        };
        q.wait_signal(target, Instant::now() + step);
    }
}

/// Quick re-checks (no sleep) after the last packet before an idle processor starts sleeping.
pub const QUICK_POLLS: u32 = 256;

/// An idle poll's sleep: [`QUICK_POLLS`] re-checks without sleeping (zero), then sleeps
/// doubling from 20 µs to `max`.
pub fn idle_sleep(idle: u32, max: Duration) -> Duration {
    if idle < QUICK_POLLS {
        return Duration::ZERO;
    }
    let step = Duration::from_micros(20) * 2u32.saturating_pow((idle - QUICK_POLLS).min(16));
    step.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_polls_recheck_quickly_then_back_off_to_the_limit() {
        let max = Duration::from_millis(5);
        assert_eq!(idle_sleep(0, max), Duration::ZERO);
        assert_eq!(idle_sleep(QUICK_POLLS - 1, max), Duration::ZERO);
        assert_eq!(idle_sleep(QUICK_POLLS, max), Duration::from_micros(20));
        assert_eq!(idle_sleep(QUICK_POLLS + 3, max), Duration::from_micros(160));
        assert_eq!(idle_sleep(QUICK_POLLS + 100, max), max);
        assert_eq!(idle_sleep(u32::MAX, max), max);
    }

    #[test]
    fn conditions_compare_as_hsa_defines_them() {
        assert!(condition_holds(HSA_SIGNAL_CONDITION_EQ, 3, 3));
        assert!(condition_holds(HSA_SIGNAL_CONDITION_NE, 2, 3));
        assert!(condition_holds(HSA_SIGNAL_CONDITION_LT, 2, 3));
        assert!(condition_holds(HSA_SIGNAL_CONDITION_GTE, 3, 3));
        assert!(!condition_holds(99, 3, 3));
    }
}
