//! vkfd: a user-space `libhsakmt.so.1`, the kernel-driver interface of ROCm's runtime, over a
//! virtual GPU.
//!
//! Debian's ROCR (`libhsa-runtime64.so.1`, 5.2) reaches the GPU driver only through the thunk
//! library `libhsakmt.so.1`. This crate builds a drop-in replacement (soname `libhsakmt.so.1`,
//! every export of Debian's library under version `HSAKMT_1`): put its directory first on
//! `LD_LIBRARY_PATH` and the real ROCR (and HIP on it) runs on virtual GPUs whose kernels run on
//! the AMDGPU emulator (`amdgpu-emu`). No `/dev/kfd`, device access or kernel module is used.
//! See `docs/vkfd.md`.
//!
//! Layers, as in vhsa (each imports only from the layers below it):
//! - the entry layer: `api` (the `hsaKmt*` exports: panic boundary, pointer and enum checks,
//!   status codes);
//! - the domain modules: `topology` (nodes, banks, caches, links from `VKFD_AGENTS`), `vm` (the
//!   allocation map that is the GPU page table), `events` (signalled flags, mailboxes, waits),
//!   `cp` (a command processor per AQL queue, on vgpu's shared packet processor), `dispatch`
//!   (kernels on the emulator, code-range discovery), `pm4` (ROCR's indirect buffers), `stats`;
//! - the bottom: `ffi` (bindings of `hsakmt.h`), `error`, `boundary` (C-edge checks), `clock`.

#![deny(missing_docs)]

mod api;
mod boundary;
mod clock;
mod cp;
mod dispatch;
mod error;
mod events;
/// Types of the installed `hsakmt.h` (bindgen).
#[allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    missing_docs,
    unnecessary_transmutes,
    clippy::all
)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/ffi.rs"));
}
mod pm4;
mod stats;
mod topology;
mod vm;

/// Sets up diagnostics once: `VKFD_LOG` (e.g. `VKFD_LOG=debug`), warnings by default.
pub(crate) fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_env("VKFD_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_target(false)
            .try_init();
    });
}

#[cfg(not(target_arch = "x86_64"))]
compile_error!("vkfd is written for x86-64 only");
