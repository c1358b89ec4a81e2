// Hand-written probes of instruction forms the compiled corpus does not use. The target
// directive is added by the test. Kernel arguments: out (u32 per lane x 16), in (u32 buffer).
.text
.globl probe
.p2align 8
.type probe,@function
probe:
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v10, 6, v0
  s_waitcnt lgkmcnt(0)
  // 0-3: DPP lane movements
  v_mov_b32_dpp v1, v0 row_ror:4 row_mask:0xf bank_mask:0xf
  global_store_dword v10, v1, s[4:5]
  v_mov_b32_dpp v1, v0 row_mirror row_mask:0xf bank_mask:0xf
  global_store_dword v10, v1, s[4:5] offset:4
  v_mov_b32_dpp v1, v0 row_half_mirror row_mask:0xf bank_mask:0xf
  global_store_dword v10, v1, s[4:5] offset:8
  v_mov_b32 v1, 0x77
  v_mov_b32_dpp v1, v0 wave_shr:1 row_mask:0xf bank_mask:0xf
  global_store_dword v10, v1, s[4:5] offset:12
  // 4: SDWA destination word with the other half preserved
  v_mov_b32 v2, 0x11223344
  v_add_u32_sdwa v2, v0, v0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0 src1_sel:BYTE_0
  global_store_dword v10, v2, s[4:5] offset:16
  // 5: alignbit with an SGPR high word
  s_mov_b32 s14, 0x80000001
  v_alignbit_b32 v3, s14, v0, 4
  global_store_dword v10, v3, s[4:5] offset:20
  // 6: structured buffer load (idxen) with a stride of 8 bytes
  s_mov_b32 s8, s6
  s_and_b32 s9, s7, 0xffff
  s_or_b32 s9, s9, 0x80000
  s_mov_b32 s10, -1
  s_mov_b32 s11, 0x27000
  buffer_load_dword v4, v0, s[8:11], 0 idxen offset:4
  s_waitcnt vmcnt(0)
  global_store_dword v10, v4, s[4:5] offset:24
  // 7: scalar bit-field extract, signed
  s_mov_b32 s15, 0x80004
  s_bfe_i32 s3, 0xf0f0, s15
  v_mov_b32 v5, s3
  global_store_dword v10, v5, s[4:5] offset:28
  // 8: v_cndmask on a compare mask, VOP3 form with an SGPR pair
  v_cmp_gt_u32_e64 s[12:13], 20, v0
  v_cndmask_b32_e64 v6, 5, 9, s[12:13]
  global_store_dword v10, v6, s[4:5] offset:32
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel probe
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 32
  .amdhsa_next_free_sgpr 16
  .amdhsa_accum_offset 32
.end_amdhsa_kernel
