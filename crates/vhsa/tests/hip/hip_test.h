/* Shared by the HIP test programs: result checks, and the number of kernel dispatches vhsa ran
 * (read through the vhsa C extension, found with dlsym, so the programs also start on a runtime
 * without it and say so). Every kernel runs on vhsa's emulator: the programs' own kernels and
 * ROCclr's blit kernels behind device-to-device copies and memsets, which comgr compiles at run
 * time. */
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

typedef struct {
  uint64_t size, bytes_host_to_device, bytes_device_to_host, bytes_device_to_device, bytes_host_to_host,
      copies, dispatches, barrier_packets;
} vhsa_stats_view_t;
typedef hsa_status_t (*vhsa_stats_fn)(vhsa_stats_view_t*);

/* Kernel dispatch packets the virtual GPU executed so far: vhsa's `vhsa_stats`, or vkfd's
   `vkfd_stats` (same view) when the real ROCR runs on vkfd. */
static inline uint64_t gpu_dispatches(void) {
  vhsa_stats_fn stats = (vhsa_stats_fn)dlsym(RTLD_DEFAULT, "vhsa_stats");
  if (!stats) stats = (vhsa_stats_fn)dlsym(RTLD_DEFAULT, "vkfd_stats");
  if (!stats) {
    fprintf(stderr, "neither vhsa_stats nor vkfd_stats found: run on vhsa or vkfd (LD_LIBRARY_PATH)\n");
    exit(2);
  }
  vhsa_stats_view_t s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  CHECK(stats(&s) == HSA_STATUS_SUCCESS, "dispatch statistics");
  return s.dispatches;
}
