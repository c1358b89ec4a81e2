//! The `.sqtt_funcmap` section: the marker pass's table of marker ids.
//!
//! The section holds NUL-terminated ASCII text, one row per line (`F:`, `K:`, `U:`, `P:`,
//! `W:`, `R:`, `M:`). Several NUL-terminated chunks (one per translation unit after linking)
//! are read as one map. The parser accepts arbitrary bytes and never panics.

use std::collections::HashMap;

/// Largest marker id the 30-bit id field can carry.
pub const MAX_MARKER_ID: u32 = (1 << 30) - 1;

/// What a map row describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `K:` a kernel (no id: the hardware marks wave start and end).
    Kernel,
    /// `F:` a device function with entry/exit markers.
    Function,
    /// `U:` a user scope marker.
    User,
    /// `P:` a point marker (barriers, memory groups, address traces, user points).
    Point,
}

impl EntryKind {
    /// The word used in tables and JSON.
    pub fn label(self) -> &'static str {
        match self {
            EntryKind::Kernel => "kernel",
            EntryKind::Function => "func",
            EntryKind::User => "user",
            EntryKind::Point => "point",
        }
    }
}

/// One `K:`, `F:`, `U:` or `P:` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Row kind.
    pub kind: EntryKind,
    /// Marker id; `None` for kernels.
    pub id: Option<u32>,
    /// Name as written (mangled for functions and kernels).
    pub name: String,
    /// Source location chain after `@`, when present.
    pub source: Option<String>,
}

/// The `M:` row: clock bits packed into the top of marker headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockLayout {
    /// Number of high header bits holding the clock sample.
    pub bits: u32,
    /// Source bit offset of the sample in the shader clock.
    pub shift: u32,
}

/// A parsed function map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Funcmap {
    entries: Vec<Entry>,
    by_id: HashMap<u32, usize>,
    payloads: HashMap<u32, u32>,
    wave_size: Option<u32>,
    clock: Option<ClockLayout>,
}

/// Why a `.sqtt_funcmap` section could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FuncmapError {
    /// The section is empty.
    #[error("the section is empty")]
    Empty,
    /// The last byte is not NUL: the section was cut short.
    #[error("truncated: the section does not end with a NUL terminator ({len} bytes)")]
    NotTerminated {
        /// Section size.
        len: usize,
    },
    /// A byte outside printable ASCII.
    #[error("line {line}: byte 0x{byte:02x} at offset {offset} is not printable ASCII")]
    NotAscii {
        /// 1-based line number.
        line: usize,
        /// Offending byte.
        byte: u8,
        /// Offset in the section.
        offset: usize,
    },
    /// A row that does not follow the grammar.
    #[error("line {line}: {reason}: `{row}`")]
    BadRow {
        /// 1-based line number.
        line: usize,
        /// The row, shortened to 80 characters.
        row: String,
        /// What is wrong.
        reason: String,
    },
    /// Two rows claim the same id with different meanings.
    #[error("line {line}: id {id} is defined twice (first as {first})")]
    DuplicateId {
        /// 1-based line number of the second definition.
        line: usize,
        /// The id.
        id: u32,
        /// The first definition, `kind name`.
        first: String,
    },
    /// An `R:` row for an id no row defines.
    #[error("line {line}: R row for id {id}, which no F/U/P row defines")]
    PayloadForUnknownId {
        /// 1-based line number of the `R:` row.
        line: usize,
        /// The id.
        id: u32,
    },
    /// Conflicting `W:`, `M:` or `R:` rows.
    #[error("line {line}: {what} conflicts with an earlier row")]
    Conflict {
        /// 1-based line number.
        line: usize,
        /// Which setting.
        what: &'static str,
    },
}

impl Funcmap {
    /// Parses the raw bytes of a `.sqtt_funcmap` section.
    pub fn parse(bytes: &[u8]) -> Result<Self, FuncmapError> {
        if bytes.is_empty() {
            return Err(FuncmapError::Empty);
        }
        if bytes[bytes.len() - 1] != 0 {
            return Err(FuncmapError::NotTerminated { len: bytes.len() });
        }
        let mut map = Funcmap::default();
        let mut pending_payloads: Vec<(usize, u32, u32)> = Vec::new();
        let mut line_no = 0usize;
        let mut offset = 0usize;
        // Chunks are NUL-terminated; alignment padding yields empty chunks.
        for chunk in bytes[..bytes.len() - 1].split(|&b| b == 0) {
            for line in chunk.split(|&b| b == b'\n') {
                line_no += 1;
                if let Some(pos) = line
                    .iter()
                    .position(|&b| !(0x20..0x7f).contains(&b) && b != b'\t')
                {
                    return Err(FuncmapError::NotAscii {
                        line: line_no,
                        byte: line[pos],
                        offset: offset + pos,
                    });
                }
                offset += line.len() + 1;
                // Printable ASCII was checked above, so this cannot fail.
                let text = std::str::from_utf8(line).unwrap_or_default();
                if text.trim().is_empty() {
                    continue;
                }
                map.parse_row(text, line_no, &mut pending_payloads)?;
            }
        }
        for (line, id, count) in pending_payloads {
            if !map.by_id.contains_key(&id) {
                return Err(FuncmapError::PayloadForUnknownId { line, id });
            }
            match map.payloads.insert(id, count) {
                Some(prev) if prev != count => {
                    return Err(FuncmapError::Conflict {
                        line,
                        what: "extra_payload_count",
                    });
                }
                _ => {}
            }
        }
        // A count of 0 is what an id without an `R:` row has: kept out, as rendering does.
        map.payloads.retain(|_, count| *count != 0);
        Ok(map)
    }

    /// Reads one non-blank row into the map; `R:` rows wait in `pending_payloads` until every
    /// id is defined.
    fn parse_row(
        &mut self,
        row: &str,
        line: usize,
        pending_payloads: &mut Vec<(usize, u32, u32)>,
    ) -> Result<(), FuncmapError> {
        let bad = |reason: &str| FuncmapError::BadRow {
            line,
            row: row.chars().take(80).collect(),
            reason: reason.to_string(),
        };
        let Some((tag, rest)) = row.split_once(':') else {
            return Err(bad("expected `<tag>:` with tag F, K, U, P, W, R or M"));
        };
        match tag {
            "K" => self.add_kernel(rest, &bad)?,
            "F" | "U" | "P" => self.add_marker(tag, rest, line, &bad)?,
            "W" => self.set_wave_size(rest, line, &bad)?,
            "R" => pending_payloads.push(parse_payload_row(rest, line, &bad)?),
            "M" => self.set_clock_layout(rest, line, &bad)?,
            _ => return Err(bad("unknown row tag (known: F, K, U, P, W, R, M)")),
        }
        Ok(())
    }

    /// Adds the kernel of a `K:` row (`rest` is the row after the tag).
    fn add_kernel(
        &mut self,
        rest: &str,
        bad: &impl Fn(&str) -> FuncmapError,
    ) -> Result<(), FuncmapError> {
        let (name, source) = split_source(rest);
        if name.is_empty() {
            return Err(bad("empty kernel name"));
        }
        self.entries.push(Entry {
            kind: EntryKind::Kernel,
            id: None,
            name: name.to_string(),
            source,
        });
        Ok(())
    }

    /// Adds the marker id of an `F:`, `U:` or `P:` row; a repeat of the same row is ignored.
    fn add_marker(
        &mut self,
        tag: &str,
        rest: &str,
        line: usize,
        bad: &impl Fn(&str) -> FuncmapError,
    ) -> Result<(), FuncmapError> {
        let Some((id_text, body)) = rest.split_once(':') else {
            return Err(bad("expected `<tag>:<id>:<name>`"));
        };
        let id = parse_id(id_text).map_err(|r| bad(&r))?;
        let (kind, (name, source)) = match tag {
            "F" => (EntryKind::Function, split_source(body)),
            "P" => (EntryKind::Point, split_source(body)),
            _ => (EntryKind::User, (body, None)),
        };
        if name.is_empty() {
            return Err(bad("empty name"));
        }
        let entry = Entry {
            kind,
            id: Some(id),
            name: name.to_string(),
            source,
        };
        if let Some(&first) = self.by_id.get(&id) {
            let prev = &self.entries[first];
            if prev != &entry {
                return Err(FuncmapError::DuplicateId {
                    line,
                    id,
                    first: format!("{} {}", prev.kind.label(), prev.name),
                });
            }
            return Ok(());
        }
        self.by_id.insert(id, self.entries.len());
        self.entries.push(entry);
        Ok(())
    }

    /// Sets the wave size of a `W:` row, unless an earlier row set another.
    fn set_wave_size(
        &mut self,
        rest: &str,
        line: usize,
        bad: &impl Fn(&str) -> FuncmapError,
    ) -> Result<(), FuncmapError> {
        let size = match rest {
            "32" => 32,
            "64" => 64,
            _ => return Err(bad("wave size must be 32 or 64")),
        };
        set_once(&mut self.wave_size, size, line, "wave size")
    }

    /// Sets the clock layout of an `M:` row, unless an earlier row set another.
    fn set_clock_layout(
        &mut self,
        rest: &str,
        line: usize,
        bad: &impl Fn(&str) -> FuncmapError,
    ) -> Result<(), FuncmapError> {
        let layout = parse_clock_layout(rest, bad)?;
        set_once(&mut self.clock, layout, line, "shader clock layout")
    }

    /// Rows in section order (kernels, functions, user and point markers).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The `W:` wave size, when the map has one.
    pub fn wave_size(&self) -> Option<u32> {
        self.wave_size
    }

    /// The `M:` clock layout, when the map has one.
    pub fn clock(&self) -> Option<ClockLayout> {
        self.clock
    }

    /// The row defining `id`.
    pub fn entry(&self, id: u32) -> Option<&Entry> {
        self.by_id.get(&id).map(|&i| &self.entries[i])
    }

    /// Payload records following a header with `id` (`R:` row; 0 without one).
    pub fn extra_payload_count(&self, id: u32) -> u32 {
        self.payloads.get(&id).copied().unwrap_or(0)
    }

    /// The marker id carried by a header word, honouring the `M:` layout.
    pub fn marker_id(&self, value: u32) -> u32 {
        let id = value >> 2;
        match self.clock {
            Some(c) => id & ((1u32 << (30 - c.bits)) - 1),
            None => id,
        }
    }
}

/// The `(line, id, count)` of an `R:` row (`rest` is the row after the tag).
fn parse_payload_row(
    rest: &str,
    line: usize,
    bad: &impl Fn(&str) -> FuncmapError,
) -> Result<(usize, u32, u32), FuncmapError> {
    let Some((id_text, kv)) = rest.split_once(':') else {
        return Err(bad("expected `R:<id>:extra_payload_count=<n>`"));
    };
    let id = parse_id(id_text).map_err(|r| bad(&r))?;
    let Some(count) = kv.strip_prefix("extra_payload_count=") else {
        return Err(bad("expected `extra_payload_count=<n>`"));
    };
    let count = parse_decimal(count).map_err(|r| bad(&format!("payload count {r}")))?;
    Ok((line, id, count))
}

/// The clock layout of an `M:` row's `key=value` fields, both required and in range.
/// Sets `slot` to the value of a row on `line`, unless an earlier row set another (`what` names
/// the setting in the error).
fn set_once<T: PartialEq>(
    slot: &mut Option<T>,
    value: T,
    line: usize,
    what: &'static str,
) -> Result<(), FuncmapError> {
    if slot.as_ref().is_some_and(|v| *v != value) {
        return Err(FuncmapError::Conflict { line, what });
    }
    *slot = Some(value);
    Ok(())
}

fn parse_clock_layout(
    rest: &str,
    bad: &impl Fn(&str) -> FuncmapError,
) -> Result<ClockLayout, FuncmapError> {
    let mut bits = None;
    let mut shift = None;
    for field in rest.split(';') {
        let Some((key, value)) = field.split_once('=') else {
            return Err(bad("expected `key=value` fields"));
        };
        let value = parse_decimal(value).map_err(|r| bad(&format!("{key} {r}")))?;
        match key {
            "shader_clock_bits" => bits = Some(value),
            "shader_clock_shift" => shift = Some(value),
            _ => {
                return Err(bad(
                    "unknown M field (known: shader_clock_bits, shader_clock_shift)",
                ));
            }
        }
    }
    let (Some(bits), Some(shift)) = (bits, shift) else {
        return Err(bad("M row needs shader_clock_bits and shader_clock_shift"));
    };
    if bits == 0 || bits > 29 {
        return Err(bad(
            "shader_clock_bits must be 1..=29 (the id needs at least one bit)",
        ));
    }
    if shift > 31 {
        return Err(bad("shader_clock_shift must be 0..=31"));
    }
    Ok(ClockLayout { bits, shift })
}

fn split_source(body: &str) -> (&str, Option<String>) {
    match body.split_once('@') {
        Some((name, src)) if !src.is_empty() => (name, Some(src.to_string())),
        Some((name, _)) => (name, None),
        None => (body, None),
    }
}

fn parse_decimal(text: &str) -> Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{text}` is not a decimal number"));
    }
    text.parse::<u32>()
        .map_err(|_| format!("`{text}` is out of range"))
}

fn parse_id(text: &str) -> Result<u32, String> {
    let id = parse_decimal(text).map_err(|r| format!("id {r}"))?;
    if id == 0 || id > MAX_MARKER_ID {
        return Err(format!("id {id} is outside 1..={MAX_MARKER_ID}"));
    }
    Ok(id)
}

/// Writes a map back in section form (rows, then the NUL terminator). Parsing the result
/// gives back an equal map.
pub fn render_section(map: &Funcmap) -> Vec<u8> {
    let mut out = String::new();
    if let Some(w) = map.wave_size {
        out.push_str(&format!("W:{w}\n"));
    }
    if let Some(c) = map.clock {
        out.push_str(&format!(
            "M:shader_clock_bits={};shader_clock_shift={}\n",
            c.bits, c.shift
        ));
    }
    for e in &map.entries {
        let src = e
            .source
            .as_deref()
            .map(|s| format!("@{s}"))
            .unwrap_or_default();
        match (e.kind, e.id) {
            (EntryKind::Kernel, _) => out.push_str(&format!("K:{}{src}\n", e.name)),
            (EntryKind::User, Some(id)) => out.push_str(&format!("U:{id}:{}\n", e.name)),
            (EntryKind::Function, Some(id)) => out.push_str(&format!("F:{id}:{}{src}\n", e.name)),
            (EntryKind::Point, Some(id)) => out.push_str(&format!("P:{id}:{}{src}\n", e.name)),
            _ => {}
        }
        if let Some(id) = e.id {
            let n = map.extra_payload_count(id);
            if n > 0 {
                out.push_str(&format!("R:{id}:extra_payload_count={n}\n"));
            }
        }
    }
    let mut bytes = out.into_bytes();
    bytes.push(0);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_payload_count_is_no_count_and_renders_back_equal() {
        let map = Funcmap::parse(b"U:15:a\nR:15:extra_payload_count=0\n\0").unwrap();
        assert_eq!(map.extra_payload_count(15), 0);
        assert_eq!(Funcmap::parse(&render_section(&map)).unwrap(), map);
        let conflict = b"U:15:a\nR:15:extra_payload_count=0\nR:15:extra_payload_count=3\n\0";
        assert!(
            Funcmap::parse(conflict).is_err(),
            "two counts for one id still conflict"
        );
    }

    #[test]
    fn parses_every_row_kind() {
        let text = b"K:_Z6kernelPf@k.hip:3\nF:1:_Z7do_workf@k.hip:1 -> k.hip:5\nU:2:load: phase\n\
                     P:3:addr_trace_load@k.hip:9\nR:3:extra_payload_count=130\nW:64\n\0";
        let map = Funcmap::parse(text).unwrap();
        assert_eq!(map.entries().len(), 4);
        assert_eq!(map.entries()[0].kind, EntryKind::Kernel);
        assert_eq!(map.entries()[0].source.as_deref(), Some("k.hip:3"));
        assert_eq!(
            map.entry(1).unwrap().source.as_deref(),
            Some("k.hip:1 -> k.hip:5")
        );
        assert_eq!(map.entry(2).unwrap().name, "load: phase");
        assert_eq!(map.extra_payload_count(3), 130);
        assert_eq!(map.extra_payload_count(1), 0);
        assert_eq!(map.wave_size(), Some(64));
        assert_eq!(map.marker_id((3 << 2) | 2), 3);
    }

    #[test]
    fn clock_layout_masks_the_id() {
        let map =
            Funcmap::parse(b"M:shader_clock_bits=12;shader_clock_shift=4\nP:5:x\n\0").unwrap();
        assert_eq!(map.clock(), Some(ClockLayout { bits: 12, shift: 4 }));
        let value = (0xabcu32 << 20) | (5 << 2);
        assert_eq!(map.marker_id(value), 5);
    }

    #[test]
    fn rejects_truncation_garbage_and_conflicts() {
        assert_eq!(
            Funcmap::parse(b"K:k\nF:1:f"),
            Err(FuncmapError::NotTerminated { len: 9 })
        );
        assert!(matches!(
            Funcmap::parse(b"K:k\nZ:1\n\0"),
            Err(FuncmapError::BadRow { line: 2, .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"F:0:f\n\0"),
            Err(FuncmapError::BadRow { .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"F:1:f\xff\n\0"),
            Err(FuncmapError::NotAscii { byte: 0xff, .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"F:1:f\nP:1:g\n\0"),
            Err(FuncmapError::DuplicateId { id: 1, .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"R:4:extra_payload_count=1\n\0"),
            Err(FuncmapError::PayloadForUnknownId { id: 4, .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"W:48\n\0"),
            Err(FuncmapError::BadRow { .. })
        ));
        assert!(matches!(
            Funcmap::parse(b"W:32\nW:64\n\0"),
            Err(FuncmapError::Conflict { .. })
        ));
    }

    #[test]
    fn concatenated_chunks_and_padding_are_one_map() {
        let map = Funcmap::parse(b"K:a\nF:1:f\n\0K:b\nP:2:p\n\0\0\0").unwrap();
        assert_eq!(map.entries().len(), 4);
        assert!(map.entry(2).is_some());
    }

    #[test]
    fn render_round_trips() {
        let text = b"W:32\nK:k@a.hip:1\nF:1:f\nP:2:addr_trace_lds_load@a.hip:4\nR:2:extra_payload_count=34\n\0";
        let map = Funcmap::parse(text).unwrap();
        assert_eq!(Funcmap::parse(&render_section(&map)).unwrap(), map);
    }
}
