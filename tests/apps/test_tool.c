/* A replay client written against include/kreplay.h, loaded after kreplay through
 * HSA_TOOLS_LIB. Its behaviour comes from KREPLAY_TEST_TOOL:
 *
 *   free       3 passes; at PASS EXIT of pass 0 frees the buffer in kernarg slot 5
 *   continue   5 passes; the continue callback stops after pass 1 (2 passes run)
 *   unbounded  pass count 0; the continue callback stops after pass 3 (4 passes run)
 *   attach     3 passes; checks the localized-control arm window, attaches a barrier packet
 *   reentrant  3 passes; PASS ENTER of pass 0 dispatches on a new queue of the replaying agent
 *   nested     3 passes (needs two GPU agents); PASS ENTER of pass 0 attaches a barrier before the
 *              dispatch, runs a 2-pass replay of another kernel on the other agent, then attaches a
 *              barrier after the dispatch
 *   realloc    3 passes; at PASS EXIT of pass 0 frees the buffer in kernarg slot 5 and, on another
 *              thread (as the application would: memory allocated on the callback's thread is the
 *              tool's own, never tracked), allocates a new buffer at the same address, filled with
 *              a pattern the restores must not touch
 *   cross      3 passes (two GPU agents, two application threads replaying at once); PASS ENTER
 *              of pass 0 waits until both windows are open, then dispatches on the other agent
 *   ownbuf     3 passes; CONFIG ENTER allocates the tool's own device buffer on the replaying
 *              agent, each PASS EXIT writes its pass into it and checks the earlier passes' values
 *              are still there (the tool's memory is not restored)
 *   after      3 passes; PASS ENTER of pass 0 attaches, after the dispatch, a dispatch of a slow
 *              kernel that counts its runs; each PASS EXIT checks that it already ran
 *
 *   perpass    3 passes; packets for one pass only: pass 0 attaches a marker kernel 'a' after the
 *              dispatch for that pass and a marker 'S' after it for the loop, pass 1 a marker 'b'
 *              before and 'a' after for that pass, pass 2 nothing; the markers' runs are printed
 *              as "TOOL sequence=..." with '|' at each PASS EXIT
 *   single     pass count 1; with KREPLAY_TEST_TOOL_ALWAYS=1, PASS ENTER of pass 0 attaches 'b'
 *              before and 'a' after the dispatch for that pass
 *
 *   declined   3 passes, expected to be declined (the reason is printed at CONFIG EXIT in every mode);
 *              with KREPLAY_TEST_TOOL_ALWAYS=1, PASS ENTER of pass 0 attaches 'b' and 'a' as in single
 *   early      listed before kreplay in HSA_TOOLS_LIB: kreplay_register returns NOT_LOADED
 *
 * KREPLAY_TEST_TOOL_ALWAYS=1 registers with KREPLAY_CLIENT_PASS_EVENTS_ALWAYS.
 * In every mode a LOOP_STOPPED event is printed with its reason.
 * Every other mode also checks that a second kreplay_register is refused. It prints
 * "TOOL <key>=<value>" lines and "TOOL FAIL ..." on a broken expectation. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "aql_submit.h"
#include "kreplay.h"
#include "vhsa.h"

static const char* mode = "";
static int passes_entered, passes_exited, continue_calls, config_enter, config_exit;
static int passes_of_dispatch; /* PASS ENTER events of the current dispatch */
static uint64_t dispatch_id;
static int failures;

/* "realloc" mode: the buffer allocated at the freed victim's address, and its pattern. */
static uint8_t* replacement;
#define REPLACEMENT_SIZE 4096
#define REPLACEMENT_BYTE 0xab

#define TOOL_CHECK(cond, ...)                        \
  do {                                               \
    if (!(cond)) {                                   \
      fprintf(stderr, "TOOL FAIL: " __VA_ARGS__);    \
      fprintf(stderr, "\n");                         \
      failures++;                                    \
    }                                                \
  } while (0)

static hsa_status_t find_coarse_pool(hsa_amd_memory_pool_t p, void* data) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  if (hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) != HSA_STATUS_SUCCESS ||
      hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR;
  if (seg == HSA_AMD_SEGMENT_GLOBAL && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) {
    *(hsa_amd_memory_pool_t*)data = p;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

/* Frees `victim` and allocates buffers of its size from the agent's coarse-grained pool until one
 * lands at the same address (the others stay allocated, so the search moves on). */
static void replace_victim(uint64_t agent_handle, void* victim) {
  hsa_agent_t agent = {agent_handle};
  hsa_amd_memory_pool_t pool = {0};
  hsa_amd_agent_iterate_memory_pools(agent, find_coarse_pool, &pool);
  TOOL_CHECK(pool.handle != 0, "no coarse-grained pool on the agent");
  hsa_status_t st = hsa_amd_memory_pool_free(victim);
  TOOL_CHECK(st == HSA_STATUS_SUCCESS, "freeing the victim buffer: %#x", st);
  for (int i = 0; i < 4096 && pool.handle && !replacement; i++) {
    void* p = NULL;
    st = hsa_amd_memory_pool_allocate(pool, REPLACEMENT_SIZE, 0, &p);
    TOOL_CHECK(st == HSA_STATUS_SUCCESS, "allocating a replacement: %#x", st);
    if (st != HSA_STATUS_SUCCESS) return;
    if (p == victim) replacement = p;
  }
  TOOL_CHECK(replacement != NULL, "no allocation reused the freed victim's address");
  if (replacement) memset(replacement, REPLACEMENT_BYTE, REPLACEMENT_SIZE);
}

/* "ownbuf" mode: the tool's own counter buffer, allocated from a callback. */
static uint32_t* own_buffer;

struct victim_args {
  uint64_t agent;
  void* victim;
};

static void* replace_victim_thread(void* arg) {
  struct victim_args* a = (struct victim_args*)arg;
  replace_victim(a->agent, a->victim);
  return NULL;
}

static int replacement_intact(void) {
  for (int i = 0; i < REPLACEMENT_SIZE; i++)
    if (replacement[i] != REPLACEMENT_BYTE) return 0;
  return 1;
}

/* Dispatches the replayed kernel once more on a new queue of the same agent (from a callback). */
static void dispatch_on_sibling(const kreplay_dispatch_info_t* d) {
  hsa_agent_t agent = {d->agent_handle};
  hsa_queue_t* q = NULL;
  hsa_status_t st = hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q);
  TOOL_CHECK(st == HSA_STATUS_SUCCESS, "hsa_queue_create: %#x", st);
  if (st != HSA_STATUS_SUCCESS) return;
  hsa_signal_t none = {0};
  hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(d->kernel_object, (void*)d->kernarg_address,
                                                       d->grid_size[0], d->workgroup_size[0], none);
  fprintf(stderr, "TOOL submitting from PASS ENTER\n");
  aql_submit(q, &p);
  fprintf(stderr, "TOOL submitted from PASS ENTER\n");
}

/* "nested" mode: a replay on the other agent, run from the outer loop's PASS ENTER. */
static int nested_active, nested_passes;
static kreplay_status_t nested_config_attach = KREPLAY_STATUS_SUCCESS;

static void nop_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
}

static hsa_status_t other_gpu(hsa_agent_t a, void* data) {
  hsa_agent_t* want = (hsa_agent_t*)data;
  hsa_device_type_t t;
  if (hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
  if (t == HSA_DEVICE_TYPE_GPU && a.handle != want->handle) {
    *want = a;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static void replay_on_other_agent(uint64_t replaying_agent) {
  hsa_agent_t agent = {replaying_agent};
  hsa_iterate_agents(other_gpu, &agent);
  TOOL_CHECK(agent.handle != replaying_agent, "no second GPU agent (set VHSA_AGENTS)");
  if (agent.handle == replaying_agent) return;
  hsa_queue_t* q = NULL;
  hsa_status_t st = hsa_queue_create(agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q);
  TOOL_CHECK(st == HSA_STATUS_SUCCESS, "hsa_queue_create on the other agent: %#x", st);
  if (st != HSA_STATUS_SUCCESS) return;
  hsa_signal_t none = {0};
  hsa_kernel_dispatch_packet_t p = aql_dispatch_packet(vhsa_native_kernel_create("nop", nop_kernel, NULL), NULL, 1, 1, none);
  /* The doorbell store runs the nested replay. */
  nested_active = 1;
  aql_submit(q, &p);
  nested_active = 0;
}

/* "after" mode: the attached slow kernel and how often it ran. */
static int after_runs;

static void after_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  usleep(30000);
  __atomic_add_fetch(&after_runs, 1, __ATOMIC_SEQ_CST);
}

static void after_packet(uint8_t out[64]) {
  hsa_kernel_dispatch_packet_t pkt;
  memset(&pkt, 0, sizeof pkt);
  pkt.header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
               (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
               (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  pkt.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  pkt.workgroup_size_x = pkt.workgroup_size_y = pkt.workgroup_size_z = 1;
  pkt.grid_size_x = pkt.grid_size_y = pkt.grid_size_z = 1;
  pkt.kernel_object = vhsa_native_kernel_create("after_mark", after_kernel, NULL);
  memcpy(out, &pkt, 64);
}

/* Marker kernels: each run appends its letter to `sequence`; PASS EXIT appends '|'. */
static char sequence[256];
static int sequence_len;
static int always; /* KREPLAY_TEST_TOOL_ALWAYS=1 */

static void sequence_append(char c) {
  int i = __atomic_fetch_add(&sequence_len, 1, __ATOMIC_SEQ_CST);
  if (i < (int)sizeof sequence - 1) sequence[i] = c;
}

static void marker_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  sequence_append((char)(uintptr_t)user_data);
}

static void marker_packet(char letter, uint8_t out[64]) {
  char name[16];
  snprintf(name, sizeof name, "marker_%c", letter);
  hsa_kernel_dispatch_packet_t pkt;
  memset(&pkt, 0, sizeof pkt);
  pkt.header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
               (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
               (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  pkt.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  pkt.workgroup_size_x = pkt.workgroup_size_y = pkt.workgroup_size_z = 1;
  pkt.grid_size_x = pkt.grid_size_y = pkt.grid_size_z = 1;
  pkt.kernel_object = vhsa_native_kernel_create(name, marker_kernel, (void*)(uintptr_t)letter);
  memcpy(out, &pkt, 64);
}

static void attach_marker(char letter, uint32_t position) {
  uint8_t pkt[64];
  marker_packet(letter, pkt);
  kreplay_status_t st = kreplay_pass_attach_packets(pkt, 1, position);
  TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "attach marker %c at %u: %s", letter, position, kreplay_status_string(st));
}

/* PASS ENTER of the modes that attach packets for one pass. */
static void attach_for_pass(uint32_t pass) {
  if (strcmp(mode, "perpass") == 0) {
    if (pass == 0) {
      attach_marker('a', KREPLAY_PACKET_AFTER_PASS);
      attach_marker('S', KREPLAY_PACKET_AFTER);
    }
    if (pass == 1) {
      attach_marker('b', KREPLAY_PACKET_BEFORE_PASS);
      attach_marker('a', KREPLAY_PACKET_AFTER_PASS);
    }
  }
  if ((strcmp(mode, "single") == 0 || strcmp(mode, "declined") == 0) && pass == 0) {
    attach_marker('b', KREPLAY_PACKET_BEFORE_PASS);
    attach_marker('a', KREPLAY_PACKET_AFTER_PASS);
  }
}

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)user_data;
  if (nested_active) return 2;
  TOOL_CHECK(d->kernel_name != NULL && strcmp(d->kernel_name, "inc") == 0, "kernel name %s",
             d->kernel_name ? d->kernel_name : "(null)");
  TOOL_CHECK(d->grid_size[0] == 64 && d->workgroup_size[0] == 1, "grid/workgroup sizes");
  if (strcmp(mode, "continue") == 0) return 5;
  if (strcmp(mode, "unbounded") == 0) return 0;
  if (strcmp(mode, "single") == 0) return 1;
  return 3;
}

static int32_t should_continue(const kreplay_dispatch_info_t* d, uint32_t current, uint32_t total, void* user_data) {
  (void)user_data;
  if (nested_active) return 1;
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
  if (nested_active) {
    if (e->kind == KREPLAY_EVENT_CONFIG_ENTER) nested_config_attach = kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_BEFORE);
    if (e->kind == KREPLAY_EVENT_PASS_EXIT) nested_passes++;
    return;
  }
  switch (e->kind) {
    case KREPLAY_EVENT_CONFIG_ENTER:
      config_enter++;
      passes_of_dispatch = 0;
      dispatch_id = e->dispatch->dispatch_id;
      if (strcmp(mode, "ownbuf") == 0) {
        hsa_amd_memory_pool_t pool = {0};
        hsa_amd_agent_iterate_memory_pools((hsa_agent_t){e->dispatch->agent_handle}, find_coarse_pool, &pool);
        hsa_status_t st = hsa_amd_memory_pool_allocate(pool, 4096, 0, (void**)&own_buffer);
        TOOL_CHECK(st == HSA_STATUS_SUCCESS && own_buffer, "allocating the tool's buffer: %#x", st);
        if (own_buffer) memset(own_buffer, 0, 4096);
      }
      TOOL_CHECK(kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_BEFORE) == KREPLAY_STATUS_NOT_ARMED,
                 "attach allowed during CONFIG ENTER");
      break;
    case KREPLAY_EVENT_CONFIG_EXIT:
      config_exit++;
      if (e->stats && e->stats->declined_reason) fprintf(stderr, "TOOL declined: %s\n", e->stats->declined_reason);
      break;
    case KREPLAY_EVENT_PASS_ENTER:
      TOOL_CHECK(e->pass == (uint32_t)passes_of_dispatch, "pass index %u, expected %d", e->pass, passes_of_dispatch);
      passes_of_dispatch++;
      passes_entered++;
      attach_for_pass(e->pass);
      if (strcmp(mode, "reentrant") == 0 && e->pass == 0) dispatch_on_sibling(e->dispatch);
      if (strcmp(mode, "nested") == 0 && e->pass == 0) {
        kreplay_status_t st = kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_BEFORE);
        TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "attach before the nested replay: %s", kreplay_status_string(st));
        replay_on_other_agent(e->dispatch->agent_handle);
        TOOL_CHECK(nested_passes == 2, "the nested replay ran %d passes", nested_passes);
        TOOL_CHECK(nested_config_attach == KREPLAY_STATUS_NOT_ARMED, "attach during the nested CONFIG ENTER: %s",
                   kreplay_status_string(nested_config_attach));
        st = kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_AFTER);
        TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "attach after the nested replay: %s", kreplay_status_string(st));
      }
      if (strcmp(mode, "cross") == 0 && e->pass == 0) {
        static int open_windows;
        __atomic_add_fetch(&open_windows, 1, __ATOMIC_SEQ_CST);
        for (int i = 0; i < 10000 && __atomic_load_n(&open_windows, __ATOMIC_SEQ_CST) < 2; i++) usleep(1000);
        fprintf(stderr, "TOOL cross submitting\n");
        replay_on_other_agent(e->dispatch->agent_handle);
      }
      if (strcmp(mode, "realloc") == 0 && e->pass > 0 && replacement) {
        TOOL_CHECK(replacement_intact(), "the restore before pass %u overwrote a buffer allocated after the snapshot",
                   e->pass);
        fprintf(stderr, "TOOL pass=%u replacement_intact=%d\n", e->pass, replacement_intact());
      }
      if (strcmp(mode, "after") == 0 && e->pass == 0) {
        uint8_t pkt[64];
        after_packet(pkt);
        kreplay_status_t st = kreplay_pass_attach_packets(pkt, 1, KREPLAY_PACKET_AFTER);
        TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "attach after: %s", kreplay_status_string(st));
      }
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
      TOOL_CHECK(e->stats != NULL, "PASS EXIT without statistics");
      if (e->stats && strcmp(mode, "single") != 0 && !e->stats->declined_reason)
        TOOL_CHECK(e->stats->snapshot_regions >= 1, "snapshot statistics missing");
      if (e->stats && e->stats->declined_reason)
        fprintf(stderr, "TOOL pass_exit pass=%u declined: %s\n", e->pass, e->stats->declined_reason);
      sequence_append('|');
      TOOL_CHECK(kreplay_pass_attach_packets(barrier, 1, KREPLAY_PACKET_AFTER) == KREPLAY_STATUS_NOT_ARMED,
                 "attach allowed during PASS EXIT");
      if (strcmp(mode, "after") == 0) {
        int runs = __atomic_load_n(&after_runs, __ATOMIC_SEQ_CST);
        TOOL_CHECK(runs == (int)e->pass + 1, "PASS EXIT of pass %u before its AFTER packet completed (%d runs)", e->pass, runs);
        fprintf(stderr, "TOOL pass=%u after_runs=%d\n", e->pass, runs);
      }
      if (strcmp(mode, "free") == 0 && e->pass == 0) {
        void* const* k = (void* const*)e->dispatch->kernarg_address;
        hsa_status_t st = hsa_amd_memory_pool_free(k[5]);
        TOOL_CHECK(st == HSA_STATUS_SUCCESS, "freeing the victim buffer: %#x", st);
      }
      if (strcmp(mode, "realloc") == 0 && e->pass == 0) {
        void* const* k = (void* const*)e->dispatch->kernarg_address;
        struct victim_args a = {e->dispatch->agent_handle, k[5]};
        pthread_t t;
        TOOL_CHECK(pthread_create(&t, NULL, replace_victim_thread, &a) == 0, "pthread_create");
        pthread_join(t, NULL);
      }
      if (strcmp(mode, "ownbuf") == 0 && own_buffer && e->pass < 1024) {
        int intact = 1;
        for (uint32_t p = 0; p < e->pass; p++) intact &= own_buffer[p] == p + 1;
        own_buffer[e->pass] = e->pass + 1;
        TOOL_CHECK(intact, "the tool's own buffer was restored before pass %u", e->pass);
        fprintf(stderr, "TOOL pass=%u own_buffer_intact=%d snapshot_regions=%llu\n", e->pass, intact,
                (unsigned long long)(e->stats ? e->stats->snapshot_regions : 0));
      }
      if (e->stats) {
        fprintf(stderr, "TOOL pass=%u skipped_regions=%llu restored_regions=%llu\n", e->pass,
                (unsigned long long)e->stats->skipped_regions, (unsigned long long)e->stats->restored_regions);
      }
      break;
    case KREPLAY_EVENT_LOOP_STOPPED:
      fprintf(stderr, "TOOL loop_stopped pass=%u reason=%s\n", e->pass,
              e->stats && e->stats->declined_reason ? e->stats->declined_reason : "(none)");
      break;
  }
}

static kreplay_callbacks_t callbacks;

static void report(void) {
  kreplay_stats_t st;
  memset(&st, 0, sizeof st);
  st.size = sizeof st;
  TOOL_CHECK(kreplay_stats_get(&st) == KREPLAY_STATUS_SUCCESS, "kreplay_stats_get");
  fprintf(stderr, "TOOL sequence=%s\n", sequence);
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
  const char* a = getenv("KREPLAY_TEST_TOOL_ALWAYS");
  always = a && strcmp(a, "1") == 0;
  if (always) callbacks.flags = KREPLAY_CLIENT_PASS_EVENTS_ALWAYS;
  kreplay_status_t st = kreplay_register(&callbacks);
  if (strcmp(mode, "early") == 0) {
    /* Listed before kreplay in HSA_TOOLS_LIB: kreplay's OnLoad has not run yet. */
    TOOL_CHECK(st == KREPLAY_STATUS_NOT_LOADED, "kreplay_register before kreplay's OnLoad: %s", kreplay_status_string(st));
    fprintf(stderr, "TOOL register: %s\n", kreplay_status_string(st));
    return true;
  }
  TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
  st = kreplay_register(&callbacks);
  TOOL_CHECK(st == KREPLAY_STATUS_ALREADY_CONFIGURED, "second kreplay_register: %s", kreplay_status_string(st));
  TOOL_CHECK(kreplay_register(NULL) != KREPLAY_STATUS_SUCCESS, "NULL callbacks accepted");
  uint32_t major = 99;
  TOOL_CHECK(kreplay_version(&major, NULL, NULL) == KREPLAY_STATUS_SUCCESS && major == 0, "version");
  return true;
}

void OnUnload(void) { report(); }
