//! Cost of the tool on dispatches that are not replayed, and on allocations, on vhsa.
//!
//! Configurations, each in its own process (the runtime loads tools at `hsa_init`):
//! `no-tool` — no tool, the application creates an intercept queue with a pass-through handler
//! (the tool's queues are intercept queues too); `tool-off` — kreplay loaded, no replay
//! configured; `tool-active` — kreplay with the built-in client active (`KREPLAY_PASSES=2`) but
//! the kernel filtered out, so every dispatch asks the client and takes the counted path;
//! `tool-timed` — the same with `KREPLAY_TIME_ALL=1` (a tool signal and a completion handler per
//! dispatch). One dispatch iteration = submit a batch of N empty kernels, one doorbell each, and
//! wait for the last one's signal. One allocation iteration = allocate 4 KiB from the GPU's
//! coarse-grained pool and free it. The parent prints the ratios of the children's means.

#![allow(clippy::missing_transmute_annotations)] // each target type is spelled in `Hsa`

use criterion::Criterion;
use std::ffi::{CString, c_void};
use std::process::Command;

type Status = u32;

#[repr(C)]
struct Queue {
    type_: u32,
    features: u32,
    base_address: *mut c_void,
    doorbell_signal: u64,
    size: u32,
    reserved1: u32,
    id: u64,
}

struct Hsa {
    iterate_agents: unsafe extern "C" fn(
        unsafe extern "C" fn(u64, *mut c_void) -> Status,
        *mut c_void,
    ) -> Status,
    agent_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    queue_create: unsafe extern "C" fn(
        u64,
        u32,
        u32,
        *const c_void,
        *mut c_void,
        u32,
        u32,
        *mut *mut Queue,
    ) -> Status,
    intercept_create: unsafe extern "C" fn(
        u64,
        u32,
        u32,
        *const c_void,
        *mut c_void,
        u32,
        u32,
        *mut *mut Queue,
    ) -> Status,
    intercept_register: unsafe extern "C" fn(
        *mut Queue,
        unsafe extern "C" fn(
            *const c_void,
            u64,
            u64,
            *mut c_void,
            Option<unsafe extern "C" fn(*const c_void, u64)>,
        ),
        *mut c_void,
    ) -> Status,
    add_write_index: unsafe extern "C" fn(*const Queue, u64) -> u64,
    signal_create: unsafe extern "C" fn(i64, u32, *const u64, *mut u64) -> Status,
    signal_store_relaxed: unsafe extern "C" fn(u64, i64),
    signal_store_screlease: unsafe extern "C" fn(u64, i64),
    signal_wait_scacquire: unsafe extern "C" fn(u64, u32, i64, u64, u32) -> i64,
    native_kernel_create: unsafe extern "C" fn(
        *const i8,
        unsafe extern "C" fn(*const c_void, *mut c_void),
        *mut c_void,
    ) -> u64,
    load_read_index: unsafe extern "C" fn(*const Queue) -> u64,
    iterate_pools: unsafe extern "C" fn(
        u64,
        unsafe extern "C" fn(u64, *mut c_void) -> Status,
        *mut c_void,
    ) -> Status,
    pool_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    pool_allocate: unsafe extern "C" fn(u64, usize, u32, *mut *mut c_void) -> Status,
    pool_free: unsafe extern "C" fn(*mut c_void) -> Status,
}

fn load() -> Hsa {
    let path = test_support::vhsa_lib_dir().join("libhsa-runtime64.so.1");
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: loading the runtime library by path.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    assert!(!h.is_null(), "cannot load {}", path.display());
    let sym = |name: &str| {
        let n = CString::new(name).unwrap();
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(h, n.as_ptr()) };
        assert!(!p.is_null(), "{name} missing");
        p
    };
    // SAFETY: each symbol has the C signature written in `Hsa`.
    unsafe {
        let init: unsafe extern "C" fn() -> Status = std::mem::transmute(sym("hsa_init"));
        assert_eq!(init(), 0, "hsa_init");
        Hsa {
            iterate_agents: std::mem::transmute(sym("hsa_iterate_agents")),
            agent_get_info: std::mem::transmute(sym("hsa_agent_get_info")),
            queue_create: std::mem::transmute(sym("hsa_queue_create")),
            intercept_create: std::mem::transmute(sym("hsa_amd_queue_intercept_create")),
            intercept_register: std::mem::transmute(sym("hsa_amd_queue_intercept_register")),
            add_write_index: std::mem::transmute(sym("hsa_queue_add_write_index_screlease")),
            signal_create: std::mem::transmute(sym("hsa_signal_create")),
            signal_store_relaxed: std::mem::transmute(sym("hsa_signal_store_relaxed")),
            signal_store_screlease: std::mem::transmute(sym("hsa_signal_store_screlease")),
            signal_wait_scacquire: std::mem::transmute(sym("hsa_signal_wait_scacquire")),
            native_kernel_create: std::mem::transmute(sym("vhsa_native_kernel_create")),
            load_read_index: std::mem::transmute(sym("hsa_queue_load_read_index_scacquire")),
            iterate_pools: std::mem::transmute(sym("hsa_amd_agent_iterate_memory_pools")),
            pool_get_info: std::mem::transmute(sym("hsa_amd_memory_pool_get_info")),
            pool_allocate: std::mem::transmute(sym("hsa_amd_memory_pool_allocate")),
            pool_free: std::mem::transmute(sym("hsa_amd_memory_pool_free")),
        }
    }
}

unsafe extern "C" fn empty_kernel(_packet: *const c_void, _user_data: *mut c_void) {}

unsafe extern "C" fn pass_through(
    pkts: *const c_void,
    count: u64,
    _index: u64,
    _data: *mut c_void,
    writer: Option<unsafe extern "C" fn(*const c_void, u64)>,
) {
    // SAFETY: forwarding the runtime's packets unchanged.
    unsafe { writer.unwrap()(pkts, count) }
}

unsafe extern "C" fn find_gpu(agent: u64, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `Hsa` and slot passed below.
    let (hsa, out) = unsafe { &mut *data.cast::<(&Hsa, u64)>() };
    let mut device = 0u32;
    // SAFETY: HSA_AGENT_INFO_DEVICE (17) writes a u32.
    unsafe { (hsa.agent_get_info)(agent, 17, (&mut device as *mut u32).cast()) };
    if device == 1 && *out == 0 {
        *out = agent;
    }
    0
}

unsafe extern "C" fn find_coarse_pool(pool: u64, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `Hsa` and slot passed below.
    let (hsa, out) = unsafe { &mut *data.cast::<(&Hsa, u64)>() };
    let (mut segment, mut flags) = (u32::MAX, 0u32);
    // SAFETY: SEGMENT (0) and GLOBAL_FLAGS (1) each write a u32.
    unsafe {
        (hsa.pool_get_info)(pool, 0, (&mut segment as *mut u32).cast());
        (hsa.pool_get_info)(pool, 1, (&mut flags as *mut u32).cast());
    }
    if segment == 0 && flags & 4 != 0 && *out == 0 {
        *out = pool;
    }
    0
}

/// Dispatch batch sizes.
const BATCHES: [u64; 3] = [1, 64, 1024];
/// Slots of the benchmark's queue.
const QUEUE_SLOTS: u32 = 4096;

fn dispatch_id(config: &str, batch: u64) -> String {
    format!("dispatch/{config}/batch {batch}")
}

fn alloc_id(config: &str) -> String {
    format!("allocate+free 4 KiB/{config}")
}

fn run(config: &str) {
    let hsa = load();
    let mut found = (&hsa, 0u64);
    // SAFETY: the callback only writes into `found`.
    unsafe { (hsa.iterate_agents)(find_gpu, (&mut found as *mut (&Hsa, u64)).cast()) };
    let gpu = found.1;
    assert_ne!(gpu, 0, "no GPU agent");
    let mut q: *mut Queue = std::ptr::null_mut();
    // SAFETY: valid arguments and out-pointers.
    unsafe {
        if config == "no-tool" {
            assert_eq!(
                (hsa.intercept_create)(
                    gpu,
                    QUEUE_SLOTS,
                    0,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    u32::MAX,
                    u32::MAX,
                    &mut q
                ),
                0
            );
            assert_eq!(
                (hsa.intercept_register)(q, pass_through, std::ptr::null_mut()),
                0
            );
        } else {
            assert_eq!(
                (hsa.queue_create)(
                    gpu,
                    QUEUE_SLOTS,
                    0,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    u32::MAX,
                    u32::MAX,
                    &mut q
                ),
                0
            );
        }
    }
    // SAFETY: a static name and a valid kernel function.
    let kobj = unsafe {
        (hsa.native_kernel_create)(c"empty".as_ptr(), empty_kernel, std::ptr::null_mut())
    };
    let mut done = 0u64;
    // SAFETY: out-pointer to a local.
    assert_eq!(
        unsafe { (hsa.signal_create)(1, 0, std::ptr::null(), &mut done) },
        0
    );
    let mut c = Criterion::default().configure_from_args();
    for batch in BATCHES {
        c.bench_function(&dispatch_id(config, batch), |b| {
            b.iter(|| {
                // SAFETY: a queue owned by this thread; each packet is fully written before its
                // header, after its slot was consumed, and the doorbell is rung after.
                unsafe {
                    (hsa.signal_store_relaxed)(done, 1);
                    for i in 0..batch {
                        let idx = (hsa.add_write_index)(q, 1);
                        while idx - (hsa.load_read_index)(q) >= u64::from((*q).size) {
                            std::hint::spin_loop();
                        }
                        let slot = ((*q).base_address as *mut u8)
                            .add((idx % u64::from((*q).size)) as usize * 64);
                        std::ptr::write_bytes(slot.add(4), 0, 60);
                        slot.add(4).cast::<u16>().write(1); // workgroup x
                        slot.add(6).cast::<u16>().write(1);
                        slot.add(8).cast::<u16>().write(1);
                        slot.add(12).cast::<u32>().write(1); // grid x
                        slot.add(16).cast::<u32>().write(1);
                        slot.add(20).cast::<u32>().write(1);
                        slot.add(32).cast::<u64>().write(kobj);
                        slot.add(56)
                            .cast::<u64>()
                            .write(if i + 1 == batch { done } else { 0 });
                        let header: u32 = 2 | (2 << 9) | (2 << 11) | (1 << 16);
                        (*slot.cast::<std::sync::atomic::AtomicU32>())
                            .store(header, std::sync::atomic::Ordering::Release);
                        (hsa.signal_store_screlease)((*q).doorbell_signal, idx as i64);
                    }
                    while (hsa.signal_wait_scacquire)(done, 2, 1, u64::MAX, 0) >= 1 {}
                }
            })
        });
    }
    let mut pool = (&hsa, 0u64);
    // SAFETY: the callback only writes into `pool`.
    unsafe {
        (hsa.iterate_pools)(
            gpu,
            find_coarse_pool,
            (&mut pool as *mut (&Hsa, u64)).cast(),
        )
    };
    assert_ne!(pool.1, 0, "no coarse-grained pool on the GPU agent");
    c.bench_function(&alloc_id(config), |b| {
        b.iter(|| {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: a pool of the GPU; the buffer is freed right away.
            unsafe {
                assert_eq!((hsa.pool_allocate)(pool.1, 4096, 0, &mut p), 0);
                assert_eq!((hsa.pool_free)(std::hint::black_box(p)), 0);
            }
        })
    });
    c.final_summary();
}

/// Time of a benchmark as criterion reported it (ns: its slope estimate, else its mean), when it ran; found by the `full_id` of
/// the `new/benchmark.json` files criterion writes.
fn mean_ns(id: &str) -> Option<f64> {
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("criterion");
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if !p.is_dir() {
                continue;
            }
            if p.file_name().is_some_and(|n| n == "new") {
                let read = |f: &str| {
                    std::fs::read_to_string(p.join(f))
                        .ok()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                };
                if read("benchmark.json").is_some_and(|b| b["full_id"] == id) {
                    return read("estimates.json").and_then(|v| {
                        v["slope"]["point_estimate"]
                            .as_f64()
                            .or_else(|| v["mean"]["point_estimate"].as_f64())
                    });
                }
            } else {
                dirs.push(p);
            }
        }
    }
    None
}

/// The ratios the performance goals are stated in, from this run's means.
fn print_ratios() {
    println!("\nratios (means of this run):");
    let ratio = |a: &str, b: &str| match (mean_ns(a), mean_ns(b)) {
        (Some(x), Some(y)) if y > 0.0 => format!("{:.2}x ({:.0} ns / {:.0} ns)", x / y, x, y),
        _ => "not measured".to_owned(),
    };
    for batch in BATCHES {
        let per = |config: &str| dispatch_id(config, batch);
        println!(
            "  batch {batch:>4}: client registered / tool without client = {}",
            ratio(&per("tool-active"), &per("tool-off"))
        );
        println!(
            "              timed client / tool without client       = {}",
            ratio(&per("tool-timed"), &per("tool-off"))
        );
        println!(
            "              tool without client / no tool            = {}",
            ratio(&per("tool-off"), &per("no-tool"))
        );
    }
    println!(
        "  allocate+free: tool / no tool = {}",
        ratio(&alloc_id("tool-active"), &alloc_id("no-tool"))
    );
    println!(
        "                 tool without client / no tool = {}",
        ratio(&alloc_id("tool-off"), &alloc_id("no-tool"))
    );
}

unsafe extern "C" fn no_op_writer(pkts: *const c_void, count: u64) {
    std::hint::black_box((pkts, count));
}

/// The interceptor alone, in process: its fast path (no replay service) against calling the
/// next writer directly.
fn fast_path() {
    kreplay::state::set_service(kreplay::state::ReplayService::Off);
    let packet = [0u8; 64];
    let data = std::ptr::dangling_mut::<c_void>();
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("writer called directly", |b| {
        // SAFETY: a no-op writer.
        b.iter(|| unsafe { no_op_writer(std::hint::black_box(packet.as_ptr().cast()), 1) })
    });
    c.bench_function("write interceptor fast path, no replay configured", |b| {
        // SAFETY: the fast path only forwards; `data` is not dereferenced.
        b.iter(|| unsafe {
            kreplay::intercept::write_interceptor(
                std::hint::black_box(packet.as_ptr().cast()),
                1,
                0,
                data,
                Some(no_op_writer),
            )
        })
    });
    c.final_summary();
}

fn main() {
    if let Ok(config) = std::env::var("KREPLAY_BENCH_CONFIG") {
        run(&config);
        return;
    }
    fast_path();
    let exe = std::env::current_exe().unwrap();
    let tool = test_support::tool_lib();
    for config in ["no-tool", "tool-off", "tool-active", "tool-timed"] {
        let mut cmd = Command::new(&exe);
        cmd.args(std::env::args_os().skip(1))
            .env("KREPLAY_BENCH_CONFIG", config);
        for v in [
            "HSA_TOOLS_LIB",
            "KREPLAY_PASSES",
            "KREPLAY_KERNEL_INCLUDE",
            "KREPLAY_OUTPUT_DIR",
            "KREPLAY_TIME_ALL",
            "VHSA_AGENTS",
        ] {
            cmd.env_remove(v);
        }
        if config != "no-tool" {
            cmd.env("HSA_TOOLS_LIB", &tool);
        }
        if config == "tool-active" || config == "tool-timed" {
            cmd.env("KREPLAY_PASSES", "2")
                .env("KREPLAY_KERNEL_INCLUDE", "^never$");
        }
        if config == "tool-timed" {
            cmd.env("KREPLAY_TIME_ALL", "1");
        }
        let st = cmd.status().expect("run benchmark child");
        assert!(st.success(), "benchmark configuration {config} failed");
    }
    print_ratios();
}
