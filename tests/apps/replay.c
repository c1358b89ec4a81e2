/* One replayed dispatch, checked from inside the application.
 *
 *   replay basic   <passes>        x[i] += 1 replayed; the fine-grained buffer is restored too, while
 *                                  untracked buffers (executable pool, plain malloc) show every pass
 *   replay decline copy|symbols    a fault declines replay: one execution
 *   replay devvar  <passes> <code object> [fail-info]   a __device__ variable is restored between
 *                  passes; with fail-info, variable queries fail (fault) and replay is declined
 *   replay free    <passes>        a buffer the test tool frees between passes
 *   replay profile <passes>        a replayed kernel (`slow`) and a kernel run once (`once`), each
 *                  sleeping 50 ms; prints the dispatch times read from each application
 *                  completion signal with hsa_amd_profiling_get_dispatch_time
 *   replay big     <passes>        like basic with a 1 GiB tracked buffer; with KREPLAY_TEST_RLIMIT_AS
 *                  set, the address-space limit is set to the process's size plus that many
 *                  MiB before the buffer is allocated
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <sys/resource.h>
#include <unistd.h>

#define N 64
#define MAX_PASSES 64

static int invocations;
static int saw_original[MAX_PASSES];
static int barrier_bit[MAX_PASSES]; /* the barrier bit of each execution's dispatch packet */
static int devvar_seen[MAX_PASSES];

/* kernarg: [0] x (device, tracked), [1] fine-grained, [2] executable pool memory,
 *          [3] host malloc memory, [4] a counter in the kernarg buffer itself */
static void inc_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  uint32_t* x = (uint32_t*)(uintptr_t)k[0];
  uint32_t* fine = (uint32_t*)(uintptr_t)k[1];
  uint32_t* exe = (uint32_t*)(uintptr_t)k[2];
  uint32_t* host = (uint32_t*)(uintptr_t)k[3];
  int ok = 1;
  for (uint32_t i = 0; i < p->grid_size_x; i++) {
    if (x[i] != i) ok = 0;
    x[i] += 1;
    fine[i] += 1;
    exe[i] += 1;
    host[i] += 1;
  }
  k[4] += 1;
  if (invocations < MAX_PASSES) {
    saw_original[invocations] = ok;
    barrier_bit[invocations] = (p->header >> HSA_PACKET_HEADER_BARRIER) & 1;
  }
  invocations++;
}

/* kernarg: [0] address of the __device__ variable `counter` */
static void bump_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  int* counter = (int*)(uintptr_t)k[0];
  if (invocations < MAX_PASSES) devvar_seen[invocations] = *counter;
  *counter += 1;
  invocations++;
}

static void run_devvar(system_t* s, int passes, const char* path, int fail_info) {
  hsa_executable_t exe = load_code_object(s, path);
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "counter", &s->gpu[0], &sym));
  uint64_t addr = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &addr));
  EXPECT(addr != 0, "counter has no address");
  int zero = 0;
  CHECK(hsa_memory_copy((void*)(uintptr_t)addr, &zero, sizeof zero));
  uint64_t kobj = vhsa_native_kernel_create("bump", bump_kernel, NULL);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* ptrs[1] = {(void*)(uintptr_t)addr};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  if (fail_info) vhsa_fault_fail_symbol_info(true);
  dispatch(q, kobj, ka, 1, done);
  wait_done(done);
  vhsa_fault_fail_symbol_info(false);
  EXPECT(invocations == passes, "bump ran %d times, expected %d", invocations, passes);
  for (int i = 0; i < passes; i++) EXPECT(devvar_seen[i] == 0, "pass %d saw counter=%d, expected 0", i, devvar_seen[i]);
  int final = -1;
  CHECK(hsa_memory_copy(&final, (void*)(uintptr_t)addr, sizeof final));
  EXPECT(final == 1, "counter is %d after the replay, expected 1", final);
  usleep(20000);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal value %ld, expected 0",
         (long)hsa_signal_load_scacquire(done));
  CHECK(hsa_queue_destroy(q));
}

static void sleepy_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  usleep(50000);
  invocations++;
}

static void run_profile(system_t* s, int passes) {
  const char* names[2] = {"slow", "once"};
  hsa_queue_t* q = queue_create(s->gpu[0]);
  for (int k = 0; k < 2; k++) {
    uint64_t kobj = vhsa_native_kernel_create(names[k], sleepy_kernel, NULL);
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    int before = invocations;
    dispatch(q, kobj, kernargs(s, NULL, 0), 1, done);
    wait_done(done);
    int expected = k == 0 ? passes : 1;
    EXPECT(invocations - before == expected, "%s ran %d times, expected %d", names[k], invocations - before, expected);
    hsa_amd_profiling_dispatch_time_t t;
    CHECK(hsa_amd_profiling_get_dispatch_time(s->gpu[0], done, &t));
    uint64_t start = 0, end = 0;
    CHECK(hsa_amd_profiling_convert_tick_to_system_domain(s->gpu[0], t.start, &start));
    CHECK(hsa_amd_profiling_convert_tick_to_system_domain(s->gpu[0], t.end, &end));
    printf("APP time kernel=%s start=%llu end=%llu\n", names[k], (unsigned long long)start, (unsigned long long)end);
    CHECK(hsa_signal_destroy(done));
  }
  CHECK(hsa_queue_destroy(q));
}

static void limit_address_space(void) {
  const char* extra = getenv("KREPLAY_TEST_RLIMIT_AS");
  if (!extra) return;
  FILE* f = fopen("/proc/self/status", "r");
  EXPECT(f, "cannot read /proc/self/status");
  char line[256];
  unsigned long long vm_kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %llu kB", &vm_kb) == 1) break;
  fclose(f);
  struct rlimit r;
  r.rlim_cur = r.rlim_max = (rlim_t)(vm_kb * 1024 + strtoull(extra, NULL, 10) * 1024 * 1024);
  EXPECT(setrlimit(RLIMIT_AS, &r) == 0, "setrlimit(RLIMIT_AS) failed");
}

int main(int argc, char** argv) {
  EXPECT(argc >= 3, "usage: replay basic|decline|devvar|free <arg> [code object]");
  const char* mode = argv[1];
  system_t s;
  system_init(&s);
  if (strcmp(mode, "devvar") == 0) {
    EXPECT(argc >= 4, "devvar needs a code object");
    run_devvar(&s, atoi(argv[2]), argv[3], argc >= 5 && strcmp(argv[4], "fail-info") == 0);
    CHECK(hsa_shut_down());
    printf("APP OK\n");
    return 0;
  }
  if (strcmp(mode, "profile") == 0) {
    run_profile(&s, atoi(argv[2]));
    CHECK(hsa_shut_down());
    printf("APP OK\n");
    return 0;
  }
  int expected = strcmp(mode, "decline") == 0 ? 1 : atoi(argv[2]);
  if (strcmp(mode, "big") == 0) {
    limit_address_space();
    size_t big = (size_t)1 << 30;
    uint8_t* footprint = pool_alloc(s.device_pool[0], big);
    memset(footprint, 1, big); /* resident: the footprint counts against the limits */
  }
  uint64_t kobj = vhsa_native_kernel_create("inc", inc_kernel, NULL);
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  uint32_t* x = pool_alloc(s.device_pool[0], N * 4);
  uint32_t* fine = pool_alloc(s.fine_pool, N * 4);
  uint32_t* exe = NULL;
  CHECK(hsa_amd_memory_pool_allocate(s.device_pool[0], N * 4, 1u << 2 /* EXECUTABLE */, (void**)&exe));
  uint32_t* host = calloc(N, 4);
  for (uint32_t i = 0; i < N; i++) {
    x[i] = i;
    fine[i] = exe[i] = host[i] = 0;
  }
  /* A second tracked buffer that the test tool may free between passes ("free" mode). */
  uint32_t* victim = pool_alloc(s.device_pool[0], 4096);
  void* ptrs[6] = {x, fine, exe, host, NULL, victim};
  void* ka = kernargs(&s, ptrs, 6);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  if (strcmp(mode, "decline") == 0) {
    if (strcmp(argv[2], "copy") == 0) vhsa_fault_fail_copies(0, 1);
    else vhsa_fault_fail_symbol_iteration(true);
  }
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  vhsa_fault_fail_copies(0, 0);
  vhsa_fault_fail_symbol_iteration(false);
  EXPECT(invocations == expected, "inc ran %d times, expected %d", invocations, expected);
  for (int i = 0; i < expected && i < MAX_PASSES; i++) EXPECT(saw_original[i], "pass %d did not see the original input", i);
  printf("APP barrier_bits=");
  for (int i = 0; i < invocations && i < MAX_PASSES; i++) printf("%d", barrier_bit[i]);
  printf("\n");
  for (uint32_t i = 0; i < N; i++) {
    EXPECT(x[i] == i + 1, "x[%u] = %u after the replay, expected %u", i, x[i], i + 1);
    EXPECT(fine[i] == 1, "fine-grained memory reached through the kernel arguments was not restored (%u)", fine[i]);
    EXPECT(exe[i] == (uint32_t)expected, "executable memory was restored (%u)", exe[i]);
    EXPECT(host[i] == (uint32_t)expected, "host memory was restored (%u)", host[i]);
  }
  EXPECT(((uint64_t*)ka)[4] == (uint64_t)expected, "kernarg memory was restored");
  usleep(20000);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal value %ld, expected 0 (fired once)",
         (long)hsa_signal_load_scacquire(done));
  free(host);
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
