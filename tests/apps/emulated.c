/* Code-object kernels (tests/apps/emulated.hip) run on vhsa's emulator, with no native kernel.
 *
 *   emulated inc    <passes> <code object>   x[i] += 1 replayed: every pass sees the original
 *                   input, memory ends as after one execution
 *   emulated devvar <passes> <code object>   a __device__ counter is restored between passes
 *   emulated faults <code object>            an out-of-bounds store, __builtin_trap() and an
 *                   unknown instruction each end their dispatch with a queue error (printed as
 *                   "APP fault kernel=<name> status=<hex>"); a later dispatch still runs
 *   emulated abandon <code object>           a kernel spinning on a flag nothing sets; its queue
 *                   is destroyed meanwhile: the destroy returns, no queue error is reported
 *   emulated sqtt   <code object>            `traced(x, 200)` over 256 work-items in groups of 64
 *                   (built with the SQTT plugin); checks x, prints "APP records=<n> base=<x>"
 *                   with the shader-data record count read through vhsa_dispatch_shader_data
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <time.h>
#include <unistd.h>

#define N 64

static uint64_t kernel_object(hsa_executable_t exe, hsa_agent_t agent, const char* name) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &agent, &sym));
  uint64_t kobj = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  EXPECT(kobj != 0, "%s has no kernel object", name);
  return kobj;
}

/* One x[i] += 1 dispatch; checks what each of `passes` executions saw and the final memory. */
static void run_inc(system_t* s, hsa_executable_t exe, int passes) {
  uint64_t kobj = kernel_object(exe, s->gpu[0], "inc.kd");
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* stats = pool_alloc(s->fine_pool, 4 * 80);
  for (uint32_t i = 0; i < N; i++) x[i] = i;
  memset(stats, 0, 4 * 80);
  void* ptrs[3] = {x, stats, (void*)(uintptr_t)N};
  void* ka = kernargs(s, ptrs, 3);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  EXPECT(stats[0] == (uint32_t)passes * N, "inc ran %u work-items, expected %d passes of %d", stats[0], passes, N);
  for (int p = 0; p < passes; p++) EXPECT(stats[1 + p] == 0, "pass %d: %u work-items did not see the original input", p, stats[1 + p]);
  for (uint32_t i = 0; i < N; i++) EXPECT(x[i] == i + 1, "x[%u] = %u after the replay, expected %u", i, x[i], i + 1);
  usleep(20000);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal value %ld, expected 0 (fired once)",
         (long)hsa_signal_load_scacquire(done));
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

static void run_devvar(system_t* s, hsa_executable_t exe, int passes) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "counter", &s->gpu[0], &sym));
  uint64_t addr = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &addr));
  uint32_t zero = 0;
  CHECK(hsa_memory_copy((void*)(uintptr_t)addr, &zero, sizeof zero));
  uint64_t kobj = kernel_object(exe, s->gpu[0], "bump.kd");
  uint32_t* seen = pool_alloc(s->fine_pool, 4 * 80);
  memset(seen, 0xff, 4 * 80);
  seen[0] = 0;
  void* ptrs[1] = {seen};
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, kernargs(s, ptrs, 1), 1, done);
  wait_done(done);
  EXPECT(seen[0] == (uint32_t)passes, "bump ran %u times, expected %d", seen[0], passes);
  for (int p = 0; p < passes; p++) EXPECT(seen[1 + p] == 0, "pass %d saw counter=%u, expected 0", p, seen[1 + p]);
  uint32_t final = 99;
  CHECK(hsa_memory_copy(&final, (void*)(uintptr_t)addr, sizeof final));
  EXPECT(final == 1, "counter is %u after the replay, expected 1", final);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

static volatile hsa_status_t g_queue_error;

static void on_queue_error(hsa_status_t status, hsa_queue_t* q, void* data) {
  (void)q;
  (void)data;
  g_queue_error = status;
}

static void run_faults(system_t* s, hsa_executable_t exe) {
  const char* kernels[3] = {"oob_store", "trap", "unknown_op"};
  uint32_t* target = pool_alloc(s->device_pool[0], 64);
  for (int k = 0; k < 3; k++) {
    char name[64];
    snprintf(name, sizeof name, "%s.kd", kernels[k]);
    uint64_t kobj = kernel_object(exe, s->gpu[0], name);
    /* The out-of-bounds store goes to address 0x100: memory no allocation covers. */
    void* ptrs[1] = {k == 0 ? (void*)(uintptr_t)0x100 : (void*)target};
    hsa_queue_t* q = NULL;
    CHECK(hsa_queue_create(s->gpu[0], 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &q));
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    g_queue_error = HSA_STATUS_SUCCESS;
    /* One work-item: with several work-groups, the others may store before the fault stops
     * them (as on a GPU), and `target` would not stay untouched. */
    dispatch(q, kobj, kernargs(s, ptrs, 1), 1, done);
    for (int i = 0; i < 6000 && g_queue_error == HSA_STATUS_SUCCESS; i++) usleep(10000);
    EXPECT(g_queue_error != HSA_STATUS_SUCCESS, "%s: no queue error within 60 s", kernels[k]);
    EXPECT(hsa_signal_load_scacquire(done) == 1, "%s: a faulted dispatch completed its signal", kernels[k]);
    printf("APP fault kernel=%s status=%#x\n", kernels[k], (unsigned)g_queue_error);
    fflush(stdout);
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_signal_destroy(done));
  }
  EXPECT(target[0] == 0, "a faulting kernel stored past its fault (%u)", target[0]);
  /* The process and the runtime keep running: a good kernel still works. */
  run_inc(s, exe, 1);
}

static void run_abandon(system_t* s, hsa_executable_t exe) {
  uint64_t kobj = kernel_object(exe, s->gpu[0], "spin.kd");
  uint32_t* flag = pool_alloc(s->device_pool[0], 64);
  flag[0] = 0;
  void* ptrs[1] = {flag};
  hsa_queue_t* q = NULL;
  CHECK(hsa_queue_create(s->gpu[0], 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  g_queue_error = HSA_STATUS_SUCCESS;
  dispatch(q, kobj, kernargs(s, ptrs, 1), 64, done);
  usleep(200000);
  EXPECT(hsa_signal_load_scacquire(done) == 1, "the spinning kernel completed");
  CHECK(hsa_queue_destroy(q));
  EXPECT(g_queue_error == HSA_STATUS_SUCCESS, "destroying the queue reported a queue error %#x", (unsigned)g_queue_error);
  EXPECT(hsa_signal_load_scacquire(done) == 1, "an abandoned dispatch completed its signal");
  CHECK(hsa_signal_destroy(done));
  run_inc(s, exe, 1);
}

/* Like `dispatch`, with work-groups of `wg` work-items. */
static void dispatch_groups(hsa_queue_t* q, uint64_t kobj, void* kernarg, uint32_t n, uint16_t wg, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(kobj, kernarg, n, wg, done);
  aql_submit(q, &p);
}

static void run_sqtt(system_t* s, hsa_executable_t exe) {
  const int n = 200;
  uint64_t kobj = kernel_object(exe, s->gpu[0], "traced.kd");
  int* x = pool_alloc(s->device_pool[0], n * sizeof(int));
  for (int i = 0; i < n; i++) x[i] = i;
  void* ptrs[2] = {x, (void*)(uintptr_t)n};
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch_groups(q, kobj, kernargs(s, ptrs, 2), 256, 64, done);
  wait_done(done);
  for (int i = 0; i < n; i++) EXPECT(x[i] == i + 3, "x[%d] = %d, expected %d", i, x[i], i + 3);
  size_t count = 0;
  CHECK(vhsa_dispatch_shader_data(done.handle, NULL, 0, &count));
  EXPECT(count > 0, "the dispatch has no shader-data records");
  vhsa_shader_data_record_t* recs = calloc(count, sizeof *recs);
  size_t again = 0;
  CHECK(vhsa_dispatch_shader_data(done.handle, recs, count, &again));
  EXPECT(again == count, "record count changed: %zu then %zu", count, again);
  for (size_t i = 1; i < count; i++) EXPECT(recs[i - 1].time <= recs[i].time, "records out of time order at %zu", i);
  free(recs);
  size_t none = 0;
  EXPECT(vhsa_dispatch_shader_data(done.handle + 1, NULL, 0, &none) == HSA_STATUS_ERROR_INVALID_SIGNAL,
         "records for a signal no dispatch completed");
  printf("APP records=%zu base=%llu\n", count, (unsigned long long)(uintptr_t)x);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 3, "usage: emulated inc|devvar <passes> <code object> | emulated faults|abandon|sqtt <code object>");
  system_t s;
  system_init(&s);
  const char* mode = argv[1];
  if (strcmp(mode, "faults") == 0) {
    run_faults(&s, load_code_object(&s, argv[2]));
  } else if (strcmp(mode, "abandon") == 0) {
    run_abandon(&s, load_code_object(&s, argv[2]));
  } else if (strcmp(mode, "sqtt") == 0) {
    run_sqtt(&s, load_code_object(&s, argv[2]));
  } else {
    EXPECT(argc >= 4, "%s needs <passes> <code object>", mode);
    hsa_executable_t exe = load_code_object(&s, argv[3]);
    if (strcmp(mode, "inc") == 0) run_inc(&s, exe, atoi(argv[2]));
    else if (strcmp(mode, "devvar") == 0) run_devvar(&s, exe, atoi(argv[2]));
    else EXPECT(0, "unknown mode %s", mode);
  }
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
