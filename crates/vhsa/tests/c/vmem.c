/* The hsa_amd_vmem_* entries: argument checks, statuses, shared bytes between mappings of one
   handle, pointer information of mapped memory, access, retain and release. */
#include "vhsa_test.h"
#include "vmem_api.h"

#define MIB (1u << 20)

int main(void) {
  void* va = NULL;
  CHECK_STATUS(hsa_amd_vmem_address_reserve(&va, MIB, 0, 0), HSA_STATUS_ERROR_NOT_INITIALIZED);
  CHECK_OK(hsa_init());
  test_agents_t t = test_agents();
  hsa_agent_t gpu = t.gpus[0];
  hsa_amd_memory_pool_t dev = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

  /* reserve */
  CHECK_STATUS(hsa_amd_vmem_address_reserve(NULL, MIB, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_address_reserve(&va, 0, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_address_reserve(&va, 100, 0, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_address_reserve(&va, MIB, 0, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_address_reserve_align(&va, MIB, 0, 3 * 4096, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(va == NULL); /* out-parameter untouched on failure */
  CHECK_OK(hsa_amd_vmem_address_reserve_align(&va, 4 * MIB, 0, 2 * MIB, 0));
  CHECK(va != NULL && ((uintptr_t)va % (2 * MIB)) == 0);

  /* handle create */
  vmem_handle_t h = {0}, none = {0};
  hsa_amd_memory_pool_t bad_pool = {0x12345};
  CHECK_STATUS(hsa_amd_vmem_handle_create(dev, MIB, 0, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_handle_create(dev, 0, 0, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_handle_create(dev, 1000, 0, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_handle_create(dev, MIB, 7, 0, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_handle_create(dev, MIB, 0, 1, &h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_handle_create(bad_pool, MIB, 0, 0, &h), HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  CHECK(h.handle == 0);
  CHECK_OK(hsa_amd_vmem_handle_create(dev, 2 * MIB, 0, 0, &h));
  CHECK(h.handle != 0);
  hsa_amd_memory_pool_t got_pool = {0};
  int got_type = -1;
  CHECK_OK(hsa_amd_vmem_get_alloc_properties_from_handle(h, &got_pool, &got_type));
  CHECK(got_pool.handle == dev.handle && got_type == 0);
  CHECK_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(none, &got_pool, &got_type),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* map */
  char* base = (char*)va;
  CHECK_STATUS(hsa_amd_vmem_map(NULL, MIB, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_map(base, MIB, 0, none, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_map(base, 3 * MIB, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* > handle */
  CHECK_STATUS(hsa_amd_vmem_map(base, MIB, 2 * MIB, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_map(base + 3 * MIB, 2 * MIB, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* leaves reservation */
  int local;
  CHECK_STATUS(hsa_amd_vmem_map(&local, 4096, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* not reserved */
  CHECK_OK(hsa_amd_vmem_map(base, MIB, 0, h, 0));
  CHECK_STATUS(hsa_amd_vmem_map(base + MIB / 2, MIB, 0, h, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* overlap */
  /* the second half of the handle is mapped after a gap; its first byte aliases offset 1 MiB */
  CHECK_OK(hsa_amd_vmem_map(base + 2 * MIB, MIB, MIB, h, 0));
  CHECK_OK(hsa_amd_vmem_map(base + 3 * MIB, MIB, 0, h, 0)); /* same bytes as base */
  base[5] = 42;
  CHECK(base[3 * MIB + 5] == 42);
  base[2 * MIB] = 7;
  CHECK(base[3 * MIB] == 0 && base[0] == 0); /* offset 1 MiB is not offset 0 */

  /* pointer information: device memory of the pool's agent */
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_OK(hsa_amd_pointer_info(base + 100, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA);
  CHECK(info.agentOwner.handle == gpu.handle);
  CHECK(info.agentBaseAddress == base && info.sizeInBytes == MIB);
  /* mapped memory is not pool memory */
  CHECK_STATUS(hsa_amd_memory_pool_free(base), HSA_STATUS_ERROR_INVALID_ALLOCATION);

  /* copies reach it */
  static char src[4096];
  memset(src, 9, sizeof src);
  CHECK_OK(hsa_memory_copy(base + 2 * MIB, src, sizeof src));
  CHECK(base[2 * MIB + 4095] == 9);

  /* access */
  hsa_access_permission_t perm = HSA_ACCESS_PERMISSION_RW;
  CHECK_OK(hsa_amd_vmem_get_access(base, &perm, gpu));
  CHECK(perm == (hsa_access_permission_t)0);
  vmem_access_desc_t desc[2] = {{HSA_ACCESS_PERMISSION_RW, gpu}, {HSA_ACCESS_PERMISSION_RO, t.cpu}};
  vmem_access_desc_t bad_perm = {(hsa_access_permission_t)9, gpu};
  vmem_access_desc_t bad_agent = {HSA_ACCESS_PERMISSION_RW, {0x999}};
  CHECK_STATUS(hsa_amd_vmem_set_access(base, MIB, NULL, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_set_access(base, MIB, desc, 0), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_set_access(base, MIB, &bad_perm, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_set_access(base, MIB, &bad_agent, 1), HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_STATUS(hsa_amd_vmem_set_access(base + MIB, MIB, desc, 2), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* gap */
  CHECK_OK(hsa_amd_vmem_set_access(base, MIB, desc, 2));
  CHECK_OK(hsa_amd_vmem_get_access(base + 4096, &perm, gpu));
  CHECK(perm == HSA_ACCESS_PERMISSION_RW);
  CHECK_OK(hsa_amd_vmem_get_access(base, &perm, t.cpu));
  CHECK(perm == HSA_ACCESS_PERMISSION_RO);
  CHECK_STATUS(hsa_amd_vmem_get_access(base + MIB, &perm, gpu), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_get_access(base, NULL, gpu), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_get_access(base, &perm, (hsa_agent_t){0x999}), HSA_STATUS_ERROR_INVALID_AGENT);

  /* retain: one more reference to the handle mapped at an address */
  vmem_handle_t r = {0};
  CHECK_STATUS(hsa_amd_vmem_retain_alloc_handle(&r, &local), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_vmem_retain_alloc_handle(&r, base + 17));
  CHECK(r.handle == h.handle);

  /* free refuses a reservation with mappings, and wrong sizes */
  CHECK_STATUS(hsa_amd_vmem_address_free(va, 4 * MIB), HSA_STATUS_ERROR_RESOURCE_FREE);
  CHECK_STATUS(hsa_amd_vmem_address_free(va, MIB), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_address_free(base + 4096, 4096), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* unmap: exactly a mapped range */
  CHECK_STATUS(hsa_amd_vmem_unmap(base, MIB / 2), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_vmem_unmap(base + MIB, MIB), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_vmem_unmap(base, MIB));
  CHECK_STATUS(hsa_amd_vmem_unmap(base, MIB), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_pointer_info(base + 100, &info, NULL, NULL, NULL), HSA_STATUS_SUCCESS);
  CHECK(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);

  /* releases: the creator's and the retained reference; the bytes live while mapped */
  CHECK_OK(hsa_amd_vmem_handle_release(h));
  CHECK_OK(hsa_amd_vmem_handle_release(r));
  CHECK_STATUS(hsa_amd_vmem_handle_release(h), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(base[3 * MIB + 5] == 42);
  CHECK_OK(hsa_amd_vmem_unmap(base + 2 * MIB, MIB));
  CHECK_OK(hsa_amd_vmem_unmap(base + 3 * MIB, MIB));
  CHECK_STATUS(hsa_amd_vmem_get_alloc_properties_from_handle(h, &got_pool, &got_type),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_vmem_address_free(va, 4 * MIB));
  CHECK_STATUS(hsa_amd_vmem_address_free(va, 4 * MIB), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
