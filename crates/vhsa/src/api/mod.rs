//! The entry layer: every `hsa_*` function the runtime installs in its API tables.
//!
//! Each entry runs inside a panic boundary (`crate::boundary`), checks that the runtime is open
//! (`crate::open_state::ensure_open`), checks its pointers and enumerations, calls the domain modules
//! and maps their result to a status code. Nothing below this layer imports it.
//!
//! One child per domain: `lifecycle` (`hsa_init`/`hsa_shut_down`, the open state), `system`
//! (status strings, extensions), `topology`, `memory`, `signal`, `queue`, `intercept`,
//! `executable` and `loader_extension`, `image` (the image extension's entries and table). A
//! new HSA entry goes into the child of its domain and into that child's `install`.

mod executable;
mod image;
mod intercept;
mod lifecycle;
mod loader_extension;
mod memory;
mod queue;
mod signal;
mod system;
mod topology;

use crate::executor::Executor;
use std::sync::{Arc, OnceLock};

/// The executor given to every new hardware queue: a registered native kernel first, then the
/// emulator for every other code-object kernel.
fn executor() -> Arc<dyn Executor> {
    static EXECUTOR: OnceLock<Arc<dyn Executor>> = OnceLock::new();
    EXECUTOR
        .get_or_init(|| {
            Arc::new(crate::executor::ExecutorChain(vec![
                Arc::new(crate::native_executor::NativeExecutor),
                Arc::new(crate::emulated_executor::EmulatedExecutor::default()),
            ]))
        })
        .clone()
}

/// Builds the tables holding the runtime's own functions.
fn tables() -> crate::table::Tables {
    let mut t = crate::table::Tables::empty();
    lifecycle::install(&mut t.core);
    system::install(&mut t.core);
    topology::install(&mut t.core, &mut t.amd);
    memory::install(&mut t.core, &mut t.amd);
    signal::install(&mut t.core, &mut t.amd);
    queue::install(&mut t.core, &mut t.amd);
    intercept::install(&mut t.core, &mut t.amd);
    executable::install(&mut t.core);
    image::install(&mut t.image);
    t
}

/// Runs at library load: fills the tables so the exports work before `hsa_init` (they answer
/// `HSA_STATUS_ERROR_NOT_INITIALIZED`) and sets up diagnostics.
extern "C" fn on_library_load() {
    let _ = std::panic::catch_unwind(|| {
        lifecycle::init_logging();
        crate::table::make_live(tables());
    });
}

#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_library_load;
