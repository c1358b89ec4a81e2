/* An example HSA application for the command-line tests: on every GPU agent it creates a
 * queue and dispatches the native kernel `add_one` (x[i] += 1, in place) DISPATCHES times, then
 * checks that each buffer was incremented exactly DISPATCHES times. Exit 0 when right, 1 when
 * wrong, 2 when the runtime is unusable. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aql_submit.h"
#include "vhsa.h"

#define N 1024
#define DISPATCHES 3
#define MAX_GPUS 8

#define CHECK(call)                                                              \
  do {                                                                           \
    hsa_status_t s_ = (call);                                                    \
    if (s_ != HSA_STATUS_SUCCESS) {                                              \
      fprintf(stderr, "two_gpus: %s failed with status 0x%x\n", #call, s_);      \
      exit(2);                                                                   \
    }                                                                            \
  } while (0)

typedef struct {
  uint32_t *x;
} add_args_t;

static void add_one(const hsa_kernel_dispatch_packet_t *packet, void *user_data) {
  (void)user_data;
  const add_args_t *args = (const add_args_t *)packet->kernarg_address;
  for (uint32_t i = 0; i < packet->grid_size_x; i++) args->x[i] += 1;
}

typedef struct {
  hsa_agent_t gpus[MAX_GPUS];
  int gpu_count;
} agents_t;

static hsa_status_t find_gpus(hsa_agent_t agent, void *data) {
  agents_t *a = data;
  hsa_device_type_t type;
  CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_GPU && a->gpu_count < MAX_GPUS) a->gpus[a->gpu_count++] = agent;
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  uint32_t want;
  hsa_amd_memory_pool_t pool;
  int found;
} pool_query_t;

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void *data) {
  pool_query_t *q = data;
  hsa_amd_segment_t segment;
  uint32_t flags = 0;
  bool alloc = false;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
  if (!q->found && segment == HSA_AMD_SEGMENT_GLOBAL && alloc && (flags & q->want)) {
    q->pool = pool;
    q->found = 1;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_kernarg_pool(hsa_agent_t agent, void *data) {
  hsa_amd_agent_iterate_memory_pools(agent, find_pool, data);
  return HSA_STATUS_SUCCESS;
}

static void dispatch(hsa_queue_t *queue, uint64_t kernel, void *kernarg, hsa_signal_t done) {
  hsa_signal_store_relaxed(done, 1);
  hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(kernel, kernarg, N, 64, done);
  p.header = aql_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  aql_submit(queue, &p);
  while (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 1000000000u, HSA_WAIT_STATE_BLOCKED) != 0) {
  }
}

int main(void) {
  uint64_t kernel = vhsa_native_kernel_create("add_one", add_one, NULL);
  if (kernel == 0) return 2;
  CHECK(hsa_init());
  agents_t agents = {.gpu_count = 0};
  CHECK(hsa_iterate_agents(find_gpus, &agents));
  pool_query_t kernarg_query = {.want = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, .found = 0};
  CHECK(hsa_iterate_agents(find_kernarg_pool, &kernarg_query));
  if (agents.gpu_count == 0 || !kernarg_query.found) return 2;
  int wrong = 0;
  for (int g = 0; g < agents.gpu_count; g++) {
    pool_query_t q = {.want = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, .found = 0};
    CHECK(hsa_amd_agent_iterate_memory_pools(agents.gpus[g], find_pool, &q));
    if (!q.found) return 2;
    uint32_t *x = NULL;
    add_args_t *args = NULL;
    CHECK(hsa_amd_memory_pool_allocate(q.pool, N * sizeof(uint32_t), 0, (void **)&x));
    CHECK(hsa_amd_memory_pool_allocate(kernarg_query.pool, sizeof(add_args_t), 0, (void **)&args));
    uint32_t host[N];
    for (uint32_t i = 0; i < N; i++) host[i] = i * 10;
    CHECK(hsa_memory_copy(x, host, sizeof(host)));
    args->x = x;
    hsa_queue_t *queue = NULL;
    CHECK(hsa_queue_create(agents.gpus[g], 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    for (int d = 0; d < DISPATCHES; d++) dispatch(queue, kernel, args, done);
    CHECK(hsa_memory_copy(host, x, sizeof(host)));
    for (uint32_t i = 0; i < N; i++) {
      if (host[i] != i * 10 + DISPATCHES) {
        printf("two_gpus: gpu %d x[%u] = %u, expected %u\n", g, i, host[i], i * 10 + DISPATCHES);
        wrong = 1;
        break;
      }
    }
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(queue));
    CHECK(hsa_amd_memory_pool_free(args));
    CHECK(hsa_amd_memory_pool_free(x));
  }
  printf("two_gpus: %d gpus, %s\n", agents.gpu_count, wrong ? "WRONG" : "verified");
  CHECK(hsa_shut_down());
  return wrong;
}
