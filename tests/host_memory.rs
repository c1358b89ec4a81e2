//! Host and fine-grained memory a replayed kernel writes: restored between passes, declined, or
//! reported (`KREPLAY_HOST_MEMORY`, verify mode). The applications check their own results.

mod common;

use common::*;
use serde_json::Value;

/// Runs `host_memory <mode> <passes>` with `KREPLAY_PASSES=<passes>` and `env`; returns the
/// output, the one dispatch record and how many times the kernel ran.
fn run(mode: &str, passes: u32, env: &[(&str, &str)], check: bool) -> (String, Value, u32) {
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out_dir = test_support::scratch_dir(&format!("host-memory-{mode}-{n}"));
    let mut c = command(&app("host_memory", &[]), &[]);
    c.args([mode, &passes.to_string()])
        .env("KREPLAY_PASSES", passes.to_string())
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = if check {
        run_ok(c)
    } else {
        c.output().expect("run")
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let ran = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RAN "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no RAN line:\n{stdout}\n{}", stderr(&out)));
    let recs = records(&out_dir);
    let dispatches: Vec<Value> = recs
        .into_iter()
        .filter(|r| r["record"] == "dispatch")
        .collect();
    assert_eq!(dispatches.len(), 1, "{dispatches:#?}");
    (
        format!("{stdout}\n{}", stderr(&out)),
        dispatches[0].clone(),
        ran,
    )
}

fn assert_restored(mode: &str) {
    let (_, d, ran) = run(mode, 3, &[], true);
    assert_eq!(ran, 3, "{mode}: every pass ran");
    assert_eq!(d["replayed"], true, "{d:#}");
    assert_eq!(d["passes"], 3);
    let h = &d["host_memory"];
    assert_eq!(h["policy"], "snapshot");
    assert!(h["reachable"].as_u64().unwrap() >= 1, "{h:#}");
    assert!(h["saved_bytes"].as_u64().unwrap() >= 4096, "{h:#}");
    assert_eq!(
        h["restored_bytes"].as_u64().unwrap(),
        2 * 4096,
        "{mode}: two restores of the 4 KiB buffer: {h:#}"
    );
    assert_eq!(h["unrestored"], serde_json::json!([]));
}

#[test]
fn an_in_place_kernel_on_fine_grained_system_pool_memory_ends_as_one_execution() {
    assert_restored("fine");
}

#[test]
fn an_in_place_kernel_on_a_fine_grained_region_allocation_ends_as_one_execution() {
    assert_restored("region");
}

#[test]
fn an_in_place_kernel_on_locked_host_memory_ends_as_one_execution() {
    assert_restored("locked");
}

#[test]
fn an_in_place_kernel_on_a_fine_grained_device_pool_ends_as_one_execution() {
    assert_restored("device-fine");
}

#[test]
fn the_decline_policy_on_fine_grained_device_memory_runs_the_dispatch_once_and_says_why() {
    let (_, d, ran) = run(
        "device-fine",
        3,
        &[("KREPLAY_HOST_MEMORY", "decline")],
        true,
    );
    assert_eq!(ran, 1);
    assert_eq!(d["replayed"], false);
    let why = d["skipped"].as_str().unwrap();
    assert!(why.contains("KREPLAY_HOST_MEMORY=decline"), "{why}");
    assert!(why.contains("fine-grained device"), "{why}");
}

#[test]
fn an_output_pointer_inside_a_struct_passed_by_value_is_reached() {
    assert_restored("struct");
}

#[test]
fn a_pointer_stored_in_reached_host_memory_is_followed() {
    let (_, d, _) = run("chain", 3, &[], true);
    assert_eq!(d["host_memory"]["reachable"], 2, "table and data: {d:#}");
}

#[test]
fn a_host_thread_writing_the_buffer_during_the_window_keeps_its_write_and_stops_the_loop() {
    let (out, d, ran) = run("writer", 3, &[], true);
    assert_eq!(
        ran, 2,
        "the loop stops after the pass that saw the other writer"
    );
    let stopped = d["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("writer other than the kernel"), "{d:#}");
    assert_eq!(
        d["host_memory"]["other_writers"].as_array().unwrap().len(),
        1,
        "{d:#}"
    );
    assert!(out.contains("writer other than the kernel"), "{out}");
}

/// HIP's copy kernels write their destination without reading it, so the pages the runtime
/// locked around a pageable buffer are not captured: a host thread's store there during the
/// first pass is never reverted, and every pass runs.
#[test]
fn host_memory_reached_by_a_hip_copy_kernel_is_not_captured_and_other_stores_there_stay() {
    let (out, d, ran) = run("copy", 3, &[], true);
    assert_eq!(ran, 3, "{d:#}\n{out}");
    assert_eq!(
        (&d["replayed"], &d["passes"]),
        (&true.into(), &3.into()),
        "{d:#}"
    );
    assert!(d["stopped"].is_null(), "{d:#}");
    let h = &d["host_memory"];
    assert_eq!(h["reachable"], 1, "{h:#}");
    assert_eq!(
        (&h["saved_bytes"], &h["restored_bytes"]),
        (&0.into(), &0.into()),
        "{h:#}"
    );
    assert_eq!(h["other_writers"], serde_json::json!([]), "{h:#}");
}

/// HIP 5.2 never unlocks a pageable buffer, so a freed buffer's lock can cover a small buffer
/// locked later, while the rest of its range is the host's heap again. The kernel's pointer
/// answers to the newer, inner lock: only it is captured, and a host thread writing the outer
/// buffer during the window neither stops the loop nor loses its write.
#[test]
fn a_lock_inside_an_older_larger_lock_is_captured_alone() {
    let (out, d, ran) = run("nested", 3, &[], true);
    assert_eq!(ran, 3, "every pass ran: {d:#}\n{out}");
    assert_eq!(d["passes"], 3, "{d:#}");
    assert!(d["stopped"].is_null(), "{d:#}");
    let h = &d["host_memory"];
    assert_eq!(h["reachable"], 1, "{h:#}");
    assert_eq!(h["saved_bytes"], 4096, "only the inner lock: {h:#}");
    assert_eq!(h["restored_bytes"], 2 * 4096, "{h:#}");
    assert_eq!(h["other_writers"], serde_json::json!([]), "{h:#}");
}

#[test]
fn the_decline_policy_runs_the_dispatch_once_and_says_why() {
    let (_, d, ran) = run("fine", 3, &[("KREPLAY_HOST_MEMORY", "decline")], true);
    assert_eq!(ran, 1);
    assert_eq!(d["replayed"], false);
    let why = d["skipped"].as_str().unwrap();
    assert!(
        why.starts_with("declined: ") && why.contains("KREPLAY_HOST_MEMORY=decline"),
        "{why}"
    );
    assert!(why.contains("fine-grained system"), "{why}");
}

#[test]
fn the_ignore_policy_replays_without_restoring_and_reports_the_unrestored_write() {
    let (out, d, ran) = run("unchecked", 3, &[("KREPLAY_HOST_MEMORY", "ignore")], true);
    assert_eq!(ran, 3);
    assert!(out.contains("APPLIED 3"), "{out}");
    let h = &d["host_memory"];
    assert_eq!(h["policy"], "ignore");
    assert_eq!(h["saved_bytes"], 0);
    assert_eq!(h["unrestored"].as_array().unwrap().len(), 1, "{h:#}");
    assert!(out.contains("which kreplay did not restore"), "{out}");
}

#[test]
fn an_invalid_policy_declines_every_replay_with_the_variable_named() {
    let (_, d, ran) = run("fine", 3, &[("KREPLAY_HOST_MEMORY", "sometimes")], true);
    assert_eq!(ran, 1);
    assert!(
        d["skipped"]
            .as_str()
            .unwrap()
            .contains("KREPLAY_HOST_MEMORY=\"sometimes\""),
        "{d:#}"
    );
}

#[test]
fn verify_mode_reports_host_memory_written_through_a_pointer_the_tool_cannot_see() {
    let (out, d, ran) = run("hidden", 3, &[("KREPLAY_VERIFY", "1")], false);
    assert_eq!(ran, 3);
    assert!(
        out.contains("APPLIED 3"),
        "not restored: the pointer is in device memory: {out}"
    );
    let h = &d["host_memory"];
    assert_eq!(h["reachable"], 0, "{h:#}");
    assert_eq!(h["unrestored"].as_array().unwrap().len(), 1, "{h:#}");
    let mismatches = h["verify_mismatches"].as_array().unwrap();
    assert_eq!(mismatches.len(), 1, "{h:#}");
    assert!(
        mismatches[0]
            .as_str()
            .unwrap()
            .starts_with("fine-grained system memory at 0x"),
        "{h:#}"
    );
    assert!(
        out.contains("verify mode: kernel through_table left fine-grained system memory"),
        "{out}"
    );
}

/// `kreplay run --runtime virtual --passes 3 [extra] -- host_memory <mode> 3`: stdout and stderr.
fn kreplay_run(mode: &str, extra: &[&str]) -> String {
    let app = app("host_memory", &[]);
    let tag = extra.join("").replace('-', "");
    let out_dir = test_support::scratch_dir(&format!("host-memory-cli-{mode}{tag}"));
    let mut c = std::process::Command::new(test_support::kreplay_bin());
    for v in [
        "HSA_TOOLS_LIB",
        "KREPLAY_PASSES",
        "KREPLAY_HOST_MEMORY",
        "KREPLAY_VERIFY",
        "VHSA_AGENTS",
    ] {
        c.env_remove(v);
    }
    c.args(["run", "--runtime", "virtual", "--passes", "3", "-d"])
        .arg(&out_dir)
        .args(extra)
        .arg("--")
        .arg(&app)
        .args([mode, "3"]);
    let out = c.output().expect("run kreplay");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn the_summary_gives_host_memory_saved_and_restored() {
    let text = kreplay_run("fine", &[]);
    assert!(text.contains("APP OK"), "{text}");
    assert!(text.contains("host saved  host restored"), "{text}");
    assert!(
        text.contains("host memory: saved 4.00 KiB, restored 8.00 KiB"),
        "{text}"
    );
}

#[test]
fn the_host_memory_option_sets_the_policy_and_the_summary_warns_about_unrestored_writes() {
    let text = kreplay_run("unchecked", &["--host-memory", "ignore"]);
    assert!(text.contains("APPLIED 3"), "{text}");
    assert!(
        text.contains(
            "warning: 1 dispatch(es) of in_place wrote memory kreplay could not restore (e.g. fine-grained system memory at 0x"
        ),
        "{text}"
    );
    let declined = kreplay_run("fine", &["--host-memory", "decline"]);
    assert!(declined.contains("RAN 1"), "{declined}");
    assert!(
        declined.contains("KREPLAY_HOST_MEMORY=decline"),
        "{declined}"
    );
}

/// `kreplay run --runtime virtual --passes 3 -- host_memory_hip <mode>` on a gfx90a agent: the
/// program's own check passes and its kernel was replayed three times with host memory restored.
fn hip_replayed(mode: &str) {
    let exe = hip_app("host_memory_hip");
    let out_dir = test_support::scratch_dir(&format!("host-memory-hip-{mode}"));
    let (out, text) = kreplay_run_virtual(&exe, &[mode], &out_dir);
    assert!(out.status.success(), "{text}");
    assert!(
        text.lines().any(|l| l == "PASS"),
        "own check failed under replay: {text}"
    );
    let doc: Value = serde_json::from_slice::<Value>(
        &std::fs::read(out_dir.join("kreplay_results.json")).unwrap(),
    )
    .unwrap()["kreplay"]
        .take();
    let kernel = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| {
            let n = k["kernel"].as_str().unwrap_or_default();
            n.contains("in_place") || n.contains("through_struct")
        })
        .unwrap_or_else(|| panic!("no record of the program's kernel: {doc:#}"));
    assert_eq!(kernel["replayed"], 1, "{kernel:#}");
    assert_eq!(kernel["passes_max"], 3, "{kernel:#}");
    assert_eq!(kernel["host_bytes_saved"], 4096, "{kernel:#}");
    assert_eq!(kernel["host_bytes_restored"], 8192, "{kernel:#}");
}

#[test]
fn hip_host_malloc_default_memory_is_restored_between_passes() {
    hip_replayed("hostmalloc");
}

#[test]
fn hip_host_malloc_mapped_coherent_memory_is_restored_between_passes() {
    hip_replayed("coherent");
}

#[test]
fn hip_host_malloc_mapped_non_coherent_memory_is_restored_between_passes() {
    hip_replayed("noncoherent");
}

#[test]
fn hip_host_registered_memory_is_restored_between_passes() {
    hip_replayed("register");
}

#[test]
fn hip_output_pointer_inside_a_struct_passed_by_value_is_restored_between_passes() {
    hip_replayed("struct");
}

fn assert_declined_as_shared(mode: &str) {
    let (out, d, ran) = run(mode, 3, &[], true);
    assert_eq!(ran, 1, "{mode}: declined, the kernel ran once\n{out}");
    assert_eq!(d["replayed"], false, "{d:#}");
    let why = d["skipped"].as_str().unwrap_or_default();
    assert!(why.contains("shared with another process or API"), "{why}");
    assert!(why.contains("1 allocation(s)"), "{why}");
}

#[test]
fn a_kernel_writing_ipc_imported_memory_is_declined_and_runs_once() {
    assert_declined_as_shared("ipc");
    let (_, d, _) = run("ipc", 3, &[], true);
    assert!(
        d["skipped"].as_str().unwrap().contains("IPC-imported"),
        "{d:#}"
    );
}

#[test]
fn a_kernel_writing_an_interop_buffer_is_declined_and_runs_once() {
    assert_declined_as_shared("interop");
}

#[test]
fn the_ignore_policy_replays_over_shared_memory_and_reports_it_unrestored() {
    for mode in ["ipc-unchecked", "interop-unchecked"] {
        let (out, d, ran) = run(mode, 3, &[("KREPLAY_HOST_MEMORY", "ignore")], true);
        assert_eq!(ran, 3, "{mode}");
        // In one process the exporter's device allocation is the same memory and the device
        // snapshot restores it; the interop buffer has no such twin.
        if mode.starts_with("interop") {
            assert!(out.contains("APPLIED 3"), "{mode}: {out}");
        }
        assert_eq!(
            d["host_memory"]["unrestored"].as_array().unwrap().len(),
            1,
            "{mode}: {d:#}"
        );
    }
}
