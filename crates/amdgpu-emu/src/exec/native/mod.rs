//! Hot regions compiled to host code: the code a wave enters often (at its start, a branch's
//! target or past a branch, or after an instruction the compiled code does not take) is
//! lowered to one LLVM function ([`lower`]) and compiled for the host ([`llvm`]); waves
//! entering it with every lane active then run it as one call instead of one plan per
//! instruction. Anything the code cannot take leaves it with the wave's state as the
//! interpreter would have it at that instruction, so the plans and the general path stay the
//! semantics it is tested against.
//!
//! Layering: this module (the table of regions and the call) above `lower` (instructions to
//! IR) above `llvm` (the only code that calls LLVM).

mod llvm;
mod lower;

use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::decode::Program;
use crate::memory::{GlobalMemory, Spans};
use crate::wave::{LANES, Wave};

use super::Ctx;
use lower::Frame;

/// The environment variable that sets after how many entries a region is compiled (`off`:
/// never).
pub const VARIABLE: &str = "AMDGPU_EMU_COMPILE_AFTER";
/// Entries of a region before it is compiled, by default.
const AFTER: u32 = 1024;

/// The share of a program's time since its first region was compiled that compiling it may
/// take, in percent: a region is compiled only while the program's compile time stays below
/// it plus [`COMPILE_ALLOWANCE`] (a program with many briefly hot regions, such as large
/// unrolled kernels each dispatched a few times, would otherwise spend more time compiling
/// than compiled code gives back). Compiling every region at its first entry (after 1) is not
/// paced.
const COMPILE_SHARE: u64 = 10;

/// Compile time allowed beyond [`COMPILE_SHARE`], in nanoseconds: a program's first regions
/// (a short program's few hot loops) compile at once.
const COMPILE_ALLOWANCE: u64 = 250_000_000;

/// After how many entries a region is compiled (`None`: never), from [`VARIABLE`].
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

/// A region that will not be compiled (the lowering or LLVM refused it).
const REFUSED: *mut Compiled = std::ptr::dangling_mut();

/// The regions of one decoded program, by their first instruction.
pub(crate) struct Regions {
    code: Box<[AtomicPtr<Compiled>]>,
    hits: Box<[AtomicU32]>,
    /// Held by the thread compiling (others go on interpreting meanwhile).
    compiling: Mutex<()>,
    /// When the first region was compiled, and the compile time spent since (nanoseconds).
    first: OnceLock<Instant>,
    spent: AtomicU64,
}

impl Regions {
    /// No region of a program of `n` instructions compiled yet.
    pub(crate) fn new(n: usize) -> Regions {
        Regions {
            code: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            hits: (0..n).map(|_| AtomicU32::new(0)).collect(),
            compiling: Mutex::new(()),
            first: OnceLock::new(),
            spent: AtomicU64::new(0),
        }
    }

    /// Whether compiling now keeps within [`COMPILE_SHARE`] percent of the time since the
    /// first compilation, plus [`COMPILE_ALLOWANCE`].
    fn compile_time_left(&self) -> bool {
        let elapsed = self
            .first
            .get()
            .map_or(0, |t| t.elapsed().as_nanos() as u64);
        let allowed = elapsed.saturating_mul(COMPILE_SHARE) / 100 + COMPILE_ALLOWANCE;
        self.spent.load(Ordering::Relaxed) <= allowed
    }

    /// How many regions are compiled.
    pub(crate) fn compiled(&self) -> usize {
        let compiled = |c: &AtomicPtr<Compiled>| {
            let c = c.load(Ordering::Acquire);
            !c.is_null() && c != REFUSED
        };
        self.code.iter().filter(|c| compiled(c)).count()
    }

    /// The compiled region at `pc`, counting an entry and compiling it at the `after`th.
    fn at(&self, prog: &Program, pc: usize, after: u32) -> Option<&Compiled> {
        let mut c = self.code.get(pc)?.load(Ordering::Acquire);
        if c.is_null() {
            // Entries counted without a read-modify-write: a count lost to a race only
            // delays the compilation.
            let h = self.hits[pc].load(Ordering::Relaxed).saturating_add(1);
            self.hits[pc].store(h, Ordering::Relaxed);
            if h < after || (after > 1 && !self.compile_time_left()) {
                return None;
            }
            let Ok(_one) = self.compiling.try_lock() else {
                return None;
            };
            c = self.code[pc].load(Ordering::Acquire);
            if c.is_null() {
                // A panic while lowering is a fault of the lowering: it fails the test that
                // meets it, and anywhere else leaves the region to the interpreter.
                let began = Instant::now();
                let compiled = if cfg!(debug_assertions) {
                    compile(prog, pc)
                } else {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compile(prog, pc)))
                        .ok()
                        .flatten()
                };
                let took = began.elapsed().as_nanos() as u64;
                self.first.get_or_init(|| began);
                self.spent.fetch_add(took, Ordering::Relaxed);
                c = compiled.map_or(REFUSED, |b| Box::into_raw(Box::new(b)));
                self.code[pc].store(c, Ordering::Release);
            }
        }
        // SAFETY: a non-null pointer other than REFUSED is a leaked box this table owns
        // until it drops.
        (c != REFUSED).then(|| unsafe { &*c })
    }
}

impl Drop for Regions {
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

/// What running a region did.
pub(crate) struct Ran {
    /// Instructions run.
    pub count: u32,
    /// The wave stands at a segment's start (a branch's target or past a branch); else it
    /// will after the instruction it stands at (one the region does not take).
    pub at_start: bool,
}

/// The memory a region's translation callback reaches.
struct Memory<'a> {
    mem: &'a dyn GlobalMemory,
    /// The thread's kept spans, which the region's code also reads.
    spans: *mut Spans,
}

/// [`Frame::translate`]: the kept spans' translation; null for none (or a panic, which
/// never crosses into the compiled code).
unsafe extern "C" fn translate(memory: *mut u8, addr: u64, len: u64) -> *mut u8 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `memory` is the `Memory` that `run` made for this call, alive while the
        // region runs; its spans are the thread's, reached only through that pointer (the
        // region's code reads them between calls, never during one).
        let m = unsafe { &mut *(memory as *mut Memory<'_>) };
        unsafe { (*m.spans).translate(m.mem, addr, len) }
    }))
    .ok()
    .flatten()
    .map_or(std::ptr::null_mut(), |p| p.as_ptr())
}

/// Run the compiled region at the wave's pc, if there is one (compiling it when it has become
/// hot) and the wave can enter it: every lane active, and MODE's IEEE form for a region with
/// f32 arithmetic; it runs at most `budget` instructions.
pub(crate) fn run(w: &mut Wave, ctx: &mut Ctx<'_>, budget: u32) -> Option<Ran> {
    let (regions, after) = ctx.native?;
    let b = regions.at(ctx.prog, w.pc, after)?;
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
        at_start: frame.at_start != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::super::general;
    use super::super::plan::tests::{Parts, same_state, templates, waves};
    use super::*;
    use crate::decode::{Inst, Op, VCC};
    use crate::memory::RegionMemory;
    use crate::target::Target;

    /// Every operation the lowering takes, in the instruction forms of the plan tests and in
    /// scalar, VOP1 and VOP3b forms, over random registers (edge values among them) and
    /// sources from SGPRs, inline constants and the literal: run as a compiled region (ended
    /// by an instruction it does not take, so that everything is written back) and on the
    /// per-lane reference, the registers, SCC and lane counts compared.
    #[test]
    fn compiled_regions_match_the_per_lane_reference() {
        let t = Target::Gfx942;
        let words: Vec<u8> = [0xBF80_0000u32, 0xBF8A_0000]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let mut more = vec![
            // s_add_u32 s3, s3, s7 ; s_cmp_lt_u32 s3, s7 ; v_mov_b32 v2, v3 ; s_mov_b64 s[2:3], s[6:7]
            crate::decode::decode(t, &[0x8003_0703]),
            crate::decode::decode(t, &[0xBF0A_0703]),
            crate::decode::decode(t, &[0x7E04_0303]),
            crate::decode::decode(t, &[0xBE82_0106]),
            // v_mad_u64_u32 v[2:3], s[4:5], v2, v3, v[4:5] ; v_add_co_u32 v2, vcc, s0, v3
            crate::decode::decode(t, &[0xD1E8_0402, 0x0412_0702]),
            crate::decode::decode(t, &[0x3204_0600]),
            // v_addc_co_u32 v3, vcc, v1, v3, vcc ; v_cndmask_b32 v2, v3, v4, vcc
            crate::decode::decode(t, &[0x3806_0701]),
            crate::decode::decode(t, &[0x0004_0903]),
        ];
        more.extend(templates());
        let sources = [3u16, 7, VCC, 128, 128 + 7, 193, 208, 240, 248, 255, 256 + 5];
        let mut parts = Parts::new(RegionMemory::new());
        let mut r = 0xC0DE_0000_5EED_1234u64;
        let (mut compiled, mut names) = (0, std::collections::BTreeSet::new());
        for op in Op::ALL.iter().copied() {
            for template in &more {
                for (i, &src0) in sources.iter().enumerate() {
                    let mut inst: Inst = *template;
                    inst.op = op;
                    inst.src[0] = src0;
                    inst.lit = crate::exec::f32_test_bits(&mut r);
                    if i % 2 == 0 && !f32::from_bits(inst.lit).is_finite() {
                        inst.lit = 0;
                    }
                    let mut prog = Program::decode(t, 0x1000, &words);
                    prog.insts[0] = inst;
                    let regions = Regions::new(prog.insts.len());
                    let [mut a, mut b] = waves(&mut r, u64::MAX, 0xF0);
                    a.scc = i % 2 == 0;
                    b.scc = a.scc;
                    if i % 2 == 0 {
                        // Every other time no NaN or infinity in the registers, so that f32
                        // arithmetic runs in the code (a NaN result leaves the region).
                        for w in [&mut a, &mut b] {
                            for x in w.v[..16]
                                .iter_mut()
                                .flatten()
                                .chain(&mut w.s[..VCC as usize])
                            {
                                if f32::from_bits(*x).is_nan() || f32::from_bits(*x).is_infinite() {
                                    *x = 1.5f32.to_bits();
                                }
                            }
                        }
                    }
                    let ran = {
                        let mut ctx = parts.ctx(&prog, true);
                        ctx.native = Some((&regions, 1));
                        run(&mut a, &mut ctx, 1000)
                    };
                    // Not taken, or left before it (a NaN): nothing to compare.
                    if ran.is_none_or(|r| r.count == 0) {
                        continue;
                    }
                    let reference = general(&mut b, &mut parts.ctx(&prog, false), &inst);
                    assert!(reference.is_ok(), "{}", inst.disassemble(t));
                    let what = format!("{} (source {src0})", inst.disassemble(t));
                    assert_eq!(a.pc, 1, "{what}: stops at the instruction it does not take");
                    same_state(&a, &b, &what);
                    compiled += 1;
                    names.insert(op.name());
                }
            }
        }
        assert!(compiled > 500, "{compiled} forms compiled");
        for op in [
            "v_add_u32",
            "v_mul_lo_u32",
            "v_lshl_add_u64",
            "v_lshlrev_b64",
            "v_fma_f32",
            "v_fmac_f32",
            "v_cmp_gt_u32",
            "v_cmp_lt_f32",
            "v_cndmask_b32",
            "v_addc_co_u32",
            "v_mad_u64_u32",
            "v_cvt_i32_f32",
            "v_cvt_f32_u32",
            "s_addc_u32",
            "s_cmp_lt_i32",
            "s_and_saveexec_b64",
        ] {
            assert!(names.contains(op), "{op} was never compiled");
        }
    }
}
