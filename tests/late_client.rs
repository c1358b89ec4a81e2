//! A client that registers through the C API after the application already allocated and
//! dispatched, on vhsa with the tool loaded through `HSA_TOOLS_LIB`. The application
//! (`tests/apps/late.c`) checks inside each kernel run that it saw the original input, and
//! afterwards that memory equals one execution.

mod common;

use common::*;

fn late(mode: &str, passes: &str) -> std::process::Command {
    let mut c = command(&app_linked("late"), &[]);
    c.args([mode, passes]);
    c
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_buffer_allocated_before_the_client_registered_is_restored_between_passes() {
    let o = run_ok(late("alloc-after-dispatch", "4"));
    assert!(!stdout(&o).contains("declined"), "{}", stdout(&o));
}

#[test]
fn registration_after_a_non_replayed_dispatch_replays_the_following_dispatches() {
    let o = run_ok(late("first-dispatch", "3"));
    let err = stderr(&o);
    assert!(!stdout(&o).contains("declined"), "{}", stdout(&o));
    assert!(
        !err.contains("built-in client"),
        "a refused second registration of a tool says nothing about the built-in client: {err}"
    );
}

#[test]
fn a_sibling_queue_with_untracked_work_declines_replay_until_it_submits_again() {
    let o = run_ok(late("idle-sibling", "3"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(out.matches("APP declined: ").count(), 2, "{out}");
    assert!(
        out.contains("ran dispatches before the replay client registered"),
        "{out}"
    );
    assert_eq!(
        err.matches("ran dispatches before the replay client registered")
            .count(),
        1,
        "logged once: {err}"
    );
}

#[test]
fn a_coverage_gap_is_reported_once_for_each_kernel_it_declines() {
    let o = run_ok(late("idle-sibling-two-kernels", "3"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(out.matches("APP declined: ").count(), 4, "{out}");
    let gap = "ran dispatches before the replay client registered";
    assert_eq!(err.matches(gap).count(), 2, "once per kernel: {err}");
    for kernel in ["(kernel inc)", "(kernel other)"] {
        assert_eq!(
            err.lines()
                .filter(|l| l.contains(gap) && l.contains(kernel))
                .count(),
            1,
            "{kernel} named once: {err}"
        );
    }
}

#[test]
fn a_queue_the_tool_did_not_create_is_never_replayed_and_declines_replays_on_its_agent() {
    let o = run_ok(late("foreign", "3"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(out.matches("APP declined: ").count(), 1, "{out}");
    assert!(
        out.contains("were not created through hsa_queue_create"),
        "{out}"
    );
    assert_eq!(
        err.matches("were not created through hsa_queue_create")
            .count(),
        1,
        "logged once: {err}"
    );
}

#[test]
fn a_client_registering_after_the_builtin_client_took_over_is_refused_with_a_reason() {
    let mut c = late("builtin", "1");
    c.env("KREPLAY_PASSES", "2");
    let err = stderr(&run_ok(c));
    assert_eq!(err.matches("kreplay_register refused").count(), 1, "{err}");
    assert!(
        err.contains("the built-in client, configured by KREPLAY_PASSES"),
        "{err}"
    );
}

#[test]
fn without_any_client_results_are_unchanged_and_nothing_is_logged() {
    let o = run_ok(late("none", "1"));
    let err = stderr(&o);
    assert!(
        err.is_empty(),
        "nothing to say when no client ever registers: {err}"
    );
}

#[test]
fn a_tool_listed_before_kreplay_is_warned_about_and_its_early_registration_is_refused_as_not_loaded()
 {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[]);
    let kreplay = test_support::tool_lib();
    c.env(
        "HSA_TOOLS_LIB",
        format!("{} {}", tool.display(), kreplay.display()),
    );
    // The test tool registers from its OnLoad, which runs before kreplay's: kreplay is not the
    // runtime's active tool yet, so the registration is refused with a reason and the dispatch
    // runs once.
    c.args(["basic", "1"]).env("KREPLAY_TEST_TOOL", "early");
    let err = stderr(&run_ok(c));
    assert_eq!(
        err.matches("loaded before kreplay in HSA_TOOLS_LIB")
            .count(),
        1,
        "warned once, at load: {err}"
    );
    assert!(
        err.contains(
            "TOOL register: this copy of libkreplay.so is not the HSA runtime's active tool"
        ),
        "{err}"
    );
    assert!(err.contains("TOOL OK"), "{err}");
}
