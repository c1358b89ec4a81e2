//! Intercept queues: handler order, per-packet calls, forwarding, multiple writer calls,
//! dropped packets, batches, slot invalidation, destroying a queue whose handler still runs on
//! another thread (a C program linked with the runtime).

mod c_programs;
use c_programs::*;

#[test]
fn intercept_queue_semantics() {
    let dir = test_support::scratch_dir("vhsa-intercept");
    let exe = program(&dir, "intercept");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

/// The same program under valgrind's memcheck: a proxy destroyed while another thread's handler
/// still runs is not written after it is freed.
#[test]
fn intercept_queues_touch_no_freed_memory() {
    let dir = test_support::scratch_dir("vhsa-intercept-memcheck");
    let exe = program(&dir, "intercept");
    let mut cmd = command(std::path::Path::new("valgrind"));
    cmd.args(["-q", "--error-exitcode=9"]).arg(&exe);
    let out = cmd
        .output()
        .expect("run valgrind (scripts/install-deps.sh installs it)");
    assert!(
        out.status.success() && stdout(&out).contains("PASS"),
        "memcheck found errors (exit {:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}
