//! `kreplay sqtt` on code built with the marker pass plugin (`libsqttinstrumentpass.so` from
//! `crates/sqtt-pass`): the decoder reads what the pass really writes.

#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use std::process::Command;
use support::*;

/// Compiles `tests/sqtt/kernels.hip` for gfx942 with the plugin, function instrumentation
/// and global address tracing, with line tables.
fn build_with_plugin(dir: &std::path::Path) -> std::path::PathBuf {
    let plugin = test_support::sqtt_pass_plugin();
    let out = dir.join("instrumented.co");
    let mut cmd = Command::new(test_support::device_clang());
    cmd.args([
        "-x",
        "hip",
        "--offload-arch=gfx942",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
    ])
    .args(["-nogpulib", "-nogpuinc", "-O2", "-g", "-DSQTT_ENABLED=1"])
    .arg(format!("-fpass-plugin={}", plugin.display()))
    .arg("-I")
    .arg(test_support::device_include_dir())
    .arg(kernels_source())
    .arg("-o")
    .arg(&out);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("SQTT_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("SQTT_INSTRUMENT_FUNCTIONS", "1")
        .env("SQTT_TRACE_ADDRESSES", "memory");
    run_tool(&mut cmd);
    out
}

#[test]
fn plugin_built_code_object() {
    let dir = test_support::scratch_dir("sqtt-plugin");
    let co = build_with_plugin(&dir);
    let syms = nm_functions(&co);

    // The section as llvm-objcopy sees it, read independently.
    let raw = dir.join("raw.funcmap");
    run_tool(
        Command::new(llvm_tool("llvm-objcopy"))
            .arg(format!("--dump-section=.sqtt_funcmap={}", raw.display()))
            .arg(&co),
    );
    let raw = std::fs::read(&raw).unwrap();
    assert_eq!(raw.last(), Some(&0), "the pass NUL-terminates the section");
    let text = String::from_utf8(raw[..raw.len() - 1].to_vec()).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.len() > 2 && matches!(&l[..2], "K:" | "F:" | "U:" | "P:"))
        .collect();

    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "funcmap",
        s(&co),
        "--json",
        "--demangle",
    ]))
    .unwrap();
    let object = &doc["code_objects"][0];
    assert_eq!(object["wave_size"], 64);
    let entries = object["entries"].as_array().unwrap();
    assert_eq!(entries.len(), rows.len(), "one entry per row:\n{text}");
    for (entry, row) in entries.iter().zip(&rows) {
        let symbol = entry["symbol"].as_str().unwrap();
        assert!(row.contains(symbol), "row `{row}` vs entry {entry}");
        match syms.get(symbol) {
            Some(&v) if matches!(&row[..2], "K:" | "F:") => assert_eq!(entry["vaddr"], v, "{row}"),
            _ => assert_eq!(entry["vaddr"], Value::Null, "{row}"),
        }
    }
    let kernels: Vec<&str> = entries
        .iter()
        .filter(|e| e["type"] == "kernel")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        kernels,
        ["saxpy(float*, float const*, float, int)", "reduce_sum"]
    );
    let scale = entries
        .iter()
        .find(|e| e["symbol"] == "_Z5scaleff")
        .expect("scale is instrumented");
    assert_eq!(
        (scale["type"].as_str(), scale["name"].as_str()),
        (Some("func"), Some("scale(float, float)"))
    );
    assert!(
        scale["source"].as_str().unwrap().ends_with("kernels.hip:5"),
        "{scale}"
    );
    assert_eq!(scale["vaddr"], syms["_Z5scaleff"]);
    let loads: Vec<&Value> = entries
        .iter()
        .filter(|e| e["name"] == "addr_trace_load")
        .collect();
    assert!(
        !loads.is_empty(),
        "address tracing emitted load rows:\n{text}"
    );
    for l in &loads {
        assert_eq!(l["type"], "point");
        assert_eq!(
            l["extra_payload_count"], 130,
            "wave64 global blocks: EXEC lo/hi + 64 lanes x 2"
        );
    }

    // A record stream shaped by the pass's own R: count decodes as one full-EXEC block.
    let id = loads[0]["id"].as_u64().unwrap();
    let mut csv = format!(
        "time,value,cu,simd,wave_id\n0,{},1,2,3\n1,{},1,2,3\n2,{},1,2,3\n",
        id << 2,
        u32::MAX,
        u32::MAX
    );
    for lane in 0..64u64 {
        let a = 0x7000_0000_0000u64 + 4 * lane;
        csv.push_str(&format!(
            "{},{},1,2,3\n{},{},1,2,3\n",
            3 + 2 * lane,
            a & 0xffff_ffff,
            4 + 2 * lane,
            a >> 32
        ));
    }
    let records = dir.join("records.csv");
    std::fs::write(&records, csv).unwrap();
    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    let op = &doc["operations"][0];
    assert_eq!(op["id"], id);
    assert_eq!(op["lanes_active"]["min"], 64);
    assert_eq!(op["cache_lines"]["total"], 2);
    assert_eq!(op["dominant_stride"]["bytes"], 4);
    assert_eq!(op["coalescing_efficiency"], 1.0);
}
