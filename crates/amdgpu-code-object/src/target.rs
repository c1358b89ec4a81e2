//! The processor and feature modes a code object is built for, from the ELF header's `e_flags`
//! (AMDGPUUsage, "ELF Header"): the `EF_AMDGPU_MACH` processor table and the xnack/sramecc
//! fields of code-object v3 and of v4 and later.

use std::fmt;

use crate::error::CodeObjectError;

/// `e_ident[EI_ABIVERSION]` of code-object v3; v4, v5 and v6 follow (2, 3, 4).
pub(crate) const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;
/// Processor selection bits of `e_flags`.
const EF_AMDGPU_MACH: u32 = 0xff;
/// xnack mode bits of `e_flags` (v4 and later).
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// sramecc mode bits of `e_flags` (v4 and later).
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// xnack "on" bit of v3 code objects.
const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
/// sramecc "on" bit of v3 code objects.
const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;

/// Processor names by `EF_AMDGPU_MACH` value (AMDGCN processors only).
const PROCESSORS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x049, "gfx1250"),
    (0x04a, "gfx1151"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
    (0x051, "gfx9-generic"),
    (0x052, "gfx10-1-generic"),
    (0x053, "gfx10-3-generic"),
    (0x054, "gfx11-generic"),
    (0x055, "gfx1152"),
    (0x058, "gfx1153"),
    (0x059, "gfx12-generic"),
    (0x05a, "gfx1251"),
    (0x05f, "gfx9-4-generic"),
];

/// The processor name of an `EF_AMDGPU_MACH` value (the low byte of `e_flags`), when it names a
/// known AMDGCN processor.
pub fn processor_name(e_flags: u32) -> Option<&'static str> {
    let mach = e_flags & EF_AMDGPU_MACH;
    PROCESSORS.iter().find(|(m, _)| *m == mach).map(|(_, n)| *n)
}

/// A target feature mode as recorded in `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureMode {
    /// The processor does not have the feature.
    Unsupported,
    /// Code runs with the feature on or off.
    Any,
    /// Code requires the feature off.
    Off,
    /// Code requires the feature on.
    On,
}

/// The processor and feature modes a code object was built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Processor name (`gfx942`).
    pub processor: &'static str,
    /// xnack mode.
    pub xnack: FeatureMode,
    /// sramecc mode.
    pub sramecc: FeatureMode,
}

impl Target {
    /// Whether code for this target runs on an agent whose ISA name is `agent_isa`
    /// (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` or just `gfx942`): same processor, and
    /// every feature this code pins (on or off) is not pinned the other way by the agent.
    pub fn runs_on(&self, agent_isa: &str) -> bool {
        let id = agent_isa.rsplit("--").next().unwrap_or(agent_isa);
        let mut parts = id.split(':');
        if parts.next() != Some(self.processor) {
            return false;
        }
        for feature in parts {
            let (name, on) = match feature.strip_suffix('+') {
                Some(n) => (n, true),
                None => match feature.strip_suffix('-') {
                    Some(n) => (n, false),
                    None => continue,
                },
            };
            let mode = match name {
                "xnack" => self.xnack,
                "sramecc" => self.sramecc,
                _ => continue,
            };
            if (mode == FeatureMode::On && !on) || (mode == FeatureMode::Off && on) {
                return false;
            }
        }
        true
    }
}

impl fmt::Display for Target {
    /// The full target ID: `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` (features in "any"
    /// mode are omitted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "amdgcn-amd-amdhsa--{}", self.processor)?;
        for (name, mode) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match mode {
                FeatureMode::On => write!(f, ":{name}+")?,
                FeatureMode::Off => write!(f, ":{name}-")?,
                FeatureMode::Any | FeatureMode::Unsupported => {}
            }
        }
        Ok(())
    }
}

/// The target of a code object from its `e_flags` and `e_ident[EI_ABIVERSION]`.
pub(crate) fn decode_target(flags: u32, abi: u8) -> Result<Target, CodeObjectError> {
    let processor =
        processor_name(flags).ok_or(CodeObjectError::UnknownProcessor(flags & EF_AMDGPU_MACH))?;
    let (xnack, sramecc) = if abi == ELFABIVERSION_AMDGPU_HSA_V3 {
        let v3 = |bit| {
            if flags & bit != 0 {
                FeatureMode::On
            } else {
                FeatureMode::Any
            }
        };
        (
            v3(EF_AMDGPU_FEATURE_XNACK_V3),
            v3(EF_AMDGPU_FEATURE_SRAMECC_V3),
        )
    } else {
        let v4 = |bits: u32, shift: u32| match (flags & bits) >> shift {
            0 => FeatureMode::Unsupported,
            1 => FeatureMode::Any,
            2 => FeatureMode::Off,
            _ => FeatureMode::On,
        };
        (
            v4(EF_AMDGPU_FEATURE_XNACK_V4, 8),
            v4(EF_AMDGPU_FEATURE_SRAMECC_V4, 10),
        )
    };
    Ok(Target {
        processor,
        xnack,
        sramecc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_id_and_compatibility() {
        let t = decode_target(0x54c, 2).unwrap();
        assert_eq!(t.processor, "gfx942");
        assert_eq!((t.xnack, t.sramecc), (FeatureMode::Any, FeatureMode::Any));
        assert_eq!(t.to_string(), "amdgcn-amd-amdhsa--gfx942");
        assert!(t.runs_on("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"));
        assert!(t.runs_on("gfx942"));
        assert!(!t.runs_on("amdgcn-amd-amdhsa--gfx90a"));

        let pinned = decode_target(0x03f | 0x300 | 0x800, 3).unwrap();
        assert_eq!(
            pinned.to_string(),
            "amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+"
        );
        assert!(pinned.runs_on("amdgcn-amd-amdhsa--gfx90a:xnack+"));
        assert!(!pinned.runs_on("amdgcn-amd-amdhsa--gfx90a:xnack-"));
        assert!(!pinned.runs_on("amdgcn-amd-amdhsa--gfx90a:sramecc+"));

        assert_eq!(
            decode_target(0x7e, 2),
            Err(CodeObjectError::UnknownProcessor(0x7e))
        );
    }

    #[test]
    fn processor_names_by_mach() {
        assert_eq!(processor_name(0x3f), Some("gfx90a"));
        assert_eq!(processor_name(0x54c), Some("gfx942"));
        assert_eq!(processor_name(0x030), Some("gfx908"));
        assert_eq!(processor_name(0x7e), None);
    }
}
