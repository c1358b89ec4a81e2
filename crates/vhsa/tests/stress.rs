//! Stress: 4 threads x 4 queues x 2 GPU agents x 10,000 dispatches; no lost completion and no
//! deadlock (every wait in the program is bounded and names what it waited for).

mod c_programs;
use c_programs::*;

#[test]
fn many_threads_queues_and_agents() {
    let dir = test_support::scratch_dir("vhsa-stress");
    let exe = program(&dir, "stress");
    let mut cmd = command(&exe);
    cmd.env("VHSA_AGENTS", "gfx942,gfx90a");
    let out = run_ok(cmd);
    assert!(stdout(&out).contains("PASS 320000"), "{}", stdout(&out));
}
