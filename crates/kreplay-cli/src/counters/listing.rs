//! `kreplay info --pmc` and `kreplay run -L` (rocprofv3-avail's `info --pmc` layout: per GPU
//! agent, each counter's name, description, block and dimensions, plus kreplay's event id,
//! per-pass limit and exactness), and `kreplay info --pmc-check` (does a set fit one pass).

use super::agent::GpuAgent;
use super::collection::{self, Collection};
use super::groups::target_of;
use crate::exit_status::CliError;
use amdgpu_counters::Dimension;
use amdgpu_counters::group::{self, Limits};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One `Key : value` line of the listing, aligned as rocprofv3-avail aligns them.
fn field(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "{key:<20}:\t{value}");
}

/// rocprofv3's dimension text of a counter counted per `dimension` on an agent of
/// `topology` (compute units, shader engines, XCCs).
pub fn dimensions(dimension: Dimension, topology: Option<[u32; 3]>) -> String {
    let [cu, se, xcc] = topology.unwrap_or([1, 1, 1]);
    let xcc = xcc.max(1);
    let xcc_part = if xcc > 1 {
        format!(" DIMENSION_XCC[0:{}]", xcc - 1)
    } else {
        String::new()
    };
    match dimension {
        Dimension::Agent => "DIMENSION_INSTANCE[0:0]".to_owned(),
        Dimension::ShaderEngine => format!(
            "DIMENSION_INSTANCE[0:0]{xcc_part} DIMENSION_SHADER_ENGINE[0:{}]",
            (se / xcc).max(1) - 1
        ),
        Dimension::ComputeUnit => {
            format!("DIMENSION_INSTANCE[0:{}]{xcc_part}", (cu / xcc).max(1) - 1)
        }
    }
}

/// The `gpu`-th GPU agent's counters (counted from 0, as rocprofv3-avail numbers GPUs), then
/// its derived metrics.
fn agent_listing(out: &mut String, gpu: usize, agent: &GpuAgent) {
    let _ = writeln!(
        out,
        "GPU:{gpu}\nName:{}\nAgent:{} (kreplay info's agent index)",
        agent.name, agent.index
    );
    let Ok(target) = target_of(agent) else {
        let _ = writeln!(
            out,
            "(kreplay knows no hardware counters for {})\n",
            agent.name
        );
        return;
    };
    for c in amdgpu_counters::counters(target) {
        field(out, "Counter_Name", c.name);
        field(out, "Description", c.description);
        field(out, "Block", c.block.name());
        field(out, "Dimensions", &dimensions(c.dimension, agent.topology));
        field(out, "Event", &c.event.to_string());
        field(
            out,
            "Per_pass_limit",
            &format!("{} {}", c.block.name(), c.block.per_pass_limit()),
        );
        field(out, "Exactness", c.exactness.label());
        if !c.hardware {
            field(
                out,
                "Origin",
                "kreplay (the emulator counts it; no hardware counter of that name)",
            );
        }
        out.push('\n');
    }
    for d in amdgpu_counters::derived(target) {
        field(out, "Counter_Name", d.name);
        field(out, "Description", d.description);
        field(out, "Expression", d.expression);
        field(
            out,
            "Exactness",
            &format!("{} (derived)", d.exactness(target).label()),
        );
        out.push('\n');
    }
}

/// The listing of every GPU agent's counters, after the line saying how they are collected.
pub fn render(agents: &[GpuAgent], collection: &Collection) -> String {
    let mut out = format!("{}{}\n", collection::INFO_PREFIX, collection.describe());
    if *collection == Collection::Unavailable {
        let _ = writeln!(out, "  to collect counters: {}", Collection::remedy());
    }
    out.push('\n');
    for (gpu, agent) in agents.iter().enumerate() {
        agent_listing(&mut out, gpu, agent);
    }
    out
}

/// `--pmc-check`: whether `names` fit one pass on every agent; per agent, the hardware
/// counters used per block against its limit. A set that does not fit is exit code 80.
pub fn check(names: &[String], agents: &[GpuAgent]) -> Result<String, CliError> {
    let names: Vec<String> = names.iter().flat_map(|n| group::parse_names(n)).collect();
    if names.is_empty() {
        return Err(CliError::BadCounterInput(
            "--pmc-check names no counter: give counter names, for example --pmc-check SQ_WAVES SQ_INSTS_VALU".into(),
        ));
    }
    if agents.is_empty() {
        return Err(CliError::CounterGroup(
            "the runtime reports no GPU agent to collect counters on".into(),
        ));
    }
    if let Some(groups) =
        super::groups::CounterGroups::from_options(std::slice::from_ref(&names), None)?
    {
        groups.check(agents)?;
    }
    let mut out = String::new();
    for agent in agents {
        let target = target_of(agent)?;
        let fitted = group::check(target, &names, Limits::Hardware)
            .map_err(|e| CliError::CounterGroup(e.to_string()))?;
        let mut per_block: BTreeMap<&str, (usize, u32)> = BTreeMap::new();
        for (block, _event) in fitted.events() {
            let entry = per_block
                .entry(block.name())
                .or_insert((0, block.per_pass_limit()));
            entry.0 += 1;
        }
        let blocks: Vec<String> = per_block
            .iter()
            .map(|(name, (n, limit))| format!("{name} {n}/{limit}"))
            .collect();
        let _ = writeln!(
            out,
            "agent {} ({}): {} fit in one pass ({})",
            agent.index,
            agent.name,
            names.join(" "),
            blocks.join(", ")
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(index: usize, name: &str) -> GpuAgent {
        GpuAgent {
            index,
            name: name.into(),
            topology: Some([104, 8, 1]),
        }
    }

    #[test]
    fn the_listing_has_rocprofv3_fields_and_kreplays_lines() {
        let text = render(&[agent(1, "gfx90a")], &Collection::ExtensionTable);
        assert!(text.starts_with("counter collection: "), "{text}");
        assert!(text.contains("GPU:0\nName:gfx90a\nAgent:1 "), "{text}");
        let waves = text
            .split("\n\n")
            .find(|b| b.contains("Counter_Name        :\tSQ_WAVES\n"))
            .expect("SQ_WAVES listed");
        for line in [
            "Block               :\tSQ",
            "Event               :\t4",
            "Per_pass_limit      :\tSQ 8",
            "Exactness           :\texact",
            "Dimensions          :\tDIMENSION_INSTANCE[0:0]",
        ] {
            assert!(waves.contains(line), "{line}: {waves}");
        }
        assert!(waves.contains("Description         :\t"));
        let unavailable = render(&[], &Collection::Unavailable);
        assert!(
            unavailable.contains("to collect counters: install"),
            "{unavailable}"
        );
    }

    #[test]
    fn dimensions_follow_the_topology() {
        assert_eq!(
            dimensions(Dimension::ShaderEngine, Some([104, 8, 1])),
            "DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:7]"
        );
        assert_eq!(
            dimensions(Dimension::ShaderEngine, Some([304, 32, 8])),
            "DIMENSION_INSTANCE[0:0] DIMENSION_XCC[0:7] DIMENSION_SHADER_ENGINE[0:3]"
        );
        assert_eq!(
            dimensions(Dimension::Agent, None),
            "DIMENSION_INSTANCE[0:0]"
        );
    }

    #[test]
    fn pmc_check_reports_blocks_or_refuses() {
        let out = check(
            &["SQ_WAVES,SQ_INSTS_VALU GRBM_COUNT".into()],
            &[agent(1, "gfx90a"), agent(2, "gfx942")],
        )
        .unwrap();
        assert!(out.contains("agent 1 (gfx90a): SQ_WAVES SQ_INSTS_VALU GRBM_COUNT fit in one pass (GRBM 1/2, SQ 2/8)"), "{out}");
        assert!(out.contains("agent 2 (gfx942)"), "{out}");
        let err = check(&["NOT_A_COUNTER".into()], &[agent(1, "gfx90a")]).unwrap_err();
        assert_eq!(err.exit_code(), 80);
        let err = check(&["SQ_WAVES".into()], &[]).unwrap_err();
        assert!(err.to_string().contains("no GPU agent"), "{err}");
    }
}
