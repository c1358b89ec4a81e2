//! `kreplay sqtt timeline` and `kreplay sqtt flame` on generated record streams of a marker
//! kernel: several waves on several CUs, SIMDs and slots, interleaved, with nested function and
//! user scopes, fused exit+enter words and data points. The expected scopes and stacks are
//! computed here, independently, while the records are generated; the trace is decoded with
//! the `perfetto` package's protos and the SVG parsed with Python's XML parser.

mod readers;
#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use support::*;

const SECTION: &str = "W:64\nK:_Z6kernelPf\nF:1:_Z6helperf@kernels.hip:3\nU:2:loop\nU:3:body\nU:4:reduce\n\
                       P:5:value\nR:5:extra_payload_count=1\nP:6:tick";
const KERNEL: &str = "kernel(float*)";
/// Scope ids and their names as a reader of the map gives them (the function demangled).
const SCOPES: [(u32, &str); 4] = [
    (1, "helper(float)"),
    (2, "loop"),
    (3, "body"),
    (4, "reduce"),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 17
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Slot {
    se: u32,
    cu: u32,
    simd: u32,
    wave: u32,
}

/// One record: slot, time, word.
type Rec = (Slot, i64, u32);

#[derive(Default)]
struct Expected {
    /// Per slot: (name, start, end, depth) in enter order.
    scopes: BTreeMap<Slot, Vec<(String, i64, i64, usize)>>,
    /// Per slot: (name, time, payload).
    points: BTreeMap<Slot, Vec<(String, i64, Option<u32>)>>,
    /// Per slot: first and last time.
    span: BTreeMap<Slot, (i64, i64)>,
    /// Folded stack (kernel first) -> cycles.
    cycles: BTreeMap<String, u64>,
}

/// The records of one wave, with what they mean.
fn wave(rng: &mut Rng, slot: Slot, steps: usize, expected: &mut Expected) -> Vec<Rec> {
    let mut out: Vec<Rec> = Vec::new();
    let mut t = 1000 + rng.below(50) as i64;
    let mut open: Vec<usize> = Vec::new();
    let scopes = expected.scopes.entry(slot).or_default();
    let points = expected.points.entry(slot).or_default();
    let mut stacks: Vec<Vec<String>> = Vec::new(); // the stack after each record
    let push = |out: &mut Vec<Rec>,
                stacks: &mut Vec<Vec<String>>,
                open: &Vec<usize>,
                scopes: &Vec<(String, i64, i64, usize)>,
                t: i64,
                w: u32| {
        out.push((slot, t, w));
        stacks.push(open.iter().map(|&i| scopes[i].0.clone()).collect());
    };
    for _ in 0..steps {
        t += 1 + rng.below(20) as i64;
        let action = rng.below(5);
        if open.len() < 4 && (open.is_empty() || action < 2) {
            let (id, name) = SCOPES[rng.below(4) as usize];
            open.push(scopes.len());
            scopes.push((name.to_owned(), t, -1, open.len() - 1));
            push(&mut out, &mut stacks, &open, scopes, t, (id << 2) | 2);
        } else if action == 2 && !open.is_empty() {
            // Fused exit + enter.
            let i = open.pop().unwrap();
            scopes[i].2 = t;
            let (id, name) = SCOPES[rng.below(4) as usize];
            open.push(scopes.len());
            scopes.push((name.to_owned(), t, -1, open.len() - 1));
            push(&mut out, &mut stacks, &open, scopes, t, (id << 2) | 3);
        } else if action == 3 {
            let v = rng.next() as u32;
            points.push(("value".into(), t, Some(v)));
            push(&mut out, &mut stacks, &open, scopes, t, 5 << 2);
            t += 1;
            push(&mut out, &mut stacks, &open, scopes, t, v);
        } else if action == 4 && rng.below(2) == 0 {
            points.push(("tick".into(), t, None));
            push(&mut out, &mut stacks, &open, scopes, t, 6 << 2);
        } else if let Some(i) = open.pop() {
            scopes[i].2 = t;
            push(&mut out, &mut stacks, &open, scopes, t, 1);
        }
    }
    while let Some(i) = open.pop() {
        t += 1 + rng.below(5) as i64;
        scopes[i].2 = t;
        push(&mut out, &mut stacks, &open, scopes, t, 1);
    }
    for k in 0..out.len().saturating_sub(1) {
        let delta = (out[k + 1].1 - out[k].1) as u64;
        let mut frames = vec![KERNEL.to_owned()];
        frames.extend(stacks[k].iter().cloned());
        *expected.cycles.entry(frames.join(";")).or_insert(0) += delta;
    }
    expected.cycles.retain(|_, n| *n > 0);
    expected
        .span
        .insert(slot, (out[0].1, out.last().unwrap().1));
    out
}

/// Waves on two CUs (one on shader engine 1), two SIMDs, several slots, interleaved.
fn generate(seed: u64) -> (Vec<Rec>, Expected) {
    let mut rng = Rng(seed);
    let mut expected = Expected::default();
    let slots = [
        Slot {
            se: 0,
            cu: 0,
            simd: 0,
            wave: 0,
        },
        Slot {
            se: 0,
            cu: 0,
            simd: 0,
            wave: 1,
        },
        Slot {
            se: 0,
            cu: 0,
            simd: 1,
            wave: 0,
        },
        Slot {
            se: 0,
            cu: 3,
            simd: 1,
            wave: 2,
        },
        Slot {
            se: 1,
            cu: 3,
            simd: 0,
            wave: 0,
        },
    ];
    let mut streams: Vec<Vec<Rec>> = Vec::new();
    for s in slots {
        let steps = 40 + rng.below(20) as usize;
        streams.push(wave(&mut rng, s, steps, &mut expected));
    }
    let mut all = Vec::new();
    let mut next = vec![0usize; streams.len()];
    while next.iter().zip(&streams).any(|(n, s)| *n < s.len()) {
        let w = rng.below(streams.len() as u64) as usize;
        if next[w] < streams[w].len() {
            all.push(streams[w][next[w]]);
            next[w] += 1;
        }
    }
    streams.clear();
    (all, expected)
}

fn write_records(path: &Path, records: &[Rec]) {
    let mut text = String::new();
    for (s, t, v) in records {
        text.push_str(&format!(
            "{{\"time\": {t}, \"value\": {v}, \"se\": {}, \"cu\": {}, \"simd\": {}, \"wave_id\": {}}}\n",
            s.se, s.cu, s.simd, s.wave
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn code_object(dir: &Path) -> PathBuf {
    let co = build_kernels(dir, "gfx942");
    let out = dir.join("markers.co");
    with_funcmap(&co, format!("{SECTION}\0").as_bytes(), &out);
    out
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not unsigned: {v}"))
}

#[test]
fn timeline_has_a_track_per_cu_simd_and_wave_and_each_scope_as_a_nested_slice() {
    let dir = test_support::scratch_dir("sqtt-timeline");
    let co = code_object(&dir);
    let (records, expected) = generate(0x7157_0001);
    let path = dir.join("records.jsonl");
    write_records(&path, &records);
    let trace_path = dir.join("markers.pftrace");
    kreplay_sqtt_ok(&[
        "timeline",
        s(&path),
        "--funcmap",
        s(&co),
        "-o",
        s(&trace_path),
    ]);
    let trace = readers::pftrace(&trace_path);
    assert_eq!(trace["errors"], Value::Array(vec![]), "{}", trace["errors"]);
    let tracks = trace["tracks"].as_array().unwrap();
    let name_of = |uuid: &Value| {
        tracks.iter().find(|t| &t["uuid"] == uuid).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let parent_of =
        |uuid: &Value| tracks.iter().find(|t| &t["uuid"] == uuid).unwrap()["parent"].clone();
    // Root track named after the kernel (the map's only K: row, demangled).
    let roots: Vec<&Value> = tracks.iter().filter(|t| t["parent"].is_null()).collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0]["name"], KERNEL);
    // Every wave track sits under its SIMD, under its CU, under the root.
    let mut seen = BTreeSet::new();
    for t in tracks
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("wave "))
    {
        let simd = parent_of(&t["uuid"]);
        let cu = parent_of(&simd);
        assert_eq!(parent_of(&cu), roots[0]["uuid"]);
        seen.insert((
            name_of(&cu),
            name_of(&simd),
            t["name"].as_str().unwrap().to_owned(),
            u(&t["uuid"]),
        ));
    }
    let want: BTreeSet<(String, String, String)> = expected
        .scopes
        .keys()
        .map(|s| {
            let cu = if s.se == 0 {
                format!("CU {}", s.cu)
            } else {
                format!("SE {} CU {}", s.se, s.cu)
            };
            (cu, format!("SIMD {}", s.simd), format!("wave {}", s.wave))
        })
        .collect();
    assert_eq!(
        seen.iter()
            .map(|(a, b, c, _)| (a.clone(), b.clone(), c.clone()))
            .collect::<BTreeSet<_>>(),
        want
    );
    // Slices per wave track: the wave (kernel) at depth 0, the scopes nested below it.
    let slices = trace["slices"].as_array().unwrap();
    let instants = trace["instants"].as_array().unwrap();
    for (slot, scopes) in &expected.scopes {
        let cu = if slot.se == 0 {
            format!("CU {}", slot.cu)
        } else {
            format!("SE {} CU {}", slot.se, slot.cu)
        };
        let (_, _, _, uuid) = seen
            .iter()
            .find(|(c, s, w, _)| {
                *c == cu
                    && *s == format!("SIMD {}", slot.simd)
                    && *w == format!("wave {}", slot.wave)
            })
            .unwrap();
        let mine: Vec<&Value> = slices
            .iter()
            .filter(|s| s["track"].as_u64() == Some(*uuid))
            .collect();
        let (first, last) = expected.span[slot];
        assert_eq!(mine[0]["name"], KERNEL);
        assert_eq!(
            (
                u(&mine[0]["start"]),
                u(&mine[0]["end"]),
                u(&mine[0]["depth"])
            ),
            (first as u64, last as u64, 0)
        );
        let got: Vec<(String, u64, u64, u64)> = mine[1..]
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    u(&s["start"]),
                    u(&s["end"]),
                    u(&s["depth"]),
                )
            })
            .collect();
        let want: Vec<(String, u64, u64, u64)> = scopes
            .iter()
            .map(|(n, a, b, d)| (n.clone(), *a as u64, *b as u64, *d as u64 + 1))
            .collect();
        assert_eq!(got, want, "scopes of {slot:?}");
        // Points: instants on the wave track, payloads as arguments.
        let pts: Vec<(String, u64, Option<u64>)> = instants
            .iter()
            .filter(|i| i["track"].as_u64() == Some(*uuid))
            .map(|i| {
                (
                    i["name"].as_str().unwrap().to_owned(),
                    u(&i["ts"]),
                    i["args"]["payload_0"].as_u64(),
                )
            })
            .collect();
        let want_pts: Vec<(String, u64, Option<u64>)> = expected.points[slot]
            .iter()
            .map(|(n, t, v)| (n.clone(), *t as u64, v.map(u64::from)))
            .collect();
        assert_eq!(pts, want_pts, "points of {slot:?}");
    }
}

#[test]
fn flame_folds_stacks_by_cycles_and_the_svg_names_every_scope() {
    let dir = test_support::scratch_dir("sqtt-flame");
    let co = code_object(&dir);
    let (records, expected) = generate(0x7157_0002);
    let path = dir.join("records.csv");
    let mut csv = String::from("time,value,cu,simd,wave_id,se\n");
    for (s, t, v) in &records {
        csv.push_str(&format!(
            "{t},{v:#x},{},{},{},{}\n",
            s.cu, s.simd, s.wave, s.se
        ));
    }
    std::fs::write(&path, csv).unwrap();

    // Folded stacks on stdout, and the same in files with the SVG.
    let stdout = kreplay_sqtt_ok(&["flame", s(&path), "--funcmap", s(&co)]);
    let got: BTreeMap<String, u64> = stdout
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_owned(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(got, expected.cycles);
    let total: u64 = got.values().sum();
    let want_total: u64 = expected.span.values().map(|(a, b)| (b - a) as u64).sum();
    assert_eq!(
        total, want_total,
        "every cycle of every wave is charged once"
    );

    let (folded, svg) = (dir.join("k.folded"), dir.join("k.svg"));
    kreplay_sqtt_ok(&[
        "flame",
        s(&path),
        "--funcmap",
        s(&co),
        "--folded",
        s(&folded),
        "--svg",
        s(&svg),
        "--kernel",
        "my kernel",
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(text.lines().all(|l| l.starts_with("my kernel")), "{text}");
    let titles = readers::svg_titles(&svg);
    for name in std::iter::once("my kernel").chain(SCOPES.iter().map(|(_, n)| *n)) {
        assert!(
            titles.iter().any(|t| t.starts_with(&format!("{name} ("))),
            "no frame titled {name}: {titles:?}"
        );
    }
}

#[test]
fn bad_records_empty_graphs_and_unwritable_outputs_are_named() {
    let dir = test_support::scratch_dir("sqtt-views-errors");
    let co = code_object(&dir);
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "time,value,cu\n1,2,3\n").unwrap();
    let err = kreplay_sqtt_err(&["timeline", s(&bad), "--funcmap", s(&co)]);
    assert!(err.contains("bad.csv"), "{err}");
    let out = dir.join("missing-dir/x.svg");
    let records = dir.join("ok.jsonl");
    let one = "{\"time\": 1, \"value\": 6, \"cu\": 0, \"simd\": 0, \"wave_id\": 0}\n";
    std::fs::write(&records, one).unwrap();
    let err = kreplay_sqtt_err(&[
        "flame",
        s(&records),
        "--funcmap",
        s(&co),
        "--svg",
        s(&dir.join("x.svg")),
    ]);
    assert!(err.contains("ok.jsonl: no cycles to draw"), "{err}");
    std::fs::write(
        &records,
        format!("{one}{}", one.replace("\"time\": 1", "\"time\": 5")),
    )
    .unwrap();
    let err = kreplay_sqtt_err(&["flame", s(&records), "--funcmap", s(&co), "--svg", s(&out)]);
    assert!(err.contains("x.svg") && err.contains("writable"), "{err}");
}
