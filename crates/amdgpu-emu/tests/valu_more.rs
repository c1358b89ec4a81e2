//! The media, legacy, dot-product and 16-bit VALU operations (`tests/corpus/valu_more.hip`),
//! run on both targets against CPU references written from the ISA definitions: bit-exact
//! where the ISA defines the result exactly, within one f16 ulp for the transcendentals and
//! the compiled f16 division.
#![allow(clippy::needless_range_loop)]

mod common;

use amdgpu_emu::FaultKind;
use common::{Arg, Bench, Rng, TARGETS, assert_uses};
use half::f16;

const N: usize = 256;

/// An f16 value the tests like: a multiple of 1/64 in (-8, 8), so that products and sums of a
/// few of them are exact in f32.
fn nice16(r: &mut Rng) -> u16 {
    let k = (r.next() % 1023) as i32 - 511;
    f16::from_f32(k as f32 / 64.0).to_bits()
}

/// Inputs of the raw-bit kernels: lanes alternate between random bits, pairs of nice f16
/// values, extremes (for saturation) and f16 pairs with special values.
fn inputs(seed: u64) -> [Vec<u32>; 3] {
    let mut r = Rng(seed);
    const SPECIAL: [u16; 10] = [
        0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x3C00, 0xBC00, 0x7BFF, 0x0400,
    ];
    const EXTREME: [u32; 8] = [
        0x7FFF_7FFF,
        0x8000_8000,
        0xFFFF_FFFF,
        0x7FFF_FFF0,
        0x8000_0010,
        0x0101_0101,
        0x7F7F_7F7F,
        0x8080_8080,
    ];
    let mut v: [Vec<u32>; 3] = Default::default();
    for l in 0..N {
        for x in v.iter_mut() {
            let word = match l % 4 {
                0 => r.next() as u32,
                1 => nice16(&mut r) as u32 | (nice16(&mut r) as u32) << 16,
                2 => EXTREME[(r.next() % 8) as usize],
                _ => {
                    let s = |r: &mut Rng| SPECIAL[(r.next() % 10) as usize] as u32;
                    s(&mut r) | s(&mut r) << 16
                }
            };
            x.push(word);
        }
    }
    v
}

fn h(x: u32) -> f64 {
    f16::from_bits(x as u16).to_f64()
}
fn hi(x: u32) -> u32 {
    x >> 16
}

/// f64 to f16 bits, rounded once to nearest even (the reference rounding).
fn f16_rne(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7E00;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    if a >= 65520.0 {
        return sign | 0x7C00;
    }
    let e = a.log2().floor() as i32;
    // log2 may be off by one next to powers of two; fix the exponent so 2^e <= a < 2^(e+1).
    let e = if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    };
    let quantum = 2f64.powi(e.max(-14) - 10);
    let v = (a / quantum).round_ties_even() * quantum;
    if v >= 65520.0 {
        return sign | 0x7C00;
    }
    sign | f16::from_f64(v).to_bits()
}

/// Equal bits, or both NaN (payloads are not compared).
fn same16(a: u32, b: u32) -> bool {
    let nan = |x: u32| (x & 0x7C00) == 0x7C00 && (x & 0x3FF) != 0;
    (a & 0xFFFF) == (b & 0xFFFF) || (nan(a) && nan(b))
}
fn same32(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

/// Distance in f16 units in the last place (NaNs and infinities must match exactly).
fn ulps16(a: u32, b: u32) -> u32 {
    let (a, b) = (a as u16, b as u16);
    let key = |x: u16| {
        if x & 0x8000 != 0 {
            -((x & 0x7FFF) as i32)
        } else {
            x as i32
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

fn min_ieee(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}
fn max_ieee(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else {
        a.max(b)
    }
}

/// The minimum (or maximum) of two f16 values given by their low 16 bits, as MODE.IEEE (the
/// compute default) has it: a signalling NaN source (src0 first) gives that NaN quieted, a
/// quiet NaN source gives the other source.
fn ieee16(a: u32, b: u32, max: bool) -> u32 {
    let (a, b) = (a & 0xFFFF, b & 0xFFFF);
    let signalling = |x: u32| x & 0x7FFF > 0x7C00 && x & 0x0200 == 0;
    for x in [a, b] {
        if signalling(x) {
            return x | 0x0200;
        }
    }
    let r = if max {
        max_ieee(h(a), h(b))
    } else {
        min_ieee(h(a), h(b))
    };
    f16_rne(r) as u32
}

/// `v_min3_f16` (or max3) of f16 bits: two IEEE-mode steps.
fn ieee3_16(a: u32, b: u32, c: u32, max: bool) -> u32 {
    ieee16(ieee16(a, b, max), c, max)
}

/// `v_med3_f16` of f16 bits: with a NaN source the minimum of the three (the ISA's pseudo-code),
/// else the median.
fn med3_16(a: u32, b: u32, c: u32) -> u32 {
    let nan = |x: u32| x & 0x7FFF > 0x7C00;
    if nan(a) || nan(b) || nan(c) {
        return ieee3_16(a, b, c, false);
    }
    let (a, b, c) = (h(a), h(b), h(c));
    f16_rne(max_ieee(min_ieee(a, b), min_ieee(max_ieee(a, b), c))) as u32
}

/// `v_div_fixup` on f16 values: the special cases of the quotient `num / den`, else `q` with
/// the quotient's sign (a NaN `q` passes through).
fn div_fixup(q: f64, den: f64, num: f64) -> f64 {
    let neg = den.is_sign_negative() != num.is_sign_negative();
    let signed = |x: f64| if neg { -x.abs() } else { x.abs() };
    if num.is_nan() || den.is_nan() || (den == 0.0 && num == 0.0) {
        return f64::NAN;
    }
    if den.is_infinite() && num.is_infinite() {
        return f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        return signed(f64::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return signed(0.0);
    }
    if q.is_nan() {
        return q;
    }
    signed(q)
}

fn sat(x: i64, lo: i64, hi: i64) -> i64 {
    x.clamp(lo, hi)
}
fn sbytes(x: u32) -> [i64; 4] {
    [0, 1, 2, 3].map(|i| (x >> (8 * i)) as u8 as i8 as i64)
}
fn ubytes(x: u32) -> [i64; 4] {
    [0, 1, 2, 3].map(|i| ((x >> (8 * i)) & 0xFF) as i64)
}
fn snibbles(x: u32) -> [i64; 8] {
    [0, 1, 2, 3, 4, 5, 6, 7].map(|i| {
        let n = ((x >> (4 * i)) & 0xF) as i64;
        if n >= 8 { n - 16 } else { n }
    })
}
fn unibbles(x: u32) -> [i64; 8] {
    [0, 1, 2, 3, 4, 5, 6, 7].map(|i| ((x >> (4 * i)) & 0xF) as i64)
}
fn shalves(x: u32) -> [i64; 2] {
    [x as u16 as i16 as i64, (x >> 16) as u16 as i16 as i64]
}
fn uhalves(x: u32) -> [i64; 2] {
    [(x & 0xFFFF) as i64, (x >> 16) as i64]
}
fn dot(a: &[i64], b: &[i64]) -> i64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn sad8(a: u32, b: u32, masked: bool) -> u32 {
    (0..4)
        .map(|i| {
            let (x, y) = ((a >> (8 * i)) & 0xFF, (b >> (8 * i)) & 0xFF);
            if masked && y == 0 {
                0
            } else {
                (x as i32 - y as i32).unsigned_abs()
            }
        })
        .sum()
}

fn qsad(src: u64, reference: u32, acc: u64, masked: bool) -> u64 {
    let mut r = 0u64;
    for i in 0..4 {
        let window = (src >> (8 * i)) as u32;
        let field = ((acc >> (16 * i)) & 0xFFFF) as u32;
        r |= (((field + sad8(window, reference, masked)) & 0xFFFF) as u64) << (16 * i);
    }
    r
}

fn run_raw(b: &mut Bench, kernel: &str, per_lane: usize, seed: u64) -> ([Vec<u32>; 3], Vec<u32>) {
    let ins = inputs(seed);
    let bufs: Vec<usize> = ins.iter().map(|v| b.buf_of(v)).collect();
    let out = b.zeros::<u32>(N * per_lane);
    b.run1(
        kernel,
        N as u32,
        64,
        &[
            Arg::Buf(bufs[0]),
            Arg::Buf(bufs[1]),
            Arg::Buf(bufs[2]),
            Arg::Buf(out),
            Arg::I32(N as i32),
        ],
    );
    (ins, b.read(out))
}

#[test]
fn f16_transcendentals_division_min_max_and_dot2() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(
            &b,
            &[
                "v_exp_f16",
                "v_log_f16",
                "v_sin_f16",
                "v_cos_f16",
                "v_frexp_mant_f16",
                "v_frexp_exp_i16_f16",
                "v_div_fixup_f16",
                "v_min3_f16",
                "v_max3_f16",
                "v_med3_f16",
                "v_dot2c_f32_f16",
                "v_dot2_f32_f16",
            ],
        );
        let (ins, got) = run_raw(&mut b, "f16_ops", 12, 11);
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            let o = &got[12 * l..12 * l + 12];
            let ctx = |k: usize| format!("{} lane {l} op {k}: {x:08x} {y:08x} {z:08x}", t.name());
            let (p, q, r) = (h(x), h(y), h(z));
            let tau = std::f64::consts::TAU;
            for (k, want) in [
                (0, p.exp2()),
                (1, p.log2()),
                (2, (p * tau).sin()),
                (3, (p * tau).cos()),
            ] {
                let want = f16_rne(want) as u32;
                if k >= 2 && p.abs() > 256.0 {
                    continue; // outside the documented input range of v_sin/v_cos
                }
                assert!(
                    same16(o[k], want) || ulps16(o[k], want) <= 1,
                    "{}: {:04x} want {want:04x}",
                    ctx(k),
                    o[k]
                );
            }
            // frexp: mantissa in [0.5, 1) with the sign, exponent; 0, inf and NaN give
            // themselves and 0.
            let (mant, exp) = if p == 0.0 || !p.is_finite() {
                (p, 0)
            } else {
                let e = p.abs().log2().floor() as i32 + 1;
                let e = if p.abs() / 2f64.powi(e) >= 1.0 {
                    e + 1
                } else if p.abs() / 2f64.powi(e) < 0.5 {
                    e - 1
                } else {
                    e
                };
                (p / 2f64.powi(e), e)
            };
            assert!(same16(o[4], f16_rne(mant) as u32), "{}", ctx(4));
            assert_eq!(o[5] as u16, exp as i16 as u16, "{}", ctx(5));
            // Division: the special cases exactly, else within one ulp of the quotient.
            let quotient = p / q;
            let want = f16_rne(quotient) as u32;
            if !quotient.is_finite() || quotient == 0.0 || p == 0.0 {
                assert!(
                    same16(o[6], want),
                    "{}: {:04x} want {want:04x}",
                    ctx(6),
                    o[6]
                );
            } else {
                assert!(
                    ulps16(o[6], want) <= 1,
                    "{}: {:04x} want {want:04x}",
                    ctx(6),
                    o[6]
                );
            }
            assert!(same16(o[7], ieee3_16(x, y, z, false)), "{}", ctx(7));
            assert!(same16(o[8], ieee3_16(x, y, z, true)), "{}", ctx(8));
            if p.is_nan() || q.is_nan() || r.is_nan() {
                assert!(same16(o[9], med3_16(x, y, z)), "{}", ctx(9));
            } else {
                let mut v = [p, q, r];
                v.sort_by(|a, b| a.partial_cmp(b).unwrap());
                // The middle value; which zero is returned among equal zeros is not checked.
                assert_eq!(h(o[9]), v[1], "{}", ctx(9));
            }
            // fdot2(x = {p, q}, y = {q, r}, (float)r): exact for the nice lanes.
            if l % 4 == 1 {
                let want = (p * q + q * r + r) as f32;
                assert_eq!(f32::from_bits(o[10]), want, "{}", ctx(10));
                assert_eq!(f32::from_bits(o[11]), want.clamp(0.0, 1.0), "{}", ctx(11));
            }
        }
    }
}

/// Packed f16 fused multiply-adds as `half2` arithmetic compiles them (`v_pk_fma_f16`, each
/// half from its own half): four steps of x = x * y + s per half, each rounded once.
#[test]
fn packed_half_fma_chain_rounds_each_step_once() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(&b, &["v_pk_fma_f16"]);
        let (ins, out) = run_raw(&mut b, "half2_fma_chain", 1, 0xF16A);
        let mut finite = 0;
        for l in 0..N {
            for shift in [0, 16] {
                let half = |x: u32| x >> shift & 0xFFFF;
                let (y, s) = (h(half(ins[1][l])), h(half(ins[2][l])));
                let mut x = half(ins[0][l]);
                for _ in 0..4 {
                    x = f16_rne(h(x).mul_add(y, s)) as u32;
                }
                let got = half(out[l]);
                assert!(
                    same16(got, x),
                    "{t:?} lane {l} half at bit {shift}: {got:#06x}, expected {x:#06x}"
                );
                finite += usize::from(x & 0x7C00 != 0x7C00);
            }
        }
        assert!(finite > N / 2, "{finite} finite results of {}", 2 * N);
    }
}

#[test]
fn integer_media_operations_and_dot_products() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(
            &b,
            &[
                "v_lerp_u8",
                "v_sad_u8",
                "v_sad_hi_u8",
                "v_sad_u16",
                "v_sad_u32",
                "v_msad_u8",
                "v_qsad_pk_u16_u8",
                "v_mqsad_pk_u16_u8",
                "v_dot2c_i32_i16",
                "v_dot2_u32_u16",
                "v_dot4c_i32_i8",
                "v_dot4_u32_u8",
                "v_dot8_i32_i4",
                "v_dot8_u32_u4",
                "v_add_i16",
                "v_sub_i16",
            ],
        );
        let (ins, got) = run_raw(&mut b, "int_ops", 20, 12);
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            let o = &got[20 * l..20 * l + 20];
            let lerp = (0..4).fold(0u32, |acc, i| {
                let (p, q, r) = (
                    (x >> (8 * i)) & 0xFF,
                    (y >> (8 * i)) & 0xFF,
                    (z >> (8 * i)) & 1,
                );
                acc | ((p + q + r) >> 1) << (8 * i)
            });
            let wide = (y as u64) << 32 | x as u64;
            let acc = (x as u64) << 32 | z as u64;
            let qs = qsad(wide, z, acc, false);
            let mq = qsad(wide, z, acc, true);
            let sad16 = (x & 0xFFFF).abs_diff(y & 0xFFFF) + (x >> 16).abs_diff(y >> 16);
            let i32s = |v: i64| sat(v, i32::MIN as i64, i32::MAX as i64) as i32 as u32;
            let u32s = |v: i64| sat(v, 0, u32::MAX as i64) as u32;
            let want: [u32; 20] = [
                lerp,
                sad8(x, y, false).wrapping_add(z),
                (sad8(x, y, false) << 16).wrapping_add(z),
                sad16.wrapping_add(z),
                x.abs_diff(y).wrapping_add(z),
                sad8(x, y, true).wrapping_add(z),
                qs as u32,
                (qs >> 32) as u32,
                mq as u32,
                (mq >> 32) as u32,
                (dot(&shalves(x), &shalves(y)) + z as i32 as i64) as u32,
                u32s(dot(&uhalves(x), &uhalves(y)) + z as i64),
                (dot(&sbytes(x), &sbytes(y)) + z as i32 as i64) as u32,
                (dot(&ubytes(x), &ubytes(y)) + z as i64) as u32,
                i32s(dot(&snibbles(x), &snibbles(y)) + z as i32 as i64),
                (dot(&unibbles(x), &unibbles(y)) + z as i64) as u32,
                sat(x as i16 as i64 + y as i16 as i64, -32768, 32767) as u16 as u32,
                sat(x as i16 as i64 - y as i16 as i64, -32768, 32767) as u16 as u32,
                (dot(&snibbles(x), &snibbles(y)) + z as i32 as i64) as u32,
                (dot(&uhalves(x), &uhalves(y)) + z as i64) as u32,
            ];
            for k in 0..20 {
                assert_eq!(
                    o[k],
                    want[k],
                    "{} lane {l} result {k}: {x:08x} {y:08x} {z:08x}",
                    t.name()
                );
            }
        }
    }
}

/// The cube-map face selection as the ISA describes it: the major axis is the component of
/// largest magnitude (z, then y, then x on ties); the face id is 2 * axis (+1 if negative).
fn cube_ref(x: f32, y: f32, z: f32) -> [f32; 4] {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    if az >= ax && az >= ay {
        let neg = z < 0.0;
        [
            if neg { 5.0 } else { 4.0 },
            if neg { -x } else { x },
            -y,
            2.0 * z,
        ]
    } else if ay >= ax {
        let neg = y < 0.0;
        [
            if neg { 3.0 } else { 2.0 },
            x,
            if neg { -z } else { z },
            2.0 * y,
        ]
    } else {
        let neg = x < 0.0;
        [
            if neg { 1.0 } else { 0.0 },
            if neg { z } else { -z },
            -y,
            2.0 * x,
        ]
    }
}

#[test]
fn cube_map_coordinates() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(
            &b,
            &[
                "v_cubeid_f32",
                "v_cubesc_f32",
                "v_cubetc_f32",
                "v_cubema_f32",
            ],
        );
        let mut r = Rng(21);
        let mut v: [Vec<f32>; 3] = Default::default();
        for l in 0..N {
            for c in v.iter_mut() {
                // Ties between components and signed zeros in some lanes.
                c.push(if l % 5 == 0 {
                    [1.0, -1.0, 0.0, -0.0][(r.next() % 4) as usize]
                } else {
                    r.f32()
                });
            }
        }
        let bufs: Vec<usize> = v.iter().map(|x| b.buf_of(x)).collect();
        let out = b.zeros::<f32>(4 * N);
        b.run1(
            "cube_ops",
            N as u32,
            64,
            &[
                Arg::Buf(bufs[0]),
                Arg::Buf(bufs[1]),
                Arg::Buf(bufs[2]),
                Arg::Buf(out),
                Arg::I32(N as i32),
            ],
        );
        let got: Vec<f32> = b.read(out);
        for l in 0..N {
            let want = cube_ref(v[0][l], v[1][l], v[2][l]);
            for k in 0..4 {
                assert_eq!(
                    got[4 * l + k].to_bits(),
                    want[k].to_bits(),
                    "{} lane {l} op {k}: ({}, {}, {})",
                    t.name(),
                    v[0][l],
                    v[1][l],
                    v[2][l]
                );
            }
        }
    }
}

/// `v_trig_preop_f64(x, segment)` against values computed with mpmath: the 53 bits of 2/pi
/// from bit `53 * segment` (plus the excess of x's biased exponent over 1077) after the binary
/// point, scaled by 2^(-53 - shift) (times 2^128 when the exponent is at least 1968), rounded
/// to nearest even. Generated by:
///
/// ```text
/// mp.prec = 4000; big = floor(2/pi * 2^(1184 + 64))
/// bits = (big >> (1184 + 64 - shift - 53)) & (2^53 - 1)
/// result = float(Fraction(bits) * 2^scale)  # 0 when shift / 32 + 2 >= 37
/// ```
const TRIG_PREOP: &[(u64, u32, u64)] = &[
    (0x3ff0000000000000, 0, 0x3fe45f306dc9c882),
    (0x3ff0000000000000, 1, 0x3c94a7f09d5f47d4),
    (0x3ff0000000000000, 2, 0x394a6ee06db14acc),
    (0xc00c000000000000, 0, 0x3fe45f306dc9c882),
    (0x0000000000000000, 3, 0x35f3c439041fe516),
    (0x7e37e43c8800759c, 0, 0x0d0f516ba93dd63f),
    (0x7e37e43c8800759c, 1, 0x09a7cbe2f67a0e72),
    (0x4630000000000000, 0, 0x3cb529fc2757d1e0),
    (0x43b0000000000000, 2, 0x38ebb81b6c52b327),
    (0x4360000000000000, 5, 0x2f42371d2126e970),
    (0x7fe1ccf385ebc8a0, 3, 0x0000000000000000),
    (0x7e70000000000000, 1, 0x097e5f17b3d0739f),
    (0x40c81cd6c8b43958, 4, 0x328d5ef5de2b0db8),
    (0x0000000000002788, 0, 0x3fe45f306dc9c882),
    (0x3ff0000000000000, 20, 0x000000000000294a),
    (0x3ff0000000000000, 21, 0x0000000000000000),
    (0x3ff0000000000000, 31, 0x0000000000000000),
    (0x7e70000000000000, 20, 0x0000000000000000),
    (0x7fb0000000000000, 20, 0x0000000000000000),
    (0x3ff8000000000000, 33, 0x3c94a7f09d5f47d4),
    (0x4202a05f20000000, 7, 0x28b21cfe1deb1cb1),
    (0xe9a24a35bcdc760f, 9, 0x0000000000000000),
    (0xcff68ca5e0d58b24, 12, 0x0b7367ecf27cb09a),
    (0x45f351d220c5c7fc, 17, 0x04fea2d7527bac7e),
    (0xc429f9c5fd1311b2, 16, 0x0a1c9f2c26dd3d18),
    (0xc7c242628fb3357a, 13, 0x102fde5e2316b410),
    (0xdb64f2ab7dc3be90, 2, 0x213b4484e99c7026),
    (0x442a22dd9b2b5280, 18, 0x03727bac7ebe5f17),
    (0xd95813a0f06b9f7e, 20, 0x0000000000000000),
    (0x44904fbb5953f48c, 18, 0x030dd63f5f2f8bd9),
    (0x42f5e60aecb19b40, 7, 0x28b21cfe1deb1cb1),
    (0xcdcd04ca138bf348, 9, 0x17a908bf177bf250),
];

#[test]
fn trig_preop_segments_of_two_over_pi() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(&b, &["v_trig_preop_f64"]);
        let x: Vec<f64> = TRIG_PREOP.iter().map(|c| f64::from_bits(c.0)).collect();
        let seg: Vec<u32> = TRIG_PREOP.iter().map(|c| c.1).collect();
        let (xb, sb) = (b.buf_of(&x), b.buf_of(&seg));
        let out = b.zeros::<f64>(x.len());
        b.run1(
            "trig_preop",
            x.len() as u32,
            64,
            &[
                Arg::Buf(xb),
                Arg::Buf(sb),
                Arg::Buf(out),
                Arg::I32(x.len() as i32),
            ],
        );
        let got: Vec<f64> = b.read(out);
        for (i, c) in TRIG_PREOP.iter().enumerate() {
            assert_eq!(
                got[i].to_bits(),
                c.2,
                "{}: trig_preop({:e}, {})",
                t.name(),
                x[i],
                c.1
            );
        }
    }
}

/// The references of `asm_ops`, in its order.
fn asm_reference(x: u32, y: u32, z: u32) -> Vec<(u32, &'static str)> {
    let mad16 = |a: f64, b: f64, c: f64| f16_rne(h(f16_rne(a * b) as u32) + c) as u32;
    let nib = ((x & 0xF) as i32 ^ 8) - 8;
    let s16 = |v: u32| v as u16 as i16 as i64;
    let i16w = |v: i64| v as u16 as u32;
    let i16s = |v: i64| sat(v, -32768, 32767) as u16 as u32;
    let min3 = |a: i64, b: i64, c: i64| a.min(b).min(c);
    let max3 = |a: i64, b: i64, c: i64| a.max(b).max(c);
    let med3 = |a: i64, b: i64, c: i64| a.max(b).min(a.min(b).max(c));
    let (xs, ys, zs) = (s16(x), s16(y), s16(z));
    let (xu, yu, zu) = (
        (x & 0xFFFF) as i64,
        (y & 0xFFFF) as i64,
        (z & 0xFFFF) as i64,
    );
    let fdot = h(x) * h(y) + h(hi(x)) * h(hi(y)) + f32::from_bits(z) as f64;
    let pk_fma = |s: u32| f16_rne(h(x >> s).mul_add(h(y >> s), h(z >> s))) as u32;
    let legacy_mul = {
        let (a, b) = (f32::from_bits(x), f32::from_bits(y));
        if a == 0.0 || b == 0.0 {
            0
        } else {
            (a * b).to_bits()
        }
    };
    let i32w = |v: i64| v as u32;
    let i32s = |v: i64| sat(v, i32::MIN as i64, i32::MAX as i64) as u32;
    vec![
        ((nib as f32 / 16.0).to_bits(), "v_cvt_off_f32_i4"),
        (
            (xs.clamp(0, 255) as u32) | ((s16(hi(x))).clamp(0, 255) as u32) << 8,
            "v_sat_pk_u8_i16",
        ),
        (mad16(h(x), 2.71875, h(y)), "v_madmk_f16"),
        (mad16(h(x), h(y), -9.0), "v_madak_f16"),
        (mad16(h(x), h(y), h(z)), "v_mad_f16"),
        (mad16(h(x), h(y), h(z)), "v_mad_legacy_f16"),
        (f16_rne(h(x).mul_add(h(y), h(z))) as u32, "v_fma_legacy_f16"),
        (
            f16_rne(div_fixup(h(x), h(y), h(z))) as u32,
            "v_div_fixup_legacy_f16",
        ),
        (
            f16_rne(div_fixup(h(hi(x)), h(y), h(hi(z)))) as u32,
            "v_div_fixup_f16 op_sel",
        ),
        (i16w(min3(xs, ys, zs)), "v_min3_i16"),
        (i16w(max3(xs, ys, zs)), "v_max3_i16"),
        (i16w(med3(xs, ys, zs)), "v_med3_i16"),
        (min3(xu, yu, zu) as u32, "v_min3_u16"),
        (max3(xu, yu, zu) as u32, "v_max3_u16"),
        (med3(xu, yu, zu) as u32, "v_med3_u16"),
        (i16w(xu * yu + zu), "v_mad_u16"),
        (i16w(xs * ys + zs), "v_mad_i16"),
        ((xu * yu + zu).min(0xFFFF) as u32, "v_mad_u16 clamp"),
        (i16s(xs * ys + zs), "v_mad_i16 clamp"),
        (ieee3_16(hi(x), hi(y), z, false), "v_min3_f16 op_sel"),
        (med3_16(x, hi(y), hi(z)), "v_med3_f16 op_sel"),
        (
            (z & 0xFFFF) | ieee3_16(x, y, z, true) << 16,
            "v_max3_f16 op_sel:[0,0,0,1]",
        ),
        (
            i16w(s16(hi(x)) * s16(hi(y)) + s16(hi(z))),
            "v_mad_i16 op_sel",
        ),
        (i16w(xs + ys), "v_add_i16"),
        (i16w(xs - ys), "v_sub_i16"),
        (i16w(s16(hi(x)) + s16(hi(y))), "v_add_i16 op_sel"),
        (legacy_mul, "v_mul_legacy_f32"),
        ((fdot as f32).to_bits(), "v_dot2c_f32_f16"),
        (
            i32w(dot(&shalves(x), &shalves(y)) + z as i32 as i64),
            "v_dot2c_i32_i16",
        ),
        (
            i32w(dot(&sbytes(x), &sbytes(y)) + z as i32 as i64),
            "v_dot4c_i32_i8",
        ),
        (
            i32w(dot(&snibbles(x), &snibbles(y)) + z as i32 as i64),
            "v_dot8c_i32_i4",
        ),
        (
            i32s(dot(&sbytes(x), &sbytes(y)) + z as i32 as i64),
            "v_dot4c_i32_i8_e64 clamp",
        ),
        (pk_fma(0) | pk_fma(16) << 16, "v_pk_fmac_f16"),
        (
            i32w(dot(&shalves(x), &shalves(y)) + z as i32 as i64),
            "v_dot2_i32_i16",
        ),
        (
            i32w(dot(&sbytes(x), &sbytes(y)) + z as i32 as i64),
            "v_dot4_i32_i8",
        ),
        (
            ((-h(x) * h(y) + h(hi(x)) * -h(hi(y)) + f32::from_bits(z) as f64) as f32).to_bits(),
            "v_dot2_f32_f16 neg",
        ),
        (
            i32s(dot(&sbytes(x), &sbytes(y)) + z as i32 as i64),
            "v_dot4_i32_i8 clamp",
        ),
        (x, "v_clrexcp"),
    ]
}

/// Which results of `asm_ops` are f16 values (compared as f16, NaNs alike), f32 values, or
/// integers (bit-exact).
fn asm_kind(name: &str) -> u8 {
    if name.contains("f16") && !name.starts_with("v_dot2") {
        16
    } else if name.contains("f32") {
        32
    } else {
        0
    }
}

#[test]
fn operations_the_compiler_does_not_choose() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        let (ins, got) = run_raw(&mut b, "asm_ops", 38, 13);
        let names: Vec<&str> = asm_reference(0, 0, 0).iter().map(|r| r.1).collect();
        assert_eq!(names.len(), 38);
        for name in &names {
            assert_uses(
                &b,
                &[name.split(' ').next().unwrap().trim_end_matches("_e64")],
            );
        }
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            for (k, (want, name)) in asm_reference(x, y, z).into_iter().enumerate() {
                let g = got[38 * l + k];
                // The f32 dot product is exact only for the nice lanes.
                if name.starts_with("v_dot2") && name.contains("f32") && l % 4 != 1 {
                    continue;
                }
                let ok = match asm_kind(name) {
                    16 if name.ends_with("op_sel:[0,0,0,1]") => {
                        g & 0xFFFF == want & 0xFFFF && same16(g >> 16, want >> 16)
                    }
                    16 if name == "v_pk_fmac_f16" => same16(g, want) && same16(g >> 16, want >> 16),
                    16 => g >> 16 == 0 && same16(g, want),
                    32 => same32(g, want),
                    _ => g == want,
                };
                assert!(
                    ok,
                    "{} lane {l} {name}: got {g:08x} want {want:08x} ({x:08x} {y:08x} {z:08x})",
                    t.name()
                );
            }
        }
    }
}

#[test]
fn refused_operations_fault_with_their_reason() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        let out = b.zeros::<u32>(64);
        let fault = b
            .run(
                "refused_screen_partition",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Buf(out)],
                0,
            )
            .expect_err("v_screen_partition_4se_b32 has no semantics");
        match fault.kind {
            FaultKind::IllegalInstruction { reason } => assert!(
                reason.contains("v_screen_partition_4se_b32") && reason.contains("table"),
                "{reason}"
            ),
            other => panic!("{}: {other:?}", t.name()),
        }
    }
}

#[test]
fn masked_quad_sad_into_four_dwords() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(&b, &["v_mqsad_u32_u8"]);
        let (ins, got) = run_raw(&mut b, "mqsad_u32", 4, 14);
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            let src = (y as u64) << 32 | x as u64;
            let acc = [x, y, z, x ^ y];
            for k in 0..4 {
                let want = acc[k].wrapping_add(sad8((src >> (8 * k)) as u32, z, true));
                assert_eq!(got[4 * l + k], want, "{} lane {l} dword {k}", t.name());
            }
        }
    }
}

/// The value of every finite code of a FNUZ 8-bit format (`mantissa` bits, exponent `bias`).
fn fnuz_values(mantissa: u32, bias: i32) -> Vec<(u8, f64)> {
    (0u8..=255)
        .filter(|&c| c != 0x80)
        .map(|c| {
            let e = ((c & 0x7F) >> mantissa) as i32;
            let m = (c as u32 & ((1 << mantissa) - 1)) as f64;
            let v = if e == 0 {
                m * 2f64.powi(1 - bias - mantissa as i32)
            } else {
                (1.0 + m / (1u32 << mantissa) as f64) * 2f64.powi(e - bias)
            };
            (c, if c & 0x80 != 0 { -v } else { v })
        })
        .collect()
}

/// `x` to the nearest code (ties to the even code); NaN, infinities and values at or past the
/// midpoint between the largest finite value and the next power of the format give 0x80.
fn fnuz_ref(x: f32, mantissa: u32, bias: i32) -> u8 {
    if !x.is_finite() {
        return 0x80;
    }
    let x = x as f64;
    let values = fnuz_values(mantissa, bias);
    let largest = values.iter().map(|v| v.1).fold(0.0, f64::max);
    let above = largest
        + (largest
            - values
                .iter()
                .map(|v| v.1)
                .filter(|&v| v < largest)
                .fold(0.0, f64::max));
    if x.abs() >= (largest + above) / 2.0 {
        return 0x80;
    }
    let mut best = (0u8, f64::INFINITY);
    for &(c, v) in &values {
        let d = (v - x).abs();
        if d < best.1 || (d == best.1 && c & 1 == 0) {
            best = (c, d);
        }
    }
    // No negative zero: a value that rounds to zero is +0.
    if best.0 == 0x80 || values.iter().any(|&(c, v)| c == best.0 && v == 0.0) {
        return 0;
    }
    best.0
}

#[test]
fn f32_pairs_to_fnuz_fp8_and_bf8_on_gfx942() {
    let t = amdgpu_emu::Target::Gfx942;
    let mut b = Bench::new("valu_more", t);
    assert_uses(&b, &["v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32"]);
    let mut r = Rng(15);
    // Exact codes, midpoints (ties), the overflow edges of both formats, tiny values, specials.
    let mut special = vec![
        0.0f32,
        -0.0,
        240.0,
        247.9,
        248.0,
        256.0,
        -248.0,
        57344.0,
        61439.0,
        61440.0,
        1.0625,
        1.1875,
        0.0009765625,
        0.00048828125,
        2f32.powi(-12),
        1e-30,
        -1e-30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0e38,
        0.15,
        -7.75,
        0.01171875,
        1.5e-5,
        2f32.powi(-16),
    ];
    while special.len() < N {
        let scale = 2f32.powi((r.next() % 40) as i32 - 24);
        special.push(r.f32() * scale);
    }
    let a: Vec<f32> = special.clone();
    let bv: Vec<f32> = special.iter().rev().copied().collect();
    let old: Vec<u32> = (0..N).map(|_| r.next() as u32).collect();
    let (ab, bb, ob) = (b.buf_of(&a), b.buf_of(&bv), b.buf_of(&old));
    let out = b.zeros::<u32>(4 * N);
    b.run1(
        "pack_8bit_floats",
        N as u32,
        64,
        &[
            Arg::Buf(ab),
            Arg::Buf(bb),
            Arg::Buf(ob),
            Arg::Buf(out),
            Arg::I32(N as i32),
        ],
    );
    let got: Vec<u32> = b.read(out);
    for l in 0..N {
        for (k, (m, bias, high)) in [(3, 8, false), (3, 8, true), (2, 16, false), (2, 16, true)]
            .into_iter()
            .enumerate()
        {
            let word = fnuz_ref(a[l], m, bias) as u32 | (fnuz_ref(bv[l], m, bias) as u32) << 8;
            let want = if high {
                (old[l] & 0xFFFF) | word << 16
            } else {
                (old[l] & 0xFFFF_0000) | word
            };
            assert_eq!(
                got[4 * l + k],
                want,
                "lane {l} form {k}: ({:e}, {:e}) old {:08x}",
                a[l],
                bv[l],
                old[l]
            );
        }
    }
}

#[test]
fn xf32_and_sparse_mfmas_are_refused_on_gfx942() {
    let t = amdgpu_emu::Target::Gfx942;
    let mut b = Bench::new("valu_more", t);
    assert_uses(
        &b,
        &["v_mfma_f32_16x16x8_xf32", "v_smfmac_f32_16x16x32_f16"],
    );
    for (kernel, op, why) in [
        ("refused_xf32", "v_mfma_f32_16x16x8_xf32", "xf32"),
        ("refused_smfmac", "v_smfmac_f32_16x16x32_f16", "sparse"),
    ] {
        let out = b.zeros::<f32>(64);
        let fault = b
            .run(kernel, [64, 1, 1], [64, 1, 1], &[Arg::Buf(out)], 0)
            .expect_err("refused");
        match fault.kind {
            FaultKind::IllegalInstruction { reason } => {
                assert!(reason.contains(op) && reason.contains(why), "{reason}")
            }
            other => panic!("{kernel}: {other:?}"),
        }
    }
}

#[test]
fn dot2_half_selects_on_gfx90a() {
    let t = amdgpu_emu::Target::Gfx90a;
    let mut b = Bench::new("valu_more", t);
    let (ins, got) = run_raw(&mut b, "dot2_half_selects", 2, 16);
    for l in 0..N {
        let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
        // First elements from op_sel, second from op_sel_hi: src0 (hi, lo), src1 (lo, hi).
        if l % 4 == 1 {
            let want = h(hi(x)) * h(y) + h(x) * h(hi(y)) + f32::from_bits(z) as f64;
            assert_eq!(got[2 * l], (want as f32).to_bits(), "lane {l}");
        }
        // src0 (lo, hi), src1 (hi, lo).
        let s = |v: u32| v as u16 as i16 as i64;
        let want = s(x) * s(hi(y)) + s(hi(x)) * s(y) + z as i32 as i64;
        assert_eq!(got[2 * l + 1], want as u32, "lane {l}");
    }
}

/// The CPU references of `opsel_16bit`, in its order.
fn opsel_reference(x: u32, y: u32, z: u32) -> [u32; 25] {
    let lo = |v: u32| v & 0xFFFF;
    let s16 = |v: u32| v as u16 as i16 as i64;
    let fma16 = |a: u32, b: u32, c: u32| f16_rne(h(a).mul_add(h(b), h(c))) as u32;
    let w16 = |v: i64| v as u16 as u32;
    [
        fma16(hi(x), y, z),
        fma16(x, hi(y), z),
        fma16(x, y, hi(z)),
        lo(z) | fma16(x, y, z) << 16,
        lo(x) | fma16(hi(x), hi(y), hi(z)) << 16,
        hi(x).wrapping_mul(lo(y)).wrapping_add(z),
        lo(x).wrapping_mul(hi(y)).wrapping_add(z),
        (s16(hi(x)) * s16(hi(y)) + z as i32 as i64) as u32,
        hi(x) | lo(y) << 16,
        lo(x) | hi(y) << 16,
        lo(y) | w16(hi(x) as i64 * lo(y) as i64 + hi(z) as i64) << 16,
        w16(s16(x) - s16(hi(y))),
        // The float constants as f16 bits: 1.0, 0.5, -2.0, 1/(2 pi), -4.0, 4.0, 2.0, -1.0.
        w16(0x3C00 + lo(y) as i64),
        w16(lo(x) as i64 + 0x3800),
        w16(lo(x) as i64 * 0xC000),
        w16((lo(y) as i64) << (0x3118 & 15)),
        w16(s16(0xC400).max(s16(y))),
        w16(lo(x) as i64 - 0x4400),
        f16_rne(0x4000 as f64) as u32,
        f16_rne(s16(0xBC00) as f64) as u32,
        (0x3C00 < lo(y)) as u32,
        (s16(x) > s16(0xB800)) as u32,
        0x3C00u32.wrapping_mul(lo(y)).wrapping_add(z),
        lo(x).min(0x4000).min(lo(y)),
        // SDWA: the constant's f16 bits, as LLVM decodes it.
        w16(0x3C00 + hi(y) as i64),
    ]
}

/// op_sel on the VOP3 16-bit operations that define it (each source's high half, the
/// destination's high half keeping the low one) and float inline constants in 16-bit integer
/// operands (their f16 bits, in the VOP1, VOP2, VOPC, VOP3 and SDWA encodings), bit-exact against
/// the CPU references. The emulator used to run these as if op_sel were clear and to read
/// the constants as f32 bits.
#[test]
fn op_sel_and_16_bit_integer_inline_constants() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(&b, &["v_fma_f16", "v_mad_u32_u16", "v_pack_b32_f16"]);
        let (ins, got) = run_raw(&mut b, "opsel_16bit", 25, 17);
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            for (k, want) in opsel_reference(x, y, z).into_iter().enumerate() {
                let g = got[25 * l + k];
                // The f16 results compare NaNs as NaNs (either half).
                let ok = if k < 5 {
                    same16(g & 0xFFFF, want & 0xFFFF) && same16(g >> 16, want >> 16)
                } else {
                    g == want
                };
                assert!(
                    ok,
                    "{} lane {l} result {k}: got {g:08x} want {want:08x} ({x:08x} {y:08x} {z:08x})",
                    t.name()
                );
            }
        }
    }
}

/// VOP3 op_sel bits the operation does not define fault with a named reason instead of
/// running as if they were clear.
#[test]
fn undefined_op_sel_bits_fault_with_their_reason() {
    let cases = [
        (0, "v_add_f16", "no op_sel on GFX9"),
        (1, "v_cmp_eq_u16", "no op_sel on GFX9"),
        (2, "v_add_u32", "no op_sel on GFX9"),
        // LLVM decodes no instruction there: nor does the emulator.
        (3, "VOP3", "does not know"),
        (4, "v_fma_f16", "constant source 0"),
        (5, "v_alignbit_b32", "not documented"),
        (6, "v_mad_u32_u16", "32-bit"),
    ];
    for t in TARGETS {
        for (which, op, why) in cases {
            let mut b = Bench::new("valu_more", t);
            let out = b.zeros::<u32>(64);
            let fault = b
                .run(
                    "refused_op_sel",
                    [64, 1, 1],
                    [64, 1, 1],
                    &[Arg::Buf(out), Arg::I32(which)],
                    0,
                )
                .expect_err("undefined op_sel bits must fault");
            match fault.kind {
                FaultKind::IllegalInstruction { reason } => assert!(
                    reason.contains(op)
                        && (which == 3 || reason.contains("op_sel"))
                        && reason.contains(why),
                    "{} case {which}: {reason}",
                    t.name()
                ),
                other => panic!("{} case {which}: {other:?}", t.name()),
            }
        }
    }
}

/// Saturating adds and subtracts as the compiler emits them (`v_add_u32`, `v_sub_u32`,
/// `v_add_i32`, `v_sub_i32`, `v_add_u16`, `v_sub_u16`, `v_add_i16`, `v_sub_i16` and the packed
/// `v_pk_add_u16`, `v_pk_sub_u16`, `v_pk_add_i16`, `v_pk_sub_i16`, each with clamp), against
/// Rust's saturating arithmetic. The emulator used to wrap the 32-bit ones and refuse the
/// unsigned 16-bit and packed ones.
#[test]
fn clamped_integer_adds_saturate() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        assert_uses(
            &b,
            &["v_add_u32", "v_sub_i32", "v_pk_add_u16", "v_pk_sub_i16"],
        );
        let (ins, got) = run_raw(&mut b, "saturating", 12, 23);
        for l in 0..N {
            let (x, y) = (ins[0][l], ins[1][l]);
            let (hx, hy, ix, iy) = (x as u16, y as u16, x as i16, y as i16);
            let halves = |f: fn(u16, u16) -> u16| {
                f(x as u16, y as u16) as u32 | (f(hi(x) as u16, hi(y) as u16) as u32) << 16
            };
            let want = [
                x.saturating_add(y),
                x.saturating_sub(y),
                (x as i32).saturating_add(y as i32) as u32,
                (x as i32).saturating_sub(y as i32) as u32,
                hx.saturating_add(hy) as u32,
                hx.saturating_sub(hy) as u32,
                ix.saturating_add(iy) as u16 as u32,
                ix.saturating_sub(iy) as u16 as u32,
                halves(|a, b| a.saturating_add(b)),
                halves(|a, b| a.saturating_sub(b)),
                halves(|a, b| (a as i16).saturating_add(b as i16) as u16),
                halves(|a, b| (a as i16).saturating_sub(b as i16) as u16),
            ];
            for (k, want) in want.into_iter().enumerate() {
                let g = got[12 * l + k];
                assert_eq!(
                    g,
                    want,
                    "{} lane {l} result {k} of {x:#x}, {y:#x}",
                    t.name()
                );
            }
        }
    }
}

/// The CPU references of `sdwa_forms`, in its order; `true` marks a result compared as a
/// value (clamping may give either zero).
fn sdwa_reference(x: u32, y: u32, z: u32) -> [(u32, bool); 12] {
    let (fx, fy) = (
        x as i32 as f32 * 2f32.powi(-30),
        y as i32 as f32 * 2f32.powi(-30),
    );
    let (hx, hy) = (x & 0xBFFF_BFFF, y & 0xBFFF_BFFF);
    let lo = |v: u32| v & 0xFFFF;
    let f16_sum = h(f16_rne(h(hi(hx)) + h(lo(hy))) as u32);
    let f16_product = f16_rne(-h(hi(hx)) * h(lo(hy)).abs()) as u32;
    let and = (x >> 16) & (y & 0xFF) & 0xFF;
    let placed = and << 8;
    [
        ((fx + fy).clamp(0.0, 1.0).to_bits(), true),
        (((fx * fy) * 2.0).to_bits(), false),
        (((fx - fy) * 0.5).clamp(0.0, 1.0).to_bits(), true),
        ((x as u16 as i16 as f32 * 4.0).to_bits(), false),
        (
            lo(z) | (f16_rne(f16_sum.clamp(0.0, 1.0)) as u32) << 16,
            true,
        ),
        (f16_rne(h(f16_product) * 2.0) as u32, false),
        (
            ((x & 0xFF) as u64 + y as u64).min(u32::MAX as u64) as u32,
            false,
        ),
        ((x as u16 as i16 as f32).to_bits(), false),
        ((x >> 16) ^ y, false),
        (
            if placed & 0x8000 != 0 {
                placed | 0xFFFF_0000
            } else {
                placed
            },
            false,
        ),
        (lo(z) | ((hi(x) + lo(y)) & 0xFFFF) << 16, false),
        (
            ((x as u16 as i16 as i32) < (y as u8 as i8 as i32)) as u32,
            false,
        ),
    ]
}

/// SDWA forms: clamp and output modifiers on f32 and f16 results (the emulator used to ignore
/// them), integer clamp, and source and destination selections on integer, float and compare
/// operations (which run as plans), against the CPU references.
#[test]
fn sdwa_modifiers_and_selections() {
    for t in TARGETS {
        let mut b = Bench::new("valu_more", t);
        let (ins, got) = run_raw(&mut b, "sdwa_forms", 12, 29);
        for l in 0..N {
            let (x, y, z) = (ins[0][l], ins[1][l], ins[2][l]);
            for (k, (want, as_value)) in sdwa_reference(x, y, z).into_iter().enumerate() {
                let g = got[12 * l + k];
                let ok = match (as_value, k) {
                    (false, _) => g == want,
                    (true, 4) => lo16(g) == lo16(want) && h(hi(g)) == h(hi(want)),
                    (true, _) => f32::from_bits(g) == f32::from_bits(want),
                };
                assert!(
                    ok,
                    "{} lane {l} result {k}: got {g:08x} want {want:08x} ({x:08x} {y:08x} {z:08x})",
                    t.name()
                );
            }
        }
    }
}

fn lo16(v: u32) -> u32 {
    v & 0xFFFF
}

/// The special cases the compiler's constant folding knows (LLVM's model of each AMDGPU
/// instruction: NaN sources quieted, the f32 logarithm's denormal sources, whole and quarter
/// revolutions of sin and cos, med3 with NaN sources, signed bit-field extracts reaching past
/// bit 31): `tests/corpus/folded.hip` runs each operation on sources read at run time
/// (`rt_<op>`) and on the same sources as constants the compiler folded (`ct_<op>`); the
/// emulator's results must be the folded ones, bit for bit, on both engines and targets.
#[test]
fn special_cases_match_the_compilers_constant_folding() {
    // (operation, source list, bytes per source, bytes per result)
    const OPS: [(&str, &str, usize, usize); 15] = [
        ("fract_f32", "F32_SRC", 4, 4),
        ("frexp_mant_f32", "F32_SRC", 4, 4),
        ("frexp_exp_f32", "F32_SRC", 4, 4),
        ("sin_f32", "F32_SRC", 4, 4),
        ("cos_f32", "F32_SRC", 4, 4),
        ("log_f32", "F32_SRC", 4, 4),
        ("med3_f32", "F32_SRC", 4, 4),
        ("fract_f64", "F64_SRC", 8, 8),
        ("frexp_mant_f64", "F64_SRC", 8, 8),
        ("fract_f16", "F16_SRC", 2, 2),
        ("sin_f16", "F16_SRC", 2, 2),
        ("frexp_mant_f16", "F16_SRC", 2, 2),
        ("med3_f16", "F16_SRC", 2, 2),
        ("sbfe", "U32_SRC", 4, 4),
        ("ubfe", "U32_SRC", 4, 4),
    ];
    let word = |bytes: &[u8], k: usize, size: usize| {
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(&bytes[k * size..(k + 1) * size]);
        u64::from_le_bytes(w)
    };
    for t in TARGETS {
        let mut b = Bench::new("folded", t);
        assert_uses(
            &b,
            &[
                "v_fract_f32",
                "v_frexp_mant_f32",
                "v_sin_f32",
                "v_cos_f32",
                "v_log_f32",
                "v_med3_f32",
                "v_fract_f64",
                "v_fract_f16",
                "v_sin_f16",
                "v_med3_f16",
                "v_bfe_i32",
            ],
        );
        for (op, list, src_size, size) in OPS {
            // Room for 64 sources; the source kernel writes as many as its list holds.
            let sources = b.zeros::<u8>(64 * src_size);
            b.run1(&format!("sources_{list}"), 1, 1, &[Arg::Buf(sources)]);
            let (run_time, folded) = (b.zeros::<u8>(64 * size), b.zeros::<u8>(64 * size));
            b.run1(
                &format!("rt_{op}"),
                1,
                1,
                &[Arg::Buf(sources), Arg::Buf(run_time)],
            );
            b.run1(&format!("ct_{op}"), 1, 1, &[Arg::Buf(folded)]);
            let (src, got, want) = (
                b.read::<u8>(sources),
                b.read::<u8>(run_time),
                b.read(folded),
            );
            assert!(src.iter().any(|&x| x != 0), "{op}: no source was written");
            for k in 0..64 {
                assert_eq!(
                    word(&got, k, size),
                    word(&want, k, size),
                    "{} {op} case {k} (source {:#x}): emulated against folded",
                    t.name(),
                    word(&src, k, src_size)
                );
            }
        }
    }
}
