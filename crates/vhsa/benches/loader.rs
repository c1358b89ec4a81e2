//! Code-object loading and symbol lookup through the C API of the built library.
//!
//! Run: `cargo build --release -p vhsa && cargo bench -p vhsa --bench loader`.
//! The code object is `tests/device/counter.hip` built by clang for gfx942 (two kernels, four
//! variables, one relocation).

use criterion::{Criterion, criterion_group, criterion_main};
use hsa_abi::ffi::*;
use std::ffi::{CString, c_void};
use std::hint::black_box;
use std::path::Path;
use test_support::vhsa_symbol as sym;

fn gpu_agent() -> hsa_agent_t {
    unsafe extern "C" fn pick(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
        let get: hsa_agent_get_info_fn_t = sym("hsa_agent_get_info");
        let mut kind: hsa_device_type_t = 0;
        // SAFETY: runtime call with an out-pointer to a device type.
        unsafe { get.unwrap()(agent, HSA_AGENT_INFO_DEVICE, (&raw mut kind).cast()) };
        if kind == HSA_DEVICE_TYPE_GPU {
            // SAFETY: `data` is the agent below.
            unsafe { *data.cast::<hsa_agent_t>() = agent };
            return HSA_STATUS_INFO_BREAK;
        }
        HSA_STATUS_SUCCESS
    }
    let init: hsa_init_fn_t = sym("hsa_init");
    let iterate: hsa_iterate_agents_fn_t = sym("hsa_iterate_agents");
    let mut agent = hsa_agent_t { handle: 0 };
    // SAFETY: runtime calls; the callback writes `agent`, which outlives the call.
    unsafe {
        assert_eq!(init.unwrap()(), HSA_STATUS_SUCCESS);
        iterate.unwrap()(Some(pick), (&raw mut agent).cast());
    }
    assert_ne!(agent.handle, 0, "no GPU agent");
    agent
}

fn loader(c: &mut Criterion) {
    let agent = gpu_agent();
    let dir = test_support::scratch_dir("vhsa-bench-loader");
    let co = dir.join("counter.co");
    test_support::build_code_object(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/device/counter.hip"),
        "gfx942",
        &co,
    );
    let bytes = std::fs::read(&co).unwrap();

    let reader_create: hsa_code_object_reader_create_from_memory_fn_t =
        sym("hsa_code_object_reader_create_from_memory");
    let reader_destroy: hsa_code_object_reader_destroy_fn_t = sym("hsa_code_object_reader_destroy");
    let create: hsa_executable_create_alt_fn_t = sym("hsa_executable_create_alt");
    let load: hsa_executable_load_agent_code_object_fn_t =
        sym("hsa_executable_load_agent_code_object");
    let freeze: hsa_executable_freeze_fn_t = sym("hsa_executable_freeze");
    let destroy: hsa_executable_destroy_fn_t = sym("hsa_executable_destroy");
    let by_name: hsa_executable_get_symbol_by_name_fn_t = sym("hsa_executable_get_symbol_by_name");
    let get_info: hsa_executable_symbol_get_info_fn_t = sym("hsa_executable_symbol_get_info");
    let iterate: hsa_executable_iterate_agent_symbols_fn_t =
        sym("hsa_executable_iterate_agent_symbols");

    let mut reader = hsa_code_object_reader_t { handle: 0 };
    // SAFETY: runtime call; `bytes` outlives it (the reader copies them).
    let st = unsafe { reader_create.unwrap()(bytes.as_ptr().cast(), bytes.len(), &mut reader) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    let null = std::ptr::null();
    let new_loaded = || {
        let mut exec = hsa_executable_t { handle: 0 };
        // SAFETY: runtime calls with valid handles and out-pointers.
        unsafe {
            assert_eq!(
                create.unwrap()(HSA_PROFILE_FULL, 0, null, &mut exec),
                HSA_STATUS_SUCCESS
            );
            assert_eq!(
                load.unwrap()(exec, agent, reader, null, std::ptr::null_mut()),
                HSA_STATUS_SUCCESS
            );
            assert_eq!(freeze.unwrap()(exec, null), HSA_STATUS_SUCCESS);
        }
        exec
    };

    c.bench_function("loader/load_freeze_destroy", |b| {
        b.iter(|| {
            let exec = new_loaded();
            // SAFETY: runtime call on a live executable.
            unsafe { destroy.unwrap()(black_box(exec)) };
        })
    });

    let exec = new_loaded();
    let name = CString::new("increment.kd").unwrap();
    c.bench_function("loader/symbol_by_name_kernel_object", |b| {
        b.iter(|| {
            let mut s = hsa_executable_symbol_t { handle: 0 };
            let mut object = 0u64;
            // SAFETY: runtime calls with valid handles and out-pointers.
            unsafe {
                by_name.unwrap()(exec, name.as_ptr(), &agent, &mut s);
                get_info.unwrap()(
                    s,
                    HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                    (&raw mut object).cast(),
                );
            }
            black_box(object)
        })
    });

    unsafe extern "C" fn count(
        _e: hsa_executable_t,
        _a: hsa_agent_t,
        _s: hsa_executable_symbol_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the counter below.
        unsafe { *data.cast::<u64>() += 1 };
        HSA_STATUS_SUCCESS
    }
    c.bench_function("loader/iterate_agent_symbols", |b| {
        b.iter(|| {
            let mut n = 0u64;
            // SAFETY: runtime call; the callback counts into `n`.
            unsafe { iterate.unwrap()(exec, agent, Some(count), (&raw mut n).cast()) };
            black_box(n)
        })
    });

    // SAFETY: runtime calls on live handles.
    unsafe {
        destroy.unwrap()(exec);
        reader_destroy.unwrap()(reader);
    }
}

criterion_group!(benches, loader);
criterion_main!(benches);
