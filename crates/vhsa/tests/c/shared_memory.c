/* Memory shared with other processes and APIs: an allocation exported with
   hsa_amd_ipc_memory_create is imported by this process and by a second one (the same bytes
   seen and written on every side), pointer information names each kind, detach and unmap
   release the mappings, and the argument checks return the runtime's statuses. An interop
   buffer (a memfd here) is mapped the same way. Prints PASS. */
#define _GNU_SOURCE
#include "vhsa_test.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096

static uint32_t pointer_type(void* p) {
  hsa_amd_pointer_info_t info = {0};
  info.size = sizeof info;
  CHECK_OK(hsa_amd_pointer_info(p, &info, NULL, NULL, NULL));
  return info.type;
}

/* The importing process: attach, check the exporter's pattern, write its own, detach. */
static int importer(int from_parent, int to_parent) {
  hsa_amd_ipc_memory_t handle;
  CHECK(read(from_parent, &handle, sizeof handle) == sizeof handle);
  CHECK_OK(hsa_init());
  test_agents_t t = test_agents();
  uint32_t* x = NULL;
  CHECK_OK(hsa_amd_ipc_memory_attach(&handle, N * 4, 1, &t.gpus[0], (void**)&x));
  CHECK(pointer_type(x) == HSA_EXT_POINTER_TYPE_IPC);
  for (uint32_t i = 0; i < N; i++) CHECK(x[i] == i);
  for (uint32_t i = 0; i < N; i++) x[i] = 7 * i;
  CHECK_OK(hsa_amd_ipc_memory_detach(x));
  CHECK_OK(hsa_shut_down());
  char done = 1;
  CHECK(write(to_parent, &done, 1) == 1);
  return 0;
}

static void ipc(test_agents_t t, hsa_amd_memory_pool_t dev) {
  uint32_t* a = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev, N * 4, 0, (void**)&a));
  for (uint32_t i = 0; i < N; i++) a[i] = i;
  hsa_amd_ipc_memory_t handle, untouched;
  memset(&untouched, 0xAB, sizeof untouched);
  CHECK_STATUS(hsa_amd_ipc_memory_create(NULL, N * 4, &handle), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_ipc_memory_create(a + 1, 4, &untouched), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_ipc_memory_create(a, 8 * N * 4, &untouched), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(((unsigned char*)&untouched)[0] == 0xAB); /* out-parameter untouched on failure */
  CHECK_OK(hsa_amd_ipc_memory_create(a, N * 4, &handle));
  CHECK(pointer_type(a) == HSA_EXT_POINTER_TYPE_HSA);
  for (uint32_t i = 0; i < N; i++) CHECK(a[i] == i); /* the move kept the bytes */

  /* in this process */
  uint32_t* b = NULL;
  CHECK_STATUS(hsa_amd_ipc_memory_attach(&untouched, N * 4, 1, &t.gpus[0], (void**)&b),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_ipc_memory_attach(&handle, 2 * N * 4 + 4096, 1, &t.gpus[0], (void**)&b),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(b == NULL);
  CHECK_OK(hsa_amd_ipc_memory_attach(&handle, N * 4, 1, &t.gpus[0], (void**)&b));
  CHECK(b != NULL && b != a);
  CHECK(pointer_type(b) == HSA_EXT_POINTER_TYPE_IPC);
  b[3] = 99;
  CHECK(a[3] == 99);
  a[3] = 3;
  CHECK_STATUS(hsa_amd_memory_pool_free(b), HSA_STATUS_ERROR_INVALID_ALLOCATION); /* detach, not free */
  CHECK_STATUS(hsa_amd_ipc_memory_detach(a), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_ipc_memory_detach(b));
  CHECK_STATUS(hsa_amd_ipc_memory_detach(b), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* in another process */
  int down[2], up[2];
  CHECK(pipe(down) == 0 && pipe(up) == 0);
  fflush(stdout);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) _exit(importer(down[0], up[1]));
  CHECK(write(down[1], &handle, sizeof handle) == sizeof handle);
  char done = 0;
  CHECK(read(up[0], &done, 1) == 1 && done == 1);
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (uint32_t i = 0; i < N; i++) CHECK(a[i] == 7 * i);

  CHECK_OK(hsa_amd_memory_pool_free(a));
  CHECK_STATUS(hsa_amd_ipc_memory_attach(&handle, N * 4, 1, &t.gpus[0], (void**)&b),
               HSA_STATUS_ERROR_INVALID_ARGUMENT); /* freed since */
}

static void interop(test_agents_t t) {
  int fd = memfd_create("interop", MFD_CLOEXEC);
  CHECK(fd >= 0 && ftruncate(fd, N * 4) == 0);
  uint32_t* host = mmap(NULL, N * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(host != MAP_FAILED);
  host[10] = 1234;
  size_t size = 0, meta_size = 99;
  const void* meta = &size;
  uint32_t* x = NULL;
  CHECK_STATUS(hsa_amd_interop_map_buffer(1, &t.gpus[0], -1, 0, &size, (void**)&x, NULL, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_interop_map_buffer(1, &t.gpus[0], fd, 1, &size, (void**)&x, NULL, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(x == NULL && size == 0);
  CHECK_OK(hsa_amd_interop_map_buffer(1, &t.gpus[0], fd, 0, &size, (void**)&x, &meta_size, &meta));
  CHECK(size == N * 4 && meta_size == 0 && meta == NULL);
  CHECK(pointer_type(x) == HSA_EXT_POINTER_TYPE_GRAPHICS);
  CHECK(x[10] == 1234);
  x[11] = 5678;
  CHECK(host[11] == 5678);
  CHECK_OK(hsa_amd_interop_unmap_buffer(x));
  CHECK_STATUS(hsa_amd_interop_unmap_buffer(x), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  munmap(host, N * 4);
  close(fd);
}

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t t = test_agents();
  hsa_amd_memory_pool_t dev = test_pool(t.gpus[0], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  ipc(t, dev);
  interop(t);
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
