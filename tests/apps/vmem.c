/* Replay of a kernel writing virtual memory (hsa_amd_vmem_*) of a GPU's device pool.
 *
 *   vmem <passes>   reserves a range, creates a handle on the first GPU's device pool, maps it,
 *                   sets access and dispatches `vinc` (x[i] += 1) twice: once on the first
 *                   mapping, then, after unmapping it, on a second mapping of the same handle
 *                   elsewhere in the reservation. Every pass of a dispatch must see the same
 *                   input and the memory must end as after one execution of each.
 *
 *   vmem <passes> <code object>   the same first dispatch with the code-object kernel `inc`
 *                   (tests/apps/emulated.hip) run by vhsa's emulator on the mapped memory
 *
 *   vmem <passes> peer   (two GPUs) the first GPU's mapping, given access to the second GPU with
 *                   hsa_amd_vmem_set_access, written by `vinc` on a queue of the second GPU
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#define N 1024
#define MAX_PASSES 64
#define SPAN (64u << 10)

/* The virtual-memory entries (newer than the installed headers). */
typedef struct { uint64_t handle; } vmem_handle_t;
typedef struct {
  hsa_access_permission_t permissions;
  hsa_agent_t agent_handle;
} vmem_access_desc_t;
hsa_status_t hsa_amd_vmem_address_reserve(void** va, size_t size, uint64_t address, uint64_t flags);
hsa_status_t hsa_amd_vmem_address_free(void* va, size_t size);
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size, int type, uint64_t flags,
                                        vmem_handle_t* handle);
hsa_status_t hsa_amd_vmem_handle_release(vmem_handle_t handle);
hsa_status_t hsa_amd_vmem_map(void* va, size_t size, size_t in_offset, vmem_handle_t handle, uint64_t flags);
hsa_status_t hsa_amd_vmem_unmap(void* va, size_t size);
hsa_status_t hsa_amd_vmem_set_access(void* va, size_t size, const vmem_access_desc_t* desc, size_t desc_cnt);

static int invocations;
static uint32_t first_seen[2 * MAX_PASSES];
static int consistent[2 * MAX_PASSES];

/* kernarg: [0] x (mapped virtual memory) */
static void vinc_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  uint32_t* x = (uint32_t*)(uintptr_t)k[0];
  int ok = 1;
  uint32_t x0 = x[0];
  for (uint32_t i = 0; i < p->grid_size_x; i++) {
    if (x[i] != x0 + i) ok = 0;
    x[i] += 1;
  }
  if (invocations < 2 * MAX_PASSES) {
    first_seen[invocations] = x0;
    consistent[invocations] = ok;
  }
  invocations++;
}

static void run_once(system_t* s, hsa_queue_t* q, uint64_t kobj, uint32_t* x) {
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_amd_memory_pool_free(ka));
}

static void check_dispatch(int first, int passes, uint32_t input) {
  for (int i = first; i < first + passes; i++) {
    EXPECT(consistent[i], "invocation %d saw inconsistent input", i);
    EXPECT(first_seen[i] == input, "invocation %d saw x[0]=%u, expected %u", i, first_seen[i], input);
  }
}

/* `inc(x, stats, n)` of emulated.hip on mapped memory: stats[0] counts work-items of every pass,
   stats[1 + pass] those that did not see their original input. */
static void run_emulated(system_t* s, int passes, const char* path, uint32_t* x) {
  hsa_executable_t exe = load_code_object(s, path);
  hsa_executable_symbol_t sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "inc.kd", &s->gpu[0], &sym));
  uint64_t kobj = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kobj));
  uint32_t* stats = (uint32_t*)pool_alloc(s->fine_pool, 4 * 80);
  memset(stats, 0, 4 * 80);
  void* ptrs[3] = {x, stats, (void*)(uintptr_t)N};
  void* ka = kernargs(s, ptrs, 3);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  EXPECT(stats[0] == (uint32_t)passes * N, "inc ran %u work-items, expected %d passes of %d", stats[0], passes, N);
  for (int p = 0; p < passes; p++) EXPECT(stats[1 + p] == 0, "pass %d: %u work-items did not see the original input", p, stats[1 + p]);
  uint32_t out[N];
  CHECK(hsa_memory_copy(out, x, sizeof out));
  for (uint32_t i = 0; i < N; i++) EXPECT(out[i] == i + 1, "x[%u] = %u after the replay, expected %u", i, out[i], i + 1);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: vmem <passes>");
  int passes = atoi(argv[1]);
  EXPECT(passes >= 1 && passes <= MAX_PASSES, "passes must be 1..%d", MAX_PASSES);
  system_t s;
  system_init(&s);
  void* va = NULL;
  CHECK(hsa_amd_vmem_address_reserve(&va, 2 * SPAN, 0, 0));
  vmem_handle_t h;
  CHECK(hsa_amd_vmem_handle_create(s.device_pool[0], SPAN, 0, 0, &h));
  CHECK(hsa_amd_vmem_map(va, SPAN, 0, h, 0));
  vmem_access_desc_t access = {HSA_ACCESS_PERMISSION_RW, s.gpu[0]};
  CHECK(hsa_amd_vmem_set_access(va, SPAN, &access, 1));

  static uint32_t init[N];
  for (uint32_t i = 0; i < N; i++) init[i] = i;
  uint32_t* x = (uint32_t*)va;
  CHECK(hsa_memory_copy(x, init, sizeof init));

  if (argc >= 3 && strcmp(argv[2], "peer") == 0) {
    EXPECT(s.gpus >= 2, "peer needs two GPU agents");
    vmem_access_desc_t both[2] = {{HSA_ACCESS_PERMISSION_RW, s.gpu[0]}, {HSA_ACCESS_PERMISSION_RW, s.gpu[1]}};
    CHECK(hsa_amd_vmem_set_access(va, SPAN, both, 2));
    uint64_t kobj = vhsa_native_kernel_create("vinc", vinc_kernel, NULL);
    hsa_queue_t* q = queue_create(s.gpu[1]);
    run_once(&s, q, kobj, x);
    EXPECT(invocations == passes, "vinc ran %d times, expected %d", invocations, passes);
    check_dispatch(0, passes, 0);
    for (uint32_t i = 0; i < N; i++) EXPECT(x[i] == i + 1, "x[%u]=%u after one dispatch, expected %u", i, x[i], i + 1);
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_amd_vmem_unmap(va, SPAN));
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_address_free(va, 2 * SPAN));
    CHECK(hsa_shut_down());
    printf("APP OK\n");
    return 0;
  }
  if (argc >= 3) {
    run_emulated(&s, passes, argv[2], x);
    CHECK(hsa_amd_vmem_unmap(va, SPAN));
    CHECK(hsa_amd_vmem_handle_release(h));
    CHECK(hsa_amd_vmem_address_free(va, 2 * SPAN));
    CHECK(hsa_shut_down());
    printf("APP OK\n");
    return 0;
  }

  uint64_t kobj = vhsa_native_kernel_create("vinc", vinc_kernel, NULL);
  hsa_queue_t* q = queue_create(s.gpu[0]);
  run_once(&s, q, kobj, x);
  EXPECT(invocations == passes, "vinc ran %d times, expected %d", invocations, passes);
  check_dispatch(0, passes, 0);
  for (uint32_t i = 0; i < N; i++) EXPECT(x[i] == i + 1, "x[%u]=%u after one dispatch, expected %u", i, x[i], i + 1);

  /* The same bytes through a second mapping; the first one is gone. */
  CHECK(hsa_amd_vmem_unmap(va, SPAN));
  uint32_t* y = (uint32_t*)((char*)va + SPAN);
  CHECK(hsa_amd_vmem_map(y, SPAN, 0, h, 0));
  CHECK(hsa_amd_vmem_set_access(y, SPAN, &access, 1));
  run_once(&s, q, kobj, y);
  EXPECT(invocations == 2 * passes, "vinc ran %d times, expected %d", invocations, 2 * passes);
  check_dispatch(passes, passes, 1);
  uint32_t out[N];
  CHECK(hsa_memory_copy(out, y, sizeof out));
  for (uint32_t i = 0; i < N; i++) EXPECT(out[i] == i + 2, "y[%u]=%u at the end, expected %u", i, out[i], i + 2);

  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_amd_vmem_unmap(y, SPAN));
  CHECK(hsa_amd_vmem_handle_release(h));
  CHECK(hsa_amd_vmem_address_free(va, 2 * SPAN));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
