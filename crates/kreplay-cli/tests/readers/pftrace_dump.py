"""Decodes a Perfetto protobuf trace with the compiled protos of the `perfetto` Python package
(offline; no trace processor) and prints its tracks, slices (with their nesting rebuilt from the
begin/end events of each track), instant events and counter values as one JSON document."""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def annotation(a):
    for field in ("string_value", "uint_value", "int_value", "bool_value", "double_value"):
        if a.HasField(field):
            return getattr(a, field)
    return None


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks, slices, instants, counters, errors = [], [], [], [], []
    open_slices = {}
    last_ts = 0
    primary_clock = None
    for p in trace.packet:
        if p.HasField("clock_snapshot"):
            primary_clock = pb.BuiltinClock.Name(p.clock_snapshot.primary_trace_clock)
            continue
        if p.HasField("track_descriptor"):
            t = p.track_descriptor
            tracks.append({
                "uuid": t.uuid,
                "parent": t.parent_uuid if t.HasField("parent_uuid") else None,
                "name": t.name if t.HasField("name") else (t.process.process_name if t.HasField("process") else None),
                "pid": t.process.pid if t.HasField("process") else None,
                "counter": t.HasField("counter"),
            })
            continue
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        if p.timestamp < last_ts:
            errors.append(f"timestamp {p.timestamp} after {last_ts}")
        last_ts = p.timestamp
        stack = open_slices.setdefault(e.track_uuid, [])
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            s = {
                "index": len(slices),
                "track": e.track_uuid,
                "name": e.name,
                "category": list(e.categories),
                "start": p.timestamp,
                "end": None,
                "depth": len(stack),
                "parent": stack[-1] if stack else None,
                "args": {a.name: annotation(a) for a in e.debug_annotations},
            }
            slices.append(s)
            stack.append(s["index"])
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            if not stack:
                errors.append(f"end without begin on track {e.track_uuid}")
                continue
            slices[stack.pop()]["end"] = p.timestamp
        elif e.type == pb.TrackEvent.TYPE_INSTANT:
            instants.append({
                "track": e.track_uuid,
                "name": e.name,
                "ts": p.timestamp,
                "parent": stack[-1] if stack else None,
                "args": {a.name: annotation(a) for a in e.debug_annotations},
            })
        elif e.type == pb.TrackEvent.TYPE_COUNTER:
            value = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
            counters.append({"track": e.track_uuid, "ts": p.timestamp, "value": value})
        else:
            errors.append(f"unexpected event type {e.type}")
    for track, stack in open_slices.items():
        if stack:
            errors.append(f"{len(stack)} slices left open on track {track}")
    json.dump({"primary_trace_clock": primary_clock, "tracks": tracks, "slices": slices, "instants": instants, "counters": counters, "errors": errors}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
