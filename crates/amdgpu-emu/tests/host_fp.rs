//! A caller running with flush-to-zero and denormals-are-zero set (as fast-math start-up code
//! leaves the x86-64 MXCSR) still gets IEEE results from the emulator, on the calling thread
//! and on the worker threads it spawns, and gets its own MXCSR back afterwards.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{Arg, Bench, TARGETS};

const FTZ_DAZ: u32 = 1 << 15 | 1 << 6;

fn mxcsr() -> u32 {
    let mut v: u32 = 0;
    // SAFETY: `stmxcsr` stores the 4-byte MXCSR to a valid, writable local.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack)) };
    v
}

fn set_mxcsr(v: u32) {
    // SAFETY: loads a value derived from the current MXCSR by setting FTZ/DAZ (valid bits);
    // it changes only this thread's floating-point environment.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack)) };
}

#[test]
fn a_flush_to_zero_caller_gets_ieee_denormal_results() {
    let n = 256usize;
    // Denormal inputs, and normal inputs whose halves are denormal.
    let c: Vec<f32> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                f32::from_bits(1 + i as u32 * 977)
            } else {
                f32::from_bits(0x0080_0000 + i as u32)
            }
        })
        .collect();
    let want: Vec<u32> = c.iter().map(|x| (0.5f32 * x).to_bits()).collect();
    assert!(want.iter().any(|&w| w != 0 && w < 0x0080_0000));
    let caller = mxcsr();
    for t in TARGETS {
        for threads in [1, 2] {
            let mut b = Bench::with_threads("stream", t, threads);
            let (out, ci) = (b.zeros::<f32>(n), b.buf_of(&c));
            set_mxcsr(caller | FTZ_DAZ);
            let run = b.run(
                "mul",
                [n as u32, 1, 1],
                [64, 1, 1],
                &[
                    Arg::Buf(out),
                    Arg::Buf(ci),
                    Arg::F32(0.5),
                    Arg::I32(n as i32),
                ],
                0,
            );
            let after = mxcsr();
            set_mxcsr(caller);
            run.unwrap_or_else(|f| panic!("{f}"));
            assert_eq!(after & FTZ_DAZ, FTZ_DAZ, "the caller's MXCSR is restored");
            let got: Vec<u32> = b.read::<f32>(out).iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, want, "{} on {threads} threads", t.name());
        }
    }
}
