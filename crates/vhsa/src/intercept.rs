//! Intercept queues (`hsa_amd_queue_intercept_create`/`register`).
//!
//! The application gets a proxy queue: a ring with its own doorbell and no packet processor.
//! Behind it is a hardware queue created internally (not through the API table). Ringing the
//! proxy doorbell runs, synchronously on the ringing thread, the handler stack for each new
//! packet: the top (last registered) handler is called once per packet with `pkt_count == 1`
//! and `user_pkt_index` = the application's write index. Its `writer` passes packets to the next
//! handler down; the bottom writes them to the hardware ring, all or none. A handler may call
//! the writer several times or not at all (the packet is dropped). After the top handler
//! returns, the proxy slot's header is set INVALID. Intercept-marker vendor packets (format
//! 0xFE) never reach the hardware ring: their callback runs instead, with the hardware queue
//! and the index of the packet that follows them.

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::queue::{INVALID_HEADER, PACKET_BYTES, Queue, QueueSpec, packet_type};
use hsa_abi::ffi::*;
use hsa_abi::modern::{HSA_AMD_PACKET_TYPE_INTERCEPT_MARKER, hsa_queue_error_callback};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An intercept handler (`hsa_amd_queue_intercept_handler` without the Option).
pub(crate) type Handler = unsafe extern "C" fn(
    *const c_void,
    u64,
    u64,
    *mut c_void,
    hsa_abi::modern::hsa_amd_queue_intercept_packet_writer,
);

/// Intercept state of a proxy queue.
pub(crate) struct Intercept {
    /// The hardware queue behind the proxy.
    pub(crate) hardware: *mut hsa_queue_t,
    handlers: RwLock<Vec<(Handler, usize)>>,
    /// Held while a doorbell hook reads the proxy ring and runs the handlers.
    submit: Mutex<()>,
    /// Set when the proxy is destroyed: a hook still running stops touching its ring.
    closed: AtomicBool,
}

// SAFETY: `hardware` is a queue of this runtime, usable from any thread; the rest is locked.
unsafe impl Send for Intercept {}
// SAFETY: as above.
unsafe impl Sync for Intercept {}

/// Intercept state by proxy queue address.
static PROXIES: Mutex<Option<HashMap<usize, Arc<Intercept>>>> = Mutex::new(None);

/// The intercept state of a proxy queue, `None` for any other queue.
pub(crate) fn of(proxy: *const hsa_queue_t) -> Option<Arc<Intercept>> {
    PROXIES.lock().as_ref()?.get(&(proxy as usize)).cloned()
}

/// Registers a handler on a proxy queue; the last registered runs first.
pub(crate) fn register(
    proxy: *mut hsa_queue_t,
    handler: Handler,
    user_data: *mut c_void,
) -> Result<()> {
    let ic = of(proxy).ok_or(Error::InvalidQueue(proxy as usize))?;
    ic.handlers.write().push((handler, user_data as usize));
    Ok(())
}

/// Destroys a proxy queue and its hardware queue. A doorbell hook running this proxy's
/// handlers on another thread (the thread that rang it, whose handler may still be writing
/// when the packet it passed down completes) is waited for: the ring is freed only after it let
/// go of it. A hook on this thread (a handler destroying its own queue) stops touching the ring
/// when the handler returns.
pub(crate) fn destroy(proxy: *mut hsa_queue_t) -> Result<()> {
    let ic = PROXIES
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&(proxy as usize)))
        .ok_or(Error::InvalidQueue(proxy as usize))?;
    ic.closed.store(true, Ordering::SeqCst);
    let proxy_queue = proxy.cast_const().cast::<Queue>();
    let in_own_handler = CHAIN.with(|c| c.borrow().iter().any(|f| f.proxy == proxy_queue));
    let _hook_done = (!in_own_handler).then(|| ic.submit.lock());
    let r = crate::queue::destroy(proxy);
    let _ = crate::queue::destroy(ic.hardware);
    r
}

/// Destroys every proxy queue (last `hsa_shut_down`, before the other queues).
pub(crate) fn destroy_all() {
    let keys: Vec<usize> = PROXIES
        .lock()
        .as_ref()
        .map(|m| m.keys().copied().collect())
        .unwrap_or_default();
    for k in keys {
        let _ = destroy(k as *mut hsa_queue_t);
    }
}

/// One level of an in-progress handler chain on this thread.
struct Frame {
    proxy: *const Queue,
    level: usize,
    handlers: Vec<(Handler, usize)>,
    user_pkt_index: u64,
}

thread_local! {
    static CHAIN: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Store hook of a proxy doorbell: runs the handlers for every new packet.
fn doorbell_rung(queue: *mut c_void) {
    let proxy_ptr = queue.cast_const().cast::<Queue>();
    // A handler that rings the same proxy again: the outer loop picks the packets up.
    if CHAIN.with(|c| c.borrow().iter().any(|f| f.proxy == proxy_ptr)) {
        return;
    }
    let Some(ic) = of(proxy_ptr.cast()) else {
        return;
    };
    let _g = ic.submit.lock();
    loop {
        if ic.closed.load(Ordering::SeqCst) {
            return;
        }
        // SAFETY: the proxy is not closed, and `destroy` frees it only after taking `submit`
        // (held here) or, from a handler of this proxy on this thread, after `closed` is set,
        // which is checked again before the ring is touched once the handler returns.
        let proxy = unsafe { &*proxy_ptr };
        let idx = proxy.read_index().load(Ordering::Acquire);
        if idx >= proxy.write_index().load(Ordering::Acquire) {
            break;
        }
        let slot = proxy.slot(idx);
        let header = Queue::header(slot).load(Ordering::Acquire);
        if packet_type(header) == HSA_PACKET_TYPE_INVALID {
            break;
        }
        let mut packet = [0u8; PACKET_BYTES];
        // SAFETY: a 64-byte slot of the proxy ring.
        unsafe { std::ptr::copy_nonoverlapping(slot, packet.as_mut_ptr(), PACKET_BYTES) };
        let handlers = ic.handlers.read().clone();
        match handlers.last().copied() {
            None => write_hardware(ic.hardware, packet.as_ptr().cast(), 1),
            Some((top, data)) => {
                CHAIN.with(|c| {
                    c.borrow_mut().push(Frame {
                        proxy: proxy_ptr,
                        level: handlers.len() - 1,
                        handlers: handlers.clone(),
                        user_pkt_index: idx,
                    })
                });
                // SAFETY: the registered handler with its own data; the packet outlives the call.
                let _ = std::panic::catch_unwind(|| unsafe {
                    top(
                        packet.as_ptr().cast(),
                        1,
                        idx,
                        data as *mut c_void,
                        Some(writer),
                    )
                });
                CHAIN.with(|c| c.borrow_mut().pop());
            }
        }
        if ic.closed.load(Ordering::SeqCst) {
            // The handler destroyed its own queue: the ring is gone.
            return;
        }
        Queue::header(slot).store(INVALID_HEADER, Ordering::Release);
        proxy.read_index().store(idx + 1, Ordering::Release);
    }
}

/// The writer handed to handlers: passes packets one level down.
unsafe extern "C" fn writer(pkts: *const c_void, count: u64) {
    let _ = std::panic::catch_unwind(|| {
        let Some((proxy, level, handlers, index)) = CHAIN.with(|c| {
            c.borrow()
                .last()
                .map(|f| (f.proxy, f.level, f.handlers.clone(), f.user_pkt_index))
        }) else {
            tracing::warn!(
                "intercept writer called outside of an intercept handler; packets dropped"
            );
            return;
        };
        if pkts.is_null() || count == 0 {
            return;
        }
        if level == 0 {
            // SAFETY: frames only exist for live proxies.
            if let Some(ic) = of(proxy.cast()) {
                write_hardware(ic.hardware, pkts, count);
            }
            return;
        }
        let (next, data) = handlers[level - 1];
        CHAIN.with(|c| {
            c.borrow_mut().push(Frame {
                proxy,
                level: level - 1,
                handlers: handlers.clone(),
                user_pkt_index: index,
            })
        });
        // SAFETY: the registered handler with its own data and the caller's packets.
        let _ = std::panic::catch_unwind(|| unsafe {
            next(pkts, count, index, data as *mut c_void, Some(writer))
        });
        CHAIN.with(|c| c.borrow_mut().pop());
    });
}

/// Callback of an intercept-marker vendor packet: (marker packet, hardware queue, index at which
/// the next packet lands in the hardware queue).
type MarkerCallback = unsafe extern "C" fn(*const c_void, *mut hsa_queue_t, u64);

/// Writes `count` packets to a hardware queue and rings its doorbell; all or none.
///
/// Intercept markers (vendor packets of format 0xFE: callback pointer at byte 8) are not
/// written: their callback runs just before the packet that follows them is written.
fn write_hardware(hw: *mut hsa_queue_t, pkts: *const c_void, count: u64) {
    let Ok(q) = crate::queue::lookup(hw) else {
        return;
    };
    let size = u64::from(q.hsa.size);
    // (packet, markers that precede it); markers after the last packet refer to the next index.
    let mut list: Vec<*const u8> = Vec::with_capacity(count as usize);
    let mut markers: Vec<(usize, *const u8)> = Vec::new();
    for i in 0..count as usize {
        // SAFETY: the writer's caller passes `count` packets.
        let p = unsafe { pkts.cast::<u8>().add(i * PACKET_BYTES) };
        // SAFETY: reading the header and the AMD format byte of a packet.
        let (h, fmt) = unsafe { (p.cast::<u16>().read_unaligned(), p.add(2).read()) };
        if packet_type(h) == HSA_PACKET_TYPE_VENDOR_SPECIFIC
            && fmt == HSA_AMD_PACKET_TYPE_INTERCEPT_MARKER
        {
            markers.push((list.len(), p));
        } else {
            list.push(p);
        }
    }
    if list.len() as u64 > size {
        tracing::warn!(
            "intercept writer: {} packets do not fit a {size}-packet queue; none written",
            list.len()
        );
        return;
    }
    let n = list.len() as u64;
    let base = if n > 0 {
        q.write_index().fetch_add(n, Ordering::SeqCst)
    } else {
        q.write_index().load(Ordering::SeqCst)
    };
    let run_markers = |position: usize| {
        for (_, m) in markers.iter().filter(|(at, _)| *at == position) {
            // SAFETY: the callback pointer sits at byte 8 of the marker packet.
            let cb = unsafe { m.add(8).cast::<Option<MarkerCallback>>().read_unaligned() };
            if let Some(cb) = cb {
                // SAFETY: the tool's marker callback with the marker, the hardware queue and
                // the index of the packet that follows.
                unsafe { cb(m.cast(), hw, base + position as u64) };
            }
        }
    };
    if n == 0 {
        run_markers(0);
        return;
    }
    // Wait for room (the processor frees slots as it goes), unless the queue went into error:
    // its processor consumes nothing more, and a destroy of the queue waits for this hook.
    while base + n > q.read_index().load(Ordering::Acquire) + size {
        if q.inactive.load(Ordering::SeqCst) {
            tracing::error!(
                "intercept writer: queue {} is in error and its ring is full; {n} packets dropped",
                q.hsa.id
            );
            return;
        }
        std::thread::yield_now();
    }
    for (i, p) in list.iter().enumerate() {
        run_markers(i);
        let slot = q.slot(base + i as u64);
        // SAFETY: slot and packet are 64 bytes; the header word is written last, with release.
        unsafe { std::ptr::copy_nonoverlapping(p.add(4), slot.add(4), PACKET_BYTES - 4) };
        // SAFETY: header+setup word of the packet.
        let word = unsafe { p.cast::<u32>().read_unaligned() };
        // SAFETY: the slot's first four bytes, 4-byte aligned.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(slot.cast::<u32>()) }
            .store(word, Ordering::Release);
    }
    run_markers(list.len());
    if let Some(d) = crate::signal::lookup(q.hsa.doorbell_signal.handle) {
        d.store((base + n - 1) as i64);
    }
}

/// Creates an intercept queue: a hardware queue running dispatches on `executor`, and the
/// proxy queue in front of it that the application sees.
pub(crate) fn create(
    agent: u64,
    size: u32,
    type_: u32,
    callback: hsa_queue_error_callback,
    data: *mut c_void,
    executor: Arc<dyn Executor>,
) -> Result<*mut hsa_queue_t> {
    let hardware = crate::queue::create(QueueSpec {
        agent,
        size,
        queue_type: type_,
        error_callback: callback,
        error_data: data,
        executor: Some(executor),
    })?;
    let proxy = crate::queue::create(QueueSpec {
        agent,
        size,
        queue_type: type_,
        error_callback: callback,
        error_data: data,
        executor: None,
    });
    let proxy = match proxy {
        Ok(p) => p,
        Err(e) => {
            let _ = crate::queue::destroy(hardware);
            return Err(e);
        }
    };
    let ic = Arc::new(Intercept {
        hardware,
        handlers: RwLock::new(Vec::new()),
        submit: Mutex::new(()),
        closed: AtomicBool::new(false),
    });
    PROXIES
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(proxy as usize, ic);
    let q = crate::queue::lookup(proxy)?;
    if let Some(d) = q.doorbell() {
        d.set_store_hook(Some((doorbell_rung, proxy.cast())));
    }
    Ok(proxy)
}
