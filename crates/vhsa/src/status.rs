//! Human-readable descriptions of status codes (`hsa_status_string`).

use hsa_abi::ffi::*;
use std::ffi::CStr;

/// `HSA_STATUS_ERROR_OUT_OF_REGISTERS` (newer than the installed headers).
pub(crate) const STATUS_ERROR_OUT_OF_REGISTERS: hsa_status_t = 45;

/// The description of `status`, or `None` for a code the runtime does not define.
pub(crate) fn describe(status: hsa_status_t) -> Option<&'static CStr> {
    Some(match status {
        HSA_STATUS_SUCCESS => c"HSA_STATUS_SUCCESS: the function completed successfully.",
        HSA_STATUS_INFO_BREAK => c"HSA_STATUS_INFO_BREAK: a callback asked to stop an iteration.",
        HSA_STATUS_ERROR => c"HSA_STATUS_ERROR: a generic error occurred.",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: an argument is invalid (NULL pointer, bad size or unknown attribute).",
        HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: the queue cannot be created with these parameters.",
        HSA_STATUS_ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: the allocation is invalid or the region does not allow it.",
        HSA_STATUS_ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: the agent handle does not name an agent.",
        HSA_STATUS_ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: the region handle does not name a region.",
        HSA_STATUS_ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: the signal handle does not name a live signal.",
        HSA_STATUS_ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: the queue is invalid.",
        HSA_STATUS_ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: the runtime ran out of a resource.",
        HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: a packet in a queue is malformed.",
        HSA_STATUS_ERROR_RESOURCE_FREE => c"HSA_STATUS_ERROR_RESOURCE_FREE: a resource could not be released.",
        HSA_STATUS_ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: the runtime is not initialized; call hsa_init first.",
        HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: the runtime reference count overflowed.",
        HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS => c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: the arguments are incompatible with each other.",
        HSA_STATUS_ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: the index is out of range.",
        HSA_STATUS_ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: the ISA handle is invalid.",
        HSA_STATUS_ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: the ISA name is not supported.",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: the code object is invalid.",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: the executable is invalid.",
        HSA_STATUS_ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: the executable is frozen.",
        HSA_STATUS_ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: no symbol has this name.",
        HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED => c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: the variable is already defined.",
        HSA_STATUS_ERROR_VARIABLE_UNDEFINED => c"HSA_STATUS_ERROR_VARIABLE_UNDEFINED: the variable is undefined.",
        HSA_STATUS_ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: an HSAIL exception occurred.",
        HSA_STATUS_ERROR_INVALID_CODE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: the code symbol is invalid.",
        HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: the executable symbol is invalid.",
        HSA_STATUS_ERROR_INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: the file descriptor is invalid.",
        HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: the code object reader is invalid.",
        HSA_STATUS_ERROR_INVALID_CACHE => c"HSA_STATUS_ERROR_INVALID_CACHE: the cache handle is invalid.",
        HSA_STATUS_ERROR_INVALID_WAVEFRONT => c"HSA_STATUS_ERROR_INVALID_WAVEFRONT: the wavefront handle is invalid.",
        HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP => c"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: the signal group is invalid.",
        HSA_STATUS_ERROR_INVALID_RUNTIME_STATE => c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: the runtime is in a state that does not allow this call.",
        HSA_STATUS_ERROR_FATAL => c"HSA_STATUS_ERROR_FATAL: a fatal error occurred.",
        HSA_STATUS_ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: the memory pool handle is invalid.",
        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION => c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: an access left the allowed memory aperture.",
        HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION => c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: a kernel executed an illegal instruction.",
        HSA_STATUS_ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: a kernel accessed memory it may not access.",
        HSA_STATUS_CU_MASK_REDUCED => c"HSA_STATUS_CU_MASK_REDUCED: the CU mask was reduced to the available compute units.",
        STATUS_ERROR_OUT_OF_REGISTERS => c"HSA_STATUS_ERROR_OUT_OF_REGISTERS: a kernel needs more registers than the agent has.",
        HSA_EXT_STATUS_ERROR_INVALID_PROGRAM => c"HSA_EXT_STATUS_ERROR_INVALID_PROGRAM: the program is invalid.",
        HSA_EXT_STATUS_ERROR_INVALID_MODULE => c"HSA_EXT_STATUS_ERROR_INVALID_MODULE: the module is invalid.",
        HSA_EXT_STATUS_ERROR_INCOMPATIBLE_MODULE => c"HSA_EXT_STATUS_ERROR_INCOMPATIBLE_MODULE: the module does not match the program's machine model or profile.",
        HSA_EXT_STATUS_ERROR_MODULE_ALREADY_INCLUDED => c"HSA_EXT_STATUS_ERROR_MODULE_ALREADY_INCLUDED: the module is already part of the program.",
        HSA_EXT_STATUS_ERROR_SYMBOL_MISMATCH => c"HSA_EXT_STATUS_ERROR_SYMBOL_MISMATCH: a symbol's declaration and definition differ.",
        HSA_EXT_STATUS_ERROR_FINALIZATION_FAILED => c"HSA_EXT_STATUS_ERROR_FINALIZATION_FAILED: the finalizer failed.",
        HSA_EXT_STATUS_ERROR_DIRECTIVE_MISMATCH => c"HSA_EXT_STATUS_ERROR_DIRECTIVE_MISMATCH: a directive contradicts the finalizer's arguments.",
        HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED: the image format is not supported.",
        HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED: the image size is not supported.",
        HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED: the image pitch is not supported or invalid.",
        HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: the sampler descriptor is not supported or invalid.",
        _ => return None,
    })
}
