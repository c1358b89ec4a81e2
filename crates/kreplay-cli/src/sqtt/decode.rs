//! `kreplay sqtt decode`: the marker sequence of each wave, named from the function map, with
//! nesting depths, payload words and scope durations, as indented text or JSON.
//!
//! The sequence comes from [`scopes::build_numbered`], the same rebuild `timeline` and `flame`
//! draw. Input that does not fit the map or the protocol (an id the map lacks, a marker of the
//! wrong kind, a payload cut short, a value wider than 32 bits, time going backwards in a wave)
//! fails with the record's line, unless `--lenient`; exits without an open scope and scopes
//! still open at a wave's end are reported in the output, never an error.

use super::scopes::{self, Event, Issue, IssueKind, MarkerScopes, Step, WaveScopes, WaveSlot};
use super::shaderdata::{self, RecordError, RecordFormat};
use super::{SqttError, choose_map, load_maps, read, write_out};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Payload words shown on a text line; JSON carries all of them.
pub const TEXT_PAYLOAD_WORDS: usize = 8;

/// Deepest nesting the text indents; deeper lines say their depth instead, so a deep trace
/// does not print a square number of spaces.
pub const TEXT_INDENT_DEPTH: usize = 32;

fn indent(depth: usize) -> String {
    if depth <= TEXT_INDENT_DEPTH {
        "  ".repeat(depth)
    } else {
        format!("{}[depth {depth}] ", "  ".repeat(TEXT_INDENT_DEPTH))
    }
}

/// Output form of `decode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecodeFormat {
    /// Indented text, one line per marker.
    Text,
    /// One JSON document (schema in `docs/sqtt.md`).
    Json,
}

/// Arguments of `kreplay sqtt decode`.
#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// Shaderdata records of one dispatch: JSON array, JSON lines or CSV.
    records: PathBuf,
    /// Code object, HIP executable or bundle holding the `.sqtt_funcmap` of the traced code.
    #[arg(long)]
    funcmap: PathBuf,
    /// Choose the code object whose bundle entry id contains this text.
    #[arg(long)]
    target: Option<String>,
    /// Output form.
    #[arg(long, value_enum, default_value = "text")]
    format: DecodeFormat,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// Record file form.
    #[arg(long, value_enum, default_value = "auto")]
    records_format: RecordFormat,
    /// Name of the traced kernel (default: the map's only `K:` row).
    #[arg(long)]
    kernel: Option<String>,
    /// Decode input that does not fit the map (unknown ids as `marker <id>`, short payloads,
    /// wide values, time going backwards) and list the problems instead of failing.
    #[arg(long)]
    lenient: bool,
}

fn wave_label(s: WaveSlot) -> String {
    format!("se {} cu {} simd {} wave {}", s.se, s.cu, s.simd, s.wave_id)
}

/// One sentence saying what is wrong with the record of `issue`.
pub fn describe(issue: &Issue, scopes: &MarkerScopes) -> String {
    let wave = wave_label(issue.slot);
    match &issue.kind {
        IssueKind::UnknownId { word, id } => format!(
            "marker word {word:#x} (id {id}) of wave {wave}: id {id} is not in the .sqtt_funcmap; \
             check that --funcmap is the code the trace came from"
        ),
        IssueKind::WrongKind {
            word,
            id,
            used_as,
            defined_as,
        } => format!(
            "marker word {word:#x} of wave {wave} is {} {used_as} marker for id {id}, which the map \
             defines as a {defined_as} row; check that --funcmap is the code the trace came from",
            if used_as.starts_with('e') { "an" } else { "a" }
        ),
        IssueKind::PayloadCutShort { id, expected, got } => format!(
            "marker id {id} of wave {wave} has extra_payload_count={expected} (R: row) but the wave's \
             records end after {got} payload records: the trace is truncated"
        ),
        IssueKind::WideValue { value } => format!(
            "value {value:#x} of wave {wave} does not fit in 32 bits: not a marker or payload word"
        ),
        IssueKind::TimeBackwards {
            time,
            previous,
            previous_line,
        } => format!(
            "time {time} of wave {wave} is earlier than its previous record (time {previous}, line \
             {previous_line}): a wave's records must be in trace order"
        ),
        IssueKind::UnmatchedExit => format!("exit of wave {wave} with no open scope"),
        IssueKind::OpenAtEnd { scope } => {
            let name = scopes
                .waves
                .iter()
                .find(|w| w.slot == issue.slot)
                .and_then(|w| w.scopes.get(*scope))
                .map_or("?", |s| s.name.as_str());
            format!("scope {name} of wave {wave} is still open at the wave's last record")
        }
    }
}

fn malformed(scopes: &MarkerScopes) -> Vec<&Issue> {
    scopes
        .issues
        .iter()
        .filter(|i| i.kind.is_malformed())
        .collect()
}

/// `kreplay sqtt decode`.
pub fn run_decode(args: &DecodeArgs) -> Result<(), SqttError> {
    let maps = load_maps(&args.funcmap)?;
    let chosen = choose_map(&maps, &args.target, &args.funcmap)?;
    let records_err = |source| SqttError::Records {
        path: args.records.clone(),
        source,
    };
    let text = String::from_utf8(read(&args.records)?).map_err(|e| {
        records_err(RecordError {
            line: 0,
            detail: format!("not UTF-8 text ({e}); expected JSON or CSV records"),
        })
    })?;
    let numbered = shaderdata::parse_numbered(&text, args.records_format).map_err(records_err)?;
    let s = scopes::build_numbered(&numbered, &chosen.map);
    let bad = malformed(&s);
    if let (false, Some(first)) = (args.lenient, bad.first()) {
        let more = match bad.len() - 1 {
            0 => String::new(),
            n => format!(" ({n} more problems; --lenient decodes anyway and lists them)"),
        };
        return Err(records_err(RecordError {
            line: first.line,
            detail: format!("{}{more}", describe(first, &s)),
        }));
    }
    let ctx = Context {
        records: &args.records,
        funcmap: &args.funcmap,
        target: chosen.target.as_deref(),
        kernel: scopes::kernel_name(&chosen.map, args.kernel.as_deref()),
        record_count: numbered.len(),
    };
    if args.json || args.format == DecodeFormat::Json {
        write_out(&format!("{:#}\n", json_document(&ctx, &s)))
    } else {
        write_out(&text_report(&ctx, &s))
    }
}

/// What the report names besides the scopes.
pub struct Context<'a> {
    /// The records file.
    pub records: &'a Path,
    /// The map file.
    pub funcmap: &'a Path,
    /// The code object's bundle entry id.
    pub target: Option<&'a str>,
    /// The kernel.
    pub kernel: String,
    /// Records read (including privileged ones).
    pub record_count: usize,
}

fn payload_text(words: &[u32]) -> String {
    let mut t: Vec<String> = words
        .iter()
        .take(TEXT_PAYLOAD_WORDS)
        .map(|w| format!("{w:#010x}"))
        .collect();
    if words.len() > TEXT_PAYLOAD_WORDS {
        t.push(format!("... ({} words)", words.len()));
    }
    t.join(" ")
}

fn event_text(w: &WaveScopes, e: &Event) -> String {
    let closed = |c: Option<usize>| match c {
        Some(i) => {
            let sc = &w.scopes[i];
            format!("exit {}  ({} cycles)", sc.name, sc.duration())
        }
        None => "exit (no open scope)".to_owned(),
    };
    let entered = |i: usize| {
        let sc = &w.scopes[i];
        let open = if sc.exited {
            String::new()
        } else {
            "  (never exits)".to_owned()
        };
        format!("enter {}  [{} {}]{open}", sc.name, sc.kind, sc.id)
    };
    match e.step {
        Step::Enter { scope } => entered(scope),
        Step::Exit { closed: c } => closed(c),
        Step::ExitEnter { closed: c, scope } => format!("{}; {}", closed(c), entered(scope)),
        Step::Point { point } => {
            let p = &w.points[point];
            if p.expected_payload == 0 {
                format!("point {}  [{} {}]", p.name, p.kind, p.id)
            } else {
                let short = if p.payload.len() < p.expected_payload as usize {
                    format!(
                        "  (cut short: {} of {} words)",
                        p.payload.len(),
                        p.expected_payload
                    )
                } else {
                    String::new()
                };
                format!(
                    "data {}  [{} {}] {}{short}",
                    p.name,
                    p.kind,
                    p.id,
                    payload_text(&p.payload)
                )
            }
        }
    }
}

/// The indented text report.
pub fn text_report(ctx: &Context, s: &MarkerScopes) -> String {
    let mut out = String::new();
    let target = ctx.target.map(|t| format!(" ({t})")).unwrap_or_default();
    let _ = writeln!(
        out,
        "{}: {} waves, {} records ({}; map {}{target})",
        ctx.kernel,
        s.waves.len(),
        ctx.record_count,
        ctx.records.display(),
        ctx.funcmap.display()
    );
    for w in &s.waves {
        let _ = writeln!(
            out,
            "\nwave {}: {} records, time {}..{} ({} cycles)",
            wave_label(w.slot),
            w.records,
            w.start,
            w.end,
            w.end.saturating_sub(w.start)
        );
        let _ = writeln!(out, "  {:>6} {:>12}  marker", "line", "time");
        for e in &w.events {
            let indent = indent(e.depth);
            let _ = writeln!(
                out,
                "  {:>6} {:>12}  {indent}{}",
                e.line,
                e.time,
                event_text(w, e)
            );
        }
        for sc in w.scopes.iter().filter(|sc| !sc.exited) {
            let _ = writeln!(
                out,
                "  {:>6} {:>12}  {}(end of records inside {}, open for {} cycles)",
                "",
                w.end,
                indent(sc.depth),
                sc.name,
                sc.duration()
            );
        }
    }
    let scopes: usize = s.waves.iter().map(|w| w.scopes.len()).sum();
    let open: usize = s
        .waves
        .iter()
        .map(|w| w.scopes.iter().filter(|c| !c.exited).count())
        .sum();
    let _ = writeln!(
        out,
        "\n{scopes} scopes ({open} still open at their wave's end), {} exits without an open scope, {} privileged records skipped",
        s.unmatched_exits, s.privileged_skipped
    );
    let bad = malformed(s);
    if !bad.is_empty() {
        let _ = writeln!(out, "{} problems (decoded with --lenient):", bad.len());
        for i in bad {
            let _ = writeln!(out, "  line {}: {}", i.line, describe(i, s));
        }
    }
    out
}

fn slot_json(s: WaveSlot) -> [(&'static str, Value); 4] {
    [
        ("se", json!(s.se)),
        ("cu", json!(s.cu)),
        ("simd", json!(s.simd)),
        ("wave_id", json!(s.wave_id)),
    ]
}

fn event_json(w: &WaveScopes, e: &Event) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("line".into(), json!(e.line));
    o.insert("time".into(), json!(e.time));
    o.insert("word".into(), json!(e.word));
    o.insert("depth".into(), json!(e.depth));
    let scope_fields = |o: &mut serde_json::Map<String, Value>, i: usize| {
        let sc = &w.scopes[i];
        o.insert("scope".into(), json!(i));
        o.insert("id".into(), json!(sc.id));
        o.insert("name".into(), json!(sc.name));
        o.insert("kind".into(), json!(sc.kind));
        o.insert("duration".into(), json!(sc.duration()));
        o.insert("exited".into(), json!(sc.exited));
    };
    let closes = |c: Option<usize>| match c {
        Some(i) => {
            let sc = &w.scopes[i];
            json!({ "scope": i, "id": sc.id, "name": sc.name, "kind": sc.kind, "duration": sc.duration() })
        }
        None => Value::Null,
    };
    match e.step {
        Step::Enter { scope } => {
            o.insert("event".into(), json!("enter"));
            scope_fields(&mut o, scope);
        }
        Step::Exit { closed } => {
            o.insert("event".into(), json!("exit"));
            o.insert("closes".into(), closes(closed));
        }
        Step::ExitEnter { closed, scope } => {
            o.insert("event".into(), json!("exit_enter"));
            o.insert("closes".into(), closes(closed));
            scope_fields(&mut o, scope);
        }
        Step::Point { point } => {
            let p = &w.points[point];
            let event = if p.expected_payload == 0 {
                "point"
            } else {
                "data"
            };
            o.insert("event".into(), json!(event));
            o.insert("id".into(), json!(p.id));
            o.insert("name".into(), json!(p.name));
            o.insert("kind".into(), json!(p.kind));
            o.insert("extra_payload_count".into(), json!(p.expected_payload));
            o.insert("payload".into(), json!(p.payload));
        }
    }
    Value::Object(o)
}

/// The JSON document (schema in `docs/sqtt.md`).
pub fn json_document(ctx: &Context, s: &MarkerScopes) -> Value {
    let waves: Vec<Value> = s
        .waves
        .iter()
        .map(|w| {
            let mut o: serde_json::Map<String, Value> =
                slot_json(w.slot).into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            o.insert("records".into(), json!(w.records));
            o.insert("start".into(), json!(w.start));
            o.insert("end".into(), json!(w.end));
            o.insert("cycles".into(), json!(w.end.saturating_sub(w.start)));
            o.insert("events".into(), w.events.iter().map(|e| event_json(w, e)).collect());
            let scopes: Vec<Value> = w
                .scopes
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id, "name": c.name, "kind": c.kind, "depth": c.depth,
                        "start": c.start, "end": c.end, "duration": c.duration(), "exited": c.exited,
                        "enter_line": c.enter_line, "exit_line": c.exit_line,
                    })
                })
                .collect();
            o.insert("scopes".into(), Value::Array(scopes));
            Value::Object(o)
        })
        .collect();
    let problems: Vec<Value> = malformed(s)
        .into_iter()
        .map(|i| {
            let mut o: serde_json::Map<String, Value> = slot_json(i.slot)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            o.insert("line".into(), json!(i.line));
            o.insert("message".into(), json!(describe(i, s)));
            Value::Object(o)
        })
        .collect();
    let scopes: usize = s.waves.iter().map(|w| w.scopes.len()).sum();
    let open: usize = s
        .waves
        .iter()
        .map(|w| w.scopes.iter().filter(|c| !c.exited).count())
        .sum();
    let markers: usize = s.waves.iter().map(|w| w.events.len()).sum();
    let payload: usize = s
        .waves
        .iter()
        .flat_map(|w| &w.points)
        .map(|p| p.payload.len())
        .sum();
    json!({
        "records": ctx.records.display().to_string(),
        "funcmap": ctx.funcmap.display().to_string(),
        "target": ctx.target,
        "kernel": ctx.kernel,
        "summary": {
            "records": ctx.record_count,
            "waves": s.waves.len(),
            "markers": markers,
            "payload_records": payload,
            "scopes": scopes,
            "open_scopes": open,
            "unmatched_exits": s.unmatched_exits,
            "privileged_skipped": s.privileged_skipped,
        },
        "waves": waves,
        "problems": problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqtt::funcmap::Funcmap;
    use crate::sqtt::shaderdata::{NumberedRecord, Record};

    fn rec(line: usize, time: i64, value: u64) -> NumberedRecord {
        NumberedRecord {
            line,
            record: Record {
                time,
                value,
                se: 0,
                cu: 0,
                simd: 1,
                wave_id: 2,
                flags: 0,
            },
        }
    }

    #[test]
    fn depths_durations_and_problems() {
        let map = Funcmap::parse(b"U:1:outer\nU:2:inner\nP:3:value\nR:3:extra_payload_count=2\n\0")
            .unwrap();
        let recs = [
            rec(1, 10, 1),            // exit, nothing open
            rec(2, 11, (1 << 2) | 2), // enter outer
            rec(3, 15, (2 << 2) | 2), // enter inner
            rec(4, 17, 3 << 2),       // data value
            rec(5, 18, 7),
            rec(6, 19, 8),
            rec(7, 30, (2 << 2) | 3), // exit inner, enter inner
            rec(8, 35, 1),            // exit inner; outer stays open
        ];
        let s = scopes::build_numbered(&recs, &map);
        let w = &s.waves[0];
        let depths: Vec<usize> = w.events.iter().map(|e| e.depth).collect();
        assert_eq!(depths, [0, 0, 1, 2, 1, 1]);
        let durations: Vec<(i64, bool)> =
            w.scopes.iter().map(|c| (c.duration(), c.exited)).collect();
        assert_eq!(durations, [(24, false), (15, true), (5, true)]);
        assert!(malformed(&s).is_empty());
        let kinds: Vec<&IssueKind> = s.issues.iter().map(|i| &i.kind).collect();
        assert_eq!(
            kinds,
            [
                &IssueKind::UnmatchedExit,
                &IssueKind::OpenAtEnd { scope: 0 }
            ]
        );
        assert_eq!(s.issues[1].line, 2);

        let cut = [rec(1, 0, 3 << 2), rec(2, 1, 5)];
        let s = scopes::build_numbered(&cut, &map);
        let bad = malformed(&s);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 1);
        assert!(
            describe(bad[0], &s).contains("extra_payload_count=2"),
            "{}",
            describe(bad[0], &s)
        );

        let wrong = [
            rec(4, 0, (3 << 2) | 2),
            rec(5, 1, 9 << 2),
            rec(6, 0, (1 << 40) | 1),
        ];
        let s = scopes::build_numbered(&wrong, &map);
        let lines: Vec<(usize, bool)> = malformed(&s)
            .iter()
            .map(|i| (i.line, i.kind.is_malformed()))
            .collect();
        assert_eq!(lines, [(4, true), (5, true), (6, true), (6, true)]);
        assert!(matches!(
            s.issues[0].kind,
            IssueKind::WrongKind {
                used_as: "enter",
                defined_as: "point",
                ..
            }
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_records_decode_without_panicking(raw in proptest::collection::vec((0i64..64, proptest::prelude::any::<u64>(), 0u32..3), 0..200)) {
            let map = Funcmap::parse(b"U:1:a\nF:2:_Z1fv\nP:3:p\nR:3:extra_payload_count=3\nP:4:q\n\0").unwrap();
            let recs: Vec<NumberedRecord> = raw
                .iter()
                .enumerate()
                .map(|(i, &(time, value, wave_id))| NumberedRecord {
                    line: i + 2,
                    record: Record { time, value: (value % 64) | (value & (1 << 40)), se: 0, cu: 0, simd: 0, wave_id, flags: 0 },
                })
                .collect();
            let s = scopes::build_numbered(&recs, &map);
            let ctx = Context { records: Path::new("r"), funcmap: Path::new("m"), target: None, kernel: "k".into(), record_count: recs.len() };
            let text = text_report(&ctx, &s);
            let doc = json_document(&ctx, &s);
            let events: usize = s.waves.iter().map(|w| w.events.len()).sum();
            proptest::prop_assert_eq!(doc["summary"]["markers"].as_u64(), Some(events as u64));
            let payload: usize = s.waves.iter().flat_map(|w| &w.points).map(|p| p.payload.len()).sum();
            proptest::prop_assert_eq!(events + payload, recs.len());
            proptest::prop_assert!(text.starts_with("k: "));
            for i in &s.issues {
                proptest::prop_assert!(i.line >= 2 && !describe(i, &s).is_empty());
            }
        }
    }
}
