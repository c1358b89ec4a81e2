//! Vector ALU: VOP1, VOP2, VOPC, VOP3, VOP3P (with MFMA), DPP and SDWA forms.

use half::f16;

use crate::decode::{Enc, Ext, Inst, Op, Op::*, Ty, VCC, VGPR};
use crate::wave::{LANES, Wave};

use super::float::{self, Env, Rounded, d, f, h};
use super::matrix;
use super::{Ctx, Flow, Step, check_sources, illegal, sread, sread64};

type Lanes = [u64; LANES];

/// Read source `k` for every lane (unmodified bits).
fn fetch(w: &Wave, ctx: &Ctx<'_>, inst: &Inst, k: usize, ty: Ty) -> Lanes {
    let mut out = [0u64; LANES];
    fetch_into(&mut out, w, ctx, inst, k, ty);
    out
}

/// [`fetch`] into a caller's array.
fn fetch_into(out: &mut Lanes, w: &Wave, ctx: &Ctx<'_>, inst: &Inst, k: usize, ty: Ty) {
    let code = inst.src[k];
    if code >= VGPR {
        let slot = Wave::vslot(code);
        if ty.dwords() == 2 {
            let lo = &w.v[slot & 511];
            let hi = &w.v[(slot + 1) & 511];
            for l in 0..LANES {
                out[l] = lo[l] as u64 | (hi[l] as u64) << 32;
            }
        } else {
            let r = &w.v[slot & 511];
            for l in 0..LANES {
                out[l] = r[l] as u64;
            }
        }
    } else {
        let v = if ty.dwords() == 2 {
            sread64(w, ctx, code, ty, inst.lit)
        } else {
            sread(w, ctx, code, ty, inst.lit) as u64
        };
        *out = [v; LANES];
    }
}

/// Apply abs/neg (float types only).
fn modify(v: &mut Lanes, ty: Ty, neg: bool, abs: bool) {
    let sign: u64 = match ty {
        // Untyped 32/64-bit operands with modifiers (v_cndmask_b32_e64 |v|) act on the sign bit.
        Ty::F32 | Ty::B32 => 1 << 31,
        Ty::F64 | Ty::B64 => 1 << 63,
        Ty::F16 => 1 << 15,
        _ => return,
    };
    if abs {
        for x in v.iter_mut() {
            *x &= !sign;
        }
    }
    if neg {
        for x in v.iter_mut() {
            *x ^= sign;
        }
    }
}

fn sdwa_select(v: u64, sel: u32, sext: bool) -> u64 {
    let v = v as u32;
    let r = match sel & 7 {
        0..=3 => {
            let b = (v >> (8 * (sel & 3))) & 0xFF;
            if sext { b as u8 as i8 as i32 as u32 } else { b }
        }
        4 | 5 => {
            let x = (v >> (16 * (sel & 1))) & 0xFFFF;
            if sext {
                x as u16 as i16 as i32 as u32
            } else {
                x
            }
        }
        _ => v,
    };
    r as u64
}

/// DPP: for each lane, the source lane or None (invalid).
fn dpp_source(ctrl: u32, lane: usize) -> Option<usize> {
    let row = lane & !15;
    let i = lane & 15;
    match ctrl {
        0..=0xFF => Some((lane & !3) | ((ctrl as usize >> (2 * (lane & 3))) & 3)),
        0x101..=0x10F => {
            let n = (ctrl & 15) as usize;
            (i + n < 16).then_some(lane + n)
        }
        0x111..=0x11F => {
            let n = (ctrl & 15) as usize;
            (i >= n).then(|| lane - n)
        }
        0x121..=0x12F => {
            let n = (ctrl & 15) as usize;
            Some(row + ((i + 16 - n) & 15))
        }
        0x130 => (lane < 63).then_some(lane + 1),
        0x134 => Some((lane + 1) & 63),
        0x138 => (lane > 0).then(|| lane - 1),
        0x13C => Some((lane + 63) & 63),
        0x140 => Some(row + 15 - i),
        0x141 => Some((lane & !7) + 7 - (lane & 7)),
        0x142 => (row >= 16).then(|| row - 1),
        0x143 => (row >= 32).then_some(31),
        _ => None,
    }
}

/// Everything the per-lane functions need besides the operands.
struct Ln {
    env: Env,
    lane: u32,
    carry: bool,
    /// The clamp bit, for the integer operations that saturate under it (see
    /// [`saturates`]) and the conversions to 8-bit floats.
    clamp: bool,
    /// The VOP3 op_sel bits, for the conversions to 8-bit floats (bit 3 picks the word).
    op_sel: u8,
}

impl Ln {
    /// Lane `l` of an operation without clamp or op_sel, its carry-in bit `l` of `carry`.
    fn plain(env: Env, l: usize, carry: u64) -> Ln {
        Ln {
            env,
            lane: l as u32,
            carry: carry >> l & 1 != 0,
            clamp: false,
            op_sel: 0,
        }
    }
}

type LaneFn = fn(&Ln, u64, u64, u64) -> (u64, bool);

/// How the result is written.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    /// The VGPR destination.
    V,
    /// A lane mask (VOPC): VCC or the SGPR pair; `cmpx` also writes EXEC.
    Mask { exec: bool },
    /// The VGPR destination and a carry/flag mask (VOP3b).
    VMask,
}

fn float_op(op: Op) -> bool {
    // `v_pk_mov_b32` moves dwords: it rounds nothing, whatever its operands' packed-f32 type.
    op != v_pk_mov_b32
        && op
            .types()
            .iter()
            .any(|t| matches!(t, Ty::F16 | Ty::F32 | Ty::F64 | Ty::PF32 | Ty::P16))
}

/// Per-operation facts looked up once per instruction.
struct Info {
    float: bool,
    nsrc: usize,
    lane: Option<(LaneFn, Out)>,
    /// [`fast_path`] has a loop for it: it may run on register rows ([`row_path`]).
    rows: bool,
}

fn info(op: Op) -> &'static Info {
    static INFO: std::sync::OnceLock<Vec<Info>> = std::sync::OnceLock::new();
    &INFO.get_or_init(|| {
        Op::ALL
            .iter()
            .map(|&o| Info {
                float: float_op(o),
                nsrc: o.types().len().saturating_sub(1).min(3),
                lane: lane_fn(o),
                rows: FAST_OPS.contains(&o),
            })
            .collect()
    })[op as usize]
}

pub(super) fn exec(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let facts = info(op);
    check_sources(inst, facts.nsrc)?;
    if inst.enc == Enc::Vop3 && inst.op_sel != 0 {
        check_op_sel(inst)?;
    }
    if facts.float && w.mode & 0xF != 0 {
        if let Some(step) = directed_f32(w, ctx, inst) {
            return step;
        }
        return Err(illegal(format!(
            "{} with rounding mode 0x{:x} (only round-to-nearest-even is emulated)",
            op.name(),
            w.mode & 0xF
        )));
    }
    if let Some(reason) = refused(op) {
        return Err(illegal(format!("{} is not emulated: {reason}", op.name())));
    }
    if inst.enc == Enc::Vop3
        && is_packed_accumulation(op)
        && ((inst.neg | inst.abs | inst.omod) != 0 || (op == v_pk_fmac_f16 && inst.clamp))
    {
        return Err(illegal(format!(
            "{}_e64 with source or output modifiers is not emulated",
            op.name()
        )));
    }
    if inst.enc == Enc::Vop3p {
        return vop3p(w, ctx, inst);
    }
    let exec = w.exec();
    if ctx.fast && facts.rows && row_path(w, ctx, inst, facts.nsrc, exec) {
        return Ok(Flow::Next);
    }
    if inst.enc == Enc::Vop3 && inst.op_sel != 0 && eight_bit_float_conversion(op) {
        return Err(illegal(format!(
            "{}_e64 with op_sel (a byte or word select) is not emulated; the SDWA form is",
            op.name()
        )));
    }
    exec_lanes(w, ctx, inst, exec)
}

/// Operations decoded but not run, with the reason: their results depend on details (table
/// contents, rounding of the normalised and 8-bit conversions, legacy special cases, the sparse
/// and xf32 matrix formats) that the ISA documents do not pin down well enough to emulate
/// without guessing.
fn refused(op: Op) -> Option<&'static str> {
    Some(match op {
        v_screen_partition_4se_b32 => "its screen-partition table is not documented",
        v_exp_legacy_f32 | v_log_legacy_f32 => {
            "the special cases of the pre-GCN3 legacy precision are not documented"
        }
        v_cvt_norm_i16_f16 | v_cvt_norm_u16_f16 | v_cvt_pknorm_i16_f32 | v_cvt_pknorm_u16_f32
        | v_cvt_pknorm_i16_f16 | v_cvt_pknorm_u16_f16 => {
            "the rounding of the normalised conversions is not documented"
        }
        v_cvt_pk_u8_f32 | v_cvt_pkaccum_u8_f32 => {
            "the rounding of the float-to-byte conversion is not documented"
        }
        v_cvt_sr_fp8_f32 | v_cvt_sr_bf8_f32 => {
            "which bits of the random operand stochastic rounding adds is not documented"
        }
        v_mfma_f32_16x16x8_xf32 | v_mfma_f32_32x32x4_xf32 => {
            "the rounding of f32 inputs to xf32 is not documented"
        }
        v_smfmac_f32_16x16x32_bf16
        | v_smfmac_f32_16x16x32_f16
        | v_smfmac_f32_16x16x64_bf8_bf8
        | v_smfmac_f32_16x16x64_bf8_fp8
        | v_smfmac_f32_16x16x64_fp8_bf8
        | v_smfmac_f32_16x16x64_fp8_fp8
        | v_smfmac_f32_32x32x16_bf16
        | v_smfmac_f32_32x32x16_f16
        | v_smfmac_f32_32x32x32_bf8_bf8
        | v_smfmac_f32_32x32x32_bf8_fp8
        | v_smfmac_f32_32x32x32_fp8_bf8
        | v_smfmac_f32_32x32x32_fp8_fp8
        | v_smfmac_i32_16x16x64_i8
        | v_smfmac_i32_32x32x32_i8 => {
            "the sparse MFMAs (4:2 structured sparsity with an index operand) are not implemented"
        }
        _ => return None,
    })
}

/// The op_sel bits of a VOP3 operation that select the high half of a 16-bit source (bit `k`
/// for source `k`).
fn op_sel_sources(op: Op) -> u8 {
    op.op_sel().map_or(0, |f| f.sources)
}

/// The 16-bit VOP3 operations whose op_sel bit 3 writes the result to the destination's high
/// half, keeping the low half.
fn op_sel_writes_high(op: Op) -> bool {
    op.op_sel().is_some_and(|f| f.writes_high)
}

/// Refuses a VOP3 instruction whose op_sel bits (set) are not all emulated exactly: an
/// operation without op_sel on GFX9 (every promoted VOP1/VOP2/VOPC one: LLVM neither accepts
/// nor prints the bits there, so their meaning is undefined), a bit naming a 32-bit operand,
/// the operations LLVM accepts op_sel on without a documented GFX9 meaning, and a high-half
/// select of an inline constant or literal.
fn check_op_sel(inst: &Inst) -> Result<(), crate::fault::FaultKind> {
    let op = inst.op;
    let name = op.name();
    let sel = inst.op_sel;
    let refuse = |why: String| {
        Err(illegal(format!(
            "{name} (VOP3) with op_sel bits {sel:#06b}: {why}"
        )))
    };
    match op {
        // The 8-bit float packing conversions: bit 3 picks the destination word.
        v_cvt_pk_fp8_f32 | v_cvt_pk_bf8_f32 if sel & 7 == 0 => return Ok(()),
        v_cvt_pk_fp8_f32 | v_cvt_pk_bf8_f32 => {
            return refuse("source op_sel bits are undefined for it".into());
        }
        // Byte or word selects: refused further on with their own reason.
        _ if eight_bit_float_conversion(op) => return Ok(()),
        // Refused whatever their operands.
        v_cvt_sr_fp8_f32 | v_cvt_sr_bf8_f32 | v_cvt_pknorm_i16_f16 | v_cvt_pknorm_u16_f16 => {
            return Ok(());
        }
        v_alignbit_b32 | v_alignbyte_b32 => {
            return refuse(
                "LLVM accepts op_sel on it but its GFX9 meaning is not documented; not emulated"
                    .into(),
            );
        }
        _ => {}
    }
    let sources = op_sel_sources(op);
    if sources == 0 {
        return refuse("the operation has no op_sel on GFX9 (undefined); not emulated".into());
    }
    let defined = sources | if op_sel_writes_high(op) { 8 } else { 0 };
    if sel & !defined != 0 {
        return refuse(format!(
            "op_sel bits {:#06b} name 32-bit or missing operands (undefined); not emulated",
            sel & !defined
        ));
    }
    for k in 0..3 {
        if (sel & sources) >> k & 1 != 0 && !(inst.src[k] < 128 || inst.src[k] >= VGPR) {
            return refuse(format!(
                "the high half of the constant source {k} is not emulated"
            ));
        }
    }
    Ok(())
}

/// The accumulating operations on packed halves (the dot products into the destination and
/// `v_pk_fmac_f16`): their lane functions see whole dwords, so the per-half source modifiers of
/// a VOP3 form are not applied.
fn is_packed_accumulation(op: Op) -> bool {
    matches!(
        op,
        v_dot2c_f32_f16 | v_dot2c_i32_i16 | v_dot4c_i32_i8 | v_dot8c_i32_i4 | v_pk_fmac_f16
    )
}

/// The conversions from gfx942's 8-bit floats, whose VOP3 form selects the source byte (or
/// word) with op_sel.
fn eight_bit_float_conversion(op: Op) -> bool {
    matches!(
        op,
        v_cvt_f32_fp8 | v_cvt_f32_bf8 | v_cvt_pk_f32_fp8 | v_cvt_pk_f32_bf8
    )
}

/// [`exec`] through per-lane sources: the lane-exchange operations, then every operation's
/// lane function (or a specialised loop) over the fetched and modified sources.
fn exec_lanes(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst, exec: u64) -> Step {
    let op = inst.op;
    let facts = info(op);
    match op {
        // The emulator keeps no exception state to clear.
        v_nop | v_clrexcp => return Ok(Flow::Next),
        v_mqsad_u32_u8 => return mqsad_u32(w, ctx, inst, exec),
        v_readfirstlane_b32 => {
            let lane = if exec == 0 {
                0
            } else {
                exec.trailing_zeros() as usize
            };
            let v = fetch(w, ctx, inst, 0, Ty::B32)[lane];
            w.set_sgpr(inst.dst, v as u32);
            return Ok(Flow::Next);
        }
        v_readlane_b32 => {
            let lane = (sread(w, ctx, inst.src[1], Ty::B32, inst.lit) & 63) as usize;
            let v = fetch(w, ctx, inst, 0, Ty::B32)[lane];
            w.set_sgpr(inst.dst, v as u32);
            return Ok(Flow::Next);
        }
        v_writelane_b32 => {
            let lane = (sread(w, ctx, inst.src[1], Ty::B32, inst.lit) & 63) as usize;
            let v = sread(w, ctx, inst.src[0], Ty::B32, inst.lit);
            w.v[Wave::vslot(inst.dst)][lane] = v;
            return Ok(Flow::Next);
        }
        v_swap_b32 => {
            let a = Wave::vslot(inst.dst);
            let b = Wave::vslot(inst.src[0]);
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    let t = w.v[a][l];
                    w.v[a][l] = w.v[b][l];
                    w.v[b][l] = t;
                }
            }
            w.lane_insts += exec.count_ones() as u64;
            return Ok(Flow::Next);
        }
        _ => {}
    }
    let Some((func, out)) = facts.lane else {
        return Err(illegal(format!("{} is not implemented", op.name())));
    };
    if inst.clamp && !facts.float && !saturates(op) {
        return Err(illegal(format!("{} with clamp is not emulated", op.name())));
    }
    let types = op.types();
    let nsrc = (types.len() - 1).min(3);
    let (neg, abs) = match inst.ext {
        Ext::Dpp => (
            ((inst.ctrl >> 20) & 1 | ((inst.ctrl >> 22) & 1) << 1) as u8,
            (((inst.ctrl >> 21) & 1) | ((inst.ctrl >> 23) & 1) << 1) as u8,
        ),
        Ext::Sdwa => (
            ((inst.ctrl >> 20) & 1 | ((inst.ctrl >> 28) & 1) << 1) as u8,
            (((inst.ctrl >> 21) & 1) | ((inst.ctrl >> 29) & 1) << 1) as u8,
        ),
        Ext::None => (inst.neg, inst.abs),
    };
    // Operand arrays live in a per-thread scratch area (no 1.5 KiB zeroing per instruction);
    // operations read only the sources they have.
    SOURCES.with(|cell| {
        let mut srcs = cell.borrow_mut();
        lanes(
            w,
            ctx,
            inst,
            LaneJob {
                func,
                out,
                types,
                nsrc,
                neg,
                abs,
                exec,
            },
            &mut srcs,
        )
    })
}

/// The operations [`fast_path`] has loops for.
const FAST_OPS: [Op; 23] = [
    v_mov_b32,
    v_add_u32,
    v_sub_u32,
    v_subrev_u32,
    v_and_b32,
    v_or_b32,
    v_xor_b32,
    v_lshlrev_b32,
    v_lshrrev_b32,
    v_ashrrev_i32,
    v_mul_lo_u32,
    v_mul_u32_u24,
    v_add3_u32,
    v_lshl_add_u32,
    v_lshl_or_b32,
    v_cndmask_b32,
    v_add_f32,
    v_sub_f32,
    v_mul_f32,
    v_fma_f32,
    v_fmac_f32,
    v_fmaak_f32,
    v_fmamk_f32,
];

/// A 32-bit operation run straight on the register rows: the sources are read as 32-bit rows
/// (a VGPR copied, a scalar or constant splat; neg/abs applied) and [`fast_path`] writes the
/// destination row under EXEC. False (nothing done) when the instruction has an output
/// modifier, a DPP/SDWA form, a 64-bit operand or a source the generic path must reject.
fn row_path(w: &mut Wave, ctx: &Ctx<'_>, inst: &Inst, nsrc: usize, exec: u64) -> bool {
    let op = inst.op;
    let types = op.types();
    if inst.ext != Ext::None
        || inst.omod != 0
        || inst.clamp
        || types.iter().any(|t| t.dwords() != 1)
        || inst.src[..nsrc].iter().any(|&c| !super::is_known_source(c))
    {
        return false;
    }
    // Sources other than an unmodified VGPR (read in place): a splat or a modified copy.
    let mut own = [[0u32; LANES]; 3];
    let mut in_place = [None::<usize>; 3];
    for k in 0..nsrc {
        let code = inst.src[k];
        let (neg, abs) = (inst.neg >> k & 1 != 0, inst.abs >> k & 1 != 0);
        if code >= VGPR && !neg && !abs {
            in_place[k] = Some(Wave::vslot(code) & 511);
            continue;
        }
        own[k] = if code >= VGPR {
            w.v[Wave::vslot(code) & 511]
        } else {
            [sread(w, ctx, code, types[k + 1], inst.lit); LANES]
        };
        if neg || abs {
            // As `modify`: the sign bit of 32-bit float and untyped operands.
            if !matches!(types[k + 1], Ty::F32 | Ty::B32) {
                return false;
            }
            let (clear, flip) = (if abs { 1 << 31 } else { 0 }, if neg { 1 << 31 } else { 0 });
            for x in own[k].iter_mut() {
                *x = (*x & !clear) ^ flip;
            }
        }
    }
    match op {
        v_fmamk_f32 => {
            (in_place[2], own[2]) = (in_place[1], own[1]);
            (in_place[1], own[1]) = (None, [inst.lit; LANES]);
        }
        v_fmaak_f32 => (in_place[2], own[2]) = (None, [inst.lit; LANES]),
        _ => {}
    }
    let carry = match op {
        v_cndmask_b32 if inst.enc == Enc::Vop3 => sread64(w, ctx, inst.src[2], Ty::B64, inst.lit),
        v_cndmask_b32 => w.vcc(),
        _ => 0,
    };
    let env = Env::from_mode(w.mode);
    let dst = Wave::vslot(inst.dst) & 511;
    let mut out = w.v[dst];
    let row = |k: usize| in_place[k].map_or(&own[k], |slot| &w.v[slot]);
    if !fast_path(op, &mut out, exec, [row(0), row(1), row(2)], &env, carry) {
        return false;
    }
    w.v[dst] = out;
    w.lane_insts += exec.count_ones() as u64;
    true
}

thread_local! {
    static SOURCES: std::cell::RefCell<Box<[Lanes; 3]>> = std::cell::RefCell::new(Box::new([[0; LANES]; 3]));
}

/// The decoded facts [`lanes`] needs.
struct LaneJob {
    func: LaneFn,
    out: Out,
    types: &'static [Ty],
    nsrc: usize,
    neg: u8,
    abs: u8,
    exec: u64,
}

/// Fetch the sources and run the lane function over the active lanes.
fn lanes(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    inst: &Inst,
    job: LaneJob,
    srcs: &mut [Lanes; 3],
) -> Step {
    fetch_sources(w, ctx, inst, &job, srcs);
    let run = LaneRun {
        inst,
        func: job.func,
        out: job.out,
        types: job.types,
        env: Env::from_mode(w.mode),
        carry_in: carry_in(w, ctx, inst),
        write_mask: dpp_move(inst, job.exec, srcs),
        fast: ctx.fast,
    };
    let mask_out = run.compute(w, srcs);
    w.lane_insts += run.write_mask.count_ones() as u64;
    run.write_lane_mask(w, mask_out);
    Ok(Flow::Next)
}

/// Reads the sources into `srcs` with their SDWA selection and neg/abs, and places the
/// literal K operand of `madmk`/`madak`/`fmamk`/`fmaak`.
fn fetch_sources(w: &Wave, ctx: &Ctx<'_>, inst: &Inst, job: &LaneJob, srcs: &mut [Lanes; 3]) {
    for k in 0..job.nsrc {
        let ty = job.types[k + 1];
        fetch_into(&mut srcs[k], w, ctx, inst, k, ty);
        if (240..=248).contains(&inst.src[k]) && inst.op.int16_source(k) {
            // 16-bit integer operands read a float inline constant as its f16 bits.
            srcs[k] = [crate::decode::ops::f16_inline_bits(inst.src[k]) as u64; LANES];
        }
        if inst.enc == Enc::Vop3 && (inst.op_sel & op_sel_sources(inst.op)) >> k & 1 != 0 {
            for x in srcs[k].iter_mut() {
                *x = (*x >> 16) & 0xFFFF;
            }
        }
        if inst.ext == Ext::Sdwa && k < 2 {
            let (sel, sext) = if k == 0 {
                (inst.ctrl >> 16, (inst.ctrl >> 19) & 1 != 0)
            } else {
                (inst.ctrl >> 24, (inst.ctrl >> 27) & 1 != 0)
            };
            for x in srcs[k].iter_mut() {
                *x = sdwa_select(*x, sel, sext);
            }
        }
        modify(
            &mut srcs[k],
            ty,
            job.neg >> k & 1 != 0,
            job.abs >> k & 1 != 0,
        );
    }
    match inst.op {
        v_madmk_f32 | v_fmamk_f32 | v_madmk_f16 => {
            srcs[2] = srcs[1];
            srcs[1] = [inst.lit as u64; LANES];
        }
        v_madak_f32 | v_fmaak_f32 | v_madak_f16 => srcs[2] = [inst.lit as u64; LANES],
        _ => {}
    }
}

/// The carry-in or condition mask the operation reads (VCC, or an SGPR pair in VOP3).
fn carry_in(w: &Wave, ctx: &Ctx<'_>, inst: &Inst) -> u64 {
    match inst.op {
        v_cndmask_b32 | v_addc_co_u32 | v_subb_co_u32 | v_subbrev_co_u32 => {
            if inst.enc == Enc::Vop3 {
                sread64(w, ctx, inst.src[2], Ty::B64, inst.lit)
            } else {
                w.vcc()
            }
        }
        v_div_fmas_f32 | v_div_fmas_f64 => w.vcc(),
        _ => 0,
    }
}

/// DPP: moves src0 between lanes; returns EXEC without the lanes the row and bank masks (or a
/// missing source lane without `bound_ctrl`) disable.
fn dpp_move(inst: &Inst, exec: u64, srcs: &mut [Lanes; 3]) -> u64 {
    let mut write_mask = exec;
    if inst.ext != Ext::Dpp {
        return write_mask;
    }
    let ctrl = (inst.ctrl >> 8) & 0x1FF;
    let bound_zero = (inst.ctrl >> 19) & 1 != 0;
    let row_mask = inst.ctrl >> 28;
    let bank_mask = (inst.ctrl >> 24) & 0xF;
    let s0 = srcs[0];
    for l in 0..LANES {
        if (row_mask >> (l / 16)) & 1 == 0 || (bank_mask >> ((l / 4) & 3)) & 1 == 0 {
            write_mask &= !(1 << l);
            continue;
        }
        match dpp_source(ctrl, l) {
            Some(s) if exec >> s & 1 != 0 => srcs[0][l] = s0[s],
            _ => {
                if bound_zero {
                    srcs[0][l] = 0;
                } else {
                    write_mask &= !(1 << l);
                }
            }
        }
    }
    write_mask
}

/// One per-lane execution of an instruction, its sources fetched.
struct LaneRun<'a> {
    inst: &'a Inst,
    func: LaneFn,
    out: Out,
    types: &'static [Ty],
    env: Env,
    carry_in: u64,
    /// The lanes written (EXEC, less those DPP disables).
    write_mask: u64,
    /// Specialised loops allowed (else the lane function runs lane by lane).
    fast: bool,
}

impl LaneRun<'_> {
    fn is_mask(&self) -> bool {
        matches!(self.out, Out::Mask { .. })
    }

    fn dst_wide(&self) -> bool {
        self.types[0].dwords() == 2 && !self.is_mask()
    }

    /// Writes the result lanes with a specialised loop when one fits, else lane by lane;
    /// returns the lane mask the operation produced (compare results, carries).
    fn compute(&self, w: &mut Wave, srcs: &[Lanes; 3]) -> u64 {
        let inst = self.inst;
        let op = inst.op;
        let (mask, carry) = (self.write_mask, self.carry_in);
        let is_mask = self.is_mask();
        let dst_slot = if is_mask { 0 } else { Wave::vslot(inst.dst) };
        let dst_wide = self.dst_wide();
        let simple = !is_mask
            && !dst_wide
            && inst.ext != Ext::Sdwa
            && inst.omod == 0
            && !inst.clamp
            && !writes_high_half(inst);
        if !self.fast {
            return if simple && !is_mac(op) {
                self.plain_lanes(w, dst_slot, srcs)
            } else {
                self.general_lanes(w, dst_slot, srcs)
            };
        }
        let wide_simple = dst_wide
            && inst.ext == Ext::None
            && inst.omod == 0
            && !inst.clamp
            && self.out == Out::V
            && dst_slot < 511;
        let carry_simple =
            self.out == Out::VMask && !dst_wide && inst.ext == Ext::None && !inst.clamp;
        let rows = || narrow(srcs);
        let specialised = (simple
            && self.out == Out::V
            && fast_path(
                op,
                &mut w.v[dst_slot],
                mask,
                rows().each_ref(),
                &self.env,
                carry,
            ))
            || (wide_simple && {
                let (lo, hi) = w.v.split_at_mut(dst_slot + 1);
                fast_path_wide(op, &mut lo[dst_slot], &mut hi[0], mask, srcs)
            });
        if specialised {
            0
        } else if is_mask
            && inst.ext == Ext::None
            && let Some(m) = fast_compare(op, mask, srcs)
        {
            m
        } else if carry_simple
            && let Some(m) = fast_path_carry(op, &mut w.v[dst_slot], mask, srcs, carry)
        {
            m
        } else if simple && !is_mac(op) {
            self.plain_lanes(w, dst_slot, srcs)
        } else {
            self.general_lanes(w, dst_slot, srcs)
        }
    }

    /// The common case: a 32-bit result written to active lanes.
    fn plain_lanes(&self, w: &mut Wave, dst_slot: usize, srcs: &[Lanes; 3]) -> u64 {
        let mut mask_out = 0u64;
        let mut m = self.write_mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let (r, flag) = (self.func)(&self.lane(l), srcs[0][l], srcs[1][l], srcs[2][l]);
            mask_out |= (flag as u64) << l;
            w.v[dst_slot][l] = r as u32;
        }
        mask_out
    }

    /// Every other form: accumulators, 64-bit results, masks only, output modifiers, SDWA.
    fn general_lanes(&self, w: &mut Wave, dst_slot: usize, srcs: &[Lanes; 3]) -> u64 {
        let inst = self.inst;
        let (is_mask, dst_wide, mac) = (self.is_mask(), self.dst_wide(), is_mac(inst.op));
        let mut mask_out = 0u64;
        let mut m = self.write_mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let old = if dst_wide {
                w.v[dst_slot][l] as u64 | (w.v[(dst_slot + 1) & 511][l] as u64) << 32
            } else if is_mask {
                0
            } else {
                w.v[dst_slot][l] as u64
            };
            let c = if mac { old } else { srcs[2][l] };
            let (mut r, flag) = (self.func)(&self.lane(l), srcs[0][l], srcs[1][l], c);
            mask_out |= (flag as u64) << l;
            if is_mask {
                continue;
            }
            if inst.omod != 0 || inst.clamp {
                r = output_modifiers(r, self.types[0], inst.omod, inst.clamp, &self.env, inst.op);
            }
            if inst.ext == Ext::Sdwa {
                r = sdwa_write(r, old, inst.ctrl);
            }
            if writes_high_half(inst) {
                r = (old & 0xFFFF) | (r & 0xFFFF) << 16;
            }
            w.v[dst_slot][l] = r as u32;
            if dst_wide {
                w.v[(dst_slot + 1) & 511][l] = (r >> 32) as u32;
            }
        }
        mask_out
    }

    /// What a lane function needs besides the operands, for lane `l`.
    fn lane(&self, l: usize) -> Ln {
        Ln {
            env: self.env,
            lane: l as u32,
            carry: self.carry_in >> l & 1 != 0,
            clamp: self.inst.clamp,
            op_sel: if self.inst.enc == Enc::Vop3 {
                self.inst.op_sel
            } else {
                0
            },
        }
    }

    /// Writes the produced lane mask: VCC or the SGPR pair (and EXEC for `cmpx`) of a compare,
    /// the carry-out of a VOP3b operation for the lanes written.
    fn write_lane_mask(&self, w: &mut Wave, mask_out: u64) {
        let inst = self.inst;
        match self.out {
            Out::V => {}
            Out::Mask { exec: cmpx } => {
                // Inactive lanes read as 0 in the result mask.
                let dst = if inst.enc == Enc::Vop3 || inst.ext == Ext::Sdwa {
                    inst.dst
                } else {
                    VCC
                };
                w.set_sgpr64(dst, mask_out);
                if cmpx {
                    w.set_exec(mask_out);
                }
            }
            Out::VMask => {
                let dst = if inst.enc == Enc::Vop3 {
                    inst.sdst
                } else {
                    VCC
                };
                let keep = w.sgpr64(dst) & !self.write_mask;
                w.set_sgpr64(dst, keep | mask_out);
            }
        }
    }
}

/// A VALU operation whose general-path semantics are its lane function alone, for a plan to run
/// over register rows: the same function, lane by lane, so the same bits.
#[derive(Clone, Copy)]
pub(super) struct LaneOp {
    func: LaneFn,
    pub out: LaneOut,
    /// A float operation (the general path refuses it under a directed rounding mode).
    pub float: bool,
    /// The operation reads VCC as a per-lane condition (`v_div_fmas_f32`, `v_div_fmas_f64`).
    pub reads_vcc: bool,
}

/// What a [`LaneOp`] writes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum LaneOut {
    /// The VGPR destination.
    Row,
    /// The VGPR destination and a lane mask (VOP3b: VCC, or the SGPR pair).
    RowAndMask,
    /// A lane mask only (VOPC: VCC, or the VOP3 destination pair), and EXEC too for `cmpx`.
    Mask { exec: bool },
}

/// The [`LaneOp`] of `inst` when the general path would do nothing for it but fetch its
/// one-dword operands (f32, f16 or untyped; a 16-bit integer source that is a float inline
/// constant reads it as f16 bits, which only the general path does), call the lane function
/// and write a VGPR or a lane mask (or both): no modifiers but neg/abs, no SDWA, DPP, op_sel,
/// clamp or output modifier, no accumulator, no refused operation, no other carry-in than VCC.
pub(super) fn lane_op(inst: &Inst) -> Option<LaneOp> {
    lane_op_of(inst, false)
}

/// The [`LaneOp`] of an operation as [`lane_op`] takes them but with a 64-bit operand (f64,
/// untyped or signed 64-bit), a source or the result, which plans read and write as register
/// pairs.
pub(super) fn wide_lane_op(inst: &Inst) -> Option<LaneOp> {
    lane_op_of(inst, true)
}

/// A 64-bit scalar operand type (not a packed or data pair).
pub(super) fn is_wide(t: Ty) -> bool {
    matches!(t, Ty::B64 | Ty::I64 | Ty::F64)
}

fn lane_op_of(inst: &Inst, wide: bool) -> Option<LaneOp> {
    let op = inst.op;
    let facts = info(op);
    let (func, out) = facts.lane?;
    let plain = inst.ext == Ext::None && inst.omod == 0 && !inst.clamp && inst.op_sel == 0;
    let types = op.types();
    // A compare's destination is its mask, whatever type it is given.
    let operands = &types[usize::from(matches!(out, Out::Mask { .. }))..];
    if !plain
        || !matches!(inst.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3)
        || !operands
            .iter()
            .all(|t| matches!(t, Ty::B32 | Ty::F32 | Ty::F16) || wide && is_wide(*t))
        || wide != operands.iter().any(|t| is_wide(*t))
        || (0..facts.nsrc).any(|k| op.int16_source(k) && (240..=248).contains(&inst.src[k]))
        || is_mac(op)
        || refused(op).is_some()
        || check_sources(inst, facts.nsrc).is_err()
        || matches!(
            op,
            v_nop
                | v_clrexcp
                | v_readfirstlane_b32
                | v_readlane_b32
                | v_writelane_b32
                | v_swap_b32
                | v_madmk_f32
                | v_madak_f32
                | v_madmk_f16
                | v_madak_f16
                | v_fmamk_f32
                | v_fmaak_f32
                | v_cndmask_b32
                | v_addc_co_u32
                | v_subb_co_u32
                | v_subbrev_co_u32
        )
        || op.name().starts_with("v_movrel")
    {
        return None;
    }
    Some(LaneOp {
        func,
        out: match out {
            Out::V => LaneOut::Row,
            Out::VMask => LaneOut::RowAndMask,
            Out::Mask { exec } => LaneOut::Mask { exec },
        },
        float: facts.float,
        reads_vcc: matches!(op, v_div_fmas_f32 | v_div_fmas_f64),
    })
}

impl LaneOp {
    /// Runs the operation in the lanes of `exec` over source rows `src` into row `dst` (unless
    /// it writes a mask only), VCC `vcc` its condition; returns the lane mask it produced (0
    /// in the other lanes).
    pub(super) fn run(
        &self,
        v: &mut [[u32; LANES]],
        dst: usize,
        src: [usize; 3],
        env: Env,
        vcc: u64,
        exec: u64,
    ) -> u64 {
        let row = !matches!(self.out, LaneOut::Mask { .. });
        let read = |v: &[[u32; LANES]], l: usize| src.map(|s| u64::from(v[s][l]));
        self.each_lane(v, env, vcc, exec, read, |v, l, r| {
            if row {
                v[dst][l] = r as u32;
            }
        })
    }

    /// [`LaneOp::run`] over 64-bit operands: lane `l`'s sources are `sources(l)`, its result
    /// goes to `out[l]`, in the lanes of `exec`; returns the lane mask produced.
    pub(super) fn run_wide(
        &self,
        env: Env,
        vcc: u64,
        exec: u64,
        sources: impl Fn(usize) -> [u64; 3],
        out: &mut [u64; LANES],
    ) -> u64 {
        self.each_lane(
            out,
            env,
            vcc,
            exec,
            |_, l| sources(l),
            |out, l, r| out[l] = r,
        )
    }

    /// The lane function in each lane `l` of `exec`, its sources `read(place, l)`, its result
    /// handed to `write(place, l, r)`; returns the lane mask produced.
    #[inline(always)]
    fn each_lane<P: ?Sized>(
        &self,
        place: &mut P,
        env: Env,
        vcc: u64,
        exec: u64,
        read: impl Fn(&P, usize) -> [u64; 3],
        mut write: impl FnMut(&mut P, usize, u64),
    ) -> u64 {
        let mut mask_out = 0u64;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let [a, b, c] = read(place, l);
            let (r, flag) = (self.func)(&Ln::plain(env, l, vcc), a, b, c);
            mask_out |= u64::from(flag) << l;
            write(place, l, r);
        }
        mask_out
    }
}

/// Accumulating forms: the destination is also the addend.
fn is_mac(op: Op) -> bool {
    matches!(
        op,
        v_mac_f32 | v_fmac_f32 | v_fmac_f64 | v_mac_f16 | v_cvt_pk_fp8_f32 | v_cvt_pk_bf8_f32
    ) || is_packed_accumulation(op)
}

/// Integer operations whose lane functions saturate to the result's range under clamp (they
/// read it from [`Ln::clamp`]).
fn saturates(op: Op) -> bool {
    matches!(
        op,
        v_add_u32
            | v_sub_u32
            | v_subrev_u32
            | v_add_i32
            | v_sub_i32
            | v_add_co_u32
            | v_sub_co_u32
            | v_subrev_co_u32
            | v_add_u16
            | v_sub_u16
            | v_subrev_u16
            | v_add_i16
            | v_sub_i16
            | v_mad_u16
            | v_mad_i16
            | v_dot2c_i32_i16
            | v_dot4c_i32_i8
            | v_dot8c_i32_i4
    )
}

/// `x` as an i16 result: saturated under clamp, else wrapped.
fn i16_result(x: i64, clamp: bool) -> u32 {
    if clamp {
        x.clamp(i16::MIN as i64, i16::MAX as i64) as i16 as u16 as u32
    } else {
        x as u16 as u32
    }
}

/// `x` as an unsigned result of `bits` bits: saturated under clamp, else wrapped.
fn unsigned_result(x: i64, bits: u32, clamp: bool) -> u32 {
    let max = (1i64 << bits) - 1;
    if clamp {
        x.clamp(0, max) as u32
    } else {
        (x & max) as u32
    }
}

/// The low dword of a lane source as an unsigned, and as a signed, value.
fn u32s(x: u64) -> i64 {
    x as u32 as i64
}
fn i32s(x: u64) -> i64 {
    x as u32 as i32 as i64
}
/// The low half of a lane source as an unsigned value.
fn u16s(x: u64) -> i64 {
    x as u16 as i64
}

/// `x` as an i32 result: saturated under clamp, else wrapped.
fn i32_result(x: i64, clamp: bool) -> u32 {
    if clamp {
        x.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
    } else {
        x as u32
    }
}

/// A 16-bit VOP3 result that op_sel bit 3 sends to the destination's high half.
fn writes_high_half(inst: &Inst) -> bool {
    inst.enc == Enc::Vop3 && inst.op_sel & 8 != 0 && op_sel_writes_high(inst.op)
}

/// The low 32 bits of each lane of the sources.
fn narrow(srcs: &[Lanes; 3]) -> [[u32; LANES]; 3] {
    srcs.map(|s| s.map(|x| x as u32))
}

/// EXEC as one all-ones or all-zeros word per lane, so that blends stay in 32-bit lanes and
/// vectorise.
#[inline(always)]
pub(super) fn lane_mask(mask: u64) -> [u32; LANES] {
    let mut m = [0u32; LANES];
    for (l, x) in m.iter_mut().enumerate() {
        *x = 0u32.wrapping_sub((mask >> l & 1) as u32);
    }
    m
}

/// Write `f(lane)` to the lanes of `mask` (a loop the compiler specialises per operation).
#[inline(always)]
fn fill(dst: &mut [u32; LANES], mask: u64, f: impl Fn(usize) -> u32) {
    if mask == u64::MAX {
        for (l, d) in dst.iter_mut().enumerate() {
            *d = f(l);
        }
    } else {
        // EXEC as a blend rather than a branch per lane, so the loop vectorises (every
        // operation here is pure and cannot fail on an inactive lane's values).
        let m = lane_mask(mask);
        for (l, d) in dst.iter_mut().enumerate() {
            *d = (f(l) & m[l]) | (*d & !m[l]);
        }
    }
}

/// Specialised loops for the most frequent operations (same results as their lane
/// functions); false when `op` has none.
fn fast_path(
    op: Op,
    dst: &mut [u32; LANES],
    mask: u64,
    s: [&[u32; LANES]; 3],
    env: &Env,
    carry: u64,
) -> bool {
    let [a, b, c] = s;
    let e = *env;
    match op {
        v_mov_b32 => fill(dst, mask, |l| a[l]),
        v_add_u32 => fill(dst, mask, |l| (a[l]).wrapping_add(b[l])),
        v_sub_u32 => fill(dst, mask, |l| (a[l]).wrapping_sub(b[l])),
        v_subrev_u32 => fill(dst, mask, |l| (b[l]).wrapping_sub(a[l])),
        v_and_b32 => fill(dst, mask, |l| a[l] & b[l]),
        v_or_b32 => fill(dst, mask, |l| a[l] | b[l]),
        v_xor_b32 => fill(dst, mask, |l| a[l] ^ b[l]),
        v_lshlrev_b32 => fill(dst, mask, |l| (b[l]) << (a[l] & 31)),
        v_lshrrev_b32 => fill(dst, mask, |l| (b[l]) >> (a[l] & 31)),
        v_ashrrev_i32 => fill(dst, mask, |l| ((b[l] as i32) >> (a[l] & 31)) as u32),
        v_mul_lo_u32 => fill(dst, mask, |l| (a[l]).wrapping_mul(b[l])),
        v_mul_u32_u24 => fill(dst, mask, |l| {
            (a[l] & 0xFF_FFFF).wrapping_mul(b[l] & 0xFF_FFFF)
        }),
        v_add3_u32 => fill(dst, mask, |l| (a[l]).wrapping_add(b[l]).wrapping_add(c[l])),
        v_lshl_add_u32 => fill(dst, mask, |l| ((a[l]) << (b[l] & 31)).wrapping_add(c[l])),
        v_lshl_or_b32 => fill(dst, mask, |l| ((a[l]) << (b[l] & 31)) | c[l]),
        v_cndmask_b32 => fill(dst, mask, |l| if carry >> l & 1 != 0 { b[l] } else { a[l] }),
        v_add_f32 => binary_f32(dst, mask, a, b, &e, |x, y| x + y),
        v_sub_f32 => binary_f32(dst, mask, a, b, &e, |x, y| x - y),
        v_mul_f32 => binary_f32(dst, mask, a, b, &e, |x, y| x * y),
        v_fmac_f32 | v_fma_f32 | v_fmaak_f32 | v_fmamk_f32 => {
            fma_lanes(dst, mask, a, b, c, op == v_fmac_f32, &e)
        }
        _ => return false,
    }
    true
}

/// Specialised loops for frequent operations with a 64-bit result.
fn fast_path_wide(
    op: Op,
    lo: &mut [u32; LANES],
    hi: &mut [u32; LANES],
    mask: u64,
    s: &[Lanes; 3],
) -> bool {
    #[inline(always)]
    fn put(lo: &mut [u32; LANES], hi: &mut [u32; LANES], mask: u64, f: impl Fn(usize) -> u64) {
        for l in 0..LANES {
            if mask >> l & 1 != 0 {
                let r = f(l);
                lo[l] = r as u32;
                hi[l] = (r >> 32) as u32;
            }
        }
    }
    let (a, b, c) = (&s[0], &s[1], &s[2]);
    match op {
        v_lshl_add_u64 => put(lo, hi, mask, |l| {
            (a[l] << (b[l] as u32 & 63)).wrapping_add(c[l])
        }),
        v_lshlrev_b64 => put(lo, hi, mask, |l| b[l] << (a[l] as u32 & 63)),
        v_lshrrev_b64 => put(lo, hi, mask, |l| b[l] >> (a[l] as u32 & 63)),
        v_mov_b64 => put(lo, hi, mask, |l| a[l]),
        _ => return false,
    }
    true
}

/// f32 add, subtract, multiply and fused multiply-add under a directed f32 rounding mode
/// (MODE[1:0] = 1 toward +inf, 2 toward -inf, 3 toward zero; MODE[3:2] must be 0): exact
/// results from error-free transformations in f64, rounded once in the requested direction.
/// `None` when the instruction is not one of these plain forms (the caller then faults).
fn directed_f32(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Option<Step> {
    let op = inst.op;
    let supported = matches!(
        op,
        v_add_f32
            | v_sub_f32
            | v_subrev_f32
            | v_mul_f32
            | v_fma_f32
            | v_fmac_f32
            | v_fmamk_f32
            | v_fmaak_f32
    );
    if !supported || w.mode & 0xC != 0 || inst.ext != Ext::None || inst.omod != 0 || inst.clamp {
        return None;
    }
    let mode = w.mode & 3;
    let env = Env::from_mode(w.mode);
    let types = op.types();
    let nsrc = types.len() - 1;
    let mut srcs = [[0u64; LANES]; 3];
    for k in 0..nsrc.min(3) {
        fetch_into(&mut srcs[k], w, ctx, inst, k, types[k + 1]);
        modify(
            &mut srcs[k],
            types[k + 1],
            inst.neg >> k & 1 != 0,
            inst.abs >> k & 1 != 0,
        );
    }
    match op {
        v_fmamk_f32 => {
            srcs[2] = srcs[1];
            srcs[1] = [inst.lit as u64; LANES];
        }
        v_fmaak_f32 => srcs[2] = [inst.lit as u64; LANES],
        _ => {}
    }
    let exec = w.exec();
    let dst = Wave::vslot(inst.dst);
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = env.in32(f(srcs[0][l]));
        let b = env.in32(f(srcs[1][l]));
        let r = match op {
            v_add_f32 => float::add_directed(a, b, mode),
            v_sub_f32 => float::add_directed(a, -b, mode),
            v_subrev_f32 => float::add_directed(b, -a, mode),
            v_mul_f32 => float::mul_directed(a, b, mode),
            v_fmac_f32 => float::fma_directed(a, b, env.in32(f32::from_bits(w.v[dst][l])), mode),
            _ => float::fma_directed(a, b, env.in32(f(srcs[2][l])), mode),
        };
        w.v[dst][l] = env.out32(r).to_bits();
    }
    w.lane_insts += exec.count_ones() as u64;
    Some(Ok(Flow::Next))
}

/// Specialised loops for the most frequent integer compares; the result mask.
fn fast_compare(op: Op, mask: u64, s: &[Lanes; 3]) -> Option<u64> {
    let (a, b) = (&s[0], &s[1]);
    #[inline(always)]
    fn lanes_mask(a: &Lanes, b: &Lanes, mask: u64, f: impl Fn(u32, u32) -> bool) -> u64 {
        let mut m = 0u64;
        for l in 0..LANES {
            m |= (f(a[l] as u32, b[l] as u32) as u64) << l;
        }
        m & mask
    }
    let run = |f: fn(u32, u32) -> bool| lanes_mask(a, b, mask, f);
    Some(match op {
        v_cmp_eq_u32 | v_cmp_eq_i32 | v_cmpx_eq_u32 | v_cmpx_eq_i32 => run(|x, y| x == y),
        v_cmp_ne_u32 | v_cmp_ne_i32 | v_cmpx_ne_u32 | v_cmpx_ne_i32 => run(|x, y| x != y),
        v_cmp_gt_u32 | v_cmpx_gt_u32 => run(|x, y| x > y),
        v_cmp_lt_u32 | v_cmpx_lt_u32 => run(|x, y| x < y),
        v_cmp_ge_u32 => run(|x, y| x >= y),
        v_cmp_le_u32 => run(|x, y| x <= y),
        v_cmp_gt_i32 | v_cmpx_gt_i32 => run(|x, y| (x as i32) > (y as i32)),
        v_cmp_lt_i32 | v_cmpx_lt_i32 => run(|x, y| (x as i32) < (y as i32)),
        v_cmp_ge_i32 => run(|x, y| (x as i32) >= (y as i32)),
        v_cmp_le_i32 => run(|x, y| (x as i32) <= (y as i32)),
        _ => return None,
    })
}

/// Specialised loops for the 32-bit carry operations; the carry-out mask.
fn fast_path_carry(
    op: Op,
    dst: &mut [u32; LANES],
    mask: u64,
    s: &[Lanes; 3],
    carry: u64,
) -> Option<u64> {
    let (a, b) = (&s[0], &s[1]);
    let mut out = 0u64;
    match op {
        v_add_co_u32 => {
            for l in 0..LANES {
                if mask >> l & 1 != 0 {
                    let (r, c) = (a[l] as u32).overflowing_add(b[l] as u32);
                    dst[l] = r;
                    out |= (c as u64) << l;
                }
            }
        }
        v_addc_co_u32 => {
            for l in 0..LANES {
                if mask >> l & 1 != 0 {
                    let r = a[l] as u32 as u64 + b[l] as u32 as u64 + (carry >> l & 1);
                    dst[l] = r as u32;
                    out |= (r >> 32) << l;
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

/// Lanes of a two-operand f32 operation under the denormal mode and [`float::nan_rule32`],
/// branch-free so that it vectorises.
#[inline(always)]
fn binary_f32(
    dst: &mut [u32; LANES],
    mask: u64,
    a: &[u32; LANES],
    b: &[u32; LANES],
    e: &Env,
    op: impl Fn(f32, f32) -> f32,
) {
    let input = |x: u32| f32::from_bits(if e.keep_in32 { x } else { flush32_bits(x) });
    let output = |x: f32| {
        let x = x.to_bits();
        if e.keep_out32 { x } else { flush32_bits(x) }
    };
    fill(dst, mask, |l| {
        let (x, y) = (input(a[l]), input(b[l]));
        output(float::nan_rule32(op(x, y), x, y))
    });
}

/// Lanes of an f32 fused multiply-add (`acc_in_dst`: the addend is the destination, as in
/// `v_fmac_f32`), with the host's FMA instruction when it has one.
fn fma_lanes(
    dst: &mut [u32; LANES],
    mask: u64,
    a: &[u32; LANES],
    b: &[u32; LANES],
    c: &[u32; LANES],
    acc_in_dst: bool,
    e: &Env,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement
            // of the target-feature function.
            unsafe { fma_lanes_x86(dst, mask, a, b, c, acc_in_dst, e) };
            return;
        }
    }
    fma_lanes_generic(dst, mask, a, b, c, acc_in_dst, e);
}

/// The f32 denormal flush of [`Env`] written on the bits (a signed zero for a zero exponent),
/// so that lane loops using it vectorise.
#[inline(always)]
pub(super) fn flush32_bits(x: u32) -> u32 {
    if x & 0x7F80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// Fused multiply-add of every lane, written branch-free (EXEC applied as a blend, flushing on
/// the bits) so that it vectorises; bit-identical to the per-lane form.
#[inline(always)]
fn fma_lanes_generic(
    dst: &mut [u32; LANES],
    mask: u64,
    a: &[u32; LANES],
    b: &[u32; LANES],
    c: &[u32; LANES],
    acc_in_dst: bool,
    e: &Env,
) {
    let acc = if acc_in_dst { *dst } else { *c };
    let input = |x: u32| if e.keep_in32 { x } else { flush32_bits(x) };
    let mut r = [0u32; LANES];
    for l in 0..LANES {
        r[l] = float::fma32_bits(input(a[l]), input(b[l]), input(acc[l]));
    }
    if !e.keep_out32 {
        for x in r.iter_mut() {
            *x = flush32_bits(*x);
        }
    }
    fill(dst, mask, |l| r[l]);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_lanes_x86(
    dst: &mut [u32; LANES],
    mask: u64,
    a: &[u32; LANES],
    b: &[u32; LANES],
    c: &[u32; LANES],
    acc_in_dst: bool,
    e: &Env,
) {
    fma_lanes_generic(dst, mask, a, b, c, acc_in_dst, e)
}

/// An SDWA result `r` placed in the destination's selected byte, word or dword (control word
/// `ctrl`), the other bits padded, sign-extended or kept from `old`.
pub(super) fn sdwa_write(r: u64, old: u64, ctrl: u32) -> u64 {
    let sel = (ctrl >> 8) & 7;
    let unused = (ctrl >> 11) & 3;
    let (shift, width) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return r,
    };
    let mask = ((1u64 << width) - 1) << shift;
    let placed = ((r as u32 as u64) << shift) & mask;
    match unused {
        2 => (old & !mask & 0xFFFF_FFFF) | placed,
        1 => {
            let v = placed as u32;
            let top = shift + width;
            let sign = (v >> (top - 1)) & 1;
            if sign != 0 && top < 32 {
                (v | !((1u32 << top) - 1)) as u64
            } else {
                v as u64
            }
        }
        _ => placed,
    }
}

fn output_modifiers(r: u64, ty: Ty, omod: u8, clamp: bool, env: &Env, op: Op) -> u64 {
    match ty {
        Ty::F32 => {
            let mut x = f(r);
            x = match omod {
                1 => x * 2.0,
                2 => x * 4.0,
                3 => x * 0.5,
                _ => x,
            };
            if clamp {
                x = if x.is_nan() {
                    if env.dx10_clamp { 0.0 } else { x }
                } else {
                    x.clamp(0.0, 1.0)
                };
            }
            env.out32(x).to_bits() as u64
        }
        Ty::F64 => {
            let mut x = d(r);
            x = match omod {
                1 => x * 2.0,
                2 => x * 4.0,
                3 => x * 0.5,
                _ => x,
            };
            if clamp {
                x = if x.is_nan() {
                    if env.dx10_clamp { 0.0 } else { x }
                } else {
                    x.clamp(0.0, 1.0)
                };
            }
            x.to_bits()
        }
        Ty::F16 => {
            let mut x = h(r).to_f32();
            x = match omod {
                1 => x * 2.0,
                2 => x * 4.0,
                3 => x * 0.5,
                _ => x,
            };
            if clamp {
                x = if x.is_nan() {
                    if env.dx10_clamp { 0.0 } else { x }
                } else {
                    x.clamp(0.0, 1.0)
                };
            }
            f16::from_f32(x).to_bits() as u64
        }
        _ => {
            if !clamp {
                return r;
            }
            // Integer clamp: the lane functions of the saturating forms already clamp.
            let _ = op;
            r
        }
    }
}

fn b(v: bool) -> u64 {
    v as u64
}

/// `v_cvt_f32_f64` of one lane's source bits: the f32 bits of the result.
#[inline(always)]
pub(super) fn f32_of_f64(e: &Env, a: u64) -> u64 {
    e.out32(e.in64(d(a)) as f32).to_bits().into()
}

/// `v_cvt_f64_f32` of one lane's source bits (the low dword): the f64 bits of the result.
#[inline(always)]
pub(super) fn f64_of_f32(e: &Env, a: u64) -> u64 {
    e.out64(e.in32(f(a)) as f64).to_bits()
}

fn f32r(e: &Env, x: f32) -> (u64, bool) {
    (e.out32(x).to_bits() as u64, false)
}
fn f64r(e: &Env, x: f64) -> (u64, bool) {
    (e.out64(x).to_bits(), false)
}
fn f16r(e: &Env, x: f16) -> (u64, bool) {
    (e.out16(x).to_bits() as u64, false)
}
fn v(x: u32) -> (u64, bool) {
    (x as u64, false)
}
fn v64(x: u64) -> (u64, bool) {
    (x, false)
}
/// Two f32 values in a register pair, `lo` in the first.
fn pair32(lo: f32, hi: f32) -> u64 {
    lo.to_bits() as u64 | (hi.to_bits() as u64) << 32
}

/// A one-source f32 operation: its NaN results take [`float::NanBits::rule`] (the source
/// quieted, or the canonical quiet NaN), whatever the host's operation gave.
macro_rules! f1 {
    ($e:ident, $a:ident => $body:expr) => {
        |ln: &Ln, a: u64, _b: u64, _c: u64| {
            let $e = &ln.env;
            let $a = $e.in32(f(a));
            let r: f32 = $body;
            let r = u64::from(r.to_bits());
            f32r($e, f(float::F32_NAN.rule(r, &[$a.to_bits().into()])))
        }
    };
}
macro_rules! f2 {
    ($e:ident, $a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $e = &ln.env;
            let $a = $e.in32(f(a));
            let $b = $e.in32(f(b));
            f32r($e, $body)
        }
    };
}
macro_rules! f3 {
    ($e:ident, $a:ident, $b:ident, $c:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, c: u64| {
            let $e = &ln.env;
            let $a = $e.in32(f(a));
            let $b = $e.in32(f(b));
            let $c = $e.in32(f(c));
            f32r($e, $body)
        }
    };
}
/// A one-source f64 operation, its NaN results ruled as [`f1`]'s.
macro_rules! d1 {
    ($e:ident, $a:ident => $body:expr) => {
        |ln: &Ln, a: u64, _b: u64, _c: u64| {
            let $e = &ln.env;
            let $a = $e.in64(d(a));
            let r: f64 = $body;
            let r = r.to_bits();
            f64r($e, d(float::F64_NAN.rule(r, &[$a.to_bits()])))
        }
    };
}
macro_rules! d2 {
    ($e:ident, $a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $e = &ln.env;
            let $a = $e.in64(d(a));
            let $b = $e.in64(d(b));
            f64r($e, $body)
        }
    };
}
macro_rules! d3 {
    ($e:ident, $a:ident, $b:ident, $c:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, c: u64| {
            let $e = &ln.env;
            let $a = $e.in64(d(a));
            let $b = $e.in64(d(b));
            let $c = $e.in64(d(c));
            f64r($e, $body)
        }
    };
}
/// A one-source f16 operation computed in f32, its NaN results ruled as [`f1`]'s.
macro_rules! h1 {
    ($e:ident, $a:ident => $body:expr) => {
        |ln: &Ln, a: u64, _b: u64, _c: u64| {
            let $e = &ln.env;
            let x = $e.in16(h(a));
            let $a = x.to_f32();
            f16r($e, float::nan_rule16(f16::from_f32($body), &[x]))
        }
    };
}
macro_rules! h2 {
    ($e:ident, $a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $e = &ln.env;
            let (x, y) = ($e.in16(h(a)), $e.in16(h(b)));
            let ($a, $b) = (x.to_f32(), y.to_f32());
            f16r($e, float::nan_rule16(f16::from_f32($body), &[x, y]))
        }
    };
}
macro_rules! i2 {
    ($a:ident, $b:ident => $body:expr) => {
        |_: &Ln, a: u64, b: u64, _c: u64| {
            let $a = a as u32;
            let $b = b as u32;
            v($body)
        }
    };
}
macro_rules! i3 {
    ($a:ident, $b:ident, $c:ident => $body:expr) => {
        |_: &Ln, a: u64, b: u64, c: u64| {
            let $a = a as u32;
            let $b = b as u32;
            let $c = c as u32;
            v($body)
        }
    };
}
macro_rules! i1 {
    ($a:ident => $body:expr) => {
        |_: &Ln, a: u64, _b: u64, _c: u64| {
            let $a = a as u32;
            v($body)
        }
    };
}
macro_rules! cmpf {
    ($a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $a = ln.env.in32(f(a));
            let $b = ln.env.in32(f(b));
            (0, $body)
        }
    };
}
macro_rules! cmpd {
    ($a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $a = ln.env.in64(d(a));
            let $b = ln.env.in64(d(b));
            (0, $body)
        }
    };
}
macro_rules! cmph {
    ($a:ident, $b:ident => $body:expr) => {
        |ln: &Ln, a: u64, b: u64, _c: u64| {
            let $a = ln.env.in16(h(a));
            let $b = ln.env.in16(h(b));
            (0, $body)
        }
    };
}
macro_rules! cmpi {
    ($t:ty, $a:ident, $b:ident => $body:expr) => {
        |_: &Ln, a: u64, b: u64, _c: u64| {
            let $a = a as $t;
            let $b = b as $t;
            (0, $body)
        }
    };
}

/// `v_bfe_u32`/`v_bfe_i32`: `width & 31` bits of `v` from bit `off & 31`.
pub(super) fn bfe(v: u32, off: u32, width: u32, signed: bool) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        return 0;
    }
    let mask = (1u32 << width) - 1;
    // The signed form shifts arithmetically: a field reaching past bit 31 takes the sign.
    let shifted = if signed {
        ((v as i32) >> off) as u32
    } else {
        v >> off
    };
    let x = shifted & mask;
    if signed && (x >> (width - 1)) & 1 != 0 {
        x | !mask
    } else {
        x
    }
}

pub(super) fn sext24(x: u32) -> i64 {
    ((x << 8) as i32 >> 8) as i64
}

pub(super) fn perm(s0: u32, s1: u32, sel: u32) -> u32 {
    let bytes = (s0 as u64) << 32 | s1 as u64;
    let mut r = 0u32;
    for i in 0..4 {
        let s = (sel >> (8 * i)) & 0xFF;
        let byte = match s {
            0..=7 => ((bytes >> (8 * s)) & 0xFF) as u32,
            8..=11 => {
                let src = [1, 3, 5, 7][(s - 8) as usize];
                if (bytes >> (8 * src + 7)) & 1 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xFF,
        };
        r |= byte << (8 * i);
    }
    r
}

pub(super) fn ffbh_i32(x: u32) -> u32 {
    let v = x as i32;
    if v == 0 || v == -1 {
        u32::MAX
    } else if v < 0 {
        x.leading_ones()
    } else {
        x.leading_zeros()
    }
}

/// `v_fract_f32`: `x - floor(x)`, at most the largest value below 1; a NaN for a NaN or an
/// infinity (the caller's NaN rule quiets the first and makes the second the canonical one).
fn fract32(x: f32) -> f32 {
    if !x.is_finite() {
        return if x.is_nan() { x } else { f32::NAN };
    }
    (x - Rounded::floor(x)).min(f32::from_bits(0x3F7F_FFFF))
}

/// `v_fract_f64`, as [`fract32`].
fn fract64(x: f64) -> f64 {
    if !x.is_finite() {
        return if x.is_nan() { x } else { f64::NAN };
    }
    (x - Rounded::floor(x)).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
}

/// `v_fract_f16` computed on the f16 value widened to f32, as [`fract32`].
fn fract16(x: f32) -> f32 {
    if !x.is_finite() {
        return if x.is_nan() { x } else { f32::NAN };
    }
    (x - Rounded::floor(x)).min(f32::from_bits(0x3F7F_E000))
}

/// `v_sin_f32`/`v_cos_f32` (and the f16 forms) of `x` revolutions: the nearest whole number
/// of revolutions dropped first (exactly, for any f32 or f16 `x`), so that whole and quarter
/// revolutions give exact results, as the instruction's revolution operand is made for; the
/// rest through the host's sine in f64. A NaN for a NaN or an infinity.
fn sin_cos_revolutions(x: f64, cos: bool) -> f64 {
    if !x.is_finite() {
        return if x.is_nan() { x } else { f64::NAN };
    }
    let turn = x - x.round();
    let quarters = 4.0 * turn;
    if quarters == quarters.floor() {
        const SIN: [f64; 4] = [0.0, 1.0, 0.0, -1.0];
        return SIN[(quarters as i64 + i64::from(cos)).rem_euclid(4) as usize];
    }
    let angle = turn * std::f64::consts::TAU;
    if cos { angle.cos() } else { angle.sin() }
}

/// `v_log_f32`: log2 of `x`, a denormal source read as zero (the instruction does not take
/// denormals, whatever MODE says: compilers scale such sources up before it).
fn log32(x: f32) -> f32 {
    let x = if x.is_subnormal() {
        f32::copysign(0.0, x)
    } else {
        x
    };
    (x as f64).log2() as f32
}

/// `v_exp_f32`: 2 to the power `x`, a denormal result flushed to zero (the instruction does
/// not give denormals: compilers scale sources below -126 before it and the result after).
fn exp32(x: f32) -> f32 {
    let r = (x as f64).exp2() as f32;
    if r.is_subnormal() { 0.0 } else { r }
}

/// The f16 dot product `x0 * y0 + x1 * y1 + acc` of `[x0, x1, y0, y1, acc]` (`v_dot2_f32_f16`,
/// `v_dot2c_f32_f16`), exact in f64 and rounded once to f32. A NaN result is the first NaN
/// source in that order widened to f32 and quieted, or the canonical quiet NaN; never the
/// host's choice.
fn dot2_f16(sources: [f64; 5]) -> f32 {
    let [x0, x1, y0, y1, acc] = sources;
    let sum = (x0 * y0 + x1 * y1 + acc) as f32;
    let sources = sources.map(|x| u64::from((x as f32).to_bits()));
    f(float::F32_NAN.rule(sum.to_bits().into(), &sources))
}

/// Non-fused multiply-add with a rounding after the product (`v_mad_f32`, `v_mac_f32`).
fn mad32(e: &Env, a: f32, b: f32, c: f32) -> f32 {
    let r = e.in32(e.out32(a * b)) + c;
    let sources = [a, b, c].map(|x| u64::from(x.to_bits()));
    f(float::F32_NAN.rule(r.to_bits().into(), &sources))
}

fn lane_fn(op: Op) -> Option<(LaneFn, Out)> {
    let vop: LaneFn = match op {
        // Moves and conversions.
        v_mov_b32 | v_accvgpr_mov_b32 => |_, a, _, _| v(a as u32),
        v_mov_b64 => |_, a, _, _| v64(a),
        v_cvt_i32_f64 => |ln, a, _, _| v(ln.env.in64(d(a)) as i32 as u32),
        v_cvt_u32_f64 => |ln, a, _, _| v(ln.env.in64(d(a)) as u32),
        v_cvt_f64_i32 => |_, a, _, _| v64((a as u32 as i32 as f64).to_bits()),
        v_cvt_f64_u32 => |_, a, _, _| v64((a as u32 as f64).to_bits()),
        v_cvt_f32_i32 => |ln, a, _, _| f32r(&ln.env, a as u32 as i32 as f32),
        v_cvt_f32_u32 => |ln, a, _, _| f32r(&ln.env, a as u32 as f32),
        v_cvt_u32_f32 => |ln, a, _, _| v(ln.env.in32(f(a)) as u32),
        v_cvt_i32_f32 => |ln, a, _, _| v(ln.env.in32(f(a)) as i32 as u32),
        v_cvt_f16_f32 => |ln, a, _, _| f16r(&ln.env, f16::from_f32(ln.env.in32(f(a)))),
        v_cvt_f32_f16 => |ln, a, _, _| f32r(&ln.env, ln.env.in16(h(a)).to_f32()),
        v_cvt_rpi_i32_f32 => |ln, a, _, _| v(Rounded::floor(ln.env.in32(f(a)) + 0.5) as i32 as u32),
        v_cvt_flr_i32_f32 => |ln, a, _, _| v(Rounded::floor(ln.env.in32(f(a))) as i32 as u32),
        v_cvt_f32_f64 => |ln, a, _, _| v64(f32_of_f64(&ln.env, a)),
        v_cvt_f64_f32 => |ln, a, _, _| v64(f64_of_f32(&ln.env, a)),
        v_cvt_f32_ubyte0 => |_, a, _, _| v(((a as u32 & 0xFF) as f32).to_bits()),
        v_cvt_f32_ubyte1 => |_, a, _, _| v((((a as u32 >> 8) & 0xFF) as f32).to_bits()),
        v_cvt_f32_ubyte2 => |_, a, _, _| v((((a as u32 >> 16) & 0xFF) as f32).to_bits()),
        v_cvt_f32_ubyte3 => |_, a, _, _| v(((a as u32 >> 24) as f32).to_bits()),
        // gfx942's 8-bit floats: byte 0 (SDWA selects another), or bytes 0 and 1 (SDWA WORD_1
        // selects bytes 2 and 3).
        v_cvt_f32_fp8 => |ln, a, _, _| f32r(&ln.env, float::fp8(a as u8)),
        v_cvt_f32_bf8 => |ln, a, _, _| f32r(&ln.env, float::bf8(a as u8)),
        v_cvt_pk_f32_fp8 => {
            |_, a, _, _| v64(pair32(float::fp8(a as u8), float::fp8((a >> 8) as u8)))
        }
        v_cvt_pk_f32_bf8 => {
            |_, a, _, _| v64(pair32(float::bf8(a as u8), float::bf8((a >> 8) as u8)))
        }
        v_cvt_f16_u16 => |ln, a, _, _| f16r(&ln.env, f16::from_f32((a as u16) as f32)),
        v_cvt_f16_i16 => |ln, a, _, _| f16r(&ln.env, f16::from_f32((a as u16 as i16) as f32)),
        v_cvt_u16_f16 => |ln, a, _, _| v(ln.env.in16(h(a)).to_f32() as u16 as u32),
        v_cvt_i16_f16 => |ln, a, _, _| v(ln.env.in16(h(a)).to_f32() as i16 as u16 as u32),
        v_cvt_pkrtz_f16_f32 => |ln, a, b, _| {
            let lo = float::f16_rtz(ln.env.in32(f(a))).to_bits() as u32;
            let hi = float::f16_rtz(ln.env.in32(f(b))).to_bits() as u32;
            v(lo | hi << 16)
        },
        v_cvt_pk_u16_u32 => |_, a, b, _| v((a as u32).min(0xFFFF) | (b as u32).min(0xFFFF) << 16),
        v_cvt_pk_i16_i32 => |_, a, b, _| {
            let c = |x: u64| (x as u32 as i32).clamp(-32768, 32767) as u16 as u32;
            v(c(a) | c(b) << 16)
        },
        v_pack_b32_f16 => |_, a, b, _| v((a as u32 & 0xFFFF) | (b as u32 & 0xFFFF) << 16),
        // f64 rounding and f32 rounding.
        v_trunc_f64 => d1!(e, a => Rounded::trunc(a)),
        v_ceil_f64 => d1!(e, a => Rounded::ceil(a)),
        v_rndne_f64 => d1!(e, a => Rounded::round_even(a)),
        v_floor_f64 => d1!(e, a => Rounded::floor(a)),
        v_fract_f64 => d1!(e, a => fract64(a)),
        v_fract_f32 => f1!(e, a => fract32(a)),
        v_trunc_f32 => f1!(e, a => Rounded::trunc(a)),
        v_ceil_f32 => f1!(e, a => Rounded::ceil(a)),
        v_rndne_f32 => f1!(e, a => Rounded::round_even(a)),
        v_floor_f32 => f1!(e, a => Rounded::floor(a)),
        // Transcendentals: correctly rounded or within 1 ulp (see docs/emulator.md).
        v_exp_f32 => f1!(e, a => exp32(a)),
        v_log_f32 => f1!(e, a => log32(a)),
        v_rcp_f32 | v_rcp_iflag_f32 => f1!(e, a => 1.0 / a),
        v_rsq_f32 => f1!(e, a => (1.0 / (a as f64).sqrt()) as f32),
        v_sqrt_f32 => f1!(e, a => a.sqrt()),
        v_sin_f32 => f1!(e, a => sin_cos_revolutions(a as f64, false) as f32),
        v_cos_f32 => f1!(e, a => sin_cos_revolutions(a as f64, true) as f32),
        v_rcp_f64 => d1!(e, a => 1.0 / a),
        v_rsq_f64 => d1!(e, a => 1.0 / a.sqrt()),
        v_sqrt_f64 => d1!(e, a => a.sqrt()),
        v_frexp_exp_i32_f64 => |ln, a, _, _| v(float::frexp64(ln.env.in64(d(a))).1 as u32),
        v_frexp_mant_f64 => d1!(e, a => float::frexp64(a).0),
        v_frexp_exp_i32_f32 => |ln, a, _, _| v(float::frexp_exp32(ln.env.in32(f(a))) as u32),
        v_frexp_mant_f32 => f1!(e, a => float::frexp_mant32(a)),
        v_rcp_f16 => h1!(e, a => 1.0 / a),
        v_sqrt_f16 => h1!(e, a => a.sqrt()),
        v_rsq_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, 1.0 / x.to_f64().sqrt(), x)
        },
        v_floor_f16 => h1!(e, a => a.floor()),
        v_ceil_f16 => h1!(e, a => a.ceil()),
        v_trunc_f16 => h1!(e, a => a.trunc()),
        v_rndne_f16 => h1!(e, a => a.round_ties_even()),
        v_fract_f16 => h1!(e, a => fract16(a)),
        // Bits.
        v_not_b32 => i1!(a => !a),
        v_bfrev_b32 => i1!(a => a.reverse_bits()),
        v_ffbh_u32 => i1!(a => if a == 0 { u32::MAX } else { a.leading_zeros() }),
        v_ffbl_b32 => i1!(a => if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        v_ffbh_i32 => i1!(a => ffbh_i32(a)),
        // VOP2.
        v_cndmask_b32 => |ln, a, b, _| v(if ln.carry { b as u32 } else { a as u32 }),
        v_add_f32 => f2!(e, a, b => float::nan_rule32(a + b, a, b)),
        v_sub_f32 => f2!(e, a, b => float::nan_rule32(a - b, a, b)),
        v_subrev_f32 => f2!(e, a, b => float::nan_rule32(b - a, a, b)),
        v_mul_f32 => f2!(e, a, b => float::nan_rule32(a * b, a, b)),
        v_mul_legacy_f32 => {
            f2!(e, a, b => if a == 0.0 || b == 0.0 { 0.0 } else { float::nan_rule32(a * b, a, b) })
        }
        v_mul_i32_i24 => i2!(a, b => (sext24(a) * sext24(b)) as u32),
        v_mul_hi_i32_i24 => i2!(a, b => ((sext24(a) * sext24(b)) >> 32) as u32),
        v_mul_u32_u24 => i2!(a, b => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF)),
        v_mul_hi_u32_u24 => {
            i2!(a, b => (((a & 0xFF_FFFF) as u64 * (b & 0xFF_FFFF) as u64) >> 32) as u32)
        }
        v_min_f32 => f2!(e, a, b => float::min32_in(e.ieee, a, b)),
        v_max_f32 => f2!(e, a, b => float::max32_in(e.ieee, a, b)),
        v_min_i32 => i2!(a, b => (a as i32).min(b as i32) as u32),
        v_max_i32 => i2!(a, b => (a as i32).max(b as i32) as u32),
        v_min_u32 => i2!(a, b => a.min(b)),
        v_max_u32 => i2!(a, b => a.max(b)),
        v_lshrrev_b32 => i2!(a, b => b >> (a & 31)),
        v_ashrrev_i32 => i2!(a, b => ((b as i32) >> (a & 31)) as u32),
        v_lshlrev_b32 => i2!(a, b => b << (a & 31)),
        v_and_b32 => i2!(a, b => a & b),
        v_or_b32 => i2!(a, b => a | b),
        v_xor_b32 => i2!(a, b => a ^ b),
        v_xnor_b32 => i2!(a, b => !(a ^ b)),
        v_mac_f32 | v_madmk_f32 | v_madak_f32 | v_mad_f32 => f3!(e, a, b, c => mad32(e, a, b, c)),
        v_mad_legacy_f32 => {
            f3!(e, a, b, c => if a == 0.0 || b == 0.0 { c } else { mad32(e, a, b, c) })
        }
        v_fmac_f32 | v_fmamk_f32 | v_fmaak_f32 | v_fma_f32 => {
            f3!(e, a, b, c => float::fma32(a, b, c))
        }
        v_fmac_f64 | v_fma_f64 => d3!(e, a, b, c => float::fma64(a, b, c)),
        v_add_u32 => |ln, a, b, _| v(unsigned_result(u32s(a) + u32s(b), 32, ln.clamp)),
        v_sub_u32 => |ln, a, b, _| v(unsigned_result(u32s(a) - u32s(b), 32, ln.clamp)),
        v_subrev_u32 => |ln, a, b, _| v(unsigned_result(u32s(b) - u32s(a), 32, ln.clamp)),
        v_add_i32 => |ln, a, b, _| v(i32_result(i32s(a) + i32s(b), ln.clamp)),
        v_sub_i32 => |ln, a, b, _| v(i32_result(i32s(a) - i32s(b), ln.clamp)),
        v_add_f16 => h2!(e, a, b => a + b),
        v_sub_f16 => h2!(e, a, b => a - b),
        v_subrev_f16 => h2!(e, a, b => b - a),
        v_mul_f16 => h2!(e, a, b => a * b),
        v_mac_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let (x, y, z) = (e.in16(h(a)), e.in16(h(b)), e.in16(h(c)));
            let p = f16::from_f32(x.to_f32() * y.to_f32());
            let r = f16::from_f32(p.to_f32() + z.to_f32());
            f16r(e, float::nan_rule16(r, &[x, y, z]))
        },
        v_max_f16 => |ln, a, b, _| {
            let e = &ln.env;
            f16r(e, float::max16_in(e.ieee, e.in16(h(a)), e.in16(h(b))))
        },
        v_min_f16 => |ln, a, b, _| {
            let e = &ln.env;
            f16r(e, float::min16_in(e.ieee, e.in16(h(a)), e.in16(h(b))))
        },
        v_ldexp_f16 => |ln, a, b, _| {
            let x = ln.env.in16(h(a));
            let scale = 2f64.powi((b as u32 as i32).clamp(-100, 100));
            h64_of(&ln.env, x.to_f64() * scale, x)
        },
        v_add_u16 => |ln, a, b, _| v(unsigned_result(u16s(a) + u16s(b), 16, ln.clamp)),
        v_sub_u16 => |ln, a, b, _| v(unsigned_result(u16s(a) - u16s(b), 16, ln.clamp)),
        v_subrev_u16 => |ln, a, b, _| v(unsigned_result(u16s(b) - u16s(a), 16, ln.clamp)),
        v_mul_lo_u16 => i2!(a, b => (a as u16).wrapping_mul(b as u16) as u32),
        v_lshlrev_b16 => i2!(a, b => ((b as u16) << (a & 15)) as u32),
        v_lshrrev_b16 => i2!(a, b => ((b as u16) >> (a & 15)) as u32),
        v_ashrrev_i16 => i2!(a, b => ((b as u16 as i16) >> (a & 15)) as u16 as u32),
        v_max_u16 => i2!(a, b => (a as u16).max(b as u16) as u32),
        v_max_i16 => i2!(a, b => (a as u16 as i16).max(b as u16 as i16) as u16 as u32),
        v_min_u16 => i2!(a, b => (a as u16).min(b as u16) as u32),
        v_min_i16 => i2!(a, b => (a as u16 as i16).min(b as u16 as i16) as u16 as u32),
        // VOP3.
        v_mad_i32_i24 => i3!(a, b, c => (sext24(a) * sext24(b) + c as i32 as i64) as u32),
        v_mad_u32_u24 => {
            i3!(a, b, c => (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(c))
        }
        v_bfe_u32 => i3!(a, b, c => bfe(a, b, c, false)),
        v_bfe_i32 => i3!(a, b, c => bfe(a, b, c, true)),
        v_bfi_b32 => i3!(a, b, c => (a & b) | (!a & c)),
        v_alignbit_b32 => i3!(a, b, c => ((((a as u64) << 32) | b as u64) >> (c & 31)) as u32),
        v_alignbyte_b32 => {
            i3!(a, b, c => ((((a as u64) << 32) | b as u64) >> (8 * (c & 3))) as u32)
        }
        v_min3_f32 => f3!(e, a, b, c => float::min3_32(e.ieee, a, b, c)),
        v_max3_f32 => f3!(e, a, b, c => float::max3_32(e.ieee, a, b, c)),
        v_med3_f32 => f3!(e, a, b, c => float::med3_32(e.ieee, a, b, c)),
        v_min3_i32 => i3!(a, b, c => (a as i32).min(b as i32).min(c as i32) as u32),
        v_max3_i32 => i3!(a, b, c => (a as i32).max(b as i32).max(c as i32) as u32),
        v_min3_u32 => i3!(a, b, c => a.min(b).min(c)),
        v_max3_u32 => i3!(a, b, c => a.max(b).max(c)),
        v_med3_i32 => {
            i3!(a, b, c => (a as i32).max(b as i32).min((a as i32).min(b as i32).max(c as i32)) as u32)
        }
        v_med3_u32 => i3!(a, b, c => a.max(b).min(a.min(b).max(c))),
        v_div_fixup_f32 => f3!(e, a, b, c => float::div_fixup32(a, b, c)),
        v_div_fixup_f64 => d3!(e, a, b, c => float::div_fixup64(a, b, c)),
        v_div_fmas_f32 => |ln, a, b, c| {
            let e = &ln.env;
            f32r(
                e,
                float::div_fmas32(e.in32(f(a)), e.in32(f(b)), e.in32(f(c)), ln.carry),
            )
        },
        v_div_fmas_f64 => |ln, a, b, c| {
            let e = &ln.env;
            f64r(
                e,
                float::div_fmas64(e.in64(d(a)), e.in64(d(b)), e.in64(d(c)), ln.carry),
            )
        },
        v_mad_legacy_u16 => {
            i3!(a, b, c => ((a as u16).wrapping_mul(b as u16).wrapping_add(c as u16)) as u32)
        }
        v_mad_legacy_i16 => {
            i3!(a, b, c => ((a as i16).wrapping_mul(b as i16).wrapping_add(c as i16)) as u16 as u32)
        }
        v_perm_b32 => i3!(a, b, c => perm(a, b, c)),
        v_mad_u32_u16 => i3!(a, b, c => ((a & 0xFFFF) * (b & 0xFFFF)).wrapping_add(c)),
        v_mad_i32_i16 => {
            i3!(a, b, c => ((a as i16 as i32) * (b as i16 as i32)).wrapping_add(c as i32) as u32)
        }
        v_xad_u32 => i3!(a, b, c => (a ^ b).wrapping_add(c)),
        v_lshl_add_u32 => i3!(a, b, c => (a << (b & 31)).wrapping_add(c)),
        v_add_lshl_u32 => i3!(a, b, c => a.wrapping_add(b) << (c & 31)),
        v_add3_u32 => i3!(a, b, c => a.wrapping_add(b).wrapping_add(c)),
        v_lshl_or_b32 => i3!(a, b, c => (a << (b & 31)) | c),
        v_and_or_b32 => i3!(a, b, c => (a & b) | c),
        v_or3_b32 => i3!(a, b, c => a | b | c),
        v_fma_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let (x, y, z) = (e.in16(h(a)), e.in16(h(b)), e.in16(h(c)));
            let r = float::f16_of_f64(x.to_f64().mul_add(y.to_f64(), z.to_f64()));
            f16r(e, float::nan_rule16(r, &[x, y, z]))
        },
        v_lshl_add_u64 => |_, a, b, c| v64((a << (b as u32 & 63)).wrapping_add(c)),
        v_add_f64 => d2!(e, a, b => float::nan_rule64(a + b, a, b)),
        v_mul_f64 => d2!(e, a, b => float::nan_rule64(a * b, a, b)),
        v_min_f64 => d2!(e, a, b => float::min64_in(e.ieee, a, b)),
        v_max_f64 => d2!(e, a, b => float::max64_in(e.ieee, a, b)),
        v_ldexp_f64 => |ln, a, b, _| {
            let x = ln.env.in64(d(a));
            let r = float::ldexp64(x, b as u32 as i32).to_bits();
            f64r(&ln.env, d(float::F64_NAN.rule(r, &[x.to_bits()])))
        },
        v_ldexp_f32 => |ln, a, b, _| {
            let x = ln.env.in32(f(a));
            let r = float::ldexp32(x, b as u32 as i32).to_bits().into();
            f32r(&ln.env, f(float::F32_NAN.rule(r, &[x.to_bits().into()])))
        },
        v_mul_lo_u32 => i2!(a, b => a.wrapping_mul(b)),
        v_mul_hi_u32 => i2!(a, b => ((a as u64 * b as u64) >> 32) as u32),
        v_mul_hi_i32 => i2!(a, b => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32),
        v_bcnt_u32_b32 => i2!(a, b => a.count_ones().wrapping_add(b)),
        v_mbcnt_lo_u32_b32 => |ln, a, b, _| {
            let mask = if ln.lane >= 32 {
                u32::MAX
            } else {
                (1u32 << ln.lane) - 1
            };
            v((a as u32 & mask).count_ones().wrapping_add(b as u32))
        },
        v_mbcnt_hi_u32_b32 => |ln, a, b, _| {
            let mask = if ln.lane < 32 {
                0
            } else {
                ((1u64 << (ln.lane - 32)) - 1) as u32
            };
            v((a as u32 & mask).count_ones().wrapping_add(b as u32))
        },
        v_lshlrev_b64 => |_, a, b, _| v64(b << (a as u32 & 63)),
        v_lshrrev_b64 => |_, a, b, _| v64(b >> (a as u32 & 63)),
        v_ashrrev_i64 => |_, a, b, _| v64(((b as i64) >> (a as u32 & 63)) as u64),
        v_bfm_b32 => i2!(a, b => (((1u64 << (a & 31)) - 1) as u32) << (b & 31)),
        _ => return lane_fn_more(op),
    };
    Some((vop, Out::V))
}

/// A 16-bit float result of an f64 computation, rounded once.
fn h64(e: &Env, x: f64) -> (u64, bool) {
    f16r(e, float::f16_of_f64(x))
}

/// [`h64`] of a one-source operation of `src`, its NaN results ruled as [`f1`]'s.
fn h64_of(e: &Env, x: f64, src: f16) -> (u64, bool) {
    f16r(e, float::nan_rule16(float::f16_of_f64(x), &[src]))
}

/// The i16 halves of a dword.
fn halves_i16(x: u64) -> [i64; 2] {
    [x as u16 as i16 as i64, (x >> 16) as u16 as i16 as i64]
}

/// The i8 bytes of a dword.
fn bytes_i8(x: u64) -> [i64; 4] {
    [0, 1, 2, 3].map(|i| (x >> (8 * i)) as u8 as i8 as i64)
}

/// The signed 4-bit nibbles of a dword.
fn nibbles_i4(x: u64) -> [i64; 8] {
    [0, 1, 2, 3, 4, 5, 6, 7].map(|i| (((x >> (4 * i)) as u8) << 4) as i8 as i64 >> 4)
}

/// Sum of the absolute differences of the bytes of `a` and `b`; with `masked`, the bytes where
/// the reference `b` is zero count nothing (`v_msad_u8`).
fn sad_bytes(a: u32, b: u32, masked: bool) -> u32 {
    (0..4)
        .map(|i| {
            let (x, y) = ((a >> (8 * i)) & 0xFF, (b >> (8 * i)) & 0xFF);
            if masked && y == 0 { 0 } else { x.abs_diff(y) }
        })
        .sum()
}

/// The four overlapping dwords of `v_qsad`/`v_mqsad`: the source's bytes 0-3, 1-4, 2-5, 3-6.
fn sad_windows(a: u64) -> [u32; 4] {
    [0, 1, 2, 3].map(|i| (a >> (8 * i)) as u32)
}

/// `v_qsad_pk_u16_u8` (or, `masked`, `v_mqsad_pk_u16_u8`): 16-bit field `i` of the result is
/// field `i` of `acc` plus the SAD of `reference` against bytes `i..i + 4` of `a`.
fn qsad(a: u64, reference: u32, acc: u64, masked: bool) -> u64 {
    sad_windows(a)
        .iter()
        .enumerate()
        .fold(0u64, |r, (i, &window)| {
            let field = (acc >> (16 * i)) as u16;
            let sum = field.wrapping_add(sad_bytes(window, reference, masked) as u16);
            r | (sum as u64) << (16 * i)
        })
}

/// `v_mqsad_u32_u8`: dword `i` of the four-dword result is dword `i` of the accumulator
/// (src2, four VGPRs) plus the masked SAD of src1 against bytes `i..i + 4` of src0 (64 bits).
/// Its operands exceed what the lane functions carry, so it has its own loop.
fn mqsad_u32(w: &mut Wave, ctx: &Ctx<'_>, inst: &Inst, exec: u64) -> Step {
    if inst.src[2] < VGPR {
        return Err(illegal(
            "v_mqsad_u32_u8 with a scalar or constant accumulator is not emulated",
        ));
    }
    if inst.clamp || (inst.neg | inst.abs | inst.omod) != 0 {
        return Err(illegal("v_mqsad_u32_u8 with modifiers is not emulated"));
    }
    let src = fetch(w, ctx, inst, 0, Ty::B64);
    let reference = fetch(w, ctx, inst, 1, Ty::B32);
    let (acc, dst) = (Wave::vslot(inst.src[2]), Wave::vslot(inst.dst));
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let windows = sad_windows(src[l]);
        let r: [u32; 4] = std::array::from_fn(|i| {
            let sad = sad_bytes(windows[i], reference[l] as u32, true);
            w.v[(acc + i) & 511][l].wrapping_add(sad)
        });
        for (i, x) in r.into_iter().enumerate() {
            w.v[(dst + i) & 511][l] = x;
        }
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

/// `v_cvt_pk_fp8_f32`/`v_cvt_pk_bf8_f32`: `a` and `b` in the 8-bit format (`mantissa` bits,
/// exponent `bias`) as bytes 0 and 1 of the word op_sel bit 3 selects; the other word is the
/// old destination's. Clamp saturates.
fn pack_8bit_floats(ln: &Ln, a: u64, b: u64, old: u64, mantissa: u32, bias: i32) -> u32 {
    let e = &ln.env;
    let conv = |x: u64| float::to_fnuz8(e.in32(f(x)), mantissa, bias, ln.clamp) as u32;
    let word = conv(a) | conv(b) << 8;
    let old = old as u32;
    if ln.op_sel & 8 != 0 {
        (old & 0xFFFF) | word << 16
    } else {
        (old & 0xFFFF_0000) | word
    }
}

/// The media, legacy and dot operations (VOP1, VOP2 and VOP3 forms).
fn lane_fn_more(op: Op) -> Option<(LaneFn, Out)> {
    let vop: LaneFn = match op {
        // A signed nibble as a multiple of 1/16 (interpolation offsets).
        v_cvt_off_f32_i4 => |_, a, _, _| v((((a as u8) << 4) as i8 as f32 / 256.0).to_bits()),
        // f16 transcendentals: computed in f64 and rounded once, within the documented ulp.
        v_log_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, x.to_f64().log2(), x)
        },
        v_exp_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, x.to_f64().exp2(), x)
        },
        v_sin_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, sin_cos_revolutions(x.to_f64(), false), x)
        },
        v_cos_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, sin_cos_revolutions(x.to_f64(), true), x)
        },
        v_frexp_mant_f16 => |ln, a, _, _| {
            let x = ln.env.in16(h(a));
            h64_of(&ln.env, float::frexp_mant32(x.to_f32()) as f64, x)
        },
        v_frexp_exp_i16_f16 => {
            |ln, a, _, _| v(float::frexp_exp32(ln.env.in16(h(a)).to_f32()) as i16 as u16 as u32)
        }
        // Two i16 halves saturated to bytes, packed into the low half.
        v_sat_pk_u8_i16 => |_, a, _, _| {
            let [lo, hi] = halves_i16(a).map(|x| x.clamp(0, 255) as u32);
            v(lo | hi << 8)
        },
        // Non-fused f16 multiply-add: the product is rounded to f16 before the addition.
        v_madmk_f16 | v_madak_f16 | v_mad_f16 | v_mad_legacy_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let [x, y, z] = [a, b, c].map(|s| e.in16(h(s)));
            let p = float::f16_of_f64(x.to_f64() * y.to_f64());
            let r = float::f16_of_f64(p.to_f64() + z.to_f64());
            f16r(e, float::nan_rule16(r, &[x, y, z]))
        },
        v_fma_legacy_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let [x, y, z] = [a, b, c].map(|s| e.in16(h(s)));
            let r = float::f16_of_f64(x.to_f64().mul_add(y.to_f64(), z.to_f64()));
            f16r(e, float::nan_rule16(r, &[x, y, z]))
        },
        v_div_fixup_f16 | v_div_fixup_legacy_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let g = |x: u64| e.in16(h(x)).to_f32();
            let (q, den, num) = (g(a), g(b), g(c));
            // A finite nonzero numerator and denominator pass the quotient through, a NaN one
            // quieted (the ISA's pseudo-code; the f32 form's overflow rule for a NaN quotient
            // describes its own division sequence, which the f16 one does not share).
            let ordinary = |x: f32| x.is_finite() && x != 0.0;
            let r = if q.is_nan() && ordinary(den) && ordinary(num) {
                float::quiet32(q)
            } else {
                float::div_fixup32(q, den, num)
            };
            h64(e, r as f64)
        },
        v_min3_f16 => |ln, a, b, c| {
            let (e, g) = (&ln.env, |x: u64| ln.env.in16(h(x)));
            f16r(
                e,
                float::min16_in(e.ieee, float::min16_in(e.ieee, g(a), g(b)), g(c)),
            )
        },
        v_max3_f16 => |ln, a, b, c| {
            let (e, g) = (&ln.env, |x: u64| ln.env.in16(h(x)));
            f16r(
                e,
                float::max16_in(e.ieee, float::max16_in(e.ieee, g(a), g(b)), g(c)),
            )
        },
        v_med3_f16 => |ln, a, b, c| {
            let (e, g) = (&ln.env, |x: u64| ln.env.in16(h(x)));
            f16r(e, float::med3_16(e.ieee, g(a), g(b), g(c)))
        },
        v_min3_i16 => {
            i3!(a, b, c => (a as i16).min(b as i16).min(c as i16) as u16 as u32)
        }
        v_max3_i16 => {
            i3!(a, b, c => (a as i16).max(b as i16).max(c as i16) as u16 as u32)
        }
        v_med3_i16 => i3!(a, b, c => {
            let (a, b, c) = (a as i16, b as i16, c as i16);
            a.max(b).min(a.min(b).max(c)) as u16 as u32
        }),
        v_min3_u16 => i3!(a, b, c => (a as u16).min(b as u16).min(c as u16) as u32),
        v_max3_u16 => i3!(a, b, c => (a as u16).max(b as u16).max(c as u16) as u32),
        v_med3_u16 => i3!(a, b, c => {
            let (a, b, c) = (a as u16, b as u16, c as u16);
            a.max(b).min(a.min(b).max(c)) as u32
        }),
        v_mad_u16 => |ln, a, b, c| {
            let r = (a as u16 as i64) * (b as u16 as i64) + c as u16 as i64;
            v(if ln.clamp {
                r.min(0xFFFF) as u32
            } else {
                r as u16 as u32
            })
        },
        v_mad_i16 => |ln, a, b, c| {
            let g = |x: u64| x as u16 as i16 as i64;
            v(i16_result(g(a) * g(b) + g(c), ln.clamp))
        },
        v_add_i16 => |ln, a, b, _| {
            let g = |x: u64| x as u16 as i16 as i64;
            v(i16_result(g(a) + g(b), ln.clamp))
        },
        v_sub_i16 => |ln, a, b, _| {
            let g = |x: u64| x as u16 as i16 as i64;
            v(i16_result(g(a) - g(b), ln.clamp))
        },
        v_trig_preop_f64 => {
            |ln, a, b, _| f64r(&ln.env, float::trig_preop64(ln.env.in64(d(a)), b as u32))
        }
        v_cubeid_f32 => f3!(e, a, b, c => float::cube(a, b, c).0),
        v_cubesc_f32 => f3!(e, a, b, c => float::cube(a, b, c).1),
        v_cubetc_f32 => f3!(e, a, b, c => float::cube(a, b, c).2),
        v_cubema_f32 => f3!(e, a, b, c => 2.0 * float::cube(a, b, c).3),
        // Per byte: the rounded average of the bytes of src0 and src1, the rounding bit taken
        // from bit 0 of src2's byte.
        v_lerp_u8 => i3!(a, b, c => (0..4).fold(0u32, |r, i| {
            let byte = |x: u32| (x >> (8 * i)) & 0xFF;
            r | ((byte(a) + byte(b) + (byte(c) & 1)) >> 1) << (8 * i)
        })),
        v_sad_u8 => i3!(a, b, c => sad_bytes(a, b, false).wrapping_add(c)),
        v_sad_hi_u8 => i3!(a, b, c => (sad_bytes(a, b, false) << 16).wrapping_add(c)),
        v_sad_u16 => i3!(a, b, c => {
            let d16 = |s: u32| ((a >> s) & 0xFFFF).abs_diff((b >> s) & 0xFFFF);
            (d16(0) + d16(16)).wrapping_add(c)
        }),
        v_sad_u32 => i3!(a, b, c => a.abs_diff(b).wrapping_add(c)),
        v_msad_u8 => i3!(a, b, c => sad_bytes(a, b, true).wrapping_add(c)),
        // Four SADs of src1 against the byte windows of src0, each added to a 16-bit field of
        // src2 (wrapping at 16 bits).
        v_qsad_pk_u16_u8 => |_, a, b, c| v64(qsad(a, b as u32, c, false)),
        v_mqsad_pk_u16_u8 => |_, a, b, c| v64(qsad(a, b as u32, c, true)),
        // Dot products into the destination (the addend `c` is the old destination).
        v_dot2c_f32_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let g = |x: u64, s: u32| e.in16(h(x >> s)).to_f64();
            f32r(
                e,
                dot2_f16([g(a, 0), g(a, 16), g(b, 0), g(b, 16), e.in32(f(c)) as f64]),
            )
        },
        v_dot2c_i32_i16 => |ln, a, b, c| {
            let (x, y) = (halves_i16(a), halves_i16(b));
            let sum = x[0] * y[0] + x[1] * y[1] + c as u32 as i32 as i64;
            v(i32_result(sum, ln.clamp))
        },
        v_dot4c_i32_i8 => |ln, a, b, c| {
            let (x, y) = (bytes_i8(a), bytes_i8(b));
            let p: i64 = (0..4).map(|i| x[i] * y[i]).sum();
            v(i32_result(p + c as u32 as i32 as i64, ln.clamp))
        },
        v_dot8c_i32_i4 => |ln, a, b, c| {
            let (x, y) = (nibbles_i4(a), nibbles_i4(b));
            let p: i64 = (0..8).map(|i| x[i] * y[i]).sum();
            v(i32_result(p + c as u32 as i32 as i64, ln.clamp))
        },
        // Two f32 values to 8-bit floats in one word of the destination (op_sel bit 3 picks
        // the high word); the other word keeps the old destination (`c`).
        v_cvt_pk_fp8_f32 => |ln, a, b, c| v(pack_8bit_floats(ln, a, b, c, 3, 8)),
        v_cvt_pk_bf8_f32 => |ln, a, b, c| v(pack_8bit_floats(ln, a, b, c, 2, 16)),
        v_pk_fmac_f16 => |ln, a, b, c| {
            let e = &ln.env;
            let g = |x: u64, s: u32| e.in16(h(x >> s)).to_f64();
            let half = |s: u32| e.out16(float::f16_of_f64(g(a, s).mul_add(g(b, s), g(c, s))));
            v(half(0).to_bits() as u32 | (half(16).to_bits() as u32) << 16)
        },
        _ => return lane_fn_flags(op),
    };
    Some((vop, Out::V))
}

/// Operations that write a lane mask (compares, carries, division scaling).
fn lane_fn_flags(op: Op) -> Option<(LaneFn, Out)> {
    let vm = Out::VMask;
    Some(match op {
        v_add_co_u32 => (
            |ln, a, b, _| {
                let r = u32s(a) + u32s(b);
                (unsigned_result(r, 32, ln.clamp).into(), r >> 32 != 0)
            },
            vm,
        ),
        v_sub_co_u32 => (
            |ln, a, b, _| {
                let r = u32s(a) - u32s(b);
                (unsigned_result(r, 32, ln.clamp).into(), r < 0)
            },
            vm,
        ),
        v_subrev_co_u32 => (
            |ln, a, b, _| {
                let r = u32s(b) - u32s(a);
                (unsigned_result(r, 32, ln.clamp).into(), r < 0)
            },
            vm,
        ),
        v_addc_co_u32 => (
            |ln, a, b, _| {
                let r = a as u32 as u64 + b as u32 as u64 + ln.carry as u64;
                (r as u32 as u64, r >> 32 != 0)
            },
            vm,
        ),
        v_subb_co_u32 => (
            |ln, a, b, _| {
                let r = (a as u32 as u64)
                    .wrapping_sub(b as u32 as u64)
                    .wrapping_sub(ln.carry as u64);
                (
                    r as u32 as u64,
                    b as u32 as u64 + ln.carry as u64 > a as u32 as u64,
                )
            },
            vm,
        ),
        v_subbrev_co_u32 => (
            |ln, a, b, _| {
                let r = (b as u32 as u64)
                    .wrapping_sub(a as u32 as u64)
                    .wrapping_sub(ln.carry as u64);
                (
                    r as u32 as u64,
                    a as u32 as u64 + ln.carry as u64 > b as u32 as u64,
                )
            },
            vm,
        ),
        v_div_scale_f32 => (
            |ln, a, b, c| {
                let e = &ln.env;
                let (r, vcc) = float::div_scale32(e.in32(f(a)), e.in32(f(b)), e.in32(f(c)));
                (r.to_bits() as u64, vcc)
            },
            vm,
        ),
        v_div_scale_f64 => (
            |ln, a, b, c| {
                let e = &ln.env;
                let (r, vcc) = float::div_scale64(e.in64(d(a)), e.in64(d(b)), e.in64(d(c)));
                (r.to_bits(), vcc)
            },
            vm,
        ),
        v_mad_u64_u32 => (
            |_, a, b, c| {
                let r = (a as u32 as u128) * (b as u32 as u128) + c as u128;
                (r as u64, r >> 64 != 0)
            },
            vm,
        ),
        v_mad_i64_i32 => (
            |_, a, b, c| {
                let r = (a as u32 as i32 as i128) * (b as u32 as i32 as i128) + c as i64 as i128;
                (r as u64, r > i64::MAX as i128 || r < i64::MIN as i128)
            },
            vm,
        ),
        _ => return lane_fn_cmp(op),
    })
}

// The ordered comparisons are spelled out on purpose: with a NaN operand `a < b || a > b` is
// false where `a != b` is true, and `!(a >= b)` is true where `a < b` is false.
#[allow(
    clippy::double_comparisons,
    clippy::nonminimal_bool,
    clippy::neg_cmp_op_on_partial_ord
)]
fn lane_fn_cmp(op: Op) -> Option<(LaneFn, Out)> {
    let name = op.name();
    if !name.starts_with("v_cmp") {
        return None;
    }
    if let Some(rest) = name.strip_prefix("v_cmpx_") {
        // A cmpx compares as its cmp form does, then also writes EXEC (resolved once, when the
        // operation table is built).
        let cmp = Op::ALL
            .iter()
            .copied()
            .find(|o| o.name().strip_prefix("v_cmp_") == Some(rest))?;
        let (fnc, _) = lane_fn_cmp(cmp)?;
        return Some((fnc, Out::Mask { exec: true }));
    }
    let fnc: LaneFn = match op {
        v_cmp_class_f32 | v_cmpx_class_f32 => {
            |ln, a, b, _| (0, float::class32(ln.env.in32(f(a)), b as u32))
        }
        v_cmp_class_f64 | v_cmpx_class_f64 => {
            |ln, a, b, _| (0, float::class64(ln.env.in64(d(a)), b as u32))
        }
        v_cmp_class_f16 | v_cmpx_class_f16 => {
            |ln, a, b, _| (0, float::class16(ln.env.in16(h(a)), b as u32))
        }
        v_cmp_f_f32 | v_cmp_f_f64 | v_cmp_f_f16 | v_cmp_f_i32 | v_cmp_f_u32 | v_cmp_f_i64
        | v_cmp_f_u64 | v_cmp_f_i16 | v_cmp_f_u16 => |_, _, _, _| (0, false),
        v_cmp_tru_f32 | v_cmp_tru_f64 | v_cmp_tru_f16 | v_cmp_t_i32 | v_cmp_t_u32 | v_cmp_t_i64
        | v_cmp_t_u64 | v_cmp_t_i16 | v_cmp_t_u16 => |_, _, _, _| (0, true),
        v_cmp_lt_f32 | v_cmpx_lt_f32 => cmpf!(a, b => a < b),
        v_cmp_eq_f32 | v_cmpx_eq_f32 => cmpf!(a, b => a == b),
        v_cmp_le_f32 => cmpf!(a, b => a <= b),
        v_cmp_gt_f32 | v_cmpx_gt_f32 => cmpf!(a, b => a > b),
        v_cmp_lg_f32 => cmpf!(a, b => a < b || a > b),
        v_cmp_ge_f32 => cmpf!(a, b => a >= b),
        v_cmp_o_f32 => cmpf!(a, b => !a.is_nan() && !b.is_nan()),
        v_cmp_u_f32 => cmpf!(a, b => a.is_nan() || b.is_nan()),
        v_cmp_nge_f32 => cmpf!(a, b => !(a >= b)),
        v_cmp_nlg_f32 => cmpf!(a, b => !(a < b || a > b)),
        v_cmp_ngt_f32 => cmpf!(a, b => !(a > b)),
        v_cmp_nle_f32 => cmpf!(a, b => !(a <= b)),
        v_cmp_neq_f32 | v_cmpx_neq_f32 => cmpf!(a, b => a != b),
        v_cmp_nlt_f32 => cmpf!(a, b => !(a < b)),
        v_cmp_lt_f64 => cmpd!(a, b => a < b),
        v_cmp_eq_f64 => cmpd!(a, b => a == b),
        v_cmp_le_f64 => cmpd!(a, b => a <= b),
        v_cmp_gt_f64 => cmpd!(a, b => a > b),
        v_cmp_lg_f64 => cmpd!(a, b => a < b || a > b),
        v_cmp_ge_f64 => cmpd!(a, b => a >= b),
        v_cmp_o_f64 => cmpd!(a, b => !a.is_nan() && !b.is_nan()),
        v_cmp_u_f64 => cmpd!(a, b => a.is_nan() || b.is_nan()),
        v_cmp_nge_f64 => cmpd!(a, b => !(a >= b)),
        v_cmp_nlg_f64 => cmpd!(a, b => !(a < b || a > b)),
        v_cmp_ngt_f64 => cmpd!(a, b => !(a > b)),
        v_cmp_nle_f64 => cmpd!(a, b => !(a <= b)),
        v_cmp_neq_f64 => cmpd!(a, b => a != b),
        v_cmp_nlt_f64 => cmpd!(a, b => !(a < b)),
        v_cmp_lt_f16 => cmph!(a, b => a < b),
        v_cmp_eq_f16 => cmph!(a, b => a == b),
        v_cmp_le_f16 => cmph!(a, b => a <= b),
        v_cmp_gt_f16 => cmph!(a, b => a > b),
        v_cmp_lg_f16 => cmph!(a, b => a < b || a > b),
        v_cmp_ge_f16 => cmph!(a, b => a >= b),
        v_cmp_o_f16 => cmph!(a, b => !a.is_nan() && !b.is_nan()),
        v_cmp_u_f16 => cmph!(a, b => a.is_nan() || b.is_nan()),
        v_cmp_nge_f16 => cmph!(a, b => !(a >= b)),
        v_cmp_nlg_f16 => cmph!(a, b => !(a < b || a > b)),
        v_cmp_ngt_f16 => cmph!(a, b => !(a > b)),
        v_cmp_nle_f16 => cmph!(a, b => !(a <= b)),
        v_cmp_neq_f16 => cmph!(a, b => a != b),
        v_cmp_nlt_f16 => cmph!(a, b => !(a < b)),
        v_cmp_lt_i32 | v_cmpx_lt_i32 => cmpi!(u32, a, b => (a as i32) < (b as i32)),
        v_cmp_eq_i32 | v_cmpx_eq_i32 | v_cmp_eq_u32 | v_cmpx_eq_u32 => cmpi!(u32, a, b => a == b),
        v_cmp_le_i32 => cmpi!(u32, a, b => (a as i32) <= (b as i32)),
        v_cmp_gt_i32 | v_cmpx_gt_i32 => cmpi!(u32, a, b => (a as i32) > (b as i32)),
        v_cmp_ne_i32 | v_cmpx_ne_i32 | v_cmp_ne_u32 | v_cmpx_ne_u32 => cmpi!(u32, a, b => a != b),
        v_cmp_ge_i32 => cmpi!(u32, a, b => (a as i32) >= (b as i32)),
        v_cmp_lt_u32 | v_cmpx_lt_u32 => cmpi!(u32, a, b => a < b),
        v_cmp_le_u32 => cmpi!(u32, a, b => a <= b),
        v_cmp_gt_u32 | v_cmpx_gt_u32 => cmpi!(u32, a, b => a > b),
        v_cmp_ge_u32 => cmpi!(u32, a, b => a >= b),
        v_cmp_lt_i64 => cmpi!(i64, a, b => a < b),
        v_cmp_eq_i64 | v_cmp_eq_u64 => cmpi!(u64, a, b => a == b),
        v_cmp_le_i64 => cmpi!(i64, a, b => a <= b),
        v_cmp_gt_i64 => cmpi!(i64, a, b => a > b),
        v_cmp_ne_i64 | v_cmp_ne_u64 => cmpi!(u64, a, b => a != b),
        v_cmp_ge_i64 => cmpi!(i64, a, b => a >= b),
        v_cmp_lt_u64 => cmpi!(u64, a, b => a < b),
        v_cmp_le_u64 => cmpi!(u64, a, b => a <= b),
        v_cmp_gt_u64 => cmpi!(u64, a, b => a > b),
        v_cmp_ge_u64 => cmpi!(u64, a, b => a >= b),
        v_cmp_lt_i16 => cmpi!(u16, a, b => (a as i16) < (b as i16)),
        v_cmp_eq_i16 | v_cmp_eq_u16 => cmpi!(u16, a, b => a == b),
        v_cmp_gt_i16 => cmpi!(u16, a, b => (a as i16) > (b as i16)),
        v_cmp_le_i16 => cmpi!(u16, a, b => (a as i16) <= (b as i16)),
        v_cmp_ge_i16 => cmpi!(u16, a, b => (a as i16) >= (b as i16)),
        v_cmp_ne_i16 | v_cmp_ne_u16 => cmpi!(u16, a, b => a != b),
        v_cmp_lt_u16 => cmpi!(u16, a, b => a < b),
        v_cmp_le_u16 => cmpi!(u16, a, b => a <= b),
        v_cmp_gt_u16 => cmpi!(u16, a, b => a > b),
        v_cmp_ge_u16 => cmpi!(u16, a, b => a >= b),
        _ => return None,
    };
    let _ = b;
    Some((fnc, Out::Mask { exec: false }))
}

/// The packed operations [`vop3p`] runs with clamp: the float ones clamp each result to
/// [0, 1], the integer adds, subtracts and multiply-adds saturate it.
fn packed_clamps(op: Op) -> bool {
    packed_half_float(op)
        || matches!(
            op,
            v_pk_fma_f32
                | v_pk_mul_f32
                | v_pk_add_f32
                | v_pk_add_u16
                | v_pk_sub_u16
                | v_pk_add_i16
                | v_pk_sub_i16
                | v_pk_mad_u16
                | v_pk_mad_i16
        )
}

/// The packed f16 operations of [`vop3p`].
fn packed_half_float(op: Op) -> bool {
    matches!(
        op,
        v_pk_add_f16 | v_pk_mul_f16 | v_pk_fma_f16 | v_pk_min_f16 | v_pk_max_f16
    )
}

/// `x` as a u16 result: saturated under clamp, else wrapped.
fn u16_result(x: i64, clamp: bool) -> u16 {
    unsigned_result(x, 16, clamp) as u16
}

/// VOP3P: packed math, packed moves, accumulator moves and MFMA.
fn vop3p(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let exec = w.exec();
    let types = op.types();
    let nsrc = types.len() - 1;
    match op {
        v_accvgpr_read_b32 | v_accvgpr_write_b32 => {
            let s = fetch(w, ctx, inst, 0, Ty::B32);
            let dst = Wave::vslot(inst.dst);
            for l in 0..LANES {
                if exec >> l & 1 != 0 {
                    w.v[dst][l] = s[l] as u32;
                }
            }
            w.lane_insts += exec.count_ones() as u64;
            return Ok(Flow::Next);
        }
        v_fma_mix_f32 | v_fma_mixlo_f16 | v_fma_mixhi_f16 => {
            return matrix::fma_mix(w, ctx, inst);
        }
        _ if matrix::is_mfma(op) => return matrix::mfma(w, ctx, inst),
        v_dot2_f32_f16 | v_dot2_i32_i16 | v_dot2_u32_u16 | v_dot4_i32_i8 | v_dot4_u32_u8
        | v_dot8_i32_i4 | v_dot8_u32_u4 => return dot(w, ctx, inst),
        _ => {}
    }
    if inst.clamp && !packed_clamps(op) {
        return Err(illegal(format!("{} with clamp is not emulated", op.name())));
    }
    let env = Env::from_mode(w.mode);
    let mut srcs = [[0u64; LANES]; 3];
    for k in 0..nsrc {
        srcs[k] = fetch(w, ctx, inst, k, types[k + 1]);
        if inst.src[k] < VGPR && (inst.src[k] >= 128) {
            // Inline constants and literals apply to both halves.
            for x in srcs[k].iter_mut() {
                let lo = *x & 0xFFFF_FFFF;
                *x = if types[k + 1] == Ty::PF32 {
                    lo | lo << 32
                } else {
                    (lo & 0xFFFF) | (lo & 0xFFFF) << 16
                };
            }
        }
    }
    let dst = Wave::vslot(inst.dst);
    let half_sel = |k: usize, hi: bool| -> bool {
        if hi {
            (inst.op_sel_hi >> k) & 1 != 0
        } else {
            (inst.op_sel >> k) & 1 != 0
        }
    };
    let negbit = |k: usize, hi: bool| -> bool {
        if hi {
            (inst.abs >> k) & 1 != 0
        } else {
            (inst.neg >> k) & 1 != 0
        }
    };
    match op {
        v_pk_mov_b32 => {
            for l in 0..LANES {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let lo = if inst.op_sel & 1 != 0 {
                    srcs[0][l] >> 32
                } else {
                    srcs[0][l]
                } as u32;
                let hi = if inst.op_sel & 2 != 0 {
                    srcs[1][l] >> 32
                } else {
                    srcs[1][l]
                } as u32;
                w.v[dst][l] = lo;
                w.v[(dst + 1) & 511][l] = hi;
            }
        }
        v_pk_fma_f32 | v_pk_mul_f32 | v_pk_add_f32 => {
            for l in 0..LANES {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let mut res = [0u32; 2];
                for (part, slot) in res.iter_mut().enumerate() {
                    let hi = part == 1;
                    let g = |k: usize| -> f32 {
                        let bits = if half_sel(k, hi) {
                            srcs[k][l] >> 32
                        } else {
                            srcs[k][l]
                        } as u32;
                        let x = env.in32(f32::from_bits(bits));
                        if negbit(k, hi) { -x } else { x }
                    };
                    let r = match op {
                        v_pk_fma_f32 => float::fma32(g(0), g(1), g(2)),
                        v_pk_mul_f32 => float::nan_rule32(g(0) * g(1), g(0), g(1)),
                        _ => float::nan_rule32(g(0) + g(1), g(0), g(1)),
                    };
                    *slot = env.out32(r).to_bits();
                    if inst.clamp {
                        *slot = output_modifiers((*slot).into(), Ty::F32, 0, true, &env, op) as u32;
                    }
                }
                w.v[dst][l] = res[0];
                w.v[(dst + 1) & 511][l] = res[1];
            }
        }
        v_pk_add_f16 | v_pk_mul_f16 | v_pk_fma_f16 | v_pk_min_f16 | v_pk_max_f16 | v_pk_add_u16
        | v_pk_sub_u16 | v_pk_add_i16 | v_pk_sub_i16 | v_pk_mul_lo_u16 | v_pk_lshlrev_b16
        | v_pk_lshrrev_b16 | v_pk_ashrrev_i16 | v_pk_max_i16 | v_pk_min_i16 | v_pk_max_u16
        | v_pk_min_u16 | v_pk_mad_u16 | v_pk_mad_i16 => {
            for l in 0..LANES {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let mut res = 0u32;
                for part in 0..2 {
                    let hi = part == 1;
                    let g = |k: usize| -> u16 {
                        (if half_sel(k, hi) {
                            srcs[k][l] >> 16
                        } else {
                            srcs[k][l]
                        } as u16)
                    };
                    let gh = |k: usize| -> f16 {
                        let x = env.in16(f16::from_bits(g(k)));
                        if negbit(k, hi) { -x } else { x }
                    };
                    let gf = |k: usize| gh(k).to_f32();
                    let ruled = |r: f16, n: usize| {
                        let src = [gh(0), gh(1), gh(2)];
                        env.out16(float::nan_rule16(r, &src[..n])).to_bits()
                    };
                    let r: u16 = match op {
                        v_pk_add_f16 => ruled(f16::from_f32(gf(0) + gf(1)), 2),
                        v_pk_mul_f16 => ruled(f16::from_f32(gf(0) * gf(1)), 2),
                        v_pk_fma_f16 => ruled(
                            float::f16_of_f64((gf(0) as f64).mul_add(gf(1) as f64, gf(2) as f64)),
                            3,
                        ),
                        v_pk_min_f16 => float::min16_in(env.ieee, gh(0), gh(1)).to_bits(),
                        v_pk_max_f16 => float::max16_in(env.ieee, gh(0), gh(1)).to_bits(),
                        v_pk_add_u16 => u16_result(g(0) as i64 + g(1) as i64, inst.clamp),
                        v_pk_sub_u16 => u16_result(g(0) as i64 - g(1) as i64, inst.clamp),
                        v_pk_add_i16 => {
                            i16_result(g(0) as i16 as i64 + g(1) as i16 as i64, inst.clamp) as u16
                        }
                        v_pk_sub_i16 => {
                            i16_result(g(0) as i16 as i64 - g(1) as i16 as i64, inst.clamp) as u16
                        }
                        v_pk_mul_lo_u16 => g(0).wrapping_mul(g(1)),
                        v_pk_lshlrev_b16 => g(1) << (g(0) & 15),
                        v_pk_lshrrev_b16 => g(1) >> (g(0) & 15),
                        v_pk_ashrrev_i16 => ((g(1) as i16) >> (g(0) & 15)) as u16,
                        v_pk_max_i16 => (g(0) as i16).max(g(1) as i16) as u16,
                        v_pk_min_i16 => (g(0) as i16).min(g(1) as i16) as u16,
                        v_pk_max_u16 => g(0).max(g(1)),
                        v_pk_min_u16 => g(0).min(g(1)),
                        v_pk_mad_u16 => {
                            u16_result(g(0) as i64 * g(1) as i64 + g(2) as i64, inst.clamp)
                        }
                        _ => {
                            let s = |k: usize| g(k) as i16 as i64;
                            i16_result(s(0) * s(1) + s(2), inst.clamp) as u16
                        }
                    };
                    let r = if inst.clamp && packed_half_float(op) {
                        output_modifiers(r.into(), Ty::F16, 0, true, &env, op) as u16
                    } else {
                        r
                    };
                    res |= (r as u32) << (16 * part);
                }
                w.v[dst][l] = res;
            }
        }
        _ => return Err(illegal(format!("{} is not implemented", op.name()))),
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

/// The VOP3P dot products: `src2` plus the sum of the products of the elements of `src0` and
/// `src1` (f16 pairs, 16-bit pairs, bytes or nibbles). The two 16-bit elements are the halves
/// op_sel (first) and op_sel_hi (second) select, each negated by neg_lo/neg_hi for f16. Clamp
/// saturates an integer sum to the destination's range and an f32 one to [0, 1]. The f16
/// products are exact and summed with the addend in f64 before one rounding to f32.
fn dot(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let types = op.types();
    let float = op == v_dot2_f32_f16;
    let pairs = matches!(op, v_dot2_f32_f16 | v_dot2_i32_i16 | v_dot2_u32_u16);
    if (!float && (inst.neg | inst.abs) != 0) || (float && (inst.neg | inst.abs) & 4 != 0) {
        return Err(illegal(format!(
            "{} with neg_lo/neg_hi on integer or accumulator sources is not emulated",
            op.name()
        )));
    }
    if pairs
        && ctx.target == crate::target::Target::Gfx942
        && (inst.op_sel & 7 != 0 || inst.op_sel_hi & 3 != 3)
    {
        return Err(illegal(format!(
            "{} with half selects on gfx942 (LLVM accepts only the default ones there) is not \
             emulated",
            op.name()
        )));
    }
    let env = Env::from_mode(w.mode);
    let exec = w.exec();
    let srcs: [Lanes; 3] = std::array::from_fn(|k| {
        let mut x = fetch(w, ctx, inst, k, types[k + 1]);
        if pairs && k < 2 && (128..VGPR).contains(&inst.src[k]) {
            // A constant supplies both halves.
            for v in x.iter_mut() {
                *v = (*v & 0xFFFF) | (*v & 0xFFFF) << 16;
            }
        }
        x
    });
    let half = |x: u64, k: usize, second: bool| -> u64 {
        let sel = if second { inst.op_sel_hi } else { inst.op_sel };
        (if (sel >> k) & 1 != 0 { x >> 16 } else { x }) & 0xFFFF
    };
    let dst = Wave::vslot(inst.dst);
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (a, b, c) = (srcs[0][l], srcs[1][l], srcs[2][l]);
        let r = if float {
            let g = |x: u64, k: usize, second: bool| {
                let v = env.in16(h(half(x, k, second))).to_f64();
                let neg = if second { inst.abs } else { inst.neg };
                if (neg >> k) & 1 != 0 { -v } else { v }
            };
            let sources = [
                g(a, 0, false),
                g(a, 0, true),
                g(b, 1, false),
                g(b, 1, true),
                env.in32(f(c)) as f64,
            ];
            let mut x = env.out32(dot2_f16(sources));
            if inst.clamp {
                x = if x.is_nan() {
                    if env.dx10_clamp { 0.0 } else { x }
                } else {
                    x.clamp(0.0, 1.0)
                };
            }
            x.to_bits()
        } else {
            let signed = matches!(op, v_dot2_i32_i16 | v_dot4_i32_i8 | v_dot8_i32_i4);
            let products: i64 = match op {
                v_dot2_i32_i16 | v_dot2_u32_u16 => [false, true]
                    .iter()
                    .map(|&second| {
                        let e = |x: u64, k: usize| {
                            let v = half(x, k, second);
                            if signed {
                                v as u16 as i16 as i64
                            } else {
                                v as i64
                            }
                        };
                        e(a, 0) * e(b, 1)
                    })
                    .sum(),
                v_dot4_i32_i8 => (0..4).map(|i| bytes_i8(a)[i] * bytes_i8(b)[i]).sum(),
                v_dot4_u32_u8 => (0..4)
                    .map(|i| ((a >> (8 * i)) & 0xFF) as i64 * ((b >> (8 * i)) & 0xFF) as i64)
                    .sum(),
                v_dot8_i32_i4 => (0..8).map(|i| nibbles_i4(a)[i] * nibbles_i4(b)[i]).sum(),
                _ => (0..8)
                    .map(|i| ((a >> (4 * i)) & 0xF) as i64 * ((b >> (4 * i)) & 0xF) as i64)
                    .sum(),
            };
            let acc = if signed {
                c as u32 as i32 as i64
            } else {
                c as u32 as i64
            };
            let sum = products + acc;
            let (lo, hi) = if signed {
                (i32::MIN as i64, i32::MAX as i64)
            } else {
                (0, u32::MAX as i64)
            };
            (if inst.clamp { sum.clamp(lo, hi) } else { sum }) as u32
        };
        w.v[dst][l] = r;
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-source operations' special cases, on the per-lane functions: NaN results are
    /// the source quieted or the canonical (positive) quiet NaN, never the host's negative
    /// default NaN; `v_exp_f32` gives no denormal and `v_log_f32` reads a denormal as zero
    /// (both in the MODE that keeps f32 denormals); IEEE-mode min and max quiet a signalling
    /// NaN source, and without MODE.IEEE they return the other source.
    #[test]
    fn one_source_special_cases_and_ieee_min_max() {
        let run = |op: Op, mode: u32, a: u64, b: u64| {
            let (f, _) = lane_fn(op).unwrap_or_else(|| panic!("{} has a lane function", op.name()));
            f(&Ln::plain(Env::from_mode(mode), 0, 0), a, b, 0).0
        };
        const KEEP: u32 = 0xF0 | 1 << 9;
        let minus_one = u64::from((-1.0f32).to_bits());
        for op in [v_sqrt_f32, v_rsq_f32, v_log_f32] {
            assert_eq!(run(op, KEEP, minus_one, 0), 0x7FC0_0000, "{}", op.name());
        }
        assert_eq!(
            run(v_sqrt_f64, KEEP, (-2.0f64).to_bits(), 0),
            0x7FF8_0000_0000_0000
        );
        assert_eq!(run(v_sqrt_f16, KEEP, 0xBC00, 0), 0x7E00);
        // Infinity times zero in the non-fused and dot-product forms: the canonical NaN.
        let three = |op: Op, a: u64, b: u64, c: u64| {
            let (f, _) = lane_fn(op).expect("a lane function");
            f(&Ln::plain(Env::from_mode(KEEP), 0, 0), a, b, c).0
        };
        let (inf, one) = (
            u64::from(f32::INFINITY.to_bits()),
            u64::from(1.0f32.to_bits()),
        );
        assert_eq!(three(v_mad_f32, inf, 0, one), 0x7FC0_0000);
        assert_eq!(three(v_mad_f16, 0x7C00, 0, 0x3C00), 0x7E00);
        assert_eq!(
            three(v_dot2c_f32_f16, 0x3C00_7C00, 0x3C00_0000, one),
            0x7FC0_0000
        );
        assert_eq!(three(v_mul_legacy_f32, 0x7F80_0001, one, 0), 0x7FC0_0001);
        assert_eq!(run(v_rsq_f16, KEEP, 0xBC00, 0), 0x7E00);
        assert_eq!(run(v_log_f16, KEEP, 0xBC00, 0), 0x7E00);
        // A signalling NaN source comes back quieted, its payload and sign kept.
        assert_eq!(run(v_frexp_mant_f32, KEEP, 0xFF80_0123, 0), 0xFFC0_0123);
        assert_eq!(run(v_ldexp_f32, KEEP, 0x7F80_0001, 3), 0x7FC0_0001);
        assert_eq!(run(v_ldexp_f16, KEEP, 0x7C01, 3), 0x7E01);
        assert_eq!(run(v_fract_f32, KEEP, 0x7F80_0001, 0), 0x7FC0_0001);
        assert_eq!(run(v_fract_f16, KEEP, 0x7C00, 0), 0x7E00);
        // 2^-130 is a denormal: v_exp_f32 flushes it; log2 of a denormal is -inf.
        assert_eq!(run(v_exp_f32, KEEP, u64::from((-130.0f32).to_bits()), 0), 0);
        assert_eq!(
            run(v_exp_f32, KEEP, u64::from((-126.0f32).to_bits()), 0),
            0x0080_0000
        );
        assert_eq!(run(v_log_f32, KEEP, 1, 0), 0xFF80_0000);
        // The f16 form gives denormals: 2^-16 is 256 units of 2^-24.
        assert_eq!(run(v_exp_f16, KEEP, 0xCC00, 0), 0x0100);
        // Whole and quarter revolutions are exact, including far from zero.
        let sin = |x: f32| run(v_sin_f32, KEEP, u64::from(x.to_bits()), 0) as u32;
        let cos = |x: f32| run(v_cos_f32, KEEP, u64::from(x.to_bits()), 0) as u32;
        assert_eq!(
            [sin(1.0), sin(-2.5), sin(100.25), sin(-0.75)],
            [0, 0, 0x3F80_0000, 0x3F80_0000]
        );
        assert_eq!(
            [cos(0.5), cos(3.75), cos(-256.0)],
            [0xBF80_0000, 0, 0x3F80_0000]
        );
        // MODE.IEEE on (bit 9): a signalling NaN source wins, quieted; off: the other source.
        let (snan, two) = (0x7F80_0005u64, u64::from(2.0f32.to_bits()));
        assert_eq!(run(v_min_f32, KEEP, two, snan), 0x7FC0_0005);
        assert_eq!(run(v_max_f32, KEEP, snan, two), 0x7FC0_0005);
        assert_eq!(run(v_min_f32, 0xF0, two, snan), two);
        assert_eq!(
            run(v_max_f64, KEEP, 0x7FF0_0000_0000_0001, 0),
            0x7FF8_0000_0000_0001
        );
        assert_eq!(run(v_min_f16, KEEP, 0x3C00, 0x7C01), 0x7E01);
        assert_eq!(run(v_min_f16, 0xF0, 0x3C00, 0x7C01), 0x3C00);
    }

    /// The fast FMA (target-feature and baseline forms) against the per-lane reference, on
    /// random and special inputs, every denormal mode and the EXEC classes full, empty,
    /// alternating, single lane and random.
    #[test]
    fn fast_fma_matches_the_per_lane_reference() {
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        let masks = [
            u64::MAX,
            0,
            0xAAAA_AAAA_AAAA_AAAA,
            1 << 37,
            0x0123_4567_89AB_CDEF,
        ];
        for round in 0..200 {
            let mut src = [[0u32; LANES]; 3];
            for s in src.iter_mut() {
                for x in s.iter_mut() {
                    *x = super::super::f32_test_bits(&mut r);
                }
            }
            let mut old = [0u32; LANES];
            for x in old.iter_mut() {
                *x = super::super::f32_test_bits(&mut r);
            }
            let mode = ((round % 4) as u32) << 4;
            let e = Env::from_mode(mode);
            for &mask in &masks {
                for acc_in_dst in [false, true] {
                    let mut want = old;
                    for l in 0..LANES {
                        if mask >> l & 1 == 0 {
                            continue;
                        }
                        let acc = if acc_in_dst {
                            f32::from_bits(old[l])
                        } else {
                            f32::from_bits(src[2][l])
                        };
                        let (x, y) = (f32::from_bits(src[0][l]), f32::from_bits(src[1][l]));
                        let v = float::fma32(e.in32(x), e.in32(y), e.in32(acc));
                        want[l] = e.out32(v).to_bits();
                    }
                    let mut fast = old;
                    fma_lanes(&mut fast, mask, &src[0], &src[1], &src[2], acc_in_dst, &e);
                    let mut base = old;
                    fma_lanes_generic(&mut base, mask, &src[0], &src[1], &src[2], acc_in_dst, &e);
                    assert_eq!(fast, want, "mode {mode:x} mask {mask:x}");
                    assert_eq!(base, want, "mode {mode:x} mask {mask:x}");
                }
            }
        }
    }

    /// Every operation with a specialised loop against its per-lane function, on random and
    /// special inputs, every denormal mode and every EXEC class.
    #[test]
    fn fast_paths_match_their_lane_functions() {
        // The accumulating and literal forms are covered by the FMA and register-row tests.
        let ops = FAST_OPS
            .into_iter()
            .filter(|o| !matches!(o, v_fmac_f32 | v_fmaak_f32 | v_fmamk_f32));
        let mut r = 0x2545_F491_4F6C_DD1Du64;
        let masks = [u64::MAX, 0, 0x5555_5555_5555_5555, 1, 0xF0F0_0F0F_1234_8765];
        for op in ops {
            let (lane, _) = info(op).lane.expect("a lane function");
            for round in 0..40 {
                let mut src = [[0u64; LANES]; 3];
                for x in src.iter_mut().flatten() {
                    *x = super::super::f32_test_bits(&mut r) as u64;
                }
                let carry = r.rotate_left(round);
                let env = Env::from_mode((round % 4) << 4);
                for &mask in &masks {
                    let mut old = [0u32; LANES];
                    for x in old.iter_mut() {
                        *x = super::super::f32_test_bits(&mut r);
                    }
                    let mut want = old;
                    for l in 0..LANES {
                        if mask >> l & 1 != 0 {
                            let ln = Ln::plain(env, l, carry);
                            want[l] = lane(&ln, src[0][l], src[1][l], src[2][l]).0 as u32;
                        }
                    }
                    let mut got = old;
                    let rows = narrow(&src);
                    assert!(fast_path(op, &mut got, mask, rows.each_ref(), &env, carry));
                    assert_eq!(got, want, "{} mask {mask:x}", op.name());
                }
            }
        }
    }

    /// One fast-path operation through the register rows against the per-lane path, over
    /// every source kind (VGPR, SGPR, inline constant, literal), neg/abs, the `*mk`/`*ak`
    /// literal, `fmac`'s accumulator, both condition sources of `cndmask`, every denormal mode
    /// and the EXEC classes.
    #[test]
    fn register_rows_match_the_per_lane_path() {
        use crate::memory::RegionMemory;
        let target = crate::target::Target::Gfx942;
        let prog = crate::decode::Program::decode(target, 0x1000, &[]);
        let mem = RegionMemory::new();
        let (mut lds, mut scratch, mut trace) = (vec![0u8; 64], vec![0u8; 64], Vec::new());
        let mut spans = crate::memory::Spans::default();
        let mut counts = crate::counting::GroupCounts::default();
        let mut ctx = Ctx {
            target,
            prog: &prog,
            mem: &mem,
            lds: &mut lds,
            scratch: &mut scratch,
            private_size: 0,
            apertures: Default::default(),
            trace: &mut trace,
            clock_base: std::time::Instant::now(),
            counting: false,
            counts: &mut counts,
            plans: &[],
            fast: true,
            spans: &mut spans,
            native: None,
        };
        // v_add_f32_e32 v2, v2, v3 and v_fma_f32 v2, v2, s0, -v3 as templates.
        let vop2 = crate::decode::decode(target, &[0x0204_0702]);
        let vop3 = crate::decode::decode(target, &[0xD1CB_0002, 0x840C_0102]);
        let masks = [
            u64::MAX,
            0,
            0xAAAA_AAAA_AAAA_AAAA,
            1 << 9,
            0x0123_4567_89AB_CDEF,
        ];
        let sources = [VGPR + 1, 3, 128 + 7, 240, 255];
        let mut r = 0x8F1B_BCDC_2B4A_6E01u64;
        let mut checked = 0;
        for op in FAST_OPS {
            for (round, &mask) in masks.iter().enumerate() {
                for (form, &src0) in sources.iter().enumerate() {
                    let vop3_form = form % 2 == 1;
                    let mut inst = if vop3_form { vop3 } else { vop2 };
                    inst.op = op;
                    inst.dst = VGPR + 5;
                    inst.src = [
                        src0,
                        VGPR + 2,
                        if op == v_cndmask_b32 { 10 } else { VGPR + 3 },
                    ];
                    inst.lit = super::super::f32_test_bits(&mut r);
                    inst.neg = if vop3_form { (r >> 3) as u8 & 7 } else { 0 };
                    inst.abs = if vop3_form { (r >> 7) as u8 & 7 } else { 0 };
                    let mut waves = [Wave::new(), Wave::new()];
                    let seed = r;
                    for w in waves.iter_mut() {
                        let mut q = seed;
                        for x in w.v[..8].iter_mut().flatten() {
                            *x = super::super::f32_test_bits(&mut q);
                        }
                        for x in w.s[..16].iter_mut() {
                            *x = super::super::f32_test_bits(&mut q);
                        }
                        w.set_exec(mask);
                        w.set_sgpr64(VCC, q.rotate_left(round as u32));
                        w.mode = ((round % 4) as u32) << 4;
                    }
                    super::super::f32_test_bits(&mut r);
                    let [rows, lanes] = &mut waves;
                    let a = exec(rows, &mut ctx, &inst).map(|_| ());
                    let b = exec_lanes(lanes, &mut ctx, &inst, mask).map(|_| ());
                    assert_eq!(a.is_ok(), b.is_ok(), "{} form {form}", op.name());
                    assert_eq!(
                        rows.v[5],
                        lanes.v[5],
                        "{} form {form} mask {mask:x}",
                        op.name()
                    );
                    assert_eq!(rows.lane_insts, lanes.lane_insts, "{}", op.name());
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, FAST_OPS.len() * 25);
    }

    #[test]
    fn dpp_lane_sources() {
        // quad_perm [3,2,1,0]
        assert_eq!(dpp_source(0x1B, 5), Some(6));
        // row_shr:1 leaves the first lane of each row without a source.
        assert_eq!(dpp_source(0x111, 16), None);
        assert_eq!(dpp_source(0x111, 17), Some(16));
        // row_ror:1 wraps within the row.
        assert_eq!(dpp_source(0x121, 16), Some(31));
        // row_bcast:15 reads the last lane of the previous row; row_bcast:31 lane 31.
        assert_eq!(dpp_source(0x142, 40), Some(31));
        assert_eq!(dpp_source(0x143, 50), Some(31));
        assert_eq!(dpp_source(0x143, 20), None);
        assert_eq!(dpp_source(0x140, 3), Some(12));
    }

    #[test]
    fn sdwa_selection_and_destination() {
        assert_eq!(sdwa_select(0x8180_7F01, 1, true), 0x7F);
        assert_eq!(sdwa_select(0x8180_7F01, 2, true) as u32, 0xFFFF_FF80);
        assert_eq!(sdwa_select(0x8180_7F01, 5, false), 0x8180);
        // dst_sel WORD_1 with UNUSED_PRESERVE keeps the low half.
        let ctrl = 5 << 8 | 2 << 11;
        assert_eq!(sdwa_write(0x1234, 0xAAAA_BBBB, ctrl), 0x1234_BBBB);
        // BYTE_0 with UNUSED_SEXT sign-extends the byte.
        assert_eq!(sdwa_write(0x80, 0, 1 << 11), 0xFFFF_FF80);
    }

    #[test]
    fn bit_field_extracts() {
        assert_eq!(bfe(0xF0, 4, 4, false), 0xF);
        assert_eq!(bfe(0xF0, 4, 4, true), 0xFFFF_FFFF);
        assert_eq!(bfe(0x8000_0000, 28, 4, true), 0xFFFF_FFF8);
        assert_eq!(bfe(0x1234, 0, 0, false), 0);
        // {S0, S1}: selector 0 is S1's byte 0, 4 is S0's byte 0, 12 is zero.
        assert_eq!(perm(0x0403_0201, 0x0807_0605, 0x0004_0C00), 0x0501_0005);
    }
}
