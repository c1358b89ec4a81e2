/* The counter tests' application: code-object kernels (tests/apps/counters.hip) on the virtual
 * runtime's emulator.
 *
 *   counters scale <code object> <n> <wg> [fine]   one `scale` dispatch over n work-items in
 *                  work-groups of wg; with `fine` its buffer is fine-grained memory (a replay that
 *                  reaches it can be declined with KREPLAY_HOST_MEMORY=decline)
 *   counters busy  <code object> <n> <wg>          the same dispatch while another thread keeps
 *                  dispatching `busy` over 4096 work-items on a second queue of the agent;
 *                  prints "APP busy_dispatches=<k>"
 *   counters twice <code object> <n> <wg>          the `scale` dispatch in two runtime instances
 *                  (hsa_shut_down and hsa_init between them)
 *
 * Checks x after the dispatch (one execution). Prints "APP OK" on success; exits nonzero with
 * "APP FAIL" otherwise. */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

static uint64_t kernel_object(hsa_executable_t exe, hsa_agent_t agent, const char* name) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &agent, &sym));
  uint64_t kobj = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  EXPECT(kobj != 0, "%s has no kernel object", name);
  return kobj;
}

struct background {
  system_t* s;
  uint64_t kobj;
  volatile int stop;
  volatile int runs;
};

#define BUSY_N 4096

static void* keep_busy(void* arg) {
  struct background* b = (struct background*)arg;
  uint32_t* y = pool_alloc(b->s->device_pool[0], BUSY_N * 4);
  memset(y, 0, BUSY_N * 4);
  void* ptrs[2] = {y, (void*)(uintptr_t)BUSY_N};
  void* ka = kernargs(b->s, ptrs, 2);
  hsa_queue_t* q = queue_create(b->s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  while (!b->stop || b->runs < 2) {
    hsa_signal_store_screlease(done, 1);
    hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(b->kobj, ka, BUSY_N, 64, done);
    aql_submit(q, &p);
    wait_done(done);
    __atomic_add_fetch(&b->runs, 1, __ATOMIC_SEQ_CST);
  }
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
  return NULL;
}

/* One `scale` dispatch over n work-items in work-groups of wg, checked after it ran once. */
static void run_scale(system_t* s, hsa_executable_t exe, uint32_t n, uint16_t wg, int fine) {
  uint32_t* x = pool_alloc(fine ? s->fine_pool : s->device_pool[0], n * 4);
  for (uint32_t i = 0; i < n; i++) x[i] = i;
  void* ptrs[2] = {x, (void*)(uintptr_t)n};
  void* ka = kernargs(s, ptrs, 2);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  if (wg == 1) {
    dispatch(q, kernel_object(exe, s->gpu[0], "scale.kd"), ka, n, done);
  } else {
    hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(kernel_object(exe, s->gpu[0], "scale.kd"), ka, n, wg, done);
    aql_submit(q, &p);
  }
  wait_done(done);
  for (uint32_t i = 0; i < n; i++) EXPECT(x[i] == i * 3u + 1u, "x[%u] = %u, expected %u", i, x[i], i * 3u + 1u);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 5, "usage: counters scale|busy|twice <code object> <n> <wg> [fine]");
  const char* mode = argv[1];
  uint32_t n = (uint32_t)strtoul(argv[3], NULL, 10);
  uint16_t wg = (uint16_t)strtoul(argv[4], NULL, 10);
  int fine = argc >= 6 && strcmp(argv[5], "fine") == 0;
  system_t s;
  system_init(&s);
  hsa_executable_t exe = load_code_object(&s, argv[2]);
  struct background b = {&s, kernel_object(exe, s.gpu[0], "busy.kd"), 0, 0};
  pthread_t t;
  if (strcmp(mode, "busy") == 0) {
    EXPECT(pthread_create(&t, NULL, keep_busy, &b) == 0, "pthread_create");
    while (__atomic_load_n(&b.runs, __ATOMIC_SEQ_CST) < 1) usleep(1000);
  }
  run_scale(&s, exe, n, wg, fine);
  if (strcmp(mode, "busy") == 0) {
    b.stop = 1;
    pthread_join(t, NULL);
    printf("APP busy_dispatches=%d\n", b.runs);
  }
  CHECK(hsa_shut_down());
  if (strcmp(mode, "twice") == 0) {
    system_init(&s);
    run_scale(&s, load_code_object(&s, argv[2]), n, wg, fine);
    CHECK(hsa_shut_down());
  }
  printf("APP OK\n");
  return 0;
}
