//! Replay time per dispatch: the snapshot engine (`KREPLAY_SNAPSHOT=auto`: device-resident
//! snapshot, changed-chunk restore) against the original full host copy
//! (`KREPLAY_SNAPSHOT=host-full`), side by side in one run, on vhsa with the link model at
//! 4 GB/s. A documented harness (not criterion): each configuration is one process per engine
//! running `benches/apps/replay_engine.c`, which prints medians of a few dispatches.
//!
//! Prints one markdown table: per footprint F, written fraction W (contiguous or 4 KiB pieces
//! scattered) and pass count P, the two times (fastest of a few dispatches after a warm-up) and their ratio, the lower bound (kernel time x P
//! plus the written bytes restored P-1 times at the measured device-copy speed) and the
//! engine's ratio to it, and a model for MI300X-class hardware (host link 50 GB/s, device
//! memory 5 TB/s) computed from the byte counters of the run.
//!
//! `KREPLAY_BENCH_QUICK=1` runs only F = 256 MiB.
//!
//! Command: `cargo build --release -p vhsa -p kreplay && cargo bench -p kreplay --bench replay_engine`

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug, Default)]
struct Row {
    ns: f64,
    kernel_ns: f64,
    snapshot_ns: f64,
    restore_ns: f64,
    written: f64,
    restored: f64,
    h2d: f64,
    d2h: f64,
    d2d: f64,
}

fn compile_app() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = test_support::tool_lib();
    let dir = lib.parent().unwrap().display().to_string();
    let out = test_support::scratch_dir("replay-engine-bench").join("replay_engine");
    let flags = [
        "-O2".to_owned(),
        "-D_DEFAULT_SOURCE".to_owned(),
        format!("-I{}", root.join("tests/apps").display()),
        format!("-I{}", root.join("crates/vhsa/include").display()),
        format!("-I{}", root.join("include").display()),
        format!("-L{dir}"),
        "-lkreplay".to_owned(),
        format!("-Wl,-rpath,{dir}"),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    test_support::compile_c(&root.join("benches/apps/replay_engine.c"), &out, &flags);
    out
}

/// Runs one process; returns the device-copy speed and the rows by configuration.
fn run(
    app: &Path,
    engine: &str,
    mib: u64,
    read: bool,
    reps: u32,
    configs: &[String],
) -> (f64, HashMap<String, Row>) {
    let out = Command::new(app)
        .arg(mib.to_string())
        .arg(if read { "1" } else { "0" })
        .arg(reps.to_string())
        .args(configs)
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env("HSA_TOOLS_LIB", test_support::tool_lib())
        .env("VHSA_LINK_GBPS", "4")
        .env("KREPLAY_SNAPSHOT", engine)
        .env_remove("KREPLAY_PASSES")
        .output()
        .expect("run the benchmark application");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{engine} F={mib} MiB failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut d2d_speed = 0.0;
    let mut rows = HashMap::new();
    for line in text.lines() {
        let fields: HashMap<&str, &str> = line
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .collect();
        let num = |k: &str| {
            fields
                .get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        if line.starts_with("D2D") {
            d2d_speed = num("bytes_per_s");
        } else if line.starts_with("RESULT") {
            let key = format!(
                "{}:{}:{}",
                fields["pct"], fields["pattern"], fields["passes"]
            );
            rows.insert(
                key,
                Row {
                    ns: num("ns"),
                    kernel_ns: num("kernel_ns"),
                    snapshot_ns: num("snapshot_ns"),
                    restore_ns: num("restore_ns"),
                    written: num("written"),
                    restored: num("restored"),
                    h2d: num("h2d"),
                    d2h: num("d2h"),
                    d2d: num("d2d"),
                },
            );
        }
    }
    (d2d_speed, rows)
}

const LINK: f64 = 50e9;
const MEMORY: f64 = 5e12;

/// Modelled seconds on MI300X-class hardware from the byte counters: host transfers over the
/// link, device copies reading and writing device memory, the kernel reading (when it does)
/// and writing its bytes each pass, the engine's hashing reading F twice (capture, pass 1).
fn model(r: &Row, f: f64, passes: f64, read: bool, hashed: bool) -> f64 {
    let kernel = passes * ((if read { f } else { 0.0 }) + 2.0 * r.written) / MEMORY;
    let hashing = if hashed { 2.0 * f / MEMORY } else { 0.0 };
    kernel + (r.h2d + r.d2h) / LINK + 2.0 * r.d2d / MEMORY + hashing
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let app = compile_app();
    let quick = std::env::var_os("KREPLAY_BENCH_QUICK").is_some();
    let footprints: &[u64] = if quick { &[256] } else { &[256, 1024] };
    let mut configs = Vec::new();
    for pct in ["1", "10", "100"] {
        for pattern in if pct == "100" {
            &["c"][..]
        } else {
            &["c", "s"][..]
        } {
            for passes in [2, 5, 10] {
                configs.push(format!("{pct}:{pattern}:{passes}"));
            }
        }
    }
    println!(
        "| F | W | pattern | P | kernel | engine ms | host-full ms | full / engine | bound ms | engine / bound | engine capture ms | engine restores ms | engine restored MiB | model engine ms | model full ms | model full / engine |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let table = |mib: u64, read: bool, configs: &[String]| {
        let reps = if mib >= 1024 { 2 } else { 3 };
        let (speed, new) = run(&app, "auto", mib, read, reps, configs);
        let (_, full) = run(&app, "host-full", mib, read, reps, configs);
        let f = (mib << 20) as f64;
        for c in configs {
            let (n, h) = (&new[c], &full[c]);
            let mut parts = c.split(':');
            let (pct, pattern, passes) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            let p: f64 = passes.parse().unwrap();
            let bound = n.kernel_ns / 1e9 + n.written * (p - 1.0) / speed;
            let (mn, mf) = (model(n, f, p, read, true), model(h, f, p, read, false));
            println!(
                "| {mib} MiB | {pct}% | {} | {passes} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} | {:.1} |",
                if pattern == "c" {
                    "contiguous"
                } else {
                    "scattered 4 KiB"
                },
                if read { "reads F" } else { "writes W only" },
                n.ns / 1e6,
                h.ns / 1e6,
                h.ns / n.ns,
                bound * 1e3,
                n.ns / 1e9 / bound,
                n.snapshot_ns / 1e6,
                n.restore_ns / 1e6,
                n.restored / (1u64 << 20) as f64,
                mn * 1e3,
                mf * 1e3,
                mf / mn,
            );
            eprintln!(
                "{mib} MiB {c} read={read}: engine restored {} B, full restored {} B",
                n.restored, h.restored
            );
        }
    };
    for &mib in footprints {
        table(mib, false, &configs);
    }
    // The goal configuration with a kernel that reads its whole footprint.
    let goal = ["1:c:10".to_owned(), "100:c:10".to_owned()];
    table(*footprints.last().unwrap(), true, &goal);
}
