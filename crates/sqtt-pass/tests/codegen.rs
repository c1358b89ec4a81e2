//! Code generation on every supported target: marker forms, IDs, fusion, scope checks,
//! disabled builds and clock packing. Runs the real clang-22 with the built plugin; build the
//! workspace first (`cargo build --workspace`).

mod common;

use common::*;

const TARGETS: [&str; 4] = ["gfx90a", "gfx942", "gfx1100", "gfx1200"];

fn hw_id_read(arch: &str) -> &'static str {
    match arch {
        "gfx90a" | "gfx942" => "hwreg(HW_REG_HW_ID, 8, 4)",
        "gfx1100" => "hwreg(HW_REG_HW_ID1, 10, 4)",
        _ => "hwreg(HW_REG_WAVE_HW_ID1, 10, 4)",
    }
}

#[test]
fn named_markers_on_every_target() {
    for arch in TARGETS {
        let co = Compile::new("named.hip", arch).build("named");
        assert_eq!(
            funcmap(&co).expect("section present"),
            [
                "K:_Z12named_kernelPfi",
                "U:1:load_phase",
                "U:2:compute_phase",
                "P:3:work_value",
                "R:3:extra_payload_count=1",
                "P:4:store_begin",
            ],
            "{arch}"
        );
        let funcs = disassemble(&co);
        let k = function(&funcs, "_Z12named_kernelPfi");
        let words = markers(k);
        // enter load_phase (1<<2|2), fused exit+enter compute_phase (2<<2|3), data header
        // (3<<2) + payload, exit, point store_begin (4<<2), enter/exit load_phase, then the
        // numeric enter(5), point(6), exit.
        let expected = [
            Some(6),
            Some(11),
            Some(12),
            None,
            Some(1),
            Some(16),
            Some(6),
            Some(1),
            Some(22),
            Some(24),
            Some(1),
        ];
        assert_eq!(words.len(), expected.len(), "{arch}: {words:?}");
        for (w, e) in words.iter().zip(expected) {
            match e {
                Some(v) => assert_eq!(imm(w), Some(v), "{arch}: {words:?}"),
                None => assert!(
                    w.starts_with('s'),
                    "{arch}: payload comes from an SGPR: {words:?}"
                ),
            }
        }
        assert_eq!(
            trace_instruction_count(k),
            expected.len(),
            "{arch}: every trace instruction is a marker"
        );

        let imm_count = k
            .iter()
            .filter(|i| i.starts_with("s_ttracedata_imm"))
            .count();
        if arch.starts_with("gfx9") {
            assert_eq!(imm_count, 0, "{arch}: no immediate form before GFX10");
        } else {
            assert_eq!(
                imm_count,
                expected.len() - 1,
                "{arch}: all constant words fit 8 bits"
            );
        }

        // One scope check per marker site (header and payload share one), reading the right
        // hardware register, testing the default CU mask 0x3.
        let reads: Vec<&String> = k.iter().filter(|i| i.starts_with("s_getreg_b32")).collect();
        assert_eq!(reads.len(), expected.len() - 1, "{arch}: {reads:?}");
        assert!(
            reads.iter().all(|r| r.ends_with(hw_id_read(arch))),
            "{arch}: {reads:?}"
        );
        assert_eq!(
            k.iter()
                .filter(|i| i.starts_with("s_bitcmp1_b32 3, s"))
                .count(),
            reads.len(),
            "{arch}"
        );
        assert!(
            k.iter().filter(|i| i.starts_with("s_cbranch_scc0")).count() >= reads.len(),
            "{arch}"
        );
    }
}

#[test]
fn ids_above_63_use_m0_on_rdna() {
    let co = Compile::new("many_ids.hip", "gfx1100")
        .env("SQTT_SCOPE_CU", "-1")
        .build("many");
    let rows = funcmap(&co).unwrap();
    assert_eq!(rows.len(), 71, "{rows:?}");
    assert_eq!(rows[1], "P:1:point_10");
    assert_eq!(rows[70], "P:70:point_79");
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z11many_kernelPf");
    let words: Vec<u32> = markers(k).iter().map(|w| imm(w).unwrap()).collect();
    assert_eq!(words, (1..=70).map(|id| id << 2).collect::<Vec<_>>());
    assert_eq!(
        k.iter()
            .filter(|i| i.starts_with("s_ttracedata_imm"))
            .count(),
        63
    );
    assert_eq!(k.iter().filter(|i| *i == "s_ttracedata").count(), 7);
    // All scope fields cover everything: no scope check at all.
    assert!(!k.iter().any(|i| i.starts_with("s_getreg_b32")), "{k:?}");
}

#[test]
fn scope_masks_select_fields_and_registers() {
    let co = Compile::new("clock.hip", "gfx942")
        .env("SQTT_SCOPE_SIMD", "0x1")
        .env("SQTT_SCOPE_WAVE", "0x5")
        .env("SQTT_SCOPE_WG", "0x2")
        .env("SQTT_SCOPE_CU", "-1")
        .build("scope9");
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z12clock_kernelPf");
    for field in [
        "hwreg(HW_REG_HW_ID, 0, 4)",
        "hwreg(HW_REG_HW_ID, 4, 2)",
        "hwreg(HW_REG_HW_ID, 16, 4)",
    ] {
        assert_eq!(
            k.iter().filter(|i| i.ends_with(field)).count(),
            5,
            "{field}: {k:?}"
        );
    }
    assert!(
        !k.iter().any(|i| i.ends_with("hwreg(HW_REG_HW_ID, 8, 4)")),
        "CU check disabled by -1"
    );
    assert_eq!(
        k.iter()
            .filter(|i| i.starts_with("s_bitcmp1_b32 5, s"))
            .count(),
        5
    );

    let co = Compile::new("clock.hip", "gfx1100")
        .env("SQTT_SCOPE_WG", "0x3")
        .env("SQTT_SCOPE_CU", "-1")
        .build("scope11");
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z12clock_kernelPf");
    assert_eq!(
        k.iter()
            .filter(|i| i.ends_with("hwreg(HW_REG_HW_ID2, 16, 5)"))
            .count(),
        5,
        "{k:?}"
    );
}

#[test]
fn disabled_build_is_identical_to_no_plugin() {
    for arch in TARGETS {
        for source in ["named.hip", "functions.hip"] {
            let with = Compile::new(source, arch).disabled().build("off-plugin");
            let without = Compile::new(source, arch)
                .disabled()
                .no_plugin()
                .build("off-plain");
            assert_eq!(disassemble(&with), disassemble(&without), "{arch} {source}");
            assert!(
                funcmap(&with).is_none(),
                "{arch} {source}: no section when nothing is instrumented"
            );
            assert_eq!(
                std::fs::read(&with).unwrap(),
                std::fs::read(&without).unwrap(),
                "{arch} {source}: same bytes"
            );
        }
    }
}

#[test]
fn named_markers_without_plugin_fail_to_link() {
    let err = Compile::new("named.hip", "gfx942")
        .no_plugin()
        .try_build("noplugin")
        .unwrap_err();
    assert!(
        err.contains("undefined") && err.contains("__sqtt_named_marker_enter"),
        "{err}"
    );
}

#[test]
fn clock_packing_on_gfx1200() {
    let co = Compile::new("clock.hip", "gfx1200")
        .env("SQTT_SHADER_CLOCK_BITS", "12")
        .build("clock");
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "M:shader_clock_bits=12;shader_clock_shift=4",
            "K:_Z12clock_kernelPf",
            "U:1:phase"
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z12clock_kernelPf");
    assert!(
        !k.iter().any(|i| i.starts_with("s_ttracedata_imm")),
        "no immediate form with packing"
    );
    // Packed headers: clock field into bits 31..20, marker word below.
    let packed: Vec<(String, String)> = k
        .windows(3)
        .filter(|w| {
            w[0].ends_with("hwreg(HW_REG_SHADER_CYCLES_LO, 4, 12)")
                && w[1].starts_with("s_lshl_b32")
                && w[1].ends_with(", 20")
        })
        .map(|w| (w[1].clone(), w[2].clone()))
        .collect();
    let ors: Vec<u32> = packed
        .iter()
        .map(|(_, or)| imm(or.rsplit(", ").next().unwrap()).unwrap())
        .collect();
    // enter phase (6), exit (1), numeric exit (1, packed like a generated exit).
    assert_eq!(ors, [6, 1, 1], "{k:?}");
    // Numeric point and enter keep their legacy words.
    let words = markers(k);
    assert!(
        words.contains(&"22".to_string()) && words.contains(&"24".to_string()),
        "{words:?}"
    );

    let co = Compile::new("clock.hip", "gfx1201")
        .env("SQTT_SHADER_CLOCK_BITS", "8")
        .env("SQTT_SHADER_CLOCK_SHIFT", "6")
        .build("clock8");
    assert_eq!(
        funcmap(&co).unwrap()[0],
        "M:shader_clock_bits=8;shader_clock_shift=6"
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z12clock_kernelPf");
    assert_eq!(
        k.iter()
            .filter(|i| i.ends_with("hwreg(HW_REG_SHADER_CYCLES_LO, 6, 8)"))
            .count(),
        3,
        "{k:?}"
    );
    assert_eq!(
        k.iter()
            .filter(|i| i.starts_with("s_lshl_b32") && i.ends_with(", 24"))
            .count(),
        3
    );
}

#[test]
fn clock_packing_on_gfx1250_uses_the_64_bit_counter() {
    let co = Compile::new("clock.hip", "gfx1250")
        .env("SQTT_SHADER_CLOCK_BITS", "12")
        .build("clock1250");
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z12clock_kernelPf");
    assert_eq!(
        k.iter()
            .filter(|i| i.starts_with("s_get_shader_cycles_u64"))
            .count(),
        3,
        "{k:?}"
    );
}

#[test]
fn clock_packing_errors() {
    let err = Compile::new("clock.hip", "gfx942")
        .env("SQTT_SHADER_CLOCK_BITS", "12")
        .try_build("clock-gfx9")
        .unwrap_err();
    assert!(
        err.contains("SQTT_SHADER_CLOCK_BITS=12 needs gfx1200, gfx1201 or gfx1250")
            && err.contains("gfx942"),
        "{err}"
    );
    let err = Compile::new("named.hip", "gfx1200")
        .env("SQTT_SHADER_CLOCK_BITS", "12")
        .try_build("clock-data")
        .unwrap_err();
    assert!(
        err.contains("sqtt_marker_data(\"work_value\"") && err.contains("SQTT_SHADER_CLOCK_BITS=0"),
        "{err}"
    );
    assert_eq!(
        err.matches("error: sqtt-pass").count(),
        1,
        "reported once: {err}"
    );
}

#[test]
fn ids_are_compacted_by_emission_count() {
    let co = Compile::new("compaction.hip", "gfx1100")
        .env("SQTT_INSTRUMENT_FUNCTIONS", "15")
        .env("SQTT_SCOPE_CU", "-1")
        .build("compaction");
    // First seen: helper (function, 2 call sites), rare (1 use), hot (3 enters).
    assert_eq!(
        funcmap(&co).unwrap(),
        [
            "K:_Z17compaction_kernelPf",
            "U:1:hot",
            "F:2:_Z6helperf",
            "P:3:rare"
        ]
    );
    let funcs = disassemble(&co);
    let k = function(&funcs, "_Z17compaction_kernelPf");
    let words: Vec<u32> = markers(k).iter().map(|w| imm(w).unwrap()).collect();
    assert_eq!(
        words,
        [3 << 2, (1 << 2) | 2, 1, (1 << 2) | 2, 1, (1 << 2) | 2, 1]
    );
    let helper: Vec<u32> = markers(function(&funcs, "_Z6helperf"))
        .iter()
        .map(|w| imm(w).unwrap())
        .collect();
    assert_eq!(helper, [(2 << 2) | 2, 1]);
}
