//! Packets attached for one pass only, pass events on dispatches that run once (the client's
//! `KREPLAY_CLIENT_PASS_EVENTS_ALWAYS`), and the barrier bit of a dispatch that packets precede:
//! the C test tool attaches marker kernels whose runs it logs, and the application records the
//! barrier bit of each execution of its dispatch.

mod common;

use common::*;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `replay <args>` with the test tool in `mode`, with or without the opt-in.
fn run(args: [&str; 2], mode: &str, always: bool) -> Output {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(args).env("KREPLAY_TEST_TOOL", mode);
    if always {
        c.env("KREPLAY_TEST_TOOL_ALWAYS", "1");
    }
    let o = run_ok(c);
    assert!(stderr(&o).contains("TOOL OK"), "{}", stderr(&o));
    o
}

#[test]
fn packets_attached_for_one_pass_run_in_that_pass_only() {
    let o = run(["basic", "3"], "perpass", false);
    let err = stderr(&o);
    // Pass 0: its own 'a' after the dispatch, then the loop's 'S'; pass 1: its own 'b' before,
    // its own 'a' after, then 'S'; pass 2: only the loop's 'S'.
    assert!(err.contains("TOOL sequence=aS|baS|S|\n"), "{err}");
    assert!(
        err.contains("TOOL passes_entered=3 passes_exited=3"),
        "{err}"
    );
    // Only pass 1 had packets before its dispatch.
    assert!(
        stdout(&o).contains("APP barrier_bits=010\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_dispatch_run_once_gets_pass_events_with_the_opt_in() {
    let o = run(["basic", "1"], "single", true);
    let err = stderr(&o);
    assert!(
        err.contains("TOOL passes_entered=1 passes_exited=1 continue_calls=0 config=1/1"),
        "{err}"
    );
    assert!(err.contains("TOOL sequence=ba|\n"), "{err}");
    assert!(
        stdout(&o).contains("APP barrier_bits=1\n"),
        "{}",
        stdout(&o)
    );
    // Not a replay: no pass counted as replayed, nothing declined.
    assert!(
        err.contains("TOOL stats dispatches=1 replayed=0 passes=0"),
        "{err}"
    );
    assert!(!err.contains("declined"), "{err}");
}

#[test]
fn a_dispatch_run_once_gets_no_pass_events_without_the_opt_in() {
    let o = run(["basic", "1"], "single", false);
    let err = stderr(&o);
    assert!(
        err.contains("TOOL passes_entered=0 passes_exited=0 continue_calls=0 config=1/1"),
        "{err}"
    );
    assert!(err.contains("TOOL sequence=\n"), "{err}");
    assert!(
        stdout(&o).contains("APP barrier_bits=0\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_declined_replay_gets_pass_events_for_its_one_execution_with_the_opt_in() {
    // The injected copy failure makes the snapshot incomplete inside the window.
    let o = run(["decline", "copy"], "declined", true);
    let err = stderr(&o);
    assert!(err.contains("TOOL declined: "), "{err}");
    assert!(
        err.contains("TOOL passes_entered=1 passes_exited=1 continue_calls=0"),
        "{err}"
    );
    assert!(err.contains("TOOL pass_exit pass=0 declined: "), "{err}");
    assert!(err.contains("TOOL sequence=ba|\n"), "{err}");
    assert!(
        stdout(&o).contains("APP barrier_bits=1\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_declined_replay_gets_no_pass_events_without_the_opt_in() {
    let o = run(["decline", "copy"], "declined", false);
    let err = stderr(&o);
    assert!(err.contains("TOOL declined: "), "{err}");
    assert!(
        err.contains("TOOL passes_entered=0 passes_exited=0"),
        "{err}"
    );
    assert!(err.contains("TOOL sequence=\n"), "{err}");
    assert!(
        stdout(&o).contains("APP barrier_bits=0\n"),
        "{}",
        stdout(&o)
    );
}
