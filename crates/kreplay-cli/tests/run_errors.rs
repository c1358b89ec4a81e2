//! Every error of `kreplay run` gives a clear message and its own exit code, and the
//! application is not started.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn kreplay() -> Command {
    test_support::tool_lib();
    test_support::vhsa_lib_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in ["KREPLAY_TOOL_LIB", "KREPLAY_VHSA_DIR"] {
        cmd.env_remove(var);
    }
    cmd
}

/// A script that leaves a file behind when it runs, to prove it was not started.
fn marker_app(dir: &Path) -> String {
    let app = dir.join("app.sh");
    std::fs::write(
        &app,
        format!("#!/bin/sh\ntouch '{}'\n", dir.join("ran").display()),
    )
    .unwrap();
    std::fs::set_permissions(&app, std::fs::Permissions::from_mode(0o755)).unwrap();
    app.display().to_string()
}

fn expect_error(out: Output, code: i32, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(
        stderr.contains("kreplay: error: ") || code == 64,
        "{stderr}"
    );
    for n in needles {
        assert!(stderr.contains(n), "`{n}` missing from: {stderr}");
    }
}

fn run_in(dir: &Path, options: &[&str]) -> Output {
    run_with_output_dir(dir, &dir.join("out"), options)
}

fn run_with_output_dir(dir: &Path, output_dir: &Path, options: &[&str]) -> Output {
    let app = marker_app(dir);
    let out = kreplay()
        .args(["run", "--runtime", "virtual", "-d"])
        .arg(output_dir)
        .args(options)
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    assert!(
        !dir.join("ran").exists(),
        "the application must not start on an error"
    );
    out
}

#[test]
fn bad_regex() {
    let dir = test_support::scratch_dir("cli-err-regex");
    expect_error(
        run_in(&dir, &["--kernel-include-regex", "gemm("]),
        65,
        &["--kernel-include-regex", "`gemm(`", "regular expression"],
    );
    expect_error(
        run_in(&dir, &["--kernel-exclude-regex", "[z-a]"]),
        65,
        &["--kernel-exclude-regex", "`[z-a]`"],
    );
}

#[test]
fn unknown_format() {
    let dir = test_support::scratch_dir("cli-err-format");
    expect_error(
        run_in(&dir, &["-f", "csv", "otf2"]),
        66,
        &["unknown output format `otf2`", "csv, json, pftrace"],
    );
}

#[test]
fn passes_zero_is_refused() {
    let dir = test_support::scratch_dir("cli-err-passes");
    expect_error(
        run_in(&dir, &["--passes", "0"]),
        67,
        &["--passes 0", "unbounded", "1 <= N <= 10000"],
    );
    expect_error(run_in(&dir, &["--passes", "lots"]), 67, &["`lots`"]);
    // The largest u32 used to be accepted, and the application then never finished.
    for big in ["4294967295", "10001"] {
        expect_error(
            run_in(&dir, &["--passes", big]),
            67,
            &[
                &format!("--passes {big} is above the limit of 10000"),
                "1 <= N <= 10000",
            ],
        );
    }
}

#[test]
fn bad_iteration_range() {
    let dir = test_support::scratch_dir("cli-err-range");
    expect_error(
        run_in(&dir, &["--kernel-iteration-range", "[5-2]"]),
        68,
        &["--kernel-iteration-range `[5-2]`", "5 is after 2", "[a-b]"],
    );
}

#[test]
fn application_not_found_or_not_executable() {
    let dir = test_support::scratch_dir("cli-err-app");
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "--",
            "no-such-application-kreplay",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    expect_error(
        out,
        69,
        &[
            "application `no-such-application-kreplay` not found",
            "PATH",
        ],
    );
    let plain = dir.join("data.txt");
    std::fs::write(&plain, "x").unwrap();
    let out = kreplay()
        .args(["run", "--runtime", "virtual", "--"])
        .arg(&plain)
        .current_dir(&dir)
        .output()
        .unwrap();
    expect_error(out, 70, &["data.txt", "not executable", "chmod +x"]);
    assert!(
        !dir.join("kreplay-output").exists(),
        "no output directory on an error"
    );
}

#[test]
fn output_directory_not_writable() {
    let dir = test_support::scratch_dir("cli-err-outdir");
    let app = marker_app(&dir);
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, "x").unwrap();
    let out = kreplay()
        .args(["run", "--runtime", "virtual", "-d"])
        .arg(blocker.join("%pid%"))
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    expect_error(
        out,
        71,
        &[
            "output directory",
            "a-file",
            "not writable",
            "-d/--output-directory",
        ],
    );
    assert!(!dir.join("ran").exists());
}

#[test]
fn tool_library_not_found() {
    let dir = test_support::scratch_dir("cli-err-tool");
    let app = marker_app(&dir);
    let missing = dir.join("nowhere/libkreplay.so");
    let out = kreplay()
        .env("KREPLAY_TOOL_LIB", &missing)
        .args(["run", "--runtime", "virtual", "-d"])
        .arg(dir.join("out"))
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    expect_error(
        out,
        72,
        &[
            "tool library not found",
            "nowhere/libkreplay.so",
            "KREPLAY_TOOL_LIB",
        ],
    );
    assert!(!dir.join("ran").exists());
}

#[test]
fn virtual_runtime_not_found() {
    let dir = test_support::scratch_dir("cli-err-vhsa");
    let app = marker_app(&dir);
    let out = kreplay()
        .env("KREPLAY_VHSA_DIR", dir.join("empty"))
        .args(["run", "--runtime", "virtual", "-d"])
        .arg(dir.join("out"))
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    expect_error(out, 73, &["virtual runtime not found", "KREPLAY_VHSA_DIR"]);
}

#[test]
fn system_runtime_not_found() {
    let dir = test_support::scratch_dir("cli-err-system");
    let app = marker_app(&dir);
    let out = kreplay()
        .env("KREPLAY_SYSTEM_RUNTIME", dir.join("missing.so"))
        .args(["run", "--runtime", "system", "--"])
        .arg(&app)
        .output()
        .unwrap();
    expect_error(out, 74, &["--runtime system", "--runtime virtual"]);
}

#[test]
fn usage_errors_and_help() {
    let out = kreplay().args(["run", "--passes", "2"]).output().unwrap();
    expect_error(out, 64, &["Usage"]);
    let out = kreplay()
        .args(["run", "--no-such-option", "--", "true"])
        .output()
        .unwrap();
    expect_error(out, 64, &["--no-such-option"]);
    let help = kreplay().args(["run", "--help"]).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    for needle in [
        "Examples:",
        "kreplay run --passes 5 -- ./my_app",
        "Exit codes:",
        "128+N",
        "72     tool library",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from --help");
    }
}

#[test]
fn output_names_are_checked_before_the_application_starts() {
    let dir = test_support::scratch_dir("cli-err-names");
    let long = "n".repeat(300);
    for (name, needles) in [
        ("../escape", &["`../escape`", "path separator", "-d"][..]),
        ("nosuch/x", &["`nosuch/x`", "path separator"][..]),
        ("..", &["`..`"][..]),
        (long.as_str(), &["NAME_MAX", "255 bytes", "shorten -o"][..]),
    ] {
        expect_error(run_in(&dir, &["-o", name]), 78, needles);
    }
    assert!(!dir.join("escape").exists(), "nothing written outside -d");
    assert!(
        !dir.join("out").exists() || std::fs::read_dir(dir.join("out")).unwrap().next().is_none(),
        "no staging directory left behind"
    );
    // Longer than NAME_MAX once the widest pid of the machine replaces %pid%.
    let near = format!("{}%pid%", "p".repeat(240));
    expect_error(run_in(&dir, &["-o", &near]), 78, &["NAME_MAX"]);
    // A directory path beyond PATH_MAX, and a component beyond NAME_MAX.
    let deep = (0..17)
        .map(|_| "d".repeat(250))
        .collect::<Vec<_>>()
        .join("/");
    expect_error(
        run_with_output_dir(&dir, &dir.join(deep), &[]),
        71,
        &["PATH_MAX"],
    );
    expect_error(
        run_with_output_dir(&dir, &dir.join("c".repeat(256)), &[]),
        71,
        &["NAME_MAX"],
    );
}

#[test]
fn virtual_agents_are_checked_before_the_application_starts() {
    let dir = test_support::scratch_dir("cli-err-agents");
    expect_error(
        run_in(&dir, &["--virtual-agents", "gfx942,gfx7777"]),
        79,
        &[
            "--virtual-agents `gfx942,gfx7777`",
            "does not know `gfx7777`",
            "gfx90a",
        ],
    );
    expect_error(
        run_in(&dir, &["--virtual-agents", "mi300x"]),
        79,
        &["`mi300x` is not a GPU target"],
    );
    expect_error(
        run_in(&dir, &["--virtual-agents", "gfx942,,gfx90a"]),
        79,
        &["entry 2 is empty"],
    );
    let app = marker_app(&dir);
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "system",
            "--virtual-agents",
            "gfx90a",
            "--",
        ])
        .arg(&app)
        .output()
        .unwrap();
    expect_error(out, 79, &["virtual runtime only", "--runtime virtual"]);
    assert!(!dir.join("ran").exists());
}
