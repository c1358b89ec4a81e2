//! Topology: system, node, memory-bank, cache and IO-link properties.

use super::ensure_open;
use crate::boundary::{guard, out};
use crate::error::Error;
use crate::ffi::*;

/// Takes a snapshot of the topology (built from `VKFD_AGENTS`).
///
/// # Safety
///
/// `props` is NULL or writable.
pub unsafe extern "C" fn hsaKmtAcquireSystemProperties(
    props: *mut HsaSystemProperties,
) -> HSAKMT_STATUS {
    guard("hsaKmtAcquireSystemProperties", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let p = unsafe { out(props, "system properties") }?;
        let t = crate::topology::acquire();
        *p = HsaSystemProperties {
            NumNodes: t.nodes.len() as u32,
            PlatformOem: 0x414d44,
            PlatformId: 0x564b4644,
            PlatformRev: 1,
        };
        Ok(())
    })
}

/// Drops the snapshot.
pub extern "C" fn hsaKmtReleaseSystemProperties() -> HSAKMT_STATUS {
    guard("hsaKmtReleaseSystemProperties", || {
        crate::topology::release();
        Ok(())
    })
}

/// A node's properties.
///
/// # Safety
///
/// `props` is NULL or writable.
pub unsafe extern "C" fn hsaKmtGetNodeProperties(
    node: HSAuint32,
    props: *mut HsaNodeProperties,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetNodeProperties", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let p = unsafe { out(props, "node properties") }?;
        *p = crate::topology::node_properties(node)?;
        Ok(())
    })
}

/// Copies the first `n` of `items` to `dst` (`n` may exceed the node's count: the rest is left
/// alone, as the real thunk does).
///
/// # Safety
///
/// `dst` is NULL or writable for `n` elements.
unsafe fn copy_out<T: Copy>(dst: *mut T, n: u32, items: &[T]) -> crate::error::Result<()> {
    if n == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(Error::InvalidParameter("property array"));
    }
    for (i, item) in items.iter().take(n as usize).enumerate() {
        // SAFETY: `i < n`, inside the caller's array.
        unsafe { dst.add(i).write_unaligned(*item) };
    }
    Ok(())
}

/// A node's memory banks.
///
/// # Safety
///
/// `props` is NULL or writable for `n` elements.
pub unsafe extern "C" fn hsaKmtGetNodeMemoryProperties(
    node: HSAuint32,
    n: HSAuint32,
    props: *mut HsaMemoryProperties,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetNodeMemoryProperties", || {
        ensure_open()?;
        let banks = crate::topology::memory_properties(node)?;
        // SAFETY: the caller's promise.
        unsafe { copy_out(props, n, &banks) }
    })
}

/// A node's caches.
///
/// # Safety
///
/// `props` is NULL or writable for `n` elements.
pub unsafe extern "C" fn hsaKmtGetNodeCacheProperties(
    node: HSAuint32,
    processor_id: HSAuint32,
    n: HSAuint32,
    props: *mut HsaCacheProperties,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetNodeCacheProperties", || {
        ensure_open()?;
        let caches = crate::topology::cache_properties(node, processor_id)?;
        // SAFETY: the caller's promise.
        unsafe { copy_out(props, n, &caches) }
    })
}

/// A node's IO links.
///
/// # Safety
///
/// `props` is NULL or writable for `n` elements.
pub unsafe extern "C" fn hsaKmtGetNodeIoLinkProperties(
    node: HSAuint32,
    n: HSAuint32,
    props: *mut HsaIoLinkProperties,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetNodeIoLinkProperties", || {
        ensure_open()?;
        let links = crate::topology::io_links(node)?;
        // SAFETY: the caller's promise.
        unsafe { copy_out(props, n, &links) }
    })
}
