//! Hardware counters on the command line, as rocprofv3 takes them: the groups of `--pmc` and
//! `-i FILE` ([`groups`], [`input`]), checked against every GPU agent's counters and per-pass
//! limits before the application starts and handed to the tool as `KREPLAY_PMC_GROUPS`; how
//! the runtime would collect them ([`collection`]); the `-L` / `info --pmc` listing and
//! `info --pmc-check` ([`listing`]). The counter facts themselves (names, blocks, events,
//! limits, the `pmc:` grammar) come from the `amdgpu-counters` catalog.

pub mod agent;
pub mod collection;
pub mod groups;
pub mod input;
pub mod listing;
