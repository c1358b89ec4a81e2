//! Cooperative launches, read from a dispatch's arguments. A multi-device launch
//! (`hipLaunchCooperativeKernelMultiDevice`) runs one grid per agent, and the grids wait for
//! each other at every multi-grid barrier: one of them cannot run again alone, and a window
//! that waits for it before the next agent's grid is submitted waits forever.
//!
//! The kernel's cooperative-launch argument (`hidden_multigrid_sync_arg`, at the kernarg
//! offset its code-object metadata gives) is 0 or 1 outside a cooperative launch; otherwise it
//! is the address of the language runtime's grid information, which the device library reads
//! as the multi-grid barrier's address (8 bytes), the grid's rank (u32), then the number of
//! grids of the launch (u32).

use crate::host_memory::reach;
use crate::runtime::Runtime;
use std::ffi::c_void;

/// Offset of the number of grids in the grid information.
const NUM_GRIDS_AT: usize = 12;

/// How many grids the launch of a dispatch holds, from its cooperative-launch argument at
/// `offset` in the kernel arguments at `kernarg_address`: 1 outside a multi-device launch. The
/// error names what could not be read.
pub fn grids(rt: Runtime, kernarg_address: u64, offset: u64) -> Result<u32, String> {
    let end = offset as usize + 8;
    let args = reach::kernel_arguments(rt, kernarg_address as usize, Some(end))
        .filter(|a| a.len() >= end)
        .ok_or_else(|| format!("the kernel arguments at {kernarg_address:#x} are not readable"))?;
    let info = reach::words(&args[offset as usize..end])
        .next()
        .unwrap_or(0);
    if info <= 1 {
        return Ok(1);
    }
    let mut bytes = [0u8; NUM_GRIDS_AT + 4];
    // SAFETY: `bytes` holds its length; the source is the grid information the runtime
    // allocated for this launch, alive while its dispatch is being submitted.
    unsafe {
        rt.copy(
            bytes.as_mut_ptr().cast(),
            info as *const c_void,
            bytes.len(),
        )
    }
    .map_err(|e| format!("the grid information at {info:#x} is not readable ({e})"))?;
    let n = u32::from_le_bytes(bytes[NUM_GRIDS_AT..].try_into().unwrap_or_default());
    Ok(n.max(1))
}
