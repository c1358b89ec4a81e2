//! `kreplay run --runtime virtual --passes 3` on HIP 5.2 programs (Debian's `libamdhip64` on
//! vhsa): every kernel dispatch, ROCclr's blit kernels included, is replayed three times and the
//! programs' own result checks still pass. The programs are vhsa's HIP tests
//! (`crates/vhsa/tests/hip`; every kernel, ROCclr's blit kernels included, runs on vhsa's
//! emulator).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

struct Replayed {
    stdout: String,
    /// dispatch id -> (kernel without `.kd`, agent handle, rows)
    dispatches: BTreeMap<u64, (String, u64, usize)>,
}

impl Replayed {
    /// Dispatches per kernel name.
    fn kernels(&self) -> BTreeMap<String, usize> {
        let mut k = BTreeMap::new();
        for (name, _, _) in self.dispatches.values() {
            *k.entry(name.clone()).or_default() += 1;
        }
        k
    }
}

/// Builds `<program>.hip`, runs it under `kreplay run` with 3 passes on `agents`, checks that it
/// passed its own checks and that every dispatch was replayed three times.
fn replay(program: &str, agents: &str) -> Replayed {
    let scratch = test_support::scratch_dir(&format!("cli-hip-replay-{program}"));
    let app = scratch.join(program);
    test_support::build_hip_program(program, "gfx90a", &app);
    test_support::tool_lib();
    test_support::vhsa_lib_dir();
    let out_dir = scratch.join("out");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in [
        "HSA_TOOLS_LIB",
        "KREPLAY_TOOL_LIB",
        "KREPLAY_VHSA_DIR",
        "VHSA_FAULTS",
        "KREPLAY_PASSES",
        "AMD_LOG_LEVEL",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd
        .env("VHSA_AGENTS", agents)
        .args([
            "run",
            "-f",
            "json",
            "--runtime",
            "virtual",
            "--passes",
            "3",
            "-d",
        ])
        .arg(&out_dir)
        .arg("--")
        .arg(&app)
        .output()
        .expect("run kreplay");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.lines().any(|l| l == "PASS"),
        "{program}'s own checks failed under replay:\n{stdout}\n{stderr}"
    );

    let doc: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_results.json")).unwrap())
            .unwrap();
    let mut dispatches: BTreeMap<u64, (String, u64, usize)> = BTreeMap::new();
    for r in doc["kreplay"]["rows"].as_array().unwrap() {
        assert_eq!(r["replayed"], true, "{r}");
        assert_eq!(r["passes"], 3, "{r}");
        assert_eq!(r["agent_name"], "gfx90a", "{r}");
        let kernel = r["kernel"]
            .as_str()
            .unwrap()
            .trim_end_matches(".kd")
            .to_owned();
        let agent = r["agent"].as_u64().unwrap();
        dispatches
            .entry(r["dispatch_id"].as_u64().unwrap())
            .or_insert((kernel, agent, 0))
            .2 += 1;
    }
    assert!(
        dispatches.values().all(|(_, _, rows)| *rows == 3),
        "one row per pass: {dispatches:?}"
    );
    Replayed { stdout, dispatches }
}

#[test]
fn kernels_events_and_graphs_are_replayed_and_results_stay_correct() {
    let r = replay("streams", "gfx90a");
    // add_scalar once, once after the stream-ordered copy, twice in each of two graph launches;
    // busy_wait once; one device-to-device copy by ROCclr's blit kernel.
    let want: BTreeMap<String, usize> = [
        ("__amd_rocclr_copyBuffer", 1),
        ("add_scalar", 6),
        ("busy_wait", 1),
    ]
    .map(|(k, n)| (k.to_owned(), n))
    .into();
    assert_eq!(r.kernels(), want, "{}", r.stdout);
}

#[test]
fn copies_memsets_and_symbols_are_replayed_and_results_stay_correct() {
    let r = replay("memory", "gfx90a");
    // Only ROCclr's blit kernels run: device-to-device and 2D copies, memsets; the program
    // prints how many blit dispatches it saw, and each of them was replayed.
    let kernels = r.kernels();
    let names: BTreeSet<&str> = kernels.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "__amd_rocclr_copyBuffer",
            "__amd_rocclr_copyBufferRect",
            "__amd_rocclr_copyBufferRectAligned",
            "__amd_rocclr_fillBufferAligned"
        ]),
        "{}",
        r.stdout
    );
    let printed: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("blit dispatches: "))
        .expect("the program reports its blit dispatches")
        .parse()
        .unwrap();
    // Each replayed dispatch ran three times (vhsa counts the packets it executed).
    assert_eq!(printed, 3 * r.dispatches.len(), "{}", r.stdout);
}

#[test]
fn a_program_without_dispatches_runs_unchanged() {
    let r = replay("device_props", "gfx90a");
    assert!(r.dispatches.is_empty(), "{:?}", r.dispatches);
}

#[test]
fn dispatches_on_two_devices_are_replayed_on_their_agents() {
    let r = replay("two_devices", "gfx90a,gfx90a");
    let agents: BTreeSet<u64> = r
        .dispatches
        .values()
        .filter(|(k, _, _)| k == "add_scalar")
        .map(|(_, a, _)| *a)
        .collect();
    assert_eq!(
        agents.len(),
        2,
        "add_scalar ran once on each device: {:?}",
        r.dispatches
    );
}
