//! A region of decoded instructions written as one LLVM function over a wave's registers.
//!
//! A region is a set of segments (runs of instructions up to a branch, `s_endpgm` or an
//! instruction the code does not take) joined by their branches, so that a loop runs inside
//! one call. Every segment is entered with every lane active (EXEC all ones: checked at its
//! head, else the wave leaves there) and stays so: an instruction that writes EXEC ends the
//! segment (a branch right after it is taken into the region). Register rows are stored as
//! they are written and kept as SSA values for the segment; scalar registers and SCC are
//! written back when the segment is left. An instruction whose operands or lanes the code
//! cannot take (a memory range that is not one contiguous range the memory vouches for, a
//! float result that is a NaN) leaves the region before it with everything before it
//! written back: the interpreter then runs it.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::decode::{Enc, Ext, Inst, LITERAL, OFF, Op, Op::*, Program, Ty, VCC, flags, seg};
use crate::exec::scalar::lshl_add_shift;
use crate::memory::{KEPT_SPANS, Spans};
use crate::wave::{Wave, inline_const};

use super::llvm::{Block, Function, Int, LANES, Real, Value};

/// What a region's code is called with: the wave's registers, the memory's translation and
/// the instruction budget in; where the wave goes on, and what ran, out.
#[repr(C)]
pub(super) struct Frame {
    /// The wave's register rows (row `r` at `64 * r` dwords).
    pub rows: *mut u32,
    /// The wave's 128 scalar registers.
    pub sgprs: *mut u32,
    /// The first argument of `translate`.
    pub memory: *mut u8,
    /// The host pointer of `len` bytes at a device address (null: none).
    pub translate: unsafe extern "C" fn(memory: *mut u8, addr: u64, len: u64) -> *mut u8,
    /// The thread's kept spans: the code translates addresses in them without calling
    /// `translate` (which may add to them).
    pub spans: *const Spans,
    /// The work-group's issue counts per counter class (null: not counting).
    pub issues: *mut u64,
    /// The work-group's active lanes of memory requests per counter class.
    pub lanes: *mut u64,
    /// The work-group's LDS and its length in bytes.
    pub lds: *mut u8,
    pub lds_len: u64,
    /// The most instructions the call may run.
    pub budget: u32,
    /// SCC (0 or 1), in and out.
    pub scc: u32,
    /// Out: the instruction the wave goes on at.
    pub next: u32,
    /// Out: how many instructions ran (0 in).
    pub ran: u32,
    /// Out: how many of them were vector instructions (0 in).
    pub vector: u32,
    /// Out: 1 when the wave ended.
    pub end: u32,
    /// Out: 1 when `next` starts a segment (a branch's target or the instruction after it).
    pub at_start: u32,
}

/// Byte offsets of the fields of [`Frame`] the code reads and writes.
mod frame {
    use super::Frame;
    use std::mem::offset_of;
    pub const ROWS: u64 = offset_of!(Frame, rows) as u64;
    pub const SGPRS: u64 = offset_of!(Frame, sgprs) as u64;
    pub const MEMORY: u64 = offset_of!(Frame, memory) as u64;
    pub const TRANSLATE: u64 = offset_of!(Frame, translate) as u64;
    pub const SPANS: u64 = offset_of!(Frame, spans) as u64;
    pub const SPAN_BASES: u64 = offset_of!(super::Spans, base) as u64;
    pub const SPAN_LENGTHS: u64 = offset_of!(super::Spans, len) as u64;
    pub const SPAN_HOSTS: u64 = offset_of!(super::Spans, host) as u64;
    pub const ISSUES: u64 = offset_of!(Frame, issues) as u64;
    pub const LANES: u64 = offset_of!(Frame, lanes) as u64;
    pub const LDS: u64 = offset_of!(Frame, lds) as u64;
    pub const LDS_LEN: u64 = offset_of!(Frame, lds_len) as u64;
    pub const BUDGET: u64 = offset_of!(Frame, budget) as u64;
    pub const SCC: u64 = offset_of!(Frame, scc) as u64;
    pub const NEXT: u64 = offset_of!(Frame, next) as u64;
    pub const RAN: u64 = offset_of!(Frame, ran) as u64;
    pub const VECTOR: u64 = offset_of!(Frame, vector) as u64;
    pub const END: u64 = offset_of!(Frame, end) as u64;
    pub const AT_START: u64 = offset_of!(Frame, at_start) as u64;
}

/// Bytes of one register row.
const ROW_BYTES: u64 = 4 * LANES as u64;
/// The most instructions one segment takes.
const SEGMENT: usize = 128;
/// The most instructions one region takes.
const REGION: usize = 512;
/// The most segments one region takes.
const SEGMENTS: usize = 64;

/// What the lowering made of a region.
pub(super) struct Lowered {
    pub function: Function,
    /// Whether an f32 operation is among its instructions (the region then needs MODE's
    /// IEEE form).
    pub float: bool,
}

/// Lowering state: the function, its segments, and the registers the current segment holds
/// as values.
struct Lower<'a> {
    f: Function,
    prog: &'a Program,
    /// The current segment's first instruction.
    start: usize,
    rows_base: Value,
    sgprs_base: Value,
    memory: Value,
    translate: Value,
    /// Register rows read or written in the segment (`<64 x i32>`, in memory too).
    rows: BTreeMap<usize, Value>,
    /// Scalar registers (`i32`), with whether written.
    sgprs: BTreeMap<u16, (Value, bool)>,
    /// SCC (`i1`), with whether written.
    scc: Option<(Value, bool)>,
    float: bool,
    /// EXEC was written: the segment ends after this instruction (and a branch after it).
    exec_written: bool,
    /// Each segment's head by its first instruction, and those not lowered yet.
    heads: HashMap<usize, Block>,
    queue: VecDeque<usize>,
    /// Instructions lowered so far.
    lowered: usize,
}

/// The region starting at instruction `start`, or `None` when its first instruction is not
/// one the code takes.
pub(super) fn lower(prog: &Program, start: usize) -> Option<Lowered> {
    let f = Function::new();
    let frame = f.frame();
    let field = |off: u64| f.offset(frame, f.c64(off));
    let (rows_base, sgprs_base) = (
        f.load(f.ptr, field(frame::ROWS), 8),
        f.load(f.ptr, field(frame::SGPRS), 8),
    );
    let (memory, translate) = (
        f.load(f.ptr, field(frame::MEMORY), 8),
        f.load(f.ptr, field(frame::TRANSLATE), 8),
    );
    let mut l = Lower {
        f,
        prog,
        start,
        rows_base,
        sgprs_base,
        memory,
        translate,
        rows: BTreeMap::new(),
        sgprs: BTreeMap::new(),
        scc: None,
        float: false,
        exec_written: false,
        heads: HashMap::new(),
        queue: VecDeque::new(),
        lowered: 0,
    };
    let first = l.head(start);
    l.f.br(first);
    while let Some(pc) = l.queue.pop_front() {
        let took = l.segment(pc);
        if pc == start && took == 0 {
            return None;
        }
    }
    Some(Lowered {
        float: l.float,
        function: l.f,
    })
}

fn is_branch(op: Op) -> bool {
    matches!(
        op,
        s_branch
            | s_cbranch_scc0
            | s_cbranch_scc1
            | s_cbranch_vccz
            | s_cbranch_vccnz
            | s_cbranch_execz
            | s_cbranch_execnz
    )
}

/// How lowering an instruction went.
enum Step {
    /// Lowered; the segment goes on.
    Next,
    /// Lowered as the segment's end (a branch or `s_endpgm`: its way on is written).
    Ended,
}

/// An even scalar register code starting a pair the code reads or writes (VCC and EXEC
/// among them).
fn is_pair(code: u16) -> bool {
    matches!(code, 0..=124 | 126) && code.is_multiple_of(2)
}

/// A 32-bit scalar source code the code reads from the wave's scalar registers.
fn is_sgpr(code: u16) -> bool {
    matches!(code, 0..=124 | 126 | 127)
}

impl Lower<'_> {
    // --- segments ---

    /// The head of the segment at instruction `pc` (queued for lowering when new).
    fn head(&mut self, pc: usize) -> Block {
        if let Some(&b) = self.heads.get(&pc) {
            return b;
        }
        let b = self.f.block();
        self.heads.insert(pc, b);
        self.queue.push_back(pc);
        b
    }

    /// Lower the segment at `pc` behind its head; returns how many instructions it took.
    fn segment(&mut self, pc: usize) -> usize {
        (self.start, self.exec_written) = (pc, false);
        self.rows.clear();
        self.sgprs.clear();
        self.scc = None;
        let body = self.f.block();
        self.f.at(body);
        let room = if self.heads.len() > SEGMENTS {
            0
        } else {
            SEGMENT.min(REGION.saturating_sub(self.lowered))
        };
        let (mut k, mut ended) = (0, false);
        while k < room && pc + k < self.prog.insts.len() {
            let inst = &self.prog.insts[pc + k];
            if self.exec_written && !is_branch(inst.op) {
                break;
            }
            match self.inst(inst, k) {
                Some(Step::Next) => k += 1,
                Some(Step::Ended) => {
                    (k, ended) = (k + 1, true);
                    break;
                }
                None => break,
            }
        }
        if !ended {
            let next = pc + k;
            let cut = k == room || self.exec_written;
            if k > 0 && cut && next < self.prog.insts.len() {
                // Cut by EXEC or a limit, not by the instruction after: on in another segment.
                self.leave_segment(k);
                let h = self.head(next);
                self.f.br(h);
            } else {
                self.exit(k, next, false);
            }
        }
        self.lowered += k;
        self.guard(pc, body, k);
        k
    }

    /// The head of the segment at `pc`: on into `body` (`k` instructions) while the budget
    /// allows them and every lane is active, else out at `pc`.
    fn guard(&mut self, pc: usize, body: Block, k: usize) {
        let f = &self.f;
        f.at(self.heads[&pc]);
        let field = |off: u64| f.offset(f.frame(), f.c64(off));
        let (ran, budget) = (
            f.load(f.i32, field(frame::RAN), 4),
            f.load(f.i32, field(frame::BUDGET), 4),
        );
        let over = f.icmp(Int::LLVMIntUGT, f.add(ran, f.c32(k as u32)), budget);
        let exec = f.load(f.i64, f.offset(self.sgprs_base, f.c64(4 * 126)), 4);
        let partial = f.icmp(Int::LLVMIntNE, exec, f.c64(u64::MAX));
        let out = f.block();
        f.unlikely_br(f.or(over, partial), out, body);
        f.at(out);
        self.ret_at(pc, false, true);
    }

    /// Leave the segment after its first `k` instructions: scalar registers and SCC written
    /// back, the instructions counted.
    fn leave_segment(&mut self, k: usize) {
        let f = &self.f;
        for (&c, &(v, dirty)) in &self.sgprs {
            if dirty {
                f.store(v, f.offset(self.sgprs_base, f.c64(4 * c as u64)), 4);
            }
        }
        if let Some((v, true)) = self.scc {
            f.store(f.zext(v, f.i32), f.offset(f.frame(), f.c64(frame::SCC)), 4);
        }
        self.count(k);
    }

    /// Leave the region at the segment's instruction `k` (`k` of its instructions done),
    /// going on at `next`; registers are written back unless the wave ended.
    fn exit(&mut self, k: usize, next: usize, end: bool) {
        if end {
            self.count(k);
        } else {
            self.leave_segment(k);
        }
        self.ret_at(next, end, false);
    }

    /// Return, the wave going on at `next` (`at_start`: a segment's first instruction).
    fn ret_at(&self, next: usize, end: bool, at_start: bool) {
        let f = &self.f;
        let put = |off: u64, v: u32| f.store(f.c32(v), f.offset(f.frame(), f.c64(off)), 4);
        put(frame::NEXT, next as u32);
        put(frame::END, end as u32);
        put(frame::AT_START, at_start as u32);
        f.ret();
    }

    /// Count the segment's first `k` instructions into the frame: instructions run, vector
    /// instructions among them, and, when the frame has counters, an issue each per counter
    /// class and a vector memory request's 64 lanes.
    fn count(&self, k: usize) {
        let insts = &self.prog.insts[self.start..self.start + k];
        let vector = insts.iter().filter(|i| counts_lanes(i)).count() as u32;
        let f = &self.f;
        let frame = f.frame();
        for (off, add) in [(frame::RAN, k as u32), (frame::VECTOR, vector)] {
            if add > 0 {
                let p = f.offset(frame, f.c64(off));
                f.store(f.add(f.load(f.i32, p, 4), f.c32(add)), p, 4);
            }
        }
        let mut per_class: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
        for inst in insts {
            let c = per_class.entry(inst.counter_class).or_default();
            c.0 += 1;
            c.1 += if matches!(inst.enc, Enc::Flat | Enc::Ds) {
                LANES as u64
            } else {
                0
            };
        }
        if per_class.is_empty() {
            return;
        }
        let field = |off: u64| f.load(f.ptr, f.offset(frame, f.c64(off)), 8);
        let (issues, lanes) = (field(frame::ISSUES), field(frame::LANES));
        let (counting, done) = (f.block(), f.block());
        f.cond_br(f.is_null(issues), done, counting);
        f.at(counting);
        for (&class, &(n, l)) in &per_class {
            for (base, add) in [(issues, n), (lanes, l)] {
                if add > 0 {
                    let p = f.offset(base, f.c64(8 * u64::from(class)));
                    f.store(f.add(f.load(f.i64, p, 8), f.c64(add)), p, 8);
                }
            }
        }
        f.br(done);
        f.at(done);
    }

    /// Leave the region before the segment's instruction `k` when `cond` (an `i1`) holds;
    /// lowering goes on in the other branch.
    fn leave_if(&mut self, cond: Value, k: usize) {
        let (cold, hot) = (self.f.block(), self.f.block());
        self.f.unlikely_br(cond, cold, hot);
        self.f.at(cold);
        self.exit(k, self.start + k, false);
        self.f.at(hot);
    }

    // --- registers held as values ---

    fn row(&mut self, slot: usize) -> Value {
        if let Some(&v) = self.rows.get(&slot) {
            return v;
        }
        let p = self
            .f
            .offset(self.rows_base, self.f.c64(slot as u64 * ROW_BYTES));
        let v = self.f.load(self.f.v32, p, 4);
        self.rows.insert(slot, v);
        v
    }

    /// Write a register row: stored at once (a row held only as a value until the region's
    /// exits would stay live across all of them, and 64 lanes fill four host vector
    /// registers), and kept as a value for the instructions after.
    fn set_row(&mut self, slot: usize, v: Value) {
        let slot = slot & 511;
        let p = self
            .f
            .offset(self.rows_base, self.f.c64(slot as u64 * ROW_BYTES));
        self.f.store(v, p, 4);
        self.rows.insert(slot, v);
    }

    fn sgpr(&mut self, c: u16) -> Value {
        if let Some((v, _)) = self.sgprs.get(&c) {
            return *v;
        }
        let p = self.f.offset(self.sgprs_base, self.f.c64(4 * c as u64));
        let v = self.f.load(self.f.i32, p, 4);
        self.sgprs.insert(c, (v, false));
        v
    }

    fn set_sgpr(&mut self, c: u16, v: Value) {
        if c >= 126 {
            self.exec_written = true;
        }
        self.sgprs.insert(c, (v, true));
    }

    /// The 64-bit pair at `c` (< 127).
    fn sgpr64(&mut self, c: u16) -> Value {
        let (lo, hi) = (self.sgpr(c), self.sgpr(c + 1));
        self.join(lo, hi, self.f.i64)
    }

    fn set_sgpr64(&mut self, c: u16, v: Value) {
        let (lo, hi) = self.split(v, self.f.i32);
        self.set_sgpr(c, lo);
        self.set_sgpr(c + 1, hi);
    }

    fn scc(&mut self) -> Value {
        if let Some((v, _)) = self.scc {
            return v;
        }
        let p = self.f.offset(self.f.frame(), self.f.c64(frame::SCC));
        let v = self.f.load(self.f.i32, p, 4);
        let v = self.f.icmp(Int::LLVMIntNE, v, self.f.c32(0));
        self.scc = Some((v, false));
        v
    }

    fn set_scc(&mut self, v: Value) {
        self.scc = Some((v, true));
    }

    /// `lo | hi << 32` in `wide` (`i64` or `<64 x i64>`).
    fn join(&self, lo: Value, hi: Value, wide: llvm_sys::prelude::LLVMTypeRef) -> Value {
        let f = &self.f;
        let shift = if wide == f.i64 {
            f.c64(32)
        } else {
            f.splat(f.c64(32), f.v64)
        };
        f.or(f.zext(lo, wide), f.shl(f.zext(hi, wide), shift))
    }

    /// The low and high halves of `v` (`i64` or `<64 x i64>`) in `narrow`.
    fn split(&self, v: Value, narrow: llvm_sys::prelude::LLVMTypeRef) -> (Value, Value) {
        let f = &self.f;
        let shift = if narrow == f.i32 {
            f.c64(32)
        } else {
            f.splat(f.c64(32), f.v64)
        };
        (f.trunc(v, narrow), f.trunc(f.lshr(v, shift), narrow))
    }

    // --- operands ---

    /// Source `k` of `inst` as a 32-bit uniform value (`i32`), if it is a scalar register or
    /// a constant.
    fn uniform32(&mut self, inst: &Inst, k: usize) -> Option<Value> {
        let code = inst.src[k];
        let ty = inst.op.types().get(k + 1).copied().unwrap_or(Ty::B32);
        match code {
            c if is_sgpr(c) => Some(self.sgpr(c)),
            128..=208 | 240..=248 | LITERAL => {
                Some(self.f.c32(inline_const(code, ty, inst.lit)? as u32))
            }
            _ => None,
        }
    }

    /// Source `k` of `inst` as a 64-bit uniform value (`i64`).
    fn uniform64(&mut self, inst: &Inst, k: usize) -> Option<Value> {
        let code = inst.src[k];
        let ty = inst.op.types().get(k + 1).copied().unwrap_or(Ty::B64);
        match code {
            c if is_pair(c) => Some(self.sgpr64(c)),
            128..=208 | 240..=248 | LITERAL => Some(self.f.c64(inline_const(code, ty, inst.lit)?)),
            _ => None,
        }
    }

    /// Source `k` of `inst` as 64 lanes of 32 bits, its sign modifiers applied as the
    /// interpreter applies them (to f32 and untyped operands: the sign bit cleared, then
    /// flipped).
    fn lanes32(&mut self, inst: &Inst, k: usize) -> Option<Value> {
        let code = inst.src[k];
        let v = if code >= 256 {
            self.row(Wave::vslot(code) & 511)
        } else {
            let x = self.uniform32(inst, k)?;
            self.f.splat(x, self.f.v32)
        };
        let (neg, abs) = (inst.neg >> k & 1 != 0, inst.abs >> k & 1 != 0);
        if !neg && !abs {
            return Some(v);
        }
        let ty = inst.op.types().get(k + 1).copied()?;
        if !matches!(ty, Ty::F32 | Ty::B32) {
            return None;
        }
        let f = &self.f;
        let bit = |on: bool| f.splat(f.c32(if on { 1 << 31 } else { 0 }), f.v32);
        Some(f.xor(
            f.and(v, f.xor(bit(abs), f.splat(f.c32(u32::MAX), f.v32))),
            bit(neg),
        ))
    }

    /// Whether source `k` has a sign modifier.
    fn modified(inst: &Inst, k: usize) -> bool {
        (inst.neg | inst.abs) >> k & 1 != 0
    }

    /// Source `k` of `inst` as 64 lanes of 64 bits (a register pair, a scalar pair or a
    /// constant).
    fn lanes64(&mut self, inst: &Inst, k: usize) -> Option<Value> {
        if Self::modified(inst, k) {
            return None;
        }
        let code = inst.src[k];
        if code >= 256 {
            let r = Wave::vslot(code) & 511;
            let (lo, hi) = (self.row(r), self.row((r + 1) & 511));
            return Some(self.join(lo, hi, self.f.v64));
        }
        let x = self.uniform64(inst, k)?;
        Some(self.f.splat(x, self.f.v64))
    }

    /// A lane mask source (VCC or a scalar pair) as `<64 x i1>`.
    fn mask(&mut self, code: u16) -> Option<Value> {
        if !is_pair(code) {
            return None;
        }
        let m = self.sgpr64(code);
        Some(self.f.bitcast(m, self.f.vmask))
    }

    /// Write a lane mask (`<64 x i1>`) to the scalar pair at `code`.
    fn set_mask(&mut self, code: u16, m: Value) -> Option<()> {
        if !is_pair(code) {
            return None;
        }
        let m = self.f.bitcast(m, self.f.i64);
        self.set_sgpr64(code, m);
        Some(())
    }

    fn set_pair(&mut self, dst: u16, v: Value) {
        let r = Wave::vslot(dst) & 511;
        let (lo, hi) = self.split(v, self.f.v32);
        self.set_row(r, lo);
        self.set_row((r + 1) & 511, hi);
    }

    // --- instructions ---

    fn inst(&mut self, inst: &Inst, k: usize) -> Option<Step> {
        match inst.enc {
            Enc::Sopp => self.sopp(inst, k),
            Enc::Sop1 | Enc::Sop2 | Enc::Sopc | Enc::Sopk if in_its_encoding(inst) => {
                self.salu(inst).map(|()| Step::Next)
            }
            Enc::Smem => self.scalar_load(inst, k).map(|()| Step::Next),
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 => {
                if inst.ext != Ext::None
                    || inst.omod != 0
                    || inst.clamp
                    || inst.op_sel != 0
                    || !in_its_encoding(inst)
                {
                    return None;
                }
                self.valu(inst, k).map(|()| Step::Next)
            }
            Enc::Flat => self.global(inst, k).map(|()| Step::Next),
            Enc::Ds => self.lds(inst, k).map(|()| Step::Next),
            _ => None,
        }
    }

    fn sopp(&mut self, inst: &Inst, k: usize) -> Option<Step> {
        let f_next = (self.start + k + 1) as u32;
        match inst.op {
            s_waitcnt | s_nop => Some(Step::Next),
            s_endpgm => {
                self.exit(k + 1, f_next as usize, true);
                Some(Step::Ended)
            }
            op if is_branch(op) => {
                let i = self.start + k;
                let to = self.prog.address_of(i) as i64 + 4 + inst.imm as i64 * 4;
                let target = self.prog.index_of(to as u64)?;
                let taken = match op {
                    s_branch => None,
                    s_cbranch_scc0 | s_cbranch_scc1 => {
                        let scc = self.scc();
                        Some(if op == s_cbranch_scc1 {
                            scc
                        } else {
                            self.f.xor(scc, self.f.bool(true))
                        })
                    }
                    _ => {
                        let code = if matches!(op, s_cbranch_vccz | s_cbranch_vccnz) {
                            VCC
                        } else {
                            126
                        };
                        let m = self.sgpr64(code);
                        let pred = if matches!(op, s_cbranch_vccz | s_cbranch_execz) {
                            Int::LLVMIntEQ
                        } else {
                            Int::LLVMIntNE
                        };
                        Some(self.f.icmp(pred, m, self.f.c64(0)))
                    }
                };
                self.leave_segment(k + 1);
                let yes = self.head(target);
                match taken {
                    None => self.f.br(yes),
                    Some(t) if (f_next as usize) < self.prog.insts.len() => {
                        let no = self.head(f_next as usize);
                        self.f.cond_br(t, yes, no);
                    }
                    Some(t) => {
                        // Not taken: past the end of the code (the interpreter faults there).
                        let past = self.f.block();
                        self.f.cond_br(t, yes, past);
                        self.f.at(past);
                        self.ret_at(f_next as usize, false, true);
                    }
                }
                Some(Step::Ended)
            }
            _ => None,
        }
    }

    /// Scalar ALU operations on 32-bit (and a few 64-bit) operands.
    fn salu(&mut self, inst: &Inst) -> Option<()> {
        let op = inst.op;
        let dst = inst.dst;
        if inst.enc == Enc::Sopk {
            if op != s_movk_i32 || dst >= 126 || !is_sgpr(dst) {
                return None;
            }
            let v = self.f.c32(inst.imm as i16 as i32 as u32);
            self.set_sgpr(dst, v);
            return Some(());
        }
        let wide = matches!(
            op,
            s_mov_b64
                | s_and_b64
                | s_or_b64
                | s_xor_b64
                | s_andn2_b64
                | s_cselect_b64
                | s_and_saveexec_b64
                | s_or_saveexec_b64
        );
        if wide {
            return self.salu64(inst);
        }
        if inst.enc != Enc::Sopc && !is_sgpr(dst) {
            return None;
        }
        let a = self.uniform32(inst, 0)?;
        let unary = inst.enc == Enc::Sop1;
        let b = if unary { a } else { self.uniform32(inst, 1)? };
        let f = &self.f;
        let zero = f.c32(0);
        let nz = |f: &Function, r: Value| (r, Some(f.icmp(Int::LLVMIntNE, r, zero)));
        let wide_sum = |f: &Function, x: Value, y: Value, c: Option<Value>| {
            let mut s = f.add(f.zext(x, f.i64), f.zext(y, f.i64));
            if let Some(c) = c {
                s = f.add(s, f.zext(c, f.i64));
            }
            (
                f.trunc(s, f.i32),
                Some(f.icmp(Int::LLVMIntNE, f.lshr(s, f.c64(32)), f.c64(0))),
            )
        };
        let shift = |f: &Function, b: Value| f.and(b, f.c32(31));
        let (r, scc): (Option<Value>, Option<Value>) = match (inst.enc, op) {
            (Enc::Sop1, s_mov_b32) => (Some(a), None),
            (Enc::Sop1, s_not_b32) => {
                let (r, s) = nz(f, f.xor(a, f.c32(u32::MAX)));
                (Some(r), s)
            }
            (Enc::Sop2, _) => {
                let (r, s) = match op {
                    s_add_u32 => wide_sum(f, a, b, None),
                    s_addc_u32 => {
                        let c = self.scc();
                        let f = &self.f;
                        wide_sum(f, a, b, Some(c))
                    }
                    s_sub_u32 => (f.sub(a, b), Some(f.icmp(Int::LLVMIntUGT, b, a))),
                    s_add_i32 | s_sub_i32 => {
                        let (x, y) = (f.sext(a, f.i64), f.sext(b, f.i64));
                        let s = if op == s_add_i32 {
                            f.add(x, y)
                        } else {
                            f.sub(x, y)
                        };
                        let r = f.trunc(s, f.i32);
                        (r, Some(f.icmp(Int::LLVMIntNE, f.sext(r, f.i64), s)))
                    }
                    s_and_b32 => nz(f, f.and(a, b)),
                    s_or_b32 => nz(f, f.or(a, b)),
                    s_xor_b32 => nz(f, f.xor(a, b)),
                    s_andn2_b32 => nz(f, f.and(a, f.xor(b, f.c32(u32::MAX)))),
                    s_lshl_b32 => nz(f, f.shl(a, shift(f, b))),
                    s_lshr_b32 => nz(f, f.lshr(a, shift(f, b))),
                    s_ashr_i32 => nz(f, f.ashr(a, shift(f, b))),
                    s_mul_i32 => (f.mul(a, b), None),
                    s_min_u32 | s_max_u32 | s_min_i32 | s_max_i32 => {
                        let pred = match op {
                            s_min_u32 => Int::LLVMIntULT,
                            s_max_u32 => Int::LLVMIntUGT,
                            s_min_i32 => Int::LLVMIntSLT,
                            _ => Int::LLVMIntSGT,
                        };
                        let c = f.icmp(pred, a, b);
                        (f.select(c, a, b), Some(c))
                    }
                    s_cselect_b32 => {
                        let c = self.scc();
                        (self.f.select(c, a, b), None)
                    }
                    s_lshl1_add_u32 | s_lshl2_add_u32 | s_lshl3_add_u32 | s_lshl4_add_u32 => {
                        let n = u64::from(lshl_add_shift(op));
                        let s = f.add(f.shl(f.zext(a, f.i64), f.c64(n)), f.zext(b, f.i64));
                        (
                            f.trunc(s, f.i32),
                            Some(f.icmp(Int::LLVMIntNE, f.lshr(s, f.c64(32)), f.c64(0))),
                        )
                    }
                    _ => return None,
                };
                (Some(r), s)
            }
            (Enc::Sopc, _) => {
                let pred = match op {
                    s_cmp_eq_u32 | s_cmp_eq_i32 => Int::LLVMIntEQ,
                    s_cmp_lg_u32 | s_cmp_lg_i32 => Int::LLVMIntNE,
                    s_cmp_gt_u32 => Int::LLVMIntUGT,
                    s_cmp_ge_u32 => Int::LLVMIntUGE,
                    s_cmp_lt_u32 => Int::LLVMIntULT,
                    s_cmp_le_u32 => Int::LLVMIntULE,
                    s_cmp_gt_i32 => Int::LLVMIntSGT,
                    s_cmp_ge_i32 => Int::LLVMIntSGE,
                    s_cmp_lt_i32 => Int::LLVMIntSLT,
                    s_cmp_le_i32 => Int::LLVMIntSLE,
                    _ => return None,
                };
                (None, Some(f.icmp(pred, a, b)))
            }
            _ => return None,
        };
        if let Some(r) = r {
            self.set_sgpr(dst, r);
        }
        if let Some(s) = scc {
            self.set_scc(s);
        }
        Some(())
    }

    /// The 64-bit scalar operations the region takes (moves, logic, select, save-EXEC).
    fn salu64(&mut self, inst: &Inst) -> Option<()> {
        let (op, dst) = (inst.op, inst.dst);
        if !is_pair(dst) {
            return None;
        }
        let a = self.uniform64(inst, 0)?;
        let f = &self.f;
        let ones = f.c64(u64::MAX);
        let nz = |f: &Function, r: Value| (r, Some(f.icmp(Int::LLVMIntNE, r, f.c64(0))));
        let (r, scc) = match op {
            s_mov_b64 => (a, None),
            s_and_saveexec_b64 | s_or_saveexec_b64 => {
                let exec = self.sgpr64(126);
                let f = &self.f;
                let e = if op == s_and_saveexec_b64 {
                    f.and(a, exec)
                } else {
                    f.or(a, exec)
                };
                let scc = f.icmp(Int::LLVMIntNE, e, f.c64(0));
                self.set_sgpr64(dst, exec);
                self.set_sgpr64(126, e);
                self.set_scc(scc);
                return Some(());
            }
            _ => {
                let b = self.uniform64(inst, 1)?;
                let f = &self.f;
                match op {
                    s_and_b64 => nz(f, f.and(a, b)),
                    s_or_b64 => nz(f, f.or(a, b)),
                    s_xor_b64 => nz(f, f.xor(a, b)),
                    s_andn2_b64 => nz(f, f.and(a, f.xor(b, ones))),
                    s_cselect_b64 => {
                        let c = self.scc();
                        (self.f.select(c, a, b), None)
                    }
                    _ => return None,
                }
            }
        };
        self.set_sgpr64(dst, r);
        if let Some(s) = scc {
            self.set_scc(s);
        }
        Some(())
    }

    /// A scalar load of 1-16 dwords through the memory's translation; leaves the region
    /// when the memory does not vouch for them.
    fn scalar_load(&mut self, inst: &Inst, k: usize) -> Option<()> {
        let n = match inst.op {
            s_load_dword => 1u16,
            s_load_dwordx2 => 2,
            s_load_dwordx4 => 4,
            s_load_dwordx8 => 8,
            s_load_dwordx16 => 16,
            _ => return None,
        };
        let base = inst.src[0];
        if inst.ctrl & flags::IMM == 0 || !is_pair(base) || inst.dst + n > 124 {
            return None;
        }
        if inst.sdst != OFF && !is_sgpr(inst.sdst & 127) {
            return None;
        }
        let mut addr = self.sgpr64(base);
        let mut off = self.f.c64(inst.imm as i64 as u64);
        if inst.sdst != OFF {
            let s = self.sgpr(inst.sdst & 127);
            off = self.f.add(off, self.f.zext(s, self.f.i64));
        }
        let f = &self.f;
        addr = f.and(f.add(addr, off), f.c64(!3));
        let p = self.translated(addr, 4 * n as u64, k);
        for d in 0..n {
            let f = &self.f;
            let v = f.load_memory(f.i32, f.offset(p, f.c64(4 * d as u64)));
            self.set_sgpr(inst.dst + d, v);
        }
        Some(())
    }

    /// The host pointer of the `len` bytes at device address `addr` (an `i64`), 4-byte
    /// aligned; leaves the region before instruction `k` when there is none. The frame's
    /// spans are looked at first, in the code; `translate` is called only when none holds
    /// the range.
    fn translated(&mut self, addr: Value, len: u64, k: usize) -> Value {
        let f = &self.f;
        let frame = f.frame();
        // Every span at once: `off < len && need <= len - off` per span, the first that
        // holds chosen.
        let n = KEPT_SPANS as u32;
        let spans = f.load(f.ptr, f.offset(frame, f.c64(frame::SPANS)), 8);
        let (vty, field) = (f.vector(f.i64, n), |off: u64| f.offset(spans, f.c64(off)));
        let (bases, lens) = (
            f.load(vty, field(frame::SPAN_BASES), 8),
            f.load(vty, field(frame::SPAN_LENGTHS), 8),
        );
        let off = f.sub(f.splat_n(addr, vty, n), bases);
        let inside = f.and(
            f.icmp(Int::LLVMIntULT, off, lens),
            f.icmp(
                Int::LLVMIntULE,
                f.splat_n(f.c64(len), vty, n),
                f.sub(lens, off),
            ),
        );
        let bits = f.zext(f.bitcast(inside, f.int(n)), f.i64);
        let found = f.icmp(Int::LLVMIntNE, bits, f.c64(0));
        let j = f.intrinsic("llvm.cttz", &[f.i64], &[bits, f.bool(true)]);
        let j = f.and(j, f.c64(KEPT_SPANS as u64 - 1));
        let start = f.load(
            f.ptr,
            f.offset(field(frame::SPAN_HOSTS), f.mul(j, f.c64(8))),
            8,
        );
        let base = f.load(
            f.i64,
            f.offset(field(frame::SPAN_BASES), f.mul(j, f.c64(8))),
            8,
        );
        let host = f.offset(start, f.sub(addr, base));
        let (call, join) = (f.block(), f.block());
        let here = f.current();
        f.unlikely_br(f.xor(found, f.bool(true)), call, join);
        f.at(call);
        let called = f.call(
            self.translate,
            f.ptr,
            &[f.ptr, f.i64, f.i64],
            &[self.memory, addr, f.c64(len)],
        );
        f.br(join);
        f.at(join);
        let p = f.phi(f.ptr, &[(host, here), (called, call)]);
        let bad = f.or(
            f.is_null(p),
            f.icmp(Int::LLVMIntNE, f.and(f.ptr_to_int(p), f.c64(3)), f.c64(0)),
        );
        self.leave_if(bad, k);
        p
    }

    /// A GLOBAL load or store of 1, 2 or 4 dwords per lane whose lanes address one range in
    /// lane order; leaves the region when they do not.
    fn global(&mut self, inst: &Inst, k: usize) -> Option<()> {
        let (store, n) = match inst.op {
            flat_load_dword => (false, 1u32),
            flat_load_dwordx2 => (false, 2),
            flat_load_dwordx4 => (false, 4),
            flat_store_dword => (true, 1),
            flat_store_dwordx2 => (true, 2),
            flat_store_dwordx4 => (true, 4),
            _ => return None,
        };
        if inst.segment() != seg::GLOBAL || inst.ctrl & flags::LDS != 0 || inst.src[0] < 256 {
            return None;
        }
        let reg = if store { inst.src[1] } else { inst.dst };
        if reg < 256 {
            return None;
        }
        let vaddr = Wave::vslot(inst.src[0]) & 511;
        let f = &self.f;
        let imm = f.splat(f.c64(inst.imm as i64 as u64), f.v64);
        let addrs = match inst.src[2] {
            OFF => {
                let (lo, hi) = (self.row(vaddr), self.row((vaddr + 1) & 511));
                self.join(lo, hi, self.f.v64)
            }
            c if is_pair(c) => {
                let base = self.sgpr64(c);
                let lo = self.row(vaddr);
                let f = &self.f;
                f.add(f.splat(base, f.v64), f.zext(lo, f.v64))
            }
            _ => return None,
        };
        let f = &self.f;
        let addrs = f.add(addrs, imm);
        let bytes = 4 * n as u64;
        let first = f.extract(addrs, 0);
        let want = f.add(f.splat(first, f.v64), f.steps64(bytes));
        let apart = f.bitcast(f.icmp(Int::LLVMIntNE, addrs, want), f.i64);
        let total = bytes * LANES as u64;
        let bad = f.or(
            f.icmp(Int::LLVMIntNE, apart, f.c64(0)),
            f.or(
                f.icmp(Int::LLVMIntNE, f.and(first, f.c64(3)), f.c64(0)),
                f.icmp(Int::LLVMIntUGT, first, f.c64(u64::MAX - total)),
            ),
        );
        self.leave_if(bad, k);
        let p = self.translated(first, total, k);
        let r = Wave::vslot(reg) & 511;
        let f = &self.f;
        // The next wave of a streaming kernel reads the range after this one: ask the host to
        // bring it in while this wave goes on (a hint: it never faults).
        for line in (0..total).step_by(64) {
            let q = f.offset(p, f.c64(4 * total + line));
            f.intrinsic(
                "llvm.prefetch",
                &[f.ptr],
                &[q, f.c32(store as u32), f.c32(3), f.c32(1)],
            );
        }
        let wide = f.vector(f.i32, LANES * n);
        if store {
            let rows: Vec<Value> = (0..n as usize).map(|j| self.row((r + j) & 511)).collect();
            let v = self.interleave(&rows);
            self.f.store_memory(v, p);
        } else {
            let v = f.load_memory(wide, p);
            for j in 0..n as usize {
                let lanes: Vec<u32> = (0..LANES).map(|l| l * n + j as u32).collect();
                let row = self.f.shuffle(v, v, &lanes);
                self.set_row((r + j) & 511, row);
            }
        }
        Some(())
    }

    /// A plain LDS load or store of dwords (units of 4 or 8 bytes, one to four of them per
    /// lane) whose every unit lies within the LDS (else the region is left before it: the
    /// interpreter drops or zeroes what lies past the end). Lanes whose units follow each
    /// other in lane order move as one range; others one by one, in lane order.
    fn lds(&mut self, inst: &Inst, k: usize) -> Option<()> {
        let p = super::super::memory::PlainDs::of(inst)?;
        let size = u64::from(p.size);
        if !matches!(p.size, 4 | 8) || p.signed {
            return None;
        }
        let units = p.units as usize;
        let addr = self.row(p.addr as usize & 511);
        let rows: Vec<Vec<usize>> = (0..units)
            .map(|u| {
                let r = p.reg[u] as usize;
                (0..size as usize / 4).map(|j| (r + j) & 511).collect()
            })
            .collect();
        let data: Vec<Vec<Value>> = if p.store {
            rows.iter()
                .map(|rs| rs.iter().map(|&r| self.row(r)).collect())
                .collect()
        } else {
            Vec::new()
        };
        let f = &self.f;
        let field = |off: u64| f.offset(f.frame(), f.c64(off));
        let (base, len) = (
            f.load(f.ptr, field(frame::LDS), 8),
            f.load(f.i64, field(frame::LDS_LEN), 8),
        );
        let a = f.zext(addr, f.v64);
        let top = f.intrinsic("llvm.vector.reduce.umax", &[f.v64], &[a]);
        let reach = u64::from(p.at[..units].iter().copied().max().unwrap_or(0)) + size;
        let past = f.icmp(Int::LLVMIntUGT, f.add(top, f.c64(reach)), len);
        self.leave_if(past, k);
        let f = &self.f;
        let first = f.extract(a, 0);
        let apart = f.icmp(
            Int::LLVMIntNE,
            a,
            f.add(f.splat(first, f.v64), f.steps64(size)),
        );
        let in_order = f.icmp(Int::LLVMIntEQ, f.bitcast(apart, f.i64), f.c64(0));
        let elem = if size == 8 { f.i64 } else { f.i32 };
        let vty = f.vector(elem, LANES);
        let mut loaded = Vec::new();
        for u in 0..units {
            let at = u64::from(p.at[u]);
            let value = data.get(u).map(|d| match d[..] {
                [lo, hi] => self.join(lo, hi, f.v64),
                _ => d[0],
            });
            let (run, spread, join) = (f.block(), f.block(), f.block());
            f.cond_br(in_order, run, spread);
            // The units of one range: one vector access.
            f.at(run);
            let q = f.offset(base, f.add(first, f.c64(at)));
            let got_run = match value {
                Some(v) => {
                    f.store_memory(v, q);
                    None
                }
                None => Some(f.load_memory(vty, q)),
            };
            f.br(join);
            // Anywhere in the LDS: lane by lane.
            f.at(spread);
            let ptrs = f.offset(base, f.add(a, f.splat(f.c64(at), f.v64)));
            let got_spread = match value {
                Some(v) => {
                    f.scatter(v, ptrs);
                    None
                }
                None => Some(f.gather(vty, ptrs)),
            };
            f.br(join);
            f.at(join);
            if let (Some(x), Some(y)) = (got_run, got_spread) {
                loaded.push(f.phi(vty, &[(x, run), (y, spread)]));
            }
        }
        for (u, v) in loaded.into_iter().enumerate() {
            if size == 8 {
                let (lo, hi) = self.split(v, self.f.v32);
                self.set_row(rows[u][0], lo);
                self.set_row(rows[u][1], hi);
            } else {
                self.set_row(rows[u][0], v);
            }
        }
        Some(())
    }

    /// Rows `rows` (1, 2 or 4) interleaved lane by lane: lane `l` of row `j` at `n * l + j`.
    fn interleave(&self, rows: &[Value]) -> Value {
        let f = &self.f;
        match rows.len() {
            1 => rows[0],
            2 => {
                let lanes: Vec<u32> = (0..2 * LANES).map(|i| (i % 2) * LANES + i / 2).collect();
                f.shuffle(rows[0], rows[1], &lanes)
            }
            _ => {
                // Pairs first (0,2) and (1,3) interleaved, then the two halves.
                let pair = |a: Value, b: Value| {
                    let lanes: Vec<u32> = (0..2 * LANES).map(|i| (i % 2) * LANES + i / 2).collect();
                    f.shuffle(a, b, &lanes)
                };
                let (x, y) = (pair(rows[0], rows[2]), pair(rows[1], rows[3]));
                let lanes: Vec<u32> = (0..4 * LANES)
                    .map(|i| (i % 2) * 2 * LANES + i / 2)
                    .collect();
                f.shuffle(x, y, &lanes)
            }
        }
    }

    /// Vector ALU operations (every lane active).
    fn valu(&mut self, inst: &Inst, k: usize) -> Option<()> {
        let op = inst.op;
        if op.name().starts_with("v_cmp_") {
            return self.compare(inst);
        }
        if op == v_readfirstlane_b32 {
            // Every lane is active: the first is lane 0.
            if !is_sgpr(inst.dst) {
                return None;
            }
            let a = self.lanes32(inst, 0)?;
            let x = self.f.extract(a, 0);
            self.set_sgpr(inst.dst, x);
            return Some(());
        }
        if inst.dst < 256 {
            return None;
        }
        let dst = Wave::vslot(inst.dst) & 511;
        match op {
            v_mad_u64_u32 => {
                if !is_pair(inst.sdst) {
                    return None;
                }
                let (a, b, c) = (
                    self.lanes32(inst, 0)?,
                    self.lanes32(inst, 1)?,
                    self.lanes64(inst, 2)?,
                );
                let f = &self.f;
                let m = f.mul(f.zext(a, f.v64), f.zext(b, f.v64));
                let r = f.add(m, c);
                let carry = f.icmp(Int::LLVMIntULT, r, m);
                self.set_pair(inst.dst, r);
                return self.set_mask(inst.sdst, carry);
            }
            v_cvt_f32_u32 | v_cvt_f32_i32 | v_cvt_u32_f32 | v_cvt_i32_f32 => {
                // Conversions rounded as MODE's IEEE form says (the region needs it), and
                // from f32 truncated and saturated, NaN to 0, as the hardware's.
                let a = self.lanes32(inst, 0)?;
                self.float = true;
                let f = &self.f;
                let r = match op {
                    v_cvt_f32_u32 => f.bitcast(f.uitofp(a, f.vf32), f.v32),
                    v_cvt_f32_i32 => f.bitcast(f.sitofp(a, f.vf32), f.v32),
                    v_cvt_u32_f32 => {
                        f.intrinsic("llvm.fptoui.sat", &[f.v32, f.vf32], &[f.bitcast(a, f.vf32)])
                    }
                    _ => f.intrinsic("llvm.fptosi.sat", &[f.v32, f.vf32], &[f.bitcast(a, f.vf32)]),
                };
                self.set_row(dst, r);
                return Some(());
            }
            v_lshlrev_b64 | v_lshrrev_b64 | v_ashrrev_i64 => {
                let (a, b) = (self.lanes32(inst, 0)?, self.lanes64(inst, 1)?);
                let f = &self.f;
                let s = f.zext(f.and(a, f.splat(f.c32(63), f.v32)), f.v64);
                let r = match op {
                    v_lshlrev_b64 => f.shl(b, s),
                    v_lshrrev_b64 => f.lshr(b, s),
                    _ => f.ashr(b, s),
                };
                self.set_pair(inst.dst, r);
                return Some(());
            }
            v_lshl_add_u64 => {
                let (a, b, c) = (
                    self.lanes64(inst, 0)?,
                    self.lanes32(inst, 1)?,
                    self.lanes64(inst, 2)?,
                );
                let f = &self.f;
                let s = f.zext(f.and(b, f.splat(f.c32(63), f.v32)), f.v64);
                let r = f.add(f.shl(a, s), c);
                self.set_pair(inst.dst, r);
                return Some(());
            }
            v_mov_b64 => {
                let a = self.lanes64(inst, 0)?;
                self.set_pair(inst.dst, a);
                return Some(());
            }
            v_add_co_u32 | v_sub_co_u32 | v_subrev_co_u32 | v_addc_co_u32 | v_subb_co_u32
            | v_subbrev_co_u32 => return self.carry(inst, dst),
            _ => {}
        }
        if is_f32(op) {
            return self.float(inst, dst, k);
        }
        let (a, b) = (
            self.lanes32(inst, 0)?,
            if inst.enc == Enc::Vop1 {
                None
            } else {
                Some(self.lanes32(inst, 1)?)
            },
        );
        let three = matches!(
            op,
            v_lshl_add_u32
                | v_add3_u32
                | v_and_or_b32
                | v_or3_b32
                | v_xad_u32
                | v_lshl_or_b32
                | v_add_lshl_u32
                | v_cndmask_b32
        );
        let c = if three && op != v_cndmask_b32 {
            Some(self.lanes32(inst, 2)?)
        } else {
            None
        };
        let cond = if op == v_cndmask_b32 && !Self::modified(inst, 2) {
            Some(self.mask(condition(inst))?)
        } else {
            None
        };
        let f = &self.f;
        let m31 = f.splat(f.c32(31), f.v32);
        let r = match (op, b, c) {
            (v_mov_b32, _, _) => a,
            (v_not_b32, _, _) => f.xor(a, f.splat(f.c32(u32::MAX), f.v32)),
            (v_add_u32, Some(b), _) => f.add(a, b),
            (v_sub_u32, Some(b), _) => f.sub(a, b),
            (v_subrev_u32, Some(b), _) => f.sub(b, a),
            (v_mul_lo_u32, Some(b), _) => f.mul(a, b),
            (v_mul_u32_u24, Some(b), _) => {
                let m = f.splat(f.c32(0xFF_FFFF), f.v32);
                f.mul(f.and(a, m), f.and(b, m))
            }
            (v_and_b32, Some(b), _) => f.and(a, b),
            (v_or_b32, Some(b), _) => f.or(a, b),
            (v_xor_b32, Some(b), _) => f.xor(a, b),
            (v_lshlrev_b32, Some(b), _) => f.shl(b, f.and(a, m31)),
            (v_lshrrev_b32, Some(b), _) => f.lshr(b, f.and(a, m31)),
            (v_ashrrev_i32, Some(b), _) => f.ashr(b, f.and(a, m31)),
            (v_min_u32 | v_max_u32 | v_min_i32 | v_max_i32, Some(b), _) => {
                let pred = match op {
                    v_min_u32 => Int::LLVMIntULT,
                    v_max_u32 => Int::LLVMIntUGT,
                    v_min_i32 => Int::LLVMIntSLT,
                    _ => Int::LLVMIntSGT,
                };
                f.select(f.icmp(pred, a, b), a, b)
            }
            (v_cndmask_b32, Some(b), _) => f.select(cond?, b, a),
            (v_lshl_add_u32, Some(b), Some(c)) => f.add(f.shl(a, f.and(b, m31)), c),
            (v_add3_u32, Some(b), Some(c)) => f.add(f.add(a, b), c),
            (v_and_or_b32, Some(b), Some(c)) => f.or(f.and(a, b), c),
            (v_or3_b32, Some(b), Some(c)) => f.or(f.or(a, b), c),
            (v_xad_u32, Some(b), Some(c)) => f.add(f.xor(a, b), c),
            (v_lshl_or_b32, Some(b), Some(c)) => f.or(f.shl(a, f.and(b, m31)), c),
            (v_add_lshl_u32, Some(b), Some(c)) => f.shl(f.add(a, b), f.and(c, m31)),
            _ => return None,
        };
        self.set_row(dst, r);
        Some(())
    }

    /// Adds and subtracts with a carry (borrow) out, and in for `addc`/`subb`.
    fn carry(&mut self, inst: &Inst, dst: usize) -> Option<()> {
        let op = inst.op;
        let (a, b) = (self.lanes32(inst, 0)?, self.lanes32(inst, 1)?);
        let cin = if matches!(op, v_addc_co_u32 | v_subb_co_u32 | v_subbrev_co_u32) {
            if Self::modified(inst, 2) {
                return None;
            }
            Some(self.mask(condition(inst))?)
        } else {
            None
        };
        if !is_pair(carry_out(inst)) {
            return None;
        }
        let f = &self.f;
        let (x, y) = if matches!(op, v_subrev_co_u32 | v_subbrev_co_u32) {
            (b, a)
        } else {
            (a, b)
        };
        let (x, y) = (f.zext(x, f.v64), f.zext(y, f.v64));
        let c = cin
            .map(|m| f.zext(m, f.v64))
            .unwrap_or_else(|| f.splat(f.c64(0), f.v64));
        let (r, out) = if matches!(op, v_add_co_u32 | v_addc_co_u32) {
            let s = f.add(f.add(x, y), c);
            let high = f.lshr(s, f.splat(f.c64(32), f.v64));
            (s, f.icmp(Int::LLVMIntNE, high, f.splat(f.c64(0), f.v64)))
        } else {
            let s = f.sub(f.sub(x, y), c);
            (s, f.icmp(Int::LLVMIntUGT, f.add(y, c), x))
        };
        let r = f.trunc(r, f.v32);
        self.set_row(dst, r);
        self.set_mask(carry_out(inst), out)
    }

    /// Integer and f32 compares into a lane mask (every lane active).
    fn compare(&mut self, inst: &Inst) -> Option<()> {
        let name = inst.op.name();
        let rest = name.strip_prefix("v_cmp_")?;
        let (cmp, ty) = rest.split_once('_')?;
        let (a, b) = (self.lanes32(inst, 0)?, self.lanes32(inst, 1)?);
        let f = &self.f;
        let m = match ty {
            "u32" | "i32" => {
                let signed = ty == "i32";
                let pred = match (cmp, signed) {
                    ("eq", _) => Int::LLVMIntEQ,
                    ("ne", _) => Int::LLVMIntNE,
                    ("lt", false) => Int::LLVMIntULT,
                    ("le", false) => Int::LLVMIntULE,
                    ("gt", false) => Int::LLVMIntUGT,
                    ("ge", false) => Int::LLVMIntUGE,
                    ("lt", true) => Int::LLVMIntSLT,
                    ("le", true) => Int::LLVMIntSLE,
                    ("gt", true) => Int::LLVMIntSGT,
                    ("ge", true) => Int::LLVMIntSGE,
                    _ => return None,
                };
                f.icmp(pred, a, b)
            }
            "f32" => {
                let pred = match cmp {
                    "lt" => Real::LLVMRealOLT,
                    "eq" => Real::LLVMRealOEQ,
                    "le" => Real::LLVMRealOLE,
                    "gt" => Real::LLVMRealOGT,
                    "lg" => Real::LLVMRealONE,
                    "ge" => Real::LLVMRealOGE,
                    "o" => Real::LLVMRealORD,
                    "u" => Real::LLVMRealUNO,
                    "nge" => Real::LLVMRealULT,
                    "nlg" => Real::LLVMRealUEQ,
                    "ngt" => Real::LLVMRealULE,
                    "nle" => Real::LLVMRealUGT,
                    "neq" => Real::LLVMRealUNE,
                    "nlt" => Real::LLVMRealUGE,
                    _ => return None,
                };
                self.float = true;
                f.fcmp(pred, f.bitcast(a, f.vf32), f.bitcast(b, f.vf32))
            }
            _ => return None,
        };
        self.set_mask(inst.dst, m)
    }

    /// f32 arithmetic, correctly rounded by the host (round to nearest, denormals kept: the
    /// region runs only under that MODE); a NaN in any lane leaves the region before the
    /// instruction (the interpreter gives it the payload the hardware would).
    fn float(&mut self, inst: &Inst, dst: usize, k: usize) -> Option<()> {
        let op = inst.op;
        let a = self.lanes32(inst, 0)?;
        let b = self.lanes32(inst, 1)?;
        let (b, c) = match op {
            v_fma_f32 => (b, Some(self.lanes32(inst, 2)?)),
            v_fmac_f32 => (b, Some(self.row(dst))),
            // K (the literal) multiplies, or is added.
            v_fmamk_f32 => (self.f.splat(self.f.c32(inst.lit), self.f.v32), Some(b)),
            v_fmaak_f32 => (b, Some(self.f.splat(self.f.c32(inst.lit), self.f.v32))),
            _ => (b, None),
        };
        let f = &self.f;
        let (a, b) = (f.bitcast(a, f.vf32), f.bitcast(b, f.vf32));
        let r = match op {
            v_add_f32 => f.fadd(a, b),
            v_sub_f32 => f.fsub(a, b),
            v_subrev_f32 => f.fsub(b, a),
            v_mul_f32 => f.fmul(a, b),
            v_fma_f32 | v_fmac_f32 | v_fmamk_f32 | v_fmaak_f32 => {
                let c = f.bitcast(c?, f.vf32);
                f.intrinsic("llvm.fma", &[f.vf32], &[a, b, c])
            }
            _ => return None,
        };
        self.float = true;
        let nan = f.bitcast(f.fcmp(Real::LLVMRealUNO, r, r), f.i64);
        let nan = f.icmp(Int::LLVMIntNE, nan, f.c64(0));
        self.leave_if(nan, k);
        let r = self.f.bitcast(r, self.f.v32);
        self.set_row(dst, r);
        Some(())
    }
}

/// The lane mask a VOP2 or VOP3 operation reads as its condition or carry in: VCC in the
/// 32-bit encoding, the third source in VOP3.
fn condition(inst: &Inst) -> u16 {
    if inst.enc == Enc::Vop2 {
        VCC
    } else {
        inst.src[2]
    }
}

/// Where an add or subtract with carry writes its carry out: VCC in the 32-bit encoding,
/// the scalar destination in VOP3.
fn carry_out(inst: &Inst) -> u16 {
    if inst.enc == Enc::Vop2 {
        VCC
    } else {
        inst.sdst
    }
}

/// Whether a scalar or vector ALU operation the lowering takes comes in the encoding it was
/// decoded from (each is written for its own operand layout).
fn in_its_encoding(inst: &Inst) -> bool {
    let op = inst.op;
    let sop1 = matches!(
        op,
        s_mov_b32 | s_not_b32 | s_mov_b64 | s_and_saveexec_b64 | s_or_saveexec_b64
    );
    let vop1 = matches!(
        op,
        v_mov_b32
            | v_not_b32
            | v_mov_b64
            | v_cvt_f32_u32
            | v_cvt_f32_i32
            | v_cvt_u32_f32
            | v_cvt_i32_f32
            | v_readfirstlane_b32
    );
    let vop3_only = matches!(
        op,
        v_mul_lo_u32
            | v_lshl_add_u32
            | v_add3_u32
            | v_and_or_b32
            | v_or3_b32
            | v_xad_u32
            | v_lshl_or_b32
            | v_add_lshl_u32
            | v_lshl_add_u64
            | v_lshlrev_b64
            | v_lshrrev_b64
            | v_ashrrev_i64
            | v_mad_u64_u32
            | v_fma_f32
    );
    let vop2_only = matches!(op, v_fmamk_f32 | v_fmaak_f32);
    let name = op.name();
    match inst.enc {
        Enc::Sop1 => sop1,
        Enc::Sop2 => name.starts_with("s_") && !sop1 && !name.starts_with("s_cmp_"),
        Enc::Sopc => name.starts_with("s_cmp_"),
        Enc::Sopk => op == s_movk_i32,
        Enc::Vopc => name.starts_with("v_cmp_"),
        Enc::Vop1 => vop1,
        Enc::Vop2 => !vop1 && !vop3_only && !name.starts_with("v_cmp_"),
        Enc::Vop3 => op != v_readfirstlane_b32 && !vop2_only,
        _ => false,
    }
}

/// Whether an instruction's active lanes count as lane-instructions, as the interpreter counts
/// them: the vector ALU and memory instructions but the lane read into a scalar register.
fn counts_lanes(inst: &Inst) -> bool {
    matches!(
        inst.enc,
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Flat | Enc::Ds
    ) && inst.op != v_readfirstlane_b32
}

fn is_f32(op: Op) -> bool {
    matches!(
        op,
        v_add_f32
            | v_sub_f32
            | v_subrev_f32
            | v_mul_f32
            | v_fma_f32
            | v_fmac_f32
            | v_fmamk_f32
            | v_fmaak_f32
    )
}
