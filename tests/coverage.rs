//! What a replay's snapshot covers: peer memory, variables of any linkage, the client's own
//! memory, client-excluded and client-included ranges, and executables destroyed meanwhile.
//! The tool is loaded through `HSA_TOOLS_LIB` on vhsa.

mod common;

use common::*;

#[test]
fn peer_memory_the_replaying_agent_was_given_access_to_is_restored() {
    let out_dir = test_support::scratch_dir("coverage-peer-records");
    let mut c = command(&app_linked("coverage"), &[]);
    c.args(["peer", "4"])
        .env("VHSA_AGENTS", "gfx942,gfx90a")
        .env("KREPLAY_PASSES", "4")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record");
    assert_eq!(d["replayed"], true, "{d:#}");
    // The peer buffer only: GPU 1's other buffer was never shared with GPU 0.
    assert_eq!(d["snapshot"]["regions"], 1, "{d:#}");
    assert_eq!(d["snapshot"]["bytes"], 16 * 4, "{d:#}");
}

#[test]
fn static_and_anonymous_namespace_device_variables_are_restored() {
    let out_dir = test_support::scratch_dir("coverage-hidden-records");
    let co = code_object("hidden");
    let mut c = command(&app_linked("coverage"), &[]);
    c.arg("hidden")
        .arg("3")
        .arg(&co)
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record");
    assert_eq!(d["kernel"], "bump_hidden", "{d:#}");
    assert_eq!(d["replayed"], true, "{d:#}");
}

#[test]
fn a_loaded_code_objects_headers_are_read_once_not_at_every_snapshot() {
    let co = code_object("hidden");
    let mut c = command(&app_linked("coverage"), &[]);
    c.args(["repeat", "8", "3"])
        .arg(&co)
        .env("KREPLAY_PASSES", "3");
    let out = String::from_utf8_lossy(&run_ok(c).stdout).into_owned();
    let line = out
        .lines()
        .find(|l| l.starts_with("APP device_to_host"))
        .unwrap_or_else(|| panic!("no byte counts printed: {out}"));
    let bytes = |key: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {line:?}"))
    };
    let (first, last) = (bytes("after_first="), bytes("after_last="));
    assert!(first > 0, "the first snapshot reads the headers: {line}");
    // Snapshots stay in device memory: any device-to-host copy after the first dispatch is a
    // re-read of a code object's headers (a copy from device memory on a discrete GPU).
    assert_eq!(
        last, first,
        "7 more replayed dispatches read device memory back: {line}"
    );
}

#[test]
fn an_executable_destroyed_and_replaced_during_a_replay_is_never_written() {
    let (a, b, c) = (
        code_object("devvar"),
        code_object("alpha"),
        code_object("gamma"),
    );
    let mut cmd = command(&app_linked("coverage"), &[]);
    cmd.arg("destroy")
        .arg("3")
        .args([&a, &b, &c])
        .env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(cmd));
    assert!(
        err.contains("was destroyed since the snapshot"),
        "the destroyed executable's regions are skipped: {err}"
    );
}

#[test]
fn an_executable_destroyed_during_a_replay_does_not_crash_the_restore() {
    let (a, b) = (code_object("devvar"), code_object("alpha"));
    let mut cmd = command(&app_linked("coverage"), &[]);
    cmd.arg("destroy")
        .arg("3")
        .args([&a, &b])
        .arg("-")
        .env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(cmd));
    assert!(err.contains("was destroyed since the snapshot"), "{err}");
}

#[test]
fn executables_loaded_and_destroyed_while_replays_run_never_break_a_restore() {
    let (a, b) = (code_object("devvar"), code_object("alpha"));
    let mut cmd = command(&app_linked("coverage"), &[]);
    cmd.args(["churn", "40", "3"])
        .args([&a, &b])
        .env("KREPLAY_PASSES", "3");
    let err = stderr(&run_ok(cmd));
    assert!(err.contains("APP churn cycles="), "{err}");
}

#[test]
fn a_kernel_of_an_executable_loaded_after_another_was_destroyed_has_its_own_name() {
    let out_dir = test_support::scratch_dir("coverage-names-records");
    let mut c = command(&app_linked("coverage"), &[]);
    c.arg("names")
        .arg(code_object("alpha"))
        .arg(code_object("gamma"))
        .env("KREPLAY_PASSES", "2")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let mut dispatches: Vec<_> = recs.iter().filter(|r| r["record"] == "dispatch").collect();
    dispatches.sort_by_key(|d| d["dispatch_id"].as_u64());
    let names: Vec<_> = dispatches
        .iter()
        .map(|d| d["kernel"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["alpha", "gamma"], "{dispatches:#?}");
}

#[test]
fn a_clients_own_buffers_allocated_from_its_callbacks_are_left_alone() {
    let tool = test_tool(&[]);
    let mut c = command(&app("replay", &[]), &[&tool]);
    c.args(["basic", "3"]).env("KREPLAY_TEST_TOOL", "ownbuf");
    let err = stderr(&run_ok(c));
    assert!(err.contains("TOOL OK"), "{err}");
    for pass in 0..3 {
        // The application's two tracked buffers; not the tool's.
        assert!(
            err.contains(&format!(
                "TOOL pass={pass} own_buffer_intact=1 snapshot_regions=2"
            )),
            "{err}"
        );
    }
}

#[test]
fn an_excluded_range_is_not_restored_and_an_included_one_is() {
    let mut c = command(&app_linked("coverage"), &[]);
    c.args(["ranges", "3"]).env("KREPLAY_PASSES", "3");
    run_ok(c);
}
