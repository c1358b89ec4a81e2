//! vhsa: a virtual HSA runtime over host memory.
//!
//! The library builds as `libhsa-runtime64.so.1` and exports the `hsa_*` C API with the `ROCR_1`
//! symbol version, so unmodified HSA applications, `rocminfo` and HSA tool libraries run on a
//! machine without a GPU. Agents are described by `VHSA_AGENTS`; "device" memory is host memory;
//! code-object kernels run on the AMDGPU emulator (`amdgpu-emu`), and native functions
//! registered through the C extension in [`ext`] (`include/vhsa.h`) stand in for kernels by
//! name. See `docs/vhsa.md`.
//!
//! Layers (see "Architecture" in `docs/vhsa.md`):
//! - the entry layer: `api` (every `hsa_*` function installed in the tables: panic boundary,
//!   initialised check, argument checks, status codes) and `ext` (the vhsa C extension);
//! - the domain modules: `topology` (agents, regions, pools, ISAs; `visible_devices` reads
//!   `ROCR_VISIBLE_DEVICES` for it), `memory` (allocations, copies, the copy engine),
//!   `shared_memory` (IPC export and import, interop buffers), `signal` (signals, waits, async
//!   handlers), `queue` (rings and packet processors), `intercept` (intercept queues),
//!   `executable` (code objects, the loader), `image` (images and samplers of the image
//!   extension, linear layouts),
//!   `native_executor` (native kernels as an [`executor::Executor`]),
//!   `emulated_executor` (code-object kernels on the `amdgpu-emu` emulator), `tools`
//!   (tool libraries);
//! - the bottom: `table` (live tables and the exported trampolines), `executor` (the dispatch
//!   seam), `native` (registered native kernels), `open_state` (whether the runtime is open),
//!   `aperture` (where device allocations are placed), `fault`, `stats`, `error`, `status`,
//!   `boundary` (C-edge helpers).

#![deny(missing_docs)]

mod aperture;
mod api;
mod boundary;
mod emulated_executor;
mod error;
mod executable;
pub mod executor;
pub mod ext;
mod fault;
mod host_backing;
mod image;
mod intercept;
mod memory;
mod native;
mod native_executor;
mod open_state;
mod queue;
mod shared_memory;
mod signal;
mod stats;
mod status;
mod table;
mod tools;
mod topology;
mod visible_devices;
mod vmem;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("vhsa's exported entry points are written for x86-64 only");
