#include "kh.h"
// Built with -mllvm -amdgpu-kernarg-preload-count=3: the first kernel arguments arrive in
// SGPRs and the entry point skips the 256-byte compatibility prologue.
extern "C" __global__ void inc_preload(int *x, int n, int add) { u32 i = gid_x(); if (i < (u32)n) x[i] += add; }
