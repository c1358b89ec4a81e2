//! Every kernel and function of AMD's precompiled libraries in the installed Debian packages
//! (rocRAND, rocSPARSE: their `.hip_fatbin` sections hold clang offload bundles with one code
//! object per processor) decodes completely for gfx90a: no instruction is an encoding the
//! decoder does not know. A failure lists each unknown encoding by family and opcode, with how
//! often it occurs and in which function; and every instruction shape in them runs without an
//! illegal-instruction fault (it has semantics, in the operand form the library uses).

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

/// The assembly text of an instruction with the numbers of its operands replaced by `#`
/// (register numbers, offsets, branch distances, constants), so that instructions differing
/// only in those share a shape. Modifiers that choose what an instruction does keep their
/// values: `op_sel:[..]`, DPP and SDWA controls, `cbsz:`, `hwreg(..)`, `sendmsg(..)` and the like.
fn shape(text: &str) -> String {
    let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
    let mut out = String::from(mnemonic);
    let mut depth = 0usize;
    for token in operands.split(' ') {
        // `name:value` is a modifier; `v[2:3]` (a ':' inside brackets) is a register range.
        let modifier = match (token.find(':'), token.find('[')) {
            (Some(colon), bracket) => {
                bracket.is_none_or(|b| colon < b) && !token.starts_with("offset")
            }
            (None, _) => false,
        };
        let keep = depth > 0 || modifier;
        depth = (depth + token.matches('(').count()).saturating_sub(token.matches(')').count());
        out.push(' ');
        if keep {
            out.push_str(token);
            continue;
        }
        let mut number = false;
        for c in token.chars() {
            if c.is_ascii_digit() || (number && (c.is_ascii_hexdigit() || c == 'x')) {
                if !number {
                    out.push('#');
                }
                number = true;
                continue;
            }
            number = false;
            out.push(c);
        }
    }
    out
}

/// One instance of every instruction shape (see [`shape`]) in the distinct gfx90a code objects
/// of the checked libraries: the shape, its bytes and where it was first seen.
fn library_instruction_shapes(target: Target) -> BTreeMap<String, (Vec<u8>, String)> {
    let mut seen = HashSet::new();
    let mut seen_words = HashSet::new();
    let mut shapes = BTreeMap::new();
    for soname in LIBRARIES {
        let host = std::fs::read(library_path(soname)).expect("readable library");
        for co in code_objects(&host, target.name()) {
            let mut h = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&co, &mut h);
            if !seen.insert(std::hash::Hasher::finish(&h)) {
                continue;
            }
            let file = AmdgpuElf::parse(&co).expect("an AMDGPU code object");
            let text = file
                .section(".text")
                .expect("readable sections")
                .expect("a .text section");
            let prog = Program::decode(target, text.vaddr, text.bytes);
            for (i, inst) in prog.insts.iter().enumerate() {
                let at = prog.offsets[i] as usize;
                let bytes = &text.bytes[at..at + inst.len as usize];
                if inst.enc == Enc::Unknown || !seen_words.insert(bytes.to_vec()) {
                    continue;
                }
                shapes
                    .entry(shape(&inst.disassemble(target)))
                    .or_insert_with(|| (bytes.to_vec(), soname.to_string()));
            }
        }
    }
    shapes
}

/// Run `code` (one instruction, then `s_endpgm`) as a one-wave kernel on zeroed registers and
/// memory; returns the reason of an illegal-instruction fault, if it ends with one.
fn illegal_reason(
    emu: &amdgpu_emu::Emulator,
    mem: &amdgpu_emu::RegionMemory,
    code: &[u8],
) -> Option<String> {
    const BASE: u64 = 0x1000_0000;
    let mut image = vec![0u8; 256];
    image[16..24].copy_from_slice(&256i64.to_le_bytes());
    image.extend_from_slice(code);
    image.extend_from_slice(&0xbf81_0000u32.to_le_bytes());
    image.resize(512, 0);
    mem.write(BASE, &image);
    let range = BASE + 256..BASE + 256 + code.len() as u64 + 4;
    let setup = amdgpu_emu::DispatchSetup {
        kernel_object: BASE,
        kernel_name: Some("one_instruction"),
        code_range: range.clone(),
        grid: [64, 1, 1],
        workgroup: [64, 1, 1],
        kernarg_address: BASE + 0x1000,
        group_segment_size: 65536,
        private_segment_size: 256,
        dispatch_packet_address: BASE + 0x2000,
        queue_address: BASE + 0x3000,
        dispatch_id: 0,
        apertures: amdgpu_emu::Apertures::default(),
    };
    let outcome = emu.dispatch(&setup, mem);
    emu.forget_code(range);
    match outcome {
        Err(f) => match f.kind {
            amdgpu_emu::FaultKind::IllegalInstruction { reason } => Some(reason),
            _ => None,
        },
        Ok(_) => None,
    }
}

/// Decoding is not enough: every instruction shape the libraries' kernels hold runs, alone on
/// zeroed state, without an illegal-instruction fault (an operation or operand form without
/// semantics). Memory faults, jumps out of the one-instruction kernel and traps are expected
/// there and are not failures.
#[test]
fn amd_library_instructions_all_have_semantics_for_gfx90a() {
    let target = Target::Gfx90a;
    let shapes = library_instruction_shapes(target);
    assert!(
        shapes.len() > 500,
        "only {} instruction shapes",
        shapes.len()
    );
    let emu =
        amdgpu_emu::Emulator::new(target, 1).with_time_limit(std::time::Duration::from_secs(5));
    let mut mem = amdgpu_emu::RegionMemory::new();
    mem.add(0x1000_0000, 0x4000);
    // The harness itself sees an instruction without semantics (an unassigned MIMG word).
    let mimg = illegal_reason(&emu, &mem, &0xf1fc_0000u32.to_le_bytes());
    assert!(
        mimg.as_deref().is_some_and(|r| r.contains("MIMG")),
        "a MIMG instruction gave {mimg:?}"
    );
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (shape, (bytes, library)) in &shapes {
        if let Some(reason) = illegal_reason(&emu, &mem, bytes) {
            missing
                .entry(reason)
                .or_default()
                .push(format!("{shape} ({library})"));
        }
    }
    let lines: Vec<String> = missing
        .iter()
        .map(|(reason, shapes)| format!("{reason}: {} shapes, e.g. {}", shapes.len(), shapes[0]))
        .collect();
    assert!(
        lines.is_empty(),
        "{} of {} instruction shapes have no semantics:\n{}",
        missing.values().map(Vec::len).sum::<usize>(),
        shapes.len(),
        lines.join("\n")
    );
}
