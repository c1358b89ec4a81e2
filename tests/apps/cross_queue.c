/* A sibling queue waits on the replayed dispatch, as hipStreamWaitEvent does: queue B gets a
 * barrier-AND packet on the completion signal of the dispatch that queue A runs next, followed by
 * a dispatch of its own; then queue A's dispatch is submitted. The dispatch on A must be
 * replayed (every pass sees the original input) and B's dispatch must run once, after it.
 *
 *   cross_queue <rounds> [marker|or|gate|value|gatecopy]
 *
 * With "marker", queue B's barrier waits instead on a marker behind the dispatch on queue A
 * (a barrier-AND with a completion signal, as hipEventRecord submits it), and queue A gets the
 * dispatch and the marker with one doorbell. With "or", queue B's barrier is a barrier-OR on the
 * dispatch's signal. With "gate", queue A gets [a barrier-AND on a host signal][the dispatch]
 * with one doorbell, and the host opens that gate only after ringing; "value" does the same with
 * AMD's barrier-value packet (as HIP's stream waits on a value submit it). With "gatecopy", as "gate",
 * and before opening the gate the host submits an asynchronous copy of the dispatch's output
 * that waits on the dispatch's signal.
 *
 * Prints "APP OK" and "APP ms_per_round=<wall time per round>" on success. */
#include "common.h"

#include <time.h>

#define N 64

static int producer_runs;
static int producer_original = 1;

/* kernarg: [0] x */
static void produce(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint32_t* x = (uint32_t*)(uintptr_t)((uint64_t*)p->kernarg_address)[0];
  for (uint32_t i = 0; i < N; i++) {
    if (x[i] != i) producer_original = 0;
    x[i] += 1;
  }
  __atomic_add_fetch(&producer_runs, 1, __ATOMIC_SEQ_CST);
}

/* kernarg: [0] x, [1] y: y = x * 2 */
static void consume(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)user_data;
  uint64_t* k = (uint64_t*)p->kernarg_address;
  uint32_t* x = (uint32_t*)(uintptr_t)k[0];
  uint32_t* y = (uint32_t*)(uintptr_t)k[1];
  for (uint32_t i = 0; i < N; i++) y[i] = 2 * x[i];
}

/* A barrier-AND (or, with `any`, a barrier-OR) on `dep`. */
static void barrier_on(hsa_queue_t* q, hsa_signal_t dep, int any) {
  uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
  hsa_barrier_and_packet_t* slot = (hsa_barrier_and_packet_t*)q->base_address + (idx % q->size);
  memset((char*)slot + 4, 0, sizeof *slot - 4);
  slot->dep_signal[0] = dep;
  uint16_t type = any ? HSA_PACKET_TYPE_BARRIER_OR : HSA_PACKET_TYPE_BARRIER_AND;
  uint16_t header = (type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t*)slot, (uint32_t)header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
}

/* Two packets rung with one doorbell. */
static void two_packets(hsa_queue_t* q, const void* first, const void* second) {
  uint64_t idx = hsa_queue_add_write_index_screlease(q, 2);
  const void* packets[2] = {first, second};
  for (int k = 0; k < 2; k++) {
    uint8_t* slot = (uint8_t*)q->base_address + ((idx + k) % q->size) * 64;
    memcpy(slot + 4, (const uint8_t*)packets[k] + 4, 60);
    uint32_t word;
    memcpy(&word, packets[k], 4);
    __atomic_store_n((uint32_t*)slot, word, __ATOMIC_RELEASE);
  }
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)(idx + 1));
}

/* The dispatch and a marker behind it, rung with one doorbell. */
static void dispatch_then_marker(hsa_queue_t* q, hsa_kernel_dispatch_packet_t d, hsa_signal_t marked) {
  hsa_barrier_and_packet_t m = aql_barrier_and_packet((hsa_signal_t){0}, marked);
  two_packets(q, &d, &m);
}

/* A barrier on the host signal `gate` and the dispatch, rung with one doorbell. */
static void gate_then_dispatch(hsa_queue_t* q, hsa_signal_t gate, hsa_kernel_dispatch_packet_t d) {
  hsa_barrier_and_packet_t g = aql_barrier_and_packet(gate, (hsa_signal_t){0});
  two_packets(q, &g, &d);
}

/* AMD's barrier-value packet until `gate` reads 0, and the dispatch, rung with one doorbell. */
static void value_gate_then_dispatch(hsa_queue_t* q, hsa_signal_t gate, hsa_kernel_dispatch_packet_t d) {
  hsa_amd_barrier_value_packet_t g;
  memset(&g, 0, sizeof g);
  g.header.header = (HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  g.header.AmdFormat = HSA_AMD_PACKET_TYPE_BARRIER_VALUE;
  g.signal = gate;
  g.value = 0;
  g.mask = -1;
  g.cond = HSA_SIGNAL_CONDITION_EQ;
  two_packets(q, &g, &d);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  const char* mode = argc > 2 ? argv[2] : "";
  int marker = strcmp(mode, "marker") == 0, any = strcmp(mode, "or") == 0, gated = strcmp(mode, "gate") == 0;
  int gatecopy = strcmp(mode, "gatecopy") == 0, valued = strcmp(mode, "value") == 0;
  system_t s;
  system_init(&s);
  uint64_t kp = vhsa_native_kernel_create("produce", produce, NULL);
  uint64_t kc = vhsa_native_kernel_create("consume", consume, NULL);
  uint32_t* x = pool_alloc(s.device_pool[0], N * 4);
  uint32_t* y = pool_alloc(s.device_pool[0], N * 4);
  void* pa[1] = {x};
  void* ca[2] = {x, y};
  void* ka = kernargs(&s, pa, 1);
  void* kb = kernargs(&s, ca, 2);
  hsa_queue_t* a = queue_create(s.gpu[0]);
  hsa_queue_t* b = queue_create(s.gpu[0]);
  hsa_signal_t produced, consumed, marked, gate, copied;
  CHECK(hsa_signal_create(1, 0, NULL, &gate));
  CHECK(hsa_signal_create(1, 0, NULL, &copied));
  uint32_t* z = pool_alloc(s.device_pool[0], N * 4);
  CHECK(hsa_signal_create(1, 0, NULL, &produced));
  CHECK(hsa_signal_create(1, 0, NULL, &consumed));
  CHECK(hsa_signal_create(1, 0, NULL, &marked));
  uint64_t t0 = now_ns();
  for (int r = 0; r < rounds; r++) {
    for (uint32_t i = 0; i < N; i++) x[i] = i, y[i] = 0;
    hsa_signal_store_relaxed(produced, 1);
    hsa_signal_store_relaxed(consumed, 1);
    hsa_signal_store_relaxed(marked, 1);
    hsa_signal_store_relaxed(gate, 1);
    barrier_on(b, marker ? marked : produced, any);
    dispatch(b, kc, kb, 1, consumed);
    if (marker) {
      dispatch_then_marker(a, aql_dispatch_packet(kp, ka, 1, 1, produced), marked);
    } else if (valued) {
      value_gate_then_dispatch(a, gate, aql_dispatch_packet(kp, ka, 1, 1, produced));
      hsa_signal_store_screlease(gate, 0);
    } else if (gated || gatecopy) {
      gate_then_dispatch(a, gate, aql_dispatch_packet(kp, ka, 1, 1, produced));
      if (gatecopy) {
        hsa_signal_store_relaxed(copied, 1);
        CHECK(hsa_amd_memory_async_copy(z, s.gpu[0], x, s.gpu[0], N * 4, 1, &produced, copied));
      }
      hsa_signal_store_screlease(gate, 0);
    } else {
      dispatch(a, kp, ka, 1, produced);
    }
    wait_done(produced);
    wait_done(consumed);
    if (gatecopy) {
      wait_done(copied);
      for (uint32_t i = 0; i < N; i++) EXPECT(z[i] == i + 1, "round %d: z[%u] = %u, expected %u", r, i, z[i], i + 1);
    }
    for (uint32_t i = 0; i < N; i++) {
      EXPECT(x[i] == i + 1, "round %d: x[%u] = %u, expected %u", r, i, x[i], i + 1);
      EXPECT(y[i] == 2 * (i + 1), "round %d: y[%u] = %u, expected %u", r, i, y[i], 2 * (i + 1));
    }
  }
  uint64_t t1 = now_ns();
  EXPECT(producer_original, "a pass of produce did not see the original input");
  printf("APP produce_runs=%d ms_per_round=%.3f\n", producer_runs, (double)(t1 - t0) / 1e6 / rounds);
  CHECK(hsa_queue_destroy(a));
  CHECK(hsa_queue_destroy(b));
  CHECK(hsa_shut_down());
  printf("APP OK\n");
  return 0;
}
