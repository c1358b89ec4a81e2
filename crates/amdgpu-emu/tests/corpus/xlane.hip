#include "kh.h"
extern "C" __global__ void xlane(const int *in, int *out) {
  u32 i = gid_x(), l = tid_x() & 63;
  int x = in[i];
  int rot = __builtin_amdgcn_ds_bpermute((int)(((l + 1) & 63) * 4), x);
  int r5 = __builtin_amdgcn_readlane(x, 5);
  int rf = __builtin_amdgcn_readfirstlane(x + 7);
  int sw = __builtin_amdgcn_mov_dpp(x, 0x1b, 0xf, 0xf, 0);  // quad_perm [3,2,1,0]
  int sh = __builtin_amdgcn_update_dpp(0, x, 0x111, 0xf, 0xf, 0);  // row_shr:1
  out[5 * i + 0] = rot;
  out[5 * i + 1] = r5;
  out[5 * i + 2] = rf;
  out[5 * i + 3] = sw;
  out[5 * i + 4] = sh;
}
extern "C" __global__ void mbcnt_compact(const int *in, int *out, u32 *count) {
  u32 i = gid_x();
  int keep = in[i] % 3 == 0;
  u64 m = __builtin_amdgcn_ballot_w64(keep);
  u32 below = __builtin_amdgcn_mbcnt_hi((u32)(m >> 32), __builtin_amdgcn_mbcnt_lo((u32)m, 0));
  if (keep) out[(i & ~63u) + below] = in[i];
  if ((tid_x() & 63) == 0) count[i / 64] = (u32)__builtin_popcountll(m);
}
// ds_bpermute_b32 reads 0 from a lane EXEC leaves out: the low half of the wave reads the
// high half, which holds values but is inactive in that branch; the high half reads its
// neighbours, which are active.
extern "C" __global__ void bpermute_inactive(u32 *out) {
  u32 l = tid_x() & 63;
  int v = (int)(l + 100);
  int r;
  if (l < 32)
    r = __builtin_amdgcn_ds_bpermute((int)((l ^ 32) << 2), v);
  else
    r = __builtin_amdgcn_ds_bpermute((int)((l ^ 1) << 2), v);
  out[gid_x()] = (u32)r;
}
