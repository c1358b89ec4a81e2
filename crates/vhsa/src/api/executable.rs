//! Entries of code objects and executables (the core table's `hsa_code_object_reader_*` and
//! `hsa_executable_*`), each inside a panic boundary.

use crate::boundary::{InfoValue, c_slice, c_str, status_call, write_info, write_out};
use crate::error::{Error, Result};
use crate::executable::loader::{self, SymbolDetail};
use crate::executable::{file_uri, read_fd};
use crate::open_state::ensure_open;
use hsa_abi::CoreApiTable;
use hsa_abi::ffi::*;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

unsafe extern "C" fn reader_create_from_file(
    fd: hsa_file_t,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    status_call("hsa_code_object_reader_create_from_file", || {
        ensure_open()?;
        if reader.is_null() {
            return Err(Error::InvalidArgument("code_object_reader is NULL"));
        }
        let bytes = read_fd(fd, 0, None)?;
        let uri = file_uri(fd, 0, bytes.len());
        let handle = loader::create_reader(bytes, uri);
        write_out(
            reader,
            hsa_code_object_reader_t { handle },
            "code_object_reader is NULL",
        )
    })
}

/// `hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size`.
pub(crate) fn reader_from_file_range(
    fd: hsa_file_t,
    offset: usize,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> Result<()> {
    ensure_open()?;
    if reader.is_null() || size == 0 {
        return Err(Error::InvalidArgument(
            "code_object_reader is NULL or size is 0",
        ));
    }
    let bytes = read_fd(fd, offset as u64, Some(size as u64))?;
    let uri = file_uri(fd, offset as u64, size);
    let handle = loader::create_reader(bytes, uri);
    write_out(
        reader,
        hsa_code_object_reader_t { handle },
        "code_object_reader is NULL",
    )
}

unsafe extern "C" fn reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut hsa_code_object_reader_t,
) -> hsa_status_t {
    status_call("hsa_code_object_reader_create_from_memory", || {
        ensure_open()?;
        if code_object.is_null() || size == 0 || reader.is_null() {
            return Err(Error::InvalidArgument(
                "code_object or code_object_reader is NULL, or size is 0",
            ));
        }
        let bytes = c_slice(code_object.cast::<u8>(), size, "code_object is NULL")?.to_vec();
        let uri = format!(
            "memory://{}#offset={:#x}&size={size}",
            std::process::id(),
            code_object as usize
        );
        let handle = loader::create_reader(bytes, uri);
        write_out(
            reader,
            hsa_code_object_reader_t { handle },
            "code_object_reader is NULL",
        )
    })
}

unsafe extern "C" fn reader_destroy(reader: hsa_code_object_reader_t) -> hsa_status_t {
    status_call("hsa_code_object_reader_destroy", || {
        ensure_open()?;
        Ok(loader::destroy_reader(reader.handle)?)
    })
}

// ---------------------------------------------------------------- executables

fn check_profile(profile: hsa_profile_t) -> Result<()> {
    if profile == HSA_PROFILE_BASE || profile == HSA_PROFILE_FULL {
        Ok(())
    } else {
        Err(Error::InvalidArgument(
            "profile is not HSA_PROFILE_BASE or HSA_PROFILE_FULL",
        ))
    }
}

unsafe extern "C" fn executable_create_alt(
    profile: hsa_profile_t,
    rounding: hsa_default_float_rounding_mode_t,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    status_call("hsa_executable_create_alt", || {
        ensure_open()?;
        check_profile(profile)?;
        if rounding > HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR {
            return Err(Error::InvalidArgument(
                "default_float_rounding_mode is not a rounding mode",
            ));
        }
        if executable.is_null() {
            return Err(Error::InvalidArgument("executable is NULL"));
        }
        let handle = loader::create_executable(profile, rounding);
        write_out(
            executable,
            hsa_executable_t { handle },
            "executable is NULL",
        )
    })
}

unsafe extern "C" fn executable_create(
    profile: hsa_profile_t,
    state: hsa_executable_state_t,
    _options: *const c_char,
    executable: *mut hsa_executable_t,
) -> hsa_status_t {
    status_call("hsa_executable_create", || {
        ensure_open()?;
        check_profile(profile)?;
        if state != HSA_EXECUTABLE_STATE_UNFROZEN {
            return Err(Error::InvalidArgument(
                "executable_state must be HSA_EXECUTABLE_STATE_UNFROZEN",
            ));
        }
        if executable.is_null() {
            return Err(Error::InvalidArgument("executable is NULL"));
        }
        let handle = loader::create_executable(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT);
        write_out(
            executable,
            hsa_executable_t { handle },
            "executable is NULL",
        )
    })
}

unsafe extern "C" fn executable_destroy(executable: hsa_executable_t) -> hsa_status_t {
    status_call("hsa_executable_destroy", || {
        ensure_open()?;
        Ok(loader::destroy_executable(executable.handle)?)
    })
}

unsafe extern "C" fn executable_load_agent_code_object(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    reader: hsa_code_object_reader_t,
    _options: *const c_char,
    loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    status_call("hsa_executable_load_agent_code_object", || {
        ensure_open()?;
        let a = crate::topology::agent(agent.handle)?;
        let handle = loader::load(executable.handle, agent, a.isa_name(), reader.handle)?;
        if !loaded.is_null() {
            write_out(
                loaded,
                hsa_loaded_code_object_t { handle },
                "loaded_code_object",
            )?;
        }
        Ok(())
    })
}

unsafe extern "C" fn executable_load_program_code_object(
    executable: hsa_executable_t,
    reader: hsa_code_object_reader_t,
    _options: *const c_char,
    _loaded: *mut hsa_loaded_code_object_t,
) -> hsa_status_t {
    status_call("hsa_executable_load_program_code_object", || {
        ensure_open()?;
        loader::executable_state(executable.handle)?;
        let _ = reader;
        // Code objects v3 and later only hold agent code; ROCR rejects them here as well.
        tracing::warn!(
            "hsa_executable_load_program_code_object: AMDGPU code objects hold agent code; use \
             hsa_executable_load_agent_code_object with the GPU agent"
        );
        Err(Error::Status(HSA_STATUS_ERROR_INVALID_CODE_OBJECT))
    })
}

unsafe extern "C" fn executable_freeze(
    executable: hsa_executable_t,
    _options: *const c_char,
) -> hsa_status_t {
    status_call("hsa_executable_freeze", || {
        ensure_open()?;
        Ok(loader::freeze(executable.handle)?)
    })
}

unsafe extern "C" fn executable_get_info(
    executable: hsa_executable_t,
    attribute: hsa_executable_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_executable_get_info", || {
        ensure_open()?;
        let (profile, frozen, rounding) = loader::executable_state(executable.handle)?;
        let v = match attribute {
            HSA_EXECUTABLE_INFO_PROFILE => InfoValue::U32(profile),
            HSA_EXECUTABLE_INFO_STATE => InfoValue::U32(if frozen {
                HSA_EXECUTABLE_STATE_FROZEN
            } else {
                HSA_EXECUTABLE_STATE_UNFROZEN
            }),
            HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE => InfoValue::U32(rounding),
            _ => return Err(Error::InvalidArgument("unknown executable attribute")),
        };
        write_info(value, v)
    })
}

fn validate(executable: hsa_executable_t, result: *mut u32) -> Result<()> {
    ensure_open()?;
    loader::executable_state(executable.handle)?;
    // Every loaded code object was checked against its agent when it was loaded.
    write_out(result, 0, "result is NULL")
}

unsafe extern "C" fn executable_validate(
    executable: hsa_executable_t,
    result: *mut u32,
) -> hsa_status_t {
    status_call("hsa_executable_validate", || validate(executable, result))
}

unsafe extern "C" fn executable_validate_alt(
    executable: hsa_executable_t,
    _options: *const c_char,
    result: *mut u32,
) -> hsa_status_t {
    status_call("hsa_executable_validate_alt", || {
        validate(executable, result)
    })
}

// ---------------------------------------------------------------- symbols

unsafe extern "C" fn executable_get_symbol_by_name(
    executable: hsa_executable_t,
    name: *const c_char,
    agent: *const hsa_agent_t,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    status_call("hsa_executable_get_symbol_by_name", || {
        ensure_open()?;
        let name = c_str(name, "symbol_name is NULL")?.to_string_lossy();
        if symbol.is_null() {
            return Err(Error::InvalidArgument("symbol is NULL"));
        }
        let agent = if agent.is_null() {
            None
        } else {
            // SAFETY: non-NULL; the caller passes a pointer to one agent handle.
            let a = unsafe { agent.read_unaligned() };
            crate::topology::agent(a.handle)?;
            Some(a.handle)
        };
        let s = loader::symbol_by_name(executable.handle, &name, agent)?;
        write_out(
            symbol,
            hsa_executable_symbol_t { handle: s.handle },
            "symbol is NULL",
        )
    })
}

unsafe extern "C" fn executable_get_symbol(
    executable: hsa_executable_t,
    module_name: *const c_char,
    symbol_name: *const c_char,
    agent: hsa_agent_t,
    _call_convention: i32,
    symbol: *mut hsa_executable_symbol_t,
) -> hsa_status_t {
    status_call("hsa_executable_get_symbol", || {
        ensure_open()?;
        let name = c_str(symbol_name, "symbol_name is NULL")?
            .to_string_lossy()
            .into_owned();
        // Module-linkage names are `module::name`; code objects v3+ have no module names.
        let full = if module_name.is_null() {
            name
        } else {
            let m = c_str(module_name, "module_name")?.to_string_lossy();
            if m.is_empty() {
                name
            } else {
                format!("{m}::{name}")
            }
        };
        if symbol.is_null() {
            return Err(Error::InvalidArgument("symbol is NULL"));
        }
        crate::topology::agent(agent.handle)?;
        let s = loader::symbol_by_name(executable.handle, &full, Some(agent.handle))?;
        write_out(
            symbol,
            hsa_executable_symbol_t { handle: s.handle },
            "symbol is NULL",
        )
    })
}

fn symbol_info(
    symbol: &loader::Symbol,
    attribute: hsa_executable_symbol_info_t,
    value: *mut c_void,
) -> Result<()> {
    let invalid = || {
        Err(Error::InvalidArgument(
            "attribute does not apply to this symbol's kind",
        ))
    };
    let v = match (attribute, &symbol.detail) {
        (HSA_EXECUTABLE_SYMBOL_INFO_TYPE, SymbolDetail::Kernel { .. }) => {
            InfoValue::U32(HSA_SYMBOL_KIND_KERNEL)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_TYPE, SymbolDetail::Variable { .. }) => {
            InfoValue::U32(HSA_SYMBOL_KIND_VARIABLE)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, _) => InfoValue::U32(symbol.name.len() as u32),
        // Exactly NAME_LENGTH bytes, no terminating NUL, as ROCR writes it.
        (HSA_EXECUTABLE_SYMBOL_INFO_NAME, _) => InfoValue::Bytes(symbol.name.as_bytes().to_vec()),
        (HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH, _) => InfoValue::U32(0),
        (HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME, _) => InfoValue::Bytes(Vec::new()),
        (HSA_EXECUTABLE_SYMBOL_INFO_AGENT, _) => InfoValue::U64(symbol.agent.handle),
        (HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE, _) => InfoValue::U32(if symbol.program_linkage {
            HSA_SYMBOL_LINKAGE_PROGRAM
        } else {
            HSA_SYMBOL_LINKAGE_MODULE
        }),
        (HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION, _) => InfoValue::Bool(true),
        (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, SymbolDetail::Variable { address, .. }) => {
            InfoValue::U64(*address)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION, SymbolDetail::Variable { .. }) => {
            InfoValue::U32(HSA_VARIABLE_ALLOCATION_AGENT)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT, SymbolDetail::Variable { is_const, .. }) => {
            InfoValue::U32(if *is_const {
                HSA_VARIABLE_SEGMENT_READONLY
            } else {
                HSA_VARIABLE_SEGMENT_GLOBAL
            })
        }
        (
            HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT,
            SymbolDetail::Variable { alignment, .. },
        ) => InfoValue::U32(*alignment as u32),
        (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, SymbolDetail::Variable { size, .. }) => {
            InfoValue::U32(*size as u32)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST, SymbolDetail::Variable { is_const, .. }) => {
            InfoValue::Bool(*is_const)
        }
        (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, SymbolDetail::Kernel { kernel_object, .. }) => {
            InfoValue::U64(*kernel_object)
        }
        (
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
            SymbolDetail::Kernel { descriptor, .. },
        ) => InfoValue::U32(descriptor.kernarg_size),
        (
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
            SymbolDetail::Kernel { .. },
        ) => InfoValue::U32(KERNARG_SEGMENT_ALIGNMENT),
        (
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
            SymbolDetail::Kernel { descriptor, .. },
        ) => InfoValue::U32(descriptor.group_segment_fixed_size),
        (
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
            SymbolDetail::Kernel { descriptor, .. },
        ) => InfoValue::U32(descriptor.private_segment_fixed_size),
        (
            HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK,
            SymbolDetail::Kernel { descriptor, .. },
        ) => InfoValue::Bool(descriptor.uses_dynamic_stack()),
        (HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION, SymbolDetail::Kernel { .. }) => {
            InfoValue::U32(0)
        }
        (
            HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_SIZE,
            SymbolDetail::Kernel {
                descriptor_size, ..
            },
        ) => InfoValue::U32(*descriptor_size as u32),
        (HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_ALIGN, SymbolDetail::Kernel { .. }) => {
            InfoValue::U32(64)
        }
        // No code object defines indirect functions (or their symbols), as in ROCR.
        _ => return invalid(),
    };
    write_info(value, v)
}

/// Kernel arguments are aligned to 16 bytes (the AMDGPU ABI's minimum).
const KERNARG_SEGMENT_ALIGNMENT: u32 = 16;
/// AMD extension attribute: size of the kernel object (descriptor) in bytes.
const HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_SIZE: hsa_executable_symbol_info_t = 100;
/// AMD extension attribute: alignment of the kernel object in bytes.
const HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_ALIGN: hsa_executable_symbol_info_t = 101;

unsafe extern "C" fn executable_symbol_get_info(
    symbol: hsa_executable_symbol_t,
    attribute: hsa_executable_symbol_info_t,
    value: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_executable_symbol_get_info", || {
        ensure_open()?;
        let s = loader::symbol(symbol.handle)?;
        if value.is_null() {
            return Err(Error::InvalidArgument("value is NULL"));
        }
        if crate::fault::symbol_info_fails()
            && matches!(
                attribute,
                HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS
                    | HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE
            )
            && matches!(s.detail, SymbolDetail::Variable { .. })
        {
            tracing::warn!("variable query fails: fault injected (vhsa_fault_fail_symbol_info)");
            return Err(Error::Status(HSA_STATUS_ERROR));
        }
        symbol_info(&s, attribute, value)
    })
}

/// Calls `f` for each symbol; stops early on a non-success status, which is returned.
fn iterate(
    symbols: Vec<Arc<loader::Symbol>>,
    mut f: impl FnMut(&loader::Symbol) -> hsa_status_t,
) -> Result<()> {
    if crate::fault::symbol_iteration_fails() {
        tracing::warn!("symbol iteration fails: fault injected (vhsa_fault_fail_symbol_iteration)");
        return Err(Error::Status(HSA_STATUS_ERROR));
    }
    for s in symbols {
        let status = f(&s);
        if status != HSA_STATUS_SUCCESS {
            return Err(Error::Status(status));
        }
    }
    Ok(())
}

type SymbolCallback = Option<
    unsafe extern "C" fn(hsa_executable_t, hsa_executable_symbol_t, *mut c_void) -> hsa_status_t,
>;
type AgentSymbolCallback = Option<
    unsafe extern "C" fn(
        hsa_executable_t,
        hsa_agent_t,
        hsa_executable_symbol_t,
        *mut c_void,
    ) -> hsa_status_t,
>;

unsafe extern "C" fn executable_iterate_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_executable_iterate_symbols", || {
        ensure_open()?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        let symbols = loader::symbols(executable.handle, None)?;
        // SAFETY: the application's callback, called with the arguments the API documents.
        iterate(symbols, |s| unsafe {
            cb(
                executable,
                hsa_executable_symbol_t { handle: s.handle },
                data,
            )
        })
    })
}

unsafe extern "C" fn executable_iterate_agent_symbols(
    executable: hsa_executable_t,
    agent: hsa_agent_t,
    callback: AgentSymbolCallback,
    data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_executable_iterate_agent_symbols", || {
        ensure_open()?;
        let cb = callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        crate::topology::agent(agent.handle)?;
        let symbols = loader::symbols(executable.handle, Some(agent.handle))?;
        // SAFETY: the application's callback, called with the arguments the API documents.
        iterate(symbols, |s| unsafe {
            cb(
                executable,
                agent,
                hsa_executable_symbol_t { handle: s.handle },
                data,
            )
        })
    })
}

unsafe extern "C" fn executable_iterate_program_symbols(
    executable: hsa_executable_t,
    callback: SymbolCallback,
    _data: *mut c_void,
) -> hsa_status_t {
    status_call("hsa_executable_iterate_program_symbols", || {
        ensure_open()?;
        callback.ok_or(Error::InvalidArgument("callback is NULL"))?;
        loader::executable_state(executable.handle)?;
        // Code objects v3+ define agent symbols only: there is nothing to report.
        iterate(Vec::new(), |_| HSA_STATUS_SUCCESS)
    })
}

/// Fills the executable and code-object-reader slots of the core table.
pub(crate) fn install(core: &mut CoreApiTable) {
    core.hsa_code_object_reader_create_from_file_fn = Some(reader_create_from_file);
    core.hsa_code_object_reader_create_from_memory_fn = Some(reader_create_from_memory);
    core.hsa_code_object_reader_destroy_fn = Some(reader_destroy);
    core.hsa_executable_create_fn = Some(executable_create);
    core.hsa_executable_create_alt_fn = Some(executable_create_alt);
    core.hsa_executable_destroy_fn = Some(executable_destroy);
    core.hsa_executable_load_agent_code_object_fn = Some(executable_load_agent_code_object);
    core.hsa_executable_load_program_code_object_fn = Some(executable_load_program_code_object);
    core.hsa_executable_freeze_fn = Some(executable_freeze);
    core.hsa_executable_get_info_fn = Some(executable_get_info);
    core.hsa_executable_validate_fn = Some(executable_validate);
    core.hsa_executable_validate_alt_fn = Some(executable_validate_alt);
    core.hsa_executable_get_symbol_fn = Some(executable_get_symbol);
    core.hsa_executable_get_symbol_by_name_fn = Some(executable_get_symbol_by_name);
    core.hsa_executable_symbol_get_info_fn = Some(executable_symbol_get_info);
    core.hsa_executable_iterate_symbols_fn = Some(executable_iterate_symbols);
    core.hsa_executable_iterate_agent_symbols_fn = Some(executable_iterate_agent_symbols);
    core.hsa_executable_iterate_program_symbols_fn = Some(executable_iterate_program_symbols);
}
