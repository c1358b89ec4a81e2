//! Shader-data records of a kernel built with the SQTT marker pass plugin, run on vhsa's
//! emulator: vhsa writes them under `VHSA_SQTT_DIR` and hands them out through
//! `vhsa_dispatch_shader_data`; `kreplay sqtt memtrace`, `timeline` and `flame` decode the file, and the
//! address trace shows the addresses the kernel really touched.

mod readers;
#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/sqtt/vhsa_traced.hip` built for gfx942 with the plugin (named markers, addresses of
/// memory instructions traced).
fn traced_code_object(dir: &Path) -> PathBuf {
    let out = dir.join("vhsa_traced.co");
    let st = Command::new(test_support::device_clang())
        .args([
            "-x",
            "hip",
            "--offload-arch=gfx942",
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-nogpulib",
            "-nogpuinc",
            "-O2",
            "-DSQTT_ENABLED=1",
        ])
        .arg(format!(
            "-fpass-plugin={}",
            test_support::sqtt_pass_plugin().display()
        ))
        .arg("-I")
        .arg(test_support::device_include_dir())
        .arg("-I")
        .arg(manifest().join("../sqtt-pass/include"))
        .arg(manifest().join("tests/sqtt/vhsa_traced.hip"))
        .arg("-o")
        .arg(&out)
        .env("SQTT_TRACE_ADDRESSES", "memory")
        .status()
        .expect("run clang-22");
    assert!(
        st.success(),
        "building vhsa_traced.hip with the SQTT plugin failed"
    );
    out
}

#[test]
fn records_of_an_emulated_plugin_kernel_decode_with_memtrace_and_timeline() {
    let dir = test_support::scratch_dir("sqtt-vhsa");
    let co = traced_code_object(&dir);
    let apps = manifest().join("../../tests/apps");
    let app = dir.join("emulated");
    let flags = [
        "-D_DEFAULT_SOURCE".to_owned(),
        format!("-I{}", apps.display()),
        format!("-I{}", manifest().join("../vhsa/include").display()),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    test_support::compile_c(&apps.join("emulated.c"), &app, &flags);
    let records_dir = dir.join("records");
    std::fs::create_dir_all(&records_dir).unwrap();
    let out = Command::new(&app)
        .arg("sqtt")
        .arg(&co)
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir())
        .env("VHSA_SQTT_DIR", &records_dir)
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("VHSA_AGENTS")
        .output()
        .expect("run the application");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("APP OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("APP records="))
        .expect("record count line");
    let (count, base) = line.split_once(" base=").unwrap();
    let (count, base): (usize, u64) = (count.parse().unwrap(), base.parse().unwrap());

    // One file for the one dispatch, holding what the C extension returned.
    let files: Vec<PathBuf> = std::fs::read_dir(&records_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert!(
        file.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("-traced.jsonl"),
        "{}",
        file.display()
    );
    assert_eq!(
        std::fs::read_to_string(file).unwrap().lines().count(),
        count
    );

    // Work-groups 0 and 1 (CUs 0 and 1, the plugin's default scope) trace x[0..128]: a load and
    // a store per wave, 64 lanes 4 bytes apart, two 128-byte lines each.
    assert_eq!(base % 128, 0, "device allocations are page-aligned");
    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(file),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["waves"], 2, "{doc:#}");
    assert_eq!(summary["address_blocks"], 4, "{doc:#}");
    assert_eq!(summary["incomplete_blocks"], 0);
    assert_eq!(summary["layout_mismatches"], 0);
    let ops = doc["operations"].as_array().unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["addr_trace_load", "addr_trace_store"], "{doc:#}");
    for op in ops {
        assert_eq!(op["executions"], 2, "{op:#}");
        assert_eq!(op["lanes_active"]["min"], 64, "{op:#}");
        assert_eq!(op["dominant_stride"]["bytes"], 4, "{op:#}");
        assert_eq!(op["cache_lines"]["total"], 4, "{op:#}");
        assert_eq!(op["bytes_requested"], 2 * 64 * 4, "{op:#}");
    }

    // The timeline has the `work` scope of each traced wave.
    let trace_path = dir.join("traced.pftrace");
    kreplay_sqtt_ok(&[
        "timeline",
        s(file),
        "--funcmap",
        s(&co),
        "-o",
        s(&trace_path),
    ]);
    let trace = readers::pftrace(&trace_path);
    assert_eq!(trace["errors"], Value::Array(vec![]), "{}", trace["errors"]);
    let work = trace["slices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "work")
        .count();
    assert_eq!(work, 2, "{trace:#}");

    // The flame graph of the same records: the kernel's stack with its `work` scope, weighted by
    // the emulator's cycles, and an SVG that names both.
    let (folded, svg) = (dir.join("traced.folded"), dir.join("traced.svg"));
    kreplay_sqtt_ok(&[
        "flame",
        s(file),
        "--funcmap",
        s(&co),
        "--folded",
        s(&folded),
        "--svg",
        s(&svg),
    ]);
    let stacks: Vec<(String, u64)> = std::fs::read_to_string(&folded)
        .unwrap()
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_owned(), n.parse().unwrap())
        })
        .collect();
    assert!(
        stacks
            .iter()
            .any(|(stack, n)| stack.ends_with(";work") && *n > 0),
        "no cycles charged to the work scope: {stacks:?}"
    );
    let titles = readers::svg_titles(&svg);
    for name in ["traced", "work"] {
        assert!(
            titles.iter().any(|t| t.starts_with(&format!("{name} ("))),
            "no frame titled {name}: {titles:?}"
        );
    }
}
