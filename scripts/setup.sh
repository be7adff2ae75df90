#!/usr/bin/env bash
# Installs, from Debian's archive, whatever sampler needs to build and test that is not already present.
# Does nothing when everything is there. Needs root or sudo only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libelf-dev libpugixml-dev zlib1g-dev libzstd-dev zstd libgtest-dev
  elfutils binutils file
  llvm-19 clang-19   # llvm-symbolizer-19, yaml2obj, libFuzzer
  llvm-19-dev libclang-19-dev   # the instrumentor sampler-cc: its clang plugin builds against them
  rpm                # rpmbuild for the samplerinfo packaging tests
  cpio               # rpm2cpio | cpio -idm: unpacking the built RPMs in those tests
  autoconf automake  # the instrumentor's autotools test: CC=sampler-cc ./configure && make check
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
