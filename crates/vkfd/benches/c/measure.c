/* Measures one HSA runtime (the one LD_LIBRARY_PATH selects) for the side-by-side benchmark:
 *
 *   measure <code object with `empty`> <idle seconds>
 *
 * prints `name value` lines:
 *   latency_us       mean round trip of one empty-kernel dispatch (write, ring, wait), 300 times
 *   throughput       empty-kernel dispatches per second, batches of 64 rung once
 *   h2d_gbps         hsa_memory_copy of 64 MiB, host to device, GB/s
 *   d2h_gbps         the same, device to host
 *   idle_cpu_percent CPU time of the whole process over <idle seconds> with 4 queues open and no
 *                    work, in percent of one core */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    hsa_status_t st_ = (call);                                                      \
    if (st_ != HSA_STATUS_SUCCESS) {                                                \
      fprintf(stderr, "FAIL: %s returned %#x (line %d)\n", #call, st_, __LINE__); \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec * 1e-6;
}

typedef struct {
  hsa_agent_t gpu, cpu;
  hsa_amd_memory_pool_t device, host;
} sys_t;

static hsa_status_t on_agent(hsa_agent_t a, void* d) {
  sys_t* s = d;
  hsa_device_type_t t;
  CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_GPU && !s->gpu.handle) s->gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU && !s->cpu.handle) s->cpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_pool(hsa_amd_memory_pool_t p, void* d) {
  hsa_amd_memory_pool_t* out = d;
  hsa_amd_segment_t seg;
  uint32_t flags;
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (seg == HSA_AMD_SEGMENT_GLOBAL && !out->handle &&
      !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT))
    *out = p;
  return HSA_STATUS_SUCCESS;
}

static uint64_t load_kernel(sys_t* s, const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) exit(2);
  fclose(f);
  hsa_code_object_reader_t r;
  CHECK(hsa_code_object_reader_create_from_memory(buf, (size_t)n, &r));
  hsa_executable_t exe;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  CHECK(hsa_executable_load_agent_code_object(exe, s->gpu, r, NULL, NULL));
  CHECK(hsa_executable_freeze(exe, NULL));
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "empty.kd", &s->gpu, &sym));
  uint64_t kobj;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  return kobj;
}

static void submit(hsa_queue_t* q, uint64_t kobj, hsa_signal_t done, uint64_t count) {
  uint64_t first = hsa_queue_add_write_index_scacq_screl(q, count);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t idx = first + i;
    while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size) {
    }
    hsa_kernel_dispatch_packet_t* p =
        (hsa_kernel_dispatch_packet_t*)q->base_address + (idx % q->size);
    memset((char*)p + 4, 0, 60);
    p->setup = 1;
    p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = kobj;
    p->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
    __atomic_store_n(&p->header, header, __ATOMIC_RELEASE);
  }
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)(first + count - 1));
}

static void wait_zero(hsa_signal_t s) {
  while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: measure <code object> <idle seconds>\n");
    return 2;
  }
  CHECK(hsa_init());
  sys_t s = {0};
  CHECK(hsa_iterate_agents(on_agent, &s));
  CHECK(hsa_amd_agent_iterate_memory_pools(s.gpu, on_pool, &s.device));
  CHECK(hsa_amd_agent_iterate_memory_pools(s.cpu, on_pool, &s.host));
  uint64_t kobj = load_kernel(&s, argv[1]);
  hsa_queue_t* q;
  CHECK(hsa_queue_create(s.gpu, 4096, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));

  /* Warm-up (decode, first-use allocations). */
  for (int i = 0; i < 20; i++) {
    hsa_signal_store_relaxed(done, 1);
    submit(q, kobj, done, 1);
    wait_zero(done);
  }
  const int rounds = 300;
  double t0 = now_s();
  for (int i = 0; i < rounds; i++) {
    hsa_signal_store_relaxed(done, 1);
    submit(q, kobj, done, 1);
    wait_zero(done);
  }
  printf("latency_us %.1f\n", (now_s() - t0) / rounds * 1e6);

  const int batches = 40, batch = 64;
  t0 = now_s();
  for (int b = 0; b < batches; b++) {
    hsa_signal_store_relaxed(done, batch);
    submit(q, kobj, done, batch);
    wait_zero(done);
  }
  printf("throughput %.0f\n", batches * batch / (now_s() - t0));

  const size_t bytes = 64u << 20;
  void *dev, *host;
  CHECK(hsa_amd_memory_pool_allocate(s.device, bytes, 0, &dev));
  CHECK(hsa_amd_memory_pool_allocate(s.host, bytes, 0, &host));
  hsa_agent_t both[2] = {s.gpu, s.cpu};
  CHECK(hsa_amd_agents_allow_access(2, both, NULL, host));
  memset(host, 1, bytes);
  CHECK(hsa_memory_copy(dev, host, bytes)); /* warm-up */
  t0 = now_s();
  CHECK(hsa_memory_copy(dev, host, bytes));
  printf("h2d_gbps %.2f\n", (double)bytes / (now_s() - t0) / 1e9);
  t0 = now_s();
  CHECK(hsa_memory_copy(host, dev, bytes));
  printf("d2h_gbps %.2f\n", (double)bytes / (now_s() - t0) / 1e9);

  hsa_queue_t* more[3];
  for (int i = 0; i < 3; i++)
    CHECK(hsa_queue_create(s.gpu, 4096, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &more[i]));
  const double idle = atof(argv[2]);
  double c0 = cpu_s();
  t0 = now_s();
  while (now_s() - t0 < idle) usleep(100000);
  printf("idle_cpu_percent %.2f\n", (cpu_s() - c0) / (now_s() - t0) * 100.0);
  fflush(stdout);
  for (int i = 0; i < 3; i++) CHECK(hsa_queue_destroy(more[i]));
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_amd_memory_pool_free(dev));
  CHECK(hsa_amd_memory_pool_free(host));
  CHECK(hsa_shut_down());
  return 0;
}
