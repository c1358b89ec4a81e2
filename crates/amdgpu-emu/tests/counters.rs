//! The emulator's counter quantities against an independent count: `llvm-objdump` disassembles
//! the code object, each mnemonic is classified by its prefix, and the classes are multiplied
//! by the waves and the loop's trip count. Also: the geometry quantities (waves, work-groups,
//! full waves) and counting off.

mod common;

use amdgpu_emu::{DispatchOutcome, Quantity, Target};
use common::{Arg, Bench, TARGETS, corpus};
use std::collections::BTreeMap;
use test_support::instruction_count;

fn disassemble(kernel: &str, t: Target) -> Vec<instruction_count::Line> {
    instruction_count::disassemble(&corpus()[&("counters".to_string(), t)], t.name(), kernel)
}

fn expected(
    lines: &[instruction_count::Line],
    trips: u64,
    waves: u64,
) -> BTreeMap<&'static str, u64> {
    instruction_count::expected(lines, trips, waves)
}

/// The emulator's totals against the expected counts, through the counter catalog's quantities.
fn assert_matches(o: &DispatchOutcome, want: &BTreeMap<&'static str, u64>, t: Target, what: &str) {
    let target = amdgpu_counters::Target::from_isa_name(t.name()).unwrap();
    for (name, value) in want {
        let q = amdgpu_counters::find(target, name).unwrap().quantity;
        assert_eq!(o.counters.total(q), *value, "{what}: {name}");
    }
}

#[test]
fn straight_line_counts_equal_the_disassembly_times_waves() {
    for t in TARGETS {
        let mut b = Bench::new("counters", t);
        let (groups, n) = (6u64, 6 * 256);
        let a = b.zeros::<f32>(n);
        let src = b.buf_of(&vec![2.0f32; n]);
        let o = b.run1(
            "straight",
            n as u32,
            256,
            &[Arg::Buf(a), Arg::Buf(src), Arg::F32(3.0)],
        );
        let waves = groups * 256 / 64;
        let want = expected(&disassemble("straight", t), 1, waves);
        assert_matches(&o, &want, t, &format!("straight on {}", t.name()));
        assert!(o.counters.total(Quantity::InstsLds) >= 2 * waves);
        assert_eq!(o.counters.total(Quantity::Waves), waves);
        assert_eq!(o.counters.total(Quantity::Workgroups), groups);
        assert_eq!(o.counters.total(Quantity::Waves64), waves);
        // One global load and one store of 4 bytes per lane.
        assert_eq!(o.counters.total(Quantity::BytesRead), 4 * n as u64);
        assert_eq!(o.counters.total(Quantity::BytesWritten), 4 * n as u64);
        assert_eq!(o.counters.total(Quantity::Insts), o.wave_instructions);
        assert_eq!(b.read::<f32>(a)[0], 7.0);
    }
}

#[test]
fn mfma_counts_and_math_operations() {
    for t in TARGETS {
        let mut b = Bench::new("counters", t);
        let a = b.buf_of(&vec![1.0f32; 128]);
        let d = b.zeros::<f32>(64 * 4);
        let o = b.run1("mfma_once", 64 * 4, 64, &[Arg::Buf(a), Arg::Buf(d)]);
        let want = expected(&disassemble("mfma_once", t), 1, 4);
        assert_matches(&o, &want, t, &format!("mfma_once on {}", t.name()));
        assert_eq!(o.counters.total(Quantity::InstsMfma), 4);
        assert_eq!(o.counters.total(Quantity::MfmaF32), 4);
        // 16x16x4 f32: 2048 operations per instruction, 4 per 512.
        assert_eq!(o.counters.total(Quantity::MfmaMopsF32), 16);
    }
}

#[test]
fn loop_counts_follow_the_trip_count_and_partial_waves_are_not_full() {
    for t in TARGETS {
        for trips in [1u64, 7, 40] {
            let mut b = Bench::new("counters", t);
            let a = b.buf_of(&vec![1.0f32; 200]);
            // 3 groups of 64 plus a partial wave: ceil(wg/64) waves per group.
            let o = b.run1("looped", 160, 64, &[Arg::Buf(a), Arg::I32(trips as i32)]);
            let waves = 3;
            assert_eq!(o.counters.total(Quantity::Waves), waves);
            assert_eq!(o.counters.total(Quantity::Waves64), 2);
            let want = expected(&disassemble("looped", t), trips, waves);
            assert_matches(&o, &want, t, &format!("looped x{trips} on {}", t.name()));
        }
    }
}

#[test]
fn geometry_counts_by_compute_unit_follow_the_placement() {
    let t = Target::Gfx90a;
    let mut b = Bench::new("counters", t);
    b.emu = amdgpu_emu::Emulator::new(t, 2).with_compute_units(4);
    let a = b.buf_of(&vec![1.0f32; 64 * 10]);
    let o = b.run1("looped", 64 * 10, 64, &[Arg::Buf(a), Arg::I32(2)]);
    // Group g runs on compute unit g % 4: 3, 3, 2, 2 groups.
    let per_cu: Vec<u64> = o
        .counters
        .per_cu
        .iter()
        .map(|c| c[Quantity::Workgroups as usize])
        .collect();
    assert_eq!(per_cu, vec![3, 3, 2, 2]);
}

#[test]
fn counting_off_reports_nothing_and_computes_the_same() {
    let t = Target::Gfx942;
    let mut b = Bench::new("counters", t);
    b.emu = amdgpu_emu::Emulator::new(t, 1).with_counting(false);
    let a = b.buf_of(&vec![1.0f32; 64]);
    let o = b.run1("looped", 64, 64, &[Arg::Buf(a), Arg::I32(3)]);
    assert!(o.counters.is_empty());
    assert_eq!(o.waves, 1);
    // 1 -> 3.5 -> 4.75 -> 5.375
    assert_eq!(b.read::<f32>(a)[0], 5.375);
}

#[test]
fn corpus_counters_do_not_depend_on_the_host_threads_or_the_run() {
    // The per-compute-unit counts follow the placement (group g on CU g % C), not which host
    // thread ran a group: one thread and two give the same arrays, run after run.
    for t in TARGETS {
        let mut per_run = Vec::new();
        for threads in [1, 2, 2] {
            let mut b = Bench::with_threads("reduce", t, threads);
            b.emu = amdgpu_emu::Emulator::new(t, threads).with_compute_units(8);
            let n: i32 = 64 * 256;
            let input = b.buf_of(&(0..n).collect::<Vec<i32>>());
            let out = b.zeros::<i32>(64);
            let o = b.run1(
                "reduce_i32",
                n as u32,
                256,
                &[Arg::Buf(input), Arg::Buf(out), Arg::I32(n)],
            );
            assert_eq!(o.counters.per_cu.len(), 8);
            assert_eq!(o.counters.total(Quantity::Workgroups), 64);
            per_run.push(o.counters);
        }
        assert_eq!(
            per_run[0],
            per_run[1],
            "{}: one thread against two",
            t.name()
        );
        assert_eq!(per_run[1], per_run[2], "{}: two runs", t.name());
    }
}
