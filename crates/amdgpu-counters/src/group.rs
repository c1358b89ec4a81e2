//! Counter groups: the `pmc:` lines users write (`rocprofv3 --pmc`, its text input, and
//! `KREPLAY_PMC_GROUPS`) and the check that one group fits one pass.

use crate::block::Block;
use crate::catalog::{self, Counter, Derived};
use crate::target::Target;
use thiserror::Error;

/// The characters rocprofv3 accepts between counter names, besides white space.
const SEPARATORS: &str = "!@#$%&(),*+-./;<>?{}^`~|";

/// Whether the per-block limits apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limits {
    /// As hardware: at most [`Block::per_pass_limit`] counters of a block per pass.
    Hardware,
    /// No limit (virtual GPUs with `VHSA_PMC_LIMITS=off`, for comparisons).
    Lifted,
}

/// Why a group cannot be collected in one pass.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum GroupError {
    /// A name that is neither a counter nor a derived metric of the target.
    #[error(
        "counter `{name}` is not offered on {target}: `kreplay info --pmc` lists each agent's counters"
    )]
    Unknown {
        /// The name.
        name: String,
        /// The agent's target.
        target: Target,
    },
    /// More counters of one block than one pass can collect.
    #[error(
        "the group needs {count} {block} counters ({names}) but one pass collects at most {limit} of block {block} on {target}: split them over several --pmc groups"
    )]
    OverLimit {
        /// The block.
        block: Block,
        /// Counters the group needs from it.
        count: u32,
        /// The per-pass limit.
        limit: u32,
        /// The counters, comma-separated.
        names: String,
        /// The agent's target.
        target: Target,
    },
    /// A group with no counter in it.
    #[error("an empty counter group: give at least one counter after --pmc or pmc:")]
    Empty,
}

/// A group checked against one target: the hardware counters one pass programs and the
/// derived metrics evaluated from them.
#[derive(Clone, Debug)]
pub struct Group {
    /// The target it was checked for.
    pub target: Target,
    /// The names as requested, in order, each once.
    pub requested: Vec<String>,
    /// The hardware counters to program: requested ones and derived metrics' inputs, each once.
    pub counters: Vec<&'static Counter>,
    /// The derived metrics requested.
    pub derived: Vec<&'static Derived>,
}

impl Group {
    /// The `(block, event)` pairs one pass programs.
    pub fn events(&self) -> Vec<(Block, u32)> {
        self.counters.iter().map(|c| (c.block, c.event)).collect()
    }
}

/// The counter names of one `--pmc` argument or `pmc:` line, each once, in order.
pub fn parse_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let pieces = text.split(|c: char| c.is_whitespace() || SEPARATORS.contains(c));
    for name in pieces.filter(|p| !p.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// The groups of a text of `pmc:` lines (one group per line that holds `pmc:`; `#` starts a
/// comment; other lines are ignored), as rocprofv3's text input and `KREPLAY_PMC_GROUPS`.
pub fn parse_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or(""))
        .filter_map(|line| line.split_once("pmc:").map(|(_, rest)| parse_names(rest)))
        .filter(|names| !names.is_empty())
        .collect()
}

/// The `KREPLAY_PMC_GROUPS` text of some groups: one `pmc:` line each.
pub fn to_lines(groups: &[Vec<String>]) -> String {
    groups
        .iter()
        .map(|g| format!("pmc: {}\n", g.join(" ")))
        .collect()
}

/// Checks that `names` can be collected in one pass on `target`.
pub fn check(target: Target, names: &[String], limits: Limits) -> Result<Group, GroupError> {
    if names.is_empty() {
        return Err(GroupError::Empty);
    }
    let mut group = Group {
        target,
        requested: Vec::new(),
        counters: Vec::new(),
        derived: Vec::new(),
    };
    for name in names {
        if group.requested.contains(name) {
            continue;
        }
        group.requested.push(name.clone());
        add_name(&mut group, name)?;
    }
    if limits == Limits::Hardware {
        check_limits(&group)?;
    }
    Ok(group)
}

fn add_name(group: &mut Group, name: &str) -> Result<(), GroupError> {
    let target = group.target;
    let unknown = || GroupError::Unknown {
        name: name.to_string(),
        target,
    };
    if let Some(c) = catalog::find(target, name) {
        add_counter(group, c);
        return Ok(());
    }
    let d = catalog::find_derived(target, name).ok_or_else(unknown)?;
    for input in d.expr.names() {
        add_counter(group, catalog::find(target, input).ok_or_else(unknown)?);
    }
    if !group.derived.iter().any(|x| x.name == d.name) {
        group.derived.push(d);
    }
    Ok(())
}

fn add_counter(group: &mut Group, counter: &'static Counter) {
    if !group.counters.iter().any(|c| c.name == counter.name) {
        group.counters.push(counter);
    }
}

fn check_limits(group: &Group) -> Result<(), GroupError> {
    for block in Block::ALL {
        let of_block: Vec<&str> = group
            .counters
            .iter()
            .filter(|c| c.block == block)
            .map(|c| c.name)
            .collect();
        let count = of_block.len() as u32;
        if count > block.per_pass_limit() {
            return Err(GroupError::OverLimit {
                block,
                count,
                limit: block.per_pass_limit(),
                names: of_block.join(", "),
                target: group.target,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        parse_names(text)
    }

    #[test]
    fn names_split_on_spaces_commas_and_rocprofv3_separators() {
        assert_eq!(
            names("SQ_WAVES, SQ_INSTS_VALU;GRBM_COUNT  SQ_WAVES"),
            ["SQ_WAVES", "SQ_INSTS_VALU", "GRBM_COUNT"]
        );
    }

    #[test]
    fn pmc_lines_are_groups_and_comments_are_dropped() {
        let text = "# two groups\npmc: SQ_WAVES SQ_INSTS_SALU\nnot a group\npmc: GRBM_COUNT # clocks\npmc:\n";
        assert_eq!(
            parse_lines(text),
            vec![names("SQ_WAVES SQ_INSTS_SALU"), names("GRBM_COUNT")]
        );
        assert_eq!(
            parse_lines(&to_lines(&parse_lines(text))),
            parse_lines(text)
        );
    }

    #[test]
    fn nine_sq_counters_are_refused_naming_the_block_and_limit() {
        let nine = names(
            "SQ_WAVES SQ_INSTS SQ_INSTS_VALU SQ_INSTS_SALU SQ_INSTS_SMEM SQ_INSTS_LDS SQ_INSTS_FLAT SQ_INSTS_BRANCH SQ_INSTS_VMEM",
        );
        let err = check(Target::Gfx90a, &nine, Limits::Hardware).unwrap_err();
        assert!(
            matches!(
                err,
                GroupError::OverLimit {
                    block: Block::Sq,
                    count: 9,
                    limit: 8,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("at most 8 of block SQ"), "{err}");
        assert_eq!(
            check(Target::Gfx90a, &nine, Limits::Lifted)
                .unwrap()
                .counters
                .len(),
            9
        );
        assert!(check(Target::Gfx90a, &nine[..8], Limits::Hardware).is_ok());
    }

    #[test]
    fn derived_metrics_bring_their_inputs_into_the_group() {
        let g = check(
            Target::Gfx90a,
            &names("VALUInsts SQ_WAVES"),
            Limits::Hardware,
        )
        .unwrap();
        let programmed: Vec<&str> = g.counters.iter().map(|c| c.name).collect();
        assert_eq!(programmed, ["SQ_INSTS_VALU", "SQ_WAVES"]);
        assert_eq!(g.derived.len(), 1);
        assert_eq!(g.events(), vec![(Block::Sq, 26), (Block::Sq, 4)]);
    }

    #[test]
    fn unknown_names_and_empty_groups_are_refused() {
        let err = check(Target::Gfx942, &names("TCC_HIT"), Limits::Hardware).unwrap_err();
        assert_eq!(
            err,
            GroupError::Unknown {
                name: "TCC_HIT".into(),
                target: Target::Gfx942
            }
        );
        assert!(err.to_string().contains("kreplay info --pmc"));
        assert_eq!(
            check(Target::Gfx942, &[], Limits::Hardware).unwrap_err(),
            GroupError::Empty
        );
    }
}
