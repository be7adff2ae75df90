#!/usr/bin/env bash
# The isolation benchmark (docs/isolation.md): does sampler name the real cause of a real bug, from sparse
# samples, in how many runs? For each subject (bench/isolation/subjects/NAME.sh: a Debian source package, a bug
# from its own history, a seeded workload generator; the interface is bench/isolation/README.md's) it takes the
# road a user takes:
#   1. fetches the source (apt-get source; nothing is committed), builds it fixed with plain clang-19 (the
#      reference) and buggy with sampler-cc at its defaults (and, with --variants, other sampler-cc settings);
#   2. starts sampler-collector on loopback (SQLite) and pushes the buggy builds' symbols with sampler-symbols;
#   3. writes RUNS inputs with the subject's generator, runs the fixed build on each (the expected stdout, exit
#      status and files left in the run's directory), then the buggy build on each through sampler-run at every
#      sparsity, which uploads each report; bench/isolation/judge.sh, run by sampler-run in the program's place,
#      gives the run's outcome by its exit status: failing if the program crashed (or was killed with SIGKILL by
#      the judge's memory watchdog, past --memory-limit) or its stdout, status or the files it left differ from
#      the fixed build's;
#   4. ranks the stored runs with sampler-analyze --database (the user's view), and the same runs, kept by
#      sampler-run --keep, in prefixes of 500, 1000, 2000, 5000, 10000 runs (sampler-analyze index per step's
#      shard, rank over the shards so far), and at all runs by every metric;
#   5. prints a table per subject, build and sparsity (Markdown, on stdout): the rank of the first predictor at
#      the bug (a predictor in the bug's file, in the function of its fixed lines or within 5 lines of them), the
#      same rank counting also the places one call away (one_call_away), its elimination round, the runs after
#      which it stays first, each metric's rank and expense (the share of the ranked predicates above it), the
#      top predictor, each build's cost (build time, .text size), and each setting's measured cost: the samples a
#      successful run took (its samples subreport's counters summed, bounds' left out; mean), and for a plan at a
#      rate's cost (1/S or =1/S) its ratio to that rate's over the same runs.
# Progress goes to stderr. Everything is kept under the work directory: run again with the same options and only
# what is missing is done (runs already stored are not run again).
#
# Usage: bench/isolation/isolate.sh [OPTIONS] [SUBJECT...]      (default: every bench/isolation/subjects/*.sh)
#   --build DIR        the suite's build tree, with sampler-cc and the tools built (default build/)
#   --work DIR         sources, builds, inputs, reports, database (default BUILD/isolation)
#   --runs N           runs per subject, build and sparsity (default 5000)
#   --sparsity "S..."  sparsities (default "100 1000 1": the original's field rate, a cheaper one, every site)
#   --steps "N..."     the prefixes ranked (default "500 1000 2000 5000 10000"; RUNS is added)
#   --variants "V..."  instrumented builds: default (sampler-cc at its defaults), compare-constants
#                      (-fsampler-compare-constants) (default: default)
#   --jobs N           runs at once (default: the number of cores)
#   --memory-limit MIB the buggy build's runs are killed with SIGKILL past MIB mebibytes resident (a memory
#                      watchdog, as earlyoom or the OOM killer under a cgroup limit would in the field) (default 256)
#   --expect-rank "S:R..."
#                      exit 1 unless, for every subject and build, the first predictor at the bug is ranked R or
#                      better over all runs at sparsity S (a lone R: at every sparsity) (the CI regression test)
#   --expect-equal-cost
#                      exit 1 unless every =1/S plan's samples a successful run are within --cost-tolerance of
#                      uniform 1/S's over the measured runs too (the CI regression test; needs S in --sparsity)
#   --plan-budget "B..."
#                      also runs under sampling plans (docs/analysis.md, "Sampling plans"): TRAINING runs at
#                      1/100 on seeds of their own, a plan per budget B learned from their reports by
#                      sampler-analyze plan, then RUNS runs under each plan, ranked beside the uniform rows. B: a
#                      percentage of a run's CPU time, or 1/S: the predicted cost of uniform 1/S on those runs,
#                      to compare a plan and a rate at equal predicted cost; =1/S: at equal measured cost, the
#                      budget that gives the plan uniform 1/S's samples a run (below) (default: none)
#   --training-runs N  training runs for the plans (default 20)
#   --plan-runs N      runs under each plan (default: --runs): fewer keep a test short; a plan's measured cost is
#                      compared with its rate's over the runs both have
#   --calibration-runs N
#                      runs on which a budget =1/S is calibrated (default 50): seeds of their own (2,000,001 on),
#                      run at uniform 1/S, then under a plan per step of a secant search on the budget (each a new
#                      sampler-analyze plan from the same training runs; the first at 1/S's predicted cost), until
#                      the plan's samples a successful run (the table's measured cost) are within the tolerance of
#                      uniform 1/S's on the same runs; exit 1 if 8 steps do not get there
#   --cost-tolerance PCT
#                      how far a =1/S plan's samples may be from uniform 1/S's on the calibration runs (default 2)
# Needs apt-get source (adds a deb-src entry for the running Debian release if there is none: root or sudo).
# Exit status: 0, 1 when a subject failed to build or run, a =1/S plan's calibration failed, or --expect-rank or
# --expect-equal-cost did not hold, 2 usage error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
work=
runs=5000
sparsities="100 1000 1"
steps="500 1000 2000 5000 10000"
variants=default
jobs=$(nproc)
memory_limit=256
expect_rank=
expect_equal_cost=
plan_budgets=
training_runs=20
plan_runs=
training_seed=1000000  # training run N has seed training_seed + N: inputs that no measured run has
calibration_runs=50
calibration_seed=2000000  # calibration run N has seed calibration_seed + N: neither measured nor training
cost_tolerance=2
calibration_steps=8
usage() { echo "isolate.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --sparsity | --sparsities) sparsities=$2; shift 2 ;;
  --steps) steps=$2; shift 2 ;;
  --variants) variants=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  --memory-limit) memory_limit=$2; shift 2 ;;
  --expect-rank) expect_rank=$2; shift 2 ;;
  --expect-equal-cost) expect_equal_cost=1; shift ;;
  --plan-budget | --plan-budgets) plan_budgets=$2; shift 2 ;;
  --training-runs) training_runs=$2; shift 2 ;;
  --plan-runs) plan_runs=$2; shift 2 ;;
  --calibration-runs) calibration_runs=$2; shift 2 ;;
  --cost-tolerance) cost_tolerance=$2; shift 2 ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  -*) usage "unknown option $1" ;;
  *) break ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage "--runs needs a positive number"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage "--jobs needs a positive number"
[[ $memory_limit =~ ^[1-9][0-9]*$ ]] || usage "--memory-limit needs a positive number of MiB"
[[ $training_runs =~ ^[1-9][0-9]*$ ]] || usage "--training-runs needs a positive number"
plan_runs=${plan_runs:-$runs}
if ! [[ $plan_runs =~ ^[1-9][0-9]*$ ]] || [ "$plan_runs" -gt "$runs" ]; then
  usage "--plan-runs needs a number from 1 to --runs"
fi
[[ $calibration_runs =~ ^[1-9][0-9]*$ ]] || usage "--calibration-runs needs a positive number"
if ! [[ $cost_tolerance =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v t="$cost_tolerance" 'BEGIN { exit !(t > 0) }'; then
  usage "--cost-tolerance needs a percentage above 0"
fi
equal_cost=
for b in $plan_budgets; do
  [[ $b =~ ^(=?1/[1-9][0-9]*|[0-9]+(\.[0-9]+)?)$ ]] || usage "--plan-budget: '$b' is neither a percentage, 1/S nor =1/S"
  [[ $b == =* ]] && equal_cost=1
done
for e in $expect_rank; do [[ $e =~ ^([1-9][0-9]*:)?[1-9][0-9]*$ ]] || usage "--expect-rank: '$e' is not R or S:R"; done
for s in $sparsities $steps; do [[ $s =~ ^[1-9][0-9]*$ ]] || usage "'$s' is not a positive number"; done
for v in $variants; do
  case $v in default | compare-constants) ;; *) usage "unknown variant '$v'" ;; esac
done
subjects=("$@")
if [ ${#subjects[@]} -eq 0 ]; then
  for f in "$here"/subjects/*.sh; do subjects+=("$(basename "$f" .sh)"); done
fi
for s in "${subjects[@]}"; do [ -f "$here/subjects/$s.sh" ] || usage "no subject $here/subjects/$s.sh"; done
build=$(cd "$build" && pwd) || usage "no build directory $build"
work=${work:-$build/isolation}
mkdir -p "$work" && work=$(cd "$work" && pwd)
tools=$build/tools
drivers=$build/instrumentor
for f in "$drivers/sampler-cc" "$tools/sampler-run" "$tools/sampler-collector" "$tools/sampler-analyze" \
  "$tools/sampler-symbols" "$tools/extract-section"; do
  [ -x "$f" ] || { echo "isolate.sh: $f is not built" >&2; exit 2; }
done
command -v clang-19 >/dev/null || { echo "isolate.sh: clang-19 is not installed (scripts/setup.sh)" >&2; exit 2; }
metrics="importance increase ochiai tarantula dstar"
export ISOLATION_DIR=$here  # the subjects find their patches through it
note() { echo "isolate: $*" >&2; }
# shellcheck source=../../scripts/debian-source.sh
. "$top/scripts/debian-source.sh"

# compilers VARIANT: the directory of sampler-cc/sampler-c++ for an instrumented build. A variant with options
# gets two one-line wrappers, so that any build system takes it as a plain compiler.
compilers() {
  local variant=$1 flags dir
  case $variant in
  default) echo "$drivers"; return ;;
  compare-constants) flags=-fsampler-compare-constants ;;
  esac
  dir=$work/compilers/$variant
  mkdir -p "$dir"
  printf '#!/bin/sh\nexec %q %s "$@"\n' "$drivers/sampler-cc" "$flags" >"$dir/sampler-cc"
  printf '#!/bin/sh\nexec %q %s "$@"\n' "$drivers/sampler-c++" "$flags" >"$dir/sampler-c++"
  chmod +x "$dir/sampler-cc" "$dir/sampler-c++"
  echo "$dir"
}

# runtime_problem PROGRAM: empty when an instrumented build works with this build tree's runtime, else why not.
# A kept build can outlive the runtime it was linked against (its RUNPATH names a build tree since removed, or one
# the driver is not given) or predate the runtime's ABI (a unit the runtime refuses, or one without per-site
# weights, which a plan silently leaves at the uniform rate). So: the ABI the build was made for (TREE.abi,
# written when it was built) must be this tree's; the loader must take libsampler.so.0 from BUILD/runtime; and a
# trivial run (no arguments, empty standard input) must write a report with samples and no refused unit.
current_abi=$(awk '$1 == "#define" && $2 == "SAMPLER_ABI_VERSION" { print $3 }' "$top/runtime/include/sampler/abi.h")
runtime_problem() {
  local program=$1 tree=${2:-} loaded probe report errors
  if [ -n "$tree" ] && [ "$(cat "$tree.abi" 2>/dev/null)" != "$current_abi" ]; then
    echo "built for sampler ABI '$(cat "$tree.abi" 2>/dev/null || echo unknown)', not $current_abi"; return
  fi
  loaded=$(ldd "$program" 2>&1) || true
  if [[ $loaded != *"libsampler.so.0 => $build/runtime/libsampler.so.0 "* ]]; then
    echo "it does not load $build/runtime/libsampler.so.0: $(grep libsampler <<<"$loaded" | tr -s '[:space:]' ' ')"; return
  fi
  probe=$(mktemp -d "$work/probe.XXXXXX")
  (cd "$probe" && ulimit -c 0 && SAMPLER_FILE=$probe/report SAMPLER_SPARSITY=1 \
    "$program" </dev/null >/dev/null 2>"$probe/stderr") || true
  report=$(cat "$probe/report" 2>/dev/null) || true
  errors=$(grep -a 'not registered' "$probe/stderr" | head -2 | tr -d '[:cntrl:]') || true
  rm -rf "$probe"
  if [[ $report != *'<samples unit="'* ]]; then echo "a trivial run wrote no report with samples"; return; fi
  if [ -n "$errors" ]; then echo "the runtime refused a unit: $errors"; fi
}

# build_tree SOURCE TREE CC CXX [BUGGY]: a copy of the pristine source built in TREE (the subject's upstream fix
# applied first if it has subject_apply_fix, then the bug reinstated when BUGGY); TREE.program names the program,
# TREE.cost its build's seconds and .text bytes. Kept when done; a kept buggy build that does not work with this
# build tree's runtime (runtime_problem) is built again.
build_tree() {
  local source=$1 tree=$2 cc=$3 cxx=$4 buggy=${5:-} start program problem
  if [ -s "$tree.program" ] && [ -x "$(cat "$tree.program")" ]; then
    [ -z "$buggy" ] && return 0
    problem=$(runtime_problem "$(cat "$tree.program")" "$tree")
    [ -z "$problem" ] && return 0
    note "${tree##*/}: the kept build is stale ($problem): building it again"
  fi
  rm -rf "$tree" "$tree.program" "$tree.abi"
  cp -a "$source" "$tree"  # -a: timestamps kept, so that make regenerates nothing it need not
  # A bug that Debian's version still has: the upstream fix goes into every copy, and the buggy ones lose it again.
  if declare -F subject_apply_fix >/dev/null; then subject_apply_fix "$tree"; fi
  [ -n "$buggy" ] && subject_reinstate_bug "$tree"
  start=$(date +%s.%N)
  program=$(subject_build "$tree" "$cc" "$cxx") || return 1
  [ -x "$program" ] || { echo "isolate.sh: the build of $tree gave no program '$program'" >&2; return 1; }
  awk -v start="$start" -v end="$(date +%s.%N)" -v text="$(size -A "$program" | awk '$1 == ".text" { print $2 }')" \
    'BEGIN { printf "%.1f %d\n", end - start, text }' >"$tree.cost"
  if [ -n "$buggy" ]; then
    echo "$current_abi" >"$tree.abi"
    problem=$(runtime_problem "$program")
    [ -z "$problem" ] || { echo "isolate.sh: the new build $program does not work with $build's runtime: $problem" >&2; return 1; }
  fi
  echo "$program" >"$tree.program"
}

# prepare_input SEED: the inputs of run SEED (SUBJECT/inputs/SEED/, its arguments in SEED.args) and the fixed
# build's stdout, exit status and the files it left (SUBJECT/expected/SEED.out, .status, .files: judge.sh
# --files), run in a copy of the inputs.
prepare_input() {
  local seed=$1 in=$subject_dir/inputs/$1 scratch status=0
  [ -f "$subject_dir/expected/$seed.status" ] && [ -f "$subject_dir/expected/$seed.files" ] && return 0
  rm -rf "$in" && mkdir -p "$in"
  subject_input "$seed" "$in" >"$in.args"
  scratch=$(mktemp -d "$subject_dir/scratch.XXXXXX")
  cp -a "$in/." "$scratch/"
  local args=()
  mapfile -t args <"$in.args"
  # Under its name, as judge.sh runs the buggy one: a program may print its argv[0].
  (cd "$scratch" && ulimit -c 0 && { (exec -a "${fixed_program##*/}" "$fixed_program" "${args[@]}") <"$(input_of "$scratch")" \
    >"$subject_dir/expected/$seed.out" 2>/dev/null; } 2>/dev/null) || status=$?
  (cd "$scratch" && "$here/judge.sh" --files) >"$subject_dir/expected/$seed.files"
  rm -rf "$scratch"
  echo "$status" >"$subject_dir/expected/$seed.status"
}
input_of() { if [ -f "$1/stdin" ]; then echo "$1/stdin"; else echo /dev/null; fi; }

# run_one SEED: the buggy build on run SEED's inputs through sampler-run (judge.sh between them), which uploads
# the report and keeps a copy as RUNDIR/reports/SEED.report; the outcome goes to RUNDIR/results.tsv.
run_one() {
  local seed=$1 scratch status=0 label report
  scratch=$(mktemp -d "$run_dir/scratch.XXXXXX")
  mkdir -p "$scratch/run" && cp -a "$subject_dir/inputs/$seed/." "$scratch/run/"
  local args=() plan_args=(--no-plan)  # not the collector's plan either
  [ -z "$plan_file" ] || plan_args=(--plan "$plan_file")
  mapfile -t args <"$subject_dir/inputs/$seed.args"
  (cd "$scratch/run" && { "$tools/sampler-run" --app "$app" --version "$version" --upload "$url" \
    --api-key "$key" --keep "$scratch/keep" --sparsity "$sparsity" "${plan_args[@]}" --seed "$seed" -v -- \
    "$here/judge.sh" --memory-limit "$memory_limit" "$subject_dir/expected/$seed" "$program" "${args[@]}" \
    >/dev/null 2>"$scratch/log"; } 2>/dev/null) || status=$?
  report=$(find "$scratch/keep" -name '*.report' 2>/dev/null | head -1)
  if [ -z "$report" ] || ! grep -q "sent to" "$scratch/log"; then
    echo "isolate.sh: run $seed ($version) left no report or was not sent: $(tail -2 "$scratch/log")" >&2
    rm -rf "$scratch"
    return 1
  fi
  mv "$report" "$run_dir/reports/$seed.report"
  label=success
  [ "$status" -ne 0 ] && label=failure
  printf '%s\t%s\t%s\n' "$seed" "$label" "$status" >>"$run_dir/results.tsv"
  rm -rf "$scratch"
  if [ $((seed % 250)) -eq 0 ]; then
    note "$name $version: $(wc -l <"$run_dir/results.tsv") of $runs runs," \
      "$(awk -F'\t' '$2 == "failure"' "$run_dir/results.tsv" | wc -l) failing"
  fi
}

# same_file(F), in awk: whether the file F that the site information names (as the compiler saw it: storage.c,
# ./hash-table.cc, ../../bc/bc.y) is SUBJECT_BUG_FILE (a path in the source tree, in awk's variable file): one of
# them ends with the other, after F's leading ./ and ../ are dropped.
same_file='
  function same_path(f, ref) {
    sub(/^(\.\.?\/)+/, "", f)
    return f == ref || (index(ref, "/" f) > 0 && index(ref, "/" f) == length(ref) - length(f)) ||
           (index(f, "/" ref) > 0 && index(f, "/" ref) == length(f) - length(ref))
  }
  function same_file(f) { return same_path(f, file) }'

# bug_function PROGRAM: the function that holds the bug's fixed lines, from the site information: the function of
# the last site in SUBJECT_BUG_FILE at or before the fixed lines' end (SUBJECT_BUG_FUNCTION overrides it).
bug_function() {
  if [ -n "${SUBJECT_BUG_FUNCTION:-}" ]; then echo "$SUBJECT_BUG_FUNCTION"; return; fi
  "$tools/extract-section" .debug_site_info "$1" 2>/dev/null |
    awk -F'\t' -v file="$SUBJECT_BUG_FILE" -v last="${SUBJECT_BUG_LINES#*-}" "$same_file"'
      NF >= 3 && $2 ~ /^[0-9]+$/ && same_file($1) && $2 <= last + 0 && $2 + 0 >= best {
        best = $2 + 0; fn = $3 }
      END { print fn }'
}

# one_call_away PROGRAM TREE: sets callees and calls, the places one call away from the bug (docs/isolation.md,
# "One call away"): callees, the functions with sites (other than the bug's) that the fixed lines call (a name
# followed by '(' on those lines of the buggy tree); calls, FILE:LINE of every call of the bug's function (a line
# of the tree's C, C++ or yacc sources, outside hidden directories such as quilt's .pc, that names it followed by
# '(' and begins with blank space: a definition or a declaration begins at the margin).
one_call_away() {
  local program=$1 tree=$2 first=${SUBJECT_BUG_LINES%-*} last=${SUBJECT_BUG_LINES#*-} names functions
  names=$(sed -n "${first},${last}p" "$tree/$SUBJECT_BUG_FILE" |
    grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' | sort -u) || true
  functions=$("$tools/extract-section" .debug_site_info "$program" 2>/dev/null |
    awk -F'\t' 'NF >= 3 && $2 ~ /^[0-9]+$/ { print $3 }' | sort -u)
  callees=$(comm -12 <(echo "$names") <(echo "$functions") | grep -vxF "$bug_fn" | tr '\n' ' ') || true
  calls=$(cd "$tree" && grep -rnE --include='*.c' --include='*.cc' --include='*.cpp' --include='*.y' --exclude-dir='.*' \
    "^[[:space:]]+.*\<${bug_fn}[[:space:]]*\(" -- * | awk -F: '{ printf "%s:%s ", $1, $2 }') || true
}

# bug_rank TSV: "RANK ROUND ROWS ROUNDS AT_BUG NEAR" of the first predictor at the bug in a sampler-analyze table
# ("- -" when none is), ROWS the predicates ranked, ROUNDS the elimination rounds, AT_BUG the rounds that chose a
# predictor at the bug, NEAR the rank of the first predictor at the bug or one call away (one_call_away).
bug_rank() {
  local first=${SUBJECT_BUG_LINES%-*} last=${SUBJECT_BUG_LINES#*-}
  awk -F'\t' -v file="$SUBJECT_BUG_FILE" -v fn="$bug_fn" -v first="$first" -v last="$last" -v callees=" $callees " \
    -v calls="$calls" "$same_file"'
    BEGIN { ncalls = split(calls, call, " ") }
    function near_call(f, line,   i, at) {
      for (i = 1; i <= ncalls; i++) {
        at = call[i]; sub(/:[0-9]+$/, "", at)
        if (same_path(f, at) && line >= substr(call[i], length(at) + 2) - 5 && line <= substr(call[i], length(at) + 2) + 5)
          return 1
      }
      return 0
    }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { rows++; if ($col["round"] != "-" && $col["round"] > rounds) rounds = $col["round"] }
    same_file($col["file"]) && ($col["function"] == fn || ($col["line"] >= first - 5 && $col["line"] <= last + 5)) {
      if (!found) { found = 1; rank = $col["rank"]; round = $col["round"] }
      if ($col["round"] != "-") at_bug++
      if (!near) near = $col["rank"]
      next
    }
    !near && (index(callees, " " $col["function"] " ") || near_call($col["file"], $col["line"])) { near = $col["rank"] }
    END { print (found ? rank : "-"), (found ? round : "-"), rows + 0, rounds + 0, at_bug + 0, (near ? near : "-") }' "$1"
}

# top_predictor TSV: the first row's place and predicate, for the table.
top_predictor() {
  awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    NR == 2 { printf "%s:%s %s: %s", $col["file"], $col["line"], $col["function"], $col["predicate"]; exit }' "$1"
}

expense() {  # RANK ROWS: the share of ranked predicates above the bug's, in percent
  if [ "$1" = - ]; then echo -; else awk -v r="$1" -v n="$2" 'BEGIN { printf "%.1f%%", 100 * (r - 1) / n }'; fi
}

# analyse: the tables of one build and sparsity (RUNDIR/analysis/), and its row of the summary.
analyse() {
  local out=$run_dir/analysis prev=0 step shards=() ranks="" stays=- at_all n failing
  mkdir -p "$out"
  n=$(wc -l <"$run_dir/results.tsv")
  failing=$(awk -F'\t' '$2 == "failure"' "$run_dir/results.tsv" | wc -l)
  sort -n "$run_dir/results.tsv" | awk -F'\t' -v dir="$run_dir/reports" '{ print dir "/" $1 ".report\t" $2 }' \
    >"$out/labels.tsv"
  # The user's view: every stored run of this build and sparsity, from the collector's database.
  "$tools/sampler-analyze" --database "sqlite:$subject_dir/collector.db" --app "$app" --version "$version" \
    --sites "$program" --format tsv >"$out/database.tsv" 2>"$out/database.log" ||
    { echo "isolate.sh: sampler-analyze --database failed: $(tail -2 "$out/database.log")" >&2; return 1; }
  local steps_here=()
  for step in $steps; do [ "$step" -lt "$n" ] && steps_here+=("$step"); done
  steps_here+=("$n")
  for step in "${steps_here[@]}"; do
    # Named by its runs, first and last: a rerun with other --steps must not take a shard of other runs.
    if [ ! -s "$out/shard-$((prev + 1))-$step.idx" ]; then
      # shellcheck disable=SC2046 # report paths have no spaces
      "$tools/sampler-analyze" index --sites "$program" -o "$out/shard-$((prev + 1))-$step.idx" \
        $(sort -n "$run_dir/results.tsv" | awk -F'\t' -v dir="$run_dir/reports" -v lo="$prev" -v hi="$step" \
          'NR > lo && NR <= hi { print dir "/" $1 ".report" }') 2>"$out/index.log" ||
        { echo "isolate.sh: sampler-analyze index failed: $(tail -2 "$out/index.log")" >&2; return 1; }
    fi
    shards+=("$out/shard-$((prev + 1))-$step.idx")
    prev=$step
    "$tools/sampler-analyze" rank --labels "$out/labels.tsv" --format tsv "${shards[@]}" >"$out/steps-$step.tsv" \
      2>"$out/rank.log" || { echo "isolate.sh: sampler-analyze rank failed: $(tail -2 "$out/rank.log")" >&2; return 1; }
    read -r rank _ < <(bug_rank "$out/steps-$step.tsv")
    ranks+="$step:$rank "
    if [ "$rank" = 1 ]; then [ "$stays" = - ] && stays=$step; else stays=-; fi
  done
  local metric cells="" rank round rows rounds at_bug
  for metric in $metrics; do
    "$tools/sampler-analyze" rank --labels "$out/labels.tsv" --metric "$metric" --format tsv "${shards[@]}" \
      >"$out/metric-$metric.tsv" 2>"$out/rank.log"
    read -r rank round rows rounds at_bug _ < <(bug_rank "$out/metric-$metric.tsv")
    cells+=" $rank ($(expense "$rank" "$rows")) |"
  done
  read -r rank round rows rounds at_bug near < <(bug_rank "$out/database.tsv")
  at_all=$rank
  local successful_samples failing_samples cost cost_ratio
  read -r successful_samples failing_samples < <(samples_per_run "$run_dir")
  measured_cost "$successful_samples"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s (%s) | %s | %s | %s |%s %s |\n' "$name" "$variant" \
    "$label" "$n" "$failing" "$cost" "$rank" "$near" "$round" "$rounds" "$at_bug" "$stays" "${ranks% }" "$rows" \
    "$cells" "$(top_predictor "$out/database.tsv" | tr '|' '/')" >>"$subject_dir/table.md"
  local predicted=
  [ -z "$plan_file" ] || predicted="; predicted by sampler-analyze plan: $(sed -n 's/.*predicted cost //p' "$plan_file.summary")"
  echo "$name $variant $label: $(printf %.0f "$successful_samples") samples a successful run," \
    "$(printf %.0f "$failing_samples") a failing one (mean)$predicted" >>"$subject_dir/samples.txt"
  local e bound=
  if [ -n "$plan_file" ]; then  # --expect-rank bounds the uniform rates; --expect-equal-cost the =1/S plans
    [ -n "$expect_equal_cost" ] && [[ $label == *"'s samples"* ]] || return 0
    if [ -z "$cost_ratio" ] || ! within_tolerance "$cost_ratio"; then
      echo "isolate.sh: FAIL: $name $variant $label over $n runs: ${cost_ratio:-no}x uniform" \
        "1/${uniform_version##*-s}'s samples a successful run, not within $cost_tolerance%" >&2
      return 1
    fi
    note "$name $variant $label: ${cost_ratio}x uniform's samples over the measured runs (tolerance $cost_tolerance%)"
    return 0
  fi
  for e in $expect_rank; do
    case $e in "${label#1/}":*) bound=${e#*:} ;; *:*) ;; *) bound=$e ;; esac
  done
  if [ -n "$bound" ] && { [ "$at_all" = - ] || [ "$at_all" -gt "$bound" ]; }; then
    echo "isolate.sh: FAIL: $name $variant at $label over $n runs: the first predictor at the bug" \
      "($SUBJECT_BUG_FILE:$SUBJECT_BUG_LINES, $bug_fn) is ranked ${at_all/-/nowhere}, not within $bound" >&2
    return 1
  fi
  if [ -n "$bound" ]; then
    note "$name $variant at $label: the predictor at the bug ranked $at_all (bound $bound)"
  fi
}

# measured_cost SUCCESSFUL: sets cost, the table's cell for the samples a successful run of $run_dir took (mean),
# and for a plan compared with a uniform rate ($uniform_version) cost_ratio, their ratio over the runs both have
# (else empty): the measured cost.
measured_cost() {
  local plan_mean uniform_mean uniform_dir=$subject_dir/runs/$uniform_version
  cost=$(printf %.0f "$1") cost_ratio=
  if [ -n "$uniform_version" ] && [ -s "$uniform_dir/results.tsv" ]; then
    read -r plan_mean _ < <(samples_per_run "$run_dir" "$uniform_dir")
    read -r uniform_mean _ < <(samples_per_run "$uniform_dir" "$run_dir")
    cost_ratio=$(awk -v p="$plan_mean" -v u="$uniform_mean" 'BEGIN { if (u > 0) printf "%.3f", p / u }')
    [ -z "$cost_ratio" ] || cost+=" (${cost_ratio}x 1/${uniform_version##*-s})"
  fi
}

# run_setting VERSION LABEL FIRST LAST [UNIFORM]: the buggy build ($program) on seeds FIRST..LAST through
# sampler-run at $sparsity, with $plan_file if set; the runs already in RUNDIR/results.tsv are not run again. A
# LABEL other than '-' adds the setting to those ranked (settings: "VARIANT|VERSION|LABEL|PLAN|UNIFORM"), UNIFORM
# the version of the uniform rate whose measured cost a plan's row is compared with.
run_setting() {
  version=$1 run_dir=$subject_dir/runs/$1
  local label=$2 first=$3 last=$4 uniform=${5:-} missing
  mkdir -p "$run_dir/reports" && touch "$run_dir/results.tsv"
  rm -rf "$run_dir"/scratch.*
  export program sparsity version run_dir plan_file
  missing=$(seq "$first" "$last" | awk -F'\t' 'FILENAME != "-" { done[$1] = 1; next } !($1 in done)' \
    "$run_dir/results.tsv" -)
  local todo all=$((last - first + 1))
  todo=$(wc -w <<<"$missing")
  note "$name $version: $todo runs to do through sampler-run (of $all), $jobs at a time"
  if [ -n "$missing" ]; then
    xargs -P "$jobs" -n 16 bash -c 'for s; do run_one "$s" || exit 255; done' _ <<<"$missing" ||
      { echo "isolate.sh: runs failed ($version)" >&2; return 1; }
  fi
  [ "$label" = - ] || settings+=("$variant|$version|$label|$plan_file|$uniform")
}

# uniform_cost_percent VARIANT S: the predicted cost of uniform sampling at 1/S on VARIANT's training runs, in
# percent of a run's CPU time: the summary's "the training runs' own rates cost", which are at 1/100, scaled by
# 100/S (a sample's cost is the same whatever its rate, and so are the walks' a unit of weight causes, both priced
# with the program's functions, --sites).
uniform_cost_percent() {
  local training=$subject_dir/runs/$1-training-s100/reports probe=$subject_dir/plans/$1-uniform-cost.plan
  local summary uniform
  mkdir -p "$subject_dir/plans"
  summary=$("$tools/sampler-analyze" plan --budget 1% --sites "$program" -o "$probe" "$training" 2>&1) ||
    { echo "isolate.sh: sampler-analyze plan failed on $training: $summary" >&2; return 1; }
  rm -f "$probe"
  uniform=$(sed -n "s/.*the training runs' own rates cost \([0-9.e+-]*\)%.*/\1/p" <<<"$summary")
  [ -n "$uniform" ] || { echo "isolate.sh: no uniform cost in sampler-analyze plan's summary: $summary" >&2; return 1; }
  awk -v u="$uniform" -v s="$2" 'BEGIN { printf "%.6g\n", u * 100 / s }'
}

# learn_plan VARIANT BUDGET: sets plan_file (SUBJECT/plans/VARIANT-TAG.plan, its summary beside it) and tag, a plan
# that sampler-analyze plan learns from the training runs' reports within BUDGET: a percentage of a run's CPU time,
# or 1/S, uniform_cost_percent's, so that a plan and a uniform rate are compared at the same predicted cost. Kept
# when done: resumed runs use the same plan.
learn_plan() {
  local variant=$1 budget=$2 training=$subject_dir/runs/$1-training-s100/reports percent summary
  case $budget in
  1/*) tag=cost-s${budget#1/} ;;
  *) tag=${budget}pct ;;
  esac
  plan_file=$subject_dir/plans/$variant-$tag.plan
  [ -s "$plan_file" ] && [ -s "$plan_file.summary" ] && return 0
  mkdir -p "$subject_dir/plans"
  percent=$budget
  if [[ $budget == 1/* ]]; then percent=$(uniform_cost_percent "$variant" "${budget#1/}") || return 1; fi
  summary=$("$tools/sampler-analyze" plan --budget "$percent%" --sites "$program" -o "$plan_file" "$training" 2>&1) ||
    { echo "isolate.sh: sampler-analyze plan --budget $percent% failed on $training: $summary" >&2; return 1; }
  echo "$summary" >"$plan_file.summary"
  note "$name: plan $budget ($percent% of a run's CPU time): $(grep 'predicted cost' "$plan_file.summary")"
}

# equalise_plan VARIANT S: sets plan_file, tag and calibrated ("BUDGET RATIO STEPS"), the plan at uniform 1/S's
# measured cost: the budget whose plan takes, in the calibration runs (seeds of their own) that succeed, uniform
# 1/S's samples a run on the same runs within --cost-tolerance. The measured cost, not the plan's prediction: a site
# never seen in training is planned at its 95% upper bound and most run less (docs/isolation.md, "gperf, sed and
# bc"); successful runs only, as the hand-scaled rows there: a failing run's samples are the failure's (a runaway
# loop at probability 1). The first step is at 1/S's predicted cost; each next one a secant step on log budget
# against log ratio (a proportional one until two steps are known), bisected in log when it leaves the bracket the
# steps so far give. Every step's plan and runs are kept: a rerun takes the same steps without running them again.
equalise_plan() {
  local variant=$1 s=$2 first=$((calibration_seed + 1)) last=$((calibration_seed + calibration_runs))
  local target samples budget ratio next step=1 prev_budget='' prev_ratio='' low='' high=''
  sparsity=$s plan_file=
  run_setting "$variant-calibration-s$s" - "$first" "$last" || return 1
  read -r target _ < <(samples_per_run "$run_dir")
  awk -v u="$target" 'BEGIN { exit !(u > 0) }' ||
    { echo "isolate.sh: uniform 1/$s took no samples in a successful calibration run" >&2; return 1; }
  budget=$(uniform_cost_percent "$variant" "$s") || return 1
  while :; do
    learn_plan "$variant" "$budget" || return 1
    sparsity=100
    run_setting "$variant-calibration-plan-$tag" - "$first" "$last" || return 1
    read -r samples _ < <(samples_per_run "$run_dir")
    ratio=$(awk -v p="$samples" -v u="$target" 'BEGIN { printf "%.3f", p / u }')
    note "$name: =1/$s, step $step: plan at $budget%: $samples samples a successful calibration run," \
      "${ratio}x uniform 1/$s's $target"
    if within_tolerance "$ratio"; then
      calibrated="$budget $ratio $step"
      return 0
    fi
    if awk -v r="$ratio" 'BEGIN { exit !(r < 1) }'; then low=$budget; else high=$budget; fi
    next=$(next_budget "$budget" "$ratio" "$prev_budget" "$prev_ratio" "$low" "$high")
    if [ "$step" -ge "$calibration_steps" ] || [ "$next" = "$budget" ]; then
      echo "isolate.sh: FAIL: $name $variant: no plan within $cost_tolerance% of uniform 1/$s's samples a run in" \
        "$step steps (the last at $budget%: ${ratio}x)" >&2
      return 1
    fi
    prev_budget=$budget prev_ratio=$ratio budget=$next step=$((step + 1))
  done
}

# within_tolerance RATIO: whether a plan's samples over uniform's, RATIO, are within --cost-tolerance of 1.
within_tolerance() { awk -v r="$1" -v t="$cost_tolerance" 'BEGIN { exit !(r >= 1 - t / 100 && r <= 1 + t / 100) }'; }

# next_budget BUDGET RATIO PREV_BUDGET PREV_RATIO LOW HIGH: the next step of equalise_plan. Samples grow in
# proportion to the budget while no site is at probability 1, and slower after; the slope is taken from the last
# two steps when they give one (floored at 0.1: a plan whose samples hardly answer the budget moves at most tenfold
# the log ratio), and the step is bisected in log between LOW (the largest budget under) and HIGH (the smallest
# over) when it leaves them. Budgets are at most 100%, with 4 significant digits (a plan's file is named by it).
next_budget() {
  awk -v b="$1" -v r="$2" -v pb="$3" -v pr="$4" -v lo="$5" -v hi="$6" 'BEGIN {
    if (r <= 0) nb = b * 10
    else {
      slope = 1
      if (pb != "" && pr > 0 && pb != b) {
        s = (log(r) - log(pr)) / (log(b) - log(pb))
        if (s > 0) slope = (s < 0.1 ? 0.1 : s)
      }
      nb = exp(log(b) - log(r) / slope)
    }
    if (lo != "" && hi != "" && (nb <= lo + 0 || nb >= hi + 0)) nb = sqrt(lo * hi)
    if (nb > 100) nb = 100
    printf "%.4g\n", nb }'
}

# samples_per_run RUNDIR [OTHER]: "SUCCESSFUL FAILING", the mean samples a run took, to 2 decimals (the samples
# subreport's counters summed, but bounds', which are extremes, not counts) over RUNDIR's successful and its failing
# runs (those whose seeds OTHER has run too, if given: two settings compared on the same inputs): the measured cost.
samples_per_run() {
  local dir=$1 other=${2:-$1}
  awk -F'\t' -v reports="$dir/reports" -v other="$other/results.tsv" '
    BEGIN { while ((getline line <other) > 0) { split(line, field, "\t"); common[field[1]] = 1 } }
    !($1 in common) { next }
    { kind = $2; runs[kind]++; file = reports "/" $1 ".report"; counting = 0
      while ((getline line <file) > 0) {
        if (line ~ /^<samples /) { counting = (line !~ /scheme="bounds"/); continue }
        if (line ~ /^<\/samples>/) { counting = 0; continue }
        if (counting) { n = split(line, field, /[ \t]+/); for (i = 1; i <= n; i++) total[kind] += field[i] }
      }
      close(file) }
    END { printf "%.2f %.2f\n", runs["success"] ? total["success"] / runs["success"] : 0,
                                runs["failure"] ? total["failure"] / runs["failure"] : 0 }' "$dir/results.tsv"
}

# isolate NAME: the whole road for one subject; its table rows go to WORK/NAME/table.md.
isolate() {
  name=$1
  # shellcheck source=/dev/null
  . "$here/subjects/$name.sh"
  subject_dir=$work/$name
  mkdir -p "$subject_dir/expected"
  note "$name: fetching the source of Debian's $SUBJECT_PACKAGE"
  local source
  source=$(fetch_debian_source "$SUBJECT_PACKAGE" "$subject_dir/source") || return 1
  note "$name: building it fixed (clang-19) and buggy (sampler-cc: $variants)"
  build_tree "$source" "$subject_dir/fixed" clang-19 clang++-19 || return 1
  fixed_program=$(cat "$subject_dir/fixed.program")
  local variant dir
  for variant in $variants; do
    dir=$(compilers "$variant")
    build_tree "$source" "$subject_dir/buggy-$variant" "$dir/sampler-cc" "$dir/sampler-c++" buggy || return 1
  done

  # The collector, on a free loopback port; its first stdout line says which (read from a FIFO: no polling).
  key=isolation-key
  printf '%s\t%s\treports,symbols,replace-symbols\n' "$name" "$key" >"$subject_dir/keys.tsv"
  rm -f "$subject_dir/collector.fifo" && mkfifo "$subject_dir/collector.fifo"
  "$tools/sampler-collector" serve --listen 127.0.0.1:0 --database "sqlite:$subject_dir/collector.db" \
    --keys "$subject_dir/keys.tsv" >"$subject_dir/collector.fifo" 2>"$subject_dir/collector.log" &
  collector_pid=$!
  trap 'kill -TERM "$collector_pid" 2>/dev/null; wait "$collector_pid" 2>/dev/null' EXIT
  local listening
  read -r listening <"$subject_dir/collector.fifo" ||
    { echo "isolate.sh: the collector did not start: $(cat "$subject_dir/collector.log")" >&2; return 1; }
  url=http://${listening##* }
  app=$name
  for variant in $variants; do
    "$tools/sampler-symbols" push --url "$url" --api-key "$key" "$(cat "$subject_dir/buggy-$variant.program")" \
      >"$subject_dir/symbols.log" 2>&1 ||
      { echo "isolate.sh: sampler-symbols push failed: $(tail -2 "$subject_dir/symbols.log")" >&2; return 1; }
  done
  # sampler-run's own state (spool, last report) stays in the work directory.
  export XDG_CACHE_HOME=$subject_dir/cache XDG_CONFIG_HOME=$subject_dir/config

  note "$name: $runs inputs and the fixed build's output on each"
  # Each job a bash of its own: the subject script is sourced there again (its functions may use one another).
  export subject_dir fixed_program name here
  export -f prepare_input input_of
  { seq 1 "$runs"; [ -z "$plan_budgets" ] || seq $((training_seed + 1)) $((training_seed + training_runs))
    [ -z "$equal_cost" ] || seq $((calibration_seed + 1)) $((calibration_seed + calibration_runs)); } |
    xargs -P "$jobs" -n 16 bash -c '. "$ISOLATION_DIR/subjects/$name.sh" &&
    for s; do prepare_input "$s" || exit 255; done' _ ||
    { echo "isolate.sh: preparing the inputs failed" >&2; return 1; }

  export tools here url key app runs memory_limit plan_file
  export -f run_one note
  : >"$subject_dir/table.md"
  : >"$subject_dir/samples.txt"
  settings=()
  for variant in $variants; do
    program=$(cat "$subject_dir/buggy-$variant.program")
    bug_fn=$(bug_function "$program")
    [ -n "$bug_fn" ] || note "$name: no site in $SUBJECT_BUG_FILE before line ${SUBJECT_BUG_LINES#*-}"
    plan_file=
    for sparsity in $sparsities; do
      run_setting "$variant-s$sparsity" "1/$sparsity" 1 "$runs" || return 1
    done
    if [ -n "$plan_budgets" ]; then
      # Training: runs of their own seeds (not the measured ones), at 1/100, the rate the field's reports have.
      sparsity=100
      run_setting "$variant-training-s100" - $((training_seed + 1)) $((training_seed + training_runs)) || return 1
      local budget tag label uniform calibrated percent ratio
      for budget in $plan_budgets; do
        uniform=
        case $budget in
        =1/*)
          equalise_plan "$variant" "${budget#=1/}" || return 1
          read -r percent ratio _ <<<"$calibrated"
          label="plan at ${budget#=}'s samples ($percent%, ${ratio}x in calibration)" uniform=$variant-s${budget#=1/} ;;
        1/*)
          learn_plan "$variant" "$budget" || return 1
          label="plan at $budget's cost" uniform=$variant-s${budget#1/} ;;
        *) learn_plan "$variant" "$budget" || return 1; label="plan at $budget%" ;;
        esac
        sparsity=100
        run_setting "$variant-plan-$tag" "$label" 1 "$plan_runs" "$uniform" || return 1
      done
    fi
  done
  kill -TERM "$collector_pid" && wait "$collector_pid" ||
    { echo "isolate.sh: the collector did not stop cleanly: $(tail -2 "$subject_dir/collector.log")" >&2; return 1; }
  trap - EXIT

  local status=0
  for variant in $variants; do
    program=$(cat "$subject_dir/buggy-$variant.program")
    bug_fn=$(bug_function "$program")
    one_call_away "$program" "$subject_dir/buggy-$variant"
    for setting in "${settings[@]}"; do
      [ "${setting%%|*}" = "$variant" ] || continue
      IFS='|' read -r _ version label plan_file uniform_version <<<"$setting"
      run_dir=$subject_dir/runs/$version
      note "$name $version: ranking"
      analyse || status=1
    done
  done
  local plain_seconds plain_text seconds text
  {
    read -r plain_seconds plain_text <"$subject_dir/fixed.cost"
    for variant in $variants; do
      read -r seconds text <"$subject_dir/buggy-$variant.cost"
      awk -v n="$name" -v v="$variant" -v ps="$plain_seconds" -v pt="$plain_text" -v s="$seconds" -v t="$text" \
        'BEGIN { printf "%s %s: build %.0f s (plain clang %.0f s, %.2fx), .text %d bytes (%.2fx)\n",
                 n, v, s, ps, (ps > 0 ? s / ps : 0), t, (pt > 0 ? t / pt : 0) }'
    done
  } >"$subject_dir/cost.txt"
  return $status
}

ensure_deb_src || exit 1
overall=0
tables=()
for subject in "${subjects[@]}"; do
  if (isolate "$subject"); then :; else
    note "$subject: FAILED"
    overall=1
  fi
  tables+=("$work/$subject")
done

echo "rank: of the first predictor at the bug (in the fixed lines' function or within 5 lines of them; '-': none),"
echo "over the runs the collector stored; one call away: the same, counting also the functions the fixed lines call and"
echo "the lines around each call of the bug's function; round / rounds (at the bug): its elimination round, the rounds, and how many"
echo "of them chose a predictor at the bug; stays 1st: the runs after which it is first at every later step; ranked:"
echo "the predicates that passed the 95% test; each metric: rank (expense: the share of the ranked predicates above it);"
echo "samples a run: the measured cost, mean over the successful runs, and a plan's over uniform 1/S's on the same"
echo "runs."
echo
echo "| subject | build | sampling | runs | failing | samples a run | rank | one call away | round / rounds |" \
  "stays 1st | rank by runs | ranked | importance | increase | ochiai | tarantula | dstar | top predictor |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for dir in "${tables[@]}"; do [ -f "$dir/table.md" ] && cat "$dir/table.md"; done
echo
for dir in "${tables[@]}"; do [ -f "$dir/cost.txt" ] && cat "$dir/cost.txt"; done
echo
echo "measured cost: the samples a run took (every counter of its samples subreport but bounds'), mean"
for dir in "${tables[@]}"; do [ -f "$dir/samples.txt" ] && cat "$dir/samples.txt"; done
exit $overall
