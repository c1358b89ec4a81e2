//! The operations the decoder knows, with the type of each operand.
//!
//! An [`Op`] is target-independent: the per-target encoding tables map opcode numbers to it.
//! The operand types decide register widths (one or two dwords, or more for memory data) and
//! how inline constants and literals are read (see [`Ty`]).

/// The type of one operand, as far as decoding and operand fetch care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// No operand.
    N,
    /// 32-bit integer or untyped bits: float inline constants give their f32 bits.
    B32,
    /// 64-bit untyped: a literal is zero-extended, float inline constants give f64 bits.
    B64,
    /// 64-bit signed integer: a literal is sign-extended.
    I64,
    /// 16-bit float in the low half.
    F16,
    /// 32-bit float.
    F32,
    /// 64-bit float: a literal is the high half.
    F64,
    /// Two packed 16-bit values (f16 inline constants).
    P16,
    /// Two packed f32 values in a 64-bit register pair (f32 inline constants per half).
    PF32,
    /// Two dwords of data (memory).
    X2,
    /// Three dwords of data (memory).
    X3,
    /// Four dwords of data (memory, MFMA accumulators).
    X4,
    /// Eight dwords of data (memory).
    X8,
    /// Sixteen dwords of data (memory, MFMA accumulators).
    X16,
    /// Thirty-two dwords of data (MFMA accumulators).
    X32,
}

impl Ty {
    /// The number of 32-bit registers an operand of this type spans.
    pub fn dwords(self) -> u32 {
        match self {
            Ty::N => 0,
            Ty::B32 | Ty::F16 | Ty::F32 | Ty::P16 => 1,
            Ty::B64 | Ty::I64 | Ty::F64 | Ty::PF32 | Ty::X2 => 2,
            Ty::X3 => 3,
            Ty::X4 => 4,
            Ty::X8 => 8,
            Ty::X16 => 16,
            Ty::X32 => 32,
        }
    }
}

pub use crate::texel::{DATA_FORMAT_NAMES, NUMBER_FORMAT_NAMES};

impl Op {
    /// An MFMA's shape as its mnemonic and accumulator width give it: (M, N, K, blocks), where
    /// `blocks` independent M x N products fill the accumulator registers of 64 lanes.
    pub fn mfma_shape(self) -> Option<(u32, u32, u32, u32)> {
        let rest = self.name().strip_prefix("v_mfma_")?;
        let dims = rest.split('_').nth(1)?;
        let mut it = dims.split('x');
        let m: u32 = it.next()?.parse().ok()?;
        let n: u32 = it.next()?.parse().ok()?;
        let k_part = it.next()?;
        let digits = k_part
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(k_part.len());
        let k: u32 = k_part[..digits].parse().ok()?;
        let element_dwords = if rest.starts_with("f64") { 2 } else { 1 };
        let outputs = self.types().first()?.dwords() / element_dwords;
        Some((m, n, k, (outputs * 64 / (m * n)).max(1)))
    }
}

macro_rules! ops {
    ($($name:ident = [$($t:ident),*];)*) => {
        /// An operation, named by its GFX9 mnemonic (without `_e32`/`_e64`/`_dpp`/`_sdwa`).
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum Op { $($name,)* }

        impl Op {
            /// Every operation, in declaration order (`ALL[op as usize] == op`).
            pub const ALL: &'static [Op] = &[$(Op::$name),*];

            /// The mnemonic.
            pub fn name(self) -> &'static str {
                match self { $(Op::$name => stringify!($name),)* }
            }
            /// Operand types: destination first, then the sources.
            pub fn types(self) -> &'static [Ty] {
                match self { $(Op::$name => &[$(Ty::$t),*],)* }
            }
        }
    };
}

ops! {
    invalid = [N];
    // SOP2
    s_add_u32 = [B32, B32, B32]; s_sub_u32 = [B32, B32, B32]; s_add_i32 = [B32, B32, B32];
    s_sub_i32 = [B32, B32, B32]; s_addc_u32 = [B32, B32, B32]; s_subb_u32 = [B32, B32, B32];
    s_min_i32 = [B32, B32, B32]; s_min_u32 = [B32, B32, B32]; s_max_i32 = [B32, B32, B32];
    s_max_u32 = [B32, B32, B32]; s_cselect_b32 = [B32, B32, B32]; s_cselect_b64 = [B64, B64, B64];
    s_and_b32 = [B32, B32, B32]; s_and_b64 = [B64, B64, B64]; s_or_b32 = [B32, B32, B32];
    s_or_b64 = [B64, B64, B64]; s_xor_b32 = [B32, B32, B32]; s_xor_b64 = [B64, B64, B64];
    s_andn2_b32 = [B32, B32, B32]; s_andn2_b64 = [B64, B64, B64]; s_orn2_b32 = [B32, B32, B32];
    s_orn2_b64 = [B64, B64, B64]; s_nand_b32 = [B32, B32, B32]; s_nand_b64 = [B64, B64, B64];
    s_nor_b32 = [B32, B32, B32]; s_nor_b64 = [B64, B64, B64]; s_xnor_b32 = [B32, B32, B32];
    s_xnor_b64 = [B64, B64, B64]; s_lshl_b32 = [B32, B32, B32]; s_lshl_b64 = [B64, B64, B32];
    s_lshr_b32 = [B32, B32, B32]; s_lshr_b64 = [B64, B64, B32]; s_ashr_i32 = [B32, B32, B32];
    s_ashr_i64 = [B64, B64, B32]; s_bfm_b32 = [B32, B32, B32]; s_bfm_b64 = [B64, B32, B32];
    s_mul_i32 = [B32, B32, B32]; s_bfe_u32 = [B32, B32, B32]; s_bfe_i32 = [B32, B32, B32];
    s_bfe_u64 = [B64, B64, B32]; s_bfe_i64 = [B64, B64, B32]; s_absdiff_i32 = [B32, B32, B32];
    s_mul_hi_u32 = [B32, B32, B32]; s_mul_hi_i32 = [B32, B32, B32];
    s_lshl1_add_u32 = [B32, B32, B32]; s_lshl2_add_u32 = [B32, B32, B32];
    s_lshl3_add_u32 = [B32, B32, B32]; s_lshl4_add_u32 = [B32, B32, B32];
    s_pack_ll_b32_b16 = [B32, B32, B32]; s_pack_lh_b32_b16 = [B32, B32, B32];
    s_pack_hh_b32_b16 = [B32, B32, B32]; s_cbranch_g_fork = [N, B64, B64];
    s_rfe_restore_b64 = [N, B64, B32];
    // SOPK
    s_movk_i32 = [B32]; s_cmovk_i32 = [B32]; s_cmpk_eq_i32 = [B32]; s_cmpk_lg_i32 = [B32];
    s_cmpk_gt_i32 = [B32]; s_cmpk_ge_i32 = [B32]; s_cmpk_lt_i32 = [B32]; s_cmpk_le_i32 = [B32];
    s_cmpk_eq_u32 = [B32]; s_cmpk_lg_u32 = [B32]; s_cmpk_gt_u32 = [B32]; s_cmpk_ge_u32 = [B32];
    s_cmpk_lt_u32 = [B32]; s_cmpk_le_u32 = [B32]; s_addk_i32 = [B32]; s_mulk_i32 = [B32];
    s_getreg_b32 = [B32]; s_setreg_b32 = [B32]; s_setreg_imm32_b32 = [N]; s_call_b64 = [B64];
    s_cbranch_i_fork = [B64];
    // SOP1
    s_mov_b32 = [B32, B32]; s_mov_b64 = [B64, B64]; s_cmov_b32 = [B32, B32]; s_cmov_b64 = [B64, B64];
    s_not_b32 = [B32, B32]; s_not_b64 = [B64, B64]; s_wqm_b32 = [B32, B32]; s_wqm_b64 = [B64, B64];
    s_brev_b32 = [B32, B32]; s_brev_b64 = [B64, B64]; s_bcnt0_i32_b32 = [B32, B32];
    s_bcnt0_i32_b64 = [B32, B64]; s_bcnt1_i32_b32 = [B32, B32]; s_bcnt1_i32_b64 = [B32, B64];
    s_ff0_i32_b32 = [B32, B32]; s_ff0_i32_b64 = [B32, B64]; s_ff1_i32_b32 = [B32, B32];
    s_ff1_i32_b64 = [B32, B64]; s_flbit_i32_b32 = [B32, B32]; s_flbit_i32_b64 = [B32, B64];
    s_flbit_i32 = [B32, B32]; s_flbit_i32_i64 = [B32, B64]; s_sext_i32_i8 = [B32, B32];
    s_sext_i32_i16 = [B32, B32]; s_bitset0_b32 = [B32, B32]; s_bitset0_b64 = [B64, B32];
    s_bitset1_b32 = [B32, B32]; s_bitset1_b64 = [B64, B32]; s_getpc_b64 = [B64];
    s_setpc_b64 = [N, B64]; s_swappc_b64 = [B64, B64];
    s_and_saveexec_b64 = [B64, B64]; s_or_saveexec_b64 = [B64, B64];
    s_xor_saveexec_b64 = [B64, B64]; s_andn2_saveexec_b64 = [B64, B64];
    s_orn2_saveexec_b64 = [B64, B64]; s_nand_saveexec_b64 = [B64, B64];
    s_nor_saveexec_b64 = [B64, B64]; s_xnor_saveexec_b64 = [B64, B64];
    s_quadmask_b32 = [B32, B32]; s_quadmask_b64 = [B64, B64]; s_abs_i32 = [B32, B32];
    s_andn1_saveexec_b64 = [B64, B64]; s_orn1_saveexec_b64 = [B64, B64];
    s_andn1_wrexec_b64 = [B64, B64]; s_andn2_wrexec_b64 = [B64, B64];
    s_bitreplicate_b64_b32 = [B64, B32]; s_set_gpr_idx_idx = [N, B32];
    s_rfe_b64 = [N, B64]; s_movrels_b32 = [B32, B32]; s_movrels_b64 = [B64, B64];
    s_movreld_b32 = [B32, B32]; s_movreld_b64 = [B64, B64]; s_cbranch_join = [N, B32];
    // SOPC
    s_cmp_eq_i32 = [N, B32, B32]; s_cmp_lg_i32 = [N, B32, B32]; s_cmp_gt_i32 = [N, B32, B32];
    s_cmp_ge_i32 = [N, B32, B32]; s_cmp_lt_i32 = [N, B32, B32]; s_cmp_le_i32 = [N, B32, B32];
    s_cmp_eq_u32 = [N, B32, B32]; s_cmp_lg_u32 = [N, B32, B32]; s_cmp_gt_u32 = [N, B32, B32];
    s_cmp_ge_u32 = [N, B32, B32]; s_cmp_lt_u32 = [N, B32, B32]; s_cmp_le_u32 = [N, B32, B32];
    s_bitcmp0_b32 = [N, B32, B32]; s_bitcmp1_b32 = [N, B32, B32]; s_bitcmp0_b64 = [N, B64, B32];
    s_bitcmp1_b64 = [N, B64, B32]; s_cmp_eq_u64 = [N, B64, B64]; s_cmp_lg_u64 = [N, B64, B64];
    s_set_gpr_idx_on = [N, B32]; s_setvskip = [N, B32, B32];
    // SOPP
    s_nop = [N]; s_endpgm = [N]; s_branch = [N]; s_wakeup = [N]; s_cbranch_scc0 = [N];
    s_cbranch_scc1 = [N]; s_cbranch_vccz = [N]; s_cbranch_vccnz = [N]; s_cbranch_execz = [N];
    s_cbranch_execnz = [N]; s_barrier = [N]; s_setkill = [N]; s_waitcnt = [N]; s_sethalt = [N];
    s_sleep = [N]; s_setprio = [N]; s_sendmsg = [N]; s_sendmsghalt = [N]; s_trap = [N];
    s_icache_inv = [N]; s_incperflevel = [N]; s_decperflevel = [N]; s_ttracedata = [N];
    s_endpgm_saved = [N]; s_set_gpr_idx_off = [N]; s_set_gpr_idx_mode = [N];
    s_cbranch_cdbgsys = [N]; s_cbranch_cdbguser = [N]; s_cbranch_cdbgsys_or_user = [N];
    s_cbranch_cdbgsys_and_user = [N]; s_endpgm_ordered_ps_done = [N];
    // SMEM
    s_load_dword = [B32, B64]; s_load_dwordx2 = [X2, B64]; s_load_dwordx4 = [X4, B64];
    s_load_dwordx8 = [X8, B64]; s_load_dwordx16 = [X16, B64];
    s_buffer_load_dword = [B32, X4]; s_buffer_load_dwordx2 = [X2, X4];
    s_buffer_load_dwordx4 = [X4, X4]; s_buffer_load_dwordx8 = [X8, X4];
    s_buffer_load_dwordx16 = [X16, X4];
    s_store_dword = [B32, B64]; s_store_dwordx2 = [X2, B64]; s_store_dwordx4 = [X4, B64];
    s_dcache_inv = [N]; s_dcache_wb = [N]; s_dcache_inv_vol = [N]; s_dcache_wb_vol = [N];
    s_memtime = [B64]; s_memrealtime = [B64];
    s_scratch_load_dword = [B32, B64]; s_scratch_load_dwordx2 = [X2, B64];
    s_scratch_load_dwordx4 = [X4, B64]; s_scratch_store_dword = [B32, B64];
    s_scratch_store_dwordx2 = [X2, B64]; s_scratch_store_dwordx4 = [X4, B64];
    s_buffer_store_dword = [B32, X4]; s_buffer_store_dwordx2 = [X2, X4];
    s_buffer_store_dwordx4 = [X4, X4]; s_atc_probe = [N, B64]; s_atc_probe_buffer = [N, X4];
    s_dcache_discard = [N, B64]; s_dcache_discard_x2 = [N, B64];
    s_buffer_atomic_swap = [B32, X4]; s_buffer_atomic_cmpswap = [X2, X4];
    s_buffer_atomic_add = [B32, X4]; s_buffer_atomic_sub = [B32, X4];
    s_buffer_atomic_smin = [B32, X4]; s_buffer_atomic_umin = [B32, X4];
    s_buffer_atomic_smax = [B32, X4]; s_buffer_atomic_umax = [B32, X4];
    s_buffer_atomic_and = [B32, X4]; s_buffer_atomic_or = [B32, X4];
    s_buffer_atomic_xor = [B32, X4]; s_buffer_atomic_inc = [B32, X4];
    s_buffer_atomic_dec = [B32, X4]; s_buffer_atomic_swap_x2 = [X2, X4];
    s_buffer_atomic_cmpswap_x2 = [X4, X4]; s_buffer_atomic_add_x2 = [X2, X4];
    s_buffer_atomic_sub_x2 = [X2, X4]; s_buffer_atomic_smin_x2 = [X2, X4];
    s_buffer_atomic_umin_x2 = [X2, X4]; s_buffer_atomic_smax_x2 = [X2, X4];
    s_buffer_atomic_umax_x2 = [X2, X4]; s_buffer_atomic_and_x2 = [X2, X4];
    s_buffer_atomic_or_x2 = [X2, X4]; s_buffer_atomic_xor_x2 = [X2, X4];
    s_buffer_atomic_inc_x2 = [X2, X4]; s_buffer_atomic_dec_x2 = [X2, X4];
    s_atomic_swap = [B32, B64]; s_atomic_cmpswap = [X2, B64]; s_atomic_add = [B32, B64];
    s_atomic_sub = [B32, B64]; s_atomic_smin = [B32, B64]; s_atomic_umin = [B32, B64];
    s_atomic_smax = [B32, B64]; s_atomic_umax = [B32, B64]; s_atomic_and = [B32, B64];
    s_atomic_or = [B32, B64]; s_atomic_xor = [B32, B64]; s_atomic_inc = [B32, B64];
    s_atomic_dec = [B32, B64]; s_atomic_swap_x2 = [X2, B64]; s_atomic_cmpswap_x2 = [X4, B64];
    s_atomic_add_x2 = [X2, B64]; s_atomic_sub_x2 = [X2, B64]; s_atomic_smin_x2 = [X2, B64];
    s_atomic_umin_x2 = [X2, B64]; s_atomic_smax_x2 = [X2, B64]; s_atomic_umax_x2 = [X2, B64];
    s_atomic_and_x2 = [X2, B64]; s_atomic_or_x2 = [X2, B64]; s_atomic_xor_x2 = [X2, B64];
    s_atomic_inc_x2 = [X2, B64]; s_atomic_dec_x2 = [X2, B64];
    // VOP2 (also as VOP3 with the VOP2 opcode + 0x100)
    v_cndmask_b32 = [B32, B32, B32]; v_add_f32 = [F32, F32, F32]; v_sub_f32 = [F32, F32, F32];
    v_subrev_f32 = [F32, F32, F32]; v_mul_legacy_f32 = [F32, F32, F32]; v_mul_f32 = [F32, F32, F32];
    v_mul_i32_i24 = [B32, B32, B32]; v_mul_hi_i32_i24 = [B32, B32, B32];
    v_mul_u32_u24 = [B32, B32, B32]; v_mul_hi_u32_u24 = [B32, B32, B32];
    v_min_f32 = [F32, F32, F32]; v_max_f32 = [F32, F32, F32]; v_min_i32 = [B32, B32, B32];
    v_max_i32 = [B32, B32, B32]; v_min_u32 = [B32, B32, B32]; v_max_u32 = [B32, B32, B32];
    v_lshrrev_b32 = [B32, B32, B32]; v_ashrrev_i32 = [B32, B32, B32];
    v_lshlrev_b32 = [B32, B32, B32]; v_and_b32 = [B32, B32, B32]; v_or_b32 = [B32, B32, B32];
    v_xor_b32 = [B32, B32, B32]; v_mac_f32 = [F32, F32, F32]; v_madmk_f32 = [F32, F32, F32];
    v_madak_f32 = [F32, F32, F32]; v_fmamk_f32 = [F32, F32, F32]; v_fmaak_f32 = [F32, F32, F32];
    v_add_co_u32 = [B32, B32, B32]; v_sub_co_u32 = [B32, B32, B32];
    v_subrev_co_u32 = [B32, B32, B32]; v_addc_co_u32 = [B32, B32, B32];
    v_subb_co_u32 = [B32, B32, B32]; v_subbrev_co_u32 = [B32, B32, B32];
    v_add_f16 = [F16, F16, F16]; v_sub_f16 = [F16, F16, F16]; v_subrev_f16 = [F16, F16, F16];
    v_mul_f16 = [F16, F16, F16]; v_mac_f16 = [F16, F16, F16]; v_add_u16 = [B32, B32, B32];
    v_sub_u16 = [B32, B32, B32]; v_subrev_u16 = [B32, B32, B32]; v_mul_lo_u16 = [B32, B32, B32];
    v_lshlrev_b16 = [B32, B32, B32]; v_lshrrev_b16 = [B32, B32, B32];
    v_ashrrev_i16 = [B32, B32, B32]; v_max_f16 = [F16, F16, F16]; v_min_f16 = [F16, F16, F16];
    v_max_u16 = [B32, B32, B32]; v_max_i16 = [B32, B32, B32]; v_min_u16 = [B32, B32, B32];
    v_min_i16 = [B32, B32, B32]; v_ldexp_f16 = [F16, F16, B32]; v_add_u32 = [B32, B32, B32];
    v_sub_u32 = [B32, B32, B32]; v_subrev_u32 = [B32, B32, B32]; v_fmac_f32 = [F32, F32, F32];
    v_fmac_f64 = [F64, F64, F64]; v_xnor_b32 = [B32, B32, B32];
    v_madmk_f16 = [F16, F16, F16]; v_madak_f16 = [F16, F16, F16];
    v_dot2c_f32_f16 = [F32, P16, P16]; v_dot2c_i32_i16 = [B32, B32, B32];
    v_dot4c_i32_i8 = [B32, B32, B32]; v_dot8c_i32_i4 = [B32, B32, B32];
    v_pk_fmac_f16 = [P16, P16, P16];
    // VOP1 (also as VOP3 with the VOP1 opcode + 0x140)
    v_nop = [N]; v_mov_b32 = [B32, B32]; v_readfirstlane_b32 = [B32, B32];
    v_cvt_i32_f64 = [B32, F64]; v_cvt_f64_i32 = [F64, B32]; v_cvt_f32_i32 = [F32, B32];
    v_cvt_f32_u32 = [F32, B32]; v_cvt_u32_f32 = [B32, F32]; v_cvt_i32_f32 = [B32, F32];
    v_cvt_f16_f32 = [F16, F32]; v_cvt_f32_f16 = [F32, F16]; v_cvt_rpi_i32_f32 = [B32, F32];
    v_cvt_flr_i32_f32 = [B32, F32]; v_cvt_f32_f64 = [F32, F64]; v_cvt_f64_f32 = [F64, F32];
    v_cvt_f32_ubyte0 = [F32, B32]; v_cvt_f32_ubyte1 = [F32, B32]; v_cvt_f32_ubyte2 = [F32, B32];
    v_cvt_f32_ubyte3 = [F32, B32]; v_cvt_u32_f64 = [B32, F64]; v_cvt_f64_u32 = [F64, B32];
    v_trunc_f64 = [F64, F64]; v_ceil_f64 = [F64, F64]; v_rndne_f64 = [F64, F64];
    v_floor_f64 = [F64, F64]; v_fract_f32 = [F32, F32]; v_trunc_f32 = [F32, F32];
    v_ceil_f32 = [F32, F32]; v_rndne_f32 = [F32, F32]; v_floor_f32 = [F32, F32];
    v_exp_f32 = [F32, F32]; v_log_f32 = [F32, F32]; v_rcp_f32 = [F32, F32];
    v_rcp_iflag_f32 = [F32, F32]; v_rsq_f32 = [F32, F32]; v_rcp_f64 = [F64, F64];
    v_rsq_f64 = [F64, F64]; v_sqrt_f32 = [F32, F32]; v_sqrt_f64 = [F64, F64];
    v_sin_f32 = [F32, F32]; v_cos_f32 = [F32, F32]; v_not_b32 = [B32, B32];
    v_bfrev_b32 = [B32, B32]; v_ffbh_u32 = [B32, B32]; v_ffbl_b32 = [B32, B32];
    v_ffbh_i32 = [B32, B32]; v_frexp_exp_i32_f64 = [B32, F64]; v_frexp_mant_f64 = [F64, F64];
    v_fract_f64 = [F64, F64]; v_frexp_exp_i32_f32 = [B32, F32]; v_frexp_mant_f32 = [F32, F32];
    v_mov_b64 = [B64, B64]; v_cvt_f16_u16 = [F16, B32]; v_cvt_f16_i16 = [F16, B32];
    v_cvt_u16_f16 = [B32, F16]; v_cvt_i16_f16 = [B32, F16]; v_rcp_f16 = [F16, F16];
    v_sqrt_f16 = [F16, F16]; v_rsq_f16 = [F16, F16]; v_floor_f16 = [F16, F16];
    v_ceil_f16 = [F16, F16]; v_trunc_f16 = [F16, F16]; v_rndne_f16 = [F16, F16];
    v_fract_f16 = [F16, F16]; v_swap_b32 = [B32, B32]; v_accvgpr_mov_b32 = [B32, B32];
    v_cvt_f32_fp8 = [F32, B32]; v_cvt_f32_bf8 = [F32, B32];
    v_cvt_pk_f32_fp8 = [B64, B32]; v_cvt_pk_f32_bf8 = [B64, B32];
    v_cvt_off_f32_i4 = [F32, B32]; v_clrexcp = [N]; v_screen_partition_4se_b32 = [B32, B32];
    v_log_f16 = [F16, F16]; v_exp_f16 = [F16, F16]; v_frexp_mant_f16 = [F16, F16];
    v_frexp_exp_i16_f16 = [B32, F16]; v_sin_f16 = [F16, F16]; v_cos_f16 = [F16, F16];
    v_exp_legacy_f32 = [F32, F32]; v_log_legacy_f32 = [F32, F32];
    v_cvt_norm_i16_f16 = [B32, F16]; v_cvt_norm_u16_f16 = [B32, F16];
    v_sat_pk_u8_i16 = [B32, B32];
    // VOPC (the destination is VCC or an SGPR pair)
    v_cmp_class_f32 = [B64, F32, B32]; v_cmpx_class_f32 = [B64, F32, B32];
    v_cmp_class_f64 = [B64, F64, B32]; v_cmpx_class_f64 = [B64, F64, B32];
    v_cmp_class_f16 = [B64, F16, B32]; v_cmpx_class_f16 = [B64, F16, B32];
    v_cmp_f_f16 = [B64, F16, F16]; v_cmp_lt_f16 = [B64, F16, F16]; v_cmp_eq_f16 = [B64, F16, F16];
    v_cmp_le_f16 = [B64, F16, F16]; v_cmp_gt_f16 = [B64, F16, F16]; v_cmp_lg_f16 = [B64, F16, F16];
    v_cmp_ge_f16 = [B64, F16, F16]; v_cmp_o_f16 = [B64, F16, F16]; v_cmp_u_f16 = [B64, F16, F16];
    v_cmp_nge_f16 = [B64, F16, F16]; v_cmp_nlg_f16 = [B64, F16, F16];
    v_cmp_ngt_f16 = [B64, F16, F16]; v_cmp_nle_f16 = [B64, F16, F16];
    v_cmp_neq_f16 = [B64, F16, F16]; v_cmp_nlt_f16 = [B64, F16, F16];
    v_cmp_tru_f16 = [B64, F16, F16];
    v_cmp_f_f32 = [B64, F32, F32]; v_cmp_lt_f32 = [B64, F32, F32]; v_cmp_eq_f32 = [B64, F32, F32];
    v_cmp_le_f32 = [B64, F32, F32]; v_cmp_gt_f32 = [B64, F32, F32]; v_cmp_lg_f32 = [B64, F32, F32];
    v_cmp_ge_f32 = [B64, F32, F32]; v_cmp_o_f32 = [B64, F32, F32]; v_cmp_u_f32 = [B64, F32, F32];
    v_cmp_nge_f32 = [B64, F32, F32]; v_cmp_nlg_f32 = [B64, F32, F32];
    v_cmp_ngt_f32 = [B64, F32, F32]; v_cmp_nle_f32 = [B64, F32, F32];
    v_cmp_neq_f32 = [B64, F32, F32]; v_cmp_nlt_f32 = [B64, F32, F32];
    v_cmp_tru_f32 = [B64, F32, F32];
    v_cmp_f_f64 = [B64, F64, F64]; v_cmp_lt_f64 = [B64, F64, F64]; v_cmp_eq_f64 = [B64, F64, F64];
    v_cmp_le_f64 = [B64, F64, F64]; v_cmp_gt_f64 = [B64, F64, F64]; v_cmp_lg_f64 = [B64, F64, F64];
    v_cmp_ge_f64 = [B64, F64, F64]; v_cmp_o_f64 = [B64, F64, F64]; v_cmp_u_f64 = [B64, F64, F64];
    v_cmp_nge_f64 = [B64, F64, F64]; v_cmp_nlg_f64 = [B64, F64, F64];
    v_cmp_ngt_f64 = [B64, F64, F64]; v_cmp_nle_f64 = [B64, F64, F64];
    v_cmp_neq_f64 = [B64, F64, F64]; v_cmp_nlt_f64 = [B64, F64, F64];
    v_cmp_tru_f64 = [B64, F64, F64];
    v_cmpx_lt_f32 = [B64, F32, F32]; v_cmpx_eq_f32 = [B64, F32, F32];
    v_cmpx_gt_f32 = [B64, F32, F32]; v_cmpx_neq_f32 = [B64, F32, F32];
    v_cmp_f_i32 = [B64, B32, B32]; v_cmp_lt_i32 = [B64, B32, B32]; v_cmp_eq_i32 = [B64, B32, B32];
    v_cmp_le_i32 = [B64, B32, B32]; v_cmp_gt_i32 = [B64, B32, B32]; v_cmp_ne_i32 = [B64, B32, B32];
    v_cmp_ge_i32 = [B64, B32, B32]; v_cmp_t_i32 = [B64, B32, B32];
    v_cmp_f_u32 = [B64, B32, B32]; v_cmp_lt_u32 = [B64, B32, B32]; v_cmp_eq_u32 = [B64, B32, B32];
    v_cmp_le_u32 = [B64, B32, B32]; v_cmp_gt_u32 = [B64, B32, B32]; v_cmp_ne_u32 = [B64, B32, B32];
    v_cmp_ge_u32 = [B64, B32, B32]; v_cmp_t_u32 = [B64, B32, B32];
    v_cmpx_lt_i32 = [B64, B32, B32]; v_cmpx_eq_i32 = [B64, B32, B32];
    v_cmpx_gt_i32 = [B64, B32, B32]; v_cmpx_ne_i32 = [B64, B32, B32];
    v_cmpx_lt_u32 = [B64, B32, B32]; v_cmpx_eq_u32 = [B64, B32, B32];
    v_cmpx_gt_u32 = [B64, B32, B32]; v_cmpx_ne_u32 = [B64, B32, B32];
    v_cmp_f_i64 = [B64, I64, I64]; v_cmp_lt_i64 = [B64, I64, I64]; v_cmp_eq_i64 = [B64, I64, I64];
    v_cmp_le_i64 = [B64, I64, I64]; v_cmp_gt_i64 = [B64, I64, I64]; v_cmp_ne_i64 = [B64, I64, I64];
    v_cmp_ge_i64 = [B64, I64, I64]; v_cmp_t_i64 = [B64, I64, I64];
    v_cmp_f_u64 = [B64, B64, B64]; v_cmp_lt_u64 = [B64, B64, B64]; v_cmp_eq_u64 = [B64, B64, B64];
    v_cmp_le_u64 = [B64, B64, B64]; v_cmp_gt_u64 = [B64, B64, B64]; v_cmp_ne_u64 = [B64, B64, B64];
    v_cmp_ge_u64 = [B64, B64, B64]; v_cmp_t_u64 = [B64, B64, B64];
    v_cmp_lt_i16 = [B64, B32, B32]; v_cmp_eq_i16 = [B64, B32, B32]; v_cmp_gt_i16 = [B64, B32, B32];
    v_cmp_lt_u16 = [B64, B32, B32]; v_cmp_eq_u16 = [B64, B32, B32]; v_cmp_gt_u16 = [B64, B32, B32];
    // VOPC: the remaining compares and every cmpx form
    v_cmpx_f_f16 = [B64, F16, F16]; v_cmpx_lt_f16 = [B64, F16, F16];
    v_cmpx_eq_f16 = [B64, F16, F16]; v_cmpx_le_f16 = [B64, F16, F16];
    v_cmpx_gt_f16 = [B64, F16, F16]; v_cmpx_lg_f16 = [B64, F16, F16];
    v_cmpx_ge_f16 = [B64, F16, F16]; v_cmpx_o_f16 = [B64, F16, F16]; v_cmpx_u_f16 = [B64, F16, F16];
    v_cmpx_nge_f16 = [B64, F16, F16]; v_cmpx_nlg_f16 = [B64, F16, F16];
    v_cmpx_ngt_f16 = [B64, F16, F16]; v_cmpx_nle_f16 = [B64, F16, F16];
    v_cmpx_neq_f16 = [B64, F16, F16]; v_cmpx_nlt_f16 = [B64, F16, F16];
    v_cmpx_tru_f16 = [B64, F16, F16]; v_cmpx_f_f32 = [B64, F32, F32];
    v_cmpx_le_f32 = [B64, F32, F32]; v_cmpx_lg_f32 = [B64, F32, F32];
    v_cmpx_ge_f32 = [B64, F32, F32]; v_cmpx_o_f32 = [B64, F32, F32]; v_cmpx_u_f32 = [B64, F32, F32];
    v_cmpx_nge_f32 = [B64, F32, F32]; v_cmpx_nlg_f32 = [B64, F32, F32];
    v_cmpx_ngt_f32 = [B64, F32, F32]; v_cmpx_nle_f32 = [B64, F32, F32];
    v_cmpx_nlt_f32 = [B64, F32, F32]; v_cmpx_tru_f32 = [B64, F32, F32];
    v_cmpx_f_f64 = [B64, F64, F64]; v_cmpx_lt_f64 = [B64, F64, F64];
    v_cmpx_eq_f64 = [B64, F64, F64]; v_cmpx_le_f64 = [B64, F64, F64];
    v_cmpx_gt_f64 = [B64, F64, F64]; v_cmpx_lg_f64 = [B64, F64, F64];
    v_cmpx_ge_f64 = [B64, F64, F64]; v_cmpx_o_f64 = [B64, F64, F64]; v_cmpx_u_f64 = [B64, F64, F64];
    v_cmpx_nge_f64 = [B64, F64, F64]; v_cmpx_nlg_f64 = [B64, F64, F64];
    v_cmpx_ngt_f64 = [B64, F64, F64]; v_cmpx_nle_f64 = [B64, F64, F64];
    v_cmpx_neq_f64 = [B64, F64, F64]; v_cmpx_nlt_f64 = [B64, F64, F64];
    v_cmpx_tru_f64 = [B64, F64, F64]; v_cmp_f_i16 = [B64, B32, B32]; v_cmpx_f_i16 = [B64, B32, B32];
    v_cmpx_lt_i16 = [B64, B32, B32]; v_cmpx_eq_i16 = [B64, B32, B32];
    v_cmp_le_i16 = [B64, B32, B32]; v_cmpx_le_i16 = [B64, B32, B32];
    v_cmpx_gt_i16 = [B64, B32, B32]; v_cmp_ne_i16 = [B64, B32, B32];
    v_cmpx_ne_i16 = [B64, B32, B32]; v_cmp_ge_i16 = [B64, B32, B32];
    v_cmpx_ge_i16 = [B64, B32, B32]; v_cmp_t_i16 = [B64, B32, B32]; v_cmpx_t_i16 = [B64, B32, B32];
    v_cmp_f_u16 = [B64, B32, B32]; v_cmpx_f_u16 = [B64, B32, B32]; v_cmpx_lt_u16 = [B64, B32, B32];
    v_cmpx_eq_u16 = [B64, B32, B32]; v_cmp_le_u16 = [B64, B32, B32];
    v_cmpx_le_u16 = [B64, B32, B32]; v_cmpx_gt_u16 = [B64, B32, B32];
    v_cmp_ne_u16 = [B64, B32, B32]; v_cmpx_ne_u16 = [B64, B32, B32]; v_cmp_ge_u16 = [B64, B32, B32];
    v_cmpx_ge_u16 = [B64, B32, B32]; v_cmp_t_u16 = [B64, B32, B32]; v_cmpx_t_u16 = [B64, B32, B32];
    v_cmpx_f_i32 = [B64, B32, B32]; v_cmpx_le_i32 = [B64, B32, B32];
    v_cmpx_ge_i32 = [B64, B32, B32]; v_cmpx_t_i32 = [B64, B32, B32]; v_cmpx_f_u32 = [B64, B32, B32];
    v_cmpx_le_u32 = [B64, B32, B32]; v_cmpx_ge_u32 = [B64, B32, B32];
    v_cmpx_t_u32 = [B64, B32, B32]; v_cmpx_f_i64 = [B64, I64, I64]; v_cmpx_lt_i64 = [B64, I64, I64];
    v_cmpx_eq_i64 = [B64, I64, I64]; v_cmpx_le_i64 = [B64, I64, I64];
    v_cmpx_gt_i64 = [B64, I64, I64]; v_cmpx_ne_i64 = [B64, I64, I64];
    v_cmpx_ge_i64 = [B64, I64, I64]; v_cmpx_t_i64 = [B64, I64, I64]; v_cmpx_f_u64 = [B64, B64, B64];
    v_cmpx_lt_u64 = [B64, B64, B64]; v_cmpx_eq_u64 = [B64, B64, B64];
    v_cmpx_le_u64 = [B64, B64, B64]; v_cmpx_gt_u64 = [B64, B64, B64];
    v_cmpx_ne_u64 = [B64, B64, B64]; v_cmpx_ge_u64 = [B64, B64, B64];
    v_cmpx_t_u64 = [B64, B64, B64];
    // VOP3 only
    v_mad_legacy_f32 = [F32, F32, F32, F32]; v_mad_f32 = [F32, F32, F32, F32];
    v_mad_i32_i24 = [B32, B32, B32, B32]; v_mad_u32_u24 = [B32, B32, B32, B32];
    v_bfe_u32 = [B32, B32, B32, B32]; v_bfe_i32 = [B32, B32, B32, B32];
    v_bfi_b32 = [B32, B32, B32, B32]; v_fma_f32 = [F32, F32, F32, F32];
    v_fma_f64 = [F64, F64, F64, F64]; v_alignbit_b32 = [B32, B32, B32, B32];
    v_alignbyte_b32 = [B32, B32, B32, B32]; v_min3_f32 = [F32, F32, F32, F32];
    v_min3_i32 = [B32, B32, B32, B32]; v_min3_u32 = [B32, B32, B32, B32];
    v_max3_f32 = [F32, F32, F32, F32]; v_max3_i32 = [B32, B32, B32, B32];
    v_max3_u32 = [B32, B32, B32, B32]; v_med3_f32 = [F32, F32, F32, F32];
    v_med3_i32 = [B32, B32, B32, B32]; v_med3_u32 = [B32, B32, B32, B32];
    v_div_fixup_f32 = [F32, F32, F32, F32]; v_div_fixup_f64 = [F64, F64, F64, F64];
    v_div_scale_f32 = [F32, F32, F32, F32]; v_div_scale_f64 = [F64, F64, F64, F64];
    v_div_fmas_f32 = [F32, F32, F32, F32]; v_div_fmas_f64 = [F64, F64, F64, F64];
    v_mad_u64_u32 = [B64, B32, B32, B64]; v_mad_i64_i32 = [I64, B32, B32, I64];
    v_mad_legacy_u16 = [B32, B32, B32, B32]; v_mad_legacy_i16 = [B32, B32, B32, B32];
    v_perm_b32 = [B32, B32, B32, B32]; v_mad_u32_u16 = [B32, B32, B32, B32];
    v_mad_i32_i16 = [B32, B32, B32, B32]; v_xad_u32 = [B32, B32, B32, B32];
    v_lshl_add_u32 = [B32, B32, B32, B32]; v_add_lshl_u32 = [B32, B32, B32, B32];
    v_add3_u32 = [B32, B32, B32, B32]; v_lshl_or_b32 = [B32, B32, B32, B32];
    v_and_or_b32 = [B32, B32, B32, B32]; v_or3_b32 = [B32, B32, B32, B32];
    v_fma_f16 = [F16, F16, F16, F16]; v_lshl_add_u64 = [B64, B64, B32, B64];
    v_add_f64 = [F64, F64, F64]; v_mul_f64 = [F64, F64, F64]; v_min_f64 = [F64, F64, F64];
    v_max_f64 = [F64, F64, F64]; v_ldexp_f64 = [F64, F64, B32]; v_mul_lo_u32 = [B32, B32, B32];
    v_mul_hi_u32 = [B32, B32, B32]; v_mul_hi_i32 = [B32, B32, B32]; v_ldexp_f32 = [F32, F32, B32];
    v_readlane_b32 = [B32, B32, B32]; v_writelane_b32 = [B32, B32, B32];
    v_bcnt_u32_b32 = [B32, B32, B32]; v_mbcnt_lo_u32_b32 = [B32, B32, B32];
    v_mbcnt_hi_u32_b32 = [B32, B32, B32]; v_lshlrev_b64 = [B64, B32, B64];
    v_lshrrev_b64 = [B64, B32, B64]; v_ashrrev_i64 = [B64, B32, B64];
    v_bfm_b32 = [B32, B32, B32]; v_cvt_pkrtz_f16_f32 = [B32, F32, F32];
    v_cvt_pk_u16_u32 = [B32, B32, B32]; v_cvt_pk_i16_i32 = [B32, B32, B32];
    v_add_i32 = [B32, B32, B32]; v_sub_i32 = [B32, B32, B32]; v_pack_b32_f16 = [B32, F16, F16];
    v_cubeid_f32 = [F32, F32, F32, F32]; v_cubesc_f32 = [F32, F32, F32, F32];
    v_cubetc_f32 = [F32, F32, F32, F32]; v_cubema_f32 = [F32, F32, F32, F32];
    v_lerp_u8 = [B32, B32, B32, B32]; v_sad_u8 = [B32, B32, B32, B32];
    v_sad_hi_u8 = [B32, B32, B32, B32]; v_sad_u16 = [B32, B32, B32, B32];
    v_sad_u32 = [B32, B32, B32, B32]; v_cvt_pk_u8_f32 = [B32, F32, B32, B32];
    v_msad_u8 = [B32, B32, B32, B32]; v_qsad_pk_u16_u8 = [B64, B64, B32, B64];
    v_mqsad_pk_u16_u8 = [B64, B64, B32, B64]; v_mqsad_u32_u8 = [X4, B64, B32, X4];
    v_mad_legacy_f16 = [F16, F16, F16, F16]; v_fma_legacy_f16 = [F16, F16, F16, F16];
    v_div_fixup_legacy_f16 = [F16, F16, F16, F16]; v_cvt_pkaccum_u8_f32 = [B32, F32, B32];
    v_min3_f16 = [F16, F16, F16, F16]; v_min3_i16 = [B32, B32, B32, B32];
    v_min3_u16 = [B32, B32, B32, B32]; v_max3_f16 = [F16, F16, F16, F16];
    v_max3_i16 = [B32, B32, B32, B32]; v_max3_u16 = [B32, B32, B32, B32];
    v_med3_f16 = [F16, F16, F16, F16]; v_med3_i16 = [B32, B32, B32, B32];
    v_med3_u16 = [B32, B32, B32, B32]; v_mad_f16 = [F16, F16, F16, F16];
    v_mad_u16 = [B32, B32, B32, B32]; v_mad_i16 = [B32, B32, B32, B32];
    v_div_fixup_f16 = [F16, F16, F16, F16]; v_trig_preop_f64 = [F64, F64, B32];
    v_cvt_pknorm_i16_f32 = [B32, F32, F32]; v_cvt_pknorm_u16_f32 = [B32, F32, F32];
    v_cvt_pknorm_i16_f16 = [B32, F16, F16]; v_cvt_pknorm_u16_f16 = [B32, F16, F16];
    v_add_i16 = [B32, B32, B32]; v_sub_i16 = [B32, B32, B32];
    v_cvt_pk_fp8_f32 = [B32, F32, F32]; v_cvt_pk_bf8_f32 = [B32, F32, F32];
    v_cvt_sr_fp8_f32 = [B32, F32, B32]; v_cvt_sr_bf8_f32 = [B32, F32, B32];
    // VOP3P
    v_pk_mad_i16 = [P16, P16, P16, P16]; v_pk_mul_lo_u16 = [P16, P16, P16];
    v_pk_add_i16 = [P16, P16, P16]; v_pk_sub_i16 = [P16, P16, P16];
    v_pk_lshlrev_b16 = [P16, P16, P16]; v_pk_lshrrev_b16 = [P16, P16, P16];
    v_pk_ashrrev_i16 = [P16, P16, P16]; v_pk_max_i16 = [P16, P16, P16];
    v_pk_min_i16 = [P16, P16, P16]; v_pk_mad_u16 = [P16, P16, P16, P16];
    v_pk_add_u16 = [P16, P16, P16]; v_pk_sub_u16 = [P16, P16, P16];
    v_pk_max_u16 = [P16, P16, P16]; v_pk_min_u16 = [P16, P16, P16];
    v_pk_fma_f16 = [P16, P16, P16, P16]; v_pk_add_f16 = [P16, P16, P16];
    v_pk_mul_f16 = [P16, P16, P16]; v_pk_min_f16 = [P16, P16, P16]; v_pk_max_f16 = [P16, P16, P16];
    v_pk_fma_f32 = [PF32, PF32, PF32, PF32]; v_pk_mul_f32 = [PF32, PF32, PF32];
    v_pk_add_f32 = [PF32, PF32, PF32]; v_pk_mov_b32 = [PF32, PF32, PF32];
    v_mfma_f32_16x16x4f32 = [X4, F32, F32, X4]; v_mfma_f32_4x4x1f32 = [X4, F32, F32, X4];
    v_mfma_f32_32x32x2f32 = [X16, F32, F32, X16];
    v_mfma_f32_32x32x8f16 = [X16, X2, X2, X16]; v_mfma_f32_16x16x16f16 = [X4, X2, X2, X4];
    v_mfma_f32_32x32x8bf16_1k = [X16, X2, X2, X16];
    v_mfma_f32_16x16x16bf16_1k = [X4, X2, X2, X4]; v_mfma_f64_16x16x4f64 = [X8, F64, F64, X8];
    v_mfma_f32_32x32x1f32 = [X32, F32, F32, X32]; v_mfma_f32_16x16x1f32 = [X16, F32, F32, X16];
    v_mfma_f32_32x32x4f16 = [X32, X2, X2, X32]; v_mfma_f32_16x16x4f16 = [X16, X2, X2, X16];
    v_mfma_f32_4x4x4f16 = [X4, X2, X2, X4];
    v_mfma_i32_32x32x4i8 = [X32, B32, B32, X32]; v_mfma_i32_16x16x4i8 = [X16, B32, B32, X16];
    v_mfma_i32_4x4x4i8 = [X4, B32, B32, X4]; v_mfma_i32_32x32x8i8 = [X16, B32, B32, X16];
    v_mfma_i32_16x16x16i8 = [X4, B32, B32, X4];
    v_mfma_i32_32x32x16_i8 = [X16, X2, X2, X16]; v_mfma_i32_16x16x32_i8 = [X4, X2, X2, X4];
    v_mfma_f32_32x32x2bf16 = [X32, B32, B32, X32]; v_mfma_f32_16x16x2bf16 = [X16, B32, B32, X16];
    v_mfma_f32_4x4x2bf16 = [X4, B32, B32, X4]; v_mfma_f32_32x32x4bf16 = [X16, B32, B32, X16];
    v_mfma_f32_16x16x8bf16 = [X4, B32, B32, X4];
    v_mfma_f32_32x32x4bf16_1k = [X32, X2, X2, X32];
    v_mfma_f32_16x16x4bf16_1k = [X16, X2, X2, X16]; v_mfma_f32_4x4x4bf16_1k = [X4, X2, X2, X4];
    v_mfma_f64_4x4x4f64 = [F64, F64, F64, F64];
    v_mfma_f32_16x16x32_bf8_bf8 = [X4, X2, X2, X4]; v_mfma_f32_16x16x32_bf8_fp8 = [X4, X2, X2, X4];
    v_mfma_f32_16x16x32_fp8_bf8 = [X4, X2, X2, X4]; v_mfma_f32_16x16x32_fp8_fp8 = [X4, X2, X2, X4];
    v_mfma_f32_32x32x16_bf8_bf8 = [X16, X2, X2, X16];
    v_mfma_f32_32x32x16_bf8_fp8 = [X16, X2, X2, X16];
    v_mfma_f32_32x32x16_fp8_bf8 = [X16, X2, X2, X16];
    v_mfma_f32_32x32x16_fp8_fp8 = [X16, X2, X2, X16];
    v_fma_mix_f32 = [F32, F32, F32, F32]; v_fma_mixlo_f16 = [F16, F32, F32, F32];
    v_fma_mixhi_f16 = [F16, F32, F32, F32];
    v_dot2_f32_f16 = [F32, P16, P16, F32]; v_dot2_i32_i16 = [B32, P16, P16, B32];
    v_dot2_u32_u16 = [B32, P16, P16, B32]; v_dot4_i32_i8 = [B32, B32, B32, B32];
    v_dot4_u32_u8 = [B32, B32, B32, B32]; v_dot8_i32_i4 = [B32, B32, B32, B32];
    v_dot8_u32_u4 = [B32, B32, B32, B32];
    v_mfma_f32_16x16x8_xf32 = [X4, X2, X2, X4]; v_mfma_f32_32x32x4_xf32 = [X16, X2, X2, X16];
    v_smfmac_f32_16x16x32_f16 = [X4, X2, X4, B32]; v_smfmac_f32_32x32x16_f16 = [X16, X2, X4, B32];
    v_smfmac_f32_16x16x32_bf16 = [X4, X2, X4, B32];
    v_smfmac_f32_32x32x16_bf16 = [X16, X2, X4, B32];
    v_smfmac_i32_16x16x64_i8 = [X4, X2, X4, B32]; v_smfmac_i32_32x32x32_i8 = [X16, X2, X4, B32];
    v_smfmac_f32_16x16x64_bf8_bf8 = [X4, X2, X4, B32];
    v_smfmac_f32_16x16x64_bf8_fp8 = [X4, X2, X4, B32];
    v_smfmac_f32_16x16x64_fp8_bf8 = [X4, X2, X4, B32];
    v_smfmac_f32_16x16x64_fp8_fp8 = [X4, X2, X4, B32];
    v_smfmac_f32_32x32x32_bf8_bf8 = [X16, X2, X4, B32];
    v_smfmac_f32_32x32x32_bf8_fp8 = [X16, X2, X4, B32];
    v_smfmac_f32_32x32x32_fp8_bf8 = [X16, X2, X4, B32];
    v_smfmac_f32_32x32x32_fp8_fp8 = [X16, X2, X4, B32];
    v_accvgpr_read_b32 = [B32, B32]; v_accvgpr_write_b32 = [B32, B32];
    // DS
    ds_add_u32 = [N]; ds_sub_u32 = [N]; ds_rsub_u32 = [N]; ds_inc_u32 = [N]; ds_dec_u32 = [N];
    ds_min_i32 = [N]; ds_max_i32 = [N]; ds_min_u32 = [N]; ds_max_u32 = [N]; ds_and_b32 = [N];
    ds_or_b32 = [N]; ds_xor_b32 = [N]; ds_write_b32 = [N]; ds_write2_b32 = [N];
    ds_write2st64_b32 = [N]; ds_min_f32 = [N]; ds_max_f32 = [N]; ds_add_f32 = [N];
    ds_write_b8 = [N]; ds_write_b16 = [N];
    ds_add_rtn_u32 = [B32]; ds_sub_rtn_u32 = [B32]; ds_min_rtn_i32 = [B32]; ds_max_rtn_i32 = [B32];
    ds_min_rtn_u32 = [B32]; ds_max_rtn_u32 = [B32]; ds_and_rtn_b32 = [B32]; ds_or_rtn_b32 = [B32];
    ds_xor_rtn_b32 = [B32]; ds_wrxchg_rtn_b32 = [B32]; ds_cmpst_rtn_b32 = [B32];
    ds_add_rtn_f32 = [B32]; ds_read_b32 = [B32]; ds_read2_b32 = [X2]; ds_read2st64_b32 = [X2];
    ds_read_i8 = [B32]; ds_read_u8 = [B32]; ds_read_i16 = [B32]; ds_read_u16 = [B32];
    ds_swizzle_b32 = [B32]; ds_permute_b32 = [B32]; ds_bpermute_b32 = [B32];
    ds_add_u64 = [N]; ds_write_b64 = [N]; ds_write2_b64 = [N]; ds_write2st64_b64 = [N];
    ds_add_rtn_u64 = [X2]; ds_cmpst_rtn_b64 = [X2]; ds_read_b64 = [X2]; ds_read2_b64 = [X4];
    ds_read2st64_b64 = [X4]; ds_add_f64 = [N]; ds_add_rtn_f64 = [X2];
    ds_write_b96 = [N]; ds_write_b128 = [N]; ds_read_b96 = [X3]; ds_read_b128 = [X4];
    ds_cmpst_b32 = [N]; ds_cmpst_b64 = [N]; ds_rsub_rtn_u32 = [B32]; ds_inc_rtn_u32 = [B32];
    ds_dec_rtn_u32 = [B32]; ds_min_rtn_f32 = [B32]; ds_max_rtn_f32 = [B32];
    ds_sub_u64 = [N]; ds_rsub_u64 = [N]; ds_inc_u64 = [N]; ds_dec_u64 = [N]; ds_min_i64 = [N];
    ds_max_i64 = [N]; ds_min_u64 = [N]; ds_max_u64 = [N]; ds_and_b64 = [N]; ds_or_b64 = [N];
    ds_xor_b64 = [N]; ds_min_f64 = [N]; ds_max_f64 = [N];
    ds_sub_rtn_u64 = [X2]; ds_rsub_rtn_u64 = [X2]; ds_inc_rtn_u64 = [X2]; ds_dec_rtn_u64 = [X2];
    ds_min_rtn_i64 = [X2]; ds_max_rtn_i64 = [X2]; ds_min_rtn_u64 = [X2]; ds_max_rtn_u64 = [X2];
    ds_and_rtn_b64 = [X2]; ds_or_rtn_b64 = [X2]; ds_xor_rtn_b64 = [X2]; ds_wrxchg_rtn_b64 = [X2];
    ds_min_rtn_f64 = [X2]; ds_max_rtn_f64 = [X2];
    ds_gws_init = [N]; ds_gws_barrier = [N];
    ds_write_b8_d16_hi = [N]; ds_write_b16_d16_hi = [N]; ds_read_u8_d16 = [B32];
    ds_read_u8_d16_hi = [B32]; ds_read_i8_d16 = [B32]; ds_read_i8_d16_hi = [B32];
    ds_read_u16_d16 = [B32]; ds_read_u16_d16_hi = [B32];
    ds_append = [B32]; ds_consume = [B32];
    ds_pk_add_f16 = [N]; ds_pk_add_bf16 = [N]; ds_pk_add_rtn_f16 = [B32];
    ds_pk_add_rtn_bf16 = [B32];
    ds_mskor_b32 = [N]; ds_mskor_rtn_b32 = [B32]; ds_mskor_b64 = [N]; ds_mskor_rtn_b64 = [X2];
    ds_cmpst_f32 = [N]; ds_cmpst_rtn_f32 = [B32]; ds_cmpst_f64 = [N]; ds_cmpst_rtn_f64 = [X2];
    ds_wrxchg2_rtn_b32 = [X2]; ds_wrxchg2st64_rtn_b32 = [X2]; ds_wrxchg2_rtn_b64 = [X4];
    ds_wrxchg2st64_rtn_b64 = [X4]; ds_wrap_rtn_b32 = [B32]; ds_condxchg32_rtn_b64 = [X2];
    ds_read_addtid_b32 = [B32]; ds_write_addtid_b32 = [N];
    ds_gws_sema_release_all = [N]; ds_gws_sema_v = [N]; ds_gws_sema_br = [N];
    ds_gws_sema_p = [N];
    // FLAT, GLOBAL, SCRATCH (the segment is a field of the instruction)
    flat_load_ubyte = [B32]; flat_load_sbyte = [B32]; flat_load_ushort = [B32];
    flat_load_sshort = [B32]; flat_load_dword = [B32]; flat_load_dwordx2 = [X2];
    flat_load_dwordx3 = [X3]; flat_load_dwordx4 = [X4]; flat_store_byte = [N];
    flat_store_byte_d16_hi = [N]; flat_store_short = [N]; flat_store_short_d16_hi = [N];
    flat_store_dword = [N]; flat_store_dwordx2 = [N]; flat_store_dwordx3 = [N];
    flat_store_dwordx4 = [N]; flat_load_ubyte_d16 = [B32]; flat_load_ubyte_d16_hi = [B32];
    flat_load_sbyte_d16 = [B32]; flat_load_sbyte_d16_hi = [B32]; flat_load_short_d16 = [B32];
    flat_load_short_d16_hi = [B32];
    flat_atomic_swap = [B32]; flat_atomic_cmpswap = [B32]; flat_atomic_add = [B32];
    flat_atomic_sub = [B32]; flat_atomic_smin = [B32]; flat_atomic_umin = [B32];
    flat_atomic_smax = [B32]; flat_atomic_umax = [B32]; flat_atomic_and = [B32];
    flat_atomic_or = [B32]; flat_atomic_xor = [B32]; flat_atomic_inc = [B32];
    flat_atomic_dec = [B32]; flat_atomic_add_f32 = [B32]; flat_atomic_pk_add_f16 = [B32];
    flat_atomic_add_f64 = [X2]; flat_atomic_min_f64 = [X2]; flat_atomic_max_f64 = [X2];
    flat_atomic_swap_x2 = [X2]; flat_atomic_cmpswap_x2 = [X2]; flat_atomic_add_x2 = [X2];
    flat_atomic_sub_x2 = [X2]; flat_atomic_smin_x2 = [X2]; flat_atomic_umin_x2 = [X2];
    flat_atomic_smax_x2 = [X2]; flat_atomic_umax_x2 = [X2]; flat_atomic_and_x2 = [X2];
    flat_atomic_or_x2 = [X2]; flat_atomic_xor_x2 = [X2]; flat_atomic_inc_x2 = [X2];
    flat_atomic_dec_x2 = [X2];
    flat_load_lds_ubyte = [N]; flat_load_lds_sbyte = [N]; flat_load_lds_ushort = [N];
    flat_load_lds_sshort = [N]; flat_load_lds_dword = [N]; flat_atomic_pk_add_bf16 = [B32];
    // MUBUF
    buffer_load_ubyte = [B32]; buffer_load_sbyte = [B32]; buffer_load_ushort = [B32];
    buffer_load_sshort = [B32]; buffer_load_dword = [B32]; buffer_load_dwordx2 = [X2];
    buffer_load_dwordx3 = [X3]; buffer_load_dwordx4 = [X4]; buffer_store_byte = [N];
    buffer_store_byte_d16_hi = [N]; buffer_store_short = [N]; buffer_store_short_d16_hi = [N];
    buffer_store_dword = [N]; buffer_store_dwordx2 = [N]; buffer_store_dwordx3 = [N];
    buffer_store_dwordx4 = [N]; buffer_wbl2 = [N]; buffer_inv = [N];
    buffer_invl2 = [N]; buffer_wbinvl1 = [N]; buffer_wbinvl1_vol = [N];
    buffer_load_ubyte_d16 = [B32]; buffer_load_ubyte_d16_hi = [B32];
    buffer_load_sbyte_d16 = [B32]; buffer_load_sbyte_d16_hi = [B32];
    buffer_load_short_d16 = [B32]; buffer_load_short_d16_hi = [B32];
    buffer_atomic_swap = [B32]; buffer_atomic_cmpswap = [B32]; buffer_atomic_add = [B32];
    buffer_atomic_sub = [B32]; buffer_atomic_smin = [B32]; buffer_atomic_umin = [B32];
    buffer_atomic_smax = [B32]; buffer_atomic_umax = [B32]; buffer_atomic_and = [B32];
    buffer_atomic_or = [B32]; buffer_atomic_xor = [B32]; buffer_atomic_inc = [B32];
    buffer_atomic_dec = [B32]; buffer_atomic_add_f32 = [B32]; buffer_atomic_pk_add_f16 = [B32];
    buffer_atomic_add_f64 = [X2]; buffer_atomic_min_f64 = [X2]; buffer_atomic_max_f64 = [X2];
    buffer_atomic_swap_x2 = [X2]; buffer_atomic_cmpswap_x2 = [X2]; buffer_atomic_add_x2 = [X2];
    buffer_atomic_sub_x2 = [X2]; buffer_atomic_smin_x2 = [X2]; buffer_atomic_umin_x2 = [X2];
    buffer_atomic_smax_x2 = [X2]; buffer_atomic_umax_x2 = [X2]; buffer_atomic_and_x2 = [X2];
    buffer_atomic_or_x2 = [X2]; buffer_atomic_xor_x2 = [X2]; buffer_atomic_inc_x2 = [X2];
    buffer_atomic_dec_x2 = [X2];
    buffer_load_format_x = [B32]; buffer_load_format_xy = [X2]; buffer_load_format_xyz = [X3];
    buffer_load_format_xyzw = [X4]; buffer_store_format_x = [N]; buffer_store_format_xy = [N];
    buffer_store_format_xyz = [N]; buffer_store_format_xyzw = [N];
    buffer_load_format_d16_x = [B32]; buffer_load_format_d16_xy = [B32];
    buffer_load_format_d16_xyz = [X2]; buffer_load_format_d16_xyzw = [X2];
    buffer_store_format_d16_x = [N]; buffer_store_format_d16_xy = [N];
    buffer_store_format_d16_xyz = [N]; buffer_store_format_d16_xyzw = [N];
    buffer_load_format_d16_hi_x = [B32]; buffer_store_format_d16_hi_x = [N];
    buffer_store_lds_dword = [N];
    // MTBUF (decoded as MUBUF with the instruction's data and number formats in the flags)
    tbuffer_load_format_x = [B32]; tbuffer_load_format_xy = [X2];
    tbuffer_load_format_xyz = [X3]; tbuffer_load_format_xyzw = [X4];
    tbuffer_store_format_x = [N]; tbuffer_store_format_xy = [N];
    tbuffer_store_format_xyz = [N]; tbuffer_store_format_xyzw = [N];
    tbuffer_load_format_d16_x = [B32]; tbuffer_load_format_d16_xy = [B32];
    tbuffer_load_format_d16_xyz = [X2]; tbuffer_load_format_d16_xyzw = [X2];
    tbuffer_store_format_d16_x = [N]; tbuffer_store_format_d16_xy = [N];
    tbuffer_store_format_d16_xyz = [N]; tbuffer_store_format_d16_xyzw = [N];
    // MIMG (gfx90a; the data registers' count follows DMASK, D16 and the image)
    image_load = [N]; image_load_mip = [N]; image_load_pck = [N]; image_load_pck_sgn = [N];
    image_load_mip_pck = [N]; image_load_mip_pck_sgn = [N]; image_store = [N];
    image_store_mip = [N]; image_store_pck = [N]; image_store_mip_pck = [N];
    image_get_resinfo = [N]; image_atomic_swap = [N]; image_atomic_cmpswap = [N];
    image_atomic_add = [N]; image_atomic_sub = [N]; image_atomic_smin = [N];
    image_atomic_umin = [N]; image_atomic_smax = [N]; image_atomic_umax = [N];
    image_atomic_and = [N]; image_atomic_or = [N]; image_atomic_xor = [N];
    image_atomic_inc = [N]; image_atomic_dec = [N]; image_sample = [N];
}

/// The f32 bit patterns of the float inline constants, operand codes 240 to 248 (0.5, -0.5,
/// 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2*pi)).
pub const INLINE_F32_BITS: [u32; 9] = [
    0x3F00_0000,
    0xBF00_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x4000_0000,
    0xC000_0000,
    0x4080_0000,
    0xC080_0000,
    0x3E22_F983,
];

/// The f16 bit patterns of the same constants.
pub const INLINE_F16_BITS: [u32; 9] = [
    0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118,
];

/// The op_sel field of a GFX9 VOP3 operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSel {
    /// The entries of the `op_sel:[...]` list LLVM writes: the sources', then the
    /// destination's (bit 3).
    pub entries: usize,
    /// The sources (bit `k` for source `k`) whose bit selects the high half of a 16-bit value.
    pub sources: u8,
    /// Whether bit 3 writes the result to the destination's high half, keeping the low half.
    pub writes_high: bool,
}

/// The f16 bits of a float inline constant (operand codes 240 to 248), as 16-bit integer
/// operands read them.
pub fn f16_inline_bits(code: u16) -> u32 {
    INLINE_F16_BITS[(code as usize).clamp(240, 248) - 240]
}

impl Op {
    /// Source `k` is a 16-bit integer operand (typed B32 here): a float inline constant is
    /// its f16 bit pattern, as for 16-bit float operands, and a literal is its low half (as
    /// LLVM's operand types `OPERAND_REG_*_INT16` read them). In every encoding of the
    /// operation.
    pub fn int16_source(self, k: usize) -> bool {
        use Op::*;
        let names = self.name();
        let cmp16 = (names.starts_with("v_cmp_") || names.starts_with("v_cmpx_"))
            && (names.ends_with("_i16") || names.ends_with("_u16"));
        match self {
            v_min3_i16 | v_min3_u16 | v_max3_i16 | v_max3_u16 | v_med3_i16 | v_med3_u16
            | v_mad_u16 | v_mad_i16 | v_mad_legacy_u16 | v_mad_legacy_i16 => k < 3,
            v_add_i16 | v_sub_i16 | v_mad_u32_u16 | v_mad_i32_i16 | v_add_u16 | v_sub_u16
            | v_subrev_u16 | v_mul_lo_u16 | v_lshlrev_b16 | v_lshrrev_b16 | v_ashrrev_i16
            | v_max_u16 | v_max_i16 | v_min_u16 | v_min_i16 => k < 2,
            v_cvt_f16_u16 | v_cvt_f16_i16 => k == 0,
            _ => cmp16 && k < 2,
        }
    }

    /// How the operation's VOP3 form takes op_sel on GFX9, or `None` if it has no op_sel field
    /// there (LLVM ignores the bits).
    pub fn op_sel(self) -> Option<OpSel> {
        use Op::*;
        let form = |entries, sources, writes_high| {
            Some(OpSel {
                entries,
                sources,
                writes_high,
            })
        };
        match self {
            v_min3_f16 | v_min3_i16 | v_min3_u16 | v_max3_f16 | v_max3_i16 | v_max3_u16
            | v_med3_f16 | v_med3_i16 | v_med3_u16 | v_mad_f16 | v_mad_u16 | v_mad_i16
            | v_fma_f16 | v_div_fixup_f16 => form(4, 0b111, true),
            // A 32-bit addend and result.
            v_mad_u32_u16 | v_mad_i32_i16 => form(4, 0b011, false),
            v_add_i16 | v_sub_i16 => form(3, 0b011, true),
            v_pack_b32_f16 => form(3, 0b011, false),
            // Written by LLVM, without a documented GFX9 meaning of the source bits (the
            // emulator refuses them or, for the 8-bit float packing, honours bit 3 only).
            v_alignbit_b32 | v_alignbyte_b32 | v_cvt_sr_fp8_f32 | v_cvt_sr_bf8_f32 => {
                form(4, 0, false)
            }
            v_cvt_pknorm_i16_f16 | v_cvt_pknorm_u16_f16 | v_cvt_pk_fp8_f32 | v_cvt_pk_bf8_f32 => {
                form(3, 0, false)
            }
            _ => None,
        }
    }

    /// A cache write-back or invalidate: a no-op for one coherent memory.
    pub fn is_cache_control(self) -> bool {
        matches!(
            self,
            Op::buffer_wbl2
                | Op::buffer_inv
                | Op::buffer_invl2
                | Op::buffer_wbinvl1
                | Op::buffer_wbinvl1_vol
        )
    }

    /// The number of components of a format load or store (`_x` to `_xyzw`), or `None` for
    /// any other operation.
    pub fn format_components(self) -> Option<u32> {
        let n = self.name();
        if !n.contains("_format_") {
            return None;
        }
        n.rsplit_once('_').map(|(_, xyzw)| xyzw.len() as u32)
    }

    /// The number of dwords of the data operand of a memory store or atomic (0 if none).
    pub fn store_dwords(self) -> u32 {
        let n = self.name();
        if let Some(c) = self.format_components() {
            // d16 formats pack two components per register.
            return if n.contains("_d16") { c.div_ceil(2) } else { c };
        }
        if n.ends_with("x16") {
            16
        } else if n.ends_with("x8") {
            8
        } else if n.ends_with("x4") || n.ends_with("b128") {
            4
        } else if n.ends_with("x3") || n.ends_with("b96") {
            3
        } else if n.ends_with("x2")
            || n.ends_with("b64")
            || n.ends_with("u64")
            || n.ends_with("i64")
            || n.ends_with("f64")
        {
            2
        } else {
            1
        }
    }
}
