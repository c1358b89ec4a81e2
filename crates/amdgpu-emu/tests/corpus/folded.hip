#include "kh.h"
// Each operation twice: `rt_<op>` computes it at run time from sources read from memory,
// `ct_<op>` from the same sources as constants, which the compiler folds with its own model
// of the instruction (LLVM's AMDGPU constant folding: NaN quieting, the f32 log's denormal
// sources, whole and quarter revolutions of sin/cos, med3 with NaNs, bit-field extracts
// reaching past bit 31). `sources_<type>` writes the sources for `rt_`.

template <class T, T... K> struct seq {};
template <class T> static constexpr T bits_as(unsigned long long b) {
  if constexpr (sizeof(T) == 2) return __builtin_bit_cast(T, (unsigned short)b);
  else if constexpr (sizeof(T) == 4) return __builtin_bit_cast(T, (u32)b);
  else return __builtin_bit_cast(T, (u64)b);
}

// Signed zeros, one, halves, denormals, the smallest normal, the largest f16, large values,
// infinities, quiet and signalling NaNs, whole and quarter revolutions, tiny values.
constexpr float F32_SRC[] = {
    bits_as<float>(0x00000000), bits_as<float>(0x80000000), bits_as<float>(0x3f800000),
    bits_as<float>(0xbf800000), bits_as<float>(0x3f000000), bits_as<float>(0xc0200000),
    bits_as<float>(0x40700000), bits_as<float>(0x00011111), bits_as<float>(0x807fffff),
    bits_as<float>(0x00800000), bits_as<float>(0x477fe000), bits_as<float>(0x7149f2ca),
    bits_as<float>(0xf149f2ca), bits_as<float>(0x7f800000), bits_as<float>(0xff800000),
    bits_as<float>(0x7fc00000), bits_as<float>(0x7f800001), bits_as<float>(0xff812345),
    bits_as<float>(0x42c88000), bits_as<float>(0xbe99999a), bits_as<float>(0x1e3ce508),
    bits_as<float>(0x3f7fffff), bits_as<float>(0xcb000001), bits_as<float>(0x3eaaaaab),
    bits_as<float>(0xc2f00000), bits_as<float>(0x3e800000), bits_as<float>(0xbe800000),
    bits_as<float>(0x3f400000), bits_as<float>(0x43800000), bits_as<float>(0xc3800000),
    bits_as<float>(0x80000001), bits_as<float>(0x47000000)};
constexpr double F64_SRC[] = {
    bits_as<double>(0x0), bits_as<double>(0x8000000000000000), bits_as<double>(0x3ff0000000000000),
    bits_as<double>(0xbff8000000000000), bits_as<double>(0x0000000000012345),
    bits_as<double>(0x800fffffffffffff), bits_as<double>(0x0010000000000000),
    bits_as<double>(0x7fefffffffffffff), bits_as<double>(0x7ff0000000000000),
    bits_as<double>(0xfff0000000000000), bits_as<double>(0x7ff8000000000000),
    bits_as<double>(0x7ff0000000000001), bits_as<double>(0xfff4000000000abc),
    bits_as<double>(0x400921fb54442d18), bits_as<double>(0x3fe5555555555555),
    bits_as<double>(0xc090000000000000), bits_as<double>(0x3fefffffffffffff)};
constexpr f16 F16_SRC[] = {
    bits_as<f16>(0x0000), bits_as<f16>(0x8000), bits_as<f16>(0x3c00), bits_as<f16>(0xbc00),
    bits_as<f16>(0x3800), bits_as<f16>(0xc100), bits_as<f16>(0x0001), bits_as<f16>(0x83ff),
    bits_as<f16>(0x0400), bits_as<f16>(0x7bff), bits_as<f16>(0x7c00), bits_as<f16>(0xfc00),
    bits_as<f16>(0x7e00), bits_as<f16>(0x7c01), bits_as<f16>(0xfd23), bits_as<f16>(0x3bff),
    bits_as<f16>(0x5640), bits_as<f16>(0xb4cd), bits_as<f16>(0x3400), bits_as<f16>(0xb400)};
constexpr u32 U32_SRC[] = {0,          1,          0xffffffff, 0x80000000, 0x7fffffff, 0x12345678,
                           0xdeadbeef, 0x00ff00ff, 0xa5a5a5a5, 31,         32,         33,
                           0x3f,       0x100,      0xcafe1234, 0x0000101c, 0x0000081f, 0x00000714,
                           0x0c0d0e0f, 0x01020304};

template <class T, int N> static constexpr int count(const T (&)[N]) { return N; }
// The three sources of case `k` of `n`: the source itself and two others further on.
static constexpr int second(int k, int n) { return (k * 7 + 3) % n; }
static constexpr int third(int k, int n) { return (k * 11 + 5) % n; }

template <class T, class R, class F, int... K>
static __device__ void folded(R *out, const T (&src)[sizeof...(K)], F f, seq<int, K...>) {
  constexpr int n = sizeof...(K);
  ((out[K] = f(src[K], src[second(K, n)], src[third(K, n)])), ...);
}

#define SOURCES(T, SRC)                                                                      \
  extern "C" __global__ void sources_##SRC(T *in) {                                         \
    for (int k = 0; k < count(SRC); k++) in[k] = SRC[k];                                    \
  }
SOURCES(float, F32_SRC)
SOURCES(double, F64_SRC)
SOURCES(f16, F16_SRC)
SOURCES(u32, U32_SRC)

#define PAIR(name, T, R, SRC, EXPR)                                                          \
  extern "C" __global__ void rt_##name(const T *in, R *out) {                               \
    constexpr int n = count(SRC);                                                           \
    for (int k = 0; k < n; k++) {                                                           \
      T x = in[k], y = in[second(k, n)], z = in[third(k, n)];                               \
      (void)y, (void)z;                                                                     \
      out[k] = EXPR;                                                                        \
    }                                                                                       \
  }                                                                                         \
  extern "C" __global__ void ct_##name(R *out) {                                            \
    folded(out, SRC, [](T x, T y, T z) -> R { (void)y, (void)z; return EXPR; },             \
           __make_integer_seq<seq, int, count(SRC)>{});                                     \
  }

PAIR(fract_f32, float, float, F32_SRC, __builtin_amdgcn_fractf(x))
PAIR(frexp_mant_f32, float, float, F32_SRC, __builtin_amdgcn_frexp_mantf(x))
PAIR(frexp_exp_f32, float, int, F32_SRC, __builtin_amdgcn_frexp_expf(x))
PAIR(sin_f32, float, float, F32_SRC, __builtin_amdgcn_sinf(x))
PAIR(cos_f32, float, float, F32_SRC, __builtin_amdgcn_cosf(x))
PAIR(log_f32, float, float, F32_SRC, __builtin_amdgcn_logf(x))
PAIR(med3_f32, float, float, F32_SRC, __builtin_amdgcn_fmed3f(x, y, z))
PAIR(fract_f64, double, double, F64_SRC, __builtin_amdgcn_fract(x))
PAIR(frexp_mant_f64, double, double, F64_SRC, __builtin_amdgcn_frexp_mant(x))
PAIR(fract_f16, f16, f16, F16_SRC, __builtin_amdgcn_fracth(x))
PAIR(sin_f16, f16, f16, F16_SRC, __builtin_amdgcn_sinh(x))
PAIR(frexp_mant_f16, f16, f16, F16_SRC, __builtin_amdgcn_frexp_manth(x))
PAIR(med3_f16, f16, f16, F16_SRC, __builtin_amdgcn_fmed3h(x, y, z))
PAIR(sbfe, u32, u32, U32_SRC, (u32)__builtin_amdgcn_sbfe((int)x, y, z))
PAIR(ubfe, u32, u32, U32_SRC, __builtin_amdgcn_ubfe(x, y, z))
