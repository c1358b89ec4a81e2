//! Compile-time overhead of the plugin on a large generated kernel file.
//!
//! Run with `cargo bench -p sqtt-pass --bench compile_overhead` (after the package is built in
//! the bench profile, which `cargo bench` does). Compiles the same file with clang-22 for
//! gfx942 without the plugin, with the plugin but instrumentation off, and with everything on,
//! interleaving the configurations, and prints the median wall time and the median CPU time
//! (user + system of clang and its children, which the load of a shared machine disturbs far
//! less) of each, with ratios to the plain compile. `SQTT_BENCH_REPS` sets the repetitions (default 5), `SQTT_BENCH_FUNCS` the
//! number of generated device functions (default 96).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/common/mod.rs"]
mod common;
use common::OPTION_VARS;

/// A kernel file with `funcs` device functions (loops, global and LDS traffic, barriers,
/// named markers) and one kernel per eight functions.
fn generate(funcs: usize) -> String {
    let mut s = String::new();
    s.push_str("#include \"device.h\"\n#include \"sqtt/markers.hpp\"\n\n");
    for f in 0..funcs {
        let _ = write!(
            s,
            r#"__device__ __attribute__((noinline)) float work_{f}(const float *in, float *out, float *lds, int n) {{
    unsigned t = thread_x();
    float acc = in[t] * {f}.5f;
    sqtt_marker_enter("work_{f}_loop");
    for (int i = 0; i < n; ++i) {{
        float a = in[t + i * 64];
        float b = in[t + i * 64 + 32];
        acc = acc * a + b / (acc + 1.0f);
        lds[(t + i) & 63] = acc;
        sync_threads();
        acc += lds[(t * 7 + i) & 63];
        out[t + i * 64] = acc;
    }}
    sqtt_marker_exit("work_{f}_loop");
    sqtt_marker_point("work_{f}_done");
    return acc;
}}

"#
        );
    }
    for k in 0..funcs.div_ceil(8) {
        let _ = writeln!(
            s,
            "__global__ void kernel_{k}(const float *in, float *out, int n) {{"
        );
        s.push_str("    __shared__ float lds[64];\n    float v = 0.0f;\n");
        for f in (k * 8)..((k + 1) * 8).min(funcs) {
            let _ = writeln!(s, "    v += work_{f}(in, out, lds, n);");
        }
        s.push_str("    out[thread_x()] = v;\n}\n\n");
    }
    s
}

struct Config {
    name: &'static str,
    plugin: bool,
    enabled: bool,
    env: &'static [(&'static str, &'static str)],
}

/// User + system time of all waited-for children so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_CHILDREN is valid.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Compiles once; returns (wall, cpu).
fn compile(src: &Path, out: &Path, c: &Config) -> (Duration, Duration) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(test_support::device_clang());
    cmd.args([
        "-x",
        "hip",
        "--offload-arch=gfx942",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
        "-nogpulib",
        "-nogpuinc",
        "-O2",
    ])
    .arg("-I")
    .arg(manifest.join("include"))
    .arg("-I")
    .arg(manifest.join("tests/kernels"))
    .arg(src)
    .arg("-o")
    .arg(out);
    if c.plugin {
        cmd.arg(format!(
            "-fpass-plugin={}",
            test_support::sqtt_pass_plugin().display()
        ));
    }
    if c.enabled {
        cmd.arg("-DSQTT_ENABLED=1");
    }
    for v in OPTION_VARS {
        cmd.env_remove(v);
    }
    for (k, v) in c.env {
        cmd.env(k, v);
    }
    let cpu_before = children_cpu();
    let start = Instant::now();
    let o = cmd.output().expect("run clang");
    let took = (start.elapsed(), children_cpu() - cpu_before);
    assert!(
        o.status.success(),
        "{} failed:\n{}",
        c.name,
        String::from_utf8_lossy(&o.stderr)
    );
    took
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a plain `cargo test --benches` run passes nothing and
    // should stay quick, so it does one repetition of a small file.
    let benching = std::env::args().any(|a| a == "--bench");
    let reps: usize = std::env::var("SQTT_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 5 } else { 1 });
    let funcs: usize = std::env::var("SQTT_BENCH_FUNCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if benching { 96 } else { 8 });

    let dir = test_support::scratch_dir("sqtt-bench");
    let src = dir.join("large.hip");
    std::fs::write(&src, generate(funcs)).expect("write generated kernel file");

    let configs = [
        Config {
            name: "no plugin",
            plugin: false,
            enabled: false,
            env: &[],
        },
        Config {
            name: "plugin, instrumentation off",
            plugin: true,
            enabled: false,
            env: &[],
        },
        Config {
            name: "plugin, everything on (markers, functions, barriers, memory 2:5)",
            plugin: true,
            enabled: true,
            env: &[
                ("SQTT_INSTRUMENT_FUNCTIONS", "cost:20"),
                ("SQTT_INSTRUMENT_BARRIERS", "1"),
                ("SQTT_INSTRUMENT_MEMORY", "2:5"),
            ],
        },
        Config {
            name: "plugin, markers + address tracing (memory,lds)",
            plugin: true,
            enabled: true,
            env: &[("SQTT_TRACE_ADDRESSES", "memory,lds")],
        },
    ];
    let mut wall: Vec<Vec<Duration>> = vec![Vec::new(); configs.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); configs.len()];
    // One warm-up round, then interleaved repetitions so machine load affects all alike.
    for (k, c) in configs.iter().enumerate() {
        compile(&src, &dir.join(format!("warm{k}.co")), c);
    }
    for _ in 0..reps {
        for (k, c) in configs.iter().enumerate() {
            let (w, u) = compile(&src, &dir.join(format!("out{k}.co")), c);
            wall[k].push(w);
            cpu[k].push(u);
        }
    }
    let base_wall = median(&mut wall[0].clone()).as_secs_f64();
    let base_cpu = median(&mut cpu[0].clone()).as_secs_f64();
    println!("compile_overhead: {funcs} device functions, gfx942, -O2, median of {reps}");
    println!("| configuration | wall (s) | wall ratio | CPU (s) | CPU ratio |");
    println!("|---|---|---|---|---|");
    for (k, c) in configs.iter().enumerate() {
        let w = median(&mut wall[k]).as_secs_f64();
        let u = median(&mut cpu[k]).as_secs_f64();
        println!(
            "| {} | {:.3} | {:.2} | {:.3} | {:.2} |",
            c.name,
            w,
            w / base_wall,
            u,
            u / base_cpu
        );
    }
}
