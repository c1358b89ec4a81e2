/* One replayed dispatch over several device buffers, for the snapshot stores.
 *
 *   snapshot <passes> <buffers> <buffer KiB> fixed|moving [then-allocate KiB]
 *
 * The kernel hashes every byte of every buffer (its input), then adds 1 to bytes 0..99 of each
 * buffer and to byte size/2 of buffer 0 ("fixed"); "moving" also adds 1 to one byte of buffer 0
 * in a chunk that changes with every pass (pass k >= 1 writes offset k * 64 KiB + 5), so its
 * write set differs between passes.
 *
 * Prints "APP inputs identical=0|1", the vhsa copy counters of the replay
 * ("APP copies h2d=.. d2h=.. d2d=.."), then, with a second size, allocates that much device
 * memory (which must succeed) and prints "APP OK".
 *
 * With SNAPSHOT_SET_VERIFY=<path of libkreplay.so>, the application turns verify mode on through
 * the C API (`kreplay_set_verify(1)`) before the dispatch. */
#include "common.h"

#include <dlfcn.h>

#define MAX_BUFFERS 16
#define MAX_PASSES 64

static int nbuf;
static size_t size;
static int moving;
static uint8_t* buf[MAX_BUFFERS];
static uint64_t seen[MAX_PASSES];
static int invocations;

static uint64_t fnv(void) {
  uint64_t h = 1469598103934665603ull;
  for (int b = 0; b < nbuf; b++)
    for (size_t i = 0; i < size; i++) h = (h ^ buf[b][i]) * 1099511628211ull;
  return h;
}

static void touch_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  if (invocations < MAX_PASSES) seen[invocations] = fnv();
  for (int b = 0; b < nbuf; b++)
    for (int i = 0; i < 100; i++) buf[b][i] += 1;
  buf[0][size / 2] += 1;
  if (moving && invocations >= 1) buf[0][((size_t)invocations * 65536 + 5) % size] += 1;
  invocations++;
}

int main(int argc, char** argv) {
  EXPECT(argc >= 5, "usage: snapshot <passes> <buffers> <buffer KiB> fixed|moving [then-allocate KiB]");
  int passes = atoi(argv[1]);
  nbuf = atoi(argv[2]);
  size = (size_t)atol(argv[3]) * 1024;
  moving = strcmp(argv[4], "moving") == 0;
  size_t later = argc >= 6 ? (size_t)atol(argv[5]) * 1024 : 0;
  EXPECT(nbuf >= 1 && nbuf <= MAX_BUFFERS && passes >= 1 && passes <= MAX_PASSES && size >= 4096, "bad arguments");
  system_t s;
  system_init(&s);
  uint64_t kobj = vhsa_native_kernel_create("touch", touch_kernel, NULL);
  for (int b = 0; b < nbuf; b++) {
    buf[b] = pool_alloc(s.device_pool[0], size);
    for (size_t i = 0; i < size; i++) buf[b][i] = (uint8_t)(i * 31 + b * 7);
  }
  void* ptrs[1] = {buf[0]};
  void* ka = kernargs(&s, ptrs, 1);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  const char* tool = getenv("SNAPSHOT_SET_VERIFY");
  if (tool) {
    void* h = dlopen(tool, RTLD_NOW | RTLD_NOLOAD);
    EXPECT(h, "the tool %s is not loaded", tool);
    int (*set_verify)(uint32_t) = (int (*)(uint32_t))dlsym(h, "kreplay_set_verify");
    EXPECT(set_verify, "kreplay_set_verify not found");
    EXPECT(set_verify(1) == 0, "kreplay_set_verify(1) failed");
    EXPECT(set_verify(7) != 0, "kreplay_set_verify(7) was accepted");
  }
  vhsa_stats_reset();
  dispatch(q, kobj, ka, 1, done);
  wait_done(done);
  vhsa_stats_t st = {.size = sizeof st};
  CHECK(vhsa_stats(&st));
  EXPECT(invocations == passes, "touch ran %d times, expected %d", invocations, passes);
  int identical = 1;
  for (int i = 1; i < passes; i++) identical &= seen[i] == seen[0];
  printf("APP inputs identical=%d\n", identical);
  printf("APP copies h2d=%llu d2h=%llu d2d=%llu\n", (unsigned long long)st.bytes_host_to_device,
         (unsigned long long)st.bytes_device_to_host, (unsigned long long)st.bytes_device_to_device);
  if (!moving) {
    /* Memory ends as after one execution. */
    for (int b = 0; b < nbuf; b++)
      for (size_t i = 0; i < size; i++) {
        uint8_t want = (uint8_t)(i * 31 + b * 7) + (i < 100 || (b == 0 && i == size / 2));
        EXPECT(buf[b][i] == want, "buffer %d byte %zu is %u after the replay, expected %u", b, i, buf[b][i], want);
      }
  }
  if (later) {
    void* p = NULL;
    hsa_status_t r = hsa_amd_memory_pool_allocate(s.device_pool[0], later, 0, &p);
    EXPECT(r == HSA_STATUS_SUCCESS, "allocating %zu bytes after the replay returned %#x", later, r);
    CHECK(hsa_amd_memory_pool_free(p));
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
