//! Signals with the real runtime's memory layout, blocking waits, signal groups and the
//! asynchronous-handler thread.
//!
//! A signal handle is the address of an `amd_signal_t` (ROCR's `amd_hsa_signal.h`): `kind` at
//! byte 0 (`AMD_SIGNAL_KIND_USER`), the 64-bit value at byte 8, the event mailbox pointer at 16
//! and the event id at 24 (both 0: no interrupt is needed to wake a host waiter), the start and
//! end timestamps at 32 and 40. Device code and runtimes that update the value directly through
//! that address are seen by host waiters: a waiter re-reads the value at least every
//! [`POLL_MAX`], not only when a `hsa_signal_*` call wakes it.
//!
//! Signals live in one reserved region, so a handle is checked by address range, stride and a
//! live flag. Freed slots are reused oldest first. Waiters register before checking the value
//! and writers take the slot's lock before notifying, so no wake-up from an API store is lost.
//! Signals watched by an async handler or a wait-any also bump a process-wide epoch that the
//! handler thread and wait-any callers block on. A signal may carry a store hook (intercept
//! queues' doorbells): storing to it runs the hook synchronously on the storing thread.

use crate::error::{Error, Result};
use hsa_abi::ffi::*;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::OnceLock;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::time::{Duration, Instant};

/// `AMD_SIGNAL_KIND_USER`: a signal whose value lives in memory.
pub(crate) const AMD_SIGNAL_KIND_USER: i64 = 1;

/// Most live signals at once.
const CAPACITY: usize = 1 << 22;

/// Longest time a blocked waiter goes without re-reading the value (changes made by device code
/// directly in memory wake no one).
pub(crate) const POLL_MAX: Duration = Duration::from_millis(2);

/// How long a waiter re-reads the value keeping its core.
const SPIN: Duration = Duration::from_micros(20);

/// How long a waiter re-reads the value, yielding its core in between, on an idle machine.
const LINGER: Duration = Duration::from_micros(200);

/// A yield that took this long gave the core to another thread for a time slice: the machine
/// is busy (the runtime's own threads give a core back within microseconds).
const CROWDED: Duration = Duration::from_micros(100);

/// A function run by every store to a signal that carries it, with its data.
pub(crate) type StoreHook = fn(*mut c_void);

/// One signal: the `amd_signal_t` the handle points at, then the runtime's own fields.
#[repr(C, align(64))]
pub(crate) struct Signal {
    kind: AtomicI64,
    value: AtomicI64,
    event_mailbox: AtomicU64,
    event_id: AtomicU32,
    _reserved1: u32,
    start_ts: AtomicU64,
    end_ts: AtomicU64,
    queue_ptr: AtomicU64,
    _reserved3: [u32; 2],
    // ---- not part of amd_signal_t
    live: AtomicBool,
    waiters: AtomicU32,
    watchers: AtomicU32,
    lock: Mutex<()>,
    cv: Condvar,
    hook: AtomicUsize,
    hook_data: AtomicPtr<c_void>,
}

const _: () = {
    assert!(std::mem::offset_of!(Signal, kind) == 0);
    assert!(std::mem::offset_of!(Signal, value) == 8);
    assert!(std::mem::offset_of!(Signal, event_mailbox) == 16);
    assert!(std::mem::offset_of!(Signal, event_id) == 24);
    assert!(std::mem::offset_of!(Signal, start_ts) == 32);
    assert!(std::mem::offset_of!(Signal, end_ts) == 40);
    assert!(std::mem::offset_of!(Signal, queue_ptr) == 48);
    assert!(std::mem::offset_of!(Signal, live) == 64);
};

impl Signal {
    fn new() -> Self {
        Signal {
            kind: AtomicI64::new(0),
            value: AtomicI64::new(0),
            event_mailbox: AtomicU64::new(0),
            event_id: AtomicU32::new(0),
            _reserved1: 0,
            start_ts: AtomicU64::new(0),
            end_ts: AtomicU64::new(0),
            queue_ptr: AtomicU64::new(0),
            _reserved3: [0; 2],
            live: AtomicBool::new(false),
            waiters: AtomicU32::new(0),
            watchers: AtomicU32::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            hook: AtomicUsize::new(0),
            hook_data: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The handle: the address of the `amd_signal_t`.
    pub(crate) fn handle(&self) -> u64 {
        self as *const Signal as u64
    }

    /// The value word, for read-modify-write operations (call [`Signal::changed`] after).
    pub(crate) fn value(&self) -> &AtomicI64 {
        &self.value
    }

    /// Current value (acquire).
    #[inline]
    pub(crate) fn load(&self) -> i64 {
        self.value.load(Ordering::Acquire)
    }

    /// True until the signal is destroyed.
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    /// Start and end time of the dispatch or copy that completed this signal.
    pub(crate) fn times(&self) -> (u64, u64) {
        (
            self.start_ts.load(Ordering::Relaxed),
            self.end_ts.load(Ordering::Relaxed),
        )
    }

    /// Records the start and end time of the dispatch or copy that completes this signal.
    pub(crate) fn set_times(&self, start: u64, end: u64) {
        self.start_ts.store(start, Ordering::Relaxed);
        self.end_ts.store(end, Ordering::Relaxed);
    }

    /// Sets (or clears) the hook run by every store; cleared before the hook's data goes away.
    pub(crate) fn set_store_hook(&self, hook: Option<(StoreHook, *mut c_void)>) {
        match hook {
            Some((f, data)) => {
                self.hook_data.store(data, Ordering::Release);
                self.hook.store(f as usize, Ordering::Release);
            }
            None => {
                self.hook.store(0, Ordering::Release);
                self.hook_data
                    .store(std::ptr::null_mut(), Ordering::Release);
            }
        }
    }

    /// Wakes whoever waits on this signal; runs the store hook when `hook`.
    #[inline]
    pub(crate) fn changed(&self, hook: bool) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
        if self.watchers.load(Ordering::SeqCst) > 0 {
            bump_epoch();
        }
        if hook {
            let f = self.hook.load(Ordering::Acquire);
            let data = self.hook_data.load(Ordering::Acquire);
            if f != 0 && !data.is_null() {
                // SAFETY: `hook` only ever holds a `StoreHook` stored by `set_store_hook`.
                let f: StoreHook = unsafe { std::mem::transmute::<usize, StoreHook>(f) };
                f(data);
            }
        }
    }

    /// Stores a value, wakes waiters and runs the store hook.
    #[inline]
    pub(crate) fn store(&self, v: i64) {
        self.value.store(v, Ordering::SeqCst);
        self.changed(true);
    }

    /// Stores a value without waking anyone (`hsa_signal_silent_store_*`).
    pub(crate) fn silent_store(&self, v: i64) {
        self.value.store(v, Ordering::SeqCst);
    }

    /// Subtracts and wakes waiters (completion of a packet or a copy).
    #[inline]
    pub(crate) fn subtract(&self, v: i64) {
        self.value.fetch_sub(v, Ordering::SeqCst);
        self.changed(false);
    }

    /// Blocks until `cond(value)` holds or `deadline` passes; returns the last value seen.
    /// A short spin comes first so that fast producers are seen without sleeping; then the value
    /// is re-read every [`POLL_MAX`] (stores made directly in memory wake no one), or at once
    /// when an API store wakes the waiter. Shorter re-read intervals cost dispatch throughput:
    /// timed wake-ups of blocked waiters compete with the packet processors for the cores.
    pub(crate) fn wait(&self, cond: impl Fn(i64) -> bool, deadline: Option<Instant>) -> i64 {
        if let Some(v) = self.spin(&cond) {
            return v;
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut g = self.lock.lock();
        let v = loop {
            let v = self.value.load(Ordering::SeqCst);
            if cond(v) {
                break v;
            }
            if !self.live.load(Ordering::Acquire) {
                // Destroyed while waiting: the real runtime returns 0.
                break 0;
            }
            let until = Instant::now() + POLL_MAX;
            match deadline {
                Some(d) if Instant::now() >= d => break self.value.load(Ordering::SeqCst),
                Some(d) => {
                    self.cv.wait_until(&mut g, until.min(d));
                }
                None => {
                    self.cv.wait_until(&mut g, until);
                }
            }
        };
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        v
    }

    /// The value, when `cond` holds for it before the waiter should block: re-read for
    /// [`SPIN`] keeping the core, then between yields for up to [`LINGER`] while each yield
    /// comes back within [`CROWDED`] (the machine is idle: the waiter does not pay for a
    /// wake-up).
    /// A yield that took longer means other threads want the core; one more would give it
    /// away for a whole time slice (milliseconds), so the waiter blocks instead.
    fn spin(&self, cond: &impl Fn(i64) -> bool) -> Option<i64> {
        let start = Instant::now();
        let mut crowded = false;
        loop {
            for _ in 0..64 {
                let v = self.load();
                if cond(v) {
                    return Some(v);
                }
                std::hint::spin_loop();
            }
            let looked = start.elapsed();
            if looked < SPIN {
                continue;
            }
            if looked >= LINGER || crowded {
                return None;
            }
            let before = Instant::now();
            std::thread::yield_now();
            crowded = before.elapsed() >= CROWDED;
        }
    }
}

// ---- storage ---------------------------------------------------------------------------------

struct Slots {
    /// Slots constructed so far.
    initialized: usize,
    /// Destroyed slots, oldest first.
    free: VecDeque<usize>,
}

static SLOTS: Mutex<Slots> = Mutex::new(Slots {
    initialized: 0,
    free: VecDeque::new(),
});
/// Slots constructed so far (read without the lock by `lookup`).
static INITIALIZED: AtomicUsize = AtomicUsize::new(0);

/// Base of the reserved region that holds every signal (0 when it cannot be mapped).
fn region() -> usize {
    static BASE: OnceLock<usize> = OnceLock::new();
    *BASE.get_or_init(|| {
        // SAFETY: an anonymous private reservation; pages are committed when first touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                CAPACITY * size_of::<Signal>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED { 0 } else { p as usize }
    })
}

fn slot(index: usize) -> &'static Signal {
    // SAFETY: callers pass an index below INITIALIZED; those slots are constructed and never
    // dropped (the region is never unmapped).
    unsafe { &*((region() + index * size_of::<Signal>()) as *const Signal) }
}

/// Looks a live signal up by handle.
#[inline]
pub(crate) fn lookup(handle: u64) -> Option<&'static Signal> {
    let base = region() as u64;
    let offset = handle.checked_sub(base)?;
    let size = size_of::<Signal>() as u64;
    if base == 0
        || !offset.is_multiple_of(size)
        || offset / size >= INITIALIZED.load(Ordering::Acquire) as u64
    {
        return None;
    }
    let s = slot((offset / size) as usize);
    s.is_live().then_some(s)
}

/// Whether `addr..addr + len` lies inside the `amd_signal_t` of one live signal: the part of a
/// signal device code may read and write (a hostcall doorbell's value, for example).
pub(crate) fn is_device_range(addr: u64, len: u64) -> bool {
    let base = region() as u64;
    let size = size_of::<Signal>() as u64;
    let Some(offset) = addr.checked_sub(base) else {
        return false;
    };
    let within = offset % size;
    base != 0
        && within
            .checked_add(len)
            .is_some_and(|end| end <= std::mem::offset_of!(Signal, live) as u64)
        && lookup(base + offset - within).is_some()
}

/// Like [`lookup`], as an error: as in the real runtime, handle 0 is an invalid argument and
/// any other unknown handle an invalid signal.
pub(crate) fn get(handle: u64) -> Result<&'static Signal> {
    if handle == 0 {
        return Err(Error::InvalidArgument("signal handle is 0"));
    }
    lookup(handle).ok_or(Error::InvalidSignal(handle))
}

/// Creates a signal with an initial value.
pub(crate) fn create(initial: i64) -> Result<hsa_signal_t> {
    if region() == 0 {
        return Err(Error::OutOfResources(
            "cannot reserve memory for signals".into(),
        ));
    }
    let mut a = SLOTS.lock();
    let index = match a.free.pop_front() {
        Some(i) => i,
        None => {
            let i = a.initialized;
            if i >= CAPACITY {
                return Err(Error::OutOfResources(format!(
                    "more than {CAPACITY} live signals"
                )));
            }
            // SAFETY: slot `i` is inside the region and not constructed yet; nobody else can see
            // it until INITIALIZED covers it.
            unsafe { ((region() + i * size_of::<Signal>()) as *mut Signal).write(Signal::new()) };
            a.initialized += 1;
            INITIALIZED.store(a.initialized, Ordering::Release);
            i
        }
    };
    let s = slot(index);
    s.kind.store(AMD_SIGNAL_KIND_USER, Ordering::Relaxed);
    s.value.store(initial, Ordering::SeqCst);
    s.event_mailbox.store(0, Ordering::Relaxed);
    s.event_id.store(0, Ordering::Relaxed);
    s.queue_ptr.store(0, Ordering::Relaxed);
    s.set_times(0, 0);
    s.set_store_hook(None);
    s.live.store(true, Ordering::Release);
    Ok(hsa_signal_t { handle: s.handle() })
}

/// Destroys a signal; its handle becomes invalid (until the slot is reused).
pub(crate) fn destroy(handle: u64) -> Result<()> {
    let s = get(handle)?;
    let mut a = SLOTS.lock();
    if !s.live.swap(false, Ordering::AcqRel) {
        return Err(Error::InvalidSignal(handle));
    }
    s.kind.store(0, Ordering::Relaxed);
    s.set_store_hook(None);
    {
        let _g = s.lock.lock();
        s.cv.notify_all();
    }
    let index = ((handle - region() as u64) / size_of::<Signal>() as u64) as usize;
    a.free.push_back(index);
    Ok(())
}

// ---- process-wide epoch for async handlers and wait-any --------------------------------------

static EPOCH: Mutex<u64> = Mutex::new(0);
static EPOCH_CV: Condvar = Condvar::new();

fn bump_epoch() {
    let mut e = EPOCH.lock();
    *e += 1;
    EPOCH_CV.notify_all();
}

fn wait_epoch(seen: u64, timeout: Duration) {
    let mut e = EPOCH.lock();
    if *e == seen {
        EPOCH_CV.wait_for(&mut e, timeout);
    }
}

fn epoch() -> u64 {
    *EPOCH.lock()
}

/// Evaluates an HSA signal condition.
pub(crate) fn condition_holds(cond: hsa_signal_condition_t, value: i64, compare: i64) -> bool {
    vgpu::aql::condition_holds(cond, value, compare)
}

fn deadline_from_ticks(timeout: u64) -> Option<Instant> {
    if timeout == u64::MAX {
        None
    } else {
        Instant::now().checked_add(Duration::from_nanos(timeout))
    }
}

/// True for the four conditions HSA defines.
pub(crate) fn known_condition(cond: hsa_signal_condition_t) -> bool {
    cond <= HSA_SIGNAL_CONDITION_GTE
}

/// Waits on one signal with an HSA condition; `timeout` in nanoseconds (`u64::MAX` = forever).
/// An unknown condition returns 0 at once, as in the real runtime.
pub(crate) fn wait_condition(
    s: &Signal,
    cond: hsa_signal_condition_t,
    compare: i64,
    timeout: u64,
) -> i64 {
    if !known_condition(cond) {
        tracing::debug!("signal wait: unknown condition {cond}; returning 0");
        return 0;
    }
    s.wait(
        |v| condition_holds(cond, v, compare),
        deadline_from_ticks(timeout),
    )
}

/// Waits until any of `signals` satisfies its condition; returns its index, or `u32::MAX` on
/// timeout. As in the real runtime, the scan (in list order) also ends with `u32::MAX` at a
/// signal with an unknown condition or one destroyed meanwhile.
pub(crate) fn wait_any(
    signals: &[(&'static Signal, hsa_signal_condition_t, i64)],
    timeout: u64,
) -> (u32, i64) {
    let deadline = deadline_from_ticks(timeout);
    for (s, _, _) in signals {
        s.watchers.fetch_add(1, Ordering::SeqCst);
    }
    let result = loop {
        let seen = epoch();
        if let Some((i, v)) = signals.iter().enumerate().find_map(|(i, (s, c, cmp))| {
            if !known_condition(*c) || !s.is_live() {
                return Some((u32::MAX, 0));
            }
            let v = s.load();
            condition_holds(*c, v, *cmp).then_some((i as u32, v))
        }) {
            break (i, v);
        }
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) => left.min(POLL_MAX),
                None => break (u32::MAX, 0),
            },
            None => POLL_MAX,
        };
        wait_epoch(seen, wait);
    };
    for (s, _, _) in signals {
        s.watchers.fetch_sub(1, Ordering::SeqCst);
    }
    result
}

// ---- signal groups ---------------------------------------------------------------------------

static GROUPS: Mutex<Vec<Option<Vec<u64>>>> = Mutex::new(Vec::new());

/// Creates a signal group of `signals` (handles checked by the caller); returns its handle.
pub(crate) fn group_create(signals: Vec<u64>) -> u64 {
    let mut g = GROUPS.lock();
    g.push(Some(signals));
    g.len() as u64
}

/// Destroys a signal group.
pub(crate) fn group_destroy(group: u64) -> Result<()> {
    let mut g = GROUPS.lock();
    match (group as usize).checked_sub(1).and_then(|i| g.get_mut(i)) {
        Some(slot @ Some(_)) => {
            *slot = None;
            Ok(())
        }
        _ => Err(Error::Status(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)),
    }
}

/// The signals of a group.
pub(crate) fn group_signals(group: u64) -> Result<Vec<u64>> {
    let g = GROUPS.lock();
    match (group as usize).checked_sub(1).and_then(|i| g.get(i)) {
        Some(Some(list)) => Ok(list.clone()),
        _ => Err(Error::Status(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)),
    }
}

// ---- asynchronous handlers -------------------------------------------------------------------

/// `hsa_amd_signal_async_handler`'s handler.
pub(crate) type AsyncHandler = unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool;
/// `hsa_amd_async_function`'s function.
pub(crate) type AsyncFunction = unsafe extern "C" fn(*mut c_void);

struct Watch {
    signal: u64,
    cond: hsa_signal_condition_t,
    value: i64,
    handler: AsyncHandler,
    arg: usize,
}

struct HandlerThread {
    watches: Vec<Watch>,
    functions: Vec<(AsyncFunction, usize)>,
    running: bool,
    stop: bool,
    thread: Option<std::thread::JoinHandle<()>>,
}

static HANDLERS: Mutex<HandlerThread> = Mutex::new(HandlerThread {
    watches: Vec::new(),
    functions: Vec::new(),
    running: false,
    stop: false,
    thread: None,
});

fn ensure_handler_thread(h: &mut HandlerThread) -> Result<()> {
    if h.running {
        return Ok(());
    }
    h.stop = false;
    let t = std::thread::Builder::new()
        .name("vhsa-async".into())
        .spawn(handler_loop)
        .map_err(|e| {
            Error::OutOfResources(format!("cannot start the async-handler thread: {e}"))
        })?;
    h.thread = Some(t);
    h.running = true;
    Ok(())
}

fn handler_loop() {
    loop {
        let seen = epoch();
        let (ready, functions, watching) = {
            let mut h = HANDLERS.lock();
            if h.stop {
                return;
            }
            let mut ready = Vec::new();
            let mut i = 0;
            while i < h.watches.len() {
                let w = &h.watches[i];
                match lookup(w.signal) {
                    None => {
                        h.watches.swap_remove(i);
                    }
                    Some(s) => {
                        let v = s.load();
                        if condition_holds(w.cond, v, w.value) {
                            ready.push((h.watches.swap_remove(i), v));
                        } else {
                            i += 1;
                        }
                    }
                }
            }
            (
                ready,
                std::mem::take(&mut h.functions),
                !h.watches.is_empty(),
            )
        };
        for (f, arg) in functions {
            // SAFETY: the application's function with its own argument.
            let _ = std::panic::catch_unwind(|| unsafe { f(arg as *mut c_void) });
        }
        let delay = crate::fault::handler_delay();
        for (w, v) in ready {
            if !delay.is_zero() {
                std::thread::sleep(delay);
            }
            let (handler, arg) = (w.handler, w.arg);
            // SAFETY: the application's handler with its own argument.
            let keep = std::panic::catch_unwind(|| unsafe { handler(v, arg as *mut c_void) })
                .unwrap_or(false);
            if keep && lookup(w.signal).is_some() {
                HANDLERS.lock().watches.push(w);
            } else if let Some(s) = lookup(w.signal) {
                s.watchers.fetch_sub(1, Ordering::SeqCst);
            }
        }
        // Watched values may change in memory without a wake-up: poll while there are watches.
        wait_epoch(
            seen,
            if watching {
                POLL_MAX
            } else {
                Duration::from_millis(50)
            },
        );
    }
}

/// Calls `handler(value, arg)` on the handler thread once `cond(value, compare)` holds; the
/// handler returning true keeps watching.
pub(crate) fn add_watch(
    signal: &Signal,
    cond: hsa_signal_condition_t,
    compare: i64,
    handler: AsyncHandler,
    arg: *mut c_void,
) -> Result<()> {
    let mut h = HANDLERS.lock();
    ensure_handler_thread(&mut h)?;
    signal.watchers.fetch_add(1, Ordering::SeqCst);
    h.watches.push(Watch {
        signal: signal.handle(),
        cond,
        value: compare,
        handler,
        arg: arg as usize,
    });
    drop(h);
    bump_epoch();
    Ok(())
}

/// Calls `function(arg)` once on the handler thread.
pub(crate) fn add_function(function: AsyncFunction, arg: *mut c_void) -> Result<()> {
    let mut h = HANDLERS.lock();
    ensure_handler_thread(&mut h)?;
    h.functions.push((function, arg as usize));
    drop(h);
    bump_epoch();
    Ok(())
}

/// Stops the async-handler thread (last `hsa_shut_down`); pending watches are dropped.
pub(crate) fn stop_async_handlers() {
    let t = {
        let mut h = HANDLERS.lock();
        h.stop = true;
        h.running = false;
        for w in h.watches.drain(..) {
            if let Some(s) = lookup(w.signal) {
                s.watchers.fetch_sub(1, Ordering::SeqCst);
            }
        }
        h.functions.clear();
        h.thread.take()
    };
    bump_epoch();
    if let Some(t) = t
        && t.thread().id() != std::thread::current().id()
    {
        let _ = t.join();
    }
}
