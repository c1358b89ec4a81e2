//! The per-kernel summary printed at the end of a run.

use crate::run_records::Dispatch;
use serde_json::{Value, json};

/// Statistics of one kernel over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSummary {
    /// Kernel name (`<unknown>` when unresolved).
    pub kernel: String,
    /// Dispatches seen.
    pub dispatches: u64,
    /// Dispatches that ran more than one pass.
    pub replayed: u64,
    /// Fewest and most passes of one dispatch.
    pub passes: (u64, u64),
    /// Pass duration minimum, median, maximum (ns), over every pass.
    pub duration_ns: Option<(u64, u64, u64)>,
    /// Mean over replayed dispatches of (slowest pass - fastest pass) / fastest pass, percent.
    pub spread_pct: Option<f64>,
    /// Snapshot and restore time as a share of the replay windows, percent.
    pub overhead_pct: Option<f64>,
    /// Bytes saved by snapshots.
    pub bytes_saved: u64,
    /// Bytes restored between passes.
    pub bytes_restored: u64,
    /// Dispatches whose replay was declined (each ran once, normally).
    pub declined: u64,
    /// Each decline reason with the number of dispatches it declined, most frequent first.
    pub declined_reasons: Vec<(String, u64)>,
    /// Host and fine-grained memory: bytes saved and restored, and the warnings.
    pub host: HostMemorySummary,
    /// Per counter, the median over dispatches of each dispatch's value (taken from the pass
    /// that collected it, never summed over passes), in order of first appearance.
    pub counters: Vec<(String, f64)>,
    /// Dispatches that lack some of their counter groups, and the first reason given.
    pub counters_missing: (u64, Option<String>),
}

/// Host and fine-grained memory of one kernel's replays (the records' `host_memory`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostMemorySummary {
    /// Bytes of host memory saved.
    pub bytes_saved: u64,
    /// Bytes of host memory restored between passes.
    pub bytes_restored: u64,
    /// Dispatches that wrote host memory kreplay did not restore.
    pub unrestored: u64,
    /// Dispatches whose host memory another writer changed during the window.
    pub other_writers: u64,
    /// Dispatches verify mode found different after the last pass.
    pub verify_mismatches: u64,
    /// One allocation named by those warnings (the first seen).
    pub example: Option<String>,
}

impl HostMemorySummary {
    fn of(dispatches: &[&Dispatch]) -> Self {
        let mut h = HostMemorySummary::default();
        for m in dispatches.iter().filter_map(|d| d.host_memory.as_ref()) {
            h.bytes_saved += m.saved_bytes;
            h.bytes_restored += m.restored_bytes;
            h.unrestored += u64::from(!m.unrestored.is_empty());
            h.other_writers += u64::from(!m.other_writers.is_empty());
            h.verify_mismatches += u64::from(!m.verify_mismatches.is_empty());
            if h.example.is_none() {
                h.example = m
                    .unrestored
                    .iter()
                    .chain(&m.verify_mismatches)
                    .chain(&m.other_writers)
                    .next()
                    .cloned();
            }
        }
        h
    }

    /// The warning lines for `kernel` (none when nothing escaped).
    fn warnings(&self, kernel: &str) -> String {
        let mut out = String::new();
        let example = self.example.as_deref().unwrap_or("host memory");
        if self.unrestored > 0 {
            out += &format!(
                "warning: {} dispatch(es) of {kernel} wrote memory kreplay could not restore (e.g. {example}): every pass wrote it again\n",
                self.unrestored
            );
        }
        if self.verify_mismatches > 0 {
            out += &format!(
                "warning: verify mode: {} dispatch(es) of {kernel} left memory different after the last pass from after the first (e.g. {example})\n",
                self.verify_mismatches
            );
        }
        if self.other_writers > 0 {
            out += &format!(
                "warning: {} dispatch(es) of {kernel} stopped replaying: another writer changed reached host memory during the window (e.g. {example}); its writes were kept\n",
                self.other_writers
            );
        }
        out
    }
}

impl KernelSummary {
    /// The summary as a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "kernel": self.kernel,
            "dispatches": self.dispatches,
            "replayed": self.replayed,
            "passes_min": self.passes.0,
            "passes_max": self.passes.1,
            "duration_min_ns": self.duration_ns.map(|d| d.0),
            "duration_median_ns": self.duration_ns.map(|d| d.1),
            "duration_max_ns": self.duration_ns.map(|d| d.2),
            "spread_pct": self.spread_pct,
            "overhead_pct": self.overhead_pct,
            "bytes_saved": self.bytes_saved,
            "bytes_restored": self.bytes_restored,
            "declined": self.declined,
            "declined_reasons": self.declined_reasons.iter().map(|(r, n)| json!({"reason": r, "dispatches": n})).collect::<Vec<_>>(),
            "host_bytes_saved": self.host.bytes_saved,
            "host_bytes_restored": self.host.bytes_restored,
            "host_unrestored_dispatches": self.host.unrestored,
            "host_verify_mismatches": self.host.verify_mismatches,
            "host_other_writers": self.host.other_writers,
            "counter_medians": self.counters.iter().map(|(n, v)| (n.clone(), super::counters::number_json(*v))).collect::<serde_json::Map<_, _>>(),
            "counters_missing_dispatches": self.counters_missing.0,
        })
    }
}

/// The median of sorted values (lower middle for an even count).
fn median(sorted: &[u64]) -> u64 {
    sorted[(sorted.len() - 1) / 2]
}

/// One summary per kernel, in order of first dispatch.
pub fn per_kernel(dispatches: &[Dispatch]) -> Vec<KernelSummary> {
    let mut order: Vec<&str> = Vec::new();
    for d in dispatches {
        if !order.contains(&d.kernel_name()) {
            order.push(d.kernel_name());
        }
    }
    order
        .into_iter()
        .map(|name| {
            let mine: Vec<&Dispatch> = dispatches
                .iter()
                .filter(|d| d.kernel_name() == name)
                .collect();
            let mut durations: Vec<u64> = mine
                .iter()
                .flat_map(|d| d.passes.iter().map(|p| p.duration_ns()))
                .collect();
            durations.sort_unstable();
            let spreads: Vec<f64> = mine
                .iter()
                .filter(|d| d.replayed && d.passes.len() > 1)
                .filter_map(|d| {
                    let lo = d.passes.iter().map(|p| p.duration_ns()).min()?;
                    let hi = d.passes.iter().map(|p| p.duration_ns()).max()?;
                    (lo > 0).then(|| (hi - lo) as f64 / lo as f64 * 100.0)
                })
                .collect();
            let window: u64 = mine
                .iter()
                .map(|d| d.window_end_ns.saturating_sub(d.window_start_ns))
                .sum();
            let overhead: u64 = mine
                .iter()
                .map(|d| {
                    d.snapshot
                        .as_ref()
                        .map_or(0, |s| s.end_ns.saturating_sub(s.start_ns))
                        + d.restore.as_ref().map_or(0, |r| r.ns)
                })
                .sum();
            let pass_counts = mine.iter().map(|d| d.passes.len() as u64);
            let mut reasons: Vec<(String, u64)> = Vec::new();
            for reason in mine.iter().filter_map(|d| d.declined_reason()) {
                match reasons.iter_mut().find(|(r, _)| r == reason) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((reason.to_owned(), 1)),
                }
            }
            // Most frequent first; equal counts in order of first appearance.
            reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
            KernelSummary {
                kernel: name.to_owned(),
                dispatches: mine.len() as u64,
                replayed: mine.iter().filter(|d| d.replayed).count() as u64,
                passes: (
                    pass_counts.clone().min().unwrap_or(0),
                    pass_counts.max().unwrap_or(0),
                ),
                duration_ns: (!durations.is_empty()).then(|| {
                    (
                        durations[0],
                        median(&durations),
                        durations[durations.len() - 1],
                    )
                }),
                spread_pct: (!spreads.is_empty())
                    .then(|| spreads.iter().sum::<f64>() / spreads.len() as f64),
                overhead_pct: (window > 0)
                    .then(|| overhead.min(window) as f64 / window as f64 * 100.0),
                bytes_saved: mine
                    .iter()
                    .filter_map(|d| d.snapshot.as_ref())
                    .map(|s| s.bytes)
                    .sum(),
                bytes_restored: mine
                    .iter()
                    .filter_map(|d| d.restore.as_ref())
                    .map(|r| r.bytes)
                    .sum(),
                declined: reasons.iter().map(|(_, n)| n).sum(),
                declined_reasons: reasons,
                host: HostMemorySummary::of(&mine),
                counters: super::counters::medians(&mine),
                counters_missing: missing_groups(&mine),
            }
        })
        .collect()
}

/// Dispatches that did not collect every counter group, and the first reason recorded.
fn missing_groups(dispatches: &[&Dispatch]) -> (u64, Option<String>) {
    let lacking: Vec<&kreplay_records::PmcStatus> = dispatches
        .iter()
        .filter_map(|d| d.pmc.as_ref())
        .filter(|p| !p.missing.is_empty() || p.error.is_some())
        .collect();
    let reason = lacking.iter().find_map(|p| {
        p.error.clone().or_else(|| {
            Some(format!(
                "groups {} not collected",
                super::counters::group_list(&p.missing)
            ))
        })
    });
    (lacking.len() as u64, reason)
}

/// The counter lines under the table: per kernel, the median of each counter.
fn counter_lines(summaries: &[KernelSummary]) -> String {
    let mut out = String::new();
    if summaries
        .iter()
        .all(|s| s.counters.is_empty() && s.counters_missing.0 == 0)
    {
        return out;
    }
    out += "counters (median over dispatches; each value from the pass that collected it):\n";
    for s in summaries.iter().filter(|s| !s.counters.is_empty()) {
        let values: Vec<String> = s
            .counters
            .iter()
            .map(|(n, v)| format!("{n} {}", super::counters::number_text(*v)))
            .collect();
        out += &format!("  {}: {}\n", s.kernel, values.join(", "));
    }
    for s in summaries.iter().filter(|s| s.counters_missing.0 > 0) {
        out += &format!(
            "warning: {} dispatch(es) of {} lack counter groups ({})\n",
            s.counters_missing.0,
            s.kernel,
            s.counters_missing.1.as_deref().unwrap_or("not collected")
        );
    }
    out
}

/// `1.50 KiB` style byte counts.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

fn micros(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}%"))
}

/// The terminal table: one line per kernel and a total line.
pub fn table(summaries: &[KernelSummary]) -> String {
    let host = summaries.iter().any(|s| s.host.bytes_saved > 0);
    let mut lines: Vec<Vec<String>> = vec![header_row(host)];
    lines.extend(summaries.iter().map(|s| kernel_row(s, host)));
    let mut out = aligned_rows(&lines);
    out += &totals(summaries, host);
    out += &counter_lines(summaries);
    for s in summaries {
        out += &s.host.warnings(&s.kernel);
    }
    out += &declined_section(summaries);
    out
}

/// The column titles, with the host-memory columns when any kernel saved host memory.
fn header_row(host: bool) -> Vec<String> {
    let mut header = vec![
        "kernel",
        "dispatches",
        "replayed",
        "passes",
        "min(us)",
        "median(us)",
        "max(us)",
        "spread",
        "overhead",
        "saved",
        "restored",
        "declined",
    ];
    if host {
        header.extend(["host saved", "host restored"]);
    }
    header.iter().map(|s| s.to_string()).collect()
}

/// One kernel's cells, in the order of [`header_row`].
fn kernel_row(s: &KernelSummary, host: bool) -> Vec<String> {
    let (lo, hi) = s.passes;
    let (dmin, dmed, dmax) = s
        .duration_ns
        .map_or(("-".into(), "-".into(), "-".into()), |(a, b, c)| {
            (micros(a), micros(b), micros(c))
        });
    let mut row = vec![
        s.kernel.clone(),
        s.dispatches.to_string(),
        s.replayed.to_string(),
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        },
        dmin,
        dmed,
        dmax,
        percent(s.spread_pct),
        percent(s.overhead_pct),
        human_bytes(s.bytes_saved),
        human_bytes(s.bytes_restored),
        s.declined.to_string(),
    ];
    if host {
        row.extend([
            human_bytes(s.host.bytes_saved),
            human_bytes(s.host.bytes_restored),
        ]);
    }
    row
}

/// The rows as text: kernel names left-aligned, other columns right-aligned, two spaces apart.
fn aligned_rows(lines: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c == 0 {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}

/// The total line over all kernels, plus the host-memory total when host memory was saved.
fn totals(summaries: &[KernelSummary], host: bool) -> String {
    let total_dispatches: u64 = summaries.iter().map(|s| s.dispatches).sum();
    let total_replayed: u64 = summaries.iter().map(|s| s.replayed).sum();
    let mut out = format!(
        "{} {}, {total_dispatches} dispatches, {total_replayed} replayed; saved {}, restored {}\n",
        summaries.len(),
        if summaries.len() == 1 {
            "kernel"
        } else {
            "kernels"
        },
        human_bytes(summaries.iter().map(|s| s.bytes_saved).sum()),
        human_bytes(summaries.iter().map(|s| s.bytes_restored).sum()),
    );
    if host {
        out += &format!(
            "host memory: saved {}, restored {}\n",
            human_bytes(summaries.iter().map(|s| s.host.bytes_saved).sum()),
            human_bytes(summaries.iter().map(|s| s.host.bytes_restored).sum()),
        );
    }
    out
}

/// The kernels with declined dispatches and their most frequent decline reasons.
fn declined_section(summaries: &[KernelSummary]) -> String {
    let mut out = String::new();
    let declined: Vec<&KernelSummary> = summaries.iter().filter(|s| s.declined > 0).collect();
    if !declined.is_empty() {
        out += "declined (each ran once, normally):\n";
    }
    for s in declined {
        out += &format!(
            "  {}: {} of {} dispatches\n",
            s.kernel, s.declined, s.dispatches
        );
        for (reason, n) in s.declined_reasons.iter().take(MAX_REASONS) {
            out += &format!("    {n} x {reason}\n");
        }
        if s.declined_reasons.len() > MAX_REASONS {
            let rest = &s.declined_reasons[MAX_REASONS..];
            out += &format!(
                "    ... {} more reasons for {} dispatches (see kreplay_snapshot.declined_reason in the rocpd database or the records)\n",
                rest.len(),
                rest.iter().map(|(_, n)| n).sum::<u64>()
            );
        }
    }
    out
}

/// Distinct decline reasons listed per kernel in the table.
const MAX_REASONS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_records::{parse, tests::replayed_lines};

    /// A dispatch line of `kernel` run once, declined for `reason`.
    fn declined_line(id: u64, kernel: &str, reason: &str) -> String {
        format!(
            "{{\"record\":\"pass\",\"pid\":1,\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"pass\":0,\"start_ns\":{id}000,\"end_ns\":{id}100,\"restore_start_ns\":null,\"restore_end_ns\":null}}\n\
             {{\"record\":\"dispatch\",\"pid\":1,\"dispatch_id\":{id},\"kernel\":\"{kernel}\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"replayed\":false,\"passes\":1,\"skipped\":\"declined: {reason}\",\"window_start_ns\":{id}000,\"window_end_ns\":{id}100,\"snapshot\":null,\"restore\":null}}\n"
        )
    }

    #[test]
    fn host_memory_columns_totals_and_warnings() {
        let host = |saved: u64, unrestored: &str| {
            replayed_lines(1, saved, "walsh", 3, saved * 1000).replace(
                "\"future_field\":1",
                &format!(
                    "\"host_memory\":{{\"policy\":\"snapshot\",\"reachable\":1,\"saved_bytes\":{saved},\"restored_bytes\":{},\"unrestored\":[{unrestored}],\"other_writers\":[],\"verify_mismatches\":[]}}",
                    2 * saved
                ),
            )
        };
        let plain = table(&per_kernel(
            &parse([replayed_lines(1, 1, "add", 3, 0).as_str()]).dispatches,
        ));
        assert!(!plain.contains("host saved"), "{plain}");
        let text = host(4096, "") + &host(1024, "\"locked host memory at 0x10 (64 bytes)\"");
        let s = per_kernel(&parse([text.as_str()]).dispatches);
        assert_eq!(s[0].host.bytes_saved, 5120);
        assert_eq!(s[0].host.bytes_restored, 10240);
        assert_eq!(s[0].host.unrestored, 1);
        let t = table(&s);
        assert!(
            t.lines()
                .next()
                .unwrap()
                .ends_with("host saved  host restored"),
            "{t}"
        );
        assert!(
            t.contains("host memory: saved 5.00 KiB, restored 10.00 KiB"),
            "{t}"
        );
        assert!(
            t.contains("warning: 1 dispatch(es) of walsh wrote memory kreplay could not restore (e.g. locked host memory at 0x10 (64 bytes))"),
            "{t}"
        );
        assert_eq!(s[0].to_json()["host_bytes_saved"], 5120);
    }

    #[test]
    fn declined_dispatches_are_counted_and_explained_per_kernel() {
        let text = replayed_lines(1, 1, "add", 3, 0)
            + &declined_line(2, "add", "device-to-host copy of the region at 0x10 failed")
            + &declined_line(3, "add", "device-to-host copy of the region at 0x10 failed")
            + &declined_line(4, "add", "coverage gap")
            + &declined_line(
                5,
                "scale",
                "an unbounded pass count needs a continue callback",
            )
            + &replayed_lines(1, 6, "mul", 2, 90_000)
            + "{\"record\":\"pass\",\"pid\":1,\"dispatch_id\":7,\"kernel\":\"mul\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"pass\":0,\"start_ns\":1,\"end_ns\":2,\"restore_start_ns\":null,\"restore_end_ns\":null}\n"
            + "{\"record\":\"dispatch\",\"pid\":1,\"dispatch_id\":7,\"kernel\":\"mul\",\"agent\":7,\"agent_name\":\"gfx942\",\"queue_id\":1,\"replayed\":false,\"passes\":1,\"skipped\":\"filtered\",\"window_start_ns\":1,\"window_end_ns\":2,\"snapshot\":null,\"restore\":null}\n";
        let s = per_kernel(&parse([text.as_str()]).dispatches);
        let add = &s[0];
        assert_eq!((add.dispatches, add.replayed, add.declined), (4, 1, 3));
        assert_eq!(
            add.declined_reasons,
            vec![
                (
                    "device-to-host copy of the region at 0x10 failed".to_owned(),
                    2
                ),
                ("coverage gap".to_owned(), 1)
            ]
        );
        assert_eq!((s[1].kernel.as_str(), s[1].declined), ("scale", 1));
        assert_eq!(
            (s[2].kernel.as_str(), s[2].declined),
            ("mul", 0),
            "filtered is not declined"
        );
        let t = table(&s);
        assert!(t.contains("  add: 3 of 4 dispatches\n    2 x device-to-host copy of the region at 0x10 failed\n    1 x coverage gap\n"), "{t}");
        assert!(
            t.contains("  scale: 1 of 1 dispatches\n    1 x an unbounded pass count"),
            "{t}"
        );
        assert!(!t.contains("  mul:"), "{t}");
        assert_eq!(add.to_json()["declined_reasons"][0]["dispatches"], 2);
    }

    #[test]
    fn statistics_per_kernel() {
        // Pass p of replayed_lines lasts 100 + p ns; snapshot 50 ns; restores 30 ns each.
        let text = replayed_lines(1, 1, "add", 3, 0)
            + &replayed_lines(1, 2, "scale", 1, 10_000)
            + &replayed_lines(1, 3, "add", 5, 20_000);
        let s = per_kernel(&parse([text.as_str()]).dispatches);
        assert_eq!(s.len(), 2);
        let add = &s[0];
        assert_eq!(add.kernel, "add");
        assert_eq!((add.dispatches, add.replayed, add.passes), (2, 2, (3, 5)));
        // Durations 100,101,102 and 100..104: sorted 100,100,101,101,102,102,103,104.
        assert_eq!(add.duration_ns, Some((100, 101, 104)));
        // Spreads 2% and 4%: mean 3%.
        assert!((add.spread_pct.unwrap() - 3.0).abs() < 1e-9);
        // Overhead: (50 + 60) + (50 + 120) over windows (50 + 390) + (50 + 650).
        let expected = 280.0 / 1140.0 * 100.0;
        assert!((add.overhead_pct.unwrap() - expected).abs() < 1e-9);
        assert_eq!(add.bytes_saved, 8192);
        assert_eq!(add.bytes_restored, 1024 * 2 + 1024 * 4);
        let scale = &s[1];
        assert_eq!((scale.replayed, scale.passes), (0, (1, 1)));
        assert_eq!(scale.spread_pct, None);
    }

    #[test]
    fn table_lists_kernels_and_totals() {
        let text = replayed_lines(1, 1, "add", 5, 0) + &replayed_lines(1, 2, "scale", 5, 10_000);
        let t = table(&per_kernel(&parse([text.as_str()]).dispatches));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("kernel"));
        let add: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(&add[..4], &["add", "1", "1", "5"]);
        assert!(lines[3].starts_with("2 kernels, 2 dispatches, 2 replayed"));
        assert!(lines[0].ends_with("declined"));
        assert!(add.last() == Some(&"0"));
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.50 KiB");
    }
}
