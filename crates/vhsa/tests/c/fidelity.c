/* Observable behaviour that must match the real runtime (ROCR): status codes for bad arguments,
 * hsa_status_string coverage, signal waits with unknown conditions or destroyed signals, queue
 * creation limits, packet error statuses and queue suspension after a packet error, and
 * hsa_amd_pointer_info argument handling. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "vhsa_test.h"

/* Not in the installed (ROCm 5.2) headers. */
#define STATUS_ERROR_OUT_OF_REGISTERS 45
hsa_status_t hsa_amd_queue_intercept_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                            void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                            uint32_t private_segment_size, uint32_t group_segment_size,
                                            hsa_queue_t** queue);

static void check_status_string(hsa_status_t status, const char* name) {
  const char* s = NULL;
  hsa_status_t r = hsa_status_string(status, &s);
  if (r != HSA_STATUS_SUCCESS || s == NULL || strncmp(s, name, strlen(name)) != 0) {
    fprintf(stderr, "hsa_status_string(0x%x) returned 0x%x, text '%s', expected a text starting with %s\n",
            (unsigned)status, (unsigned)r, s ? s : "(null)", name);
    exit(1);
  }
}

static void* destroy_later(void* arg) {
  usleep(200000);
  hsa_signal_destroy(*(hsa_signal_t*)arg);
  return NULL;
}

static int errors;
static hsa_status_t last_error;
static void queue_error(hsa_status_t status, hsa_queue_t* source, void* data) {
  (void)source;
  (void)data;
  last_error = status;
  __atomic_fetch_add(&errors, 1, __ATOMIC_SEQ_CST);
}

static void wait_errors(int n) {
  for (int i = 0; i < 100000 && __atomic_load_n(&errors, __ATOMIC_SEQ_CST) < n; i++) usleep(1000);
  CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == n);
}

static void noop_kernel(const hsa_kernel_dispatch_packet_t* packet, void* data) {
  (void)packet;
  (void)data;
}

static bool never_called(hsa_signal_value_t value, void* arg) {
  (void)value;
  (void)arg;
  abort();
}

static void* counting_alloc(size_t n) { return malloc(n); }

/* Submits `pkt` on a fresh queue, expects the error callback with `expected`, then checks that
 * the queue is suspended: a valid dispatch behind the bad packet does not run. */
static void check_packet_error(hsa_agent_t gpu, const void* bad, hsa_status_t expected, uint64_t good_kernel) {
  hsa_queue_t* q = NULL;
  errors = 0;
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, &q));
  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  aql_submit(q, bad);
  wait_errors(1);
  if (last_error != expected) {
    fprintf(stderr, "packet error status 0x%x, expected 0x%x\n", (unsigned)last_error, (unsigned)expected);
    exit(1);
  }
  hsa_kernel_dispatch_packet_t good = test_dispatch(good_kernel, NULL, done);
  aql_submit(q, &good);
  /* One second is plenty for a live queue; a suspended one never runs it. */
  CHECK(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 1000000000ull, HSA_WAIT_STATE_BLOCKED) == 1);
  CHECK(errors == 1);
  CHECK_OK(hsa_queue_destroy(q));
  CHECK_OK(hsa_signal_destroy(done));
}

int main(void) {
  /* hsa_status_string knows every status the runtime defines, also before hsa_init. */
  check_status_string((hsa_status_t)HSA_STATUS_ERROR_MEMORY_FAULT, "HSA_STATUS_ERROR_MEMORY_FAULT");
  check_status_string((hsa_status_t)STATUS_ERROR_OUT_OF_REGISTERS, "HSA_STATUS_ERROR_OUT_OF_REGISTERS");
  check_status_string((hsa_status_t)0x2000, "HSA_EXT_STATUS_ERROR_INVALID_PROGRAM");
  check_status_string((hsa_status_t)0x2006, "HSA_EXT_STATUS_ERROR_DIRECTIVE_MISMATCH");
  check_status_string((hsa_status_t)0x3000, "HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED");
  check_status_string((hsa_status_t)0x3003, "HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED");
  const char* str = NULL;
  CHECK_STATUS(hsa_status_string((hsa_status_t)0x1999, &str), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  hsa_agent_t gpu = ag.gpus[0];

  /* Signal waits: an unknown condition returns 0 at once, whatever the value. */
  hsa_signal_t s, t;
  CHECK_OK(hsa_signal_create(5, 0, NULL, &s));
  CHECK_OK(hsa_signal_create(0, 0, NULL, &t));
  CHECK(hsa_signal_wait_scacquire(s, (hsa_signal_condition_t)7, 5, 2000000000ull, HSA_WAIT_STATE_BLOCKED) == 0);
  CHECK(hsa_signal_wait_relaxed(s, (hsa_signal_condition_t)7, 5, 2000000000ull, HSA_WAIT_STATE_ACTIVE) == 0);
  /* Each condition returns the observed value; a timeout returns the current value. */
  CHECK(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_EQ, 5, 0, HSA_WAIT_STATE_ACTIVE) == 5);
  CHECK(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_NE, 4, 0, HSA_WAIT_STATE_ACTIVE) == 5);
  CHECK(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_LT, 6, 0, HSA_WAIT_STATE_ACTIVE) == 5);
  CHECK(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_GTE, 5, 0, HSA_WAIT_STATE_ACTIVE) == 5);
  CHECK(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_LT, 5, 1000000, HSA_WAIT_STATE_BLOCKED) == 5);
  /* Atomic read-modify-writes: exchange and CAS return the old value. */
  CHECK(hsa_signal_exchange_scacq_screl(s, 9) == 5);
  CHECK(hsa_signal_cas_scacq_screl(s, 1, 2) == 9 && hsa_signal_load_relaxed(s) == 9);
  CHECK(hsa_signal_cas_relaxed(s, 9, 2) == 9 && hsa_signal_load_relaxed(s) == 2);

  /* wait_any: an unknown condition ends the wait with UINT32_MAX even if a later signal holds. */
  hsa_signal_t list[2] = {s, t};
  hsa_signal_condition_t conds[2] = {(hsa_signal_condition_t)9, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t values[2] = {0, 0};
  hsa_signal_value_t seen = -1;
  CHECK(hsa_amd_signal_wait_any(2, list, conds, values, 2000000000ull, HSA_WAIT_STATE_BLOCKED, &seen) == UINT32_MAX);
  conds[0] = HSA_SIGNAL_CONDITION_GTE;
  values[0] = 100;
  CHECK(hsa_amd_signal_wait_any(2, list, conds, values, UINT64_MAX, HSA_WAIT_STATE_BLOCKED, &seen) == 1 && seen == 0);

  /* A signal destroyed while a thread waits on it: the wait returns 0. */
  hsa_signal_t doomed;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &doomed));
  pthread_t th;
  CHECK(pthread_create(&th, NULL, destroy_later, &doomed) == 0);
  CHECK(hsa_signal_wait_scacquire(doomed, HSA_SIGNAL_CONDITION_EQ, 77, 30000000000ull, HSA_WAIT_STATE_BLOCKED) == 0);
  pthread_join(th, NULL);

  /* Signal handle 0 is an invalid argument, a stale handle an invalid signal; consumers must
   * be distinct. */
  hsa_signal_t zero = {0};
  CHECK_STATUS(hsa_signal_destroy(zero), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_signal_destroy(doomed), HSA_STATUS_ERROR_INVALID_SIGNAL);
  CHECK_STATUS(hsa_amd_signal_async_handler(zero, HSA_SIGNAL_CONDITION_EQ, 0, never_called, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_agent_t twice[2] = {gpu, gpu};
  hsa_signal_t extra;
  CHECK_STATUS(hsa_signal_create(0, 2, twice, &extra), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* Signal groups need at least one signal. */
  hsa_signal_group_t group;
  CHECK_STATUS(hsa_signal_group_create(0, list, 0, NULL, &group), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  /* Queue creation: argument checks come before the agent; the CPU has no packet processor
   * (generic error); sizes above QUEUE_MAX_SIZE are out of resources; below QUEUE_MIN_SIZE invalid. */
  hsa_queue_t* q = NULL;
  hsa_agent_t bogus = {0x12345};
  uint32_t max_size = 0, min_size = 0;
  CHECK_OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size));
  CHECK_OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &min_size));
  CHECK_STATUS(hsa_queue_create(bogus, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_queue_create(bogus, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_STATUS(hsa_queue_create(ag.cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR);
  CHECK_STATUS(hsa_queue_create(gpu, max_size * 2, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK_STATUS(hsa_queue_create(gpu, min_size / 2, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 262144, 0, &q), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  /* CU masks are given in whole 32-bit words of bits. */
  uint32_t mask[2] = {~0u, ~0u};
  CHECK_STATUS(hsa_amd_queue_cu_set_mask(q, 33, mask), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_queue_cu_set_mask(q, 64, mask));
  CHECK_OK(hsa_queue_destroy(q));
  CHECK_STATUS(hsa_amd_queue_intercept_create(gpu, 2, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_queue_intercept_create(ag.cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q), HSA_STATUS_ERROR);

  /* Packet errors carry the status the real runtime maps the packet processor's error to, and
   * suspend the queue. */
  uint64_t noop = vhsa_native_kernel_create("fidelity_noop", noop_kernel, NULL);
  hsa_signal_t none = {0};
  hsa_kernel_dispatch_packet_t bad = test_dispatch(0, NULL, none);
  check_packet_error(gpu, &bad, HSA_STATUS_ERROR_INVALID_CODE_OBJECT, noop);
  bad = test_dispatch(noop, NULL, none);
  bad.setup = 0;
  check_packet_error(gpu, &bad, HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, noop);
  bad = test_dispatch(noop, NULL, none);
  bad.header = 9;
  check_packet_error(gpu, &bad, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, noop);
  bad = test_dispatch(noop, NULL, none);
  bad.header = aql_header(HSA_PACKET_TYPE_AGENT_DISPATCH, 0);
  check_packet_error(gpu, &bad, HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, noop);

  /* Memory: argument checks come before the pool; unknown allocation flags are ignored; freeing
   * what was not allocated is an invalid allocation. */
  hsa_amd_memory_pool_t dev_pool = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  hsa_amd_memory_pool_t bad_pool = {0x4242};
  hsa_region_t bad_region = {0x4242};
  void* p = NULL;
  CHECK_STATUS(hsa_amd_memory_pool_allocate(bad_pool, 0, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_pool_allocate(bad_pool, 64, 0, &p), HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  CHECK_STATUS(hsa_memory_allocate(bad_region, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_pool, 4096, 1u << 20, &p));
  CHECK_STATUS(hsa_amd_memory_pool_free((char*)p + 8), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  int on_stack = 0;
  CHECK_STATUS(hsa_memory_free(&on_stack), HSA_STATUS_ERROR_INVALID_ALLOCATION);
  CHECK_OK(hsa_amd_memory_pool_free(NULL));

  /* Agent access to pools: own pools and (for the CPU) system memory by default; a GPU must be
   * allowed access to system memory, kernarg included; no link to itself (zeroed link info). */
  hsa_amd_memory_pool_t sys_pool = test_pool(ag.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  hsa_amd_memory_pool_t karg_pool =
      test_pool(ag.cpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
  hsa_amd_memory_pool_access_t access;
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(gpu, dev_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  CHECK(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(ag.cpu, sys_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  CHECK(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(gpu, sys_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  CHECK(access == HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(gpu, karg_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  CHECK(access == HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(ag.cpu, dev_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  CHECK(access == HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT);
  hsa_amd_memory_pool_link_info_t link;
  memset(&link, 0xFF, sizeof link);
  CHECK_OK(hsa_amd_agent_memory_pool_get_info(gpu, dev_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, &link));
  CHECK(link.min_latency == 0 && link.max_bandwidth == 0 && link.link_type == 0 && link.numa_distance == 0);

  /* Async copies: a zero-size copy does nothing, not even signal completion; dep_signals must
   * be NULL exactly when there are none. */
  hsa_signal_t c0, c1;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &c0));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &c1));
  CHECK_STATUS(hsa_amd_memory_async_copy(p, gpu, (char*)p + 64, gpu, 4, 0, &c1, c1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy(p, gpu, (char*)p + 64, gpu, 4, 1, NULL, c1), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy(p, gpu, (char*)p + 64, gpu, 4, 0, NULL, zero), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_memory_async_copy(p, gpu, (char*)p + 64, gpu, 0, 0, NULL, c0));
  CHECK_OK(hsa_amd_memory_async_copy(p, gpu, (char*)p + 64, gpu, 4, 0, NULL, c1));
  test_wait_eq(c1, 0, "a 4-byte async copy");
  CHECK(hsa_signal_load_scacquire(c0) == 1);
  CHECK_OK(hsa_signal_destroy(c0));
  CHECK_OK(hsa_signal_destroy(c1));

  /* allow_access: flags must be NULL, and every argument is checked before the agents. */
  uint32_t flags = 0;
  CHECK_STATUS(hsa_amd_agents_allow_access(1, &gpu, &flags, p), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_agents_allow_access(1, &bogus, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(hsa_amd_agents_allow_access(1, &gpu, NULL, p));

  /* pointer_info: NULL pointer and an unset size are invalid; the accessible list is produced
   * only when alloc, count and list pointers are all given, and never for unknown memory. */
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_STATUS(hsa_amd_pointer_info(NULL, &info, NULL, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  info.size = 0;
  CHECK_STATUS(hsa_amd_pointer_info(p, &info, NULL, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  info.size = sizeof info;
  uint32_t count = 77;
  hsa_agent_t* acc = (hsa_agent_t*)&on_stack;
  CHECK_OK(hsa_amd_pointer_info(p, &info, NULL, &count, &acc));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA && count == 77 && acc == (hsa_agent_t*)&on_stack);
  CHECK_OK(hsa_amd_pointer_info(&on_stack, &info, counting_alloc, &count, &acc));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN && count == 77 && acc == (hsa_agent_t*)&on_stack);
  CHECK_OK(hsa_amd_pointer_info((char*)p + 100, &info, counting_alloc, &count, &acc));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA && info.agentBaseAddress == p && info.sizeInBytes == 4096);
  CHECK(count == 1 && acc[0].handle == gpu.handle);
  free(acc);
  CHECK_OK(hsa_amd_memory_pool_free(p));

  CHECK_OK(hsa_signal_destroy(s));
  CHECK_OK(hsa_signal_destroy(t));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
