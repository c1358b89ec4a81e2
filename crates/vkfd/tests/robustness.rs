//! The real ROCR on vkfd when things go wrong or start over: a kernel's page fault reported as
//! the hardware reports it (the runtime aborts the process) or, on request, as a queue error; a
//! queue destroyed with a kernel in flight; `hsa_shut_down` and a second `hsa_init` in one
//! process; two GPUs with peer copies (`hip::two_devices_and_peer_copies`).

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// The tool crate's `tests/apps/emulated.c` and its kernels (code object version 4 for ROCm
/// 5.2's loader), in `dir`.
fn emulated(dir: &Path) -> (PathBuf, PathBuf) {
    let exe = emulated_app(dir);
    let co = dir.join("emulated.co");
    test_support::build_code_object_with(
        &workspace_root().join("tests/apps/emulated.hip"),
        "gfx90a",
        &co,
        &["-mcode-object-version=4"],
    );
    (exe, co)
}

/// `SIGABRT` on Linux.
const SIGABRT: i32 = 6;

#[test]
fn a_page_fault_aborts_the_process_as_rocr_does_on_hardware() {
    let dir = test_support::scratch_dir("vkfd-fault-abort");
    let (exe, co) = emulated(&dir);
    let out = command(&exe, Runtime::RocrOnVkfd, "gfx90a")
        .arg("faults")
        .arg(&co)
        .output()
        .expect("run");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(SIGABRT),
        "{:?}\n{}",
        out.status,
        stderr(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("Memory access fault by GPU node-1"), "{err}");
    // The faulting address the emulator saw (the kernel stores to 0x100), and where: the
    // kernel named from its code object's symbols, as ROCR only passes its descriptor.
    assert!(err.contains("on address 0x100"), "{err}");
    assert!(err.contains("at oob_store+0x"), "{err}");
}

#[test]
fn a_page_fault_is_a_queue_error_on_request_and_the_process_lives_on() {
    let dir = test_support::scratch_dir("vkfd-fault-queue-error");
    let (exe, co) = emulated(&dir);
    let mut c = command(&exe, Runtime::RocrOnVkfd, "gfx90a");
    c.arg("faults").arg(&co).env("VKFD_VM_FAULT", "queue-error");
    let out = stdout(&run_ok(c));
    assert!(
        out.contains("APP fault kernel=oob_store status=0x29"),
        "{out}"
    );
    assert!(out.contains("APP OK"), "{out}");
}

#[test]
fn a_panic_of_a_command_processor_puts_its_queue_in_error_and_the_process_lives_on() {
    let dir = test_support::scratch_dir("vkfd-cp-panic");
    let (exe, co) = emulated(&dir);
    let mut c = command(&exe, Runtime::RocrOnVkfd, "gfx90a");
    // The second kernel dispatch (the `trap` kernel of `faults`) panics in its processor.
    c.arg("faults")
        .arg(&co)
        .env("VKFD_VM_FAULT", "queue-error")
        .env("VKFD_TEST_CP_PANIC", "2");
    let o = run_ok(c);
    let (out, err) = (stdout(&o), stderr(&o));
    let line = out
        .lines()
        .find(|l| l.starts_with("APP fault kernel=trap status="))
        .unwrap_or_else(|| panic!("no queue error for the panicked dispatch:\n{out}\n{err}"));
    assert_ne!(line, "APP fault kernel=trap status=0", "{out}");
    assert!(
        err.contains("the command processor failed (injected by VKFD_TEST_CP_PANIC)"),
        "{err}"
    );
    // The other queues and a later kernel still run.
    assert!(
        out.contains("APP fault kernel=unknown_op status=0x2a"),
        "{out}"
    );
    assert!(out.contains("APP OK"), "{out}");
}

#[test]
fn a_queue_destroyed_with_a_kernel_in_flight_abandons_it() {
    let dir = test_support::scratch_dir("vkfd-abandon");
    let (exe, co) = emulated(&dir);
    let mut c = command(&exe, Runtime::RocrOnVkfd, "gfx90a");
    c.arg("abandon").arg(&co);
    let o = run_ok(c);
    assert!(stdout(&o).contains("APP OK"), "{}", stdout(&o));
    assert!(!stderr(&o).contains("ran longer than"), "{}", stderr(&o));
}

#[test]
fn shut_down_and_init_again_start_clean() {
    let dir = test_support::scratch_dir("vkfd-reinit");
    let exe = c_program(&dir, "reinit");
    let out = stdout(&run_ok(command(&exe, Runtime::RocrOnVkfd, "gfx90a")));
    assert_eq!(out.matches(" ok\n").count(), 3, "{out}");
    assert!(out.contains("PASS"), "{out}");
}
