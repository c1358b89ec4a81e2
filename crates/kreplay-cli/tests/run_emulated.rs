//! `kreplay run --runtime virtual` on real compiled kernels with no native kernel: the
//! application and device code of the root package's `tests/apps/emulated.{c,hip}` run on
//! vhsa's emulator, each dispatch replayed, and the application's own checks (every pass saw
//! the original input; memory ends as after one execution) still pass.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn apps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/apps")
}

/// Builds the application and its code object once per test binary: (app, code object).
fn built() -> &'static (PathBuf, PathBuf) {
    static BUILT: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        test_support::tool_lib();
        let scratch = test_support::scratch_dir("cli-emulated");
        let app = scratch.join("emulated");
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let flags = [
            "-D_DEFAULT_SOURCE".to_owned(),
            format!("-I{}", apps().display()),
            format!("-I{}", root.join("crates/vhsa/include").display()),
        ];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        test_support::compile_c(&apps().join("emulated.c"), &app, &flags);
        let co = scratch.join("emulated.co");
        test_support::build_code_object(&apps().join("emulated.hip"), "gfx942", &co);
        (app, co)
    })
}

/// Runs `emulated <mode> <passes> <co>` under `kreplay run` with `passes` passes; the rows.
fn run(mode: &str, passes: u32, out_dir: &Path) -> Vec<Value> {
    let (app, co) = built();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in [
        "HSA_TOOLS_LIB",
        "KREPLAY_TOOL_LIB",
        "KREPLAY_VHSA_DIR",
        "VHSA_FAULTS",
        "KREPLAY_PASSES",
        "VHSA_AGENTS",
    ] {
        cmd.env_remove(var);
    }
    let out = cmd
        .args([
            "run",
            "--runtime",
            "virtual",
            "-f",
            "json",
            "--passes",
            &passes.to_string(),
            // The application counts passes in fine-grained memory its kernel arguments point
            // to: left unrestored so it counts every pass.
            "--host-memory",
            "ignore",
            "-d",
        ])
        .arg(out_dir)
        .arg("--")
        .arg(app)
        .args([mode, &passes.to_string()])
        .arg(co)
        .output()
        .expect("run kreplay");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("APP OK"), "{stdout}\n{stderr}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_results.json")).unwrap())
            .unwrap();
    doc["kreplay"]["rows"].as_array().unwrap().clone()
}

#[test]
fn x_plus_one_on_emulated_code_is_replayed_five_times() {
    let rows = run(
        "inc",
        5,
        &test_support::scratch_dir("cli-emulated-inc").join("out"),
    );
    assert_eq!(rows.len(), 5, "{rows:#?}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            r["kernel"].as_str().map(|k| k.trim_end_matches(".kd")),
            Some("inc"),
            "{r}"
        );
        assert_eq!(r["passes"], 5, "{r}");
        assert_eq!(r["pass"], i as u64, "{r}");
    }
}

#[test]
fn a_device_counter_of_emulated_code_is_restored_between_three_passes() {
    let rows = run(
        "devvar",
        3,
        &test_support::scratch_dir("cli-emulated-devvar").join("out"),
    );
    assert_eq!(rows.len(), 3, "{rows:#?}");
    assert!(
        rows.iter()
            .all(|r| r["kernel"].as_str().map(|k| k.trim_end_matches(".kd")) == Some("bump")),
        "{rows:#?}"
    );
}

/// The value of `key` (`.kernarg_segment_size`) in the AMDGPU metadata of kernel `kernel`, as
/// `llvm-readelf --notes` prints the code object's metadata.
fn metadata_value(co: &Path, kernel: &str, key: &str) -> u64 {
    let out = Command::new("llvm-readelf-22")
        .arg("--notes")
        .arg(co)
        .output()
        .expect("run llvm-readelf-22 (package llvm-22)");
    let text = String::from_utf8_lossy(&out.stdout);
    // Each kernel's map lists its keys; find the map that names the kernel.
    let maps: Vec<&str> = text.split("  - .").collect();
    let map = maps
        .iter()
        .find(|m| {
            m.lines()
                .any(|l| l.trim() == format!(".name:           {kernel}"))
        })
        .unwrap_or_else(|| panic!("no metadata of {kernel} in {text}"));
    map.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(key)?
                .trim()
                .strip_prefix(':')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no {key} for {kernel}: {map}"))
}

#[test]
fn kernel_symbols_carry_the_descriptor_of_the_code_object() {
    let out_dir = test_support::scratch_dir("cli-emulated-symbols").join("out");
    run("inc", 2, &out_dir);
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_results.json")).unwrap())
            .unwrap();
    let symbols = doc["rocprofiler-sdk-tool"][0]["kernel_symbols"]
        .as_array()
        .unwrap();
    let inc = symbols
        .iter()
        .find(|k| k["kernel_name"].as_str().map(|n| n.trim_end_matches(".kd")) == Some("inc"))
        .unwrap_or_else(|| panic!("{symbols:?}"));
    let co = &built().1;
    let n = |v: &Value| v.as_u64().unwrap();
    assert_eq!(
        n(&inc["kernarg_segment_size"]),
        metadata_value(co, "inc", ".kernarg_segment_size")
    );
    // The descriptor's counts are the allocation: the used counts rounded up to the granule.
    let (vgprs, sgprs) = (
        metadata_value(co, "inc", ".vgpr_count"),
        metadata_value(co, "inc", ".sgpr_count"),
    );
    let arch = n(&inc["arch_vgpr_count"]);
    assert!(
        arch >= vgprs && arch % 4 == 0 && arch < vgprs + 8,
        "{inc} vs {vgprs}"
    );
    let sgpr = n(&inc["sgpr_count"]);
    assert!(sgpr >= sgprs && sgpr % 16 == 0, "{inc} vs {sgprs}");
    assert_eq!(
        n(&inc["accum_vgpr_count"]),
        0,
        "inc uses no accumulation registers"
    );
}
