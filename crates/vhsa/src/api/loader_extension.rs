//! The AMD loader extension (`hsa_ven_amd_loader_1_03_pfn_t` and its older prefixes).
//!
//! Device memory is host memory here, so a loaded segment's host address is its device
//! address. Each loaded code object is one segment (all its `PT_LOAD` segments in one block),
//! stored in memory (the loader keeps a copy of the ELF file).

use crate::boundary::{InfoValue, status_call, write_info, write_out};
use crate::error::{Error, Result};
use crate::executable::loader;
use crate::open_state::ensure_open;
use hsa_abi::ffi::*;
use std::ffi::c_void;

type ExecutableCallback =
    Option<unsafe extern "C" fn(hsa_executable_t, *mut c_void) -> hsa_status_t>;
type LoadedCodeObjectCallback = Option<
    unsafe extern "C" fn(hsa_executable_t, hsa_loaded_code_object_t, *mut c_void) -> hsa_status_t,
>;

unsafe extern "C" fn query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> hsa_status_t {
    status_call("hsa_ven_amd_loader_query_host_address", || {
        ensure_open()?;
        if device_address.is_null() || host_address.is_null() {
            return Err(Error::InvalidArgument(
                "device_address or host_address is NULL",
            ));
        }
        loader::loaded_code_object_at(device_address as u64).ok_or(Error::InvalidArgument(
            "device_address is not inside a loaded code object",
        ))?;
        write_out(host_address, device_address, "host_address is NULL")
    })
}

fn descriptor(lco: &loader::LoadedCodeObject) -> hsa_ven_amd_loader_segment_descriptor_t {
    hsa_ven_amd_loader_segment_descriptor_t {
        agent: lco.agent,
        executable: hsa_executable_t {
            handle: lco.executable,
        },
        code_object_storage_type: HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
        code_object_storage_base: lco.bytes.as_ptr().cast(),
        code_object_storage_size: lco.bytes.len(),
        code_object_storage_offset: lco.code.storage_offset() as usize,
        segment_base: lco.image.base as *const c_void,
        segment_size: lco.image.size as usize,
    }
}

unsafe extern "C" fn query_segment_descriptors(
    descriptors: *mut hsa_ven_amd_loader_segment_descriptor_t,
    count: *mut usize,
) -> hsa_status_t {
    status_call("hsa_ven_amd_loader_query_segment_descriptors", || {
        ensure_open()?;
        if count.is_null() {
            return Err(Error::InvalidArgument("num_segment_descriptors is NULL"));
        }
        // SAFETY: non-NULL; the caller passes a pointer to one size_t.
        let asked = unsafe { count.read_unaligned() };
        if (asked == 0) != descriptors.is_null() {
            return Err(Error::InvalidArgument(
                "segment_descriptors must be NULL exactly when *num_segment_descriptors is 0",
            ));
        }
        let all = loader::all_loaded_code_objects();
        if asked == 0 {
            return write_out(count, all.len(), "num_segment_descriptors");
        }
        if asked != all.len() {
            // ROCR's answer when the count changed since it was queried.
            return Err(Error::Status(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS));
        }
        for (i, lco) in all.iter().enumerate() {
            // SAFETY: the caller provides `asked` descriptors (checked equal to the count).
            unsafe { descriptors.add(i).write_unaligned(descriptor(lco)) };
        }
        Ok(())
    })
}

unsafe extern "C" fn query_executable(
    device_address: *const c_void,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    status_call("hsa_ven_amd_loader_query_executable", || {
        ensure_open()?;
        if device_address.is_null() || executable.is_null() {
            return Err(Error::InvalidArgument(
                "device_address or executable is NULL",
            ));
        }
        let lco = loader::loaded_code_object_at(device_address as u64).ok_or(
            Error::InvalidArgument("device_address is not inside a loaded code object"),
        )?;
        write_out(
            executable,
            hsa_executable_t {
                handle: lco.executable,
            },
            "executable is NULL",
        )
    })
}

unsafe extern "C" fn executable_iterate_loaded_code_objects(
    executable: hsa_executable_t,
    callback: LoadedCodeObjectCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call(
        "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
        || {
            ensure_open()?;
            let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
            for lco in loader::loaded_code_objects(executable.handle)? {
                // SAFETY: the application's callback, called with the arguments the API documents.
                let status = unsafe {
                    cb(
                        executable,
                        hsa_loaded_code_object_t { handle: lco.handle },
                        data,
                    )
                };
                if status != HSA_STATUS_SUCCESS {
                    return Err(Error::Status(status));
                }
            }
            Ok(())
        },
    )
}

unsafe extern "C" fn loaded_code_object_get_info(
    loaded: hsa_loaded_code_object_t,
    attribute: hsa_ven_amd_loader_loaded_code_object_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_ven_amd_loader_loaded_code_object_get_info", || {
        ensure_open()?;
        let lco = loader::loaded_code_object(loaded.handle)?;
        let v = match attribute {
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE => InfoValue::U64(lco.executable),
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND => {
                InfoValue::U32(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT => InfoValue::U64(lco.agent.handle),
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE => {
                InfoValue::U32(HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE => {
                InfoValue::U64(lco.bytes.as_ptr() as u64)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE => {
                InfoValue::U64(lco.bytes.len() as u64)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_FILE => {
                // Storage is memory: there is no file descriptor to report.
                return Err(Error::InvalidArgument(
                    "the code object is stored in memory, not in a file",
                ));
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA => {
                InfoValue::U64(lco.delta() as u64)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE => InfoValue::U64(lco.image.base),
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE => InfoValue::U64(lco.image.size),
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH => {
                InfoValue::U32(lco.uri.len() as u32)
            }
            HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI => {
                InfoValue::Bytes(lco.uri.as_bytes().to_vec())
            }
            _ => {
                return Err(Error::InvalidArgument(
                    "unknown loaded code object attribute",
                ));
            }
        };
        write_info(value, v)
    })
}

unsafe extern "C" fn reader_create_from_file_with_offset_size(
    fd: hsa_file_t,
    offset: usize,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    status_call(
        "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
        || super::executable::reader_from_file_range(fd, offset, size, reader),
    )
}

unsafe extern "C" fn iterate_executables(
    callback: ExecutableCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_ven_amd_loader_iterate_executables", || {
        ensure_open()?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        if crate::fault::symbol_iteration_fails() {
            tracing::warn!(
                "executable iteration fails: fault injected (vhsa_fault_fail_symbol_iteration)"
            );
            return Err(Error::Status(HSA_STATUS_ERROR));
        }
        for handle in loader::executables() {
            // SAFETY: the application's callback, called with the arguments the API documents.
            let status = unsafe { cb(hsa_executable_t { handle }, data) };
            if status != HSA_STATUS_SUCCESS {
                return Err(Error::Status(status));
            }
        }
        Ok(())
    })
}

/// Writes the loader table: as many entries of `hsa_ven_amd_loader_1_03_pfn_t` as fit in
/// `table_length` bytes (1.00 has three, 1.01 five, 1.02 six, 1.03 seven).
pub(crate) fn loader_extension_table(
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> hsa_status_t {
    status_call(
        "hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER)",
        || fill(version_major, table_length, table),
    )
}

fn fill(version_major: u16, table_length: usize, table: *mut c_void) -> Result<()> {
    if version_major != 1 {
        return Err(Error::InvalidArgument(
            "the AMD loader extension has major version 1 only",
        ));
    }
    if table.is_null() {
        return Err(Error::InvalidArgument("table is NULL"));
    }
    let full = hsa_ven_amd_loader_1_03_pfn_t {
        hsa_ven_amd_loader_query_host_address: Some(query_host_address),
        hsa_ven_amd_loader_query_segment_descriptors: Some(query_segment_descriptors),
        hsa_ven_amd_loader_query_executable: Some(query_executable),
        hsa_ven_amd_loader_executable_iterate_loaded_code_objects: Some(
            executable_iterate_loaded_code_objects,
        ),
        hsa_ven_amd_loader_loaded_code_object_get_info: Some(loaded_code_object_get_info),
        hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size: Some(
            reader_create_from_file_with_offset_size,
        ),
        hsa_ven_amd_loader_iterate_executables: Some(iterate_executables),
    };
    let len = table_length.min(std::mem::size_of_val(&full));
    // SAFETY: the caller provides `table_length` writable bytes; `len` does not exceed either
    // that or the source struct.
    unsafe {
        std::ptr::copy_nonoverlapping((&raw const full).cast::<u8>(), table.cast::<u8>(), len)
    };
    Ok(())
}
