#!/usr/bin/env bash
# Latency of a replayed dispatch beside a busy sibling stream, against the same application run
# without the tool (docs/PERFORMANCE.md). Builds the tool and vhsa (debug), compiles
# tests/apps/concurrent.c, and runs each configuration ROUNDS times in turn, printing the
# application's own submit-to-completion figures.
set -euo pipefail
cd "$(dirname "$0")/.."
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-22/lib}"
ROUNDS="${ROUNDS:-3}"
cargo build -q -p vhsa -p kreplay
out=target/debug/bench-apps
mkdir -p "$out/lib"
ln -sf "$PWD/target/debug/libhsa_runtime64.so" "$out/lib/libhsa-runtime64.so.1"
cc -std=c11 -O2 -pthread -D_DEFAULT_SOURCE -Itests/apps -Icrates/test-support/host -Icrates/vhsa/include -Iinclude \
  tests/apps/concurrent.c -o "$out/concurrent" -L"$out/lib" -l:libhsa-runtime64.so.1 -Wl,-rpath,"$PWD/$out/lib"
run() { # label, tool(0/1), args...
  local label=$1 tool=$2
  shift 2
  if [ "$tool" = 1 ]; then
    env HSA_TOOLS_LIB="$PWD/target/debug/libkreplay.so" KREPLAY_PASSES=3 KREPLAY_KERNEL_INCLUDE='^rec$' \
      "$out/concurrent" "$@" | sed -n "s/^APP latency /$label: /p"
  else
    "$out/concurrent" "$@" | sed -n "s/^APP latency /$label: /p"
  fi
}
for _ in $(seq "$ROUNDS"); do
  run "busy sibling, no tool (1 pass)      " 0 siblings 50 1
  run "busy sibling, tool, 3 passes        " 1 siblings 50 3
  run "slow handlers, no tool (1 pass)     " 0 handlers 50 1 slow
  run "slow handlers, tool, 3 passes       " 1 handlers 50 3 slow
done
