//! The 64-byte kernel descriptor (AMDGPUUsage, "Kernel Descriptor"), decoded once for the
//! runtime that reports its sizes and the emulator that starts waves from it.

/// Size of a kernel descriptor (the object of a `<kernel>.kd` symbol).
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;
/// Suffix of kernel-descriptor symbols.
pub const KERNEL_DESCRIPTOR_SUFFIX: &str = ".kd";
/// `kernel_code_properties` bit: the kernel uses a dynamically sized stack.
const KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK: u16 = 1 << 11;

/// A decoded kernel descriptor (all zero by default, as for a kernel with no code object).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDescriptor {
    /// Fixed LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Fixed private bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Kernarg bytes.
    pub kernarg_size: u32,
    /// Entry point, relative to the descriptor's address.
    pub entry_offset: i64,
    /// COMPUTE_PGM_RSRC3.
    pub rsrc3: u32,
    /// COMPUTE_PGM_RSRC1.
    pub rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub rsrc2: u32,
    /// Kernel code properties (enable bits of the user SGPRs, wave32, dynamic stack).
    pub properties: u16,
    /// Kernarg preload: length in bits 6:0, offset in bits 15:7 (dwords).
    pub kernarg_preload: u16,
}

impl KernelDescriptor {
    /// Decodes the 64 descriptor bytes.
    pub fn parse(b: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> KernelDescriptor {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            entry_offset: i64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            rsrc3: u32_at(44),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            properties: u16_at(56),
            kernarg_preload: u16_at(58),
        }
    }

    /// The MODE register a wave starts with (round, denorm, DX10_CLAMP, IEEE from RSRC1).
    pub fn initial_mode(&self) -> u32 {
        let r = self.rsrc1;
        let round = (r >> 12) & 0xF;
        let denorm = (r >> 16) & 0xF;
        let dx10 = (r >> 21) & 1;
        let ieee = (r >> 23) & 1;
        round | denorm << 4 | dx10 << 8 | ieee << 9
    }

    /// Whether user SGPR `bit` of the code properties is enabled (0 private segment buffer,
    /// 1 dispatch ptr, 2 queue ptr, 3 kernarg ptr, 4 dispatch id, 5 flat scratch init,
    /// 6 private segment size).
    pub fn user_sgpr(&self, bit: u32) -> bool {
        self.properties >> bit & 1 != 0
    }

    /// USER_SGPR_COUNT from RSRC2.
    pub fn user_sgpr_count(&self) -> u32 {
        (self.rsrc2 >> 1) & 0x1F
    }

    /// ENABLE_VGPR_WORKITEM_ID (0: x only, 1: x and y, 2: x, y and z).
    pub fn workitem_id_dims(&self) -> u32 {
        (self.rsrc2 >> 11) & 3
    }

    /// Whether the kernel needs a dynamically sized call stack.
    pub fn uses_dynamic_stack(&self) -> bool {
        self.properties & KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK != 0
    }

    /// Whether the kernel is wave32 (not emulated on GFX9).
    pub fn wave32(&self) -> bool {
        self.properties >> 10 & 1 != 0
    }

    /// First AGPR in the unified register file (gfx90a/gfx942), in VGPRs.
    pub fn accum_offset(&self) -> u32 {
        ((self.rsrc3 & 0x3F) + 1) * 4
    }

    /// Kernarg dwords preloaded into SGPRs.
    pub fn preload_length(&self) -> u32 {
        (self.kernarg_preload & 0x7F) as u32
    }

    /// Offset (dwords) of the first preloaded kernarg.
    pub fn preload_offset(&self) -> u32 {
        (self.kernarg_preload >> 7) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(
        group: u32,
        private: u32,
        kernarg: u32,
        props: u16,
    ) -> [u8; KERNEL_DESCRIPTOR_SIZE] {
        let mut b = [0u8; KERNEL_DESCRIPTOR_SIZE];
        b[0..4].copy_from_slice(&group.to_le_bytes());
        b[4..8].copy_from_slice(&private.to_le_bytes());
        b[8..12].copy_from_slice(&kernarg.to_le_bytes());
        b[16..24].copy_from_slice(&(-0x1000i64).to_le_bytes());
        b[56..58].copy_from_slice(&props.to_le_bytes());
        b
    }

    #[test]
    fn kernel_descriptor_fields_come_from_their_offsets() {
        let kd = KernelDescriptor::parse(&descriptor(
            256,
            16,
            24,
            KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK,
        ));
        assert_eq!(kd.group_segment_fixed_size, 256);
        assert_eq!(kd.private_segment_fixed_size, 16);
        assert_eq!(kd.kernarg_size, 24);
        assert_eq!(kd.entry_offset, -0x1000);
        assert!(kd.uses_dynamic_stack());
        assert!(!KernelDescriptor::parse(&descriptor(0, 0, 0, 0x8)).uses_dynamic_stack());
    }

    #[test]
    fn program_resource_fields() {
        let mut b = [0u8; KERNEL_DESCRIPTOR_SIZE];
        // RSRC3: ACCUM_OFFSET 3 (16 VGPRs). RSRC1: round 0x5, denorm 0xC, DX10_CLAMP, IEEE.
        b[44..48].copy_from_slice(&3u32.to_le_bytes());
        let rsrc1 = 0x5 << 12 | 0xC << 16 | 1 << 21 | 1 << 23;
        b[48..52].copy_from_slice(&(rsrc1 as u32).to_le_bytes());
        // RSRC2: USER_SGPR_COUNT 6, ENABLE_VGPR_WORKITEM_ID 2.
        b[52..56].copy_from_slice(&(6u32 << 1 | 2 << 11).to_le_bytes());
        // Properties: kernarg pointer (bit 3), wave32 (bit 10); preload 2 dwords at dword 4.
        b[56..58].copy_from_slice(&(1u16 << 3 | 1 << 10).to_le_bytes());
        b[58..60].copy_from_slice(&(2u16 | 4 << 7).to_le_bytes());
        let kd = KernelDescriptor::parse(&b);
        assert_eq!(kd.accum_offset(), 16);
        assert_eq!(kd.initial_mode(), 0x5 | 0xC << 4 | 1 << 8 | 1 << 9);
        assert_eq!(kd.user_sgpr_count(), 6);
        assert_eq!(kd.workitem_id_dims(), 2);
        assert!(kd.user_sgpr(3) && !kd.user_sgpr(0));
        assert!(kd.wave32());
        assert_eq!((kd.preload_length(), kd.preload_offset()), (2, 4));
    }
}
