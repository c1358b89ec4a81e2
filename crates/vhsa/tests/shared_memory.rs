//! Memory shared with other processes and APIs (`hsa_amd_ipc_memory_*`,
//! `hsa_amd_interop_*`): the same bytes through every mapping, in this process and another,
//! pointer information, release and argument checks (a C program).

mod c_programs;
use c_programs::*;

#[test]
fn ipc_and_interop_memory_is_shared_across_mappings_and_processes() {
    let dir = test_support::scratch_dir("vhsa-shared-memory");
    let exe = program(&dir, "shared_memory");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}
