/* Helpers shared by the C test programs of vhsa. */
#ifndef VHSA_TEST_H
#define VHSA_TEST_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aql_submit.h"
#include "vhsa.h"

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#define CHECK_STATUS(call, expected)                                                       \
  do {                                                                                     \
    hsa_status_t s_ = (call);                                                              \
    if ((unsigned)s_ != (unsigned)(expected)) {                                            \
      fprintf(stderr, "%s:%d: %s returned 0x%x, expected 0x%x (%s)\n", __FILE__, __LINE__, \
              #call, (unsigned)s_, (unsigned)(expected), #expected);                        \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, HSA_STATUS_SUCCESS)

/* Generous bound for every wait: 120 s, reported with what was waited for. */
#define WAIT_BOUND_NS 120000000000ull

typedef struct {
  hsa_agent_t cpu;
  hsa_agent_t gpus[8];
  int gpu_count;
} test_agents_t;

static inline hsa_status_t test_collect_agent(hsa_agent_t agent, void* data) {
  test_agents_t* t = (test_agents_t*)data;
  hsa_device_type_t type;
  hsa_status_t s = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
  if (s != HSA_STATUS_SUCCESS) return s;
  if (type == HSA_DEVICE_TYPE_CPU) t->cpu = agent;
  else if (t->gpu_count < 8) t->gpus[t->gpu_count++] = agent;
  return HSA_STATUS_SUCCESS;
}

static inline test_agents_t test_agents(void) {
  test_agents_t t;
  memset(&t, 0, sizeof t);
  CHECK_OK(hsa_iterate_agents(test_collect_agent, &t));
  CHECK(t.cpu.handle != 0);
  CHECK(t.gpu_count >= 1);
  return t;
}

typedef struct {
  uint32_t want_flags;
  hsa_amd_memory_pool_t pool;
} test_pool_query_t;

static inline hsa_status_t test_find_pool(hsa_amd_memory_pool_t pool, void* data) {
  test_pool_query_t* q = (test_pool_query_t*)data;
  uint32_t flags = 0;
  hsa_status_t s = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (s != HSA_STATUS_SUCCESS) return s;
  if (flags == q->want_flags && q->pool.handle == 0) q->pool = pool;
  return HSA_STATUS_SUCCESS;
}

/* The first pool of `agent` whose global flags are exactly `flags`. */
static inline hsa_amd_memory_pool_t test_pool(hsa_agent_t agent, uint32_t flags) {
  test_pool_query_t q;
  memset(&q, 0, sizeof q);
  q.want_flags = flags;
  CHECK_OK(hsa_amd_agent_iterate_memory_pools(agent, test_find_pool, &q));
  CHECK(q.pool.handle != 0);
  return q.pool;
}

/* Waits until `signal` equals `value`; fails the test with `what` after the bound. */
static inline void test_wait_eq(hsa_signal_t signal, hsa_signal_value_t value, const char* what) {
  hsa_signal_value_t v = hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_EQ, value, WAIT_BOUND_NS,
                                                   HSA_WAIT_STATE_BLOCKED);
  if (v != value) {
    fprintf(stderr, "timed out waiting for %s (signal value %ld, expected %ld)\n", what, (long)v, (long)value);
    exit(1);
  }
}

/* The tests' usual dispatch: 256 work-items in work-groups of 64 (`aql_submit.h`). */
static inline hsa_kernel_dispatch_packet_t test_dispatch(uint64_t kernel_object, void* kernarg, hsa_signal_t done) {
  return aql_dispatch_packet(kernel_object, kernarg, 256, 64, done);
}

#endif
