//! The counter groups of one run: from `--pmc` flags (each flag one group) and `-i FILE`
//! (command-line groups first, as rocprofv3 orders them), checked against every GPU agent of
//! the runtime before the application starts, and handed to the tool as `KREPLAY_PMC_GROUPS`.

use super::agent::GpuAgent;
use super::collection::Collection;
use super::input;
use crate::exit_status::CliError;
use crate::kernel_selection;
use amdgpu_counters::Target;
use amdgpu_counters::group::{self, GroupError, Limits};
use std::path::Path;

/// The variable that hands the groups to the tool: one `pmc: A B` line per group.
pub const VARIABLE: &str = "KREPLAY_PMC_GROUPS";
/// The variable that allows derived metrics from inputs collected in different passes.
pub const CROSS_PASS_VARIABLE: &str = "KREPLAY_PMC_CROSS_PASS";

/// The counter groups of a run, in pass order: pass p collects group p mod G.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterGroups {
    groups: Vec<Vec<String>>,
}

/// One group's names: every value split as rocprofv3 splits them, duplicates dropped (the
/// first kept).
fn group_names(values: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in values.iter().flat_map(|v| group::parse_names(v)) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

impl CounterGroups {
    /// The groups of `--pmc` flags (`pmc`, one entry per flag) and of the input file;
    /// `None` when neither names a counter.
    pub fn from_options(
        pmc: &[Vec<String>],
        input: Option<&Path>,
    ) -> Result<Option<CounterGroups>, CliError> {
        let mut groups = Vec::new();
        for (i, values) in pmc.iter().enumerate() {
            let names = group_names(values);
            if names.is_empty() {
                return Err(CliError::BadCounterInput(format!(
                    "--pmc number {} names no counter: give counter names, for example --pmc SQ_WAVES SQ_INSTS_VALU",
                    i + 1
                )));
            }
            groups.push(names);
        }
        if let Some(path) = input {
            let file = input::read(path)?;
            if file.from_pmc_groups && !pmc.is_empty() {
                return Err(CliError::BadCounterInput(format!(
                    "--pmc cannot be combined with the pmc_groups of -i `{}` (rocprofv3 refuses the same): give the groups either as --pmc flags or in the file",
                    path.display()
                )));
            }
            if !file.ignored.is_empty() {
                eprintln!(
                    "kreplay: note: -i `{}`: kreplay takes only the counter groups from an input file; ignored: {}",
                    path.display(),
                    file.ignored.join(", ")
                );
            }
            groups.extend(file.groups.iter().map(|g| group_names(g)));
        }
        Ok((!groups.is_empty()).then_some(CounterGroups { groups }))
    }

    /// The groups, in pass order.
    pub fn groups(&self) -> &[Vec<String>] {
        &self.groups
    }

    /// The value of [`VARIABLE`]: one `pmc: A B` line per group.
    pub fn environment_value(&self) -> String {
        group::to_lines(&self.groups)
    }

    /// Passes per dispatch: `explicit` (`--passes`), which must be at least the number of
    /// groups, else the number of groups.
    pub fn passes(&self, explicit: Option<&str>) -> Result<u32, CliError> {
        let count = self.groups.len();
        let limit = kernel_selection::MAX_PASSES as usize;
        if count > limit {
            return Err(CliError::BadPasses(format!(
                "{count} counter groups need {count} passes, more than the {limit} a dispatch may have; collect fewer groups"
            )));
        }
        let Some(text) = explicit else {
            return Ok(count as u32);
        };
        let passes = kernel_selection::check_passes(text)?;
        if (passes as usize) < count {
            return Err(CliError::BadPasses(format!(
                "--passes {passes} is fewer than the {count} counter groups: each group needs a pass of its own (pass p collects group p mod {count}); give --passes {count} or more, or leave --passes out"
            )));
        }
        Ok(passes)
    }

    /// Checks the groups against a runtime's GPU agents, then that the runtime can collect
    /// counters: a group that can never be collected is refused first (exit code 80), then a
    /// runtime without a collection path (81).
    pub fn check_runtime(
        &self,
        agents: &[GpuAgent],
        collection: &Collection,
    ) -> Result<(), CliError> {
        if agents.is_empty() {
            return Err(CliError::CounterGroup(
                "the runtime reports no GPU agent to collect counters on".into(),
            ));
        }
        self.check(agents)?;
        if *collection == Collection::Unavailable {
            return Err(CliError::CountersUnavailable(format!(
                "{}; {}",
                collection.describe(),
                Collection::remedy()
            )));
        }
        Ok(())
    }

    /// `--pmc-auto-split`: each group split, where it does not fit one pass, into groups that
    /// fit on every agent: each name goes to the first of the group's parts it fits in (a
    /// derived metric with all its inputs), else starts a new part. A name that fits nowhere
    /// stays in a part of its own, for [`CounterGroups::check`] to refuse.
    pub fn split_to_fit(&self, agents: &[GpuAgent]) -> Result<CounterGroups, CliError> {
        let mut targets: Vec<Target> = Vec::new();
        for agent in agents {
            let target = target_of(agent)?;
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        let fits = |names: &[String]| {
            targets
                .iter()
                .all(|t| group::check(*t, names, Limits::Hardware).is_ok())
        };
        let mut groups = Vec::new();
        for names in &self.groups {
            let mut parts: Vec<Vec<String>> = Vec::new();
            for name in names {
                let home = parts.iter_mut().find(|part| {
                    let mut wider = part.to_vec();
                    wider.push(name.clone());
                    fits(&wider)
                });
                match home {
                    Some(part) => part.push(name.clone()),
                    None => parts.push(vec![name.clone()]),
                }
            }
            groups.extend(parts);
        }
        Ok(CounterGroups { groups })
    }

    /// Checks every group against every GPU agent's counters and per-pass limits.
    pub fn check(&self, agents: &[GpuAgent]) -> Result<(), CliError> {
        for agent in agents {
            let target = target_of(agent)?;
            for (i, names) in self.groups.iter().enumerate() {
                group::check(target, names, Limits::Hardware)
                    .map_err(|e| refusal(i, self.groups.len(), names, agent, &e))?;
            }
        }
        Ok(())
    }
}

/// The counter catalog's target of `agent`; an agent kreplay has no counters for refuses the
/// run (its dispatches could not be counted).
pub fn target_of(agent: &GpuAgent) -> Result<Target, CliError> {
    Target::from_isa_name(&agent.name).ok_or_else(|| {
        CliError::CounterGroup(format!(
            "agent {} is {}, for which kreplay knows no hardware counters (it knows gfx90a and gfx942); its dispatches cannot be counted: run on a supported GPU or with --virtual-agents gfx90a",
            agent.index, agent.name
        ))
    })
}

/// The message of a group that cannot be collected on `agent`.
fn refusal(
    index: usize,
    count: usize,
    names: &[String],
    agent: &GpuAgent,
    error: &GroupError,
) -> CliError {
    let which = if count == 1 {
        format!("the counter group ({})", names.join(" "))
    } else {
        format!(
            "counter group {} of {count} ({})",
            index + 1,
            names.join(" ")
        )
    };
    let reason = match error {
        GroupError::OverLimit {
            block,
            count,
            limit,
            names,
            ..
        } => format!(
            "it needs {count} {} counters ({names}) and the {} block collects at most {limit} per pass; split them over several --pmc flags, each --pmc being one pass",
            block.name(),
            block.name()
        ),
        other => other.to_string(),
    };
    CliError::CounterGroup(format!(
        "{which} cannot be collected on agent {} ({}): {reason}",
        agent.index, agent.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(groups: &[&[&str]]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| g.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    fn agent(name: &str) -> GpuAgent {
        GpuAgent {
            index: 1,
            name: name.into(),
            topology: None,
        }
    }

    #[test]
    fn each_flag_is_one_group_split_on_spaces_and_commas() {
        let g = CounterGroups::from_options(
            &flags(&[
                &["SQ_WAVES SQ_INSTS_VALU"],
                &["GRBM_COUNT,SQ_WAVES", "SQ_WAVES"],
            ]),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            g.groups(),
            flags(&[&["SQ_WAVES", "SQ_INSTS_VALU"], &["GRBM_COUNT", "SQ_WAVES"]])
        );
        assert_eq!(
            g.environment_value(),
            "pmc: SQ_WAVES SQ_INSTS_VALU\npmc: GRBM_COUNT SQ_WAVES\n"
        );
        assert_eq!(
            group::parse_lines(&g.environment_value()),
            g.groups().to_vec(),
            "the tool reads back what the command line hands it"
        );
        assert!(CounterGroups::from_options(&[], None).unwrap().is_none());
        let err = CounterGroups::from_options(&flags(&[&[" , "]]), None).unwrap_err();
        assert_eq!(err.exit_code(), 82);
    }

    #[test]
    fn passes_default_to_the_group_count_and_may_not_be_fewer() {
        let g = CounterGroups::from_options(
            &flags(&[&["SQ_WAVES"], &["SQ_INSTS_VALU"], &["GRBM_COUNT"]]),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(g.passes(None).unwrap(), 3);
        assert_eq!(g.passes(Some("6")).unwrap(), 6);
        let err = g.passes(Some("2")).unwrap_err();
        assert_eq!(err.exit_code(), 67);
        assert!(
            err.to_string().contains("fewer than the 3 counter groups"),
            "{err}"
        );
        assert_eq!(g.passes(Some("0")).unwrap_err().exit_code(), 67);
    }

    #[test]
    fn groups_over_a_block_limit_are_refused_naming_block_count_and_limit() {
        let sq: Vec<String> = amdgpu_counters::counters(Target::Gfx90a)
            .iter()
            .filter(|c| c.block.name() == "SQ")
            .take(9)
            .map(|c| c.name.to_string())
            .collect();
        assert_eq!(sq.len(), 9);
        let g = CounterGroups::from_options(&[vec!["SQ_WAVES".into()], sq.clone()], None)
            .unwrap()
            .unwrap();
        let err = g.check(&[agent("gfx90a")]).unwrap_err();
        assert_eq!(err.exit_code(), 80);
        let text = err.to_string();
        for part in [
            "counter group 2 of 2",
            "9 SQ counters",
            "at most 8",
            "gfx90a",
            &sq[8],
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        let ok = CounterGroups::from_options(&[sq[..8].to_vec()], None)
            .unwrap()
            .unwrap();
        ok.check(&[agent("gfx90a"), agent("gfx942")]).unwrap();
    }

    #[test]
    fn a_runtime_without_collection_is_exit_81_after_the_groups_pass() {
        let g = CounterGroups::from_options(&flags(&[&["SQ_WAVES"]]), None)
            .unwrap()
            .unwrap();
        let err = g
            .check_runtime(&[agent("gfx90a")], &Collection::Unavailable)
            .unwrap_err();
        assert_eq!(err.exit_code(), 81);
        let text = err.to_string();
        assert!(
            text.contains("libhsa-amd-aqlprofile64.so.1") && text.contains("--runtime virtual"),
            "{text}"
        );
        g.check_runtime(&[agent("gfx90a")], &Collection::ExtensionTable)
            .unwrap();
        let bad = CounterGroups::from_options(&flags(&[&["NOT_A_COUNTER"]]), None)
            .unwrap()
            .unwrap();
        assert_eq!(
            bad.check_runtime(&[agent("gfx90a")], &Collection::Unavailable)
                .unwrap_err()
                .exit_code(),
            80,
            "a group that can never be collected is named first"
        );
        assert_eq!(
            g.check_runtime(&[], &Collection::ExtensionTable)
                .unwrap_err()
                .exit_code(),
            80
        );
    }

    #[test]
    fn auto_split_packs_each_group_into_parts_that_fit() {
        let sq: Vec<String> = amdgpu_counters::counters(Target::Gfx90a)
            .iter()
            .filter(|c| c.block.name() == "SQ" && c.hardware)
            .take(11)
            .map(|c| c.name.to_string())
            .collect();
        let mut first = sq.clone();
        first.extend(["GRBM_COUNT".to_owned(), "GRBM_GUI_ACTIVE".to_owned()]);
        let g = CounterGroups::from_options(&[first.clone(), vec!["SQ_WAVES".into()]], None)
            .unwrap()
            .unwrap();
        assert!(g.check(&[agent("gfx90a")]).is_err());
        let split = g.split_to_fit(&[agent("gfx90a")]).unwrap();
        split.check(&[agent("gfx90a")]).unwrap();
        assert_eq!(split.groups().len(), 3, "{:?}", split.groups());
        assert_eq!(split.groups()[0].len(), 10, "8 SQ and both GRBM counters");
        assert_eq!(
            split.groups()[2],
            vec!["SQ_WAVES".to_owned()],
            "a group that fits stays"
        );
        let mut names: Vec<String> = split.groups()[..2].concat();
        names.sort();
        first.sort();
        assert_eq!(names, first, "every name kept once");
        let unknown = CounterGroups::from_options(&flags(&[&["SQ_WAVES", "NOT_A_COUNTER"]]), None)
            .unwrap()
            .unwrap()
            .split_to_fit(&[agent("gfx90a")])
            .unwrap();
        assert_eq!(
            unknown.check(&[agent("gfx90a")]).unwrap_err().exit_code(),
            80
        );
    }

    #[test]
    fn unknown_counters_and_agents_are_refused() {
        let g = CounterGroups::from_options(&flags(&[&["SQ_WAVES", "NOT_A_COUNTER"]]), None)
            .unwrap()
            .unwrap();
        let err = g.check(&[agent("gfx90a")]).unwrap_err();
        assert_eq!(err.exit_code(), 80);
        assert!(err.to_string().contains("NOT_A_COUNTER"), "{err}");
        let err = g.check(&[agent("gfx1100")]).unwrap_err();
        assert_eq!(err.exit_code(), 80);
        assert!(err.to_string().contains("gfx1100"), "{err}");
    }
}
