//! Memory: allocation, registration of host memory, GPU mappings, pointer info, user data.

use super::ensure_open;
use crate::boundary::{guard, out, slice};
use crate::error::Error;
use crate::ffi::*;
use crate::vm::Kind;
use std::ffi::c_void;

fn flags_value(flags: HsaMemFlags) -> u32 {
    // SAFETY: both union members are 32 bits of plain data.
    unsafe { flags.__bindgen_anon_1.Value }
}

/// Allocates memory for a node; `*address` receives it (GPU address = CPU address).
///
/// # Safety
///
/// `address` is NULL or writable.
pub unsafe extern "C" fn hsaKmtAllocMemory(
    node: HSAuint32,
    size: HSAuint64,
    flags: HsaMemFlags,
    address: *mut *mut c_void,
) -> HSAKMT_STATUS {
    guard("hsaKmtAllocMemory", || {
        ensure_open()?;
        crate::topology::node(node)?;
        // SAFETY: the caller's promise.
        let slot = unsafe { out(address, "address out-pointer") }?;
        *slot = crate::vm::allocate(node, size, flags_value(flags))? as *mut c_void;
        Ok(())
    })
}

/// Frees an allocation; decoded code in it is forgotten.
pub extern "C" fn hsaKmtFreeMemory(address: *mut c_void, _size: HSAuint64) -> HSAKMT_STATUS {
    guard("hsaKmtFreeMemory", || {
        let (start, size, executable) = crate::vm::release(address as u64, Kind::Allocated)?;
        if executable {
            crate::dispatch::forget(start..start + size);
        }
        Ok(())
    })
}

/// Registers host memory for every GPU.
pub extern "C" fn hsaKmtRegisterMemory(address: *mut c_void, size: HSAuint64) -> HSAKMT_STATUS {
    guard("hsaKmtRegisterMemory", || {
        ensure_open()?;
        crate::vm::register(address as u64, size, &[])
    })
}

/// Registers host memory for some nodes.
///
/// # Safety
///
/// `nodes` is NULL or readable for `n` elements.
pub unsafe extern "C" fn hsaKmtRegisterMemoryToNodes(
    address: *mut c_void,
    size: HSAuint64,
    n: HSAuint64,
    nodes: *mut HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtRegisterMemoryToNodes", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let nodes = unsafe { slice(nodes.cast_const(), n as usize, "node list") }?;
        crate::vm::register(address as u64, size, nodes)
    })
}

/// Registers host memory with allocation flags (the flags change nothing for host memory).
pub extern "C" fn hsaKmtRegisterMemoryWithFlags(
    address: *mut c_void,
    size: HSAuint64,
    _flags: HsaMemFlags,
) -> HSAKMT_STATUS {
    guard("hsaKmtRegisterMemoryWithFlags", || {
        ensure_open()?;
        crate::vm::register(address as u64, size, &[])
    })
}

/// Drops a registration.
pub extern "C" fn hsaKmtDeregisterMemory(address: *mut c_void) -> HSAKMT_STATUS {
    guard("hsaKmtDeregisterMemory", || {
        crate::vm::release(address as u64, Kind::Registered).map(|_| ())
    })
}

/// Maps memory to every GPU; `*gpu_address` receives its GPU address.
///
/// # Safety
///
/// `gpu_address` is NULL or writable.
pub unsafe extern "C" fn hsaKmtMapMemoryToGPU(
    address: *mut c_void,
    _size: HSAuint64,
    gpu_address: *mut HSAuint64,
) -> HSAKMT_STATUS {
    guard("hsaKmtMapMemoryToGPU", || {
        ensure_open()?;
        let va = crate::vm::map(address as u64, &[])?;
        // SAFETY: the caller's promise (the out-pointer is optional).
        if let Some(o) = unsafe { gpu_address.as_mut() } {
            *o = va;
        }
        Ok(())
    })
}

/// Maps memory to some GPUs; `*gpu_address` receives its GPU address.
///
/// # Safety
///
/// `gpu_address` is NULL or writable; `nodes` is NULL or readable for `n` elements.
pub unsafe extern "C" fn hsaKmtMapMemoryToGPUNodes(
    address: *mut c_void,
    _size: HSAuint64,
    gpu_address: *mut HSAuint64,
    _flags: HsaMemMapFlags,
    n: HSAuint64,
    nodes: *mut HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtMapMemoryToGPUNodes", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let nodes = unsafe { slice(nodes.cast_const(), n as usize, "node list") }?;
        for &node in nodes {
            crate::topology::node(node)?;
        }
        let va = crate::vm::map(address as u64, nodes)?;
        // SAFETY: the caller's promise (the out-pointer is optional).
        if let Some(o) = unsafe { gpu_address.as_mut() } {
            *o = va;
        }
        Ok(())
    })
}

/// Unmaps memory from every GPU.
pub extern "C" fn hsaKmtUnmapMemoryToGPU(address: *mut c_void) -> HSAKMT_STATUS {
    guard("hsaKmtUnmapMemoryToGPU", || {
        crate::vm::unmap(address as u64)
    })
}

/// What the thunk knows about the memory holding `address`.
///
/// # Safety
///
/// `info` is NULL or writable.
pub unsafe extern "C" fn hsaKmtQueryPointerInfo(
    address: *const c_void,
    info: *mut HsaPointerInfo,
) -> HSAKMT_STATUS {
    guard("hsaKmtQueryPointerInfo", || {
        // SAFETY: the caller's promise.
        let info = unsafe { out(info, "pointer info") }?;
        crate::vm::pointer_info(address as u64, info)
    })
}

/// Attaches the runtime's user data to the memory holding `address`.
pub extern "C" fn hsaKmtSetMemoryUserData(
    address: *const c_void,
    data: *mut c_void,
) -> HSAKMT_STATUS {
    guard("hsaKmtSetMemoryUserData", || {
        crate::vm::set_user_data(address as u64, data as usize)
    })
}

/// Caching policy of a node's memory: accepted and ignored (host memory is coherent).
pub extern "C" fn hsaKmtSetMemoryPolicy(
    node: HSAuint32,
    default_policy: HSAuint32,
    alternate_policy: HSAuint32,
    _alternate_base: *mut c_void,
    _alternate_size: HSAuint64,
) -> HSAKMT_STATUS {
    guard("hsaKmtSetMemoryPolicy", || {
        crate::topology::node(node)?;
        if default_policy > 3 || alternate_policy > 3 {
            return Err(Error::InvalidParameter("cache policy"));
        }
        Ok(())
    })
}
