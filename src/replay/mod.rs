//! The replay service: queues the tool created, the replay gate, the drains and the replay
//! loop.
//!
//! A replayed dispatch expands into one window on the submitting thread (see
//! `docs/architecture.md`): writer lock, queue drain, agent-wide drain, snapshot, passes with
//! restores between them, the application's completion signal, writer lock released.

pub mod contract;
mod cooperative;
pub mod coverage;
pub mod decline;
pub mod deferred;
pub mod drain;
pub mod gate;
mod host_window;
pub mod inflight;
pub mod localized;
mod window;

pub use window::{HostWriteFence, fence_host_write, on_submit};

use crate::inventory::AllocationInventory;
use crate::loader::KernelNames;
use crate::runtime::Runtime;
use crate::sync::protocol::AtomicU64;
use crate::sync::{Arc, AtomicBool, LazyLock, Mutex, Ordering, RwLock};
use contract::StatCounters;
use gate::{AgentLock, ReplayGate};
use hsa_abi::ffi::{hsa_agent_t, hsa_queue_t, hsa_signal_t};
use std::collections::HashMap;
use std::time::Duration;

/// Live tracked allocations of the process.
pub static INVENTORY: LazyLock<AllocationInventory> = LazyLock::new(AllocationInventory::new);
/// Virtual-memory handles of GPU device pools, by handle.
pub static VMEM_HANDLES: LazyLock<crate::inventory::VmemHandles> =
    LazyLock::new(crate::inventory::VmemHandles::new);
/// Per-agent replay locks.
pub static GATE: LazyLock<ReplayGate> = LazyLock::new(ReplayGate::new);
/// Queues created through the tool.
pub static QUEUES: LazyLock<QueueRegistry> = LazyLock::new(QueueRegistry::default);
/// Kernel names.
pub static NAMES: LazyLock<KernelNames> = LazyLock::new(KernelNames::new);
/// Process totals.
pub static STATS: StatCounters = StatCounters::new();
/// Reusable completion signals of the tool.
pub static SIGNALS: LazyLock<SignalPool> = LazyLock::new(SignalPool::default);
/// Bound of every drain (`KREPLAY_DRAIN_TIMEOUT_MS`).
pub static DRAIN_TIMEOUT: LazyLock<Duration> = LazyLock::new(crate::settings::drain_timeout_bound);

/// The bound of the queue drain and the agent-wide drain together before a window declines
/// (`KREPLAY_DRAIN_DECLINE_MS`, never above `KREPLAY_DRAIN_TIMEOUT_MS`). An invalid value of
/// either is reported once and every replay is declined.
pub static DRAIN_DECLINE: LazyLock<Result<Duration, String>> = LazyLock::new(|| {
    if let Some(e) = crate::settings::replay_refused() {
        // Reported when the environment was read.
        return Err(e.to_owned());
    }
    match crate::settings::drain_decline_from_lookup(|k| std::env::var(k).ok()) {
        Ok(d) => Ok(d.min(*DRAIN_TIMEOUT)),
        Err(e) => {
            eprintln!("kreplay: {e}");
            Err(e.to_string())
        }
    }
});
/// Signals and copies the agent-wide drain waits for.
pub static IN_FLIGHT: LazyLock<inflight::InFlightWork> = LazyLock::new(inflight::InFlightWork::new);
/// Application signals whose dispatch times a completion handler will read.
pub static TIMED_SIGNALS: LazyLock<TimedSignals> = LazyLock::new(TimedSignals::default);

/// The application stored a new value into `signal`: it uses it again, which it does only after
/// it saw what it waited for, so copies counted on it are complete.
pub fn signal_reused(signal: hsa_signal_t) {
    IN_FLIGHT.forget_signal(signal);
}

/// The application's `hsa_signal_destroy` is about to destroy `signal`: nothing of the tool
/// reads it afterwards.
pub fn signal_destroyed(signal: hsa_signal_t) {
    IN_FLIGHT.forget_signal(signal);
    TIMED_SIGNALS.destroyed(signal);
}

type Times = Result<(u64, u64), crate::runtime::HsaError>;

/// One application signal a handler will read times from.
struct TimedSignal {
    agent: hsa_agent_t,
    holds: usize,
    /// Read when the application destroyed the signal before the handler ran.
    captured: Option<Times>,
}

/// Application completion signals that a completion handler of the tool reads dispatch times
/// from after they fired. When the application destroys one first (it waited for it, so the
/// dispatch completed), the times are read just before the destruction and kept for the
/// handler; the handler never reads a destroyed signal.
#[derive(Default)]
pub struct TimedSignals {
    held: Mutex<HashMap<u64, TimedSignal>>,
}

impl TimedSignals {
    /// Forgets every signal (the runtime instance that owned them shut down).
    pub fn forget_all(&self) {
        self.held.lock().clear();
    }

    /// A handler will read the times of `s`, a signal of a dispatch on `agent`.
    pub fn hold(&self, s: hsa_signal_t, agent: hsa_agent_t) {
        let mut held = self.held.lock();
        let e = held.entry(s.handle).or_insert(TimedSignal {
            agent,
            holds: 0,
            captured: None,
        });
        e.holds += 1;
        e.agent = agent;
        // A handle reused by a new signal after a destruction: read the live one again.
        e.captured = None;
    }

    /// The dispatch times of `s` (read now, or when it was destroyed) and releases the hold;
    /// `None` without a hold.
    pub fn take(&self, s: hsa_signal_t, read: impl FnOnce(hsa_agent_t) -> Times) -> Option<Times> {
        let mut held = self.held.lock();
        let e = held.get_mut(&s.handle)?;
        let times = match &e.captured {
            Some(t) => t.clone(),
            None => read(e.agent),
        };
        e.holds -= 1;
        if e.holds == 0 {
            held.remove(&s.handle);
        }
        Some(times)
    }

    fn destroyed(&self, s: hsa_signal_t) {
        let mut held = self.held.lock();
        if let Some(e) = held.get_mut(&s.handle)
            && e.captured.is_none()
        {
            e.captured =
                Some(Runtime::get().map_or(Ok((0, 0)), |rt| rt.dispatch_times(e.agent, s)));
        }
    }
}

static NEXT_DISPATCH_ID: crate::sync::AtomicU64 = crate::sync::AtomicU64::new(1);

/// Reserves the next dispatch id (from 1).
pub fn next_dispatch_id() -> u64 {
    NEXT_DISPATCH_ID.fetch_add(1, Ordering::Relaxed)
}

/// A queue created through the tool (an intercept queue with profiling enabled).
#[derive(Debug)]
pub struct QueueState {
    /// The queue's agent.
    pub agent: hsa_agent_t,
    /// The agent's name.
    pub agent_name: String,
    /// The application's queue.
    pub queue: *mut hsa_queue_t,
    /// The queue's id.
    pub queue_id: u64,
    /// The queue's size in packets (what one pass may submit at once).
    pub size: u32,
    /// The agent's replay lock.
    pub lock: AgentLock,
    /// Completion handlers of the tool in flight on this queue (they report ordinary dispatches
    /// to the client; teardown waits for them). Drains do not use this count: they wait on
    /// signals ([`IN_FLIGHT`]).
    pub in_flight: AtomicU64,
    /// True while the queue may run work submitted on the fast path before a client registered
    /// (see [`coverage`]); cleared by the fence its next slow-path submission puts first.
    pub unfenced: AtomicBool,
    /// The queue's counting signal: submissions not replayed add one and the barrier packet the
    /// tool puts after each of them subtracts it at completion, so its value is the number of
    /// those submissions still running. `None` when the runtime could not create it (then each
    /// submission gets a tool signal of its own, as replays do).
    pub counter: Option<hsa_signal_t>,
    /// The kernel name resolved last on this queue (see [`KernelNames::resolve_through`]).
    pub last_name: Mutex<crate::loader::LastName>,
    /// Errors the runtime reported on the queue (the application's callback is wrapped).
    pub fault: Arc<crate::queue_fault::QueueFault>,
    /// The barrier packets on this queue that have not passed (as far as the last one added
    /// saw): the last barrier with dependencies of each application submission, and the tool's
    /// barrier in front of each deferred window (see `window::forward_run`, `deferred`). While
    /// one of them cannot pass before a replay window ends (a barrier-AND with one dependency
    /// among the window's signals, a barrier-OR with all of them there), the queue's later work
    /// waits for that window, and the window does not wait for it.
    pub gates: Mutex<Vec<Gate>>,
}

/// A barrier packet the tool fenced.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    /// Its dependency signals (0: none).
    pub deps: [u64; 5],
    /// A barrier-OR (passes when any dependency fires) rather than a barrier-AND.
    pub any: bool,
    /// A tool signal on a barrier packet right after it: below 1 once the gate passed.
    pub passed: hsa_signal_t,
}

// SAFETY: `queue` is an address owned by the runtime, only passed back to it.
unsafe impl Send for QueueState {}
// SAFETY: as above; every other field is thread-safe.
unsafe impl Sync for QueueState {}

impl Gate {
    /// True when the gate cannot pass before every signal of `window` fired.
    pub fn waits_for(&self, window: &[u64]) -> bool {
        let mut deps = self.deps.iter().filter(|&&d| d != 0).peekable();
        if self.any {
            deps.peek().is_some() && deps.all(|d| window.contains(d))
        } else {
            deps.any(|d| window.contains(d))
        }
    }
}

impl QueueState {
    /// State for a new queue.
    ///
    /// # Safety
    /// `queue` must be a queue the runtime just created (its `id` field is read).
    pub unsafe fn new(rt: Runtime, agent: hsa_agent_t, queue: *mut hsa_queue_t) -> Self {
        // SAFETY: caller contract.
        let (queue_id, size) = unsafe { ((*queue).id, (*queue).size) };
        Self {
            agent,
            agent_name: rt.agent_name(agent),
            queue,
            queue_id,
            size,
            lock: GATE.agent(agent.handle),
            in_flight: AtomicU64::new(0),
            unfenced: AtomicBool::new(false),
            counter: rt
                .signal_create(0)
                .map_err(|e| tracing::warn!("creating the counting signal of queue {queue_id} failed ({e}); its submissions are counted one signal each"))
                .ok(),
            last_name: Mutex::new(None),
            fault: Arc::new(crate::queue_fault::QueueFault::new(None, std::ptr::null_mut())),
            gates: Mutex::new(Vec::new()),
        }
    }
}

/// The queues created through the tool, keyed by queue address. The map lock is only held for
/// lookups and polls, never across a wait.
#[derive(Default)]
pub struct QueueRegistry {
    map: RwLock<HashMap<usize, (Arc<QueueState>, usize)>>,
}

impl QueueRegistry {
    /// Adds a queue with the raw pointer handed to the runtime as interceptor user data.
    pub fn insert(&self, q: Arc<QueueState>, user_data: usize) {
        self.map.write().insert(q.queue as usize, (q, user_data));
    }

    /// Removes a queue; returns its interceptor user data.
    pub fn remove(&self, queue: *mut hsa_queue_t) -> Option<(Arc<QueueState>, usize)> {
        self.map.write().remove(&(queue as usize))
    }

    /// Forgets every queue (the runtime instance that owned them shut down and destroyed them
    /// without the application's `hsa_queue_destroy`). Their interceptor user data is left
    /// allocated: nothing can tell that no late call of the old runtime still uses it.
    pub fn forget_all(&self) {
        self.map.write().clear();
    }

    /// Every registered queue.
    pub fn all(&self) -> Vec<Arc<QueueState>> {
        self.map.read().values().map(|(q, _)| q.clone()).collect()
    }
}

/// Waits (bounded by `KREPLAY_DRAIN_TIMEOUT_MS`) until the tool's completion handlers of
/// `queues` finished, so their records are delivered before a queue or the tool goes away. On
/// expiry it warns and proceeds: teardown must not hang.
pub fn settle_handlers(queues: &[Arc<QueueState>]) {
    settle_handlers_within(queues, *DRAIN_TIMEOUT);
}

/// [`settle_handlers`] with its own bound.
pub fn settle_handlers_within(queues: &[Arc<QueueState>], bound: Duration) {
    let busy = || {
        queues
            .iter()
            .any(|q| q.in_flight.load(Ordering::Acquire) > 0)
    };
    if busy() && !drain::poll_until(bound, Duration::from_millis(1), || !busy()) {
        tracing::warn!(
            "completion handlers still in flight after {} ms at queue or tool teardown or at exit; their records are lost",
            bound.as_millis()
        );
    }
}

/// Forgets everything the tool knew about the previous runtime instance (its allocations,
/// queues, signals, executables), before `OnLoad` makes the tool active for a new one.
pub fn forget_runtime_instance() {
    INVENTORY.clear();
    crate::host_memory::HOST_ALLOCATIONS.clear();
    crate::host_memory::capture::forget_shared_writers();
    VMEM_HANDLES.clear();
    QUEUES.forget_all();
    SIGNALS.forget_all();
    NAMES.forget_all();
    coverage::forget_foreign_queues();
    crate::loader::forget_extension();
    crate::loader::EXECUTABLES.forget_all();
    IN_FLIGHT.forget_all();
    TIMED_SIGNALS.forget_all();
    crate::snapshot::ranges::CLIENT_RANGES.lock().clear();
    crate::snapshot::forget_runtime_instance();
}

/// Signals the tool puts on its own packets, reused after their handler ran.
#[derive(Default)]
pub struct SignalPool {
    free: Mutex<Vec<hsa_signal_t>>,
}

impl SignalPool {
    /// A signal with value 1.
    pub fn take(&self, rt: Runtime) -> Option<hsa_signal_t> {
        if let Some(s) = self.free.lock().pop() {
            // SAFETY: a live signal of the pool.
            unsafe { (rt.originals().signal_store_relaxed)(s, 1) };
            return Some(s);
        }
        rt.signal_create(1)
            .map_err(|e| tracing::warn!("creating a completion signal failed: {e}"))
            .ok()
    }

    /// `N` signals of the pool at value 1, all or none (those taken go back when one is missing).
    pub fn take_all<const N: usize>(&self, rt: Runtime) -> Option<[hsa_signal_t; N]> {
        let mut taken = Vec::with_capacity(N);
        for _ in 0..N {
            match self.take(rt) {
                Some(s) => taken.push(s),
                None => {
                    taken.into_iter().for_each(|s| self.give_back(s));
                    return None;
                }
            }
        }
        taken.try_into().ok()
    }

    /// Forgets the pooled signals (the runtime instance that owned them shut down).
    pub fn forget_all(&self) {
        self.free.lock().clear();
    }

    /// Returns a signal nobody waits on any more.
    pub fn give_back(&self, s: hsa_signal_t) {
        self.free.lock().push(s);
    }
}
