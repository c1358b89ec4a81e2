//! vhsa: a virtual HSA runtime over host memory.
//!
//! The library builds as `libhsa-runtime64.so.1` and exports the `hsa_*` C API with the `ROCR_1`
//! symbol version, so unmodified HSA applications, `rocminfo` and HSA tool libraries run on a
//! machine without a GPU. Agents are described by `VHSA_AGENTS`; "device" memory is host memory;
//! kernels are native functions registered through the C extension in [`ext`]
//! (`include/vhsa.h`). See `docs/vhsa.md`.
//!
//! Layout:
//! - `table`: the live API tables and the exported entry points that call through them;
//! - `runtime`: `hsa_init`/`hsa_shut_down`, reference counting, tool loading (`tools`);
//! - `topology`: agents, regions, memory pools, ISAs, system information;
//! - `memory`: allocations, pointer information, copies and the copy engine;
//! - `signal`: signals, waits and asynchronous handlers;
//! - `queue`: user-mode queues and their packet processors; `intercept`: intercept queues;
//! - `native`: native kernels; `fault`: fault injection; `stats`: counters;
//! - `executable`: code objects, executables and the AMD loader extension.
//!
//! Every function installed in the table runs its body inside a panic boundary
//! (`boundary`); none crashes on bad arguments.

#![deny(missing_docs)]

mod boundary;
mod error;
mod executable;
pub mod ext;
mod fault;
mod intercept;
mod memory;
mod native;
mod queue;
mod runtime;
mod signal;
mod stats;
mod status;
mod table;
mod tools;
mod topology;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("vhsa's exported entry points are written for x86-64 only");
