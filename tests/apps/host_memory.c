/* An in-place kernel on host and fine-grained memory, checked by the application itself.
 *
 *   host_memory fine    <passes>   x[i] = 3*x[i] + 1 on fine-grained system-pool memory
 *   host_memory region  <passes>   the same on memory from hsa_memory_allocate on the CPU agent's
 *                                  fine-grained (non-kernarg) region
 *   host_memory locked  <passes>   the same on malloc'd memory locked with hsa_amd_memory_lock
 *   host_memory device-fine <passes> the same on the GPU's fine-grained device pool
 *   host_memory struct  <passes>   the output pointer inside a struct passed by value
 *   host_memory chain   <passes>   the kernel argument points to a fine-grained table holding the
 *                                  data pointer
 *   host_memory writer  <passes>   a host thread writes the last element of the same buffer while
 *                                  the first pass runs (the kernel leaves that element alone)
 *   host_memory copy    <passes>   a kernel named as HIP's buffer copy writes x[i] = 3*i + 1 into
 *                                  page-aligned locked memory without reading it, but for the
 *                                  last element, which a host thread writes while the first pass
 *                                  runs; every later execution checks that write is still there
 *   host_memory nested  <passes>   like locked, on a page locked again inside a larger locked
 *                                  buffer (HIP 5.2 leaves such pairs); a host thread writes the
 *                                  larger buffer's first page while the first pass runs
 *   host_memory hidden  <passes>   the data pointer is stored in device memory (the tool cannot
 *                                  see it); prints "APPLIED <n>" instead of checking
 *   host_memory unchecked <passes> like fine, but prints "APPLIED <n>" (how many times the
 *                                  transform was applied to x[5]) instead of checking
 *   host_memory ipc     <passes>   the same on device memory exported with
 *                                  hsa_amd_ipc_memory_create and imported again with
 *                                  hsa_amd_ipc_memory_attach (the kernel writes the import; the
 *                                  check reads the exporter's address too)
 *   host_memory interop <passes>   the same on a memfd mapped with hsa_amd_interop_map_buffer
 *   host_memory ipc-unchecked, interop-unchecked <passes>
 *                                  like ipc and interop, printing "APPLIED <n>" instead of checking
 *
 * <passes> is what the tool is told; the application's check does not depend on it: memory must
 * end as after one execution. Prints "APP OK" on success, "APP FAIL" otherwise. */
#define _GNU_SOURCE /* memfd_create */
#include "common.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#define N 1024
#define MAGIC 0xC0FFEEu
/* The larger buffer of mode nested; the inner lock lies at its middle, 64 KiB chunks away from
 * the first page. */
#define NESTED_BYTES (512u << 10)

typedef struct {
  uint32_t n;
  uint32_t pad;
  uint32_t* out;
  uint64_t tag;
} by_value_t;

static int invocations;
static int saw_original = 1;
static volatile int writer_go, writer_done;

/* Native kernels run on the host: an agent address of locked memory is not a host address. */
static void* host_address(uint64_t agent_address) {
  return vhsa_host_address((const void*)(uintptr_t)agent_address);
}

static void transform(uint32_t* x, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (x[i] != i) saw_original = 0;
    x[i] = 3 * x[i] + 1;
  }
}

/* kernarg: [0] data pointer */
static void in_place(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  transform(host_address(k[0]), p->grid_size_x);
  invocations++;
}

/* kernarg: by_value_t */
static void through_struct(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  const by_value_t* a = (const by_value_t*)p->kernarg_address;
  transform(host_address((uintptr_t)a->out), a->n);
  invocations++;
}

/* kernarg: [0] pointer to a table whose element 1 is the data pointer */
static void through_table(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  uint64_t* table = host_address(k[0]);
  transform(host_address(table[1]), p->grid_size_x);
  invocations++;
}

/* Asks the host writer thread to write, and waits until it did. */
static void let_the_writer_write(void) {
  __atomic_store_n(&writer_go, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE)) usleep(100);
}

/* kernarg: [0] data pointer, [1] how many elements to transform; during the first execution a
 * host thread writes an element the kernel leaves alone, and the kernel waits until it did. */
static void with_writer(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  transform(host_address(k[0]), (uint32_t)k[1]);
  if (invocations == 0) {
    let_the_writer_write();
  }
  invocations++;
}

/* kernarg: [0] data pointer, [1] its host address; writes every element but the last without
 * reading it. During the first execution a host thread writes the last element (the kernel
 * waits until it did); every later execution finds that write still there. */
static int writer_reverted;
static void copy_with_writer(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  uint32_t* x = host_address(k[0]);
  for (uint32_t i = 0; i + 1 < N; i++) x[i] = 3 * i + 1;
  if (invocations == 0) {
    let_the_writer_write();
  } else if (((volatile uint32_t*)(uintptr_t)k[1])[N - 1] != MAGIC) {
    writer_reverted = 1;
  }
  invocations++;
}

/* Writes MAGIC at arg (uint32_t) once the kernel asks. */
static void* host_writer(void* arg) {
  uint32_t* x = arg;
  while (!__atomic_load_n(&writer_go, __ATOMIC_ACQUIRE)) usleep(100);
  *x = MAGIC;
  __atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static hsa_status_t find_fine_region(hsa_region_t r, void* data) {
  hsa_region_segment_t seg;
  uint32_t flags = 0;
  CHECK(hsa_region_get_info(r, HSA_REGION_INFO_SEGMENT, &seg));
  CHECK(hsa_region_get_info(r, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
  if (seg == HSA_REGION_SEGMENT_GLOBAL && (flags & HSA_REGION_GLOBAL_FLAG_FINE_GRAINED) &&
      !(flags & HSA_REGION_GLOBAL_FLAG_KERNARG)) {
    *(hsa_region_t*)data = r;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_fine_device_pool(hsa_amd_memory_pool_t p, void* data) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) {
    *(hsa_amd_memory_pool_t*)data = p;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

int main(int argc, char** argv) {
  EXPECT(argc >= 3, "usage: host_memory <mode> <passes>");
  const char* mode = argv[1];
  system_t s;
  system_init(&s);
  uint32_t* x = NULL;
  void* locked_host = NULL;
  uint32_t* nested_outer = NULL;
  uint32_t* exported = NULL;
  int unchecked = strstr(mode, "unchecked") != NULL || strcmp(mode, "hidden") == 0;
  uint64_t kobj = 0;
  void* ka = kernargs(&s, NULL, 0);
  memset(ka, 0, 64);
  if (strcmp(mode, "locked") == 0 || strcmp(mode, "copy") == 0) {
    locked_host = aligned_alloc(4096, N * 4);
    CHECK(hsa_amd_memory_lock(locked_host, N * 4, &s.gpu[0], 1, (void**)&x));
    for (uint32_t i = 0; i < N; i++) ((uint32_t*)locked_host)[i] = i;
  } else if (strcmp(mode, "nested") == 0) {
    void* outer_agent = NULL;
    nested_outer = aligned_alloc(4096, NESTED_BYTES);
    EXPECT(nested_outer != NULL, "aligned_alloc");
    memset(nested_outer, 0, NESTED_BYTES);
    CHECK(hsa_amd_memory_lock(nested_outer, NESTED_BYTES, &s.gpu[0], 1, &outer_agent));
    locked_host = (char*)nested_outer + NESTED_BYTES / 2;
    CHECK(hsa_amd_memory_lock(locked_host, N * 4, &s.gpu[0], 1, (void**)&x));
    for (uint32_t i = 0; i < N; i++) ((uint32_t*)locked_host)[i] = i;
  } else if (strcmp(mode, "region") == 0) {
    hsa_region_t r = {0};
    hsa_agent_iterate_regions(s.cpu, find_fine_region, &r);
    EXPECT(r.handle != 0, "no fine-grained region");
    CHECK(hsa_memory_allocate(r, N * 4, (void**)&x));
  } else if (strcmp(mode, "device-fine") == 0) {
    hsa_amd_memory_pool_t p = {0};
    hsa_amd_agent_iterate_memory_pools(s.gpu[0], find_fine_device_pool, &p);
    EXPECT(p.handle != 0, "the GPU has no fine-grained pool");
    x = pool_alloc(p, N * 4);
  } else if (strncmp(mode, "ipc", 3) == 0) {
    exported = pool_alloc(s.device_pool[0], N * 4);
    hsa_amd_ipc_memory_t handle;
    CHECK(hsa_amd_ipc_memory_create(exported, N * 4, &handle));
    CHECK(hsa_amd_ipc_memory_attach(&handle, N * 4, 1, &s.gpu[0], (void**)&x));
    EXPECT(x != exported, "the import is the exporter's own address");
  } else if (strncmp(mode, "interop", 7) == 0) {
    int fd = memfd_create("interop-buffer", MFD_CLOEXEC);
    EXPECT(fd >= 0 && ftruncate(fd, N * 4) == 0, "memfd");
    size_t size = 0;
    CHECK(hsa_amd_interop_map_buffer(1, &s.gpu[0], fd, 0, &size, (void**)&x, NULL, NULL));
    EXPECT(size >= N * 4, "interop buffer of %zu bytes", size);
    close(fd);
  } else {
    x = pool_alloc(s.fine_pool, N * 4);
  }
  if (!locked_host)
    for (uint32_t i = 0; i < N; i++) x[i] = i;
  uint32_t n = N;
  pthread_t writer;
  if (strcmp(mode, "struct") == 0) {
    kobj = vhsa_native_kernel_create("through_struct", through_struct, NULL);
    by_value_t a = {N, 0, x, 42};
    memcpy(ka, &a, sizeof a);
  } else if (strcmp(mode, "chain") == 0) {
    kobj = vhsa_native_kernel_create("through_table", through_table, NULL);
    uint64_t* table = pool_alloc(s.fine_pool, 64);
    memset(table, 0, 64);
    table[1] = (uint64_t)(uintptr_t)x;
    ((uint64_t*)ka)[0] = (uint64_t)(uintptr_t)table;
  } else if (strcmp(mode, "hidden") == 0) {
    kobj = vhsa_native_kernel_create("through_table", through_table, NULL);
    uint64_t* table = pool_alloc(s.device_pool[0], 64);
    memset(table, 0, 64);
    table[1] = (uint64_t)(uintptr_t)x;
    ((uint64_t*)ka)[0] = (uint64_t)(uintptr_t)table;
  } else if (strcmp(mode, "copy") == 0) {
    kobj = vhsa_native_kernel_create("__amd_rocclr_copyBuffer", copy_with_writer, NULL);
    ((uint64_t*)ka)[0] = (uint64_t)(uintptr_t)x;
    ((uint64_t*)ka)[1] = (uint64_t)(uintptr_t)locked_host;
    EXPECT(pthread_create(&writer, NULL, host_writer, (uint32_t*)locked_host + N - 1) == 0, "pthread_create");
  } else if (strcmp(mode, "writer") == 0 || nested_outer) {
    kobj = vhsa_native_kernel_create("with_writer", with_writer, NULL);
    ((uint64_t*)ka)[0] = (uint64_t)(uintptr_t)x;
    ((uint64_t*)ka)[1] = nested_outer ? N : N - 1;
    uint32_t* target = nested_outer ? nested_outer : x + N - 1;
    EXPECT(pthread_create(&writer, NULL, host_writer, target) == 0, "pthread_create");
  } else {
    kobj = vhsa_native_kernel_create("in_place", in_place, NULL);
    ((uint64_t*)ka)[0] = (uint64_t)(uintptr_t)x;
  }
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, n, done);
  wait_done(done);
  uint32_t* seen = locked_host ? (uint32_t*)locked_host : x;
  if (unchecked) {
    uint32_t v = 5;
    int applied = 0;
    while (v < seen[5] && applied < 64) {
      v = 3 * v + 1;
      applied++;
    }
    printf("APPLIED %d\n", applied);
  } else {
    int writes_last = strcmp(mode, "writer") == 0 || strcmp(mode, "copy") == 0;
    uint32_t last = writes_last ? N - 1 : N;
    for (uint32_t i = 0; i < last; i++)
      EXPECT(seen[i] == 3 * i + 1, "x[%u] = %u, expected %u (ran %d times)", i, seen[i], 3 * i + 1, invocations);
    if (writes_last) {
      pthread_join(writer, NULL);
      EXPECT(seen[N - 1] == MAGIC, "the host thread's write was lost (%#x)", seen[N - 1]);
      EXPECT(!writer_reverted, "the host thread's write was reverted while the kernel ran again");
    }
    if (nested_outer) {
      pthread_join(writer, NULL);
      EXPECT(nested_outer[0] == MAGIC, "the host thread's write was lost (%#x)", nested_outer[0]);
    }
    EXPECT(saw_original, "a pass did not see the original input");
    if (exported)
      for (uint32_t i = 0; i < N; i++)
        EXPECT(exported[i] == 3 * i + 1, "exporter's x[%u] = %u: the import is not the same memory", i, exported[i]);
  }
  printf("RAN %d\n", invocations);
  if (nested_outer) {
    CHECK(hsa_amd_memory_unlock(locked_host));
    CHECK(hsa_amd_memory_unlock(nested_outer));
    free(nested_outer);
  } else if (locked_host) {
    CHECK(hsa_amd_memory_unlock(locked_host));
    free(locked_host);
  }
  if (exported) {
    CHECK(hsa_amd_ipc_memory_detach(x));
    CHECK(hsa_amd_memory_pool_free(exported));
  } else if (strncmp(mode, "interop", 7) == 0) {
    CHECK(hsa_amd_interop_unmap_buffer(x));
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
