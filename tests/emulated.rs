//! Replay and faults of real compiled kernels on vhsa's emulator (no native kernel): the
//! application `tests/apps/emulated.c` dispatches the code-object kernels of
//! `tests/apps/emulated.hip`, with the tool loaded through `HSA_TOOLS_LIB`.

mod common;

use common::*;

/// Queue error statuses (`hsa.h`, `hsa_ext_amd.h`).
const MEMORY_APERTURE_VIOLATION: u32 = 0x29;
const ILLEGAL_INSTRUCTION: u32 = 0x2a;
const EXCEPTION: u32 = 0x1016;

#[test]
fn x_plus_one_replayed_five_times_on_emulated_code_sees_the_original_input_every_pass() {
    let out_dir = test_support::scratch_dir("emulated-inc-records");
    let co = code_object("emulated");
    let mut c = command(&app("emulated", &[]), &[]);
    c.arg("inc")
        .arg("5")
        .arg(&co)
        .env("KREPLAY_PASSES", "5")
        // The pass counters live in fine-grained memory the kernel arguments point to: left
        // unrestored so they count every pass.
        .env("KREPLAY_HOST_MEMORY", "ignore")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let passes = recs.iter().filter(|r| r["record"] == "pass").count();
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("a dispatch record");
    assert_eq!(passes, 5, "{recs:#?}");
    assert_eq!(d["kernel"], "inc");
    assert_eq!(d["replayed"], true);
    assert_eq!(d["passes"], 5);
}

#[test]
fn a_device_counter_of_emulated_code_is_restored_between_passes() {
    let co = code_object("emulated");
    let mut c = command(&app("emulated", &[]), &[]);
    // The pass log lives in fine-grained memory: left unrestored so it records every pass.
    c.arg("devvar")
        .arg("3")
        .arg(&co)
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_HOST_MEMORY", "ignore");
    run_ok(c);
}

#[test]
fn faults_end_their_dispatch_with_a_queue_error_and_the_process_keeps_running() {
    let co = code_object("emulated");
    let mut c = command(&app("emulated", &[]), &[]);
    c.arg("faults").arg(&co);
    let o = run_ok(c);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = stderr(&o);
    for (kernel, status, message) in [
        (
            "oob_store",
            MEMORY_APERTURE_VIOLATION,
            "memory fault: write of 4 bytes at 0x100 (lane 0)",
        ),
        ("trap", EXCEPTION, "s_trap 2"),
        ("unknown_op", ILLEGAL_INSTRUCTION, "illegal instruction"),
    ] {
        let line = format!("APP fault kernel={kernel} status={status:#x}");
        assert!(
            out.lines().any(|l| l == line),
            "expected `{line}`:\n{out}\n{err}"
        );
        // The log names the kernel, what happened and where (kernel + code offset, instruction).
        let logged = err
            .lines()
            .find(|l| l.contains(&format!("kernel `{kernel}` on agent gfx942")))
            .unwrap_or_else(|| panic!("no log line for {kernel}:\n{err}"));
        assert!(logged.contains(message), "{logged}");
        assert!(logged.contains(&format!(" at {kernel}+0x")), "{logged}");
    }
    assert!(out.contains("APP OK"), "{out}");
}

#[test]
fn destroying_the_queue_of_a_kernel_that_never_ends_abandons_it() {
    let co = code_object("emulated");
    let mut c = command(&app("emulated", &[]), &[]);
    c.arg("abandon").arg(&co);
    let o = run_ok(c);
    let err = stderr(&o);
    // The emulation gave up when the queue went, not at the emulator's time limit.
    assert!(!err.contains("ran longer than"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("APP OK"));
}
