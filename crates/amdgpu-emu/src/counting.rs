//! Hardware-counter quantities: which instruction counts in which category, and the per-CU
//! totals a dispatch reports.
//!
//! Each decoded instruction gets a [`Class`] once, when its code is decoded: the quantities one
//! issue of it adds (`SQ_INSTS`, the VALU or SALU or memory category, a VALU subclass, the MFMA
//! type and its math operations), and whether it is a vector instruction whose active lanes
//! matter. A wave counts issues per class (one add per instruction); a finished wave's counts
//! are folded into its compute unit's totals, so the hot path never touches the quantity array.
//! The rules are listed in `docs/emulator.md` ("Counters").

use crate::decode::{Enc, Op};

/// Placeholder until the shared catalog lands.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    Waves,
    WavesEq64,
    Workgroups,
    Insts,
    InstsValu,
    InstsValuAddF16,
    InstsValuAddF32,
    InstsValuAddF64,
    InstsValuMulF16,
    InstsValuMulF32,
    InstsValuMulF64,
    InstsValuFmaF16,
    InstsValuFmaF32,
    InstsValuFmaF64,
    InstsValuTransF16,
    InstsValuTransF32,
    InstsValuTransF64,
    InstsValuInt32,
    InstsValuInt64,
    InstsValuCvt,
    InstsMfma,
    InstsValuMfmaF16,
    InstsValuMfmaBf16,
    InstsValuMfmaF32,
    InstsValuMfmaF64,
    InstsValuMfmaI8,
    InstsValuMfmaMopsF16,
    InstsValuMfmaMopsBf16,
    InstsValuMfmaMopsF32,
    InstsValuMfmaMopsF64,
    InstsValuMfmaMopsI8,
    InstsSalu,
    InstsSmem,
    InstsBranch,
    InstsSendmsg,
    InstsVmem,
    InstsVmemRd,
    InstsVmemWr,
    InstsVmemAtomic,
    InstsFlat,
    InstsLds,
    InstsGds,
    InstsVskipped,
    ThreadCyclesValu,
    WaveCycles,
    BytesRead,
    BytesWritten,
    BytesAtomic,
}
impl Quantity {
    /// Number of quantities.
    pub const COUNT: usize = 48;
}

/// Counts of one compute unit, indexed by `Quantity as usize`.
pub type QuantityCounts = [u64; Quantity::COUNT];

/// Per-compute-unit totals of a dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterTotals {
    /// Entry `cu` holds compute unit `cu`'s counts; the vector ends at the highest compute
    /// unit that ran a work-group.
    pub per_cu: Vec<QuantityCounts>,
}

impl CounterTotals {
    /// The counts of compute unit `cu`, created zero.
    pub fn cu_mut(&mut self, cu: usize) -> &mut QuantityCounts {
        if self.per_cu.len() <= cu {
            self.per_cu.resize(cu + 1, [0; Quantity::COUNT]);
        }
        &mut self.per_cu[cu]
    }

    /// One quantity summed over the compute units.
    pub fn total(&self, q: Quantity) -> u64 {
        self.per_cu.iter().map(|c| c[q as usize]).sum()
    }

    /// Adds another dispatch's (or worker's) totals.
    pub fn add(&mut self, other: &CounterTotals) {
        for (cu, c) in other.per_cu.iter().enumerate() {
            let mine = self.cu_mut(cu);
            for (m, v) in mine.iter_mut().zip(c) {
                *m += v;
            }
        }
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.per_cu.iter().all(|c| c.iter().all(|&v| v == 0))
    }
}

/// How a global, scratch or FLAT instruction's lanes add to the bytes-requested quantities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bytes {
    None,
    Read(u32),
    Write(u32),
    Atomic(u32),
}

/// What one issue of an instruction adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Class {
    /// Quantities added per issue, with their weight (1, or the MFMA's math operations / 512).
    pub adds: Vec<(Quantity, u64)>,
    /// A vector instruction: an issue with EXEC = 0 counts as skipped.
    pub vector: bool,
    /// A VALU instruction: its active lanes add thread-cycles.
    pub valu: bool,
    /// Bytes per active lane.
    pub bytes: Bytes,
}

/// The classes of a program: one per distinct [`Class`], and each instruction's class index.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClassTable {
    pub classes: Vec<Class>,
    pub of: Vec<u8>,
}

impl ClassTable {
    /// Classifies every instruction of a program.
    pub fn build(insts: &[crate::decode::Inst]) -> ClassTable {
        let mut t = ClassTable::default();
        for inst in insts {
            let c = classify(inst.op, inst.enc, inst.ctrl);
            let k = match t.classes.iter().position(|k| *k == c) {
                Some(k) => k,
                None => {
                    t.classes.push(c);
                    t.classes.len() - 1
                }
            };
            // Distinct classes are few (tens); more than 255 would need a wider index.
            t.of.push(u8::try_from(k).unwrap_or(u8::MAX));
        }
        if t.classes.len() > usize::from(u8::MAX) {
            t.classes.truncate(usize::from(u8::MAX));
            t.classes.push(Class {
                adds: vec![(Quantity::Insts, 1)],
                vector: false,
                valu: false,
                bytes: Bytes::None,
            });
        }
        t
    }
}

/// What a wave counted: issues per class and the lane-dependent sums.
#[derive(Clone, Debug, Default)]
pub(crate) struct WaveCounts {
    pub by_class: Vec<u64>,
    pub skipped: u64,
    pub valu_lanes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_atomic: u64,
    /// All 64 lanes were active when the wave was launched.
    pub full_at_launch: bool,
}

impl WaveCounts {
    /// Zero counts for a program of `classes` classes.
    pub fn reset(&mut self, classes: usize) {
        self.by_class.clear();
        self.by_class.resize(classes, 0);
        self.skipped = 0;
        self.valu_lanes = 0;
        self.bytes_read = 0;
        self.bytes_written = 0;
        self.bytes_atomic = 0;
    }

    /// Counts one issue of class `k` with EXEC `exec`.
    #[inline]
    pub fn issue(&mut self, table: &ClassTable, k: usize, exec: u64) {
        self.by_class[k] += 1;
        let c = &table.classes[k];
        if !c.vector {
            return;
        }
        let lanes = u64::from(exec.count_ones());
        if lanes == 0 {
            self.skipped += 1;
        }
        if c.valu {
            self.valu_lanes += lanes;
        }
        match c.bytes {
            Bytes::None => {}
            Bytes::Read(b) => self.bytes_read += lanes * u64::from(b),
            Bytes::Write(b) => self.bytes_written += lanes * u64::from(b),
            Bytes::Atomic(b) => self.bytes_atomic += lanes * u64::from(b),
        }
    }

    /// Adds this wave's counts into a compute unit's totals.
    pub fn fold_into(&self, table: &ClassTable, cu: &mut QuantityCounts, cycles: u64) {
        for (k, &n) in self.by_class.iter().enumerate() {
            if n == 0 {
                continue;
            }
            for &(q, weight) in &table.classes[k].adds {
                cu[q as usize] += n * weight;
            }
        }
        cu[Quantity::InstsVskipped as usize] += self.skipped;
        cu[Quantity::ThreadCyclesValu as usize] += self.valu_lanes;
        cu[Quantity::BytesRead as usize] += self.bytes_read;
        cu[Quantity::BytesWritten as usize] += self.bytes_written;
        cu[Quantity::BytesAtomic as usize] += self.bytes_atomic;
        cu[Quantity::WaveCycles as usize] += cycles;
        cu[Quantity::Waves as usize] += 1;
        cu[Quantity::WavesEq64 as usize] += u64::from(self.full_at_launch);
    }
}

/// The class of an operation in its encoding.
pub(crate) fn classify(op: Op, enc: Enc, ctrl: u32) -> Class {
    let name = op.name();
    let mut adds = vec![(Quantity::Insts, 1)];
    let (mut vector, mut valu, mut bytes) = (false, false, Bytes::None);
    match enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc => {
            if matches!(op, Op::s_setpc_b64 | Op::s_swappc_b64 | Op::s_call_b64) {
                adds.push((Quantity::InstsBranch, 1));
            } else {
                adds.push((Quantity::InstsSalu, 1));
            }
        }
        Enc::Sopp => {
            if name.starts_with("s_cbranch") || op == Op::s_branch {
                adds.push((Quantity::InstsBranch, 1));
            } else if name.starts_with("s_sendmsg") {
                adds.push((Quantity::InstsSendmsg, 1));
            }
        }
        Enc::Smem => adds.push((Quantity::InstsSmem, 1)),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => {
            vector = true;
            valu = true;
            adds.push((Quantity::InstsValu, 1));
            valu_subclass(op, name, &mut adds);
        }
        Enc::Ds => {
            vector = true;
            if name.starts_with("ds_gws") || name.ends_with("_gds") {
                adds.push((Quantity::InstsGds, 1));
            } else {
                adds.push((Quantity::InstsLds, 1));
            }
        }
        Enc::Flat | Enc::Mubuf => {
            vector = true;
            bytes = memory_bytes(name);
            match bytes {
                Bytes::None => {}
                Bytes::Read(_) => adds.push((Quantity::InstsVmemRd, 1)),
                Bytes::Write(_) => adds.push((Quantity::InstsVmemWr, 1)),
                Bytes::Atomic(_) => adds.push((Quantity::InstsVmemAtomic, 1)),
            }
            if bytes != Bytes::None {
                adds.push((Quantity::InstsVmem, 1));
            }
            if enc == Enc::Flat {
                adds.push((Quantity::InstsFlat, 1));
                if (ctrl >> crate::decode::flags::SEG_SHIFT) & 3 == 0 {
                    // A FLAT-segment instruction is issued to LDS as well as to memory.
                    adds.push((Quantity::InstsLds, 1));
                }
            }
        }
        Enc::Unknown => {}
    }
    Class {
        adds,
        vector,
        valu,
        bytes,
    }
}

/// Bytes per lane of a memory instruction, and whether it reads, writes or is atomic; `None`
/// for cache control (write-back, invalidate) and GWS operations.
fn memory_bytes(name: &str) -> Bytes {
    let width = lane_width(name);
    let pairs = if name.contains("read2") || name.contains("write2") {
        2
    } else {
        1
    };
    let ds_atomic = name.starts_with("ds_") && is_ds_atomic(name);
    if name.contains("atomic") || ds_atomic {
        Bytes::Atomic(width)
    } else if name.contains("store") || name.contains("write") {
        Bytes::Write(width * pairs)
    } else if name.contains("load") || name.contains("read") {
        Bytes::Read(width * pairs)
    } else {
        Bytes::None
    }
}

/// The data width of one lane, from the mnemonic's size suffix.
fn lane_width(name: &str) -> u32 {
    const SUFFIXES: &[(&str, u32)] = &[
        ("st64_b64", 8),
        ("st64_b32", 4),
        ("dwordx4", 16),
        ("dwordx3", 12),
        ("dwordx2", 8),
        ("dword", 4),
        ("b128", 16),
        ("b96", 12),
        ("_x2", 8),
        ("64", 8),
        ("byte", 1),
        ("short", 2),
        ("b16", 2),
        ("u16", 2),
        ("i16", 2),
        ("b8", 1),
        ("u8", 1),
        ("i8", 1),
    ];
    SUFFIXES
        .iter()
        .find(|(s, _)| name.contains(s))
        .map_or(4, |&(_, b)| b)
}

fn is_ds_atomic(name: &str) -> bool {
    [
        "ds_add",
        "ds_sub",
        "ds_rsub",
        "ds_inc",
        "ds_dec",
        "ds_min",
        "ds_max",
        "ds_and",
        "ds_or",
        "ds_xor",
        "ds_mskor",
        "ds_cmpst",
        "ds_wrxchg",
        "ds_cmpxchg",
        "ds_condxchg",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// VALU subclasses: f16/f32/f64 add, multiply, fused multiply-add and transcendental, 32/64-bit
/// integer, conversion, and MFMA type and math operations.
fn valu_subclass(op: Op, name: &str, adds: &mut Vec<(Quantity, u64)>) {
    if let Some(shape) = name.strip_prefix("v_mfma_") {
        mfma(op, shape, adds);
        return;
    }
    let body = name.strip_prefix("v_").unwrap_or(name);
    if body.starts_with("cvt_") {
        adds.push((Quantity::InstsValuCvt, 1));
        return;
    }
    let kind = body.split('_').next().unwrap_or("");
    let ty = body.rsplit('_').next().unwrap_or("");
    let float = match ty {
        "f16" => Some(0),
        "f32" => Some(1),
        "f64" => Some(2),
        _ => None,
    };
    if let Some(f) = float {
        let table: [[Quantity; 3]; 4] = [
            [
                Quantity::InstsValuAddF16,
                Quantity::InstsValuAddF32,
                Quantity::InstsValuAddF64,
            ],
            [
                Quantity::InstsValuMulF16,
                Quantity::InstsValuMulF32,
                Quantity::InstsValuMulF64,
            ],
            [
                Quantity::InstsValuFmaF16,
                Quantity::InstsValuFmaF32,
                Quantity::InstsValuFmaF64,
            ],
            [
                Quantity::InstsValuTransF16,
                Quantity::InstsValuTransF32,
                Quantity::InstsValuTransF64,
            ],
        ];
        let row = match kind {
            "add" | "sub" | "subrev" => Some(0),
            "mul" => Some(1),
            k if k.starts_with("fma") || k.starts_with("mac") || k.starts_with("mad") => Some(2),
            "exp" | "log" | "rcp" | "rsq" | "sqrt" | "sin" | "cos" => Some(3),
            _ => None,
        };
        if let Some(r) = row {
            adds.push((table[r][f], 1));
        }
        return;
    }
    match ty {
        "u32" | "i32" | "b32" | "u24" | "i24" => adds.push((Quantity::InstsValuInt32, 1)),
        "u64" | "i64" | "b64" => adds.push((Quantity::InstsValuInt64, 1)),
        _ => {}
    }
}

/// MFMA type and math operations: `v_mfma_<d>_<M>x<N>x<K><in>` (optionally with a `_1k` suffix),
/// `2·M·N·K·blocks` operations, reported per 512.
fn mfma(op: Op, shape: &str, adds: &mut Vec<(Quantity, u64)>) {
    adds.push((Quantity::InstsMfma, 1));
    let parts: Vec<&str> = shape.split('_').collect();
    let dims = parts.get(1).copied().unwrap_or("");
    let mut it = dims.split('x');
    let m: u64 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    let n: u64 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    let rest = it.next().unwrap_or("");
    let k_digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let input = &rest[k_digits.len()..];
    let k: u64 = k_digits.parse().unwrap_or(0);
    // Accumulator registers per lane: M·N·blocks / 64 lanes.
    let acc = u64::from(op.types().first().map_or(0, |t| t.dwords()));
    let acc = if input == "f64" { acc / 2 } else { acc };
    let blocks = (acc * 64).checked_div(m * n).unwrap_or(0).max(1);
    let mops = (2 * m * n * k * blocks) / 512;
    let (ty, mops_q) = match input {
        "f16" => (Quantity::InstsValuMfmaF16, Quantity::InstsValuMfmaMopsF16),
        "bf16" | "bf16_1k" => (Quantity::InstsValuMfmaBf16, Quantity::InstsValuMfmaMopsBf16),
        "f32" | "xf32" => (Quantity::InstsValuMfmaF32, Quantity::InstsValuMfmaMopsF32),
        "f64" => (Quantity::InstsValuMfmaF64, Quantity::InstsValuMfmaMopsF64),
        _ => (Quantity::InstsValuMfmaI8, Quantity::InstsValuMfmaMopsI8),
    };
    adds.push((ty, 1));
    adds.push((mops_q, mops));
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLOBAL: u32 = 2 << crate::decode::flags::SEG_SHIFT;

    fn has(c: &Class, q: Quantity) -> u64 {
        c.adds
            .iter()
            .filter(|(k, _)| *k == q)
            .map(|(_, w)| *w)
            .sum()
    }

    #[test]
    fn categories_follow_the_encoding() {
        let c = classify(Op::s_add_u32, Enc::Sop2, 0);
        assert_eq!(has(&c, Quantity::InstsSalu), 1);
        assert!(!c.vector);
        let c = classify(Op::s_cbranch_scc0, Enc::Sopp, 0);
        assert_eq!(has(&c, Quantity::InstsBranch), 1);
        assert_eq!(has(&c, Quantity::InstsSalu), 0);
        let c = classify(Op::s_waitcnt, Enc::Sopp, 0);
        assert_eq!(c.adds, vec![(Quantity::Insts, 1)]);
        let c = classify(Op::v_fmaak_f32, Enc::Vop2, 0);
        assert_eq!(has(&c, Quantity::InstsValuFmaF32), 1);
        let c = classify(Op::flat_load_dword, Enc::Flat, GLOBAL);
        assert_eq!(has(&c, Quantity::InstsVmemRd), 1);
        assert_eq!(has(&c, Quantity::InstsFlat), 1);
        assert_eq!(has(&c, Quantity::InstsLds), 0);
        assert_eq!(c.bytes, Bytes::Read(4));
        let c = classify(Op::flat_store_dwordx4, Enc::Flat, GLOBAL);
        assert_eq!(c.bytes, Bytes::Write(16));
        // LDS instructions request no memory bytes; widths come from the suffix.
        let c = classify(Op::ds_read_b32, Enc::Ds, 0);
        assert_eq!(has(&c, Quantity::InstsLds), 1);
        assert_eq!(c.bytes, Bytes::None);
        assert_eq!(memory_bytes("ds_write2_b64"), Bytes::Write(16));
        assert_eq!(memory_bytes("ds_read2st64_b32"), Bytes::Read(8));
        // A FLAT-segment load also counts as LDS.
        let c = classify(Op::flat_load_dword, Enc::Flat, 0);
        assert_eq!(has(&c, Quantity::InstsLds), 1);
        let c = classify(Op::flat_atomic_add_x2, Enc::Flat, GLOBAL);
        assert_eq!(c.bytes, Bytes::Atomic(8));
        assert_eq!(has(&c, Quantity::InstsVmemAtomic), 1);
    }

    #[test]
    fn mfma_math_operations_follow_the_shape() {
        // 16x16x4 f32, one block: 2*16*16*4 = 2048 operations = 4 per 512.
        let c = classify(Op::v_mfma_f32_16x16x4f32, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::InstsMfma), 1);
        assert_eq!(has(&c, Quantity::InstsValuMfmaF32), 1);
        assert_eq!(has(&c, Quantity::InstsValuMfmaMopsF32), 4);
        // 4x4x1 f32 has 16 blocks: 2*4*4*1*16 = 512 operations.
        let c = classify(Op::v_mfma_f32_4x4x1f32, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::InstsValuMfmaMopsF32), 1);
        // 32x32x8 f16: 2*32*32*8 = 16384 = 32 per 512.
        let c = classify(Op::v_mfma_f32_32x32x8f16, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::InstsValuMfmaMopsF16), 32);
    }
}
