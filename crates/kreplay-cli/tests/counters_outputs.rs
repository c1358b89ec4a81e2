//! Counter outputs from records written with the record format's own writer: SQ_WAVES placed
//! in three groups (rocprofiler-sdk's summed-across-passes case) must read its true value in
//! every output — `counter_collection.csv`, the counters table, the rocpd views, the Perfetto
//! trace, the JSON and the summary — and a counter whose passes disagree shows its spread.

mod readers;

use kreplay_cli::report::{self, Format, counters, pftrace, rocpd, rocprofv3, summary};
use kreplay_records::{
    CounterValue, Dispatch, DispatchRecord, Launch, PassRecord, PmcStatus, parse,
};
use rusqlite::Connection;
use serde_json::Value;

/// The true number of waves of the test dispatch: 4 shader engines of 128 waves.
const WAVES: f64 = 512.0;

fn counter(name: &str, value: f64, instances: Vec<f64>, exactness: &str) -> CounterValue {
    CounterValue {
        name: name.into(),
        value,
        instances,
        exactness: exactness.into(),
        derived: false,
        cross_pass: false,
    }
}

/// Group p's counters: SQ_WAVES in every group, per shader engine; one other exact counter
/// per group; and SQ_BUSY_CYCLES (a model counter) in groups 1 and 2 with different values.
fn group_counters(group: u64, waves: f64) -> Vec<CounterValue> {
    let mut out = vec![counter("SQ_WAVES", waves, vec![waves / 4.0; 4], "exact")];
    match group {
        0 => out.push(counter("SQ_INSTS_VALU", 4096.0, vec![], "exact")),
        1 => {
            out.push(counter("SQ_INSTS_SALU", 2048.0, vec![], "exact"));
            out.push(counter("SQ_BUSY_CYCLES", 100.0, vec![], "model"));
        }
        _ => {
            out.push(counter("GRBM_COUNT", 7000.0, vec![], "model"));
            out.push(counter("SQ_BUSY_CYCLES", 120.0, vec![], "model"));
        }
    }
    out
}

/// A dispatch of `kernel` over three passes, pass p collecting group p.
fn dispatch(id: u64, kernel: &str, t0: u64, waves: f64) -> DispatchRecord {
    DispatchRecord {
        pid: 4242,
        dispatch_id: id,
        kernel: Some(kernel.into()),
        agent: 77,
        agent_name: "gfx90a".into(),
        queue_id: 3,
        window: (t0, t0 + 10_000),
        passes: (0..3)
            .map(|p| PassRecord {
                start_ns: t0 + 1000 + 3000 * p,
                end_ns: t0 + 2000 + 3000 * p,
                restore: (p < 2).then_some((t0 + 2100 + 3000 * p, t0 + 2500 + 3000 * p)),
                group: Some(p),
                counters: group_counters(p, waves),
            })
            .collect(),
        launch: Some(Launch {
            tid: 4243,
            kernel_object: 0x1000,
            grid_size: [32768, 1, 1],
            workgroup_size: [64, 1, 1],
            private_segment_size: 0,
            group_segment_size: 0,
        }),
        pmc: Some(PmcStatus {
            groups: 3,
            collected: vec![0, 1, 2],
            missing: vec![],
            error: None,
        }),
        ..DispatchRecord::default()
    }
}

/// Three dispatches of `vec_add` (the third with twice the waves) read back from their records.
fn dispatches() -> Vec<Dispatch> {
    let text = dispatch(1, "vec_add", 1_000_000, WAVES).lines()
        + &dispatch(2, "vec_add", 2_000_000, WAVES).lines()
        + &dispatch(3, "vec_add", 3_000_000, 2.0 * WAVES).lines();
    let collected = parse([text.as_str()]);
    assert_eq!(collected.malformed_lines, 0);
    assert_eq!(collected.dispatches.len(), 3);
    assert_eq!(collected.dispatches[0].passes[1].group, Some(1));
    collected.dispatches
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
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
        })
        .collect()
}

#[test]
fn counter_collection_csv_has_rocprofv3_columns_then_pass_group_and_exactness() {
    let rows = csv_rows(&rocprofv3::counter_collection(&dispatches()));
    assert_eq!(
        rows[0],
        [
            "Correlation_Id",
            "Dispatch_Id",
            "Agent_Id",
            "Queue_Id",
            "Process_Id",
            "Thread_Id",
            "Grid_Size",
            "Kernel_Id",
            "Kernel_Name",
            "Workgroup_Size",
            "LDS_Block_Size",
            "Scratch_Size",
            "VGPR_Count",
            "Accum_VGPR_Count",
            "SGPR_Count",
            "Counter_Name",
            "Counter_Value",
            "Start_Timestamp",
            "End_Timestamp",
            "Replay_Pass",
            "Counter_Group",
            "Exactness"
        ]
    );
    // 3 dispatches x (2 + 3 + 3) counters.
    assert_eq!(rows.len(), 1 + 3 * 8);
    let waves: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[1] == "1" && r[15] == "SQ_WAVES")
        .collect();
    assert_eq!(waves.len(), 3, "one row per pass");
    for (p, row) in waves.iter().enumerate() {
        assert_eq!(row[16], "512.000000", "pass {p} reads the true value");
        assert_eq!(row[19], p.to_string());
        assert_eq!(row[20], p.to_string());
        assert_eq!(row[21], "exact");
        assert_eq!(row[2], "Agent 1");
        assert_eq!(row[6], "32768");
        assert_eq!(row[9], "64");
        let start = 1_000_000 + 1000 + 3000 * p as u64;
        assert_eq!(row[17], start.to_string(), "the pass's own times");
        assert_eq!(row[18], (start + 1000).to_string());
    }
}

#[test]
fn the_counters_table_takes_each_value_from_one_pass_and_shows_spreads() {
    let text = counters::table(&dispatches());
    let rows = csv_rows(&text);
    let header = &rows[0];
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{name} not in {header:?}"))
    };
    assert_eq!(rows.len(), 1 + 3, "one row per dispatch");
    assert!(
        !header.iter().any(|h| h == "SQ_WAVES_spread"),
        "the passes agree on SQ_WAVES: {header:?}"
    );
    assert_eq!(rows[1][col("SQ_WAVES")], "512", "not 3 x 512");
    assert_eq!(rows[3][col("SQ_WAVES")], "1024");
    assert_eq!(rows[1][col("SQ_INSTS_VALU")], "4096");
    assert_eq!(rows[1][col("GRBM_COUNT")], "7000");
    assert_eq!(
        rows[1][col("SQ_BUSY_CYCLES")],
        "100",
        "the first pass's value"
    );
    assert_eq!(rows[1][col("SQ_BUSY_CYCLES_spread")], "20");
    assert_eq!(rows[1][col("groups")], "3");
    assert_eq!(rows[1][col("groups_collected")], "0 1 2");
    assert_eq!(rows[1][col("groups_missing")], "");
    let d = &dispatches()[0];
    let resolved = counters::per_dispatch(d);
    let waves = resolved.iter().find(|c| c.name == "SQ_WAVES").unwrap();
    assert_eq!(
        (waves.value, waves.pass, waves.samples.len(), waves.spread),
        (WAVES, 0, 3, 0.0)
    );
}

fn rocpd_db(dispatches: &[Dispatch]) -> (std::path::PathBuf, Connection) {
    let dir = test_support::scratch_dir("counters-rocpd");
    let path = dir.join("k_results.db");
    rocpd::write(
        &path,
        dispatches,
        rocpd::RunInfo {
            launcher_pid: 1,
            app: Some((4242, "app".into())),
            passes: 3,
            stats: false,
        },
    )
    .unwrap();
    let conn = Connection::open(&path).unwrap();
    (path, conn)
}

#[test]
fn rocpd_counts_each_pass_once_in_counters_collection_and_kreplay_counters() {
    let (path, conn) = rocpd_db(&dispatches());
    let per_pass: Vec<(i64, f64, i64)> = conn
        .prepare(
            "SELECT dispatch_id, value, replay_pass FROM counters_collection \
             WHERE counter_name = 'SQ_WAVES' ORDER BY dispatch_id, replay_pass",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        per_pass,
        vec![
            (1, WAVES, 0),
            (1, WAVES, 1),
            (1, WAVES, 2),
            (2, WAVES, 0),
            (2, WAVES, 1),
            (2, WAVES, 2),
            (3, 2.0 * WAVES, 0),
            (3, 2.0 * WAVES, 1),
            (3, 2.0 * WAVES, 2)
        ],
        "one row per pass, each the sum of its instances only"
    );
    let one: Vec<(i64, f64, i64, i64, f64)> = conn
        .prepare(
            "SELECT dispatch_id, value, replay_pass, passes, spread FROM kreplay_counters \
             WHERE counter_name = 'SQ_WAVES' ORDER BY dispatch_id",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        one,
        vec![
            (1, WAVES, 0, 3, 0.0),
            (2, WAVES, 0, 3, 0.0),
            (3, 2.0 * WAVES, 0, 3, 0.0)
        ]
    );
    let busy: (f64, i64, f64, String) = conn
        .query_row(
            "SELECT value, replay_pass, spread, exactness FROM kreplay_counters \
             WHERE counter_name = 'SQ_BUSY_CYCLES' AND dispatch_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(busy, (100.0, 1, 20.0, "model".into()));
    let rows = |table: &str| -> i64 {
        conn.query_row(
            &format!("SELECT COUNT(*) FROM {table} E JOIN rocpd_info_pmc I ON I.id = E.pmc_id WHERE I.name = 'SQ_WAVES'"),
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(
        rows("rocpd_pmc_event"),
        3 * 4,
        "rocpd's table: each dispatch's first pass, one row per instance"
    );
    assert_eq!(
        rows("rocpd_kreplay_pmc_event"),
        3 * 2 * 4,
        "the later passes' rows"
    );
    // A reader whose counters_collection sums a dispatch's rows (rocpd before per-pass
    // grouping) reads the true value from rocpd's table.
    let summed: Vec<f64> = conn
        .prepare(
            "SELECT SUM(PE.value) FROM rocpd_pmc_event PE JOIN rocpd_info_pmc I ON I.id = PE.pmc_id \
             JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id \
             WHERE I.name = 'SQ_WAVES' GROUP BY K.dispatch_id ORDER BY K.dispatch_id",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(summed, [WAVES, WAVES, 2.0 * WAVES]);
    let info: (Option<i64>, String, String, String, i64) = conn
        .query_row(
            "SELECT event_code, block, component, value_type, is_derived FROM rocpd_info_pmc WHERE name = 'SQ_WAVES'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(info, (Some(4), "SQ".into(), "rocm".into(), "ABS".into(), 0));
    // One dispatch row and event per pass; kreplay's per-dispatch view keeps one row each.
    let dispatch_rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM rocpd_kernel_dispatch", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(dispatch_rows, 9);
    let kernels: Vec<(i64, i64)> = conn
        .prepare("SELECT dispatch_id, passes FROM kreplay_kernels ORDER BY dispatch_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kernels, vec![(1, 3), (2, 3), (3, 3)]);
    let kept_end: i64 = conn
        .query_row(
            "SELECT end FROM kreplay_kernels WHERE dispatch_id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept_end, 1_000_000 + 2000 + 3000 * 2, "the kept pass");
    // Python's sqlite3 reads the file whole and consistent.
    let dump = readers::rocpd(&path);
    assert_eq!(dump["integrity"], "ok");
    assert_eq!(dump["foreign_key_violations"], 0);
}

#[test]
fn perfetto_counter_tracks_step_to_each_pass_value() {
    let ds = dispatches();
    let dir = test_support::scratch_dir("counters-pftrace");
    let path = dir.join("k_results.pftrace");
    std::fs::write(&path, pftrace::trace(&ds, "app")).unwrap();
    let dump = readers::pftrace(&path);
    assert_eq!(
        dump["errors"].as_array().unwrap().len(),
        0,
        "{}",
        dump["errors"]
    );
    let track = dump["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "PMC SQ_WAVES")
        .expect("a PMC SQ_WAVES counter track");
    assert_eq!(track["counter"], true);
    let values: Vec<(u64, f64)> = dump["counters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["track"] == track["uuid"])
        .map(|c| (c["ts"].as_u64().unwrap(), c["value"].as_f64().unwrap()))
        .collect();
    assert_eq!(values.len(), 3 * 3 * 2, "up and down over every pass");
    let highs: Vec<f64> = values.iter().map(|v| v.1).filter(|v| *v > 0.0).collect();
    assert_eq!(
        highs,
        [
            WAVES,
            WAVES,
            WAVES,
            WAVES,
            WAVES,
            WAVES,
            2.0 * WAVES,
            2.0 * WAVES,
            2.0 * WAVES
        ]
    );
    assert_eq!(values[0], (ds[0].passes[0].start_ns, WAVES));
    assert_eq!(values[1], (ds[0].passes[0].end_ns, 0.0));
    let pass1 = dump["slices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "pass 1" && s["args"]["dispatch_id"] == 1)
        .unwrap();
    assert_eq!(pass1["args"]["SQ_WAVES"], WAVES);
    assert_eq!(pass1["args"]["counter_group"], 1);
    assert_eq!(pass1["args"]["SQ_BUSY_CYCLES"], 100.0);
    let kernel = dump["slices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "vec_add")
        .unwrap();
    assert_eq!(
        kernel["args"]["SQ_WAVES"], WAVES,
        "the kernel slice: not a sum"
    );
}

#[test]
fn json_rows_and_rocprofv3_records_carry_each_pass_and_the_summary_its_medians() {
    let ds = dispatches();
    let doc: Value = serde_json::from_str(&report::json_document(&ds, None)).unwrap();
    let rows = doc["kreplay"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9);
    for (p, row) in rows[..3].iter().enumerate() {
        assert_eq!(row["replay_pass"], p);
        assert_eq!(row["counter_group"], p);
        assert_eq!(row["counters"]["SQ_WAVES"], 512);
        assert_eq!(row["dispatch_counters"]["SQ_WAVES"]["value"], 512);
        assert_eq!(row["dispatch_counters"]["SQ_BUSY_CYCLES"]["spread"], 20);
    }
    let tool = &doc["rocprofiler-sdk-tool"][0];
    let records = tool["callback_records"]["counter_collection"]
        .as_array()
        .unwrap();
    assert_eq!(records.len(), 9, "one record per pass");
    assert_eq!(records[1]["replay_pass"], 1);
    let waves_id = tool["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "SQ_WAVES")
        .unwrap()["id"]["handle"]
        .clone();
    let waves: Vec<f64> = records[..3]
        .iter()
        .flat_map(|r| r["records"].as_array().unwrap())
        .filter(|v| v["counter_id"]["handle"] == waves_id)
        .map(|v| v["value"].as_f64().unwrap())
        .collect();
    assert_eq!(waves, [WAVES, WAVES, WAVES]);
    let kernels = summary::per_kernel(&ds);
    let medians: std::collections::HashMap<String, f64> =
        kernels[0].counters.iter().cloned().collect();
    assert_eq!(medians["SQ_WAVES"], WAVES, "median of 512, 512, 1024");
    assert_eq!(medians["SQ_BUSY_CYCLES"], 100.0);
    let table = summary::table(&kernels);
    assert!(table.contains("vec_add: SQ_WAVES 512,"), "{table}");
    assert_eq!(kernels[0].to_json()["counter_medians"]["SQ_WAVES"], 512);
}

#[test]
fn chrome_pass_slices_carry_their_own_values() {
    let doc: Value =
        serde_json::from_str(&kreplay_cli::report::chrome::trace(&dispatches(), "app")).unwrap();
    let passes: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "pass" && e["args"]["dispatch_id"] == 1)
        .collect();
    assert_eq!(passes.len(), 3);
    for (p, e) in passes.iter().enumerate() {
        assert_eq!(e["args"]["counter_group"], p);
        assert_eq!(e["args"]["counters"]["SQ_WAVES"], 512);
    }
}

#[test]
fn a_declined_dispatch_names_its_missing_groups() {
    let mut declined = dispatch(4, "vec_add", 4_000_000, WAVES);
    declined.passes.truncate(1);
    declined.skipped = Some("declined: host memory".into());
    declined.pmc = Some(PmcStatus {
        groups: 3,
        collected: vec![0],
        missing: vec![1, 2],
        error: None,
    });
    let text = dispatch(1, "vec_add", 1_000_000, WAVES).lines() + &declined.lines();
    let ds = parse([text.as_str()]).dispatches;
    let rows = csv_rows(&counters::table(&ds));
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    assert_eq!(rows[2][col("groups_collected")], "0");
    assert_eq!(rows[2][col("groups_missing")], "1 2");
    assert_eq!(rows[2][col("SQ_WAVES")], "512");
    assert_eq!(rows[2][col("GRBM_COUNT")], "", "group 2 was not collected");
    assert_eq!(rows[2][col("counters_error")], "");
    let doc: Value = serde_json::from_str(&report::json_document(&ds, None)).unwrap();
    let last = doc["kreplay"]["rows"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["pmc"]["missing"], serde_json::json!([1, 2]));
    let (_, conn) = rocpd_db(&ds);
    let status: (i64, String, String, Option<String>) = conn
        .query_row(
            "SELECT pmc_groups, pmc_collected, pmc_missing, pmc_error FROM kreplay_kernels WHERE dispatch_id = 4",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(status, (3, "0".into(), "1 2".into(), None));
    let table = summary::table(&summary::per_kernel(&ds));
    assert!(
        table.contains(
            "warning: 1 dispatch(es) of vec_add lack counter groups (groups 1 2 not collected)"
        ),
        "{table}"
    );
}

#[test]
fn csv_output_writes_both_counter_files_only_with_counters() {
    let dir = test_support::scratch_dir("counters-csv");
    let run = rocpd::RunInfo::default();
    let files =
        report::write_outputs(&dir, "k", &[Format::Csv], &dispatches(), "app", &run).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.contains(&"k_counter_collection.csv".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"k_counters.csv".to_owned()), "{names:?}");
    let plain = DispatchRecord {
        passes: vec![PassRecord {
            start_ns: 10,
            end_ns: 20,
            ..PassRecord::default()
        }],
        ..dispatch(9, "plain", 0, 0.0)
    };
    let plain = DispatchRecord { pmc: None, ..plain };
    let ds = parse([plain.lines().as_str()]).dispatches;
    let files = report::write_outputs(&dir, "p", &[Format::Csv], &ds, "app", &run).unwrap();
    assert!(
        files
            .iter()
            .all(|f| !f.file_name().unwrap().to_string_lossy().contains("counter")),
        "{files:?}"
    );
}
