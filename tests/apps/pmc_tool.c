/* A counter-collecting replay client written against include/kreplay.h and aqlprofile, loaded
 * after kreplay through HSA_TOOLS_LIB. On every dispatch it collects the events of
 * PMC_TOOL_EVENTS ("block:event[,block:event...]", block = a hsa_ven_amd_aqlprofile_block_name_t
 * value, block instance 0) through
 *
 *   PMC_TOOL_API=v1   the HSA_EXTENSION_AMD_AQLPROFILE table (hsa_system_get_major_extension_table)
 *   PMC_TOOL_API=v2   libhsa-amd-aqlprofile64.so.1, its aqlprofile_* entries resolved with dlsym
 *
 * It registers with KREPLAY_CLIENT_PASS_EVENTS_ALWAYS and asks for PMC_TOOL_PASSES passes
 * (default 1). Each PASS ENTER attaches `start` before the dispatch and `read`, `stop` after it,
 * for that pass only; each PASS EXIT prints one line per sample:
 *
 *   TOOL value pass=<p> block=<b> index=<i> event=<e> value=<v>
 *
 * When the runtime counts the counter packets it executed (vhsa_pmc_packets_executed or
 * vkfd_pmc_packets_executed, found with dlsym), each PASS EXIT also prints how many of each ran
 * during that pass: "TOOL packets pass=<p> start=<n> read=<n> stop=<n>".
 *
 * The packet buffers are the tool's own (allocated from its callbacks in the system kernarg pool,
 * never tracked by kreplay). Prints "TOOL OK" at OnUnload when every call succeeded,
 * "TOOL FAIL ..." on each failure. */
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_aqlprofile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kreplay.h"

#define MAX_EVENTS 32

static int failures;
#define TOOL_CHECK(cond, ...)                     \
  do {                                            \
    if (!(cond)) {                                \
      fprintf(stderr, "TOOL FAIL: " __VA_ARGS__); \
      fprintf(stderr, "\n");                      \
      failures++;                                 \
    }                                             \
  } while (0)

/* ---- The v2 interface, declared here from its documented shapes. ---------------------------- */

typedef struct {
  uint64_t handle;
} v2_handle_t;
typedef struct {
  uint64_t handle;
} v2_agent_t;
typedef struct {
  const char* agent_gfxip;
  uint32_t xcc_num, se_num, cu_num, shader_arrays_per_se;
} v2_agent_info_t;
typedef struct {
  uint32_t block_index, event_id, flags, block_name;
} v2_event_t;
typedef struct {
  v2_agent_t agent;
  const v2_event_t* events;
  uint32_t event_count;
} v2_profile_t;
typedef struct {
  hsa_ext_amd_aql_pm4_packet_t start, stop, read;
} v2_packets_t;
typedef hsa_status_t (*v2_alloc_fn)(void** ptr, uint64_t size, uint32_t flags, void* data);
typedef void (*v2_dealloc_fn)(void* ptr, void* data);
typedef hsa_status_t (*v2_copy_fn)(void* dst, const void* src, size_t size, void* data);
typedef hsa_status_t (*v2_value_fn)(v2_event_t event, uint64_t counter_id, uint64_t value, void* data);

static struct {
  hsa_status_t (*register_agent)(v2_agent_t*, const v2_agent_info_t*);
  hsa_status_t (*create)(v2_handle_t*, v2_packets_t*, v2_profile_t, v2_alloc_fn, v2_dealloc_fn, v2_copy_fn, void*);
  hsa_status_t (*iterate)(v2_handle_t, v2_value_fn, void*);
} v2;

/* ---- What this tool collects. -------------------------------------------------------------- */

static int use_v2;
static uint32_t passes = 1;
static uint32_t event_count;
static uint32_t blocks[MAX_EVENTS], ids[MAX_EVENTS];

/* One packet set, built at the first PASS ENTER. */
static int built;
static uint8_t start_pkt[64], read_stop_pkts[2][64];
static v2_handle_t v2_set;
static hsa_ven_amd_aqlprofile_1_00_pfn_t v1;
static hsa_ven_amd_aqlprofile_profile_t v1_profile;
static hsa_ven_amd_aqlprofile_event_t v1_events[MAX_EVENTS];
static uint32_t current_pass;

/* The runtime's count of executed counter packets, when it has one. */
typedef void (*packets_executed_fn)(uint64_t* start, uint64_t* read, uint64_t* stop);
static packets_executed_fn packets_executed;
static uint64_t executed_at_enter[3];

static hsa_status_t find_kernarg_pool(hsa_amd_memory_pool_t p, void* data) {
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  if (hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) != HSA_STATUS_SUCCESS ||
      hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR;
  if (seg == HSA_AMD_SEGMENT_GLOBAL && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) {
    *(hsa_amd_memory_pool_t*)data = p;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_cpu_pool(hsa_agent_t a, void* data) {
  hsa_device_type_t t;
  if (hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
  if (t != HSA_DEVICE_TYPE_CPU) return HSA_STATUS_SUCCESS;
  return hsa_amd_agent_iterate_memory_pools(a, find_kernarg_pool, data);
}

static hsa_agent_t gpu;

/* Host-visible memory the agent may access, zeroed. */
static void* shared_alloc(uint64_t size) {
  hsa_amd_memory_pool_t pool = {0};
  hsa_iterate_agents(find_cpu_pool, &pool);
  TOOL_CHECK(pool.handle != 0, "no kernarg pool");
  void* p = NULL;
  if (pool.handle == 0 || hsa_amd_memory_pool_allocate(pool, size ? size : 64, 0, &p) != HSA_STATUS_SUCCESS) return NULL;
  TOOL_CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, p) == HSA_STATUS_SUCCESS, "allow_access");
  memset(p, 0, size);
  return p;
}

static hsa_status_t v2_alloc(void** ptr, uint64_t size, uint32_t flags, void* data) {
  (void)flags;
  (void)data;
  *ptr = shared_alloc(size);
  return *ptr ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

static void v2_dealloc(void* ptr, void* data) {
  (void)data;
  hsa_amd_memory_pool_free(ptr);
}

static hsa_status_t v2_copy(void* dst, const void* src, size_t size, void* data) {
  (void)data;
  memcpy(dst, src, size);
  return HSA_STATUS_SUCCESS;
}

static void to_bytes(const hsa_ext_amd_aql_pm4_packet_t* p, int barrier, uint8_t out[64]) {
  hsa_ext_amd_aql_pm4_packet_t q = *p;
  q.header = (uint16_t)((HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE) |
                        (barrier << HSA_PACKET_HEADER_BARRIER) |
                        (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                        (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
  q.completion_signal.handle = 0;
  memcpy(out, &q, 64);
}

static uint32_t agent_u32(hsa_agent_t a, uint32_t attribute, uint32_t fallback) {
  uint32_t v = 0;
  return hsa_agent_get_info(a, (hsa_agent_info_t)attribute, &v) == HSA_STATUS_SUCCESS ? v : fallback;
}

static void build_v2(void) {
  char name[64] = {0};
  hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name);
  v2_agent_info_t info = {name, agent_u32(gpu, 0xA111 /* HSA_AMD_AGENT_INFO_NUM_XCC */, 1),
                          agent_u32(gpu, HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES, 1),
                          agent_u32(gpu, HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, 1),
                          agent_u32(gpu, HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE, 1)};
  v2_agent_t agent = {0};
  TOOL_CHECK(v2.register_agent(&agent, &info) == HSA_STATUS_SUCCESS, "aqlprofile_register_agent");
  v2_event_t ev[MAX_EVENTS];
  for (uint32_t i = 0; i < event_count; i++) ev[i] = (v2_event_t){0, ids[i], 0, blocks[i]};
  v2_profile_t profile = {agent, ev, event_count};
  v2_packets_t pk;
  memset(&pk, 0, sizeof pk);
  hsa_status_t st = v2.create(&v2_set, &pk, profile, v2_alloc, v2_dealloc, v2_copy, NULL);
  TOOL_CHECK(st == HSA_STATUS_SUCCESS, "aqlprofile_pmc_create_packets: %#x", st);
  to_bytes(&pk.start, 0, start_pkt);
  to_bytes(&pk.read, 1, read_stop_pkts[0]);
  to_bytes(&pk.stop, 1, read_stop_pkts[1]);
}

static void build_v1(void) {
  for (uint32_t i = 0; i < event_count; i++)
    v1_events[i] = (hsa_ven_amd_aqlprofile_event_t){(hsa_ven_amd_aqlprofile_block_name_t)blocks[i], 0, ids[i]};
  memset(&v1_profile, 0, sizeof v1_profile);
  v1_profile.agent = gpu;
  v1_profile.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
  v1_profile.events = v1_events;
  v1_profile.event_count = event_count;
  TOOL_CHECK(v1.hsa_ven_amd_aqlprofile_start(&v1_profile, NULL) == HSA_STATUS_SUCCESS, "start (sizes)");
  v1_profile.command_buffer.ptr = shared_alloc(v1_profile.command_buffer.size);
  v1_profile.output_buffer.ptr = shared_alloc(v1_profile.output_buffer.size);
  hsa_ext_amd_aql_pm4_packet_t p[3];
  memset(p, 0, sizeof p);
  TOOL_CHECK(v1.hsa_ven_amd_aqlprofile_start(&v1_profile, &p[0]) == HSA_STATUS_SUCCESS, "start");
  TOOL_CHECK(v1.hsa_ven_amd_aqlprofile_read(&v1_profile, &p[1]) == HSA_STATUS_SUCCESS, "read");
  TOOL_CHECK(v1.hsa_ven_amd_aqlprofile_stop(&v1_profile, &p[2]) == HSA_STATUS_SUCCESS, "stop");
  to_bytes(&p[0], 0, start_pkt);
  to_bytes(&p[1], 1, read_stop_pkts[0]);
  to_bytes(&p[2], 1, read_stop_pkts[1]);
}

static void print_value(uint32_t block, uint32_t index, uint32_t event, uint64_t value) {
  fprintf(stderr, "TOOL value pass=%u block=%u index=%u event=%u value=%llu\n", current_pass, block, index, event,
          (unsigned long long)value);
}

static hsa_status_t v2_value(v2_event_t e, uint64_t counter_id, uint64_t value, void* data) {
  (void)counter_id;
  (void)data;
  print_value(e.block_name, e.block_index, e.event_id, value);
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t v1_value(hsa_ven_amd_aqlprofile_info_type_t type, hsa_ven_amd_aqlprofile_info_data_t* d, void* data) {
  (void)data;
  if (type == HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA)
    print_value(d->pmc_data.event.block_name, d->pmc_data.event.block_index, d->pmc_data.event.counter_id,
                d->pmc_data.result);
  return HSA_STATUS_SUCCESS;
}

static uint32_t pass_count(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)d;
  (void)user_data;
  return passes;
}

static void on_event(const kreplay_event_t* e, void* user_data) {
  (void)user_data;
  if (e->kind == KREPLAY_EVENT_PASS_ENTER) {
    if (!built) {
      gpu.handle = e->dispatch->agent_handle;
      if (use_v2) build_v2();
      else build_v1();
      built = 1;
    }
    current_pass = e->pass;
    if (packets_executed) packets_executed(&executed_at_enter[0], &executed_at_enter[1], &executed_at_enter[2]);
    TOOL_CHECK(kreplay_pass_attach_packets(start_pkt, 1, KREPLAY_PACKET_BEFORE_PASS) == KREPLAY_STATUS_SUCCESS,
               "attach start");
    TOOL_CHECK(kreplay_pass_attach_packets(read_stop_pkts, 2, KREPLAY_PACKET_AFTER_PASS) == KREPLAY_STATUS_SUCCESS,
               "attach read and stop");
  }
  if (e->kind == KREPLAY_EVENT_PASS_EXIT) {
    hsa_status_t st = use_v2 ? v2.iterate(v2_set, v2_value, NULL)
                             : v1.hsa_ven_amd_aqlprofile_iterate_data(&v1_profile, v1_value, NULL);
    TOOL_CHECK(st == HSA_STATUS_SUCCESS, "iterate_data: %#x", st);
    if (packets_executed) {
      uint64_t now[3];
      packets_executed(&now[0], &now[1], &now[2]);
      fprintf(stderr, "TOOL packets pass=%u start=%llu read=%llu stop=%llu\n", e->pass,
              (unsigned long long)(now[0] - executed_at_enter[0]), (unsigned long long)(now[1] - executed_at_enter[1]),
              (unsigned long long)(now[2] - executed_at_enter[2]));
    }
  }
}

static int parse_events(const char* text) {
  const char* p = text;
  while (p && *p && event_count < MAX_EVENTS) {
    unsigned b, e;
    if (sscanf(p, "%u:%u", &b, &e) != 2) return 0;
    blocks[event_count] = b;
    ids[event_count] = e;
    event_count++;
    p = strchr(p, ',');
    if (p) p++;
  }
  return event_count > 0;
}

static int load_api(void) {
  if (use_v2) {
    void* h = dlopen("libhsa-amd-aqlprofile64.so.1", RTLD_NOW | RTLD_LOCAL);
    TOOL_CHECK(h != NULL, "dlopen libhsa-amd-aqlprofile64.so.1: %s", dlerror());
    if (!h) return 0;
    *(void**)&v2.register_agent = dlsym(h, "aqlprofile_register_agent");
    *(void**)&v2.create = dlsym(h, "aqlprofile_pmc_create_packets");
    *(void**)&v2.iterate = dlsym(h, "aqlprofile_pmc_iterate_data");
    TOOL_CHECK(v2.register_agent && v2.create && v2.iterate, "aqlprofile_* symbols missing");
    return v2.register_agent && v2.create && v2.iterate;
  }
  hsa_status_t st = hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof v1, &v1);
  TOOL_CHECK(st == HSA_STATUS_SUCCESS, "hsa_system_get_major_extension_table(AQLPROFILE): %#x", st);
  return st == HSA_STATUS_SUCCESS;
}

static kreplay_callbacks_t callbacks;

bool OnLoad(void* table, uint64_t runtime_version, uint64_t failed_tool_count, const char* const* failed_tool_names) {
  (void)table;
  (void)runtime_version;
  (void)failed_tool_count;
  (void)failed_tool_names;
  const char* api = getenv("PMC_TOOL_API");
  use_v2 = api && strcmp(api, "v2") == 0;
  const char* n = getenv("PMC_TOOL_PASSES");
  if (n) passes = (uint32_t)strtoul(n, NULL, 10);
  const char* ev = getenv("PMC_TOOL_EVENTS");
  TOOL_CHECK(ev && parse_events(ev), "PMC_TOOL_EVENTS must be block:event[,block:event...]");
  if (!load_api()) return true;
  *(void**)&packets_executed = dlsym(RTLD_DEFAULT, "vhsa_pmc_packets_executed");
  if (!packets_executed) *(void**)&packets_executed = dlsym(RTLD_DEFAULT, "vkfd_pmc_packets_executed");
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.size = sizeof callbacks;
  callbacks.pass_count = pass_count;
  callbacks.on_event = on_event;
  callbacks.flags = KREPLAY_CLIENT_PASS_EVENTS_ALWAYS;
  kreplay_status_t st = kreplay_register(&callbacks);
  TOOL_CHECK(st == KREPLAY_STATUS_SUCCESS, "kreplay_register: %s", kreplay_status_string(st));
  return true;
}

void OnUnload(void) { fprintf(stderr, failures ? "TOOL FAILED %d\n" : "TOOL OK\n", failures); }
