/* Submitting AQL packets from the C test programs of every crate.
 *
 * One packet is written the way the AQL protocol asks: take a write index, wait until its slot
 * is free, write the 60 bytes after the first word, publish the first word (header and setup)
 * with release order, then ring the doorbell. `test_support::compile_c` puts this directory on
 * the include path of every C program it builds. */
#ifndef KREPLAY_AQL_SUBMIT_H
#define KREPLAY_AQL_SUBMIT_H

#include <hsa/hsa.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

/* A packet header of `type`, with the barrier bit when `barrier` is non-zero and system-scope
 * acquire and release fences. */
static inline uint16_t aql_header(hsa_packet_type_t type, int barrier) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

/* A one-dimensional kernel dispatch of `grid_x` work-items in work-groups of `workgroup_x`,
 * signalling `done` (may be the null signal) when it completes. */
static inline hsa_kernel_dispatch_packet_t aql_dispatch_packet(uint64_t kernel_object, void* kernarg,
                                                               uint32_t grid_x, uint16_t workgroup_x,
                                                               hsa_signal_t done) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = aql_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0);
  p.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p.workgroup_size_x = workgroup_x;
  p.workgroup_size_y = 1;
  p.workgroup_size_z = 1;
  p.grid_size_x = grid_x;
  p.grid_size_y = 1;
  p.grid_size_z = 1;
  p.kernel_object = kernel_object;
  p.kernarg_address = kernarg;
  p.completion_signal = done;
  return p;
}

/* A barrier-AND packet (barrier bit set) waiting for `dep` (may be the null signal) and
 * signalling `done` (may be the null signal). */
static inline hsa_barrier_and_packet_t aql_barrier_and_packet(hsa_signal_t dep, hsa_signal_t done) {
  hsa_barrier_and_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = aql_header(HSA_PACKET_TYPE_BARRIER_AND, 1);
  p.dep_signal[0] = dep;
  p.completion_signal = done;
  return p;
}

/* Writes the 64-byte `packet` at the next write index of `q` once its slot is free, publishes
 * its first word last and rings the doorbell. Returns the packet's index. */
static inline uint64_t aql_submit(hsa_queue_t* q, const void* packet) {
  uint64_t idx = hsa_queue_add_write_index_screlease(q, 1);
  while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size) {
    sched_yield();
  }
  uint8_t* slot = (uint8_t*)q->base_address + (idx % q->size) * 64;
  memcpy(slot + 4, (const uint8_t*)packet + 4, 60);
  uint32_t word;
  memcpy(&word, packet, 4);
  __atomic_store_n((uint32_t*)slot, word, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
  return idx;
}

#endif
