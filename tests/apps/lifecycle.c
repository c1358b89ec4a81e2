/* The runtime's lifetime inside one process, with the tool loaded through HSA_TOOLS_LIB.
 *
 *   lifecycle cycles <n> <passes>   n rounds of hsa_init, one replayed dispatch checked from
 *                                   inside the kernel, hsa_shut_down
 *   lifecycle race <n> [threads] [host]
 *                                   n rounds of hsa_init, then `threads` other threads (default
 *                                   1) submitting dispatches, each on its own queue, while the
 *                                   main thread calls hsa_shut_down; with "host" each kernel's
 *                                   buffer is fine-grained host memory (captured by host windows)
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define N 64

static int invocations;
static int all_original;

/* kernarg: [0] x (device, tracked) */
static void inc_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = (uint32_t*)(uintptr_t)((uint64_t*)p->kernarg_address)[0];
  for (uint32_t i = 0; i < p->grid_size_x; i++) {
    if (x[i] != i) all_original = 0;
    x[i] += 1;
  }
  __atomic_add_fetch(&invocations, 1, __ATOMIC_SEQ_CST);
}

static void one_cycle(int round, int passes) {
  system_t s;
  system_init(&s);
  uint64_t kobj = vhsa_native_kernel_create("inc", inc_kernel, NULL);
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  uint32_t* x = pool_alloc(s.device_pool[0], N * 4);
  for (uint32_t i = 0; i < N; i++) x[i] = i;
  void* ptrs[1] = {x};
  void* ka = kernargs(&s, ptrs, 1);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  invocations = 0;
  all_original = 1;
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  EXPECT(invocations == passes, "round %d: inc ran %d times, expected %d", round, invocations, passes);
  EXPECT(all_original, "round %d: a pass did not see the original input", round);
  for (uint32_t i = 0; i < N; i++) EXPECT(x[i] == i + 1, "round %d: x[%u] = %u, expected %u", round, i, x[i], i + 1);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_amd_memory_pool_free(ka));
  CHECK(hsa_amd_memory_pool_free(x));
  CHECK(hsa_shut_down());
}

/* The racing round. The application is correct without the tool: the submitting thread writes
 * its packets only under `lock` and stops once `stopping` is set, so no packet is written into a
 * queue the shutdown destroys; only the doorbell store (with the doorbell handle read under the
 * lock) and the bounded wait may overlap hsa_shut_down, and the runtime refuses those calls
 * harmlessly once it shut down. With the tool loaded, the doorbell store runs the replay. */
typedef struct {
  pthread_mutex_t lock;
  int stopping;
  hsa_queue_t* q;
  uint64_t kobj;
  void* kernarg;
  hsa_signal_t done;
  int submitted;
} submitter_t;

static void* submit_until_stopped(void* arg) {
  submitter_t* t = (submitter_t*)arg;
  for (;;) {
    pthread_mutex_lock(&t->lock);
    if (t->stopping) {
      pthread_mutex_unlock(&t->lock);
      return NULL;
    }
    hsa_signal_store_relaxed(t->done, 1);
    hsa_queue_t* q = t->q;
    uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
    hsa_kernel_dispatch_packet_t* slot = (hsa_kernel_dispatch_packet_t*)q->base_address + (idx % q->size);
    memset((char*)slot + 4, 0, sizeof *slot - 4);
    slot->workgroup_size_x = slot->workgroup_size_y = slot->workgroup_size_z = 1;
    slot->grid_size_x = N;
    slot->grid_size_y = slot->grid_size_z = 1;
    slot->kernel_object = t->kobj;
    slot->kernarg_address = t->kernarg;
    slot->completion_signal = t->done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    __atomic_store_n((uint32_t*)slot, (uint32_t)header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
    hsa_signal_t doorbell = q->doorbell_signal;
    hsa_signal_t done = t->done;
    t->submitted++;
    pthread_mutex_unlock(&t->lock);
    hsa_signal_store_screlease(doorbell, (hsa_signal_value_t)idx);
    /* Bounded: once the runtime shut down the signal never fires. */
    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 1000 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED);
  }
}

static void one_race(int round, int threads, int host) {
  enum { MAX_THREADS = 8 };
  system_t s;
  system_init(&s);
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  submitter_t t[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  uint64_t kobj = vhsa_native_kernel_create("inc", inc_kernel, NULL);
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  for (int k = 0; k < threads; k++) {
    memset(&t[k], 0, sizeof t[k]);
    pthread_mutex_init(&t[k].lock, NULL);
    t[k].kobj = kobj;
    uint32_t* x = pool_alloc(host ? s.fine_pool : s.device_pool[0], N * 4);
    for (uint32_t i = 0; i < N; i++) x[i] = i;
    void* ptrs[1] = {x};
    t[k].kernarg = kernargs(&s, ptrs, 1);
    t[k].q = queue_create(s.gpu[0]);
    CHECK(hsa_signal_create(1, 0, NULL, &t[k].done));
  }
  for (int k = 0; k < threads; k++)
    EXPECT(pthread_create(&th[k], NULL, submit_until_stopped, &t[k]) == 0, "pthread_create");
  /* Let the threads submit, then shut down at a moment that varies from round to round. */
  for (;;) {
    pthread_mutex_lock(&t[0].lock);
    int n = t[0].submitted;
    pthread_mutex_unlock(&t[0].lock);
    if (n > 0) break;
    sched_yield();
  }
  struct timespec pause = {0, (long)(round % 5) * 300 * 1000};
  nanosleep(&pause, NULL);
  for (int k = 0; k < threads; k++) {
    pthread_mutex_lock(&t[k].lock);
    t[k].stopping = 1;
    pthread_mutex_unlock(&t[k].lock);
  }
  CHECK(hsa_shut_down());
  for (int k = 0; k < threads; k++) {
    EXPECT(pthread_join(th[k], NULL) == 0, "pthread_join");
    pthread_mutex_destroy(&t[k].lock);
  }
}

int main(int argc, char** argv) {
  EXPECT(argc >= 3, "usage: lifecycle cycles <n> <passes> | lifecycle race <n> [threads] [host]");
  int rounds = atoi(argv[2]);
  if (strcmp(argv[1], "cycles") == 0) {
    EXPECT(argc >= 4, "cycles needs a pass count");
    int passes = atoi(argv[3]);
    for (int r = 0; r < rounds; r++) one_cycle(r, passes);
  } else if (strcmp(argv[1], "race") == 0) {
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    int host = argc > 4 && strcmp(argv[4], "host") == 0;
    for (int r = 0; r < rounds; r++) one_race(r, threads, host);
  } else {
    EXPECT(0, "unknown mode %s", argv[1]);
  }
  printf("APP OK\n");
  return 0;
}
