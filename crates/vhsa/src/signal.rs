//! Signals: a lock-free table of slots addressed by generation-checked handles, blocking waits
//! (short spin, then a condition variable), and the asynchronous-handler thread.
//!
//! A handle is `generation << 32 | (index + 1)`; a destroyed signal's handle never matches again.
//! Waiters register in the slot before checking the value, and writers take the slot's lock
//! before notifying, so no wake-up is lost. Signals watched by an async handler or a wait-any
//! also bump a process-wide epoch that the handler thread and wait-any callers block on.
//! A signal may carry a doorbell hook (intercept queues): storing to it runs the hook
//! synchronously on the storing thread.

use crate::boundary::{status_call, value_call, write_out};
use crate::error::{Error, Result};
use crate::runtime::ensure_open;
use hsa_abi::ffi::*;
use hsa_abi::{AmdExtTable, CoreApiTable};
use parking_lot::{Condvar, Mutex};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CHUNK: usize = 1024;
const MAX_CHUNKS: usize = 4096;

/// One signal slot.
pub(crate) struct Signal {
    value: AtomicI64,
    generation: AtomicU32,
    live: AtomicBool,
    waiters: AtomicU32,
    watchers: AtomicU32,
    lock: Mutex<()>,
    cv: Condvar,
    /// Profiling: start and end of the dispatch or copy that completed this signal.
    pub(crate) start_ts: AtomicU64,
    pub(crate) end_ts: AtomicU64,
    /// Doorbell hook: an intercept queue whose proxy doorbell this is (NULL otherwise).
    pub(crate) doorbell_of: AtomicPtr<c_void>,
}

impl Signal {
    fn new() -> Self {
        Signal {
            value: AtomicI64::new(0),
            generation: AtomicU32::new(0),
            live: AtomicBool::new(false),
            waiters: AtomicU32::new(0),
            watchers: AtomicU32::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            start_ts: AtomicU64::new(0),
            end_ts: AtomicU64::new(0),
            doorbell_of: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Current value (acquire).
    #[inline]
    pub(crate) fn load(&self) -> i64 {
        self.value.load(Ordering::Acquire)
    }

    /// Wakes whoever waits on this signal; runs the doorbell hook.
    #[inline]
    fn changed(&self, hook: bool) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
        if self.watchers.load(Ordering::SeqCst) > 0 {
            bump_epoch();
        }
        if hook {
            let q = self.doorbell_of.load(Ordering::Acquire);
            if !q.is_null() {
                crate::intercept::doorbell_rung(q);
            }
        }
    }

    /// Stores a value and wakes waiters.
    #[inline]
    pub(crate) fn store(&self, v: i64) {
        self.value.store(v, Ordering::SeqCst);
        self.changed(true);
    }

    /// Subtracts and wakes waiters (completion of a packet or a copy).
    #[inline]
    pub(crate) fn subtract(&self, v: i64) {
        self.value.fetch_sub(v, Ordering::SeqCst);
        self.changed(false);
    }

    /// Blocks until `cond(value)` holds or `deadline` passes; returns the last value seen.
    /// A short spin comes first so that fast producers are seen without sleeping.
    pub(crate) fn wait(&self, cond: impl Fn(i64) -> bool, deadline: Option<Instant>) -> i64 {
        for i in 0..256 {
            let v = self.load();
            if cond(v) {
                return v;
            }
            if i >= 64 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
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
            match deadline {
                Some(d) => {
                    if Instant::now() >= d || self.cv.wait_until(&mut g, d).timed_out() {
                        break self.value.load(Ordering::SeqCst);
                    }
                }
                None => {
                    // Bounded sleeps so a missed cross-process change is still noticed.
                    self.cv.wait_for(&mut g, Duration::from_millis(100));
                }
            }
        };
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        v
    }
}

static CHUNKS: [AtomicPtr<Signal>; MAX_CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_CHUNKS];
static SLOTS: Mutex<SlotAllocator> = Mutex::new(SlotAllocator { next: 0, free: Vec::new() });

struct SlotAllocator {
    next: usize,
    free: Vec<usize>,
}

fn slot(index: usize) -> Option<&'static Signal> {
    let chunk = CHUNKS.get(index / CHUNK)?.load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: chunks are leaked arrays of CHUNK slots, never freed.
    Some(unsafe { &*chunk.add(index % CHUNK) })
}

/// Looks a live signal up by handle.
#[inline]
pub(crate) fn lookup(handle: u64) -> Option<&'static Signal> {
    let index = (handle & 0xFFFF_FFFF).checked_sub(1)? as usize;
    let s = slot(index)?;
    if s.generation.load(Ordering::Acquire) == (handle >> 32) as u32 && s.live.load(Ordering::Acquire) {
        Some(s)
    } else {
        None
    }
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
    let mut a = SLOTS.lock();
    let index = match a.free.pop() {
        Some(i) => i,
        None => {
            let i = a.next;
            if i / CHUNK >= MAX_CHUNKS {
                return Err(Error::OutOfResources(format!("more than {} live signals", CHUNK * MAX_CHUNKS)));
            }
            if i.is_multiple_of(CHUNK) {
                let chunk: Box<[Signal]> = (0..CHUNK).map(|_| Signal::new()).collect();
                CHUNKS[i / CHUNK].store(Box::leak(chunk).as_mut_ptr(), Ordering::Release);
            }
            a.next += 1;
            i
        }
    };
    let s = slot(index).expect("allocated slot");
    s.value.store(initial, Ordering::SeqCst);
    s.start_ts.store(0, Ordering::Relaxed);
    s.end_ts.store(0, Ordering::Relaxed);
    s.doorbell_of.store(std::ptr::null_mut(), Ordering::Relaxed);
    s.live.store(true, Ordering::Release);
    let generation = s.generation.load(Ordering::Acquire);
    Ok(hsa_signal_t { handle: (u64::from(generation) << 32) | (index as u64 + 1) })
}

/// Destroys a signal; its handle becomes invalid.
pub(crate) fn destroy(handle: u64) -> Result<()> {
    let s = get(handle)?;
    let mut a = SLOTS.lock();
    if !s.live.swap(false, Ordering::AcqRel) {
        return Err(Error::InvalidSignal(handle));
    }
    s.generation.fetch_add(1, Ordering::AcqRel);
    {
        let _g = s.lock.lock();
        s.cv.notify_all();
    }
    a.free.push(((handle & 0xFFFF_FFFF) - 1) as usize);
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
    match cond {
        HSA_SIGNAL_CONDITION_EQ => value == compare,
        HSA_SIGNAL_CONDITION_NE => value != compare,
        HSA_SIGNAL_CONDITION_LT => value < compare,
        HSA_SIGNAL_CONDITION_GTE => value >= compare,
        _ => false,
    }
}

fn deadline_from_ticks(timeout: u64) -> Option<Instant> {
    if timeout == u64::MAX {
        None
    } else {
        Instant::now().checked_add(Duration::from_nanos(timeout))
    }
}

/// True for the four conditions HSA defines.
fn known_condition(cond: hsa_signal_condition_t) -> bool {
    cond <= HSA_SIGNAL_CONDITION_GTE
}

/// Waits on one signal with an HSA condition; `timeout` in nanoseconds (`u64::MAX` = forever).
/// An unknown condition returns 0 at once, as in the real runtime.
pub(crate) fn wait_condition(s: &Signal, cond: hsa_signal_condition_t, compare: i64, timeout: u64) -> i64 {
    if !known_condition(cond) {
        tracing::debug!("signal wait: unknown condition {cond}; returning 0");
        return 0;
    }
    s.wait(|v| condition_holds(cond, v, compare), deadline_from_ticks(timeout))
}

// ---- the C entries ---------------------------------------------------------------------------

unsafe extern "C" fn hsa_signal_create_impl(
    initial: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    status_call("hsa_signal_create", || {
        ensure_open()?;
        if signal.is_null() {
            return Err(Error::InvalidArgument("signal is NULL"));
        }
        let consumers = crate::boundary::c_slice(consumers, num_consumers as usize, "consumers is NULL")?;
        for (i, a) in consumers.iter().enumerate() {
            if consumers[..i].iter().any(|b| b.handle == a.handle) {
                return Err(Error::InvalidArgument("consumers lists an agent twice"));
            }
            crate::topology::agent(a.handle)?;
        }
        write_out(signal, create(initial)?, "signal is NULL")
    })
}

unsafe extern "C" fn hsa_amd_signal_create_impl(
    initial: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    _attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    // SAFETY: same contract as hsa_signal_create.
    unsafe { hsa_signal_create_impl(initial, num_consumers, consumers, signal) }
}

unsafe extern "C" fn hsa_signal_destroy_impl(signal: hsa_signal_t) -> hsa_status_t {
    status_call("hsa_signal_destroy", || {
        ensure_open()?;
        destroy(signal.handle)
    })
}

macro_rules! load_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || lookup(signal.handle).map_or(0, |s| s.load()))
        }
    };
}
load_fn!(hsa_signal_load_relaxed_impl);
load_fn!(hsa_signal_load_scacquire_impl);

macro_rules! store_fn {
    ($name:ident, $silent:expr) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            value_call(stringify!($name), (), || {
                if let Some(s) = lookup(signal.handle) {
                    if $silent {
                        s.value.store(value, Ordering::SeqCst);
                    } else {
                        s.store(value);
                    }
                } else {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                }
            })
        }
    };
}
store_fn!(hsa_signal_store_relaxed_impl, false);
store_fn!(hsa_signal_store_screlease_impl, false);
store_fn!(hsa_signal_silent_store_relaxed_impl, true);
store_fn!(hsa_signal_silent_store_screlease_impl, true);

macro_rules! rmw_fn {
    ($name:ident, $op:ident, $ret:ty) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) -> $ret {
            value_call(stringify!($name), Default::default(), || {
                let Some(s) = lookup(signal.handle) else {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                    return Default::default();
                };
                let old = s.value.$op(value, Ordering::SeqCst);
                s.changed(true);
                let _ = old;
                #[allow(clippy::unused_unit)]
                rmw_result::<$ret>(old)
            })
        }
    };
}

trait RmwResult {
    fn from_old(old: i64) -> Self;
}
impl RmwResult for () {
    fn from_old(_: i64) -> Self {}
}
impl RmwResult for i64 {
    fn from_old(old: i64) -> Self {
        old
    }
}
fn rmw_result<T: RmwResult>(old: i64) -> T {
    T::from_old(old)
}

rmw_fn!(hsa_signal_and_relaxed_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_scacquire_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_screlease_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_scacq_screl_impl, fetch_and, ());
rmw_fn!(hsa_signal_or_relaxed_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_scacquire_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_screlease_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_scacq_screl_impl, fetch_or, ());
rmw_fn!(hsa_signal_xor_relaxed_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_scacquire_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_screlease_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_scacq_screl_impl, fetch_xor, ());
rmw_fn!(hsa_signal_add_relaxed_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_scacquire_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_screlease_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_scacq_screl_impl, fetch_add, ());
rmw_fn!(hsa_signal_subtract_relaxed_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_scacquire_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_screlease_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_scacq_screl_impl, fetch_sub, ());
rmw_fn!(hsa_signal_exchange_relaxed_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_scacquire_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_screlease_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_scacq_screl_impl, swap, i64);

macro_rules! cas_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t, expected: hsa_signal_value_t, value: hsa_signal_value_t) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || {
                let Some(s) = lookup(signal.handle) else { return 0 };
                let old = match s.value.compare_exchange(expected, value, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(v) | Err(v) => v,
                };
                if old == expected {
                    s.changed(true);
                }
                old
            })
        }
    };
}
cas_fn!(hsa_signal_cas_relaxed_impl);
cas_fn!(hsa_signal_cas_scacquire_impl);
cas_fn!(hsa_signal_cas_screlease_impl);
cas_fn!(hsa_signal_cas_scacq_screl_impl);

macro_rules! wait_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(
            signal: hsa_signal_t,
            condition: hsa_signal_condition_t,
            compare_value: hsa_signal_value_t,
            timeout_hint: u64,
            _wait_state_hint: hsa_wait_state_t,
        ) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || match lookup(signal.handle) {
                Some(s) => wait_condition(s, condition, compare_value, timeout_hint),
                None => {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                    0
                }
            })
        }
    };
}
wait_fn!(hsa_signal_wait_relaxed_impl);
wait_fn!(hsa_signal_wait_scacquire_impl);

/// Waits until any of `signals` satisfies its condition; returns its index, or `u32::MAX` on
/// timeout. As in the real runtime, the scan (in list order) also ends with `u32::MAX` at a
/// signal with an unknown condition or one destroyed meanwhile.
fn wait_any(signals: &[(&'static Signal, hsa_signal_condition_t, i64)], timeout: u64) -> (u32, i64) {
    let deadline = deadline_from_ticks(timeout);
    for (s, _, _) in signals {
        s.watchers.fetch_add(1, Ordering::SeqCst);
    }
    let result = loop {
        let seen = epoch();
        if let Some((i, v)) = signals
            .iter()
            .enumerate()
            .find_map(|(i, (s, c, cmp))| {
                if !known_condition(*c) || !s.live.load(Ordering::Acquire) {
                    return Some((u32::MAX, 0));
                }
                let v = s.load();
                condition_holds(*c, v, *cmp).then_some((i as u32, v))
            })
        {
            break (i, v);
        }
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) => left.min(Duration::from_millis(100)),
                None => break (u32::MAX, 0),
            },
            None => Duration::from_millis(100),
        };
        wait_epoch(seen, wait);
    };
    for (s, _, _) in signals {
        s.watchers.fetch_sub(1, Ordering::SeqCst);
    }
    result
}

unsafe extern "C" fn hsa_amd_signal_wait_any_impl(
    signal_count: u32,
    signals: *mut hsa_signal_t,
    conds: *mut hsa_signal_condition_t,
    values: *mut hsa_signal_value_t,
    timeout_hint: u64,
    _wait_hint: hsa_wait_state_t,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    value_call("hsa_amd_signal_wait_any", u32::MAX, || {
        let n = signal_count as usize;
        let (Ok(sig), Ok(c), Ok(v)) = (
            crate::boundary::c_slice(signals, n, "signals"),
            crate::boundary::c_slice(conds, n, "conds"),
            crate::boundary::c_slice(values, n, "values"),
        ) else {
            return u32::MAX;
        };
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            match lookup(sig[i].handle) {
                Some(s) => list.push((s, c[i], v[i])),
                None => return u32::MAX,
            }
        }
        let (i, value) = wait_any(&list, timeout_hint);
        if i != u32::MAX && !satisfying_value.is_null() {
            let _ = write_out(satisfying_value, value, "satisfying_value");
        }
        i
    })
}

// ---- signal groups ---------------------------------------------------------------------------

struct Group {
    signals: Vec<u64>,
}

static GROUPS: Mutex<Vec<Option<Group>>> = Mutex::new(Vec::new());

unsafe extern "C" fn hsa_signal_group_create_impl(
    num_signals: u32,
    signals: *const hsa_signal_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    group: *mut hsa_signal_group_t,
) -> hsa_status_t {
    status_call("hsa_signal_group_create", || {
        ensure_open()?;
        if group.is_null() {
            return Err(Error::InvalidArgument("signal_group is NULL"));
        }
        if num_signals == 0 {
            return Err(Error::InvalidArgument("num_signals is 0: a signal group needs at least one signal"));
        }
        let list = crate::boundary::c_slice(signals, num_signals as usize, "signals is NULL")?;
        for s in list {
            get(s.handle)?;
        }
        let mut g = GROUPS.lock();
        g.push(Some(Group { signals: list.iter().map(|s| s.handle).collect() }));
        write_out(group, hsa_signal_group_t { handle: g.len() as u64 }, "signal_group")
    })
}

unsafe extern "C" fn hsa_signal_group_destroy_impl(group: hsa_signal_group_t) -> hsa_status_t {
    status_call("hsa_signal_group_destroy", || {
        ensure_open()?;
        let mut g = GROUPS.lock();
        match (group.handle as usize).checked_sub(1).and_then(|i| g.get_mut(i)) {
            Some(slot @ Some(_)) => {
                *slot = None;
                Ok(())
            }
            _ => Err(Error::Status(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)),
        }
    })
}

unsafe extern "C" fn hsa_signal_group_wait_any_impl(
    group: hsa_signal_group_t,
    conditions: *const hsa_signal_condition_t,
    compare_values: *const hsa_signal_value_t,
    _wait_state_hint: hsa_wait_state_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    status_call("hsa_signal_group_wait_any", || {
        ensure_open()?;
        let handles = {
            let g = GROUPS.lock();
            match (group.handle as usize).checked_sub(1).and_then(|i| g.get(i)) {
                Some(Some(grp)) => grp.signals.clone(),
                _ => return Err(Error::Status(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)),
            }
        };
        let n = handles.len();
        let c = crate::boundary::c_slice(conditions, n, "conditions is NULL")?;
        let v = crate::boundary::c_slice(compare_values, n, "compare_values is NULL")?;
        let mut list = Vec::with_capacity(n);
        for (i, h) in handles.iter().enumerate() {
            list.push((get(*h)?, c[i], v[i]));
        }
        let (i, val) = wait_any(&list, u64::MAX);
        if i == u32::MAX {
            return Err(Error::InvalidArgument("a condition is unknown or a signal of the group was destroyed"));
        }
        write_out(signal, hsa_signal_t { handle: handles[i as usize] }, "signal is NULL")?;
        write_out(value, val, "value is NULL")
    })
}

// ---- asynchronous handlers -------------------------------------------------------------------

type AsyncHandler = unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool;
type AsyncFunction = unsafe extern "C" fn(*mut c_void);

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

static HANDLERS: Mutex<HandlerThread> =
    Mutex::new(HandlerThread { watches: Vec::new(), functions: Vec::new(), running: false, stop: false, thread: None });

fn ensure_handler_thread(h: &mut HandlerThread) -> Result<()> {
    if h.running {
        return Ok(());
    }
    h.stop = false;
    let t = std::thread::Builder::new()
        .name("vhsa-async".into())
        .spawn(handler_loop)
        .map_err(|e| Error::OutOfResources(format!("cannot start the async-handler thread: {e}")))?;
    h.thread = Some(t);
    h.running = true;
    Ok(())
}

fn handler_loop() {
    loop {
        let seen = epoch();
        let (ready, functions) = {
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
            (ready, std::mem::take(&mut h.functions))
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
            let keep = std::panic::catch_unwind(|| unsafe { handler(v, arg as *mut c_void) }).unwrap_or(false);
            if keep && lookup(w.signal).is_some() {
                HANDLERS.lock().watches.push(w);
            } else if let Some(s) = lookup(w.signal) {
                s.watchers.fetch_sub(1, Ordering::SeqCst);
            }
        }
        wait_epoch(seen, Duration::from_millis(50));
    }
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

unsafe extern "C" fn hsa_amd_signal_async_handler_impl(
    signal: hsa_signal_t,
    cond: hsa_signal_condition_t,
    value: hsa_signal_value_t,
    handler: Option<AsyncHandler>,
    arg: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_signal_async_handler", || {
        ensure_open()?;
        let handler = handler.ok_or(Error::InvalidArgument("handler is NULL"))?;
        if cond > HSA_SIGNAL_CONDITION_GTE {
            return Err(Error::InvalidArgument("unknown signal condition"));
        }
        let s = get(signal.handle)?;
        let mut h = HANDLERS.lock();
        ensure_handler_thread(&mut h)?;
        s.watchers.fetch_add(1, Ordering::SeqCst);
        h.watches.push(Watch { signal: signal.handle, cond, value, handler, arg: arg as usize });
        drop(h);
        bump_epoch();
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_async_function_impl(function: Option<AsyncFunction>, arg: *mut c_void) -> hsa_status_t {
    status_call("hsa_amd_async_function", || {
        ensure_open()?;
        let f = function.ok_or(Error::InvalidArgument("callback is NULL"))?;
        let mut h = HANDLERS.lock();
        ensure_handler_thread(&mut h)?;
        h.functions.push((f, arg as usize));
        drop(h);
        bump_epoch();
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_signal_value_pointer_impl(
    signal: hsa_signal_t,
    value_ptr: *mut *mut hsa_signal_value_t,
) -> hsa_status_t {
    status_call("hsa_amd_signal_value_pointer", || {
        ensure_open()?;
        let s = get(signal.handle)?;
        write_out(value_ptr, s.value.as_ptr(), "value_ptr is NULL")
    })
}

/// Fills this module's slots.
pub(crate) fn install(core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    core.hsa_signal_create_fn = Some(hsa_signal_create_impl);
    core.hsa_signal_destroy_fn = Some(hsa_signal_destroy_impl);
    core.hsa_signal_load_relaxed_fn = Some(hsa_signal_load_relaxed_impl);
    core.hsa_signal_load_scacquire_fn = Some(hsa_signal_load_scacquire_impl);
    core.hsa_signal_store_relaxed_fn = Some(hsa_signal_store_relaxed_impl);
    core.hsa_signal_store_screlease_fn = Some(hsa_signal_store_screlease_impl);
    core.hsa_signal_silent_store_relaxed_fn = Some(hsa_signal_silent_store_relaxed_impl);
    core.hsa_signal_silent_store_screlease_fn = Some(hsa_signal_silent_store_screlease_impl);
    core.hsa_signal_wait_relaxed_fn = Some(hsa_signal_wait_relaxed_impl);
    core.hsa_signal_wait_scacquire_fn = Some(hsa_signal_wait_scacquire_impl);
    core.hsa_signal_and_relaxed_fn = Some(hsa_signal_and_relaxed_impl);
    core.hsa_signal_and_scacquire_fn = Some(hsa_signal_and_scacquire_impl);
    core.hsa_signal_and_screlease_fn = Some(hsa_signal_and_screlease_impl);
    core.hsa_signal_and_scacq_screl_fn = Some(hsa_signal_and_scacq_screl_impl);
    core.hsa_signal_or_relaxed_fn = Some(hsa_signal_or_relaxed_impl);
    core.hsa_signal_or_scacquire_fn = Some(hsa_signal_or_scacquire_impl);
    core.hsa_signal_or_screlease_fn = Some(hsa_signal_or_screlease_impl);
    core.hsa_signal_or_scacq_screl_fn = Some(hsa_signal_or_scacq_screl_impl);
    core.hsa_signal_xor_relaxed_fn = Some(hsa_signal_xor_relaxed_impl);
    core.hsa_signal_xor_scacquire_fn = Some(hsa_signal_xor_scacquire_impl);
    core.hsa_signal_xor_screlease_fn = Some(hsa_signal_xor_screlease_impl);
    core.hsa_signal_xor_scacq_screl_fn = Some(hsa_signal_xor_scacq_screl_impl);
    core.hsa_signal_add_relaxed_fn = Some(hsa_signal_add_relaxed_impl);
    core.hsa_signal_add_scacquire_fn = Some(hsa_signal_add_scacquire_impl);
    core.hsa_signal_add_screlease_fn = Some(hsa_signal_add_screlease_impl);
    core.hsa_signal_add_scacq_screl_fn = Some(hsa_signal_add_scacq_screl_impl);
    core.hsa_signal_subtract_relaxed_fn = Some(hsa_signal_subtract_relaxed_impl);
    core.hsa_signal_subtract_scacquire_fn = Some(hsa_signal_subtract_scacquire_impl);
    core.hsa_signal_subtract_screlease_fn = Some(hsa_signal_subtract_screlease_impl);
    core.hsa_signal_subtract_scacq_screl_fn = Some(hsa_signal_subtract_scacq_screl_impl);
    core.hsa_signal_exchange_relaxed_fn = Some(hsa_signal_exchange_relaxed_impl);
    core.hsa_signal_exchange_scacquire_fn = Some(hsa_signal_exchange_scacquire_impl);
    core.hsa_signal_exchange_screlease_fn = Some(hsa_signal_exchange_screlease_impl);
    core.hsa_signal_exchange_scacq_screl_fn = Some(hsa_signal_exchange_scacq_screl_impl);
    core.hsa_signal_cas_relaxed_fn = Some(hsa_signal_cas_relaxed_impl);
    core.hsa_signal_cas_scacquire_fn = Some(hsa_signal_cas_scacquire_impl);
    core.hsa_signal_cas_screlease_fn = Some(hsa_signal_cas_screlease_impl);
    core.hsa_signal_cas_scacq_screl_fn = Some(hsa_signal_cas_scacq_screl_impl);
    core.hsa_signal_group_create_fn = Some(hsa_signal_group_create_impl);
    core.hsa_signal_group_destroy_fn = Some(hsa_signal_group_destroy_impl);
    core.hsa_signal_group_wait_any_scacquire_fn = Some(hsa_signal_group_wait_any_impl);
    core.hsa_signal_group_wait_any_relaxed_fn = Some(hsa_signal_group_wait_any_impl);
    amd.hsa_amd_signal_create_fn = Some(hsa_amd_signal_create_impl);
    amd.hsa_amd_signal_async_handler_fn = Some(hsa_amd_signal_async_handler_impl);
    amd.hsa_amd_async_function_fn = Some(hsa_amd_async_function_impl);
    amd.hsa_amd_signal_wait_any_fn = Some(hsa_amd_signal_wait_any_impl);
    amd.hsa_amd_signal_value_pointer_fn = Some(hsa_amd_signal_value_pointer_impl);
}
