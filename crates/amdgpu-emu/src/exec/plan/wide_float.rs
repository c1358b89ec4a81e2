//! Plans of the floating-point operations on more than one 32-bit value per lane: f64
//! arithmetic on VGPR pairs (`v_fma_f64`, `v_fmac_f64`, `v_mul_f64`, `v_add_f64`), packed f32
//! (`v_pk_fma_f32`, `v_pk_mul_f32`, `v_pk_add_f32`) and packed f16 (`v_pk_fma_f16`,
//! `v_pk_mul_f16`, `v_pk_add_f16`), and the packed move `v_pk_mov_b32` beside its packed f32
//! siblings. Each computes every lane as the general path does, with the host's vector units
//! (AVX2, FMA, F16C) where it has them, gives a NaN result the NaN rule of the general path
//! (the first NaN source made quiet, else the canonical quiet NaN: never the host's own
//! choice), and leaves a MODE other than round-to-nearest-even with denormals kept, and clamp,
//! to the general path, so that its results are the reference's bit for bit.

use crate::decode::{Enc, Inst, LITERAL, Op::*, Ty, VGPR};
#[cfg(target_arch = "x86_64")]
use crate::wave::row8;
use crate::wave::{LANES, VReg, Wave, inline_const};

use super::super::float::{Env, F16_NAN, F32_NAN, F64_NAN};
use super::super::is_known_source;
use super::super::vector::flush32_bits;
use super::{Origin, Src, Src64, Wide, is_nan32, slot, write_pair, write_row};
#[cfg(target_arch = "x86_64")]
use super::{SrcLanes, put_row_avx2};

/// The operation of a [`PackedPlan`], [`HalfPlan`] or [`DoublePlan`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum FloatOp {
    Fma,
    Mul,
    Add,
}

/// The operation of a [`PackedPlan`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum PackedOp {
    Float(FloatOp),
    /// `v_pk_mov_b32`: each result is its first source's dword.
    Move,
}

/// A packed f32 operation (`v_pk_fma_f32`, `v_pk_mul_f32`, `v_pk_add_f32`): per lane two f32
/// operations, each on the dwords its op_sel bits choose, into a VGPR pair; or `v_pk_mov_b32`.
pub(crate) struct PackedPlan {
    op: PackedOp,
    dst: u16,
    /// The sources of the low and the high result: a row, an SGPR or a constant, sign flipped
    /// by neg_lo or neg_hi.
    src: [[Src; 3]; 2],
}

/// A packed f16 operation (`v_pk_fma_f16`, `v_pk_mul_f16`, `v_pk_add_f16`): per lane two f16
/// operations, each on the 16-bit halves its op_sel bits choose.
pub(crate) struct HalfPlan {
    op: FloatOp,
    dst: u16,
    /// The sources' dwords: a row, an SGPR, or a constant (in both halves).
    src: [Origin; 3],
    /// Per result half (low, high): for each source, the shift (0 or 16) of its half.
    shift: [[u32; 3]; 2],
    /// Per result half: for each source, the sign bit it flips (neg_lo, neg_hi).
    flip: [[u32; 3]; 2],
    /// Every source gives the low result its low half and the high result its high half.
    straight: bool,
}

/// An f64 operation (`v_fma_f64`, `v_fmac_f64`, `v_mul_f64`, `v_add_f64`) into a VGPR pair.
pub(crate) struct DoublePlan {
    op: FloatOp,
    dst: u16,
    src: [Src64; 3],
}

pub(super) fn packed_plan(inst: &Inst) -> Option<PackedPlan> {
    let op = match inst.op {
        v_pk_fma_f32 => PackedOp::Float(FloatOp::Fma),
        v_pk_mul_f32 => PackedOp::Float(FloatOp::Mul),
        v_pk_add_f32 => PackedOp::Float(FloatOp::Add),
        v_pk_mov_b32 => PackedOp::Move,
        _ => return None,
    };
    let dst = Wave::vslot(inst.dst);
    if inst.clamp || inst.dst < VGPR || dst >= 511 {
        return None;
    }
    let mut src = [[Src::plain(Origin::Value(0)); 3]; 2];
    if op == PackedOp::Move {
        // The low result from the dword of source 0 op_sel bit 0 chooses, the high one from
        // that of source 1 bit 1 chooses; no sign modifiers.
        for (h, half) in src.iter_mut().enumerate() {
            half[0] = Src::plain(packed_source(inst, h, inst.op_sel >> h & 1)?);
        }
    } else {
        let nsrc = inst.op.types().len() - 1;
        for (h, half) in src.iter_mut().enumerate() {
            let (sel, neg) = if h == 0 {
                (inst.op_sel, inst.neg)
            } else {
                (inst.op_sel_hi, inst.abs)
            };
            for (k, s) in half.iter_mut().enumerate().take(nsrc) {
                let flip = if neg >> k & 1 != 0 { 1 << 31 } else { 0 };
                *s = match packed_source(inst, k, sel >> k & 1)? {
                    Origin::Value(v) => Src::plain(Origin::Value(v ^ flip)),
                    from => Src {
                        from,
                        clear: 0,
                        flip,
                    },
                };
            }
        }
    }
    Some(PackedPlan {
        op,
        dst: dst as u16,
        src,
    })
}

/// Dword `high` (0 or 1) of the 64-bit source `k` of a packed f32 operation: of a VGPR or SGPR
/// pair; a constant reads the same in both dwords (as the general path has it).
fn packed_source(inst: &Inst, k: usize, high: u8) -> Option<Origin> {
    let high = u16::from(high);
    Some(match inst.src[k] {
        c if c >= VGPR => Origin::Row(((Wave::vslot(c) + high as usize) & 511) as u16),
        c if c < 128 && is_known_source(c) => Origin::Sgpr(((c + high) & 127) as u8),
        c @ (128..=208 | 240..=248 | LITERAL) => {
            Origin::Value(inline_const(c, Ty::PF32, inst.lit)? as u32)
        }
        _ => return None,
    })
}

pub(super) fn double_plan(inst: &Inst) -> Option<DoublePlan> {
    let op = match inst.op {
        v_fma_f64 | v_fmac_f64 => FloatOp::Fma,
        v_mul_f64 => FloatOp::Mul,
        v_add_f64 => FloatOp::Add,
        _ => return None,
    };
    let dst = Wave::vslot(inst.dst);
    let form = inst.enc == Enc::Vop3 || (inst.enc == Enc::Vop2 && inst.op == v_fmac_f64);
    if !form || dst >= 511 {
        return None;
    }
    let nsrc = if inst.op == v_fma_f64 { 3 } else { 2 };
    let mut src = [Src64::NONE; 3];
    for (k, s) in src.iter_mut().enumerate().take(nsrc) {
        *s = Src64::of(inst, k, Ty::F64)?;
    }
    if inst.op == v_fmac_f64 {
        src[2] = Src64 {
            from: Wide::Pair(dst as u16),
            ..Src64::NONE
        };
    }
    Some(DoublePlan {
        op,
        dst: dst as u16,
        src,
    })
}

pub(super) fn half_plan(inst: &Inst) -> Option<HalfPlan> {
    let op = match inst.op {
        v_pk_fma_f16 => FloatOp::Fma,
        v_pk_mul_f16 => FloatOp::Mul,
        v_pk_add_f16 => FloatOp::Add,
        _ => return None,
    };
    if inst.clamp || inst.dst < VGPR {
        return None;
    }
    let types = inst.op.types();
    let mut src = [Origin::Value(0); 3];
    let (mut shift, mut flip) = ([[0u32; 3]; 2], [[0u32; 3]; 2]);
    for k in 0..types.len() - 1 {
        src[k] = match inst.src[k] {
            c if c >= VGPR => Origin::Row((Wave::vslot(c) & 511) as u16),
            c if c < 128 && is_known_source(c) => Origin::Sgpr(c as u8),
            // A constant's low half, in both halves (as the general path reads it).
            c @ (128..=208 | 240..=248 | LITERAL) => {
                let v = inline_const(c, types[k + 1], inst.lit)? as u32 & 0xFFFF;
                Origin::Value(v | v << 16)
            }
            _ => return None,
        };
        for (h, (sel, neg)) in [(inst.op_sel, inst.neg), (inst.op_sel_hi, inst.abs)]
            .into_iter()
            .enumerate()
        {
            shift[h][k] = 16 * u32::from(sel >> k & 1);
            flip[h][k] = if neg >> k & 1 != 0 { 0x8000 } else { 0 };
        }
    }
    // A constant has its value in both halves: any choice of half is straight.
    let straight =
        (0..3).all(|k| matches!(src[k], Origin::Value(_)) || shift[0][k] == 0 && shift[1][k] == 16);
    Some(HalfPlan {
        op,
        dst: (Wave::vslot(inst.dst) & 511) as u16,
        src,
        shift,
        flip,
        straight,
    })
}

/// Runs a packed f32 operation: both results of every lane computed, then written under EXEC.
/// False (nothing architectural changed) under a directed rounding mode.
pub(super) fn run_packed(w: &mut Wave, p: &PackedPlan) -> bool {
    let op = match p.op {
        PackedOp::Float(op) => op,
        PackedOp::Move => {
            let (lo, hi) = (slot(w, 0, &p.src[0][0]), slot(w, 1, &p.src[1][0]));
            let rows = [w.v[lo], w.v[hi]];
            write_pair(w, p.dst as usize, &rows);
            return true;
        }
    };
    if w.mode & 0xF != 0 {
        return false;
    }
    let env = Env::from_mode(w.mode);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement of
        // the target-feature functions.
        let done = unsafe {
            match (op, env.keep_in32 && env.keep_out32) {
                (FloatOp::Fma, true) => packed_avx2::<FMA, true>(w, p, &env),
                (FloatOp::Mul, true) => packed_avx2::<MUL, true>(w, p, &env),
                (FloatOp::Add, true) => packed_avx2::<ADD, true>(w, p, &env),
                (FloatOp::Fma, false) => packed_avx2::<FMA, false>(w, p, &env),
                (FloatOp::Mul, false) => packed_avx2::<MUL, false>(w, p, &env),
                (FloatOp::Add, false) => packed_avx2::<ADD, false>(w, p, &env),
            }
        };
        if done {
            return true;
        }
    }
    let mut r = [[0u32; LANES]; 2];
    for (h, r) in r.iter_mut().enumerate() {
        let s = [
            slot(w, 0, &p.src[h][0]),
            slot(w, 1, &p.src[h][1]),
            slot(w, 2, &p.src[h][2]),
        ];
        let rows = [&w.v[s[0]], &w.v[s[1]], &w.v[s[2]]];
        if packed_half(r, rows, op, &env) {
            packed_nans(r, rows, op, &env);
        }
    }
    write_pair(w, p.dst as usize, &r);
    true
}

/// [`run_packed`]'s arithmetic with AVX2 and FMA, one loop per operation (`OP`) and for a MODE
/// that keeps f32 denormals (`KEEP`, the HIP default) without a branch: each source is read
/// through a pointer and a chunk mask, to its row (mask 7) or to eight copies of its value
/// (mask 0), its sign modifiers applied to every read; both results are computed before either
/// destination row is written under EXEC. False (nothing changed) when a result is a NaN, for
/// the lane-by-lane path and its NaN rule.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn packed_avx2<const OP: u8, const KEEP: bool>(w: &mut Wave, p: &PackedPlan, env: &Env) -> bool {
    use std::arch::x86_64::*;
    let lanes = p.src.map(|half| half.map(|s| SrcLanes::of(w, &s)));
    let splats = lanes.map(|half| {
        half.map(|l| match l {
            SrcLanes::Row(..) => [0u32; 8],
            SrcLanes::Same(v) => [v; 8],
        })
    });
    let mut r = [[_mm256_setzero_si256(); LANES / 8]; 2];
    let mut nan = _mm256_setzero_ps();
    for (h, r) in r.iter_mut().enumerate() {
        // (first lane, chunk mask, bits cleared, bits flipped) of each source.
        let read: [(*const u32, usize, __m256i, __m256i); 3] =
            std::array::from_fn(|k| match lanes[h][k] {
                SrcLanes::Row(row, clear, flip) => (
                    row,
                    7,
                    _mm256_set1_epi32(clear as i32),
                    _mm256_set1_epi32(flip as i32),
                ),
                SrcLanes::Same(_) => (
                    splats[h][k].as_ptr(),
                    0,
                    _mm256_setzero_si256(),
                    _mm256_setzero_si256(),
                ),
            });
        for (c, r) in r.iter_mut().enumerate() {
            let mut x = [_mm256_setzero_ps(); 3];
            for (x, &(at, mask, clear, flip)) in x.iter_mut().zip(&read) {
                // SAFETY: a row pointer reaches lanes `8c..8c + 8` of a 64-lane row of the
                // register file (not written yet), a splat's pointer its eight values (chunk 0).
                let bits = unsafe { row8(at, c & mask) };
                let bits = _mm256_xor_si256(_mm256_andnot_si256(clear, bits), flip);
                *x = _mm256_castsi256_ps(if KEEP || env.keep_in32 {
                    bits
                } else {
                    flush_eight(bits)
                });
            }
            let v = float_op::<OP>(x[0], x[1], x[2]);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
            let v = _mm256_castps_si256(v);
            *r = if KEEP || env.keep_out32 {
                v
            } else {
                flush_eight(v)
            };
        }
    }
    if _mm256_movemask_ps(nan) != 0 {
        return false;
    }
    let exec = w.exec();
    for (h, r) in r.iter().enumerate() {
        // SAFETY: `dst + 1` < 512 (the plan takes no pair past the register file): a 64-lane
        // row of it.
        unsafe { put_row_avx2(w.v[p.dst as usize + h].as_mut_ptr(), r, exec) };
    }
    w.lane_insts += exec.count_ones() as u64;
    true
}

/// The f32 denormals (zero exponent) of eight flushed to their signed zeros.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn flush_eight(x: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let exponent = _mm256_and_si256(x, _mm256_set1_epi32(0x7F80_0000));
    let tiny = _mm256_cmpeq_epi32(exponent, _mm256_setzero_si256());
    _mm256_blendv_epi8(x, _mm256_and_si256(x, _mm256_set1_epi32(i32::MIN)), tiny)
}

/// [`FloatOp`]s as constant parameters, so that each operation gets a loop of its own.
const FMA: u8 = 0;
const MUL: u8 = 1;
const ADD: u8 = 2;

/// Operation `OP` of eight f32 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn float_op<const OP: u8>(
    x: std::arch::x86_64::__m256,
    y: std::arch::x86_64::__m256,
    z: std::arch::x86_64::__m256,
) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    match OP {
        FMA => _mm256_fmadd_ps(x, y, z),
        MUL => _mm256_mul_ps(x, y),
        _ => _mm256_add_ps(x, y),
    }
}

/// One half of a packed f32 operation over every lane (the path without AVX2 and FMA, and of
/// NaN results); true when a result is a NaN (whose bits are then the host's choice).
fn packed_half(r: &mut VReg, s: [&VReg; 3], op: FloatOp, env: &Env) -> bool {
    #[inline(always)]
    fn each(r: &mut VReg, s: [&VReg; 3], env: &Env, f: impl Fn(f32, f32, f32) -> f32) -> bool {
        let input = |x: u32| {
            if env.keep_in32 { x } else { flush32_bits(x) }
        };
        let mut nan = false;
        for l in 0..LANES {
            let x = f(
                f32::from_bits(input(s[0][l])),
                f32::from_bits(input(s[1][l])),
                f32::from_bits(input(s[2][l])),
            )
            .to_bits();
            nan |= is_nan32(x);
            r[l] = if env.keep_out32 { x } else { flush32_bits(x) };
        }
        nan
    }
    match op {
        FloatOp::Fma => each(r, s, env, |a, b, c| a.mul_add(b, c)),
        FloatOp::Mul => each(r, s, env, |a, b, _| a * b),
        FloatOp::Add => each(r, s, env, |a, b, _| a + b),
    }
}

/// The NaN results of one half of a packed f32 operation made the general path's: the first
/// NaN source made quiet, or the canonical quiet NaN ([`F32_NAN`]).
fn packed_nans(r: &mut VReg, s: [&VReg; 3], op: FloatOp, env: &Env) {
    let input = |x: u32| u64::from(if env.keep_in32 { x } else { flush32_bits(x) });
    let n = if op == FloatOp::Fma { 3 } else { 2 };
    for l in 0..LANES {
        if is_nan32(r[l]) {
            let src = [input(s[0][l]), input(s[1][l]), input(s[2][l])];
            r[l] = F32_NAN.rule(r[l].into(), &src[..n]) as u32;
        }
    }
}

/// Runs an f64 operation with AVX2 and FMA, four lanes at a time, both result rows computed
/// before they are written under EXEC. False (nothing changed) without those host features, in
/// any MODE but round-to-nearest-even with f64 denormals kept.
pub(super) fn run_double(w: &mut Wave, p: &DoublePlan) -> bool {
    #[cfg(target_arch = "x86_64")]
    if w.mode & 0xCF == 0xC0
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        let mut r = [[0u32; LANES]; 2];
        // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement
        // of the target-feature function.
        if unsafe { double_lanes_x86(w, p, &mut r) } {
            double_nans(w, p, &mut r);
        }
        write_pair(w, p.dst as usize, &r);
        return true;
    }
    let _ = (w, p);
    false
}

/// The NaN results of [`run_double`] made the general path's ([`F64_NAN`]).
fn double_nans(w: &Wave, p: &DoublePlan, r: &mut [VReg; 2]) {
    let n = if p.op == FloatOp::Fma { 3 } else { 2 };
    for l in 0..LANES {
        let x = u64::from(r[0][l]) | u64::from(r[1][l]) << 32;
        if F64_NAN.is_nan(x) {
            let src = p.src.map(|s| s.lane(w, l));
            let x = F64_NAN.rule(x, &src[..n]);
            (r[0][l], r[1][l]) = (x as u32, (x >> 32) as u32);
        }
    }
}

/// The low and high result dwords of [`run_double`] into `r`; true when one is a NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn double_lanes_x86(w: &Wave, p: &DoublePlan, r: &mut [VReg; 2]) -> bool {
    use std::arch::x86_64::*;
    // Lanes 8c..8c + 8 of a source as two vectors of four f64: lanes (0, 1, 4, 5) and
    // (2, 3, 6, 7) of the eight.
    let lanes = |s: &Src64, c: usize| -> [__m256d; 2] {
        let (lo, hi) = match s.from {
            // SAFETY: 64-lane rows of the register file; `c` < 8.
            Wide::Pair(slot) => unsafe {
                (
                    row8(w.v[slot as usize].as_ptr(), c),
                    row8(w.v[(slot as usize + 1) & 511].as_ptr(), c),
                )
            },
            Wide::SPair(code) => {
                let v = w.sgpr64(code as u16);
                (
                    _mm256_set1_epi32(v as i32),
                    _mm256_set1_epi32((v >> 32) as i32),
                )
            }
            Wide::Value(v) => (
                _mm256_set1_epi32(v as i32),
                _mm256_set1_epi32((v >> 32) as i32),
            ),
            Wide::Row(_) | Wide::Sgpr(_) => unreachable!("f64 sources are pairs or values"),
        };
        let (clear, flip) = (
            _mm256_set1_epi64x(s.clear as i64),
            _mm256_set1_epi64x(s.flip as i64),
        );
        [_mm256_unpacklo_epi32(lo, hi), _mm256_unpackhi_epi32(lo, hi)]
            .map(|x| _mm256_castsi256_pd(_mm256_xor_si256(_mm256_andnot_si256(clear, x), flip)))
    };
    let mut nan = false;
    for c in 0..LANES / 8 {
        let [a, b, cc] = [
            lanes(&p.src[0], c),
            lanes(&p.src[1], c),
            lanes(&p.src[2], c),
        ];
        let x: [__m256d; 2] = std::array::from_fn(|q| match p.op {
            FloatOp::Fma => _mm256_fmadd_pd(a[q], b[q], cc[q]),
            FloatOp::Mul => _mm256_mul_pd(a[q], b[q]),
            FloatOp::Add => _mm256_add_pd(a[q], b[q]),
        });
        for x in x {
            nan |= _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_UNORD_Q>(x, x)) != 0;
        }
        let [x0, x1] = x.map(|x| _mm256_castpd_ps(x));
        // The even dwords (low halves) and the odd ones (high halves), in lane order.
        let lo = _mm256_shuffle_ps::<0b10_00_10_00>(x0, x1);
        let hi = _mm256_shuffle_ps::<0b11_01_11_01>(x0, x1);
        // SAFETY: lanes `8c..8c + 8` of the result rows; unaligned stores.
        unsafe {
            _mm256_storeu_ps(r[0].as_mut_ptr().add(8 * c) as *mut f32, lo);
            _mm256_storeu_ps(r[1].as_mut_ptr().add(8 * c) as *mut f32, hi);
        }
    }
    nan
}

/// Runs a packed f16 operation with F16C, AVX2 and FMA: both results of every lane computed
/// as the general path computes them (sums and products in f32, the fused multiply-add in f32
/// rounded to odd, each rounded to f16 once), then written under EXEC. False (nothing
/// changed) without those host features, or in any MODE but round-to-nearest-even with f16
/// denormals kept.
pub(super) fn run_half(w: &mut Wave, p: &HalfPlan) -> bool {
    #[cfg(target_arch = "x86_64")]
    if w.mode & 0xCF == 0xC0
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        let mut r = [0u32; LANES];
        // SAFETY: the CPU supports AVX2, FMA and F16C (checked just above), the only
        // requirement of the target-feature function.
        if unsafe { half_lanes_x86(w, p, &mut r) } {
            half_nans(w, p, &mut r);
        }
        let exec = w.exec();
        write_row(&mut w.v[p.dst as usize], &r, exec);
        w.lane_insts += exec.count_ones() as u64;
        return true;
    }
    let _ = (w, p);
    false
}

/// The NaN results of [`run_half`] made the general path's ([`F16_NAN`]).
fn half_nans(w: &Wave, p: &HalfPlan, r: &mut VReg) {
    let n = if p.op == FloatOp::Fma { 3 } else { 2 };
    for l in 0..LANES {
        let dwords = p.src.map(|from| match from {
            Origin::Row(slot) => w.v[slot as usize][l],
            Origin::Sgpr(c) => w.s[c as usize],
            Origin::Value(x) => x,
        });
        for h in 0..2 {
            let x = u64::from(r[l] >> (16 * h) & 0xFFFF);
            if F16_NAN.is_nan(x) {
                let src: [u64; 3] = std::array::from_fn(|k| {
                    u64::from((dwords[k] >> p.shift[h][k] & 0xFFFF) ^ p.flip[h][k])
                });
                let x = F16_NAN.rule(x, &src[..n]) as u32;
                r[l] = r[l] & !(0xFFFF << (16 * h)) | x << (16 * h);
            }
        }
    }
}

/// The results of [`run_half`] into `r`, eight lanes at a time; true when one is a NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn half_lanes_x86(w: &Wave, p: &HalfPlan, r: &mut VReg) -> bool {
    if p.straight {
        return match p.op {
            FloatOp::Fma => half_straight::<FMA>(w, p, r),
            FloatOp::Mul => half_straight::<MUL>(w, p, r),
            FloatOp::Add => half_straight::<ADD>(w, p, r),
        };
    }
    use std::arch::x86_64::*;
    let sources = p.src.map(|from| SrcLanes::of(w, &Src::plain(from)));
    // SAFETY: the source rows are 64-lane rows of the register file; `c` < 8.
    let words = |k: usize, c: usize| unsafe { sources[k].eight(c) };
    // The halves of eight lanes (one per 32-bit lane) as eight packed f16.
    let pack = |x: __m256i| {
        let p = _mm256_packus_epi32(x, x);
        _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(p))
    };
    let (mask, mut nan) = (_mm256_set1_epi32(0xFFFF), _mm256_setzero_ps());
    for c in 0..LANES / 8 {
        let w = [words(0, c), words(1, c), words(2, c)];
        let mut out = [_mm_setzero_si128(); 2];
        for (h, out) in out.iter_mut().enumerate() {
            let half = |k: usize| {
                let x = _mm256_srlv_epi32(w[k], _mm256_set1_epi32(p.shift[h][k] as i32));
                let x = _mm256_xor_si256(
                    _mm256_and_si256(x, mask),
                    _mm256_set1_epi32(p.flip[h][k] as i32),
                );
                _mm256_cvtph_ps(pack(x))
            };
            let x = match p.op {
                FloatOp::Add => _mm256_add_ps(half(0), half(1)),
                FloatOp::Mul => _mm256_mul_ps(half(0), half(1)),
                FloatOp::Fma => half_fma_to_odd(half(0), half(1), half(2)),
            };
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
            *out = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
        }
        let (lo, hi) = (
            _mm_unpacklo_epi16(out[0], out[1]),
            _mm_unpackhi_epi16(out[0], out[1]),
        );
        // SAFETY: lanes `8c..8c + 8` of `r`; unaligned stores.
        unsafe {
            _mm_storeu_si128(r.as_mut_ptr().add(8 * c) as *mut __m128i, lo);
            _mm_storeu_si128(r.as_mut_ptr().add(8 * c + 4) as *mut __m128i, hi);
        }
    }
    _mm256_movemask_ps(nan) != 0
}

/// [`half_lanes_x86`] when every source gives each result half its own half of the dword
/// (op_sel clear, op_sel_hi set): the f16 values of a row are then an array of 128, computed
/// sixteen at a time in the order they lie in, without moving halves. True when a result is a
/// NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn half_straight<const OP: u8>(w: &Wave, p: &HalfPlan, r: &mut VReg) -> bool {
    use std::arch::x86_64::*;
    // Each source's dwords with neg_lo and neg_hi applied.
    let [a, b, c] = std::array::from_fn(|k| {
        let flip = p.flip[0][k] | p.flip[1][k] << 16;
        match p.src[k] {
            Origin::Row(slot) => SrcLanes::Row(w.v[slot as usize & 511].as_ptr(), 0, flip),
            Origin::Sgpr(s) => SrcLanes::Same(w.s[s as usize] ^ flip),
            Origin::Value(x) => SrcLanes::Same(x ^ flip),
        }
    });
    // SAFETY: the source rows are 64-lane rows of the register file.
    let s = unsafe { [a.all(), b.all(), c.all()] };
    let mut nan = _mm256_setzero_ps();
    for k in 0..LANES / 8 {
        let mut out = [_mm_setzero_si128(); 2];
        for (q, out) in out.iter_mut().enumerate() {
            let [x, y, z] = [s[0][k], s[1][k], s[2][k]].map(|d| {
                _mm256_cvtph_ps(if q == 0 {
                    _mm256_castsi256_si128(d)
                } else {
                    _mm256_extracti128_si256::<1>(d)
                })
            });
            let v = match OP {
                FMA => half_fma_to_odd(x, y, z),
                _ => float_op::<OP>(x, y, z),
            };
            nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
            *out = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
        }
        // SAFETY: lanes `8k..8k + 8` of `r`; an unaligned store.
        unsafe {
            _mm256_storeu_si256(
                r.as_mut_ptr().add(8 * k) as *mut __m256i,
                _mm256_set_m128i(out[1], out[0]),
            )
        };
    }
    _mm256_movemask_ps(nan) != 0
}

/// `x * y + z` of eight f16 values (as f32), rounded to f32 toward zero with the lowest bit
/// set where that was inexact (rounding to odd: 24 bits hold the f16 significand and two
/// more, so that rounding this to f16 rounds the exact result once). The product of two f16
/// values is exact in f32 and the sum's rounding error is exact by Knuth's two-sum (no
/// operand near f32's overflow); infinities and NaNs come out as the sum gives them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn half_fma_to_odd(
    x: std::arch::x86_64::__m256,
    y: std::arch::x86_64::__m256,
    z: std::arch::x86_64::__m256,
) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let product = _mm256_mul_ps(x, y);
    let sum = _mm256_add_ps(product, z);
    let z_part = _mm256_sub_ps(sum, product);
    let error = _mm256_add_ps(
        _mm256_sub_ps(product, _mm256_sub_ps(sum, z_part)),
        _mm256_sub_ps(z, z_part),
    );
    // Inexact: an error other than zero (and not a NaN, as at an infinite sum).
    let inexact = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_NEQ_OQ>(error, _mm256_setzero_ps()));
    // The sum lies farther from zero than the exact result where their signs differ: one place
    // toward zero there (adding the all-ones mask), then the sticky lowest bit.
    let (sum, error) = (_mm256_castps_si256(sum), _mm256_castps_si256(error));
    let away = _mm256_and_si256(
        inexact,
        _mm256_srai_epi32::<31>(_mm256_xor_si256(sum, error)),
    );
    let toward_zero = _mm256_add_epi32(sum, away);
    let odd = _mm256_or_si256(toward_zero, _mm256_and_si256(inexact, _mm256_set1_epi32(1)));
    _mm256_castsi256_ps(odd)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MASKS, Parts, against_reference, planned_as_reference, waves};
    use super::super::{inst_plan, is_nan32};
    use crate::decode::{Enc, LITERAL, Op::*, Program, VCC, VGPR};
    use crate::memory::RegionMemory;
    use crate::target::Target;
    use crate::wave::LANES;

    /// Whether the host has the vector units the f64 and packed f16 plans need.
    fn host_vectors() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c");
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Lanes of EXEC whose result in `row` is a NaN of the width `half` (16 or 32 bits) gives.
    fn nan_lanes(row: &[u32; LANES], exec: u64, half: bool) -> u32 {
        let nan = |x: u32| {
            if half {
                [x & 0xFFFF, x >> 16].iter().any(|h| h & 0x7FFF > 0x7C00)
            } else {
                is_nan32(x)
            }
        };
        (0..LANES)
            .filter(|&l| exec >> l & 1 != 0 && nan(row[l]))
            .count() as u32
    }

    /// Packed f32 and f16 operations and `v_pk_mov_b32` over op_sel and op_sel_hi choices,
    /// neg_lo and neg_hi, VGPR pairs (the destination among them), SGPR pairs and constants,
    /// sources with NaNs and infinities, every denormal mode, a directed rounding mode and
    /// every EXEC class: the plan (or the general path where it declines) against the per-lane
    /// reference. The plan declines only the modes it does not run, never a NaN result.
    #[test]
    fn packed_plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_pk_fma_f32 v[2:3], v[14:15], v[14:15], s[0:1] op_sel_hi:[1,1,0]
        let template = crate::decode::decode(Target::Gfx942, &[0xD3B0_0002, 0x1802_1D0E]);
        let sources = [VGPR, VGPR + 2, VGPR + 4, VGPR + 6, 2, VCC, 128 + 3, 242];
        let mut r = 0x0DDB_A11C_0FFE_E123u64;
        let mut bits = || {
            let x = crate::exec::f32_test_bits(&mut r);
            x ^ (x >> 7)
        };
        let (mut planned, mut declined, mut nans) = (std::collections::BTreeMap::new(), 0, 0);
        let ops = [
            v_pk_fma_f32,
            v_pk_mul_f32,
            v_pk_add_f32,
            v_pk_fma_f16,
            v_pk_mul_f16,
            v_pk_add_f16,
            v_pk_mov_b32,
        ];
        for op in ops {
            for mode in [0xF0, 0x00, 0x10, 0x20, 0xC0, 0x30, 0xF1] {
                for &exec in &MASKS {
                    for round in 0..24 {
                        let mut inst = template;
                        inst.op = op;
                        inst.dst = VGPR + 4;
                        for k in 0..3 {
                            inst.src[k] = sources[bits() as usize % sources.len()];
                        }
                        let b = bits();
                        (inst.op_sel, inst.op_sel_hi) = (b as u8 & 7, (b >> 3) as u8 & 7);
                        (inst.neg, inst.abs) = ((b >> 6) as u8 & 7, (b >> 9) as u8 & 7);
                        let mut seed = b as u64;
                        let [mut a, mut b] = waves(&mut seed, exec, mode);
                        if round % 2 == 0 {
                            // Infinities, zeros and signalling NaNs in the f16 halves (the f32
                            // specials have them): invalid operations and NaN sources.
                            for x in [&mut a, &mut b].into_iter().flat_map(|w| &mut w.v[..8]) {
                                for x in x.iter_mut().filter(|x| **x % 3 == 0) {
                                    let at = 16 * (*x >> 5 & 1);
                                    let h = [0x7C00, 0xFC00, 0, 0x7D01][(*x >> 3) as usize % 4];
                                    *x = *x & !(0xFFFF << at) | h << at;
                                }
                            }
                        }
                        let what = format!(
                            "{} mode {mode:x} exec {exec:x}",
                            inst.disassemble(Target::Gfx942)
                        );
                        let (p, waves) = (inst_plan(&inst), [&mut a, &mut b]);
                        let ran =
                            against_reference(&mut parts, &prog, p.as_ref(), &inst, waves, &what);
                        let half = matches!(op, v_pk_fma_f16 | v_pk_mul_f16 | v_pk_add_f16);
                        let runs = match op {
                            v_pk_mov_b32 => true,
                            _ if half => mode & 0xCF == 0xC0 && host_vectors(),
                            _ => mode & 0xF == 0,
                        };
                        assert_eq!(ran, runs, "{what}: planned");
                        if ran {
                            *planned.entry(op.name()).or_insert(0) += 1;
                            nans += nan_lanes(&a.v[4], exec, half) + nan_lanes(&a.v[5], exec, half);
                        } else {
                            declined += 1;
                        }
                    }
                }
            }
        }
        assert!(
            planned.len() == ops.len()
                && planned.values().all(|&n| n >= 40)
                && declined > 100
                && nans > 1000,
            "planned {planned:?}, {declined} declined, {nans} NaN results on the plan"
        );
    }

    /// An f16 fused multiply-add rounds once: 1.0009765625 * 24576 - 2^-10 lies just below the
    /// midpoint of 0x7601 and 0x7602 and rounds down; rounded through f32 first it lands on the
    /// midpoint and rounds to even (0x7602). `v_pk_fma_f16` on the plan and the reference, and
    /// `v_fma_f16`.
    #[test]
    fn half_fma_rounds_once() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_pk_fma_f16 v4, v0, v1, v2 ; v_fma_f16 v5, v0, v1, v2
        let packed = crate::decode::decode(Target::Gfx942, &[0xD38E_4004, 0x1C0A_0300]);
        let single = crate::decode::decode(Target::Gfx942, &[0xD206_0005, 0x040A_0300]);
        let mut seed = 7;
        let [mut a, mut b] = waves(&mut seed, u64::MAX, 0xF0);
        for w in [&mut a, &mut b] {
            for (row, x) in [(0, 0x3C01_3C01), (1, 0x7600_7600), (2, 0x9400_9400)] {
                w.v[row] = [x; LANES];
            }
        }
        let plan = inst_plan(&packed).expect("v_pk_fma_f16 has a plan");
        planned_as_reference(
            &mut parts,
            &prog,
            &plan,
            &packed,
            [&mut a, &mut b],
            "pk_fma",
        );
        assert_eq!(a.v[4], [0x7601_7601; LANES]);
        let _ = against_reference(&mut parts, &prog, None, &single, [&mut a, &mut b], "fma");
        assert!(
            a.v[5].iter().all(|&x| x & 0xFFFF == 0x7601),
            "{:#x}",
            a.v[5][0]
        );
    }

    /// Packed f16 operations whose sources give each result half its own half (op_sel clear,
    /// op_sel_hi set, as clang emits for `half2` arithmetic), on values that make rounding
    /// matter: products near an addend of the opposite sign (cancellation, results just off an
    /// f16 midpoint), denormals, values past f16's range, infinities and NaNs; rows, SGPRs and
    /// constants, neg_lo/neg_hi, every EXEC class. The plan against the per-lane reference.
    #[test]
    fn straight_half_plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_pk_fma_f16 v4, v0, v1, v2 (op_sel_hi all set)
        let template = crate::decode::decode(Target::Gfx942, &[0xD38E_4004, 0x1C0A_0300]);
        let mut r = 0x5EED_F16F_0123_4567u64;
        let mut next = move || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        // An f16 with a random significand, sign and an exponent near `e` (biased).
        let near = |x: u64, e: u64| -> u32 {
            let exponent = (e + (x >> 11) % 5).saturating_sub(2).min(30) as u32;
            (x as u32 & 0x3FF) | exponent << 10 | ((x >> 20) as u32 & 1) << 15
        };
        let (mut planned, mut finite) = (0, 0);
        for op in [v_pk_fma_f16, v_pk_mul_f16, v_pk_add_f16] {
            for &exec in &MASKS {
                for round in 0..120 {
                    let mut inst = template;
                    inst.op = op;
                    inst.src[1] = [VGPR + 1, VGPR + 1, 3, 240][round % 4];
                    inst.src[2] = [VGPR + 2, 5, VGPR + 2, 242][round / 4 % 4];
                    (inst.neg, inst.abs) = ((round as u8 / 16) & 7, (round as u8 / 3) & 7);
                    let mut seed = next();
                    let [mut a, mut b] = waves(&mut seed, exec, 0xF0);
                    let base = next() % 31;
                    for l in 0..LANES {
                        let mut dword = [0u32; 3];
                        for h in 0..2 {
                            let (x, mut y) = (near(next(), base), near(next(), base));
                            if round % 2 == 1 {
                                // Three significant bits: products of 12 to 14 bits, often an
                                // f16 midpoint, which a tiny addend then decides.
                                y &= !0xFF;
                            }
                            let product = f32::from(half::f16::from_bits(x as u16))
                                * f32::from(half::f16::from_bits(y as u16));
                            // An addend that nearly cancels the product, a tiny one, or a
                            // random one.
                            let z = match next() % 8 {
                                0..=3 => {
                                    let z = half::f16::from_f32(-product).to_bits() as u32;
                                    let ulps = (next() % 5) as u32;
                                    let z = if next() % 2 == 0 {
                                        z.wrapping_add(ulps)
                                    } else {
                                        z.wrapping_sub(ulps)
                                    };
                                    z & 0xFFFF
                                }
                                4 => near(next(), 2) | (next() as u32 & 1) << 15,
                                5 => {
                                    [0x7C00, 0xFC00, 0x7E01, 0x0001, 0x8000][(next() % 5) as usize]
                                }
                                _ => near(next(), base),
                            };
                            for (k, v) in [x, y, z].into_iter().enumerate() {
                                dword[k] |= v << (16 * h);
                            }
                        }
                        for w in [&mut a, &mut b] {
                            for k in 0..3 {
                                w.v[k][l] = dword[k];
                            }
                        }
                    }
                    let plan = inst_plan(&inst);
                    let straight =
                        matches!(&plan, Some(super::super::Plan::PackedHalf(p)) if p.straight);
                    assert!(
                        straight,
                        "{}: a straight plan",
                        inst.disassemble(Target::Gfx942)
                    );
                    let what = format!("{} exec {exec:x}", inst.disassemble(Target::Gfx942));
                    let ran = against_reference(
                        &mut parts,
                        &prog,
                        plan.as_ref(),
                        &inst,
                        [&mut a, &mut b],
                        &what,
                    );
                    assert_eq!(ran, host_vectors(), "{what}: planned");
                    planned += u32::from(ran);
                    finite += a.v[4].iter().filter(|&&x| x & 0x7C00 != 0x7C00).count();
                }
            }
        }
        assert!(
            !host_vectors() || planned == 3 * 5 * 120 && finite > 10_000,
            "{planned} planned, {finite} finite low halves"
        );
    }

    /// f64 operations (VOP3 forms and `v_fmac_f64_e32`) over VGPR pairs (the destination
    /// among them), SGPR pairs, VCC, constants and the literal, neg/abs, sources with NaNs and
    /// infinities, every f64 denormal mode, a directed rounding mode and every EXEC class: the
    /// plan (or the general path where it declines) against the per-lane reference. The plan
    /// declines only the modes it does not run, never a NaN result.
    #[test]
    fn double_plans_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let t = Target::Gfx942;
        // v_fma_f64 v[2:3], v[10:11], v[10:11], s[0:1] ; v_fmac_f64_e32 v[2:3], v[14:15], v[16:17]
        let vop3 = crate::decode::decode(t, &[0xD1CC_0002, 0x0002_150A]);
        let fmac = crate::decode::decode(t, &[0x0804_210E]);
        let sources = [
            VGPR,
            VGPR + 2,
            VGPR + 4,
            VGPR + 6,
            2,
            VCC,
            128 + 3,
            242,
            LITERAL,
        ];
        let mut r = 0xF00D_CAFE_0000_0001u64;
        let (mut planned, mut nans) = (std::collections::BTreeMap::new(), 0);
        for (template, ops) in [
            (vop3, &[v_fma_f64, v_mul_f64, v_add_f64][..]),
            (fmac, &[v_fmac_f64][..]),
        ] {
            for &op in ops {
                for mode in [0xF0, 0x00, 0x40, 0x80, 0xF1] {
                    for &exec in &MASKS {
                        for round in 0..24 {
                            let mut inst = template;
                            inst.op = op;
                            inst.dst = VGPR + 4;
                            let b = crate::exec::f32_test_bits(&mut r);
                            if inst.enc == Enc::Vop3 {
                                for k in 0..3 {
                                    inst.src[k] = sources[(b >> (4 * k)) as usize % sources.len()];
                                }
                                (inst.neg, inst.abs) = ((b >> 12) as u8 & 7, (b >> 15) as u8 & 7);
                            } else {
                                inst.src[0] = sources[b as usize % sources.len()];
                            }
                            inst.lit = b;
                            let mut seed = b as u64;
                            let [mut a, mut w] = waves(&mut seed, exec, mode);
                            if round % 2 == 0 {
                                // f64 NaNs, quiet and signalling, infinities and zeros (the
                                // pairs of f32 specials rarely are): NaN sources and invalid
                                // operations.
                                for x in [&mut a, &mut w] {
                                    for k in (0..8).step_by(2) {
                                        for l in 0..LANES {
                                            let hi = x.v[k + 1][l];
                                            if hi % 3 == 0 {
                                                let (lo, top) = [
                                                    (0, 0x7FF0_0000),
                                                    (0, 0xFFF0_0000),
                                                    (0, 0),
                                                    (5, 0x7FF0_0000),
                                                ]
                                                    [(hi >> 3) as usize % 4];
                                                (x.v[k][l], x.v[k + 1][l]) = (lo, top);
                                            }
                                        }
                                    }
                                }
                            }
                            let what =
                                format!("{} mode {mode:x} exec {exec:x}", inst.disassemble(t));
                            let plan = inst_plan(&inst);
                            let waves = [&mut a, &mut w];
                            let ran = against_reference(
                                &mut parts,
                                &prog,
                                plan.as_ref(),
                                &inst,
                                waves,
                                &what,
                            );
                            assert_eq!(
                                ran,
                                mode & 0xCF == 0xC0 && host_vectors(),
                                "{what}: planned"
                            );
                            if ran {
                                *planned.entry(op.name()).or_insert(0) += 1;
                                nans += (0..LANES)
                                    .filter(|&l| {
                                        exec >> l & 1 != 0
                                            && a.v[5][l] & 0x7FF0_0000 == 0x7FF0_0000
                                            && (a.v[5][l] & 0xF_FFFF != 0 || a.v[4][l] != 0)
                                    })
                                    .count();
                            }
                        }
                    }
                }
            }
        }
        assert!(
            planned.len() == 4 && planned.values().all(|&n| n >= 40) && nans > 200,
            "planned {planned:?}, {nans} NaN results on the plan"
        );
    }
}
