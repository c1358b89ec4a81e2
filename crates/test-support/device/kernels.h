/* Device-code support for test kernels, without HIP headers.
 *
 * Compile with `clang -x hip --cuda-device-only -nogpulib -nogpuinc` (see
 * `test_support::build_code_object`). Provides the HIP attribute spellings, work-item
 * builtins and a few atomics, all mapped onto clang's AMDGPU builtins. */
#ifndef KREPLAY_TEST_KERNELS_H
#define KREPLAY_TEST_KERNELS_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))

/* A kernel entry with an unmangled symbol name (`<name>.kd` in the code object). */
#define KERNEL extern "C" __global__ void

typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;

/* Field offsets of the AQL kernel dispatch packet (hsa_kernel_dispatch_packet_t). */
#define KR_PACKET_WORKGROUP_SIZE_X 4
#define KR_PACKET_WORKGROUP_SIZE_Y 6
#define KR_PACKET_WORKGROUP_SIZE_Z 8
#define KR_PACKET_GRID_SIZE_X 12
#define KR_PACKET_GRID_SIZE_Y 16
#define KR_PACKET_GRID_SIZE_Z 20

static __device__ inline uint32_t kr_packet_u16(int offset) {
  const unsigned char* p = (const unsigned char*)__builtin_amdgcn_dispatch_ptr();
  return *(const unsigned short*)(p + offset);
}

static __device__ inline uint32_t kr_packet_u32(int offset) {
  const unsigned char* p = (const unsigned char*)__builtin_amdgcn_dispatch_ptr();
  return *(const uint32_t*)(p + offset);
}

/* Work-item id inside its work-group. */
static __device__ inline uint32_t thread_idx_x(void) { return __builtin_amdgcn_workitem_id_x(); }
static __device__ inline uint32_t thread_idx_y(void) { return __builtin_amdgcn_workitem_id_y(); }
static __device__ inline uint32_t thread_idx_z(void) { return __builtin_amdgcn_workitem_id_z(); }

/* Work-group id inside the grid. */
static __device__ inline uint32_t block_idx_x(void) { return __builtin_amdgcn_workgroup_id_x(); }
static __device__ inline uint32_t block_idx_y(void) { return __builtin_amdgcn_workgroup_id_y(); }
static __device__ inline uint32_t block_idx_z(void) { return __builtin_amdgcn_workgroup_id_z(); }

/* Work-group size, read from the dispatch packet. */
static __device__ inline uint32_t block_dim_x(void) { return kr_packet_u16(KR_PACKET_WORKGROUP_SIZE_X); }
static __device__ inline uint32_t block_dim_y(void) { return kr_packet_u16(KR_PACKET_WORKGROUP_SIZE_Y); }
static __device__ inline uint32_t block_dim_z(void) { return kr_packet_u16(KR_PACKET_WORKGROUP_SIZE_Z); }

/* Grid size in work-items, read from the dispatch packet. */
static __device__ inline uint32_t grid_size_x(void) { return kr_packet_u32(KR_PACKET_GRID_SIZE_X); }

/* Flat global work-item id along x. */
static __device__ inline uint32_t global_idx_x(void) {
  return block_idx_x() * block_dim_x() + thread_idx_x();
}

/* Work-group barrier with work-group memory ordering. */
static __device__ inline void sync_threads(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

/* Device-scope relaxed atomics; return the previous value. */
static __device__ inline uint32_t atomic_add_u32(uint32_t* p, uint32_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
static __device__ inline uint64_t atomic_add_u64(uint64_t* p, uint64_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

#endif /* KREPLAY_TEST_KERNELS_H */
