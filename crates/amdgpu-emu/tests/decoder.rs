//! The decoder agrees with llvm-objdump-22 on every instruction of the corpus, for both
//! targets: length, operation and operands (the full assembly text).
#![allow(clippy::needless_range_loop)]

mod common;

use std::process::Command;

use amdgpu_emu::decode::{Enc, Program};

#[test]
fn decoder_matches_llvm_objdump_on_the_corpus() {
    let mut checked = 0usize;
    let mut mismatches = Vec::new();
    let mut ops = std::collections::BTreeSet::new();
    for ((name, t), path) in common::corpus() {
        let out = Command::new("llvm-objdump-22")
            .args(["-d", &format!("--mcpu={}", t.name())])
            .arg(path)
            .output()
            .expect("llvm-objdump-22 must be installed");
        assert!(
            out.status.success(),
            "llvm-objdump-22 failed on {}",
            path.display()
        );
        let co = common::code_object(name, *t);
        let text = &co.image[co.text.start as usize..co.text.end as usize];
        let prog = Program::decode(*t, co.text.start, text);
        for line in String::from_utf8(out.stdout).expect("utf-8").lines() {
            let Some(rest) = line.strip_prefix('\t') else {
                continue;
            };
            let Some((asm, enc)) = rest.split_once("//") else {
                continue;
            };
            let Some((addr, hex)) = enc.trim().split_once(": ") else {
                continue;
            };
            let addr = u64::from_str_radix(addr, 16).expect("address");
            let words = hex
                .split('<')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .count();
            let asm = asm.trim();
            let Some(i) = prog.index_of(addr) else {
                mismatches.push(format!(
                    "{} {name}: no instruction decoded at 0x{addr:x} ({asm})",
                    t.name()
                ));
                continue;
            };
            let inst = &prog.insts[i];
            let ours = inst.disassemble(*t);
            checked += 1;
            // An unknown encoding only where LLVM finds none either (`.long`: the corpus's
            // deliberately invalid encodings).
            let unknown = inst.enc == Enc::Unknown && !asm.starts_with(".long");
            if unknown || ours != asm || inst.len as usize != 4 * words {
                mismatches.push(format!(
                    "{} {name} 0x{addr:x}: ours `{ours}` ({} bytes), llvm `{asm}` ({} bytes)",
                    t.name(),
                    inst.len,
                    4 * words
                ));
            }
            ops.insert((t.name(), inst.op.name()));
        }
    }
    assert!(checked > 10_000, "only {checked} instructions checked");
    assert!(
        mismatches.is_empty(),
        "{} of {checked} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// Disassembles each instruction (its dwords) with llvm-mc-22, one process for them all:
/// the text of each, in order (`None` where LLVM finds no single valid instruction: each is
/// followed by an `s_nop 7` marker to keep them apart).
fn llvm_mc(t: amdgpu_emu::Target, insts: &[Vec<u32>]) -> Vec<Option<String>> {
    use std::io::Write;
    let mut child = Command::new("llvm-mc-22")
        .args([
            "--disassemble",
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", t.name()),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("llvm-mc-22 must be installed");
    let mut input = String::new();
    for words in insts {
        let bytes: Vec<String> = words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| format!("0x{b:02x}"))
            .collect();
        input.push_str(&bytes.join(","));
        input.push_str("\n0x07,0x00,0x80,0xbf\n");
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let mut texts = Vec::new();
    let mut group: Vec<String> = Vec::new();
    for l in String::from_utf8(out.stdout).unwrap().lines() {
        let Some(l) = l.strip_prefix('\t') else {
            continue;
        };
        if l.starts_with('.') {
            continue;
        }
        if l.trim() == "s_nop 7" {
            texts.push((group.len() == 1).then(|| group[0].clone()));
            group.clear();
        } else {
            group.push(l.trim().to_string());
        }
    }
    texts
}

/// The op_sel field of every VOP3 operation (printed only where LLVM defines it on GFX9: not on
/// the promoted VOP1/VOP2/VOPC ones), the float inline constants of 16-bit integer operands
/// (their f16 bits) and literals in them (the low half, or `lit()`), in every encoding, as
/// llvm-mc-22 prints them. Compared where the plain form (no op_sel, register sources)
/// already agrees, so that only these operand forms are tested here.
#[test]
fn op_sel_and_16_bit_integer_constants_print_as_llvm_mc() {
    use amdgpu_emu::decode::decode;
    for t in common::TARGETS {
        // (plain form, variant) pairs.
        let mut pairs: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
        let vop3 = |op: u32, sel: u32, src: [u32; 3]| {
            vec![
                0xD000_0000 | op << 16 | sel << 11 | 3,
                src[0] | src[1] << 9 | src[2] << 18,
            ]
        };
        let regs = [257, 258, 260];
        for op in 0..768u32 {
            let plain = vop3(op, 0, regs);
            let inst = decode(t, &plain);
            if inst.enc != Enc::Vop3 {
                continue;
            }
            let two_source_op_sel = inst.op.op_sel().is_some_and(|f| f.entries == 3);
            for sel in [1, 2, 4, 8, 11, 15] {
                if two_source_op_sel && sel & 4 != 0 {
                    continue; // An invalid encoding for LLVM.
                }
                pairs.push((plain.clone(), vop3(op, sel, regs)));
            }
            for src in [[242, 258, 260], [257, 240, 260], [257, 258, 248]] {
                pairs.push((plain.clone(), vop3(op, 0, src)));
            }
        }
        // The 32-bit encodings: src0 an inline float or a literal.
        for op in 0..256u32 {
            let forms = [
                (op < 64).then_some(op << 25 | 3 << 17 | 2 << 9),
                Some(0x7C00_0000 | op << 17 | 2 << 9),
                Some(0x7E00_0000 | 3 << 17 | op << 9),
            ];
            for w in forms.into_iter().flatten() {
                let plain = vec![w | 257];
                for src0 in [240, 242, 248] {
                    pairs.push((plain.clone(), vec![w | src0]));
                }
                // SDWA: src0 an inline float (the S0 flag), src0_sel WORD_0 (VOP2) or DWORD.
                let vop2 = w >> 31 == 0 && w >> 25 != 0x3E && w >> 25 != 0x3F;
                if w >> 25 != 0x3F {
                    let sels = if vop2 { 0x0604_0600 } else { 0x0606_0000 };
                    pairs.push((vec![w | 249, sels | 1], vec![w | 249, sels | 0x0080_00F2]));
                }
                for lit in [
                    0x1234_5678,
                    0x40,
                    0x3F80_0000,
                    0xFFFF_8000,
                    0x3C00,
                    0xFFF0,
                    0xFFFF_FFF0,
                    0x3E22_F983,
                    0x0001_3C00,
                ] {
                    pairs.push((plain.clone(), vec![w | 255, lit]));
                }
            }
        }
        // Only whole instructions (no missing literal) keep the markers apart.
        pairs.retain(|(p, v)| {
            decode(t, p).len as usize == 4 * p.len() && decode(t, v).len as usize == 4 * v.len()
        });
        let plain: Vec<Vec<u32>> = pairs.iter().map(|p| p.0.clone()).collect();
        let variant: Vec<Vec<u32>> = pairs.iter().map(|p| p.1.clone()).collect();
        let (llvm_plain, llvm_variant) = (llvm_mc(t, &plain), llvm_mc(t, &variant));
        assert_eq!(llvm_plain.len(), pairs.len(), "{}", t.name());
        assert_eq!(llvm_variant.len(), pairs.len(), "{}", t.name());
        let mut checked = 0;
        let mut mismatches = Vec::new();
        for (k, (p, v)) in pairs.iter().enumerate() {
            let (ip, iv) = (decode(t, p), decode(t, v));
            let (Some(lp), Some(lv)) = (&llvm_plain[k], &llvm_variant[k]) else {
                continue;
            };
            // Operands LLVM flags (a constant where the operation takes none): not printing.
            if lv.contains("Invalid immediate") {
                continue;
            }
            if ip.disassemble(t) != *lp {
                continue;
            }
            checked += 1;
            let ours = iv.disassemble(t);
            if ours != *lv {
                mismatches.push(format!("{} {v:08x?}: ours `{ours}`, llvm `{lv}`", t.name()));
            }
        }
        assert!(checked > 2000, "only {checked} checked");
        assert!(
            mismatches.is_empty(),
            "{} of {checked} differ:\n{}",
            mismatches.len(),
            mismatches.join("\n")
        );
    }
}
