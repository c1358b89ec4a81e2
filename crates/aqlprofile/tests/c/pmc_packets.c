/* Collects counter groups around a kernel dispatch at the packet level, through the aqlprofile
 * v1 extension table (`v1`) or the v2 library (`v2`), on whichever HSA runtime
 * LD_LIBRARY_PATH picks (vhsa, or ROCR on vkfd).
 *
 *   pmc_packets <code object> <kernel> v1|v2 <grid> <workgroup> <group>...
 *
 * A group is `block:event,block:event,...` (aqlprofile block ids and event ids). For each group:
 * start (vendor packet), the dispatch (barrier bit), read and stop (vendor packets, barrier bit),
 * then every value: `value <group> <block> <event> <sample> <value>`. With PMC_SECOND_QUEUE=1 the
 * kernel also runs on a second queue between start and read. A group the library refuses prints
 * `refused <group> <message>` and the program exits 3. Counter packets executed by the runtime
 * are printed per group: `packets <group> <start> <read> <stop>` (deltas).
 *
 * With PMC_SKIP_START=1 the start packet is left out: the read then reports no values, the
 * queue runs on (the stop completes), and the program prints `iterate-failed <group> <message>`
 * and exits 5.
 *
 * Mode `foreign` submits what a real aqlprofile submits instead: a format-1 packet whose
 * indirect buffer writes a counter register (SET_UCONFIG_REG), on a queue with an error
 * callback; the callback prints `queue-error <status>` and the program exits 4.
 *
 * With PMC_BENCH=N (v2 only) each group also times N plain dispatches against N counter windows
 * (start, dispatch, read, stop, the values read back), alternating, and prints the fastest of
 * each: `bench <group> <plain ns> <counter ns>`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_aqlprofile.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aql_submit.h"

#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)
#define CHECK_OK(call) CHECK((call) == HSA_STATUS_SUCCESS)

/* The v2 ABI (aqlprofile-sdk/aql_profile_v2.h is not installed with ROCm 5.2): the layouts of
 * crates/hsa-abi/src/aqlprofile.rs. */
typedef struct { uint64_t handle; } v2_handle_t;
typedef struct { uint64_t handle; } v2_agent_t;
typedef struct {
  uint32_t block_index, event_id, flags, block_name;
} v2_event_t;
typedef struct {
  const char* gfxip;
  uint32_t xcc, se, cu, sa_per_se;
} v2_agent_info_t;
typedef struct {
  v2_agent_t agent;
  const v2_event_t* events;
  uint32_t count;
} v2_profile_t;
typedef struct {
  hsa_ext_amd_aql_pm4_packet_t start, stop, read;
} v2_packets_t;
typedef hsa_status_t (*v2_alloc_t)(void**, uint64_t, uint32_t, void*);
typedef void (*v2_dealloc_t)(void*, void*);
typedef hsa_status_t (*v2_copy_t)(void*, const void*, size_t, void*);
typedef hsa_status_t (*v2_data_t)(v2_event_t, uint64_t, uint64_t, void*);

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t host_pool;
static int group_no;

static hsa_status_t find_agents(hsa_agent_t a, void* d) {
  (void)d;
  hsa_device_type_t t;
  CHECK_OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_GPU && gpu.handle == 0) gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU && cpu.handle == 0) cpu = a;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void* d) {
  (void)d;
  uint32_t flags = 0;
  hsa_amd_segment_t seg;
  CHECK_OK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK_OK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && host_pool.handle == 0) host_pool = p;
  return HSA_STATUS_SUCCESS;
}

static void* host_alloc(size_t n) {
  void* p = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(host_pool, n, 0, &p));
  CHECK_OK(hsa_amd_agents_allow_access(1, &gpu, NULL, p));
  memset(p, 0, n);
  return p;
}

static hsa_status_t v2_alloc(void** p, uint64_t n, uint32_t flags, void* ud) {
  (void)flags;
  (void)ud;
  *p = host_alloc(n);
  return HSA_STATUS_SUCCESS;
}
static void v2_dealloc(void* p, void* ud) {
  (void)ud;
  hsa_amd_memory_pool_free(p);
}
static hsa_status_t v2_copy(void* d, const void* s, size_t n, void* ud) {
  (void)ud;
  memcpy(d, s, n);
  return HSA_STATUS_SUCCESS;
}

typedef void (*packets_executed_t)(uint64_t*, uint64_t*, uint64_t*);
static void executed(uint64_t v[3]) {
  static packets_executed_t f;
  if (!f) f = (packets_executed_t)dlsym(RTLD_DEFAULT, "vhsa_pmc_packets_executed");
  if (!f) f = (packets_executed_t)dlsym(RTLD_DEFAULT, "vkfd_pmc_packets_executed");
  CHECK(f != NULL);
  f(&v[0], &v[1], &v[2]);
}

typedef struct {
  uint64_t kernel_object;
  void* kernarg;
  uint32_t grid, wg;
  hsa_queue_t *q, *q2;
} launch_t;

static void submit_vendor(hsa_queue_t* q, hsa_ext_amd_aql_pm4_packet_t p, int barrier, hsa_signal_t done) {
  p.header = aql_header(HSA_PACKET_TYPE_VENDOR_SPECIFIC, barrier);
  p.completion_signal = done;
  aql_submit(q, &p);
}

static void wait_zero(hsa_signal_t s) {
  while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, 120000000000ull, HSA_WAIT_STATE_BLOCKED) != 0) {
  }
}

static void dispatch_on(launch_t* l, hsa_queue_t* q, int barrier, hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t d = aql_dispatch_packet(l->kernel_object, l->kernarg, l->grid, (uint16_t)l->wg, done);
  d.header = aql_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier);
  d.group_segment_size = 1024;
  aql_submit(q, &d);
}

/* Submits start, the dispatch, read and stop; waits for stop. */
static void run_window(launch_t* l, hsa_ext_amd_aql_pm4_packet_t start, hsa_ext_amd_aql_pm4_packet_t read,
                       hsa_ext_amd_aql_pm4_packet_t stop) {
  hsa_signal_t started, done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &started));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  if (getenv("PMC_SKIP_START")) {
    hsa_signal_store_screlease(started, 0);
  } else {
    submit_vendor(l->q, start, 0, started);
  }
  wait_zero(started);
  if (getenv("PMC_SECOND_QUEUE")) {
    hsa_signal_t other;
    CHECK_OK(hsa_signal_create(1, 0, NULL, &other));
    dispatch_on(l, l->q2, 0, other);
    wait_zero(other);
    hsa_signal_destroy(other);
  }
  dispatch_on(l, l->q, 1, (hsa_signal_t){0});
  submit_vendor(l->q, read, 1, (hsa_signal_t){0});
  submit_vendor(l->q, stop, 1, done);
  wait_zero(done);
  hsa_signal_destroy(started);
  hsa_signal_destroy(done);
}

static int parse_group(const char* s, uint32_t blocks[], uint32_t events[]) {
  int n = 0;
  while (*s && n < 64) {
    char* end;
    blocks[n] = (uint32_t)strtoul(s, &end, 10);
    CHECK(*end == ':');
    events[n] = (uint32_t)strtoul(end + 1, &end, 10);
    n++;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

static hsa_status_t v1_value(hsa_ven_amd_aqlprofile_info_type_t t, hsa_ven_amd_aqlprofile_info_data_t* d, void* ud) {
  (void)ud;
  CHECK(t == HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA);
  printf("value %d %u %u %u %llu\n", group_no, d->pmc_data.event.block_name, d->pmc_data.event.counter_id,
         d->sample_id, (unsigned long long)d->pmc_data.result);
  return HSA_STATUS_SUCCESS;
}

static int run_v1(launch_t* l, const uint32_t* blocks, const uint32_t* events, int n) {
  hsa_ven_amd_aqlprofile_pfn_t t;
  memset(&t, 0, sizeof t);
  bool ok = false;
  uint16_t minor = 0;
  CHECK_OK(hsa_system_major_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, 1, &minor, &ok));
  CHECK(ok);
  CHECK_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof t, &t));
  CHECK(t.hsa_ven_amd_aqlprofile_version_major() == 2);
  hsa_ven_amd_aqlprofile_event_t ev[64];
  for (int i = 0; i < n; i++) {
    ev[i] = (hsa_ven_amd_aqlprofile_event_t){(hsa_ven_amd_aqlprofile_block_name_t)blocks[i], 0, events[i]};
    bool valid = false;
    CHECK_OK(t.hsa_ven_amd_aqlprofile_validate_event(gpu, &ev[i], &valid));
    CHECK(valid);
  }
  hsa_ven_amd_aqlprofile_profile_t p;
  memset(&p, 0, sizeof p);
  p.agent = gpu;
  p.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
  p.events = ev;
  p.event_count = (uint32_t)n;
  if (t.hsa_ven_amd_aqlprofile_start(&p, NULL) != HSA_STATUS_SUCCESS) {
    const char* e = "";
    t.hsa_ven_amd_aqlprofile_error_string(&e);
    printf("refused %d %s\n", group_no, e);
    return 3;
  }
  p.command_buffer.ptr = host_alloc(p.command_buffer.size);
  p.output_buffer.ptr = host_alloc(p.output_buffer.size);
  hsa_ext_amd_aql_pm4_packet_t start, read, stop;
  memset(&start, 0, sizeof start);
  read = stop = start;
  CHECK_OK(t.hsa_ven_amd_aqlprofile_start(&p, &start));
  CHECK_OK(t.hsa_ven_amd_aqlprofile_read(&p, &read));
  CHECK_OK(t.hsa_ven_amd_aqlprofile_stop(&p, &stop));
  run_window(l, start, read, stop);
  if (t.hsa_ven_amd_aqlprofile_iterate_data(&p, v1_value, NULL) != HSA_STATUS_SUCCESS) {
    const char* e = "";
    t.hsa_ven_amd_aqlprofile_error_string(&e);
    printf("iterate-failed %d %s\n", group_no, e);
    return 5;
  }
  return 0;
}

static hsa_status_t v2_value(v2_event_t e, uint64_t sample, uint64_t value, void* ud) {
  (void)ud;
  printf("value %d %u %u %llu %llu\n", group_no, e.block_name, e.event_id, (unsigned long long)sample,
         (unsigned long long)value);
  return HSA_STATUS_SUCCESS;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static hsa_status_t v2_discard(v2_event_t e, uint64_t sample, uint64_t value, void* ud) {
  (void)e;
  (void)sample;
  *(uint64_t*)ud += value;
  return HSA_STATUS_SUCCESS;
}

/* Times `n` plain dispatches against `n` counter windows, alternating; prints the fastest. */
static void bench_windows(launch_t* l, const v2_packets_t* pk, v2_handle_t h,
                          hsa_status_t (*iterate)(v2_handle_t, v2_data_t, void*), int n) {
  uint64_t plain = UINT64_MAX, counted = UINT64_MAX, sink = 0;
  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  for (int i = 0; i < n; i++) {
    uint64_t t0 = now_ns();
    hsa_signal_store_screlease(done, 1);
    dispatch_on(l, l->q, 1, done);
    wait_zero(done);
    uint64_t t1 = now_ns();
    run_window(l, pk->start, pk->read, pk->stop);
    CHECK_OK(iterate(h, v2_discard, &sink));
    uint64_t t2 = now_ns();
    if (t1 - t0 < plain) plain = t1 - t0;
    if (t2 - t1 < counted) counted = t2 - t1;
  }
  hsa_signal_destroy(done);
  printf("bench %d %llu %llu\n", group_no, (unsigned long long)plain, (unsigned long long)counted);
}

#define SYM(lib, name) dlsym(lib, name)

static int run_v2(launch_t* l, const uint32_t* blocks, const uint32_t* events, int n) {
  void* lib = dlopen("libhsa-amd-aqlprofile64.so.1", RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != NULL);
  hsa_status_t (*reg)(v2_agent_t*, const v2_agent_info_t*) = (hsa_status_t(*)(v2_agent_t*, const v2_agent_info_t*))SYM(lib, "aqlprofile_register_agent");
  hsa_status_t (*create)(v2_handle_t*, v2_packets_t*, v2_profile_t, v2_alloc_t, v2_dealloc_t, v2_copy_t, void*) =
      (hsa_status_t(*)(v2_handle_t*, v2_packets_t*, v2_profile_t, v2_alloc_t, v2_dealloc_t, v2_copy_t, void*))SYM(lib, "aqlprofile_pmc_create_packets");
  hsa_status_t (*iterate)(v2_handle_t, v2_data_t, void*) = (hsa_status_t(*)(v2_handle_t, v2_data_t, void*))SYM(lib, "aqlprofile_pmc_iterate_data");
  void (*del)(v2_handle_t) = (void (*)(v2_handle_t))SYM(lib, "aqlprofile_pmc_delete_packets");
  hsa_status_t (*error_string)(const char**) = (hsa_status_t(*)(const char**))SYM(lib, "hsa_ven_amd_aqlprofile_error_string");
  CHECK(reg && create && iterate && del && error_string);
  char name[64] = {0};
  uint32_t se = 0, cu = 0, xcc = 1;
  CHECK_OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
  CHECK_OK(hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES, &se));
  CHECK_OK(hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cu));
  if (hsa_agent_get_info(gpu, (hsa_agent_info_t)0xA111, &xcc) != HSA_STATUS_SUCCESS) xcc = 1;
  v2_agent_info_t info = {name, xcc, se, cu, 1};
  v2_agent_t agent;
  CHECK_OK(reg(&agent, &info));
  v2_event_t ev[64];
  for (int i = 0; i < n; i++) ev[i] = (v2_event_t){0, events[i], 0, blocks[i]};
  v2_profile_t prof = {agent, ev, (uint32_t)n};
  v2_handle_t h;
  v2_packets_t pk;
  memset(&pk, 0, sizeof pk);
  if (create(&h, &pk, prof, v2_alloc, v2_dealloc, v2_copy, NULL) != HSA_STATUS_SUCCESS) {
    const char* e = "";
    error_string(&e);
    printf("refused %d %s\n", group_no, e);
    return 3;
  }
  run_window(l, pk.start, pk.read, pk.stop);
  if (iterate(h, v2_value, NULL) != HSA_STATUS_SUCCESS) {
    const char* e = "";
    error_string(&e);
    printf("iterate-failed %d %s\n", group_no, e);
    del(h);
    return 5;
  }
  const char* bench = getenv("PMC_BENCH");
  if (bench) bench_windows(l, &pk, h, iterate, atoi(bench));
  del(h);
  return 0;
}

static void on_queue_error(hsa_status_t status, hsa_queue_t* q, void* data) {
  (void)q;
  (void)data;
  printf("queue-error 0x%x\n", (unsigned)status);
  fflush(stdout);
  _exit(4);
}

/* A real aqlprofile's kind of counter packet: PM4 that writes a register. */
static int run_foreign(void) {
  hsa_queue_t* q;
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &q));
  uint32_t* ib = host_alloc(64);
  ib[0] = 3u << 30 | 1u << 16 | 0x79u << 8; /* SET_UCONFIG_REG, 2 body dwords */
  ib[1] = 0x3000;                          /* a counter select register offset */
  ib[2] = 4;
  hsa_ext_amd_aql_pm4_packet_t p;
  memset(&p, 0, sizeof p);
  uint32_t cmd[4] = {3u << 30 | 2u << 16 | 0x3Fu << 8, (uint32_t)(uintptr_t)ib, (uint32_t)((uintptr_t)ib >> 32) & 0xFFFF,
                     3u | 1u << 23};
  p.pm4_command[0] = 1; /* pm4_ib_format */
  memcpy(&p.pm4_command[1], cmd, sizeof cmd);
  p.pm4_command[9] = 10; /* dw_count_remain */
  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  submit_vendor(q, p, 1, done);
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 30000000000ull, HSA_WAIT_STATE_BLOCKED);
  printf("no queue error\n");
  return 0;
}

static uint64_t load_kernel(const char* path, const char* kernel, uint32_t* kernarg_size) {
  hsa_file_t f = open(path, 0);
  CHECK(f >= 0);
  hsa_code_object_reader_t r;
  CHECK_OK(hsa_code_object_reader_create_from_file(f, &r));
  hsa_executable_t e;
  CHECK_OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &e));
  CHECK_OK(hsa_executable_load_agent_code_object(e, gpu, r, NULL, NULL));
  CHECK_OK(hsa_executable_freeze(e, NULL));
  char sym[256];
  snprintf(sym, sizeof sym, "%s.kd", kernel);
  hsa_executable_symbol_t s;
  CHECK_OK(hsa_executable_get_symbol_by_name(e, sym, &gpu, &s));
  uint64_t obj = 0;
  CHECK_OK(hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &obj));
  CHECK_OK(hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, kernarg_size));
  return obj;
}

int main(int argc, char** argv) {
  CHECK(argc >= 6);
  CHECK_OK(hsa_init());
  CHECK_OK(hsa_iterate_agents(find_agents, NULL));
  CHECK(gpu.handle != 0 && cpu.handle != 0);
  CHECK_OK(hsa_amd_agent_iterate_memory_pools(cpu, find_pool, NULL));
  CHECK(host_pool.handle != 0);
  launch_t l;
  memset(&l, 0, sizeof l);
  uint32_t kernarg_size = 0;
  l.kernel_object = load_kernel(argv[1], argv[2], &kernarg_size);
  l.grid = (uint32_t)atoi(argv[4]);
  l.wg = (uint32_t)atoi(argv[5]);
  float* a = host_alloc(l.grid * sizeof(float));
  float* b = host_alloc(l.grid * sizeof(float));
  for (uint32_t i = 0; i < l.grid; i++) b[i] = 5.0f;
  struct {
    float* a;
    const float* b;
    float s;
  } args = {a, b, 2.0f};
  l.kernarg = host_alloc(kernarg_size > sizeof args ? kernarg_size : sizeof args);
  memcpy(l.kernarg, &args, sizeof args);
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &l.q));
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &l.q2));
  if (strcmp(argv[3], "foreign") == 0) return run_foreign();
  int status = 0;
  for (int g = 6; g < argc && status == 0; g++) {
    uint32_t blocks[64], events[64];
    int n = parse_group(argv[g], blocks, events);
    group_no = g - 6;
    uint64_t before[3], after[3];
    executed(before);
    status = strcmp(argv[3], "v1") == 0 ? run_v1(&l, blocks, events, n) : run_v2(&l, blocks, events, n);
    executed(after);
    printf("packets %d %llu %llu %llu\n", group_no, (unsigned long long)(after[0] - before[0]),
           (unsigned long long)(after[1] - before[1]), (unsigned long long)(after[2] - before[2]));
  }
  fflush(stdout);
  hsa_queue_destroy(l.q);
  hsa_queue_destroy(l.q2);
  CHECK_OK(hsa_shut_down());
  return status;
}
