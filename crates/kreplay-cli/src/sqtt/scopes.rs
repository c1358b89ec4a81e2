//! Marker scopes rebuilt from shaderdata records: per wave, the enter/exit nesting of function
//! (`F:`) and user (`U:`) scopes, the point markers with their payload records, and the cycles
//! spent under each stack of scopes.
//!
//! Marker words (`docs/sqtt.md`, "Marker API"): low bits `10` enter scope `id`, `01` exit the
//! innermost scope, `11` exit then enter `id`, `00` point `id` followed by the `R:` count of
//! payload records. Time is the record's trace time (cycles); the cycles between a wave's
//! record `i` and record `i + 1` are charged to the stack in force after record `i`.
//!
//! Each wave also keeps its marker sequence ([`Event`], one per header record, with its
//! nesting depth and input line) and the rebuild lists what does not fit ([`Issue`]): ids the
//! map lacks, markers of the wrong kind, payloads cut short, words wider than 32 bits, time
//! going backwards, exits without an open scope and scopes still open at the wave's end.

use super::funcmap::{EntryKind, Funcmap};
use super::report::demangled;
use super::shaderdata::{NumberedRecord, Record};
use std::collections::{BTreeMap, HashMap};

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
    /// Input line of the enter record.
    pub enter_line: usize,
    /// Input line of the exit record, when it exited.
    pub exit_line: Option<usize>,
}

impl Scope {
    /// Exit minus enter time (up to the wave's last record when it never exited).
    pub fn duration(&self) -> i64 {
        self.end.saturating_sub(self.start)
    }
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
    /// The `R:` count of the id (0 without a row).
    pub expected_payload: u32,
    /// The map's kind of the id (`point`, or `marker` when the map lacks it).
    pub kind: &'static str,
}

/// What one header record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Entered `scope` (index into [`WaveScopes::scopes`]).
    Enter {
        /// The scope entered.
        scope: usize,
    },
    /// Exited `closed` (`None`: no scope was open).
    Exit {
        /// The scope exited.
        closed: Option<usize>,
    },
    /// A fused word: exited `closed`, then entered `scope`.
    ExitEnter {
        /// The scope exited (`None`: no scope was open).
        closed: Option<usize>,
        /// The scope entered.
        scope: usize,
    },
    /// A point marker (index into [`WaveScopes::points`]), with its payload records.
    Point {
        /// The point.
        point: usize,
    },
}

/// One header record of a wave's marker sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Input line of the record (0 when unknown).
    pub line: usize,
    /// Record time.
    pub time: i64,
    /// The marker word.
    pub word: u32,
    /// Nesting depth: of the scope entered or exited (0 outermost), or, for a point, the
    /// number of scopes open around it.
    pub depth: usize,
    /// What the word did.
    pub step: Step,
}

/// Something in the records that does not fit the marker protocol or the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Input line of the record (0 when unknown).
    pub line: usize,
    /// The wave.
    pub slot: WaveSlot,
    /// What is wrong.
    pub kind: IssueKind,
}

/// The kinds of [`Issue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IssueKind {
    /// An enter or point word whose id the map does not define.
    UnknownId {
        /// The word.
        word: u32,
        /// Its id.
        id: u32,
    },
    /// An enter word for a point id, or a point word for a scope id.
    WrongKind {
        /// The word.
        word: u32,
        /// Its id.
        id: u32,
        /// `enter` or `point`.
        used_as: &'static str,
        /// The map's row kind (`func`, `user`, `point`, `kernel`).
        defined_as: &'static str,
    },
    /// A header whose `R:` payload ran past the end of the wave's records.
    PayloadCutShort {
        /// The header id.
        id: u32,
        /// The `R:` count.
        expected: u32,
        /// Payload records present.
        got: u32,
    },
    /// A value with bits above the low 32: not a marker or payload word.
    WideValue {
        /// The value.
        value: u64,
    },
    /// A record earlier in time than the wave's previous one.
    TimeBackwards {
        /// Its time.
        time: i64,
        /// The previous record's time.
        previous: i64,
        /// The previous record's line.
        previous_line: usize,
    },
    /// An exit word with no open scope.
    UnmatchedExit,
    /// A scope still open at the wave's last record (index into [`WaveScopes::scopes`]).
    OpenAtEnd {
        /// The scope.
        scope: usize,
    },
}

impl IssueKind {
    /// True for input that is wrong (unknown ids, wrong kinds, cut-short payloads, wide values,
    /// time going backwards); false for what a trace window can cause (an exit of a scope
    /// entered before the trace started, a wave traced until it stopped inside a scope).
    pub fn is_malformed(&self) -> bool {
        !matches!(self, IssueKind::UnmatchedExit | IssueKind::OpenAtEnd { .. })
    }
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
    /// Header records in order.
    pub events: Vec<Event>,
    /// Records of the wave (headers and payload).
    pub records: usize,
}

/// Everything rebuilt from a record stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MarkerScopes {
    /// Waves in slot order.
    pub waves: Vec<WaveScopes>,
    /// Cycles per stack, over every wave (see [`MarkerScopes::cycles`]).
    stacks: StackTree,
    /// Exits with no open scope.
    pub unmatched_exits: u64,
    /// Enter or point markers whose id the map does not define.
    pub unknown_ids: u64,
    /// Points whose payload was cut off by the end of their wave's records.
    pub incomplete_payloads: u64,
    /// Privileged (trap handler) records skipped.
    pub privileged_skipped: u64,
    /// Everything that does not fit, in wave order then record order.
    pub issues: Vec<Issue>,
}

/// The distinct stacks of open scopes as a tree (node 0 the empty stack), with the cycles
/// charged to each: charging a record costs no copy of its stack, however deep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct StackTree {
    /// Parent and name of node `i + 1`.
    nodes: Vec<(usize, String)>,
    children: HashMap<(usize, String), usize>,
    /// Cycles of node `i`.
    cycles: Vec<u64>,
}

impl StackTree {
    fn child(&mut self, parent: usize, name: &str) -> usize {
        if let Some(&id) = self.children.get(&(parent, name.to_owned())) {
            return id;
        }
        self.nodes.push((parent, name.to_owned()));
        let id = self.nodes.len();
        self.children.insert((parent, name.to_owned()), id);
        id
    }

    fn charge(&mut self, node: usize, cycles: u64) {
        if self.cycles.len() <= node {
            self.cycles.resize(node + 1, 0);
        }
        self.cycles[node] += cycles;
    }
}

impl MarkerScopes {
    /// Cycles per stack of scope names (outermost first), over every wave; the empty stack is
    /// time outside any scope. Stacks charged no cycle are left out.
    pub fn cycles(&self) -> BTreeMap<Vec<String>, u64> {
        let t = &self.stacks;
        let mut out = BTreeMap::new();
        for (node, &n) in t.cycles.iter().enumerate().filter(|(_, n)| **n > 0) {
            let mut stack = Vec::new();
            let mut at = node;
            while at != 0 {
                let (parent, name) = &t.nodes[at - 1];
                stack.push(name.clone());
                at = *parent;
            }
            stack.reverse();
            *out.entry(stack).or_insert(0) += n;
        }
        out
    }
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

/// The name and kind `map` gives the id of header `h`, used as `used_as`: an id it does not
/// name is counted and reported (`None`), and a kind `fits` refuses is reported.
fn resolve_use(
    map: &Funcmap,
    h: Header,
    used_as: &'static str,
    fits: impl Fn(&str) -> bool,
    wave: &WaveScopes,
    out: &mut MarkerScopes,
) -> Option<(String, &'static str)> {
    let Header { word, id, line, .. } = h;
    let Some((name, kind)) = resolve(map, id) else {
        out.unknown_ids += 1;
        out.issues.push(Issue {
            line,
            slot: wave.slot,
            kind: IssueKind::UnknownId { word, id },
        });
        return None;
    };
    if !fits(kind) {
        out.issues.push(Issue {
            line,
            slot: wave.slot,
            kind: IssueKind::WrongKind {
                word,
                id,
                used_as,
                defined_as: kind,
            },
        });
    }
    Some((name, kind))
}

/// Rebuilds the scopes of `records` with the names of `map`.
pub fn build(records: &[Record], map: &Funcmap) -> MarkerScopes {
    let numbered: Vec<NumberedRecord> = records
        .iter()
        .map(|&record| NumberedRecord { line: 0, record })
        .collect();
    build_numbered(&numbered, map)
}

/// Rebuilds the scopes of `records` (with their input lines) with the names of `map`.
pub fn build_numbered(records: &[NumberedRecord], map: &Funcmap) -> MarkerScopes {
    let mut out = MarkerScopes::default();
    let mut waves: BTreeMap<WaveSlot, Vec<&NumberedRecord>> = BTreeMap::new();
    for n in records {
        let r = &n.record;
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
        waves.entry(slot).or_default().push(n);
    }
    for (slot, recs) in waves {
        let wave = rebuild_wave(slot, &recs, map, &mut out);
        out.waves.push(wave);
    }
    out
}

/// The scopes, points and events of one wave's records; counts and issues go to `out`.
fn rebuild_wave(
    slot: WaveSlot,
    recs: &[&NumberedRecord],
    map: &Funcmap,
    out: &mut MarkerScopes,
) -> WaveScopes {
    let mut wave = WaveScopes {
        slot,
        start: recs.first().map_or(0, |n| n.record.time),
        end: recs.last().map_or(0, |n| n.record.time),
        scopes: Vec::new(),
        points: Vec::new(),
        events: Vec::new(),
        records: recs.len(),
    };
    // Indices into wave.scopes of the open scopes, innermost last.
    let mut open: Vec<usize> = Vec::new();
    // The stack-tree node of each open scope.
    let mut open_nodes: Vec<usize> = Vec::new();
    let mut payload_left = 0u32;
    // The header whose payload is being read: (line, id, expected).
    let mut payload_header = (0usize, 0u32, 0u32);
    for (i, n) in recs.iter().enumerate() {
        let (r, line) = (&n.record, n.line);
        check_value_and_time(slot, recs, i, out);
        let word = r.value as u32;
        if payload_left > 0 {
            if let Some(p) = wave.points.last_mut() {
                p.payload.push(word);
            }
            payload_left -= 1;
        } else {
            let id = map.marker_id(word);
            let h = Header {
                word,
                id,
                time: r.time,
                line,
            };
            let depth_before = open.len();
            let step = apply_header(&mut wave, &mut open, map, h, out);
            if let Step::Point { .. } = step {
                payload_left = map.extra_payload_count(id);
                payload_header = (line, id, payload_left);
            }
            push_event(&mut wave, &open, h, step, depth_before);
            follow_open_stack(&wave, &open, &mut open_nodes, step, out);
        }
        if let Some(next) = recs.get(i + 1) {
            let delta = u64::try_from(next.record.time.saturating_sub(r.time)).unwrap_or(0);
            out.stacks
                .charge(open_nodes.last().copied().unwrap_or(0), delta);
        }
    }
    report_wave_end(&wave, &open, payload_left, payload_header, out);
    wave
}

/// Flags record `i` of a wave when its value is wider than 32 bits or its time goes backwards.
fn check_value_and_time(
    slot: WaveSlot,
    recs: &[&NumberedRecord],
    i: usize,
    out: &mut MarkerScopes,
) {
    let (r, line) = (&recs[i].record, recs[i].line);
    if r.value > u64::from(u32::MAX) {
        out.issues.push(Issue {
            line,
            slot,
            kind: IssueKind::WideValue { value: r.value },
        });
    }
    if let Some(prev) = i.checked_sub(1).map(|p| recs[p])
        && r.time < prev.record.time
    {
        out.issues.push(Issue {
            line,
            slot,
            kind: IssueKind::TimeBackwards {
                time: r.time,
                previous: prev.record.time,
                previous_line: prev.line,
            },
        });
    }
}

/// Applies one header word by its low bits: enter, exit, exit then enter, or point.
fn apply_header(
    wave: &mut WaveScopes,
    open: &mut Vec<usize>,
    map: &Funcmap,
    h: Header,
    out: &mut MarkerScopes,
) -> Step {
    match h.word & 3 {
        2 => Step::Enter {
            scope: enter(wave, open, map, h, out),
        },
        1 => Step::Exit {
            closed: exit(wave, open, h, out),
        },
        3 => {
            let closed = exit(wave, open, h, out);
            Step::ExitEnter {
                closed,
                scope: enter(wave, open, map, h, out),
            }
        }
        _ => Step::Point {
            point: add_point(wave, map, h, out),
        },
    }
}

/// Adds point `h.id` to `wave`, expecting the `R:` count of payload records; returns its index.
fn add_point(wave: &mut WaveScopes, map: &Funcmap, h: Header, out: &mut MarkerScopes) -> usize {
    let (id, time) = (h.id, h.time);
    let (name, kind) = resolve_use(map, h, "point", |k| k == "point", wave, out).map_or_else(
        || (format!("marker {id}"), "marker"),
        |(name, _)| (name, "point"),
    );
    wave.points.push(Point {
        name,
        id,
        time,
        payload: Vec::new(),
        expected_payload: map.extra_payload_count(id),
        kind,
    });
    wave.points.len() - 1
}

/// Appends the event of a header to the wave's marker sequence, with its nesting depth.
fn push_event(wave: &mut WaveScopes, open: &[usize], h: Header, step: Step, depth_before: usize) {
    let depth = match step {
        Step::Enter { scope } | Step::ExitEnter { scope, .. } => wave.scopes[scope].depth,
        Step::Exit { .. } => open.len(),
        Step::Point { .. } => depth_before,
    };
    wave.events.push(Event {
        line: h.line,
        time: h.time,
        word: h.word,
        depth,
        step,
    });
}

/// Brings the stack-tree nodes of the open scopes in line with `open` after a header's step.
fn follow_open_stack(
    wave: &WaveScopes,
    open: &[usize],
    open_nodes: &mut Vec<usize>,
    step: Step,
    out: &mut MarkerScopes,
) {
    if let Step::Exit { closed: Some(_) }
    | Step::ExitEnter {
        closed: Some(_), ..
    } = step
    {
        open_nodes.pop();
    }
    while open_nodes.len() < open.len() {
        let parent = open_nodes.last().copied().unwrap_or(0);
        let name = &wave.scopes[open[open_nodes.len()]].name;
        open_nodes.push(out.stacks.child(parent, name));
    }
}

/// Reports what the wave's end left unfinished: a payload cut short and scopes still open.
fn report_wave_end(
    wave: &WaveScopes,
    open: &[usize],
    payload_left: u32,
    payload_header: (usize, u32, u32),
    out: &mut MarkerScopes,
) {
    if payload_left > 0 {
        out.incomplete_payloads += 1;
        let (line, id, expected) = payload_header;
        out.issues.push(Issue {
            line,
            slot: wave.slot,
            kind: IssueKind::PayloadCutShort {
                id,
                expected,
                got: expected - payload_left,
            },
        });
    }
    for &scope in open {
        out.issues.push(Issue {
            line: wave.scopes[scope].enter_line,
            slot: wave.slot,
            kind: IssueKind::OpenAtEnd { scope },
        });
    }
}

/// A header record being applied.
#[derive(Clone, Copy)]
struct Header {
    word: u32,
    id: u32,
    time: i64,
    line: usize,
}

/// Closes the innermost open scope of `wave` at the header's time.
fn exit(
    wave: &mut WaveScopes,
    open: &mut Vec<usize>,
    h: Header,
    out: &mut MarkerScopes,
) -> Option<usize> {
    match open.pop() {
        Some(s) => {
            let scope = &mut wave.scopes[s];
            scope.end = h.time;
            scope.exited = true;
            scope.exit_line = Some(h.line);
            Some(s)
        }
        None => {
            out.unmatched_exits += 1;
            out.issues.push(Issue {
                line: h.line,
                slot: wave.slot,
                kind: IssueKind::UnmatchedExit,
            });
            None
        }
    }
}

/// Opens scope `h.id` in `wave` at the header's time.
fn enter(
    wave: &mut WaveScopes,
    open: &mut Vec<usize>,
    map: &Funcmap,
    h: Header,
    out: &mut MarkerScopes,
) -> usize {
    let Header { id, time, line, .. } = h;
    let (name, kind) = resolve_use(
        map,
        h,
        "enter",
        |k| !matches!(k, "point" | "kernel"),
        wave,
        out,
    )
    .unwrap_or_else(|| (format!("marker {id}"), "marker"));
    open.push(wave.scopes.len());
    wave.scopes.push(Scope {
        name,
        kind,
        id,
        start: time,
        end: wave.end,
        depth: open.len() - 1,
        exited: false,
        enter_line: line,
        exit_line: None,
    });
    wave.scopes.len() - 1
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
            s.cycles()
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
