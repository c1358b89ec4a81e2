// The tool's own device kernel: one 64-bit hash per chunk of a region, for the changed-chunk
// restore where device memory is not host-accessible (see `device_hash.rs`).
//
// The hash ("lane-fold"): a chunk of `len` bytes is read as `len / 16` blocks of two
// little-endian 64-bit words; lane l of the work-group (of L lanes) folds the blocks l, l + L,
// ... in order, each block's two words in order, into h_l = seed(l, len) with one step per word
//   h = (h ^ w) * P1,  h ^= h >> 29
// (a bijection of h for fixed w, and of w for fixed h). Lane 0 then folds the 0-15 bytes after
// the last whole block as 32-bit words, the last one zero-padded. The lanes' hashes are joined
// as a binary tree: at distance s = 1, 2, 4, ... lane l (a multiple of 2s, with l + s < L)
// replaces h_l with  j = h_l * P2 ^ h_{l+s},  j ^= j >> 31  (a bijection of either input for
// the other fixed), and h_0 at the end goes through a final avalanche. Any single changed word
// changes its lane's h_l and therefore every join above it: the hash sees every byte.
// Deterministic for a given L (the host always dispatches 64-lane work-groups). Each lane reads
// 16 bytes per iteration and the lanes join in log2(L) steps, so the kernel runs few
// instructions per byte, which counts on an emulated GPU.
//
// Built at build time by clang-22 for gfx90a and gfx942 (build.rs), embedded in the library.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef u64 block __attribute__((ext_vector_type(2), aligned(4)));

#define P1 0x9E3779B97F4A7C15ull
#define P2 0xC2B2AE3D27D4EB4Full
#define LANES_MAX 1024

static __attribute__((device)) inline u64 lane_seed(u32 lane, u64 len) {
  return (len * P2) ^ ((u64)(lane + 1) * P1);
}

static __attribute__((device)) inline u64 step(u64 h, u64 w) {
  h = (h ^ w) * P1;
  return h ^ (h >> 29);
}

static __attribute__((device)) inline u64 join(u64 a, u64 b) {
  u64 j = a * P2 ^ b;
  return j ^ (j >> 31);
}

static __attribute__((device)) inline void group_barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

extern "C" __attribute__((global)) void kreplay_chunk_hash(const unsigned char* base, u64 size,
                                                           u64 chunk, u64* out) {
  __attribute__((shared)) u64 lanes[LANES_MAX];
  u32 lane = __builtin_amdgcn_workitem_id_x();
  const unsigned short* packet = (const unsigned short*)__builtin_amdgcn_dispatch_ptr();
  u32 count = packet[2];  // workgroup_size_x
  u64 index = __builtin_amdgcn_workgroup_id_x();
  u64 start = index * chunk;
  u64 len = size - start < chunk ? size - start : chunk;
  const unsigned char* bytes = base + start;
  u64 blocks = len / 16;
  u64 h = lane_seed(lane, len);
  for (u64 b = lane; b < blocks; b += count) {
    block v = *(const block*)(bytes + 16 * b);
    h = step(h, v.x);
    h = step(h, v.y);
  }
  if (lane == 0) {
    for (u64 at = blocks * 16; at < len; at += 4) {
      u32 t = 0;
      for (u32 i = 0; i < 4 && at + i < len; ++i) t |= (u32)bytes[at + i] << (8 * i);
      h = step(h, t);
    }
  }
  lanes[lane] = h;
  for (u32 s = 1; s < count; s *= 2) {
    group_barrier();
    if (lane % (2 * s) == 0 && lane + s < count) lanes[lane] = join(lanes[lane], lanes[lane + s]);
  }
  group_barrier();
  if (lane == 0) {
    u64 f = lanes[0];
    f ^= f >> 33;
    f *= 0xFF51AFD7ED558CCDull;
    f ^= f >> 33;
    out[index] = f;
  }
}
