/* Core runtime behaviour through the exported C API: status codes, topology, memory, pointer
 * information, copies, signals, async handlers, queues, packets, profiling. Prints "PASS". */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "vhsa_test.h"

typedef struct {
  uint32_t* out;
  uint32_t value;
} fill_args_t;

/* Native kernel: out[i] = value for i in [0, grid_size_x). */
static void fill_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  const fill_args_t* a = (const fill_args_t*)p->kernarg_address;
  for (uint32_t i = 0; i < p->grid_size_x; i++) a->out[i] = a->value;
}

static void count_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  __atomic_fetch_add((uint64_t*)user_data, 1, __ATOMIC_SEQ_CST);
}

static void sleep_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  usleep(2000);
}

/* An error callback that destroys the queue it reports on (on the queue's own processor). */
static int destroying_callback_calls;
static hsa_status_t destroying_callback_result = HSA_STATUS_ERROR;
static void destroy_on_error(hsa_status_t status, hsa_queue_t* source, void* data) {
  (void)status;
  (void)data;
  destroying_callback_result = hsa_queue_destroy(source);
  __atomic_fetch_add(&destroying_callback_calls, 1, __ATOMIC_SEQ_CST);
}

static int error_callback_calls;
static hsa_status_t error_callback_status;
static void queue_error(hsa_status_t status, hsa_queue_t* source, void* data) {
  (void)source;
  CHECK(data == (void*)&error_callback_calls);
  error_callback_status = status;
  __atomic_fetch_add(&error_callback_calls, 1, __ATOMIC_SEQ_CST);
}

typedef struct {
  int calls;
  hsa_signal_value_t last;
  int rearm_until;
} handler_state_t;

static bool async_handler(hsa_signal_value_t value, void* arg) {
  handler_state_t* h = (handler_state_t*)arg;
  h->last = value;
  int n = __atomic_add_fetch(&h->calls, 1, __ATOMIC_SEQ_CST);
  return n < h->rearm_until;
}

static hsa_status_t count_region(hsa_region_t region, void* data) {
  hsa_region_segment_t seg;
  hsa_status_t s = hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &seg);
  if (s != HSA_STATUS_SUCCESS) return s;
  if (seg == HSA_REGION_SEGMENT_KERNARG) ((int*)data)[1]++;
  ((int*)data)[0]++;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t stop_at_first(hsa_agent_t agent, void* data) {
  (void)agent;
  (*(int*)data)++;
  return HSA_STATUS_INFO_BREAK;
}

static void* alloc_cb(size_t n) { return malloc(n); }

static void* signal_later(void* arg) {
  usleep(20000);
  hsa_signal_store_screlease(*(hsa_signal_t*)arg, 7);
  return NULL;
}

int main(void) {
  /* Before hsa_init. */
  hsa_agent_t none = {0};
  char name[64];
  CHECK_STATUS(hsa_agent_get_info(none, HSA_AGENT_INFO_NAME, name), HSA_STATUS_ERROR_NOT_INITIALIZED);
  hsa_signal_t sig;
  CHECK_STATUS(hsa_signal_create(1, 0, NULL, &sig), HSA_STATUS_ERROR_NOT_INITIALIZED);
  CHECK_STATUS(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
  uint64_t early = vhsa_native_kernel_create("fill", fill_kernel, NULL);
  CHECK(early != 0);
  CHECK(vhsa_native_kernel_create(NULL, fill_kernel, NULL) == 0);
  CHECK(vhsa_native_kernel_create("x", NULL, NULL) == 0);

  /* Reference counting. */
  CHECK_OK(hsa_init());
  CHECK_OK(hsa_init());
  CHECK_OK(hsa_shut_down());
  test_agents_t ag = test_agents();
  hsa_agent_t gpu = ag.gpus[0];

  /* Status strings. */
  const char* str = NULL;
  CHECK_OK(hsa_status_string(HSA_STATUS_ERROR_INVALID_AGENT, &str));
  CHECK(str != NULL && strstr(str, "INVALID_AGENT") != NULL);
  CHECK_STATUS(hsa_status_string((hsa_status_t)0x7777, &str), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_status_string(HSA_STATUS_SUCCESS, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* Topology and bad arguments. */
  CHECK_OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
  CHECK(strcmp(name, "gfx942") == 0);
  hsa_isa_t isa;
  CHECK_OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_ISA, &isa));
  char isa_name[64];
  CHECK_OK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, isa_name));
  CHECK(strcmp(isa_name, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == 0);
  hsa_agent_t bogus = {12345};
  CHECK_STATUS(hsa_agent_get_info(bogus, HSA_AGENT_INFO_NAME, name), HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_STATUS(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_agent_get_info(gpu, (hsa_agent_info_t)0x7FFF, name), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_iterate_agents(NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  int visited = 0;
  CHECK_STATUS(hsa_iterate_agents(stop_at_first, &visited), HSA_STATUS_INFO_BREAK);
  CHECK(visited == 1);
  uint16_t major = 0;
  CHECK_OK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
  CHECK(major == 1);
  uint64_t freq = 0;
  CHECK_OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
  CHECK(freq == 1000000000ull);
  int regions[2] = {0, 0};
  CHECK_OK(hsa_agent_iterate_regions(gpu, count_region, regions));
  CHECK(regions[0] == 5 && regions[1] == 1); /* own coarse and fine global and group, then the system regions */

  /* Pools and their flags. */
  hsa_amd_memory_pool_t dev_pool = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  hsa_amd_memory_pool_t fine_pool = test_pool(ag.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  hsa_amd_memory_pool_t karg_pool = test_pool(ag.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT |
                                                          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  hsa_amd_segment_t seg;
  CHECK_OK(hsa_amd_memory_pool_get_info(dev_pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  CHECK(seg == HSA_AMD_SEGMENT_GLOBAL);
  /* The GROUP pool (LDS), as ROCR reports it: 64 KiB, no global flags, not allocatable. */
  hsa_amd_memory_pool_t group_pool = test_pool(gpu, 0);
  CHECK_OK(hsa_amd_memory_pool_get_info(group_pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  CHECK(seg == HSA_AMD_SEGMENT_GROUP);
  size_t group_size = 0;
  CHECK_OK(hsa_amd_memory_pool_get_info(group_pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &group_size));
  CHECK(group_size == 64 * 1024);
  bool group_alloc = true;
  CHECK_OK(hsa_amd_memory_pool_get_info(group_pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &group_alloc));
  CHECK(!group_alloc);
  hsa_amd_memory_pool_access_t group_access = 0;
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(ag.cpu, group_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &group_access));
  CHECK(group_access == HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED);
  void* p = NULL;
  CHECK_STATUS(hsa_amd_memory_pool_allocate(group_pool, 64, 0, &p), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  hsa_amd_memory_pool_t bad_pool = {999};
  CHECK_STATUS(hsa_amd_memory_pool_allocate(bad_pool, 64, 0, &p), HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  CHECK_STATUS(hsa_amd_memory_pool_allocate(dev_pool, 64, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_pool_allocate(dev_pool, 0, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* The fine-grained device pool: the GPU's memory, fine-grained, as ROCR reports it in an XGMI
   * hive; not accessible by all agents, reported as the GPU's memory. */
  hsa_amd_memory_pool_t dev_fine = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  CHECK(dev_fine.handle != dev_pool.handle);
  bool fine_by_all = true;
  CHECK_OK(hsa_amd_memory_pool_get_info(dev_fine, HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, &fine_by_all));
  CHECK(!fine_by_all);
  uint8_t* fine_dev = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_fine, 4096, 0, (void**)&fine_dev));
  hsa_amd_pointer_info_t fine_info;
  memset(&fine_info, 0, sizeof fine_info);
  fine_info.size = sizeof fine_info;
  CHECK_OK(hsa_amd_pointer_info(fine_dev, &fine_info, NULL, NULL, NULL));
  CHECK(fine_info.type == HSA_EXT_POINTER_TYPE_HSA && fine_info.agentOwner.handle == gpu.handle);
  CHECK(fine_info.global_flags == HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  CHECK_OK(hsa_amd_memory_pool_free(fine_dev));

  /* Allocations and pointer info: base, interior, foreign. */
  uint8_t* dev = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_pool, 10000, 0, (void**)&dev));
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  uint32_t n_acc = 0;
  hsa_agent_t* acc = NULL;
  CHECK_OK(hsa_amd_pointer_info(dev + 1234, &info, alloc_cb, &n_acc, &acc));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA);
  CHECK(info.agentBaseAddress == dev && info.sizeInBytes == 10000);
  CHECK(info.agentOwner.handle == gpu.handle);
  CHECK(info.global_flags == HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  CHECK(n_acc == 1 && acc[0].handle == gpu.handle);
  free(acc);
  CHECK_OK(hsa_amd_agents_allow_access(1, &ag.cpu, NULL, dev));
  CHECK_OK(hsa_amd_pointer_info(dev, &info, alloc_cb, &n_acc, &acc));
  CHECK(n_acc == 2);
  free(acc);
  CHECK_OK(hsa_amd_pointer_info_set_userdata(dev, (void*)0x1234));
  CHECK_OK(hsa_amd_pointer_info(dev + 9999, &info, NULL, NULL, NULL));
  CHECK(info.userData == (void*)0x1234);
  int on_stack = 0;
  CHECK_OK(hsa_amd_pointer_info(&on_stack, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
  CHECK_OK(hsa_amd_pointer_info(dev + 10000 + 4096, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
  CHECK_STATUS(hsa_amd_pointer_info(dev, NULL, NULL, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  uint8_t* karg = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(karg_pool, 256, 0, (void**)&karg));
  CHECK_OK(hsa_amd_pointer_info(karg, &info, NULL, NULL, NULL));
  CHECK(info.global_flags == (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED));
  CHECK(info.agentOwner.handle == ag.cpu.handle);

  /* EXECUTABLE allocations really are executable: run `mov eax, 42; ret` from one. */
  uint8_t* code = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(fine_pool, 4096, 1u << 2, (void**)&code));
  const uint8_t ret42[] = {0xB8, 42, 0, 0, 0, 0xC3};
  memcpy(code, ret42, sizeof ret42);
  int (*fn)(void);
  memcpy(&fn, &code, sizeof fn);
  CHECK(fn() == 42);

  /* Legacy regions. */
  void* legacy = NULL;
  hsa_region_t bad_region = {77};
  CHECK_STATUS(hsa_memory_allocate(bad_region, 64, &legacy), HSA_STATUS_ERROR_INVALID_REGION);

  /* Copies and counters. */
  vhsa_stats_reset();
  uint8_t host[10000];
  for (int i = 0; i < 10000; i++) host[i] = (uint8_t)i;
  CHECK_OK(hsa_memory_copy(dev, host, 10000));
  uint8_t back[10000];
  CHECK_OK(hsa_memory_copy(back, dev, 10000));
  CHECK(memcmp(host, back, sizeof back) == 0);
  CHECK_STATUS(hsa_memory_copy(NULL, host, 1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  vhsa_stats_t st;
  memset(&st, 0, sizeof st);
  CHECK_STATUS(vhsa_stats(&st), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(vhsa_stats(NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  st.size = sizeof st;
  CHECK_OK(vhsa_stats(&st));
  CHECK(st.bytes_host_to_device == 10000 && st.bytes_device_to_host == 10000 && st.copies == 2);

  /* Async copy with a dependency: nothing moves until the dependency reaches 0. */
  hsa_signal_t dep, done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &dep));
  CHECK_OK(hsa_amd_signal_create(1, 0, NULL, 0, &done));
  uint8_t* dev2 = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_pool, 10000, 0, (void**)&dev2));
  CHECK_OK(hsa_amd_memory_async_copy(dev2, gpu, dev, gpu, 10000, 1, &dep, done));
  CHECK(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 50000000, HSA_WAIT_STATE_BLOCKED) == 1);
  CHECK(dev2[5] == 0);
  hsa_signal_store_screlease(dep, 0);
  test_wait_eq(done, 0, "async copy completion");
  CHECK(memcmp(dev2, host, 10000) == 0);
  CHECK_OK(vhsa_stats(&st));
  CHECK(st.bytes_device_to_device == 10000);
  hsa_signal_t bad_sig = {42};
  CHECK_STATUS(hsa_amd_memory_async_copy(dev2, gpu, dev, gpu, 1, 0, NULL, bad_sig), HSA_STATUS_ERROR_INVALID_SIGNAL);
  CHECK_STATUS(hsa_amd_memory_async_copy(dev2, bogus, dev, gpu, 1, 0, NULL, done), HSA_STATUS_ERROR_INVALID_AGENT);

  /* Signals: operations, timeouts, waking a blocked waiter, destroyed handles. */
  CHECK_OK(hsa_signal_create(5, 0, NULL, &sig));
  hsa_signal_add_relaxed(sig, 3);
  CHECK(hsa_signal_load_relaxed(sig) == 8);
  hsa_signal_subtract_scacq_screl(sig, 2);
  hsa_signal_and_relaxed(sig, 0x4);
  CHECK(hsa_signal_load_scacquire(sig) == 4);
  hsa_signal_or_screlease(sig, 0x3);
  hsa_signal_xor_scacquire(sig, 0x1);
  CHECK(hsa_signal_load_scacquire(sig) == 6);
  CHECK(hsa_signal_exchange_scacq_screl(sig, 10) == 6);
  CHECK(hsa_signal_cas_screlease(sig, 10, 11) == 10);
  CHECK(hsa_signal_cas_relaxed(sig, 10, 12) == 11);
  CHECK(hsa_signal_wait_relaxed(sig, HSA_SIGNAL_CONDITION_LT, 0, 10000000, HSA_WAIT_STATE_BLOCKED) == 11);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, signal_later, &sig) == 0);
  CHECK(hsa_signal_wait_scacquire(sig, HSA_SIGNAL_CONDITION_EQ, 7, WAIT_BOUND_NS, HSA_WAIT_STATE_BLOCKED) == 7);
  pthread_join(th, NULL);

  /* Wait-any over several signals, and signal groups. */
  hsa_signal_t many[3];
  for (int i = 0; i < 3; i++) CHECK_OK(hsa_signal_create(1, 0, NULL, &many[i]));
  hsa_signal_condition_t conds[3] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t vals[3] = {0, 7, 0};
  hsa_signal_value_t satisfied = 0;
  CHECK(hsa_amd_signal_wait_any(3, many, conds, vals, 10000000, HSA_WAIT_STATE_BLOCKED, &satisfied) == UINT32_MAX);
  CHECK(pthread_create(&th, NULL, signal_later, &many[1]) == 0);
  CHECK(hsa_amd_signal_wait_any(3, many, conds, vals, WAIT_BOUND_NS, HSA_WAIT_STATE_BLOCKED, &satisfied) == 1);
  CHECK(satisfied == 7);
  pthread_join(th, NULL);
  hsa_signal_group_t group;
  CHECK_OK(hsa_signal_group_create(3, many, 0, NULL, &group));
  hsa_signal_t which;
  hsa_signal_value_t which_value;
  CHECK_OK(hsa_signal_group_wait_any_scacquire(group, conds, vals, HSA_WAIT_STATE_BLOCKED, &which, &which_value));
  CHECK(which.handle == many[1].handle && which_value == 7);
  CHECK_OK(hsa_signal_group_destroy(group));
  CHECK_STATUS(hsa_signal_group_destroy(group), HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);

  /* Async handler: re-armed while it returns true, then stops. */
  handler_state_t hs = {0, 0, 2};
  hsa_signal_t hsig;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &hsig));
  CHECK_OK(hsa_amd_signal_async_handler(hsig, HSA_SIGNAL_CONDITION_LT, 1, async_handler, &hs));
  CHECK_STATUS(hsa_amd_signal_async_handler(bad_sig, HSA_SIGNAL_CONDITION_LT, 1, async_handler, &hs),
               HSA_STATUS_ERROR_INVALID_SIGNAL);
  CHECK_STATUS(hsa_amd_signal_async_handler(hsig, HSA_SIGNAL_CONDITION_LT, 1, NULL, &hs),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_signal_store_screlease(hsig, 0);
  for (int spins = 0; __atomic_load_n(&hs.calls, __ATOMIC_SEQ_CST) < 2; spins++) {
    CHECK(spins < 120000);
    usleep(1000);
  }
  hsa_signal_store_screlease(hsig, 5);
  hsa_signal_store_screlease(hsig, -3);
  usleep(50000);
  CHECK(__atomic_load_n(&hs.calls, __ATOMIC_SEQ_CST) == 2);

  CHECK_OK(hsa_signal_destroy(sig));
  CHECK_STATUS(hsa_signal_destroy(sig), HSA_STATUS_ERROR_INVALID_SIGNAL);
  CHECK(hsa_signal_load_relaxed(sig) == 0);

  /* Queues: bad arguments. */
  hsa_queue_t* q = NULL;
  CHECK_STATUS(hsa_queue_create(ag.cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR);
  CHECK_STATUS(hsa_queue_create(gpu, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, queue_error, &error_callback_calls, 0, 0, &q));
  CHECK(q->size == 64 && q->base_address != NULL && q->doorbell_signal.handle != 0);

  /* A native kernel dispatch with profiling. */
  CHECK_OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  uint32_t* out = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_pool, 256 * 4, 0, (void**)&out));
  fill_args_t* args = (fill_args_t*)karg;
  args->out = out;
  args->value = 0xABCD;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  uint64_t before = 0;
  CHECK_OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &before));
  hsa_kernel_dispatch_packet_t pkt = test_dispatch(early, args, done);
  uint64_t idx = aql_submit(q, &pkt);
  test_wait_eq(done, 0, "fill kernel completion");
  for (int i = 0; i < 256; i++) CHECK(out[i] == 0xABCD);
  CHECK(hsa_queue_load_read_index_scacquire(q) == idx + 1);
  CHECK(((uint16_t*)q->base_address)[idx % 64 * 32] == HSA_PACKET_TYPE_INVALID);
  hsa_amd_profiling_dispatch_time_t t;
  CHECK_OK(hsa_amd_profiling_get_dispatch_time(gpu, done, &t));
  CHECK(t.start >= before && t.end >= t.start);
  uint64_t sys = 0;
  CHECK_OK(hsa_amd_profiling_convert_tick_to_system_domain(gpu, t.end, &sys));
  CHECK(sys == t.end);

  /* Ordering: a barrier-bit packet after slow kernels sees them complete; BARRIER_AND waits for
   * its dependency; BARRIER_OR for any. */
  uint64_t count = 0;
  uint64_t counter = vhsa_native_kernel_create("count", count_kernel, &count);
  uint64_t sleeper = vhsa_native_kernel_create("sleep", sleep_kernel, NULL);
  hsa_signal_t gate, done2;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &gate));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done2));
  hsa_barrier_and_packet_t bar;
  memset(&bar, 0, sizeof bar);
  bar.header = aql_header(HSA_PACKET_TYPE_BARRIER_AND, 1);
  bar.dep_signal[2] = gate;
  aql_submit(q, &bar);
  hsa_signal_store_relaxed(done, 1);
  pkt = test_dispatch(counter, NULL, done);
  aql_submit(q, &pkt);
  CHECK(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 30000000, HSA_WAIT_STATE_BLOCKED) == 1);
  CHECK(__atomic_load_n(&count, __ATOMIC_SEQ_CST) == 0);
  hsa_signal_store_screlease(gate, 0);
  test_wait_eq(done, 0, "dispatch behind a BARRIER_AND");
  CHECK(count == 1);

  hsa_signal_t never, fired;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &never));
  CHECK_OK(hsa_signal_create(0, 0, NULL, &fired));
  hsa_barrier_or_packet_t bor;
  memset(&bor, 0, sizeof bor);
  bor.header = aql_header(HSA_PACKET_TYPE_BARRIER_OR, 1);
  bor.dep_signal[0] = never;
  bor.dep_signal[1] = fired;
  bor.completion_signal = done2;
  aql_submit(q, &bor);
  test_wait_eq(done2, 0, "BARRIER_OR with one satisfied dependency");

  hsa_signal_store_relaxed(done, 3);
  pkt = test_dispatch(sleeper, NULL, done);
  aql_submit(q, &pkt);
  aql_submit(q, &pkt);
  pkt = test_dispatch(counter, NULL, done);
  pkt.header = aql_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  aql_submit(q, &pkt);
  test_wait_eq(done, 0, "three dispatches");
  CHECK(count == 2);

  /* A bad packet goes to its queue's error callback and suspends that queue; other queues keep
   * working. */
  hsa_queue_t* bq = NULL;
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, queue_error, &error_callback_calls, 0, 0, &bq));
  hsa_kernel_dispatch_packet_t badp = test_dispatch(0, NULL, done);
  aql_submit(bq, &badp);
  for (int i = 0; i < 100000 && __atomic_load_n(&error_callback_calls, __ATOMIC_SEQ_CST) < 1; i++) usleep(1000);
  CHECK(error_callback_calls == 1);
  CHECK(error_callback_status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  CHECK_OK(hsa_queue_destroy(bq));
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, queue_error, &error_callback_calls, 0, 0, &bq));
  hsa_kernel_dispatch_packet_t badtype = test_dispatch(counter, NULL, done);
  badtype.header = 9;
  aql_submit(bq, &badtype);
  for (int i = 0; i < 100000 && __atomic_load_n(&error_callback_calls, __ATOMIC_SEQ_CST) < 2; i++) usleep(1000);
  CHECK(error_callback_calls == 2);
  CHECK(error_callback_status == HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
  CHECK_OK(hsa_queue_destroy(bq));
  /* The error callback may destroy the queue itself: the processor stops and frees it after
   * the callback returns, and the runtime goes on. */
  for (int round = 0; round < 20; round++) {
    CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, destroy_on_error, NULL, 0, 0, &bq));
    aql_submit(bq, &badtype);
    for (int i = 0; i < 100000 && __atomic_load_n(&destroying_callback_calls, __ATOMIC_SEQ_CST) <= round; i++)
      usleep(1000);
    CHECK(destroying_callback_calls == round + 1);
    CHECK(destroying_callback_result == HSA_STATUS_SUCCESS);
  }
  CHECK_STATUS(hsa_queue_destroy(bq), HSA_STATUS_ERROR_INVALID_QUEUE);
  hsa_signal_store_relaxed(done, 1);
  pkt = test_dispatch(counter, NULL, done);
  aql_submit(q, &pkt);
  test_wait_eq(done, 0, "dispatch after bad packets on other queues");
  CHECK(error_callback_calls == 2);

  CHECK_OK(vhsa_stats(&st));
  CHECK(st.dispatches >= 5 && st.barrier_packets == 2);

  CHECK_OK(hsa_queue_destroy(q));
  CHECK_STATUS(hsa_queue_destroy(q), HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_OK(hsa_amd_memory_pool_free(dev));
  CHECK_STATUS(hsa_amd_memory_pool_free(dev + 8), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  CHECK_OK(hsa_amd_pointer_info(dev, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);

  CHECK_OK(hsa_shut_down());
  CHECK_STATUS(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name), HSA_STATUS_ERROR_NOT_INITIALIZED);
  CHECK_STATUS(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
  /* Initializing again works; the last shutdown stops queues that are still open. */
  CHECK_OK(hsa_init());
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  pkt = test_dispatch(counter, NULL, done);
  aql_submit(q, &pkt);
  test_wait_eq(done, 0, "dispatch after re-initialization");
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
