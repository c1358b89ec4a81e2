//! What the packet-level tests and the counter-pass benchmark share: the C program and the
//! code object it dispatches, counter groups by name, running the program on a runtime.

#![allow(dead_code)]

use amdgpu_counters::{Target, find};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use test_support::Runtime;

/// (group, block, event, sample) -> value.
pub type Values = BTreeMap<(usize, u32, u32, u64), u64>;

pub struct Setup {
    pub program: PathBuf,
    pub code_object: PathBuf,
    /// The GPU target of the code object and of the runtime's agent.
    pub target: Target,
}

/// The program and a gfx90a code object (the target both runtimes run).
pub fn setup(tag: &str) -> Setup {
    setup_for(tag, Target::Gfx90a)
}

/// The program and a code object for `target`.
pub fn setup_for(tag: &str, target: Target) -> Setup {
    let dir = test_support::scratch_dir(&format!("aqlprofile-{tag}"));
    let code_object = dir.join("pmc_kernels.co");
    test_support::build_code_object_with(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/device/pmc_kernels.hip"),
        target.name(),
        &code_object,
        // ROCm 5.2's loader loads code objects up to version 4.
        &["-mcode-object-version=4"],
    );
    let program = dir.join("pmc_packets");
    let vhsa = test_support::vhsa_lib_dir();
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
        .arg(format!("-I{}", test_support::host_include_dir().display()))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/pmc_packets.c"))
        .arg("-o")
        .arg(&program)
        // Linked against vhsa's exports without a run path: LD_LIBRARY_PATH picks the runtime.
        .arg(format!("-L{}", vhsa.display()))
        .args(["-l:libhsa-runtime64.so.1", "-ldl"])
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on pmc_packets.c");
    Setup {
        program,
        code_object,
        target,
    }
}

/// `block:event` list of counter names on gfx90a.
pub fn group(names: &[&str]) -> String {
    group_on(Target::Gfx90a, names)
}

/// `block:event` list of counter names on `target`.
pub fn group_on(target: Target, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| {
            let c = find(target, n).unwrap_or_else(|| panic!("{n} is in the catalog"));
            format!("{}:{}", c.block.id(), c.event)
        })
        .collect::<Vec<_>>()
        .join(",")
}

pub fn run(
    s: &Setup,
    runtime: Runtime,
    mode: &str,
    kernel: &str,
    grid: u32,
    groups: &[String],
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = Command::new(&s.program);
    for v in [
        "HSA_TOOLS_LIB",
        "VHSA_PMC_LIMITS",
        "PMC_SECOND_QUEUE",
        "LD_PRELOAD",
    ] {
        cmd.env_remove(v);
    }
    runtime.apply(&mut cmd, s.target.name());
    cmd.arg(&s.code_object)
        .arg(kernel)
        .arg(mode)
        .arg(grid.to_string())
        .arg("256")
        .args(groups)
        .envs(env.iter().copied());
    cmd.output().expect("start pmc_packets")
}

pub fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
