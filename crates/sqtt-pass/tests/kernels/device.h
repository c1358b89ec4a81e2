// Minimal device-side definitions for the test kernels (no HIP headers needed).
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

__device__ static inline unsigned thread_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ static inline unsigned block_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ static inline void sync_threads() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
