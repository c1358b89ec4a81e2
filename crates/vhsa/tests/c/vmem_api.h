/* The virtual-memory entries of hsa_ext_amd.h, newer than the installed headers. */
#ifndef VMEM_API_H
#define VMEM_API_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stddef.h>
#include <stdint.h>

typedef struct { uint64_t handle; } vmem_handle_t;
typedef struct {
  hsa_access_permission_t permissions;
  hsa_agent_t agent_handle;
} vmem_access_desc_t;

hsa_status_t hsa_amd_vmem_address_reserve(void** va, size_t size, uint64_t address, uint64_t flags);
hsa_status_t hsa_amd_vmem_address_reserve_align(void** va, size_t size, uint64_t address, uint64_t alignment,
                                                uint64_t flags);
hsa_status_t hsa_amd_vmem_address_free(void* va, size_t size);
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size, int type, uint64_t flags,
                                        vmem_handle_t* handle);
hsa_status_t hsa_amd_vmem_handle_release(vmem_handle_t handle);
hsa_status_t hsa_amd_vmem_map(void* va, size_t size, size_t in_offset, vmem_handle_t handle, uint64_t flags);
hsa_status_t hsa_amd_vmem_unmap(void* va, size_t size);
hsa_status_t hsa_amd_vmem_set_access(void* va, size_t size, const vmem_access_desc_t* desc, size_t desc_cnt);
hsa_status_t hsa_amd_vmem_get_access(void* va, hsa_access_permission_t* perms, hsa_agent_t agent);
hsa_status_t hsa_amd_vmem_retain_alloc_handle(vmem_handle_t* handle, void* addr);
hsa_status_t hsa_amd_vmem_get_alloc_properties_from_handle(vmem_handle_t handle, hsa_amd_memory_pool_t* pool,
                                                           int* type);

#endif
