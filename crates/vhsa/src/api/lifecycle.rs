//! Runtime lifetime: `hsa_init`/`hsa_shut_down` with reference counting and tool loading; they
//! set the "runtime is open" state (`crate::open_state`) every other entry checks first.
//!
//! `hsa_init` holds the bootstrap lock while it discovers agents and loads tools. A tool's
//! `OnLoad` may call every HSA function except `hsa_init`/`hsa_shut_down`; those return
//! `HSA_STATUS_ERROR` with a message instead of deadlocking as the real runtime does.

use crate::boundary::status_call;
use crate::error::{Error, Result};
use hsa_abi::CoreApiTable;
use hsa_abi::ffi::*;
use parking_lot::Mutex;
use std::cell::Cell;

struct Lifetime {
    refcount: u32,
    tools: Vec<crate::tools::LoadedTool>,
}

static BOOTSTRAP: Mutex<Lifetime> = Mutex::new(Lifetime {
    refcount: 0,
    tools: Vec::new(),
});

thread_local! {
    /// Set while this thread runs tools' `OnLoad`/`OnUnload`.
    static IN_TOOL_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Sets up `tracing` output on stderr; the filter comes from `VHSA_LOG` (default `warn`).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VHSA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn init() -> Result<()> {
    if IN_TOOL_CALLBACK.with(Cell::get) {
        eprintln!(
            "vhsa: hsa_init was called from inside a tool's OnLoad/OnUnload. The runtime is being \
             initialized by this very call chain; the real runtime would deadlock here. Remove the \
             hsa_init/hsa_shut_down call from the tool's OnLoad (every other HSA call is allowed)."
        );
        return Err(Error::Failed(
            "hsa_init called from inside a tool's OnLoad".into(),
        ));
    }
    let mut life = BOOTSTRAP.lock();
    if life.refcount == u32::MAX {
        return Err(Error::Status(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW));
    }
    life.refcount += 1;
    if life.refcount > 1 {
        return Ok(());
    }
    crate::fault::load_from_env();
    crate::topology::system();
    crate::open_state::set_open(true);
    IN_TOOL_CALLBACK.with(|c| c.set(true));
    let tools = crate::tools::load_all(crate::table::root());
    IN_TOOL_CALLBACK.with(|c| c.set(false));
    life.tools = tools;
    Ok(())
}

fn shut_down() -> Result<()> {
    if IN_TOOL_CALLBACK.with(Cell::get) {
        eprintln!(
            "vhsa: hsa_shut_down was called from inside a tool's OnLoad/OnUnload; ignored. The \
             runtime calls OnUnload itself on the last hsa_shut_down."
        );
        return Err(Error::Failed(
            "hsa_shut_down called from inside a tool callback".into(),
        ));
    }
    let mut life = BOOTSTRAP.lock();
    if life.refcount == 0 {
        return Err(Error::NotInitialized);
    }
    life.refcount -= 1;
    if life.refcount > 0 {
        return Ok(());
    }
    let tools = std::mem::take(&mut life.tools);
    IN_TOOL_CALLBACK.with(|c| c.set(true));
    crate::tools::unload_all(tools, crate::table::reset);
    IN_TOOL_CALLBACK.with(|c| c.set(false));
    crate::intercept::destroy_all();
    crate::queue::destroy_all();
    crate::signal::stop_async_handlers();
    crate::memory::stop_copy_engine();
    crate::open_state::set_open(false);
    Ok(())
}

unsafe extern "C" fn hsa_init_impl() -> hsa_status_t {
    status_call("hsa_init", init)
}

unsafe extern "C" fn hsa_shut_down_impl() -> hsa_status_t {
    status_call("hsa_shut_down", shut_down)
}

/// Fills this module's slots.
pub(super) fn install(core: &mut CoreApiTable) {
    core.hsa_init_fn = Some(hsa_init_impl);
    core.hsa_shut_down_fn = Some(hsa_shut_down_impl);
}
