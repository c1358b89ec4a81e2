//! A dispatch that fails on its queue while it is replayed: the window sees the queue error and
//! ends, the application's error callback runs, and the application gives up cleanly.

mod common;

use common::*;

#[test]
fn a_queue_error_during_a_replay_window_reaches_the_application_without_an_abort() {
    let out_dir = test_support::scratch_dir("queue-error");
    let mut c = command(&app("queue_error", &[]), &[]);
    c.env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let out = run_ok(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("APP queue error 0x100d after 3 executions"),
        "the valid dispatch was replayed, then the error arrived: {text}"
    );
    let err = stderr(&out);
    assert!(!err.contains("fatal"), "{err}");
    let recs = records(&out_dir);
    let failed: Vec<_> = recs
        .iter()
        .filter(|r| r["record"] == "dispatch" && r["dispatch_id"] == 2)
        .collect();
    assert_eq!(failed.len(), 1, "{recs:#?}");
    assert!(
        failed[0]["stopped"]
            .as_str()
            .unwrap_or_default()
            .contains("queue error 0x100d"),
        "{:#}",
        failed[0]
    );
}
