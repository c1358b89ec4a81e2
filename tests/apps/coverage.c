/* What a replay's snapshot covers, checked from inside the application (linked with kreplay
 * for the range calls).
 *
 *   coverage peer    <passes>               (two GPU agents) a kernel on GPU 0 writes memory of
 *                                           GPU 1 it was given access to: restored between passes
 *   coverage hidden  <passes> <hidden.co>   static and anonymous-namespace __device__ variables
 *                                           (not symbols) are restored between passes
 *   coverage destroy <passes> <devvar.co> <alpha.co> <gamma.co>
 *                                           during pass 0 another thread destroys executable B
 *                                           (alpha) and loads C (gamma): no write of B's saved
 *                                           bytes lands anywhere, A's variable is still restored;
 *                                           with "-" for gamma.co, B is only destroyed
 *   coverage churn   <dispatches> <passes> <devvar.co> <alpha.co>
 *                                           another thread loads and destroys executables in a loop
 *                                           while replays run: no crash, every pass sees counter 0
 *   coverage names   <alpha.co> <gamma.co>  alpha dispatched, destroyed, gamma loaded and
 *                                           dispatched (the records name the kernels)
 *   coverage repeat  <dispatches> <passes> <hidden.co>
 *                                           the hidden.co kernel, also given a 1 MiB buffer,
 *                                           dispatched again and again, each replayed: prints the
 *                                           device-to-host bytes vhsa copied after the first
 *                                           dispatch and after the last
 *   coverage ranges  <passes>               an excluded tracked buffer is not restored, an included
 *                                           fine-grained buffer is; after removing both rules, the
 *                                           other way round
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

#include "kreplay.h"

#define N 16
#define MAX_PASSES 64

static int invocations;
static uint32_t seen[3][MAX_PASSES];

/* kernarg: up to three uint32_t pointers; records element 0 of each, increments every element
 * of the first (N elements) and element 0 of the others. */
static void record_and_bump(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  for (int j = 0; j < 3; j++) {
    uint32_t* b = (uint32_t*)(uintptr_t)k[j];
    if (!b) continue;
    if (invocations < MAX_PASSES) seen[j][invocations] = b[0];
    uint32_t n = j == 0 ? p->grid_size_x : 1;
    for (uint32_t i = 0; i < n; i++) b[i] += 1;
  }
  invocations++;
}

static void run_once(system_t* s, uint64_t kobj, void* a, void* b, void* c, uint32_t grid) {
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* ptrs[3] = {a, b, c};
  void* ka = kernargs(s, ptrs, 3);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, grid, done);
  wait_done(done);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

static uint64_t kernel_object(hsa_executable_t exe, hsa_agent_t agent, const char* name) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &agent, &sym));
  uint64_t kobj = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  return kobj;
}

static void* variable_address(hsa_executable_t exe, hsa_agent_t agent, const char* name) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &agent, &sym));
  uint64_t addr = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &addr));
  EXPECT(addr != 0, "%s has no address", name);
  return (void*)(uintptr_t)addr;
}

static uint32_t device_read(const void* p) {
  uint32_t v = 0;
  CHECK(hsa_memory_copy(&v, p, sizeof v));
  return v;
}

static void run_peer(system_t* s, int passes) {
  EXPECT(s->gpus >= 2, "peer needs two GPU agents (VHSA_AGENTS)");
  uint32_t* peer = pool_alloc(s->device_pool[1], N * 4);
  uint32_t* unshared = pool_alloc(s->device_pool[1], N * 4);
  CHECK(hsa_amd_agents_allow_access(1, &s->gpu[0], NULL, peer));
  for (uint32_t i = 0; i < N; i++) peer[i] = i, unshared[i] = 0;
  uint64_t kobj = vhsa_native_kernel_create("peer_bump", record_and_bump, NULL);
  run_once(s, kobj, peer, NULL, NULL, N);
  EXPECT(invocations == passes, "ran %d times, expected %d", invocations, passes);
  for (int i = 0; i < passes; i++) EXPECT(seen[0][i] == 0, "pass %d saw peer[0]=%u, expected 0", i, seen[0][i]);
  for (uint32_t i = 0; i < N; i++) EXPECT(peer[i] == i + 1, "peer[%u]=%u after the replay, expected %u", i, peer[i], i + 1);
}

static void run_hidden(system_t* s, int passes, const char* path) {
  hsa_executable_t exe = load_code_object(s, path);
  void* table = variable_address(exe, s->gpu[0], "hidden_ptrs");
  uint64_t ptrs[2];
  CHECK(hsa_memory_copy(ptrs, table, sizeof ptrs));
  EXPECT(ptrs[0] && ptrs[1], "hidden_ptrs was not relocated");
  vhsa_native_kernel_create("bump_hidden", record_and_bump, NULL);
  uint64_t kobj = kernel_object(exe, s->gpu[0], "bump_hidden.kd");
  run_once(s, kobj, (void*)(uintptr_t)ptrs[0], (void*)(uintptr_t)ptrs[1], NULL, 1);
  EXPECT(invocations == passes, "ran %d times, expected %d", invocations, passes);
  for (int i = 0; i < passes; i++) {
    EXPECT(seen[0][i] == 0, "pass %d saw the static variable at %u, expected 0", i, seen[0][i]);
    EXPECT(seen[1][i] == 0, "pass %d saw the anonymous-namespace variable at %u, expected 0", i, seen[1][i]);
  }
  EXPECT(device_read((void*)(uintptr_t)ptrs[0]) == 1 && device_read((void*)(uintptr_t)ptrs[1]) == 1,
         "the variables do not show one execution");
  CHECK(hsa_executable_destroy(exe));
}

static uint64_t device_to_host_bytes(void) {
  vhsa_stats_t st = {.size = sizeof st};
  CHECK(vhsa_stats(&st));
  return st.bytes_device_to_host;
}

static void run_repeat(system_t* s, int dispatches, int passes, const char* path) {
  hsa_executable_t exe = load_code_object(s, path);
  void* table = variable_address(exe, s->gpu[0], "hidden_ptrs");
  uint64_t ptrs[2];
  CHECK(hsa_memory_copy(ptrs, table, sizeof ptrs));
  vhsa_native_kernel_create("bump_hidden", record_and_bump, NULL);
  uint64_t kobj = kernel_object(exe, s->gpu[0], "bump_hidden.kd");
  /* A footprint much larger than what the kernel writes: every replay hashes its chunks. */
  void* large = pool_alloc(s->device_pool[0], 1 << 20);
  uint64_t after_first = 0;
  for (int d = 0; d < dispatches; d++) {
    run_once(s, kobj, (void*)(uintptr_t)ptrs[0], (void*)(uintptr_t)ptrs[1], large, 1);
    if (d == 0) after_first = device_to_host_bytes();
  }
  uint64_t after_last = device_to_host_bytes();
  EXPECT(invocations == dispatches * passes, "ran %d times, expected %d", invocations, dispatches * passes);
  printf("APP device_to_host after_first=%llu after_last=%llu\n", (unsigned long long)after_first,
         (unsigned long long)after_last);
  CHECK(hsa_amd_memory_pool_free(large));
  CHECK(hsa_executable_destroy(exe));
}

/* "destroy": the thread that destroys B and loads C while pass 0 runs. */
static struct {
  system_t* s;
  hsa_executable_t b;
  const char* c_path;
  hsa_executable_t c;
  int go, done;
} swap;

static void* swap_executables(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&swap.go, __ATOMIC_ACQUIRE)) usleep(100);
  CHECK(hsa_executable_destroy(swap.b));
  if (strcmp(swap.c_path, "-") != 0) swap.c = load_code_object(swap.s, swap.c_path);
  __atomic_store_n(&swap.done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void swap_during_first_pass(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  if (invocations == 0) {
    __atomic_store_n(&swap.go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 100000 && !__atomic_load_n(&swap.done, __ATOMIC_ACQUIRE); i++) usleep(100);
    EXPECT(__atomic_load_n(&swap.done, __ATOMIC_ACQUIRE), "the executables were not swapped within 10 s");
  }
  record_and_bump(p, user_data);
}

static void run_destroy(system_t* s, int passes, const char* a_path, const char* b_path, const char* c_path) {
  hsa_executable_t a = load_code_object(s, a_path);
  uint32_t* counter = variable_address(a, s->gpu[0], "counter");
  uint32_t zero = 0;
  CHECK(hsa_memory_copy(counter, &zero, sizeof zero));
  swap.s = s;
  swap.b = load_code_object(s, b_path);
  swap.c_path = c_path;
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, swap_executables, NULL) == 0, "pthread_create");
  uint64_t kobj = vhsa_native_kernel_create("swap_bump", swap_during_first_pass, NULL);
  run_once(s, kobj, counter, NULL, NULL, 1);
  pthread_join(t, NULL);
  EXPECT(invocations == passes, "ran %d times, expected %d", invocations, passes);
  for (int i = 0; i < passes; i++) EXPECT(seen[0][i] == 0, "pass %d saw counter=%u, expected 0", i, seen[0][i]);
  EXPECT(device_read(counter) == 1, "counter is %u after the replay, expected 1", device_read(counter));
  if (strcmp(c_path, "-") == 0) return;
  uint32_t* gamma_var = variable_address(swap.c, s->gpu[0], "gamma_var");
  fprintf(stderr, "APP gamma_var at %p\n", (void*)gamma_var);
  EXPECT(device_read(gamma_var) == 0x5a5a5a5a, "a restore wrote into the executable loaded during the replay (gamma_var=%#x)",
         device_read(gamma_var));
}

static struct {
  system_t* s;
  const char* path;
  int stop, cycles;
} churn;

static void* load_and_destroy(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&churn.stop, __ATOMIC_ACQUIRE)) {
    hsa_executable_t e = load_code_object(churn.s, churn.path);
    CHECK(hsa_executable_destroy(e));
    churn.cycles++;
  }
  return NULL;
}

static void run_churn(system_t* s, int dispatches, int passes, const char* a_path, const char* b_path) {
  hsa_executable_t a = load_code_object(s, a_path);
  uint32_t* counter = variable_address(a, s->gpu[0], "counter");
  uint64_t kobj = vhsa_native_kernel_create("churn_bump", record_and_bump, NULL);
  churn.s = s;
  churn.path = b_path;
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, load_and_destroy, NULL) == 0, "pthread_create");
  for (int d = 0; d < dispatches; d++) {
    uint32_t zero = 0;
    CHECK(hsa_memory_copy(counter, &zero, sizeof zero));
    invocations = 0;
    run_once(s, kobj, counter, NULL, NULL, 1);
    EXPECT(invocations == passes, "dispatch %d ran %d times, expected %d", d, invocations, passes);
    for (int i = 0; i < passes; i++) EXPECT(seen[0][i] == 0, "dispatch %d pass %d saw counter=%u", d, i, seen[0][i]);
    EXPECT(device_read(counter) == 1, "dispatch %d left counter=%u", d, device_read(counter));
  }
  __atomic_store_n(&churn.stop, 1, __ATOMIC_RELEASE);
  pthread_join(t, NULL);
  fprintf(stderr, "APP churn cycles=%d\n", churn.cycles);
  EXPECT(churn.cycles > 0, "no executable was loaded and destroyed meanwhile");
}

static void nop(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
}

static void run_names(system_t* s, const char* alpha_path, const char* gamma_path) {
  vhsa_native_kernel_create("alpha", nop, NULL);
  vhsa_native_kernel_create("gamma", nop, NULL);
  hsa_executable_t alpha = load_code_object(s, alpha_path);
  uint64_t first = kernel_object(alpha, s->gpu[0], "alpha.kd");
  run_once(s, first, NULL, NULL, NULL, 1);
  CHECK(hsa_executable_destroy(alpha));
  hsa_executable_t gamma = load_code_object(s, gamma_path);
  uint64_t second = kernel_object(gamma, s->gpu[0], "gamma.kd");
  fprintf(stderr, "APP kernel objects %s\n", first == second ? "reused" : "distinct");
  run_once(s, second, NULL, NULL, NULL, 1);
}

static void run_ranges(system_t* s, int passes) {
  uint32_t* excluded = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* tracked = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* included = pool_alloc(s->fine_pool, N * 4);
  memset(excluded, 0, N * 4);
  memset(tracked, 0, N * 4);
  memset(included, 0, N * 4);
  EXPECT(kreplay_snapshot_exclude_range(excluded, N * 4) == KREPLAY_STATUS_SUCCESS, "exclude");
  EXPECT(kreplay_snapshot_include_range(s->gpu[0].handle, included, N * 4) == KREPLAY_STATUS_SUCCESS, "include");
  EXPECT(kreplay_snapshot_exclude_range(NULL, 4) == KREPLAY_STATUS_INVALID_ARGUMENT, "NULL accepted");
  uint64_t kobj = vhsa_native_kernel_create("ranges_bump", record_and_bump, NULL);
  run_once(s, kobj, excluded, tracked, included, N);
  EXPECT(invocations == passes, "ran %d times, expected %d", invocations, passes);
  for (int i = 0; i < passes; i++) {
    EXPECT(seen[0][i] == (uint32_t)i, "pass %d saw the excluded buffer at %u: it was restored", i, seen[0][i]);
    EXPECT(seen[1][i] == 0, "pass %d saw the tracked buffer at %u, expected 0", i, seen[1][i]);
    EXPECT(seen[2][i] == 0, "pass %d saw the included buffer at %u: it was not restored", i, seen[2][i]);
  }
  EXPECT(tracked[0] == 1 && included[0] == 1, "one execution's results expected");
  /* Without the rules: the excluded buffer is tracked memory again, and the fine-grained one is
   * restored as host memory the kernel arguments point to. */
  EXPECT(kreplay_snapshot_remove_excluded_range(excluded, N * 4) == KREPLAY_STATUS_SUCCESS, "remove exclusion");
  EXPECT(kreplay_snapshot_remove_included_range(s->gpu[0].handle, included, N * 4) == KREPLAY_STATUS_SUCCESS,
         "remove inclusion");
  EXPECT(kreplay_snapshot_remove_excluded_range(excluded, N * 4) == KREPLAY_STATUS_INVALID_ARGUMENT, "removed twice");
  uint32_t before = excluded[0];
  invocations = 0;
  run_once(s, kobj, excluded, tracked, included, N);
  for (int i = 0; i < passes; i++) {
    EXPECT(seen[0][i] == before, "pass %d saw the formerly excluded buffer at %u, expected %u", i, seen[0][i], before);
    EXPECT(seen[2][i] == 1, "pass %d saw the formerly included (fine-grained) buffer at %u, expected 1", i, seen[2][i]);
  }
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: coverage peer|hidden|destroy|churn|names|ranges|repeat ...");
  const char* mode = argv[1];
  system_t s;
  system_init(&s);
  if (strcmp(mode, "peer") == 0 && argc >= 3) run_peer(&s, atoi(argv[2]));
  else if (strcmp(mode, "hidden") == 0 && argc >= 4) run_hidden(&s, atoi(argv[2]), argv[3]);
  else if (strcmp(mode, "destroy") == 0 && argc >= 6) run_destroy(&s, atoi(argv[2]), argv[3], argv[4], argv[5]);
  else if (strcmp(mode, "churn") == 0 && argc >= 6) run_churn(&s, atoi(argv[2]), atoi(argv[3]), argv[4], argv[5]);
  else if (strcmp(mode, "names") == 0 && argc >= 4) run_names(&s, argv[2], argv[3]);
  else if (strcmp(mode, "ranges") == 0 && argc >= 3) run_ranges(&s, atoi(argv[2]));
  else if (strcmp(mode, "repeat") == 0 && argc >= 5) run_repeat(&s, atoi(argv[2]), atoi(argv[3]), argv[4]);
  else EXPECT(0, "unknown mode or missing arguments: %s", mode);
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
