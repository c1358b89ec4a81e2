#define _POSIX_C_SOURCE 200809L
/* Signals with the real runtime's layout: the handle is the address of an amd_signal_t (kind at
 * byte 0, the value at byte 8, start/end times at 32/40), and host waiters notice values stored
 * directly in memory, as device code stores them (a native kernel here, and a plain thread). */
#include <pthread.h>
#include <time.h>

#include "vhsa_test.h"

#define AMD_SIGNAL_KIND_USER 1

static int64_t* value_word(hsa_signal_t s) { return (int64_t*)(uintptr_t)(s.handle + 8); }

/* A native kernel standing for device code: atomically stores 0 to the signal value whose
 * address is its first kernel argument, after 20 ms. */
static void store_zero(const hsa_kernel_dispatch_packet_t* p, void* data) {
  (void)data;
  int64_t* value = *(int64_t**)p->kernarg_address;
  struct timespec t = {0, 20 * 1000 * 1000};
  nanosleep(&t, NULL);
  __atomic_store_n(value, 0, __ATOMIC_RELEASE);
}

static void* delayed_store(void* arg) {
  struct timespec t = {0, 30 * 1000 * 1000};
  nanosleep(&t, NULL);
  __atomic_store_n((int64_t*)arg, 7, __ATOMIC_RELEASE);
  return NULL;
}

static volatile int handler_value = -1;
static bool on_zero(hsa_signal_value_t v, void* arg) {
  (void)arg;
  __atomic_store_n(&handler_value, (int)v, __ATOMIC_RELEASE);
  return false;
}

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();

  hsa_signal_t s;
  CHECK_OK(hsa_signal_create(5, 0, NULL, &s));
  CHECK(s.handle % 64 == 0);
  CHECK(*(int64_t*)(uintptr_t)s.handle == AMD_SIGNAL_KIND_USER);
  CHECK(*value_word(s) == 5);
  volatile hsa_signal_value_t* vp = NULL;
  CHECK_OK(hsa_amd_signal_value_pointer(s, &vp));
  CHECK((int64_t*)(uintptr_t)vp == value_word(s));
  hsa_signal_store_relaxed(s, 42);
  CHECK(*value_word(s) == 42);
  *value_word(s) = -3;
  CHECK(hsa_signal_load_scacquire(s) == -3);

  /* A host waiter notices a store made by another thread directly in memory. */
  pthread_t t;
  CHECK(pthread_create(&t, NULL, delayed_store, value_word(s)) == 0);
  hsa_signal_value_t seen =
      hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 7, WAIT_BOUND_NS, HSA_WAIT_STATE_BLOCKED);
  CHECK(seen == 7);
  pthread_join(t, NULL);

  /* A dispatch whose kernel stores to a signal's value: a waiter, an async handler and the
   * packet's own completion (profiling times in the amd_signal_t) all see it. */
  hsa_queue_t* q = NULL;
  CHECK_OK(hsa_queue_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  CHECK_OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  uint64_t k = vhsa_native_kernel_create("store_zero", store_zero, NULL);
  hsa_signal_t flag, handled, done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &flag));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &handled));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  CHECK_OK(hsa_amd_signal_async_handler(handled, HSA_SIGNAL_CONDITION_EQ, 0, on_zero, NULL));
  int64_t* args[2] = {value_word(flag), NULL};
  hsa_kernel_dispatch_packet_t p = test_dispatch(k, args, done);
  aql_submit(q, &p);
  seen = hsa_signal_wait_scacquire(flag, HSA_SIGNAL_CONDITION_EQ, 0, WAIT_BOUND_NS, HSA_WAIT_STATE_BLOCKED);
  CHECK(seen == 0);
  test_wait_eq(done, 0, "the dispatch");
  uint64_t start = *(uint64_t*)(uintptr_t)(done.handle + 32), end = *(uint64_t*)(uintptr_t)(done.handle + 40);
  hsa_amd_profiling_dispatch_time_t times;
  CHECK_OK(hsa_amd_profiling_get_dispatch_time(ag.gpus[0], done, &times));
  CHECK(start != 0 && start == times.start && end == times.end && end >= start);

  /* The async handler's signal, stored directly. */
  __atomic_store_n(value_word(handled), 0, __ATOMIC_RELEASE);
  for (int i = 0; i < 12000 && __atomic_load_n(&handler_value, __ATOMIC_ACQUIRE) != 0; i++) {
    struct timespec w = {0, 10 * 1000 * 1000};
    nanosleep(&w, NULL);
  }
  CHECK(__atomic_load_n(&handler_value, __ATOMIC_ACQUIRE) == 0);

  /* wait_any notices it too. */
  hsa_signal_t list[2] = {s, flag};
  hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t values[2] = {100, 100};
  CHECK(pthread_create(&t, NULL, delayed_store, value_word(flag)) == 0);
  values[1] = 7;
  uint32_t which = hsa_amd_signal_wait_any(2, list, conds, values, WAIT_BOUND_NS, HSA_WAIT_STATE_BLOCKED, NULL);
  CHECK(which == 1);
  pthread_join(t, NULL);

  /* Destroyed: the handle no longer names a signal. */
  CHECK_OK(hsa_signal_destroy(s));
  CHECK_STATUS(hsa_signal_destroy(s), HSA_STATUS_ERROR_INVALID_SIGNAL);
  CHECK_OK(hsa_queue_destroy(q));
  CHECK_OK(hsa_signal_destroy(flag));
  CHECK_OK(hsa_signal_destroy(handled));
  CHECK_OK(hsa_signal_destroy(done));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
