//! What a wave starts with: its scalar registers and its work-item ids.
//!
//! The SGPRs every wave of a dispatch shares (the user SGPRs the kernel descriptor enables,
//! preloaded kernel arguments included) are laid out once per dispatch as an image; a wave's
//! start copies the image and puts in its work-group's ids and its place in the group. The
//! work-item ids of a work-group's waves are counted from one wave to the next, without a
//! division per wave.

use crate::descriptor::KernelDescriptor;
use crate::exec::PRIVATE_BUFFER_BASE;
use crate::memory::{GlobalMemory, load_bytes};
use crate::resource::BufferDescriptor;
use crate::wave::{LANES, Wave};

/// The dispatch's values a wave's scalar registers start with.
pub(crate) struct LaunchValues {
    pub dispatch_packet_address: u64,
    pub queue_address: u64,
    pub kernarg_address: u64,
    pub dispatch_id: u64,
    pub private_segment_size: u32,
}

/// The scalar registers every wave of a dispatch starts with, and where the per-wave ones go.
pub(crate) struct LaunchImage {
    sgprs: [u32; 128],
    /// SGPRs of the work-group ids the descriptor enables (x, y, z), in that order.
    group_ids: [Option<u16>; 3],
    /// The SGPR of the wave's count and first-wave flag (work-group info), when enabled.
    group_info: Option<u16>,
}

impl LaunchImage {
    /// The image of a kernel `kd` launched with `values`; `Err` names preloaded kernel
    /// arguments `mem` cannot read.
    pub fn new(
        kd: &KernelDescriptor,
        values: &LaunchValues,
        mem: &dyn GlobalMemory,
    ) -> Result<LaunchImage, String> {
        let mut sgprs = [0u32; 128];
        let mut n = 0usize;
        let mut put = |v: u32| {
            if n < sgprs.len() {
                sgprs[n] = v;
            }
            n += 1;
        };
        if kd.user_sgpr(0) {
            let private = BufferDescriptor {
                base: PRIVATE_BUFFER_BASE,
                stride: 0,
                num_records: u32::MAX,
                dst_sel: [0; 4],
                num_format: crate::texel::FLOAT,
                data_format: 4,
                add_tid: false,
            };
            private.encode().into_iter().for_each(&mut put);
        }
        for (bit, v) in [
            (1, values.dispatch_packet_address),
            (2, values.queue_address),
            (3, values.kernarg_address),
            (4, values.dispatch_id),
            (5, 0),
        ] {
            if kd.user_sgpr(bit) {
                put(v as u32);
                put((v >> 32) as u32);
            }
        }
        if kd.user_sgpr(6) {
            put(values.private_segment_size);
        }
        for word in preloaded_arguments(kd, values.kernarg_address, mem)? {
            put(word);
        }
        // The system SGPRs follow the user SGPRs the descriptor counts.
        let mut next = kd.user_sgpr_count() as u16;
        let mut system = |enabled: bool| {
            let at = (enabled && next < 128).then_some(next);
            next += u16::from(enabled);
            at
        };
        let rsrc2 = kd.rsrc2;
        let group_ids = [0, 1, 2].map(|d| system(rsrc2 >> (7 + d) & 1 != 0));
        let group_info = system(rsrc2 >> 10 & 1 != 0);
        // The private segment wave offset, when enabled: always 0 here.
        if let Some(at) = system(rsrc2 & 1 != 0) {
            sgprs[usize::from(at)] = 0;
        }
        Ok(LaunchImage {
            sgprs,
            group_ids,
            group_info,
        })
    }

    /// Wave `index` of a work-group of `nwaves` waves with ids `id`: its scalar registers
    /// from the image, with the work-group's values put in.
    pub fn start(&self, w: &mut Wave, id: [u32; 3], nwaves: u32, index: u32) {
        w.reset(&self.sgprs);
        for (d, at) in self.group_ids.iter().enumerate() {
            if let Some(at) = at {
                w.s[usize::from(*at)] = id[d];
            }
        }
        if let Some(at) = self.group_info {
            w.s[usize::from(at)] = nwaves | u32::from(index == 0) << 31;
        }
    }
}

/// The preloaded kernel-argument dwords of `kd` (none when it preloads none).
fn preloaded_arguments(
    kd: &KernelDescriptor,
    kernarg_address: u64,
    mem: &dyn GlobalMemory,
) -> Result<Vec<u32>, String> {
    let dwords = kd.preload_length() as usize;
    if dwords == 0 {
        return Ok(Vec::new());
    }
    let at = kernarg_address.wrapping_add(4 * kd.preload_offset() as u64);
    let Some(p) = mem.translate(at, 4 * dwords as u64) else {
        return Err(format!(
            "preloaded kernel arguments at 0x{at:x} are not readable"
        ));
    };
    let mut bytes = vec![0u8; 4 * dwords];
    load_bytes(p, &mut bytes);
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

/// Lane numbers 0..64, added to a wave's first work-item id (x counts up in the low bits, no
/// carry into y: the row holds all 64).
const LANE_NUMBERS: [u32; LANES] = {
    let mut n = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        n[l] = l as u32;
        l += 1;
    }
    n
};

/// The work-item ids of a work-group's waves, wave after wave: where the next wave's first
/// lane stands in the work-group.
pub(crate) struct WorkItems {
    dims: [u32; 3],
    /// Work-item id dimensions packed into v0 (0: x only; 1: x and y; 2: x, y and z).
    id_dims: u32,
    at: [u32; 3],
    /// Work-items not given to a wave yet.
    left: u32,
}

impl WorkItems {
    /// The first wave's ids of a work-group of `dims` work-items.
    pub fn new(dims: [u32; 3], id_dims: u32) -> WorkItems {
        WorkItems {
            dims,
            id_dims,
            at: [0; 3],
            left: dims[0] * dims[1] * dims[2],
        }
    }

    /// The next wave's packed work-item ids into its v0 (`x | y << 10 | z << 20`, y and z as
    /// the descriptor enables them); returns its EXEC mask.
    pub fn next_wave(&mut self, w: &mut Wave) -> u64 {
        let [x, y, z] = self.at;
        if self.left >= LANES as u32 && x + LANES as u32 <= self.dims[0] {
            // All 64 lanes in one row of the work-group: x counts up, y and z stay.
            let first = self.packed(x, y, z);
            for (v, l) in w.v[0].iter_mut().zip(LANE_NUMBERS) {
                *v = first + l;
            }
            self.left -= LANES as u32;
            self.advance(LANES as u32);
            return u64::MAX;
        }
        let mut exec = 0u64;
        for l in 0..LANES {
            if self.left == 0 {
                w.v[0][l] = 0;
                continue;
            }
            exec |= 1 << l;
            let [x, y, z] = self.at;
            w.v[0][l] = self.packed(x, y, z);
            self.left -= 1;
            self.advance(1);
        }
        exec
    }

    fn packed(&self, x: u32, y: u32, z: u32) -> u32 {
        let mut v = x;
        if self.id_dims >= 1 {
            v |= y << 10;
        }
        if self.id_dims >= 2 {
            v |= z << 20;
        }
        v
    }

    /// Steps `n` work-items along x (`n` never crosses more than the end of one row).
    fn advance(&mut self, n: u32) {
        self.at[0] += n;
        if self.at[0] == self.dims[0] {
            self.at[0] = 0;
            self.at[1] += 1;
            if self.at[1] == self.dims[1] {
                self.at[1] = 0;
                self.at[2] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids of every lane of every wave, against ids computed from the linear work-item
    /// index, for work-groups whose rows are shorter, longer and not multiples of a wave.
    #[test]
    fn waves_count_ids_as_the_linear_index_gives_them() {
        for dims in [
            [256, 1, 1],
            [100, 1, 1],
            [64, 4, 1],
            [8, 8, 8],
            [96, 3, 2],
            [1, 1, 1],
            [130, 2, 3],
        ] {
            let items = dims[0] * dims[1] * dims[2];
            let mut ids = WorkItems::new(dims, 2);
            let mut w = Wave::new();
            for k in 0..items.div_ceil(LANES as u32) {
                let exec = ids.next_wave(&mut w);
                for l in 0..LANES as u32 {
                    let i = k * LANES as u32 + l;
                    let live = i < items;
                    assert_eq!(exec >> l & 1 != 0, live, "{dims:?} wave {k} lane {l}");
                    let want = if live {
                        let (x, y, z) =
                            (i % dims[0], i / dims[0] % dims[1], i / (dims[0] * dims[1]));
                        x | y << 10 | z << 20
                    } else {
                        0
                    };
                    assert_eq!(w.v[0][l as usize], want, "{dims:?} wave {k} lane {l}");
                }
            }
        }
    }
}
