#!/usr/bin/env bash
# What one sample costs and what one site costs on the fast side, in instructions (callgrind counts them: the same
# figure on a busy machine), with plain clang-19's build of the same workload as the baseline in the same run.
# The workload (sample_cost.c, or a C file given) is built by clang-19 and by sampler-cc at its defaults, then run
#   - plain:                  the baseline
#   - sampling off:           no SAMPLER_SPARSITY (the twins without sites)
#   - none in reach:          SAMPLER_SPARSITY=1e15 (sampling on, every draw beyond the run: the fast sides alone)
#   - at 1/N for each N given (default 100 and 1000)
# and a sparsity-1 run counts the opportunities (every counter of its report summed). Printed: each run's
# instructions and their ratio to plain; per sample, (run at 1/N - none in reach) / samples taken; per site on the
# fast side, (none in reach - plain) / opportunities.
#
# --shared-counters: every run counts in a shared mapping, as under sampler-run (a fresh 64 MiB sparse file on
# descriptor 9 as SAMPLER_SHARED_FD, docs/instrumenting.md section 2), to compare with the same runs without it.
#
# Usage: bench/instrumentor/sample_cost.sh [--build BUILD_DIR] [--iterations N] [--source FILE.c] [--shared-counters]
#        [SPARSITY...]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
iterations=1000000
source_file=$top/bench/instrumentor/sample_cost.c
shared_counters=false
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --iterations) iterations=$2; shift 2 ;;
  --source) source_file=$2; shift 2 ;;
  --shared-counters) shared_counters=true; shift ;;
  -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "sample_cost.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
sparsities=("$@")
[ ${#sparsities[@]} -eq 0 ] && sparsities=(100 1000)
cc=$build/instrumentor/sampler-cc
[ -x "$cc" ] || { echo "sample_cost.sh: $cc is not built" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "sample_cost.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

clang-19 -O2 "$source_file" -o "$work/plain"
"$cc" -O2 "$source_file" -o "$work/sampled"

# instructions ENV... -- PROGRAM: callgrind's total for one run.
instructions() {
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if $shared_counters; then
    rm -f "$work/shared" && truncate -s 64M "$work/shared" && exec 9<>"$work/shared"
    envs+=(SAMPLER_SHARED_FD=9)
  fi
  env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$@" "$iterations" \
    >/dev/null 2>"$work/cg.err"
  $shared_counters && exec 9>&-
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/cg.err"
}
# counted FILE: every counter of a report summed (one per site execution taken).
counted() { "$build/tools/extract-report" samples <"$1" | awk '!/^</ { for (i = 1; i <= NF; i++) n += $i } END { print n + 0 }'; }

plain=$(instructions -- "$work/plain")
off=$(instructions -- "$work/sampled")
none=$(instructions SAMPLER_SPARSITY=1e15 SAMPLER_SEED=1 -- "$work/sampled")
SAMPLER_SPARSITY=1 SAMPLER_FILE="$work/all.txt" "$work/sampled" "$iterations" >/dev/null
opportunities=$(counted "$work/all.txt")
ratio() { awk -v a="$1" -v b="$plain" 'BEGIN { printf "%.2fx", a / b }'; }
printf '%-22s %14s %8s\n' run instructions ratio
printf '%-22s %14s %8s\n' "plain clang-19" "$plain" 1.00x
printf '%-22s %14s %8s\n' "sampling off" "$off" "$(ratio "$off")"
printf '%-22s %14s %8s\n' "none in reach" "$none" "$(ratio "$none")"
for s in "${sparsities[@]}"; do
  n=$(instructions SAMPLER_SPARSITY="$s" SAMPLER_SEED=1 SAMPLER_FILE="$work/r.txt" -- "$work/sampled")
  samples=$(counted "$work/r.txt")
  printf '%-22s %14s %8s   %s samples, %s instructions per sample\n' "1/$s" "$n" "$(ratio "$n")" "$samples" \
    "$(awk -v a="$n" -v b="$none" -v s="$samples" 'BEGIN { printf "%.1f", s ? (a - b) / s : 0 }')"
done
echo "fast side: $opportunities opportunities, $(awk -v a="$none" -v b="$plain" -v o="$opportunities" \
  'BEGIN { printf "%.2f", o ? (a - b) / o : 0 }') instructions per site"
