//! Memory instructions beyond plain loads and stores, from the `memory_more` corpus source
//! built with clang-22 for both targets: d16 LDS accesses, LDS append counters, packed LDS
//! atomics, the DS operations only assembly reaches, buffer atomics and format loads. Each
//! test first checks that the code object really holds the instructions it is about.
#![allow(clippy::needless_range_loop)]

mod common;
use common::{Arg, Bench, Rng, TARGETS, assert_uses};
use half::{bf16, f16};

#[test]
fn lds_half_pairs_pack_and_store_high_halves() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(&b, &["ds_read_u16_d16_hi"]);
        let (blk, n) = (128usize, 256usize);
        let mut r = Rng(7);
        let input: Vec<u16> = (0..2 * n)
            .map(|_| f16::from_f32(r.f32()).to_bits())
            .collect();
        let ib = b.buf_of(&input);
        let ob = b.zeros::<u16>(2 * n);
        b.run1(
            "lds_half_pairs",
            n as u32,
            blk as u32,
            &[Arg::Buf(ib), Arg::Buf(ob), Arg::I32(n as i32)],
        );
        let got: Vec<u16> = b.read(ob);
        let twice = |h: u16| f16::from_f32(f16::from_bits(h).to_f32() * 2.0).to_bits();
        for i in 0..n {
            let (base, t0) = (i - i % blk, i % blk);
            let u = (t0 + 1) % blk;
            let (j, k) = ((u * 7 + 3) % blk, (u * 5 + 1) % blk);
            let want = [
                twice(input[2 * (base + k)]),
                twice(input[2 * (base + j) + 1]),
            ];
            assert_eq!(
                [got[2 * i], got[2 * i + 1]],
                want,
                "{} element {i}",
                t.name()
            );
        }
    }
}

#[test]
fn lds_byte_pairs_widen_bytes_into_halves() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "ds_read_u8_d16_hi",
                "ds_read_i8_d16_hi",
                "ds_write_b8_d16_hi",
            ],
        );
        let (blk, n) = (64usize, 256usize);
        let mut r = Rng(11);
        let input: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        let ib = b.buf_of(&input);
        let ob = b.zeros::<i16>(2 * n);
        let back = b.zeros::<u8>(n);
        b.run1(
            "lds_byte_pairs",
            n as u32,
            blk as u32,
            &[Arg::Buf(ib), Arg::Buf(ob), Arg::Buf(back)],
        );
        let got: Vec<i16> = b.read(ob);
        let got_back: Vec<u8> = b.read(back);
        let sb = |i: usize| input[i ^ 1] as i8 as i16;
        for i in 0..n {
            let (base, t0) = (i - i % blk, i % blk);
            let j = base + (t0 + 5) % blk;
            let c = |x: usize| (input[x] as i16).wrapping_mul(3).wrapping_add(sb(x));
            assert_eq!(
                [got[2 * i], got[2 * i + 1]],
                [c(i), c(j)],
                "{} lane {i}",
                t.name()
            );
            assert_eq!(got_back[i], c(i) as u8, "{} byte {i}", t.name());
        }
    }
}

#[test]
fn lds_append_and_consume_return_the_counter_before_the_wave() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(&b, &["ds_append", "ds_consume"]);
        let blocks = 3usize;
        let n = 64 * blocks;
        let mut r = Rng(5);
        let flags: Vec<i32> = (0..n).map(|_| (r.next() % 4) as i32).collect();
        let fb = b.buf_of(&flags);
        let (ab, cb) = (b.zeros::<i32>(n), b.zeros::<i32>(n));
        let count = b.zeros::<i32>(4 * blocks);
        b.run1(
            "lds_append_consume",
            n as u32,
            64,
            &[Arg::Buf(fb), Arg::Buf(ab), Arg::Buf(cb), Arg::Buf(count)],
        );
        let (got_a, got_c): (Vec<i32>, Vec<i32>) = (b.read(ab), b.read(cb));
        let got_count: Vec<i32> = b.read(count);
        for blk in 0..blocks {
            let lanes = &flags[64 * blk..64 * blk + 64];
            let appends = lanes.iter().filter(|&&f| f & 1 != 0).count() as i32;
            let consumes = lanes.iter().filter(|&&f| f & 2 != 0).count() as i32;
            let start = 100 * blk as i32 + 2;
            for l in 0..64 {
                let i = 64 * blk + l;
                // Every lane of the wave sees the counter as it was before the wave's update.
                let a = if flags[i] & 1 != 0 { start } else { -1 };
                let c = if flags[i] & 2 != 0 {
                    start + appends
                } else {
                    -1
                };
                assert_eq!((got_a[i], got_c[i]), (a, c), "{} lane {i}", t.name());
            }
            let base = 100 * blk as i32;
            assert_eq!(
                &got_count[4 * blk..4 * blk + 4],
                &[base, base + 1, start + appends - consumes, base + 3],
                "{} block {blk}",
                t.name()
            );
        }
    }
}

#[test]
fn lds_packed_half_and_bfloat_adds_on_gfx942() {
    let t = amdgpu_emu::Target::Gfx942;
    let mut b = Bench::new("memory_more", t);
    assert_uses(
        &b,
        &[
            "ds_pk_add_f16",
            "ds_pk_add_bf16",
            "ds_pk_add_rtn_f16",
            "ds_pk_add_rtn_bf16",
        ],
    );
    let blocks = 2usize;
    let n = 64 * blocks;
    // Multiples of 1/2 below 4 and small starting sums: every partial sum is exact in both
    // formats, so the sums do not depend on the lanes' order.
    let mut r = Rng(3);
    let mut val = || (r.next() % 8) as f32 * 0.5 - 1.5;
    let pack_h = |a: f32, b: f32| {
        f16::from_f32(a).to_bits() as u32 | (f16::from_f32(b).to_bits() as u32) << 16
    };
    let pack_b = |a: f32, b: f32| {
        bf16::from_f32(a).to_bits() as u32 | (bf16::from_f32(b).to_bits() as u32) << 16
    };
    let hv: Vec<[f32; 2]> = (0..n).map(|_| [val(), val()]).collect();
    let bv: Vec<[f32; 2]> = (0..n).map(|_| [val(), val()]).collect();
    let init: Vec<[f32; 2]> = (0..4 * blocks).map(|k| [k as f32, 0.5]).collect();
    let hvb = b.buf_of(&hv.iter().map(|v| pack_h(v[0], v[1])).collect::<Vec<_>>());
    let bvb = b.buf_of(&bv.iter().map(|v| pack_b(v[0], v[1])).collect::<Vec<_>>());
    let hsum = b.buf_of(&init.iter().map(|v| pack_h(v[0], v[1])).collect::<Vec<_>>());
    let bsum = b.buf_of(&init.iter().map(|v| pack_b(v[0], v[1])).collect::<Vec<_>>());
    let (hret, bret) = (b.zeros::<u32>(n), b.zeros::<u32>(n));
    b.run1(
        "lds_pk_add",
        n as u32,
        64,
        &[
            Arg::Buf(hvb),
            Arg::Buf(bvb),
            Arg::Buf(hsum),
            Arg::Buf(bsum),
            Arg::Buf(hret),
            Arg::Buf(bret),
        ],
    );
    let (got_hs, got_bs): (Vec<u32>, Vec<u32>) = (b.read(hsum), b.read(bsum));
    let (got_hr, got_br): (Vec<u32>, Vec<u32>) = (b.read(hret), b.read(bret));
    for blk in 0..blocks {
        let mut acc: Vec<[[f32; 2]; 2]> = (0..4).map(|k| [init[4 * blk + k]; 2]).collect();
        for l in 0..64 {
            let i = 64 * blk + l;
            for (f, v) in [(0usize, hv[i]), (1, bv[i])] {
                // Returning adds go to slots 2 and 3 in lane order (the emulator's order for
                // lanes of one instruction at one address).
                let slot = 2 + l % 2;
                let before = acc[slot][f];
                let got = if f == 0 { got_hr[i] } else { got_br[i] };
                let want = if f == 0 {
                    pack_h(before[0], before[1])
                } else {
                    pack_b(before[0], before[1])
                };
                assert_eq!(got, want, "returned value of lane {i} ({f})");
                for s in [l % 2, slot] {
                    acc[s][f] = [acc[s][f][0] + v[0], acc[s][f][1] + v[1]];
                }
            }
        }
        for k in 0..4 {
            let [h, bb] = acc[k];
            assert_eq!(got_hs[4 * blk + k], pack_h(h[0], h[1]), "f16 sum {blk}/{k}");
            assert_eq!(
                got_bs[4 * blk + k],
                pack_b(bb[0], bb[1]),
                "bf16 sum {blk}/{k}"
            );
        }
    }
}

/// The reference of one lane of `ds_asm`: (returned values, LDS dwords afterwards).
fn ds_asm_lane(init: &[u32], o: &[u32]) -> ([u32; 10], [u32; 10]) {
    let mut m: [u32; 10] = init.try_into().unwrap();
    let mut r = [0u32; 10];
    // ds_mskor_rtn_b32 at dword 0: clear the mask's bits, set the others'.
    r[0] = m[0];
    m[0] = (m[0] & !o[0]) | o[1];
    // ds_wrap_rtn_b32 at dword 1.
    r[1] = m[1];
    m[1] = if m[1] >= o[2] {
        m[1] - o[2]
    } else {
        m[1].wrapping_add(o[3])
    };
    // ds_cmpst_rtn_f32 at dword 2: compare with data0 as floats, store data1.
    r[2] = m[2];
    if f32::from_bits(m[2]) == f32::from_bits(o[4]) {
        m[2] = o[5];
    }
    // ds_wrxchg2_rtn_b32 at dwords 3 and 4.
    r[3] = m[3];
    r[4] = m[4];
    m[3] = o[6];
    m[4] = o[7];
    // ds_condxchg32_rtn_b64 at dwords 6 and 7.
    r[5] = m[6];
    r[6] = m[7];
    for (k, x) in [o[11], o[12]].into_iter().enumerate() {
        if x >> 31 != 0 {
            m[6 + k] = x & 0x7FFF_FFFF;
        }
    }
    // d16 reads at bytes 32, 33 and 35 (dword 8) into registers holding o[8..11].
    let byte = |m: &[u32; 10], b: usize| (m[b / 4] >> (8 * (b % 4))) as u8;
    r[7] = (o[8] & 0xFFFF_0000) | (m[8] & 0xFFFF);
    r[8] = (o[9] & 0xFFFF_0000) | (byte(&m, 33) as i8 as i16 as u16 as u32);
    r[9] = (o[10] & 0xFFFF_0000) | byte(&m, 35) as u32;
    // ds_write_b16_d16_hi at byte 36, ds_mskor_b32 at dword 5.
    m[9] = (m[9] & 0xFFFF_0000) | o[13] >> 16;
    m[5] = (m[5] & !o[14]) | o[15];
    (r, m)
}

#[test]
fn ds_operations_from_assembly_match_the_isa() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "ds_mskor_rtn_b32",
                "ds_mskor_b32",
                "ds_wrap_rtn_b32",
                "ds_cmpst_rtn_f32",
                "ds_wrxchg2_rtn_b32",
                "ds_condxchg32_rtn_b64",
                "ds_read_u16_d16",
                "ds_read_i8_d16",
                "ds_read_u8_d16",
                "ds_write_b16_d16_hi",
                "ds_read_addtid_b32",
                "ds_write_addtid_b32",
            ],
        );
        let blocks = 2usize;
        let n = 64 * blocks;
        let mut r = Rng(17);
        let mut init: Vec<u32> = (0..10 * n).map(|_| r.next() as u32).collect();
        let mut ops: Vec<u32> = (0..16 * n).map(|_| r.next() as u32).collect();
        for i in 0..n {
            // Compares that succeed on equal bits and on zeros of opposite sign, and fail on
            // NaNs of equal bits and on other values; some wraps subtract.
            let (mem, cmp) = (10 * i + 2, 16 * i + 4);
            match i % 4 {
                0 => ops[cmp] = init[mem],
                1 => (init[mem], ops[cmp]) = (0x8000_0000, 0),
                2 => (init[mem], ops[cmp]) = (0x7FC0_0000, 0x7FC0_0000),
                _ => {}
            }
            if i % 3 == 0 {
                ops[16 * i + 2] = init[10 * i + 1] / 2;
            }
        }
        let (ib, ob) = (b.buf_of(&init), b.buf_of(&ops));
        let out = b.zeros::<u32>(10 * n);
        let mem = b.zeros::<u32>(10 * 64 * 4 + n);
        b.run1(
            "ds_asm",
            n as u32,
            64,
            &[Arg::Buf(ib), Arg::Buf(ob), Arg::Buf(out), Arg::Buf(mem)],
        );
        let (got, got_mem): (Vec<u32>, Vec<u32>) = (b.read(out), b.read(mem));
        for i in 0..n {
            let (ret, m) = ds_asm_lane(&init[10 * i..10 * i + 10], &ops[16 * i..16 * i + 16]);
            assert_eq!(
                &got[10 * i..10 * i + 10],
                &ret,
                "{} returns of lane {i}",
                t.name()
            );
            assert_eq!(
                &got_mem[10 * i..10 * i + 10],
                &m,
                "{} dwords of lane {i}",
                t.name()
            );
            // Lane l wrote dword l + 1 of the area and read dword l + 2: the next lane's
            // value, which the last lane did not find written.
            let l = i % 64;
            if l < 63 {
                let want = ops[16 * (i + 1)] ^ (l as u32 + 1);
                assert_eq!(
                    got_mem[10 * 64 * 4 + i],
                    want,
                    "{} addtid lane {i}",
                    t.name()
                );
            }
        }
    }
}

#[test]
fn private_arrays_of_halves_and_bytes_load_into_register_halves() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        if t == amdgpu_emu::Target::Gfx90a {
            // gfx90a reaches private memory through MUBUF (gfx942 through scratch_*).
            assert_uses(
                &b,
                &[
                    "buffer_load_short_d16_hi",
                    "buffer_load_ubyte_d16_hi",
                    "buffer_load_sbyte_d16_hi",
                ],
            );
        }
        let n = 128usize;
        let mut r = Rng(23);
        let halves: Vec<u16> = (0..512).map(|_| f16::from_f32(r.f32()).to_bits()).collect();
        let bytes: Vec<u8> = (0..512).map(|_| r.next() as u8).collect();
        let pick: Vec<i32> = (0..n).map(|_| (r.next() & 0xFFFF) as i32).collect();
        let (hb, bb, pb) = (b.buf_of(&halves), b.buf_of(&bytes), b.buf_of(&pick));
        let (ho, bo) = (b.zeros::<u32>(n), b.zeros::<u32>(n));
        b.run1(
            "private_d16",
            n as u32,
            64,
            &[
                Arg::Buf(hb),
                Arg::Buf(bb),
                Arg::Buf(pb),
                Arg::Buf(ho),
                Arg::Buf(bo),
            ],
        );
        let (got_h, got_b): (Vec<u32>, Vec<u32>) = (b.read(ho), b.read(bo));
        let twice = |h: u16| f16::from_f32(f16::from_bits(h).to_f32() * 2.0).to_bits() as u32;
        for i in 0..n {
            let (x, y) = ((pick[i] & 255) as usize, ((pick[i] >> 8) & 255) as usize);
            let a = |k: usize| halves[(i + k) % 512];
            let u = |k: usize| bytes[(i + k) % 512] as i16;
            let s = |k: usize| bytes[(3 * i + k) % 512] as i8 as i16;
            assert_eq!(
                got_h[i],
                twice(a(x)) | twice(a(y)) << 16,
                "{} halves {i}",
                t.name()
            );
            let lo = u(x).wrapping_mul(5).wrapping_add(s(y)) as u16 as u32;
            let hi = u(y).wrapping_mul(5).wrapping_add(s(x)) as u16 as u32;
            assert_eq!(got_b[i], lo | hi << 16, "{} bytes {i}", t.name());
        }
    }
}

#[test]
fn buffer_atomic_builtins_add_in_range_and_drop_past_num_records() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "buffer_atomic_add",
                "buffer_atomic_add_f32",
                "buffer_atomic_pk_add_f16",
                "buffer_atomic_max_f64",
                "buffer_atomic_min_f64",
            ],
        );
        let n = 128usize;
        let mut r = Rng(29);
        let init: Vec<i32> = (0..20).map(|k| 1000 * k).collect();
        let fv: Vec<f32> = (0..n).map(|_| r.f32()).collect();
        let hv: Vec<[u16; 2]> = (0..n)
            .map(|_| {
                [
                    f16::from_f32(r.f32()).to_bits(),
                    f16::from_f32(r.f32()).to_bits(),
                ]
            })
            .collect();
        let dv: Vec<f64> = (0..n).map(|_| r.f32() as f64 * 1.25).collect();
        let dinit: Vec<f64> = (0..64).map(|k| k as f64 * 0.5 - 8.0).collect();
        let cb = b.buf_of(&init);
        let (fb, hb, db) = (b.zeros::<f32>(64), b.zeros::<u32>(64), b.buf_of(&dinit));
        let (fvb, hvb, dvb) = (b.buf_of(&fv), b.buf_of(&hv), b.buf_of(&dv));
        let ret = b.zeros::<i32>(n);
        b.run1(
            "buffer_atomic_builtins",
            n as u32,
            64,
            &[
                Arg::Buf(cb),
                Arg::Buf(fb),
                Arg::Buf(hb),
                Arg::Buf(db),
                Arg::Buf(fvb),
                Arg::Buf(hvb),
                Arg::Buf(dvb),
                Arg::Buf(ret),
            ],
        );
        let counters: Vec<i32> = b.read(cb);
        let got_ret: Vec<i32> = b.read(ret);
        let mut want = init.clone();
        for k in 0..4 {
            // The returning adds: in whatever order they ran, each returned the sum before it.
            let mut lanes: Vec<usize> = (0..n).filter(|i| i % 4 == k).collect();
            lanes.sort_by_key(|&i| got_ret[i]);
            for i in lanes {
                assert_eq!(
                    got_ret[i],
                    want[k],
                    "{} returned value of lane {i}",
                    t.name()
                );
                want[k] += i as i32 + 1;
            }
        }
        want[4] += 3 * n as i32;
        for i in 0..n {
            let off = 20 + 4 * (i % 16);
            if off < 64 {
                want[off / 4] += 1;
            }
        }
        assert_eq!(counters, want, "{} counters", t.name());
        let (f, h, d): (Vec<f32>, Vec<u32>, Vec<f64>) = (b.read(fb), b.read(hb), b.read(db));
        for k in 0..64 {
            assert_eq!(f[k], fv[k] + fv[k + 64], "{} f32 slot {k}", t.name());
            let sum = |j: usize| {
                let x = |i: usize| f16::from_bits(hv[i][j]).to_f32();
                f16::from_f32(x(k) + x(k + 64)).to_bits() as u32
            };
            assert_eq!(h[k], sum(0) | sum(1) << 16, "{} f16 slot {k}", t.name());
            let lanes = (0..n).filter(|i| i % 32 == k % 32).map(|i| dv[i]);
            let want = if k < 32 {
                lanes.fold(dinit[k], f64::max)
            } else {
                lanes.fold(dinit[k], f64::min)
            };
            assert_eq!(d[k], want, "{} f64 slot {k}", t.name());
        }
    }
}

/// The new value of a 32-bit buffer atomic `k` of `buffer_atomic_asm` (cmpswap: `o` is the
/// value, `cmp` the compare value).
fn atomic32(k: usize, old: u32, o: u32, cmp: u32) -> u32 {
    let f = f32::from_bits;
    match k {
        0 => o,
        1 => {
            if old == cmp {
                o
            } else {
                old
            }
        }
        2 => old.wrapping_add(o),
        3 => old.wrapping_sub(o),
        4 => (old as i32).min(o as i32) as u32,
        5 => old.min(o),
        6 => (old as i32).max(o as i32) as u32,
        7 => old.max(o),
        8 => old & o,
        9 => old | o,
        10 => old ^ o,
        11 => {
            if old >= o {
                0
            } else {
                old + 1
            }
        }
        12 => {
            if old == 0 || old > o {
                o
            } else {
                old - 1
            }
        }
        13 => (f(old) + f(o)).to_bits(),
        15 => {
            let h = |v: u32, s: u32| f16::from_bits((v >> s) as u16).to_f32();
            let sum = |s: u32| f16::from_f32(h(old, s) + h(o, s)).to_bits() as u32;
            sum(0) | sum(16) << 16
        }
        _ => old,
    }
}

/// The 64-bit counterpart of [`atomic32`].
fn atomic64(k: usize, old: u64, o: u64, cmp: u64) -> u64 {
    let f = f64::from_bits;
    match k {
        0 => o,
        1 => {
            if old == cmp {
                o
            } else {
                old
            }
        }
        2 => old.wrapping_add(o),
        3 => old.wrapping_sub(o),
        4 => (old as i64).min(o as i64) as u64,
        5 => old.min(o),
        6 => (old as i64).max(o as i64) as u64,
        7 => old.max(o),
        8 => old & o,
        9 => old | o,
        10 => old ^ o,
        11 => {
            if old >= o {
                0
            } else {
                old + 1
            }
        }
        12 => {
            if old == 0 || old > o {
                o
            } else {
                old - 1
            }
        }
        13 => (f(old) + f(o)).to_bits(),
        14 => f(old).min(f(o)).to_bits(),
        15 => f(old).max(f(o)).to_bits(),
        _ => old,
    }
}

#[test]
fn every_buffer_atomic_returns_the_old_value_with_glc() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "buffer_atomic_swap",
                "buffer_atomic_cmpswap",
                "buffer_atomic_sub",
                "buffer_atomic_smin",
                "buffer_atomic_umin",
                "buffer_atomic_smax",
                "buffer_atomic_umax",
                "buffer_atomic_and",
                "buffer_atomic_or",
                "buffer_atomic_xor",
                "buffer_atomic_inc",
                "buffer_atomic_dec",
                "buffer_atomic_swap_x2",
                "buffer_atomic_cmpswap_x2",
                "buffer_atomic_add_x2",
                "buffer_atomic_sub_x2",
                "buffer_atomic_smin_x2",
                "buffer_atomic_umin_x2",
                "buffer_atomic_smax_x2",
                "buffer_atomic_umax_x2",
                "buffer_atomic_and_x2",
                "buffer_atomic_or_x2",
                "buffer_atomic_xor_x2",
                "buffer_atomic_inc_x2",
                "buffer_atomic_dec_x2",
                "buffer_atomic_add_f64",
            ],
        );
        let n = 64usize;
        let mut r = Rng(31);
        let mut m32: Vec<u32> = (0..16 * n).map(|_| r.next() as u32).collect();
        let mut m64: Vec<u64> = (0..16 * n).map(|_| r.next()).collect();
        let mut o32: Vec<u32> = (0..16 * n).map(|_| r.next() as u32).collect();
        let mut o64: Vec<u64> = (0..16 * n).map(|_| r.next()).collect();
        for i in 0..n {
            let s = 16 * i;
            // Floats where the float operations work, small operands for some inc/dec.
            m32[s + 13] = r.f32().to_bits();
            o32[s + 13] = r.f32().to_bits();
            let h2 = |r: &mut Rng| {
                f16::from_f32(r.f32()).to_bits() as u32
                    | (f16::from_f32(r.f32()).to_bits() as u32) << 16
            };
            m32[s + 15] = h2(&mut r);
            o32[s + 15] = h2(&mut r);
            for k in 13..16 {
                m64[s + k] = (r.f32() as f64 * 3.0).to_bits();
                o64[s + k] = (r.f32() as f64 * 3.0).to_bits();
            }
            if i % 2 == 0 {
                // Compare-and-swaps that succeed.
                o32[s + 14] = m32[s + 1];
                o64[s + 14] = m64[s + 1];
                o32[s + 11] = m32[s + 11] / 2;
                o64[s + 12] = m64[s + 12] / 3;
            }
        }
        let (m32b, m64b) = (b.buf_of(&m32), b.buf_of(&m64));
        let (o32b, o64b) = (b.buf_of(&o32), b.buf_of(&o64));
        let (r32b, r64b) = (b.zeros::<u32>(16 * n), b.zeros::<u64>(16 * n));
        b.run1(
            "buffer_atomic_asm",
            n as u32,
            64,
            &[
                Arg::Buf(m32b),
                Arg::Buf(m64b),
                Arg::Buf(o32b),
                Arg::Buf(o64b),
                Arg::Buf(r32b),
                Arg::Buf(r64b),
            ],
        );
        let (g32, g64): (Vec<u32>, Vec<u64>) = (b.read(m32b), b.read(m64b));
        let (q32, q64): (Vec<u32>, Vec<u64>) = (b.read(r32b), b.read(r64b));
        for i in 0..n {
            for k in 0..16 {
                let j = 16 * i + k;
                let (c32, c64) = (o32[16 * i + 14], o64[16 * i + 14]);
                if k != 14 {
                    assert_eq!(
                        q32[j],
                        m32[j],
                        "{} old value of 32-bit op {k} lane {i}",
                        t.name()
                    );
                    let want = atomic32(k, m32[j], o32[j], c32);
                    assert_eq!(g32[j], want, "{} 32-bit op {k} lane {i}", t.name());
                }
                assert_eq!(
                    q64[j],
                    m64[j],
                    "{} old value of 64-bit op {k} lane {i}",
                    t.name()
                );
                let want = atomic64(k, m64[j], o64[j], c64);
                assert_eq!(g64[j], want, "{} 64-bit op {k} lane {i}", t.name());
            }
        }
    }
}

#[test]
fn buffer_d16_loads_replace_one_half_and_read_zero_out_of_range() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        let n = 128usize;
        let mut r = Rng(37);
        let src: Vec<u32> = (0..64).map(|_| r.next() as u32).collect();
        let off: Vec<u32> = (0..n).map(|_| (r.next() % 300) as u32).collect();
        let keep: Vec<u32> = (0..6 * n).map(|_| r.next() as u32).collect();
        let (sb, ob, kb) = (b.buf_of(&src), b.buf_of(&off), b.buf_of(&keep));
        let out = b.zeros::<u32>(6 * n);
        b.run1(
            "buffer_d16_asm",
            n as u32,
            64,
            &[Arg::Buf(sb), Arg::Buf(ob), Arg::Buf(kb), Arg::Buf(out)],
        );
        let got: Vec<u32> = b.read(out);
        let byte = |o: u32| {
            if o < 256 {
                (src[o as usize / 4] >> (8 * (o % 4))) as u8
            } else {
                0
            }
        };
        for i in 0..n {
            let o = off[i];
            let k = &keep[6 * i..6 * i + 6];
            let (u, s) = (byte(o) as u32, byte(o) as i8 as i16 as u16 as u32);
            let h = byte(o & !1) as u32 | (byte(o | 1) as u32) << 8;
            let want = [
                (k[0] & 0xFFFF_0000) | u,
                (k[1] & 0xFFFF) | u << 16,
                (k[2] & 0xFFFF_0000) | s,
                (k[3] & 0xFFFF) | s << 16,
                (k[4] & 0xFFFF_0000) | h,
                (k[5] & 0xFFFF) | h << 16,
            ];
            assert_eq!(
                &got[6 * i..6 * i + 6],
                &want,
                "{} lane {i} offset {o}",
                t.name()
            );
        }
    }
}

/// Component widths of the data formats the format tests use.
fn format_bits(dfmt: u32) -> [u32; 4] {
    match dfmt {
        1 => [8, 0, 0, 0],
        4 => [32, 0, 0, 0],
        5 => [16, 16, 0, 0],
        9 => [10, 10, 10, 2],
        10 => [8, 8, 8, 8],
        12 => [16, 16, 16, 16],
        _ => unreachable!("format {dfmt}"),
    }
}

/// The reference register components of one element (before DST_SEL).
fn unpack_ref(dfmt: u32, nfmt: u32, raw: &[u8]) -> [u32; 4] {
    let bits = format_bits(dfmt);
    let mut word = 0u64;
    for (k, &b) in raw.iter().enumerate() {
        word |= (b as u64) << (8 * k);
    }
    let mut out = [0u32; 4];
    let mut shift = 0;
    for k in 0..4 {
        let n = bits[k];
        let float = !matches!(nfmt, 4 | 5);
        if n == 0 {
            out[k] = match (k, float) {
                (3, true) => 1f32.to_bits(),
                (3, false) => 1,
                _ => 0,
            };
            continue;
        }
        let v = (word >> shift) & ((1 << n) - 1);
        shift += n;
        let s = ((v << (64 - n)) as i64 >> (64 - n)) as f64;
        out[k] = match nfmt {
            0 => (v as f32 / ((1u64 << n) - 1) as f32).to_bits(),
            1 => (s as f32 / ((1u64 << (n - 1)) - 1) as f32)
                .max(-1.0)
                .to_bits(),
            2 => (v as f32).to_bits(),
            4 => v as u32,
            5 => s as i64 as u32,
            _ if n == 16 => f16::from_bits(v as u16).to_f32().to_bits(),
            _ => v as u32,
        };
    }
    out
}

#[test]
fn buffer_format_loads_convert_fill_and_select_components() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "buffer_load_format_xyzw",
                "buffer_load_format_x",
                "buffer_load_format_d16_xyzw",
                "buffer_load_format_d16_hi_x",
                "buffer_load_format_d16_x",
            ],
        );
        let n = 128usize;
        let identity = 4 | 5 << 3 | 6 << 6 | 7 << 9;
        // (dfmt, nfmt, DST_SEL_X..W)
        let cases: [(u32, u32, u32); 6] = [
            (10, 0, identity),
            (5, 1, 5 | 4 << 3 | 1 << 6),
            (12, 7, identity),
            (9, 4, 7 | 6 << 3 | 5 << 6 | 4 << 9),
            (1, 5, identity),
            (10, 2, 6 | 1 << 3 | 4 << 6 | 1 << 9),
        ];
        for (case, &(dfmt, nfmt, sel)) in cases.iter().enumerate() {
            let stride = format_bits(dfmt).iter().sum::<u32>() as usize / 8;
            let count = n - 8;
            let mut r = Rng(41 + case as u64);
            let src: Vec<u8> = (0..stride * n).map(|_| r.next() as u8).collect();
            let keep: Vec<u32> = (0..2 * n).map(|_| r.next() as u32).collect();
            let sb = b.buf_of(&src);
            let kb = b.buf_of(&keep);
            let out = b.zeros::<u32>(9 * n);
            let word3 = sel | nfmt << 12 | dfmt << 15;
            b.run1(
                "buffer_format_load",
                n as u32,
                64,
                &[
                    Arg::Buf(sb),
                    Arg::U32(word3),
                    Arg::I32(stride as i32),
                    Arg::I32(count as i32),
                    Arg::Buf(kb),
                    Arg::Buf(out),
                ],
            );
            let got: Vec<u32> = b.read(out);
            let float = !matches!(nfmt, 4 | 5);
            let d16 = |v: u32| {
                if float {
                    f16::from_f32(f32::from_bits(v)).to_bits() as u32
                } else {
                    v & 0xFFFF
                }
            };
            for i in 0..n {
                let comps = unpack_ref(dfmt, nfmt, &src[stride * i..stride * (i + 1)]);
                let one = if float { 1f32.to_bits() } else { 1 };
                let mut c = [0u32; 4];
                if i < count {
                    for k in 0..4 {
                        c[k] = match (sel >> (3 * k)) & 7 {
                            1 => one,
                            s @ 4..=7 => comps[s as usize - 4],
                            _ => 0,
                        };
                    }
                }
                let want = [
                    c[0],
                    c[1],
                    c[2],
                    c[3],
                    c[0],
                    d16(c[0]) | d16(c[1]) << 16,
                    d16(c[2]) | d16(c[3]) << 16,
                    (keep[2 * i] & 0xFFFF) | d16(c[0]) << 16,
                    (keep[2 * i + 1] & 0xFFFF_0000) | d16(c[0]),
                ];
                assert_eq!(
                    &got[9 * i..9 * i + 9],
                    &want,
                    "{} format {dfmt}/{nfmt} lane {i}",
                    t.name()
                );
            }
        }
        // A number format the data format cannot take faults, naming both.
        let sb = b.zeros::<u32>(n);
        let kb = b.zeros::<u32>(2 * n);
        let out = b.zeros::<u32>(9 * n);
        let word3 = identity | 7 << 12 | 1 << 15;
        let args = [
            Arg::Buf(sb),
            Arg::U32(word3),
            Arg::I32(1),
            Arg::I32(n as i32),
            Arg::Buf(kb),
            Arg::Buf(out),
        ];
        let fault = b
            .run("buffer_format_load", [64, 1, 1], [64, 1, 1], &args, 0)
            .expect_err("an 8-bit float format faults");
        let text = fault.to_string();
        assert!(
            text.contains("dfmt 1") && text.contains("nfmt 7"),
            "{}: {text}",
            t.name()
        );
    }
}

#[test]
fn buffer_format_stores_round_clamp_and_narrow() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &["buffer_store_format_xyzw", "buffer_store_format_d16_xyzw"],
        );
        let n = 128usize;
        let identity = 4 | 5 << 3 | 6 << 6 | 7 << 9;
        for (case, &(dfmt, nfmt)) in [(10u32, 0u32), (12, 5), (5, 7), (10, 1)].iter().enumerate() {
            let stride = format_bits(dfmt).iter().sum::<u32>() as usize / 8;
            let count = n - 4;
            let mut r = Rng(53 + case as u64);
            let float = !matches!(nfmt, 4 | 5);
            let regs: Vec<u32> = (0..4 * n)
                .map(|k| {
                    if !float {
                        r.next() as u32
                    } else if k % 17 == 0 {
                        f32::NAN.to_bits()
                    } else {
                        (r.f32() / 8.0).to_bits()
                    }
                })
                .collect();
            let halves: Vec<u32> = (0..n)
                .flat_map(|i| {
                    let h = |k: usize| {
                        if float {
                            f16::from_f32(f32::from_bits(regs[4 * i + k])).to_bits() as u32
                        } else {
                            regs[4 * i + k] & 0xFFFF
                        }
                    };
                    [h(0) | h(1) << 16, h(2) | h(3) << 16]
                })
                .collect();
            let (rb, hb) = (b.buf_of(&regs), b.buf_of(&halves));
            let (db, d16b) = (b.zeros::<u8>(stride * n), b.zeros::<u8>(stride * n));
            let word3 = identity | nfmt << 12 | dfmt << 15;
            b.run1(
                "buffer_format_store",
                n as u32,
                64,
                &[
                    Arg::Buf(db),
                    Arg::Buf(d16b),
                    Arg::U32(word3),
                    Arg::I32(stride as i32),
                    Arg::I32(count as i32),
                    Arg::Buf(rb),
                    Arg::Buf(hb),
                ],
            );
            let (got, got16): (Vec<u8>, Vec<u8>) = (b.read(db), b.read(d16b));
            let bits = format_bits(dfmt);
            let pack = |vals: [u32; 4]| {
                let mut word = 0u64;
                let mut shift = 0;
                for k in 0..4 {
                    let n = bits[k];
                    if n == 0 {
                        continue;
                    }
                    let mask = (1u64 << n) - 1;
                    let x = f32::from_bits(vals[k]);
                    let x = if x.is_nan() { 0.0 } else { x };
                    let v = match nfmt {
                        0 => (x.clamp(0.0, 1.0) * mask as f32).round_ties_even() as u64,
                        1 => {
                            let m = ((1u64 << (n - 1)) - 1) as f32;
                            (x.clamp(-1.0, 1.0) * m).round_ties_even() as i64 as u64 & mask
                        }
                        7 => f16::from_f32(f32::from_bits(vals[k])).to_bits() as u64,
                        _ => vals[k] as u64 & mask,
                    };
                    word |= v << shift;
                    shift += n;
                }
                word.to_le_bytes()[..stride].to_vec()
            };
            for i in 0..n {
                let e = stride * i..stride * (i + 1);
                let widen = |h: u32| {
                    if float {
                        f16::from_bits(h as u16).to_f32().to_bits()
                    } else if nfmt == 5 {
                        h as u16 as i16 as i32 as u32
                    } else {
                        h & 0xFFFF
                    }
                };
                let (want, want16) = if i < count {
                    let v: [u32; 4] = regs[4 * i..4 * i + 4].try_into().unwrap();
                    let h = [
                        widen(halves[2 * i]),
                        widen(halves[2 * i] >> 16),
                        widen(halves[2 * i + 1]),
                        widen(halves[2 * i + 1] >> 16),
                    ];
                    (pack(v), pack(h))
                } else {
                    (vec![0; stride], vec![0; stride])
                };
                let msg = format!("{} format {dfmt}/{nfmt} element {i}", t.name());
                assert_eq!(&got[e.clone()], &want[..], "{msg}");
                assert_eq!(&got16[e], &want16[..], "{msg} (d16)");
            }
        }
    }
}

#[test]
fn tbuffer_accesses_take_their_formats_from_the_instruction() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "tbuffer_load_format_xyzw",
                "tbuffer_load_format_xy",
                "tbuffer_load_format_d16_xyz",
                "tbuffer_load_format_x",
                "tbuffer_store_format_xyzw",
                "tbuffer_store_format_xy",
            ],
        );
        let n = 128usize;
        let mut r = Rng(61);
        let src: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        let regs: Vec<u32> = (0..4 * n).map(|_| r.next() as u32).collect();
        let (sb, rb) = (b.buf_of(&src), b.buf_of(&regs));
        let (db, out) = (b.zeros::<u32>(3 * n), b.zeros::<u32>(10 * n));
        let bytes = 4 * (n - 2);
        b.run1(
            "tbuffer_asm",
            n as u32,
            64,
            &[
                Arg::Buf(sb),
                Arg::I32(bytes as i32),
                Arg::Buf(rb),
                Arg::Buf(db),
                Arg::Buf(out),
            ],
        );
        let (got, dst): (Vec<u32>, Vec<u32>) = (b.read(out), b.read(db));
        for i in 0..n {
            let inside = i < n - 2;
            let s = if inside { src[i] } else { 0 };
            let byte = |k: u32| (s >> (8 * k)) & 0xFF;
            let unorm = |k: u32| (byte(k) as f32 / 255.0).to_bits();
            let h = |k: u32| f16::from_f32(byte(k) as f32).to_bits() as u32;
            let o = &got[10 * i..10 * i + 10];
            let want_a = if inside {
                [unorm(0), unorm(1), unorm(2), unorm(3)]
            } else {
                [0; 4]
            };
            assert_eq!(&o[..4], &want_a, "{} 8_8_8_8 UNORM lane {i}", t.name());
            assert_eq!(
                [o[4], o[5]],
                [s as i16 as i32 as u32, (s >> 16) as i16 as i32 as u32],
                "{} 16_16 SINT lane {i}",
                t.name()
            );
            assert_eq!(o[6], h(0) | h(1) << 16, "{} d16 USCALED lane {i}", t.name());
            assert_eq!(o[7] & 0xFFFF, h(2), "{} d16 USCALED z lane {i}", t.name());
            let d = if inside { src[i] } else { 0 };
            assert_eq!(o[8], d, "{} 32 FLOAT lane {i}", t.name());
            let v = &regs[4 * i..4 * i + 4];
            let packed = v
                .iter()
                .enumerate()
                .fold(0u32, |w, (k, x)| w | (x & 0xFF) << (8 * k));
            assert_eq!(
                &dst[3 * i..3 * i + 3],
                &[packed, v[2], v[3]],
                "{} stores of lane {i}",
                t.name()
            );
        }
    }
}

#[test]
fn lds_dma_loads_write_lds_at_m0_plus_offset_plus_lane() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        let gfx942 = t == amdgpu_emu::Target::Gfx942;
        if gfx942 {
            // Operation names: the segment (global_, scratch_) is a field of the instruction.
            assert_uses(
                &b,
                &[
                    "flat_load_lds_dword",
                    "flat_load_lds_ubyte",
                    "buffer_load_ushort",
                ],
            );
        } else {
            assert_uses(&b, &["buffer_store_lds_dword"]);
        }
        let n = 128usize;
        let mut r = Rng(71);
        let src: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        let sb = b.buf_of(&src);
        let (out, back) = (b.zeros::<u32>(5 * n), b.zeros::<u32>(64 * 64));
        b.run1(
            "lds_dma",
            n as u32,
            64,
            &[Arg::Buf(sb), Arg::Buf(out), Arg::Buf(back)],
        );
        let (got, got_back): (Vec<u32>, Vec<u32>) = (b.read(out), b.read(back));
        let bytes: Vec<u8> = src.iter().flat_map(|w| w.to_le_bytes()).collect();
        let half = |off: usize| {
            if off < 512 {
                u16::from_le_bytes([bytes[off], bytes[off + 1]]) as u32
            } else {
                0
            }
        };
        let ushort_of_lane = |blk: usize, t: usize| half(2 * (64 * blk + t) + 256 * blk + 4);
        for i in 0..n {
            let (blk, l) = (i / 64, i % 64);
            let init = 0xDEAD_0000 + l as u32;
            let want = [
                src[i],
                if l < 4 {
                    init
                } else {
                    bytes[64 * blk + l + 12] as u32
                },
                if l < 4 {
                    bytes[64 * blk + 60 + l + 16] as u32
                } else {
                    init
                },
                if l == 0 {
                    init
                } else {
                    ushort_of_lane(blk, l - 1)
                },
                if gfx942 {
                    src[(3 * l) % 64] ^ (0x1000 * l as u32)
                } else if l == 0 {
                    ushort_of_lane(blk, 63)
                } else {
                    init
                },
            ];
            assert_eq!(&got[5 * i..5 * i + 5], &want, "{} lane {i}", t.name());
            if !gfx942 {
                assert_eq!(got_back[i], src[i], "{} stored LDS dword {i}", t.name());
            }
        }
    }
}

#[test]
fn global_packed_bfloat_adds_on_gfx942() {
    let t = amdgpu_emu::Target::Gfx942;
    let mut b = Bench::new("memory_more", t);
    assert_uses(&b, &["flat_atomic_pk_add_bf16"]);
    let n = 128usize;
    let mut r = Rng(73);
    let pack = |a: f32, c: f32| {
        bf16::from_f32(a).to_bits() as u32 | (bf16::from_f32(c).to_bits() as u32) << 16
    };
    // Halves of small integers: every partial sum is exact, so the order does not matter.
    let vals: Vec<[f32; 2]> = (0..n)
        .map(|_| [(r.next() % 8) as f32 * 0.5, (r.next() % 8) as f32 * -0.5])
        .collect();
    let init = [[1.0f32, 2.0], [0.5, -1.0], [3.0, 0.0], [-2.0, 4.0]];
    let sb = b.buf_of(&init.iter().map(|v| pack(v[0], v[1])).collect::<Vec<_>>());
    let vb = b.buf_of(&vals.iter().map(|v| pack(v[0], v[1])).collect::<Vec<_>>());
    b.run1(
        "global_pk_add_bf16",
        n as u32,
        64,
        &[Arg::Buf(sb), Arg::Buf(vb)],
    );
    let got: Vec<u32> = b.read(sb);
    for k in 0..4 {
        let mut s = init[k];
        for i in (k..n).step_by(4) {
            s = [s[0] + vals[i][0], s[1] + vals[i][1]];
        }
        assert_eq!(got[k], pack(s[0], s[1]), "slot {k}");
    }
}

/// Encodings LLVM does not know as instructions stay undecoded (an illegal instruction if
/// run): atomics in the scratch segment, gfx90a's flat-segment f32 and packed f16 adds (its
/// global segment has them), and LDS DMA loads in the flat segment.
#[test]
fn memory_encodings_the_targets_lack_do_not_decode() {
    use amdgpu_emu::Target::{Gfx90a, Gfx942};
    use amdgpu_emu::decode::{Enc, decode};
    let flat = |seg: u32, op: u32| [0xDC00_0000 | op << 18 | seg << 14, 0x007F_3020];
    for t in TARGETS {
        assert_eq!(
            decode(t, &flat(1, 0x42)).enc,
            Enc::Unknown,
            "scratch_atomic_add"
        );
        assert_eq!(
            decode(t, &flat(1, 0x62)).enc,
            Enc::Unknown,
            "scratch_atomic_add_x2"
        );
        assert_eq!(
            decode(t, &flat(2, 0x4d)).enc,
            Enc::Flat,
            "global_atomic_add_f32"
        );
    }
    assert_eq!(decode(Gfx90a, &flat(0, 0x4d)).enc, Enc::Unknown);
    assert_eq!(decode(Gfx90a, &flat(0, 0x4e)).enc, Enc::Unknown);
    assert_eq!(decode(Gfx942, &flat(0, 0x4d)).enc, Enc::Flat);
    assert_eq!(
        decode(Gfx942, &flat(0, 0x2a)).enc,
        Enc::Unknown,
        "flat_load_lds_dword"
    );
    assert_eq!(
        decode(Gfx942, &flat(2, 0x2a)).enc,
        Enc::Flat,
        "global_load_lds_dword"
    );
}

#[test]
fn gws_semaphores_fault_by_name() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(&b, &["ds_gws_sema_v"]);
        let out = b.zeros::<u32>(64);
        let fault = b
            .run("gws_sema", [64, 1, 1], [64, 1, 1], &[Arg::Buf(out)], 0)
            .expect_err("a GWS semaphore faults");
        let text = fault.to_string();
        assert!(
            text.contains("ds_gws_sema_v: GDS/GWS is not emulated"),
            "{}: {text}",
            t.name()
        );
    }
}

#[test]
fn ds_64_bit_operations_from_assembly_match_the_isa() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "ds_mskor_rtn_b64",
                "ds_mskor_b64",
                "ds_cmpst_rtn_f64",
                "ds_cmpst_f64",
                "ds_wrxchg2st64_rtn_b64",
                "ds_wrxchg2_rtn_b64",
            ],
        );
        let n = 128usize;
        let mut r = Rng(79);
        let mut init: Vec<u64> = (0..8 * n).map(|_| r.next()).collect();
        let mut ops: Vec<u64> = (0..8 * n).map(|_| r.next()).collect();
        for i in 0..n {
            // Float compares of B and F against ops[2]: equal bits, zeros of opposite sign,
            // equal NaNs, and unequal values.
            let (bi, fi, c) = (8 * i + 1, 8 * i + 7, 8 * i + 2);
            match i % 4 {
                0 => (init[bi], init[fi]) = (ops[c], ops[c]),
                1 => (init[bi], init[fi], ops[c]) = (1 << 63, 1 << 63, 0),
                2 => {
                    (init[bi], init[fi], ops[c]) =
                        (f64::NAN.to_bits(), f64::NAN.to_bits(), f64::NAN.to_bits())
                }
                _ => {}
            }
        }
        let (ib, ob) = (b.buf_of(&init), b.buf_of(&ops));
        let out = b.zeros::<u64>(14 * n);
        b.run1(
            "ds_asm64",
            n as u32,
            64,
            &[Arg::Buf(ib), Arg::Buf(ob), Arg::Buf(out)],
        );
        let got: Vec<u64> = b.read(out);
        for i in 0..n {
            let v = &init[8 * i..8 * i + 8];
            let o = &ops[8 * i..8 * i + 8];
            let cmpst = |old: u64| {
                if f64::from_bits(old) == f64::from_bits(o[2]) {
                    o[3]
                } else {
                    old
                }
            };
            let want = [
                v[0],
                v[1],
                v[2],
                v[3],
                v[4],
                v[5],
                (v[0] & !o[0]) | o[1],
                cmpst(v[1]),
                o[4],
                o[5],
                o[5],
                o[4],
                (v[6] & !o[6]) | o[7],
                cmpst(v[7]),
            ];
            assert_eq!(&got[14 * i..14 * i + 14], &want, "{} lane {i}", t.name());
        }
    }
}

#[test]
fn format_loads_to_lds_and_d16_format_stores() {
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(
            &b,
            &[
                "buffer_load_format_x",
                "buffer_store_format_d16_hi_x",
                "tbuffer_store_format_d16_x",
            ],
        );
        let n = 128usize;
        let mut r = Rng(83);
        let src: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
        let halves: Vec<u32> = (0..n)
            .map(|_| {
                let h = f16::from_f32(r.f32()).to_bits() as u32;
                h << 16 | (r.next() as u32 & 0xFFFF)
            })
            .collect();
        let (sb, hb) = (b.buf_of(&src), b.buf_of(&halves));
        let (hi_out, t16_out, lds_out) = (b.zeros::<u16>(n), b.zeros::<u16>(n), b.zeros::<u32>(n));
        b.run1(
            "format_more_asm",
            n as u32,
            64,
            &[
                Arg::Buf(sb),
                Arg::Buf(hb),
                Arg::Buf(hi_out),
                Arg::Buf(t16_out),
                Arg::Buf(lds_out),
            ],
        );
        let (gh, gt, gl): (Vec<u16>, Vec<u16>, Vec<u32>) =
            (b.read(hi_out), b.read(t16_out), b.read(lds_out));
        for i in 0..n {
            // X of an 8_8_8_8 UNORM element, as f32 bits, in the lane's LDS dword.
            let x = ((src[i] & 0xFF) as f32 / 255.0).to_bits();
            assert_eq!(gl[i], x, "{} LDS dword {i}", t.name());
            // The high half (an f16) to a 16-bit FLOAT element; the low half to a 16-bit UINT.
            assert_eq!(
                gh[i],
                (halves[i] >> 16) as u16,
                "{} d16_hi store {i}",
                t.name()
            );
            assert_eq!(
                gt[i],
                halves[i] as u16,
                "{} tbuffer d16 store {i}",
                t.name()
            );
        }
    }
}

/// A GPU reads and writes an aligned 64-bit value whole: a reader gathering a cell that another
/// work-group (on another host thread) keeps flipping between two values whose halves differ
/// never sees half of each. Reading each dword on its own (as the emulator did) showed such
/// torn values whenever the two threads overlapped, and broke programs that rely on it (the
/// list ranking of HeCBench `wyllie`, whose 64-bit entries pack a link and a rank).
#[test]
fn aligned_64_bit_values_are_read_and_written_whole_across_threads() {
    common::COMPARE_ENGINES.with(|c| c.set(false));
    for t in TARGETS {
        let mut b = Bench::new("memory_more", t);
        assert_uses(&b, &["flat_load_dwordx2", "flat_store_dwordx2"]);
        let cell = b.buf_of(&[0x0000_0000_FFFF_FFFFu64]);
        let index = b.zeros::<u32>(256);
        let out = b.zeros::<u32>(4);
        b.run1(
            "whole_pairs",
            3 * 256,
            256,
            &[
                Arg::Buf(cell),
                Arg::Buf(index),
                Arg::Buf(out),
                Arg::I32(30000),
            ],
        );
        let got: Vec<u32> = b.read(out);
        assert_eq!(got[2], 2, "both reading work-groups ended");
        assert_eq!(
            got[0], 0,
            "{t:?}: {} torn reads ({} changes seen)",
            got[0], got[1]
        );
    }
}
