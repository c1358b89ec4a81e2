//! Finding the IR constructs that become markers.
//!
//! | IR construct | marker |
//! |---|---|
//! | `call @__sqtt_named_marker_enter(ptr "name")` | enter, `U:` row |
//! | `call @__sqtt_named_marker_exit(ptr "name")` | exit (word 1); fused with a directly following enter |
//! | `call @__sqtt_named_marker_point(ptr "name")` | point, `P:` row |
//! | `call @__sqtt_named_marker_data(ptr "name", i32 v)` | point + 1 payload record, `P:` and `R:` rows |
//! | `call @llvm.amdgcn.s.ttracedata(i32 v)` (numeric markers) | re-emitted with scope check and boundary |
//! | `call @llvm.amdgcn.s.barrier()`, `.s.barrier.signal`, `.s.barrier.wait` | points before and after |
//! | `load`/`store` through address space 0, 1, 7, 8; `llvm.amdgcn.*buffer.load/store*` | `vmem_load`/`vmem_store` groups |
//! | `load`/`store` through address space 0/1 (`memory`) or 3 (`lds`) | address-trace blocks |

use llvm_sys::LLVMOpcode;
use llvm_sys::prelude::*;

use crate::ir;
use crate::options::FunctionThreshold;

/// Which user marker a named-marker call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedOp {
    /// `sqtt_marker_enter("name")`.
    Enter,
    /// `sqtt_marker_exit("name")`.
    Exit,
    /// `sqtt_marker_point("name")`.
    Point,
    /// `sqtt_marker_data("name", value)`.
    Data,
}

/// The symbols the marker header calls for named markers.
pub const NAMED_SYMBOLS: [(&str, NamedOp); 4] = [
    ("__sqtt_named_marker_enter", NamedOp::Enter),
    ("__sqtt_named_marker_exit", NamedOp::Exit),
    ("__sqtt_named_marker_point", NamedOp::Point),
    ("__sqtt_named_marker_data", NamedOp::Data),
];

/// A named-marker call.
#[derive(Debug, Clone)]
pub struct NamedSite {
    /// The call instruction.
    pub call: LLVMValueRef,
    /// Which marker.
    pub op: NamedOp,
    /// The name, when it is a constant string.
    pub name: Option<String>,
    /// For exits: fused into the enter that directly follows.
    pub fused_into_next: bool,
    /// For enters: the exit directly before was fused into this one.
    pub fuses_exit: bool,
}

/// The user marker a call instruction stands for, if any.
pub fn named_op(i: LLVMValueRef) -> Option<NamedOp> {
    let name = ir::callee_name(i)?;
    NAMED_SYMBOLS
        .iter()
        .find(|(s, _)| *s == name)
        .map(|(_, op)| *op)
}

/// Whether an instruction may observe or change state other than registers (so it separates
/// two markers for fusion).
fn has_effects(i: LLVMValueRef) -> bool {
    use LLVMOpcode::*;
    matches!(
        ir::opcode(i),
        LLVMCall
            | LLVMInvoke
            | LLVMLoad
            | LLVMStore
            | LLVMFence
            | LLVMAtomicRMW
            | LLVMAtomicCmpXchg
            | LLVMRet
            | LLVMBr
            | LLVMSwitch
            | LLVMUnreachable
            | LLVMCallBr
            | LLVMIndirectBr
    )
}

/// Named-marker calls of `f`, in order, with exit+enter fusion decided.
pub fn named_sites(f: LLVMValueRef) -> Vec<NamedSite> {
    let mut sites = Vec::new();
    for bb in ir::blocks(f) {
        let insts = ir::instructions(bb);
        let mut pending_exit: Option<usize> = None;
        for &i in &insts {
            if let Some(op) = named_op(i) {
                let name = ir::const_c_string(ir::operand(i, 0));
                let mut site = NamedSite {
                    call: i,
                    op,
                    name,
                    fused_into_next: false,
                    fuses_exit: false,
                };
                if op == NamedOp::Enter
                    && site.name.is_some()
                    && let Some(e) = pending_exit.take()
                {
                    let exit: &mut NamedSite = &mut sites[e];
                    exit.fused_into_next = true;
                    site.fuses_exit = true;
                }
                pending_exit = None;
                sites.push(site);
                if op == NamedOp::Exit && sites.last().is_some_and(|s: &NamedSite| s.name.is_some())
                {
                    pending_exit = Some(sites.len() - 1);
                }
                continue;
            }
            if has_effects(i) {
                pending_exit = None;
            }
        }
    }
    sites
}

/// Numeric markers: `llvm.amdgcn.s.ttracedata` calls (from the header's numeric API).
pub fn numeric_sites(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    for bb in ir::blocks(f) {
        for i in ir::instructions(bb) {
            if matches!(
                ir::callee_name(i).as_deref(),
                Some("llvm.amdgcn.s.ttracedata") | Some("llvm.amdgcn.s.ttracedata.imm")
            ) {
                out.push(i);
            }
        }
    }
    out
}

/// Weighted cost of one instruction (`SQTT_INSTRUMENT_FUNCTIONS=cost:N`).
pub fn instruction_cost(i: LLVMValueRef) -> u64 {
    use LLVMOpcode::*;
    match ir::opcode(i) {
        LLVMPHI | LLVMAlloca | LLVMUnreachable => 0,
        LLVMLoad | LLVMStore | LLVMAtomicRMW | LLVMAtomicCmpXchg => {
            let ptr = match ir::opcode(i) {
                LLVMLoad | LLVMAtomicRMW | LLVMAtomicCmpXchg => ir::operand(i, 0),
                _ => ir::operand(i, 1),
            };
            match ir::pointer_address_space(ptr) {
                3 => 4,
                5 => 1,
                _ => 10,
            }
        }
        LLVMCall => {
            let name = ir::callee_name(i).unwrap_or_default();
            if name.starts_with("llvm.dbg.") || name.starts_with("llvm.lifetime.") {
                0
            } else if name.starts_with("llvm.amdgcn.ds.") {
                4
            } else if name.starts_with("llvm.amdgcn.mfma.")
                || name.starts_with("llvm.amdgcn.smfmac.")
                || name.starts_with("llvm.amdgcn.wmma.")
                || name.starts_with("llvm.amdgcn.swmmac.")
            {
                16
            } else {
                1
            }
        }
        _ => 1,
    }
}

/// Size of `f` under `threshold`'s measure (instruction count or weighted cost).
pub fn function_size(f: LLVMValueRef, threshold: FunctionThreshold) -> u64 {
    let mut total = 0;
    for bb in ir::blocks(f) {
        for i in ir::instructions(bb) {
            total += match threshold {
                FunctionThreshold::Count(_) => {
                    let is_debug = ir::callee_name(i).is_some_and(|n| n.starts_with("llvm.dbg."));
                    u64::from(!is_debug)
                }
                FunctionThreshold::Cost(_) => instruction_cost(i),
            };
        }
    }
    total
}

/// Whether `f` is over the threshold.
pub fn exceeds(f: LLVMValueRef, threshold: FunctionThreshold) -> bool {
    let limit = match threshold {
        FunctionThreshold::Count(n) | FunctionThreshold::Cost(n) => n,
    };
    function_size(f, threshold) > limit
}

/// The barrier construct at an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierOp {
    /// `s_barrier`, or a signal directly followed by a wait (fused).
    Barrier,
    /// A standalone `s_barrier_signal`.
    Signal,
    /// A standalone `s_barrier_wait`.
    Wait,
}

impl BarrierOp {
    /// The `P:` row name.
    pub fn marker_name(self) -> &'static str {
        match self {
            BarrierOp::Barrier => "barrier",
            BarrierOp::Signal => "barrier_signal",
            BarrierOp::Wait => "barrier_wait",
        }
    }
}

/// A barrier site: markers go before `first` and after `last`.
#[derive(Debug, Clone, Copy)]
pub struct BarrierSite {
    /// Which construct.
    pub op: BarrierOp,
    /// First instruction of the construct.
    pub first: LLVMValueRef,
    /// Last instruction of the construct.
    pub last: LLVMValueRef,
}

fn barrier_kind(i: LLVMValueRef) -> Option<BarrierOp> {
    match ir::callee_name(i)?.as_str() {
        "llvm.amdgcn.s.barrier" => Some(BarrierOp::Barrier),
        "llvm.amdgcn.s.barrier.signal"
        | "llvm.amdgcn.s.barrier.signal.isfirst"
        | "llvm.amdgcn.s.barrier.signal.var" => Some(BarrierOp::Signal),
        "llvm.amdgcn.s.barrier.wait" => Some(BarrierOp::Wait),
        _ => None,
    }
}

/// Barrier constructs of `f`; a signal directly followed by a wait (nothing with effects in
/// between) is one fused site.
pub fn barrier_sites(f: LLVMValueRef) -> Vec<BarrierSite> {
    let mut out: Vec<BarrierSite> = Vec::new();
    for bb in ir::blocks(f) {
        let mut open_signal: Option<usize> = None;
        for i in ir::instructions(bb) {
            match barrier_kind(i) {
                Some(BarrierOp::Wait) if open_signal.is_some() => {
                    let s = open_signal.take().expect("checked");
                    out[s] = BarrierSite {
                        op: BarrierOp::Barrier,
                        first: out[s].first,
                        last: i,
                    };
                }
                Some(op) => {
                    out.push(BarrierSite {
                        op,
                        first: i,
                        last: i,
                    });
                    open_signal = (op == BarrierOp::Signal).then_some(out.len() - 1);
                }
                None if has_effects(i) => open_signal = None,
                None => {}
            }
        }
    }
    out
}

/// Direction of a memory operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Load,
    /// A store.
    Store,
    /// An atomic read-modify-write or compare-exchange (traced, never grouped).
    Atomic,
}

/// Where the per-lane addresses of a traced operation come from.
#[derive(Debug, Clone, Copy)]
pub enum AddressSource {
    /// A flat or global pointer (64-bit per lane).
    Flat(LLVMValueRef),
    /// An LDS pointer (32-bit per lane).
    Lds(LLVMValueRef),
    /// A raw buffer access: descriptor, per-lane offset, uniform offset.
    RawBuffer {
        /// The resource descriptor (`<4 x i32>` or `ptr addrspace(8)`).
        rsrc: LLVMValueRef,
        /// Per-lane byte offset.
        voffset: LLVMValueRef,
        /// Uniform byte offset.
        soffset: LLVMValueRef,
    },
}

impl AddressSource {
    /// The `P:` row name of a trace of this source with `access`.
    pub fn marker_name(&self, access: Access) -> &'static str {
        match (self, access) {
            (AddressSource::Flat(_), Access::Load) => "addr_trace_load",
            (AddressSource::Flat(_), Access::Store) => "addr_trace_store",
            (AddressSource::Lds(_), Access::Load) => "addr_trace_lds_load",
            (AddressSource::Lds(_), Access::Store) => "addr_trace_lds_store",
            (AddressSource::RawBuffer { .. }, Access::Load) => "addr_trace_buffer_load",
            (AddressSource::RawBuffer { .. }, Access::Store) => "addr_trace_buffer_store",
            (AddressSource::Flat(_), Access::Atomic) => "addr_trace_atomic",
            (AddressSource::Lds(_), Access::Atomic) => "addr_trace_lds_atomic",
            (AddressSource::RawBuffer { .. }, Access::Atomic) => "addr_trace_buffer_atomic",
        }
    }
}

/// A memory operation.
#[derive(Debug, Clone, Copy)]
pub struct MemoryOp {
    /// The instruction.
    pub inst: LLVMValueRef,
    /// Load or store.
    pub access: Access,
    /// Address space of the pointer (`u32::MAX` for buffer intrinsics).
    pub address_space: u32,
    /// Position in its block (for gap measurement).
    pub index: usize,
    /// Where its addresses come from, when it can be traced.
    pub address: Option<AddressSource>,
}

/// Classifies a memory operation.
pub fn memory_op(i: LLVMValueRef, index: usize) -> Option<MemoryOp> {
    match ir::opcode(i) {
        LLVMOpcode::LLVMLoad => {
            let p = ir::operand(i, 0);
            Some(MemoryOp {
                inst: i,
                access: Access::Load,
                address_space: ir::pointer_address_space(p),
                index,
                address: address_of(p),
            })
        }
        LLVMOpcode::LLVMStore => {
            let p = ir::operand(i, 1);
            Some(MemoryOp {
                inst: i,
                access: Access::Store,
                address_space: ir::pointer_address_space(p),
                index,
                address: address_of(p),
            })
        }
        LLVMOpcode::LLVMAtomicRMW | LLVMOpcode::LLVMAtomicCmpXchg => {
            let p = ir::operand(i, 0);
            Some(MemoryOp {
                inst: i,
                access: Access::Atomic,
                address_space: ir::pointer_address_space(p),
                index,
                address: address_of(p),
            })
        }
        LLVMOpcode::LLVMCall => {
            let name = ir::callee_name(i)?;
            let rest = name.strip_prefix("llvm.amdgcn.")?;
            if !rest.contains("buffer.") || rest.contains(".lds") || rest.contains("atomic") {
                return None;
            }
            let access = if rest.contains("buffer.load") {
                Access::Load
            } else if rest.contains("buffer.store") {
                Access::Store
            } else {
                return None;
            };
            // raw.(ptr.)buffer.load(rsrc, voffset, soffset, aux);
            // raw.(ptr.)buffer.store(vdata, rsrc, voffset, soffset, aux).
            let raw = rest.starts_with("raw.buffer.") || rest.starts_with("raw.ptr.buffer.");
            let first = if access == Access::Load { 0 } else { 1 };
            let address = raw.then(|| AddressSource::RawBuffer {
                rsrc: ir::operand(i, first),
                voffset: ir::operand(i, first + 1),
                soffset: ir::operand(i, first + 2),
            });
            Some(MemoryOp {
                inst: i,
                access,
                address_space: u32::MAX,
                index,
                address,
            })
        }
        _ => None,
    }
}

fn address_of(p: LLVMValueRef) -> Option<AddressSource> {
    match ir::pointer_address_space(p) {
        0 | 1 => Some(AddressSource::Flat(p)),
        3 => Some(AddressSource::Lds(p)),
        _ => None,
    }
}

/// Whether an operation counts for `SQTT_INSTRUMENT_MEMORY` (global, buffer, flat; not LDS,
/// scratch or constant).
pub fn is_vector_memory(op: &MemoryOp) -> bool {
    op.access != Access::Atomic && matches!(op.address_space, 0 | 1 | 7 | 8 | u32::MAX)
}

/// Groups of `ops_per_marker` operations: returns the operations that start a group.
/// A sequence breaks when the gap (instructions strictly between two operations) exceeds
/// `max_gap` or the direction changes.
pub fn group_starts(ops: &[(Access, usize)], ops_per_marker: u32, max_gap: u32) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut in_seq = 0u32;
    let mut prev: Option<(Access, usize)> = None;
    for (k, &(access, index)) in ops.iter().enumerate() {
        let continues =
            prev.is_some_and(|(pa, pi)| pa == access && index - pi - 1 <= max_gap as usize);
        if !continues {
            in_seq = 0;
        }
        if in_seq.is_multiple_of(ops_per_marker) {
            starts.push(k);
        }
        in_seq += 1;
        prev = Some((access, index));
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use Access::*;

    #[test]
    fn grouping_by_count_and_gap() {
        // Four loads close together, N=2: markers at 0 and 2.
        assert_eq!(
            group_starts(&[(Load, 0), (Load, 1), (Load, 3), (Load, 4)], 2, 5),
            [0, 2]
        );
        // A gap of 6 > 5 breaks the sequence.
        assert_eq!(
            group_starts(&[(Load, 0), (Load, 7), (Load, 8)], 2, 5),
            [0, 1]
        );
        // Gap exactly 5 continues.
        assert_eq!(group_starts(&[(Load, 0), (Load, 6)], 2, 5), [0]);
        // Loads and stores never share a group.
        assert_eq!(
            group_starts(&[(Load, 0), (Store, 1), (Store, 2), (Load, 3)], 2, 5),
            [0, 1, 3]
        );
        // N=1: every op.
        assert_eq!(group_starts(&[(Load, 0), (Load, 1)], 1, 0), [0, 1]);
    }
}
