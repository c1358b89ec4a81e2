//! `kreplay run` around the application's process tree and its outputs: processes the
//! application started that outlive it, outputs that cannot be written after the run, and the
//! virtual topology handed to the application.

mod common;
use common::{demo_app, kreplay, text};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `kreplay run --runtime virtual -d <dir> <options> -- sh -c <script>`.
fn run_script(dir: &Path, options: &[&str], script: &str) -> Output {
    kreplay()
        .args(["run", "-f", "csv", "json", "--runtime", "virtual", "-d"])
        .arg(dir)
        .args(options)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

fn json_rows(dir: &Path) -> Vec<Value> {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("kreplay_results.json")).unwrap()).unwrap();
    doc["kreplay"]["rows"].as_array().unwrap().clone()
}

fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn records_of_a_child_that_outlives_the_application_are_collected() {
    let dir = test_support::scratch_dir("cli-tree-collect");
    // The application exits at once; the process it started dispatches all ten kernels
    // afterwards (the demo application, replayed 3 times each).
    let script = format!(
        "'{}' > '{}' 2>&1 & exit 0",
        demo_app(),
        dir.join("child.log").display()
    );
    let out = run_script(&dir, &["--passes", "3"], &script);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let log = std::fs::read_to_string(dir.join("child.log")).unwrap();
    assert!(log.contains("results verified"), "{log}");
    let rows = json_rows(&dir);
    assert_eq!(rows.len(), 10 * 3, "{stderr}");
    assert!(
        rows.iter()
            .all(|r| r["passes"] == 3 && r["replayed"] == true)
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("kreplay_passes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 30);
}

#[test]
fn a_child_still_running_at_the_bound_is_named_in_a_warning() {
    let dir = test_support::scratch_dir("cli-tree-warn");
    let script = "sleep 60 >/dev/null 2>&1 & echo $!; exit 0";
    let out = run_script(&dir, &["--wait-for-children", "0.3"], script);
    let stderr = text(&out.stderr);
    let pid: u32 = text(&out.stdout).trim().parse().unwrap();
    let still_running = pid_alive(pid);
    // SAFETY: kill has no memory-safety requirements.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(still_running, "kreplay leaves the process running");
    assert!(
        stderr.contains(&format!(
            "warning: 1 process started by the application still runs after waiting 0.3 s (--wait-for-children) (pid {pid})"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("records written later are missing"),
        "{stderr}"
    );
    assert!(dir.join("kreplay_passes.csv").exists());
}

#[test]
fn without_waiting_the_missing_child_is_reported() {
    let dir = test_support::scratch_dir("cli-tree-nowait");
    // The child starts dispatching only after kreplay stopped waiting (0 s): the outputs miss
    // its dispatches, and the warning names it.
    let script = format!(
        "(sleep 1; exec '{}') >/dev/null 2>&1 & echo $!; exit 0",
        demo_app()
    );
    let out = run_script(&dir, &["--wait-for-children", "0"], &script);
    let stderr = text(&out.stderr);
    let pid: u32 = text(&out.stdout).trim().parse().unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The subshell, and its `sleep` once it has started it.
    let one = format!(
        "1 process started by the application still runs after waiting 0 s (--wait-for-children) (pid {pid})"
    );
    let two = format!(
        "2 processes started by the application still run after waiting 0 s (--wait-for-children) (pid {pid}, "
    );
    assert!(stderr.contains(&one) || stderr.contains(&two), "{stderr}");
    assert!(json_rows(&dir).is_empty());
    // Let it finish before the scratch directory goes away.
    while pid_alive(pid) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn outputs_that_cannot_be_written_after_the_run_keep_the_records_visible() {
    let dir = test_support::scratch_dir("cli-tree-keep");
    // The application makes the CSV's name a directory, so writing the CSV fails after the run.
    let script = format!(
        "mkdir '{}' && exec '{}'",
        dir.join("kreplay_passes.csv").display(),
        demo_app()
    );
    let out = run_script(&dir, &["--passes", "2", "-f", "csv"], &script);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(stderr.contains("kreplay: error: writing"), "{stderr}");
    let kept = stderr
        .split("the records of this run are kept in ")
        .nth(1)
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("no records location in: {stderr}"));
    let kept = Path::new(kept);
    assert!(kept.starts_with(&dir), "{}", kept.display());
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("kreplay-records-"),
        "visible, not hidden: {name}"
    );
    let files: Vec<_> = std::fs::read_dir(kept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let records = std::fs::read_to_string(&files[0]).unwrap();
    let dispatch_lines = records
        .lines()
        .filter(|l| l.contains("\"record\":\"dispatch\""))
        .count();
    assert_eq!(dispatch_lines, 10, "every dispatch of the run is kept");
    for e in std::fs::read_dir(&dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !n.starts_with(".kreplay-records"),
            "hidden staging left: {n}"
        );
    }
}

#[test]
fn virtual_agents_reach_the_application_instead_of_the_environment() {
    let dir = test_support::scratch_dir("cli-tree-agents");
    let out = kreplay()
        .env("VHSA_AGENTS", "gfx1100")
        .args([
            "run",
            "-f",
            "csv",
            "json",
            "--runtime",
            "virtual",
            "--virtual-agents",
            " gfx942 , gfx90a",
            "-d",
        ])
        .arg(&dir)
        .args([
            "--",
            "sh",
            "-c",
            "printf '%s|%s' \"$VHSA_AGENTS\" \"$HSA_TOOLS_ROCPROFILER_V1_TOOLS\"",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "gfx942,gfx90a|1");

    // The demo runs on a gfx90a-only topology: its agent is named so in the rows.
    let out = kreplay()
        .args([
            "run",
            "-f",
            "csv",
            "json",
            "--runtime",
            "virtual",
            "--virtual-agents",
            "gfx90a",
            "--passes",
            "2",
            "-d",
        ])
        .arg(&dir)
        .args(["--", demo_app()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows = json_rows(&dir);
    assert_eq!(rows.len(), 20);
    assert!(
        rows.iter().all(|r| r["agent_name"] == "gfx90a"),
        "{:?}",
        rows[0]
    );
}

#[test]
fn a_signal_to_kreplay_ends_the_wait_for_children() {
    let dir = test_support::scratch_dir("cli-tree-signal");
    let child = kreplay()
        .args([
            "run",
            "-f",
            "csv",
            "json",
            "--runtime",
            "virtual",
            "--wait-for-children",
            "600",
            "-d",
        ])
        .arg(&dir)
        .args([
            "--",
            "sh",
            "-c",
            "sleep 600 >/dev/null 2>&1 & echo $!; exit 0",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // kreplay waits once `sleep`, re-parented to it, is its only child.
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let waiting = || -> bool {
        let Ok(list) = std::fs::read_to_string(&children) else {
            return false;
        };
        let pids: Vec<&str> = list.split_whitespace().collect();
        pids.len() == 1
            && std::fs::read_to_string(format!("/proc/{}/comm", pids[0]))
                .is_ok_and(|c| c.trim() == "sleep")
    };
    while !waiting() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety requirements.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    let pid: u32 = text(&out.stdout).trim().parse().unwrap();
    let sleep_survived = pid_alive(pid);
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(sleep_survived, "kreplay does not kill what it waited for");
    assert!(
        stderr.contains(&format!("1 process started by the application still runs when SIGTERM stopped the wait (pid {pid})")),
        "{stderr}"
    );
    assert!(dir.join("kreplay_passes.csv").exists());
}
