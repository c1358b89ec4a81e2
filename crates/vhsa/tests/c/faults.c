/* Fault injection through the C calls: pool allocation, copies (sync and async), symbol
 * iteration (executables and the loader extension), async-handler delay, hung kernel.
 * With argument "env", checks the VHSA_FAULTS settings the test runner put in the environment.
 * Prints "PASS". */
#define _GNU_SOURCE
#include <hsa/hsa_ven_amd_loader.h>
#include <unistd.h>

#include "vhsa_test.h"

static void nop_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
}

static int handler_calls;
static bool handler(hsa_signal_value_t value, void* arg) {
  (void)value;
  (void)arg;
  __atomic_fetch_add(&handler_calls, 1, __ATOMIC_SEQ_CST);
  return false;
}

static hsa_status_t count_executable(hsa_executable_t exe, void* data) {
  (void)exe;
  (*(int*)data)++;
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  int kernels;
  int found;
} symbol_count_t;

static hsa_status_t count_symbol(hsa_executable_t exe, hsa_executable_symbol_t sym, void* data) {
  (void)exe;
  symbol_count_t* c = (symbol_count_t*)data;
  hsa_symbol_kind_t kind;
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
  if (kind == HSA_SYMBOL_KIND_KERNEL) c->kernels++;
  uint32_t len = 0;
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
  char name[256] = {0};
  CHECK(len < sizeof name);
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
  if (getenv("FAULTS_DEBUG")) fprintf(stderr, "symbol %s kind %d len %u\n", name, (int)kind, len);
  if (len == strlen("fault_nop.kd") && strncmp(name, "fault_nop.kd", len) == 0) c->found = 1;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t count_agent_symbol(hsa_executable_t exe, hsa_agent_t agent, hsa_executable_symbol_t sym, void* data) {
  (void)agent;
  return count_symbol(exe, sym, data);
}

static hsa_executable_t found_exe;
static hsa_status_t remember_executable(hsa_executable_t exe, void* data) {
  (void)data;
  found_exe = exe;
  return HSA_STATUS_SUCCESS;
}

static void check_env_mode(test_agents_t ag) {
  /* VHSA_FAULTS="pool_alloc=2;copy_after=1;copy_count=1": the 2nd allocation and 2nd copy fail. */
  hsa_amd_memory_pool_t pool = test_pool(ag.gpus[0], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  void *a = NULL, *b = NULL, *c = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 64, 0, &a));
  CHECK_STATUS(hsa_amd_memory_pool_allocate(pool, 64, 0, &b), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 64, 0, &c));
  char host[64] = {1};
  CHECK_OK(hsa_memory_copy(a, host, 64));
  CHECK_STATUS(hsa_memory_copy(a, host, 64), HSA_STATUS_ERROR);
  CHECK_OK(hsa_memory_copy(a, host, 64));
}

int main(int argc, char** argv) {
  uint64_t nop = vhsa_native_kernel_create("fault_nop", nop_kernel, NULL);
  uint64_t stuck = vhsa_native_kernel_create("fault_stuck", nop_kernel, NULL);
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  if (argc > 1 && strcmp(argv[1], "env") == 0) {
    check_env_mode(ag);
    CHECK_OK(hsa_shut_down());
    printf("PASS\n");
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "ignored") == 0) {
    hsa_amd_memory_pool_t pool = test_pool(ag.gpus[0], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    void* a = NULL;
    CHECK_OK(hsa_amd_memory_pool_allocate(pool, 64, 0, &a));
    CHECK_OK(hsa_shut_down());
    printf("PASS\n");
    return 0;
  }
  hsa_agent_t gpu = ag.gpus[0];
  hsa_amd_memory_pool_t pool = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

  /* Pool allocation: the 2nd from now fails, then allocations work again. */
  void *a = NULL, *b = NULL, *c = NULL;
  vhsa_fault_fail_pool_allocation(2);
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &a));
  CHECK_STATUS(hsa_amd_memory_pool_allocate(pool, 4096, 0, &b), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  CHECK(b == NULL);
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &c));
  vhsa_fault_fail_pool_allocation(1);
  vhsa_fault_fail_pool_allocation(0);
  CHECK_OK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &b));

  /* Copies: one more succeeds, then a sync and an async copy fail, then copies work. */
  char host[4096];
  memset(host, 7, sizeof host);
  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  vhsa_fault_fail_copies(1, 2);
  CHECK_OK(hsa_memory_copy(a, host, sizeof host));
  CHECK_STATUS(hsa_memory_copy(a, host, sizeof host), HSA_STATUS_ERROR);
  CHECK_STATUS(hsa_amd_memory_async_copy(b, gpu, a, gpu, 4096, 0, NULL, done), HSA_STATUS_ERROR);
  CHECK(hsa_signal_load_scacquire(done) == 1);
  CHECK_OK(hsa_amd_memory_async_copy(b, gpu, a, gpu, 4096, 0, NULL, done));
  test_wait_eq(done, 0, "async copy after the injected failures");
  CHECK(memcmp(b, host, sizeof host) == 0);
  vhsa_fault_fail_copies(0, 5);
  vhsa_fault_fail_copies(0, 0);
  CHECK_OK(hsa_memory_copy(a, host, sizeof host));

  /* Symbol iteration: the loader's executable iteration and executable symbol iteration fail. */
  hsa_ven_amd_loader_1_03_pfn_t loader;
  memset(&loader, 0, sizeof loader);
  CHECK_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader));
  CHECK(loader.hsa_ven_amd_loader_iterate_executables != NULL);
  int executables = 0;
  CHECK_OK(loader.hsa_ven_amd_loader_iterate_executables(remember_executable, NULL));
  CHECK(found_exe.handle != 0);
  symbol_count_t sc = {0, 0};
  CHECK_OK(hsa_executable_iterate_symbols(found_exe, count_symbol, &sc));
  CHECK(sc.found == 1);
  vhsa_fault_fail_symbol_iteration(true);
  CHECK_STATUS(loader.hsa_ven_amd_loader_iterate_executables(count_executable, &executables), HSA_STATUS_ERROR);
  CHECK_STATUS(hsa_executable_iterate_symbols(found_exe, count_symbol, &sc), HSA_STATUS_ERROR);
  CHECK_STATUS(hsa_executable_iterate_agent_symbols(found_exe, gpu, count_agent_symbol, &sc), HSA_STATUS_ERROR);
  vhsa_fault_fail_symbol_iteration(false);
  CHECK_OK(loader.hsa_ven_amd_loader_iterate_executables(count_executable, &executables));
  CHECK(executables >= 1);

  /* Async handlers are delayed: not called 30 ms after the signal although a 300 ms delay is set. */
  hsa_signal_t hs;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &hs));
  vhsa_fault_delay_async_handlers(300);
  CHECK_OK(hsa_amd_signal_async_handler(hs, HSA_SIGNAL_CONDITION_EQ, 0, handler, NULL));
  hsa_signal_store_screlease(hs, 0);
  usleep(30000);
  CHECK(__atomic_load_n(&handler_calls, __ATOMIC_SEQ_CST) == 0);
  for (int i = 0; __atomic_load_n(&handler_calls, __ATOMIC_SEQ_CST) == 0; i++) {
    CHECK(i < 120000);
    usleep(1000);
  }
  vhsa_fault_delay_async_handlers(0);

  /* A hung kernel never completes until the fault is cleared; other kernels are unaffected. */
  hsa_queue_t* q = NULL;
  hsa_queue_t* q2 = NULL;
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  CHECK_OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q2));
  vhsa_fault_hang_kernel("fault_stuck");
  hsa_signal_t hung, other;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &hung));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &other));
  hsa_kernel_dispatch_packet_t pkt = test_dispatch(stuck, NULL, hung);
  aql_submit(q, &pkt);
  pkt = test_dispatch(nop, NULL, other);
  aql_submit(q2, &pkt);
  test_wait_eq(other, 0, "a kernel that is not hung");
  CHECK(hsa_signal_wait_scacquire(hung, HSA_SIGNAL_CONDITION_EQ, 0, 50000000, HSA_WAIT_STATE_BLOCKED) == 1);
  vhsa_fault_hang_kernel(NULL);
  test_wait_eq(hung, 0, "the hung kernel after clearing the fault");

  CHECK_OK(hsa_queue_destroy(q));
  CHECK_OK(hsa_queue_destroy(q2));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
