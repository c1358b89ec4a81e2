/* Replay-window time per dispatch with the kernel's buffer in device memory or in fine-grained
 * host memory, for benches/host_memory.rs.
 *
 *   host_memory_window <device|host> <KiB> <reps>
 *
 * One buffer of the size; the kernel (native) adds 1 to its first word. One warm-up dispatch,
 * then `reps` measured ones (submit, wait for the completion signal); prints
 *   RESULT ns=<fastest dispatch's wall time> median_ns=<median>
 * The passes and the host-memory policy come from the environment (KREPLAY_PASSES,
 * KREPLAY_HOST_MEMORY). */
#include "common.h"

#include <time.h>

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void touch_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* x = (uint64_t*)(uintptr_t)((uint64_t*)p->kernarg_address)[0];
  x[0] += 1;
}

static int by_value(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  EXPECT(argc == 4, "usage: host_memory_window <device|host> <KiB> <reps>");
  int host = strcmp(argv[1], "host") == 0;
  size_t bytes = (size_t)atol(argv[2]) << 10;
  int reps = atoi(argv[3]);
  EXPECT(reps > 0 && reps <= 1000 && bytes > 0, "bad arguments");
  system_t s;
  system_init(&s);
  uint64_t kobj = vhsa_native_kernel_create("touch", touch_kernel, NULL);
  uint64_t* x = pool_alloc(host ? s.fine_pool : s.device_pool[0], bytes);
  memset(x, 0, bytes);
  void* ptrs[1] = {x};
  void* ka = kernargs(&s, ptrs, 1);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  uint64_t* times = calloc((size_t)reps, sizeof *times);
  for (int i = -1; i < reps; i++) {
    hsa_signal_store_relaxed(done, 1);
    uint64_t t0 = now_ns();
    dispatch(q, kobj, ka, 1, done);
    wait_done(done);
    if (i >= 0) times[i] = now_ns() - t0;
  }
  /* Exactly once per dispatch, unless KREPLAY_HOST_MEMORY=ignore left the passes' writes. */
  EXPECT(x[0] >= (uint64_t)reps + 1, "x[0] = %lu after %d dispatches", (unsigned long)x[0], reps + 1);
  qsort(times, (size_t)reps, sizeof *times, by_value);
  printf("RESULT ns=%lu median_ns=%lu\n", (unsigned long)times[0], (unsigned long)times[reps / 2]);
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  return 0;
}
