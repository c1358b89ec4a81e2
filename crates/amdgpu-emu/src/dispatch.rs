//! The entry point: [`Emulator::dispatch`] runs one kernel dispatch to completion.
//!
//! Work-groups are handed out to a pool of host threads; the waves of one work-group run
//! together on one thread, switching at barriers and every few hundred instructions, and
//! `s_barrier` releases when every wave of the group that has not ended has reached it.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::counting::{ClassTable, Quantity};
use crate::decode::Program;
use crate::descriptor::KernelDescriptor;
use crate::exec::{self, Ctx, Flow};
use crate::fault::{Fault, FaultKind};
use crate::host_fp::IeeeHostFp;
use crate::launch::{LaunchImage, LaunchValues, WorkItems};
use crate::memory::{Apertures, GlobalMemory, load_bytes};
use crate::target::Target;
use crate::trace::ShaderDataRecord;
use crate::wave::{LANES, REGISTER_FILE_BYTES, Wave};

/// One dispatch, as a runtime's dispatch packet and loader describe it.
#[derive(Clone, Debug)]
pub struct DispatchSetup<'a> {
    /// Device address of the 64-byte kernel descriptor (the packet's kernel object).
    pub kernel_object: u64,
    /// The kernel's name, for fault messages.
    pub kernel_name: Option<&'a str>,
    /// Device address range of the loaded executable code that holds the kernel's entry
    /// point and every function it calls (e.g. the code object's `.text`). It is decoded
    /// once and cached with the kernel object.
    pub code_range: Range<u64>,
    /// Grid size in work-items per dimension.
    pub grid: [u32; 3],
    /// Work-group size in work-items per dimension.
    pub workgroup: [u32; 3],
    /// Device address of the kernel arguments.
    pub kernarg_address: u64,
    /// LDS bytes per work-group (the packet's group segment size).
    pub group_segment_size: u32,
    /// Private bytes per work-item (the packet's private segment size).
    pub private_segment_size: u32,
    /// Device address of the dispatch packet (`s_load` through the dispatch pointer).
    pub dispatch_packet_address: u64,
    /// Device address of the queue descriptor (the queue pointer SGPRs).
    pub queue_address: u64,
    /// The dispatch id SGPRs.
    pub dispatch_id: u64,
    /// Generic-address apertures.
    pub apertures: Apertures,
}

/// What a completed dispatch produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DispatchOutcome {
    /// Shader-data records of every wave, ordered by (time, cu, simd, wave slot).
    pub trace: Vec<ShaderDataRecord>,
    /// Work-groups run.
    pub workgroups: u64,
    /// Waves run.
    pub waves: u64,
    /// Instructions issued, summed over waves.
    pub wave_instructions: u64,
    /// Active lanes of vector instructions, summed.
    pub lane_instructions: u64,
    /// The largest cycle count of one wave.
    pub max_wave_cycles: u64,
    /// Hardware-counter quantities per compute unit (empty when counting is off; see
    /// [`Emulator::with_counting`]).
    pub counters: crate::counting::CounterTotals,
}

/// Instructions a wave runs before the scheduler switches to the next wave of its group.
const SLICE: u32 = 512;

/// The most work-groups a kernel with a grid-wide barrier runs co-resident (more than any
/// device lets a cooperative launch have); a larger grid runs as usual.
const COOPERATIVE_GROUPS: u64 = 1 << 14;

/// Wave-instructions a thread's resident work-groups run without one of them ending before it
/// makes twice as many resident (see [`Job::work`]).
const PATIENCE: u64 = 1 << 20;

/// The most bytes of wave state one thread's resident work-groups may have.
const RESIDENT_BYTES: u64 = 512 << 20;

/// An emulated agent: a target, a host thread pool size and a decoded-code cache.
/// Thread-safe: dispatches may run from several threads at once.
pub struct Emulator {
    target: Target,
    threads: usize,
    compute_units: u32,
    time_limit: Duration,
    counting: bool,
    fast_paths: bool,
    /// Entries of a region before it is compiled to host code (`None`: never).
    compile_after: Option<u32>,
    /// Decoded code by code range (start, end).
    cache: Mutex<HashMap<(u64, u64), Arc<Decoded>>>,
    /// Per-thread wave state (register files, LDS, private memory) kept between dispatches.
    states: Mutex<Vec<ThreadState>>,
}

/// The environment variable that sets the default thread count.
pub const THREADS_VARIABLE: &str = "AMDGPU_EMU_THREADS";

impl Emulator {
    /// An emulator of `target` running work-groups on `threads` host threads (0: the value
    /// of `AMDGPU_EMU_THREADS`, else one per available core). It reports 4 compute units
    /// unless [`Emulator::with_compute_units`] says otherwise.
    pub fn new(target: Target, threads: usize) -> Emulator {
        let threads = if threads > 0 {
            threads
        } else {
            std::env::var(THREADS_VARIABLE)
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|&n: &usize| n > 0)
                .unwrap_or_else(|| {
                    std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(1)
                })
        };
        Emulator {
            target,
            threads,
            compute_units: 4,
            time_limit: Duration::from_secs(600),
            counting: true,
            fast_paths: true,
            compile_after: exec::native::default_threshold(),
            cache: Mutex::new(HashMap::new()),
            states: Mutex::new(Vec::new()),
        }
    }

    /// Set the number of compute units waves are placed on (1-64; see `docs/emulator.md`).
    pub fn with_compute_units(mut self, n: u32) -> Emulator {
        self.compute_units = n.clamp(1, 64);
        self
    }

    /// Count hardware-counter quantities (on by default): instructions by category, waves,
    /// work-groups, lanes and bytes, per compute unit, in [`DispatchOutcome::counters`].
    pub fn with_counting(mut self, on: bool) -> Emulator {
        self.counting = on;
        self
    }

    /// Run instructions through their pre-resolved plans and the specialised whole-row and
    /// single-range memory loops (on by default). Off, every instruction runs on the per-lane
    /// reference semantics the fast paths are tested against: slower, the same results.
    pub fn with_fast_paths(mut self, on: bool) -> Emulator {
        self.fast_paths = on;
        self
    }

    /// Compile a region of instructions to host code once waves have entered it `after`
    /// times (`None`: never; by default 1,024, or what `AMDGPU_EMU_COMPILE_AFTER` says, `off`
    /// for never), compiling paced to a tenth of the time since the first (`Some(1)`: every
    /// region at its first entry, unpaced). Compiled regions give the same results as the
    /// interpreter (anything they cannot take, they leave to it); only the fast paths use
    /// them.
    pub fn with_compiled_regions(mut self, after: Option<u32>) -> Emulator {
        self.compile_after = after.map(|n| n.max(1));
        self
    }

    /// Bound a dispatch's run time (default 600 s): a kernel still running then (an endless
    /// loop, a spin-wait on memory nothing will write) ends with a [`FaultKind::TimeLimit`]
    /// fault instead of hanging its caller.
    pub fn with_time_limit(mut self, limit: Duration) -> Emulator {
        self.time_limit = limit;
        self
    }

    /// The target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The host threads used per dispatch.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How many decoded code ranges the cache holds (one per code object's `.text`, whatever
    /// the number of its kernels dispatched).
    pub fn decoded_ranges(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// How many regions of code the cache's decoded ranges have compiled to host code.
    pub fn compiled_regions(&self) -> usize {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.values().map(|d| d.regions.compiled()).sum()
    }

    /// Forget decoded code that lies in `range` (call when code memory is freed or
    /// rewritten).
    pub fn forget_code(&self, range: Range<u64>) {
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        c.retain(|k, _| k.1 <= range.start || k.0 >= range.end);
    }

    /// A thread's wave state, reused from an earlier dispatch when one is free.
    fn take_state(&self) -> ThreadState {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        states.pop().unwrap_or_default()
    }

    /// Keep a thread's wave state for the next dispatch (at most one per host thread).
    fn give_back_state(&self, st: ThreadState) {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        if states.len() < self.threads {
            states.push(st);
        }
    }

    fn program(
        &self,
        setup: &DispatchSetup<'_>,
        mem: &dyn GlobalMemory,
    ) -> Result<Arc<Decoded>, Fault> {
        // Keyed by the code range alone: the kernels of one code object share its decoded
        // `.text` (each finds its entry in it), rather than each decoding all of it again.
        let key = (setup.code_range.start, setup.code_range.end);
        if let Some(p) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(p.clone());
        }
        let len = setup.code_range.end.saturating_sub(setup.code_range.start);
        if len == 0 || len > 1 << 30 {
            return Err(Fault::dispatch(
                format!(
                    "code range 0x{:x}..0x{:x} is empty or too large",
                    setup.code_range.start, setup.code_range.end
                ),
                setup.kernel_name,
            ));
        }
        let Some(p) = mem.translate(setup.code_range.start, len) else {
            return Err(Fault::dispatch(
                format!(
                    "code range 0x{:x}..0x{:x} is not readable memory",
                    setup.code_range.start, setup.code_range.end
                ),
                setup.kernel_name,
            ));
        };
        let mut bytes = vec![0u8; len as usize];
        load_bytes(p, &mut bytes);
        let mut prog = Program::decode(self.target, setup.code_range.start, &bytes);
        let classes = ClassTable::build(&mut prog.insts);
        let plans = exec::plan::build(&prog);
        let regions = exec::native::Regions::new(prog.insts.len());
        let prog = Arc::new(Decoded {
            prog,
            classes,
            plans,
            regions,
        });
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, prog.clone());
        Ok(prog)
    }

    /// Run a dispatch to completion. Every memory access goes through `mem`. Returns the
    /// trace and counts, or the first fault (by work-group order) that ended it; the other
    /// work-groups stop early then.
    pub fn dispatch(
        &self,
        setup: &DispatchSetup<'_>,
        mem: &dyn GlobalMemory,
    ) -> Result<DispatchOutcome, Fault> {
        self.dispatch_cancellable(setup, mem, &AtomicBool::new(false))
    }

    /// [`Emulator::dispatch`] that gives up when `cancel` becomes true (checked at every
    /// scheduling point): the dispatch then ends with a [`FaultKind::Cancelled`] fault. For a
    /// runtime whose queue is destroyed while a kernel runs.
    pub fn dispatch_cancellable(
        &self,
        setup: &DispatchSetup<'_>,
        mem: &dyn GlobalMemory,
        cancel: &AtomicBool,
    ) -> Result<DispatchOutcome, Fault> {
        let name = setup.kernel_name;
        let kd = checked_launch(setup, mem)?;
        let decoded = self.program(setup, mem)?;
        let prog = &decoded.prog;
        let mut entry = setup.kernel_object.wrapping_add(kd.entry_offset as u64);
        if kd.preload_length() > 0 {
            entry = entry.wrapping_add(256);
        }
        let Some(entry_index) = prog.index_of(entry) else {
            return Err(Fault::dispatch(
                format!("entry point 0x{entry:x} is not an instruction in the code range"),
                name,
            ));
        };
        let values = LaunchValues {
            dispatch_packet_address: setup.dispatch_packet_address,
            queue_address: setup.queue_address,
            kernarg_address: setup.kernarg_address,
            dispatch_id: setup.dispatch_id,
            private_segment_size: setup.private_segment_size,
        };
        let image = LaunchImage::new(&kd, &values, mem).map_err(|e| Fault::dispatch(e, name))?;
        let counts: [u32; 3] = std::array::from_fn(|d| setup.grid[d].div_ceil(setup.workgroup[d]));
        let total = counts.iter().map(|&c| c as u64).product::<u64>();
        let job = Job {
            setup,
            kd,
            prog,
            classes: &decoded.classes,
            plans: if self.fast_paths { &decoded.plans } else { &[] },
            fast: self.fast_paths,
            native: self
                .compile_after
                .filter(|_| self.fast_paths)
                .map(|after| (&decoded.regions, after)),
            mem,
            entry,
            entry_index,
            image,
            counts,
            target: self.target,
            compute_units: self.compute_units,
            counting: self.counting,
            clock_base: Instant::now(),
            deadline: Instant::now() + self.time_limit,
            time_limit: self.time_limit,
            abort: AtomicBool::new(false),
            cancel,
        };
        // A kernel with a grid-wide barrier (`ds_gws_barrier`, cooperative launches) runs every
        // work-group resident from the start, on one thread, so that all of them reach it.
        let all_resident = prog.grid_sync && total > 1 && total <= COOPERATIVE_GROUPS;
        self.run_groups(&job, total, all_resident)
    }

    /// Runs the dispatch's work-groups on the worker pool, claimed in chunks (all of them
    /// resident on one thread when `all_resident`); the first fault ends the dispatch.
    fn run_groups(
        &self,
        job: &Job<'_>,
        total: u64,
        all_resident: bool,
    ) -> Result<DispatchOutcome, Fault> {
        let threads = if all_resident { 1 } else { self.threads };
        let threads = (threads as u64).min(total).max(1) as usize;
        let work = Work {
            next: AtomicU64::new(0),
            total,
            threads,
            all_resident,
            // Work-groups claimed at a time: a few claims per thread and round, so that the
            // counter is not contended while the last groups still spread over the threads.
            chunk: (total / (threads as u64 * 8)).clamp(1, 64),
            fault: Mutex::new(None),
            results: Mutex::new(Vec::new()),
        };
        let worker = || {
            // Kernel arithmetic runs on the host FPU: pin it to IEEE form whatever the caller's
            // (or the creating thread's) control register says, and restore it after.
            let _fp = IeeeHostFp::pin();
            let mut st = self.take_state();
            job.work(&work, &mut st);
            self.give_back_state(st);
        };
        crate::pool::run(threads, &worker);
        let Work { fault, results, .. } = work;
        if let Some((_, f)) = fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(f);
        }
        Ok(merge(
            results.into_inner().unwrap_or_else(|e| e.into_inner()),
        ))
    }
}

/// The kernel descriptor of a dispatch, after the checks that refuse it before any wave runs:
/// readable, built for wave64, a non-empty grid and work-group of at most 1024 work-items.
fn checked_launch(
    setup: &DispatchSetup<'_>,
    mem: &dyn GlobalMemory,
) -> Result<KernelDescriptor, Fault> {
    let name = setup.kernel_name;
    let Some(kdp) = mem.translate(setup.kernel_object, 64) else {
        return Err(Fault::dispatch(
            format!(
                "kernel object 0x{:x} is not readable memory",
                setup.kernel_object
            ),
            name,
        ));
    };
    let mut kdb = [0u8; 64];
    load_bytes(kdp, &mut kdb);
    let kd = KernelDescriptor::parse(&kdb);
    if kd.wave32() {
        return Err(Fault::dispatch(
            "the kernel is built for wave32, which GFX9 targets do not run",
            name,
        ));
    }
    if setup.workgroup.contains(&0) || setup.grid.contains(&0) {
        return Err(Fault::dispatch(
            format!(
                "grid {:?} and work-group {:?} must be non-zero",
                setup.grid, setup.workgroup
            ),
            name,
        ));
    }
    let wg_items: u64 = setup.workgroup.iter().map(|&x| x as u64).product();
    if wg_items > 1024 {
        return Err(Fault::dispatch(
            format!("work-group of {wg_items} work-items exceeds 1024"),
            name,
        ));
    }
    Ok(kd)
}

/// The workers' counts summed, their traces in one list ordered by (time, cu, simd, slot).
fn merge(results: Vec<DispatchOutcome>) -> DispatchOutcome {
    let mut all = DispatchOutcome::default();
    for r in results {
        all.trace.extend(r.trace);
        all.workgroups += r.workgroups;
        all.waves += r.waves;
        all.wave_instructions += r.wave_instructions;
        all.lane_instructions += r.lane_instructions;
        all.max_wave_cycles = all.max_wave_cycles.max(r.max_wave_cycles);
        all.counters.add(&r.counters);
    }
    all.trace.sort_by_key(|r| (r.time, r.cu, r.simd, r.wave_id));
    all
}

/// The work-groups of a dispatch being handed out, and what the workers report.
struct Work {
    next: AtomicU64,
    total: u64,
    /// Threads taking part.
    threads: usize,
    /// Every work-group is resident from the start (one thread).
    all_resident: bool,
    chunk: u64,
    /// The fault of the lowest work-group that faulted.
    fault: Mutex<Option<(u64, Fault)>>,
    results: Mutex<Vec<DispatchOutcome>>,
}

impl Work {
    /// Record the fault of work-group `g` (the lowest one wins).
    fn fail(&self, g: u64, f: Fault) {
        let mut slot = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_none_or(|(g0, _)| g < *g0) {
            *slot = Some((g, f));
        }
    }
}

/// The fault a panic inside the emulator (a bug) ends the dispatch with.
fn internal_error(
    panic: Box<dyn std::any::Any + Send>,
    place: &str,
    setup: &DispatchSetup<'_>,
) -> Fault {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    Fault::dispatch(
        format!("internal emulator error in {place}: {msg}"),
        setup.kernel_name,
    )
}

/// A decoded code range: its instructions, their counter classes and their plans.
struct Decoded {
    prog: Program,
    classes: ClassTable,
    plans: Vec<exec::plan::Planned>,
    /// The regions compiled to host code.
    regions: exec::native::Regions,
}

struct Job<'a> {
    setup: &'a DispatchSetup<'a>,
    kd: KernelDescriptor,
    prog: &'a Program,
    classes: &'a ClassTable,
    /// The instructions' plans (empty when the fast paths are off).
    plans: &'a [exec::plan::Planned],
    fast: bool,
    /// The compiled regions and after how many entries a region is compiled.
    native: Option<(&'a exec::native::Regions, u32)>,
    mem: &'a dyn GlobalMemory,
    entry: u64,
    entry_index: usize,
    /// The scalar registers every wave starts with.
    image: LaunchImage,
    counts: [u32; 3],
    target: Target,
    compute_units: u32,
    counting: bool,
    clock_base: Instant,
    deadline: Instant,
    time_limit: Duration,
    /// Set when a work-group faulted: the others stop at their next scheduling point.
    abort: AtomicBool,
    /// Set by the caller to give up.
    cancel: &'a AtomicBool,
}

#[derive(Default)]
struct ThreadState {
    waves: Vec<Wave>,
    /// Waves of the work-group set up last.
    nwaves: usize,
    lds: Vec<u8>,
    scratch: Vec<u8>,
    /// The memory spans of the dispatch this thread translated last.
    spans: crate::memory::Spans,
    /// The counts of the work-group set up last (when the dispatch counts).
    counts: crate::counting::GroupCounts,
}

/// The work-groups a thread has claimed and not started yet.
#[derive(Default)]
struct Claims {
    next: u64,
    end: u64,
    /// Every work-group of the dispatch has been claimed.
    exhausted: bool,
}

impl Claims {
    /// The next work-group to start, claiming a chunk of them when none is left.
    fn next(&mut self, work: &Work) -> Option<u64> {
        if self.next == self.end {
            if self.exhausted {
                return None;
            }
            let first = work.next.fetch_add(work.chunk, Ordering::Relaxed);
            if first >= work.total {
                self.exhausted = true;
                return None;
            }
            (self.next, self.end) = (first, (first + work.chunk).min(work.total));
        }
        self.next += 1;
        Some(self.next - 1)
    }
}

/// The work-groups one thread holds resident, and their wave states.
struct Residents {
    /// State 0 is the thread's kept one; the others are made when more groups are resident.
    states: Vec<ThreadState>,
    /// States no resident group uses.
    free: Vec<usize>,
    /// Resident work-groups, oldest first, each with the index of its state.
    active: Vec<(Group, usize)>,
    /// How many work-groups to hold resident.
    wanted: usize,
    /// The most work-groups this thread may hold resident.
    cap: usize,
    /// Wave-instructions run since a work-group last ended.
    waited: u64,
    /// The counts of the work-groups that ended, per compute unit, folded into the
    /// outcome's counters once, when the thread's part of the dispatch is done.
    per_cu: Vec<crate::counting::GroupCounts>,
}

impl Residents {
    fn new(first: ThreadState, cap: usize, wanted: usize) -> Residents {
        Residents {
            states: vec![first],
            free: vec![0],
            active: Vec::new(),
            wanted,
            cap,
            waited: 0,
            per_cu: Vec::new(),
        }
    }

    /// The index of a state no resident group uses (a new one when none is free).
    fn free_state(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.states.push(ThreadState::default());
            self.states.len() - 1
        })
    }

    /// Resident group `i` ended: its state is free, and when it was the oldest (the one the
    /// others were made resident for, as far as the thread can tell) half as many groups are
    /// wanted.
    fn ended(&mut self, i: usize) {
        let (_, k) = self.active.remove(i);
        self.free.push(k);
        self.waited = 0;
        if i == 0 {
            self.wanted = (self.wanted / 2).max(1);
        }
    }

    /// The resident groups ran `n` more wave-instructions; after [`PATIENCE`] of them without
    /// one ending, twice as many groups are wanted.
    fn waited(&mut self, n: u64) {
        self.waited += n;
        if self.waited >= PATIENCE && self.wanted < self.cap {
            self.wanted = (self.wanted * 2).min(self.cap);
            self.waited = 0;
        }
    }

    /// The thread's kept state back, the others dropped.
    fn into_first_state(mut self) -> ThreadState {
        std::mem::take(&mut self.states[0])
    }
}

/// Wave-instructions the resident work-groups' waves have run so far.
fn running_instructions(sched: &Residents) -> u64 {
    let states = &sched.states;
    let waves = |k: usize| states[k].waves[..states[k].nwaves].iter();
    sched
        .active
        .iter()
        .flat_map(|&(_, k)| waves(k))
        .map(|w| w.cycles)
        .sum()
}

/// A work-group being run.
struct Group {
    /// Linear work-group id.
    g: u64,
    id: [u32; 3],
    /// Private bytes per lane.
    psize: u32,
}

/// Release the global wave-sync barrier when as many waves wait at it as the barrier names.
fn release_grid_barrier(states: &mut [ThreadState]) {
    let waiting = || {
        states
            .iter()
            .flat_map(|st| st.waves[..st.nwaves].iter())
            .filter(|w| w.grid_wait > 0)
    };
    let count = waiting().count() as u32;
    let Some(members) = waiting().map(|w| w.grid_wait).max() else {
        return;
    };
    if count >= members {
        for st in states.iter_mut() {
            for w in st.waves[..st.nwaves].iter_mut() {
                w.grid_wait = 0;
            }
        }
    }
}

/// HW_ID of wave 0 of a work-group: the documented deterministic placement.
fn group_hw_id(cu_count: u32, group: u64) -> u32 {
    let cu = (group % cu_count as u64) as u32;
    let round = (group / cu_count as u64) as u32;
    let (se, cu_in_se) = (cu / 16, cu % 16);
    cu_in_se << 8 | (se & 3) << 13 | (round & 0xF) << 16
}

/// HW_ID of wave `wave` of the work-group whose wave 0 has `group_id`: its SIMD and slot.
fn wave_hw_id(group_id: u32, wave: u32) -> u32 {
    let simd = wave % 4;
    let slot = (wave / 4) % 8;
    group_id | slot | simd << 4
}

impl Job<'_> {
    /// Claim work-groups in chunks and run them until none is left, a work-group faults or the
    /// caller cancels; the counts go to `work.results`. One work-group is resident at a time
    /// until the resident ones run [`PATIENCE`] wave-instructions without any of them ending:
    /// then twice as many are (up to [`Job::residency`]), round-robin, so that a group waiting
    /// on another (a flag a later group sets, a grid barrier made of atomics) lets it run, as
    /// the GPU's co-resident groups do. The oldest group's ending halves the count again.
    fn work(&self, work: &Work, st: &mut ThreadState) {
        st.spans.clear();
        let mut out = DispatchOutcome::default();
        let cap = self.residency(work);
        let wanted = if work.all_resident { cap } else { 1 };
        let mut sched = Residents::new(std::mem::take(st), cap, wanted);
        let mut claims = Claims::default();
        while !self.abort.load(Ordering::Relaxed) {
            if let Err((g, f)) = self.admit(&mut sched, &mut claims, work) {
                work.fail(g, f);
                self.abort.store(true, Ordering::Relaxed);
                break;
            }
            if sched.active.is_empty() {
                break;
            }
            if let Err((g, f)) = self.sweep(&mut sched, &mut out) {
                work.fail(g, f);
                self.abort.store(true, Ordering::Relaxed);
                break;
            }
        }
        if self.counting {
            for (cu, counts) in sched.per_cu.iter().enumerate() {
                counts.fold(self.classes, out.counters.cu_mut(cu));
            }
        }
        *st = sched.into_first_state();
        work.results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(out);
    }

    /// Work-groups one thread may hold resident: all of them for a grid-wide barrier; else the
    /// device's (its compute units, each with
    /// at most 32 waves and 64 KiB of LDS) shared among the dispatch's threads, and no more
    /// than [`RESIDENT_BYTES`] of wave state (registers, LDS, private memory).
    fn residency(&self, work: &Work) -> usize {
        if work.all_resident {
            return work.total as usize;
        }
        let s = self.setup;
        let items: u64 = s.workgroup.iter().map(|&d| u64::from(d)).product();
        let waves = items.div_ceil(LANES as u64).max(1);
        let lds = u64::from(s.group_segment_size.max(self.kd.group_segment_fixed_size));
        let by_waves = (32 / waves).max(1);
        let by_lds = 65536u64.checked_div(lds).map_or(by_waves, |n| n.max(1));
        let device = u64::from(self.compute_units) * by_waves.min(by_lds);
        let private = u64::from(
            s.private_segment_size
                .max(self.kd.private_segment_fixed_size),
        );
        let group_bytes = waves * (REGISTER_FILE_BYTES as u64 + LANES as u64 * private) + lds;
        let by_memory = (RESIDENT_BYTES / group_bytes).max(1);
        let threads = work.threads.max(1) as u64;
        device.div_ceil(threads).min(by_memory).clamp(1, work.total) as usize
    }

    /// Start work-groups until as many are resident as the scheduler wants, or none is left.
    fn admit(
        &self,
        sched: &mut Residents,
        claims: &mut Claims,
        work: &Work,
    ) -> Result<(), (u64, Fault)> {
        while sched.active.len() < sched.wanted {
            let Some(g) = claims.next(work) else {
                return Ok(());
            };
            if self.cancel.load(Ordering::Relaxed) {
                let mut f = Fault::dispatch("", self.setup.kernel_name);
                f.kind = FaultKind::Cancelled;
                return Err((g, f));
            }
            let k = sched.free_state();
            let started = self.guarded(g, || Ok(self.start_group(g, &mut sched.states[k])));
            match started {
                Ok(group) => sched.active.push((group, k)),
                Err(f) => return Err((g, f)),
            }
        }
        Ok(())
    }

    /// One round of every resident work-group (the oldest first); ended groups are counted
    /// and their states freed. Stops at the first fault, or quietly when another thread's
    /// work-group faulted.
    fn sweep(&self, sched: &mut Residents, out: &mut DispatchOutcome) -> Result<(), (u64, Fault)> {
        let before = out.wave_instructions + running_instructions(sched);
        let mut i = 0;
        while i < sched.active.len() {
            let (ref group, k) = sched.active[i];
            let st = &mut sched.states[k];
            match self.guarded(group.g, || self.round(group, st, out)) {
                Ok(true) => {
                    self.finish_group(group, st, out, &mut sched.per_cu);
                    sched.ended(i);
                    continue;
                }
                Ok(false) => i += 1,
                Err(f) => return Err((group.g, f)),
            }
        }
        if self.abort.load(Ordering::Relaxed) {
            // Another work-group faulted; its fault is the dispatch's.
            sched.active.clear();
            return Ok(());
        }
        if let Some((group, k)) = sched.active.first() {
            self.check_stop(group, &sched.states[*k])
                .map_err(|f| (group.g, f))?;
        }
        release_grid_barrier(&mut sched.states);
        let after = out.wave_instructions + running_instructions(sched);
        sched.waited(after - before);
        Ok(())
    }

    /// `f` with a panic (an emulator bug) turned into a fault of work-group `g`: it ends the
    /// dispatch, never the caller's process.
    fn guarded<T>(&self, g: u64, f: impl FnOnce() -> Result<T, Fault>) -> Result<T, Fault> {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        run.unwrap_or_else(|p| Err(internal_error(p, &format!("work-group {g}"), self.setup)))
    }

    /// Set work-group `g`'s waves up in `st`: registers, LDS and private memory.
    fn start_group(&self, g: u64, st: &mut ThreadState) -> Group {
        let s = self.setup;
        let kd = &self.kd;
        let (cx, cy) = (self.counts[0] as u64, self.counts[1] as u64);
        let id = [
            (g % cx) as u32,
            ((g / cx) % cy) as u32,
            (g / (cx * cy)) as u32,
        ];
        let dims: [u32; 3] =
            std::array::from_fn(|d| s.workgroup[d].min(s.grid[d] - id[d] * s.workgroup[d]));
        let items = dims[0] * dims[1] * dims[2];
        let nwaves = items.div_ceil(LANES as u32) as usize;
        let lds_size = s.group_segment_size.max(kd.group_segment_fixed_size) as usize;
        st.lds.clear();
        st.lds.resize(lds_size, 0);
        let psize = s.private_segment_size.max(kd.private_segment_fixed_size);
        let scratch_len = nwaves * LANES * psize as usize;
        st.scratch.clear();
        st.scratch.resize(scratch_len, 0);
        while st.waves.len() < nwaves {
            st.waves.push(Wave::new());
        }
        st.nwaves = nwaves;
        let group_id = group_hw_id(self.compute_units, g);
        if self.counting {
            st.counts.reset(self.classes.classes.len());
        }
        let mut items = WorkItems::new(dims, kd.workitem_id_dims());
        for (k, w) in st.waves.iter_mut().enumerate().take(nwaves) {
            self.image.start(w, id, nwaves as u32, k as u32);
            w.index = k as u32;
            w.pc = self.entry_index;
            w.mode = kd.initial_mode();
            w.hw_id = wave_hw_id(group_id, k as u32);
            let exec = items.next_wave(w);
            w.set_exec(exec);
            st.counts.full_waves += u64::from(exec == u64::MAX);
        }
        Group { g, id, psize }
    }

    /// Give each running wave of a work-group one time slice; `true` when every wave has ended
    /// (in this round or before).
    /// Releases the work-group barrier when every wave that has not ended waits at it.
    fn round(
        &self,
        group: &Group,
        st: &mut ThreadState,
        out: &mut DispatchOutcome,
    ) -> Result<bool, Fault> {
        let mut ctx = Ctx {
            target: self.target,
            prog: self.prog,
            mem: self.mem,
            lds: &mut st.lds,
            scratch: &mut st.scratch,
            private_size: group.psize,
            apertures: self.setup.apertures,
            trace: &mut out.trace,
            clock_base: self.clock_base,
            counting: self.counting,
            counts: &mut st.counts,
            plans: self.plans,
            fast: self.fast,
            native: self.native,
            spans: &mut st.spans,
        };
        let trace_start = ctx.trace.len();
        let waves = &mut st.waves[..st.nwaves];
        let (mut all_done, mut all_at_barrier) = (true, true);
        for w in waves.iter_mut() {
            if w.done {
                continue;
            }
            if w.at_barrier || w.grid_wait > 0 {
                all_done = false;
                all_at_barrier &= w.at_barrier;
                continue;
            }
            all_at_barrier = false;
            self.slice(w, &mut ctx, group.id)?;
            // A wave that ended in this slice needs no further round.
            all_done &= w.done;
        }
        // Records of this round, placed in the work-group's placement round.
        let round = group.g / self.compute_units as u64;
        for r in &mut ctx.trace[trace_start..] {
            r.time += (round as i64) << 32;
        }
        if all_at_barrier && !all_done {
            for w in waves.iter_mut() {
                w.at_barrier = false;
            }
        }
        Ok(all_done)
    }

    /// Run one wave for up to [`SLICE`] instructions, until it waits or ends: runs of planned
    /// instructions, each followed by one instruction on the general path.
    fn slice(&self, w: &mut Wave, ctx: &mut Ctx<'_>, id: [u32; 3]) -> Result<(), Fault> {
        let mut left = SLICE;
        while left > 0 {
            left -= exec::run_plans(w, ctx, left);
            if w.done {
                return Ok(());
            }
            self.check_pc(w, id)?;
            if left == 0 {
                break;
            }
            left -= 1;
            match exec::step(w, ctx) {
                Ok(Flow::Next) => w.pc += 1,
                Ok(Flow::Jump(i)) => w.pc = i,
                Ok(Flow::Barrier) => {
                    w.pc += 1;
                    w.at_barrier = true;
                    return Ok(());
                }
                Ok(Flow::GridBarrier(members)) => {
                    w.pc += 1;
                    w.grid_wait = members;
                    return Ok(());
                }
                Ok(Flow::End) => {
                    w.done = true;
                    return Ok(());
                }
                Err(kind) => {
                    let pc = self.prog.address_of(w.pc);
                    return Err(Fault {
                        kind,
                        kernel: self.setup.kernel_name.map(str::to_string),
                        pc,
                        code_offset: pc as i64 - self.entry as i64,
                        instruction: self.prog.insts[w.pc].disassemble(self.target),
                        workgroup: id,
                        wave: w.index,
                    });
                }
            }
            self.check_pc(w, id)?;
        }
        Ok(())
    }

    /// The fault of a wave whose next instruction lies past the end of the code.
    fn check_pc(&self, w: &Wave, id: [u32; 3]) -> Result<(), Fault> {
        if w.pc < self.prog.insts.len() {
            return Ok(());
        }
        let pc = self.prog.base + self.prog.offsets.last().copied().unwrap_or(0) as u64;
        Err(Fault {
            kind: FaultKind::BadJump { target: pc + 4 },
            kernel: self.setup.kernel_name.map(str::to_string),
            pc,
            code_offset: pc as i64 - self.entry as i64,
            instruction: String::new(),
            workgroup: id,
            wave: w.index,
        })
    }

    /// A fault when the caller cancelled or the time limit passed, naming where a wave of
    /// `group` stands.
    fn check_stop(&self, group: &Group, st: &ThreadState) -> Result<(), Fault> {
        let cancelled = self.cancel.load(Ordering::Relaxed);
        if !cancelled && Instant::now() <= self.deadline {
            return Ok(());
        }
        let waves = &st.waves[..st.nwaves];
        let w = waves.iter().find(|w| !w.done).unwrap_or(&waves[0]);
        let at = w.pc.min(self.prog.insts.len() - 1);
        let pc = self.prog.address_of(at);
        Err(Fault {
            kind: if cancelled {
                FaultKind::Cancelled
            } else {
                FaultKind::TimeLimit {
                    seconds: self.time_limit.as_secs_f64(),
                }
            },
            kernel: self.setup.kernel_name.map(str::to_string),
            pc,
            code_offset: pc as i64 - self.entry as i64,
            instruction: self.prog.insts[at].disassemble(self.target),
            workgroup: group.id,
            wave: w.index,
        })
    }

    /// Count a finished work-group's waves into the outcome (its counter quantities into
    /// its compute unit's sums in `per_cu`).
    fn finish_group(
        &self,
        group: &Group,
        st: &mut ThreadState,
        out: &mut DispatchOutcome,
        per_cu: &mut Vec<crate::counting::GroupCounts>,
    ) {
        out.workgroups += 1;
        let (mut cycles, mut busy) = (0, 0);
        for w in st.waves[..st.nwaves].iter() {
            out.lane_instructions += w.lane_insts;
            cycles += w.cycles;
            busy = busy.max(w.cycles);
        }
        out.waves += st.nwaves as u64;
        out.wave_instructions += cycles;
        out.max_wave_cycles = out.max_wave_cycles.max(busy);
        if self.counting {
            let cu = (group.g % u64::from(self.compute_units)) as usize;
            let totals = out.counters.cu_mut(cu);
            totals[Quantity::Workgroups as usize] += 1;
            // The cost model's busy time: a group occupies its compute unit for as long as
            // its longest wave runs.
            totals[Quantity::BusyCycles as usize] += busy;
            totals[Quantity::ElapsedCycles as usize] += busy;
            totals[Quantity::WaveCycles as usize] += cycles;
            totals[Quantity::Waves as usize] += st.nwaves as u64;
            if per_cu.len() <= cu {
                per_cu.resize(cu + 1, Default::default());
            }
            per_cu[cu].add(&st.counts, self.classes.classes.len());
        }
    }
}
