//! Executables, code objects and the AMD loader extension, through the C API of the built
//! library (`libhsa-runtime64.so.1`, loaded with `dlopen` as applications load it).
//!
//! Code objects are built from `tests/device/counter.hip` by clang for gfx942 and gfx90a.
//! The runtime runs with `VHSA_AGENTS=gfx942,gfx90a` (one CPU agent, then the two GPUs).
//! Tests share one process-wide runtime and take [`serial`] so that counts over all loaded
//! code objects are not disturbed by another test loading at the same time.

mod in_process;

use hsa_abi::ffi::*;
use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

// ---------------------------------------------------------------- the runtime under test

struct Runtime {
    cpu: hsa_agent_t,
    gfx942: hsa_agent_t,
    gfx90a: hsa_agent_t,
    co_gfx942: PathBuf,
    co_gfx90a: PathBuf,
}

/// Looks `name` up in the runtime library (after the runtime is set up by [`runtime`]).
fn sym<F: Copy>(name: &str) -> F {
    runtime();
    test_support::vhsa_symbol(name)
}

macro_rules! hsa {
    ($name:ident ( $($arg:expr),* $(,)? )) => {{
        let f: paste_fn_t!($name) = sym(stringify!($name));
        // SAFETY: calling the runtime's exported function with arguments of its C signature.
        unsafe { f.expect(stringify!($name))($($arg),*) }
    }};
}

/// The `_fn_t` typedef hsa-abi generates for each header-declared function.
macro_rules! paste_fn_t {
    (hsa_init) => {
        hsa_init_fn_t
    };
    (hsa_iterate_agents) => {
        hsa_iterate_agents_fn_t
    };
    (hsa_agent_get_info) => {
        hsa_agent_get_info_fn_t
    };
    (hsa_code_object_reader_create_from_file) => {
        hsa_code_object_reader_create_from_file_fn_t
    };
    (hsa_code_object_reader_create_from_memory) => {
        hsa_code_object_reader_create_from_memory_fn_t
    };
    (hsa_code_object_reader_destroy) => {
        hsa_code_object_reader_destroy_fn_t
    };
    (hsa_executable_create_alt) => {
        hsa_executable_create_alt_fn_t
    };
    (hsa_executable_create) => {
        hsa_executable_create_fn_t
    };
    (hsa_executable_destroy) => {
        hsa_executable_destroy_fn_t
    };
    (hsa_executable_load_agent_code_object) => {
        hsa_executable_load_agent_code_object_fn_t
    };
    (hsa_executable_freeze) => {
        hsa_executable_freeze_fn_t
    };
    (hsa_executable_get_info) => {
        hsa_executable_get_info_fn_t
    };
    (hsa_executable_validate) => {
        hsa_executable_validate_fn_t
    };
    (hsa_executable_get_symbol_by_name) => {
        hsa_executable_get_symbol_by_name_fn_t
    };
    (hsa_executable_get_symbol) => {
        hsa_executable_get_symbol_fn_t
    };
    (hsa_executable_symbol_get_info) => {
        hsa_executable_symbol_get_info_fn_t
    };
    (hsa_executable_iterate_symbols) => {
        hsa_executable_iterate_symbols_fn_t
    };
    (hsa_executable_iterate_agent_symbols) => {
        hsa_executable_iterate_agent_symbols_fn_t
    };
    (hsa_executable_iterate_program_symbols) => {
        hsa_executable_iterate_program_symbols_fn_t
    };
    (hsa_system_get_major_extension_table) => {
        hsa_system_get_major_extension_table_fn_t
    };
    (hsa_system_get_extension_table) => {
        hsa_system_get_extension_table_fn_t
    };
    (hsa_queue_create) => {
        hsa_queue_create_fn_t
    };
    (hsa_queue_destroy) => {
        hsa_queue_destroy_fn_t
    };
    (hsa_queue_add_write_index_relaxed) => {
        hsa_queue_add_write_index_relaxed_fn_t
    };
    (hsa_signal_create) => {
        hsa_signal_create_fn_t
    };
    (hsa_amd_memory_lock) => {
        hsa_amd_memory_lock_fn_t
    };
    (hsa_amd_memory_unlock) => {
        hsa_amd_memory_unlock_fn_t
    };
    (hsa_signal_destroy) => {
        hsa_signal_destroy_fn_t
    };
    (hsa_signal_store_screlease) => {
        hsa_signal_store_screlease_fn_t
    };
    (hsa_signal_wait_scacquire) => {
        hsa_signal_wait_scacquire_fn_t
    };
}

type NativeKernelFn =
    Option<unsafe extern "C" fn(*const hsa_kernel_dispatch_packet_t, *mut c_void)>;
type NativeKernelCreate =
    Option<unsafe extern "C" fn(*const std::ffi::c_char, NativeKernelFn, *mut c_void) -> u64>;
type FaultFailSymbolIteration = Option<unsafe extern "C" fn(bool)>;
type HostAddress = Option<unsafe extern "C" fn(*const c_void) -> *mut c_void>;

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let dir = test_support::scratch_dir("vhsa-executables");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/device/counter.hip");
        let co_gfx942 = dir.join("counter-gfx942.co");
        let co_gfx90a = dir.join("counter-gfx90a.co");
        test_support::build_code_object(&src, "gfx942", &co_gfx942);
        test_support::build_code_object(&src, "gfx90a", &co_gfx90a);

        let agents = in_process::agents();
        Runtime {
            cpu: agents[0],
            gfx942: agents[1],
            gfx90a: agents[2],
            co_gfx942,
            co_gfx90a,
        }
    })
}

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    runtime();
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------- helpers

fn agent_name(agent: hsa_agent_t) -> String {
    let mut name = [0u8; 64];
    assert_eq!(
        hsa!(hsa_agent_get_info(
            agent,
            HSA_AGENT_INFO_NAME,
            name.as_mut_ptr().cast()
        )),
        HSA_STATUS_SUCCESS
    );
    String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap()]).into_owned()
}

fn reader_from_memory(bytes: &[u8]) -> Result<hsa_code_object_reader_t, hsa_status_t> {
    let mut r = hsa_code_object_reader_t { handle: 0 };
    match hsa!(hsa_code_object_reader_create_from_memory(
        bytes.as_ptr().cast(),
        bytes.len(),
        &mut r
    )) {
        HSA_STATUS_SUCCESS => Ok(r),
        s => Err(s),
    }
}

fn reader_from_file(path: &Path) -> hsa_code_object_reader_t {
    use std::os::fd::AsRawFd as _;
    let file = std::fs::File::open(path).unwrap();
    let mut r = hsa_code_object_reader_t { handle: 0 };
    assert_eq!(
        hsa!(hsa_code_object_reader_create_from_file(
            file.as_raw_fd(),
            &mut r
        )),
        HSA_STATUS_SUCCESS
    );
    r
}

fn new_executable() -> hsa_executable_t {
    let mut e = hsa_executable_t { handle: 0 };
    let st = hsa!(hsa_executable_create_alt(
        HSA_PROFILE_FULL,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        std::ptr::null(),
        &mut e
    ));
    assert_eq!(st, HSA_STATUS_SUCCESS);
    e
}

fn load(
    exec: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
) -> Result<hsa_loaded_code_object_t, hsa_status_t> {
    let mut lco = hsa_loaded_code_object_t { handle: 0 };
    match hsa!(hsa_executable_load_agent_code_object(
        exec,
        agent,
        reader,
        std::ptr::null(),
        &mut lco
    )) {
        HSA_STATUS_SUCCESS => Ok(lco),
        s => Err(s),
    }
}

/// An executable with `co` loaded for `agent` and frozen.
fn loaded(
    co: &Path,
    agent: hsa_agent_t,
) -> (
    hsa_executable_t,
    hsa_code_object_reader_t,
    hsa_loaded_code_object_t,
) {
    let reader = reader_from_file(co);
    let exec = new_executable();
    let lco = load(exec, agent, reader).expect("load code object");
    assert_eq!(
        hsa!(hsa_executable_freeze(exec, std::ptr::null())),
        HSA_STATUS_SUCCESS
    );
    (exec, reader, lco)
}

fn destroy(exec: hsa_executable_t, reader: hsa_code_object_reader_t) {
    assert_eq!(hsa!(hsa_executable_destroy(exec)), HSA_STATUS_SUCCESS);
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(reader)),
        HSA_STATUS_SUCCESS
    );
}

fn symbol(
    exec: hsa_executable_t,
    name: &str,
    agent: hsa_agent_t,
) -> Result<hsa_executable_symbol_t, hsa_status_t> {
    let c = CString::new(name).unwrap();
    let mut s = hsa_executable_symbol_t { handle: 0 };
    match hsa!(hsa_executable_get_symbol_by_name(
        exec,
        c.as_ptr(),
        &agent,
        &mut s
    )) {
        HSA_STATUS_SUCCESS => Ok(s),
        st => Err(st),
    }
}

fn info<T: Copy + Default>(
    s: hsa_executable_symbol_t,
    attr: hsa_executable_symbol_info_t,
) -> Result<T, hsa_status_t> {
    let mut v = T::default();
    match hsa!(hsa_executable_symbol_get_info(s, attr, (&raw mut v).cast())) {
        HSA_STATUS_SUCCESS => Ok(v),
        st => Err(st),
    }
}

fn name_of(s: hsa_executable_symbol_t) -> String {
    let len: u32 = info(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH).unwrap();
    // One spare byte that must stay untouched: the name is written without a NUL.
    let mut buf = vec![0xAAu8; len as usize + 1];
    assert_eq!(
        hsa!(hsa_executable_symbol_get_info(
            s,
            HSA_EXECUTABLE_SYMBOL_INFO_NAME,
            buf.as_mut_ptr().cast()
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(buf[len as usize], 0xAA, "NAME wrote past NAME_LENGTH bytes");
    String::from_utf8(buf[..len as usize].to_vec()).unwrap()
}

/// (name, kind, agent) of the symbols an agent-symbol iteration reports.
fn agent_symbols(
    exec: hsa_executable_t,
    agent: hsa_agent_t,
) -> Result<Vec<(String, hsa_symbol_kind_t, u64)>, hsa_status_t> {
    unsafe extern "C" fn cb(
        _e: hsa_executable_t,
        agent: hsa_agent_t,
        s: hsa_executable_symbol_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the Vec below.
        unsafe { (*data.cast::<Vec<(hsa_agent_t, hsa_executable_symbol_t)>>()).push((agent, s)) };
        HSA_STATUS_SUCCESS
    }
    let mut found: Vec<(hsa_agent_t, hsa_executable_symbol_t)> = Vec::new();
    let st = hsa!(hsa_executable_iterate_agent_symbols(
        exec,
        agent,
        Some(cb),
        (&raw mut found).cast()
    ));
    if st != HSA_STATUS_SUCCESS {
        return Err(st);
    }
    Ok(found
        .into_iter()
        .map(|(a, s)| {
            assert_eq!(a.handle, agent.handle);
            let sym_agent: u64 = info(s, HSA_EXECUTABLE_SYMBOL_INFO_AGENT).unwrap();
            assert_eq!(sym_agent, agent.handle);
            (
                name_of(s),
                info(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE).unwrap(),
                sym_agent,
            )
        })
        .collect())
}

fn read_u32(address: u64) -> u32 {
    // SAFETY: device memory of vhsa is host memory; the address is a loaded variable.
    unsafe { (address as *const u32).read_volatile() }
}

fn loader_table() -> hsa_ven_amd_loader_1_03_pfn_t {
    // SAFETY: all-zero is a valid value (every entry NULL).
    let mut t: hsa_ven_amd_loader_1_03_pfn_t = unsafe { std::mem::zeroed() };
    let st = hsa!(hsa_system_get_major_extension_table(
        HSA_EXTENSION_AMD_LOADER as u16,
        1,
        std::mem::size_of_val(&t),
        (&raw mut t).cast()
    ));
    assert_eq!(st, HSA_STATUS_SUCCESS);
    t
}

fn executables(t: &hsa_ven_amd_loader_1_03_pfn_t) -> Result<Vec<u64>, hsa_status_t> {
    unsafe extern "C" fn cb(e: hsa_executable_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the Vec below.
        unsafe { (*data.cast::<Vec<u64>>()).push(e.handle) };
        HSA_STATUS_SUCCESS
    }
    let mut v: Vec<u64> = Vec::new();
    // SAFETY: the loader table's entry, called per its C signature.
    let st =
        unsafe { t.hsa_ven_amd_loader_iterate_executables.unwrap()(Some(cb), (&raw mut v).cast()) };
    if st == HSA_STATUS_SUCCESS {
        Ok(v)
    } else {
        Err(st)
    }
}

// ---------------------------------------------------------------- tests

#[test]
fn gfx942_code_object_reports_kernels_and_variables() {
    let _g = serial();
    let rt = runtime();
    assert_eq!(agent_name(rt.gfx942), "gfx942");
    let (exec, reader, _) = loaded(&rt.co_gfx942, rt.gfx942);

    let mut state = 0u32;
    assert_eq!(
        hsa!(hsa_executable_get_info(
            exec,
            HSA_EXECUTABLE_INFO_STATE,
            (&raw mut state).cast()
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(state, HSA_EXECUTABLE_STATE_FROZEN);
    let mut valid = 7u32;
    assert_eq!(
        hsa!(hsa_executable_validate(exec, &mut valid)),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(valid, 0);

    // Kernels: `increment(uint32_t*, uint32_t)` with a 64-word __shared__ tile, and
    // `scatter(const uint32_t*, uint32_t, uint64_t)` (8 + 4 + 4 padding + 8 bytes of arguments).
    let inc = symbol(exec, "increment.kd", rt.gfx942).unwrap();
    assert_eq!(name_of(inc), "increment.kd");
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_TYPE),
        Ok(HSA_SYMBOL_KIND_KERNEL)
    );
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE),
        Ok(12)
    );
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE),
        Ok(256)
    );
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE),
        Ok(0)
    );
    assert_eq!(
        info::<bool>(inc, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK),
        Ok(false)
    );
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE),
        Ok(HSA_SYMBOL_LINKAGE_PROGRAM)
    );
    assert_eq!(
        info::<u32>(inc, HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH),
        Ok(0)
    );
    assert_eq!(
        info::<bool>(inc, HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION),
        Ok(true)
    );
    let inc_object: u64 = info(inc, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT).unwrap();
    assert!(
        inc_object != 0 && inc_object.is_multiple_of(64),
        "kernel object {inc_object:#x} is a 64-byte aligned descriptor"
    );
    // The kernel object is the loaded descriptor: its first word is the group segment size.
    assert_eq!(read_u32(inc_object), 256);
    assert_eq!(read_u32(inc_object + 8), 12);

    let scatter = symbol(exec, "scatter.kd", rt.gfx942).unwrap();
    assert_eq!(
        info::<u32>(
            scatter,
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE
        ),
        Ok(24)
    );
    assert_eq!(
        info::<u32>(
            scatter,
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE
        ),
        Ok(0)
    );
    let scatter_object: u64 = info(scatter, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT).unwrap();
    assert_ne!(scatter_object, inc_object);

    // Variables: initialised .data, zeroed .bss and read-only .rodata.
    let counter = symbol(exec, "counter", rt.gfx942).unwrap();
    assert_eq!(
        info::<u32>(counter, HSA_EXECUTABLE_SYMBOL_INFO_TYPE),
        Ok(HSA_SYMBOL_KIND_VARIABLE)
    );
    assert_eq!(
        info::<u32>(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE),
        Ok(4)
    );
    assert_eq!(
        info::<bool>(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST),
        Ok(false)
    );
    assert_eq!(
        info::<u32>(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT),
        Ok(HSA_VARIABLE_SEGMENT_GLOBAL)
    );
    assert_eq!(
        info::<u32>(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION),
        Ok(HSA_VARIABLE_ALLOCATION_AGENT)
    );
    let counter_addr: u64 = info(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    // The alignment of the section holding it (as ROCR reports), which the address honours.
    let align: u32 = info(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT).unwrap();
    assert!(align >= 4 && align.is_power_of_two(), "alignment {align}");
    assert_eq!(counter_addr % u64::from(align), 0);
    assert_eq!(
        read_u32(counter_addr),
        7,
        "counter starts with its initializer from .data"
    );

    // A pointer initialised with `&counter` holds counter's loaded address (relocated).
    let pointer = symbol(exec, "counter_address", rt.gfx942).unwrap();
    assert_eq!(
        info::<u32>(pointer, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE),
        Ok(8)
    );
    let pointer_addr: u64 = info(pointer, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    // SAFETY: an 8-byte variable in loaded agent memory.
    assert_eq!(
        unsafe { (pointer_addr as *const u64).read_volatile() },
        counter_addr
    );

    let histogram = symbol(exec, "histogram", rt.gfx942).unwrap();
    assert_eq!(
        info::<u32>(histogram, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE),
        Ok(128)
    );
    let hist_addr: u64 = info(histogram, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    for i in 0..32 {
        assert_eq!(read_u32(hist_addr + 4 * i), 0, ".bss is zero-filled");
    }

    let lookup = symbol(exec, "lookup", rt.gfx942).unwrap();
    assert_eq!(
        info::<u32>(lookup, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE),
        Ok(16)
    );
    assert_eq!(
        info::<bool>(lookup, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST),
        Ok(true)
    );
    assert_eq!(
        info::<u32>(lookup, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT),
        Ok(HSA_VARIABLE_SEGMENT_READONLY)
    );
    let lookup_addr: u64 = info(lookup, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    let values: Vec<u32> = (0..4).map(|i| read_u32(lookup_addr + 4 * i)).collect();
    assert_eq!(values, [11, 22, 33, 44]);

    // The variables are writable agent memory.
    // SAFETY: `counter` is a 4-byte variable in loaded agent memory.
    unsafe { (counter_addr as *mut u32).write_volatile(41) };
    assert_eq!(read_u32(counter_addr), 41);

    // Attributes of the other kind are rejected.
    assert_eq!(
        info::<u64>(counter, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT),
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );
    assert_eq!(
        info::<u64>(inc, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS),
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );
    assert_eq!(
        info::<u64>(inc, HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_OBJECT),
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );

    // The legacy lookup finds the same symbol.
    let mut legacy = hsa_executable_symbol_t { handle: 0 };
    let name = CString::new("counter").unwrap();
    assert_eq!(
        hsa!(hsa_executable_get_symbol(
            exec,
            std::ptr::null(),
            name.as_ptr(),
            rt.gfx942,
            0,
            &mut legacy
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(legacy.handle, counter.handle);

    destroy(exec, reader);
    assert_eq!(
        info::<u32>(counter, HSA_EXECUTABLE_SYMBOL_INFO_TYPE),
        Err(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL),
        "symbols die with their executable"
    );
}

#[test]
fn symbols_are_scoped_to_the_agent_they_were_loaded_for() {
    let _g = serial();
    let rt = runtime();
    assert_eq!(agent_name(rt.gfx90a), "gfx90a");
    let r942 = reader_from_file(&rt.co_gfx942);
    let r90a = reader_from_file(&rt.co_gfx90a);
    let exec = new_executable();
    load(exec, rt.gfx942, r942).unwrap();
    load(exec, rt.gfx90a, r90a).unwrap();
    assert_eq!(
        hsa!(hsa_executable_freeze(exec, std::ptr::null())),
        HSA_STATUS_SUCCESS
    );

    let mut on_942 = agent_symbols(exec, rt.gfx942).unwrap();
    let mut on_90a = agent_symbols(exec, rt.gfx90a).unwrap();
    on_942.sort();
    on_90a.sort();
    let names = |v: &[(String, hsa_symbol_kind_t, u64)]| {
        v.iter()
            .filter(|(n, ..)| !n.starts_with("__hip_cuid"))
            .map(|(n, k, _)| (n.clone(), *k))
            .collect::<Vec<_>>()
    };
    let expected = vec![
        ("counter".to_owned(), HSA_SYMBOL_KIND_VARIABLE),
        ("counter_address".to_owned(), HSA_SYMBOL_KIND_VARIABLE),
        ("histogram".to_owned(), HSA_SYMBOL_KIND_VARIABLE),
        ("increment.kd".to_owned(), HSA_SYMBOL_KIND_KERNEL),
        ("lookup".to_owned(), HSA_SYMBOL_KIND_VARIABLE),
        ("scatter.kd".to_owned(), HSA_SYMBOL_KIND_KERNEL),
    ];
    assert_eq!(names(&on_942), expected);
    assert_eq!(names(&on_90a), expected);
    assert_eq!(
        agent_symbols(exec, rt.cpu).unwrap(),
        vec![],
        "nothing was loaded for the CPU agent"
    );

    // Each agent has its own copy of each variable.
    let a = symbol(exec, "counter", rt.gfx942).unwrap();
    let b = symbol(exec, "counter", rt.gfx90a).unwrap();
    assert_ne!(a.handle, b.handle);
    let addr_a: u64 = info(a, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    let addr_b: u64 = info(b, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    assert_ne!(addr_a, addr_b);
    assert_eq!((read_u32(addr_a), read_u32(addr_b)), (7, 7));
    assert_eq!(
        symbol(exec, "counter", rt.cpu).err(),
        Some(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    );

    // iterate_symbols reports both agents' symbols; program symbols do not exist in v3+ objects.
    unsafe extern "C" fn count(
        _e: hsa_executable_t,
        _s: hsa_executable_symbol_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the counter below.
        unsafe { *data.cast::<usize>() += 1 };
        HSA_STATUS_SUCCESS
    }
    let mut all = 0usize;
    assert_eq!(
        hsa!(hsa_executable_iterate_symbols(
            exec,
            Some(count),
            (&raw mut all).cast()
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(all, on_942.len() + on_90a.len());
    let mut program = 0usize;
    assert_eq!(
        hsa!(hsa_executable_iterate_program_symbols(
            exec,
            Some(count),
            (&raw mut program).cast()
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(program, 0);

    // A callback's non-success status stops the iteration and is returned.
    unsafe extern "C" fn stop(
        _e: hsa_executable_t,
        _s: hsa_executable_symbol_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the counter below.
        unsafe { *data.cast::<usize>() += 1 };
        HSA_STATUS_INFO_BREAK
    }
    let mut seen = 0usize;
    assert_eq!(
        hsa!(hsa_executable_iterate_symbols(
            exec,
            Some(stop),
            (&raw mut seen).cast()
        )),
        HSA_STATUS_INFO_BREAK
    );
    assert_eq!(seen, 1);

    assert_eq!(hsa!(hsa_executable_destroy(exec)), HSA_STATUS_SUCCESS);
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(r942)),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(r90a)),
        HSA_STATUS_SUCCESS
    );
}

#[test]
fn code_object_for_another_isa_is_incompatible() {
    let _g = serial();
    let rt = runtime();
    let r90a = reader_from_file(&rt.co_gfx90a);
    let r942 = reader_from_file(&rt.co_gfx942);
    let exec = new_executable();
    assert_eq!(
        load(exec, rt.gfx942, r90a).err(),
        Some(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    );
    assert_eq!(
        load(exec, rt.gfx90a, r942).err(),
        Some(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    );
    assert_eq!(
        load(exec, rt.cpu, r942).err(),
        Some(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    );
    assert_eq!(
        agent_symbols(exec, rt.gfx942).unwrap(),
        vec![],
        "a failed load leaves no symbols"
    );
    // The executable is still usable.
    load(exec, rt.gfx942, r942).unwrap();
    assert_eq!(hsa!(hsa_executable_destroy(exec)), HSA_STATUS_SUCCESS);
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(r90a)),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(r942)),
        HSA_STATUS_SUCCESS
    );
}

#[test]
fn target_features_follow_the_compatibility_rules_of_rocr() {
    // The gfx90a agent's ISA is `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`: code built for any
    // xnack/sramecc mode ("any") or for exactly the agent's modes loads; a mode pinned the other
    // way does not.
    let _g = serial();
    let rt = runtime();
    let dir = test_support::scratch_dir("vhsa-target-features");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/device/counter.hip");
    for (target, loads) in [
        ("gfx90a:xnack-", true),
        ("gfx90a:sramecc+:xnack-", true),
        ("gfx90a:sramecc+", true),
        ("gfx90a:xnack+", false),
        ("gfx90a:sramecc-:xnack-", false),
    ] {
        let co = dir.join(format!("counter-{}.co", target.replace(':', "_")));
        test_support::build_code_object(&src, target, &co);
        let reader = reader_from_file(&co);
        let exec = new_executable();
        let result = load(exec, rt.gfx90a, reader);
        if loads {
            assert!(
                result.is_ok(),
                "{target} must load on gfx90a:sramecc+:xnack-: {result:?}"
            );
        } else {
            assert_eq!(
                result.err(),
                Some(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS),
                "{target}"
            );
        }
        destroy(exec, reader);
    }
}

#[test]
fn invalid_code_objects_are_rejected() {
    let _g = serial();
    let rt = runtime();
    let exec = new_executable();

    let not_elf = reader_from_memory(b"this is not an ELF file, just text").unwrap();
    assert_eq!(
        load(exec, rt.gfx942, not_elf).err(),
        Some(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    );

    let bytes = std::fs::read(&rt.co_gfx942).unwrap();
    for cut in [16, 63, 200, bytes.len() / 2, bytes.len() - 1] {
        let truncated = reader_from_memory(&bytes[..cut]).unwrap();
        assert_eq!(
            load(exec, rt.gfx942, truncated).err(),
            Some(HSA_STATUS_ERROR_INVALID_CODE_OBJECT),
            "ELF cut at {cut} of {} bytes",
            bytes.len()
        );
        assert_eq!(
            hsa!(hsa_code_object_reader_destroy(truncated)),
            HSA_STATUS_SUCCESS
        );
    }

    // A host ELF file (this test binary) is not an AMDGPU code object.
    let dir = test_support::scratch_dir("vhsa-exec-invalid");
    let text = dir.join("text.co");
    std::fs::write(&text, "plain text\n").unwrap();
    let from_file = reader_from_file(&text);
    assert_eq!(
        load(exec, rt.gfx942, from_file).err(),
        Some(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    );
    let host = reader_from_file(&std::env::current_exe().unwrap());
    assert_eq!(
        load(exec, rt.gfx942, host).err(),
        Some(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    );

    // The whole file loads from memory too.
    let whole = reader_from_memory(&bytes).unwrap();
    load(exec, rt.gfx942, whole).unwrap();
    let sym = symbol(exec, "counter", rt.gfx942).unwrap();
    assert_eq!(
        read_u32(info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap()),
        7
    );

    assert_eq!(hsa!(hsa_executable_destroy(exec)), HSA_STATUS_SUCCESS);
    for r in [not_elf, from_file, host, whole] {
        assert_eq!(hsa!(hsa_code_object_reader_destroy(r)), HSA_STATUS_SUCCESS);
    }
}

#[test]
fn bad_arguments_are_reported() {
    let _g = serial();
    let rt = runtime();
    let null: *mut c_void = std::ptr::null_mut();
    let bogus_exec = hsa_executable_t { handle: 0x1234 };
    let bogus_reader = hsa_code_object_reader_t { handle: 0x5678 };

    // Readers.
    assert_eq!(
        reader_from_memory(&[]).err(),
        Some(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );
    let mut r = hsa_code_object_reader_t { handle: 0 };
    assert_eq!(
        hsa!(hsa_code_object_reader_create_from_memory(
            std::ptr::null(),
            16,
            &mut r
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_code_object_reader_create_from_file(-1, &mut r)),
        HSA_STATUS_ERROR_INVALID_FILE
    );
    assert_eq!(
        hsa!(hsa_code_object_reader_create_from_file(0, null.cast())),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(bogus_reader)),
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER
    );

    // Executables.
    assert_eq!(
        hsa!(hsa_executable_create_alt(
            HSA_PROFILE_FULL,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            std::ptr::null(),
            null.cast()
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_executable_create_alt(
            7,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            std::ptr::null(),
            &mut hsa_executable_t { handle: 0 }
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_executable_destroy(bogus_exec)),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );
    assert_eq!(
        hsa!(hsa_executable_freeze(bogus_exec, std::ptr::null())),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );
    let mut v = 0u32;
    assert_eq!(
        hsa!(hsa_executable_get_info(
            bogus_exec,
            HSA_EXECUTABLE_INFO_STATE,
            (&raw mut v).cast()
        )),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );

    let reader = reader_from_file(&rt.co_gfx942);
    let exec = new_executable();
    assert_eq!(
        load(bogus_exec, rt.gfx942, reader).err(),
        Some(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    );
    assert_eq!(
        load(exec, rt.gfx942, bogus_reader).err(),
        Some(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
    );
    assert_eq!(
        load(exec, hsa_agent_t { handle: 0x42 }, reader).err(),
        Some(HSA_STATUS_ERROR_INVALID_AGENT)
    );
    assert_eq!(
        hsa!(hsa_executable_get_info(exec, 99, (&raw mut v).cast())),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    load(exec, rt.gfx942, reader).unwrap();
    // The same symbols twice for one agent.
    assert_eq!(
        load(exec, rt.gfx942, reader).err(),
        Some(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED)
    );
    assert_eq!(
        hsa!(hsa_executable_freeze(exec, std::ptr::null())),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        hsa!(hsa_executable_freeze(exec, std::ptr::null())),
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE
    );
    assert_eq!(
        load(exec, rt.gfx90a, reader).err(),
        Some(HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
    );

    // Symbols.
    assert_eq!(
        symbol(exec, "no_such_symbol", rt.gfx942).err(),
        Some(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    );
    assert_eq!(
        symbol(bogus_exec, "counter", rt.gfx942).err(),
        Some(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    );
    let mut s = hsa_executable_symbol_t { handle: 0 };
    assert_eq!(
        hsa!(hsa_executable_get_symbol_by_name(
            exec,
            std::ptr::null(),
            &rt.gfx942,
            &mut s
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    let name = CString::new("counter").unwrap();
    assert_eq!(
        hsa!(hsa_executable_get_symbol_by_name(
            exec,
            name.as_ptr(),
            &rt.gfx942,
            null.cast()
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_executable_get_symbol_by_name(
            exec,
            name.as_ptr(),
            std::ptr::null(),
            &mut s
        )),
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
        "without an agent only program symbols are searched, and v3+ objects have none"
    );
    let counter = symbol(exec, "counter", rt.gfx942).unwrap();
    assert_eq!(
        hsa!(hsa_executable_symbol_get_info(
            counter,
            HSA_EXECUTABLE_SYMBOL_INFO_TYPE,
            null
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        info::<u32>(counter, 999),
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    );
    assert_eq!(
        info::<u32>(
            hsa_executable_symbol_t { handle: 0x99 },
            HSA_EXECUTABLE_SYMBOL_INFO_TYPE
        ),
        Err(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)
    );
    assert_eq!(
        hsa!(hsa_executable_iterate_agent_symbols(
            exec, rt.gfx942, None, null
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        hsa!(hsa_executable_iterate_symbols(bogus_exec, None, null)),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        agent_symbols(exec, hsa_agent_t { handle: 0x42 }).err(),
        Some(HSA_STATUS_ERROR_INVALID_AGENT)
    );

    destroy(exec, reader);
}

#[test]
fn loader_extension_reports_loaded_code_objects() {
    let _g = serial();
    let rt = runtime();
    let t = loader_table();
    let bytes = std::fs::read(&rt.co_gfx942).unwrap();
    let (exec, reader, lco) = loaded(&rt.co_gfx942, rt.gfx942);

    // Executables: the built-in one (native kernels) first, ours among the rest.
    let all = executables(&t).unwrap();
    assert!(all.len() >= 2);
    assert!(all[1..].contains(&exec.handle));

    // Loaded code objects of our executable.
    unsafe extern "C" fn cb(
        _e: hsa_executable_t,
        l: hsa_loaded_code_object_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the Vec below.
        unsafe { (*data.cast::<Vec<u64>>()).push(l.handle) };
        HSA_STATUS_SUCCESS
    }
    let mut lcos: Vec<u64> = Vec::new();
    // SAFETY: loader table entry, C signature.
    let st = unsafe {
        t.hsa_ven_amd_loader_executable_iterate_loaded_code_objects
            .unwrap()(exec, Some(cb), (&raw mut lcos).cast())
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert_eq!(lcos, [lco.handle]);

    let get = |attr: hsa_ven_amd_loader_loaded_code_object_info_t, out: *mut c_void| {
        // SAFETY: loader table entry, C signature; `out` sized for the attribute.
        unsafe { t.hsa_ven_amd_loader_loaded_code_object_get_info.unwrap()(lco, attr, out) }
    };
    let mut u64v = 0u64;
    let mut u32v = 0u32;
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE,
            (&raw mut u64v).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(u64v, exec.handle);
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT,
            (&raw mut u64v).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(u64v, rt.gfx942.handle);
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND,
            (&raw mut u32v).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(u32v, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT);
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE,
            (&raw mut u32v).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(u32v, HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY);
    let (mut base, mut size) = (0u64, 0u64);
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE,
            (&raw mut base).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE,
            (&raw mut size).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    // SAFETY: the loader keeps the ELF bytes at `base` for `size` bytes while loaded.
    let stored = unsafe { std::slice::from_raw_parts(base as *const u8, size as usize) };
    assert_eq!(stored, &bytes[..], "the stored code object is the file");

    let (mut load_base, mut load_size, mut delta) = (0u64, 0u64, 0i64);
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE,
            (&raw mut load_base).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
            (&raw mut load_size).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA,
            (&raw mut delta).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        delta as u64, load_base,
        "clang's code objects are linked at address 0"
    );
    let counter = symbol(exec, "counter", rt.gfx942).unwrap();
    let counter_addr: u64 = info(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
    assert!(counter_addr >= load_base && counter_addr + 4 <= load_base + load_size);

    let mut uri_len = 0u32;
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH,
            (&raw mut uri_len).cast()
        ),
        HSA_STATUS_SUCCESS
    );
    let mut uri = vec![0u8; uri_len as usize];
    assert_eq!(
        get(
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI,
            uri.as_mut_ptr().cast()
        ),
        HSA_STATUS_SUCCESS
    );
    let uri = String::from_utf8(uri).unwrap();
    let canonical = std::fs::canonicalize(&rt.co_gfx942).unwrap();
    assert_eq!(
        uri,
        format!(
            "file://{}#offset=0&size={}",
            canonical.display(),
            bytes.len()
        )
    );
    assert_eq!(
        get(999, (&raw mut u64v).cast()),
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    );

    // Address queries.
    let mut owner = hsa_executable_t { handle: 0 };
    // SAFETY: loader table entries, C signatures.
    unsafe {
        assert_eq!(
            t.hsa_ven_amd_loader_query_executable.unwrap()(
                counter_addr as *const c_void,
                &mut owner
            ),
            HSA_STATUS_SUCCESS
        );
        assert_eq!(owner.handle, exec.handle);
        let mut host: *const c_void = std::ptr::null();
        assert_eq!(
            t.hsa_ven_amd_loader_query_host_address.unwrap()(
                counter_addr as *const c_void,
                &mut host
            ),
            HSA_STATUS_SUCCESS
        );
        assert_eq!(*(host as *const u32), 7);
        let outside = bytes.as_ptr().cast::<c_void>();
        assert_eq!(
            t.hsa_ven_amd_loader_query_executable.unwrap()(outside, &mut owner),
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            t.hsa_ven_amd_loader_query_host_address.unwrap()(outside, &mut host),
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        );
    }

    // Segment descriptors: count, then fill; a stale count is refused.
    let query = t.hsa_ven_amd_loader_query_segment_descriptors.unwrap();
    let mut n = 0usize;
    // SAFETY: loader table entry, C signature.
    assert_eq!(
        unsafe { query(std::ptr::null_mut(), &mut n) },
        HSA_STATUS_SUCCESS
    );
    assert!(n >= 1);
    // SAFETY: all-zero descriptors are valid values.
    let mut descs: Vec<hsa_ven_amd_loader_segment_descriptor_t> =
        vec![unsafe { std::mem::zeroed() }; n + 1];
    let mut wrong = n + 1;
    // SAFETY: `descs` holds n + 1 descriptors.
    assert_eq!(
        unsafe { query(descs.as_mut_ptr(), &mut wrong) },
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
    );
    // SAFETY: `descs` holds at least n descriptors.
    assert_eq!(
        unsafe { query(descs.as_mut_ptr(), &mut n) },
        HSA_STATUS_SUCCESS
    );
    let ours = descs[..n]
        .iter()
        .find(|d| d.executable.handle == exec.handle)
        .expect("a descriptor of ours");
    assert_eq!(ours.agent.handle, rt.gfx942.handle);
    assert_eq!(ours.segment_base as u64, load_base);
    assert_eq!(ours.segment_size as u64, load_size);
    assert_eq!(ours.code_object_storage_size, bytes.len());

    // A 1.00 table is three entries long: the rest of a bigger buffer is left alone.
    // SAFETY: all-zero is a valid value (every entry NULL).
    let mut small: hsa_ven_amd_loader_1_03_pfn_t = unsafe { std::mem::zeroed() };
    let st = hsa!(hsa_system_get_major_extension_table(
        HSA_EXTENSION_AMD_LOADER as u16,
        1,
        std::mem::size_of::<hsa_ven_amd_loader_1_00_pfn_t>(),
        (&raw mut small).cast()
    ));
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(small.hsa_ven_amd_loader_query_executable.is_some());
    assert!(
        small
            .hsa_ven_amd_loader_executable_iterate_loaded_code_objects
            .is_none()
    );
    assert!(small.hsa_ven_amd_loader_iterate_executables.is_none());

    destroy(exec, reader);
    assert!(!executables(&t).unwrap().contains(&exec.handle));
    // SAFETY: loader table entry, C signature.
    let st = unsafe {
        t.hsa_ven_amd_loader_query_executable.unwrap()(counter_addr as *const c_void, &mut owner)
    };
    assert_eq!(
        st, HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "the destroyed executable's memory is no longer reported"
    );
}

unsafe extern "C" fn noop_kernel(_p: *const hsa_kernel_dispatch_packet_t, _d: *mut c_void) {}

#[test]
fn native_kernels_are_symbols_of_the_built_in_executable() {
    let _g = serial();
    let rt = runtime();
    let create: NativeKernelCreate = sym("vhsa_native_kernel_create");
    let name = CString::new("loader_test_native").unwrap();
    // SAFETY: vhsa.h entry point with a valid name and function.
    let object = unsafe { create.unwrap()(name.as_ptr(), Some(noop_kernel), std::ptr::null_mut()) };
    assert_ne!(object, 0);

    let t = loader_table();
    let builtin = hsa_executable_t {
        handle: executables(&t).unwrap()[0],
    };
    let mut state = 0u32;
    assert_eq!(
        hsa!(hsa_executable_get_info(
            builtin,
            HSA_EXECUTABLE_INFO_STATE,
            (&raw mut state).cast()
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(state, HSA_EXECUTABLE_STATE_FROZEN);

    for gpu in [rt.gfx942, rt.gfx90a] {
        let syms = agent_symbols(builtin, gpu).unwrap();
        assert!(
            syms.iter()
                .any(|(n, k, _)| n == "loader_test_native.kd" && *k == HSA_SYMBOL_KIND_KERNEL),
            "{syms:?}"
        );
        let s = symbol(builtin, "loader_test_native.kd", gpu).unwrap();
        assert_eq!(
            info::<u64>(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT),
            Ok(object)
        );
        // Looked up again, the same handle.
        assert_eq!(
            symbol(builtin, "loader_test_native.kd", gpu)
                .unwrap()
                .handle,
            s.handle
        );
    }
    assert_eq!(agent_symbols(builtin, rt.cpu).unwrap(), vec![]);

    // The built-in executable cannot be changed.
    assert_eq!(
        hsa!(hsa_executable_destroy(builtin)),
        HSA_STATUS_ERROR_INVALID_EXECUTABLE
    );
    let reader = reader_from_file(&rt.co_gfx942);
    assert!(load(builtin, rt.gfx942, reader).is_err());
    assert_eq!(
        hsa!(hsa_code_object_reader_destroy(reader)),
        HSA_STATUS_SUCCESS
    );
}

#[test]
fn symbol_iteration_fault_fails_iterations() {
    let _g = serial();
    let rt = runtime();
    let (exec, reader, _) = loaded(&rt.co_gfx942, rt.gfx942);
    let t = loader_table();
    let fault: FaultFailSymbolIteration = sym("vhsa_fault_fail_symbol_iteration");

    // SAFETY: vhsa.h entry point.
    unsafe { fault.unwrap()(true) };
    let during = (agent_symbols(exec, rt.gfx942).err(), executables(&t).err());
    // SAFETY: as above.
    unsafe { fault.unwrap()(false) };
    assert_eq!(during, (Some(HSA_STATUS_ERROR), Some(HSA_STATUS_ERROR)));

    assert!(!agent_symbols(exec, rt.gfx942).unwrap().is_empty());
    assert!(executables(&t).unwrap().contains(&exec.handle));
    destroy(exec, reader);
}

#[test]
fn symbol_info_fault_fails_variable_address_and_size_only() {
    let _g = serial();
    let rt = runtime();
    let (exec, reader, _) = loaded(&rt.co_gfx942, rt.gfx942);
    let fault: FaultFailSymbolIteration = sym("vhsa_fault_fail_symbol_info");
    let var = symbol(exec, "counter", rt.gfx942).unwrap();

    // SAFETY: vhsa.h entry point.
    unsafe { fault.unwrap()(true) };
    let address = info::<u64>(var, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS);
    let size = info::<u32>(var, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE);
    let kind = info::<hsa_symbol_kind_t>(var, HSA_EXECUTABLE_SYMBOL_INFO_TYPE);
    // SAFETY: as above.
    unsafe { fault.unwrap()(false) };
    assert_eq!(
        (address, size),
        (Err(HSA_STATUS_ERROR), Err(HSA_STATUS_ERROR))
    );
    assert_eq!(
        kind,
        Ok(HSA_SYMBOL_KIND_VARIABLE),
        "other attributes still answer"
    );

    assert_ne!(
        info::<u64>(var, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap(),
        0
    );
    assert_eq!(
        info::<u32>(var, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE).unwrap(),
        4
    );
    destroy(exec, reader);
}

#[test]
fn reader_from_a_file_range_and_legacy_executable_create() {
    let _g = serial();
    let rt = runtime();
    use std::os::fd::AsRawFd as _;

    // A code object embedded at offset 100 of a bigger file (as in a fat binary).
    let bytes = std::fs::read(&rt.co_gfx942).unwrap();
    let dir = test_support::scratch_dir("vhsa-exec-range");
    let bundle = dir.join("bundle.bin");
    let mut content = vec![0x5Au8; 100];
    content.extend_from_slice(&bytes);
    content.extend_from_slice(b"trailing bytes");
    std::fs::write(&bundle, &content).unwrap();
    let file = std::fs::File::open(&bundle).unwrap();

    let t = loader_table();
    let create = t
        .hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size
        .unwrap();
    let mut reader = hsa_code_object_reader_t { handle: 0 };
    // SAFETY: loader table entry, C signature.
    let st = unsafe { create(file.as_raw_fd(), 100, bytes.len(), &mut reader) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    // SAFETY: as above; the range runs past the end of the file.
    let past_end = unsafe {
        create(
            file.as_raw_fd(),
            content.len() - 10,
            64,
            &mut hsa_code_object_reader_t { handle: 0 },
        )
    };
    assert_eq!(past_end, HSA_STATUS_ERROR_INVALID_FILE);

    let mut exec = hsa_executable_t { handle: 0 };
    assert_eq!(
        hsa!(hsa_executable_create(
            HSA_PROFILE_FULL,
            HSA_EXECUTABLE_STATE_UNFROZEN,
            std::ptr::null(),
            &mut exec
        )),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(
        hsa!(hsa_executable_create(
            HSA_PROFILE_FULL,
            HSA_EXECUTABLE_STATE_FROZEN,
            std::ptr::null(),
            &mut exec
        )),
        HSA_STATUS_ERROR_INVALID_ARGUMENT,
        "an executable cannot be created frozen"
    );
    let lco = load(exec, rt.gfx942, reader).unwrap();
    let counter = symbol(exec, "counter", rt.gfx942).unwrap();
    assert_eq!(
        read_u32(info(counter, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap()),
        7
    );

    let mut uri_len = 0u32;
    // SAFETY: loader table entries, C signatures; buffers sized for the attributes.
    let uri = unsafe {
        let get = t.hsa_ven_amd_loader_loaded_code_object_get_info.unwrap();
        assert_eq!(
            get(
                lco,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH,
                (&raw mut uri_len).cast()
            ),
            0
        );
        let mut uri = vec![0u8; uri_len as usize];
        assert_eq!(
            get(
                lco,
                HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI,
                uri.as_mut_ptr().cast()
            ),
            0
        );
        String::from_utf8(uri).unwrap()
    };
    let canonical = std::fs::canonicalize(&bundle).unwrap();
    assert_eq!(
        uri,
        format!(
            "file://{}#offset=100&size={}",
            canonical.display(),
            bytes.len()
        )
    );
    destroy(exec, reader);
}

#[test]
fn concurrent_loads_lookups_and_iterations() {
    let _g = serial();
    let rt = runtime();
    let bytes = std::fs::read(&rt.co_gfx942).unwrap();
    let t = loader_table();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // A loader-extension walker, as a tool walks executables while the application loads
        // and destroys them. An executable or symbol destroyed meanwhile must give a clean
        // error status, never a crash or a wrong value.
        let walker = s.spawn(|| {
            unsafe extern "C" fn visit(
                _e: hsa_executable_t,
                _a: hsa_agent_t,
                s: hsa_executable_symbol_t,
                data: *mut c_void,
            ) -> hsa_status_t {
                let mut kind = 0u32;
                let st = hsa!(hsa_executable_symbol_get_info(
                    s,
                    HSA_EXECUTABLE_SYMBOL_INFO_TYPE,
                    (&raw mut kind).cast()
                ));
                assert!(
                    (st == HSA_STATUS_SUCCESS
                        && (kind == HSA_SYMBOL_KIND_KERNEL || kind == HSA_SYMBOL_KIND_VARIABLE))
                        || st == HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
                    "symbol info: status {st:#x}, kind {kind}"
                );
                // SAFETY: `data` is the counter of the walker.
                unsafe { *data.cast::<u64>() += 1 };
                HSA_STATUS_SUCCESS
            }
            let mut walks = 0u64;
            let mut visited = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for e in executables(&t).unwrap() {
                    let exec = hsa_executable_t { handle: e };
                    let st = hsa!(hsa_executable_iterate_agent_symbols(
                        exec,
                        rt.gfx942,
                        Some(visit),
                        (&raw mut visited).cast()
                    ));
                    assert!(
                        st == HSA_STATUS_SUCCESS || st == HSA_STATUS_ERROR_INVALID_EXECUTABLE,
                        "iterating executable {e:#x} failed with {st:#x}"
                    );
                }
                walks += 1;
            }
            walks
        });
        let loaders: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..25 {
                        let reader = reader_from_memory(&bytes).unwrap();
                        let exec = new_executable();
                        load(exec, rt.gfx942, reader).unwrap();
                        let c = symbol(exec, "counter", rt.gfx942).unwrap();
                        let addr: u64 =
                            info(c, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS).unwrap();
                        assert_eq!(
                            read_u32(addr),
                            7,
                            "every load gets fresh, initialised storage"
                        );
                        // SAFETY: this load's own 4-byte variable.
                        unsafe { (addr as *mut u32).write_volatile(99) };
                        destroy(exec, reader);
                    }
                })
            })
            .collect();
        for l in loaders {
            l.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(walker.join().unwrap() > 0);
    });
}

/// Counts the calls of the native `increment` registered by the dispatch test.
static INCREMENT_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

unsafe extern "C" fn increment_native(
    packet: *const hsa_kernel_dispatch_packet_t,
    _d: *mut c_void,
) {
    // A native kernel runs on the host: the agent addresses of locked memory are turned into
    // host addresses.
    let host: HostAddress = sym("vhsa_host_address");
    let host = host.unwrap();
    // SAFETY: the packet is valid for the call; its kernel arguments are `increment`'s
    // (uint32_t* data, uint32_t n).
    unsafe {
        let args = host((*packet).kernarg_address).cast::<u64>();
        let data = host(*args as *const c_void).cast::<u32>();
        let n = *args.add(1).cast::<u32>();
        for i in 0..((*packet).grid_size_x.min(n)) as usize {
            *data.add(i) += 1;
        }
    }
    INCREMENT_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// Dispatches `kernel_object` with `kernarg` on `queue` (1-D grid of `grid` work-items) and
/// waits for its completion signal (bounded wait).
fn dispatch(queue: *mut hsa_queue_t, kernel_object: u64, kernarg: *mut c_void, grid: u32) {
    let mut done = hsa_signal_t { handle: 0 };
    assert_eq!(
        hsa!(hsa_signal_create(1, 0, std::ptr::null(), &mut done)),
        HSA_STATUS_SUCCESS
    );
    let index = hsa!(hsa_queue_add_write_index_relaxed(queue, 1));
    // SAFETY: `queue` is a live queue; the slot at `index` is ours to write (64-byte packets).
    let doorbell = unsafe {
        let q = &*queue;
        let slot = q
            .base_address
            .cast::<hsa_kernel_dispatch_packet_t>()
            .add((index % u64::from(q.size)) as usize);
        std::ptr::write_bytes(slot.cast::<u8>().add(4), 0, 60);
        (*slot).workgroup_size_x = 64;
        (*slot).workgroup_size_y = 1;
        (*slot).workgroup_size_z = 1;
        (*slot).grid_size_x = grid;
        (*slot).grid_size_y = 1;
        (*slot).grid_size_z = 1;
        (*slot).kernel_object = kernel_object;
        (*slot).kernarg_address = kernarg;
        (*slot).completion_signal = done;
        let header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE)
            | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
            | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
        let word = header | (1 << 16); // setup: one dimension
        (*slot.cast::<std::sync::atomic::AtomicU32>())
            .store(word, std::sync::atomic::Ordering::Release);
        q.doorbell_signal
    };
    hsa!(hsa_signal_store_screlease(doorbell, index as i64));
    // Bounded: 100 waits of 100 ms.
    let finished = (0..100).any(|_| {
        hsa!(hsa_signal_wait_scacquire(
            done,
            HSA_SIGNAL_CONDITION_EQ,
            0,
            100_000_000,
            HSA_WAIT_STATE_BLOCKED
        )) == 0
    });
    assert!(
        finished,
        "the dispatch of kernel object {kernel_object:#x} did not complete within 10 s"
    );
    assert_eq!(hsa!(hsa_signal_destroy(done)), HSA_STATUS_SUCCESS);
}

#[test]
fn loaded_kernels_run_emulated_until_a_native_kernel_is_registered_under_their_name() {
    let _g = serial();
    let rt = runtime();
    let (exec, reader, _) = loaded(&rt.co_gfx942, rt.gfx942);
    let kernel_object = |name: &str| -> u64 {
        info(
            symbol(exec, name, rt.gfx942).unwrap(),
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
        )
        .unwrap()
    };
    let increment = kernel_object("increment.kd");
    let scatter = kernel_object("scatter.kd");

    let mut queue: *mut hsa_queue_t = std::ptr::null_mut();
    let st = hsa!(hsa_queue_create(
        rt.gfx942,
        64,
        HSA_QUEUE_TYPE_SINGLE,
        None,
        std::ptr::null_mut(),
        u32::MAX,
        u32::MAX,
        &mut queue
    ));
    assert_eq!(st, HSA_STATUS_SUCCESS);
    let mut data = [10u32; 8];
    #[repr(C)]
    struct Args {
        data: *mut u32,
        n: u32,
        scale: u64,
    }
    // The emulated kernels reach only memory the runtime knows: lock the test's buffers. Agents
    // reach locked memory at the address the lock returns, not at its host address.
    let mut agent = rt.gfx942;
    let mut lock = |p: *mut c_void, len: usize| {
        let mut mapped: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            hsa!(hsa_amd_memory_lock(p, len, &mut agent, 1, &mut mapped)),
            HSA_STATUS_SUCCESS
        );
        assert_ne!(mapped, p, "an agent address of its own");
        mapped
    };
    let mut args = Args {
        data: lock(data.as_mut_ptr().cast(), 32).cast(),
        n: 5,
        scale: 0,
    };
    let host_kernarg = (&raw mut args).cast::<c_void>();
    let kernarg = lock(host_kernarg, std::mem::size_of::<Args>());
    let calls = || INCREMENT_CALLS.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: the kernels write `data` only while `dispatch` waits; read it between dispatches.
    let snapshot = |d: *const [u32; 8]| unsafe { d.read_volatile() };

    // No native implementation yet: the code object's kernel runs on the emulator.
    dispatch(queue, increment, kernarg, 8);
    assert_eq!(snapshot(&raw const data), [11, 11, 11, 11, 11, 10, 10, 10]);
    assert_eq!(calls(), 0);

    // Registered after the load, found by name at dispatch time: the native kernel runs.
    let create: NativeKernelCreate = sym("vhsa_native_kernel_create");
    let name = CString::new("increment").unwrap();
    // SAFETY: vhsa.h entry point with a valid name and function.
    let native =
        unsafe { create.unwrap()(name.as_ptr(), Some(increment_native), std::ptr::null_mut()) };
    assert_ne!(native, 0);
    assert_ne!(
        native, increment,
        "the loaded kernel keeps its own kernel object (its descriptor)"
    );
    dispatch(queue, increment, kernarg, 8);
    assert_eq!(snapshot(&raw const data), [12, 12, 12, 12, 12, 10, 10, 10]);
    assert_eq!(calls(), 1);

    // Another kernel of the same code object does not run `increment`'s native code: it is
    // emulated (it reads `data` and adds `scale` 0 into a `__device__` histogram).
    dispatch(queue, scatter, kernarg, 8);
    assert_eq!(calls(), 1);
    assert_eq!(snapshot(&raw const data), [12, 12, 12, 12, 12, 10, 10, 10]);
    for p in [data.as_mut_ptr().cast::<c_void>(), host_kernarg] {
        assert_eq!(hsa!(hsa_amd_memory_unlock(p)), HSA_STATUS_SUCCESS);
    }

    assert_eq!(hsa!(hsa_queue_destroy(queue)), HSA_STATUS_SUCCESS);
    destroy(exec, reader);
}
