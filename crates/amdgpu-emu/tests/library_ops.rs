//! The instructions AMD's library kernels and clang-22's matrix and mixed-precision code use,
//! each run from a corpus kernel (`tests/corpus/library_ops.hip`) on both targets and compared
//! with a CPU reference: 16-bit compares (with cmpx and SDWA forms), 64-bit and f64 LDS
//! atomics, acquire-load cache invalidations, every MFMA shape and its broadcast controls
//! (`tests/corpus/mfma_shapes.hip`), `v_fma_mix*` and buffer accesses checked against the V#'s
//! record count.
#![allow(clippy::needless_range_loop)]

mod common;

use common::{Arg, Bench, Rng, TARGETS, assert_uses};
use half::{bf16, f16};

#[test]
fn sixteen_bit_compares_with_cmpx_and_sdwa() {
    let mut r = Rng(5);
    let n = 256usize;
    // Equal, sign-crossing and random halves, with junk in the high halves.
    let a: Vec<u32> = (0..n)
        .map(|i| match i % 4 {
            0 => 0x1234_8000,
            1 => 0xABCD_0005,
            _ => r.next() as u32,
        })
        .collect();
    let bv: Vec<u32> = (0..n)
        .map(|i| match i % 4 {
            0 => 0x5678_8000,
            1 => 0x0000_FFFB,
            _ => r.next() as u32,
        })
        .collect();
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        assert_uses(
            &b,
            &[
                "v_cmp_ne_u16",
                "v_cmp_le_i16",
                "v_cmp_ge_u16",
                "v_cmpx_ne_u16",
                "v_cmpx_ge_i16",
            ],
        );
        let (ai, bi, out) = (b.buf_of(&a), b.buf_of(&bv), b.zeros::<u32>(n));
        b.run1(
            "cmp16",
            n as u32,
            64,
            &[Arg::Buf(ai), Arg::Buf(bi), Arg::Buf(out)],
        );
        let got = b.read::<u32>(out);
        for i in 0..n {
            let (x, y) = (a[i] as u16, bv[i] as u16);
            let (sx, sy) = (x as i16, y as i16);
            let signed = [
                false,
                sx < sy,
                sx == sy,
                sx <= sy,
                sx > sy,
                sx != sy,
                sx >= sy,
                true,
            ];
            let unsigned = [false, x < y, x == y, x <= y, x > y, x != y, x >= y, true];
            let mut want = 0u32;
            for k in 0..8 {
                want |= (signed[k] as u32) << k | (unsigned[k] as u32) << (8 + k);
            }
            want |= (((a[i] >> 16) as u16 != y) as u32) << 16;
            want |= ((x != y) as u32) << 17 | ((sx >= sy) as u32) << 18;
            assert_eq!(
                got[i],
                want,
                "{} lane {i}: {:08x} vs {:08x}",
                t.name(),
                a[i],
                bv[i]
            );
        }
    }
}

#[test]
fn compiled_sixteen_bit_key_compares() {
    let mut r = Rng(9);
    let n = 300usize;
    let k: Vec<u16> = (0..n)
        .map(|i| if i % 3 == 0 { 7 } else { r.next() as u16 })
        .collect();
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        let (ki, out) = (b.buf_of(&k), b.zeros::<u32>(n));
        b.run1(
            "count_ne16",
            n as u32,
            64,
            &[Arg::Buf(ki), Arg::Buf(out), Arg::U32(n as u32)],
        );
        let got = b.read::<u32>(out);
        for i in 0..n {
            let want = (k[i] != k[(i + 1) % n]) as u32 + 2 * (k[i] <= 0x7FFF) as u32;
            assert_eq!(got[i], want, "{} key {i}", t.name());
        }
    }
}

#[test]
fn lds_64_bit_and_f64_atomics() {
    let mut r = Rng(11);
    let v: Vec<u64> = (0..64).map(|_| r.next()).collect();
    // Integer-valued doubles: the sum is exact in any order.
    let x: Vec<f64> = (0..64).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        assert_uses(
            &b,
            &[
                "ds_min_u64",
                "ds_max_i64",
                "ds_and_b64",
                "ds_xor_b64",
                "ds_add_f64",
                "ds_min_f64",
            ],
        );
        let (vi, xi, out, fout) = (
            b.buf_of(&v),
            b.buf_of(&x),
            b.zeros::<u64>(8),
            b.zeros::<f64>(3),
        );
        b.run1(
            "lds64",
            64,
            64,
            &[Arg::Buf(vi), Arg::Buf(xi), Arg::Buf(out), Arg::Buf(fout)],
        );
        let got = b.read::<u64>(out);
        let want = [
            *v.iter().min().unwrap(),
            v.iter().map(|&y| y as i64).max().unwrap().max(0) as u64,
            v.iter().fold(!0u64, |acc, &y| acc & (y | 0xF0F0)),
            v.iter().fold(0, |acc, &y| acc | y),
            v.iter().fold(0, |acc, &y| acc ^ y),
            v.iter().fold(0u64, |acc, &y| acc.wrapping_sub(y)),
            *v.iter().max().unwrap(),
        ];
        assert_eq!(&got[..7], &want, "{}", t.name());
        // Every lane's max returned an old value no larger than its own or not: at least the
        // lane holding the maximum saw an old value below it.
        assert!(got[7] >= 1 && got[7] <= 64, "{}: {}", t.name(), got[7]);
        let f = b.read::<f64>(fout);
        let sum: f64 = x.iter().sum();
        let min = x.iter().copied().fold(1e300, f64::min);
        let max = x.iter().copied().fold(-1e300, f64::max);
        assert_eq!(f, vec![sum, min, max], "{}", t.name());
    }
}

#[test]
fn system_acquire_loads_invalidate_caches() {
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        let ops: &[&str] = match t {
            amdgpu_emu::Target::Gfx90a => &["buffer_invl2", "buffer_wbinvl1_vol"],
            amdgpu_emu::Target::Gfx942 => &["buffer_inv"],
        };
        assert_uses(&b, ops);
        let (flag, out) = (b.buf_of(&[41u32]), b.zeros::<u32>(64));
        b.run1("acquire_flag", 64, 64, &[Arg::Buf(flag), Arg::Buf(out)]);
        assert_eq!(b.read::<u32>(out), vec![42u32; 64], "{}", t.name());
    }
}

/// The element type of an MFMA shape kernel's A and B (`tests/corpus/mfma_shapes.hip`).
#[derive(Clone, Copy, PartialEq)]
enum Input {
    F32,
    F16,
    Bf16,
    I8,
    F64,
    /// gfx942's 8-bit floats: whether A, then B, is bf8 (E5M2) rather than fp8 (E4M3).
    F8(bool, bool),
}

/// The operation (its kernel is named after it), M, K, blocks, input type, and the one target
/// it exists on (`None`: both).
type ShapeCase = (
    &'static str,
    usize,
    usize,
    usize,
    Input,
    Option<amdgpu_emu::Target>,
);

const SHAPES: &[ShapeCase] = {
    use Input::*;
    use amdgpu_emu::Target::{Gfx90a, Gfx942};
    &[
        ("v_mfma_f32_32x32x1f32", 32, 1, 2, F32, None),
        ("v_mfma_f32_16x16x1f32", 16, 1, 4, F32, None),
        ("v_mfma_f32_4x4x1f32", 4, 1, 16, F32, None),
        ("v_mfma_f32_32x32x2f32", 32, 2, 1, F32, None),
        ("v_mfma_f32_16x16x4f32", 16, 4, 1, F32, None),
        ("v_mfma_f32_32x32x4f16", 32, 4, 2, F16, None),
        ("v_mfma_f32_16x16x4f16", 16, 4, 4, F16, None),
        ("v_mfma_f32_4x4x4f16", 4, 4, 16, F16, None),
        ("v_mfma_f32_32x32x8f16", 32, 8, 1, F16, None),
        ("v_mfma_f32_16x16x16f16", 16, 16, 1, F16, None),
        ("v_mfma_i32_32x32x4i8", 32, 4, 2, I8, None),
        ("v_mfma_i32_16x16x4i8", 16, 4, 4, I8, None),
        ("v_mfma_i32_4x4x4i8", 4, 4, 16, I8, None),
        ("v_mfma_f32_32x32x4bf16_1k", 32, 4, 2, Bf16, None),
        ("v_mfma_f32_16x16x4bf16_1k", 16, 4, 4, Bf16, None),
        ("v_mfma_f32_4x4x4bf16_1k", 4, 4, 16, Bf16, None),
        ("v_mfma_f32_32x32x8bf16_1k", 32, 8, 1, Bf16, None),
        ("v_mfma_f32_16x16x16bf16_1k", 16, 16, 1, Bf16, None),
        ("v_mfma_f64_16x16x4f64", 16, 4, 1, F64, None),
        ("v_mfma_f64_4x4x4f64", 4, 4, 4, F64, None),
        ("v_mfma_i32_32x32x8i8", 32, 8, 1, I8, Some(Gfx90a)),
        ("v_mfma_i32_16x16x16i8", 16, 16, 1, I8, Some(Gfx90a)),
        ("v_mfma_f32_32x32x2bf16", 32, 2, 2, Bf16, Some(Gfx90a)),
        ("v_mfma_f32_16x16x2bf16", 16, 2, 4, Bf16, Some(Gfx90a)),
        ("v_mfma_f32_4x4x2bf16", 4, 2, 16, Bf16, Some(Gfx90a)),
        ("v_mfma_f32_32x32x4bf16", 32, 4, 1, Bf16, Some(Gfx90a)),
        ("v_mfma_f32_16x16x8bf16", 16, 8, 1, Bf16, Some(Gfx90a)),
        ("v_mfma_i32_32x32x16_i8", 32, 16, 1, I8, Some(Gfx942)),
        ("v_mfma_i32_16x16x32_i8", 16, 32, 1, I8, Some(Gfx942)),
        (
            "v_mfma_f32_16x16x32_fp8_fp8",
            16,
            32,
            1,
            F8(false, false),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_16x16x32_fp8_bf8",
            16,
            32,
            1,
            F8(false, true),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_16x16x32_bf8_fp8",
            16,
            32,
            1,
            F8(true, false),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_16x16x32_bf8_bf8",
            16,
            32,
            1,
            F8(true, true),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_32x32x16_fp8_fp8",
            32,
            16,
            1,
            F8(false, false),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_32x32x16_fp8_bf8",
            32,
            16,
            1,
            F8(false, true),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_32x32x16_bf8_fp8",
            32,
            16,
            1,
            F8(true, false),
            Some(Gfx942),
        ),
        (
            "v_mfma_f32_32x32x16_bf8_bf8",
            32,
            16,
            1,
            F8(true, true),
            Some(Gfx942),
        ),
    ]
};

/// The gfx942 8-bit float (FNUZ: fp8 E4M3 with bias 8, bf8 E5M2 with bias 16) of `x`, which
/// must be exactly representable.
fn f8_bits(x: f64, bf8: bool) -> u8 {
    let (mantissa, bias) = if bf8 { (2, 16) } else { (3, 8) };
    if x == 0.0 {
        return 0;
    }
    let e = x.abs().log2().floor() as i32;
    let m = (x.abs() / 2f64.powi(e) - 1.0) * f64::from(1 << mantissa);
    assert!(
        m.fract() == 0.0 && e + bias > 0,
        "{x} is not a normal 8-bit float"
    );
    let sign = if x < 0.0 { 0x80 } else { 0 };
    sign | ((e + bias) as u8) << mantissa | m as u8
}

/// `blocks` products D = A * B + C of row-major A (M x K), B (K x M) and C (M x M), exact.
fn block_products(a: &[f64], b: &[f64], c: &[f64], m: usize, k: usize) -> Vec<f64> {
    let blocks = c.len() / (m * m);
    let mut d = c.to_vec();
    for blk in 0..blocks {
        for i in 0..m {
            for j in 0..m {
                for kk in 0..k {
                    d[(blk * m + i) * m + j] +=
                        a[(blk * m + i) * k + kk] * b[(blk * k + kk) * m + j];
                }
            }
        }
    }
    d
}

/// An MFMA kernel's broadcast controls (`tests/corpus/mfma_shapes.hip`, the `_mods` kernels).
#[derive(Clone, Copy, Default)]
struct Controls {
    cbsz: usize,
    abid: usize,
    blgp: usize,
}

/// An MFMA shape's M, K and blocks.
type Dims = (usize, usize, usize);

/// (block, row or column, first k) of lane `l`'s A or B values in AMD's layout.
fn input_place(l: usize, m: usize, k: usize, blocks: usize) -> (usize, usize, usize) {
    let per_lane = k * m * blocks / 64;
    ((l / m) % blocks, l % m, (l / (m * blocks)) * per_lane)
}

/// The A and B matrices an MFMA with `ctl` multiplies, given the ones its registers hold: each
/// block of an aligned group of 2^cbsz blocks takes A of block `abid` of the group; lane `l`'s
/// B values come from lane `l % 32` (blgp 1), `32 + l % 32` (2), `(l + 16) % 64` (3) or
/// `16 * (blgp - 4) + l % 16` (4-7).
fn controlled(a: &[f64], b: &[f64], (m, k, blocks): Dims, ctl: Controls) -> (Vec<f64>, Vec<f64>) {
    let mut a2 = a.to_vec();
    for blk in 0..blocks {
        let from = (blk >> ctl.cbsz << ctl.cbsz) + ctl.abid;
        a2[blk * m * k..(blk + 1) * m * k].copy_from_slice(&a[from * m * k..(from + 1) * m * k]);
    }
    let mut b2 = b.to_vec();
    for l in 0..64 {
        let src = match ctl.blgp {
            0 => l,
            1 => l % 32,
            2 => 32 + l % 32,
            3 => (l + 16) % 64,
            g => 16 * (g - 4) + l % 16,
        };
        let (blk, j, k0) = input_place(l, m, k, blocks);
        let (sblk, sj, sk0) = input_place(src, m, k, blocks);
        for e in 0..k * m * blocks / 64 {
            b2[(blk * k + k0 + e) * m + j] = b[(sblk * k + sk0 + e) * m + sj];
        }
    }
    (a2, b2)
}

/// Run one MFMA shape kernel on random inputs and compare D with the exact product of the
/// matrices it multiplies. Inputs are multiples of 1/2 (integers for i8) small enough that
/// every sum is exact, so any accumulation order gives these bits; the integer C values sit
/// near the top of the range so that the 32-bit sums wrap. `neg` negates A, B and C (gfx942's
/// f64 controls).
fn check_shape(
    b: &mut Bench,
    r: &mut Rng,
    kernel: &str,
    (m, k, blocks): Dims,
    input: Input,
    ctl: Controls,
    neg: [bool; 3],
) {
    let mut values = |n: usize| -> Vec<f64> {
        (0..n)
            .map(|_| match input {
                Input::I8 => (r.next() % 256) as u8 as i8 as f64,
                _ => (r.next() % 17) as f64 * 0.5 - 4.0,
            })
            .collect()
    };
    let (a, bm) = (values(blocks * m * k), values(blocks * k * m));
    let c: Vec<f64> = (0..blocks * m * m)
        .map(|i| match input {
            Input::I8 => (i32::MAX - (i % 1000) as i32) as f64,
            _ => (i % 13) as f64 * 0.25,
        })
        .collect();
    let put = |b: &mut Bench, v: &[f64]| match input {
        Input::F32 => b.buf_of(&v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        Input::F16 => b.buf_of(&v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>()),
        Input::Bf16 => b.buf_of(
            &v.iter()
                .map(|&x| bf16::from_f64(x).to_bits())
                .collect::<Vec<_>>(),
        ),
        Input::I8 => b.buf_of(&v.iter().map(|&x| x as i8).collect::<Vec<_>>()),
        Input::F64 => b.buf_of(v),
        Input::F8(..) => unreachable!("8-bit floats are encoded per operand"),
    };
    let (ai, bi) = match input {
        Input::F8(a_bf8, b_bf8) => (
            b.buf_of(&a.iter().map(|&x| f8_bits(x, a_bf8)).collect::<Vec<_>>()),
            b.buf_of(&bm.iter().map(|&x| f8_bits(x, b_bf8)).collect::<Vec<_>>()),
        ),
        _ => (put(b, &a), put(b, &bm)),
    };
    let sign =
        |v: &[f64], n: bool| -> Vec<f64> { v.iter().map(|&x| if n { -x } else { x }).collect() };
    let (ua, ub) = controlled(&a, &bm, (m, k, blocks), ctl);
    let want = block_products(
        &sign(&ua, neg[0]),
        &sign(&ub, neg[1]),
        &sign(&c, neg[2]),
        m,
        k,
    );
    let n = c.len();
    let (ci, d) = match input {
        Input::I8 => (
            b.buf_of(&c.iter().map(|&x| x as i32).collect::<Vec<_>>()),
            b.zeros::<i32>(n),
        ),
        Input::F64 => (b.buf_of(&c), b.zeros::<f64>(n)),
        _ => (
            b.buf_of(&c.iter().map(|&x| x as f32).collect::<Vec<_>>()),
            b.zeros::<f32>(n),
        ),
    };
    let args = [Arg::Buf(ai), Arg::Buf(bi), Arg::Buf(ci), Arg::Buf(d)];
    b.run1(kernel, 64, 64, &args);
    match input {
        Input::I8 => {
            let want: Vec<i32> = want.iter().map(|&x| x as i64 as u32 as i32).collect();
            assert_eq!(b.read::<i32>(d), want, "{kernel}");
        }
        Input::F64 => assert_eq!(b.read::<f64>(d), want, "{kernel}"),
        _ => {
            let want: Vec<f32> = want.iter().map(|&x| x as f32).collect();
            assert_eq!(b.read::<f32>(d), want, "{kernel}");
        }
    }
}

/// Every MFMA shape of both targets against the exact product, through the register layouts
/// AMD documents.
#[test]
fn every_mfma_shape_matches_the_block_products() {
    let mut r = Rng(77);
    for t in TARGETS {
        let mut b = Bench::new("mfma_shapes", t);
        for &(op, m, k, blocks, input, only) in SHAPES {
            if only.is_some_and(|o| o != t) {
                continue;
            }
            assert_uses(&b, &[op]);
            let kernel = &op["v_mfma_".len()..];
            let ctl = Controls::default();
            check_shape(
                &mut b,
                &mut r,
                kernel,
                (m, k, blocks),
                input,
                ctl,
                [false; 3],
            );
        }
    }
}

/// The broadcast controls: A of one block used by a group of blocks (cbsz, abid), B's values
/// taken from other lanes (blgp), and on gfx942 the f64 shapes' negated sources. Each kernel
/// (`<shape>_mods` in `tests/corpus/mfma_shapes.hip`) is compared with the product of the
/// matrices the documented rules select; a control gfx942 does not define is refused with a
/// fault naming it.
#[test]
fn mfma_broadcast_controls_select_blocks_lanes_and_signs() {
    use amdgpu_emu::Target::{Gfx90a, Gfx942};
    let ctl = |cbsz, abid, blgp| Controls { cbsz, abid, blgp };
    let cases: &[(&str, Dims, Input, Controls)] = &[
        ("f32_16x16x1f32", (16, 1, 4), Input::F32, ctl(2, 3, 3)),
        ("f32_4x4x1f32", (4, 1, 16), Input::F32, ctl(4, 9, 4)),
        ("f32_4x4x4f16", (4, 4, 16), Input::F16, ctl(3, 5, 6)),
        ("i32_32x32x4i8", (32, 4, 2), Input::I8, ctl(1, 1, 1)),
        ("f32_16x16x4bf16_1k", (16, 4, 4), Input::Bf16, ctl(1, 0, 7)),
        ("f32_32x32x2f32", (32, 2, 1), Input::F32, ctl(0, 0, 2)),
    ];
    let mut r = Rng(78);
    for t in TARGETS {
        let mut b = Bench::new("mfma_shapes", t);
        for &(shape, dims, input, c) in cases {
            let kernel = format!("{shape}_mods");
            check_shape(&mut b, &mut r, &kernel, dims, input, c, [false; 3]);
        }
        // blgp on a one-block f16 shape: defined on gfx90a only.
        let f16_mods = ("f32_32x32x8f16_mods", (32, 8, 1), Input::F16, ctl(0, 0, 5));
        if t == Gfx90a {
            let (kernel, dims, input, c) = f16_mods;
            check_shape(&mut b, &mut r, kernel, dims, input, c, [false; 3]);
        } else {
            let (a, d) = (b.zeros::<f16>(512), b.zeros::<f32>(1024));
            let args = [Arg::Buf(a), Arg::Buf(a), Arg::Buf(d), Arg::Buf(d)];
            let fault = b
                .run(f16_mods.0, [64, 1, 1], [64, 1, 1], &args, 0)
                .unwrap_err();
            let text = fault.to_string();
            assert!(
                text.contains("blgp:5") && text.contains("not defined on gfx942"),
                "{text}"
            );
        }
        if t == Gfx942 {
            let f64_cases = [
                ("f64_16x16x4f64_mods", (16, 4, 1), [true, false, true]),
                ("f64_4x4x4f64_mods", (4, 4, 4), [false, true, false]),
            ];
            for (kernel, dims, neg) in f64_cases {
                check_shape(&mut b, &mut r, kernel, dims, Input::F64, ctl(0, 0, 0), neg);
            }
        }
    }
}

/// A fused multiply-add whose NaN result is the first NaN source made quiet, or the canonical
/// quiet NaN when no source is a NaN.
fn fma_nan_rule(a: f32, b: f32, c: f32) -> f32 {
    let r = a.mul_add(b, c);
    if !r.is_nan() {
        return r;
    }
    let first = [a, b, c].into_iter().find(|x| x.is_nan());
    f32::from_bits(first.map_or(0x7FC0_0000, |x| x.to_bits() | 0x0040_0000))
}

#[test]
fn mixed_precision_fma() {
    let mut r = Rng(21);
    let n = 500usize;
    let mut a: Vec<f16> = (0..n).map(|_| f16::from_f32(r.f32())).collect();
    let mut bv: Vec<f16> = (0..n).map(|_| f16::from_f32(r.f32() * 0.3)).collect();
    let mut c: Vec<f32> = (0..n).map(|_| r.f32() * 1e-3).collect();
    // NaN results: a signalling f16 NaN source, a signalling f32 one, 0 * inf, and two NaN
    // sources (the first wins), each quieted with its payload kept.
    for base in (0..n - 16).step_by(50) {
        a[base + 7] = f16::from_bits(0x7D01);
        c[base + 9] = f32::from_bits(0xFF80_0123);
        (a[base + 11], bv[base + 11]) = (f16::ZERO, f16::INFINITY);
        (a[base + 13], c[base + 13]) = (f16::from_bits(0xFE55), f32::NAN);
    }
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        assert_uses(&b, &["v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16"]);
        let (ai, bi, ci) = (b.buf_of(&a), b.buf_of(&bv), b.buf_of(&c));
        let (out, out16) = (b.zeros::<f32>(n), b.zeros::<u16>(n));
        let args = [
            Arg::Buf(ai),
            Arg::Buf(bi),
            Arg::Buf(ci),
            Arg::Buf(out),
            Arg::Buf(out16),
            Arg::U32(n as u32),
        ];
        b.run1("fma_mix", n as u32, 64, &args);
        let (got, got16) = (b.read::<f32>(out), b.read::<u16>(out16));
        for i in 0..n {
            let want = fma_nan_rule(a[i].to_f32(), bv[i].to_f32(), c[i]);
            assert_eq!(got[i].to_bits(), want.to_bits(), "{} mix_f32 {i}", t.name());
            let w16 = f16::from_f32(fma_nan_rule(
                a[i].to_f32(),
                bv[i].to_f32(),
                bv[(i + 1) % n].to_f32(),
            ));
            assert_eq!(got16[i], w16.to_bits(), "{} mixlo {i}", t.name());
        }
        // Modifiers: -hi(x) * |lo(x)| + y in f32; and lo(x) * hi(x) - y rounded into the high half.
        let ab: Vec<u32> = (0..64)
            .map(|i| {
                let lo = f16::from_f32(i as f32 * 0.75 - 20.0).to_bits() as u32;
                let hi = f16::from_f32(3.5 - i as f32 * 0.125).to_bits() as u32;
                lo | hi << 16
            })
            .collect();
        let y: Vec<f32> = (0..64).map(|i| i as f32 * 0.1).collect();
        let (abi, yi, o) = (b.buf_of(&ab), b.buf_of(&y), b.zeros::<u32>(128));
        b.run1(
            "fma_mix_modifiers",
            64,
            64,
            &[Arg::Buf(abi), Arg::Buf(yi), Arg::Buf(o)],
        );
        let got = b.read::<u32>(o);
        for i in 0..64 {
            let lo = f16::from_bits(ab[i] as u16).to_f32();
            let hi = f16::from_bits((ab[i] >> 16) as u16).to_f32();
            let r0 = (-hi).mul_add(lo.abs(), y[i]);
            assert_eq!(got[2 * i], r0.to_bits(), "{} modifiers {i}", t.name());
            let r1 = f16::from_f32(lo.mul_add(hi, -y[i])).to_bits() as u32;
            assert_eq!(got[2 * i + 1], 0x5678 | r1 << 16, "{} mixhi {i}", t.name());
        }
    }
}

#[test]
fn grid_wide_barrier_runs_work_groups_co_resident() {
    let groups = 24u32;
    let block = 128u32;
    let n = (groups * block) as usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i % 13 + 1).collect();
    for t in TARGETS {
        for threads in [1, 2] {
            let mut b = Bench::with_threads("grid_sync", t, threads);
            assert_uses(&b, &["ds_gws_barrier", "ds_gws_init"]);
            b.run1("gws_init", 64, 64, &[Arg::U32(groups - 1)]);
            let (xi, partial, out) = (
                b.buf_of(&x),
                b.zeros::<u32>(2 * groups as usize),
                b.zeros::<u32>(2 * n),
            );
            let o = b.run1(
                "grid_scale",
                n as u32,
                block,
                &[Arg::Buf(xi), Arg::Buf(partial), Arg::Buf(out)],
            );
            assert_eq!(o.workgroups, groups as u64);
            let got = b.read::<u32>(out);
            for pass in 0..2u32 {
                let total: u32 = x.iter().map(|v| v + pass).sum();
                for i in 0..n {
                    assert_eq!(
                        got[pass as usize * n + i],
                        x[i] * total,
                        "{} pass {pass} item {i}",
                        t.name()
                    );
                }
            }
        }
    }
}

#[test]
fn buffer_accesses_outside_num_records_read_zero_and_drop_stores() {
    let n = 128usize;
    let records = 4 * 100u32; // bytes: dwords 0..100 of the buffers are in range
    let mut r = Rng(31);
    let src: Vec<u32> = (0..n + 32).map(|_| r.next() as u32 | 1).collect();
    let canary = 0xDEAD_BEEFu32;
    for t in TARGETS {
        let mut b = Bench::new("library_ops", t);
        assert_uses(
            &b,
            &[
                "buffer_load_dwordx4",
                "buffer_load_ubyte",
                "buffer_store_dword",
            ],
        );
        let (si, out, dst) = (
            b.buf_of(&src),
            b.zeros::<u32>(8 * n),
            b.buf_of(&vec![canary; n + 8]),
        );
        b.run1(
            "buffer_bounds",
            n as u32,
            64,
            &[
                Arg::Buf(si),
                Arg::Buf(out),
                Arg::Buf(dst),
                Arg::U32(records),
            ],
        );
        let (got, stored) = (b.read::<u32>(out), b.read::<u32>(dst));
        let raw = |byte: usize| -> u32 {
            if byte < records as usize {
                src[byte / 4]
            } else {
                0
            }
        };
        for i in 0..n {
            let o = &got[8 * i..8 * i + 8];
            let name = t.name();
            assert_eq!(o[0], raw(4 * i), "{name} lane {i}: raw dword");
            for k in 0..4 {
                assert_eq!(
                    o[1 + k],
                    raw(4 * (i + k)),
                    "{name} lane {i}: dwordx4 part {k}"
                );
            }
            let byte = if i < records as usize {
                src[i / 4] >> (8 * (i % 4)) & 0xFF
            } else {
                0
            };
            assert_eq!(o[5], byte, "{name} lane {i}: raw byte");
            let structured = if i < records as usize / 8 {
                src[2 * i + 1]
            } else {
                0
            };
            assert_eq!(o[6], structured, "{name} lane {i}: structured dword");
            let shifted = if 4 * i < records as usize {
                src[i + 16]
            } else {
                0
            };
            assert_eq!(
                o[7], shifted,
                "{name} lane {i}: SOFFSET is outside the check"
            );
            let want = if 4 * i < records as usize {
                i as u32 + 1
            } else {
                canary
            };
            assert_eq!(stored[i], want, "{name} lane {i}: store");
        }
    }
}

/// The value of gfx942 8-bit float `byte` (fp8 E4M3 bias 8, or bf8 E5M2 bias 16; FNUZ: 0x80 is
/// the one NaN, no infinities), the reference for the conversions.
fn f8_value(byte: u8, bf8: bool) -> f32 {
    let (mantissa, bias) = if bf8 { (2u32, 16) } else { (3u32, 8) };
    if byte == 0x80 {
        return f32::NAN;
    }
    let (e, m) = (
        ((byte & 0x7F) >> mantissa) as i32,
        (byte & ((1 << mantissa) - 1)) as f64,
    );
    let one = f64::from(1u32 << mantissa);
    let magnitude = if e == 0 {
        m / one * 2f64.powi(1 - bias)
    } else {
        (1.0 + m / one) * 2f64.powi(e - bias)
    };
    (if byte & 0x80 != 0 {
        -magnitude
    } else {
        magnitude
    }) as f32
}

#[test]
fn eight_bit_float_conversions_cover_every_byte() {
    // Known points: FNUZ 1.0 is 0x40 in both formats (OCP's E4M3 would be 0x38), the largest
    // values are 240 and 57344, the smallest denormals 2^-10 and 2^-17.
    assert_eq!(f8_value(0x40, false), 1.0);
    assert_eq!(f8_value(0x40, true), 1.0);
    assert_eq!(f8_value(0x7F, false), 240.0);
    assert_eq!(f8_value(0x7F, true), 57344.0);
    assert_eq!(f8_value(0x01, false), 2f32.powi(-10));
    assert_eq!(f8_value(0x01, true), 2f32.powi(-17));
    assert_eq!(f8_value(0xC0, false), -1.0);
    let t = amdgpu_emu::Target::Gfx942;
    let mut b = Bench::new("library_ops", t);
    assert_uses(
        &b,
        &[
            "v_cvt_f32_fp8",
            "v_cvt_f32_bf8",
            "v_cvt_pk_f32_fp8",
            "v_cvt_pk_f32_bf8",
        ],
    );
    // Lane i holds bytes 4i..4i+3 (mod 256) rotated by the lane, so every byte appears in
    // every position.
    let n = 256usize;
    let words: Vec<u32> = (0..n)
        .map(|i| {
            let k = i.rotate_left(2) as u32;
            u32::from_le_bytes([0, 1, 2, 3].map(|j| (k + j) as u8))
        })
        .collect();
    let (inp, out) = (b.buf_of(&words), b.zeros::<f32>(16 * n));
    b.run1("cvt_f8", n as u32, 64, &[Arg::Buf(inp), Arg::Buf(out)]);
    let got = b.read::<f32>(out);
    for (i, w) in words.iter().enumerate() {
        let bytes = w.to_le_bytes();
        let mut want = Vec::new();
        for bf8 in [false, true] {
            want.extend(bytes.iter().map(|&x| f8_value(x, bf8)));
        }
        for bf8 in [false, true] {
            want.extend(bytes.iter().map(|&x| f8_value(x, bf8)));
        }
        let got = &got[16 * i..16 * i + 16];
        for k in 0..16 {
            let same = if want[k].is_nan() {
                got[k].is_nan()
            } else {
                got[k].to_bits() == want[k].to_bits()
            };
            assert!(
                same,
                "lane {i} word {w:08x} result {k}: {} vs {}",
                got[k], want[k]
            );
        }
    }
}

#[test]
fn work_groups_waiting_on_later_ones_run_co_resident() {
    let block = 64u32;
    for t in TARGETS {
        for threads in [1, 2] {
            // Work-group 0 waits for the last of 100 (all co-resident on a GPU).
            let groups = 100u32;
            let mut b = Bench::with_threads("co_resident", t, threads);
            let (flag, out) = (b.zeros::<u32>(1), b.zeros::<u32>(1 + groups as usize));
            let o = b.run1(
                "wait_for_last",
                groups * block,
                block,
                &[Arg::Buf(flag), Arg::Buf(out)],
            );
            assert_eq!(o.workgroups, groups as u64);
            let got = b.read::<u32>(out);
            assert_eq!(
                got[0],
                groups - 1,
                "{} threads {threads}: flag seen",
                t.name()
            );
            let ran: Vec<u32> = (1..=groups).collect();
            assert_eq!(got[1..], ran[..], "{} threads {threads}", t.name());
            // A grid barrier of a global counter over 40 work-groups of 2 waves.
            let (groups, block) = (40u32, 128u32);
            let n = (groups * block) as usize;
            let (count, partial, out) = (
                b.zeros::<u32>(1),
                b.zeros::<u32>(groups as usize),
                b.zeros::<u32>(n),
            );
            b.run1(
                "counter_barrier",
                n as u32,
                block,
                &[Arg::Buf(count), Arg::Buf(partial), Arg::Buf(out)],
            );
            let want = groups * (groups + 1) / 2;
            assert_eq!(
                b.read::<u32>(out),
                vec![want; n],
                "{} threads {threads}",
                t.name()
            );
        }
    }
}

#[test]
fn a_counter_barrier_wider_than_the_device_ends_at_the_time_limit() {
    // 4 compute units hold at most 4 x 32 one-wave work-groups: the 129th never arrives while
    // the others wait, as on a GPU, and the dispatch ends with the time-limit fault.
    let (groups, block) = (129u32, 64u32);
    let t = amdgpu_emu::Target::Gfx90a;
    let mut b = Bench::with_threads("co_resident", t, 1);
    b.emu = amdgpu_emu::Emulator::new(t, 1).with_time_limit(std::time::Duration::from_secs(10));
    common::COMPARE_ENGINES.with(|c| c.set(false));
    let n = (groups * block) as usize;
    let (count, partial, out) = (
        b.zeros::<u32>(1),
        b.zeros::<u32>(groups as usize),
        b.zeros::<u32>(n),
    );
    let f = b
        .run(
            "counter_barrier",
            [n as u32, 1, 1],
            [block, 1, 1],
            &[Arg::Buf(count), Arg::Buf(partial), Arg::Buf(out)],
            0,
        )
        .expect_err("the barrier is never met");
    assert!(
        matches!(f.kind, amdgpu_emu::FaultKind::TimeLimit { .. }),
        "{f}"
    );
    assert_eq!(b.read::<u32>(count), vec![128], "128 work-groups arrived");
}
