//! How the virtual GPU reports a kernel that faulted: the queue error each emulator fault
//! becomes, the same on both back ends (vhsa's queue error callback, ROCR's queue error on vkfd).

use amdgpu_emu::FaultKind;
use hsa_abi::ffi::*;

/// The queue error status an emulator fault ends its dispatch with.
pub fn queue_status(kind: &FaultKind) -> hsa_status_t {
    match kind {
        FaultKind::Memory { .. } | FaultKind::Misaligned { .. } => {
            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
        }
        FaultKind::IllegalInstruction { .. } | FaultKind::BadJump { .. } => {
            HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION
        }
        FaultKind::Trap { .. } => HSA_STATUS_ERROR_EXCEPTION,
        FaultKind::TimeLimit { .. } | FaultKind::Cancelled => HSA_STATUS_ERROR,
        FaultKind::BadDispatch { .. } => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
    }
}

/// The device address a fault names, for faults that have one (what a VM fault reports).
pub fn fault_address(kind: &FaultKind) -> Option<u64> {
    match kind {
        FaultKind::Memory { address, .. } | FaultKind::Misaligned { address, .. } => Some(*address),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_faults_are_aperture_violations_with_their_address() {
        let kind = FaultKind::Memory {
            address: 0x1000,
            size: 4,
            lane: Some(3),
            write: true,
        };
        assert_eq!(
            queue_status(&kind),
            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
        );
        assert_eq!(fault_address(&kind), Some(0x1000));
        let misaligned = FaultKind::Misaligned {
            address: 0x1002,
            lane: 0,
        };
        assert_eq!(
            queue_status(&misaligned),
            HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
        );
        assert_eq!(fault_address(&misaligned), Some(0x1002));
    }

    #[test]
    fn other_faults_map_to_their_own_statuses_and_have_no_address() {
        let illegal = FaultKind::IllegalInstruction { reason: "x".into() };
        assert_eq!(queue_status(&illegal), HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION);
        assert_eq!(fault_address(&illegal), None);
        assert_eq!(
            queue_status(&FaultKind::Trap { code: 2 }),
            HSA_STATUS_ERROR_EXCEPTION
        );
        assert_eq!(queue_status(&FaultKind::Cancelled), HSA_STATUS_ERROR);
    }
}
