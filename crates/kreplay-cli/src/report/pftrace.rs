//! The Perfetto protobuf trace (`-f pftrace`, `<name>_results.pftrace`).
//!
//! Tracks: one process track per application process (`<app> (pid N)`); under it one track per
//! agent (`gfx942 (agent H)`); under each agent one track per HSA queue (`queue Q`) and one
//! counter track `bytes restored` (cumulative bytes written back between passes on that agent,
//! stepping at the end of each replayed dispatch). On a queue track each dispatch is a slice
//! named after its kernel (category `dispatch`) with the `snapshot`, `pass N` and `restore`
//! slices nested inside it. Timestamps are host `CLOCK_MONOTONIC` nanoseconds.

use super::perfetto_proto::{DebugAnnotation as Arg, TraceBuilder, UNIT_SIZE_BYTES};
use crate::records::Dispatch;
use std::collections::BTreeMap;

/// Builds the encoded trace for `dispatches` of application `app`.
pub fn trace(dispatches: &[Dispatch], app: &str) -> Vec<u8> {
    let mut b = TraceBuilder::new();
    let mut processes = BTreeMap::new();
    let mut agents = BTreeMap::new();
    let mut queues = BTreeMap::new();
    let mut counters: BTreeMap<(u64, u64), (u64, i64)> = BTreeMap::new();
    for d in dispatches {
        let process = *processes
            .entry(d.pid)
            .or_insert_with(|| b.process_track(d.pid, &format!("{app} (pid {})", d.pid)));
        let agent = *agents.entry((d.pid, d.agent)).or_insert_with(|| {
            b.track(
                Some(process),
                &format!("{} (agent {})", d.agent_name, d.agent),
            )
        });
        let queue = *queues
            .entry((d.pid, d.queue_id))
            .or_insert_with(|| b.track(Some(agent), &format!("queue {}", d.queue_id)));
        let id = d.dispatch_id;
        let mut args = vec![
            Arg::uint("dispatch_id", id),
            Arg::uint("agent", d.agent),
            Arg::text("agent_name", &d.agent_name),
            Arg::uint("passes", d.passes.len() as u64),
            Arg::flag("replayed", d.replayed),
        ];
        if let Some(k) = &d.kernel {
            args.push(Arg::text("kernel", k));
        }
        if let Some(s) = &d.skipped {
            args.push(Arg::text("skipped", s));
        }
        if let Some(s) = &d.snapshot {
            args.push(Arg::uint("snapshot_bytes", s.bytes));
        }
        if let Some(r) = &d.restore {
            args.push(Arg::uint("restore_bytes", r.bytes));
        }
        let span = d.span();
        b.slice(queue, span, d.kernel_name(), "dispatch", args);
        if let Some(s) = &d.snapshot {
            b.slice(
                queue,
                (s.start_ns, s.end_ns),
                "snapshot",
                "snapshot",
                vec![
                    Arg::uint("dispatch_id", id),
                    Arg::uint("regions", s.regions),
                    Arg::uint("bytes", s.bytes),
                ],
            );
        }
        for p in &d.passes {
            b.slice(
                queue,
                (p.start_ns, p.end_ns),
                &format!("pass {}", p.pass),
                "pass",
                vec![Arg::uint("dispatch_id", id), Arg::uint("pass", p.pass)],
            );
            if let Some(r) = p.restore {
                b.slice(
                    queue,
                    r,
                    "restore",
                    "restore",
                    vec![
                        Arg::uint("dispatch_id", id),
                        Arg::uint("after_pass", p.pass),
                    ],
                );
            }
        }
        if let Some(r) = d.restore.as_ref().filter(|r| r.count > 0) {
            let (track, total) = counters.entry((d.pid, d.agent)).or_insert_with(|| {
                let t = b.counter_track(Some(agent), "bytes restored", UNIT_SIZE_BYTES);
                b.counter(t, span.0, 0);
                (t, 0)
            });
            *total = total.saturating_add(i64::try_from(r.bytes).unwrap_or(i64::MAX));
            b.counter(*track, span.1, *total);
        }
    }
    b.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{parse, tests::replayed_lines};
    use crate::report::perfetto_proto::{TYPE_COUNTER, TYPE_SLICE_BEGIN, Trace};
    use prost::Message;

    #[test]
    fn tracks_and_slices_of_two_dispatches() {
        let text =
            replayed_lines(3, 1, "vec_add", 3, 1000) + &replayed_lines(3, 2, "scale", 1, 9000);
        let trace =
            Trace::decode(trace(&parse([text.as_str()]).dispatches, "app").as_slice()).unwrap();
        let names: Vec<String> = trace
            .packet
            .iter()
            .filter_map(|p| p.track_descriptor.as_ref())
            .map(|t| {
                t.name
                    .clone()
                    .or_else(|| t.process.as_ref().and_then(|p| p.process_name.clone()))
                    .unwrap()
            })
            .collect();
        assert_eq!(
            names,
            [
                "app (pid 3)",
                "gfx942 (agent 7)",
                "queue 1",
                "bytes restored"
            ]
        );
        let begins: Vec<String> = trace
            .packet
            .iter()
            .filter_map(|p| p.track_event.as_ref())
            .filter(|e| e.r#type == Some(TYPE_SLICE_BEGIN))
            .map(|e| e.name.clone().unwrap())
            .collect();
        assert_eq!(
            begins,
            [
                "vec_add", "snapshot", "pass 0", "restore", "pass 1", "restore", "pass 2", "scale",
                "snapshot", "pass 0"
            ]
        );
        let counters: Vec<i64> = trace
            .packet
            .iter()
            .filter_map(|p| p.track_event.as_ref())
            .filter(|e| e.r#type == Some(TYPE_COUNTER))
            .map(|e| e.counter_value.unwrap())
            .collect();
        assert_eq!(counters, [0, 2048]);
    }
}
