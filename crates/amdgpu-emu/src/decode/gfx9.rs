//! GFX9 encodings (gfx90a, gfx942): field layouts and opcode tables.

use std::sync::OnceLock;

use super::ops::Op::{self, *};
use super::{AGPR, Enc, Ext, Inst, LITERAL, OFF, VGPR, flags};
use crate::target::Target;

/// Which GFX9 targets an opcode-table row applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum On {
    All,
    Gfx90a,
    Gfx942,
}

type Row = (u16, Op, On);

const SOP2: &[Row] = &[
    (0, s_add_u32, On::All),
    (1, s_sub_u32, On::All),
    (2, s_add_i32, On::All),
    (3, s_sub_i32, On::All),
    (4, s_addc_u32, On::All),
    (5, s_subb_u32, On::All),
    (6, s_min_i32, On::All),
    (7, s_min_u32, On::All),
    (8, s_max_i32, On::All),
    (9, s_max_u32, On::All),
    (10, s_cselect_b32, On::All),
    (11, s_cselect_b64, On::All),
    (12, s_and_b32, On::All),
    (13, s_and_b64, On::All),
    (14, s_or_b32, On::All),
    (15, s_or_b64, On::All),
    (16, s_xor_b32, On::All),
    (17, s_xor_b64, On::All),
    (18, s_andn2_b32, On::All),
    (19, s_andn2_b64, On::All),
    (20, s_orn2_b32, On::All),
    (21, s_orn2_b64, On::All),
    (22, s_nand_b32, On::All),
    (23, s_nand_b64, On::All),
    (24, s_nor_b32, On::All),
    (25, s_nor_b64, On::All),
    (26, s_xnor_b32, On::All),
    (27, s_xnor_b64, On::All),
    (28, s_lshl_b32, On::All),
    (29, s_lshl_b64, On::All),
    (30, s_lshr_b32, On::All),
    (31, s_lshr_b64, On::All),
    (32, s_ashr_i32, On::All),
    (33, s_ashr_i64, On::All),
    (34, s_bfm_b32, On::All),
    (35, s_bfm_b64, On::All),
    (36, s_mul_i32, On::All),
    (37, s_bfe_u32, On::All),
    (38, s_bfe_i32, On::All),
    (39, s_bfe_u64, On::All),
    (40, s_bfe_i64, On::All),
    (42, s_absdiff_i32, On::All),
    (44, s_mul_hi_u32, On::All),
    (45, s_mul_hi_i32, On::All),
    (46, s_lshl1_add_u32, On::All),
    (47, s_lshl2_add_u32, On::All),
    (48, s_lshl3_add_u32, On::All),
    (49, s_lshl4_add_u32, On::All),
    (50, s_pack_ll_b32_b16, On::All),
    (51, s_pack_lh_b32_b16, On::All),
    (52, s_pack_hh_b32_b16, On::All),
    (41, s_cbranch_g_fork, On::All),
    (43, s_rfe_restore_b64, On::All),
];

const SOPK: &[Row] = &[
    (0, s_movk_i32, On::All),
    (16, s_cbranch_i_fork, On::All),
    (1, s_cmovk_i32, On::All),
    (2, s_cmpk_eq_i32, On::All),
    (3, s_cmpk_lg_i32, On::All),
    (4, s_cmpk_gt_i32, On::All),
    (5, s_cmpk_ge_i32, On::All),
    (6, s_cmpk_lt_i32, On::All),
    (7, s_cmpk_le_i32, On::All),
    (8, s_cmpk_eq_u32, On::All),
    (9, s_cmpk_lg_u32, On::All),
    (10, s_cmpk_gt_u32, On::All),
    (11, s_cmpk_ge_u32, On::All),
    (12, s_cmpk_lt_u32, On::All),
    (13, s_cmpk_le_u32, On::All),
    (14, s_addk_i32, On::All),
    (15, s_mulk_i32, On::All),
    (17, s_getreg_b32, On::All),
    (18, s_setreg_b32, On::All),
    (20, s_setreg_imm32_b32, On::All),
    (21, s_call_b64, On::All),
];

const SOP1: &[Row] = &[
    (0, s_mov_b32, On::All),
    (1, s_mov_b64, On::All),
    (2, s_cmov_b32, On::All),
    (3, s_cmov_b64, On::All),
    (4, s_not_b32, On::All),
    (5, s_not_b64, On::All),
    (6, s_wqm_b32, On::All),
    (7, s_wqm_b64, On::All),
    (8, s_brev_b32, On::All),
    (9, s_brev_b64, On::All),
    (10, s_bcnt0_i32_b32, On::All),
    (11, s_bcnt0_i32_b64, On::All),
    (12, s_bcnt1_i32_b32, On::All),
    (13, s_bcnt1_i32_b64, On::All),
    (14, s_ff0_i32_b32, On::All),
    (15, s_ff0_i32_b64, On::All),
    (16, s_ff1_i32_b32, On::All),
    (17, s_ff1_i32_b64, On::All),
    (18, s_flbit_i32_b32, On::All),
    (19, s_flbit_i32_b64, On::All),
    (20, s_flbit_i32, On::All),
    (21, s_flbit_i32_i64, On::All),
    (22, s_sext_i32_i8, On::All),
    (23, s_sext_i32_i16, On::All),
    (24, s_bitset0_b32, On::All),
    (25, s_bitset0_b64, On::All),
    (26, s_bitset1_b32, On::All),
    (27, s_bitset1_b64, On::All),
    (28, s_getpc_b64, On::All),
    (29, s_setpc_b64, On::All),
    (30, s_swappc_b64, On::All),
    (32, s_and_saveexec_b64, On::All),
    (33, s_or_saveexec_b64, On::All),
    (34, s_xor_saveexec_b64, On::All),
    (35, s_andn2_saveexec_b64, On::All),
    (36, s_orn2_saveexec_b64, On::All),
    (37, s_nand_saveexec_b64, On::All),
    (38, s_nor_saveexec_b64, On::All),
    (39, s_xnor_saveexec_b64, On::All),
    (40, s_quadmask_b32, On::All),
    (41, s_quadmask_b64, On::All),
    (48, s_abs_i32, On::All),
    (51, s_andn1_saveexec_b64, On::All),
    (52, s_orn1_saveexec_b64, On::All),
    (53, s_andn1_wrexec_b64, On::All),
    (54, s_andn2_wrexec_b64, On::All),
    (55, s_bitreplicate_b64_b32, On::All),
    (50, s_set_gpr_idx_idx, On::All),
    (31, s_rfe_b64, On::All),
    (42, s_movrels_b32, On::All),
    (43, s_movrels_b64, On::All),
    (44, s_movreld_b32, On::All),
    (45, s_movreld_b64, On::All),
    (46, s_cbranch_join, On::All),
];

const SOPC: &[Row] = &[
    (0, s_cmp_eq_i32, On::All),
    (1, s_cmp_lg_i32, On::All),
    (2, s_cmp_gt_i32, On::All),
    (3, s_cmp_ge_i32, On::All),
    (4, s_cmp_lt_i32, On::All),
    (5, s_cmp_le_i32, On::All),
    (6, s_cmp_eq_u32, On::All),
    (7, s_cmp_lg_u32, On::All),
    (8, s_cmp_gt_u32, On::All),
    (9, s_cmp_ge_u32, On::All),
    (10, s_cmp_lt_u32, On::All),
    (11, s_cmp_le_u32, On::All),
    (12, s_bitcmp0_b32, On::All),
    (13, s_bitcmp1_b32, On::All),
    (14, s_bitcmp0_b64, On::All),
    (15, s_bitcmp1_b64, On::All),
    (16, s_setvskip, On::All),
    (17, s_set_gpr_idx_on, On::All),
    (18, s_cmp_eq_u64, On::All),
    (19, s_cmp_lg_u64, On::All),
];

const SOPP: &[Row] = &[
    (0, s_nop, On::All),
    (1, s_endpgm, On::All),
    (2, s_branch, On::All),
    (3, s_wakeup, On::All),
    (4, s_cbranch_scc0, On::All),
    (5, s_cbranch_scc1, On::All),
    (6, s_cbranch_vccz, On::All),
    (7, s_cbranch_vccnz, On::All),
    (8, s_cbranch_execz, On::All),
    (9, s_cbranch_execnz, On::All),
    (10, s_barrier, On::All),
    (11, s_setkill, On::All),
    (12, s_waitcnt, On::All),
    (13, s_sethalt, On::All),
    (14, s_sleep, On::All),
    (15, s_setprio, On::All),
    (16, s_sendmsg, On::All),
    (17, s_sendmsghalt, On::All),
    (18, s_trap, On::All),
    (19, s_icache_inv, On::All),
    (20, s_incperflevel, On::All),
    (21, s_decperflevel, On::All),
    (22, s_ttracedata, On::All),
    (27, s_endpgm_saved, On::All),
    (28, s_set_gpr_idx_off, On::All),
    (29, s_set_gpr_idx_mode, On::All),
    (23, s_cbranch_cdbgsys, On::All),
    (24, s_cbranch_cdbguser, On::All),
    (25, s_cbranch_cdbgsys_or_user, On::All),
    (26, s_cbranch_cdbgsys_and_user, On::All),
    (30, s_endpgm_ordered_ps_done, On::All),
];

const SMEM: &[Row] = &[
    (0, s_load_dword, On::All),
    (1, s_load_dwordx2, On::All),
    (2, s_load_dwordx4, On::All),
    (3, s_load_dwordx8, On::All),
    (4, s_load_dwordx16, On::All),
    (8, s_buffer_load_dword, On::All),
    (9, s_buffer_load_dwordx2, On::All),
    (10, s_buffer_load_dwordx4, On::All),
    (11, s_buffer_load_dwordx8, On::All),
    (12, s_buffer_load_dwordx16, On::All),
    (16, s_store_dword, On::All),
    (17, s_store_dwordx2, On::All),
    (18, s_store_dwordx4, On::All),
    (32, s_dcache_inv, On::All),
    (33, s_dcache_wb, On::All),
    (34, s_dcache_inv_vol, On::All),
    (35, s_dcache_wb_vol, On::All),
    (36, s_memtime, On::All),
    (37, s_memrealtime, On::All),
    (5, s_scratch_load_dword, On::All),
    (6, s_scratch_load_dwordx2, On::All),
    (7, s_scratch_load_dwordx4, On::All),
    (21, s_scratch_store_dword, On::All),
    (22, s_scratch_store_dwordx2, On::All),
    (23, s_scratch_store_dwordx4, On::All),
    (24, s_buffer_store_dword, On::All),
    (25, s_buffer_store_dwordx2, On::All),
    (26, s_buffer_store_dwordx4, On::All),
    (38, s_atc_probe, On::All),
    (39, s_atc_probe_buffer, On::All),
    (40, s_dcache_discard, On::All),
    (41, s_dcache_discard_x2, On::All),
    (64, s_buffer_atomic_swap, On::All),
    (65, s_buffer_atomic_cmpswap, On::All),
    (66, s_buffer_atomic_add, On::All),
    (67, s_buffer_atomic_sub, On::All),
    (68, s_buffer_atomic_smin, On::All),
    (69, s_buffer_atomic_umin, On::All),
    (70, s_buffer_atomic_smax, On::All),
    (71, s_buffer_atomic_umax, On::All),
    (72, s_buffer_atomic_and, On::All),
    (73, s_buffer_atomic_or, On::All),
    (74, s_buffer_atomic_xor, On::All),
    (75, s_buffer_atomic_inc, On::All),
    (76, s_buffer_atomic_dec, On::All),
    (96, s_buffer_atomic_swap_x2, On::All),
    (97, s_buffer_atomic_cmpswap_x2, On::All),
    (98, s_buffer_atomic_add_x2, On::All),
    (99, s_buffer_atomic_sub_x2, On::All),
    (100, s_buffer_atomic_smin_x2, On::All),
    (101, s_buffer_atomic_umin_x2, On::All),
    (102, s_buffer_atomic_smax_x2, On::All),
    (103, s_buffer_atomic_umax_x2, On::All),
    (104, s_buffer_atomic_and_x2, On::All),
    (105, s_buffer_atomic_or_x2, On::All),
    (106, s_buffer_atomic_xor_x2, On::All),
    (107, s_buffer_atomic_inc_x2, On::All),
    (108, s_buffer_atomic_dec_x2, On::All),
    (128, s_atomic_swap, On::All),
    (129, s_atomic_cmpswap, On::All),
    (130, s_atomic_add, On::All),
    (131, s_atomic_sub, On::All),
    (132, s_atomic_smin, On::All),
    (133, s_atomic_umin, On::All),
    (134, s_atomic_smax, On::All),
    (135, s_atomic_umax, On::All),
    (136, s_atomic_and, On::All),
    (137, s_atomic_or, On::All),
    (138, s_atomic_xor, On::All),
    (139, s_atomic_inc, On::All),
    (140, s_atomic_dec, On::All),
    (160, s_atomic_swap_x2, On::All),
    (161, s_atomic_cmpswap_x2, On::All),
    (162, s_atomic_add_x2, On::All),
    (163, s_atomic_sub_x2, On::All),
    (164, s_atomic_smin_x2, On::All),
    (165, s_atomic_umin_x2, On::All),
    (166, s_atomic_smax_x2, On::All),
    (167, s_atomic_umax_x2, On::All),
    (168, s_atomic_and_x2, On::All),
    (169, s_atomic_or_x2, On::All),
    (170, s_atomic_xor_x2, On::All),
    (171, s_atomic_inc_x2, On::All),
    (172, s_atomic_dec_x2, On::All),
];

const VOP2: &[Row] = &[
    (0, v_cndmask_b32, On::All),
    (1, v_add_f32, On::All),
    (2, v_sub_f32, On::All),
    (3, v_subrev_f32, On::All),
    (4, v_fmac_f64, On::All),
    (5, v_mul_f32, On::All),
    (6, v_mul_i32_i24, On::All),
    (7, v_mul_hi_i32_i24, On::All),
    (8, v_mul_u32_u24, On::All),
    (9, v_mul_hi_u32_u24, On::All),
    (10, v_min_f32, On::All),
    (11, v_max_f32, On::All),
    (12, v_min_i32, On::All),
    (13, v_max_i32, On::All),
    (14, v_min_u32, On::All),
    (15, v_max_u32, On::All),
    (16, v_lshrrev_b32, On::All),
    (17, v_ashrrev_i32, On::All),
    (18, v_lshlrev_b32, On::All),
    (19, v_and_b32, On::All),
    (20, v_or_b32, On::All),
    (21, v_xor_b32, On::All),
    (22, v_mac_f32, On::Gfx90a),
    (23, v_madmk_f32, On::Gfx90a),
    (24, v_madak_f32, On::Gfx90a),
    (23, v_fmamk_f32, On::Gfx942),
    (24, v_fmaak_f32, On::Gfx942),
    (25, v_add_co_u32, On::All),
    (26, v_sub_co_u32, On::All),
    (27, v_subrev_co_u32, On::All),
    (28, v_addc_co_u32, On::All),
    (29, v_subb_co_u32, On::All),
    (30, v_subbrev_co_u32, On::All),
    (31, v_add_f16, On::All),
    (32, v_sub_f16, On::All),
    (33, v_subrev_f16, On::All),
    (34, v_mul_f16, On::All),
    (35, v_mac_f16, On::All),
    (38, v_add_u16, On::All),
    (39, v_sub_u16, On::All),
    (40, v_subrev_u16, On::All),
    (41, v_mul_lo_u16, On::All),
    (42, v_lshlrev_b16, On::All),
    (43, v_lshrrev_b16, On::All),
    (44, v_ashrrev_i16, On::All),
    (45, v_max_f16, On::All),
    (46, v_min_f16, On::All),
    (47, v_max_u16, On::All),
    (48, v_max_i16, On::All),
    (49, v_min_u16, On::All),
    (50, v_min_i16, On::All),
    (51, v_ldexp_f16, On::All),
    (52, v_add_u32, On::All),
    (53, v_sub_u32, On::All),
    (54, v_subrev_u32, On::All),
    (59, v_fmac_f32, On::All),
    (61, v_xnor_b32, On::All),
    (0x24, v_madmk_f16, On::All),
    (0x25, v_madak_f16, On::All),
    (0x37, v_dot2c_f32_f16, On::All),
    (0x38, v_dot2c_i32_i16, On::All),
    (0x39, v_dot4c_i32_i8, On::All),
    (0x3a, v_dot8c_i32_i4, On::All),
    (0x3c, v_pk_fmac_f16, On::All),
];

const VOP1: &[Row] = &[
    (0, v_nop, On::All),
    (1, v_mov_b32, On::All),
    (2, v_readfirstlane_b32, On::All),
    (3, v_cvt_i32_f64, On::All),
    (4, v_cvt_f64_i32, On::All),
    (5, v_cvt_f32_i32, On::All),
    (6, v_cvt_f32_u32, On::All),
    (7, v_cvt_u32_f32, On::All),
    (8, v_cvt_i32_f32, On::All),
    (10, v_cvt_f16_f32, On::All),
    (11, v_cvt_f32_f16, On::All),
    (12, v_cvt_rpi_i32_f32, On::All),
    (13, v_cvt_flr_i32_f32, On::All),
    (15, v_cvt_f32_f64, On::All),
    (16, v_cvt_f64_f32, On::All),
    (17, v_cvt_f32_ubyte0, On::All),
    (18, v_cvt_f32_ubyte1, On::All),
    (19, v_cvt_f32_ubyte2, On::All),
    (20, v_cvt_f32_ubyte3, On::All),
    (21, v_cvt_u32_f64, On::All),
    (22, v_cvt_f64_u32, On::All),
    (23, v_trunc_f64, On::All),
    (24, v_ceil_f64, On::All),
    (25, v_rndne_f64, On::All),
    (26, v_floor_f64, On::All),
    (27, v_fract_f32, On::All),
    (28, v_trunc_f32, On::All),
    (29, v_ceil_f32, On::All),
    (30, v_rndne_f32, On::All),
    (31, v_floor_f32, On::All),
    (32, v_exp_f32, On::All),
    (33, v_log_f32, On::All),
    (34, v_rcp_f32, On::All),
    (35, v_rcp_iflag_f32, On::All),
    (36, v_rsq_f32, On::All),
    (37, v_rcp_f64, On::All),
    (38, v_rsq_f64, On::All),
    (39, v_sqrt_f32, On::All),
    (40, v_sqrt_f64, On::All),
    (41, v_sin_f32, On::All),
    (42, v_cos_f32, On::All),
    (43, v_not_b32, On::All),
    (44, v_bfrev_b32, On::All),
    (45, v_ffbh_u32, On::All),
    (46, v_ffbl_b32, On::All),
    (47, v_ffbh_i32, On::All),
    (48, v_frexp_exp_i32_f64, On::All),
    (49, v_frexp_mant_f64, On::All),
    (50, v_fract_f64, On::All),
    (51, v_frexp_exp_i32_f32, On::All),
    (52, v_frexp_mant_f32, On::All),
    (56, v_mov_b64, On::Gfx942),
    (57, v_cvt_f16_u16, On::All),
    (58, v_cvt_f16_i16, On::All),
    (59, v_cvt_u16_f16, On::All),
    (60, v_cvt_i16_f16, On::All),
    (61, v_rcp_f16, On::All),
    (62, v_sqrt_f16, On::All),
    (63, v_rsq_f16, On::All),
    (68, v_floor_f16, On::All),
    (69, v_ceil_f16, On::All),
    (70, v_trunc_f16, On::All),
    (71, v_rndne_f16, On::All),
    (72, v_fract_f16, On::All),
    (81, v_swap_b32, On::All),
    (82, v_accvgpr_mov_b32, On::All),
    (0x54, v_cvt_f32_fp8, On::Gfx942),
    (0x55, v_cvt_f32_bf8, On::Gfx942),
    (0x56, v_cvt_pk_f32_fp8, On::Gfx942),
    (0x57, v_cvt_pk_f32_bf8, On::Gfx942),
    (0x0e, v_cvt_off_f32_i4, On::All),
    (0x35, v_clrexcp, On::All),
    (0x37, v_screen_partition_4se_b32, On::All),
    (0x40, v_log_f16, On::All),
    (0x41, v_exp_f16, On::All),
    (0x42, v_frexp_mant_f16, On::All),
    (0x43, v_frexp_exp_i16_f16, On::All),
    (0x49, v_sin_f16, On::All),
    (0x4a, v_cos_f16, On::All),
    (0x4b, v_exp_legacy_f32, On::All),
    (0x4c, v_log_legacy_f32, On::All),
    (0x4d, v_cvt_norm_i16_f16, On::All),
    (0x4e, v_cvt_norm_u16_f16, On::All),
    (0x4f, v_sat_pk_u8_i16, On::All),
];

const VOPC: &[Row] = &[
    (0x10, v_cmp_class_f32, On::All),
    (0x11, v_cmpx_class_f32, On::All),
    (0x12, v_cmp_class_f64, On::All),
    (0x13, v_cmpx_class_f64, On::All),
    (0x14, v_cmp_class_f16, On::All),
    (0x15, v_cmpx_class_f16, On::All),
    (0x20, v_cmp_f_f16, On::All),
    (0x21, v_cmp_lt_f16, On::All),
    (0x22, v_cmp_eq_f16, On::All),
    (0x23, v_cmp_le_f16, On::All),
    (0x24, v_cmp_gt_f16, On::All),
    (0x25, v_cmp_lg_f16, On::All),
    (0x26, v_cmp_ge_f16, On::All),
    (0x27, v_cmp_o_f16, On::All),
    (0x28, v_cmp_u_f16, On::All),
    (0x29, v_cmp_nge_f16, On::All),
    (0x2a, v_cmp_nlg_f16, On::All),
    (0x2b, v_cmp_ngt_f16, On::All),
    (0x2c, v_cmp_nle_f16, On::All),
    (0x2d, v_cmp_neq_f16, On::All),
    (0x2e, v_cmp_nlt_f16, On::All),
    (0x2f, v_cmp_tru_f16, On::All),
    (0x40, v_cmp_f_f32, On::All),
    (0x41, v_cmp_lt_f32, On::All),
    (0x42, v_cmp_eq_f32, On::All),
    (0x43, v_cmp_le_f32, On::All),
    (0x44, v_cmp_gt_f32, On::All),
    (0x45, v_cmp_lg_f32, On::All),
    (0x46, v_cmp_ge_f32, On::All),
    (0x47, v_cmp_o_f32, On::All),
    (0x48, v_cmp_u_f32, On::All),
    (0x49, v_cmp_nge_f32, On::All),
    (0x4a, v_cmp_nlg_f32, On::All),
    (0x4b, v_cmp_ngt_f32, On::All),
    (0x4c, v_cmp_nle_f32, On::All),
    (0x4d, v_cmp_neq_f32, On::All),
    (0x4e, v_cmp_nlt_f32, On::All),
    (0x4f, v_cmp_tru_f32, On::All),
    (0x51, v_cmpx_lt_f32, On::All),
    (0x52, v_cmpx_eq_f32, On::All),
    (0x54, v_cmpx_gt_f32, On::All),
    (0x5d, v_cmpx_neq_f32, On::All),
    (0x60, v_cmp_f_f64, On::All),
    (0x61, v_cmp_lt_f64, On::All),
    (0x62, v_cmp_eq_f64, On::All),
    (0x63, v_cmp_le_f64, On::All),
    (0x64, v_cmp_gt_f64, On::All),
    (0x65, v_cmp_lg_f64, On::All),
    (0x66, v_cmp_ge_f64, On::All),
    (0x67, v_cmp_o_f64, On::All),
    (0x68, v_cmp_u_f64, On::All),
    (0x69, v_cmp_nge_f64, On::All),
    (0x6a, v_cmp_nlg_f64, On::All),
    (0x6b, v_cmp_ngt_f64, On::All),
    (0x6c, v_cmp_nle_f64, On::All),
    (0x6d, v_cmp_neq_f64, On::All),
    (0x6e, v_cmp_nlt_f64, On::All),
    (0x6f, v_cmp_tru_f64, On::All),
    (0xa1, v_cmp_lt_i16, On::All),
    (0xa2, v_cmp_eq_i16, On::All),
    (0xa4, v_cmp_gt_i16, On::All),
    (0xa9, v_cmp_lt_u16, On::All),
    (0xaa, v_cmp_eq_u16, On::All),
    (0xac, v_cmp_gt_u16, On::All),
    (0xc0, v_cmp_f_i32, On::All),
    (0xc1, v_cmp_lt_i32, On::All),
    (0xc2, v_cmp_eq_i32, On::All),
    (0xc3, v_cmp_le_i32, On::All),
    (0xc4, v_cmp_gt_i32, On::All),
    (0xc5, v_cmp_ne_i32, On::All),
    (0xc6, v_cmp_ge_i32, On::All),
    (0xc7, v_cmp_t_i32, On::All),
    (0xc8, v_cmp_f_u32, On::All),
    (0xc9, v_cmp_lt_u32, On::All),
    (0xca, v_cmp_eq_u32, On::All),
    (0xcb, v_cmp_le_u32, On::All),
    (0xcc, v_cmp_gt_u32, On::All),
    (0xcd, v_cmp_ne_u32, On::All),
    (0xce, v_cmp_ge_u32, On::All),
    (0xcf, v_cmp_t_u32, On::All),
    (0xd1, v_cmpx_lt_i32, On::All),
    (0xd2, v_cmpx_eq_i32, On::All),
    (0xd4, v_cmpx_gt_i32, On::All),
    (0xd5, v_cmpx_ne_i32, On::All),
    (0xd9, v_cmpx_lt_u32, On::All),
    (0xda, v_cmpx_eq_u32, On::All),
    (0xdc, v_cmpx_gt_u32, On::All),
    (0xdd, v_cmpx_ne_u32, On::All),
    (0xe0, v_cmp_f_i64, On::All),
    (0xe1, v_cmp_lt_i64, On::All),
    (0xe2, v_cmp_eq_i64, On::All),
    (0xe3, v_cmp_le_i64, On::All),
    (0xe4, v_cmp_gt_i64, On::All),
    (0xe5, v_cmp_ne_i64, On::All),
    (0xe6, v_cmp_ge_i64, On::All),
    (0xe7, v_cmp_t_i64, On::All),
    (0xe8, v_cmp_f_u64, On::All),
    (0xe9, v_cmp_lt_u64, On::All),
    (0xea, v_cmp_eq_u64, On::All),
    (0xeb, v_cmp_le_u64, On::All),
    (0xec, v_cmp_gt_u64, On::All),
    (0xed, v_cmp_ne_u64, On::All),
    (0xee, v_cmp_ge_u64, On::All),
    (0xef, v_cmp_t_u64, On::All),
    (0x30, v_cmpx_f_f16, On::All),
    (0x31, v_cmpx_lt_f16, On::All),
    (0x32, v_cmpx_eq_f16, On::All),
    (0x33, v_cmpx_le_f16, On::All),
    (0x34, v_cmpx_gt_f16, On::All),
    (0x35, v_cmpx_lg_f16, On::All),
    (0x36, v_cmpx_ge_f16, On::All),
    (0x37, v_cmpx_o_f16, On::All),
    (0x38, v_cmpx_u_f16, On::All),
    (0x39, v_cmpx_nge_f16, On::All),
    (0x3a, v_cmpx_nlg_f16, On::All),
    (0x3b, v_cmpx_ngt_f16, On::All),
    (0x3c, v_cmpx_nle_f16, On::All),
    (0x3d, v_cmpx_neq_f16, On::All),
    (0x3e, v_cmpx_nlt_f16, On::All),
    (0x3f, v_cmpx_tru_f16, On::All),
    (0x50, v_cmpx_f_f32, On::All),
    (0x53, v_cmpx_le_f32, On::All),
    (0x55, v_cmpx_lg_f32, On::All),
    (0x56, v_cmpx_ge_f32, On::All),
    (0x57, v_cmpx_o_f32, On::All),
    (0x58, v_cmpx_u_f32, On::All),
    (0x59, v_cmpx_nge_f32, On::All),
    (0x5a, v_cmpx_nlg_f32, On::All),
    (0x5b, v_cmpx_ngt_f32, On::All),
    (0x5c, v_cmpx_nle_f32, On::All),
    (0x5e, v_cmpx_nlt_f32, On::All),
    (0x5f, v_cmpx_tru_f32, On::All),
    (0x70, v_cmpx_f_f64, On::All),
    (0x71, v_cmpx_lt_f64, On::All),
    (0x72, v_cmpx_eq_f64, On::All),
    (0x73, v_cmpx_le_f64, On::All),
    (0x74, v_cmpx_gt_f64, On::All),
    (0x75, v_cmpx_lg_f64, On::All),
    (0x76, v_cmpx_ge_f64, On::All),
    (0x77, v_cmpx_o_f64, On::All),
    (0x78, v_cmpx_u_f64, On::All),
    (0x79, v_cmpx_nge_f64, On::All),
    (0x7a, v_cmpx_nlg_f64, On::All),
    (0x7b, v_cmpx_ngt_f64, On::All),
    (0x7c, v_cmpx_nle_f64, On::All),
    (0x7d, v_cmpx_neq_f64, On::All),
    (0x7e, v_cmpx_nlt_f64, On::All),
    (0x7f, v_cmpx_tru_f64, On::All),
    (0xa0, v_cmp_f_i16, On::All),
    (0xb0, v_cmpx_f_i16, On::All),
    (0xb1, v_cmpx_lt_i16, On::All),
    (0xb2, v_cmpx_eq_i16, On::All),
    (0xa3, v_cmp_le_i16, On::All),
    (0xb3, v_cmpx_le_i16, On::All),
    (0xb4, v_cmpx_gt_i16, On::All),
    (0xa5, v_cmp_ne_i16, On::All),
    (0xb5, v_cmpx_ne_i16, On::All),
    (0xa6, v_cmp_ge_i16, On::All),
    (0xb6, v_cmpx_ge_i16, On::All),
    (0xa7, v_cmp_t_i16, On::All),
    (0xb7, v_cmpx_t_i16, On::All),
    (0xa8, v_cmp_f_u16, On::All),
    (0xb8, v_cmpx_f_u16, On::All),
    (0xb9, v_cmpx_lt_u16, On::All),
    (0xba, v_cmpx_eq_u16, On::All),
    (0xab, v_cmp_le_u16, On::All),
    (0xbb, v_cmpx_le_u16, On::All),
    (0xbc, v_cmpx_gt_u16, On::All),
    (0xad, v_cmp_ne_u16, On::All),
    (0xbd, v_cmpx_ne_u16, On::All),
    (0xae, v_cmp_ge_u16, On::All),
    (0xbe, v_cmpx_ge_u16, On::All),
    (0xaf, v_cmp_t_u16, On::All),
    (0xbf, v_cmpx_t_u16, On::All),
    (0xd0, v_cmpx_f_i32, On::All),
    (0xd3, v_cmpx_le_i32, On::All),
    (0xd6, v_cmpx_ge_i32, On::All),
    (0xd7, v_cmpx_t_i32, On::All),
    (0xd8, v_cmpx_f_u32, On::All),
    (0xdb, v_cmpx_le_u32, On::All),
    (0xde, v_cmpx_ge_u32, On::All),
    (0xdf, v_cmpx_t_u32, On::All),
    (0xf0, v_cmpx_f_i64, On::All),
    (0xf1, v_cmpx_lt_i64, On::All),
    (0xf2, v_cmpx_eq_i64, On::All),
    (0xf3, v_cmpx_le_i64, On::All),
    (0xf4, v_cmpx_gt_i64, On::All),
    (0xf5, v_cmpx_ne_i64, On::All),
    (0xf6, v_cmpx_ge_i64, On::All),
    (0xf7, v_cmpx_t_i64, On::All),
    (0xf8, v_cmpx_f_u64, On::All),
    (0xf9, v_cmpx_lt_u64, On::All),
    (0xfa, v_cmpx_eq_u64, On::All),
    (0xfb, v_cmpx_le_u64, On::All),
    (0xfc, v_cmpx_gt_u64, On::All),
    (0xfd, v_cmpx_ne_u64, On::All),
    (0xfe, v_cmpx_ge_u64, On::All),
    (0xff, v_cmpx_t_u64, On::All),
];

/// Native VOP3 opcodes (10-bit opcode field).
const VOP3: &[Row] = &[
    (0x1c0, v_mad_legacy_f32, On::Gfx90a),
    (0x1c1, v_mad_f32, On::Gfx90a),
    (0x1c2, v_mad_i32_i24, On::All),
    (0x1c3, v_mad_u32_u24, On::All),
    (0x1c8, v_bfe_u32, On::All),
    (0x1c9, v_bfe_i32, On::All),
    (0x1ca, v_bfi_b32, On::All),
    (0x1cb, v_fma_f32, On::All),
    (0x1cc, v_fma_f64, On::All),
    (0x1ce, v_alignbit_b32, On::All),
    (0x1cf, v_alignbyte_b32, On::All),
    (0x1d0, v_min3_f32, On::All),
    (0x1d1, v_min3_i32, On::All),
    (0x1d2, v_min3_u32, On::All),
    (0x1d3, v_max3_f32, On::All),
    (0x1d4, v_max3_i32, On::All),
    (0x1d5, v_max3_u32, On::All),
    (0x1d6, v_med3_f32, On::All),
    (0x1d7, v_med3_i32, On::All),
    (0x1d8, v_med3_u32, On::All),
    (0x1de, v_div_fixup_f32, On::All),
    (0x1df, v_div_fixup_f64, On::All),
    (0x1e0, v_div_scale_f32, On::All),
    (0x1e1, v_div_scale_f64, On::All),
    (0x1e2, v_div_fmas_f32, On::All),
    (0x1e3, v_div_fmas_f64, On::All),
    (0x1e8, v_mad_u64_u32, On::All),
    (0x1e9, v_mad_i64_i32, On::All),
    (0x1eb, v_mad_legacy_u16, On::All),
    (0x1ec, v_mad_legacy_i16, On::All),
    (0x1ed, v_perm_b32, On::All),
    (0x1f1, v_mad_u32_u16, On::All),
    (0x1f2, v_mad_i32_i16, On::All),
    (0x1f3, v_xad_u32, On::All),
    (0x1fd, v_lshl_add_u32, On::All),
    (0x1fe, v_add_lshl_u32, On::All),
    (0x1ff, v_add3_u32, On::All),
    (0x200, v_lshl_or_b32, On::All),
    (0x201, v_and_or_b32, On::All),
    (0x202, v_or3_b32, On::All),
    (0x206, v_fma_f16, On::All),
    (0x208, v_lshl_add_u64, On::Gfx942),
    (0x280, v_add_f64, On::All),
    (0x281, v_mul_f64, On::All),
    (0x282, v_min_f64, On::All),
    (0x283, v_max_f64, On::All),
    (0x284, v_ldexp_f64, On::All),
    (0x285, v_mul_lo_u32, On::All),
    (0x286, v_mul_hi_u32, On::All),
    (0x287, v_mul_hi_i32, On::All),
    (0x288, v_ldexp_f32, On::All),
    (0x289, v_readlane_b32, On::All),
    (0x28a, v_writelane_b32, On::All),
    (0x28b, v_bcnt_u32_b32, On::All),
    (0x28c, v_mbcnt_lo_u32_b32, On::All),
    (0x28d, v_mbcnt_hi_u32_b32, On::All),
    (0x28f, v_lshlrev_b64, On::All),
    (0x290, v_lshrrev_b64, On::All),
    (0x291, v_ashrrev_i64, On::All),
    (0x293, v_bfm_b32, On::All),
    (0x296, v_cvt_pkrtz_f16_f32, On::All),
    (0x297, v_cvt_pk_u16_u32, On::All),
    (0x298, v_cvt_pk_i16_i32, On::All),
    (0x29c, v_add_i32, On::All),
    (0x29d, v_sub_i32, On::All),
    (0x2a0, v_pack_b32_f16, On::All),
    (0x1c4, v_cubeid_f32, On::All),
    (0x1c5, v_cubesc_f32, On::All),
    (0x1c6, v_cubetc_f32, On::All),
    (0x1c7, v_cubema_f32, On::All),
    (0x1cd, v_lerp_u8, On::All),
    (0x1d9, v_sad_u8, On::All),
    (0x1da, v_sad_hi_u8, On::All),
    (0x1db, v_sad_u16, On::All),
    (0x1dc, v_sad_u32, On::All),
    (0x1dd, v_cvt_pk_u8_f32, On::All),
    (0x1e4, v_msad_u8, On::All),
    (0x1e5, v_qsad_pk_u16_u8, On::All),
    (0x1e6, v_mqsad_pk_u16_u8, On::All),
    (0x1e7, v_mqsad_u32_u8, On::All),
    (0x1ea, v_mad_legacy_f16, On::All),
    (0x1ee, v_fma_legacy_f16, On::All),
    (0x1ef, v_div_fixup_legacy_f16, On::All),
    (0x1f0, v_cvt_pkaccum_u8_f32, On::All),
    (0x1f4, v_min3_f16, On::All),
    (0x1f5, v_min3_i16, On::All),
    (0x1f6, v_min3_u16, On::All),
    (0x1f7, v_max3_f16, On::All),
    (0x1f8, v_max3_i16, On::All),
    (0x1f9, v_max3_u16, On::All),
    (0x1fa, v_med3_f16, On::All),
    (0x1fb, v_med3_i16, On::All),
    (0x1fc, v_med3_u16, On::All),
    (0x203, v_mad_f16, On::All),
    (0x204, v_mad_u16, On::All),
    (0x205, v_mad_i16, On::All),
    (0x207, v_div_fixup_f16, On::All),
    (0x292, v_trig_preop_f64, On::All),
    (0x294, v_cvt_pknorm_i16_f32, On::All),
    (0x295, v_cvt_pknorm_u16_f32, On::All),
    (0x299, v_cvt_pknorm_i16_f16, On::All),
    (0x29a, v_cvt_pknorm_u16_f16, On::All),
    (0x29e, v_add_i16, On::All),
    (0x29f, v_sub_i16, On::All),
    (0x2a1, v_mul_legacy_f32, On::All),
    (0x2a2, v_cvt_pk_fp8_f32, On::Gfx942),
    (0x2a3, v_cvt_pk_bf8_f32, On::Gfx942),
    (0x2a4, v_cvt_sr_fp8_f32, On::Gfx942),
    (0x2a5, v_cvt_sr_bf8_f32, On::Gfx942),
];

const VOP3P: &[Row] = &[
    (0, v_pk_mad_i16, On::All),
    (1, v_pk_mul_lo_u16, On::All),
    (2, v_pk_add_i16, On::All),
    (3, v_pk_sub_i16, On::All),
    (4, v_pk_lshlrev_b16, On::All),
    (5, v_pk_lshrrev_b16, On::All),
    (6, v_pk_ashrrev_i16, On::All),
    (7, v_pk_max_i16, On::All),
    (8, v_pk_min_i16, On::All),
    (9, v_pk_mad_u16, On::All),
    (10, v_pk_add_u16, On::All),
    (11, v_pk_sub_u16, On::All),
    (12, v_pk_max_u16, On::All),
    (13, v_pk_min_u16, On::All),
    (14, v_pk_fma_f16, On::All),
    (15, v_pk_add_f16, On::All),
    (16, v_pk_mul_f16, On::All),
    (17, v_pk_min_f16, On::All),
    (18, v_pk_max_f16, On::All),
    (0x30, v_pk_fma_f32, On::All),
    (0x31, v_pk_mul_f32, On::All),
    (0x32, v_pk_add_f32, On::All),
    (0x33, v_pk_mov_b32, On::All),
    (0x44, v_mfma_f32_32x32x2f32, On::All),
    (0x42, v_mfma_f32_4x4x1f32, On::All),
    (0x45, v_mfma_f32_16x16x4f32, On::All),
    (0x20, v_fma_mix_f32, On::All),
    (0x21, v_fma_mixlo_f16, On::All),
    (0x22, v_fma_mixhi_f16, On::All),
    (0x4c, v_mfma_f32_32x32x8f16, On::All),
    (0x4d, v_mfma_f32_16x16x16f16, On::All),
    (0x66, v_mfma_f32_32x32x8bf16_1k, On::Gfx90a),
    (0x67, v_mfma_f32_16x16x16bf16_1k, On::Gfx90a),
    (0x60, v_mfma_f32_32x32x8bf16_1k, On::Gfx942),
    (0x61, v_mfma_f32_16x16x16bf16_1k, On::Gfx942),
    (0x6e, v_mfma_f64_16x16x4f64, On::All),
    (0x6f, v_mfma_f64_4x4x4f64, On::All),
    (0x40, v_mfma_f32_32x32x1f32, On::All),
    (0x41, v_mfma_f32_16x16x1f32, On::All),
    (0x48, v_mfma_f32_32x32x4f16, On::All),
    (0x49, v_mfma_f32_16x16x4f16, On::All),
    (0x4a, v_mfma_f32_4x4x4f16, On::All),
    (0x50, v_mfma_i32_32x32x4i8, On::All),
    (0x51, v_mfma_i32_16x16x4i8, On::All),
    (0x52, v_mfma_i32_4x4x4i8, On::All),
    (0x54, v_mfma_i32_32x32x8i8, On::Gfx90a),
    (0x55, v_mfma_i32_16x16x16i8, On::Gfx90a),
    (0x56, v_mfma_i32_32x32x16_i8, On::Gfx942),
    (0x57, v_mfma_i32_16x16x32_i8, On::Gfx942),
    (0x68, v_mfma_f32_32x32x2bf16, On::Gfx90a),
    (0x69, v_mfma_f32_16x16x2bf16, On::Gfx90a),
    (0x6b, v_mfma_f32_4x4x2bf16, On::Gfx90a),
    (0x6c, v_mfma_f32_32x32x4bf16, On::Gfx90a),
    (0x6d, v_mfma_f32_16x16x8bf16, On::Gfx90a),
    (0x63, v_mfma_f32_32x32x4bf16_1k, On::Gfx90a),
    (0x64, v_mfma_f32_16x16x4bf16_1k, On::Gfx90a),
    (0x65, v_mfma_f32_4x4x4bf16_1k, On::Gfx90a),
    (0x5d, v_mfma_f32_32x32x4bf16_1k, On::Gfx942),
    (0x5e, v_mfma_f32_16x16x4bf16_1k, On::Gfx942),
    (0x5f, v_mfma_f32_4x4x4bf16_1k, On::Gfx942),
    (0x70, v_mfma_f32_16x16x32_bf8_bf8, On::Gfx942),
    (0x71, v_mfma_f32_16x16x32_bf8_fp8, On::Gfx942),
    (0x72, v_mfma_f32_16x16x32_fp8_bf8, On::Gfx942),
    (0x73, v_mfma_f32_16x16x32_fp8_fp8, On::Gfx942),
    (0x74, v_mfma_f32_32x32x16_bf8_bf8, On::Gfx942),
    (0x75, v_mfma_f32_32x32x16_bf8_fp8, On::Gfx942),
    (0x76, v_mfma_f32_32x32x16_fp8_bf8, On::Gfx942),
    (0x77, v_mfma_f32_32x32x16_fp8_fp8, On::Gfx942),
    (0x58, v_accvgpr_read_b32, On::All),
    (0x59, v_accvgpr_write_b32, On::All),
    (0x23, v_dot2_f32_f16, On::All),
    (0x26, v_dot2_i32_i16, On::All),
    (0x27, v_dot2_u32_u16, On::All),
    (0x28, v_dot4_i32_i8, On::All),
    (0x29, v_dot4_u32_u8, On::All),
    (0x2a, v_dot8_i32_i4, On::All),
    (0x2b, v_dot8_u32_u4, On::All),
    (0x3e, v_mfma_f32_16x16x8_xf32, On::Gfx942),
    (0x3f, v_mfma_f32_32x32x4_xf32, On::Gfx942),
    (0x62, v_smfmac_f32_16x16x32_f16, On::Gfx942),
    (0x64, v_smfmac_f32_32x32x16_f16, On::Gfx942),
    (0x66, v_smfmac_f32_16x16x32_bf16, On::Gfx942),
    (0x68, v_smfmac_f32_32x32x16_bf16, On::Gfx942),
    (0x6a, v_smfmac_i32_16x16x64_i8, On::Gfx942),
    (0x6c, v_smfmac_i32_32x32x32_i8, On::Gfx942),
    (0x78, v_smfmac_f32_16x16x64_bf8_bf8, On::Gfx942),
    (0x79, v_smfmac_f32_16x16x64_bf8_fp8, On::Gfx942),
    (0x7a, v_smfmac_f32_16x16x64_fp8_bf8, On::Gfx942),
    (0x7b, v_smfmac_f32_16x16x64_fp8_fp8, On::Gfx942),
    (0x7c, v_smfmac_f32_32x32x32_bf8_bf8, On::Gfx942),
    (0x7d, v_smfmac_f32_32x32x32_bf8_fp8, On::Gfx942),
    (0x7e, v_smfmac_f32_32x32x32_fp8_bf8, On::Gfx942),
    (0x7f, v_smfmac_f32_32x32x32_fp8_fp8, On::Gfx942),
];

const DS: &[Row] = &[
    (0, ds_add_u32, On::All),
    (1, ds_sub_u32, On::All),
    (2, ds_rsub_u32, On::All),
    (3, ds_inc_u32, On::All),
    (4, ds_dec_u32, On::All),
    (5, ds_min_i32, On::All),
    (6, ds_max_i32, On::All),
    (7, ds_min_u32, On::All),
    (8, ds_max_u32, On::All),
    (9, ds_and_b32, On::All),
    (10, ds_or_b32, On::All),
    (11, ds_xor_b32, On::All),
    (13, ds_write_b32, On::All),
    (14, ds_write2_b32, On::All),
    (15, ds_write2st64_b32, On::All),
    (18, ds_min_f32, On::All),
    (19, ds_max_f32, On::All),
    (21, ds_add_f32, On::All),
    (30, ds_write_b8, On::All),
    (31, ds_write_b16, On::All),
    (32, ds_add_rtn_u32, On::All),
    (33, ds_sub_rtn_u32, On::All),
    (37, ds_min_rtn_i32, On::All),
    (38, ds_max_rtn_i32, On::All),
    (39, ds_min_rtn_u32, On::All),
    (40, ds_max_rtn_u32, On::All),
    (41, ds_and_rtn_b32, On::All),
    (42, ds_or_rtn_b32, On::All),
    (43, ds_xor_rtn_b32, On::All),
    (45, ds_wrxchg_rtn_b32, On::All),
    (48, ds_cmpst_rtn_b32, On::All),
    (53, ds_add_rtn_f32, On::All),
    (54, ds_read_b32, On::All),
    (55, ds_read2_b32, On::All),
    (56, ds_read2st64_b32, On::All),
    (57, ds_read_i8, On::All),
    (58, ds_read_u8, On::All),
    (59, ds_read_i16, On::All),
    (60, ds_read_u16, On::All),
    (61, ds_swizzle_b32, On::All),
    (62, ds_permute_b32, On::All),
    (63, ds_bpermute_b32, On::All),
    (64, ds_add_u64, On::All),
    (77, ds_write_b64, On::All),
    (78, ds_write2_b64, On::All),
    (79, ds_write2st64_b64, On::All),
    (96, ds_add_rtn_u64, On::All),
    (112, ds_cmpst_rtn_b64, On::All),
    (118, ds_read_b64, On::All),
    (119, ds_read2_b64, On::All),
    (120, ds_read2st64_b64, On::All),
    (16, ds_cmpst_b32, On::All),
    (34, ds_rsub_rtn_u32, On::All),
    (35, ds_inc_rtn_u32, On::All),
    (36, ds_dec_rtn_u32, On::All),
    (50, ds_min_rtn_f32, On::All),
    (51, ds_max_rtn_f32, On::All),
    (65, ds_sub_u64, On::All),
    (66, ds_rsub_u64, On::All),
    (67, ds_inc_u64, On::All),
    (68, ds_dec_u64, On::All),
    (69, ds_min_i64, On::All),
    (70, ds_max_i64, On::All),
    (71, ds_min_u64, On::All),
    (72, ds_max_u64, On::All),
    (73, ds_and_b64, On::All),
    (74, ds_or_b64, On::All),
    (75, ds_xor_b64, On::All),
    (80, ds_cmpst_b64, On::All),
    (82, ds_min_f64, On::All),
    (83, ds_max_f64, On::All),
    (92, ds_add_f64, On::All),
    (97, ds_sub_rtn_u64, On::All),
    (98, ds_rsub_rtn_u64, On::All),
    (99, ds_inc_rtn_u64, On::All),
    (100, ds_dec_rtn_u64, On::All),
    (101, ds_min_rtn_i64, On::All),
    (102, ds_max_rtn_i64, On::All),
    (103, ds_min_rtn_u64, On::All),
    (104, ds_max_rtn_u64, On::All),
    (105, ds_and_rtn_b64, On::All),
    (106, ds_or_rtn_b64, On::All),
    (107, ds_xor_rtn_b64, On::All),
    (109, ds_wrxchg_rtn_b64, On::All),
    (114, ds_min_rtn_f64, On::All),
    (115, ds_max_rtn_f64, On::All),
    (124, ds_add_rtn_f64, On::All),
    (0x0c, ds_mskor_b32, On::All),
    (0x11, ds_cmpst_f32, On::All),
    (0x17, ds_pk_add_f16, On::Gfx942),
    (0x18, ds_pk_add_bf16, On::Gfx942),
    (0x1d, ds_write_addtid_b32, On::All),
    (0x2c, ds_mskor_rtn_b32, On::All),
    (0x2e, ds_wrxchg2_rtn_b32, On::All),
    (0x2f, ds_wrxchg2st64_rtn_b32, On::All),
    (0x31, ds_cmpst_rtn_f32, On::All),
    (0x34, ds_wrap_rtn_b32, On::All),
    (0x4c, ds_mskor_b64, On::All),
    (0x51, ds_cmpst_f64, On::All),
    (0x54, ds_write_b8_d16_hi, On::All),
    (0x55, ds_write_b16_d16_hi, On::All),
    (0x56, ds_read_u8_d16, On::All),
    (0x57, ds_read_u8_d16_hi, On::All),
    (0x58, ds_read_i8_d16, On::All),
    (0x59, ds_read_i8_d16_hi, On::All),
    (0x5a, ds_read_u16_d16, On::All),
    (0x5b, ds_read_u16_d16_hi, On::All),
    (0x6c, ds_mskor_rtn_b64, On::All),
    (0x6e, ds_wrxchg2_rtn_b64, On::All),
    (0x6f, ds_wrxchg2st64_rtn_b64, On::All),
    (0x71, ds_cmpst_rtn_f64, On::All),
    (0x7e, ds_condxchg32_rtn_b64, On::All),
    (0x98, ds_gws_sema_release_all, On::All),
    (0x9a, ds_gws_sema_v, On::All),
    (0x9b, ds_gws_sema_br, On::All),
    (0x9c, ds_gws_sema_p, On::All),
    (0xb6, ds_read_addtid_b32, On::All),
    (0xb7, ds_pk_add_rtn_f16, On::Gfx942),
    (0xb8, ds_pk_add_rtn_bf16, On::Gfx942),
    (0xbd, ds_consume, On::All),
    (0xbe, ds_append, On::All),
    (0x99, ds_gws_init, On::All),
    (0x9d, ds_gws_barrier, On::All),
    (0xde, ds_write_b96, On::All),
    (0xdf, ds_write_b128, On::All),
    (0xfe, ds_read_b96, On::All),
    (0xff, ds_read_b128, On::All),
];

const FLAT: &[Row] = &[
    (16, flat_load_ubyte, On::All),
    (17, flat_load_sbyte, On::All),
    (18, flat_load_ushort, On::All),
    (19, flat_load_sshort, On::All),
    (20, flat_load_dword, On::All),
    (21, flat_load_dwordx2, On::All),
    (22, flat_load_dwordx3, On::All),
    (23, flat_load_dwordx4, On::All),
    (24, flat_store_byte, On::All),
    (25, flat_store_byte_d16_hi, On::All),
    (26, flat_store_short, On::All),
    (27, flat_store_short_d16_hi, On::All),
    (28, flat_store_dword, On::All),
    (29, flat_store_dwordx2, On::All),
    (30, flat_store_dwordx3, On::All),
    (31, flat_store_dwordx4, On::All),
    (32, flat_load_ubyte_d16, On::All),
    (33, flat_load_ubyte_d16_hi, On::All),
    (34, flat_load_sbyte_d16, On::All),
    (35, flat_load_sbyte_d16_hi, On::All),
    (36, flat_load_short_d16, On::All),
    (37, flat_load_short_d16_hi, On::All),
    (0x26, flat_load_lds_ubyte, On::Gfx942),
    (0x27, flat_load_lds_sbyte, On::Gfx942),
    (0x28, flat_load_lds_ushort, On::Gfx942),
    (0x29, flat_load_lds_sshort, On::Gfx942),
    (0x2a, flat_load_lds_dword, On::Gfx942),
    (0x52, flat_atomic_pk_add_bf16, On::Gfx942),
    (64, flat_atomic_swap, On::All),
    (65, flat_atomic_cmpswap, On::All),
    (66, flat_atomic_add, On::All),
    (67, flat_atomic_sub, On::All),
    (68, flat_atomic_smin, On::All),
    (69, flat_atomic_umin, On::All),
    (70, flat_atomic_smax, On::All),
    (71, flat_atomic_umax, On::All),
    (72, flat_atomic_and, On::All),
    (73, flat_atomic_or, On::All),
    (74, flat_atomic_xor, On::All),
    (75, flat_atomic_inc, On::All),
    (76, flat_atomic_dec, On::All),
    (77, flat_atomic_add_f32, On::All),
    (78, flat_atomic_pk_add_f16, On::All),
    (79, flat_atomic_add_f64, On::All),
    (80, flat_atomic_min_f64, On::All),
    (81, flat_atomic_max_f64, On::All),
    (96, flat_atomic_swap_x2, On::All),
    (97, flat_atomic_cmpswap_x2, On::All),
    (98, flat_atomic_add_x2, On::All),
    (99, flat_atomic_sub_x2, On::All),
    (100, flat_atomic_smin_x2, On::All),
    (101, flat_atomic_umin_x2, On::All),
    (102, flat_atomic_smax_x2, On::All),
    (103, flat_atomic_umax_x2, On::All),
    (104, flat_atomic_and_x2, On::All),
    (105, flat_atomic_or_x2, On::All),
    (106, flat_atomic_xor_x2, On::All),
    (107, flat_atomic_inc_x2, On::All),
    (108, flat_atomic_dec_x2, On::All),
];

const MUBUF: &[Row] = &[
    (16, buffer_load_ubyte, On::All),
    (17, buffer_load_sbyte, On::All),
    (18, buffer_load_ushort, On::All),
    (19, buffer_load_sshort, On::All),
    (20, buffer_load_dword, On::All),
    (21, buffer_load_dwordx2, On::All),
    (22, buffer_load_dwordx3, On::All),
    (23, buffer_load_dwordx4, On::All),
    (24, buffer_store_byte, On::All),
    (25, buffer_store_byte_d16_hi, On::All),
    (26, buffer_store_short, On::All),
    (27, buffer_store_short_d16_hi, On::All),
    (28, buffer_store_dword, On::All),
    (29, buffer_store_dwordx2, On::All),
    (30, buffer_store_dwordx3, On::All),
    (31, buffer_store_dwordx4, On::All),
    (0x0, buffer_load_format_x, On::All),
    (0x1, buffer_load_format_xy, On::All),
    (0x2, buffer_load_format_xyz, On::All),
    (0x3, buffer_load_format_xyzw, On::All),
    (0x4, buffer_store_format_x, On::All),
    (0x5, buffer_store_format_xy, On::All),
    (0x6, buffer_store_format_xyz, On::All),
    (0x7, buffer_store_format_xyzw, On::All),
    (0x8, buffer_load_format_d16_x, On::All),
    (0x9, buffer_load_format_d16_xy, On::All),
    (0xa, buffer_load_format_d16_xyz, On::All),
    (0xb, buffer_load_format_d16_xyzw, On::All),
    (0xc, buffer_store_format_d16_x, On::All),
    (0xd, buffer_store_format_d16_xy, On::All),
    (0xe, buffer_store_format_d16_xyz, On::All),
    (0xf, buffer_store_format_d16_xyzw, On::All),
    (0x26, buffer_load_format_d16_hi_x, On::All),
    (0x27, buffer_store_format_d16_hi_x, On::All),
    (0x20, buffer_load_ubyte_d16, On::All),
    (0x21, buffer_load_ubyte_d16_hi, On::All),
    (0x22, buffer_load_sbyte_d16, On::All),
    (0x23, buffer_load_sbyte_d16_hi, On::All),
    (0x24, buffer_load_short_d16, On::All),
    (0x25, buffer_load_short_d16_hi, On::All),
    (0x40, buffer_atomic_swap, On::All),
    (0x41, buffer_atomic_cmpswap, On::All),
    (0x42, buffer_atomic_add, On::All),
    (0x43, buffer_atomic_sub, On::All),
    (0x44, buffer_atomic_smin, On::All),
    (0x45, buffer_atomic_umin, On::All),
    (0x46, buffer_atomic_smax, On::All),
    (0x47, buffer_atomic_umax, On::All),
    (0x48, buffer_atomic_and, On::All),
    (0x49, buffer_atomic_or, On::All),
    (0x4a, buffer_atomic_xor, On::All),
    (0x4b, buffer_atomic_inc, On::All),
    (0x4c, buffer_atomic_dec, On::All),
    (0x4d, buffer_atomic_add_f32, On::All),
    (0x4e, buffer_atomic_pk_add_f16, On::All),
    (0x4f, buffer_atomic_add_f64, On::All),
    (0x50, buffer_atomic_min_f64, On::All),
    (0x51, buffer_atomic_max_f64, On::All),
    (0x60, buffer_atomic_swap_x2, On::All),
    (0x61, buffer_atomic_cmpswap_x2, On::All),
    (0x62, buffer_atomic_add_x2, On::All),
    (0x63, buffer_atomic_sub_x2, On::All),
    (0x64, buffer_atomic_smin_x2, On::All),
    (0x65, buffer_atomic_umin_x2, On::All),
    (0x66, buffer_atomic_smax_x2, On::All),
    (0x67, buffer_atomic_umax_x2, On::All),
    (0x68, buffer_atomic_and_x2, On::All),
    (0x69, buffer_atomic_or_x2, On::All),
    (0x6a, buffer_atomic_xor_x2, On::All),
    (0x6b, buffer_atomic_inc_x2, On::All),
    (0x6c, buffer_atomic_dec_x2, On::All),
    (0x3d, buffer_store_lds_dword, On::Gfx90a),
    (0x28, buffer_wbl2, On::All),
    (0x29, buffer_inv, On::Gfx942),
    (0x29, buffer_invl2, On::Gfx90a),
    (0x3e, buffer_wbinvl1, On::Gfx90a),
    (0x3f, buffer_wbinvl1_vol, On::Gfx90a),
];

const MTBUF: &[Row] = &[
    (0x0, tbuffer_load_format_x, On::All),
    (0x1, tbuffer_load_format_xy, On::All),
    (0x2, tbuffer_load_format_xyz, On::All),
    (0x3, tbuffer_load_format_xyzw, On::All),
    (0x4, tbuffer_store_format_x, On::All),
    (0x5, tbuffer_store_format_xy, On::All),
    (0x6, tbuffer_store_format_xyz, On::All),
    (0x7, tbuffer_store_format_xyzw, On::All),
    (0x8, tbuffer_load_format_d16_x, On::All),
    (0x9, tbuffer_load_format_d16_xy, On::All),
    (0xa, tbuffer_load_format_d16_xyz, On::All),
    (0xb, tbuffer_load_format_d16_xyzw, On::All),
    (0xc, tbuffer_store_format_d16_x, On::All),
    (0xd, tbuffer_store_format_d16_xy, On::All),
    (0xe, tbuffer_store_format_d16_xyz, On::All),
    (0xf, tbuffer_store_format_d16_xyzw, On::All),
];

/// MIMG exists on gfx90a only (gfx942 has no image instructions).
const MIMG: &[Row] = &[
    (0, image_load, On::Gfx90a),
    (1, image_load_mip, On::Gfx90a),
    (2, image_load_pck, On::Gfx90a),
    (3, image_load_pck_sgn, On::Gfx90a),
    (4, image_load_mip_pck, On::Gfx90a),
    (5, image_load_mip_pck_sgn, On::Gfx90a),
    (8, image_store, On::Gfx90a),
    (9, image_store_mip, On::Gfx90a),
    (10, image_store_pck, On::Gfx90a),
    (11, image_store_mip_pck, On::Gfx90a),
    (14, image_get_resinfo, On::Gfx90a),
    (16, image_atomic_swap, On::Gfx90a),
    (17, image_atomic_cmpswap, On::Gfx90a),
    (18, image_atomic_add, On::Gfx90a),
    (19, image_atomic_sub, On::Gfx90a),
    (20, image_atomic_smin, On::Gfx90a),
    (21, image_atomic_umin, On::Gfx90a),
    (22, image_atomic_smax, On::Gfx90a),
    (23, image_atomic_umax, On::Gfx90a),
    (24, image_atomic_and, On::Gfx90a),
    (25, image_atomic_or, On::Gfx90a),
    (26, image_atomic_xor, On::Gfx90a),
    (27, image_atomic_inc, On::Gfx90a),
    (28, image_atomic_dec, On::Gfx90a),
    (32, image_sample, On::Gfx90a),
];

/// Dense opcode tables of one target.
struct Tables {
    sop2: Vec<Option<Op>>,
    sopk: Vec<Option<Op>>,
    sop1: Vec<Option<Op>>,
    sopc: Vec<Option<Op>>,
    sopp: Vec<Option<Op>>,
    smem: Vec<Option<Op>>,
    vop2: Vec<Option<Op>>,
    vop1: Vec<Option<Op>>,
    vopc: Vec<Option<Op>>,
    vop3: Vec<Option<Op>>,
    vop3p: Vec<Option<Op>>,
    ds: Vec<Option<Op>>,
    flat: Vec<Option<Op>>,
    mubuf: Vec<Option<Op>>,
    mtbuf: Vec<Option<Op>>,
    mimg: Vec<Option<Op>>,
}

fn dense(rows: &[Row], size: usize, target: Target) -> Vec<Option<Op>> {
    let mut t = vec![None; size];
    for &(code, op, on) in rows {
        let applies = match on {
            On::All => true,
            On::Gfx90a => target == Target::Gfx90a,
            On::Gfx942 => target == Target::Gfx942,
        };
        if applies {
            t[code as usize] = Some(op);
        }
    }
    t
}

fn tables(target: Target) -> &'static Tables {
    static T90A: OnceLock<Tables> = OnceLock::new();
    static T942: OnceLock<Tables> = OnceLock::new();
    let cell = match target {
        Target::Gfx90a => &T90A,
        Target::Gfx942 => &T942,
    };
    cell.get_or_init(|| {
        // VOP3 opcode space: VOPC 0..=255, VOP2 at 0x100, VOP1 at 0x140, native above.
        let mut vop3 = dense(VOP3, 1024, target);
        for (i, op) in dense(VOPC, 256, target).into_iter().enumerate() {
            vop3[i] = vop3[i].or(op);
        }
        for (i, op) in dense(VOP2, 64, target).into_iter().enumerate() {
            let op = op.filter(|&op| has_vop3_form(op));
            vop3[0x100 + i] = vop3[0x100 + i].or(op);
        }
        for (i, op) in dense(VOP1, 128, target).into_iter().enumerate() {
            let op = op.filter(|&op| has_vop3_form(op));
            vop3[0x140 + i] = vop3[0x140 + i].or(op);
        }
        Tables {
            sop2: dense(SOP2, 128, target),
            sopk: dense(SOPK, 32, target),
            sop1: dense(SOP1, 256, target),
            sopc: dense(SOPC, 128, target),
            sopp: dense(SOPP, 128, target),
            smem: dense(SMEM, 256, target),
            vop2: dense(VOP2, 64, target),
            vop1: dense(VOP1, 256, target),
            vopc: dense(VOPC, 256, target),
            vop3,
            vop3p: dense(VOP3P, 128, target),
            ds: dense(DS, 256, target),
            flat: dense(FLAT, 128, target),
            mubuf: dense(MUBUF, 128, target),
            mtbuf: dense(MTBUF, 16, target),
            mimg: dense(MIMG, 128, target),
        }
    })
}

fn bits(w: u32, lo: u32, n: u32) -> u32 {
    (w >> lo) & ((1u32 << n) - 1)
}

fn unknown(w0: u32) -> Inst {
    let mut i = Inst::new(Op::invalid, Enc::Unknown, 4);
    i.lit = w0;
    i
}

/// Operations whose VOP2 form always carries a literal K.
fn has_k(op: Op) -> bool {
    matches!(
        op,
        v_madmk_f32 | v_madak_f32 | v_fmamk_f32 | v_fmaak_f32 | v_madmk_f16 | v_madak_f16
    )
}

/// Whether a VOP1/VOP2 operation also has a VOP3 encoding (at its opcode + 0x140 or + 0x100):
/// not those with a literal K, nor the lane read, swap and accumulator move, which LLVM
/// decodes in their 32-bit form only.
fn has_vop3_form(op: Op) -> bool {
    !has_k(op) && !matches!(op, v_readfirstlane_b32 | v_swap_b32 | v_accvgpr_mov_b32)
}

/// VOP3 operations with the VOP3b layout (a scalar second destination).
fn is_vop3b(op: Op) -> bool {
    matches!(
        op,
        v_add_co_u32
            | v_sub_co_u32
            | v_subrev_co_u32
            | v_addc_co_u32
            | v_subb_co_u32
            | v_subbrev_co_u32
            | v_div_scale_f32
            | v_div_scale_f64
            | v_mad_u64_u32
            | v_mad_i64_i32
    )
}

pub(super) fn decode(target: Target, w0: u32, w1: u32, w2: u32) -> Inst {
    let t = tables(target);
    let top9 = w0 >> 23;
    let top6 = w0 >> 26;
    if top9 == 0x17D {
        let Some(op) = t.sop1[bits(w0, 8, 8) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Sop1, 4);
        i.dst = bits(w0, 16, 7) as u16;
        i.src[0] = bits(w0, 0, 8) as u16;
        scalar_literal(&mut i, w1);
        return i;
    }
    if top9 == 0x17E {
        let Some(op) = t.sopc[bits(w0, 16, 7) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Sopc, 4);
        i.src[0] = bits(w0, 0, 8) as u16;
        if op == s_set_gpr_idx_on {
            // The second field is the 4-bit index mode, not an operand.
            i.imm = bits(w0, 8, 8) as i32;
        } else {
            i.src[1] = bits(w0, 8, 8) as u16;
        }
        scalar_literal(&mut i, w1);
        return i;
    }
    if top9 == 0x17F {
        let Some(op) = t.sopp[bits(w0, 16, 7) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Sopp, 4);
        i.imm = (w0 & 0xFFFF) as u16 as i16 as i32;
        return i;
    }
    if w0 >> 28 == 0xB {
        let Some(op) = t.sopk[bits(w0, 23, 5) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Sopk, 4);
        i.dst = bits(w0, 16, 7) as u16;
        i.imm = (w0 & 0xFFFF) as u16 as i16 as i32;
        if op == s_setreg_imm32_b32 {
            i.len = 8;
            i.lit = w1;
        }
        return i;
    }
    if w0 >> 30 == 0b10 {
        let Some(op) = t.sop2[bits(w0, 23, 7) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Sop2, 4);
        i.dst = bits(w0, 16, 7) as u16;
        i.src[0] = bits(w0, 0, 8) as u16;
        i.src[1] = bits(w0, 8, 8) as u16;
        scalar_literal(&mut i, w1);
        return i;
    }
    match top6 {
        0x30 => {
            let Some(op) = t.smem[bits(w0, 18, 8) as usize] else {
                return unknown(w0);
            };
            let mut i = Inst::new(op, Enc::Smem, 8);
            i.dst = bits(w0, 6, 7) as u16;
            i.src[0] = (bits(w0, 0, 6) * 2) as u16;
            let imm = bits(w0, 17, 1) != 0;
            let soe = bits(w0, 14, 1) != 0;
            if bits(w0, 16, 1) != 0 {
                i.ctrl |= flags::GLC;
            }
            if imm {
                i.ctrl |= flags::IMM;
                // 21-bit signed byte offset.
                i.imm = ((w1 & 0x1F_FFFF) << 11) as i32 >> 11;
                i.sdst = if soe { bits(w1, 25, 7) as u16 } else { OFF };
            } else {
                i.sdst = if soe {
                    bits(w1, 25, 7) as u16
                } else {
                    (w1 & 0xFF) as u16
                };
            }
            return i;
        }
        0x34 => return decode_vop3(t, w0, w1),
        0x36 => {
            let Some(op) = t.ds[bits(w0, 17, 8) as usize] else {
                return unknown(w0);
            };
            let mut i = Inst::new(op, Enc::Ds, 8);
            i.imm = (w0 & 0xFFFF) as i32;
            if bits(w0, 16, 1) != 0 {
                i.ctrl |= flags::GDS;
            }
            let acc = bits(w0, 25, 1) != 0;
            let vbase = if acc { AGPR } else { VGPR };
            if acc {
                i.ctrl |= flags::ACC;
            }
            i.src[0] = VGPR + bits(w1, 0, 8) as u16;
            i.src[1] = vbase + bits(w1, 8, 8) as u16;
            i.src[2] = vbase + bits(w1, 16, 8) as u16;
            i.dst = vbase + bits(w1, 24, 8) as u16;
            return i;
        }
        0x37 => {
            let Some(op) = t.flat[bits(w0, 18, 7) as usize] else {
                return unknown(w0);
            };
            let mut i = Inst::new(op, Enc::Flat, 8);
            let segment = bits(w0, 14, 2);
            // The LDS DMA loads exist for the global and scratch segments only, atomics for
            // the flat and global ones, and gfx90a has its f32 and packed f16 adds in the
            // global segment only.
            let name = op.name();
            if segment == 3
                || (segment == 0 && name.contains("_load_lds_"))
                || (segment == 1 && name.contains("_atomic_"))
                || (segment == 0
                    && target == Target::Gfx90a
                    && matches!(op, flat_atomic_add_f32 | flat_atomic_pk_add_f16))
            {
                return unknown(w0);
            }
            i.ctrl |= segment << flags::SEG_SHIFT;
            let off = bits(w0, 0, 13);
            // Global and scratch offsets are 13-bit signed; flat offsets 12-bit unsigned.
            i.imm = if segment == 0 {
                (off & 0xFFF) as i32
            } else {
                ((off << 19) as i32) >> 19
            };
            if bits(w0, 16, 1) != 0 {
                i.ctrl |= flags::GLC;
            }
            if bits(w0, 17, 1) != 0 {
                i.ctrl |= flags::SLC;
            }
            if target == Target::Gfx942 && bits(w0, 25, 1) != 0 {
                i.ctrl |= flags::SC1;
            }
            let acc = bits(w1, 23, 1) != 0;
            if acc {
                i.ctrl |= flags::ACC;
            }
            let vbase = if acc { AGPR } else { VGPR };
            i.src[0] = VGPR + bits(w1, 0, 8) as u16;
            i.src[1] = vbase + bits(w1, 8, 8) as u16;
            i.src[2] = bits(w1, 16, 7) as u16;
            i.dst = vbase + bits(w1, 24, 8) as u16;
            if segment == 1 {
                let sve = match target {
                    Target::Gfx942 => bits(w0, 13, 1) != 0,
                    Target::Gfx90a => i.src[2] == OFF,
                };
                if sve {
                    i.ctrl |= flags::SVE;
                }
            } else if bits(w0, 13, 1) != 0 {
                i.ctrl |= flags::LDS;
            }
            return i;
        }
        0x38 => {
            let Some(op) = t.mubuf[bits(w0, 18, 7) as usize] else {
                return unknown(w0);
            };
            let mut i = Inst::new(op, Enc::Mubuf, 8);
            i.imm = bits(w0, 0, 12) as i32;
            for (bit, f) in [
                (12, flags::OFFEN),
                (13, flags::IDXEN),
                (14, flags::GLC),
                (16, flags::LDS),
                (17, flags::SLC),
            ] {
                if bits(w0, bit, 1) != 0 {
                    i.ctrl |= f;
                }
            }
            if target == Target::Gfx942 && bits(w0, 15, 1) != 0 {
                i.ctrl |= flags::SC1;
            }
            buffer_operands(&mut i, w1, w2);
            return i;
        }
        0x3A => {
            let Some(op) = t.mtbuf[bits(w0, 15, 4) as usize] else {
                return unknown(w0);
            };
            // The MUBUF form with the formats in place of the lds bit and the upper opcode
            // bits; SLC, SC1 (gfx942) and acc sit in the second dword.
            let mut i = Inst::new(op, Enc::Mubuf, 8);
            i.imm = bits(w0, 0, 12) as i32;
            for (bit, f) in [(12, flags::OFFEN), (13, flags::IDXEN), (14, flags::GLC)] {
                if bits(w0, bit, 1) != 0 {
                    i.ctrl |= f;
                }
            }
            i.ctrl |= bits(w0, 19, 7) << flags::FMT_SHIFT;
            if bits(w1, 22, 1) != 0 {
                i.ctrl |= flags::SLC;
            }
            if target == Target::Gfx942 && bits(w1, 21, 1) != 0 {
                i.ctrl |= flags::SC1;
            }
            buffer_operands(&mut i, w1, w2);
            return i;
        }
        0x3C => {
            let Some(op) = t.mimg[bits(w0, 18, 7) as usize] else {
                return unknown(w0);
            };
            return mimg(op, w0, w1);
        }
        _ => {}
    }
    if w0 >> 31 == 0 {
        let (op, enc) = match w0 >> 25 {
            0x3F => (t.vop1[bits(w0, 9, 8) as usize], Enc::Vop1),
            0x3E => (t.vopc[bits(w0, 17, 8) as usize], Enc::Vopc),
            _ => (t.vop2[bits(w0, 25, 6) as usize], Enc::Vop2),
        };
        let Some(op) = op else { return unknown(w0) };
        let mut i = Inst::new(op, enc, 4);
        i.src[0] = bits(w0, 0, 9) as u16;
        match enc {
            Enc::Vop1 => i.dst = VGPR + bits(w0, 17, 8) as u16,
            Enc::Vopc => {
                i.dst = super::VCC;
                i.src[1] = VGPR + bits(w0, 9, 8) as u16;
            }
            _ => {
                i.dst = VGPR + bits(w0, 17, 8) as u16;
                i.src[1] = VGPR + bits(w0, 9, 8) as u16;
                if matches!(
                    op,
                    v_cndmask_b32 | v_addc_co_u32 | v_subb_co_u32 | v_subbrev_co_u32
                ) {
                    i.src[2] = super::VCC;
                }
                if matches!(
                    op,
                    v_add_co_u32
                        | v_sub_co_u32
                        | v_subrev_co_u32
                        | v_addc_co_u32
                        | v_subb_co_u32
                        | v_subbrev_co_u32
                ) {
                    i.sdst = super::VCC;
                }
            }
        }
        if op == v_readfirstlane_b32 {
            // The destination is an SGPR.
            i.dst = bits(w0, 17, 8) as u16;
        }
        if op == v_accvgpr_mov_b32 {
            // Both operands are AGPRs.
            i.dst += AGPR - VGPR;
            if i.src[0] >= VGPR {
                i.src[0] += AGPR - VGPR;
            }
        }
        match i.src[0] {
            250 => {
                i.ext = Ext::Dpp;
                i.len = 8;
                i.ctrl = w1;
                i.src[0] = VGPR + bits(w1, 0, 8) as u16;
            }
            249 => {
                i.ext = Ext::Sdwa;
                i.len = 8;
                i.ctrl = w1;
                let s0_sgpr = bits(w1, 23, 1) != 0;
                i.src[0] = if s0_sgpr {
                    bits(w1, 0, 8) as u16
                } else {
                    VGPR + bits(w1, 0, 8) as u16
                };
                if enc != Enc::Vop1 && bits(w1, 31, 1) != 0 {
                    i.src[1] -= VGPR;
                }
                if enc == Enc::Vopc && bits(w1, 15, 1) != 0 {
                    i.dst = bits(w1, 8, 7) as u16;
                }
                if enc != Enc::Vopc {
                    // A VOPC form has its scalar destination where the others have these.
                    i.clamp = bits(w1, 13, 1) != 0;
                    i.omod = bits(w1, 14, 2) as u8;
                }
            }
            LITERAL => {
                i.len = 8;
                i.lit = w1;
            }
            _ => {}
        }
        if has_k(op) {
            i.len = 8;
            i.lit = w1;
        }
        return i;
    }
    unknown(w0)
}

/// The operands of a MUBUF or MTBUF instruction's second dword (the same in both): VGPR
/// address, data (AGPRs with the acc bit), resource, SOFFSET (a literal in a third dword).
fn buffer_operands(i: &mut Inst, w1: u32, w2: u32) {
    let acc = bits(w1, 23, 1) != 0;
    if acc {
        i.ctrl |= flags::ACC;
    }
    i.src[0] = VGPR + bits(w1, 0, 8) as u16;
    i.src[1] = if acc { AGPR } else { VGPR } + bits(w1, 8, 8) as u16;
    i.src[2] = (bits(w1, 16, 5) * 4) as u16;
    i.sdst = bits(w1, 24, 8) as u16;
    if i.sdst == LITERAL {
        i.len = 12;
        i.lit = w2;
    }
}

/// An image instruction: DMASK in `imm`, the address VGPR, data registers (AGPRs with the acc
/// bit, which gfx90a keeps where older targets had TFE) and resource in `src`, the sampler in
/// `sdst`, the modifier bits in `ctrl`.
fn mimg(op: Op, w0: u32, w1: u32) -> Inst {
    let mut i = Inst::new(op, Enc::Mimg, 8);
    i.imm = bits(w0, 8, 4) as i32;
    for (bit, f) in [
        (12, flags::UNORM),
        (13, flags::GLC),
        (14, flags::DA),
        (15, flags::A16),
        (16, flags::ACC),
        (17, flags::LWE),
        (25, flags::SLC),
    ] {
        if bits(w0, bit, 1) != 0 {
            i.ctrl |= f;
        }
    }
    if bits(w1, 31, 1) != 0 {
        i.ctrl |= flags::D16;
    }
    i.src[0] = VGPR + bits(w1, 0, 8) as u16;
    i.src[1] = if i.ctrl & flags::ACC != 0 { AGPR } else { VGPR } + bits(w1, 8, 8) as u16;
    i.src[2] = (bits(w1, 16, 5) * 4) as u16;
    i.sdst = (bits(w1, 21, 5) * 4) as u16;
    i
}

fn scalar_literal(i: &mut Inst, w1: u32) {
    if i.uses_literal() {
        i.len = 8;
        i.lit = w1;
    }
}

fn decode_vop3(t: &Tables, w0: u32, w1: u32) -> Inst {
    if w0 >> 23 == 0x1A7 {
        let Some(op) = t.vop3p[bits(w0, 16, 7) as usize] else {
            return unknown(w0);
        };
        let mut i = Inst::new(op, Enc::Vop3p, 8);
        let mfma = op.name().starts_with("v_mfma") || op.name().starts_with("v_smfmac");
        i.src = [
            bits(w1, 0, 9) as u16,
            bits(w1, 9, 9) as u16,
            bits(w1, 18, 9) as u16,
        ];
        i.dst = VGPR + bits(w0, 0, 8) as u16;
        if mfma {
            // cbsz [10:8], abid [14:11], acc_cd 15; acc (A/B in AGPRs) [28:27], blgp [31:29].
            i.ctrl = bits(w0, 8, 7) | bits(w1, 27, 5) << 8;
            if bits(w0, 15, 1) != 0 {
                i.dst += AGPR - VGPR;
                // A sparse MFMA accumulates in its destination; its third source is the
                // sparsity index, always a VGPR.
                if i.src[2] >= VGPR && !op.name().starts_with("v_smfmac") {
                    i.src[2] += AGPR - VGPR;
                }
            }
            for s in 0..2 {
                if bits(w1, 27 + s, 1) != 0 && i.src[s as usize] >= VGPR {
                    i.src[s as usize] += AGPR - VGPR;
                }
            }
        } else {
            i.abs = bits(w0, 8, 3) as u8; // neg_hi
            i.op_sel = bits(w0, 11, 3) as u8;
            i.op_sel_hi = (bits(w1, 27, 2) | bits(w0, 14, 1) << 2) as u8;
            i.clamp = bits(w0, 15, 1) != 0;
            i.neg = bits(w1, 29, 3) as u8;
            match op {
                v_accvgpr_read_b32 => i.src[0] += AGPR - VGPR,
                v_accvgpr_write_b32 => i.dst += AGPR - VGPR,
                _ => {}
            }
        }
        return i;
    }
    let code = bits(w0, 16, 10) as usize;
    let Some(op) = t.vop3[code] else {
        return unknown(w0);
    };
    let mut i = Inst::new(op, Enc::Vop3, 8);
    i.src = [
        bits(w1, 0, 9) as u16,
        bits(w1, 9, 9) as u16,
        bits(w1, 18, 9) as u16,
    ];
    i.omod = bits(w1, 27, 2) as u8;
    i.neg = bits(w1, 29, 3) as u8;
    i.clamp = bits(w0, 15, 1) != 0;
    if code < 0x100 {
        // VOPC: the 8-bit vdst field is the scalar destination. Its op_sel bits are kept
        // (though no compare defines them) so that execution can refuse them.
        i.dst = bits(w0, 0, 8) as u16;
        i.abs = bits(w0, 8, 3) as u8;
        i.op_sel = bits(w0, 11, 4) as u8;
    } else if is_vop3b(op) {
        i.dst = VGPR + bits(w0, 0, 8) as u16;
        i.sdst = bits(w0, 8, 7) as u16;
    } else {
        i.dst = VGPR + bits(w0, 0, 8) as u16;
        i.abs = bits(w0, 8, 3) as u8;
        i.op_sel = bits(w0, 11, 4) as u8;
        if i.op_sel & 4 != 0 && op.op_sel().is_some_and(|f| f.entries == 3) {
            // op_sel for a third source of a two-source operation: LLVM decodes no
            // instruction (only the first dword, as unknown).
            return unknown(w0);
        }
        if op == v_readlane_b32 {
            i.dst = bits(w0, 0, 8) as u16;
        }
    }
    i
}

/// The encoding family and opcode field of a GFX9 instruction word, read from the fields
/// alone (no table): what an unknown encoding is reported as.
pub(super) fn identify(w0: u32) -> (&'static str, u32) {
    let top9 = w0 >> 23;
    match top9 {
        0x17D => return ("SOP1", bits(w0, 8, 8)),
        0x17E => return ("SOPC", bits(w0, 16, 7)),
        0x17F => return ("SOPP", bits(w0, 16, 7)),
        _ => {}
    }
    if w0 >> 28 == 0xB {
        return ("SOPK", bits(w0, 23, 5));
    }
    if w0 >> 30 == 0b10 {
        return ("SOP2", bits(w0, 23, 7));
    }
    match w0 >> 26 {
        0x30 => return ("SMEM", bits(w0, 18, 8)),
        0x31 => return ("EXP", 0),
        0x34 if top9 == 0x1A7 => return ("VOP3P", bits(w0, 16, 7)),
        0x34 => return ("VOP3", bits(w0, 16, 10)),
        0x35 => return ("VINTRP", bits(w0, 16, 2)),
        0x36 => return ("DS", bits(w0, 17, 8)),
        0x37 => {
            let family = ["FLAT", "SCRATCH", "GLOBAL", "FLAT(segment 3)"][bits(w0, 14, 2) as usize];
            return (family, bits(w0, 18, 7));
        }
        0x38 => return ("MUBUF", bits(w0, 18, 7)),
        0x3A => return ("MTBUF", bits(w0, 15, 4)),
        0x3C => return ("MIMG", bits(w0, 18, 7)),
        _ => {}
    }
    if w0 >> 31 == 0 {
        return match w0 >> 25 {
            0x3F => ("VOP1", bits(w0, 9, 8)),
            0x3E => ("VOPC", bits(w0, 17, 8)),
            _ => ("VOP2", bits(w0, 25, 6)),
        };
    }
    ("unassigned", w0 >> 26)
}

/// Every opcode-table row of a target: (encoding, opcode, operation). For tools and tests.
pub(super) fn rows(target: Target) -> Vec<(Enc, u16, Op)> {
    let mut out = Vec::new();
    for (enc, rows) in [
        (Enc::Sop2, SOP2),
        (Enc::Sopk, SOPK),
        (Enc::Sop1, SOP1),
        (Enc::Sopc, SOPC),
        (Enc::Sopp, SOPP),
        (Enc::Smem, SMEM),
        (Enc::Vop2, VOP2),
        (Enc::Vop1, VOP1),
        (Enc::Vopc, VOPC),
        (Enc::Vop3, VOP3),
        (Enc::Vop3p, VOP3P),
        (Enc::Ds, DS),
        (Enc::Flat, FLAT),
        (Enc::Mubuf, MUBUF),
        (Enc::Mubuf, MTBUF),
        (Enc::Mimg, MIMG),
    ] {
        for &(code, op, on) in rows {
            let applies = match on {
                On::All => true,
                On::Gfx90a => target == Target::Gfx90a,
                On::Gfx942 => target == Target::Gfx942,
            };
            if applies {
                out.push((enc, code, op));
            }
        }
    }
    out
}
