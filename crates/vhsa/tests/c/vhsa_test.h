/* Helpers shared by the C test programs of vhsa. */
#ifndef VHSA_TEST_H
#define VHSA_TEST_H

#include <hsa/hsa.h>
#include <sched.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Writes one AQL packet (64 bytes, header last) at the next write index and rings the doorbell. */
static inline uint64_t test_submit(hsa_queue_t* q, const void* packet) {
  uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
  while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size) {
    sched_yield();
  }
  uint8_t* slot = (uint8_t*)q->base_address + (idx % q->size) * 64;
  memcpy(slot + 4, (const uint8_t*)packet + 4, 60);
  uint32_t word;
  memcpy(&word, packet, 4);
  __atomic_store_n((uint32_t*)slot, word, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
  return idx;
}

static inline uint16_t test_header(hsa_packet_type_t type, int barrier) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

static inline hsa_kernel_dispatch_packet_t test_dispatch(uint64_t kernel_object, void* kernarg, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = test_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0);
  p.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p.workgroup_size_x = 64;
  p.workgroup_size_y = 1;
  p.workgroup_size_z = 1;
  p.grid_size_x = 256;
  p.grid_size_y = 1;
  p.grid_size_z = 1;
  p.kernel_object = kernel_object;
  p.kernarg_address = kernarg;
  p.completion_signal = done;
  return p;
}

#endif
