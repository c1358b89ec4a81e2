//! Text tables and JSON documents for `funcmap` and `memtrace`.

use super::address_trace::{AddressLayout, Geometry, TraceAnalysis};
use super::funcmap::{EntryKind, Funcmap};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A decoded map with resolved addresses, ready to print.
pub struct ResolvedMap {
    /// Bundle entry id, when the code object came from a bundle.
    pub target: Option<String>,
    /// The map.
    pub map: Funcmap,
    /// Function symbol values by name.
    pub symbols: HashMap<String, u64>,
}

struct Row {
    kind: EntryKind,
    id: Option<u32>,
    extra: u32,
    vaddr: Option<u64>,
    name: String,
    symbol: String,
    source: Option<String>,
}

fn rows(resolved: &ResolvedMap, demangle: bool) -> Vec<Row> {
    resolved
        .map
        .entries()
        .iter()
        .map(|e| {
            let code = matches!(e.kind, EntryKind::Kernel | EntryKind::Function);
            let vaddr = if code {
                resolved.symbols.get(&e.name).copied()
            } else {
                None
            };
            let name = if code && demangle {
                demangled(&e.name)
            } else {
                e.name.clone()
            };
            Row {
                kind: e.kind,
                id: e.id,
                extra: e.id.map_or(0, |id| resolved.map.extra_payload_count(id)),
                vaddr,
                name,
                symbol: e.name.clone(),
                source: e.source.clone(),
            }
        })
        .collect()
}

/// Itanium demangling; the name itself when it is not a mangled name.
pub fn demangled(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

/// The funcmap table(s).
pub fn funcmap_table(maps: &[ResolvedMap], demangle: bool) -> String {
    let mut out = String::new();
    for (i, resolved) in maps.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if let Some(t) = &resolved.target {
            let _ = writeln!(out, "code object {t}:");
        }
        if let Some(w) = resolved.map.wave_size() {
            let _ = writeln!(out, "  wave_size: {w}");
        }
        if let Some(c) = resolved.map.clock() {
            let _ = writeln!(out, "  shader_clock: bits={} shift={}", c.bits, c.shift);
        }
        let _ = writeln!(
            out,
            "{:>6}{:>10}{:>10}{:>20}  Name",
            "Type", "ID", "Extra", "Vaddr"
        );
        let _ = writeln!(
            out,
            "{:>6}{:>10}{:>10}{:>20}  ----",
            "----", "---", "-----", "-----"
        );
        for r in rows(resolved, demangle) {
            let id = r.id.map_or_else(|| "-".to_string(), |id| id.to_string());
            let vaddr = r
                .vaddr
                .map_or_else(|| "-".to_string(), |v| format!("0x{v:016x}"));
            let src = r.source.map(|s| format!("@{s}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{:>6}{id:>10}{:>10}{vaddr:>20}  {}{src}",
                r.kind.label(),
                r.extra,
                r.name
            );
        }
    }
    out
}

/// The funcmap JSON document.
pub fn funcmap_json(file: &str, maps: &[ResolvedMap], demangle: bool) -> Value {
    let objects: Vec<Value> = maps
        .iter()
        .map(|resolved| {
            let entries: Vec<Value> = rows(resolved, demangle)
                .into_iter()
                .map(|r| {
                    json!({
                        "type": r.kind.label(),
                        "id": r.id,
                        "extra_payload_count": r.extra,
                        "vaddr": r.vaddr,
                        "name": r.name,
                        "symbol": r.symbol,
                        "source": r.source,
                    })
                })
                .collect();
            json!({
                "target": resolved.target,
                "wave_size": resolved.map.wave_size(),
                "shader_clock": resolved.map.clock().map(|c| json!({"bits": c.bits, "shift": c.shift})),
                "entries": entries,
            })
        })
        .collect();
    json!({ "file": file, "code_objects": objects })
}

/// Identity of the memtrace run, for headers.
pub struct MemtraceContext<'a> {
    /// Record file as given.
    pub records: &'a str,
    /// Funcmap file as given.
    pub funcmap: &'a str,
    /// Chosen code object.
    pub target: Option<&'a str>,
    /// Analysis settings.
    pub geometry: Geometry,
}

/// The memtrace JSON document.
pub fn memtrace_json(ctx: &MemtraceContext<'_>, map: &Funcmap, a: &TraceAnalysis) -> Value {
    let ops: Vec<Value> = a
        .operations
        .values()
        .map(|op| {
            let entry = map.entry(op.id);
            json!({
                "id": op.id,
                "name": entry.map(|e| e.name.as_str()),
                "source": entry.and_then(|e| e.source.as_deref()),
                "layout": entry.and_then(|e| AddressLayout::of(&e.name)).map(AddressLayout::label),
                "executions": op.executions,
                "lanes_active": { "mean": op.lanes_mean(), "min": op.lanes_min, "max": op.lanes_max },
                "cache_lines": { "mean": op.lines_mean(), "min": op.lines_min, "max": op.lines_max, "total": op.lines_sum },
                "dominant_stride": op.dominant_stride().map(|(bytes, share)| json!({"bytes": bytes, "share": share})),
                "bytes_requested": op.bytes_requested,
                "bytes_fetched": op.bytes_fetched,
                "coalescing_efficiency": op.coalescing_efficiency(),
            })
        })
        .collect();
    json!({
        "records": ctx.records,
        "funcmap": ctx.funcmap,
        "target": ctx.target,
        "wave_size": ctx.geometry.wave_size,
        "line_size": ctx.geometry.line_size,
        "access_size": ctx.geometry.access_size,
        "summary": {
            "records": a.records,
            "waves": a.waves,
            "address_blocks": a.address_blocks,
            "incomplete_blocks": a.incomplete_blocks,
            "layout_mismatches": a.layout_mismatches,
            "unknown_headers": a.unknown_headers,
            "privileged_skipped": a.privileged_skipped,
        },
        "operations": ops,
    })
}

/// The memtrace table.
pub fn memtrace_table(ctx: &MemtraceContext<'_>, map: &Funcmap, a: &TraceAnalysis) -> String {
    let g = ctx.geometry;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "wave_size: {}  line size: {} B  access size: {} B per lane",
        g.wave_size, g.line_size, g.access_size
    );
    let _ = writeln!(
        out,
        "{} records, {} waves, {} address blocks ({} incomplete, {} layout mismatches, {} unknown headers, {} privileged skipped)",
        a.records,
        a.waves,
        a.address_blocks,
        a.incomplete_blocks,
        a.layout_mismatches,
        a.unknown_headers,
        a.privileged_skipped
    );
    let _ = writeln!(
        out,
        "{:>8}  {:>8}  {:>20}  {:>26}  {:>14}  {:>10}  Operation",
        "ID",
        "Execs",
        "Lanes mean/min/max",
        "Lines mean/min/max/total",
        "Stride (share)",
        "Coalescing"
    );
    for op in a.operations.values() {
        let entry = map.entry(op.id);
        let name = entry.map_or("?", |e| e.name.as_str());
        let src = entry
            .and_then(|e| e.source.as_deref())
            .map(|s| format!("@{s}"))
            .unwrap_or_default();
        let lanes = format!("{:.2}/{}/{}", op.lanes_mean(), op.lanes_min, op.lanes_max);
        let lines = format!(
            "{:.2}/{}/{}/{}",
            op.lines_mean(),
            op.lines_min,
            op.lines_max,
            op.lines_sum
        );
        let stride = op.dominant_stride().map_or_else(
            || "-".to_string(),
            |(s, share)| format!("{s} ({:.0}%)", share * 100.0),
        );
        let eff = op
            .coalescing_efficiency()
            .map_or_else(|| "-".to_string(), |e| format!("{:.1}%", e * 100.0));
        let _ = writeln!(
            out,
            "{:>8}  {:>8}  {lanes:>20}  {lines:>26}  {stride:>14}  {eff:>10}  {name}{src}",
            op.id, op.executions
        );
    }
    out
}
