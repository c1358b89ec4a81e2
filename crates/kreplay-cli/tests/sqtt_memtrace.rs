//! `kreplay sqtt memtrace` on generated record streams: interleaved waves, payload markers,
//! every address layout. Expected statistics are computed here, independently, from the
//! generated addresses.

#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use support::*;

/// A tiny deterministic generator (64-bit LCG) so failures reproduce.
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

/// What the generator emitted, for computing the expected statistics.
#[derive(Default)]
struct Expected {
    /// Active addresses per execution, by marker id.
    executions: BTreeMap<u32, Vec<Vec<u64>>>,
}

#[derive(Clone, Copy)]
enum Kind {
    Global,
    Lds,
    Buffer,
}

struct Op {
    id: u32,
    kind: Kind,
}

/// Generates the address block words for one execution and records the expected active
/// addresses.
fn address_block(
    rng: &mut Rng,
    op: &Op,
    wave: u32,
    exec_words: usize,
    expected: &mut Expected,
) -> Vec<u32> {
    let lane_mask = if wave == 64 {
        u64::MAX
    } else {
        (1u64 << wave) - 1
    };
    let exec = match rng.below(4) {
        0 => lane_mask,
        1 => rng.next() & rng.next() & lane_mask,
        2 => (1u64 << rng.below(u64::from(wave))) & lane_mask,
        _ => rng.next() & lane_mask,
    };
    // Address pattern per lane.
    let base = match op.kind {
        Kind::Global => 0x7f00_0000_0000 + rng.below(1 << 20) * 4,
        _ => rng.below(1 << 12) * 4,
    };
    let pattern = rng.below(4);
    let lane_addr = |rng: &mut Rng, lane: u64| -> u64 {
        match pattern {
            0 => base + lane * 4,
            1 => base + lane * 8,
            2 => base,
            _ => base + rng.below(4096),
        }
    };
    let mut words = vec![exec as u32];
    if exec_words == 2 {
        // The wave32 two-word form carries a zero high word.
        words.push(if wave == 64 { (exec >> 32) as u32 } else { 0 });
    }
    let mut active = Vec::new();
    match op.kind {
        Kind::Global => {
            for lane in 0..u64::from(wave) {
                let a = lane_addr(rng, lane);
                // Inactive lanes carry junk.
                let a = if exec >> lane & 1 == 1 { a } else { rng.next() };
                words.push(a as u32);
                words.push((a >> 32) as u32);
                if exec >> lane & 1 == 1 {
                    active.push(a);
                }
            }
        }
        Kind::Lds => {
            for lane in 0..u64::from(wave) {
                let a = lane_addr(rng, lane) & 0xffff_ffff;
                let a = if exec >> lane & 1 == 1 {
                    a
                } else {
                    rng.next() & 0xffff_ffff
                };
                words.push(a as u32);
                if exec >> lane & 1 == 1 {
                    active.push(a);
                }
            }
        }
        Kind::Buffer => {
            // Descriptor: base in bits 47:0, stride bits above must be ignored.
            let rsrc = 0x1234_0000_0000_0000u64 | 0x0000_5500_0000_0000 | (rng.below(1 << 30) * 16);
            let soffset = rng.below(256) as u32;
            words.push(rsrc as u32);
            words.push((rsrc >> 32) as u32);
            words.push(soffset);
            for lane in 0..u64::from(wave) {
                let voff = (lane_addr(rng, lane) & 0xffff) as u32;
                words.push(voff);
                if exec >> lane & 1 == 1 {
                    active.push((rsrc & 0xffff_ffff_ffff) + u64::from(soffset) + u64::from(voff));
                }
            }
        }
    }
    expected.executions.entry(op.id).or_default().push(active);
    words
}

struct Stream {
    /// `(se, cu, simd, wave_id, value)` in emission order (already interleaved).
    records: Vec<(u32, u32, u32, u32, u32, u32)>,
    expected: Expected,
}

/// Builds waves that mix function enter/exit, data markers (whose payload looks like an
/// address header), address blocks, and interleaves them.
fn generate(
    seed: u64,
    wave: u32,
    exec_words: usize,
    ops: &[Op],
    data_id: u32,
    func_id: u32,
) -> Stream {
    let mut rng = Rng(seed);
    let mut expected = Expected::default();
    let keys = [
        (0, 0, 0, 0),
        (0, 0, 1, 0),
        (0, 1, 0, 0),
        (0, 0, 0, 5),
        (1, 0, 0, 0),
        (0, 3, 2, 7),
    ];
    let mut per_wave: Vec<Vec<(u32, u32)>> = Vec::new(); // (value, flags)
    for _ in keys {
        let mut words = vec![(func_id << 2 | 2, 0)];
        for _ in 0..(6 + rng.below(6)) {
            match rng.below(5) {
                0 => {
                    // sqtt_marker_data: header + one payload that mimics an address header.
                    words.push((data_id << 2, 0));
                    words.push((ops[0].id << 2, 0));
                }
                1 => {
                    // A privileged record in the middle of the stream is ignored.
                    words.push((ops[0].id << 2, 2));
                }
                _ => {
                    let op = &ops[rng.below(ops.len() as u64) as usize];
                    words.push((op.id << 2, 0));
                    for w in address_block(&mut rng, op, wave, exec_words, &mut expected) {
                        words.push((w, 0));
                    }
                }
            }
        }
        words.push((1, 0)); // exit
        per_wave.push(words);
    }
    // Interleave: repeatedly take a few records from a random wave.
    let mut cursors = vec![0usize; keys.len()];
    let mut records = Vec::new();
    while cursors.iter().zip(&per_wave).any(|(c, w)| *c < w.len()) {
        let k = rng.below(keys.len() as u64) as usize;
        let take = 1 + rng.below(5) as usize;
        for _ in 0..take {
            if cursors[k] < per_wave[k].len() {
                let (value, flags) = per_wave[k][cursors[k]];
                let (se, cu, simd, wid) = keys[k];
                records.push((se, cu, simd, wid, value, flags));
                cursors[k] += 1;
            }
        }
    }
    Stream { records, expected }
}

/// Independent computation of the documented statistics for one operation.
struct Want {
    executions: u64,
    lanes: (f64, u64, u64),
    lines: (f64, u64, u64, u64),
    stride: Option<(i64, f64)>,
    requested: u64,
    fetched: u64,
}

fn want(execs: &[Vec<u64>], line: u64, access: u64) -> Want {
    let mut lanes = Vec::new();
    let mut lines = Vec::new();
    let mut strides: HashMap<i64, u64> = HashMap::new();
    let (mut requested, mut fetched) = (0u64, 0u64);
    for addrs in execs {
        lanes.push(addrs.len() as u64);
        let mut bytes = HashSet::new();
        let mut touched = HashSet::new();
        for &a in addrs {
            for b in a..a + access {
                bytes.insert(b);
                touched.insert(b / line);
            }
        }
        requested += bytes.len() as u64;
        fetched += touched.len() as u64 * line;
        lines.push(touched.len() as u64);
        for k in 1..addrs.len() {
            *strides
                .entry(addrs[k] as i64 - addrs[k - 1] as i64)
                .or_default() += 1;
        }
    }
    let n = execs.len() as u64;
    let total: u64 = strides.values().sum();
    let best = strides.values().copied().max();
    let stride = best.map(|best| {
        let mut cands: Vec<i64> = strides
            .iter()
            .filter(|(_, c)| **c == best)
            .map(|(s, _)| *s)
            .collect();
        cands.sort_by_key(|s| (s.unsigned_abs(), *s));
        (cands[0], best as f64 / total as f64)
    });
    Want {
        executions: n,
        lanes: (
            lanes.iter().sum::<u64>() as f64 / n as f64,
            *lanes.iter().min().unwrap(),
            *lanes.iter().max().unwrap(),
        ),
        lines: (
            lines.iter().sum::<u64>() as f64 / n as f64,
            *lines.iter().min().unwrap(),
            *lines.iter().max().unwrap(),
            lines.iter().sum(),
        ),
        stride,
        requested,
        fetched,
    }
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64()
        .is_some_and(|a| (a - b).abs() <= 1e-12 * b.abs().max(1.0))
}

fn check_operations(
    doc: &Value,
    expected: &Expected,
    names: &HashMap<u32, &str>,
    line: u64,
    access: u64,
) {
    let ops = doc["operations"].as_array().unwrap();
    let ids: Vec<u64> = ops.iter().map(|o| o["id"].as_u64().unwrap()).collect();
    let want_ids: Vec<u64> = expected.executions.keys().map(|&k| u64::from(k)).collect();
    assert_eq!(ids, want_ids, "operations reported");
    for op in ops {
        let id = op["id"].as_u64().unwrap() as u32;
        let w = want(&expected.executions[&id], line, access);
        let ctx = format!("operation {id}: {op:#}");
        assert_eq!(op["name"], names[&id], "{ctx}");
        assert_eq!(op["executions"], w.executions, "{ctx}");
        assert!(close(&op["lanes_active"]["mean"], w.lanes.0), "{ctx}");
        assert_eq!(op["lanes_active"]["min"], w.lanes.1, "{ctx}");
        assert_eq!(op["lanes_active"]["max"], w.lanes.2, "{ctx}");
        assert!(close(&op["cache_lines"]["mean"], w.lines.0), "{ctx}");
        assert_eq!(op["cache_lines"]["min"], w.lines.1, "{ctx}");
        assert_eq!(op["cache_lines"]["max"], w.lines.2, "{ctx}");
        assert_eq!(op["cache_lines"]["total"], w.lines.3, "{ctx}");
        match w.stride {
            Some((bytes, share)) => {
                assert_eq!(op["dominant_stride"]["bytes"], bytes, "{ctx}");
                assert!(close(&op["dominant_stride"]["share"], share), "{ctx}");
            }
            None => assert_eq!(op["dominant_stride"], Value::Null, "{ctx}"),
        }
        assert_eq!(op["bytes_requested"], w.requested, "{ctx}");
        assert_eq!(op["bytes_fetched"], w.fetched, "{ctx}");
        if w.fetched > 0 {
            assert!(
                close(
                    &op["coalescing_efficiency"],
                    w.requested as f64 / w.fetched as f64
                ),
                "{ctx}"
            );
        } else {
            assert_eq!(op["coalescing_efficiency"], Value::Null, "{ctx}");
        }
    }
}

fn code_object_with(dir: &Path, section: &str) -> PathBuf {
    let co = build_kernels(dir, "gfx942");
    let out = dir.join("traced.co");
    with_funcmap(&co, format!("{section}\0").as_bytes(), &out);
    out
}

fn write_json_lines(path: &Path, records: &[(u32, u32, u32, u32, u32, u32)]) {
    let mut text = String::new();
    for (t, (se, cu, simd, wid, value, flags)) in records.iter().enumerate() {
        text.push_str(&format!(
            "{{\"time\": {}, \"value\": {value}, \"cu\": {cu}, \"simd\": {simd}, \"wave_id\": {wid}, \"se\": {se}, \"flags\": {flags}}}\n",
            1000 + t
        ));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn wave64_global_lds_and_buffer_with_interleaved_waves() {
    let dir = test_support::scratch_dir("sqtt-memtrace-w64");
    let section = "W:64\nK:saxpy\nF:1:_Z5scaleff\nP:2:addr_trace_load@kernels.hip:14\nR:2:extra_payload_count=130\n\
                   P:3:addr_trace_lds_store@kernels.hip:15\nR:3:extra_payload_count=66\n\
                   P:4:addr_trace_buffer_load@kernels.hip:16\nR:4:extra_payload_count=69\n\
                   P:5:value\nR:5:extra_payload_count=1\nP:6:addr_trace_store@kernels.hip:18\nR:6:extra_payload_count=130";
    let co = code_object_with(&dir, section);
    let ops = [
        Op {
            id: 2,
            kind: Kind::Global,
        },
        Op {
            id: 3,
            kind: Kind::Lds,
        },
        Op {
            id: 4,
            kind: Kind::Buffer,
        },
        Op {
            id: 6,
            kind: Kind::Global,
        },
    ];
    let names = HashMap::from([
        (2, "addr_trace_load"),
        (3, "addr_trace_lds_store"),
        (4, "addr_trace_buffer_load"),
        (6, "addr_trace_store"),
    ]);
    let stream = generate(0x5eed_0001, 64, 2, &ops, 5, 1);
    let privileged = stream.records.iter().filter(|r| r.5 & 2 != 0).count() as u64;
    let records = dir.join("records.jsonl");
    write_json_lines(&records, &stream.records);

    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    assert_eq!(doc["wave_size"], 64);
    assert_eq!(doc["line_size"], 128);
    assert_eq!(doc["access_size"], 4);
    let summary = &doc["summary"];
    assert_eq!(summary["records"], stream.records.len() as u64);
    assert_eq!(summary["waves"], 6);
    let blocks: usize = stream.expected.executions.values().map(Vec::len).sum();
    assert_eq!(summary["address_blocks"], blocks as u64);
    assert_eq!(summary["incomplete_blocks"], 0);
    assert_eq!(summary["layout_mismatches"], 0);
    assert_eq!(summary["unknown_headers"], 0);
    assert_eq!(summary["privileged_skipped"], privileged);
    check_operations(&doc, &stream.expected, &names, 128, 4);
    let load = doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == 2)
        .unwrap();
    assert_eq!(load["source"], "kernels.hip:14");
    assert_eq!(load["layout"], "address64");

    // The same stream as a JSON array and as CSV gives the same document (but the file name).
    let mut array = Vec::new();
    let mut csv = String::from("time,value,cu,simd,wave_id,se,flags\n");
    for (t, (se, cu, simd, wid, value, flags)) in stream.records.iter().enumerate() {
        array.push(serde_json::json!({"time": 1000 + t, "value": format!("{value:#x}"), "cu": cu, "simd": simd, "wave_id": wid, "se": se, "flags": flags}));
        csv.push_str(&format!(
            "{},{value:#x},{cu},{simd},{wid},{se},{flags}\n",
            1000 + t
        ));
    }
    let json_path = dir.join("records.json");
    let csv_path = dir.join("records.csv");
    std::fs::write(&json_path, serde_json::to_string(&array).unwrap()).unwrap();
    std::fs::write(&csv_path, csv).unwrap();
    for other in [&json_path, &csv_path] {
        let mut d: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
            "memtrace",
            s(other),
            "--funcmap",
            s(&co),
            "--json",
        ]))
        .unwrap();
        d["records"] = doc["records"].clone();
        assert_eq!(d, doc, "{}", other.display());
    }

    // The table lists every operation with its name and source.
    let table = kreplay_sqtt_ok(&["memtrace", s(&records), "--funcmap", s(&co)]);
    for line in [
        "addr_trace_load@kernels.hip:14",
        "addr_trace_lds_store@kernels.hip:15",
        "addr_trace_buffer_load@kernels.hip:16",
    ] {
        assert!(table.contains(line), "{table}");
    }
    assert!(
        table.starts_with("wave_size: 64  line size: 128 B  access size: 4 B per lane\n"),
        "{table}"
    );
}

/// Wave32 with one EXEC word (as `crates/sqtt-pass` emits), other line and access sizes, plus
/// a truncated block, an unknown header and a layout mismatch.
#[test]
fn wave32_single_exec_word_options_and_damage() {
    let dir = test_support::scratch_dir("sqtt-memtrace-w32");
    let section = "W:32\nK:reduce_sum\nP:1:addr_trace_lds_load@kernels.hip:20\nR:1:extra_payload_count=33\n\
                   P:2:addr_trace_atomic@kernels.hip:21\nR:2:extra_payload_count=65\nU:3:phase\n\
                   P:4:addr_trace_load@bad\nR:4:extra_payload_count=7\nP:9:value\nR:9:extra_payload_count=1";
    let co = code_object_with(&dir, section);
    let ops = [
        Op {
            id: 1,
            kind: Kind::Lds,
        },
        Op {
            id: 2,
            kind: Kind::Global,
        },
    ];
    let names = HashMap::from([(1, "addr_trace_lds_load"), (2, "addr_trace_atomic")]);
    let mut stream = generate(0x5eed_0002, 32, 1, &ops, 9, 3);
    // Damage, on waves of their own: an unknown id, a mismatched block, a block cut short.
    stream.records.push((0, 9, 0, 0, 77 << 2, 0));
    stream.records.push((0, 9, 0, 1, 4 << 2, 0));
    stream.records.extend((0..7).map(|k| (0, 9, 0, 1, k, 0)));
    stream.records.push((0, 9, 0, 2, 2 << 2, 0));
    stream.records.extend((0..10).map(|k| (0, 9, 0, 2, k, 0)));
    let records = dir.join("records.jsonl");
    write_json_lines(&records, &stream.records);

    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&co),
        "--json",
        "--line-size",
        "64",
        "--access-size",
        "8",
    ]))
    .unwrap();
    assert_eq!(doc["wave_size"], 32);
    assert_eq!(doc["summary"]["waves"], 9);
    assert_eq!(doc["summary"]["unknown_headers"], 1);
    assert_eq!(doc["summary"]["layout_mismatches"], 1);
    assert_eq!(doc["summary"]["incomplete_blocks"], 1);
    check_operations(&doc, &stream.expected, &names, 64, 8);
}

/// The documented wave32 form with a zero `exec_hi` word (one record longer) decodes the
/// same addresses.
#[test]
fn wave32_two_exec_words() {
    let dir = test_support::scratch_dir("sqtt-memtrace-w32x2");
    let section = "W:32\nP:1:addr_trace_lds_load\nR:1:extra_payload_count=34\n\
                   P:2:addr_trace_load\nR:2:extra_payload_count=66\nP:3:value\nR:3:extra_payload_count=1\nF:8:_Z5scaleff";
    let co = code_object_with(&dir, section);
    let ops = [
        Op {
            id: 1,
            kind: Kind::Lds,
        },
        Op {
            id: 2,
            kind: Kind::Global,
        },
    ];
    let names = HashMap::from([(1, "addr_trace_lds_load"), (2, "addr_trace_load")]);
    let stream = generate(0x5eed_0003, 32, 2, &ops, 3, 8);
    let records = dir.join("records.jsonl");
    write_json_lines(&records, &stream.records);
    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    assert_eq!(doc["summary"]["layout_mismatches"], 0);
    check_operations(&doc, &stream.expected, &names, 128, 4);
}

/// A hand-made block whose numbers are easy to check by eye.
#[test]
fn hand_computed_block() {
    let dir = test_support::scratch_dir("sqtt-memtrace-hand");
    let co = code_object_with(
        &dir,
        "W:64\nP:1:addr_trace_load@a.hip:1\nR:1:extra_payload_count=130",
    );
    // Lanes 0..16 active, lane k reads base + 4k: 64 bytes in one 128-byte line.
    let mut csv = String::from("time,value,cu,simd,wave_id\n");
    let mut words = vec![1u32 << 2, 0xffff, 0];
    for lane in 0..64u64 {
        let a = 0x1_0000_0000u64 + 4 * lane;
        words.push(a as u32);
        words.push((a >> 32) as u32);
    }
    for (t, w) in words.iter().enumerate() {
        csv.push_str(&format!("{t},{w},0,0,0\n"));
    }
    let records = dir.join("records.csv");
    std::fs::write(&records, csv).unwrap();
    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&co),
        "--json",
    ]))
    .unwrap();
    let op = &doc["operations"][0];
    assert_eq!(op["executions"], 1);
    assert_eq!(
        op["lanes_active"],
        serde_json::json!({"mean": 16.0, "min": 16, "max": 16})
    );
    assert_eq!(op["cache_lines"]["total"], 1);
    assert_eq!(
        op["dominant_stride"],
        serde_json::json!({"bytes": 4, "share": 1.0})
    );
    assert_eq!(op["bytes_requested"], 64);
    assert_eq!(op["bytes_fetched"], 128);
    assert_eq!(op["coalescing_efficiency"], 0.5);
}
