#!/bin/bash
# Benchmark of extract-section against its baselines, measured in the same run (not run by ctest).
#
#   extract_section_bench.sh EXTRACT_SECTION [SIZE_MB] [RUNS]
#
# Builds an ELF object whose .debug_site_info holds SIZE_MB (default 256) of generated site-information text
# (objcopy --add-section), plus zlib and zstd compressed copies (objcopy --compress-debug-sections), then times,
# best of RUNS (default 3), with all output to /dev/null:
#   plain: objcopy --dump-section            vs extract-section   goal: ratio <= 0.3
#   zlib:  gzip -dc of the same payload       vs extract-section   goal: ratio <= 1.2
#   zstd:  zstd -dc of the same payload       vs extract-section   goal: ratio <= 1.2
# gzip and zstd compress the payload at their default levels, which are the ones objcopy uses. Every
# extract-section output is first checked byte for byte against the payload.
set -eu
source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"  # best_ns
tool=${1:?usage: extract_section_bench.sh EXTRACT_SECTION [SIZE_MB] [RUNS]}
size_mb=${2:-256}
runs=${3:-3}
tool=$(readlink -f "$tool")
work=$(mktemp -d "${TMPDIR:-/tmp}/extract_section_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# Site-information text as instrumented programs carry it: units of 200 sites with varied fields, so that it
# compresses like the real thing (about 9x with gzip, 18x with zstd), not like a repeated line.
awk -v target=$((size_mb * 1024 * 1024)) 'BEGIN {
  n = 0; u = 0
  while (n < target) {
    line = sprintf("<sites unit=\"%08x%08x%08x%08x\" scheme=\"branches\">\n", u, u * 7, u * 13, u * 31)
    n += length(line); printf "%s", line
    for (i = 1; i <= 200 && n < target; i++) {
      line = sprintf("src/module_%d/file_%d.c\t%d\tfunction_%d_%d\t%d\n", u % 97, u, i * 3 + 11, u, i % 17, i)
      n += length(line); printf "%s", line
    }
    printf "</sites>\n"; n += 9; u++
  }
}' >payload.txt
echo 'int bench_host(void) { return 0; }' >host.c
cc -c host.c -o host.o
objcopy --add-section .debug_site_info=payload.txt host.o plain.o
objcopy --compress-debug-sections=zlib plain.o zlib.o
objcopy --compress-debug-sections=zstd plain.o zstd.o
gzip -c payload.txt >payload.gz
zstd -q -c payload.txt >payload.zst

for variant in plain zlib zstd; do
  "$tool" .debug_site_info $variant.o >check.txt
  cmp -s check.txt payload.txt || { echo "extract-section $variant.o: output differs from the payload" >&2; exit 1; }
done
rm -f check.txt

# compare NAME GOAL BASELINE_LABEL BASELINE_NS TOOL_NS: prints one line with both times and the ratio.
compare() {
  awk -v name="$1" -v goal="$2" -v label="$3" -v base="$4" -v ours="$5" -v mb="$size_mb" 'BEGIN {
    ratio = ours / base
    printf "%-6s %d MB: %-28s %7.3f s   extract-section %7.3f s   ratio %.2f (goal <= %.1f: %s)\n",
           name, mb, label, base / 1e9, ours / 1e9, ratio, goal, ratio <= goal ? "met" : "MISSED"
  }'
}

printf 'extract-section benchmark: %d MB section, best of %d runs, output to /dev/null\n' "$size_mb" "$runs"
printf 'compressed: payload.gz %d bytes, payload.zst %d bytes; objects with the section: zlib %d, zstd %d bytes\n' \
  "$(stat -c %s payload.gz)" "$(stat -c %s payload.zst)" "$(stat -c %s zlib.o)" "$(stat -c %s zstd.o)"

base=$(best_ns objcopy --dump-section .debug_site_info=/dev/null plain.o /dev/null)
ours=$(best_ns "$tool" .debug_site_info plain.o)
compare plain 0.3 "objcopy --dump-section" "$base" "$ours"

base=$(best_ns gzip -dc payload.gz)
ours=$(best_ns "$tool" .debug_site_info zlib.o)
compare zlib 1.2 "gzip -dc" "$base" "$ours"

base=$(best_ns zstd -q -dc payload.zst)
ours=$(best_ns "$tool" .debug_site_info zstd.o)
compare zstd 1.2 "zstd -dc" "$base" "$ours"
