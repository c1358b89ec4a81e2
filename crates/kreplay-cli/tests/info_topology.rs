//! `kreplay info` reports the agents, ISAs and pools of the configured virtual topology.

use std::process::Command;

fn info(agents: Option<&str>) -> (i32, String, String) {
    test_support::vhsa_lib_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kreplay"));
    cmd.args(["info", "--runtime", "virtual"])
        .env_remove("KREPLAY_VHSA_DIR")
        .env_remove("VHSA_AGENTS");
    if let Some(a) = agents {
        cmd.env("VHSA_AGENTS", a);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn gpu_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("agent ") && l.contains("(GPU"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn two_configured_gpus_are_listed_with_their_isas_and_pools() {
    let (code, stdout, stderr) = info(Some("gfx942,gfx90a"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("runtime: virtual (vhsa) "), "{stdout}");
    assert!(stderr.contains("kreplay: runtime: virtual"), "{stderr}");
    let gpus = gpu_lines(&stdout);
    assert_eq!(gpus.len(), 2, "{stdout}");
    assert!(
        gpus[0].contains(": gfx942 (GPU") && gpus[1].contains(": gfx90a (GPU"),
        "{gpus:?}"
    );
    assert!(stdout.contains("isa: amdgcn-amd-amdhsa--gfx942"));
    assert!(stdout.contains("isa: amdgcn-amd-amdhsa--gfx90a"));
    // Each GPU has a coarse-grained global pool; the host offers a kernarg pool.
    let pools_after = |agent: &str| -> Vec<String> {
        stdout
            .lines()
            .skip_while(|l| !l.contains(agent))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter(|l| l.contains("pool"))
            .map(str::to_owned)
            .collect()
    };
    for gpu in ["gfx942 (GPU", "gfx90a (GPU"] {
        assert!(
            pools_after(gpu)
                .iter()
                .any(|p| p.contains("GLOBAL coarse-grained") && p.contains("allocatable")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("kernarg"), "{stdout}");
    let count: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("agents: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        count,
        stdout.lines().filter(|l| l.starts_with("agent ")).count()
    );
}

#[test]
fn the_default_topology_has_one_gfx942() {
    let (code, stdout, stderr) = info(None);
    assert_eq!(code, 0, "{stderr}");
    let gpus = gpu_lines(&stdout);
    assert_eq!(gpus.len(), 1, "{stdout}");
    assert!(gpus[0].contains("gfx942"));
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("agent ") && l.contains("(CPU")),
        "{stdout}"
    );
}

#[test]
fn a_runtime_that_cannot_be_loaded_is_a_clear_error() {
    let scratch = test_support::scratch_dir("cli-info-bad-runtime");
    let fake = scratch.join("libhsa-runtime64.so.1");
    std::fs::write(&fake, "not a library").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kreplay"))
        .args(["info", "--runtime", "system"])
        .env("KREPLAY_SYSTEM_RUNTIME", &fake)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert!(
        stderr.contains("kreplay: error: cannot load the runtime")
            && stderr.contains("libhsa-runtime64.so.1"),
        "{stderr}"
    );
}
