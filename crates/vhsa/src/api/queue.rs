//! Entries of queues: creation and destruction, the index functions, profiling, CU masks.

use crate::boundary::{c_slice, status_call, value_call, write_out};
use crate::error::Error;
use crate::open_state::ensure_open;
use crate::queue::{Queue, QueueSpec, create, lookup, validate};
use hsa_abi::ffi::*;
use hsa_abi::modern::hsa_queue_error_callback as QueueCallback;
use hsa_abi::{AmdExtTable, CoreApiTable};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

unsafe extern "C" fn hsa_queue_create_impl(
    agent: hsa_agent_t,
    size: u32,
    type_: hsa_queue_type32_t,
    callback: QueueCallback,
    data: *mut c_void,
    private_segment_size: u32,
    _group_segment_size: u32,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    status_call("hsa_queue_create", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        validate(agent.handle, size, type_, private_segment_size)?;
        let q = create(QueueSpec {
            agent: agent.handle,
            size,
            queue_type: type_,
            error_callback: callback,
            error_data: data,
            executor: Some(super::executor()),
        })?;
        write_out(queue, q, "queue is NULL")
    })
}

unsafe extern "C" fn hsa_queue_destroy_impl(queue: *mut hsa_queue_t) -> hsa_status_t {
    status_call("hsa_queue_destroy", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        if crate::intercept::of(queue).is_some() {
            crate::intercept::destroy(queue)
        } else {
            crate::queue::destroy(queue)
        }
    })
}

unsafe extern "C" fn hsa_queue_inactivate_impl(queue: *mut hsa_queue_t) -> hsa_status_t {
    status_call("hsa_queue_inactivate", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        lookup(queue)?.inactive.store(true, Ordering::SeqCst);
        Ok(())
    })
}

unsafe extern "C" fn hsa_soft_queue_create_impl(
    _region: hsa_region_t,
    _size: u32,
    _type: hsa_queue_type32_t,
    _features: u32,
    _doorbell: hsa_signal_t,
    _queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    status_call("hsa_soft_queue_create", || {
        ensure_open()?;
        Err(Error::InvalidQueueCreation(
            "soft queues (agent dispatch) are not supported by vhsa",
        ))
    })
}

/// Queue pointer from C, for the index functions (NULL-checked; not looked up, as in ROCR).
#[inline]
fn q<'a>(queue: *const hsa_queue_t) -> Option<&'a Queue> {
    // SAFETY: a non-NULL queue pointer from C was returned by this runtime's queue creation.
    (!queue.is_null()).then(|| unsafe { &*queue.cast::<Queue>() })
}

macro_rules! load_index {
    ($name:ident, $field:ident) => {
        unsafe extern "C" fn $name(queue: *const hsa_queue_t) -> u64 {
            value_call(stringify!($name), 0, || {
                q(queue).map_or(0, |q| q.$field().load(Ordering::SeqCst))
            })
        }
    };
}
load_index!(hsa_queue_load_read_index_scacquire_impl, read_index);
load_index!(hsa_queue_load_read_index_relaxed_impl, read_index);
load_index!(hsa_queue_load_write_index_scacquire_impl, write_index);
load_index!(hsa_queue_load_write_index_relaxed_impl, write_index);

macro_rules! store_index {
    ($name:ident, $field:ident) => {
        unsafe extern "C" fn $name(queue: *const hsa_queue_t, value: u64) {
            value_call(stringify!($name), (), || {
                if let Some(q) = q(queue) {
                    q.$field().store(value, Ordering::SeqCst)
                }
            })
        }
    };
}
store_index!(hsa_queue_store_write_index_relaxed_impl, write_index);
store_index!(hsa_queue_store_write_index_screlease_impl, write_index);
store_index!(hsa_queue_store_read_index_relaxed_impl, read_index);
store_index!(hsa_queue_store_read_index_screlease_impl, read_index);

macro_rules! cas_index {
    ($name:ident) => {
        unsafe extern "C" fn $name(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 {
            value_call(stringify!($name), 0, || {
                q(queue).map_or(0, |q| {
                    match q.write_index().compare_exchange(
                        expected,
                        value,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    ) {
                        Ok(v) | Err(v) => v,
                    }
                })
            })
        }
    };
}
cas_index!(hsa_queue_cas_write_index_scacq_screl_impl);
cas_index!(hsa_queue_cas_write_index_scacquire_impl);
cas_index!(hsa_queue_cas_write_index_relaxed_impl);
cas_index!(hsa_queue_cas_write_index_screlease_impl);

macro_rules! add_index {
    ($name:ident) => {
        unsafe extern "C" fn $name(queue: *const hsa_queue_t, value: u64) -> u64 {
            value_call(stringify!($name), 0, || {
                q(queue).map_or(0, |q| q.write_index().fetch_add(value, Ordering::SeqCst))
            })
        }
    };
}
add_index!(hsa_queue_add_write_index_scacq_screl_impl);
add_index!(hsa_queue_add_write_index_scacquire_impl);
add_index!(hsa_queue_add_write_index_relaxed_impl);
add_index!(hsa_queue_add_write_index_screlease_impl);

unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled_impl(
    queue: *mut hsa_queue_t,
    enable: i32,
) -> hsa_status_t {
    status_call("hsa_amd_profiling_set_profiler_enabled", || {
        ensure_open()?;
        if queue.is_null() {
            return Err(Error::InvalidArgument("queue is NULL"));
        }
        let qq = lookup(queue)?;
        qq.profiling.store(enable != 0, Ordering::SeqCst);
        if let Some(i) = crate::intercept::of(queue) {
            lookup(i.hardware)?
                .profiling
                .store(enable != 0, Ordering::SeqCst);
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time_impl(
    agent: hsa_agent_t,
    signal: hsa_signal_t,
    time: *mut hsa_amd_profiling_dispatch_time_t,
) -> hsa_status_t {
    status_call("hsa_amd_profiling_get_dispatch_time", || {
        ensure_open()?;
        crate::topology::agent(agent.handle)?;
        let s = crate::signal::get(signal.handle)?;
        let (start, end) = s.times();
        let t = hsa_amd_profiling_dispatch_time_t { start, end };
        write_out(time, t, "time is NULL")
    })
}

unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain_impl(
    agent: hsa_agent_t,
    agent_tick: u64,
    system_tick: *mut u64,
) -> hsa_status_t {
    status_call("hsa_amd_profiling_convert_tick_to_system_domain", || {
        ensure_open()?;
        crate::topology::agent(agent.handle)?;
        write_out(system_tick, agent_tick, "system_tick is NULL")
    })
}

unsafe extern "C" fn hsa_amd_queue_cu_set_mask_impl(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *const u32,
) -> hsa_status_t {
    status_call("hsa_amd_queue_cu_set_mask", || {
        ensure_open()?;
        lookup(queue)?;
        c_slice(cu_mask, num_cu_mask_count as usize, "cu_mask is NULL")?;
        if !num_cu_mask_count.is_multiple_of(32) {
            return Err(Error::InvalidArgument(
                "num_cu_mask_count counts bits and must be a multiple of 32",
            ));
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_queue_cu_get_mask_impl(
    queue: *const hsa_queue_t,
    num_cu_mask_count: u32,
    cu_mask: *mut u32,
) -> hsa_status_t {
    status_call("hsa_amd_queue_cu_get_mask", || {
        ensure_open()?;
        lookup(queue)?;
        if cu_mask.is_null() {
            return Err(Error::InvalidArgument("cu_mask is NULL"));
        }
        for i in 0..num_cu_mask_count as usize {
            // SAFETY: the caller provides `num_cu_mask_count` words.
            unsafe { cu_mask.add(i).write(u32::MAX) };
        }
        Ok(())
    })
}

unsafe extern "C" fn hsa_amd_queue_set_priority_impl(
    queue: *mut hsa_queue_t,
    _priority: hsa_amd_queue_priority_t,
) -> hsa_status_t {
    status_call("hsa_amd_queue_set_priority", || {
        ensure_open()?;
        lookup(queue)?;
        Ok(())
    })
}

/// Fills this module's slots.
pub(crate) fn install(core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    core.hsa_queue_create_fn = Some(hsa_queue_create_impl);
    core.hsa_soft_queue_create_fn = Some(hsa_soft_queue_create_impl);
    core.hsa_queue_destroy_fn = Some(hsa_queue_destroy_impl);
    core.hsa_queue_inactivate_fn = Some(hsa_queue_inactivate_impl);
    core.hsa_queue_load_read_index_scacquire_fn = Some(hsa_queue_load_read_index_scacquire_impl);
    core.hsa_queue_load_read_index_relaxed_fn = Some(hsa_queue_load_read_index_relaxed_impl);
    core.hsa_queue_load_write_index_scacquire_fn = Some(hsa_queue_load_write_index_scacquire_impl);
    core.hsa_queue_load_write_index_relaxed_fn = Some(hsa_queue_load_write_index_relaxed_impl);
    core.hsa_queue_store_write_index_relaxed_fn = Some(hsa_queue_store_write_index_relaxed_impl);
    core.hsa_queue_store_write_index_screlease_fn =
        Some(hsa_queue_store_write_index_screlease_impl);
    core.hsa_queue_cas_write_index_scacq_screl_fn =
        Some(hsa_queue_cas_write_index_scacq_screl_impl);
    core.hsa_queue_cas_write_index_scacquire_fn = Some(hsa_queue_cas_write_index_scacquire_impl);
    core.hsa_queue_cas_write_index_relaxed_fn = Some(hsa_queue_cas_write_index_relaxed_impl);
    core.hsa_queue_cas_write_index_screlease_fn = Some(hsa_queue_cas_write_index_screlease_impl);
    core.hsa_queue_add_write_index_scacq_screl_fn =
        Some(hsa_queue_add_write_index_scacq_screl_impl);
    core.hsa_queue_add_write_index_scacquire_fn = Some(hsa_queue_add_write_index_scacquire_impl);
    core.hsa_queue_add_write_index_relaxed_fn = Some(hsa_queue_add_write_index_relaxed_impl);
    core.hsa_queue_add_write_index_screlease_fn = Some(hsa_queue_add_write_index_screlease_impl);
    core.hsa_queue_store_read_index_relaxed_fn = Some(hsa_queue_store_read_index_relaxed_impl);
    core.hsa_queue_store_read_index_screlease_fn = Some(hsa_queue_store_read_index_screlease_impl);
    amd.hsa_amd_profiling_set_profiler_enabled_fn =
        Some(hsa_amd_profiling_set_profiler_enabled_impl);
    amd.hsa_amd_profiling_get_dispatch_time_fn = Some(hsa_amd_profiling_get_dispatch_time_impl);
    amd.hsa_amd_profiling_convert_tick_to_system_domain_fn =
        Some(hsa_amd_profiling_convert_tick_to_system_domain_impl);
    amd.hsa_amd_queue_cu_set_mask_fn = Some(hsa_amd_queue_cu_set_mask_impl);
    amd.hsa_amd_queue_cu_get_mask_fn = Some(hsa_amd_queue_cu_get_mask_impl);
    amd.hsa_amd_queue_set_priority_fn = Some(hsa_amd_queue_set_priority_impl);
}
