/* A device-pool allocation the host cannot back now is refused with OUT_OF_RESOURCES (the pool
 * itself is made far larger than the host with VHSA_DEVICE_MEMORY_MB), so the caller can fall
 * back instead of being killed when the pages are touched; one that fits still succeeds. */
#include "vhsa_test.h"

/* MemAvailable of /proc/meminfo, in bytes. */
static uint64_t mem_available(void) {
  FILE* f = fopen("/proc/meminfo", "r");
  CHECK(f != NULL);
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  }
  fclose(f);
  CHECK(kb > 0);
  return (uint64_t)kb << 10;
}

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  hsa_amd_memory_pool_t pool = test_pool(ag.gpus[0], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  size_t pool_size = 0;
  CHECK_OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &pool_size));

  /* Nearly all the available memory: within the pool, but it would leave too little free. */
  size_t too_much = (size_t)(mem_available() - (128ull << 20));
  CHECK(too_much < pool_size);
  void* p = NULL;
  CHECK_STATUS(hsa_amd_memory_pool_allocate(pool, too_much, 0, &p), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK(p == NULL);

  /* A size the host can back (64 MiB, the smallest one checked) is still allocated and used. */
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 64ull << 20, 0, &p));
  memset(p, 0x5a, 64ull << 20);
  CHECK_OK(hsa_amd_memory_pool_free(p));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
