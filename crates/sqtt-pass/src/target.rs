//! What the pass needs to know about the AMDGPU target of a module: which marker forms exist,
//! where the hardware IDs live, and how to sample the shader clock.

/// An AMDGPU processor, from a function's `target-cpu` attribute (`gfx942`, `gfx1200`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuTarget {
    /// The processor name.
    pub name: String,
    /// The GFX major version (9, 10, 11, 12).
    pub major: u32,
    /// Wave size in lanes.
    pub wave_size: u32,
}

/// One hardware-ID field read with `s_getreg_b32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwField {
    /// Hardware register number.
    pub reg: u32,
    /// First bit of the field.
    pub offset: u32,
    /// Width of the field in bits.
    pub size: u32,
}

impl HwField {
    /// The `s_getreg_b32` / `llvm.amdgcn.s.getreg` operand: `((size - 1) << 11) | (offset << 6) | reg`.
    pub fn encoding(&self) -> u32 {
        ((self.size - 1) << 11) | (self.offset << 6) | self.reg
    }

    /// Whether `mask` selects every value the field can take.
    pub fn covered_by(&self, mask: u32) -> bool {
        let all = if self.size >= 32 {
            u32::MAX
        } else {
            (1u32 << self.size) - 1
        };
        mask & all == all
    }
}

/// The fields used by scope checks on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeFields {
    /// Wave slot.
    pub wave: HwField,
    /// SIMD.
    pub simd: HwField,
    /// CU (GFX9) or WGP (GFX10+).
    pub cu: HwField,
    /// Workgroup slot.
    pub wg: HwField,
}

/// How the shader clock is sampled for clock packing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// `s_getreg_b32 hwreg(HW_REG_SHADER_CYCLES_LO, shift, bits)` (gfx1200, gfx1201).
    ShaderCyclesLo,
    /// `s_get_shader_cycles_u64` (gfx1250), through `llvm.readcyclecounter`.
    ShaderCycles64,
}

impl GpuTarget {
    /// Parses a `target-cpu` value; `features` (the `target-features` attribute) decides the wave
    /// size when it names one. Returns `None` for names that are not `gfxNNNN`.
    pub fn parse(cpu: &str, features: &str) -> Option<GpuTarget> {
        let digits = cpu.strip_prefix("gfx")?;
        let digits: String = digits
            .chars()
            .take_while(|c| c.is_ascii_hexdigit())
            .collect();
        if digits.len() < 3 {
            return None;
        }
        let major: u32 = digits[..digits.len() - 2].parse().ok()?;
        let wave_size = if features.contains("+wavefrontsize64") {
            64
        } else if features.contains("+wavefrontsize32") || major >= 10 {
            32
        } else {
            64
        };
        Some(GpuTarget {
            name: cpu.to_string(),
            major,
            wave_size,
        })
    }

    /// Whether `s_ttracedata_imm` exists (GFX10 and later).
    pub fn has_ttracedata_imm(&self) -> bool {
        self.major >= 10
    }

    /// The hardware-ID fields for scope checks.
    pub fn scope_fields(&self) -> ScopeFields {
        if self.major <= 9 {
            const HW_ID: u32 = 4;
            ScopeFields {
                wave: HwField {
                    reg: HW_ID,
                    offset: 0,
                    size: 4,
                },
                simd: HwField {
                    reg: HW_ID,
                    offset: 4,
                    size: 2,
                },
                cu: HwField {
                    reg: HW_ID,
                    offset: 8,
                    size: 4,
                },
                wg: HwField {
                    reg: HW_ID,
                    offset: 16,
                    size: 4,
                },
            }
        } else {
            const HW_ID1: u32 = 23;
            const HW_ID2: u32 = 24;
            ScopeFields {
                wave: HwField {
                    reg: HW_ID1,
                    offset: 0,
                    size: 5,
                },
                simd: HwField {
                    reg: HW_ID1,
                    offset: 8,
                    size: 2,
                },
                cu: HwField {
                    reg: HW_ID1,
                    offset: 10,
                    size: 4,
                },
                wg: HwField {
                    reg: HW_ID2,
                    offset: 16,
                    size: 5,
                },
            }
        }
    }

    /// How to sample the clock for packing, or `None` when the target has no packing support.
    pub fn clock_source(&self) -> Option<ClockSource> {
        match self.name.as_str() {
            "gfx1200" | "gfx1201" => Some(ClockSource::ShaderCyclesLo),
            "gfx1250" => Some(ClockSource::ShaderCycles64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_processors() {
        let t = GpuTarget::parse("gfx942", "+gfx9-insts,+wavefrontsize64").unwrap();
        assert_eq!(
            (t.major, t.wave_size, t.has_ttracedata_imm()),
            (9, 64, false)
        );
        let t = GpuTarget::parse("gfx90a", "").unwrap();
        assert_eq!((t.major, t.wave_size), (9, 64));
        let t = GpuTarget::parse("gfx1100", "+wavefrontsize32").unwrap();
        assert_eq!(
            (t.major, t.wave_size, t.has_ttracedata_imm()),
            (11, 32, true)
        );
        let t = GpuTarget::parse("gfx1200", "+wavefrontsize64").unwrap();
        assert_eq!((t.major, t.wave_size), (12, 64));
        assert!(GpuTarget::parse("x86-64", "").is_none());
    }

    #[test]
    fn getreg_encodings() {
        // GFX9 CU_ID: HW_ID bits 11:8.
        let f = GpuTarget::parse("gfx942", "").unwrap().scope_fields().cu;
        assert_eq!(f.encoding(), (3 << 11) | (8 << 6) | 4);
        // GFX10+ WGP_ID: HW_ID1 bits 13:10.
        let f = GpuTarget::parse("gfx1100", "").unwrap().scope_fields().cu;
        assert_eq!(f.encoding(), (3 << 11) | (10 << 6) | 23);
        assert!(f.covered_by(0xF) && f.covered_by(u32::MAX) && !f.covered_by(0x3));
    }

    #[test]
    fn clock_sources() {
        assert_eq!(
            GpuTarget::parse("gfx1201", "").unwrap().clock_source(),
            Some(ClockSource::ShaderCyclesLo)
        );
        assert_eq!(
            GpuTarget::parse("gfx1250", "").unwrap().clock_source(),
            Some(ClockSource::ShaderCycles64)
        );
        assert_eq!(
            GpuTarget::parse("gfx1100", "").unwrap().clock_source(),
            None
        );
    }
}
