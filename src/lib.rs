//! kreplay: kernel-dispatch replay loaded into HSA applications as a runtime tool.
//!
//! Loaded through `HSA_TOOLS_LIB`, the library intercepts queue creation and the four
//! allocate/free entries ([`intercept`]), keeps an inventory of device allocations
//! ([`inventory`]), and replays selected kernel dispatches several times, restoring device
//! memory between passes ([`replay`], [`snapshot`]). Tools drive it through the C API
//! ([`api`], header `include/kreplay.h`); without one, the built-in client ([`client`]) is
//! configured from the environment.

#![deny(missing_docs)]

pub mod abi;
pub mod api;
pub mod client;
pub mod diagnostics;
pub mod ffi;
pub mod host_memory;
pub mod intercept;
pub mod inventory;
pub mod loader;
pub mod pmc;
pub mod queue_fault;
pub mod replay;
pub mod runtime;
pub mod settings;
pub mod snapshot;
pub mod state;
pub mod sync;
pub mod tool_queue;
