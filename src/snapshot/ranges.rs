//! Ranges a replay client takes out of snapshots or adds to them
//! (`kreplay_snapshot_exclude_range`, `kreplay_snapshot_include_range`).
//!
//! An excluded range is the client's own memory: no byte of it is captured or restored, whatever
//! region it falls in. An included range is memory the tool cannot see (fine-grained or host
//! memory, memory from another allocator) that replays on its agent must restore; the client
//! keeps it mapped while it is included. Rules apply to the snapshots taken after the call.

use super::{Region, RegionKind};
use crate::sync::Mutex;
use std::ops::Range;

/// Most rules of each kind a client may hold at once.
pub const MAX_CLIENT_RANGES: usize = 4096;

/// The client's rules, process-wide.
pub static CLIENT_RANGES: Mutex<ClientRanges> = Mutex::new(ClientRanges::new());

/// Why a rule was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// The range is empty, starts at address 0 or wraps around the address space.
    #[error(
        "the range is empty, starts at NULL or wraps around the address space; pass the start and byte size of mapped memory"
    )]
    Invalid,
    /// The agent handle is 0.
    #[error(
        "the agent handle is 0; pass the hsa_agent_t.handle of the agent whose replays must restore the range"
    )]
    NoAgent,
    /// Too many rules of this kind.
    #[error("{MAX_CLIENT_RANGES} ranges of this kind are held already; remove some first")]
    TooMany,
    /// Removal of a rule that was never added.
    #[error("no range was added with exactly these arguments")]
    NotFound,
}

/// Excluded and included ranges.
#[derive(Debug, Default)]
pub struct ClientRanges {
    excluded: Vec<Range<usize>>,
    included: Vec<(u64, Range<usize>)>,
}

fn range(base: usize, size: usize) -> Result<Range<usize>, RangeError> {
    if base == 0 || size == 0 {
        return Err(RangeError::Invalid);
    }
    let end = base.checked_add(size).ok_or(RangeError::Invalid)?;
    Ok(base..end)
}

impl ClientRanges {
    /// No rules.
    pub const fn new() -> Self {
        Self {
            excluded: Vec::new(),
            included: Vec::new(),
        }
    }

    /// Forgets every rule (the runtime instance whose memory they named shut down).
    pub fn clear(&mut self) {
        self.excluded.clear();
        self.included.clear();
    }

    /// Excludes `[base, base + size)` from every snapshot.
    pub fn exclude(&mut self, base: usize, size: usize) -> Result<(), RangeError> {
        let r = range(base, size)?;
        if self.excluded.len() >= MAX_CLIENT_RANGES {
            return Err(RangeError::TooMany);
        }
        self.excluded.push(r);
        Ok(())
    }

    /// Adds `[base, base + size)` to the snapshots of replays on `agent`.
    pub fn include(&mut self, agent: u64, base: usize, size: usize) -> Result<(), RangeError> {
        let r = range(base, size)?;
        if agent == 0 {
            return Err(RangeError::NoAgent);
        }
        if self.included.len() >= MAX_CLIENT_RANGES {
            return Err(RangeError::TooMany);
        }
        self.included.push((agent, r));
        Ok(())
    }

    /// True when some excluded range overlaps `[base, base + size)`.
    pub fn excludes_part_of(&self, base: usize, size: usize) -> bool {
        let end = base.saturating_add(size);
        self.excluded.iter().any(|x| x.start < end && base < x.end)
    }

    /// Removes one exclusion made with exactly these arguments.
    pub fn remove_excluded(&mut self, base: usize, size: usize) -> Result<(), RangeError> {
        let r = range(base, size)?;
        let i = self
            .excluded
            .iter()
            .position(|x| *x == r)
            .ok_or(RangeError::NotFound)?;
        self.excluded.swap_remove(i);
        Ok(())
    }

    /// Removes one inclusion made with exactly these arguments.
    pub fn remove_included(
        &mut self,
        agent: u64,
        base: usize,
        size: usize,
    ) -> Result<(), RangeError> {
        let r = range(base, size)?;
        let i = self
            .included
            .iter()
            .position(|(a, x)| *a == agent && *x == r)
            .ok_or(RangeError::NotFound)?;
        self.included.swap_remove(i);
        Ok(())
    }

    /// The regions of a snapshot on `agent`: `regions` plus the ranges included for the agent,
    /// less every excluded byte (a region is split around an excluded range).
    pub fn apply(&self, agent: u64, mut regions: Vec<Region>) -> Vec<Region> {
        regions.extend(
            self.included
                .iter()
                .filter(|(a, _)| *a == agent)
                .map(|(_, r)| Region {
                    kind: RegionKind::ClientRange,
                    device: r.start,
                    size: r.len(),
                }),
        );
        if self.excluded.is_empty() {
            return regions;
        }
        let mut out = Vec::with_capacity(regions.len());
        for region in regions {
            let mut pieces: Vec<Range<usize>> =
                std::iter::once(region.device..region.device + region.size).collect();
            for x in &self.excluded {
                pieces = pieces
                    .into_iter()
                    .flat_map(|p| {
                        if x.end <= p.start || x.start >= p.end {
                            return vec![p];
                        }
                        let mut v = Vec::new();
                        if x.start > p.start {
                            v.push(p.start..x.start);
                        }
                        if x.end < p.end {
                            v.push(x.end..p.end);
                        }
                        v
                    })
                    .collect();
            }
            out.extend(pieces.into_iter().map(|p| Region {
                kind: region.kind.clone(),
                device: p.start,
                size: p.len(),
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(base: usize, size: usize) -> Region {
        Region {
            kind: RegionKind::Allocation { base },
            device: base,
            size,
        }
    }

    #[test]
    fn exclusions_split_regions_and_keep_their_origin() {
        let mut rules = ClientRanges::new();
        rules.exclude(0x1100, 0x100).unwrap();
        rules.exclude(0x2000, 0x1000).unwrap();
        let out = rules.apply(
            1,
            vec![
                alloc(0x1000, 0x400),
                alloc(0x2000, 0x800),
                alloc(0x5000, 0x10),
            ],
        );
        let got: Vec<_> = out
            .iter()
            .map(|r| (r.kind.clone(), r.device, r.size))
            .collect();
        assert_eq!(
            got,
            vec![
                (RegionKind::Allocation { base: 0x1000 }, 0x1000, 0x100),
                (RegionKind::Allocation { base: 0x1000 }, 0x1200, 0x200),
                (RegionKind::Allocation { base: 0x5000 }, 0x5000, 0x10),
            ],
            "a wholly excluded allocation disappears; a split one keeps its base"
        );
        rules.remove_excluded(0x2000, 0x1000).unwrap();
        assert_eq!(
            rules.remove_excluded(0x2000, 0x1000),
            Err(RangeError::NotFound)
        );
        assert_eq!(rules.apply(1, vec![alloc(0x2000, 0x800)]).len(), 1);
    }

    #[test]
    fn inclusions_are_per_agent_and_exclusions_win() {
        let mut rules = ClientRanges::new();
        rules.include(7, 0x9000, 0x100).unwrap();
        rules.exclude(0x9080, 0x10).unwrap();
        assert!(
            rules.apply(8, Vec::new()).is_empty(),
            "another agent's inclusion"
        );
        let got: Vec<_> = rules
            .apply(7, Vec::new())
            .iter()
            .map(|r| (r.device, r.size))
            .collect();
        assert_eq!(got, vec![(0x9000, 0x80), (0x9090, 0x70)]);
        assert_eq!(
            rules.remove_included(8, 0x9000, 0x100),
            Err(RangeError::NotFound)
        );
        rules.remove_included(7, 0x9000, 0x100).unwrap();
        assert!(rules.apply(7, Vec::new()).is_empty());
    }

    #[test]
    fn bad_ranges_are_refused() {
        let mut rules = ClientRanges::new();
        assert_eq!(rules.exclude(0, 16), Err(RangeError::Invalid));
        assert_eq!(rules.exclude(16, 0), Err(RangeError::Invalid));
        assert_eq!(rules.exclude(usize::MAX - 4, 16), Err(RangeError::Invalid));
        assert_eq!(rules.include(0, 16, 16), Err(RangeError::NoAgent));
        for i in 0..MAX_CLIENT_RANGES {
            rules.exclude(0x1000 + i, 1).unwrap();
        }
        assert_eq!(rules.exclude(1, 1), Err(RangeError::TooMany));
    }
}
