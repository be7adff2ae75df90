#!/bin/bash
# Benchmark of the symbol workflow against LLVM's tools in the same run (not run by ctest):
#
#   symbols_bench.sh SAMPLER_SYMBOLS RESOLVE_BACKTRACE GSYM_BENCH BINARY [ADDRESSES] [RUNS]
#
#   conversion   sampler-symbols gsym BINARY vs llvm-gsymutil-19 --convert (its default threads, and one thread);
#                goal: within 2x
#   size         the GSYM file vs the binary's DWARF (.debug_* sections), and vs llvm-gsymutil's file
#   lookups      ADDRESSES (default 10^5) random addresses inside BINARY's functions: sampler-symbols lookup (GSYM)
#                vs llvm-symbolizer-19 --no-demangle (DWARF), addresses per second, each a whole process with its
#                output; and in-process GSYM lookups (bench/sections/gsym_bench, no output); goal: >= 10x
#   markup       the same addresses as one crash stack: resolve-backtrace --symbols vs
#                resolve-backtrace | llvm-symbolizer-19 --filter-markup; frames per second
# With BIG_BINARY=FILE in the environment (a debug binary of about 50 MB: the conversion goal names one),
# the conversion is also timed on FILE, and nothing else is done with it (make_big_debug_binary.sh makes one from
# a build tree).
# Before timing, the outputs are checked equal (lookups: byte for byte; markup: frame lines without columns).
# Times are the best of RUNS (default 3), output to /dev/null, in CPU time (user + system: on a shared machine the
# wall clock measures the neighbours).
set -eu
source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"  # best_ns
symbols=${1:?usage: symbols_bench.sh SAMPLER_SYMBOLS RESOLVE_BACKTRACE GSYM_BENCH BINARY [ADDRESSES] [RUNS]}
resolve=${2:?}
gsym_bench=${3:?}
binary=${4:?}
count=${5:-100000}
runs=${6:-3}
symbolizer=${SYMBOLIZER:-llvm-symbolizer-19}
gsymutil=${GSYMUTIL:-llvm-gsymutil-19}
work=$(mktemp -d "${TMPDIR:-/tmp}/symbols_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

seconds() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
per_second() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.0f", n / (ns / 1e9) }'; }

id=$(readelf -n "$binary" | sed -n 's/^ *Build ID: //p')
[ -n "$id" ] || { echo "symbols_bench.sh: $binary has no build ID" >&2; exit 1; }
echo "symbols benchmark: $binary ($(stat -c %s "$binary") bytes), $count addresses, best of $runs"

# ---- conversion
mkdir -p "$work/syms"
ours_ns=$(best_ns --cpu "$symbols" gsym "$binary" -o "$work/syms")
llvm_ns=$(best_ns --cpu "$gsymutil" --convert "$binary" --out-file "$work/llvm.gsym")
llvm1_ns=$(best_ns --cpu "$gsymutil" --convert "$binary" --out-file "$work/llvm1.gsym" --num-threads=1)
echo "conversion: sampler-symbols gsym $(seconds "$ours_ns") s   llvm-gsymutil --convert $(seconds "$llvm_ns") s" \
  "(1 thread: $(seconds "$llvm1_ns") s)   ratio $(ratio "$ours_ns" "$llvm_ns") (goal <= 2)," \
  "$(ratio "$ours_ns" "$llvm1_ns") against one thread"

if [ -n "${BIG_BINARY:-}" ]; then
  mkdir -p "$work/big"
  ours_ns=$(best_ns --cpu "$symbols" gsym "$BIG_BINARY" -o "$work/big")
  llvm_ns=$(best_ns --cpu "$gsymutil" --convert "$BIG_BINARY" --out-file "$work/big.gsym")
  llvm1_ns=$(best_ns --cpu "$gsymutil" --convert "$BIG_BINARY" --out-file "$work/big1.gsym" --num-threads=1)
  echo "conversion of BIG_BINARY $BIG_BINARY ($(stat -c %s "$BIG_BINARY") bytes): sampler-symbols gsym" \
    "$(seconds "$ours_ns") s   llvm-gsymutil --convert $(seconds "$llvm_ns") s (1 thread: $(seconds "$llvm1_ns")" \
    "s)   ratio $(ratio "$ours_ns" "$llvm_ns") (goal <= 2), $(ratio "$ours_ns" "$llvm1_ns") against one thread;" \
    "GSYM $(stat -c %s "$work"/big/*.gsym) bytes, llvm-gsymutil's $(stat -c %s "$work/big.gsym") bytes"
  rm -rf "$work/big" "$work/big.gsym" "$work/big1.gsym"
fi

# ---- size
gsym=$work/syms/$id.gsym
dwarf=$(readelf -SW "$binary" | awk '
  { for (i = 1; i <= NF; i++) if ($i ~ /^\.(z)?debug_/) { s += strtonum_hex($(i + 4)); break } }
  function strtonum_hex(h,   v, j) { v = 0; h = tolower(h)
    for (j = 1; j <= length(h); j++) v = v * 16 + index("0123456789abcdef", substr(h, j, 1)) - 1; return v }
  END { print s + 0 }')
size=$(stat -c %s "$gsym")
echo "size: DWARF (.debug_*) $dwarf bytes   our GSYM $size bytes ($(ratio "$size" "$dwarf")" \
  "of the DWARF)   llvm-gsymutil's GSYM $(stat -c %s "$work/llvm.gsym") bytes"

# ---- lookups: random addresses inside function symbols
nm -S --defined-only "$binary" | awk -v n="$count" '
  function hex(h,   v, i) { v = 0; h = tolower(h)
    for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
  $3 ~ /^[TtWw]$/ { z = hex($2); if (z > 0) { start[k] = hex($1); size[k] = z; total += z; k++ } }
  END { srand(17); for (i = 0; i < n; i++) { r = int(rand() * total)
    for (j = 0; j < k; j++) { if (r < size[j]) { printf "0x%x\n", start[j] + r; break } r -= size[j] } } }' \
  >"$work/addrs"
"$symbols" lookup "$gsym" <"$work/addrs" >"$work/ours"
"$symbolizer" --no-demangle -e "$binary" <"$work/addrs" | sed -E 's/^(.*):([0-9]+):[0-9]+$/\1:\2/' >"$work/theirs"
cmp -s "$work/ours" "$work/theirs" || echo "WARNING: lookups differ from llvm-symbolizer's (not a fair comparison)"
ours_ns=$(best_ns --cpu --input "$work/addrs" "$symbols" lookup "$gsym")
llvm_ns=$(best_ns --cpu --input "$work/addrs" "$symbolizer" --no-demangle -e "$binary")
echo "lookups: sampler-symbols lookup $(seconds "$ours_ns") s $(per_second "$count" "$ours_ns")/s   llvm-symbolizer" \
  "$(seconds "$llvm_ns") s $(per_second "$count" "$llvm_ns")/s   ratio $(ratio "$llvm_ns" "$ours_ns")x (goal >= 10)"
inproc_ns=$(best_ns --cpu "$gsym_bench" "$gsym" "$work/addrs" 1)
"$gsym_bench" "$gsym" "$work/addrs" 5
echo "lookups in-process: $(per_second "$count" "$inproc_ns")/s (one round, with mapping the file and reading the" \
  "addresses)   ratio to llvm-symbolizer $(ratio "$llvm_ns" "$inproc_ns")x (goal >= 10)"

# ---- markup: one stack of legacy frames (return addresses: one past each address)
{
  echo '<report id="main-backtrace">'
  echo '{{{reset}}}'
  echo "{{{module:0:$binary:elf:$id}}}"
  echo '{{{mmap:0x10000000:0x10000000:load:0:rx:0x00}}}'
  awk '{ a = 0; h = substr($1, 3)
    for (i = 1; i <= length(h); i++) a = a * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
    printf "x[0x%x]\n", a + 268435456 + 1 }' "$work/addrs"
  echo '</report>'
} >"$work/report"
mkdir -p "$work/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$binary" "$work/debug/.build-id/${id:0:2}/${id:2}.debug"
"$resolve" "$work/report" >"$work/markup"
filter() { "$symbolizer" --filter-markup --debug-file-directory="$work/debug" <"$work/markup"; }
pipeline() { "$resolve" "$work/report" | "$symbolizer" --filter-markup --debug-file-directory="$work/debug"; }
ours_ns=$(best_ns --cpu "$resolve" --symbols "$work/syms" "$work/report")
llvm_ns=$(best_ns --cpu pipeline)
filter_ns=$(best_ns --cpu filter)
echo "markup: resolve-backtrace --symbols $(seconds "$ours_ns") s $(per_second "$count" "$ours_ns") frames/s" \
  "  resolve-backtrace | llvm-symbolizer --filter-markup $(seconds "$llvm_ns") s $(per_second "$count" "$llvm_ns")" \
  "frames/s (the filter alone: $(per_second "$count" "$filter_ns")/s)   ratio $(ratio "$llvm_ns" "$ours_ns")x"
