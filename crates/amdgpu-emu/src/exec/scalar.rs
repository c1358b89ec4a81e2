//! Scalar ALU, program control and scalar memory.

use crate::decode::{Enc, Inst, OFF, Op, Op::*, Ty, flags};
use crate::fault::FaultKind;
use crate::memory::{load_bytes, rmw32, rmw64, store_bytes};
use crate::trace::ShaderDataRecord;
use crate::wave::Wave;

use super::atomic::{Atomic, Rmw, atomic};
use super::{Ctx, Flow, Step, check_sources, illegal, jump_to, sread, sread64};

pub(super) fn exec(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    match inst.enc {
        Enc::Sop2 => sop2(w, ctx, inst),
        Enc::Sop1 => sop1(w, ctx, inst),
        Enc::Sopc => sopc(w, ctx, inst),
        Enc::Sopk => sopk(w, ctx, inst),
        Enc::Sopp => sopp(w, ctx, inst),
        _ => smem(w, ctx, inst),
    }
}

fn src_ty(op: Op, k: usize) -> Ty {
    op.types().get(k + 1).copied().unwrap_or(Ty::B32)
}

/// `s_bfe_u32`/`s_bfe_i32`: `ctl[22:16]` bits of `v` from bit `ctl[4:0]`; the signed form
/// shifts arithmetically, so a field reaching past bit 31 takes the sign.
pub(super) fn bfe32(v: u32, ctl: u32, signed: bool) -> u32 {
    let off = ctl & 31;
    let width = (ctl >> 16) & 0x7F;
    if width == 0 {
        return 0;
    }
    let width = width.min(32);
    let x = if signed {
        ((v as i32) >> off) as u32
    } else {
        v >> off
    };
    if width >= 32 {
        return x;
    }
    let mask = (1u32 << width) - 1;
    let x = x & mask;
    if signed && (x >> (width - 1)) & 1 != 0 {
        x | !mask
    } else {
        x
    }
}

/// `s_bfe_u64`/`s_bfe_i64`, as [`bfe32`] on 64 bits.
fn bfe64(v: u64, ctl: u32, signed: bool) -> u64 {
    let off = ctl & 63;
    let width = ((ctl >> 16) & 0x7F).min(64);
    if width == 0 {
        return 0;
    }
    let x = if signed {
        ((v as i64) >> off) as u64
    } else {
        v >> off
    };
    if width >= 64 {
        return x;
    }
    let mask = (1u64 << width) - 1;
    let x = x & mask;
    if signed && (x >> (width - 1)) & 1 != 0 {
        x | !mask
    } else {
        x
    }
}

fn sop2(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    check_sources(inst, 2)?;
    let op = inst.op;
    let wide0 = src_ty(op, 0).dwords() == 2;
    let wide1 = src_ty(op, 1).dwords() == 2;
    let a = if wide0 {
        sread64(w, ctx, inst.src[0], src_ty(op, 0), inst.lit)
    } else {
        sread(w, ctx, inst.src[0], src_ty(op, 0), inst.lit) as u64
    };
    let b = if wide1 {
        sread64(w, ctx, inst.src[1], src_ty(op, 1), inst.lit)
    } else {
        sread(w, ctx, inst.src[1], src_ty(op, 1), inst.lit) as u64
    };
    let (a32, b32) = (a as u32, b as u32);
    let scc = w.scc;
    // (result, new scc or None to keep)
    let (r, s): (u64, Option<bool>) = match op {
        s_add_u32 => {
            let r = a32 as u64 + b32 as u64;
            (r as u32 as u64, Some(r >> 32 != 0))
        }
        s_sub_u32 => (a32.wrapping_sub(b32) as u64, Some(b32 > a32)),
        s_add_i32 => {
            let (r, o) = (a32 as i32).overflowing_add(b32 as i32);
            (r as u32 as u64, Some(o))
        }
        s_sub_i32 => {
            let (r, o) = (a32 as i32).overflowing_sub(b32 as i32);
            (r as u32 as u64, Some(o))
        }
        s_addc_u32 => {
            let r = a32 as u64 + b32 as u64 + scc as u64;
            (r as u32 as u64, Some(r >> 32 != 0))
        }
        s_subb_u32 => {
            let r = (a32 as u64)
                .wrapping_sub(b32 as u64)
                .wrapping_sub(scc as u64);
            (
                r as u32 as u64,
                Some((b32 as u64 + scc as u64) > a32 as u64),
            )
        }
        s_min_i32 => (
            (a32 as i32).min(b32 as i32) as u32 as u64,
            Some((a32 as i32) < (b32 as i32)),
        ),
        s_min_u32 => (a32.min(b32) as u64, Some(a32 < b32)),
        s_max_i32 => (
            (a32 as i32).max(b32 as i32) as u32 as u64,
            Some((a32 as i32) > (b32 as i32)),
        ),
        s_max_u32 => (a32.max(b32) as u64, Some(a32 > b32)),
        s_cselect_b32 | s_cselect_b64 => (if scc { a } else { b }, None),
        s_and_b32 | s_and_b64 => nz(a & b),
        s_or_b32 | s_or_b64 => nz(a | b),
        s_xor_b32 | s_xor_b64 => nz(a ^ b),
        s_andn2_b32 | s_andn2_b64 => nz(a & !b),
        s_orn2_b32 | s_orn2_b64 => nz(a | !b),
        s_nand_b32 | s_nand_b64 => nz(!(a & b)),
        s_nor_b32 | s_nor_b64 => nz(!(a | b)),
        s_xnor_b32 | s_xnor_b64 => nz(!(a ^ b)),
        s_lshl_b32 => nz((a32 << (b32 & 31)) as u64),
        s_lshl_b64 => nz(a << (b32 & 63)),
        s_lshr_b32 => nz((a32 >> (b32 & 31)) as u64),
        s_lshr_b64 => nz(a >> (b32 & 63)),
        s_ashr_i32 => nz(((a32 as i32) >> (b32 & 31)) as u32 as u64),
        s_ashr_i64 => nz(((a as i64) >> (b32 & 63)) as u64),
        s_bfm_b32 => (
            (((1u64 << (a32 & 31)) - 1) as u32).wrapping_shl(b32 & 31) as u64,
            None,
        ),
        s_bfm_b64 => (
            (((1u128 << (a32 & 63)) - 1) as u64).wrapping_shl(b32 & 63),
            None,
        ),
        s_mul_i32 => (a32.wrapping_mul(b32) as u64, None),
        s_bfe_u32 => nz(bfe32(a32, b32, false) as u64),
        s_bfe_i32 => nz(bfe32(a32, b32, true) as u64),
        s_bfe_u64 => nz(bfe64(a, b32, false)),
        s_bfe_i64 => nz(bfe64(a, b32, true)),
        s_absdiff_i32 => {
            nz(((a32 as i32 as i64) - (b32 as i32 as i64)).unsigned_abs() as u32 as u64)
        }
        s_mul_hi_u32 => (((a32 as u64 * b32 as u64) >> 32) as u32 as u64, None),
        s_mul_hi_i32 => (
            (((a32 as i32 as i64) * (b32 as i32 as i64)) >> 32) as u32 as u64,
            None,
        ),
        s_lshl1_add_u32 | s_lshl2_add_u32 | s_lshl3_add_u32 | s_lshl4_add_u32 => {
            let r = ((a32 as u64) << lshl_add_shift(op)) + b32 as u64;
            (r as u32 as u64, Some(r >> 32 != 0))
        }
        s_pack_ll_b32_b16 => (((a32 & 0xFFFF) | (b32 << 16)) as u64, None),
        s_pack_lh_b32_b16 => (((a32 & 0xFFFF) | (b32 & 0xFFFF_0000)) as u64, None),
        s_pack_hh_b32_b16 => (((a32 >> 16) | (b32 & 0xFFFF_0000)) as u64, None),
        _ => return Err(illegal(format!("{} is not implemented", op.name()))),
    };
    if op.types()[0].dwords() == 2 {
        w.set_sgpr64(inst.dst, r);
    } else {
        w.set_sgpr(inst.dst, r as u32);
    }
    if let Some(s) = s {
        w.scc = s;
    }
    Ok(Flow::Next)
}

/// The shift of one of the four `s_lshl<n>_add_u32` operations.
pub(super) fn lshl_add_shift(op: Op) -> u32 {
    match op {
        s_lshl1_add_u32 => 1,
        s_lshl2_add_u32 => 2,
        s_lshl3_add_u32 => 3,
        _ => 4,
    }
}

fn nz(r: u64) -> (u64, Option<bool>) {
    (r, Some(r != 0))
}

fn nz32(r: u32) -> (u64, Option<bool>) {
    (r as u64, Some(r != 0))
}

fn next_addr(ctx: &Ctx<'_>, w: &Wave, inst: &Inst) -> u64 {
    ctx.prog.address_of(w.pc) + inst.len as u64
}

fn sop1(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    check_sources(inst, 1)?;
    let op = inst.op;
    if matches!(
        op,
        s_movrels_b32 | s_movrels_b64 | s_movreld_b32 | s_movreld_b64
    ) {
        return move_relative(w, ctx, inst);
    }
    let t0 = src_ty(op, 0);
    let a = if t0.dwords() == 2 {
        sread64(w, ctx, inst.src[0], t0, inst.lit)
    } else {
        sread(w, ctx, inst.src[0], t0, inst.lit) as u64
    };
    let a32 = a as u32;
    let exec = w.exec();
    let (r, s): (u64, Option<bool>) = match op {
        s_mov_b32 | s_mov_b64 => (a, None),
        s_cmov_b32 | s_cmov_b64 => {
            if !w.scc {
                return Ok(Flow::Next);
            }
            (a, None)
        }
        s_not_b32 => nz32(!a32),
        s_not_b64 => nz(!a),
        s_wqm_b32 | s_wqm_b64 => {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (q * 4)) & 0xF != 0 {
                    r |= 0xF << (q * 4);
                }
            }
            if op == s_wqm_b32 {
                nz32(r as u32)
            } else {
                nz(r)
            }
        }
        s_brev_b32 => (a32.reverse_bits() as u64, None),
        s_brev_b64 => (a.reverse_bits(), None),
        s_bcnt0_i32_b32 => nz32(a32.count_zeros()),
        s_bcnt0_i32_b64 => nz32(a.count_zeros()),
        s_bcnt1_i32_b32 => nz32(a32.count_ones()),
        s_bcnt1_i32_b64 => nz32(a.count_ones()),
        s_ff0_i32_b32 => (
            if a32 == u32::MAX {
                u32::MAX
            } else {
                a32.trailing_ones()
            } as u64,
            None,
        ),
        s_ff0_i32_b64 => (
            if a == u64::MAX {
                u32::MAX
            } else {
                a.trailing_ones()
            } as u64,
            None,
        ),
        s_ff1_i32_b32 => (
            if a32 == 0 {
                u32::MAX
            } else {
                a32.trailing_zeros()
            } as u64,
            None,
        ),
        s_ff1_i32_b64 => (
            if a == 0 { u32::MAX } else { a.trailing_zeros() } as u64,
            None,
        ),
        s_flbit_i32_b32 => (
            if a32 == 0 {
                u32::MAX
            } else {
                a32.leading_zeros()
            } as u64,
            None,
        ),
        s_flbit_i32_b64 => (
            if a == 0 { u32::MAX } else { a.leading_zeros() } as u64,
            None,
        ),
        s_flbit_i32 => {
            let v = a32 as i32;
            (
                if v == 0 || v == -1 {
                    u32::MAX
                } else if v < 0 {
                    a32.leading_ones()
                } else {
                    a32.leading_zeros()
                } as u64,
                None,
            )
        }
        s_sext_i32_i8 => (a32 as i8 as i32 as u32 as u64, None),
        s_sext_i32_i16 => (a32 as i16 as i32 as u32 as u64, None),
        s_bitset0_b32 | s_bitset1_b32 => {
            let d = w.s[inst.dst as usize & 127];
            let bit = 1u32 << (a32 & 31);
            (
                if op == s_bitset1_b32 {
                    d | bit
                } else {
                    d & !bit
                } as u64,
                None,
            )
        }
        s_bitset0_b64 | s_bitset1_b64 => {
            let d = w.sgpr64(inst.dst);
            let bit = 1u64 << (a32 & 63);
            (
                if op == s_bitset1_b64 {
                    d | bit
                } else {
                    d & !bit
                },
                None,
            )
        }
        s_getpc_b64 => (next_addr(ctx, w, inst), None),
        s_setpc_b64 => return jump_to(ctx, a),
        s_swappc_b64 => {
            let ret = next_addr(ctx, w, inst);
            let flow = jump_to(ctx, a)?;
            w.set_sgpr64(inst.dst, ret);
            return Ok(flow);
        }
        s_and_saveexec_b64 | s_or_saveexec_b64 | s_xor_saveexec_b64 | s_andn2_saveexec_b64
        | s_orn2_saveexec_b64 | s_nand_saveexec_b64 | s_nor_saveexec_b64 | s_xnor_saveexec_b64
        | s_andn1_saveexec_b64 | s_orn1_saveexec_b64 => {
            let e = match op {
                s_and_saveexec_b64 => a & exec,
                s_or_saveexec_b64 => a | exec,
                s_xor_saveexec_b64 => a ^ exec,
                s_andn2_saveexec_b64 => a & !exec,
                s_orn2_saveexec_b64 => a | !exec,
                s_nand_saveexec_b64 => !(a & exec),
                s_nor_saveexec_b64 => !(a | exec),
                s_xnor_saveexec_b64 => !(a ^ exec),
                s_andn1_saveexec_b64 => !a & exec,
                _ => !a | exec,
            };
            w.set_sgpr64(inst.dst, exec);
            w.set_exec(e);
            w.scc = e != 0;
            return Ok(Flow::Next);
        }
        s_andn1_wrexec_b64 | s_andn2_wrexec_b64 => {
            let e = if op == s_andn1_wrexec_b64 {
                !a & exec
            } else {
                a & !exec
            };
            w.set_exec(e);
            w.set_sgpr64(inst.dst, e);
            w.scc = e != 0;
            return Ok(Flow::Next);
        }
        s_quadmask_b32 | s_quadmask_b64 => {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (q * 4)) & 0xF != 0 {
                    r |= 1 << q;
                }
            }
            nz(r)
        }
        s_abs_i32 => nz32((a32 as i32).unsigned_abs()),
        s_set_gpr_idx_idx => {
            let m0 = w.m0();
            w.s[crate::decode::M0 as usize] = (m0 & !0xFF) | (a32 & 0xFF);
            return Ok(Flow::Next);
        }
        s_bitreplicate_b64_b32 => {
            let mut r = 0u64;
            for i in 0..32 {
                if (a32 >> i) & 1 != 0 {
                    r |= 3 << (2 * i);
                }
            }
            (r, None)
        }
        _ => return Err(illegal(format!("{} is not implemented", op.name()))),
    };
    if op.types()[0].dwords() == 2 {
        w.set_sgpr64(inst.dst, r);
    } else {
        w.set_sgpr(inst.dst, r as u32);
    }
    if let Some(s) = s {
        w.scc = s;
    }
    Ok(Flow::Next)
}

fn sopc(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    check_sources(inst, 2)?;
    let op = inst.op;
    let t0 = src_ty(op, 0);
    let a = if t0.dwords() == 2 {
        sread64(w, ctx, inst.src[0], t0, inst.lit)
    } else {
        sread(w, ctx, inst.src[0], t0, inst.lit) as u64
    };
    let b = if src_ty(op, 1).dwords() == 2 {
        sread64(w, ctx, inst.src[1], Ty::B64, inst.lit)
    } else {
        sread(w, ctx, inst.src[1], Ty::B32, inst.lit) as u64
    };
    let (ai, bi) = (a as u32 as i32, b as u32 as i32);
    let (au, bu) = (a as u32, b as u32);
    w.scc = match op {
        s_cmp_eq_i32 | s_cmp_eq_u32 => au == bu,
        s_cmp_lg_i32 | s_cmp_lg_u32 => au != bu,
        s_cmp_gt_i32 => ai > bi,
        s_cmp_ge_i32 => ai >= bi,
        s_cmp_lt_i32 => ai < bi,
        s_cmp_le_i32 => ai <= bi,
        s_cmp_gt_u32 => au > bu,
        s_cmp_ge_u32 => au >= bu,
        s_cmp_lt_u32 => au < bu,
        s_cmp_le_u32 => au <= bu,
        s_bitcmp0_b32 => (au >> (bu & 31)) & 1 == 0,
        s_bitcmp1_b32 => (au >> (bu & 31)) & 1 == 1,
        s_bitcmp0_b64 => (a >> (bu & 63)) & 1 == 0,
        s_bitcmp1_b64 => (a >> (bu & 63)) & 1 == 1,
        s_set_gpr_idx_on => {
            let m0 = w.m0();
            w.s[crate::decode::M0 as usize] =
                (m0 & 0xFFFF_0F00) | (a as u32 & 0xFF) | (inst.imm as u32 & 0xF) << 12;
            w.gpr_idx_on = true;
            return Ok(Flow::Next);
        }
        s_cmp_eq_u64 => a == b,
        s_cmp_lg_u64 => a != b,
        _ => return Err(illegal(format!("{} is not implemented", op.name()))),
    };
    Ok(Flow::Next)
}

/// Read a hardware register (`s_getreg`).
fn hwreg_read(w: &Wave, ctx: &Ctx<'_>, id: u32) -> Result<u32, FaultKind> {
    Ok(match id {
        1 => w.mode,
        2 => w.status,
        3 => w.trapsts,
        4 => w.hw_id,
        5..=7 => 0,
        15 => {
            ((ctx.apertures.private_base >> 48) as u32 & 0xFFFF)
                | ((ctx.apertures.shared_base >> 48) as u32) << 16
        }
        20 => w.s[102],
        21 => w.s[103],
        22 => 0,
        _ => {
            return Err(illegal(format!(
                "s_getreg of hardware register {id} is not emulated"
            )));
        }
    })
}

fn sopk(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let simm = inst.imm as i16 as i32;
    let uimm = inst.imm as u32 & 0xFFFF;
    let d = w.s[inst.dst as usize & 127];
    match op {
        s_movk_i32 => w.set_sgpr(inst.dst, simm as u32),
        s_cmovk_i32 => {
            if w.scc {
                w.set_sgpr(inst.dst, simm as u32)
            }
        }
        s_cmpk_eq_i32 => w.scc = d as i32 == simm,
        s_cmpk_lg_i32 => w.scc = d as i32 != simm,
        s_cmpk_gt_i32 => w.scc = d as i32 > simm,
        s_cmpk_ge_i32 => w.scc = d as i32 >= simm,
        s_cmpk_lt_i32 => w.scc = (d as i32) < simm,
        s_cmpk_le_i32 => w.scc = d as i32 <= simm,
        s_cmpk_eq_u32 => w.scc = d == uimm,
        s_cmpk_lg_u32 => w.scc = d != uimm,
        s_cmpk_gt_u32 => w.scc = d > uimm,
        s_cmpk_ge_u32 => w.scc = d >= uimm,
        s_cmpk_lt_u32 => w.scc = d < uimm,
        s_cmpk_le_u32 => w.scc = d <= uimm,
        s_addk_i32 => {
            let (r, o) = (d as i32).overflowing_add(simm);
            w.set_sgpr(inst.dst, r as u32);
            w.scc = o;
        }
        s_mulk_i32 => w.set_sgpr(inst.dst, (d as i32).wrapping_mul(simm) as u32),
        s_getreg_b32 => {
            let id = uimm & 0x3F;
            let off = (uimm >> 6) & 0x1F;
            let size = ((uimm >> 11) & 0x1F) + 1;
            let v = hwreg_read(w, ctx, id)?;
            let mask = if size >= 32 {
                u32::MAX
            } else {
                (1u32 << size) - 1
            };
            w.set_sgpr(inst.dst, (v >> off) & mask);
        }
        s_setreg_b32 | s_setreg_imm32_b32 => {
            let id = uimm & 0x3F;
            let off = (uimm >> 6) & 0x1F;
            let size = ((uimm >> 11) & 0x1F) + 1;
            let v = if op == s_setreg_imm32_b32 {
                inst.lit
            } else {
                w.s[inst.dst as usize & 127]
            };
            let mask = (if size >= 32 {
                u32::MAX
            } else {
                (1u32 << size) - 1
            }) << off;
            match id {
                1 => w.mode = (w.mode & !mask) | ((v << off) & mask),
                3 => w.trapsts = (w.trapsts & !mask) | ((v << off) & mask),
                _ => {
                    return Err(illegal(format!(
                        "s_setreg of hardware register {id} is not emulated"
                    )));
                }
            }
        }
        s_call_b64 => {
            let ret = next_addr(ctx, w, inst);
            w.set_sgpr64(inst.dst, ret);
            return jump_to(ctx, (ret as i64 + simm as i64 * 4) as u64);
        }
        _ => return Err(illegal(format!("{} is not implemented", op.name()))),
    }
    Ok(Flow::Next)
}

fn sopp(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let branch = |ctx: &Ctx<'_>, w: &Wave, taken: bool| -> Step {
        if !taken {
            return Ok(Flow::Next);
        }
        let target = ctx.prog.address_of(w.pc) as i64 + 4 + inst.imm as i64 * 4;
        jump_to(ctx, target as u64)
    };
    match op {
        s_nop | s_waitcnt | s_sleep | s_setprio | s_icache_inv | s_incperflevel
        | s_decperflevel | s_wakeup | s_setkill | s_sendmsg => Ok(Flow::Next),
        s_endpgm | s_endpgm_saved => Ok(Flow::End),
        // Branches on the debugger's conditional-debug bits, which are clear: no debugger.
        s_cbranch_cdbgsys
        | s_cbranch_cdbguser
        | s_cbranch_cdbgsys_or_user
        | s_cbranch_cdbgsys_and_user => Ok(Flow::Next),
        s_set_gpr_idx_off => {
            w.gpr_idx_on = false;
            Ok(Flow::Next)
        }
        s_set_gpr_idx_mode => {
            let m0 = w.m0();
            w.s[crate::decode::M0 as usize] = (m0 & !0xF000) | (inst.imm as u32 & 0xF) << 12;
            Ok(Flow::Next)
        }
        s_branch => branch(ctx, w, true),
        s_cbranch_scc0 => branch(ctx, w, !w.scc),
        s_cbranch_scc1 => branch(ctx, w, w.scc),
        s_cbranch_vccz => branch(ctx, w, w.vcc() == 0),
        s_cbranch_vccnz => branch(ctx, w, w.vcc() != 0),
        s_cbranch_execz => branch(ctx, w, w.exec() == 0),
        s_cbranch_execnz => branch(ctx, w, w.exec() != 0),
        s_barrier => Ok(Flow::Barrier),
        s_trap => {
            let code = (inst.imm as u32 & 0xFF) as u16;
            if code == 3 {
                Ok(Flow::Next)
            } else {
                Err(FaultKind::Trap { code })
            }
        }
        s_ttracedata => {
            let (cu, simd, wave_id) = placement(w.hw_id);
            ctx.trace.push(ShaderDataRecord {
                time: w.cycles as i64 - 1,
                value: w.m0() as u64,
                cu,
                simd,
                wave_id,
                flags: 0,
            });
            Ok(Flow::Next)
        }
        _ => Err(illegal(format!("{} is not implemented", op.name()))),
    }
}

/// A scalar atomic (`s_atomic_*`, `s_buffer_atomic_*`) at `addr`: one read-modify-write of
/// the dword or qword, the data from SDATA (compare-and-swap: the new value, then the compare
/// value); with GLC the old value returns to SDATA.
fn scalar_atomic(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst, at: Atomic, addr: u64) -> Step {
    let n: u64 = if at.wide { 8 } else { 4 };
    let addr = addr & !(n - 1);
    let Some(p) = ctx.mem.translate(addr, n) else {
        return Err(FaultKind::Memory {
            address: addr,
            size: n as u32,
            lane: None,
            write: true,
        });
    };
    let dw = if at.wide { 2 } else { 1 };
    let word = |k: u16| {
        (0..dw).fold(0u64, |v, j| {
            v | (w.s[(inst.dst + k * dw + j) as usize & 127] as u64) << (32 * j)
        })
    };
    let (data, cmp) = if at.rmw == Rmw::CmpSwap {
        (word(0), word(1))
    } else {
        (word(0), 0)
    };
    let old = if at.wide {
        rmw64(p, |old| at.rmw.apply(true, old, data, cmp))
    } else {
        rmw32(p, |old| at.rmw.apply(false, old as u64, data, cmp) as u32) as u64
    };
    if inst.ctrl & flags::GLC != 0 {
        if at.wide {
            w.set_sgpr64(inst.dst, old);
        } else {
            w.set_sgpr(inst.dst, old as u32);
        }
    }
    Ok(Flow::Next)
}

/// The SGPRs a wave may address (s0-s101); VCC and the registers above are not indexed.
const SGPR_COUNT: u32 = 102;

/// `s_movrels` (read) and `s_movreld` (write): the SGPR named by the instruction, offset by
/// M0, moves the data; compilers use them to index a uniform array held in SGPRs.
fn move_relative(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    let wide = matches!(op, s_movrels_b64 | s_movreld_b64);
    let n = if wide { 2 } else { 1 };
    let read = matches!(op, s_movrels_b32 | s_movrels_b64);
    let (named, other) = if read {
        (inst.src[0], inst.dst)
    } else {
        (inst.dst, inst.src[0])
    };
    let index = (named as u32).wrapping_add(w.m0());
    if named as u32 >= SGPR_COUNT || index.saturating_add(n) > SGPR_COUNT {
        return Err(illegal(format!(
            "{} with M0 {} indexes s{index}, past s{}",
            op.name(),
            w.m0(),
            SGPR_COUNT - 1
        )));
    }
    if read {
        for k in 0..n {
            let v = w.s[(index + k) as usize];
            w.set_sgpr(other + k as u16, v);
        }
    } else {
        let t = if wide { Ty::B64 } else { Ty::B32 };
        let v = if wide {
            sread64(w, ctx, other, t, inst.lit)
        } else {
            sread(w, ctx, other, t, inst.lit) as u64
        };
        for k in 0..n {
            w.s[(index + k) as usize] = (v >> (32 * k)) as u32;
        }
    }
    Ok(Flow::Next)
}

/// (cu, simd, wave slot) of a HW_ID value.
pub(crate) fn placement(hw_id: u32) -> (u8, u8, u8) {
    (
        ((hw_id >> 8) & 0xF) as u8,
        ((hw_id >> 4) & 3) as u8,
        (hw_id & 0xF) as u8,
    )
}

fn smem(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let op = inst.op;
    match op {
        // One coherent memory and no address translation cache: nothing to write back, drop
        // or probe.
        s_dcache_inv | s_dcache_wb | s_dcache_inv_vol | s_dcache_wb_vol | s_dcache_discard
        | s_dcache_discard_x2 | s_atc_probe | s_atc_probe_buffer => return Ok(Flow::Next),
        s_scratch_load_dword
        | s_scratch_load_dwordx2
        | s_scratch_load_dwordx4
        | s_scratch_store_dword
        | s_scratch_store_dwordx2
        | s_scratch_store_dwordx4 => {
            return Err(illegal(format!(
                "{} (scalar access to scratch memory) is not emulated",
                op.name()
            )));
        }
        s_memtime => {
            w.set_sgpr64(inst.dst, w.cycles);
            return Ok(Flow::Next);
        }
        s_memrealtime => {
            w.set_sgpr64(inst.dst, (ctx.clock_base.elapsed().as_nanos() / 10) as u64);
            return Ok(Flow::Next);
        }
        _ => {}
    }
    let name = op.name();
    let buffer = name.starts_with("s_buffer");
    let base = if buffer {
        w.sgpr64(inst.src[0]) & 0xFFFF_FFFF_FFFF
    } else {
        w.sgpr64(inst.src[0])
    };
    let mut off: i64 = 0;
    if inst.ctrl & flags::IMM != 0 {
        off += inst.imm as i64;
        if inst.sdst != OFF {
            off += w.s[inst.sdst as usize & 127] as i64;
        }
    } else {
        off += sread(w, ctx, inst.sdst, Ty::B32, 0) as i64;
    }
    let addr = (base as i64).wrapping_add(off) as u64 & !3;
    if let Some(at) = atomic(op) {
        return scalar_atomic(w, ctx, inst, at, addr);
    }
    let store = name.contains("_store");
    let n = if store {
        op.store_dwords()
    } else {
        op.types()[0].dwords()
    } as usize;
    let Some(p) = ctx.mem.translate(addr, 4 * n as u64) else {
        return Err(FaultKind::Memory {
            address: addr,
            size: 4 * n as u32,
            lane: None,
            write: store,
        });
    };
    if store {
        let mut bytes = Vec::with_capacity(4 * n);
        for k in 0..n {
            bytes.extend_from_slice(&w.s[(inst.dst as usize + k) & 127].to_le_bytes());
        }
        store_bytes(p, &bytes);
    } else {
        let mut buf = [0u8; 64];
        load_bytes(p, &mut buf[..4 * n]);
        for k in 0..n {
            let v = u32::from_le_bytes(buf[4 * k..4 * k + 4].try_into().expect("4 bytes"));
            w.set_sgpr(inst.dst + k as u16, v);
        }
    }
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::{bfe32, bfe64};

    /// A signed field reaching past the top bit takes the sign (the source is shifted
    /// arithmetically, as `v_bfe_i32` and LLVM's folding of the extract have it); the
    /// unsigned one takes zeros.
    #[test]
    fn signed_fields_past_the_top_bit_take_the_sign() {
        assert_eq!(bfe32(0xDEAD_BEEF, 20 | 31 << 16, true), 0xFFFF_FDEA);
        assert_eq!(bfe32(0xDEAD_BEEF, 20 | 31 << 16, false), 0xDEA);
        assert_eq!(bfe32(0xCAFE_1234, 31 | 20 << 16, true), u32::MAX);
        assert_eq!(bfe32(0x1234_5678, 28 | 8 << 16, true), 1);
        assert_eq!(bfe32(0x8000_0000, 4 | 40 << 16, true), 0xF800_0000);
        assert_eq!(bfe64(1 << 63, 60 | 10 << 16, true), 0xFFFF_FFFF_FFFF_FFF8);
        assert_eq!(bfe64(1 << 63, 60 | 10 << 16, false), 8);
    }
}
