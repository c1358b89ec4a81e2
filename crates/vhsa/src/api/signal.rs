//! Entries of signals: creation, loads, stores, read-modify-write operations, waits, groups,
//! asynchronous handlers.

use crate::boundary::{c_slice, status_call, value_call, write_out};
use crate::error::Error;
use crate::open_state::ensure_open;
use crate::signal::{
    AsyncFunction, AsyncHandler, create, destroy, get, lookup, wait_any, wait_condition,
};
use hsa_abi::ffi::*;
use hsa_abi::{AmdExtTable, CoreApiTable};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

unsafe extern "C" fn hsa_signal_create_impl(
    initial: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    status_call("hsa_signal_create", || {
        ensure_open()?;
        if signal.is_null() {
            return Err(Error::InvalidArgument("signal is NULL"));
        }
        let consumers = c_slice(consumers, num_consumers as usize, "consumers is NULL")?;
        for (i, a) in consumers.iter().enumerate() {
            if consumers[..i].iter().any(|b| b.handle == a.handle) {
                return Err(Error::InvalidArgument("consumers lists an agent twice"));
            }
            crate::topology::agent(a.handle)?;
        }
        write_out(signal, create(initial)?, "signal is NULL")
    })
}

unsafe extern "C" fn hsa_amd_signal_create_impl(
    initial: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    _attributes: u64,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    // SAFETY: same contract as hsa_signal_create.
    unsafe { hsa_signal_create_impl(initial, num_consumers, consumers, signal) }
}

unsafe extern "C" fn hsa_signal_destroy_impl(signal: hsa_signal_t) -> hsa_status_t {
    status_call("hsa_signal_destroy", || {
        ensure_open()?;
        destroy(signal.handle)
    })
}

macro_rules! load_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || {
                lookup(signal.handle).map_or(0, |s| s.load())
            })
        }
    };
}
load_fn!(hsa_signal_load_relaxed_impl);
load_fn!(hsa_signal_load_scacquire_impl);

macro_rules! store_fn {
    ($name:ident, $silent:expr) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            value_call(stringify!($name), (), || {
                if let Some(s) = lookup(signal.handle) {
                    if $silent {
                        s.silent_store(value);
                    } else {
                        s.store(value);
                    }
                } else {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                }
            })
        }
    };
}
store_fn!(hsa_signal_store_relaxed_impl, false);
store_fn!(hsa_signal_store_screlease_impl, false);
store_fn!(hsa_signal_silent_store_relaxed_impl, true);
store_fn!(hsa_signal_silent_store_screlease_impl, true);

macro_rules! rmw_fn {
    ($name:ident, $op:ident, $ret:ty) => {
        unsafe extern "C" fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) -> $ret {
            value_call(stringify!($name), Default::default(), || {
                let Some(s) = lookup(signal.handle) else {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                    return Default::default();
                };
                let old = s.value().$op(value, Ordering::SeqCst);
                s.changed(true);
                let _ = old;
                #[allow(clippy::unused_unit)]
                rmw_result::<$ret>(old)
            })
        }
    };
}

trait RmwResult {
    fn from_old(old: i64) -> Self;
}
impl RmwResult for () {
    fn from_old(_: i64) -> Self {}
}
impl RmwResult for i64 {
    fn from_old(old: i64) -> Self {
        old
    }
}
fn rmw_result<T: RmwResult>(old: i64) -> T {
    T::from_old(old)
}

rmw_fn!(hsa_signal_and_relaxed_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_scacquire_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_screlease_impl, fetch_and, ());
rmw_fn!(hsa_signal_and_scacq_screl_impl, fetch_and, ());
rmw_fn!(hsa_signal_or_relaxed_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_scacquire_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_screlease_impl, fetch_or, ());
rmw_fn!(hsa_signal_or_scacq_screl_impl, fetch_or, ());
rmw_fn!(hsa_signal_xor_relaxed_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_scacquire_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_screlease_impl, fetch_xor, ());
rmw_fn!(hsa_signal_xor_scacq_screl_impl, fetch_xor, ());
rmw_fn!(hsa_signal_add_relaxed_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_scacquire_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_screlease_impl, fetch_add, ());
rmw_fn!(hsa_signal_add_scacq_screl_impl, fetch_add, ());
rmw_fn!(hsa_signal_subtract_relaxed_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_scacquire_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_screlease_impl, fetch_sub, ());
rmw_fn!(hsa_signal_subtract_scacq_screl_impl, fetch_sub, ());
rmw_fn!(hsa_signal_exchange_relaxed_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_scacquire_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_screlease_impl, swap, i64);
rmw_fn!(hsa_signal_exchange_scacq_screl_impl, swap, i64);

macro_rules! cas_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(
            signal: hsa_signal_t,
            expected: hsa_signal_value_t,
            value: hsa_signal_value_t,
        ) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || {
                let Some(s) = lookup(signal.handle) else {
                    return 0;
                };
                let old = match s.value().compare_exchange(
                    expected,
                    value,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(v) | Err(v) => v,
                };
                if old == expected {
                    s.changed(true);
                }
                old
            })
        }
    };
}
cas_fn!(hsa_signal_cas_relaxed_impl);
cas_fn!(hsa_signal_cas_scacquire_impl);
cas_fn!(hsa_signal_cas_screlease_impl);
cas_fn!(hsa_signal_cas_scacq_screl_impl);

macro_rules! wait_fn {
    ($name:ident) => {
        unsafe extern "C" fn $name(
            signal: hsa_signal_t,
            condition: hsa_signal_condition_t,
            compare_value: hsa_signal_value_t,
            timeout_hint: u64,
            _wait_state_hint: hsa_wait_state_t,
        ) -> hsa_signal_value_t {
            value_call(stringify!($name), 0, || match lookup(signal.handle) {
                Some(s) => wait_condition(s, condition, compare_value, timeout_hint),
                None => {
                    tracing::warn!("{}: unknown signal {:#x}", stringify!($name), signal.handle);
                    0
                }
            })
        }
    };
}
wait_fn!(hsa_signal_wait_relaxed_impl);
wait_fn!(hsa_signal_wait_scacquire_impl);

unsafe extern "C" fn hsa_amd_signal_wait_any_impl(
    signal_count: u32,
    signals: *mut hsa_signal_t,
    conds: *mut hsa_signal_condition_t,
    values: *mut hsa_signal_value_t,
    timeout_hint: u64,
    _wait_hint: hsa_wait_state_t,
    satisfying_value: *mut hsa_signal_value_t,
) -> u32 {
    value_call("hsa_amd_signal_wait_any", u32::MAX, || {
        let n = signal_count as usize;
        let (Ok(sig), Ok(c), Ok(v)) = (
            c_slice(signals, n, "signals"),
            c_slice(conds, n, "conds"),
            c_slice(values, n, "values"),
        ) else {
            return u32::MAX;
        };
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            match lookup(sig[i].handle) {
                Some(s) => list.push((s, c[i], v[i])),
                None => return u32::MAX,
            }
        }
        let (i, value) = wait_any(&list, timeout_hint);
        if i != u32::MAX && !satisfying_value.is_null() {
            let _ = write_out(satisfying_value, value, "satisfying_value");
        }
        i
    })
}

unsafe extern "C" fn hsa_signal_group_create_impl(
    num_signals: u32,
    signals: *const hsa_signal_t,
    _num_consumers: u32,
    _consumers: *const hsa_agent_t,
    group: *mut hsa_signal_group_t,
) -> hsa_status_t {
    status_call("hsa_signal_group_create", || {
        ensure_open()?;
        if group.is_null() {
            return Err(Error::InvalidArgument("signal_group is NULL"));
        }
        if num_signals == 0 {
            return Err(Error::InvalidArgument(
                "num_signals is 0: a signal group needs at least one signal",
            ));
        }
        let list = c_slice(signals, num_signals as usize, "signals is NULL")?;
        for s in list {
            get(s.handle)?;
        }
        let handle = crate::signal::group_create(list.iter().map(|s| s.handle).collect());
        write_out(group, hsa_signal_group_t { handle }, "signal_group")
    })
}

unsafe extern "C" fn hsa_signal_group_destroy_impl(group: hsa_signal_group_t) -> hsa_status_t {
    status_call("hsa_signal_group_destroy", || {
        ensure_open()?;
        crate::signal::group_destroy(group.handle)
    })
}

unsafe extern "C" fn hsa_signal_group_wait_any_impl(
    group: hsa_signal_group_t,
    conditions: *const hsa_signal_condition_t,
    compare_values: *const hsa_signal_value_t,
    _wait_state_hint: hsa_wait_state_t,
    signal: *mut hsa_signal_t,
    value: *mut hsa_signal_value_t,
) -> hsa_status_t {
    status_call("hsa_signal_group_wait_any", || {
        ensure_open()?;
        let handles = crate::signal::group_signals(group.handle)?;
        let n = handles.len();
        let c = c_slice(conditions, n, "conditions is NULL")?;
        let v = c_slice(compare_values, n, "compare_values is NULL")?;
        let mut list = Vec::with_capacity(n);
        for (i, h) in handles.iter().enumerate() {
            list.push((get(*h)?, c[i], v[i]));
        }
        let (i, val) = wait_any(&list, u64::MAX);
        if i == u32::MAX {
            return Err(Error::InvalidArgument(
                "a condition is unknown or a signal of the group was destroyed",
            ));
        }
        write_out(
            signal,
            hsa_signal_t {
                handle: handles[i as usize],
            },
            "signal is NULL",
        )?;
        write_out(value, val, "value is NULL")
    })
}

unsafe extern "C" fn hsa_amd_signal_async_handler_impl(
    signal: hsa_signal_t,
    cond: hsa_signal_condition_t,
    value: hsa_signal_value_t,
    handler: Option<AsyncHandler>,
    arg: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_signal_async_handler", || {
        ensure_open()?;
        let handler = handler.ok_or(Error::InvalidArgument("handler is NULL"))?;
        if cond > HSA_SIGNAL_CONDITION_GTE {
            return Err(Error::InvalidArgument("unknown signal condition"));
        }
        let s = get(signal.handle)?;
        crate::signal::add_watch(s, cond, value, handler, arg)
    })
}

unsafe extern "C" fn hsa_amd_async_function_impl(
    function: Option<AsyncFunction>,
    arg: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_amd_async_function", || {
        ensure_open()?;
        let f = function.ok_or(Error::InvalidArgument("callback is NULL"))?;
        crate::signal::add_function(f, arg)
    })
}

unsafe extern "C" fn hsa_amd_signal_value_pointer_impl(
    signal: hsa_signal_t,
    value_ptr: *mut *mut hsa_signal_value_t,
) -> hsa_status_t {
    status_call("hsa_amd_signal_value_pointer", || {
        ensure_open()?;
        let s = get(signal.handle)?;
        write_out(value_ptr, s.value().as_ptr(), "value_ptr is NULL")
    })
}

/// Fills this module's slots.
pub(crate) fn install(core: &mut CoreApiTable, amd: &mut AmdExtTable) {
    core.hsa_signal_create_fn = Some(hsa_signal_create_impl);
    core.hsa_signal_destroy_fn = Some(hsa_signal_destroy_impl);
    core.hsa_signal_load_relaxed_fn = Some(hsa_signal_load_relaxed_impl);
    core.hsa_signal_load_scacquire_fn = Some(hsa_signal_load_scacquire_impl);
    core.hsa_signal_store_relaxed_fn = Some(hsa_signal_store_relaxed_impl);
    core.hsa_signal_store_screlease_fn = Some(hsa_signal_store_screlease_impl);
    core.hsa_signal_silent_store_relaxed_fn = Some(hsa_signal_silent_store_relaxed_impl);
    core.hsa_signal_silent_store_screlease_fn = Some(hsa_signal_silent_store_screlease_impl);
    core.hsa_signal_wait_relaxed_fn = Some(hsa_signal_wait_relaxed_impl);
    core.hsa_signal_wait_scacquire_fn = Some(hsa_signal_wait_scacquire_impl);
    core.hsa_signal_and_relaxed_fn = Some(hsa_signal_and_relaxed_impl);
    core.hsa_signal_and_scacquire_fn = Some(hsa_signal_and_scacquire_impl);
    core.hsa_signal_and_screlease_fn = Some(hsa_signal_and_screlease_impl);
    core.hsa_signal_and_scacq_screl_fn = Some(hsa_signal_and_scacq_screl_impl);
    core.hsa_signal_or_relaxed_fn = Some(hsa_signal_or_relaxed_impl);
    core.hsa_signal_or_scacquire_fn = Some(hsa_signal_or_scacquire_impl);
    core.hsa_signal_or_screlease_fn = Some(hsa_signal_or_screlease_impl);
    core.hsa_signal_or_scacq_screl_fn = Some(hsa_signal_or_scacq_screl_impl);
    core.hsa_signal_xor_relaxed_fn = Some(hsa_signal_xor_relaxed_impl);
    core.hsa_signal_xor_scacquire_fn = Some(hsa_signal_xor_scacquire_impl);
    core.hsa_signal_xor_screlease_fn = Some(hsa_signal_xor_screlease_impl);
    core.hsa_signal_xor_scacq_screl_fn = Some(hsa_signal_xor_scacq_screl_impl);
    core.hsa_signal_add_relaxed_fn = Some(hsa_signal_add_relaxed_impl);
    core.hsa_signal_add_scacquire_fn = Some(hsa_signal_add_scacquire_impl);
    core.hsa_signal_add_screlease_fn = Some(hsa_signal_add_screlease_impl);
    core.hsa_signal_add_scacq_screl_fn = Some(hsa_signal_add_scacq_screl_impl);
    core.hsa_signal_subtract_relaxed_fn = Some(hsa_signal_subtract_relaxed_impl);
    core.hsa_signal_subtract_scacquire_fn = Some(hsa_signal_subtract_scacquire_impl);
    core.hsa_signal_subtract_screlease_fn = Some(hsa_signal_subtract_screlease_impl);
    core.hsa_signal_subtract_scacq_screl_fn = Some(hsa_signal_subtract_scacq_screl_impl);
    core.hsa_signal_exchange_relaxed_fn = Some(hsa_signal_exchange_relaxed_impl);
    core.hsa_signal_exchange_scacquire_fn = Some(hsa_signal_exchange_scacquire_impl);
    core.hsa_signal_exchange_screlease_fn = Some(hsa_signal_exchange_screlease_impl);
    core.hsa_signal_exchange_scacq_screl_fn = Some(hsa_signal_exchange_scacq_screl_impl);
    core.hsa_signal_cas_relaxed_fn = Some(hsa_signal_cas_relaxed_impl);
    core.hsa_signal_cas_scacquire_fn = Some(hsa_signal_cas_scacquire_impl);
    core.hsa_signal_cas_screlease_fn = Some(hsa_signal_cas_screlease_impl);
    core.hsa_signal_cas_scacq_screl_fn = Some(hsa_signal_cas_scacq_screl_impl);
    core.hsa_signal_group_create_fn = Some(hsa_signal_group_create_impl);
    core.hsa_signal_group_destroy_fn = Some(hsa_signal_group_destroy_impl);
    core.hsa_signal_group_wait_any_scacquire_fn = Some(hsa_signal_group_wait_any_impl);
    core.hsa_signal_group_wait_any_relaxed_fn = Some(hsa_signal_group_wait_any_impl);
    amd.hsa_amd_signal_create_fn = Some(hsa_amd_signal_create_impl);
    amd.hsa_amd_signal_async_handler_fn = Some(hsa_amd_signal_async_handler_impl);
    amd.hsa_amd_async_function_fn = Some(hsa_amd_async_function_impl);
    amd.hsa_amd_signal_wait_any_fn = Some(hsa_amd_signal_wait_any_impl);
    amd.hsa_amd_signal_value_pointer_fn = Some(hsa_amd_signal_value_pointer_impl);
}
