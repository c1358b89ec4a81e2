/* A replay client that registers through the C API after the application already ran work.
 * Linked with -lkreplay; kreplay itself is loaded by the runtime through HSA_TOOLS_LIB.
 *
 *   late alloc-after-dispatch <passes>  a dispatch with no client, then a buffer, then the
 *                                       client; the replayed kernel mutates the buffer
 *   late first-dispatch <passes>        inc runs once with no client, then the client registers
 *                                       and the next inc is replayed
 *   late idle-sibling <passes>          a sibling queue ran work before the client registered:
 *                                       replay declines until that queue submitted again
 *   late foreign <passes>               a queue from hsa_amd_queue_intercept_create: never
 *                                       replayed, and replays on its agent decline while it lives
 *   late builtin                        KREPLAY_PASSES took the service: the client is refused
 *   late none                           no client ever: results as without the tool
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include "kreplay.h"

/* Declared in hsa_api_trace.h, which is C++ only. */
typedef void (*packet_writer_t)(const void* pkts, uint64_t count);
typedef void (*intercept_handler_t)(const void* pkts, uint64_t count, uint64_t index, void* data, packet_writer_t writer);
hsa_status_t hsa_amd_queue_intercept_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                            void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                            uint32_t private_segment_size, uint32_t group_segment_size,
                                            hsa_queue_t** queue);
hsa_status_t hsa_amd_queue_intercept_register(hsa_queue_t* queue, intercept_handler_t handler, void* data);

#define N 64
#define MAX_RUNS 64

static uint32_t base;            /* what x[i] - i must be when a kernel run starts */
static int invocations;
static int saw_base[MAX_RUNS];
static uint32_t passes_wanted;
static int pass_exits, declines;

/* kernarg: [0] x (coarse-grained device memory) */
static void inc_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = (uint32_t*)(uintptr_t)((uint64_t*)p->kernarg_address)[0];
  int ok = 1;
  for (uint32_t i = 0; i < p->grid_size_x; i++) {
    if (x[i] != base + i) ok = 0;
    x[i] += 1;
  }
  if (invocations < MAX_RUNS) saw_base[invocations] = ok;
  invocations++;
}

static void noop_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
}

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)user_data;
  if (!d->kernel_name) return 1;
  return strcmp(d->kernel_name, "inc") == 0 || strcmp(d->kernel_name, "other") == 0 ? passes_wanted : 1;
}

static void on_event(const kreplay_event_t* e, void* user_data) {
  (void)user_data;
  if (e->kind == KREPLAY_EVENT_PASS_EXIT) pass_exits++;
  if (e->kind == KREPLAY_EVENT_CONFIG_EXIT && e->stats && e->stats->declined_reason) {
    declines++;
    printf("APP declined: %s\n", e->stats->declined_reason);
  }
}

static kreplay_status_t register_client(uint32_t passes) {
  static kreplay_callbacks_t cb;
  memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.pass_count = pass_count;
  cb.on_event = on_event;
  uint32_t previous = passes_wanted;
  passes_wanted = passes; /* before the call: the first dispatch may follow at once */
  kreplay_status_t st = kreplay_register(&cb);
  if (st != KREPLAY_STATUS_SUCCESS) passes_wanted = previous;
  return st;
}

typedef struct {
  system_t s;
  uint64_t inc, noop, other;
  uint32_t* x;
  void* ka;
  hsa_signal_t done;
} app_t;

static void alloc_x(app_t* a) {
  a->x = pool_alloc(a->s.device_pool[0], N * 4);
  for (uint32_t i = 0; i < N; i++) a->x[i] = i;
  void* ptrs[1] = {a->x};
  a->ka = kernargs(&a->s, ptrs, 1);
}

/* Runs `kernel` on `q` and waits; checks that it ran `runs` times and every run saw x = base + i. */
static void run(app_t* a, hsa_queue_t* q, uint64_t kernel, int runs) {
  int before = invocations;
  hsa_signal_store_relaxed(a->done, 1);
  dispatch(q, kernel, a->ka, kernel == a->inc ? N : 1, a->done);
  wait_done(a->done);
  if (kernel != a->inc) return;
  EXPECT(invocations - before == runs, "inc ran %d times, expected %d", invocations - before, runs);
  for (int i = before; i < invocations && i < MAX_RUNS; i++)
    EXPECT(saw_base[i], "run %d of inc did not see the original input (base %u)", i - before, base);
  for (uint32_t i = 0; i < N; i++) EXPECT(a->x[i] == base + i + 1, "x[%u] = %u, expected %u (one execution)", i, a->x[i], base + i + 1);
  base++;
  EXPECT(hsa_signal_load_scacquire(a->done) == 0, "completion signal %ld, expected 0 (fired once)",
         (long)hsa_signal_load_scacquire(a->done));
}

static void pass_through(const void* pkts, uint64_t count, uint64_t index, void* data,
                         packet_writer_t writer) {
  (void)index;
  (void)data;
  writer(pkts, count);
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: late <mode> [passes]");
  const char* mode = argv[1];
  int passes = argc >= 3 ? atoi(argv[2]) : 1;
  app_t a;
  memset(&a, 0, sizeof a);
  system_init(&a.s);
  a.inc = vhsa_native_kernel_create("inc", inc_kernel, NULL);
  a.noop = vhsa_native_kernel_create("noop", noop_kernel, NULL);
  a.other = vhsa_native_kernel_create("other", noop_kernel, NULL);
  CHECK(hsa_signal_create(1, 0, NULL, &a.done));
  hsa_queue_t* q = queue_create(a.s.gpu[0]);

  if (strcmp(mode, "alloc-after-dispatch") == 0) {
    run(&a, q, a.noop, 0);
    alloc_x(&a);
    kreplay_status_t st = register_client((uint32_t)passes);
    EXPECT(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
    run(&a, q, a.inc, passes);
    EXPECT(pass_exits == passes && declines == 0, "%d PASS EXIT events, %d declines", pass_exits, declines);
  } else if (strcmp(mode, "first-dispatch") == 0) {
    alloc_x(&a);
    run(&a, q, a.inc, 1);
    kreplay_status_t st = register_client((uint32_t)passes);
    EXPECT(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
    EXPECT(register_client(2) == KREPLAY_STATUS_ALREADY_CONFIGURED, "a second client was accepted");
    run(&a, q, a.inc, passes);
    run(&a, q, a.inc, passes);
    EXPECT(pass_exits == 2 * passes && declines == 0, "%d PASS EXIT events, %d declines", pass_exits, declines);
  } else if (strcmp(mode, "idle-sibling") == 0) {
    hsa_queue_t* sibling = queue_create(a.s.gpu[0]);
    alloc_x(&a);
    run(&a, sibling, a.inc, 1);
    EXPECT(register_client((uint32_t)passes) == KREPLAY_STATUS_SUCCESS, "kreplay_register");
    run(&a, q, a.inc, 1); /* declined: the sibling may still run untracked work */
    run(&a, q, a.inc, 1); /* again (the warning is not repeated) */
    EXPECT(declines == 2 && pass_exits == 0, "%d declines, %d PASS EXIT events", declines, pass_exits);
    run(&a, sibling, a.noop, 0); /* fences the sibling */
    run(&a, q, a.inc, passes);
    EXPECT(declines == 2 && pass_exits == passes, "%d declines, %d PASS EXIT events", declines, pass_exits);
    CHECK(hsa_queue_destroy(sibling));
  } else if (strcmp(mode, "idle-sibling-two-kernels") == 0) {
    hsa_queue_t* sibling = queue_create(a.s.gpu[0]);
    alloc_x(&a);
    run(&a, sibling, a.inc, 1);
    EXPECT(register_client((uint32_t)passes) == KREPLAY_STATUS_SUCCESS, "kreplay_register");
    run(&a, q, a.inc, 1);   /* declined, reported for inc */
    run(&a, q, a.inc, 1);   /* declined, not reported again for inc */
    run(&a, q, a.other, 0); /* declined, reported for other */
    run(&a, q, a.other, 0); /* declined, not reported again for other */
    EXPECT(declines == 4 && pass_exits == 0, "%d declines, %d PASS EXIT events", declines, pass_exits);
    CHECK(hsa_queue_destroy(sibling));
  } else if (strcmp(mode, "foreign") == 0) {
    alloc_x(&a);
    EXPECT(register_client((uint32_t)passes) == KREPLAY_STATUS_SUCCESS, "kreplay_register");
    hsa_queue_t* foreign = NULL;
    CHECK(hsa_amd_queue_intercept_create(a.s.gpu[0], 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &foreign));
    CHECK(hsa_amd_queue_intercept_register(foreign, pass_through, NULL));
    run(&a, foreign, a.inc, 1); /* not the tool's queue: never offered to the client */
    EXPECT(declines == 0 && pass_exits == 0, "the foreign queue's dispatch reached the client");
    run(&a, q, a.inc, 1); /* declined: the foreign queue is not drained */
    EXPECT(declines == 1 && pass_exits == 0, "%d declines, %d PASS EXIT events", declines, pass_exits);
    CHECK(hsa_queue_destroy(foreign));
    run(&a, q, a.inc, passes);
    EXPECT(declines == 1 && pass_exits == passes, "%d declines, %d PASS EXIT events", declines, pass_exits);
  } else if (strcmp(mode, "builtin") == 0) {
    run(&a, q, a.noop, 0);
    kreplay_status_t st = register_client(3);
    EXPECT(st == KREPLAY_STATUS_ALREADY_CONFIGURED, "kreplay_register after the built-in client took over: %s",
           kreplay_status_string(st));
  } else if (strcmp(mode, "none") == 0) {
    run(&a, q, a.noop, 0);
    alloc_x(&a);
    run(&a, q, a.inc, 1);
    uint32_t* spare = pool_alloc(a.s.device_pool[0], 4096);
    run(&a, q, a.inc, 1);
    CHECK(hsa_amd_memory_pool_free(spare));
  } else {
    EXPECT(0, "unknown mode %s", mode);
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
