//! Builds and runs the C test programs of `tests/c/` against the built runtime.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory holding the C sources.
pub fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("c")
}

fn include_args() -> Vec<String> {
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    vec![
        format!("-I{}", include.display()),
        format!("-I{}", c_dir().display()),
    ]
}

/// Compiles `tests/c/<name>.c` into an executable in `dir`, linked with the runtime.
pub fn program(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let args = include_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    test_support::compile_c(&c_dir().join(format!("{name}.c")), &out, &args);
    out
}

/// Compiles `tests/c/<name>.c` into a shared library (a tool) in `dir`.
pub fn library(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("lib{name}.so"));
    let mut args = include_args();
    args.extend(["-shared".to_owned(), "-fPIC".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    test_support::compile_c(&c_dir().join(format!("{name}.c")), &out, &args);
    out
}

/// A command for a program, with a clean runtime environment.
pub fn command(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    for v in [
        "HSA_TOOLS_LIB",
        "HSA_TOOLS_REPORT_LOAD_FAILURE",
        "VHSA_AGENTS",
        "VHSA_FAULTS",
        "VHSA_LINK_GBPS",
        "LD_PRELOAD",
    ] {
        c.env_remove(v);
    }
    c
}

/// Runs a command and asserts that it exits 0; returns its output.
pub fn run_ok(mut cmd: Command) -> Output {
    let out = cmd.output().expect("start the test program");
    assert!(
        out.status.success(),
        "{:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        cmd,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `exe` under valgrind's memcheck and asserts that it printed "PASS" and memcheck found
/// no error (a read or write of freed or unallocated memory, a use of undefined values).
pub fn passes_under_memcheck(exe: &Path) {
    let mut cmd = command(Path::new("valgrind"));
    cmd.args(["-q", "--error-exitcode=9"]).arg(exe);
    let out = cmd
        .output()
        .expect("run valgrind (scripts/install-deps.sh installs it)");
    assert!(
        out.status.success() && stdout(&out).contains("PASS"),
        "memcheck found errors in {} (exit {:?}):\n{}",
        exe.display(),
        out.status.code(),
        stderr(&out)
    );
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
