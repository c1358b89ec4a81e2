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
                Op::v_madmk_f32
                    | Op::v_madak_f32
                    | Op::v_fmamk_f32
                    | Op::v_fmaak_f32
                    | Op::v_madmk_f16
                    | Op::v_madak_f16
            ) {
                vec![w, 0x4000_0000]
            } else {
                vec![w]
            }
        }
        Enc::Vop1 => vec![if op == Op::v_nop {
            0x7E00_0000
        } else if op == Op::v_clrexcp {
            // No operands: the operand fields must be zero.
            0x7E00_0000 | c << 9
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
            if name.starts_with("v_mfma") || name.starts_with("v_smfmac") {
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
        Enc::Mimg => {
            // One component, v4 the address, s[8:15] the image, s[16:19] the sampler.
            // (only samples have a sampler field).
            let (unorm, ssamp) = if op == Op::image_sample {
                (0, 4 << 21)
            } else {
                (1 << 12, 0)
            };
            vec![0xF000_0000 | c << 18 | 1 << 8 | unorm, 4 | 2 << 16 | ssamp]
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

/// Candidate encodings of one opcode of one encoding family: the opcode with several choices of
/// the other fields, since LLVM's decoder refuses an encoding whose unused fields are not zero
/// (a load's data field, a flat access's `saddr`) or whose registers a target does not allow.
/// The opcode is known to LLVM when one candidate decodes.
struct Candidates {
    family: &'static str,
    code: u32,
    encodings: Vec<[u32; 2]>,
}

/// One word followed by `s_nop 0`, or a two-word instruction.
fn one(w: u32) -> [u32; 2] {
    [w, 0xBF80_0000]
}

/// Every opcode number of every GFX9 encoding family that compute kernels use, with candidate
/// encodings (VINTRP and EXP, the graphics-only families, are left out).
fn all_opcodes() -> Vec<Candidates> {
    let v = |n: u32| 256 + n;
    let mut all = Vec::new();
    let mut add = |family, code, encodings| {
        all.push(Candidates {
            family,
            code,
            encodings,
        })
    };
    for c in 0..0x60 {
        // SOP2 (op 0x60 and above are SOPK, SOP1, SOPC and SOPP).
        let w = 0x8000_0000 | c << 23;
        add("SOP2", c, vec![one(w | 16 << 16 | 18 << 8 | 20), one(w)]);
    }
    for c in 0..0x1d {
        let w = 0xB000_0000 | c << 23;
        add("SOPK", c, vec![one(w | 16 << 16 | 0x10), one(w)]);
    }
    for c in 0..256 {
        let w = 0xBE80_0000 | c << 8;
        add(
            "SOP1",
            c,
            vec![one(w | 16 << 16 | 20), one(w), one(w | 16 << 16)],
        );
    }
    for c in 0..128 {
        let w = 0xBF00_0000 | c << 16;
        add("SOPC", c, vec![one(w | 18 << 8 | 20), one(w)]);
        add("SOPP", c, vec![one(0xBF80_0000 | c << 16)]);
    }
    for c in 0..256 {
        let w = 0xC000_0000 | c << 18;
        let imm = w | 1 << 17;
        add(
            "SMEM",
            c,
            vec![
                [imm | 16 << 6 | 2, 0x10],
                [imm | 16 << 6 | 4, 0x10],
                [w, 0],
                [w | 16 << 6, 0],
                [imm | 2, 0x10],
            ],
        );
    }
    for c in 0..0x3e {
        let w = c << 25;
        add("VOP2", c, vec![one(w | 16 << 17 | 48 << 9 | v(32)), one(w)]);
    }
    for c in 0..256 {
        let w = 0x7E00_0000 | c << 9;
        add(
            "VOP1",
            c,
            vec![one(w | 16 << 17 | v(32)), one(w), one(w | 16 << 17 | 32)],
        );
        add(
            "VOPC",
            c,
            vec![one(0x7C00_0000 | c << 17 | 48 << 9 | v(32))],
        );
    }
    for c in 0..0x400 {
        let w = 0xD000_0000 | c << 16;
        let three = v(32) | v(48) << 9 | v(64) << 18;
        add(
            "VOP3",
            c,
            vec![
                [w | 16, three],
                [w | 16, v(32) | v(48) << 9],
                [w | 16, v(32)],
                [w, 0],
                [w | 16, 32 | v(48) << 9 | v(64) << 18],
            ],
        );
    }
    for c in 0..128 {
        let w = 0xD380_0000 | c << 16 | 16;
        let three = v(32) | v(48) << 9 | v(64) << 18 | 3 << 27;
        add(
            "VOP3P",
            c,
            vec![
                [w, three],
                [w | 1 << 14, three],
                [w, v(32) | v(48) << 9 | 3 << 27],
                [w | 1 << 15, three],
                [w, three & !(3 << 27)],
            ],
        );
    }
    for c in 0..256 {
        let w = 0xD800_0000 | c << 17 | 0x10;
        let mut e: Vec<[u32; 2]> = [
            (32, 48, 64, 16),
            (32, 0, 0, 16),
            (32, 48, 0, 0),
            (32, 48, 64, 0),
            (32, 48, 0, 16),
            (32, 0, 0, 0),
            (0, 0, 0, 16),
            (0, 0, 0, 0),
        ]
        .iter()
        .map(|&(a, d0, d1, d)| [w, a | d0 << 8 | d1 << 16 | d << 24])
        .collect();
        e.push([w | 1 << 16, 0]);
        e.push([w | 1 << 16, 48 << 8]);
        add("DS", c, e);
    }
    for (segment, family) in ["FLAT", "SCRATCH", "GLOBAL"].into_iter().enumerate() {
        for c in 0..128 {
            let w = 0xDC00_0000 | c << 18 | (segment as u32) << 14;
            let saddrs: &[u32] = if segment == 0 { &[0] } else { &[0x7F, 4] };
            let mut e = Vec::new();
            for &saddr in saddrs {
                for data in [48, 0] {
                    for dst in [16, 0] {
                        for addr in [32, 0] {
                            e.push([w, addr | data << 8 | saddr << 16 | dst << 24]);
                        }
                    }
                }
            }
            add(family, c, e);
        }
    }
    for c in 0..128 {
        let w = 0xE000_0000 | c << 18;
        let rsrc = 32 | 1 << 16 | 0x80 << 24;
        add(
            "MUBUF",
            c,
            vec![
                [w | 1 << 12 | 0x10, rsrc | 48 << 8],
                [w, 0],
                [w | 1 << 16, rsrc | 48 << 8],
                [w | 1 << 12 | 1 << 16 | 0x10, rsrc],
            ],
        );
    }
    for c in 0..16 {
        let w = 0xE800_0000 | 4 << 19 | c << 15 | 1 << 12 | 0x10;
        add("MTBUF", c, vec![[w, 32 | 48 << 8 | 1 << 16 | 0x80 << 24]]);
    }
    all
}

/// LLVM's disassembly of each line of `lines` (8 bytes each), or `None` where LLVM finds the
/// first word an invalid encoding. One llvm-mc-22 run; `s_nop 7` separates the lines' output.
fn llvm_disassembly(target: Target, lines: &[[u32; 2]]) -> Vec<Option<String>> {
    let mut input = String::new();
    for l in lines {
        let bytes: Vec<String> = l
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("0x{b:02x}"))
            .collect();
        input.push_str(&bytes.join(" "));
        input.push_str("\n0x07 0x00 0x80 0xbf\n");
    }
    let mut child = Command::new("llvm-mc-22")
        .args([
            "-disassemble",
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", target.name()),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("llvm-mc-22 must be installed");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    // "<stdin>:LINE:1: warning: invalid instruction encoding": the line's first word.
    let invalid: std::collections::HashSet<usize> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("invalid instruction encoding"))
        .filter_map(|l| {
            let mut parts = l.split(':');
            let line: usize = parts.nth(1)?.parse().ok()?;
            (parts.next()? == "1").then_some(line)
        })
        .collect();
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
    (0..lines.len())
        .map(|k| {
            // Line 2k + 1 holds candidate k; its output is group k.
            if invalid.contains(&(2 * k + 1)) {
                return None;
            }
            groups.get(k).and_then(|g| g.first().cloned())
        })
        .collect()
}

/// The mnemonic of a line of assembly, without the encoding suffixes.
fn mnemonic(text: &str) -> &str {
    let m = text.split_whitespace().next().unwrap_or("");
    ["_e32", "_e64", "_sdwa", "_dpp"]
        .iter()
        .find_map(|s| m.strip_suffix(s))
        .unwrap_or(m)
}

/// The other direction of the row test above: every opcode of every family that LLVM 22's
/// disassembler knows for a target, our decoder knows too, by the same mnemonic. A new
/// instruction in a program is then never an unknown encoding to us; at worst it is an
/// operation without semantics, which faults by name.
#[test]
fn every_opcode_llvm_knows_is_decoded() {
    let opcodes = all_opcodes();
    for t in [Target::Gfx90a, Target::Gfx942] {
        let lines: Vec<[u32; 2]> = opcodes
            .iter()
            .flat_map(|c| c.encodings.iter().copied())
            .collect();
        let theirs = llvm_disassembly(t, &lines);
        let mut next = 0;
        let mut known = 0;
        let mut missing = Vec::new();
        for c in &opcodes {
            let found = (0..c.encodings.len()).find_map(|k| {
                theirs[next + k]
                    .as_ref()
                    .map(|text| (c.encodings[k], text.clone()))
            });
            next += c.encodings.len();
            let Some((words, text)) = found else {
                continue;
            };
            known += 1;
            let ours = decode(t, &words);
            let our_text = ours.disassemble(t);
            if ours.enc == Enc::Unknown || mnemonic(&our_text) != mnemonic(&text) {
                missing.push(format!(
                    "{} {} opcode {:#x}: llvm `{text}`, ours `{our_text}`",
                    t.name(),
                    c.family,
                    c.code
                ));
            }
        }
        assert!(known > 1000, "{}: LLVM knew only {known} opcodes", t.name());
        assert!(
            missing.is_empty(),
            "{} of {known} opcodes LLVM knows are not decoded alike:\n{}",
            missing.len(),
            missing.join("\n")
        );
    }
}
