//! Floating-point environment and the operations whose hardware behaviour differs from
//! plain IEEE arithmetic (denormal flushing, division helpers, class tests, min/max rules).

use half::f16;

/// Fused multiply-add with one NaN rule on every host path: a NaN result is the first NaN
/// operand (a, b, c) made quiet, or the canonical quiet NaN when no operand was a NaN (an
/// invalid operation). The host's own choice differs between a library `fma` and the FMA
/// instruction forms a compiler picks, so it is never left to them.
#[inline(always)]
pub(crate) fn fma32(a: f32, b: f32, c: f32) -> f32 {
    f32::from_bits(fma32_bits(a.to_bits(), b.to_bits(), c.to_bits()))
}

/// [`fma32`] on the bits, written without branches (every choice a select) so that lane loops
/// using it vectorise.
#[inline(always)]
pub(crate) fn fma32_bits(a: u32, b: u32, c: u32) -> u32 {
    let r = f32::from_bits(a)
        .mul_add(f32::from_bits(b), f32::from_bits(c))
        .to_bits();
    let nan = |x: u32| x & 0x7FFF_FFFF > 0x7F80_0000;
    let quiet = |x: u32| x | 0x0040_0000;
    let first = if nan(c) { quiet(c) } else { 0x7FC0_0000 };
    let first = if nan(b) { quiet(b) } else { first };
    let first = if nan(a) { quiet(a) } else { first };
    if nan(r) { first } else { r }
}

/// The NaN rule of the two-operand f32 operations (add, subtract, multiply), written on the
/// bits without branches: a NaN result is the first NaN source (src0, then src1) made quiet,
/// or the canonical quiet NaN when neither source was a NaN (an invalid operation). The host's
/// own choice depends on the operand order the compiler picks, so it is never left to it.
#[inline(always)]
pub(crate) fn nan_rule32(r: f32, src0: f32, src1: f32) -> f32 {
    let (r, a, b) = (r.to_bits(), src0.to_bits(), src1.to_bits());
    let nan = |x: u32| x & 0x7FFF_FFFF > 0x7F80_0000;
    let quiet = |x: u32| x | 0x0040_0000;
    let first = if nan(b) { quiet(b) } else { 0x7FC0_0000 };
    let first = if nan(a) { quiet(a) } else { first };
    f32::from_bits(if nan(r) { first } else { r })
}

/// The bits of a floating-point format that its NaN rule reads: the magnitude mask, the
/// infinity's bits and the quiet bit.
#[derive(Clone, Copy)]
pub(crate) struct NanBits {
    magnitude: u64,
    infinity: u64,
    quiet: u64,
}

pub(crate) const F16_NAN: NanBits = NanBits {
    magnitude: 0x7FFF,
    infinity: 0x7C00,
    quiet: 0x0200,
};
pub(crate) const F32_NAN: NanBits = NanBits {
    magnitude: 0x7FFF_FFFF,
    infinity: 0x7F80_0000,
    quiet: 0x0040_0000,
};
pub(crate) const F64_NAN: NanBits = NanBits {
    magnitude: 0x7FFF_FFFF_FFFF_FFFF,
    infinity: 0x7FF0_0000_0000_0000,
    quiet: 0x0008_0000_0000_0000,
};

impl NanBits {
    pub(crate) fn is_nan(self, x: u64) -> bool {
        x & self.magnitude > self.infinity
    }

    /// The NaN rule of the arithmetic operations in every format, as [`nan_rule32`] and
    /// [`fma32`] have it for f32: a NaN result `r` becomes the first NaN of `sources` (in
    /// operand order, as the operation read them) made quiet, or the canonical quiet NaN when
    /// no source was a NaN; any other result is kept.
    pub(crate) fn rule(self, r: u64, sources: &[u64]) -> u64 {
        if !self.is_nan(r) {
            return r;
        }
        match sources.iter().find(|&&x| self.is_nan(x)) {
            Some(&x) => x | self.quiet,
            None => self.infinity | self.quiet,
        }
    }
}

/// [`NanBits::rule`] for a two-operand f64 operation (add, multiply).
pub(crate) fn nan_rule64(r: f64, src0: f64, src1: f64) -> f64 {
    f64::from_bits(F64_NAN.rule(r.to_bits(), &[src0.to_bits(), src1.to_bits()]))
}

/// f64 fused multiply-add under [`NanBits::rule`].
pub(crate) fn fma64(a: f64, b: f64, c: f64) -> f64 {
    let r = a.mul_add(b, c).to_bits();
    f64::from_bits(F64_NAN.rule(r, &[a.to_bits(), b.to_bits(), c.to_bits()]))
}

/// [`NanBits::rule`] for an f16 result of the f16 sources `src`.
pub(crate) fn nan_rule16(r: f16, src: &[f16]) -> f16 {
    let bits: [u64; 3] = std::array::from_fn(|k| src.get(k).map_or(0, |x| x.to_bits().into()));
    f16::from_bits(F16_NAN.rule(r.to_bits().into(), &bits[..src.len()]) as u16)
}

/// The MODE bits that affect results (rounding is checked to be nearest-even before use).
#[derive(Clone, Copy)]
pub(crate) struct Env {
    pub keep_in32: bool,
    pub keep_out32: bool,
    pub keep_in64: bool,
    pub keep_out64: bool,
    pub dx10_clamp: bool,
    /// MODE.IEEE: min, max and median return a signalling NaN source quieted.
    pub ieee: bool,
}

impl Env {
    pub fn from_mode(mode: u32) -> Env {
        let d32 = (mode >> 4) & 3;
        let d64 = (mode >> 6) & 3;
        Env {
            keep_in32: d32 & 1 != 0,
            keep_out32: d32 & 2 != 0,
            keep_in64: d64 & 1 != 0,
            keep_out64: d64 & 2 != 0,
            dx10_clamp: (mode >> 8) & 1 != 0,
            ieee: (mode >> 9) & 1 != 0,
        }
    }

    pub fn in32(&self, x: f32) -> f32 {
        if !self.keep_in32 && x.is_subnormal() {
            f32::copysign(0.0, x)
        } else {
            x
        }
    }
    pub fn out32(&self, x: f32) -> f32 {
        if !self.keep_out32 && x.is_subnormal() {
            f32::copysign(0.0, x)
        } else {
            x
        }
    }
    pub fn in64(&self, x: f64) -> f64 {
        if !self.keep_in64 && x.is_subnormal() {
            f64::copysign(0.0, x)
        } else {
            x
        }
    }
    pub fn out64(&self, x: f64) -> f64 {
        if !self.keep_out64 && x.is_subnormal() {
            f64::copysign(0.0, x)
        } else {
            x
        }
    }
    pub fn in16(&self, x: f16) -> f16 {
        if !self.keep_in64 && sub16(x) {
            if x.is_sign_negative() {
                f16::NEG_ZERO
            } else {
                f16::ZERO
            }
        } else {
            x
        }
    }
    pub fn out16(&self, x: f16) -> f16 {
        if !self.keep_out64 && sub16(x) {
            if x.is_sign_negative() {
                f16::NEG_ZERO
            } else {
                f16::ZERO
            }
        } else {
            x
        }
    }
}

pub(crate) fn f(b: u64) -> f32 {
    f32::from_bits(b as u32)
}
pub(crate) fn d(b: u64) -> f64 {
    f64::from_bits(b)
}
pub(crate) fn h(b: u64) -> f16 {
    f16::from_bits(b as u16)
}

/// IEEE-mode minimum: a NaN operand yields the other; -0 < +0.
pub(crate) fn min32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return if b.is_nan() { f32::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        f32::from_bits(a.to_bits() | b.to_bits())
    } else if a < b {
        a
    } else {
        b
    }
}
pub(crate) fn max32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return if b.is_nan() { f32::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        f32::from_bits(a.to_bits() & b.to_bits())
    } else if a > b {
        a
    } else {
        b
    }
}
pub(crate) fn min64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        f64::from_bits(a.to_bits() | b.to_bits())
    } else if a < b {
        a
    } else {
        b
    }
}
pub(crate) fn max64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        f64::from_bits(a.to_bits() & b.to_bits())
    } else if a > b {
        a
    } else {
        b
    }
}

/// With MODE.IEEE (`ieee`), the first signalling NaN of a minimum's or maximum's sources (src0
/// first), quieted: the instruction's result then; `None` when there is none (a quiet NaN
/// source then gives the other source).
fn signalling(ieee: bool, nan: NanBits, sources: [u64; 2]) -> Option<u64> {
    let first = sources
        .into_iter()
        .find(|&x| nan.is_nan(x) && x & nan.quiet == 0);
    first.filter(|_| ieee).map(|x| x | nan.quiet)
}
fn signalling32(ieee: bool, a: f32, b: f32) -> Option<f32> {
    let sources = [a, b].map(|x| u64::from(x.to_bits()));
    signalling(ieee, F32_NAN, sources).map(|x| f32::from_bits(x as u32))
}
fn signalling64(ieee: bool, a: f64, b: f64) -> Option<f64> {
    signalling(ieee, F64_NAN, [a.to_bits(), b.to_bits()]).map(f64::from_bits)
}
fn signalling16(ieee: bool, a: f16, b: f16) -> Option<f16> {
    let sources = [a, b].map(|x| u64::from(x.to_bits()));
    signalling(ieee, F16_NAN, sources).map(|x| f16::from_bits(x as u16))
}

/// `v_min_f32` in MODE (`ieee`: MODE.IEEE).
pub(crate) fn min32_in(ieee: bool, a: f32, b: f32) -> f32 {
    signalling32(ieee, a, b).unwrap_or_else(|| min32(a, b))
}
/// `v_max_f32` in MODE.
pub(crate) fn max32_in(ieee: bool, a: f32, b: f32) -> f32 {
    signalling32(ieee, a, b).unwrap_or_else(|| max32(a, b))
}
/// `v_min_f64` in MODE.
pub(crate) fn min64_in(ieee: bool, a: f64, b: f64) -> f64 {
    signalling64(ieee, a, b).unwrap_or_else(|| min64(a, b))
}
/// `v_max_f64` in MODE.
pub(crate) fn max64_in(ieee: bool, a: f64, b: f64) -> f64 {
    signalling64(ieee, a, b).unwrap_or_else(|| max64(a, b))
}
/// `v_min_f16` in MODE (the signalling test made on the f16 bits).
pub(crate) fn min16_in(ieee: bool, a: f16, b: f16) -> f16 {
    signalling16(ieee, a, b).unwrap_or_else(|| f16::from_f32(min32(a.to_f32(), b.to_f32())))
}
/// `v_max_f16` in MODE.
pub(crate) fn max16_in(ieee: bool, a: f16, b: f16) -> f16 {
    signalling16(ieee, a, b).unwrap_or_else(|| f16::from_f32(max32(a.to_f32(), b.to_f32())))
}

/// `v_min3_f32` in MODE: two [`min32_in`] steps (a signalling src0 or src1 thus gives src2).
pub(crate) fn min3_32(ieee: bool, a: f32, b: f32, c: f32) -> f32 {
    min32_in(ieee, min32_in(ieee, a, b), c)
}
/// `v_max3_f32` in MODE, as [`min3_32`].
pub(crate) fn max3_32(ieee: bool, a: f32, b: f32, c: f32) -> f32 {
    max32_in(ieee, max32_in(ieee, a, b), c)
}

/// `v_med3_f32` in MODE: with a NaN source, the minimum of the three
/// (`v_min_f32(v_min_f32(a, b), c)`, as the ISA's pseudo-code has it); else the median.
pub(crate) fn med3_32(ieee: bool, a: f32, b: f32, c: f32) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return min3_32(ieee, a, b, c);
    }
    max32(min32(a, b), min32(max32(a, b), c))
}

/// `v_med3_f16` in MODE, as [`med3_32`].
pub(crate) fn med3_16(ieee: bool, a: f16, b: f16, c: f16) -> f16 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return min16_in(ieee, min16_in(ieee, a, b), c);
    }
    f16::from_f32(med3_32(ieee, a.to_f32(), b.to_f32(), c.to_f32()))
}

/// `v_cmp_class` mask bit of a value: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0,
/// 6 +0, 7 +denorm, 8 +normal, 9 +inf.
pub(crate) fn class_bit(
    is_nan: bool,
    quiet: bool,
    neg: bool,
    inf: bool,
    zero: bool,
    sub: bool,
) -> u32 {
    if is_nan {
        return if quiet { 1 } else { 0 };
    }
    let k = if inf {
        0
    } else if zero {
        3
    } else if sub {
        2
    } else {
        1
    };
    // negative: inf 2, normal 3, denorm 4, zero 5; positive mirrored: zero 6, denorm 7, normal 8, inf 9
    if neg {
        [2, 3, 4, 5][k]
    } else {
        [9, 8, 7, 6][k]
    }
}

pub(crate) fn class32(x: f32, mask: u32) -> bool {
    let quiet = x.to_bits() & 0x0040_0000 != 0;
    let bit = class_bit(
        x.is_nan(),
        quiet,
        x.is_sign_negative(),
        x.is_infinite(),
        x == 0.0,
        x.is_subnormal(),
    );
    (mask >> bit) & 1 != 0
}

pub(crate) fn class64(x: f64, mask: u32) -> bool {
    let quiet = x.to_bits() & 0x0008_0000_0000_0000 != 0;
    let bit = class_bit(
        x.is_nan(),
        quiet,
        x.is_sign_negative(),
        x.is_infinite(),
        x == 0.0,
        x.is_subnormal(),
    );
    (mask >> bit) & 1 != 0
}

pub(crate) fn class16(x: f16, mask: u32) -> bool {
    let quiet = x.to_bits() & 0x0200 != 0;
    let bit = class_bit(
        x.is_nan(),
        quiet,
        x.is_sign_negative(),
        x.is_infinite(),
        x.to_bits() & 0x7FFF == 0,
        sub16(x),
    );
    (mask >> bit) & 1 != 0
}

/// 2^n exactly, `n` within the normal f64 exponents (-1022..=1023): the bits built directly
/// (`powi` is a library loop of multiplications per call).
#[inline(always)]
fn pow2(n: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// `x * 2^n` with one rounding (f32).
pub(crate) fn ldexp32(x: f32, n: i32) -> f32 {
    let n = n.clamp(-400, 400);
    // f64 holds every f32 times any power of two in this range exactly.
    ((x as f64) * pow2(n)) as f32
}

/// `x * 2^n` with one rounding (f64), for the exponent range kernels use.
pub(crate) fn ldexp64(x: f64, n: i32) -> f64 {
    let mut x = x;
    let mut n = n.clamp(-2200, 2200);
    while n > 1000 {
        x *= pow2(1000);
        n -= 1000;
    }
    while n < -1000 {
        x *= pow2(-1000);
        n += 1000;
    }
    x * pow2(n)
}

/// Integer rounding of f64 and f32 lanes, inline: without SSE4.1 at compile time the standard
/// `round_ties_even`, `trunc`, `floor` and `ceil` are a library call per lane. Below
/// [`Rounded::WHOLE`] in magnitude a value can have a fractional part; larger values,
/// infinities and NaNs are kept as they are (a NaN result then takes the caller's NaN rule).
pub(crate) trait Rounded:
    Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self>
{
    /// 2^52 (f64) or 2^23 (f32): from this magnitude on every value is an integer.
    const WHOLE: Self;
    const ONE: Self;
    fn magnitude(self) -> Self;
    fn with_sign_of(self, x: Self) -> Self;
    /// Toward zero through the integer conversion (exact below [`Rounded::WHOLE`]).
    fn truncated(self) -> Self;

    /// Rounded to an integer, ties to even: adding and subtracting [`Rounded::WHOLE`] with the
    /// value's sign rounds in the host's round-to-nearest-even mode, which the emulator's
    /// threads run in.
    fn round_even(self) -> Self {
        if self.magnitude() < Self::WHOLE {
            let t = Self::WHOLE.with_sign_of(self);
            ((self + t) - t).with_sign_of(self)
        } else {
            self
        }
    }

    /// Rounded toward zero.
    fn trunc(self) -> Self {
        if self.magnitude() < Self::WHOLE {
            self.truncated().with_sign_of(self)
        } else {
            self
        }
    }

    /// Rounded toward negative infinity.
    fn floor(self) -> Self {
        let t = Rounded::trunc(self);
        if t > self { t - Self::ONE } else { t }
    }

    /// Rounded toward positive infinity.
    fn ceil(self) -> Self {
        let t = Rounded::trunc(self);
        if t < self { t + Self::ONE } else { t }
    }
}

/// [`Rounded`] for a float type: `whole` its [`Rounded::WHOLE`], `int` the signed integer as
/// wide as it.
macro_rules! rounded {
    ($t:ty, $whole:expr, $int:ty) => {
        impl Rounded for $t {
            const WHOLE: $t = $whole;
            const ONE: $t = 1.0;
            fn magnitude(self) -> $t {
                self.abs()
            }
            fn with_sign_of(self, x: $t) -> $t {
                self.copysign(x)
            }
            fn truncated(self) -> $t {
                self as $int as $t
            }
        }
    };
}

rounded!(f64, (1u64 << 52) as f64, i64);
rounded!(f32, (1u32 << 23) as f32, i32);

fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}
fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// `v_div_scale_f32`: (result, vcc). `s1` is the denominator, `s2` the numerator and `s0`
/// the one of them to scale, so that the compiler's division sequence (reciprocal, Newton
/// steps, `v_div_fmas` undoing the scale where VCC says so, `v_div_fixup`) never leaves the
/// normal range on the way.
///
/// The ISA tests the denominator's reciprocal for a denormal in f64, where the reciprocal of a
/// finite f32 never is one (a denormal in these tests is any magnitude below the smallest
/// normal, zero included): a huge f32 denominator takes the tiny-quotient path (the numerator
/// scaled up, the result scaled down by `v_div_fmas`). Tested in f32 instead, `1 / 3e38`
/// scaled the denominator to infinity and the division gave NaN.
pub(crate) fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    if s0.is_nan() || s1.is_nan() || s2.is_nan() || s1.is_infinite() || s2.is_infinite() {
        return (s0, false);
    }
    let (e1, e2) = (exp32(s1), exp32(s2));
    // "Denormal" here is a magnitude below the format's smallest normal (zero included: a
    // quotient too small for any denormal takes the same path).
    let q_tiny = ((s2 as f64) / (s1 as f64)).abs() < f32::MIN_POSITIVE as f64;
    let r_tiny = (1.0 / s1 as f64).abs() < f64::MIN_POSITIVE;
    if e2 - e1 >= 96 {
        (if s0 == s1 { ldexp32(s0, 64) } else { s0 }, true)
    } else if s1.is_subnormal() {
        (ldexp32(s0, 64), false)
    } else if r_tiny && q_tiny {
        // Never taken (see above); the denominator would be scaled down, as for f64.
        (if s0 == s1 { ldexp32(s0, -64) } else { s0 }, true)
    } else if r_tiny {
        (ldexp32(s0, -64), false)
    } else if q_tiny {
        (if s0 == s2 { ldexp32(s0, 64) } else { s0 }, true)
    } else if e2 <= 23 {
        (ldexp32(s0, 64), false)
    } else {
        (s0, false)
    }
}

/// `v_div_scale_f64`: (result, vcc), as [`div_scale32`]. When both the denominator's
/// reciprocal and the quotient are denormal, the denominator is scaled down (its reciprocal
/// becomes normal) and `v_div_fmas` scales the quotient back down: the ISA text's "scale up"
/// there would overflow the denominator to infinity and the division would give NaN.
pub(crate) fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    if s0.is_nan() || s1.is_nan() || s2.is_nan() || s1.is_infinite() || s2.is_infinite() {
        return (s0, false);
    }
    let (e1, e2) = (exp64(s1), exp64(s2));
    let q_tiny = (s2 / s1).abs() < f64::MIN_POSITIVE;
    let r_tiny = (1.0 / s1).abs() < f64::MIN_POSITIVE;
    if e2 - e1 >= 768 {
        (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true)
    } else if s1.is_subnormal() {
        (ldexp64(s0, 128), false)
    } else if r_tiny && q_tiny {
        (if s0 == s1 { ldexp64(s0, -128) } else { s0 }, true)
    } else if r_tiny {
        (ldexp64(s0, -128), false)
    } else if q_tiny {
        (if s0 == s2 { ldexp64(s0, 128) } else { s0 }, true)
    } else if e2 <= 53 {
        (ldexp64(s0, 128), false)
    } else {
        (s0, false)
    }
}

/// `v_div_fmas_f32`: with VCC, the fused multiply-add scaled back by 2^64 or 2^-64 (the
/// scale `v_div_scale` applied), with one rounding.
pub(crate) fn div_fmas32(a: f32, b: f32, c: f32, vcc: bool) -> f32 {
    if !vcc {
        return a.mul_add(b, c);
    }
    let scale = if exp32(c) >= 127 { 64 } else { -64 };
    fma_scaled(a as f64, b as f64, c as f64, scale, F32_FORMAT) as f32
}

/// `v_div_fmas_f64`, as [`div_fmas32`] with 2^128 or 2^-128.
pub(crate) fn div_fmas64(a: f64, b: f64, c: f64, vcc: bool) -> f64 {
    if !vcc {
        return a.mul_add(b, c);
    }
    let scale = if exp64(c) >= 1023 { 128 } else { -128 };
    fma_scaled(a, b, c, scale, F64_FORMAT)
}

/// A binary floating-point format: significand bits (with the implicit one) and the exponent
/// of its smallest normal number.
#[derive(Clone, Copy)]
struct Format {
    bits: u32,
    min_exp: i32,
}

const F32_FORMAT: Format = Format {
    bits: 24,
    min_exp: -126,
};
const F64_FORMAT: Format = Format {
    bits: 53,
    min_exp: -1022,
};

/// `(a * b + c) * 2^scale` rounded once, to nearest even, into `format` (denormal results
/// included): rounding the fused result first and scaling it after rounds twice where the
/// scaled result is denormal (a quotient in the denormal range came out one unit off).
/// Operands of `format` given as f64.
fn fma_scaled(a: f64, b: f64, c: f64, scale: i32, format: Format) -> f64 {
    if !(a.is_finite() && b.is_finite() && c.is_finite()) || a * b == 0.0 && c == 0.0 {
        return ldexp64(a.mul_add(b, c), scale);
    }
    // Each value as a signed integer times a power of two.
    let parts = |x: f64| -> (i128, i32) {
        if x == 0.0 {
            return (0, 0);
        }
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7FF) as i32;
        let m = bits & ((1 << 52) - 1);
        let (m, e) = if e == 0 {
            (m, -1074)
        } else {
            (m | 1 << 52, e - 1075)
        };
        (if x < 0.0 { -(m as i128) } else { m as i128 }, e)
    };
    let ((ma, ea), (mb, eb), (mc, ec)) = (parts(a), parts(b), parts(c));
    let (mp, ep) = (ma * mb, ea + eb);
    // Align both terms at the lower exponent, keeping at most 122 bits; a term lying wholly
    // below the other's last bit counts only by its sign (a sticky unit of the sum).
    let align = |(m, e): (i128, i32), to: i32| -> i128 {
        let shift = e - to;
        if m == 0 || shift <= 0 { m } else { m << shift }
    };
    let (hi, lo) = if mp == 0 || (mc != 0 && ec > ep) {
        ((mc, ec), (mp, ep))
    } else {
        ((mp, ep), (mc, ec))
    };
    let width = 128 - hi.0.unsigned_abs().leading_zeros() as i32;
    let base = if lo.0 == 0 {
        hi.1
    } else {
        lo.1.max(hi.1 + width - 122)
    } - 2;
    let low = if lo.0 == 0 {
        0
    } else if lo.1 + 128 - (lo.0.unsigned_abs().leading_zeros() as i32) <= base {
        lo.0.signum()
    } else if lo.1 >= base {
        align(lo, base)
    } else {
        // Partly below `base`: drop the low bits, keeping a sticky unit.
        let shift = (base - lo.1) as u32;
        let m = lo.0.unsigned_abs();
        let kept = (m >> shift) as i128 | ((m & ((1 << shift) - 1) != 0) as i128);
        kept * lo.0.signum()
    };
    let sum = align(hi, base) + low;
    round_scaled(sum, base + scale, format)
}

/// `m * 2^e` rounded to nearest even into `format`, as f64 (infinity past the largest value).
fn round_scaled(m: i128, e: i32, format: Format) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let mag = m.unsigned_abs();
    let width = 128 - mag.leading_zeros() as i32;
    // The exponent of the leading bit, and how many bits the result keeps.
    let lead = e + width - 1;
    let keep = if lead >= format.min_exp {
        format.bits as i32
    } else {
        format.bits as i32 - (format.min_exp - lead)
    };
    let drop = width - keep.max(0);
    let (mut q, mut qe) = (mag, e);
    if drop > 0 {
        let d = drop as u32;
        let rest = if d >= 128 {
            mag
        } else {
            mag & ((1u128 << d) - 1)
        };
        let half = 1u128 << (d - 1).min(127);
        q = if d >= 128 { 0 } else { mag >> d };
        if rest > half || (rest == half && q & 1 == 1) {
            q += 1;
        }
        qe = e + drop;
    }
    // q has at most `bits` + 1 bits: exact in f64, scaled by a power of two in range.
    let r = ldexp64(q as f64, qe);
    if m < 0 { -r } else { r }
}

/// `v_div_fixup_f32(q, den, num)`.
pub(crate) fn div_fixup32(q: f32, den: f32, num: f32) -> f32 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let sign = |x: f32| if neg { -x.abs() } else { x.abs() };
    if num.is_nan() {
        return quiet32(num);
    }
    if den.is_nan() {
        return quiet32(den);
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f32::from_bits(0xFFC0_0000);
    }
    if den == 0.0 || num.is_infinite() {
        return sign(f32::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return sign(0.0);
    }
    if q.is_nan() {
        // Ordinary operands whose scaled quotient overflowed inside the sequence (the Newton
        // step met an infinity): the quotient is an overflow.
        return sign(f32::INFINITY);
    }
    sign(q)
}

/// `v_div_fixup_f64(q, den, num)`.
pub(crate) fn div_fixup64(q: f64, den: f64, num: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let sign = |x: f64| if neg { -x.abs() } else { x.abs() };
    if num.is_nan() {
        return quiet64(num);
    }
    if den.is_nan() {
        return quiet64(den);
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f64::from_bits(0xFFF8_0000_0000_0000);
    }
    if den == 0.0 || num.is_infinite() {
        return sign(f64::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return sign(0.0);
    }
    if q.is_nan() {
        // Ordinary operands whose scaled quotient overflowed inside the sequence (the Newton
        // step met an infinity): the quotient is an overflow.
        return sign(f64::INFINITY);
    }
    sign(q)
}

pub(crate) fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}
pub(crate) fn quiet64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
}

/// The fraction of 2/pi, most significant bits first (2/pi = 0.a2f9836e... in hexadecimal):
/// 37 words, as far as `v_trig_preop_f64` reaches before it returns zero. Generated from an
/// independent high-precision evaluation of 2/pi; the test of `v_trig_preop_f64` recomputes
/// segments from the digits of pi.
const TWO_OVER_PI: [u32; 37] = [
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046,
];

/// `v_trig_preop_f64(x, segment)`: the 53 bits of 2/pi that start `53 * segment` bits after
/// the binary point (further on by the amount a large `x`'s exponent exceeds 1077, so that the
/// product with `x` keeps its leading bits), as a value scaled back to its place in 2/pi (scaled
/// up by 2^128 for the largest `x`). The ocml double sin/cos reduce large arguments with the
/// sum of these pieces. As LLVM folds it: a NaN source gives its quieted NaN, and a segment
/// past the table gives +0.
pub(crate) fn trig_preop64(x: f64, segment: u32) -> f64 {
    if x.is_nan() {
        return quiet64(x);
    }
    let exponent = ((x.to_bits() >> 52) & 0x7FF) as u32;
    let mut shift = (segment & 31) * 53;
    if exponent > 1077 {
        shift += exponent - 1077;
    }
    let word = (shift / 32) as usize;
    if word + 2 >= TWO_OVER_PI.len() {
        return 0.0;
    }
    // Three words hold the 53 bits from `shift` on (at most 31 + 53 bits into them).
    let window = (TWO_OVER_PI[word] as u128) << 64
        | (TWO_OVER_PI[word + 1] as u128) << 32
        | TWO_OVER_PI[word + 2] as u128;
    let bits = (window << (shift % 32) >> (96 - 53)) as u64 & ((1u64 << 53) - 1);
    let mut scale = -53 - shift as i32;
    if exponent >= 1968 {
        scale += 128;
    }
    ldexp64(bits as f64, scale)
}

/// The cube-map face selection of `v_cubeid_f32`, `v_cubesc_f32`, `v_cubetc_f32` and
/// `v_cubema_f32` for the direction (x, y, z): (face id, s coordinate, t coordinate, major
/// axis). The largest magnitude picks the axis (z before y before x on ties); a NaN compares
/// false and so falls through to x. LLVM's constant folding of the four intrinsics agrees.
pub(crate) fn cube(x: f32, y: f32, z: f32) -> (f32, f32, f32, f32) {
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        if z < 0.0 {
            (5.0, -x, -y, z)
        } else {
            (4.0, x, -y, z)
        }
    } else if y.abs() >= x.abs() {
        if y < 0.0 {
            (3.0, x, -z, y)
        } else {
            (2.0, x, z, y)
        }
    } else if x < 0.0 {
        (1.0, z, -y, x)
    } else {
        (0.0, -z, -y, x)
    }
}

/// f64 -> f16 rounded once, to nearest even. (`half`'s `f16::from_f64` goes through f32 on a
/// CPU with F16C and so rounds twice: a fused multiply-add of f16 values just off an f16
/// midpoint lands on it in f32 and then rounds to even, the wrong way.)
pub(crate) fn f16_of_f64(x: f64) -> f16 {
    f16::from_f32(f32_round_to_odd(x))
}

/// `x` rounded to f32 toward zero, with the lowest bit set when that was inexact (rounding to
/// odd): rounding that to a format at least two bits narrower (f16) is then one rounding of `x`.
pub(crate) fn f32_round_to_odd(x: f64) -> f32 {
    if x.is_nan() {
        return x as f32;
    }
    let mut f = x as f32;
    if (f as f64).abs() > x.abs() {
        f = f32::from_bits(f.to_bits() - 1);
    }
    if f as f64 != x {
        f = f32::from_bits(f.to_bits() | 1);
    }
    f
}

/// f32 -> f16 rounding toward zero (`v_cvt_pkrtz_f16_f32`).
pub(crate) fn f16_rtz(x: f32) -> f16 {
    if x.is_nan() {
        return f16::from_f32(x);
    }
    let h = f16::from_f32(x);
    if x.is_infinite() {
        return h;
    }
    let back = h.to_f32();
    if back.abs() > x.abs() {
        // Step one unit toward zero (also turns an overflow to inf into the largest finite).
        f16::from_bits(h.to_bits() - 1)
    } else {
        h
    }
}

/// `v_frexp_mant_f32`.
pub(crate) fn frexp_mant32(x: f32) -> f32 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return x;
    }
    let (m, _) = frexp64(x as f64);
    m as f32
}

/// `v_frexp_exp_i32_f32`.
pub(crate) fn frexp_exp32(x: f32) -> i32 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return 0;
    }
    frexp64(x as f64).1
}

/// (mantissa in [0.5, 1), exponent) of a finite non-zero value.
pub(crate) fn frexp64(x: f64) -> (f64, i32) {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return (x, 0);
    }
    let (x, adj) = if x.is_subnormal() {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7FF) as i32 - 1022;
    let m = f64::from_bits((bits & !(0x7FF << 52)) | (1022u64 << 52));
    (m, e + adj)
}

fn sub16(x: f16) -> bool {
    x.to_bits() & 0x7C00 == 0 && x.to_bits() & 0x3FF != 0
}

/// Error-free sum: `a + b == s + e` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Round the exact value `x + err` (|err| tiny against x) to f32 in direction `mode`
/// (1 toward +inf, 2 toward -inf, 3 toward zero).
fn round_f32(x: f64, err: f64, mode: u32) -> f32 {
    if x.is_nan() {
        return x as f32;
    }
    let r = x as f32;
    if r.is_infinite() && x.is_finite() {
        // Overflow: directions toward zero give the largest finite value.
        let up = x > 0.0;
        return match (mode, up) {
            (1, true) | (2, false) => r,
            _ => f32::MAX.copysign(r),
        };
    }
    if r.is_infinite() {
        return r;
    }
    let diff = (x - r as f64) + err;
    let up = |v: f32| {
        if v == 0.0 {
            f32::from_bits(1)
        } else if v > 0.0 {
            f32::from_bits(v.to_bits() + 1)
        } else {
            f32::from_bits(v.to_bits() - 1)
        }
    };
    let down = |v: f32| {
        if v == 0.0 {
            -f32::from_bits(1)
        } else if v > 0.0 {
            f32::from_bits(v.to_bits() - 1)
        } else {
            f32::from_bits(v.to_bits() + 1)
        }
    };
    match mode {
        1 if diff > 0.0 => up(r),
        2 if diff < 0.0 => down(r),
        3 if diff < 0.0 && r > 0.0 => down(r),
        3 if diff > 0.0 && r < 0.0 => up(r),
        3 if r == 0.0 && diff != 0.0 => 0.0f32.copysign(diff as f32),
        _ => {
            if r == 0.0 && diff != 0.0 {
                // A tiny nonzero result that rounded to zero keeps its sign.
                0.0f32.copysign(diff as f32)
            } else {
                r
            }
        }
    }
}

/// f32 addition rounded in direction `mode`.
pub(crate) fn add_directed(a: f32, b: f32, mode: u32) -> f32 {
    if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
        return a + b;
    }
    let (s, e) = two_sum(a as f64, b as f64);
    if s == 0.0 && e == 0.0 {
        // Exact zero: -0 toward -inf unless both operands are +0 ... (IEEE 754 6.3).
        return if a == 0.0 && b == 0.0 && a.is_sign_negative() == b.is_sign_negative() {
            a
        } else if mode == 2 {
            -0.0
        } else {
            0.0
        };
    }
    round_f32(s, e, mode)
}

/// f32 multiplication rounded in direction `mode` (the product is exact in f64).
pub(crate) fn mul_directed(a: f32, b: f32, mode: u32) -> f32 {
    let p = a as f64 * b as f64;
    if !p.is_finite() || p == 0.0 {
        return a * b;
    }
    round_f32(p, 0.0, mode)
}

/// f32 fused multiply-add rounded in direction `mode`.
pub(crate) fn fma_directed(a: f32, b: f32, c: f32, mode: u32) -> f32 {
    let p = a as f64 * b as f64;
    if !p.is_finite() || !c.is_finite() {
        return a.mul_add(b, c);
    }
    if p == 0.0 {
        return add_directed(if p.is_sign_negative() { -0.0 } else { 0.0 }, c, mode);
    }
    let (s, e) = two_sum(p, c as f64);
    if s == 0.0 && e == 0.0 {
        return if mode == 2 { -0.0 } else { 0.0 };
    }
    round_f32(s, e, mode)
}

/// An 8-bit float of gfx942 (the "FNUZ" formats: no infinities, no negative zero, the one NaN
/// 0x80) with `mantissa` bits and exponent `bias`: fp8 is E4M3 with bias 8, bf8 E5M2 with bias
/// 16. Every value is exact in f32.
fn fnuz8(byte: u8, mantissa: u32, bias: i32) -> f32 {
    if byte == 0x80 {
        return f32::NAN;
    }
    let exponent = i32::from(byte & 0x7F) >> mantissa;
    let fraction = i32::from(byte) & ((1 << mantissa) - 1);
    let (significand, scale) = if exponent == 0 {
        (fraction, 1 - bias - mantissa as i32)
    } else {
        (fraction | 1 << mantissa, exponent - bias - mantissa as i32)
    };
    let magnitude = significand as f32 * 2f32.powi(scale);
    if byte & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// `x` in one of gfx942's FNUZ 8-bit formats (`mantissa` bits, exponent `bias`), rounded to
/// nearest even. The formats have no infinities, no negative zero and one NaN (0x80): a NaN
/// gives 0x80, and so do an infinity and a finite value that rounds past the largest finite
/// one, unless `saturate` (the clamp bit) holds it at the largest finite value of its sign; a
/// value that rounds to zero gives +0.
pub(crate) fn to_fnuz8(x: f32, mantissa: u32, bias: i32, saturate: bool) -> u8 {
    const NAN: u8 = 0x80;
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    // The largest finite value: every exponent and mantissa bit set.
    let max_field: i32 = 0x7F >> mantissa;
    let largest = (2.0 - 2f64.powi(-(mantissa as i32))) * 2f64.powi(max_field - bias);
    let largest_code = sign | 0x7F;
    if x.is_nan() {
        return NAN;
    }
    if x.is_infinite() {
        return if saturate { largest_code } else { NAN };
    }
    let a = (x as f64).abs();
    if a == 0.0 {
        return 0;
    }
    // The spacing of the representable values around `a` (the subnormal spacing below the
    // least normal exponent).
    let (_, e) = frexp64(a);
    let exponent = (e - 1).max(1 - bias);
    let quantum = 2f64.powi(exponent - mantissa as i32);
    let r = (a / quantum).round_ties_even() * quantum;
    if r > largest {
        return if saturate { largest_code } else { NAN };
    }
    if r == 0.0 {
        return 0;
    }
    let (_, e) = frexp64(r);
    let code = if e - 1 < 1 - bias {
        (r / 2f64.powi(1 - bias - mantissa as i32)) as u32
    } else {
        let field = (e - 1 + bias) as u32;
        let fraction = (r / 2f64.powi(e - 1 - mantissa as i32)) as u32 - (1 << mantissa);
        field << mantissa | fraction
    };
    sign | code as u8
}

/// gfx942's fp8 (E4M3, bias 8) as f32.
pub(crate) fn fp8(byte: u8) -> f32 {
    fnuz8(byte, 3, 8)
}

/// gfx942's bf8 (E5M2, bias 16) as f32.
pub(crate) fn bf8(byte: u8) -> f32 {
    fnuz8(byte, 2, 16)
}

#[cfg(test)]
mod tests {
    use super::{
        F16_NAN, F32_NAN, F64_NAN, Rounded, fma64, ldexp32, ldexp64, nan_rule16, nan_rule32,
        nan_rule64,
    };
    use half::f16;

    /// One NaN rule in every format: the first NaN source made quiet (its sign and payload
    /// kept), else the positive canonical quiet NaN; results that are not NaNs kept.
    #[test]
    fn nan_rule_picks_the_first_nan_source_in_every_format() {
        let inf = f64::INFINITY;
        let signalling = f64::from_bits(0xFFF0_0000_0000_0005);
        assert_eq!(
            nan_rule64(inf - inf, inf, inf).to_bits(),
            0x7FF8_0000_0000_0000
        );
        assert_eq!(
            nan_rule64(1.0 + signalling, 1.0, signalling).to_bits(),
            0xFFF8_0000_0000_0005
        );
        assert_eq!(fma64(0.0, inf, signalling).to_bits(), 0xFFF8_0000_0000_0005);
        assert_eq!(fma64(0.0, inf, 1.0).to_bits(), 0x7FF8_0000_0000_0000);
        assert_eq!(nan_rule64(2.0, 1.0, 1.0), 2.0);
        let first = f32::from_bits(0x7F80_0001);
        let second = f32::from_bits(0xFFC0_0002);
        assert_eq!(
            nan_rule32(first + second, first, second).to_bits(),
            0x7FC0_0001
        );
        assert_eq!(
            F32_NAN.rule(0xFFC0_0000, &[0x3F80_0000, 0xFF80_0007]),
            0xFFC0_0007
        );
        let (h_inf, h_nan) = (f16::INFINITY, f16::from_bits(0xFD01));
        let r = f16::from_f32(h_inf.to_f32() - h_inf.to_f32());
        assert_eq!(nan_rule16(r, &[h_inf, h_inf]).to_bits(), 0x7E00);
        assert_eq!(nan_rule16(r, &[f16::ONE, h_nan]).to_bits(), 0xFF01);
        assert!(F16_NAN.is_nan(0x7C01) && !F16_NAN.is_nan(0x7C00));
        assert!(F64_NAN.is_nan(0x7FF0_0000_0000_0001) && !F64_NAN.is_nan(0xFFF0_0000_0000_0000));
    }

    /// f64 -> f16 to nearest even, worked on the integer significand: the reference for
    /// [`f16_of_f64`](super::f16_of_f64) (not for NaNs).
    fn f16_by_bits(x: f64) -> u16 {
        let b = x.to_bits();
        let sign = ((b >> 48) & 0x8000) as u16;
        let exp = ((b >> 52) & 0x7FF) as i32;
        if exp == 0x7FF {
            return sign | 0x7C00;
        }
        if exp == 0 {
            // f64 denormals lie far below half the least f16 denormal.
            return sign;
        }
        // x = m * 2^e; the f16 last place is 2^unit: 11 significant bits, units of 2^-24 at
        // the least.
        let m = (b & ((1 << 52) - 1)) | (1 << 52);
        let e = exp - 1075;
        let unit = (e + 52).max(-14) - 10;
        let shift = unit - e;
        if shift > 60 {
            return sign;
        }
        let (q, rest) = (m >> shift, m & ((1u64 << shift) - 1));
        let half = 1u64 << (shift - 1);
        let q = q + u64::from(rest > half || (rest == half && q & 1 == 1));
        // q units of 2^unit as f16 fields; a carry into the next binade (or to infinity) is
        // one more exponent.
        let bits = (((unit + 24) as u64) << 10) + q;
        sign | bits.min(0x7C00) as u16
    }

    #[test]
    fn f64_to_f16_rounds_once() {
        use super::f16_of_f64;
        // Just below the midpoint of 0x7601 and 0x7602: f32 rounds it onto the midpoint.
        let x = 24599.9990234375;
        assert_eq!(f16_of_f64(x).to_bits(), 0x7601);
        assert_eq!(f16_by_bits(x), 0x7601);
        let mut r = 0x5EED_0F16_u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        for _ in 0..200_000 {
            let n = next();
            // An f16 value's midpoint with the next one up in magnitude, nudged by a few f64
            // places (some of them lost in f32).
            let h = half::f16::from_bits((n & 0xFBFE) as u16);
            let up = half::f16::from_bits(h.to_bits() + 1).to_f64();
            let mid = (h.to_f64() + up) / 2.0;
            let nudge = ((n >> 20) % 7) as i64 - 3;
            let x = f64::from_bits(
                (mid.to_bits() as i64 + nudge * ((n >> 30) as i64 & 0x3FFF_FFFF)) as u64,
            );
            assert_eq!(
                f16_of_f64(x).to_bits(),
                f16_by_bits(x),
                "{x:e} ({:#x})",
                x.to_bits()
            );
            let y = f64::from_bits(next());
            if y.is_nan() {
                continue;
            }
            assert_eq!(
                f16_of_f64(y).to_bits(),
                f16_by_bits(y),
                "{y:e} ({:#x})",
                y.to_bits()
            );
        }
    }

    use super::*;

    /// The division sequence the compiler emits, with correctly rounded reciprocals.
    fn divide32(n: f32, d: f32) -> f32 {
        let (ns, vcc) = div_scale32(n, d, n);
        let (ds, _) = div_scale32(d, d, n);
        let r = 1.0 / ds;
        let e = (-ds).mul_add(r, 1.0);
        let r = e.mul_add(r, r);
        let q = ns * r;
        let e = (-ds).mul_add(q, ns);
        let q = e.mul_add(r, q);
        let e = (-ds).mul_add(q, ns);
        let q = div_fmas32(e, r, q, vcc);
        div_fixup32(q, d, n)
    }

    /// The f64 division sequence the compiler emits, with correctly rounded reciprocals.
    fn divide64(n: f64, d: f64) -> f64 {
        let (ds, _) = div_scale64(d, d, n);
        let r = 1.0 / ds;
        let e = (-ds).mul_add(r, 1.0);
        let r = r.mul_add(e, r);
        let e = (-ds).mul_add(r, 1.0);
        let (ns, vcc) = div_scale64(n, d, n);
        let r = r.mul_add(e, r);
        let q = ns * r;
        let e = (-ds).mul_add(q, ns);
        let q = div_fmas64(e, r, q, vcc);
        div_fixup64(q, d, n)
    }

    /// Both division sequences give the correctly rounded quotient over operands spread across
    /// the whole exponent range, denormals and the largest values included (a huge denominator
    /// once gave NaN: `1 / 3e38`).
    #[test]
    fn division_sequences_are_correctly_rounded_over_the_exponent_range() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let edges32 = [
            3e38f32,
            f32::MAX,
            1.0,
            1e-40,
            f32::MIN_POSITIVE,
            1.5e38,
            2.0,
        ];
        let edges64 = [
            1.5 * 2f64.powi(1022),
            f64::MAX,
            1.0,
            1e-310,
            f64::MIN_POSITIVE,
            1e300,
        ];
        for k in 0..200_000 {
            let (n, d) = match k {
                0..=48 => (edges32[k % 7], edges32[k / 7]),
                _ => (f32::from_bits(next() as u32), f32::from_bits(next() as u32)),
            };
            let want = n / d;
            let got = divide32(n, d);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{n:e}/{d:e}: {got:e} vs {want:e}"
            );
            let (n, d) = match k {
                0..=35 => (edges64[k % 6], edges64[k / 6]),
                _ => (f64::from_bits(next()), f64::from_bits(next())),
            };
            let want = n / d;
            let got = divide64(n, d);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{n:e}/{d:e}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn division_sequence_is_correctly_rounded_at_the_edges() {
        let cases = [
            (1.0f32, 3.0f32),
            (1e-38, 1e10),
            (3e38, 1e-3),
            (1e-40, 3.0),
            (-5.0, 1e-41),
            (f32::MAX, 0.5),
            (f32::MIN_POSITIVE, 3.0),
            (7.0, f32::INFINITY),
            (0.0, 0.0),
        ];
        for (n, d) in cases {
            let want = n / d;
            let got = divide32(n, d);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{n}/{d}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn class_bits_follow_the_hardware_order() {
        assert!(class32(f32::NEG_INFINITY, 1 << 2));
        assert!(class32(-1.0, 1 << 3));
        assert!(class32(-1e-40, 1 << 4));
        assert!(class32(-0.0, 1 << 5));
        assert!(class32(0.0, 1 << 6));
        assert!(class32(1e-40, 1 << 7));
        assert!(class32(1.0, 1 << 8));
        assert!(class32(f32::INFINITY, 1 << 9));
        assert!(class32(f32::NAN, 1 << 1));
        assert!(!class32(1.0, !(1 << 8)));
    }

    #[test]
    fn ieee_min_max_and_flushing() {
        assert_eq!(max32(f32::NAN, 2.0), 2.0);
        assert_eq!(min32(1.0, f32::NAN), 1.0);
        assert!(max32(-0.0, 0.0).is_sign_positive());
        assert!(min32(-0.0, 0.0).is_sign_negative());
        let flush = Env::from_mode(0);
        assert_eq!(flush.in32(1e-40).to_bits(), 0);
        assert_eq!(flush.out32(-1e-40).to_bits(), 0x8000_0000);
        let keep = Env::from_mode(0xF0);
        assert_eq!(keep.in32(1e-40), 1e-40);
    }

    #[test]
    fn rtz_conversion_to_half() {
        assert_eq!(f16_rtz(1.0).to_f32(), 1.0);
        // 1 + 2^-11 + tiny rounds to nearest up, toward zero down.
        let x = 1.0 + 2f32.powi(-11) + 2f32.powi(-20);
        assert_eq!(f16::from_f32(x).to_bits(), 0x3C01);
        assert_eq!(f16_rtz(x).to_bits(), 0x3C00);
        assert_eq!(f16_rtz(1e6).to_bits(), 0x7BFF);
    }

    /// The inline power of two and integer roundings give the library's results bit for bit
    /// (any NaN for a NaN: the callers' NaN rule decides its bits): every exponent the clamps
    /// let through, and values at and around the rounding ties, signed zeros, subnormals, the
    /// largest finite values, infinities and NaNs.
    #[test]
    fn inline_scaling_and_rounding_match_the_library() {
        let ties = [
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4503599627370495.5,
            9007199254740993.0,
        ];
        let edges = [
            0.0,
            3.0,
            1.0 / 3.0,
            1e300,
            1e-300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
        ];
        let specials = [
            f64::INFINITY,
            f64::NAN,
            f64::from_bits(0x7FF0_0000_0000_0005),
        ];
        let mut xs: Vec<f64> = [&ties[..], &edges, &specials].concat();
        xs.extend(xs.clone().iter().map(|x| -x));
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Random bits, and values within a few units of small integers and halves.
            xs.push(f64::from_bits(state));
            xs.push((state >> 40) as f64 / 4.0 - (1u64 << 21) as f64);
        }
        for &x in &xs {
            let y = x as f32;
            let same64 = |ours: fn(f64) -> f64, std: fn(f64) -> f64| {
                let (a, b) = (ours(x), std(x));
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
            };
            let same32 = |ours: fn(f32) -> f32, std: fn(f32) -> f32| {
                let (a, b) = (ours(y), std(y));
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
            };
            assert!(same64(Rounded::round_even, f64::round_ties_even), "{x:e}");
            assert!(same64(Rounded::trunc, f64::trunc), "{x:e}");
            assert!(same64(Rounded::floor, f64::floor), "{x:e}");
            assert!(same64(Rounded::ceil, f64::ceil), "{x:e}");
            assert!(same32(Rounded::round_even, f32::round_ties_even), "{y:e}");
            assert!(same32(Rounded::trunc, f32::trunc), "{y:e}");
            assert!(same32(Rounded::floor, f32::floor), "{y:e}");
            assert!(same32(Rounded::ceil, f32::ceil), "{y:e}");
            for n in [
                -2300, -2200, -1500, -1075, -1074, -1000, -150, -1, 0, 1, 64, 1000, 2200, 2300,
            ] {
                let reference = {
                    let (mut x, mut n) = (x, n.clamp(-2200, 2200));
                    while n > 1000 {
                        (x, n) = (x * 2f64.powi(1000), n - 1000);
                    }
                    while n < -1000 {
                        (x, n) = (x * 2f64.powi(-1000), n + 1000);
                    }
                    x * 2f64.powi(n)
                };
                assert_eq!(ldexp64(x, n).to_bits(), reference.to_bits(), "{x:e} {n}");
                let reference = ((y as f64) * 2f64.powi(n.clamp(-400, 400))) as f32;
                assert_eq!(ldexp32(y, n).to_bits(), reference.to_bits(), "{y:e} {n}");
            }
        }
    }
}
