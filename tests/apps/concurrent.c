/* Replays beside other work, checked from inside the application.
 *
 *   concurrent siblings <rounds> <passes>  replays of `rec` on one queue while two threads keep
 *                                          dispatching `sib` on sibling queues of the same agent
 *   concurrent agents   <passes>           one replayed `slow` dispatch per GPU agent, in parallel
 *   concurrent batch [passes]              two-packet submissions (merged by an interceptor of
 *                                          the application): each dispatch runs `passes` times
 *   concurrent batchorder <passes>         three-packet submissions (dispatch, barrier, dispatch):
 *                                          dispatches replayed in order, the barrier run once
 *   concurrent slowsibling <passes>        a slow dispatch that is not replayed, on a sibling queue
 *                                          (without, then with, a completion signal), then a
 *                                          replayed one reading its output: every pass sees it
 *   concurrent stuck                       the replayed dispatch never completes (a vhsa fault)
 *   concurrent handlers <rounds> <passes> slow|blocked
 *                                          siblings, with every async-handler callback delayed
 *                                          (slow) or an application handler blocking the
 *                                          runtime's handler thread until the end (blocked); prints
 *                                          the replayed dispatches' submit-to-completion latency
 *   concurrent submitter <passes>          an application async handler, triggered by pass 0,
 *                                          submits a dispatch on the replaying agent
 *   concurrent crossqueue                  a sibling queue holds a barrier packet waiting for a
 *                                          signal set after the replayed dispatch, then a dispatch
 *   concurrent hostgate <runs>             earlier work on the replayed dispatch's queue waits for
 *                                          a host signal set after the dispatch was submitted; the
 *                                          dispatch must run <runs> times, each pass on the
 *                                          original input
 *   concurrent hostwrites <iterations>     a thread copies and fills a tracked buffer
 *                                          (hsa_memory_copy, hsa_amd_memory_fill,
 *                                          hsa_amd_memory_async_copy, and hsa_ext_image_import
 *                                          and _clear into an image over it) while replays run;
 *                                          no write is ever reverted (needs a gfx90a agent)
 *
 * Prints "APP OK" on success. */
#include "common.h"

#include <hsa/hsa_ext_image.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define N 256
#define SIB_DISPATCHES 150
#define MAX_LOG 4096

/* ---- siblings ---- */
static uint64_t rec_log[MAX_LOG];
static int rec_count;

static hsa_signal_t rec_trigger; /* "submitter": set to 0 by the first pass */
static int rec_sleep_us;

static void rec_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  if (rec_trigger.handle && rec_count == 0) hsa_signal_store_screlease(rec_trigger, 0);
  if (rec_sleep_us) usleep(rec_sleep_us);
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < N; i++) {
    sum += x[i];
    x[i] += 1;
  }
  if (rec_count < MAX_LOG) rec_log[rec_count] = sum;
  rec_count++;
}

static void sib_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* y = *(uint32_t**)p->kernarg_address;
  for (uint32_t i = 0; i < N; i++) y[i] += 1;
  usleep(200);
}

typedef struct {
  system_t* s;
  uint64_t kobj;
  uint32_t* y;
} sibling_t;

/* Set once the replayed rounds are over: siblings keep their queues until then. */
static volatile int rounds_over;

static void* sibling_thread(void* arg) {
  sibling_t* t = (sibling_t*)arg;
  hsa_queue_t* q = queue_create(t->s->gpu[0]);
  void* ptrs[1] = {t->y};
  void* ka = kernargs(t->s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  for (int i = 0; i < SIB_DISPATCHES; i++) {
    hsa_signal_store_relaxed(done, 1);
    dispatch(q, t->kobj, ka, N, done);
    wait_done(done);
  }
  while (!rounds_over) usleep(1000);
  CHECK(hsa_queue_destroy(q));
  return NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Called after the replayed rounds, before the siblings are joined ("handlers blocked"). */
static void (*after_rounds)(void);

static void run_siblings(system_t* s, int rounds, int passes) {
  uint64_t rec = vhsa_native_kernel_create("rec", rec_kernel, NULL);
  uint64_t sib = vhsa_native_kernel_create("sib", sib_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  memset(x, 0, N * 4);
  sibling_t sibs[2];
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    sibs[i].s = s;
    sibs[i].kobj = sib;
    sibs[i].y = pool_alloc(s->device_pool[0], N * 4);
    memset(sibs[i].y, 0, N * 4);
    pthread_create(&th[i], NULL, sibling_thread, &sibs[i]);
  }
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  double total_ms = 0, worst_ms = 0;
  for (int r = 0; r < rounds; r++) {
    hsa_signal_store_relaxed(done, 1);
    double t0 = now_ms();
    dispatch(q, rec, ka, N, done);
    wait_done(done);
    double ms = now_ms() - t0;
    total_ms += ms;
    if (ms > worst_ms) worst_ms = ms;
    usleep(500);
  }
  printf("APP latency rounds=%d mean_ms=%.3f worst_ms=%.3f\n", rounds, total_ms / rounds, worst_ms);
  if (after_rounds) after_rounds();
  rounds_over = 1;
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  EXPECT(rec_count == rounds * passes, "rec ran %d times, expected %d", rec_count, rounds * passes);
  for (int r = 0; r < rounds; r++) {
    uint64_t expected = (uint64_t)r * N;
    for (int p = 0; p < passes; p++) {
      EXPECT(rec_log[r * passes + p] == expected, "round %d pass %d saw sum %llu, expected %llu", r, p,
             (unsigned long long)rec_log[r * passes + p], (unsigned long long)expected);
    }
  }
  for (int i = 0; i < 2; i++)
    for (uint32_t j = 0; j < N; j++)
      EXPECT(sibs[i].y[j] == SIB_DISPATCHES, "sibling %d y[%u] = %u: a non-replayed write was reverted", i, j,
             sibs[i].y[j]);
  for (uint32_t j = 0; j < N; j++) EXPECT(x[j] == (uint32_t)rounds, "x[%u] = %u", j, x[j]);
  CHECK(hsa_queue_destroy(q));
}

/* ---- agents ---- */
static int slow_count;

static void slow_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  x[0] += 1;
  usleep(60000);
  __atomic_add_fetch(&slow_count, 1, __ATOMIC_SEQ_CST);
}

typedef struct {
  system_t* s;
  int gpu;
  uint64_t kobj;
} agent_job_t;

static void* agent_thread(void* arg) {
  agent_job_t* j = (agent_job_t*)arg;
  uint32_t* x = pool_alloc(j->s->device_pool[j->gpu], 64);
  x[0] = 0;
  hsa_queue_t* q = queue_create(j->s->gpu[j->gpu]);
  void* ptrs[1] = {x};
  void* ka = kernargs(j->s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, j->kobj, ka, 1, done);
  wait_done(done);
  EXPECT(x[0] == 1, "agent %d: x = %u after the replay", j->gpu, x[0]);
  CHECK(hsa_queue_destroy(q));
  return NULL;
}

static void run_agents(system_t* s, int passes) {
  EXPECT(s->gpus >= 2, "needs two GPU agents (VHSA_AGENTS)");
  uint64_t slow = vhsa_native_kernel_create("slow", slow_kernel, NULL);
  agent_job_t jobs[2] = {{s, 0, slow}, {s, 1, slow}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, agent_thread, &jobs[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  EXPECT(slow_count == 2 * passes, "slow ran %d times, expected %d", slow_count, 2 * passes);
}

/* ---- batch ---- */
static int holding;

extern hsa_status_t hsa_amd_queue_intercept_register(hsa_queue_t* queue,
                                                     void (*handler)(const void*, uint64_t, uint64_t, void*,
                                                                     void (*)(const void*, uint64_t)),
                                                     void* user_data);

/* Packets per merged batch (2 unless a mode sets it, at most 4). */
static int batch_size = 2;
static uint8_t held_more[4 * 64];

/* Holds packets until `batch_size` arrived and submits them as one batch. */
static void merge_handler(const void* pkts, uint64_t count, uint64_t index, void* data,
                          void (*writer)(const void*, uint64_t)) {
  (void)index;
  (void)data;
  if (count != 1) {
    writer(pkts, count);
    return;
  }
  memcpy(held_more + 64 * holding, pkts, 64);
  holding++;
  if (holding < batch_size) return;
  holding = 0;
  writer(held_more, (uint64_t)batch_size);
}

static int add_count;

static void add_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  x[0] += 1;
  add_count++;
}

static void run_batch(system_t* s, int passes) {
  uint64_t add = vhsa_native_kernel_create("add", add_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], 64);
  x[0] = 0;
  hsa_queue_t* q = queue_create(s->gpu[0]);
  CHECK(hsa_amd_queue_intercept_register(q, merge_handler, NULL));
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  for (int b = 0; b < 2; b++) {
    hsa_signal_store_relaxed(done, 1);
    dispatch(q, add, ka, 1, (hsa_signal_t){0});
    dispatch(q, add, ka, 1, done);
    wait_done(done);
  }
  usleep(20000);
  EXPECT(add_count == 4 * passes, "add ran %d times, expected %d (each dispatch %d times)", add_count, 4 * passes, passes);
  EXPECT(x[0] == 4, "x = %u, expected 4 (each dispatch as one execution)", x[0]);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal fired more than once");
  CHECK(hsa_queue_destroy(q));
}

/* ---- batchorder ---- */
static char order_log[64];
static int order_len;

static void dbl_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  x[0] *= 2;
  if (order_len < 63) order_log[order_len++] = 'd';
}

static void inc_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  x[0] += 1;
  if (order_len < 63) order_log[order_len++] = 'i';
}

/* A barrier-AND packet of the application, with no dependency and its own completion signal. */
static void barrier(hsa_queue_t* q, hsa_signal_t done) {
  hsa_signal_t none = {0};
  hsa_barrier_and_packet_t p = aql_barrier_and_packet(none, done);
  aql_submit(q, &p);
}

/* Submissions of three packets (dbl, an application barrier, inc), twice, from x = 1. Each
 * kernel runs `passes` times, all passes of dbl before those of inc; x ends as one execution of
 * each batch (x = 7); the barrier runs once per batch. */
static void run_batchorder(system_t* s, int passes) {
  uint64_t dbl = vhsa_native_kernel_create("dbl", dbl_kernel, NULL);
  uint64_t inc = vhsa_native_kernel_create("inc", inc_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], 64);
  x[0] = 1;
  batch_size = 3;
  hsa_queue_t* q = queue_create(s->gpu[0]);
  CHECK(hsa_amd_queue_intercept_register(q, merge_handler, NULL));
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done, bar;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  CHECK(hsa_signal_create(1, 0, NULL, &bar));
  char expected[64];
  int n = 0;
  for (int b = 0; b < 2; b++) {
    hsa_signal_store_relaxed(done, 1);
    hsa_signal_store_relaxed(bar, 1);
    dispatch(q, dbl, ka, 1, (hsa_signal_t){0});
    barrier(q, bar);
    dispatch(q, inc, ka, 1, done);
    wait_done(done);
    EXPECT(hsa_signal_load_scacquire(bar) == 0, "batch %d: the application's barrier completed %lld times' worth",
           b, (long long)(1 - hsa_signal_load_scacquire(bar)));
    for (int p = 0; p < passes; p++) expected[n++] = 'd';
    for (int p = 0; p < passes; p++) expected[n++] = 'i';
  }
  usleep(20000);
  expected[n] = 0;
  order_log[order_len] = 0;
  EXPECT(strcmp(order_log, expected) == 0, "kernels ran in the order %s, expected %s", order_log, expected);
  EXPECT(x[0] == 7, "x = %u, expected 7 (each batch as one execution)", x[0]);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal fired more than once");
  printf("APP batchorder %s\n", order_log);
  CHECK(hsa_queue_destroy(q));
}

/* ---- slowsibling ---- */
static void late_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  usleep(30000);
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  for (uint32_t i = 0; i < N; i++) x[i] += 1;
}

static void run_slowsibling(system_t* s, int passes) {
  uint64_t rec = vhsa_native_kernel_create("rec", rec_kernel, NULL);
  uint64_t late = vhsa_native_kernel_create("late", late_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  memset(x, 0, N * 4);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_queue_t* sib = queue_create(s->gpu[0]);
  void* px[1] = {x};
  void* ka = kernargs(s, px, 1);
  hsa_signal_t done, sdone;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  CHECK(hsa_signal_create(1, 0, NULL, &sdone));
  for (int r = 0; r < 2; r++) {
    hsa_signal_store_relaxed(done, 1);
    hsa_signal_store_relaxed(sdone, 1);
    dispatch(sib, late, ka, N, r == 0 ? (hsa_signal_t){0} : sdone);
    dispatch(q, rec, ka, N, done);
    wait_done(done);
    if (r == 1) wait_done(sdone);
  }
  EXPECT(rec_count == 2 * passes, "rec ran %d times, expected %d", rec_count, 2 * passes);
  for (int r = 0; r < 2; r++)
    for (int p = 0; p < passes; p++)
      EXPECT(rec_log[r * passes + p] == (uint64_t)(2 * r + 1) * N, "round %d pass %d saw sum %llu, expected %llu", r, p,
             (unsigned long long)rec_log[r * passes + p], (unsigned long long)(2 * r + 1) * N);
  for (uint32_t j = 0; j < N; j++) EXPECT(x[j] == 4, "x[%u] = %u, expected 4", j, x[j]);
  printf("APP slowsibling OK\n");
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_queue_destroy(sib));
}

/* ---- stuck ---- */
static void run_stuck(system_t* s) {
  uint64_t add = vhsa_native_kernel_create("add", add_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], 64);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  vhsa_fault_hang_kernel("add");
  dispatch(q, add, ka, 1, done);
  wait_done(done);
  fprintf(stderr, "APP FAIL: the replay finished although its dispatch never completes\n");
  exit(4);
}

/* ---- handlers ---- */
static volatile int release_blocker;

static bool blocking_handler(hsa_signal_value_t v, void* arg) {
  (void)v;
  (void)arg;
  while (!release_blocker) usleep(1000);
  return false;
}

static void release_blocking_handler(void) { release_blocker = 1; }

static void stop_delaying_handlers(void) { vhsa_fault_delay_async_handlers(0); }

static void run_handlers(system_t* s, int rounds, int passes, const char* how) {
  if (strcmp(how, "slow") == 0) {
    /* Every async-handler callback (the tool's, for each sibling dispatch) takes 100 ms: the
     * handler thread falls seconds behind while the rounds run. */
    vhsa_fault_delay_async_handlers(100);
    after_rounds = stop_delaying_handlers;
  } else {
    EXPECT(strcmp(how, "blocked") == 0, "handlers: slow or blocked");
    hsa_signal_t go;
    CHECK(hsa_signal_create(0, 0, NULL, &go));
    CHECK(hsa_amd_signal_async_handler(go, HSA_SIGNAL_CONDITION_EQ, 0, blocking_handler, NULL));
    usleep(20000); /* the handler thread is now inside blocking_handler */
    after_rounds = release_blocking_handler;
  }
  run_siblings(s, rounds, passes);
}

/* ---- submitter ---- */
static hsa_queue_t* submitter_queue;
static uint64_t submitter_kernel;
static void* submitter_kernarg;
static hsa_signal_t submitter_done;

static bool submitting_handler(hsa_signal_value_t v, void* arg) {
  (void)v;
  (void)arg;
  dispatch(submitter_queue, submitter_kernel, submitter_kernarg, N, submitter_done);
  return false;
}

static void run_submitter(system_t* s, int passes) {
  uint64_t rec = vhsa_native_kernel_create("rec", rec_kernel, NULL);
  submitter_kernel = vhsa_native_kernel_create("sib", sib_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* y = pool_alloc(s->device_pool[0], N * 4);
  memset(x, 0, N * 4);
  memset(y, 0, N * 4);
  void* py[1] = {y};
  submitter_kernarg = kernargs(s, py, 1);
  submitter_queue = queue_create(s->gpu[0]);
  CHECK(hsa_signal_create(1, 0, NULL, &submitter_done));
  CHECK(hsa_signal_create(1, 0, NULL, &rec_trigger));
  CHECK(hsa_amd_signal_async_handler(rec_trigger, HSA_SIGNAL_CONDITION_LT, 1, submitting_handler, NULL));
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* px[1] = {x};
  void* ka = kernargs(s, px, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  rec_sleep_us = 20000; /* the handler runs, and blocks on the window, while passes still follow */
  dispatch(q, rec, ka, N, done);
  wait_done(done);
  wait_done(submitter_done);
  EXPECT(rec_count == passes, "rec ran %d times, expected %d", rec_count, passes);
  for (int p = 0; p < passes; p++) EXPECT(rec_log[p] == 0, "pass %d saw sum %llu, expected 0", p, (unsigned long long)rec_log[p]);
  for (uint32_t j = 0; j < N; j++) EXPECT(x[j] == 1 && y[j] == 1, "x[%u] = %u, y[%u] = %u, expected 1", j, x[j], j, y[j]);
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_queue_destroy(submitter_queue));
}

/* ---- crossqueue / hostgate ---- */
static void barrier_on(hsa_queue_t* q, hsa_signal_t dep) {
  hsa_signal_t none = {0};
  hsa_barrier_and_packet_t p = aql_barrier_and_packet(dep, none);
  aql_submit(q, &p);
}

static void run_dependent(system_t* s, int same_queue, int runs) {
  uint64_t rec = vhsa_native_kernel_create("rec", rec_kernel, NULL);
  uint64_t sib = vhsa_native_kernel_create("sib", sib_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* y = pool_alloc(s->device_pool[0], N * 4);
  memset(x, 0, N * 4);
  memset(y, 0, N * 4);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_queue_t* q2 = same_queue ? q : queue_create(s->gpu[0]);
  hsa_signal_t gate, done, done2;
  CHECK(hsa_signal_create(1, 0, NULL, &gate));
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  CHECK(hsa_signal_create(1, 0, NULL, &done2));
  void* px[1] = {x};
  void* py[1] = {y};
  void* ka = kernargs(s, px, 1);
  void* kb = kernargs(s, py, 1);
  /* Work that can only finish once `gate` is set, which happens only after the replayed
   * dispatch was submitted (same queue) or completed (sibling queue). */
  barrier_on(q2, gate);
  if (!same_queue) dispatch(q2, sib, kb, N, done2);
  dispatch(q, rec, ka, N, done);
  if (same_queue) {
    hsa_signal_store_screlease(gate, 0);
    wait_done(done);
  } else {
    wait_done(done);
    hsa_signal_store_screlease(gate, 0);
    wait_done(done2);
    for (uint32_t j = 0; j < N; j++) EXPECT(y[j] == 1, "y[%u] = %u, expected 1", j, y[j]);
  }
  EXPECT(rec_count == runs, "rec ran %d times, expected %d", rec_count, runs);
  for (int r = 0; r < rec_count && r < MAX_LOG; r++) EXPECT(rec_log[r] == 0, "pass %d of rec saw a changed input", r);
  for (uint32_t j = 0; j < N; j++) EXPECT(x[j] == 1, "x[%u] = %u, expected 1", j, x[j]);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal value %ld", (long)hsa_signal_load_scacquire(done));
  if (!same_queue) CHECK(hsa_queue_destroy(q2));
  CHECK(hsa_queue_destroy(q));
}

/* ---- hostwrites ---- */
typedef struct {
  system_t* s;
  uint32_t* y;
  hsa_ext_image_t image; /* a 1D R32 UINT image over y */
  int iterations;
  volatile int finished;
} writer_t;

static const char* host_write_name(int i) {
  static const char* names[] = {"hsa_memory_copy", "hsa_amd_memory_fill", "hsa_amd_memory_async_copy",
                                "hsa_ext_image_import", "hsa_ext_image_clear"};
  return names[i % 5];
}

static hsa_ext_image_t image_over(system_t* s, uint32_t* y) {
  hsa_ext_image_descriptor_t d = {HSA_EXT_IMAGE_GEOMETRY_1D, N, 0, 0, 0,
                                  {HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32, HSA_EXT_IMAGE_CHANNEL_ORDER_R}};
  hsa_ext_image_t image;
  CHECK(hsa_ext_image_create_with_layout(s->gpu[0], &d, y, HSA_ACCESS_PERMISSION_RW, HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR,
                                         N * 4, 0, &image));
  return image;
}

static void* host_writer(void* arg) {
  writer_t* w = (writer_t*)arg;
  uint32_t* src = malloc(N * 4);
  hsa_signal_t copied;
  CHECK(hsa_signal_create(1, 0, NULL, &copied));
  for (int i = 1; i <= w->iterations; i++) {
    for (uint32_t j = 0; j < N; j++) src[j] = (uint32_t)i;
    hsa_ext_image_region_t all = {{0, 0, 0}, {N, 1, 1}};
    uint32_t fill[4] = {(uint32_t)i, 0, 0, 0};
    switch (i % 5) {
      case 0: CHECK(hsa_memory_copy(w->y, src, N * 4)); break;
      case 1: CHECK(hsa_amd_memory_fill(w->y, (uint32_t)i, N)); break;
      case 2:
        hsa_signal_store_relaxed(copied, 1);
        CHECK(hsa_amd_memory_async_copy(w->y, w->s->gpu[0], src, w->s->cpu, N * 4, 0, NULL, copied));
        wait_done(copied);
        break;
      case 3: CHECK(hsa_ext_image_import(w->s->gpu[0], src, N * 4, 0, w->image, &all)); break;
      default: CHECK(hsa_ext_image_clear(w->s->gpu[0], w->image, fill, &all)); break;
    }
    usleep(300 + (i % 7) * 100);
    for (uint32_t j = 0; j < N; j++)
      EXPECT(w->y[j] == (uint32_t)i, "iteration %d (%s): y[%u] = %u, the host write was reverted", i,
             host_write_name(i), j, w->y[j]);
  }
  free(src);
  w->finished = 1;
  return NULL;
}

static void run_hostwrites(system_t* s, int iterations) {
  uint64_t rec = vhsa_native_kernel_create("rec", rec_kernel, NULL);
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  memset(x, 0, N * 4);
  writer_t w = {s, pool_alloc(s->device_pool[0], N * 4), {0}, iterations, 0};
  memset(w.y, 0, N * 4);
  w.image = image_over(s, w.y);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  void* px[1] = {x};
  void* ka = kernargs(s, px, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  rec_sleep_us = 300;
  pthread_t th;
  pthread_create(&th, NULL, host_writer, &w);
  int rounds = 0;
  while (!w.finished && rounds < MAX_LOG / 8) {
    hsa_signal_store_relaxed(done, 1);
    dispatch(q, rec, ka, N, done);
    wait_done(done);
    rounds++;
  }
  pthread_join(th, NULL);
  int passes = rec_count / rounds;
  EXPECT(rec_count == rounds * passes && passes > 1, "rec ran %d times over %d rounds", rec_count, rounds);
  for (int r = 0; r < rounds; r++)
    for (int p = 0; p < passes; p++)
      EXPECT(rec_log[r * passes + p] == (uint64_t)r * N, "round %d pass %d saw sum %llu", r, p,
             (unsigned long long)rec_log[r * passes + p]);
  printf("APP hostwrites rounds=%d\n", rounds);
  CHECK(hsa_ext_image_destroy(s->gpu[0], w.image));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: concurrent siblings|agents|batch|stuck|handlers|submitter|crossqueue|hostgate|hostwrites ...");
  system_t s;
  system_init(&s);
  if (strcmp(argv[1], "siblings") == 0) run_siblings(&s, atoi(argv[2]), atoi(argv[3]));
  else if (strcmp(argv[1], "agents") == 0) run_agents(&s, atoi(argv[2]));
  else if (strcmp(argv[1], "batch") == 0) run_batch(&s, argc > 2 ? atoi(argv[2]) : 1);
  else if (strcmp(argv[1], "batchorder") == 0) run_batchorder(&s, atoi(argv[2]));
  else if (strcmp(argv[1], "slowsibling") == 0) run_slowsibling(&s, atoi(argv[2]));
  else if (strcmp(argv[1], "stuck") == 0) run_stuck(&s);
  else if (strcmp(argv[1], "handlers") == 0) run_handlers(&s, atoi(argv[2]), atoi(argv[3]), argv[4]);
  else if (strcmp(argv[1], "submitter") == 0) run_submitter(&s, atoi(argv[2]));
  else if (strcmp(argv[1], "crossqueue") == 0) run_dependent(&s, 0, 1);
  else if (strcmp(argv[1], "hostgate") == 0) run_dependent(&s, 1, argc > 2 ? atoi(argv[2]) : 1);
  else if (strcmp(argv[1], "hostwrites") == 0) run_hostwrites(&s, atoi(argv[2]));
  else EXPECT(0, "unknown mode %s", argv[1]);
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
