#include "kh.h"
typedef float f4 __attribute__((ext_vector_type(4)));
// One 16x16x4 MFMA per wave: A is 16x4, B is 4x16, C/D 16x16 (four blocks of output per lane).
extern "C" __global__ void mfma_16x16x4(const float *a, const float *b, float *d) {
  u32 l = tid_x();
  float av = a[(l & 15) * 4 + (l >> 4)];
  float bv = b[(l >> 4) * 16 + (l & 15)];
  f4 acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_f32_16x16x4f32(av, bv, acc, 0, 0, 0);
  for (int k = 0; k < 4; k++) d[((l >> 4) * 4 + k) * 16 + (l & 15)] = acc[k];
}
