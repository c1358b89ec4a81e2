//! The replay window's cost with host-memory capture, on vhsa: per dispatch (2 passes), the
//! kernel's buffer in device memory (captured by the device snapshot) against the same size of
//! fine-grained host memory (captured by the host-memory snapshot: copied, its first pass kept,
//! compared after the second pass and restored between them), and the host buffer with
//! `KREPLAY_HOST_MEMORY=ignore` (reached, hashed before and after the first pass, not captured)
//! and with `decline` (one execution, no window). Side by side in one run; each configuration is
//! one process running `benches/apps/host_memory_window.c`, which prints the fastest and the
//! median wall time of its dispatches. A documented harness (not criterion).
//!
//! Command: `cargo build --release -p vhsa -p kreplay && cargo bench -p kreplay --bench host_memory`

use std::path::{Path, PathBuf};
use std::process::Command;

fn compile_app() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = test_support::scratch_dir("host-memory-bench").join("host_memory_window");
    let flags = [
        "-O2".to_owned(),
        "-D_DEFAULT_SOURCE".to_owned(),
        format!("-I{}", root.join("tests/apps").display()),
        format!("-I{}", root.join("crates/vhsa/include").display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    test_support::compile_c(
        &root.join("benches/apps/host_memory_window.c"),
        &out,
        &flags,
    );
    out
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
    let app = compile_app();
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
}
