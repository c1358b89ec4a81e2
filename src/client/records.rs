//! JSON-lines records of the built-in client (`KREPLAY_OUTPUT_DIR/kreplay-<pid>.jsonl`).

use crate::api::{DispatchSummary, kreplay_dispatch_info_t};
use serde_json::{Value, json};

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
        }
    }
}

/// The lines of one dispatch: its `pass` lines, then its `dispatch` line (with the launch
/// fields when `launch` is known).
pub fn dispatch_lines(
    pid: u32,
    s: &DispatchSummary,
    filtered: bool,
    launch: Option<&Launch>,
) -> String {
    let mut out = String::new();
    let common = |v: &mut serde_json::Map<String, Value>| {
        v.insert("pid".into(), json!(pid));
        v.insert("dispatch_id".into(), json!(s.dispatch_id));
        v.insert("kernel".into(), json!(s.kernel));
        v.insert("agent".into(), json!(s.agent));
        v.insert("agent_name".into(), json!(s.agent_name));
        v.insert("queue_id".into(), json!(s.queue_id));
    };
    for (i, p) in s.passes.iter().enumerate() {
        let mut m = serde_json::Map::new();
        m.insert("record".into(), json!("pass"));
        common(&mut m);
        m.insert("pass".into(), json!(i));
        m.insert("start_ns".into(), json!(p.start_ns));
        m.insert("end_ns".into(), json!(p.end_ns));
        m.insert("restore_start_ns".into(), json!(p.restore.map(|r| r.0)));
        m.insert("restore_end_ns".into(), json!(p.restore.map(|r| r.1)));
        out.push_str(&Value::Object(m).to_string());
        out.push('\n');
    }
    let skipped = if filtered {
        Some("filtered".to_owned())
    } else {
        s.declined.clone()
    };
    let mut m = serde_json::Map::new();
    m.insert("record".into(), json!("dispatch"));
    common(&mut m);
    m.insert("replayed".into(), json!(s.passes.len() > 1));
    m.insert(
        "passes".into(),
        json!(if s.untimed { 1 } else { s.passes.len() }),
    );
    m.insert("timed".into(), json!(!s.untimed));
    m.insert("skipped".into(), json!(skipped));
    m.insert("stopped".into(), json!(s.stopped));
    m.insert("window_start_ns".into(), json!(s.window.0));
    m.insert("window_end_ns".into(), json!(s.window.1));
    m.insert(
        "snapshot".into(),
        s.snapshot.map_or(Value::Null, |c| {
            json!({"regions": c.regions, "bytes": c.bytes, "start_ns": c.start_ns, "end_ns": c.end_ns, "store": c.store_kind()})
        }),
    );
    m.insert(
        "restore".into(),
        s.restore.map_or(Value::Null, |r| {
            json!({"count": r.count, "regions": r.regions, "bytes": r.bytes, "skipped_regions": r.skipped_regions, "ns": r.ns})
        }),
    );
    m.insert(
        "host_memory".into(),
        s.host_memory.as_ref().map_or(Value::Null, |h| {
            json!({"policy": h.policy, "reachable": h.reachable, "saved_bytes": h.saved_bytes,
                   "restored_bytes": h.restored_bytes, "unrestored": h.unrestored,
                   "other_writers": h.other_writers, "verify_mismatches": h.verify_mismatches})
        }),
    );
    if let Some(l) = launch {
        m.insert("tid".into(), json!(l.tid));
        m.insert("kernel_object".into(), json!(l.kernel_object));
        m.insert("grid_size".into(), json!(l.grid_size));
        m.insert("workgroup_size".into(), json!(l.workgroup_size));
        m.insert("private_segment_size".into(), json!(l.private_segment_size));
        m.insert("group_segment_size".into(), json!(l.group_segment_size));
    }
    out.push_str(&Value::Object(m).to_string());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PassTimes, RestoreTotals};
    use crate::snapshot::CaptureStats;

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
        };
        let text = dispatch_lines(77, &s, false, Some(&launch));
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["record"], "pass");
        assert_eq!(lines[0]["restore_start_ns"], 31);
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
            (
                lines[0]["window_start_ns"].as_u64(),
                lines[0]["window_end_ns"].as_u64()
            ),
            (Some(60), Some(60))
        );
    }
}
