/* Replays beside other work, checked from inside the application.
 *
 *   concurrent siblings <rounds> <passes>  replays of `rec` on one queue while two threads keep
 *                                          dispatching `sib` on sibling queues of the same agent
 *   concurrent agents   <passes>           one replayed `slow` dispatch per GPU agent, in parallel
 *   concurrent batch                       two-packet submissions (merged by an interceptor of
 *                                          the application): each runs once
 *   concurrent stuck                       the completion handler is delayed past the drain bound
 *
 * Prints "APP OK" on success. */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

#define N 256
#define SIB_DISPATCHES 150
#define MAX_LOG 4096

/* ---- siblings ---- */
static uint64_t rec_log[MAX_LOG];
static int rec_count;

static void rec_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
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
  CHECK(hsa_queue_destroy(q));
  return NULL;
}

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
  for (int r = 0; r < rounds; r++) {
    hsa_signal_store_relaxed(done, 1);
    dispatch(q, rec, ka, N, done);
    wait_done(done);
    usleep(500);
  }
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
static uint8_t held[64];
static int holding;

extern hsa_status_t hsa_amd_queue_intercept_register(hsa_queue_t* queue,
                                                     void (*handler)(const void*, uint64_t, uint64_t, void*,
                                                                     void (*)(const void*, uint64_t)),
                                                     void* user_data);

/* Holds every other packet and submits the pair as one batch. */
static void merge_handler(const void* pkts, uint64_t count, uint64_t index, void* data,
                          void (*writer)(const void*, uint64_t)) {
  (void)index;
  (void)data;
  if (count != 1) {
    writer(pkts, count);
    return;
  }
  if (!holding) {
    memcpy(held, pkts, 64);
    holding = 1;
    return;
  }
  uint8_t pair[128];
  memcpy(pair, held, 64);
  memcpy(pair + 64, pkts, 64);
  holding = 0;
  writer(pair, 2);
}

static int add_count;

static void add_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = *(uint32_t**)p->kernarg_address;
  x[0] += 1;
  add_count++;
}

static void run_batch(system_t* s) {
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
  EXPECT(add_count == 4, "add ran %d times, expected 4 (each packet once)", add_count);
  EXPECT(x[0] == 4, "x = %u, expected 4", x[0]);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal fired more than once");
  CHECK(hsa_queue_destroy(q));
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
  vhsa_fault_delay_async_handlers(3000);
  dispatch(q, add, ka, 1, done);
  wait_done(done);
  fprintf(stderr, "APP FAIL: the replay finished although its completion handler was stuck\n");
  exit(4);
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: concurrent siblings|agents|batch|stuck ...");
  system_t s;
  system_init(&s);
  if (strcmp(argv[1], "siblings") == 0) run_siblings(&s, atoi(argv[2]), atoi(argv[3]));
  else if (strcmp(argv[1], "agents") == 0) run_agents(&s, atoi(argv[2]));
  else if (strcmp(argv[1], "batch") == 0) run_batch(&s);
  else if (strcmp(argv[1], "stuck") == 0) run_stuck(&s);
  else EXPECT(0, "unknown mode %s", argv[1]);
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
