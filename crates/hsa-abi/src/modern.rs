//! Function types of modern-runtime entries that the installed (older) headers do not declare.
//!
//! Signatures are those of the ROCm 6.x/7.x runtime ABI.

#![allow(non_camel_case_types)]

use crate::ffi::{
    hsa_agent_t, hsa_amd_memory_pool_t, hsa_queue_t, hsa_queue_type32_t, hsa_signal_t, hsa_status_t,
};
use std::ffi::c_void;

/// Passes packets to the next interceptor down (or to the hardware ring at the bottom).
pub type hsa_amd_queue_intercept_packet_writer =
    Option<unsafe extern "C" fn(pkts: *const c_void, pkt_count: u64)>;

/// An interceptor registered on an intercept queue.
pub type hsa_amd_queue_intercept_handler = Option<
    unsafe extern "C" fn(
        pkts: *const c_void,
        pkt_count: u64,
        user_pkt_index: u64,
        data: *mut c_void,
        writer: hsa_amd_queue_intercept_packet_writer,
    ),
>;

/// Queue error callback, as taken by `hsa_queue_create`.
pub type hsa_queue_error_callback =
    Option<unsafe extern "C" fn(status: hsa_status_t, source: *mut hsa_queue_t, data: *mut c_void)>;

/// `hsa_amd_queue_intercept_create`.
pub type hsa_amd_queue_intercept_create_fn_t = Option<
    unsafe extern "C" fn(
        agent: hsa_agent_t,
        size: u32,
        type_: hsa_queue_type32_t,
        callback: hsa_queue_error_callback,
        data: *mut c_void,
        private_segment_size: u32,
        group_segment_size: u32,
        queue: *mut *mut hsa_queue_t,
    ) -> hsa_status_t,
>;

/// `hsa_amd_queue_intercept_register`.
pub type hsa_amd_queue_intercept_register_fn_t = Option<
    unsafe extern "C" fn(
        queue: *mut hsa_queue_t,
        callback: hsa_amd_queue_intercept_handler,
        user_data: *mut c_void,
    ) -> hsa_status_t,
>;

/// `hsa_amd_memory_async_copy_on_engine`.
pub type hsa_amd_memory_async_copy_on_engine_fn_t = Option<
    unsafe extern "C" fn(
        dst: *mut c_void,
        dst_agent: hsa_agent_t,
        src: *const c_void,
        src_agent: hsa_agent_t,
        size: usize,
        num_dep_signals: u32,
        dep_signals: *const hsa_signal_t,
        completion_signal: hsa_signal_t,
        engine_id: u32,
        force_copy_on_sdma: bool,
    ) -> hsa_status_t,
>;

/// Opaque handle to a physical memory allocation of the virtual-memory API.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_amd_vmem_alloc_handle_t {
    /// Runtime-defined value.
    pub handle: u64,
}

/// `hsa_amd_vmem_address_reserve`.
pub type hsa_amd_vmem_address_reserve_fn_t = Option<
    unsafe extern "C" fn(
        va: *mut *mut c_void,
        size: usize,
        address: u64,
        flags: u64,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_address_reserve_align`.
pub type hsa_amd_vmem_address_reserve_align_fn_t = Option<
    unsafe extern "C" fn(
        va: *mut *mut c_void,
        size: usize,
        address: u64,
        alignment: u64,
        flags: u64,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_address_free`.
pub type hsa_amd_vmem_address_free_fn_t =
    Option<unsafe extern "C" fn(va: *mut c_void, size: usize) -> hsa_status_t>;
/// `hsa_amd_vmem_handle_create` (`type_` is `hsa_amd_memory_type_t`: 0 none, 1 pinned).
pub type hsa_amd_vmem_handle_create_fn_t = Option<
    unsafe extern "C" fn(
        pool: hsa_amd_memory_pool_t,
        size: usize,
        type_: u32,
        flags: u64,
        handle: *mut hsa_amd_vmem_alloc_handle_t,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_handle_release`.
pub type hsa_amd_vmem_handle_release_fn_t =
    Option<unsafe extern "C" fn(handle: hsa_amd_vmem_alloc_handle_t) -> hsa_status_t>;
/// `hsa_amd_vmem_map`.
pub type hsa_amd_vmem_map_fn_t = Option<
    unsafe extern "C" fn(
        va: *mut c_void,
        size: usize,
        in_offset: usize,
        handle: hsa_amd_vmem_alloc_handle_t,
        flags: u64,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_unmap`.
pub type hsa_amd_vmem_unmap_fn_t =
    Option<unsafe extern "C" fn(va: *mut c_void, size: usize) -> hsa_status_t>;

/// One agent's access to a mapped virtual range (`hsa_amd_memory_access_desc_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hsa_amd_memory_access_desc_t {
    /// `hsa_access_permission_t`: 0 none, 1 read-only, 2 write-only, 3 read-write.
    pub permissions: u32,
    /// The agent the permission applies to.
    pub agent_handle: hsa_agent_t,
}
/// `hsa_amd_vmem_set_access`.
pub type hsa_amd_vmem_set_access_fn_t = Option<
    unsafe extern "C" fn(
        va: *mut c_void,
        size: usize,
        desc: *const hsa_amd_memory_access_desc_t,
        desc_cnt: usize,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_get_access` (`perms` points to a `hsa_access_permission_t`).
pub type hsa_amd_vmem_get_access_fn_t = Option<
    unsafe extern "C" fn(
        va: *mut c_void,
        perms: *mut u32,
        agent_handle: hsa_agent_t,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_retain_alloc_handle`.
pub type hsa_amd_vmem_retain_alloc_handle_fn_t = Option<
    unsafe extern "C" fn(
        handle: *mut hsa_amd_vmem_alloc_handle_t,
        addr: *mut c_void,
    ) -> hsa_status_t,
>;
/// `hsa_amd_vmem_get_alloc_properties_from_handle` (`type_` points to a `hsa_amd_memory_type_t`).
pub type hsa_amd_vmem_get_alloc_properties_from_handle_fn_t = Option<
    unsafe extern "C" fn(
        handle: hsa_amd_vmem_alloc_handle_t,
        pool: *mut hsa_amd_memory_pool_t,
        type_: *mut u32,
    ) -> hsa_status_t,
>;

/// Pool allocation flag: allocate memory the GPU may execute (newer than the installed headers).
pub const HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG: u32 = 1 << 2;
/// Pool allocation flag: uncached memory (newer than the installed headers).
pub const HSA_AMD_MEMORY_POOL_UNCACHED_FLAG: u32 = 1 << 3;
/// Pool global flag: extended-scope fine-grained memory (newer than the installed headers).
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED: u32 = 8;
/// Vendor packet format of an intercept marker: never reaches hardware.
pub const HSA_AMD_PACKET_TYPE_INTERCEPT_MARKER: u8 = 0xFE;
/// Agent attribute: the number of XCCs (accelerator complexes) of the agent, `uint32_t` (ROCm 6+).
pub const HSA_AMD_AGENT_INFO_NUM_XCC: u32 = 0xA111;
