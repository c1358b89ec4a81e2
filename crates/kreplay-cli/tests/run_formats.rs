//! The rocpd database and the Perfetto protobuf trace of real runs, read back with independent
//! readers (Python's sqlite3, the `perfetto` package's protos), and the database of a run
//! killed by SIGKILL in the middle.

mod common;
mod readers;

use common::{demo_app, kreplay};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const KERNELS: [&str; 4] = [
    "demo_fill",
    "demo_vector_add",
    "demo_scale_in_place",
    "demo_accumulate",
];
/// The demo's grid and work-group sizes (kreplay-demo-app's N and WORKGROUP).
const DEMO_GRID: u64 = 4096;
const DEMO_WORKGROUP: u64 = 64;

fn base_kernel(name: &str) -> &str {
    name.strip_suffix(".kd").unwrap_or(name)
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

/// Checks the database rows that every run must satisfy; returns the dispatches.
fn check_database(db: &Value, passes: u64) -> Vec<Value> {
    assert_eq!(db["integrity"], "ok");
    assert_eq!(db["foreign_key_violations"], 0);
    let tables: Vec<&str> = db["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for t in [
        "rocpd_info_node",
        "rocpd_info_process",
        "rocpd_info_agent",
        "rocpd_info_kernel_symbol",
        "rocpd_kernel_dispatch",
        "rocpd_event",
        "rocpd_kreplay_pass",
        "rocpd_kreplay_dispatch",
        "rocpd_kreplay_pmc_event",
    ] {
        assert!(tables.contains(&t), "table {t} missing: {tables:?}");
    }
    assert_eq!(
        db["suffixed_tables"], 23,
        "20 rocpd tables and kreplay's 3, suffixed"
    );
    let dispatches = db["dispatches"].as_array().unwrap().clone();
    // CLOCK_BOOTTIME: every dispatch ended before the reader's boottime now, and recently.
    let now = u(&db["boottime_now"]);
    for d in &dispatches {
        assert!(
            u(&d["end"]) <= now && now - u(&d["end"]) < 600_000_000_000,
            "{d} vs {now}"
        );
    }
    let passes_of: BTreeMap<u64, Vec<&Value>> =
        db["passes"]
            .as_array()
            .unwrap()
            .iter()
            .fold(BTreeMap::new(), |mut m, p| {
                m.entry(u(&p["kernel_dispatch_id"]))
                    .or_insert_with(Vec::new)
                    .push(p);
                m
            });
    for d in &dispatches {
        let rows = &passes_of[&u(&d["id"])];
        assert_eq!(rows.len() as u64, passes, "pass rows of {d}");
        assert_eq!(
            rows.iter()
                .map(|p| u(&p["replay_pass"]))
                .collect::<Vec<_>>(),
            (0..passes).collect::<Vec<_>>()
        );
        // The dispatch's times are those of the pass the application keeps: the last.
        let last = rows.last().unwrap();
        assert_eq!((&d["start"], &d["end"]), (&last["start"], &last["end"]));
        assert!(u(&d["window_start"]) <= u(&rows[0]["start"]));
        assert!(u(&last["end"]) <= u(&d["window_end"]));
        assert_eq!(d["replayed"], if passes > 1 { 1 } else { 0 });
        assert_eq!(u(&d["passes"]), passes);
        assert_eq!(
            (u(&d["grid_size_x"]), u(&d["workgroup_size_x"])),
            (DEMO_GRID, DEMO_WORKGROUP)
        );
        assert!(u(&d["tid"]) > 0);
        if passes > 1 {
            // The default store on vhsa's large device pool keeps everything on the agent.
            assert_eq!(d["store"], "device");
            assert!(u(&d["snapshot_bytes"]) > 0);
            // Restore rows between passes, none after the last.
            assert!(
                rows[..rows.len() - 1]
                    .iter()
                    .all(|p| !p["restore_ns"].is_null())
            );
            assert!(last["restore_ns"].is_null());
        }
    }
    dispatches
}

#[test]
fn rocpd_and_pftrace_of_a_replayed_demo_read_back_with_independent_readers() {
    let scratch = test_support::scratch_dir("cli-formats");
    let out = kreplay()
        .args(["run", "--runtime", "virtual", "--passes", "3", "-d"])
        .arg(&scratch)
        .args(["-f", "rocpd", "pftrace", "json", "--", demo_app()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    // rocpd, read by sqlite3.
    let db = readers::rocpd(&scratch.join("kreplay_results.db"));
    let dispatches = check_database(&db, 3);
    assert_eq!(dispatches.len(), 10);
    let count = |k: &str| {
        dispatches
            .iter()
            .filter(|d| base_kernel(d["kernel_name"].as_str().unwrap()) == k)
            .count()
    };
    assert_eq!(KERNELS.map(count), [1, 3, 3, 3]);
    let symbols: BTreeSet<&str> = db["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| base_kernel(k["kernel_name"].as_str().unwrap()))
        .collect();
    assert_eq!(symbols, KERNELS.into_iter().collect());
    let agents = db["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(
        (&agents[0]["type"], &agents[0]["name"]),
        (&"GPU".into(), &"gfx942".into())
    );
    let processes = db["processes"].as_array().unwrap();
    assert_eq!(processes.len(), 1);
    let pid = u(&processes[0]["pid"]);
    assert_eq!(u(&processes[0]["id"]), pid);
    assert!(
        processes[0]["command"]
            .as_str()
            .unwrap()
            .ends_with("kreplay-demo-app")
    );
    assert_eq!(db["kernels_view_rows"], 10);
    assert_eq!(db["kreplay_kernels_view_rows"], 10);
    assert_eq!(db["cpu_agents"], 1);

    // The JSON rows (our own writer, from the same records) agree with the database.
    let doc: Value =
        serde_json::from_slice(&std::fs::read(scratch.join("kreplay_results.json")).unwrap())
            .unwrap();
    let rows = doc["kreplay"]["rows"].as_array().unwrap();
    let pass_times: BTreeSet<(u64, u64, u64)> = db["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (u(&p["replay_pass"]), u(&p["start"]), u(&p["end"])))
        .collect();
    let json_times: BTreeSet<(u64, u64, u64)> = rows
        .iter()
        .map(|r| (u(&r["pass"]), u(&r["start_ns"]), u(&r["end_ns"])))
        .collect();
    assert_eq!(pass_times, json_times);
    assert!(rows.iter().all(|r| u(&r["pid"]) == pid));

    // pftrace, decoded by the perfetto package's protos.
    let trace = readers::pftrace(&scratch.join("kreplay_results.pftrace"));
    assert_eq!(trace["errors"], Value::Array(vec![]), "{}", trace["errors"]);
    let tracks = trace["tracks"].as_array().unwrap();
    let process: Vec<&Value> = tracks.iter().filter(|t| !t["pid"].is_null()).collect();
    assert_eq!(process.len(), 1);
    assert_eq!(u(&process[0]["pid"]), pid);
    assert_eq!(process[0]["name"], "kreplay-demo-app");
    assert_eq!(trace["primary_trace_clock"], "BUILTIN_CLOCK_BOOTTIME");
    let children = |parent: &Value| -> Vec<&Value> {
        tracks.iter().filter(|t| &t["parent"] == parent).collect()
    };
    let under_process = children(&process[0]["uuid"]);
    assert_eq!(under_process.len(), 1, "one agent track");
    let agent = under_process[0];
    assert_eq!(agent["name"], "Agent 1 (GPU 0, gfx942)");
    let under_agent = children(&agent["uuid"]);
    let named = |name: &str| -> &Value {
        under_agent
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no track {name}: {under_agent:?}"))
    };
    let kernels = named("QUEUE [0]");
    let replay = named("QUEUE [0] replay");
    assert_eq!(named("bytes restored")["counter"], true);
    assert_eq!(under_agent.len(), 3);

    let slices = trace["slices"].as_array().unwrap();
    // The kernel slices: one per dispatch, each exactly its kept pass (the database's times).
    let kernel_slices: Vec<&Value> = slices
        .iter()
        .filter(|s| s["track"] == kernels["uuid"])
        .collect();
    assert_eq!(kernel_slices.len(), 10);
    let kernel_spans: BTreeSet<(String, u64, u64)> = kernel_slices
        .iter()
        .map(|s| {
            assert_eq!(s["category"], Value::from(vec!["KERNEL_DISPATCH"]));
            assert_eq!(s["depth"], 0);
            assert_eq!(u(&s["args"]["delta_ns"]), u(&s["end"]) - u(&s["start"]));
            assert_eq!(s["args"]["grid_size"], format!("({DEMO_GRID},1,1)"));
            (
                base_kernel(s["name"].as_str().unwrap()).to_owned(),
                u(&s["start"]),
                u(&s["end"]),
            )
        })
        .collect();
    let db_spans: BTreeSet<(String, u64, u64)> = dispatches
        .iter()
        .map(|d| {
            (
                base_kernel(d["kernel_name"].as_str().unwrap()).to_owned(),
                u(&d["start"]),
                u(&d["end"]),
            )
        })
        .collect();
    assert_eq!(kernel_spans, db_spans);
    // The replay windows, beside them, with the snapshot, passes and restores inside.
    let tops: Vec<&Value> = slices
        .iter()
        .filter(|s| s["track"] == replay["uuid"] && s["depth"] == 0)
        .collect();
    assert_eq!(tops.len(), 10);
    for top in &tops {
        assert_eq!(top["name"], "replay");
        let kids: Vec<&Value> = slices
            .iter()
            .filter(|s| s["parent"] == top["index"])
            .collect();
        let names: Vec<&str> = kids.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "snapshot", "pass 0", "restore", "pass 1", "restore", "pass 2"
            ],
            "children of {top}"
        );
        for k in &kids {
            assert_eq!(k["depth"], 1);
            assert!(u(&top["start"]) <= u(&k["start"]) && u(&k["end"]) <= u(&top["end"]));
            assert_eq!(k["args"]["dispatch_id"], top["args"]["dispatch_id"]);
        }
    }
    // Every pass slice is a pass row of the database.
    let trace_passes: BTreeSet<(u64, u64, u64)> = slices
        .iter()
        .filter(|s| s["depth"] == 1 && s["category"] == Value::from(vec!["pass"]))
        .map(|s| (u(&s["args"]["pass"]), u(&s["start"]), u(&s["end"])))
        .collect();
    assert_eq!(trace_passes, pass_times);
    // The counter climbs to the bytes restored over the run.
    let values: Vec<u64> = trace["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| u(&c["value"]))
        .collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
    let restored: u64 = dispatches.iter().map(|d| u(&d["restore_bytes"])).sum();
    assert!(restored > 0);
    assert_eq!(values.last().copied(), Some(restored));
}

/// Counts the dispatch rows with Python's sqlite3; 0 while the file cannot be read.
fn dispatch_rows(db: &Path) -> u64 {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             try:\n    c = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)\n    print(c.execute('SELECT COUNT(*) FROM rocpd_kernel_dispatch').fetchone()[0])\n\
             except sqlite3.Error:\n    print(0)",
        ])
        .arg(db)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The held application, killed when the test ends whatever happened.
struct HeldApp(i32);

impl Drop for HeldApp {
    fn drop(&mut self) {
        // SAFETY: kill has no memory-safety requirements.
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

/// The application's pid, from the name of its record file (`kreplay-<pid>.jsonl` in the
/// staging directory of the run).
fn app_pid_from_records(scratch: &Path) -> Option<i32> {
    for dir in std::fs::read_dir(scratch).ok()? {
        let dir = dir.ok()?.path();
        if !dir
            .file_name()?
            .to_string_lossy()
            .starts_with(".kreplay-records-")
        {
            continue;
        }
        for f in std::fs::read_dir(&dir).ok()? {
            let name = f.ok()?.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix("kreplay-")
                .and_then(|n| n.strip_suffix(".jsonl"))
            {
                return pid.parse().ok();
            }
        }
    }
    None
}

/// Starts `kreplay run --passes 2` on the demo held after its 4th dispatch; returns the child
/// once the application says it holds and the database has the 4 dispatches.
fn held_run(scratch: &Path) -> (std::process::Child, PathBuf, HeldApp) {
    let mut child = kreplay()
        .args(["run", "--runtime", "virtual", "--passes", "2", "-d"])
        .arg(scratch)
        .args(["--", demo_app(), "--hold-after", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let held = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("holding after dispatch 4"));
    assert!(held, "the application never reached its 4th dispatch");
    let app = HeldApp(app_pid_from_records(scratch).expect("the application's record file"));
    let db = scratch.join("kreplay_results.db");
    // The database is filled while the application runs: it reaches 4 rows with the
    // application still holding (bounded, so a broken follower fails instead of hanging).
    let mut waited = 0;
    while dispatch_rows(&db) < 4 {
        assert!(
            waited < 1200,
            "the database never held the 4 completed dispatches"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    (child, db, app)
}

fn check_four_dispatches(db: &Path) -> u64 {
    let db = readers::rocpd(db);
    let dispatches = check_database(&db, 2);
    let names: Vec<&str> = dispatches
        .iter()
        .map(|d| base_kernel(d["kernel_name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            "demo_fill",
            "demo_vector_add",
            "demo_scale_in_place",
            "demo_accumulate"
        ]
    );
    u(&db["processes"][0]["pid"])
}

#[test]
fn kreplay_killed_by_sigkill_leaves_a_database_that_opens_with_the_completed_dispatches() {
    let scratch = test_support::scratch_dir("cli-formats-sigkill");
    let (mut child, db, app) = held_run(&scratch);
    // SAFETY: kill has no memory-safety requirements.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    // The application, orphaned and still holding, is ended when `app` drops.
    assert_eq!(check_four_dispatches(&db), app.0 as u64);
    assert!(
        !scratch.join("kreplay_summary.txt").exists(),
        "kreplay died before writing the other outputs"
    );
}

#[test]
fn an_application_killed_by_sigkill_leaves_its_completed_dispatches_in_the_database() {
    let scratch = test_support::scratch_dir("cli-formats-app-sigkill");
    let (child, db, app) = held_run(&scratch);
    let app_pid = app.0 as u64;
    drop(app);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 9), "{stderr}");
    assert!(stderr.contains("killed by SIGKILL (9)"), "{stderr}");
    assert_eq!(check_four_dispatches(&db), app_pid);
    let summary = std::fs::read_to_string(scratch.join("kreplay_summary.txt")).unwrap();
    assert!(
        summary.contains("4 kernels, 4 dispatches, 4 replayed"),
        "{summary}"
    );
}

#[test]
fn declined_dispatches_are_named_per_kernel_in_the_summary_and_the_database() {
    let scratch = test_support::scratch_dir("cli-formats-declined");
    // The application's two copies in succeed; the next two (the first snapshots) fail.
    let out = kreplay()
        .args(["run", "--runtime", "virtual", "--passes", "3", "-d"])
        .arg(&scratch)
        .args(["--", demo_app()])
        .env("VHSA_FAULTS", "copy_after=2;copy_count=2")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("results verified"), "{stdout}");
    let db = readers::rocpd(&scratch.join("kreplay_results.db"));
    assert_eq!(db["integrity"], "ok");
    let mut declined: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for d in db["dispatches"].as_array().unwrap() {
        let e = declined
            .entry(d["kernel_name"].as_str().unwrap().to_owned())
            .or_default();
        e.1 += 1;
        if let Some(reason) = d["declined_reason"].as_str() {
            e.0 += 1;
            assert!(reason.starts_with("device-to-host copy"), "{reason}");
            assert_eq!((u(&d["passes"]), &d["replayed"]), (1, &Value::from(0)));
            assert!(d["skipped"].as_str().unwrap().starts_with("declined: "));
        }
    }
    let total: u64 = declined.values().map(|(n, _)| n).sum();
    assert!(total >= 1, "the injected copy failures declined nothing");
    let summary = std::fs::read_to_string(scratch.join("kreplay_summary.txt")).unwrap();
    assert!(
        summary.contains("declined (each ran once, normally):"),
        "{summary}"
    );
    for (kernel, (n, of)) in &declined {
        let line = format!("  {kernel}: {n} of {of} dispatches\n");
        assert_eq!(summary.contains(&line), *n > 0, "{line:?} in\n{summary}");
    }
    assert!(
        summary.contains(" x device-to-host copy of the region at 0x"),
        "{summary}"
    );
}
