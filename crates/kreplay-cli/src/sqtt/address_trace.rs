//! Per-lane address traces: demultiplexing waves, decoding address blocks, and the
//! per-operation statistics (lanes, cache lines, stride, coalescing).

use super::funcmap::Funcmap;
use super::shaderdata::Record;
use std::collections::{BTreeMap, HashMap};

/// How an address-trace operation carries its lanes' addresses (see `docs/sqtt.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressLayout {
    /// Flat/global: two words (low, high) per lane.
    Address64,
    /// LDS and permute indices: one word per lane.
    Address32,
    /// Raw buffer: descriptor base (2 words), `soffset`, then one `voffset` per lane.
    Buffer,
    /// Struct buffer: as [`AddressLayout::Buffer`] plus one `vindex` per lane; not analysed.
    StructBuffer,
}

impl AddressLayout {
    /// The layout of an address-trace marker name (without `@source`), or `None` for other
    /// markers.
    pub fn of(name: &str) -> Option<Self> {
        let op = name.strip_prefix("addr_trace_")?;
        Some(if op.starts_with("struct_buffer_") {
            AddressLayout::StructBuffer
        } else if op.starts_with("buffer_") {
            AddressLayout::Buffer
        } else if op.starts_with("lds_") || op == "ds_permute" || op == "ds_bpermute" {
            AddressLayout::Address32
        } else {
            AddressLayout::Address64
        })
    }

    /// Payload records after the EXEC mask words, for `wave_size` lanes.
    pub fn lane_words(self, wave_size: u32) -> u32 {
        match self {
            AddressLayout::Address64 => 2 * wave_size,
            AddressLayout::Address32 => wave_size,
            AddressLayout::Buffer => 3 + wave_size,
            AddressLayout::StructBuffer => 3 + 2 * wave_size,
        }
    }

    /// EXEC mask words of a block with `payload` records: 2 on wave64; 1 (`exec_lo` only) or 2
    /// (`exec_lo`, zero `exec_hi`) on wave32. `None` when `payload` fits neither.
    pub fn exec_words(self, payload: u32, wave_size: u32) -> Option<usize> {
        let exec = payload.checked_sub(self.lane_words(wave_size))?;
        match (wave_size, exec) {
            (64, 2) | (32, 1) | (32, 2) => Some(exec as usize),
            _ => None,
        }
    }

    /// The word used in JSON.
    pub fn label(self) -> &'static str {
        match self {
            AddressLayout::Address64 => "address64",
            AddressLayout::Address32 => "address32",
            AddressLayout::Buffer => "buffer",
            AddressLayout::StructBuffer => "struct_buffer",
        }
    }
}

/// Analysis settings.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Lanes per wave (`W:` row).
    pub wave_size: u32,
    /// Cache line size in bytes (a power of two is not required).
    pub line_size: u64,
    /// Assumed bytes accessed per active lane.
    pub access_size: u64,
}

/// Statistics of one operation (one address-trace marker id).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperationStats {
    /// Marker id.
    pub id: u32,
    /// Address blocks decoded.
    pub executions: u64,
    /// Sum, min, max of active lanes per execution.
    pub lanes_sum: u64,
    /// Minimum active lanes.
    pub lanes_min: u64,
    /// Maximum active lanes.
    pub lanes_max: u64,
    /// Sum, min, max of distinct lines per execution.
    pub lines_sum: u64,
    /// Minimum distinct lines.
    pub lines_min: u64,
    /// Maximum distinct lines.
    pub lines_max: u64,
    /// Occurrences of each stride between consecutive active lanes.
    pub strides: HashMap<i64, u64>,
    /// Distinct bytes requested (union of lane accesses), summed over executions.
    pub bytes_requested: u64,
    /// Bytes of distinct lines, summed over executions.
    pub bytes_fetched: u64,
}

impl OperationStats {
    /// Mean active lanes per execution.
    pub fn lanes_mean(&self) -> f64 {
        ratio(self.lanes_sum, self.executions).unwrap_or(0.0)
    }
    /// Mean distinct lines per execution.
    pub fn lines_mean(&self) -> f64 {
        ratio(self.lines_sum, self.executions).unwrap_or(0.0)
    }
    /// Most frequent stride and its share of all strides; ties go to the smaller magnitude,
    /// then the negative one.
    pub fn dominant_stride(&self) -> Option<(i64, f64)> {
        let total: u64 = self.strides.values().sum();
        let (&stride, &count) = self.strides.iter().max_by(|(a, ca), (b, cb)| {
            ca.cmp(cb)
                .then(b.unsigned_abs().cmp(&a.unsigned_abs()))
                .then(b.cmp(a))
        })?;
        Some((stride, count as f64 / total as f64))
    }
    /// Distinct bytes requested / bytes of lines fetched.
    pub fn coalescing_efficiency(&self) -> Option<f64> {
        ratio(self.bytes_requested, self.bytes_fetched)
    }

    fn add_execution(&mut self, addresses: &[u64], geometry: Geometry) {
        let lanes = addresses.len() as u64;
        let mut lines: Vec<u64> = Vec::with_capacity(addresses.len());
        let mut spans: Vec<(u64, u64)> = Vec::with_capacity(addresses.len());
        for &a in addresses {
            let end = a.saturating_add(geometry.access_size);
            spans.push((a, end));
            let last = (end - 1) / geometry.line_size;
            lines.extend(a / geometry.line_size..=last);
        }
        lines.sort_unstable();
        lines.dedup();
        spans.sort_unstable();
        let mut requested = 0u64;
        let mut current: Option<(u64, u64)> = None;
        for (s, e) in spans {
            current = match current {
                Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    requested += ce - cs;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        if let Some((cs, ce)) = current {
            requested += ce - cs;
        }
        for pair in addresses.windows(2) {
            *self
                .strides
                .entry(pair[1].wrapping_sub(pair[0]) as i64)
                .or_default() += 1;
        }
        let n_lines = lines.len() as u64;
        if self.executions == 0 {
            self.lanes_min = lanes;
            self.lines_min = n_lines;
        }
        self.executions += 1;
        self.lanes_sum += lanes;
        self.lanes_min = self.lanes_min.min(lanes);
        self.lanes_max = self.lanes_max.max(lanes);
        self.lines_sum += n_lines;
        self.lines_min = self.lines_min.min(n_lines);
        self.lines_max = self.lines_max.max(n_lines);
        self.bytes_requested += requested;
        self.bytes_fetched += n_lines * geometry.line_size;
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| a as f64 / b as f64)
}

/// Everything `memtrace` found in a record stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceAnalysis {
    /// Records read (privileged ones included).
    pub records: u64,
    /// Distinct waves.
    pub waves: u64,
    /// Address blocks decoded (all operations).
    pub address_blocks: u64,
    /// Address blocks cut off at the end of their wave's stream.
    pub incomplete_blocks: u64,
    /// Address blocks whose `R:` count disagrees with their name's layout.
    pub layout_mismatches: u64,
    /// Headers whose id the map does not define.
    pub unknown_headers: u64,
    /// Privileged records skipped.
    pub privileged_skipped: u64,
    /// Per-operation statistics, by marker id.
    pub operations: BTreeMap<u32, OperationStats>,
}

/// Demultiplexes `records` by wave and analyses every address block.
pub fn analyse(records: &[Record], map: &Funcmap, geometry: Geometry) -> TraceAnalysis {
    let mut out = TraceAnalysis {
        records: records.len() as u64,
        ..Default::default()
    };
    let mut waves: BTreeMap<(u32, u32, u32, u32), Vec<u32>> = BTreeMap::new();
    for r in records {
        if r.is_privileged() {
            out.privileged_skipped += 1;
            continue;
        }
        waves
            .entry((r.se, r.cu, r.simd, r.wave_id))
            .or_default()
            .push(r.value as u32);
    }
    out.waves = waves.len() as u64;
    let lane_mask = if geometry.wave_size >= 64 {
        u64::MAX
    } else {
        (1u64 << geometry.wave_size) - 1
    };
    let mut addresses = Vec::with_capacity(geometry.wave_size as usize);
    for words in waves.values() {
        let mut i = 0usize;
        while i < words.len() {
            let id = map.marker_id(words[i]);
            let count = map.extra_payload_count(id) as usize;
            let Some(entry) = map.entry(id) else {
                if id != 0 {
                    out.unknown_headers += 1;
                }
                i += 1;
                continue;
            };
            let layout = AddressLayout::of(&entry.name);
            let payload = words.get(i + 1..i + 1 + count);
            i += 1 + count;
            let Some(layout) = layout else { continue };
            let Some(payload) = payload else {
                out.incomplete_blocks += 1;
                break;
            };
            let Some(exec_words) = layout.exec_words(count as u32, geometry.wave_size) else {
                out.layout_mismatches += 1;
                continue;
            };
            out.address_blocks += 1;
            let exec_hi = if exec_words == 2 {
                u64::from(payload[1])
            } else {
                0
            };
            let exec = (u64::from(payload[0]) | exec_hi << 32) & lane_mask;
            let lanes = &payload[exec_words..];
            addresses.clear();
            let active = (0..geometry.wave_size as usize).filter(|&l| exec >> l & 1 == 1);
            match layout {
                AddressLayout::Address64 => {
                    addresses.extend(
                        active.map(|l| u64::from(lanes[2 * l]) | u64::from(lanes[2 * l + 1]) << 32),
                    );
                }
                AddressLayout::Address32 => addresses.extend(active.map(|l| u64::from(lanes[l]))),
                AddressLayout::Buffer => {
                    let base = (u64::from(lanes[0]) | u64::from(lanes[1]) << 32) & 0xffff_ffff_ffff;
                    let base = base.wrapping_add(u64::from(lanes[2]));
                    addresses.extend(active.map(|l| base.wrapping_add(u64::from(lanes[3 + l]))));
                }
                AddressLayout::StructBuffer => continue,
            }
            let stats = out.operations.entry(id).or_insert_with(|| OperationStats {
                id,
                ..Default::default()
            });
            stats.add_execution(&addresses, geometry);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(value: u32, wave: u32) -> Record {
        Record {
            time: 0,
            value: u64::from(value),
            se: 0,
            cu: 0,
            simd: 0,
            wave_id: wave,
            flags: 0,
        }
    }

    #[test]
    fn layouts_follow_names() {
        assert_eq!(
            AddressLayout::of("addr_trace_load"),
            Some(AddressLayout::Address64)
        );
        assert_eq!(
            AddressLayout::of("addr_trace_lds_atomic"),
            Some(AddressLayout::Address32)
        );
        assert_eq!(
            AddressLayout::of("addr_trace_buffer_store"),
            Some(AddressLayout::Buffer)
        );
        assert_eq!(
            AddressLayout::of("addr_trace_struct_buffer_load"),
            Some(AddressLayout::StructBuffer)
        );
        assert_eq!(AddressLayout::of("vmem_load"), None);
        assert_eq!(AddressLayout::Address64.exec_words(130, 64), Some(2));
        assert_eq!(AddressLayout::Address64.exec_words(65, 32), Some(1));
        assert_eq!(AddressLayout::Address64.exec_words(66, 32), Some(2));
        assert_eq!(AddressLayout::Address32.exec_words(34, 32), Some(2));
        assert_eq!(AddressLayout::Address32.exec_words(65, 64), None);
        assert_eq!(AddressLayout::Buffer.exec_words(69, 64), Some(2));
    }

    #[test]
    fn wave32_lds_block_with_payload_marker_before_it() {
        let map = Funcmap::parse(
            b"W:32\nP:1:data\nR:1:extra_payload_count=1\nP:2:addr_trace_lds_load\nR:2:extra_payload_count=34\n\0",
        )
        .unwrap();
        // data marker whose payload looks like the address header: must be skipped.
        let mut words = vec![1 << 2, 2 << 2, 2 << 2, 0b1011, 0xdead];
        words.extend((0..32).map(|l| 256 * l));
        let records: Vec<Record> = words.iter().map(|&w| rec(w, 7)).collect();
        let geometry = Geometry {
            wave_size: 32,
            line_size: 128,
            access_size: 4,
        };
        let a = analyse(&records, &map, geometry);
        assert_eq!(a.address_blocks, 1);
        let op = &a.operations[&2];
        assert_eq!((op.lanes_min, op.lanes_max), (3, 3));
        // lanes 0, 1, 3 -> 0, 256, 768: three lines, strides 256 and 512.
        assert_eq!(op.lines_sum, 3);
        assert_eq!(op.dominant_stride(), Some((256, 0.5)));
        assert_eq!(op.bytes_requested, 12);
        assert_eq!(op.bytes_fetched, 384);
    }
}
