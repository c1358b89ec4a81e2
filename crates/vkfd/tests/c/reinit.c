/* The real runtime on vkfd across hsa_shut_down and hsa_init: three cycles in one process, each
 * filling device memory with the runtime's own blit kernel (hsa_amd_memory_fill), copying it
 * back (hsa_memory_copy, another blit kernel) and checking every word, with a queue created and
 * destroyed. Prints PASS. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    hsa_status_t st_ = (call);                                                        \
    if (st_ != HSA_STATUS_SUCCESS) {                                                  \
      fprintf(stderr, "FAIL: %s returned %#x (line %d)\n", #call, st_, __LINE__);   \
      exit(2);                                                                        \
    }                                                                                 \
  } while (0)

typedef struct {
  hsa_agent_t gpu, cpu;
  hsa_amd_memory_pool_t device, host;
} found_t;

static hsa_status_t pick_pool(hsa_amd_memory_pool_t p, void* data) {
  hsa_amd_memory_pool_t* out = (hsa_amd_memory_pool_t*)data;
  uint32_t flags = 0;
  hsa_amd_segment_t seg;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (out->handle == 0 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) *out = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t pick_fine(hsa_amd_memory_pool_t p, void* data) {
  hsa_amd_memory_pool_t* out = (hsa_amd_memory_pool_t*)data;
  uint32_t flags = 0;
  hsa_amd_segment_t seg;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (out->handle == 0 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) &&
      !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT))
    *out = p;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t pick_agent(hsa_agent_t a, void* data) {
  found_t* f = (found_t*)data;
  hsa_device_type_t t;
  CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_GPU && f->gpu.handle == 0) f->gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU && f->cpu.handle == 0) f->cpu = a;
  return HSA_STATUS_SUCCESS;
}

static void cycle(int n) {
  CHECK(hsa_init());
  found_t f = {0};
  CHECK(hsa_iterate_agents(pick_agent, &f));
  if (f.gpu.handle == 0 || f.cpu.handle == 0) {
    fprintf(stderr, "FAIL: no GPU or CPU agent\n");
    exit(2);
  }
  CHECK(hsa_amd_agent_iterate_memory_pools(f.gpu, pick_pool, &f.device));
  CHECK(hsa_amd_agent_iterate_memory_pools(f.cpu, pick_fine, &f.host));
  const size_t words = (1 << 20) / 4;
  uint32_t *dev = NULL, *host = NULL;
  CHECK(hsa_amd_memory_pool_allocate(f.device, words * 4, 0, (void**)&dev));
  CHECK(hsa_amd_memory_pool_allocate(f.host, words * 4, 0, (void**)&host));
  hsa_agent_t both[2] = {f.gpu, f.cpu};
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, host));
  const uint32_t value = 0xA5A50000u + (uint32_t)n;
  CHECK(hsa_amd_memory_fill(dev, value, words));
  CHECK(hsa_memory_copy(host, dev, words * 4));
  for (size_t i = 0; i < words; i++) {
    if (host[i] != value) {
      fprintf(stderr, "FAIL: cycle %d word %zu is %#x, not %#x\n", n, i, host[i], value);
      exit(3);
    }
  }
  hsa_queue_t* q = NULL;
  CHECK(hsa_queue_create(f.gpu, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_amd_memory_pool_free(dev));
  CHECK(hsa_amd_memory_pool_free(host));
  CHECK(hsa_shut_down());
  printf("cycle %d ok\n", n);
}

int main(void) {
  for (int n = 0; n < 3; n++) cycle(n);
  printf("PASS\n");
  return 0;
}
