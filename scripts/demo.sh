#!/usr/bin/env bash
# Installs what is missing, builds, and runs the bundled example application under kernel
# replay on the virtual HSA runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-22/lib}"
cargo build --workspace --quiet
exec cargo run --quiet -p kreplay-cli --bin kreplay -- demo "$@"
