//! Emulated lane-instructions per second (ALU-bound and memory-bound corpus kernels, one
//! host thread and all cores) and the stream-triad bandwidth against a host memcpy of the
//! same bytes, measured side by side, with arrays of 4 MiB and of 64 MiB; then the ratios the
//! emulator's goals are stated in, from runs taken in turn.
#![allow(clippy::needless_range_loop)]

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use amdgpu_emu::Target;
use common::{Arg, Bench};

fn threads_all() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// A kernel's arguments over `n` elements, in a bench's memory.
type Args = fn(&mut Bench, usize) -> Vec<Arg>;

/// `alu_fma`'s arguments over `n` elements: 64 dependent f32 FMAs per element.
fn alu_args(b: &mut Bench, n: usize) -> Vec<Arg> {
    let x = b.buf_of(&vec![1.0f32; n]);
    vec![Arg::Buf(x), Arg::I32(n as i32), Arg::I32(16)]
}

/// `triad`'s arguments over three arrays of `n` f32 elements.
fn triad_args(b: &mut Bench, n: usize) -> Vec<Arg> {
    vec![
        Arg::Buf(b.zeros::<f32>(n)),
        Arg::Buf(b.buf_of(&vec![1.0f32; n])),
        Arg::Buf(b.buf_of(&vec![2.0f32; n])),
        Arg::F32(0.5),
        Arg::I32(n as i32),
    ]
}

/// Counter quantities on and off, side by side on one host thread: the runs alternate (on, off,
/// on, off, ...) so that load from other processes hits both alike, and the fastest of 101 runs of each
/// is compared. Printed as `counting on/off <kernel>: <ratio>`.
fn counting_cost(t: Target) {
    let n = 1 << 16;
    let mut on = Bench::with_threads("stream", t, 1);
    let mut off = Bench::with_threads("stream", t, 1);
    on.emu = amdgpu_emu::Emulator::new(t, 1).with_counting(true);
    off.emu = amdgpu_emu::Emulator::new(t, 1).with_counting(false);
    let cases: [(&str, Args); 2] = [("alu_fma", alu_args), ("triad", triad_args)];
    for (kernel, args) in cases {
        let (args_on, args_off) = (args(&mut on, n), args(&mut off, n));
        let best = fastest_in_turn(
            101,
            &mut [
                &mut || {
                    std::hint::black_box(on.run1(kernel, n as u32, 256, &args_on));
                },
                &mut || {
                    std::hint::black_box(off.run1(kernel, n as u32, 256, &args_off));
                },
            ],
        );
        let [on_time, off_time] = [best[0], best[1]].map(std::time::Duration::from_secs_f64);
        println!(
            "counting on/off {kernel}: {:.3} (on {on_time:?}, off {off_time:?}, fastest of 101 alternating runs)",
            best[0] / best[1],
        );
    }
}

fn bench(c: &mut Criterion) {
    // Measure the dispatches alone (the tests' harness also runs each on both engines).
    common::COMPARE_ENGINES.with(|c| c.set(false));
    let t = Target::Gfx942;
    let mut g = c.benchmark_group("emulator");
    g.sample_size(10);
    // ALU-bound: 64 fused multiply-adds per element.
    let n = 1 << 16;
    for threads in [1, threads_all()] {
        let mut b = Bench::with_threads("stream", t, threads);
        let args = alu_args(&mut b, n);
        let lanes = b.run1("alu_fma", n as u32, 256, &args).lane_instructions;
        g.throughput(Throughput::Elements(lanes));
        g.bench_function(
            format!("alu_fma lane-instructions, {threads} thread(s)"),
            |bn| bn.iter(|| b.run1("alu_fma", n as u32, 256, &args)),
        );
    }
    // Memory-bound: triad over 3 arrays of 4 MiB (in the last-level cache of most hosts), then
    // over 3 arrays of 64 MiB (in DRAM), each beside a host memcpy of the same bytes; and the
    // 4 MiB triad as gfx90a code (64-bit addresses by 32-bit adds with carries) on one thread.
    let runs = [
        (1usize << 20, "", t, vec![1, threads_all()]),
        (1 << 20, ", gfx90a code", Target::Gfx90a, vec![1]),
        (1 << 24, ", 3 x 64 MiB", t, vec![1, threads_all()]),
    ];
    for (n, size, target, threads) in runs {
        for threads in threads {
            let mut b = Bench::with_threads("stream", target, threads);
            let args = triad_args(&mut b, n);
            g.throughput(Throughput::Bytes(12 * n as u64));
            g.bench_function(format!("triad bytes{size}, {threads} thread(s)"), |bn| {
                bn.iter(|| b.run1("triad", n as u32, 256, &args))
            });
        }
        if target != t {
            continue;
        }
        // Host memcpy moving the same bytes as triad (reads 8n + writes 4n = 12n bytes: a copy
        // of 6n bytes reads 6n and writes 6n).
        let src = vec![1u8; 6 * n];
        let mut dst = vec![0u8; 6 * n];
        g.throughput(Throughput::Bytes(12 * n as u64));
        g.bench_function(format!("host memcpy of the triad's bytes{size}"), |bn| {
            bn.iter(|| dst.copy_from_slice(std::hint::black_box(&src)))
        });
    }
    counting_cost(t);
    goal_ratios(t);
    g.finish();
}

/// The fastest of `rounds` runs of each of `runs`, taken in turn (first, second, ..., first,
/// ...), so that load from other processes hits them alike.
fn fastest_in_turn(rounds: usize, runs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut best = vec![f64::MAX; runs.len()];
    for _ in 0..rounds {
        for (run, best) in runs.iter_mut().zip(&mut best) {
            let s = std::time::Instant::now();
            run();
            *best = best.min(s.elapsed().as_secs_f64());
        }
    }
    best
}

/// The ratios the emulator's goals are stated in, each from runs side by side: the triad's
/// bandwidth on one thread and on all against a host memcpy of the same bytes, and the speed-up
/// from one thread to all of `alu_fma` and of the triad. Printed as `ratios <case>: ...`.
fn goal_ratios(t: Target) {
    let all = threads_all();
    let alu = |threads| {
        let n = 1usize << 16;
        let mut b = Bench::with_threads("stream", t, threads);
        let args = alu_args(&mut b, n);
        move || {
            std::hint::black_box(b.run1("alu_fma", n as u32, 256, &args));
        }
    };
    let (mut one, mut many) = (alu(1), alu(all));
    // Many rounds: a dispatch takes well under a millisecond, and the fastest of each only
    // says what the machine allows when the other core is free.
    let best = fastest_in_turn(101, &mut [&mut one, &mut many]);
    println!(
        "ratios alu_fma: 1 -> {all} threads {:.2}x (fastest of 101 runs in turn)",
        best[0] / best[1]
    );
    for (n, size) in [(1usize << 20, "3 x 4 MiB"), (1 << 24, "3 x 64 MiB")] {
        let triad = |threads| {
            let mut b = Bench::with_threads("stream", t, threads);
            let args = triad_args(&mut b, n);
            move || {
                std::hint::black_box(b.run1("triad", n as u32, 256, &args));
            }
        };
        let (mut one, mut many) = (triad(1), triad(all));
        // The same bytes as the triad moves (reads 8n, writes 4n): a copy of 6n bytes.
        let (src, mut dst) = (vec![1u8; 6 * n], vec![0u8; 6 * n]);
        let mut copy = || dst.copy_from_slice(std::hint::black_box(&src));
        let rounds = if n > 1 << 20 { 9 } else { 31 };
        let best = fastest_in_turn(rounds, &mut [&mut one, &mut many, &mut copy]);
        let gib = |secs: f64| 12.0 * n as f64 / secs / f64::from(1u32 << 30);
        println!(
            "ratios triad {size}: {:.2} / {:.2} / {:.1} GiB/s (1 thread / {all} threads / memcpy), \
             {:.3}x / {:.3}x of memcpy, 1 -> {all} threads {:.2}x (fastest of {rounds} runs in turn)",
            gib(best[0]),
            gib(best[1]),
            gib(best[2]),
            best[2] / best[0],
            best[2] / best[1],
            best[0] / best[1],
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
