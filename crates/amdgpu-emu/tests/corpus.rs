//! Corpus kernels built with clang-22 for gfx942 and gfx90a, run on the emulator and checked
//! against CPU references (bit-exact unless a bound is stated).
#![allow(clippy::needless_range_loop)]

mod common;
#[allow(unused_imports)]
use common::{Arg, Bench, Rng, TARGETS};

#[test]
fn inc_adds_one_on_both_targets() {
    for t in TARGETS {
        let n = 1000u32;
        let x: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
        let mut b = Bench::new("stream", t);
        let xb = b.buf_of(&x);
        b.run1("inc", n, 256, &[Arg::Buf(xb), Arg::I32(n as i32)]);
        let got: Vec<i32> = b.read(xb);
        let want: Vec<i32> = x.iter().map(|v| v + 1).collect();
        assert_eq!(got, want, "{}", t.name());
    }
}

/// Run a test body on both targets, for the -O3 build and again for the -O0 build.
fn each_target(f: impl Fn(amdgpu_emu::Target)) {
    for variant in ["", "_o0"] {
        common::VARIANT.with(|v| v.set(variant));
        for t in TARGETS {
            f(t);
        }
    }
    common::VARIANT.with(|v| v.set(""));
}

fn inputs_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.f32()).collect()
}

#[test]
fn stream_copy_mul_add_triad() {
    each_target(|t| {
        let n = 3000usize;
        let b0 = inputs_f32(n, 1);
        let c0 = inputs_f32(n, 2);
        let s = 0.4f32;
        let mut b = Bench::new("stream", t);
        let (a, bb, c) = (b.zeros::<f32>(n), b.buf_of(&b0), b.buf_of(&c0));
        let nn = Arg::I32(n as i32);
        b.run1("copy", n as u32, 128, &[Arg::Buf(a), Arg::Buf(c), nn]);
        assert_eq!(b.read::<f32>(a), c0, "copy {}", t.name());
        b.run1(
            "mul",
            n as u32,
            128,
            &[Arg::Buf(a), Arg::Buf(c), Arg::F32(s), nn],
        );
        assert_eq!(
            b.read::<f32>(a),
            c0.iter().map(|x| s * x).collect::<Vec<_>>(),
            "mul {}",
            t.name()
        );
        b.run1(
            "add",
            n as u32,
            256,
            &[Arg::Buf(a), Arg::Buf(bb), Arg::Buf(c), nn],
        );
        assert_eq!(
            b.read::<f32>(a),
            b0.iter().zip(&c0).map(|(x, y)| x + y).collect::<Vec<_>>(),
            "add {}",
            t.name()
        );
        b.run1(
            "triad",
            n as u32,
            64,
            &[Arg::Buf(a), Arg::Buf(bb), Arg::Buf(c), Arg::F32(s), nn],
        );
        // The compiler contracts b + s*c into an fma.
        assert_eq!(
            b.read::<f32>(a),
            b0.iter()
                .zip(&c0)
                .map(|(x, y)| s.mul_add(*y, *x))
                .collect::<Vec<_>>(),
            "triad {}",
            t.name()
        );
    });
}

#[test]
fn triad_f64() {
    each_target(|t| {
        let n = 1000usize;
        let b0: Vec<f64> = inputs_f32(n, 3).iter().map(|&x| x as f64 / 3.0).collect();
        let c0: Vec<f64> = inputs_f32(n, 4).iter().map(|&x| x as f64 / 7.0).collect();
        let mut b = Bench::new("stream", t);
        let (a, bb, c) = (b.zeros::<f64>(n), b.buf_of(&b0), b.buf_of(&c0));
        b.run1(
            "triad_f64",
            n as u32,
            256,
            &[
                Arg::Buf(a),
                Arg::Buf(bb),
                Arg::Buf(c),
                Arg::F64(0.3),
                Arg::I32(n as i32),
            ],
        );
        assert_eq!(
            b.read::<f64>(a),
            b0.iter()
                .zip(&c0)
                .map(|(x, y)| 0.3f64.mul_add(*y, *x))
                .collect::<Vec<_>>(),
            "{}",
            t.name()
        );
    });
}

#[test]
fn dot_with_lds_tree_reduction_and_barriers_in_loops() {
    each_target(|t| {
        let n = 5000usize;
        let a0: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let b0: Vec<f32> = (0..n).map(|i| (i % 5) as f32 - 2.0).collect();
        let mut b = Bench::new("stream", t);
        let (a, bb) = (b.buf_of(&a0), b.buf_of(&b0));
        let blocks = 8usize;
        let p = b.zeros::<f32>(blocks);
        b.run1(
            "dot",
            (blocks * 256) as u32,
            256,
            &[Arg::Buf(a), Arg::Buf(bb), Arg::Buf(p), Arg::I32(n as i32)],
        );
        let got: f32 = b.read::<f32>(p).iter().sum();
        let want: f32 = a0.iter().zip(&b0).map(|(x, y)| x * y).sum();
        assert_eq!(got, want, "{}", t.name());
    });
}

#[test]
fn device_globals_counter_and_table() {
    each_target(|t| {
        let mut b = Bench::new("stream", t);
        let out = b.zeros::<i32>(1);
        for pass in 1..=3 {
            b.run1("count_up", 1000, 128, &[Arg::I32(700)]);
            b.run1("read_counter", 64, 64, &[Arg::Buf(out)]);
            assert_eq!(b.read::<i32>(out)[0], 700 * pass, "{}", t.name());
        }
        let addr = b.symbol_address("counter");
        assert_eq!(
            i32::from_le_bytes(b.mem.read(addr, 4).try_into().unwrap()),
            2100
        );
        let o = b.zeros::<f32>(20);
        b.run1("global_table", 20, 64, &[Arg::Buf(o), Arg::I32(20)]);
        assert_eq!(
            b.read::<f32>(o),
            (0..20)
                .map(|i| ((i & 7) + 1) as f32 * 2.0)
                .collect::<Vec<_>>()
        );
    });
}

#[test]
fn reductions() {
    each_target(|t| {
        let n = 4000usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
        let mut b = Bench::new("reduce", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<i32>(1));
        b.run1(
            "reduce_i32",
            4096,
            1024,
            &[Arg::Buf(vi), Arg::Buf(out), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<i32>(out)[0],
            v.iter().sum::<i32>(),
            "reduce_i32 {}",
            t.name()
        );
        let u: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 3)
            .collect();
        let (ui, um) = (b.buf_of(&u), b.zeros::<u32>(1));
        b.run1(
            "reduce_max_u32",
            1024,
            256,
            &[Arg::Buf(ui), Arg::Buf(um), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<u32>(um)[0],
            *u.iter().max().unwrap(),
            "max {}",
            t.name()
        );
        let d: Vec<f64> = (0..n).map(|i| (i % 13) as f64 * 0.25).collect();
        let (di, dp) = (b.buf_of(&d), b.zeros::<f64>(4));
        b.run1(
            "reduce_f64",
            1024,
            256,
            &[Arg::Buf(di), Arg::Buf(dp), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<f64>(dp).iter().sum::<f64>(),
            d.iter().sum::<f64>(),
            "f64 {}",
            t.name()
        );
    });
}

#[test]
fn block_prefix_scan() {
    each_target(|t| {
        let n = 1024usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i % 9) - 3).collect();
        let mut b = Bench::new("reduce", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<i32>(n));
        b.run1("scan_block", n as u32, 256, &[Arg::Buf(vi), Arg::Buf(out)]);
        let mut want = vec![0; n];
        for blk in 0..4 {
            let mut s = 0;
            for i in 0..256 {
                s += v[blk * 256 + i];
                want[blk * 256 + i] = s;
            }
        }
        assert_eq!(b.read::<i32>(out), want, "{}", t.name());
    });
}

#[test]
fn global_atomics_integer_float_and_cas() {
    each_target(|t| {
        let n = 2000usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 20011 - 10000).collect();
        let mut b = Bench::with_threads("atomics", t, 2);
        let vi = b.buf_of(&v);
        let c = b.buf_of(&[0i32, i32::MIN, i32::MAX, -1, 0, 0, 0]);
        b.run1(
            "atomic_ops_i32",
            n as u32,
            256,
            &[Arg::Buf(c), Arg::Buf(vi), Arg::I32(n as i32)],
        );
        let got = b.read::<i32>(c);
        let want = [
            v.iter().sum::<i32>(),
            *v.iter().max().unwrap(),
            *v.iter().min().unwrap(),
            v.iter().fold(-1, |a, x| a & (x | 0x7ff0)),
            v.iter().fold(0, |a, x| a | (x & 0x0ff0)),
            v.iter().fold(0, |a, x| a ^ x),
            n as i32,
        ];
        assert_eq!(got, want, "i32 {}", t.name());
        let u: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let ui = b.buf_of(&u);
        let cu = b.buf_of(&[0u64, 0, u64::MAX, 0]);
        b.run1(
            "atomic_ops_u64",
            n as u32,
            128,
            &[Arg::Buf(cu), Arg::Buf(ui), Arg::I32(n as i32)],
        );
        let want = [
            u.iter().fold(0u64, |a, x| a.wrapping_add(*x)),
            *u.iter().max().unwrap(),
            *u.iter().min().unwrap(),
            u.iter().fold(0, |a, x| a ^ x),
        ];
        assert_eq!(b.read::<u64>(cu), want, "u64 {}", t.name());
        // Small integers: every order of float additions gives the same sum.
        let fv: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let (fi, fs) = (b.buf_of(&fv), b.zeros::<f32>(1));
        b.run1(
            "atomic_add_f32",
            n as u32,
            256,
            &[Arg::Buf(fs), Arg::Buf(fi), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<f32>(fs)[0],
            fv.iter().sum::<f32>(),
            "f32 {}",
            t.name()
        );
        let dv: Vec<f64> = (0..n).map(|i| (i % 11) as f64 * 0.5).collect();
        let (di, ds) = (b.buf_of(&dv), b.zeros::<f64>(1));
        b.run1(
            "atomic_add_f64",
            n as u32,
            256,
            &[Arg::Buf(ds), Arg::Buf(di), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<f64>(ds)[0],
            dv.iter().sum::<f64>(),
            "f64 {}",
            t.name()
        );
        let mv = inputs_f32(n, 9);
        let (mi, mm) = (b.buf_of(&mv), b.buf_of(&[-1000.0f32]));
        b.run1(
            "cas_max_f32",
            n as u32,
            64,
            &[Arg::Buf(mm), Arg::Buf(mi), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<f32>(mm)[0],
            mv.iter().cloned().fold(f32::MIN, f32::max),
            "cas {}",
            t.name()
        );
        let (slots, next) = (b.zeros::<i32>(n), b.zeros::<i32>(1));
        b.run1(
            "atomic_xchg_slots",
            n as u32,
            128,
            &[Arg::Buf(slots), Arg::Buf(next), Arg::I32(n as i32)],
        );
        let mut s = b.read::<i32>(slots);
        s.sort();
        assert_eq!(s, (1..=n as i32).collect::<Vec<_>>(), "xchg {}", t.name());
    });
}

#[test]
fn histogram_with_lds_atomics() {
    each_target(|t| {
        let n = 10000usize;
        let nbins = 37;
        let v: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2246822519) >> 7)
            .collect();
        let mut b = Bench::new("atomics", t);
        let (vi, bins) = (b.buf_of(&v), b.zeros::<u32>(nbins));
        b.run1(
            "histogram",
            2048,
            256,
            &[
                Arg::Buf(vi),
                Arg::Buf(bins),
                Arg::I32(n as i32),
                Arg::I32(nbins as i32),
            ],
        );
        let mut want = vec![0u32; nbins];
        for x in &v {
            want[(*x % nbins as u32) as usize] += 1;
        }
        assert_eq!(b.read::<u32>(bins), want, "{}", t.name());
        let li: Vec<i32> = (0..512).map(|i| (i * 7) % 1000 - 400).collect();
        let (l, out) = (b.buf_of(&li), b.zeros::<i32>(10));
        b.run1("lds_atomics", 512, 256, &[Arg::Buf(l), Arg::Buf(out)]);
        let got = b.read::<i32>(out);
        for blk in 0..2 {
            let s = &li[blk * 256..blk * 256 + 256];
            let want = [
                s.iter().sum::<i32>(),
                *s.iter().max().unwrap(),
                *s.iter().min().unwrap(),
                s.iter().fold(0, |a, x| a ^ x),
                s.iter().map(|x| (x & 15) as f32).sum::<f32>() as i32,
            ];
            assert_eq!(&got[blk * 5..blk * 5 + 5], &want, "{}", t.name());
        }
    });
}

#[test]
fn loops_divergence_and_early_return() {
    each_target(|t| {
        let n = 1500usize;
        let v: Vec<u32> = (1..=n as u32).collect();
        let mut b = Bench::new("control", t);
        let (vi, s) = (b.buf_of(&v), b.zeros::<u32>(n));
        b.run1(
            "collatz",
            n as u32,
            256,
            &[Arg::Buf(vi), Arg::Buf(s), Arg::I32(n as i32)],
        );
        let want: Vec<u32> = v
            .iter()
            .map(|&x0| {
                let (mut x, mut s) = (x0, 0);
                while x != 1 && s < 1000 {
                    x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
                    s += 1;
                }
                s
            })
            .collect();
        assert_eq!(b.read::<u32>(s), want, "collatz {}", t.name());
        let iv: Vec<i32> = (0..n as i32).map(|i| (i * 97) % 401 - 200).collect();
        let (ii, out) = (b.buf_of(&iv), b.buf_of(&vec![12345i32; n]));
        b.run1(
            "nested_divergence",
            n as u32,
            128,
            &[Arg::Buf(ii), Arg::Buf(out), Arg::I32(n as i32)],
        );
        let want: Vec<i32> = iv
            .iter()
            .map(|&x| {
                if x > 0 {
                    if x & 1 != 0 {
                        x * 3
                    } else if x & 2 != 0 {
                        x - 7
                    } else {
                        (0..(x & 7)).map(|k| k * x).sum()
                    }
                } else if x < -100 {
                    12345
                } else {
                    let mut r = -x;
                    for k in 0..3 {
                        if (r >> k) & 1 != 0 {
                            r ^= 0x55 << k;
                        }
                    }
                    r
                }
            })
            .collect();
        assert_eq!(b.read::<i32>(out), want, "divergence {}", t.name());
    });
}

#[test]
fn multi_dimensional_grids_and_blocks() {
    each_target(|t| {
        let (w, h) = (37u32, 21u32);
        let mut b = Bench::new("control", t);
        let out = b.zeros::<f32>((w * h) as usize);
        b.run(
            "grid2d",
            [48, 24, 1],
            [16, 8, 1],
            &[Arg::Buf(out), Arg::I32(w as i32), Arg::I32(h as i32)],
            0,
        )
        .unwrap();
        let want: Vec<f32> = (0..h)
            .flat_map(|y| (0..w).map(move |x| x as f32 * 0.5 + y as f32))
            .collect();
        assert_eq!(b.read::<f32>(out), want, "grid2d {}", t.name());
        let (bx, by, bz) = (4u32, 3u32, 5u32);
        let per = (bx * by * bz) as usize;
        let o3 = b.zeros::<u32>(per * 8);
        b.run(
            "block3d",
            [2 * bx, 2 * by, 2 * bz],
            [bx, by, bz],
            &[Arg::Buf(o3)],
            0,
        )
        .unwrap();
        let got = b.read::<u32>(o3);
        for wg in 0..8u32 {
            for z in 0..bz {
                for y in 0..by {
                    for x in 0..bx {
                        let lin = ((z * by + y) * bx + x) as usize;
                        assert_eq!(
                            got[wg as usize * per + lin],
                            (x << 20) | (y << 10) | z | (wg << 28),
                            "block3d {}",
                            t.name()
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn calls_generic_pointers_and_private_arrays() {
    each_target(|t| {
        let n = 500usize;
        let v = inputs_f32(n, 5);
        let mut b = Bench::new("control", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<f32>(n));
        b.run1(
            "call_poly",
            n as u32,
            128,
            &[Arg::Buf(vi), Arg::Buf(out), Arg::I32(n as i32)],
        );
        let want: Vec<f32> = v
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let mut r = 0f32;
                for j in 0..=(i % 5) {
                    r = r.mul_add(x, (j + 1) as f32);
                }
                r
            })
            .collect();
        let got = b.read::<f32>(out);
        for i in 0..n {
            // Either contraction choice of r * x + c is acceptable to the compiler; accept the
            // fused reference or the unfused one exactly.
            let mut r2 = 0f32;
            for j in 0..=(i % 5) {
                r2 = r2 * v[i] + (j + 1) as f32;
            }
            assert!(
                got[i] == want[i] || got[i] == r2,
                "call_poly {} lane {i}: {} vs {}",
                t.name(),
                got[i],
                want[i]
            );
        }
        let iv: Vec<i32> = (0..128).map(|i| i * 3 - 50).collect();
        let (ii, o2) = (b.buf_of(&iv), b.zeros::<i32>(128));
        b.run1("generic_ptrs", 128, 64, &[Arg::Buf(ii), Arg::Buf(o2)]);
        // The kernel indexes its input by the work-item id within the block.
        let want: Vec<i32> = (0..128)
            .map(|i| {
                let x = iv[i % 64];
                let a: i32 = (0..4).map(|k| x + k + k).sum();
                let b: i32 = (0..4).map(|k| x * k + k).sum();
                a * 1000 + b
            })
            .collect();
        assert_eq!(b.read::<i32>(o2), want, "generic_ptrs {}", t.name());
        let idx: Vec<u32> = (0..n as u32).map(|i| i * 7 % 23).collect();
        let (xi, o3) = (b.buf_of(&idx), b.zeros::<u32>(n));
        b.run1(
            "private_array",
            n as u32,
            64,
            &[Arg::Buf(xi), Arg::Buf(o3), Arg::I32(n as i32)],
        );
        let want: Vec<u32> = (0..n as u32)
            .map(|i| {
                let a: Vec<u32> = (0..17u32).map(|k| i * k + k * k).collect();
                (0..8u32)
                    .map(|k| a[((idx[i as usize] + k * 5) % 17) as usize])
                    .fold(0u32, |s, x| s.wrapping_add(x))
            })
            .collect();
        assert_eq!(b.read::<u32>(o3), want, "private_array {}", t.name());
    });
}

#[test]
fn stencil_and_tiled_matmul() {
    each_target(|t| {
        let (w, h) = (40usize, 30usize);
        let v = inputs_f32(w * h, 6);
        let mut b = Bench::new("control", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<f32>(w * h));
        b.run(
            "stencil2d",
            [48, 32, 1],
            [16, 16, 1],
            &[
                Arg::Buf(vi),
                Arg::Buf(out),
                Arg::I32(w as i32),
                Arg::I32(h as i32),
            ],
            0,
        )
        .unwrap();
        let got = b.read::<f32>(out);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let c = v[y * w + x];
                let s =
                    v[y * w + x - 1] + v[y * w + x + 1] + v[(y - 1) * w + x] + v[(y + 1) * w + x];
                let fused = 0.125f32.mul_add(s, 0.5 * c);
                let plain = 0.5 * c + 0.125 * s;
                let g = got[y * w + x];
                assert!(
                    g == fused || g == plain,
                    "stencil {} ({x},{y}): {g} vs {plain}",
                    t.name()
                );
            }
        }
        let n = 48usize;
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let bm: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
        let (ai, bi, ci) = (b.buf_of(&a), b.buf_of(&bm), b.zeros::<f32>(n * n));
        b.run(
            "matmul_tiled",
            [n as u32, n as u32, 1],
            [16, 16, 1],
            &[Arg::Buf(ai), Arg::Buf(bi), Arg::Buf(ci), Arg::I32(n as i32)],
            0,
        )
        .unwrap();
        let got = b.read::<f32>(ci);
        for r in 0..n {
            for c in 0..n {
                let want: f32 = (0..n).fold(0.0, |acc, k| a[r * n + k].mul_add(bm[k * n + c], acc));
                assert_eq!(got[r * n + c], want, "matmul {} ({r},{c})", t.name());
            }
        }
    });
}

#[test]
fn wave_ballot_and_mbcnt() {
    each_target(|t| {
        let n = 256usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i * 13) % 29).collect();
        let mut b = Bench::new("control", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<u32>(n / 64));
        b.run1(
            "ballot_count",
            n as u32,
            128,
            &[Arg::Buf(vi), Arg::Buf(out), Arg::I32(n as i32)],
        );
        let want: Vec<u32> = (0..n / 64)
            .map(|w| {
                v[w * 64..w * 64 + 64]
                    .iter()
                    .filter(|&&x| x & 3 == 1)
                    .count() as u32
            })
            .collect();
        assert_eq!(b.read::<u32>(out), want, "{}", t.name());
        let mut b = Bench::new("xlane", t);
        let (vi, out, cnt) = (
            b.buf_of(&v),
            b.buf_of(&vec![-1i32; n]),
            b.zeros::<u32>(n / 64),
        );
        b.run1(
            "mbcnt_compact",
            n as u32,
            256,
            &[Arg::Buf(vi), Arg::Buf(out), Arg::Buf(cnt)],
        );
        let got = b.read::<i32>(out);
        for w in 0..n / 64 {
            let kept: Vec<i32> = v[w * 64..w * 64 + 64]
                .iter()
                .cloned()
                .filter(|x| x % 3 == 0)
                .collect();
            assert_eq!(
                &got[w * 64..w * 64 + kept.len()],
                &kept[..],
                "compact {}",
                t.name()
            );
            assert_eq!(b.read::<u32>(cnt)[w], kept.len() as u32);
        }
    });
}

#[test]
fn cross_lane_bpermute_readlane_dpp() {
    each_target(|t| {
        let n = 128usize;
        let v: Vec<i32> = (0..n as i32).map(|i| i * 11 + 3).collect();
        let mut b = Bench::new("xlane", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<i32>(5 * n));
        b.run1("xlane", n as u32, 64, &[Arg::Buf(vi), Arg::Buf(out)]);
        let got = b.read::<i32>(out);
        for i in 0..n {
            let (w, l) = (i / 64 * 64, i % 64);
            let quad = [3, 2, 1, 0][l & 3];
            let want = [
                v[w + (l + 1) % 64],
                v[w + 5],
                v[w] + 7,
                v[w + (l & !3) + quad],
                if l % 16 == 0 { 0 } else { v[w + l - 1] },
            ];
            assert_eq!(&got[5 * i..5 * i + 5], &want, "{} lane {i}", t.name());
        }
    });
}

#[test]
fn bpermute_reads_zero_from_inactive_lanes() {
    each_target(|t| {
        let n = 128usize;
        let mut b = Bench::new("xlane", t);
        let out = b.buf_of(&vec![0xFFFF_FFFFu32; n]);
        b.run1("bpermute_inactive", n as u32, 64, &[Arg::Buf(out)]);
        let got = b.read::<u32>(out);
        for i in 0..n {
            let l = i % 64;
            let want = if l < 32 { 0 } else { (l ^ 1) as u32 + 100 };
            assert_eq!(got[i], want, "{} lane {i}", t.name());
        }
    });
}

#[test]
fn dpp_atomic_optimizer_reductions() {
    each_target(|t| {
        let n = 3000usize;
        let v: Vec<i32> = (0..n as i32).map(|i| (i * 31) % 1000 - 300).collect();
        let mut b = Bench::new("dpp", t);
        let (vi, s, m) = (b.buf_of(&v), b.zeros::<i32>(1), b.zeros::<u32>(1));
        b.run1(
            "dpp_atomic_sum",
            n as u32,
            256,
            &[Arg::Buf(vi), Arg::Buf(s), Arg::Buf(m), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<i32>(s)[0],
            v.iter().sum::<i32>(),
            "sum {}",
            t.name()
        );
        assert_eq!(
            b.read::<u32>(m)[0],
            v.iter()
                .map(|&x| (x as u32).wrapping_mul(2654435761))
                .max()
                .unwrap(),
            "max {}",
            t.name()
        );
        let fv: Vec<f32> = (0..n).map(|i| (i % 9) as f32).collect();
        let (fi, fs) = (b.buf_of(&fv), b.zeros::<f32>(1));
        b.run1(
            "dpp_atomic_f32",
            n as u32,
            256,
            &[Arg::Buf(fi), Arg::Buf(fs), Arg::I32(n as i32)],
        );
        assert_eq!(
            b.read::<f32>(fs)[0],
            fv.iter().sum::<f32>(),
            "f32 {}",
            t.name()
        );
    });
}

fn ulp_diff32(a: f32, b: f32) -> u32 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    let (x, y) = (a.to_bits() as i32, b.to_bits() as i32);
    let m = |v: i32| if v < 0 { i32::MIN - v } else { v };
    (m(x) as i64 - m(y) as i64).unsigned_abs() as u32
}

#[test]
fn fp64_and_fp32_division_and_sqrt() {
    each_target(|t| {
        let mut a: Vec<f64> = inputs_f32(600, 7)
            .iter()
            .map(|&x| x as f64 * 1.37)
            .collect();
        let mut bv: Vec<f64> = inputs_f32(600, 8)
            .iter()
            .map(|&x| x as f64 * 0.71 + 0.01)
            .collect();
        // Edge cases of the division sequence: tiny and huge quotients, zeros, infinities.
        for (x, y) in [
            (1e-300, 1e10),
            (1e300, 1e-10),
            (0.0, 3.0),
            (5.0, 0.0),
            (f64::INFINITY, 2.0),
            (1.0, 3.0),
            (-7.0, 1e-310),
            (2.5e-310, 3.0),
        ] {
            a.push(x);
            bv.push(y);
        }
        let n = a.len();
        let mut b = Bench::new("numeric", t);
        let (ai, bi, out) = (b.buf_of(&a), b.buf_of(&bv), b.zeros::<f64>(4 * n));
        b.run1(
            "fp64_ops",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<f64>(out);
        for i in 0..n {
            let (x, y) = (a[i], bv[i]);
            let want = [x.mul_add(y, x), x / y, x.mul_add(y, -x), x.abs().sqrt()];
            for k in 0..4 {
                let g = got[4 * i + k];
                assert!(
                    g.to_bits() == want[k].to_bits() || (g.is_nan() && want[k].is_nan()),
                    "fp64 {} op {k} {x}/{y}: {g:e} vs {:e}",
                    t.name(),
                    want[k]
                );
            }
        }
        let mut fa: Vec<f32> = inputs_f32(1000, 10);
        let mut fb: Vec<f32> = inputs_f32(1000, 11).iter().map(|x| x + 0.001).collect();
        for (x, y) in [
            (1e-38f32, 1e10f32),
            (3e38, 1e-3),
            (0.0, 2.0),
            (1.0, 0.0),
            (1.0, 3.0),
            (1e-40, 3.0),
            (-5.0, 1e-41),
        ] {
            fa.push(x);
            fb.push(y);
        }
        let n = fa.len();
        let (ai, bi, out) = (b.buf_of(&fa), b.buf_of(&fb), b.zeros::<f32>(n));
        b.run1(
            "fp32_div",
            n as u32,
            256,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<f32>(out);
        for i in 0..n {
            let want = fa[i] / fb[i];
            assert!(
                got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan()),
                "fp32 div {} {}/{}: {:e} vs {want:e}",
                t.name(),
                fa[i],
                fb[i],
                got[i]
            );
        }
    });
}

#[test]
fn integer_division_and_modulo() {
    each_target(|t| {
        let mut r = Rng(77);
        let mut a: Vec<i32> = (0..800).map(|_| r.next() as i32).collect();
        let mut bv: Vec<i32> = (0..800)
            .map(|i| {
                if i % 3 == 0 {
                    (r.next() % 100) as i32 + 1
                } else {
                    r.next() as i32 | 1
                }
            })
            .collect();
        a.extend([i32::MIN, 7, -7, 0, i32::MAX]);
        bv.extend([-3, -2, 2, 5, 1]);
        let n = a.len();
        let mut b = Bench::new("numeric", t);
        let (ai, bi, out) = (b.buf_of(&a), b.buf_of(&bv), b.zeros::<i32>(4 * n));
        b.run1(
            "int_divmod32",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<i32>(out);
        for i in 0..n {
            let (x, y) = (a[i], bv[i]);
            let want = [
                x.wrapping_div(y),
                x.wrapping_rem(y),
                ((x as u32) / (y as u32)) as i32,
                ((x as u32) % (y as u32)) as i32,
            ];
            assert_eq!(
                &got[4 * i..4 * i + 4],
                &want,
                "divmod32 {} {x} {y}",
                t.name()
            );
        }
        let a64: Vec<i64> = (0..500).map(|i| (r.next() as i64) >> (i % 40)).collect();
        let b64: Vec<i64> = (0..500)
            .map(|i| ((r.next() as i64) >> (i % 60)) | 1)
            .collect();
        let n = a64.len();
        let (ai, bi, out) = (b.buf_of(&a64), b.buf_of(&b64), b.zeros::<i64>(4 * n));
        b.run1(
            "int_divmod64",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<i64>(out);
        for i in 0..n {
            let (x, y) = (a64[i], b64[i]);
            let want = [
                x.wrapping_div(y),
                x.wrapping_rem(y),
                ((x as u64) / (y as u64)) as i64,
                ((x as u64) % (y as u64)) as i64,
            ];
            assert_eq!(
                &got[4 * i..4 * i + 4],
                &want,
                "divmod64 {} {x} {y}",
                t.name()
            );
        }
    });
}

#[test]
fn math_builtins_within_documented_bounds() {
    each_target(|t| {
        let v: Vec<f32> = inputs_f32(1000, 12).iter().map(|x| x * 0.8).collect();
        let n = v.len();
        let mut b = Bench::new("numeric", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<f32>(8 * n));
        b.run1(
            "math_f32",
            n as u32,
            128,
            &[Arg::Buf(vi), Arg::Buf(out), Arg::I32(n as i32)],
        );
        let got = b.read::<f32>(out);
        for i in 0..n {
            let x = v[i];
            // fmax/fmin, not clamp: the kernel's NaN handling is what the reference follows.
            #[allow(clippy::manual_clamp)]
            let exact = [
                (x.abs().sqrt(), 1),
                (x.exp(), 2),
                ((x.abs() + 1.0).ln(), 2),
                (x.sin(), 2),
                (x.cos(), 2),
                ((x * 3.5).floor(), 0),
                (x.mul_add(1.25, -0.75), 0),
                (
                    x.max(-1.5).min(2.5) + x.trunc() + x.ceil() + x.round_ties_even(),
                    0,
                ),
            ];
            for (k, (want, ulps)) in exact.iter().enumerate() {
                let g = got[8 * i + k];
                // sin/cos: the native lowering scales by 1/(2*pi) in f32 first, so the bound is
                // absolute (the f32 rounding of x/(2*pi) times 2*pi): 1e-6 for |x| < 10.
                let close = ulp_diff32(g, *want) <= *ulps
                    || ((k == 3 || k == 4) && (g - want).abs() < 1e-6);
                assert!(close, "math {} op {k} x={x}: {g:e} vs {want:e}", t.name());
            }
        }
    });
}

/// f64 -> f16 rounded once (`half`'s `from_f64` rounds through f32 where the CPU has F16C):
/// through f32 rounded to odd, whose last bit keeps what the f32 rounding dropped.
fn f16_once(x: f64) -> half::f16 {
    let mut f = x as f32;
    if (f as f64).abs() > x.abs() {
        f = f32::from_bits(f.to_bits() - 1);
    }
    if !x.is_nan() && f as f64 != x {
        f = f32::from_bits(f.to_bits() | 1);
    }
    half::f16::from_f32(f)
}

#[test]
fn half_precision_and_conversions() {
    use half::f16;
    each_target(|t| {
        let n = 700usize;
        let a: Vec<f16> = inputs_f32(n, 13)
            .iter()
            .map(|&x| f16::from_f32(x))
            .collect();
        let bv: Vec<f16> = inputs_f32(n, 14)
            .iter()
            .map(|&x| f16::from_f32(x * 0.5))
            .collect();
        let mut b = Bench::new("numeric", t);
        let (ai, bi, out, outf) = (
            b.buf_of(&a),
            b.buf_of(&bv),
            b.zeros::<u16>(3 * n),
            b.zeros::<f32>(n),
        );
        b.run1(
            "half_ops",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::Buf(outf),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<u16>(out);
        let gotf = b.read::<f32>(outf);
        for i in 0..n {
            let (x, y) = (a[i].to_f64(), bv[i].to_f64());
            let fused = f16_once(x.mul_add(y, x)).to_bits();
            let sep = f16::from_f32(f16::from_f32((x * y) as f32).to_f32() + x as f32).to_bits();
            assert!(
                got[3 * i] == fused || got[3 * i] == sep,
                "half fma {}",
                t.name()
            );
            assert_eq!(
                got[3 * i + 1],
                f16::from_f64(x - y).to_bits(),
                "half sub {}",
                t.name()
            );
            assert_eq!(
                got[3 * i + 2],
                if x > y { a[i] } else { bv[i] }.to_bits(),
                "half max {}",
                t.name()
            );
            assert_eq!(
                gotf[i],
                a[i].to_f32() * bv[i].to_f32(),
                "half to float {}",
                t.name()
            );
        }
        let v: Vec<f32> = inputs_f32(n, 15).iter().map(|x| x * 1000.0).collect();
        let (vi, oi, ou, od, oh) = (
            b.buf_of(&v),
            b.zeros::<i32>(n),
            b.zeros::<u32>(n),
            b.zeros::<f64>(n),
            b.zeros::<u16>(n),
        );
        b.run1(
            "conversions",
            n as u32,
            128,
            &[
                Arg::Buf(vi),
                Arg::Buf(oi),
                Arg::Buf(ou),
                Arg::Buf(od),
                Arg::Buf(oh),
                Arg::I32(n as i32),
            ],
        );
        let (gi, gu, gd, gh) = (
            b.read::<i32>(oi),
            b.read::<u32>(ou),
            b.read::<f64>(od),
            b.read::<u16>(oh),
        );
        for i in 0..n {
            let x = v[i];
            assert_eq!(gi[i], x as i32);
            assert_eq!(gu[i], x.abs() as u32);
            assert_eq!(
                gd[i],
                (x as f64).mul_add(3.0, (x as i32) as f64),
                "f64 {} {x}",
                t.name()
            );
            assert_eq!(gh[i], f16::from_f32(x).to_bits());
        }
    });
}

#[test]
fn bit_and_integer_operations() {
    each_target(|t| {
        let n = 600usize;
        let mut r = Rng(99);
        let a: Vec<u32> = (0..n)
            .map(|i| {
                if i % 17 == 0 {
                    0
                } else {
                    r.next() as u32 >> (i % 13)
                }
            })
            .collect();
        let bb: Vec<u64> = (0..n).map(|_| r.next()).collect();
        let mut b = Bench::new("numeric", t);
        let (ai, bi, out) = (b.buf_of(&a), b.buf_of(&bb), b.zeros::<u32>(8 * n));
        b.run1(
            "bit_ops",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<u32>(out);
        for i in 0..n {
            let (x, y) = (a[i], bb[i]);
            let s = (i & 31) as u32;
            let want = [
                x.count_ones(),
                if x == 0 { 32 } else { x.leading_zeros() },
                if x == 0 { 32 } else { x.trailing_zeros() },
                x.reverse_bits(),
                (x << s) | (x >> ((32 - s) & 31)),
                ((y >> (i & 63)) as u32) ^ ((y << 3) as u32),
                x.swap_bytes().wrapping_add(y.count_ones()),
                ((y.wrapping_mul(0x9E3779B97F4A7C15)) >> 32) as u32
                    + ((x >> 4) & 0xff) * ((x >> 12) & 0xfff),
            ];
            assert_eq!(&got[8 * i..8 * i + 8], &want, "bits {} i={i}", t.name());
        }
        let ia: Vec<i32> = (0..n).map(|_| r.next() as i32).collect();
        let ib: Vec<i32> = (0..n).map(|_| r.next() as i32).collect();
        let (xi, yi, o2) = (b.buf_of(&ia), b.buf_of(&ib), b.zeros::<i32>(6 * n));
        b.run1(
            "int_misc",
            n as u32,
            64,
            &[Arg::Buf(xi), Arg::Buf(yi), Arg::Buf(o2), Arg::I32(n as i32)],
        );
        let got = b.read::<i32>(o2);
        for i in 0..n {
            let (x, y) = (ia[i], ib[i]);
            let want = [
                x.min(y),
                x.wrapping_mul(y) ^ (x >> 3),
                ((x as i64 * y as i64) >> 32) as i32,
                ((x as u32 as u64 * y as u32 as u64) >> 32) as i32,
                x.wrapping_abs(),
                (x as i16 as i32) * (y as i8 as i32),
            ];
            assert_eq!(&got[6 * i..6 * i + 6], &want, "int {} i={i}", t.name());
        }
        let bytes: Vec<u8> = (0..3 * n).map(|i| (i * 37 % 256) as u8).collect();
        let (bi, o3) = (b.buf(&bytes), b.zeros::<u16>(n));
        b.run1(
            "bytes_shorts",
            n as u32,
            64,
            &[Arg::Buf(bi), Arg::Buf(o3), Arg::I32(n as i32)],
        );
        let want: Vec<u16> = (0..n)
            .map(|i| (bytes[3 * i + 1] as i32 * 3 + bytes[3 * i + 2] as i8 as i32) as u16)
            .collect();
        assert_eq!(b.read::<u16>(o3), want, "bytes {}", t.name());
    });
}

#[test]
fn flush_denormals_to_zero_build() {
    each_target(|t| {
        let mut a: Vec<f32> = inputs_f32(300, 16);
        let mut bv: Vec<f32> = inputs_f32(300, 17).iter().map(|x| x + 0.01).collect();
        a.extend([1e-20, 3e-39, 1e-30, -2e-38]);
        bv.extend([1e-20, 2.0, 1e10, 1.5]);
        let n = a.len();
        let mut b = Bench::new("ftz", t);
        let (ai, bi, out) = (b.buf_of(&a), b.buf_of(&bv), b.zeros::<f32>(3 * n));
        b.run1(
            "ftz_ops",
            n as u32,
            64,
            &[
                Arg::Buf(ai),
                Arg::Buf(bi),
                Arg::Buf(out),
                Arg::I32(n as i32),
            ],
        );
        let got = b.read::<f32>(out);
        let ftz = |x: f32| {
            if x.is_subnormal() {
                0.0f32.copysign(x)
            } else {
                x
            }
        };
        for i in 0..n {
            let (x, y) = (ftz(a[i]), ftz(bv[i]));
            let want = [ftz(x * y), ftz(x / y), ftz(x.mul_add(y, x))];
            let alt = ftz(ftz(x * y) + x);
            assert_eq!(got[3 * i], want[0], "ftz mul {} {x} {y}", t.name());
            assert!(
                ulp_diff32(got[3 * i + 1], want[1]) <= 1,
                "ftz div {} {x} {y}: {} vs {}",
                t.name(),
                got[3 * i + 1],
                want[1]
            );
            assert!(
                got[3 * i + 2] == want[2] || got[3 * i + 2] == alt,
                "ftz mad {} {x} {y}",
                t.name()
            );
        }
    });
}

#[test]
fn mfma_16x16x4_f32() {
    each_target(|t| {
        let a: Vec<f32> = (0..64).map(|i| (i % 7) as f32 - 3.0).collect();
        let bm: Vec<f32> = (0..64).map(|i| (i % 5) as f32 - 1.0).collect();
        let mut b = Bench::new("mfma", t);
        let (ai, bi, d) = (b.buf_of(&a), b.buf_of(&bm), b.zeros::<f32>(256));
        b.run1(
            "mfma_16x16x4",
            64,
            64,
            &[Arg::Buf(ai), Arg::Buf(bi), Arg::Buf(d)],
        );
        let got = b.read::<f32>(d);
        for i in 0..16 {
            for j in 0..16 {
                let want: f32 = (0..4).map(|k| a[i * 4 + k] * bm[k * 16 + j]).sum();
                assert_eq!(got[i * 16 + j], want, "mfma {} ({i},{j})", t.name());
            }
        }
    });
}

#[test]
fn alu_fma_chain() {
    each_target(|t| {
        let n = 300usize;
        let x = inputs_f32(n, 21);
        let mut b = Bench::new("stream", t);
        let xb = b.buf_of(&x);
        b.run1(
            "alu_fma",
            n as u32,
            64,
            &[Arg::Buf(xb), Arg::I32(n as i32), Arg::I32(25)],
        );
        let want: Vec<f32> = x
            .iter()
            .map(|&a0| {
                let (mut a, mut bb, c) = (a0, a0.mul_add(0.5, 1.0), 0.999f32);
                for _ in 0..25 {
                    a = a.mul_add(c, bb);
                    bb = bb.mul_add(c, a);
                    a = a.mul_add(c, -bb);
                    bb = bb.mul_add(0.5, a);
                }
                a + bb
            })
            .collect();
        let got = b.read::<f32>(xb);
        for i in 0..n {
            // a0 * 0.5 + 1.0 may or may not be contracted; both are exact-reference candidates.
            let a0 = x[i];
            let (mut a, mut bb, c) = (a0, a0 * 0.5 + 1.0, 0.999f32);
            for _ in 0..25 {
                a = a.mul_add(c, bb);
                bb = bb.mul_add(c, a);
                a = a.mul_add(c, -bb);
                bb = bb.mul_add(0.5, a);
            }
            assert!(
                got[i] == want[i] || got[i] == a + bb,
                "alu_fma {} {i}: {} vs {}",
                t.name(),
                got[i],
                want[i]
            );
        }
    });
}

#[test]
fn hip_built_kernels_with_device_libraries() {
    let t = amdgpu_emu::Target::Gfx90a;
    let n = 500usize;
    let x: Vec<f32> = inputs_f32(n, 31);
    let mut b = Bench::new("hip_kernels", t);
    let (xi, y) = (b.buf_of(&x), b.zeros::<f32>(4 * n));
    // HIP launches whole blocks (its blockDim is the size of the block being run, so a
    // partial last block would index differently): the grid is a multiple of the block.
    b.run1(
        "hip_math",
        512,
        128,
        &[Arg::Buf(xi), Arg::Buf(y), Arg::I32(n as i32)],
    );
    let got = b.read::<f32>(y);
    for i in 0..n {
        let v = x[i];
        let want = [
            v.sin(),
            (v * 0.25).exp(),
            (v.abs() + 1.0).ln(),
            (v.abs() + 1.0).powf(0.75),
        ];
        for k in 0..4 {
            // The device library's own error bounds: sinf/expf/logf/powf within 2 ulp here.
            assert!(
                ulp_diff32(got[4 * i + k], want[k]) <= 2,
                "hip_math op {k} x={v}: {} vs {}",
                got[4 * i + k],
                want[k]
            );
        }
    }
    let d: Vec<f64> = x.iter().map(|&v| v as f64 * 1.5 + 0.001).collect();
    let (di, dy) = (b.buf_of(&d), b.zeros::<f64>(3 * n));
    b.run1(
        "hip_fp64",
        512,
        64,
        &[Arg::Buf(di), Arg::Buf(dy), Arg::I32(n as i32)],
    );
    let got = b.read::<f64>(dy);
    for i in 0..n {
        let v = d[i];
        assert_eq!(got[3 * i], 1.0 / v, "1/x {v}");
        assert_eq!(got[3 * i + 1], v.abs().sqrt(), "sqrt {v}");
        let e = (v * 0.1).exp();
        assert!(
            ((got[3 * i + 2] - e) / e).abs() < 4.0 * f64::EPSILON,
            "exp {v}: {} vs {e}",
            got[3 * i + 2]
        );
    }
    let iv: Vec<i32> = (0..2000).map(|i| (i * 13) % 97 - 40).collect();
    let (ii, s) = (b.buf_of(&iv), b.zeros::<i32>(1));
    b.run1(
        "hip_reduce",
        2048,
        256,
        &[Arg::Buf(ii), Arg::Buf(s), Arg::I32(2000)],
    );
    assert_eq!(b.read::<i32>(s)[0], iv.iter().sum::<i32>());
    let sv: Vec<i32> = (0..256).map(|i| i * 3 - 100).collect();
    let (si, so) = (b.buf_of(&sv), b.zeros::<i32>(4));
    b.run1("hip_shuffle", 256, 256, &[Arg::Buf(si), Arg::Buf(so)]);
    // __shfl_down reads lanes past the end of the wave as the lane itself: lane 0 sums all.
    let got = b.read::<i32>(so);
    for w in 0..4 {
        assert_eq!(
            got[w],
            sv[w * 64..w * 64 + 64].iter().sum::<i32>(),
            "wave {w}"
        );
    }
}

#[test]
fn preloaded_kernel_arguments() {
    each_target(|t| {
        let mut b = Bench::new("preload", t);
        let kd = b.co.kernel("inc_preload").unwrap() as usize;
        assert!(
            b.co.image[kd + 58] & 0x7F > 0,
            "{}: the descriptor asks for preloaded kernargs",
            t.name()
        );
        let x: Vec<i32> = (0..300).collect();
        let xb = b.buf_of(&x);
        b.run1(
            "inc_preload",
            300,
            128,
            &[Arg::Buf(xb), Arg::I32(300), Arg::I32(5)],
        );
        assert_eq!(
            b.read::<i32>(xb),
            x.iter().map(|v| v + 5).collect::<Vec<_>>(),
            "{}",
            t.name()
        );
    });
}

/// A code object is decoded once, whatever the number of its kernels and dispatches (each
/// kernel decoding the whole `.text` again cost AMD's template libraries about 250 MB and
/// seconds per kernel).
#[test]
fn a_code_objects_kernels_share_one_decoding() {
    let mut b = Bench::new("stream", amdgpu_emu::Target::Gfx942);
    let out = b.zeros::<i32>(64);
    assert_eq!(b.emu.decoded_ranges(), 0);
    for _ in 0..3 {
        b.run1("read_counter", 64, 64, &[Arg::Buf(out)]);
        b.run1("global_table", 64, 64, &[Arg::Buf(out), Arg::I32(64)]);
    }
    assert_eq!(b.emu.decoded_ranges(), 1);
    assert_eq!(
        b.read::<f32>(out)[9],
        4.0,
        "global_table ran after read_counter"
    );
}

#[test]
fn dynamic_lds_and_barriers_after_waves_end() {
    each_target(|t| {
        let n = 1000usize;
        let v: Vec<i32> = (0..n as i32).map(|i| i * 5 - 7).collect();
        let mut b = Bench::new("control", t);
        let (vi, out) = (b.buf_of(&v), b.zeros::<i32>(2 * n));
        b.run(
            "dyn_lds",
            [256, 1, 1],
            [128, 1, 1],
            &[Arg::Buf(vi), Arg::Buf(out), Arg::I32(n as i32)],
            4 * n as u32,
        )
        .unwrap();
        let want: Vec<i32> = (0..2)
            .flat_map(|_| (0..n).map(|k| v[n - 1 - k] * 2))
            .collect();
        assert_eq!(b.read::<i32>(out), want, "dyn_lds {}", t.name());
        let o2 = b.zeros::<i32>(256);
        b.run(
            "early_exit_barrier",
            [512, 1, 1],
            [256, 1, 1],
            &[Arg::Buf(o2)],
            0,
        )
        .unwrap();
        let mut acc: Vec<i32> = (0..128).collect();
        for _ in 0..5 {
            let next: Vec<i32> = (0..128).map(|i| acc[(i + 1) & 127] + 1).collect();
            acc = next;
        }
        let want: Vec<i32> = (0..2).flat_map(|_| acc.clone()).collect();
        assert_eq!(b.read::<i32>(o2), want, "early_exit_barrier {}", t.name());
    });
}
