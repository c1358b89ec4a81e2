/* Shared by the HIP test programs: result checks, and native stand-ins for the kernels the
 * programs launch, registered through the vhsa C extension (found with dlsym, so the programs
 * also start on a runtime without it and say so).
 *
 * ROCclr's blit kernels (device-to-device copies, memsets) get stand-ins here too. Their
 * argument layouts, as HIP 5.2 fills them:
 *   copyBuffer(src, dst, src_origin, dst_origin, dwords, remain): bytes; dwords - 1 whole
 *     4-byte words, then `remain` bytes;
 *   copyBufferAligned(src, dst, src_origin, dst_origin, size, alignment): in units of alignment;
 *   copyBufferRect[Aligned](src, dst, ulong4 src_rect, ulong4 dst_rect, ulong4 size): rect =
 *     (row pitch, slice pitch, origin, -), size = (width, height, depth, element bytes), all in
 *     elements (bytes, or 4-byte words for the aligned kernel);
 *   fillBufferAligned(u8*, u16*, u32*, u64*, pattern, pattern_elems, offset, size): the one
 *     non-NULL pointer picks the element size; offset and size in elements;
 *   fillBufferAligned2D(u8*, u16*, u32*, u64*, pattern, pattern_elems, offset, width, height,
 *     pitch): the same per row, in elements. */
#pragma once

#include <dlfcn.h>
#include <hip/hip_runtime.h>
#include <hsa/hsa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);  \
      fprintf(stderr, "" __VA_ARGS__);                                           \
      fprintf(stderr, "\n");                                                     \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#define CHECK_HIP(expr)                                                                        \
  do {                                                                                         \
    hipError_t e_ = (expr);                                                                    \
    if (e_ != hipSuccess) {                                                                    \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, hipGetErrorString(e_)); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

typedef void (*native_fn)(const hsa_kernel_dispatch_packet_t*, void*);
typedef uint64_t (*native_create_fn)(const char*, native_fn, void*);

/* Kernel dispatches that ran a stand-in. */
static volatile uint64_t g_native_runs = 0;

static inline void register_native(const char* name, native_fn fn) {
  native_create_fn create = (native_create_fn)dlsym(RTLD_DEFAULT, "vhsa_native_kernel_create");
  if (!create) {
    fprintf(stderr, "vhsa_native_kernel_create not found: run on vhsa (LD_LIBRARY_PATH)\n");
    exit(2);
  }
  CHECK(create(name, fn, NULL) != 0, "registering %s", name);
}

/* The kernel arguments of a dispatch, at byte `offset`. */
#define KARG(packet, type, offset) (*(type*)((char*)(packet)->kernarg_address + (offset)))

static void blit_copy_buffer(const hsa_kernel_dispatch_packet_t* p, void*) {
  const char* src = KARG(p, const char*, 0);
  char* dst = KARG(p, char*, 8);
  uint64_t so = KARG(p, uint64_t, 16), dof = KARG(p, uint64_t, 24), dwords = KARG(p, uint64_t, 32);
  uint32_t remain = KARG(p, uint32_t, 40);
  uint64_t bytes = dwords ? (dwords - 1) * 4 + remain : 0;
  memmove(dst + dof, src + so, bytes);
  __atomic_add_fetch(&g_native_runs, 1, __ATOMIC_RELAXED);
}

static void blit_copy_buffer_aligned(const hsa_kernel_dispatch_packet_t* p, void*) {
  const char* src = KARG(p, const char*, 0);
  char* dst = KARG(p, char*, 8);
  uint64_t so = KARG(p, uint64_t, 16), dof = KARG(p, uint64_t, 24), size = KARG(p, uint64_t, 32);
  uint32_t align = KARG(p, uint32_t, 40);
  if (align == 0) align = 4;
  memmove(dst + dof * align, src + so * align, size * align);
  __atomic_add_fetch(&g_native_runs, 1, __ATOMIC_RELAXED);
}

static void copy_rect(const hsa_kernel_dispatch_packet_t* p, uint64_t elem) {
  const char* src = KARG(p, const char*, 0);
  char* dst = KARG(p, char*, 8);
  const uint64_t* sr = &KARG(p, uint64_t, 32);
  const uint64_t* dr = &KARG(p, uint64_t, 64);
  const uint64_t* sz = &KARG(p, uint64_t, 96);
  for (uint64_t z = 0; z < sz[2]; z++)
    for (uint64_t y = 0; y < sz[1]; y++) {
      uint64_t s = sr[2] + y * sr[0] + z * sr[1];
      uint64_t d = dr[2] + y * dr[0] + z * dr[1];
      memmove(dst + d * elem, src + s * elem, sz[0] * elem);
    }
  __atomic_add_fetch(&g_native_runs, 1, __ATOMIC_RELAXED);
}

static void blit_copy_rect(const hsa_kernel_dispatch_packet_t* p, void*) { copy_rect(p, 1); }
static void blit_copy_rect_aligned(const hsa_kernel_dispatch_packet_t* p, void*) { copy_rect(p, 4); }

/* The fill target: (base, element bytes). */
static char* fill_target(const hsa_kernel_dispatch_packet_t* p, uint64_t* elem) {
  for (int i = 0; i < 4; i++) {
    char* b = KARG(p, char*, 8 * i);
    if (b) {
      *elem = 1ull << i;
      return b;
    }
  }
  *elem = 0;
  return NULL;
}

static void fill_row(char* base, uint64_t elem, const char* pattern, uint32_t pattern_elems, uint64_t first,
                     uint64_t count) {
  for (uint64_t i = 0; i < count; i++)
    memcpy(base + (first + i) * elem, pattern + (i % pattern_elems) * elem, elem);
}

static void blit_fill(const hsa_kernel_dispatch_packet_t* p, void*) {
  uint64_t elem;
  char* base = fill_target(p, &elem);
  const char* pattern = KARG(p, const char*, 32);
  uint32_t n = KARG(p, uint32_t, 40);
  if (base && n) fill_row(base, elem, pattern, n, KARG(p, uint64_t, 48), KARG(p, uint64_t, 56));
  __atomic_add_fetch(&g_native_runs, 1, __ATOMIC_RELAXED);
}

static void blit_fill_2d(const hsa_kernel_dispatch_packet_t* p, void*) {
  uint64_t elem;
  char* base = fill_target(p, &elem);
  const char* pattern = KARG(p, const char*, 32);
  uint32_t n = KARG(p, uint32_t, 40);
  uint64_t offset = KARG(p, uint64_t, 48), width = KARG(p, uint64_t, 56), height = KARG(p, uint64_t, 64),
           pitch = KARG(p, uint64_t, 72);
  if (base && n)
    for (uint64_t y = 0; y < height; y++) fill_row(base, elem, pattern, n, offset + y * pitch, width);
  __atomic_add_fetch(&g_native_runs, 1, __ATOMIC_RELAXED);
}

/* Registers stand-ins for ROCclr's buffer blit kernels. */
static inline void register_blit_standins(void) {
  register_native("__amd_rocclr_copyBuffer", blit_copy_buffer);
  register_native("__amd_rocclr_copyBufferAligned", blit_copy_buffer_aligned);
  register_native("__amd_rocclr_copyBufferRect", blit_copy_rect);
  register_native("__amd_rocclr_copyBufferRectAligned", blit_copy_rect_aligned);
  register_native("__amd_rocclr_fillBufferAligned", blit_fill);
  register_native("__amd_rocclr_fillBufferAligned2D", blit_fill_2d);
}

/* The linear work-item count of a dispatch. */
static inline uint64_t grid_items(const hsa_kernel_dispatch_packet_t* p) {
  return (uint64_t)p->grid_size_x * p->grid_size_y * p->grid_size_z;
}
