//! Virtual memory entries (`hsa_amd_vmem_*`): argument checks and statuses, mappings sharing a
//! handle's bytes, pointer information, access, retain and release (a C program).

mod c_programs;
use c_programs::*;

#[test]
fn vmem_entries_follow_the_runtime() {
    let dir = test_support::scratch_dir("vhsa-vmem");
    let exe = program(&dir, "vmem");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}
