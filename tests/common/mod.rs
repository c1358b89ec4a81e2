//! Building and running the C test applications of `tests/apps/` with the tool loaded.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// Compiling and the first `test_support::vhsa_lib_dir` call are serialized between the test
/// threads of one binary, so each application is built once.
static SETUP: Mutex<()> = Mutex::new(());

fn vhsa_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
        test_support::vhsa_lib_dir()
    })
}

fn compile(src: &Path, out: &Path, flags: &[&str]) {
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        test_support::compile_c(src, out, flags);
    }
}

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn apps_dir() -> PathBuf {
    root().join("tests/apps")
}

fn include_flags() -> Vec<String> {
    vec![
        "-D_DEFAULT_SOURCE".into(),
        format!("-I{}", apps_dir().display()),
        format!("-I{}", root().join("crates/vhsa/include").display()),
        format!("-I{}", root().join("include").display()),
    ]
}

/// Where this test binary keeps its compiled applications.
fn build_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| test_support::scratch_dir("kreplay-apps"))
}

/// Compiles `tests/apps/<name>.c` into an executable (once per test binary).
pub fn app(name: &str, extra: &[&str]) -> PathBuf {
    let out = build_dir().join(format!(
        "{name}{}",
        extra.join("").replace(['-', '=', '/'], "_")
    ));
    if !out.exists() {
        let mut flags = include_flags();
        flags.extend(extra.iter().map(|s| s.to_string()));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        compile(&apps_dir().join(format!("{name}.c")), &out, &flags);
    }
    out
}

/// Compiles `tests/apps/<name>.c` into an executable linked against vhsa's exports without a
/// run path, so `LD_LIBRARY_PATH` chooses the runtime (vhsa, or the system's ROCR over vkfd
/// with [`test_support::Runtime::apply`]); once per test binary.
pub fn app_for_any_runtime(name: &str) -> PathBuf {
    let out = build_dir().join(format!("{name}_any_runtime"));
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let vhsa = test_support::vhsa_lib_dir();
        let status = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
            .args(include_flags())
            .arg(format!("-I{}", test_support::host_include_dir().display()))
            .arg(apps_dir().join(format!("{name}.c")))
            .arg("-o")
            .arg(&out)
            .arg(format!("-L{}", vhsa.display()))
            .args(["-l:libhsa-runtime64.so.1", "-ldl"])
            .status()
            .expect("run cc");
        assert!(status.success(), "cc failed on {name}.c");
    }
    out
}

/// Compiles `tests/apps/<name>.c` into an executable linked with kreplay, so it can call the C
/// API itself (once per test binary).
pub fn app_linked(name: &str) -> PathBuf {
    app_linked_with(name, &[])
}

/// [`app_linked`] with extra compiler flags (sanitizers, warnings).
pub fn app_linked_with(name: &str, extra: &[&str]) -> PathBuf {
    let lib = test_support::tool_lib();
    let dir = lib.parent().unwrap().display().to_string();
    let out = build_dir().join(format!(
        "{name}_linked{}",
        extra.join("").replace(['-', '=', '/', ','], "_")
    ));
    if !out.exists() {
        let mut flags = include_flags();
        flags.extend(extra.iter().map(|s| s.to_string()));
        flags.extend([
            format!("-L{dir}"),
            "-lkreplay".into(),
            format!("-Wl,-rpath,{dir}"),
        ]);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        compile(&apps_dir().join(format!("{name}.c")), &out, &flags);
    }
    out
}

/// Compiles the C test tool against the generated header (shared library linked with kreplay).
pub fn test_tool(extra: &[&str]) -> PathBuf {
    c_tool("test_tool", extra)
}

/// Compiles the tool library `tests/apps/<name>.c` against the generated header (shared
/// library linked with kreplay), once per test binary.
pub fn c_tool(name: &str, extra: &[&str]) -> PathBuf {
    let out = build_dir().join(format!(
        "lib{name}{}.so",
        extra.join("").replace(['-', '=', '/'], "_")
    ));
    if !out.exists() {
        let lib = test_support::tool_lib();
        let dir = lib.parent().unwrap().display().to_string();
        let mut flags = include_flags();
        flags.extend([
            "-shared".into(),
            "-fPIC".into(),
            "-Wpedantic".into(),
            format!("-L{dir}"),
            "-lkreplay".into(),
            format!("-Wl,-rpath,{dir}"),
        ]);
        flags.extend(extra.iter().map(|s| s.to_string()));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        compile(&apps_dir().join(format!("{name}.c")), &out, &flags);
    }
    out
}

/// A code object for `tests/apps/<name>.hip` built for gfx942.
pub fn code_object(name: &str) -> PathBuf {
    let out = build_dir().join(format!("{name}.co"));
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        test_support::build_code_object(&apps_dir().join(format!("{name}.hip")), "gfx942", &out);
    }
    out
}

/// Builds the HIP program `tests/apps/<name>.hip` for gfx90a with hipcc (once per test binary).
pub fn hip_app(name: &str) -> PathBuf {
    let out = build_dir().join(format!("{name}_hip"));
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !out.exists() {
        let o = test_support::hipcc()
            .arg("--offload-arch=gfx90a")
            .arg(apps_dir().join(format!("{name}.hip")))
            .arg("-o")
            .arg(&out)
            .output()
            .expect("run hipcc (scripts/install-deps.sh installs it)");
        assert!(
            o.status.success(),
            "hipcc failed on {name}.hip:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    out
}

/// A command running `exe` on vhsa with kreplay (and `extra_tools`) loaded through
/// `HSA_TOOLS_LIB`. The replay variables of the caller's environment are cleared.
pub fn command(exe: &Path, extra_tools: &[&Path]) -> Command {
    let mut tools = vec![test_support::tool_lib()];
    tools.extend(extra_tools.iter().map(|p| p.to_path_buf()));
    let tools: Vec<String> = tools.iter().map(|p| p.display().to_string()).collect();
    let mut c = Command::new(exe);
    c.env("LD_LIBRARY_PATH", vhsa_dir())
        .env("HSA_TOOLS_LIB", tools.join(" "))
        .env("HSA_TOOLS_REPORT_LOAD_FAILURE", "1");
    for v in [
        "KREPLAY_PASSES",
        "KREPLAY_KERNEL_INCLUDE",
        "KREPLAY_KERNEL_EXCLUDE",
        "KREPLAY_KERNEL_ITERATION_RANGE",
        "KREPLAY_OUTPUT_DIR",
        "KREPLAY_LOG",
        "KREPLAY_DRAIN_TIMEOUT_MS",
        "KREPLAY_SNAPSHOT",
        "KREPLAY_DEVICE_RESERVE_MB",
        "KREPLAY_CHUNK_KB",
        "KREPLAY_VERIFY",
        "KREPLAY_HOST_MEMORY",
        "KREPLAY_DRAIN_DECLINE_MS",
        "KREPLAY_TEST_RLIMIT_AS",
        "KREPLAY_PMC_GROUPS",
        "KREPLAY_PMC_CROSS_PASS",
        "VHSA_PMC_LIMITS",
        "VHSA_AGENTS",
        "VHSA_FAULTS",
        "VHSA_DEVICE_MEMORY_MB",
        "VHSA_LINK_GBPS",
    ] {
        c.env_remove(v);
    }
    c
}

/// Runs and returns the output; panics with both streams when the exit status is not success.
pub fn run_ok(mut c: Command) -> Output {
    let out = c.output().expect("run test application");
    assert!(
        out.status.success(),
        "application failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("APP OK"));
    out
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON-lines records written in `dir`.
pub fn records(dir: &Path) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("output directory") {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        out.extend(
            text.lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")),
        );
    }
    out
}

/// `kreplay run --runtime virtual --passes 3 -f json -d <out_dir> -- <exe> <args>` on a gfx90a
/// agent, the tool's variables of the test's own environment removed. Returns the output and its
/// stdout and stderr as one text.
pub fn kreplay_run_virtual(exe: &Path, args: &[&str], out_dir: &Path) -> (Output, String) {
    let mut c = Command::new(test_support::kreplay_bin());
    for v in [
        "HSA_TOOLS_LIB",
        "KREPLAY_PASSES",
        "KREPLAY_HOST_MEMORY",
        "KREPLAY_VERIFY",
    ] {
        c.env_remove(v);
    }
    let out = c
        .env("VHSA_AGENTS", "gfx90a")
        .args([
            "run",
            "--runtime",
            "virtual",
            "--passes",
            "3",
            "-f",
            "json",
            "-d",
        ])
        .arg(out_dir)
        .arg("--")
        .arg(exe)
        .args(args)
        .output()
        .expect("run kreplay");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}
