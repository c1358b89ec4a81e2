// Device code run on vhsa's emulator (no native kernel): the replay tests' kernels and kernels
// that fault.
#include "kernels.h"

// Adds 1 to x[i] for i < n. Every work-item counts itself in stats[0] (fine-grained memory, not
// restored between passes), so `old / n` is the pass; a work-item that does not see its original
// input (x[i] == i) counts itself in stats[1 + pass].
KERNEL inc(uint32_t* x, uint32_t* stats, uint32_t n) {
  uint32_t i = global_idx_x();
  if (i >= n) return;
  uint32_t pass = atomic_add_u32(&stats[0], 1) / n;
  if (x[i] != i) atomic_add_u32(&stats[1 + pass], 1);
  x[i] += 1;
}

// A __device__ counter incremented once per dispatch; seen[0] counts the dispatches (passes)
// and seen[1 + k] is the value dispatch k found.
__device__ uint32_t counter;

KERNEL bump(uint32_t* seen) {
  if (global_idx_x() != 0) return;
  uint32_t k = seen[0];
  seen[1 + k] = counter;
  seen[0] = k + 1;
  counter += 1;
}

// Stores through a pointer the runtime never allocated.
KERNEL oob_store(uint32_t* p) { p[global_idx_x()] = 1; }

// `__builtin_trap()`: s_trap 2.
KERNEL trap(uint32_t* p) {
  if (global_idx_x() == 0) __builtin_trap();
  p[0] = 1;
}

// A word no GFX9 encoding defines, assembled by hand.
KERNEL unknown_op(uint32_t* p) {
  asm volatile(".long 0xe8000000");
  p[0] = 1;
}

// Waits for a flag nothing sets: runs until its queue is destroyed.
KERNEL spin(uint32_t* flag) {
  while (__atomic_load_n(flag, __ATOMIC_RELAXED) == 0) {
  }
}
