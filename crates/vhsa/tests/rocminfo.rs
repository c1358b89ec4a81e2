//! Debian's `rocminfo`, run on the virtual runtime, lists the CPU agent and every configured GPU
//! agent with their pools and ISAs.
//!
//! rocminfo checks for the kernel driver before it calls `hsa_init` (`lsmod | grep amdgpu` and
//! opening `/dev/kfd`); the test supplies a `lsmod` that reports the module and an `LD_PRELOAD`
//! shim that opens `/dev/null` for `/dev/kfd`. Everything else is the real program.

mod c_programs;
use c_programs::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn rocminfo() -> PathBuf {
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

fn run(dir: &Path, agents: Option<&str>) -> String {
    let shim = dir.join("libkfd_present.so");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&shim)
        .arg(c_dir().join("kfd_present.c"))
        .arg("-ldl")
        .status()
        .expect("run cc");
    assert!(status.success(), "cannot build the /dev/kfd shim");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lsmod = bin.join("lsmod");
    std::fs::write(&lsmod, "#!/bin/sh\necho 'amdgpu 1 0'\n").unwrap();
    std::fs::set_permissions(&lsmod, std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut cmd = command(&rocminfo());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env("LD_PRELOAD", &shim);
    if let Some(a) = agents {
        cmd.env("VHSA_AGENTS", a);
    }
    stdout(&run_ok(cmd))
}

fn agent_names(out: &str) -> Vec<String> {
    // Agent blocks start with "Agent N"; the first "Name:" line after it is the agent's name.
    let mut names = Vec::new();
    let mut in_agent = false;
    for line in out.lines() {
        let t = line.trim();
        if t.starts_with("Agent ") {
            in_agent = true;
        } else if in_agent && t.starts_with("Name:") {
            names.push(t.trim_start_matches("Name:").trim().to_owned());
            in_agent = false;
        }
    }
    names
}

#[test]
fn rocminfo_lists_the_default_topology() {
    let dir = test_support::scratch_dir("vhsa-rocminfo");
    let out = run(&dir, None);
    assert_eq!(agent_names(&out), ["CPU", "gfx942"], "{out}");
    assert!(out.contains("amdgcn-amd-amdhsa--gfx942"), "{out}");
    assert!(out.contains("FLAGS: COARSE GRAINED"), "{out}");
    assert!(out.contains("FLAGS: KERNARG, FINE GRAINED"), "{out}");
    assert!(out.contains("FLAGS: FINE GRAINED"), "{out}");
    assert!(out.contains("Runtime Version:         1.1"), "{out}");
}

#[test]
fn rocminfo_lists_every_configured_gpu() {
    let dir = test_support::scratch_dir("vhsa-rocminfo-two");
    let out = run(&dir, Some("gfx942,gfx90a"));
    assert_eq!(agent_names(&out), ["CPU", "gfx942", "gfx90a"], "{out}");
    assert!(
        out.contains("amdgcn-amd-amdhsa--gfx942") && out.contains("amdgcn-amd-amdhsa--gfx90a"),
        "{out}"
    );
    assert_eq!(
        out.matches("FLAGS: COARSE GRAINED").count(),
        2,
        "one device pool per GPU:\n{out}"
    );
    assert_eq!(
        out.matches("Pool 1").count(),
        3,
        "every agent lists its pools:\n{out}"
    );
}

#[test]
fn rocminfo_lists_the_group_pool_and_full_target_ids() {
    let dir = test_support::scratch_dir("vhsa-rocminfo-group");
    let out = run(&dir, Some("gfx90a"));
    assert_eq!(agent_names(&out), ["CPU", "gfx90a"], "{out}");
    assert!(
        out.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
        "{out}"
    );
    // The GPU's pools: the device pool, then the GROUP pool (64 KiB, not allocatable).
    let gpu = &out[out
        .find("Name:                    gfx90a")
        .expect("the GPU agent block")..];
    let group = &gpu[gpu
        .find("Segment:                 GROUP")
        .unwrap_or_else(|| panic!("no GROUP pool:\n{gpu}"))..];
    let block: Vec<&str> = group.lines().take(7).map(str::trim).collect();
    assert!(
        block
            .iter()
            .any(|l| l.starts_with("Size:") && l.contains("64(0x40) KB")),
        "{block:?}"
    );
    assert!(
        block
            .iter()
            .any(|l| l.starts_with("Allocatable:") && l.ends_with("FALSE")),
        "{block:?}"
    );
}
