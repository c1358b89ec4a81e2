//! The rocpd database against rocprofv3's layout (docs/formats.md): table names and columns,
//! metadata rows, views, agents, and two files merged the way the rocpd importer merges them.

use kreplay_cli::report::rocpd::{self, Database, RunInfo};
use kreplay_cli::run_records::{self, Dispatch};
use kreplay_records::{DispatchRecord, Launch, PassRecord, SnapshotStats};
use rusqlite::Connection;
use std::path::Path;

/// rocprofv3's rocpd tables (schema 3) and their columns, in order.
const EXPECTED: [(&str, &str); 20] = [
    ("rocpd_metadata", "id tag value"),
    ("rocpd_string", "id guid string"),
    (
        "rocpd_info_node",
        "id guid hash machine_id system_name hostname release version hardware_name domain_name",
    ),
    (
        "rocpd_info_process",
        "id guid nid ppid pid init fini start end command environment extdata",
    ),
    (
        "rocpd_info_thread",
        "id guid nid ppid pid tid name start end extdata",
    ),
    (
        "rocpd_info_agent",
        "id guid nid pid type absolute_index logical_index type_index uuid name model_name vendor_name product_name user_name extdata",
    ),
    ("rocpd_info_queue", "id guid nid pid name extdata"),
    ("rocpd_info_stream", "id guid nid pid name extdata"),
    (
        "rocpd_info_pmc",
        "id guid nid pid agent_id target_arch event_code instance_id name symbol description long_description component units value_type block expression is_constant is_derived extdata",
    ),
    (
        "rocpd_info_code_object",
        "id guid nid pid agent_id uri load_base load_size load_delta storage_type extdata",
    ),
    (
        "rocpd_info_kernel_symbol",
        "id guid nid pid code_object_id kernel_name display_name kernel_object kernarg_segment_size kernarg_segment_alignment group_segment_size private_segment_size sgpr_count arch_vgpr_count accum_vgpr_count extdata",
    ),
    ("rocpd_track", "id guid nid pid tid name_id extdata"),
    (
        "rocpd_event",
        "id guid category_id stack_id parent_stack_id correlation_id call_stack line_info extdata",
    ),
    (
        "rocpd_arg",
        "id guid event_id position type name value extdata",
    ),
    ("rocpd_pmc_event", "id guid event_id pmc_id value extdata"),
    (
        "rocpd_region",
        "id guid nid pid tid start end name_id event_id extdata",
    ),
    (
        "rocpd_sample",
        "id guid track_id timestamp event_id extdata",
    ),
    (
        "rocpd_kernel_dispatch",
        "id guid nid pid tid agent_id kernel_id dispatch_id queue_id stream_id start end private_segment_size group_segment_size workgroup_size_x workgroup_size_y workgroup_size_z grid_size_x grid_size_y grid_size_z region_name_id event_id extdata",
    ),
    (
        "rocpd_memory_copy",
        "id guid nid pid tid start end name_id dst_agent_id dst_address src_agent_id src_address size queue_id stream_id region_name_id event_id extdata",
    ),
    (
        "rocpd_memory_allocate",
        "id guid nid pid tid agent_id type level start end address size queue_id stream_id event_id extdata",
    ),
];

/// rocprofv3's views besides the 20 `rocpd_*` ones.
const VIEWS: [&str; 21] = [
    "code_objects",
    "kernel_symbols",
    "processes",
    "threads",
    "regions",
    "region_args",
    "samples",
    "sample_regions",
    "regions_and_samples",
    "kernels",
    "pmc_info",
    "pmc_events",
    "events_args",
    "stream_args",
    "memory_copies",
    "memory_allocations",
    "scratch_memory",
    "counters_collection",
    "top_kernels",
    "busy",
    "top",
];

/// `count` dispatches of process `pid` with 3 passes each: kernel `k{id % 2}`, the kept pass
/// `100 + id` ns long.
fn dispatches(pid: u64, count: u64, t0: u64) -> Vec<Dispatch> {
    let mut text = String::new();
    for id in 1..=count {
        let t = t0 + id * 10_000;
        let kernel = format!("_Z2k{}Pi", id % 2);
        text += &DispatchRecord {
            pid,
            dispatch_id: id,
            kernel: Some(kernel),
            agent: 0x55,
            agent_name: "gfx942".into(),
            queue_id: 3,
            window: (t, t + 5000),
            passes: (0..3)
                .map(|p| PassRecord {
                    start_ns: t + 1000 * (p + 1),
                    end_ns: t + 1000 * (p + 1) + if p == 2 { 100 + id } else { 90 },
                    restore: (p < 2)
                        .then_some((t + 1000 * (p + 1) + 200, t + 1000 * (p + 1) + 300)),
                    ..PassRecord::default()
                })
                .collect(),
            snapshot: Some(SnapshotStats {
                regions: 1,
                bytes: 64,
                start_ns: t + 10,
                end_ns: t + 20,
                store: "host".into(),
            }),
            launch: Some(Launch {
                tid: pid + 1,
                kernel_object: 0x9000 + id % 2,
                grid_size: [256 * id, 1, 1],
                workgroup_size: [64, 1, 1],
                private_segment_size: 0,
                group_segment_size: 128,
            }),
            ..DispatchRecord::default()
        }
        .lines();
    }
    run_records::parse([text.as_str()]).dispatches
}

fn write_db(path: &Path, pid: u64, count: u64) -> Vec<Dispatch> {
    let d = dispatches(pid, count, 1_000_000);
    let mut db = Database::create(
        path,
        RunInfo {
            launcher_pid: 1,
            app: Some((pid as u32, format!("app-{pid} --flag"))),
            passes: 3,
            stats: false,
        },
    )
    .unwrap();
    db.add(&d).unwrap();
    d
}

fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut s = conn.prepare(sql).unwrap();
    s.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn metadata(conn: &Connection, tag: &str) -> String {
    conn.query_row(
        "SELECT value FROM rocpd_metadata WHERE tag = ?1",
        [tag],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn tables_columns_metadata_and_views_are_rocprofv3s() {
    let dir = test_support::scratch_dir("rocpd-layout-1");
    let path = dir.join("a.db");
    write_db(&path, 40, 4);
    let conn = Connection::open(&path).unwrap();
    let uuid = metadata(&conn, "uuid");
    let guid = metadata(&conn, "guid");
    assert_eq!(metadata(&conn, "schema_version"), "3");
    assert_eq!(uuid, format!("_{}", guid.replace('-', "_")));
    // A UUIDv7: version nibble 7, variant 10xx, the first 48 bits a Unix time in ms near now.
    let hex: String = guid.chars().filter(|c| *c != '-').collect();
    assert_eq!(hex.len(), 32, "{guid}");
    assert_eq!(&hex[12..13], "7", "{guid}");
    assert!("89ab".contains(&hex[16..17]), "{guid}");
    let ms = u64::from_str_radix(&hex[..12], 16).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(ms <= now && now - ms < 3_600_000, "{guid}");
    for (table, columns) in EXPECTED {
        let names = strings(
            &conn,
            &format!("SELECT name FROM pragma_table_info('{table}{uuid}') ORDER BY cid"),
        );
        assert_eq!(names.join(" "), columns, "{table}{uuid}");
        let view = strings(
            &conn,
            &format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid"),
        );
        assert_eq!(view.join(" "), columns, "view {table}");
    }
    let tables = strings(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd%' ORDER BY name",
    );
    assert!(tables.iter().all(|t| t.ends_with(&uuid)), "{tables:?}");
    // Every guid column defaults to the run's guid and holds it.
    let dispatch_guids = strings(&conn, "SELECT DISTINCT guid FROM rocpd_kernel_dispatch");
    assert_eq!(dispatch_guids, std::slice::from_ref(&guid));
    for view in VIEWS
        .iter()
        .chain(["kreplay_kernels", "kreplay_passes"].iter())
    {
        conn.prepare(&format!("SELECT * FROM {view}"))
            .and_then(|mut s| s.query([]).map(|_| ()))
            .unwrap_or_else(|e| panic!("view {view}: {e}"));
    }
    let strings_held = strings(&conn, "SELECT string FROM rocpd_string ORDER BY id");
    assert!(
        strings_held.contains(&String::new())
            && strings_held.contains(&"KERNEL_DISPATCH".to_owned())
    );
}

#[test]
fn kernels_top_kernels_and_busy_give_the_kept_passes() {
    let dir = test_support::scratch_dir("rocpd-layout-2");
    let path = dir.join("a.db");
    let d = write_db(&path, 40, 4);
    let conn = Connection::open(&path).unwrap();
    let mut s = conn
        .prepare("SELECT name, duration, category, region, agent_type, agent_abs_index, grid_x, lds_size, stream, tid FROM kernels ORDER BY dispatch_id")
        .unwrap();
    type Row = (
        String,
        i64,
        String,
        String,
        String,
        i64,
        i64,
        i64,
        String,
        i64,
    );
    let rows: Vec<Row> = s
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 4);
    for (row, (id, disp)) in rows.iter().zip((1i64..).zip(&d)) {
        let kept = disp.passes.last().unwrap();
        assert_eq!(row.0, format!("k{}(int*)", id % 2));
        assert_eq!(row.1, (kept.end_ns - kept.start_ns) as i64);
        assert_eq!(row.1, 100 + id);
        assert_eq!(
            (row.2.as_str(), row.3.as_str(), row.4.as_str()),
            ("KERNEL_DISPATCH", "", "GPU")
        );
        assert_eq!(row.5, 1, "GPU 0 after the CPU agent");
        assert_eq!((row.6, row.7), (256 * id, 128));
        assert_eq!(row.8, "Default Stream");
        assert_eq!(row.9, 41);
    }
    let top: Vec<(String, i64, f64)> = conn
        .prepare("SELECT name, total_calls, total_duration FROM top_kernels")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // k0: dispatches 2 and 4 (102 + 104 ns); k1: 1 and 3 (101 + 103 ns); microseconds.
    assert_eq!(
        top,
        [
            ("k0(int*)".to_owned(), 2, 0.206),
            ("k1(int*)".to_owned(), 2, 0.204)
        ]
    );
    let (gpu, wall, kind): (i64, i64, String) = conn
        .query_row("SELECT GpuTime, WallTime, type FROM busy", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    let first = d[0].passes.last().unwrap().start_ns;
    let last = d[3].passes.last().unwrap().end_ns;
    assert_eq!(
        (gpu, wall, kind.as_str()),
        (410, (last - first) as i64, "GPU")
    );
    // kreplay's own rows: every pass, the kept one marked.
    let passes: Vec<(i64, i64, i64)> = conn
        .prepare("SELECT dispatch_id, replay_pass, kept FROM kreplay_passes ORDER BY dispatch_id, replay_pass")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(passes.len(), 12);
    assert_eq!(passes[2], (1, 2, 1));
    assert_eq!(passes.iter().filter(|p| p.2 == 1).count(), 4);
}

#[test]
fn agents_are_complete_cpu_and_gpu() {
    let dir = test_support::scratch_dir("rocpd-layout-3");
    let path = dir.join("a.db");
    write_db(&path, 40, 1);
    let conn = Connection::open(&path).unwrap();
    let rows: Vec<(String, i64, i64, i64, String, String)> = conn
        .prepare("SELECT type, absolute_index, logical_index, type_index, user_name, extdata FROM rocpd_info_agent ORDER BY absolute_index")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].0.as_str(), rows[0].1, rows[0].3), ("CPU", 0, 0));
    assert_eq!(
        (rows[1].0.as_str(), rows[1].1, rows[1].2, rows[1].3),
        ("GPU", 1, 1, 0)
    );
    assert_eq!(rows[1].4, "gfx942");
    // The members of rocprofiler_agent_v0_t the converters load.
    let members = "size id type cpu_cores_count simd_count mem_banks_count caches_count io_links_count cpu_core_id_base \
        simd_id_base max_waves_per_simd lds_size_in_kb gds_size_in_kb num_gws wave_front_size num_xcc cu_count array_count \
        num_shader_banks simd_arrays_per_engine cu_per_simd_array simd_per_cu max_slots_scratch_cu gfx_target_version \
        vendor_id device_id location_id domain drm_render_minor num_sdma_engines num_sdma_xgmi_engines \
        num_sdma_queues_per_engine num_cp_queues max_engine_clk_ccompute max_engine_clk_fcompute sdma_fw_version \
        fw_version capability cu_per_engine max_waves_per_cu family_id workgroup_max_size grid_max_size local_mem_size \
        hive_id gpu_id workgroup_max_dim grid_max_dim name vendor_name product_name model_name node_id logical_node_id \
        logical_node_type_id mem_banks caches io_links";
    for row in &rows {
        let v: serde_json::Value = serde_json::from_str(&row.5).unwrap();
        for m in members.split_whitespace() {
            assert!(v.get(m).is_some(), "{} agent extdata lacks {m}", row.0);
        }
        assert_eq!(v["node_id"], row.1);
        assert_eq!(v["type"], if row.0 == "CPU" { 1 } else { 2 });
    }
    let co: i64 = conn
        .query_row("SELECT COUNT(*) FROM code_objects", [], |r| r.get(0))
        .unwrap();
    assert_eq!(co, 1, "the kernels' code object joins its agent");
    let symbols: i64 = conn
        .query_row("SELECT COUNT(*) FROM kernel_symbols WHERE kernel_id IS NOT NULL AND truncated_kernel_name = 'k1'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(symbols, 1);
}

/// Opens `files` the way the rocpd importer does: each ATTACHed, the tables named `rocpd_%`
/// holding a file's uuid unioned into a temporary view of the unsuffixed name, then the data
/// views created over those.
fn importer_connection(files: &[&Path]) -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    let mut uuids = Vec::new();
    for (i, f) in files.iter().enumerate() {
        conn.execute(&format!("ATTACH DATABASE '{}' AS db{i}", f.display()), [])
            .unwrap();
        uuids.extend(strings(
            &conn,
            &format!("SELECT value FROM db{i}.rocpd_metadata WHERE tag = 'uuid'"),
        ));
    }
    let mut unions: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for i in 0..files.len() {
        for table in strings(
            &conn,
            &format!(
                "SELECT name FROM db{i}.sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_%'"
            ),
        ) {
            for u in &uuids {
                if table.contains(u.as_str()) {
                    let base = table.replace(u.as_str(), "");
                    let select = format!("SELECT * FROM db{i}.{base}");
                    let list = unions.entry(base).or_default();
                    if !list.contains(&select) {
                        list.push(select);
                    }
                }
            }
        }
    }
    for (base, selects) in &unions {
        conn.execute_batch(&format!(
            "CREATE TEMPORARY VIEW {base} AS {}",
            selects.join(" UNION ALL ")
        ))
        .unwrap();
    }
    for (name, select) in kreplay_cli::report::rocpd_schema::data_views()
        .into_iter()
        .chain(kreplay_cli::report::rocpd_schema::kreplay_views())
    {
        conn.execute_batch(&format!("CREATE TEMPORARY VIEW {name} AS {select}"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    conn
}

#[test]
fn two_files_merged_as_the_importer_does_keep_both_runs() {
    let dir = test_support::scratch_dir("rocpd-layout-4");
    let a = dir.join("a.db");
    let b = dir.join("b.db");
    write_db(&a, 40, 4);
    write_db(&b, 50, 3);
    let conn = importer_connection(&[&a, &b]);
    let per_pid: Vec<(i64, i64)> = conn
        .prepare("SELECT pid, COUNT(*) FROM kernels GROUP BY pid ORDER BY pid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(per_pid, [(40, 4), (50, 3)]);
    let passes: Vec<(i64, i64)> = conn
        .prepare("SELECT pid, COUNT(*) FROM kreplay_passes GROUP BY pid ORDER BY pid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        passes,
        [(40, 12), (50, 9)],
        "per-pass rows of both files, each joined to its own dispatches"
    );
    let agents: Vec<String> = strings(
        &conn,
        "SELECT vendor_name || '/' || user_name FROM rocpd_info_agent WHERE type = 'GPU'",
    );
    assert_eq!(
        agents,
        ["AMD/gfx942", "AMD/gfx942"],
        "columns line up across files"
    );
    let calls: i64 = conn
        .query_row("SELECT SUM(total_calls) FROM top_kernels", [], |r| r.get(0))
        .unwrap();
    assert_eq!(calls, 7);
}

#[test]
fn times_are_boottime() {
    let dir = test_support::scratch_dir("rocpd-layout-5");
    let path = dir.join("a.db");
    let now = kreplay_records::now_boottime_ns();
    // Records of an older tool (no clock field) are CLOCK_MONOTONIC: they are moved.
    let text = DispatchRecord {
        pid: 9,
        dispatch_id: 1,
        window: (now - 5000, now - 1000),
        passes: vec![PassRecord {
            start_ns: now - 4000,
            end_ns: now - 3000,
            restore: None,
            ..PassRecord::default()
        }],
        ..DispatchRecord::default()
    }
    .lines()
    .replace(",\"clock\":\"boottime\"", "");
    let d = run_records::parse([text.as_str()]).dispatches;
    rocpd::write(&path, &d, RunInfo::default()).unwrap();
    let conn = Connection::open(&path).unwrap();
    assert_eq!(metadata(&conn, "clock"), "CLOCK_BOOTTIME");
    let start: i64 = conn
        .query_row("SELECT start FROM rocpd_kernel_dispatch", [], |r| r.get(0))
        .unwrap();
    // The database holds the moved time: the written monotonic start plus the clocks' offset
    // (measured here again; it changes only across a suspend).
    let offset = kreplay_records::boottime_minus_monotonic_ns() as i64;
    assert_eq!(start, d[0].passes[0].start_ns as i64);
    let moved_by = start - (now as i64 - 4000);
    assert!(
        moved_by >= 0 && (moved_by - offset).abs() < 1_000_000,
        "moved by {moved_by}, offset {offset}"
    );
}
