#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-22/lib}"
# Format and lint gates first: a failure here fails the run before any test.
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
cargo build --workspace --all-targets
cargo test --workspace --no-fail-fast
# Model test of the replay-gate protocol (loom); its own target dir, since `--cfg loom` swaps
# the gate's lock and counters for loom's.
CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" cargo test --release -p kreplay --test loom_gate
