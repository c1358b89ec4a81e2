//! What the AMD loader extension tells the tool: kernel names and module-scope variables.
//!
//! Kernel object -> name is cached per agent and the cache is rebuilt on a miss. Module-scope
//! variables are discovered at snapshot time (constant memory may be filled after loading).

use crate::runtime::{HsaError, Runtime};
use crate::snapshot::{Region, RegionKind};
use crate::sync::{Arc, Mutex};
use hsa_abi::ffi::{self, hsa_agent_t, hsa_executable_symbol_t, hsa_executable_t, hsa_status_t};
use std::collections::HashMap;
use std::ffi::{CString, c_void};

/// Largest module-scope variable captured (a sanity cap).
pub const MAX_VARIABLE_BYTES: u64 = 1 << 30;

type IterateExecutables = unsafe extern "C" fn(
    Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>,
    *mut c_void,
) -> hsa_status_t;

/// The loader extension's executable iterator, queried once per runtime instance (`None`
/// inside: the runtime has no such extension).
static ITERATE: Mutex<Option<Option<IterateExecutables>>> = Mutex::new(None);

/// Forgets the loader extension of the previous runtime instance.
pub fn forget_extension() {
    *ITERATE.lock() = None;
}

fn iterate_executables_fn(rt: Runtime) -> Option<IterateExecutables> {
    *ITERATE.lock().get_or_insert_with(|| {
        let mut table = ffi::hsa_ven_amd_loader_1_03_pfn_t::default();
        // SAFETY: the out-pointer is a table of the size passed.
        let st = unsafe {
            (rt.originals().system_get_major_extension_table)(
                ffi::HSA_EXTENSION_AMD_LOADER as u16,
                1,
                std::mem::size_of_val(&table),
                (&mut table as *mut ffi::hsa_ven_amd_loader_1_03_pfn_t).cast(),
            )
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            tracing::warn!(
                "the runtime has no AMD loader extension 1.03 (status {st:#x}): kernel names and module-scope variables are unavailable"
            );
            return None;
        }
        table.hsa_ven_amd_loader_iterate_executables
    })
}

fn executables(rt: Runtime) -> Result<Vec<hsa_executable_t>, HsaError> {
    let Some(iterate) = iterate_executables_fn(rt) else {
        return Err(HsaError { call: "hsa_ven_amd_loader_iterate_executables", status: ffi::HSA_STATUS_ERROR });
    };
    unsafe extern "C" fn collect(exe: hsa_executable_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the Vec passed below, alive for the call.
        let v = unsafe { &mut *data.cast::<Vec<hsa_executable_t>>() };
        v.push(exe);
        ffi::HSA_STATUS_SUCCESS
    }
    let mut v: Vec<hsa_executable_t> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    let st = unsafe { iterate(Some(collect), (&mut v as *mut Vec<hsa_executable_t>).cast()) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(HsaError { call: "hsa_ven_amd_loader_iterate_executables", status: st });
    }
    Ok(v)
}

fn symbols(rt: Runtime, exe: hsa_executable_t, agent: hsa_agent_t) -> Result<Vec<hsa_executable_symbol_t>, HsaError> {
    unsafe extern "C" fn collect(_: hsa_executable_t, _: hsa_agent_t, s: hsa_executable_symbol_t, data: *mut c_void) -> hsa_status_t {
        // SAFETY: `data` is the Vec passed below, alive for the call.
        let v = unsafe { &mut *data.cast::<Vec<hsa_executable_symbol_t>>() };
        v.push(s);
        ffi::HSA_STATUS_SUCCESS
    }
    let mut v: Vec<hsa_executable_symbol_t> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    let st = unsafe { (rt.originals().executable_iterate_agent_symbols)(exe, agent, Some(collect), (&mut v as *mut Vec<hsa_executable_symbol_t>).cast()) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(HsaError { call: "hsa_executable_iterate_agent_symbols", status: st });
    }
    Ok(v)
}

fn info<T: Default>(rt: Runtime, s: hsa_executable_symbol_t, attr: ffi::hsa_executable_symbol_info_t) -> Option<T> {
    let mut v = T::default();
    // SAFETY: `attr` is one whose value has type `T` (checked at each call site).
    let st = unsafe { (rt.originals().executable_symbol_get_info)(s, attr, (&mut v as *mut T).cast()) };
    (st == ffi::HSA_STATUS_SUCCESS).then_some(v)
}

fn symbol_name(rt: Runtime, s: hsa_executable_symbol_t) -> Option<String> {
    let len: u32 = info(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH)?;
    let mut buf = vec![0u8; len as usize + 1];
    // SAFETY: the buffer holds NAME_LENGTH bytes plus one.
    let st = unsafe { (rt.originals().executable_symbol_get_info)(s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_NAME, buf.as_mut_ptr().cast()) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return None;
    }
    buf.truncate(len as usize);
    if let Some(end) = buf.iter().position(|&b| b == 0) {
        buf.truncate(end);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Module-scope variables visible to `agent`, as snapshot regions. Any enumeration or query
/// failure is an error (a variable never discovered is never restored).
pub fn module_variables(rt: Runtime, agent: hsa_agent_t) -> Result<Vec<Region>, HsaError> {
    let query = |s, attr, call| -> Result<u64, HsaError> {
        let mut v = 0u64;
        // SAFETY: every attribute queried here has a value of at most 8 bytes, written into a
        // zeroed u64 (little-endian: a narrower value lands in the low bytes).
        let st = unsafe { (rt.originals().executable_symbol_get_info)(s, attr, (&mut v as *mut u64).cast()) };
        if st == ffi::HSA_STATUS_SUCCESS { Ok(v) } else { Err(HsaError { call, status: st }) }
    };
    let mut out = Vec::new();
    for exe in executables(rt)? {
        for s in symbols(rt, exe, agent)? {
            let kind = query(s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "hsa_executable_symbol_get_info(TYPE)")?;
            if kind != u64::from(ffi::HSA_SYMBOL_KIND_VARIABLE) {
                continue;
            }
            let addr = query(s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, "hsa_executable_symbol_get_info(VARIABLE_ADDRESS)")?;
            let size = query(s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, "hsa_executable_symbol_get_info(VARIABLE_SIZE)")?;
            let size = size & u64::from(u32::MAX);
            if addr == 0 || size == 0 || size > MAX_VARIABLE_BYTES {
                continue;
            }
            let name = symbol_name(rt, s).unwrap_or_default();
            out.push(Region { kind: RegionKind::ModuleVariable { name }, device: addr as usize, size: size as usize });
        }
    }
    Ok(out)
}

/// Kernel object -> name, per agent, cached and rebuilt on a miss.
#[derive(Default)]
pub struct KernelNames {
    by_agent: Mutex<HashMap<u64, HashMap<u64, Arc<CString>>>>,
}

impl KernelNames {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every name (the executables of the previous runtime instance are gone).
    pub fn forget_all(&self) {
        self.by_agent.lock().clear();
    }

    /// The name of `kernel_object` on `agent`; `None` when the loader does not know it.
    pub fn resolve(&self, rt: Runtime, agent: hsa_agent_t, kernel_object: u64) -> Option<Arc<CString>> {
        if let Some(n) = self.by_agent.lock().get(&agent.handle).and_then(|m| m.get(&kernel_object)) {
            return Some(n.clone());
        }
        let fresh = Self::scan(rt, agent);
        let mut map = self.by_agent.lock();
        let entry = map.entry(agent.handle).or_default();
        entry.extend(fresh);
        entry.get(&kernel_object).cloned()
    }

    fn scan(rt: Runtime, agent: hsa_agent_t) -> HashMap<u64, Arc<CString>> {
        let mut out = HashMap::new();
        let Ok(exes) = executables(rt) else { return out };
        for exe in exes {
            let Ok(syms) = symbols(rt, exe, agent) else { continue };
            for s in syms {
                let kind: Option<ffi::hsa_symbol_kind_t> = info(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_TYPE);
                if kind != Some(ffi::HSA_SYMBOL_KIND_KERNEL) {
                    continue;
                }
                let Some(obj) = info::<u64>(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT) else { continue };
                let Some(name) = symbol_name(rt, s) else { continue };
                // Code-object kernel symbols name the kernel descriptor (`<kernel>.kd`).
                let name = name.strip_suffix(".kd").unwrap_or(&name);
                if let Ok(c) = CString::new(name) {
                    out.insert(obj, Arc::new(c));
                }
            }
        }
        out
    }
}
