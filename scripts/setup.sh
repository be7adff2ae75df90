#!/usr/bin/env bash
# Installs, from Debian's archive, whatever sampler needs to build and test that is not already present.
# Does nothing when everything is there. Needs root or sudo only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libelf-dev libpugixml-dev zlib1g-dev libzstd-dev zstd libgtest-dev
  libsqlite3-dev     # store/: the collector's default database
  libpq-dev          # store/: the PostgreSQL store
  postgresql-15      # a real server the PostgreSQL tests start (initdb, pg_ctl) as an unprivileged user
  libmicrohttpd-dev  # collector/: the HTTP server of sampler-collector
  libssl-dev         # collector/: SHA-256 of the API keys, constant-time comparison
  libcurl4-openssl-dev  # collector/: sampler-run's uploads (http and https)
  curl               # the collector tests' HTTP client
  elfutils binutils file
  llvm-19 clang-19   # llvm-symbolizer-19, yaml2obj, libFuzzer
  chromium           # headless: loads sampler-analyze's HTML page in its test (tests/analysis)
  rpm                # rpmbuild for the samplerinfo packaging tests
  cpio               # rpm2cpio | cpio -idm: unpacking the built RPMs in those tests
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
