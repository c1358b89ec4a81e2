//! What an agent is to aqlprofile: its target (for the counter catalog) and the topology its
//! counters are reported over. v1 names agents by `hsa_agent_t` and asks the process's HSA
//! runtime; v2 registers them by topology.

use crate::error::Failure;
use amdgpu_counters::Target;
use hsa_abi::ffi::{
    HSA_AGENT_INFO_NAME, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
    HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES, HSA_STATUS_SUCCESS, hsa_agent_t, hsa_status_t,
};
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::{Mutex, OnceLock};
use vgpu::pmc::Topology;

/// A profiled agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Agent {
    pub target: Target,
    pub topology: Topology,
}

impl Agent {
    /// An agent from its GFX IP name and topology.
    pub fn new(gfxip: &str, xcc: u32, se: u32, cu: u32) -> Result<Agent, Failure> {
        let target = Target::from_isa_name(gfxip).ok_or_else(|| {
            Failure::error(format!(
                "agent `{gfxip}` has no counters here (the virtual GPUs count on gfx90a and gfx942)"
            ))
        })?;
        if se == 0 || cu == 0 {
            return Err(Failure::invalid(format!(
                "agent `{gfxip}` has {se} shader engines and {cu} compute units"
            )));
        }
        Ok(Agent {
            target,
            topology: Topology {
                xcc: xcc.max(1),
                shader_engines: se,
                compute_units: cu,
            },
        })
    }
}

type AgentGetInfo = unsafe extern "C" fn(hsa_agent_t, u32, *mut c_void) -> hsa_status_t;

/// The process's `hsa_agent_get_info` (the runtime that loaded this library).
fn agent_get_info() -> Option<AgentGetInfo> {
    static F: OnceLock<Option<AgentGetInfo>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: a symbol lookup in the global scope with a NUL-terminated name.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"hsa_agent_get_info".as_ptr()) };
        // SAFETY: `hsa_agent_get_info` has this signature in every HSA runtime.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, AgentGetInfo>(p) })
    })
}

fn query_u32(f: AgentGetInfo, agent: hsa_agent_t, attribute: u32) -> Option<u32> {
    let mut v = 0u32;
    // SAFETY: every attribute asked here is a `uint32_t`.
    let st = unsafe { f(agent, attribute, (&raw mut v).cast()) };
    (st == HSA_STATUS_SUCCESS).then_some(v)
}

/// The agent behind an `hsa_agent_t` (v1), asked of the HSA runtime once and remembered.
pub(crate) fn of_hsa(agent: hsa_agent_t) -> Result<Agent, Failure> {
    static SEEN: Mutex<Option<HashMap<u64, Agent>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(a) = seen.as_ref().and_then(|m| m.get(&agent.handle)) {
        return Ok(*a);
    }
    let f = agent_get_info()
        .ok_or_else(|| Failure::error("no HSA runtime is loaded in this process"))?;
    let mut name = [0 as c_char; 64];
    // SAFETY: HSA_AGENT_INFO_NAME writes at most 64 bytes.
    let st = unsafe { f(agent, HSA_AGENT_INFO_NAME, name.as_mut_ptr().cast()) };
    if st != HSA_STATUS_SUCCESS {
        return Err(Failure::invalid(format!(
            "agent {:#x} is not an agent of the HSA runtime",
            agent.handle
        )));
    }
    name[63] = 0;
    // SAFETY: NUL-terminated above.
    let gfxip = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let se = query_u32(f, agent, HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES).unwrap_or(0);
    let cu = query_u32(f, agent, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT).unwrap_or(0);
    // ROCm 5.2 does not know NUM_XCC: one XCC then.
    let xcc = query_u32(f, agent, hsa_abi::modern::HSA_AMD_AGENT_INFO_NUM_XCC).unwrap_or(1);
    let a = Agent::new(&gfxip, xcc, se, cu)?;
    seen.get_or_insert_with(HashMap::new)
        .insert(agent.handle, a);
    Ok(a)
}

static REGISTERED: Mutex<Vec<Agent>> = Mutex::new(Vec::new());

/// Registers a v2 agent; its handle is its index plus one.
pub(crate) fn register(a: Agent) -> u64 {
    let mut r = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = r.iter().position(|x| *x == a) {
        return i as u64 + 1;
    }
    r.push(a);
    r.len() as u64
}

/// A registered v2 agent.
pub(crate) fn registered(handle: u64) -> Result<Agent, Failure> {
    let r = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    handle
        .checked_sub(1)
        .and_then(|i| r.get(i as usize).copied())
        .ok_or_else(|| Failure::invalid(format!("agent handle {handle} was not registered")))
}
