//! Cost of the write interceptor on a dispatch that is not replayed, on vhsa.
//!
//! Three configurations, each in its own process (the runtime loads tools at `hsa_init`):
//! `plain` — no tool, the application creates an intercept queue with a pass-through handler;
//! `tool-off` — kreplay loaded, no replay configured; `tool-active` — kreplay loaded with the
//! built-in client active (`KREPLAY_PASSES=2`) but the kernel filtered out, so the dispatch
//! takes the gated, tracked path. One iteration = submit an empty kernel and wait for it.

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
    iterate_agents: unsafe extern "C" fn(unsafe extern "C" fn(u64, *mut c_void) -> Status, *mut c_void) -> Status,
    agent_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    queue_create: unsafe extern "C" fn(u64, u32, u32, *const c_void, *mut c_void, u32, u32, *mut *mut Queue) -> Status,
    intercept_create: unsafe extern "C" fn(u64, u32, u32, *const c_void, *mut c_void, u32, u32, *mut *mut Queue) -> Status,
    intercept_register: unsafe extern "C" fn(*mut Queue, unsafe extern "C" fn(*const c_void, u64, u64, *mut c_void, Option<unsafe extern "C" fn(*const c_void, u64)>), *mut c_void) -> Status,
    add_write_index: unsafe extern "C" fn(*const Queue, u64) -> u64,
    signal_create: unsafe extern "C" fn(i64, u32, *const u64, *mut u64) -> Status,
    signal_store_relaxed: unsafe extern "C" fn(u64, i64),
    signal_store_screlease: unsafe extern "C" fn(u64, i64),
    signal_wait_scacquire: unsafe extern "C" fn(u64, u32, i64, u64, u32) -> i64,
    native_kernel_create: unsafe extern "C" fn(*const i8, unsafe extern "C" fn(*const c_void, *mut c_void), *mut c_void) -> u64,
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
        }
    }
}

unsafe extern "C" fn empty_kernel(_packet: *const c_void, _user_data: *mut c_void) {}

unsafe extern "C" fn pass_through(pkts: *const c_void, count: u64, _index: u64, _data: *mut c_void, writer: Option<unsafe extern "C" fn(*const c_void, u64)>) {
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
        if config == "plain" {
            assert_eq!((hsa.intercept_create)(gpu, 64, 0, std::ptr::null(), std::ptr::null_mut(), u32::MAX, u32::MAX, &mut q), 0);
            assert_eq!((hsa.intercept_register)(q, pass_through, std::ptr::null_mut()), 0);
        } else {
            assert_eq!((hsa.queue_create)(gpu, 64, 0, std::ptr::null(), std::ptr::null_mut(), u32::MAX, u32::MAX, &mut q), 0);
        }
    }
    // SAFETY: a static name and a valid kernel function.
    let kobj = unsafe { (hsa.native_kernel_create)(c"empty".as_ptr(), empty_kernel, std::ptr::null_mut()) };
    let mut done = 0u64;
    // SAFETY: out-pointer to a local.
    assert_eq!(unsafe { (hsa.signal_create)(1, 0, std::ptr::null(), &mut done) }, 0);
    let mut c = Criterion::default().configure_from_args();
    c.bench_function(&format!("non-replayed dispatch, {config}"), |b| {
        b.iter(|| {
            // SAFETY: a queue of 64 slots owned by this thread; the packet is fully written
            // before its header, and the doorbell is rung after.
            unsafe {
                (hsa.signal_store_relaxed)(done, 1);
                let idx = (hsa.add_write_index)(q, 1);
                let slot = ((*q).base_address as *mut u8).add((idx % u64::from((*q).size)) as usize * 64);
                std::ptr::write_bytes(slot.add(4), 0, 60);
                slot.add(4).cast::<u16>().write(1); // workgroup x
                slot.add(6).cast::<u16>().write(1);
                slot.add(8).cast::<u16>().write(1);
                slot.add(12).cast::<u32>().write(1); // grid x
                slot.add(16).cast::<u32>().write(1);
                slot.add(20).cast::<u32>().write(1);
                slot.add(32).cast::<u64>().write(kobj);
                slot.add(56).cast::<u64>().write(done);
                let header: u32 = 2 | (2 << 9) | (2 << 11) | (1 << 16);
                (*slot.cast::<std::sync::atomic::AtomicU32>()).store(header, std::sync::atomic::Ordering::Release);
                (hsa.signal_store_screlease)((*q).doorbell_signal, idx as i64);
                while (hsa.signal_wait_scacquire)(done, 2, 1, u64::MAX, 0) >= 1 {}
            }
        })
    });
    c.final_summary();
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
            kreplay::intercept::write_interceptor(std::hint::black_box(packet.as_ptr().cast()), 1, 0, data, Some(no_op_writer))
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
    for config in ["plain", "tool-off", "tool-active"] {
        let mut cmd = Command::new(&exe);
        cmd.args(std::env::args_os().skip(1)).env("KREPLAY_BENCH_CONFIG", config);
        for v in ["HSA_TOOLS_LIB", "KREPLAY_PASSES", "KREPLAY_KERNEL_INCLUDE", "KREPLAY_OUTPUT_DIR", "VHSA_AGENTS"] {
            cmd.env_remove(v);
        }
        if config != "plain" {
            cmd.env("HSA_TOOLS_LIB", &tool);
        }
        if config == "tool-active" {
            cmd.env("KREPLAY_PASSES", "2").env("KREPLAY_KERNEL_INCLUDE", "^never$");
        }
        let st = cmd.status().expect("run benchmark child");
        assert!(st.success(), "benchmark configuration {config} failed");
    }
}
