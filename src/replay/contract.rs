//! The contract between the replay engine and its client: the [`ReplayClient`] trait and what
//! it is handed, the registration slot (one client per process), the process totals, and
//! [`call_client`], the one place where the engine enters a client's code.
//!
//! Callbacks run on the thread that submitted the dispatch, inside the replay window (the
//! agent's writer lock is held), except where noted. Registered clients are wrapped so every
//! callback runs in a client-callback scope (memory the client allocates there is its own).

use crate::abi::{kreplay_dispatch_info_t, kreplay_event_t, kreplay_stats_t, kreplay_status_t};
use crate::sync::{Arc, AtomicPtr, AtomicU64, Mutex, OnceLock, Ordering};

/// Installs the client that serves when none registered by the first dispatch (the built-in
/// client); set once by the composition root at load, so the engine never names that client.
static FALLBACK_CLIENT: OnceLock<fn()> = OnceLock::new();

/// Sets how the fallback client is installed (the interceptor's load path does, once).
pub fn set_fallback_client(install: fn()) {
    let _ = FALLBACK_CLIENT.set(install);
}

/// Installs the fallback client, when one was set (it registers through [`register_as`]).
pub(crate) fn install_fallback_client() {
    if let Some(install) = FALLBACK_CLIENT.get() {
        install();
    }
}

/// The client callbacks the replay engine makes, each with what the engine does when it panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callback {
    /// [`ReplayClient::pass_count`]: the dispatch runs once.
    PassCount,
    /// [`ReplayClient::should_continue`]: the loop stops.
    Continue,
    /// [`ReplayClient::on_event`]: the window goes on.
    Event,
    /// [`ReplayClient::dispatch_done`]: the summary is dropped.
    DispatchDone,
}

impl Callback {
    fn name(self) -> &'static str {
        match self {
            Callback::PassCount => "pass-count callback panicked; the dispatch runs once",
            Callback::Continue => "continue callback panicked; stopping the loop",
            Callback::Event => "event callback panicked; continuing",
            Callback::DispatchDone => "dispatch summary callback panicked",
        }
    }
}

/// Runs one client callback, the one place where the replay engine enters a client's code: a
/// panic is caught here, logged with what follows from it, and returned as `None` (the caller
/// then does what [`Callback`] says). Every callback of the engine goes through this guard.
pub fn call_client<T>(callback: Callback, call: impl FnOnce() -> T) -> Option<T> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).ok();
    if r.is_none() {
        tracing::error!("the client's {}", callback.name());
    }
    r
}

/// Summary of one dispatch handed to [`ReplayClient::dispatch_done`] when its window closes.
#[derive(Clone, Debug, Default)]
pub struct DispatchSummary {
    /// Dispatch id.
    pub dispatch_id: u64,
    /// Kernel name, when known.
    pub kernel: Option<String>,
    /// Agent handle.
    pub agent: u64,
    /// Agent name.
    pub agent_name: String,
    /// Queue id.
    pub queue_id: u64,
    /// Why replay was declined, if it was.
    pub declined: Option<String>,
    /// Why the loop stopped before the passes due (a failed restore), if it did.
    pub stopped: Option<String>,
    /// Window start/end (monotonic ns).
    pub window: (u64, u64),
    /// Per pass: device start/end and the restore that followed (if any).
    pub passes: Vec<PassTimes>,
    /// Capture totals, for replayed dispatches.
    pub snapshot: Option<crate::snapshot::CaptureStats>,
    /// Restore totals over the window, for replayed dispatches.
    pub restore: Option<RestoreTotals>,
    /// What the window did with host and fine-grained memory, for replayed dispatches.
    pub host_memory: Option<crate::host_memory::HostMemoryReport>,
    /// The dispatch ran once without being timed (see
    /// [`ReplayClient::times_ordinary_dispatches`]): `passes` is empty and both ends of `window`
    /// are the time of its submission.
    pub untimed: bool,
}

/// Times of one pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassTimes {
    /// Kernel start on the device (monotonic ns).
    pub start_ns: u64,
    /// Kernel end.
    pub end_ns: u64,
    /// The restore that followed this pass.
    pub restore: Option<(u64, u64)>,
}

/// Restore totals of one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreTotals {
    /// Restores run.
    pub count: u64,
    /// Regions written back.
    pub regions: u64,
    /// Bytes written back.
    pub bytes: u64,
    /// Regions skipped.
    pub skipped_regions: u64,
    /// Time spent (ns).
    pub ns: u64,
}

/// A replay client, in Rust. Methods run on the submitting thread, except `dispatch_done` for a
/// dispatch that ran once, which runs on the runtime's signal-handler thread.
pub trait ReplayClient: Send + Sync {
    /// Passes for this dispatch: 0 unbounded (needs `has_continue`), 1 no replay, N exactly N.
    fn pass_count(&self, dispatch: &kreplay_dispatch_info_t) -> u32;
    /// Whether [`ReplayClient::should_continue`] is implemented.
    fn has_continue(&self) -> bool {
        false
    }
    /// Continue after `current_pass`? Only called when `has_continue`.
    fn should_continue(
        &self,
        _dispatch: &kreplay_dispatch_info_t,
        _current_pass: u32,
        _total_passes: u32,
    ) -> bool {
        true
    }
    /// A replay event.
    fn on_event(&self, _event: &kreplay_event_t) {}
    /// Whether [`ReplayClient::on_event`] does anything; false skips building the events.
    /// Default true.
    fn has_events(&self) -> bool {
        true
    }
    /// Whether `dispatch`, when it runs once (pass count 1, or a declined replay), still gets
    /// PASS ENTER and PASS EXIT for pass 0, in a window without a snapshot (the writer lock held
    /// and earlier work drained). Asked after its pass count. Default false.
    fn pass_events_always(&self, _dispatch: &kreplay_dispatch_info_t) -> bool {
        false
    }
    /// The dispatch's window closed.
    fn dispatch_done(&self, _summary: &DispatchSummary) {}
    /// Whether [`ReplayClient::dispatch_done`] is wanted for dispatches that run once (pass
    /// count 1). Default true; when false no summary is built for them.
    fn reads_summaries(&self) -> bool {
        true
    }
    /// Whether dispatches that run once are timed. Default false: their summaries are handed
    /// over on the submitting thread with [`DispatchSummary::untimed`] set, and the dispatch costs
    /// no signal, handler or allocation of the tool. True puts a tool signal and a completion
    /// handler on each of them, whose summary then carries the kernel's device times.
    fn times_ordinary_dispatches(&self) -> bool {
        false
    }
}

/// Errors of the Rust API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// Bad argument.
    #[error("invalid argument")]
    InvalidArgument,
    /// A client is already registered.
    #[error("a replay client is already registered in this process")]
    AlreadyConfigured,
    /// Outside PASS ENTER.
    #[error("localized control is only allowed during a PASS ENTER callback")]
    NotArmed,
    /// This copy of the library is not the runtime's active tool.
    #[error(
        "this copy of libkreplay.so is not the runtime's active tool (not loaded through HSA_TOOLS_LIB, before its \
         OnLoad or after its OnUnload, or HSA_TOOLS_LIB names another copy)"
    )]
    NotLoaded,
}

impl From<ApiError> for kreplay_status_t {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::InvalidArgument => kreplay_status_t::KREPLAY_STATUS_INVALID_ARGUMENT,
            ApiError::AlreadyConfigured => kreplay_status_t::KREPLAY_STATUS_ALREADY_CONFIGURED,
            ApiError::NotArmed => kreplay_status_t::KREPLAY_STATUS_NOT_ARMED,
            ApiError::NotLoaded => kreplay_status_t::KREPLAY_STATUS_NOT_LOADED,
        }
    }
}

/// Who registered the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientOwner {
    /// A tool, through `kreplay_register` or [`register`].
    Tool,
    /// The built-in client, configured by `KREPLAY_PASSES` at the first dispatch.
    Builtin,
}

/// A registration: the client and who made it.
struct Registration {
    client: Arc<dyn ReplayClient>,
    owner: ClientOwner,
}

/// The registration of the current runtime instance; NULL when there is none. Written only
/// under [`crate::state::SERVICE_DECISION`]. Points into [`REGISTRATIONS`].
static CLIENT: AtomicPtr<Registration> = AtomicPtr::new(std::ptr::null_mut());

/// Every registration made in the process (one per runtime instance at most), never freed: a
/// thread that read one just before `OnUnload` released it may still hold the reference.
#[allow(clippy::vec_box)] // each box keeps its address when the Vec grows
static REGISTRATIONS: Mutex<Vec<Box<Registration>>> = Mutex::new(Vec::new());

/// Makes `r` the current registration.
fn install_registration(r: Registration) {
    let mut kept = REGISTRATIONS.lock();
    kept.push(Box::new(r));
    let current: *const Registration = &**kept.last().expect("just pushed");
    CLIENT.store(current.cast_mut(), Ordering::Release);
}

fn registration() -> Option<&'static Registration> {
    // SAFETY: a non-NULL pointer points into a box of `REGISTRATIONS`, never freed or moved.
    unsafe { CLIENT.load(Ordering::Acquire).as_ref() }
}

/// Registers the process's replay client; a second registration is refused.
///
/// Works at any time while the tool is active: allocations are recorded from `OnLoad` on, so a
/// late client finds a complete inventory. Queues that ran dispatches before the registration
/// are fenced before a replay relies on them (see [`crate::replay::coverage`]). Refused with
/// [`ApiError::NotLoaded`] when this copy of the library is not the runtime's active tool
/// (before `OnLoad`, after `OnUnload`, or never loaded as a tool). A registration lasts until
/// `OnUnload`: after a new `hsa_init` the client registers again.
pub fn register(client: Arc<dyn ReplayClient>) -> Result<(), ApiError> {
    register_as(client, ClientOwner::Tool)
}

pub(crate) fn register_as(
    client: Arc<dyn ReplayClient>,
    owner: ClientOwner,
) -> Result<(), ApiError> {
    use crate::state::{self, ReplayService, ToolState};
    let _decision = state::SERVICE_DECISION.lock();
    if state::current() != ToolState::Active {
        return Err(ApiError::NotLoaded);
    }
    if let Some(existing) = registration() {
        if owner == ClientOwner::Tool && existing.owner == ClientOwner::Builtin {
            tracing::warn!(
                "kreplay_register refused (ALREADY_CONFIGURED): the built-in client, configured by KREPLAY_PASSES or \
                 KREPLAY_PMC_GROUPS, took the replay service at the first dispatch because no client had registered by then; \
                 unset those variables, or register from the tool's OnLoad, to drive replay from this tool"
            );
        }
        return Err(ApiError::AlreadyConfigured);
    }
    install_registration(Registration {
        client: Arc::new(CallbackScoped(client)),
        owner,
    });
    if state::service() == ReplayService::Off {
        // Dispatches already ran untracked on the fast path: mark their queues before any
        // dispatch can see the service on.
        crate::replay::coverage::mark_queues_unfenced();
    }
    state::turn_service_on();
    Ok(())
}

/// Registers `client` without an active tool (unit tests of the replay path, which run without
/// a runtime).
#[cfg(test)]
pub(crate) fn register_without_runtime(client: Arc<dyn ReplayClient>) {
    let _decision = crate::state::SERVICE_DECISION.lock();
    install_registration(Registration {
        client,
        owner: ClientOwner::Tool,
    });
}

/// Forgets a tool's registration (at `OnUnload`: the tool's library may be unloaded after it).
/// The built-in client stays: it is part of this library and serves every runtime instance
/// (completion handlers that run after `OnUnload` still deliver its records). The caller holds
/// [`crate::state::SERVICE_DECISION`] and no replay window is open.
pub(crate) fn release_client() {
    if registration().is_some_and(|r| r.owner == ClientOwner::Tool) {
        CLIENT.store(std::ptr::null_mut(), Ordering::Release);
    }
}

/// The registered client.
pub fn client() -> Option<&'static Arc<dyn ReplayClient>> {
    registration().map(|r| &r.client)
}

/// Process totals.
pub fn stats() -> kreplay_stats_t {
    let s = &super::STATS;
    kreplay_stats_t {
        size: std::mem::size_of::<kreplay_stats_t>() as u64,
        dispatches: s.dispatches.load(Ordering::Relaxed),
        replayed_dispatches: s.replayed.load(Ordering::Relaxed),
        passes: s.passes.load(Ordering::Relaxed),
        declined: s.declined.load(Ordering::Relaxed),
        batches_run_once: s.batches.load(Ordering::Relaxed),
        snapshot_bytes: s.snapshot_bytes.load(Ordering::Relaxed),
        restored_bytes: s.restored_bytes.load(Ordering::Relaxed),
        skipped_regions: s.skipped_regions.load(Ordering::Relaxed),
    }
}

/// Counters behind [`stats`].
#[derive(Default)]
#[allow(missing_docs)]
pub struct StatCounters {
    pub dispatches: AtomicU64,
    pub replayed: AtomicU64,
    pub passes: AtomicU64,
    pub declined: AtomicU64,
    pub batches: AtomicU64,
    pub snapshot_bytes: AtomicU64,
    pub restored_bytes: AtomicU64,
    pub skipped_regions: AtomicU64,
}

impl StatCounters {
    /// All zero.
    pub const fn new() -> Self {
        Self {
            dispatches: AtomicU64::new(0),
            replayed: AtomicU64::new(0),
            passes: AtomicU64::new(0),
            declined: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            snapshot_bytes: AtomicU64::new(0),
            restored_bytes: AtomicU64::new(0),
            skipped_regions: AtomicU64::new(0),
        }
    }
}

/// The registered client, with every callback marked as running on its thread, so memory the
/// client allocates from a callback is its own (never tracked nor restored).
struct CallbackScoped(Arc<dyn ReplayClient>);

impl ReplayClient for CallbackScoped {
    fn pass_count(&self, dispatch: &kreplay_dispatch_info_t) -> u32 {
        let _scope = crate::inventory::ClientCallbackScope::enter();
        self.0.pass_count(dispatch)
    }
    fn has_continue(&self) -> bool {
        self.0.has_continue()
    }
    fn should_continue(
        &self,
        dispatch: &kreplay_dispatch_info_t,
        current_pass: u32,
        total_passes: u32,
    ) -> bool {
        let _scope = crate::inventory::ClientCallbackScope::enter();
        self.0.should_continue(dispatch, current_pass, total_passes)
    }
    fn on_event(&self, event: &kreplay_event_t) {
        let _scope = crate::inventory::ClientCallbackScope::enter();
        self.0.on_event(event)
    }
    fn dispatch_done(&self, summary: &DispatchSummary) {
        let _scope = crate::inventory::ClientCallbackScope::enter();
        self.0.dispatch_done(summary)
    }
    fn reads_summaries(&self) -> bool {
        self.0.reads_summaries()
    }
    fn has_events(&self) -> bool {
        self.0.has_events()
    }
    fn times_ordinary_dispatches(&self) -> bool {
        self.0.times_ordinary_dispatches()
    }
    fn pass_events_always(&self, dispatch: &kreplay_dispatch_info_t) -> bool {
        self.0.pass_events_always(dispatch)
    }
}
