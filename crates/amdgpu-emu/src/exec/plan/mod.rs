//! Pre-resolved instructions: the most frequent instruction forms with their operands (vector
//! register rows, scalar registers, inline constants and literals), branch targets and row
//! handler resolved once per decoded code range, so that running one re-reads none of the
//! decoded fields and dispatches once. A plan computes whole register rows (all 64 lanes, then
//! written under EXEC as a blend); everything else, and every case a plan's run-time checks
//! refuse (VGPR indexing, a directed rounding mode, lanes a memory access cannot take in one
//! range), runs on the general path, which stays the reference semantics.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::decode::{Enc, Ext, Inst, LITERAL, OFF, Op, Op::*, Program, Ty, VCC, VGPR, flags};
#[cfg(target_arch = "x86_64")]
use crate::wave::row8;
use crate::wave::{LANES, STAGE, VReg, Wave, inline_const};

use super::float::{self, Env};
use super::memory::{
    CrossLane, GlobalAccess, GlobalAtomic, LdsAtomic, PlainDs, cross_lane, global_access,
    global_access_plan, global_atomic, lds_atomic, plain_ds,
};
use super::scalar::bfe32;
use super::vector::{
    LaneOp, LaneOut, bfe, ffbh_i32, flush32_bits, lane_mask, lane_op, perm, sdwa_write, sext24,
};
use super::{Ctx, Flow, is_known_source};

mod division;
mod float_compare;
mod mixed;
mod wide_float;
mod wide_lanes;

use float_compare::{FloatComparePlan, float_compare_plan, run_float_compare};
use mixed::{MixPlan, mix_plan, run_mix};
use wide_lanes::{WideLanePlan, run_wide_lane_plan, wide_lane_plan};

use wide_float::{
    DoublePlan, HalfPlan, PackedPlan, double_plan, half_plan, packed_plan, run_double, run_half,
    run_packed,
};

/// A 32-bit source operand, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Origin {
    /// A VGPR/AGPR row.
    Row(u16),
    /// A scalar register (0..128), read when the instruction runs.
    Sgpr(u8),
    /// An inline constant or the literal (modifiers already applied).
    Value(u32),
}

/// A 32-bit source with its f32 sign modifiers: the bits cleared (abs), then flipped (neg).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Src {
    from: Origin,
    clear: u32,
    flip: u32,
}

impl Src {
    /// A source without sign modifiers.
    const fn plain(from: Origin) -> Src {
        Src {
            from,
            clear: 0,
            flip: 0,
        }
    }

    /// The value of every lane, when the source is not a row.
    fn uniform(&self, w: &Wave) -> Option<u32> {
        match self.from {
            Origin::Row(_) => None,
            Origin::Sgpr(c) => Some((w.s[c as usize] & !self.clear) ^ self.flip),
            Origin::Value(x) => Some(x),
        }
    }
}

/// A 64-bit lane mask source (condition or carry-in).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mask {
    None,
    /// VCC.
    Vcc,
    /// An SGPR pair.
    Pair(u8),
    Value(u64),
}

/// A whole-row operation on the register file: the destination row from three source rows
/// (slots), the MODE's denormal controls and a condition mask, written in the EXEC lanes.
pub(crate) type RowFn = fn(&mut [VReg], usize, [usize; 3], &Env, u64, u64);

/// A compare of whole rows: bit `l` of the result is the compare of lane `l`.
type CompareFn = fn(&VReg, &VReg) -> u64;

/// A 32-bit VALU operation writing a VGPR row.
pub(crate) struct RowPlan {
    run: RowFn,
    dst: u16,
    src: [Src; 3],
    /// How many of `src` the operation reads (the others are not staged).
    reads: u8,
    cond: Mask,
    float: bool,
    /// An f32 fused multiply-add (its sources in `src` order a * b + c).
    fma: bool,
    /// `v_mov_b32`: a source that is one value for every lane is written without staging.
    moves: bool,
}

/// A one-dword VALU operation without a plan of its own: the general path's lane function run
/// lane by lane over the source rows (staged as a row plan stages them).
pub(crate) struct LanePlan {
    op: LaneOp,
    /// The division-sequence step the operation is, run on rows where the lanes allow.
    division: Option<division::Step>,
    dst: u16,
    /// The lane mask the operation writes, when it writes one.
    sdst: u16,
    src: [Src; 3],
    reads: u8,
}

/// The SDWA form of an operation with a [`LanePlan`] (VOP1, VOP2 or VOPC, without clamp or
/// output modifier): each of the first two sources' byte, word or dword selected, extended and
/// sign-modified, the lane function run over them, and a VGPR result placed in the
/// destination's byte, word or dword.
pub(crate) struct SdwaPlan {
    lanes: LanePlan,
    select: [Select; 2],
    /// The SDWA control word when the destination is not the whole dword.
    place: Option<u32>,
}

/// An SDWA source selection: the field of `width` bits from bit `shift`, sign- or
/// zero-extended, then its sign bit cleared (abs) and flipped (neg).
#[derive(Clone, Copy)]
struct Select {
    shift: u32,
    width: u32,
    sext: bool,
    clear: u32,
    flip: u32,
}

impl Select {
    /// The whole dword, unmodified.
    const WHOLE: Select = Select {
        shift: 0,
        width: 32,
        sext: false,
        clear: 0,
        flip: 0,
    };

    /// Source `k`'s selection in SDWA control word `ctrl`, its sign bit that of type `ty`.
    fn of(ctrl: u32, k: usize, ty: Ty) -> Select {
        let c = ctrl >> (16 + 8 * k);
        let (shift, width) = match c & 7 {
            s @ 0..=3 => (8 * s, 8),
            s @ (4 | 5) => (16 * (s - 4), 16),
            _ => (0, 32),
        };
        let sign = match ty {
            Ty::F32 | Ty::B32 => 1 << 31,
            Ty::F16 => 1 << 15,
            _ => 0,
        };
        Select {
            shift,
            width,
            sext: c >> 3 & 1 != 0,
            clear: if c >> 5 & 1 != 0 { sign } else { 0 },
            flip: if c >> 4 & 1 != 0 { sign } else { 0 },
        }
    }

    #[inline(always)]
    fn apply(self, x: u32) -> u32 {
        let up = 32 - self.width;
        let field = (x >> self.shift) << up;
        let v = if self.sext {
            ((field as i32) >> up) as u32
        } else {
            field >> up
        };
        (v & !self.clear) ^ self.flip
    }
}

/// `v_mad_u64_u32` / `v_mad_i64_i32`: the 64-bit product of two 32-bit sources plus a 64-bit
/// source into a VGPR pair, the lanes whose sum overflowed into an SGPR pair.
pub(crate) struct MulAddPlan {
    signed: bool,
    dst: u16,
    sdst: u16,
    src: [Src; 2],
    add: Wide,
}

/// A VALU compare writing a lane mask (and EXEC for `v_cmpx`).
pub(crate) struct ComparePlan {
    run: CompareFn,
    /// The compare as greater-than or equality (for the vector path).
    relation: Relation,
    src: [Src; 2],
    dst: u16,
    exec: bool,
}

/// A 64-bit integer compare (the loop conditions of `size_t` indices) writing a lane mask (and
/// EXEC for `v_cmpx`).
pub(crate) struct WideComparePlan {
    relation: Relation,
    src: [Wide; 2],
    dst: u16,
    exec: bool,
}

/// `v_readfirstlane_b32` of a VGPR into a scalar register.
pub(crate) struct FirstLanePlan {
    src: u16,
    dst: u16,
}

/// An integer compare as the vector units have it: `a > b` or `a == b` (of the operands in
/// order or swapped), possibly negated, on signed or unsigned lanes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Relation {
    greater: bool,
    swap: bool,
    negate: bool,
    unsigned: bool,
}

impl Relation {
    fn of(op: Op) -> Option<Relation> {
        let name = op.name();
        let unsigned = name.ends_with("_u32") || name.ends_with("_u64");
        let rel = |greater, swap, negate| {
            Some(Relation {
                greater,
                swap,
                negate,
                unsigned,
            })
        };
        match name
            .trim_start_matches("v_cmpx_")
            .trim_start_matches("v_cmp_")
        {
            "eq_u32" | "eq_i32" | "eq_u64" | "eq_i64" => rel(false, false, false),
            "ne_u32" | "ne_i32" | "ne_u64" | "ne_i64" => rel(false, false, true),
            "gt_u32" | "gt_i32" | "gt_u64" | "gt_i64" => rel(true, false, false),
            "lt_u32" | "lt_i32" | "lt_u64" | "lt_i64" => rel(true, true, false),
            "ge_u32" | "ge_i32" | "ge_u64" | "ge_i64" => rel(true, true, true),
            "le_u32" | "le_i32" | "le_u64" | "le_i64" => rel(true, false, true),
            _ => None,
        }
    }
}

/// A 32-bit add with carry-out (and carry-in), or subtract with borrow-out (and borrow-in),
/// writing a VGPR row and a lane mask.
pub(crate) struct CarryPlan {
    dst: u16,
    sdst: u16,
    /// Minuend first when `subtract` (the reversed forms swapped here).
    src: [Src; 2],
    cond: Mask,
    subtract: bool,
}

/// A 64-bit source operand, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wide {
    /// A VGPR pair (the low slot).
    Pair(u16),
    /// A 32-bit VGPR row.
    Row(u16),
    /// An SGPR pair.
    SPair(u8),
    /// A 32-bit SGPR.
    Sgpr(u8),
    Value(u64),
}

/// A source of 64-bit lanes (or of 32-bit lanes, zero-extended) with its sign bit cleared
/// (abs), then flipped (neg).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Src64 {
    from: Wide,
    clear: u64,
    flip: u64,
}

impl Src64 {
    /// An operand not read.
    const NONE: Src64 = Src64 {
        from: Wide::Value(0),
        clear: 0,
        flip: 0,
    };

    /// Source `k` of `inst` read as `ty` ([`wide_source`]), with the sign modifiers the general
    /// path applies to that type (bit 63 of f64 and untyped 64-bit operands, bit 31 of 32-bit
    /// ones); `None` when another type has them.
    fn of(inst: &Inst, k: usize, ty: Ty) -> Option<Src64> {
        let (neg, abs) = (inst.neg >> k & 1 != 0, inst.abs >> k & 1 != 0);
        let sign: u64 = match ty {
            Ty::F64 | Ty::B64 => 1 << 63,
            Ty::F32 | Ty::B32 => 1 << 31,
            _ if !neg && !abs => 0,
            _ => return None,
        };
        let (clear, flip) = (if abs { sign } else { 0 }, if neg { sign } else { 0 });
        Some(match wide_source(inst, k)? {
            Wide::Value(v) => Src64 {
                from: Wide::Value((v & !clear) ^ flip),
                ..Src64::NONE
            },
            from => Src64 { from, clear, flip },
        })
    }

    /// Lane `l`'s value.
    #[inline(always)]
    fn lane(&self, w: &Wave, l: usize) -> u64 {
        (wide_lanes(w, &self.from).lane(l) & !self.clear) ^ self.flip
    }

    /// [`Src64::lane`] of every lane.
    fn lanes(&self, w: &Wave) -> [u64; LANES] {
        let from = wide_lanes(w, &self.from);
        std::array::from_fn(|l| (from.lane(l) & !self.clear) ^ self.flip)
    }
}

/// A VALU operation with a 64-bit result in a VGPR pair.
pub(crate) struct WidePlan {
    /// A right shift (`v_lshrrev_b64`: `base >> shift`); else `(base << shift) + add`.
    right: bool,
    /// The right shift is arithmetic (`v_ashrrev_i64`).
    arith: bool,
    dst: u16,
    /// The base, shift count and addend.
    parts: [Wide; 3],
}

/// A branch with its target instruction resolved.
#[derive(Clone, Copy)]
pub(crate) struct BranchPlan {
    op: Op,
    target: u32,
}

/// A scalar source of a 32- or 64-bit operation, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scalar {
    /// A scalar register (0..128), or the low one of a pair.
    Sgpr(u8),
    /// An inline constant or the literal, as the operation's source type reads it.
    Value(u64),
}

impl Scalar {
    fn read32(self, w: &Wave) -> u32 {
        match self {
            Scalar::Sgpr(c) => w.s[c as usize],
            Scalar::Value(v) => v as u32,
        }
    }

    fn read64(self, w: &Wave) -> u64 {
        match self {
            Scalar::Sgpr(c) => w.sgpr64(c as u16),
            Scalar::Value(v) => v,
        }
    }
}

/// The scalar sources of `inst` (SOP1: one, the second a zero; SOP2/SOPC: two), each read
/// as its type in the operation; `None` for an operand the general path must handle.
fn scalar_sources(inst: &Inst) -> Option<[Scalar; 2]> {
    let types = inst.op.types();
    let source = |k: usize| -> Option<Scalar> {
        let ty = *types.get(k + 1)?;
        let last = if ty.dwords() == 2 { 126 } else { 127 };
        match inst.src[k] {
            c if !is_known_source(c) => None,
            c if c <= last => Some(Scalar::Sgpr(c as u8)),
            c @ (128..=208 | 240..=248 | LITERAL) => {
                inline_const(c, ty, inst.lit).map(Scalar::Value)
            }
            _ => None,
        }
    };
    let second = if inst.enc == Enc::Sop1 {
        Scalar::Value(0)
    } else {
        source(1)?
    };
    Some([source(0)?, second])
}

/// A 32-bit scalar operation: the result and the new SCC (`None`: SCC unchanged) from the
/// sources and SCC.
type ScalarFn = fn(u32, u32, bool) -> (u32, Option<bool>);

/// A 32-bit SOP1/SOP2/SOPC operation.
pub(crate) struct ScalarPlan {
    run: ScalarFn,
    /// The destination SGPR (`None`: a compare, SCC only).
    dst: Option<u16>,
    src: [Scalar; 2],
}

/// A 64-bit scalar operation: the result from the sources and SCC.
type MaskFn = fn(u64, u64, bool) -> u64;

/// A 64-bit SOP1/SOP2 lane-mask operation (`s_and_b64`, `s_mov_b64`, ...), or a saveexec:
/// the old EXEC to the destination, EXEC from the source and the old EXEC, SCC from EXEC.
pub(crate) struct MaskPlan {
    run: MaskFn,
    /// `None` for a compare (SCC only).
    dst: Option<u16>,
    src: [Scalar; 2],
    saveexec: bool,
    /// SCC becomes whether the result is non-zero.
    sets_scc: bool,
    /// The result is 32-bit (one SGPR).
    narrow: bool,
}

/// A scalar load (`s_load_dword*`) from an SGPR-pair base and an immediate offset.
pub(crate) struct ScalarLoad {
    base: u8,
    imm: i64,
    /// An SGPR added to the offset.
    soffset: Option<u8>,
    dst: u16,
    dwords: u8,
}

/// How one instruction runs.
pub(crate) enum Plan {
    /// The general path.
    General,
    /// Nothing to do but continue (`s_waitcnt`, `s_nop`).
    Next,
    /// The wave ends (`s_endpgm`).
    End,
    Rows(RowPlan),
    Packed(PackedPlan),
    PackedHalf(HalfPlan),
    Double(DoublePlan),
    MulAdd(MulAddPlan),
    Compare(ComparePlan),
    WideCompare(WideComparePlan),
    FloatCompare(FloatComparePlan),
    FirstLane(FirstLanePlan),
    Carry(CarryPlan),
    Wide(WidePlan),
    Branch(BranchPlan),
    Global(GlobalAccess),
    GlobalAtomic(GlobalAtomic),
    Lds(PlainDs),
    LdsAtomic(LdsAtomic),
    CrossLane(CrossLane),
    Scalar(ScalarPlan),
    Mask(MaskPlan),
    ScalarLoad(ScalarLoad),
    Lanes(LanePlan),
    Sdwa(Box<SdwaPlan>),
    Mix(MixPlan),
    WideLanes(Box<WideLanePlan>),
}

/// A plan with its instruction's counter class: the plan loop reads nothing of the decoded
/// instruction (a cache line of its own).
pub(crate) struct Planned {
    pub plan: Plan,
    pub class: u8,
}

/// The plans of a decoded program, one per instruction (counter classes already assigned).
pub(crate) fn build(prog: &Program) -> Vec<Planned> {
    (0..prog.insts.len())
        .map(|i| Planned {
            plan: plan_of(prog, i).unwrap_or(Plan::General),
            class: prog.insts[i].counter_class,
        })
        .collect()
}

fn plan_of(prog: &Program, i: usize) -> Option<Plan> {
    let inst = &prog.insts[i];
    match inst.enc {
        Enc::Sopp => sopp_plan(prog, i),
        Enc::Sop1 if inst.op == s_getpc_b64 => {
            // The address of the next instruction: a constant of the code range.
            let next = prog.address_of(i) + inst.len as u64;
            mask_plan(inst, [Scalar::Value(next), Scalar::Value(0)]).map(Plan::Mask)
        }
        _ => inst_plan(inst),
    }
}

/// The plan of an instruction that is not a branch.
fn inst_plan(inst: &Inst) -> Option<Plan> {
    match inst.enc {
        Enc::Sopp => match inst.op {
            s_waitcnt | s_nop => Some(Plan::Next),
            s_endpgm => Some(Plan::End),
            _ => None,
        },
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc if inst.ext == Ext::Sdwa => {
            sdwa_plan(inst).map(|p| Plan::Sdwa(Box::new(p)))
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 => {
            // op_sel (VOP3 only): no planned operation implements it; the general path runs
            // the forms that define it and refuses the others.
            if inst.ext != Ext::None || inst.omod != 0 || inst.clamp || inst.op_sel != 0 {
                return None;
            }
            if inst.op == v_readfirstlane_b32 {
                return first_lane_plan(inst).map(Plan::FirstLane);
            }
            // Of the operations writing a scalar destination, only compares have plans here.
            let compare =
                Relation::of(inst.op).is_some() || float_compare::is_float_compare(inst.op);
            if !compare && inst.dst < VGPR {
                return None;
            }
            if let Some(run) = row_fn(inst.op) {
                return row_plan(inst, run).map(Plan::Rows);
            }
            if let Some(run) = compare_fn(inst.op) {
                return compare_plan(inst, run).map(Plan::Compare);
            }
            if compare {
                // The float compares, then the 64-bit integer ones (every 32-bit integer one has
                // a compare function).
                return float_compare_plan(inst)
                    .map(Plan::FloatCompare)
                    .or_else(|| wide_compare_plan(inst).map(Plan::WideCompare))
                    .or_else(|| lane_plan(inst).map(Plan::Lanes))
                    .or_else(|| wide_lane_plan(inst).map(Plan::WideLanes));
            }
            if matches!(
                inst.op,
                v_add_co_u32
                    | v_addc_co_u32
                    | v_sub_co_u32
                    | v_subb_co_u32
                    | v_subrev_co_u32
                    | v_subbrev_co_u32
            ) {
                return carry_plan(inst).map(Plan::Carry);
            }
            if let Some(p) = double_plan(inst) {
                return Some(Plan::Double(p));
            }
            if let Some(p) = mul_add_plan(inst) {
                return Some(Plan::MulAdd(p));
            }
            wide_plan(inst)
                .map(Plan::Wide)
                .or_else(|| lane_plan(inst).map(Plan::Lanes))
                .or_else(|| wide_lane_plan(inst).map(Plan::WideLanes))
        }
        Enc::Vop3p => packed_plan(inst)
            .map(Plan::Packed)
            .or_else(|| half_plan(inst).map(Plan::PackedHalf))
            .or_else(|| mix_plan(inst).map(Plan::Mix)),
        Enc::Flat => global_access_plan(inst)
            .map(Plan::Global)
            .or_else(|| GlobalAtomic::of(inst).map(Plan::GlobalAtomic)),
        Enc::Ds => PlainDs::of(inst)
            .map(Plan::Lds)
            .or_else(|| CrossLane::of(inst).map(Plan::CrossLane))
            .or_else(|| LdsAtomic::of(inst).map(Plan::LdsAtomic)),
        Enc::Sop1 | Enc::Sop2 | Enc::Sopc => scalar_plan(inst)
            .map(Plan::Scalar)
            .or_else(|| mask_plan(inst, scalar_sources(inst)?).map(Plan::Mask)),
        Enc::Sopk => sopk_plan(inst).map(Plan::Scalar),
        Enc::Smem => scalar_load_plan(inst).map(Plan::ScalarLoad),
        _ => None,
    }
}

fn scalar_load_plan(inst: &Inst) -> Option<ScalarLoad> {
    let dwords = match inst.op {
        s_load_dword => 1,
        s_load_dwordx2 => 2,
        s_load_dwordx4 => 4,
        s_load_dwordx8 => 8,
        s_load_dwordx16 => 16,
        _ => return None,
    };
    if inst.ctrl & flags::IMM == 0 || inst.src[0] >= 128 {
        return None;
    }
    Some(ScalarLoad {
        base: inst.src[0] as u8,
        imm: inst.imm as i64,
        soffset: (inst.sdst != OFF).then_some((inst.sdst & 127) as u8),
        dst: inst.dst,
        dwords,
    })
}

/// Runs a scalar load as the general path does, when the memory vouches for the dwords and
/// they are 4-byte aligned on the host; false (nothing done) otherwise.
fn scalar_load(w: &mut Wave, ctx: &mut Ctx<'_>, p: &ScalarLoad) -> bool {
    let mut off = p.imm;
    if let Some(s) = p.soffset {
        off += w.s[s as usize] as i64;
    }
    let addr = (w.sgpr64(p.base as u16) as i64).wrapping_add(off) as u64 & !3;
    let n = p.dwords as usize;
    let Some(ptr) = ctx.spans.translate(ctx.mem, addr, 4 * n as u64) else {
        return false;
    };
    if !(ptr.as_ptr() as usize).is_multiple_of(4) {
        return false;
    }
    for k in 0..n {
        // SAFETY: dword `k` of the `4 * n` bytes the memory translated, 4-byte aligned,
        // accessed atomically as the `GlobalMemory` contract asks.
        let a = unsafe { AtomicU32::from_ptr((ptr.as_ptr() as *mut u32).add(k)) };
        w.set_sgpr(p.dst + k as u16, a.load(Ordering::Relaxed));
    }
    true
}

fn scalar_plan(inst: &Inst) -> Option<ScalarPlan> {
    let run = scalar_fn(inst.op)?;
    let family = match inst.op {
        s_mov_b32 | s_not_b32 | s_bcnt1_i32_b32 | s_brev_b32 | s_ff1_i32_b32 | s_flbit_i32_b32
        | s_sext_i32_i8 | s_sext_i32_i16 => Enc::Sop1,
        s_bitcmp0_b32 | s_bitcmp1_b32 => Enc::Sopc,
        o if o.name().starts_with("s_cmp_") => Enc::Sopc,
        _ => Enc::Sop2,
    };
    if inst.enc != family || inst.op.types()[1..].iter().any(|t| t.dwords() != 1) {
        return None;
    }
    Some(ScalarPlan {
        run,
        dst: (inst.enc != Enc::Sopc).then_some(inst.dst),
        src: scalar_sources(inst)?,
    })
}

/// A SOPK operation as the SOP1/SOP2/SOPC operation it abbreviates, its 16-bit constant
/// (sign- or zero-extended as the operation reads it) the second source (`s_movk_i32`: the
/// only one).
fn sopk_plan(inst: &Inst) -> Option<ScalarPlan> {
    if inst.dst >= 128 {
        return None;
    }
    let simm = Scalar::Value(inst.imm as i16 as i32 as u32 as u64);
    let uimm = Scalar::Value(inst.imm as u64 & 0xFFFF);
    let d = Scalar::Sgpr(inst.dst as u8);
    let (op, src) = match inst.op {
        s_movk_i32 => (s_mov_b32, [simm, Scalar::Value(0)]),
        s_addk_i32 => (s_add_i32, [d, simm]),
        s_mulk_i32 => (s_mul_i32, [d, simm]),
        s_cmpk_eq_i32 => (s_cmp_eq_i32, [d, simm]),
        s_cmpk_lg_i32 => (s_cmp_lg_i32, [d, simm]),
        s_cmpk_gt_i32 => (s_cmp_gt_i32, [d, simm]),
        s_cmpk_ge_i32 => (s_cmp_ge_i32, [d, simm]),
        s_cmpk_lt_i32 => (s_cmp_lt_i32, [d, simm]),
        s_cmpk_le_i32 => (s_cmp_le_i32, [d, simm]),
        s_cmpk_eq_u32 => (s_cmp_eq_u32, [d, uimm]),
        s_cmpk_lg_u32 => (s_cmp_lg_u32, [d, uimm]),
        s_cmpk_gt_u32 => (s_cmp_gt_u32, [d, uimm]),
        s_cmpk_ge_u32 => (s_cmp_ge_u32, [d, uimm]),
        s_cmpk_lt_u32 => (s_cmp_lt_u32, [d, uimm]),
        s_cmpk_le_u32 => (s_cmp_le_u32, [d, uimm]),
        _ => return None,
    };
    Some(ScalarPlan {
        run: scalar_fn(op)?,
        dst: (!op.name().starts_with("s_cmp_")).then_some(inst.dst),
        src,
    })
}

/// The scalar operations with a plan: the same results and SCC as the general path.
fn scalar_fn(op: Op) -> Option<ScalarFn> {
    Some(match op {
        s_mov_b32 => |a, _, _| (a, None),
        s_not_b32 => |a, _, _| nonzero(!a),
        s_bcnt1_i32_b32 => |a, _, _| nonzero(a.count_ones()),
        s_brev_b32 => |a, _, _| (a.reverse_bits(), None),
        // The first set bit from the bottom or the top; all ones when there is none.
        s_ff1_i32_b32 => |a, _, _| (first_bit(a, a.trailing_zeros()), None),
        s_flbit_i32_b32 => |a, _, _| (first_bit(a, a.leading_zeros()), None),
        s_sext_i32_i8 => |a, _, _| (a as i8 as i32 as u32, None),
        s_sext_i32_i16 => |a, _, _| (a as i16 as i32 as u32, None),
        s_subb_u32 => |a, b, scc| {
            let r = (a as u64).wrapping_sub(b as u64).wrapping_sub(scc as u64);
            (r as u32, Some(b as u64 + scc as u64 > a as u64))
        },
        s_bitcmp0_b32 => |a, b, _| (0, Some((a >> (b & 31)) & 1 == 0)),
        s_bitcmp1_b32 => |a, b, _| (0, Some((a >> (b & 31)) & 1 == 1)),
        s_add_u32 => |a, b, _| {
            let (r, c) = a.overflowing_add(b);
            (r, Some(c))
        },
        s_sub_u32 => |a, b, _| (a.wrapping_sub(b), Some(b > a)),
        s_add_i32 => |a, b, _| {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            (r as u32, Some(o))
        },
        s_sub_i32 => |a, b, _| {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            (r as u32, Some(o))
        },
        s_addc_u32 => |a, b, scc| {
            let r = a as u64 + b as u64 + scc as u64;
            (r as u32, Some(r >> 32 != 0))
        },
        s_min_i32 => |a, b, _| {
            (
                (a as i32).min(b as i32) as u32,
                Some((a as i32) < (b as i32)),
            )
        },
        s_min_u32 => |a, b, _| (a.min(b), Some(a < b)),
        s_max_i32 => |a, b, _| {
            (
                (a as i32).max(b as i32) as u32,
                Some((a as i32) > (b as i32)),
            )
        },
        s_max_u32 => |a, b, _| (a.max(b), Some(a > b)),
        s_cselect_b32 => |a, b, scc| (if scc { a } else { b }, None),
        s_and_b32 => |a, b, _| nonzero(a & b),
        s_or_b32 => |a, b, _| nonzero(a | b),
        s_xor_b32 => |a, b, _| nonzero(a ^ b),
        s_andn2_b32 => |a, b, _| nonzero(a & !b),
        s_orn2_b32 => |a, b, _| nonzero(a | !b),
        s_bfe_u32 => |a, b, _| nonzero(bfe32(a, b, false)),
        s_bfe_i32 => |a, b, _| nonzero(bfe32(a, b, true)),
        s_lshl_b32 => |a, b, _| nonzero(a << (b & 31)),
        s_lshr_b32 => |a, b, _| nonzero(a >> (b & 31)),
        s_ashr_i32 => |a, b, _| nonzero(((a as i32) >> (b & 31)) as u32),
        s_mul_i32 => |a, b, _| (a.wrapping_mul(b), None),
        // A mask of `a` ones from bit `b`.
        s_bfm_b32 => |a, b, _| ((((1u64 << (a & 31)) - 1) as u32).wrapping_shl(b & 31), None),
        s_mul_hi_u32 => |a, b, _| (((a as u64 * b as u64) >> 32) as u32, None),
        s_lshl1_add_u32 => |a, b, _| shift_add(a, b, 1),
        s_lshl2_add_u32 => |a, b, _| shift_add(a, b, 2),
        s_lshl3_add_u32 => |a, b, _| shift_add(a, b, 3),
        s_lshl4_add_u32 => |a, b, _| shift_add(a, b, 4),
        s_cmp_eq_i32 | s_cmp_eq_u32 => |a, b, _| (0, Some(a == b)),
        s_cmp_lg_i32 | s_cmp_lg_u32 => |a, b, _| (0, Some(a != b)),
        s_cmp_gt_i32 => |a, b, _| (0, Some((a as i32) > (b as i32))),
        s_cmp_ge_i32 => |a, b, _| (0, Some((a as i32) >= (b as i32))),
        s_cmp_lt_i32 => |a, b, _| (0, Some((a as i32) < (b as i32))),
        s_cmp_le_i32 => |a, b, _| (0, Some((a as i32) <= (b as i32))),
        s_cmp_gt_u32 => |a, b, _| (0, Some(a > b)),
        s_cmp_ge_u32 => |a, b, _| (0, Some(a >= b)),
        s_cmp_lt_u32 => |a, b, _| (0, Some(a < b)),
        s_cmp_le_u32 => |a, b, _| (0, Some(a <= b)),
        _ => return None,
    })
}

/// A 64-bit scalar operation over `src` (its sources resolved; for `s_getpc_b64`, the
/// address it reads).
fn mask_plan(inst: &Inst, src: [Scalar; 2]) -> Option<MaskPlan> {
    let (run, saveexec, sets_scc): (MaskFn, bool, bool) = match inst.op {
        s_mov_b64 | s_getpc_b64 => (|a, _, _| a, false, false),
        s_not_b64 => (|a, _, _| !a, false, true),
        s_cselect_b64 => (|a, b, scc| if scc { a } else { b }, false, false),
        s_and_b64 => (|a, b, _| a & b, false, true),
        s_or_b64 => (|a, b, _| a | b, false, true),
        s_xor_b64 => (|a, b, _| a ^ b, false, true),
        s_andn2_b64 => (|a, b, _| a & !b, false, true),
        s_orn2_b64 => (|a, b, _| a | !b, false, true),
        s_and_saveexec_b64 => (|a, exec, _| a & exec, true, true),
        s_or_saveexec_b64 => (|a, exec, _| a | exec, true, true),
        s_xor_saveexec_b64 => (|a, exec, _| a ^ exec, true, true),
        s_andn2_saveexec_b64 => (|a, exec, _| a & !exec, true, true),
        // 64-bit index arithmetic (the count is the low six bits of a 32-bit source).
        s_lshl_b64 => (|a, b, _| a << (b & 63), false, true),
        s_lshr_b64 => (|a, b, _| a >> (b & 63), false, true),
        s_ashr_i64 => (|a, b, _| ((a as i64) >> (b & 63)) as u64, false, true),
        // Compares: SCC is the result.
        s_cmp_eq_u64 => (|a, b, _| (a == b) as u64, false, true),
        s_cmp_lg_u64 => (|a, b, _| (a != b) as u64, false, true),
        // Counts and searches of a lane mask into one SGPR (a search finding nothing: all ones).
        s_bcnt1_i32_b64 => (|a, _, _| a.count_ones().into(), false, true),
        s_bcnt0_i32_b64 => (|a, _, _| a.count_zeros().into(), false, true),
        s_ff1_i32_b64 => (
            |a, _, _| wide_first_bit(a, a.trailing_zeros()),
            false,
            false,
        ),
        s_flbit_i32_b64 => (|a, _, _| wide_first_bit(a, a.leading_zeros()), false, false),
        _ => return None,
    };
    let compare = matches!(inst.op, s_cmp_eq_u64 | s_cmp_lg_u64);
    let narrow = matches!(
        inst.op,
        s_bcnt1_i32_b64 | s_bcnt0_i32_b64 | s_ff1_i32_b64 | s_flbit_i32_b64
    );
    let family = if compare {
        Enc::Sopc
    } else if matches!(inst.op, s_mov_b64 | s_not_b64 | s_getpc_b64) || saveexec || narrow {
        Enc::Sop1
    } else {
        Enc::Sop2
    };
    if inst.enc != family || (!compare && inst.dst >= 127) {
        return None;
    }
    Some(MaskPlan {
        run,
        dst: (!compare).then_some(inst.dst),
        src,
        saveexec,
        sets_scc,
        narrow,
    })
}

fn nonzero(r: u32) -> (u32, Option<bool>) {
    (r, Some(r != 0))
}

/// A bit position `at` found in `a`, or all ones when `a` has no bit set.
fn first_bit(a: u32, at: u32) -> u32 {
    if a == 0 { u32::MAX } else { at }
}

fn wide_first_bit(a: u64, at: u32) -> u64 {
    u64::from(if a == 0 { u32::MAX } else { at })
}

/// `s_lshl<n>_add_u32`: the sum and its carry-out.
fn shift_add(a: u32, b: u32, n: u32) -> (u32, Option<bool>) {
    let r = ((a as u64) << n) + b as u64;
    (r as u32, Some(r >> 32 != 0))
}

fn sopp_plan(prog: &Program, i: usize) -> Option<Plan> {
    let inst = &prog.insts[i];
    match inst.op {
        s_branch | s_cbranch_scc0 | s_cbranch_scc1 | s_cbranch_vccz | s_cbranch_vccnz
        | s_cbranch_execz | s_cbranch_execnz => {
            let to = prog.address_of(i) as i64 + 4 + inst.imm as i64 * 4;
            let target = prog.index_of(to as u64)?;
            Some(Plan::Branch(BranchPlan {
                op: inst.op,
                target: u32::try_from(target).ok()?,
            }))
        }
        _ => inst_plan(inst),
    }
}

/// Source `k` of `inst` read as `ty`, as the general path reads it (`fetch` then `modify`):
/// the sign modifiers act on 32-bit float and untyped operands only. `None` for an operand
/// the general path must handle (apertures, VCCZ/EXECZ/SCC, unknown codes, f16 modifiers).
fn source(inst: &Inst, k: usize, ty: Ty) -> Option<Src> {
    let code = inst.src[k];
    if !is_known_source(code) || ty.dwords() != 1 {
        return None;
    }
    let (neg, abs) = (inst.neg >> k & 1 != 0, inst.abs >> k & 1 != 0);
    let (clear, flip) = match ty {
        Ty::F32 | Ty::B32 => (if abs { 1 << 31 } else { 0 }, if neg { 1 << 31 } else { 0 }),
        _ if !neg && !abs => (0, 0),
        Ty::F16 | Ty::P16 | Ty::F64 | Ty::B64 | Ty::PF32 => return None,
        _ => (0, 0),
    };
    let from = match code {
        c if c >= VGPR => Origin::Row((Wave::vslot(c) & 511) as u16),
        0..=127 => Origin::Sgpr(code as u8),
        128..=208 | 240..=248 | LITERAL => {
            let v = inline_const(code, ty, inst.lit)? as u32;
            return Some(Src {
                from: Origin::Value((v & !clear) ^ flip),
                clear: 0,
                flip: 0,
            });
        }
        _ => return None,
    };
    Some(Src { from, clear, flip })
}

/// The condition or carry-in mask an operation reads: VCC, or its third VOP3 source.
fn mask_source(inst: &Inst) -> Option<Mask> {
    if inst.enc != Enc::Vop3 {
        return Some(Mask::Vcc);
    }
    match inst.src[2] {
        c @ 0..=127 => Some(Mask::Pair(c as u8)),
        c @ (128..=208 | 240..=248 | LITERAL) => {
            inline_const(c, Ty::B64, inst.lit).map(Mask::Value)
        }
        _ => None,
    }
}

fn row_plan(inst: &Inst, run: RowFn) -> Option<RowPlan> {
    let op = inst.op;
    let types = op.types();
    if types.iter().any(|t| t.dwords() != 1) {
        return None;
    }
    let nsrc = (types.len() - 1).min(3);
    let mut src = [Src::plain(Origin::Value(0)); 3];
    for k in 0..nsrc {
        src[k] = source(inst, k, types[k + 1])?;
    }
    let lit = Src::plain(Origin::Value(inst.lit));
    let dst = (Wave::vslot(inst.dst) & 511) as u16;
    let cond = match op {
        v_fmamk_f32 => {
            (src[2], src[1]) = (src[1], lit);
            Mask::None
        }
        v_fmaak_f32 => {
            src[2] = lit;
            Mask::None
        }
        v_fmac_f32 => {
            src[2] = Src::plain(Origin::Row(dst));
            Mask::None
        }
        v_cndmask_b32 => mask_source(inst)?,
        _ => Mask::None,
    };
    let fma = matches!(op, v_fma_f32 | v_fmac_f32 | v_fmaak_f32 | v_fmamk_f32);
    Some(RowPlan {
        run,
        dst,
        src,
        reads: if fma { 3 } else { nsrc as u8 },
        cond,
        float: types
            .iter()
            .any(|t| matches!(t, Ty::F16 | Ty::F32 | Ty::F64 | Ty::PF32 | Ty::P16)),
        fma,
        moves: op == v_mov_b32,
    })
}

fn lane_plan(inst: &Inst) -> Option<LanePlan> {
    let op = lane_op(inst)?;
    let types = inst.op.types();
    let reads = (types.len() - 1).min(3);
    let mut src = [Src::plain(Origin::Value(0)); 3];
    for k in 0..reads {
        src[k] = source(inst, k, types[k + 1])?;
    }
    let [dst, sdst] = lane_destinations(inst, op.out);
    Some(LanePlan {
        op,
        division: division::Step::of(inst.op),
        dst,
        sdst,
        src,
        reads: reads as u8,
    })
}

/// The destination row (0 when the operation writes a mask only) and the lane mask's SGPR
/// pair of an operation writing `out`.
fn lane_destinations(inst: &Inst, out: LaneOut) -> [u16; 2] {
    match out {
        LaneOut::Mask { .. } => [0, compare_dst(inst)],
        _ => [
            (Wave::vslot(inst.dst) & 511) as u16,
            if inst.enc == Enc::Vop3 {
                inst.sdst
            } else {
                VCC
            },
        ],
    }
}

/// Runs a [`LanePlan`]; false (nothing changed) under a directed rounding mode, which the
/// general path handles for float operations.
fn run_lane_plan(w: &mut Wave, p: &LanePlan) -> bool {
    if p.op.float && w.mode & 0xF != 0 {
        return false;
    }
    let exec = w.exec();
    let vcc = if p.op.reads_vcc { w.vcc() } else { 0 };
    let s = staged(w, &p.src, p.reads);
    let env = Env::from_mode(w.mode);
    if let Some(step) = p.division {
        let mut out = [0u32; LANES];
        let rows = s.map(|k| &w.v[k]);
        if let Some(mask) = division::run(step, rows, env, vcc, exec, &mut out) {
            write_row(&mut w.v[p.dst as usize], &out, exec);
            write_lane_masks(w, p, exec, mask);
            return true;
        }
    }
    let mask = p.op.run(&mut w.v, p.dst as usize, s, env, vcc, exec);
    write_lane_masks(w, p, exec, mask);
    true
}

fn sdwa_plan(inst: &Inst) -> Option<SdwaPlan> {
    if inst.omod != 0 || inst.clamp {
        return None;
    }
    // The operation's plan without the SDWA fields (the decoder left neg/abs clear: SDWA
    // keeps them in its control word).
    let plain = Inst {
        ext: Ext::None,
        ..*inst
    };
    let mut lanes = lane_plan(&plain)?;
    if lanes.op.reads_vcc {
        return None;
    }
    let types = inst.op.types();
    let mut select = [Select::WHOLE; 2];
    for (k, s) in select.iter_mut().enumerate().take(lanes.reads as usize) {
        *s = Select::of(inst.ctrl, k, types[k + 1]);
    }
    let place = match lanes.op.out {
        LaneOut::Mask { .. } => {
            // A VOPC form's mask goes to VCC or the SGPR pair its control word names.
            lanes.sdst = inst.dst;
            None
        }
        _ => ((inst.ctrl >> 8) & 7 < 6).then_some(inst.ctrl),
    };
    Some(SdwaPlan {
        lanes,
        select,
        place,
    })
}

/// Runs an [`SdwaPlan`]; false (nothing changed) under a directed rounding mode, as
/// [`run_lane_plan`].
fn run_sdwa(w: &mut Wave, p: &SdwaPlan) -> bool {
    let lanes = &p.lanes;
    if lanes.op.float && w.mode & 0xF != 0 {
        return false;
    }
    let exec = w.exec();
    let mut s = [STAGE, STAGE + 1, STAGE + 2];
    for k in 0..usize::from(lanes.reads) {
        let from = slot(w, k, &lanes.src[k]);
        let sel = p.select.get(k).copied().unwrap_or(Select::WHOLE);
        for l in 0..LANES {
            w.v[STAGE + k][l] = sel.apply(w.v[from][l]);
        }
        s[k] = STAGE + k;
    }
    let env = Env::from_mode(w.mode);
    let (dst, result) = (lanes.dst as usize, STAGE + 3);
    let mask = match p.place {
        None => lanes.op.run(&mut w.v, dst, s, env, 0, exec),
        Some(ctrl) => {
            let mask = lanes.op.run(&mut w.v, result, s, env, 0, exec);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (r, old) = (w.v[result][l], w.v[dst][l]);
                w.v[dst][l] = sdwa_write(r.into(), old.into(), ctrl) as u32;
            }
            mask
        }
    };
    write_lane_masks(w, lanes, exec, mask);
    true
}

/// Counts a lane plan's lanes and writes the lane mask it produced (`mask`, under `exec`).
fn write_lane_masks(w: &mut Wave, p: &LanePlan, exec: u64, mask: u64) {
    write_mask_out(w, p.op.out, p.sdst, exec, mask);
}

/// Counts the lanes of an operation writing `out` and writes the lane mask it produced
/// (`mask`, under `exec`) to `sdst`.
fn write_mask_out(w: &mut Wave, out: LaneOut, sdst: u16, exec: u64, mask: u64) {
    w.lane_insts += exec.count_ones() as u64;
    match out {
        LaneOut::Row => {}
        LaneOut::RowAndMask => {
            // The lanes outside EXEC keep their bits, as the general path leaves them.
            let keep = w.sgpr64(sdst) & !exec;
            w.set_sgpr64(sdst, keep | mask);
        }
        LaneOut::Mask { exec: cmpx } => {
            // The lanes outside EXEC read 0.
            w.set_sgpr64(sdst, mask);
            if cmpx {
                w.set_exec(mask);
            }
        }
    }
}

fn mul_add_plan(inst: &Inst) -> Option<MulAddPlan> {
    let signed = match inst.op {
        v_mad_u64_u32 => false,
        v_mad_i64_i32 => true,
        _ => return None,
    };
    let dst = Wave::vslot(inst.dst);
    if inst.enc != Enc::Vop3 || inst.neg != 0 || inst.abs != 0 || dst >= 511 || inst.sdst >= 127 {
        return None;
    }
    let add = match inst.src[2] {
        c if c >= VGPR => Wide::Pair((Wave::vslot(c) & 511) as u16),
        c if c < 128 && is_known_source(c) => Wide::SPair(c as u8),
        c @ (128..=208 | 240..=248 | LITERAL) => {
            Wide::Value(inline_const(c, inst.op.types()[3], inst.lit)?)
        }
        _ => return None,
    };
    Some(MulAddPlan {
        signed,
        dst: dst as u16,
        sdst: inst.sdst,
        src: [source(inst, 0, Ty::B32)?, source(inst, 1, Ty::B32)?],
        add,
    })
}

fn compare_plan(inst: &Inst, run: CompareFn) -> Option<ComparePlan> {
    let types = inst.op.types();
    Some(ComparePlan {
        run,
        relation: Relation::of(inst.op)?,
        src: [source(inst, 0, types[1])?, source(inst, 1, types[2])?],
        dst: compare_dst(inst),
        exec: writes_exec(inst.op),
    })
}

/// Where a compare writes its lane mask: VCC, or the VOP3 form's SGPR pair.
fn compare_dst(inst: &Inst) -> u16 {
    if inst.enc == Enc::Vop3 { inst.dst } else { VCC }
}

/// Whether a compare also writes EXEC (`v_cmpx`).
fn writes_exec(op: Op) -> bool {
    op.name().starts_with("v_cmpx")
}

fn first_lane_plan(inst: &Inst) -> Option<FirstLanePlan> {
    if inst.src[0] < VGPR || inst.dst >= 128 || inst.neg | inst.abs != 0 {
        return None;
    }
    Some(FirstLanePlan {
        src: (Wave::vslot(inst.src[0]) & 511) as u16,
        dst: inst.dst,
    })
}

/// A 64-bit integer compare.
fn is_wide_compare(op: Op) -> bool {
    Relation::of(op).is_some() && op.types()[1].dwords() == 2
}

fn wide_compare_plan(inst: &Inst) -> Option<WideComparePlan> {
    // Integer sources carry no sign modifiers the plan would honour: the general path then.
    if !is_wide_compare(inst.op) || inst.neg != 0 || inst.abs != 0 {
        return None;
    }
    Some(WideComparePlan {
        relation: Relation::of(inst.op)?,
        src: [wide_source(inst, 0)?, wide_source(inst, 1)?],
        dst: compare_dst(inst),
        exec: writes_exec(inst.op),
    })
}

fn carry_plan(inst: &Inst) -> Option<CarryPlan> {
    let op = inst.op;
    let carry_in = matches!(op, v_addc_co_u32 | v_subb_co_u32 | v_subbrev_co_u32);
    let mut src = [source(inst, 0, Ty::B32)?, source(inst, 1, Ty::B32)?];
    if matches!(op, v_subrev_co_u32 | v_subbrev_co_u32) {
        src.swap(0, 1);
    }
    Some(CarryPlan {
        dst: (Wave::vslot(inst.dst) & 511) as u16,
        sdst: if inst.enc == Enc::Vop3 {
            inst.sdst
        } else {
            VCC
        },
        src,
        cond: if carry_in {
            mask_source(inst)?
        } else {
            Mask::None
        },
        subtract: !matches!(op, v_add_co_u32 | v_addc_co_u32),
    })
}

fn wide_plan(inst: &Inst) -> Option<WidePlan> {
    let op = inst.op;
    if !matches!(
        op,
        v_lshl_add_u64 | v_lshlrev_b64 | v_lshrrev_b64 | v_ashrrev_i64 | v_mov_b64
    ) || inst.neg != 0
        || inst.abs != 0
    {
        return None;
    }
    let types = op.types();
    let dst = Wave::vslot(inst.dst);
    if dst >= 511 {
        return None;
    }
    let mut src = [Wide::Value(0); 3];
    for k in 0..types.len() - 1 {
        src[k] = wide_source(inst, k)?;
    }
    // Operands as `(base << shift) + add` (or `base >> shift`), ordered once here.
    let parts = match op {
        v_lshl_add_u64 => src,
        v_lshlrev_b64 | v_lshrrev_b64 | v_ashrrev_i64 => [src[1], src[0], Wide::Value(0)],
        _ => [src[0], Wide::Value(0), Wide::Value(0)],
    };
    Some(WidePlan {
        right: matches!(op, v_lshrrev_b64 | v_ashrrev_i64),
        arith: op == v_ashrrev_i64,
        dst: dst as u16,
        parts,
    })
}

/// Source `k` of a VALU operation with 64-bit operands, resolved as its type reads it.
fn wide_source(inst: &Inst, k: usize) -> Option<Wide> {
    let (code, ty) = (inst.src[k], inst.op.types()[k + 1]);
    if !is_known_source(code) {
        return None;
    }
    let two = ty.dwords() == 2;
    Some(match code {
        c if c >= VGPR && two => Wide::Pair((Wave::vslot(c) & 511) as u16),
        c if c >= VGPR => Wide::Row((Wave::vslot(c) & 511) as u16),
        0..=127 if two => Wide::SPair(code as u8),
        0..=127 => Wide::Sgpr(code as u8),
        128..=208 | 240..=248 | LITERAL => {
            let v = inline_const(code, ty, inst.lit)?;
            Wide::Value(if two { v } else { v as u32 as u64 })
        }
        _ => return None,
    })
}

/// The row operations: the same results as the operations' lane functions.
fn row_fn(op: Op) -> Option<RowFn> {
    Some(match op {
        v_mov_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| a),
        v_add_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a.wrapping_add(b)),
        v_sub_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a.wrapping_sub(b)),
        v_subrev_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| b.wrapping_sub(a)),
        v_and_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a & b),
        v_or_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a | b),
        v_xor_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a ^ b),
        v_lshlrev_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| b << (a & 31)),
        v_lshrrev_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| b >> (a & 31)),
        v_ashrrev_i32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| ((b as i32) >> (a & 31)) as u32)
        }
        v_mul_lo_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a.wrapping_mul(b)),
        v_mul_hi_u32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                ((a as u64 * b as u64) >> 32) as u32
            })
        },
        v_mul_hi_i32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                ((a as i32 as i64 * b as i32 as i64) >> 32) as u32
            })
        },
        // Integer conversions: no result is a denormal, and a denormal source converts to 0
        // whether it is flushed or not.
        v_cvt_f32_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| (a as f32).to_bits()),
        v_cvt_f32_i32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| (a as i32 as f32).to_bits())
        }
        v_cvt_u32_f32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| f32::from_bits(a) as u32)
        }
        v_cvt_i32_f32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| f32::from_bits(a) as i32 as u32)
        }
        // The general path's reciprocal is the host's division, NaNs included.
        v_rcp_f32 | v_rcp_iflag_f32 => |v, d, s, e, _, x| {
            let rcp = |a: f32| 1.0 / a;
            f32_row(
                v,
                d,
                s,
                e,
                x,
                |a, _, _| rcp(a),
                |a, _, _| rcp(f32::from_bits(a)).to_bits(),
            )
        },
        v_mul_u32_u24 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)
            })
        },
        v_add3_u32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a.wrapping_add(b).wrapping_add(c))
        }
        v_lshl_add_u32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| (a << (b & 31)).wrapping_add(c))
        }
        v_lshl_or_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| (a << (b & 31)) | c),
        v_max_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a.max(b)),
        v_min_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| a.min(b)),
        v_max_i32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| (a as i32).max(b as i32) as u32)
        }
        v_min_i32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| (a as i32).min(b as i32) as u32)
        }
        v_not_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| !a),
        v_bfrev_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| a.reverse_bits()),
        v_ffbh_u32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, _, _| {
                if a == 0 { u32::MAX } else { a.leading_zeros() }
            })
        },
        v_ffbl_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, _, _| {
                if a == 0 { u32::MAX } else { a.trailing_zeros() }
            })
        },
        v_ffbh_i32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, _, _| ffbh_i32(a)),
        v_xnor_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| !(a ^ b)),
        // The bits of the mask below the lane's own, counted, plus the second source.
        v_mbcnt_lo_u32_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |l, a, b, _| {
                let below = (1u64 << l).wrapping_sub(1) as u32;
                (a & below).count_ones().wrapping_add(b)
            })
        },
        v_mbcnt_hi_u32_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |l, a, b, _| {
                let below = ((1u64 << l).wrapping_sub(1) >> 32) as u32;
                (a & below).count_ones().wrapping_add(b)
            })
        },
        v_bfm_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                (((1u64 << (a & 31)) - 1) as u32) << (b & 31)
            })
        },
        v_mul_i32_i24 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, _| (sext24(a) * sext24(b)) as u32)
        }
        v_mul_hi_i32_i24 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                ((sext24(a) * sext24(b)) >> 32) as u32
            })
        },
        v_mul_hi_u32_u24 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, _| {
                (((a & 0xFF_FFFF) as u64 * (b & 0xFF_FFFF) as u64) >> 32) as u32
            })
        },
        v_mad_i32_i24 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                (sext24(a) * sext24(b) + c as i32 as i64) as u32
            })
        },
        v_mad_u32_u24 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c)
            })
        },
        v_bfi_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| (a & b) | (!a & c)),
        v_alignbit_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32
            })
        },
        v_alignbyte_b32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                ((((a as u64) << 32) | b as u64) >> (8 * (c & 3))) as u32
            })
        },
        v_min3_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a.min(b).min(c)),
        v_max3_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a.max(b).max(c)),
        v_med3_u32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a.max(b).min(a.min(b).max(c)))
        }
        v_min3_i32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                (a as i32).min(b as i32).min(c as i32) as u32
            })
        },
        v_max3_i32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                (a as i32).max(b as i32).max(c as i32) as u32
            })
        },
        v_med3_i32 => |v, d, s, _, _, x| {
            lanes(v, d, s, x, |_, a, b, c| {
                let (a, b, c) = (a as i32, b as i32, c as i32);
                a.max(b).min(a.min(b).max(c)) as u32
            })
        },
        v_perm_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| perm(a, b, c)),
        v_xad_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| (a ^ b).wrapping_add(c)),
        v_add_lshl_u32 => {
            |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a.wrapping_add(b) << (c & 31))
        }
        v_and_or_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| (a & b) | c),
        v_or3_b32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| a | b | c),
        v_bfe_u32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| bfe(a, b, c, false)),
        v_bfe_i32 => |v, d, s, _, _, x| lanes(v, d, s, x, |_, a, b, c| bfe(a, b, c, true)),
        v_cndmask_b32 => |v, d, s, _, m, x| {
            let m = lane_mask(m);
            lanes(v, d, s, x, |l, a, b, _| (b & m[l]) | (a & !m[l]))
        },
        v_add_f32 => |v, d, s, e, _, x| binary_f32(v, d, s, e, x, |a, b| a + b),
        v_sub_f32 => |v, d, s, e, _, x| binary_f32(v, d, s, e, x, |a, b| a - b),
        v_mul_f32 => |v, d, s, e, _, x| binary_f32(v, d, s, e, x, |a, b| a * b),
        v_subrev_f32 => |v, d, s, e, _, x| binary_f32(v, d, s, e, x, |a, b| b - a),
        v_floor_f32 => |v, d, s, e, _, x| unary_f32(v, d, s, e, x, f32::floor),
        v_ceil_f32 => |v, d, s, e, _, x| unary_f32(v, d, s, e, x, f32::ceil),
        v_trunc_f32 => |v, d, s, e, _, x| unary_f32(v, d, s, e, x, f32::trunc),
        v_rndne_f32 => |v, d, s, e, _, x| unary_f32(v, d, s, e, x, f32::round_ties_even),
        v_sqrt_f32 => |v, d, s, e, _, x| unary_f32(v, d, s, e, x, f32::sqrt),
        // 1/sqrt in f64, rounded once (the general path's).
        v_rsq_f32 => {
            |v, d, s, e, _, x| unary_f32(v, d, s, e, x, |a| (1.0 / (a as f64).sqrt()) as f32)
        }
        v_fma_f32 | v_fmac_f32 | v_fmaak_f32 | v_fmamk_f32 => fma_row,
        v_min_f32 => |v, d, s, e, _, x| {
            let ieee = e.ieee;
            let exact = move |a, b, _| float::min32_in(ieee, f32b(a), f32b(b)).to_bits();
            f32_row(v, d, s, e, x, |a, b, _| ordered(a, b, false), exact)
        },
        v_max_f32 => |v, d, s, e, _, x| {
            let ieee = e.ieee;
            let exact = move |a, b, _| float::max32_in(ieee, f32b(a), f32b(b)).to_bits();
            f32_row(v, d, s, e, x, |a, b, _| ordered(a, b, true), exact)
        },
        v_min3_f32 => |v, d, s, e, _, x| {
            let ieee = e.ieee;
            let exact = move |a, b, c| float::min3_32(ieee, f32b(a), f32b(b), f32b(c)).to_bits();
            let fast = |a, b, c| ordered(ordered(a, b, false), c, false);
            f32_row(v, d, s, e, x, fast, exact)
        },
        v_max3_f32 => |v, d, s, e, _, x| {
            let ieee = e.ieee;
            let exact = move |a, b, c| float::max3_32(ieee, f32b(a), f32b(b), f32b(c)).to_bits();
            let fast = |a, b, c| ordered(ordered(a, b, true), c, true);
            f32_row(v, d, s, e, x, fast, exact)
        },
        v_med3_f32 => |v, d, s, e, _, x| {
            let ieee = e.ieee;
            let exact = move |a, b, c| float::med3_32(ieee, f32b(a), f32b(b), f32b(c)).to_bits();
            let fast = |a, b, c| {
                let low = ordered(ordered(a, b, true), c, false);
                ordered(ordered(a, b, false), low, true)
            };
            f32_row(v, d, s, e, x, fast, exact)
        },
        _ => return None,
    })
}

fn f32b(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The minimum (or maximum) of two f32 values when neither is a NaN, -0 below +0, written as
/// selects so that row loops vectorise; a NaN when either is one (the row's exact function
/// then decides, [`f32_lanes`]).
#[inline(always)]
fn ordered(a: f32, b: f32, max: bool) -> f32 {
    let (x, y) = (a.to_bits(), b.to_bits());
    let pick = if (a < b) != max { x } else { y };
    let tie = if max { x & y } else { x | y };
    let r = f32::from_bits(if a == b { tie } else { pick });
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        r
    }
}

/// Lanes of the destination row `d` in EXEC from `f(lane, a, b, c)` over the source rows:
/// every lane computed (the operations are pure), then written as a blend, so that the loops
/// vectorise and a source may be the destination.
#[inline(always)]
fn lanes(
    v: &mut [VReg],
    d: usize,
    s: [usize; 3],
    exec: u64,
    f: impl Fn(usize, u32, u32, u32) -> u32,
) {
    let mut r = [0u32; LANES];
    let (a, b, c) = (&v[s[0]], &v[s[1]], &v[s[2]]);
    for l in 0..LANES {
        r[l] = f(l, a[l], b[l], c[l]);
    }
    write_row(&mut v[d], &r, exec);
}

/// Whether f32 bits are a NaN.
#[inline(always)]
fn is_nan32(x: u32) -> bool {
    x & 0x7FFF_FFFF > 0x7F80_0000
}

/// f32 lanes of `op` over the (denormal-flushed, unless `KEEP_IN`) sources: the host result
/// where no lane is a NaN, else every lane again through `exact`, the operation with its NaN
/// rule (the host's NaN choice is never used). Results flushed unless `KEEP_OUT`.
#[inline(always)]
fn f32_lanes<const KEEP_IN: bool, const KEEP_OUT: bool>(
    v: &mut [VReg],
    d: usize,
    s: [usize; 3],
    exec: u64,
    op: impl Fn(f32, f32, f32) -> f32,
    exact: impl Fn(u32, u32, u32) -> u32,
) {
    let input = |x: u32| if KEEP_IN { x } else { flush32_bits(x) };
    let mut r = [0u32; LANES];
    let (a, b, c) = (&v[s[0]], &v[s[1]], &v[s[2]]);
    let mut nan = false;
    for l in 0..LANES {
        let x = op(
            f32::from_bits(input(a[l])),
            f32::from_bits(input(b[l])),
            f32::from_bits(input(c[l])),
        )
        .to_bits();
        nan |= is_nan32(x);
        r[l] = x;
    }
    if nan {
        for l in 0..LANES {
            r[l] = exact(input(a[l]), input(b[l]), input(c[l]));
        }
    }
    if !KEEP_OUT {
        for x in r.iter_mut() {
            *x = flush32_bits(*x);
        }
    }
    write_row(&mut v[d], &r, exec);
}

/// [`f32_lanes`] for the MODE's denormal controls.
#[inline(always)]
fn f32_row(
    v: &mut [VReg],
    d: usize,
    s: [usize; 3],
    e: &Env,
    exec: u64,
    op: impl Fn(f32, f32, f32) -> f32,
    exact: impl Fn(u32, u32, u32) -> u32,
) {
    match (e.keep_in32, e.keep_out32) {
        (true, true) => f32_lanes::<true, true>(v, d, s, exec, op, exact),
        (true, false) => f32_lanes::<true, false>(v, d, s, exec, op, exact),
        (false, true) => f32_lanes::<false, true>(v, d, s, exec, op, exact),
        (false, false) => f32_lanes::<false, false>(v, d, s, exec, op, exact),
    }
}

/// A two-operand f32 operation under the denormal mode and [`float::nan_rule32`].
#[inline(always)]
fn binary_f32(
    v: &mut [VReg],
    d: usize,
    s: [usize; 3],
    e: &Env,
    exec: u64,
    op: impl Fn(f32, f32) -> f32 + Copy,
) {
    let exact = |a: u32, b: u32, _| {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        float::nan_rule32(op(x, y), x, y).to_bits()
    };
    f32_row(v, d, s, e, exec, |x, y, _| op(x, y), exact);
}

/// A one-source f32 operation under the denormal mode and the one-source NaN rule (a NaN
/// source quieted). The rounding operations it runs vectorise only where the host rounds
/// vectors (SSE4.1, here with AVX2), and the f64 steps of `v_rsq_f32` four times wider with
/// AVX, hence the loop compiled for AVX2 there.
fn unary_f32(
    v: &mut [VReg],
    d: usize,
    s: [usize; 3],
    e: &Env,
    exec: u64,
    op: impl Fn(f32) -> f32 + Copy,
) {
    let exact = |a: u32, _, _| {
        let r = op(f32::from_bits(a)).to_bits();
        float::F32_NAN.rule(r.into(), &[a.into()]) as u32
    };
    let mut row = move || f32_row(v, d, s, e, exec, move |x, _, _| op(x), exact);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        unsafe { compiled_for_avx2(row) };
        return;
    }
    row();
}

/// `f()` with AVX2 enabled for the code inlined into it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn compiled_for_avx2(f: impl FnOnce()) {
    f()
}

/// `f()` with AVX2 and FMA enabled for the code inlined into it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn compiled_for_fma(f: impl FnOnce()) {
    f()
}

/// f32 fused multiply-add rows, with the host's FMA instruction when it has one.
fn fma_row(v: &mut [VReg], d: usize, s: [usize; 3], e: &Env, _: u64, exec: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement
            // of the target-feature function.
            unsafe { fma_row_x86(v, d, s, e, exec) };
            return;
        }
    }
    fma_row_generic(v, d, s, e, exec);
}

#[inline(always)]
fn fma_row_generic(v: &mut [VReg], d: usize, s: [usize; 3], e: &Env, exec: u64) {
    f32_row(
        v,
        d,
        s,
        e,
        exec,
        |a, b, c| a.mul_add(b, c),
        float::fma32_bits,
    );
}

/// An f32 fused multiply-add of every lane with AVX2 and FMA, straight into the destination
/// row: EXEC full, denormals kept (MODE), no sign modifier on a row source. Every result is
/// computed before the first is written, so a source may be the destination. False (nothing
/// done) when a result is a NaN (whose payload the host would choose) or the form differs.
/// (Its own source form rather than [`SrcLanes`]: the modifier-applying loads measured 35%
/// slower on the FMA benchmark.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_in_place(w: &mut Wave, p: &RowPlan) -> bool {
    use std::arch::x86_64::*;
    // Every row is reached through this one pointer while the operation runs.
    let rows = w.v.as_mut_ptr() as *mut u32;
    #[derive(Clone, Copy)]
    enum Lanes {
        Row(*const u32),
        Same(u32),
    }
    let mut src = [Lanes::Same(0); 3];
    for (k, s) in p.src.iter().enumerate() {
        src[k] = match s.from {
            // SAFETY: a slot below 512 is a row of the register file.
            Origin::Row(slot) if s.clear | s.flip == 0 => {
                Lanes::Row(unsafe { rows.add(LANES * (slot as usize & 511)) })
            }
            Origin::Row(_) => return false,
            Origin::Sgpr(c) => Lanes::Same((w.s[c as usize] & !s.clear) ^ s.flip),
            Origin::Value(x) => Lanes::Same(x),
        };
    }
    // SAFETY: every row pointer is a 64-lane row of the register file; lanes `8c..8c + 8`
    // are inside; the loads and stores are unaligned ones.
    unsafe {
        let load = |l: Lanes, c: usize| match l {
            Lanes::Row(r) => _mm256_castsi256_ps(row8(r, c)),
            Lanes::Same(x) => _mm256_castsi256_ps(_mm256_set1_epi32(x as i32)),
        };
        let mut r = [_mm256_setzero_ps(); LANES / 8];
        let mut nan = _mm256_setzero_ps();
        for (c, r) in r.iter_mut().enumerate() {
            *r = _mm256_fmadd_ps(load(src[0], c), load(src[1], c), load(src[2], c));
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(*r, *r));
        }
        if _mm256_movemask_ps(nan) != 0 {
            return false;
        }
        let d = rows.add(LANES * p.dst as usize);
        for (c, r) in r.iter().enumerate() {
            _mm256_storeu_si256(d.add(8 * c) as *mut __m256i, _mm256_castps_si256(*r));
        }
    }
    w.lane_insts += LANES as u64;
    true
}

/// A 32-bit source as the AVX2 plans read it: a row with its sign modifiers (the bits cleared,
/// then flipped), or one value for every lane.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum SrcLanes {
    Row(*const u32, u32, u32),
    Same(u32),
}

#[cfg(target_arch = "x86_64")]
impl SrcLanes {
    /// Source `src` of wave `w`.
    fn of(w: &Wave, src: &Src) -> SrcLanes {
        match src.from {
            Origin::Row(slot) => {
                SrcLanes::Row(w.v[slot as usize & 511].as_ptr(), src.clear, src.flip)
            }
            Origin::Sgpr(c) => SrcLanes::Same((w.s[c as usize] & !src.clear) ^ src.flip),
            Origin::Value(x) => SrcLanes::Same(x),
        }
    }

    /// Lanes `8c..8c + 8`.
    ///
    /// # Safety
    ///
    /// A row is still a 64-lane row of the register file, not written since [`SrcLanes::of`];
    /// `c` < 8.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn eight(self, c: usize) -> std::arch::x86_64::__m256i {
        use std::arch::x86_64::*;
        match self {
            // SAFETY: passed on from the caller.
            SrcLanes::Row(row, clear, flip) => _mm256_xor_si256(
                _mm256_andnot_si256(_mm256_set1_epi32(clear as i32), unsafe { row8(row, c) }),
                _mm256_set1_epi32(flip as i32),
            ),
            SrcLanes::Same(v) => _mm256_set1_epi32(v as i32),
        }
    }

    /// Every lane, as eight vectors of eight (one choice of the source's kind for all).
    ///
    /// # Safety
    ///
    /// As [`SrcLanes::eight`].
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn all(self) -> [std::arch::x86_64::__m256i; LANES / 8] {
        use std::arch::x86_64::*;
        match self {
            SrcLanes::Row(row, clear, flip) => {
                let (clear, flip) = (
                    _mm256_set1_epi32(clear as i32),
                    _mm256_set1_epi32(flip as i32),
                );
                // SAFETY: passed on from the caller; `c` < 8.
                std::array::from_fn(|c| {
                    _mm256_xor_si256(_mm256_andnot_si256(clear, unsafe { row8(row, c) }), flip)
                })
            }
            SrcLanes::Same(v) => [_mm256_set1_epi32(v as i32); LANES / 8],
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_row_x86(v: &mut [VReg], d: usize, s: [usize; 3], e: &Env, exec: u64) {
    fma_row_generic(v, d, s, e, exec)
}

fn compare_fn(op: Op) -> Option<CompareFn> {
    /// The compare of every lane as one byte each (a loop that vectorises), then the mask.
    #[inline(always)]
    fn each(a: &VReg, b: &VReg, f: impl Fn(u32, u32) -> bool) -> u64 {
        let mut bits = [0u8; LANES];
        for l in 0..LANES {
            bits[l] = f(a[l], b[l]) as u8;
        }
        lane_mask_of_bytes(&bits)
    }
    Some(match op {
        v_cmp_eq_u32 | v_cmp_eq_i32 | v_cmpx_eq_u32 | v_cmpx_eq_i32 => {
            |a, b| each(a, b, |x, y| x == y)
        }
        v_cmp_ne_u32 | v_cmp_ne_i32 | v_cmpx_ne_u32 | v_cmpx_ne_i32 => {
            |a, b| each(a, b, |x, y| x != y)
        }
        v_cmp_gt_u32 | v_cmpx_gt_u32 => |a, b| each(a, b, |x, y| x > y),
        v_cmp_lt_u32 | v_cmpx_lt_u32 => |a, b| each(a, b, |x, y| x < y),
        v_cmp_ge_u32 | v_cmpx_ge_u32 => |a, b| each(a, b, |x, y| x >= y),
        v_cmp_le_u32 | v_cmpx_le_u32 => |a, b| each(a, b, |x, y| x <= y),
        v_cmp_gt_i32 | v_cmpx_gt_i32 => |a, b| each(a, b, |x, y| (x as i32) > (y as i32)),
        v_cmp_lt_i32 | v_cmpx_lt_i32 => |a, b| each(a, b, |x, y| (x as i32) < (y as i32)),
        v_cmp_ge_i32 | v_cmpx_ge_i32 => |a, b| each(a, b, |x, y| (x as i32) >= (y as i32)),
        v_cmp_le_i32 | v_cmpx_le_i32 => |a, b| each(a, b, |x, y| (x as i32) <= (y as i32)),
        _ => return None,
    })
}

/// Each eight bytes of 0 or 1 (one per lane) gathered into a mask byte by one multiply.
#[inline(always)]
fn lane_mask_of_bytes(bits: &[u8; LANES]) -> u64 {
    let mut m = 0u64;
    for (k, chunk) in bits.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        m |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    m
}

/// Run `plan` for the wave's instruction of counter class `class`: what the wave does next,
/// or `None` when the general path must run it (nothing has changed then). A plan never
/// faults. Issue counting and the cycle count are the caller's.
#[inline(always)]
pub(crate) fn run(w: &mut Wave, ctx: &mut Ctx<'_>, plan: &Plan, class: u8) -> Option<Flow> {
    match plan {
        Plan::General => return None,
        Plan::Next => {}
        Plan::End => return Some(Flow::End),
        Plan::Rows(p) => {
            if p.float && w.mode & 0xF != 0 {
                return None;
            }
            run_rows(w, p);
        }
        Plan::Packed(p) => {
            if !run_packed(w, p) {
                return None;
            }
        }
        Plan::Double(p) => {
            if !run_double(w, p) {
                return None;
            }
        }
        Plan::MulAdd(p) => run_mul_add(w, p),
        Plan::PackedHalf(p) => {
            if !run_half(w, p) {
                return None;
            }
        }
        Plan::Compare(p) => run_compare(w, p),
        Plan::WideCompare(p) => run_wide_compare(w, p),
        Plan::FloatCompare(p) => run_float_compare(w, p),
        Plan::FirstLane(p) => {
            // The first EXEC lane, or lane 0 when none is.
            let lane = (w.exec().trailing_zeros() as usize) & (LANES - 1);
            w.set_sgpr(p.dst, w.v[p.src as usize][lane]);
        }
        Plan::Carry(p) => run_carry(w, p),
        Plan::Wide(p) => run_wide(w, p),
        Plan::Branch(p) => return Some(run_branch(w, p)),
        Plan::ScalarLoad(p) => {
            if !scalar_load(w, ctx, p) {
                return None;
            }
        }
        Plan::Scalar(p) => run_scalar(w, p),
        Plan::Mask(p) => run_mask(w, p),
        Plan::Lanes(p) => {
            if !run_lane_plan(w, p) {
                return None;
            }
        }
        Plan::Sdwa(p) => {
            if !run_sdwa(w, p) {
                return None;
            }
        }
        Plan::Mix(p) => {
            if !run_mix(w, p) {
                return None;
            }
        }
        Plan::WideLanes(p) => {
            if !run_wide_lane_plan(w, p) {
                return None;
            }
        }
        Plan::Global(p) => {
            // Nothing changes when the access does not fit (the general path then runs it).
            if !global_access(w, ctx, p) {
                return None;
            }
            if ctx.counting {
                ctx.counts.request(class, w.exec());
            }
        }
        Plan::GlobalAtomic(p) => {
            if !global_atomic(w, ctx, p) {
                return None;
            }
            if ctx.counting {
                ctx.counts.request(class, w.exec());
            }
        }
        Plan::Lds(p) => {
            let exec = w.exec();
            if ctx.counting {
                ctx.counts.request(class, exec);
            }
            plain_ds(w, ctx, p, exec);
        }
        Plan::LdsAtomic(p) => {
            let exec = w.exec();
            if ctx.counting {
                ctx.counts.request(class, exec);
            }
            lds_atomic(w, ctx, p, exec);
        }
        Plan::CrossLane(p) => {
            let exec = w.exec();
            if ctx.counting {
                ctx.counts.request(class, exec);
            }
            cross_lane(w, p, exec);
        }
    }
    Some(Flow::Next)
}

fn run_scalar(w: &mut Wave, p: &ScalarPlan) {
    let (r, scc) = (p.run)(p.src[0].read32(w), p.src[1].read32(w), w.scc);
    if let Some(d) = p.dst {
        w.set_sgpr(d, r);
    }
    if let Some(scc) = scc {
        w.scc = scc;
    }
}

fn run_mask(w: &mut Wave, p: &MaskPlan) {
    let a = p.src[0].read64(w);
    if p.saveexec {
        let exec = w.exec();
        let e = (p.run)(a, exec, w.scc);
        if let Some(d) = p.dst {
            w.set_sgpr64(d, exec);
        }
        w.set_exec(e);
        w.scc = e != 0;
        return;
    }
    let r = (p.run)(a, p.src[1].read64(w), w.scc);
    match p.dst {
        Some(d) if p.narrow => w.set_sgpr(d, r as u32),
        Some(d) => w.set_sgpr64(d, r),
        None => {}
    }
    if p.sets_scc {
        w.scc = r != 0;
    }
}

/// The row slots of the first `reads` sources ([`slot`]); a source the operation does not
/// read names its staging row, left as it is.
fn staged(w: &mut Wave, src: &[Src; 3], reads: u8) -> [usize; 3] {
    [0, 1, 2].map(|k| {
        if k < usize::from(reads) {
            slot(w, k, &src[k])
        } else {
            STAGE + k
        }
    })
}

/// The row slot of source `k`: a VGPR row in place, staging row `k` filled with the
/// sign-modified copy, or splat row `k` holding the scalar or constant value.
#[inline(always)]
fn slot(w: &mut Wave, k: usize, src: &Src) -> usize {
    match src.from {
        Origin::Row(slot) if src.clear | src.flip == 0 => slot as usize,
        Origin::Row(slot) => {
            let stage = STAGE + k;
            for l in 0..LANES {
                w.v[stage][l] = (w.v[slot as usize][l] & !src.clear) ^ src.flip;
            }
            stage
        }
        Origin::Sgpr(c) => w.splat(k, (w.s[c as usize] & !src.clear) ^ src.flip),
        Origin::Value(x) => w.splat(k, x),
    }
}

fn mask_value(w: &Wave, m: Mask) -> u64 {
    match m {
        Mask::None => 0,
        Mask::Vcc => w.vcc(),
        Mask::Pair(c) => w.sgpr64(c as u16),
        Mask::Value(v) => v,
    }
}

/// Writes a 64-bit result, its low and high rows, to the VGPR pair from slot `d` in the EXEC
/// lanes, and counts the lanes.
fn write_pair(w: &mut Wave, d: usize, [lo, hi]: &[VReg; 2]) {
    let exec = w.exec();
    write_row(&mut w.v[d], lo, exec);
    write_row(&mut w.v[d + 1], hi, exec);
    w.lane_insts += exec.count_ones() as u64;
}

/// Writes a carry-out mask to the SGPR pair `sdst` in the EXEC lanes' bits, the others kept.
fn write_carry(w: &mut Wave, sdst: u16, carry: u64) {
    let exec = w.exec();
    let keep = w.sgpr64(sdst) & !exec;
    w.set_sgpr64(sdst, keep | (carry & exec));
}

/// Write `r` into `dst` in the lanes of `exec`: a copy when every lane is on, else a blend
/// (it vectorises).
#[inline(always)]
fn write_row(dst: &mut VReg, r: &VReg, exec: u64) {
    if exec == u64::MAX {
        copy_row(dst, r);
        return;
    }
    let m = lane_mask(exec);
    for l in 0..LANES {
        dst[l] = (r[l] & m[l]) | (dst[l] & !m[l]);
    }
}

/// A row copy as sixteen 16-byte moves (SSE2, in every x86-64); the compiler may still merge
/// them into one copy call where it sees fit.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn copy_row(dst: &mut VReg, r: &VReg) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
    for k in 0..LANES / 4 {
        // SAFETY: lanes 4k..4k+4 lie inside both 64-lane rows; the moves are unaligned ones.
        unsafe {
            let x = _mm_loadu_si128(r.as_ptr().add(4 * k) as *const __m128i);
            _mm_storeu_si128(dst.as_mut_ptr().add(4 * k) as *mut __m128i, x);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn copy_row(dst: &mut VReg, r: &VReg) {
    *dst = *r;
}

fn run_rows(w: &mut Wave, p: &RowPlan) {
    let exec = w.exec();
    #[cfg(target_arch = "x86_64")]
    if p.fma
        && exec == u64::MAX
        && w.mode & 0x30 == 0x30
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement of
        // the target-feature function.
        && unsafe { fma_in_place(w, p) }
    {
        return;
    }
    if p.moves
        && let Some(x) = p.src[0].uniform(w)
    {
        write_row(&mut w.v[p.dst as usize], &[x; LANES], exec);
        w.lane_insts += exec.count_ones() as u64;
        return;
    }
    let env = Env::from_mode(w.mode);
    let cond = mask_value(w, p.cond);
    let s = staged(w, &p.src, p.reads);
    (p.run)(&mut w.v, p.dst as usize, s, &env, cond, exec);
    w.lane_insts += exec.count_ones() as u64;
}

fn run_mul_add(w: &mut Wave, p: &MulAddPlan) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        unsafe { mul_add_avx2(w, p) };
        return;
    }
    let (a, b) = (slot(w, 0, &p.src[0]), slot(w, 1, &p.src[1]));
    let (mut r64, mut over) = ([[0u32; LANES]; 2], [0u8; LANES]);
    let (x, y, c) = (&w.v[a], &w.v[b], wide_lanes(w, &p.add));
    for l in 0..LANES {
        let c = c.lane(l);
        let (r, o) = if p.signed {
            let m = x[l] as i32 as i64 * y[l] as i32 as i64;
            let (r, o) = m.overflowing_add(c as i64);
            (r as u64, o)
        } else {
            let m = x[l] as u64 * y[l] as u64;
            m.overflowing_add(c)
        };
        (r64[0][l], r64[1][l], over[l]) = (r as u32, (r >> 32) as u32, o as u8);
    }
    let mut carry = 0u64;
    for (l, o) in over.iter().enumerate() {
        carry |= u64::from(*o) << l;
    }
    write_pair(w, p.dst as usize, &r64);
    write_carry(w, p.sdst, carry);
}

/// [`run_mul_add`] with AVX2, eight lanes at a time: the 64-bit products, sums and carries
/// out are all computed before the destination pair is written (in the EXEC lanes, by a
/// blend), so a source may be the destination.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mul_add_avx2(w: &mut Wave, p: &MulAddPlan) {
    use std::arch::x86_64::*;
    let (a, b) = (SrcLanes::of(w, &p.src[0]), SrcLanes::of(w, &p.src[1]));
    // SAFETY: the source rows are 64-lane rows of the register file, not written yet.
    let (xs, ys) = unsafe { (a.all(), b.all()) };
    let add = wide_lanes(w, &p.add);
    let sign = _mm256_set1_epi64x(i64::MIN);
    let widen = |x: __m128i| {
        if p.signed {
            _mm256_cvtepi32_epi64(x)
        } else {
            _mm256_cvtepu32_epi64(x)
        }
    };
    // Lanes `l..l + 4` of the addend as 64-bit values.
    let addend = |l: usize| match add {
        // SAFETY: lanes `l..l + 4` of two 64-lane rows, `l` < 61; unaligned loads.
        WideLanes::Rows(lo, hi) => unsafe {
            let lo = _mm_loadu_si128(lo.as_ptr().add(l) as *const __m128i);
            let hi = _mm_loadu_si128(hi.as_ptr().add(l) as *const __m128i);
            _mm256_or_si256(
                _mm256_cvtepu32_epi64(lo),
                _mm256_slli_epi64::<32>(_mm256_cvtepu32_epi64(hi)),
            )
        },
        WideLanes::Same(v) => _mm256_set1_epi64x(v as i64),
    };
    // The sum of lanes `l..l + 4` and the bits of the lanes whose sum overflowed.
    let four = |x: __m128i, y: __m128i, l: usize| {
        let (x, y) = (widen(x), widen(y));
        let m = if p.signed {
            _mm256_mul_epi32(x, y)
        } else {
            _mm256_mul_epu32(x, y)
        };
        let c = addend(l);
        let r = _mm256_add_epi64(m, c);
        // A signed overflow when the sum's sign differs from both operands', an unsigned one
        // when the sum is below the product: in each lane's sign bit.
        let over = if p.signed {
            _mm256_and_si256(_mm256_xor_si256(m, r), _mm256_xor_si256(c, r))
        } else {
            _mm256_cmpgt_epi64(_mm256_xor_si256(m, sign), _mm256_xor_si256(r, sign))
        };
        (r, _mm256_movemask_pd(_mm256_castsi256_pd(over)) as u64)
    };
    let (mut lo, mut hi) = (
        [_mm256_setzero_si256(); LANES / 8],
        [_mm256_setzero_si256(); LANES / 8],
    );
    let mut carry = 0u64;
    for c in 0..LANES / 8 {
        let (x, y) = (xs[c], ys[c]);
        let (r0, c0) = four(_mm256_castsi256_si128(x), _mm256_castsi256_si128(y), 8 * c);
        let (r1, c1) = four(
            _mm256_extracti128_si256::<1>(x),
            _mm256_extracti128_si256::<1>(y),
            8 * c + 4,
        );
        carry |= (c0 | c1 << 4) << (8 * c);
        // The low and the high dwords of the eight sums (lanes 0 1 4 5 2 3 6 7 after the
        // shuffle), back in lane order.
        let (r0, r1) = (_mm256_castsi256_ps(r0), _mm256_castsi256_ps(r1));
        let lows = _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(r0, r1));
        let highs = _mm256_castps_si256(_mm256_shuffle_ps::<0xDD>(r0, r1));
        lo[c] = _mm256_permute4x64_epi64::<0xD8>(lows);
        hi[c] = _mm256_permute4x64_epi64::<0xD8>(highs);
    }
    let (exec, d) = (w.exec(), p.dst as usize);
    // SAFETY: the destination pair's rows (its slot is below 511) are 64-lane rows of the
    // register file.
    unsafe {
        put_row_avx2(w.v[d].as_mut_ptr(), &lo, exec);
        put_row_avx2(w.v[d + 1].as_mut_ptr(), &hi, exec);
    }
    w.lane_insts += exec.count_ones() as u64;
    write_carry(w, p.sdst, carry);
}

fn run_compare(w: &mut Wave, p: &ComparePlan) {
    let lanes = compare_lanes(w, p);
    write_compare(w, p.dst, p.exec, lanes);
}

fn run_wide_compare(w: &mut Wave, p: &WideComparePlan) {
    let lanes = wide_compare_lanes(w, p);
    write_compare(w, p.dst, p.exec, lanes);
}

/// A compare's result in the EXEC lanes to its destination, and to EXEC for `v_cmpx`.
fn write_compare(w: &mut Wave, dst: u16, writes_exec: bool, lanes: u64) {
    let exec = w.exec();
    let m = lanes & exec;
    w.lane_insts += exec.count_ones() as u64;
    w.set_sgpr64(dst, m);
    if writes_exec {
        w.set_exec(m);
    }
}

/// Bit `l`: the 64-bit compare of lane `l` (every lane).
fn wide_compare_lanes(w: &Wave, p: &WideComparePlan) -> u64 {
    let r = p.relation;
    let (mut a, mut b) = (wide_lanes(w, &p.src[0]), wide_lanes(w, &p.src[1]));
    if r.swap {
        (a, b) = (b, a);
    }
    // Unsigned order is the signed order of the values with their top bit flipped.
    let sign = if r.unsigned { 1u64 << 63 } else { 0 };
    let mut bits = [0u8; LANES];
    for (l, bit) in bits.iter_mut().enumerate() {
        let (x, y) = (a.lane(l), b.lane(l));
        let t = if r.greater {
            ((x ^ sign) as i64) > ((y ^ sign) as i64)
        } else {
            x == y
        };
        *bit = (t != r.negate) as u8;
    }
    lane_mask_of_bytes(&bits)
}

/// Bit `l`: the compare of lane `l` (every lane).
fn compare_lanes(w: &mut Wave, p: &ComparePlan) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        return unsafe { compare_avx2(w, p) };
    }
    let (a, b) = (slot(w, 0, &p.src[0]), slot(w, 1, &p.src[1]));
    (p.run)(&w.v[a], &w.v[b])
}

/// [`compare_lanes`] with AVX2, eight lanes at a time from the rows or the splatted values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn compare_avx2(w: &Wave, p: &ComparePlan) -> u64 {
    use std::arch::x86_64::*;
    let r = p.relation;
    let (mut a, mut b) = (SrcLanes::of(w, &p.src[0]), SrcLanes::of(w, &p.src[1]));
    if r.swap {
        (a, b) = (b, a);
    }
    // Unsigned order is the signed order of the values with their top bit flipped.
    let sign = _mm256_set1_epi32(if r.unsigned { i32::MIN } else { 0 });
    let mut m = 0u64;
    // SAFETY: the source rows are 64-lane rows of the register file.
    let (xs, ys) = unsafe { (a.all(), b.all()) };
    for c in 0..LANES / 8 {
        let (x, y) = (xs[c], ys[c]);
        let t = if r.greater {
            _mm256_cmpgt_epi32(_mm256_xor_si256(x, sign), _mm256_xor_si256(y, sign))
        } else {
            _mm256_cmpeq_epi32(x, y)
        };
        let bits = _mm256_movemask_ps(_mm256_castsi256_ps(t)) as u8;
        m |= u64::from(if r.negate { !bits } else { bits }) << (8 * c);
    }
    m
}

fn run_carry(w: &mut Wave, p: &CarryPlan) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        unsafe { carry_avx2(w, p) };
        return;
    }
    let exec = w.exec();
    let carry = mask_value(w, p.cond);
    let (a, b) = (slot(w, 0, &p.src[0]), slot(w, 1, &p.src[1]));
    let (mut carry_out, mut sum) = (0u64, [0u32; LANES]);
    for l in 0..LANES {
        let (x, y, c) = (w.v[a][l] as u64, w.v[b][l] as u64, carry >> l & 1);
        let (r, out) = if p.subtract {
            (x.wrapping_sub(y).wrapping_sub(c), y + c > x)
        } else {
            (x + y + c, (x + y + c) >> 32 != 0)
        };
        sum[l] = r as u32;
        carry_out |= u64::from(out) << l;
    }
    write_row(&mut w.v[p.dst as usize], &sum, exec);
    w.lane_insts += exec.count_ones() as u64;
    write_carry(w, p.sdst, carry_out);
}

/// [`run_carry`] with AVX2, eight lanes at a time: the sums and their carries out are all
/// computed before the destination row is written (in the EXEC lanes, by a blend), so a
/// source may be the destination.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn carry_avx2(w: &mut Wave, p: &CarryPlan) {
    use std::arch::x86_64::*;
    let (exec, carry_in) = (w.exec(), mask_value(w, p.cond));
    let (a, b) = (SrcLanes::of(w, &p.src[0]), SrcLanes::of(w, &p.src[1]));
    let sign = _mm256_set1_epi32(i32::MIN);
    // Unsigned `x < y` in every lane: the signed order with the top bits flipped.
    let below = |x, y| _mm256_cmpgt_epi32(_mm256_xor_si256(y, sign), _mm256_xor_si256(x, sign));
    let mut sums = [_mm256_setzero_si256(); LANES / 8];
    let mut carry_out = 0u64;
    // SAFETY: the source rows are 64-lane rows of the register file, not written yet.
    let (xs, ys) = unsafe { (a.all(), b.all()) };
    for (c, sum) in sums.iter_mut().enumerate() {
        let (x, y) = (xs[c], ys[c]);
        // All ones in the lanes with a carry (borrow) in: subtracting them adds one, adding
        // them subtracts one.
        let ones = lanes_of(carry_in >> (8 * c));
        let (with_carry, out) = if p.subtract {
            let first = _mm256_sub_epi32(x, y);
            let with_borrow = _mm256_add_epi32(first, ones);
            // A borrow out of either subtraction: `x < y`, or 0 less the borrow in.
            (
                with_borrow,
                _mm256_or_si256(below(x, y), below(first, with_borrow)),
            )
        } else {
            let first = _mm256_add_epi32(x, y);
            let with_carry = _mm256_sub_epi32(first, ones);
            (
                with_carry,
                _mm256_or_si256(below(first, x), below(with_carry, first)),
            )
        };
        carry_out |= u64::from(_mm256_movemask_ps(_mm256_castsi256_ps(out)) as u8) << (8 * c);
        *sum = with_carry;
    }
    // SAFETY: the destination is a 64-lane row of the register file.
    unsafe { put_row_avx2(w.v[p.dst as usize].as_mut_ptr(), &sums, exec) };
    w.lane_insts += exec.count_ones() as u64;
    write_carry(w, p.sdst, carry_out);
}

/// Writes `lanes` (eight vectors of eight) into the row at `d` in the lanes of `exec`, a blend
/// with the lanes it holds.
///
/// # Safety
///
/// `d` is valid for reads and writes of 64 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn put_row_avx2(d: *mut u32, lanes: &[std::arch::x86_64::__m256i; LANES / 8], exec: u64) {
    use std::arch::x86_64::*;
    for (c, x) in lanes.iter().enumerate() {
        // SAFETY: lanes `8c..8c + 8` of the row, `c` < 8; unaligned moves.
        unsafe {
            let r = if exec == u64::MAX {
                *x
            } else {
                _mm256_blendv_epi8(row8(d, c), *x, lanes_of(exec >> (8 * c)))
            };
            _mm256_storeu_si256(d.add(8 * c) as *mut __m256i, r);
        }
    }
}

/// All ones in lane `k` of eight where bit `k` of `bits` is set, zero elsewhere.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn lanes_of(bits: u64) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let each = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    let set = _mm256_and_si256(_mm256_set1_epi32(bits as u8 as i32), each);
    _mm256_cmpeq_epi32(set, each)
}

/// A wide operand of [`run_wide`]: a pair of rows, or one value for every lane.
#[derive(Clone, Copy)]
enum WideLanes<'a> {
    Rows(&'a VReg, &'a VReg),
    Same(u64),
}

impl WideLanes<'_> {
    /// The 64-bit value of lane `l`.
    #[inline(always)]
    fn lane(self, l: usize) -> u64 {
        match self {
            WideLanes::Rows(a, b) => a[l] as u64 | (b[l] as u64) << 32,
            WideLanes::Same(c) => c,
        }
    }
}

/// The high half of a 32-bit row operand.
static ZERO_ROW: VReg = [0; LANES];

#[inline(always)]
fn wide_lanes<'a>(w: &'a Wave, src: &Wide) -> WideLanes<'a> {
    match *src {
        Wide::Pair(slot) => WideLanes::Rows(&w.v[slot as usize], &w.v[(slot as usize + 1) & 511]),
        Wide::Row(slot) => WideLanes::Rows(&w.v[slot as usize], &ZERO_ROW),
        Wide::SPair(c) => WideLanes::Same(w.sgpr64(c as u16)),
        Wide::Sgpr(c) => WideLanes::Same(w.s[c as usize] as u64),
        Wide::Value(x) => WideLanes::Same(x),
    }
}

/// `(x << k) + y` (or `x >> k`) of every lane into the low and high result rows, a loop per
/// operand kind so that each vectorises.
#[inline(always)]
fn shifted_rows(
    lo: &mut VReg,
    hi: &mut VReg,
    x: WideLanes<'_>,
    y: WideLanes<'_>,
    k: u32,
    right: bool,
) {
    #[inline(always)]
    fn each(lo: &mut VReg, hi: &mut VReg, f: impl Fn(usize) -> u64) {
        for l in 0..LANES {
            let r = f(l);
            lo[l] = r as u32;
            hi[l] = (r >> 32) as u32;
        }
    }
    let join = |a: &VReg, b: &VReg, l: usize| a[l] as u64 | (b[l] as u64) << 32;
    match (x, y, right) {
        (WideLanes::Rows(a, b), _, true) => each(lo, hi, |l| join(a, b, l) >> k),
        (WideLanes::Same(c), _, true) => each(lo, hi, |_| c >> k),
        (WideLanes::Rows(a, b), WideLanes::Rows(c, d), _) => {
            each(lo, hi, |l| (join(a, b, l) << k).wrapping_add(join(c, d, l)))
        }
        (WideLanes::Rows(a, b), WideLanes::Same(c), _) => {
            each(lo, hi, |l| (join(a, b, l) << k).wrapping_add(c))
        }
        (WideLanes::Same(c), WideLanes::Rows(a, b), _) => {
            each(lo, hi, |l| (c << k).wrapping_add(join(a, b, l)))
        }
        (WideLanes::Same(c), WideLanes::Same(d), _) => each(lo, hi, |_| (c << k).wrapping_add(d)),
    }
}

/// `(x << k) + y` of every lane for `k < 32`, computed on the 32-bit halves (the low sum's
/// carry into the high one), so that the loops run on 32-bit lanes without splitting 64-bit
/// results into rows.
#[inline(always)]
fn shifted_halves(lo: &mut VReg, hi: &mut VReg, x: WideLanes<'_>, y: WideLanes<'_>, k: u32) {
    #[inline(always)]
    fn each(
        lo: &mut VReg,
        hi: &mut VReg,
        k: u32,
        x: impl Fn(usize) -> (u32, u32),
        y: impl Fn(usize) -> (u32, u32),
    ) {
        for l in 0..LANES {
            let ((xl, xh), (yl, yh)) = (x(l), y(l));
            let low = (xl << k).wrapping_add(yl);
            // The bits shifted out of the low half (none when k = 0: `xl >> 1` has a clear
            // top bit).
            let spill = (xl >> 1) >> (31 - k);
            lo[l] = low;
            hi[l] = ((xh << k) | spill)
                .wrapping_add(yh)
                .wrapping_add((low < yl) as u32);
        }
    }
    let same = |c: u64| (c as u32, (c >> 32) as u32);
    match (x, y) {
        (WideLanes::Rows(a, b), WideLanes::Rows(c, d)) => {
            each(lo, hi, k, |l| (a[l], b[l]), |l| (c[l], d[l]))
        }
        (WideLanes::Rows(a, b), WideLanes::Same(c)) => {
            let c = same(c);
            each(lo, hi, k, |l| (a[l], b[l]), |_| c)
        }
        (WideLanes::Same(c), WideLanes::Rows(a, b)) => {
            let c = same(c);
            each(lo, hi, k, |_| c, |l| (a[l], b[l]))
        }
        (WideLanes::Same(c), WideLanes::Same(d)) => {
            let (c, d) = (same(c), same(d));
            each(lo, hi, k, |_| c, |_| d)
        }
    }
}

/// [`run_wide_lanes`] with AVX2 (four 64-bit lanes per operation) when the host has it.
fn run_wide(w: &mut Wave, p: &WidePlan) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
            // target-feature function.
            unsafe { run_wide_avx2(w, p) };
            return;
        }
    }
    run_wide_lanes(w, p);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_wide_avx2(w: &mut Wave, p: &WidePlan) {
    if !p.right && w.exec() == u64::MAX && halves_in_place(w, p) {
        return;
    }
    run_wide_lanes(w, p)
}

/// An operand of [`halves_in_place`]: the low and high rows, or the two halves of one value.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum Halves {
    Rows(*const u32, *const u32),
    Same(u32, u32),
}

/// `(x << k) + y` for `k < 32` in every lane, eight lanes at a time with AVX2 straight into
/// the destination rows (the common address computation `v_lshl_add_u64 v[d], s[b], k, v[o]`
/// and `v_lshlrev_b64 v[d], k, v[o]`, EXEC full). Each eight lanes are read before they are
/// written, so a source may be the destination. False (nothing done) for any other form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn halves_in_place(w: &mut Wave, p: &WidePlan) -> bool {
    use std::arch::x86_64::*;
    let k = match p.parts[1] {
        Wide::Value(k) if k < 32 => k as i64,
        Wide::Sgpr(c) if w.s[c as usize] & 63 < 32 => (w.s[c as usize] & 31) as i64,
        _ => return false,
    };
    // Every row is reached through this one pointer while the operation runs.
    let rows = w.v.as_mut_ptr() as *mut u32;
    let row = |slot: u16| -> *const u32 {
        // SAFETY: a slot below 512 is a row of the register file.
        unsafe { rows.add(LANES * (slot as usize & 511)) }
    };
    let operand = |x: Wide| match x {
        Wide::Pair(slot) => Halves::Rows(row(slot), row(slot + 1)),
        Wide::Row(slot) => Halves::Rows(row(slot), ZERO_ROW.as_ptr()),
        Wide::SPair(c) => {
            let v = w.sgpr64(c as u16);
            Halves::Same(v as u32, (v >> 32) as u32)
        }
        Wide::Sgpr(c) => Halves::Same(w.s[c as usize], 0),
        Wide::Value(v) => Halves::Same(v as u32, (v >> 32) as u32),
    };
    let (x, y) = (operand(p.parts[0]), operand(p.parts[2]));
    // SAFETY: the plan's destination is below 511: both rows lie in the register file.
    let (dlo, dhi) = unsafe {
        let d = rows.add(LANES * p.dst as usize);
        (d, d.add(LANES))
    };
    // SAFETY: every pointer is a 64-lane row of the register file (or `ZERO_ROW`); lanes
    // `8c..8c + 8` are inside; the loads and stores are unaligned ones.
    unsafe {
        let load = |h: Halves, c: usize| match h {
            Halves::Rows(lo, hi) => (row8(lo, c), row8(hi, c)),
            Halves::Same(lo, hi) => (_mm256_set1_epi32(lo as i32), _mm256_set1_epi32(hi as i32)),
        };
        let (shift, spill) = (_mm_set_epi64x(0, k), _mm_set_epi64x(0, 31 - k));
        let sign = _mm256_set1_epi32(i32::MIN);
        for c in 0..LANES / 8 {
            let ((xl, xh), (yl, yh)) = (load(x, c), load(y, c));
            let low = _mm256_add_epi32(_mm256_sll_epi32(xl, shift), yl);
            // The bits shifted out of the low half (none when k = 0).
            let out = _mm256_srl_epi32(_mm256_srli_epi32::<1>(xl), spill);
            // All ones where the low sum wrapped (`low < yl` unsigned): minus one carries.
            let carry = _mm256_cmpgt_epi32(_mm256_xor_si256(yl, sign), _mm256_xor_si256(low, sign));
            let high = _mm256_or_si256(_mm256_sll_epi32(xh, shift), out);
            let high = _mm256_sub_epi32(_mm256_add_epi32(high, yh), carry);
            _mm256_storeu_si256(dlo.add(8 * c) as *mut __m256i, low);
            _mm256_storeu_si256(dhi.add(8 * c) as *mut __m256i, high);
        }
    }
    w.lane_insts += LANES as u64;
    true
}

#[inline(always)]
fn run_wide_lanes(w: &mut Wave, p: &WidePlan) {
    let right = p.right;
    let [mut lo, mut hi] = [[0u32; LANES]; 2];
    let (x, y) = (wide_lanes(w, &p.parts[0]), wide_lanes(w, &p.parts[2]));
    match wide_lanes(w, &p.parts[1]) {
        counts if p.arith => {
            for l in 0..LANES {
                let r = (x.lane(l) as i64 >> (counts.lane(l) & 63)) as u64;
                (lo[l], hi[l]) = (r as u32, (r >> 32) as u32);
            }
        }
        WideLanes::Same(k) if !right && k & 63 < 32 => {
            shifted_halves(&mut lo, &mut hi, x, y, k as u32 & 31)
        }
        WideLanes::Same(k) => shifted_rows(&mut lo, &mut hi, x, y, k as u32 & 63, right),
        WideLanes::Rows(counts, _) => {
            // A count per lane: lane by lane.
            for l in 0..LANES {
                let n = counts[l] & 63;
                let r = if right {
                    x.lane(l) >> n
                } else {
                    (x.lane(l) << n).wrapping_add(y.lane(l))
                };
                (lo[l], hi[l]) = (r as u32, (r >> 32) as u32);
            }
        }
    }
    write_pair(w, p.dst as usize, &[lo, hi]);
}

fn run_branch(w: &Wave, p: &BranchPlan) -> Flow {
    let taken = match p.op {
        s_cbranch_scc0 => !w.scc,
        s_cbranch_scc1 => w.scc,
        s_cbranch_vccz => w.vcc() == 0,
        s_cbranch_vccnz => w.vcc() != 0,
        s_cbranch_execz => w.exec() == 0,
        s_cbranch_execnz => w.exec() != 0,
        _ => true,
    };
    if taken {
        Flow::Jump(p.target as usize)
    } else {
        Flow::Next
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::general;
    use super::*;
    use crate::memory::RegionMemory;
    use crate::target::Target;
    use crate::trace::ShaderDataRecord;
    use crate::wave::VREGS;

    /// The EXEC classes: full, empty, alternating, a single lane, random.
    pub(super) const MASKS: [u64; 5] = [
        u64::MAX,
        0,
        0xAAAA_AAAA_AAAA_AAAA,
        1 << 41,
        0x0123_4567_89AB_CDEF,
    ];

    pub(crate) struct Parts {
        mem: RegionMemory,
        lds: Vec<u8>,
        scratch: Vec<u8>,
        trace: Vec<ShaderDataRecord>,
        spans: crate::memory::Spans,
        counts: crate::counting::GroupCounts,
    }

    impl Parts {
        pub(crate) fn new(mem: RegionMemory) -> Parts {
            Parts {
                mem,
                lds: vec![0; 64],
                scratch: vec![0; 64],
                trace: Vec::new(),
                spans: Default::default(),
                counts: Default::default(),
            }
        }

        pub(crate) fn ctx<'a>(&'a mut self, prog: &'a Program, fast: bool) -> Ctx<'a> {
            Ctx {
                target: Target::Gfx942,
                prog,
                mem: &self.mem,
                lds: &mut self.lds,
                scratch: &mut self.scratch,
                private_size: 0,
                apertures: Default::default(),
                trace: &mut self.trace,
                clock_base: std::time::Instant::now(),
                counting: false,
                counts: &mut self.counts,
                plans: &[],
                fast,
                spans: &mut self.spans,
                native: None,
            }
        }
    }

    /// Two waves with the same random registers, EXEC and MODE.
    pub(crate) fn waves(r: &mut u64, exec: u64, mode: u32) -> [Wave; 2] {
        let seed = *r;
        super::super::f32_test_bits(r);
        [0, 1].map(|_| {
            let mut q = seed;
            let mut w = Wave::new();
            for x in w.v[..16].iter_mut().flatten() {
                *x = super::super::f32_test_bits(&mut q);
            }
            for x in w.s[..108].iter_mut() {
                *x = super::super::f32_test_bits(&mut q);
            }
            w.set_exec(exec);
            w.mode = mode;
            w
        })
    }

    /// Runs `inst` on wave `a` through `plan` (on the general path where there is none or it
    /// declines) and on wave `b` on the per-lane reference, then asserts the same fault or none
    /// and the same registers; true when the plan ran it.
    pub(super) fn against_reference(
        parts: &mut Parts,
        prog: &Program,
        plan: Option<&Plan>,
        inst: &Inst,
        [a, b]: [&mut Wave; 2],
        what: &str,
    ) -> bool {
        let planned = plan.and_then(|p| run(a, &mut parts.ctx(prog, true), p, inst.counter_class));
        let ran = planned.is_some();
        let fast = match planned {
            Some(flow) => Ok(flow),
            None => general(a, &mut parts.ctx(prog, true), inst),
        };
        let reference = general(b, &mut parts.ctx(prog, false), inst);
        assert_eq!(fast.err(), reference.err(), "{what}");
        same_state(a, b, what);
        ran
    }

    /// [`against_reference`] for an instruction its plan must run.
    pub(super) fn planned_as_reference(
        parts: &mut Parts,
        prog: &Program,
        plan: &Plan,
        inst: &Inst,
        waves: [&mut Wave; 2],
        what: &str,
    ) {
        let ran = against_reference(parts, prog, Some(plan), inst, waves, what);
        assert!(ran, "{what}: the plan ran");
    }

    pub(crate) fn same_state(a: &Wave, b: &Wave, what: &str) {
        for (k, (x, y)) in a.v[..VREGS].iter().zip(b.v[..VREGS].iter()).enumerate() {
            if let Some(l) = (0..LANES).find(|&l| x[l] != y[l]) {
                panic!(
                    "{what}: v{k} lane {l}: plan {:#x}, reference {:#x}",
                    x[l], y[l]
                );
            }
        }
        assert_eq!(a.s, b.s, "{what}: SGPRs");
        assert_eq!(a.scc, b.scc, "{what}: SCC");
        assert_eq!(a.lane_insts, b.lane_insts, "{what}: lane count");
    }

    /// The instruction forms the tests derive operations from: VOP2, VOP3 with modifiers,
    /// VOPC, and the VOP3 64-bit shift-add.
    pub(crate) fn templates() -> [Inst; 4] {
        let t = Target::Gfx942;
        [
            // v_add_f32_e32 v2, v2, v3
            crate::decode::decode(t, &[0x0204_0702]),
            // v_fma_f32 v2, v2, s0, -v3
            crate::decode::decode(t, &[0xD1CB_0002, 0x840C_0102]),
            // v_cmp_gt_u32_e32 vcc, s7, v0
            crate::decode::decode(t, &[0x7D98_0007]),
            // v_lshl_add_u64 v[2:3], s[10:11], 0, v[0:1]
            crate::decode::decode(t, &[0xD208_0002, 0x0401_000A]),
        ]
    }

    /// Every planned scalar operation over SGPR, inline-constant and literal sources and both
    /// SCC values, against the general path.
    #[test]
    fn scalar_plans_match_the_general_path() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let t = Target::Gfx942;
        // s_mov_b32 s0, lit ; s_add_i32 s7, s7, -1 ; s_cmp_eq_u32 s7, 0 ; s_movk_i32 s7, 0x1234
        let templates = [
            crate::decode::decode(t, &[0xBE80_00FF, 0x3F7F_BE77]),
            crate::decode::decode(t, &[0x8107_C107]),
            crate::decode::decode(t, &[0xBF06_8007]),
            crate::decode::decode(t, &[0xB007_1234]),
        ];
        // SOPK constants: both signs, the 16-bit extremes, and ones s7 equals below.
        let constants = [0x1234, 0, 1, 0xFFFF, 0x8000, 0x7FFF, 0xFFF0, 5, 9];
        // The plan ran, with the general path's results.
        let mut on_plan = |inst: &Inst, plan: &Plan, waves: [&mut Wave; 2], what: &str| {
            planned_as_reference(&mut parts, &prog, plan, inst, waves, what)
        };
        let sources = [3, 7, VCC, 128, 128 + 7, 193, 208, 240, 255];
        let mut r = 0x5EED_0000_1234_5678u64;
        let mut planned = 0;
        let mut names = std::collections::BTreeSet::new();
        for op in Op::ALL.iter().copied() {
            for template in templates {
                for (i, &src0) in sources.iter().enumerate() {
                    let mut inst = template;
                    inst.op = op;
                    inst.src = [src0, sources[(i * 5 + 2) % sources.len()], 0];
                    inst.lit = super::super::f32_test_bits(&mut r);
                    if inst.enc == Enc::Sopk {
                        inst.imm = constants[i];
                    }
                    let Some(plan) = inst_plan(&inst) else {
                        continue;
                    };
                    planned += 1;
                    names.insert(op.name());
                    let [mut a, mut b] = waves(&mut r, u64::MAX, 0);
                    a.scc = r & 1 != 0;
                    b.scc = a.scc;
                    // s7 equal to the SOPK constant, sign- or zero-extended, in two cases.
                    if i >= 7 {
                        let c = inst.imm as i16 as i32 as u32;
                        a.s[7] = if i == 7 { c } else { c & 0xFFFF };
                        b.s[7] = a.s[7];
                    }
                    let what = inst.disassemble(t);
                    on_plan(&inst, &plan, [&mut a, &mut b], &what);
                }
            }
        }
        // Bit-field extracts whose field ends below bit 32 with its top bit set and clear,
        // which random controls seldom give.
        for op in [s_bfe_u32, s_bfe_i32] {
            for (value, ctl) in [
                (0x8765_4321u32, 8 << 16 | 4),
                (0x0000_0F00, 4 << 16 | 8),
                (0x0000_0700, 4 << 16 | 8),
                (0x8000_0000, 1 << 16 | 31),
                (0xFFFF_FFFF, 16 << 16 | 20),
            ] {
                let mut inst = templates[1];
                (inst.op, inst.src) = (op, [3, 7, 0]);
                let plan = inst_plan(&inst).expect("a scalar plan");
                let [mut a, mut b] = waves(&mut r, u64::MAX, 0);
                for w in [&mut a, &mut b] {
                    (w.s[3], w.s[7]) = (value, ctl);
                }
                let what = format!("{} of {value:#x}, {ctl:#x}", op.name());
                on_plan(&inst, &plan, [&mut a, &mut b], &what);
            }
        }
        assert!(planned > 300, "{planned} scalar forms planned");
        for op in [
            "s_lshl_b64",
            "s_lshr_b64",
            "s_ashr_i64",
            "s_cmp_lg_u64",
            "s_and_b64",
            "s_movk_i32",
            "s_not_b32",
            "s_not_b64",
            "s_bcnt1_i32_b32",
            "s_subb_u32",
            "s_bitcmp1_b32",
            "s_bfe_u32",
            "s_bfm_b32",
            "s_bfe_i32",
            "s_brev_b32",
            "s_ff1_i32_b32",
            "s_flbit_i32_b32",
            "s_sext_i32_i8",
            "s_sext_i32_i16",
            "s_bcnt1_i32_b64",
            "s_bcnt0_i32_b64",
            "s_ff1_i32_b64",
            "s_flbit_i32_b64",
            "s_addk_i32",
            "s_mulk_i32",
            "s_cmpk_lt_i32",
            "s_cmpk_eq_u32",
        ] {
            assert!(names.contains(op), "{op} was never planned");
        }
    }

    /// `s_getpc_b64` reads the address of the next instruction, a constant the plan resolves
    /// from the code range: against the general path at two places of one program.
    #[test]
    fn getpc_plan_matches_the_general_path() {
        let t = Target::Gfx942;
        // s_nop 0 ; s_getpc_b64 s[4:5] ; s_getpc_b64 s[4:5] ; s_endpgm
        let code: Vec<u8> = [0xBF80_0000u32, 0xBE84_1C00, 0xBE84_1C00, 0xBF81_0000]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let prog = Program::decode(t, 0x7FFF_FFF8, &code);
        let mut parts = Parts::new(RegionMemory::new());
        let mut r = 0x6E7_9C00u64;
        for i in [1, 2] {
            let inst = prog.insts[i];
            assert_eq!(inst.op, s_getpc_b64);
            let plan = plan_of(&prog, i).expect("a getpc plan");
            let [mut a, mut b] = waves(&mut r, u64::MAX, 0);
            a.pc = i;
            b.pc = i;
            let what = inst.disassemble(t);
            assert!(against_reference(
                &mut parts,
                &prog,
                Some(&plan),
                &inst,
                [&mut a, &mut b],
                &what
            ));
            assert_eq!(a.sgpr64(4), 0x7FFF_FFF8 + 4 * (i as u64 + 1), "{what}");
        }
    }

    /// Scalar loads of every width, with and without an SGPR offset, inside the memory, at
    /// an unaligned address and running off it: the plan (or the general path where it
    /// declines) against the general path, registers and faults.
    #[test]
    fn scalar_load_plans_match_the_general_path() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        const BASE: u64 = 0x20_0000;
        let mut mem = RegionMemory::new();
        mem.add(BASE, 256);
        mem.write(BASE, &(0..=255u8).collect::<Vec<u8>>());
        // s_load_dwordx2 s[6:7], s[2:3], 0x18
        let template = crate::decode::decode(Target::Gfx942, &[0xC006_0181, 0x0000_0018]);
        let mut planned = 0;
        for op in [
            s_load_dword,
            s_load_dwordx2,
            s_load_dwordx4,
            s_load_dwordx8,
            s_load_dwordx16,
        ] {
            for (imm, soffset) in [(0x18, OFF), (4, 9), (0x1e, OFF), (0xF8, OFF), (-8, OFF)] {
                let mut inst = template;
                inst.op = op;
                inst.imm = imm;
                inst.sdst = soffset;
                let plan = inst_plan(&inst).expect("a scalar load plan");
                let [mut a, mut b] = waves(&mut 99, u64::MAX, 0);
                for w in [&mut a, &mut b] {
                    w.set_sgpr64(2, BASE);
                    w.s[9] = 12;
                }
                let mut parts = Parts::new(mem.clone());
                let what = format!("{} imm {imm}", op.name());
                let waves = [&mut a, &mut b];
                if against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what) {
                    planned += 1;
                }
            }
        }
        assert!(planned >= 10, "{planned} loads ran on the plan");
    }

    /// Every planned VALU operation, on every template it decodes into, over source kinds
    /// (VGPRs including the destination, SGPRs, VCC, inline constants, the literal), random
    /// neg/abs, every denormal mode and every EXEC class: the plan's result against the
    /// per-lane reference path (fast paths off), registers, masks and counts bit for bit.
    #[test]
    fn plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let sources = [VGPR + 1, VGPR + 5, VGPR + 6, 3, VCC, 128 + 7, 193, 240, 255];
        let mut r = 0x8F1B_BCDC_2B4A_6E01u64;
        let mut planned = std::collections::BTreeSet::new();
        for op in Op::ALL.iter().copied() {
            for template in templates() {
                for (round, &exec) in MASKS.iter().enumerate() {
                    for &src0 in &sources {
                        let mut inst = template;
                        inst.op = op;
                        inst.dst = VGPR + 5;
                        inst.sdst = 20;
                        inst.src = [src0, VGPR + 6, sources[(r % 9) as usize]];
                        inst.lit = super::super::f32_test_bits(&mut r);
                        if inst.enc == Enc::Vop3 {
                            inst.dst = if Relation::of(op).is_some() {
                                30
                            } else {
                                inst.dst
                            };
                            (inst.neg, inst.abs) = ((r >> 3) as u8 & 7, (r >> 7) as u8 & 7);
                        }
                        // f64 plans decline NaN results: `double_plans_match_...` covers them.
                        let Some(plan) = inst_plan(&inst).filter(|p| !matches!(p, Plan::Double(_)))
                        else {
                            continue;
                        };
                        planned.insert(op.name());
                        // The four denormal modes, MODE.IEEE on in the last round.
                        let mode = ((round % 4) as u32) << 4 | ((round / 4) as u32) << 9;
                        let [mut a, mut b] = waves(&mut r, exec, mode);
                        let what = format!(
                            "{} src0 {src0} exec {exec:x}",
                            inst.disassemble(Target::Gfx942)
                        );
                        let waves = [&mut a, &mut b];
                        let ran =
                            against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what);
                        assert!(ran, "{what}: a plan runs in round-to-nearest mode");
                    }
                }
            }
        }
        for op in [
            "v_mov_b32",
            "v_add_u32",
            "v_fma_f32",
            "v_fmac_f32",
            "v_fmamk_f32",
            "v_cndmask_b32",
            "v_cmp_gt_u32",
            "v_cmpx_eq_u32",
            "v_cmpx_ge_i32",
            "v_cmp_le_u64",
            "v_cmpx_ne_i64",
            "v_mul_hi_u32",
            "v_mul_hi_i32",
            "v_cvt_f32_u32",
            "v_cvt_i32_f32",
            "v_rcp_iflag_f32",
            "v_bfe_u32",
            "v_max_u32",
            "v_min_i32",
            "v_bfe_i32",
            "v_or3_b32",
            "v_add_lshl_u32",
            "v_mad_u32_u24",
            "v_mad_i32_i24",
            "v_perm_b32",
            "v_med3_i32",
            "v_alignbit_b32",
            "v_ffbh_i32",
            "v_not_b32",
            "v_mbcnt_lo_u32_b32",
            "v_mbcnt_hi_u32_b32",
            "v_div_scale_f32",
            "v_div_fmas_f32",
            "v_div_fixup_f32",
            "v_sqrt_f32",
            "v_rsq_f32",
            "v_exp_f32",
            "v_log_f32",
            "v_ldexp_f32",
            "v_max_f32",
            "v_min3_f32",
            "v_med3_f32",
            "v_trunc_f32",
            "v_floor_f32",
            "v_subrev_f32",
            "v_add_f16",
            "v_lshlrev_b16",
            "v_cvt_f32_f16",
            "v_cmp_eq_u16",
            "v_cmpx_lt_i16",
            "v_add_co_u32",
            "v_addc_co_u32",
            "v_lshl_add_u64",
            "v_lshlrev_b64",
            "v_mov_b64",
            "v_cvt_f64_f32",
            "v_cvt_f32_f64",
            "v_cvt_f64_i32",
            "v_cvt_u32_f64",
            "v_rcp_f64",
            "v_sqrt_f64",
            "v_fract_f64",
            "v_ldexp_f64",
            "v_max_f64",
            "v_div_scale_f64",
            "v_div_fmas_f64",
            "v_div_fixup_f64",
            "v_cmp_class_f64",
            "v_cmpx_lt_f64",
        ] {
            assert!(planned.contains(op), "{op} was never planned");
        }
    }

    /// A scalar source's splat row is reused while the SGPR keeps its value and rewritten when
    /// it changes (back to an earlier value too): one wave, one planned instruction run again
    /// and again, against the per-lane reference.
    #[test]
    fn splat_rows_follow_their_scalar_sources() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_add_u32_e32 v5, s3, v6
        let mut inst = templates()[0];
        (inst.op, inst.dst, inst.src) = (v_add_u32, VGPR + 5, [3, VGPR + 6, 0]);
        let plan = inst_plan(&inst).expect("a row plan");
        let mut r = 7;
        let [mut a, mut b] = waves(&mut r, u64::MAX, 0xF0);
        for (round, s3) in [1u32, 1, 2, 1, 1, u32::MAX].into_iter().enumerate() {
            (a.s[3], b.s[3]) = (s3, s3);
            let what = format!("round {round}, s3 = {s3:#x}");
            planned_as_reference(&mut parts, &prog, &plan, &inst, [&mut a, &mut b], &what);
            assert_eq!(a.v[5][63], a.v[6][63].wrapping_add(s3), "{what}");
        }
    }

    /// Every operation with an SDWA plan, in the VOP1, VOP2 and VOPC SDWA forms, over VGPR,
    /// SGPR and constant sources, random source selections (byte, word, dword; sign- or
    /// zero-extended; neg/abs), destination selections with each treatment of the other bits,
    /// every denormal mode and every EXEC class: against the per-lane reference.
    #[test]
    fn sdwa_plans_match_the_per_lane_reference() {
        let t = Target::Gfx90a;
        let prog = Program::decode(t, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_cvt_f32_i32_sdwa v1, v2 ; v_add_f32_sdwa v1, v2, v3 ;
        // v_cmp_lt_f32_sdwa s[4:5], v2, v3 (each with DWORD selections)
        let templates = [
            crate::decode::decode(t, &[0x7E02_0AF9, 0x0006_0602]),
            crate::decode::decode(t, &[0x0202_06F9, 0x0606_0602]),
            crate::decode::decode(t, &[0x7C82_06F9, 0x0606_8402]),
        ];
        let sources = [VGPR + 1, VGPR + 5, VGPR + 6, 3, VCC, 128 + 7, 193, 240];
        let mut r = 0x5D3A_0000_0BAD_F00Du64;
        let mut planned = std::collections::BTreeSet::new();
        for op in Op::ALL.iter().copied() {
            let compare = op.name().starts_with("v_cmp");
            for template in templates {
                if compare != (template.enc == Enc::Vopc) {
                    continue;
                }
                for (round, &exec) in MASKS.iter().enumerate() {
                    for &src0 in &sources {
                        let mut inst = template;
                        inst.op = op;
                        let bits = super::super::f32_test_bits(&mut r);
                        // Random selections, extensions, neg/abs and destination fields;
                        // clamp and the output modifier clear.
                        inst.ctrl = bits & !0xE0FF | (inst.ctrl & 0xFF);
                        inst.src = [src0, sources[(bits % 8) as usize], 0];
                        inst.dst = if compare {
                            [VCC, 30][round % 2]
                        } else {
                            VGPR + 5
                        };
                        let Some(plan @ Plan::Sdwa(_)) = inst_plan(&inst) else {
                            continue;
                        };
                        planned.insert(op.name());
                        let mode = ((round % 4) as u32) << 4;
                        let [mut a, mut b] = waves(&mut r, exec, mode);
                        let what = format!(
                            "{} ({:#x}) src0 {src0} exec {exec:x}",
                            inst.disassemble(t),
                            inst.ctrl
                        );
                        let waves = [&mut a, &mut b];
                        let ran =
                            against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what);
                        assert!(ran, "{what}: the plan runs in round-to-nearest mode");
                    }
                }
            }
        }
        for op in [
            "v_mov_b32",
            "v_cvt_f32_i32",
            "v_cvt_f32_ubyte0",
            "v_xor_b32",
            "v_add_u32",
            "v_add_co_u32",
            "v_add_u16",
            "v_mul_f16",
            "v_mul_f32",
            "v_lshlrev_b16",
            "v_cmp_lt_i32",
            "v_cmp_ne_u16",
            "v_cmp_gt_f32",
            "v_cmpx_eq_u32",
        ] {
            assert!(planned.contains(op), "{op} was never planned");
        }
    }

    /// The mixed-precision fused multiply-adds over every op_sel/op_sel_hi combination, random
    /// neg/abs, VGPR, SGPR and constant sources (NaNs and infinities among them), every
    /// denormal mode and every EXEC class: against the per-lane reference, the plan running in
    /// every case (round to nearest).
    #[test]
    fn mix_plans_match_the_per_lane_reference() {
        let t = Target::Gfx90a;
        let prog = Program::decode(t, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_fma_mix_f32 v5, v1, v6, v7 op_sel_hi:[1,1,0]
        let template = crate::decode::decode(t, &[0xD3A0_0005, 0x1C1E_0D01]);
        assert_eq!(template.op, v_fma_mix_f32);
        let sources = [VGPR + 1, VGPR + 5, VGPR + 6, 3, VCC, 128 + 7, 193, 240, 242];
        let mut r = 0x0F1E_2D3C_4B5A_6978u64;
        let (mut ran, mut total) = (0, 0);
        for op in [v_fma_mix_f32, v_fma_mixlo_f16, v_fma_mixhi_f16] {
            for sel in 0..64u8 {
                for (round, &exec) in MASKS.iter().enumerate() {
                    let bits = super::super::f32_test_bits(&mut r);
                    let mut inst = template;
                    inst.op = op;
                    (inst.op_sel, inst.op_sel_hi) = (sel & 7, sel >> 3);
                    (inst.neg, inst.abs) = (bits as u8 & 7, (bits >> 3) as u8 & 7);
                    inst.src = [
                        sources[(bits >> 8) as usize % 9],
                        sources[(bits >> 12) as usize % 9],
                        sources[(bits >> 16) as usize % 9],
                    ];
                    let plan = inst_plan(&inst).expect("a mix plan");
                    assert!(matches!(plan, Plan::Mix(_)));
                    let mode = ((round % 4) as u32) << 4 | ((bits >> 20) & 3) << 6;
                    let [mut a, mut b] = waves(&mut r, exec, mode);
                    let what = format!("{} exec {exec:x} mode {mode:x}", inst.disassemble(t));
                    let waves = [&mut a, &mut b];
                    total += 1;
                    if against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what) {
                        ran += 1;
                    }
                }
            }
        }
        assert_eq!(ran, total, "the plan declined a case");
    }

    /// SDWA forms with clamp or an output modifier keep the general path; the same form
    /// without them has a plan.
    #[test]
    fn sdwa_plans_refuse_output_modifiers() {
        let t = Target::Gfx90a;
        // v_add_f32_sdwa v1, v2, v3 clamp ; ... mul:2 (DWORD selections)
        for w1 in [0x0606_2602, 0x0606_4602] {
            let inst = crate::decode::decode(t, &[0x0202_06F9, w1]);
            assert!(inst.clamp || inst.omod != 0, "{w1:#x} decodes its modifier");
            assert!(inst_plan(&inst).is_none(), "{}", inst.disassemble(t));
        }
        let inst = crate::decode::decode(t, &[0x0202_06F9, 0x0606_0602]);
        assert!(matches!(inst_plan(&inst), Some(Plan::Sdwa(_))));
    }

    /// The 64-bit shifts and shift-adds with one shift count for every lane (inline
    /// constants 0 to 64, an SGPR, the literal) over VGPR-pair, SGPR-pair and constant
    /// operands, registers with and without carries out of the low half, and every EXEC
    /// class: the plan against the per-lane reference.
    #[test]
    fn wide_shifts_by_one_count_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let shift_add = templates()[3];
        let counts: Vec<u16> = (128..=192).chain([3, 7, LITERAL]).collect();
        let operands = [VGPR, VGPR + 6, 10, 128 + 5, 193, LITERAL];
        let mut r = 0x0DDB_A11C_AB1E_5EEDu64;
        for op in [v_lshl_add_u64, v_lshlrev_b64, v_lshrrev_b64, v_ashrrev_i64] {
            for &count in &counts {
                for (round, &exec) in MASKS.iter().enumerate() {
                    for &x in &operands {
                        let mut inst = shift_add;
                        inst.op = op;
                        inst.lit = super::super::f32_test_bits(&mut r) | (round as u32) << 30;
                        let y = operands[(r % operands.len() as u64) as usize];
                        inst.src = if op == v_lshl_add_u64 {
                            [x, count, y]
                        } else {
                            [count, x, 128]
                        };
                        let plan = inst_plan(&inst).expect("a 64-bit shift plan");
                        let [mut a, mut b] = waves(&mut r, exec, 0);
                        // Low halves near the top, so that the sums carry in some lanes.
                        for w in [&mut a, &mut b] {
                            for l in 0..LANES {
                                w.v[0][l] |= 0xFFFF_0000;
                                w.v[6][l] |= (l as u32 & 1) << 31;
                            }
                        }
                        let what = format!("{} exec {exec:x}", inst.disassemble(Target::Gfx942));
                        let waves = [&mut a, &mut b];
                        planned_as_reference(&mut parts, &prog, &plan, &inst, waves, &what);
                    }
                }
            }
        }
    }

    /// The 64-bit integer compares (VOPC writing VCC, VOP3 writing an SGPR pair, `v_cmpx`
    /// writing EXEC too) over VGPR-pair, SGPR-pair, inline-constant and literal operands whose
    /// lanes tie in the high half, in both halves or in neither, with and without the sign
    /// bits, under every EXEC class: the plan against the per-lane reference.
    #[test]
    fn wide_compares_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let (vopc, vop3) = (templates()[2], templates()[1]);
        let ops: Vec<Op> = Op::ALL
            .iter()
            .copied()
            .filter(|&op| is_wide_compare(op))
            .collect();
        assert_eq!(ops.len(), 24, "eq/ne/lt/le/gt/ge, u64/i64, cmp/cmpx");
        let firsts = [VGPR, VGPR + 6, 10, 128 + 5, 193, LITERAL];
        let mut r = 0x51DE_CA11_0F64_B175u64;
        let mut ran = 0;
        for &op in &ops {
            for (round, &exec) in MASKS.iter().enumerate() {
                for &x in &firsts {
                    for vop3_form in [false, true] {
                        let mut inst = if vop3_form { vop3 } else { vopc };
                        inst.op = op;
                        if vop3_form {
                            (inst.dst, inst.neg, inst.abs) = (30, 0, 0);
                        }
                        // VOPC takes its second operand from VGPRs only.
                        let y = if vop3_form && round % 2 == 1 {
                            12
                        } else {
                            VGPR + 2
                        };
                        inst.src = [x, y, 0];
                        inst.lit = super::super::f32_test_bits(&mut r) | (round as u32) << 31;
                        let plan = inst_plan(&inst).expect("a 64-bit compare plan");
                        let [mut a, mut b] = waves(&mut r, exec, 0);
                        for w in [&mut a, &mut b] {
                            tie_some_lanes(w);
                        }
                        let what = format!("{} exec {exec:x}", inst.disassemble(Target::Gfx942));
                        let waves = [&mut a, &mut b];
                        if against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what) {
                            ran += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(
            ran,
            ops.len() * MASKS.len() * firsts.len() * 2,
            "every compare ran on its plan"
        );
    }

    /// `v_readfirstlane_b32` (VOP1 and VOP3 forms) of VGPRs into SGPRs, VCC and M0 under every
    /// EXEC class: the plan against the per-lane reference.
    #[test]
    fn first_lane_plan_matches_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_readfirstlane_b32 s30, v1
        let vop1 = crate::decode::decode(Target::Gfx942, &[0x7E3C_0501]);
        assert_eq!(vop1.op, v_readfirstlane_b32);
        let mut vop3 = templates()[1];
        (vop3.op, vop3.neg, vop3.abs) = (v_readfirstlane_b32, 0, 0);
        let mut r = 0xF125_7AAE_0000_0001u64;
        let mut ran = 0;
        for template in [vop1, vop3] {
            for &exec in MASKS.iter().chain(&[1 << 63, 0x8000_0000]) {
                for (src, dst) in [
                    (VGPR + 1, 30),
                    (VGPR + 6, VCC),
                    (VGPR + 15, crate::decode::M0),
                ] {
                    let mut inst = template;
                    (inst.src[0], inst.dst) = (src, dst);
                    let plan = inst_plan(&inst).expect("a first-lane plan");
                    let [mut a, mut b] = waves(&mut r, exec, 0);
                    let what = format!("{} exec {exec:x}", inst.disassemble(Target::Gfx942));
                    let waves = [&mut a, &mut b];
                    ran += against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what)
                        as usize;
                }
            }
        }
        assert_eq!(ran, 2 * 7 * 3, "every form ran on its plan");
    }

    /// Pairs v[0:1], v[2:3] and v[6:7] and SGPR pairs s[10:11], s[12:13] of values that tie
    /// in some lanes: the high halves in every third lane, both halves in every fifth, the
    /// constant 5 or -1 in every seventh; the sign bit set in odd lanes.
    fn tie_some_lanes(w: &mut Wave) {
        let (s10, s12) = (w.sgpr64(10), w.sgpr64(12));
        for l in 0..LANES {
            for (lo, hi) in [(0, 1), (2, 3), (6, 7)] {
                if l % 2 == 1 {
                    w.v[hi][l] |= 1 << 31;
                }
                if l % 3 == 0 {
                    w.v[hi][l] = w.v[1][l];
                }
                if l % 5 == 0 {
                    w.v[lo][l] = w.v[0][l];
                    w.v[hi][l] = w.v[1][l];
                }
                if l % 7 == 0 {
                    let c = if l % 14 == 0 { 5u64 } else { u64::MAX };
                    (w.v[lo][l], w.v[hi][l]) = (c as u32, (c >> 32) as u32);
                }
                if l % 11 == 0 {
                    let s = if l % 22 == 0 { s10 } else { s12 };
                    (w.v[lo][l], w.v[hi][l]) = (s as u32, (s >> 32) as u32);
                }
            }
        }
    }

    /// A VOP3 instruction with op_sel bits set has no plan (no planned operation implements
    /// them; the general path refuses the undefined ones), whichever bit is set.
    #[test]
    fn plans_refuse_op_sel() {
        let t = Target::Gfx942;
        let forms: [[u32; 2]; 5] = [
            // v_fma_f32 v2, v2, s0, -v3
            [0xD1CB_0002, 0x840C_0102],
            // v_lshl_add_u64 v[2:3], s[10:11], 0, v[0:1]
            [0xD208_0002, 0x0401_000A],
            // v_add_u32_e64 v3, v1, v2
            [0xD134_0003, 0x0002_0501],
            // v_lshl_add_u32 v3, v1, v2, v4
            [0xD1FD_0003, 0x0412_0501],
            // v_cmp_eq_u32_e64 s[0:1], v1, v2
            [0xD0CA_0000, 0x0002_0501],
        ];
        for [w0, w1] in forms {
            let plain = crate::decode::decode(t, &[w0, w1]);
            assert!(inst_plan(&plain).is_some(), "{:?} has a plan", plain.op);
            for bit in 11..15 {
                let inst = crate::decode::decode(t, &[w0 | 1 << bit, w1]);
                assert_eq!(inst.op, plain.op);
                assert!(inst_plan(&inst).is_none(), "{:?} op_sel bit {bit}", inst.op);
            }
        }
    }

    /// A directed rounding mode leaves an f32 instruction to the general path.
    #[test]
    fn plans_refuse_directed_rounding() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let inst = templates()[1];
        let plan = inst_plan(&inst).expect("v_fma_f32 has a plan");
        let [mut a, _] = waves(&mut 7, u64::MAX, 1);
        assert!(
            run(
                &mut a,
                &mut parts.ctx(&prog, true),
                &plan,
                inst.counter_class
            )
            .map(Ok::<_, crate::fault::FaultKind>)
            .is_none()
        );
    }

    /// `v_mad_u64_u32` and `v_mad_i64_i32` over VGPR, SGPR, constant and literal sources
    /// (the destination pair among the addends) and every EXEC class: registers and the
    /// carry-out mask against the per-lane reference.
    #[test]
    fn mul_add_plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_mad_u64_u32 v[2:3], s[0:1], v19, v18, v[2:3]
        let template = crate::decode::decode(Target::Gfx942, &[0xD1E8_0002, 0x040A_2513]);
        let sources = [VGPR, VGPR + 3, VGPR + 4, 2, VCC, 128 + 9, 193, LITERAL];
        let mut r = 0xBADC_0FFE_E0DD_F00Du64;
        let mut planned = 0;
        for op in [v_mad_u64_u32, v_mad_i64_i32] {
            for &exec in &MASKS {
                for _ in 0..60 {
                    let mut inst = template;
                    inst.op = op;
                    inst.dst = VGPR + 4;
                    inst.sdst = if r & 1 == 0 { VCC } else { 20 };
                    let b = super::super::f32_test_bits(&mut r);
                    for k in 0..3 {
                        inst.src[k] = sources[(b >> (4 * k)) as usize % sources.len()];
                    }
                    inst.lit = b;
                    let [mut a, mut w] = waves(&mut r, exec, 0);
                    let what = format!("{} exec {exec:x}", inst.disassemble(Target::Gfx942));
                    let plan = inst_plan(&inst).expect("a multiply-add plan");
                    let waves = [&mut a, &mut w];
                    planned_as_reference(&mut parts, &prog, &plan, &inst, waves, &what);
                    planned += 1;
                }
            }
        }
        assert_eq!(planned, 600);
    }

    /// `v_add_co_u32`, `v_addc_co_u32` and the four subtractions with borrows (VOP2 with VCC,
    /// VOP3 with an SGPR pair) over lane values at the wrap (0, 1, all ones, the sign bits),
    /// carries (borrows) in on every lane pattern,
    /// the destination among the sources and every EXEC class: registers and the carry-out
    /// mask against the per-lane reference.
    #[test]
    fn carry_plans_match_the_per_lane_reference_at_the_wrap() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let t = Target::Gfx942;
        // v_add_co_u32_e32 v2, vcc, s10, v0 ; v_addc_co_u32_e64 v1, s[20:21], v3, v1, s[22:23]
        let forms = [
            crate::decode::decode(t, &[0x3204_000A]),
            crate::decode::decode(t, &[0xD11C_1401, 0x005A_0303]),
        ];
        const EDGES: [u32; 6] = [0, 1, u32::MAX, u32::MAX - 1, 0x8000_0000, 0x7FFF_FFFF];
        let sources = [VGPR, VGPR + 1, VGPR + 3, 10, 128 + 1, 193];
        let mut r = 0xC0FF_EE15_0DD5_EED5u64;
        let mut planned = 0;
        let ops = [
            v_add_co_u32,
            v_addc_co_u32,
            v_sub_co_u32,
            v_subb_co_u32,
            v_subrev_co_u32,
            v_subbrev_co_u32,
        ];
        for op in ops {
            for form in forms {
                for &exec in &MASKS {
                    for round in 0..12 {
                        let mut inst = form;
                        inst.op = op;
                        inst.src[0] = sources[round % sources.len()];
                        inst.src[1] = [VGPR + 1, VGPR][round % 2];
                        let [mut a, mut b] = waves(&mut r, exec, 0);
                        for w in [&mut a, &mut b] {
                            let mut q = r;
                            for x in w.v[..4].iter_mut().flatten() {
                                q = q.rotate_left(5) ^ 0x9E37_79B9;
                                *x = EDGES[q as usize % EDGES.len()];
                            }
                            w.s[10] = EDGES[round % EDGES.len()];
                            w.set_sgpr64(VCC, q.rotate_left(17));
                            w.set_sgpr64(22, !q);
                        }
                        r = r.rotate_left(9) ^ round as u64;
                        let what = format!("{} exec {exec:x}", inst.disassemble(t));
                        let plan = inst_plan(&inst).expect("a carry plan");
                        assert!(matches!(plan, Plan::Carry(_)), "{what}");
                        let waves = [&mut a, &mut b];
                        planned_as_reference(&mut parts, &prog, &plan, &inst, waves, &what);
                        planned += 1;
                    }
                }
            }
        }
        assert_eq!(planned, ops.len() * 2 * MASKS.len() * 12);
    }

    /// GLOBAL and FLAT loads and stores (1 to 4 dwords, bytes and shorts with and without
    /// sign, VGPR-pair and SGPR-base addresses) over lane address patterns (contiguous,
    /// reversed, strided, unaligned, running off the region, in the LDS or private aperture)
    /// and every EXEC class: the plan (or the general path where it declines), then memory,
    /// registers and faults against the per-lane reference; aligned units in the region run on
    /// the plan whatever their order and EXEC.
    #[test]
    fn global_plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        const BASE: u64 = 0x10_0000;
        const LEN: u64 = 4096;
        // global_load_dword v6, v[2:3], off ; global_store_dword v[0:1], v6, off
        let load = crate::decode::decode(Target::Gfx942, &[0xDC50_8000, 0x067F_0002]);
        let store = crate::decode::decode(Target::Gfx942, &[0xDC70_8000, 0x007F_0600]);
        // flat_load_dword v6, v[2:3] ; flat_store_dword v[0:1], v6
        let flat_load = crate::decode::decode(Target::Gfx942, &[0xDC50_0000, 0x0600_0002]);
        let flat_store = crate::decode::decode(Target::Gfx942, &[0xDC70_0000, 0x0000_0600]);
        let shared = crate::memory::Apertures::default().shared_base;
        let private = crate::memory::Apertures::default().private_base;
        let widths = [
            (flat_load_dword, flat_store_dword),
            (flat_load_dwordx2, flat_store_dwordx2),
            (flat_load_dwordx3, flat_store_dwordx3),
            (flat_load_dwordx4, flat_store_dwordx4),
            (flat_load_ubyte, flat_store_byte),
            (flat_load_sbyte, flat_store_byte),
            (flat_load_ushort, flat_store_short),
            (flat_load_sshort, flat_store_short),
        ];
        let mut r = 0x1234_5678_9ABC_DEF1u64;
        let mut planned = 0;
        for (lop, sop) in widths {
            for (template, op) in [
                (load, lop),
                (store, sop),
                (flat_load, lop),
                (flat_store, sop),
            ] {
                let flat = template.segment() == crate::decode::seg::FLAT;
                for pattern in 0..9 {
                    for saddr in [false, true] {
                        if flat && saddr {
                            continue;
                        }
                        for &exec in &MASKS {
                            let mut inst = template;
                            inst.op = op;
                            inst.src[2] = if saddr { 40 } else { crate::decode::OFF };
                            let mut mem = RegionMemory::new();
                            let bytes: Vec<u8> = (0..LEN).map(|i| (i * 7 + 3) as u8).collect();
                            // Global memory at the apertures too: a FLAT lane there must still
                            // reach the LDS or private memory, never these bytes.
                            for at in [BASE, shared, private] {
                                mem.add(at, LEN);
                                mem.write(at, &bytes);
                            }
                            let (mut fast_parts, mut ref_parts) =
                                (Parts::new(mem.clone()), Parts::new(mem));
                            let [mut a, mut b] = waves(&mut r, exec, 0);
                            let n = match op {
                                flat_load_dwordx2 | flat_store_dwordx2 => 8,
                                flat_load_dwordx3 | flat_store_dwordx3 => 12,
                                flat_load_dwordx4 | flat_store_dwordx4 => 16,
                                flat_load_ubyte | flat_load_sbyte | flat_store_byte => 1,
                                flat_load_ushort | flat_load_sshort | flat_store_short => 2,
                                _ => 4,
                            };
                            for w in [&mut a, &mut b] {
                                w.set_sgpr64(40, BASE + 64);
                                for l in 0..LANES as u64 {
                                    let off = match pattern {
                                        0 => n * l,
                                        1 => n * (63 - l),
                                        2 => 2 * n * l,
                                        // Unaligned (a short's by one byte).
                                        3 => n * l + 2 + (n == 2) as u64,
                                        4 => n * l + LEN - 8 * n,
                                        // Contiguous, 4-byte but not 8-byte aligned.
                                        5 => n * l + 4,
                                        // Contiguous in the LDS or private aperture.
                                        7 => shared - BASE + n * l,
                                        8 => private - BASE + n * l,
                                        _ => 0,
                                    };
                                    let addr = if saddr { 64 + off } else { BASE + 64 + off };
                                    let v = Wave::vslot(inst.src[0]);
                                    w.v[v][l as usize] = addr as u32;
                                    w.v[v + 1][l as usize] = (addr >> 32) as u32;
                                }
                            }
                            let plan = inst_plan(&inst).expect("a GLOBAL plan");
                            let what = format!("{} pattern {pattern} exec {exec:x}", op.name());
                            let (fast, on_plan) = {
                                let mut ctx = fast_parts.ctx(&prog, true);
                                match run(&mut a, &mut ctx, &plan, inst.counter_class)
                                    .map(Ok::<_, crate::fault::FaultKind>)
                                {
                                    Some(s) => (s, true),
                                    None => (general(&mut a, &mut ctx, &inst), false),
                                }
                            };
                            planned += on_plan as usize;
                            // Aligned units per lane, in order or not, inside the region,
                            // with any lane active: the plan takes them.
                            let scattered = matches!(pattern, 0..=2) && exec != 0;
                            assert!(on_plan || !scattered, "{what}: ran on the plan");
                            let reference =
                                general(&mut b, &mut ref_parts.ctx(&prog, false), &inst);
                            assert_eq!(fast.err(), reference.err(), "{what}");
                            same_state(&a, &b, &what);
                            assert!(fast_parts.mem == ref_parts.mem, "{what}: memory");
                        }
                    }
                }
            }
        }
        assert!(
            planned >= 48,
            "the contiguous cases ran on the plan ({planned})"
        );
    }

    /// GLOBAL and FLAT atomics (32- and 64-bit, returning and not, compare-and-swap among
    /// them) and byte, short and dword loads and stores over lanes at distinct addresses, at
    /// one address (lane order decides), spread over two allocations 64 MiB apart, misaligned,
    /// unmapped and in the LDS aperture, under every EXEC class: the plan (or the general path
    /// where it declines) against the per-lane reference, registers, faults and memory.
    #[test]
    fn global_atomics_and_wide_spreads_match_the_per_lane_reference() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        const BASE: u64 = 0x10_0000;
        const FAR: u64 = BASE + (64 << 20);
        const LEN: u64 = 4096;
        // global_atomic_add v10, v[2:3], v6, off sc0 ; flat_atomic_add v10, v[2:3], v6 sc0
        let global = crate::decode::decode(t, &[0xDD09_8000, 0x0A7F_0602]);
        let flat = crate::decode::decode(t, &[0xDD09_0000, 0x0A00_0602]);
        // global_load_dword v6, v[2:3], off ; global_store_dword v[0:1], v6, off
        let load = crate::decode::decode(t, &[0xDC50_8000, 0x067F_0002]);
        let store = crate::decode::decode(t, &[0xDC70_8000, 0x007F_0600]);
        let shared = crate::memory::Apertures::default().shared_base;
        let mut cases = Vec::new();
        for op in [
            flat_atomic_add,
            flat_atomic_cmpswap,
            flat_atomic_smax,
            flat_atomic_inc,
            flat_atomic_add_x2,
            flat_atomic_cmpswap_x2,
            flat_atomic_umin_x2,
        ] {
            for template in [global, flat] {
                for glc in [true, false] {
                    let mut inst = template;
                    inst.op = op;
                    if !glc {
                        inst.ctrl &= !crate::decode::flags::GLC;
                    }
                    cases.push(inst);
                }
            }
        }
        for (template, op) in [
            (load, flat_load_dword),
            (load, flat_load_dwordx2),
            (load, flat_load_ushort),
            (load, flat_load_sbyte),
            (store, flat_store_dword),
            (store, flat_store_dwordx4),
            (store, flat_store_short),
            (store, flat_store_byte),
        ] {
            cases.push(Inst { op, ..template });
        }
        let mut r = 0x7A70_31C5_0000_0001u64;
        let mut planned = 0;
        for inst in cases {
            let plan = inst_plan(&inst).expect("a GLOBAL plan");
            for pattern in 0..6 {
                for &exec in &MASKS {
                    let mut mem = RegionMemory::new();
                    for at in [BASE, FAR, shared] {
                        mem.add(at, LEN);
                        let bytes: Vec<u8> = (0..LEN).map(|i| (i * 13 + at) as u8).collect();
                        mem.write(at, &bytes);
                    }
                    let (mut fast_parts, mut ref_parts) =
                        (Parts::new(mem.clone()), Parts::new(mem));
                    let [mut a, mut b] = waves(&mut r, exec, 0);
                    for w in [&mut a, &mut b] {
                        for l in 0..LANES as u64 {
                            let addr = match pattern {
                                0 => BASE + 16 * l,
                                // Every lane at one address: lane order decides.
                                1 => BASE + 256,
                                // Alternating between two allocations 64 MiB apart.
                                2 => [BASE, FAR][l as usize % 2] + 16 * l,
                                3 => BASE + 16 * l + 2,
                                4 => FAR + LEN + 16 * l,
                                _ => shared + 16 * l,
                            };
                            let v = Wave::vslot(inst.src[0]);
                            w.v[v][l as usize] = addr as u32;
                            w.v[v + 1][l as usize] = (addr >> 32) as u32;
                        }
                    }
                    let what = format!("{} pattern {pattern} exec {exec:x}", inst.disassemble(t));
                    let (fast, on_plan) = {
                        let mut ctx = fast_parts.ctx(&prog, true);
                        match run(&mut a, &mut ctx, &plan, inst.counter_class) {
                            Some(s) => (Ok(s), true),
                            None => (general(&mut a, &mut ctx, &inst), false),
                        }
                    };
                    planned += on_plan as usize;
                    // Aligned and mapped lanes (a FLAT access's outside the apertures): the
                    // plan takes them.
                    let in_aperture = inst.segment() == crate::decode::seg::FLAT;
                    let plain = pattern <= 2 || (pattern == 5 && !in_aperture);
                    assert!(on_plan || !plain || exec == 0, "{what}: ran on the plan");
                    let reference = general(&mut b, &mut ref_parts.ctx(&prog, false), &inst);
                    assert_eq!(fast.err(), reference.err(), "{what}");
                    same_state(&a, &b, &what);
                    assert!(fast_parts.mem == ref_parts.mem, "{what}: memory");
                }
            }
        }
        assert!(planned >= 300, "{planned} cases ran on the plan");
    }

    /// The plain LDS loads and stores (one address and two, 4- and 8-byte units, the st64
    /// forms) over lane addresses in range, misaligned, straddling the end of the LDS and past
    /// it, over addresses all in range where neighbouring lanes' units overlap, and over eight
    /// lanes at a time in one range or at one address, with the destination also the address
    /// register, under every EXEC class: the loop fixed per operation (each also an LDS plan)
    /// against the per-lane reference, registers and LDS bytes both.
    #[test]
    fn plain_lds_accesses_match_the_per_lane_reference() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        // ds_write2_b32 v0, v1, v2 offset0:3 offset1:200
        let template = crate::decode::decode(t, &[0xD81C_C803, 0x0002_0100]);
        assert_eq!(template.op, ds_write2_b32);
        let ops = [
            ds_read_u8,
            ds_read_i8,
            ds_read_u16,
            ds_read_i16,
            ds_write_b8,
            ds_write_b16,
            ds_read_b32,
            ds_read_b64,
            ds_read_b96,
            ds_read_b128,
            ds_write_b32,
            ds_write_b64,
            ds_write_b96,
            ds_write_b128,
            ds_read2_b32,
            ds_read2st64_b32,
            ds_read2_b64,
            ds_read2st64_b64,
            ds_write2_b32,
            ds_write2st64_b32,
            ds_write2_b64,
            ds_write2st64_b64,
        ];
        const LDS: usize = 4096;
        let mut r = 0x1D5A_CCE5_5000_0001u64;
        let mut ran = 0;
        // Addresses straddling the end (0), or all in range with neighbouring lanes' units
        // overlapping (1), or (2) eight lanes at a time in one range of 4, 8, 1 or 2-byte
        // units or at one address.
        for (op, spread) in ops.into_iter().flat_map(|op| [(op, 0), (op, 1), (op, 2)]) {
            for &exec in &MASKS {
                for (dst, imm) in [(VGPR + 4, 0x0403), (VGPR, 0x0100), (VGPR + 9, 0xFFF0)] {
                    let mut inst = template;
                    (inst.op, inst.dst, inst.imm) = (op, dst, imm);
                    assert!(
                        super::super::memory::PlainDs::of(&inst).is_some(),
                        "{op:?} has an LDS plan"
                    );
                    let [mut a, mut b] = waves(&mut r, exec, 0);
                    for w in [&mut a, &mut b] {
                        for l in 0..LANES {
                            if spread != 0 && imm != 0xFFF0 {
                                w.v[0][l] = match (spread, l / 8) {
                                    // 12 bytes apart, misaligned: wider units overlap the
                                    // next lane's.
                                    (1, _) => l * 12 + l % 3,
                                    (_, 0 | 1) => 4 * l + 1,
                                    (_, 2) => 300,
                                    (_, 3) => 301,
                                    (_, 4 | 5) => 8 * l + 600,
                                    (_, 6) => l + 1500,
                                    _ => 2 * l + 1700,
                                } as u32;
                                continue;
                            }
                            w.v[0][l] = match l % 8 {
                                // In range, aligned or not.
                                0..=3 => (l * 29 % LDS) as u32 & !3,
                                4 => (l * 31 % LDS) as u32 | 1,
                                // Ending 4 to 1 bytes before the end (with the offset):
                                // wider units straddle it. Or past it.
                                5 => (LDS as u32 - 4 + (l / 8 % 4) as u32).wrapping_sub(imm as u32),
                                6 => (LDS + 8 * l) as u32,
                                _ => u32::MAX - 3,
                            };
                        }
                    }
                    let (mut pa, mut pb) = (
                        Parts::new(RegionMemory::new()),
                        Parts::new(RegionMemory::new()),
                    );
                    pa.lds = (0..LDS)
                        .map(|k| (k as u64).wrapping_mul(r) as u8 ^ (k >> 3) as u8)
                        .collect();
                    pb.lds = pa.lds.clone();
                    let fast = super::super::memory::exec(&mut a, &mut pa.ctx(&prog, true), &inst);
                    let reference =
                        super::super::memory::exec(&mut b, &mut pb.ctx(&prog, false), &inst);
                    let what = format!("{} exec {exec:x}", inst.disassemble(t));
                    assert!(fast.is_ok() && reference.is_ok(), "{what}");
                    same_state(&a, &b, &what);
                    assert!(pa.lds == pb.lds, "{what}: LDS bytes");
                    ran += 1;
                }
            }
        }
        assert_eq!(ran, 3 * ops.len() * MASKS.len() * 3);
    }

    /// An LDS address is the address register plus the offset in 32 bits: a negative base
    /// with a positive offset (clang folds `base - k` into the offset this way) reaches low
    /// LDS, on the plan and the per-lane path, for loads, stores and atomics alike.
    #[test]
    fn lds_addresses_wrap_in_32_bits() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        // ds_write2_b32 v0, v1, v2 offset0:3 offset1:200, as a template.
        let template = crate::decode::decode(t, &[0xD81C_C803, 0x0002_0100]);
        let mut r = 0x5EED_0F1D_5EED_0F1Du64;
        for op in [ds_read_b32, ds_write_b32, ds_add_u32, ds_read_b64] {
            for fast in [true, false] {
                let mut inst = template;
                (inst.op, inst.dst, inst.imm) = (op, VGPR + 4, 8);
                let [mut w, _] = waves(&mut r, u64::MAX, 0);
                for l in 0..LANES {
                    // Lane l: base 4l - 4 (lane 0's is 0xFFFFFFFC), offset 8: byte 4l + 4.
                    w.v[0][l] = (4 * l as u32).wrapping_sub(4);
                    w.v[1][l] = 1000 + l as u32;
                }
                let mut parts = Parts::new(RegionMemory::new());
                parts.lds = (0..1024u32)
                    .flat_map(|k| k.to_le_bytes())
                    .take(1024)
                    .collect();
                let before = parts.lds.clone();
                let done = super::super::memory::exec(&mut w, &mut parts.ctx(&prog, fast), &inst);
                assert!(done.is_ok(), "{op:?}");
                let word = |lds: &[u8], k: usize| {
                    u32::from_le_bytes(lds[4 * k..4 * k + 4].try_into().unwrap())
                };
                for l in 0..LANES {
                    let k = l + 1;
                    let what = format!("{op:?} fast {fast} lane {l}");
                    match op {
                        ds_read_b32 => assert_eq!(w.v[4][l], word(&before, k), "{what}"),
                        ds_read_b64 => assert_eq!(
                            [w.v[4][l], w.v[5][l]],
                            [word(&before, k), word(&before, k + 1)],
                            "{what}"
                        ),
                        ds_write_b32 => assert_eq!(word(&parts.lds, k), 1000 + l as u32, "{what}"),
                        _ => assert_eq!(
                            word(&parts.lds, k),
                            word(&before, k) + 1000 + l as u32,
                            "{what}"
                        ),
                    }
                }
            }
        }
    }

    /// Every DS atomic (32- and 64-bit, returning and not, compare-and-store, mskor, wrap,
    /// the float ones) over lanes at distinct addresses, at one address (lane order decides),
    /// straddling the end of the LDS and past it, under every EXEC class: the plan against the
    /// per-lane reference, registers and LDS bytes.
    #[test]
    fn lds_atomics_match_the_per_lane_reference() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        // ds_add_rtn_u32 v4, v0, v6 offset:8
        let template = crate::decode::decode(t, &[0xD840_0008, 0x0400_0600]);
        assert_eq!(template.op, ds_add_rtn_u32);
        const LDS: usize = 1024;
        let mut r = 0x0A70_31C5_1D5A_0001u64;
        let mut names = std::collections::BTreeSet::new();
        for op in Op::ALL.iter().copied() {
            let inst = Inst {
                op,
                src: [VGPR, VGPR + 6, VGPR + 9],
                ..template
            };
            let Some(plan @ Plan::LdsAtomic(_)) = inst_plan(&inst) else {
                continue;
            };
            names.insert(op.name());
            for spread in 0..4 {
                for &exec in &MASKS {
                    let [mut a, mut b] = waves(&mut r, exec, 0);
                    for w in [&mut a, &mut b] {
                        for l in 0..LANES {
                            w.v[0][l] = match spread {
                                0 => 8 * l,
                                1 => 64,
                                2 => LDS - 12 + 4 * (l % 4),
                                _ => LDS + 8 * l,
                            } as u32;
                        }
                    }
                    let (mut pa, mut pb) = (
                        Parts::new(RegionMemory::new()),
                        Parts::new(RegionMemory::new()),
                    );
                    pa.lds = (0..LDS).map(|k| (k as u64).wrapping_mul(r) as u8).collect();
                    pb.lds = pa.lds.clone();
                    let what = format!("{} spread {spread} exec {exec:x}", inst.disassemble(t));
                    let flow = run(&mut a, &mut pa.ctx(&prog, true), &plan, inst.counter_class);
                    let reference = general(&mut b, &mut pb.ctx(&prog, false), &inst);
                    assert!(
                        matches!(flow, Some(Flow::Next)) && reference.is_ok(),
                        "{what}"
                    );
                    same_state(&a, &b, &what);
                    assert!(pa.lds == pb.lds, "{what}: LDS bytes");
                }
            }
        }
        for op in [
            "ds_add_u32",
            "ds_add_rtn_u32",
            "ds_max_rtn_i32",
            "ds_cmpst_rtn_b32",
            "ds_cmpst_b64",
            "ds_mskor_b32",
            "ds_wrap_rtn_b32",
            "ds_add_f32",
            "ds_min_u64",
            "ds_add_rtn_f64",
        ] {
            assert!(names.contains(op), "{op} has no LDS atomic plan");
        }
    }

    /// `ds_swizzle_b32` (both offset modes), `ds_permute_b32` and `ds_bpermute_b32` run as
    /// plans, with the same registers and lane count as on the per-lane reference, under every
    /// EXEC class.
    #[test]
    fn cross_lane_moves_run_as_plans() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        // ds_bpermute_b32 v3, v0, v1 offset:4
        let template = crate::decode::decode(t, &[0xD87E_0004, 0x0300_0100]);
        assert_eq!(template.op, ds_bpermute_b32);
        let mut r = 0x5EED_0000_0000_0077u64;
        for (op, imm) in [
            (ds_bpermute_b32, 4),
            (ds_permute_b32, 8),
            (ds_swizzle_b32, 0x041F),
            (ds_swizzle_b32, 0x80E4),
        ] {
            let mut inst = template;
            (inst.op, inst.imm) = (op, imm);
            let Some(plan @ Plan::CrossLane(_)) = inst_plan(&inst) else {
                panic!("{op:?} has no cross-lane plan");
            };
            for &exec in &MASKS {
                let [mut a, mut b] = waves(&mut r, exec, 0);
                let (mut pa, mut pb) = (
                    Parts::new(RegionMemory::new()),
                    Parts::new(RegionMemory::new()),
                );
                let flow = super::run(&mut a, &mut pa.ctx(&prog, true), &plan, 0);
                let reference =
                    super::super::memory::exec(&mut b, &mut pb.ctx(&prog, false), &inst);
                let what = format!("{} exec {exec:x}", inst.disassemble(t));
                assert!(
                    matches!(flow, Some(Flow::Next)) && reference.is_ok(),
                    "{what}"
                );
                same_state(&a, &b, &what);
                assert_eq!(a.lane_insts, u64::from(exec.count_ones()), "{what}");
            }
        }
    }
}
