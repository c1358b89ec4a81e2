//! Plans of the VALU operations with a 64-bit operand whose general-path semantics are their
//! lane function alone: conversions to and from f64 (`v_cvt_f64_f32`, `v_cvt_f32_f64`,
//! `v_cvt_f64_i32`, ...), the f64 rounding, reciprocal, square-root, ldexp and frexp
//! operations, the f64 division steps (`v_div_scale_f64`, `v_div_fmas_f64`,
//! `v_div_fixup_f64`), f64 min and max, and the f64 compares and class tests the compare plans
//! do not take. Each runs the general path's own lane function lane by lane (so the bits are
//! the reference's; the division steps on whole rows where every lane is ordinary, the
//! f32/f64 conversions in a loop with that function inlined), with its
//! operands resolved once: VGPR pairs and rows, SGPR pairs and
//! registers, constants, and the neg/abs sign bits the operand's type has.

use crate::decode::{Inst, Op};
use crate::wave::{LANES, Wave};

use super::super::float::Env;
use super::super::vector::{LaneOp, LaneOut, f32_of_f64, f64_of_f32, is_wide, wide_lane_op};
use super::{Src64, division, lane_destinations, write_mask_out};

/// An operation with a 64-bit source or result, run by its lane function.
pub(crate) struct WideLanePlan {
    op: LaneOp,
    /// The division-sequence step the operation is, run on rows where the lanes allow.
    division: Option<division::Step>,
    /// The conversion between f32 and f64 the operation is, run in a loop of its own.
    conversion: Option<Conversion>,
    /// The destination row, or the low row of the destination pair.
    dst: u16,
    /// Whether the result is 64-bit (a VGPR pair).
    wide_dst: bool,
    /// The lane mask the operation writes, when it writes one.
    sdst: u16,
    src: [Src64; 3],
}

/// The conversions between f32 and f64 (frequent where f32 code meets f64 constants), whose
/// lane function is run in a loop over the lanes with the function inlined rather than called
/// per lane: the same function, so the same bits.
#[derive(Clone, Copy)]
enum Conversion {
    F32OfF64,
    F64OfF32,
}

impl Conversion {
    fn of(op: Op) -> Option<Conversion> {
        match op {
            Op::v_cvt_f32_f64 => Some(Conversion::F32OfF64),
            Op::v_cvt_f64_f32 => Some(Conversion::F64OfF32),
            _ => None,
        }
    }

    /// The results of every lane, from the source lanes `a`.
    fn run(self, env: &Env, a: &[u64; LANES], out: &mut [u64; LANES]) {
        match self {
            Conversion::F32OfF64 => each_lane(a, out, |x| f32_of_f64(env, x)),
            Conversion::F64OfF32 => each_lane(a, out, |x| f64_of_f32(env, x)),
        }
    }
}

/// `out[l] = f(a[l])` in every lane, `f` inlined into the loop.
#[inline(always)]
fn each_lane(a: &[u64; LANES], out: &mut [u64; LANES], f: impl Fn(u64) -> u64) {
    for (r, &x) in out.iter_mut().zip(a) {
        *r = f(x);
    }
}

pub(super) fn wide_lane_plan(inst: &Inst) -> Option<Box<WideLanePlan>> {
    let op = wide_lane_op(inst)?;
    let types = inst.op.types();
    let mut src = [Src64::NONE; 3];
    for (k, s) in src.iter_mut().enumerate().take((types.len() - 1).min(3)) {
        *s = Src64::of(inst, k, types[k + 1])?;
    }
    let wide_dst = !matches!(op.out, LaneOut::Mask { .. }) && is_wide(types[0]);
    let [dst, sdst] = lane_destinations(inst, op.out);
    if wide_dst && dst >= 511 {
        return None;
    }
    Some(Box::new(WideLanePlan {
        op,
        division: division::Step::of(inst.op),
        conversion: Conversion::of(inst.op),
        dst,
        wide_dst,
        sdst,
        src,
    }))
}

/// Runs a [`WideLanePlan`]; false (nothing changed) under a directed rounding mode, which the
/// general path handles for float operations.
pub(super) fn run_wide_lane_plan(w: &mut Wave, p: &WideLanePlan) -> bool {
    if p.op.float && w.mode & 0xF != 0 {
        return false;
    }
    let exec = w.exec();
    let vcc = if p.op.reads_vcc { w.vcc() } else { 0 };
    let mut out = [0u64; LANES];
    let env = Env::from_mode(w.mode);
    let rows = p.src.map(|s| s.lanes(w));
    let [a, b, c] = &rows;
    let division = p
        .division
        .and_then(|step| division::run_wide(step, [a, b, c], env, vcc, exec, &mut out));
    let mask = match (division, p.conversion) {
        (Some(mask), _) => mask,
        (None, Some(conversion)) => {
            conversion.run(&env, a, &mut out);
            0
        }
        (None, None) => {
            p.op.run_wide(env, vcc, exec, |l| [a[l], b[l], c[l]], &mut out)
        }
    };
    if !matches!(p.op.out, LaneOut::Mask { .. }) {
        write_lanes(w, p, exec, &out);
    }
    write_mask_out(w, p.op.out, p.sdst, exec, mask);
    true
}

/// The results of the lanes of `exec` into the destination row or pair.
fn write_lanes(w: &mut Wave, p: &WideLanePlan, exec: u64, out: &[u64; LANES]) {
    let d = p.dst as usize;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        w.v[d][l] = out[l] as u32;
        if p.wide_dst {
            w.v[d + 1][l] = (out[l] >> 32) as u32;
        }
    }
}
