#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, and the project-local Python
# environment `.venv/` with the `perfetto` package (its compiled trace protos decode our
# .pftrace files in the tests, offline). Idempotent: packages already present are not touched,
# and apt and pip are not called at all when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential pkg-config
  llvm-22-dev clang-22 clang-tools-22 lld-22 libclang-22-dev llvm-22-tools
  libhsa-runtime-dev rocminfo
  python3 python3-venv
  libamdhip64-dev hipcc libamd-comgr2 rocm-device-libs
  libhsakmt-dev libhsakmt1 libhsa-runtime64-1
  # AMD's precompiled library kernels, walked by the emulator's decoder-coverage test, and the
  # libraries' headers (rocPRIM's templates among them) for the HIP program that runs them.
  librocrand1 librocsparse0 librocrand-dev librocsparse-dev librocprim-dev
  # llvm-objdump-22: the counter tests' independent instruction count.
  llvm-22
  # The runtime's memory-safety test runs a C program under memcheck.
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python packages of the tests, pinned; the virtual environment is ignored by git.
python_packages=(perfetto==0.59.1 protobuf==7.36.2)
if ! .venv/bin/python -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" >/dev/null 2>&1; then
  echo "install-deps: creating .venv with ${python_packages[*]}" >&2
  python3 -m venv .venv
  .venv/bin/pip install -q "${python_packages[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo not found; install Rust (https://rustup.rs) and re-run." >&2
  exit 1
fi
