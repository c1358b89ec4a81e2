//! `libsqttinstrumentpass.so`: an LLVM 22 pass plugin that plants SQTT `s_ttracedata` markers
//! into AMDGPU device code, loaded with `clang -fpass-plugin=libsqttinstrumentpass.so`.
//!
//! The C++ shim (`shim/plugin.cpp`) registers two passes with the pass builder and calls
//! [`sqtt_run_phase`] for each; all IR work is here. Options come from `SQTT_*` environment
//! variables of the compiler process (see `docs/sqtt.md`). Host modules are never touched.
//! Diagnostics are logged with `tracing`, filtered by `KREPLAY_LOG` (e.g. `KREPLAY_LOG=debug`).

#![deny(missing_docs)]

// IR-touching modules stay private: their functions take raw LLVM references that are only
// valid while a phase runs (see `ir`).
mod emit;
pub mod funcmap;
mod ir;
pub mod options;
mod phase;
mod sites;
pub mod target;

use std::ffi::{CString, c_char, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use llvm_sys::prelude::LLVMModuleRef;

use crate::phase::PassPhase;

fn init_logging() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        if let Ok(filter) = std::env::var("KREPLAY_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_writer(std::io::stderr)
                .try_init();
        }
    });
}

fn message(text: &str) -> *mut c_char {
    CString::new(text.replace('\0', " "))
        .map(CString::into_raw)
        .unwrap_or(std::ptr::null_mut())
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs one phase of the pass on `module` (phase 0: early, 1: late).
///
/// Returns NULL on success, or an error message the caller reports as a compiler diagnostic and
/// releases with [`sqtt_message_free`]. Never unwinds: panics become an error message.
///
/// # Safety
///
/// `module` must be a valid module that the caller does not use concurrently during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqtt_run_phase(module: LLVMModuleRef, phase: c_uint) -> *mut c_char {
    let result = catch_unwind(AssertUnwindSafe(|| {
        init_logging();
        let phase = match phase {
            0 => PassPhase::Early,
            1 => PassPhase::Late,
            other => return Err(format!("unknown pass phase {other}")),
        };
        if module.is_null() {
            return Err("no module was given to the pass".to_string());
        }
        tracing::debug!(?phase, "sqtt-pass phase");
        phase::run(module, phase).map_err(|e| e.to_string())
    }));
    match result {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(e)) => message(&e),
        Err(p) => {
            let _ = catch_unwind(AssertUnwindSafe(|| phase::mark_failed(module)));
            message(&format!(
                "internal error: {}; please report it with the source that triggered it",
                panic_text(&*p)
            ))
        }
    }
}

/// Releases a message returned by [`sqtt_run_phase`]. NULL is accepted and ignored.
///
/// # Safety
///
/// `text` must be NULL or a pointer returned by [`sqtt_run_phase`] not yet released.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sqtt_message_free(text: *mut c_char) {
    let _ = catch_unwind(|| {
        if !text.is_null() {
            // SAFETY: produced by CString::into_raw in `message` and released once.
            drop(unsafe { CString::from_raw(text) });
        }
    });
}

/// The plugin description LLVM asks for (`llvm::PassPluginLibraryInfo`).
#[repr(C)]
pub struct PassPluginLibraryInfo {
    /// `LLVM_PLUGIN_API_VERSION` the shim was compiled with.
    pub api_version: u32,
    /// Plugin name (static C string).
    pub plugin_name: *const c_char,
    /// Plugin version (static C string).
    pub plugin_version: *const c_char,
    /// `void (*)(llvm::PassBuilder &)` registering the passes.
    pub register_callbacks: *const c_void,
    /// `PreCodeGenCallback` (unused, NULL).
    pub pre_codegen: *const c_void,
}

unsafe extern "C" {
    /// Implemented by the C++ shim.
    fn sqtt_plugin_info() -> PassPluginLibraryInfo;
}

/// The entry point `clang -fpass-plugin` looks up. It only returns static data from the shim;
/// should that ever panic, it returns API version 0, which LLVM rejects with an error message
/// instead of loading the plugin.
#[unsafe(no_mangle)]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    // SAFETY: the shim function takes no arguments and returns static data.
    catch_unwind(|| unsafe { sqtt_plugin_info() }).unwrap_or(PassPluginLibraryInfo {
        api_version: 0,
        plugin_name: c"SqttInstrumentPass".as_ptr(),
        plugin_version: c"0".as_ptr(),
        register_callbacks: std::ptr::null(),
        pre_codegen: std::ptr::null(),
    })
}
