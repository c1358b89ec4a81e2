//! The write interceptor's slow path: the normal (tracked) submit and the replay window.

use super::contract::{
    self, Callback, DispatchSummary, PassTimes, ReplayClient, RestoreTotals, call_client,
};
use super::cooperative;
use super::decline::DeclineReason;
use super::deferred;
use super::gate::{ReplayGate, SubmitGuard, WindowGuard};
use super::host_window;
use super::inflight::RuntimeSignals;
use super::localized::{ArmGuard, LoopScope};
use super::{
    DRAIN_DECLINE, DRAIN_TIMEOUT, IN_FLIGHT, INVENTORY, NAMES, QUEUES, QueueState, SIGNALS, STATS,
    TIMED_SIGNALS, coverage,
};
use crate::abi::{
    kreplay_dispatch_info_t, kreplay_event_kind_t, kreplay_event_t, kreplay_replay_stats_t,
};
use crate::diagnostics::fatal;
use crate::diagnostics::panic_boundary;
use crate::loader::ReplayTraits;
use crate::runtime::{Runtime, monotonic_ns};
use crate::snapshot::{AgentCopy, HostStore, Snapshot};
use crate::state::{self, ReplayService};
use crate::sync::{Arc, Mutex, Ordering, fence};
use hsa_abi::ffi::{self, hsa_kernel_dispatch_packet_t, hsa_signal_t, hsa_status_t};
use std::cell::OnceCell;
use std::collections::HashSet;
use std::ffi::{CString, c_void};
use std::sync::atomic::AtomicU16;
use std::time::{Duration, Instant};

use crate::tool_queue::{Packet, Writer};

/// `(agent, dispatch id, queue id)` of a replay window open on a thread.
type WindowMark = (u64, u64, u64);

thread_local! {
    /// The replay windows open on this thread, innermost last (a callback of one window may
    /// submit on another agent, which opens a window there).
    static OPEN_WINDOWS: std::cell::RefCell<Vec<WindowMark>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Marks a replay window open on this thread for its lifetime (removed even on unwinding).
struct OpenWindow;

impl OpenWindow {
    fn enter(q: &QueueState, d: &Dispatch) -> Self {
        OPEN_WINDOWS.with(|w| {
            w.borrow_mut()
                .push((q.agent.handle, d.info.dispatch_id, q.queue_id))
        });
        OpenWindow
    }
}

impl Drop for OpenWindow {
    fn drop(&mut self) {
        OPEN_WINDOWS.with(|w| w.borrow_mut().pop());
    }
}

/// A submission on `q` from a callback of a window this thread holds on the same agent would
/// wait for that window's writer lock forever: abort with a message naming both instead.
fn refuse_reentrant_submit(q: &QueueState) {
    let open = OPEN_WINDOWS.with(|w| {
        w.borrow()
            .iter()
            .find(|(agent, _, _)| *agent == q.agent.handle)
            .copied()
    });
    if let Some((agent, dispatch, window_queue)) = open {
        fatal(&format!(
            "a replay callback of dispatch {dispatch} (agent {} ({agent:#x}), queue {window_queue}) submitted work on queue {} \
             of the same agent; that submission would wait forever for the replay window running the callback. Callbacks \
             must not submit work on the replaying agent.",
            q.agent_name, q.queue_id
        ));
    }
}

/// The replay window this thread holds, if any (its callbacks are running).
fn innermost_open_window() -> Option<WindowMark> {
    OPEN_WINDOWS.with(|w| w.borrow().last().copied())
}

/// Ends a bounded wait for another agent's lock taken from inside a window this thread holds:
/// two windows whose callbacks submit on each other's agent would otherwise wait forever.
fn cross_window_deadlock(
    q: &QueueState,
    (agent, dispatch, window_queue): WindowMark,
    what: &str,
) -> ! {
    fatal(&format!(
        "a replay callback of dispatch {dispatch} (agent {agent:#x}, queue {window_queue}) waited {} ms to {what} on queue {} \
         of agent {} ({:#x}), whose lock another replay window holds; callbacks of two windows that submit on each other's \
         agents would wait forever. Raise KREPLAY_DRAIN_TIMEOUT_MS if that window is legitimately long.",
        DRAIN_TIMEOUT.as_millis(),
        q.queue_id,
        q.agent_name,
        q.agent.handle
    ))
}

/// Takes `q`'s agent lock for an ordinary submit. Unbounded on an application thread (a window
/// ends); bounded by `KREPLAY_DRAIN_TIMEOUT_MS` when this thread is inside a window of its own.
fn enter_submit(q: &QueueState) -> SubmitGuard {
    match innermost_open_window() {
        None => ReplayGate::submit(&q.lock),
        Some(mark) => ReplayGate::submit_for(&q.lock, *DRAIN_TIMEOUT)
            .unwrap_or_else(|| cross_window_deadlock(q, mark, "submit")),
    }
}

/// Takes `q`'s agent lock for a replay window, bounded like [`enter_submit`].
fn enter_window(q: &QueueState) -> WindowGuard {
    match innermost_open_window() {
        None => ReplayGate::window(&q.lock),
        Some(mark) => ReplayGate::window_for(&q.lock, *DRAIN_TIMEOUT)
            .unwrap_or_else(|| cross_window_deadlock(q, mark, "open a replay window")),
    }
}

/// Fences a host write (a copy or fill by the application) into `dst` against replay windows:
/// when `dst` lies in a tracked allocation, returns the reader side of its agent's gate, held for
/// the call. `None` when nothing needs fencing, or when this thread holds that agent's window (a
/// client callback writing memory of its own replay).
pub fn fence_host_write(dst: usize) -> Option<HostWriteFence> {
    if state::service() == ReplayService::Off {
        return None;
    }
    let agents = INVENTORY.agents_containing(dst);
    if agents.is_empty() {
        return None;
    }
    // Every agent whose snapshot can hold `dst`, in handle order so two fences never wait on
    // each other; an agent whose window this thread holds is already exclusive.
    let mut fenced = Vec::with_capacity(agents.len());
    for agent in agents {
        if OPEN_WINDOWS.with(|w| w.borrow().iter().any(|(a, _, _)| *a == agent)) {
            continue;
        }
        let lock = super::GATE.agent(agent);
        let guard = match innermost_open_window() {
            None => ReplayGate::submit(&lock),
            // Inside another agent's window (a callback): bounded, as submissions are.
            Some((a, dispatch, _)) => ReplayGate::submit_for(&lock, *DRAIN_TIMEOUT).unwrap_or_else(|| {
                fatal(&format!(
                    "a replay callback of dispatch {dispatch} (agent {a:#x}) waited {} ms to copy into memory of agent {agent:#x}, \
                     whose lock another replay window holds. Raise KREPLAY_DRAIN_TIMEOUT_MS if that window is legitimately long.",
                    DRAIN_TIMEOUT.as_millis()
                ))
            }),
        };
        fenced.push((agent, guard));
    }
    if fenced.is_empty() {
        None
    } else {
        Some(HostWriteFence { fenced })
    }
}

/// The reader side of the gates of every agent whose snapshot can hold the memory a host write
/// goes to.
pub struct HostWriteFence {
    fenced: Vec<(u64, SubmitGuard)>,
}

impl HostWriteFence {
    /// Counts an asynchronous copy or fill completing on the application's `signal` (whose value
    /// was `value_at_submit` just before the call) in flight on each fenced agent, so their next
    /// agent-wide drains wait for it.
    pub fn count_async(&self, signal: hsa_signal_t, value_at_submit: i64) {
        if let Some(rt) = Runtime::get() {
            for (agent, _) in &self.fenced {
                IN_FLIGHT.add_copy(&RuntimeSignals(rt), *agent, signal, value_at_submit);
            }
        }
    }
}

fn packet_type(p: &Packet) -> u32 {
    u32::from(u16::from_le_bytes([p[0], p[1]]) & 0xff)
}

fn barrier_packet(completion: hsa_signal_t) -> Packet {
    crate::tool_queue::barrier(0, completion.handle)
}

fn to_bytes<T: Copy>(v: &T) -> Packet {
    assert_eq!(std::mem::size_of::<T>(), 64);
    let mut out = [0u8; 64];
    // SAFETY: `T` is a 64-byte plain-data packet.
    unsafe { std::ptr::copy_nonoverlapping((v as *const T).cast::<u8>(), out.as_mut_ptr(), 64) };
    out
}

fn write(writer: Writer, pkts: &[Packet]) {
    // SAFETY: `pkts` holds `len` complete packets; the writer copies them before returning.
    unsafe { writer(pkts.as_ptr().cast(), pkts.len() as u64) }
}

/// Decides the replay service at the first dispatch: a registered client wins, else the
/// built-in client when configured, else off.
fn settle_service() {
    // The built-in client registers under the same lock; taking it here would deadlock, so the
    // decision runs in two steps: install (which locks), then settle off (under the lock).
    if contract::client().is_none() {
        contract::install_fallback_client();
    }
    let _decision = state::SERVICE_DECISION.lock();
    if contract::client().is_none() {
        state::settle_service_off();
    }
}

/// What the async handler of an ordinary dispatch needs. Replay passes and drains never use
/// the async-handler thread: they wait on their signals directly.
struct HandlerCtx {
    queue: Arc<QueueState>,
    /// The tool signal watched (on the dispatch, or on the barrier after it).
    signal: hsa_signal_t,
    /// The application's signal carried by the dispatch, whose times are the kernel's.
    times_from: Option<hsa_signal_t>,
    /// The dispatch's entry in [`IN_FLIGHT`].
    entry: u64,
    summary: Box<DispatchSummary>,
}

unsafe extern "C" fn on_signal(_value: ffi::hsa_signal_value_t, arg: *mut c_void) -> bool {
    // SAFETY: `arg` is the Box leaked by `watch`, handed back exactly once.
    let ctx = unsafe { Box::from_raw(arg.cast::<HandlerCtx>()) };
    let HandlerCtx {
        queue,
        signal,
        times_from,
        entry,
        mut summary,
    } = *ctx;
    panic_boundary(
        "the completion handler",
        || {
            IN_FLIGHT.finish(entry);
            let times = match Runtime::get() {
                None => (0, 0),
                Some(rt) => {
                    let from_app = times_from
                        .and_then(|a| TIMED_SIGNALS.take(a, |agent| rt.dispatch_times(agent, a)));
                    from_app
                        .unwrap_or_else(|| rt.dispatch_times(queue.agent, signal))
                        .unwrap_or_else(|e| {
                            tracing::warn!("dispatch times unavailable: {e}");
                            let now = monotonic_ns();
                            (now, now)
                        })
                }
            };
            summary.window = times;
            summary.passes = vec![PassTimes {
                start_ns: times.0,
                end_ns: times.1,
                restore: None,
            }];
            // A panicking client must not skip the bookkeeping below: a handler left counted in
            // flight would make teardown wait for it until the bound.
            if let Some(c) = contract::client() {
                call_client(Callback::DispatchDone, || c.dispatch_done(&summary));
            }
        },
        || (),
    );
    SIGNALS.give_back(signal);
    queue.in_flight.fetch_sub(1, Ordering::AcqRel);
    false
}

/// Watches the tool signal of an ordinary dispatch with an async handler (which reports it to
/// the client); counts the handler in flight on the queue.
fn watch(rt: Runtime, ctx: HandlerCtx) -> Result<(), HandlerCtx> {
    let q = ctx.queue.clone();
    let signal = ctx.signal;
    q.in_flight.fetch_add(1, Ordering::AcqRel);
    let ctx = Box::into_raw(Box::new(ctx));
    // SAFETY: `on_signal` takes back the box exactly once.
    let st = unsafe {
        (rt.originals().signal_async_handler)(
            signal,
            ffi::HSA_SIGNAL_CONDITION_LT,
            1,
            Some(on_signal),
            ctx.cast(),
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        tracing::warn!(
            "hsa_amd_signal_async_handler failed with status {st:#x}; the dispatch is not reported"
        );
        q.in_flight.fetch_sub(1, Ordering::AcqRel);
        // SAFETY: the runtime refused the handler, so the box is still ours.
        return Err(*unsafe { Box::from_raw(ctx) });
    }
    Ok(())
}

/// Submits `packets` counted on the queue's counting signal, raised first by the number of
/// completions to come, with no signal, handler or allocation per submission: a dispatch
/// without a completion signal carries the counting signal in that empty field (the only change
/// to the application's packets); when a dispatch carries the application's own signal, or no
/// packet is given (a fence), a barrier packet with the counting signal follows (it completes only
/// after everything earlier on the queue). Without a counting signal the packets are followed by
/// a barrier packet with a tool signal of its own, returned to the pool by the drain that sees it
/// done. False when no signal was available (the packets still went, uncounted).
fn write_counted(rt: Runtime, q: &QueueState, writer: Writer, packets: &[Packet]) -> bool {
    let Some(counter) = q.counter else {
        let Some(sig) = SIGNALS.take(rt) else {
            write(writer, packets);
            return false;
        };
        IN_FLIGHT.add_tool_signal(&RuntimeSignals(rt), q.agent.handle, sig, q.queue_id, true);
        if !packets.is_empty() {
            write(writer, packets);
        }
        write(writer, &[barrier_packet(sig)]);
        return true;
    };
    let mut carried: i64 = 0;
    let mut barrier = packets.is_empty();
    for p in packets {
        if packet_type(p) == ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH {
            if completion_signal(p) == 0 {
                carried += 1;
            } else {
                barrier = true;
            }
        }
    }
    rt.signal_add(counter, carried + i64::from(barrier));
    if carried == 0 {
        write(writer, packets);
    } else {
        // In chunks on the stack: no allocation however long the submission.
        let mut chunk = [[0u8; 64]; 16];
        for part in packets.chunks(chunk.len()) {
            for (slot, p) in chunk.iter_mut().zip(part) {
                *slot = *p;
                if packet_type(p) == ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH
                    && completion_signal(p) == 0
                {
                    slot[56..64].copy_from_slice(&counter.handle.to_le_bytes());
                }
            }
            write(writer, &chunk[..part.len()]);
        }
    }
    if barrier {
        write(writer, &[barrier_packet(counter)]);
    }
    true
}

/// The completion-signal handle of a dispatch or barrier packet (bytes 56..64).
fn completion_signal(p: &Packet) -> u64 {
    u64::from_le_bytes([p[56], p[57], p[58], p[59], p[60], p[61], p[62], p[63]])
}

/// Forwards `packets[*forwarded..end]` under the reader side of the gate, counted when a
/// dispatch is among them (other packets do not write memory).
fn forward_run(
    rt: Runtime,
    q: &QueueState,
    writer: Writer,
    packets: &[Packet],
    end: usize,
    forwarded: &mut usize,
) {
    let run = &packets[*forwarded..end];
    if run.is_empty() {
        return;
    }
    deferred::note_completions(run.iter().map(completion_signal));
    let _submit = enter_submit(q);
    *forwarded = end;
    let is_dispatch = |p: &Packet| packet_type(p) == ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH;
    let forward = |part: &[Packet]| {
        if part.iter().any(is_dispatch) {
            write_counted(rt, q, writer, part);
        } else if !part.is_empty() {
            write(writer, part);
        }
    };
    // The last barrier with dependencies becomes one of the queue's gates: a tool barrier counted
    // in flight fences what comes before it, and a tool barrier right after it says when it
    // passed.
    let last = run
        .iter()
        .rposition(|p| gate_of(p).is_some_and(|(deps, _)| deps != [0; 5]));
    let signals = last.and_then(|_| SIGNALS.take_all(rt));
    let (Some(j), Some([before_gate, passed])) = (last, signals) else {
        forward(run);
        return;
    };
    forward(&run[..j]);
    IN_FLIGHT.add_tool_signal(
        &RuntimeSignals(rt),
        q.agent.handle,
        before_gate,
        q.queue_id,
        true,
    );
    write(
        writer,
        &[barrier_packet(before_gate), run[j], barrier_packet(passed)],
    );
    let (deps, any) = gate_of(&run[j]).unwrap_or_default();
    set_gate(rt, q, super::Gate { deps, any, passed });
    forward(&run[j + 1..]);
}

/// Adds `gate` to the queue's gates; those that passed leave the list, their signals recycled at
/// the next drain.
fn set_gate(rt: Runtime, q: &QueueState, gate: super::Gate) {
    let mut gates = q.gates.lock();
    gates.retain(|g| {
        let open = rt.signal_load(g.passed) >= 1;
        if !open {
            IN_FLIGHT.add_tool_signal(
                &RuntimeSignals(rt),
                q.agent.handle,
                g.passed,
                q.queue_id,
                true,
            );
        }
        open
    });
    gates.push(gate);
}

/// AMD's vendor packet format of a barrier on one signal's value (`hsa_amd_barrier_value_packet_t`,
/// as HIP's stream waits on a value submit it).
const AMD_BARRIER_VALUE: u8 = 2;

/// The dependency signals of a packet that holds its queue until they fire, and whether any one
/// of them is enough: a barrier-AND (all) or barrier-OR (any) on up to five signals (offsets 8
/// to 47), or AMD's barrier-value packet on the signal at offset 8.
fn gate_of(p: &Packet) -> Option<([u64; 5], bool)> {
    let word = |i: usize| u64::from_le_bytes(p[8 + 8 * i..16 + 8 * i].try_into().unwrap_or([0; 8]));
    match packet_type(p) {
        ffi::HSA_PACKET_TYPE_BARRIER_AND => Some((std::array::from_fn(word), false)),
        ffi::HSA_PACKET_TYPE_BARRIER_OR => Some((std::array::from_fn(word), true)),
        ffi::HSA_PACKET_TYPE_VENDOR_SPECIFIC if p[2] == AMD_BARRIER_VALUE => {
            Some(([word(0), 0, 0, 0, 0], false))
        }
        _ => None,
    }
}

/// Completion signals of the packets the application published in its ring from index `next`
/// on (written and rung, not yet handed to the interceptor: runtimes hand packets over one at a
/// time). They run only after the current submission, so after any window it opens.
fn published_behind(q: &QueueState, next: u64) -> Vec<u64> {
    if q.queue.is_null() {
        return Vec::new();
    }
    // SAFETY: the application's queue, alive while its interceptor runs.
    let (base, size) = unsafe {
        (
            (*q.queue).base_address.cast::<u8>(),
            u64::from((*q.queue).size),
        )
    };
    let mut out = Vec::new();
    for index in next..next + size.saturating_sub(1) {
        // SAFETY: slot `index % size` of the ring; its header is read atomically, and a
        // published packet's body is not rewritten before the interceptor consumed it.
        let signal = unsafe {
            let slot = base.add(((index % size) * 64) as usize);
            let header = AtomicU16::from_ptr(slot.cast::<u16>()).load(Ordering::Acquire);
            if u32::from(header & 0xFF) == ffi::HSA_PACKET_TYPE_INVALID {
                break;
            }
            std::ptr::read_unaligned(slot.add(56).cast::<u64>())
        };
        out.push(signal);
    }
    out
}

/// True when queue `queue_id`'s counted work waits behind a gate that cannot pass before
/// `signals` fired, signals that fire only after the window (the replayed dispatch's, those
/// behind it). The work before that gate is counted by the tool barrier in front of it.
fn waits_on(queue_id: u64, signals: &[u64]) -> bool {
    let Some(rt) = Runtime::get() else {
        return false;
    };
    QUEUES.all().iter().any(|q| {
        q.queue_id == queue_id
            && q.gates
                .lock()
                .iter()
                .any(|g| g.waits_for(signals) && rt.signal_load(g.passed) >= 1)
    })
}

/// The interceptor's slow path (the replay service is on or undecided).
///
/// Every dispatch of the submission is considered in order: one the client does not replay
/// stays in the run of packets forwarded together (counted by one barrier packet); one it
/// replays first forwards the run before it, then opens its window (whose queue drain waits for
/// that run to complete), so barrier bits and order hold. `forwarded` counts the packets that
/// reached the writer, so a caught panic never submits one twice.
///
/// # Safety
/// `pkts` must hold `count` packets of 64 bytes.
pub unsafe fn on_submit(
    q: &Arc<QueueState>,
    pkts: *const c_void,
    count: u64,
    next_index: u64,
    writer: Writer,
    forwarded: &mut usize,
) {
    // Pairs with the release of `turn_service_on`: the queue marks a late registration made
    // before turning the service on are visible from here.
    fence(Ordering::Acquire);
    if state::service() == ReplayService::Undecided {
        settle_service();
    }
    // SAFETY: caller contract.
    let packets: &[Packet] =
        unsafe { std::slice::from_raw_parts(pkts.cast::<Packet>(), count as usize) };
    let (Some(client), Some(rt)) = (contract::client(), Runtime::get()) else {
        *forwarded = packets.len();
        write(writer, packets);
        return;
    };
    refuse_reentrant_submit(q);
    let _disarmed = super::localized::Disarmed::begin();
    if q.unfenced.load(Ordering::Acquire) {
        fence_earlier_work(rt, q, writer);
    }
    let submission = Submission {
        rt,
        q,
        packets,
        next_index,
        writer,
        client: &**client,
    };
    for (i, p) in packets.iter().enumerate() {
        if packet_type(p) == ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH {
            submission.consider(i, forwarded);
        }
    }
    forward_run(rt, q, writer, packets, packets.len(), forwarded);
}

/// One submission's packets on their way to the queue, with what deciding about each
/// dispatch among them needs.
struct Submission<'a> {
    rt: Runtime,
    q: &'a Arc<QueueState>,
    packets: &'a [Packet],
    /// The ring index after the submission's packets.
    next_index: u64,
    writer: Writer,
    client: &'static dyn ReplayClient,
}

impl Submission<'_> {
    /// The dispatch packet at `i`, with the signals of the packets published behind it.
    fn dispatch_at(&self, i: usize) -> Dispatch {
        // SAFETY: a 64-byte kernel dispatch packet.
        let pkt: hsa_kernel_dispatch_packet_t =
            unsafe { std::ptr::read_unaligned(self.packets[i].as_ptr().cast()) };
        let mut dispatch = Dispatch::new(self.rt, self.q, pkt);
        dispatch.behind = self.packets[i + 1..]
            .iter()
            .map(completion_signal)
            .chain(published_behind(self.q, self.next_index))
            .filter(|&s| s != 0)
            .collect();
        dispatch
    }

    /// Asks the client about the dispatch at `i` and replays, declines, times or forwards it.
    fn consider(&self, i: usize, forwarded: &mut usize) {
        let (rt, q, writer, client) = (self.rt, self.q, self.writer, self.client);
        let dispatch = self.dispatch_at(i);
        STATS.dispatches.fetch_add(1, Ordering::Relaxed);
        dispatch.event(
            client,
            kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_ENTER,
            0,
            0,
            None,
        );
        let passes =
            call_client(Callback::PassCount, || client.pass_count(&dispatch.info)).unwrap_or(1);
        let window = |d| Window {
            rt,
            q,
            d,
            client,
            total: passes,
            writer,
            traits: OnceCell::new(),
        };
        let mut forward_before = || {
            forward_run(rt, q, writer, self.packets, i, forwarded);
            *forwarded = i + 1;
        };
        match passes {
            1 if client.pass_events_always(&dispatch.info) => {
                forward_before();
                window(&dispatch).run_once_isolated();
            }
            1 => self.run_once(i, &dispatch, forwarded),
            0 if !client.has_continue() => {
                forward_before();
                window(&dispatch).decline(DeclineReason::UnboundedWithoutContinue, None);
            }
            total => {
                forward_before();
                if let Some(dispatch) = self.defer(dispatch, total) {
                    run_window(rt, q, &dispatch, client, total, writer);
                }
            }
        }
    }

    /// Defers the window of a dispatch whose queue is gated (a barrier before it has not
    /// passed) to a worker thread (see [`deferred`]); gives the dispatch back when its window
    /// is to run here: the queue is not gated, or no signal or thread was to be had.
    fn defer(&self, mut dispatch: Dispatch, total: u32) -> Option<Dispatch> {
        let (rt, q, client) = (self.rt, self.q, self.client);
        if !stays_gated(rt, q) {
            return Some(dispatch);
        }
        let Some(signals) = deferred::take_signals(rt) else {
            return Some(dispatch);
        };
        dispatch.behind.push(signals.done.handle);
        let moved = MovedDispatch(dispatch);
        let queue = q.clone();
        let body: deferred::Body = Box::new(move |writer| {
            let d = moved;
            run_window(rt, &queue, &d.0, client, total, writer);
        });
        if let Err(body) = deferred::spawn(rt, q, signals, body) {
            [signals.arrived, signals.done, signals.passed]
                .into_iter()
                .for_each(|s| SIGNALS.give_back(s));
            if let Some(body) = body {
                body(self.writer);
            }
            return None;
        }
        let _submit = enter_submit(q);
        write(self.writer, &deferred::packets_in_queue(&signals));
        let gate = super::Gate {
            deps: [signals.done.handle, 0, 0, 0, 0],
            any: false,
            passed: signals.passed,
        };
        set_gate(rt, q, gate);
        None
    }

    /// A dispatch the client runs once: timed on its own when the client times ordinary
    /// dispatches, else left in the run forwarded with the next barrier.
    fn run_once(&self, i: usize, dispatch: &Dispatch, forwarded: &mut usize) {
        let (rt, q, writer, client) = (self.rt, self.q, self.writer, self.client);
        dispatch.event(
            client,
            kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT,
            0,
            1,
            None,
        );
        if client.times_ordinary_dispatches() {
            forward_run(rt, q, writer, self.packets, i, forwarded);
            let _submit = enter_submit(q);
            *forwarded = i + 1;
            submit_ordinary(rt, q, dispatch, writer, None);
        } else if client.reads_summaries() {
            hand_over_untimed(dispatch, client);
        }
    }
}

/// Hands the client the summary of a dispatch that runs once untimed, on the submitting thread
/// (both ends of its window are the time of submission).
fn hand_over_untimed(dispatch: &Dispatch, client: &dyn ReplayClient) {
    let mut summary = dispatch.summary();
    summary.untimed = true;
    let now = monotonic_ns();
    summary.window = (now, now);
    call_client(Callback::DispatchDone, || client.dispatch_done(&summary));
}

/// Puts a counted barrier packet first on a queue that may still run work submitted untracked
/// before the client registered: it completes only after everything earlier on the queue, and
/// the agent-wide drain waits for its handler. Clears the queue's mark once submitted (the
/// runtime calls a queue's interceptor for one submission at a time, so nothing earlier can
/// follow it). On failure the mark stays and replays on the agent keep declining.
fn fence_earlier_work(rt: Runtime, q: &Arc<QueueState>, writer: Writer) {
    let _submit = enter_submit(q);
    if !write_counted(rt, q, writer, &[]) {
        return;
    }
    q.unfenced.store(false, Ordering::Release);
    tracing::debug!(
        "queue {} fenced: work submitted before the client registered is now counted",
        q.queue_id
    );
}

/// True when a gate of `q` has not passed and will not soon by itself: it waits on a signal that
/// is the completion signal of no packet or copy the tool saw submitted lately (a signal the
/// host sets, most likely), or it waits only on submitted work (a copy the dispatch needs, a
/// marker on another queue) and has not passed within the decline bound, as the window's own
/// drain would wait. A window on the submitting thread needs no thread, queue or copy fence.
fn stays_gated(rt: Runtime, q: &QueueState) -> bool {
    let (open, deps): (Vec<hsa_signal_t>, Vec<u64>) = {
        let gates = q.gates.lock();
        let open: Vec<_> = gates
            .iter()
            .filter(|g| rt.signal_load(g.passed) >= 1)
            .collect();
        (
            open.iter().map(|g| g.passed).collect(),
            open.iter().flat_map(|g| g.deps).collect(),
        )
    };
    if open.is_empty() {
        return false;
    }
    if !deferred::completes_on_its_own(&deps) {
        return true;
    }
    let Ok(bound) = DRAIN_DECLINE.as_ref() else {
        return true;
    };
    let deadline = Instant::now() + *bound;
    open.into_iter().any(|s| {
        let left = deadline.saturating_duration_since(Instant::now());
        rt.signal_wait_lt_one(s, left.as_nanos() as u64) >= 1
    })
}

/// A dispatch handed to the worker of its deferred window.
struct MovedDispatch(Dispatch);
// SAFETY: the raw pointers of its `info` name the kernel name it owns (an `Arc`), the
// application's queue (alive until its worker is joined) and its kernarg segment; none is tied
// to the submitting thread.
unsafe impl Send for MovedDispatch {}

/// A dispatch under consideration: the packet and what callbacks see.
struct Dispatch {
    pkt: hsa_kernel_dispatch_packet_t,
    name: Option<Arc<CString>>,
    info: kreplay_dispatch_info_t,
    queue: Arc<QueueState>,
    /// Completion signals of the packets behind it in the same submission: none of them can
    /// fire before its window ends (they are not forwarded yet).
    behind: Vec<u64>,
}

impl Dispatch {
    fn new(rt: Runtime, q: &Arc<QueueState>, pkt: hsa_kernel_dispatch_packet_t) -> Self {
        let name = NAMES.resolve_through(rt, q.agent, pkt.kernel_object, &q.last_name);
        let info = kreplay_dispatch_info_t {
            size: std::mem::size_of::<kreplay_dispatch_info_t>() as u64,
            agent_handle: q.agent.handle,
            queue: q.queue.cast_const().cast(),
            queue_id: q.queue_id,
            dispatch_id: super::next_dispatch_id(),
            kernel_object: pkt.kernel_object,
            kernel_name: name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
            grid_size: [pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z],
            workgroup_size: [
                pkt.workgroup_size_x,
                pkt.workgroup_size_y,
                pkt.workgroup_size_z,
            ],
            reserved0: 0,
            private_segment_size: pkt.private_segment_size,
            group_segment_size: pkt.group_segment_size,
            kernarg_address: pkt.kernarg_address.cast_const(),
        };
        Self {
            pkt,
            name,
            info,
            queue: q.clone(),
            behind: Vec::new(),
        }
    }

    /// Signals that fire only after this dispatch's window: its own, those behind it.
    fn window_signals(&self) -> Vec<u64> {
        let own = self.pkt.completion_signal.handle;
        std::iter::once(own)
            .chain(self.behind.iter().copied())
            .filter(|&s| s != 0)
            .collect()
    }

    fn summary(&self) -> DispatchSummary {
        DispatchSummary {
            dispatch_id: self.info.dispatch_id,
            kernel: self.name.as_ref().map(|n| n.to_string_lossy().into_owned()),
            agent: self.queue.agent.handle,
            agent_name: self.queue.agent_name.clone(),
            queue_id: self.queue.queue_id,
            ..Default::default()
        }
    }

    fn event(
        &self,
        client: &dyn ReplayClient,
        kind: kreplay_event_kind_t,
        pass: u32,
        total: u32,
        stats: Option<&kreplay_replay_stats_t>,
    ) {
        self.event_timed(client, kind, pass, total, (0, 0), stats);
    }

    fn event_timed(
        &self,
        client: &dyn ReplayClient,
        kind: kreplay_event_kind_t,
        pass: u32,
        total: u32,
        times: (u64, u64),
        stats: Option<&kreplay_replay_stats_t>,
    ) {
        if !client.has_events() {
            return;
        }
        let e = kreplay_event_t {
            size: std::mem::size_of::<kreplay_event_t>() as u64,
            kind,
            pass,
            total_passes: total,
            reserved0: 0,
            dispatch: &self.info,
            pass_start_ns: times.0,
            pass_end_ns: times.1,
            stats: stats.map_or(std::ptr::null(), |s| s as *const _),
        };
        if call_client(Callback::Event, || client.on_event(&e)).is_none() {
            tracing::debug!("the event that panicked: {kind:?}");
        }
    }

    /// The dispatch with the tool's completion signal.
    fn with_signal(&self, s: hsa_signal_t) -> Packet {
        let mut p = self.pkt;
        p.completion_signal = s;
        to_bytes(&p)
    }
}

/// The dispatch's snapshot/restore statistics as C sees them (with an owned reason string).
struct ReplayStats {
    c: kreplay_replay_stats_t,
    _reason: Option<CString>,
}

impl ReplayStats {
    fn new() -> Self {
        Self {
            c: kreplay_replay_stats_t {
                size: std::mem::size_of::<kreplay_replay_stats_t>() as u64,
                snapshot_regions: 0,
                snapshot_bytes: 0,
                snapshot_ns: 0,
                restore_count: 0,
                restored_regions: 0,
                restored_bytes: 0,
                skipped_regions: 0,
                restore_ns: 0,
                declined_reason: std::ptr::null(),
            },
            _reason: None,
        }
    }

    fn declined(reason: &DeclineReason) -> Self {
        let mut s = Self::new();
        s.set_reason(&reason.to_string());
        s
    }

    /// Sets `declined_reason` (also why a loop stopped early).
    fn set_reason(&mut self, text: &str) {
        let c = CString::new(text.replace('\0', " ")).unwrap_or_default();
        self.c.declined_reason = c.as_ptr();
        self._reason = Some(c);
    }
}

/// Submits the dispatch once, counted and reported. The dispatch keeps the application's
/// completion signal (so the application's dispatch times are the kernel's) and a barrier packet
/// with a tool signal follows it; without an application signal the dispatch carries the tool
/// signal. The caller holds the reader side of the gate.
fn submit_ordinary(
    rt: Runtime,
    q: &Arc<QueueState>,
    d: &Dispatch,
    writer: Writer,
    skipped: Option<String>,
) {
    let Some(sig) = SIGNALS.take(rt) else {
        write_counted(rt, q, writer, &[to_bytes(&d.pkt)]);
        return;
    };
    let app = (d.pkt.completion_signal.handle != 0).then_some(d.pkt.completion_signal);
    let mut summary = Box::new(d.summary());
    summary.declined = skipped;
    let entry =
        IN_FLIGHT.add_tool_signal(&RuntimeSignals(rt), q.agent.handle, sig, q.queue_id, false);
    if let Some(a) = app {
        TIMED_SIGNALS.hold(a, q.agent);
    }
    let ctx = HandlerCtx {
        queue: q.clone(),
        signal: sig,
        times_from: app,
        entry,
        summary,
    };
    if let Err(ctx) = watch(rt, ctx) {
        IN_FLIGHT.finish(ctx.entry);
        if let Some(a) = app {
            TIMED_SIGNALS.take(a, |_| Ok((0, 0)));
        }
        SIGNALS.give_back(sig);
        write_counted(rt, q, writer, &[to_bytes(&d.pkt)]);
        return;
    }
    match app {
        Some(_) => write(writer, &[to_bytes(&d.pkt), barrier_packet(sig)]),
        None => write(writer, &[d.with_signal(sig)]),
    }
}

/// Captures the agent's memory; `whole` restores every byte without hashing (see
/// `snapshot::density`). The host-memory budget counts only the bytes the store keeps in host
/// memory (recycled host buffers are reused first).
fn capture(
    rt: Runtime,
    q: &QueueState,
    copier: &AgentCopy,
    whole: bool,
) -> Result<Snapshot, DeclineReason> {
    let settings = crate::settings::snapshot_settings()
        .as_ref()
        .map_err(|e| DeclineReason::Configuration(e.to_string()))?;
    let tracked_bytes = INVENTORY
        .owned_by(q.agent.handle)
        .iter()
        .map(|a| a.size as u64)
        .sum();
    let (store, scope) =
        crate::snapshot::plan(rt, q.agent, settings, tracked_bytes, whole, *DRAIN_TIMEOUT);
    coverage::capture(rt, q.agent, copier, store, scope, |regions, store| {
        let needed = store.host_bound(regions);
        crate::snapshot::budget::check(needed.saturating_sub(HostStore::reusable_bytes()))
            .map_err(DeclineReason::from)
    })
}

/// Kernels already warned about for writes outside their learned chunks (verify mode).
static VERIFY_WARNED: crate::sync::Mutex<Vec<String>> = crate::sync::Mutex::new(Vec::new());

/// Warns once per kernel that verify mode found chunks written outside the learned set.
fn warn_unexpected_writes(d: &Dispatch, pass: u32, chunks: u64) {
    let kernel = d
        .name
        .as_ref()
        .map_or("<unknown>".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut warned = VERIFY_WARNED.lock();
    if warned.contains(&kernel) {
        tracing::debug!(
            "dispatch {} pass {pass}: {chunks} chunk(s) written outside the learned set",
            d.info.dispatch_id
        );
        return;
    }
    warned.push(kernel.clone());
    tracing::warn!(
        "kernel {kernel} (dispatch {}) wrote {chunks} chunk(s) in pass {pass} that it did not write in the first pass; \
         memory was restored completely before the next pass (verify mode; warned once per kernel)",
        d.info.dispatch_id
    );
}

fn kernel_name(d: &Dispatch) -> String {
    d.name
        .as_ref()
        .map_or("<unknown>".to_owned(), |n| n.to_string_lossy().into_owned())
}

/// Fences prior work of this queue: a barrier packet and a direct wait on its signal, until
/// `deadline`. On expiry the barrier stays counted in flight and the reason is returned.
fn drain_queue(
    rt: Runtime,
    q: &QueueState,
    writer: Writer,
    deadline: Instant,
) -> Result<(), String> {
    let Some(sig) = SIGNALS.take(rt) else {
        return Err("no completion signal could be created for the queue drain".to_owned());
    };
    write(writer, &[barrier_packet(sig)]);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if rt.signal_wait_lt_one(sig, left.min(Duration::from_millis(20)).as_nanos() as u64) < 1 {
            SIGNALS.give_back(sig);
            return Ok(());
        }
        if let Some(st) = q.fault.status() {
            // The queue stopped: its barrier never completes (the signal is not reused).
            return Err(format!(
                "queue {} reported error {st:#x} before the dispatch",
                q.queue_id
            ));
        }
        if left.is_zero() {
            IN_FLIGHT.add_tool_signal(&RuntimeSignals(rt), q.agent.handle, sig, q.queue_id, true);
            return Err(format!(
                "work submitted earlier on queue {} did not finish",
                q.queue_id
            ));
        }
    }
}

/// Waits for every counted packet and asynchronous copy of the agent, until `deadline`, except
/// the counted work of queues waiting behind a barrier on a signal of the window: the
/// dispatch's own completion signal or one of the packets behind it in its submission
/// (`window`; that work cannot start before the window ends; the work before that barrier is
/// waited for).
fn drain_agent(
    rt: Runtime,
    q: &QueueState,
    window: &[u64],
    deadline: Instant,
) -> Result<(), String> {
    // The dispatch's own queue waits on the window only when the window was deferred (its later
    // packets wait behind the tool's barrier); otherwise the queue drain left nothing on it.
    let blocked = |queue_id: u64| waits_on(queue_id, window);
    IN_FLIGHT
        .drain_except(&RuntimeSignals(rt), q.agent.handle, deadline, &blocked)
        .map_err(|left| format!("work of the agent's queues or copies into its memory did not finish ({left} still in flight)"))
}

/// `(kind of decline, kernel)` already reported, so each is reported once per kernel.
static DECLINES_REPORTED: Mutex<Option<HashSet<(&'static str, String)>>> = Mutex::new(None);

/// True the first time `kind` is reported for the dispatch's kernel.
fn first_report_for_kernel(kind: &'static str, d: &Dispatch) -> bool {
    DECLINES_REPORTED
        .lock()
        .get_or_insert_with(HashSet::new)
        .insert((kind, kernel_name(d)))
}

fn report_decline_once_per_kernel(q: &QueueState, d: &Dispatch, reason: &DeclineReason) {
    let name = kernel_name(d);
    if first_report_for_kernel(reason.tag(), d) {
        tracing::warn!(
            "dispatch {} (kernel {name}) on agent {} queue {} not replayed: {reason}; it runs once, normally \
             (reported once per kernel)",
            d.info.dispatch_id,
            q.agent_name,
            q.queue_id
        );
    } else {
        tracing::debug!(
            "dispatch {} (kernel {name}) not replayed: {reason}",
            d.info.dispatch_id
        );
    }
}

/// Waits directly (from this thread, through the runtime's original entry) until `sig` < 1.
/// A queue error on the queue ends the wait with its status (the pass will never complete; the
/// runtime called the application's error callback). A pass that never completes otherwise ends
/// in the fatal message.
fn wait_pass(
    rt: Runtime,
    q: &QueueState,
    d: &Dispatch,
    sig: hsa_signal_t,
    pass: u32,
) -> Result<(), hsa_status_t> {
    let bound = *DRAIN_TIMEOUT;
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if rt.signal_wait_lt_one(sig, left.min(Duration::from_millis(20)).as_nanos() as u64) < 1 {
            return Ok(());
        }
        if let Some(st) = q.fault.status() {
            return Err(st);
        }
        if left.is_zero() {
            fatal(&format!(
                "pass {pass} of dispatch {} (kernel {}) on agent {} ({:#x}) queue {}: the dispatch did not complete within {} ms. \
                 Raise KREPLAY_DRAIN_TIMEOUT_MS if the kernel is legitimately slow.",
                d.info.dispatch_id,
                kernel_name(d),
                q.agent_name,
                q.agent.handle,
                q.queue_id,
                bound.as_millis()
            ));
        }
    }
}

/// Sets the barrier bit of a packet's header.
fn set_barrier_bit(p: &mut Packet) {
    let header = u16::from_le_bytes([p[0], p[1]]) | (1 << ffi::HSA_PACKET_HEADER_BARRIER);
    p[..2].copy_from_slice(&header.to_le_bytes());
}

/// Runs one pass: attached BEFORE packets, the dispatch (its barrier bit set when packets
/// precede it), attached AFTER packets and, when the dispatch carries the application's signal
/// or AFTER packets follow it, a barrier packet with a tool signal; then waits directly for the
/// last of them. Returns the dispatch's device times.
///
/// `app` is the application's completion signal, carried by the dispatch itself so that its
/// dispatch times are this kernel's; the caller balances its decrement.
fn run_pass(
    rt: Runtime,
    q: &QueueState,
    d: &Dispatch,
    writer: Writer,
    (before, after): (&[Packet], &[Packet]),
    pass: u32,
    app: Option<hsa_signal_t>,
) -> Result<(u64, u64), hsa_status_t> {
    let own = || {
        SIGNALS.take(rt).unwrap_or_else(|| {
            fatal(&format!(
                "cannot create a completion signal for pass {pass} of dispatch {} on agent {} queue {}",
                d.info.dispatch_id, q.agent_name, q.queue_id
            ))
        })
    };
    let (on_dispatch, tail) = match app {
        Some(a) => (a, Some(own())),
        None => {
            let s = own();
            (s, (!after.is_empty()).then(own))
        }
    };
    let mut batch = Vec::with_capacity(before.len() + after.len() + 2);
    batch.extend_from_slice(before);
    let mut dispatch = d.with_signal(on_dispatch);
    if !before.is_empty() {
        // What precedes the dispatch (a counter start) completes before the kernel starts.
        set_barrier_bit(&mut dispatch);
    }
    batch.push(dispatch);
    batch.extend_from_slice(after);
    batch.extend(tail.map(barrier_packet));
    write(writer, &batch);
    // On a queue error the tool's signals stay out of the pool: the dead queue holds them.
    wait_pass(rt, q, d, tail.unwrap_or(on_dispatch), pass)?;
    let times = rt.dispatch_times(q.agent, on_dispatch).unwrap_or_else(|e| {
        tracing::warn!("dispatch times unavailable: {e}");
        let now = monotonic_ns();
        (now, now)
    });
    if let Some(t) = tail {
        SIGNALS.give_back(t);
    }
    if app.is_none() {
        SIGNALS.give_back(on_dispatch);
    }
    Ok(times)
}

/// Why a window ended on a queue error.
fn queue_error_text(st: hsa_status_t, pass: u32) -> String {
    format!(
        "queue error {st:#x} during pass {pass}: the dispatch failed on its queue, the window ended without restoring \
         memory and the application's queue error callback was called"
    )
}

/// A replay window's fixed context: the dispatch, its queue, the client and the passes due.
struct Window<'a> {
    rt: Runtime,
    q: &'a Arc<QueueState>,
    d: &'a Dispatch,
    client: &'a dyn ReplayClient,
    total: u32,
    writer: Writer,
    /// What the kernel's code-object metadata says a replay must respect, looked up once.
    traits: OnceCell<Option<ReplayTraits>>,
}

/// The window held open: this thread's window mark, then the agent's writer lock (released in
/// that order when dropped), and when the window opened.
struct Held {
    _open: OpenWindow,
    _guard: WindowGuard,
    start_ns: u64,
}

/// What the capture step hands to the passes.
struct Captured {
    snap: Snapshot,
    host: host_window::HostWindow,
    copier: AgentCopy,
    /// The kernel's name, when known.
    kernel: Option<String>,
    /// Every byte is restored without hashing (`snapshot::density`).
    whole: bool,
}

/// What the passes leave for the close step.
struct Ran {
    summary: DispatchSummary,
    totals: RestoreTotals,
}

/// The replay window, as four steps: open (the gate's writer lock and the drains), capture,
/// passes, close. A reason to decline found by the first two takes the one decline path.
fn run_window(
    rt: Runtime,
    q: &Arc<QueueState>,
    d: &Dispatch,
    client: &dyn ReplayClient,
    total: u32,
    writer: Writer,
) {
    let w = Window {
        rt,
        q,
        d,
        client,
        total,
        writer,
        traits: OnceCell::new(),
    };
    if w.traits().is_some_and(|t| t.calls_host) {
        return w.decline(DeclineReason::HostCalls, None);
    }
    let held = match w.open() {
        Ok(h) => h,
        Err(reason) => return w.decline(reason, None),
    };
    let mut captured = match w.capture() {
        Ok(c) => c,
        Err(reason) => return w.decline(reason, Some(held)),
    };
    let ran = w.passes(&mut captured);
    w.close(held, captured, ran);
}

impl Window<'_> {
    /// The kernel's replay traits (`None` when unknown), looked up at the first ask.
    fn traits(&self) -> Option<ReplayTraits> {
        *self
            .traits
            .get_or_init(|| NAMES.replay_traits(self.rt, self.q.agent, self.d.pkt.kernel_object))
    }

    /// The reason not to open a window for a dispatch that is one grid of a multi-device
    /// cooperative launch (or whose cooperative-launch argument cannot be read): waiting for it
    /// alone, in a replay or an isolated single pass, would wait for grids not yet submitted.
    fn multi_grid(&self) -> Option<DeclineReason> {
        let offset = self.traits()?.multigrid_sync?;
        let kernarg = self.d.pkt.kernarg_address as u64;
        match cooperative::grids(self.rt, kernarg, offset) {
            Ok(1) => None,
            Ok(n) => Some(DeclineReason::MultiGrid(format!(
                "one grid of a multi-device cooperative launch of {n} grids: the grids wait for each other at every \
                 multi-grid barrier, so this one cannot run again alone"
            ))),
            Err(why) => Some(DeclineReason::MultiGrid(format!(
                "{why}, so the dispatch may be one grid of a multi-device cooperative launch, which cannot run again alone"
            ))),
        }
    }

    /// Opens the window: takes the agent's writer lock, then drains the queue and the agent
    /// within the decline bound. On a failure nothing is held any more (what the drains wait
    /// for may itself wait for this dispatch). One grid of a multi-device cooperative launch
    /// gets no window at all.
    fn open(&self) -> Result<Held, DeclineReason> {
        let (q, d) = (self.q, self.d);
        let decline_bound = DRAIN_DECLINE
            .as_ref()
            .map_err(|e| DeclineReason::Configuration(e.clone()))?;
        if let Some(reason) = self.multi_grid() {
            return Err(reason);
        }
        let guard = enter_window(q);
        if deferred::dependent_copies_since_deferral() {
            return Err(DeclineReason::DependentCopies);
        }
        let open = OpenWindow::enter(q, d);
        let start_ns = monotonic_ns();
        let deadline = Instant::now() + *decline_bound;
        drain_queue(self.rt, q, self.writer, deadline)
            .and_then(|()| drain_agent(self.rt, q, &d.window_signals(), deadline))
            .map_err(|why| DeclineReason::Drain {
                detail: why,
                bound_ms: decline_bound.as_millis() as u64,
            })?;
        Ok(Held {
            _open: open,
            _guard: guard,
            start_ns,
        })
    }

    /// Captures what the passes must restore: the coverage check, the host memory the
    /// dispatch can reach, then the snapshot of the agent's memory; then checks that the host
    /// memory did not change meanwhile.
    fn capture(&self) -> Result<Captured, DeclineReason> {
        let (rt, q, d) = (self.rt, self.q, self.d);
        let copier = AgentCopy::new(rt, q.agent, *DRAIN_TIMEOUT);
        let kernel = d.name.as_ref().map(|n| n.to_string_lossy().into_owned());
        let whole = kernel
            .as_deref()
            .is_some_and(crate::snapshot::density::restores_whole);
        let verify = crate::settings::snapshot_settings()
            .as_ref()
            .is_ok_and(|s| s.verify)
            || crate::snapshot::settings::api_verify();
        coverage::check(q).map_err(DeclineReason::Coverage)?;
        let mut host = host_window::open(rt, q.agent, &d.pkt, &kernel_name(d), verify)?;
        let snap = capture(rt, q, &copier, whole)?;
        // The device snapshot took a while: host memory that changed meanwhile has another
        // writer at work, which a restore could undo.
        host.unchanged_since_capture()?;
        Ok(Captured {
            snap,
            host,
            copier,
            kernel,
            whole,
        })
    }

    /// The one decline path: reports the reason (once per kernel and kind), tells the client
    /// (CONFIG EXIT with the reason) and runs the dispatch once, normally. Before the window
    /// (`held` is `None`) it runs under the reader side of the gate; inside it, it runs as the
    /// window's only pass, carrying the application's completion signal, and the window closes.
    fn decline(&self, reason: DeclineReason, held: Option<Held>) {
        let (d, client) = (self.d, self.client);
        STATS.declined.fetch_add(1, Ordering::Relaxed);
        self.report_refusal(&reason);
        // A client that wants pass events on every dispatch gets a window without snapshot when
        // the reason left none open and opening one cannot wait for this dispatch.
        let held = match held {
            None if client.pass_events_always(&d.info)
                && matches!(
                    reason,
                    DeclineReason::UnboundedWithoutContinue | DeclineReason::HostCalls
                ) =>
            {
                self.open().ok()
            }
            held => held,
        };
        let Some(held) = held else {
            self.run_ordinary(format!("declined: {reason}"));
            return;
        };
        self.single_pass(held, Some(&reason));
    }

    /// Reports why the dispatch is not replayed or not isolated (once per kernel and kind) and
    /// tells the client in CONFIG EXIT.
    fn report_refusal(&self, reason: &DeclineReason) {
        report_decline(self.q, self.d, reason);
        let stats = ReplayStats::declined(reason);
        self.d.event(
            self.client,
            kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT,
            0,
            self.total,
            Some(&stats.c),
        );
    }

    /// Runs the dispatch once, normally, outside any window; `why` goes into its record.
    fn run_ordinary(&self, why: String) {
        let _submit = enter_submit(self.q);
        submit_ordinary(self.rt, self.q, self.d, self.writer, Some(why));
    }

    /// A dispatch that runs once (pass count 1) for a client that wants pass events on every
    /// dispatch: the window opens without a snapshot (the writer lock and the drains isolate
    /// the dispatch on its agent), then [`Window::single_pass`]. When the drains do not finish
    /// within the decline bound, or the window is refused (one grid of a multi-device
    /// cooperative launch), it runs once normally, without pass events (nothing isolates it),
    /// and CONFIG EXIT says why.
    fn run_once_isolated(&self) {
        let (d, client) = (self.d, self.client);
        match self.open() {
            Ok(held) => {
                d.event(
                    client,
                    kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT,
                    0,
                    self.total,
                    None,
                );
                self.single_pass(held, None);
            }
            Err(reason) => {
                self.report_refusal(&reason);
                self.run_ordinary(format!("not isolated: {reason}"));
            }
        }
    }

    /// Runs the dispatch exactly once inside the held window, carrying the application's
    /// completion signal; no restore follows. With the client's `pass_events_always`, PASS
    /// ENTER (localized control armed) and PASS EXIT for pass 0 surround it, and the packets
    /// attached in PASS ENTER run with it. `declined` is why a replay was not made (PASS
    /// EXIT's `declined_reason`, and the summary's).
    fn single_pass(&self, held: Held, declined: Option<&DeclineReason>) {
        let (rt, q, d, client, total) = (self.rt, self.q, self.d, self.client, self.total);
        let events = client.pass_events_always(&d.info);
        let mut summary = d.summary();
        let mut stats = ReplayStats::new();
        if let Some(r) = declined {
            stats.set_reason(&r.to_string());
        }
        let app = (d.pkt.completion_signal.handle != 0).then_some(d.pkt.completion_signal);
        let scope = LoopScope::begin(q.size as usize);
        if events {
            let _armed = ArmGuard::arm(&scope);
            d.event(
                client,
                kreplay_event_kind_t::KREPLAY_EVENT_PASS_ENTER,
                0,
                total,
                None,
            );
        }
        let packets = scope.take_pass();
        let ran = run_pass(
            rt,
            q,
            d,
            self.writer,
            (&packets.before, &packets.after),
            0,
            app,
        );
        match ran {
            Ok(times) if events => d.event_timed(
                client,
                kreplay_event_kind_t::KREPLAY_EVENT_PASS_EXIT,
                0,
                total,
                times,
                Some(&stats.c),
            ),
            Ok(_) => {}
            Err(st) => {
                let why = queue_error_text(st, 0);
                if events {
                    stats.set_reason(&why);
                    let kind = kreplay_event_kind_t::KREPLAY_EVENT_LOOP_STOPPED;
                    d.event(client, kind, 0, total, Some(&stats.c));
                }
                summary.stopped = Some(why);
            }
        }
        drop(scope);
        let times = ran.unwrap_or((0, 0));
        drop(held);
        summary.declined = declined.map(|r| format!("declined: {r}"));
        summary.window = times;
        summary.passes = vec![PassTimes {
            start_ns: times.0,
            end_ns: times.1,
            restore: None,
        }];
        call_client(Callback::DispatchDone, || client.dispatch_done(&summary));
    }

    /// Runs the passes: PASS ENTER (localized control armed), the pass, PASS EXIT, the host
    /// memory's check, the client's continue, the restore before the next pass.
    fn passes(&self, c: &mut Captured) -> Ran {
        let (d, client, total) = (self.d, self.client, self.total);
        let cap = c.snap.stats();
        STATS.snapshot_bytes.fetch_add(cap.bytes, Ordering::Relaxed);
        let mut stats = ReplayStats::new();
        stats.c.snapshot_regions = cap.regions;
        stats.c.snapshot_bytes = cap.bytes;
        stats.c.snapshot_ns = cap.end_ns - cap.start_ns;
        d.event(
            client,
            kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT,
            0,
            total,
            Some(&stats.c),
        );
        let app = (d.pkt.completion_signal.handle != 0).then_some(d.pkt.completion_signal);
        let scope = LoopScope::begin(self.q.size as usize);
        let mut ran = Ran {
            summary: d.summary(),
            totals: RestoreTotals::default(),
        };
        let mut pass: u32 = 0;
        while let Some(times) = self.one_pass(&scope, pass, app, &mut stats, &mut ran) {
            if let Some(why) = c.host.after_pass(pass) {
                if total == 0 || pass + 1 < total {
                    self.stop_loop(pass, Some(times), why, &mut stats, &mut ran);
                }
                break;
            }
            if total != 0 && pass + 1 >= total {
                break;
            }
            if client.has_continue()
                && !call_client(Callback::Continue, || {
                    client.should_continue(&d.info, pass, total)
                })
                .unwrap_or(false)
            {
                break;
            }
            if !self.restore(c, pass, times, &mut stats, &mut ran) {
                break;
            }
            c.host.restore();
            pass += 1;
        }
        drop(scope);
        if let Some(k) = c.kernel.as_deref().filter(|_| !c.whole) {
            crate::snapshot::density::learned(k, cap.bytes, ran.totals.count, ran.totals.bytes);
        }
        if let Some(a) = app {
            self.rt.signal_subtract(a, 1);
        }
        ran
    }

    /// One pass: PASS ENTER with localized control armed, the dispatch with the attached
    /// packets, PASS EXIT. `None` when the queue failed (the loop stopped).
    fn one_pass(
        &self,
        scope: &LoopScope,
        pass: u32,
        app: Option<hsa_signal_t>,
        stats: &mut ReplayStats,
        ran: &mut Ran,
    ) -> Option<(u64, u64)> {
        let (rt, d, client, total) = (self.rt, self.d, self.client, self.total);
        {
            let _armed = ArmGuard::arm(scope);
            d.event(
                client,
                kreplay_event_kind_t::KREPLAY_EVENT_PASS_ENTER,
                pass,
                total,
                None,
            );
        }
        let attached = scope.take_pass();
        // Every pass's dispatch carries the application's signal and decrements it; this
        // increment balances that, and the one decrement after the loop fires it once.
        if let Some(a) = app {
            rt.signal_add(a, 1);
        }
        let attached = (&attached.before[..], &attached.after[..]);
        let times = match run_pass(rt, self.q, d, self.writer, attached, pass, app) {
            Ok(t) => t,
            Err(st) => {
                let why = queue_error_text(st, pass);
                tracing::warn!(
                    "dispatch {} (kernel {}): {why}",
                    d.info.dispatch_id,
                    kernel_name(d)
                );
                self.stop_loop(pass, None, why, stats, ran);
                return None;
            }
        };
        STATS.passes.fetch_add(1, Ordering::Relaxed);
        ran.summary.passes.push(PassTimes {
            start_ns: times.0,
            end_ns: times.1,
            restore: None,
        });
        d.event_timed(
            client,
            kreplay_event_kind_t::KREPLAY_EVENT_PASS_EXIT,
            pass,
            total,
            times,
            Some(&stats.c),
        );
        Some(times)
    }

    /// LOOP STOPPED after `pass` with `why` (timed when the pass ran).
    fn stop_loop(
        &self,
        pass: u32,
        times: Option<(u64, u64)>,
        why: String,
        stats: &mut ReplayStats,
        ran: &mut Ran,
    ) {
        stats.set_reason(&why);
        let kind = kreplay_event_kind_t::KREPLAY_EVENT_LOOP_STOPPED;
        match times {
            Some(t) => self
                .d
                .event_timed(self.client, kind, pass, self.total, t, Some(&stats.c)),
            None => self
                .d
                .event(self.client, kind, pass, self.total, Some(&stats.c)),
        }
        ran.summary.stopped = Some(why);
    }

    /// The restore before the pass after `pass`, counted. False when it failed without
    /// writing anything (the loop stops there); a restore that failed half-way is fatal.
    fn restore(
        &self,
        c: &mut Captured,
        pass: u32,
        times: (u64, u64),
        stats: &mut ReplayStats,
        ran: &mut Ran,
    ) -> bool {
        let (q, d) = (self.q, self.d);
        let rep = c.snap.restore(&INVENTORY, &c.copier);
        if rep.unexpected_chunks > 0 {
            warn_unexpected_writes(d, pass, rep.unexpected_chunks);
        }
        let totals = &mut ran.totals;
        totals.count += 1;
        totals.regions += rep.regions;
        totals.bytes += rep.bytes;
        totals.skipped_regions += rep.skipped;
        totals.ns += rep.end_ns - rep.start_ns;
        STATS.restored_bytes.fetch_add(rep.bytes, Ordering::Relaxed);
        STATS
            .skipped_regions
            .fetch_add(rep.skipped, Ordering::Relaxed);
        stats.c.restore_count = totals.count;
        stats.c.restored_regions = totals.regions;
        stats.c.restored_bytes = totals.bytes;
        stats.c.skipped_regions = totals.skipped_regions;
        stats.c.restore_ns = totals.ns;
        if let Some(last) = ran.summary.passes.last_mut() {
            last.restore = Some((rep.start_ns, rep.end_ns));
        }
        let Some(failure) = &rep.failure else {
            return true;
        };
        if !failure.nothing_written {
            fatal(&format!(
                "the restore before pass {} of dispatch {} (kernel {}) on agent {} ({:#x}) queue {} failed: {failure}. \
                 Earlier regions were already restored, so memory now mixes the dispatch's input and its output; \
                 stopping here rather than let the application continue on it.",
                pass + 1,
                d.info.dispatch_id,
                kernel_name(d),
                q.agent_name,
                q.agent.handle,
                q.queue_id
            ));
        }
        let why = format!(
            "the restore before pass {} failed ({failure}); nothing was written, so memory is as after pass {pass} and the loop stopped there",
            pass + 1
        );
        if first_report_for_kernel("restore", d) {
            tracing::warn!(
                "dispatch {} (kernel {}): {why} (reported once per kernel)",
                d.info.dispatch_id,
                kernel_name(d)
            );
        } else {
            tracing::debug!(
                "dispatch {} (kernel {}): {why}",
                d.info.dispatch_id,
                kernel_name(d)
            );
        }
        self.stop_loop(pass, Some(times), why, stats, ran);
        false
    }

    /// Closes the window: releases the writer lock and hands the client its summary.
    fn close(&self, held: Held, c: Captured, ran: Ran) {
        let window_end = monotonic_ns();
        let start_ns = held.start_ns;
        drop(held);
        let Ran {
            mut summary,
            totals,
        } = ran;
        if summary.passes.len() > 1 {
            STATS.replayed.fetch_add(1, Ordering::Relaxed);
        }
        summary.window = (start_ns, window_end);
        summary.snapshot = Some(c.snap.stats());
        summary.restore = Some(totals);
        summary.host_memory = Some(c.host.finish(summary.passes.len()));
        call_client(Callback::DispatchDone, || {
            self.client.dispatch_done(&summary)
        });
    }
}

/// How a decline is logged, by kind: a drain, memory that cannot be restored safely and a
/// snapshot that could not be taken are reported once per kernel and kind (later ones at debug
/// level); a coverage gap once per kernel and kind of gap; an invalid setting was reported when
/// it was read.
fn report_decline(q: &QueueState, d: &Dispatch, reason: &DeclineReason) {
    match reason {
        DeclineReason::Coverage(gap) => {
            let kernel = kernel_name(d);
            if coverage::first_report(gap, &kernel) {
                tracing::warn!(
                    "dispatch {} (kernel {kernel}) on agent {} not replayed: {gap}; it runs once \
                     (reported once per kernel and kind of gap)",
                    d.info.dispatch_id,
                    q.agent_name
                );
            } else {
                tracing::debug!("dispatch {} not replayed: {gap}", d.info.dispatch_id);
            }
        }
        DeclineReason::Configuration(_) => {
            tracing::debug!("dispatch {} not replayed: {reason}", d.info.dispatch_id);
        }
        _ => report_decline_once_per_kernel(q, d, reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_packet_layout() {
        let p = barrier_packet(hsa_signal_t { handle: 0xabc });
        assert_eq!(packet_type(&p), ffi::HSA_PACKET_TYPE_BARRIER_AND);
        let h = u16::from_le_bytes([p[0], p[1]]);
        assert_ne!(h & (1 << 8), 0, "barrier bit set");
        assert_eq!(
            u64::from_le_bytes(p[56..64].try_into().unwrap()),
            0xabc,
            "completion signal at byte 56"
        );
    }

    struct PanickingSummary;

    impl ReplayClient for PanickingSummary {
        fn pass_count(&self, _: &kreplay_dispatch_info_t) -> u32 {
            1
        }
        fn dispatch_done(&self, _: &DispatchSummary) {
            panic!("client failure in dispatch_done");
        }
    }

    #[test]
    fn a_panicking_summary_callback_does_not_leave_the_handler_counted_in_flight() {
        // The only test of this binary that registers a client (the registration is per process).
        contract::register_without_runtime(Arc::new(PanickingSummary));
        let q = Arc::new(QueueState {
            agent: ffi::hsa_agent_t { handle: 0xa9e47 },
            agent_name: "test".into(),
            queue: std::ptr::null_mut(),
            queue_id: 1,
            size: 64,
            lock: super::super::GATE.agent(0xa9e47),
            in_flight: crate::sync::protocol::AtomicU64::new(1),
            unfenced: crate::sync::AtomicBool::new(false),
            counter: None,
            last_name: Mutex::new(None),
            gates: Mutex::new(Vec::new()),
            fault: Arc::new(crate::queue_fault::QueueFault::new(
                None,
                std::ptr::null_mut(),
            )),
        });
        let ctx = Box::new(HandlerCtx {
            queue: q.clone(),
            signal: hsa_signal_t { handle: 0x5160 },
            times_from: None,
            entry: 0,
            summary: Box::default(),
        });
        // SAFETY: a leaked box, handed over exactly once as `watch` does.
        let keep = unsafe { on_signal(0, Box::into_raw(ctx).cast()) };
        assert!(!keep);
        assert_eq!(
            q.in_flight.load(Ordering::Acquire),
            0,
            "the handler is no longer counted in flight"
        );
    }
}
