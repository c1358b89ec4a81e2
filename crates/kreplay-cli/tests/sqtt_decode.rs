//! `kreplay sqtt decode`: per-wave marker sequences of shaderdata records.
//!
//! - Generated record streams of several interleaved waves (nested scopes, fused exit+enter
//!   words, points, data points with payload, exits without an open scope, waves ending inside
//!   scopes): the sequence, depths, lines and durations expected are computed here while the
//!   records are generated, and compared with the JSON and the text output.
//! - A code object built with the marker pass plugin: the records replay the marker words the
//!   disassembly shows, in program order, and decode with the names of the real map.
//! - Malformed input fails with the record's line; `--lenient` decodes it and lists problems.

#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

const SECTION: &str = "W:64\nK:_Z6kernelPf\nF:1:_Z6helperf\nU:2:loop\nU:3:body\nU:4:reduce\n\
                       P:5:sample\nR:5:extra_payload_count=2\nP:6:tick";
/// Scope ids, their names as the map gives them (functions demangled) and their kind.
const SCOPES: [(u32, &str, &str); 4] = [
    (1, "helper(float)", "func"),
    (2, "loop", "user"),
    (3, "body", "user"),
    (4, "reduce", "user"),
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
    cu: u32,
    simd: u32,
    wave: u32,
}

/// One expected marker event.
#[derive(Clone, Debug, PartialEq)]
struct Want {
    /// Index of the record in the wave's stream (its file line is known after interleaving).
    record: usize,
    time: i64,
    event: &'static str,
    /// The scope entered, or the point (None for a bare exit).
    name: Option<String>,
    depth: usize,
    payload: Vec<u32>,
    /// For enter / exit_enter: index of the scope entered.
    entered: Option<usize>,
    /// For exit / exit_enter: (name, duration) of the scope closed, None when none was open.
    closes: Option<(String, i64)>,
}

struct WaveWant {
    words: Vec<(i64, u32)>,
    events: Vec<Want>,
    /// Per scope in enter order: (name, start, end, exited).
    scopes: Vec<(String, i64, i64, bool)>,
    unmatched: usize,
}

/// One wave's records and what they mean.
fn wave(rng: &mut Rng, steps: usize, leave_open: bool) -> WaveWant {
    let mut w = WaveWant {
        words: Vec::new(),
        events: Vec::new(),
        scopes: Vec::new(),
        unmatched: 0,
    };
    let mut t = 500 + rng.below(100) as i64;
    let mut open: Vec<usize> = Vec::new();
    if rng.below(2) == 0 {
        // The trace window began inside a scope: an exit with nothing open.
        w.events.push(Want {
            record: 0,
            time: t,
            event: "exit",
            name: None,
            depth: 0,
            payload: vec![],
            entered: None,
            closes: None,
        });
        w.words.push((t, 1));
        w.unmatched += 1;
    }
    for _ in 0..steps {
        t += 1 + rng.below(30) as i64;
        let action = rng.below(6);
        let record = w.words.len();
        if open.len() < 4 && (open.is_empty() || action < 2) {
            let (id, name, _) = SCOPES[rng.below(4) as usize];
            open.push(w.scopes.len());
            w.scopes.push((name.into(), t, 0, false));
            w.events.push(Want {
                record,
                time: t,
                event: "enter",
                name: Some(name.into()),
                depth: open.len() - 1,
                payload: vec![],
                entered: Some(w.scopes.len() - 1),
                closes: None,
            });
            w.words.push((t, (id << 2) | 2));
        } else if action == 2 {
            let i = open.pop().unwrap();
            w.scopes[i].2 = t;
            w.scopes[i].3 = true;
            let (id, name, _) = SCOPES[rng.below(4) as usize];
            open.push(w.scopes.len());
            w.scopes.push((name.into(), t, 0, false));
            w.events.push(Want {
                record,
                time: t,
                event: "exit_enter",
                name: Some(name.into()),
                depth: open.len() - 1,
                payload: vec![],
                entered: Some(w.scopes.len() - 1),
                closes: Some((w.scopes[i].0.clone(), t - w.scopes[i].1)),
            });
            w.words.push((t, (id << 2) | 3));
        } else if action == 3 {
            let payload = vec![rng.next() as u32, rng.next() as u32 | 3];
            w.events.push(Want {
                record,
                time: t,
                event: "data",
                name: Some("sample".into()),
                depth: open.len(),
                payload: payload.clone(),
                entered: None,
                closes: None,
            });
            w.words.push((t, 5 << 2));
            // Payload words look like markers (low bits set): only the R: count says otherwise.
            w.words.push((t + 1, payload[0]));
            w.words.push((t + 2, payload[1]));
            t += 2;
        } else if action == 4 {
            w.events.push(Want {
                record,
                time: t,
                event: "point",
                name: Some("tick".into()),
                depth: open.len(),
                payload: vec![],
                entered: None,
                closes: None,
            });
            w.words.push((t, 6 << 2));
        } else {
            let i = open.pop().unwrap();
            w.scopes[i].2 = t;
            w.scopes[i].3 = true;
            w.events.push(Want {
                record,
                time: t,
                event: "exit",
                name: None,
                depth: open.len(),
                payload: vec![],
                entered: None,
                closes: Some((w.scopes[i].0.clone(), t - w.scopes[i].1)),
            });
            w.words.push((t, 1));
        }
    }
    let keep = if leave_open { 1.min(open.len()) } else { 0 };
    while open.len() > keep {
        t += 1 + rng.below(5) as i64;
        let i = open.pop().unwrap();
        w.scopes[i].2 = t;
        w.scopes[i].3 = true;
        w.events.push(Want {
            record: w.words.len(),
            time: t,
            event: "exit",
            name: None,
            depth: open.len(),
            payload: vec![],
            entered: None,
            closes: Some((w.scopes[i].0.clone(), t - w.scopes[i].1)),
        });
        w.words.push((t, 1));
    }
    let last = w.words.last().unwrap().0;
    for s in w.scopes.iter_mut().filter(|s| !s.3) {
        s.2 = last;
    }
    w
}

struct Generated {
    /// (slot, time, word) in file order.
    records: Vec<(Slot, i64, u32)>,
    waves: BTreeMap<Slot, WaveWant>,
    /// Per slot: file line (1-based) of each of its records.
    lines: BTreeMap<Slot, Vec<usize>>,
}

fn generate(seed: u64) -> Generated {
    let mut rng = Rng(seed);
    let slots = [
        Slot {
            cu: 0,
            simd: 0,
            wave: 0,
        },
        Slot {
            cu: 0,
            simd: 0,
            wave: 1,
        },
        Slot {
            cu: 0,
            simd: 3,
            wave: 0,
        },
        Slot {
            cu: 2,
            simd: 1,
            wave: 7,
        },
        Slot {
            cu: 5,
            simd: 0,
            wave: 2,
        },
    ];
    let mut waves = BTreeMap::new();
    for (k, s) in slots.iter().enumerate() {
        let steps = 30 + rng.below(30) as usize;
        waves.insert(*s, wave(&mut rng, steps, k % 2 == 1));
    }
    let mut records = Vec::new();
    let mut lines: BTreeMap<Slot, Vec<usize>> = BTreeMap::new();
    let mut next: BTreeMap<Slot, usize> = slots.iter().map(|s| (*s, 0)).collect();
    while next.iter().any(|(s, n)| *n < waves[s].words.len()) {
        let s = slots[rng.below(slots.len() as u64) as usize];
        let n = next.get_mut(&s).unwrap();
        if let Some(&(t, v)) = waves[&s].words.get(*n) {
            records.push((s, t, v));
            lines.entry(s).or_default().push(records.len());
            *n += 1;
        }
    }
    Generated {
        records,
        waves,
        lines,
    }
}

fn code_object(dir: &Path) -> PathBuf {
    let co = build_kernels(dir, "gfx942");
    let out = dir.join("markers.co");
    with_funcmap(&co, format!("{SECTION}\0").as_bytes(), &out);
    out
}

fn write_jsonl(path: &Path, records: &[(Slot, i64, u32)]) {
    let mut text = String::new();
    for (s, t, v) in records {
        text.push_str(&format!(
            "{{\"time\": {t}, \"value\": {v}, \"cu\": {}, \"simd\": {}, \"wave_id\": {}}}\n",
            s.cu, s.simd, s.wave
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn decode_json(records: &Path, co: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["decode", s(records), "--funcmap", s(co), "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&kreplay_sqtt_ok(&args)).expect("decode prints JSON")
}

fn find_wave(doc: &Value, slot: Slot) -> &Value {
    doc["waves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            (w["cu"].as_u64(), w["simd"].as_u64(), w["wave_id"].as_u64())
                == (
                    Some(slot.cu.into()),
                    Some(slot.simd.into()),
                    Some(slot.wave.into()),
                )
        })
        .unwrap_or_else(|| panic!("no wave {slot:?}"))
}

#[test]
fn interleaved_waves_decode_to_their_own_sequences_in_json_and_text() {
    let dir = test_support::scratch_dir("sqtt-decode");
    let co = code_object(&dir);
    let g = generate(0xdec0_de01);
    let path = dir.join("records.jsonl");
    write_jsonl(&path, &g.records);

    let doc = decode_json(&path, &co, &[]);
    assert_eq!(doc["kernel"], "kernel(float*)");
    assert_eq!(doc["summary"]["records"], g.records.len());
    assert_eq!(doc["summary"]["waves"], g.waves.len());
    assert_eq!(doc["problems"], Value::Array(vec![]));
    let unmatched: usize = g.waves.values().map(|w| w.unmatched).sum();
    assert_eq!(doc["summary"]["unmatched_exits"], unmatched);
    let open: usize = g
        .waves
        .values()
        .map(|w| w.scopes.iter().filter(|s| !s.3).count())
        .sum();
    assert!(open > 0, "the generator leaves some scopes open");
    assert_eq!(doc["summary"]["open_scopes"], open);
    for (slot, want) in &g.waves {
        let lines = &g.lines[slot];
        let w = find_wave(&doc, *slot);
        assert_eq!(w["records"], want.words.len());
        assert_eq!(w["start"], want.words[0].0);
        assert_eq!(w["end"], want.words.last().unwrap().0);
        let events = w["events"].as_array().unwrap();
        assert_eq!(events.len(), want.events.len(), "events of {slot:?}");
        for (got, e) in events.iter().zip(&want.events) {
            let ctx = format!("{slot:?} {got}");
            assert_eq!(got["line"], lines[e.record], "{ctx}");
            assert_eq!(got["time"], e.time, "{ctx}");
            assert_eq!(got["word"], want.words[e.record].1, "{ctx}");
            assert_eq!(got["event"], e.event, "{ctx}");
            assert_eq!(got["depth"], e.depth, "{ctx}");
            if let Some(name) = &e.name {
                assert_eq!(got["name"], name.as_str(), "{ctx}");
            }
            if let Some(i) = e.entered {
                let (name, start, end, exited) = &want.scopes[i];
                assert_eq!(
                    (got["scope"].as_u64(), &got["name"]),
                    (Some(i as u64), &Value::from(name.as_str())),
                    "{ctx}"
                );
                assert_eq!(got["duration"], end - start, "{ctx}");
                assert_eq!(got["exited"], *exited, "{ctx}");
                let kind = SCOPES.iter().find(|s| s.1 == name).unwrap().2;
                assert_eq!(got["kind"], kind, "{ctx}");
            }
            if matches!(e.event, "exit" | "exit_enter") {
                match &e.closes {
                    Some((name, duration)) => {
                        assert_eq!(got["closes"]["name"], name.as_str(), "{ctx}");
                        assert_eq!(got["closes"]["duration"], *duration, "{ctx}");
                    }
                    None => assert!(got["closes"].is_null(), "{ctx}"),
                }
            }
            if matches!(e.event, "data" | "point") {
                assert_eq!(got["payload"], serde_json::json!(e.payload), "{ctx}");
                assert_eq!(got["extra_payload_count"], e.payload.len(), "{ctx}");
            }
        }
        let scopes: Vec<(String, i64, i64, bool)> = w["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(
                    c["duration"].as_i64(),
                    Some(c["end"].as_i64().unwrap() - c["start"].as_i64().unwrap())
                );
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["start"].as_i64().unwrap(),
                    c["end"].as_i64().unwrap(),
                    c["exited"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(scopes, want.scopes, "scopes of {slot:?}");
    }

    // Text: one section per wave, one line per marker, indented two spaces per depth.
    let text = kreplay_sqtt_ok(&["decode", s(&path), "--funcmap", s(&co)]);
    assert!(
        text.starts_with(&format!(
            "kernel(float*): {} waves, {} records",
            g.waves.len(),
            g.records.len()
        )),
        "{text}"
    );
    for (slot, want) in &g.waves {
        let head = format!(
            "wave se 0 cu {} simd {} wave {}: {} records",
            slot.cu,
            slot.simd,
            slot.wave,
            want.words.len()
        );
        let section = text
            .split("\n\n")
            .find(|p| p.starts_with(&head))
            .unwrap_or_else(|| panic!("no `{head}` in\n{text}"));
        let body: Vec<&str> = section.lines().skip(2).collect();
        let lines = &g.lines[slot];
        let name_kind = |i: usize| {
            let (name, ..) = &want.scopes[i];
            let (id, _, kind) = SCOPES.iter().find(|s| s.1 == name).unwrap();
            let never = if want.scopes[i].3 {
                ""
            } else {
                "  (never exits)"
            };
            format!("enter {name}  [{kind} {id}]{never}")
        };
        let closed = |c: &Option<(String, i64)>| match c {
            Some((n, d)) => format!("exit {n}  ({d} cycles)"),
            None => "exit (no open scope)".to_owned(),
        };
        let mut expected: Vec<String> = want
            .events
            .iter()
            .map(|e| {
                let what = match e.event {
                    "enter" => name_kind(e.entered.unwrap()),
                    "exit" => closed(&e.closes),
                    "exit_enter" => {
                        format!("{}; {}", closed(&e.closes), name_kind(e.entered.unwrap()))
                    }
                    "data" => format!(
                        "data sample  [point 5] {:#010x} {:#010x}",
                        e.payload[0], e.payload[1]
                    ),
                    _ => "point tick  [point 6]".to_owned(),
                };
                format!(
                    "  {:>6} {:>12}  {}{what}",
                    lines[e.record],
                    e.time,
                    "  ".repeat(e.depth)
                )
            })
            .collect();
        let end = want.words.last().unwrap().0;
        for (i, (name, start, _, exited)) in want.scopes.iter().enumerate() {
            if !exited {
                let depth = want
                    .events
                    .iter()
                    .find(|e| e.entered == Some(i))
                    .unwrap()
                    .depth;
                expected.push(format!(
                    "  {:>6} {:>12}  {}(end of records inside {name}, open for {} cycles)",
                    "",
                    end,
                    "  ".repeat(depth),
                    end - start
                ));
            }
        }
        assert_eq!(body, expected, "text of {slot:?}");
    }
    assert!(
        text.contains(&format!("{unmatched} exits without an open scope")),
        "{text}"
    );
    // --json is the same as --format json.
    let again: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "decode",
        s(&path),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    assert_eq!(again, doc);
}

#[test]
fn csv_and_json_array_records_give_the_same_sequence_with_their_own_lines() {
    let dir = test_support::scratch_dir("sqtt-decode-forms");
    let co = code_object(&dir);
    let g = generate(0xdec0_de02);
    let jsonl = dir.join("r.jsonl");
    write_jsonl(&jsonl, &g.records);
    let mut csv = String::from("time,value,cu,simd,wave_id\n");
    let mut array = String::from("[\n");
    for (i, (s, t, v)) in g.records.iter().enumerate() {
        csv.push_str(&format!("{t},{v:#x},{},{},{}\n", s.cu, s.simd, s.wave));
        let sep = if i + 1 == g.records.len() { "" } else { "," };
        array.push_str(&format!("  {{\"time\": {t}, \"value\": \"{v}\", \"cu\": {}, \"simd\": {}, \"wave_id\": {}}}{sep}\n", s.cu, s.simd, s.wave));
    }
    array.push_str("]\n");
    let (csv_path, array_path) = (dir.join("r.csv"), dir.join("r.json"));
    std::fs::write(&csv_path, csv).unwrap();
    std::fs::write(&array_path, array).unwrap();
    let strip = |mut doc: Value, shift: i64| {
        for w in doc["waves"].as_array_mut().unwrap() {
            for e in w["events"].as_array_mut().unwrap() {
                e["line"] = Value::from(e["line"].as_i64().unwrap() - shift);
            }
            for c in w["scopes"].as_array_mut().unwrap() {
                c["enter_line"] = Value::from(c["enter_line"].as_i64().unwrap() - shift);
                if !c["exit_line"].is_null() {
                    c["exit_line"] = Value::from(c["exit_line"].as_i64().unwrap() - shift);
                }
            }
        }
        doc["waves"].clone()
    };
    let base = strip(decode_json(&jsonl, &co, &[]), 0);
    // CSV and the JSON array both have one line before the first record.
    assert_eq!(strip(decode_json(&csv_path, &co, &[]), 1), base);
    assert_eq!(strip(decode_json(&array_path, &co, &[]), 1), base);
}

/// The marker words of each function in the disassembly, in program order: `Some(word)` for
/// `s_mov_b32 m0, <imm>` before `s_ttracedata`, `None` for a register value (a payload), and
/// the callee calls (`s_swappc_b64`) as `Some(u32::MAX)`.
fn marker_program(co: &Path) -> BTreeMap<String, Vec<Option<u32>>> {
    let out = run_tool(Command::new(llvm_tool("llvm-objdump")).arg("-d").arg(co));
    let mut functions: BTreeMap<String, Vec<Option<u32>>> = BTreeMap::new();
    let mut current = String::new();
    let mut m0: Option<Option<u32>> = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(name) = line
            .strip_suffix(">:")
            .and_then(|l| l.split_once(" <"))
            .map(|(_, n)| n)
        {
            current = name.to_owned();
            continue;
        }
        let insn = line.trim_start();
        if let Some(operand) = insn.strip_prefix("s_mov_b32 m0, ") {
            let operand = operand.split_whitespace().next().unwrap_or("");
            m0 = Some(operand.parse::<u32>().ok());
        } else if insn.starts_with("s_ttracedata") {
            functions
                .entry(current.clone())
                .or_default()
                .push(m0.expect("m0 set before s_ttracedata"));
        } else if insn.starts_with("s_swappc_b64") {
            functions
                .entry(current.clone())
                .or_default()
                .push(Some(u32::MAX));
        }
    }
    functions
}

#[test]
fn a_plugin_built_kernel_decodes_with_the_names_of_its_real_map() {
    let dir = test_support::scratch_dir("sqtt-decode-plugin");
    let co = dir.join("phases.co");
    let mut cmd = Command::new(test_support::device_clang());
    cmd.args([
        "-x",
        "hip",
        "--offload-arch=gfx942",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
    ])
    .args(["-nogpulib", "-nogpuinc", "-O2", "-DSQTT_ENABLED=1"])
    .arg(format!(
        "-fpass-plugin={}",
        test_support::sqtt_pass_plugin().display()
    ))
    .arg("-I")
    .arg(test_support::device_include_dir())
    .arg("-I")
    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../sqtt-pass/include"))
    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sqtt/decode_markers.hip"))
    .arg("-o")
    .arg(&co);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("SQTT_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("SQTT_INSTRUMENT_FUNCTIONS", "1");
    run_tool(&mut cmd);

    // The map's rows, read here from the raw section.
    let raw = dir.join("raw.funcmap");
    run_tool(
        Command::new(llvm_tool("llvm-objcopy"))
            .arg(format!("--dump-section=.sqtt_funcmap={}", raw.display()))
            .arg(&co),
    );
    let raw = String::from_utf8(std::fs::read(&raw).unwrap()).unwrap();
    let mut ids: BTreeMap<String, u32> = BTreeMap::new();
    let mut payload: BTreeMap<u32, u32> = BTreeMap::new();
    for row in raw.trim_end_matches('\0').lines() {
        let f: Vec<&str> = row.splitn(3, ':').collect();
        match f[0] {
            "U" | "P" | "F" => {
                ids.insert(
                    f[2].split('@').next().unwrap().to_owned(),
                    f[1].parse().unwrap(),
                );
            }
            "R" => {
                payload.insert(
                    f[1].parse().unwrap(),
                    f[2].trim_start_matches("extra_payload_count=")
                        .parse()
                        .unwrap(),
                );
            }
            _ => {}
        }
    }
    for name in ["load", "compute", "lane_value", "store", "_Z6refinefi"] {
        assert!(ids.contains_key(name), "no row for {name} in\n{raw}");
    }
    assert_eq!(
        payload.get(&ids["lane_value"]),
        Some(&1),
        "sqtt_marker_data carries one payload word"
    );

    // One wave's words: the kernel's program with the callee's words at the call.
    let program = marker_program(&co);
    let callee = &program["_Z6refinefi"];
    let mut words: Vec<Option<u32>> = Vec::new();
    for w in &program["phases"] {
        if *w == Some(u32::MAX) {
            words.extend(callee.iter().copied());
        } else {
            words.push(*w);
        }
    }
    let load = ids["load"];
    assert!(
        words.contains(&Some((load << 2) | 2)),
        "enter load in the code: {words:?}"
    );
    assert!(
        words.contains(&Some((ids["compute"] << 2) | 3)),
        "exit load fused with enter compute: {words:?}"
    );
    let mut csv = String::from("time,value,cu,simd,wave_id\n");
    for wave in 0..2u32 {
        for (k, w) in words.iter().enumerate() {
            // The register-valued word is the data payload: the lane's global id, here the wave.
            let v = w.unwrap_or(wave * 64);
            csv.push_str(&format!(
                "{},{v},1,0,{wave}\n",
                10 * k as u64 + u64::from(wave)
            ));
        }
    }
    let records = dir.join("phases.csv");
    std::fs::write(&records, csv).unwrap();
    let doc = decode_json(&records, &co, &[]);
    assert_eq!(doc["kernel"], "phases");
    assert_eq!(doc["problems"], Value::Array(vec![]));
    assert_eq!(doc["summary"]["open_scopes"], 0);
    assert_eq!(doc["summary"]["unmatched_exits"], 0);
    for wave in 0..2u32 {
        let w = find_wave(
            &doc,
            Slot {
                cu: 1,
                simd: 0,
                wave,
            },
        );
        let events = w["events"].as_array().unwrap();
        assert_eq!(
            events.len(),
            words.len() - 1,
            "one event per word but the payload"
        );
        let named: Vec<(String, String, u64)> = events
            .iter()
            .filter(|e| {
                let n = e["name"]
                    .as_str()
                    .or(e["closes"]["name"].as_str())
                    .unwrap_or("");
                [
                    "load",
                    "compute",
                    "refine(float, int)",
                    "lane_value",
                    "store",
                ]
                .contains(&n)
            })
            .map(|e| {
                let n = e["name"]
                    .as_str()
                    .or(e["closes"]["name"].as_str())
                    .unwrap()
                    .to_owned();
                (
                    e["event"].as_str().unwrap().to_owned(),
                    n,
                    e["depth"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, String, u64)> = [
            ("enter", "load", 0),
            ("exit_enter", "compute", 0),
            ("enter", "refine(float, int)", 1),
            ("exit", "refine(float, int)", 1),
            ("data", "lane_value", 1),
            ("exit", "compute", 0),
            ("point", "store", 0),
        ]
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
        .collect();
        assert_eq!(named, want, "wave {wave}");
        let data = events.iter().find(|e| e["event"] == "data").unwrap();
        assert_eq!(data["payload"], serde_json::json!([wave * 64]));
        let fused = events.iter().find(|e| e["event"] == "exit_enter").unwrap();
        assert_eq!(fused["closes"]["name"], "load");
        // Record times are 10 apart: a scope lasts 10 cycles per record it spans.
        let compute = w["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "compute")
            .unwrap();
        let span = compute["exit_line"].as_i64().unwrap() - compute["enter_line"].as_i64().unwrap();
        assert_eq!(compute["duration"], 10 * span);
    }
    let text = kreplay_sqtt_ok(&["decode", s(&records), "--funcmap", s(&co)]);
    assert!(text.contains("enter refine(float, int)  [func"), "{text}");
    assert!(
        text.contains(&format!(
            "data lane_value  [point {}] 0x00000040",
            ids["lane_value"]
        )),
        "{text}"
    );
}

#[test]
fn malformed_records_fail_with_the_line_and_lenient_lists_the_problems() {
    let dir = test_support::scratch_dir("sqtt-decode-errors");
    let co = code_object(&dir);
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let csv = |rows: &[(i64, u64)]| {
        let mut t = String::from("time,value,cu,simd,wave_id\n");
        for (time, v) in rows {
            t.push_str(&format!("{time},{v},0,0,0\n"));
        }
        t
    };
    let decode_err = |p: &Path| kreplay_sqtt_err(&["decode", s(p), "--funcmap", s(&co)]);

    // An id the map does not define (record 2, line 3).
    let unknown = write(
        "unknown.csv",
        &csv(&[(1, (2 << 2) | 2), (2, (9 << 2) | 2), (3, 1), (4, 1)]),
    );
    let err = decode_err(&unknown);
    assert!(
        err.contains("unknown.csv: line 3:") && err.contains("id 9 is not in the .sqtt_funcmap"),
        "{err}"
    );
    let doc = decode_json(&unknown, &co, &["--lenient"]);
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0]["line"], 3);
    let events = doc["waves"][0]["events"].as_array().unwrap();
    assert_eq!(
        (events[1]["name"].as_str(), events[1]["kind"].as_str()),
        (Some("marker 9"), Some("marker"))
    );
    let text = kreplay_sqtt_ok(&["decode", s(&unknown), "--funcmap", s(&co), "--lenient"]);
    assert!(
        text.contains("1 problems (decoded with --lenient):\n  line 3: "),
        "{text}"
    );

    // A payload cut short: `sample` wants 2 payload records, the wave has 1 more.
    let cut = write(
        "cut.csv",
        &csv(&[(1, (2 << 2) | 2), (2, 1), (3, 5 << 2), (4, 77)]),
    );
    let err = decode_err(&cut);
    assert!(
        err.contains("cut.csv: line 4:")
            && err.contains("extra_payload_count=2")
            && err.contains("after 1 payload"),
        "{err}"
    );
    let doc = decode_json(&cut, &co, &["--lenient"]);
    assert_eq!(
        doc["waves"][0]["events"][2]["payload"],
        serde_json::json!([77])
    );
    let text = kreplay_sqtt_ok(&["decode", s(&cut), "--funcmap", s(&co), "--lenient"]);
    assert!(text.contains("(cut short: 1 of 2 words)"), "{text}");

    // An enter of a point id, a value wider than 32 bits, time going backwards.
    let wrong = write("wrong.csv", &csv(&[(1, (6 << 2) | 2), (2, 1)]));
    let err = decode_err(&wrong);
    assert!(
        err.contains("line 2:")
            && err.contains("enter marker for id 6")
            && err.contains("point row"),
        "{err}"
    );
    let wide = write("wide.csv", &csv(&[(1, (2 << 2) | 2), (2, 1 << 33 | 1)]));
    let err = decode_err(&wide);
    assert!(
        err.contains("line 3:") && err.contains("0x200000001") && err.contains("32 bits"),
        "{err}"
    );
    let back = write(
        "back.csv",
        &csv(&[(10, (2 << 2) | 2), (20, 6 << 2), (15, 1)]),
    );
    let err = decode_err(&back);
    assert!(
        err.contains("line 4:") && err.contains("time 15") && err.contains("line 3"),
        "{err}"
    );
    let several = write(
        "several.csv",
        &csv(&[(1, 9 << 2), (2, 10 << 2), (3, 11 << 2)]),
    );
    let err = decode_err(&several);
    assert!(
        err.contains("line 2:") && err.contains("(2 more problems; --lenient"),
        "{err}"
    );

    // Garbage: a bad CSV field, a line that is not JSON, a bad element of a JSON array, bytes.
    let bad_csv = write(
        "bad.csv",
        "time,value,cu,simd,wave_id\n1,6,0,0,0\n2,zz,0,0,0\n",
    );
    let err = decode_err(&bad_csv);
    assert!(err.contains("bad.csv: line 3: value"), "{err}");
    let bad_jsonl = write(
        "bad.jsonl",
        "{\"time\": 1, \"value\": 6, \"cu\": 0, \"simd\": 0, \"wave_id\": 0}\nnot json\n",
    );
    let err = decode_err(&bad_jsonl);
    assert!(err.contains("bad.jsonl: line 2:"), "{err}");
    let bad_array = write(
        "bad.json",
        "[\n{\"time\": 1, \"value\": 6, \"cu\": 0, \"simd\": 0, \"wave_id\": 0},\n\n{\"time\": 2, \"value\": -3, \"cu\": 0, \"simd\": 0, \"wave_id\": 0}\n]\n",
    );
    let err = decode_err(&bad_array);
    assert!(err.contains("bad.json: line 4:"), "{err}");
    let mut rng = Rng(7);
    let bytes: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let noise = dir.join("noise.bin");
    std::fs::write(&noise, bytes).unwrap();
    let err = decode_err(&noise);
    assert!(err.contains("noise.bin"), "{err}");
    // Every prefix of a valid file decodes or fails cleanly, never panics.
    let g = generate(3);
    let full = dir.join("full.jsonl");
    write_jsonl(&full, &g.records[..60]);
    let text = std::fs::read_to_string(&full).unwrap();
    for cut_at in (0..text.len()).step_by(97) {
        let p = write("prefix.jsonl", &text[..cut_at]);
        let out = kreplay_sqtt(&["decode", s(&p), "--funcmap", s(&co), "--lenient"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 1)) && !stderr.contains("panicked"),
            "{cut_at}: {stderr}"
        );
    }
    // A map that is not the one: no .sqtt_funcmap at all.
    let plain = build_kernels(&dir, "gfx942");
    let err = kreplay_sqtt_err(&["decode", s(&unknown), "--funcmap", s(&plain)]);
    assert!(err.contains("no .sqtt_funcmap section"), "{err}");
}

#[test]
fn deep_nesting_decodes_with_capped_indentation() {
    let dir = test_support::scratch_dir("sqtt-decode-deep");
    let co = code_object(&dir);
    let depth = 5000usize;
    let mut csv = String::from("time,value,cu,simd,wave_id\n");
    for i in 0..depth {
        csv.push_str(&format!("{i},{},0,0,0\n", (2 << 2) | 2));
    }
    for i in 0..depth {
        csv.push_str(&format!("{},1,0,0,0\n", depth + i));
    }
    let path = dir.join("deep.csv");
    std::fs::write(&path, csv).unwrap();
    let text = kreplay_sqtt_ok(&["decode", s(&path), "--funcmap", s(&co)]);
    let deepest = format!("{}[depth {}] enter loop", "  ".repeat(32), depth - 1);
    assert!(text.contains(&deepest), "no `{deepest}`");
    assert!(text.contains(&format!("{}enter loop", "  ".repeat(32))));
    assert!(
        !text.contains(&" ".repeat(2 * 33 + 2)),
        "indentation stops at depth 32"
    );
    let doc = decode_json(&path, &co, &[]);
    let events = doc["waves"][0]["events"].as_array().unwrap();
    assert_eq!(events.len(), 2 * depth);
    assert_eq!(events[depth - 1]["depth"], depth - 1);
    let last = &events[2 * depth - 1];
    assert_eq!(
        (last["depth"].as_u64(), last["closes"]["duration"].as_i64()),
        (Some(0), Some(2 * depth as i64 - 1))
    );
}

#[test]
fn a_bundle_with_several_maps_needs_target_and_a_hip_executable_works_like_a_code_object() {
    let dir = test_support::scratch_dir("sqtt-decode-bundle");
    let co942 = code_object(&dir);
    let plain90a = build_kernels(&dir, "gfx90a");
    let co90a = dir.join("other.co");
    // The gfx90a map names scope 2 differently: the chosen map is the one that names it.
    with_funcmap(
        &plain90a,
        format!("{}\0", SECTION.replace("U:2:loop", "U:2:outer_loop")).as_bytes(),
        &co90a,
    );
    let fatbin = dir.join("app.hipfb");
    bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", co942.as_path()),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", co90a.as_path()),
        ],
        &fatbin,
        true,
    );
    let app = dir.join("app");
    host_with_fatbin(&dir, &fatbin, &app);
    let records = dir.join("r.csv");
    std::fs::write(
        &records,
        "time,value,cu,simd,wave_id\n5,10,0,0,0\n9,1,0,0,0\n",
    )
    .unwrap();
    let err = kreplay_sqtt_err(&["decode", s(&records), "--funcmap", s(&app)]);
    assert!(err.contains("choose one with --target"), "{err}");
    for (target, name) in [("gfx90a", "outer_loop"), ("gfx942", "loop")] {
        let doc = decode_json(&records, &app, &["--target", target]);
        assert!(doc["target"].as_str().unwrap().ends_with(target), "{doc}");
        let enter = &doc["waves"][0]["events"][0];
        assert_eq!(
            (enter["name"].as_str(), enter["duration"].as_i64()),
            (Some(name), Some(4))
        );
    }
}
