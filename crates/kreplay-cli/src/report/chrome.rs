//! Chrome trace-event JSON (`-f chrome`), which Perfetto and chrome://tracing load.
//!
//! Structure (documented in `docs/user-guide.md`):
//!
//! - one process per application process (`pid`), named `<app> (pid N)` by a `process_name`
//!   metadata event;
//! - one thread per HSA queue (`tid` = queue id), named `queue Q (gfx942)`;
//! - per dispatch one complete event (`ph: "X"`, `cat: "dispatch"`, name = kernel) spanning its
//!   replay window; nested inside it (same pid/tid, contained in time) one `pass N` slice per
//!   pass (`cat: "pass"`), one `snapshot` slice (`cat: "snapshot"`) and one `restore` slice per
//!   restore between passes (`cat: "restore"`). A pass that collected hardware counters has
//!   its `counter_group` and `counters` (`{name: value}`) among its arguments.
//!
//! `ts` and `dur` are microseconds (with nanosecond decimals) of the host monotonic clock.

use crate::run_records::Dispatch;
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Nanoseconds as microseconds with three decimals, exactly (no float rounding).
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A JSON string literal.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// One complete event, with its sort key (start, then longer first).
struct Slice {
    start: u64,
    dur: u64,
    text: String,
}

fn complete(name: &str, cat: &str, d: &Dispatch, start: u64, end: u64, args: &str) -> Slice {
    let dur = end.saturating_sub(start);
    let text = format!(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{cat}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{args}}}",
        quoted(name),
        d.pid,
        d.queue_id,
        micros(start),
        micros(dur)
    );
    Slice { start, dur, text }
}

/// Builds the trace document (JSON text) for `dispatches` of application `app`.
pub fn trace(dispatches: &[Dispatch], app: &str) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut push = |out: &mut String, text: &str| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(text);
    };
    let pids: BTreeSet<u64> = dispatches.iter().map(|d| d.pid).collect();
    for pid in &pids {
        let e = json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": format!("{app} (pid {pid})")}});
        push(&mut out, &e.to_string());
    }
    let queues: BTreeSet<(u64, u64, &str)> = dispatches
        .iter()
        .map(|d| (d.pid, d.queue_id, d.agent_name.as_str()))
        .collect();
    for (pid, queue, agent) in &queues {
        let e = json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": queue, "args": {"name": format!("queue {queue} ({agent})")}});
        push(&mut out, &e.to_string());
    }
    let mut slices = Vec::with_capacity(dispatches.len() * 8);
    for d in dispatches {
        let id = d.dispatch_id;
        let mut start = d.window_start_ns;
        let mut end = d.window_end_ns.max(start);
        if let Some(s) = &d.snapshot {
            start = start.min(s.start_ns);
            end = end.max(s.end_ns);
            let args = format!(
                "{{\"dispatch_id\":{id},\"regions\":{},\"bytes\":{}}}",
                s.regions, s.bytes
            );
            slices.push(complete(
                "snapshot", "snapshot", d, s.start_ns, s.end_ns, &args,
            ));
        }
        let kernel = d
            .kernel
            .as_deref()
            .map_or_else(|| "null".to_owned(), quoted);
        for p in &d.passes {
            start = start.min(p.start_ns);
            end = end.max(p.end_ns);
            let counters = if p.counters.is_empty() {
                String::new()
            } else {
                format!(
                    ",\"counter_group\":{},\"counters\":{}",
                    serde_json::json!(p.group),
                    super::counters::pass_json(p)
                )
            };
            let args = format!(
                "{{\"dispatch_id\":{id},\"pass\":{},\"kernel\":{kernel}{counters}}}",
                p.pass
            );
            slices.push(complete(
                &format!("pass {}", p.pass),
                "pass",
                d,
                p.start_ns,
                p.end_ns,
                &args,
            ));
            if let Some((rs, re)) = p.restore {
                start = start.min(rs);
                end = end.max(re);
                let args = format!("{{\"dispatch_id\":{id},\"after_pass\":{}}}", p.pass);
                slices.push(complete("restore", "restore", d, rs, re, &args));
            }
        }
        let opt = |v: Option<u64>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
        let mut args = String::new();
        let _ = write!(
            args,
            "{{\"dispatch_id\":{id},\"agent\":{},\"agent_name\":{},\"passes\":{},\"replayed\":{},\"skipped\":{},\"snapshot_bytes\":{},\"restore_bytes\":{}}}",
            d.agent,
            quoted(&d.agent_name),
            d.passes.len(),
            d.replayed,
            d.skipped
                .as_deref()
                .map_or_else(|| "null".to_owned(), quoted),
            opt(d.snapshot.as_ref().map(|s| s.bytes)),
            opt(d.restore.as_ref().map(|r| r.bytes)),
        );
        slices.push(complete(d.kernel_name(), "dispatch", d, start, end, &args));
    }
    // Parents before children: earlier start first, and at equal start the longer slice first.
    slices.sort_by(|a, b| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));
    for s in &slices {
        push(&mut out, &s.text);
    }
    out.push_str("\n]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_records::{parse, tests::replayed_lines};

    #[test]
    fn each_dispatch_contains_its_passes_snapshot_and_restores() {
        let text =
            replayed_lines(3, 1, "vec_add", 3, 1000) + &replayed_lines(3, 2, "scale", 1, 9000);
        let dispatches = parse([text.as_str()]).dispatches;
        let doc: serde_json::Value = serde_json::from_str(&trace(&dispatches, "app")).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let by_cat = |cat: &str| {
            events
                .iter()
                .filter(|e| e["cat"] == cat)
                .collect::<Vec<_>>()
        };
        assert_eq!(by_cat("dispatch").len(), 2);
        assert_eq!(by_cat("pass").len(), 4);
        assert_eq!(by_cat("snapshot").len(), 2);
        assert_eq!(by_cat("restore").len(), 2);
        let meta: Vec<_> = events.iter().filter(|e| e["ph"] == "M").collect();
        assert_eq!(meta.len(), 2);
        assert_eq!(meta[0]["args"]["name"], "app (pid 3)");
        assert_eq!(meta[1]["args"]["name"], "queue 1 (gfx942)");
        for parent in by_cat("dispatch") {
            let (ps, pe) = (
                parent["ts"].as_f64().unwrap(),
                parent["ts"].as_f64().unwrap() + parent["dur"].as_f64().unwrap(),
            );
            let id = &parent["args"]["dispatch_id"];
            let kids: Vec<_> = events
                .iter()
                .filter(|e| {
                    e["cat"] != "dispatch" && e["ph"] == "X" && &e["args"]["dispatch_id"] == id
                })
                .collect();
            assert!(!kids.is_empty());
            for k in kids {
                let (ks, ke) = (
                    k["ts"].as_f64().unwrap(),
                    k["ts"].as_f64().unwrap() + k["dur"].as_f64().unwrap(),
                );
                assert!(ps <= ks && ke <= pe, "{k} outside {parent}");
                assert_eq!(k["tid"], parent["tid"]);
            }
        }
        // Microseconds: the first dispatch starts at 1000 ns; its first pass lasts 100 ns.
        assert_eq!(by_cat("dispatch")[0]["ts"].as_f64().unwrap(), 1.0);
        assert_eq!(by_cat("pass")[0]["dur"].as_f64().unwrap(), 0.1);
        assert_eq!(micros(1_234_567), "1234.567");
        assert_eq!(micros(5), "0.005");
        // Sorted so that each parent precedes its children.
        let first_x = events.iter().position(|e| e["ph"] == "X").unwrap();
        assert_eq!(events[first_x]["cat"], "dispatch");
    }
}
