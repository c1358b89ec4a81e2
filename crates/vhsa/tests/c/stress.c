/* Stress: THREADS threads, each with QUEUES queues on each of the GPU agents, each queue getting
 * DISPATCHES native-kernel dispatches. Checks that every dispatch ran exactly once and every
 * completion arrived. Prints "PASS <total>". */
#define _GNU_SOURCE
#include <pthread.h>

#include "vhsa_test.h"

#define THREADS 4
#define QUEUES 4
#define DISPATCHES 10000

static test_agents_t agents;
static uint64_t kernel;

static void count_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  __atomic_fetch_add((uint64_t*)p->kernarg_address, 1, __ATOMIC_RELAXED);
}

typedef struct {
  int id;
  uint64_t counters[8][QUEUES];
} worker_t;

static void* worker(void* arg) {
  worker_t* w = (worker_t*)arg;
  hsa_queue_t* queues[8][QUEUES];
  hsa_signal_t done[8][QUEUES];
  for (int g = 0; g < agents.gpu_count; g++) {
    for (int q = 0; q < QUEUES; q++) {
      CHECK_OK(hsa_queue_create(agents.gpus[g], 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &queues[g][q]));
      CHECK_OK(hsa_signal_create(DISPATCHES, 0, NULL, &done[g][q]));
    }
  }
  /* Interleave submissions over all queues, one batch of 16 per queue at a time. */
  for (int n = 0; n < DISPATCHES; n += 16) {
    for (int g = 0; g < agents.gpu_count; g++) {
      for (int q = 0; q < QUEUES; q++) {
        hsa_kernel_dispatch_packet_t pkt = test_dispatch(kernel, &w->counters[g][q], done[g][q]);
        for (int k = n; k < n + 16 && k < DISPATCHES; k++) aql_submit(queues[g][q], &pkt);
      }
    }
  }
  for (int g = 0; g < agents.gpu_count; g++) {
    for (int q = 0; q < QUEUES; q++) {
      char what[96];
      snprintf(what, sizeof what, "completions of thread %d, gpu %d, queue %d", w->id, g, q);
      test_wait_eq(done[g][q], 0, what);
      CHECK(__atomic_load_n(&w->counters[g][q], __ATOMIC_SEQ_CST) == DISPATCHES);
      CHECK_OK(hsa_queue_destroy(queues[g][q]));
      CHECK_OK(hsa_signal_destroy(done[g][q]));
    }
  }
  return NULL;
}

int main(void) {
  CHECK_OK(hsa_init());
  agents = test_agents();
  CHECK(agents.gpu_count == 2);
  kernel = vhsa_native_kernel_create("stress_count", count_kernel, NULL);
  vhsa_stats_reset();
  static worker_t workers[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t].id = t;
    CHECK(pthread_create(&threads[t], NULL, worker, &workers[t]) == 0);
  }
  for (int t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
  vhsa_stats_t st;
  memset(&st, 0, sizeof st);
  st.size = sizeof st;
  CHECK_OK(vhsa_stats(&st));
  uint64_t total = (uint64_t)THREADS * QUEUES * 2 * DISPATCHES;
  CHECK(st.dispatches == total);
  CHECK_OK(hsa_shut_down());
  printf("PASS %llu\n", (unsigned long long)total);
  return 0;
}
