//! Helpers shared by the `sqtt_*` integration tests: building code objects with a
//! `.sqtt_funcmap` section, bundling them, and running `kreplay sqtt`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// LLVM tool `name` (`llvm-objcopy`, `clang-offload-bundler`, ...), version 22 unless
/// `KREPLAY_LLVM_BIN` names a directory holding unversioned tools.
pub fn llvm_tool(name: &str) -> PathBuf {
    match std::env::var_os("KREPLAY_LLVM_BIN") {
        Some(dir) => Path::new(&dir).join(name),
        None => PathBuf::from(format!("{name}-22")),
    }
}

/// Runs a tool and panics with its stderr when it fails.
pub fn run_tool(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (install the LLVM 22 tools)"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The device source used by the funcmap tests.
pub fn kernels_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sqtt/kernels.hip")
}

/// Builds `tests/sqtt/kernels.hip` for `arch` into `dir`.
pub fn build_kernels(dir: &Path, arch: &str) -> PathBuf {
    let out = dir.join(format!("kernels-{arch}.co"));
    test_support::build_code_object(&kernels_source(), arch, &out);
    out
}

/// Copies `object` to `out` with a `.sqtt_funcmap` section holding `section` bytes.
pub fn with_funcmap(object: &Path, section: &[u8], out: &Path) {
    let data = out.with_extension("funcmap.bin");
    std::fs::write(&data, section).expect("write section data");
    run_tool(
        Command::new(llvm_tool("llvm-objcopy"))
            .arg(format!("--add-section=.sqtt_funcmap={}", data.display()))
            .arg(object)
            .arg(out),
    );
}

/// Function symbols of a code object as `llvm-nm` reports them (name -> value).
pub fn nm_functions(object: &Path) -> HashMap<String, u64> {
    let out = run_tool(
        Command::new(llvm_tool("llvm-nm"))
            .arg("--defined-only")
            .arg(object),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (value, kind, name) = (f.next()?, f.next()?, f.next()?);
            if !matches!(kind, "T" | "t") {
                return None;
            }
            Some((name.to_string(), u64::from_str_radix(value, 16).ok()?))
        })
        .collect()
}

/// Bundles code objects (`(target id, path)`) with a host entry, optionally compressed.
pub fn bundle(entries: &[(&str, &Path)], out: &Path, compress: bool) {
    let mut targets = vec!["host-x86_64-unknown-linux-gnu-".to_string()];
    let host = out.with_extension("host-entry");
    std::fs::write(&host, b"").expect("write empty host entry");
    let mut cmd = Command::new(llvm_tool("clang-offload-bundler"));
    cmd.arg("--type=o")
        .arg(format!("--input={}", host.display()));
    for (target, path) in entries {
        targets.push((*target).to_string());
        cmd.arg(format!("--input={}", path.display()));
    }
    cmd.arg(format!("--targets={}", targets.join(",")))
        .arg(format!("--output={}", out.display()));
    if compress {
        cmd.arg("--compress");
    }
    run_tool(&mut cmd);
}

/// A host ELF (compiled C) carrying `bundle` as its `.hip_fatbin` section, like a HIP
/// executable.
pub fn host_with_fatbin(dir: &Path, bundle: &Path, out: &Path) {
    let src = dir.join("host.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").expect("write host.c");
    let plain = dir.join("host-plain");
    run_tool(Command::new("cc").arg(&src).arg("-o").arg(&plain));
    run_tool(
        Command::new(llvm_tool("llvm-objcopy"))
            .arg(format!("--add-section=.hip_fatbin={}", bundle.display()))
            .arg(&plain)
            .arg(out),
    );
}

/// Runs `kreplay sqtt <args>`.
pub fn kreplay_sqtt(args: &[&str]) -> Output {
    Command::new(test_support::kreplay_bin())
        .arg("sqtt")
        .args(args)
        .output()
        .expect("run kreplay")
}

/// Runs `kreplay sqtt <args>`, expects success, returns stdout.
pub fn kreplay_sqtt_ok(args: &[&str]) -> String {
    let out = kreplay_sqtt(args);
    assert!(
        out.status.success(),
        "kreplay sqtt {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs `kreplay sqtt <args>`, expects a clean failure (exit code 1, no panic), returns stderr.
pub fn kreplay_sqtt_err(args: &[&str]) -> String {
    let out = kreplay_sqtt(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "kreplay sqtt {args:?}: expected exit code 1, stderr:\n{stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "kreplay sqtt {args:?} panicked:\n{stderr}"
    );
    assert!(
        stderr.starts_with("kreplay sqtt: error: "),
        "unexpected stderr:\n{stderr}"
    );
    stderr
}

/// Path as `&str` for argument lists.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
