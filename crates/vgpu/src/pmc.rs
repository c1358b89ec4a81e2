//! Performance counters of a virtual GPU: the agent's counter file and the kreplay-private PM4
//! payload that programs it.
//!
//! A counter packet is what aqlprofile builds: a vendor-specific AQL packet of AMD format 1 whose
//! PM4 `INDIRECT_BUFFER` jumps to a command buffer. On a virtual GPU the command buffer holds one
//! PM4 type-3 `NOP` whose body is a [`Payload`]: a magic, the operation (start, read, stop), the
//! output address and the events. The one AQL processor ([`crate::aql`]) executes it in queue
//! order on the agent's [`CounterFile`]:
//!
//! - **start** checks the events (known to the catalog, within each block's per-pass limit unless
//!   `VHSA_PMC_LIMITS=off`), programs them, zeroes the counts and starts counting;
//! - completed dispatches add their counts while counting runs, whichever queue they ran on
//!   (counters are agent-wide, as on hardware);
//! - **read** writes the programmed events' values to the output buffer ([`OUTPUT_HEADER_BYTES`]
//!   of header, then one `u64` per event sample, in event order);
//! - **stop** stops counting.
//!
//! A payload the file refuses (an event it does not offer, a block over its limit, a read of
//! events no start programmed, an output buffer outside the runtime's memory) does not stop the
//! queue: the packet completes, the runtime logs why, and a read writes the reason into the
//! output buffer when it can ([`OUTPUT_ERROR_MAGIC`]), which aqlprofile's `iterate_data`
//! reports. A malformed payload and a PM4 buffer of register writes are queue errors.
//!
//! Every executed counter packet is counted ([`packets_executed`]), so a test can tell which
//! packets ran between two points of a program.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// First body dword of a counter payload's PM4 `NOP` ("KRPC").
pub const PAYLOAD_MAGIC: u32 = 0x4350_524B;
/// Payload format version.
pub const PAYLOAD_VERSION: u32 = 1;
/// First dword of a written output buffer ("KRPD").
pub const OUTPUT_MAGIC: u32 = 0x4450_524B;
/// First dword of the output buffer of a read that failed ("KRPE"), followed by the message's
/// length and as much of the message as the buffer holds.
pub const OUTPUT_ERROR_MAGIC: u32 = 0x4550_524B;
/// Bytes before the values in an output buffer: magic, sample count, read sequence number.
pub const OUTPUT_HEADER_BYTES: usize = 16;
/// The environment variable that lifts the per-block limits when set to `off`.
pub const LIMITS_VARIABLE: &str = "VHSA_PMC_LIMITS";

const PM4_TYPE3: u32 = 3;
const PM4_NOP: u32 = 0x10;
const PM4_INDIRECT_BUFFER: u32 = 0x3F;
/// Body dwords before the events: magic, version, operation, event count, output low, high.
const FIXED_DWORDS: usize = 6;
/// Dwords per event: block, index, event, flags, samples.
const EVENT_DWORDS: usize = 5;

/// A counter operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Program the events, zero them and start counting.
    Start = 1,
    /// Write the values to the output buffer.
    Read = 2,
    /// Stop counting.
    Stop = 3,
}

impl Operation {
    fn from_u32(v: u32) -> Option<Operation> {
        match v {
            1 => Some(Operation::Start),
            2 => Some(Operation::Read),
            3 => Some(Operation::Stop),
            _ => None,
        }
    }
}

/// One hardware counter of one block instance, as a profile names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PmcEvent {
    /// `hsa_ven_amd_aqlprofile_block_name_t`.
    pub block: u32,
    /// Block instance.
    pub index: u32,
    /// Hardware select value.
    pub event: u32,
    /// aqlprofile v2 event flags (accumulation).
    pub flags: u32,
    /// Samples the reader expects for this event (its dimension's instances).
    pub samples: u32,
}

/// The private payload of a counter packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload {
    /// What the packet does.
    pub op: Operation,
    /// Output buffer address (read), else 0.
    pub output: u64,
    /// The profile's events.
    pub events: Vec<PmcEvent>,
}

/// Why a payload or a packet was refused.
pub type PmcError = String;

impl Payload {
    /// The payload as one PM4 type-3 `NOP` packet.
    pub fn encode(&self) -> Vec<u32> {
        let body = FIXED_DWORDS + EVENT_DWORDS * self.events.len();
        let mut d = Vec::with_capacity(1 + body);
        d.push(pm4_header(PM4_NOP, body));
        d.extend([
            PAYLOAD_MAGIC,
            PAYLOAD_VERSION,
            self.op as u32,
            self.events.len() as u32,
            self.output as u32,
            (self.output >> 32) as u32,
        ]);
        for e in &self.events {
            d.extend([e.block, e.index, e.event, e.flags, e.samples]);
        }
        d
    }

    /// Dwords of the encoded payload for `events` events.
    pub fn encoded_dwords(events: usize) -> usize {
        1 + FIXED_DWORDS + EVENT_DWORDS * events
    }

    /// Whether `dwords` starts with a counter payload (a `NOP` with the magic).
    pub fn is_payload(dwords: &[u32]) -> bool {
        dwords.len() >= 2 && pm4_fields(dwords[0]).0 == PM4_TYPE3 && {
            let (_, op, _) = pm4_fields(dwords[0]);
            op == PM4_NOP && dwords[1] == PAYLOAD_MAGIC
        }
    }

    /// Decodes a payload from the start of a command buffer.
    pub fn decode(dwords: &[u32]) -> Result<Payload, PmcError> {
        if !Self::is_payload(dwords) {
            return Err("the command buffer does not start with a counter payload".into());
        }
        let (_, _, body) = pm4_fields(dwords[0]);
        let d = dwords
            .get(1..1 + body)
            .ok_or("the counter payload is longer than its command buffer")?;
        if body < FIXED_DWORDS || d[1] != PAYLOAD_VERSION {
            return Err(format!(
                "counter payload version {} is not {PAYLOAD_VERSION}",
                d.get(1).copied().unwrap_or(0)
            ));
        }
        let op = Operation::from_u32(d[2])
            .ok_or_else(|| format!("counter payload operation {} is unknown", d[2]))?;
        let n = d[3] as usize;
        if body != FIXED_DWORDS + EVENT_DWORDS * n {
            return Err(format!(
                "counter payload of {n} events has {body} dwords, not {}",
                FIXED_DWORDS + EVENT_DWORDS * n
            ));
        }
        let events = d[FIXED_DWORDS..]
            .chunks_exact(EVENT_DWORDS)
            .map(|e| PmcEvent {
                block: e[0],
                index: e[1],
                event: e[2],
                flags: e[3],
                samples: e[4],
            })
            .collect();
        Ok(Payload {
            op,
            output: u64::from(d[4]) | u64::from(d[5]) << 32,
            events,
        })
    }
}

/// The smallest output buffer: room for the reason of a failed read.
pub const MIN_OUTPUT_BYTES: usize = 256;

/// Bytes of the output buffer a read of `events` writes: the header and one `u64` per sample,
/// at least [`MIN_OUTPUT_BYTES`].
pub fn output_bytes(events: &[PmcEvent]) -> usize {
    (OUTPUT_HEADER_BYTES + 8 * events.iter().map(|e| e.samples as usize).sum::<usize>())
        .max(MIN_OUTPUT_BYTES)
}

fn pm4_header(op: u32, body_dwords: usize) -> u32 {
    PM4_TYPE3 << 30 | ((body_dwords as u32 - 1) & 0x3FFF) << 16 | op << 8
}

/// (type, opcode, body dwords) of a PM4 header.
pub fn pm4_fields(header: u32) -> (u32, u32, usize) {
    (
        header >> 30,
        (header >> 8) & 0xFF,
        ((header >> 16) & 0x3FFF) as usize + 1,
    )
}

/// The four dwords of a PM4 `INDIRECT_BUFFER` to `dwords` dwords at `addr` (4-byte aligned).
pub fn indirect_buffer(addr: u64, dwords: u32) -> [u32; 4] {
    [
        pm4_header(PM4_INDIRECT_BUFFER, 3),
        addr as u32 & !3,
        (addr >> 32) as u32 & 0xFFFF,
        (dwords & 0xF_FFFF) | 1 << 23,
    ]
}

/// The (address, dwords) an `INDIRECT_BUFFER` command jumps to, or `None` when it is not one.
pub fn parse_indirect_buffer(cmd: [u32; 4]) -> Option<(u64, u32)> {
    let (kind, op, _) = pm4_fields(cmd[0]);
    (kind == PM4_TYPE3 && op == PM4_INDIRECT_BUFFER).then(|| {
        (
            u64::from(cmd[1] & !3) | u64::from(cmd[2] & 0xFFFF) << 32,
            cmd[3] & 0xF_FFFF,
        )
    })
}

/// How the counters of a block's instances are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// One value for the agent.
    Agent,
    /// One value per shader engine (over every XCC).
    ShaderEngine,
    /// One value per compute unit.
    ComputeUnit,
}

/// What the counter file needs to know of the counter catalog.
pub trait Catalog: Send + Sync {
    /// The quantity index and dimension of a block's event, `None` when it is not offered.
    fn quantity(&self, block: u32, event: u32) -> Option<(usize, Dimension)>;
    /// The counters a block has per pass; `None` for a block the catalog does not know.
    fn per_pass_limit(&self, block: u32) -> Option<u32>;
    /// A block's name, for messages.
    fn block_name(&self, block: u32) -> String;
    /// Whether a quantity is a time that compute units spend in parallel: its agent or shader
    /// engine value is the largest of its compute units', not their sum.
    fn parallel_time(&self, _quantity: usize) -> bool {
        false
    }
}

/// The agent topology counters are reported over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// XCCs.
    pub xcc: u32,
    /// Shader engines, over every XCC.
    pub shader_engines: u32,
    /// Compute units.
    pub compute_units: u32,
}

impl Topology {
    /// Samples of an event of dimension `d`.
    pub fn samples(&self, d: Dimension) -> u32 {
        match d {
            Dimension::Agent => 1,
            Dimension::ShaderEngine => self.shader_engines.max(1),
            Dimension::ComputeUnit => self.compute_units.max(1),
        }
    }
}

static EXECUTED: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// Counter packets executed so far in this process by every counter file: (start, read, stop).
pub fn packets_executed() -> (u64, u64, u64) {
    (
        EXECUTED[0].load(Ordering::Acquire),
        EXECUTED[1].load(Ordering::Acquire),
        EXECUTED[2].load(Ordering::Acquire),
    )
}

/// Whether the per-block limits are lifted (`VHSA_PMC_LIMITS=off`).
pub fn limits_lifted() -> bool {
    std::env::var(LIMITS_VARIABLE).is_ok_and(|v| v.eq_ignore_ascii_case("off"))
}

/// Checks a set of events against the per-block limits: the first block instance with more
/// events than its block has counters is named in the error.
pub fn check_limits(catalog: &dyn Catalog, events: &[PmcEvent]) -> Result<(), PmcError> {
    let mut per: Vec<((u32, u32), u32)> = Vec::new();
    for e in events {
        match per.iter_mut().find(|(k, _)| *k == (e.block, e.index)) {
            Some((_, n)) => *n += 1,
            None => per.push(((e.block, e.index), 1)),
        }
    }
    for ((block, index), n) in per {
        let limit = catalog.per_pass_limit(block).unwrap_or(0);
        if n > limit {
            return Err(format!(
                "the profile programs {n} counters of block {}[{index}], which has {limit} per pass; split the counters into groups (or set {LIMITS_VARIABLE}=off to lift the hardware limit)",
                catalog.block_name(block)
            ));
        }
    }
    Ok(())
}

struct FileState {
    /// Events programmed by the last start (empty before any).
    programmed: Vec<PmcEvent>,
    running: bool,
    /// Counts per compute unit since the last start.
    per_cu: Vec<Vec<u64>>,
}

/// The counter registers of one agent.
pub struct CounterFile {
    topology: Topology,
    catalog: Box<dyn Catalog>,
    state: Mutex<FileState>,
    /// `state.running`, readable without the lock: a dispatch completing while nothing counts
    /// takes no lock.
    counting: std::sync::atomic::AtomicBool,
}

impl CounterFile {
    /// A counter file of an agent, idle.
    pub fn new(topology: Topology, catalog: Box<dyn Catalog>) -> CounterFile {
        CounterFile {
            topology,
            catalog,
            state: Mutex::new(FileState {
                programmed: Vec::new(),
                running: false,
                per_cu: Vec::new(),
            }),
            counting: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The topology values are reported over.
    pub fn topology(&self) -> Topology {
        self.topology
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FileState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True while counting runs.
    pub fn running(&self) -> bool {
        self.lock().running
    }

    /// Adds a completed dispatch's counts (one slice of quantities per compute unit, in the
    /// emulator's placement) while counting runs.
    pub fn add_dispatch<C: AsRef<[u64]>>(&self, per_cu: &[C]) {
        if !self.counting.load(Ordering::Acquire) {
            return;
        }
        let mut s = self.lock();
        if !s.running {
            return;
        }
        if s.per_cu.len() < per_cu.len() {
            s.per_cu.resize(per_cu.len(), Vec::new());
        }
        for (mine, theirs) in s.per_cu.iter_mut().zip(per_cu) {
            let theirs = theirs.as_ref();
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, v) in mine.iter_mut().zip(theirs) {
                *m += v;
            }
        }
    }

    /// Executes a payload; `output` gives the host view of the output buffer for a read.
    pub fn execute(
        &self,
        p: &Payload,
        output: impl FnOnce(u64, usize) -> Option<*mut u8>,
    ) -> Result<(), PmcError> {
        match p.op {
            Operation::Start => self.start(&p.events)?,
            Operation::Read => self.read(p, output)?,
            Operation::Stop => {
                self.lock().running = false;
                self.counting.store(false, Ordering::Release);
            }
        }
        EXECUTED[p.op as usize - 1].fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    fn check_events(&self, events: &[PmcEvent]) -> Result<Vec<(usize, Dimension)>, PmcError> {
        events
            .iter()
            .map(|e| {
                let (q, d) = self.catalog.quantity(e.block, e.event).ok_or_else(|| {
                    format!(
                        "event {} of block {} is not a counter of this agent",
                        e.event,
                        self.catalog.block_name(e.block)
                    )
                })?;
                let want = self.topology.samples(d);
                if e.samples != want {
                    return Err(format!(
                        "event {} of block {} has {want} samples on this agent, the profile expects {} (register the agent with its real topology)",
                        e.event,
                        self.catalog.block_name(e.block),
                        e.samples
                    ));
                }
                Ok((q, d))
            })
            .collect()
    }

    fn start(&self, events: &[PmcEvent]) -> Result<(), PmcError> {
        self.check_events(events)?;
        if !limits_lifted() {
            check_limits(&*self.catalog, events)?;
        }
        let mut s = self.lock();
        s.programmed = events.to_vec();
        s.per_cu.clear();
        s.running = true;
        self.counting.store(true, Ordering::Release);
        Ok(())
    }

    fn read(
        &self,
        p: &Payload,
        output: impl FnOnce(u64, usize) -> Option<*mut u8>,
    ) -> Result<(), PmcError> {
        let len = output_bytes(&p.events);
        let dst = output(p.output, len).ok_or_else(|| {
            format!(
                "the counter output buffer {:#x} (+{len} bytes) is not memory of this runtime",
                p.output
            )
        })?;
        let values = self.values(p, len).inspect_err(|m| {
            let text = m.as_bytes();
            let n = text.len().min(len - 8);
            let mut bytes = Vec::with_capacity(8 + n);
            bytes.extend(OUTPUT_ERROR_MAGIC.to_le_bytes());
            bytes.extend((n as u32).to_le_bytes());
            bytes.extend(&text[..n]);
            // SAFETY: `output` returned a host view of `len` >= `8 + n` writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        })?;
        let sequence = EXECUTED[Operation::Read as usize - 1].load(Ordering::Acquire) + 1;
        let mut bytes = Vec::with_capacity(len);
        bytes.extend(OUTPUT_MAGIC.to_le_bytes());
        bytes.extend((values.len() as u32).to_le_bytes());
        bytes.extend(sequence.to_le_bytes());
        for v in values {
            bytes.extend(v.to_le_bytes());
        }
        // SAFETY: `output` returned a host view of at least `len` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, len) };
        Ok(())
    }

    /// The values a read of `p` reports, in event and sample order.
    fn values(&self, p: &Payload, len: usize) -> Result<Vec<u64>, PmcError> {
        let slots = self.check_events(&p.events)?;
        let values = {
            let s = self.lock();
            if let Some(e) = p.events.iter().find(|e| !s.programmed.contains(e)) {
                return Err(format!(
                    "the read names event {} of block {}, which no start programmed",
                    e.event,
                    self.catalog.block_name(e.block)
                ));
            }
            let mut values = Vec::with_capacity((len - OUTPUT_HEADER_BYTES) / 8);
            for &(q, d) in &slots {
                for sample in 0..self.topology.samples(d) {
                    values.push(self.sample(&s.per_cu, q, d, sample));
                }
            }
            values
        };
        Ok(values)
    }

    /// One sample of quantity `q`: compute unit `cu` belongs to shader engine
    /// `cu % shader_engines`.
    fn sample(&self, per_cu: &[Vec<u64>], q: usize, d: Dimension, sample: u32) -> u64 {
        let se = self.topology.shader_engines.max(1) as usize;
        let values = per_cu
            .iter()
            .enumerate()
            .filter(|(cu, _)| match d {
                Dimension::Agent => true,
                Dimension::ShaderEngine => cu % se == sample as usize,
                Dimension::ComputeUnit => *cu == sample as usize,
            })
            .map(|(_, c)| c.get(q).copied().unwrap_or(0));
        if self.catalog.parallel_time(q) {
            values.max().unwrap_or(0)
        } else {
            values.sum()
        }
    }
}

/// Parses a written output buffer: the values in event order, or why there are none.
pub fn parse_output(bytes: &[u8], events: &[PmcEvent]) -> Result<Vec<u64>, PmcError> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    if bytes.len() < output_bytes(events) {
        return Err("the output buffer is smaller than the profile needs".into());
    }
    if word(0) == OUTPUT_ERROR_MAGIC {
        let n = (word(4) as usize).min(bytes.len() - 8);
        return Err(format!(
            "the read packet failed on the GPU: {}",
            String::from_utf8_lossy(&bytes[8..8 + n])
        ));
    }
    if word(0) != OUTPUT_MAGIC {
        return Err(
            "the output buffer was never written: the read packet has not executed (submit it after the dispatch and wait for its completion signal)".into(),
        );
    }
    let n = word(4) as usize;
    let want = events.iter().map(|e| e.samples as usize).sum::<usize>();
    if n != want {
        return Err(format!(
            "the output buffer holds {n} samples, the profile has {want}"
        ));
    }
    Ok((0..n)
        .map(|i| {
            let at = OUTPUT_HEADER_BYTES + 8 * i;
            u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
        })
        .collect())
}

/// The shared counter catalog ([`amdgpu_counters`]) of one target.
pub struct TargetCatalog(pub amdgpu_counters::Target);

impl Catalog for TargetCatalog {
    fn quantity(&self, block: u32, event: u32) -> Option<(usize, Dimension)> {
        let b = amdgpu_counters::Block::from_id(block)?;
        let c = amdgpu_counters::by_event(self.0, b, event)?;
        let d = match c.dimension {
            amdgpu_counters::Dimension::Agent => Dimension::Agent,
            amdgpu_counters::Dimension::ShaderEngine => Dimension::ShaderEngine,
            amdgpu_counters::Dimension::ComputeUnit => Dimension::ComputeUnit,
        };
        Some((c.quantity as usize, d))
    }

    fn per_pass_limit(&self, block: u32) -> Option<u32> {
        amdgpu_counters::Block::from_id(block).map(amdgpu_counters::Block::per_pass_limit)
    }

    fn block_name(&self, block: u32) -> String {
        amdgpu_counters::Block::from_id(block)
            .map_or_else(|| format!("#{block}"), |b| b.name().to_string())
    }

    fn parallel_time(&self, quantity: usize) -> bool {
        use amdgpu_counters::Quantity;
        quantity == Quantity::BusyCycles as usize || quantity == Quantity::ElapsedCycles as usize
    }
}

impl Topology {
    /// The topology of a GPU model.
    pub fn of(model: &crate::model::GpuModel) -> Topology {
        Topology {
            xcc: model.xcc,
            shader_engines: model.shader_engines,
            compute_units: model.compute_units,
        }
    }
}

/// The counter file of a GPU model's agent; `None` for a target without counters (only gfx90a
/// and gfx942 run on the emulator).
pub fn counter_file_for(model: &crate::model::GpuModel) -> Option<CounterFile> {
    let target = amdgpu_counters::Target::from_isa_name(model.target)?;
    Some(CounterFile::new(
        Topology::of(model),
        Box::new(TargetCatalog(target)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake;
    impl Catalog for Fake {
        fn quantity(&self, block: u32, event: u32) -> Option<(usize, Dimension)> {
            match (block, event) {
                (6, 4) => Some((0, Dimension::ShaderEngine)),
                (6, 25) => Some((1, Dimension::ShaderEngine)),
                (5, 49) => Some((2, Dimension::Agent)),
                _ => None,
            }
        }
        fn per_pass_limit(&self, block: u32) -> Option<u32> {
            match block {
                6 => Some(2),
                5 => Some(6),
                _ => None,
            }
        }
        fn block_name(&self, block: u32) -> String {
            format!("B{block}")
        }
    }

    fn ev(block: u32, event: u32, samples: u32) -> PmcEvent {
        PmcEvent {
            block,
            index: 0,
            event,
            flags: 0,
            samples,
        }
    }

    fn file() -> CounterFile {
        CounterFile::new(
            Topology {
                xcc: 1,
                shader_engines: 2,
                compute_units: 4,
            },
            Box::new(Fake),
        )
    }

    #[test]
    fn payloads_round_trip_and_foreign_pm4_is_not_one() {
        let p = Payload {
            op: Operation::Read,
            output: 0x1234_5678_9abc,
            events: vec![ev(6, 4, 2), ev(5, 49, 1)],
        };
        let d = p.encode();
        assert_eq!(d.len(), Payload::encoded_dwords(2));
        assert_eq!(Payload::decode(&d).unwrap(), p);
        // A register write (SET_UCONFIG_REG) is not a payload.
        assert!(!Payload::is_payload(&[0xC001_7900, 0x30, 1]));
        assert!(Payload::decode(&d[..5]).is_err());
        let jump = indirect_buffer(0x7f00_1234_5670, d.len() as u32);
        assert_eq!(
            parse_indirect_buffer(jump),
            Some((0x7f00_1234_5670, d.len() as u32))
        );
    }

    #[test]
    fn start_read_stop_count_only_while_running_and_sum_by_shader_engine() {
        let f = file();
        let events = vec![ev(6, 4, 2), ev(5, 49, 1)];
        let cu = |a: u64, b: u64, c: u64| vec![a, b, c];
        f.add_dispatch(&[cu(100, 0, 0)]);
        let start = Payload {
            op: Operation::Start,
            output: 0,
            events: events.clone(),
        };
        f.execute(&start, |_, _| None).unwrap();
        f.add_dispatch(&[cu(1, 0, 1), cu(2, 0, 0), cu(4, 0, 0)]);
        let mut out = vec![0u8; output_bytes(&events)];
        let read = Payload {
            op: Operation::Read,
            output: out.as_mut_ptr() as u64,
            events: events.clone(),
        };
        let ptr = out.as_mut_ptr();
        f.execute(&read, |_, _| Some(ptr)).unwrap();
        // SE 0 = CUs 0 and 2, SE 1 = CU 1; the agent value sums every CU.
        assert_eq!(parse_output(&out, &events).unwrap(), vec![5, 2, 1]);
        f.execute(
            &Payload {
                op: Operation::Stop,
                ..start.clone()
            },
            |_, _| None,
        )
        .unwrap();
        f.add_dispatch(&[cu(50, 0, 0)]);
        f.execute(&read, |_, _| Some(ptr)).unwrap();
        assert_eq!(parse_output(&out, &events).unwrap(), vec![5, 2, 1]);
    }

    #[test]
    fn refusals_name_the_block_and_the_reason() {
        let f = file();
        let over = Payload {
            op: Operation::Start,
            output: 0,
            events: vec![ev(6, 4, 2), ev(6, 25, 2), ev(6, 4, 2)],
        };
        let e = f.execute(&over, |_, _| None).unwrap_err();
        assert!(
            e.contains("3 counters of block B6[0]") && e.contains("2 per pass"),
            "{e}"
        );
        let unknown = Payload {
            events: vec![ev(12, 3, 1)],
            ..over.clone()
        };
        assert!(
            f.execute(&unknown, |_, _| None)
                .unwrap_err()
                .contains("not a counter")
        );
        let wrong_samples = Payload {
            events: vec![ev(6, 4, 8)],
            ..over.clone()
        };
        assert!(
            f.execute(&wrong_samples, |_, _| None)
                .unwrap_err()
                .contains("samples")
        );
        // A read of events no start programmed reports why in the output buffer.
        let f = file();
        let events = vec![ev(6, 25, 2)];
        let mut out = vec![0u8; output_bytes(&events)];
        let ptr = out.as_mut_ptr();
        let read = Payload {
            op: Operation::Read,
            output: ptr as u64,
            events: events.clone(),
        };
        assert!(f.execute(&read, |_, _| Some(ptr)).is_err());
        let e = parse_output(&out, &events).unwrap_err();
        assert!(e.contains("no start programmed"), "{e}");
        let unwritten = vec![0u8; MIN_OUTPUT_BYTES];
        assert!(
            parse_output(&unwritten, &[ev(6, 4, 2)])
                .unwrap_err()
                .contains("never written")
        );
    }
}
