// The tool's own device kernel: one 64-bit hash per chunk of a region, for the changed-chunk
// restore where device memory is not host-accessible (see `device_hash.rs`).
//
// The hash ("lane-fold"): a chunk of `len` bytes is read as `len / 4` little-endian 32-bit
// words w[0..]; lane l of the work-group (of L lanes) folds the words w[l], w[l + L], ... in
// order into h_l = seed(l, len) with  h = (h ^ w) * P1,  h ^= h >> 29  (each step a bijection
// of h for fixed w, and of w for fixed h). Lane 0 also folds the 1-3 trailing bytes as one
// zero-padded word. The chunk hash folds h_0 .. h_{L-1} in order with  f = (f ^ h_l) * P2,
// f ^= f >> 31,  then a final avalanche. Any single changed word changes its lane's h_l and
// therefore f: the hash sees every byte. Deterministic for a given L (the host always
// dispatches 64-lane work-groups).
//
// Built at build time by clang-22 for gfx90a and gfx942 (build.rs), embedded in the library.

typedef unsigned int u32;
typedef unsigned long long u64;

#define P1 0x9E3779B97F4A7C15ull
#define P2 0xC2B2AE3D27D4EB4Full
#define LANES_MAX 1024

static __attribute__((device)) inline u64 lane_seed(u32 lane, u64 len) {
  return (len * P2) ^ ((u64)(lane + 1) * P1);
}

extern "C" __attribute__((global)) void kreplay_chunk_hash(const u32* base, u64 size, u64 chunk, u64* out) {
  __attribute__((shared)) u64 lanes[LANES_MAX];
  u32 lane = __builtin_amdgcn_workitem_id_x();
  const unsigned short* packet = (const unsigned short*)__builtin_amdgcn_dispatch_ptr();
  u32 count = packet[2];  // workgroup_size_x
  u64 index = __builtin_amdgcn_workgroup_id_x();
  u64 start = index * chunk;
  u64 len = size - start < chunk ? size - start : chunk;
  const u32* words = (const u32*)((const unsigned char*)base + start);
  u64 nwords = len / 4;
  u64 h = lane_seed(lane, len);
  for (u64 w = lane; w < nwords; w += count) {
    h = (h ^ (u64)words[w]) * P1;
    h ^= h >> 29;
  }
  if (lane == 0 && (len & 3) != 0) {
    const unsigned char* tail = (const unsigned char*)(words + nwords);
    u32 t = 0;
    for (u32 i = 0; i < (u32)(len & 3); ++i) t |= (u32)tail[i] << (8 * i);
    h = (h ^ (u64)t) * P1;
    h ^= h >> 29;
  }
  lanes[lane] = h;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (lane == 0) {
    u64 f = len ^ P2;
    for (u32 l = 0; l < count; ++l) {
      f = (f ^ lanes[l]) * P2;
      f ^= f >> 31;
    }
    f ^= f >> 33;
    f *= 0xFF51AFD7ED558CCDull;
    f ^= f >> 33;
    out[index] = f;
  }
}
