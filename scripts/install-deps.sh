#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need. Idempotent: packages already
# present are not touched, and apt is not called at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential pkg-config
  llvm-22-dev clang-22 clang-tools-22 lld-22 libclang-22-dev llvm-22-tools
  libhsa-runtime-dev rocminfo
  hipcc libamdhip64-dev rocm-device-libs
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

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo not found; install Rust (https://rustup.rs) and re-run." >&2
  exit 1
fi
