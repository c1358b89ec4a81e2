//! Why a dispatch stopped early.

use std::fmt;

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// A lane accessed memory outside what the memory interface vouches for (or outside its
    /// private segment).
    Memory {
        /// Device address of the first byte.
        address: u64,
        /// Access size in bytes.
        size: u32,
        /// Lane (0-63), or `None` for a scalar access.
        lane: Option<u32>,
        /// Whether it was a write (stores and atomics).
        write: bool,
    },
    /// An atomic at an address not aligned to its size.
    Misaligned {
        /// Device address.
        address: u64,
        /// Lane.
        lane: u32,
    },
    /// An instruction the decoder does not know or the emulator does not implement (or an
    /// operand form of it), or a floating-point mode the emulator does not model.
    IllegalInstruction {
        /// What exactly is missing.
        reason: String,
    },
    /// `s_trap` with a trap id that ends the dispatch (2 is `llvm.trap`).
    Trap {
        /// The trap id.
        code: u16,
    },
    /// A jump to an address outside the decoded code or not on an instruction boundary.
    BadJump {
        /// The target address.
        target: u64,
    },
    /// The dispatch ran longer than the emulator's time limit (an endless loop or a
    /// spin-wait on memory nothing writes, such as a host call the runtime does not serve).
    TimeLimit {
        /// The limit.
        seconds: f64,
    },
    /// The caller cancelled the dispatch (`Emulator::dispatch_cancellable`).
    Cancelled,
    /// The kernel descriptor or the dispatch setup cannot be run.
    BadDispatch {
        /// What is wrong and what to do.
        reason: String,
    },
}

/// A fault: what happened, in which kernel, at which instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The kernel's name, when the dispatch setup gave one.
    pub kernel: Option<String>,
    /// Device address of the faulting instruction (0 when none).
    pub pc: u64,
    /// Byte offset of the faulting instruction from the kernel's entry point.
    pub code_offset: i64,
    /// Disassembly of the faulting instruction (empty when none).
    pub instruction: String,
    /// Work-group id of the faulting wave.
    pub workgroup: [u32; 3],
    /// Wave index within the work-group.
    pub wave: u32,
}

impl Fault {
    pub(crate) fn dispatch(reason: impl Into<String>, kernel: Option<&str>) -> Fault {
        Fault {
            kind: FaultKind::BadDispatch {
                reason: reason.into(),
            },
            kernel: kernel.map(str::to_string),
            pc: 0,
            code_offset: 0,
            instruction: String::new(),
            workgroup: [0; 3],
            wave: 0,
        }
    }

    /// The kernel as messages name it: its name, or for a kernel without a symbol (a runtime's
    /// own shader, such as ROCR's copy kernels, loaded as bare code) its entry address.
    fn kernel_label(&self) -> String {
        match (&self.kernel, self.pc) {
            (Some(name), _) => name.clone(),
            (None, 0) => "a kernel without a symbol".into(),
            (None, pc) => format!(
                "the kernel without a symbol entered at 0x{:x}",
                pc.wrapping_add_signed(-self.code_offset)
            ),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kernel = self.kernel_label();
        match &self.kind {
            FaultKind::Memory {
                address,
                size,
                lane,
                write,
            } => {
                let what = if *write { "write" } else { "read" };
                let lane = lane
                    .map(|l| format!("lane {l}"))
                    .unwrap_or_else(|| "scalar".into());
                write!(
                    f,
                    "memory fault: {what} of {size} bytes at 0x{address:x} ({lane}) outside the dispatch's memory"
                )?;
            }
            FaultKind::Misaligned { address, lane } => {
                write!(f, "misaligned atomic at 0x{address:x} (lane {lane})")?
            }
            FaultKind::IllegalInstruction { reason } => write!(f, "illegal instruction: {reason}")?,
            FaultKind::Trap { code } => write!(f, "s_trap {code} (kernel trap)")?,
            FaultKind::TimeLimit { seconds } => write!(
                f,
                "the dispatch ran longer than the emulator's limit of {seconds} s (an endless loop or a wait nothing satisfies)"
            )?,
            FaultKind::Cancelled => write!(
                f,
                "the dispatch was cancelled by its runtime (its queue is being destroyed)"
            )?,
            FaultKind::BadJump { target } => write!(
                f,
                "jump to 0x{target:x}, which is not an instruction of the kernel's code"
            )?,
            FaultKind::BadDispatch { reason } => {
                return write!(f, "cannot emulate {kernel}: {reason}");
            }
        }
        // Code before the entry (a function the kernel called) lies at a negative offset.
        let sign = if self.code_offset < 0 { '-' } else { '+' };
        write!(
            f,
            " at {kernel}{sign}0x{:x} (`{}`), work-group ({},{},{}) wave {}",
            self.code_offset.unsigned_abs(),
            self.instruction,
            self.workgroup[0],
            self.workgroup[1],
            self.workgroup[2],
            self.wave
        )
    }
}

impl std::error::Error for Fault {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_before_the_entry_is_named_at_a_negative_offset() {
        let at = |code_offset| Fault {
            kind: FaultKind::Trap { code: 2 },
            kernel: Some("k".into()),
            pc: 0x1000,
            code_offset,
            instruction: "s_trap 2".into(),
            workgroup: [1, 0, 0],
            wave: 0,
        };
        assert!(at(-0xb48).to_string().contains(" at k-0xb48 (`s_trap 2`)"));
        assert!(at(0x24).to_string().contains(" at k+0x24 (`s_trap 2`)"));
    }

    #[test]
    fn a_kernel_without_a_name_is_named_by_its_entry_address() {
        let fault = Fault {
            kind: FaultKind::Memory {
                address: 0x10,
                size: 4,
                lane: Some(3),
                write: false,
            },
            kernel: None,
            pc: 0x7000_1040,
            code_offset: 0x40,
            instruction: "global_load_dword v1, v[2:3], off".into(),
            workgroup: [0, 0, 0],
            wave: 0,
        };
        let text = fault.to_string();
        assert!(
            text.contains(
                " at the kernel without a symbol entered at 0x70001000+0x40 (`global_load"
            ),
            "{text}"
        );
        let setup = Fault::dispatch("no code", None).to_string();
        assert_eq!(setup, "cannot emulate a kernel without a symbol: no code");
    }
}
