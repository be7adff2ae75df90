#!/usr/bin/env bash
# Every predicate of chosen functions, with its counts over a run directory of the isolation driver, including
# those that sampler-analyze leaves out of its table (Increase not above 0 at 95% confidence): to say why a bug's
# predicate does not rank (docs/isolation.md, "Why jq, gzip and lua are not found"). A filter over
# `sampler-analyze --all-predicates` (docs/analysis.md, "The table"), which scores every observed predicate.
#
# Usage: bench/isolation/site_counts.sh [--build DIR] RUN_DIR PROGRAM FUNCTION...
#   RUN_DIR   a run directory of isolate.sh (WORK/SUBJECT/runs/VARIANT-sS: results.tsv and reports/SEED.report)
#   PROGRAM   the instrumented build those runs used (its site information)
#   FUNCTION  the functions whose sites to count (as the site information names them)
# Output (tab-separated, a header, then one predicate a line, by Increase, then F): F S F_obs S_obs failure
# context increase file line function scheme predicate, over all runs. F/S: the failing/successful runs where it
# was observed true; F_obs/S_obs: where its site was observed at all (docs/analysis.md, "The scores"). A
# predicate whose site no run observed is not listed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
if [ "${1:-}" = --build ]; then build=$2; shift 2; fi
[ $# -ge 3 ] || { sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
run_dir=$1 program=$2
shift 2
analyze=$build/tools/sampler-analyze
[ -x "$analyze" ] || { echo "site_counts.sh: $analyze is not built" >&2; exit 2; }
[ -f "$run_dir/results.tsv" ] || { echo "site_counts.sh: no $run_dir/results.tsv" >&2; exit 2; }
[ -x "$program" ] || { echo "site_counts.sh: no program $program" >&2; exit 2; }

# The runs are those of results.tsv, each labelled with its outcome there (the driver's judge).
labels=$(mktemp)
trap 'rm -f "$labels"' EXIT
awk -F'\t' -v dir="$run_dir/reports" '{ print dir "/" $1 ".report\t" $2 }' "$run_dir/results.tsv" >"$labels"
reports=()
mapfile -t reports < <(cut -f1 "$labels")
table=$("$analyze" --sites "$program" --labels "$labels" --all-predicates -- "${reports[@]}")

# Each predicate's row over all runs: round 1's and the rows of round '-' (a later round's row counts only the
# runs its round ranked; --all-predicates lists that predicate again over all runs).
awk -F'\t' -v functions=" $* " '
  BEGIN { n = split("F S F_obs S_obs failure context increase file line function scheme predicate", name, " ") }
  NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    for (i = 1; i <= n; i++) printf "%s%s", name[i], (i < n ? "\t" : "\n")
    next
  }
  ($col["round"] == "-" || $col["round"] == 1) && index(functions, " " $col["function"] " ") {
    for (i = 1; i <= n; i++) printf "%s%s", $col[name[i]], (i < n ? "\t" : "\n")
  }' <<<"$table" | { IFS= read -r header; echo "$header"; sort -t$'\t' -k7,7gr -k1,1nr; }
