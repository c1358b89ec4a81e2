//! kreplay: kernel-dispatch replay loaded into HSA applications as a runtime tool.

#![deny(missing_docs)]

/// Entry point called by the HSA runtime after it loads the library as a tool.
///
/// # Safety
/// Called by the runtime with its live API table; the pointers are only read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OnLoad(
    _table: *mut hsa_abi::HsaApiTable,
    _runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const std::ffi::c_char,
) -> bool {
    true
}
