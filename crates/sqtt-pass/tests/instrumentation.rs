//! Automatic instrumentation: functions, barriers, memory groups and address traces, and the
//! reordering boundary. Runs the real clang-22 with the built plugin; build the workspace first
//! (`cargo build --workspace`).

mod common;

use common::*;

fn marker_values(insts: &[String]) -> Vec<u32> {
    markers(insts)
        .iter()
        .map(|w| imm(w).unwrap_or_else(|| panic!("constant marker expected, got {w}")))
        .collect()
}

#[test]
fn functions_by_instruction_count() {
    for arch in ["gfx942", "gfx1100"] {
        let co = Compile::new("functions.hip", arch)
            .env("SQTT_INSTRUMENT_FUNCTIONS", "20")
            .env("SQTT_SCOPE_CU", "-1")
            .build("fn-count");
        assert_eq!(
            funcmap(&co).unwrap(),
            ["K:_Z12funcs_kernelPf", "F:1:_Z6alu_fnf"],
            "{arch}"
        );
        let funcs = disassemble(&co);
        let alu = function(&funcs, "_Z6alu_fnf");
        assert_eq!(
            marker_values(alu),
            [6, 1],
            "{arch}: entry enters ID 1, each return exits"
        );
        let last_trace = alu
            .iter()
            .rposition(|i| i.starts_with("s_ttracedata"))
            .unwrap();
        let ret = alu
            .iter()
            .position(|i| i.starts_with("s_setpc_b64"))
            .unwrap();
        assert!(
            last_trace < ret,
            "{arch}: the exit marker precedes the return"
        );
        for other in ["_Z6mem_fnPKfi", "_Z7tiny_fnf", "_Z12funcs_kernelPf"] {
            assert_eq!(
                trace_instruction_count(function(&funcs, other)),
                0,
                "{arch}: {other} is not instrumented"
            );
        }
    }
}

#[test]
fn functions_by_weighted_cost() {
    let co = Compile::new("functions.hip", "gfx942")
        .env("SQTT_INSTRUMENT_FUNCTIONS", "cost:40")
        .env("SQTT_SCOPE_CU", "-1")
        .build("fn-cost");
    // mem_fn: four global loads at cost 10 each; alu_fn: only arithmetic at cost 1 each.
    assert_eq!(
        funcmap(&co).unwrap(),
        ["K:_Z12funcs_kernelPf", "F:1:_Z6mem_fnPKfi"]
    );
    let funcs = disassemble(&co);
    assert_eq!(marker_values(function(&funcs, "_Z6mem_fnPKfi")), [6, 1]);
    assert_eq!(trace_instruction_count(function(&funcs, "_Z6alu_fnf")), 0);
}

#[test]
fn kernels_are_never_instrumented() {
    let co = Compile::new("functions.hip", "gfx1200")
        .env("SQTT_INSTRUMENT_FUNCTIONS", "1")
        .env("SQTT_SCOPE_CU", "-1")
        .build("fn-all");
    let rows = funcmap(&co).unwrap();
    assert!(
        rows.contains(&"K:_Z12funcs_kernelPf".to_string()),
        "{rows:?}"
    );
    assert!(
        !rows
            .iter()
            .any(|r| r.starts_with("F:") && r.ends_with(":_Z12funcs_kernelPf")),
        "{rows:?}"
    );
    for f in ["_Z6alu_fnf", "_Z6mem_fnPKfi", "_Z7tiny_fnf"] {
        assert!(
            rows.iter()
                .any(|r| r.starts_with("F:") && r.ends_with(&format!(":{f}"))),
            "{f}: {rows:?}"
        );
    }
    let funcs = disassemble(&co);
    // The kernel only carries the markers of inlined helpers, never an enter of its own.
    let own = rows
        .iter()
        .find(|r| r.starts_with("F:") && r.ends_with(":_ZL8thread_xv"))
        .map(|r| r[2..].split(':').next().unwrap().parse::<u32>().unwrap());
    let kernel_words = marker_values(function(&funcs, "_Z12funcs_kernelPf"));
    for w in &kernel_words {
        assert!(
            *w == 1 || Some(w >> 2) == own,
            "unexpected marker {w:#x} in the kernel: {kernel_words:?}"
        );
    }
}

#[test]
fn barriers_on_gfx9_and_gfx12() {
    let co = Compile::new("barriers.hip", "gfx942")
        .env("SQTT_INSTRUMENT_BARRIERS", "1")
        .env("SQTT_SCOPE_CU", "-1")
        .build("bar9");
    assert_eq!(
        funcmap(&co).unwrap(),
        ["K:_Z14barrier_kernelPf", "P:1:barrier"]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z14barrier_kernelPf");
    assert_eq!(marker_values(k), [4, 4]);
    let bar = k.iter().position(|i| i == "s_barrier").unwrap();
    assert_eq!(marker_values(&k[..bar]), [4], "a marker before the barrier");
    assert_eq!(marker_values(&k[bar..]), [4], "and one after it");

    let co = Compile::new("barriers.hip", "gfx1200")
        .env("SQTT_INSTRUMENT_BARRIERS", "1")
        .env("SQTT_SCOPE_CU", "-1")
        .build("bar12");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "K:_Z14barrier_kernelPf",
            "P:1:barrier",
            "P:2:barrier_signal"
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z14barrier_kernelPf");
    // __syncthreads and the explicit signal+wait pair fuse to `barrier`; the lone signal is
    // `barrier_signal`.
    assert_eq!(marker_values(k), [4, 4, 4, 4, 8, 8]);
    let signals: Vec<usize> = k
        .iter()
        .enumerate()
        .filter(|(_, i)| i.starts_with("s_barrier_signal"))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(signals.len(), 3);
    let waits = k.iter().filter(|i| i.starts_with("s_barrier_wait")).count();
    assert_eq!(waits, 2);
}

#[test]
fn memory_groups_split_loads_and_stores() {
    let co = Compile::new("memory.hip", "gfx942")
        .env("SQTT_INSTRUMENT_MEMORY", "2:5")
        .env("SQTT_SCOPE_CU", "-1")
        .build("mem25");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "K:_Z13memory_kernelPKfPf",
            "P:1:vmem_load",
            "P:2:vmem_store"
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z13memory_kernelPKfPf");
    // Four loads: one marker per two; three stores: markers before the first and third.
    assert_eq!(marker_values(k), [4, 4, 8, 8]);
    // LDS traffic is never grouped: no marker directly before ds_ instructions.
    let first_store_marker = k
        .iter()
        .position(|i| i.starts_with("s_mov_b32 m0, 8"))
        .unwrap();
    assert!(
        k[first_store_marker..]
            .iter()
            .take(4)
            .any(|i| i.starts_with("global_store")),
        "{k:?}"
    );

    let co = Compile::new("memory.hip", "gfx1100")
        .env("SQTT_INSTRUMENT_MEMORY", "1:0")
        .env("SQTT_SCOPE_CU", "-1")
        .build("mem10");
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z13memory_kernelPKfPf");
    assert_eq!(
        marker_values(k),
        [4, 4, 4, 4, 8, 8, 8],
        "N=1: every global operation"
    );
    assert_eq!(k.iter().filter(|i| i.starts_with("global_")).count(), 7);
}

#[test]
fn address_traces_wave64() {
    let co = Compile::new("addresses.hip", "gfx942")
        .env("SQTT_TRACE_ADDRESSES", "memory,lds")
        .env("SQTT_SCOPE_CU", "-1")
        .build("addr64");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "W:64",
            "K:_Z14address_kernelPf",
            "P:1:addr_trace_load",
            "R:1:extra_payload_count=130",
            "P:2:addr_trace_lds_store",
            "R:2:extra_payload_count=66",
            "P:3:addr_trace_lds_load",
            "R:3:extra_payload_count=66",
            "P:4:addr_trace_store",
            "R:4:extra_payload_count=130",
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z14address_kernelPf");
    // Header + EXEC (2 words) + 64 lanes x (2 words global, 1 word LDS).
    assert_eq!(trace_instruction_count(k), 4 + 130 + 66 + 66 + 130);
    let words = markers(k);
    let header = words.iter().position(|w| w == "4").unwrap();
    assert_eq!(words[header + 1], "exec_lo");
    assert_eq!(words[header + 2], "exec_hi");
    assert_eq!(
        k.iter()
            .filter(|i| i.starts_with("v_readlane_b32") && i.ends_with(", 63"))
            .count(),
        2 + 1 + 1 + 2
    );

    let co = Compile::new("addresses.hip", "gfx942")
        .env("SQTT_TRACE_ADDRESSES", "lds")
        .env("SQTT_SCOPE_CU", "-1")
        .arg("-g")
        .build("addr-lds");
    let rows = funcmap(&co).unwrap();
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert!(
        rows[2].starts_with("P:1:addr_trace_lds_store@") && rows[2].ends_with("addresses.hip:9"),
        "{rows:?}"
    );
    assert!(
        rows[4].starts_with("P:2:addr_trace_lds_load@") && rows[4].ends_with("addresses.hip:11"),
        "{rows:?}"
    );
}

#[test]
fn address_traces_wave32() {
    let co = Compile::new("addresses.hip", "gfx1100")
        .env("SQTT_TRACE_ADDRESSES", "memory")
        .env("SQTT_SCOPE_CU", "-1")
        .build("addr32");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "W:32",
            "K:_Z14address_kernelPf",
            "P:1:addr_trace_load",
            "R:1:extra_payload_count=65",
            "P:2:addr_trace_store",
            "R:2:extra_payload_count=65"
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z14address_kernelPf");
    assert_eq!(trace_instruction_count(k), 2 + 65 * 2);
    assert!(!k.iter().any(|i| i.contains("exec_hi")));
}

#[test]
fn address_traces_raw_buffers() {
    let co = Compile::new("buffer.hip", "gfx942")
        .env("SQTT_TRACE_ADDRESSES", "memory")
        .env("SQTT_SCOPE_CU", "-1")
        .build("addr-buf");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "W:64",
            "K:_Z13buffer_kernelPfi",
            "P:1:addr_trace_buffer_load",
            "R:1:extra_payload_count=69",
            "P:2:addr_trace_buffer_store",
            "R:2:extra_payload_count=69",
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z13buffer_kernelPfi");
    assert_eq!(trace_instruction_count(k), 2 * (1 + 69));
    // Header, EXEC, descriptor base (2 words), soffset (16 for the load), then 64 voffsets.
    let words = markers(k);
    assert_eq!(&words[..3], ["4", "exec_lo", "exec_hi"]);
    assert!(
        words[3].starts_with('s') && words[4].starts_with('s') && words[5].starts_with('s'),
        "{words:?}"
    );
    assert_eq!(
        k.iter().filter(|i| i.starts_with("v_readlane_b32")).count(),
        2 * 64
    );
    // LDS-only tracing leaves buffer accesses alone.
    let co = Compile::new("buffer.hip", "gfx942")
        .env("SQTT_TRACE_ADDRESSES", "lds")
        .build("addr-buf-lds");
    assert!(funcmap(&co).is_none());
}

#[test]
fn atomics_are_traced_but_never_grouped() {
    let co = Compile::new("atomics.hip", "gfx1100")
        .env("SQTT_TRACE_ADDRESSES", "memory,lds")
        .env("SQTT_SCOPE_CU", "-1")
        .build("addr-atomic");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "W:32",
            "K:_Z13atomic_kernelPi",
            "P:1:addr_trace_lds_store",
            "R:1:extra_payload_count=33",
            "P:2:addr_trace_lds_atomic",
            "R:2:extra_payload_count=33",
            "P:3:addr_trace_atomic",
            "R:3:extra_payload_count=65",
        ]
    );
    assert_eq!(
        trace_instruction_count(function(&disassemble(&co), "_Z13atomic_kernelPi")),
        3 + 33 + 33 + 65
    );
    let co = Compile::new("atomics.hip", "gfx1100")
        .env("SQTT_INSTRUMENT_MEMORY", "1:0")
        .build("group-atomic");
    assert!(
        funcmap(&co).is_none(),
        "atomics and LDS stores form no vmem group"
    );
}

#[test]
fn illegal_combinations_fail_with_the_documented_messages() {
    let err = Compile::new("addresses.hip", "gfx942")
        .env("SQTT_TRACE_ADDRESSES", "memory")
        .env("SQTT_INSTRUMENT_MEMORY", "2:5")
        .try_build("combo1")
        .unwrap_err();
    assert!(
        err.contains(
            "SQTT_INSTRUMENT_MEMORY=2:5 and SQTT_TRACE_ADDRESSES=memory cannot be combined"
        ),
        "{err}"
    );
    let err = Compile::new("addresses.hip", "gfx1200")
        .env("SQTT_TRACE_ADDRESSES", "lds")
        .env("SQTT_SHADER_CLOCK_BITS", "12")
        .try_build("combo2")
        .unwrap_err();
    assert!(
        err.contains("SQTT_SHADER_CLOCK_BITS=12 and SQTT_TRACE_ADDRESSES=lds cannot be combined"),
        "{err}"
    );
    for (var, value) in [
        ("SQTT_INSTRUMENT_MEMORY", "2"),
        ("SQTT_INSTRUMENT_FUNCTIONS", "cost:x"),
        ("SQTT_TRACE_ADDRESSES", "global"),
        ("SQTT_MEM_BARRIER", "full"),
        ("SQTT_SCOPE_SIMD", "0xg"),
        ("SQTT_INSTRUMENT_BARRIERS", "yes"),
    ] {
        let err = Compile::new("named.hip", "gfx942")
            .env(var, value)
            .try_build("bad-value")
            .unwrap_err();
        assert!(
            err.contains(&format!("{var}=\"{value}\" is invalid")),
            "{var}: {err}"
        );
    }
}

#[test]
fn mem_barrier_modes() {
    let count = |ir: &str, needle: &str| ir.lines().filter(|l| l.contains(needle)).count();
    let fence = "fence syncscope(\"workgroup\") acq_rel, !mmra";
    let asm = "asm sideeffect \"\", \"~{memory}\"";
    // clock.hip has five marker sites; each gets a boundary before and after.
    let ir = Compile::new("clock.hip", "gfx942").ir("mb-default");
    assert_eq!((count(&ir, fence), count(&ir, asm)), (10, 0));
    assert!(
        ir.contains("!{!\"amdgpu-synchronize-as\", !\"local\"}"),
        "LDS-only synchronisation tag"
    );
    let ir = Compile::new("clock.hip", "gfx942")
        .env("SQTT_MEM_BARRIER", "asm")
        .ir("mb-asm");
    assert_eq!((count(&ir, fence), count(&ir, asm)), (0, 10));
    let ir = Compile::new("clock.hip", "gfx942")
        .env("SQTT_MEM_BARRIER", "none")
        .ir("mb-none");
    assert_eq!((count(&ir, fence), count(&ir, asm)), (0, 0));
    let ir = Compile::new("clock.hip", "gfx942")
        .env("SQTT_MEM_BARRIER", "2")
        .ir("mb-2");
    assert_eq!(count(&ir, fence), 10);
}
