#include "kh.h"
extern "C" __global__ void fp64_ops(const double *a, const double *b, double *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  double x = a[i], y = b[i];
  out[4 * i + 0] = x * y + x;
  out[4 * i + 1] = x / y;
  out[4 * i + 2] = __builtin_fma(x, y, -x);
  out[4 * i + 3] = __builtin_sqrt(__builtin_fabs(x));
}
extern "C" __global__ void fp32_div(const float *a, const float *b, float *out, int n) {
  u32 i = gid_x();
  if (i < (u32)n) out[i] = a[i] / b[i];
}
extern "C" __global__ void int_divmod32(const int *a, const int *b, int *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  int x = a[i], y = b[i];
  out[4 * i + 0] = x / y;
  out[4 * i + 1] = x % y;
  out[4 * i + 2] = (int)((u32)x / (u32)y);
  out[4 * i + 3] = (int)((u32)x % (u32)y);
}
extern "C" __global__ void int_divmod64(const i64 *a, const i64 *b, i64 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  i64 x = a[i], y = b[i];
  out[4 * i + 0] = x / y;
  out[4 * i + 1] = x % y;
  out[4 * i + 2] = (i64)((u64)x / (u64)y);
  out[4 * i + 3] = (i64)((u64)x % (u64)y);
}
extern "C" __global__ void math_f32(const float *in, float *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float x = in[i];
  out[8 * i + 0] = __builtin_sqrtf(__builtin_fabsf(x));
  out[8 * i + 1] = __builtin_expf(x);
  out[8 * i + 2] = __builtin_logf(__builtin_fabsf(x) + 1.0f);
  out[8 * i + 3] = __builtin_sinf(x);
  out[8 * i + 4] = __builtin_cosf(x);
  out[8 * i + 5] = __builtin_floorf(x * 3.5f);
  out[8 * i + 6] = __builtin_fmaf(x, 1.25f, -0.75f);
  out[8 * i + 7] = __builtin_fminf(__builtin_fmaxf(x, -1.5f), 2.5f) + __builtin_truncf(x) + __builtin_ceilf(x) + __builtin_rintf(x);
}
extern "C" __global__ void half_ops(const f16 *a, const f16 *b, f16 *out, float *outf, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  f16 x = a[i], y = b[i];
  out[3 * i + 0] = x * y + x;
  out[3 * i + 1] = x - y;
  out[3 * i + 2] = x > y ? x : y;
  outf[i] = (float)x * (float)y;
}
extern "C" __global__ void conversions(const float *in, int *oi, u32 *ou, double *od, f16 *oh, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  float x = in[i];
  oi[i] = (int)x;
  ou[i] = (u32)__builtin_fabsf(x);
  od[i] = (double)x * 3.0 + (double)oi[i];
  oh[i] = (f16)x;
}
extern "C" __global__ void bit_ops(const u32 *a, const u64 *b, u32 *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  u32 x = a[i];
  u64 y = b[i];
  out[8 * i + 0] = __builtin_popcount(x);
  out[8 * i + 1] = x ? __builtin_clz(x) : 32;
  out[8 * i + 2] = x ? __builtin_ctz(x) : 32;
  out[8 * i + 3] = __builtin_bitreverse32(x);
  out[8 * i + 4] = (x << (i & 31)) | (x >> ((32 - (i & 31)) & 31));
  out[8 * i + 5] = (u32)(y >> (i & 63)) ^ (u32)(y << 3);
  out[8 * i + 6] = __builtin_bswap32(x) + (u32)__builtin_popcountll(y);
  out[8 * i + 7] = (u32)((y * 0x9E3779B97F4A7C15ull) >> 32) + (u32)(((x >> 4) & 0xff) * ((x >> 12) & 0xfff));
}
extern "C" __global__ void int_misc(const int *a, const int *b, int *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  int x = a[i], y = b[i];
  out[6 * i + 0] = x < y ? x : y;
  out[6 * i + 1] = (x * y) ^ (x >> 3);
  out[6 * i + 2] = (int)(((i64)x * (i64)y) >> 32);
  out[6 * i + 3] = (int)(((u64)(u32)x * (u64)(u32)y) >> 32);
  out[6 * i + 4] = x < 0 ? -x : x;
  out[6 * i + 5] = (short)x * (signed char)y;
}
extern "C" __global__ void bytes_shorts(const unsigned char *in, unsigned short *out, int n) {
  u32 i = gid_x();
  if (i >= (u32)n) return;
  unsigned char c = in[i * 3 + 1];
  signed char d = (signed char)in[i * 3 + 2];
  out[i] = (unsigned short)(c * 3 + d);
}
