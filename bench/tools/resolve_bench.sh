#!/bin/bash
# Benchmarks of resolveSamples and resolve-backtrace against their goals, measured in the same run (not run by
# ctest).
#
#   resolve_bench.sh samples RESOLVE_SAMPLES [SITES] [RUNS]
#     A .sites file of SITES sites (default 10^6) in units of 1000 branches sites, and a report whose samples
#     sections come in shuffled order. Baseline: `paste` over the same data already aligned (the sites and their
#     counters side by side in output order), the join's floor. Goal: resolveSamples <= 1.5x paste. The output of
#     resolveSamples is first checked byte for byte against paste's.
#   resolve_bench.sh backtrace RESOLVE_BACKTRACE MAKE_BACKTRACE_REPORT [STACKS] [FRAMES] [RUNS]
#     STACKS (default 100) crash reports of FRAMES (default 10^4) frames each. Goal: >= 10^6 frames per second.
#     `cat` of the same report is printed for scale.
# Times are the best of RUNS (default 3), output to /dev/null.
set -eu
source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"  # best_ns
mode=${1:?usage: resolve_bench.sh samples|backtrace TOOL ...}
work=$(mktemp -d "${TMPDIR:-/tmp}/resolve_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

case $mode in
samples)
  tool=$(readlink -f "${2:?resolveSamples}")
  sites=${3:-1000000}
  runs=${4:-3}
  cd "$work"
  units=$(((sites + 999) / 1000))
  # app.sites: units in order. report: the samples sections in a shuffled order (shuf with a fixed seed).
  # aligned.left / aligned.right: the same sites and counters in the report's order, for paste.
  awk -v units=$units 'BEGIN {
    for (u = 0; u < units; u++) {
      printf "<sites unit=\"%08x%08x%08x%08x\" scheme=\"branches\">\n", u, u * 7, u * 13, u * 31
      for (i = 1; i <= 1000; i++)
        printf "src/module_%d/file_%d.c\t%d\tfunction_%d_%d\t%d\tp_%d != 0\n", u % 97, u, i * 3 + 11, u, i % 17, i, i
      printf "</sites>\n"
    }
  }' >app.sites
  seq 0 $((units - 1)) | shuf --random-source=<(yes) >order
  awk -v out_left=aligned.left -v out_right=aligned.right '
    NR == FNR { order[n++] = $1; next }
    END {
      srand(1)
      print "<report id=\"samples\">"
      for (k = 0; k < n; k++) {
        u = order[k]
        unit = sprintf("%08x%08x%08x%08x", u, u * 7, u * 13, u * 31)
        printf "<samples unit=\"%s\" scheme=\"branches\">\n", unit
        for (i = 1; i <= 1000; i++) {
          a = int(rand() * 1000); b = (i % 3 == 0) ? int(rand() * 100000) : 0
          printf "%d\t%d\n", a, b
          printf "app.sites\t%s\tbranches\tsrc/module_%d/file_%d.c\t%d\tfunction_%d_%d\t%d\tp_%d != 0\n", unit, u % 97, u, i * 3 + 11, u, i % 17, i, i > out_left
          printf "%d\t%d\n", a, b > out_right
        }
        print "</samples>"
      }
      print "</report>"
    }' order /dev/null >report
  printf '' >empty
  paste aligned.left aligned.right >expected
  "$tool" app.sites <report >actual
  cmp -s actual expected || { echo "resolveSamples output differs from paste's" >&2; exit 1; }
  base=$(best_ns --input empty paste aligned.left aligned.right)
  ours=$(best_ns --input report "$tool" app.sites)
  ours_no_merge=$(best_ns --input report "$tool" --no-merge app.sites)
  awk -v base="$base" -v ours="$ours" -v nm="$ours_no_merge" -v sites=$((units * 1000)) \
      -v report="$(stat -c %s report)" -v sitesize="$(stat -c %s app.sites)" 'BEGIN {
    printf "resolveSamples benchmark: %d sites in %d shuffled sections (report %.1f MB, sites %.1f MB), best of runs\n",
           sites, sites / 1000, report / 1048576, sitesize / 1048576
    printf "paste (pre-aligned) %7.3f s   resolveSamples %7.3f s   ratio %.2f (goal <= 1.5: %s)\n",
           base / 1e9, ours / 1e9, ours / base, (ours / base <= 1.5 ? "met" : "MISSED")
    printf "                              resolveSamples --no-merge %7.3f s   ratio %.2f\n", nm / 1e9, nm / base
  }'
  ;;
backtrace)
  tool=$(readlink -f "${2:?resolve-backtrace}")
  generator=$(readlink -f "${3:?make_backtrace_report}")
  stacks=${4:-100}
  frames=${5:-10000}
  runs=${6:-3}
  cd "$work"
  "$generator" "$stacks" "$frames" >report
  "$tool" report >out
  lines=$(grep -c '^{{{bt:' out)
  [ "$lines" = $((stacks * frames)) ] || { echo "resolve-backtrace wrote $lines frames, expected $((stacks * frames))" >&2; exit 1; }
  base=$(best_ns --input report cat)
  ours=$(best_ns --input report "$tool")
  awk -v base="$base" -v ours="$ours" -v total=$((stacks * frames)) -v stacks="$stacks" \
      -v size="$(stat -c %s report)" 'BEGIN {
    rate = total / (ours / 1e9)
    printf "resolve-backtrace benchmark: %d frames in %d stacks (report %.1f MB), best of runs\n", total, stacks, size / 1048576
    printf "cat %7.3f s   resolve-backtrace %7.3f s   %.2fe6 frames/s (goal >= 1e6: %s)\n",
           base / 1e9, ours / 1e9, rate / 1e6, (rate >= 1e6 ? "met" : "MISSED")
  }'
  ;;
*)
  echo "usage: resolve_bench.sh samples|backtrace TOOL ..." >&2
  exit 2
  ;;
esac
