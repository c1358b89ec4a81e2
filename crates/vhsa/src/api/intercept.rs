//! Entries of intercept queues (`hsa_amd_queue_intercept_create`/`register`).

use crate::boundary::{status_call, write_out};
use crate::error::Error;
use crate::open_state::ensure_open;
use hsa_abi::ffi::*;
use hsa_abi::modern::{hsa_amd_queue_intercept_handler, hsa_queue_error_callback as QueueCallback};
use hsa_abi::{AmdExtTable, CoreApiTable};
use std::ffi::c_void;

unsafe extern "C" fn hsa_amd_queue_intercept_create_impl(
    agent: hsa_agent_t,
    size: u32,
    type_: hsa_queue_type32_t,
    callback: QueueCallback,
    data: *mut c_void,
    private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    status_call("hsa_amd_queue_intercept_create", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        // The real runtime creates the wrapped queue through hsa_queue_create's checks.
        crate::queue::validate(agent.handle, size, type_, private_segment_size)?;
        let q =
            crate::intercept::create(agent.handle, size, type_, callback, data, super::executor())?;
        write_out(queue, q, "queue is NULL")
    })
}

unsafe extern "C" fn hsa_amd_queue_intercept_register_impl(
    queue: *mut hsa_queue_t,
    callback: hsa_amd_queue_intercept_handler,
    user_data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_queue_intercept_register", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        let handler = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        crate::queue::lookup(queue)?;
        crate::intercept::register(queue, handler, user_data)
    })
}

/// Fills this module's slots.
pub(crate) fn install(_core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    amd.hsa_amd_queue_intercept_create_fn = Some(hsa_amd_queue_intercept_create_impl);
    amd.hsa_amd_queue_intercept_register_fn = Some(hsa_amd_queue_intercept_register_impl);
}
