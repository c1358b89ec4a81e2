//! The state of one wave: scalar and vector registers, EXEC/VCC/SCC/M0, MODE and the
//! program counter.

use crate::decode::ops::{INLINE_F16_BITS, INLINE_F32_BITS};
use crate::decode::{AGPR, EXEC, M0, Ty, VCC, VGPR};

/// Lanes per wave.
pub(crate) const LANES: usize = 64;
/// VGPR slots per wave: 256 architectural VGPRs then 256 AGPRs.
pub(crate) const VREGS: usize = 512;

/// The first staging row (after the VGPRs and AGPRs; no operand code names it).
pub(crate) const STAGE: usize = VREGS;
/// Staging rows per wave.
pub(crate) const STAGE_ROWS: usize = 4;

/// The first splat row (after the staging rows): a row holding one value in every lane, for
/// a scalar or constant source of a whole-row operation; only [`Wave::splat`] writes them.
pub(crate) const SPLAT: usize = STAGE + STAGE_ROWS;
/// Splat rows per wave, one per source position.
pub(crate) const SPLAT_ROWS: usize = 3;

/// Rows of one wave's register file: VGPRs, AGPRs, staging and splat rows.
const ROWS: usize = SPLAT + SPLAT_ROWS;
/// Bytes of one wave's register file.
pub(crate) const REGISTER_FILE_BYTES: usize = ROWS * LANES * 4;

/// One lane-vector register.
pub(crate) type VReg = [u32; LANES];

/// Register state and bookkeeping of a wave.
pub(crate) struct Wave {
    /// Scalar registers indexed by operand code 0..=127 (SGPRs, FLAT_SCRATCH, VCC, TTMPs,
    /// M0, EXEC).
    pub s: [u32; 128],
    /// VGPRs (0..256) and AGPRs (256..512), each 64 lanes, then [`STAGE_ROWS`] staging rows
    /// of whole-row operations (sign-modified source copies) from [`STAGE`], then
    /// [`SPLAT_ROWS`] splat rows from [`SPLAT`].
    pub v: Box<[VReg]>,
    /// The value each splat row holds in every lane (`None`: not known).
    splats: [Option<u32>; SPLAT_ROWS],
    pub scc: bool,
    /// Index of the next instruction in the program.
    pub pc: usize,
    pub mode: u32,
    pub status: u32,
    pub trapsts: u32,
    /// Instructions issued (the cost model's cycle count).
    pub cycles: u64,
    /// Lane-instructions executed (active lanes of vector instructions).
    pub lane_insts: u64,
    pub done: bool,
    pub at_barrier: bool,
    /// Waiting at the global wave-sync barrier for this many waves (0: not waiting).
    pub grid_wait: u32,
    /// VGPR indexing (`s_set_gpr_idx_on`): index and mode live in M0.
    pub gpr_idx_on: bool,
    /// HW_ID register value (placement).
    pub hw_id: u32,
    /// Wave index within its work-group.
    pub index: u32,
}

impl Wave {
    pub fn new() -> Wave {
        Wave {
            s: [0; 128],
            v: vec![[0u32; LANES]; ROWS].into_boxed_slice(),
            splats: [None; SPLAT_ROWS],
            scc: false,
            pc: 0,
            mode: 0,
            status: 0,
            trapsts: 0,
            cycles: 0,
            lane_insts: 0,
            done: false,
            at_barrier: false,
            grid_wait: 0,
            gpr_idx_on: false,
            hw_id: 0,
            index: 0,
        }
    }

    /// Reset the bookkeeping for a new wave starting with scalar registers `sgprs` (vector
    /// registers keep stale values, as on hardware).
    pub fn reset(&mut self, sgprs: &[u32; 128]) {
        self.s = *sgprs;
        self.scc = false;
        self.pc = 0;
        self.status = 0;
        self.trapsts = 0;
        self.cycles = 0;
        self.lane_insts = 0;
        self.done = false;
        self.at_barrier = false;
        self.grid_wait = 0;
        self.gpr_idx_on = false;
    }

    pub fn exec(&self) -> u64 {
        self.sgpr64(EXEC)
    }

    pub fn set_exec(&mut self, v: u64) {
        self.set_sgpr64(EXEC, v);
    }

    pub fn vcc(&self) -> u64 {
        self.s[VCC as usize] as u64 | (self.s[VCC as usize + 1] as u64) << 32
    }

    pub fn m0(&self) -> u32 {
        self.s[M0 as usize]
    }

    /// Read a 64-bit scalar register pair at operand code `c` (< 128).
    pub fn sgpr64(&self, c: u16) -> u64 {
        let c = c as usize & 127;
        self.s[c] as u64 | (self.s[(c + 1) & 127] as u64) << 32
    }

    /// Write a scalar register (codes >= 128 are read-only and ignored).
    pub fn set_sgpr(&mut self, c: u16, v: u32) {
        if (c as usize) < 128 {
            self.s[c as usize] = v;
        }
    }

    /// Write a 64-bit scalar register pair at operand code `c` (a half at code 128 or above is
    /// not written). A pair is written with one 8-byte store where it can be, so that the
    /// 8-byte read of [`Wave::sgpr64`] that usually follows takes the value straight from the
    /// store (two 4-byte stores read by one 8-byte load stall the host's pipeline).
    pub fn set_sgpr64(&mut self, c: u16, v: u64) {
        if cfg!(target_endian = "little") && (c as usize) < 127 {
            // SAFETY: `c + 1 < 128`: dwords `c` and `c + 1` of the register array; on a
            // little-endian host the low half lands in dword `c`. Unaligned store.
            unsafe { (self.s.as_mut_ptr().add(c as usize) as *mut u64).write_unaligned(v) };
            return;
        }
        self.set_sgpr(c, v as u32);
        self.set_sgpr(c + 1, (v >> 32) as u32);
    }

    /// Splat row `k` (< [`SPLAT_ROWS`]) holding `x` in every lane: written unless it holds
    /// `x` already (a scalar source read again with the same value, in a loop or by the next
    /// wave of the work-group, is not copied 64 times again).
    pub fn splat(&mut self, k: usize, x: u32) -> usize {
        if self.splats[k] != Some(x) {
            self.v[SPLAT + k] = [x; LANES];
            self.splats[k] = Some(x);
        }
        SPLAT + k
    }

    /// The VGPR/AGPR slot of a vector operand code.
    pub fn vslot(c: u16) -> usize {
        if c >= AGPR {
            256 + (c - AGPR) as usize
        } else {
            (c - VGPR) as usize
        }
    }
}

/// Lanes `8c..8c + 8` of a row as two 16-byte loads: rows are written by 16-byte stores
/// (row copies, and 32-byte stores as the compiler splits them), which forward
/// only to loads of the same bytes; a 32-byte load would wait for them to reach the cache.
///
/// # Safety
///
/// `row` is valid for reads of 64 lanes; `c` < 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn row8(row: *const u32, c: usize) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::{__m128i, _mm256_loadu2_m128i};
    // SAFETY: passed on from the caller.
    unsafe {
        _mm256_loadu2_m128i(
            row.add(8 * c + 4) as *const __m128i,
            row.add(8 * c) as *const __m128i,
        )
    }
}

/// The value of a constant (non-register) scalar operand code for a type.
pub(crate) fn inline_const(code: u16, ty: Ty, lit: u32) -> Option<u64> {
    let wide = ty.dwords() == 2;
    Some(match code {
        128..=192 => (code - 128) as u64,
        193..=208 => {
            let v = -((code - 192) as i64);
            if wide { v as u64 } else { v as u32 as u64 }
        }
        240..=248 => {
            let f = [
                0.5f64,
                -0.5,
                1.0,
                -1.0,
                2.0,
                -2.0,
                4.0,
                -4.0,
                0.15915494309189535,
            ][(code - 240) as usize];
            match ty {
                Ty::F64 | Ty::B64 | Ty::I64 => {
                    if code == 248 {
                        0x3FC4_5F30_6DC9_C882
                    } else {
                        f.to_bits()
                    }
                }
                Ty::F16 | Ty::P16 => INLINE_F16_BITS[(code - 240) as usize] as u64,
                _ => INLINE_F32_BITS[(code - 240) as usize] as u64,
            }
        }
        255 => match ty {
            Ty::F64 => (lit as u64) << 32,
            Ty::I64 => lit as i32 as i64 as u64,
            _ => lit as u64,
        },
        _ => return None,
    })
}
