//! The write interceptor's slow path: the normal (tracked) submit and the replay window.

use super::drain::{self, Completion};
use super::gate::{ReplayGate, SubmitGuard, WindowGuard};
use super::phase::{ArmGuard, LoopScope};
use super::{DRAIN_TIMEOUT, INVENTORY, NAMES, QUEUES, QueueState, SIGNALS, STATS, coverage};
use crate::api::{
    self, DispatchSummary, PassTimes, ReplayClient, RestoreTotals, kreplay_dispatch_info_t, kreplay_event_kind_t,
    kreplay_event_t, kreplay_replay_stats_t,
};
use crate::diagnostics::fatal;
use crate::runtime::{Runtime, monotonic_ns};
use crate::snapshot::{CopyFailed, DeclineReason, DeviceCopy, HostStore, Region, RegionKind, RestoreAll, Snapshot};
use crate::state::{self, ReplayService};
use crate::sync::{Arc, OnceFlag, Ordering, fence};
use hsa_abi::ffi::{self, hsa_kernel_dispatch_packet_t, hsa_signal_t};
use std::ffi::{CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The next interceptor down.
pub type Writer = unsafe extern "C" fn(*const c_void, u64);

type Packet = [u8; 64];

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
        OPEN_WINDOWS.with(|w| w.borrow_mut().push((q.agent.handle, d.info.dispatch_id, q.queue_id)));
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
    let open = OPEN_WINDOWS.with(|w| w.borrow().iter().find(|(agent, _, _)| *agent == q.agent.handle).copied());
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
fn cross_window_deadlock(q: &QueueState, (agent, dispatch, window_queue): WindowMark, what: &str) -> ! {
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

static BATCH_WARNING: OnceFlag = OnceFlag::new();
static DECLINE_WARNING: OnceFlag = OnceFlag::new();
static UNBOUNDED_WARNING: OnceFlag = OnceFlag::new();

fn packet_type(p: &Packet) -> u32 {
    u32::from(u16::from_le_bytes([p[0], p[1]]) & 0xff)
}

fn barrier_packet(completion: hsa_signal_t) -> Packet {
    let header = (ffi::HSA_PACKET_TYPE_BARRIER_AND as u16)
        | (1 << ffi::HSA_PACKET_HEADER_BARRIER)
        | ((ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | ((ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    let b = ffi::hsa_barrier_and_packet_t { header, completion_signal: completion, ..Default::default() };
    to_bytes(&b)
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
    if api::client().is_none() {
        crate::client::install_from_env();
    }
    let _decision = state::SERVICE_DECISION.lock();
    if api::client().is_none() {
        state::settle_service_off();
    }
}

/// What the async handler does when a tool signal completes.
enum HandlerJob {
    /// A replay pass (or a declined run-once inside a window): wake the replaying thread.
    Pass(Arc<Completion>),
    /// An ordinary dispatch: report it to the client, recycle the signal.
    Ordinary(Box<DispatchSummary>),
    /// A multi-packet batch: only track completion.
    Batch,
}

struct HandlerCtx {
    queue: Arc<QueueState>,
    signal: hsa_signal_t,
    job: HandlerJob,
}

unsafe extern "C" fn on_signal(_value: ffi::hsa_signal_value_t, arg: *mut c_void) -> bool {
    // SAFETY: `arg` is the Box leaked by `watch`, handed back exactly once.
    let ctx = unsafe { Box::from_raw(arg.cast::<HandlerCtx>()) };
    let r = catch_unwind(AssertUnwindSafe(|| {
        let rt = Runtime::get();
        let times = match (&ctx.job, rt) {
            (HandlerJob::Batch, _) | (_, None) => (0, 0),
            (_, Some(rt)) => rt.dispatch_times(ctx.queue.agent, ctx.signal).unwrap_or_else(|e| {
                tracing::warn!("dispatch times unavailable: {e}");
                let now = monotonic_ns();
                (now, now)
            }),
        };
        match ctx.job {
            HandlerJob::Pass(c) => {
                ctx.queue.in_flight.fetch_sub(1, Ordering::AcqRel);
                c.complete(times);
            }
            HandlerJob::Ordinary(mut summary) => {
                summary.window = times;
                summary.passes = vec![PassTimes { start_ns: times.0, end_ns: times.1, restore: None }];
                // A panicking client must not skip the bookkeeping below: a handler left counted
                // in flight would make every later drain on the agent wait for it until the bound.
                if let Some(c) = api::client()
                    && catch_unwind(AssertUnwindSafe(|| c.dispatch_done(&summary))).is_err()
                {
                    tracing::error!("the client's dispatch summary callback panicked");
                }
                SIGNALS.give_back(ctx.signal);
                ctx.queue.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
            HandlerJob::Batch => {
                SIGNALS.give_back(ctx.signal);
                ctx.queue.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }));
    if r.is_err() {
        tracing::error!("a panic in the completion handler was caught");
    }
    false
}

/// Watches `signal` with an async handler; counts it in flight on the queue.
fn watch(rt: Runtime, q: &Arc<QueueState>, signal: hsa_signal_t, job: HandlerJob) -> bool {
    q.in_flight.fetch_add(1, Ordering::AcqRel);
    let ctx = Box::into_raw(Box::new(HandlerCtx { queue: q.clone(), signal, job }));
    // SAFETY: `on_signal` takes back the box exactly once.
    let st = unsafe {
        (rt.originals().signal_async_handler)(signal, ffi::HSA_SIGNAL_CONDITION_LT, 1, Some(on_signal), ctx.cast())
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        tracing::warn!("hsa_amd_signal_async_handler failed with status {st:#x}; the dispatch is not tracked");
        // SAFETY: the runtime refused the handler, so the box is still ours.
        drop(unsafe { Box::from_raw(ctx) });
        q.in_flight.fetch_sub(1, Ordering::AcqRel);
        return false;
    }
    true
}

/// The interceptor's slow path (the replay service is on or undecided).
///
/// `forwarded` is set once the application's packets reached the writer, so a caught panic
/// never submits them twice.
///
/// # Safety
/// `pkts` must hold `count` packets of 64 bytes.
pub unsafe fn on_submit(q: &Arc<QueueState>, pkts: *const c_void, count: u64, writer: Writer, forwarded: &mut bool) {
    // Pairs with the release of `turn_service_on`: the queue marks a late registration made
    // before turning the service on are visible from here.
    fence(Ordering::Acquire);
    if state::service() == ReplayService::Undecided {
        settle_service();
    }
    // SAFETY: caller contract.
    let packets: &[Packet] = unsafe { std::slice::from_raw_parts(pkts.cast::<Packet>(), count as usize) };
    let (Some(client), Some(rt)) = (api::client(), Runtime::get()) else {
        *forwarded = true;
        write(writer, packets);
        return;
    };
    refuse_reentrant_submit(q);
    let _disarmed = super::phase::Disarmed::begin();
    if q.unfenced.load(Ordering::Acquire) {
        fence_earlier_work(rt, q, writer);
    }
    if packets.len() != 1 {
        if packets.iter().any(|p| packet_type(p) == ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH) {
            STATS.batches.fetch_add(1, Ordering::Relaxed);
            if BATCH_WARNING.first() {
                tracing::warn!(
                    "a submission of {} packets was not replayed: only single-packet, single-dispatch submissions are; it runs once (warned once per process)",
                    packets.len()
                );
            }
        }
        let _submit = enter_submit(q);
        *forwarded = true;
        write(writer, packets);
        if let Some(sig) = SIGNALS.take(rt)
            && watch(rt, q, sig, HandlerJob::Batch) {
                write(writer, &[barrier_packet(sig)]);
            }
        return;
    }
    if packet_type(&packets[0]) != ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH {
        let _submit = enter_submit(q);
        *forwarded = true;
        write(writer, packets);
        return;
    }
    // SAFETY: a 64-byte kernel dispatch packet.
    let pkt: hsa_kernel_dispatch_packet_t = unsafe { std::ptr::read_unaligned(packets[0].as_ptr().cast()) };
    let dispatch = Dispatch::new(rt, q, pkt);
    STATS.dispatches.fetch_add(1, Ordering::Relaxed);
    dispatch.event(client.as_ref(), kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_ENTER, 0, 0, None);
    let passes = catch_unwind(AssertUnwindSafe(|| client.pass_count(&dispatch.info))).unwrap_or_else(|_| {
        tracing::error!("the client's pass-count callback panicked; the dispatch runs once");
        1
    });
    let plan = match passes {
        1 => None,
        _ if crate::client::replay_refused().is_some() => crate::client::replay_refused().map(|e| Err(DeclineReason::Configuration(e))),
        0 if !client.has_continue() => Some(Err(DeclineReason::UnboundedWithoutContinue)),
        n => Some(Ok(n)),
    };
    match plan {
        None => {
            dispatch.event(client.as_ref(), kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT, 0, passes, None);
            let _submit = enter_submit(q);
            *forwarded = true;
            submit_ordinary(rt, q, &dispatch, writer, None);
        }
        Some(Err(reason)) => {
            // A configuration error was reported once at load.
            if !matches!(reason, DeclineReason::Configuration(_)) && UNBOUNDED_WARNING.first() {
                tracing::warn!("dispatch {} not replayed: {reason} (warned once per process)", dispatch.info.dispatch_id);
            }
            STATS.declined.fetch_add(1, Ordering::Relaxed);
            let stats = ReplayStats::declined(&reason);
            dispatch.event(client.as_ref(), kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT, 0, passes, Some(&stats.c));
            let _submit = enter_submit(q);
            *forwarded = true;
            submit_ordinary(rt, q, &dispatch, writer, Some(format!("declined: {reason}")));
        }
        Some(Ok(total)) => {
            *forwarded = true;
            run_window(rt, q, &dispatch, client.as_ref(), total, writer);
        }
    }
}

/// Puts a counted barrier packet first on a queue that may still run work submitted untracked
/// before the client registered: it completes only after everything earlier on the queue, and
/// the agent-wide drain waits for its handler. Clears the queue's mark once submitted (the
/// runtime calls a queue's interceptor for one submission at a time, so nothing earlier can
/// follow it). On failure the mark stays and replays on the agent keep declining.
fn fence_earlier_work(rt: Runtime, q: &Arc<QueueState>, writer: Writer) {
    let _submit = enter_submit(q);
    let Some(sig) = SIGNALS.take(rt) else { return };
    if !watch(rt, q, sig, HandlerJob::Batch) {
        SIGNALS.give_back(sig);
        return;
    }
    write(writer, &[barrier_packet(sig)]);
    q.unfenced.store(false, Ordering::Release);
    tracing::debug!("queue {} fenced: work submitted before the client registered is now counted", q.queue_id);
}

/// A dispatch under consideration: the packet and what callbacks see.
struct Dispatch {
    pkt: hsa_kernel_dispatch_packet_t,
    name: Option<Arc<CString>>,
    info: kreplay_dispatch_info_t,
    queue: Arc<QueueState>,
}

impl Dispatch {
    fn new(rt: Runtime, q: &Arc<QueueState>, pkt: hsa_kernel_dispatch_packet_t) -> Self {
        let name = NAMES.resolve(rt, q.agent, pkt.kernel_object);
        let info = kreplay_dispatch_info_t {
            size: std::mem::size_of::<kreplay_dispatch_info_t>() as u64,
            agent_handle: q.agent.handle,
            queue: q.queue.cast_const().cast(),
            queue_id: q.queue_id,
            dispatch_id: super::next_dispatch_id(),
            kernel_object: pkt.kernel_object,
            kernel_name: name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
            grid_size: [pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z],
            workgroup_size: [pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z],
            reserved0: 0,
            private_segment_size: pkt.private_segment_size,
            group_segment_size: pkt.group_segment_size,
            kernarg_address: pkt.kernarg_address.cast_const(),
        };
        Self { pkt, name, info, queue: q.clone() }
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

    fn event(&self, client: &dyn ReplayClient, kind: kreplay_event_kind_t, pass: u32, total: u32, stats: Option<&kreplay_replay_stats_t>) {
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
        if catch_unwind(AssertUnwindSafe(|| client.on_event(&e))).is_err() {
            tracing::error!("the client's event callback panicked ({kind:?}); continuing");
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
        let c = CString::new(reason.to_string().replace('\0', " ")).unwrap_or_default();
        s.c.declined_reason = c.as_ptr();
        s._reason = Some(c);
        s
    }
}

/// Submits the dispatch once with the tool's signal (so it is tracked and timed) and a
/// barrier carrying the application's signal. The caller holds the reader side of the gate.
fn submit_ordinary(rt: Runtime, q: &Arc<QueueState>, d: &Dispatch, writer: Writer, skipped: Option<String>) {
    let Some(sig) = SIGNALS.take(rt) else {
        write(writer, &[to_bytes(&d.pkt)]);
        return;
    };
    let mut summary = Box::new(d.summary());
    summary.declined = skipped;
    if !watch(rt, q, sig, HandlerJob::Ordinary(summary)) {
        SIGNALS.give_back(sig);
        write(writer, &[to_bytes(&d.pkt)]);
        return;
    }
    let mut batch = vec![d.with_signal(sig)];
    if d.pkt.completion_signal.handle != 0 {
        batch.push(barrier_packet(d.pkt.completion_signal));
    }
    write(writer, &batch);
}

struct RuntimeCopy(Runtime);

impl DeviceCopy for RuntimeCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        // SAFETY: forwarded caller contract.
        unsafe { self.0.copy(dst.cast(), src.cast(), len) }.map_err(|e| CopyFailed { len, detail: e.to_string() })
    }
}

fn capture(rt: Runtime, q: &QueueState) -> Result<Snapshot, DeclineReason> {
    let tracked = INVENTORY.owned_by(q.agent.handle);
    let variables = crate::loader::module_variables(rt, q.agent).map_err(|e| DeclineReason::SymbolEnumeration(e.to_string()))?;
    let mut regions: Vec<Region> = Vec::new();
    regions
        .try_reserve_exact(tracked.len() + variables.len())
        .map_err(|_| DeclineReason::Metadata { regions: tracked.len() + variables.len() })?;
    regions.extend(tracked.iter().map(|a| Region { kind: RegionKind::Allocation, device: a.base, size: a.size }));
    regions.extend(variables);
    Snapshot::capture_tracked(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &RuntimeCopy(rt), &INVENTORY)
}

fn in_flight_text(agent: u64) -> String {
    let v = QUEUES.in_flight(agent);
    if v.is_empty() {
        return "no completion handler in flight".to_owned();
    }
    v.iter().map(|(id, n)| format!("queue {id}: {n} completion handler(s)")).collect::<Vec<_>>().join(", ")
}

/// Fences prior work of this queue: a barrier packet and a wait.
fn drain_queue(rt: Runtime, q: &QueueState, writer: Writer, d: &Dispatch) {
    let Some(sig) = SIGNALS.take(rt) else {
        fatal(&format!(
            "cannot create a completion signal for the queue drain before replaying dispatch {} on agent {} queue {}",
            d.info.dispatch_id, q.agent_name, q.queue_id
        ));
    };
    write(writer, &[barrier_packet(sig)]);
    let bound = *DRAIN_TIMEOUT;
    let deadline = std::time::Instant::now() + bound;
    loop {
        if rt.signal_wait_lt_one(sig, 50_000_000) < 1 {
            break;
        }
        if std::time::Instant::now() >= deadline {
            fatal(&format!(
                "queue drain before replaying dispatch {} on agent {} ({:#x}) queue {} did not finish within {} ms: \
                 work submitted earlier on this queue is still running ({}). Raise KREPLAY_DRAIN_TIMEOUT_MS if it is legitimately slow.",
                d.info.dispatch_id,
                q.agent_name,
                q.agent.handle,
                q.queue_id,
                bound.as_millis(),
                in_flight_text(q.agent.handle)
            ));
        }
    }
    SIGNALS.give_back(sig);
}

fn drain_agent(q: &QueueState, d: &Dispatch) {
    let bound = *DRAIN_TIMEOUT;
    let ok = drain::poll_until(bound, std::time::Duration::from_millis(1), || QUEUES.in_flight(q.agent.handle).is_empty());
    if !ok {
        fatal(&format!(
            "agent-wide drain before replaying dispatch {} on agent {} ({:#x}) queue {} did not finish within {} ms; still in flight: {}. \
             Raise KREPLAY_DRAIN_TIMEOUT_MS if the work is legitimately slow.",
            d.info.dispatch_id,
            q.agent_name,
            q.agent.handle,
            q.queue_id,
            bound.as_millis(),
            in_flight_text(q.agent.handle)
        ));
    }
}

/// Runs one pass: the dispatch (with attached packets) on a fresh signal, then the bounded
/// handler drain. Returns the device times.
fn run_pass(rt: Runtime, q: &Arc<QueueState>, d: &Dispatch, writer: Writer, before: &[Packet], after: &[Packet], pass: u32) -> (u64, u64) {
    let Some(sig) = SIGNALS.take(rt) else {
        fatal(&format!(
            "cannot create a completion signal for pass {pass} of dispatch {} on agent {} queue {}",
            d.info.dispatch_id, q.agent_name, q.queue_id
        ));
    };
    let done = Arc::new(Completion::new());
    let watched = watch(rt, q, sig, HandlerJob::Pass(done.clone()));
    // Inside the window nothing else is in flight on this queue: exactly this pass's handler.
    debug_assert!(!watched || q.in_flight.load(Ordering::Acquire) == 1, "more than one completion handler in flight in a pass");
    if !watched {
        fatal(&format!(
            "cannot watch the completion of pass {pass} of dispatch {} on agent {} queue {}",
            d.info.dispatch_id, q.agent_name, q.queue_id
        ));
    }
    let mut batch = Vec::with_capacity(before.len() + 1 + after.len());
    batch.extend_from_slice(before);
    batch.push(d.with_signal(sig));
    batch.extend_from_slice(after);
    write(writer, &batch);
    let bound = *DRAIN_TIMEOUT;
    match done.wait(bound) {
        Some(t) => {
            SIGNALS.give_back(sig);
            t
        }
        None => fatal(&format!(
            "pass {pass} of dispatch {} (kernel {}) on agent {} ({:#x}) queue {}: the completion handler did not finish within {} ms; \
             still in flight: {}. Raise KREPLAY_DRAIN_TIMEOUT_MS if the kernel is legitimately slow.",
            d.info.dispatch_id,
            d.name.as_ref().map_or("<unknown>".to_owned(), |n| n.to_string_lossy().into_owned()),
            q.agent_name,
            q.agent.handle,
            q.queue_id,
            bound.as_millis(),
            in_flight_text(q.agent.handle)
        )),
    }
}

/// The replay window. Holds the agent's writer lock from the drains to the application's
/// completion signal.
fn run_window(rt: Runtime, q: &Arc<QueueState>, d: &Dispatch, client: &dyn ReplayClient, total: u32, writer: Writer) {
    let guard = enter_window(q);
    let open = OpenWindow::enter(q, d);
    let window_start = monotonic_ns();
    drain_queue(rt, q, writer, d);
    drain_agent(q, d);
    let mut summary = d.summary();
    let captured = coverage::check(q).map_err(DeclineReason::Coverage).and_then(|()| capture(rt, q));
    let mut snap = match captured {
        Ok(s) => s,
        Err(reason) => {
            if let DeclineReason::Coverage(gap) = &reason {
                if coverage::first_report(gap) {
                    tracing::warn!(
                        "dispatch {} on agent {} not replayed: {gap}; it runs once (warned once per kind of gap)",
                        d.info.dispatch_id,
                        q.agent_name
                    );
                } else {
                    tracing::debug!("dispatch {} not replayed: {gap}", d.info.dispatch_id);
                }
            } else if DECLINE_WARNING.first() {
                tracing::warn!(
                    "dispatch {} not replayed: the snapshot is incomplete ({reason}); it runs once (later declines are logged at debug level)",
                    d.info.dispatch_id
                );
            } else {
                tracing::debug!("dispatch {} not replayed: the snapshot is incomplete ({reason})", d.info.dispatch_id);
            }
            STATS.declined.fetch_add(1, Ordering::Relaxed);
            let stats = ReplayStats::declined(&reason);
            d.event(client, kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT, 0, total, Some(&stats.c));
            // Exactly once, with the application's completion signal in queue order.
            let times = run_pass(rt, q, d, writer, &[], &[], 0);
            if d.pkt.completion_signal.handle != 0 {
                write(writer, &[barrier_packet(d.pkt.completion_signal)]);
            }
            drop(open);
            drop(guard);
            summary.declined = Some(format!("declined: {reason}"));
            summary.window = times;
            summary.passes = vec![PassTimes { start_ns: times.0, end_ns: times.1, restore: None }];
            if catch_unwind(AssertUnwindSafe(|| client.dispatch_done(&summary))).is_err() {
                tracing::error!("the client's dispatch summary callback panicked");
            }
            return;
        }
    };
    let cap = snap.stats();
    STATS.snapshot_bytes.fetch_add(cap.bytes, Ordering::Relaxed);
    let mut stats = ReplayStats::new();
    stats.c.snapshot_regions = cap.regions;
    stats.c.snapshot_bytes = cap.bytes;
    stats.c.snapshot_ns = cap.end_ns - cap.start_ns;
    d.event(client, kreplay_event_kind_t::KREPLAY_EVENT_CONFIG_EXIT, 0, total, Some(&stats.c));

    let scope = LoopScope::begin(q.size as usize);
    let mut totals = RestoreTotals::default();
    let mut pass: u32 = 0;
    loop {
        {
            let _armed = ArmGuard::arm(&scope);
            d.event(client, kreplay_event_kind_t::KREPLAY_EVENT_PASS_ENTER, pass, total, None);
        }
        let attached = scope.packets();
        let times = run_pass(rt, q, d, writer, &attached.before, &attached.after, pass);
        STATS.passes.fetch_add(1, Ordering::Relaxed);
        summary.passes.push(PassTimes { start_ns: times.0, end_ns: times.1, restore: None });
        d.event_timed(client, kreplay_event_kind_t::KREPLAY_EVENT_PASS_EXIT, pass, total, times, Some(&stats.c));
        if total != 0 && pass + 1 >= total {
            break;
        }
        if client.has_continue() {
            let go = catch_unwind(AssertUnwindSafe(|| client.should_continue(&d.info, pass, total))).unwrap_or_else(|_| {
                tracing::error!("the client's continue callback panicked; stopping the loop");
                false
            });
            if !go {
                break;
            }
        }
        let rep = snap.restore(&INVENTORY, &RuntimeCopy(rt));
        totals.count += 1;
        totals.regions += rep.regions;
        totals.bytes += rep.bytes;
        totals.skipped_regions += rep.skipped;
        totals.ns += rep.end_ns - rep.start_ns;
        STATS.restored_bytes.fetch_add(rep.bytes, Ordering::Relaxed);
        STATS.skipped_regions.fetch_add(rep.skipped, Ordering::Relaxed);
        stats.c.restore_count = totals.count;
        stats.c.restored_regions = totals.regions;
        stats.c.restored_bytes = totals.bytes;
        stats.c.skipped_regions = totals.skipped_regions;
        stats.c.restore_ns = totals.ns;
        if let Some(last) = summary.passes.last_mut() {
            last.restore = Some((rep.start_ns, rep.end_ns));
        }
        pass += 1;
    }
    drop(scope);
    if d.pkt.completion_signal.handle != 0 {
        write(writer, &[barrier_packet(d.pkt.completion_signal)]);
    }
    let window_end = monotonic_ns();
    drop(open);
    drop(guard);
    if summary.passes.len() > 1 {
        STATS.replayed.fetch_add(1, Ordering::Relaxed);
    }
    summary.window = (window_start, window_end);
    summary.snapshot = Some(cap);
    summary.restore = Some(totals);
    if catch_unwind(AssertUnwindSafe(|| client.dispatch_done(&summary))).is_err() {
        tracing::error!("the client's dispatch summary callback panicked");
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
        assert_eq!(u64::from_le_bytes(p[56..64].try_into().unwrap()), 0xabc, "completion signal at byte 56");
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
        api::register_without_runtime(Arc::new(PanickingSummary));
        let q = Arc::new(QueueState {
            agent: ffi::hsa_agent_t { handle: 0xa9e47 },
            agent_name: "test".into(),
            queue: std::ptr::null_mut(),
            queue_id: 1,
            size: 64,
            lock: super::super::GATE.agent(0xa9e47),
            in_flight: crate::sync::protocol::AtomicU64::new(1),
            unfenced: crate::sync::AtomicBool::new(false),
        });
        let ctx = Box::new(HandlerCtx {
            queue: q.clone(),
            signal: hsa_signal_t { handle: 0x5160 },
            job: HandlerJob::Ordinary(Box::default()),
        });
        // SAFETY: a leaked box, handed over exactly once as `watch` does.
        let keep = unsafe { on_signal(0, Box::into_raw(ctx).cast()) };
        assert!(!keep);
        assert_eq!(q.in_flight.load(Ordering::Acquire), 0, "the handler is no longer counted in flight");
    }
}
