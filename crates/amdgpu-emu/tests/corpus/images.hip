// Image instructions (MIMG), which only gfx90a has: written as inline assembly on descriptors
// the test builds in memory, so each form (DMASK, D16, the UNORM bit, the _mip forms) is the
// one named. The gfx942 build has empty kernels.
#include "kh.h"

typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v3i __attribute__((ext_vector_type(3)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v3f __attribute__((ext_vector_type(3)));

// Each lane loads all four components of the texel at its (x, y, z-or-layer).
extern "C" __global__ void image_load_xyzw(const v8i *rsrc, const v3i *at, v4f *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v3i a = at[i];
  v4f d;
  asm volatile("image_load %0, %1, %2 dmask:0xf unorm\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(a), "s"(r));
  out[i] = d;
#endif
}

// Components Y and W only, then X and Z as two halves of one register (d16).
extern "C" __global__ void image_load_masked(const v8i *rsrc, const v3i *at, v2i *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v3i a = at[i];
  v2i yw;
  int xz;
  asm volatile("image_load %0, %2, %3 dmask:0xa unorm\n\t"
               "image_load %1, %2, %3 dmask:0x5 unorm d16\n\ts_waitcnt vmcnt(0)"
               : "=&v"(yw), "=&v"(xz) : "v"(a), "s"(r));
  out[2 * i] = yw;
  out[2 * i + 1] = (v2i){xz, 0};
#endif
}

// image_load_mip with the level after the coordinates (x, y, level).
extern "C" __global__ void image_load_mip_x(const v8i *rsrc, const v3i *at, float *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v3i a = at[i];
  float d;
  asm volatile("image_load_mip %0, %1, %2 dmask:0x1 unorm\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(a), "s"(r));
  out[i] = d;
#endif
}

// Each lane stores four components at its coordinates; lanes whose flag is clear store two
// (X and Z, from `xz`).
extern "C" __global__ void image_store_xyzw(const v8i *rsrc, const v3i *at, const v4f *data,
                                            const v2i *xz, const int *full) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v3i a = at[i];
  if (full[i]) {
    v4f d = data[i];
    asm volatile("image_store %0, %1, %2 dmask:0xf unorm\n\ts_waitcnt vmcnt(0)"
                 :: "v"(d), "v"(a), "s"(r) : "memory");
  } else {
    v2i d = xz[i];
    asm volatile("image_store %0, %1, %2 dmask:0x5 unorm\n\ts_waitcnt vmcnt(0)"
                 :: "v"(d), "v"(a), "s"(r) : "memory");
  }
#endif
}

// Samples at float coordinates (normalized unless the sampler says otherwise).
extern "C" __global__ void image_sample_xyzw(const v8i *rsrc, const v4i *samp, const v3f *at,
                                             v4f *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v4i s = *samp;
  v3f a = at[i];
  v4f d;
  asm volatile("image_sample %0, %1, %2, %3 dmask:0xf\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(a), "s"(r), "s"(s));
  out[i] = d;
#endif
}

// The same with the instruction's UNORM bit: coordinates in texels.
extern "C" __global__ void image_sample_unorm_x(const v8i *rsrc, const v4i *samp,
                                                const v3f *at, float *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  v4i s = *samp;
  v3f a = at[i];
  float d;
  asm volatile("image_sample %0, %1, %2, %3 dmask:0x1 unorm\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(a), "s"(r), "s"(s));
  out[i] = d;
#endif
}

// The image's size at each lane's mip level.
extern "C" __global__ void image_resinfo(const v8i *rsrc, const int *mip, v4i *out) {
#ifdef __gfx90a__
  u32 i = gid_x();
  v8i r = *rsrc;
  int m = mip[i];
  v4i d;
  asm volatile("image_get_resinfo %0, %1, %2 dmask:0xf\n\ts_waitcnt vmcnt(0)"
               : "=v"(d) : "v"(m), "s"(r));
  out[i] = d;
#endif
}
