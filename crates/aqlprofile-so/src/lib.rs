//! The drop-in `libhsa-amd-aqlprofile64.so` (and `.so.1`) of the virtual GPUs: the C exports of
//! the aqlprofile v1 extension functions (`hsa_ven_amd_aqlprofile_*`, which ROCR looks up when
//! it fills the `HSA_EXTENSION_AMD_AQLPROFILE` table) and of the v2 `aqlprofile_*` API. Each
//! export forwards to the `aqlprofile` crate, whose entries hold the panic boundary.

#![deny(missing_docs)]

use hsa_abi::aqlprofile::*;
use hsa_abi::ffi::*;
use std::ffi::{c_char, c_void};

/// `hsa_ven_amd_aqlprofile_version_major`: see `aqlprofile::v1::version_major`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_version_major() -> u32 {
    // SAFETY: the same contract as the caller's.
    aqlprofile::v1::version_major()
}

/// `hsa_ven_amd_aqlprofile_version_minor`: see `aqlprofile::v1::version_minor`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_version_minor() -> u32 {
    // SAFETY: the same contract as the caller's.
    aqlprofile::v1::version_minor()
}

/// `hsa_ven_amd_aqlprofile_error_string`: see `aqlprofile::v1::error_string`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_error_string(
    str_: *mut *const c_char,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::error_string(str_) }
}

/// `hsa_ven_amd_aqlprofile_validate_event`: see `aqlprofile::v1::validate_event`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_validate_event(
    agent: hsa_agent_t,
    event: *const hsa_ven_amd_aqlprofile_event_t,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::validate_event(agent, event, result) }
}

/// `hsa_ven_amd_aqlprofile_start`: see `aqlprofile::v1::start`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_start(
    profile: *mut hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::start(profile, packet) }
}

/// `hsa_ven_amd_aqlprofile_stop`: see `aqlprofile::v1::stop`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_stop(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::stop(profile, packet) }
}

/// `hsa_ven_amd_aqlprofile_read`: see `aqlprofile::v1::read`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_read(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::read(profile, packet) }
}

/// `hsa_ven_amd_aqlprofile_legacy_get_pm4`: see `aqlprofile::v1::legacy_get_pm4`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_legacy_get_pm4(
    packet: *const hsa_ext_amd_aql_pm4_packet_t,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::legacy_get_pm4(packet, data) }
}

/// `hsa_ven_amd_aqlprofile_get_info`: see `aqlprofile::v1::get_info`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_get_info(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    attribute: hsa_ven_amd_aqlprofile_info_type_t,
    value: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::get_info(profile, attribute, value) }
}

/// `hsa_ven_amd_aqlprofile_iterate_data`: see `aqlprofile::v1::iterate_data`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_iterate_data(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    callback: hsa_ven_amd_aqlprofile_data_callback_t,
    data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::iterate_data(profile, callback, data) }
}

/// `hsa_ven_amd_aqlprofile_iterate_event_ids`: see `aqlprofile::v1::iterate_event_ids`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_iterate_event_ids(
    callback: hsa_ven_amd_aqlprofile_eventname_callback_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::iterate_event_ids(callback) }
}

/// `hsa_ven_amd_aqlprofile_iterate_event_coord`: see `aqlprofile::v1::iterate_event_coord`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_iterate_event_coord(
    agent: hsa_agent_t,
    event: hsa_ven_amd_aqlprofile_event_t,
    sample_id: u32,
    callback: hsa_ven_amd_aqlprofile_coordinate_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v1::iterate_event_coord(agent, event, sample_id, callback, userdata) }
}

/// `hsa_ven_amd_aqlprofile_att_marker`: see `aqlprofile::v1::att_marker`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_aqlprofile_att_marker(
    profile: *mut hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
    data: u32,
    channel: hsa_ven_amd_aqlprofile_att_marker_channel_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    aqlprofile::v1::att_marker(profile, packet, data, channel)
}

/// `aqlprofile_get_version`: see `aqlprofile::v2::get_version`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
    npi: *mut u32,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::get_version(major, minor, patch, npi) }
}

/// `aqlprofile_register_agent`: see `aqlprofile::v2::register_agent`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_register_agent(
    agent_id: *mut aqlprofile_agent_handle_t,
    agent_info: *const aqlprofile_agent_info_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::register_agent(agent_id, agent_info) }
}

/// `aqlprofile_register_agent_info`: see `aqlprofile::v2::register_agent_info`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_register_agent_info(
    agent_id: *mut aqlprofile_agent_handle_t,
    agent_info: *const c_void,
    version: aqlprofile_agent_version_t,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::register_agent_info(agent_id, agent_info, version) }
}

/// `aqlprofile_validate_pmc_event`: see `aqlprofile::v2::validate_pmc_event`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_validate_pmc_event(
    agent: aqlprofile_agent_handle_t,
    event: *const aqlprofile_pmc_event_t,
    result: *mut bool,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::validate_pmc_event(agent, event, result) }
}

/// `aqlprofile_get_pmc_info`: see `aqlprofile::v2::get_pmc_info`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_get_pmc_info(
    profile: *const aqlprofile_pmc_profile_t,
    attribute: aqlprofile_pmc_info_type_t,
    value: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::get_pmc_info(profile, attribute, value) }
}

/// `aqlprofile_pmc_create_packets`: see `aqlprofile::v2::pmc_create_packets`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_pmc_create_packets(
    handle: *mut aqlprofile_handle_t,
    packets: *mut aqlprofile_pmc_aql_packets_t,
    profile: aqlprofile_pmc_profile_t,
    alloc_cb: aqlprofile_memory_alloc_callback_t,
    dealloc_cb: aqlprofile_memory_dealloc_callback_t,
    memcpy_cb: aqlprofile_memory_copy_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe {
        aqlprofile::v2::pmc_create_packets(
            handle, packets, profile, alloc_cb, dealloc_cb, memcpy_cb, userdata,
        )
    }
}

/// `aqlprofile_pmc_delete_packets`: see `aqlprofile::v2::pmc_delete_packets`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_pmc_delete_packets(handle: aqlprofile_handle_t) {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::pmc_delete_packets(handle) }
}

/// `aqlprofile_pmc_iterate_data`: see `aqlprofile::v2::pmc_iterate_data`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_pmc_iterate_data(
    handle: aqlprofile_handle_t,
    callback: aqlprofile_pmc_data_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::pmc_iterate_data(handle, callback, userdata) }
}

/// `aqlprofile_iterate_event_ids`: see `aqlprofile::v2::iterate_event_ids`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_iterate_event_ids(
    callback: aqlprofile_eventname_callback_t,
    user_data: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::iterate_event_ids(callback, user_data) }
}

/// `aqlprofile_iterate_event_coord`: see `aqlprofile::v2::iterate_event_coord`.
///
/// # Safety
///
/// As the C API documents: pointers are NULL or valid for their use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqlprofile_iterate_event_coord(
    agent: aqlprofile_agent_handle_t,
    event: aqlprofile_pmc_event_t,
    sample_id: u64,
    callback: aqlprofile_coordinate_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    // SAFETY: the same contract as the caller's.
    unsafe { aqlprofile::v2::iterate_event_coord(agent, event, sample_id, callback, userdata) }
}
