//! Replays beside other work on vhsa: sibling queues, two agents, batches, a pass that never
//! completes, slow and blocked async handlers, work that depends on the replayed dispatch, host
//! writes from another thread, and a second copy of the library.

mod common;

use common::*;

#[test]
fn sibling_queue_writes_are_never_reverted_and_passes_see_identical_input() {
    let out_dir = test_support::scratch_dir("concurrency-siblings");
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["siblings", "20", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let dispatches: Vec<_> = recs.iter().filter(|r| r["record"] == "dispatch").collect();
    let replayed = dispatches.iter().filter(|d| d["replayed"] == true).count();
    let filtered = dispatches
        .iter()
        .filter(|d| d["skipped"] == "filtered")
        .count();
    assert_eq!(replayed, 20);
    assert_eq!(filtered, 300, "every sibling dispatch is seen and run once");
    assert!(
        dispatches
            .iter()
            .filter(|d| d["kernel"] == "rec")
            .all(|d| d["snapshot"]["regions"] == 3)
    );
}

#[test]
fn replays_on_two_agents_overlap_in_time() {
    let out_dir = test_support::scratch_dir("concurrency-agents");
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["agents", "3"])
        .env("VHSA_AGENTS", "gfx942,gfx90a")
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let windows: Vec<(String, u64, u64)> = recs
        .iter()
        .filter(|r| r["record"] == "dispatch")
        .map(|d| {
            assert_eq!(d["passes"], 3);
            (
                d["agent_name"].as_str().unwrap().to_owned(),
                d["window_start_ns"].as_u64().unwrap(),
                d["window_end_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(windows.len(), 2, "{recs:#?}");
    assert_ne!(windows[0].0, windows[1].0, "one replay per agent");
    let (a, b) = (&windows[0], &windows[1]);
    assert!(
        a.1 < b.2 && b.1 < a.2,
        "the replay windows do not overlap: {windows:?}"
    );
}

#[test]
fn each_dispatch_of_a_multi_packet_batch_is_replayed() {
    // Two-packet submissions (two dispatches each): every dispatch runs 3 passes, memory ends as
    // one execution, the application's signal fires once.
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["batch", "3"]).env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(c));
    assert!(!err.contains("was not replayed"), "{err}");
}

#[test]
fn a_replay_waits_for_a_slow_dispatch_not_replayed_on_a_sibling_queue() {
    // The sibling's dispatch is counted on its queue's counting signal (carried by the dispatch
    // without a signal, by a barrier after the one with the application's signal): the
    // agent-wide drain waits for it, so every pass reads its output and no restore reverts it.
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["slowsibling", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$");
    let out = run_ok(c);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("APP slowsibling OK"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_batch_replays_its_dispatches_in_order_and_forwards_other_packets_once() {
    let out_dir = test_support::scratch_dir("concurrency-batchorder-records");
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["batchorder", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let out = run_ok(c);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("APP batchorder dddiiidddiii"),
        "{}",
        stderr(&out)
    );
    let recs = records(&out_dir);
    let replayed: Vec<_> = recs
        .iter()
        .filter(|r| r["record"] == "dispatch" && r["replayed"] == true)
        .collect();
    assert_eq!(
        replayed.len(),
        4,
        "both dispatches of both batches: {recs:#?}"
    );
    // Without a client the same submissions run each dispatch once.
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["batchorder", "1"]);
    let out = run_ok(c);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("APP batchorder didi"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_pass_that_never_completes_ends_in_the_documented_fatal_message() {
    let mut c = command(&app("concurrent", &[]), &[]);
    c.arg("stuck")
        .env("KREPLAY_PASSES", "2")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "200");
    let out = c.output().unwrap();
    let err = stderr(&out);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(
        err.contains("kreplay: fatal: pass 0 of dispatch 1 (kernel add) on agent gfx942"),
        "{err}"
    );
    assert!(
        err.contains("the dispatch did not complete within 200 ms"),
        "{err}"
    );
    assert!(err.contains("KREPLAY_DRAIN_TIMEOUT_MS"), "{err}");
}

/// Replays beside a busy sibling stream while the runtime's async-handler thread is slow or
/// blocked: a pass waits for its own signal, so nothing there delays or aborts it.
fn replays_beside_busy_siblings_with_handlers(how: &str) {
    let out_dir = test_support::scratch_dir(&format!("concurrency-handlers-{how}"));
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["handlers", "20", "3", how])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "1000")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let out = run_ok(c);
    assert!(!stderr(&out).contains("fatal"), "{}", stderr(&out));
    let recs = records(&out_dir);
    let dispatches: Vec<_> = recs.iter().filter(|r| r["record"] == "dispatch").collect();
    assert_eq!(
        dispatches.iter().filter(|d| d["replayed"] == true).count(),
        20,
        "every replay ran its passes"
    );
    assert_eq!(
        dispatches
            .iter()
            .filter(|d| d["skipped"] == "filtered")
            .count(),
        300,
        "every sibling dispatch is reported"
    );
}

#[test]
fn slow_async_handlers_beside_a_busy_sibling_neither_delay_nor_abort_replays() {
    replays_beside_busy_siblings_with_handlers("slow");
}

#[test]
fn a_blocked_application_async_handler_does_not_stop_replays() {
    replays_beside_busy_siblings_with_handlers("blocked");
}

#[test]
fn an_async_handler_submitting_on_the_replaying_agent_does_not_deadlock_the_pass() {
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["submitter", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "5000");
    run_ok(c);
}

/// Work that can only finish after the replayed dispatch: the window declines, the dispatch runs
/// once, and everything completes.
fn dependent_work_declines(mode: &str) {
    let out_dir = test_support::scratch_dir(&format!("concurrency-{mode}"));
    let mut c = command(&app("concurrent", &[]), &[]);
    c.arg(mode)
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$")
        .env("KREPLAY_DRAIN_DECLINE_MS", "200")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "20000")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("(kernel rec) on agent gfx942").count(),
        1,
        "reported once: {err}"
    );
    assert!(
        err.contains("not replayed") && err.contains("within 200 ms (KREPLAY_DRAIN_DECLINE_MS)"),
        "{err}"
    );
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch" && r["kernel"] == "rec")
        .expect("rec record");
    assert_eq!(d["replayed"], false, "{d:#}");
    assert!(
        d["skipped"].as_str().unwrap().starts_with("declined: "),
        "{d:#}"
    );
}

#[test]
fn a_sibling_barrier_waiting_for_a_signal_set_after_the_replay_declines_it() {
    dependent_work_declines("crossqueue");
}

#[test]
fn a_dispatch_behind_earlier_work_gated_by_a_host_signal_is_replayed_once_the_gate_opens() {
    // The gate opens only after the dispatch's submission returned: its window runs off the
    // submitting thread, and every pass sees the original input.
    let out_dir = test_support::scratch_dir("concurrency-hostgate");
    let mut c = command(&app("concurrent", &[]), &[]);
    c.args(["hostgate", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let err = stderr(&run_ok(c));
    assert!(!err.contains("not replayed"), "{err}");
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch" && r["kernel"] == "rec")
        .expect("rec record");
    assert_eq!(d["replayed"], true, "{d:#}");
    assert!(d["skipped"].is_null(), "{d:#}");
}

#[test]
fn host_copies_fills_and_image_writes_during_replay_windows_are_never_reverted() {
    let mut c = command(&app("concurrent", &[]), &[]);
    // gfx90a: the writes include image imports and clears (images need MIMG).
    c.args(["hostwrites", "300"])
        .env("VHSA_AGENTS", "gfx90a")
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^rec$");
    let out = run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rounds: u32 = text
        .split("rounds=")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(rounds >= 10, "replays overlapped the writes: {text}");
}

#[test]
fn a_second_copy_of_the_library_declines_without_double_wrapping() {
    let dir = test_support::scratch_dir("second-copy");
    let copy = dir.join("libkreplay.so");
    std::fs::copy(test_support::tool_lib(), &copy).unwrap();
    let out_dir = dir.join("records");
    let mut c = command(&app("replay", &[]), &[&copy]);
    c.args(["basic", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let err = stderr(&run_ok(c));
    assert!(err.contains("another copy of kreplay"), "{err}");
    let recs = records(&out_dir);
    assert_eq!(
        recs.iter().filter(|r| r["record"] == "pass").count(),
        3,
        "replayed once, by one copy"
    );
}
