/* Device count and hipGetDeviceProperties against what the HSA runtime reports for the agent. */
#include "hip_test.h"
#include <hsa/hsa_ext_amd.h>

struct gpus {
  hsa_agent_t list[8];
  int n;
};

static hsa_status_t collect_gpu(hsa_agent_t a, void* data) {
  struct gpus* g = (struct gpus*)data;
  hsa_device_type_t t;
  hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
  if (t == HSA_DEVICE_TYPE_GPU && g->n < 8) g->list[g->n++] = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t group_pool_size(hsa_amd_memory_pool_t pool, void* data) {
  hsa_amd_segment_t seg;
  hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
  if (seg == HSA_AMD_SEGMENT_GROUP) hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, (size_t*)data);
  return HSA_STATUS_SUCCESS;
}

int main() {
  int count = 0;
  CHECK_HIP(hipGetDeviceCount(&count));
  /* HIP initialised HSA; these calls see the same runtime. */
  CHECK(hsa_init() == HSA_STATUS_SUCCESS);
  struct gpus g = {};
  CHECK(hsa_iterate_agents(collect_gpu, &g) == HSA_STATUS_SUCCESS);
  CHECK(count == g.n, "hipGetDeviceCount %d, HSA GPU agents %d", count, g.n);
  CHECK(count >= 1);
  for (int d = 0; d < count; d++) {
    hipDeviceProp_t p;
    CHECK_HIP(hipGetDeviceProperties(&p, d));
    hsa_agent_t a = g.list[d];
    char product[64] = {0}, isa_name[64] = {0}, name[64] = {0};
    uint32_t cus = 0, clock_mhz = 0, wave = 0, max_wg = 0;
    size_t group = 0;
    hsa_isa_t isa;
    CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, &clock_mhz) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &max_wg) == HSA_STATUS_SUCCESS);
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_ISA, &isa) == HSA_STATUS_SUCCESS);
    CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, isa_name) == HSA_STATUS_SUCCESS);
    CHECK(hsa_amd_agent_iterate_memory_pools(a, group_pool_size, &group) == HSA_STATUS_SUCCESS);

    CHECK(strcmp(p.name, product) == 0, "name '%s', product '%s'", p.name, product);
    /* gcnArchName is the ISA name without its "amdgcn-amd-amdhsa--" prefix. */
    const char* target = strstr(isa_name, "--");
    CHECK(target && strcmp(p.gcnArchName, target + 2) == 0, "gcnArchName '%s', ISA '%s'", p.gcnArchName, isa_name);
    CHECK(strncmp(p.gcnArchName, name, strlen(name)) == 0, "gcnArchName '%s', agent '%s'", p.gcnArchName, name);
    CHECK(p.multiProcessorCount == (int)cus, "multiProcessorCount %d, CUs %u", p.multiProcessorCount, cus);
    CHECK(p.clockRate == (int)clock_mhz * 1000, "clockRate %d kHz, %u MHz", p.clockRate, clock_mhz);
    CHECK(p.warpSize == (int)wave, "warpSize %d, wavefront %u", p.warpSize, wave);
    CHECK(p.maxThreadsPerBlock == (int)max_wg, "maxThreadsPerBlock %d, %u", p.maxThreadsPerBlock, max_wg);
    CHECK(p.sharedMemPerBlock == group && group == 64 * 1024, "sharedMemPerBlock %zu, GROUP pool %zu",
          (size_t)p.sharedMemPerBlock, group);
    CHECK(p.totalGlobalMem > 0);
    CHECK(p.major == 9 && p.minor == 0, "compute capability %d.%d", p.major, p.minor);
    size_t free_b = 0, total_b = 0;
    CHECK_HIP(hipSetDevice(d));
    CHECK_HIP(hipMemGetInfo(&free_b, &total_b));
    CHECK(total_b == p.totalGlobalMem && free_b <= total_b, "free %zu total %zu global %zu", free_b, total_b,
          (size_t)p.totalGlobalMem);
    printf("device %d: %s %s, %d CUs\n", d, p.name, p.gcnArchName, p.multiProcessorCount);
  }
  CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
  printf("PASS\n");
  return 0;
}
