//! Every opcode-table row, encoded in a canonical form, disassembles with llvm-mc-22 to the
//! same assembly text (operation and operands) and length as our decoder gives: the tables
//! beyond what the corpus uses.
#![allow(clippy::needless_range_loop)]

use std::io::Write;
use std::process::{Command, Stdio};

use amdgpu_emu::Target;
use amdgpu_emu::decode::{Enc, Op, decode, table_rows};

/// A canonical encoding of a table row (even-aligned registers, simple operands).
fn encode(enc: Enc, code: u16, op: Op) -> Vec<u32> {
    let c = code as u32;
    let name = op.name();
    match enc {
        Enc::Sop2 => vec![0x8000_0000 | c << 23 | 4 << 16 | 6 << 8 | 2],
        Enc::Sopk => {
            if op == Op::s_setreg_imm32_b32 {
                vec![0xB000_0000 | c << 23 | 0x0801, 7]
            } else if op == Op::s_getreg_b32 || op == Op::s_setreg_b32 {
                vec![0xB000_0000 | c << 23 | 4 << 16 | 0x0801]
            } else {
                vec![0xB000_0000 | c << 23 | 4 << 16 | 0x10]
            }
        }
        Enc::Sop1 => vec![0xBE80_0000 | 4 << 16 | c << 8 | 2],
        Enc::Sopc => vec![0xBF00_0000 | c << 16 | 4 << 8 | 2],
        Enc::Sopp => vec![
            0xBF80_0000
                | c << 16
                | if name.contains("branch") || op == Op::s_nop || op == Op::s_sleep {
                    3
                } else {
                    0
                },
        ],
        Enc::Smem => {
            if name.starts_with("s_dcache") {
                vec![0xC000_0000 | c << 18, 0]
            } else if name.starts_with("s_mem") {
                vec![0xC000_0000 | c << 18 | 8 << 6, 0]
            } else {
                vec![0xC000_0000 | c << 18 | 1 << 17 | 8 << 6 | 2, 0x10]
            }
        }
        Enc::Vop2 => {
            let w = c << 25 | 4 << 17 | 6 << 9 | 0x102;
            if matches!(
                op,
                Op::v_madmk_f32 | Op::v_madak_f32 | Op::v_fmamk_f32 | Op::v_fmaak_f32
            ) {
                vec![w, 0x4000_0000]
            } else {
                vec![w]
            }
        }
        Enc::Vop1 => vec![if op == Op::v_nop {
            0x7E00_0000
        } else {
            0x7E00_0000 | 4 << 17 | c << 9 | 0x102
        }],
        Enc::Vopc => vec![0x7C00_0000 | c << 17 | 6 << 9 | 0x102],
        Enc::Vop3 => {
            let srcs = match op {
                Op::v_readlane_b32 => [0x102u32, 6, 0],
                Op::v_writelane_b32 => [2, 6, 0],
                _ => [0x102u32, 0x106, 0x108],
            };
            let n = op.types().len() - 1;
            let w1 = (0..n.min(3)).fold(0, |w, k| w | srcs[k] << (9 * k));
            vec![0xD000_0000 | c << 16 | 4, w1]
        }
        Enc::Vop3p => {
            if name.starts_with("v_mfma") {
                vec![0xD380_0000 | c << 16 | 8, 0x102 | 0x104 << 9 | 0x108 << 18]
            } else {
                vec![
                    0xD380_0000 | c << 16 | 1 << 14 | 4,
                    0x102 | 0x106 << 9 | 0x108 << 18 | 3 << 27,
                ]
            }
        }
        Enc::Ds => {
            // Operations without an address VGPR leave its field zero (LLVM rejects others).
            let no_addr = matches!(
                op,
                Op::ds_append
                    | Op::ds_consume
                    | Op::ds_read_addtid_b32
                    | Op::ds_write_addtid_b32
                    | Op::ds_gws_sema_v
                    | Op::ds_gws_sema_p
                    | Op::ds_gws_sema_release_all
            );
            let addr = if no_addr { 0 } else { 2 };
            let (d0, d1, dst) = if name.starts_with("ds_gws") {
                (0, 0, 0)
            } else if op == Op::ds_write_addtid_b32 {
                (4, 0, 0)
            } else if name.starts_with("ds_read") || name == "ds_swizzle_b32" || no_addr {
                (0, 0, 8)
            } else if name.contains("cmpst_rtn")
                || name.contains("mskor_rtn")
                || name.contains("wrxchg2")
                || name == "ds_wrap_rtn_b32"
            {
                (4, 6, 8)
            } else if name.contains("rtn") || name.contains("permute") {
                (4, 0, 8)
            } else if name.contains("write2") || name.contains("cmpst") || name.contains("mskor") {
                (4, 6, 0)
            } else {
                (4, 0, 0)
            };
            // Global wave sync always addresses GDS.
            let gds = (name.starts_with("ds_gws") as u32) << 16;
            vec![
                0xD800_0000 | c << 17 | gds,
                addr | d0 << 8 | d1 << 16 | dst << 24,
            ]
        }
        Enc::Flat => {
            let load = name.contains("load");
            let (data, dst) = if name.contains("load_lds") {
                (0, 0)
            } else if load {
                (0, 8)
            } else {
                (4, 0)
            };
            vec![
                0xDC00_0000 | c << 18 | 2 << 14,
                2 | data << 8 | 0x7F << 16 | dst << 24,
            ]
        }
        Enc::Mubuf => {
            if op.is_cache_control() {
                vec![0xE000_0000 | c << 18, 0]
            } else if op == Op::buffer_store_lds_dword {
                vec![0xE000_0000 | c << 18 | 1 << 16, 1 << 16 | 0x80 << 24]
            } else if name.starts_with("tbuffer") {
                // MTBUF, with a 16-bit data format and the float number format.
                vec![
                    0xE800_0000 | c << 15 | 5 << 19 | 7 << 23 | 1 << 12,
                    2 | 4 << 8 | 1 << 16 | 0x80 << 24,
                ]
            } else {
                vec![
                    0xE000_0000 | c << 18 | 1 << 12,
                    2 | 4 << 8 | 1 << 16 | 0x80 << 24,
                ]
            }
        }
        _ => vec![],
    }
}

#[test]
fn every_table_row_matches_llvm_mc() {
    for t in [Target::Gfx942, Target::Gfx90a] {
        let rows = table_rows(t);
        assert!(rows.len() > 600, "{} rows", rows.len());
        let mut input = String::new();
        let mut ours = Vec::new();
        for &(enc, code, op) in &rows {
            let words = encode(enc, code, op);
            let inst = decode(t, &words);
            assert_eq!(
                inst.op,
                op,
                "{} decodes {:x?} as {:?}",
                t.name(),
                words,
                inst.op
            );
            assert_eq!(
                inst.len as usize,
                4 * words.len(),
                "{} length of {}",
                t.name(),
                op.name()
            );
            let bytes: Vec<String> = words
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .map(|b| format!("0x{b:02x}"))
                .collect();
            input.push_str(&bytes.join(","));
            input.push('\n');
            // A separator instruction after each row.
            input.push_str("0x07,0x00,0x80,0xbf\n");
            ours.push((op, inst.disassemble(t)));
        }
        let mut child = Command::new("llvm-mc-22")
            .args([
                "-disassemble",
                "-triple=amdgcn",
                &format!("-mcpu={}", t.name()),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("llvm-mc-22 must be installed");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut groups: Vec<Vec<String>> = vec![Vec::new()];
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('.'))
        {
            if line == "s_nop 7" {
                groups.push(Vec::new());
            } else {
                groups.last_mut().unwrap().push(line.to_string());
            }
        }
        let mut mismatches = Vec::new();
        for (k, (op, text)) in ours.iter().enumerate() {
            let theirs = groups.get(k).cloned().unwrap_or_default();
            if theirs.len() != 1 || text != &theirs[0] {
                mismatches.push(format!(
                    "{}: ours `{text}` llvm {theirs:?} ({})",
                    t.name(),
                    op.name()
                ));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} rows differ:\n{}",
            mismatches.len(),
            mismatches.join("\n")
        );
    }
}

#[test]
fn accumulator_moves_name_agprs() {
    // v_accvgpr_mov_b32 a1, a2 (VOP1 0x52).
    let inst = decode(Target::Gfx90a, &[0x7E02_A502]);
    assert_eq!(inst.disassemble(Target::Gfx90a), "v_accvgpr_mov_b32 a1, a2");
}
