//! The plan of the mixed-precision fused multiply-adds (`v_fma_mix_f32`, `v_fma_mixlo_f16`,
//! `v_fma_mixhi_f16`): each source an f32, or the f16 half its op_sel bit picks widened to
//! f32, with abs then neg; one f32 fused multiply-add per lane; the result as f32, or rounded
//! to f16 into the low or high half of the destination. The general path's semantics lane for
//! lane, the halves widened and the products summed with the host's vector units (F16C, FMA)
//! where it has them, under the emulator's one NaN rule ([`fma32`]); clamp and a directed
//! rounding mode stay on the general path.

use half::f16;
use half::slice::HalfFloatSliceExt;

use crate::decode::{Inst, LITERAL, Op::*, Ty, VGPR};
use crate::wave::{LANES, VReg, Wave, inline_const};

use super::super::float::{Env, fma32};
use super::super::is_known_source;
use super::{Origin, write_row};

/// Where a [`MixPlan`] writes its result.
#[derive(Clone, Copy, Debug, PartialEq)]
enum MixOut {
    F32,
    /// f16 into the low half, the high half kept.
    Low,
    /// f16 into the high half, the low half kept.
    High,
}

/// A source of a [`MixPlan`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct MixSrc {
    from: Origin,
    /// An f16 (else an f32), in the high half when `high`.
    half: bool,
    high: bool,
    abs: bool,
    neg: bool,
}

pub(crate) struct MixPlan {
    out: MixOut,
    dst: u16,
    src: [MixSrc; 3],
}

pub(super) fn mix_plan(inst: &Inst) -> Option<MixPlan> {
    let out = match inst.op {
        v_fma_mix_f32 => MixOut::F32,
        v_fma_mixlo_f16 => MixOut::Low,
        v_fma_mixhi_f16 => MixOut::High,
        _ => return None,
    };
    if inst.clamp || inst.dst < VGPR {
        return None;
    }
    let mut src = [MixSrc {
        from: Origin::Value(0),
        half: false,
        high: false,
        abs: false,
        neg: false,
    }; 3];
    for (k, s) in src.iter_mut().enumerate() {
        let half = inst.op_sel_hi >> k & 1 != 0;
        let ty = if half { Ty::F16 } else { Ty::F32 };
        let from = match inst.src[k] {
            c if c >= VGPR => Origin::Row((Wave::vslot(c) & 511) as u16),
            c if !is_known_source(c) => return None,
            c @ 0..=127 => Origin::Sgpr(c as u8),
            c @ (128..=208 | 240..=248 | LITERAL) => {
                Origin::Value(inline_const(c, ty, inst.lit)? as u32)
            }
            _ => return None,
        };
        *s = MixSrc {
            from,
            half,
            high: inst.op_sel >> k & 1 != 0,
            abs: inst.abs >> k & 1 != 0,
            neg: inst.neg >> k & 1 != 0,
        };
    }
    Some(MixPlan {
        out,
        dst: (Wave::vslot(inst.dst) & 511) as u16,
        src,
    })
}

/// Runs a [`MixPlan`]; false (nothing changed) under a directed rounding mode.
pub(super) fn run_mix(w: &mut Wave, p: &MixPlan) -> bool {
    if w.mode & 0xF != 0 {
        return false;
    }
    let env = Env::from_mode(w.mode);
    let mut x = [[0f32; LANES]; 3];
    for (k, s) in p.src.iter().enumerate() {
        widen(w, s, &env, &mut x[k]);
    }
    let mut r = [0f32; LANES];
    fused(&x, &mut r);
    let exec = w.exec();
    let dst = p.dst as usize;
    let mut row: VReg = [0; LANES];
    for l in 0..LANES {
        let old = w.v[dst][l];
        row[l] = match p.out {
            MixOut::F32 => env.out32(r[l]).to_bits(),
            MixOut::Low => (old & 0xFFFF_0000) | half_bits(&env, r[l]),
            MixOut::High => (old & 0xFFFF) | half_bits(&env, r[l]) << 16,
        };
    }
    write_row(&mut w.v[dst], &row, exec);
    w.lane_insts += exec.count_ones() as u64;
    true
}

/// `x` rounded to f16 (denormal results flushed as MODE says), as bits.
fn half_bits(env: &Env, x: f32) -> u32 {
    env.out16(f16::from_f32(x)).to_bits() as u32
}

/// Source `s` of every lane as f32: its f32, or its f16 half widened, flushed as MODE says
/// for inputs, then abs and neg.
fn widen(w: &Wave, s: &MixSrc, env: &Env, out: &mut [f32; LANES]) {
    let mut raw: VReg = match s.from {
        Origin::Row(slot) => w.v[slot as usize],
        Origin::Sgpr(c) => [w.s[c as usize]; LANES],
        Origin::Value(v) => [v; LANES],
    };
    if s.half {
        let shift = if s.high { 16 } else { 0 };
        let mut halves = [f16::ZERO; LANES];
        for (h, r) in halves.iter_mut().zip(raw.iter()) {
            let mut bits = (r >> shift) as u16;
            if !env.keep_in64 && bits & 0x7C00 == 0 {
                bits &= 0x8000;
            }
            *h = f16::from_bits(bits);
        }
        halves.convert_to_f32_slice(out);
    } else {
        if !env.keep_in32 {
            for r in raw.iter_mut() {
                if *r & 0x7F80_0000 == 0 {
                    *r &= 0x8000_0000;
                }
            }
        }
        for (o, r) in out.iter_mut().zip(raw.iter()) {
            *o = f32::from_bits(*r);
        }
    }
    for o in out.iter_mut() {
        let mut b = o.to_bits();
        if s.abs {
            b &= 0x7FFF_FFFF;
        }
        if s.neg {
            b ^= 0x8000_0000;
        }
        *o = f32::from_bits(b);
    }
}

/// `r = x[0] * x[1] + x[2]` per lane, rounded once, NaNs as [`fma32`] has them.
fn fused(x: &[[f32; LANES]; 3], r: &mut [f32; LANES]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports FMA (checked just above), the only requirement of the
        // target-feature function.
        unsafe { fused_fma(x, r) };
        return;
    }
    for l in 0..LANES {
        r[l] = fma32(x[0][l], x[1][l], x[2][l]);
    }
}

/// [`fused`] with the host's FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn fused_fma(x: &[[f32; LANES]; 3], r: &mut [f32; LANES]) {
    for l in 0..LANES {
        r[l] = fma32(x[0][l], x[1][l], x[2][l]);
    }
}
