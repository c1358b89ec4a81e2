/* A dispatch that fails on its queue (no grid dimensions: an invalid packet) while it is
 * replayed. The application's queue error callback must run and the application gives up
 * cleanly, as it does without the tool.
 *
 *   queue_error    one valid dispatch, then the invalid one; waits for the error callback
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include <unistd.h>

static volatile int error_seen;
static hsa_status_t error_status;
static int invocations;

static void noop_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  __atomic_add_fetch(&invocations, 1, __ATOMIC_SEQ_CST);
}

static void on_error(hsa_status_t status, hsa_queue_t* q, void* data) {
  (void)q;
  EXPECT(data == (void*)&error_seen, "the error callback got data %p, not the application's", data);
  error_status = status;
  __atomic_store_n(&error_seen, 1, __ATOMIC_RELEASE);
}

/* A dispatch packet without grid dimensions (setup 0), which the packet processor refuses. */
static void dispatch_without_dimensions(hsa_queue_t* q, uint64_t kobj, void* ka, hsa_signal_t done) {
  uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
  hsa_kernel_dispatch_packet_t* slot = (hsa_kernel_dispatch_packet_t*)q->base_address + (idx % q->size);
  memset((char*)slot + 4, 0, sizeof *slot - 4);
  slot->workgroup_size_x = slot->workgroup_size_y = slot->workgroup_size_z = 1;
  slot->grid_size_x = slot->grid_size_y = slot->grid_size_z = 1;
  slot->kernel_object = kobj;
  slot->kernarg_address = ka;
  slot->completion_signal = done;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t*)slot, (uint32_t)header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
}

int main(void) {
  (void)queue_create; /* this program passes its own error callback */
  system_t s;
  system_init(&s);
  uint64_t kobj = vhsa_native_kernel_create("noop", noop_kernel, NULL);
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  uint32_t* x = pool_alloc(s.device_pool[0], 256);
  void* ptrs[1] = {x};
  void* ka = kernargs(&s, ptrs, 1);
  hsa_queue_t* q = NULL;
  CHECK(hsa_queue_create(s.gpu[0], 64, HSA_QUEUE_TYPE_MULTI, on_error, (void*)&error_seen, UINT32_MAX,
                         UINT32_MAX, &q));
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, 1, done);
  wait_done(done);
  hsa_signal_store_relaxed(done, 1);
  dispatch_without_dimensions(q, kobj, ka, done);
  /* Wait for the completion (it never comes) or the error callback. */
  while (!__atomic_load_n(&error_seen, __ATOMIC_ACQUIRE)) {
    hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 10 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED);
  }
  EXPECT(error_status == HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, "error status %#x", error_status);
  EXPECT(hsa_signal_load_scacquire(done) == 1, "the failed dispatch's signal moved to %ld",
         (long)hsa_signal_load_scacquire(done));
  printf("APP queue error %#x after %d executions of the valid dispatch\n", error_status, invocations);
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
