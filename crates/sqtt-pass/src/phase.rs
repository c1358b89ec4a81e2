//! The two pipeline positions of the pass.
//!
//! * **Early** (after early simplification, before the inliner): named markers whose names are
//!   already constant and the entry/exit markers of device functions over the threshold. Both
//!   must be planted before inlining copies or merges the code, so function scopes survive
//!   inlining and the optimizer never sees an unresolved marker call move. IDs assigned here are
//!   compacted by emission count.
//!   Numeric markers are left for the late phase: their words become constants only once the
//!   header's always-inline helpers are inlined, and the intrinsic calls have side effects, so
//!   the optimizer neither drops nor reorders them.
//! * **Late** (optimizer last): barriers, memory groups and address traces, which must see the
//!   final loads, stores and barrier intrinsics; named markers whose names only became constant
//!   after inlining; the `.sqtt_funcmap` section.
//!
//! Each phase validates everything before it changes the module.

use std::collections::HashMap;

use llvm_sys::prelude::*;
use thiserror::Error;

use crate::emit::{self, ENTER, EXIT_PREV, Emitter, Packing, Payload, Word, marker_word};
use crate::funcmap::{FunctionMap, MarkerKind};
use crate::ir::{self, Builder};
use crate::options::{Options, OptionsError};
use crate::sites::{self, Access, AddressSource, BarrierOp, NamedOp, NamedSite};
use crate::target::GpuTarget;

/// Where in the pipeline the pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassPhase {
    /// Before inlining.
    Early,
    /// After the optimizer.
    Late,
}

/// Why a phase refused to instrument a module.
#[derive(Debug, Error)]
pub enum PassError {
    /// A bad option or combination.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// Clock packing on a target that cannot sample the clock.
    #[error(
        "SQTT_SHADER_CLOCK_BITS={bits} needs gfx1200, gfx1201 or gfx1250, but this module targets {target}; unset SQTT_SHADER_CLOCK_BITS or set it to 0"
    )]
    ClockUnsupported {
        /// Requested bits.
        bits: u32,
        /// The module's processor.
        target: String,
    },
    /// A payload marker with clock packing.
    #[error(
        "sqtt_marker_data(\"{name}\", ...) in {function} carries a payload record, which requires SQTT_SHADER_CLOCK_BITS=0 (it is {bits})"
    )]
    PayloadWithClock {
        /// Marker name.
        name: String,
        /// Function containing it.
        function: String,
        /// Requested bits.
        bits: u32,
    },
    /// A marker name that is not a compile-time string.
    #[error(
        "the name passed to {call} in {function} is not a string literal after optimisation; named markers need a constant name"
    )]
    NameNotConstant {
        /// The marker call.
        call: &'static str,
        /// Function containing it.
        function: String,
    },
    /// A marker ID that does not fit the marker word.
    #[error("marker ID {id} does not fit the {bits}-bit ID field{hint}")]
    IdOverflow {
        /// The ID.
        id: u32,
        /// Available ID bits.
        bits: u32,
        /// What to do.
        hint: &'static str,
    },
}

const DONE_EARLY: &str = "sqtt.early.done";
const DONE_LATE: &str = "sqtt.late.done";
const STATE: &str = "sqtt.state";
const FAILED: &str = "sqtt.failed";
/// Section holding the function map.
pub const SECTION: &str = ".sqtt_funcmap";

fn call_symbol(op: NamedOp) -> &'static str {
    match op {
        NamedOp::Enter => "sqtt_marker_enter",
        NamedOp::Exit => "sqtt_marker_exit",
        NamedOp::Point => "sqtt_marker_point",
        NamedOp::Data => "sqtt_marker_data",
    }
}

fn module_target(m: LLVMModuleRef) -> Option<GpuTarget> {
    ir::functions(m)
        .into_iter()
        .filter(|&f| ir::is_definition(f))
        .find_map(|f| {
            let cpu = ir::fn_attribute(f, "target-cpu")?;
            let features = ir::fn_attribute(f, "target-features").unwrap_or_default();
            GpuTarget::parse(&cpu, &features)
        })
}

fn instrumentable(f: LLVMValueRef) -> bool {
    let n = ir::name(f);
    ir::is_definition(f) && !n.starts_with("__sqtt") && !n.starts_with("llvm.")
}

/// The module's functions that markers may be planted in.
fn instrumentable_functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    ir::functions(m)
        .into_iter()
        .filter(|&f| instrumentable(f))
        .collect()
}

/// Runs `phase` on `m`. Host modules (any triple not starting with `amdgcn`) are untouched.
pub fn run(m: LLVMModuleRef, phase: PassPhase) -> Result<(), PassError> {
    if !ir::target_triple(m).starts_with("amdgcn") {
        return Ok(());
    }
    let b = Builder::new(m);
    let done_key = match phase {
        PassPhase::Early => DONE_EARLY,
        PassPhase::Late => DONE_LATE,
    };
    if b.named_string(done_key).is_some() || b.named_string(FAILED).is_some() {
        return Ok(());
    }
    let result = run_phase(m, &b, phase);
    match &result {
        // Report once: the other phase leaves a module that already failed alone.
        Err(_) => b.add_named_string(FAILED, "1"),
        Ok(()) => b.add_named_string(done_key, "1"),
    }
    result
}

/// Marks `m` as failed so the other phase does not report the same problem again.
pub fn mark_failed(m: LLVMModuleRef) {
    Builder::new(m).add_named_string(FAILED, "1");
}

fn run_phase(m: LLVMModuleRef, b: &Builder, phase: PassPhase) -> Result<(), PassError> {
    // Diagnostics aid: proves that an internal failure becomes a compiler error, not a crash.
    if std::env::var_os("SQTT_PASS_TEST_PANIC").is_some() {
        panic!("SQTT_PASS_TEST_PANIC is set");
    }
    let options = Options::from_env()?;
    let Some(target) = module_target(m) else {
        return Ok(());
    };
    if let Some(c) = options.clock
        && target.clock_source().is_none()
    {
        return Err(PassError::ClockUnsupported {
            bits: c.bits,
            target: target.name.clone(),
        });
    }
    let mut map = b
        .named_string(STATE)
        .and_then(|s| FunctionMap::from_state(&s))
        .unwrap_or_default();
    match phase {
        PassPhase::Early => early(m, b, &target, &options, &mut map),
        PassPhase::Late => late(m, b, &target, &options, &mut map),
    }
}

/// Largest ID that fits the header with the current clock packing.
fn id_limit(options: &Options) -> (u32, u32) {
    let bits = 30 - options.clock.map_or(0, |c| c.bits);
    (
        bits,
        if bits >= 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        },
    )
}

fn check_ids(map: &FunctionMap, options: &Options) -> Result<(), PassError> {
    let (bits, limit) = id_limit(options);
    if let Some(e) = map.entries().iter().find(|e| e.id > limit) {
        return Err(PassError::IdOverflow {
            id: e.id,
            bits,
            hint: if options.clock.is_some() {
                "; lower SQTT_SHADER_CLOCK_BITS"
            } else {
                ""
            },
        });
    }
    Ok(())
}

fn check_named(
    site: &NamedSite,
    f: LLVMValueRef,
    options: &Options,
    require_name: bool,
) -> Result<(), PassError> {
    if site.name.is_none() && require_name {
        return Err(PassError::NameNotConstant {
            call: call_symbol(site.op),
            function: ir::name(f),
        });
    }
    if site.op == NamedOp::Data
        && let Some(c) = options.clock
    {
        return Err(PassError::PayloadWithClock {
            name: site.name.clone().unwrap_or_default(),
            function: ir::name(f),
            bits: c.bits,
        });
    }
    Ok(())
}

fn named_kind(op: NamedOp) -> MarkerKind {
    match op {
        NamedOp::Enter | NamedOp::Exit => MarkerKind::Scope,
        NamedOp::Point => MarkerKind::Point,
        NamedOp::Data => MarkerKind::Data,
    }
}

/// Registers the IDs of resolved named sites (in order) and returns the ID per site.
fn register_named(map: &mut FunctionMap, sites: &[NamedSite]) -> Vec<Option<u32>> {
    sites
        .iter()
        .map(|s| {
            let name = s.name.as_deref()?;
            let payload = u32::from(s.op == NamedOp::Data);
            let id = map.intern(named_kind(s.op), name, None, payload);
            if s.op != NamedOp::Exit {
                map.note_emissions(id, 1);
            }
            Some(id)
        })
        .collect()
}

/// Plants the code of resolved named sites and removes their calls.
fn emit_named(em: &Emitter, sites: &[NamedSite], ids: &[Option<u32>], remap: &HashMap<u32, u32>) {
    for (s, id) in sites.iter().zip(ids) {
        let Some(id) = id.map(|i| remap.get(&i).copied().unwrap_or(i)) else {
            continue;
        };
        match s.op {
            NamedOp::Exit if s.fused_into_next => {}
            NamedOp::Exit => em.emit_before(
                s.call,
                Word::Const(EXIT_PREV),
                Packing::Packed,
                Payload::None,
            ),
            NamedOp::Enter => {
                let flags = if s.fuses_exit {
                    ENTER | EXIT_PREV
                } else {
                    ENTER
                };
                em.emit_before(
                    s.call,
                    Word::Const(marker_word(id, flags)),
                    Packing::Packed,
                    Payload::None,
                );
            }
            NamedOp::Point => em.emit_before(
                s.call,
                Word::Const(marker_word(id, 0)),
                Packing::Packed,
                Payload::None,
            ),
            NamedOp::Data => {
                let value = ir::operand(s.call, 1);
                em.emit_before(
                    s.call,
                    Word::Const(marker_word(id, 0)),
                    Packing::Packed,
                    Payload::Value(value),
                );
            }
        }
        ir::erase(s.call);
    }
}

/// Re-emits numeric markers (`llvm.amdgcn.s.ttracedata` from the header's numeric API). Runs
/// late only: before inlining, the header's helper still holds the word as a parameter.
fn emit_numeric(em: &Emitter, f: LLVMValueRef) {
    for call in sites::numeric_sites(f) {
        let v = ir::operand(call, 0);
        let (word, packing) = match ir::const_int(v) {
            // A bare exit is indistinguishable from a generated exit, so it is packed.
            Some(w) if w as u32 == EXIT_PREV => (Word::Const(EXIT_PREV), Packing::Packed),
            Some(w) => (Word::Const(w as u32), Packing::Legacy),
            None => (Word::Dynamic(v), Packing::Legacy),
        };
        em.emit_before(call, word, packing, Payload::None);
        ir::erase(call);
    }
}

fn early(
    m: LLVMModuleRef,
    b: &Builder,
    target: &GpuTarget,
    options: &Options,
    map: &mut FunctionMap,
) -> Result<(), PassError> {
    let funcs = instrumentable_functions(m);

    // Collect and validate.
    let mut per_function: Vec<(LLVMValueRef, bool, Vec<NamedSite>)> = Vec::new();
    for &f in &funcs {
        let instrument = match options.functions {
            Some(t) if !ir::is_kernel(f) => {
                let over = sites::exceeds(f, t);
                tracing::debug!(function = %ir::name(f), size = sites::function_size(f, t), ?t, over, "function size");
                over
            }
            _ => false,
        };
        let named: Vec<NamedSite> = sites::named_sites(f)
            .into_iter()
            .filter(|s| s.name.is_some())
            .collect();
        for s in &named {
            check_named(s, f, options, false)?;
        }
        per_function.push((f, instrument, named));
    }

    // Register IDs in encounter order, then compact by emission count.
    let mut function_ids = Vec::new();
    let mut named_ids = Vec::new();
    for (f, instrument, named) in &per_function {
        let fid = instrument.then(|| {
            let id = map.intern(
                MarkerKind::Function,
                &ir::name(*f),
                ir::function_source(*f).as_deref(),
                0,
            );
            map.note_emissions(id, ir::call_site_count(*f).max(1));
            id
        });
        function_ids.push(fid);
        named_ids.push(register_named(map, named));
    }
    let remap = map.compact();
    check_ids(map, options)?;

    // Emit.
    let em = Emitter::new(b, target, options);
    for (((f, _, named), fid), ids) in per_function.iter().zip(&function_ids).zip(&named_ids) {
        emit_named(&em, named, ids, &remap);
        if let Some(fid) = fid {
            let id = remap[fid];
            let blocks = ir::blocks(*f);
            let entry = ir::instructions(blocks[0])
                .into_iter()
                .find(|&i| {
                    !matches!(
                        ir::opcode(i),
                        llvm_sys::LLVMOpcode::LLVMAlloca | llvm_sys::LLVMOpcode::LLVMPHI
                    )
                })
                .expect("a block ends with a terminator");
            let rets: Vec<LLVMValueRef> = blocks
                .iter()
                .flat_map(|&bb| ir::instructions(bb))
                .filter(|&i| ir::is_return(i))
                .collect();
            em.emit_before(
                entry,
                Word::Const(marker_word(id, ENTER)),
                Packing::Packed,
                Payload::None,
            );
            for r in rets {
                em.emit_before(r, Word::Const(EXIT_PREV), Packing::Packed, Payload::None);
            }
        }
    }
    b.add_named_string(STATE, &map.to_state());
    Ok(())
}

fn late(
    m: LLVMModuleRef,
    b: &Builder,
    target: &GpuTarget,
    options: &Options,
    map: &mut FunctionMap,
) -> Result<(), PassError> {
    // Collect everything first.
    let plans = instrumentable_functions(m)
        .into_iter()
        .map(|f| plan_function(f, options))
        .collect::<Result<Vec<_>, _>>()?;
    let system_ids = intern_system_markers(&plans, map);
    // Late named markers and address traces, as encountered.
    let mut named_ids = Vec::new();
    let mut trace_ids = Vec::new();
    for p in &plans {
        named_ids.push(register_named(map, &p.named));
        trace_ids.push(intern_traces(map, target, &p.traced));
    }
    check_ids(map, options)?;

    let em = Emitter::new(b, target, options);
    for ((p, ids), tids) in plans.iter().zip(&named_ids).zip(&trace_ids) {
        emit_plan(&em, p, ids, tids, &system_ids);
    }
    drop_marker_declarations(m);

    // With clock packing, even numeric-only code needs the M: row to be decodable.
    if !map.is_empty() || (options.clock.is_some() && em.sites() > 0) {
        map.kernels = ir::functions(m)
            .into_iter()
            .filter(|&f| ir::is_definition(f) && ir::is_kernel(f))
            .map(ir::name)
            .collect();
        if plans.iter().any(|p| !p.traced.is_empty()) {
            map.wave_size = Some(target.wave_size);
        }
        map.clock = options.clock;
        b.section_global("__sqtt_funcmap", SECTION, &map.section_bytes());
    }
    Ok(())
}

/// What the late phase instruments in one function.
struct FunctionPlan {
    f: LLVMValueRef,
    named: Vec<NamedSite>,
    barriers: Vec<sites::BarrierSite>,
    /// The first vector-memory instruction of each group, with its access.
    memory_groups: Vec<(LLVMValueRef, Access)>,
    /// Memory instructions whose addresses are traced.
    traced: Vec<(LLVMValueRef, Access, AddressSource)>,
}

/// The sites of function `f` the options ask for.
fn plan_function(f: LLVMValueRef, options: &Options) -> Result<FunctionPlan, PassError> {
    let named = sites::named_sites(f);
    for s in &named {
        check_named(s, f, options, true)?;
    }
    let barriers = if options.barriers {
        sites::barrier_sites(f)
    } else {
        Vec::new()
    };
    let mut memory_groups = Vec::new();
    let mut traced = Vec::new();
    if options.memory.is_some() || options.addresses.any() {
        for bb in ir::blocks(f) {
            memory_sites(bb, options, &mut memory_groups, &mut traced);
        }
    }
    Ok(FunctionPlan {
        f,
        named,
        barriers,
        memory_groups,
        traced,
    })
}

/// The memory-group starts and the traced memory instructions of basic block `bb`.
fn memory_sites(
    bb: llvm_sys::prelude::LLVMBasicBlockRef,
    options: &Options,
    memory_groups: &mut Vec<(LLVMValueRef, Access)>,
    traced: &mut Vec<(LLVMValueRef, Access, AddressSource)>,
) {
    let ops: Vec<sites::MemoryOp> = ir::instructions(bb)
        .into_iter()
        .enumerate()
        .filter_map(|(k, i)| sites::memory_op(i, k))
        .collect();
    if let Some(g) = options.memory {
        let vmem: Vec<&sites::MemoryOp> =
            ops.iter().filter(|o| sites::is_vector_memory(o)).collect();
        let keys: Vec<(Access, usize)> = vmem.iter().map(|o| (o.access, o.index)).collect();
        for k in sites::group_starts(&keys, g.ops_per_marker, g.max_gap) {
            memory_groups.push((vmem[k].inst, vmem[k].access));
        }
    }
    for o in &ops {
        let wanted = match o.address {
            Some(AddressSource::Flat(_) | AddressSource::RawBuffer { .. }) => {
                options.addresses.memory
            }
            Some(AddressSource::Lds(_)) => options.addresses.lds,
            None => false,
        };
        if let (true, Some(source)) = (wanted, o.address) {
            traced.push((o.inst, o.access, source));
        }
    }
}

/// System marker IDs, in a fixed order, only for the constructs present.
fn intern_system_markers(
    plans: &[FunctionPlan],
    map: &mut FunctionMap,
) -> HashMap<&'static str, u32> {
    let present = |name: &str| -> bool {
        plans.iter().any(|p| {
            p.barriers.iter().any(|s| s.op.marker_name() == name)
                || p.memory_groups.iter().any(|(_, a)| {
                    (name == "vmem_load" && *a == Access::Load)
                        || (name == "vmem_store" && *a == Access::Store)
                })
        })
    };
    let mut system_ids = HashMap::new();
    for name in [
        BarrierOp::Barrier.marker_name(),
        BarrierOp::Signal.marker_name(),
        BarrierOp::Wait.marker_name(),
        "vmem_load",
        "vmem_store",
    ] {
        if present(name) {
            system_ids.insert(name, map.intern(MarkerKind::System, name, None, 0));
        }
    }
    system_ids
}

/// The marker IDs of a function's address traces, with their source lines.
fn intern_traces(
    map: &mut FunctionMap,
    target: &GpuTarget,
    traced: &[(LLVMValueRef, Access, AddressSource)],
) -> Vec<u32> {
    traced
        .iter()
        .map(|(inst, access, source)| {
            let src = ir::source_chain(*inst);
            map.intern(
                MarkerKind::AddressTrace,
                source.marker_name(*access),
                src.as_deref(),
                emit::address_payload_count(target.wave_size, source),
            )
        })
        .collect()
}

/// Emits the markers of one function's plan.
fn emit_plan(
    em: &Emitter<'_>,
    p: &FunctionPlan,
    ids: &[Option<u32>],
    trace_ids: &[u32],
    system_ids: &HashMap<&'static str, u32>,
) {
    emit_named(em, &p.named, ids, &HashMap::new());
    emit_numeric(em, p.f);
    for s in &p.barriers {
        let word = Word::Const(marker_word(system_ids[s.op.marker_name()], 0));
        em.emit_before(s.first, word, Packing::Packed, Payload::None);
        // SAFETY: live instruction of the module; a barrier call is never a terminator, so a
        // next instruction exists.
        let after = unsafe { llvm_sys::core::LLVMGetNextInstruction(s.last) };
        em.emit_before(after, word, Packing::Packed, Payload::None);
    }
    for (inst, access) in &p.memory_groups {
        let name = if *access == Access::Load {
            "vmem_load"
        } else {
            "vmem_store"
        };
        em.emit_before(
            *inst,
            Word::Const(marker_word(system_ids[name], 0)),
            Packing::Packed,
            Payload::None,
        );
    }
    for ((inst, _, source), id) in p.traced.iter().zip(trace_ids) {
        em.emit_before(
            *inst,
            Word::Const(marker_word(*id, 0)),
            Packing::Packed,
            Payload::Addresses(*source),
        );
    }
}

/// Drops the now unused marker declarations so nothing undefined reaches the linker.
fn drop_marker_declarations(m: LLVMModuleRef) {
    for f in ir::functions(m) {
        let n = ir::name(f);
        if sites::NAMED_SYMBOLS.iter().any(|(s, _)| *s == n) && ir::unused(f) {
            ir::delete_function(f);
        }
    }
}
