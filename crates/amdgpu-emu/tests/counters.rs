//! The emulator's counter quantities against an independent count: `llvm-objdump` disassembles
//! the code object, each mnemonic is classified by its prefix, and the classes are multiplied
//! by the waves and the loop's trip count. Also: the geometry quantities (waves, work-groups,
//! full waves) and counting off.

mod common;

use amdgpu_emu::{DispatchOutcome, Quantity, Target};
use common::{Arg, Bench, TARGETS, corpus};
use std::collections::HashMap;
use std::process::Command;

/// One disassembled instruction: address, mnemonic, branch target.
struct Line {
    addr: u64,
    mnemonic: String,
    target: Option<u64>,
}

/// The instructions of `kernel` up to its first `s_endpgm`, from `llvm-objdump-22 -d`.
fn disassemble(kernel: &str, t: Target) -> Vec<Line> {
    let path = &corpus()[&("counters".to_string(), t)];
    let out = Command::new("llvm-objdump-22")
        .args(["-d", &format!("--mcpu={}", t.name())])
        .arg(path)
        .output()
        .expect("llvm-objdump-22 must be installed (scripts/install-deps.sh)");
    assert!(out.status.success(), "llvm-objdump-22 failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if l.ends_with(&format!("<{kernel}>:")) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((code, comment)) = l.split_once("//") else {
            continue;
        };
        let mnemonic = code.split_whitespace().next().unwrap_or("").to_string();
        let addr = u64::from_str_radix(comment.trim().split(':').next().unwrap().trim(), 16)
            .expect("address in the comment");
        // A branch's target is printed as `<kernel+0x..>`.
        let target = comment
            .split_once(&format!("<{kernel}+0x"))
            .map(|(_, rest)| {
                let base = lines.first().map_or(addr, |f: &Line| f.addr);
                base + u64::from_str_radix(rest.trim_end_matches('>'), 16).unwrap()
            });
        let end = mnemonic == "s_endpgm";
        lines.push(Line {
            addr,
            mnemonic,
            target,
        });
        if end {
            break;
        }
    }
    assert!(!lines.is_empty(), "{kernel} not found in the disassembly");
    lines
}

/// The categories of a mnemonic, by prefix alone.
fn categories(m: &str) -> Vec<Quantity> {
    let mut q = vec![Quantity::Insts];
    let sopp_other = [
        "s_nop",
        "s_endpgm",
        "s_waitcnt",
        "s_barrier",
        "s_setprio",
        "s_sleep",
        "s_trap",
        "s_icache_inv",
        "s_set_gpr_idx_off",
        "s_set_gpr_idx_mode",
        "s_setkill",
        "s_sethalt",
    ];
    if m.starts_with("s_cbranch") || m == "s_branch" || m == "s_setpc_b64" || m == "s_swappc_b64" {
        q.push(Quantity::InstsBranch);
    } else if m.starts_with("s_load")
        || m.starts_with("s_store")
        || m.starts_with("s_buffer")
        || m.starts_with("s_dcache")
        || m.starts_with("s_memtime")
        || m.starts_with("s_memrealtime")
    {
        q.push(Quantity::InstsSmem);
    } else if m.starts_with("s_sendmsg") {
        q.push(Quantity::InstsSendmsg);
    } else if sopp_other.contains(&m) {
    } else if m.starts_with("s_") {
        q.push(Quantity::InstsSalu);
    } else if m.starts_with("v_mfma") {
        q.extend([Quantity::InstsValu, Quantity::InstsMfma]);
    } else if m.starts_with("v_") {
        q.push(Quantity::InstsValu);
    } else if ["global_", "flat_", "buffer_", "scratch_"]
        .iter()
        .any(|p| m.starts_with(p))
    {
        q.push(if m.contains("store") {
            Quantity::InstsVmemWr
        } else {
            Quantity::InstsVmemRd
        });
    } else if m.starts_with("ds_") {
        q.push(Quantity::InstsLds);
    }
    q
}

/// The expected totals: each instruction's categories, times `trips` inside the one backward
/// branch's loop, times the waves.
fn expected(lines: &[Line], trips: u64, waves: u64) -> HashMap<usize, u64> {
    let back: Vec<&Line> = lines
        .iter()
        .filter(|l| l.target.is_some_and(|t| t < l.addr))
        .collect();
    assert!(back.len() <= 1, "one loop at most");
    let body = back.first().map(|b| b.target.unwrap()..=b.addr);
    let mut counts = HashMap::new();
    for l in lines {
        let times = match &body {
            Some(r) if r.contains(&l.addr) => trips,
            _ => 1,
        };
        for q in categories(&l.mnemonic) {
            *counts.entry(q as usize).or_insert(0) += times * waves;
        }
    }
    counts
}

const CHECKED: [Quantity; 10] = [
    Quantity::Insts,
    Quantity::InstsSalu,
    Quantity::InstsSmem,
    Quantity::InstsBranch,
    Quantity::InstsValu,
    Quantity::InstsMfma,
    Quantity::InstsVmemRd,
    Quantity::InstsVmemWr,
    Quantity::InstsLds,
    Quantity::InstsSendmsg,
];

fn assert_matches(o: &DispatchOutcome, want: &HashMap<usize, u64>, what: &str) {
    for q in CHECKED {
        assert_eq!(
            o.counters.total(q),
            want.get(&(q as usize)).copied().unwrap_or(0),
            "{what}: {q:?}"
        );
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
        assert_matches(&o, &want, &format!("straight on {}", t.name()));
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
        assert_matches(&o, &want, &format!("mfma_once on {}", t.name()));
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
            assert_matches(&o, &want, &format!("looped x{trips} on {}", t.name()));
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
