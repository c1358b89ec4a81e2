//! Hot blocks compiled to host code: a run of instructions a wave enters often (from the
//! wave's start, a branch, or the instruction after one the blocks do not take) is lowered to
//! one LLVM function ([`lower`]) and compiled for the host ([`llvm`]); waves entering it with
//! every lane active then run it as one call instead of one plan per instruction. Anything
//! the code cannot take leaves it with the wave's state as the interpreter would have it at
//! that instruction, so the plans and the general path stay the semantics it is tested
//! against.
//!
//! Layering: this module (the table of blocks and the call) above `lower` (instructions to
//! IR) above `llvm` (the only code that calls LLVM).

mod llvm;
mod lower;

use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::decode::Program;
use crate::memory::{GlobalMemory, Spans};
use crate::wave::{LANES, Wave};

use super::Ctx;
use lower::Frame;

/// The environment variable that sets after how many entries a block is compiled (`off`:
/// never).
pub const VARIABLE: &str = "AMDGPU_EMU_COMPILE_AFTER";
/// Entries of a block before it is compiled, by default.
const AFTER: u32 = 64;

/// After how many entries a block is compiled (`None`: never), from [`VARIABLE`].
pub(crate) fn default_threshold() -> Option<u32> {
    match std::env::var(VARIABLE) {
        Ok(v) if v.trim() == "off" => None,
        Ok(v) => Some(v.trim().parse().unwrap_or(AFTER).max(1)),
        Err(_) => Some(AFTER),
    }
}

/// A compiled region.
struct Compiled {
    entry: llvm::Entry,
    /// Its code has f32 arithmetic (it runs only under MODE's IEEE form).
    float: bool,
}

/// A block that will not be compiled (the lowering or LLVM refused it).
const REFUSED: *mut Compiled = std::ptr::dangling_mut();

/// The blocks of one decoded program, by their first instruction.
pub(crate) struct Blocks {
    code: Box<[AtomicPtr<Compiled>]>,
    hits: Box<[AtomicU32]>,
    /// Held by the thread compiling (others go on interpreting meanwhile).
    compiling: Mutex<()>,
}

impl Blocks {
    /// No block of a program of `n` instructions compiled yet.
    pub(crate) fn new(n: usize) -> Blocks {
        Blocks {
            code: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            hits: (0..n).map(|_| AtomicU32::new(0)).collect(),
            compiling: Mutex::new(()),
        }
    }

    /// How many regions are compiled.
    pub(crate) fn compiled(&self) -> usize {
        let compiled = |c: &AtomicPtr<Compiled>| {
            let c = c.load(Ordering::Acquire);
            !c.is_null() && c != REFUSED
        };
        self.code.iter().filter(|c| compiled(c)).count()
    }

    /// The compiled block at `pc`, counting an entry and compiling it at the `after`th.
    fn at(&self, prog: &Program, pc: usize, after: u32) -> Option<&Compiled> {
        let mut c = self.code.get(pc)?.load(Ordering::Acquire);
        if c.is_null() {
            // Entries counted without a read-modify-write: a count lost to a race only
            // delays the compilation.
            let h = self.hits[pc].load(Ordering::Relaxed).saturating_add(1);
            self.hits[pc].store(h, Ordering::Relaxed);
            if h < after {
                return None;
            }
            let Ok(_one) = self.compiling.try_lock() else {
                return None;
            };
            c = self.code[pc].load(Ordering::Acquire);
            if c.is_null() {
                c = compile(prog, pc).map_or(REFUSED, |b| Box::into_raw(Box::new(b)));
                self.code[pc].store(c, Ordering::Release);
            }
        }
        // SAFETY: a non-null pointer other than REFUSED is a leaked box this table owns
        // until it drops.
        (c != REFUSED).then(|| unsafe { &*c })
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        for c in self.code.iter_mut() {
            let c = *c.get_mut();
            if !c.is_null() && c != REFUSED {
                // SAFETY: made by `Box::into_raw` in `at`, dropped once here.
                drop(unsafe { Box::from_raw(c) });
            }
        }
    }
}

/// The region at instruction `start` compiled, or `None`.
fn compile(prog: &Program, start: usize) -> Option<Compiled> {
    let lowered = lower::lower(prog, start)?;
    let float = lowered.float;
    let entry = match llvm::compile(lowered.function) {
        Ok(entry) => entry,
        // A function LLVM refuses is a fault of the lowering: loud where it is tested, the
        // region interpreted otherwise.
        Err(e) if cfg!(debug_assertions) => panic!("region at instruction {start}: {e}"),
        Err(_) => return None,
    };
    Some(Compiled { entry, float })
}

/// What running a block did.
pub(crate) struct Ran {
    /// Instructions run.
    pub count: u32,
    /// The wave stands at the start of a block (after a branch), or will after the
    /// instruction it stands at (one the block does not take).
    pub entry_next: bool,
    pub entry_after: bool,
}

/// The memory a block's translation callback reaches.
struct Memory<'a> {
    mem: &'a dyn GlobalMemory,
    /// The thread's kept spans, which the block's code also reads.
    spans: *mut Spans,
}

/// [`Frame::translate`]: the kept spans' translation; null for none (or a panic, which
/// never crosses into the compiled code).
unsafe extern "C" fn translate(memory: *mut u8, addr: u64, len: u64) -> *mut u8 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `memory` is the `Memory` that `run` made for this call, alive while the
        // block runs; its spans are the thread's, reached only through that pointer (the
        // block's code reads them between calls, never during one).
        let m = unsafe { &mut *(memory as *mut Memory<'_>) };
        unsafe { (*m.spans).translate(m.mem, addr, len) }
    }))
    .ok()
    .flatten()
    .map_or(std::ptr::null_mut(), |p| p.as_ptr())
}

/// Run the compiled block at the wave's pc, if there is one (compiling it when it has become
/// hot) and the wave can enter it: every lane active, MODE's IEEE form for a block with f32
/// arithmetic, and at least its length left of `budget`.
pub(crate) fn run(w: &mut Wave, ctx: &mut Ctx<'_>, budget: u32) -> Option<Ran> {
    let (blocks, after) = ctx.native?;
    let b = blocks.at(ctx.prog, w.pc, after)?;
    if w.exec() != u64::MAX || (b.float && w.mode & 0x3F != 0x30) {
        return None;
    }
    let spans: *mut Spans = &mut *ctx.spans;
    let mut memory = Memory {
        mem: ctx.mem,
        spans,
    };
    let mut frame = Frame {
        rows: w.v.as_mut_ptr() as *mut u32,
        sgprs: w.s.as_mut_ptr(),
        memory: &mut memory as *mut Memory<'_> as *mut u8,
        translate,
        spans,
        issues: if ctx.counting {
            ctx.counts.by_class.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        },
        lanes: if ctx.counting {
            ctx.counts.lanes_by_class.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        },
        lds: ctx.lds.as_mut_ptr(),
        lds_len: ctx.lds.len() as u64,
        budget,
        scc: w.scc as u32,
        next: w.pc as u32,
        ran: 0,
        vector: 0,
        end: 0,
        at_start: 0,
    };
    // SAFETY: the code reads and writes the wave's rows and scalar registers within their
    // lengths (slots below 512, codes below 128, as lowered), memory only through
    // `translate`'s pointers within the lengths it asked for, and the frame's fields.
    unsafe { (b.entry)(&mut frame as *mut Frame as *mut u8) };
    let count = frame.ran.min(budget);
    w.scc = frame.scc != 0;
    w.pc = frame.next as usize;
    w.done = frame.end != 0;
    w.lane_insts += LANES as u64 * u64::from(frame.vector);
    Some(Ran {
        count,
        entry_next: frame.at_start != 0,
        entry_after: frame.at_start == 0,
    })
}
