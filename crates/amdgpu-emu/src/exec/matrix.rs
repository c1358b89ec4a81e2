//! Matrix and mixed-precision VOP3P operations: MFMA (one-block shapes) and `v_fma_mix*`.
//!
//! MFMA register layouts (AMD's matrix-instruction tables for CDNA2/CDNA3): for an M x N x K
//! block with M = N = 16 or 32, lane `l` holds row `l % M` of A and column `l % N` of B for the
//! `K * M / 64` consecutive k values starting at `(l / M) * K * M / 64` (packed two 16-bit
//! values per register, or one 64-bit value per register pair). D and C hold, in register
//! (or 64-bit register pair) `r` of lane `l`, element `D[row][l % N]` with
//! `row = 4 * (l / 16) + r` for M = 16 and `row = 8 * (r / 4) + 4 * (l / 32) + r % 4` for
//! M = 32. Products are summed in f64 in k order and rounded once (the hardware's
//! accumulation order is unspecified).

use half::{bf16, f16};

use crate::decode::{Inst, Op, Op::*, Ty, VGPR};
use crate::wave::{LANES, Wave};

use super::float::Env;
use super::{Ctx, Flow, Step, illegal, sread, sread64};

/// The element type of an MFMA's A and B operands.
#[derive(Clone, Copy, PartialEq)]
enum Elem {
    F32,
    F16,
    Bf16,
    F64,
}

/// An MFMA shape with one output block.
struct Shape {
    m: usize,
    k: usize,
    elem: Elem,
}

fn shape(op: Op) -> Option<Shape> {
    let (m, k, elem) = match op {
        v_mfma_f32_16x16x4f32 => (16, 4, Elem::F32),
        v_mfma_f32_32x32x2f32 => (32, 2, Elem::F32),
        v_mfma_f32_16x16x16f16 => (16, 16, Elem::F16),
        v_mfma_f32_32x32x8f16 => (32, 8, Elem::F16),
        v_mfma_f32_16x16x16bf16_1k => (16, 16, Elem::Bf16),
        v_mfma_f32_32x32x8bf16_1k => (32, 8, Elem::Bf16),
        v_mfma_f64_16x16x4f64 => (16, 4, Elem::F64),
        _ => return None,
    };
    Some(Shape { m, k, elem })
}

/// Whether `op` is an MFMA this module runs.
pub(super) fn is_mfma(op: Op) -> bool {
    shape(op).is_some()
}

/// The k-th value (of the lane's `per_lane`) of an A or B operand, widened to f64.
fn element(w: &Wave, env: &Env, code: u16, elem: Elem, lane: usize, k: usize) -> f64 {
    let slot = Wave::vslot(code);
    let reg = |r: usize| w.v[(slot + r) & 511][lane];
    match elem {
        Elem::F32 => env.in32(f32::from_bits(reg(0))) as f64,
        Elem::F64 => env.in64(f64::from_bits(reg(0) as u64 | (reg(1) as u64) << 32)),
        Elem::F16 | Elem::Bf16 => {
            let bits = (reg(k / 2) >> (16 * (k % 2))) as u16;
            if elem == Elem::F16 {
                env.in16(f16::from_bits(bits)).to_f64()
            } else {
                bf16::from_bits(bits).to_f64()
            }
        }
    }
}

/// D row of output register (or register pair) `r` of lane `l`.
fn output_row(m: usize, l: usize, r: usize) -> usize {
    if m == 16 {
        4 * (l / 16) + r
    } else {
        8 * (r / 4) + 4 * (l / 32) + r % 4
    }
}

/// One-block MFMA: D = A * B + C.
pub(super) fn mfma(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let Some(s) = shape(inst.op) else {
        return Err(illegal(format!("{} is not implemented", inst.op.name())));
    };
    if inst.ctrl & 0x1FFF != 0 {
        return Err(illegal(
            "MFMA with cbsz/abid/blgp broadcast controls is not emulated",
        ));
    }
    if w.exec() != u64::MAX {
        return Err(illegal("MFMA with a partial EXEC mask is not emulated"));
    }
    if inst.src[0] < VGPR || inst.src[1] < VGPR {
        return Err(illegal(
            "MFMA with scalar or constant A/B operands is not emulated",
        ));
    }
    let env = Env::from_mode(w.mode);
    let wide = s.elem == Elem::F64;
    let per_lane = s.k * s.m / LANES;
    let outputs = s.m * s.m / LANES;
    let mut a = vec![[0f64; 16]; s.m];
    let mut b = vec![[0f64; 16]; s.m];
    for l in 0..LANES {
        for e in 0..per_lane {
            let kk = (l / s.m) * per_lane + e;
            a[l % s.m][kk] = element(w, &env, inst.src[0], s.elem, l, e);
            b[l % s.m][kk] = element(w, &env, inst.src[1], s.elem, l, e);
        }
    }
    let c_at = |w: &Wave, l: usize, r: usize| -> f64 {
        if inst.src[2] >= VGPR {
            let slot = Wave::vslot(inst.src[2]);
            if wide {
                let lo = w.v[(slot + 2 * r) & 511][l] as u64;
                let hi = w.v[(slot + 2 * r + 1) & 511][l] as u64;
                env.in64(f64::from_bits(lo | hi << 32))
            } else {
                env.in32(f32::from_bits(w.v[(slot + r) & 511][l])) as f64
            }
        } else if wide {
            env.in64(f64::from_bits(sread64(
                w,
                ctx,
                inst.src[2],
                Ty::F64,
                inst.lit,
            )))
        } else {
            env.in32(f32::from_bits(sread(
                w,
                ctx,
                inst.src[2],
                Ty::F32,
                inst.lit,
            ))) as f64
        }
    };
    let mut out = vec![[0u32; LANES]; outputs * (1 + wide as usize)];
    for l in 0..LANES {
        let j = l % s.m;
        for r in 0..outputs {
            let i = output_row(s.m, l, r);
            let mut acc = c_at(w, l, r);
            for kk in 0..s.k {
                acc = if wide {
                    a[i][kk].mul_add(b[j][kk], acc)
                } else {
                    acc + a[i][kk] * b[j][kk]
                };
            }
            if wide {
                let bits = env.out64(acc).to_bits();
                out[2 * r][l] = bits as u32;
                out[2 * r + 1][l] = (bits >> 32) as u32;
            } else {
                out[r][l] = env.out32(acc as f32).to_bits();
            }
        }
    }
    let dst = Wave::vslot(inst.dst);
    for (r, o) in out.iter().enumerate() {
        w.v[(dst + r) & 511] = *o;
    }
    w.lane_insts += (LANES * out.len()) as u64;
    Ok(Flow::Next)
}

/// `v_fma_mix_f32`, `v_fma_mixlo_f16`, `v_fma_mixhi_f16`: a fused multiply-add in f32 of
/// sources that are each f32 (op_sel_hi bit clear) or the f16 half op_sel selects (bit set),
/// with neg (neg_lo) and abs (neg_hi) per source. The f16 forms round the f32 result to f16
/// and write one half of the destination, keeping the other.
pub(super) fn fma_mix(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let env = Env::from_mode(w.mode);
    let exec = w.exec();
    let dst = Wave::vslot(inst.dst);
    let mut x = [[0f32; LANES]; 3];
    for (k, xs) in x.iter_mut().enumerate() {
        let half_src = (inst.op_sel_hi >> k) & 1 != 0;
        let hi = (inst.op_sel >> k) & 1 != 0;
        let code = inst.src[k];
        let ty = if half_src { Ty::F16 } else { Ty::F32 };
        let scalar = (code < VGPR).then(|| sread(w, ctx, code, ty, inst.lit));
        for (l, x) in xs.iter_mut().enumerate() {
            let raw = scalar.unwrap_or_else(|| w.v[Wave::vslot(code)][l]);
            let mut v = if half_src {
                let bits = if hi { raw >> 16 } else { raw } as u16;
                env.in16(f16::from_bits(bits)).to_f32()
            } else {
                env.in32(f32::from_bits(raw))
            };
            if (inst.abs >> k) & 1 != 0 {
                v = v.abs();
            }
            if (inst.neg >> k) & 1 != 0 {
                v = -v;
            }
            *x = v;
        }
    }
    let clamp = |v: f32| if inst.clamp { v.clamp(0.0, 1.0) } else { v };
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let r = x[0][l].mul_add(x[1][l], x[2][l]);
        w.v[dst][l] = match inst.op {
            v_fma_mix_f32 => clamp(env.out32(r)).to_bits(),
            _ => {
                let h = env.out16(f16::from_f32(r));
                let h = if inst.clamp {
                    f16::from_f32(h.to_f32().clamp(0.0, 1.0))
                } else {
                    h
                };
                let old = w.v[dst][l];
                if inst.op == v_fma_mixhi_f16 {
                    (old & 0xFFFF) | (h.to_bits() as u32) << 16
                } else {
                    (old & 0xFFFF_0000) | h.to_bits() as u32
                }
            }
        };
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::output_row;

    #[test]
    fn output_rows_cover_each_block_once() {
        for (m, regs) in [(16, 4), (32, 16)] {
            let mut seen = vec![0u32; m * m];
            for l in 0..64 {
                for r in 0..regs {
                    seen[output_row(m, l, r) * m + l % m] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{m}x{m}");
        }
    }
}
