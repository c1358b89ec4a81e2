//! Matrix and mixed-precision VOP3P operations: MFMA (every dense shape of gfx90a and gfx942
//! except xf32) and `v_fma_mix*`.
//!
//! MFMA register layouts (AMD's matrix-instruction tables for CDNA2/CDNA3). An MFMA computes
//! `blocks` independent products D = A * B + C of an M x K by K x M pair.
//!
//! - A and B: lane `l` holds row (A) or column (B) `l % M` of block `(l / M) % blocks`, for the
//!   `per_lane = K * M * blocks / 64` consecutive k values starting at
//!   `(l / (M * blocks)) * per_lane`, packed as wide as the element (four 8-bit, two 16-bit, one
//!   32-bit value per register, or one 64-bit value per register pair).
//! - C and D with 32-bit elements: the lanes form `64 / M` groups of M columns; each group
//!   holds, in four consecutive registers, a tile of four consecutive rows. Tiles are numbered
//!   lane group first, then register quad (`t = (r / 4) * (64 / M) + l / M`); tile `t` is
//!   rows `4 * (t % (M / 4))` onwards of block `t / (M / 4)`. So 16 x 16 holds rows
//!   `4 * (l / 16) + r`, 32 x 32 rows `8 * (r / 4) + 4 * (l / 32) + r % 4`, and the sixteen
//!   4 x 4 blocks of `v_mfma_f32_4x4x1f32` one block per four lanes, row `r`.
//! - C and D with 64-bit elements: register pair `r` of lane `l` holds column `l % M` of block
//!   `(l / M) % blocks`, row `4 * r + l / (M * blocks)`.
//!
//! Broadcast controls (AMD's matrix-instruction tables): `cbsz`/`abid` make every block of an
//! aligned group of `2^cbsz` blocks use the A values of block `abid` of that group (shapes of
//! several blocks, f64 excepted); `blgp` makes the B values of lane `l` come from another lane
//! (1: lane `l % 32`; 2: `32 + l % 32`; 3: `(l + 16) % 64`; 4 to 7: `16 * (blgp - 4) + l % 16`).
//! gfx942 reads `blgp` of its f64 shapes as negations of A, B and C (bits 0, 1, 2), and
//! defines no `blgp` for its one-block shapes of 8- and 16-bit elements.
//!
//! Products are summed exactly (f64 for 8-, 16- and 32-bit floats, with C first; a chain of fused
//! multiply-adds for f64; wrapping 32-bit sums for 8-bit integers) in k order and rounded once;
//! the hardware's accumulation order is unspecified.

use half::{bf16, f16};

use crate::decode::{Inst, Op, Op::*, Ty, VGPR};
use crate::fault::FaultKind;
use crate::target::Target;
use crate::wave::{LANES, Wave};

use super::float::{Env, fma32};
use super::{Ctx, Flow, Step, illegal, sread, sread64};

/// The element type of an MFMA's A and B operands.
#[derive(Clone, Copy, PartialEq)]
enum Elem {
    F32,
    F16,
    Bf16,
    F64,
    I8,
    /// gfx942's fp8 (E4M3) and bf8 (E5M2), FNUZ encodings.
    Fp8,
    Bf8,
}

impl Elem {
    fn bits(self) -> usize {
        match self {
            Elem::I8 | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::F32 => 32,
            Elem::F64 => 64,
        }
    }
}

/// An MFMA shape: `blocks` products of M x K by K x M, A's elements of type `elem` and B's of
/// `elem_b` (they differ only for the mixed 8-bit float forms).
struct Shape {
    m: usize,
    k: usize,
    blocks: usize,
    elem: Elem,
    elem_b: Elem,
}

impl Shape {
    /// Values of A (or B) each lane holds.
    fn per_lane(&self) -> usize {
        self.k * self.m * self.blocks / LANES
    }

    /// Output registers (register pairs for f64) per lane.
    fn outputs(&self) -> usize {
        self.m * self.m * self.blocks / LANES
    }

    /// (block, row or column, first k) of lane `l`'s A or B values.
    fn input_place(&self, l: usize) -> (usize, usize, usize) {
        let group = self.m * self.blocks;
        (
            (l / self.m) % self.blocks,
            l % self.m,
            (l / group) * self.per_lane(),
        )
    }

    /// (block, row) of D's output register (pair) `r` in lane `l`; the column is `l % M`.
    fn output_place(&self, l: usize, r: usize) -> (usize, usize) {
        if self.elem == Elem::F64 {
            let group = self.m * self.blocks;
            return ((l / self.m) % self.blocks, 4 * r + l / group);
        }
        let tiles_per_block = self.m / 4;
        let tile = (r / 4) * (LANES / self.m) + l / self.m;
        (tile / tiles_per_block, 4 * (tile % tiles_per_block) + r % 4)
    }
}

fn shape(op: Op) -> Option<Shape> {
    use Elem::*;
    let (m, k, blocks, elem) = match op {
        v_mfma_f32_32x32x1f32 => (32, 1, 2, F32),
        v_mfma_f32_16x16x1f32 => (16, 1, 4, F32),
        v_mfma_f32_4x4x1f32 => (4, 1, 16, F32),
        v_mfma_f32_32x32x2f32 => (32, 2, 1, F32),
        v_mfma_f32_16x16x4f32 => (16, 4, 1, F32),
        v_mfma_f32_32x32x4f16 => (32, 4, 2, F16),
        v_mfma_f32_16x16x4f16 => (16, 4, 4, F16),
        v_mfma_f32_4x4x4f16 => (4, 4, 16, F16),
        v_mfma_f32_32x32x8f16 => (32, 8, 1, F16),
        v_mfma_f32_16x16x16f16 => (16, 16, 1, F16),
        v_mfma_i32_32x32x4i8 => (32, 4, 2, I8),
        v_mfma_i32_16x16x4i8 => (16, 4, 4, I8),
        v_mfma_i32_4x4x4i8 => (4, 4, 16, I8),
        v_mfma_i32_32x32x8i8 => (32, 8, 1, I8),
        v_mfma_i32_16x16x16i8 => (16, 16, 1, I8),
        v_mfma_i32_32x32x16_i8 => (32, 16, 1, I8),
        v_mfma_i32_16x16x32_i8 => (16, 32, 1, I8),
        v_mfma_f32_32x32x2bf16 => (32, 2, 2, Bf16),
        v_mfma_f32_16x16x2bf16 => (16, 2, 4, Bf16),
        v_mfma_f32_4x4x2bf16 => (4, 2, 16, Bf16),
        v_mfma_f32_32x32x4bf16 => (32, 4, 1, Bf16),
        v_mfma_f32_16x16x8bf16 => (16, 8, 1, Bf16),
        v_mfma_f32_32x32x4bf16_1k => (32, 4, 2, Bf16),
        v_mfma_f32_16x16x4bf16_1k => (16, 4, 4, Bf16),
        v_mfma_f32_4x4x4bf16_1k => (4, 4, 16, Bf16),
        v_mfma_f32_32x32x8bf16_1k => (32, 8, 1, Bf16),
        v_mfma_f32_16x16x16bf16_1k => (16, 16, 1, Bf16),
        v_mfma_f64_16x16x4f64 => (16, 4, 1, F64),
        v_mfma_f64_4x4x4f64 => (4, 4, 4, F64),
        v_mfma_f32_16x16x32_fp8_fp8 => return Some(eight_bit(16, 32, Fp8, Fp8)),
        v_mfma_f32_16x16x32_fp8_bf8 => return Some(eight_bit(16, 32, Fp8, Bf8)),
        v_mfma_f32_16x16x32_bf8_fp8 => return Some(eight_bit(16, 32, Bf8, Fp8)),
        v_mfma_f32_16x16x32_bf8_bf8 => return Some(eight_bit(16, 32, Bf8, Bf8)),
        v_mfma_f32_32x32x16_fp8_fp8 => return Some(eight_bit(32, 16, Fp8, Fp8)),
        v_mfma_f32_32x32x16_fp8_bf8 => return Some(eight_bit(32, 16, Fp8, Bf8)),
        v_mfma_f32_32x32x16_bf8_fp8 => return Some(eight_bit(32, 16, Bf8, Fp8)),
        v_mfma_f32_32x32x16_bf8_bf8 => return Some(eight_bit(32, 16, Bf8, Bf8)),
        _ => return None,
    };
    Some(Shape {
        m,
        k,
        blocks,
        elem,
        elem_b: elem,
    })
}

/// A one-block 8-bit float MFMA of gfx942 (A of type `a`, B of type `b`).
fn eight_bit(m: usize, k: usize, a: Elem, b: Elem) -> Shape {
    Shape {
        m,
        k,
        blocks: 1,
        elem: a,
        elem_b: b,
    }
}

/// Whether `op` is an MFMA this module runs.
pub(super) fn is_mfma(op: Op) -> bool {
    shape(op).is_some()
}

/// One A or B value: the `e`-th (of the lane's `per_lane`) as f64, or as an integer for 8-bit
/// integers.
fn element(w: &Wave, env: &Env, code: u16, elem: Elem, lane: usize, e: usize) -> f64 {
    let slot = Wave::vslot(code);
    let reg = |r: usize| w.v[(slot + r) & 511][lane];
    let per_reg = 32 / elem.bits().min(32);
    let field = |e: usize| reg(e / per_reg) >> (elem.bits() * (e % per_reg));
    match elem {
        Elem::F32 => env.in32(f32::from_bits(reg(0))) as f64,
        Elem::F64 => env.in64(f64::from_bits(reg(0) as u64 | (reg(1) as u64) << 32)),
        Elem::F16 => env.in16(f16::from_bits(field(e) as u16)).to_f64(),
        Elem::Bf16 => bf16::from_bits(field(e) as u16).to_f64(),
        Elem::I8 => field(e) as u8 as i8 as f64,
        Elem::Fp8 => super::float::fp8(field(e) as u8) as f64,
        Elem::Bf8 => super::float::bf8(field(e) as u8) as f64,
    }
}

/// An MFMA's broadcast controls, checked against its shape and target.
struct Broadcast {
    cbsz: usize,
    abid: usize,
    blgp: usize,
    /// Negate A, B, C (gfx942's f64 shapes read their `blgp` bits so).
    neg: [bool; 3],
}

impl Broadcast {
    fn of(inst: &Inst, target: Target, s: &Shape) -> Result<Broadcast, FaultKind> {
        let cbsz = (inst.ctrl & 7) as usize;
        let abid = (inst.ctrl >> 3 & 0xF) as usize;
        let blgp = (inst.ctrl >> 10 & 7) as usize;
        let name = inst.op.name();
        let undefined = |what: String| {
            Err(illegal(format!(
                "{name} with {what} is not defined on {}",
                target.name()
            )))
        };
        if (cbsz, abid) != (0, 0)
            && (s.blocks == 1 || s.elem == Elem::F64 || 1 << cbsz > s.blocks || abid >> cbsz != 0)
        {
            return undefined(format!(
                "cbsz:{cbsz} abid:{abid} ({} blocks; cbsz selects up to all blocks and abid \
                 one of the 2^cbsz)",
                s.blocks
            ));
        }
        let mut b = Broadcast {
            cbsz,
            abid,
            blgp: 0,
            neg: [false; 3],
        };
        match (blgp, s.elem, target) {
            (0, ..) => {}
            (_, Elem::F64, Target::Gfx942) => b.neg = std::array::from_fn(|k| blgp >> k & 1 != 0),
            (_, Elem::F64, _) => return undefined(format!("blgp:{blgp}")),
            (_, e, Target::Gfx942) if s.blocks == 1 && e != Elem::F32 => {
                return undefined(format!("blgp:{blgp}"));
            }
            _ => b.blgp = blgp,
        }
        Ok(b)
    }

    /// The block whose A values block `blk` uses.
    fn a_block(&self, blk: usize) -> usize {
        (blk >> self.cbsz << self.cbsz) + self.abid
    }

    /// The lane whose B values stand in for lane `l`'s.
    fn b_lane(&self, l: usize) -> usize {
        match self.blgp {
            0 => l,
            1 => l % 32,
            2 => 32 + l % 32,
            3 => (l + 16) % 64,
            g => 16 * (g - 4) + l % 16,
        }
    }
}

/// The A or B operand (elements of type `elem`) as `[block][row or column][k]`: lane `l`'s
/// places hold the values of lane `source(l)`, negated if `neg`.
fn operand(
    w: &Wave,
    env: &Env,
    code: u16,
    s: &Shape,
    elem: Elem,
    source: impl Fn(usize) -> usize,
    neg: bool,
) -> Vec<Vec<Vec<f64>>> {
    let mut out = vec![vec![vec![0f64; s.k]; s.m]; s.blocks];
    for l in 0..LANES {
        let (b, i, k0) = s.input_place(l);
        for e in 0..s.per_lane() {
            let x = element(w, env, code, elem, source(l), e);
            out[b][i][k0 + e] = if neg { -x } else { x };
        }
    }
    out
}

/// C's raw bits for output register (pair) `r` of lane `l`.
fn c_bits(w: &Wave, ctx: &mut Ctx<'_>, inst: &Inst, wide: bool, l: usize, r: usize) -> u64 {
    let code = inst.src[2];
    if code >= VGPR {
        let slot = Wave::vslot(code);
        if wide {
            let lo = w.v[(slot + 2 * r) & 511][l] as u64;
            lo | (w.v[(slot + 2 * r + 1) & 511][l] as u64) << 32
        } else {
            w.v[(slot + r) & 511][l] as u64
        }
    } else if wide {
        sread64(w, ctx, code, Ty::F64, inst.lit)
    } else {
        sread(w, ctx, code, Ty::F32, inst.lit) as u64
    }
}

/// One output element: C plus the dot product of A's row and B's column, rounded once.
fn dot(s: &Shape, env: &Env, a: &[f64], b: &[f64], c: u64) -> u64 {
    match s.elem {
        Elem::I8 => {
            let sum = a
                .iter()
                .zip(b)
                .map(|(x, y)| (*x as i64) * (*y as i64))
                .sum::<i64>();
            (c as u32).wrapping_add(sum as u32) as u64
        }
        Elem::F64 => {
            let acc = a
                .iter()
                .zip(b)
                .fold(env.in64(f64::from_bits(c)), |acc, (x, y)| {
                    x.mul_add(*y, acc)
                });
            env.out64(acc).to_bits()
        }
        _ => {
            let c = env.in32(f32::from_bits(c as u32)) as f64;
            let acc = a.iter().zip(b).fold(c, |acc, (x, y)| acc + x * y);
            env.out32(acc as f32).to_bits() as u64
        }
    }
}

/// MFMA: D = A * B + C for each block.
pub(super) fn mfma(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let Some(s) = shape(inst.op) else {
        return Err(illegal(format!("{} is not implemented", inst.op.name())));
    };
    // cbsz [2:0], abid [6:3] and blgp [12:10] of the decoded controls; [9:8] only say that A or
    // B lie in AGPRs, which the decoder already folded into the operand codes.
    let bc = Broadcast::of(inst, ctx.target, &s)?;
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
    let a = operand(w, &env, inst.src[0], &s, s.elem, |l| l, bc.neg[0]);
    let b = operand(
        w,
        &env,
        inst.src[1],
        &s,
        s.elem_b,
        |l| bc.b_lane(l),
        bc.neg[1],
    );
    let regs = s.outputs() * (1 + wide as usize);
    let mut out = vec![[0u32; LANES]; regs];
    for l in 0..LANES {
        for r in 0..s.outputs() {
            let (blk, i) = s.output_place(l, r);
            let c = c_bits(w, ctx, inst, wide, l, r) ^ u64::from(bc.neg[2]) << 63;
            let d = dot(&s, &env, &a[bc.a_block(blk)][i], &b[blk][l % s.m], c);
            if wide {
                out[2 * r][l] = d as u32;
                out[2 * r + 1][l] = (d >> 32) as u32;
            } else {
                out[r][l] = d as u32;
            }
        }
    }
    let dst = Wave::vslot(inst.dst);
    for (r, o) in out.iter().enumerate() {
        w.v[(dst + r) & 511] = *o;
    }
    w.lane_insts += (LANES * regs) as u64;
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
        let r = fma32(x[0][l], x[1][l], x[2][l]);
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
    use super::*;

    /// Every element of every block is written by exactly one output register of one lane, and
    /// every A value is read from exactly one lane.
    #[test]
    fn layouts_cover_each_element_once() {
        for op in Op::ALL.iter().copied() {
            let Some(s) = shape(op) else { continue };
            let mut seen = vec![0u32; s.blocks * s.m * s.m];
            for l in 0..LANES {
                for r in 0..s.outputs() {
                    let (b, i) = s.output_place(l, r);
                    seen[(b * s.m + i) * s.m + l % s.m] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{} outputs", op.name());
            let mut read = vec![0u32; s.blocks * s.m * s.k];
            for l in 0..LANES {
                let (b, i, k0) = s.input_place(l);
                for e in 0..s.per_lane() {
                    read[(b * s.m + i) * s.k + k0 + e] += 1;
                }
            }
            assert!(read.iter().all(|&n| n == 1), "{} inputs", op.name());
        }
    }

    /// The layouts AMD documents for three shapes, element by element.
    #[test]
    fn layouts_match_the_documented_examples() {
        let at = |op: Op, l: usize, r: usize| shape(op).unwrap().output_place(l, r);
        // 16 x 16 f32: register r of lanes 16g..16g+15 holds row 4g + r.
        assert_eq!(at(v_mfma_f32_16x16x4f32, 37, 2), (0, 10));
        // Four 16 x 16 blocks: registers 4b..4b+3 hold block b.
        assert_eq!(at(v_mfma_f32_16x16x1f32, 50, 13), (3, 13));
        // Sixteen 4 x 4 blocks: register r holds row r, four lanes per block.
        assert_eq!(at(v_mfma_f32_4x4x1f32, 45, 3), (11, 3));
        // 16 x 16 f64: pair r of lanes 16g.. holds row 4r + g.
        assert_eq!(at(v_mfma_f64_16x16x4f64, 37, 2), (0, 10));
        // Four 4 x 4 f64 blocks: lanes 16i + 4b + j hold row i, column j of block b.
        assert_eq!(at(v_mfma_f64_4x4x4f64, 16 * 3 + 4 * 2 + 1, 0), (2, 3));
        let input = |op: Op, l: usize| shape(op).unwrap().input_place(l);
        assert_eq!(input(v_mfma_f64_4x4x4f64, 16 * 3 + 4 * 2 + 1), (2, 1, 3));
        assert_eq!(input(v_mfma_f32_32x32x8f16, 40), (0, 8, 4));
        assert_eq!(input(v_mfma_f32_32x32x4f16, 40), (1, 8, 0));
    }
}
