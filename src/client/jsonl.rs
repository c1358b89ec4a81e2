//! JSON-lines records of the built-in client (`KREPLAY_OUTPUT_DIR/kreplay-<pid>.jsonl`).

use crate::abi::kreplay_dispatch_info_t;
use crate::replay::contract::DispatchSummary;

/// The launch geometry of a dispatch and the thread that submitted it, taken from the dispatch
/// packet when the client is asked for the pass count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// Kernel thread id (`gettid`) of the submitting thread.
    pub tid: u64,
    /// Kernel object of the packet.
    pub kernel_object: u64,
    /// Grid size x, y, z (work-items).
    pub grid_size: [u32; 3],
    /// Work-group size x, y, z.
    pub workgroup_size: [u16; 3],
    /// Private segment bytes per work-item.
    pub private_segment_size: u32,
    /// Group segment bytes per work-group.
    pub group_segment_size: u32,
    /// What the kernel's descriptor says, when the loader has a host copy of it.
    pub symbol: Option<kreplay_records::KernelSymbol>,
}

impl Launch {
    /// The launch of `d`, submitted by the calling thread.
    pub fn of(d: &kreplay_dispatch_info_t) -> Self {
        // SAFETY: gettid has no memory-safety requirements.
        let tid = unsafe { libc::gettid() };
        Launch {
            tid: u64::try_from(tid).unwrap_or(0),
            kernel_object: d.kernel_object,
            grid_size: d.grid_size,
            workgroup_size: d.workgroup_size,
            private_segment_size: d.private_segment_size,
            group_segment_size: d.group_segment_size,
            symbol: None,
        }
    }
}

/// The lines of one dispatch (`kreplay_records`' format): its `pass` lines, then its
/// `dispatch` line, with the launch fields when `launch` is known. The summary's times are
/// CLOCK_MONOTONIC; the records are CLOCK_BOOTTIME, the clock rocprofiler-sdk writes, so the
/// times move by the offset between the two clocks now.
pub fn dispatch_lines(
    pid: u32,
    s: &DispatchSummary,
    filtered: bool,
    launch: Option<&Launch>,
) -> String {
    dispatch_record(pid, s, filtered, launch).lines()
}

/// The record of one dispatch, before its lines are written (the caller adds the counters).
pub fn dispatch_record(
    pid: u32,
    s: &DispatchSummary,
    filtered: bool,
    launch: Option<&Launch>,
) -> kreplay_records::DispatchRecord {
    let offset = kreplay_records::boottime_minus_monotonic_ns();
    let at = |t: u64| t.saturating_add(offset);
    let skipped = if filtered {
        Some("filtered".to_owned())
    } else {
        s.declined.clone()
    };
    kreplay_records::DispatchRecord {
        pid: u64::from(pid),
        dispatch_id: s.dispatch_id,
        kernel: s.kernel.clone(),
        agent: s.agent,
        agent_name: s.agent_name.clone(),
        queue_id: s.queue_id,
        skipped,
        stopped: s.stopped.clone(),
        untimed: s.untimed,
        window: (at(s.window.0), at(s.window.1)),
        passes: s
            .passes
            .iter()
            .map(|p| kreplay_records::PassRecord {
                start_ns: at(p.start_ns),
                end_ns: at(p.end_ns),
                restore: p.restore.map(|(a, b)| (at(a), at(b))),
                ..kreplay_records::PassRecord::default()
            })
            .collect(),
        snapshot: s.snapshot.map(|c| kreplay_records::SnapshotStats {
            regions: c.regions,
            bytes: c.bytes,
            start_ns: at(c.start_ns),
            end_ns: at(c.end_ns),
            store: c.store_kind().to_owned(),
        }),
        restore: s.restore.map(|r| kreplay_records::RestoreStats {
            count: r.count,
            regions: r.regions,
            bytes: r.bytes,
            skipped_regions: r.skipped_regions,
            ns: r.ns,
        }),
        launch: launch.map(|l| kreplay_records::Launch {
            tid: l.tid,
            kernel_object: l.kernel_object,
            grid_size: l.grid_size.map(u64::from),
            workgroup_size: l.workgroup_size.map(u64::from),
            private_segment_size: u64::from(l.private_segment_size),
            group_segment_size: u64::from(l.group_segment_size),
        }),
        symbol: launch.and_then(|l| l.symbol),
        host_memory: s.host_memory.as_ref().map(|h| kreplay_records::HostMemory {
            policy: h.policy.clone(),
            reachable: u64::from(h.reachable),
            saved_bytes: h.saved_bytes,
            restored_bytes: h.restored_bytes,
            unrestored: h.unrestored.clone(),
            other_writers: h.other_writers.clone(),
            verify_mismatches: h.verify_mismatches.clone(),
        }),
        pmc: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::contract::{PassTimes, RestoreTotals};
    use crate::snapshot::CaptureStats;
    use serde_json::{Value, json};

    #[test]
    fn pass_lines_then_dispatch_line() {
        let s = DispatchSummary {
            dispatch_id: 3,
            kernel: Some("inc".into()),
            agent: 9,
            agent_name: "gfx942".into(),
            queue_id: 1,
            declined: None,
            stopped: None,
            window: (10, 90),
            passes: vec![
                PassTimes {
                    start_ns: 20,
                    end_ns: 30,
                    restore: Some((31, 35)),
                },
                PassTimes {
                    start_ns: 40,
                    end_ns: 50,
                    restore: None,
                },
            ],
            snapshot: Some(CaptureStats {
                regions: 2,
                bytes: 64,
                start_ns: 12,
                end_ns: 18,
                device_bytes: 64,
            }),
            restore: Some(RestoreTotals {
                count: 1,
                regions: 2,
                bytes: 64,
                skipped_regions: 0,
                ns: 4,
            }),
            host_memory: Some(crate::host_memory::HostMemoryReport {
                policy: "snapshot".into(),
                reachable: 1,
                saved_bytes: 4096,
                restored_bytes: 8192,
                unrestored: vec!["locked host memory at 0x1000 (16 bytes)".into()],
                ..Default::default()
            }),
            untimed: false,
        };
        let launch = Launch {
            tid: 5,
            kernel_object: 0x1000,
            grid_size: [256, 2, 1],
            workgroup_size: [64, 1, 1],
            private_segment_size: 16,
            group_segment_size: 512,
            symbol: Some(kreplay_records::KernelSymbol {
                kernarg_segment_size: 24,
                sgpr_count: 32,
                ..Default::default()
            }),
        };
        let text = dispatch_lines(77, &s, false, Some(&launch));
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["record"], "pass");
        let t = |v: &Value| v.as_u64().unwrap();
        assert_eq!(lines[0]["clock"], "boottime");
        // Moved to CLOCK_BOOTTIME by one offset, at least the monotonic time itself.
        let offset = t(&lines[0]["start_ns"]) - 20;
        assert_eq!(t(&lines[0]["restore_start_ns"]), 31 + offset);
        assert_eq!(t(&lines[2]["window_end_ns"]), 90 + offset);
        assert_eq!(lines[1]["pass"], 1);
        assert!(lines[1]["restore_end_ns"].is_null());
        let d = &lines[2];
        assert_eq!(d["record"], "dispatch");
        assert_eq!(d["pid"], 77);
        assert_eq!(d["replayed"], true);
        assert_eq!(d["passes"], 2);
        assert!(d["skipped"].is_null());
        assert_eq!(d["snapshot"]["bytes"], 64);
        assert_eq!(d["restore"]["count"], 1);
        assert_eq!(d["snapshot"]["store"], "device");
        assert_eq!(d["host_memory"]["saved_bytes"], 4096);
        assert_eq!(d["host_memory"]["restored_bytes"], 8192);
        assert_eq!(d["host_memory"]["policy"], "snapshot");
        assert_eq!(
            d["host_memory"]["unrestored"],
            json!(["locked host memory at 0x1000 (16 bytes)"])
        );
        assert_eq!(d["host_memory"]["other_writers"], json!([]));
        assert_eq!(d["tid"], 5);
        assert_eq!(d["symbol"]["kernarg_segment_size"], 24);
        assert_eq!(d["symbol"]["sgpr_count"], 32);
        assert_eq!(d["grid_size"], json!([256, 2, 1]));
        assert_eq!(d["workgroup_size"], json!([64, 1, 1]));
        assert_eq!(
            (
                d["private_segment_size"].as_u64(),
                d["group_segment_size"].as_u64()
            ),
            (Some(16), Some(512))
        );
        let f = dispatch_lines(
            77,
            &DispatchSummary {
                kernel: None,
                passes: vec![PassTimes::default()],
                ..s.clone()
            },
            true,
            None,
        );
        let d: Value = serde_json::from_str(f.lines().last().unwrap()).unwrap();
        assert!(d.get("tid").is_none() && d.get("grid_size").is_none());
        assert_eq!(d["skipped"], "filtered");
        assert!(d["kernel"].is_null());
        assert_eq!(d["replayed"], false);
        assert_eq!(d["timed"], true);
        let u = dispatch_lines(
            77,
            &DispatchSummary {
                passes: Vec::new(),
                window: (60, 60),
                untimed: true,
                ..s
            },
            true,
            None,
        );
        let lines: Vec<Value> = u
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "an untimed dispatch has no pass line: {u}");
        assert_eq!(lines[0]["passes"], 1);
        assert_eq!(lines[0]["timed"], false);
        assert_eq!(
            lines[0]["window_start_ns"].as_u64(),
            lines[0]["window_end_ns"].as_u64()
        );
    }
}
