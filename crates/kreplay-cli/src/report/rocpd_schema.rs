//! The rocpd schema (version 3) as rocprofv3 lays it out in a file, written here from its
//! documented table and column lists: every table is `<name>_<uuid>`, every `guid` column
//! defaults to the run's guid, and unsuffixed views (`rocpd_<name>` over each table, then the
//! data and summary views) are created inside the file. The rocpd tools ATTACH such files and
//! union the suffixed tables of several files; `docs/formats.md` describes the layout.
//!
//! kreplay's own data lives in `rocpd_kreplay_pass_<uuid>` and `rocpd_kreplay_dispatch_<uuid>`:
//! named like rocpd tables, they are unioned by the rocpd importer across files as well, and
//! every row carries the guid of its file.

/// rocpd schema version written to `rocpd_metadata` (`schema_version`).
pub const ROCPD_SCHEMA_VERSION: u32 = 3;

/// Version of kreplay's own tables (`kreplay_schema_version` in `rocpd_metadata`).
pub const KREPLAY_SCHEMA_VERSION: u32 = 3;

/// A table: its base name and its columns in order, each `(name, declaration)`. In a
/// declaration `{guid}` stands for the guid default and `{u}` for the uuid suffix.
pub type Table = (&'static str, &'static [(&'static str, &'static str)]);

const ID: (&str, &str) = ("id", "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT");
const GUID: (&str, &str) = ("guid", "TEXT DEFAULT '{guid}' NOT NULL");
const NID: (&str, &str) = (
    "nid",
    "INTEGER NOT NULL REFERENCES `rocpd_info_node{u}` (id)",
);
const PID: (&str, &str) = (
    "pid",
    "INTEGER NOT NULL REFERENCES `rocpd_info_process{u}` (id)",
);
const EXTDATA: (&str, &str) = ("extdata", "JSONB DEFAULT '{}' NOT NULL");

/// The 20 rocpd tables, in the order rocprofv3 creates them.
pub const ROCPD_TABLES: [Table; 20] = [
    (
        "rocpd_metadata",
        &[ID, ("tag", "TEXT NOT NULL"), ("value", "TEXT NOT NULL")],
    ),
    (
        "rocpd_string",
        &[ID, GUID, ("string", "TEXT NOT NULL UNIQUE")],
    ),
    (
        "rocpd_info_node",
        &[
            ID,
            GUID,
            ("hash", "BIGINT NOT NULL UNIQUE"),
            ("machine_id", "TEXT NOT NULL UNIQUE"),
            ("system_name", "TEXT"),
            ("hostname", "TEXT"),
            ("release", "TEXT"),
            ("version", "TEXT"),
            ("hardware_name", "TEXT"),
            ("domain_name", "TEXT"),
        ],
    ),
    (
        "rocpd_info_process",
        &[
            ID,
            GUID,
            NID,
            ("ppid", "INTEGER"),
            ("pid", "INTEGER NOT NULL"),
            ("init", "BIGINT"),
            ("fini", "BIGINT"),
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("command", "TEXT"),
            ("environment", "JSONB DEFAULT '{}' NOT NULL"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_info_thread",
        &[
            ID,
            GUID,
            NID,
            ("ppid", "INTEGER"),
            PID,
            ("tid", "INTEGER NOT NULL"),
            ("name", "TEXT"),
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_info_agent",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("type", "TEXT CHECK (\"type\" IN ('CPU', 'GPU'))"),
            ("absolute_index", "INTEGER"),
            ("logical_index", "INTEGER"),
            ("type_index", "INTEGER"),
            ("uuid", "INTEGER"),
            ("name", "TEXT"),
            ("model_name", "TEXT"),
            ("vendor_name", "TEXT"),
            ("product_name", "TEXT"),
            ("user_name", "TEXT"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_info_queue",
        &[ID, GUID, NID, PID, ("name", "TEXT"), EXTDATA],
    ),
    (
        "rocpd_info_stream",
        &[ID, GUID, NID, PID, ("name", "TEXT"), EXTDATA],
    ),
    (
        "rocpd_info_pmc",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("agent_id", "INTEGER REFERENCES `rocpd_info_agent{u}` (id)"),
            (
                "target_arch",
                "TEXT CHECK (\"target_arch\" IN ('CPU', 'GPU'))",
            ),
            ("event_code", "INT"),
            ("instance_id", "INTEGER"),
            ("name", "TEXT NOT NULL"),
            ("symbol", "TEXT NOT NULL"),
            ("description", "TEXT"),
            ("long_description", "TEXT DEFAULT ''"),
            ("component", "TEXT"),
            ("units", "TEXT DEFAULT ''"),
            (
                "value_type",
                "TEXT CHECK (\"value_type\" IN ('ABS', 'ACCUM', 'RELATIVE'))",
            ),
            ("block", "TEXT"),
            ("expression", "TEXT"),
            ("is_constant", "INTEGER"),
            ("is_derived", "INTEGER"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_info_code_object",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("agent_id", "INTEGER REFERENCES `rocpd_info_agent{u}` (id)"),
            ("uri", "TEXT"),
            ("load_base", "BIGINT"),
            ("load_size", "BIGINT"),
            ("load_delta", "BIGINT"),
            (
                "storage_type",
                "TEXT CHECK (\"storage_type\" IN ('FILE', 'MEMORY'))",
            ),
            EXTDATA,
        ],
    ),
    (
        "rocpd_info_kernel_symbol",
        &[
            ID,
            GUID,
            NID,
            PID,
            (
                "code_object_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_code_object{u}` (id)",
            ),
            ("kernel_name", "TEXT"),
            ("display_name", "TEXT"),
            ("kernel_object", "INTEGER"),
            ("kernarg_segment_size", "INTEGER"),
            ("kernarg_segment_alignment", "INTEGER"),
            ("group_segment_size", "INTEGER"),
            ("private_segment_size", "INTEGER"),
            ("sgpr_count", "INTEGER"),
            ("arch_vgpr_count", "INTEGER"),
            ("accum_vgpr_count", "INTEGER"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_track",
        &[
            ID,
            GUID,
            NID,
            ("pid", "INTEGER REFERENCES `rocpd_info_process{u}` (id)"),
            ("tid", "INTEGER REFERENCES `rocpd_info_thread{u}` (id)"),
            ("name_id", "INTEGER REFERENCES `rocpd_string{u}` (id)"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_event",
        &[
            ID,
            GUID,
            ("category_id", "INTEGER REFERENCES `rocpd_string{u}` (id)"),
            ("stack_id", "INTEGER"),
            ("parent_stack_id", "INTEGER"),
            ("correlation_id", "INTEGER"),
            ("call_stack", "JSONB DEFAULT '{}' NOT NULL"),
            ("line_info", "JSONB DEFAULT '{}' NOT NULL"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_arg",
        &[
            ID,
            GUID,
            (
                "event_id",
                "INTEGER NOT NULL REFERENCES `rocpd_event{u}` (id)",
            ),
            ("position", "INTEGER NOT NULL"),
            ("type", "TEXT NOT NULL"),
            ("name", "TEXT NOT NULL"),
            ("value", "TEXT"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_pmc_event",
        &[
            ID,
            GUID,
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            (
                "pmc_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_pmc{u}` (id)",
            ),
            ("value", "REAL DEFAULT 0.0"),
            ("extdata", "JSONB DEFAULT '{}'"),
        ],
    ),
    (
        "rocpd_region",
        &[
            ID,
            GUID,
            NID,
            PID,
            (
                "tid",
                "INTEGER NOT NULL REFERENCES `rocpd_info_thread{u}` (id)",
            ),
            ("start", "BIGINT NOT NULL"),
            ("end", "BIGINT NOT NULL"),
            (
                "name_id",
                "INTEGER NOT NULL REFERENCES `rocpd_string{u}` (id)",
            ),
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_sample",
        &[
            ID,
            GUID,
            (
                "track_id",
                "INTEGER NOT NULL REFERENCES `rocpd_track{u}` (id)",
            ),
            ("timestamp", "BIGINT NOT NULL"),
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_kernel_dispatch",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("tid", "INTEGER REFERENCES `rocpd_info_thread{u}` (id)"),
            (
                "agent_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_agent{u}` (id)",
            ),
            (
                "kernel_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_kernel_symbol{u}` (id)",
            ),
            ("dispatch_id", "INTEGER NOT NULL"),
            (
                "queue_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_queue{u}` (id)",
            ),
            (
                "stream_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_stream{u}` (id)",
            ),
            ("start", "BIGINT NOT NULL"),
            ("end", "BIGINT NOT NULL"),
            ("private_segment_size", "INTEGER"),
            ("group_segment_size", "INTEGER"),
            ("workgroup_size_x", "INTEGER NOT NULL"),
            ("workgroup_size_y", "INTEGER NOT NULL"),
            ("workgroup_size_z", "INTEGER NOT NULL"),
            ("grid_size_x", "INTEGER NOT NULL"),
            ("grid_size_y", "INTEGER NOT NULL"),
            ("grid_size_z", "INTEGER NOT NULL"),
            (
                "region_name_id",
                "INTEGER REFERENCES `rocpd_string{u}` (id)",
            ),
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_memory_copy",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("tid", "INTEGER REFERENCES `rocpd_info_thread{u}` (id)"),
            ("start", "BIGINT NOT NULL"),
            ("end", "BIGINT NOT NULL"),
            (
                "name_id",
                "INTEGER NOT NULL REFERENCES `rocpd_string{u}` (id)",
            ),
            (
                "dst_agent_id",
                "INTEGER REFERENCES `rocpd_info_agent{u}` (id)",
            ),
            ("dst_address", "INTEGER"),
            (
                "src_agent_id",
                "INTEGER REFERENCES `rocpd_info_agent{u}` (id)",
            ),
            ("src_address", "INTEGER"),
            ("size", "INTEGER NOT NULL"),
            ("queue_id", "INTEGER REFERENCES `rocpd_info_queue{u}` (id)"),
            (
                "stream_id",
                "INTEGER REFERENCES `rocpd_info_stream{u}` (id)",
            ),
            (
                "region_name_id",
                "INTEGER REFERENCES `rocpd_string{u}` (id)",
            ),
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            EXTDATA,
        ],
    ),
    (
        "rocpd_memory_allocate",
        &[
            ID,
            GUID,
            NID,
            PID,
            ("tid", "INTEGER REFERENCES `rocpd_info_thread{u}` (id)"),
            ("agent_id", "INTEGER REFERENCES `rocpd_info_agent{u}` (id)"),
            (
                "type",
                "TEXT CHECK (\"type\" IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM'))",
            ),
            (
                "level",
                "TEXT CHECK (\"level\" IN ('REAL', 'VIRTUAL', 'SCRATCH'))",
            ),
            ("start", "BIGINT NOT NULL"),
            ("end", "BIGINT NOT NULL"),
            ("address", "INTEGER"),
            ("size", "INTEGER NOT NULL"),
            ("queue_id", "INTEGER REFERENCES `rocpd_info_queue{u}` (id)"),
            (
                "stream_id",
                "INTEGER REFERENCES `rocpd_info_stream{u}` (id)",
            ),
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            EXTDATA,
        ],
    ),
];

/// kreplay's tables: one row per pass (the shape of a `replay_pass` per dispatch), and one row
/// per dispatch with its snapshot, restore and replay-window totals. Both point at their
/// dispatch by `kernel_dispatch_id` within the same `guid`.
pub const KREPLAY_TABLES: [Table; 3] = [
    (
        "rocpd_kreplay_pass",
        &[
            ID,
            GUID,
            (
                "kernel_dispatch_id",
                "INTEGER NOT NULL REFERENCES `rocpd_kernel_dispatch{u}` (id)",
            ),
            ("replay_pass", "INTEGER NOT NULL"),
            ("kept", "INTEGER NOT NULL"),
            ("start", "BIGINT NOT NULL"),
            ("end", "BIGINT NOT NULL"),
            ("restore_start", "BIGINT"),
            ("restore_end", "BIGINT"),
            ("restore_ns", "BIGINT"),
            ("restore_bytes", "BIGINT"),
        ],
    ),
    (
        "rocpd_kreplay_dispatch",
        &[
            ID,
            GUID,
            (
                "kernel_dispatch_id",
                "INTEGER NOT NULL UNIQUE REFERENCES `rocpd_kernel_dispatch{u}` (id)",
            ),
            ("replayed", "INTEGER NOT NULL"),
            ("passes", "INTEGER NOT NULL"),
            ("skipped", "TEXT"),
            ("declined_reason", "TEXT"),
            ("store", "TEXT"),
            ("regions", "INTEGER"),
            ("bytes", "BIGINT"),
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("snapshot_ns", "BIGINT"),
            ("restore_count", "INTEGER"),
            ("restore_regions", "INTEGER"),
            ("restore_bytes", "BIGINT"),
            ("restore_skipped_regions", "INTEGER"),
            ("restore_ns", "BIGINT"),
            ("window_start", "BIGINT NOT NULL"),
            ("window_end", "BIGINT NOT NULL"),
            ("pmc_groups", "INTEGER"),
            ("pmc_collected", "TEXT"),
            ("pmc_missing", "TEXT"),
            ("pmc_error", "TEXT"),
        ],
    ),
    (
        "rocpd_kreplay_pmc_event",
        &[
            ID,
            GUID,
            ("event_id", "INTEGER REFERENCES `rocpd_event{u}` (id)"),
            (
                "pmc_id",
                "INTEGER NOT NULL REFERENCES `rocpd_info_pmc{u}` (id)",
            ),
            ("value", "REAL DEFAULT 0.0"),
            ("extdata", "JSONB DEFAULT '{}'"),
        ],
    ),
];

/// Every pass's counter rows: rocpd's (a counter's first pass in each dispatch) and kreplay's
/// (the same counter collected again in later passes), same columns.
const ALL_PMC_EVENTS: &str =
    "(SELECT * FROM rocpd_pmc_event UNION ALL SELECT * FROM rocpd_kreplay_pmc_event)";

/// The category of `s`'s event, as a scalar subquery on the string table.
fn category(event: &str) -> String {
    format!(
        "(SELECT C.string FROM rocpd_string C WHERE C.id = {event}.category_id AND C.guid = {event}.guid)"
    )
}

/// The data and summary views of the rocpd schema: `(name, select)`, each select written over
/// the unsuffixed `rocpd_*` views so that it works inside one file and over the rocpd tools'
/// unions alike.
pub fn data_views() -> Vec<(&'static str, String)> {
    let ec = category("E");
    let same = |a: &str, b: &str| format!("{a}.guid = {b}.guid");
    vec![
        (
            "code_objects",
            format!(
                "SELECT CO.id, CO.guid, CO.nid, P.pid, A.absolute_index AS agent_abs_index, CO.uri, CO.load_base, \
                 CO.load_size, CO.load_delta, CO.storage_type AS storage_type_str, \
                 json_extract(CO.extdata, '$.size') AS code_object_size, json_extract(CO.extdata, '$.storage_type') AS storage_type, \
                 json_extract(CO.extdata, '$.memory_base') AS memory_base, json_extract(CO.extdata, '$.memory_size') AS memory_size \
                 FROM rocpd_info_code_object CO \
                 JOIN rocpd_info_agent A ON A.id = CO.agent_id AND {} \
                 JOIN rocpd_info_process P ON P.id = CO.pid AND {}",
                same("A", "CO"),
                same("P", "CO")
            ),
        ),
        (
            "kernel_symbols",
            format!(
                "SELECT KS.id, KS.guid, KS.nid, P.pid, KS.code_object_id, KS.kernel_name, KS.display_name, KS.kernel_object, \
                 KS.kernarg_segment_size, KS.kernarg_segment_alignment, KS.group_segment_size, KS.private_segment_size, \
                 KS.sgpr_count, KS.arch_vgpr_count, KS.accum_vgpr_count, \
                 json_extract(KS.extdata, '$.size') AS kernel_symbol_size, json_extract(KS.extdata, '$.kernel_id') AS kernel_id, \
                 json_extract(KS.extdata, '$.kernel_code_entry_byte_offset') AS kernel_code_entry_byte_offset, \
                 json_extract(KS.extdata, '$.formatted_kernel_name') AS formatted_kernel_name, \
                 json_extract(KS.extdata, '$.demangled_kernel_name') AS demangled_kernel_name, \
                 json_extract(KS.extdata, '$.truncated_kernel_name') AS truncated_kernel_name, \
                 json_extract(KS.extdata, '$.kernel_address.handle') AS kernel_address \
                 FROM rocpd_info_kernel_symbol KS JOIN rocpd_info_process P ON P.id = KS.pid AND {}",
                same("P", "KS")
            ),
        ),
        (
            "processes",
            format!(
                "SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release, \
                 N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P.end, P.fini, P.command \
                 FROM rocpd_info_process P JOIN rocpd_info_node N ON N.id = P.nid AND {}",
                same("N", "P")
            ),
        ),
        (
            "threads",
            format!(
                "SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release, \
                 N.version AS system_version, P.guid, P.ppid, P.pid, T.tid, T.start, T.end, T.name \
                 FROM rocpd_info_thread T JOIN rocpd_info_process P ON P.id = T.pid AND {} \
                 JOIN rocpd_info_node N ON N.id = T.nid AND {}",
                same("P", "T"),
                same("N", "T")
            ),
        ),
        (
            "regions",
            format!(
                "SELECT R.id, R.guid, {ec} AS category, S.string AS name, R.nid, P.pid, T.tid, R.start, R.end, \
                 (R.end - R.start) AS duration, R.event_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id, \
                 E.extdata, E.call_stack, E.line_info \
                 FROM rocpd_region R JOIN rocpd_event E ON E.id = R.event_id AND {} \
                 JOIN rocpd_string S ON S.id = R.name_id AND {} \
                 JOIN rocpd_info_process P ON P.id = R.pid AND {} \
                 JOIN rocpd_info_thread T ON T.id = R.tid AND {}",
                same("E", "R"),
                same("S", "R"),
                same("P", "R"),
                same("T", "R")
            ),
        ),
        (
            "region_args",
            format!(
                "SELECT R.id, R.guid, R.nid, P.pid, A.type, A.name, A.value \
                 FROM rocpd_region R JOIN rocpd_event E ON E.id = R.event_id AND {} \
                 JOIN rocpd_arg A ON A.event_id = E.id AND {} \
                 JOIN rocpd_info_process P ON P.id = R.pid AND {}",
                same("E", "R"),
                same("A", "R"),
                same("P", "R")
            ),
        ),
        ("samples", sample_view(false)),
        ("sample_regions", sample_view(true)),
        (
            "regions_and_samples",
            "SELECT * FROM regions UNION ALL SELECT * FROM sample_regions".to_owned(),
        ),
        ("kernels", kernels_view()),
        (
            "pmc_info",
            format!(
                "SELECT I.id, I.guid, I.nid, P.pid, A.absolute_index AS agent_abs_index, I.is_constant, I.is_derived, \
                 I.name, I.description, I.block, I.expression \
                 FROM rocpd_info_pmc I JOIN rocpd_info_agent A ON A.id = I.agent_id AND {} \
                 JOIN rocpd_info_process P ON P.id = I.pid AND {}",
                same("A", "I"),
                same("P", "I")
            ),
        ),
        (
            "pmc_events",
            format!(
                "SELECT PE.id, PE.guid, PE.pmc_id, E.id AS event_id, {ec} AS category, \
                 (SELECT KS.display_name FROM rocpd_info_kernel_symbol KS WHERE KS.id = K.kernel_id AND {}) AS name, \
                 K.nid, P.pid, K.dispatch_id, K.start, K.end, (K.end - K.start) AS duration, I.name AS counter_name, \
                 PE.value AS counter_value \
                 FROM rocpd_pmc_event PE JOIN rocpd_info_pmc I ON I.id = PE.pmc_id AND {} \
                 JOIN rocpd_event E ON E.id = PE.event_id AND {} \
                 JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND {} \
                 JOIN rocpd_info_process P ON P.id = K.pid AND {}",
                same("KS", "K"),
                same("I", "PE"),
                same("E", "PE"),
                same("K", "PE"),
                same("P", "K")
            ),
        ),
        (
            "events_args",
            format!(
                "SELECT E.id AS event_id, {ec} AS category, E.stack_id, E.parent_stack_id, E.correlation_id, \
                 A.position AS arg_position, A.type AS arg_type, A.name AS arg_name, A.value AS arg_value, \
                 E.call_stack, E.line_info, A.extdata \
                 FROM rocpd_event E JOIN rocpd_arg A ON A.event_id = E.id AND {}",
                same("A", "E")
            ),
        ),
        (
            "stream_args",
            format!(
                "SELECT A.id AS argument_id, A.event_id AS event_id, A.position AS arg_position, A.type AS arg_type, \
                 A.value AS arg_value, json_extract(A.extdata, '$.stream_id') AS stream_id, S.nid, P.pid, \
                 S.name AS stream_name, S.extdata AS extdata \
                 FROM rocpd_arg A JOIN rocpd_info_stream S ON S.id = json_extract(A.extdata, '$.stream_id') AND {} \
                 JOIN rocpd_info_process P ON P.id = S.pid AND {} WHERE A.name = 'stream'",
                same("S", "A"),
                same("P", "S")
            ),
        ),
        ("memory_copies", memory_copies_view()),
        ("memory_allocations", memory_allocations_view(false)),
        ("scratch_memory", memory_allocations_view(true)),
        ("counters_collection", counters_collection_view()),
        (
            "top_kernels",
            "SELECT S.display_name AS name, COUNT(K.kernel_id) AS total_calls, \
             SUM(K.end - K.start) / 1000.0 AS total_duration, \
             (SUM(K.end - K.start) / COUNT(K.kernel_id)) / 1000.0 AS average, \
             SUM(K.end - K.start) * 100.0 / (SELECT SUM(T.end - T.start) FROM rocpd_kernel_dispatch T) AS percentage \
             FROM rocpd_kernel_dispatch K JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
             GROUP BY name ORDER BY total_duration DESC"
                .to_owned(),
        ),
        ("busy", busy_view()),
        ("top", top_view()),
    ]
}

fn sample_view(as_region: bool) -> String {
    let ec = category("E");
    let times = if as_region {
        "R.timestamp AS start, R.timestamp AS end, (R.timestamp - R.timestamp) AS duration"
    } else {
        "R.timestamp"
    };
    format!(
        "SELECT R.id, R.guid, {ec} AS category, \
         (SELECT N.string FROM rocpd_string N WHERE N.id = T.name_id AND N.guid = T.guid) AS name, \
         T.nid, P.pid, TH.tid, {times}, R.event_id, E.stack_id AS stack_id, E.parent_stack_id AS parent_stack_id, \
         E.correlation_id AS corr_id, E.extdata AS extdata, E.call_stack AS call_stack, E.line_info AS line_info \
         FROM rocpd_sample R JOIN rocpd_track T ON T.id = R.track_id AND T.guid = R.guid \
         JOIN rocpd_event E ON E.id = R.event_id AND E.guid = R.guid \
         JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid \
         JOIN rocpd_info_thread TH ON TH.id = T.tid AND TH.guid = T.guid"
    )
}

fn kernels_view() -> String {
    let ec = category("E");
    format!(
        "SELECT K.id, K.guid, T.tid, {ec} AS category, R.string AS region, S.display_name AS name, K.nid, P.pid, \
         A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS agent_type_index, \
         A.type AS agent_type, S.code_object_id AS code_object_id, K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, \
         Q.name AS queue, ST.name AS stream, K.start, K.end, (K.end - K.start) AS duration, \
         K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z, \
         K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y, K.workgroup_size_z AS workgroup_z, \
         K.group_segment_size AS lds_size, K.private_segment_size AS scratch_size, S.arch_vgpr_count AS vgpr_count, \
         S.accum_vgpr_count, S.sgpr_count, S.group_segment_size AS static_lds_size, \
         S.private_segment_size AS static_scratch_size, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id \
         FROM rocpd_kernel_dispatch K \
         JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid \
         JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid \
         JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid \
         JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid \
         JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid \
         JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid"
    )
}

fn memory_copies_view() -> String {
    let ec = category("E");
    let agent = |a: &str| {
        format!(
            "{a}.name AS {a}_device, {a}.absolute_index AS {a}_agent_abs_index, {a}.logical_index AS {a}_agent_log_index, \
             {a}.type_index AS {a}_agent_type_index, {a}.type AS {a}_agent_type, M.{a}_address"
        )
    };
    format!(
        "SELECT M.id, M.guid, {ec} AS category, M.nid, P.pid, T.tid, M.start, M.end, (M.end - M.start) AS duration, \
         S.string AS name, R.string AS region_name, M.stream_id, M.queue_id, ST.name AS stream_name, Q.name AS queue_name, \
         M.size, {}, {}, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id \
         FROM rocpd_memory_copy M JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid \
         LEFT JOIN rocpd_string R ON R.id = M.region_name_id AND R.guid = M.guid \
         JOIN rocpd_info_agent dst ON dst.id = M.dst_agent_id AND dst.guid = M.guid \
         JOIN rocpd_info_agent src ON src.id = M.src_agent_id AND src.guid = M.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = M.queue_id AND Q.guid = M.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = M.stream_id AND ST.guid = M.guid \
         JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid \
         JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid \
         JOIN rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid",
        agent("dst"),
        agent("src")
    )
}

fn memory_allocations_view(scratch: bool) -> String {
    let ec = category("E");
    let joins = "FROM rocpd_memory_allocate M LEFT JOIN rocpd_info_agent A ON A.id = M.agent_id AND A.guid = M.guid \
         LEFT JOIN rocpd_info_queue Q ON Q.id = M.queue_id AND Q.guid = M.guid \
         LEFT JOIN rocpd_info_stream ST ON ST.id = M.stream_id AND ST.guid = M.guid \
         JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid \
         JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid \
         JOIN rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid";
    let agent = "A.name AS agent_name, A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index, \
                 A.type_index AS agent_type_index, A.type AS agent_type";
    if scratch {
        format!(
            "SELECT M.id, M.guid, M.nid, P.pid, M.type AS operation, {agent}, M.queue_id, T.tid, \
             json_extract(M.extdata, '$.flags') AS alloc_flags, M.start, M.end, (M.end - M.start) AS duration, M.size, \
             M.address, E.correlation_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id, {ec} AS category, \
             E.extdata AS event_extdata {joins} WHERE M.level = 'SCRATCH' ORDER BY M.start ASC"
        )
    } else {
        format!(
            "SELECT M.id, M.guid, {ec} AS category, M.nid, P.pid, T.tid, M.start, M.end, (M.end - M.start) AS duration, \
             M.type, M.level, {agent}, M.address, M.size, M.queue_id, Q.name AS queue_name, M.stream_id, \
             ST.name AS stream_name, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id {joins}"
        )
    }
}

fn counters_collection_view() -> String {
    let ec = category("E");
    format!(
        "SELECT MIN(PE.id) AS id, PE.guid, K.dispatch_id, K.kernel_id, E.id AS event_id, E.correlation_id, E.stack_id, \
         E.parent_stack_id, P.pid, T.tid, K.agent_id, A.absolute_index AS agent_abs_index, \
         A.logical_index AS agent_log_index, A.type_index AS agent_type_index, A.type AS agent_type, K.queue_id, \
         K.grid_size_x AS grid_size_x, K.grid_size_y AS grid_size_y, K.grid_size_z AS grid_size_z, \
         (K.grid_size_x * K.grid_size_y * K.grid_size_z) AS grid_size, S.display_name AS kernel_name, \
         (SELECT RS.string FROM rocpd_string RS WHERE RS.id = K.region_name_id AND RS.guid = K.guid) AS kernel_region, \
         K.workgroup_size_x AS workgroup_size_x, K.workgroup_size_y AS workgroup_size_y, \
         K.workgroup_size_z AS workgroup_size_z, \
         (K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z) AS workgroup_size, \
         K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size, \
         S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count, I.name AS counter_name, \
         I.symbol AS counter_symbol, I.component, I.description, I.block, I.expression, I.value_type, \
         I.id AS counter_id, SUM(PE.value) AS value, K.start, K.end, I.is_constant, I.is_derived, \
         (K.end - K.start) AS duration, {ec} AS category, K.nid, E.extdata, S.code_object_id, \
         json_extract(K.extdata, '$.replay_pass') AS replay_pass \
         FROM {ALL_PMC_EVENTS} PE JOIN rocpd_info_pmc I ON I.id = PE.pmc_id AND I.guid = PE.guid \
         JOIN rocpd_event E ON E.id = PE.event_id AND E.guid = PE.guid \
         JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid \
         JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid \
         JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
         JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid \
         JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid \
         GROUP BY PE.guid, E.id, I.name, K.agent_id"
    )
}

/// Device activity: kernel dispatches and copies (by destination agent).
const DEVICE_SPANS: &str = "SELECT agent_id, guid, start, end FROM rocpd_kernel_dispatch \
     UNION ALL SELECT dst_agent_id AS agent_id, guid, start, end FROM rocpd_memory_copy";

fn busy_view() -> String {
    format!(
        "SELECT G.agent_id, AG.type, G.GpuTime, W.WallTime, G.GpuTime * 1.0 / W.WallTime AS Busy \
         FROM (SELECT agent_id, guid, SUM(end - start) AS GpuTime FROM ({DEVICE_SPANS}) GROUP BY agent_id, guid) G \
         JOIN (SELECT MAX(end) - MIN(start) AS WallTime FROM ({DEVICE_SPANS})) W ON 1 = 1 \
         JOIN rocpd_info_agent AG ON AG.id = G.agent_id AND AG.guid = G.guid"
    )
}

fn top_view() -> String {
    "SELECT name, COUNT(*) AS total_calls, SUM(duration) / 1000.0 AS total_duration, \
     (SUM(duration) / COUNT(*)) / 1000.0 AS average, SUM(duration) * 100.0 / total_time AS percentage \
     FROM (SELECT KS.display_name AS name, (KD.end - KD.start) AS duration FROM rocpd_kernel_dispatch KD \
           JOIN rocpd_info_kernel_symbol KS ON KS.id = KD.kernel_id AND KS.guid = KD.guid \
           UNION ALL SELECT S.string AS name, (MC.end - MC.start) AS duration FROM rocpd_memory_copy MC \
           JOIN rocpd_string S ON S.id = MC.name_id AND S.guid = MC.guid \
           UNION ALL SELECT S.string AS name, (RR.end - RR.start) AS duration FROM rocpd_region RR \
           JOIN rocpd_string S ON S.id = RR.name_id AND S.guid = RR.guid) \
     CROSS JOIN (SELECT SUM(end - start) AS total_time FROM (SELECT start, end FROM rocpd_kernel_dispatch \
           UNION ALL SELECT start, end FROM rocpd_memory_copy UNION ALL SELECT start, end FROM rocpd_region)) \
     GROUP BY name ORDER BY total_duration DESC"
        .to_owned()
}

/// `kreplay_counters`: one row per dispatch and counter, never a sum across passes: the
/// value of the first pass that collected it (each pass's value being the sum of its
/// instances), which pass that was, how many passes collected it, and their spread.
fn kreplay_counters_view() -> String {
    format!(
        "WITH per_pass AS (\
       SELECT PE.guid, K.pid, K.dispatch_id, K.agent_id, K.kernel_id, I.name AS counter_name, \
              json_extract(K.extdata, '$.replay_pass') AS replay_pass, \
              json_extract(K.extdata, '$.counter_group') AS counter_group, SUM(PE.value) AS value, \
              json_extract(I.extdata, '$.exactness') AS exactness, I.is_derived, \
              json_extract(I.extdata, '$.cross_pass') AS cross_pass \
       FROM {ALL_PMC_EVENTS} PE JOIN rocpd_info_pmc I ON I.id = PE.pmc_id AND I.guid = PE.guid \
       JOIN rocpd_kernel_dispatch K ON K.event_id = PE.event_id AND K.guid = PE.guid \
       GROUP BY PE.guid, PE.event_id, I.name), \
     ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY guid, pid, dispatch_id, counter_name ORDER BY replay_pass) AS nth, \
              COUNT(*) OVER (PARTITION BY guid, pid, dispatch_id, counter_name) AS passes, \
              MIN(value) OVER (PARTITION BY guid, pid, dispatch_id, counter_name) AS min_value, \
              MAX(value) OVER (PARTITION BY guid, pid, dispatch_id, counter_name) AS max_value FROM per_pass) \
     SELECT R.guid, R.pid, R.dispatch_id, S.display_name AS kernel_name, A.name AS agent_name, \
            A.absolute_index AS agent_abs_index, R.counter_name, R.value, R.replay_pass, R.counter_group, \
            R.passes, R.min_value, R.max_value, (R.max_value - R.min_value) AS spread, R.exactness, \
            R.is_derived, R.cross_pass \
     FROM ranked R JOIN rocpd_info_kernel_symbol S ON S.id = R.kernel_id AND S.guid = R.guid \
     JOIN rocpd_info_agent A ON A.id = R.agent_id AND A.guid = R.guid \
     WHERE R.nth = 1"
    )
}

/// kreplay's views over its tables and the rocpd ones: `kreplay_kernels` (one row per
/// dispatch, the kept pass's times and the replay totals), `kreplay_passes` (one row per
/// pass) and `kreplay_counters` (one row per dispatch and counter).
pub fn kreplay_views() -> Vec<(&'static str, String)> {
    vec![
        (
            "kreplay_kernels",
            "SELECT D.id, D.guid, P.pid, T.tid, D.dispatch_id, S.kernel_name, S.display_name AS name, \
             A.name AS agent_name, A.absolute_index AS agent_abs_index, D.queue_id, D.start, D.end, \
             (D.end - D.start) AS duration, X.replayed, X.passes, X.skipped, X.declined_reason, \
             X.window_start, X.window_end, X.bytes AS snapshot_bytes, X.restore_bytes, \
             X.pmc_groups, X.pmc_collected, X.pmc_missing, X.pmc_error \
             FROM rocpd_kreplay_dispatch X \
             JOIN rocpd_kernel_dispatch D ON D.id = X.kernel_dispatch_id AND D.guid = X.guid \
             JOIN rocpd_info_kernel_symbol S ON S.id = D.kernel_id AND S.guid = D.guid \
             JOIN rocpd_info_agent A ON A.id = D.agent_id AND A.guid = D.guid \
             JOIN rocpd_info_process P ON P.id = D.pid AND P.guid = D.guid \
             LEFT JOIN rocpd_info_thread T ON T.id = D.tid AND T.guid = D.guid"
                .to_owned(),
        ),
        (
            "kreplay_passes",
            "SELECT R.id, R.guid, P.pid, D.dispatch_id, S.display_name AS name, R.replay_pass, R.kept, R.start, R.end, \
             (R.end - R.start) AS duration, R.restore_start, R.restore_end, R.restore_ns, R.restore_bytes, \
             R.kernel_dispatch_id \
             FROM rocpd_kreplay_pass R \
             JOIN rocpd_kernel_dispatch D ON D.id = R.kernel_dispatch_id AND D.guid = R.guid \
             JOIN rocpd_info_kernel_symbol S ON S.id = D.kernel_id AND S.guid = D.guid \
             JOIN rocpd_info_process P ON P.id = D.pid AND P.guid = D.guid"
                .to_owned(),
        ),
        ("kreplay_counters", kreplay_counters_view()),
    ]
}

/// The whole schema for one file: tables suffixed with `uuid` (which starts with `_`), their
/// unsuffixed views, the data, summary and kreplay views, and kreplay's index.
pub fn script(uuid: &str, guid: &str) -> String {
    let mut out = String::new();
    for (name, columns) in ROCPD_TABLES.iter().chain(KREPLAY_TABLES.iter()) {
        let cols: Vec<String> = columns
            .iter()
            .map(|(c, decl)| {
                format!(
                    "\"{c}\" {}",
                    decl.replace("{guid}", guid).replace("{u}", uuid)
                )
            })
            .collect();
        out += &format!(
            "CREATE TABLE `{name}{uuid}` (\n    {}\n);\n",
            cols.join(",\n    ")
        );
        out += &format!("CREATE VIEW `{name}` AS SELECT * FROM `{name}{uuid}`;\n");
    }
    out += &format!(
        "CREATE INDEX `rocpd_kreplay_pass{uuid}_dispatch` ON `rocpd_kreplay_pass{uuid}` (kernel_dispatch_id);\n"
    );
    for (name, select) in data_views().into_iter().chain(kreplay_views()) {
        out += &format!("CREATE VIEW `{name}` AS {select};\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_tables_and_forty_one_views() {
        assert_eq!(ROCPD_TABLES.len() + data_views().len(), 41);
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(&script("_0a", "0a")).unwrap();
        for (name, _) in data_views().iter().chain(kreplay_views().iter()) {
            conn.prepare(&format!("SELECT * FROM `{name}`"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let tables: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd%\\_0a' ESCAPE '\\'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 23);
    }
}
