//! The steps of the compiler's f32 and f64 division sequences (`v_div_scale`, `v_div_fmas`,
//! `v_div_fixup`: every `a / b` that is not built with fast-math) on whole rows, where every
//! EXEC lane holds ordinary operands: each step then reduces to a row copy, a fused
//! multiply-add or a sign fix, with the lane path's denormal handling. A row with any other
//! operand in an EXEC lane (a zero, a denormal, an infinity, a NaN, a quotient near the ends of
//! the range) is left to the per-lane path, which keeps the full semantics
//! ([`float::div_scale32`], [`float::div_fmas32`], [`float::div_fixup32`] and their f64 forms).

use std::ops::Range;

use crate::decode::Op::{self, *};
use crate::wave::{LANES, VReg};

use super::super::float::Env;
#[cfg(target_arch = "x86_64")]
use super::compiled_for_fma;

/// A step of a division sequence with a row form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Step {
    /// `v_div_scale d, vcc, s0, den, num`: `s0` unscaled, VCC clear.
    Scale,
    /// `v_div_fmas d, a, b, c` with VCC clear: `a * b + c` rounded once.
    Fmas,
    /// `v_div_fixup d, q, den, num`: `q` with the quotient's sign.
    Fixup,
}

impl Step {
    pub fn of(op: Op) -> Option<Step> {
        Some(match op {
            v_div_scale_f32 | v_div_scale_f64 => Step::Scale,
            v_div_fmas_f32 | v_div_fmas_f64 => Step::Fmas,
            v_div_fixup_f32 | v_div_fixup_f64 => Step::Fixup,
            _ => return None,
        })
    }
}

/// Where a format keeps its fields, and the operands `v_div_scale` leaves alone.
struct Layout {
    /// f64 (MODE's f64 denormal controls apply), else f32.
    wide: bool,
    /// The exponent field's first bit and its all-ones value.
    shift: u32,
    max: u64,
    sign: u64,
    /// The numerator's smallest exponent field left unscaled (past the format's precision).
    numerator_from: u64,
    /// The denominator's largest exponent field whose reciprocal is normal.
    denominator_to: u64,
    /// Numerator minus denominator exponent fields whose quotient is neither scaled (too
    /// large) nor near the denormal range.
    quotient: Range<i64>,
}

const F32: Layout = Layout {
    wide: false,
    shift: 23,
    max: 0xFF,
    sign: 1 << 31,
    numerator_from: 24,
    denominator_to: 254,
    quotient: -120..96,
};

const F64: Layout = Layout {
    wide: true,
    shift: 52,
    max: 0x7FF,
    sign: 1 << 63,
    numerator_from: 54,
    denominator_to: 2044,
    quotient: -1000..768,
};

impl Layout {
    fn exponent(&self, x: u64) -> u64 {
        (x >> self.shift) & self.max
    }

    /// A finite, non-zero, normal value.
    fn normal(&self, x: u64) -> bool {
        (1..self.max).contains(&self.exponent(x))
    }

    fn nan(&self, x: u64) -> bool {
        self.exponent(x) == self.max && x & ((1 << self.shift) - 1) != 0
    }

    /// `x` with a denormal flushed to a zero of its sign unless `keep`.
    fn flushed(&self, x: u64, keep: bool) -> u64 {
        if !keep && self.exponent(x) == 0 {
            x & self.sign
        } else {
            x
        }
    }

    /// Whether `v_div_scale` leaves its source unscaled with VCC clear for denominator `den`
    /// and numerator `num`.
    fn scales_to_itself(&self, den: u64, num: u64) -> bool {
        let (e1, e2) = (self.exponent(den), self.exponent(num));
        self.normal(den)
            && self.normal(num)
            && e1 <= self.denominator_to
            && e2 >= self.numerator_from
            && self.quotient.contains(&(e2 as i64 - e1 as i64))
    }

    /// Whether every EXEC lane of `step` over sources `lane(l)` (VCC `vcc`) is ordinary.
    fn ordinary(&self, step: Step, vcc: u64, exec: u64, lane: impl Fn(usize) -> [u64; 3]) -> bool {
        if step == Step::Fmas && vcc & exec != 0 {
            return false;
        }
        let mut bad = 0u64;
        for l in 0..LANES {
            let [a, b, c] = lane(l);
            let ok = match step {
                Step::Scale => self.scales_to_itself(b, c),
                Step::Fmas => [a, b, c].iter().all(|&x| self.exponent(x) != self.max),
                Step::Fixup => self.normal(b) && self.normal(c) && !self.nan(a),
            };
            bad |= u64::from(!ok) << l;
        }
        bad & exec == 0
    }

    /// MODE's denormal controls of the format: (sources kept, results kept).
    fn keeps(&self, env: Env) -> (bool, bool) {
        if self.wide {
            (env.keep_in64, env.keep_out64)
        } else {
            (env.keep_in32, env.keep_out32)
        }
    }

    /// The scale step's result for source `a` (unscaled, read as the lane path reads it).
    fn scaled(&self, a: u64, env: Env) -> u64 {
        self.flushed(a, self.keeps(env).0)
    }

    /// The fix-up step's result: `q` with the sign of `den` times `num`.
    fn fixed(&self, q: u64, den: u64, num: u64, env: Env) -> u64 {
        let (keep_in, keep_out) = self.keeps(env);
        let magnitude = self.flushed(q, keep_in) & !self.sign;
        self.flushed(magnitude | (den ^ num) & self.sign, keep_out)
    }
}

/// Runs f32 `step` over source rows `[a, b, c]` into `out` (every lane); the lane mask it
/// produces (always 0: no ordinary lane sets VCC) when every EXEC lane is ordinary, `None`
/// (nothing written) otherwise.
pub(super) fn run(
    step: Step,
    [a, b, c]: [&VReg; 3],
    env: Env,
    vcc: u64,
    exec: u64,
    out: &mut VReg,
) -> Option<u64> {
    let lane = |l: usize| [a[l], b[l], c[l]].map(u64::from);
    if !F32.ordinary(step, vcc, exec, lane) {
        return None;
    }
    match step {
        Step::Scale => {
            for l in 0..LANES {
                out[l] = F32.scaled(a[l].into(), env) as u32;
            }
        }
        Step::Fmas => fused(a, b, c, env, out),
        Step::Fixup => {
            for l in 0..LANES {
                out[l] = F32.fixed(a[l].into(), b[l].into(), c[l].into(), env) as u32;
            }
        }
    }
    Some(0)
}

/// [`run`] for the f64 steps, the sources and results as 64-bit lanes.
pub(super) fn run_wide(
    step: Step,
    [a, b, c]: [&[u64; LANES]; 3],
    env: Env,
    vcc: u64,
    exec: u64,
    out: &mut [u64; LANES],
) -> Option<u64> {
    if !F64.ordinary(step, vcc, exec, |l| [a[l], b[l], c[l]]) {
        return None;
    }
    match step {
        Step::Scale => *out = a.map(|x| F64.scaled(x, env)),
        Step::Fmas => fused(a, b, c, env, out),
        Step::Fixup => {
            for l in 0..LANES {
                out[l] = F64.fixed(a[l], b[l], c[l], env);
            }
        }
    }
    Some(0)
}

/// An f32 (`u32` bits) or f64 (`u64` bits) lane of the fused step.
trait Fused: Copy {
    /// `a * b + c` rounded once, the sources and the result flushed as `env` says.
    fn fused(a: Self, b: Self, c: Self, env: Env) -> Self;
}

impl Fused for u32 {
    #[inline(always)]
    fn fused(a: u32, b: u32, c: u32, env: Env) -> u32 {
        let input = |x: u32| f32::from_bits(F32.flushed(x.into(), env.keep_in32) as u32);
        let r = input(a).mul_add(input(b), input(c));
        F32.flushed(r.to_bits().into(), env.keep_out32) as u32
    }
}

impl Fused for u64 {
    #[inline(always)]
    fn fused(a: u64, b: u64, c: u64, env: Env) -> u64 {
        let input = |x: u64| f64::from_bits(F64.flushed(x, env.keep_in64));
        let r = input(a).mul_add(input(b), input(c));
        F64.flushed(r.to_bits(), env.keep_out64)
    }
}

/// [`Fused::fused`] in every lane, the loop compiled for the host's FMA instructions where it
/// has them (it vectorises).
fn fused<T: Fused>(a: &[T; LANES], b: &[T; LANES], c: &[T; LANES], env: Env, out: &mut [T; LANES]) {
    let mut row = || {
        for l in 0..LANES {
            out[l] = T::fused(a[l], b[l], c[l], env);
        }
    };
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only requirement of
        // the target-feature function.
        unsafe { compiled_for_fma(row) };
        return;
    }
    row();
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MASKS, Parts, planned_as_reference, templates, waves};
    use super::super::{Plan, inst_plan};
    use super::*;
    use crate::decode::{Program, VCC, VGPR};
    use crate::memory::RegionMemory;
    use crate::target::Target;
    use crate::wave::Wave;

    /// f32 operands outside the ordinary range, put into one lane of a source.
    const SPECIAL32: [u64; 11] = [
        0,
        0x8000_0000,
        1,
        0x807F_FFFF,
        0x0080_0000,
        0x0B80_0000,
        0x7F00_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0001,
        0x7F80_0001,
    ];

    /// The same for f64.
    const SPECIAL64: [u64; 11] = [
        0,
        1 << 63,
        1,
        0x800F_FFFF_FFFF_FFFF,
        0x0010_0000_0000_0000,
        0x0350_0000_0000_0000,
        0x7FE0_0000_0000_0000,
        0x7FF0_0000_0000_0000,
        0xFFF0_0000_0000_0000,
        0x7FF8_0000_0000_0001,
        0x7FF0_0000_0000_0001,
    ];

    fn next(r: &mut u64) -> u64 {
        *r ^= *r << 13;
        *r ^= *r >> 7;
        *r ^= *r << 17;
        *r
    }

    /// An ordinary value of `layout` (either sign, an exponent around 1, or any normal one in
    /// some rounds).
    fn ordinary(r: &mut u64, layout: &Layout, wide: bool) -> u64 {
        let x = next(r);
        let bias = layout.max / 2;
        let exponent = if wide {
            1 + x % (layout.max - 1)
        } else {
            bias - 30 + x % 60
        };
        let fraction = next(r) & ((1 << layout.shift) - 1);
        ((x >> 63) * layout.sign) | (exponent << layout.shift) | fraction
    }

    /// Source `k`'s value in lane `l` of a wave: a VGPR (f32) or a VGPR pair (f64).
    fn get(w: &Wave, row: usize, f64: bool, l: usize) -> u64 {
        let lo = u64::from(w.v[row][l]);
        if f64 {
            lo | u64::from(w.v[row + 1][l]) << 32
        } else {
            lo
        }
    }

    fn put(w: &mut Wave, row: usize, f64: bool, l: usize, x: u64) {
        w.v[row][l] = x as u32;
        if f64 {
            w.v[row + 1][l] = (x >> 32) as u32;
        }
    }

    /// Denominator and numerator exponent fields around one edge of the range `v_div_scale`
    /// leaves unscaled (case `k`): the quotient's lower and upper ends, the numerator's
    /// smallest exponent, the denominator's largest.
    fn edge(layout: &Layout, k: usize) -> [u64; 2] {
        let i = (k / 4) as i64;
        let (low, high) = (layout.quotient.start, layout.quotient.end);
        let mid = (layout.max / 2) as i64;
        let [e1, e2] = match k % 4 {
            // From well inside the range the lane path scales to the bound.
            0 => [2 * mid - 4, 2 * mid - 4 + low - 28 + 2 * i],
            1 => [mid - 40, mid - 40 + high - 3 + i % 6],
            2 => [layout.numerator_from as i64 - 3 + i % 6; 2],
            _ => [layout.denominator_to as i64 - 2 + i % 4; 2],
        };
        [e1, e2].map(|e| e.clamp(1, layout.max as i64 - 1) as u64)
    }

    /// The steps as the compilers' sequences use them (the scale of the denominator and of
    /// the numerator; the fused step with VCC clear and set; the fix-up), for f32 and f64,
    /// over ordinary operands with now and then one lane out of the ordinary range, with and
    /// without neg/abs, every denormal mode and every EXEC class: the plan's registers and
    /// masks against the per-lane reference bit for bit, the row form taking most of the
    /// ordinary rows and none of the others.
    #[test]
    fn division_steps_on_rows_match_the_per_lane_reference() {
        let prog = Program::decode(Target::Gfx942, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        let mut r = 0x0DD1_5EA5_E5CA_1E01u64;
        // Sources: the quotient or fused source at v1 (f32) or v[0:1], the denominator at v5
        // or v[2:3], the numerator at v6 or v[4:5].
        let forms = [
            (v_div_scale_f32, [1, 5, 5, 6]),
            (v_div_scale_f32, [1, 6, 5, 6]),
            (v_div_fmas_f32, [1, 1, 5, 6]),
            (v_div_fixup_f32, [1, 1, 5, 6]),
            (v_div_scale_f64, [0, 2, 2, 4]),
            (v_div_scale_f64, [0, 4, 2, 4]),
            (v_div_fmas_f64, [0, 0, 2, 4]),
            (v_div_fixup_f64, [0, 0, 2, 4]),
        ];
        for (op, [first, s0, s1, s2]) in forms {
            let f64 = op.name().ends_with("f64");
            let layout = if f64 { &F64 } else { &F32 };
            let special = if f64 { &SPECIAL64 } else { &SPECIAL32 };
            let (mut on_rows, mut declined) = (0, 0);
            for round in 0..300 {
                let mut inst = templates()[1];
                (inst.op, inst.dst) = (op, VGPR + 8);
                inst.src = [s0, s1, s2].map(|k| VGPR + k);
                inst.sdst = if round % 2 == 0 { VCC } else { 20 };
                let modified = round % 3 == 2;
                (inst.neg, inst.abs) = if modified {
                    (next(&mut r) as u8 & 7, next(&mut r) as u8 & 7)
                } else {
                    (0, 0)
                };
                let plan = inst_plan(&inst).unwrap_or_else(|| panic!("{}: no plan", op.name()));
                let lanes = matches!(plan, Plan::Lanes(_) | Plan::WideLanes(_));
                assert!(lanes, "{}: a lane plan", op.name());
                let exec = MASKS[round % MASKS.len()];
                let mode = ((round / MASKS.len()) % 4) as u32 * 0x50;
                let [mut a, mut b] = waves(&mut r, exec, mode);
                let sources = [first as usize, s1 as usize, s2 as usize];
                for row in sources {
                    for l in 0..LANES {
                        let x = ordinary(&mut r, layout, round % 7 == 0);
                        put(&mut a, row, f64, l, x);
                        put(&mut b, row, f64, l, x);
                    }
                }
                if round % 5 == 4 {
                    // Every lane's exponents at one edge of the unscaled range.
                    let [e1, e2] = edge(layout, round / 5);
                    for l in 0..LANES {
                        for (row, e) in [(s1 as usize, e1), (s2 as usize, e2)] {
                            let x = get(&a, row, f64, l) & !(layout.max << layout.shift);
                            put(&mut a, row, f64, l, x | e << layout.shift);
                            put(&mut b, row, f64, l, x | e << layout.shift);
                        }
                    }
                }
                if round % 4 == 1 {
                    let row = sources[next(&mut r) as usize % 3];
                    let l = next(&mut r) as usize % LANES;
                    let x = special[next(&mut r) as usize % special.len()];
                    put(&mut a, row, f64, l, x);
                    put(&mut b, row, f64, l, x);
                }
                let vcc = if round % 5 == 3 { next(&mut r) } else { 0 };
                a.set_sgpr64(VCC, vcc);
                b.set_sgpr64(VCC, vcc);
                if !modified {
                    let step = Step::of(op).expect("a division step");
                    let rows = [s0, s1, s2].map(|k| k as usize);
                    let ordinary =
                        layout.ordinary(step, vcc, exec, |l| rows.map(|row| get(&a, row, f64, l)));
                    if ordinary {
                        on_rows += 1;
                    } else {
                        declined += 1;
                    }
                }
                let what = format!(
                    "{} round {round} exec {exec:x}",
                    inst.disassemble(Target::Gfx942)
                );
                let waves = [&mut a, &mut b];
                planned_as_reference(&mut parts, &prog, &plan, &inst, waves, &what);
            }
            assert!(
                on_rows > 80 && declined > 5,
                "{}: {on_rows} on rows, {declined} declined",
                op.name()
            );
        }
    }
}
