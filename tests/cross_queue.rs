//! Cross-queue dependencies on a replayed dispatch: a sibling queue's barrier waiting on the
//! dispatch's completion signal (as `hipStreamWaitEvent` submits it), or on a marker submitted
//! behind the dispatch with the same doorbell, or with a barrier-OR, does not make the window wait
//! for that queue, so the dispatch is replayed instead of declined after the drain bound. A
//! dispatch rung together with a barrier on a host signal the host sets after ringing is
//! replayed off the submitting thread once the gate opens.

mod common;

use common::*;

#[test]
fn a_sibling_queue_waiting_on_the_replayed_dispatch_does_not_decline_it() {
    sibling_waits_and_the_dispatch_is_replayed("");
}

#[test]
fn a_sibling_queue_waiting_on_a_marker_behind_the_replayed_dispatch_does_not_decline_it() {
    sibling_waits_and_the_dispatch_is_replayed("marker");
}

#[test]
fn a_sibling_queue_waiting_with_a_barrier_or_on_the_replayed_dispatch_does_not_decline_it() {
    sibling_waits_and_the_dispatch_is_replayed("or");
}

#[test]
fn a_dispatch_behind_a_host_gate_rung_with_it_is_replayed_once_the_gate_opens() {
    sibling_waits_and_the_dispatch_is_replayed("gate");
}

#[test]
fn a_dispatch_behind_a_barrier_value_packet_on_a_host_signal_is_replayed_once_it_opens() {
    sibling_waits_and_the_dispatch_is_replayed("value");
}

#[test]
fn a_copy_waiting_on_a_deferred_dispatch_declines_its_replay_without_a_hang() {
    // The copy may sit in the runtime's in-order copy engine ahead of the snapshot's own copies:
    // the deferred window declines, the dispatch runs once, and the copy sees its result.
    for d in produce_records("gatecopy", 2) {
        assert_eq!(d["replayed"], false, "{d:#}");
        let why = d["skipped"].as_str().unwrap_or_default();
        assert!(
            why.contains("asynchronous copies waiting on signals"),
            "{d:#}"
        );
    }
}

fn sibling_waits_and_the_dispatch_is_replayed(mode: &str) {
    for d in produce_records(mode, 6) {
        assert_eq!(d["replayed"], true, "{d:#}");
        assert!(d["skipped"].is_null(), "{d:#}");
    }
}

/// Runs two rounds of `cross_queue <mode>` with `produce` replayed 3 times; checks the program's
/// own results and that `produce` ran `runs` times, and returns its two dispatch records.
fn produce_records(mode: &str, runs: u32) -> Vec<serde_json::Value> {
    let out_dir = test_support::scratch_dir(&format!("cross-queue-{mode}"));
    let mut c = command(&app("cross_queue", &[]), &[]);
    c.args(["2", mode])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^produce$")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let out = run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("APP produce_runs={runs} ")),
        "{text}"
    );
    let produce: Vec<_> = records(&out_dir)
        .into_iter()
        .filter(|r| r["record"] == "dispatch" && r["kernel"] == "produce")
        .collect();
    assert_eq!(produce.len(), 2, "{produce:#?}");
    produce
}
