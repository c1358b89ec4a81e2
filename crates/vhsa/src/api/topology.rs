//! Entries of the system, agents, regions, memory pools and ISAs (`hsa_system_get_info`,
//! `hsa_agent_get_info`, the iterations, `hsa_amd_memory_pool_get_info`, ...).

use super::system::extension_mask;
use crate::boundary::{InfoValue, c_str, status_call, write_info, write_out};
use crate::error::{Error, Result};
use crate::open_state::ensure_open;
use crate::topology::{
    Agent, AgentKind, GRANULE, PoolKind, QUEUE_MAX_SIZE, QUEUE_MIN_SIZE, agent, isa_by_name,
    isa_name, now_ns, pool, system,
};
use hsa_abi::ffi::*;
use hsa_abi::{AmdExtTable, CoreApiTable};
use std::ffi::c_void;

fn system_info(attribute: hsa_system_info_t, value: *mut c_void) -> Result<()> {
    ensure_open()?;
    let v = match attribute {
        HSA_SYSTEM_INFO_VERSION_MAJOR => InfoValue::U16(1),
        HSA_SYSTEM_INFO_VERSION_MINOR => InfoValue::U16(1),
        HSA_SYSTEM_INFO_TIMESTAMP => InfoValue::U64(now_ns()),
        HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY => InfoValue::U64(1_000_000_000),
        HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT => InfoValue::U64(u64::MAX),
        HSA_SYSTEM_INFO_ENDIANNESS => InfoValue::U32(HSA_ENDIANNESS_LITTLE),
        HSA_SYSTEM_INFO_MACHINE_MODEL => InfoValue::U32(HSA_MACHINE_MODEL_LARGE),
        HSA_SYSTEM_INFO_EXTENSIONS => InfoValue::Bytes(extension_mask(None)),
        // HSA_AMD_SYSTEM_INFO_BUILD_VERSION (char*), SVM_SUPPORTED, SVM_ACCESSIBLE_BY_DEFAULT,
        // MWAITX_ENABLED, DMABUF_SUPPORTED, VIRTUAL_MEM_API_SUPPORTED, XNACK_ENABLED.
        0x200 => return write_out(value.cast::<*const i8>(), c"vhsa".as_ptr(), "value is NULL"),
        0x201..=0x206 => InfoValue::Bool(false),
        _ => return Err(Error::InvalidArgument("unknown system attribute")),
    };
    write_info(value, v)
}

fn agent_info(handle: u64, attribute: hsa_agent_info_t, value: *mut c_void) -> Result<()> {
    ensure_open()?;
    let a = agent(handle)?;
    let gpu = a.kind == AgentKind::Gpu;
    let m = a.model;
    let cpus = system().cpu_cores;
    if let Some(words) = crate::image::agent_attribute(a, attribute) {
        let bytes = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        return write_info(value, InfoValue::Bytes(bytes));
    }
    let v = match attribute {
        HSA_AGENT_INFO_NAME => InfoValue::Text(&a.name, 64),
        HSA_AGENT_INFO_VENDOR_NAME => InfoValue::Text(if gpu { "AMD" } else { "CPU" }, 64),
        HSA_AGENT_INFO_FEATURE => InfoValue::U32(if gpu {
            HSA_AGENT_FEATURE_KERNEL_DISPATCH
        } else {
            0
        }),
        HSA_AGENT_INFO_MACHINE_MODEL => InfoValue::U32(HSA_MACHINE_MODEL_LARGE),
        HSA_AGENT_INFO_PROFILE => InfoValue::U32(if gpu {
            HSA_PROFILE_BASE
        } else {
            HSA_PROFILE_FULL
        }),
        HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE => {
            InfoValue::U32(HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
        }
        HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
            InfoValue::U32(HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
        }
        HSA_AGENT_INFO_FAST_F16_OPERATION => InfoValue::Bool(gpu),
        HSA_AGENT_INFO_WAVEFRONT_SIZE => InfoValue::U32(if gpu { 64 } else { 0 }),
        HSA_AGENT_INFO_WORKGROUP_MAX_DIM => {
            let d: u16 = if gpu { 1024 } else { 0 };
            InfoValue::Bytes([d, d, d].iter().flat_map(|x| x.to_ne_bytes()).collect())
        }
        HSA_AGENT_INFO_WORKGROUP_MAX_SIZE => InfoValue::U32(if gpu { 1024 } else { 0 }),
        HSA_AGENT_INFO_GRID_MAX_DIM => {
            let d: u32 = if gpu { u32::MAX } else { 0 };
            InfoValue::Bytes([d, d, d].iter().flat_map(|x| x.to_ne_bytes()).collect())
        }
        HSA_AGENT_INFO_GRID_MAX_SIZE => InfoValue::U32(if gpu { u32::MAX } else { 0 }),
        HSA_AGENT_INFO_FBARRIER_MAX_SIZE => InfoValue::U32(if gpu { 32 } else { 0 }),
        HSA_AGENT_INFO_QUEUES_MAX => InfoValue::U32(if gpu { 128 } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MIN_SIZE => InfoValue::U32(if gpu { QUEUE_MIN_SIZE } else { 0 }),
        HSA_AGENT_INFO_QUEUE_MAX_SIZE => InfoValue::U32(if gpu { QUEUE_MAX_SIZE } else { 0 }),
        HSA_AGENT_INFO_QUEUE_TYPE => InfoValue::U32(HSA_QUEUE_TYPE_MULTI),
        HSA_AGENT_INFO_NODE => InfoValue::U32(a.node),
        HSA_AGENT_INFO_DEVICE => InfoValue::U32(if gpu {
            HSA_DEVICE_TYPE_GPU
        } else {
            HSA_DEVICE_TYPE_CPU
        }),
        HSA_AGENT_INFO_CACHE_SIZE => {
            let c: [u32; 4] = if gpu {
                [16 << 10, 4 << 20, 256 << 20, 0]
            } else {
                [32 << 10, 1 << 20, 32 << 20, 0]
            };
            InfoValue::Bytes(c.iter().flat_map(|x| x.to_ne_bytes()).collect())
        }
        HSA_AGENT_INFO_ISA => InfoValue::U64(
            a.isa_name
                .as_deref()
                .and_then(isa_by_name)
                .map_or(0, |i| i.handle),
        ),
        HSA_AGENT_INFO_EXTENSIONS => InfoValue::Bytes(extension_mask(Some(a))),
        HSA_AGENT_INFO_VERSION_MAJOR => InfoValue::U16(1),
        HSA_AGENT_INFO_VERSION_MINOR => InfoValue::U16(1),
        HSA_AMD_AGENT_INFO_CHIP_ID => InfoValue::U32(m.map_or(0, |m| m.chip_id)),
        HSA_AMD_AGENT_INFO_CACHELINE_SIZE => InfoValue::U32(if gpu { 128 } else { 64 }),
        HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => {
            InfoValue::U32(m.map_or(cpus, |m| m.compute_units))
        }
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => {
            InfoValue::U32(m.map_or(3000, |m| m.max_clock_mhz))
        }
        HSA_AMD_AGENT_INFO_DRIVER_NODE_ID => InfoValue::U32(a.node),
        HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => InfoValue::U32(if gpu { 4 } else { 0 }),
        HSA_AMD_AGENT_INFO_BDFID => InfoValue::U32(if gpu { a.node << 8 } else { 0 }),
        HSA_AMD_AGENT_INFO_MEMORY_WIDTH => InfoValue::U32(if gpu { 8192 } else { 0 }),
        HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY => InfoValue::U32(if gpu { 1300 } else { 0 }),
        HSA_AMD_AGENT_INFO_PRODUCT_NAME => {
            InfoValue::Text(m.map_or("Virtual CPU", |m| m.product), 64)
        }
        HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU => InfoValue::U32(m.map_or(0, |m| m.max_waves_per_cu)),
        HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU => InfoValue::U32(m.map_or(0, |m| m.simds_per_cu)),
        HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES => InfoValue::U32(m.map_or(0, |m| m.shader_engines)),
        HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE => InfoValue::U32(if gpu { 1 } else { 0 }),
        HSA_AMD_AGENT_INFO_HDP_FLUSH => InfoValue::Bytes(vec![0; 16]),
        HSA_AMD_AGENT_INFO_DOMAIN => InfoValue::U32(0),
        HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES => InfoValue::Bool(gpu),
        HSA_AMD_AGENT_INFO_UUID => return write_info(value, InfoValue::Text(&a.uuid(), 24)),
        HSA_AMD_AGENT_INFO_ASIC_REVISION => InfoValue::U32(0),
        HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS => InfoValue::Bool(true),
        HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT => {
            InfoValue::U32(m.map_or(0, |m| m.compute_units))
        }
        // Newer attributes: MEMORY_AVAIL, TIMESTAMP_FREQUENCY, ASIC_FAMILY_ID, UCODE_VERSION,
        // SDMA_UCODE_VERSION, NUM_SDMA_ENG, NUM_SDMA_XGMI_ENG.
        0xA015 => InfoValue::U64(m.map_or(0, |m| m.memory_bytes)),
        0xA016 => InfoValue::U64(1_000_000_000),
        0xA01A => InfoValue::U32(if gpu { 2 } else { 0 }),
        // IOMMU_SUPPORT (and the three above), NUM_XCC, DRIVER_UID.
        0xA017..=0xA019 | 0xA01B | 0xA110 => InfoValue::U32(0),
        hsa_abi::modern::HSA_AMD_AGENT_INFO_NUM_XCC => InfoValue::U32(m.map_or(0, |m| m.xcc)),
        0xA112 => InfoValue::U32(a.node),
        _ => return Err(Error::InvalidArgument("unknown agent attribute")),
    };
    write_info(value, v)
}

unsafe extern "C" fn hsa_system_get_info_impl(
    attribute: hsa_system_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_system_get_info", || system_info(attribute, value))
}

unsafe extern "C" fn hsa_agent_get_info_impl(
    agent: hsa_agent_t,
    attribute: hsa_agent_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_agent_get_info", || {
        agent_info(agent.handle, attribute, value)
    })
}

/// Calls a C iteration callback for each item; stops on a non-success status (returned as is).
fn iterate<T: Copy>(
    items: impl IntoIterator<Item = T>,
    mut f: impl FnMut(T) -> hsa_status_t,
) -> Result<()> {
    for item in items {
        match f(item) {
            HSA_STATUS_SUCCESS => {}
            s => return Err(Error::Status(s)),
        }
    }
    Ok(())
}

type AgentCallback = Option<unsafe extern "C" fn(hsa_agent_t, *mut c_void) -> hsa_status_t>;

unsafe extern "C" fn hsa_iterate_agents_impl(
    callback: AgentCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_iterate_agents", || {
        ensure_open()?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        // SAFETY: calling the application's callback with a valid agent and its own data.
        iterate(system().agents.iter().map(Agent::hsa), |a| unsafe {
            cb(a, data)
        })
    })
}

/// Pools visible from an agent through `hsa_amd_agent_iterate_memory_pools`.
fn agent_pools(a: &Agent) -> Vec<u64> {
    a.pools.clone()
}

/// Regions visible from an agent: its own, then (for a GPU) the system regions.
fn agent_regions(a: &Agent) -> Vec<u64> {
    let mut r = a.pools.clone();
    if a.kind == AgentKind::Gpu {
        r.extend(system().agents[0].pools.iter().copied());
    }
    r
}

type RegionCallback = Option<unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t>;
type PoolCallback =
    Option<unsafe extern "C" fn(hsa_amd_memory_pool_t, *mut c_void) -> hsa_status_t>;

unsafe extern "C" fn hsa_agent_iterate_regions_impl(
    agent_h: hsa_agent_t,
    callback: RegionCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_agent_iterate_regions", || {
        ensure_open()?;
        let a = agent(agent_h.handle)?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        // SAFETY: calling the application's callback with a valid region and its own data.
        iterate(agent_regions(a), |r| unsafe {
            cb(hsa_region_t { handle: r }, data)
        })
    })
}

unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools_impl(
    agent_h: hsa_agent_t,
    callback: PoolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_agent_iterate_memory_pools", || {
        ensure_open()?;
        let a = agent(agent_h.handle)?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        // SAFETY: calling the application's callback with a valid pool and its own data.
        iterate(agent_pools(a), |p| unsafe {
            cb(hsa_amd_memory_pool_t { handle: p }, data)
        })
    })
}

fn region_info(handle: u64, attribute: hsa_region_info_t, value: *mut c_void) -> Result<()> {
    ensure_open()?;
    let p = pool(handle).ok_or(Error::InvalidRegion(handle))?;
    let group = p.kind == PoolKind::Group;
    let v = match attribute {
        HSA_REGION_INFO_SEGMENT => InfoValue::U32(match p.kind {
            PoolKind::Kernarg => HSA_REGION_SEGMENT_KERNARG,
            PoolKind::Group => HSA_REGION_SEGMENT_GROUP,
            PoolKind::Device | PoolKind::DeviceFine | PoolKind::SystemFine => {
                HSA_REGION_SEGMENT_GLOBAL
            }
        }),
        HSA_REGION_INFO_GLOBAL_FLAGS => InfoValue::U32(p.region_flags()),
        HSA_REGION_INFO_SIZE => InfoValue::U64(p.size),
        HSA_REGION_INFO_ALLOC_MAX_SIZE => InfoValue::U64(if group { 0 } else { p.size }),
        HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => InfoValue::U32(0),
        HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED => InfoValue::Bool(!group),
        HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE | HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => {
            InfoValue::U64(if group { 0 } else { GRANULE as u64 })
        }
        HSA_AMD_REGION_INFO_HOST_ACCESSIBLE => {
            InfoValue::Bool(!p.is_device_memory() && p.kind != PoolKind::Group)
        }
        HSA_AMD_REGION_INFO_BASE => InfoValue::U64(0),
        HSA_AMD_REGION_INFO_BUS_WIDTH => {
            InfoValue::U32(if p.is_device_memory() { 8192 } else { 0 })
        }
        HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY => {
            InfoValue::U32(if p.is_device_memory() { 1300 } else { 0 })
        }
        _ => return Err(Error::InvalidArgument("unknown region attribute")),
    };
    write_info(value, v)
}

unsafe extern "C" fn hsa_region_get_info_impl(
    region: hsa_region_t,
    attribute: hsa_region_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_region_get_info", || {
        region_info(region.handle, attribute, value)
    })
}

fn pool_info(handle: u64, attribute: hsa_amd_memory_pool_info_t, value: *mut c_void) -> Result<()> {
    ensure_open()?;
    let p = pool(handle).ok_or(Error::InvalidPool(handle))?;
    let group = p.kind == PoolKind::Group;
    let granule = if group { 0 } else { GRANULE as u64 };
    let v = match attribute {
        HSA_AMD_MEMORY_POOL_INFO_SEGMENT => InfoValue::U32(if group {
            HSA_AMD_SEGMENT_GROUP
        } else {
            HSA_AMD_SEGMENT_GLOBAL
        }),
        HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => InfoValue::U32(p.global_flags()),
        HSA_AMD_MEMORY_POOL_INFO_SIZE => InfoValue::U64(p.size),
        HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => InfoValue::U64(if group { 0 } else { p.size }),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => InfoValue::Bool(!group),
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE
        | HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => InfoValue::U64(granule),
        HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => {
            InfoValue::Bool(!p.is_device_memory() && p.kind != PoolKind::Group)
        }
        // LOCATION (0 CPU, 1 GPU) and RUNTIME_ALLOC_REC_GRANULE.
        17 => InfoValue::U32(u32::from(p.is_device_memory() || p.kind == PoolKind::Group)),
        18 => InfoValue::U64(granule),
        _ => return Err(Error::InvalidArgument("unknown memory pool attribute")),
    };
    write_info(value, v)
}

unsafe extern "C" fn hsa_amd_memory_pool_get_info_impl(
    pool_h: hsa_amd_memory_pool_t,
    attribute: hsa_amd_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_memory_pool_get_info", || {
        pool_info(pool_h.handle, attribute, value)
    })
}

unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info_impl(
    agent_h: hsa_agent_t,
    pool_h: hsa_amd_memory_pool_t,
    attribute: hsa_amd_agent_memory_pool_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_agent_memory_pool_get_info", || {
        ensure_open()?;
        let a = agent(agent_h.handle)?;
        let p = pool(pool_h.handle).ok_or(Error::InvalidPool(pool_h.handle))?;
        let own = p.owner == a.handle;
        match attribute {
            HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS => {
                // As in the real runtime: an agent's own pools and, for CPUs, system memory are
                // accessible by default; a GPU needs hsa_amd_agents_allow_access for system
                // memory (kernarg included) and for another GPU's coarse-grained memory.
                // Group memory is the agent's own: never accessible from another agent.
                let access = if p.kind == PoolKind::Group && !own {
                    HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
                } else if own || (!p.is_device_memory() && a.kind == AgentKind::Cpu) {
                    HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
                } else {
                    HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
                };
                write_info(value, InfoValue::U32(access))
            }
            HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS => {
                write_info(value, InfoValue::U32(u32::from(!own)))
            }
            HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO => {
                if own {
                    // No link to itself: the structure is zero-filled.
                    return write_out(
                        value.cast::<hsa_amd_memory_pool_link_info_t>(),
                        hsa_amd_memory_pool_link_info_t::default(),
                        "value is NULL",
                    );
                }
                let link = hsa_amd_memory_pool_link_info_t {
                    min_latency: 1000,
                    max_latency: 2000,
                    min_bandwidth: 16_000,
                    max_bandwidth: 32_000,
                    atomic_support_32bit: true,
                    atomic_support_64bit: true,
                    coherent_support: true,
                    link_type: HSA_AMD_LINK_INFO_TYPE_PCIE,
                    numa_distance: 20,
                };
                write_out(
                    value.cast::<hsa_amd_memory_pool_link_info_t>(),
                    link,
                    "value is NULL",
                )
            }
            _ => Err(Error::InvalidArgument(
                "unknown agent memory pool attribute",
            )),
        }
    })
}

type IsaCallback = Option<unsafe extern "C" fn(hsa_isa_t, *mut c_void) -> hsa_status_t>;

unsafe extern "C" fn hsa_agent_iterate_isas_impl(
    agent_h: hsa_agent_t,
    callback: IsaCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_agent_iterate_isas", || {
        ensure_open()?;
        let a = agent(agent_h.handle)?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        let isas: Vec<hsa_isa_t> = a
            .isa_name
            .as_deref()
            .and_then(isa_by_name)
            .into_iter()
            .collect();
        // SAFETY: calling the application's callback with a valid ISA and its own data.
        iterate(isas, |i| unsafe { cb(i, data) })
    })
}

fn isa_info(isa: hsa_isa_t, attribute: hsa_isa_info_t, value: *mut c_void) -> Result<()> {
    ensure_open()?;
    let name = isa_name(isa)?;
    let v = match attribute {
        HSA_ISA_INFO_NAME_LENGTH => InfoValue::U32(name.len() as u32 + 1),
        HSA_ISA_INFO_NAME => InfoValue::Text(name, name.len() + 1),
        HSA_ISA_INFO_CALL_CONVENTION_COUNT => InfoValue::U32(1),
        HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE => InfoValue::U32(64),
        HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => InfoValue::U32(40),
        HSA_ISA_INFO_MACHINE_MODELS => InfoValue::Bytes(vec![0, 1]),
        HSA_ISA_INFO_PROFILES => InfoValue::Bytes(vec![1, 0]),
        HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES
        | HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => InfoValue::Bytes(vec![0, 0, 1]),
        HSA_ISA_INFO_FAST_F16_OPERATION => InfoValue::Bool(true),
        HSA_ISA_INFO_WORKGROUP_MAX_DIM => {
            InfoValue::Bytes([1024u16; 3].iter().flat_map(|x| x.to_ne_bytes()).collect())
        }
        HSA_ISA_INFO_WORKGROUP_MAX_SIZE => InfoValue::U32(1024),
        HSA_ISA_INFO_GRID_MAX_DIM => {
            InfoValue::Bytes([u32::MAX; 3].iter().flat_map(|x| x.to_ne_bytes()).collect())
        }
        HSA_ISA_INFO_GRID_MAX_SIZE => InfoValue::U64(u64::from(u32::MAX)),
        HSA_ISA_INFO_FBARRIER_MAX_SIZE => InfoValue::U32(32),
        _ => return Err(Error::InvalidArgument("unknown ISA attribute")),
    };
    write_info(value, v)
}

unsafe extern "C" fn hsa_isa_get_info_alt_impl(
    isa: hsa_isa_t,
    attribute: hsa_isa_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_isa_get_info_alt", || isa_info(isa, attribute, value))
}

unsafe extern "C" fn hsa_isa_get_info_impl(
    isa: hsa_isa_t,
    attribute: hsa_isa_info_t,
    index: u32,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_isa_get_info", || {
        if index != 0 {
            return Err(Error::Status(HSA_STATUS_ERROR_INVALID_INDEX));
        }
        isa_info(isa, attribute, value)
    })
}

unsafe extern "C" fn hsa_isa_from_name_impl(
    name: *const std::ffi::c_char,
    isa: *mut hsa_isa_t,
) -> hsa_status_t {
    status_call("hsa_isa_from_name", || {
        ensure_open()?;
        let n = c_str(name, "name is NULL")?.to_string_lossy();
        let found = isa_by_name(&n).ok_or(Error::Status(HSA_STATUS_ERROR_INVALID_ISA_NAME))?;
        write_out(isa, found, "isa is NULL")
    })
}

type CacheCallback = Option<unsafe extern "C" fn(hsa_cache_t, *mut c_void) -> hsa_status_t>;

unsafe extern "C" fn hsa_agent_iterate_caches_impl(
    agent_h: hsa_agent_t,
    callback: CacheCallback,
    _data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_agent_iterate_caches", || {
        ensure_open()?;
        agent(agent_h.handle)?;
        callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        Ok(())
    })
}

unsafe extern "C" fn hsa_agent_get_exception_policies_impl(
    agent_h: hsa_agent_t,
    _profile: hsa_profile_t,
    mask: *mut u16,
) -> hsa_status_t {
    status_call("hsa_agent_get_exception_policies", || {
        ensure_open()?;
        agent(agent_h.handle)?;
        write_out(mask, 0, "mask is NULL")
    })
}

/// Fills this module's slots.
pub(crate) fn install(core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    core.hsa_system_get_info_fn = Some(hsa_system_get_info_impl);
    core.hsa_iterate_agents_fn = Some(hsa_iterate_agents_impl);
    core.hsa_agent_get_info_fn = Some(hsa_agent_get_info_impl);
    core.hsa_agent_iterate_regions_fn = Some(hsa_agent_iterate_regions_impl);
    core.hsa_region_get_info_fn = Some(hsa_region_get_info_impl);
    core.hsa_agent_iterate_isas_fn = Some(hsa_agent_iterate_isas_impl);
    core.hsa_isa_get_info_alt_fn = Some(hsa_isa_get_info_alt_impl);
    core.hsa_isa_get_info_fn = Some(hsa_isa_get_info_impl);
    core.hsa_isa_from_name_fn = Some(hsa_isa_from_name_impl);
    core.hsa_agent_iterate_caches_fn = Some(hsa_agent_iterate_caches_impl);
    core.hsa_agent_get_exception_policies_fn = Some(hsa_agent_get_exception_policies_impl);
    amd.hsa_amd_agent_iterate_memory_pools_fn = Some(hsa_amd_agent_iterate_memory_pools_impl);
    amd.hsa_amd_memory_pool_get_info_fn = Some(hsa_amd_memory_pool_get_info_impl);
    amd.hsa_amd_agent_memory_pool_get_info_fn = Some(hsa_amd_agent_memory_pool_get_info_impl);
}
