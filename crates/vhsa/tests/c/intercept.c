/* Intercept-queue semantics: LIFO handler order, one call per packet with the application's
 * write index, forwarding through the writer, several writer calls, dropped packets, batches,
 * the proxy slot set INVALID after the handlers return, and a destroy that waits for a handler
 * still running on another thread. Prints "PASS". */
#define _DEFAULT_SOURCE /* usleep */
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <unistd.h>

#include "vhsa_test.h"

/* The intercept API is newer than the installed headers. */
typedef void (*packet_writer_t)(const void* pkts, uint64_t pkt_count);
typedef void (*intercept_handler_t)(const void* pkts, uint64_t pkt_count, uint64_t user_pkt_index, void* data,
                                    packet_writer_t writer);
hsa_status_t hsa_amd_queue_intercept_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                            void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                            uint32_t private_segment_size, uint32_t group_segment_size,
                                            hsa_queue_t** queue);
hsa_status_t hsa_amd_queue_intercept_register(hsa_queue_t* queue, intercept_handler_t callback, void* user_data);

#define MAX_LOG 64
typedef struct {
  char who;
  uint64_t count;
  uint64_t index;
  uint16_t proxy_header;
} log_entry_t;
static log_entry_t log_entries[MAX_LOG];
static int log_len;
static hsa_queue_t* proxy;
static uint64_t runs;
static hsa_signal_t extra_done;

static void log_call(char who, uint64_t count, uint64_t index) {
  CHECK(log_len < MAX_LOG);
  uint16_t h = __atomic_load_n((uint16_t*)((uint8_t*)proxy->base_address + (index % proxy->size) * 64), __ATOMIC_ACQUIRE);
  log_entry_t e = {who, count, index, h};
  log_entries[log_len++] = e;
}

static void count_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  __atomic_fetch_add(&runs, 1, __ATOMIC_SEQ_CST);
}

/* Intercept-marker callback: (marker packet, hardware queue, index of the following packet). */
static int marker_calls;
static uint64_t marker_packet_id;
static hsa_queue_t* marker_queue;
static void on_marker(const void* packet, hsa_queue_t* queue, uint64_t packet_id) {
  CHECK(((const uint8_t*)packet)[2] == 0xFE);
  marker_calls++;
  marker_queue = queue;
  marker_packet_id = packet_id;
}
static void (*marker_fn)(const void*, hsa_queue_t*, uint64_t) = on_marker;

/* Bottom handler (registered first): forwards everything. */
static void handler_a(const void* pkts, uint64_t count, uint64_t index, void* data, packet_writer_t writer) {
  CHECK(data == (void*)"A");
  log_call('A', count, index);
  writer(pkts, count);
}

/* Top handler (registered last): behaviour depends on the packet's index. */
static void handler_b(const void* pkts, uint64_t count, uint64_t index, void* data, packet_writer_t writer) {
  CHECK(data == (void*)"B");
  CHECK(count == 1);
  log_call('B', count, index);
  switch (index) {
    case 0: writer(pkts, 1); break;             /* forward */
    case 1: writer(pkts, 1); writer(pkts, 1); break; /* forward twice */
    case 2: break;                               /* drop */
    case 3: {                                    /* forward with an appended barrier, as one batch */
      uint8_t batch[128];
      memcpy(batch, pkts, 64);
      hsa_barrier_and_packet_t bar;
      memset(&bar, 0, sizeof bar);
      bar.header = aql_header(HSA_PACKET_TYPE_BARRIER_AND, 1);
      bar.completion_signal = extra_done;
      memcpy(batch + 64, &bar, 64);
      writer(batch, 2);
      break;
    }
    case 7: {                                    /* an intercept marker before the packet */
      uint8_t batch[128];
      memset(batch, 0, 64);
      uint16_t header = HSA_PACKET_TYPE_VENDOR_SPECIFIC;
      memcpy(batch, &header, 2);
      batch[2] = 0xFE;
      memcpy(batch + 8, &marker_fn, sizeof marker_fn);
      memcpy(batch + 64, pkts, 64);
      writer(batch, 2);
      break;
    }
    default: writer(pkts, 1);
  }
}

/* A handler that passes its packet down, then goes on working (300 ms) before it returns. */
static volatile int slow_returned;
static void slow_handler(const void* pkts, uint64_t count, uint64_t index, void* data, packet_writer_t writer) {
  (void)index;
  (void)data;
  writer(pkts, count);
  usleep(300000);
  slow_returned = 1;
}

typedef struct {
  hsa_queue_t* q;
  hsa_kernel_dispatch_packet_t pkt;
} submission_t;

static void* submit_from_thread(void* arg) {
  submission_t* s = (submission_t*)arg;
  aql_submit(s->q, &s->pkt);
  return NULL;
}

static int errors;
static void queue_error(hsa_status_t status, hsa_queue_t* source, void* data) {
  (void)status; (void)source; (void)data;
  errors++;
}

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  uint64_t kernel = vhsa_native_kernel_create("intercept_count", count_kernel, NULL);

  CHECK_STATUS(hsa_amd_queue_intercept_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_queue_intercept_create(ag.cpu, 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, &proxy),
               HSA_STATUS_ERROR);
  CHECK_OK(hsa_amd_queue_intercept_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, &proxy));
  CHECK_OK(hsa_amd_queue_intercept_register(proxy, handler_a, (void*)"A"));
  CHECK_OK(hsa_amd_queue_intercept_register(proxy, handler_b, (void*)"B"));
  CHECK_STATUS(hsa_amd_queue_intercept_register(proxy, NULL, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_queue_t* plain = NULL;
  CHECK_OK(hsa_queue_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &plain));
  CHECK_STATUS(hsa_amd_queue_intercept_register(plain, handler_a, NULL), HSA_STATUS_ERROR_INVALID_QUEUE);
  CHECK_OK(hsa_amd_profiling_set_profiler_enabled(proxy, 1));

  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  CHECK_OK(hsa_signal_create(1, 0, NULL, &extra_done));
  hsa_kernel_dispatch_packet_t pkt = test_dispatch(kernel, NULL, done);

  /* Packet 0: forwarded once through B then A. Handlers run on this thread, inside the doorbell. */
  uint64_t i0 = aql_submit(proxy, &pkt);
  CHECK(i0 == 0);
  CHECK(log_len == 2);
  CHECK(log_entries[0].who == 'B' && log_entries[0].index == 0 && log_entries[0].count == 1);
  CHECK(log_entries[1].who == 'A' && log_entries[1].index == 0 && log_entries[1].count == 1);
  /* During the handlers the application's slot still held the packet; afterwards it is INVALID. */
  CHECK((log_entries[0].proxy_header & 0xFF) == HSA_PACKET_TYPE_KERNEL_DISPATCH);
  CHECK(*(uint16_t*)proxy->base_address == HSA_PACKET_TYPE_INVALID);
  test_wait_eq(done, 0, "forwarded dispatch");
  CHECK(runs == 1);
  hsa_amd_profiling_dispatch_time_t t;
  CHECK_OK(hsa_amd_profiling_get_dispatch_time(ag.gpus[0], done, &t));
  CHECK(t.end >= t.start && t.start > 0);

  /* Packet 1: B calls the writer twice, so A runs twice and the kernel twice. */
  hsa_signal_store_relaxed(done, 2);
  aql_submit(proxy, &pkt);
  CHECK(log_len == 5);
  CHECK(log_entries[2].who == 'B' && log_entries[2].index == 1);
  CHECK(log_entries[3].who == 'A' && log_entries[3].index == 1);
  CHECK(log_entries[4].who == 'A' && log_entries[4].index == 1);
  test_wait_eq(done, 0, "dispatch written twice");
  CHECK(runs == 3);

  /* Packet 2: dropped by B; A never sees it and nothing runs. */
  hsa_signal_t dropped;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &dropped));
  hsa_kernel_dispatch_packet_t dpkt = test_dispatch(kernel, NULL, dropped);
  aql_submit(proxy, &dpkt);
  CHECK(log_len == 6);
  CHECK(log_entries[5].who == 'B' && log_entries[5].index == 2);
  CHECK(((uint16_t*)proxy->base_address)[2 * 32] == HSA_PACKET_TYPE_INVALID);

  /* Packet 3: B writes a batch of two; A gets pkt_count 2; both reach the hardware in order. */
  hsa_signal_store_relaxed(done, 1);
  aql_submit(proxy, &pkt);
  CHECK(log_len == 8);
  CHECK(log_entries[6].who == 'B' && log_entries[6].index == 3 && log_entries[6].count == 1);
  CHECK(log_entries[7].who == 'A' && log_entries[7].index == 3 && log_entries[7].count == 2);
  test_wait_eq(done, 0, "batched dispatch");
  test_wait_eq(extra_done, 0, "appended barrier");
  CHECK(runs == 4);
  CHECK(hsa_signal_load_scacquire(dropped) == 1);

  /* Several packets behind one doorbell: one top-handler call per packet, in order. */
  hsa_signal_store_relaxed(done, 3);
  uint64_t base = hsa_queue_add_write_index_screlease(proxy, 3);
  CHECK(base == 4);
  for (uint64_t k = 0; k < 3; k++) {
    uint8_t* slot = (uint8_t*)proxy->base_address + ((base + k) % proxy->size) * 64;
    memcpy(slot + 4, (uint8_t*)&pkt + 4, 60);
    uint32_t word;
    memcpy(&word, &pkt, 4);
    __atomic_store_n((uint32_t*)slot, word, __ATOMIC_RELEASE);
  }
  hsa_signal_store_screlease(proxy->doorbell_signal, (hsa_signal_value_t)(base + 2));
  CHECK(log_len == 14);
  for (int k = 0; k < 3; k++) {
    CHECK(log_entries[8 + 2 * k].who == 'B' && log_entries[8 + 2 * k].index == base + (uint64_t)k);
    CHECK(log_entries[9 + 2 * k].who == 'A' && log_entries[9 + 2 * k].index == base + (uint64_t)k);
  }
  test_wait_eq(done, 0, "three packets behind one doorbell");
  CHECK(runs == 7);
  CHECK(hsa_queue_load_read_index_scacquire(proxy) == base + 3);
  CHECK(errors == 0);

  /* Packet 7: B puts an intercept marker before it. The marker never reaches the hardware
   * queue; its callback gets the hardware queue and the hardware index of the dispatch
   * (1 + 2 + 0 + 2 + 3 packets were written there before). */
  hsa_signal_store_relaxed(done, 1);
  aql_submit(proxy, &pkt);
  CHECK(log_len == 16);
  CHECK(log_entries[15].who == 'A' && log_entries[15].count == 2);
  CHECK(marker_calls == 1);
  CHECK(marker_packet_id == 8);
  CHECK(marker_queue != NULL && marker_queue != proxy);
  test_wait_eq(done, 0, "dispatch after an intercept marker");
  CHECK(runs == 8);
  CHECK(errors == 0);

  CHECK_OK(hsa_queue_destroy(proxy));

  /* Destroying a proxy while another thread's doorbell is still in its handler (which already
   * passed the packet down, so the dispatch can complete first): the destroy waits for the
   * handler to return, and the ring is not freed under it. */
  hsa_queue_t* slow = NULL;
  CHECK_OK(hsa_amd_queue_intercept_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, &slow));
  CHECK_OK(hsa_amd_queue_intercept_register(slow, slow_handler, NULL));
  hsa_signal_store_relaxed(done, 1);
  submission_t sub = {slow, pkt};
  pthread_t submitter;
  CHECK(pthread_create(&submitter, NULL, submit_from_thread, &sub) == 0);
  test_wait_eq(done, 0, "dispatch passed down by a handler still running");
  CHECK(!slow_returned);
  CHECK_OK(hsa_queue_destroy(slow));
  CHECK(slow_returned);
  CHECK(pthread_join(submitter, NULL) == 0);

  /* A hardware queue in error whose ring is full: the writer drops what does not fit instead of
   * waiting forever for a processor that consumes nothing more, and the proxy can be destroyed. */
  hsa_queue_t* broken = NULL;
  int errors_before = errors;
  CHECK_OK(hsa_amd_queue_intercept_create(ag.gpus[0], 64, HSA_QUEUE_TYPE_MULTI, queue_error, NULL, 0, 0, &broken));
  hsa_kernel_dispatch_packet_t bad = pkt;
  bad.header = 9; /* no such packet type: the queue goes into error */
  aql_submit(broken, &bad);
  for (int i = 0; i < 100000 && __atomic_load_n(&errors, __ATOMIC_SEQ_CST) == errors_before; i++) usleep(1000);
  CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == errors_before + 1);
  for (int k = 0; k < 70; k++) aql_submit(broken, &pkt);
  CHECK_OK(hsa_queue_destroy(broken));
  errors = errors_before;

  CHECK_OK(hsa_queue_destroy(plain));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}
