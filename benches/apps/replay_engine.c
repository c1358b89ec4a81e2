/* Replay time per dispatch, for benches/replay_engine.rs.
 *
 *   replay_engine <footprint MiB> <read 0|1> <reps> <pct>:<c|s>:<passes>...
 *
 * One device buffer of the footprint. The kernel reads every byte (sum of 64-bit words) when
 * `read` is 1, then adds 1 to every word of the written part: the first pct% of the buffer
 * (`c`, contiguous) or 4 KiB pieces spread evenly over it (`s`, scattered). Each configuration
 * runs one warm-up dispatch and `reps` measured ones; per configuration one line:
 *   RESULT pct=.. pattern=.. passes=.. ns=.. kernel_ns=.. written=.. restored=.. h2d=.. d2h=.. d2d=..
 * (the fastest of the measured dispatches, whose kernel time and counters are reported: the
 * machine is shared, and interference only ever adds time), and once
 *   D2D bytes_per_s=..  (device-to-device hsa_memory_copy speed, for the lower bound). */
#include "common.h"

#include <kreplay.h>
#include <time.h>

static uint64_t* buf;
static size_t words;
static int g_read;
static double g_pct;
static int g_scattered;
static uint32_t g_passes;
static volatile uint64_t sink;
static uint64_t kernel_ns, restored, snapshot_ns, restore_ns;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static size_t written_bytes(void) {
  size_t bytes = words * 8;
  size_t w = (size_t)((double)bytes * g_pct / 100.0);
  return w / 4096 * 4096;
}

static void kernel(const hsa_kernel_dispatch_packet_t* p, void* u) {
  (void)p;
  (void)u;
  if (g_read) {
    uint64_t s = 0;
    for (size_t i = 0; i < words; i++) s += buf[i];
    sink = s;
  }
  size_t w = written_bytes();
  if (!g_scattered) {
    for (size_t i = 0; i < w / 8; i++) buf[i] += 1;
  } else {
    size_t pieces = w / 4096, stride = pieces ? (words * 8) / pieces : 0;
    for (size_t k = 0; k < pieces; k++) {
      uint64_t* q = buf + k * stride / 8;
      for (size_t i = 0; i < 512; i++) q[i] += 1;
    }
  }
}

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* u) {
  (void)d;
  (void)u;
  return g_passes;
}

static void on_event(const kreplay_event_t* e, void* u) {
  (void)u;
  if (e->kind == KREPLAY_EVENT_PASS_EXIT) {
    kernel_ns += e->pass_end_ns - e->pass_start_ns;
    if (e->stats) {
      restored = e->stats->restored_bytes;
      restore_ns = e->stats->restore_ns;
      snapshot_ns = e->stats->snapshot_ns;
    }
  }
}

int main(int argc, char** argv) {
  EXPECT(argc >= 5, "usage: replay_engine <MiB> <read> <reps> <pct>:<c|s>:<passes>...");
  size_t bytes = (size_t)atol(argv[1]) << 20;
  g_read = atoi(argv[2]);
  int reps = atoi(argv[3]);
  kreplay_callbacks_t cb = {sizeof cb, pass_count, NULL, on_event, NULL};
  system_t s;
  system_init(&s);
  /* After hsa_init: the tool's OnLoad has run. */
  EXPECT(kreplay_register(&cb) == KREPLAY_STATUS_SUCCESS, "kreplay_register failed");
  buf = pool_alloc(s.device_pool[0], bytes);
  words = bytes / 8;
  for (size_t i = 0; i < words; i++) buf[i] = i * 0x9E3779B97F4A7C15ull;
  /* Device-to-device copy speed (best of 3, 256 MiB at most). */
  size_t probe = bytes < (256u << 20) ? bytes : (256u << 20);
  void* other = pool_alloc(s.device_pool[0], probe);
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t t0 = now_ns();
    CHECK(hsa_memory_copy(other, buf, probe));
    uint64_t t = now_ns() - t0;
    if (t < best) best = t;
  }
  CHECK(hsa_amd_memory_pool_free(other));
  printf("D2D bytes_per_s=%.0f\n", (double)probe * 1e9 / (double)best);
  void* ptrs[1] = {buf};
  void* ka = kernargs(&s, ptrs, 1);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  for (int a = 4; a < argc; a++) {
    char pattern = 'c';
    unsigned passes = 2;
    EXPECT(sscanf(argv[a], "%lf:%c:%u", &g_pct, &pattern, &passes) == 3, "bad configuration %s", argv[a]);
    g_scattered = pattern == 's';
    g_passes = passes;
    /* One kernel name per configuration: what the engine learns about one does not carry over. */
    char name[64];
    snprintf(name, sizeof name, "stream_%s", argv[a]);
    uint64_t kobj = vhsa_native_kernel_create(name, kernel, NULL);
    uint64_t best = UINT64_MAX, best_kernel = 0, best_snapshot = 0, best_restore = 0, best_restored = 0;
    vhsa_stats_t best_st = {.size = sizeof best_st};
    vhsa_stats_t st = {.size = sizeof st};
    for (int r = 0; r <= reps; r++) {
      kernel_ns = 0;
      restored = 0;
      hsa_signal_store_relaxed(done, 1);
      vhsa_stats_reset();
      uint64_t t0 = now_ns();
      dispatch(q, kobj, ka, 1, done);
      wait_done(done);
      uint64_t t = now_ns() - t0;
      CHECK(vhsa_stats(&st));
      if (r > 0 && t < best) {
        best = t;
        best_kernel = kernel_ns;
        best_snapshot = snapshot_ns;
        best_restore = restore_ns;
        best_restored = restored;
        best_st = st;
      }
    }
    printf("RESULT pct=%g pattern=%c passes=%u ns=%llu kernel_ns=%llu snapshot_ns=%llu restore_ns=%llu written=%zu restored=%llu h2d=%llu d2h=%llu d2d=%llu\n", g_pct,
           pattern, passes, (unsigned long long)best, (unsigned long long)best_kernel,
           (unsigned long long)best_snapshot, (unsigned long long)best_restore, written_bytes(),
           (unsigned long long)best_restored, (unsigned long long)best_st.bytes_host_to_device,
           (unsigned long long)best_st.bytes_device_to_host, (unsigned long long)best_st.bytes_device_to_device);
    fflush(stdout);
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  return 0;
}
