//! `kreplay run --pmc ... --runtime virtual` end to end: the root package's counter test
//! application (`tests/apps/counters.{c,hip}`: one `scale` dispatch of 64 one-wave
//! work-groups) on vhsa's emulator, with SQ_WAVES in each of three groups. Every output reads
//! the true wave count, 64, once per pass: `counter_collection.csv`, `counters.csv`, the rocpd
//! views, the JSON and the Perfetto counter track; the summary gives the median. The same
//! groups on the system's real ROCR over vkfd (`--runtime system-on-vkfd`) give the same
//! values.

mod readers;

use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `scale` over 4096 work-items in work-groups of 64.
const N: &str = "4096";
const WG: &str = "64";
const WAVES: f64 = 64.0;

fn apps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/apps")
}

/// The application and its code object for `arch`, built once per test binary (a fresh
/// directory per test process, so sources changed since are built again).
fn built(arch: &str) -> (PathBuf, PathBuf) {
    static BUILT: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);
    let mut dir = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = dir
        .get_or_insert_with(|| {
            test_support::tool_lib();
            let scratch = test_support::scratch_dir("cli-counters-apps");
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
            let flags = [
                "-D_DEFAULT_SOURCE".to_owned(),
                format!("-I{}", apps().display()),
                format!("-I{}", root.join("crates/vhsa/include").display()),
                format!("-I{}", root.join("include").display()),
            ];
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            test_support::compile_c(
                &apps().join("counters.c"),
                &scratch.join("counters"),
                &flags,
            );
            scratch
        })
        .clone();
    let co = scratch.join(format!("counters-{arch}.co"));
    if !co.exists() {
        test_support::build_code_object(&apps().join("counters.hip"), arch, &co);
    }
    (scratch.join("counters"), co)
}

/// The application linked with the system's HSA runtime (Debian's ROCR), and its code object
/// in version 4 for ROCR 5.2's loader.
fn built_for_rocr() -> (PathBuf, PathBuf) {
    test_support::tool_lib();
    test_support::vkfd_lib_dir();
    let scratch = test_support::scratch_dir("cli-counters-rocr");
    let app = scratch.join("counters");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new("cc")
        .args(["-std=c11", "-D_DEFAULT_SOURCE", "-pthread"])
        .arg(format!("-I{}", apps().display()))
        .arg(format!("-I{}", root.join("crates/vhsa/include").display()))
        .arg(format!("-I{}", root.join("include").display()))
        .arg(format!("-I{}", test_support::host_include_dir().display()))
        .arg(apps().join("counters.c"))
        .arg("-o")
        .arg(&app)
        .arg("-l:libhsa-runtime64.so.1")
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on counters.c");
    let co = scratch.join("counters-v4.co");
    test_support::build_code_object_with(
        &apps().join("counters.hip"),
        "gfx90a",
        &co,
        &["-mcode-object-version=4"],
    );
    (app, co)
}

fn kreplay() -> Command {
    test_support::vhsa_lib_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in [
        "HSA_TOOLS_LIB",
        "KREPLAY_TOOL_LIB",
        "KREPLAY_VHSA_DIR",
        "VHSA_FAULTS",
        "VHSA_AGENTS",
        "VHSA_PMC_LIMITS",
        "KREPLAY_PASSES",
        "KREPLAY_PMC_GROUPS",
        "KREPLAY_PMC_CROSS_PASS",
        "KREPLAY_VKFD_DIR",
        "VKFD_AGENTS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The rows of a CSV text with a header, each a map from column name to field.
fn csv_maps(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = text.lines();
    let split = |l: &str| -> Vec<String> {
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        for ch in l.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => fields.push(std::mem::take(&mut field)),
                c => field.push(c),
            }
        }
        fields.push(field);
        fields
    };
    let header = split(lines.next().expect("a header"));
    lines
        .map(|l| header.iter().cloned().zip(split(l)).collect())
        .collect()
}

fn run_three_groups(arch: &str, out: &Path) -> String {
    let (app, co) = built(arch);
    let output = kreplay()
        .args(["run", "--runtime", "virtual", "--virtual-agents", arch])
        .args(["--pmc", "SQ_WAVES", "SQ_INSTS_VALU"])
        .args(["--pmc", "SQ_WAVES,SQ_INSTS_SALU"])
        .args(["--pmc", "SQ_WAVES", "SPI_CSN_NUM_THREADGROUPS"])
        .args(["--kernel-include-regex", "^scale"])
        .args(["-f", "rocpd", "csv", "json", "pftrace", "-o", "k", "-d"])
        .arg(out)
        .arg("--")
        .arg(&app)
        .args(["scale", co.to_str().unwrap(), N, WG])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("APP OK"),
        "{stderr}"
    );
    stderr
}

#[test]
fn sq_waves_in_three_groups_reads_the_true_value_in_every_output() {
    let out = test_support::scratch_dir("cli-counters-e2e");
    let stderr = run_three_groups("gfx90a", &out);
    assert!(
        stderr.contains("scale: SQ_WAVES 64,"),
        "the summary's median: {stderr}"
    );

    // counter_collection.csv: one SQ_WAVES row per pass, each 64.
    let rows = csv_maps(&std::fs::read_to_string(out.join("k_counter_collection.csv")).unwrap());
    let waves: Vec<_> = rows
        .iter()
        .filter(|r| r["Counter_Name"] == "SQ_WAVES")
        .collect();
    assert_eq!(waves.len(), 3, "{rows:?}");
    for (p, r) in waves.iter().enumerate() {
        assert_eq!(r["Counter_Value"], "64.000000");
        assert_eq!(r["Replay_Pass"], p.to_string());
        assert_eq!(r["Counter_Group"], p.to_string());
        assert_eq!(r["Exactness"], "exact");
    }
    let groups = rows
        .iter()
        .find(|r| r["Counter_Name"] == "SPI_CSN_NUM_THREADGROUPS")
        .unwrap();
    assert_eq!(groups["Counter_Value"], "64.000000", "64 work-groups");
    assert_eq!(groups["Replay_Pass"], "2");

    // counters.csv: one row, the true value, no spread (the emulator is exact).
    let table = csv_maps(&std::fs::read_to_string(out.join("k_counters.csv")).unwrap());
    assert_eq!(table.len(), 1);
    assert_eq!(table[0]["SQ_WAVES"], "64");
    assert!(!table[0].contains_key("SQ_WAVES_spread"));
    assert_eq!(table[0]["groups_collected"], "0 1 2");
    assert!(table[0]["SQ_INSTS_VALU"].parse::<f64>().unwrap() > 0.0);

    // rocpd: per pass in counters_collection, once per dispatch in kreplay_counters.
    let conn = Connection::open(out.join("k_results.db")).unwrap();
    let per_pass: Vec<(f64, i64)> = conn
        .prepare("SELECT value, replay_pass FROM counters_collection WHERE counter_name = 'SQ_WAVES' ORDER BY replay_pass")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_pass, vec![(WAVES, 0), (WAVES, 1), (WAVES, 2)]);
    let once: (f64, i64, f64) = conn
        .query_row(
            "SELECT value, passes, spread FROM kreplay_counters WHERE counter_name = 'SQ_WAVES'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(once, (WAVES, 3, 0.0));
    let summed_by_dispatch: f64 = conn
        .query_row(
            "SELECT SUM(PE.value) FROM rocpd_pmc_event PE JOIN rocpd_info_pmc I ON I.id = PE.pmc_id WHERE I.name = 'SQ_WAVES'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        summed_by_dispatch, WAVES,
        "rocpd's own table holds one pass"
    );

    // JSON: each pass's row, and rocprofv3's per-pass records.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("k_results.json")).unwrap())
            .unwrap();
    let rows = doc["kreplay"]["rows"].as_array().unwrap();
    let scale: Vec<&Value> = rows
        .iter()
        .filter(|r| r["kernel"].as_str().is_some_and(|k| k.starts_with("scale")))
        .collect();
    assert_eq!(scale.len(), 3);
    for (p, r) in scale.iter().enumerate() {
        assert_eq!(r["replay_pass"], p);
        assert_eq!(r["counters"]["SQ_WAVES"], 64);
    }

    // Perfetto: the PMC SQ_WAVES track steps to 64 over each pass.
    let dump = readers::pftrace(&out.join("k_results.pftrace"));
    let track = dump["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "PMC SQ_WAVES")
        .expect("a PMC SQ_WAVES track")
        .clone();
    let highs: Vec<f64> = dump["counters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["track"] == track["uuid"])
        .map(|c| c["value"].as_f64().unwrap())
        .filter(|v| *v > 0.0)
        .collect();
    assert_eq!(highs, [WAVES, WAVES, WAVES]);
}

#[test]
fn a_groups_file_runs_like_the_same_pmc_flags() {
    let out = test_support::scratch_dir("cli-counters-input");
    let (app, co) = built("gfx942");
    let file = out.join("groups.yaml");
    std::fs::write(
        &file,
        "jobs:\n  - pmc: [SQ_WAVES, SQ_INSTS_VALU]\n  - pmc: [SQ_WAVES, GRBM_COUNT]\n",
    )
    .unwrap();
    let output = kreplay()
        .args(["run", "--runtime", "virtual", "--virtual-agents", "gfx942"])
        .arg("-i")
        .arg(&file)
        .args(["--passes", "4", "--kernel-include-regex", "^scale"])
        .args(["-f", "csv", "-o", "k", "-d"])
        .arg(&out)
        .arg("--")
        .arg(&app)
        .args(["scale", co.to_str().unwrap(), N, WG])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let rows = csv_maps(&std::fs::read_to_string(out.join("k_counter_collection.csv")).unwrap());
    let waves: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r["Counter_Name"] == "SQ_WAVES")
        .map(|r| (r["Replay_Pass"].clone(), r["Counter_Group"].clone()))
        .collect();
    let expected: Vec<(String, String)> = [(0, 0), (1, 1), (2, 0), (3, 1)]
        .iter()
        .map(|(p, g)| (p.to_string(), g.to_string()))
        .collect();
    assert_eq!(waves, expected, "pass p collects group p mod 2");
    assert!(
        rows.iter()
            .all(|r| r["Counter_Name"] != "SQ_WAVES" || r["Counter_Value"] == "64.000000")
    );
    let grbm = rows
        .iter()
        .find(|r| r["Counter_Name"] == "GRBM_COUNT")
        .unwrap();
    assert_eq!(grbm["Exactness"], "model");
}

#[test]
fn rocr_over_vkfd_collects_the_same_values() {
    let out = test_support::scratch_dir("cli-counters-vkfd");
    let (app, co) = built_for_rocr();
    let output = kreplay()
        .args([
            "run",
            "--runtime",
            "system-on-vkfd",
            "--virtual-agents",
            "gfx90a",
        ])
        .args(["--pmc", "SQ_WAVES", "SQ_INSTS_VALU"])
        .args(["--pmc", "SQ_WAVES", "SQ_INSTS_SALU"])
        .args([
            "--kernel-include-regex",
            "^scale",
            "-f",
            "csv",
            "-o",
            "k",
            "-d",
        ])
        .arg(&out)
        .arg("--")
        .arg(&app)
        .args(["scale", co.to_str().unwrap(), N, WG])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("on vkfd"), "{stderr}");
    let table = csv_maps(&std::fs::read_to_string(out.join("k_counters.csv")).unwrap());
    assert_eq!(table.len(), 1);
    assert_eq!(table[0]["SQ_WAVES"], "64");
    assert_eq!(table[0]["passes"], "2");
    // The same dispatch on vhsa counts the same instructions.
    let vhsa_out = test_support::scratch_dir("cli-counters-vkfd-vhsa");
    let (vhsa_app, vhsa_co) = built("gfx90a");
    let output = kreplay()
        .args(["run", "--runtime", "virtual", "--virtual-agents", "gfx90a"])
        .args(["--pmc", "SQ_WAVES", "SQ_INSTS_VALU"])
        .args(["--pmc", "SQ_WAVES", "SQ_INSTS_SALU"])
        .args([
            "--kernel-include-regex",
            "^scale",
            "-f",
            "csv",
            "-o",
            "k",
            "-d",
        ])
        .arg(&vhsa_out)
        .arg("--")
        .arg(&vhsa_app)
        .args(["scale", vhsa_co.to_str().unwrap(), N, WG])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let on_vhsa = csv_maps(&std::fs::read_to_string(vhsa_out.join("k_counters.csv")).unwrap());
    for name in ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU"] {
        assert_eq!(table[0][name], on_vhsa[0][name], "{name}");
    }
}

#[test]
fn auto_split_collects_a_list_too_wide_for_one_pass() {
    let out = test_support::scratch_dir("cli-counters-split");
    let (app, co) = built("gfx942");
    let many = [
        "SQ_WAVES",
        "SQ_INSTS",
        "SQ_INSTS_VALU",
        "SQ_INSTS_SALU",
        "SQ_INSTS_SMEM",
        "SQ_INSTS_VMEM_RD",
        "SQ_INSTS_VMEM_WR",
        "SQ_INSTS_BRANCH",
        "SQ_WAVES_EQ_64",
        "SPI_CSN_WAVE",
        "SPI_CSN_NUM_THREADGROUPS",
    ];
    let run = |extra: &[&str]| {
        kreplay()
            .args(["run", "--runtime", "virtual", "--virtual-agents", "gfx942"])
            .arg("--pmc")
            .args(many)
            .args(extra)
            .args([
                "--kernel-include-regex",
                "^scale",
                "-f",
                "csv",
                "-o",
                "k",
                "-d",
            ])
            .arg(&out)
            .arg("--")
            .arg(&app)
            .args(["scale", co.to_str().unwrap(), N, WG])
            .output()
            .unwrap()
    };
    let refused = run(&[]);
    assert_eq!(
        refused.status.code(),
        Some(80),
        "9 SQ counters in one group"
    );
    let output = run(&["--pmc-auto-split"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("--pmc-auto-split: 2 groups: pmc: "),
        "{stderr}"
    );
    let table = csv_maps(&std::fs::read_to_string(out.join("k_counters.csv")).unwrap());
    assert_eq!(table[0]["passes"], "2");
    assert_eq!(table[0]["groups_collected"], "0 1");
    for name in many {
        assert!(
            !table[0][name].is_empty(),
            "{name} collected: {:?}",
            table[0]
        );
    }
    assert_eq!(table[0]["SQ_WAVES"], "64");
    assert_eq!(table[0]["SPI_CSN_NUM_THREADGROUPS"], "64");
}
