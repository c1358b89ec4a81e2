//! The virtual system's nodes as the kernel driver describes them: node 0 is the CPU (with its
//! caches and system memory), nodes 1.. are the GPUs named by `VKFD_AGENTS` (default `gfx90a`;
//! the models are vgpu's, the ones vhsa reports for `VHSA_AGENTS`).
//!
//! A GPU node has the banks ROCR turns into pools and apertures: its frame buffer (the
//! coarse-grained device pool; `VKFD_DEVICE_MEMORY_MB` overrides the model's size), the LDS
//! aperture (64 KiB per workgroup at `1 << 48`, the GROUP pool) and the scratch aperture
//! (`2 << 48`), the same apertures the emulator uses. It has L1 and L2 caches, 64-bit AQL
//! doorbells, SRAM ECC, [`GWS_ENTRIES`] GWS entries (so ROCR offers cooperative queues) and one
//! PCIe link to the CPU plus an XGMI link to every other GPU. ROCR 5.2 knows gfx908 and gfx90a;
//! a node of a target it does not know (gfx942) is skipped by ROCR, as on real hardware.
//!
//! The topology is built by `hsaKmtAcquireSystemProperties` and dropped by
//! `hsaKmtReleaseSystemProperties` (ROCR releases before acquiring).

use crate::error::{Error, Result};
use crate::ffi::*;
use parking_lot::RwLock;
use std::sync::Arc;
use vgpu::model::GpuModel;

/// Base of the LDS (group) aperture.
pub(crate) const LDS_APERTURE: u64 = 1 << 48;
/// Base of the scratch (private) aperture.
pub(crate) const SCRATCH_APERTURE: u64 = 2 << 48;
/// Size of each aperture.
const APERTURE_BYTES: u64 = 4 << 30;
/// LDS bytes per workgroup.
const LDS_BYTES: u64 = 64 << 10;
/// Global wave sync entries of a GPU node (the driver reports 64 on gfx9 parts).
pub(crate) const GWS_ENTRIES: u8 = 64;

/// A node of the topology.
#[derive(Clone, Copy)]
pub(crate) enum Node {
    /// The host processor: its core count.
    Cpu { cores: u32 },
    /// A GPU of a model; `index` counts GPUs from 0.
    Gpu {
        model: &'static GpuModel,
        index: u32,
    },
}

/// The whole system.
pub(crate) struct Topology {
    pub(crate) nodes: Vec<Node>,
}

static TOPOLOGY: RwLock<Option<Arc<Topology>>> = RwLock::new(None);

/// The GPU models named by `VKFD_AGENTS` (default `gfx90a`).
fn gpu_models() -> Vec<&'static GpuModel> {
    let list = std::env::var("VKFD_AGENTS").ok();
    let default = vgpu::model::by_target("gfx90a").expect("the gfx90a model exists");
    vgpu::model::parse_target_list(list.as_deref(), default, "vkfd: VKFD_AGENTS")
}

fn build() -> Topology {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut nodes = vec![Node::Cpu { cores }];
    for (i, model) in gpu_models().into_iter().enumerate() {
        nodes.push(Node::Gpu {
            model,
            index: i as u32,
        });
    }
    Topology { nodes }
}

/// Builds the topology (again) and returns it.
pub(crate) fn acquire() -> Arc<Topology> {
    let t = Arc::new(build());
    *TOPOLOGY.write() = Some(t.clone());
    t
}

/// Drops the topology.
pub(crate) fn release() {
    *TOPOLOGY.write() = None;
}

/// The acquired topology, or one built now (some callers query before acquiring).
pub(crate) fn current() -> Arc<Topology> {
    if let Some(t) = TOPOLOGY.read().clone() {
        return t;
    }
    acquire()
}

/// A node by id.
pub(crate) fn node(id: u32) -> Result<Node> {
    current()
        .nodes
        .get(id as usize)
        .copied()
        .ok_or(Error::InvalidNode(id))
}

/// The GPU model of a node, if it is a GPU.
pub(crate) fn gpu_model(id: u32) -> Option<&'static GpuModel> {
    match node(id).ok()? {
        Node::Gpu { model, .. } => Some(model),
        Node::Cpu { .. } => None,
    }
}

fn gpu_count(t: &Topology) -> u32 {
    t.nodes.len() as u32 - 1
}

fn utf16_name(out: &mut [u16; 64], name: &str) {
    for (o, c) in out.iter_mut().take(63).zip(name.encode_utf16()) {
        *o = c;
    }
}

fn host_memory_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    (pages.max(1) as u64) * (page.max(1) as u64)
}

fn device_memory_bytes(model: &GpuModel) -> u64 {
    std::env::var("VKFD_DEVICE_MEMORY_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&mb| mb > 0)
        .map_or(model.memory_bytes, |mb| mb << 20)
}

/// The host processor's name as `/proc/cpuinfo` gives it.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "Virtual CPU".to_owned())
}

/// First compute id of a GPU node (CPU cores take ids 0..cores).
fn gpu_compute_id(index: u32) -> u32 {
    0x8000_0000 + index * 0x1000
}

/// `HsaNodeProperties` of a node.
pub(crate) fn node_properties(id: u32) -> Result<HsaNodeProperties> {
    let t = current();
    let node = *t.nodes.get(id as usize).ok_or(Error::InvalidNode(id))?;
    let mut p = HsaNodeProperties::default();
    match node {
        Node::Cpu { cores } => {
            p.NumCPUCores = cores;
            p.NumMemoryBanks = 1;
            p.NumCaches = CPU_CACHES.len() as u32;
            p.NumIOLinks = gpu_count(&t);
            p.CComputeIdLo = 0;
            p.MaxEngineClockMhzCCompute = 3000;
            utf16_name(&mut p.MarketingName, &cpu_name());
            let amd = b"CPU";
            p.AMDName[..amd.len()].copy_from_slice(amd);
        }
        Node::Gpu { model, index } => gpu_properties(&mut p, model, index, gpu_count(&t)),
    }
    Ok(p)
}

fn gpu_properties(p: &mut HsaNodeProperties, model: &GpuModel, index: u32, gpus: u32) {
    p.NumFComputeCores = model.compute_units * model.simds_per_cu;
    p.NumMemoryBanks = 3;
    p.NumCaches = GPU_CACHES.len() as u32;
    p.NumIOLinks = gpus;
    p.FComputeIdLo = gpu_compute_id(index);
    let mut capability = HSA_CAPABILITY__bindgen_ty_1::default();
    capability.set_DoorbellType(2);
    capability.set_SRAM_EDCSupport(1);
    capability.set_QueueSizePowerOfTwo(1);
    p.Capability.ui32 = capability;
    p.MaxWavesPerSIMD = model.max_waves_per_cu / model.simds_per_cu.max(1);
    p.LDSSizeInKB = (LDS_BYTES >> 10) as u32;
    p.WaveFrontSize = 64;
    p.NumShaderBanks = model.shader_engines;
    p.NumArrays = 1;
    p.NumCUPerArray = model.compute_units / model.shader_engines.max(1);
    p.NumSIMDPerCU = model.simds_per_cu;
    p.MaxSlotsScratchCU = 32;
    let (major, minor, stepping) = model.gfx_version;
    let mut engine = HSA_ENGINE_ID__bindgen_ty_1::default();
    engine.set_Major(major);
    engine.set_Minor(minor);
    engine.set_Stepping(stepping);
    engine.set_uCode(60);
    p.EngineId.ui32 = engine;
    p.VendorId = 0x1002;
    p.DeviceId = model.chip_id as u16;
    p.LocationId = (index + 1) << 8;
    p.LocalMemSize = device_memory_bytes(model);
    p.MaxEngineClockMhzFCompute = model.max_clock_mhz;
    p.MaxEngineClockMhzCCompute = 3000;
    p.DrmRenderMinor = 128 + index as i32;
    utf16_name(&mut p.MarketingName, model.product);
    let amd = model.target.as_bytes();
    p.AMDName[..amd.len()].copy_from_slice(amd);
    p.NumSdmaEngines = 2;
    p.NumSdmaQueuesPerEngine = 8;
    p.NumCpQueues = 24;
    p.NumGws = GWS_ENTRIES;
    p.UniqueID = 0x5646_4b44_0000_0000 | u64::from(index + 1);
    p.VGPRSizePerCU = 512 << 10;
    p.SGPRSizePerCU = 0x6400;
}

/// The memory banks of a node, in order.
pub(crate) fn memory_properties(id: u32) -> Result<Vec<HsaMemoryProperties>> {
    let bank = |heap: u32, size: u64, base: u64| {
        let mut m = HsaMemoryProperties {
            HeapType: heap,
            ..Default::default()
        };
        m.__bindgen_anon_1.SizeInBytes = size;
        m.Width = 4096;
        m.MemoryClockMax = 1600;
        m.VirtualBaseAddress = base;
        m
    };
    Ok(match node(id)? {
        Node::Cpu { .. } => vec![bank(HSA_HEAPTYPE_SYSTEM, host_memory_bytes(), 0)],
        Node::Gpu { model, .. } => vec![
            bank(
                HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC,
                device_memory_bytes(model),
                0,
            ),
            bank(HSA_HEAPTYPE_GPU_LDS, LDS_BYTES, LDS_APERTURE),
            bank(HSA_HEAPTYPE_GPU_SCRATCH, APERTURE_BYTES, SCRATCH_APERTURE),
        ],
    })
}

/// (level, bytes, line bytes, associativity, data, instruction).
type CacheFacts = (u32, u32, u32, u32, bool, bool);

const CPU_CACHES: &[CacheFacts] = &[
    (1, 32 << 10, 64, 8, true, false),
    (1, 32 << 10, 64, 8, false, true),
    (2, 512 << 10, 64, 8, true, true),
    (3, 32 << 20, 64, 16, true, true),
];

const GPU_CACHES: &[CacheFacts] = &[
    (1, 16 << 10, 64, 4, true, false),
    (2, 8 << 20, 128, 16, true, false),
];

/// The caches of a node (`processor_id` is the node's first compute id).
pub(crate) fn cache_properties(id: u32, processor_id: u32) -> Result<Vec<HsaCacheProperties>> {
    let (facts, cpu) = match node(id)? {
        Node::Cpu { .. } => (CPU_CACHES, true),
        Node::Gpu { .. } => (GPU_CACHES, false),
    };
    Ok(facts
        .iter()
        .map(|&(level, size, line, ways, data, instruction)| {
            let mut c = HsaCacheProperties {
                ProcessorIdLow: processor_id,
                CacheLevel: level,
                CacheSize: size >> 10,
                CacheLineSize: line,
                CacheLinesPerTag: 1,
                CacheAssociativity: ways,
                CacheLatency: 1,
                ..Default::default()
            };
            c.SiblingMap[0] = 1;
            let mut kind = HsaCacheType__bindgen_ty_1::default();
            kind.set_Data(u32::from(data));
            kind.set_Instruction(u32::from(instruction));
            kind.set_CPU(u32::from(cpu));
            kind.set_HSACU(u32::from(!cpu));
            c.CacheType.ui32 = kind;
            c
        })
        .collect())
}

/// The IO links of a node: CPU to every GPU (PCIe); GPU to the CPU (PCIe) and to every other
/// GPU (XGMI).
pub(crate) fn io_links(id: u32) -> Result<Vec<HsaIoLinkProperties>> {
    let t = current();
    if id as usize >= t.nodes.len() {
        return Err(Error::InvalidNode(id));
    }
    let link = |to: u32, kind: u32, weight: u32| HsaIoLinkProperties {
        IoLinkType: kind,
        VersionMajor: 1,
        NodeFrom: id,
        NodeTo: to,
        Weight: weight,
        MinimumLatency: 1,
        MaximumLatency: 1,
        MinimumBandwidth: 16_000,
        MaximumBandwidth: 32_000,
        RecTransferSize: 64,
        ..Default::default()
    };
    Ok((0..t.nodes.len() as u32)
        .filter(|&to| to != id)
        .filter(|&to| id != 0 || to != 0)
        .map(|to| {
            if id == 0 || to == 0 {
                link(to, HSA_IOLINKTYPE_PCIEXPRESS, 20)
            } else {
                link(to, HSA_IOLINK_TYPE_XGMI, 15)
            }
        })
        .collect())
}
