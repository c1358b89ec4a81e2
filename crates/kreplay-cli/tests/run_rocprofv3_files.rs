//! rocprofv3's CSV and JSON files from a run of the demo: `kernel_trace.csv` (one row per
//! dispatch, the kept pass), `kernel_stats.csv` (`--stats`) and the tool JSON, checked against
//! kreplay's own per-pass CSV of the same run.

mod common;

use common::{demo_app, kreplay};
use serde_json::Value;
use std::collections::BTreeMap;

/// rocprofv3's kernel_trace.csv header.
const TRACE_HEADER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"";
/// rocprofv3's *_stats.csv header.
const STATS_HEADER: &str = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"";

/// Splits a CSV line whose quoted fields hold no commas.
fn fields(line: &str) -> Vec<&str> {
    line.split(',').map(|f| f.trim_matches('"')).collect()
}

#[test]
fn kernel_trace_stats_and_tool_json_of_a_replayed_demo() {
    let dir = test_support::scratch_dir("rocprofv3-files");
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "--passes",
            "3",
            "--stats",
            "-d",
        ])
        .arg(&dir)
        .args(["--output-format", "csv", "json", "--", demo_app()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // kreplay's own CSV: the kept pass of each dispatch is its last.
    let passes = std::fs::read_to_string(dir.join("kreplay_passes.csv")).unwrap();
    let mut lines = passes.lines();
    let header = fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut kept: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for line in lines {
        let f = fields(line);
        let n = |c: &str| f[col(c)].parse::<u64>().unwrap();
        if n("pass") + 1 == n("passes") {
            kept.insert(n("dispatch_id"), (n("start_ns"), n("end_ns")));
        }
    }
    assert_eq!(kept.len(), 10);

    let trace = std::fs::read_to_string(dir.join("kreplay_kernel_trace.csv")).unwrap();
    let mut lines = trace.lines();
    assert_eq!(lines.next().unwrap(), TRACE_HEADER);
    let header = fields(TRACE_HEADER);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(fields).collect();
    assert_eq!(rows.len(), 10, "one row per dispatch");
    let mut summed = 0;
    for r in &rows {
        let n = |c: &str| r[col(c)].parse::<u64>().unwrap();
        assert_eq!(r[col("Kind")], "KERNEL_DISPATCH");
        assert_eq!(r[col("Agent_Id")], "Agent 1");
        assert_eq!(
            (n("Start_Timestamp"), n("End_Timestamp")),
            kept[&n("Dispatch_Id")]
        );
        assert_eq!((n("Grid_Size_X"), n("Workgroup_Size_X")), (4096, 64));
        assert!(n("Thread_Id") > 0 && n("Kernel_Id") >= 1);
        summed += n("End_Timestamp") - n("Start_Timestamp");
    }
    let kept_total: u64 = kept.values().map(|(s, e)| e - s).sum();
    assert_eq!(
        summed, kept_total,
        "kernel_trace durations sum to the kept passes'"
    );

    let stats = std::fs::read_to_string(dir.join("kreplay_kernel_stats.csv")).unwrap();
    let mut lines = stats.lines();
    assert_eq!(lines.next().unwrap(), STATS_HEADER);
    let stat_rows: Vec<Vec<&str>> = lines.map(fields).collect();
    assert_eq!(stat_rows.len(), 4);
    let calls: u64 = stat_rows.iter().map(|r| r[1].parse::<u64>().unwrap()).sum();
    let total: u64 = stat_rows.iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!((calls, total), (10, kept_total));
    let percent: f64 = stat_rows.iter().map(|r| r[4].parse::<f64>().unwrap()).sum();
    assert!((percent - 100.0).abs() < 1e-6, "{percent}");

    // The tool JSON: walking buffer_records.kernel_dispatch finds every dispatch with its
    // geometry, and its kernel through kernel_symbols.
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.join("kreplay_results.json")).unwrap()).unwrap();
    let tool = &doc["rocprofiler-sdk-tool"][0];
    let symbols: BTreeMap<u64, &str> = tool["kernel_symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kernel_id"].as_u64().unwrap(),
                k["formatted_kernel_name"].as_str().unwrap(),
            )
        })
        .collect();
    let records = tool["buffer_records"]["kernel_dispatch"]
        .as_array()
        .unwrap();
    assert_eq!(records.len(), 10);
    let names: BTreeMap<u64, &str> = rows
        .iter()
        .map(|r| {
            (
                r[col("Dispatch_Id")].parse().unwrap(),
                r[col("Kernel_Name")],
            )
        })
        .collect();
    for r in records {
        let info = &r["dispatch_info"];
        let id = info["dispatch_id"].as_u64().unwrap();
        assert_eq!(info["grid_size"]["x"], 4096);
        assert_eq!(info["workgroup_size"]["x"], 64);
        assert_eq!(
            (
                r["start_timestamp"].as_u64().unwrap(),
                r["end_timestamp"].as_u64().unwrap()
            ),
            kept[&id]
        );
        assert_eq!(symbols[&info["kernel_id"].as_u64().unwrap()], names[&id]);
    }
    let agents = tool["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2, "the CPU and the GPU");
    assert!(
        agents
            .iter()
            .any(|a| a["id"]["handle"] == records[0]["dispatch_info"]["agent_id"]["handle"])
    );
    assert!(
        tool["metadata"]["command"][0]
            .as_str()
            .unwrap()
            .ends_with("kreplay-demo-app")
    );
    // kreplay's pass rows sit under their own key.
    assert_eq!(doc["kreplay"]["rows"].as_array().unwrap().len(), 30);
}
