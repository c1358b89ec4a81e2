//! Scalar instructions that compilers emit rarely, run from assembly (llvm-mc-22 assembles it)
//! as a one-wave kernel: relative SGPR moves, scalar atomics and buffer stores, and the cache
//! and debugger instructions that do nothing here.

use std::io::Write;
use std::process::{Command, Stdio};

use amdgpu_emu::{Apertures, DispatchSetup, Emulator, RegionMemory, Target};

const BASE: u64 = 0x1000_0000;

/// The bytes of `source` assembled for `target` (from llvm-mc-22's listed encodings).
fn assemble(target: Target, source: &str) -> Vec<u8> {
    let mut child = Command::new("llvm-mc-22")
        .args([
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", target.name()),
            "-show-encoding",
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
        .write_all(source.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "llvm-mc-22: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bytes = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let Some((_, enc)) = line.split_once("encoding: [") else {
            continue;
        };
        for b in enc.trim_end_matches(']').split(',') {
            bytes.push(u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap());
        }
    }
    bytes
}

/// Runs `code` as a one-wave kernel over a 16 KiB region at `BASE` whose bytes from 0x800 are
/// `data`; returns the region's bytes from 0x800 afterwards, or the fault.
fn run(target: Target, code: &[u8], data: &[u8]) -> Result<Vec<u8>, amdgpu_emu::Fault> {
    let mut mem = RegionMemory::new();
    mem.add(BASE, 0x4000);
    let mut image = vec![0u8; 256];
    image[16..24].copy_from_slice(&256i64.to_le_bytes());
    image.extend_from_slice(code);
    mem.write(BASE, &image);
    mem.write(BASE + 0x800, data);
    let range = BASE + 256..BASE + 256 + code.len() as u64;
    let setup = DispatchSetup {
        kernel_object: BASE,
        kernel_name: Some("scalar"),
        code_range: range,
        grid: [64, 1, 1],
        workgroup: [64, 1, 1],
        kernarg_address: BASE + 0x1000,
        group_segment_size: 0,
        private_segment_size: 0,
        dispatch_packet_address: BASE + 0x2000,
        queue_address: BASE + 0x3000,
        dispatch_id: 0,
        apertures: Apertures::default(),
    };
    Emulator::new(target, 1).dispatch(&setup, &mem)?;
    Ok(mem.read(BASE + 0x800, 0x200))
}

fn dword(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

#[test]
fn relative_moves_scalar_atomics_and_buffer_stores() {
    let source = "
        s_mov_b32 s0, 0x10000800
        s_mov_b32 s1, 0
        s_mov_b32 s4, 0x10000900
        s_mov_b32 s5, 0
        s_mov_b32 s6, 0x100
        s_mov_b32 s7, 0
        s_movk_i32 s10, 1
        s_movk_i32 s11, 2
        s_movk_i32 s12, 3
        s_movk_i32 s13, 4
        s_mov_b32 m0, 2
        s_movrels_b32 s20, s10
        s_movrels_b64 s[24:25], s[10:11]
        s_mov_b32 m0, 1
        s_movreld_b32 s10, 77
        s_store_dword s20, s[0:1], 0x40
        s_atomic_add s20, s[0:1], 0x10 glc
        s_atomic_sub s13, s[0:1], 0x18
        s_movk_i32 s22, 55
        s_movk_i32 s23, 7
        s_atomic_cmpswap s[22:23], s[0:1], 0x14 glc
        s_movk_i32 s26, 1
        s_mov_b32 s27, 0
        s_atomic_add_x2 s[26:27], s[0:1], 0x20 glc
        s_buffer_store_dword s11, s[4:7], 0x4
        s_movk_i32 s30, 5
        s_cbranch_cdbgsys 1
        s_movk_i32 s30, 9
        s_dcache_discard s[0:1], 0x0
        s_atc_probe 0, s[0:1], 0x0
        s_store_dword s20, s[0:1], 0x44
        s_store_dword s22, s[0:1], 0x48
        s_store_dwordx2 s[24:25], s[0:1], 0x4c
        s_store_dword s30, s[0:1], 0x54
        s_store_dwordx2 s[26:27], s[0:1], 0x58
        s_dcache_wb
        s_endpgm
    ";
    for t in [Target::Gfx90a, Target::Gfx942] {
        let mut data = vec![0u8; 0x40];
        data[0x10..0x14].copy_from_slice(&100u32.to_le_bytes());
        data[0x14..0x18].copy_from_slice(&7u32.to_le_bytes());
        data[0x18..0x1c].copy_from_slice(&50u32.to_le_bytes());
        data[0x20..0x28].copy_from_slice(&0xFFFF_FFFFu64.to_le_bytes());
        let out =
            run(t, &assemble(t, source), &data).unwrap_or_else(|f| panic!("{}: {f}", t.name()));
        let name = t.name();
        // s_movrels: s[10 + M0]; the 64-bit form moves s[12:13].
        assert_eq!(dword(&out, 0x40), 3, "{name} s_movrels_b32");
        assert_eq!(
            (dword(&out, 0x4c), dword(&out, 0x50)),
            (3, 4),
            "{name} s_movrels_b64"
        );
        // s_movreld with M0 = 1 wrote s11, which the buffer store put at 0x900 + 4.
        assert_eq!(
            dword(&out, 0x104),
            77,
            "{name} s_movreld_b32, s_buffer_store_dword"
        );
        // The atomics: old values returned with GLC, memory updated.
        assert_eq!(
            dword(&out, 0x44),
            100,
            "{name} s_atomic_add returns the old value"
        );
        assert_eq!(dword(&out, 0x10), 103, "{name} s_atomic_add");
        assert_eq!(dword(&out, 0x18), 46, "{name} s_atomic_sub");
        assert_eq!(
            dword(&out, 0x48),
            7,
            "{name} s_atomic_cmpswap returns the old value"
        );
        assert_eq!(
            dword(&out, 0x14),
            55,
            "{name} s_atomic_cmpswap stores on a match"
        );
        let wide = u64::from_le_bytes(out[0x20..0x28].try_into().unwrap());
        assert_eq!(
            wide, 0x1_0000_0000,
            "{name} s_atomic_add_x2 carries into the high dword"
        );
        assert_eq!(
            dword(&out, 0x58),
            0xFFFF_FFFF,
            "{name} s_atomic_add_x2 old value"
        );
        // No debugger: the conditional-debug branch is not taken.
        assert_eq!(dword(&out, 0x54), 9, "{name} s_cbranch_cdbgsys");
    }
}

#[test]
fn a_relative_move_past_the_sgprs_faults_by_name() {
    let source = "
        s_mov_b32 m0, 200
        s_movrels_b32 s20, s10
        s_endpgm
    ";
    let t = Target::Gfx90a;
    let fault = run(t, &assemble(t, source), &[]).expect_err("the move past s101 must fault");
    assert!(
        fault.to_string().contains("s_movrels_b32 with M0 200"),
        "{fault}"
    );
}
