//! The system's agents, regions, memory pools and ISAs, built once from `VHSA_AGENTS`.
//!
//! `VHSA_AGENTS` is a comma-separated list of GPU targets (`gfx942,gfx90a`); the default is one
//! `gfx942`. `ROCR_VISIBLE_DEVICES` then selects and orders them as ROCR does
//! ([`crate::visible_devices`]); a GPU keeps its node number (its place in `VHSA_AGENTS`, from 1)
//! and so its UUID. The system always has one CPU agent first. Each GPU has a coarse-grained
//! device pool, a fine-grained device pool (the same memory, as ROCR exposes VRAM fine-grained in an
//! XGMI hive or with `HSA_FORCE_FINE_GRAIN_PCIE=1`) and a GROUP pool (64 KiB, not allocatable, as
//! ROCR reports the LDS); the CPU has a fine-grained system pool and a kernarg (`KERNARG_INIT`)
//! system pool.
//! Regions (the legacy memory API) are the same objects as pools; a GPU lists its own region
//! followed by the system regions.
//!
//! Every pool is host memory, so no pool reports more than the host can back for the process
//! (`MemTotal` and the memory cgroup's limits, [`crate::host_backing`]): a device pool's size is
//! the model's memory size or that, whichever is smaller, and so is the system pools' 64 GiB.
//! `VHSA_DEVICE_MEMORY_MB` (read once) sets the size of every device pool in MiB instead;
//! allocations beyond a pool's size fail with `OUT_OF_RESOURCES`.
//!
//! For the loader: [`agent`] looks an agent up by handle ([`Agent::kind`], [`Agent::isa_name`]).

use crate::error::{Error, Result};
use hsa_abi::ffi::*;
use std::sync::OnceLock;

const AGENT_BASE: u64 = 0x5A00_0000_0000;
const POOL_BASE: u64 = 0x5B00_0000_0000;
const ISA_BASE: u64 = 0x5C00_0000_0000;

/// Kind of agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AgentKind {
    Cpu,
    Gpu,
}

pub(crate) use vgpu::model::GpuModel;

/// An agent of the virtual system.
pub(crate) struct Agent {
    pub(crate) handle: u64,
    pub(crate) kind: AgentKind,
    /// `CPU` or the GPU target (`gfx942`).
    pub(crate) name: String,
    /// Full ISA name with the target features (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`),
    /// `None` for the CPU.
    pub(crate) isa_name: Option<String>,
    pub(crate) node: u32,
    pub(crate) model: Option<&'static GpuModel>,
    /// Pools owned by this agent, in iteration order.
    pub(crate) pools: Vec<u64>,
    /// The GPU's performance-counter file (gfx90a and gfx942 GPUs only).
    pub(crate) counters: Option<vgpu::pmc::CounterFile>,
}

impl Agent {
    /// The agent's kind.
    pub(crate) fn kind(&self) -> AgentKind {
        self.kind
    }
    /// The agent's full ISA name, `None` for the CPU.
    pub(crate) fn isa_name(&self) -> Option<&str> {
        self.isa_name.as_deref()
    }
    /// Work-items per wavefront (`HSA_AGENT_INFO_WAVEFRONT_SIZE`; 0 for the CPU).
    pub(crate) fn wavefront_size(&self) -> u32 {
        if self.kind == AgentKind::Gpu { 64 } else { 0 }
    }
    /// `HSA_AMD_AGENT_INFO_UUID`: `GPU-` and 16 hex digits made from the node for a GPU (stable
    /// whatever `ROCR_VISIBLE_DEVICES` shows), `CPU-XX` for the CPU.
    pub(crate) fn uuid(&self) -> String {
        match self.kind {
            AgentKind::Gpu => gpu_uuid(self.node),
            AgentKind::Cpu => "CPU-XX".into(),
        }
    }
    /// The handle as the C API sees it.
    pub(crate) fn hsa(&self) -> hsa_agent_t {
        hsa_agent_t {
            handle: self.handle,
        }
    }
}

/// What a pool is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    /// A GPU's coarse-grained memory.
    Device,
    /// A GPU's memory, fine-grained (coherent with the host and other agents during a kernel).
    DeviceFine,
    SystemFine,
    Kernarg,
    /// The agent's group (LDS) memory: reported, not allocatable.
    Group,
}

/// A memory pool (and legacy region) of the virtual system.
pub(crate) struct Pool {
    pub(crate) kind: PoolKind,
    pub(crate) owner: u64,
    pub(crate) size: u64,
}

impl Pool {
    /// `hsa_amd_memory_pool_global_flag_t` bits.
    pub(crate) fn global_flags(&self) -> u32 {
        match self.kind {
            PoolKind::Device => HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
            PoolKind::DeviceFine | PoolKind::SystemFine => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
            }
            PoolKind::Kernarg => {
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
                    | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
            }
            PoolKind::Group => 0,
        }
    }
    /// Whether the pool is a GPU's memory (coarse- or fine-grained): it counts against the
    /// GPU's memory size and is reached by the agents given access.
    pub(crate) fn is_device_memory(&self) -> bool {
        matches!(self.kind, PoolKind::Device | PoolKind::DeviceFine)
    }
    /// `hsa_region_global_flag_t` bits.
    pub(crate) fn region_flags(&self) -> u32 {
        match self.kind {
            PoolKind::Device => HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED,
            PoolKind::DeviceFine | PoolKind::SystemFine => HSA_REGION_GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::Kernarg => {
                HSA_REGION_GLOBAL_FLAG_KERNARG | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED
            }
            PoolKind::Group => 0,
        }
    }
}

/// Smallest queue size (packets) of a GPU agent.
pub(crate) const QUEUE_MIN_SIZE: u32 = 64;
/// Largest queue size (packets) of a GPU agent.
pub(crate) const QUEUE_MAX_SIZE: u32 = 1 << 17;

/// Group (LDS) memory per workgroup of a GPU agent, the size of its GROUP pool.
pub(crate) const GROUP_SEGMENT_BYTES: u64 = 64 << 10;

/// Allocation granule and alignment of every pool.
pub(crate) const GRANULE: usize = 4096;

/// The whole virtual system.
pub(crate) struct System {
    pub(crate) agents: Vec<Agent>,
    pub(crate) pools: Vec<Pool>,
    /// Distinct ISA names, indexed by ISA handle.
    isas: Vec<String>,
    /// Compute units of the CPU agent: the host's cores, counted once when the system is built.
    pub(crate) cpu_cores: u32,
}

static SYSTEM: OnceLock<System> = OnceLock::new();

/// Parses `VHSA_AGENTS`; unknown targets are reported and skipped.
fn gpu_targets() -> Vec<&'static GpuModel> {
    let list = std::env::var("VHSA_AGENTS").ok();
    vgpu::model::parse_target_list(
        list.as_deref(),
        &vgpu::model::GPU_MODELS[0],
        "vhsa: VHSA_AGENTS",
    )
}

/// The UUID string of the GPU on `node`.
fn gpu_uuid(node: u32) -> String {
    format!("GPU-{:016x}", 0x7668_7361_0000_0000u64 | u64::from(node))
}

/// `VHSA_DEVICE_MEMORY_MB`, when set to a positive integer.
fn device_memory_override() -> Option<u64> {
    let v = std::env::var("VHSA_DEVICE_MEMORY_MB").ok()?;
    match v.trim().parse::<u64>() {
        Ok(mb) if mb > 0 => Some(mb << 20),
        _ => {
            eprintln!(
                "vhsa: VHSA_DEVICE_MEMORY_MB=`{v}` is not a positive integer; the model's memory size is used"
            );
            None
        }
    }
}

/// `bytes`, or less when the host cannot back that much.
fn backed(bytes: u64) -> u64 {
    static BACKABLE: OnceLock<Option<u64>> = OnceLock::new();
    BACKABLE
        .get_or_init(crate::host_backing::backable_bytes)
        .map_or(bytes, |b| bytes.min(b))
}

fn build() -> System {
    let mut agents = Vec::new();
    let mut pools = Vec::new();
    let mut isas: Vec<String> = Vec::new();
    let cpu = AGENT_BASE;
    let fine = POOL_BASE;
    let kernarg = POOL_BASE + 1;
    pools.push(Pool {
        kind: PoolKind::SystemFine,
        owner: cpu,
        size: backed(64 << 30),
    });
    pools.push(Pool {
        kind: PoolKind::Kernarg,
        owner: cpu,
        size: backed(64 << 30),
    });
    agents.push(Agent {
        handle: cpu,
        kind: AgentKind::Cpu,
        name: "CPU".into(),
        isa_name: None,
        node: 0,
        model: None,
        pools: vec![fine, kernarg],
        counters: None,
    });
    let models = gpu_targets();
    let uuids: Vec<String> = (1..=models.len() as u32).map(gpu_uuid).collect();
    let visible = std::env::var(crate::visible_devices::VARIABLE).ok();
    let shown = crate::visible_devices::select(visible.as_deref(), &uuids);
    for (place, &i) in shown.iter().enumerate() {
        let model = models[i];
        let handle = AGENT_BASE + 1 + place as u64;
        let memory = device_memory_override().unwrap_or_else(|| backed(model.memory_bytes));
        let pool = POOL_BASE + pools.len() as u64;
        pools.push(Pool {
            kind: PoolKind::Device,
            owner: handle,
            size: memory,
        });
        let fine = POOL_BASE + pools.len() as u64;
        pools.push(Pool {
            kind: PoolKind::DeviceFine,
            owner: handle,
            size: memory,
        });
        let group = POOL_BASE + pools.len() as u64;
        pools.push(Pool {
            kind: PoolKind::Group,
            owner: handle,
            size: GROUP_SEGMENT_BYTES,
        });
        let isa = format!("amdgcn-amd-amdhsa--{}{}", model.target, model.features);
        if !isas.contains(&isa) {
            isas.push(isa.clone());
        }
        agents.push(Agent {
            handle,
            kind: AgentKind::Gpu,
            name: model.target.into(),
            isa_name: Some(isa),
            node: 1 + i as u32,
            model: Some(model),
            pools: vec![pool, fine, group],
            counters: vgpu::pmc::counter_file_for(model),
        });
    }
    let cpu_cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    System {
        agents,
        pools,
        isas,
        cpu_cores,
    }
}

/// The system, built on first use.
pub(crate) fn system() -> &'static System {
    SYSTEM.get_or_init(build)
}

/// Looks an agent up by handle.
pub(crate) fn agent(handle: u64) -> Result<&'static Agent> {
    handle
        .checked_sub(AGENT_BASE)
        .and_then(|i| system().agents.get(i as usize))
        .ok_or(Error::InvalidAgent(handle))
}

/// Looks a pool up by handle.
pub(crate) fn pool(handle: u64) -> Option<&'static Pool> {
    handle
        .checked_sub(POOL_BASE)
        .and_then(|i| system().pools.get(i as usize))
}

/// The ISA handle for a full ISA name.
pub(crate) fn isa_by_name(name: &str) -> Option<hsa_isa_t> {
    system()
        .isas
        .iter()
        .position(|n| n == name)
        .map(|i| hsa_isa_t {
            handle: ISA_BASE + i as u64,
        })
}

/// The full ISA name of an ISA handle.
pub(crate) fn isa_name(isa: hsa_isa_t) -> Result<&'static str> {
    isa.handle
        .checked_sub(ISA_BASE)
        .and_then(|i| system().isas.get(i as usize))
        .map(String::as_str)
        .ok_or(Error::InvalidIsa(isa.handle))
}

/// Current `CLOCK_MONOTONIC` time in nanoseconds (the device timestamp domain).
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
