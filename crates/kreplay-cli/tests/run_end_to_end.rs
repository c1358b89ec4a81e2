//! `kreplay run` and `kreplay demo` end to end: real processes, the tool library loaded by the
//! virtual runtime, the bundled demo application replayed, and the outputs parsed back.

mod common;
use common::{demo_app, kreplay, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

const KERNELS: [&str; 4] = [
    "demo_fill",
    "demo_vector_add",
    "demo_scale_in_place",
    "demo_accumulate",
];

fn run(args: &[&str]) -> Output {
    kreplay().args(args).output().expect("run kreplay")
}

/// The only subdirectory of `dir` (the `%pid%` directory of one run).
fn only_subdir(dir: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

fn base_kernel(name: &str) -> &str {
    name.strip_suffix(".kd").unwrap_or(name)
}

fn json_rows(dir: &Path) -> Vec<Value> {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("kreplay_results.json")).unwrap()).unwrap();
    doc["kreplay"]["rows"].as_array().unwrap().clone()
}

/// (kernel, occurrence) of each dispatch in the rows, with its pass count.
fn dispatches(rows: &[Value]) -> Vec<(String, u64, u64)> {
    let mut seen = BTreeSet::new();
    let mut per_kernel = std::collections::HashMap::new();
    let mut out = Vec::new();
    for r in rows {
        let id = r["dispatch_id"].as_u64().unwrap();
        if seen.insert(id) {
            let k = base_kernel(r["kernel"].as_str().unwrap()).to_owned();
            let n = per_kernel.entry(k.clone()).or_insert(0u64);
            out.push((k, *n, r["passes"].as_u64().unwrap()));
            *n += 1;
        }
    }
    out
}

fn assert_no_temporaries(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains(".tmp-") && !name.starts_with(".kreplay-records"),
            "left behind: {name}"
        );
    }
}

#[test]
fn replayed_demo_keeps_correct_results_and_every_output_parses() {
    let scratch = test_support::scratch_dir("cli-run-all");
    let out = run(&[
        "run",
        "--runtime",
        "virtual",
        "--passes",
        "3",
        "-d",
        &format!("{}/%pid%", scratch.display()),
        "-f",
        "csv",
        "json",
        "chrome",
        "--",
        demo_app(),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("results verified"), "{stdout}");
    assert!(stderr.contains("kreplay: runtime: virtual"), "{stderr}");
    let dir = only_subdir(&scratch);
    assert_no_temporaries(&dir);

    // CSV: a header and one row per pass of the 10 dispatches.
    let csv = std::fs::read_to_string(dir.join("kreplay_passes.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 10 * 3);
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "dispatch_id",
        "kernel",
        "agent",
        "pass",
        "start_ns",
        "end_ns",
        "duration_ns",
        "snapshot_bytes",
        "restore_bytes",
    ] {
        assert!(header.contains(&col), "missing column {col}");
    }
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.split(',').count() == header.len())
    );

    // JSON: the same rows; every dispatch replayed with 3 passes; durations consistent.
    let rows = json_rows(&dir);
    assert_eq!(rows.len(), 30);
    for r in &rows {
        assert_eq!(r["passes"], 3);
        assert_eq!(r["replayed"], true);
        assert_eq!(
            r["duration_ns"].as_u64().unwrap(),
            r["end_ns"].as_u64().unwrap() - r["start_ns"].as_u64().unwrap()
        );
        assert!(r["snapshot_bytes"].as_u64().unwrap() > 0);
        assert_eq!(r["agent_name"], "gfx942");
    }
    let d = dispatches(&rows);
    let count = |k: &str| d.iter().filter(|(n, _, _)| n == k).count();
    assert_eq!(KERNELS.map(count), [1, 3, 3, 3]);

    // Chrome trace events: valid JSON with the documented structure.
    let trace: Value =
        serde_json::from_slice(&std::fs::read(dir.join("kreplay_trace.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let cat = |c: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == c)
            .cloned()
            .collect::<Vec<_>>()
    };
    let (slices, passes, snaps, restores) = (
        cat("dispatch"),
        cat("pass"),
        cat("snapshot"),
        cat("restore"),
    );
    assert_eq!(
        (slices.len(), passes.len(), snaps.len(), restores.len()),
        (10, 30, 10, 20)
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == "process_name")
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == "thread_name")
    );
    for s in &slices {
        let (start, end) = (
            s["ts"].as_f64().unwrap(),
            s["ts"].as_f64().unwrap() + s["dur"].as_f64().unwrap(),
        );
        let id = &s["args"]["dispatch_id"];
        let children: Vec<&Value> = passes
            .iter()
            .chain(&snaps)
            .chain(&restores)
            .filter(|c| &c["args"]["dispatch_id"] == id)
            .collect();
        assert_eq!(children.len(), 3 + 1 + 2);
        for c in children {
            assert_eq!((&c["pid"], &c["tid"]), (&s["pid"], &s["tid"]));
            let (cs, ce) = (
                c["ts"].as_f64().unwrap(),
                c["ts"].as_f64().unwrap() + c["dur"].as_f64().unwrap(),
            );
            assert!(start <= cs && ce <= end + 1e-6, "{c} not inside {s}");
        }
    }

    // Summary: each kernel with its dispatch count and 3 passes.
    let summary = std::fs::read_to_string(dir.join("kreplay_summary.txt")).unwrap();
    assert!(stderr.contains(summary.lines().next().unwrap()));
    for (kernel, n) in KERNELS.iter().zip([1, 3, 3, 3]) {
        let line = summary
            .lines()
            .find(|l| base_kernel(l.split_whitespace().next().unwrap()) == *kernel)
            .unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &cells[1..4],
            &[n.to_string(), n.to_string(), "3".to_string()],
            "{line}"
        );
    }
    assert!(
        summary.contains("4 kernels, 10 dispatches, 10 replayed"),
        "{summary}"
    );

    // The raw records are kept.
    let records = dir.join("kreplay_records");
    assert!(
        std::fs::read_dir(&records).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".jsonl"))
    );
}

#[test]
fn include_regex_and_iteration_range_select_exactly_those_dispatches() {
    let scratch = test_support::scratch_dir("cli-run-filter");
    let out = run(&[
        "run",
        "--runtime",
        "virtual",
        "--passes",
        "2",
        "--kernel-include-regex",
        "scale|accumulate",
        "--kernel-iteration-range",
        "[1-2]",
        "-d",
        &scratch.display().to_string(),
        "-f",
        "json",
        "--",
        demo_app(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let rows = json_rows(&scratch);
    let d = dispatches(&rows);
    let replayed: BTreeSet<(String, u64)> = d
        .iter()
        .filter(|(_, _, p)| *p == 2)
        .map(|(k, n, _)| (k.clone(), *n))
        .collect();
    let expected: BTreeSet<(String, u64)> = [
        ("demo_scale_in_place", 1),
        ("demo_scale_in_place", 2),
        ("demo_accumulate", 1),
        ("demo_accumulate", 2),
    ]
    .iter()
    .map(|(k, n)| (k.to_string(), *n))
    .collect();
    assert_eq!(replayed, expected);
    assert!(d.iter().all(|(_, _, p)| *p == 1 || *p == 2));
    let replayed_rows = rows.iter().filter(|r| r["replayed"] == true).count();
    assert_eq!(replayed_rows, 4 * 2);
    for r in rows.iter().filter(|r| r["replayed"] == false) {
        assert_eq!(r["passes"], 1);
        assert_eq!(r["skipped"], "filtered");
    }
    assert!(
        !scratch.join("kreplay_passes.csv").exists()
            && !scratch.join("kreplay_trace.json").exists()
    );
}

#[test]
fn exclude_regex_and_output_name_templates() {
    let scratch = test_support::scratch_dir("cli-run-exclude");
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "--passes",
            "2",
            "--kernel-exclude-regex",
            "^demo_fill",
            "-f",
            "csv",
            "-o",
            "run_%pid%_r%rank%",
        ])
        .args(["-d", &format!("{}/%hostname%", scratch.display())])
        .args(["--", demo_app()])
        .env("PMI_RANK", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = only_subdir(&scratch);
    let host = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!host.is_empty() && !host.contains('%'));
    let csv_name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("_passes.csv"))
        .expect("csv written");
    let csv = std::fs::read_to_string(dir.join(&csv_name)).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let pid = rows[0][0];
    assert_eq!(
        csv_name,
        format!("run_{pid}_r3_passes.csv"),
        "%pid% is the application's pid"
    );
    // The fill dispatch runs once; the nine others twice.
    assert_eq!(rows.len(), 1 + 9 * 2);
    for r in &rows {
        let replayed = r[6] == "true";
        assert_eq!(replayed, !r[2].starts_with("demo_fill"), "{r:?}");
    }
    assert!(!dir.join(format!("run_{pid}_r3_results.json")).exists());
}

#[test]
fn a_crashed_application_leaves_the_dispatches_completed_before_the_crash() {
    let scratch = test_support::scratch_dir("cli-run-crash");
    let out = run(&[
        "run",
        "--runtime",
        "virtual",
        "--passes",
        "3",
        "-d",
        &scratch.display().to_string(),
        "-f",
        "csv,json,chrome",
        "--",
        demo_app(),
        "--crash-after",
        "4",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 11), "{stderr}");
    assert!(stderr.contains("killed by SIGSEGV (11)"), "{stderr}");
    assert!(
        stderr.contains("the 4 dispatches completed before it"),
        "{stderr}"
    );
    assert_no_temporaries(&scratch);
    let csv = std::fs::read_to_string(scratch.join("kreplay_passes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4 * 3);
    assert_eq!(json_rows(&scratch).len(), 12);
    let trace: Value =
        serde_json::from_slice(&std::fs::read(scratch.join("kreplay_trace.json")).unwrap())
            .unwrap();
    let slices = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "dispatch")
        .count();
    assert_eq!(slices, 4);
    let summary = std::fs::read_to_string(scratch.join("kreplay_summary.txt")).unwrap();
    assert!(
        summary.contains("4 kernels, 4 dispatches, 4 replayed"),
        "{summary}"
    );
}

#[test]
fn the_environment_reaches_the_application_and_its_exit_code_comes_back() {
    let scratch = test_support::scratch_dir("cli-run-env");
    let script = "printf '%s|%s|%s|%s|%s|%s|%s' \"$HSA_TOOLS_LIB\" \"$HSA_TOOLS_ROCPROFILER_V1_TOOLS\" \"$KREPLAY_PASSES\" \
        \"$KREPLAY_KERNEL_INCLUDE\" \"$KREPLAY_KERNEL_ITERATION_RANGE\" \"$KREPLAY_LOG\" \"${LD_LIBRARY_PATH%%:*}\"; exit 7";
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "--passes",
            "4",
            "--kernel-include-regex",
            "gemm",
            "--kernel-iteration-range",
            "2-3, 5",
        ])
        .args([
            "--log-level",
            "debug",
            "-d",
            &scratch.display().to_string(),
            "--",
            "sh",
            "-c",
            script,
        ])
        .env("HSA_TOOLS_LIB", "librocprofiler-sdk-tool.so")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    let stdout = text(&out.stdout);
    let fields: Vec<&str> = stdout.split('|').collect();
    let tool = test_support::tool_lib();
    assert_eq!(
        fields[0],
        format!("librocprofiler-sdk-tool.so {}", tool.display())
    );
    assert_eq!(&fields[1..6], &["1", "4", "gemm", "[2-3],[5]", "debug"]);
    assert!(
        Path::new(fields[6]).join("libhsa-runtime64.so.1").exists(),
        "{}",
        fields[6]
    );
    assert!(text(&out.stderr).contains("no dispatch records"));
}

#[test]
fn a_signal_sent_to_kreplay_reaches_the_application() {
    let scratch = test_support::scratch_dir("cli-run-signal");
    let child = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "-d",
            &scratch.display().to_string(),
            "--",
            "sleep",
            "600",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the application runs (kreplay's child process has become `sleep`).
    let children = PathBuf::from(format!("/proc/{0}/task/{0}/children", child.id()));
    let running = || -> bool {
        let Ok(list) = std::fs::read_to_string(&children) else {
            return false;
        };
        list.split_whitespace().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        })
    };
    while !running() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety requirements.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 15), "{stderr}");
    assert!(stderr.contains("killed by SIGTERM (15)"), "{stderr}");
    assert!(
        scratch.join("kreplay_results.db").exists(),
        "rocpd is the default format"
    );
    assert!(!scratch.join("kreplay_passes.csv").exists());
}

#[test]
fn demo_runs_the_bundled_application_and_prints_the_summary() {
    let scratch = test_support::scratch_dir("cli-demo");
    let out = run(&["demo", "-d", &scratch.display().to_string()]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("results verified"), "{stdout}");
    for kernel in KERNELS {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(kernel))
            .unwrap_or_else(|| panic!("{kernel} missing:\n{stdout}"));
        assert_eq!(line.split_whitespace().nth(3), Some("5"), "{line}");
    }
    assert!(stdout.contains("4 kernels, 10 dispatches, 10 replayed"));
    let csv = std::fs::read_to_string(scratch.join("kreplay_passes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 50);
    for name in ["kreplay_results.db", "kreplay_results.pftrace"] {
        assert!(scratch.join(name).exists(), "{name}");
        assert!(
            stdout.contains(&scratch.join(name).display().to_string()),
            "{stdout}"
        );
    }
}
