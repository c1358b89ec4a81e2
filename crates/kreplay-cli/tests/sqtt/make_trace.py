#!/usr/bin/env python3
"""Writes a large synthetic address trace for timing `kreplay sqtt memtrace`.

Usage: make_trace.py OUT_DIR BLOCKS [--clang clang-22] [--objcopy llvm-objcopy-22]

Creates OUT_DIR/traced.co (tests/sqtt/kernels.hip for gfx942 with a .sqtt_funcmap holding
three wave64 address-trace operations) and OUT_DIR/records.jsonl (BLOCKS address blocks of
131 records each, spread over 16 interleaved waves). Deterministic.
"""

import argparse
import os
import random
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE_INCLUDE = os.path.join(HERE, "..", "..", "..", "test-support", "device")

FUNCMAP = (
    "W:64\nK:reduce_sum\n"
    "P:1:addr_trace_load@kernels.hip:14\nR:1:extra_payload_count=130\n"
    "P:2:addr_trace_store@kernels.hip:14\nR:2:extra_payload_count=130\n"
    "P:3:addr_trace_lds_load@kernels.hip:19\nR:3:extra_payload_count=66\n"
)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("blocks", type=int)
    ap.add_argument("--clang", default="clang-22")
    ap.add_argument("--objcopy", default="llvm-objcopy-22")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    co = os.path.join(a.out_dir, "plain.co")
    subprocess.run([a.clang, "-x", "hip", "--offload-arch=gfx942", "--cuda-device-only",
                    "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-O2", "-I", DEVICE_INCLUDE,
                    os.path.join(HERE, "kernels.hip"), "-o", co], check=True)
    section = os.path.join(a.out_dir, "funcmap.bin")
    with open(section, "wb") as f:
        f.write(FUNCMAP.encode() + b"\0")
    subprocess.run([a.objcopy, "--add-section=.sqtt_funcmap=" + section, co,
                    os.path.join(a.out_dir, "traced.co")], check=True)

    rng = random.Random(1)
    waves = [(cu, simd, w) for cu in range(2) for simd in range(4) for w in range(2)]
    pending = {k: [] for k in waves}
    for _ in range(a.blocks):
        key = rng.choice(waves)
        op = rng.choice((1, 2, 3))
        exec_mask = rng.getrandbits(64) | 1
        words = [op << 2, exec_mask & 0xFFFFFFFF, exec_mask >> 32]
        base = 0x7F0000000000 + rng.randrange(1 << 24) * 4
        stride = rng.choice((4, 8, 16, 0))
        for lane in range(64):
            addr = base + lane * stride
            if op == 3:
                words.append(addr & 0xFFFFFFFF)
            else:
                words += [addr & 0xFFFFFFFF, addr >> 32]
        pending[key].append(words)
    with open(os.path.join(a.out_dir, "records.jsonl"), "w") as out:
        t = 0
        streams = {k: [w for block in v for w in block] for k, v in pending.items()}
        cursors = {k: 0 for k in waves}
        live = [k for k in waves if streams[k]]
        while live:
            k = rng.choice(live)
            for _ in range(rng.randint(1, 8)):
                if cursors[k] == len(streams[k]):
                    break
                cu, simd, w = k
                out.write('{"time": %d, "value": %d, "cu": %d, "simd": %d, "wave_id": %d}\n'
                          % (t, streams[k][cursors[k]], cu, simd, w))
                cursors[k] += 1
                t += 1
            if cursors[k] == len(streams[k]):
                live.remove(k)


if __name__ == "__main__":
    main()
