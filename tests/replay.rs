//! Replay of single dispatches on vhsa, with the tool loaded through `HSA_TOOLS_LIB`.

mod common;

use common::*;

#[test]
fn every_pass_sees_the_original_input_and_memory_ends_as_one_execution() {
    let out_dir = test_support::scratch_dir("replay-basic-records");
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "5"])
        .env("KREPLAY_PASSES", "5")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let passes: Vec<_> = recs.iter().filter(|r| r["record"] == "pass").collect();
    let dispatch: Vec<_> = recs.iter().filter(|r| r["record"] == "dispatch").collect();
    assert_eq!(passes.len(), 5, "{recs:#?}");
    assert_eq!(dispatch.len(), 1);
    let d = dispatch[0];
    assert_eq!(d["kernel"], "inc");
    assert_eq!(d["replayed"], true);
    assert_eq!(d["passes"], 5);
    assert_eq!(d["agent_name"], "gfx942");
    // Only the coarse-grained buffers are tracked: `x` and the victim buffer. Kernarg,
    // fine-grained, host and EXECUTABLE memory are not.
    assert_eq!(d["snapshot"]["regions"], 2, "{d:#}");
    assert_eq!(d["snapshot"]["bytes"], 64 * 4 + 4096);
    assert_eq!(d["restore"]["count"], 4, "restore runs only between passes");
    for (i, p) in passes.iter().enumerate() {
        assert_eq!(p["pass"], i);
        assert!(p["end_ns"].as_u64() >= p["start_ns"].as_u64());
        assert_eq!(
            p["restore_start_ns"].is_null(),
            i == 4,
            "no restore after the last pass"
        );
    }
}

#[test]
fn a_device_variable_is_restored_between_passes() {
    let co = code_object("devvar");
    let mut c = command(&app("replay", &[]), &[]);
    c.arg("devvar").arg("3").arg(&co).env("KREPLAY_PASSES", "3");
    run_ok(c);
}

#[test]
fn a_failed_module_variable_query_declines_replay() {
    let co = code_object("devvar");
    let mut c = command(&app("replay", &[]), &[]);
    // One execution: the variable's address cannot be read, so it could not be restored.
    c.arg("devvar")
        .arg("1")
        .arg(&co)
        .arg("fail-info")
        .env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(c));
    assert!(
        err.contains("not replayed") && err.contains("VARIABLE_ADDRESS"),
        "{err}"
    );
}

#[test]
fn an_injected_copy_failure_declines_replay() {
    let out_dir = test_support::scratch_dir("replay-decline-copy");
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["decline", "copy"])
        .env("KREPLAY_PASSES", "4")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let o = run_ok(c);
    let err = stderr(&o);
    assert!(
        err.contains("not replayed") && err.contains("copy"),
        "{err}"
    );
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record");
    assert_eq!(d["replayed"], false);
    assert!(
        d["skipped"].as_str().unwrap().starts_with("declined: "),
        "{d:#}"
    );
}

#[test]
fn an_injected_symbol_iteration_failure_declines_replay() {
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["decline", "symbols"]).env("KREPLAY_PASSES", "4");
    let o = run_ok(c);
    let err = stderr(&o);
    assert!(
        err.contains("not replayed") && err.contains("module-scope variables"),
        "{err}"
    );
}

#[test]
fn a_buffer_freed_between_passes_is_skipped_on_restore() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["free", "3"]).env("KREPLAY_TEST_TOOL", "free");
    let o = run_ok(c);
    let err = stderr(&o);
    assert!(err.contains("TOOL OK"), "{err}");
    // The tool's own chunk-hashing kernel never reads the freed buffer.
    assert!(!err.contains("memory fault"), "{err}");
    assert!(!err.contains("chunk hashing"), "{err}");
    assert!(err.contains("freed or shrunk since the snapshot"), "{err}");
    assert!(err.contains("TOOL pass=1 skipped_regions=1"), "{err}");
    assert!(
        err.contains("TOOL stats dispatches=1 replayed=1 passes=3 skipped_regions=2"),
        "{err}"
    );
}

#[test]
fn a_buffer_reallocated_at_a_captured_address_is_not_overwritten_by_restore() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["free", "3"]).env("KREPLAY_TEST_TOOL", "realloc");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    assert!(err.contains("TOOL pass=1 replacement_intact=1"), "{err}");
    assert!(err.contains("TOOL pass=2 replacement_intact=1"), "{err}");
    assert!(
        err.contains("replaced by a new allocation since the snapshot"),
        "{err}"
    );
    assert!(err.contains("TOOL pass=1 skipped_regions=1"), "{err}");
}

#[test]
fn a_callback_submitting_on_the_replaying_agent_ends_in_a_fatal_message_not_a_hang() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "3"]).env("KREPLAY_TEST_TOOL", "reentrant");
    let out = c.output().unwrap();
    let err = stderr(&out);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(err.contains("TOOL submitting from PASS ENTER"), "{err}");
    assert!(!err.contains("TOOL submitted from PASS ENTER"), "{err}");
    assert!(
        err.contains("kreplay: fatal: a replay callback of dispatch 1 (agent gfx942"),
        "{err}"
    );
    assert!(
        err.contains("Callbacks must not submit work on the replaying agent"),
        "{err}"
    );
}

#[test]
fn callbacks_of_two_windows_submitting_on_each_others_agents_end_in_a_fatal_message_not_a_hang() {
    let tool = test_tool(&[]);
    let mut c = command(&app("concurrent", &[]), &[&tool]);
    c.args(["agents", "3"])
        .env("VHSA_AGENTS", "gfx942,gfx90a")
        .env("KREPLAY_TEST_TOOL", "cross")
        .env("KREPLAY_DRAIN_TIMEOUT_MS", "300");
    let out = c.output().unwrap();
    let err = stderr(&out);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert_eq!(
        err.matches("TOOL cross submitting").count(),
        2,
        "both windows were open: {err}"
    );
    assert!(
        err.contains("kreplay: fatal: a replay callback of dispatch"),
        "{err}"
    );
    assert!(
        err.contains(
            "callbacks of two windows that submit on each other's agents would wait forever"
        ),
        "{err}"
    );
}

#[test]
fn a_replay_nested_in_pass_enter_keeps_the_outer_loops_localized_control() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "3"])
        .env("KREPLAY_TEST_TOOL", "nested")
        .env("VHSA_AGENTS", "gfx942,gfx90a");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    assert!(
        err.contains("TOOL passes_entered=3 passes_exited=3 continue_calls=2"),
        "{err}"
    );
    // Outer: the queue drain, then in each of 3 passes the two attached barriers and the tool's
    // barrier after the dispatch (which carries the application's signal); nested: its queue
    // drain (its dispatch has no completion signal and no AFTER packet, so no tool barrier).
    assert!(
        err.contains("TOOL vhsa dispatches=5 barrier_packets=11"),
        "{err}"
    );
}

#[test]
fn the_continue_callback_stops_early() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "2"]).env("KREPLAY_TEST_TOOL", "continue");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    assert!(
        err.contains("TOOL passes_entered=2 passes_exited=2 continue_calls=2 config=1/1"),
        "{err}"
    );
}

#[test]
fn an_unbounded_loop_ends_by_continue() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "4"]).env("KREPLAY_TEST_TOOL", "unbounded");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    assert!(
        err.contains("TOOL passes_entered=4 passes_exited=4 continue_calls=4"),
        "{err}"
    );
}

#[test]
fn localized_control_is_armed_only_in_pass_enter() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "3"]).env("KREPLAY_TEST_TOOL", "attach");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    // Fixed loop of 3: the continue callback runs after passes 0 and 1 only.
    assert!(
        err.contains("TOOL passes_entered=3 passes_exited=3 continue_calls=2"),
        "{err}"
    );
    // Barriers executed: the queue drain, the packet attached at pass 0 before passes 0, 1 and 2
    // (sticky for the loop), and after each pass's dispatch (which carries the application's
    // completion signal) the tool's barrier the pass waits for.
    assert!(
        err.contains("TOOL vhsa dispatches=3 barrier_packets=7"),
        "{err}"
    );
}

#[test]
fn a_c_tool_built_with_warnings_as_errors_passes_under_address_sanitizer() {
    let tool = test_tool(&["-fsanitize=address", "-fno-omit-frame-pointer"]);
    let mut c = command(
        &app("replay", &["-fsanitize=address", "-fno-omit-frame-pointer"]),
        &[&tool],
    );
    c.args(["basic", "3"])
        .env("KREPLAY_TEST_TOOL", "attach")
        .env("ASAN_OPTIONS", "detect_leaks=1");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    assert!(!err.contains("AddressSanitizer"), "{err}");
}

#[test]
fn an_invalid_variable_is_reported_once_and_nothing_is_replayed() {
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "1"])
        .env("KREPLAY_PASSES", "2")
        .env("KREPLAY_KERNEL_INCLUDE", "(");
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("KREPLAY_KERNEL_INCLUDE=\"(\" is invalid")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn without_configuration_every_dispatch_runs_once() {
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "1"]);
    let err = stderr(&run_ok(c));
    assert!(
        !err.contains("kreplay"),
        "nothing to say when nothing is configured: {err}"
    );
}

/// `(start, end)` the application read from its completion signal for `kernel`.
fn app_time(stdout: &str, kernel: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("APP time kernel={kernel} ")))
        .expect("an APP time line");
    let field = |k: &str| {
        line.split(&format!("{k}="))
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    (field("start"), field("end"))
}

#[test]
fn the_applications_signal_gives_the_kernels_dispatch_time_replayed_or_not() {
    // Also with slow async handlers: the application destroys its signal before the tool's
    // handler of the non-replayed dispatch reads the times from it.
    // Dispatches that are not replayed are timed only when asked (KREPLAY_TIME_ALL=1).
    for (i, faults) in ["", "handler_delay_ms=40"].into_iter().enumerate() {
        check_profiling_times(
            &test_support::scratch_dir(&format!("replay-profile-{i}")),
            faults,
        );
    }
}

#[test]
fn dispatches_not_replayed_are_untimed_by_default() {
    let out_dir = test_support::scratch_dir("replay-profile-untimed");
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["profile", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^slow$")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    let out = run_ok(c);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (start, end) = app_time(&stdout, "once");
    assert!(
        end - start >= 50_000_000,
        "the application's own signal still times its kernel: {start}..{end}"
    );
    let recs = records(&out_dir);
    assert!(
        !recs
            .iter()
            .any(|r| r["record"] == "pass" && r["kernel"] == "once"),
        "{recs:#?}"
    );
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch" && r["kernel"] == "once")
        .expect("a record of the dispatch run once");
    assert_eq!(d["timed"], false, "{d:#}");
    assert_eq!(d["passes"], 1, "{d:#}");
    assert_eq!(d["skipped"], "filtered", "{d:#}");
    assert_eq!(
        d["window_start_ns"], d["window_end_ns"],
        "an untimed record's window is its submission time: {d:#}"
    );
    assert!(
        d["window_start_ns"].as_u64().is_some_and(|t| t > 0),
        "{d:#}"
    );
    let slow = recs
        .iter()
        .filter(|r| r["record"] == "pass" && r["kernel"] == "slow")
        .count();
    assert_eq!(
        slow, 3,
        "the replayed dispatch is timed per pass: {recs:#?}"
    );
}

fn check_profiling_times(out_dir: &std::path::Path, faults: &str) {
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["profile", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_KERNEL_INCLUDE", "^slow$")
        .env("KREPLAY_TIME_ALL", "1")
        .env("VHSA_FAULTS", faults)
        .env("KREPLAY_OUTPUT_DIR", out_dir);
    let out = run_ok(c);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let recs = records(out_dir);
    for (kernel, passes) in [("slow", 3), ("once", 1)] {
        let (start, end) = app_time(&stdout, kernel);
        // The kernel sleeps 50 ms: the application sees one execution of it, not a barrier.
        assert!(
            end - start >= 50_000_000,
            "{kernel}: {start}..{end} is not the kernel's execution"
        );
        let pass_times: Vec<(u64, u64)> = recs
            .iter()
            .filter(|r| r["record"] == "pass" && r["kernel"] == kernel)
            .map(|p| {
                (
                    p["start_ns"].as_u64().unwrap(),
                    p["end_ns"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(pass_times.len(), passes, "{recs:#?}");
        assert_eq!(
            pass_times.last(),
            Some(&(start, end)),
            "{kernel} ({faults}): the application's time is the last pass's"
        );
    }
}

#[test]
fn attached_after_packets_complete_before_pass_exit() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "3"]).env("KREPLAY_TEST_TOOL", "after");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    for p in 0..3 {
        assert!(
            err.contains(&format!("TOOL pass={p} after_runs={}", p + 1)),
            "{err}"
        );
    }
}

#[test]
fn a_transient_restore_failure_is_retried_and_the_replay_completes() {
    let mut c = command(&app("replay", &[]), &[]);
    // The snapshot takes copies 1 and 2; the first two restore copies fail (without retries both
    // regions would keep pass 0's output).
    c.args(["basic", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("VHSA_FAULTS", "copy_after=2;copy_count=2");
    run_ok(c);
}

#[test]
fn a_failed_restore_that_wrote_nothing_stops_the_loop_with_memory_as_after_the_pass() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    // The snapshot takes copies 1 and 2; the first restore copy fails on every attempt: the
    // application sees exactly one execution (pass 0) and correct results.
    c.args(["basic", "1"])
        .env("KREPLAY_TEST_TOOL", "attach")
        .env("VHSA_FAULTS", "copy_after=2;copy_count=3");
    let err = stderr(&run_ok(c));
    assert!(
        err.contains("TOOL loop_stopped pass=0 reason=the restore before pass 1 failed"),
        "{err}"
    );
    assert!(err.contains("memory is as after pass 0"), "{err}");
    assert!(
        err.contains("TOOL passes_entered=1 passes_exited=1"),
        "{err}"
    );
    // The built-in client records why.
    let out_dir = test_support::scratch_dir("replay-restore-stop");
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "1"])
        .env("KREPLAY_PASSES", "3")
        .env("VHSA_FAULTS", "copy_after=2;copy_count=3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record");
    assert_eq!(
        (d["passes"].as_u64(), d["replayed"].as_bool()),
        (Some(1), Some(false)),
        "{d:#}"
    );
    assert!(
        d["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("the restore before pass 1 failed")),
        "{d:#}"
    );
}

#[test]
fn a_failed_restore_after_part_of_the_memory_was_restored_aborts_naming_dispatch_and_region() {
    let mut c = command(&app("replay", &[]), &[]);
    // The first region of the first restore is written (copy 3), the second fails every time.
    // Only the full host copy restores both regions (the kernel writes one: a changed-chunk
    // restore writes that one alone, so its failure leaves memory as after the pass and stops).
    c.args(["basic", "3"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_SNAPSHOT", "host-full")
        .env("VHSA_FAULTS", "copy_after=3;copy_count=3");
    let out = c.output().unwrap();
    let err = stderr(&out);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(
        err.contains(
            "kreplay: fatal: the restore before pass 1 of dispatch 1 (kernel inc) on agent gfx942"
        ),
        "{err}"
    );
    assert!(
        err.contains("the copy back into the allocation at 0x"),
        "{err}"
    );
    assert!(
        err.contains("mixes the dispatch's input and its output"),
        "{err}"
    );
}

#[test]
fn an_invalid_drain_decline_bound_is_reported_once_and_nothing_is_replayed() {
    let mut c = command(&app("replay", &[]), &[]);
    c.args(["basic", "1"])
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_DRAIN_DECLINE_MS", "soon");
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("KREPLAY_DRAIN_DECLINE_MS=\"soon\" is invalid")
            .count(),
        1,
        "{err}"
    );
}
