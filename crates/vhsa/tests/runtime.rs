//! Core runtime behaviour (status codes, topology, memory, pointer info, copies, signals, async
//! handlers, queues, packets, profiling), checked by a C program linked with the runtime.

mod c_programs;
use c_programs::*;

#[test]
fn runtime_basics() {
    let dir = test_support::scratch_dir("vhsa-runtime");
    let exe = program(&dir, "runtime_basics");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

/// The same program under valgrind's memcheck: no read or write of freed or unallocated memory
/// anywhere in the runtime (queues destroyed from their own error callback among the cases).
#[test]
fn runtime_basics_touch_no_freed_memory() {
    let dir = test_support::scratch_dir("vhsa-runtime-memcheck");
    passes_under_memcheck(&program(&dir, "runtime_basics"));
}

#[test]
fn an_allocation_the_host_cannot_back_now_is_refused() {
    let dir = test_support::scratch_dir("vhsa-host-backing");
    let exe = program(&dir, "host_backing");
    let mut cmd = command(&exe);
    // A device pool of 1 PiB: only the host's available memory can refuse.
    cmd.env("VHSA_DEVICE_MEMORY_MB", (1u64 << 30).to_string());
    let out = run_ok(cmd);
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

#[test]
fn exports_carry_the_rocr_version_and_soname() {
    let lib = test_support::vhsa_lib_dir().join("libhsa-runtime64.so.1");
    let out = std::process::Command::new("readelf")
        .arg("-W")
        .arg("--dyn-syms")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Library soname: [libhsa-runtime64.so.1]"),
        "soname missing:\n{text}"
    );
    for f in [
        "hsa_init@@ROCR_1",
        "hsa_amd_pointer_info@@ROCR_1",
        "hsa_executable_iterate_agent_symbols@@ROCR_1",
        "hsa_amd_queue_intercept_register@@ROCR_1",
        "hsa_ext_image_create@@ROCR_1",
        "hsa_ext_sampler_destroy@@ROCR_1",
    ] {
        assert!(text.contains(f), "{f} is not exported with version ROCR_1");
    }
    let count = text
        .lines()
        .filter(|l| l.contains("@@ROCR_1") && l.contains(" hsa_"))
        .count();
    assert_eq!(
        count,
        hsa_abi::CoreApiTable::SLOT_NAMES.len()
            + hsa_abi::AmdExtTable::SLOT_NAMES.len()
            + hsa_abi::ImageExtTable::SLOT_NAMES.len()
    );
}

#[test]
fn signals_have_the_amd_signal_layout_and_waiters_see_stores_to_memory() {
    let dir = test_support::scratch_dir("vhsa-signal-layout");
    let exe = program(&dir, "signal_layout");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

#[test]
fn rect_copies_and_the_image_entries() {
    let dir = test_support::scratch_dir("vhsa-copy-rect");
    let exe = program(&dir, "copy_rect_and_images");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}
