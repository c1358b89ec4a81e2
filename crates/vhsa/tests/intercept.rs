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
