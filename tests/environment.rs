//! The tool's environment variables with values it cannot use, on vhsa with the tool loaded
//! through `HSA_TOOLS_LIB`: one message naming the variable and the value, and the documented
//! consequence (`docs/formats.md`).

mod common;

use common::*;

#[test]
fn a_pass_count_above_the_bound_is_refused_naming_the_bound_and_nothing_is_replayed() {
    for value in ["10001", "4294967295"] {
        let mut c = command(&app("replay", &[]), &[]);
        // One execution: the application checks the kernel ran exactly once.
        c.args(["basic", "1"]).env("KREPLAY_PASSES", value);
        let err = stderr(&run_ok(c));
        assert_eq!(
            err.matches(&format!("KREPLAY_PASSES=\"{value}\" is invalid"))
                .count(),
            1,
            "{err}"
        );
        assert!(
            err.contains("from 1 to 10000"),
            "the message names the bound: {err}"
        );
    }
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "10000"]).env("KREPLAY_PASSES", "10000");
    let err = stderr(&run_ok(c));
    assert!(
        !err.contains("invalid"),
        "the bound itself is accepted: {err}"
    );
}

#[test]
fn an_invalid_drain_timeout_is_reported_once_and_every_replay_is_declined() {
    for value in ["0", "abc"] {
        let out_dir = test_support::scratch_dir(&format!("environment-drain-{value}"));
        let mut c = command(&app("replay", &[]), &[]);
        c.args(["basic", "1"])
            .env("KREPLAY_PASSES", "3")
            .env("KREPLAY_DRAIN_TIMEOUT_MS", value)
            .env("KREPLAY_OUTPUT_DIR", &out_dir);
        let err = stderr(&run_ok(c));
        assert_eq!(
            err.matches("KREPLAY_DRAIN_TIMEOUT_MS").count(),
            1,
            "one message: {err}"
        );
        assert!(
            err.contains(&format!("KREPLAY_DRAIN_TIMEOUT_MS=\"{value}\" is invalid")),
            "{err}"
        );
        let recs = records(&out_dir);
        let d = recs
            .iter()
            .find(|r| r["record"] == "dispatch")
            .expect("dispatch record");
        assert_eq!(d["replayed"], false, "{d:#}");
        let skipped = d["skipped"].as_str().unwrap_or_default();
        assert!(
            skipped.starts_with("declined: KREPLAY_DRAIN_TIMEOUT_MS="),
            "{d:#}"
        );
    }
}

#[test]
fn an_invalid_drain_timeout_declines_a_tool_clients_replays_too() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    // The test tool asks for 3 passes; the dispatch runs once and no pass event is delivered.
    c.args(["basic", "1"])
        .env("KREPLAY_TEST_TOOL", "declined")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "abc");
    let err = stderr(&run_ok(c));
    assert!(
        err.contains("KREPLAY_DRAIN_TIMEOUT_MS=\"abc\" is invalid"),
        "{err}"
    );
    assert!(
        err.contains("TOOL declined: KREPLAY_DRAIN_TIMEOUT_MS=\"abc\" is invalid"),
        "the client gets the reason: {err}"
    );
    assert!(
        err.contains("TOOL passes_entered=0 passes_exited=0"),
        "{err}"
    );
    assert!(err.contains("TOOL OK"), "{err}");
}

#[test]
fn an_unparsable_log_filter_is_reported_and_the_default_keeps_warnings_visible() {
    let mut c = command(&app("replay", &[]), &[]);
    // A copy fault declines the replay: a warning at the default level.
    c.args(["decline", "copy"])
        .env("KREPLAY_PASSES", "4")
        .env("KREPLAY_LOG", "dbug");
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("KREPLAY_LOG=\"dbug\" is not a valid log filter")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("using the default `warn`"), "{err}");
    assert!(
        err.contains("not replayed"),
        "the default filter shows the warning: {err}"
    );
}
