//! The targets the emulator runs and their encoding families.

/// A target the emulator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// CDNA2 (MI200): absolute flat scratch, scratch through buffer instructions.
    Gfx90a,
    /// CDNA3 (MI300): architected flat scratch.
    Gfx942,
}

/// An encoding family: targets of one family share decoder layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// GFX9 (wave64).
    Gfx9,
}

impl Target {
    /// Parse a processor name (`gfx90a`, `gfx942`, with or without `amdgcn-amd-amdhsa--` and
    /// feature suffixes such as `:sramecc+:xnack-`).
    pub fn from_name(name: &str) -> Option<Target> {
        let base = name.rfind("gfx").map(|i| &name[i..]).unwrap_or(name);
        let base = base.split(':').next().unwrap_or(base);
        match base {
            "gfx90a" => Some(Target::Gfx90a),
            "gfx942" | "gfx940" | "gfx941" => Some(Target::Gfx942),
            _ => None,
        }
    }

    /// The processor name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
        }
    }

    /// The encoding family.
    pub fn family(self) -> Family {
        Family::Gfx9
    }

    /// Lanes per wave.
    pub fn wave_size(self) -> u32 {
        64
    }

    /// Whether the target uses architected flat scratch (`scratch_*` relative to the wave).
    pub fn architected_flat_scratch(self) -> bool {
        self == Target::Gfx942
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn target_names_with_triples_and_features() {
        assert_eq!(Target::from_name("gfx90a"), Some(Target::Gfx90a));
        assert_eq!(
            Target::from_name("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            Some(Target::Gfx90a)
        );
        assert_eq!(
            Target::from_name("amdgcn-amd-amdhsa--gfx942"),
            Some(Target::Gfx942)
        );
        assert_eq!(Target::from_name("gfx1100"), None);
    }
}
