//! Hand-written assembly probes (assembled by clang-22, linked by ld.lld-22) of instruction
//! forms the compiled corpus does not produce, on both targets.

mod common;
use std::process::Command;

use amdgpu_emu::code_object::CodeObject;
use common::{Arg, Bench, TARGETS};

fn assemble(t: amdgpu_emu::Target) -> Vec<u8> {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = tmp.join(format!("probe-{}.s", t.name()));
    let body = include_str!("corpus/probe.s");
    std::fs::write(&src, format!(".amdgcn_target \"amdgcn-amd-amdhsa--{}\"\n{body}", t.name())).unwrap();
    let obj = tmp.join(format!("probe-{}.o", t.name()));
    let co = tmp.join(format!("probe-{}.co", t.name()));
    let st = Command::new("clang-22").args(["-target", "amdgcn-amd-amdhsa", &format!("-mcpu={}", t.name()), "-c"]).arg(&src).arg("-o").arg(&obj).status().unwrap();
    assert!(st.success(), "assembling the probes failed");
    let st = Command::new("ld.lld-22").arg("-shared").arg(&obj).arg("-o").arg(&co).status().expect("ld.lld-22 (lld-22)");
    assert!(st.success(), "linking the probes failed");
    std::fs::read(co).unwrap()
}

#[test]
fn assembly_probes() {
    for t in TARGETS {
        let co = CodeObject::parse(&assemble(t)).unwrap();
        let mut b = Bench::from_code_object(co, t, 1);
        let out = b.zeros::<u32>(64 * 16);
        let input: Vec<u32> = (0..200u32).map(|i| i * 1000 + 7).collect();
        let inp = b.buf_of(&input);
        b.run1("probe", 64, 64, &[Arg::Buf(out), Arg::Buf(inp)]);
        let got = b.read::<u32>(out);
        for l in 0..64u32 {
            let g = &got[l as usize * 16..l as usize * 16 + 9];
            let row = l & !15;
            let want = [
                row + (((l & 15) + 16 - 4) & 15),
                row + 15 - (l & 15),
                (l & !7) + 7 - (l & 7),
                if l == 0 { 0x77 } else { l - 1 },
                0x3344 | ((2 * l) & 0xFFFF) << 16,
                (l >> 4) | 0x1000_0000,
                input[2 * l as usize + 1],
                0xF,
                if l < 20 { 9 } else { 5 },
            ];
            assert_eq!(g, &want, "{} lane {l}", t.name());
        }
    }
}
