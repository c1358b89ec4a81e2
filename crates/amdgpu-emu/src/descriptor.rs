//! The 64-byte kernel descriptor (AMDGPUUsage, "Kernel Descriptor").

/// The descriptor fields the emulator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Parse the 64 descriptor bytes.
    pub fn parse(b: &[u8; 64]) -> KernelDescriptor {
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
