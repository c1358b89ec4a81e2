//! Replay windows run off the submitting thread, for dispatches whose queue is gated when they
//! are submitted.
//!
//! A program may ring one doorbell for [a barrier on a signal the host sets later][the
//! dispatch], and set that signal only after the doorbell returned (as a host-side event or a
//! stream waiting on a host callback does). A window opened on the submitting thread would wait
//! for a gate that only this thread can open. Instead, the submitting thread puts in the
//! application's queue, where the dispatch was: a tool barrier that lowers `arrived` once
//! everything before it finished, then a barrier on `done` (one of the queue's gates), and
//! returns. A worker thread waits for `arrived`, runs the window with its passes written to a
//! tool queue of the same agent (the *deferred queue* of that application queue), waits until
//! that queue ran everything written to it, and lowers `done`: the application's later packets
//! run after the window, in their order. The application's completion signal is carried by the
//! kept pass, as on the submitting thread.
//!
//! Asynchronous copies of the application that wait on signals are a hazard meanwhile: a runtime
//! whose copy engine runs copies in order (ROCR's blit queue) would hold the snapshot's own copies
//! behind one that waits for the dispatch. Such copies are counted ([`copy_fence`]); a deferred
//! window that finds one submitted since its dispatch declines as soon as it holds the agent,
//! and while a deferred window holds an agent, such a copy waits for it to end before it is
//! submitted.
//!
//! Windows of one queue run in the order of its dispatches: each worker waits for its own
//! `arrived`, which the queue lowers only after the previous `done`. A queue destroyed, or the
//! tool unloaded, while a worker still waits for its gate cancels that worker: the dispatch never
//! reached the head of its queue, so it never runs, as without the tool.

use super::gate::ReplayGate;
use super::{DRAIN_TIMEOUT, GATE, QueueState, SIGNALS};
use crate::runtime::Runtime;
use crate::state;
use crate::sync::Arc;
use crate::tool_queue::{self, Packet, ToolQueue, Writer};
use hsa_abi::ffi::hsa_signal_t;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The signals of one deferred window: `arrived` falls once the application's queue reached the
/// dispatch, and the worker lowers `done` once the window ended.
#[derive(Clone, Copy)]
pub struct Signals {
    /// Lowered by the tool barrier where the dispatch was.
    pub arrived: hsa_signal_t,
    /// The dependency of the barrier that holds the queue's later packets.
    pub done: hsa_signal_t,
    /// Lowered by a tool barrier right after the `done` barrier (the queue's gate).
    pub passed: hsa_signal_t,
}

/// What is put in the application's queue instead of the dispatch.
pub fn packets_in_queue(s: &Signals) -> [Packet; 3] {
    [
        tool_queue::barrier(0, s.arrived.handle),
        tool_queue::barrier(s.done.handle, 0),
        tool_queue::barrier(0, s.passed.handle),
    ]
}

/// Takes the three signals of a deferred window from the pool; `None` (nothing taken) when the
/// runtime cannot create them.
pub fn take_signals(rt: Runtime) -> Option<Signals> {
    let [arrived, done, passed] = SIGNALS.take_all(rt)?;
    Some(Signals {
        arrived,
        done,
        passed,
    })
}

/// The window to run once the queue reached the dispatch, given the writer of the deferred
/// queue.
pub type Body = Box<dyn FnOnce(Writer) + Send>;

/// A worker of an application queue.
struct Worker {
    cancel: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// Per application queue (its id): its deferred queue, created on first use, and its workers.
#[derive(Default)]
struct Deferred {
    queue: Option<ToolQueue>,
    workers: Vec<Worker>,
}

fn registry() -> &'static Mutex<HashMap<u64, Deferred>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u64, Deferred>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

thread_local! {
    /// The deferred queue a worker writes to.
    static TARGET: Cell<Option<ToolQueue>> = const { Cell::new(None) };
    /// On a worker: the count of dependent copies when its dispatch was deferred.
    static COPIES_AT_DEFERRAL: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Asynchronous copies of the application submitted with dependency signals.
static DEPENDENT_COPIES: AtomicU64 = AtomicU64::new(0);

/// Agents on which a worker is past its gate (its window opens or is open), once per worker.
static HOLDING: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Called before the application submits an asynchronous copy with `deps` dependency signals,
/// completing on `completion`: the signal is noted (see [`note_completions`]); a dependent copy
/// is counted, then waits until no deferred window holds an agent (it takes and at once drops
/// the reader side of each such agent's gate: holding it would take the same reader side twice
/// when the copy is fenced as a host write too, which a waiting window turns into a deadlock).
/// Counting first is what makes the wait enough: a window that took its agent after the count
/// sees it and declines, one that took it before makes the copy wait. A worker's own callbacks
/// are not fenced; without a replay service nothing is noted or counted.
pub fn copy_fence(deps: u32, completion: u64) {
    if state::service() == state::ReplayService::Off {
        return;
    }
    note_completions([completion]);
    if deps == 0 || TARGET.with(Cell::get).is_some() {
        return;
    }
    DEPENDENT_COPIES.fetch_add(1, Ordering::SeqCst);
    let mut agents = HOLDING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    agents.sort_unstable();
    agents.dedup();
    for agent in agents {
        drop(ReplayGate::submit(&GATE.agent(agent)));
    }
}

/// Completion signals of the packets and asynchronous copies the application submitted lately
/// (newest last, at most [`REMEMBERED`]).
static COMPLETIONS: Mutex<std::collections::VecDeque<u64>> =
    Mutex::new(std::collections::VecDeque::new());
const REMEMBERED: usize = 4096;

/// Notes completion signals of work the application submitted (0s are skipped): a gate
/// waiting only on such signals passes without the host's help.
pub fn note_completions(signals: impl IntoIterator<Item = u64>) {
    let mut seen = COMPLETIONS.lock().unwrap_or_else(|e| e.into_inner());
    for s in signals.into_iter().filter(|&s| s != 0) {
        if seen.len() == REMEMBERED {
            seen.pop_front();
        }
        seen.push_back(s);
    }
}

/// True when every dependency in `deps` (0s aside) is the completion signal of work submitted
/// lately (see [`note_completions`]).
pub fn completes_on_its_own(deps: &[u64]) -> bool {
    let seen = COMPLETIONS.lock().unwrap_or_else(|e| e.into_inner());
    deps.iter().filter(|&&d| d != 0).all(|d| seen.contains(d))
}

/// True on a worker whose dispatch saw a dependent copy submitted since it was deferred.
pub fn dependent_copies_since_deferral() -> bool {
    COPIES_AT_DEFERRAL
        .with(Cell::get)
        .is_some_and(|at| DEPENDENT_COPIES.load(Ordering::SeqCst) != at)
}

/// The count [`dependent_copies_since_deferral`] compares with, taken when a dispatch is
/// deferred.
pub fn dependent_copies() -> u64 {
    DEPENDENT_COPIES.load(Ordering::SeqCst)
}

/// The writer a worker hands to its window: packets go to its deferred queue.
unsafe extern "C" fn write_deferred(pkts: *const c_void, count: u64) {
    let Some(q) = TARGET.with(Cell::get) else {
        return;
    };
    if pkts.is_null() {
        return;
    }
    // SAFETY: the writer contract: `count` packets at `pkts`.
    let given = unsafe { std::slice::from_raw_parts(pkts.cast::<Packet>(), count as usize) };
    q.submit(given);
}

/// Starts the worker of a deferred window on `q`. Gives the body back (nothing started, the
/// signals still the caller's) when the deferred queue could not be created or no thread could
/// be started (a failed spawn drops its closure, so the body is the caller's again).
pub fn spawn(
    rt: Runtime,
    q: &Arc<QueueState>,
    signals: Signals,
    body: Body,
) -> Result<(), Option<Body>> {
    let copies = dependent_copies();
    let mut map = registry().lock().unwrap_or_else(|e| e.into_inner());
    let entry = map.entry(q.queue_id).or_default();
    let target = match entry.queue {
        Some(queue) => queue,
        None => match tool_queue::create(q.agent) {
            Ok(created) => *entry.queue.insert(created),
            Err(st) => {
                tracing::warn!(
                    "cannot create a queue for deferred replay windows (status {st:#x})"
                );
                return Err(Some(body));
            }
        },
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let (q2, cancel2) = (q.clone(), cancel.clone());
    let body = Arc::new(Mutex::new(Some(body)));
    let given = body.clone();
    let started = std::thread::Builder::new()
        .name("kreplay-deferred".into())
        .spawn(move || {
            let Some(body) = given.lock().ok().and_then(|mut b| b.take()) else {
                return;
            };
            let job = Job {
                rt,
                q: &q2,
                signals,
                target,
                copies,
            };
            crate::diagnostics::panic_boundary(
                "a deferred replay window",
                || job.run(&cancel2, body),
                || (),
            )
        });
    match started {
        Ok(thread) => {
            entry.workers.retain(|w| !w.thread.is_finished());
            entry.workers.push(Worker { cancel, thread });
            Ok(())
        }
        Err(e) => {
            tracing::warn!("cannot start a thread for a deferred replay window: {e}");
            Err(body.lock().ok().and_then(|mut b| b.take()))
        }
    }
}

/// What a worker works on.
struct Job<'a> {
    rt: Runtime,
    q: &'a QueueState,
    signals: Signals,
    /// The deferred queue of `q`.
    target: ToolQueue,
    /// [`dependent_copies`] when the dispatch was deferred.
    copies: u64,
}

impl Job<'_> {
    /// Waits for the queue to reach the dispatch, runs the window on the deferred queue, waits
    /// for it, and lets the application's queue go on.
    fn run(&self, cancel: &AtomicBool, body: Body) {
        let (rt, s) = (self.rt, self.signals);
        if !reached(rt, self.q, s.arrived, cancel) {
            return;
        }
        SIGNALS.give_back(s.arrived);
        TARGET.with(|t| t.set(Some(self.target)));
        COPIES_AT_DEFERRAL.with(|c| c.set(Some(self.copies)));
        let agent = self.q.agent.handle;
        HOLDING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(agent);
        let inside = state::Submission::enter();
        if inside.is_some() {
            body(write_deferred);
        }
        drop(inside);
        {
            let mut holding = HOLDING.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = holding.iter().position(|&a| a == agent) {
                holding.swap_remove(i);
            }
        }
        finish(rt, self.q, self.target);
        TARGET.with(|t| t.set(None));
        COPIES_AT_DEFERRAL.with(|c| c.set(None));
        // SAFETY: a live signal of the pool; the barrier holding the queue waits on it.
        unsafe { (rt.originals().signal_store_screlease)(s.done, 0) };
        if rt.signal_wait_lt_one(s.passed, DRAIN_TIMEOUT.as_nanos() as u64) < 1 {
            // The barrier that read it passed: nothing reads `done` any more. (`passed` is the
            // queue's gate, recycled when a later gate replaces it.)
            SIGNALS.give_back(s.done);
        }
    }
}

/// Waits until the application's queue lowered `arrived`. False when the worker was cancelled
/// or the queue stopped on an error first (the dispatch never runs then, as without the tool).
fn reached(rt: Runtime, q: &QueueState, arrived: hsa_signal_t, cancel: &AtomicBool) -> bool {
    loop {
        if rt.signal_wait_lt_one(arrived, 20_000_000) < 1 {
            return true;
        }
        if cancel.load(Ordering::Acquire) {
            return false;
        }
        if let Some(st) = q.fault.status() {
            tracing::warn!(
                "kreplay: queue {} reported error {st:#x} before a deferred replay window opened; the dispatch did not run",
                q.queue_id
            );
            return false;
        }
    }
}

/// Waits until everything the window wrote to the deferred queue completed (a barrier behind
/// it), reporting a wait that lasts longer than the drain bound once.
fn finish(rt: Runtime, q: &QueueState, target: ToolQueue) {
    let Some(sig) = SIGNALS.take(rt) else {
        target.idle(Duration::MAX);
        return;
    };
    target.submit(&[tool_queue::barrier(0, sig.handle)]);
    let start = Instant::now();
    let mut reported = false;
    while rt.signal_wait_lt_one(sig, 20_000_000) >= 1 {
        if !reported && start.elapsed() > *DRAIN_TIMEOUT {
            reported = true;
            tracing::warn!(
                "kreplay: a deferred replay window on queue {} still runs after {} ms; the queue's later packets wait for it",
                q.queue_id,
                DRAIN_TIMEOUT.as_millis()
            );
        }
    }
    SIGNALS.give_back(sig);
}

/// Cancels the workers of application queue `queue_id` that still wait for their gate, waits
/// for the others, and destroys its deferred queue (the queue is being destroyed).
pub fn queue_destroyed(queue_id: u64) {
    let entry = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&queue_id)
        .map(cancelled);
    if let Some(entry) = entry {
        release(entry);
    }
}

/// [`queue_destroyed`] for every queue (the tool unloads).
pub fn release_all() {
    let all: Vec<Deferred> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .map(|(_, d)| cancelled(d))
        .collect();
    all.into_iter().for_each(release);
}

/// Cancels the workers of an entry just taken out of the registry.
fn cancelled(entry: Deferred) -> Deferred {
    for w in &entry.workers {
        w.cancel.store(true, Ordering::Release);
    }
    entry
}

/// Waits for the workers of a cancelled entry, then destroys its deferred queue.
fn release(entry: Deferred) {
    for w in entry.workers {
        let _ = w.thread.join();
    }
    if let Some(queue) = entry.queue {
        queue.destroy();
    }
}
