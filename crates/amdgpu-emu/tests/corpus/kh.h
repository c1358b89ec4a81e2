// Minimal device-side definitions for the emulator's test corpus: the kernels are built
// with -nogpuinc -nogpulib, so this header stands in for the HIP headers.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define NOINLINE __attribute__((noinline))
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;
typedef _Float16 f16;

// Dispatch packet fields (hsa_kernel_dispatch_packet_t layout).
static __device__ inline const unsigned short *pkt16() {
  return (const unsigned short *)__builtin_amdgcn_dispatch_ptr();
}
static __device__ inline const unsigned *pkt32() {
  return (const unsigned *)__builtin_amdgcn_dispatch_ptr();
}
static __device__ inline u32 tid_x() { return __builtin_amdgcn_workitem_id_x(); }
static __device__ inline u32 tid_y() { return __builtin_amdgcn_workitem_id_y(); }
static __device__ inline u32 tid_z() { return __builtin_amdgcn_workitem_id_z(); }
static __device__ inline u32 bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
static __device__ inline u32 bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
static __device__ inline u32 bid_z() { return __builtin_amdgcn_workgroup_id_z(); }
static __device__ inline u32 bdim_x() { return pkt16()[2]; }
static __device__ inline u32 bdim_y() { return pkt16()[3]; }
static __device__ inline u32 bdim_z() { return pkt16()[4]; }
static __device__ inline u32 grid_x() { return pkt32()[3]; }
static __device__ inline u32 gid_x() { return bid_x() * bdim_x() + tid_x(); }

static __device__ inline void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

#define ATOMIC_ADD(p, v) __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_MAX(p, v) __hip_atomic_fetch_max((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_MIN(p, v) __hip_atomic_fetch_min((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_AND(p, v) __hip_atomic_fetch_and((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_OR(p, v) __hip_atomic_fetch_or((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_XOR(p, v) __hip_atomic_fetch_xor((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_XCHG(p, v) __hip_atomic_exchange((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define ATOMIC_CAS(p, e, d) __hip_atomic_compare_exchange_strong((p), (e), (d), __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define LDS_ATOMIC_ADD(p, v) __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP)
