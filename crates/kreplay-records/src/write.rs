//! Writing the records: what the tool knows of one finished dispatch, as lines.

use crate::{
    CounterValue, HostMemory, KernelSymbol, Launch, PmcStatus, RestoreStats, SnapshotStats,
};
use serde::Serialize;

/// One pass of a dispatch, as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PassRecord {
    /// Kernel start on the device (ns).
    pub start_ns: u64,
    /// Kernel end on the device (ns).
    pub end_ns: u64,
    /// The restore that followed this pass, if any: start and end (ns).
    pub restore: Option<(u64, u64)>,
    /// The counter group this pass collected, if counters were collected.
    pub group: Option<u64>,
    /// The counters this pass collected.
    pub counters: Vec<CounterValue>,
}

/// One finished dispatch, as written: its `pass` lines then its `dispatch` line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DispatchRecord {
    /// Process id.
    pub pid: u64,
    /// Dispatch id (shared by all passes).
    pub dispatch_id: u64,
    /// Kernel symbol name, when known.
    pub kernel: Option<String>,
    /// Agent handle.
    pub agent: u64,
    /// Agent name (`gfx942`).
    pub agent_name: String,
    /// HSA queue id.
    pub queue_id: u64,
    /// Why replay did not happen (`filtered`, `declined: ...`), if it did not.
    pub skipped: Option<String>,
    /// Why the passes stopped early, if they did.
    pub stopped: Option<String>,
    /// The dispatch ran once without being timed.
    pub untimed: bool,
    /// Replay window start and end (ns).
    pub window: (u64, u64),
    /// The passes, in order.
    pub passes: Vec<PassRecord>,
    /// Snapshot totals.
    pub snapshot: Option<SnapshotStats>,
    /// Restore totals.
    pub restore: Option<RestoreStats>,
    /// Launch geometry and submitting thread.
    pub launch: Option<Launch>,
    /// Kernel descriptor facts.
    pub symbol: Option<KernelSymbol>,
    /// Host and fine-grained memory of the replay window.
    pub host_memory: Option<HostMemory>,
    /// Counter collection, when counters were asked for.
    pub pmc: Option<PmcStatus>,
}

#[derive(Serialize)]
struct Common<'a> {
    pid: u64,
    dispatch_id: u64,
    kernel: &'a Option<String>,
    agent: u64,
    agent_name: &'a str,
    queue_id: u64,
    clock: &'static str,
}

#[derive(Serialize)]
struct PassLine<'a> {
    record: &'static str,
    #[serde(flatten)]
    common: &'a Common<'a>,
    pass: usize,
    start_ns: u64,
    end_ns: u64,
    restore_start_ns: Option<u64>,
    restore_end_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<u64>,
    #[serde(skip_serializing_if = "<[CounterValue]>::is_empty")]
    counters: &'a [CounterValue],
}

#[derive(Serialize)]
struct DispatchLine<'a> {
    record: &'static str,
    #[serde(flatten)]
    common: &'a Common<'a>,
    replayed: bool,
    passes: usize,
    timed: bool,
    skipped: &'a Option<String>,
    stopped: &'a Option<String>,
    window_start_ns: u64,
    window_end_ns: u64,
    snapshot: &'a Option<SnapshotStats>,
    restore: &'a Option<RestoreStats>,
    host_memory: &'a Option<HostMemory>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    launch: &'a Option<Launch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    symbol: &'a Option<KernelSymbol>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pmc: &'a Option<PmcStatus>,
}

impl DispatchRecord {
    /// The record lines, each ending in a newline: one per pass, then the dispatch line.
    pub fn lines(&self) -> String {
        let common = Common {
            pid: self.pid,
            dispatch_id: self.dispatch_id,
            kernel: &self.kernel,
            agent: self.agent,
            agent_name: &self.agent_name,
            queue_id: self.queue_id,
            clock: crate::BOOTTIME,
        };
        let mut out = String::new();
        let mut push = |line: serde_json::Result<String>| {
            // Serializing these plain structs cannot fail; a line is never half written.
            if let Ok(text) = line {
                out.push_str(&text);
                out.push('\n');
            }
        };
        for (i, p) in self.passes.iter().enumerate() {
            push(serde_json::to_string(&PassLine {
                record: "pass",
                common: &common,
                pass: i,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                restore_start_ns: p.restore.map(|r| r.0),
                restore_end_ns: p.restore.map(|r| r.1),
                group: p.group,
                counters: &p.counters,
            }));
        }
        push(serde_json::to_string(&DispatchLine {
            record: "dispatch",
            common: &common,
            replayed: self.passes.len() > 1,
            passes: if self.untimed { 1 } else { self.passes.len() },
            timed: !self.untimed,
            skipped: &self.skipped,
            stopped: &self.stopped,
            window_start_ns: self.window.0,
            window_end_ns: self.window.1,
            snapshot: &self.snapshot,
            restore: &self.restore,
            host_memory: &self.host_memory,
            launch: &self.launch,
            symbol: &self.symbol,
            pmc: &self.pmc,
        }));
        out
    }
}
