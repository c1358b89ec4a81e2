//! Every kernel and function of AMD's precompiled libraries in the installed Debian packages
//! (rocRAND, rocSPARSE: their `.hip_fatbin` sections hold clang offload bundles with one code
//! object per processor) decodes completely for gfx90a: no instruction is an encoding the
//! decoder does not know. A failure lists each unknown encoding by family and opcode, with how
//! often it occurs and in which function.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::Command;

use amdgpu_code_object::{AmdgpuElf, ElfSymbolKind};
use amdgpu_emu::Target;
use amdgpu_emu::decode::{Enc, Program, UnknownEncoding};

/// The libraries whose device code is checked (sonames as `ldconfig -p` lists them).
const LIBRARIES: &[&str] = &["librocrand.so.1", "librocsparse.so.0"];

/// The installed path of a shared library, from the dynamic linker's cache.
fn library_path(soname: &str) -> PathBuf {
    let out = Command::new("ldconfig")
        .arg("-p")
        .output()
        .expect("ldconfig must run");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{soname} ")) && l.contains("x86-64"))
        .unwrap_or_else(|| {
            panic!("{soname} is not installed (scripts/install-deps.sh installs it)")
        });
    PathBuf::from(line.rsplit("=> ").next().expect("a path").trim())
}

/// The code objects of one processor in a host library's offload bundles.
fn code_objects(host: &[u8], processor: &str) -> Vec<Vec<u8>> {
    amdgpu_code_object::bundle::code_objects(host)
        .expect("the library's .hip_fatbin holds offload bundles")
        .into_iter()
        .filter(|o| o.processor() == Some(processor) && !o.image.is_empty())
        .map(|o| o.image)
        .collect()
}

/// Unknown encodings of one code object, each with the function it occurs in.
fn unknown_encodings(
    target: Target,
    code_object: &[u8],
) -> (usize, Vec<(UnknownEncoding, String)>) {
    let file = AmdgpuElf::parse(code_object).expect("an AMDGPU code object");
    let text = file
        .section(".text")
        .expect("readable sections")
        .expect("a .text section");
    let (base, bytes) = (text.vaddr, text.bytes);
    let mut functions: Vec<(u64, String)> = file
        .symbols()
        .into_iter()
        .filter(|s| s.kind == ElfSymbolKind::Function && s.defined)
        .map(|s| (s.vaddr, s.name))
        .collect();
    functions.sort();
    let prog = Program::decode(target, base, bytes);
    let mut unknown = Vec::new();
    for (i, inst) in prog.insts.iter().enumerate() {
        if inst.enc != Enc::Unknown {
            continue;
        }
        let addr = prog.address_of(i);
        let at = functions.partition_point(|f| f.0 <= addr);
        let function = at
            .checked_sub(1)
            .map(|k| functions[k].1.clone())
            .unwrap_or_default();
        unknown.push((
            inst.unknown_encoding(target).expect("unknown"),
            format!("{function} (.long 0x{:08x})", inst.lit),
        ));
    }
    (prog.insts.len(), unknown)
}

#[test]
fn amd_library_kernels_decode_completely_for_gfx90a() {
    let target = Target::Gfx90a;
    let mut seen = HashSet::new();
    let mut instructions = 0usize;
    let mut objects = 0usize;
    let mut report: BTreeMap<UnknownEncoding, (usize, String)> = BTreeMap::new();
    for soname in LIBRARIES {
        let host = std::fs::read(library_path(soname)).expect("readable library");
        let objs = code_objects(&host, target.name());
        assert!(
            !objs.is_empty(),
            "{soname} has no {} code object",
            target.name()
        );
        for co in objs {
            // The xnack+ and xnack- builds are often identical; decode each distinct one once.
            let mut h = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&co, &mut h);
            if !seen.insert(std::hash::Hasher::finish(&h)) {
                continue;
            }
            objects += 1;
            let (n, unknown) = unknown_encodings(target, &co);
            instructions += n;
            for (enc, place) in unknown {
                let e = report
                    .entry(enc)
                    .or_insert((0, format!("{soname}: {place}")));
                e.0 += 1;
            }
        }
    }
    assert!(
        instructions > 1_000_000,
        "only {instructions} instructions in {objects} code objects"
    );
    let lines: Vec<String> = report
        .iter()
        .map(|(e, (n, place))| format!("{e}: {n} times, first in {place}"))
        .collect();
    assert!(
        lines.is_empty(),
        "{} unknown encodings in {instructions} instructions of {objects} code objects:\n{}",
        lines.len(),
        lines.join("\n")
    );
}
