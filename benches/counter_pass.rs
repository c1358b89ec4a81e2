//! What a counter pass adds to a plain pass, side by side in one run, on vhsa: the counters
//! application (`tests/apps/counters.c`, kernel `scale` of `tests/apps/counters.hip` run by the
//! emulator) replays one dispatch for P passes with the built-in client, once without counters
//! and once collecting a group of SQ counters each pass (`KREPLAY_PMC_GROUPS`, one group, so every
//! pass attaches `start`, `read`, `stop` and reads the results at PASS EXIT). The two
//! configurations alternate, R processes each. Figures per configuration, medians over the
//! processes (each from the records of its one dispatch):
//! - the pass period: from one pass's kernel start to the next's (the kernel, the AFTER packets
//!   and the wait, PASS EXIT, the restore, PASS ENTER and the BEFORE packets), median over the
//!   passes after the first, so the one-time setup (loading aqlprofile, building the packets) is
//!   left out;
//! - the window's time per pass (window end - window start over P), setup included;
//! - the kernel's device time per pass.
//!
//! A documented harness (not criterion). Prints one markdown table.
//!
//! Command: `cargo build --release -p vhsa -p kreplay -p aqlprofile-so && cargo bench -p kreplay --bench counter_pass`

use std::path::{Path, PathBuf};
use std::process::Command;

const PASSES: u32 = 16;
const PROCESSES: usize = 5;
const GROUP: &str = "pmc: SQ_WAVES SQ_INSTS SQ_INSTS_VALU SQ_INSTS_SALU SQ_INSTS_SMEM SQ_INSTS_VMEM_RD SQ_INSTS_VMEM_WR SQ_INSTS_BRANCH\n";

fn build() -> (PathBuf, PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = test_support::scratch_dir("counter-pass-bench");
    let app = dir.join("counters");
    let flags = [
        "-O2".to_owned(),
        "-D_DEFAULT_SOURCE".to_owned(),
        format!("-I{}", root.join("tests/apps").display()),
        format!("-I{}", root.join("crates/vhsa/include").display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    test_support::compile_c(&root.join("tests/apps/counters.c"), &app, &flags);
    let co = dir.join("counters.co");
    test_support::build_code_object(&root.join("tests/apps/counters.hip"), "gfx942", &co);
    (app, co)
}

/// One process: (pass period ns, window ns per pass, kernel ns per pass) of the `scale`
/// dispatch.
fn run(app: &Path, co: &Path, n: u32, counters: bool) -> (f64, f64, f64) {
    let out_dir = test_support::scratch_dir("counter-pass-bench-records");
    let mut c = Command::new(app);
    c.args(["scale", co.to_str().unwrap(), &n.to_string(), "64"])
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env("HSA_TOOLS_LIB", test_support::tool_lib())
        .env("KREPLAY_PASSES", PASSES.to_string())
        .env("KREPLAY_KERNEL_INCLUDE", "^scale")
        .env("KREPLAY_OUTPUT_DIR", &out_dir)
        .env_remove("KREPLAY_PMC_GROUPS");
    if counters {
        c.env("KREPLAY_PMC_GROUPS", GROUP);
    }
    let o = c.output().expect("run the counters application");
    assert!(
        o.status.success(),
        "counters={counters} n={n} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let texts: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let collected = kreplay_records::parse(texts.iter().map(String::as_str));
    let d = collected
        .dispatches
        .iter()
        .find(|d| d.kernel.as_deref() == Some("scale"))
        .expect("the scale dispatch");
    assert_eq!(d.passes.len(), PASSES as usize);
    if counters {
        assert!(d.passes.iter().all(|p| !p.counters.is_empty()), "{d:?}");
    }
    let per_pass = (d.window_end_ns - d.window_start_ns) as f64 / f64::from(PASSES);
    let kernel = d
        .passes
        .iter()
        .map(|p| (p.end_ns - p.start_ns) as f64)
        .sum::<f64>()
        / f64::from(PASSES);
    let period = median(
        d.passes
            .windows(2)
            .skip(1)
            .map(|w| (w[1].start_ns - w[0].start_ns) as f64)
            .collect(),
    );
    (period, per_pass, kernel)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (app, co) = build();
    println!(
        "| work-items | pass period, plain (µs) | pass period, counters (µs) | added per pass (µs) | ratio | window per pass, plain / counters (µs) | kernel, plain / counters (µs) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in [4096u32, 262_144] {
        let mut plain: [Vec<f64>; 3] = Default::default();
        let mut counted: [Vec<f64>; 3] = Default::default();
        for _ in 0..PROCESSES {
            for (config, out) in [(false, &mut plain), (true, &mut counted)] {
                let (p, w, k) = run(&app, &co, n, config);
                out[0].push(p);
                out[1].push(w);
                out[2].push(k);
            }
        }
        let [pp, pw, pk] = plain.map(median);
        let [cp, cw, ck] = counted.map(median);
        println!(
            "| {n} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} / {:.1} | {:.1} / {:.1} |",
            pp / 1e3,
            cp / 1e3,
            (cp - pp) / 1e3,
            cp / pp,
            pw / 1e3,
            cw / 1e3,
            pk / 1e3,
            ck / 1e3
        );
    }
}
