//! Queues: AQL compute queues served by a command processor each. SDMA and other queue types
//! are not provided (ROCR then copies with its blit kernels).

use super::ensure_open;
use crate::boundary::{guard, out, slice};
use crate::error::Error;
use crate::ffi::*;
use std::ffi::c_void;

/// Creates an AQL queue on a GPU node and starts its command processor.
///
/// # Safety
///
/// `resource` is NULL or readable and writable (ROCR passes the read and write pointers in it).
pub unsafe extern "C" fn hsaKmtCreateQueue(
    node: HSAuint32,
    queue_type: HSA_QUEUE_TYPE,
    percentage: HSAuint32,
    _priority: HSA_QUEUE_PRIORITY,
    ring: *mut c_void,
    ring_bytes: HSAuint64,
    _event: *mut HsaEvent,
    resource: *mut HsaQueueResource,
) -> HSAKMT_STATUS {
    guard("hsaKmtCreateQueue", || {
        ensure_open()?;
        if queue_type != HSA_QUEUE_COMPUTE_AQL {
            return Err(Error::NotSupported(
                "queues other than AQL compute queues (no SDMA engine)",
            ));
        }
        if percentage > 100 {
            return Err(Error::InvalidParameter("queue percentage"));
        }
        // SAFETY: the caller's promise.
        let r = unsafe { out(resource, "queue resource") }?;
        // SAFETY: the pointer members of the union are 64-bit addresses.
        let read_pointer = unsafe { r.__bindgen_anon_3.QueueRptrValue };
        let (id, doorbell) = crate::cp::create(crate::cp::QueueSpec {
            node,
            ring: ring as u64,
            ring_bytes,
            read_pointer,
        })?;
        r.QueueId = id;
        r.__bindgen_anon_1.QueueDoorBell = doorbell;
        if percentage == 0 {
            crate::cp::update(id, 0)?;
        }
        crate::cp::wake_all();
        Ok(())
    })
}

/// Suspends (`percentage` 0) or resumes a queue.
pub extern "C" fn hsaKmtUpdateQueue(
    id: HSA_QUEUEID,
    percentage: HSAuint32,
    _priority: HSA_QUEUE_PRIORITY,
    _ring: *mut c_void,
    _ring_bytes: HSAuint64,
    _event: *mut HsaEvent,
) -> HSAKMT_STATUS {
    guard("hsaKmtUpdateQueue", || {
        if percentage > 100 {
            return Err(Error::InvalidParameter("queue percentage"));
        }
        crate::cp::update(id, percentage)
    })
}

/// Gives a queue `count` global wave sync (GWS) entries, as ROCR asks for its cooperative
/// queue; the first is entry 0. The emulator keeps no GWS state to allocate: `ds_gws_init` needs
/// none, and `ds_gws_barrier` counts the waves of the dispatch waiting there (`docs/emulator.md`).
///
/// # Safety
///
/// `first` is NULL or writable.
pub unsafe extern "C" fn hsaKmtAllocQueueGWS(
    id: HSA_QUEUEID,
    count: HSAuint32,
    first: *mut HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtAllocQueueGWS", || {
        // SAFETY: the caller's promise.
        let first = unsafe { out(first, "first GWS entry") }?;
        if count == 0 || count > u32::from(crate::topology::GWS_ENTRIES) {
            return Err(Error::InvalidParameter("GWS entry count"));
        }
        crate::cp::get(id)?;
        *first = 0;
        Ok(())
    })
}

/// Destroys a queue; a running dispatch is abandoned.
pub extern "C" fn hsaKmtDestroyQueue(id: HSA_QUEUEID) -> HSAKMT_STATUS {
    guard("hsaKmtDestroyQueue", || crate::cp::destroy(id))
}

/// Records a queue's CU mask (the emulator places waves on its own).
///
/// # Safety
///
/// `mask` is NULL or readable for `bits / 32` words.
pub unsafe extern "C" fn hsaKmtSetQueueCUMask(
    id: HSA_QUEUEID,
    bits: HSAuint32,
    mask: *mut HSAuint32,
) -> HSAKMT_STATUS {
    guard("hsaKmtSetQueueCUMask", || {
        if bits == 0 || !bits.is_multiple_of(32) {
            return Err(Error::InvalidParameter("CU mask bit count"));
        }
        // SAFETY: the caller's promise.
        let words = unsafe { slice(mask.cast_const(), (bits / 32) as usize, "CU mask") }?;
        *crate::cp::get(id)?.cu_mask.lock() = words.to_vec();
        Ok(())
    })
}
