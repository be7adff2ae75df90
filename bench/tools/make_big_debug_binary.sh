#!/bin/bash
# A debug binary of about 50 MB for symbols_bench.sh's BIG_BINARY (the goal: "conversion of a 50 MB debug
# binary"): every static library of a RelWithDebInfo build tree (-O2 -g) and the clang plugin's objects, linked
# whole into one executable. It is never run (unresolved symbols are left so, duplicates allowed); it only carries
# the build's real DWARF (about 23 MB of .debug_info, 8 MB of location lists) over 1.4 MB of code.
#   make_big_debug_binary.sh BUILD_DIR OUTPUT
set -eu
build=${1:?usage: make_big_debug_binary.sh BUILD_DIR OUTPUT}
out=${2:?usage: make_big_debug_binary.sh BUILD_DIR OUTPUT}
main=$(mktemp "${TMPDIR:-/tmp}/big_main.XXXXXX.cpp")
trap 'rm -f "$main"' EXIT
echo 'int main() { return 0; }' >"$main"
mapfile -t archives < <(find "$build" -name 'libsampler_*.a' -not -name 'libsampler.a' -not -path '*/scratch/*' |
  sort)
mapfile -t plugin < <(find "$build/instrumentor" -path '*sampler_plugin.dir*' -name '*.o' 2>/dev/null | sort)
c++ -g -O2 -o "$out" "$main" "${plugin[@]}" -Wl,--whole-archive "${archives[@]}" -Wl,--no-whole-archive \
  -Wl,--unresolved-symbols=ignore-all -Wl,--allow-multiple-definition -Wl,--build-id
echo "$out: $(stat -c %s "$out") bytes"
