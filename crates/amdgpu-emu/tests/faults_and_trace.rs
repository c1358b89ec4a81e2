//! Faults end a dispatch with a description naming the instruction, kernel and offset; the
//! process keeps running. Shader-data records carry the wave's placement and cycle count.
#![allow(clippy::needless_range_loop)]

mod common;
use amdgpu_emu::FaultKind;
use common::{Arg, Bench, TARGETS};

#[test]
fn out_of_bounds_store_is_a_memory_fault_naming_address_instruction_and_lane() {
    for t in TARGETS {
        let mut b = Bench::new("special", t);
        let x = b.zeros::<i32>(64);
        let base = b.address(x);
        // Lane i stores at x[i * 100]: lane 1 is already 400 bytes in, past the 256-byte
        // buffer and inside the unmapped gap after it.
        let f = b
            .run(
                "oob_store",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Buf(x), Arg::I32(100)],
                0,
            )
            .unwrap_err();
        match f.kind {
            FaultKind::Memory {
                address,
                size,
                lane,
                write,
            } => {
                assert_eq!(lane, Some(1), "{}", t.name());
                assert_eq!(address, base + 400);
                assert_eq!(size, 4);
                assert!(write);
            }
            other => panic!("expected a memory fault, got {other:?}"),
        }
        assert!(
            f.instruction.starts_with("global_store_dword"),
            "{}",
            f.instruction
        );
        let msg = f.to_string();
        assert!(
            msg.contains("oob_store+0x")
                && msg.contains(&format!("0x{:x}", base + 400))
                && msg.contains("lane 1"),
            "{msg}"
        );
        // Lane 0's store (inside the buffer) may or may not have landed; nothing else did.
        assert!(b.read::<i32>(x)[1..].iter().all(|&v| v == 0));
    }
}

#[test]
fn trap_ends_the_dispatch_with_a_trap_fault() {
    for t in TARGETS {
        let mut b = Bench::new("special", t);
        let x = b.zeros::<i32>(64);
        let f = b
            .run("trap_kernel", [64, 1, 1], [64, 1, 1], &[Arg::Buf(x)], 0)
            .unwrap_err();
        assert_eq!(f.kind, FaultKind::Trap { code: 2 }, "{}", t.name());
        assert_eq!(f.instruction, "s_trap 2");
        assert!(f.to_string().contains("trap_kernel+0x"), "{f}");
        // The emulator keeps working after a fault.
        let ok = b.run(
            "oob_store",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Buf(x), Arg::I32(0)],
            0,
        );
        assert!(ok.is_ok());
    }
}

#[test]
fn an_unknown_instruction_is_an_illegal_instruction_fault() {
    for t in TARGETS {
        let b = Bench::new("stream", t);
        // Overwrite the first instruction of `inc` with an encoding no table holds
        // (MIMG opcode 127 is unassigned).
        let entry = b.co.symbol("inc").unwrap();
        b.mem
            .write(0x1000_0000 + entry, &0xF1FC_0000u32.to_le_bytes());
        let f = b
            .run(
                "inc",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::I32(0), Arg::I32(0)],
                0,
            )
            .unwrap_err();
        match &f.kind {
            FaultKind::IllegalInstruction { reason } => {
                assert!(reason.contains("decoder does not know"), "{reason}");
                // Named by its encoding family and opcode field, not only the raw word.
                assert!(reason.contains("MIMG opcode 127 (0x7f)"), "{reason}");
            }
            other => panic!("expected an illegal instruction, got {other:?}"),
        }
        assert_eq!(f.code_offset, 0);
        assert_eq!(f.instruction, ".long 0xf1fc0000");
        assert!(f.to_string().starts_with("illegal instruction"), "{f}");
    }
}

#[test]
fn ttracedata_records_and_hw_id_placement() {
    for t in TARGETS {
        let mut b = Bench::new("special", t);
        let hw = b.zeros::<u32>(512);
        let out = b
            .run(
                "trace_markers",
                [512, 1, 1],
                [128, 1, 1],
                &[Arg::Buf(hw)],
                0,
            )
            .unwrap();
        // 4 work-groups of 2 waves, two markers per wave.
        assert_eq!(out.waves, 8);
        assert_eq!(out.trace.len(), 16, "{}", t.name());
        let got = b.read::<u32>(hw);
        for (i, v) in got.iter().enumerate() {
            let (group, wave) = (i / 128, (i % 128) / 64);
            // cu << 8 | simd << 4 | wave slot, from the documented placement (4 CUs).
            let want = ((group % 4) as u32) << 8 | (wave as u32 % 4) << 4 | (wave as u32 / 4);
            assert_eq!(*v, want, "{} work-item {i}", t.name());
        }
        let mut per_wave = std::collections::BTreeMap::new();
        for r in &out.trace {
            per_wave
                .entry((r.cu, r.simd, r.wave_id))
                .or_insert_with(Vec::new)
                .push(*r);
        }
        assert_eq!(per_wave.len(), 8);
        for recs in per_wave.values() {
            assert_eq!(recs.len(), 2);
            assert_eq!(recs[0].value, 0x12 << 2 | 2);
            assert_eq!(recs[1].value, 1);
            assert!(recs[0].time < recs[1].time, "issue order per wave");
            assert_eq!(recs[0].flags, 0);
        }
    }
}

#[test]
fn a_kernel_that_never_ends_hits_the_time_limit() {
    // An endless kernel has no end state to compare between the engines.
    common::COMPARE_ENGINES.with(|c| c.set(false));
    for t in TARGETS {
        let mut b = Bench::new("special", t);
        b.emu =
            amdgpu_emu::Emulator::new(t, 2).with_time_limit(std::time::Duration::from_millis(200));
        let flag = b.zeros::<i32>(1);
        let f = b
            .run(
                "spin_forever",
                [256, 1, 1],
                [64, 1, 1],
                &[Arg::Buf(flag)],
                0,
            )
            .unwrap_err();
        assert!(
            matches!(f.kind, FaultKind::TimeLimit { .. }),
            "{}: {f}",
            t.name()
        );
        assert!(f.to_string().contains("spin_forever+0x"), "{f}");
    }
}

#[test]
fn a_compiled_loop_returns_to_the_scheduler_and_meets_the_time_limit() {
    common::COMPARE_ENGINES.with(|c| c.set(false));
    for t in TARGETS {
        let mut b = Bench::new("special", t);
        b.emu = amdgpu_emu::Emulator::new(t, 1)
            .with_compiled_regions(Some(1))
            .with_time_limit(std::time::Duration::from_millis(300));
        let x = b.buf_of(&[1.0f32; 64]);
        let f = b
            .run(
                "long_loop",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Buf(x), Arg::I32(i32::MAX)],
                0,
            )
            .unwrap_err();
        assert!(
            matches!(f.kind, FaultKind::TimeLimit { .. }),
            "{}: {f}",
            t.name()
        );
        // The loop ran as compiled code (the region holding it was compiled and entered).
        assert!(b.emu.compiled_regions() > 0, "{}", t.name());
        // A short run of the same loop gives the interpreter's result.
        common::COMPARE_ENGINES.with(|c| c.set(true));
        b.emu = amdgpu_emu::Emulator::new(t, 1).with_compiled_regions(Some(1));
        b.run1("long_loop", 64, 64, &[Arg::Buf(x), Arg::I32(1000)]);
        common::COMPARE_ENGINES.with(|c| c.set(false));
    }
}
