//! The PM4 commands ROCR 5.2 puts into an AQL queue: one `INDIRECT_BUFFER` jump (in a vendor
//! packet of AMD format 1) to a buffer holding an `ACQUIRE_MEM` that invalidates the shader
//! caches after a code object is loaded. The buffer is read from thunk memory; `ACQUIRE_MEM`
//! makes the node's emulator forget the code it decoded (the instruction cache is invalidated),
//! `NOP` is skipped, and any other command is logged once and skipped.

use hsa_abi::ffi::*;
use vgpu::aql::DispatchError;

const TYPE3: u32 = 3;
const OP_NOP: u32 = 0x10;
const OP_INDIRECT_BUFFER: u32 = 0x3F;
const OP_ACQUIRE_MEM: u32 = 0x58;
/// Commands that program registers or copy register values: a real aqlprofile's counter
/// packets. The virtual GPU has no such registers; running them as no-ops would give counters
/// that silently read zero.
const REGISTER_OPS: &[(u32, &str)] = &[
    (0x21, "REG_RMW"),
    (0x37, "WRITE_DATA"),
    (0x3C, "WAIT_REG_MEM"),
    (0x40, "COPY_DATA"),
    (0x46, "EVENT_WRITE"),
    (0x68, "SET_CONFIG_REG"),
    (0x76, "SET_SH_REG"),
    (0x79, "SET_UCONFIG_REG"),
];

fn bad(message: String) -> DispatchError {
    DispatchError::Failed(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, message)
}

/// (type, opcode, dwords after the header) of a PM4 header.
fn decode(header: u32) -> (u32, u32, usize) {
    (
        header >> 30,
        (header >> 8) & 0xFF,
        ((header >> 16) & 0x3FFF) as usize + 1,
    )
}

/// Runs the indirect buffer a vendor packet of format 1 points at.
pub(crate) fn run_indirect_buffer(node: u32, slot: *mut u8) -> Result<(), DispatchError> {
    let mut jump = [0u32; 4];
    for (i, d) in jump.iter_mut().enumerate() {
        // SAFETY: the jump command lies at bytes 4..20 of the 64-byte packet.
        *d = unsafe { slot.add(4 + 4 * i).cast::<u32>().read_volatile() };
    }
    let (kind, op, _) = decode(jump[0]);
    if kind != TYPE3 || op != OP_INDIRECT_BUFFER {
        return Err(bad(format!(
            "PM4 packet {:#x} is not an indirect-buffer jump",
            jump[0]
        )));
    }
    let base = u64::from(jump[1] & !3) | (u64::from(jump[2] & 0xFFFF) << 32);
    let dwords = (jump[3] & 0xF_FFFF) as usize;
    if !crate::vm::contains(base, dwords as u64 * 4) {
        return Err(bad(format!(
            "PM4 indirect buffer {base:#x} (+{dwords} dwords) is not memory of the thunk"
        )));
    }
    // SAFETY: `dwords` dwords of live thunk memory, checked above.
    let ib = unsafe { std::slice::from_raw_parts(base as *const u32, dwords) };
    let mut at = 0;
    while at < ib.len() {
        let (kind, op, len) = decode(ib[at]);
        if kind != TYPE3 {
            return Err(bad(format!(
                "PM4 header {:#x} is not a type-3 packet",
                ib[at]
            )));
        }
        match op {
            OP_ACQUIRE_MEM => crate::dispatch::invalidate_code(node),
            OP_NOP => {}
            other if REGISTER_OPS.iter().any(|(o, _)| *o == other) => {
                let name = REGISTER_OPS
                    .iter()
                    .find(|(o, _)| *o == other)
                    .map_or("", |(_, n)| n);
                return Err(bad(format!(
                    "PM4 {name} ({other:#x}) writes GPU registers, which the virtual GPU does not have: these are a real aqlprofile's counter packets; counters here come from the libhsa-amd-aqlprofile64.so of the virtual GPU (first on LD_LIBRARY_PATH)"
                )));
            }
            other => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| tracing::warn!("PM4 opcode {other:#x} is skipped"));
            }
        }
        at += 1 + len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_decode_into_type_opcode_and_length() {
        // A type-3 INDIRECT_BUFFER header with 3 dwords after it (count field 2).
        assert_eq!(decode(0xC002_3F00), (3, OP_INDIRECT_BUFFER, 3));
        assert_eq!(decode(0xC005_5800), (3, OP_ACQUIRE_MEM, 6));
    }
}
