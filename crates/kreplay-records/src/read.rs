//! Reading the records back: pass lines joined to their dispatch line.

use crate::{
    CounterValue, HostMemory, KernelSymbol, Launch, PmcStatus, RestoreStats, SnapshotStats,
};
use std::collections::HashMap;

/// One pass of a dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    /// Pass number from 0.
    pub pass: u64,
    /// Kernel start on the device.
    pub start_ns: u64,
    /// Kernel end on the device.
    pub end_ns: u64,
    /// The restore that followed this pass, if any.
    pub restore: Option<(u64, u64)>,
    /// The counter group this pass collected, if counters were collected.
    pub group: Option<u64>,
    /// The counters this pass collected (empty without counters).
    pub counters: Vec<CounterValue>,
}

impl Pass {
    /// Kernel duration of this pass.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A dispatch whose `dispatch` line was written, with its passes in order.
#[derive(Clone, Debug, PartialEq)]
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
    /// Kernel descriptor facts, when recorded.
    pub symbol: Option<KernelSymbol>,
    /// Host memory of the replay window, when recorded.
    pub host_memory: Option<HostMemory>,
    /// Why the passes stopped early, if they did.
    pub stopped: Option<String>,
    /// The dispatch was timed (false: it ran once untimed, its window is its submission).
    pub timed: bool,
    /// Counter collection, when counters were asked for.
    pub pmc: Option<PmcStatus>,
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

    /// The kernel's execution as the application saw it: the kept pass's start and end, or
    /// the replay window when no pass was timed.
    pub fn kernel_time(&self) -> (u64, u64) {
        self.visible_pass().map_or(
            (
                self.window_start_ns,
                self.window_end_ns.max(self.window_start_ns),
            ),
            |p| (p.start_ns, p.end_ns),
        )
    }

    /// Moves every time of the dispatch by `offset` ns (a change of clock).
    fn shift(&mut self, offset: u64) {
        let add = |t: &mut u64| *t = t.saturating_add(offset);
        add(&mut self.window_start_ns);
        add(&mut self.window_end_ns);
        if let Some(s) = &mut self.snapshot {
            add(&mut s.start_ns);
            add(&mut s.end_ns);
        }
        for p in &mut self.passes {
            add(&mut p.start_ns);
            add(&mut p.end_ns);
            if let Some((a, b)) = &mut p.restore {
                add(a);
                add(b);
            }
        }
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
    snapshot: Option<SnapshotStats>,
    #[serde(default)]
    restore: Option<RestoreStats>,
    #[serde(default)]
    symbol: Option<KernelSymbol>,
    #[serde(default)]
    host_memory: Option<HostMemory>,
    #[serde(default)]
    stopped: Option<String>,
    #[serde(default)]
    timed: Option<bool>,
    #[serde(default)]
    clock: Option<String>,
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
    #[serde(default)]
    group: Option<u64>,
    #[serde(default)]
    counters: Vec<CounterValue>,
    #[serde(default)]
    pmc: Option<PmcStatus>,
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
            group: v.group,
            counters: v.counters.clone(),
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
        snapshot: v.snapshot,
        restore: v.restore,
        launch,
        symbol: v.symbol,
        host_memory: v.host_memory,
        stopped: v.stopped,
        timed: v.timed.unwrap_or(true),
        pmc: v.pmc,
        passes: Vec::new(),
    })
}

/// Joins record lines into dispatches as they arrive: pass lines wait for their dispatch line.
#[derive(Debug, Default)]
pub struct Joiner {
    passes: HashMap<(u64, u64), Vec<Pass>>,
    /// CLOCK_BOOTTIME - CLOCK_MONOTONIC, measured at the first record without a clock.
    monotonic_offset: Option<u64>,
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
            Some("dispatch") => match (
                value.clock.as_deref() == Some(crate::BOOTTIME),
                parse_dispatch(value),
            ) {
                (boottime, Some(mut d)) => {
                    if let Some(mut p) = self.passes.remove(&(d.pid, d.dispatch_id)) {
                        p.sort_by_key(|p| p.pass);
                        d.passes = p;
                    }
                    if !boottime {
                        let offset = *self
                            .monotonic_offset
                            .get_or_insert_with(crate::boottime_minus_monotonic_ns);
                        d.shift(offset);
                    }
                    return Some(d);
                }
                (_, None) => self.malformed_lines += 1,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DispatchRecord, PassRecord};

    fn record(id: u64, passes: u64, t0: u64) -> DispatchRecord {
        DispatchRecord {
            pid: 10,
            dispatch_id: id,
            kernel: Some("vec_add".into()),
            agent: 7,
            agent_name: "gfx942".into(),
            queue_id: 1,
            window: (t0, t0 + 1000),
            passes: (0..passes)
                .map(|p| PassRecord {
                    start_ns: t0 + 100 + 200 * p,
                    end_ns: t0 + 150 + 200 * p,
                    restore: (p + 1 < passes).then_some((t0 + 160 + 200 * p, t0 + 190 + 200 * p)),
                    group: Some(p % 2),
                    counters: vec![CounterValue {
                        name: "SQ_WAVES".into(),
                        value: 512.0,
                        instances: vec![256.0, 256.0],
                        exactness: "exact".into(),
                        ..CounterValue::default()
                    }],
                })
                .collect(),
            snapshot: Some(SnapshotStats {
                regions: 2,
                bytes: 4096,
                start_ns: t0,
                end_ns: t0 + 50,
                store: "host".into(),
            }),
            restore: Some(RestoreStats {
                count: passes.saturating_sub(1),
                regions: 2,
                bytes: 2048,
                skipped_regions: 1,
                ns: 30,
            }),
            launch: Some(Launch {
                tid: 11,
                kernel_object: 0x1000,
                grid_size: [4096, 2, 1],
                workgroup_size: [64, 1, 1],
                private_segment_size: 16,
                group_segment_size: 512,
            }),
            symbol: Some(KernelSymbol {
                kernarg_segment_size: 24,
                kernarg_segment_alignment: Some(8),
                group_segment_size: 512,
                private_segment_size: 16,
                sgpr_count: 16,
                arch_vgpr_count: 8,
                accum_vgpr_count: 4,
            }),
            pmc: Some(PmcStatus {
                groups: 2,
                collected: vec![0, 1],
                missing: vec![],
                error: None,
            }),
            ..DispatchRecord::default()
        }
    }

    #[test]
    fn what_the_writer_writes_the_reader_reads() {
        let r = record(1, 3, 1000);
        let text = r.lines() + &record(2, 1, 5000).lines();
        let c = parse([text.as_str()]);
        assert_eq!((c.malformed_lines, c.incomplete_passes), (0, 0));
        assert_eq!(c.dispatches.len(), 2);
        let d = &c.dispatches[0];
        assert_eq!(d.kernel_name(), "vec_add");
        assert!(d.replayed && d.timed);
        assert_eq!(d.passes.len(), 3);
        assert_eq!(d.passes[0].restore, Some((1160, 1190)));
        assert_eq!(d.passes[2].restore, None);
        assert_eq!(d.snapshot, r.snapshot);
        assert_eq!(d.restore, r.restore);
        assert_eq!(d.launch, r.launch);
        assert_eq!(d.symbol, r.symbol);
        assert_eq!(d.pmc, r.pmc);
        assert_eq!(d.passes[1].group, Some(1));
        assert_eq!(d.passes[2].counters, r.passes[2].counters);
        assert_eq!(
            d.kernel_time(),
            (1500, 1550),
            "the last pass is the kept one"
        );
        assert_eq!(
            (d.window_start_ns, d.window_end_ns),
            (1000, 2000),
            "boottime times are kept as written"
        );
        assert!(!c.dispatches[1].replayed);
        let untimed = DispatchRecord {
            passes: Vec::new(),
            untimed: true,
            launch: None,
            symbol: None,
            ..record(3, 0, 9000)
        };
        let d = &parse([untimed.lines().as_str()]).dispatches[0];
        assert!(!d.timed && d.launch.is_none() && d.symbol.is_none());
        assert_eq!(d.kernel_time(), (9000, 10000));
    }

    #[test]
    fn monotonic_records_move_to_boottime() {
        let text = record(1, 2, 1000)
            .lines()
            .replace(",\"clock\":\"boottime\"", "");
        assert!(!text.contains("clock"));
        let d = &parse([text.as_str()]).dispatches[0];
        let offset = d.window_start_ns - 1000;
        assert!(offset <= crate::boottime_minus_monotonic_ns() + 1_000_000);
        assert_eq!(d.window_end_ns, 2000 + offset);
        assert_eq!(d.passes[1].start_ns, 1300 + offset);
        assert_eq!(d.passes[0].restore, Some((1160 + offset, 1190 + offset)));
        assert_eq!(d.snapshot.as_ref().unwrap().end_ns, 1050 + offset);
    }

    #[test]
    fn a_cut_last_line_garbage_and_unfinished_dispatches() {
        let full = record(1, 2, 0).lines();
        let next = record(2, 3, 9000).lines();
        let lines: Vec<&str> = next.lines().collect();
        let cut = format!(
            "not json\n{{\"record\":\"dispatch\",\"pid\":1}}\n{{\"record\":\"other\"}}\n{full}{}\n{}",
            lines[0],
            &lines[1][..20]
        );
        let c = parse([cut.as_str()]);
        assert_eq!(c.dispatches.len(), 1);
        assert_eq!(c.incomplete_passes, 1);
        assert_eq!(c.malformed_lines, 2);
    }

    #[test]
    fn several_processes_sort_by_pid_then_id() {
        let mut a = record(2, 1, 0);
        a.pid = 20;
        let mut b = record(1, 1, 0);
        b.pid = 20;
        let c = record(1, 1, 0);
        let text = a.lines() + &b.lines();
        let c = parse([text.as_str(), c.lines().as_str()]);
        let keys: Vec<_> = c
            .dispatches
            .iter()
            .map(|d| (d.pid, d.dispatch_id))
            .collect();
        assert_eq!(keys, vec![(10, 1), (20, 1), (20, 2)]);
    }
}
