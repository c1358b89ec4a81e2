//! The counters and derived metrics of each target.
//!
//! Event ids are the hardware select values (rocprofiler-sdk's counter definitions give the
//! same ids); they differ between gfx90a and gfx942 for most SQ and TA counters. The catalog
//! holds the counters an instruction-set emulator can give: exactly (geometry and the
//! instruction stream) or from a cost model (cycles). Cache counters are not offered: an
//! emulator without a cache model would have to invent them.

use crate::block::Block;
use crate::expression::Expr;
use crate::quantity::Quantity;
use crate::target::Target;
use std::sync::LazyLock;

/// How far a counter's value can be trusted on an emulated GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exactness {
    /// Determined by the launch geometry and the instruction stream: the value hardware gives
    /// under the documented category rules.
    Exact,
    /// From the emulator's cost model (cycles): a model, never comparable with hardware.
    Model,
}

impl Exactness {
    /// `exact` or `model`, as outputs write it.
    pub fn label(self) -> &'static str {
        match self {
            Exactness::Exact => "exact",
            Exactness::Model => "model",
        }
    }
}

/// Over which instances of its block a counter has one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dimension {
    /// One value for the agent.
    Agent,
    /// One value per shader engine.
    ShaderEngine,
    /// One value per compute unit.
    ComputeUnit,
}

impl Dimension {
    /// The rocprofiler dimension name (`DIMENSION_SHADER_ENGINE`).
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Agent => "DIMENSION_AGENT",
            Dimension::ShaderEngine => "DIMENSION_SHADER_ENGINE",
            Dimension::ComputeUnit => "DIMENSION_INSTANCE",
        }
    }
}

/// A hardware counter of one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Name (`SQ_WAVES`).
    pub name: &'static str,
    /// Block.
    pub block: Block,
    /// Event id (the hardware select value; kreplay's own counters use ids from 4096 up).
    pub event: u32,
    /// What it counts.
    pub description: &'static str,
    /// Exact or model.
    pub exactness: Exactness,
    /// The emulator quantity behind it.
    pub quantity: Quantity,
    /// Over which instances it has values.
    pub dimension: Dimension,
    /// A counter real hardware has (false for kreplay's own emulator counters).
    pub hardware: bool,
}

/// A derived metric: an expression over counters, evaluated per pass.
#[derive(Clone, Debug)]
pub struct Derived {
    /// Name (`VALUInsts`).
    pub name: &'static str,
    /// The expression text.
    pub expression: &'static str,
    /// What it measures.
    pub description: &'static str,
    /// The parsed expression.
    pub expr: Expr,
}

struct Row {
    name: &'static str,
    block: Block,
    gfx90a: Option<u32>,
    gfx942: Option<u32>,
    quantity: Quantity,
    exactness: Exactness,
    dimension: Dimension,
    description: &'static str,
}

const fn row(
    name: &'static str,
    block: Block,
    events: (Option<u32>, Option<u32>),
    quantity: Quantity,
    exactness: Exactness,
    description: &'static str,
) -> Row {
    let dimension = match block {
        Block::Grbm => Dimension::Agent,
        Block::Ta | Block::Td | Block::Tcp => Dimension::ComputeUnit,
        _ => Dimension::ShaderEngine,
    };
    Row {
        name,
        block,
        gfx90a: events.0,
        gfx942: events.1,
        quantity,
        exactness,
        dimension,
        description,
    }
}

const fn both(id: u32) -> (Option<u32>, Option<u32>) {
    (Some(id), Some(id))
}

const fn each(gfx90a: u32, gfx942: u32) -> (Option<u32>, Option<u32>) {
    (Some(gfx90a), Some(gfx942))
}

use Block::{Grbm, Spi, Sq, Ta};
use Exactness::{Exact, Model};
use Quantity as Q;

const EMULATOR_EVENTS: u32 = 4096;

#[rustfmt::skip]
static ROWS: &[Row] = &[
    row("GRBM_COUNT", Grbm, both(0), Q::ElapsedCycles, Model, "GPU clock cycles between the start and the read of the counters."),
    row("GRBM_GUI_ACTIVE", Grbm, both(2), Q::BusyCycles, Model, "GPU clock cycles the graphics/compute engine was busy."),
    row("SQ_WAVES", Sq, both(4), Q::Waves, Exact, "Waves launched, per shader engine; their sum is the dispatch's wave count."),
    row("SQ_WAVES_EQ_64", Sq, both(6), Q::Waves64, Exact, "Waves launched with all 64 lanes active."),
    row("SQ_WAVE_CYCLES", Sq, each(74, 79), Q::WaveCycles, Model, "Cycles waves were resident, summed over waves."),
    row("SQ_INSTS", Sq, both(25), Q::Insts, Exact, "Instructions issued, every kind."),
    row("SQ_INSTS_VALU", Sq, both(26), Q::InstsValu, Exact, "Vector ALU instructions issued, MFMA included."),
    row("SQ_INSTS_VALU_ADD_F16", Sq, both(27), Q::ValuAddF16, Exact, "Vector add/subtract instructions on half precision."),
    row("SQ_INSTS_VALU_MUL_F16", Sq, both(28), Q::ValuMulF16, Exact, "Vector multiply instructions on half precision."),
    row("SQ_INSTS_VALU_FMA_F16", Sq, both(29), Q::ValuFmaF16, Exact, "Vector multiply-add instructions on half precision."),
    row("SQ_INSTS_VALU_TRANS_F16", Sq, both(30), Q::ValuTransF16, Exact, "Vector transcendental instructions on half precision."),
    row("SQ_INSTS_VALU_ADD_F32", Sq, both(31), Q::ValuAddF32, Exact, "Vector add/subtract instructions on single precision."),
    row("SQ_INSTS_VALU_MUL_F32", Sq, both(32), Q::ValuMulF32, Exact, "Vector multiply instructions on single precision."),
    row("SQ_INSTS_VALU_FMA_F32", Sq, both(33), Q::ValuFmaF32, Exact, "Vector multiply-add instructions on single precision."),
    row("SQ_INSTS_VALU_TRANS_F32", Sq, both(34), Q::ValuTransF32, Exact, "Vector transcendental instructions on single precision."),
    row("SQ_INSTS_VALU_ADD_F64", Sq, both(35), Q::ValuAddF64, Exact, "Vector add/subtract instructions on double precision."),
    row("SQ_INSTS_VALU_MUL_F64", Sq, both(36), Q::ValuMulF64, Exact, "Vector multiply instructions on double precision."),
    row("SQ_INSTS_VALU_FMA_F64", Sq, both(37), Q::ValuFmaF64, Exact, "Vector fused multiply-add instructions on double precision."),
    row("SQ_INSTS_VALU_TRANS_F64", Sq, both(38), Q::ValuTransF64, Exact, "Vector transcendental instructions on double precision."),
    row("SQ_INSTS_VALU_INT32", Sq, both(39), Q::ValuInt32, Exact, "Vector 32-bit integer instructions."),
    row("SQ_INSTS_VALU_INT64", Sq, both(40), Q::ValuInt64, Exact, "Vector 64-bit integer instructions."),
    row("SQ_INSTS_VALU_CVT", Sq, both(41), Q::ValuCvt, Exact, "Vector conversion instructions."),
    row("SQ_INSTS_VALU_MFMA_I8", Sq, both(42), Q::MfmaI8, Exact, "Matrix (MFMA) instructions on 8-bit integers."),
    row("SQ_INSTS_VALU_MFMA_F16", Sq, both(43), Q::MfmaF16, Exact, "Matrix (MFMA) instructions on half precision."),
    row("SQ_INSTS_VALU_MFMA_BF16", Sq, both(44), Q::MfmaBf16, Exact, "Matrix (MFMA) instructions on bfloat16."),
    row("SQ_INSTS_VALU_MFMA_F32", Sq, both(45), Q::MfmaF32, Exact, "Matrix (MFMA) instructions on single precision."),
    row("SQ_INSTS_VALU_MFMA_F64", Sq, both(46), Q::MfmaF64, Exact, "Matrix (MFMA) instructions on double precision."),
    row("SQ_INSTS_VALU_MFMA_MOPS_I8", Sq, each(47, 49), Q::MfmaMopsI8, Exact, "Matrix math operations on 8-bit integers, in units of 512."),
    row("SQ_INSTS_VALU_MFMA_MOPS_F16", Sq, each(48, 50), Q::MfmaMopsF16, Exact, "Matrix math operations on half precision, in units of 512."),
    row("SQ_INSTS_VALU_MFMA_MOPS_BF16", Sq, each(49, 51), Q::MfmaMopsBf16, Exact, "Matrix math operations on bfloat16, in units of 512."),
    row("SQ_INSTS_VALU_MFMA_MOPS_F32", Sq, each(50, 52), Q::MfmaMopsF32, Exact, "Matrix math operations on single precision, in units of 512."),
    row("SQ_INSTS_VALU_MFMA_MOPS_F64", Sq, each(51, 53), Q::MfmaMopsF64, Exact, "Matrix math operations on double precision, in units of 512."),
    row("SQ_INSTS_MFMA", Sq, each(52, 56), Q::InstsMfma, Exact, "Matrix (MFMA) instructions issued, every type."),
    row("SQ_INSTS_VMEM_WR", Sq, each(53, 57), Q::InstsVmemWr, Exact, "Vector memory write instructions (buffer, global, flat, scratch)."),
    row("SQ_INSTS_VMEM_RD", Sq, each(54, 58), Q::InstsVmemRd, Exact, "Vector memory read instructions (buffer, global, flat, scratch)."),
    row("SQ_INSTS_VMEM", Sq, each(55, 59), Q::InstsVmem, Exact, "Vector memory instructions."),
    row("SQ_INSTS_SALU", Sq, each(56, 60), Q::InstsSalu, Exact, "Scalar ALU instructions."),
    row("SQ_INSTS_SMEM", Sq, each(57, 61), Q::InstsSmem, Exact, "Scalar memory instructions."),
    row("SQ_INSTS_FLAT", Sq, each(58, 62), Q::InstsFlat, Exact, "FLAT-encoded instructions (flat, global, scratch)."),
    row("SQ_INSTS_FLAT_LDS_ONLY", Sq, (Some(59), None), Q::InstsFlatLdsOnly, Exact, "FLAT instructions that only reached LDS."),
    row("SQ_INSTS_LDS", Sq, each(60, 65), Q::InstsLds, Exact, "LDS instructions, FLAT instructions reaching LDS included."),
    row("SQ_INSTS_GDS", Sq, each(61, 66), Q::InstsGds, Exact, "GDS instructions."),
    row("SQ_INSTS_BRANCH", Sq, each(64, 69), Q::InstsBranch, Exact, "Branch instructions."),
    row("SQ_INSTS_SENDMSG", Sq, each(65, 70), Q::InstsSendmsg, Exact, "Message (s_sendmsg) instructions."),
    row("SPI_CSN_WAVE", Spi, both(52), Q::Waves, Exact, "Compute waves the shader processor input launched."),
    row("SPI_CSN_NUM_THREADGROUPS", Spi, both(49), Q::Workgroups, Exact, "Compute work-groups the shader processor input launched."),
    row("TA_FLAT_READ_WAVEFRONTS", Ta, each(101, 52), Q::FlatReadWaves, Exact, "Flat and global read instructions the address unit processed."),
    row("TA_FLAT_WRITE_WAVEFRONTS", Ta, each(102, 53), Q::FlatWriteWaves, Exact, "Flat and global write instructions the address unit processed."),
    row("TA_BUFFER_READ_WAVEFRONTS", Ta, each(45, 33), Q::BufferReadWaves, Exact, "Buffer read instructions the address unit processed."),
    row("TA_BUFFER_WRITE_WAVEFRONTS", Ta, each(46, 34), Q::BufferWriteWaves, Exact, "Buffer write instructions the address unit processed."),
    row("KREPLAY_BYTES_READ", Sq, both(EMULATOR_EVENTS), Q::BytesRead, Exact, "kreplay's own: bytes that active lanes' vector memory instructions read (not a hardware counter)."),
    row("KREPLAY_BYTES_WRITTEN", Sq, both(EMULATOR_EVENTS + 1), Q::BytesWritten, Exact, "kreplay's own: bytes that active lanes' vector memory instructions wrote (not a hardware counter)."),
    row("KREPLAY_BYTES_LDS", Sq, both(EMULATOR_EVENTS + 2), Q::BytesLds, Exact, "kreplay's own: bytes that active lanes' LDS instructions read or wrote (not a hardware counter)."),
];

#[rustfmt::skip]
static DERIVED: &[(&str, &str, &str)] = &[
    ("Wavefronts", "reduce(SQ_WAVES,sum)", "Waves of the dispatch."),
    ("VALUInsts", "reduce(SQ_INSTS_VALU,sum)/reduce(SQ_WAVES,sum)", "Vector ALU instructions per wave."),
    ("SALUInsts", "reduce(SQ_INSTS_SALU,sum)/reduce(SQ_WAVES,sum)", "Scalar ALU instructions per wave."),
    ("SFetchInsts", "reduce(SQ_INSTS_SMEM,sum)/reduce(SQ_WAVES,sum)", "Scalar memory instructions per wave."),
    ("VFetchInsts", "(reduce(SQ_INSTS_VMEM_RD,sum)-reduce(TA_FLAT_READ_WAVEFRONTS,sum))/reduce(SQ_WAVES,sum)", "Vector memory reads that are not flat/global, per wave."),
    ("VWriteInsts", "(reduce(SQ_INSTS_VMEM_WR,sum)-reduce(TA_FLAT_WRITE_WAVEFRONTS,sum))/reduce(SQ_WAVES,sum)", "Vector memory writes that are not flat/global, per wave."),
    ("FlatVMemInsts", "(reduce(SQ_INSTS_FLAT,sum)-reduce(SQ_INSTS_FLAT_LDS_ONLY,sum))/reduce(SQ_WAVES,sum)", "FLAT instructions reaching memory, per wave (gfx90a)."),
    ("FlatLDSInsts", "reduce(SQ_INSTS_FLAT_LDS_ONLY,sum)/reduce(SQ_WAVES,sum)", "FLAT instructions reaching only LDS, per wave (gfx90a)."),
    ("LDSInsts", "(reduce(SQ_INSTS_LDS,sum)-reduce(SQ_INSTS_FLAT_LDS_ONLY,sum))/reduce(SQ_WAVES,sum)", "LDS instructions per wave, FLAT-to-LDS excluded (gfx90a)."),
    ("GDSInsts", "reduce(SQ_INSTS_GDS,sum)/reduce(SQ_WAVES,sum)", "GDS instructions per wave."),
    ("GPUBusy", "100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)", "Percentage of the time the GPU was busy (model)."),
    ("MfmaFlops", "(SQ_INSTS_VALU_MFMA_MOPS_F16+SQ_INSTS_VALU_MFMA_MOPS_BF16+SQ_INSTS_VALU_MFMA_MOPS_F32+SQ_INSTS_VALU_MFMA_MOPS_F64)*512", "Floating-point matrix operations."),
    ("TOTAL_16_OPS", "(SQ_INSTS_VALU_FMA_F16*2+SQ_INSTS_VALU_ADD_F16+SQ_INSTS_VALU_MUL_F16+SQ_INSTS_VALU_TRANS_F16)*64+(SQ_INSTS_VALU_MFMA_MOPS_F16+SQ_INSTS_VALU_MFMA_MOPS_BF16)*512", "16-bit floating-point operations, vector and matrix."),
    ("TOTAL_32_OPS", "(SQ_INSTS_VALU_FMA_F32*2+SQ_INSTS_VALU_INT32+SQ_INSTS_VALU_ADD_F32+SQ_INSTS_VALU_MUL_F32+SQ_INSTS_VALU_TRANS_F32)*64+SQ_INSTS_VALU_MFMA_MOPS_F32*512", "32-bit operations, vector and matrix."),
    ("TOTAL_64_OPS", "(SQ_INSTS_VALU_FMA_F64*2+SQ_INSTS_VALU_INT64+SQ_INSTS_VALU_ADD_F64+SQ_INSTS_VALU_MUL_F64)*64+SQ_INSTS_VALU_MFMA_MOPS_F64*512", "64-bit operations, vector and matrix."),
    ("ValuIops", "(SQ_INSTS_VALU_INT32+SQ_INSTS_VALU_INT64)*64", "Vector integer operations."),
];

fn build(target: Target) -> Vec<Counter> {
    ROWS.iter()
        .filter_map(|r| {
            let event = match target {
                Target::Gfx90a => r.gfx90a,
                Target::Gfx942 => r.gfx942,
            }?;
            Some(Counter {
                name: r.name,
                block: r.block,
                event,
                description: r.description,
                exactness: r.exactness,
                quantity: r.quantity,
                dimension: r.dimension,
                hardware: event < EMULATOR_EVENTS,
            })
        })
        .collect()
}

fn build_derived(target: Target) -> Vec<Derived> {
    DERIVED
        .iter()
        .filter_map(|&(name, expression, description)| {
            let expr = Expr::parse(expression).ok()?;
            let offered = expr.names().iter().all(|n| find(target, n).is_some());
            offered.then_some(Derived {
                name,
                expression,
                description,
                expr,
            })
        })
        .collect()
}

static COUNTERS: LazyLock<[Vec<Counter>; 2]> =
    LazyLock::new(|| [build(Target::Gfx90a), build(Target::Gfx942)]);

static DERIVED_METRICS: LazyLock<[Vec<Derived>; 2]> =
    LazyLock::new(|| [build_derived(Target::Gfx90a), build_derived(Target::Gfx942)]);

fn slot(target: Target) -> usize {
    match target {
        Target::Gfx90a => 0,
        Target::Gfx942 => 1,
    }
}

/// The hardware counters a target offers, in catalog order.
pub fn counters(target: Target) -> &'static [Counter] {
    &COUNTERS[slot(target)]
}

/// The derived metrics a target offers (those whose every input it offers).
pub fn derived(target: Target) -> &'static [Derived] {
    &DERIVED_METRICS[slot(target)]
}

/// A counter by name (case-sensitive, as rocprofv3).
pub fn find(target: Target, name: &str) -> Option<&'static Counter> {
    counters(target).iter().find(|c| c.name == name)
}

/// A derived metric by name.
pub fn find_derived(target: Target, name: &str) -> Option<&'static Derived> {
    derived(target).iter().find(|d| d.name == name)
}

/// The counter a `(block, event)` pair selects on a target.
pub fn by_event(target: Target, block: Block, event: u32) -> Option<&'static Counter> {
    counters(target)
        .iter()
        .find(|c| c.block == block && c.event == event)
}

impl Derived {
    /// Exact when every input is exact.
    pub fn exactness(&self, target: Target) -> Exactness {
        let model = self
            .expr
            .names()
            .iter()
            .any(|n| find(target, n).is_none_or(|c| c.exactness == Exactness::Model));
        if model {
            Exactness::Model
        } else {
            Exactness::Exact
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_are_per_target() {
        assert_eq!(
            find(Target::Gfx90a, "SQ_INSTS_SALU").map(|c| c.event),
            Some(56)
        );
        assert_eq!(
            find(Target::Gfx942, "SQ_INSTS_SALU").map(|c| c.event),
            Some(60)
        );
        assert!(find(Target::Gfx942, "SQ_INSTS_FLAT_LDS_ONLY").is_none());
        assert_eq!(
            by_event(Target::Gfx942, Block::Sq, 4).map(|c| c.name),
            Some("SQ_WAVES")
        );
    }

    #[test]
    fn no_two_counters_share_a_name_or_an_event() {
        for t in Target::ALL {
            let cs = counters(t);
            for (i, a) in cs.iter().enumerate() {
                for b in &cs[i + 1..] {
                    assert_ne!(a.name, b.name);
                    assert!(
                        (a.block, a.event) != (b.block, b.event),
                        "{} and {} on {t}",
                        a.name,
                        b.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_derived_metric_parses_and_targets_drop_what_they_lack() {
        for &(name, text, _) in DERIVED {
            assert!(Expr::parse(text).is_ok(), "{name}");
        }
        assert!(find_derived(Target::Gfx90a, "LDSInsts").is_some());
        assert!(
            find_derived(Target::Gfx942, "LDSInsts").is_none(),
            "gfx942 has no FLAT_LDS_ONLY"
        );
        assert_eq!(
            find_derived(Target::Gfx90a, "GPUBusy").map(|d| d.exactness(Target::Gfx90a)),
            Some(Exactness::Model)
        );
        assert_eq!(
            find_derived(Target::Gfx90a, "VALUInsts").map(|d| d.exactness(Target::Gfx90a)),
            Some(Exactness::Exact)
        );
    }
}
