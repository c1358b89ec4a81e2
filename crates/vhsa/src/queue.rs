//! User-mode queues: AQL rings in host memory, doorbell signals, and one packet-processor thread
//! per hardware queue. Kernel dispatches go to the queue's [`Executor`](crate::executor).
//!
//! The processor is vgpu's shared AQL processor ([`vgpu::aql`], the same code vkfd's command
//! processors run beneath the real ROCR): it consumes packets in order, waiting while the slot at
//! the read index is INVALID (woken by the doorbell), executes the packet, sets the slot INVALID,
//! advances the read index and decrements its completion signal. This module supplies
//! vhsa's side ([`vgpu::aql::QueueBackend`]): vhsa's signal objects, the doorbell wait, the
//! executor. A bad packet suspends the queue, as on hardware, and is reported through the
//! queue's error callback with the status the real runtime maps the packet processor's error to.

use crate::error::{Error, Result};
use crate::executor::{AgentDescription, DispatchFault, DispatchRequest, Executor};
use crate::signal::Signal;
use crate::topology::{AgentKind, QUEUE_MAX_SIZE as MAX_SIZE, QUEUE_MIN_SIZE as MIN_SIZE};
use hsa_abi::ffi::*;
use hsa_abi::modern::hsa_queue_error_callback;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use vgpu::aql::{DispatchError, QueueBackend};
pub(crate) use vgpu::aql::{INVALID_HEADER, PACKET_BYTES, packet_type};

/// An index on its own cache line.
#[repr(C, align(64))]
struct PaddedIndex(AtomicU64);

/// A queue. `hsa` comes first: the `hsa_queue_t*` handed to C points at it.
#[repr(C)]
pub(crate) struct Queue {
    pub(crate) hsa: hsa_queue_t,
    write_index: PaddedIndex,
    read_index: PaddedIndex,
    pub(crate) agent: u64,
    pub(crate) profiling: AtomicBool,
    pub(crate) inactive: AtomicBool,
    stop: AtomicBool,
    error_callback: hsa_queue_error_callback,
    error_data: usize,
    owns_doorbell: bool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Runs the kernel dispatches (None for proxies without a packet processor).
    executor: Option<Arc<dyn Executor>>,
}

// SAFETY: the raw pointers in `hsa` point to memory owned by the queue; every shared field is
// atomic or locked.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

impl Queue {
    /// The slot for `index`.
    #[inline]
    pub(crate) fn slot(&self, index: u64) -> *mut u8 {
        let i = (index % u64::from(self.hsa.size)) as usize;
        // SAFETY: `base_address` holds `size` packets.
        unsafe { self.hsa.base_address.cast::<u8>().add(i * PACKET_BYTES) }
    }

    /// The header word of a slot.
    #[inline]
    pub(crate) fn header(slot: *mut u8) -> &'static AtomicU16 {
        // SAFETY: slots are 64-byte aligned and live as long as the queue; headers are accessed
        // atomically by everyone.
        unsafe { AtomicU16::from_ptr(slot.cast::<u16>()) }
    }

    pub(crate) fn write_index(&self) -> &AtomicU64 {
        &self.write_index.0
    }

    pub(crate) fn read_index(&self) -> &AtomicU64 {
        &self.read_index.0
    }

    pub(crate) fn as_hsa(&self) -> *mut hsa_queue_t {
        (&raw const self.hsa).cast_mut()
    }

    pub(crate) fn doorbell(&self) -> Option<&'static Signal> {
        crate::signal::lookup(self.hsa.doorbell_signal.handle)
    }

    /// A packet error: the queue is suspended (no later packet runs, as on hardware), then the
    /// error callback is told.
    fn report(&self, status: hsa_status_t) {
        self.inactive.store(true, Ordering::SeqCst);
        if let Some(cb) = self.error_callback {
            // SAFETY: the application's callback with its own data.
            unsafe { cb(status, self.as_hsa(), self.error_data as *mut c_void) };
        } else {
            tracing::warn!(
                "queue {}: packet error {status:#x} and no error callback",
                self.hsa.id
            );
        }
    }
}

struct QueuePtr(*const Queue);
// SAFETY: the queue outlives its processor thread: destroy joins it before freeing, or, called
// on that thread (from its error callback), leaves the queue in `RETIRED` for the thread to free
// when its loop ends.
unsafe impl Send for QueuePtr {}

thread_local! {
    /// A queue destroyed from its own processor thread, freed when that thread's loop ends.
    static RETIRED: std::cell::RefCell<Option<Box<Queue>>> = const { std::cell::RefCell::new(None) };
}

static QUEUES: Mutex<Option<HashMap<usize, Box<Queue>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn allocate_ring(size: u32) -> Result<*mut c_void> {
    let layout = std::alloc::Layout::from_size_align(size as usize * PACKET_BYTES, 4096)
        .map_err(|_| Error::InvalidArgument("queue size"))?;
    // SAFETY: non-zero size layout.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(Error::OutOfResources(
            "cannot allocate the queue ring".into(),
        ));
    }
    for i in 0..size as usize {
        // SAFETY: inside the ring just allocated.
        unsafe { p.add(i * PACKET_BYTES).cast::<u16>().write(INVALID_HEADER) };
    }
    Ok(p.cast())
}

fn free_ring(q: &Queue) {
    let layout =
        std::alloc::Layout::from_size_align(q.hsa.size as usize * PACKET_BYTES, 4096).unwrap();
    // SAFETY: allocated by `allocate_ring` with this layout.
    unsafe { std::alloc::dealloc(q.hsa.base_address.cast(), layout) };
}

/// How a queue is created.
pub(crate) struct QueueSpec {
    pub(crate) agent: u64,
    pub(crate) size: u32,
    pub(crate) queue_type: u32,
    pub(crate) error_callback: hsa_queue_error_callback,
    pub(crate) error_data: *mut c_void,
    /// Runs the dispatches; `None` makes a ring without a packet processor (intercept proxies).
    pub(crate) executor: Option<Arc<dyn Executor>>,
}

/// Checks queue-creation arguments in the real runtime's order and with its statuses: argument
/// errors first, then the agent; the CPU has no packet processor (`HSA_STATUS_ERROR`); a size
/// above QUEUE_MAX_SIZE is out of resources, below QUEUE_MIN_SIZE an invalid argument.
pub(crate) fn validate(
    agent: u64,
    size: u32,
    queue_type: u32,
    private_segment_size: u32,
) -> Result<()> {
    if size == 0 || !size.is_power_of_two() {
        return Err(Error::InvalidArgument("queue size must be a power of two"));
    }
    if queue_type > HSA_QUEUE_TYPE_COOPERATIVE {
        return Err(Error::InvalidArgument("unknown queue type"));
    }
    let a = crate::topology::agent(agent)?;
    if a.kind != AgentKind::Gpu {
        return Err(Error::Failed(format!(
            "agent {agent:#x} is a CPU and has no packet processor: create queues on a GPU agent"
        )));
    }
    if size > MAX_SIZE {
        return Err(Error::OutOfResources(format!(
            "queue size {size} exceeds the agent's QUEUE_MAX_SIZE {MAX_SIZE}"
        )));
    }
    if size < MIN_SIZE {
        return Err(Error::InvalidArgument(
            "queue size is below the agent's QUEUE_MIN_SIZE",
        ));
    }
    if private_segment_size != u32::MAX && private_segment_size > MAX_PRIVATE_SEGMENT {
        return Err(Error::OutOfResources(format!(
            "private segment size {private_segment_size} exceeds {MAX_PRIVATE_SEGMENT} bytes per work-item"
        )));
    }
    Ok(())
}

/// Largest private segment (scratch) size per work-item a queue accepts (`u32::MAX` means the
/// agent's default).
const MAX_PRIVATE_SEGMENT: u32 = 262_128;

/// Creates a queue (not through the API table) and returns its `hsa_queue_t*`.
pub(crate) fn create(spec: QueueSpec) -> Result<*mut hsa_queue_t> {
    validate(spec.agent, spec.size, spec.queue_type, 0)?;
    let ring = allocate_ring(spec.size)?;
    let doorbell = match crate::signal::create(-1) {
        Ok(d) => d,
        Err(e) => {
            let layout =
                std::alloc::Layout::from_size_align(spec.size as usize * PACKET_BYTES, 4096)
                    .unwrap();
            // SAFETY: just allocated with this layout.
            unsafe { std::alloc::dealloc(ring.cast(), layout) };
            return Err(e);
        }
    };
    let q = Box::new(Queue {
        hsa: hsa_queue_t {
            type_: spec.queue_type,
            features: HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
            base_address: ring,
            doorbell_signal: doorbell,
            size: spec.size,
            reserved1: 0,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        },
        write_index: PaddedIndex(AtomicU64::new(0)),
        read_index: PaddedIndex(AtomicU64::new(0)),
        agent: spec.agent,
        profiling: AtomicBool::new(false),
        inactive: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        error_callback: spec.error_callback,
        error_data: spec.error_data as usize,
        owns_doorbell: true,
        thread: Mutex::new(None),
        executor: spec.executor,
    });
    let ptr: *const Queue = &*q;
    if q.executor.is_some() {
        let qp = QueuePtr(ptr);
        let t = std::thread::Builder::new()
            .name(format!("vhsa-queue-{}", q.hsa.id))
            .spawn(move || {
                let qp = qp;
                // SAFETY: see QueuePtr.
                process(unsafe { &*qp.0 });
                if let Some(q) = RETIRED.with(|r| r.borrow_mut().take()) {
                    free_ring(&q);
                }
            })
            .map_err(|e| Error::OutOfResources(format!("cannot start a packet processor: {e}")))?;
        *q.thread.lock() = Some(t);
    }
    QUEUES
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(ptr as usize, q);
    Ok(ptr.cast_mut().cast())
}

/// The queue behind an `hsa_queue_t*` created by this runtime.
pub(crate) fn lookup(q: *const hsa_queue_t) -> Result<&'static Queue> {
    let map = QUEUES.lock();
    match map.as_ref().and_then(|m| m.get(&(q as usize))) {
        // SAFETY: boxed queues stay at their address until `destroy` removes them.
        Some(b) => Ok(unsafe { &*(&**b as *const Queue) }),
        None => Err(Error::InvalidQueue(q as usize)),
    }
}

/// Stops and frees a queue.
pub(crate) fn destroy(q: *const hsa_queue_t) -> Result<()> {
    let b = QUEUES
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&(q as usize)))
        .ok_or(Error::InvalidQueue(q as usize))?;
    b.stop.store(true, Ordering::SeqCst);
    if let Some(d) = b.doorbell() {
        d.set_store_hook(None);
        d.store(d.load());
    }
    let thread = b.thread.lock().take();
    let own_processor = thread
        .as_ref()
        .is_some_and(|t| t.thread().id() == std::thread::current().id());
    if let Some(t) = thread.filter(|_| !own_processor) {
        let _ = t.join();
    }
    if b.owns_doorbell {
        let _ = crate::signal::destroy(b.hsa.doorbell_signal.handle);
    }
    if own_processor {
        // Destroyed from its own processor (an error callback): the loop still runs on this
        // queue; it ends at the stop flag, and the thread frees the queue then.
        RETIRED.with(|r| *r.borrow_mut() = Some(b));
    } else {
        free_ring(&b);
    }
    Ok(())
}

/// Destroys every queue (last `hsa_shut_down`, after the intercept proxies).
pub(crate) fn destroy_all() {
    let keys: Vec<usize> = QUEUES
        .lock()
        .as_ref()
        .map(|m| m.keys().copied().collect())
        .unwrap_or_default();
    for k in keys {
        let _ = destroy(k as *const hsa_queue_t);
    }
}

// ---- packet processor ------------------------------------------------------------------------

/// A queue while its processor runs: the queue and the agent its executor sees.
struct Processor<'a> {
    q: &'a Queue,
    executor: Arc<dyn Executor>,
    agent: AgentDescription<'a>,
}

fn process(q: &Queue) {
    let Some(executor) = q.executor.clone() else {
        return;
    };
    let agent = crate::topology::agent(q.agent).ok();
    let p = Processor {
        q,
        executor,
        agent: AgentDescription {
            handle: q.agent,
            target: agent.map_or("", |a| a.name.as_str()),
            isa_name: agent.and_then(|a| a.isa_name()).unwrap_or(""),
            wavefront_size: agent.map_or(64, |a| a.wavefront_size()),
        },
    };
    vgpu::aql::run(&p);
}

impl QueueBackend for Processor<'_> {
    fn ring(&self) -> (*mut u8, u32) {
        (self.q.hsa.base_address.cast(), self.q.hsa.size)
    }

    fn read_index(&self) -> &AtomicU64 {
        self.q.read_index()
    }

    fn stopping(&self) -> bool {
        self.q.stop.load(Ordering::Acquire)
    }

    fn suspended(&self) -> bool {
        self.q.inactive.load(Ordering::Relaxed)
    }

    fn wait_for_packet(&self, slot: *mut u8, _idle: u32) {
        let q = self.q;
        let ready = || {
            q.stop.load(Ordering::Acquire)
                || (packet_type(Queue::header(slot).load(Ordering::Acquire))
                    != HSA_PACKET_TYPE_INVALID
                    && !q.inactive.load(Ordering::Relaxed))
        };
        match q.doorbell() {
            Some(d) => {
                d.wait(|_| ready(), None);
            }
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }

    fn profiling(&self) -> bool {
        self.q.profiling.load(Ordering::Relaxed)
    }

    fn now(&self) -> u64 {
        crate::topology::now_ns()
    }

    fn signal_value(&self, handle: u64) -> Option<i64> {
        crate::signal::lookup(handle).map(Signal::load)
    }

    fn wait_signal(&self, handle: u64, deadline: Instant) {
        if let Some(s) = crate::signal::lookup(handle) {
            let seen = s.load();
            s.wait(|v| v != seen, Some(deadline));
        }
    }

    fn complete(&self, handle: u64, times: Option<(u64, u64)>) {
        match crate::signal::lookup(handle) {
            Some(s) => {
                if let Some((start, end)) = times {
                    s.set_times(start, end);
                }
                s.subtract(1);
            }
            None => tracing::warn!(
                "queue {}: packet completion signal {handle:#x} is not a live signal",
                self.q.hsa.id
            ),
        }
    }

    fn dispatch(
        &self,
        slot: *mut u8,
        packet: &hsa_kernel_dispatch_packet_t,
    ) -> std::result::Result<(), DispatchError> {
        let q = self.q;
        let object = packet.kernel_object;
        let request = DispatchRequest {
            packet,
            kernel_object: object,
            kernarg_address: packet.kernarg_address as u64,
            agent: self.agent,
            queue_id: q.hsa.id,
            packet_address: slot as u64,
            queue_address: (&raw const q.hsa) as u64,
            ring: (
                q.hsa.base_address as u64,
                u64::from(q.hsa.size) * PACKET_BYTES as u64,
            ),
            abandon: &q.stop,
        };
        let outcome = self
            .executor
            .execute(&request, &crate::memory::RuntimeMemory);
        crate::stats::DISPATCHES.fetch_add(1, Ordering::Relaxed);
        match outcome {
            Ok(()) => Ok(()),
            Err(DispatchFault::NoImplementation) => Err(DispatchError::Failed(
                HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                format!(
                    "kernel object {object:#x} is neither a registered native kernel nor a kernel of a loaded code object; the dispatch ends with a queue error (load the code object into an executable, or register a native kernel)"
                ),
            )),
            Err(DispatchFault::Fault { message, .. }) if q.stop.load(Ordering::Acquire) => {
                // The queue is being destroyed: the executor gave up; nobody waits for it.
                tracing::debug!(
                    "queue {}: kernel object {object:#x} abandoned: {message}",
                    q.hsa.id
                );
                Err(DispatchError::Abandoned)
            }
            Err(DispatchFault::Fault { status, message }) => Err(DispatchError::Failed(
                status,
                format!("kernel object {object:#x} faulted: {message}"),
            )),
        }
    }

    fn vendor_packet(&self, _slot: *mut u8, format: u8) -> std::result::Result<(), DispatchError> {
        let message = if format == vgpu::aql::AMD_FORMAT_PM4_IB {
            "AMD vendor packet format 1 (PM4 indirect buffer) holds no counter payload of this runtime: vhsa executes no PM4 commands, such as the register writes of a real aqlprofile's counter packets (build counter packets with the libhsa-amd-aqlprofile64.so beside vhsa, or with vhsa's aqlprofile extension table)".to_string()
        } else {
            format!("AMD vendor packet format {format} is not processed")
        };
        Err(DispatchError::Failed(
            HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
            message,
        ))
    }

    fn counter_file(&self) -> Option<&vgpu::pmc::CounterFile> {
        crate::topology::agent(self.q.agent)
            .ok()
            .and_then(|a| a.counters.as_ref())
    }

    fn counter_packet_refused(&self, message: &str) {
        tracing::warn!("queue {}: counter packet refused: {message}", self.q.hsa.id);
    }

    fn host_bytes(&self, addr: u64, len: usize) -> Option<*mut u8> {
        crate::memory::host_range(addr as usize, len).map(|h| h as *mut u8)
    }

    fn report(&self, status: hsa_status_t, message: &str) {
        tracing::error!("queue {}: {message}", self.q.hsa.id);
        self.q.report(status);
    }

    fn processed(&self, packet_type: u32) {
        if matches!(
            packet_type,
            HSA_PACKET_TYPE_BARRIER_AND | HSA_PACKET_TYPE_BARRIER_OR
        ) {
            crate::stats::BARRIERS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::{DeviceMemory, MemoryFault};
    use std::sync::atomic::AtomicU32;

    /// An executor of two kernels: object 1 adds its second kernel argument to the `u32` its
    /// first argument points at, through `DeviceMemory`; object 2 faults.
    struct Toy {
        seen_isa: Mutex<String>,
    }

    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    impl Executor for Toy {
        fn execute(
            &self,
            d: &DispatchRequest<'_>,
            m: &dyn DeviceMemory,
        ) -> std::result::Result<(), DispatchFault> {
            *self.seen_isa.lock() = d.agent.isa_name.to_owned();
            let fault = |e: MemoryFault| DispatchFault::Fault {
                status: HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                message: format!(
                    "{} bytes at {:#x} are not memory of the runtime",
                    e.len, e.address
                ),
            };
            match d.kernel_object {
                1 => {
                    let mut args = [0u8; 16];
                    m.read(d.kernarg_address, &mut args).map_err(fault)?;
                    let (target, add) = (u64_at(&args, 0), u64_at(&args, 8) as u32);
                    let mut v = [0u8; 4];
                    m.read(target, &mut v).map_err(fault)?;
                    m.write(target, &(u32::from_le_bytes(v) + add).to_le_bytes())
                        .map_err(fault)
                }
                2 => {
                    let mut b = [0u8; 4];
                    m.read(8, &mut b).map_err(fault)
                }
                _ => Err(DispatchFault::NoImplementation),
            }
        }
    }

    static ERROR_STATUS: AtomicU32 = AtomicU32::new(0);

    unsafe extern "C" fn on_error(status: hsa_status_t, _q: *mut hsa_queue_t, _data: *mut c_void) {
        ERROR_STATUS.store(status, Ordering::SeqCst);
    }

    fn submit(q: &Queue, object: u64, kernarg: u64, done: hsa_signal_t) {
        let idx = q.write_index().fetch_add(1, Ordering::SeqCst);
        let slot = q.slot(idx);
        let p = hsa_kernel_dispatch_packet_t {
            // The slot stays INVALID until the header store below: the executor polls it.
            header: HSA_PACKET_TYPE_INVALID as u16,
            setup: 1,
            workgroup_size_x: 1,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: 1,
            grid_size_y: 1,
            grid_size_z: 1,
            kernel_object: object,
            kernarg_address: kernarg as *mut c_void,
            completion_signal: done,
            ..Default::default()
        };
        // SAFETY: a 64-byte slot of the ring; the header goes last, with release ordering.
        unsafe { slot.cast::<hsa_kernel_dispatch_packet_t>().write(p) };
        Queue::header(slot).store(HSA_PACKET_TYPE_KERNEL_DISPATCH as u16, Ordering::Release);
        q.doorbell().unwrap().store(idx as i64);
    }

    #[test]
    fn dispatches_go_to_the_queue_executor_and_faults_suspend_the_queue() {
        let sys = crate::topology::system();
        let gpu = sys
            .agents
            .iter()
            .find(|a| a.kind == AgentKind::Gpu)
            .unwrap();
        let pool = crate::topology::pool(gpu.pools[0]).unwrap();
        let buf = crate::memory::allocate_in_pool(pool, 4096, 0).unwrap();
        let toy = Arc::new(Toy {
            seen_isa: Mutex::new(String::new()),
        });
        let hq = create(QueueSpec {
            agent: gpu.handle,
            size: 64,
            queue_type: HSA_QUEUE_TYPE_MULTI,
            error_callback: Some(on_error),
            error_data: std::ptr::null_mut(),
            executor: Some(toy.clone()),
        })
        .unwrap();
        let q = lookup(hq).unwrap();
        // Kernel arguments at buf, the counter at buf + 64 (starts at 5).
        let (kernarg, counter) = (buf as u64, buf as u64 + 64);
        // SAFETY: inside the 4096-byte allocation.
        unsafe {
            buf.cast::<u64>().write(counter);
            buf.add(8).cast::<u64>().write(37);
            buf.add(64).cast::<u32>().write(5);
        }
        let done = crate::signal::create(1).unwrap();
        let s = crate::signal::get(done.handle).unwrap();
        submit(q, 1, kernarg, done);
        let deadline = Some(Instant::now() + Duration::from_secs(60));
        assert_eq!(s.wait(|v| v == 0, deadline), 0, "the dispatch completed");
        // SAFETY: as above.
        assert_eq!(unsafe { buf.add(64).cast::<u32>().read() }, 42);
        assert_eq!(*toy.seen_isa.lock(), gpu.isa_name().unwrap());

        let wait_error = || {
            let t0 = Instant::now();
            while ERROR_STATUS.load(Ordering::SeqCst) == 0 && t0.elapsed() < Duration::from_secs(60)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            ERROR_STATUS.swap(0, Ordering::SeqCst)
        };

        // A kernel nothing implements ends with a queue error; it never completes unrun.
        s.store(1);
        submit(q, 3, kernarg, done);
        assert_eq!(wait_error(), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
        assert!(q.inactive.load(Ordering::SeqCst));
        assert_eq!(s.load(), 1, "a dispatch nothing runs does not complete");
        destroy(hq).unwrap();
        let hq = create(QueueSpec {
            agent: gpu.handle,
            size: 64,
            queue_type: HSA_QUEUE_TYPE_MULTI,
            error_callback: Some(on_error),
            error_data: std::ptr::null_mut(),
            executor: Some(toy.clone()),
        })
        .unwrap();
        let q = lookup(hq).unwrap();

        // A fault suspends the queue and reaches the error callback; the packet stays.
        submit(q, 2, kernarg, done);
        let status = wait_error();
        assert_eq!(status, HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION);
        assert!(q.inactive.load(Ordering::SeqCst));
        assert_eq!(s.load(), 1, "a faulted dispatch does not complete");
        destroy(hq).unwrap();
        crate::signal::destroy(done.handle).unwrap();
        crate::memory::free(buf).unwrap();
    }
}
