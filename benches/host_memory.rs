//! The replay window's cost with host-memory capture, on vhsa: per dispatch (2 passes), the
//! kernel's buffer in device memory (captured by the device snapshot) against the same size of
//! fine-grained host memory (captured by the host-memory snapshot: copied, its first pass kept,
//! compared after the second pass and restored between them), and the host buffer with
//! `KREPLAY_HOST_MEMORY=ignore` (reached, hashed before and after the first pass, not captured)
//! and with `decline` (one execution, no window). Side by side in one run; each configuration is
//! one process running `benches/apps/host_memory_window.c`, which prints the fastest and the
//! median wall time of its dispatches. A documented harness (not criterion).
//!
//! A second table times `tests/apps/cross_queue.c` in each of its modes (a sibling queue's
//! barrier-AND or barrier-OR waiting on the replayed dispatch, as `hipStreamWaitEvent` submits
//! it, or on a marker behind it; the dispatch rung behind a host-opened gate): milliseconds per
//! round without the tool and with the dispatch replayed 3 times.
//!
//! Command: `cargo build --release -p vhsa -p kreplay && cargo bench -p kreplay --bench host_memory`

use std::path::{Path, PathBuf};
use std::process::Command;

fn compile_app(dir: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = test_support::scratch_dir(&format!("host-memory-bench-{name}")).join(name);
    let flags = [
        "-O2".to_owned(),
        "-D_DEFAULT_SOURCE".to_owned(),
        format!("-I{}", root.join("tests/apps").display()),
        format!("-I{}", root.join("crates/vhsa/include").display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    test_support::compile_c(&root.join(dir).join(format!("{name}.c")), &out, &flags);
    out
}

/// Milliseconds per round of `cross_queue` in `mode`, with the tool replaying `produce` 3 times
/// or without the tool.
fn cross_queue(app: &Path, mode: &str, tool: bool) -> f64 {
    let mut c = Command::new(app);
    c.args(["20", mode])
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("KREPLAY_HOST_MEMORY");
    if tool {
        c.env("HSA_TOOLS_LIB", test_support::tool_lib())
            .env("KREPLAY_PASSES", "3")
            .env("KREPLAY_KERNEL_INCLUDE", "^produce$");
    } else {
        c.env_remove("KREPLAY_PASSES");
    }
    let out = c.output().expect("run cross_queue");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("ms_per_round="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no ms_per_round in {text}"))
}

/// (fastest, median) ns per dispatch of one configuration.
fn run(app: &Path, memory: &str, kib: u64, policy: &str) -> (f64, f64) {
    let out = Command::new(app)
        .args([memory, &kib.to_string(), "15"])
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env("HSA_TOOLS_LIB", test_support::tool_lib())
        .env("KREPLAY_PASSES", "2")
        .env("KREPLAY_HOST_MEMORY", policy)
        .env_remove("KREPLAY_SNAPSHOT")
        .env_remove("KREPLAY_VERIFY")
        .output()
        .expect("run the benchmark application");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |name: &str| -> f64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    (field("ns="), field("median_ns="))
}

fn us((fastest, median): (f64, f64)) -> String {
    format!("{:.1} / {:.1}", fastest / 1e3, median / 1e3)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let app = compile_app("benches/apps", "host_memory_window");
    println!(
        "| buffer | device memory, replayed (µs, fastest / median) | host memory, snapshot | host memory, ignore | host memory, decline (one execution) | snapshot / device (fastest) | snapshot / ignore (fastest) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for kib in [4u64, 1024, 65536] {
        let device = run(&app, "device", kib, "snapshot");
        let snapshot = run(&app, "host", kib, "snapshot");
        let ignore = run(&app, "host", kib, "ignore");
        let decline = run(&app, "host", kib, "decline");
        println!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} |",
            if kib >= 1024 {
                format!("{} MiB", kib / 1024)
            } else {
                format!("{kib} KiB")
            },
            us(device),
            us(snapshot),
            us(ignore),
            us(decline),
            snapshot.0 / device.0,
            snapshot.0 / ignore.0
        );
    }
    let cq = compile_app("tests/apps", "cross_queue");
    println!();
    println!(
        "| cross_queue mode (20 rounds) | no tool (ms) | produce replayed 3 times (ms) | ratio |"
    );
    println!("|---|---|---|---|");
    for mode in ["", "marker", "or", "gate", "value"] {
        let (without, with) = (cross_queue(&cq, mode, false), cross_queue(&cq, mode, true));
        println!(
            "| {} | {without:.3} | {with:.3} | {:.2} |",
            if mode.is_empty() {
                "sibling barrier-AND"
            } else {
                mode
            },
            with / without
        );
    }
}
