//! Output files produced from the records: the rocpd database, per-pass rows as CSV and JSON, a
//! Perfetto protobuf trace, Chrome trace-event JSON, and the per-kernel summary. Every file but
//! the database is written to a temporary name in its directory and renamed into place, so a
//! reader never sees half a file; the database is written in transactions ([`rocpd`]).

pub mod chrome;
pub mod counters;
pub mod kernel_name;
pub mod perfetto_proto;
pub mod pftrace;
pub mod rocpd;
pub mod rocpd_schema;
pub mod rocprofv3;
pub mod summary;

use crate::exit_status::CliError;
use crate::run_records::Dispatch;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output format selected with `-f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The rocpd SQLite database (rocprofv3's default format).
    Rocpd,
    /// rocprofv3's `kernel_trace.csv` (one row per dispatch) and kreplay's `passes.csv` (one
    /// row per dispatch per pass); with `--stats`, rocprofv3's `kernel_stats.csv`; with
    /// counters, rocprofv3's `counter_collection.csv` and kreplay's `counters.csv`.
    Csv,
    /// rocprofv3's tool JSON, with kreplay's per-pass rows and summary under `kreplay`.
    Json,
    /// Perfetto protobuf trace.
    Pftrace,
    /// Chrome trace-event JSON (Perfetto and chrome://tracing load it).
    Chrome,
}

impl Format {
    /// The formats written when `-f` is not given.
    pub const DEFAULT: [&str; 1] = ["rocpd"];

    /// Parses one `-f` value (case-insensitive); `perfetto` is accepted for `pftrace`.
    pub fn parse(name: &str) -> Result<Format, CliError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "rocpd" => Ok(Format::Rocpd),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "pftrace" | "perfetto" => Ok(Format::Pftrace),
            "chrome" => Ok(Format::Chrome),
            _ => Err(CliError::UnknownFormat(name.to_owned())),
        }
    }

    /// Parses the `-f` values, each possibly a comma-separated list; duplicates collapse.
    pub fn parse_list(values: &[String]) -> Result<Vec<Format>, CliError> {
        let mut formats = Vec::new();
        for name in values
            .iter()
            .flat_map(|v| v.split(','))
            .filter(|s| !s.trim().is_empty())
        {
            let f = Format::parse(name)?;
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        if formats.is_empty() {
            return Err(CliError::UnknownFormat(values.join(" ")));
        }
        Ok(formats)
    }

    /// Every file this format may write, from the `-o` base name: the main one first.
    pub fn file_names(self, base: &str) -> Vec<String> {
        match self {
            Format::Csv => vec![
                self.file_name(base),
                format!("{base}_kernel_trace.csv"),
                format!("{base}_kernel_stats.csv"),
                format!("{base}_counter_collection.csv"),
                format!("{base}_counters.csv"),
            ],
            _ => vec![self.file_name(base)],
        }
    }

    /// The main file written for this format, from the `-o` base name.
    pub fn file_name(self, base: &str) -> String {
        match self {
            Format::Rocpd => format!("{base}_results.db"),
            Format::Csv => format!("{base}_passes.csv"),
            Format::Json => format!("{base}_results.json"),
            Format::Pftrace => format!("{base}_results.pftrace"),
            Format::Chrome => format!("{base}_trace.json"),
        }
    }
}

/// Columns of the CSV file and keys of each JSON row, in order.
pub const COLUMNS: [&str; 23] = [
    "pid",
    "dispatch_id",
    "kernel",
    "agent",
    "agent_name",
    "queue_id",
    "replayed",
    "skipped",
    "passes",
    "pass",
    "start_ns",
    "end_ns",
    "duration_ns",
    "restore_after_pass_ns",
    "snapshot_regions",
    "snapshot_bytes",
    "snapshot_ns",
    "restore_count",
    "restore_regions",
    "restore_bytes",
    "restore_skipped_regions",
    "restore_ns",
    "window_ns",
];

/// One row per pass of every dispatch; the dispatch's snapshot and restore totals repeat on
/// each of its rows.
pub fn rows(dispatches: &[Dispatch]) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for d in dispatches {
        let snap = d.snapshot.as_ref();
        let rest = d.restore.as_ref();
        for p in &d.passes {
            rows.push(vec![
                json!(d.pid),
                json!(d.dispatch_id),
                json!(d.kernel),
                json!(d.agent),
                json!(d.agent_name),
                json!(d.queue_id),
                json!(d.replayed),
                json!(d.skipped),
                json!(d.passes.len()),
                json!(p.pass),
                json!(p.start_ns),
                json!(p.end_ns),
                json!(p.duration_ns()),
                json!(p.restore.map(|(a, b)| b.saturating_sub(a))),
                json!(snap.map(|s| s.regions)),
                json!(snap.map(|s| s.bytes)),
                json!(snap.map(|s| s.end_ns.saturating_sub(s.start_ns))),
                json!(rest.map(|r| r.count)),
                json!(rest.map(|r| r.regions)),
                json!(rest.map(|r| r.bytes)),
                json!(rest.map(|r| r.skipped_regions)),
                json!(rest.map(|r| r.ns)),
                json!(d.window_end_ns.saturating_sub(d.window_start_ns)),
            ]);
        }
    }
    rows
}

/// One CSV field: empty for null, quoted when it holds a separator or quote.
pub(crate) fn csv_field(v: &Value) -> String {
    let text = match v {
        Value::Null => return String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The CSV text: a header line, then one line per row.
pub fn csv(dispatches: &[Dispatch]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for row in rows(dispatches) {
        out += &row.iter().map(csv_field).collect::<Vec<_>>().join(",");
        out.push('\n');
    }
    out
}

/// The JSON document: `{"rocprofiler-sdk-tool": [...], "kreplay": {...}}`, rocprofv3's tool
/// JSON with kreplay's own document ([`kreplay_json`]) beside it.
pub fn json_document(dispatches: &[Dispatch], app: Option<&(u32, String)>) -> String {
    format!(
        "{{\"rocprofiler-sdk-tool\":{},\n\"kreplay\":{}}}\n",
        rocprofv3::tool_processes(dispatches, app),
        kreplay_json(dispatches).trim_end()
    )
}

/// The counter keys of each pass's JSON row after the columns: the pass (as rocprofv3
/// names it), its group and its counter values; and of the dispatch's resolved counters.
fn pass_counter_keys(d: &Dispatch, p: &crate::run_records::Pass) -> String {
    format!(
        ",\"replay_pass\":{},\"counter_group\":{},\"counters\":{},\"dispatch_counters\":{},\"pmc\":{}",
        p.pass,
        json!(p.group),
        counters::pass_json(p),
        counters::dispatch_json(d),
        counters::status_json(d)
    )
}

/// kreplay's JSON: `{"columns": [...], "rows": [{...}], "kernels": [summary rows]}`, with
/// each row's keys in column order (then `replay_pass`, `counter_group`, `counters`,
/// `dispatch_counters` and `pmc` when the run collected counters), one row per line.
pub fn kreplay_json(dispatches: &[Dispatch]) -> String {
    let mut out = format!("{{\"columns\":{},\n\"rows\":[", json!(COLUMNS));
    let with_counters = counters::any(dispatches);
    let passes = dispatches
        .iter()
        .flat_map(|d| d.passes.iter().map(move |p| (d, p)));
    for (i, (row, (d, p))) in rows(dispatches).into_iter().zip(passes).enumerate() {
        out.push_str(if i == 0 { "\n{" } else { ",\n{" });
        for (c, (name, value)) in COLUMNS.iter().zip(row).enumerate() {
            if c > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(name);
            out.push_str("\":");
            out.push_str(&value.to_string());
        }
        if with_counters {
            out.push_str(&pass_counter_keys(d, p));
        }
        out.push('}');
    }
    let kernels: Vec<Value> = summary::per_kernel(dispatches)
        .iter()
        .map(summary::KernelSummary::to_json)
        .collect();
    out.push_str(&format!("],\n\"kernels\":{}}}\n", Value::Array(kernels)));
    out
}

/// Writes `contents` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), CliError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // A short temporary name, so that a final name at the NAME_MAX limit still works.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let seq = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-kreplay-{}-{seq}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::io("writing", path, e)
    })
}

/// Writes the selected formats into `dir` with base name `base`; returns the files written.
/// `app` labels the application's process in the traces; `run` goes into the database.
pub fn write_outputs(
    dir: &Path,
    base: &str,
    formats: &[Format],
    dispatches: &[Dispatch],
    app: &str,
    run: &rocpd::RunInfo,
) -> Result<Vec<PathBuf>, CliError> {
    let mut written = Vec::new();
    for &format in formats {
        let path = dir.join(format.file_name(base));
        let bytes = match format {
            Format::Rocpd => {
                rocpd::write(&path, dispatches, run.clone())?;
                written.push(path);
                continue;
            }
            Format::Csv => {
                let trace = dir.join(&format.file_names(base)[1]);
                write_atomically(&trace, rocprofv3::kernel_trace(dispatches).as_bytes())?;
                written.push(trace);
                if run.stats {
                    let stats = dir.join(&format.file_names(base)[2]);
                    write_atomically(&stats, rocprofv3::kernel_stats(dispatches).as_bytes())?;
                    written.push(stats);
                }
                if counters::any(dispatches) {
                    let names = format.file_names(base);
                    let collection = dir.join(&names[3]);
                    write_atomically(
                        &collection,
                        rocprofv3::counter_collection(dispatches).as_bytes(),
                    )?;
                    written.push(collection);
                    let table = dir.join(&names[4]);
                    write_atomically(&table, counters::table(dispatches).as_bytes())?;
                    written.push(table);
                }
                csv(dispatches).into_bytes()
            }
            Format::Json => json_document(dispatches, run.app.as_ref()).into_bytes(),
            Format::Pftrace => pftrace::trace(dispatches, app),
            Format::Chrome => chrome::trace(dispatches, app).into_bytes(),
        };
        write_atomically(&path, &bytes)?;
        written.push(path);
    }
    let summary_path = dir.join(format!("{base}_summary.txt"));
    write_atomically(
        &summary_path,
        summary::table(&summary::per_kernel(dispatches)).as_bytes(),
    )?;
    written.push(summary_path);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_records::{parse, tests::replayed_lines};

    fn sample() -> Vec<Dispatch> {
        let text = replayed_lines(3, 1, "vec_add", 3, 1000)
            + &replayed_lines(3, 2, "scale(int, float)", 2, 9000);
        parse([text.as_str()]).dispatches
    }

    #[test]
    fn formats_parse_lists_and_reject_unknown_names() {
        assert_eq!(
            Format::parse_list(&["csv".into(), "json".into()]).unwrap(),
            vec![Format::Csv, Format::Json]
        );
        assert_eq!(
            Format::parse_list(&["pftrace,CSV,csv".into()]).unwrap(),
            vec![Format::Pftrace, Format::Csv]
        );
        assert_eq!(
            Format::parse_list(&["rocpd".into(), "chrome,perfetto".into()]).unwrap(),
            vec![Format::Rocpd, Format::Chrome, Format::Pftrace]
        );
        assert_eq!(
            Format::parse_list(&Format::DEFAULT.map(String::from)).unwrap(),
            vec![Format::Rocpd]
        );
        assert_eq!(Format::Rocpd.file_name("k"), "k_results.db");
        assert_eq!(Format::Pftrace.file_name("k"), "k_results.pftrace");
        assert_eq!(Format::Chrome.file_name("k"), "k_trace.json");
        let err = Format::parse_list(&["csv".into(), "otf2".into()]).unwrap_err();
        assert_eq!(err.exit_code(), 66);
        assert!(err.to_string().contains("`otf2`"));
    }

    #[test]
    fn csv_has_one_row_per_pass_and_quotes_commas() {
        let text = csv(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 + 2);
        assert_eq!(lines[0].split(',').count(), COLUMNS.len());
        assert!(lines[4].contains("\"scale(int, float)\""), "{}", lines[4]);
        let first: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(first[2], "vec_add");
        assert_eq!(first[9], "0");
        assert_eq!(first[12], "100", "duration of pass 0");
        assert_eq!(first[15], "4096", "snapshot bytes");
    }

    #[test]
    fn json_rows_are_objects_with_every_column() {
        let doc: Value = serde_json::from_str(&json_document(&sample(), None)).unwrap();
        assert_eq!(
            doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let doc = &doc["kreplay"];
        let rows = doc["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[2]["pass"], 2);
        assert_eq!(rows[2]["restore_after_pass_ns"], Value::Null);
        assert_eq!(rows[0]["restore_after_pass_ns"], 30);
        assert_eq!(rows[3]["kernel"], "scale(int, float)");
        assert!(COLUMNS.iter().all(|c| rows[0].get(c).is_some()));
        assert_eq!(rows[0].as_object().unwrap().len(), COLUMNS.len());
        assert_eq!(doc["kernels"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("kreplay-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.csv");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let err = write_atomically(&dir.join("missing/x.csv"), b"x").unwrap_err();
        assert_eq!(err.exit_code(), 75);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
