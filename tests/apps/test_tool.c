/* A replay client written against include/kreplay.h, loaded after kreplay through
 * HSA_TOOLS_LIB. Its behaviour comes from KREPLAY_TEST_TOOL:
 *
 *   free       3 passes; at PASS EXIT of pass 0 frees the buffer in kernarg slot 5
 *   continue   5 passes; the continue callback stops after pass 1 (2 passes run)
 *   unbounded  pass count 0; the continue callback stops after pass 3 (4 passes run)
 *   attach     3 passes; checks the localized-control arm window, attaches a barrier packet
 *
 * Every mode also checks that a second kreplay_register is refused. It prints
 * "TOOL <key>=<value>" lines and "TOOL FAIL ..." on a broken expectation. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kreplay.h"
#include "vhsa.h"

static const char* mode = "";
static int passes_entered, passes_exited, continue_calls, config_enter, config_exit;
static uint64_t dispatch_id;
static int failures;

#define TOOL_CHECK(cond, ...)                        \
  do {                                               \
    if (!(cond)) {                                   \
      fprintf(stderr, "TOOL FAIL: " __VA_ARGS__);    \
      fprintf(stderr, "\n");                         \
      failures++;                                    \
    }                                                \
  } while (0)

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)user_data;
  TOOL_CHECK(d->kernel_name != NULL && strcmp(d->kernel_name, "inc") == 0, "kernel name %s",
             d->kernel_name ? d->kernel_name : "(null)");
  TOOL_CHECK(d->grid_size[0] == 64 && d->workgroup_size[0] == 1, "grid/workgroup sizes");
  if (strcmp(mode, "continue") == 0) return 5;
  if (strcmp(mode, "unbounded") == 0) return 0;
  return 3;
}

static int32_t should_continue(const kreplay_dispatch_info_t* d, uint32_t current, uint32_t total, void* user_data) {
  (void)user_data;
  continue_calls++;
  TOOL_CHECK(d->dispatch_id == dispatch_id, "one dispatch id for the whole sequence");
  if (strcmp(mode, "continue") == 0) {
    TOOL_CHECK(total == 5, "total_passes %u", total);
    return current < 1;
  }
  if (strcmp(mode, "unbounded") == 0) {
    TOOL_CHECK(total == 0, "total_passes %u for an unbounded loop", total);
    return current < 3;
  }
  return 1;
}

static void on_event(const kreplay_event_t* e, void* user_data) {
  (void)user_data;
  uint8_t barrier[64];
  memset(barrier, 0, sizeof barrier);
  barrier[0] = HSA_PACKET_TYPE_BARRIER_AND;
  barrier[1] = 1; /* barrier bit */
  switch (e->kind) {
    case KREPLAY_EVENT_CONFIG_ENTER:
      config_enter++;
      dispatch_id = e->dispatch->dispatch_id;
      TOOL_CHECK(kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_BEFORE) == KREPLAY_STATUS_NOT_ARMED,
                 "attach allowed during CONFIG ENTER");
      break;
    case KREPLAY_EVENT_CONFIG_EXIT:
      config_exit++;
      break;
    case KREPLAY_EVENT_PASS_ENTER:
      TOOL_CHECK(e->pass == (uint32_t)passes_entered, "pass index %u, expected %d", e->pass, passes_entered);
      passes_entered++;
      if (strcmp(mode, "attach") == 0 && e->pass == 0) {
        kreplay_status_t st = kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_BEFORE);
        TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "attach in PASS ENTER: %s", kreplay_status_string(st));
      }
      break;
    case KREPLAY_EVENT_PASS_EXIT:
      passes_exited++;
      TOOL_CHECK(e->dispatch->dispatch_id == dispatch_id, "dispatch id changed between passes");
      TOOL_CHECK(e->pass_end_ns >= e->pass_start_ns && e->pass_start_ns > 0, "pass times %llu..%llu",
                 (unsigned long long)e->pass_start_ns, (unsigned long long)e->pass_end_ns);
      TOOL_CHECK(e->stats != NULL && e->stats->snapshot_regions >= 1, "snapshot statistics missing");
      TOOL_CHECK(kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_AFTER) == KREPLAY_STATUS_NOT_ARMED,
                 "attach allowed during PASS EXIT");
      if (strcmp(mode, "free") == 0 && e->pass == 0) {
        void* const* k = (void* const*)e->dispatch->kernarg_address;
        hsa_status_t st = hsa_amd_memory_pool_free(k[5]);
        TOOL_CHECK(st == HSA_STATUS_SUCCESS, "freeing the victim buffer: %#x", st);
      }
      if (e->stats) {
        fprintf(stderr, "TOOL pass=%u skipped_regions=%llu restored_regions=%llu\n", e->pass,
                (unsigned long long)e->stats->skipped_regions, (unsigned long long)e->stats->restored_regions);
      }
      break;
  }
}

static kreplay_callbacks_t callbacks;

static void report(void) {
  kreplay_stats_t st;
  memset(&st, 0, sizeof st);
  st.size = sizeof st;
  TOOL_CHECK(kreplay_stats_get(&st) == KREPLAY_STATUS_SUCCESS, "kreplay_stats_get");
  fprintf(stderr, "TOOL passes_entered=%d passes_exited=%d continue_calls=%d config=%d/%d\n", passes_entered,
          passes_exited, continue_calls, config_enter, config_exit);
  fprintf(stderr, "TOOL stats dispatches=%llu replayed=%llu passes=%llu skipped_regions=%llu\n",
          (unsigned long long)st.dispatches, (unsigned long long)st.replayed_dispatches,
          (unsigned long long)st.passes, (unsigned long long)st.skipped_regions);
  vhsa_stats_t vs;
  memset(&vs, 0, sizeof vs);
  vs.size = sizeof vs;
  if (vhsa_stats(&vs) == HSA_STATUS_SUCCESS)
    fprintf(stderr, "TOOL vhsa dispatches=%llu barrier_packets=%llu\n", (unsigned long long)vs.dispatches,
            (unsigned long long)vs.barrier_packets);
  fprintf(stderr, failures ? "TOOL FAILED %d\n" : "TOOL OK\n", failures);
}

bool OnLoad(void* table, uint64_t runtime_version, uint64_t failed_tool_count, const char* const* failed_tool_names) {
  (void)table;
  (void)runtime_version;
  (void)failed_tool_count;
  (void)failed_tool_names;
  const char* m = getenv("KREPLAY_TEST_TOOL");
  mode = m ? m : "";
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.size = sizeof callbacks;
  callbacks.pass_count = pass_count;
  callbacks.should_continue = should_continue;
  callbacks.on_event = on_event;
  kreplay_status_t st = kreplay_register(&callbacks);
  TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
  st = kreplay_register(&callbacks);
  TOOL_CHECK(st == KREPLAY_STATUS_ALREADY_CONFIGURED, "second kreplay_register: %s", kreplay_status_string(st));
  TOOL_CHECK(kreplay_register(NULL) != KREPLAY_STATUS_SUCCESS, "NULL callbacks accepted");
  uint32_t major = 99;
  TOOL_CHECK(kreplay_version(&major, NULL, NULL) == KREPLAY_STATUS_SUCCESS && major == 0, "version");
  return true;
}

void OnUnload(void) { report(); }
