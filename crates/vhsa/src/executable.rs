//! Code objects and executables: the domain side of the loader.
//!
//! - code objects are parsed by the shared `amdgpu-code-object` crate;
//! - [`loader`]: readers, executables, loaded code objects and symbols (the loader's state);
//! - this file: the loader's links to the rest of the runtime (agent memory, native kernels,
//!   the fault plan) and code-object readers from files.
//!
//! Kernels of loaded code objects keep the address of their loaded kernel descriptor as kernel
//! object; [`kernel_name_of`] names the kernel of such an object (the native executor runs the
//! native kernel registered under that name). Registered native kernels also appear as the
//! kernel symbols of one built-in executable, listed first by the loader extension.

pub(crate) mod loader;

use crate::error::{Error, Result};
use hsa_abi::ffi::*;
use loader::LoaderError;

impl From<LoaderError> for Error {
    fn from(e: LoaderError) -> Self {
        // Load failures are worth a warning: they name the code object and what is wrong.
        match e {
            LoaderError::InvalidCodeObject { .. }
            | LoaderError::IncompatibleIsa { .. }
            | LoaderError::OutOfMemory { .. } => {
                tracing::warn!("{e}")
            }
            _ => tracing::debug!("{e}"),
        }
        Error::Status(e.status())
    }
}

/// The kernel name (without `.kd`) of the loaded code object kernel whose kernel object is
/// `kernel_object`.
pub(crate) fn kernel_name_of(kernel_object: u64) -> Option<String> {
    loader::kernel_by_object(kernel_object)?
        .kernel_name()
        .map(str::to_owned)
}

// ---------------------------------------------------------------- links to the rest of the runtime

/// A registered native kernel as the built-in executable lists it.
pub(crate) struct NativeKernelEntry {
    pub name: String,
    pub object: u64,
}

fn native_kernels() -> Vec<NativeKernelEntry> {
    let mut v = Vec::new();
    crate::native::for_each(|name, object| {
        v.push(NativeKernelEntry {
            name: name.to_owned(),
            object,
        })
    });
    v
}

/// Handles of the agents that run kernels (GPU agents).
fn kernel_agents() -> Vec<u64> {
    crate::topology::system()
        .agents
        .iter()
        .filter(|a| a.kind() == crate::topology::AgentKind::Gpu)
        .map(|a| a.handle)
        .collect()
}

fn allocate_agent_memory(agent: hsa_agent_t, size: u64) -> Option<u64> {
    crate::memory::allocate_device(agent.handle, size as usize)
        .ok()
        .map(|p| p as u64)
}

fn free_agent_memory(base: u64, _size: u64) {
    if let Err(e) = crate::memory::free_device(base as *mut u8) {
        tracing::warn!("cannot free the agent memory of a loaded code object at {base:#x}: {e}");
    }
}

// ---------------------------------------------------------------- readers

/// Reads a code object from a file descriptor: `size` bytes from `offset`, or everything from
/// `offset` to the end.
pub(crate) fn read_fd(fd: hsa_file_t, offset: u64, size: Option<u64>) -> Result<Vec<u8>> {
    use std::os::fd::FromRawFd as _;
    use std::os::unix::fs::FileExt as _;
    if fd < 0 {
        return Err(Error::Status(HSA_STATUS_ERROR_INVALID_FILE));
    }
    // SAFETY: the descriptor belongs to the caller; ManuallyDrop keeps it open. Reads use
    // positioned I/O, so the caller's file offset does not move.
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let bad_file = |e: std::io::Error| {
        let range = match size {
            Some(n) => format!("bytes {offset}..{}", offset + n),
            None => format!("from byte {offset} to the end"),
        };
        tracing::warn!("cannot read the code object ({range}) from file descriptor {fd}: {e}");
        Error::Status(HSA_STATUS_ERROR_INVALID_FILE)
    };
    let mut bytes = Vec::new();
    match size {
        Some(size) => {
            // Check the range against the file first, so a bad size never allocates.
            let len = file.metadata().map_err(bad_file)?.len();
            if offset.checked_add(size).is_none_or(|end| end > len) {
                return Err(bad_file(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file is {len} bytes long"),
                )));
            }
            bytes.resize(size as usize, 0);
            file.read_exact_at(&mut bytes, offset).map_err(bad_file)?;
        }
        None => {
            let mut at = offset;
            let mut chunk = vec![0u8; 1 << 16];
            loop {
                let n = match file.read_at(&mut chunk, at) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(bad_file(e)),
                };
                if n == 0 {
                    break;
                }
                bytes.extend_from_slice(&chunk[..n]);
                at += n as u64;
            }
        }
    }
    Ok(bytes)
}

/// The URI of a code object read from a file descriptor.
pub(crate) fn file_uri(fd: hsa_file_t, offset: u64, size: usize) -> String {
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("fd{fd}"));
    format!("file://{path}#offset={offset}&size={size}")
}
