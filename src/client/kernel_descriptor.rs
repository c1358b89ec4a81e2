//! What the kernel descriptor of a dispatched kernel says, for the records: kernel-argument
//! size, static segment sizes and register counts, read from the loader's host copy of the
//! descriptor (the 64-byte `kernel_descriptor_t` of the AMDGPU code-object format).

use crate::runtime::Runtime;
use hsa_abi::ffi::hsa_agent_t;
use kreplay_records::KernelSymbol;

/// Bytes of a kernel descriptor.
pub const SIZE: usize = 64;

fn u32_at(d: &[u8; SIZE], offset: usize) -> u32 {
    u32::from_le_bytes([d[offset], d[offset + 1], d[offset + 2], d[offset + 3]])
}

/// The gfx version number of an agent name (`gfx90a` -> 90, `gfx942` -> 942, `gfx1100` ->
/// 1100): its leading decimal digits.
fn gfx_number(agent_name: &str) -> Option<u32> {
    let digits: String = agent_name
        .strip_prefix("gfx")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The facts of descriptor `d` of a kernel for agent `agent_name`, counted as rocprofiler-sdk
/// counts them: on gfx90a and gfx94x the architected VGPRs end at the accumulation offset
/// (`COMPUTE_PGM_RSRC3` bits 0-5, in 4s) and the accumulation VGPRs fill the rest of the
/// granulated total (`COMPUTE_PGM_RSRC1` bits 0-5, in 8s); elsewhere the VGPR granule is 4
/// (8 in wave32) and gfx908's accumulation count equals its architected one. SGPRs: bits 6-9
/// of `COMPUTE_PGM_RSRC1`, halved, in 16s before gfx10; 128 from gfx10 on.
pub fn symbol_of(d: &[u8; SIZE], agent_name: &str) -> KernelSymbol {
    let rsrc3 = u32_at(d, 44);
    let rsrc1 = u32_at(d, 48);
    let properties = u16::from_le_bytes([d[56], d[57]]);
    let wave32 = properties & (1 << 10) != 0;
    let vgpr_granules = u64::from(rsrc1 & 0x3f) + 1;
    let sgpr_granules = u64::from((rsrc1 >> 6) & 0xf);
    let gfx = gfx_number(agent_name).unwrap_or(0);
    let unified = agent_name == "gfx90a" || agent_name.starts_with("gfx94");
    let (arch, accum) = if unified {
        let arch = (u64::from(rsrc3 & 0x3f) + 1) * 4;
        (arch, (vgpr_granules * 8).saturating_sub(arch))
    } else {
        let arch = vgpr_granules * if wave32 { 8 } else { 4 };
        (arch, if agent_name == "gfx908" { arch } else { 0 })
    };
    KernelSymbol {
        group_segment_size: u64::from(u32_at(d, 0)),
        private_segment_size: u64::from(u32_at(d, 4)),
        kernarg_segment_size: u64::from(u32_at(d, 8)),
        kernarg_segment_alignment: None,
        sgpr_count: if gfx >= 1000 {
            128
        } else {
            (sgpr_granules / 2 + 1) * 16
        },
        arch_vgpr_count: arch,
        accum_vgpr_count: accum,
    }
}

/// The facts of the kernel whose descriptor is at device address `kernel_object`, dispatched
/// on `agent`; `None` when the loader has no host copy of it.
pub fn read(rt: Runtime, agent: u64, kernel_object: u64) -> Option<KernelSymbol> {
    let host = crate::loader::host_address(rt, kernel_object)?;
    // SAFETY: the loader's host copy of a loaded code object holds the whole 64-byte
    // descriptor at the address it returned for the descriptor's start.
    let bytes = unsafe { std::ptr::read_unaligned(host as *const [u8; SIZE]) };
    Some(symbol_of(
        &bytes,
        &rt.agent_name(hsa_agent_t { handle: agent }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(rsrc1: u32, rsrc3: u32, properties: u16) -> [u8; SIZE] {
        let mut d = [0u8; SIZE];
        d[0..4].copy_from_slice(&512u32.to_le_bytes());
        d[4..8].copy_from_slice(&16u32.to_le_bytes());
        d[8..12].copy_from_slice(&24u32.to_le_bytes());
        d[44..48].copy_from_slice(&rsrc3.to_le_bytes());
        d[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        d[56..58].copy_from_slice(&properties.to_le_bytes());
        d
    }

    #[test]
    fn counts_follow_the_architecture() {
        // 5 VGPR granules, SGPR field 3; accumulation offset field 3 (16 architected VGPRs).
        let d = descriptor(4 | (3 << 6), 3, 0);
        let s = symbol_of(&d, "gfx942");
        assert_eq!(
            (
                s.group_segment_size,
                s.private_segment_size,
                s.kernarg_segment_size
            ),
            (512, 16, 24)
        );
        assert_eq!((s.arch_vgpr_count, s.accum_vgpr_count), (16, 24));
        assert_eq!(s.sgpr_count, 32);
        let s = symbol_of(&d, "gfx90a");
        assert_eq!((s.arch_vgpr_count, s.accum_vgpr_count), (16, 24));
        let s = symbol_of(&d, "gfx908");
        assert_eq!((s.arch_vgpr_count, s.accum_vgpr_count), (20, 20));
        let s = symbol_of(&descriptor(4, 0, 1 << 10), "gfx1100");
        assert_eq!(
            (s.arch_vgpr_count, s.accum_vgpr_count, s.sgpr_count),
            (40, 0, 128)
        );
        assert_eq!(gfx_number("gfx90a"), Some(90));
        assert_eq!(gfx_number("cpu"), None);
    }
}
