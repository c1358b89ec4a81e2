//! What the vkfd tests share: commands with a clean runtime environment, running them, and the
//! shims `rocminfo` needs.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
pub use test_support::Runtime;

/// A command for `exe` on `runtime` with the GPU agents `gpus`, without inherited runtime,
/// tool or logging variables.
pub fn command(exe: &Path, runtime: Runtime, gpus: &str) -> Command {
    let mut c = Command::new(exe);
    for v in [
        "HSA_TOOLS_LIB",
        "HSA_TOOLS_REPORT_LOAD_FAILURE",
        "HSA_ENABLE_SDMA",
        "HSA_ENABLE_INTERRUPT",
        "VKFD_VM_FAULT",
        "VHSA_FAULTS",
        "AMD_LOG_LEVEL",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "LD_PRELOAD",
    ] {
        c.env_remove(v);
    }
    runtime.apply(&mut c, gpus);
    c
}

/// Runs a command; asserts it exits 0 and returns its output.
pub fn run_ok(mut cmd: Command) -> Output {
    let out = cmd.output().expect("start the test program");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    out
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The C sources of these tests.
pub fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("c")
}

/// Debian's `rocminfo` (or `ROCMINFO`).
pub fn rocminfo() -> PathBuf {
    let path = std::env::var_os("ROCMINFO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/rocminfo"));
    assert!(
        path.exists(),
        "{} is missing: install Debian's rocminfo (scripts/install-deps.sh) or set ROCMINFO",
        path.display()
    );
    path
}

/// Runs `rocminfo` on `runtime` with `gpus`. rocminfo checks for the kernel driver before it
/// calls `hsa_init` (`lsmod | grep amdgpu`, opening `/dev/kfd`): a `lsmod` that reports the
/// module and vhsa's `LD_PRELOAD` shim that opens `/dev/null` for `/dev/kfd` satisfy it; the
/// runtime itself never opens the device.
pub fn run_rocminfo(dir: &Path, runtime: Runtime, gpus: &str) -> String {
    run_rocminfo_with(dir, runtime, gpus, &[])
}

/// [`run_rocminfo`] with extra environment variables.
pub fn run_rocminfo_with(dir: &Path, runtime: Runtime, gpus: &str, env: &[(&str, &str)]) -> String {
    let shim = dir.join("libkfd_present.so");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vhsa/tests/c/kfd_present.c");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&shim)
        .arg(src)
        .arg("-ldl")
        .status()
        .expect("run cc");
    assert!(status.success(), "cannot build the /dev/kfd shim");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lsmod = bin.join("lsmod");
    std::fs::write(&lsmod, "#!/bin/sh\necho 'amdgpu 1 0'\n").unwrap();
    std::fs::set_permissions(&lsmod, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = command(&rocminfo(), runtime, gpus);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("LD_PRELOAD", &shim)
        .envs(env.iter().copied());
    stdout(&run_ok(cmd))
}

/// Builds a HIP program of vhsa's `tests/hip` for gfx90a into `dir`.
pub fn hip_program(dir: &Path, name: &str) -> PathBuf {
    let exe = dir.join(name);
    test_support::build_hip_program(name, "gfx90a", &exe);
    exe
}

/// Compiles `tests/c/<name>.c` against the installed HSA headers, linked with the system's HSA
/// runtime (found through `LD_LIBRARY_PATH` at run time, so [`command`] chooses it).
pub fn c_program(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
        .arg(c_dir().join(format!("{name}.c")))
        .arg("-o")
        .arg(&out)
        .args(["-l:libhsa-runtime64.so.1", "-ldl"])
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on {name}.c");
    out
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/apps/emulated.c` of the tool crate, linked with the HSA runtime found at run time.
pub fn emulated_app(dir: &Path) -> PathBuf {
    // Only the `sqtt` mode calls a vhsa extension.
    hsa_test_app(
        &workspace_root().join("tests/apps/emulated.c"),
        &dir.join("emulated"),
        &[],
    )
}

/// `tests/c/client.c`: a client of kreplay's C API, linked with the tool library that
/// `HSA_TOOLS_LIB` loads (`test_support::tool_lib()`).
pub fn client_app(dir: &Path) -> PathBuf {
    let tool_dir = test_support::tool_lib()
        .parent()
        .expect("the tool library's directory")
        .display()
        .to_string();
    hsa_test_app(
        &c_dir().join("client.c"),
        &dir.join("client"),
        &[
            format!("-L{tool_dir}"),
            "-lkreplay".into(),
            format!("-Wl,-rpath,{tool_dir}"),
        ],
    )
}

/// Compiles a C test program with the tool crate's test helpers (`tests/apps/common.h`) and
/// headers, linked against vhsa's exports (a superset of the runtime's) without a run path:
/// `LD_LIBRARY_PATH` picks the runtime. `link` adds libraries.
fn hsa_test_app(source: &Path, out: &Path, link: &[String]) -> PathBuf {
    let vhsa = test_support::vhsa_lib_dir();
    let status = Command::new("cc")
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-g",
            "-pthread",
            "-D_DEFAULT_SOURCE",
        ])
        .arg(format!(
            "-I{}",
            workspace_root().join("tests/apps").display()
        ))
        .arg(format!("-I{}", test_support::host_include_dir().display()))
        .arg(format!(
            "-I{}",
            workspace_root().join("crates/vhsa/include").display()
        ))
        .arg(format!("-I{}", workspace_root().join("include").display()))
        .arg(source)
        .arg("-o")
        .arg(out)
        .arg(format!("-L{}", vhsa.display()))
        .args(["-l:libhsa-runtime64.so.1", "-ldl"])
        .args(link)
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on {}", source.display());
    out.to_path_buf()
}
