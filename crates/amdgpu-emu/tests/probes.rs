//! Hand-written assembly probes (assembled by clang-22, linked by ld.lld-22) of instruction
//! forms the compiled corpus does not produce, on both targets.

mod common;
use std::process::Command;

use amdgpu_emu::code_object::CodeObject;
use common::{Arg, Bench, TARGETS};

fn assemble(t: amdgpu_emu::Target) -> Vec<u8> {
    assemble_source(t, "probe", include_str!("corpus/probe.s"))
}

fn assemble_source(t: amdgpu_emu::Target, name: &str, body: &str) -> Vec<u8> {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = tmp.join(format!("{name}-{}.s", t.name()));
    std::fs::write(
        &src,
        format!(".amdgcn_target \"amdgcn-amd-amdhsa--{}\"\n{body}", t.name()),
    )
    .unwrap();
    let obj = tmp.join(format!("{name}-{}.o", t.name()));
    let co = tmp.join(format!("{name}-{}.co", t.name()));
    let st = Command::new("clang-22")
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            &format!("-mcpu={}", t.name()),
            "-c",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap();
    assert!(st.success(), "assembling the probes failed");
    let st = Command::new("ld.lld-22")
        .arg("-shared")
        .arg(&obj)
        .arg("-o")
        .arg(&co)
        .status()
        .expect("ld.lld-22 (lld-22)");
    assert!(st.success(), "linking the probes failed");
    std::fs::read(co).unwrap()
}

#[test]
fn assembly_probes() {
    for t in TARGETS {
        let co = CodeObject::parse(&assemble(t)).unwrap();
        let mut b = Bench::from_code_object(co, t, 1);
        let out = b.zeros::<u32>(64 * 16);
        let input: Vec<u32> = (0..200u32).map(|i| i * 1000 + 7).collect();
        let inp = b.buf_of(&input);
        b.run1("probe", 64, 64, &[Arg::Buf(out), Arg::Buf(inp)]);
        let got = b.read::<u32>(out);
        for l in 0..64u32 {
            let g = &got[l as usize * 16..l as usize * 16 + 9];
            let row = l & !15;
            let want = [
                row + (((l & 15) + 16 - 4) & 15),
                row + 15 - (l & 15),
                (l & !7) + 7 - (l & 7),
                if l == 0 { 0x77 } else { l - 1 },
                0x3344 | ((2 * l) & 0xFFFF) << 16,
                (l >> 4) | 0x1000_0000,
                input[2 * l as usize + 1],
                0xF,
                if l < 20 { 9 } else { 5 },
            ];
            assert_eq!(g, &want, "{} lane {l}", t.name());
        }
    }
}

// C99 <fenv.h> (glibc, x86-64 values of the rounding-mode macros).
#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    fn fesetround(round: i32) -> i32;
}
#[cfg(target_arch = "x86_64")]
const FE_TONEAREST: i32 = 0;
#[cfg(target_arch = "x86_64")]
const FE_DOWNWARD: i32 = 0x400;
#[cfg(target_arch = "x86_64")]
const FE_UPWARD: i32 = 0x800;
#[cfg(target_arch = "x86_64")]
const FE_TOWARDZERO: i32 = 0xC00;

#[cfg(target_arch = "x86_64")]
/// Host result of `f` with the C rounding mode `mode` in force.
fn host(mode: i32, f: impl Fn() -> f32) -> f32 {
    // SAFETY: fesetround changes this thread's floating-point environment; it is restored to
    // round-to-nearest before returning, and nothing else runs on this thread meanwhile.
    unsafe { fesetround(mode) };
    let r = f();
    // SAFETY: as above.
    unsafe { fesetround(FE_TONEAREST) };
    r
}

/// Directed f32 rounding set by `s_setreg` of MODE, against the host's own arithmetic under
/// the same rounding mode (an independent oracle).
#[cfg(target_arch = "x86_64")]
#[test]
fn directed_rounding_modes_match_the_host_fpu() {
    let mut r = common::Rng(123);
    let mut vals: Vec<f32> = (0..3 * 2048)
        .map(|_| f32::from_bits(r.next() as u32))
        .map(|x| if x.is_finite() { x } else { 1.5 })
        .collect();
    // Edge cases: exact cancellation, overflow, subnormal results, signed zeros.
    vals[..27].copy_from_slice(&[
        1.0,
        -1.0,
        0.0,
        f32::MAX,
        f32::MAX,
        -1.0,
        1e-30,
        1e-20,
        1e-40,
        -0.0,
        -0.0,
        1.0,
        0.1,
        3.0,
        0.3,
        f32::MIN_POSITIVE,
        0.5,
        0.0,
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON,
        -1.0,
        -3.0,
        7.0,
        1e-45,
        2.0,
        -2.0,
        -4.0,
    ]);
    for t in TARGETS {
        let co = CodeObject::parse(&assemble_source(
            t,
            "rounding",
            include_str!("corpus/rounding.s"),
        ))
        .unwrap();
        let mut b = Bench::from_code_object(co, t, 2);
        let n = vals.len() / 3;
        let (out, inp) = (b.zeros::<f32>(9 * n), b.buf_of(&vals));
        b.run1("probe_round", n as u32, 64, &[Arg::Buf(out), Arg::Buf(inp)]);
        let got = b.read::<f32>(out);
        let bb = std::hint::black_box;
        for i in 0..n {
            let (x, y, z) = (vals[3 * i], vals[3 * i + 1], vals[3 * i + 2]);
            for (m, c_mode) in [FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO]
                .into_iter()
                .enumerate()
            {
                let want = [
                    host(c_mode, || bb(x) + bb(y)),
                    host(c_mode, || bb(x) * bb(y)),
                    host(c_mode, || bb(x).mul_add(bb(y), bb(z))),
                ];
                for k in 0..3 {
                    let g = got[9 * i + 3 * m + k];
                    assert!(
                        g.to_bits() == want[k].to_bits() || (g.is_nan() && want[k].is_nan()),
                        "{} mode {} op {k} ({x:e}, {y:e}, {z:e}): {g:e} vs host {:e}",
                        t.name(),
                        m + 1,
                        want[k]
                    );
                }
            }
        }
    }
}
