//! `kreplay run --runtime virtual --passes 3` on a HIP 5.2 program (Debian's `libamdhip64` on
//! vhsa): every kernel dispatch, ROCclr's blit kernel included, is replayed three times and the
//! program's own result checks still pass. The program is vhsa's HIP test `streams.hip`
//! (kernels as native stand-ins, events, stream-ordered allocation, a graph launched twice).

use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn a_hip_program_is_replayed_and_its_results_stay_correct() {
    let scratch = test_support::scratch_dir("cli-hip-replay");
    let app = scratch.join("streams");
    test_support::build_hip_program("streams", "gfx90a", &app);
    test_support::tool_lib();
    test_support::vhsa_lib_dir();
    let out_dir = scratch.join("out");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in ["HSA_TOOLS_LIB", "KREPLAY_TOOL_LIB", "KREPLAY_VHSA_DIR", "VHSA_FAULTS", "KREPLAY_PASSES", "AMD_LOG_LEVEL"] {
        cmd.env_remove(var);
    }
    let out = cmd
        .env("VHSA_AGENTS", "gfx90a")
        .args(["run", "--runtime", "virtual", "--passes", "3", "-d"])
        .arg(&out_dir)
        .arg("--")
        .arg(&app)
        .output()
        .expect("run kreplay");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.lines().any(|l| l == "PASS"), "the program's own checks failed under replay:\n{stdout}\n{stderr}");

    let doc: Value = serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_passes.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    // One row per pass; every dispatch replayed with 3 passes on the gfx90a agent.
    let mut per_dispatch: BTreeMap<u64, (String, usize)> = BTreeMap::new();
    for r in rows {
        assert_eq!(r["replayed"], true, "{r}");
        assert_eq!(r["passes"], 3, "{r}");
        assert_eq!(r["agent_name"], "gfx90a", "{r}");
        let kernel = r["kernel"].as_str().unwrap().trim_end_matches(".kd").to_owned();
        per_dispatch.entry(r["dispatch_id"].as_u64().unwrap()).or_insert((kernel, 0)).1 += 1;
    }
    assert!(per_dispatch.values().all(|(_, n)| *n == 3), "{per_dispatch:?}");
    let mut kernels: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, _) in per_dispatch.values() {
        *kernels.entry(k.as_str()).or_default() += 1;
    }
    // The program's dispatches: add_scalar once, then once after the stream-ordered copy, then
    // twice in each of the two graph launches; busy_wait once; one device-to-device copy.
    assert_eq!(
        kernels,
        BTreeMap::from([("__amd_rocclr_copyBuffer", 1), ("add_scalar", 6), ("busy_wait", 1)]),
        "{stdout}"
    );
}
