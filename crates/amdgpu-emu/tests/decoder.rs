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
            if inst.enc == Enc::Unknown || ours != asm || inst.len as usize != 4 * words {
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
