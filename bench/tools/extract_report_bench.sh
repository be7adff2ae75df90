#!/bin/bash
# Benchmark of extract-report against sed, measured in the same run (not run by ctest).
#
#   extract_report_bench.sh EXTRACT_REPORT [SIZE_MB] [RUNS]
#
# Builds a stream of SIZE_MB (default 1024) of feedback reports (each a samples subreport of counter
# sections and timestamps, then a main-backtrace), then times, best of RUNS (default 3), standard input from
# the file and output to /dev/null:
#   sed -n '/^<report id="samples">$/,/^<\/report>$/p'   vs   extract-report samples     goal: ratio <= 0.1
# The sed command is the classic way to cut the samples subreports out (it also prints the tag lines);
# extract-report's output is first checked against sed's with the tag lines removed.
set -eu
source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"  # best_ns
tool=${1:?usage: extract_report_bench.sh EXTRACT_REPORT [SIZE_MB] [RUNS]}
size_mb=${2:-1024}
runs=${3:-3}
tool=$(readlink -f "$tool")
work=$(mktemp -d "${TMPDIR:-/tmp}/extract_report_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# One report of about 8 MiB, with counters as a real run has them (mostly zeros and small numbers), then the
# stream: that report again and again, as a collection server concatenates what it receives.
awk 'BEGIN {
  srand(4); print "<report id=\"samples\">"
  for (u = 0; u < 250; u++) {
    unit = sprintf("%08x%08x%08x%08x", u, u * 7, u * 13, u * 31)
    split("branches:2 returns:3 scalar-pairs:3 function-entries:1", schemes, " ")
    for (s = 1; s <= 4; s++) {
      split(schemes[s], part, ":")
      printf "<samples unit=\"%s\" scheme=\"%s\">\n", unit, part[1]
      for (i = 0; i < 1000; i++) {
        line = ""
        for (c = 0; c < part[2]; c++) {
          r = rand(); v = r < 0.5 ? 0 : r < 0.8 ? int(rand() * 10) : r < 0.95 ? int(rand() * 1000) : int(rand() * 10000000)
          line = line (c ? "\t" : "") v
        }
        print line
      }
      print "</samples>"
    }
    printf "<timestamps unit=\"%s\" scheme=\"branches\" when=\"first\">\n", unit
    for (i = 0; i < 1000; i++) print (rand() < 0.5 ? 0 : int(rand() * 100000000))
    print "</timestamps>"
  }
  print "</report>"
  print "<report id=\"main-backtrace\">"
  print "{{{reset}}}"
  print "{{{module:0:/usr/bin/app:elf:4f2b9c0d1e6a77881122334455667788}}}"
  print "{{{mmap:0x5633a8200000:0x3000:load:0:r:0x0}}}"
  print "{{{mmap:0x5633a8203000:0x12000:load:0:rx:0x3000}}}"
  print "signal:11:SIGSEGV:0x0"
  print "cbf:AAhWM6giA0F4jAA="
  print "</report>"
}' >one.log
one_size=$(stat -c %s one.log)
copies=$(( (size_mb * 1024 * 1024 + one_size - 1) / one_size ))
for ((i = 0; i < copies; i++)); do cat one.log; done >stream.log
rm one.log
stream_size=$(stat -c %s stream.log)

sed_script='/^<report id="samples">$/,/^<\/report>$/p'
"$tool" samples <stream.log >tool.out
sed -n "$sed_script" <stream.log | grep -v -e '^<report id="samples">$' -e '^</report>$' >sed.out
cmp -s tool.out sed.out || { echo "extract-report's output differs from sed's without the tag lines" >&2; exit 1; }
out_size=$(stat -c %s tool.out)
rm tool.out sed.out

sed_ns=$(best_ns --input stream.log sed -n "$sed_script")
tool_ns=$(best_ns --input stream.log "$tool" samples)
# The same through a pipe, as in `zcat report.gz | extract-report samples`: the reader's pace is the pipe's.
pipe_start=$(date +%s%N)
cat stream.log | "$tool" samples >/dev/null
pipe_ns=$(( $(date +%s%N) - pipe_start ))

echo "extract-report benchmark: $((stream_size / 1048576)) MiB stream of $copies reports, $((out_size / 1048576)) MiB extracted, best of $runs"
awk -v s="$sed_ns" -v t="$tool_ns" -v p="$pipe_ns" -v b="$stream_size" 'BEGIN {
  printf "  %-58s %8.3f s  %7.0f MiB/s\n", "sed -n \x27/^<report id=\"samples\">$/,/^<\\/report>$/p\x27", s / 1e9, b / 1048576 / (s / 1e9)
  printf "  %-58s %8.3f s  %7.0f MiB/s\n", "extract-report samples", t / 1e9, b / 1048576 / (t / 1e9)
  printf "  %-58s %8.3f s  (one run, through cat |)\n", "cat | extract-report samples", p / 1e9
  printf "  ratio extract-report / sed: %.3f (goal <= 0.1: %s)\n", t / s, t / s <= 0.1 ? "met" : "missed"
}'
