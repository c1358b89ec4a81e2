//! Reading the JSON-lines records the tool library's built-in client writes
//! (`docs/formats.md`): one `dispatch` line per dispatch, after its `pass` lines.

use crate::exit_status::CliError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Totals of the snapshot taken before the first pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Regions saved.
    pub regions: u64,
    /// Bytes saved.
    pub bytes: u64,
    /// Start, host monotonic ns.
    pub start_ns: u64,
    /// End, host monotonic ns.
    pub end_ns: u64,
    /// Where the snapshot was kept (`host`); empty when the record does not say.
    pub store: String,
}

/// The launch geometry of a dispatch and the thread that submitted it (records written by tool
/// versions that know them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// Kernel thread id of the submitting thread.
    pub tid: u64,
    /// Kernel object of the dispatch packet.
    pub kernel_object: u64,
    /// Grid size x, y, z (work-items).
    pub grid_size: [u64; 3],
    /// Work-group size x, y, z.
    pub workgroup_size: [u64; 3],
    /// Private segment bytes per work-item.
    pub private_segment_size: u64,
    /// Group segment bytes per work-group.
    pub group_segment_size: u64,
}

/// What a replay window did with host and fine-grained memory (`host_memory` of the record).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub struct HostMemory {
    /// `KREPLAY_HOST_MEMORY` policy in force.
    #[serde(default)]
    pub policy: String,
    /// Bytes of host memory captured.
    #[serde(default)]
    pub saved_bytes: u64,
    /// Bytes of host memory written back between passes.
    #[serde(default)]
    pub restored_bytes: u64,
    /// Allocations the kernel wrote that were not restored between passes.
    #[serde(default)]
    pub unrestored: Vec<String>,
    /// Allocations written during the window by another writer (loop stopped, writes kept).
    #[serde(default)]
    pub other_writers: Vec<String>,
    /// Verify mode: allocations different after the last pass from after the first.
    #[serde(default)]
    pub verify_mismatches: Vec<String>,
}

/// Totals of the restores between passes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreStats {
    /// Restores done.
    pub count: u64,
    /// Regions restored, summed over restores.
    pub regions: u64,
    /// Bytes restored, summed over restores.
    pub bytes: u64,
    /// Regions left alone because the kernel did not write them.
    pub skipped_regions: u64,
    /// Time spent restoring.
    pub ns: u64,
}

/// One pass of a dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// Pass number from 0.
    pub pass: u64,
    /// Kernel start on the device.
    pub start_ns: u64,
    /// Kernel end on the device.
    pub end_ns: u64,
    /// The restore that followed this pass, if any.
    pub restore: Option<(u64, u64)>,
}

impl Pass {
    /// Kernel duration of this pass.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A dispatch whose `dispatch` line was written, with its passes in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Process id.
    pub pid: u64,
    /// Id shared by all passes.
    pub dispatch_id: u64,
    /// Kernel symbol, if resolved.
    pub kernel: Option<String>,
    /// Agent handle.
    pub agent: u64,
    /// Agent name (`gfx942`).
    pub agent_name: String,
    /// HSA queue id.
    pub queue_id: u64,
    /// More than one pass ran.
    pub replayed: bool,
    /// Why it was not replayed.
    pub skipped: Option<String>,
    /// Replay window start.
    pub window_start_ns: u64,
    /// Replay window end.
    pub window_end_ns: u64,
    /// Snapshot totals.
    pub snapshot: Option<SnapshotStats>,
    /// Restore totals.
    pub restore: Option<RestoreStats>,
    /// Launch geometry and submitting thread, when recorded.
    pub launch: Option<Launch>,
    /// Host memory of the replay window, when recorded.
    pub host_memory: Option<HostMemory>,
    /// The passes, sorted by pass number.
    pub passes: Vec<Pass>,
}

impl Dispatch {
    /// The kernel name, or `<unknown>` when the tool could not resolve it.
    pub fn kernel_name(&self) -> &str {
        self.kernel.as_deref().unwrap_or("<unknown>")
    }

    /// The reason replay was declined (`skipped` without its `declined: ` prefix), if it was.
    pub fn declined_reason(&self) -> Option<&str> {
        self.skipped.as_deref()?.strip_prefix("declined: ")
    }

    /// The pass whose effects the application keeps: the last one (its completion signal fires
    /// after it).
    pub fn visible_pass(&self) -> Option<&Pass> {
        self.passes.last()
    }

    /// The span of the dispatch: its replay window widened to cover every pass, restore and
    /// the snapshot.
    pub fn span(&self) -> (u64, u64) {
        let mut start = self.window_start_ns;
        let mut end = self.window_end_ns.max(start);
        if let Some(s) = &self.snapshot {
            start = start.min(s.start_ns);
            end = end.max(s.end_ns);
        }
        for p in &self.passes {
            start = start.min(p.start_ns);
            end = end.max(p.end_ns);
            if let Some((rs, re)) = p.restore {
                start = start.min(rs);
                end = end.max(re);
            }
        }
        (start, end)
    }
}

/// What a set of record files held.
#[derive(Debug, Default)]
pub struct Collected {
    /// Complete dispatches, ordered by process id then dispatch id.
    pub dispatches: Vec<Dispatch>,
    /// Complete lines that were not valid records (each skipped).
    pub malformed_lines: usize,
    /// Pass lines whose dispatch line never came (the dispatch in flight at a crash).
    pub incomplete_passes: usize,
}

/// One record line as written by the tool; every field optional so that one type reads both
/// kinds, unknown fields ignored.
#[derive(serde::Deserialize)]
struct Line {
    record: Option<String>,
    pid: Option<u64>,
    dispatch_id: Option<u64>,
    #[serde(default)]
    kernel: Option<String>,
    agent: Option<u64>,
    #[serde(default)]
    agent_name: Option<String>,
    queue_id: Option<u64>,
    replayed: Option<bool>,
    #[serde(default)]
    skipped: Option<String>,
    window_start_ns: Option<u64>,
    window_end_ns: Option<u64>,
    #[serde(default)]
    snapshot: Option<RawSnapshot>,
    #[serde(default)]
    restore: Option<RawRestore>,
    #[serde(default)]
    host_memory: Option<HostMemory>,
    pass: Option<u64>,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    #[serde(default)]
    restore_start_ns: Option<u64>,
    #[serde(default)]
    restore_end_ns: Option<u64>,
    #[serde(default)]
    tid: Option<u64>,
    #[serde(default)]
    kernel_object: Option<u64>,
    #[serde(default)]
    grid_size: Option<[u64; 3]>,
    #[serde(default)]
    workgroup_size: Option<[u64; 3]>,
    #[serde(default)]
    private_segment_size: Option<u64>,
    #[serde(default)]
    group_segment_size: Option<u64>,
}

#[derive(serde::Deserialize)]
struct RawSnapshot {
    regions: u64,
    bytes: u64,
    start_ns: u64,
    end_ns: u64,
    #[serde(default)]
    store: Option<String>,
}

#[derive(serde::Deserialize)]
struct RawRestore {
    count: u64,
    regions: u64,
    bytes: u64,
    #[serde(default)]
    skipped_regions: u64,
    ns: u64,
}

fn parse_pass(v: &Line) -> Option<((u64, u64), Pass)> {
    let restore = match (v.restore_start_ns, v.restore_end_ns) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    let key = (v.pid?, v.dispatch_id?);
    Some((
        key,
        Pass {
            pass: v.pass?,
            start_ns: v.start_ns?,
            end_ns: v.end_ns?,
            restore,
        },
    ))
}

fn parse_dispatch(v: Line) -> Option<Dispatch> {
    let launch = match (v.grid_size, v.workgroup_size) {
        (Some(grid_size), Some(workgroup_size)) => Some(Launch {
            tid: v.tid.unwrap_or(0),
            kernel_object: v.kernel_object.unwrap_or(0),
            grid_size,
            workgroup_size,
            private_segment_size: v.private_segment_size.unwrap_or(0),
            group_segment_size: v.group_segment_size.unwrap_or(0),
        }),
        _ => None,
    };
    Some(Dispatch {
        pid: v.pid?,
        dispatch_id: v.dispatch_id?,
        kernel: v.kernel,
        agent: v.agent?,
        agent_name: v.agent_name.unwrap_or_default(),
        queue_id: v.queue_id?,
        replayed: v.replayed?,
        skipped: v.skipped,
        window_start_ns: v.window_start_ns?,
        window_end_ns: v.window_end_ns?,
        snapshot: v.snapshot.map(|s| SnapshotStats {
            regions: s.regions,
            bytes: s.bytes,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            store: s.store.unwrap_or_default(),
        }),
        restore: v.restore.map(|r| RestoreStats {
            count: r.count,
            regions: r.regions,
            bytes: r.bytes,
            skipped_regions: r.skipped_regions,
            ns: r.ns,
        }),
        launch,
        host_memory: v.host_memory,
        passes: Vec::new(),
    })
}

/// Joins record lines into dispatches as they arrive: pass lines wait for their dispatch line.
#[derive(Debug, Default)]
pub struct Joiner {
    passes: HashMap<(u64, u64), Vec<Pass>>,
    /// Complete lines that were not valid records.
    pub malformed_lines: usize,
}

impl Joiner {
    /// Takes one complete line; returns the dispatch it completes, if it is a dispatch line.
    pub fn line(&mut self, line: &str) -> Option<Dispatch> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        let Ok(value) = serde_json::from_str::<Line>(line) else {
            self.malformed_lines += 1;
            return None;
        };
        match value.record.as_deref() {
            Some("pass") => match parse_pass(&value) {
                Some((key, pass)) => self.passes.entry(key).or_default().push(pass),
                None => self.malformed_lines += 1,
            },
            Some("dispatch") => match parse_dispatch(value) {
                Some(mut d) => {
                    if let Some(mut p) = self.passes.remove(&(d.pid, d.dispatch_id)) {
                        p.sort_by_key(|p| p.pass);
                        d.passes = p;
                    }
                    return Some(d);
                }
                None => self.malformed_lines += 1,
            },
            Some(_) => {}
            None => self.malformed_lines += 1,
        }
        None
    }

    /// Pass lines still waiting for their dispatch line.
    pub fn waiting_passes(&self) -> usize {
        self.passes.values().map(Vec::len).sum()
    }
}

/// Parses the text of record files. A final line without a newline (a write cut short by a
/// crash) is ignored, as are records of unknown kinds and unknown fields.
pub fn parse<'a>(texts: impl IntoIterator<Item = &'a str>) -> Collected {
    let mut joiner = Joiner::default();
    let mut dispatches = Vec::new();
    for text in texts {
        let complete = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => "",
        };
        dispatches.extend(complete.lines().filter_map(|l| joiner.line(l)));
    }
    dispatches.sort_by_key(|d| (d.pid, d.dispatch_id));
    Collected {
        dispatches,
        malformed_lines: joiner.malformed_lines,
        incomplete_passes: joiner.waiting_passes(),
    }
}

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
    use super::*;

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
                "{{\"record\":\"pass\",\"pid\":{pid},\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"pass\":{p},\"start_ns\":{},\"end_ns\":{},\"restore_start_ns\":{rs},\"restore_end_ns\":{re}}}\n",
                t,
                t + 100 + p
            );
            t += 130;
        }
        out += &format!(
            "{{\"record\":\"dispatch\",\"pid\":{pid},\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"replayed\":{},\"passes\":{passes},\"skipped\":null,\"window_start_ns\":{t0},\"window_end_ns\":{t},\"snapshot\":{{\"regions\":2,\"bytes\":4096,\"start_ns\":{t0},\"end_ns\":{snap_end},\"store\":\"host\"}},\"tid\":{},\"kernel_object\":4096,\"grid_size\":[4096,1,1],\"workgroup_size\":[64,1,1],\"private_segment_size\":0,\"group_segment_size\":16,\"restore\":{{\"count\":{},\"regions\":{},\"bytes\":{},\"skipped_regions\":0,\"ns\":{}}},\"future_field\":1}}\n",
            passes > 1,
            pid + 1,
            passes - 1,
            passes - 1,
            1024 * (passes - 1),
            30 * (passes - 1)
        );
        out
    }

    #[test]
    fn joins_passes_to_their_dispatch() {
        let text =
            replayed_lines(10, 1, "vec_add", 3, 1000) + &replayed_lines(10, 2, "scale", 2, 5000);
        let c = parse([text.as_str()]);
        assert_eq!(c.malformed_lines, 0);
        assert_eq!(c.dispatches.len(), 2);
        let d = &c.dispatches[0];
        assert_eq!(d.kernel_name(), "vec_add");
        assert!(d.replayed);
        assert_eq!(
            d.passes.iter().map(|p| p.pass).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(d.passes[0].restore, Some((1150, 1180)));
        assert_eq!(d.passes[2].restore, None);
        assert_eq!(d.snapshot.as_ref().unwrap().bytes, 4096);
        assert_eq!(d.restore.as_ref().unwrap().bytes, 2048);
        assert_eq!(c.dispatches[1].passes.len(), 2);
        let launch = d.launch.as_ref().unwrap();
        assert_eq!(
            (launch.tid, launch.grid_size, launch.workgroup_size),
            (11, [4096, 1, 1], [64, 1, 1])
        );
        assert_eq!(launch.group_segment_size, 16);
        assert_eq!(d.snapshot.as_ref().unwrap().store, "host");
        assert_eq!(d.visible_pass().unwrap().pass, 2);
        assert_eq!(d.span(), (1000, d.window_end_ns));
    }

    #[test]
    fn a_cut_last_line_and_an_unfinished_dispatch_are_dropped() {
        let full = replayed_lines(10, 1, "k", 2, 0);
        let next = replayed_lines(10, 2, "k", 3, 9000);
        // The crash came after the first pass line of dispatch 2 and in the middle of the second.
        let lines: Vec<&str> = next.lines().collect();
        let cut = format!("{full}{}\n{}", lines[0], &lines[1][..20]);
        let c = parse([cut.as_str()]);
        assert_eq!(c.dispatches.len(), 1);
        assert_eq!(c.dispatches[0].dispatch_id, 1);
        assert_eq!(c.incomplete_passes, 1);
        assert_eq!(c.malformed_lines, 0);
    }

    #[test]
    fn null_kernel_and_garbage_lines() {
        let text = "not json\n{\"record\":\"dispatch\",\"pid\":1}\n{\"record\":\"other\"}\n\
            {\"record\":\"dispatch\",\"pid\":1,\"dispatch_id\":4,\"kernel\":null,\"agent\":1,\"agent_name\":\"gfx90a\",\"queue_id\":0,\"replayed\":false,\"passes\":1,\"skipped\":\"filtered\",\"window_start_ns\":5,\"window_end_ns\":9,\"snapshot\":null,\"restore\":null}\n";
        let c = parse([text]);
        assert_eq!(c.malformed_lines, 2);
        assert_eq!(c.dispatches.len(), 1);
        assert_eq!(c.dispatches[0].kernel_name(), "<unknown>");
        assert_eq!(c.dispatches[0].skipped.as_deref(), Some("filtered"));
        assert!(c.dispatches[0].passes.is_empty());
        assert!(
            c.dispatches[0].launch.is_none(),
            "records without launch fields still read"
        );
        assert_eq!(c.dispatches[0].declined_reason(), None);
    }

    #[test]
    fn several_processes_sort_by_pid_then_id() {
        let a = replayed_lines(20, 2, "k", 1, 0) + &replayed_lines(20, 1, "k", 1, 0);
        let b = replayed_lines(5, 1, "k", 1, 0);
        let c = parse([a.as_str(), b.as_str()]);
        let keys: Vec<_> = c
            .dispatches
            .iter()
            .map(|d| (d.pid, d.dispatch_id))
            .collect();
        assert_eq!(keys, vec![(5, 1), (20, 1), (20, 2)]);
    }
}
