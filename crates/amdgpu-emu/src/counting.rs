//! Hardware-counter quantities: which instruction counts in which category, and the per-CU
//! totals a dispatch reports.
//!
//! Each decoded instruction gets a [`Class`] once, when its code is decoded: the quantities one
//! issue of it adds (`SQ_INSTS`, the VALU or SALU or memory category, a VALU subclass, the MFMA
//! type and its math operations), and the bytes each active lane of a memory instruction
//! requests. A wave counts issues per class (one add per instruction); a finished wave's counts
//! are folded into its compute unit's totals, so the hot path never touches the quantity array.
//! The rules are listed in `docs/emulator.md` ("Counters").

use crate::decode::{Enc, Op};

pub use amdgpu_counters::Quantity;

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

/// How a memory instruction's active lanes add to the bytes-requested quantities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bytes {
    None,
    Read(u32),
    Write(u32),
    Atomic(u32),
    Lds(u32),
}

/// What one issue of an instruction adds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Class {
    /// Quantities added per issue, with their weight (1, or the MFMA's math operations / 512).
    pub adds: Vec<(Quantity, u64)>,
    /// Bytes per active lane (memory instructions).
    pub bytes: Bytes,
}

/// The distinct classes of a program; each instruction holds its index
/// ([`crate::decode::Inst::counter_class`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct ClassTable {
    pub classes: Vec<Class>,
}

/// Most distinct classes a program has (an instruction's class index is a byte); the rest share
/// the last class, which counts them in `Insts` only.
const MAX_CLASSES: usize = 256;

impl ClassTable {
    /// Classifies every instruction of a program and stores its class index in it.
    pub fn build(insts: &mut [crate::decode::Inst]) -> ClassTable {
        let mut t = ClassTable::default();
        let overflow = Class {
            adds: vec![(Quantity::Insts, 1)],
            bytes: Bytes::None,
        };
        for inst in insts.iter_mut() {
            let c = classify(inst.op, inst.enc, inst.ctrl);
            let k = match t.classes.iter().position(|k| *k == c) {
                Some(k) => k,
                None if t.classes.len() < MAX_CLASSES - 1 => {
                    t.classes.push(c);
                    t.classes.len() - 1
                }
                None => {
                    if t.classes.len() < MAX_CLASSES {
                        t.classes.push(overflow.clone());
                    }
                    MAX_CLASSES - 1
                }
            };
            inst.counter_class = k as u8;
        }
        t
    }
}

/// What a work-group's waves counted, together: issues per class and the lane-dependent sums.
/// The waves of a work-group run on one thread and share one set of counts, so a work-group
/// is reset and folded once, whatever its number of waves.
#[derive(Clone, Debug)]
pub(crate) struct GroupCounts {
    /// Issues per class index (a fixed array: indexing by a byte needs no bounds check).
    pub by_class: [u64; MAX_CLASSES],
    /// Active lanes summed per class index (memory classes only): their bytes are the lanes
    /// times the class's width, computed when the work-group is folded.
    pub lanes_by_class: [u64; MAX_CLASSES],
    /// FLAT-segment instructions with at least one lane in LDS, and with every lane there.
    pub flat_lds: u64,
    pub flat_lds_only: u64,
    /// Waves with all 64 lanes active when they were launched.
    pub full_waves: u64,
}

impl Default for GroupCounts {
    fn default() -> Self {
        GroupCounts {
            by_class: [0; MAX_CLASSES],
            lanes_by_class: [0; MAX_CLASSES],
            flat_lds: 0,
            flat_lds_only: 0,
            full_waves: 0,
        }
    }
}

impl GroupCounts {
    /// Zero counts for a program of `classes` classes.
    pub fn reset(&mut self, classes: usize) {
        self.by_class[..classes.min(MAX_CLASSES)].fill(0);
        self.lanes_by_class[..classes.min(MAX_CLASSES)].fill(0);
        self.flat_lds = 0;
        self.flat_lds_only = 0;
        self.full_waves = 0;
    }

    /// Counts one issue of class `k`.
    #[inline(always)]
    pub fn issue(&mut self, k: u8) {
        self.by_class[usize::from(k)] += 1;
    }

    /// Counts the active lanes of one issue of memory class `k` with EXEC `exec`.
    #[inline(always)]
    pub fn request(&mut self, k: u8, exec: u64) {
        self.lanes_by_class[usize::from(k)] += u64::from(exec.count_ones());
    }

    /// Adds `other`'s counts (of a program of `classes` classes) to these.
    pub fn add(&mut self, other: &GroupCounts, classes: usize) {
        let n = classes.min(MAX_CLASSES);
        for (a, b) in self.by_class[..n].iter_mut().zip(&other.by_class[..n]) {
            *a += b;
        }
        for (a, b) in self.lanes_by_class[..n]
            .iter_mut()
            .zip(&other.lanes_by_class[..n])
        {
            *a += b;
        }
        self.flat_lds += other.flat_lds;
        self.flat_lds_only += other.flat_lds_only;
        self.full_waves += other.full_waves;
    }

    /// Adds these counts into a compute unit's totals (its waves and cycles are counted
    /// apart).
    pub fn fold(&self, table: &ClassTable, cu: &mut QuantityCounts) {
        let classes = table.classes.len().min(MAX_CLASSES);
        fold_classes(
            table,
            cu,
            (0..classes).map(|k| (self.by_class[k], self.lanes_by_class[k])),
        );
        cu[Quantity::InstsLds as usize] += self.flat_lds;
        cu[Quantity::InstsFlatLdsOnly as usize] += self.flat_lds_only;
        cu[Quantity::Waves64 as usize] += self.full_waves;
    }
}

/// Adds the issues and active lanes of each class (in class order) into a compute unit's
/// totals: the class's quantities and its bytes.
fn fold_classes(
    table: &ClassTable,
    cu: &mut QuantityCounts,
    per_class: impl Iterator<Item = (u64, u64)>,
) {
    for (class, (n, lanes)) in table.classes.iter().zip(per_class) {
        if n == 0 {
            continue;
        }
        for &(q, weight) in &class.adds {
            cu[q as usize] += n * weight;
        }
        match class.bytes {
            Bytes::None => {}
            Bytes::Read(b) => cu[Quantity::BytesRead as usize] += lanes * u64::from(b),
            Bytes::Write(b) | Bytes::Atomic(b) => {
                cu[Quantity::BytesWritten as usize] += lanes * u64::from(b)
            }
            Bytes::Lds(b) => cu[Quantity::BytesLds as usize] += lanes * u64::from(b),
        }
    }
}

/// The class of an operation in its encoding (`ctrl` holds a FLAT instruction's segment).
pub(crate) fn classify(op: Op, enc: Enc, ctrl: u32) -> Class {
    let name = op.name();
    let mut adds = vec![(Quantity::Insts, 1)];
    let mut bytes = Bytes::None;
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
            adds.push((Quantity::InstsValu, 1));
            valu_subclass(op, name, &mut adds);
        }
        Enc::Ds => {
            if name.starts_with("ds_gws") || name.ends_with("_gds") {
                adds.push((Quantity::InstsGds, 1));
            } else {
                adds.push((Quantity::InstsLds, 1));
                bytes = match memory_bytes(name) {
                    Bytes::Read(b) | Bytes::Write(b) | Bytes::Atomic(b) => Bytes::Lds(b),
                    other => other,
                };
            }
        }
        Enc::Flat | Enc::Mubuf => {
            bytes = memory_bytes(name);
            vector_memory(enc, ctrl, bytes, &mut adds);
        }
        // An image access's bytes follow the image's format, unknown until it runs: it counts
        // as a vector-memory instruction, and its bytes are not counted.
        Enc::Mimg => {
            let read = name.starts_with("image_load")
                || matches!(op, Op::image_sample | Op::image_get_resinfo);
            vector_memory_instruction(read, &mut adds);
        }
        Enc::Unknown => {}
    }
    Class { adds, bytes }
}

/// One vector-memory instruction, a read or a write.
fn vector_memory_instruction(read: bool, adds: &mut Vec<(Quantity, u64)>) {
    adds.push((Quantity::InstsVmem, 1));
    let kind = if read {
        Quantity::InstsVmemRd
    } else {
        Quantity::InstsVmemWr
    };
    adds.push((kind, 1));
}

/// The categories of a MUBUF or FLAT-encoded instruction. An atomic counts as a write. A
/// FLAT-segment instruction's LDS categories depend on its lanes' addresses: they are counted
/// when it runs.
fn vector_memory(enc: Enc, ctrl: u32, bytes: Bytes, adds: &mut Vec<(Quantity, u64)>) {
    let (read, write) = match bytes {
        Bytes::Read(_) => (true, false),
        Bytes::Write(_) | Bytes::Atomic(_) => (false, true),
        _ => (false, false),
    };
    if !(read || write) {
        return;
    }
    vector_memory_instruction(read, adds);
    let segment = (ctrl >> crate::decode::flags::SEG_SHIFT) & 3;
    let scratch = enc == Enc::Flat && segment == 1;
    if enc == Enc::Flat {
        adds.push((Quantity::InstsFlat, 1));
    }
    let ta = match (enc, scratch, read) {
        (Enc::Mubuf, _, true) => Some(Quantity::BufferReadWaves),
        (Enc::Mubuf, _, false) => Some(Quantity::BufferWriteWaves),
        (_, false, true) => Some(Quantity::FlatReadWaves),
        (_, false, false) => Some(Quantity::FlatWriteWaves),
        _ => None,
    };
    if let Some(q) = ta {
        adds.push((q, 1));
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
        adds.push((Quantity::ValuCvt, 1));
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
                Quantity::ValuAddF16,
                Quantity::ValuAddF32,
                Quantity::ValuAddF64,
            ],
            [
                Quantity::ValuMulF16,
                Quantity::ValuMulF32,
                Quantity::ValuMulF64,
            ],
            [
                Quantity::ValuFmaF16,
                Quantity::ValuFmaF32,
                Quantity::ValuFmaF64,
            ],
            [
                Quantity::ValuTransF16,
                Quantity::ValuTransF32,
                Quantity::ValuTransF64,
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
        "u32" | "i32" | "b32" | "u24" | "i24" => adds.push((Quantity::ValuInt32, 1)),
        "u64" | "i64" | "b64" => adds.push((Quantity::ValuInt64, 1)),
        _ => {}
    }
}

/// MFMA type and math operations: `v_mfma_<d>_<M>x<N>x<K><in>` (optionally with a `_1k` suffix),
/// `2·M·N·K·blocks` operations, reported per 512.
fn mfma(op: Op, shape: &str, adds: &mut Vec<(Quantity, u64)>) {
    adds.push((Quantity::InstsMfma, 1));
    let (m, n, k, blocks) = op.mfma_shape().unwrap_or((0, 0, 0, 1));
    let mops = (2 * u64::from(m * n * k) * u64::from(blocks)) / 512;
    let input = shape
        .split('_')
        .nth(1)
        .map(|dims| dims.trim_start_matches(|c: char| c.is_ascii_digit() || c == 'x'))
        .filter(|t| !t.is_empty())
        .or_else(|| shape.rsplit('_').find(|t| !t.is_empty() && *t != "1k"))
        .unwrap_or("");
    if matches!(input, "fp8" | "bf8") {
        // gfx942's 8-bit float MFMAs have counters of their own (SQ_INSTS_VALU_MFMA_F8), which
        // the catalog does not model; they are not counted as integer MFMAs.
        return;
    }
    let (ty, mops_q) = match input {
        "f16" => (Quantity::MfmaF16, Quantity::MfmaMopsF16),
        "bf16" => (Quantity::MfmaBf16, Quantity::MfmaMopsBf16),
        "f32" | "xf32" => (Quantity::MfmaF32, Quantity::MfmaMopsF32),
        "f64" => (Quantity::MfmaF64, Quantity::MfmaMopsF64),
        _ => (Quantity::MfmaI8, Quantity::MfmaMopsI8),
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
        let c = classify(Op::s_cbranch_scc0, Enc::Sopp, 0);
        assert_eq!(has(&c, Quantity::InstsBranch), 1);
        assert_eq!(has(&c, Quantity::InstsSalu), 0);
        let c = classify(Op::s_waitcnt, Enc::Sopp, 0);
        assert_eq!(c.adds, vec![(Quantity::Insts, 1)]);
        let c = classify(Op::v_fmaak_f32, Enc::Vop2, 0);
        assert_eq!(has(&c, Quantity::ValuFmaF32), 1);
        let c = classify(Op::flat_load_dword, Enc::Flat, GLOBAL);
        assert_eq!(has(&c, Quantity::InstsVmemRd), 1);
        assert_eq!(has(&c, Quantity::InstsFlat), 1);
        assert_eq!(has(&c, Quantity::FlatReadWaves), 1);
        assert_eq!(has(&c, Quantity::InstsLds), 0);
        assert_eq!(c.bytes, Bytes::Read(4));
        let c = classify(Op::flat_store_dwordx4, Enc::Flat, GLOBAL);
        assert_eq!(c.bytes, Bytes::Write(16));
        // LDS instructions request no memory bytes; widths come from the suffix.
        let c = classify(Op::ds_read_b32, Enc::Ds, 0);
        assert_eq!(has(&c, Quantity::InstsLds), 1);
        assert_eq!(c.bytes, Bytes::Lds(4));
        assert_eq!(memory_bytes("ds_write2_b64"), Bytes::Write(16));
        assert_eq!(memory_bytes("ds_read2st64_b32"), Bytes::Read(8));
        let c = classify(Op::flat_atomic_add_x2, Enc::Flat, GLOBAL);
        assert_eq!(c.bytes, Bytes::Atomic(8));
        assert_eq!(has(&c, Quantity::InstsVmemWr), 1);
        let c = classify(Op::buffer_store_dword, Enc::Mubuf, 0);
        assert_eq!(has(&c, Quantity::BufferWriteWaves), 1);
        assert_eq!(has(&c, Quantity::InstsFlat), 0);
    }

    /// Waves counted together into one work-group's counts give the totals of folding each
    /// wave's counts on its own.
    #[test]
    fn a_group_counted_together_folds_as_its_waves_one_by_one() {
        let mut insts: Vec<crate::decode::Inst> = [
            (Op::s_add_u32, Enc::Sop2, 0),
            (Op::v_fmaak_f32, Enc::Vop2, 0),
            (Op::flat_load_dword, Enc::Flat, GLOBAL),
            (Op::flat_store_dwordx4, Enc::Flat, GLOBAL),
            (Op::ds_read_b32, Enc::Ds, 0),
        ]
        .iter()
        .map(|&(op, enc, ctrl)| {
            let mut inst = crate::decode::decode(crate::target::Target::Gfx942, &[0xBF81_0000]);
            (inst.op, inst.enc, inst.ctrl) = (op, enc, ctrl);
            inst
        })
        .collect();
        let table = ClassTable::build(&mut insts);
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        let (mut together, mut summed) = (GroupCounts::default(), GroupCounts::default());
        let mut one_by_one = [0; Quantity::COUNT];
        for k in 0..5 {
            let mut alone = GroupCounts::default();
            for counts in [&mut alone, &mut together] {
                let mut r = r;
                for _ in 0..40 {
                    r ^= r << 13;
                    r ^= r >> 7;
                    r ^= r << 17;
                    let class = insts[(r % 5) as usize].counter_class;
                    counts.issue(class);
                    counts.request(class, r);
                }
                counts.flat_lds += k as u64;
                counts.flat_lds_only += k as u64 / 2;
                counts.full_waves += u64::from(k % 2 == 0);
            }
            r = r.rotate_left(7) ^ k as u64;
            alone.fold(&table, &mut one_by_one);
            summed.add(&alone, table.classes.len());
        }
        let (mut at_once, mut added) = ([0; Quantity::COUNT], [0; Quantity::COUNT]);
        together.fold(&table, &mut at_once);
        summed.fold(&table, &mut added);
        assert_eq!(one_by_one, at_once);
        assert_eq!(added, at_once);
        assert_eq!(at_once[Quantity::Waves64 as usize], 3);
        assert_eq!(at_once[Quantity::InstsFlatLdsOnly as usize], 4);
    }

    #[test]
    fn mfma_math_operations_follow_the_shape() {
        // 16x16x4 f32, one block: 2*16*16*4 = 2048 operations = 4 per 512.
        let c = classify(Op::v_mfma_f32_16x16x4f32, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::InstsMfma), 1);
        assert_eq!(has(&c, Quantity::MfmaF32), 1);
        assert_eq!(has(&c, Quantity::MfmaMopsF32), 4);
        // 4x4x1 f32 has 16 blocks: 2*4*4*1*16 = 512 operations.
        let c = classify(Op::v_mfma_f32_4x4x1f32, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaMopsF32), 1);
        // 32x32x8 f16: 2*32*32*8 = 16384 = 32 per 512.
        let c = classify(Op::v_mfma_f32_32x32x8f16, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaMopsF16), 32);
        // 32x32x1 f32 has two blocks in 32 registers: 2*32*32*1*2 = 4096 = 8 per 512.
        let c = classify(Op::v_mfma_f32_32x32x1f32, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaMopsF32), 8);
        // 4x4x4 f64 has four blocks in one register pair: 2*4*4*4*4 = 512.
        let c = classify(Op::v_mfma_f64_4x4x4f64, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaF64), 1);
        assert_eq!(has(&c, Quantity::MfmaMopsF64), 1);
        // gfx942's 16x16x32 i8, one block: 2*16*16*32 = 16384 = 32 per 512; 16x16x4 bf16_1k,
        // four blocks: 2*16*16*4*4 = 8192 = 16 per 512.
        let c = classify(Op::v_mfma_i32_16x16x32_i8, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaMopsI8), 32);
        let c = classify(Op::v_mfma_f32_16x16x4bf16_1k, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::MfmaBf16), 1);
        assert_eq!(has(&c, Quantity::MfmaMopsBf16), 16);
        // An 8-bit float MFMA is an MFMA, but not an integer one.
        let c = classify(Op::v_mfma_f32_16x16x32_fp8_bf8, Enc::Vop3p, 0);
        assert_eq!(has(&c, Quantity::InstsMfma), 1);
        assert_eq!(has(&c, Quantity::MfmaI8) + has(&c, Quantity::MfmaMopsI8), 0);
    }
}
