//! The part of Perfetto's trace protobuf that kreplay writes (`Trace`, `TracePacket`,
//! `TrackDescriptor`, `TrackEvent`, `DebugAnnotation`), declared with the public field numbers,
//! and [`TraceBuilder`], which lays out tracks, nested slices and counters.
//!
//! Slices are given as (start, end) spans; the builder emits their begin and end events per
//! track in nesting order (a child clamped into its parent), so Perfetto rebuilds the nesting.

use std::collections::BTreeMap;

/// A whole trace: a sequence of packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets, in the order written.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// One packet: a clock snapshot, a track description or a track event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// The clocks' readings at one instant, naming the clock the trace's times are in.
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    /// Event time, ns.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer's sequence (every packet here is on sequence 1).
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// A slice begin/end or a counter value.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// Sequence flags (1: incremental state cleared).
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// A track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// Built-in clock ids of Perfetto (`BuiltinClock`).
pub const CLOCK_MONOTONIC: u32 = 3;
/// CLOCK_BOOTTIME, Perfetto's default trace clock.
pub const CLOCK_BOOTTIME: u32 = 6;

/// The readings of several clocks at one instant.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    /// The readings.
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<ClockReading>,
    /// The clock of the trace's timestamps.
    #[prost(int32, optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

/// One clock's reading.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockReading {
    /// Built-in clock id.
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    /// Its time, ns.
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
}

/// A track: a process, a plain named track, or a counter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// Unique id of the track in the trace.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Display name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Set on a process track.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// The enclosing track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Set on a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// A process.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// OS process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Name shown for the process.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// What a counter track counts.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// Unit: 1 ns, 2 count, 3 bytes.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
}

/// Counter unit: bytes.
pub const UNIT_SIZE_BYTES: i32 = 3;
/// Counter unit: a count.
pub const UNIT_COUNT: i32 = 2;

/// A slice begin or end, or a counter value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Arguments shown with the slice.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// 1 slice begin, 2 slice end, 4 counter.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track the event is on.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Categories.
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// Slice name (on begin events).
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// Counter value.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    /// Counter value, for counters with fractional values.
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
}

/// Event type: slice begin.
pub const TYPE_SLICE_BEGIN: i32 = 1;
/// Event type: slice end.
pub const TYPE_SLICE_END: i32 = 2;
/// Event type: instant.
pub const TYPE_INSTANT: i32 = 3;
/// Event type: counter value.
pub const TYPE_COUNTER: i32 = 4;

/// One named argument.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// A boolean value.
    #[prost(bool, optional, tag = "2")]
    pub bool_value: Option<bool>,
    /// An unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// A signed value.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// A floating-point value.
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    /// A string value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// The argument's name.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

impl DebugAnnotation {
    /// An unsigned argument.
    pub fn uint(name: &str, v: u64) -> Self {
        DebugAnnotation {
            name: Some(name.to_owned()),
            uint_value: Some(v),
            ..Default::default()
        }
    }

    /// A string argument.
    pub fn text(name: &str, v: &str) -> Self {
        DebugAnnotation {
            name: Some(name.to_owned()),
            string_value: Some(v.to_owned()),
            ..Default::default()
        }
    }

    /// A floating-point argument.
    pub fn real(name: &str, v: f64) -> Self {
        DebugAnnotation {
            name: Some(name.to_owned()),
            double_value: Some(v),
            ..Default::default()
        }
    }

    /// A boolean argument.
    pub fn flag(name: &str, v: bool) -> Self {
        DebugAnnotation {
            name: Some(name.to_owned()),
            bool_value: Some(v),
            ..Default::default()
        }
    }
}

/// A slice to lay out.
struct Slice {
    start: u64,
    end: u64,
    name: String,
    category: &'static str,
    args: Vec<DebugAnnotation>,
}

/// One value of a counter track.
#[derive(Clone, Copy, Debug)]
enum CounterSample {
    Integer(i64),
    Real(f64),
}

/// Collects tracks, slices and counter values, and writes the trace.
#[derive(Default)]
pub struct TraceBuilder {
    clock: Option<TracePacket>,
    tracks: Vec<TracePacket>,
    slices: BTreeMap<u64, Vec<Slice>>,
    instants: Vec<(u64, Slice)>,
    counters: Vec<(u64, u64, CounterSample)>,
    next_uuid: u64,
}

fn packet(timestamp: Option<u64>) -> TracePacket {
    TracePacket {
        timestamp,
        trusted_packet_sequence_id: Some(1),
        ..Default::default()
    }
}

impl TraceBuilder {
    /// An empty trace.
    pub fn new() -> Self {
        TraceBuilder {
            next_uuid: 1,
            ..Default::default()
        }
    }

    fn add_track(&mut self, descriptor: TrackDescriptor) -> u64 {
        let uuid = self.next_uuid;
        self.next_uuid += 1;
        let mut p = packet(None);
        p.track_descriptor = Some(TrackDescriptor {
            uuid: Some(uuid),
            ..descriptor
        });
        self.tracks.push(p);
        uuid
    }

    /// Says the trace's times are CLOCK_BOOTTIME, with both clocks read now.
    pub fn boottime_clock(&mut self, boottime_ns: u64, monotonic_ns: u64) {
        let mut p = packet(Some(boottime_ns));
        p.clock_snapshot = Some(ClockSnapshot {
            clocks: vec![
                ClockReading {
                    clock_id: Some(CLOCK_BOOTTIME),
                    timestamp: Some(boottime_ns),
                },
                ClockReading {
                    clock_id: Some(CLOCK_MONOTONIC),
                    timestamp: Some(monotonic_ns),
                },
            ],
            primary_trace_clock: Some(CLOCK_BOOTTIME as i32),
        });
        self.clock = Some(p);
    }

    /// A process track; returns its uuid.
    pub fn process_track(&mut self, pid: u64, name: &str) -> u64 {
        self.add_track(TrackDescriptor {
            process: Some(ProcessDescriptor {
                pid: Some(i32::try_from(pid).unwrap_or(i32::MAX)),
                process_name: Some(name.to_owned()),
            }),
            ..Default::default()
        })
    }

    /// A named track under `parent`; returns its uuid.
    pub fn track(&mut self, parent: Option<u64>, name: &str) -> u64 {
        self.add_track(TrackDescriptor {
            name: Some(name.to_owned()),
            parent_uuid: parent,
            ..Default::default()
        })
    }

    /// A counter track under `parent` with `unit`; returns its uuid.
    pub fn counter_track(&mut self, parent: Option<u64>, name: &str, unit: i32) -> u64 {
        self.add_track(TrackDescriptor {
            name: Some(name.to_owned()),
            parent_uuid: parent,
            counter: Some(CounterDescriptor { unit: Some(unit) }),
            ..Default::default()
        })
    }

    /// A slice on `track` from `start` to `end` (ns).
    pub fn slice(
        &mut self,
        track: u64,
        (start, end): (u64, u64),
        name: &str,
        category: &'static str,
        args: Vec<DebugAnnotation>,
    ) {
        self.slices.entry(track).or_default().push(Slice {
            start,
            end: end.max(start),
            name: name.to_owned(),
            category,
            args,
        });
    }

    /// An instant event on `track` at `ts`.
    pub fn instant(
        &mut self,
        track: u64,
        ts: u64,
        name: &str,
        category: &'static str,
        args: Vec<DebugAnnotation>,
    ) {
        self.instants.push((
            track,
            Slice {
                start: ts,
                end: ts,
                name: name.to_owned(),
                category,
                args,
            },
        ));
    }

    /// A counter value on `track` at `ts`.
    pub fn counter(&mut self, track: u64, ts: u64, value: i64) {
        self.counters
            .push((track, ts, CounterSample::Integer(value)));
    }

    /// A floating-point counter value on `track` at `ts`.
    pub fn real_counter(&mut self, track: u64, ts: u64, value: f64) {
        self.counters.push((track, ts, CounterSample::Real(value)));
    }

    /// The trace as packets: track descriptors first, then events in time order.
    pub fn into_trace(self) -> Trace {
        let mut events: Vec<(u64, TracePacket)> = Vec::new();
        for (track, mut slices) in self.slices {
            // Parents first: earlier start, then the longer slice.
            slices.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
            let mut open: Vec<u64> = Vec::new();
            let end_event = |ts: u64| {
                let mut p = packet(Some(ts));
                p.track_event = Some(TrackEvent {
                    r#type: Some(TYPE_SLICE_END),
                    track_uuid: Some(track),
                    ..Default::default()
                });
                (ts, p)
            };
            for s in slices {
                while let Some(&top_end) = open.last() {
                    if top_end > s.start {
                        break;
                    }
                    events.push(end_event(top_end));
                    open.pop();
                }
                let end = open.last().map_or(s.end, |&parent| s.end.min(parent));
                let mut p = packet(Some(s.start));
                p.track_event = Some(TrackEvent {
                    r#type: Some(TYPE_SLICE_BEGIN),
                    track_uuid: Some(track),
                    name: Some(s.name),
                    categories: vec![s.category.to_owned()],
                    debug_annotations: s.args,
                    ..Default::default()
                });
                events.push((s.start, p));
                open.push(end);
            }
            while let Some(top_end) = open.pop() {
                events.push(end_event(top_end));
            }
        }
        for (track, s) in self.instants {
            let mut p = packet(Some(s.start));
            p.track_event = Some(TrackEvent {
                r#type: Some(TYPE_INSTANT),
                track_uuid: Some(track),
                name: Some(s.name),
                categories: vec![s.category.to_owned()],
                debug_annotations: s.args,
                ..Default::default()
            });
            events.push((s.start, p));
        }
        for (track, ts, value) in self.counters {
            let mut p = packet(Some(ts));
            let (counter_value, double_counter_value) = match value {
                CounterSample::Integer(v) => (Some(v), None),
                CounterSample::Real(v) => (None, Some(v)),
            };
            p.track_event = Some(TrackEvent {
                r#type: Some(TYPE_COUNTER),
                track_uuid: Some(track),
                counter_value,
                double_counter_value,
                ..Default::default()
            });
            events.push((ts, p));
        }
        // Stable: events of one track at one time keep their nesting order. The packets are
        // large, so their indices are sorted rather than the packets.
        let mut order: Vec<(u64, usize)> = events
            .iter()
            .enumerate()
            .map(|(i, (ts, _))| (*ts, i))
            .collect();
        order.sort_unstable();
        let mut slots: Vec<Option<TracePacket>> =
            events.into_iter().map(|(_, p)| Some(p)).collect();
        let mut packets: Vec<TracePacket> = self.clock.into_iter().chain(self.tracks).collect();
        if let Some(first) = packets.first_mut() {
            first.sequence_flags = Some(1);
        }
        packets.reserve(order.len());
        packets.extend(order.into_iter().filter_map(|(_, i)| slots[i].take()));
        Trace { packet: packets }
    }

    /// The encoded trace.
    pub fn encode(self) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.into_trace())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn nested_slices_come_out_as_balanced_begin_end_pairs() {
        let mut b = TraceBuilder::new();
        let p = b.process_track(42, "app");
        let t = b.track(Some(p), "queue 0");
        b.slice(
            t,
            (10, 100),
            "outer",
            "dispatch",
            vec![DebugAnnotation::uint("id", 1)],
        );
        b.slice(t, (10, 40), "first", "pass", vec![]);
        b.slice(t, (40, 120), "second", "pass", vec![]); // clamped to end at 100
        b.slice(t, (200, 300), "next", "dispatch", vec![]);
        let c = b.counter_track(Some(p), "bytes", UNIT_SIZE_BYTES);
        b.counter(c, 100, 4096);
        let bytes = b.encode();
        let trace = Trace::decode(bytes.as_slice()).unwrap();
        assert_eq!(trace.packet.len(), 3 + 8 + 1);
        let descs: Vec<_> = trace
            .packet
            .iter()
            .filter_map(|p| p.track_descriptor.as_ref())
            .collect();
        assert_eq!(descs[0].process.as_ref().unwrap().pid, Some(42));
        assert_eq!(descs[1].parent_uuid, descs[0].uuid);
        let mut stack: Vec<(String, u64)> = Vec::new();
        let mut closed = Vec::new();
        let mut last_ts = 0;
        for p in &trace.packet {
            let Some(e) = &p.track_event else { continue };
            let ts = p.timestamp.unwrap();
            assert!(ts >= last_ts, "time order");
            last_ts = ts;
            match e.r#type {
                Some(TYPE_SLICE_BEGIN) => stack.push((e.name.clone().unwrap(), ts)),
                Some(TYPE_SLICE_END) => {
                    let (name, start) = stack.pop().unwrap();
                    closed.push((name, start, ts, stack.len()));
                }
                Some(TYPE_COUNTER) => assert_eq!(e.counter_value, Some(4096)),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(stack.is_empty());
        assert_eq!(
            closed,
            vec![
                ("first".into(), 10, 40, 1),
                ("second".into(), 40, 100, 1),
                ("outer".into(), 10, 100, 0),
                ("next".into(), 200, 300, 0),
            ]
        );
    }
}
