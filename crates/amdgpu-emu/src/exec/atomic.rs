//! Atomic read-modify-write operations of LDS (`ds_*`) and global memory (`*_atomic_*`):
//! what each operation computes, resolved once per operation when the table is first used,
//! so executing an atomic (and every compare-and-swap retry) does no name parsing and no
//! allocation.

use std::sync::OnceLock;

use crate::decode::Op;

use super::float;

/// The arithmetic of an atomic: the new memory value from the old one and the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rmw {
    Swap,
    /// Store the data when the old value equals the compare value.
    CmpSwap,
    /// [`Rmw::CmpSwap`] with a floating-point compare (DS `cmpst_f32`/`_f64`): +0 equals -0
    /// and a NaN equals nothing.
    CmpSwapF,
    /// Clear the bits of the data (a mask) and set those of the second operand (DS `mskor`).
    MskOr,
    /// Subtract the data when the old value is at least the data, else add the second operand
    /// (DS `wrap`, for ring buffers).
    Wrap,
    Add,
    Sub,
    /// Data minus the old value.
    Rsub,
    MinI,
    MaxI,
    MinU,
    MaxU,
    And,
    Or,
    Xor,
    /// Old + 1, wrapping to 0 past the data.
    Inc,
    /// Old - 1, wrapping to the data at 0 or above it.
    Dec,
    AddF32,
    MinF32,
    MaxF32,
    AddF64,
    MinF64,
    MaxF64,
    PkAddF16,
    PkAddBf16,
}

/// An atomic operation: its arithmetic, its width and whether it returns the old value by
/// its name (DS `_rtn`; FLAT atomics return by their GLC bit instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Atomic {
    pub rmw: Rmw,
    /// 64-bit memory value.
    pub wide: bool,
    pub returns: bool,
}

/// The atomic an operation performs, or `None` when it is not an atomic.
pub(crate) fn atomic(op: Op) -> Option<Atomic> {
    static TABLE: OnceLock<Vec<Option<Atomic>>> = OnceLock::new();
    TABLE.get_or_init(|| Op::ALL.iter().map(|&o| atomic_of(o)).collect())[op as usize]
}

fn atomic_of(op: Op) -> Option<Atomic> {
    let name = op.name();
    if let Some(rest) = name.strip_prefix("ds_") {
        let returns = rest.contains("_rtn");
        let plain = rest.replace("_rtn", "");
        let (what, ty) = plain.rsplit_once('_')?;
        let wide = ty.ends_with("64");
        let float = ty.starts_with('f');
        let rmw = match (what, ty.as_bytes()[0]) {
            ("add", b'f') => {
                if wide {
                    Rmw::AddF64
                } else {
                    Rmw::AddF32
                }
            }
            ("min", b'f') if wide => Rmw::MinF64,
            ("max", b'f') if wide => Rmw::MaxF64,
            ("min", b'f') => Rmw::MinF32,
            ("max", b'f') => Rmw::MaxF32,
            ("add", _) => Rmw::Add,
            ("sub", _) => Rmw::Sub,
            ("rsub", _) => Rmw::Rsub,
            ("inc", _) => Rmw::Inc,
            ("dec", _) => Rmw::Dec,
            ("min", b'i') => Rmw::MinI,
            ("max", b'i') => Rmw::MaxI,
            ("min", b'u') => Rmw::MinU,
            ("max", b'u') => Rmw::MaxU,
            ("and", _) => Rmw::And,
            ("or", _) => Rmw::Or,
            ("xor", _) => Rmw::Xor,
            ("wrxchg", _) => Rmw::Swap,
            ("cmpst", _) if !float => Rmw::CmpSwap,
            ("cmpst", _) => Rmw::CmpSwapF,
            ("mskor", _) => Rmw::MskOr,
            ("wrap", _) => Rmw::Wrap,
            ("pk_add", b'f') => Rmw::PkAddF16,
            ("pk_add", b'b') => Rmw::PkAddBf16,
            _ => return None,
        };
        return Some(Atomic { rmw, wide, returns });
    }
    let rest = name.split_once("_atomic_")?.1;
    let wide = rest.ends_with("_x2") || rest.ends_with("f64");
    let rmw = match rest.trim_end_matches("_x2") {
        "swap" => Rmw::Swap,
        "cmpswap" => Rmw::CmpSwap,
        "add" => Rmw::Add,
        "sub" => Rmw::Sub,
        "smin" => Rmw::MinI,
        "umin" => Rmw::MinU,
        "smax" => Rmw::MaxI,
        "umax" => Rmw::MaxU,
        "and" => Rmw::And,
        "or" => Rmw::Or,
        "xor" => Rmw::Xor,
        "inc" => Rmw::Inc,
        "dec" => Rmw::Dec,
        "add_f32" => Rmw::AddF32,
        "pk_add_f16" => Rmw::PkAddF16,
        "pk_add_bf16" => Rmw::PkAddBf16,
        "add_f64" => Rmw::AddF64,
        "min_f64" => Rmw::MinF64,
        "max_f64" => Rmw::MaxF64,
        _ => return None,
    };
    Some(Atomic {
        rmw,
        wide,
        returns: false,
    })
}

impl Rmw {
    /// Whether the operation takes a second data operand (the compare value of a swap, the
    /// bits to set of `mskor`, the addend of `wrap`), passed to [`Rmw::apply`] as `cmp`.
    pub(crate) fn second_operand(self) -> bool {
        matches!(self, Rmw::CmpSwap | Rmw::CmpSwapF | Rmw::MskOr | Rmw::Wrap)
    }

    /// The new memory value (`wide`: 64 bits, else the low 32 bits of each argument).
    pub(crate) fn apply(self, wide: bool, old: u64, data: u64, cmp: u64) -> u64 {
        if wide {
            self.apply64(old, data, cmp)
        } else {
            self.apply32(old as u32, data as u32, cmp as u32) as u64
        }
    }

    fn apply32(self, old: u32, data: u32, cmp: u32) -> u32 {
        let fl = f32::from_bits;
        match self {
            Rmw::Swap => data,
            Rmw::CmpSwap => {
                if old == cmp {
                    data
                } else {
                    old
                }
            }
            Rmw::CmpSwapF => {
                if fl(old) == fl(cmp) {
                    data
                } else {
                    old
                }
            }
            Rmw::MskOr => (old & !data) | cmp,
            Rmw::Wrap => {
                if old >= data {
                    old - data
                } else {
                    old.wrapping_add(cmp)
                }
            }
            Rmw::Add => old.wrapping_add(data),
            Rmw::Sub => old.wrapping_sub(data),
            Rmw::Rsub => data.wrapping_sub(old),
            Rmw::MinI => (old as i32).min(data as i32) as u32,
            Rmw::MaxI => (old as i32).max(data as i32) as u32,
            Rmw::MinU => old.min(data),
            Rmw::MaxU => old.max(data),
            Rmw::And => old & data,
            Rmw::Or => old | data,
            Rmw::Xor => old ^ data,
            Rmw::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Rmw::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Rmw::AddF32 => (fl(old) + fl(data)).to_bits(),
            Rmw::MinF32 => float::min32(fl(old), fl(data)).to_bits(),
            Rmw::MaxF32 => float::max32(fl(old), fl(data)).to_bits(),
            Rmw::PkAddF16 => {
                let half = |v: u32, k: u32| half::f16::from_bits((v >> (16 * k)) as u16).to_f32();
                let sum = |k: u32| half::f16::from_f32(half(old, k) + half(data, k)).to_bits();
                sum(0) as u32 | (sum(1) as u32) << 16
            }
            Rmw::PkAddBf16 => {
                // A bf16 sum is exact in f32 or too far from a tie for the second rounding to
                // matter, so rounding the f32 sum to nearest even gives the bf16 result.
                let half = |v: u32, k: u32| half::bf16::from_bits((v >> (16 * k)) as u16).to_f32();
                let sum = |k: u32| half::bf16::from_f32(half(old, k) + half(data, k)).to_bits();
                sum(0) as u32 | (sum(1) as u32) << 16
            }
            // 64-bit arithmetic on a 32-bit value does not occur (the table never pairs them).
            Rmw::AddF64 | Rmw::MinF64 | Rmw::MaxF64 => old,
        }
    }

    fn apply64(self, old: u64, data: u64, cmp: u64) -> u64 {
        let fl = f64::from_bits;
        match self {
            Rmw::Swap => data,
            Rmw::CmpSwap => {
                if old == cmp {
                    data
                } else {
                    old
                }
            }
            Rmw::CmpSwapF => {
                if fl(old) == fl(cmp) {
                    data
                } else {
                    old
                }
            }
            Rmw::MskOr => (old & !data) | cmp,
            Rmw::Wrap => {
                if old >= data {
                    old - data
                } else {
                    old.wrapping_add(cmp)
                }
            }
            Rmw::Add => old.wrapping_add(data),
            Rmw::Sub => old.wrapping_sub(data),
            Rmw::Rsub => data.wrapping_sub(old),
            Rmw::MinI => (old as i64).min(data as i64) as u64,
            Rmw::MaxI => (old as i64).max(data as i64) as u64,
            Rmw::MinU => old.min(data),
            Rmw::MaxU => old.max(data),
            Rmw::And => old & data,
            Rmw::Or => old | data,
            Rmw::Xor => old ^ data,
            Rmw::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Rmw::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Rmw::AddF64 => (fl(old) + fl(data)).to_bits(),
            Rmw::MinF64 => float::min64(fl(old), fl(data)).to_bits(),
            Rmw::MaxF64 => float::max64(fl(old), fl(data)).to_bits(),
            // 32-bit arithmetic on a 64-bit value does not occur (the table never pairs them).
            Rmw::AddF32 | Rmw::MinF32 | Rmw::MaxF32 | Rmw::PkAddF16 | Rmw::PkAddBf16 => old,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_resolve_from_their_names_once() {
        let ds = atomic(Op::ds_add_rtn_f64).expect("atomic");
        assert_eq!(
            ds,
            Atomic {
                rmw: Rmw::AddF64,
                wide: true,
                returns: true
            }
        );
        assert_eq!(atomic(Op::ds_min_u64).map(|a| a.rmw), Some(Rmw::MinU));
        assert_eq!(
            atomic(Op::ds_cmpst_rtn_b32).map(|a| a.rmw),
            Some(Rmw::CmpSwap)
        );
        assert_eq!(atomic(Op::ds_read_b64), None);
        assert_eq!(atomic(Op::ds_write2_b32), None);
        let g = atomic(Op::flat_atomic_cmpswap_x2).expect("atomic");
        assert!(g.wide && g.rmw == Rmw::CmpSwap);
        assert_eq!(atomic(Op::flat_atomic_smin).map(|a| a.rmw), Some(Rmw::MinI));
        assert_eq!(atomic(Op::flat_load_dword), None);
    }

    #[test]
    fn arithmetic_wraps_as_the_hardware_defines() {
        assert_eq!(Rmw::Inc.apply(false, 5, 5, 0), 0);
        assert_eq!(Rmw::Dec.apply(false, 0, 7, 0), 7);
        assert_eq!(Rmw::Rsub.apply(true, 3, 10, 0), 7);
        assert_eq!(Rmw::MinI.apply(true, u64::MAX, 1, 0), u64::MAX);
        assert_eq!(Rmw::MinU.apply(true, u64::MAX, 1, 0), 1);
        assert_eq!(Rmw::CmpSwap.apply(false, 4, 9, 4), 9);
        assert_eq!(Rmw::CmpSwap.apply(false, 4, 9, 5), 4);
        let add = Rmw::AddF64.apply(true, 1.5f64.to_bits(), 2.25f64.to_bits(), 0);
        assert_eq!(f64::from_bits(add), 3.75);
    }
}
