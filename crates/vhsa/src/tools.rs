//! Tool libraries: `HSA_TOOLS_LIB` parsing, loading in priority order, `OnLoad`/`OnUnload`.
//!
//! - `HSA_TOOLS_LIB` holds library names separated by spaces; double quotes group a name that
//!   contains spaces; a backslash takes the next character literally.
//! - Each is opened with `dlopen(name, RTLD_LAZY)`; libraries already in the process that export
//!   `HSA_AMD_TOOL_PRIORITY` are tools too. `HSA_TOOLS_LIB` tools get priorities `0..n`, the
//!   others `priority + n`; loading goes in ascending priority (stable for ties).
//! - `OnLoad(table, 3, failed_count, failed_names)`: a library that returns false or has no
//!   `OnLoad` is closed and added to the failed list handed to later tools.
//!   `HSA_TOOLS_REPORT_LOAD_FAILURE=1` prints `Tool lib "<name>" failed to load.` for each.
//! - `OnUnload` runs in reverse load order on the last `hsa_shut_down`, then the table is reset
//!   and the libraries closed.

use hsa_abi::HsaApiTable;
use hsa_abi::tools_lib::parse as parse_tools_lib;
use std::ffi::{CStr, CString, c_char, c_void};

/// A tool whose `OnLoad` returned true.
pub(crate) struct LoadedTool {
    name: String,
    handle: *mut c_void,
}

// SAFETY: a dlopen handle is process-global and may be used from any thread.
unsafe impl Send for LoadedTool {}

type OnLoadFn = unsafe extern "C" fn(*mut HsaApiTable, u64, u64, *const *const c_char) -> bool;
type OnUnloadFn = unsafe extern "C" fn();

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a thread-local NUL-terminated string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated (see above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn symbol(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: `handle` is a live dlopen handle; `name` is NUL-terminated.
    unsafe { libc::dlsym(handle, name.as_ptr()) }
}

/// The handle of a library that is already loaded, without loading it (NULL when it is not).
fn loaded_handle(name: &str) -> *mut c_void {
    let Ok(c) = CString::new(name) else {
        return std::ptr::null_mut();
    };
    // SAFETY: RTLD_NOLOAD only looks up a library that is already loaded.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if !h.is_null() {
        // SAFETY: balances the NOLOAD open; the library stays loaded by its other references.
        unsafe { libc::dlclose(h) };
    }
    h
}

/// Libraries already in the process that export `HSA_AMD_TOOL_PRIORITY`: (priority, path).
fn preloaded_tools() -> Vec<(u32, String)> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> libc::c_int {
        let found = std::panic::catch_unwind(|| {
            // SAFETY: the loader passes a valid info record; `data` is our Vec of names.
            let (info, names) = unsafe { (&*info, &mut *data.cast::<Vec<String>>()) };
            if !info.dlpi_name.is_null() {
                // SAFETY: non-NULL NUL-terminated path from the loader.
                let name = unsafe { CStr::from_ptr(info.dlpi_name) }
                    .to_string_lossy()
                    .into_owned();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        });
        let _ = found;
        0
    }
    let mut names: Vec<String> = Vec::new();
    // SAFETY: the callback only reads the records and appends to `names`.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut names).cast()) };
    let mut out = Vec::new();
    for name in names {
        let Ok(c) = CString::new(name.clone()) else {
            continue;
        };
        // SAFETY: RTLD_NOLOAD only looks up a library that is already loaded.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        let p = symbol(h, c"HSA_AMD_TOOL_PRIORITY");
        if !p.is_null() {
            // SAFETY: the symbol is documented as `const uint32_t`.
            out.push((unsafe { p.cast::<u32>().read_unaligned() }, name));
        }
        // SAFETY: balances the NOLOAD open above.
        unsafe { libc::dlclose(h) };
    }
    out
}

fn report_failures() -> bool {
    std::env::var("HSA_TOOLS_REPORT_LOAD_FAILURE")
        .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// Loads every tool and calls its `OnLoad` with `root`. Returns the tools that accepted.
pub(crate) fn load_all(root: *mut HsaApiTable) -> Vec<LoadedTool> {
    let listed = match std::env::var("HSA_TOOLS_LIB") {
        Ok(v) => parse_tools_lib(&v).unwrap_or_else(|e| {
            eprintln!("vhsa: {e}; no tool from HSA_TOOLS_LIB is loaded");
            Vec::new()
        }),
        Err(_) => Vec::new(),
    };
    let n = listed.len() as u64;
    let mut order: Vec<(u64, String)> = listed
        .iter()
        .enumerate()
        .map(|(i, name)| (i as u64, name.clone()))
        .collect();
    // A preloaded tool that HSA_TOOLS_LIB also names (perhaps by another path) loads once.
    let listed_handles: Vec<*mut c_void> = listed
        .iter()
        .map(|l| loaded_handle(l))
        .filter(|h| !h.is_null())
        .collect();
    for (prio, path) in preloaded_tools() {
        let h = loaded_handle(&path);
        if !listed.contains(&path) && !listed_handles.contains(&h) {
            order.push((u64::from(prio) + n, path));
        }
    }
    order.sort_by_key(|(p, _)| *p);

    let report = report_failures();
    let mut failed: Vec<CString> = Vec::new();
    let mut loaded = Vec::new();
    for (_, name) in order {
        let fail = |failed: &mut Vec<CString>, why: String| {
            tracing::warn!("tool library {name}: {why}");
            if report {
                eprintln!("Tool lib \"{name}\" failed to load.");
            }
            failed.push(CString::new(name.clone()).unwrap_or_default());
        };
        let Ok(cname) = CString::new(name.clone()) else {
            fail(&mut failed, "the name contains a NUL byte".into());
            continue;
        };
        // SAFETY: dlopen with a NUL-terminated name.
        let handle = unsafe { libc::dlopen(cname.as_ptr(), libc::RTLD_LAZY) };
        if handle.is_null() {
            fail(&mut failed, dl_error());
            continue;
        }
        let on_load = symbol(handle, c"OnLoad");
        if on_load.is_null() {
            // SAFETY: balances the dlopen above.
            unsafe { libc::dlclose(handle) };
            fail(&mut failed, "no OnLoad function".into());
            continue;
        }
        // SAFETY: `OnLoad` has the documented tool signature.
        let on_load: OnLoadFn = unsafe { std::mem::transmute::<*mut c_void, OnLoadFn>(on_load) };
        let failed_ptrs: Vec<*const c_char> = failed.iter().map(|c| c.as_ptr()).collect();
        let list = if failed_ptrs.is_empty() {
            std::ptr::null()
        } else {
            failed_ptrs.as_ptr()
        };
        // SAFETY: calling the tool's OnLoad with the live root table and a list that outlives it.
        let ok = unsafe {
            on_load(
                root,
                u64::from(hsa_abi::ROOT_MAJOR),
                failed_ptrs.len() as u64,
                list,
            )
        };
        if ok {
            tracing::debug!("tool library {name} loaded");
            loaded.push(LoadedTool { name, handle });
        } else {
            // SAFETY: balances the dlopen above.
            unsafe { libc::dlclose(handle) };
            fail(&mut failed, "OnLoad returned false".into());
        }
    }
    loaded
}

/// Calls `OnUnload` in reverse load order, then `reset_table`, then closes the libraries.
pub(crate) fn unload_all(tools: Vec<LoadedTool>, reset_table: fn()) {
    for tool in tools.iter().rev() {
        let f = symbol(tool.handle, c"OnUnload");
        if !f.is_null() {
            // SAFETY: `OnUnload` has the documented tool signature.
            let f: OnUnloadFn = unsafe { std::mem::transmute::<*mut c_void, OnUnloadFn>(f) };
            tracing::debug!("OnUnload of {}", tool.name);
            // SAFETY: calling the tool's exported OnUnload.
            unsafe { f() };
        }
    }
    reset_table();
    for tool in tools.iter().rev() {
        // SAFETY: balances the dlopen of `load_all`.
        unsafe { libc::dlclose(tool.handle) };
    }
}
