#!/bin/bash
# sampler-analyze's benchmark, its baseline measured in the same run (not run by ctest).
#
#   analyze_bench.sh SAMPLER_ANALYZE ANALYSIS_BENCH EXTRACT_REPORT RESOLVE_SAMPLES [REPORTS] [SITES] [AWK] [RUNS]
#
# Generates REPORTS reports (default 10^5) of SITES sites (default 10^3: about 1 GB of text), one run in 10
# failing (analysis_bench generate), then measures:
#   - sampler-analyze over all of them with -j1 (MB/s of report text per core, from its CPU time so that a busy
#     machine does not inflate it; goal >= 300) and with one thread per core, and its peak memory (goal < 1 GB);
#   - the ranking with elimination over 10^5 runs x 10^5 predicates, in-process (goal < 1 s);
#   - against the baseline, the awk pipeline scripts/demo.sh used before sampler-analyze (per report
#     extract-report samples | resolveSamples, the sums over failing and successful runs, the awk ranking and
#     sort), on the first AWK reports (default 1000): the ratio sampler-analyze / pipeline (goal <= 0.02).
# Times are the best of RUNS (default 3).
set -eu
source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"  # best_ns
tool=$(readlink -f "${1:?sampler-analyze}")
bench=$(readlink -f "${2:?analysis_bench}")
extract=$(readlink -f "${3:?extract-report}")
resolve=$(readlink -f "${4:?resolveSamples}")
reports=${5:-100000}
sites=${6:-1000}
awk_reports=${7:-1000}
runs=${8:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/analyze_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

"$bench" generate data "$reports" "$sites"
bytes=$(du -sb data/reports | cut -f1)
top=$("$tool" -j1 --sites data/app.sites data/reports | sed -n 2p | cut -f17)
[ "$top" = '(p_7 != 0) is true' ] || { echo "the planted predicate is not on top: '$top'" >&2; exit 1; }
cores=$(nproc)
one=$(best_ns "$tool" -j1 --sites data/app.sites data/reports)
# CPU time of a -j1 run (user + system, best of runs): the per-core figure, which a busy machine does not inflate.
cpu=0
for ((r = 0; r < runs; r++)); do
  c=$("$bench" maxrss "$tool" -j1 --sites data/app.sites data/reports | sed -n 's/.*cpu: \([0-9.]*\) s$/\1/p')
  cpu=$(awk -v a="$cpu" -v b="$c" 'BEGIN { print (a == 0 || b < a) ? b : a }')
done
all=$(best_ns "$tool" --sites data/app.sites data/reports)
memory=$("$bench" maxrss "$tool" --sites data/app.sites data/reports | sed -n 's/^maxrss: \([0-9]*\) KB.*/\1/p')
ranking=$("$bench" rank 100000 100000)

# ---- the baseline: the awk pipeline of scripts/demo.sh (git show b813269:scripts/demo.sh, steps 3 and 4)
mkdir -p awk
find data/reports -name 'run-*.txt' | sort | head -n "$awk_reports" >awk/list
pipeline() {
  local dir=awk/out
  rm -rf "$dir" && mkdir -p "$dir"
  : >"$dir/all.txt"
  : >"$dir/crash.list"
  : >"$dir/clean.list"
  local n=0 report outcome
  while read -r report; do
    n=$((n + 1))
    if grep -q '^<report id="main-backtrace">' "$report"; then outcome=crash; else outcome=clean; fi
    "$extract" samples <"$report" >"$dir/samples-$n.txt"
    "$resolve" data/app.sites <"$dir/samples-$n.txt" >"$dir/resolved-$n.txt"
    sed "s/^/$n\t$outcome\t/" "$dir/resolved-$n.txt" >>"$dir/all.txt"
    echo "$dir/samples-$n.txt" >>"$dir/$outcome.list"
  done <awk/list
  for outcome in crash clean; do
    xargs cat <"$dir/$outcome.list" | "$resolve" data/app.sites >"$dir/sum-$outcome.txt"
  done
  (cd "$dir" && awk -F'\t' -f - all.txt sum-crash.txt sum-clean.txt >ranking.txt <<'AWK'
# Counters per site of the schemes docs/formats.md section 2 names (bounds are a min/max pair, not counters: left out);
# a scheme it does not name counts its trailing numeric fields.
BEGIN {
  split("branches 2 returns 3 scalar-pairs 3 function-entries 1 coverage 1 data 1 atoms 2 g-object-unref 4 " \
        "float-kinds 9", pairs, " ")
  for (i = 1; i in pairs; i += 2) columns[pairs[i]] = pairs[i + 1]
  split("is false|is true", label_branches, "|")
  split("< 0|== 0|> 0", label_returns, "|")
  split("<|==|>", label_pairs, "|")
  split("accessed by the same thread|accessed by another thread", label_atoms, "|")
  split("-inf|negative normal|negative subnormal|-0|NaN|+0|positive subnormal|positive normal|+inf", label_floats, "|")
  split("refcount 0|refcount 1|refcount > 1|not a GObject", label_unref, "|")
}
# The predicate of column c of the site whose resolved line starts at field b (FILE, unit, scheme, file, line,
# function, CFG node, the scheme's fields..., counters): its site (file, line, function, CFG node), then its text.
function predicate(b, scheme, c, n) {
  where = $(b + 3) "\t" $(b + 4) "\t" $(b + 5) "\t" $(b + 6)
  field = $(b + 7)
  if (scheme == "branches") what = "(" field ") " label_branches[c + 1]
  else if (scheme == "returns") what = field "() " label_returns[c + 1]
  else if (scheme == "scalar-pairs") what = field " " label_pairs[c + 1] " " $(b + 10)
  else if (scheme == "function-entries") what = "entered"
  else if (scheme == "coverage" || scheme == "data") what = "reached"
  else if (scheme == "atoms") what = field " " label_atoms[c + 1]
  else if (scheme == "float-kinds") what = field " is " label_floats[c + 1]
  else if (scheme == "g-object-unref") what = field " " label_unref[c + 1]
  # A scheme of the program's own: a field "NAME: label, label, ..." with one label per column names them.
  else if (split(field, parts, ": ") == 2 && split(parts[2], labels, ", ") == n) what = parts[1] " " labels[c + 1]
  else what = scheme " column " c
  return where "\t" what
}
{
  b = FILENAME == "all.txt" ? 3 : 1  # runs/all.txt has the run and its outcome first
  scheme = $(b + 2)
  if (scheme == "bounds") next
  n = columns[scheme]
  if (n == "") { n = 0; for (i = NF; i > b + 6 && $i ~ /^[0-9]+$/; i--) n++ }
  first = NF - n + 1
  observed = 0
  for (c = 0; c < n; c++) observed += $(first + c)
  for (c = 0; c < n; c++) {
    key = predicate(b, scheme, c, n)
    if (FILENAME == "sum-crash.txt") { sum[key, "crash"] = $(first + c); continue }
    if (FILENAME == "sum-clean.txt") { sum[key, "clean"] = $(first + c); continue }
    if (!(key in seen)) { seen[key] = 1; order[++keys] = key }
    if (observed > 0) obs[key, $2]++
    if ($(first + c) > 0) truth[key, $2]++
  }
}
# One line per predicate with Increase > 0: Increase, Failure, Context, F, S, sum F, sum S, file, line, function,
# CFG node, predicate.
END {
  for (k = 1; k <= keys; k++) {
    key = order[k]
    F = truth[key, "crash"] + 0; S = truth[key, "clean"] + 0
    Fo = obs[key, "crash"] + 0; So = obs[key, "clean"] + 0
    if (F == 0) continue
    failure = F / (F + S); context = Fo / (Fo + So)
    if (failure - context <= 0) continue
    printf "%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%s\n", failure - context, failure, context, F, S, \
      sum[key, "crash"] + 0, sum[key, "clean"] + 0, key
  }
}
AWK
  )
  sort -t$'\t' -k1,1gr -k4,4nr -k8,8 -k9,9n -k12,12 "$dir/ranking.txt" >"$dir/ranked.txt"
}
start=$(date +%s%N)
pipeline
end=$(date +%s%N)
base=$((end - start))
# The same reports for sampler-analyze: a directory of links to them.
mkdir -p subset && n=0 && while read -r f; do n=$((n + 1)); ln -s "$work/$f" "subset/run-$n.txt"; done <awk/list
ours=$(best_ns "$tool" --sites data/app.sites subset)
awk_top=$(head -1 awk/out/ranked.txt | cut -f12)
[ "$awk_top" = '(p_7 != 0) is true' ] || echo "note: the awk pipeline's top predicate is '$awk_top'"

awk -v reports="$reports" -v sites="$sites" -v bytes="$bytes" -v one="$one" -v all="$all" -v cores="$cores" \
    -v cpu="$cpu" -v memory="$memory" -v base="$base" -v ours="$ours" -v n="$awk_reports" -v ranking="$ranking" 'BEGIN {
  mb = bytes / 1e6
  printf "sampler-analyze benchmark: %d reports of %d sites (%.0f MB of report text), best of runs\n", reports,
         sites, mb
  printf "  -j1: %.3f s wall, %.3f s CPU: %.0f MB/s per core (CPU time; goal >= 300: %s), %.0f MB/s wall\n",
         one / 1e9, cpu, mb / cpu, (mb / cpu >= 300 ? "met" : "MISSED"), mb / (one / 1e9)
  printf "  -j%d: %.3f s, %.0f MB/s\n", cores, all / 1e9, mb / (all / 1e9)
  printf "  peak memory: %.0f MB (goal < 1024: %s)\n", memory / 1024, (memory / 1024 < 1024 ? "met" : "MISSED")
  split(ranking, r, " ")
  printf "  %s (goal < 1 s: %s)\n", ranking, (r[7] + 0 < 1 ? "met" : "MISSED")
  printf "awk pipeline of the old demo on %d reports %.3f s   sampler-analyze %.3f s   ratio %.4f (goal <= 0.02: %s)\n",
         n, base / 1e9, ours / 1e9, ours / base, (ours / base <= 0.02 ? "met" : "MISSED")
}'
