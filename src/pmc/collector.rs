//! The counter groups of each agent as packet sets (built once per (agent, group), at the first
//! pass on the agent), attached for one pass each and read at PASS EXIT.
//!
//! Values are never summed across passes: each pass's packets start, read and stop the
//! counters around that pass's dispatch alone, so a counter placed in several groups reads its
//! own value in each of them. Derived metrics are evaluated from the inputs of the same pass;
//! only with `KREPLAY_PMC_CROSS_PASS=1` may a derived metric take an input another group
//! collects, evaluated once the dispatch's passes are done and labelled `cross_pass`.

use super::library::{Event, Library, LibraryAgent, PacketSet};
use super::request::PmcRequest;
use crate::abi::kreplay_packet_position_t;
use crate::runtime::Runtime;
use crate::sync::{Arc, Mutex};
use amdgpu_counters::{Block, Counter, Derived, GroupError, Limits, Reduction, Target, group};
use hsa_abi::ffi::{self, hsa_agent_t};
use kreplay_records::CounterValue;
use std::collections::HashMap;

/// The values one pass read: every programmed counter's instances by name.
pub type PassValues = HashMap<&'static str, Vec<f64>>;

/// What one pass collected.
#[derive(Clone, Debug, Default)]
pub struct PassCounters {
    /// The group.
    pub group: u64,
    /// The requested counters and derived metrics of the group, in request order.
    pub values: Vec<CounterValue>,
    /// Every counter the pass programmed (derived metrics' inputs included).
    pub raw: PassValues,
}

/// Counter collection for the process: the library, the groups, each agent's packet sets.
pub struct Collector {
    library: Library,
    request: PmcRequest,
    agents: Mutex<HashMap<u64, Arc<Result<AgentGroups, String>>>>,
}

/// One agent's groups.
pub struct AgentGroups {
    target: Target,
    constants: [(&'static str, f64); 4],
    groups: Vec<BuiltGroup>,
}

/// One group as packets on one agent.
struct BuiltGroup {
    /// The names requested, in order.
    requested: Vec<String>,
    /// The counters its pass programs.
    programmed: Vec<&'static Counter>,
    /// Derived metrics evaluated from this pass alone.
    derived: Vec<&'static Derived>,
    /// Derived metrics with an input only another group collects (`KREPLAY_PMC_CROSS_PASS=1`).
    cross: Vec<&'static Derived>,
    set: PacketSet,
}

impl Collector {
    /// Loads aqlprofile for `request`; the error says why counters cannot be collected.
    pub fn load(request: PmcRequest) -> Result<Self, String> {
        let rt = Runtime::get().ok_or("the HSA runtime is not active")?;
        Ok(Self {
            library: Library::load(rt)?,
            request,
            agents: Mutex::new(HashMap::new()),
        })
    }

    /// How counters are read (for messages).
    pub fn describe(&self) -> &'static str {
        self.library.describe()
    }

    /// Groups configured (G).
    pub fn group_count(&self) -> u64 {
        self.request.groups.len() as u64
    }

    /// The group pass `pass` collects.
    pub fn group_of(&self, pass: u32) -> u64 {
        u64::from(pass) % self.group_count().max(1)
    }

    /// The agent's groups, built at the first call for it. An error (a group over a block's
    /// limit on this agent, a counter the agent does not have, a library failure) is reported
    /// once on stderr and kept: nothing is collected on that agent.
    pub fn agent(&self, agent: u64) -> Arc<Result<AgentGroups, String>> {
        if let Some(a) = self.agents.lock().get(&agent) {
            return a.clone();
        }
        let built = Arc::new(self.build(agent));
        if let Err(e) = built.as_ref() {
            eprintln!("kreplay: no counters are collected on agent {agent:#x}: {e}");
        }
        self.agents.lock().entry(agent).or_insert(built).clone()
    }

    fn build(&self, agent: u64) -> Result<AgentGroups, String> {
        let rt = Runtime::get().ok_or("the HSA runtime is not active")?;
        let hsa = hsa_agent_t { handle: agent };
        let name = rt.agent_name(hsa);
        let target = Target::from_isa_name(&name)
            .ok_or_else(|| format!("its target {name} has no counter catalog"))?;
        let la = self.library.agent(rt, hsa)?;
        let mut groups = Vec::with_capacity(self.request.groups.len());
        for (g, names) in self.request.groups.iter().enumerate() {
            let built = self
                .build_group(rt, &la, target, g)
                .map_err(|e| format!("group {g} (pmc: {}): {e}", names.join(" ")))?;
            groups.push(built);
        }
        let u = |attr: u32| rt.agent_u32(hsa, attr).map_or(0.0, f64::from);
        let cu = u(ffi::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT);
        let simd = u(ffi::HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU);
        Ok(AgentGroups {
            target,
            constants: [
                ("CU_NUM", cu),
                ("SE_NUM", u(ffi::HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES)),
                ("SIMD_NUM", cu * simd),
                ("MAX_WAVE_SIZE", u(ffi::HSA_AGENT_INFO_WAVEFRONT_SIZE)),
            ],
            groups,
        })
    }

    /// Checks group `g` on the agent and builds its packets.
    fn build_group(
        &self,
        rt: Runtime,
        la: &LibraryAgent,
        target: Target,
        g: usize,
    ) -> Result<BuiltGroup, String> {
        let names = &self.request.groups[g];
        // Membership from the catalog; limits from the library (below), which knows this agent.
        let checked = group::check(target, names, Limits::Lifted).map_err(|e| e.to_string())?;
        let elsewhere = |c: &Counter| {
            self.request.cross_pass
                && !names.iter().any(|n| n == c.name)
                && self
                    .request
                    .groups
                    .iter()
                    .enumerate()
                    .any(|(o, other)| o != g && other.iter().any(|n| n == c.name))
        };
        let programmed: Vec<&'static Counter> = checked
            .counters
            .iter()
            .copied()
            .filter(|c| !elsewhere(c))
            .collect();
        let (derived, cross): (Vec<&'static Derived>, Vec<&'static Derived>) =
            checked.derived.iter().partition(|d| {
                d.expr
                    .names()
                    .iter()
                    .all(|n| programmed.iter().any(|c| c.name == *n))
            });
        let events = self.events(la, target, &programmed)?;
        let set = self.library.create(rt, la, &events)?;
        Ok(BuiltGroup {
            requested: checked.requested,
            programmed,
            derived,
            cross,
            set,
        })
    }

    /// The events of `counters` on every instance of their blocks, checked against the
    /// library: each event valid, each block within its per-pass limit.
    fn events(
        &self,
        la: &LibraryAgent,
        target: Target,
        counters: &[&'static Counter],
    ) -> Result<Vec<Event>, String> {
        let mut events = Vec::new();
        for block in Block::ALL {
            let of_block: Vec<&&Counter> = counters.iter().filter(|c| c.block == block).collect();
            let Some(first) = of_block.first() else {
                continue;
            };
            let probe = Event {
                block: block.id(),
                index: 0,
                id: first.event,
            };
            let limit = self
                .library
                .block_counters(la, probe)
                .unwrap_or(block.per_pass_limit());
            let count = of_block.len() as u32;
            if count > limit {
                let names: Vec<&str> = of_block.iter().map(|c| c.name).collect();
                return Err(GroupError::OverLimit {
                    block,
                    count,
                    limit,
                    names: names.join(", "),
                    target,
                }
                .to_string());
            }
            let instances = self.library.instances(la, block.id(), block.name());
            for c in of_block {
                for index in 0..instances {
                    let e = Event {
                        block: block.id(),
                        index,
                        id: c.event,
                    };
                    if !self.library.validate(la, e) {
                        return Err(format!(
                            "{} refuses counter {} (block {} instance {index}, event {}) on this agent",
                            self.library.describe(),
                            c.name,
                            block.name(),
                            c.event
                        ));
                    }
                    events.push(e);
                }
            }
        }
        Ok(events)
    }

    /// PASS ENTER of `pass` on `agent`: attaches the packets of group `pass mod G` for this
    /// pass only (start before the dispatch, read and stop after it). Returns the group.
    pub fn attach(&self, agent: u64, pass: u32) -> Result<u64, String> {
        let groups = self.agent(agent);
        let groups = groups.as_ref().as_ref().map_err(Clone::clone)?;
        let g = self.group_of(pass);
        let set = &groups.groups[g as usize].set;
        let attach = |p: &[[u8; 64]], at| {
            crate::replay::localized::attach(p, at)
                .map_err(|e| format!("attaching the counter packets of group {g}: {e}"))
        };
        attach(
            &[set.start],
            kreplay_packet_position_t::KREPLAY_PACKET_BEFORE_PASS,
        )?;
        attach(
            &[set.read, set.stop],
            kreplay_packet_position_t::KREPLAY_PACKET_AFTER_PASS,
        )?;
        Ok(g)
    }

    /// PASS EXIT of a pass that collected `g` on `agent`: its values.
    pub fn read(&self, agent: u64, g: u64) -> Result<PassCounters, String> {
        let groups = self.agent(agent);
        let groups = groups.as_ref().as_ref().map_err(Clone::clone)?;
        let built = &groups.groups[g as usize];
        let samples = self.library.read(&built.set)?;
        let mut raw: PassValues = HashMap::new();
        for c in &built.programmed {
            let instances = samples
                .iter()
                .filter(|(e, _)| e.block == c.block.id() && e.id == c.event)
                .map(|(_, v)| *v as f64)
                .collect();
            raw.insert(c.name, instances);
        }
        let values = built
            .requested
            .iter()
            .filter_map(|name| {
                if let Some(c) = built.programmed.iter().find(|c| c.name == name) {
                    return Some(counter_value(c, &raw[c.name]));
                }
                let d = built.derived.iter().find(|d| d.name == name)?;
                groups.derived_value(d, &|n| raw.get(n), false)
            })
            .collect();
        Ok(PassCounters {
            group: g,
            values,
            raw,
        })
    }

    /// Derived metrics that take inputs from several passes (`KREPLAY_PMC_CROSS_PASS=1`), once
    /// the dispatch's passes are done: for each, the group that asked for it and its value from
    /// the last pass that read each input. Empty when nothing crosses passes.
    pub fn cross_pass(&self, agent: u64, passes: &[PassCounters]) -> Vec<(u64, CounterValue)> {
        let groups = self.agent(agent);
        let Ok(groups) = groups.as_ref() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (g, built) in groups.groups.iter().enumerate() {
            for d in &built.cross {
                let lookup = |n: &str| passes.iter().rev().find_map(|p| p.raw.get(n));
                if let Some(v) = groups.derived_value(d, &lookup, true) {
                    out.push((g as u64, v));
                }
            }
        }
        out
    }
}

impl AgentGroups {
    /// A derived metric's value from the counters `lookup` finds; `None` when an input is
    /// missing or the value is not finite (a division by zero).
    fn derived_value<'a>(
        &self,
        d: &Derived,
        lookup: &dyn Fn(&str) -> Option<&'a Vec<f64>>,
        cross_pass: bool,
    ) -> Option<CounterValue> {
        let value = d.expr.evaluate(&|name, r| {
            if let Some((_, v)) = self.constants.iter().find(|(n, _)| *n == name) {
                return Some(*v);
            }
            lookup(name).map(|i| reduce(i, r))
        })?;
        value.is_finite().then(|| CounterValue {
            name: d.name.to_owned(),
            value,
            instances: Vec::new(),
            exactness: d.exactness(self.target).label().to_owned(),
            derived: true,
            cross_pass,
        })
    }
}

fn counter_value(c: &Counter, instances: &[f64]) -> CounterValue {
    CounterValue {
        name: c.name.to_owned(),
        value: instances.iter().sum(),
        instances: instances.to_vec(),
        exactness: c.exactness.label().to_owned(),
        derived: false,
        cross_pass: false,
    }
}

/// Reduces a counter's instances.
fn reduce(instances: &[f64], r: Reduction) -> f64 {
    let it = instances.iter().copied();
    match r {
        Reduction::Sum => it.sum(),
        Reduction::Max => it.fold(f64::NEG_INFINITY, f64::max),
        Reduction::Min => it.fold(f64::INFINITY, f64::min),
        Reduction::Avr => {
            if instances.is_empty() {
                f64::NAN
            } else {
                instances.iter().sum::<f64>() / instances.len() as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_reduce_as_the_expression_language_says() {
        let v = [1.0, 4.0, 2.0];
        assert_eq!(reduce(&v, Reduction::Sum), 7.0);
        assert_eq!(reduce(&v, Reduction::Max), 4.0);
        assert_eq!(reduce(&v, Reduction::Min), 1.0);
        assert_eq!(reduce(&v, Reduction::Avr), 7.0 / 3.0);
        assert!(reduce(&[], Reduction::Avr).is_nan());
    }

    #[test]
    fn a_counter_value_sums_its_instances_and_keeps_them() {
        let c = amdgpu_counters::find(Target::Gfx90a, "SQ_WAVES").unwrap();
        let v = counter_value(c, &[3.0, 5.0]);
        assert_eq!(v.value, 8.0);
        assert_eq!(v.instances, [3.0, 5.0]);
        assert!(!v.derived && !v.cross_pass);
        assert_eq!(v.exactness, c.exactness.label());
    }
}
