//! Empty native-kernel dispatch throughput on one queue, in batches; and copy bandwidth per
//! direction under the link model (`VHSA_LINK_GBPS=4`, set by the benchmark itself).
//!
//! The runtime is loaded the way applications load it (`dlopen` of `libhsa-runtime64.so.1` from
//! the build directory). Each iteration writes a batch of dispatch packets of an empty native
//! kernel, rings the doorbell once, and waits for the last packet's completion signal (packets
//! complete in order). Throughput is reported in dispatches per second. The round trip of one
//! dispatch is measured alone and beside as many spinning host threads as there are cores.
//!
//! `cargo bench -p vhsa --bench dispatch`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hsa_abi::ffi::*;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

struct Api {
    lib: *mut c_void,
}

impl Api {
    fn load() -> Api {
        let path = test_support::vhsa_lib_dir().join("libhsa-runtime64.so.1");
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: loading the runtime library by path.
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!lib.is_null(), "cannot load {}", path.display());
        Api { lib }
    }

    fn sym<F: Copy>(&self, name: &str) -> F {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        let c = CString::new(name).unwrap();
        // SAFETY: live handle, NUL-terminated name.
        let p = unsafe { libc::dlsym(self.lib, c.as_ptr()) };
        assert!(!p.is_null(), "the runtime does not export {name}");
        // SAFETY: `F` is the function-pointer type of the symbol, pointer-sized (checked).
        unsafe { std::mem::transmute_copy(&p) }
    }
}

unsafe extern "C" fn empty_kernel(
    _packet: *const hsa_kernel_dispatch_packet_t,
    _user_data: *mut c_void,
) {
}

unsafe extern "C" fn pick_gpu(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the `(get_info, out)` pair passed by `bench`.
    let (get_info, out) = unsafe { &mut *data.cast::<(hsa_agent_get_info_fn_t, hsa_agent_t)>() };
    let mut device: u32 = 0;
    // SAFETY: the runtime's hsa_agent_get_info with a valid out-pointer.
    unsafe { get_info.unwrap()(agent, HSA_AGENT_INFO_DEVICE, (&raw mut device).cast()) };
    if device == HSA_DEVICE_TYPE_GPU && out.handle == 0 {
        *out = agent;
    }
    HSA_STATUS_SUCCESS
}

unsafe extern "C" fn first_pool(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the pool slot passed by `bench`.
    let out = unsafe { &mut *data.cast::<hsa_amd_memory_pool_t>() };
    if out.handle == 0 {
        *out = pool;
    }
    HSA_STATUS_SUCCESS
}

/// Link bandwidth for the copy group, in GB/s.
const LINK_GBPS: &str = "4";

fn bench(c: &mut Criterion) {
    // SAFETY: set before any thread of the runtime exists; read once by the runtime.
    unsafe { std::env::set_var("VHSA_LINK_GBPS", LINK_GBPS) };
    let api = Api::load();
    let init: hsa_init_fn_t = api.sym("hsa_init");
    let iterate: hsa_iterate_agents_fn_t = api.sym("hsa_iterate_agents");
    let get_info: hsa_agent_get_info_fn_t = api.sym("hsa_agent_get_info");
    let queue_create: hsa_queue_create_fn_t = api.sym("hsa_queue_create");
    let signal_create: hsa_signal_create_fn_t = api.sym("hsa_signal_create");
    let signal_store: hsa_signal_store_relaxed_fn_t = api.sym("hsa_signal_store_screlease");
    let signal_wait: hsa_signal_wait_scacquire_fn_t = api.sym("hsa_signal_wait_scacquire");
    let add_write_index: hsa_queue_add_write_index_relaxed_fn_t =
        api.sym("hsa_queue_add_write_index_relaxed");
    type Create = unsafe extern "C" fn(
        *const std::ffi::c_char,
        Option<unsafe extern "C" fn(*const hsa_kernel_dispatch_packet_t, *mut c_void)>,
        *mut c_void,
    ) -> u64;
    let native_create: Create = api.sym("vhsa_native_kernel_create");

    // SAFETY: calls into the runtime's C API with valid arguments.
    unsafe {
        assert_eq!(init.unwrap()(), HSA_STATUS_SUCCESS);
        let mut pick = (get_info, hsa_agent_t { handle: 0 });
        iterate.unwrap()(Some(pick_gpu), (&raw mut pick).cast());
        let gpu = pick.1;
        assert_ne!(gpu.handle, 0, "no GPU agent");
        let mut queue: *mut hsa_queue_t = std::ptr::null_mut();
        assert_eq!(
            queue_create.unwrap()(
                gpu,
                4096,
                HSA_QUEUE_TYPE_SINGLE,
                None,
                std::ptr::null_mut(),
                0,
                0,
                &mut queue
            ),
            HSA_STATUS_SUCCESS
        );
        let mut done = hsa_signal_t { handle: 0 };
        assert_eq!(
            signal_create.unwrap()(0, 0, std::ptr::null(), &mut done),
            HSA_STATUS_SUCCESS
        );
        let kernel = native_create(c"empty".as_ptr(), Some(empty_kernel), std::ptr::null_mut());
        let q = &*queue;

        // One batch: `batch` dispatches written, the doorbell rung once, the last one waited for.
        let run_batch = |batch: u64| {
            signal_store.unwrap()(done, 1);
            let base = add_write_index.unwrap()(queue, batch);
            for i in 0..batch {
                let idx = base + i;
                let slot = q
                    .base_address
                    .cast::<u8>()
                    .add((idx % u64::from(q.size)) as usize * 64);
                let mut p = hsa_kernel_dispatch_packet_t {
                    workgroup_size_x: 1,
                    workgroup_size_y: 1,
                    workgroup_size_z: 1,
                    grid_size_x: 1,
                    grid_size_y: 1,
                    grid_size_z: 1,
                    kernel_object: kernel,
                    ..Default::default()
                };
                if i + 1 == batch {
                    p.completion_signal = done;
                }
                std::ptr::copy_nonoverlapping((&raw const p).cast::<u8>().add(4), slot.add(4), 60);
                let header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
                let setup = 1u32 << 16;
                AtomicU32::from_ptr(slot.cast::<u32>()).store(header | setup, Ordering::Release);
            }
            signal_store.unwrap()(q.doorbell_signal, (base + batch - 1) as i64);
            let v = signal_wait.unwrap()(
                done,
                HSA_SIGNAL_CONDITION_EQ,
                0,
                u64::MAX,
                HSA_WAIT_STATE_BLOCKED,
            );
            assert_eq!(v, 0);
        };
        let mut group = c.benchmark_group("native_dispatch");
        for batch in [64u64, 1024] {
            group.throughput(Throughput::Elements(batch));
            group.bench_with_input(
                BenchmarkId::new("one_queue_batch", batch),
                &batch,
                |b, &batch| b.iter(|| run_batch(batch)),
            );
        }
        // The round trip of one dispatch, alone and beside as many busy host threads as there
        // are cores (a shared machine): a waiter that gives its core away waits for a time slice.
        group.throughput(Throughput::Elements(1));
        group.bench_function("round_trip_alone", |b| b.iter(|| run_batch(1)));
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..std::thread::available_parallelism().map_or(1, |n| n.get()) {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            group.bench_function("round_trip_beside_busy_threads", |b| {
                b.iter(|| run_batch(1))
            });
            stop.store(true, Ordering::Relaxed);
        });
        group.finish();

        // Copy bandwidth: host<->device is throttled by the link model, device<->device is not.
        let iterate_pools: hsa_amd_agent_iterate_memory_pools_fn_t =
            api.sym("hsa_amd_agent_iterate_memory_pools");
        let allocate: hsa_amd_memory_pool_allocate_fn_t = api.sym("hsa_amd_memory_pool_allocate");
        let copy: hsa_memory_copy_fn_t = api.sym("hsa_memory_copy");
        let mut pool = hsa_amd_memory_pool_t { handle: 0 };
        iterate_pools.unwrap()(gpu, Some(first_pool), (&raw mut pool).cast());
        const BYTES: usize = 16 << 20;
        let mut dev_a: *mut c_void = std::ptr::null_mut();
        let mut dev_b: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            allocate.unwrap()(pool, BYTES, 0, &mut dev_a),
            HSA_STATUS_SUCCESS
        );
        assert_eq!(
            allocate.unwrap()(pool, BYTES, 0, &mut dev_b),
            HSA_STATUS_SUCCESS
        );
        let mut host = vec![1u8; BYTES];
        let mut group = c.benchmark_group(format!("copy_16MiB_link_{LINK_GBPS}GBps"));
        group.throughput(Throughput::Bytes(BYTES as u64));
        group.sample_size(20);
        group.bench_function("host_to_device", |b| {
            b.iter(|| {
                assert_eq!(
                    copy.unwrap()(dev_a, host.as_ptr().cast(), BYTES),
                    HSA_STATUS_SUCCESS
                )
            })
        });
        group.bench_function("device_to_host", |b| {
            b.iter(|| {
                assert_eq!(
                    copy.unwrap()(host.as_mut_ptr().cast(), dev_a, BYTES),
                    HSA_STATUS_SUCCESS
                )
            })
        });
        group.bench_function("device_to_device", |b| {
            b.iter(|| assert_eq!(copy.unwrap()(dev_b, dev_a, BYTES), HSA_STATUS_SUCCESS))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
