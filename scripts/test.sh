#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds and runs every test with ctest.
# Usage: scripts/test.sh [BUILD_DIR]   (default: build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
"$top/scripts/setup.sh"
werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S "$top" -B "$build" -DSAMPLER_WERROR=$werror
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)"
