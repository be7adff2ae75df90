#!/usr/bin/env bash
# Checks one isolation subject by itself, before the driver (bench/isolation/isolate.sh) uses it: fetches the
# Debian source, builds the buggy tree with sampler-cc/sampler-c++ and the fixed tree with plain clang-19, runs
# RUNS seeded inputs through both and prints the failure rate (a run fails when the buggy build dies of a
# signal, or its stdout or exit status differ from the fixed build's), how many failing runs crashed, and, from
# one failing run at SAMPLER_SPARSITY=1, the sites sampled within 5 lines of the bug's lines. It first checks that
# the generator gives the same input twice for the same seed.
#
# Usage: bench/isolation/check_subject.sh [--bin DIR] [--work DIR] [--runs N] [--plain] NAME
#   --bin DIR   where sampler-cc, sampler-c++, extract-report and resolveSamples are (default: the build tree's)
#   --work DIR  sources and builds (default /tmp/isolation-check); the builds are reused when present
#   --plain     build the buggy tree with plain clang too (a quick look at the failure rate; no sites checked)
set -euo pipefail
trap 'echo "check_subject.sh: line $LINENO: a command failed" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=$top/build
work=/tmp/isolation-check
runs=300
plain=false
while [ $# -gt 0 ]; do
  case $1 in
  --bin) bin=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --plain) plain=true; shift ;;
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "check_subject.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: check_subject.sh [options] NAME" >&2; exit 2; }
name=$1
tool() {
  local t
  for t in "$bin/$1" "$bin/instrumentor/$1" "$bin/tools/$1" "$bin/bin/$1"; do
    [ -x "$t" ] && { echo "$t"; return; }
  done
  echo "check_subject.sh: $1 not found under $bin" >&2
  exit 2
}
# shellcheck source=/dev/null
. "$here/subjects/$name.sh"
# shellcheck source=../../scripts/debian-source.sh
. "$top/scripts/debian-source.sh"

mkdir -p "$work/$name"
work=$(cd "$work/$name" && pwd)
source=$(fetch_debian_source "$SUBJECT_PACKAGE" "$work/fetch")
if $plain; then
  buggy_cc=clang-19 buggy_cxx=clang++-19 buggy_dir=$work/buggy-plain
else
  buggy_cc=$(tool sampler-cc) buggy_cxx=$(tool sampler-c++) buggy_dir=$work/buggy
fi
# A bug that Debian's version still has: every copy gets the upstream fix, the buggy one loses it again.
apply_fix() { if declare -F subject_apply_fix >/dev/null; then subject_apply_fix "$1"; fi; }
if [ ! -d "$work/fixed" ]; then
  cp -a "$source" "$work/fixed"
  apply_fix "$work/fixed"
fi
if [ ! -d "$buggy_dir" ]; then
  cp -a "$source" "$buggy_dir"
  apply_fix "$buggy_dir"
  subject_reinstate_bug "$buggy_dir"
fi
# build TREE CC CXX: subject_build once per tree; its program's path is kept in TREE/.check-program.
build() {
  if [ ! -f "$1/.check-program" ]; then
    local start=$SECONDS
    subject_build "$@" >"$1/.check-program.new" && mv "$1/.check-program.new" "$1/.check-program"
    echo "built $1 with $2 in $((SECONDS - start)) s" >&2
  fi
  cat "$1/.check-program"
}
fixed=$(build "$work/fixed" clang-19 clang++-19)
buggy=$(build "$buggy_dir" "$buggy_cc" "$buggy_cxx")

# run PROGRAM DIR OUT ARGS...: runs one input in DIR (stdin from DIR/stdin if present), stdout to OUT; prints
# the exit status (128+N for a signal; 124 when it ran past 10 seconds). Its address space is bounded (1 GiB): a bug
# that allocates without bound (jq-index) then fails an allocation instead of taking the machine's memory.
run() {
  local program=$1 dir=$2 out=$3 input=/dev/null status=0
  shift 3
  [ -f "$dir/stdin" ] && input=$dir/stdin
  # argv[0] the program's name, not its path: gperf writes its command line into its output.
  # (The group's stderr is closed: bash reports there a child killed by a signal.)
  # shellcheck disable=SC2016 # the inner bash expands them
  { (cd "$dir" && ulimit -v 1048576 && timeout -s KILL 10 bash -c 'exec -a "${0##*/}" "$0" "$@"' "$program" "$@" <"$input" >"$out" 2>/dev/null); } \
    2>/dev/null || status=$?
  [ "$status" -eq 137 ] && status=124
  echo "$status"
}

# The generator must give the same input for the same seed (RANDOM used inside a subshell is reseeded).
for ((seed = 1; seed <= 20; seed++)); do
  rm -rf "$work/same" && mkdir -p "$work/same/1" "$work/same/2"
  subject_input "$seed" "$work/same/1" >"$work/same/1/.args"
  subject_input "$seed" "$work/same/2" >"$work/same/2/.args"
  diff -r "$work/same/1" "$work/same/2" >/dev/null ||
    { echo "check_subject.sh: $name's subject_input $seed gives different inputs from one call to the next" >&2; exit 1; }
done

failing=0 crashing=0 hung=0 first_failing=
runs_dir=$work/runs
for ((seed = 1; seed <= runs; seed++)); do
  rm -rf "$runs_dir" && mkdir -p "$runs_dir/fixed" "$runs_dir/buggy"
  mapfile -t args < <(subject_input "$seed" "$runs_dir/fixed")
  cp -a "$runs_dir/fixed/." "$runs_dir/buggy/"
  fixed_status=$(run "$fixed" "$runs_dir/fixed" "$runs_dir/fixed.out" "${args[@]}")
  buggy_status=$(SAMPLER_SPARSITY=100 SAMPLER_FILE=/dev/null run "$buggy" "$runs_dir/buggy" "$runs_dir/buggy.out" "${args[@]}")
  if [ "$fixed_status" -eq 124 ] || [ "$buggy_status" -eq 124 ]; then
    hung=$((hung + 1))
  fi
  if [ "$buggy_status" -gt 128 ] && [ "$buggy_status" -ne 124 ]; then
    crashing=$((crashing + 1)) failing=$((failing + 1))
  elif [ "$fixed_status" -ne "$buggy_status" ] || ! cmp -s "$runs_dir/fixed.out" "$runs_dir/buggy.out"; then
    failing=$((failing + 1))
  else
    continue
  fi
  [ -z "$first_failing" ] && first_failing=$seed
done
echo "$name: $failing of $runs runs fail ($(awk -v f="$failing" -v r="$runs" 'BEGIN { printf "%.1f", 100 * f / r }') %)," \
  "$crashing crash, $hung ran past 10 s; first failing seed: ${first_failing:-none}"

$plain && exit 0
[ -n "$first_failing" ] || exit 0
# The sites near the bug, sampled at every opportunity in the first failing run.
rm -rf "$runs_dir" && mkdir -p "$runs_dir"
mapfile -t args < <(subject_input "$first_failing" "$runs_dir")
SAMPLER_SPARSITY=1 SAMPLER_FILE=$work/report.txt run "$buggy" "$runs_dir" /dev/null "${args[@]}" >/dev/null
"$(tool extract-report)" samples <"$work/report.txt" | "$(tool resolveSamples)" "$buggy" >"$work/resolved.tsv"
first=${SUBJECT_BUG_LINES%-*} last=${SUBJECT_BUG_LINES#*-}
awk -F'\t' -v file="$(basename "$SUBJECT_BUG_FILE")" -v lo=$((first - 5)) -v hi=$((last + 5)) '
  { for (i = 1; i <= NF; i++) if (index($i, file) && $(i + 1) ~ /^[0-9]+$/ && $(i + 1) >= lo && $(i + 1) <= hi) { print; next } }
' "$work/resolved.tsv" >"$work/near-bug.tsv"
echo "sites within 5 lines of $SUBJECT_BUG_FILE:$SUBJECT_BUG_LINES in seed $first_failing's report at sparsity 1:" \
  "$(wc -l <"$work/near-bug.tsv") (of $(wc -l <"$work/resolved.tsv")); see $work/near-bug.tsv"
