//! `kreplay info`: the agents, ISAs and memory pools of the selected runtime, loaded in this
//! process (the command does nothing else).

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
}

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

/// Walks the agents, ISAs and pools of the runtime library at `path`.
pub fn query(path: &Path) -> Result<Vec<AgentInfo>, CliError> {
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
        Ok(agents.iter().map(|&a| describe(&entries, a)).collect())
    };
    // SAFETY: balances the hsa_init above.
    unsafe { (entries.shut_down)() };
    // The runtime stays loaded: its threads may still be finishing.
    std::mem::forget(lib);
    result
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

fn describe(e: &Entries, agent: ffi::hsa_agent_t) -> AgentInfo {
    let text_info = |attr| {
        let mut buf = [0u8; 64];
        // SAFETY: NAME and VENDOR_NAME write at most 64 bytes.
        let ok = unsafe { (e.agent_get_info)(agent, attr, buf.as_mut_ptr().cast()) }
            == ffi::HSA_STATUS_SUCCESS;
        if ok { c_text(&buf) } else { "?".to_owned() }
    };
    let mut device: u32 = u32::MAX;
    // SAFETY: DEVICE writes one hsa_device_type_t (u32).
    unsafe { (e.agent_get_info)(agent, ffi::HSA_AGENT_INFO_DEVICE, (&raw mut device).cast()) };
    let device = match device {
        ffi::HSA_DEVICE_TYPE_CPU => "CPU",
        ffi::HSA_DEVICE_TYPE_GPU => "GPU",
        ffi::HSA_DEVICE_TYPE_DSP => "DSP",
        _ => "?",
    };
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
    AgentInfo {
        name: text_info(ffi::HSA_AGENT_INFO_NAME),
        vendor: text_info(ffi::HSA_AGENT_INFO_VENDOR_NAME),
        device: device.to_owned(),
        isas,
        pools,
    }
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
/// `thunk` is the kernel-driver interface library the runtime loaded (`None` for vhsa).
pub fn render(runtime: &Runtime, thunk: Option<&Path>, agents: &[AgentInfo]) -> String {
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
    let _ = writeln!(out, "agents: {}", agents.len());
    for (i, a) in agents.iter().enumerate() {
        let _ = writeln!(
            out,
            "agent {i}: {} ({}, vendor {})",
            a.name, a.device, a.vendor
        );
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

/// `kreplay info`: prints the report on stdout.
pub fn run(choice: RuntimeChoice) -> Result<(), CliError> {
    let runtime = installation::select(choice, true)?;
    // Tools listed for applications must not load into this query.
    // SAFETY: no other thread exists yet in this process that reads the environment.
    unsafe { std::env::remove_var("HSA_TOOLS_LIB") };
    if let Runtime::SystemOnVkfd { thunk_dir, .. } = &runtime {
        preload_thunk(&thunk_dir.join(installation::THUNK_SONAME))?;
    }
    let agents = query(&runtime.library())?;
    print!("{}", render(&runtime, loaded_thunk().as_deref(), &agents));
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
        }];
        let text = render(&Runtime::Virtual("d".into()), None, &agents);
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
