//! The GPU targets the catalog describes.

use std::fmt;

/// A GPU target with a counter catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// MI200 (CDNA2).
    Gfx90a,
    /// MI300 (CDNA3).
    Gfx942,
}

impl Target {
    /// Every target, in catalog order.
    pub const ALL: [Target; 2] = [Target::Gfx90a, Target::Gfx942];

    /// The target of an ISA or agent name: `gfx90a`, `gfx90a:sramecc+:xnack-`,
    /// `amdgcn-amd-amdhsa--gfx942:xnack-`. `None` for targets without a catalog.
    pub fn from_isa_name(name: &str) -> Option<Target> {
        let processor = name.rsplit("--").next().unwrap_or(name);
        let processor = processor.split(':').next().unwrap_or(processor).trim();
        match processor {
            "gfx90a" => Some(Target::Gfx90a),
            "gfx942" => Some(Target::Gfx942),
            _ => None,
        }
    }

    /// The processor name (`gfx90a`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_names_with_features_and_triples_resolve() {
        assert_eq!(Target::from_isa_name("gfx90a"), Some(Target::Gfx90a));
        assert_eq!(
            Target::from_isa_name("gfx90a:sramecc+:xnack-"),
            Some(Target::Gfx90a)
        );
        assert_eq!(
            Target::from_isa_name("amdgcn-amd-amdhsa--gfx942:xnack-"),
            Some(Target::Gfx942)
        );
        assert_eq!(Target::from_isa_name("gfx1100"), None);
        assert_eq!(Target::from_isa_name("gfx9"), None);
    }
}
