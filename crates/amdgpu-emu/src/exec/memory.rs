//! Vector memory: LDS (DS), FLAT/GLOBAL/SCRATCH, MUBUF and MTBUF (typed formats in
//! `crate::texel`), MIMG (`image`), LDS DMA, with per-lane routing and checks.

use crate::decode::{Enc, Inst, OFF, Op, Op::*, Ty, flags, seg};
use crate::fault::FaultKind;
use crate::memory::{load_bytes, rmw32, rmw64, store_bytes};
use crate::resource::BufferDescriptor;
use crate::texel;
#[cfg(target_arch = "x86_64")]
use crate::wave::row8;
use crate::wave::{LANES, VReg, Wave};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::atomic::{Atomic, Rmw, atomic};
use super::{Ctx, Flow, Step, illegal, sread};

mod image;

/// V# base marking the private segment buffer the emulator hands to gfx90a kernels.
pub(crate) const PRIVATE_BUFFER_BASE: u64 = 1 << 47;

pub(super) fn exec(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    match inst.enc {
        Enc::Ds => ds(w, ctx, inst),
        Enc::Flat => flat(w, ctx, inst),
        Enc::Mimg => image::exec(w, ctx, inst),
        _ => mubuf(w, ctx, inst),
    }
}

/// Where a lane's access goes.
#[derive(Clone, Copy)]
enum Place {
    Lds(u32),
    Private(u32),
    Global(u64),
}

/// The kind of memory operation, decided from the mnemonic once per instruction.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Load `n` bytes; `sext` sign-extends sub-dword loads; `d16` = Some(hi) writes a half.
    Load {
        n: u32,
        sext: bool,
        d16: Option<bool>,
    },
    /// Store `n` bytes; `hi` stores the high half of the data register (d16_hi).
    Store { n: u32, hi: bool },
    /// Atomic read-modify-write of 4 or 8 bytes.
    Atomic(Atomic),
}

impl Kind {
    /// The bytes one lane's access covers in memory.
    fn bytes(self) -> u32 {
        match self {
            Kind::Load { n, .. } | Kind::Store { n, .. } => n,
            Kind::Atomic(a) => 4 << a.wide as u32,
        }
    }
}

fn kind(op: Op) -> Option<Kind> {
    static KINDS: std::sync::OnceLock<Vec<Option<Kind>>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| Op::ALL.iter().map(|&o| kind_of(o)).collect())[op as usize]
}

fn kind_of(op: Op) -> Option<Kind> {
    let name = op.name();
    let rest = name.split_once('_').map(|x| x.1).unwrap_or(name);
    if rest.starts_with("atomic") {
        return atomic(op).map(Kind::Atomic);
    }
    let (load, suffix) = if let Some(s) = rest.strip_prefix("load_") {
        // gfx942's LDS DMA loads (`load_lds_dword`) read as the plain loads do.
        (true, s.strip_prefix("lds_").unwrap_or(s))
    } else if let Some(s) = rest.strip_prefix("store_") {
        (false, s)
    } else {
        return None;
    };
    let (n, sext) = match suffix.trim_end_matches("_d16_hi").trim_end_matches("_d16") {
        "ubyte" | "byte" => (1, false),
        "sbyte" => (1, true),
        "ushort" | "short" => (2, false),
        "sshort" => (2, true),
        "dword" => (4, false),
        "dwordx2" => (8, false),
        "dwordx3" => (12, false),
        "dwordx4" => (16, false),
        _ => return None,
    };
    let d16 = if suffix.ends_with("_d16_hi") {
        Some(true)
    } else if suffix.ends_with("_d16") {
        Some(false)
    } else {
        None
    };
    Some(if load {
        Kind::Load {
            n,
            sext: sext || suffix.starts_with("sbyte"),
            d16,
        }
    } else {
        Kind::Store {
            n,
            hi: d16 == Some(true),
        }
    })
}

fn lane_place(ctx: &Ctx<'_>, addr: u64) -> Place {
    let hi = addr >> 32;
    if hi == ctx.apertures.shared_base >> 32 {
        Place::Lds(addr as u32)
    } else if hi == ctx.apertures.private_base >> 32 {
        Place::Private(addr as u32)
    } else {
        Place::Global(addr)
    }
}

fn private_addr(ctx: &Ctx<'_>, off: u32) -> u64 {
    ctx.apertures.private_base | off as u64
}

/// Host bytes of a lane's access (`n` bytes), or a fault.
fn access<'c>(
    ctx: &'c mut Ctx<'_>,
    w: &Wave,
    lane: usize,
    place: Place,
    n: u32,
    write: bool,
) -> Result<Target<'c>, FaultKind> {
    match place {
        Place::Lds(a) => {
            let a = a as usize;
            if a + n as usize <= ctx.lds.len() {
                Ok(Target::Bytes(&mut ctx.lds[a..a + n as usize]))
            } else {
                // Out-of-range LDS reads return 0 and writes are dropped, as on hardware.
                Ok(Target::Nothing)
            }
        }
        Place::Private(off) => {
            let size = ctx.private_size as usize;
            let base = (w.index as usize * LANES + lane) * size;
            let off = off as usize;
            if off + n as usize <= size && base + size <= ctx.scratch.len() {
                Ok(Target::Bytes(
                    &mut ctx.scratch[base + off..base + off + n as usize],
                ))
            } else {
                Err(FaultKind::Memory {
                    address: private_addr(ctx, off as u32),
                    size: n,
                    lane: Some(lane as u32),
                    write,
                })
            }
        }
        Place::Global(a) => global(ctx, a, n, lane, write).map(|p| Target::Host(p, a)),
    }
}

/// Host bytes of lane `lane`'s access of `n` bytes at global address `a`, or a memory fault.
fn global(
    ctx: &Ctx<'_>,
    a: u64,
    n: u32,
    lane: usize,
    write: bool,
) -> Result<NonNull<u8>, FaultKind> {
    ctx.mem.translate(a, u64::from(n)).ok_or(FaultKind::Memory {
        address: a,
        size: n,
        lane: Some(lane as u32),
        write,
    })
}

/// Writes 16-bit value `h` into the low (`high` false) or high half of lane `l` of row `r`,
/// keeping the other half (the D16 forms).
fn put_half(w: &mut Wave, r: usize, l: usize, high: bool, h: u16) {
    let old = w.v[r][l];
    w.v[r][l] = if high {
        (old & 0xFFFF) | u32::from(h) << 16
    } else {
        (old & 0xFFFF_0000) | u32::from(h)
    };
}

enum Target<'c> {
    Bytes(&'c mut [u8]),
    Host(std::ptr::NonNull<u8>, u64),
    Nothing,
}

fn read_data(w: &Wave, base: u16, dwords: usize, lane: usize) -> [u32; 4] {
    let slot = Wave::vslot(base);
    let mut d = [0u32; 4];
    for (k, x) in d.iter_mut().enumerate().take(dwords) {
        *x = w.v[(slot + k) & 511][lane];
    }
    d
}

fn bytes_of(d: &[u32; 4], n: usize) -> [u8; 16] {
    let mut b = [0u8; 16];
    for k in 0..4 {
        b[4 * k..4 * k + 4].copy_from_slice(&d[k].to_le_bytes());
    }
    let _ = n;
    b
}

fn write_loaded(w: &mut Wave, dst: u16, lane: usize, raw: &[u8], kind: Kind) {
    let slot = Wave::vslot(dst);
    let Kind::Load { n, sext, d16 } = kind else {
        return;
    };
    let n = n as usize;
    if n >= 4 {
        for k in 0..n / 4 {
            w.v[(slot + k) & 511][lane] =
                u32::from_le_bytes(raw[4 * k..4 * k + 4].try_into().expect("4 bytes"));
        }
        return;
    }
    let v = match (n, sext) {
        (1, false) => raw[0] as u32,
        (1, true) => raw[0] as i8 as i32 as u32,
        (_, false) => u16::from_le_bytes([raw[0], raw[1]]) as u32,
        (_, true) => i16::from_le_bytes([raw[0], raw[1]]) as i32 as u32,
    };
    let old = w.v[slot][lane];
    w.v[slot][lane] = match d16 {
        None => v,
        Some(false) => (old & 0xFFFF_0000) | (v & 0xFFFF),
        Some(true) => (old & 0xFFFF) | (v << 16),
    };
}

/// Perform one lane's access at `place`.
#[allow(clippy::too_many_arguments)]
fn lane_access(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    inst: &Inst,
    lane: usize,
    place: Place,
    kind: Kind,
    data_reg: u16,
    dst: u16,
    inside: u32,
) -> Result<(), FaultKind> {
    match kind {
        Kind::Load { n, .. } => {
            let mut raw = [0u8; 16];
            let m = inside.min(n) as usize;
            if m > 0 {
                match access(ctx, w, lane, place, m as u32, false)? {
                    Target::Bytes(b) => raw[..m].copy_from_slice(b),
                    Target::Host(p, _) => load_bytes(p, &mut raw[..m]),
                    Target::Nothing => {}
                }
            }
            write_loaded(w, dst, lane, &raw[..n as usize], kind);
        }
        Kind::Store { n, hi } => {
            let d = read_data(w, data_reg, (n as usize).div_ceil(4), lane);
            let mut b = bytes_of(&d, n as usize);
            if hi {
                b[0] = b[2];
                b[1] = b[3];
            }
            let m = inside.min(n) as usize;
            if m > 0 {
                match access(ctx, w, lane, place, m as u32, true)? {
                    Target::Bytes(t) => t.copy_from_slice(&b[..m]),
                    Target::Host(p, _) => store_bytes(p, &b[..m]),
                    Target::Nothing => {}
                }
            }
        }
        Kind::Atomic(at) => {
            let (wide, n) = (at.wide, if at.wide { 8 } else { 4 });
            let cmpswap = at.rmw == Rmw::CmpSwap;
            let dw = if wide { 2 } else { 1 };
            let d = read_data(w, data_reg, if cmpswap { 2 * dw } else { dw }, lane);
            let data = if wide {
                d[0] as u64 | (d[1] as u64) << 32
            } else {
                d[0] as u64
            };
            let cmp = match (cmpswap, wide) {
                (false, _) => 0,
                (true, true) => d[2] as u64 | (d[3] as u64) << 32,
                (true, false) => d[1] as u64,
            };
            let rmw = at.rmw;
            let target = if inside >= n {
                access(ctx, w, lane, place, n, true)?
            } else {
                Target::Nothing
            };
            let old = match target {
                Target::Bytes(t) => {
                    let old = if wide {
                        u64::from_le_bytes(t[..8].try_into().expect("8"))
                    } else {
                        u32::from_le_bytes(t[..4].try_into().expect("4")) as u64
                    };
                    let new = rmw.apply(wide, old, data, cmp);
                    t.copy_from_slice(&new.to_le_bytes()[..n as usize]);
                    old
                }
                Target::Host(p, a) => {
                    if a % n as u64 != 0 {
                        return Err(FaultKind::Misaligned {
                            address: a,
                            lane: lane as u32,
                        });
                    }
                    if wide {
                        rmw64(p, |old| rmw.apply(true, old, data, cmp))
                    } else {
                        rmw32(p, |old| rmw.apply(false, old as u64, data, cmp) as u32) as u64
                    }
                }
                Target::Nothing => 0,
            };
            if inst.ctrl & flags::GLC != 0 {
                let slot = Wave::vslot(dst);
                w.v[slot][lane] = old as u32;
                if wide {
                    w.v[(slot + 1) & 511][lane] = (old >> 32) as u32;
                }
            }
        }
    }
    Ok(())
}

/// Whether a load's data goes to LDS rather than to VGPRs: gfx942's `*_load_lds_*`
/// operations and, on gfx90a, GLOBAL/SCRATCH and MUBUF loads with the lds bit.
fn loads_to_lds(inst: &Inst) -> bool {
    inst.ctrl & flags::LDS != 0
        || matches!(
            inst.op,
            flat_load_lds_ubyte
                | flat_load_lds_sbyte
                | flat_load_lds_ushort
                | flat_load_lds_sshort
                | flat_load_lds_dword
        )
}

/// The LDS address lane `lane` of an LDS DMA instruction writes (or `buffer_store_lds_dword`
/// reads): the wave's base M0[15:0] plus the instruction offset (it offsets the memory address
/// too) plus a dword per lane.
fn lds_dma_address(w: &Wave, inst: &Inst, lane: usize) -> u64 {
    ((w.m0() & 0xFFFF) as u64)
        .wrapping_add(inst.imm as i64 as u64)
        .wrapping_add(4 * lane as u64)
}

/// One lane of an LDS DMA load: the dword the load would have written to its VGPR (sub-dword
/// data zero- or sign-extended as the load names) goes to LDS instead (see
/// [`lds_dma_address`]); out-of-range LDS addresses drop it, as DS stores do.
fn load_to_lds(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    inst: &Inst,
    lane: usize,
    place: Place,
    kind: Kind,
    inside: u32,
) -> Result<(), FaultKind> {
    let Kind::Load { n, sext, .. } = kind else {
        return Ok(());
    };
    let mut raw = [0u8; 4];
    let m = inside.min(n).min(4) as usize;
    if m > 0 {
        match access(ctx, w, lane, place, m as u32, false)? {
            Target::Bytes(b) => raw[..m].copy_from_slice(b),
            Target::Host(p, _) => load_bytes(p, &mut raw[..m]),
            Target::Nothing => {}
        }
    }
    let v = match (n, sext) {
        (1, false) => raw[0] as u32,
        (1, true) => raw[0] as i8 as i32 as u32,
        (2, false) => u16::from_le_bytes([raw[0], raw[1]]) as u32,
        (2, true) => i16::from_le_bytes([raw[0], raw[1]]) as i32 as u32,
        _ => u32::from_le_bytes(raw),
    };
    lds_put(ctx, lds_dma_address(w, inst, lane), 4, v as u64);
    Ok(())
}

fn flat(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let Some(kind) = kind(inst.op) else {
        return Err(illegal(format!("{} is not implemented", inst.op.name())));
    };
    let exec = w.exec();
    let segment = inst.segment();
    let vaddr = Wave::vslot(inst.src[0]);
    let saddr = inst.src[2];
    let to_lds = loads_to_lds(inst);
    if to_lds && (segment == seg::FLAT || !matches!(kind, Kind::Load { .. })) {
        return Err(illegal(format!(
            "{} with the lds bit is not emulated (LDS DMA is a GLOBAL or SCRATCH load)",
            inst.op.name()
        )));
    }
    if ctx.fast
        && exec != 0
        && global_access_plan(inst).is_some_and(|p| scattered_units(w, ctx, &p, exec))
    {
        return Ok(Flow::Next);
    }
    let mut places = [Place::Global(0); LANES];
    let (mut lo, mut hi, mut all_global) = (u64::MAX, 0u64, true);
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let v64 = w.v[vaddr][l] as u64 | (w.v[(vaddr + 1) & 511][l] as u64) << 32;
        let place = match segment {
            seg::FLAT => lane_place(ctx, v64.wrapping_add(inst.imm as i64 as u64)),
            seg::GLOBAL => {
                let a = if saddr == OFF {
                    v64
                } else {
                    w.sgpr64(saddr).wrapping_add(w.v[vaddr][l] as u64)
                };
                Place::Global(a.wrapping_add(inst.imm as i64 as u64))
            }
            _ => {
                let mut off = inst.imm as i64;
                if inst.ctrl & flags::SVE != 0 {
                    off += w.v[vaddr][l] as i64;
                }
                if saddr != OFF {
                    off += sread(w, ctx, saddr, Ty::B32, 0) as i64;
                }
                Place::Private(off as u32)
            }
        };
        match place {
            Place::Global(a) => {
                lo = lo.min(a);
                hi = hi.max(a);
            }
            _ => all_global = false,
        }
        places[l] = place;
    }
    w.lane_insts += exec.count_ones() as u64;
    if ctx.counting && segment == seg::FLAT && exec != 0 {
        let lds = (0..LANES)
            .filter(|&l| exec >> l & 1 != 0 && matches!(places[l], Place::Lds(_)))
            .count();
        ctx.counts.flat_lds += u64::from(lds > 0);
        ctx.counts.flat_lds_only += u64::from(lds == exec.count_ones() as usize);
    }
    if to_lds {
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                load_to_lds(w, ctx, inst, l, places[l], kind, u32::MAX)?;
            }
        }
        return Ok(Flow::Next);
    }
    // Fast path: every lane's plain load or store lies in one range the memory vouches for.
    if ctx.fast && all_global && exec != 0 && !matches!(kind, Kind::Atomic(_)) {
        let n = match kind {
            Kind::Load { n, .. } | Kind::Store { n, .. } => n as u64,
            Kind::Atomic(a) => 4 << a.wide as u64,
        };
        if hi - lo < 1 << 24
            && let Some(base) = ctx.mem.translate(lo, hi - lo + n)
        {
            for l in 0..LANES {
                if exec >> l & 1 == 0 {
                    continue;
                }
                let Place::Global(a) = places[l] else {
                    continue;
                };
                // SAFETY: `a - lo + n <= hi - lo + n` bytes, inside the translated range.
                let p = unsafe { base.add((a - lo) as usize) };
                host_access(w, inst, l, p, kind);
            }
            return Ok(Flow::Next);
        }
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        lane_access(
            w,
            ctx,
            inst,
            l,
            places[l],
            kind,
            inst.src[1],
            inst.dst,
            u32::MAX,
        )?;
    }
    Ok(Flow::Next)
}

/// GLOBAL loads and stores of a byte, a short or 1-4 dwords per lane, aligned to their unit
/// (and FLAT ones whose lanes all lie outside the LDS and private apertures), in the lanes of
/// `exec` (not none), in any order: one translation when the lanes fall within 16 MiB, else one
/// per lane through the kept spans; then one atomic access per unit. False when the case does
/// not apply (the general path then handles it, faults included).
fn scattered_units(w: &mut Wave, ctx: &mut Ctx<'_>, p: &GlobalAccess, exec: u64) -> bool {
    debug_assert!(exec != 0);
    let n = p.unit as u64 * p.dwords as u64;
    let align = p.unit as u64 - 1;
    let addrs = lane_addresses(w, p.vaddr, p.saddr, p.imm);
    // The active lanes' lowest and highest address and their low bits, without a branch per
    // lane: an inactive lane counts as the highest address for the minimum and 0 for the rest.
    let (mut lo, mut hi, mut misaligned) = (u64::MAX, 0u64, 0u64);
    for l in 0..LANES {
        let on = (exec >> l & 1).wrapping_neg();
        lo = lo.min(addrs[l] | !on);
        hi = hi.max(addrs[l] & on);
        misaligned |= addrs[l] & on & align;
    }
    if misaligned != 0 {
        return false;
    }
    let ptrs = if hi - lo >= 1 << 24 {
        // Spread wider than one translation covers (a hash table, a gather over a large
        // array): each lane through the kept spans.
        let Some(ptrs) = lane_pointers(ctx, &addrs, exec, [n, p.unit.into()], p.flat) else {
            return false;
        };
        ptrs
    } else {
        if p.flat && !outside_apertures(ctx, lo, hi) {
            return false;
        }
        let Some(base) = ctx.spans.translate(ctx.mem, lo, hi - lo + n) else {
            return false;
        };
        if !(base.as_ptr() as usize).is_multiple_of(p.unit as usize) {
            return false;
        }
        let mut ptrs = [None; LANES];
        for (l, ptr) in ptrs.iter_mut().enumerate() {
            if exec >> l & 1 != 0 {
                // SAFETY: `addrs[l] - lo + n <= hi - lo + n` bytes into the translated range.
                *ptr = Some(unsafe { base.add((addrs[l] - lo) as usize) });
            }
        }
        ptrs
    };
    if p.unit < 4 {
        narrow_units(w, p, &ptrs, exec);
        return true;
    }
    dword_units(w, p, &ptrs, exec)
}

/// The dword accesses of [`scattered_units`]: lane `l`'s `p.dwords` dwords at `ptrs[l]`
/// (4-byte aligned, translated), one relaxed atomic access per naturally aligned pair of dwords
/// (a GPU reads and writes an aligned 64-bit value whole: another thread's store is never seen
/// torn) and per other dword; true.
fn dword_units(
    w: &mut Wave,
    p: &GlobalAccess,
    ptrs: &[Option<NonNull<u8>>; LANES],
    exec: u64,
) -> bool {
    let k = p.dwords as usize;
    let row = |j: usize| (p.reg as usize + j) & 511;
    for (l, ptr) in ptrs.iter().enumerate() {
        let Some(ptr) = ptr else { continue };
        let words = ptr.as_ptr() as *mut u32;
        let mut j = 0;
        while cfg!(target_endian = "little")
            && j + 1 < k
            && (words.wrapping_add(j) as usize).is_multiple_of(8)
        {
            // SAFETY: dwords `j` and `j + 1` < `k` of the lane's translated bytes, 8-byte
            // aligned, accessed atomically as the trait requires; little-endian host (the
            // lower-addressed dword is the low half).
            let a = unsafe { AtomicU64::from_ptr(words.add(j) as *mut u64) };
            let (lo, hi) = (row(j), row(j + 1));
            if p.store {
                a.store(
                    w.v[lo][l] as u64 | (w.v[hi][l] as u64) << 32,
                    Ordering::Relaxed,
                );
            } else {
                let x = a.load(Ordering::Relaxed);
                w.v[lo][l] = x as u32;
                w.v[hi][l] = (x >> 32) as u32;
            }
            j += 2;
        }
        for j in j..k {
            // SAFETY: dword `j` < `k` of the lane's translated, 4-byte aligned bytes, accessed
            // atomically as the trait requires.
            let a = unsafe { AtomicU32::from_ptr(words.add(j)) };
            let r = (p.reg as usize + j) & 511;
            if p.store {
                a.store(w.v[r][l], Ordering::Relaxed);
            } else {
                w.v[r][l] = a.load(Ordering::Relaxed);
            }
        }
    }
    w.lane_insts += exec.count_ones() as u64;
    true
}

/// The byte and short accesses of [`scattered_units`]: lane `l`'s unit at `ptrs[l]`
/// (aligned to its size, translated), one relaxed atomic access each.
fn narrow_units(w: &mut Wave, p: &GlobalAccess, ptrs: &[Option<NonNull<u8>>; LANES], exec: u64) {
    let r = p.reg as usize & 511;
    for (l, ptr) in ptrs.iter().enumerate() {
        let Some(ptr) = ptr else { continue };
        let at = ptr.as_ptr();
        if p.unit == 1 {
            // SAFETY: the lane's translated byte, accessed atomically.
            let a = unsafe { std::sync::atomic::AtomicU8::from_ptr(at) };
            if p.store {
                a.store(w.v[r][l] as u8, Ordering::Relaxed);
            } else {
                let v = a.load(Ordering::Relaxed);
                w.v[r][l] = if p.signed { v as i8 as u32 } else { v as u32 };
            }
            continue;
        }
        // SAFETY: the lane's two translated bytes, 2-byte aligned, accessed atomically.
        let a = unsafe { std::sync::atomic::AtomicU16::from_ptr(at as *mut u16) };
        if p.store {
            a.store(w.v[r][l] as u16, Ordering::Relaxed);
        } else {
            let v = a.load(Ordering::Relaxed);
            w.v[r][l] = if p.signed { v as i16 as u32 } else { v as u32 };
        }
    }
    w.lane_insts += exec.count_ones() as u64;
}

/// A plain load or store of one lane through a translated host pointer.
fn host_access(w: &mut Wave, inst: &Inst, lane: usize, p: std::ptr::NonNull<u8>, kind: Kind) {
    let aligned = (p.as_ptr() as usize).is_multiple_of(4);
    match kind {
        Kind::Load { n: 4, .. } if aligned => {
            // SAFETY: 4 aligned bytes inside the translated range, accessed atomically.
            let v = unsafe { std::sync::atomic::AtomicU32::from_ptr(p.as_ptr() as *mut u32) }
                .load(std::sync::atomic::Ordering::Relaxed);
            w.v[Wave::vslot(inst.dst)][lane] = v;
            return;
        }
        Kind::Store { n: 4, hi: false } if aligned => {
            let v = w.v[Wave::vslot(inst.src[1])][lane];
            // SAFETY: 4 aligned bytes inside the translated range, accessed atomically.
            unsafe { std::sync::atomic::AtomicU32::from_ptr(p.as_ptr() as *mut u32) }
                .store(v, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        _ => {}
    }
    match kind {
        Kind::Load { n, .. } => {
            let mut raw = [0u8; 16];
            load_bytes(p, &mut raw[..n as usize]);
            write_loaded(w, inst.dst, lane, &raw[..n as usize], kind);
        }
        Kind::Store { n, hi } => {
            let d = read_data(w, inst.src[1], (n as usize).div_ceil(4), lane);
            let mut b = bytes_of(&d, n as usize);
            if hi {
                b[0] = b[2];
                b[1] = b[3];
            }
            store_bytes(p, &b[..n as usize]);
        }
        Kind::Atomic(_) => {}
    }
}

/// A MUBUF/MTBUF instruction's buffer resource (V#) and the wave-level parts of its address.
struct Buffer {
    base: u64,
    stride: u64,
    num_records: u64,
    /// DST_SEL_X..W, NUM_FORMAT and DATA_FORMAT.
    desc: BufferDescriptor,
    soffset: u64,
    idxen: bool,
    offen: bool,
    /// ADD_TID_ENABLE (word 3 bit 23): the lane number adds to the index.
    add_tid: bool,
    vaddr: usize,
    imm: u64,
}

impl Buffer {
    fn new(w: &Wave, ctx: &Ctx<'_>, inst: &Inst) -> Buffer {
        let r = inst.src[2] as usize & 127;
        let desc = BufferDescriptor::decode(&std::array::from_fn(|k| w.s[(r + k) & 127]));
        Buffer {
            base: desc.base,
            stride: u64::from(desc.stride),
            num_records: u64::from(desc.num_records),
            desc,
            soffset: sread(w, ctx, inst.sdst, Ty::B32, inst.lit) as u64,
            idxen: inst.ctrl & flags::IDXEN != 0,
            offen: inst.ctrl & flags::OFFEN != 0,
            add_tid: desc.add_tid,
            vaddr: Wave::vslot(inst.src[0]),
            imm: inst.imm as u64,
        }
    }

    /// Where lane `l`'s access of `size` bytes goes, and how many of its leading bytes pass
    /// the range check.
    fn lane(&self, w: &Wave, l: usize, size: u32) -> (Place, u32) {
        // vaddr holds the index (idxen), then the offset (offen).
        let vindex = if self.idxen {
            w.v[self.vaddr][l] as u64
        } else {
            0
        } + if self.add_tid { l as u64 } else { 0 };
        let voff = if self.offen {
            w.v[(self.vaddr + self.idxen as usize) & 511][l] as u64
        } else {
            0
        };
        let offset = voff + self.imm;
        if self.base == PRIVATE_BUFFER_BASE {
            // The private buffer is swizzled per lane (64 lanes, 4-byte elements): SOFFSET is a
            // wave-level offset (the stack and frame pointers are per-lane offsets times 64),
            // the VGPR and instruction offsets are the lane's own. It has no range check.
            (
                Place::Private(((self.soffset >> 6) + offset) as u32),
                u32::MAX,
            )
        } else {
            let place = Place::Global(self.base + self.soffset + offset + vindex * self.stride);
            (
                place,
                bytes_in_range(
                    self.idxen || self.add_tid,
                    vindex,
                    offset,
                    size,
                    self.num_records,
                ),
            )
        }
    }
}

fn mubuf(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    if inst.op.is_cache_control() {
        return Ok(Flow::Next);
    }
    if inst.op == buffer_store_lds_dword {
        return buffer_store_lds(w, ctx, inst);
    }
    let to_lds = inst.ctrl & flags::LDS != 0;
    if inst.op.format_components().is_some() {
        if to_lds && inst.op != buffer_load_format_x {
            return Err(illegal(format!(
                "{} with lds is not emulated (only buffer_load_format_x loads to LDS)",
                inst.op.name()
            )));
        }
        return buffer_format_access(w, ctx, inst);
    }
    let Some(kind) = kind(inst.op) else {
        return Err(illegal(format!("{} is not implemented", inst.op.name())));
    };
    let buf = Buffer::new(w, ctx, inst);
    let exec = w.exec();
    let size = kind.bytes();
    if to_lds {
        if !matches!(kind, Kind::Load { n: 1 | 2 | 4, .. }) {
            return Err(illegal(format!(
                "{} with lds is not emulated (LDS DMA loads one dword or less)",
                inst.op.name()
            )));
        }
        for l in 0..LANES {
            if exec >> l & 1 != 0 {
                let (place, inside) = buf.lane(w, l, size);
                load_to_lds(w, ctx, inst, l, place, kind, inside)?;
            }
        }
        w.lane_insts += exec.count_ones() as u64;
        return Ok(Flow::Next);
    }
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (place, inside) = buf.lane(w, l, size);
        lane_access(
            w,
            ctx,
            inst,
            l,
            place,
            kind,
            inst.src[1],
            inst.src[1],
            inside,
        )?;
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

/// `buffer_store_lds_dword`: each lane stores the LDS dword at its LDS DMA address (see
/// [`lds_dma_address`]) to its buffer address, which has no VGPR part (a V# with
/// ADD_TID_ENABLE spreads the lanes over records).
fn buffer_store_lds(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let buf = Buffer::new(w, ctx, inst);
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let v = lds_get(ctx, lds_dma_address(w, inst, l), 4) as u32;
        let (place, inside) = buf.lane(w, l, 4);
        if inside >= 4 {
            match access(ctx, w, l, place, 4, true)? {
                Target::Bytes(t) => t.copy_from_slice(&v.to_le_bytes()),
                Target::Host(p, _) => store_bytes(p, &v.to_le_bytes()),
                Target::Nothing => {}
            }
        }
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

/// A typed buffer load or store (`buffer_*_format_*` with the V#'s data and number formats,
/// `tbuffer_*` with the instruction's). Each lane converts one element between memory and its
/// first components; loads then fill the components the format lacks (Y and Z with 0, W with
/// one) and, for `buffer_load_format_*`, pick each destination component by the V#'s DST_SEL
/// (`tbuffer_*` keep X, Y, Z, W). The d16 forms hold two 16-bit components per register (f16
/// for the float number formats), and a d16 load of one component keeps the register's other
/// half. An element not wholly in range loads as zero and is not stored. Data formats or
/// number formats the emulator does not convert fault, named by both fields.
fn buffer_format_access(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let name = inst.op.name();
    let count = inst.op.format_components().unwrap_or(1) as usize;
    let load = name.contains("_load_");
    let (d16, hi) = (name.contains("_d16"), name.contains("_d16_hi"));
    let buf = Buffer::new(w, ctx, inst);
    let typed = name.starts_with("tbuffer");
    let (dfmt, nfmt) = if typed {
        (
            (inst.ctrl >> flags::FMT_SHIFT) & 15,
            (inst.ctrl >> (flags::FMT_SHIFT + 4)) & 7,
        )
    } else {
        (buf.desc.data_format, buf.desc.num_format)
    };
    let fmt = texel::format(dfmt, nfmt, !load).map_err(|why| illegal(format!("{name}: {why}")))?;
    let size = fmt.bytes();
    let reg = Wave::vslot(inst.src[1]);
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (place, inside) = buf.lane(w, l, size);
        let whole = inside >= size;
        if load {
            let mut raw = [0u8; 16];
            if whole {
                match access(ctx, w, l, place, size, false)? {
                    Target::Bytes(b) => raw[..size as usize].copy_from_slice(b),
                    Target::Host(p, _) => load_bytes(p, &mut raw[..size as usize]),
                    Target::Nothing => {}
                }
            }
            let comps = if whole {
                fmt.unpack(&raw[..size as usize])
            } else {
                [0; 4]
            };
            let mut out = comps;
            if !typed && whole {
                for (o, &sel) in out.iter_mut().zip(&buf.desc.dst_sel) {
                    *o = texel::dst_sel(sel, &comps, fmt.one());
                }
            }
            if inst.ctrl & flags::LDS != 0 {
                lds_put(ctx, lds_dma_address(w, inst, l), 4, out[0] as u64);
            } else if d16 {
                for k in 0..count {
                    let half = k + hi as usize;
                    put_half(
                        w,
                        (reg + half / 2) & 511,
                        l,
                        half % 2 == 1,
                        fmt.narrow_d16(out[k]),
                    );
                }
            } else {
                for (k, &v) in out.iter().enumerate().take(count) {
                    w.v[(reg + k) & 511][l] = v;
                }
            }
        } else {
            let mut regs = [0u32; 4];
            for (k, x) in regs.iter_mut().enumerate().take(count) {
                *x = if d16 {
                    let v = w.v[(reg + (k + hi as usize) / 2) & 511][l];
                    let h = (v >> (16 * ((k + hi as usize) % 2))) as u16;
                    fmt.widen_d16(h)
                } else {
                    w.v[(reg + k) & 511][l]
                };
            }
            if whole {
                let bytes = fmt.pack(&regs, count);
                match access(ctx, w, l, place, size, true)? {
                    Target::Bytes(t) => t.copy_from_slice(&bytes[..size as usize]),
                    Target::Host(p, _) => store_bytes(p, &bytes[..size as usize]),
                    Target::Nothing => {}
                }
            }
        }
    }
    w.lane_insts += exec.count_ones() as u64;
    Ok(Flow::Next)
}

/// How many leading bytes of a buffer access of `size` bytes pass the V#'s range check (GFX9
/// rules): with an index (a structured buffer) the whole access is in range when the index is
/// below NUM_RECORDS; without one (a raw buffer) each dword is in range when its byte offset
/// (the VGPR and instruction offsets, never SOFFSET) is below NUM_RECORDS, and a sub-dword
/// access when its own offset is. Out-of-range loads read 0; stores and atomics are dropped.
fn bytes_in_range(idxen: bool, index: u64, offset: u64, size: u32, num_records: u64) -> u32 {
    if idxen {
        return if index < num_records { size } else { 0 };
    }
    if size < 4 {
        return if offset < num_records { size } else { 0 };
    }
    let dwords = (0..size / 4)
        .take_while(|&i| offset + 4 * u64::from(i) < num_records)
        .count() as u32;
    dwords * 4
}

/// The LDS byte a lane addresses: its address register plus the instruction's offset, in 32
/// bits (a negative base with a positive offset, as clang folds `base - k`, reaches low LDS).
fn lds_address(vaddr: u32, offset: u32) -> u64 {
    u64::from(vaddr.wrapping_add(offset))
}

/// `n` bytes of LDS at `a` (0 out of range). Inlined: each call site has a constant `n`, and
/// the copy of a known size is a move, not a call (not inlined, LDS-heavy kernels ran at half
/// speed).
#[inline(always)]
fn lds_get(ctx: &Ctx<'_>, a: u64, n: usize) -> u64 {
    if a + n as u64 > ctx.lds.len() as u64 {
        return 0;
    }
    let a = a as usize;
    if a + n > ctx.lds.len() {
        return 0;
    }
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&ctx.lds[a..a + n]);
    u64::from_le_bytes(b)
}

/// Writes the low `n` bytes of `v` to LDS at `a` (dropped out of range); inlined as
/// [`lds_get`].
#[inline(always)]
fn lds_put(ctx: &mut Ctx<'_>, a: u64, n: usize, v: u64) {
    if a + n as u64 > ctx.lds.len() as u64 {
        return;
    }
    let a = a as usize;
    if a + n > ctx.lds.len() {
        return;
    }
    ctx.lds[a..a + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Global wave sync: `ds_gws_init` needs no state here (the barrier instruction carries its
/// member count); `ds_gws_barrier` waits for `value + 1` waves, value from the first active
/// lane of its VGPR (the count minus one, as `ds_gws_init` takes it).
fn gws(w: &mut Wave, inst: &Inst) -> Step {
    let exec = w.exec();
    if inst.op == ds_gws_init || exec == 0 {
        return Ok(Flow::Next);
    }
    let lane = exec.trailing_zeros() as usize;
    let value = w.v[Wave::vslot(inst.src[0])][lane];
    Ok(Flow::GridBarrier(value.saturating_add(1)))
}

fn ds(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    if matches!(inst.op, ds_gws_init | ds_gws_barrier) {
        return gws(w, inst);
    }
    if matches!(
        inst.op,
        ds_gws_sema_v | ds_gws_sema_br | ds_gws_sema_p | ds_gws_sema_release_all
    ) {
        return Err(illegal(format!(
            "{}: GDS/GWS is not emulated",
            inst.op.name()
        )));
    }
    if inst.ctrl & flags::GDS != 0 {
        return Err(illegal("GDS is not emulated"));
    }
    if matches!(inst.op, ds_append | ds_consume) {
        return ds_append_consume(w, ctx, inst);
    }
    let exec = w.exec();
    if let Some(p) = CrossLane::of(inst) {
        cross_lane(w, &p, exec);
        return Ok(Flow::Next);
    }
    // The reference engine keeps the per-lane loop below.
    if let Some(p) = PlainDs::of(inst).filter(|_| ctx.fast) {
        plain_ds(w, ctx, &p, exec);
        return Ok(Flow::Next);
    }
    let op = inst.op;
    let addr = Wave::vslot(inst.src[0]);
    let d0 = Wave::vslot(inst.src[1]);
    let d1 = Wave::vslot(inst.src[2]);
    let dst = Wave::vslot(inst.dst);
    let off = inst.imm as u32 & 0xFFFF;
    let (o0, o1) = ((off & 0xFF) as u64, (off >> 8) as u64);
    w.lane_insts += exec.count_ones() as u64;
    let active = |l: usize| exec >> l & 1 != 0;
    let dword = |w: &Wave, r: usize, l: usize| w.v[r & 511][l] as u64;
    let qword = |w: &Wave, r: usize, l: usize| {
        w.v[r & 511][l] as u64 | (w.v[(r + 1) & 511][l] as u64) << 32
    };
    for l in 0..LANES {
        if !active(l) {
            continue;
        }
        let vaddr = w.v[addr][l];
        let at = |x: u64| lds_address(vaddr, x as u32);
        let off = off as u64;
        match op {
            ds_write_b8 => lds_put(ctx, at(off), 1, dword(w, d0, l)),
            ds_write_b16 => lds_put(ctx, at(off), 2, dword(w, d0, l)),
            ds_write_b32 => lds_put(ctx, at(off), 4, dword(w, d0, l)),
            ds_write_b64 => lds_put(ctx, at(off), 8, qword(w, d0, l)),
            ds_write_b96 | ds_write_b128 => {
                let n = if op == ds_write_b96 { 3 } else { 4 };
                for k in 0..n {
                    lds_put(ctx, at(off + 4 * k as u64), 4, dword(w, d0 + k, l));
                }
            }
            ds_write2_b32 | ds_write2st64_b32 => {
                let m = if op == ds_write2_b32 { 4 } else { 256 };
                lds_put(ctx, at(o0 * m), 4, dword(w, d0, l));
                lds_put(ctx, at(o1 * m), 4, dword(w, d1, l));
            }
            ds_write2_b64 | ds_write2st64_b64 => {
                let m = if op == ds_write2_b64 { 8 } else { 512 };
                lds_put(ctx, at(o0 * m), 8, qword(w, d0, l));
                lds_put(ctx, at(o1 * m), 8, qword(w, d1, l));
            }
            ds_write_b8_d16_hi => lds_put(ctx, at(off), 1, dword(w, d0, l) >> 16),
            ds_write_b16_d16_hi => lds_put(ctx, at(off), 2, dword(w, d0, l) >> 16),
            ds_read_u8_d16 | ds_read_u8_d16_hi | ds_read_i8_d16 | ds_read_i8_d16_hi
            | ds_read_u16_d16 | ds_read_u16_d16_hi => {
                // The value widens to 16 bits and replaces one half of the register; the other
                // half keeps its contents (packed f16/i16 data built one element at a time).
                let v = match op {
                    ds_read_u8_d16 | ds_read_u8_d16_hi => lds_get(ctx, at(off), 1) as u32,
                    ds_read_i8_d16 | ds_read_i8_d16_hi => {
                        lds_get(ctx, at(off), 1) as u8 as i8 as i16 as u16 as u32
                    }
                    _ => lds_get(ctx, at(off), 2) as u32,
                };
                let old = w.v[dst][l];
                let high = matches!(
                    op,
                    ds_read_u8_d16_hi | ds_read_i8_d16_hi | ds_read_u16_d16_hi
                );
                w.v[dst][l] = if high {
                    (old & 0xFFFF) | v << 16
                } else {
                    (old & 0xFFFF_0000) | v
                };
            }
            ds_read_addtid_b32 | ds_write_addtid_b32 => {
                // No address VGPR: M0[15:0] plus the offset is the wave's base, and each lane
                // takes the dword at its lane number.
                let a = (w.m0() & 0xFFFF) as u64 + off + 4 * l as u64;
                if op == ds_read_addtid_b32 {
                    w.v[dst][l] = lds_get(ctx, a, 4) as u32;
                } else {
                    lds_put(ctx, a, 4, dword(w, d0, l));
                }
            }
            ds_wrxchg2_rtn_b32
            | ds_wrxchg2st64_rtn_b32
            | ds_wrxchg2_rtn_b64
            | ds_wrxchg2st64_rtn_b64 => {
                // Two exchanges at the read2/write2 addresses; the old values return in order.
                let (n, m) = match op {
                    ds_wrxchg2_rtn_b32 => (4, 4),
                    ds_wrxchg2st64_rtn_b32 => (4, 256),
                    ds_wrxchg2_rtn_b64 => (8, 8),
                    _ => (8, 512),
                };
                let wide = n == 8;
                let data = |r| if wide { qword(w, r, l) } else { dword(w, r, l) };
                let (x, y) = (data(d0), data(d1));
                let old0 = lds_get(ctx, at(o0 * m), n);
                let old1 = lds_get(ctx, at(o1 * m), n);
                lds_put(ctx, at(o0 * m), n, x);
                lds_put(ctx, at(o1 * m), n, y);
                let k = n / 4;
                for (j, old) in [old0, old1].into_iter().enumerate() {
                    w.v[(dst + j * k) & 511][l] = old as u32;
                    if wide {
                        w.v[(dst + j * k + 1) & 511][l] = (old >> 32) as u32;
                    }
                }
            }
            ds_condxchg32_rtn_b64 => {
                // Two dwords at an 8-byte aligned address: each is replaced by its data dword
                // with bit 31 cleared when that bit is set, and returns its old value.
                let base = at(off) & 0xFFF8;
                let data = qword(w, d0, l);
                for k in 0..2 {
                    let byte = base + 4 * k as u64;
                    let old = lds_get(ctx, byte, 4);
                    let x = (data >> (32 * k)) as u32;
                    if x >> 31 != 0 {
                        lds_put(ctx, byte, 4, (x & 0x7FFF_FFFF) as u64);
                    }
                    w.v[(dst + k) & 511][l] = old as u32;
                }
            }
            ds_read_b32 => w.v[dst][l] = lds_get(ctx, at(off), 4) as u32,
            ds_read_u8 => w.v[dst][l] = lds_get(ctx, at(off), 1) as u32,
            ds_read_i8 => w.v[dst][l] = lds_get(ctx, at(off), 1) as u8 as i8 as i32 as u32,
            ds_read_u16 => w.v[dst][l] = lds_get(ctx, at(off), 2) as u32,
            ds_read_i16 => w.v[dst][l] = lds_get(ctx, at(off), 2) as u16 as i16 as i32 as u32,
            ds_read_b64 | ds_read_b96 | ds_read_b128 => {
                let n = match op {
                    ds_read_b64 => 2,
                    ds_read_b96 => 3,
                    _ => 4,
                };
                for k in 0..n {
                    w.v[(dst + k) & 511][l] = lds_get(ctx, at(off + 4 * k as u64), 4) as u32;
                }
            }
            ds_read2_b32 | ds_read2st64_b32 => {
                let m = if op == ds_read2_b32 { 4 } else { 256 };
                w.v[dst][l] = lds_get(ctx, at(o0 * m), 4) as u32;
                w.v[(dst + 1) & 511][l] = lds_get(ctx, at(o1 * m), 4) as u32;
            }
            ds_read2_b64 | ds_read2st64_b64 => {
                let m = if op == ds_read2_b64 { 8 } else { 512 };
                let x = lds_get(ctx, at(o0 * m), 8);
                let y = lds_get(ctx, at(o1 * m), 8);
                for (k, v) in [x as u32, (x >> 32) as u32, y as u32, (y >> 32) as u32]
                    .into_iter()
                    .enumerate()
                {
                    w.v[(dst + k) & 511][l] = v;
                }
            }
            _ => {
                let Some(op_at) = atomic(op) else {
                    return Err(illegal(format!("{} is not implemented", op.name())));
                };
                let regs = [d0, d1, dst].map(|r| r as u16);
                lds_atomic_lane(w, ctx, op_at, regs, l, at(off));
            }
        }
    }
    Ok(Flow::Next)
}

/// A DS atomic (`ds_add_u32`, `ds_max_rtn_i32`, `ds_cmpst_b64`, ...), its operands resolved.
pub(crate) struct LdsAtomic {
    atomic: Atomic,
    /// The address VGPR slot.
    addr: u16,
    /// The data0, data1 and destination VGPR slots.
    regs: [u16; 3],
    off: u32,
}

impl LdsAtomic {
    /// The atomic `inst` makes, or `None` for any other DS instruction (GDS included).
    pub(super) fn of(inst: &Inst) -> Option<LdsAtomic> {
        if inst.enc != Enc::Ds || inst.ctrl & flags::GDS != 0 {
            return None;
        }
        Some(LdsAtomic {
            atomic: atomic(inst.op)?,
            addr: Wave::vslot(inst.src[0]) as u16,
            regs: [inst.src[1], inst.src[2], inst.dst].map(|r| Wave::vslot(r) as u16),
            off: inst.imm as u32 & 0xFFFF,
        })
    }
}

/// Runs an [`LdsAtomic`] in the lanes of `exec`, lane by lane in lane order as the per-lane
/// path does (the lanes counted).
pub(super) fn lds_atomic(w: &mut Wave, ctx: &mut Ctx<'_>, p: &LdsAtomic, exec: u64) {
    w.lane_insts += exec.count_ones() as u64;
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = lds_address(w.v[p.addr as usize][l], p.off);
        lds_atomic_lane(w, ctx, p.atomic, p.regs, l, a);
    }
}

/// Lane `l`'s DS atomic `at` at LDS byte `a` (out of range: reads 0, writes nothing), its
/// data0, data1 and destination registers `[d0, d1, dst]`.
fn lds_atomic_lane(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    at: Atomic,
    [d0, d1, dst]: [u16; 3],
    l: usize,
    a: u64,
) {
    let n = if at.wide { 8 } else { 4 };
    let old = lds_get(ctx, a, n);
    let lane_data = |r: u16| {
        let lo = w.v[r as usize & 511][l] as u64;
        if at.wide {
            lo | (w.v[(r as usize + 1) & 511][l] as u64) << 32
        } else {
            lo
        }
    };
    // DS compare-and-store compares with data0 and stores data1; the other two-operand
    // atomics (mskor, wrap) take data0 first.
    let (data, cmp) = match at.rmw {
        Rmw::CmpSwap | Rmw::CmpSwapF => (lane_data(d1), lane_data(d0)),
        r if r.second_operand() => (lane_data(d0), lane_data(d1)),
        _ => (lane_data(d0), 0),
    };
    lds_put(ctx, a, n, at.rmw.apply(at.wide, old, data, cmp));
    if at.returns {
        let dst = dst as usize & 511;
        w.v[dst][l] = old as u32;
        if at.wide {
            w.v[(dst + 1) & 511][l] = (old >> 32) as u32;
        }
    }
}

/// A DS instruction that moves dwords between the lanes of a wave and leaves the LDS alone:
/// `ds_swizzle_b32` (lane pattern from the offset, data from the address operand),
/// `ds_permute_b32` (each lane writes its data to the lane its address names) and
/// `ds_bpermute_b32` (each lane reads the lane its address names); a lane EXEC leaves out
/// neither sends nor is read (0).
pub(crate) struct CrossLane {
    op: Op,
    addr: u16,
    data: u16,
    dst: u16,
    off: u32,
}

impl CrossLane {
    pub(super) fn of(inst: &Inst) -> Option<CrossLane> {
        let lane_op = matches!(inst.op, ds_swizzle_b32 | ds_permute_b32 | ds_bpermute_b32);
        (inst.enc == Enc::Ds && lane_op && inst.ctrl & flags::GDS == 0).then(|| CrossLane {
            op: inst.op,
            addr: Wave::vslot(inst.src[0]) as u16,
            data: Wave::vslot(inst.src[1]) as u16,
            dst: Wave::vslot(inst.dst) as u16,
            off: inst.imm as u32 & 0xFFFF,
        })
    }
}

/// Runs a [`CrossLane`] instruction in the lanes of `exec` (the lanes counted).
pub(super) fn cross_lane(w: &mut Wave, p: &CrossLane, exec: u64) {
    w.lane_insts += exec.count_ones() as u64;
    let (addr, off) = (p.addr as usize, p.off);
    let src = w.v[p.data as usize];
    let src_swz = w.v[addr];
    let mut out = w.v[p.dst as usize];
    let active = |l: usize| exec >> l & 1 != 0;
    if p.op == ds_permute_b32 {
        let mut tmp = [0u32; LANES];
        for l in 0..LANES {
            if active(l) {
                let t = ((w.v[addr][l].wrapping_add(off)) / 4) as usize & 63;
                tmp[t] = src[l];
            }
        }
        for l in 0..LANES {
            if active(l) {
                out[l] = tmp[l];
            }
        }
    } else if p.op == ds_bpermute_b32 {
        // EXEC applies to the source lanes too: a lane reading an inactive one gets 0.
        for l in 0..LANES {
            if active(l) {
                let s = ((w.v[addr][l].wrapping_add(off)) / 4) as usize & 63;
                out[l] = if active(s) { src[s] } else { 0 };
            }
        }
    } else {
        for l in 0..LANES {
            if !active(l) {
                continue;
            }
            let s = if off & 0x8000 != 0 {
                (l & !3) | ((off as usize >> (2 * (l & 3))) & 3)
            } else {
                let and = (off & 0x1F) as usize;
                let or = ((off >> 5) & 0x1F) as usize;
                let xor = ((off >> 10) & 0x1F) as usize;
                (l & !31) | (((l & 31 & and) | or) ^ xor)
            };
            out[l] = src_swz[s];
        }
    }
    w.v[p.dst as usize] = out;
}

/// A plain LDS load or store, as units of 1, 2, 4 or 8 bytes (each read or written whole, or
/// not at all when it lies past the end of the LDS): per lane, unit `k` at the lane's address
/// plus `at[k]`, its dwords in the registers from slot `reg[k]`. A unit under 4 bytes is
/// stored from the low bytes of its register and loaded into the whole register, widened with
/// its sign when `signed`.
pub(crate) struct PlainDs {
    pub(super) store: bool,
    pub(super) size: u8,
    pub(super) signed: bool,
    pub(super) units: u8,
    /// The address VGPR slot.
    pub(super) addr: u16,
    pub(super) at: [u32; 4],
    pub(super) reg: [u16; 4],
}

impl PlainDs {
    /// The plain access `inst` makes, or `None` for any other DS instruction (GDS included).
    pub(super) fn of(inst: &Inst) -> Option<PlainDs> {
        if inst.enc != Enc::Ds || inst.ctrl & flags::GDS != 0 {
            return None;
        }
        let off = inst.imm as u32 & 0xFFFF;
        let (o0, o1) = (off & 0xFF, off >> 8);
        let addr = Wave::vslot(inst.src[0]) as u16;
        let dst = Wave::vslot(inst.dst) as u16;
        let (d0, d1) = (
            Wave::vslot(inst.src[1]) as u16,
            Wave::vslot(inst.src[2]) as u16,
        );
        // Units 4 bytes apart from the offset, in consecutive registers from `base`.
        let run = |store, units: u8, base: u16| PlainDs {
            store,
            size: 4,
            signed: false,
            units,
            addr,
            at: std::array::from_fn(|k| off + 4 * k as u32),
            reg: std::array::from_fn(|k| base + k as u16),
        };
        // Two units at the offsets' multiples of `m`.
        let pair = |store, size, m: u32, regs: [u16; 2]| PlainDs {
            store,
            size,
            signed: false,
            units: 2,
            addr,
            at: [o0 * m, o1 * m, 0, 0],
            reg: [regs[0], regs[1], 0, 0],
        };
        // One unit of `size` bytes under a dword.
        let narrow = |store, size, signed, reg| PlainDs {
            size,
            signed,
            ..run(store, 1, reg)
        };
        Some(match inst.op {
            ds_read_u8 => narrow(false, 1, false, dst),
            ds_read_i8 => narrow(false, 1, true, dst),
            ds_read_u16 => narrow(false, 2, false, dst),
            ds_read_i16 => narrow(false, 2, true, dst),
            ds_write_b8 => narrow(true, 1, false, d0),
            ds_write_b16 => narrow(true, 2, false, d0),
            ds_read_b32 => run(false, 1, dst),
            ds_read_b64 => run(false, 2, dst),
            ds_read_b96 => run(false, 3, dst),
            ds_read_b128 => run(false, 4, dst),
            ds_write_b32 => run(true, 1, d0),
            ds_write_b96 => run(true, 3, d0),
            ds_write_b128 => run(true, 4, d0),
            ds_write_b64 => PlainDs {
                size: 8,
                units: 1,
                ..run(true, 1, d0)
            },
            ds_read2_b32 => pair(false, 4, 4, [dst, dst + 1]),
            ds_read2st64_b32 => pair(false, 4, 256, [dst, dst + 1]),
            ds_read2_b64 => pair(false, 8, 8, [dst, dst + 2]),
            ds_read2st64_b64 => pair(false, 8, 512, [dst, dst + 2]),
            ds_write2_b32 => pair(true, 4, 4, [d0, d1]),
            ds_write2st64_b32 => pair(true, 4, 256, [d0, d1]),
            ds_write2_b64 => pair(true, 8, 8, [d0, d1]),
            ds_write2st64_b64 => pair(true, 8, 512, [d0, d1]),
            _ => return None,
        })
    }
}

/// Runs a [`PlainDs`] access in the lanes of `exec` (the lanes counted).
pub(super) fn plain_ds(w: &mut Wave, ctx: &mut Ctx<'_>, p: &PlainDs, exec: u64) {
    w.lane_insts += exec.count_ones() as u64;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        unsafe { plain_ds_avx2(w, ctx, p, exec) };
        return;
    }
    plain_ds_sized(w, ctx, p, exec);
}

/// [`plain_ds_sized`] compiled for AVX2: the address checks and the eight-lane copies
/// vectorise.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn plain_ds_avx2(w: &mut Wave, ctx: &mut Ctx<'_>, p: &PlainDs, exec: u64) {
    plain_ds_sized(w, ctx, p, exec);
}

/// [`plain_ds`] by operation and unit size.
#[inline(always)]
fn plain_ds_sized(w: &mut Wave, ctx: &mut Ctx<'_>, p: &PlainDs, exec: u64) {
    match (p.store, p.size) {
        (false, 1) => plain_ds_units::<false, 1>(w, ctx, p, exec),
        (false, 2) => plain_ds_units::<false, 2>(w, ctx, p, exec),
        (false, 4) => plain_ds_units::<false, 4>(w, ctx, p, exec),
        (false, _) => plain_ds_units::<false, 8>(w, ctx, p, exec),
        (true, 1) => plain_ds_units::<true, 1>(w, ctx, p, exec),
        (true, 2) => plain_ds_units::<true, 2>(w, ctx, p, exec),
        (true, 4) => plain_ds_units::<true, 4>(w, ctx, p, exec),
        (true, _) => plain_ds_units::<true, 8>(w, ctx, p, exec),
    }
}

/// [`plain_ds`] with the operation and unit size fixed for the whole loop. When every unit of
/// every EXEC lane lies within the LDS (the usual case, one check per instruction), the lanes
/// go eight at a time ([`Spread`]); otherwise each unit is checked on its own (one past the end
/// is dropped, or reads zero).
#[inline(always)]
fn plain_ds_units<const STORE: bool, const SIZE: usize>(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    p: &PlainDs,
    exec: u64,
) {
    let addrs = w.v[p.addr as usize];
    let units = p.units as usize;
    let top = if exec == u64::MAX {
        addrs.iter().copied().max()
    } else {
        (0..LANES)
            .filter(|&l| exec >> l & 1 != 0)
            .map(|l| addrs[l])
            .max()
    };
    let reach = p.at[..units].iter().max().map_or(0, |&m| m as u64) + SIZE as u64;
    let Some(top) = top else { return };
    if top as u64 + reach > ctx.lds.len() as u64 {
        return plain_ds_checked::<STORE, SIZE>(w, ctx, p, &addrs, exec);
    }
    let spreads: [Spread; LANES / 8] = std::array::from_fn(|c| Spread::of::<SIZE>(&addrs, exec, c));
    if STORE {
        ds_store_units::<SIZE>(w, ctx.lds, p, &addrs, exec, &spreads);
    } else {
        ds_load_units::<SIZE>(w, ctx.lds, p, &addrs, exec, &spreads);
    }
}

/// How the addresses of eight lanes lie, when all eight are in EXEC.
#[derive(Clone, Copy, PartialEq)]
enum Spread {
    /// One address.
    Same,
    /// Lane `i` of the eight at the first one's address plus `i` units: one range.
    Run,
    /// Anything else, or some lane not in EXEC: lane by lane.
    Lanes,
}

impl Spread {
    /// The spread of lanes `8c..8c + 8` for units of `SIZE` bytes.
    #[inline(always)]
    fn of<const SIZE: usize>(addrs: &VReg, exec: u64, c: usize) -> Spread {
        if (exec >> (8 * c)) as u8 != 0xFF {
            return Spread::Lanes;
        }
        let eight = &addrs[8 * c..8 * c + 8];
        let (mut same, mut run) = (true, true);
        for (i, &a) in eight.iter().enumerate() {
            same &= a == eight[0];
            run &= a == eight[0].wrapping_add((i * SIZE) as u32);
        }
        match (same, run) {
            (true, _) => Spread::Same,
            (_, true) => Spread::Run,
            _ => Spread::Lanes,
        }
    }
}

/// The `SIZE`-byte little-endian unit at the start of `b`.
#[inline(always)]
fn unit_at<const SIZE: usize>(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    v[..SIZE].copy_from_slice(&b[..SIZE]);
    u64::from_le_bytes(v)
}

/// The loads of [`plain_ds_units`], every unit within `lds`: unit by unit over the lanes (the
/// addresses were copied before any register is written).
#[inline(always)]
fn ds_load_units<const SIZE: usize>(
    w: &mut Wave,
    lds: &[u8],
    p: &PlainDs,
    addrs: &VReg,
    exec: u64,
    spreads: &[Spread; LANES / 8],
) {
    let widen = |v: u64| match SIZE {
        1 if p.signed => v as u8 as i8 as u32,
        2 if p.signed => v as u16 as i16 as u32,
        _ => v as u32,
    };
    for k in 0..p.units as usize {
        let (off, r) = (p.at[k] as usize, p.reg[k] as usize);
        for (c, spread) in spreads.iter().enumerate() {
            let mut vals = [0u64; 8];
            let first = addrs[8 * c] as usize + off;
            match spread {
                Spread::Same => vals = [unit_at::<SIZE>(&lds[first..]); 8],
                Spread::Run => {
                    let range = &lds[first..first + 8 * SIZE];
                    for (i, v) in vals.iter_mut().enumerate() {
                        *v = unit_at::<SIZE>(&range[i * SIZE..]);
                    }
                }
                Spread::Lanes => {
                    for (i, v) in vals.iter_mut().enumerate() {
                        let l = 8 * c + i;
                        if exec >> l & 1 != 0 {
                            *v = unit_at::<SIZE>(&lds[addrs[l] as usize + off..]);
                        }
                    }
                }
            }
            let on = (exec >> (8 * c)) as u8;
            if on == 0xFF {
                for (i, &v) in vals.iter().enumerate() {
                    w.v[r & 511][8 * c + i] = widen(v);
                }
                if SIZE == 8 {
                    for (i, &v) in vals.iter().enumerate() {
                        w.v[(r + 1) & 511][8 * c + i] = (v >> 32) as u32;
                    }
                }
                continue;
            }
            for (i, &v) in vals.iter().enumerate() {
                if on >> i & 1 != 0 {
                    w.v[r & 511][8 * c + i] = widen(v);
                    if SIZE == 8 {
                        w.v[(r + 1) & 511][8 * c + i] = (v >> 32) as u32;
                    }
                }
            }
        }
    }
}

/// The stores of [`plain_ds_units`], every unit within `lds`, lane by lane with each lane's
/// units in order, as the per-lane engine writes them (lanes whose units overlap leave the
/// same bytes): a single unit of eight lanes in one range is one copy, at one address the
/// last lane's.
#[inline(always)]
fn ds_store_units<const SIZE: usize>(
    w: &Wave,
    lds: &mut [u8],
    p: &PlainDs,
    addrs: &VReg,
    exec: u64,
    spreads: &[Spread; LANES / 8],
) {
    let unit = |r: usize, l: usize| {
        let mut v = w.v[r & 511][l] as u64;
        if SIZE == 8 {
            v |= (w.v[(r + 1) & 511][l] as u64) << 32;
        }
        v.to_le_bytes()
    };
    for (c, spread) in spreads.iter().enumerate() {
        let first = addrs[8 * c] as usize + p.at[0] as usize;
        match spread {
            Spread::Run if p.units == 1 => {
                let range = &mut lds[first..first + 8 * SIZE];
                for (i, b) in range.chunks_exact_mut(SIZE).enumerate() {
                    b.copy_from_slice(&unit(p.reg[0] as usize, 8 * c + i)[..SIZE]);
                }
            }
            Spread::Same if p.units == 1 => {
                lds[first..first + SIZE]
                    .copy_from_slice(&unit(p.reg[0] as usize, 8 * c + 7)[..SIZE]);
            }
            _ => {
                for l in (8 * c..8 * c + 8).filter(|&l| exec >> l & 1 != 0) {
                    for k in 0..p.units as usize {
                        let at = addrs[l] as usize + p.at[k] as usize;
                        lds[at..at + SIZE].copy_from_slice(&unit(p.reg[k] as usize, l)[..SIZE]);
                    }
                }
            }
        }
    }
}

/// [`plain_ds_units`] when some unit may lie past the end of the LDS: lane by lane, each unit
/// checked.
fn plain_ds_checked<const STORE: bool, const SIZE: usize>(
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    p: &PlainDs,
    addrs: &VReg,
    exec: u64,
) {
    for l in (0..LANES).filter(|&l| exec >> l & 1 != 0) {
        for k in 0..p.units as usize {
            let (at, r) = (lds_address(addrs[l], p.at[k]), p.reg[k] as usize);
            if STORE {
                let mut v = w.v[r & 511][l] as u64;
                if SIZE == 8 {
                    v |= (w.v[(r + 1) & 511][l] as u64) << 32;
                }
                lds_put(ctx, at, SIZE, v);
            } else {
                let v = lds_get(ctx, at, SIZE);
                w.v[r & 511][l] = match SIZE {
                    1 if p.signed => v as u8 as i8 as u32,
                    2 if p.signed => v as u16 as i16 as u32,
                    _ => v as u32,
                };
                if SIZE == 8 {
                    w.v[(r + 1) & 511][l] = (v >> 32) as u32;
                }
            }
        }
    }
}

/// `ds_append` / `ds_consume`: one atomic add (subtract) of the number of active lanes to the
/// dword at M0[15:0] plus the offset, the wave's ring-buffer counter. Every active lane gets
/// the same pre-operation value (a lane adds its `mbcnt` to find its own slot).
fn ds_append_consume(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let exec = w.exec();
    w.lane_insts += exec.count_ones() as u64;
    if exec == 0 {
        return Ok(Flow::Next);
    }
    let a = (w.m0() & 0xFFFF) as u64 + (inst.imm as u32 & 0xFFFF) as u64;
    let old = lds_get(ctx, a, 4) as u32;
    let n = exec.count_ones();
    let new = if inst.op == ds_append {
        old.wrapping_add(n)
    } else {
        old.wrapping_sub(n)
    };
    lds_put(ctx, a, 4, new as u64);
    let dst = Wave::vslot(inst.dst);
    for l in 0..LANES {
        if exec >> l & 1 != 0 {
            w.v[dst][l] = old;
        }
    }
    Ok(Flow::Next)
}

/// A GLOBAL load or store of a byte, a short or 1-4 whole dwords per lane (a byte or short
/// loaded into the whole register, widened with its sign when `signed`, or stored from the
/// register's low bytes), or a FLAT one (which [`global_access`] runs when
/// every lane's address is outside the LDS and private apertures), its operands resolved.
pub(crate) struct GlobalAccess {
    store: bool,
    /// A FLAT access: its lanes must be checked against the apertures.
    flat: bool,
    /// Dwords per lane (1 to 4; 1 for a byte or a short).
    dwords: u8,
    /// Bytes per access: 1, 2 or 4 (each dword of a wider access on its own).
    unit: u8,
    signed: bool,
    /// The address VGPR (pair) slot.
    vaddr: u16,
    /// The SGPR pair base, or `None` (`off`: 64-bit VGPR addresses).
    saddr: Option<u8>,
    imm: u64,
    /// The data (store) or destination (load) VGPR slot.
    reg: u16,
}

/// The resolved form of a GLOBAL or FLAT load or store of a byte, a short or whole dwords
/// ([`GlobalAccess`]), or `None` for any other access.
pub(super) fn global_access_plan(inst: &Inst) -> Option<GlobalAccess> {
    let (flat, saddr) = global_addressing(inst)?;
    if loads_to_lds(inst) {
        return None;
    }
    let (store, n, signed, reg) = match kind(inst.op)? {
        Kind::Load { n, sext, d16: None } => (false, n, sext, inst.dst),
        Kind::Store { n, hi: false } => (true, n, false, inst.src[1]),
        _ => return None,
    };
    if !matches!(n, 1 | 2) && !n.is_multiple_of(4) {
        return None;
    }
    Some(GlobalAccess {
        store,
        flat,
        dwords: n.div_ceil(4) as u8,
        unit: n.min(4) as u8,
        signed,
        vaddr: (Wave::vslot(inst.src[0]) & 511) as u16,
        saddr,
        imm: inst.imm as i64 as u64,
        reg: (Wave::vslot(reg) & 511) as u16,
    })
}

/// Runs a GLOBAL dword access whose 64 lanes are all active and address one contiguous,
/// 4-byte aligned range in lane order, or a GLOBAL access whose active lanes' aligned units
/// lie within 16 MiB in any order ([`scattered_units`]): one translation and bounds check for
/// the whole range, then one relaxed atomic access per unit, as the per-lane path makes them.
/// False (nothing done) when the lanes take neither form or the memory does not vouch for the
/// range: the general path then runs the instruction, faults included.
pub(super) fn global_access(w: &mut Wave, ctx: &mut Ctx<'_>, p: &GlobalAccess) -> bool {
    let exec = w.exec();
    if exec == u64::MAX && p.unit == 4 && contiguous_dwords(w, ctx, p) {
        return true;
    }
    exec != 0 && scattered_units(w, ctx, p, exec)
}

/// [`global_access`] when every lane is active and the lanes address one range in lane order.
fn contiguous_dwords(w: &mut Wave, ctx: &mut Ctx<'_>, p: &GlobalAccess) -> bool {
    let n = 4 * p.dwords as u64;
    let lo = &w.v[p.vaddr as usize];
    // Lane `l`'s low address dword must be lane 0's plus `n * l`, without a carry out of the
    // low dword (then the high dwords must all be lane 0's): 32-bit compares that vectorise.
    if lo[0] as u64 + n * (LANES as u64 - 1) > u32::MAX as u64 {
        return false;
    }
    let (hi, high) = match p.saddr {
        None => {
            let hi = &w.v[(p.vaddr as usize + 1) & 511];
            (Some(hi), (hi[0] as u64) << 32)
        }
        Some(s) => (None, w.sgpr64(s as u16)),
    };
    let first = high.wrapping_add(lo[0] as u64).wrapping_add(p.imm);
    if !in_lane_order(lo, hi, n as u32)
        || !first.is_multiple_of(4)
        || first.checked_add(n * LANES as u64).is_none()
        || (p.flat && !outside_apertures(ctx, first, first + n * (LANES as u64 - 1)))
    {
        return false;
    }
    let Some(base) = ctx.spans.translate(ctx.mem, first, n * LANES as u64) else {
        return false;
    };
    if !(base.as_ptr() as usize).is_multiple_of(4) {
        return false;
    }
    let words = base.as_ptr() as *mut u32;
    let k = p.dwords as usize;
    if cfg!(target_endian = "little") && (base.as_ptr() as usize).is_multiple_of(8) {
        // SAFETY: the `4 * k * 64` bytes the memory translated, 8-byte aligned.
        unsafe {
            match k {
                1 => contiguous_pairs::<1>(w, p, words),
                2 => contiguous_pairs::<2>(w, p, words),
                3 => contiguous_pairs::<3>(w, p, words),
                _ => contiguous_pairs::<4>(w, p, words),
            }
        }
    } else {
        for j in 0..k {
            let r = (p.reg as usize + j) & 511;
            for l in 0..LANES {
                // SAFETY: dword `k * l + j` of the `4 * k * 64` bytes the memory translated,
                // 4-byte aligned (the base is), accessed atomically as the `GlobalMemory`
                // contract asks.
                let a = unsafe { AtomicU32::from_ptr(words.add(k * l + j)) };
                if p.store {
                    a.store(w.v[r][l], Ordering::Relaxed);
                } else {
                    w.v[r][l] = a.load(Ordering::Relaxed);
                }
            }
        }
    }
    w.lane_insts += LANES as u64;
    true
}

/// The copy of [`contiguous_dwords`] for `K`-dword units, two dwords (the same lane's or two
/// neighbours') per relaxed 8-byte atomic access: half the accesses of one per dword, each
/// dword still read or written whole.
///
/// # Safety
///
/// `words` is valid for `4 * K * 64` bytes of atomic accesses and 8-byte aligned; the host is
/// little-endian (the lower-addressed dword is the low half).
#[inline(always)]
unsafe fn contiguous_pairs<const K: usize>(w: &mut Wave, p: &GlobalAccess, words: *mut u32) {
    let row = |j: usize| (p.reg as usize + j) & 511;
    for i in 0..K * LANES / 2 {
        let (d0, d1) = (2 * i, 2 * i + 1);
        let (lo, hi) = ((row(d0 % K), d0 / K), (row(d1 % K), d1 / K));
        // SAFETY: dwords `2i` and `2i + 1` of the range, 8-byte aligned (the caller's promise).
        let a = unsafe { AtomicU64::from_ptr(words.add(d0) as *mut u64) };
        if p.store {
            let x = w.v[lo.0][lo.1] as u64 | (w.v[hi.0][hi.1] as u64) << 32;
            a.store(x, Ordering::Relaxed);
        } else {
            let x = a.load(Ordering::Relaxed);
            w.v[lo.0][lo.1] = x as u32;
            w.v[hi.0][hi.1] = (x >> 32) as u32;
        }
    }
}

/// A GLOBAL or FLAT atomic (`global_atomic_add`, `flat_atomic_cmpswap_x2`, ...), its
/// operands resolved.
pub(crate) struct GlobalAtomic {
    atomic: Atomic,
    flat: bool,
    /// The address VGPR (pair) slot.
    vaddr: u16,
    /// The SGPR pair base, or `None` (`off`: 64-bit VGPR addresses).
    saddr: Option<u8>,
    imm: u64,
    /// The data VGPR slot (data, then the compare value of a compare-and-swap).
    data: u16,
    /// Where the old value goes (GLC), or `None`.
    dst: Option<u16>,
}

impl GlobalAtomic {
    /// The resolved form of a GLOBAL or FLAT atomic, or `None` for any other instruction.
    pub(super) fn of(inst: &Inst) -> Option<GlobalAtomic> {
        let (flat, saddr) = global_addressing(inst)?;
        let Kind::Atomic(atomic) = kind(inst.op)? else {
            return None;
        };
        Some(GlobalAtomic {
            atomic,
            flat,
            vaddr: (Wave::vslot(inst.src[0]) & 511) as u16,
            saddr,
            imm: inst.imm as i64 as u64,
            data: (Wave::vslot(inst.src[1]) & 511) as u16,
            dst: (inst.ctrl & flags::GLC != 0).then_some((Wave::vslot(inst.dst) & 511) as u16),
        })
    }
}

/// Runs a [`GlobalAtomic`] as the per-lane path does (lane by lane, in lane order) when every
/// EXEC lane's address is aligned and translates through the thread's kept spans (a FLAT one's
/// lanes all outside the LDS and private apertures); false (nothing done) otherwise, or with
/// EXEC empty: the general path then runs it, faults included.
pub(super) fn global_atomic(w: &mut Wave, ctx: &mut Ctx<'_>, p: &GlobalAtomic) -> bool {
    let exec = w.exec();
    let (wide, n) = (p.atomic.wide, 4u64 << p.atomic.wide as u32);
    let addrs = lane_addresses(w, p.vaddr, p.saddr, p.imm);
    let Some(ptrs) = lane_pointers(ctx, &addrs, exec, [n, n], p.flat) else {
        return false;
    };
    let (rmw, dw) = (p.atomic.rmw, if wide { 2 } else { 1 });
    let cmpswap = rmw == Rmw::CmpSwap;
    let value = |w: &Wave, k: usize, l: usize| {
        let lo = w.v[(p.data as usize + k) & 511][l] as u64;
        if wide {
            lo | (w.v[(p.data as usize + k + 1) & 511][l] as u64) << 32
        } else {
            lo
        }
    };
    for (l, ptr) in ptrs.iter().enumerate() {
        let Some(ptr) = *ptr else { continue };
        let (data, cmp) = (value(w, 0, l), if cmpswap { value(w, dw, l) } else { 0 });
        let old = if wide {
            rmw64(ptr, |old| rmw.apply(true, old, data, cmp))
        } else {
            rmw32(ptr, |old| rmw.apply(false, old as u64, data, cmp) as u32) as u64
        };
        if let Some(d) = p.dst {
            w.v[d as usize][l] = old as u32;
            if wide {
                w.v[(d as usize + 1) & 511][l] = (old >> 32) as u32;
            }
        }
    }
    w.lane_insts += exec.count_ones() as u64;
    true
}

/// The addressing of a GLOBAL or FLAT instruction: whether it is FLAT, and its SGPR-pair
/// base (`None`: `off`, or FLAT; 64-bit VGPR addresses); `None` for the other segments and
/// for a base that is not an SGPR pair.
fn global_addressing(inst: &Inst) -> Option<(bool, Option<u8>)> {
    let flat = inst.segment() == seg::FLAT;
    if inst.enc != Enc::Flat || !(flat || inst.segment() == seg::GLOBAL) {
        return None;
    }
    let saddr = match inst.src[2] {
        _ if flat => None,
        OFF => None,
        c @ 0..=126 => Some(c as u8),
        _ => return None,
    };
    Some((flat, saddr))
}

/// Every lane's GLOBAL/FLAT address: the VGPR pair at `vaddr`, or the SGPR pair `saddr` plus
/// the VGPR at `vaddr`; plus `imm`.
fn lane_addresses(w: &Wave, vaddr: u16, saddr: Option<u8>, imm: u64) -> [u64; LANES] {
    let mut addrs = [0u64; LANES];
    let vl = &w.v[vaddr as usize];
    match saddr {
        None => {
            let vh = &w.v[(vaddr as usize + 1) & 511];
            for l in 0..LANES {
                addrs[l] = (vl[l] as u64 | (vh[l] as u64) << 32).wrapping_add(imm);
            }
        }
        Some(s) => {
            let base = w.sgpr64(s as u16).wrapping_add(imm);
            for l in 0..LANES {
                addrs[l] = base.wrapping_add(vl[l] as u64);
            }
        }
    }
    addrs
}

/// The host pointers of the EXEC lanes' `n` bytes at `addrs` (`None` for the other lanes),
/// each translated through the thread's kept spans; `None` when EXEC is empty, an address is
/// not a multiple of `align`, does not translate, or (`flat`) lies in the LDS or private
/// aperture.
fn lane_pointers(
    ctx: &mut Ctx<'_>,
    addrs: &[u64; LANES],
    exec: u64,
    [n, align]: [u64; 2],
    flat: bool,
) -> Option<[Option<NonNull<u8>>; LANES]> {
    let mut ptrs = [None; LANES];
    if exec == 0 {
        return None;
    }
    for (l, ptr) in ptrs.iter_mut().enumerate() {
        let a = addrs[l];
        if exec >> l & 1 == 0 {
            continue;
        }
        if !a.is_multiple_of(align) || (flat && !outside_apertures(ctx, a, a)) {
            return None;
        }
        let p = ctx.spans.translate(ctx.mem, a, n)?;
        if !(p.as_ptr() as usize).is_multiple_of(align as usize) {
            return None;
        }
        *ptr = Some(p);
    }
    Some(ptrs)
}

/// Whether FLAT addresses `first..=last` (one 4 GiB block, which [`lane_place`] classifies
/// whole) all go to global memory.
fn outside_apertures(ctx: &Ctx<'_>, first: u64, last: u64) -> bool {
    first >> 32 == last >> 32 && matches!(lane_place(ctx, first), Place::Global(_))
}

/// Whether lane `l`'s low address dword is lane 0's plus `step * l` and every high dword (if
/// any) is lane 0's.
#[inline(always)]
fn in_lane_order(lo: &VReg, hi: Option<&VReg>, step: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of the
        // target-feature function.
        return unsafe { in_lane_order_avx2(lo, hi, step) };
    }
    let mut apart = 0u32;
    for l in 0..LANES {
        apart |= lo[l] ^ lo[0].wrapping_add(step * l as u32);
    }
    if let Some(hi) = hi {
        for l in 0..LANES {
            apart |= hi[l] ^ hi[0];
        }
    }
    apart == 0
}

/// [`in_lane_order`] with AVX2, eight lanes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn in_lane_order_avx2(lo: &VReg, hi: Option<&VReg>, step: u32) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: lanes `8c..8c + 8` of a 64-lane row, `c` < 8.
    let lanes = |r: &VReg, c: usize| unsafe { row8(r.as_ptr(), c) };
    let s = step as i32;
    let mut want = _mm256_add_epi32(
        _mm256_set1_epi32(lo[0] as i32),
        _mm256_setr_epi32(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s),
    );
    let (next, high) = (
        _mm256_set1_epi32(8 * s),
        _mm256_set1_epi32(hi.map_or(0, |h| h[0]) as i32),
    );
    let mut apart = _mm256_setzero_si256();
    for c in 0..LANES / 8 {
        apart = _mm256_or_si256(apart, _mm256_xor_si256(lanes(lo, c), want));
        if let Some(hi) = hi {
            apart = _mm256_or_si256(apart, _mm256_xor_si256(lanes(hi, c), high));
        }
        want = _mm256_add_epi32(want, next);
    }
    _mm256_testz_si256(apart, apart) != 0
}
