//! vkfd beneath the real ROCR against vhsa, side by side in one run: the same C program
//! (`benches/c/measure.c`) and the same empty kernel (emulated on both), once per runtime.
//! Prints each figure for both runtimes and their ratio:
//!
//! - empty-kernel dispatch round-trip latency and throughput (batches of 64);
//! - copy bandwidth of `hsa_memory_copy` (ROCR: its blit kernel on the emulator; vhsa: its copy
//!   engine), host to device and back, 64 MiB;
//! - CPU used by the process over `IDLE_SECONDS` with 4 queues open and no work (the command
//!   processors' polling under ROCR).
//!
//! ```sh
//! cargo build --release -p vhsa -p vkfd && cargo bench -p vkfd --bench side_by_side
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use test_support::Runtime;

const IDLE_SECONDS: &str = "10";

fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/c");
    let exe = dir.join("measure");
    let status = Command::new("cc")
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-D_DEFAULT_SOURCE",
        ])
        .arg(here.join("measure.c"))
        .arg("-o")
        .arg(&exe)
        .args(["-l:libhsa-runtime64.so.1"])
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on measure.c");
    let co = dir.join("empty.co");
    test_support::build_code_object_with(
        &here.join("empty.hip"),
        "gfx90a",
        &co,
        &["-mcode-object-version=4"],
    );
    (exe, co)
}

fn measure(exe: &Path, co: &Path, rt: Runtime) -> BTreeMap<String, f64> {
    let mut c = Command::new(exe);
    rt.apply(&mut c, "gfx90a");
    for v in ["HSA_TOOLS_LIB", "HSA_ENABLE_SDMA", "AMD_LOG_LEVEL"] {
        c.env_remove(v);
    }
    let out = c.arg(co).arg(IDLE_SECONDS).output().expect("run measure");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}: {text}\n{}",
        rt.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.trim().parse().unwrap()))
        .collect()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let dir = test_support::scratch_dir("vkfd-bench");
    let (exe, co) = build(&dir);
    let vkfd = measure(&exe, &co, Runtime::RocrOnVkfd);
    let vhsa = measure(&exe, &co, Runtime::Vhsa);
    println!(
        "{:<18} {:>14} {:>14} {:>10}",
        "figure", "ROCR on vkfd", "vhsa", "vkfd/vhsa"
    );
    for (k, v) in &vkfd {
        let o = vhsa[k];
        println!("{k:<18} {v:>14.2} {o:>14.2} {:>10.2}", v / o);
    }
}
