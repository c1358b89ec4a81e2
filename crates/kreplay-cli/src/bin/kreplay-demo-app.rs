//! `kreplay-demo-app`: the example HSA application that `kreplay demo` runs.
//!
//! It loads `libhsa-runtime64.so.1` the way any application does (the soname resolves through
//! `LD_LIBRARY_PATH`, so it runs on vhsa or on an installed runtime), registers its kernels
//! through vhsa's native-kernel extension, allocates device buffers, copies data in,
//! dispatches four kernels (ten dispatches, one of them updating a buffer in place), copies the
//! results back and verifies them. Under replay every dispatch runs several times; the results
//! stay right only if memory is restored between passes.
//!
//! `--crash-after N` makes the application kill itself with SIGSEGV right after its N-th
//! dispatch completes, to show what `kreplay run` keeps from a crashed application.
//! `--hold-after N` makes it print a line and wait (up to 10 minutes) right after its N-th
//! dispatch, so that a test can kill it, or `kreplay`, in the middle of a run.
//!
//! Exit status: 0 when the results are right, 1 when they are wrong, 2 when the runtime is
//! unusable (missing entry point, no GPU agent, no native-kernel extension).

use hsa_abi::ffi;
use std::ffi::c_void;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};

/// Elements per buffer.
const N: usize = 4096;
/// Work-group size of every dispatch.
const WORKGROUP: u16 = 64;
/// How many times the add / scale / accumulate sequence runs.
const ITERATIONS: u64 = 3;
/// The bound of each wait for a dispatch to complete, in ns (the runtime's timestamp unit).
const WAIT_BOUND_NS: u64 = 120_000_000_000;

type Status = ffi::hsa_status_t;
type NativeKernel = unsafe extern "C" fn(*const ffi::hsa_kernel_dispatch_packet_t, *mut c_void);

/// The runtime entry points the demo calls, resolved once.
struct Hsa {
    _lib: libloading::Library,
    init: unsafe extern "C" fn() -> Status,
    shut_down: unsafe extern "C" fn() -> Status,
    iterate_agents: unsafe extern "C" fn(
        unsafe extern "C" fn(ffi::hsa_agent_t, *mut c_void) -> Status,
        *mut c_void,
    ) -> Status,
    agent_get_info:
        unsafe extern "C" fn(ffi::hsa_agent_t, ffi::hsa_agent_info_t, *mut c_void) -> Status,
    iterate_pools: unsafe extern "C" fn(
        ffi::hsa_agent_t,
        unsafe extern "C" fn(ffi::hsa_amd_memory_pool_t, *mut c_void) -> Status,
        *mut c_void,
    ) -> Status,
    pool_get_info: unsafe extern "C" fn(
        ffi::hsa_amd_memory_pool_t,
        ffi::hsa_amd_memory_pool_info_t,
        *mut c_void,
    ) -> Status,
    pool_allocate:
        unsafe extern "C" fn(ffi::hsa_amd_memory_pool_t, usize, u32, *mut *mut c_void) -> Status,
    pool_free: unsafe extern "C" fn(*mut c_void) -> Status,
    memory_copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> Status,
    queue_create: unsafe extern "C" fn(
        ffi::hsa_agent_t,
        u32,
        ffi::hsa_queue_type32_t,
        Option<unsafe extern "C" fn(Status, *mut ffi::hsa_queue_t, *mut c_void)>,
        *mut c_void,
        u32,
        u32,
        *mut *mut ffi::hsa_queue_t,
    ) -> Status,
    queue_destroy: unsafe extern "C" fn(*mut ffi::hsa_queue_t) -> Status,
    add_write_index: unsafe extern "C" fn(*const ffi::hsa_queue_t, u64) -> u64,
    signal_create:
        unsafe extern "C" fn(i64, u32, *const ffi::hsa_agent_t, *mut ffi::hsa_signal_t) -> Status,
    signal_destroy: unsafe extern "C" fn(ffi::hsa_signal_t) -> Status,
    signal_store_relaxed: unsafe extern "C" fn(ffi::hsa_signal_t, i64),
    signal_store_release: unsafe extern "C" fn(ffi::hsa_signal_t, i64),
    signal_wait: unsafe extern "C" fn(
        ffi::hsa_signal_t,
        ffi::hsa_signal_condition_t,
        i64,
        u64,
        ffi::hsa_wait_state_t,
    ) -> i64,
    native_kernel_create:
        Option<unsafe extern "C" fn(*const std::ffi::c_char, NativeKernel, *mut c_void) -> u64>,
}

/// A failure with the message printed before exiting with status 2.
struct Unusable(String);

impl Hsa {
    fn load() -> Result<Hsa, Unusable> {
        // SAFETY: loading the runtime runs its initialisers, as for any HSA application.
        let lib = unsafe { libloading::Library::new("libhsa-runtime64.so.1") }
            .map_err(|e| Unusable(format!("cannot load libhsa-runtime64.so.1: {e}; put the runtime's directory on LD_LIBRARY_PATH")))?;
        macro_rules! entry {
            ($name:literal) => {
                // SAFETY: the field's type is the C signature of this HSA function.
                *unsafe { lib.get($name.as_bytes()) }
                    .map_err(|_| Unusable(format!("the runtime does not export {}", $name)))?
            };
        }
        Ok(Hsa {
            init: entry!("hsa_init"),
            shut_down: entry!("hsa_shut_down"),
            iterate_agents: entry!("hsa_iterate_agents"),
            agent_get_info: entry!("hsa_agent_get_info"),
            iterate_pools: entry!("hsa_amd_agent_iterate_memory_pools"),
            pool_get_info: entry!("hsa_amd_memory_pool_get_info"),
            pool_allocate: entry!("hsa_amd_memory_pool_allocate"),
            pool_free: entry!("hsa_amd_memory_pool_free"),
            memory_copy: entry!("hsa_memory_copy"),
            queue_create: entry!("hsa_queue_create"),
            queue_destroy: entry!("hsa_queue_destroy"),
            add_write_index: entry!("hsa_queue_add_write_index_screlease"),
            signal_create: entry!("hsa_signal_create"),
            signal_destroy: entry!("hsa_signal_destroy"),
            signal_store_relaxed: entry!("hsa_signal_store_relaxed"),
            signal_store_release: entry!("hsa_signal_store_screlease"),
            signal_wait: entry!("hsa_signal_wait_scacquire"),
            // SAFETY: the type is the extension's documented C signature.
            native_kernel_create: unsafe { lib.get(b"vhsa_native_kernel_create") }
                .ok()
                .map(|s| *s),
            _lib: lib,
        })
    }
}

fn check(status: Status, what: &str) -> Result<(), Unusable> {
    if status == ffi::HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Unusable(format!("{what} failed with status {status:#x}")))
    }
}

/// Pushes each handle into the `Vec<T>` behind `data`.
unsafe extern "C" fn collect<T: Copy>(handle: T, data: *mut c_void) -> Status {
    let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `data` is the `Vec<T>` the caller handed to the iteration.
        unsafe { &mut *data.cast::<Vec<T>>() }.push(handle);
    }));
    if pushed.is_ok() {
        ffi::HSA_STATUS_SUCCESS
    } else {
        ffi::HSA_STATUS_ERROR
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels. Each receives its dispatch packet, reads its arguments from the kernarg segment and
// loops over the grid itself.

#[repr(C)]
#[derive(Clone, Copy)]
struct FillArgs {
    out: *mut u64,
    base: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct AddArgs {
    a: *const u64,
    b: *const u64,
    c: *mut u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct ScaleArgs {
    x: *mut u64,
    factor: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct AccumulateArgs {
    total: *mut u64,
    x: *const u64,
}

/// Runs `body` over the grid of `packet` with the arguments of type `A`, inside a panic boundary.
///
/// # Safety
/// `packet` must be a valid dispatch packet whose kernarg segment holds an `A` whose pointers
/// cover `grid_size_x` elements.
unsafe fn run_grid<A: Copy>(
    packet: *const ffi::hsa_kernel_dispatch_packet_t,
    body: impl Fn(A, usize),
) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: guaranteed by the caller.
        let (args, n) = unsafe {
            (
                (*packet).kernarg_address.cast::<A>().read(),
                (*packet).grid_size_x as usize,
            )
        };
        for i in 0..n {
            body(args, i);
        }
    }));
    if result.is_err() {
        eprintln!("kreplay-demo-app: a kernel panicked");
    }
}

unsafe extern "C" fn fill(packet: *const ffi::hsa_kernel_dispatch_packet_t, _: *mut c_void) {
    // SAFETY: dispatched with FillArgs over N elements; each index writes its own element.
    unsafe { run_grid(packet, |a: FillArgs, i| *a.out.add(i) = a.base + i as u64) }
}

unsafe extern "C" fn vector_add(packet: *const ffi::hsa_kernel_dispatch_packet_t, _: *mut c_void) {
    // SAFETY: dispatched with AddArgs over N elements.
    unsafe {
        run_grid(packet, |a: AddArgs, i| {
            *a.c.add(i) = (*a.a.add(i)).wrapping_add(*a.b.add(i))
        })
    }
}

unsafe extern "C" fn scale_in_place(
    packet: *const ffi::hsa_kernel_dispatch_packet_t,
    _: *mut c_void,
) {
    // SAFETY: dispatched with ScaleArgs over N elements.
    unsafe {
        run_grid(packet, |a: ScaleArgs, i| {
            *a.x.add(i) = (*a.x.add(i)).wrapping_mul(a.factor)
        })
    }
}

unsafe extern "C" fn accumulate(packet: *const ffi::hsa_kernel_dispatch_packet_t, _: *mut c_void) {
    // SAFETY: dispatched with AccumulateArgs over N elements; the kernel runs on one thread.
    unsafe {
        run_grid(packet, |a: AccumulateArgs, i| {
            *a.total = (*a.total).wrapping_add(*a.x.add(i))
        })
    }
}

// ---------------------------------------------------------------------------------------------

/// The agents, pools and queue the demo runs on.
struct Device<'h> {
    hsa: &'h Hsa,
    queue: *mut ffi::hsa_queue_t,
    device_pool: ffi::hsa_amd_memory_pool_t,
    kernarg_pool: ffi::hsa_amd_memory_pool_t,
    done: ffi::hsa_signal_t,
    dispatches: AtomicU32,
    allocations: Vec<*mut c_void>,
    crash_after: Option<u32>,
    hold_after: Option<u32>,
}

fn pools_of(hsa: &Hsa, agent: ffi::hsa_agent_t) -> Vec<(ffi::hsa_amd_memory_pool_t, u32)> {
    let mut pools: Vec<ffi::hsa_amd_memory_pool_t> = Vec::new();
    // SAFETY: the callback receives `pools` as its data pointer.
    unsafe {
        (hsa.iterate_pools)(
            agent,
            collect::<ffi::hsa_amd_memory_pool_t>,
            (&raw mut pools).cast(),
        )
    };
    pools
        .into_iter()
        .filter_map(|p| {
            let (mut segment, mut flags, mut alloc) = (u32::MAX, 0u32, false);
            // SAFETY: each attribute writes the type of the variable it is given.
            unsafe {
                (hsa.pool_get_info)(
                    p,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                    (&raw mut segment).cast(),
                );
                (hsa.pool_get_info)(
                    p,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                    (&raw mut flags).cast(),
                );
                (hsa.pool_get_info)(
                    p,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                    (&raw mut alloc).cast(),
                );
            }
            (segment == ffi::HSA_AMD_SEGMENT_GLOBAL && alloc).then_some((p, flags))
        })
        .collect()
}

impl<'h> Device<'h> {
    fn open(hsa: &'h Hsa) -> Result<Device<'h>, Unusable> {
        let mut agents: Vec<ffi::hsa_agent_t> = Vec::new();
        // SAFETY: the callback receives `agents` as its data pointer.
        check(
            unsafe { (hsa.iterate_agents)(collect::<ffi::hsa_agent_t>, (&raw mut agents).cast()) },
            "hsa_iterate_agents",
        )?;
        let device_type = |a: ffi::hsa_agent_t| {
            let mut t = u32::MAX;
            // SAFETY: DEVICE writes a u32.
            unsafe { (hsa.agent_get_info)(a, ffi::HSA_AGENT_INFO_DEVICE, (&raw mut t).cast()) };
            t
        };
        let gpu = *agents
            .iter()
            .find(|&&a| device_type(a) == ffi::HSA_DEVICE_TYPE_GPU)
            .ok_or_else(|| Unusable("no GPU agent".into()))?;
        let all_pools: Vec<_> = agents.iter().flat_map(|&a| pools_of(hsa, a)).collect();
        let device_pool = pools_of(hsa, gpu)
            .into_iter()
            .find(|(_, f)| f & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0)
            .map(|(p, _)| p)
            .ok_or_else(|| Unusable("the GPU agent has no coarse-grained global pool".into()))?;
        let kernarg_pool = all_pools
            .iter()
            .find(|(_, f)| f & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0)
            .or_else(|| {
                all_pools
                    .iter()
                    .find(|(_, f)| f & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED != 0)
            })
            .map(|(p, _)| *p)
            .ok_or_else(|| Unusable("no kernarg or fine-grained pool".into()))?;
        let mut queue = std::ptr::null_mut();
        // SAFETY: all pointers are valid; no error callback.
        check(
            unsafe {
                (hsa.queue_create)(
                    gpu,
                    64,
                    ffi::HSA_QUEUE_TYPE_SINGLE,
                    None,
                    std::ptr::null_mut(),
                    u32::MAX,
                    u32::MAX,
                    &mut queue,
                )
            },
            "hsa_queue_create",
        )?;
        let mut done = ffi::hsa_signal_t { handle: 0 };
        // SAFETY: no consumer list; `done` receives the signal.
        check(
            unsafe { (hsa.signal_create)(1, 0, std::ptr::null(), &mut done) },
            "hsa_signal_create",
        )?;
        Ok(Device {
            hsa,
            queue,
            device_pool,
            kernarg_pool,
            done,
            dispatches: AtomicU32::new(0),
            allocations: Vec::new(),
            crash_after: None,
            hold_after: None,
        })
    }

    fn allocate(
        &mut self,
        pool: ffi::hsa_amd_memory_pool_t,
        bytes: usize,
    ) -> Result<*mut c_void, Unusable> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: `ptr` receives the allocation.
        check(
            unsafe { (self.hsa.pool_allocate)(pool, bytes, 0, &mut ptr) },
            "hsa_amd_memory_pool_allocate",
        )?;
        self.allocations.push(ptr);
        Ok(ptr)
    }

    fn buffer(&mut self) -> Result<*mut u64, Unusable> {
        Ok(self.allocate(self.device_pool, N * 8)?.cast())
    }

    fn copy(&self, dst: *mut c_void, src: *const c_void, bytes: usize) -> Result<(), Unusable> {
        // SAFETY: both ranges are allocations of at least `bytes` bytes.
        check(
            unsafe { (self.hsa.memory_copy)(dst, src, bytes) },
            "hsa_memory_copy",
        )
    }

    /// Dispatches `kernel` over `grid` elements with `args` and waits for it.
    fn dispatch<A: Copy>(
        &mut self,
        name: &str,
        kernel: u64,
        args: A,
        grid: u32,
    ) -> Result<(), Unusable> {
        let kernarg = self.allocate(self.kernarg_pool, std::mem::size_of::<A>().max(16))?;
        // SAFETY: the kernarg allocation holds at least one A.
        unsafe { kernarg.cast::<A>().write(args) };
        // SAFETY: the signal belongs to this device.
        unsafe { (self.hsa.signal_store_relaxed)(self.done, 1) };
        // SAFETY: the queue is valid until `close`; the slot at `index` is ours once reserved,
        // and the queue has room because every earlier dispatch completed.
        unsafe {
            let q = &*self.queue;
            let index = (self.hsa.add_write_index)(self.queue, 1);
            let slot = q
                .base_address
                .cast::<ffi::hsa_kernel_dispatch_packet_t>()
                .add((index % u64::from(q.size)) as usize);
            let mut packet: ffi::hsa_kernel_dispatch_packet_t = std::mem::zeroed();
            // The slot stays INVALID until the header store: a packet processor polling the
            // ring would take a zero header (vendor-specific) as a packet.
            packet.header = ffi::HSA_PACKET_TYPE_INVALID as u16;
            packet.workgroup_size_x = WORKGROUP;
            packet.workgroup_size_y = 1;
            packet.workgroup_size_z = 1;
            packet.grid_size_x = grid;
            packet.grid_size_y = 1;
            packet.grid_size_z = 1;
            packet.kernel_object = kernel;
            packet.kernarg_address = kernarg;
            packet.completion_signal = self.done;
            // The body first; the header (with setup) last, with release order.
            slot.write(packet);
            let header = (ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH)
                | (1 << ffi::HSA_PACKET_HEADER_BARRIER)
                | (ffi::HSA_FENCE_SCOPE_SYSTEM << ffi::HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
                | (ffi::HSA_FENCE_SCOPE_SYSTEM << ffi::HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
            let setup = 1u32 << ffi::HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
            (*slot.cast::<AtomicU32>()).store(header | (setup << 16), Ordering::Release);
            (self.hsa.signal_store_release)(q.doorbell_signal, index as i64);
        }
        let mut waited = 0u64;
        loop {
            // SAFETY: the signal is valid; the timeout is a hint in ns.
            let value = unsafe {
                (self.hsa.signal_wait)(
                    self.done,
                    ffi::HSA_SIGNAL_CONDITION_EQ,
                    0,
                    1_000_000_000,
                    ffi::HSA_WAIT_STATE_BLOCKED,
                )
            };
            if value == 0 {
                break;
            }
            waited += 1_000_000_000;
            if waited >= WAIT_BOUND_NS {
                return Err(Unusable(format!(
                    "dispatch of {name} did not complete within {} s",
                    WAIT_BOUND_NS / 1_000_000_000
                )));
            }
        }
        let count = self.dispatches.fetch_add(1, Ordering::Relaxed) + 1;
        if self.hold_after == Some(count) {
            println!("kreplay-demo-app: holding after dispatch {count} (--hold-after)");
            use std::io::Write as _;
            let _ = std::io::stdout().flush();
            std::thread::sleep(std::time::Duration::from_secs(600));
        }
        if self.crash_after == Some(count) {
            println!(
                "kreplay-demo-app: crashing on purpose after dispatch {count} (--crash-after)"
            );
            // The default action, not the handler the Rust runtime keeps for stack overflows.
            // SAFETY: resetting a disposition and raising a signal have no memory-safety
            // requirements.
            unsafe {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            }
        }
        Ok(())
    }

    fn close(self) {
        // SAFETY: every allocation, the signal and the queue were created by this device and
        // no dispatch is in flight.
        unsafe {
            for p in &self.allocations {
                (self.hsa.pool_free)(*p);
            }
            (self.hsa.signal_destroy)(self.done);
            (self.hsa.queue_destroy)(self.queue);
        }
    }
}

/// The expected contents after the run: c[i] = 2 (a[i] + b[i]) with a[i] = i, b[i] = 3 + i;
/// total = ITERATIONS * sum(c).
fn expected() -> (Vec<u64>, u64) {
    let c: Vec<u64> = (0..N as u64).map(|i| 2 * (i + 3 + i)).collect();
    let total = ITERATIONS * c.iter().sum::<u64>();
    (c, total)
}

/// What the command line asked for.
#[derive(Clone, Copy, Default)]
struct Options {
    crash_after: Option<u32>,
    hold_after: Option<u32>,
}

fn run(hsa: &Hsa, options: Options) -> Result<bool, Unusable> {
    let create = hsa.native_kernel_create.ok_or_else(|| {
        Unusable("this runtime has no native kernels (vhsa_native_kernel_create): the demo runs on the virtual runtime, `kreplay demo`".into())
    })?;
    let register = |name: &std::ffi::CStr, f: NativeKernel| -> Result<u64, Unusable> {
        // SAFETY: the name is NUL-terminated and the function has the native-kernel signature.
        let k = unsafe { create(name.as_ptr(), f, std::ptr::null_mut()) };
        if k == 0 {
            Err(Unusable(format!(
                "registering {} failed",
                name.to_string_lossy()
            )))
        } else {
            Ok(k)
        }
    };
    let k_fill = register(c"demo_fill", fill)?;
    let k_add = register(c"demo_vector_add", vector_add)?;
    let k_scale = register(c"demo_scale_in_place", scale_in_place)?;
    let k_acc = register(c"demo_accumulate", accumulate)?;

    let mut dev = Device::open(hsa)?;
    dev.crash_after = options.crash_after;
    dev.hold_after = options.hold_after;
    let (a, b, c, total) = (dev.buffer()?, dev.buffer()?, dev.buffer()?, dev.buffer()?);
    let host_a: Vec<u64> = (0..N as u64).collect();
    dev.copy(a.cast(), host_a.as_ptr().cast(), N * 8)?;
    let zeros = vec![0u64; N];
    dev.copy(total.cast(), zeros.as_ptr().cast(), 8)?;
    dev.dispatch("demo_fill", k_fill, FillArgs { out: b, base: 3 }, N as u32)?;
    for _ in 0..ITERATIONS {
        dev.dispatch("demo_vector_add", k_add, AddArgs { a, b, c }, N as u32)?;
        dev.dispatch(
            "demo_scale_in_place",
            k_scale,
            ScaleArgs { x: c, factor: 2 },
            N as u32,
        )?;
        dev.dispatch(
            "demo_accumulate",
            k_acc,
            AccumulateArgs { total, x: c },
            N as u32,
        )?;
    }
    let mut host_c = vec![0u64; N];
    let mut host_total = 0u64;
    dev.copy(host_c.as_mut_ptr().cast(), c.cast(), N * 8)?;
    dev.copy((&raw mut host_total).cast(), total.cast(), 8)?;
    let dispatches = dev.dispatches.load(Ordering::Relaxed);
    dev.close();

    let (want_c, want_total) = expected();
    let mismatch = host_c
        .iter()
        .zip(&want_c)
        .position(|(got, want)| got != want);
    println!("kreplay-demo-app: {dispatches} dispatches of 4 kernels over {N} elements");
    match mismatch {
        Some(i) => {
            println!(
                "kreplay-demo-app: WRONG: c[{i}] = {} (expected {})",
                host_c[i], want_c[i]
            );
            Ok(false)
        }
        None if host_total != want_total => {
            println!("kreplay-demo-app: WRONG: total = {host_total} (expected {want_total})");
            Ok(false)
        }
        None => {
            println!("kreplay-demo-app: results verified (total = {host_total})");
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |n: &String| n.parse::<u32>().ok().filter(|&n| n > 0);
    let options = match args.as_slice() {
        [] => Some(Options::default()),
        [flag, n] if flag == "--crash-after" => count(n).map(|n| Options {
            crash_after: Some(n),
            ..Options::default()
        }),
        [flag, n] if flag == "--hold-after" => count(n).map(|n| Options {
            hold_after: Some(n),
            ..Options::default()
        }),
        _ => None,
    };
    let Some(options) = options else {
        eprintln!(
            "usage: kreplay-demo-app [--crash-after N | --hold-after N]   (N >= 1: SIGSEGV, or a 10-minute wait, after the N-th dispatch)"
        );
        return ExitCode::from(2);
    };
    let hsa = match Hsa::load() {
        Ok(h) => h,
        Err(Unusable(msg)) => {
            eprintln!("kreplay-demo-app: {msg}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: hsa_init takes no arguments.
    if let Err(Unusable(msg)) = check(unsafe { (hsa.init)() }, "hsa_init") {
        eprintln!("kreplay-demo-app: {msg}");
        return ExitCode::from(2);
    }
    let result = run(&hsa, options);
    // SAFETY: balances hsa_init.
    unsafe { (hsa.shut_down)() };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(Unusable(msg)) => {
            eprintln!("kreplay-demo-app: {msg}");
            ExitCode::from(2)
        }
    }
}
