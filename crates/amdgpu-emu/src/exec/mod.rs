//! Instruction semantics: one step of a wave.

mod atomic;
mod float;
mod matrix;
mod memory;
pub(crate) mod native;
pub(crate) mod plan;
mod scalar;
mod vector;

pub(crate) use memory::PRIVATE_BUFFER_BASE;

use std::time::Instant;

use crate::decode::{Enc, Inst, Program, Ty};
use crate::fault::FaultKind;
use crate::memory::Apertures;
use crate::memory::GlobalMemory;
use crate::target::Target;
use crate::trace::ShaderDataRecord;
use crate::wave::{Wave, inline_const};

/// Result of executing one instruction.
pub(crate) type Step = Result<Flow, FaultKind>;

/// What the wave does next.
pub(crate) enum Flow {
    /// Continue with the next instruction.
    Next,
    /// Continue at instruction index.
    Jump(usize),
    /// Wait at the work-group barrier, then continue with the next instruction.
    Barrier,
    /// Wait at the global wave-sync barrier until this many waves of the dispatch wait there
    /// (`ds_gws_barrier`), then continue with the next instruction.
    GridBarrier(u32),
    /// The wave ended.
    End,
}

/// Everything an instruction can reach besides its wave's registers.
pub(crate) struct Ctx<'a> {
    pub target: Target,
    pub prog: &'a Program,
    pub mem: &'a dyn GlobalMemory,
    pub lds: &'a mut [u8],
    /// Private memory of the work-group: `waves * 64` lanes of `private_size` bytes.
    pub scratch: &'a mut [u8],
    pub private_size: u32,
    pub apertures: Apertures,
    pub trace: &'a mut Vec<ShaderDataRecord>,
    pub clock_base: Instant,
    /// Count counter quantities per instruction.
    pub counting: bool,
    /// The counts of the running wave's work-group (when `counting`).
    pub counts: &'a mut crate::counting::GroupCounts,
    /// The pre-resolved plans of `prog`'s instructions (empty: every instruction runs on the
    /// general path).
    pub plans: &'a [plan::Planned],
    /// Use the specialised loops (register rows, single-range memory accesses); false runs
    /// the per-lane reference semantics only.
    pub fast: bool,
    /// The memory spans this thread translated last in the dispatch (the plans' accesses).
    pub spans: &'a mut crate::memory::Spans,
    /// The program's compiled regions and after how many entries a region is compiled
    /// (`None`: every instruction is interpreted).
    pub native: Option<(&'a native::Regions, u32)>,
}

pub(crate) fn illegal(what: impl Into<String>) -> FaultKind {
    FaultKind::IllegalInstruction {
        reason: what.into(),
    }
}

/// Run the wave's instructions from its pc through their plans, up to `budget` of them, while
/// each has a plan that applies; returns how many ran. It stops before the first instruction
/// that needs the general path (or past the end of the program), which [`step`] then runs, or
/// after the wave's end (`w.done` set).
pub(crate) fn run_plans(w: &mut Wave, ctx: &mut Ctx<'_>, budget: u32) -> u32 {
    if w.gpr_idx_on {
        return 0;
    }
    let plans = ctx.plans;
    let mut ran = 0;
    // Whether the wave stands at a segment's start (where a compiled region may begin), and
    // whether it will after the next instruction.
    let (mut entry, mut entry_after) = (true, false);
    while ran < budget {
        if entry && let Some(region) = native::run(w, ctx, budget - ran) {
            ran += region.count;
            if w.done {
                break;
            }
            if region.count > 0 {
                (entry, entry_after) = (region.at_start, !region.at_start);
                continue;
            }
        }
        let pc = w.pc;
        let Some(p) = plans.get(pc) else {
            break;
        };
        let class = p.class;
        match plan::run(w, ctx, &p.plan, class) {
            Some(Flow::Next) => w.pc = pc + 1,
            Some(Flow::Jump(to)) => w.pc = to,
            Some(Flow::End) => w.done = true,
            _ => break,
        }
        if ctx.counting {
            ctx.counts.issue(class);
        }
        ran += 1;
        if w.done {
            break;
        }
        (entry, entry_after) = (
            entry_after || matches!(p.plan, plan::Plan::Branch(_)),
            false,
        );
    }
    w.cycles += u64::from(ran);
    ran
}

/// Execute the instruction at the wave's pc on the general path.
pub(crate) fn step(w: &mut Wave, ctx: &mut Ctx<'_>) -> Step {
    let inst = &ctx.prog.insts[w.pc];
    w.cycles += 1;
    if ctx.counting {
        ctx.counts.issue(inst.counter_class);
    }
    general(w, ctx, inst)
}

/// The general path of [`step`] (issue already counted).
fn general(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let indexed;
    let inst = if w.gpr_idx_on
        && matches!(
            inst.enc,
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p
        ) {
        let mut copy = *inst;
        index_vgprs(w, &mut copy)?;
        indexed = copy;
        &indexed
    } else {
        inst
    };
    match inst.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp | Enc::Smem => {
            scalar::exec(w, ctx, inst)
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => vector::exec(w, ctx, inst),
        Enc::Ds | Enc::Flat | Enc::Mubuf | Enc::Mimg => {
            if ctx.counting {
                ctx.counts.request(inst.counter_class, w.exec());
            }
            memory::exec(w, ctx, inst)
        }
        Enc::Unknown => Err(illegal(format!(
            "an encoding the decoder does not know: {}",
            crate::decode::identify(ctx.target, inst.lit)
        ))),
    }
}

/// VGPR indexing: offset the VGPR operands the M0 mode selects (bit 0-2 sources, bit 3 the
/// destination) by M0[7:0].
fn index_vgprs(w: &Wave, inst: &mut Inst) -> Result<(), FaultKind> {
    let m0 = w.m0();
    let (idx, mode) = ((m0 & 0xFF) as u16, (m0 >> 12) & 0xF);
    let shift = |code: &mut u16| -> Result<(), FaultKind> {
        if (crate::decode::VGPR..crate::decode::AGPR).contains(code) {
            *code += idx;
            if *code >= crate::decode::AGPR {
                return Err(illegal(format!("VGPR index {idx} runs past v255")));
            }
        }
        Ok(())
    };
    for k in 0..3 {
        if mode >> k & 1 != 0 {
            shift(&mut inst.src[k])?;
        }
    }
    if mode & 8 != 0 {
        shift(&mut inst.dst)?;
    }
    Ok(())
}

/// A jump to device address `addr`.
pub(crate) fn jump_to(ctx: &Ctx<'_>, addr: u64) -> Step {
    match ctx.prog.index_of(addr) {
        Some(i) => Ok(Flow::Jump(i)),
        None => Err(FaultKind::BadJump { target: addr }),
    }
}

/// Read a scalar-or-constant operand as 32 bits.
pub(crate) fn sread(w: &Wave, ctx: &Ctx<'_>, code: u16, ty: Ty, lit: u32) -> u32 {
    match code {
        0..=127 => w.s[code as usize],
        235 => (ctx.apertures.shared_base >> 32) as u32,
        236 => ((ctx.apertures.shared_base >> 32) as u32) | 0xFFFF_FFFF,
        237 => (ctx.apertures.private_base >> 32) as u32,
        238 => ((ctx.apertures.private_base >> 32) as u32) | 0xFFFF_FFFF,
        251 => (w.vcc() == 0) as u32,
        252 => (w.exec() == 0) as u32,
        253 => w.scc as u32,
        _ => inline_const(code, ty, lit).unwrap_or(0) as u32,
    }
}

/// Read a scalar-or-constant operand as 64 bits.
pub(crate) fn sread64(w: &Wave, ctx: &Ctx<'_>, code: u16, ty: Ty, lit: u32) -> u64 {
    match code {
        0..=127 => w.sgpr64(code),
        235 => ctx.apertures.shared_base,
        236 => ctx.apertures.shared_base | 0xFFFF_FFFF,
        237 => ctx.apertures.private_base,
        238 => ctx.apertures.private_base | 0xFFFF_FFFF,
        251 => (w.vcc() == 0) as u64,
        252 => (w.exec() == 0) as u64,
        253 => w.scc as u64,
        _ => inline_const(code, ty, lit).unwrap_or(0),
    }
}

pub(crate) fn is_known_source(code: u16) -> bool {
    matches!(code, 0..=101 | 102..=107 | 108..=124 | 126..=208 | 235..=238 | 240..=248 | 251..=253 | 255)
        || code >= 256
}

/// Check that an instruction's scalar sources are all operand codes the emulator models.
pub(crate) fn check_sources(inst: &Inst, n: usize) -> Result<(), FaultKind> {
    for k in 0..n {
        if !is_known_source(inst.src[k]) {
            return Err(illegal(format!(
                "source operand code {} is not emulated",
                inst.src[k]
            )));
        }
    }
    Ok(())
}

/// Random bits for the differential tests of the fast paths, or (one time in four) a value that
/// decides f32 results: signed zeros, denormals, the smallest normal, infinities, NaNs with
/// payloads, one.
#[cfg(test)]
fn f32_test_bits(r: &mut u64) -> u32 {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    const SPECIAL: [u32; 10] = [
        0,
        0x8000_0000,
        1,
        0x807F_FFFF,
        0x0080_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_1234,
        0x7F80_0001,
        0x3F80_0000,
    ];
    match *r % 4 {
        0 => SPECIAL[(*r >> 8) as usize % SPECIAL.len()],
        _ => (*r >> 16) as u32,
    }
}
