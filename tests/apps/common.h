/* Helpers shared by the test applications: agents, pools, queues, dispatches.
 * Every helper checks its HSA calls and exits with a message naming the failed call. */
#ifndef KREPLAY_TEST_COMMON_H
#define KREPLAY_TEST_COMMON_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aql_submit.h"
#include "vhsa.h"

#define CHECK(call)                                                                 \
  do {                                                                              \
    hsa_status_t st_ = (call);                                                      \
    if (st_ != HSA_STATUS_SUCCESS) {                                                \
      fprintf(stderr, "APP FAIL: %s returned %#x (line %d)\n", #call, st_, __LINE__); \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "APP FAIL (line %d): ", __LINE__);   \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      exit(3);                                             \
    }                                                      \
  } while (0)

#define MAX_GPUS 4

typedef struct {
  hsa_agent_t cpu;
  hsa_agent_t gpu[MAX_GPUS];
  int gpus;
  hsa_amd_memory_pool_t device_pool[MAX_GPUS]; /* coarse-grained, per GPU */
  hsa_amd_memory_pool_t fine_pool;             /* fine-grained system memory */
  hsa_amd_memory_pool_t kernarg_pool;
} system_t;

static hsa_status_t collect_agent(hsa_agent_t a, void* data) {
  system_t* s = (system_t*)data;
  hsa_device_type_t t;
  CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_CPU) s->cpu = a;
  if (t == HSA_DEVICE_TYPE_GPU && s->gpus < MAX_GPUS) s->gpu[s->gpus++] = a;
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  system_t* s;
  int gpu; /* -1 for the CPU agent */
} pool_walk_t;

static hsa_status_t collect_pool(hsa_amd_memory_pool_t p, void* data) {
  pool_walk_t* w = (pool_walk_t*)data;
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (w->gpu >= 0 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) w->s->device_pool[w->gpu] = p;
  if (w->gpu < 0 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) w->s->kernarg_pool = p;
  else if (w->gpu < 0 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)) w->s->fine_pool = p;
  return HSA_STATUS_SUCCESS;
}

static void system_init(system_t* s) {
  memset(s, 0, sizeof *s);
  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(collect_agent, s));
  EXPECT(s->gpus > 0, "no GPU agent");
  pool_walk_t w = {s, -1};
  CHECK(hsa_amd_agent_iterate_memory_pools(s->cpu, collect_pool, &w));
  for (int i = 0; i < s->gpus; i++) {
    w.gpu = i;
    CHECK(hsa_amd_agent_iterate_memory_pools(s->gpu[i], collect_pool, &w));
  }
  EXPECT(s->kernarg_pool.handle && s->fine_pool.handle && s->device_pool[0].handle, "pools not found");
}

static void* pool_alloc(hsa_amd_memory_pool_t pool, size_t size) {
  void* p = NULL;
  CHECK(hsa_amd_memory_pool_allocate(pool, size, 0, &p));
  return p;
}

static hsa_queue_t* queue_create(hsa_agent_t agent) {
  hsa_queue_t* q = NULL;
  CHECK(hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  return q;
}

/* Submits a kernel dispatch packet (1 work-item per element, grid `n`; `aql_submit.h`). */
static void dispatch(hsa_queue_t* q, uint64_t kernel_object, void* kernarg, uint32_t n, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(kernel_object, kernarg, n, 1, done);
  aql_submit(q, &p);
}

/* Waits until `s` reaches 0, then checks it is exactly 0 (fired exactly once). */
static void wait_done(hsa_signal_t s) {
  while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) >= 1) {
  }
}

/* A kernarg buffer holding `n` pointers. */
static void* kernargs(system_t* s, void* const* ptrs, int n) {
  void** k = (void**)pool_alloc(s->kernarg_pool, 64);
  for (int i = 0; i < n; i++) k[i] = ptrs[i];
  return k;
}

/* Loads the code object file at `path` into a new frozen executable for the first GPU. */
static inline hsa_executable_t load_code_object(system_t* s, const char* path) {
  FILE* f = fopen(path, "rb");
  EXPECT(f, "cannot open code object %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)len);
  EXPECT(fread(bytes, 1, (size_t)len, f) == (size_t)len, "short read of %s", path);
  fclose(f);
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_memory(bytes, (size_t)len, &reader));
  hsa_executable_t exe;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, s->gpu[0], reader, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  free(bytes);
  return exe;
}

#endif
