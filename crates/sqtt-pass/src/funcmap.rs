//! Marker IDs and the `.sqtt_funcmap` rows that name them.
//!
//! IDs start at 1 and come from one pool. Function, scope, point and data markers are
//! deduplicated by name within their kind; address-trace markers are unique per operation.
//! The registry travels from the early to the late pipeline phase as module metadata
//! ([`FunctionMap::to_state`]).

use std::collections::HashMap;

use crate::options::ClockPacking;

/// What a registered ID stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerKind {
    /// A device function with entry/exit markers (`F:` row).
    Function,
    /// A user scope marker, `sqtt_marker_enter/exit("name")` (`U:` row).
    Scope,
    /// A user point marker, `sqtt_marker_point("name")` (`P:` row).
    Point,
    /// A user data marker, `sqtt_marker_data("name", v)` (`P:` row plus `R:` row).
    Data,
    /// A marker planted by automatic instrumentation (barriers, memory groups; `P:` row).
    System,
    /// An address-trace header, one per traced operation (`P:` row plus `R:` row).
    AddressTrace,
}

impl MarkerKind {
    fn tag(self) -> &'static str {
        match self {
            MarkerKind::Function => "function",
            MarkerKind::Scope => "scope",
            MarkerKind::Point => "point",
            MarkerKind::Data => "data",
            MarkerKind::System => "system",
            MarkerKind::AddressTrace => "addr",
        }
    }

    fn from_tag(tag: &str) -> Option<MarkerKind> {
        Some(match tag {
            "function" => MarkerKind::Function,
            "scope" => MarkerKind::Scope,
            "point" => MarkerKind::Point,
            "data" => MarkerKind::Data,
            "system" => MarkerKind::System,
            "addr" => MarkerKind::AddressTrace,
            _ => return None,
        })
    }
}

/// One registered marker ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The marker ID (from 1).
    pub id: u32,
    /// What it stands for.
    pub kind: MarkerKind,
    /// Function (mangled) or marker name.
    pub name: String,
    /// Source chain `file:line -> file:line`, when known.
    pub src: Option<String>,
    /// Payload records following each header with this ID.
    pub payload: u32,
    /// Code sites emitting this ID, for compaction.
    pub emissions: u64,
}

/// The ID registry of one module and the rows of its `.sqtt_funcmap` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionMap {
    entries: Vec<Entry>,
    index: HashMap<(MarkerKind, String), usize>,
    next_id: u32,
    /// Kernels defined in the module (mangled names), for `K:` rows.
    pub kernels: Vec<String>,
    /// Wave size, recorded when address tracing emitted anything.
    pub wave_size: Option<u32>,
    /// Clock-packing layout, recorded when packing is active.
    pub clock: Option<ClockPacking>,
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Row text may not contain line breaks or NUL.
fn row_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' || c == '\r' || c == '\0' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

impl Default for FunctionMap {
    fn default() -> Self {
        FunctionMap::new()
    }
}

impl FunctionMap {
    /// An empty registry; the first ID handed out is 1.
    pub fn new() -> FunctionMap {
        FunctionMap {
            entries: Vec::new(),
            index: HashMap::new(),
            next_id: 1,
            kernels: Vec::new(),
            wave_size: None,
            clock: None,
        }
    }

    /// Whether no ID has been registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All registered IDs, in registration order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The ID for `name` within `kind`, registering it on first use.
    pub fn intern(&mut self, kind: MarkerKind, name: &str, src: Option<&str>, payload: u32) -> u32 {
        if kind != MarkerKind::AddressTrace
            && let Some(&i) = self.index.get(&(kind, name.to_string()))
        {
            return self.entries[i].id;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.entries.push(Entry {
            id,
            kind,
            name: name.to_string(),
            src: src.map(str::to_string),
            payload,
            emissions: 0,
        });
        if kind != MarkerKind::AddressTrace {
            self.index
                .insert((kind, name.to_string()), self.entries.len() - 1);
        }
        id
    }

    /// Counts `n` more emitting sites for `id`.
    pub fn note_emissions(&mut self, id: u32, n: u64) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.id == id) {
            e.emissions += n;
        }
    }

    /// Renumbers all IDs 1..=n by descending emission count (ties keep the lower original ID
    /// first) and returns the old-to-new mapping. Later IDs continue after n.
    pub fn compact(&mut self) -> HashMap<u32, u32> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| {
            let (ea, eb) = (&self.entries[a], &self.entries[b]);
            eb.emissions.cmp(&ea.emissions).then(ea.id.cmp(&eb.id))
        });
        let mut remap = HashMap::new();
        for (new_index, &i) in order.iter().enumerate() {
            let new_id = new_index as u32 + 1;
            remap.insert(self.entries[i].id, new_id);
        }
        for e in &mut self.entries {
            e.id = remap[&e.id];
        }
        self.entries.sort_by_key(|e| e.id);
        self.index = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| ((e.kind, e.name.clone()), i))
            .collect();
        self.index
            .retain(|(k, _), _| *k != MarkerKind::AddressTrace);
        self.next_id = self.entries.len() as u32 + 1;
        remap
    }

    /// The rows of the `.sqtt_funcmap` section, in order.
    pub fn rows(&self) -> Vec<String> {
        let mut rows = Vec::new();
        if let Some(c) = self.clock {
            rows.push(format!(
                "M:shader_clock_bits={};shader_clock_shift={}",
                c.bits, c.shift
            ));
        }
        if let Some(w) = self.wave_size {
            rows.push(format!("W:{w}"));
        }
        for k in &self.kernels {
            rows.push(format!("K:{}", row_text(k)));
        }
        let mut entries: Vec<&Entry> = self.entries.iter().collect();
        entries.sort_by_key(|e| e.id);
        for e in entries {
            let src = e
                .src
                .as_deref()
                .map(|s| format!("@{}", row_text(s)))
                .unwrap_or_default();
            let name = row_text(&e.name);
            rows.push(match e.kind {
                MarkerKind::Function => format!("F:{}:{name}{src}", e.id),
                MarkerKind::Scope => format!("U:{}:{name}", e.id),
                _ => format!("P:{}:{name}{src}", e.id),
            });
            if e.payload > 0 {
                rows.push(format!("R:{}:extra_payload_count={}", e.id, e.payload));
            }
        }
        rows
    }

    /// The section contents: one row per line, NUL-terminated.
    pub fn section_bytes(&self) -> Vec<u8> {
        let mut text = String::new();
        for r in self.rows() {
            text.push_str(&r);
            text.push('\n');
        }
        let mut bytes = text.into_bytes();
        bytes.push(0);
        bytes
    }

    /// Serialises the registry for the next pipeline phase.
    pub fn to_state(&self) -> String {
        let mut s = format!("next\t{}\n", self.next_id);
        for e in &self.entries {
            s.push_str(&format!(
                "entry\t{}\t{}\t{}\t{}\t{}\t{}\n",
                e.kind.tag(),
                e.id,
                e.payload,
                e.emissions,
                e.src.as_deref().map(escape).unwrap_or_else(|| "-".into()),
                escape(&e.name)
            ));
        }
        s
    }

    /// Restores a registry written by [`FunctionMap::to_state`]; `None` when the text is not one.
    pub fn from_state(text: &str) -> Option<FunctionMap> {
        let mut map = FunctionMap::new();
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["next", n] => map.next_id = n.parse().ok()?,
                ["entry", kind, id, payload, emissions, src, name] => {
                    let kind = MarkerKind::from_tag(kind)?;
                    let entry = Entry {
                        id: id.parse().ok()?,
                        kind,
                        name: unescape(name),
                        src: if *src == "-" {
                            None
                        } else {
                            Some(unescape(src))
                        },
                        payload: payload.parse().ok()?,
                        emissions: emissions.parse().ok()?,
                    };
                    if kind != MarkerKind::AddressTrace {
                        map.index
                            .insert((kind, entry.name.clone()), map.entries.len());
                    }
                    map.entries.push(entry);
                }
                [] | [""] => {}
                _ => return None,
            }
        }
        Some(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_start_at_one_and_deduplicate_per_kind() {
        let mut m = FunctionMap::new();
        assert_eq!(m.intern(MarkerKind::Scope, "work", None, 0), 1);
        assert_eq!(m.intern(MarkerKind::Scope, "work", None, 0), 1);
        assert_eq!(m.intern(MarkerKind::Point, "work", None, 0), 2);
        assert_eq!(m.intern(MarkerKind::Data, "work", None, 1), 3);
        assert_eq!(
            m.intern(MarkerKind::AddressTrace, "addr_trace_load", None, 130),
            4
        );
        assert_eq!(
            m.intern(MarkerKind::AddressTrace, "addr_trace_load", None, 130),
            5
        );
    }

    #[test]
    fn compaction_orders_by_emissions_then_id() {
        let mut m = FunctionMap::new();
        let a = m.intern(MarkerKind::Function, "_Z1av", None, 0);
        let b = m.intern(MarkerKind::Scope, "b", None, 0);
        let c = m.intern(MarkerKind::Point, "c", None, 0);
        m.note_emissions(a, 1);
        m.note_emissions(b, 3);
        m.note_emissions(c, 1);
        let remap = m.compact();
        assert_eq!((remap[&a], remap[&b], remap[&c]), (2, 1, 3));
        assert_eq!(m.intern(MarkerKind::Scope, "b", None, 0), 1);
        assert_eq!(m.intern(MarkerKind::System, "barrier", None, 0), 4);
    }

    #[test]
    fn rows_follow_the_section_format() {
        let mut m = FunctionMap::new();
        m.kernels.push("_Z1kPf".into());
        m.intern(MarkerKind::Function, "_Z4workf", Some("k.hip:3"), 0);
        m.intern(MarkerKind::Scope, "phase", None, 0);
        m.intern(MarkerKind::Data, "value", None, 1);
        m.intern(
            MarkerKind::AddressTrace,
            "addr_trace_load",
            Some("k.hip:10 -> k.hip:20"),
            130,
        );
        m.wave_size = Some(64);
        m.clock = Some(ClockPacking { bits: 12, shift: 4 });
        assert_eq!(
            m.rows(),
            [
                "M:shader_clock_bits=12;shader_clock_shift=4",
                "W:64",
                "K:_Z1kPf",
                "F:1:_Z4workf@k.hip:3",
                "U:2:phase",
                "P:3:value",
                "R:3:extra_payload_count=1",
                "P:4:addr_trace_load@k.hip:10 -> k.hip:20",
                "R:4:extra_payload_count=130",
            ]
        );
        assert_eq!(*m.section_bytes().last().unwrap(), 0);
    }

    #[test]
    fn state_round_trips() {
        let mut m = FunctionMap::new();
        m.intern(MarkerKind::Scope, "odd\tname\\x", Some("a.hip:1"), 0);
        m.intern(MarkerKind::Data, "d", None, 1);
        m.note_emissions(1, 2);
        let back = FunctionMap::from_state(&m.to_state()).unwrap();
        assert_eq!(back.entries(), m.entries());
        let mut back = back;
        assert_eq!(back.intern(MarkerKind::Scope, "odd\tname\\x", None, 0), 1);
        assert_eq!(back.intern(MarkerKind::Point, "new", None, 0), 3);
        assert!(FunctionMap::from_state("garbage line").is_none());
    }
}
