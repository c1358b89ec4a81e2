//! The Perfetto protobuf trace (`-f pftrace`, `<name>_results.pftrace`), laid out as rocprofv3
//! lays out kernel dispatches, with kreplay's replay beside them.
//!
//! Tracks: one process track per application process, named by the application's command;
//! under it one track per agent (`Agent 1 (GPU 0, gfx942)`: the node index, the GPU index and
//! the agent's name); under each agent, per HSA queue, the track `QUEUE [q]` whose slices are
//! the kernels' executions (each dispatch's kept pass, named by the kernel, with rocprofv3's
//! arguments) and the track `QUEUE [q] replay` whose slices are the replay windows (`replay`),
//! each with its `snapshot`, `pass N` and `restore` slices inside; and the counter track
//! `bytes restored` (cumulative bytes written back between passes on that agent, stepping at
//! the end of each replayed dispatch). With hardware counters, each agent also has one counter
//! track per counter, `PMC <NAME>`, that steps to the value a pass collected over that pass's
//! span and back to 0 (never a sum over passes); the `pass N` slices carry their counter
//! values and group as arguments, and the kernel slices each counter's value. Times are
//! CLOCK_BOOTTIME nanoseconds, which a clock snapshot at the start of the trace states.

use super::counters;
use super::kernel_name::display_name;
use super::perfetto_proto::{DebugAnnotation as Arg, TraceBuilder, UNIT_COUNT, UNIT_SIZE_BYTES};
use super::rocprofv3::Identities;
use crate::run_records::{Dispatch, Pass};
use std::collections::BTreeMap;

/// The kernel slice's arguments, named as rocprofv3 names them, then kreplay's.
fn kernel_args(d: &Dispatch, ids: &Identities) -> Vec<Arg> {
    let (start, end) = d.kernel_time();
    let launch = d.launch.clone().unwrap_or_default();
    let dim = |v: [u64; 3]| format!("({},{},{})", v[0], v[1], v[2]);
    let mut args = vec![
        Arg::uint("begin_ns", start),
        Arg::uint("end_ns", end),
        Arg::uint("delta_ns", end.saturating_sub(start)),
        Arg::text("kind", "KERNEL_DISPATCH"),
        Arg::uint("agent", ids.agent(d)),
        Arg::uint("corr_id", d.dispatch_id),
        Arg::uint("queue", d.queue_id),
        Arg::uint("tid", launch.tid),
        Arg::uint("kernel_id", ids.kernel(d)),
        Arg::uint("Scratch_Size", launch.private_segment_size),
        Arg::uint("LDS_Block_Size", launch.group_segment_size),
        Arg::text("workgroup_size", &dim(launch.workgroup_size)),
        Arg::text("grid_size", &dim(launch.grid_size)),
        Arg::uint("stream_id", 0),
        Arg::uint("dispatch_id", d.dispatch_id),
        Arg::uint("passes", d.passes.len() as u64),
        Arg::flag("replayed", d.replayed),
    ];
    if let Some(s) = &d.skipped {
        args.push(Arg::text("skipped", s));
    }
    for c in counters::per_dispatch(d) {
        args.push(Arg::real(&c.name, c.value));
    }
    args
}

/// The arguments of pass `p`'s slice: the pass, then its group and counter values.
fn pass_args(d: &Dispatch, p: &Pass, kept: bool) -> Vec<Arg> {
    let mut args = vec![
        Arg::uint("dispatch_id", d.dispatch_id),
        Arg::uint("pass", p.pass),
        Arg::flag("kept", kept),
    ];
    if let Some(g) = p.group {
        args.push(Arg::uint("counter_group", g));
    }
    for c in &p.counters {
        args.push(Arg::real(&c.name, c.value));
    }
    args
}

/// The counter tracks of one agent: `PMC <NAME>` per counter, made on first use.
type AgentCounterTracks = BTreeMap<(u64, u64, String), u64>;

/// Steps each counter's track of `d`'s agent to each pass's value over that pass.
fn pass_counter_steps(
    b: &mut TraceBuilder,
    tracks: &mut AgentCounterTracks,
    agent: u64,
    d: &Dispatch,
) {
    for p in &d.passes {
        for c in &p.counters {
            let track = *tracks
                .entry((d.pid, d.agent, c.name.clone()))
                .or_insert_with(|| {
                    b.counter_track(Some(agent), &format!("PMC {}", c.name), UNIT_COUNT)
                });
            b.real_counter(track, p.start_ns, c.value);
            b.real_counter(track, p.end_ns.max(p.start_ns), 0.0);
        }
    }
}

/// The replay window of `d` on `track`, with its snapshot, passes and restores inside.
fn replay_slices(b: &mut TraceBuilder, track: u64, d: &Dispatch) {
    let id = d.dispatch_id;
    let mut args = vec![
        Arg::uint("dispatch_id", id),
        Arg::text("kernel", d.kernel_name()),
        Arg::uint("passes", d.passes.len() as u64),
        Arg::flag("replayed", d.replayed),
    ];
    if let Some(s) = &d.snapshot {
        args.push(Arg::uint("snapshot_bytes", s.bytes));
    }
    if let Some(r) = &d.restore {
        args.push(Arg::uint("restore_bytes", r.bytes));
    }
    b.slice(track, d.span(), "replay", "replay", args);
    if let Some(s) = &d.snapshot {
        b.slice(
            track,
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
    let kept = d.visible_pass().map(|p| p.pass);
    for p in &d.passes {
        b.slice(
            track,
            (p.start_ns, p.end_ns),
            &format!("pass {}", p.pass),
            "pass",
            pass_args(d, p, Some(p.pass) == kept),
        );
        if let Some(r) = p.restore {
            b.slice(
                track,
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
}

/// Builds the encoded trace for `dispatches` of application `app`.
pub fn trace(dispatches: &[Dispatch], app: &str) -> Vec<u8> {
    let ids = Identities::of(dispatches);
    let mut b = TraceBuilder::new();
    b.boottime_clock(
        kreplay_records::now_boottime_ns(),
        kreplay_records::now_boottime_ns()
            .saturating_sub(kreplay_records::boottime_minus_monotonic_ns()),
    );
    let mut processes = BTreeMap::new();
    let mut agents = BTreeMap::new();
    let mut queues = BTreeMap::new();
    let mut counters: BTreeMap<(u64, u64), (u64, i64)> = BTreeMap::new();
    let mut gpus: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pmc_tracks = AgentCounterTracks::new();
    for d in dispatches {
        let process = *processes
            .entry(d.pid)
            .or_insert_with(|| b.process_track(d.pid, app));
        let agent = *agents.entry((d.pid, d.agent)).or_insert_with(|| {
            let gpu = gpus.entry(d.pid).or_default();
            *gpu += 1;
            let name = format!(
                "Agent {} (GPU {}, {})",
                ids.agent(d),
                *gpu - 1,
                d.agent_name
            );
            b.track(Some(process), &name)
        });
        let n = queues.keys().filter(|(p, _)| *p == d.pid).count();
        let (kernels, replay) = *queues.entry((d.pid, d.queue_id)).or_insert_with(|| {
            (
                b.track(Some(agent), &format!("QUEUE [{n}]")),
                b.track(Some(agent), &format!("QUEUE [{n}] replay")),
            )
        });
        b.slice(
            kernels,
            d.kernel_time(),
            &display_name(d.kernel_name()),
            "KERNEL_DISPATCH",
            kernel_args(d, &ids),
        );
        replay_slices(&mut b, replay, d);
        pass_counter_steps(&mut b, &mut pmc_tracks, agent, d);
        if let Some(r) = d.restore.as_ref().filter(|r| r.count > 0) {
            let span = d.span();
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
    use crate::report::perfetto_proto::{CLOCK_BOOTTIME, TYPE_COUNTER, TYPE_SLICE_BEGIN, Trace};
    use crate::run_records::{parse, tests::replayed_lines};
    use prost::Message;

    #[test]
    fn kernel_slices_are_the_kept_passes_and_the_replay_is_beside_them() {
        let text =
            replayed_lines(3, 1, "vec_add", 3, 1000) + &replayed_lines(3, 2, "scale", 1, 9000);
        let dispatches = parse([text.as_str()]).dispatches;
        let trace = Trace::decode(trace(&dispatches, "app").as_slice()).unwrap();
        let clock = trace.packet[0].clock_snapshot.as_ref().unwrap();
        assert_eq!(clock.primary_trace_clock, Some(CLOCK_BOOTTIME as i32));
        let tracks: Vec<(u64, String)> = trace
            .packet
            .iter()
            .filter_map(|p| p.track_descriptor.as_ref())
            .map(|t| {
                let name = t
                    .name
                    .clone()
                    .or_else(|| t.process.as_ref().and_then(|p| p.process_name.clone()))
                    .unwrap();
                (t.uuid.unwrap(), name)
            })
            .collect();
        let names: Vec<&str> = tracks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            names,
            [
                "app",
                "Agent 1 (GPU 0, gfx942)",
                "QUEUE [0]",
                "QUEUE [0] replay",
                "bytes restored"
            ]
        );
        let begins: Vec<(u64, String, u64, Vec<String>)> = trace
            .packet
            .iter()
            .filter_map(|p| Some((p.timestamp?, p.track_event.as_ref()?)))
            .filter(|(_, e)| e.r#type == Some(TYPE_SLICE_BEGIN))
            .map(|(ts, e)| {
                (
                    e.track_uuid.unwrap(),
                    e.name.clone().unwrap(),
                    ts,
                    e.debug_annotations
                        .iter()
                        .map(|a| a.name.clone().unwrap())
                        .collect(),
                )
            })
            .collect();
        let on = |track: u64| -> Vec<&str> {
            begins
                .iter()
                .filter(|b| b.0 == track)
                .map(|b| b.1.as_str())
                .collect()
        };
        assert_eq!(on(tracks[2].0), ["vec_add", "scale"]);
        assert_eq!(
            on(tracks[3].0),
            [
                "replay", "snapshot", "pass 0", "restore", "pass 1", "restore", "pass 2", "replay",
                "snapshot", "pass 0"
            ]
        );
        // The kernel slice starts with the kept pass and carries rocprofv3's arguments.
        let kernel = &begins[begins.iter().position(|b| b.1 == "vec_add").unwrap()];
        assert_eq!(kernel.2, dispatches[0].passes[2].start_ns);
        for arg in [
            "begin_ns",
            "end_ns",
            "delta_ns",
            "kind",
            "agent",
            "corr_id",
            "queue",
            "tid",
            "kernel_id",
            "Scratch_Size",
            "LDS_Block_Size",
            "workgroup_size",
            "grid_size",
            "stream_id",
        ] {
            assert!(
                kernel.3.iter().any(|a| a == arg),
                "{arg} missing: {:?}",
                kernel.3
            );
        }
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
