//! Behaviour that must match the real runtime: status codes for bad arguments and packets,
//! `hsa_status_string` coverage, signal-wait corner cases, queue limits and suspension after a
//! packet error, and `hsa_amd_pointer_info` argument handling. Checked by a C program.

mod c_programs;
use c_programs::*;

#[test]
fn matches_the_real_runtime() {
    let dir = test_support::scratch_dir("vhsa-fidelity");
    let exe = program(&dir, "fidelity");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}
