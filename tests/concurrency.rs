//! Replays beside other work on vhsa: sibling queues, two agents, batches, a stuck handler,
//! and a second copy of the library.

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
    let filtered = dispatches.iter().filter(|d| d["skipped"] == "filtered").count();
    assert_eq!(replayed, 20);
    assert_eq!(filtered, 300, "every sibling dispatch is seen and run once");
    assert!(dispatches.iter().filter(|d| d["kernel"] == "rec").all(|d| d["snapshot"]["regions"] == 3));
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
            (d["agent_name"].as_str().unwrap().to_owned(), d["window_start_ns"].as_u64().unwrap(), d["window_end_ns"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(windows.len(), 2, "{recs:#?}");
    assert_ne!(windows[0].0, windows[1].0, "one replay per agent");
    let (a, b) = (&windows[0], &windows[1]);
    assert!(a.1 < b.2 && b.1 < a.2, "the replay windows do not overlap: {windows:?}");
}

#[test]
fn a_multi_packet_batch_runs_once_with_one_warning() {
    let mut c = command(&app("concurrent", &[]), &[]);
    c.arg("batch").env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(c));
    assert_eq!(err.matches("was not replayed: only single-packet").count(), 1, "{err}");
}

#[test]
fn a_stuck_completion_handler_ends_in_the_documented_fatal_message() {
    let mut c = command(&app("concurrent", &[]), &[]);
    c.arg("stuck").env("KREPLAY_PASSES", "2").env("KREPLAY_DRAIN_TIMEOUT_MS", "200");
    let out = c.output().unwrap();
    let err = stderr(&out);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(err.contains("kreplay: fatal: pass 0 of dispatch 1 (kernel add) on agent gfx942"), "{err}");
    assert!(err.contains("the completion handler did not finish within 200 ms"), "{err}");
    assert!(err.contains("still in flight: queue"), "{err}");
    assert!(err.contains("KREPLAY_DRAIN_TIMEOUT_MS"), "{err}");
}

#[test]
fn a_second_copy_of_the_library_declines_without_double_wrapping() {
    let dir = test_support::scratch_dir("second-copy");
    let copy = dir.join("libkreplay.so");
    std::fs::copy(test_support::tool_lib(), &copy).unwrap();
    let out_dir = dir.join("records");
    let mut c = command(&app("replay", &[]), &[&copy]);
    c.args(["basic", "3"]).env("KREPLAY_PASSES", "3").env("KREPLAY_OUTPUT_DIR", &out_dir);
    let err = stderr(&run_ok(c));
    assert!(err.contains("another copy of kreplay"), "{err}");
    let recs = records(&out_dir);
    assert_eq!(recs.iter().filter(|r| r["record"] == "pass").count(), 3, "replayed once, by one copy");
}
