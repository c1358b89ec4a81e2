//! The v2 interface: `aqlprofile_*` (header `aqlprofile-sdk/aql_profile_v2.h`).
//!
//! Agents are registered by topology. `pmc_create_packets` checks the events, asks the caller
//! for a host-accessible command buffer and output buffer (`alloc_cb`), writes the three
//! payloads (through `memcpy_cb` when given) and fills the start, stop and read packets; the
//! caller sets the header bits and completion signals. `pmc_iterate_data` reports each event's
//! samples of the last read; `pmc_delete_packets` gives the buffers back (`dealloc_cb`).

use crate::agents::{self, Agent};
use crate::error::{Failure, arg, guard};
use crate::profile::{self, Layout};
use hsa_abi::aqlprofile::*;
use hsa_abi::ffi::*;
use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;
use vgpu::pmc::{Operation, PmcEvent};

/// The library version `aqlprofile_get_version` reports.
pub const VERSION: (u32, u32, u32) = (1, 0, 0);

struct Packets {
    events: Vec<PmcEvent>,
    /// The caller's events, in order (reported back by `pmc_iterate_data`).
    given: Vec<aqlprofile_pmc_event_t>,
    command: usize,
    output: usize,
    output_bytes: usize,
    dealloc: aqlprofile_memory_dealloc_callback_t,
    userdata: usize,
}

static PACKETS: Mutex<Option<HashMap<u64, Packets>>> = Mutex::new(None);
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn with_packets<R>(f: impl FnOnce(&mut HashMap<u64, Packets>) -> R) -> R {
    let mut g = PACKETS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// `aqlprofile_get_version`.
///
/// # Safety
///
/// Each pointer is NULL or writable.
pub unsafe extern "C" fn get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
    npi: *mut u32,
) -> hsa_status_t {
    for (p, v) in [
        (major, VERSION.0),
        (minor, VERSION.1),
        (patch, VERSION.2),
        (npi, 0),
    ] {
        if !p.is_null() {
            // SAFETY: non-null, the caller's promise.
            unsafe { *p = v };
        }
    }
    HSA_STATUS_SUCCESS
}

fn gfxip(p: *const std::ffi::c_char) -> Result<String, Failure> {
    if p.is_null() {
        return Err(Failure::invalid("agent_gfxip is NULL"));
    }
    // SAFETY: a NUL-terminated name, the caller's promise.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `aqlprofile_register_agent`.
///
/// # Safety
///
/// `agent_id` is NULL or writable; `agent_info` NULL or valid.
pub unsafe extern "C" fn register_agent(
    agent_id: *mut aqlprofile_agent_handle_t,
    agent_info: *const aqlprofile_agent_info_t,
) -> hsa_status_t {
    guard("aqlprofile_register_agent", || {
        // SAFETY: the caller's promise.
        let i = unsafe { arg(agent_info, "agent_info") }?;
        if agent_id.is_null() {
            return Err(Failure::invalid("agent_id is NULL"));
        }
        let a = Agent::new(&gfxip(i.agent_gfxip)?, i.xcc_num, i.se_num, i.cu_num)?;
        // SAFETY: checked non-null.
        unsafe { (*agent_id).handle = agents::register(a) };
        Ok(())
    })
}

/// `aqlprofile_register_agent_info`: an `aqlprofile_agent_info_t` (version V0) or
/// `aqlprofile_agent_info_v1_t` (V1).
///
/// # Safety
///
/// `agent_id` is NULL or writable; `agent_info` NULL or a valid struct of `version`.
pub unsafe extern "C" fn register_agent_info(
    agent_id: *mut aqlprofile_agent_handle_t,
    agent_info: *const c_void,
    version: aqlprofile_agent_version_t,
) -> hsa_status_t {
    match version {
        // SAFETY: the caller's promise; V1 starts with the V0 fields.
        AQLPROFILE_AGENT_VERSION_V0 | AQLPROFILE_AGENT_VERSION_V1 => unsafe {
            register_agent(agent_id, agent_info.cast())
        },
        other => guard("aqlprofile_register_agent_info", || {
            Err(Failure::invalid(format!(
                "agent info version {other} is unknown"
            )))
        }),
    }
}

/// `aqlprofile_validate_pmc_event`.
///
/// # Safety
///
/// `event` and `result` are NULL or valid.
pub unsafe extern "C" fn validate_pmc_event(
    agent: aqlprofile_agent_handle_t,
    event: *const aqlprofile_pmc_event_t,
    result: *mut bool,
) -> hsa_status_t {
    guard("aqlprofile_validate_pmc_event", || {
        let a = agents::registered(agent.handle)?;
        // SAFETY: the caller's promise.
        let e = unsafe { arg(event, "event") }?;
        if result.is_null() {
            return Err(Failure::invalid("result is NULL"));
        }
        let ok = profile::counter(&a, e.block_name, e.block_index, e.event_id).is_some();
        // SAFETY: checked non-null.
        unsafe { *result = ok };
        Ok(())
    })
}

/// A v2 profile's agent and its events, checked.
fn events_of(
    p: &aqlprofile_pmc_profile_t,
) -> Result<(Agent, Vec<PmcEvent>, Vec<aqlprofile_pmc_event_t>), Failure> {
    let a = agents::registered(p.agent.handle)?;
    if p.events.is_null() || p.event_count == 0 {
        return Err(Failure::invalid("the profile has no events"));
    }
    // SAFETY: the caller's profile names `event_count` events.
    let given = unsafe { std::slice::from_raw_parts(p.events, p.event_count as usize) }.to_vec();
    let events = profile::resolve(
        &a,
        given
            .iter()
            .map(|e| (e.block_name, e.block_index, e.event_id, e.flags.raw)),
    )?;
    Ok((a, events, given))
}

/// `aqlprofile_get_pmc_info`: buffer sizes, a block's counters per pass, a block's id by name.
///
/// # Safety
///
/// `profile` is NULL or valid; `value` points to what the attribute writes.
pub unsafe extern "C" fn get_pmc_info(
    profile: *const aqlprofile_pmc_profile_t,
    attribute: aqlprofile_pmc_info_type_t,
    value: *mut c_void,
) -> hsa_status_t {
    guard("aqlprofile_get_pmc_info", || {
        if value.is_null() {
            return Err(Failure::invalid("value is NULL"));
        }
        // SAFETY: the caller's promise.
        let p = unsafe { arg(profile, "profile") };
        let v: u32 = match attribute {
            AQLPROFILE_INFO_COMMAND_BUFFER_SIZE => {
                Layout::of(&events_of(p?)?.1).command_bytes as u32
            }
            AQLPROFILE_INFO_PMC_DATA_SIZE => Layout::of(&events_of(p?)?.1).output_bytes as u32,
            AQLPROFILE_INFO_BLOCK_COUNTERS => {
                let p = p?;
                if p.events.is_null() || p.event_count == 0 {
                    return Err(Failure::invalid(
                        "the profile names no event (of the block)",
                    ));
                }
                // SAFETY: at least one event.
                profile::block_counters(unsafe { (*p.events).block_name })?
            }
            AQLPROFILE_INFO_BLOCK_ID => {
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
                return Ok(());
            }
            other => {
                return Err(Failure::invalid(format!(
                    "attribute {other} is not supported"
                )));
            }
        };
        // SAFETY: the attribute's value is a `uint32_t`.
        unsafe { *value.cast::<u32>() = v };
        Ok(())
    })
}

/// Asks the caller for `size` bytes.
fn allocate(
    alloc: aqlprofile_memory_alloc_callback_t,
    size: usize,
    flags: aqlprofile_buffer_desc_flags_t,
    userdata: *mut c_void,
) -> Result<*mut u8, Failure> {
    let cb = alloc.ok_or_else(|| Failure::invalid("alloc_cb is NULL"))?;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: the caller's callback with its user data.
    let st = unsafe { cb(&mut p, size as u64, flags, userdata) };
    if st != HSA_STATUS_SUCCESS || p.is_null() {
        return Err(Failure {
            status: if st == HSA_STATUS_SUCCESS {
                HSA_STATUS_ERROR_OUT_OF_RESOURCES
            } else {
                st
            },
            message: format!("the allocation callback gave no memory for {size} bytes"),
        });
    }
    Ok(p.cast())
}

/// Copies `bytes` to `dst` through the caller's copy callback, or directly when there is none.
fn copy_in(
    copy: aqlprofile_memory_copy_t,
    dst: *mut u8,
    bytes: &[u8],
    userdata: *mut c_void,
) -> Result<(), Failure> {
    match copy {
        Some(cb) => {
            // SAFETY: the caller's callback; `dst` holds `bytes.len()` bytes.
            let st = unsafe { cb(dst.cast(), bytes.as_ptr().cast(), bytes.len(), userdata) };
            if st != HSA_STATUS_SUCCESS {
                return Err(Failure {
                    status: st,
                    message: "the copy callback failed".into(),
                });
            }
        }
        // SAFETY: `dst` is host-accessible memory of at least `bytes.len()` bytes.
        None => unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) },
    }
    Ok(())
}

/// Writes the three payloads into the command buffer and zeroes the output header; the start,
/// stop and read packets.
fn write_commands(
    events: &[PmcEvent],
    layout: &Layout,
    command: *mut u8,
    output: *mut u8,
    memcpy_cb: aqlprofile_memory_copy_t,
    userdata: *mut c_void,
) -> Result<[hsa_ext_amd_aql_pm4_packet_t; 3], Failure> {
    let mut made = [hsa_ext_amd_aql_pm4_packet_t::default(); 3];
    for (k, op) in [Operation::Start, Operation::Stop, Operation::Read]
        .into_iter()
        .enumerate()
    {
        let bytes = profile::payload_bytes(op, events, output as u64);
        let at = layout.offset(op);
        // SAFETY: `command` holds `command_bytes` >= `at + bytes.len()`.
        copy_in(memcpy_cb, unsafe { command.add(at) }, &bytes, userdata)?;
        made[k] = profile::packet(command as u64 + at as u64, bytes.len() / 4);
    }
    copy_in(
        memcpy_cb,
        output,
        &[0u8; vgpu::pmc::OUTPUT_HEADER_BYTES],
        userdata,
    )?;
    Ok(made)
}

/// `aqlprofile_pmc_create_packets`.
///
/// # Safety
///
/// `handle` and `packets` are NULL or writable; the profile's events are valid; the callbacks
/// are NULL or callable with `userdata`.
pub unsafe extern "C" fn pmc_create_packets(
    handle: *mut aqlprofile_handle_t,
    packets: *mut aqlprofile_pmc_aql_packets_t,
    profile: aqlprofile_pmc_profile_t,
    alloc_cb: aqlprofile_memory_alloc_callback_t,
    dealloc_cb: aqlprofile_memory_dealloc_callback_t,
    memcpy_cb: aqlprofile_memory_copy_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    guard("aqlprofile_pmc_create_packets", || {
        if handle.is_null() || packets.is_null() {
            return Err(Failure::invalid("handle or packets is NULL"));
        }
        let (_, events, given) = events_of(&profile)?;
        let layout = Layout::of(&events);
        let host = aqlprofile_buffer_desc_flags_t::new(true, true, AQLPROFILE_MEMORY_HINT_HOST);
        let uncached =
            aqlprofile_buffer_desc_flags_t::new(true, true, AQLPROFILE_MEMORY_HINT_DEVICE_UNCACHED);
        let command = allocate(alloc_cb, layout.command_bytes, host, userdata)?;
        let give_back = |p: *mut u8| {
            if let Some(d) = dealloc_cb {
                // SAFETY: given back to the callback that allocated it.
                unsafe { d(p.cast(), userdata) };
            }
        };
        let output = allocate(alloc_cb, layout.output_bytes, uncached, userdata)
            .inspect_err(|_| give_back(command))?;
        let made = write_commands(&events, &layout, command, output, memcpy_cb, userdata)
            .inspect_err(|_| {
                give_back(command);
                give_back(output);
            })?;
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        with_packets(|m| {
            m.insert(
                id,
                Packets {
                    events,
                    given,
                    command: command as usize,
                    output: output as usize,
                    output_bytes: layout.output_bytes,
                    dealloc: dealloc_cb,
                    userdata: userdata as usize,
                },
            )
        });
        // SAFETY: checked non-null, the caller's.
        unsafe {
            *packets = aqlprofile_pmc_aql_packets_t {
                start_packet: made[0],
                stop_packet: made[1],
                read_packet: made[2],
            };
            (*handle).handle = id;
        }
        Ok(())
    })
}

/// `aqlprofile_pmc_delete_packets`: gives the buffers back; an unknown handle is ignored.
///
/// # Safety
///
/// The deallocation callback given to `pmc_create_packets` is still callable with its user data.
pub unsafe extern "C" fn pmc_delete_packets(handle: aqlprofile_handle_t) {
    guard("aqlprofile_pmc_delete_packets", || {
        if let Some(p) = with_packets(|m| m.remove(&handle.handle))
            && let Some(d) = p.dealloc
        {
            // SAFETY: the buffers were allocated by the callback this one pairs with.
            unsafe {
                d(p.command as *mut c_void, p.userdata as *mut c_void);
                d(p.output as *mut c_void, p.userdata as *mut c_void);
            }
        }
        Ok(())
    });
}

/// `aqlprofile_pmc_iterate_data`: one callback per event and sample (the sample number is the
/// `counter_id`, which `aqlprofile_iterate_event_coord` takes as `sample_id`).
///
/// # Safety
///
/// `callback` is NULL or callable with `userdata`.
pub unsafe extern "C" fn pmc_iterate_data(
    handle: aqlprofile_handle_t,
    callback: aqlprofile_pmc_data_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    guard("aqlprofile_pmc_iterate_data", || {
        let cb = callback.ok_or_else(|| Failure::invalid("callback is NULL"))?;
        let (results, given, events) = with_packets(|m| {
            let p = m.get(&handle.handle).ok_or_else(|| {
                Failure::invalid(format!("packet handle {} is unknown", handle.handle))
            })?;
            // SAFETY: the output buffer of `output_bytes`, owned by these packets.
            let bytes =
                unsafe { std::slice::from_raw_parts(p.output as *const u8, p.output_bytes) };
            Ok::<_, Failure>((
                profile::results(bytes, &p.events)?,
                p.given.clone(),
                p.events.clone(),
            ))
        })?;
        for (e, sample, value) in results {
            let k = events.iter().position(|x| *x == e).unwrap_or(0);
            // SAFETY: the caller's callback.
            let st = unsafe { cb(given[k], u64::from(sample), value, userdata) };
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

/// `aqlprofile_iterate_event_ids`: the coordinate dimensions.
///
/// # Safety
///
/// `callback` is NULL or callable with `user_data`.
pub unsafe extern "C" fn iterate_event_ids(
    callback: aqlprofile_eventname_callback_t,
    user_data: *mut c_void,
) -> hsa_status_t {
    guard("aqlprofile_iterate_event_ids", || {
        let cb = callback.ok_or_else(|| Failure::invalid("callback is NULL"))?;
        for (id, name) in profile::DIMENSIONS {
            // SAFETY: the caller's callback.
            let st = unsafe { cb(id, name.as_ptr(), user_data) };
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

/// Reports the coordinates of one sample, one callback per dimension.
pub(crate) fn report_coordinates(
    a: &Agent,
    d: amdgpu_counters::Dimension,
    sample: u32,
    callback: aqlprofile_coordinate_callback_t,
    userdata: *mut c_void,
) -> Result<(), Failure> {
    let cb = callback.ok_or_else(|| Failure::invalid("callback is NULL"))?;
    if sample >= profile::samples(a, d) {
        return Err(Failure::invalid(format!("sample {sample} is out of range")));
    }
    for (pos, (id, extent, coord, name)) in
        profile::coordinates(a, d, sample).into_iter().enumerate()
    {
        // SAFETY: the caller's callback.
        let st = unsafe { cb(pos as i32, id, extent, coord, name.as_ptr(), userdata) };
        if st != HSA_STATUS_SUCCESS {
            return Err(Failure {
                status: st,
                message: "the callback stopped the iteration".into(),
            });
        }
    }
    Ok(())
}

/// `aqlprofile_iterate_event_coord`: the coordinates of sample `sample_id` of an event.
///
/// # Safety
///
/// `callback` is NULL or callable with `userdata`.
pub unsafe extern "C" fn iterate_event_coord(
    agent: aqlprofile_agent_handle_t,
    event: aqlprofile_pmc_event_t,
    sample_id: u64,
    callback: aqlprofile_coordinate_callback_t,
    userdata: *mut c_void,
) -> hsa_status_t {
    guard("aqlprofile_iterate_event_coord", || {
        let a = agents::registered(agent.handle)?;
        let c = profile::counter(&a, event.block_name, event.block_index, event.event_id)
            .ok_or_else(|| Failure::invalid("the agent does not offer the event"))?;
        let sample =
            u32::try_from(sample_id).map_err(|_| Failure::invalid("sample out of range"))?;
        report_coordinates(&a, c.dimension, sample, callback, userdata)
    })
}
