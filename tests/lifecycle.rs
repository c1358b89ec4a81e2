//! The runtime's lifetime inside one process, on vhsa with the tool loaded through
//! `HSA_TOOLS_LIB` (`tests/apps/lifecycle.c`): replay across `hsa_shut_down`/`hsa_init` cycles,
//! and `hsa_shut_down` while another thread submits.

mod common;

use common::*;

#[test]
fn replay_keeps_working_across_shutdown_and_init_cycles() {
    let mut c = command(&app("lifecycle", &[]), &[]);
    c.args(["cycles", "5", "3"]).env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(c));
    assert!(
        !err.contains("declin"),
        "every runtime instance loads the tool and replays: {err}"
    );
}

#[test]
fn a_tool_client_registers_again_in_each_runtime_instance() {
    let mut c = command(&app("lifecycle", &[]), &[&test_tool(&[])]);
    c.args(["cycles", "3", "3"])
        .env("KREPLAY_TEST_TOOL", "attach");
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("TOOL OK").count(),
        3,
        "one report per runtime instance: {err}"
    );
    assert!(!err.contains("TOOL FAIL"), "{err}");
}

#[test]
fn shutdown_while_another_thread_submits_is_harmless() {
    // Without the tool the racing thread's calls are refused once the runtime shut down; with it
    // the same holds, whatever the moment of the shutdown (it varies from round to round).
    races_end_cleanly(8, &["race", "30"]);
}

#[test]
fn shutdown_while_several_threads_submit_on_host_memory_is_harmless() {
    // Four submitting threads, each on its own queue, their kernels writing fine-grained host
    // memory (host windows capture and restore it), while the main thread shuts down.
    races_end_cleanly(3, &["race", "20", "4", "host"]);
}

/// Runs `lifecycle <args>` `runs` times with 3 passes per dispatch: each run ends cleanly.
fn races_end_cleanly(runs: u32, args: &[&str]) {
    for run in 0..runs {
        let mut c = command(&app("lifecycle", &[]), &[]);
        c.args(args).env("KREPLAY_PASSES", "3");
        let out = c.output().expect("run the lifecycle application");
        let err = stderr(&out);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("APP OK"),
            "run {run} failed ({}):\n{err}",
            out.status
        );
        assert!(!err.contains("fatal"), "run {run}: {err}");
    }
}

#[test]
fn shutdown_while_another_thread_submits_is_harmless_with_a_tool_client() {
    // The test tool registers from its OnLoad in every runtime instance and is unloaded after
    // each OnUnload: no callback may reach it afterwards.
    for run in 0..4 {
        let mut c = command(&app("lifecycle", &[]), &[&test_tool(&[])]);
        c.args(["race", "30"]);
        let out = c.output().expect("run the lifecycle application");
        let err = stderr(&out);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("APP OK"),
            "run {run} failed ({}):\n{err}",
            out.status
        );
        assert!(
            !err.contains("TOOL FAIL") && !err.contains("fatal"),
            "run {run}: {err}"
        );
        assert_eq!(
            err.matches("TOOL OK").count(),
            30,
            "one report per runtime instance: {err}"
        );
    }
}
