//! System-level entries: status strings and extensions (queries and tables).

use crate::boundary::{status_call, write_out};
use crate::error::{Error, Result};
use crate::open_state::ensure_open;
use crate::topology::Agent;
use hsa_abi::CoreApiTable;
use hsa_abi::ffi::*;
use std::ffi::{c_char, c_void};

unsafe extern "C" fn hsa_status_string_impl(
    status: hsa_status_t,
    out: *mut *const c_char,
) -> hsa_status_t {
    status_call("hsa_status_string", || {
        let s =
            crate::status::describe(status).ok_or(Error::InvalidArgument("unknown status code"))?;
        write_out(out, s.as_ptr(), "status_string is NULL")
    })
}

/// Extensions the system (`agent` `None`) or an agent supports, with the highest minor version
/// of each major. Images are an extension of the agents that have them (gfx90a), and of the
/// system when one of its agents does.
fn extension_version(extension: u16, agent: Option<&Agent>) -> Option<(u16, u16)> {
    match u32::from(extension) {
        HSA_EXTENSION_IMAGES => agent
            .map_or_else(
                crate::image::system_has_images,
                crate::image::agent_has_images,
            )
            .then_some((1, 0)),
        HSA_EXTENSION_AMD_LOADER => Some((1, 3)),
        HSA_EXTENSION_AMD_PROFILER => Some((1, 0)),
        HSA_EXTENSION_AMD_AQLPROFILE => Some((hsa_abi::aqlprofile::AQLPROFILE_EXTENSION_MAJOR, 0)),
        _ => None,
    }
}

/// The `HSA_SYSTEM_INFO_EXTENSIONS` bit mask (128 bytes) of the system (`None`) or the
/// `HSA_AGENT_INFO_EXTENSIONS` mask of an agent.
pub(crate) fn extension_mask(agent: Option<&Agent>) -> Vec<u8> {
    let mut mask = vec![0u8; 128];
    for ext in [
        HSA_EXTENSION_IMAGES,
        HSA_EXTENSION_AMD_LOADER,
        HSA_EXTENSION_AMD_PROFILER,
        HSA_EXTENSION_AMD_AQLPROFILE,
    ] {
        if extension_version(ext as u16, agent).is_some() {
            mask[(ext / 8) as usize] |= 1 << (ext % 8);
        }
    }
    mask
}

unsafe extern "C" fn hsa_system_extension_supported_impl(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    status_call("hsa_system_extension_supported", || {
        ensure_open()?;
        let ok = extension_version(extension, None)
            .is_some_and(|(ma, mi)| ma == version_major && version_minor <= mi);
        write_out(result, ok, "result is NULL")
    })
}

unsafe extern "C" fn hsa_system_major_extension_supported_impl(
    extension: u16,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    status_call("hsa_system_major_extension_supported", || {
        ensure_open()?;
        if version_minor.is_null() || result.is_null() {
            return Err(Error::InvalidArgument("version_minor or result is NULL"));
        }
        match extension_version(extension, None) {
            Some((ma, mi)) if ma == version_major => {
                write_out(version_minor, mi, "version_minor")?;
                write_out(result, true, "result")
            }
            _ => write_out(result, false, "result"),
        }
    })
}

fn extension_table(
    extension: u16,
    version_major: u16,
    length: usize,
    table: *mut c_void,
) -> Result<()> {
    ensure_open()?;
    if table.is_null() {
        return Err(Error::InvalidArgument("table is NULL"));
    }
    match u32::from(extension) {
        HSA_EXTENSION_AMD_LOADER => {
            match super::loader_extension::loader_extension_table(version_major, length, table) {
                HSA_STATUS_SUCCESS => Ok(()),
                s => Err(Error::Status(s)),
            }
        }
        HSA_EXTENSION_AMD_AQLPROFILE => aqlprofile_table(version_major, length, table),
        HSA_EXTENSION_IMAGES => super::image::extension_table(version_major, length, table),
        _ => Err(Error::InvalidArgument(
            "extension not supported by this runtime",
        )),
    }
}

/// The aqlprofile v1 table (the `aqlprofile` crate's functions, the counter packets of the
/// virtual GPU): its first `length` bytes, as ROCR copies `min(sizeof, length)`.
fn aqlprofile_table(version_major: u16, length: usize, table: *mut c_void) -> Result<()> {
    if version_major != hsa_abi::aqlprofile::AQLPROFILE_EXTENSION_MAJOR {
        return Err(Error::InvalidArgument(
            "the aqlprofile extension has major version 1 only",
        ));
    }
    let full = aqlprofile::v1::table();
    let n = length.min(std::mem::size_of_val(&full));
    // SAFETY: the caller's table holds `length` >= `n` writable bytes; `full` is plain data.
    unsafe { std::ptr::copy_nonoverlapping((&raw const full).cast::<u8>(), table.cast(), n) };
    Ok(())
}

unsafe extern "C" fn hsa_system_get_extension_table_impl(
    extension: u16,
    version_major: u16,
    _version_minor: u16,
    table: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_system_get_extension_table", || {
        let length = match u32::from(extension) {
            HSA_EXTENSION_AMD_AQLPROFILE => size_of::<hsa_ven_amd_aqlprofile_1_00_pfn_t>(),
            HSA_EXTENSION_IMAGES => size_of::<hsa_ext_images_1_00_pfn_t>(),
            _ => size_of::<hsa_ven_amd_loader_1_00_pfn_t>(),
        };
        extension_table(extension, version_major, length, table)
    })
}

unsafe extern "C" fn hsa_system_get_major_extension_table_impl(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_system_get_major_extension_table", || {
        extension_table(extension, version_major, table_length, table)
    })
}

unsafe extern "C" fn hsa_extension_get_name_impl(
    extension: u16,
    name: *mut *const c_char,
) -> hsa_status_t {
    status_call("hsa_extension_get_name", || {
        ensure_open()?;
        let s: &'static std::ffi::CStr = match u32::from(extension) {
            HSA_EXTENSION_FINALIZER => c"HSA_EXTENSION_FINALIZER",
            HSA_EXTENSION_IMAGES => c"HSA_EXTENSION_IMAGES",
            HSA_EXTENSION_PERFORMANCE_COUNTERS => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            HSA_EXTENSION_PROFILING_EVENTS => c"HSA_EXTENSION_PROFILING_EVENTS",
            HSA_EXTENSION_AMD_PROFILER => c"HSA_EXTENSION_AMD_PROFILER",
            HSA_EXTENSION_AMD_LOADER => c"HSA_EXTENSION_AMD_LOADER",
            HSA_EXTENSION_AMD_AQLPROFILE => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return Err(Error::InvalidArgument("unknown extension")),
        };
        write_out(name, s.as_ptr(), "name is NULL")
    })
}

unsafe extern "C" fn hsa_agent_extension_supported_impl(
    extension: u16,
    agent: hsa_agent_t,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> hsa_status_t {
    status_call("hsa_agent_extension_supported", || {
        ensure_open()?;
        let agent = crate::topology::agent(agent.handle)?;
        let ok = extension_version(extension, Some(agent))
            .is_some_and(|(ma, mi)| ma == version_major && version_minor <= mi);
        write_out(result, ok, "result is NULL")
    })
}

unsafe extern "C" fn hsa_agent_major_extension_supported_impl(
    extension: u16,
    agent: hsa_agent_t,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> hsa_status_t {
    status_call("hsa_agent_major_extension_supported", || {
        ensure_open()?;
        let agent = crate::topology::agent(agent.handle)?;
        if version_minor.is_null() {
            return Err(Error::InvalidArgument("version_minor is NULL"));
        }
        match extension_version(extension, Some(agent)) {
            Some((ma, mi)) if ma == version_major => {
                write_out(version_minor, mi, "version_minor")?;
                write_out(result, true, "result is NULL")
            }
            _ => write_out(result, false, "result is NULL"),
        }
    })
}

/// Fills this module's slots.
pub(super) fn install(core: &mut CoreApiTable) {
    core.hsa_status_string_fn = Some(hsa_status_string_impl);
    core.hsa_system_extension_supported_fn = Some(hsa_system_extension_supported_impl);
    core.hsa_system_major_extension_supported_fn = Some(hsa_system_major_extension_supported_impl);
    core.hsa_system_get_extension_table_fn = Some(hsa_system_get_extension_table_impl);
    core.hsa_system_get_major_extension_table_fn = Some(hsa_system_get_major_extension_table_impl);
    core.hsa_extension_get_name_fn = Some(hsa_extension_get_name_impl);
    core.hsa_agent_extension_supported_fn = Some(hsa_agent_extension_supported_impl);
    core.hsa_agent_major_extension_supported_fn = Some(hsa_agent_major_extension_supported_impl);
}
