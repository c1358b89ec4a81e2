//! GPU models: the per-target facts a topology reports (CU counts, names, device ids, memory),
//! and the parsing of a comma-separated target list (`VHSA_AGENTS`, `VKFD_AGENTS`).

/// Per-target facts of a GPU model.
#[derive(Debug)]
pub struct GpuModel {
    /// The target name (`gfx90a`).
    pub target: &'static str,
    /// Target features as ROCR appends them to the ISA name (`:sramecc+:xnack-`).
    pub features: &'static str,
    /// The marketing (product) name.
    pub product: &'static str,
    /// The PCI device id.
    pub chip_id: u32,
    /// Compute units.
    pub compute_units: u32,
    /// SIMDs per compute unit.
    pub simds_per_cu: u32,
    /// Shader engines, over every XCC.
    pub shader_engines: u32,
    /// Accelerator complexes (XCCs): 8 on MI300X, else 1.
    pub xcc: u32,
    /// Peak engine clock.
    pub max_clock_mhz: u32,
    /// Wavefront slots per compute unit.
    pub max_waves_per_cu: u32,
    /// Device memory.
    pub memory_bytes: u64,
    /// GFX IP version (major, minor, stepping): 9.0.10 for gfx90a.
    pub gfx_version: (u32, u32, u32),
}

/// Every model, the default (`gfx942`) first.
pub const GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        target: "gfx942",
        features: ":sramecc+:xnack-",
        product: "AMD Instinct MI300X (virtual)",
        chip_id: 0x74a1,
        compute_units: 304,
        simds_per_cu: 4,
        shader_engines: 32,
        xcc: 8,
        max_clock_mhz: 2100,
        max_waves_per_cu: 32,
        memory_bytes: 192 << 30,
        gfx_version: (9, 4, 2),
    },
    GpuModel {
        target: "gfx90a",
        features: ":sramecc+:xnack-",
        product: "AMD Instinct MI250X (virtual)",
        chip_id: 0x740c,
        compute_units: 110,
        simds_per_cu: 4,
        shader_engines: 8,
        xcc: 1,
        max_clock_mhz: 1700,
        max_waves_per_cu: 32,
        memory_bytes: 64 << 30,
        gfx_version: (9, 0, 10),
    },
    GpuModel {
        target: "gfx908",
        features: ":sramecc+:xnack-",
        product: "AMD Instinct MI100 (virtual)",
        chip_id: 0x738c,
        compute_units: 120,
        simds_per_cu: 4,
        shader_engines: 8,
        xcc: 1,
        max_clock_mhz: 1502,
        max_waves_per_cu: 40,
        memory_bytes: 32 << 30,
        gfx_version: (9, 0, 8),
    },
    GpuModel {
        target: "gfx1100",
        features: "",
        product: "AMD Radeon RX 7900 XTX (virtual)",
        chip_id: 0x744c,
        compute_units: 96,
        simds_per_cu: 2,
        shader_engines: 6,
        xcc: 1,
        max_clock_mhz: 2500,
        max_waves_per_cu: 32,
        memory_bytes: 24 << 30,
        gfx_version: (11, 0, 0),
    },
];

/// The model of a target name.
pub fn by_target(target: &str) -> Option<&'static GpuModel> {
    GPU_MODELS.iter().find(|m| m.target == target)
}

/// The models a comma-separated target list names, in order; `default` when the list is absent.
/// Unknown targets are reported on stderr (prefixed with `who`) and skipped.
pub fn parse_target_list(
    list: Option<&str>,
    default: &'static GpuModel,
    who: &str,
) -> Vec<&'static GpuModel> {
    let Some(v) = list else {
        return vec![default];
    };
    let mut out = Vec::new();
    for t in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match by_target(t) {
            Some(m) => out.push(m),
            None => eprintln!(
                "{who}: unknown GPU target `{t}`; it is skipped. Known targets: {}",
                GPU_MODELS
                    .iter()
                    .map(|m| m.target)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_lists_select_models_in_order_and_skip_unknown_names() {
        let m = parse_target_list(Some("gfx90a, gfx9999,gfx942"), &GPU_MODELS[0], "test");
        let names: Vec<_> = m.iter().map(|m| m.target).collect();
        assert_eq!(names, ["gfx90a", "gfx942"]);
        assert_eq!(
            parse_target_list(None, &GPU_MODELS[1], "test")[0].target,
            "gfx90a"
        );
        assert_eq!(by_target("gfx90a").unwrap().gfx_version, (9, 0, 10));
    }
}
