// f32 add, multiply and fma under each directed rounding mode set with s_setreg. Kernel
// arguments: out (9 floats per work-item), in (a, b, c per work-item). The target directive is
// added by the test.
.text
.globl probe_round
.p2align 8
.type probe_round,@function
probe_round:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshl_add_u32 v1, s2, 6, v0
  v_mul_u32_u24 v3, 12, v1
  v_mul_u32_u24 v7, 36, v1
  s_waitcnt lgkmcnt(0)
  global_load_dword v4, v3, s[6:7]
  global_load_dword v5, v3, s[6:7] offset:4
  global_load_dword v6, v3, s[6:7] offset:8
  s_waitcnt vmcnt(0)
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 1
  v_add_f32 v8, v4, v5
  v_mul_f32 v9, v4, v5
  v_fma_f32 v10, v4, v5, v6
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 2
  v_add_f32 v11, v4, v5
  v_mul_f32 v12, v4, v5
  v_fma_f32 v13, v4, v5, v6
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 3
  v_add_f32 v14, v4, v5
  v_mul_f32 v15, v4, v5
  v_fma_f32 v16, v4, v5, v6
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0
  global_store_dword v7, v8, s[4:5]
  global_store_dword v7, v9, s[4:5] offset:4
  global_store_dword v7, v10, s[4:5] offset:8
  global_store_dword v7, v11, s[4:5] offset:12
  global_store_dword v7, v12, s[4:5] offset:16
  global_store_dword v7, v13, s[4:5] offset:20
  global_store_dword v7, v14, s[4:5] offset:24
  global_store_dword v7, v15, s[4:5] offset:28
  global_store_dword v7, v16, s[4:5] offset:32
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel probe_round
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_float_denorm_mode_32 3
  .amdhsa_float_denorm_mode_16_64 3
  .amdhsa_next_free_vgpr 32
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 32
.end_amdhsa_kernel
