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
    for run in 0..8 {
        let mut c = command(&app("lifecycle", &[]), &[]);
        c.args(["race", "30"]).env("KREPLAY_PASSES", "3");
        let out = c.output().expect("run the lifecycle application");
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("APP OK"),
            "run {run} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let err = stderr(&out);
        assert!(!err.contains("fatal"), "run {run}: {err}");
    }
}

#[test]
fn shutdown_while_several_threads_submit_on_host_memory_is_harmless() {
    // Four submitting threads, each on its own queue, their kernels writing fine-grained host
    // memory (host windows capture and restore it), while the main thread shuts down.
    for run in 0..3 {
        let mut c = command(&app("lifecycle", &[]), &[]);
        c.args(["race", "20", "4", "host"])
            .env("KREPLAY_PASSES", "3");
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
fn a_hip_program_exiting_while_threads_launch_replayed_kernels_exits_cleanly() {
    // `exit` tears HIP and the runtime down while four threads still launch kernels that are
    // being replayed (device and host memory), at a moment that varies from run to run.
    let exe = hip_app("exit_race");
    for (run, usec) in [500, 2000, 5000, 12000].into_iter().enumerate() {
        let out_dir = test_support::scratch_dir(&format!("exit-race-{run}"));
        let mut c = std::process::Command::new(test_support::kreplay_bin());
        for v in ["HSA_TOOLS_LIB", "KREPLAY_PASSES", "KREPLAY_HOST_MEMORY"] {
            c.env_remove(v);
        }
        let out = c
            .env("VHSA_AGENTS", "gfx90a")
            .args(["run", "--runtime", "virtual", "--passes", "3", "-d"])
            .arg(&out_dir)
            .arg("--")
            .arg(&exe)
            .args(["4", &usec.to_string()])
            .output()
            .expect("run kreplay");
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && text.contains("APP exiting after"),
            "run {run} ({}): {text}",
            out.status
        );
        assert!(
            !text.contains("fatal") && !text.contains("panicked"),
            "run {run}: {text}"
        );
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
