//! Marker scopes rebuilt from shaderdata records: per wave, the enter/exit nesting of function
//! (`F:`) and user (`U:`) scopes, the point markers with their payload records, and the cycles
//! spent under each stack of scopes.
//!
//! Marker words (`docs/sqtt.md`, "Marker API"): low bits `10` enter scope `id`, `01` exit the
//! innermost scope, `11` exit then enter `id`, `00` point `id` followed by the `R:` count of
//! payload records. Time is the record's trace time (cycles); the cycles between a wave's
//! record `i` and record `i + 1` are charged to the stack in force after record `i`.

use super::funcmap::{EntryKind, Funcmap};
use super::records::Record;
use super::report::demangled;
use std::collections::BTreeMap;

/// Where a wave ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaveSlot {
    /// Shader engine.
    pub se: u32,
    /// Compute unit.
    pub cu: u32,
    /// SIMD.
    pub simd: u32,
    /// Wave slot.
    pub wave_id: u32,
}

/// One scope instance of a wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// Name from the map (demangled for functions; `marker <id>` when the map lacks the id).
    pub name: String,
    /// `func`, `user` or `marker` (an id the map does not define).
    pub kind: &'static str,
    /// Marker id.
    pub id: u32,
    /// Enter time.
    pub start: i64,
    /// Exit time (the wave's last record time when it never exited).
    pub end: i64,
    /// Nesting depth, 0 for the outermost scope.
    pub depth: usize,
    /// False when the wave's records ended inside the scope.
    pub exited: bool,
}

/// One point marker with its payload words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// Name from the map (`marker <id>` when unknown).
    pub name: String,
    /// Marker id.
    pub id: u32,
    /// Record time.
    pub time: i64,
    /// Payload words, as many as the `R:` row says (fewer when the records ended first).
    pub payload: Vec<u32>,
}

/// The scopes and points of one wave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveScopes {
    /// The wave.
    pub slot: WaveSlot,
    /// First record time.
    pub start: i64,
    /// Last record time.
    pub end: i64,
    /// Scopes in enter order.
    pub scopes: Vec<Scope>,
    /// Points in record order.
    pub points: Vec<Point>,
}

/// Everything rebuilt from a record stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkerScopes {
    /// Waves in slot order.
    pub waves: Vec<WaveScopes>,
    /// Cycles per stack of scope names (outermost first), over every wave; the empty stack is
    /// time outside any scope.
    pub cycles: BTreeMap<Vec<String>, u64>,
    /// Exits with no open scope.
    pub unmatched_exits: u64,
    /// Enter or point markers whose id the map does not define.
    pub unknown_ids: u64,
    /// Points whose payload was cut off by the end of their wave's records.
    pub incomplete_payloads: u64,
    /// Privileged (trap handler) records skipped.
    pub privileged_skipped: u64,
}

fn resolve(map: &Funcmap, id: u32) -> Option<(String, &'static str)> {
    let e = map.entry(id)?;
    Some(match e.kind {
        EntryKind::Function => (demangled(&e.name), "func"),
        EntryKind::Kernel => (demangled(&e.name), "kernel"),
        EntryKind::User => (e.name.clone(), "user"),
        EntryKind::Point => (e.name.clone(), "point"),
    })
}

/// Rebuilds the scopes of `records` with the names of `map`.
pub fn build(records: &[Record], map: &Funcmap) -> MarkerScopes {
    let mut out = MarkerScopes::default();
    let mut waves: BTreeMap<WaveSlot, Vec<&Record>> = BTreeMap::new();
    for r in records {
        if r.is_privileged() {
            out.privileged_skipped += 1;
            continue;
        }
        let slot = WaveSlot {
            se: r.se,
            cu: r.cu,
            simd: r.simd,
            wave_id: r.wave_id,
        };
        waves.entry(slot).or_default().push(r);
    }
    for (slot, recs) in waves {
        let mut wave = WaveScopes {
            slot,
            start: recs.first().map_or(0, |r| r.time),
            end: recs.last().map_or(0, |r| r.time),
            scopes: Vec::new(),
            points: Vec::new(),
        };
        // Indices into wave.scopes of the open scopes, innermost last.
        let mut open: Vec<usize> = Vec::new();
        let mut payload_left = 0u32;
        for (i, r) in recs.iter().enumerate() {
            let word = r.value as u32;
            if payload_left > 0 {
                if let Some(p) = wave.points.last_mut() {
                    p.payload.push(word);
                }
                payload_left -= 1;
            } else {
                let id = map.marker_id(word);
                let mut exit = |wave: &mut WaveScopes, open: &mut Vec<usize>| match open.pop() {
                    Some(s) => {
                        wave.scopes[s].end = r.time;
                        wave.scopes[s].exited = true;
                    }
                    None => out.unmatched_exits += 1,
                };
                let enter = |wave: &mut WaveScopes, open: &mut Vec<usize>, unknown: &mut u64| {
                    let (name, kind) = resolve(map, id).unwrap_or_else(|| {
                        *unknown += 1;
                        (format!("marker {id}"), "marker")
                    });
                    open.push(wave.scopes.len());
                    wave.scopes.push(Scope {
                        name,
                        kind,
                        id,
                        start: r.time,
                        end: wave.end,
                        depth: open.len() - 1,
                        exited: false,
                    });
                };
                match word & 3 {
                    2 => enter(&mut wave, &mut open, &mut out.unknown_ids),
                    1 => exit(&mut wave, &mut open),
                    3 => {
                        exit(&mut wave, &mut open);
                        enter(&mut wave, &mut open, &mut out.unknown_ids);
                    }
                    _ => {
                        let name = resolve(map, id).map(|(n, _)| n).unwrap_or_else(|| {
                            out.unknown_ids += 1;
                            format!("marker {id}")
                        });
                        payload_left = map.extra_payload_count(id);
                        wave.points.push(Point {
                            name,
                            id,
                            time: r.time,
                            payload: Vec::new(),
                        });
                    }
                }
            }
            if let Some(next) = recs.get(i + 1) {
                let delta = u64::try_from(next.time.saturating_sub(r.time)).unwrap_or(0);
                let stack: Vec<String> =
                    open.iter().map(|&s| wave.scopes[s].name.clone()).collect();
                *out.cycles.entry(stack).or_insert(0) += delta;
            }
        }
        if payload_left > 0 {
            out.incomplete_payloads += 1;
        }
        out.waves.push(wave);
    }
    out
}

/// The kernel a record file traced: `name` when given, else the map's only `K:` row
/// (demangled), else `kernel`.
pub fn kernel_name(map: &Funcmap, name: Option<&str>) -> String {
    if let Some(n) = name {
        return n.to_owned();
    }
    let kernels: Vec<&str> = map
        .entries()
        .iter()
        .filter(|e| e.kind == EntryKind::Kernel)
        .map(|e| e.name.as_str())
        .collect();
    match kernels.as_slice() {
        [one] => demangled(one),
        _ => "kernel".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time: i64, value: u32, wave: u32) -> Record {
        Record {
            time,
            value: u64::from(value),
            se: 0,
            cu: 1,
            simd: 2,
            wave_id: wave,
            flags: 0,
        }
    }

    #[test]
    fn nesting_fused_words_points_and_cycles() {
        let map = Funcmap::parse(
            b"W:64\nK:_Z4kernv\nF:1:_Z6helperi\nU:2:loop\nU:3:tail\nP:4:value\nR:4:extra_payload_count=2\n\0",
        )
        .unwrap();
        let records = vec![
            rec(100, (1 << 2) | 2, 0), // enter helper
            rec(110, (2 << 2) | 2, 0), // enter loop
            rec(130, 4 << 2, 0),       // point value + 2 payload words
            rec(131, 0xdead, 0),
            rec(132, 0xbeef, 0),
            rec(150, (3 << 2) | 3, 0), // exit loop, enter tail
            rec(170, 1, 0),            // exit tail
            rec(190, 1, 0),            // exit helper
            rec(200, 1, 0),            // unmatched
            rec(5, (2 << 2) | 2, 1),   // another wave: enter loop, never exits
            rec(9, 9 << 2, 1),         // unknown point
        ];
        let s = build(&records, &map);
        assert_eq!(s.waves.len(), 2);
        let w = &s.waves[0];
        let spans: Vec<(&str, i64, i64, usize)> = w
            .scopes
            .iter()
            .map(|c| (c.name.as_str(), c.start, c.end, c.depth))
            .collect();
        assert_eq!(
            spans,
            [
                ("helper(int)", 100, 190, 0),
                ("loop", 110, 150, 1),
                ("tail", 150, 170, 1)
            ]
        );
        assert_eq!(w.points[0].payload, [0xdead, 0xbeef]);
        assert_eq!(
            (s.unmatched_exits, s.unknown_ids, s.incomplete_payloads),
            (1, 1, 0)
        );
        let w1 = &s.waves[1];
        assert_eq!((w1.scopes[0].end, w1.scopes[0].exited), (9, false));
        let h = "helper(int)".to_owned();
        let cyc = |stack: &[&str]| {
            s.cycles
                .get(&stack.iter().map(|x| x.to_string()).collect::<Vec<_>>())
                .copied()
        };
        assert_eq!(cyc(&[&h]), Some(10 + 20));
        assert_eq!(cyc(&[&h, "loop"]), Some(40));
        assert_eq!(cyc(&[&h, "tail"]), Some(20));
        assert_eq!(cyc(&[]), Some(10));
        assert_eq!(cyc(&["loop"]), Some(4));
        assert_eq!(kernel_name(&map, None), "kern()");
        assert_eq!(kernel_name(&map, Some("k")), "k");
    }
}
