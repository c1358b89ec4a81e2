/* A replay client of kreplay's C API (linked against libkreplay.so, the copy HSA_TOOLS_LIB
 * loads) with the code-object kernels of the tool crate's tests/apps/emulated.hip, on any HSA
 * runtime (written for the real ROCR on vkfd: no vhsa extension is called).
 *
 *   client replay  <passes> <code object>  `inc` replayed <passes> times through the client:
 *                  one CONFIG EXIT without a reason, <passes> PASS EXITs with times, every
 *                  pass sees the original input, memory ends as after one execution
 *   client decline <passes> <code object>  the same dispatch, declined (run with
 *                  KREPLAY_HOST_MEMORY=decline: its kernel arguments reach fine-grained host
 *                  memory): CONFIG EXIT carries the reason (printed "APP declined: <reason>"),
 *                  no PASS event, the kernel runs once
 *   client decline-api <passes> <code object>  the same decline, chosen through
 *                  kreplay_set_host_memory_policy (over KREPLAY_HOST_MEMORY=ignore); an unknown
 *                  policy value is refused first
 *   client reload  <passes> <code object>  `bump` replayed, its executable destroyed, the code
 *                  object loaded again and `bump` replayed from the new executable: its
 *                  __device__ counter is restored between passes both times
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <unistd.h>

#include "kreplay.h"

#define N 64

static uint32_t g_passes;
static int g_config_exits, g_pass_exits, g_declines, g_timed_passes;
static char g_reason[512];

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)d;
  (void)user_data;
  return g_passes;
}

static void on_event(const kreplay_event_t* e, void* user_data) {
  (void)user_data;
  if (e->kind == KREPLAY_EVENT_CONFIG_EXIT) {
    g_config_exits++;
    if (e->stats && e->stats->declined_reason) {
      g_declines++;
      snprintf(g_reason, sizeof g_reason, "%s", e->stats->declined_reason);
    }
  } else if (e->kind == KREPLAY_EVENT_PASS_EXIT) {
    g_pass_exits++;
    if (e->pass_end_ns > e->pass_start_ns) g_timed_passes++;
  }
}

static void register_client(uint32_t passes) {
  static kreplay_callbacks_t cb;
  g_passes = passes;
  memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.pass_count = pass_count;
  cb.on_event = on_event;
  kreplay_status_t st = kreplay_register(&cb);
  EXPECT(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
}

static uint64_t kernel_object(hsa_executable_t exe, hsa_agent_t agent, const char* name) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, name, &agent, &sym));
  uint64_t kobj = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  EXPECT(kobj != 0, "%s has no kernel object", name);
  return kobj;
}

/* One x[i] += 1 dispatch of `inc`; returns how many times it ran (its stats count work-items
 * in fine-grained memory, which the tool does not restore under the policies used here). */
static int run_inc(system_t* s, hsa_executable_t exe) {
  uint64_t kobj = kernel_object(exe, s->gpu[0], "inc.kd");
  uint32_t* x = pool_alloc(s->device_pool[0], N * 4);
  uint32_t* stats = pool_alloc(s->fine_pool, 4 * 80);
  for (uint32_t i = 0; i < N; i++) x[i] = i;
  memset(stats, 0, 4 * 80);
  void* ptrs[3] = {x, stats, (void*)(uintptr_t)N};
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, kernargs(s, ptrs, 3), N, done);
  wait_done(done);
  int runs = (int)(stats[0] / N);
  for (int p = 0; p < runs && p < 79; p++)
    EXPECT(stats[1 + p] == 0, "pass %d: %u work-items did not see the original input", p, stats[1 + p]);
  for (uint32_t i = 0; i < N; i++) EXPECT(x[i] == i + 1, "x[%u] = %u, expected %u (one execution)", i, x[i], i + 1);
  usleep(20000);
  EXPECT(hsa_signal_load_scacquire(done) == 0, "completion signal %ld, expected 0 (fired once)",
         (long)hsa_signal_load_scacquire(done));
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
  return runs;
}

/* One dispatch of `bump` (counter += 1, each run records the value it saw); checks every run
 * saw 0 and the counter ends at 1. */
static void run_bump(system_t* s, hsa_executable_t exe, int passes) {
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "counter", &s->gpu[0], &sym));
  uint64_t addr = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &addr));
  uint32_t zero = 0;
  CHECK(hsa_memory_copy((void*)(uintptr_t)addr, &zero, sizeof zero));
  uint32_t* seen = pool_alloc(s->fine_pool, 4 * 80);
  memset(seen, 0xff, 4 * 80);
  seen[0] = 0;
  void* ptrs[1] = {seen};
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kernel_object(exe, s->gpu[0], "bump.kd"), kernargs(s, ptrs, 1), 1, done);
  wait_done(done);
  EXPECT(seen[0] == (uint32_t)passes, "bump ran %u times, expected %d", seen[0], passes);
  for (int p = 0; p < passes; p++) EXPECT(seen[1 + p] == 0, "pass %d saw counter=%u, expected 0", p, seen[1 + p]);
  uint32_t final = 99;
  CHECK(hsa_memory_copy(&final, (void*)(uintptr_t)addr, sizeof final));
  EXPECT(final == 1, "counter is %u after the replay, expected 1", final);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 4, "usage: client replay|decline|decline-api|reload <passes> <code object>");
  const char* mode = argv[1];
  int passes = atoi(argv[2]);
  EXPECT(passes >= 2, "passes must be at least 2");
  system_t s;
  system_init(&s);
  register_client((uint32_t)passes);
  hsa_executable_t exe = load_code_object(&s, argv[3]);
  if (strcmp(mode, "replay") == 0) {
    int runs = run_inc(&s, exe);
    EXPECT(runs == passes, "inc ran %d times, expected %d", runs, passes);
    EXPECT(g_config_exits == 1 && g_declines == 0, "%d CONFIG EXITs, %d declines (%s)", g_config_exits, g_declines,
           g_reason);
    EXPECT(g_pass_exits == passes, "%d PASS EXIT events, expected %d", g_pass_exits, passes);
    EXPECT(g_timed_passes == passes, "%d of %d passes have device times", g_timed_passes, passes);
  } else if (strcmp(mode, "decline") == 0 || strcmp(mode, "decline-api") == 0) {
    if (strcmp(mode, "decline-api") == 0) {
      EXPECT(kreplay_set_host_memory_policy(3) == KREPLAY_STATUS_INVALID_ARGUMENT, "policy 3 was accepted");
      kreplay_status_t st = kreplay_set_host_memory_policy(KREPLAY_HOST_MEMORY_DECLINE);
      EXPECT(st == KREPLAY_STATUS_SUCCESS, "kreplay_set_host_memory_policy: %s", kreplay_status_string(st));
    }
    int runs = run_inc(&s, exe);
    EXPECT(runs == 1, "a declined dispatch ran %d times", runs);
    EXPECT(g_config_exits == 1 && g_declines == 1, "%d CONFIG EXITs, %d declines", g_config_exits, g_declines);
    EXPECT(g_pass_exits == 0, "%d PASS EXIT events for a declined dispatch", g_pass_exits);
    printf("APP declined: %s\n", g_reason);
  } else if (strcmp(mode, "reload") == 0) {
    run_bump(&s, exe, passes);
    CHECK(hsa_executable_destroy(exe));
    exe = load_code_object(&s, argv[3]);
    run_bump(&s, exe, passes);
    CHECK(hsa_executable_destroy(exe));
    EXPECT(g_declines == 0, "declined: %s", g_reason);
    EXPECT(g_pass_exits == 2 * passes, "%d PASS EXIT events, expected %d", g_pass_exits, 2 * passes);
  } else {
    EXPECT(0, "unknown mode %s", mode);
  }
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
