//! `OnLoad`/`OnUnload` against a hand-built API table (no runtime): table validation, the
//! allocation wrappers' classification, and calls that arrive after `OnUnload`.
//!
//! One test function: the tool's state machine is per process and these steps are ordered.

use hsa_abi::ffi::{self, hsa_agent_t, hsa_amd_memory_pool_t, hsa_status_t};
use hsa_abi::{AmdExtTable, ApiTableVersion, CoreApiTable, HsaApiTable};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const COARSE_POOL: u64 = 1;
const KERNARG_POOL: u64 = 2;
const GPU: u64 = 7;

static NEXT_PTR: AtomicUsize = AtomicUsize::new(0x10000);
static POINTER_QUERIES: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
/// Pool of each fake allocation, by address.
static POOLS: std::sync::Mutex<Vec<(usize, u64)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn unused() -> hsa_status_t {
    panic!("a table entry the test does not expect was called")
}

fn unused_entry<F>() -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
    // SAFETY: `F` is an `Option<fn>` of pointer size; the entry is never called.
    unsafe { std::mem::transmute_copy(&(unused as unsafe extern "C" fn() -> hsa_status_t)) }
}

unsafe extern "C" fn pool_allocate(
    pool: hsa_amd_memory_pool_t,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> hsa_status_t {
    let p = NEXT_PTR.fetch_add(size.max(4096), Ordering::SeqCst);
    POOLS.lock().unwrap().push((p, pool.handle));
    // SAFETY: out-pointer from the caller.
    unsafe { *ptr = p as *mut c_void };
    ffi::HSA_STATUS_SUCCESS
}

unsafe extern "C" fn free(_ptr: *mut c_void) -> hsa_status_t {
    FREES.fetch_add(1, Ordering::SeqCst);
    ffi::HSA_STATUS_SUCCESS
}

unsafe extern "C" fn pointer_info(
    ptr: *const c_void,
    info: *mut ffi::hsa_amd_pointer_info_t,
    _alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    _n: *mut u32,
    _agents: *mut *mut hsa_agent_t,
) -> hsa_status_t {
    POINTER_QUERIES.fetch_add(1, Ordering::SeqCst);
    let pool = POOLS
        .lock()
        .unwrap()
        .iter()
        .find(|(p, _)| *p == ptr as usize)
        .map(|(_, pool)| *pool);
    // SAFETY: out-pointer from the caller, with `size` set.
    let info = unsafe { &mut *info };
    assert_eq!(
        info.size as usize,
        std::mem::size_of::<ffi::hsa_amd_pointer_info_t>()
    );
    info.type_ = ffi::HSA_EXT_POINTER_TYPE_HSA;
    info.agentBaseAddress = ptr as *mut c_void;
    info.sizeInBytes = 4096;
    info.agentOwner = hsa_agent_t { handle: GPU };
    info.global_flags = match pool {
        Some(COARSE_POOL) => ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        _ => {
            ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
                | ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
        }
    };
    ffi::HSA_STATUS_SUCCESS
}

static AGENT_QUERIES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn agent_get_info(
    agent: hsa_agent_t,
    attr: ffi::hsa_agent_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    assert_eq!(attr, ffi::HSA_AGENT_INFO_DEVICE);
    AGENT_QUERIES.fetch_add(1, Ordering::SeqCst);
    // SAFETY: HSA_AGENT_INFO_DEVICE writes one hsa_device_type_t.
    unsafe {
        *value.cast::<ffi::hsa_device_type_t>() = if agent.handle == GPU {
            ffi::HSA_DEVICE_TYPE_GPU
        } else {
            ffi::HSA_DEVICE_TYPE_CPU
        }
    };
    ffi::HSA_STATUS_SUCCESS
}

fn version<T>(major: u32) -> ApiTableVersion {
    ApiTableVersion {
        major_id: major,
        minor_id: std::mem::size_of::<T>() as u32,
        step_id: 0,
        reserved: 0,
    }
}

fn tables() -> (Box<CoreApiTable>, Box<AmdExtTable>) {
    // SAFETY: every field after the version is a nullable function pointer; all-zero is valid.
    let mut core: Box<CoreApiTable> = Box::new(unsafe { std::mem::zeroed() });
    // SAFETY: as above.
    let mut amd: Box<AmdExtTable> = Box::new(unsafe { std::mem::zeroed() });
    core.version = version::<CoreApiTable>(2);
    amd.version = version::<AmdExtTable>(2);
    core.hsa_queue_create_fn = unused_entry();
    core.hsa_queue_destroy_fn = unused_entry();
    core.hsa_memory_allocate_fn = unused_entry();
    core.hsa_memory_free_fn = Some(free);
    core.hsa_memory_copy_fn = unused_entry();
    core.hsa_signal_destroy_fn = unused_entry();
    core.hsa_signal_load_scacquire_fn = unused_entry();
    core.hsa_signal_store_relaxed_fn = unused_entry();
    core.hsa_signal_store_screlease_fn = unused_entry();
    core.hsa_signal_silent_store_relaxed_fn = unused_entry();
    core.hsa_signal_silent_store_screlease_fn = unused_entry();
    core.hsa_signal_add_screlease_fn = unused_entry();
    core.hsa_signal_subtract_screlease_fn = unused_entry();
    core.hsa_signal_wait_scacquire_fn = unused_entry();
    core.hsa_agent_get_info_fn = Some(agent_get_info);
    core.hsa_executable_iterate_agent_symbols_fn = unused_entry();
    core.hsa_executable_symbol_get_info_fn = unused_entry();
    core.hsa_system_get_major_extension_table_fn = unused_entry();
    core.hsa_executable_destroy_fn = unused_entry();
    core.hsa_executable_freeze_fn = unused_entry();
    amd.hsa_amd_agents_allow_access_fn = unused_entry();
    amd.hsa_amd_memory_pool_allocate_fn = Some(pool_allocate);
    amd.hsa_amd_memory_pool_free_fn = Some(free);
    amd.hsa_amd_pointer_info_fn = Some(pointer_info);
    amd.hsa_amd_signal_create_fn = unused_entry();
    amd.hsa_amd_signal_async_handler_fn = unused_entry();
    amd.hsa_amd_queue_intercept_create_fn = unused_entry();
    amd.hsa_amd_queue_intercept_register_fn = unused_entry();
    amd.hsa_amd_profiling_set_profiler_enabled_fn = unused_entry();
    amd.hsa_amd_profiling_get_dispatch_time_fn = unused_entry();
    amd.hsa_amd_profiling_convert_tick_to_system_domain_fn = unused_entry();
    (core, amd)
}

fn root(major: u32, core: &mut CoreApiTable, amd: &mut AmdExtTable) -> HsaApiTable {
    HsaApiTable {
        version: version::<HsaApiTable>(major),
        core_: core,
        amd_ext_: amd,
        finalizer_ext_: std::ptr::null_mut(),
        image_ext_: std::ptr::null_mut(),
        tools_: std::ptr::null_mut(),
        pc_sampling_ext_: std::ptr::null_mut(),
    }
}

fn alloc(amd: &AmdExtTable, pool: u64, flags: u32) -> *mut c_void {
    let mut p = std::ptr::null_mut();
    // SAFETY: the installed entry with a valid out-pointer.
    let st = unsafe {
        amd.hsa_amd_memory_pool_allocate_fn.unwrap()(
            hsa_amd_memory_pool_t { handle: pool },
            4096,
            flags,
            &mut p,
        )
    };
    assert_eq!(st, ffi::HSA_STATUS_SUCCESS);
    p
}

#[test]
fn load_validate_track_unload() {
    let inventory = &kreplay::replay::INVENTORY;
    let (mut core, mut amd) = tables();
    let fake_free = core.hsa_memory_free_fn.map(|f| f as usize);

    // A root major older than ROCm 5.0 (1): declined, nothing installed.
    let mut old = root(0, &mut core, &mut amd);
    // SAFETY: a complete fake table.
    assert!(!unsafe { kreplay::intercept::OnLoad(&mut old, 0, 0, std::ptr::null()) });
    assert_eq!(
        core.hsa_memory_free_fn.map(|f| f as usize),
        fake_free,
        "a declined load leaves the table alone"
    );

    // A core table shorter than the slots the tool needs: declined.
    core.version.minor_id = 64;
    let mut short = root(3, &mut core, &mut amd);
    // SAFETY: as above.
    assert!(!unsafe { kreplay::intercept::OnLoad(&mut short, 3, 0, std::ptr::null()) });
    core.version.minor_id = std::mem::size_of::<CoreApiTable>() as u32;

    let mut table = root(3, &mut core, &mut amd);
    // SAFETY: as above.
    assert!(unsafe { kreplay::intercept::OnLoad(&mut table, 3, 0, std::ptr::null()) });
    assert_ne!(
        core.hsa_memory_free_fn.map(|f| f as usize),
        fake_free,
        "the free entry is wrapped"
    );

    // Coarse-grained device memory is tracked.
    let tracked = alloc(&amd, COARSE_POOL, 0);
    assert_eq!(
        inventory
            .owned_by(GPU)
            .iter()
            .map(|a| a.base)
            .collect::<Vec<_>>(),
        vec![tracked as usize]
    );
    // EXECUTABLE allocations are skipped before the pointer query.
    let queries = POINTER_QUERIES.load(Ordering::SeqCst);
    alloc(
        &amd,
        COARSE_POOL,
        hsa_abi::modern::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG,
    );
    assert_eq!(
        POINTER_QUERIES.load(Ordering::SeqCst),
        queries,
        "no pointer query for EXECUTABLE memory"
    );
    // Kernarg memory is queried and not tracked.
    alloc(&amd, KERNARG_POOL, 0);
    assert_eq!(inventory.len(), 1);

    // A free of an unknown pointer is harmless and still reaches the runtime.
    // SAFETY: installed entries.
    unsafe {
        assert_eq!(
            amd.hsa_amd_memory_pool_free_fn.unwrap()(0xdead0 as *mut c_void),
            ffi::HSA_STATUS_SUCCESS
        );
        assert_eq!(FREES.load(Ordering::SeqCst), 1);
        assert_eq!(
            core.hsa_memory_free_fn.unwrap()(tracked),
            ffi::HSA_STATUS_SUCCESS
        );
    }
    assert_eq!(inventory.len(), 0, "a free forgets the allocation");
    // With the replay service off (no client at the first dispatch) allocations are still
    // recorded: a client may register later and needs the complete inventory.
    kreplay::state::settle_service_off();
    assert_eq!(
        kreplay::state::service(),
        kreplay::state::ReplayService::Off
    );
    let late = alloc(&amd, COARSE_POOL, 0);
    assert_eq!(inventory.len(), 1, "recorded while the service is off");
    assert_eq!(
        AGENT_QUERIES.load(Ordering::SeqCst),
        1,
        "the owning agent's kind is asked of the runtime once, then cached"
    );

    kreplay::intercept::OnUnload();
    assert_eq!(
        kreplay::state::current(),
        kreplay::state::ToolState::Finished
    );
    // Late destructors: calls after OnUnload chain to the runtime and do nothing else.
    // SAFETY: installed entries.
    unsafe {
        assert_eq!(
            amd.hsa_amd_memory_pool_free_fn.unwrap()(late),
            ffi::HSA_STATUS_SUCCESS
        );
        assert_eq!(
            core.hsa_memory_free_fn.unwrap()(0xbeef0 as *mut c_void),
            ffi::HSA_STATUS_SUCCESS
        );
    }
    assert_eq!(FREES.load(Ordering::SeqCst), 4);
    let queries = POINTER_QUERIES.load(Ordering::SeqCst);
    alloc(&amd, COARSE_POOL, 0);
    assert_eq!(
        POINTER_QUERIES.load(Ordering::SeqCst),
        queries,
        "nothing is recorded after OnUnload"
    );

    // A new runtime instance (hsa_init after hsa_shut_down) loads the tool again; what the tool
    // knew about the previous instance is forgotten.
    let (mut core2, mut amd2) = tables();
    let mut again = root(3, &mut core2, &mut amd2);
    // SAFETY: as above.
    assert!(unsafe { kreplay::intercept::OnLoad(&mut again, 3, 0, std::ptr::null()) });
    assert_eq!(kreplay::state::current(), kreplay::state::ToolState::Active);
    assert_eq!(
        inventory.len(),
        0,
        "allocations of the previous runtime instance are forgotten"
    );
    assert_eq!(
        kreplay::state::service(),
        kreplay::state::ReplayService::Undecided,
        "the replay service is decided again"
    );
    let tracked = alloc(&amd2, COARSE_POOL, 0);
    assert_eq!(
        inventory
            .owned_by(GPU)
            .iter()
            .map(|a| a.base)
            .collect::<Vec<_>>(),
        vec![tracked as usize]
    );
    // A second OnLoad within one runtime instance is declined and changes nothing.
    let mut twice = root(3, &mut core2, &mut amd2);
    // SAFETY: as above.
    assert!(!unsafe { kreplay::intercept::OnLoad(&mut twice, 3, 0, std::ptr::null()) });
    kreplay::intercept::OnUnload();
    assert_eq!(
        kreplay::state::current(),
        kreplay::state::ToolState::Finished
    );
}
