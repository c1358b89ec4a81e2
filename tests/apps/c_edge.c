/* Every bad input of the C API, from an application linked with libkreplay.so. Built with
 * -Wall -Wextra -Wpedantic -Werror and run under AddressSanitizer and UndefinedBehaviorSanitizer.
 *
 *   c_edge edge         kreplay loaded through HSA_TOOLS_LIB (the same file): bad values before
 *                       hsa_init, inside a PASS ENTER callback, after hsa_shut_down, and a
 *                       registration in a second runtime instance
 *   c_edge not-loaded   kreplay_register after hsa_init is refused with NOT_LOADED (the library
 *                       is linked only, or HSA_TOOLS_LIB names another copy)
 *
 * Prints "APP OK" on success; exits nonzero with "APP FAIL" otherwise. */
#include "common.h"

#include "kreplay.h"

#define N 16
#define KNOWN_STATUSES 7u

static int failures;

#define CHECK_STATUS(call, want)                                                                   \
  do {                                                                                             \
    kreplay_status_t got_ = (call);                                                                \
    if (got_ != (want)) {                                                                          \
      fprintf(stderr, "APP FAIL (line %d): %s returned %u (%s), expected %u\n", __LINE__, #call,   \
              (unsigned)got_, kreplay_status_string(got_), (unsigned)(want));                      \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static uint8_t packets[64][64];
static int pass_enters, kernel_runs;

static void nop_kernel(const hsa_kernel_dispatch_packet_t* p, void* user_data) {
  (void)p;
  (void)user_data;
  kernel_runs++;
}

static uint32_t two_passes(const kreplay_dispatch_info_t* d, void* user_data) {
  (void)d;
  (void)user_data;
  return 2;
}

/* Inside PASS ENTER of pass 0 of a dispatch on a 64-packet queue. */
static void attach_bad_inputs(const kreplay_dispatch_info_t* d) {
  hsa_queue_t* q = (hsa_queue_t*)(uintptr_t)d->queue;
  uint64_t size = q->size;
  EXPECT(size == 64, "queue size %llu", (unsigned long long)size);
  /* As many packets as the queue has slots: with the dispatch they cannot fit. */
  CHECK_STATUS(kreplay_pass_attach_packets(packets, size, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, size - 1, 4u), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, size - 1, KREPLAY_PACKET_BEFORE_PASS), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, UINT32_MAX), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(NULL, 1, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, UINT64_MAX, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, UINT64_MAX / 64 + 1, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, size - 1, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_INVALID_ARGUMENT);
  /* Exactly full: 32 before, 30 after, the dispatch and the slot the tool keeps for itself. */
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 32, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_SUCCESS);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 30, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_SUCCESS);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, KREPLAY_PACKET_BEFORE_PASS), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, KREPLAY_PACKET_AFTER_PASS), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(NULL, 0, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_SUCCESS);
}

static void on_event(const kreplay_event_t* e, void* user_data) {
  (void)user_data;
  if (e->kind == KREPLAY_EVENT_PASS_ENTER) {
    if (e->pass == 0) attach_bad_inputs(e->dispatch);
    pass_enters++;
  }
}

static kreplay_callbacks_t callbacks(void) {
  kreplay_callbacks_t cb;
  memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.pass_count = two_passes;
  cb.on_event = on_event;
  return cb;
}

static void status_strings(void) {
  const char* text[KNOWN_STATUSES];
  for (uint32_t v = 0; v < KNOWN_STATUSES; v++) {
    text[v] = kreplay_status_string(v);
    EXPECT(text[v] != NULL && text[v][0] != '\0', "status %u has no text", v);
    for (uint32_t w = 0; w < v; w++) EXPECT(strcmp(text[v], text[w]) != 0, "statuses %u and %u share a text", v, w);
  }
  EXPECT(strstr(kreplay_status_string(KREPLAY_STATUS_NOT_LOADED), "HSA_TOOLS_LIB") != NULL,
         "the NOT_LOADED text says what to do");
  const char* unknown = kreplay_status_string(KNOWN_STATUSES);
  EXPECT(unknown != NULL && strstr(unknown, "unknown") != NULL, "unknown status text: %s", unknown ? unknown : "(null)");
  const uint32_t odd[] = {KNOWN_STATUSES + 1, 100, 0x7fffffffu, 0x80000000u, UINT32_MAX};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    EXPECT(strcmp(kreplay_status_string(odd[i]), unknown) == 0, "status %u is not reported as unknown", odd[i]);
}

static void bad_inputs_anywhere(void) {
  /* Positions and counts are checked before anything else. */
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, 4u), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, KREPLAY_PACKET_AFTER_PASS), KREPLAY_STATUS_NOT_ARMED);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, UINT32_MAX), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, UINT64_MAX, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, UINT64_MAX / 64 + 1, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, (UINT64_MAX >> 1) / 64 + 1, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(NULL, 1, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(kreplay_pass_attach_packets(packets, 1, KREPLAY_PACKET_AFTER), KREPLAY_STATUS_NOT_ARMED);
  CHECK_STATUS(kreplay_pass_attach_packets(NULL, 0, KREPLAY_PACKET_BEFORE), KREPLAY_STATUS_NOT_ARMED);

  CHECK_STATUS(kreplay_register(NULL), KREPLAY_STATUS_INVALID_ARGUMENT);
  kreplay_callbacks_t cb = callbacks();
  cb.size = 0;
  CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_SIZE_TOO_SMALL);
  /* The first version of the struct ends before `flags`: one byte less is too small. */
  cb.size = offsetof(kreplay_callbacks_t, flags) - 1;
  CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_SIZE_TOO_SMALL);
  cb.size = sizeof cb;
  cb.flags = KREPLAY_CLIENT_PASS_EVENTS_ALWAYS | 2u;
  CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_INVALID_ARGUMENT);
  cb.flags = UINT64_C(1) << 63;
  CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_INVALID_ARGUMENT);

  CHECK_STATUS(kreplay_stats_get(NULL), KREPLAY_STATUS_INVALID_ARGUMENT);
  kreplay_stats_t st;
  memset(&st, 0xa5, sizeof st);
  st.size = 8;
  CHECK_STATUS(kreplay_stats_get(&st), KREPLAY_STATUS_SIZE_TOO_SMALL);
  EXPECT(st.size == 8 && st.dispatches == 0xa5a5a5a5a5a5a5a5ull && st.skipped_regions == 0xa5a5a5a5a5a5a5a5ull,
         "kreplay_stats_get wrote its out-parameter on failure");
  st.size = sizeof st;
  CHECK_STATUS(kreplay_stats_get(&st), KREPLAY_STATUS_SUCCESS);
  CHECK_STATUS(kreplay_version(NULL, NULL, NULL), KREPLAY_STATUS_SUCCESS);
}

static void replay_with_attach_checks(system_t* s) {
  uint64_t kobj = vhsa_native_kernel_create("nop", nop_kernel, NULL);
  EXPECT(kobj != 0, "vhsa_native_kernel_create failed");
  void* x = pool_alloc(s->device_pool[0], N * 4);
  void* ptrs[1] = {x};
  void* ka = kernargs(s, ptrs, 1);
  hsa_queue_t* q = queue_create(s->gpu[0]);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, kobj, ka, N, done);
  wait_done(done);
  EXPECT(pass_enters == 2 && kernel_runs == 2, "%d PASS ENTER events and %d kernel runs, expected 2 and 2", pass_enters,
         kernel_runs);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
}

int main(int argc, char** argv) {
  EXPECT(argc >= 2, "usage: c_edge edge|not-loaded");
  memset(packets, 0, sizeof packets);
  for (int i = 0; i < 64; i++) packets[i][0] = HSA_PACKET_TYPE_BARRIER_AND;
  kreplay_callbacks_t cb = callbacks();
  system_t s;
  if (strcmp(argv[1], "not-loaded") == 0) {
    system_init(&s);
    CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_NOT_LOADED);
    fprintf(stderr, "APP register: %s\n", kreplay_status_string(kreplay_register(&cb)));
    CHECK(hsa_shut_down());
  } else {
    /* Linked and named in HSA_TOOLS_LIB, but its OnLoad has not run yet. */
    CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_NOT_LOADED);
    status_strings();
    bad_inputs_anywhere();
    system_init(&s);
    CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_SUCCESS);
    CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_ALREADY_CONFIGURED);
    bad_inputs_anywhere();
    replay_with_attach_checks(&s);
    CHECK(hsa_shut_down());
    /* After OnUnload. */
    CHECK_STATUS(kreplay_register(&cb), KREPLAY_STATUS_NOT_LOADED);
    bad_inputs_anywhere();
    /* A new runtime instance: the registration of the previous one was released. A struct of
     * the first header (without `flags`, garbage after it) is accepted. */
    system_init(&s);
    struct {
      kreplay_callbacks_t cb;
      uint8_t tail[8];
    } old;
    memset(&old, 0xff, sizeof old);
    memcpy(&old.cb, &cb, offsetof(kreplay_callbacks_t, flags));
    old.cb.size = offsetof(kreplay_callbacks_t, flags);
    CHECK_STATUS(kreplay_register(&old.cb), KREPLAY_STATUS_SUCCESS);
    CHECK(hsa_shut_down());
  }
  EXPECT(failures == 0, "%d C API call(s) returned an unexpected status", failures);
  printf("APP OK\n");
  return 0;
}
