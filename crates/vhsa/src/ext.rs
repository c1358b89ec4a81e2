//! The vhsa C extension (`include/vhsa.h`): native kernels, statistics, fault injection, the
//! shader-data records of emulated dispatches.
//!
//! Every function is safe to call before `hsa_init` and from any thread.

#![allow(non_camel_case_types)]

use crate::boundary::value_call;
use hsa_abi::ffi::{
    HSA_STATUS_ERROR, HSA_STATUS_ERROR_INVALID_ARGUMENT, HSA_STATUS_SUCCESS,
    hsa_kernel_dispatch_packet_t, hsa_status_t,
};
use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::Ordering;

/// A native kernel: called once per dispatch, on the queue's packet-processor thread, with the
/// dispatch packet (valid for the call only); it loops over the grid itself.
pub type vhsa_native_kernel_fn = Option<
    unsafe extern "C" fn(packet: *const hsa_kernel_dispatch_packet_t, user_data: *mut c_void),
>;

/// Registers a native kernel under `name` (copied) and returns a kernel object usable in
/// dispatch packets, or 0 when `name` or `fn` is NULL. A kernel symbol of a loaded code object
/// whose name matches a registered native kernel dispatches to it. `user_data` is passed back
/// unchanged and is owned by the caller. Registrations live until the process exits.
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vhsa_native_kernel_create(
    name: *const c_char,
    r#fn: vhsa_native_kernel_fn,
    user_data: *mut c_void,
) -> u64 {
    value_call("vhsa_native_kernel_create", 0, || {
        let Some(f) = r#fn else { return 0 };
        if name.is_null() {
            return 0;
        }
        // SAFETY: non-NULL; the caller passes a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        crate::native::register(&name, f, user_data)
    })
}

/// The host address of agent address `ptr`, for native kernels, which run on the host. Agents
/// reach locked memory (`hsa_amd_memory_lock`) at an address of its own, which the host cannot
/// dereference; this returns the host address of the same bytes. Any other address (device,
/// fine-grained and kernel-argument memory, whose agent and host addresses are one, NULL, or
/// an address vhsa does not know) comes back unchanged.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_host_address(ptr: *const c_void) -> *mut c_void {
    value_call("vhsa_host_address", ptr.cast_mut(), || {
        crate::memory::host_address_if_locked(ptr as usize) as *mut c_void
    })
}

/// Counters since load or the last `vhsa_stats_reset`. The caller sets `size`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct vhsa_stats_t {
    /// Caller sets `sizeof(vhsa_stats_t)`.
    pub size: u64,
    /// Bytes copied from host to device memory.
    pub bytes_host_to_device: u64,
    /// Bytes copied from device to host memory.
    pub bytes_device_to_host: u64,
    /// Bytes copied between device allocations.
    pub bytes_device_to_device: u64,
    /// Bytes copied between host allocations.
    pub bytes_host_to_host: u64,
    /// Sync and async copy calls that moved bytes.
    pub copies: u64,
    /// Kernel dispatch packets executed.
    pub dispatches: u64,
    /// BARRIER_AND/BARRIER_OR packets executed.
    pub barrier_packets: u64,
}

/// Reads the counters into `out`; `HSA_STATUS_ERROR_INVALID_ARGUMENT` when `out` is NULL or
/// `out->size` is smaller than `sizeof(vhsa_stats_t)`.
/// # Safety
/// `out` is NULL or points to a writable `vhsa_stats_t` whose `size` is set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vhsa_stats(out: *mut vhsa_stats_t) -> hsa_status_t {
    value_call("vhsa_stats", HSA_STATUS_ERROR, || {
        if out.is_null() {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: non-NULL; the caller provides at least the `size` field.
        let size = unsafe { out.cast::<u64>().read_unaligned() };
        if (size as usize) < std::mem::size_of::<vhsa_stats_t>() {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        use crate::stats::*;
        let s = vhsa_stats_t {
            size: std::mem::size_of::<vhsa_stats_t>() as u64,
            bytes_host_to_device: BYTES_H2D.load(Ordering::Relaxed),
            bytes_device_to_host: BYTES_D2H.load(Ordering::Relaxed),
            bytes_device_to_device: BYTES_D2D.load(Ordering::Relaxed),
            bytes_host_to_host: BYTES_H2H.load(Ordering::Relaxed),
            copies: COPIES.load(Ordering::Relaxed),
            dispatches: DISPATCHES.load(Ordering::Relaxed),
            barrier_packets: BARRIERS.load(Ordering::Relaxed),
        };
        // SAFETY: the caller's structure is at least this large (checked above).
        unsafe { out.write_unaligned(s) };
        HSA_STATUS_SUCCESS
    })
}

/// Counter packets (aqlprofile start, read and stop packets of this runtime's counter payload)
/// executed so far by every agent's counter file in this process; each pointer may be NULL.
/// A test reads them before and after a stretch of a program to see which packets ran in it.
/// # Safety
/// Each pointer is NULL or points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vhsa_pmc_packets_executed(
    start: *mut u64,
    read: *mut u64,
    stop: *mut u64,
) {
    value_call("vhsa_pmc_packets_executed", (), || {
        let (s, r, t) = vgpu::pmc::packets_executed();
        for (p, v) in [(start, s), (read, r), (stop, t)] {
            if !p.is_null() {
                // SAFETY: non-NULL; the caller's writable `uint64_t`.
                unsafe { p.write_unaligned(v) };
            }
        }
    })
}

/// Resets every counter to zero.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_stats_reset() {
    value_call("vhsa_stats_reset", (), crate::stats::reset)
}

/// The `nth` pool allocation from now fails with `HSA_STATUS_ERROR_OUT_OF_RESOURCES`
/// (1 = the next); 0 clears.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_fault_fail_pool_allocation(nth: u64) {
    value_call("vhsa_fault_fail_pool_allocation", (), || {
        crate::fault::fail_pool_allocation(nth)
    })
}

/// After `after` more copies succeed, the next `count` copies (`hsa_memory_copy` and async
/// copies) fail with `HSA_STATUS_ERROR`; `count` 0 clears.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_fault_fail_copies(after: u64, count: u64) {
    value_call("vhsa_fault_fail_copies", (), || {
        crate::fault::fail_copies(after, count)
    })
}

/// `hsa_executable_iterate_*symbols` and the loader's executable iteration fail with
/// `HSA_STATUS_ERROR` while `on`.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_fault_fail_symbol_iteration(on: bool) {
    value_call("vhsa_fault_fail_symbol_iteration", (), || {
        crate::fault::fail_symbol_iteration(on)
    })
}

/// `hsa_executable_symbol_get_info` fails with `HSA_STATUS_ERROR` for the address and size of
/// variable symbols while `on`.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_fault_fail_symbol_info(on: bool) {
    value_call("vhsa_fault_fail_symbol_info", (), || {
        crate::fault::fail_symbol_info(on)
    })
}

/// Each `hsa_amd_signal_async_handler` callback is delayed by `ms`; 0 clears.
#[unsafe(no_mangle)]
pub extern "C" fn vhsa_fault_delay_async_handlers(ms: u64) {
    value_call("vhsa_fault_delay_async_handlers", (), || {
        crate::fault::delay_async_handlers(ms)
    })
}

/// Dispatches of the kernel `name` (copied) never complete until cleared; NULL clears.
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vhsa_fault_hang_kernel(name: *const c_char) {
    value_call("vhsa_fault_hang_kernel", (), || {
        let name = (!name.is_null()).then(|| {
            // SAFETY: non-NULL; the caller passes a NUL-terminated string.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        });
        crate::fault::set_hang_kernel(name);
    })
}

/// One shader-data record of an emulated dispatch (what `s_ttracedata` / `s_ttracedata_imm`
/// wrote), as a thread-trace decoder reports it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct vhsa_shader_data_record_t {
    /// The wave's cycle count when the instruction issued (one cycle per instruction).
    pub time: i64,
    /// The value written (M0 for `s_ttracedata`).
    pub value: u64,
    /// Compute unit of the wave.
    pub cu: u8,
    /// SIMD of the wave within its CU.
    pub simd: u8,
    /// Wave slot within the SIMD.
    pub wave_id: u8,
    /// Bit 0: immediate form; bit 1: privileged.
    pub flags: u8,
    /// Zero.
    pub reserved: u32,
}

/// The shader-data records of the latest emulated dispatch whose completion signal is
/// `completion_signal` (a `hsa_signal_t` handle), read once the dispatch completed. Writes the
/// number of records to `*count` and copies the first `min(capacity, *count)` of them to
/// `records` (NULL when `capacity` is 0), ordered by (time, cu, simd, wave slot).
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT` when `count` is NULL or `records` is NULL with a non-zero
/// capacity; `HSA_STATUS_ERROR_INVALID_SIGNAL` when none of the last 256 emulated dispatches
/// completed that signal.
/// # Safety
/// `records` is NULL or points to `capacity` writable records; `count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vhsa_dispatch_shader_data(
    completion_signal: u64,
    records: *mut vhsa_shader_data_record_t,
    capacity: usize,
    count: *mut usize,
) -> hsa_status_t {
    value_call("vhsa_dispatch_shader_data", HSA_STATUS_ERROR, || {
        if count.is_null() || (records.is_null() && capacity > 0) {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        let Some(found) = crate::emulated_executor::records_of(completion_signal) else {
            return hsa_abi::ffi::HSA_STATUS_ERROR_INVALID_SIGNAL;
        };
        for (i, r) in found.iter().take(capacity).enumerate() {
            let out = vhsa_shader_data_record_t {
                time: r.time,
                value: r.value,
                cu: r.cu,
                simd: r.simd,
                wave_id: r.wave_id,
                flags: r.flags,
                reserved: 0,
            };
            // SAFETY: `i < capacity` records the caller provides.
            unsafe { records.add(i).write_unaligned(out) };
        }
        // SAFETY: non-NULL (checked), writable per the contract.
        unsafe { count.write_unaligned(found.len()) };
        HSA_STATUS_SUCCESS
    })
}
