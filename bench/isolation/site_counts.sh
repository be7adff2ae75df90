#!/usr/bin/env bash
# Every predicate of chosen functions, with its counts over a run directory of the isolation driver, including
# those that sampler-analyze leaves out of its table (Increase not above 0 at 95% confidence): to say why a bug's
# predicate does not rank (docs/isolation.md, "Why jq, gzip and lua are not found").
#
# Usage: bench/isolation/site_counts.sh [--build DIR] RUN_DIR PROGRAM FUNCTION...
#   RUN_DIR   a run directory of isolate.sh (WORK/SUBJECT/runs/VARIANT-sS: results.tsv and reports/SEED.report)
#   PROGRAM   the instrumented build those runs used (its site information)
#   FUNCTION  the functions whose sites to count (as the site information names them)
# Output (tab-separated, a header, then one predicate a line, by Increase): F S F_obs S_obs failure context
# increase file line function scheme predicate. F/S: the failing/successful runs where it was observed true;
# F_obs/S_obs: where its site was observed at all (the definitions of docs/analysis.md, "The scores").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
if [ "${1:-}" = --build ]; then build=$2; shift 2; fi
[ $# -ge 3 ] || { sed -n '6,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
run_dir=$1 program=$2
shift 2
for f in "$build/tools/extract-report" "$build/tools/resolveSamples"; do
  [ -x "$f" ] || { echo "site_counts.sh: $f is not built" >&2; exit 2; }
done
[ -f "$run_dir/results.tsv" ] || { echo "site_counts.sh: no $run_dir/results.tsv" >&2; exit 2; }
[ -x "$program" ] || { echo "site_counts.sh: no program $program" >&2; exit 2; }
functions=" $* "

# One line per run and site of those functions: the run's label, the site's description, its counters.
while IFS=$'\t' read -r seed label _; do
  report=$run_dir/reports/$seed.report
  [ -f "$report" ] || { echo "site_counts.sh: no report $report" >&2; exit 1; }
  "$build/tools/extract-report" samples <"$report" | "$build/tools/resolveSamples" "$program" |
    awk -F'\t' -v label="$label" -v seed="$seed" -v functions="$functions" '
      index(functions, " " $6 " ") {
        n = ($3 == "branches") ? 2 : ($3 == "returns" || $3 == "scalar-pairs") ? 3 : 1
        site = $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7
        for (i = 8; i <= NF - n; i++) site = site " " $i
        counters = $(NF - n + 1)
        for (i = NF - n + 2; i <= NF; i++) counters = counters " " $i
        print label "\t" seed "\t" site "\t" counters
      }'
done <"$run_dir/results.tsv" |
  awk -F'\t' '
    function name(scheme, fields, k,   f) {
      f = fields; sub(/^[0-9]+ ?/, "", f)  # the node number
      if (scheme == "branches") return "(" f ") is " (k == 1 ? "false" : "true")
      if (scheme == "function-entries") return "reached"
      if (scheme == "returns") { split(f, r, " "); return r[1] "() " op[k] " 0" }
      if (scheme == "scalar-pairs") { split(f, r, " "); return r[1] " " op[k] " " r[4] }
      return f " #" k
    }
    BEGIN { op[1] = "<"; op[2] = "=="; op[3] = ">"; op[4] = "<="; op[5] = ">="; op[6] = "!=" }
    {
      label = $1; run = $2; scheme = $3; key = $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7
      n = split($8, c, " ")
      observed = 0
      for (i = 1; i <= n; i++) if (c[i] > 0) observed = 1
      if (!observed) next
      # Sum a run'\''s repeated sections: a run counts once per predicate.
      if (!((key, run) in seen)) { seen[key, run] = 1; obs[key, label]++ }
      if (scheme == "returns" || scheme == "scalar-pairs") {
        c[4] = c[1] + c[2]; c[5] = c[2] + c[3]; c[6] = c[1] + c[3]; n = 6
      }
      keys[key] = scheme
      for (i = 1; i <= n; i++) if (c[i] > 0 && !((key, i, run) in truth)) { truth[key, i, run] = 1; t[key, i, label]++ }
      npred[key] = n
    }
    END {
      OFS = "\t"
      print "F", "S", "F_obs", "S_obs", "failure", "context", "increase", "file", "line", "function", "scheme", "predicate"
      for (key in keys) {
        split(key, k, "\t")
        fo = obs[key, "failure"] + 0; so = obs[key, "success"] + 0
        context = (fo + so) ? fo / (fo + so) : 0
        for (i = 1; i <= npred[key]; i++) {
          f = t[key, i, "failure"] + 0; s = t[key, i, "success"] + 0
          failure = (f + s) ? f / (f + s) : 0
          printf "%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\n", f, s, fo, so, failure, context,
            (f + s ? failure - context : 0), k[2], k[3], k[4], k[1], name(k[1], k[5], i)
        }
      }
    }' | { IFS= read -r header; echo "$header"; sort -t$'\t' -k7,7gr -k1,1nr; }
