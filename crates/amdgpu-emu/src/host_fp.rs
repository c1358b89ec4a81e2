//! The host floating-point environment the emulator's arithmetic runs under.
//!
//! Kernel arithmetic is computed with host floating-point instructions, whose results depend
//! on the host thread's control register (x86-64 MXCSR, AArch64 FPCR): its rounding mode and
//! its flush-to-zero / denormals-are-zero bits. A thread inherits that register from its
//! creator, so an application built with fast-math start-up code (which sets FTZ and DAZ)
//! would make the emulator flush denormals that the kernel's MODE keeps. The emulator handles
//! MODE's rounding and denormal controls itself; it needs the host in IEEE form: round to
//! nearest even, denormals kept, every exception masked. [`IeeeHostFp`] sets exactly that for
//! the time an emulator thread runs kernel code and restores the caller's value after.

/// While alive, the current thread computes with IEEE host floating point; dropping it
/// restores the previous control register. Not `Send`: it belongs to the thread it pinned.
pub(crate) struct IeeeHostFp {
    saved: usize,
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl IeeeHostFp {
    /// Pin the current thread to IEEE host floating point.
    pub(crate) fn pin() -> IeeeHostFp {
        let saved = control::read();
        control::write(control::ieee(saved));
        IeeeHostFp {
            saved,
            _thread_bound: std::marker::PhantomData,
        }
    }
}

impl Drop for IeeeHostFp {
    fn drop(&mut self) {
        control::write(self.saved);
    }
}

#[cfg(target_arch = "x86_64")]
mod control {
    /// MXCSR: exception masks (bits 7-12), rounding control (13-14), FTZ (15), DAZ (6).
    const MASKS: usize = 0x1F80;

    pub(super) fn read() -> usize {
        let mut v: u32 = 0;
        // SAFETY: `stmxcsr` stores the 4-byte MXCSR to a valid, writable local.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags))
        };
        v as usize
    }

    pub(super) fn write(v: usize) {
        let v = v as u32;
        // SAFETY: `ldmxcsr` loads a value read by `read` or built by `ieee` (no reserved bits
        // set), which changes only this thread's floating-point environment.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags)) };
    }

    /// Round to nearest even, no FTZ or DAZ, every exception masked; the sticky status flags
    /// are cleared.
    pub(super) fn ieee(_current: usize) -> usize {
        MASKS
    }
}

#[cfg(target_arch = "aarch64")]
mod control {
    /// FPCR: FZ16 (19), RMode (22-23), FZ (24), and the trap enables (8-12, 15).
    const CLEAR: usize = 1 << 19 | 3 << 22 | 1 << 24 | 0x1F << 8 | 1 << 15;

    pub(super) fn read() -> usize {
        let v: usize;
        // SAFETY: reading FPCR has no side effect.
        unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) v, options(nomem, nostack)) };
        v
    }

    pub(super) fn write(v: usize) {
        // SAFETY: writing a value read from FPCR or derived from it by clearing control bits
        // changes only this thread's floating-point environment.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) v, options(nomem, nostack)) };
    }

    pub(super) fn ieee(current: usize) -> usize {
        current & !CLEAR
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod control {
    pub(super) fn read() -> usize {
        0
    }
    pub(super) fn write(_v: usize) {}
    pub(super) fn ieee(current: usize) -> usize {
        current
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{IeeeHostFp, control};

    #[test]
    fn pinning_clears_flush_to_zero_and_restores_the_callers_value() {
        let before = control::read();
        let ftz = before | 1 << 15 | 1 << 6;
        control::write(ftz);
        {
            let _pin = IeeeHostFp::pin();
            let tiny = std::hint::black_box(f32::from_bits(1));
            assert_eq!((tiny * 1.0).to_bits(), 1, "denormals are kept while pinned");
        }
        assert_eq!(control::read() & (1 << 15 | 1 << 6), 1 << 15 | 1 << 6);
        control::write(before);
    }
}
