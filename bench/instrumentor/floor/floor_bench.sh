#!/usr/bin/env bash
# The goals' floor (docs/performance.md, "The goals' floor, measured"): instructions of gzip -9, bzip2 -9 and bc -l
# under callgrind for builds given as directories, each holding the stripped binaries (gzip; bzip2 with its
# libbz2.so.1.0; bc) and the libsampler.so.0 they are to run with (put first in LD_LIBRARY_PATH, over the
# binaries' RUNPATH). Directories of equal path length: bzip2 scans argv[0] through its sites.
# Each build runs with no sample in reach (SAMPLER_SPARSITY=1e15), at 1/1000 and at 1/100, SAMPLER_SEED=1; plain
# clang-19's build once. Prints per program and build the instructions, the ratio to plain's (plain's figure on
# its own row), the samples (the report's counts summed) and a sample's instructions, (1/N - none in reach) /
# samples. A build whose unit functions count nothing (floor/no-count.patch) reports no samples: give it
# LABEL=DIR:OTHER to take OTHER's samples (the same draw, so the same samples), OTHER a label given before it.
#
# Usage: bench/instrumentor/floor/floor_bench.sh --plain DIR --input FILE --bc-input FILE
#            [--extract-report PATH] LABEL=DIR[:SAMPLES_FROM]...
#   FILE: gzip's and bzip2's input (programs_bench.sh --instructions: its input's first 2,000,000 bytes); bc's
#   input (scale = 500 and 4 * a(1)). Every run's output must be plain clang's.
set -uo pipefail
plain='' input='' bc_input='' extract=extract-report
while [ $# -gt 0 ]; do
  case $1 in
  --plain) plain=$2; shift 2 ;;
  --input) input=$2; shift 2 ;;
  --bc-input) bc_input=$2; shift 2 ;;
  --extract-report) extract=$2; shift 2 ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "floor_bench.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
if [ -z "$plain" ] || [ ! -f "$input" ] || [ ! -f "$bc_input" ] || [ $# -eq 0 ]; then
  echo "floor_bench.sh: needs --plain, --input, --bc-input and at least one LABEL=DIR (--help)" >&2
  exit 2
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

run() {  # NAME DIR PROGRAM ENVIRONMENT...: instructions; the report in $work/NAME.report, the output compared
  local name=$1 dir=$2 program=$3 from arguments
  shift 3
  case $program in bc) from=$bc_input; arguments=(-l) ;; *) from=$input; arguments=(-9 -c) ;; esac
  env LD_LIBRARY_PATH="$dir" SAMPLER_SEED=1 SAMPLER_FILE="$work/$name.report" "$@" valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$dir/$program" "${arguments[@]}" <"$from" >"$work/$name.out" \
    2>"$work/$name.err" || { echo "floor_bench.sh: $dir/$program failed:" >&2; tail -5 "$work/$name.err" >&2; exit 1; }
  if [ "$name" != "$program-plain" ] && ! cmp -s "$work/$name.out" "$work/$program-plain.out"; then
    echo "floor_bench.sh: $dir/$program's output differs from plain clang's" >&2; exit 1
  fi
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$name.err"
}
samples() {  # REPORT: the samples subreport's counts summed
  "$extract" samples <"$1" 2>/dev/null | awk '!/^</ { for (i = 1; i <= NF; ++i) n += $i } END { printf "%.0f", n }'
}

for program in gzip bzip2 bc; do
  base=$(run "$program-plain" "$plain" "$program") || exit 1
  echo "== $program, instructions under callgrind (ratio: to plain clang-19's $base)"
  printf '%-26s %15s %8s %12s %10s\n' "build, sampling" "instructions" "ratio" "samples" "a sample"
  printf '%-26s %15s %8s\n' "plain clang-19" "$base" "1.00x"
  for build in "$@"; do
    label=${build%%=*} dir=${build#*=} from=$label
    [[ $dir == *:* ]] && { from=${dir##*:}; dir=${dir%:*}; }
    none=
    for sparsity in 1e15 1000 100; do
      n=$(run "$program-$label-$sparsity" "$dir" "$program" SAMPLER_SPARSITY=$sparsity) || exit 1
      [ "$sparsity" = 1e15 ] && none=$n
      taken=-
      per=-
      if [ "$sparsity" != 1e15 ]; then
        taken=$(samples "$work/$program-$from-$sparsity.report")
        per=$(awk -v a="$n" -v b="$none" -v s="$taken" 'BEGIN { printf "%.1f", (s > 0 ? (a - b) / s : 0) }')
      fi
      sampling="1/$sparsity"
      [ "$sparsity" = 1e15 ] && sampling="none in reach"
      printf '%-26s %15s %8s %12s %10s\n' "$label, $sampling" "$n" \
        "$(awk -v a="$n" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')" "$taken" "$per"
    done
  done
done
