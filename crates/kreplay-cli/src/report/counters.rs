//! Counter outputs from the records (rocprofv3's `counter_collection.csv` is written by
//! `rocprofv3` from these values): kreplay's counters table, one row per dispatch, that never sums across passes: each value is the one of the
//! first pass that collected the counter, and a counter collected in several passes that
//! disagree shows its spread (largest minus smallest) beside it.

use super::kernel_name::display_name;
use crate::run_records::{Dispatch, Pass};
use serde_json::{Value, json};

/// The leading columns of the counters table; a column per counter follows.
pub const TABLE_COLUMNS: [&str; 10] = [
    "pid",
    "dispatch_id",
    "kernel",
    "agent",
    "agent_name",
    "passes",
    "groups",
    "groups_collected",
    "groups_missing",
    "counters_error",
];

/// One counter of one dispatch, over the passes that collected it.
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchCounter {
    /// Counter (or derived metric) name.
    pub name: String,
    /// The value of the first pass that collected it.
    pub value: f64,
    /// That pass.
    pub pass: u64,
    /// Every pass that collected it, with its value, in pass order.
    pub samples: Vec<(u64, f64)>,
    /// Largest minus smallest value over those passes (0 when they agree).
    pub spread: f64,
    /// `exact` or `model`.
    pub exactness: String,
    /// A derived metric.
    pub derived: bool,
    /// A derived metric from inputs of different passes.
    pub cross_pass: bool,
}

/// The counters of `d`, each once, in the order the passes first name them.
pub fn per_dispatch(d: &Dispatch) -> Vec<DispatchCounter> {
    let mut out: Vec<DispatchCounter> = Vec::new();
    for p in &d.passes {
        for c in &p.counters {
            match out.iter_mut().find(|o| o.name == c.name) {
                Some(o) => o.samples.push((p.pass, c.value)),
                None => out.push(DispatchCounter {
                    name: c.name.clone(),
                    value: c.value,
                    pass: p.pass,
                    samples: vec![(p.pass, c.value)],
                    spread: 0.0,
                    exactness: c.exactness.clone(),
                    derived: c.derived,
                    cross_pass: c.cross_pass,
                }),
            }
        }
    }
    for o in &mut out {
        let (lo, hi) = o
            .samples
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, v)| {
                (lo.min(*v), hi.max(*v))
            });
        o.spread = hi - lo;
    }
    out
}

/// Every counter name of `dispatches`, in order of first appearance.
pub fn counter_names(dispatches: &[Dispatch]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in dispatches
        .iter()
        .flat_map(|d| &d.passes)
        .flat_map(|p| &p.counters)
    {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    names
}

/// Whether any dispatch collected counters.
pub fn any(dispatches: &[Dispatch]) -> bool {
    dispatches
        .iter()
        .any(|d| d.pmc.is_some() || d.passes.iter().any(|p| !p.counters.is_empty()))
}

/// A counter value as a person reads it: whole numbers without a fraction.
pub fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A counter value as JSON: whole numbers as integers.
pub fn number_json(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// The counters table's columns: the leading ones, then per counter its value and, when
/// passes disagree on it for some dispatch, its spread.
pub fn table_columns(dispatches: &[Dispatch]) -> Vec<String> {
    let mut columns: Vec<String> = TABLE_COLUMNS.iter().map(|c| c.to_string()).collect();
    let resolved: Vec<Vec<DispatchCounter>> = dispatches.iter().map(per_dispatch).collect();
    for name in counter_names(dispatches) {
        let spread = resolved
            .iter()
            .flatten()
            .any(|c| c.name == name && c.spread != 0.0);
        columns.push(name.clone());
        if spread {
            columns.push(format!("{name}_spread"));
        }
    }
    columns
}

/// Counter group numbers as text: `0 1 2`.
pub fn group_list(groups: &[u64]) -> String {
    groups
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `<name>_counters.csv`: one row per dispatch that collected counters.
pub fn table(dispatches: &[Dispatch]) -> String {
    let columns = table_columns(dispatches);
    let mut out = columns.join(",");
    out.push('\n');
    for d in dispatches.iter().filter(|d| any(std::slice::from_ref(d))) {
        let counters = per_dispatch(d);
        let pmc = d.pmc.clone().unwrap_or_default();
        let mut fields = vec![
            d.pid.to_string(),
            d.dispatch_id.to_string(),
            super::csv_field(&json!(display_name(d.kernel_name()))),
            d.agent.to_string(),
            d.agent_name.clone(),
            d.passes.len().to_string(),
            pmc.groups.to_string(),
            group_list(&pmc.collected),
            group_list(&pmc.missing),
            super::csv_field(&json!(pmc.error)),
        ];
        for column in &columns[TABLE_COLUMNS.len()..] {
            let (name, spread) = match column.strip_suffix("_spread") {
                Some(base) if columns.iter().any(|c| c == base) => (base, true),
                _ => (column.as_str(), false),
            };
            let field = counters.iter().find(|c| c.name == name).map(|c| {
                if spread {
                    number_text(c.spread)
                } else {
                    number_text(c.value)
                }
            });
            fields.push(field.unwrap_or_default());
        }
        out += &fields.join(",");
        out.push('\n');
    }
    out
}

/// The counters of `d` as a JSON object: per counter its value, the pass it came from, every
/// pass's value, the spread, exactness and labels.
pub fn dispatch_json(d: &Dispatch) -> Value {
    let mut map = serde_json::Map::new();
    for c in per_dispatch(d) {
        map.insert(
            c.name.clone(),
            json!({
                "value": number_json(c.value),
                "pass": c.pass,
                "passes": c.samples.iter().map(|(p, v)| json!({"pass": p, "value": number_json(*v)})).collect::<Vec<_>>(),
                "spread": number_json(c.spread),
                "exactness": c.exactness,
                "derived": c.derived,
                "cross_pass": c.cross_pass,
            }),
        );
    }
    Value::Object(map)
}

/// What counter collection did for `d` as JSON (`null` without counters).
pub fn status_json(d: &Dispatch) -> Value {
    json!(d.pmc)
}

/// The counters of one pass as a JSON object `{name: value}`.
pub fn pass_json(p: &Pass) -> Value {
    Value::Object(
        p.counters
            .iter()
            .map(|c| (c.name.clone(), number_json(c.value)))
            .collect(),
    )
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// Per counter, the median over `dispatches` of each dispatch's value (the dispatch's
/// resolved value: never a sum over passes), in order of first appearance.
pub fn medians(dispatches: &[&Dispatch]) -> Vec<(String, f64)> {
    let resolved: Vec<Vec<DispatchCounter>> = dispatches.iter().map(|d| per_dispatch(d)).collect();
    let mut names: Vec<String> = Vec::new();
    for c in resolved.iter().flatten() {
        if !names.contains(&c.name) {
            names.push(c.name.clone());
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let mut values: Vec<f64> = resolved
                .iter()
                .flatten()
                .filter(|c| c.name == name)
                .map(|c| c.value)
                .collect();
            median(&mut values).map(|m| (name, m))
        })
        .collect()
}
