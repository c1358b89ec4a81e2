//! Counters of the packets the command processors completed, for `vkfd_stats`.

use hsa_abi::ffi::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Kernel dispatches completed.
pub(crate) static DISPATCHES: AtomicU64 = AtomicU64::new(0);
/// Barrier packets (AND, OR, barrier value) completed.
pub(crate) static BARRIERS: AtomicU64 = AtomicU64::new(0);

/// Counts one completed packet of `packet_type`.
pub(crate) fn count(packet_type: u32) {
    match packet_type {
        HSA_PACKET_TYPE_KERNEL_DISPATCH => DISPATCHES.fetch_add(1, Ordering::Relaxed),
        HSA_PACKET_TYPE_BARRIER_AND
        | HSA_PACKET_TYPE_BARRIER_OR
        | HSA_PACKET_TYPE_VENDOR_SPECIFIC => BARRIERS.fetch_add(1, Ordering::Relaxed),
        _ => 0,
    };
}
