//! The v1 interface: the functions of the HSA vendor extension `HSA_EXTENSION_AMD_AQLPROFILE`
//! (installed header `hsa/hsa_ven_amd_aqlprofile.h`, plus the three slots ROCm 6/7 append).
//!
//! A profile is the caller's `hsa_ven_amd_aqlprofile_profile_t`: the events, and two buffers
//! the caller allocates (`start(profile, NULL)` writes their sizes). `start`, `read` and `stop`
//! write their payload into the command buffer and fill the packet's PM4 part; the caller sets
//! the vendor-specific header and the completion signal. After the read packet completed,
//! `iterate_data` reports one value per event and sample. Only PMC profiles are supported.

use crate::agents;
use crate::error::{Failure, arg, guard};
use crate::profile::{self, Layout};
use hsa_abi::aqlprofile::*;
use hsa_abi::ffi::*;
use std::ffi::{CStr, c_char, c_void};
use vgpu::pmc::{Operation, PmcEvent};

/// The extension table: every slot of the ROCm 6/7 table (a caller copies the length it knows).
pub fn table() -> AqlprofileV1Table {
    AqlprofileV1Table {
        base: hsa_ven_amd_aqlprofile_1_00_pfn_t {
            hsa_ven_amd_aqlprofile_version_major: Some(version_major),
            hsa_ven_amd_aqlprofile_version_minor: Some(version_minor),
            hsa_ven_amd_aqlprofile_error_string: Some(error_string),
            hsa_ven_amd_aqlprofile_validate_event: Some(validate_event),
            hsa_ven_amd_aqlprofile_start: Some(start),
            hsa_ven_amd_aqlprofile_stop: Some(stop),
            hsa_ven_amd_aqlprofile_read: Some(read),
            hsa_ven_amd_aqlprofile_legacy_get_pm4: Some(legacy_get_pm4),
            hsa_ven_amd_aqlprofile_get_info: Some(get_info),
            hsa_ven_amd_aqlprofile_iterate_data: Some(iterate_data),
        },
        iterate_event_ids: Some(iterate_event_ids),
        iterate_event_coord: Some(iterate_event_coord),
        att_marker: Some(att_marker),
    }
}

/// `hsa_ven_amd_aqlprofile_version_major`: 2, the major ROCR requires of the library.
pub extern "C" fn version_major() -> u32 {
    AQLPROFILE_LIBRARY_MAJOR
}

/// `hsa_ven_amd_aqlprofile_version_minor`.
pub extern "C" fn version_minor() -> u32 {
    AQLPROFILE_LIBRARY_MINOR
}

/// `hsa_ven_amd_aqlprofile_error_string`: this thread's last error.
///
/// # Safety
///
/// `str_` is NULL or writable.
pub unsafe extern "C" fn error_string(str_: *mut *const c_char) -> hsa_status_t {
    if str_.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: checked non-null; the caller's promise.
    unsafe { *str_ = crate::error::last() };
    HSA_STATUS_SUCCESS
}

/// `hsa_ven_amd_aqlprofile_validate_event`: whether the agent offers the event.
///
/// # Safety
///
/// `event` and `result` are NULL or valid.
pub unsafe extern "C" fn validate_event(
    agent: hsa_agent_t,
    event: *const hsa_ven_amd_aqlprofile_event_t,
    result: *mut bool,
) -> hsa_status_t {
    guard("validate_event", || {
        // SAFETY: the caller's promise.
        let e = unsafe { arg(event, "event") }?;
        if result.is_null() {
            return Err(Failure::invalid("result is NULL"));
        }
        let ok = agents::of_hsa(agent)
            .ok()
            .and_then(|a| profile::counter(&a, e.block_name, e.block_index, e.counter_id))
            .is_some();
        // SAFETY: checked non-null.
        unsafe { *result = ok };
        Ok(())
    })
}

/// The profile's agent and events.
fn events_of(
    p: &hsa_ven_amd_aqlprofile_profile_t,
) -> Result<(agents::Agent, Vec<PmcEvent>), Failure> {
    if p.type_ != HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC {
        return Err(Failure::invalid(format!(
            "profile type {} is not supported: only PMC profiles (thread trace is not emulated)",
            p.type_
        )));
    }
    if p.events.is_null() || p.event_count == 0 {
        return Err(Failure::invalid("the profile has no events"));
    }
    // SAFETY: the caller's profile names `event_count` events.
    let events = unsafe { std::slice::from_raw_parts(p.events, p.event_count as usize) };
    let agent = agents::of_hsa(p.agent)?;
    let resolved = profile::resolve(
        &agent,
        events
            .iter()
            .map(|e| (e.block_name, e.block_index, e.counter_id, 0)),
    )?;
    Ok((agent, resolved))
}

/// Writes an operation's payload into the command buffer and its packet.
fn fill(
    p: &hsa_ven_amd_aqlprofile_profile_t,
    op: Operation,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> Result<(), Failure> {
    let (_, events) = events_of(p)?;
    let layout = Layout::of(&events);
    if packet.is_null() {
        return Err(Failure::invalid("the packet is NULL"));
    }
    let (cmd, out) = (p.command_buffer, p.output_buffer);
    if cmd.ptr.is_null() || (cmd.size as usize) < layout.command_bytes {
        return Err(Failure::invalid(format!(
            "the command buffer needs {} bytes (call start with a NULL packet for the sizes)",
            layout.command_bytes
        )));
    }
    if out.ptr.is_null() || (out.size as usize) < layout.output_bytes {
        return Err(Failure::invalid(format!(
            "the output buffer needs {} bytes",
            layout.output_bytes
        )));
    }
    let bytes = profile::payload_bytes(op, &events, out.ptr as u64);
    let at = layout.offset(op);
    // SAFETY: the command buffer holds `command_bytes` >= `at + bytes.len()` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), cmd.ptr.cast::<u8>().add(at), bytes.len())
    };
    if op == Operation::Start {
        // A fresh profile has no results until its read packet ran.
        // SAFETY: the output buffer holds at least its header.
        unsafe { std::ptr::write_bytes(out.ptr.cast::<u8>(), 0, vgpu::pmc::OUTPUT_HEADER_BYTES) };
    }
    let pkt = profile::packet(cmd.ptr as u64 + at as u64, bytes.len() / 4);
    // SAFETY: checked non-null; the caller's packet. Only the PM4 part is the library's: the
    // caller's header and completion signal are kept.
    unsafe {
        let (header, signal) = ((*packet).header, (*packet).completion_signal);
        *packet = pkt;
        (*packet).header = header;
        (*packet).completion_signal = signal;
    }
    Ok(())
}

/// `hsa_ven_amd_aqlprofile_start`: with a NULL packet, writes the buffer sizes the profile needs
/// into it; otherwise writes the start payload and fills the start packet.
///
/// # Safety
///
/// `profile` is NULL or a valid profile whose buffers and events are as it says; `packet` is
/// NULL or writable.
pub unsafe extern "C" fn start(
    profile: *mut hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    guard("start", || {
        // SAFETY: the caller's promise.
        let p = unsafe { arg(profile.cast_const(), "profile") }?;
        if packet.is_null() {
            let (_, events) = events_of(p)?;
            let layout = Layout::of(&events);
            // SAFETY: non-null (checked by `arg`), the caller's writable profile.
            unsafe {
                (*profile).command_buffer.size = layout.command_bytes as u32;
                (*profile).output_buffer.size = layout.output_bytes as u32;
            }
            return Ok(());
        }
        fill(p, Operation::Start, packet)
    })
}

/// `hsa_ven_amd_aqlprofile_stop`.
///
/// # Safety
///
/// As [`start`].
pub unsafe extern "C" fn stop(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    guard("stop", || {
        // SAFETY: the caller's promise.
        fill(unsafe { arg(profile, "profile") }?, Operation::Stop, packet)
    })
}

/// `hsa_ven_amd_aqlprofile_read`.
///
/// # Safety
///
/// As [`start`].
pub unsafe extern "C" fn read(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    packet: *mut hsa_ext_amd_aql_pm4_packet_t,
) -> hsa_status_t {
    guard("read", || {
        // SAFETY: the caller's promise.
        fill(unsafe { arg(profile, "profile") }?, Operation::Read, packet)
    })
}

/// `hsa_ven_amd_aqlprofile_legacy_get_pm4`: the packet's PM4 as a 192-byte blob (its
/// `INDIRECT_BUFFER`, then a `NOP` over the rest).
///
/// # Safety
///
/// `packet` is NULL or valid; `data` is NULL or holds 192 writable bytes.
pub unsafe extern "C" fn legacy_get_pm4(
    packet: *const hsa_ext_amd_aql_pm4_packet_t,
    data: *mut c_void,
) -> hsa_status_t {
    guard("legacy_get_pm4", || {
        // SAFETY: the caller's promise.
        let p = AqlPm4IbPacket::from_pm4_packet(unsafe { arg(packet, "packet") }?);
        if data.is_null() {
            return Err(Failure::invalid("data is NULL"));
        }
        let total = HSA_VEN_AMD_AQLPROFILE_LEGACY_PM4_PACKET_SIZE as usize / 4;
        let mut blob = vec![0u32; total];
        blob[..4].copy_from_slice(&p.pm4_ib_command);
        let rest = total - 4;
        blob[4] = 3 << 30 | ((rest as u32 - 2) & 0x3FFF) << 16 | 0x10 << 8;
        // SAFETY: `data` holds 192 bytes.
        unsafe { std::ptr::copy_nonoverlapping(blob.as_ptr(), data.cast::<u32>(), total) };
        Ok(())
    })
}

/// The results of a profile's last read.
fn results_of(p: &hsa_ven_amd_aqlprofile_profile_t) -> Result<Vec<(PmcEvent, u32, u64)>, Failure> {
    let (_, events) = events_of(p)?;
    let out = p.output_buffer;
    if out.ptr.is_null() {
        return Err(Failure::invalid("the output buffer is NULL"));
    }
    // SAFETY: the caller's output buffer of `size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(out.ptr.cast::<u8>(), out.size as usize) };
    profile::results(bytes, &events)
}

/// `hsa_ven_amd_aqlprofile_get_info`: buffer sizes, one PMC value, a block's counters per pass,
/// a block's id by name.
///
/// # Safety
///
/// `profile` is NULL or valid; `value` points to what the attribute writes.
pub unsafe extern "C" fn get_info(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    attribute: hsa_ven_amd_aqlprofile_info_type_t,
    value: *mut c_void,
) -> hsa_status_t {
    guard("get_info", || {
        if value.is_null() {
            return Err(Failure::invalid("value is NULL"));
        }
        // SAFETY: the caller's promise.
        let p = unsafe { arg(profile, "profile") };
        match attribute {
            HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE
            | HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE => {
                let layout = Layout::of(&events_of(p?)?.1);
                let v = if attribute == HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE {
                    layout.output_bytes
                } else {
                    layout.command_bytes
                };
                // SAFETY: the attribute's value is a `uint32_t`.
                unsafe { *value.cast::<u32>() = v as u32 };
            }
            HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA => {
                let results = results_of(p?)?;
                let d = value.cast::<hsa_ven_amd_aqlprofile_info_data_t>();
                // SAFETY: the attribute's value is an info_data naming an event and sample.
                let (want, sample) =
                    unsafe { ((*d).__bindgen_anon_1.pmc_data.event, (*d).sample_id) };
                let found = results
                    .iter()
                    .find(|(e, s, _)| {
                        (e.block, e.index, e.event)
                            == (want.block_name, want.block_index, want.counter_id)
                            && *s == sample
                    })
                    .ok_or_else(|| Failure::invalid("the profile has no such event and sample"))?;
                // SAFETY: as above.
                unsafe { (*d).__bindgen_anon_1.pmc_data.result = found.2 };
            }
            HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS => {
                let p = p?;
                if p.events.is_null() || p.event_count == 0 {
                    return Err(Failure::invalid(
                        "the profile names no event (of the block)",
                    ));
                }
                // SAFETY: at least one event.
                let block = unsafe { (*p.events).block_name };
                let n = profile::block_counters(block)?;
                // SAFETY: a `uint32_t`.
                unsafe { *value.cast::<u32>() = n };
            }
            HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_ID => {
                let q = value.cast::<hsa_ven_amd_aqlprofile_id_query_t>();
                // SAFETY: the attribute's value is an id query with a name.
                let name = unsafe { (*q).name };
                if name.is_null() {
                    return Err(Failure::invalid("the query's name is NULL"));
                }
                // SAFETY: a NUL-terminated name.
                let (id, n) = profile::block_id(unsafe { CStr::from_ptr(name) })?;
                // SAFETY: as above.
                unsafe {
                    (*q).id = id;
                    (*q).instance_count = n;
                }
            }
            other => {
                return Err(Failure::invalid(format!(
                    "attribute {other} is not supported (thread trace and raw enable/disable commands are not emulated)"
                )));
            }
        }
        Ok(())
    })
}

/// `hsa_ven_amd_aqlprofile_iterate_data`: one callback per event and sample of the last read.
///
/// # Safety
///
/// `profile` is NULL or valid; `callback` is NULL or callable with `data`.
pub unsafe extern "C" fn iterate_data(
    profile: *const hsa_ven_amd_aqlprofile_profile_t,
    callback: hsa_ven_amd_aqlprofile_data_callback_t,
    data: *mut c_void,
) -> hsa_status_t {
    guard("iterate_data", || {
        // SAFETY: the caller's promise.
        let p = unsafe { arg(profile, "profile") }?;
        let cb = callback.ok_or_else(|| Failure::invalid("callback is NULL"))?;
        for (e, sample, value) in results_of(p)? {
            let mut info = hsa_ven_amd_aqlprofile_info_data_t {
                sample_id: sample,
                ..Default::default()
            };
            info.__bindgen_anon_1.pmc_data =
                hsa_ven_amd_aqlprofile_info_data_t__bindgen_ty_1__bindgen_ty_1 {
                    event: hsa_ven_amd_aqlprofile_event_t {
                        block_name: e.block,
                        block_index: e.index,
                        counter_id: e.event,
                    },
                    result: value,
                };
            // SAFETY: the caller's callback with its data.
            let st = unsafe { cb(HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA, &mut info, data) };
            if st != HSA_STATUS_SUCCESS {
                return Err(Failure {
                    status: st,
                    message: "the callback stopped the iteration".into(),
                });
            }
        }
        Ok(())
    })
}

/// `hsa_ven_amd_aqlprofile_iterate_event_ids` (ROCm 6/7): the coordinate dimensions.
///
/// # Safety
///
/// `callback` is NULL or callable.
pub unsafe extern "C" fn iterate_event_ids(
    callback: hsa_ven_amd_aqlprofile_eventname_callback_t,
) -> hsa_status_t {
    guard("iterate_event_ids", || {
        let cb = callback.ok_or_else(|| Failure::invalid("callback is NULL"))?;
        for (id, name) in profile::DIMENSIONS {
            // SAFETY: the caller's callback.
            let st = unsafe { cb(id, name.as_ptr()) };
            if st != HSA_STATUS_SUCCESS {
                return Err(Failure {
                    status: st,
                    message: "the callback stopped the iteration".into(),
                });
            }
        }
        Ok(())
    })
}

/// `hsa_ven_amd_aqlprofile_iterate_event_coord` (ROCm 6/7): the coordinates of one sample.
///
/// # Safety
///
/// `callback` is NULL or callable with `userdata`.
pub unsafe extern "C" fn iterate_event_coord(
    agent: hsa_agent_t,
    event: hsa_ven_amd_aqlprofile_event_t,
    sample_id: u32,
    callback: hsa_ven_amd_aqlprofile_coordinate_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    guard("iterate_event_coord", || {
        let a = agents::of_hsa(agent)?;
        let c = profile::counter(&a, event.block_name, event.block_index, event.counter_id)
            .ok_or_else(|| Failure::invalid("the agent does not offer the event"))?;
        crate::v2::report_coordinates(&a, c.dimension, sample_id, callback, userdata)
    })
}

/// `hsa_ven_amd_aqlprofile_att_marker` (ROCm 6/7): thread trace is not emulated.
pub extern "C" fn att_marker(
    _profile: *mut hsa_ven_amd_aqlprofile_profile_t,
    _packet: *mut hsa_ext_amd_aql_pm4_packet_t,
    _data: u32,
    _channel: hsa_ven_amd_aqlprofile_att_marker_channel_t,
) -> hsa_status_t {
    guard("att_marker", || {
        Err(Failure::error("thread trace is not emulated on this GPU"))
    })
}
