//! A counter profile on a virtual GPU: its events with their samples, the command buffer holding
//! the start, read and stop payloads, the packets that jump to them, and the results a read
//! wrote.

use crate::agents::Agent;
use crate::error::Failure;
use amdgpu_counters::{Block, Dimension};
use hsa_abi::aqlprofile::{AQL_PM4_IB_DW_COUNT_REMAIN, AQL_PM4_IB_FORMAT, AqlPm4IbPacket};
use hsa_abi::ffi::{HSA_PACKET_TYPE_VENDOR_SPECIFIC, hsa_ext_amd_aql_pm4_packet_t};
use std::ffi::CStr;
use vgpu::pmc::{Operation, Payload, PmcEvent};

/// The counters per pass that `BLOCK_COUNTERS` reports when the limits are lifted.
pub(crate) const LIFTED_BLOCK_COUNTERS: u32 = 1024;

/// The counter a block's event selects on an agent, when it offers it (instance 0 only: a
/// block's instances are the samples of its events).
pub(crate) fn counter(
    agent: &Agent,
    block: u32,
    index: u32,
    event: u32,
) -> Option<&'static amdgpu_counters::Counter> {
    if index != 0 {
        return None;
    }
    amdgpu_counters::by_event(agent.target, Block::from_id(block)?, event)
}

/// The samples of one event on an agent.
pub(crate) fn samples(agent: &Agent, d: Dimension) -> u32 {
    agent.topology.samples(match d {
        Dimension::Agent => vgpu::pmc::Dimension::Agent,
        Dimension::ShaderEngine => vgpu::pmc::Dimension::ShaderEngine,
        Dimension::ComputeUnit => vgpu::pmc::Dimension::ComputeUnit,
    })
}

/// The events of a profile, checked against the agent (each offered, the blocks within their
/// per-pass limits unless `VHSA_PMC_LIMITS=off`), with their samples.
pub(crate) fn resolve(
    agent: &Agent,
    events: impl Iterator<Item = (u32, u32, u32, u32)>,
) -> Result<Vec<PmcEvent>, Failure> {
    let mut out = Vec::new();
    for (block, index, event, flags) in events {
        let c = counter(agent, block, index, event).ok_or_else(|| {
            Failure::invalid(format!(
                "event {event} of block {}[{index}] is not a counter of {}",
                block_name(block),
                agent.target.name()
            ))
        })?;
        out.push(PmcEvent {
            block,
            index,
            event,
            flags,
            samples: samples(agent, c.dimension),
        });
    }
    if out.is_empty() {
        return Err(Failure::invalid("the profile has no events"));
    }
    if !vgpu::pmc::limits_lifted() {
        vgpu::pmc::check_limits(&vgpu::pmc::TargetCatalog(agent.target), &out)
            .map_err(Failure::error)?;
    }
    Ok(out)
}

/// A block's name for messages.
pub(crate) fn block_name(block: u32) -> String {
    Block::from_id(block).map_or_else(|| format!("#{block}"), |b| b.name().to_string())
}

/// Counters per pass of a block (`BLOCK_COUNTERS`).
pub(crate) fn block_counters(block: u32) -> Result<u32, Failure> {
    let b = Block::from_id(block)
        .ok_or_else(|| Failure::invalid(format!("block {block} has no counters here")))?;
    Ok(if vgpu::pmc::limits_lifted() {
        LIFTED_BLOCK_COUNTERS
    } else {
        b.per_pass_limit()
    })
}

/// A block's id and instance count by name (`BLOCK_ID`): one instance, whose events report one
/// sample per instance of their dimension.
pub(crate) fn block_id(name: &CStr) -> Result<(u32, u32), Failure> {
    let name = name.to_string_lossy();
    let b = Block::from_name(&name)
        .ok_or_else(|| Failure::invalid(format!("block `{name}` has no counters here")))?;
    Ok((b.id(), 1))
}

/// Where the three payloads sit in the command buffer (byte offsets) and the buffer sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub start: usize,
    pub read: usize,
    pub stop: usize,
    pub command_bytes: usize,
    pub output_bytes: usize,
}

impl Layout {
    pub fn of(events: &[PmcEvent]) -> Layout {
        // Each payload is padded to 64 bytes.
        let one = (Payload::encoded_dwords(events.len()) * 4).next_multiple_of(64);
        Layout {
            start: 0,
            read: one,
            stop: 2 * one,
            command_bytes: 3 * one,
            output_bytes: vgpu::pmc::output_bytes(events).next_multiple_of(64),
        }
    }

    /// The byte offset of an operation's payload.
    pub fn offset(&self, op: Operation) -> usize {
        match op {
            Operation::Start => self.start,
            Operation::Read => self.read,
            Operation::Stop => self.stop,
        }
    }
}

/// The payload of one operation, as bytes for the command buffer.
pub(crate) fn payload_bytes(op: Operation, events: &[PmcEvent], output: u64) -> Vec<u8> {
    let p = Payload {
        op,
        output: if op == Operation::Read { output } else { 0 },
        events: events.to_vec(),
    };
    p.encode().iter().flat_map(|d| d.to_le_bytes()).collect()
}

/// A counter packet: vendor-specific, format 1, one `INDIRECT_BUFFER` to `dwords` dwords at
/// `addr`. The caller sets the header bits it wants (barrier, fences) and the completion signal.
pub(crate) fn packet(addr: u64, dwords: usize) -> hsa_ext_amd_aql_pm4_packet_t {
    AqlPm4IbPacket {
        header: HSA_PACKET_TYPE_VENDOR_SPECIFIC as u16,
        pm4_ib_format: AQL_PM4_IB_FORMAT,
        pm4_ib_command: vgpu::pmc::indirect_buffer(addr, dwords as u32),
        dw_count_remain: AQL_PM4_IB_DW_COUNT_REMAIN,
        reserved: [0; 8],
        completion_signal: Default::default(),
    }
    .to_pm4_packet()
}

/// The results a read wrote into `output`: (event, sample, value) in event order.
pub(crate) fn results(
    output: &[u8],
    events: &[PmcEvent],
) -> Result<Vec<(PmcEvent, u32, u64)>, Failure> {
    let values = vgpu::pmc::parse_output(output, events).map_err(Failure::error)?;
    let mut it = values.into_iter();
    let mut out = Vec::new();
    for e in events {
        for s in 0..e.samples {
            out.push((*e, s, it.next().unwrap_or(0)));
        }
    }
    Ok(out)
}

/// Coordinate dimensions (`iterate_event_ids`): id and name.
pub(crate) const DIMENSIONS: [(i32, &CStr); 4] =
    [(0, c"XCD"), (1, c"SE"), (2, c"CU"), (3, c"INSTANCE")];

/// The coordinates of one sample of an event: (dimension id, extent, coordinate, name).
pub(crate) fn coordinates(
    agent: &Agent,
    d: Dimension,
    sample: u32,
) -> Vec<(i32, i32, i32, &'static CStr)> {
    let t = agent.topology;
    let se_per_xcc = (t.shader_engines / t.xcc).max(1);
    let dim =
        |k: usize, extent: u32, c: u32| (DIMENSIONS[k].0, extent as i32, c as i32, DIMENSIONS[k].1);
    match d {
        Dimension::Agent => vec![dim(3, 1, 0)],
        Dimension::ShaderEngine => vec![
            dim(0, t.xcc, sample / se_per_xcc),
            dim(1, se_per_xcc, sample % se_per_xcc),
        ],
        Dimension::ComputeUnit => {
            // Compute unit `cu` belongs to shader engine `cu % shader_engines`.
            let se = sample % t.shader_engines.max(1);
            vec![
                dim(0, t.xcc, se / se_per_xcc),
                dim(1, se_per_xcc, se % se_per_xcc),
                dim(2, t.compute_units, sample),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gfx942() -> Agent {
        Agent::new("gfx942", 8, 32, 304).unwrap()
    }

    #[test]
    fn shader_engine_samples_map_to_xcc_and_engine() {
        let a = gfx942();
        assert_eq!(samples(&a, Dimension::ShaderEngine), 32);
        assert_eq!(samples(&a, Dimension::Agent), 1);
        // Sample 13: XCC 3 (4 engines per XCC), engine 1 within it.
        let c = coordinates(&a, Dimension::ShaderEngine, 13);
        assert_eq!(c[0].0, 0);
        assert_eq!((c[0].1, c[0].2), (8, 3));
        assert_eq!((c[1].1, c[1].2), (4, 1));
        // Compute unit 37 is in engine 37 % 32 = 5: XCC 1, engine 1.
        let c = coordinates(&a, Dimension::ComputeUnit, 37);
        assert_eq!(c.iter().map(|x| x.2).collect::<Vec<_>>(), vec![1, 1, 37]);
    }

    #[test]
    fn events_resolve_with_their_samples_and_refuse_what_is_not_offered() {
        let a = gfx942();
        let sq = Block::Sq.id();
        let e = resolve(&a, [(sq, 0, 4, 0)].into_iter()).unwrap();
        assert_eq!(e[0].samples, 32);
        let err = resolve(&a, [(sq, 1, 4, 0)].into_iter()).unwrap_err();
        assert!(err.message.contains("SQ[1]"), "{}", err.message);
        assert!(resolve(&a, std::iter::empty()).is_err());
        assert_eq!(block_id(c"SQ").unwrap(), (sq, 1));
        assert!(block_id(c"NOT_A_BLOCK").is_err());
    }

    #[test]
    fn the_three_payloads_sit_apart_in_the_command_buffer() {
        let a = gfx942();
        let e = resolve(
            &a,
            [(Block::Sq.id(), 0, 4, 0), (Block::Sq.id(), 0, 25, 0)].into_iter(),
        )
        .unwrap();
        let l = Layout::of(&e);
        let one = payload_bytes(Operation::Start, &e, 0).len();
        assert!(l.read >= one && l.stop >= l.read + one && l.command_bytes >= l.stop + one);
        assert_eq!(l.output_bytes, (16 + 2 * 32 * 8usize).next_multiple_of(64));
        let p = AqlPm4IbPacket::from_pm4_packet(&packet(0x1000, one / 4));
        assert_eq!(p.pm4_ib_format, AQL_PM4_IB_FORMAT);
        assert_eq!(
            vgpu::pmc::parse_indirect_buffer(p.pm4_ib_command),
            Some((0x1000, (one / 4) as u32))
        );
    }
}
