//! Assembly text of decoded instructions, in the syntax `llvm-objdump` prints (used by error
//! messages and by the decoder's cross-check against the disassembler).

use super::ops::{
    DATA_FORMAT_NAMES, INLINE_F16_BITS, INLINE_F32_BITS, NUMBER_FORMAT_NAMES, Op, Ty,
};
use super::{AGPR, Enc, Ext, Inst, OFF, VGPR, flags, seg};
use crate::target::Target;

fn reg_range(prefix: &str, n: u32, dwords: u32) -> String {
    if dwords <= 1 {
        format!("{prefix}{n}")
    } else {
        format!("{prefix}[{}:{}]", n, n + dwords - 1)
    }
}

/// Text of one operand spanning `dwords` registers.
pub(crate) fn operand(code: u16, dwords: u32, lit: u32) -> String {
    let c = code as u32;
    if code >= AGPR {
        return reg_range("a", c - AGPR as u32, dwords);
    }
    if code >= VGPR {
        return reg_range("v", c - VGPR as u32, dwords);
    }
    let wide = dwords >= 2;
    match c {
        0..=101 => reg_range("s", c, dwords),
        102 => (if wide {
            "flat_scratch"
        } else {
            "flat_scratch_lo"
        })
        .into(),
        103 => "flat_scratch_hi".into(),
        104 => (if wide { "xnack_mask" } else { "xnack_mask_lo" }).into(),
        105 => "xnack_mask_hi".into(),
        106 => (if wide { "vcc" } else { "vcc_lo" }).into(),
        107 => "vcc_hi".into(),
        108..=123 => reg_range("ttmp", c - 108, dwords),
        124 => "m0".into(),
        126 => (if wide { "exec" } else { "exec_lo" }).into(),
        127 => "exec_hi".into(),
        128..=192 => format!("{}", c - 128),
        193..=208 => format!("-{}", c - 192),
        235 => "src_shared_base".into(),
        236 => "src_shared_limit".into(),
        237 => "src_private_base".into(),
        238 => "src_private_limit".into(),
        239 => "src_pops_exiting_wave_id".into(),
        240 => "0.5".into(),
        241 => "-0.5".into(),
        242 => "1.0".into(),
        243 => "-1.0".into(),
        244 => "2.0".into(),
        245 => "-2.0".into(),
        246 => "4.0".into(),
        247 => "-4.0".into(),
        248 => "0.15915494".into(),
        251 => "src_vccz".into(),
        252 => "src_execz".into(),
        253 => "src_scc".into(),
        254 => "src_lds_direct".into(),
        255 => {
            // The value the literal gives the operand (a 64-bit one takes it zero-extended), marked
            // `lit()` where an inline constant has that value.
            let i = if wide {
                lit as u64 as i64
            } else {
                lit as i32 as i64
            };
            if (-16..=64).contains(&i) || (!wide && INLINE_F32_BITS.contains(&lit)) {
                format!("lit(0x{lit:x})")
            } else {
                format!("0x{lit:x}")
            }
        }
        _ => format!("<operand {c}>"),
    }
}

fn with_mods(s: String, neg: bool, abs: bool) -> String {
    let s = if abs { format!("|{s}|") } else { s };
    if neg { format!("-{s}") } else { s }
}

fn hwreg_name(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        4 => "HW_REG_HW_ID",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        20 => "HW_REG_FLAT_SCR_LO",
        21 => "HW_REG_FLAT_SCR_HI",
        22 => "HW_REG_XNACK_MASK",
        _ => return None,
    })
}

fn hwreg(simm: u32) -> String {
    let id = simm & 0x3F;
    let off = (simm >> 6) & 0x1F;
    let size = ((simm >> 11) & 0x1F) + 1;
    let name = hwreg_name(id)
        .map(str::to_string)
        .unwrap_or_else(|| id.to_string());
    if off == 0 && size == 32 {
        format!("hwreg({name})")
    } else {
        format!("hwreg({name}, {off}, {size})")
    }
}

fn gpr_idx_mode(m: u32) -> String {
    let names: Vec<&str> = ["SRC0", "SRC1", "SRC2", "DST"]
        .iter()
        .enumerate()
        .filter(|(k, _)| m >> k & 1 != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("gpr_idx({})", names.join(","))
}

fn waitcnt(simm: u32) -> String {
    let vm = (simm & 0xF) | ((simm >> 14) & 3) << 4;
    let exp = (simm >> 4) & 7;
    let lgkm = (simm >> 8) & 0xF;
    let mut parts = Vec::new();
    if vm != 63 {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 15 {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        "vmcnt(63) expcnt(7) lgkmcnt(15)".into()
    } else {
        parts.join(" ")
    }
}

/// The mnemonic as printed for `target` (without the encoding suffix).
pub(crate) fn mnemonic(inst: &Inst, target: Target) -> String {
    let name = inst.op.name();
    if inst.enc == Enc::Flat {
        let rest = &name["flat_".len()..];
        let prefix = match inst.segment() {
            seg::SCRATCH => "scratch_",
            seg::GLOBAL => "global_",
            _ => "flat_",
        };
        return format!("{prefix}{rest}");
    }
    if target == Target::Gfx942
        && let Some(rest) = name.strip_prefix("v_mfma_")
    {
        // gfx942 spells the source type with an underscore (16x16x4_f32, 32x32x8_bf16 for
        // gfx90a's bf16_1k) and marks the shapes of several blocks with their count (4x4x1_16b).
        let (out_ty, shape_ty) = rest.split_once('_').unwrap_or((rest, ""));
        let split = shape_ty
            .find(|c: char| !(c.is_ascii_digit() || c == 'x'))
            .unwrap_or(shape_ty.len());
        let (shape, ty) = shape_ty.split_at(split);
        let blocks = match inst.op.mfma_shape() {
            Some((.., b)) if b > 1 => format!("_{b}b"),
            _ => String::new(),
        };
        let ty = ty.trim_start_matches('_').trim_end_matches("_1k");
        return format!("v_mfma_{out_ty}_{shape}{blocks}_{ty}");
    }
    name.to_string()
}

/// VOP1/VOP2/VOPC operations that have no VOP3 form print without `_e32`.
fn e32_suffix(op: Op) -> bool {
    !matches!(
        op,
        Op::v_madmk_f32
            | Op::v_madak_f32
            | Op::v_fmamk_f32
            | Op::v_fmaak_f32
            | Op::v_madmk_f16
            | Op::v_madak_f16
            | Op::v_clrexcp
            | Op::v_readfirstlane_b32
            | Op::v_nop
            | Op::v_accvgpr_mov_b32
            | Op::v_swap_b32
    )
}

fn sdwa_sel(s: u32) -> &'static str {
    [
        "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "DWORD",
    ][(s & 7) as usize]
}

fn dpp_ctrl(c: u32) -> String {
    match c {
        0..=0xFF => format!(
            "quad_perm:[{},{},{},{}]",
            c & 3,
            (c >> 2) & 3,
            (c >> 4) & 3,
            (c >> 6) & 3
        ),
        0x101..=0x10F => format!("row_shl:{}", c & 0xF),
        0x111..=0x11F => format!("row_shr:{}", c & 0xF),
        0x121..=0x12F => format!("row_ror:{}", c & 0xF),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13C => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x142 => "row_bcast:15".into(),
        0x143 => "row_bcast:31".into(),
        _ => format!("dpp_ctrl:0x{c:x}"),
    }
}

fn mem_flags(inst: &Inst, target: Target) -> String {
    let mut s = String::new();
    if target == Target::Gfx942 {
        if inst.ctrl & flags::GLC != 0 {
            s.push_str(" sc0");
        }
        if inst.ctrl & flags::SLC != 0 {
            s.push_str(" nt");
        }
        if inst.ctrl & flags::SC1 != 0 {
            s.push_str(" sc1");
        }
    } else {
        if inst.ctrl & flags::GLC != 0 {
            s.push_str(" glc");
        }
        if inst.ctrl & flags::SLC != 0 {
            s.push_str(" slc");
        }
    }
    s
}

/// An image instruction as `llvm-objdump` prints it: the data registers DMASK (and D16, LWE)
/// imply, the first address register only (the image decides how many follow).
fn disasm_mimg(inst: &Inst, mn: &str, target: Target) -> String {
    // A compare-and-swap's data is the value and then the compare value.
    let comps = (inst.imm as u32 & 15).count_ones().max(1)
        * if inst.op == Op::image_atomic_cmpswap {
            2
        } else {
            1
        };
    let data = if inst.ctrl & flags::D16 != 0 {
        comps.div_ceil(2)
    } else {
        comps
    } + u32::from(inst.ctrl & flags::LWE != 0);
    let mut s = format!(
        "{mn} {}, {}, {}",
        operand(inst.src[1], data, 0),
        operand(inst.src[0], 1, 0),
        operand(inst.src[2], 8, 0)
    );
    if inst.op == Op::image_sample {
        s.push_str(&format!(", {}", operand(inst.sdst, 4, 0)));
    }
    s.push_str(&format!(" dmask:0x{:x}", inst.imm));
    if inst.ctrl & flags::UNORM != 0 {
        s.push_str(" unorm");
    }
    s.push_str(&mem_flags(inst, target));
    for (f, text) in [
        (flags::A16, " a16"),
        (flags::LWE, " lwe"),
        (flags::DA, " da"),
        (flags::D16, " d16"),
    ] {
        if inst.ctrl & f != 0 {
            s.push_str(text);
        }
    }
    s
}

pub(crate) fn disassemble(inst: &Inst, target: Target) -> String {
    let types = inst.op.types();
    let ty = |k: usize| types.get(k).copied().unwrap_or(Ty::N);
    let mn = mnemonic(inst, target);
    let opnd = |k: usize| operand(inst.src[k], ty(k + 1).dwords(), inst.lit);
    match inst.enc {
        Enc::Unknown => format!(".long 0x{:08x}", inst.lit),
        Enc::Sop1 => {
            if inst.op == Op::s_getpc_b64 {
                format!("{mn} {}", operand(inst.dst, 2, 0))
            } else if matches!(
                inst.op,
                Op::s_setpc_b64 | Op::s_set_gpr_idx_idx | Op::s_rfe_b64 | Op::s_cbranch_join
            ) {
                format!("{mn} {}", opnd(0))
            } else {
                format!("{mn} {}, {}", operand(inst.dst, ty(0).dwords(), 0), opnd(0))
            }
        }
        Enc::Sop2 if ty(0) == Ty::N => format!("{mn} {}, {}", opnd(0), opnd(1)),
        Enc::Sop2 => format!(
            "{mn} {}, {}, {}",
            operand(inst.dst, ty(0).dwords(), 0),
            opnd(0),
            opnd(1)
        ),
        Enc::Sopc if inst.op == Op::s_set_gpr_idx_on => {
            format!("{mn} {}, {}", opnd(0), gpr_idx_mode(inst.imm as u32))
        }
        Enc::Sopc => format!("{mn} {}, {}", opnd(0), opnd(1)),
        Enc::Sopk => {
            let simm = inst.imm as u32 & 0xFFFF;
            match inst.op {
                Op::s_getreg_b32 => format!("{mn} {}, {}", operand(inst.dst, 1, 0), hwreg(simm)),
                Op::s_setreg_b32 => format!("{mn} {}, {}", hwreg(simm), operand(inst.dst, 1, 0)),
                Op::s_setreg_imm32_b32 => format!("{mn} {}, {}", hwreg(simm), inst.lit),
                Op::s_call_b64 | Op::s_cbranch_i_fork => {
                    format!("{mn} {}, {}", operand(inst.dst, 2, 0), inst.imm)
                }
                _ => format!("{mn} {}, 0x{:x}", operand(inst.dst, 1, 0), simm),
            }
        }
        Enc::Sopp => match inst.op {
            Op::s_waitcnt => format!("{mn} {}", waitcnt(inst.imm as u32 & 0xFFFF)),
            Op::s_set_gpr_idx_mode => format!("{mn} {}", gpr_idx_mode(inst.imm as u32)),
            Op::s_sendmsg | Op::s_sendmsghalt => {
                let m = inst.imm as u32;
                format!(
                    "{mn} sendmsg({}, {}, {})",
                    m & 0xF,
                    (m >> 4) & 7,
                    (m >> 8) & 3
                )
            }
            Op::s_endpgm
            | Op::s_barrier
            | Op::s_ttracedata
            | Op::s_icache_inv
            | Op::s_wakeup
            | Op::s_set_gpr_idx_off
            | Op::s_endpgm_saved
            | Op::s_endpgm_ordered_ps_done => mn,
            Op::s_branch
            | Op::s_cbranch_scc0
            | Op::s_cbranch_scc1
            | Op::s_cbranch_vccz
            | Op::s_cbranch_vccnz
            | Op::s_cbranch_execz
            | Op::s_cbranch_execnz
            | Op::s_cbranch_cdbgsys
            | Op::s_cbranch_cdbguser
            | Op::s_cbranch_cdbgsys_or_user
            | Op::s_cbranch_cdbgsys_and_user => {
                format!("{mn} {}", inst.imm as u32 & 0xFFFF)
            }
            _ => format!("{mn} {}", inst.imm),
        },
        Enc::Smem => {
            let name = inst.op.name();
            let glc = if inst.ctrl & flags::GLC != 0 {
                if target == Target::Gfx942 {
                    " sc0"
                } else {
                    " glc"
                }
            } else {
                ""
            };
            if matches!(inst.op, Op::s_memtime | Op::s_memrealtime) {
                return format!("{mn} {}", operand(inst.dst, 2, 0));
            }
            if name.starts_with("s_dcache") && !name.starts_with("s_dcache_discard") {
                return mn;
            }
            let off = if inst.ctrl & flags::IMM != 0 {
                if inst.sdst != OFF {
                    format!("{} offset:0x{:x}", operand(inst.sdst, 1, 0), inst.imm)
                } else {
                    format!("0x{:x}", inst.imm)
                }
            } else {
                operand(inst.sdst, 1, 0)
            };
            let data = match inst.op {
                // The probe's data field is a number (the access it probes), not a register.
                Op::s_atc_probe | Op::s_atc_probe_buffer => format!("{}, ", inst.dst),
                _ if ty(0) == Ty::N => String::new(),
                _ => format!("{}, ", operand(inst.dst, ty(0).dwords(), 0)),
            };
            format!(
                "{mn} {data}{}, {off}{glc}",
                operand(inst.src[0], ty(1).dwords(), 0)
            )
        }
        Enc::Ds => disasm_ds(inst, &mn),
        Enc::Mimg => disasm_mimg(inst, &mn, target),
        Enc::Flat => disasm_flat(inst, &mn, target),
        Enc::Mubuf => {
            let name = inst.op.name();
            // An atomic compare-and-swap's data is the value and then the compare value.
            let data_dw = if name.contains("load") {
                ty(0).dwords()
            } else if name.contains("cmpswap") {
                2 * inst.op.store_dwords()
            } else {
                inst.op.store_dwords()
            };
            let vaddr =
                if inst.ctrl & (flags::OFFEN | flags::IDXEN) == (flags::OFFEN | flags::IDXEN) {
                    operand(inst.src[0], 2, 0)
                } else if inst.ctrl & (flags::OFFEN | flags::IDXEN) != 0 {
                    operand(inst.src[0], 1, 0)
                } else {
                    "off".into()
                };
            if inst.op.is_cache_control() {
                return format!("{mn}{}", mem_flags(inst, target));
            }
            let srsrc = operand(inst.src[2], 4, 0);
            let soffset = operand(inst.sdst, 1, inst.lit);
            // A load to LDS names no data register; buffer_store_lds_dword no address either.
            let mut s = if inst.op == Op::buffer_store_lds_dword {
                format!("{mn} {srsrc}, {soffset}")
            } else if inst.ctrl & flags::LDS != 0 {
                format!("{mn} {vaddr}, {srsrc}, {soffset}")
            } else {
                format!(
                    "{mn} {}, {vaddr}, {srsrc}, {soffset}",
                    operand(inst.src[1], data_dw, 0)
                )
            };
            if name.starts_with("tbuffer") {
                s.push_str(&mtbuf_format(inst.ctrl));
            }
            if inst.ctrl & flags::OFFEN != 0 {
                s.push_str(" offen");
            }
            if inst.ctrl & flags::IDXEN != 0 {
                s.push_str(" idxen");
            }
            if inst.imm != 0 {
                s.push_str(&format!(" offset:{}", inst.imm));
            }
            s.push_str(&mem_flags(inst, target));
            if inst.ctrl & flags::LDS != 0 {
                s.push_str(" lds");
            }
            s
        }
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 => disasm_valu(inst, &mn, target),
        Enc::Vop3p => disasm_vop3p(inst, &mn, target),
    }
}

/// An MTBUF instruction's ` format:[...]`, naming the data and number formats that differ
/// from the defaults (8 and UNORM), as LLVM prints it; empty when both are the defaults.
fn mtbuf_format(ctrl: u32) -> String {
    let dfmt = (ctrl >> flags::FMT_SHIFT) & 15;
    let nfmt = (ctrl >> (flags::FMT_SHIFT + 4)) & 7;
    let mut parts = Vec::new();
    if dfmt != 1 {
        parts.push(format!(
            "BUF_DATA_FORMAT_{}",
            DATA_FORMAT_NAMES[dfmt as usize]
        ));
    }
    if nfmt != 0 {
        parts.push(format!(
            "BUF_NUM_FORMAT_{}",
            NUMBER_FORMAT_NAMES[nfmt as usize]
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" format:[{}]", parts.join(","))
    }
}

fn disasm_ds(inst: &Inst, mn: &str) -> String {
    let name = inst.op.name();
    let types = inst.op.types();
    let dst_dw = types[0].dwords();
    let data_dw = inst.op.store_dwords();
    let addr = operand(inst.src[0], 1, 0);
    let d0 = operand(inst.src[1], data_dw, 0);
    let d1 = operand(inst.src[2], data_dw, 0);
    // Operations with one lane-independent address (M0 and the offset) name no address VGPR.
    let no_addr = matches!(
        inst.op,
        Op::ds_append | Op::ds_consume | Op::ds_read_addtid_b32 | Op::ds_write_addtid_b32
    );
    let ops = if matches!(
        inst.op,
        Op::ds_gws_sema_v | Op::ds_gws_sema_p | Op::ds_gws_sema_release_all
    ) {
        String::new()
    } else if name.starts_with("ds_gws") {
        addr.clone()
    } else if no_addr && name.contains("write") {
        d0.clone()
    } else if no_addr {
        operand(inst.dst, dst_dw, 0)
    } else if name.starts_with("ds_read") || name == "ds_swizzle_b32" {
        format!("{}, {addr}", operand(inst.dst, dst_dw, 0))
    } else if name.contains("permute") {
        format!("{}, {addr}, {d0}", operand(inst.dst, 1, 0))
    } else if name.contains("write2")
        || name.starts_with("ds_mskor_b")
        || (name.contains("cmpst") && !name.contains("rtn"))
    {
        format!("{addr}, {d0}, {d1}")
    } else if name.contains("cmpst_rtn")
        || name.contains("mskor_rtn")
        || name.contains("wrxchg2")
        || name == "ds_wrap_rtn_b32"
    {
        format!("{}, {addr}, {d0}, {d1}", operand(inst.dst, dst_dw, 0))
    } else if name.contains("rtn") {
        format!("{}, {addr}, {d0}", operand(inst.dst, dst_dw, 0))
    } else {
        format!("{addr}, {d0}")
    };
    let mut s = if ops.is_empty() {
        mn.to_string()
    } else {
        format!("{mn} {ops}")
    };
    let o0 = inst.imm & 0xFF;
    let o1 = (inst.imm >> 8) & 0xFF;
    if name.contains("read2") || name.contains("write2") || name.contains("wrxchg2") {
        if o0 != 0 {
            s.push_str(&format!(" offset0:{o0}"));
        }
        if o1 != 0 {
            s.push_str(&format!(" offset1:{o1}"));
        }
    } else if name == "ds_swizzle_b32" {
        if inst.imm != 0 {
            s.push_str(&format!(" offset:{}", inst.imm));
        }
    } else if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    if inst.ctrl & flags::GDS != 0 {
        s.push_str(" gds");
    }
    s
}

fn disasm_flat(inst: &Inst, mn: &str, target: Target) -> String {
    let name = inst.op.name();
    let types = inst.op.types();
    let segment = inst.segment();
    let saddr = inst.src[2];
    let addr = match segment {
        seg::FLAT => operand(inst.src[0], 2, 0),
        seg::GLOBAL => operand(inst.src[0], if saddr == OFF { 2 } else { 1 }, 0),
        _ => {
            if inst.ctrl & flags::SVE != 0 {
                operand(inst.src[0], 1, 0)
            } else {
                "off".into()
            }
        }
    };
    let saddr_txt = match segment {
        seg::FLAT => None,
        seg::GLOBAL => Some(if saddr == OFF {
            "off".to_string()
        } else {
            operand(saddr, 2, 0)
        }),
        _ => Some(if saddr == OFF {
            "off".to_string()
        } else {
            operand(saddr, 1, 0)
        }),
    };
    let atomic = name.contains("atomic");
    let cmpswap = name.contains("cmpswap");
    let data_dw = inst.op.store_dwords() * if cmpswap { 2 } else { 1 };
    // Loads to LDS (the load_lds operations, or the gfx90a lds bit) name no destination.
    let mut ops = if name.contains("load") && (inst.ctrl & flags::LDS != 0 || types[0] == Ty::N) {
        addr.clone()
    } else if name.contains("load") {
        format!("{}, {addr}", operand(inst.dst, types[0].dwords(), 0))
    } else if atomic && inst.ctrl & flags::GLC != 0 {
        format!(
            "{}, {addr}, {}",
            operand(inst.dst, types[0].dwords(), 0),
            operand(inst.src[1], data_dw, 0)
        )
    } else {
        format!("{addr}, {}", operand(inst.src[1], data_dw, 0))
    };
    if let Some(s) = saddr_txt {
        ops.push_str(", ");
        ops.push_str(&s);
    }
    let mut s = format!("{mn} {ops}");
    if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    s.push_str(&mem_flags(inst, target));
    if inst.ctrl & flags::LDS != 0 {
        s.push_str(" lds");
    }
    s
}

fn disasm_valu(inst: &Inst, mn: &str, _target: Target) -> String {
    let op = inst.op;
    let types = op.types();
    let ty = |k: usize| types.get(k).copied().unwrap_or(Ty::N);
    let vop3 = inst.enc == Enc::Vop3;
    let suffix = match (inst.enc, inst.ext) {
        (Enc::Vop3, _) => {
            let native = !is_promoted(op);
            if native { "" } else { "_e64" }
        }
        (_, Ext::Dpp) => "_dpp",
        (_, Ext::Sdwa) => "_sdwa",
        _ => {
            if e32_suffix(op) {
                "_e32"
            } else {
                ""
            }
        }
    };
    let nsrc = types.len().saturating_sub(1);
    let (neg, abs) = match inst.ext {
        Ext::Dpp => {
            let c = inst.ctrl;
            (
                ((c >> 20) & 1 | ((c >> 22) & 1) << 1) as u8,
                (((c >> 21) & 1) | ((c >> 23) & 1) << 1) as u8,
            )
        }
        Ext::Sdwa => {
            let c = inst.ctrl;
            (
                ((c >> 20) & 1 | ((c >> 28) & 1) << 1) as u8,
                (((c >> 21) & 1) | ((c >> 29) & 1) << 1) as u8,
            )
        }
        Ext::None => (inst.neg, inst.abs),
    };
    let src_txt = |k: usize| {
        let mut s = if ty(k + 1) == Ty::F16 && inst.src[k] == super::LITERAL {
            f16_literal(inst.lit)
        } else if ty(k + 1) == Ty::P16 && inst.src[k] == super::LITERAL {
            packed16_literal(inst.lit)
        } else if op.int16_source(k) && (240..=248).contains(&inst.src[k]) {
            format!("0x{:x}", super::ops::f16_inline_bits(inst.src[k]))
        } else if op.int16_source(k) && inst.src[k] == super::LITERAL {
            int16_literal(inst.lit)
        } else {
            operand(inst.src[k], ty(k + 1).dwords(), inst.lit)
        };
        if inst.ext == Ext::Sdwa {
            let sext = if k == 0 {
                (inst.ctrl >> 19) & 1
            } else {
                (inst.ctrl >> 27) & 1
            };
            if sext != 0 {
                s = format!("sext({s})");
            }
        }
        if integer_source(op, k) {
            return s;
        }
        with_mods(s, neg >> k & 1 != 0, abs >> k & 1 != 0)
    };
    let carry_out = matches!(
        op,
        Op::v_add_co_u32
            | Op::v_sub_co_u32
            | Op::v_subrev_co_u32
            | Op::v_addc_co_u32
            | Op::v_subb_co_u32
            | Op::v_subbrev_co_u32
    );
    let carry_in = matches!(
        op,
        Op::v_addc_co_u32 | Op::v_subb_co_u32 | Op::v_subbrev_co_u32 | Op::v_cndmask_b32
    );
    let mut parts: Vec<String> = Vec::new();
    let is_cmp = op.name().starts_with("v_cmp");
    if matches!(op, Op::v_nop | Op::v_clrexcp) {
        // No operands, and no encoding suffix in either form.
        return mn.to_string();
    }
    if is_cmp {
        parts.push(operand(inst.dst, 2, 0));
    } else {
        parts.push(operand(inst.dst, ty(0).dwords(), 0));
    }
    if carry_out
        || (vop3
            && matches!(
                op,
                Op::v_div_scale_f32 | Op::v_div_scale_f64 | Op::v_mad_u64_u32 | Op::v_mad_i64_i32
            ))
    {
        parts.push(operand(if vop3 { inst.sdst } else { super::VCC }, 2, 0));
    }
    let plain_srcs = if carry_in {
        2
    } else {
        nsrc.min(if vop3 { 3 } else { 2 })
    };
    match op {
        Op::v_madmk_f32 | Op::v_fmamk_f32 | Op::v_madmk_f16 => {
            parts.push(src_txt(0));
            parts.push(format!("0x{:x}", inst.lit));
            parts.push(src_txt(1));
        }
        Op::v_madak_f32 | Op::v_fmaak_f32 | Op::v_madak_f16 => {
            parts.push(src_txt(0));
            parts.push(src_txt(1));
            parts.push(format!("0x{:x}", inst.lit));
        }
        _ => {
            for k in 0..plain_srcs {
                parts.push(src_txt(k));
            }
        }
    }
    if carry_in {
        parts.push(operand(if vop3 { inst.src[2] } else { super::VCC }, 2, 0));
    }
    let mut s = format!("{mn}{suffix} {}", parts.join(", "));
    match inst.ext {
        Ext::Dpp => {
            let c = inst.ctrl;
            s.push_str(&format!(
                " {} row_mask:0x{:x} bank_mask:0x{:x}",
                dpp_ctrl((c >> 8) & 0x1FF),
                c >> 28,
                (c >> 24) & 0xF
            ));
            if (c >> 19) & 1 != 0 {
                s.push_str(" bound_ctrl:1");
            }
        }
        Ext::Sdwa => {
            let c = inst.ctrl;
            // gfx942's 8-bit float conversions take no destination selection (always DWORD).
            let fixed_destination = matches!(
                inst.op,
                Op::v_cvt_f32_fp8 | Op::v_cvt_f32_bf8 | Op::v_cvt_pk_f32_fp8 | Op::v_cvt_pk_f32_bf8
            );
            if inst.clamp {
                s.push_str(" clamp");
            }
            s.push_str(omod_suffix(inst.omod));
            if inst.enc != Enc::Vopc && !fixed_destination {
                s.push_str(&format!(
                    " dst_sel:{} dst_unused:{}",
                    sdwa_sel(c >> 8),
                    ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"]
                        [((c >> 11) & 3) as usize]
                ));
            }
            s.push_str(&format!(" src0_sel:{}", sdwa_sel(c >> 16)));
            if inst.enc != Enc::Vop1 {
                s.push_str(&format!(" src1_sel:{}", sdwa_sel(c >> 24)));
            }
        }
        Ext::None => {
            if inst.clamp {
                s.push_str(" clamp");
            }
            s.push_str(omod_suffix(inst.omod));
            if vop3 && inst.op_sel != 0 && matches!(op, Op::v_cvt_sr_fp8_f32 | Op::v_cvt_sr_bf8_f32)
            {
                // The two high bits select the destination byte.
                let v: Vec<String> = (0..4)
                    .map(|k| ((inst.op_sel >> k) & 1).to_string())
                    .collect();
                s.push_str(&format!(" op_sel:[{}]", v.join(",")));
            } else if vop3
                && inst.op_sel != 0
                && let Some(n) = op.op_sel().map(|f| f.entries)
            {
                // The sources' bits, then the destination's (bit 3).
                let mut v: Vec<String> = (0..n - 1)
                    .map(|k| ((inst.op_sel >> k) & 1).to_string())
                    .collect();
                v.push(((inst.op_sel >> 3) & 1).to_string());
                s.push_str(&format!(" op_sel:[{}]", v.join(",")));
            }
        }
    }
    s
}

/// The output modifier as LLVM prints it.
fn omod_suffix(omod: u8) -> &'static str {
    match omod {
        1 => " mul:2",
        2 => " mul:4",
        3 => " div:2",
        _ => "",
    }
}

/// A 32-bit literal whose whole value is an integer or f32 inline constant: LLVM prints it as
/// `lit(...)` with all 32 bits, in 16-bit operands too.
fn inline_as_32_bits(lit: u32) -> bool {
    (-16..=64).contains(&(lit as i32)) || INLINE_F32_BITS.contains(&lit)
}

/// A literal in a packed 16-bit operand (the VOP2 dot and `v_pk_fmac_f16`): all 32 bits,
/// marked `lit()` where the value is an integer or f16 inline constant.
fn packed16_literal(lit: u32) -> String {
    if (-16..=64).contains(&(lit as i32)) || INLINE_F16_BITS.contains(&lit) {
        format!("lit(0x{lit:x})")
    } else {
        format!("0x{lit:x}")
    }
}

/// A literal in a 16-bit float operand: its low half, or (as LLVM prints it) the whole literal
/// marked `lit()` where that half is also an inline constant.
fn f16_literal(lit: u32) -> String {
    let v = lit & 0xFFFF;
    if INLINE_F16_BITS.contains(&v) || (-16..=64).contains(&(v as u16 as i16)) {
        format!("lit(0x{lit:x})")
    } else {
        format!("0x{v:x}")
    }
}

/// A literal in a 16-bit integer operand: its low half, or (as LLVM prints it) the whole
/// literal marked `lit()` where the 32-bit value is an integer or f32 inline constant.
fn int16_literal(lit: u32) -> String {
    if inline_as_32_bits(lit) {
        format!("lit(0x{lit:x})")
    } else {
        format!("0x{:x}", lit & 0xFFFF)
    }
}

/// Sources that take no abs/neg modifiers next to float ones of the same operation (the byte
/// selects and integers of the packing conversions).
fn integer_source(op: Op, k: usize) -> bool {
    k > 0
        && matches!(
            op,
            Op::v_cvt_pk_u8_f32 | Op::v_cvt_sr_fp8_f32 | Op::v_cvt_sr_bf8_f32
        )
}

/// Whether a VOP3-encoded operation is a promoted VOP1/VOP2/VOPC one (printed with `_e64`).
fn is_promoted(op: Op) -> bool {
    let types = op.types();
    let name = op.name();
    if name.starts_with("v_cmp") {
        return true;
    }
    // Native VOP3 operations: three sources, or the VOP3-only two-source ones.
    if types.len() == 4 {
        return false;
    }
    !matches!(
        op,
        Op::v_add_f64
            | Op::v_mul_f64
            | Op::v_min_f64
            | Op::v_max_f64
            | Op::v_ldexp_f64
            | Op::v_mul_lo_u32
            | Op::v_mul_hi_u32
            | Op::v_mul_hi_i32
            | Op::v_ldexp_f32
            | Op::v_readlane_b32
            | Op::v_writelane_b32
            | Op::v_bcnt_u32_b32
            | Op::v_mbcnt_lo_u32_b32
            | Op::v_mbcnt_hi_u32_b32
            | Op::v_lshlrev_b64
            | Op::v_lshrrev_b64
            | Op::v_ashrrev_i64
            | Op::v_bfm_b32
            | Op::v_cvt_pkrtz_f16_f32
            | Op::v_cvt_pk_u16_u32
            | Op::v_cvt_pk_i16_i32
            | Op::v_add_i32
            | Op::v_sub_i32
            | Op::v_pack_b32_f16
            | Op::v_trig_preop_f64
            | Op::v_cvt_pkaccum_u8_f32
            | Op::v_cvt_pknorm_i16_f32
            | Op::v_cvt_pknorm_u16_f32
            | Op::v_cvt_pknorm_i16_f16
            | Op::v_cvt_pknorm_u16_f16
            | Op::v_add_i16
            | Op::v_sub_i16
            | Op::v_mul_legacy_f32
            | Op::v_cvt_pk_fp8_f32
            | Op::v_cvt_pk_bf8_f32
            | Op::v_cvt_sr_fp8_f32
            | Op::v_cvt_sr_bf8_f32
    )
}

fn disasm_vop3p(inst: &Inst, mn: &str, target: Target) -> String {
    let op = inst.op;
    let types = op.types();
    let nsrc = types.len() - 1;
    let name = op.name();
    if name.starts_with("v_mfma") || name.starts_with("v_smfmac") {
        let mut s = format!(
            "{mn} {}, {}, {}, {}",
            operand(inst.dst, types[0].dwords(), 0),
            operand(inst.src[0], types[1].dwords(), inst.lit),
            operand(inst.src[1], types[2].dwords(), inst.lit),
            operand(inst.src[2], types[3].dwords(), inst.lit)
        );
        let cbsz = inst.ctrl & 7;
        let abid = (inst.ctrl >> 3) & 0xF;
        let blgp = (inst.ctrl >> 10) & 7;
        if cbsz != 0 {
            s.push_str(&format!(" cbsz:{cbsz}"));
        }
        if abid != 0 {
            s.push_str(&format!(" abid:{abid}"));
        }
        if blgp != 0 && target == Target::Gfx942 && name.starts_with("v_mfma_f64") {
            // gfx942's f64 shapes read the field as negations of A, B and C.
            let neg: Vec<String> = (0..3).map(|k| (blgp >> k & 1).to_string()).collect();
            s.push_str(&format!(" neg:[{}]", neg.join(",")));
        } else if blgp != 0 {
            s.push_str(&format!(" blgp:{blgp}"));
        }
        return s;
    }
    if name.starts_with("v_fma_mix") {
        return disasm_fma_mix(inst, mn);
    }
    let mut parts = vec![operand(inst.dst, types[0].dwords(), 0)];
    for k in 0..nsrc {
        parts.push(operand(inst.src[k], types[k + 1].dwords(), inst.lit));
    }
    let mut s = format!("{mn} {}", parts.join(", "));
    if matches!(op, Op::v_accvgpr_read_b32 | Op::v_accvgpr_write_b32) {
        return s;
    }
    let list = |bits: u8| -> String {
        (0..nsrc)
            .map(|k| ((bits >> k) & 1).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    if matches!(
        op,
        Op::v_dot4_i32_i8 | Op::v_dot4_u32_u8 | Op::v_dot8_i32_i4 | Op::v_dot8_u32_u4
    ) {
        // Sources of packed bytes or nibbles: no half selects.
        if inst.neg != 0 {
            s.push_str(&format!(" neg_lo:[{}]", list(inst.neg)));
        }
        if inst.abs != 0 {
            s.push_str(&format!(" neg_hi:[{}]", list(inst.abs)));
        }
        if inst.clamp {
            s.push_str(" clamp");
        }
        return s;
    }
    if inst.op_sel != 0 {
        s.push_str(&format!(" op_sel:[{}]", list(inst.op_sel)));
    }
    let default_hi = (1u8 << nsrc) - 1;
    if inst.op_sel_hi & default_hi != default_hi {
        s.push_str(&format!(" op_sel_hi:[{}]", list(inst.op_sel_hi)));
    }
    if inst.neg != 0 {
        s.push_str(&format!(" neg_lo:[{}]", list(inst.neg)));
    }
    if inst.abs != 0 {
        s.push_str(&format!(" neg_hi:[{}]", list(inst.abs)));
    }
    if inst.clamp {
        s.push_str(" clamp");
    }
    s
}

/// `v_fma_mix*`: neg_lo and neg_hi print as `-` and `|...|` on each source; op_sel_hi
/// (the f16 selects) defaults to all clear.
fn disasm_fma_mix(inst: &Inst, mn: &str) -> String {
    let mut parts = vec![operand(inst.dst, 1, 0)];
    for k in 0..3 {
        let mut o = operand(inst.src[k], 1, inst.lit);
        if (inst.abs >> k) & 1 != 0 {
            o = format!("|{o}|");
        }
        if (inst.neg >> k) & 1 != 0 {
            o = format!("-{o}");
        }
        parts.push(o);
    }
    let mut s = format!("{mn} {}", parts.join(", "));
    let list = |bits: u8| format!("[{},{},{}]", bits & 1, (bits >> 1) & 1, (bits >> 2) & 1);
    if inst.op_sel & 7 != 0 {
        s.push_str(&format!(" op_sel:{}", list(inst.op_sel)));
    }
    if inst.op_sel_hi & 7 != 0 {
        s.push_str(&format!(" op_sel_hi:{}", list(inst.op_sel_hi)));
    }
    if inst.clamp {
        s.push_str(" clamp");
    }
    s
}
