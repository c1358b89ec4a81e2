//! `kreplay info`: the agents, ISAs and memory pools of the selected runtime, loaded in this
//! process (the command does nothing else).

use crate::counters::agent::GpuAgent;
use crate::counters::collection::{self, Collection};
use crate::counters::listing;
use crate::exit_status::CliError;
use crate::installation::{self, Runtime, RuntimeChoice};
use crate::report::summary::human_bytes;
use hsa_abi::ffi;
use std::ffi::{CStr, c_void};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

type Status = ffi::hsa_status_t;
type AgentCallback = unsafe extern "C" fn(ffi::hsa_agent_t, *mut c_void) -> Status;
type IsaCallback = unsafe extern "C" fn(ffi::hsa_isa_t, *mut c_void) -> Status;
type PoolCallback = unsafe extern "C" fn(ffi::hsa_amd_memory_pool_t, *mut c_void) -> Status;

/// One memory pool as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolInfo {
    /// Segment name (`GLOBAL`, `GROUP`, ...).
    pub segment: String,
    /// Global flags spelled out (`kernarg fine-grained`).
    pub flags: String,
    /// Size in bytes.
    pub size: u64,
    /// Whether the application may allocate from it.
    pub allocatable: bool,
}

/// One agent as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    /// Agent name (`gfx942`).
    pub name: String,
    /// Vendor name.
    pub vendor: String,
    /// `CPU`, `GPU` or `DSP`.
    pub device: String,
    /// ISA names.
    pub isas: Vec<String>,
    /// Memory pools.
    pub pools: Vec<PoolInfo>,
    /// Compute units (GPU agents), when the runtime answers.
    pub compute_units: Option<u32>,
    /// Shader engines (GPU agents), when the runtime answers.
    pub shader_engines: Option<u32>,
    /// Accelerator complex dies (XCCs), when the runtime answers.
    pub xcc: Option<u32>,
}

/// What `kreplay info` learns from a runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeReport {
    /// The agents, in the runtime's order.
    pub agents: Vec<AgentInfo>,
    /// The runtime hands out the AQL-profile (aqlprofile v1) extension table.
    pub aqlprofile_table: bool,
}

/// The runtime's entry points used here; optional ones may be absent.
struct Entries {
    init: unsafe extern "C" fn() -> Status,
    shut_down: unsafe extern "C" fn() -> Status,
    iterate_agents: unsafe extern "C" fn(AgentCallback, *mut c_void) -> Status,
    agent_get_info:
        unsafe extern "C" fn(ffi::hsa_agent_t, ffi::hsa_agent_info_t, *mut c_void) -> Status,
    iterate_isas:
        Option<unsafe extern "C" fn(ffi::hsa_agent_t, IsaCallback, *mut c_void) -> Status>,
    isa_get_info:
        Option<unsafe extern "C" fn(ffi::hsa_isa_t, ffi::hsa_isa_info_t, *mut c_void) -> Status>,
    iterate_pools:
        Option<unsafe extern "C" fn(ffi::hsa_agent_t, PoolCallback, *mut c_void) -> Status>,
    pool_get_info: Option<
        unsafe extern "C" fn(
            ffi::hsa_amd_memory_pool_t,
            ffi::hsa_amd_memory_pool_info_t,
            *mut c_void,
        ) -> Status,
    >,
    extension_table: Option<unsafe extern "C" fn(u16, u16, usize, *mut c_void) -> Status>,
}

/// `HSA_AMD_AGENT_INFO_NUM_XCC`, missing from the ROCm 5.2 header.
const AGENT_INFO_NUM_XCC: u32 = 0xA111;

/// Bytes of the ROCm 5.2 aqlprofile v1 table: ten entry points.
const AQLPROFILE_V1_TABLE_BYTES: usize = 10 * std::mem::size_of::<usize>();

fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Option<T> {
    // SAFETY: each call site names the C function's exact signature as `T`.
    unsafe { lib.get::<T>(name.as_bytes()).ok().map(|s| *s) }
}

fn required<T: Copy>(lib: &libloading::Library, path: &Path, name: &str) -> Result<T, CliError> {
    symbol(lib, name).ok_or_else(|| {
        CliError::RuntimeQuery(format!(
            "{} does not export {name}: it is not an HSA runtime",
            path.display()
        ))
    })
}

/// The thunk library (`libhsakmt.so.1`) the loaded runtime uses, as the dynamic loader found
/// it; `None` when no thunk is loaded (vhsa has none).
fn loaded_thunk() -> Option<PathBuf> {
    // SAFETY: a symbol lookup in the global scope and an address lookup, both read-only.
    unsafe {
        let sym = libc::dlsym(libc::RTLD_DEFAULT, c"hsaKmtOpenKFD".as_ptr());
        if sym.is_null() {
            return None;
        }
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(sym, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let path = PathBuf::from(
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        );
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }
}

/// Loads the thunk at `path` (vkfd) into the global scope before the runtime, so the runtime's
/// `libhsakmt.so.1` dependency binds to it.
fn preload_thunk(path: &Path) -> Result<(), CliError> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| CliError::RuntimeQuery(format!("bad thunk path {}", path.display())))?;
    // SAFETY: loading a library by path; it stays loaded for the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if h.is_null() {
        return Err(CliError::RuntimeQuery(format!(
            "cannot load the thunk {}",
            path.display()
        )));
    }
    Ok(())
}

/// Walks the agents, ISAs and pools of the runtime library at `path`, and asks it for the
/// AQL-profile extension table.
pub fn query(path: &Path) -> Result<RuntimeReport, CliError> {
    // SAFETY: loading the runtime runs its initialisers, which is what an application does too.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
        CliError::RuntimeQuery(format!("cannot load the runtime {}: {e}", path.display()))
    })?;
    let entries = Entries {
        init: required(&lib, path, "hsa_init")?,
        shut_down: required(&lib, path, "hsa_shut_down")?,
        iterate_agents: required(&lib, path, "hsa_iterate_agents")?,
        agent_get_info: required(&lib, path, "hsa_agent_get_info")?,
        iterate_isas: symbol(&lib, "hsa_agent_iterate_isas"),
        isa_get_info: symbol(&lib, "hsa_isa_get_info_alt"),
        iterate_pools: symbol(&lib, "hsa_amd_agent_iterate_memory_pools"),
        pool_get_info: symbol(&lib, "hsa_amd_memory_pool_get_info"),
        extension_table: symbol(&lib, "hsa_system_get_major_extension_table"),
    };
    // SAFETY: hsa_init takes no arguments.
    let status = unsafe { (entries.init)() };
    if status != ffi::HSA_STATUS_SUCCESS {
        let status_string: Option<
            unsafe extern "C" fn(Status, *mut *const std::ffi::c_char) -> Status,
        > = symbol(&lib, "hsa_status_string");
        let mut text: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: hsa_status_string writes a pointer to a static string or leaves it NULL.
        let described = status_string
            .is_some_and(|f| unsafe { f(status, &mut text) } == ffi::HSA_STATUS_SUCCESS)
            && !text.is_null();
        let meaning = if described {
            // SAFETY: the runtime returned a NUL-terminated static string.
            format!(
                " ({})",
                unsafe { CStr::from_ptr(text) }.to_string_lossy().trim()
            )
        } else {
            String::new()
        };
        return Err(CliError::RuntimeQuery(format!(
            "hsa_init failed with status {status:#x}{meaning} on {}; without a usable GPU, use --runtime virtual",
            path.display()
        )));
    }
    let mut agents: Vec<ffi::hsa_agent_t> = Vec::new();
    // SAFETY: the callback receives `agents` as its data pointer, which outlives the call.
    let status = unsafe {
        (entries.iterate_agents)(collect_handle::<ffi::hsa_agent_t>, (&raw mut agents).cast())
    };
    let result = if status != ffi::HSA_STATUS_SUCCESS {
        Err(CliError::RuntimeQuery(format!(
            "hsa_iterate_agents failed with status {status:#x}"
        )))
    } else {
        Ok(RuntimeReport {
            agents: agents.iter().map(|&a| describe(&entries, a)).collect(),
            aqlprofile_table: has_aqlprofile_table(&entries),
        })
    };
    // SAFETY: balances the hsa_init above.
    unsafe { (entries.shut_down)() };
    // The runtime stays loaded: its threads may still be finishing.
    std::mem::forget(lib);
    result
}

/// Whether the initialised runtime hands out the aqlprofile v1 extension table.
fn has_aqlprofile_table(e: &Entries) -> bool {
    let Some(get) = e.extension_table else {
        return false;
    };
    let mut table = [0usize; 16];
    // SAFETY: the table buffer is larger than the length given; the runtime writes at most
    // that many bytes.
    let status = unsafe {
        get(
            ffi::HSA_EXTENSION_AMD_AQLPROFILE as u16,
            1,
            AQLPROFILE_V1_TABLE_BYTES,
            table.as_mut_ptr().cast(),
        )
    };
    status == ffi::HSA_STATUS_SUCCESS && table[0] != 0
}

/// Pushes each handle into the `Vec<T>` behind `data`.
unsafe extern "C" fn collect_handle<T: Copy>(handle: T, data: *mut c_void) -> Status {
    let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `data` is the `Vec<T>` handed to the iteration by the caller.
        let list = unsafe { &mut *data.cast::<Vec<T>>() };
        list.push(handle);
    }));
    if pushed.is_ok() {
        ffi::HSA_STATUS_SUCCESS
    } else {
        ffi::HSA_STATUS_ERROR
    }
}

fn c_text(bytes: &[u8]) -> String {
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// Reads one agent's name, device type, ISAs, memory pools and GPU unit counts.
fn describe(e: &Entries, agent: ffi::hsa_agent_t) -> AgentInfo {
    let device = device_kind(e, agent);
    let isas = isa_names(e, agent);
    let pools = memory_pools(e, agent);
    let gpu = device == "GPU";
    AgentInfo {
        name: agent_text(e, agent, ffi::HSA_AGENT_INFO_NAME),
        vendor: agent_text(e, agent, ffi::HSA_AGENT_INFO_VENDOR_NAME),
        device: device.to_owned(),
        isas,
        pools,
        compute_units: gpu_unit_count(e, agent, gpu, ffi::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
        shader_engines: gpu_unit_count(e, agent, gpu, ffi::HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES),
        xcc: gpu_unit_count(e, agent, gpu, AGENT_INFO_NUM_XCC),
    }
}

/// Reads a text attribute of the agent (at most 64 bytes), or `?` when the query fails.
fn agent_text(e: &Entries, agent: ffi::hsa_agent_t, attr: ffi::hsa_agent_info_t) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: NAME and VENDOR_NAME write at most 64 bytes.
    let ok = unsafe { (e.agent_get_info)(agent, attr, buf.as_mut_ptr().cast()) }
        == ffi::HSA_STATUS_SUCCESS;
    if ok { c_text(&buf) } else { "?".to_owned() }
}

/// The agent's device type as `CPU`, `GPU`, `DSP`, or `?`.
fn device_kind(e: &Entries, agent: ffi::hsa_agent_t) -> &'static str {
    let mut device: u32 = u32::MAX;
    // SAFETY: DEVICE writes one hsa_device_type_t (u32).
    unsafe { (e.agent_get_info)(agent, ffi::HSA_AGENT_INFO_DEVICE, (&raw mut device).cast()) };
    match device {
        ffi::HSA_DEVICE_TYPE_CPU => "CPU",
        ffi::HSA_DEVICE_TYPE_GPU => "GPU",
        ffi::HSA_DEVICE_TYPE_DSP => "DSP",
        _ => "?",
    }
}

/// Names of the ISAs the agent supports; empty when the runtime lacks the ISA entry points.
fn isa_names(e: &Entries, agent: ffi::hsa_agent_t) -> Vec<String> {
    let mut isas = Vec::new();
    if let (Some(iterate), Some(get)) = (e.iterate_isas, e.isa_get_info) {
        let mut handles: Vec<ffi::hsa_isa_t> = Vec::new();
        // SAFETY: the callback receives `handles` as its data pointer.
        unsafe {
            iterate(
                agent,
                collect_handle::<ffi::hsa_isa_t>,
                (&raw mut handles).cast(),
            )
        };
        for isa in handles {
            let mut len: u32 = 0;
            // SAFETY: NAME_LENGTH writes a u32; NAME writes `len` bytes into a buffer that large.
            unsafe {
                if get(isa, ffi::HSA_ISA_INFO_NAME_LENGTH, (&raw mut len).cast())
                    == ffi::HSA_STATUS_SUCCESS
                    && len < 4096
                {
                    let mut buf = vec![0u8; len as usize + 1];
                    if get(isa, ffi::HSA_ISA_INFO_NAME, buf.as_mut_ptr().cast())
                        == ffi::HSA_STATUS_SUCCESS
                    {
                        isas.push(c_text(&buf));
                    }
                }
            }
        }
    }
    isas
}

/// The agent's AMD memory pools; empty when the runtime lacks the pool entry points.
fn memory_pools(e: &Entries, agent: ffi::hsa_agent_t) -> Vec<PoolInfo> {
    let mut pools = Vec::new();
    if let (Some(iterate), Some(get)) = (e.iterate_pools, e.pool_get_info) {
        let mut handles: Vec<ffi::hsa_amd_memory_pool_t> = Vec::new();
        // SAFETY: the callback receives `handles` as its data pointer.
        unsafe {
            iterate(
                agent,
                collect_handle::<ffi::hsa_amd_memory_pool_t>,
                (&raw mut handles).cast(),
            )
        };
        for pool in handles {
            let (mut segment, mut flags, mut size, mut alloc) = (u32::MAX, 0u32, 0usize, false);
            // SAFETY: each attribute writes the type of the variable it is given.
            unsafe {
                get(
                    pool,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                    (&raw mut segment).cast(),
                );
                get(
                    pool,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                    (&raw mut flags).cast(),
                );
                get(
                    pool,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_SIZE,
                    (&raw mut size).cast(),
                );
                get(
                    pool,
                    ffi::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                    (&raw mut alloc).cast(),
                );
            }
            pools.push(PoolInfo {
                segment: segment_name(segment).to_owned(),
                flags: flag_names(segment, flags),
                size: size as u64,
                allocatable: alloc,
            });
        }
    }
    pools
}

/// A GPU's count attribute (one `uint32_t`), or `None` for non-GPUs, failures and zero.
fn gpu_unit_count(e: &Entries, agent: ffi::hsa_agent_t, gpu: bool, attr: u32) -> Option<u32> {
    let mut value: u32 = 0;
    // SAFETY: these attributes write one uint32_t.
    let ok = unsafe { (e.agent_get_info)(agent, attr as _, (&raw mut value).cast()) }
        == ffi::HSA_STATUS_SUCCESS;
    (gpu && ok && value > 0).then_some(value)
}

fn segment_name(segment: u32) -> &'static str {
    match segment {
        ffi::HSA_AMD_SEGMENT_GLOBAL => "GLOBAL",
        ffi::HSA_AMD_SEGMENT_READONLY => "READONLY",
        ffi::HSA_AMD_SEGMENT_PRIVATE => "PRIVATE",
        ffi::HSA_AMD_SEGMENT_GROUP => "GROUP",
        _ => "?",
    }
}

fn flag_names(segment: u32, flags: u32) -> String {
    if segment != ffi::HSA_AMD_SEGMENT_GLOBAL {
        return String::new();
    }
    let names: Vec<&str> = [
        (ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, "kernarg"),
        (
            ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            "fine-grained",
        ),
        (
            ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
            "coarse-grained",
        ),
        (8, "extended-scope-fine-grained"),
    ]
    .into_iter()
    .filter(|(bit, _)| flags & bit != 0)
    .map(|(_, n)| n)
    .collect();
    names.join(" ")
}

/// The report printed by `kreplay info`.
///
/// `thunk` is the kernel-driver interface library the runtime loaded (`None` for vhsa);
/// `collection` how counters would be collected.
pub fn render(
    runtime: &Runtime,
    thunk: Option<&Path>,
    agents: &[AgentInfo],
    collection: &Collection,
) -> String {
    let mut out = String::new();
    let kind = match runtime {
        Runtime::System(_) => "system",
        Runtime::Virtual(_) => "virtual (vhsa)",
        Runtime::SystemOnVkfd { .. } => "system on vkfd (virtual GPU)",
    };
    let _ = writeln!(out, "runtime: {kind} {}", runtime.library().display());
    match thunk {
        Some(t) => {
            let which = if t.file_name().is_some_and(|n| n == "libvkfd.so") {
                "vkfd (virtual GPU)"
            } else {
                "system"
            };
            let _ = writeln!(out, "thunk: {which} {}", t.display());
        }
        None => {
            let _ = writeln!(out, "thunk: none (the runtime does not use libhsakmt)");
        }
    }
    let _ = writeln!(out, "{}{}", collection::INFO_PREFIX, collection.describe());
    let _ = writeln!(out, "agents: {}", agents.len());
    for (i, a) in agents.iter().enumerate() {
        let _ = writeln!(
            out,
            "agent {i}: {} ({}, vendor {})",
            a.name, a.device, a.vendor
        );
        if let Some(cu) = a.compute_units {
            let _ = writeln!(
                out,
                "{TOPOLOGY_PREFIX}{cu} compute units, {} shader engines, {} xcc",
                a.shader_engines.unwrap_or(1),
                a.xcc.unwrap_or(1)
            );
        }
        if a.isas.is_empty() {
            let _ = writeln!(out, "  isa: none");
        }
        for isa in &a.isas {
            let _ = writeln!(out, "  isa: {isa}");
        }
        for (p, pool) in a.pools.iter().enumerate() {
            let flags = if pool.flags.is_empty() {
                String::new()
            } else {
                format!(" {}", pool.flags)
            };
            let alloc = if pool.allocatable {
                "allocatable"
            } else {
                "not allocatable"
            };
            let _ = writeln!(
                out,
                "  pool {p}: {}{flags}, {}, {alloc}",
                pool.segment,
                human_bytes(pool.size)
            );
        }
    }
    out
}

/// The start of an agent's topology line in [`render`]'s report.
const TOPOLOGY_PREFIX: &str = "  topology: ";

/// Reads the GPU agents and the collection path back from [`render`]'s report.
pub fn read_report(text: &str) -> (Vec<GpuAgent>, Collection) {
    let mut agents: Vec<GpuAgent> = Vec::new();
    let mut collection = Collection::Unavailable;
    let mut in_gpu = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(collection::INFO_PREFIX) {
            collection = Collection::from_description(rest);
        } else if let Some(rest) = line.strip_prefix("agent ") {
            let parsed = rest.split_once(": ").and_then(|(i, rest)| {
                let (name, kind) = rest.split_once(" (")?;
                Some((i.parse().ok()?, name, kind.starts_with("GPU")))
            });
            in_gpu = matches!(parsed, Some((_, _, true)));
            if let Some((index, name, true)) = parsed {
                agents.push(GpuAgent {
                    index,
                    name: name.to_owned(),
                    topology: None,
                });
            }
        } else if let (true, Some(rest)) = (in_gpu, line.strip_prefix(TOPOLOGY_PREFIX)) {
            let numbers: Vec<u32> = rest
                .split(", ")
                .filter_map(|part| part.split(' ').next()?.parse().ok())
                .collect();
            if let (Some(agent), [cu, se, xcc]) = (agents.last_mut(), numbers.as_slice()) {
                agent.topology = Some([*cu, *se, *xcc]);
            }
        }
    }
    (agents, collection)
}

/// What `kreplay info` prints besides the agents.
#[derive(Clone, Debug, Default)]
pub struct InfoRequest {
    /// `--pmc`: every GPU agent's counters.
    pub pmc: bool,
    /// `--pmc-check A B ...`: whether these counters fit one pass on every GPU agent.
    pub pmc_check: Option<Vec<String>>,
}

/// Loads the runtime `choice` selects in this process and reports on it, with the way
/// counters would be collected.
pub fn load(choice: RuntimeChoice) -> Result<(Runtime, String, Vec<AgentInfo>), CliError> {
    let runtime = installation::select(choice, true)?;
    // Tools listed for applications must not load into this query.
    // SAFETY: no other thread exists yet in this process that reads the environment.
    unsafe { std::env::remove_var("HSA_TOOLS_LIB") };
    if let Runtime::SystemOnVkfd { thunk_dir, .. } = &runtime {
        preload_thunk(&thunk_dir.join(installation::THUNK_SONAME))?;
    }
    let report = query(&runtime.library())?;
    let collection = match collection::find_library(runtime.library_dir()) {
        Some(path) => Collection::Library(path),
        None if report.aqlprofile_table => Collection::ExtensionTable,
        None => Collection::Unavailable,
    };
    let text = render(
        &runtime,
        loaded_thunk().as_deref(),
        &report.agents,
        &collection,
    );
    Ok((runtime, text, report.agents))
}

/// `kreplay info`: prints the report on stdout, then the counter listing or check asked for.
pub fn run(choice: RuntimeChoice, request: &InfoRequest) -> Result<(), CliError> {
    let (_, text, _) = load(choice)?;
    let (agents, collection) = read_report(&text);
    if request.pmc {
        print!("{}", listing::render(&agents, &collection));
    } else {
        print!("{text}");
    }
    if let Some(names) = &request.pmc_check {
        print!("{}", listing::check(names, &agents)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_lists_agents_isas_and_pools() {
        let agents = vec![AgentInfo {
            name: "gfx942".into(),
            vendor: "AMD".into(),
            device: "GPU".into(),
            isas: vec!["amdgcn-amd-amdhsa--gfx942".into()],
            pools: vec![PoolInfo {
                segment: "GLOBAL".into(),
                flags: "coarse-grained".into(),
                size: 1 << 30,
                allocatable: true,
            }],
            compute_units: Some(304),
            shader_engines: Some(32),
            xcc: Some(8),
        }];
        let text = render(
            &Runtime::Virtual("d".into()),
            None,
            &agents,
            &Collection::ExtensionTable,
        );
        let (gpus, collection) = read_report(&text);
        assert_eq!(collection, Collection::ExtensionTable);
        assert_eq!(
            gpus,
            vec![GpuAgent {
                index: 0,
                name: "gfx942".into(),
                topology: Some([304, 32, 8])
            }]
        );
        assert!(text.contains("agent 0: gfx942 (GPU, vendor AMD)"), "{text}");
        assert!(text.contains("  isa: amdgcn-amd-amdhsa--gfx942"));
        assert!(
            text.contains("  pool 0: GLOBAL coarse-grained, 1.00 GiB, allocatable"),
            "{text}"
        );
    }

    #[test]
    fn pool_flags_are_spelled_out() {
        assert_eq!(
            flag_names(ffi::HSA_AMD_SEGMENT_GLOBAL, 1 | 2),
            "kernarg fine-grained"
        );
        assert_eq!(flag_names(ffi::HSA_AMD_SEGMENT_GROUP, 4), "");
    }

    #[test]
    fn a_library_that_is_not_a_runtime_is_refused() {
        let libc_path = Path::new("libc.so.6");
        let err = query(libc_path).unwrap_err();
        assert_eq!(err.exit_code(), 77);
        assert!(err.to_string().contains("hsa_init"), "{err}");
    }
}
