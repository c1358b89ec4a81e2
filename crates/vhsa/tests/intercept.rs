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
    passes_under_memcheck(&program(&dir, "intercept"));
}
