//! The record files of a run: found in the records directory and read with the record format
//! of the `kreplay-records` crate (`docs/formats.md`).

use crate::exit_status::CliError;
use std::path::{Path, PathBuf};

pub use kreplay_records::{
    Collected, Dispatch, HostMemory, Joiner, KernelSymbol, Launch, Pass, RestoreStats,
    SnapshotStats, parse,
};

/// The record files (`kreplay-<pid>.jsonl`) in `dir`, sorted by name.
pub fn record_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::io("reading the records directory", dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.starts_with("kreplay-") && name.ends_with(".jsonl")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Reads and parses every record file in `dir`.
pub fn collect(dir: &Path) -> Result<Collected, CliError> {
    let mut texts = Vec::new();
    for file in record_files(dir)? {
        let bytes = std::fs::read(&file).map_err(|e| CliError::io("reading records", &file, e))?;
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    Ok(parse(texts.iter().map(String::as_str)))
}

#[cfg(test)]
pub(crate) mod tests {

    /// Record lines of one replayed dispatch with `passes` passes of 100 ns each.
    pub(crate) fn replayed_lines(pid: u64, id: u64, kernel: &str, passes: u64, t0: u64) -> String {
        let mut out = String::new();
        let snap_end = t0 + 50;
        let mut t = snap_end;
        for p in 0..passes {
            let (rs, re) = if p + 1 < passes {
                (format!("{}", t + 100), format!("{}", t + 130))
            } else {
                ("null".into(), "null".into())
            };
            out += &format!(
                "{{\"record\":\"pass\",\"pid\":{pid},\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"clock\":\"boottime\",\"pass\":{p},\"start_ns\":{},\"end_ns\":{},\"restore_start_ns\":{rs},\"restore_end_ns\":{re}}}\n",
                t,
                t + 100 + p
            );
            t += 130;
        }
        out += &format!(
            "{{\"record\":\"dispatch\",\"pid\":{pid},\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"clock\":\"boottime\",\"replayed\":{},\"passes\":{passes},\"skipped\":null,\"window_start_ns\":{t0},\"window_end_ns\":{t},\"snapshot\":{{\"regions\":2,\"bytes\":4096,\"start_ns\":{t0},\"end_ns\":{snap_end},\"store\":\"host\"}},\"tid\":{},\"kernel_object\":4096,\"grid_size\":[4096,1,1],\"workgroup_size\":[64,1,1],\"private_segment_size\":0,\"group_segment_size\":16,\"restore\":{{\"count\":{},\"regions\":{},\"bytes\":{},\"skipped_regions\":0,\"ns\":{}}},\"future_field\":1}}\n",
            passes > 1,
            pid + 1,
            passes - 1,
            passes - 1,
            1024 * (passes - 1),
            30 * (passes - 1)
        );
        out
    }
}
