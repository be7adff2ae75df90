#!/usr/bin/env bash
# The cost of sampler-cc on real programs' CPU-bound work: Debian's gzip, bzip2 and bc, fetched with `apt-get
# source` (nothing is committed), each built with the same flags by
#   plain     clang-19
#   default   sampler-cc at its defaults (scalar-pairs with the original's operands)
#   richer    sampler-cc with scalar-pairs' richer operand set (-fsampler-compare-constants,
#             -fsampler-assign-into-field, -fsampler-assign-into-index, -fsampler-assign-across-pointer)
#   light     sampler-cc without scalar-pairs (-fsampler-schemes=branches,returns,function-entries)
#   profile   clang-19 -fprofile-instr-generate: every edge counted, no sampling (what a user would otherwise pick)
# then the same work for every build (`gzip -9 -c` / `bzip2 -9 -c` of a ~100 MB input, `bc -l` computing pi to
# 2,000 digits): the default build with sampling off, with no sample in reach (SAMPLER_SPARSITY=1e15: sampling on,
# the fast sides alone), at 1/1000 and 1/100; richer and light at 1/1000 and 1/100. The runs of every build are
# interleaved, the best user CPU time of REPS kept (the machine is shared: user time, and the best of several, are
# the least disturbed by other work). Every run's output must be plain clang's.
# Prints per program: each run's user time and its ratio to plain clang's, and each build's time (make, CPU
# seconds), .text size and sites (bzip2: with its libbz2.so). The goals (docs/performance.md): default at 1/1000
# <= 1.10x, at 1/100 <= 1.5x, sampling off <= 1.03x, none in reach <= 1.05x, compile time <= 1.5x.
#
# --instructions counts instructions instead (callgrind, the runtime's included: the same figures on a busy
# machine), one run each on a small input (2 MB; bc: pi to 500 digits).
#
# Sampling plans (docs/analysis.md, "Sampling plans"), per budget B of --plan-budgets: the default build is run
# RUNS times (--training-runs, 20) at the uniform rate 1/100 on training inputs distinct from the measured one,
# seeded by the run's number i (gzip, bzip2: 4 MB of a tar of /usr/share/perl and /usr/lib/python3.11 at the
# offset awk's srand(i) draws; bc -l: e, l, s, c, a, sqrt and a power of numbers, at a scale of 200 to 399, that
# awk's srand(i) draws), each with SAMPLER_SEED=i and its output checked against plain clang's on the same input;
# `sampler-analyze plan --budget B% --sparsity 100 --run-seconds S --sites FILES` over their reports (FILES: the
# default build's, for each site's function), S being plain clang's mean CPU time (user + system) on those inputs,
# so that the budget is a share of plain clang's time, the goals' denominator (the training runs' own CPU time
# would count their 1/100 sampling as the run's length); then the measured work with SAMPLER_PLAN alone (sites it
# does not name never sample), printed beside the uniform rows with the plan's predicted cost (its samples' and
# slow-side walks' share of plain's CPU time), and a row with every probability of the plan set to 0: its checks
# alone, no sample. With --fast-cost NS the plans turn off the functions whose seen sites' fast sides alone would
# spend more than the budget, each fast side priced NS nanoseconds (`sampler-analyze plan --fast-cost`,
# docs/analysis.md, "Functions turned off"). The goals: a plan at 2 % <= 1.03x, at 5 % <= 1.06x. A build whose runtime
# does not apply plans (no plan subreport in a report of a run with SAMPLER_PLAN) gets rows saying so.
#
# Usage: bench/instrumentor/programs_bench.sh [--build BUILD_DIR] [--work DIR] [--reps N] [--megabytes M]
#                                             [--plan-budgets "B..."] [--training-runs RUNS] [--fast-cost NS]
#                                             [--compile-only | --instructions] [PROGRAM...]
#   BUILD_DIR: the suite's build tree, with sampler-cc (and sampler-analyze for plans) built (default build/)
#   DIR: sources, builds and input (default BUILD_DIR/programs-bench; the builds are redone each run)
#   M: the size of gzip's and bzip2's input (default 100)
#   B: budgets in percent of plain clang's CPU time (default "2 5"; "" for no plan rows)
#   NS: nanoseconds a fast side costs, for the plans (default: no function turned off)
#   --compile-only: only the compile time: plain and default builds alternated REPS times, the least CPU kept
#   PROGRAM: gzip, bzip2 and/or bc (default gzip and bzip2)
# Not run by ctest (minutes long, needs the network for apt-get source); see docs/performance.md.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
work=
reps=3
megabytes=100
compile_only=0
instructions=0
plan_budgets="2 5"
training_runs=20
fast_cost=
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --reps) reps=$2; shift 2 ;;
  --megabytes) megabytes=$2; shift 2 ;;
  --plan-budgets) plan_budgets=$2; shift 2 ;;
  --training-runs) training_runs=$2; shift 2 ;;
  --fast-cost) fast_cost=$2; shift 2 ;;
  --compile-only) compile_only=1; shift ;;
  --instructions) instructions=1; reps=1; shift ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "programs_bench.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
for budget in $plan_budgets; do
  [[ $budget =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
    { echo "programs_bench.sh: --plan-budgets: '$budget' is not a percentage" >&2; exit 2; }
done
read -ra budget_list <<<"$plan_budgets"
plan_budgets=${budget_list[*]}  # one space between budgets: the first is ${plan_budgets%% *}
[ -z "$fast_cost" ] || [[ $fast_cost =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  { echo "programs_bench.sh: --fast-cost: '$fast_cost' is not a number of nanoseconds" >&2; exit 2; }
[[ $training_runs =~ ^[1-9][0-9]*$ ]] ||
  { echo "programs_bench.sh: --training-runs: '$training_runs' is not a positive number" >&2; exit 2; }
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gzip bzip2)
for program in "${programs[@]}"; do
  case $program in gzip | bzip2 | bc) ;; *) echo "programs_bench.sh: unknown program $program" >&2; exit 2 ;; esac
done
build=$(cd "$build" && pwd) || exit 2
work=${work:-$build/programs-bench}
cc=$build/instrumentor/sampler-cc
[ -x "$cc" ] || { echo "programs_bench.sh: $cc is not built" >&2; exit 2; }
analyze=$build/tools/sampler-analyze
[ -n "$plan_budgets" ] && [ "$compile_only" = 0 ] && [ ! -x "$analyze" ] &&
  { echo "programs_bench.sh: $analyze is not built (needed for the plan rows; --plan-budgets \"\" for none)" >&2; exit 2; }
note() { echo "programs-bench: $*" >&2; }
mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 1  # absolute: the builds run in their own directories

# shellcheck source=../../scripts/debian-source.sh
. "$(dirname "$0")/../../scripts/debian-source.sh"
ensure_deb_src || exit 1

# gzip's and bzip2's input: /usr/include and /usr/share/doc as one tar (text and some binary), repeated up to M
# megabytes. bc's: pi to 2,000 digits (bc -l's arctangent: its arbitrary-precision multiplication and division).
input=$work/input.tar
bc_input=$work/pi.bc
printf 'scale = 2000\n4 * a(1)\n' >"$bc_input"
compresses=0
[[ " ${programs[*]} " == *" gzip "* || " ${programs[*]} " == *" bzip2 "* ]] && compresses=1
if [ "$compile_only" = 0 ] && [ "$compresses" = 1 ] &&
  { [ ! -s "$input" ] || [ "$(stat -c %s "$input")" -ne $((megabytes * 1048576)) ]; }; then
  note "making a ${megabytes} MB input"
  tar -cf "$work/one.tar" /usr/include /usr/share/doc 2>/dev/null
  copies=$((megabytes * 1048576 / $(stat -c %s "$work/one.tar") + 1))
  for ((i = 0; i < copies; ++i)); do cat "$work/one.tar"; done 2>/dev/null | head -c $((megabytes * 1048576)) >"$input"
  rm -f "$work/one.tar"
fi

cpu_seconds() {  # LOG COMMAND...: CPU seconds (user + system) of the command and its children; output to LOG
  local log=$1 status
  shift
  /usr/bin/time -o "$work/time.out" -f '%U %S' "$@" >"$log" 2>&1
  status=$?
  awk '{ print $1 + $2 }' "$work/time.out"
  return $status
}
user_seconds() {  # INPUT OUTPUT ENVIRONMENT... PROGRAM ARGS...: user seconds of the program reading INPUT
  local from=$1 to=$2
  shift 2
  /usr/bin/time -o "$work/time.out" -f '%U' env "$@" <"$from" >"$to" 2>/dev/null ||
    { echo "programs_bench.sh: $* failed" >&2; exit 1; }
  cat "$work/time.out"
}
instruction_count() {  # INPUT OUTPUT ENVIRONMENT... PROGRAM ARGS...: the instructions callgrind counts
  local from=$1 to=$2
  shift 2
  local environment=()
  while [[ $1 == *=* ]]; do environment+=("$1"); shift; done
  env "${environment[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" <"$from" >"$to" \
    2>"$work/callgrind.err" || { echo "programs_bench.sh: $* failed under callgrind" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/callgrind.err"
}
# The training inputs: gzip's and bzip2's from other files than the measured input's (perl's and python's
# libraries: text and byte code), bc's other functions at other scales.
training_corpus=$work/training.tar
training_bytes=$((4 * 1048576))
make_training_input() {  # PROGRAM I FILE: the I-th training input (seeded by I) into FILE
  local program=$1 i=$2 file=$3 offset
  case $program in
  bc)
    awk -v seed="$i" 'BEGIN { srand(seed); printf "scale = %d\n", 200 + int(rand() * 200)
      printf "e(%.3f)\nl(%.3f)\ns(%.3f)\nc(%.3f)\na(%.3f)\nsqrt(%d)\n", rand() * 10, 1 + rand() * 1000, rand() * 6,
        rand() * 6, rand(), 2 + int(rand() * 1000)
      printf "%d ^ %d\n", 2 + int(rand() * 97), 200 + int(rand() * 800) }' >"$file"
    ;;
  *)
    if [ ! -s "$training_corpus" ]; then
      tar -cf "$training_corpus" /usr/share/perl /usr/lib/python3.11 2>/dev/null
      [ "$(stat -c %s "$training_corpus" 2>/dev/null || echo 0)" -gt $((2 * training_bytes)) ] ||
        { echo "programs_bench.sh: $training_corpus: too small (no /usr/share/perl or /usr/lib/python3.11?)" >&2; exit 1; }
    fi
    offset=$(awk -v seed="$i" -v size="$(stat -c %s "$training_corpus")" -v n="$training_bytes" \
      'BEGIN { srand(seed); printf "%d", rand() * (size - n) }')
    dd if="$training_corpus" of="$file" bs=1M iflag=skip_bytes,count_bytes skip="$offset" count="$training_bytes" \
      status=none || exit 1
    ;;
  esac
}

# learn_plans: the training runs of $program's default build, a plan per budget (plan_of, predicted_of), one with
# every probability 0 (checks_plan), and whether the build applies plans (plan_problem empty) or why not.
learn_plans() {
  local training=$work/$program/training i input total=0 run_seconds budget summary report
  rm -rf "$training" && mkdir -p "$training/reports" || exit 1
  for ((i = 1; i <= training_runs; ++i)); do
    note "$program: training run $i of $training_runs"
    input=$training/input-$i
    make_training_input "$program" "$i" "$input"
    /usr/bin/time -o "$work/time.out" -f '%U %S' env LD_LIBRARY_PATH="$(dirname "${built_of[plain]}")" \
      "${built_of[plain]}" "${arguments[@]}" <"$input" >"$training/plain.out" 2>/dev/null ||
      { echo "programs_bench.sh: plain $program failed on $input" >&2; exit 1; }
    total=$(awk -v total="$total" '{ print total + $1 + $2 }' "$work/time.out")
    env LD_LIBRARY_PATH="$(dirname "${built_of[default]}")" SAMPLER_SPARSITY=100 SAMPLER_SEED="$i" \
      SAMPLER_FILE="$training/reports/run-$i.report" "${built_of[default]}" "${arguments[@]}" <"$input" \
      >"$training/default.out" 2>/dev/null || { echo "programs_bench.sh: default $program failed on $input" >&2; exit 1; }
    cmp -s "$training/plain.out" "$training/default.out" ||
      { echo "programs_bench.sh: $program's output on $input differs from plain clang's: default, 1/100" >&2; exit 1; }
  done
  run_seconds=$(awk -v total="$total" -v n="$training_runs" 'BEGIN { printf "%.4f", total / n }')
  training_note="plans from $training_runs training runs at 1/100, $run_seconds s of plain clang's CPU each"
  training_note+="${fast_cost:+, fast sides at $fast_cost ns}"
  for budget in $plan_budgets; do
    plan_of[$budget]=$work/$program/plan-$budget.plan
    summary=$("$analyze" plan --budget "$budget%" --sparsity 100 --run-seconds "$run_seconds" \
      ${fast_cost:+--fast-cost "$fast_cost"} --sites "${default_files[@]}" -o "${plan_of[$budget]}" \
      "$training/reports" 2>&1) ||
      { echo "programs_bench.sh: sampler-analyze plan failed on $training/reports:" >&2; echo "$summary" >&2; exit 1; }
    echo "$summary" >"${plan_of[$budget]}.summary"
    predicted_of[$budget]=$(sed -n "s/.*predicted cost \([0-9.e+-]*\)% of a run's CPU time.*/\1/p" <<<"$summary")
    [ -n "${predicted_of[$budget]}" ] ||
      { echo "programs_bench.sh: no predicted cost in ${plan_of[$budget]}.summary" >&2; exit 1; }
  done
  # The checks alone: the first plan with every probability 0 (what a plan's fast sides cost without a sample).
  checks_plan=$work/$program/plan-checks.plan
  awk -F '\t' 'BEGIN { OFS = "\t" } $1 == "id" { $2 = "checks-only" } NF == 4 && !/^#/ { $4 = 0 } { print }' \
    "${plan_of[${plan_budgets%% *}]}" >"$checks_plan"
  # A runtime that does not read SAMPLER_PLAN samples nothing and says nothing of it in its report.
  env LD_LIBRARY_PATH="$(dirname "${built_of[default]}")" SAMPLER_PLAN="$checks_plan" SAMPLER_VERBOSE=1 \
    SAMPLER_FILE="$training/probe.report" "${built_of[default]}" "${arguments[@]}" <"$training/input-1" \
    >/dev/null 2>"$training/probe.err"
  report=$(cat "$training/probe.report" 2>/dev/null)
  plan_problem=
  if [[ $report != *'<report id="plan">'*'id	checks-only'* ]]; then
    plan_problem="this build cannot apply a plan: its report of a run with SAMPLER_PLAN has no plan subreport"
    plan_problem+=" (runtime: $(head -c 300 "$training/probe.err" | tr -d '[:cntrl:]'))"
  fi
}

text_size() { size -A "$@" | awk '$1 == ".text" { n += $2 } END { print n }'; }  # summed over the files
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# build PROGRAM SOURCE DIR CC EXTRA_CFLAGS: configure (gzip) or the Makefile (bzip2), then make, timed.
build_one() {
  local program=$1 source=$2 dir=$3 compiler=$4 flags=$5
  rm -rf "$dir" && cp -a "$source" "$dir" || return 1
  cd "$dir" || return 1
  case $program in
  gzip)
    ./configure CC="$compiler" CFLAGS="-g -O2 $flags" >configure.log 2>&1 || return 1
    make_seconds=$(cpu_seconds make.log make -j1 MAKEINFO=true) || return 1
    binary=$dir/gzip
    code_files=("$binary")
    ;;
  bc)
    # Debian's patches add a source to a Makefile.am: regenerated first, as Debian's build does. Old C that
    # clang 16+ rejects (dc calls functions it never declares) is let through, as in scripts/real-programs.sh.
    if [ -n "$(find . -name Makefile.am -newer configure)" ]; then autoreconf -fi >autoreconf.log 2>&1 || return 1; fi
    ./configure CC="$compiler" CFLAGS="-g -O2 -Wno-error=implicit-function-declaration -Wno-error=implicit-int \
      -Wno-error=int-conversion $flags" >configure.log 2>&1 || return 1
    make_seconds=$(cpu_seconds make.log make -j1 MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true \
      AUTOHEADER=true) || return 1
    binary=$dir/bc/bc
    code_files=("$binary")
    ;;
  bzip2)
    make_seconds=$(cpu_seconds make.log make -j1 bzip2 CC="$compiler" \
      CFLAGS="-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 $flags") || return 1
    binary=$dir/bzip2  # linked with the libbz2.so built beside it: run with LD_LIBRARY_PATH=$dir
    code_files=("$binary" "$dir/libbz2.so.1.0.4")  # the work is in the library
    [ -f "${code_files[1]}" ] || return 1
    ;;
  esac
  [ -x "$binary" ] || return 1
}

for program in "${programs[@]}"; do
  source=$(fetch_debian_source "$program" "$work/$program/fetch") || exit 1
  declare -A binary_of=() built_of=() make_of=() text_of=() plan_of=() predicted_of=()
  if [ "$compile_only" = 1 ]; then
    # Compile time alone: plain and region builds alternated (the machine's load hits both alike), least CPU kept.
    for ((round = 1; round <= reps; ++round)); do
      for variant in plain default; do
        note "$program: building ($variant), round $round of $reps"
        case $variant in
        plain) build_one "$program" "$source" "$work/$program/$variant" clang-19 "" ;;
        default) build_one "$program" "$source" "$work/$program/$variant" "$cc" "" ;;
        esac || { echo "programs_bench.sh: the $variant build of $program failed (see $work/$program/$variant)" >&2; exit 1; }
        if [ -z "${make_of[$variant]:-}" ] ||
          awk -v a="$make_seconds" -v b="${make_of[$variant]}" 'BEGIN { exit !(a < b) }'; then
          make_of[$variant]=$make_seconds
        fi
        text_of[$variant]=$(text_size "$binary")
        binary_of[$variant]=$binary
      done
    done
    sites=$("$build/tools/extract-section" .debug_site_info "${binary_of[default]}" 2>/dev/null |
      awk '/^<sites/ { match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); next }
           /^<\/sites>/ { next } { n[s]++ } END { for (k in n) printf "%s %d, ", k, n[k] }')
    echo "== $program build, least make CPU of $reps alternated rounds (sites: ${sites%, })"
    printf '%-34s %8s %7s %10s %7s\n' "build" "make s" "ratio" ".text B" "ratio"
    for variant in plain default; do
      printf '%-34s %8s %7s %10s %7s\n' "$variant" "${make_of[$variant]}" \
        "$(ratio "${make_of[$variant]}" "${make_of[plain]}")x" "${text_of[$variant]}" \
        "$(ratio "${text_of[$variant]}" "${text_of[plain]}")x"
    done
    unset binary_of make_of text_of
    continue
  fi
  variants=(plain default richer light profile)
  for variant in "${variants[@]}"; do
    note "$program: building ($variant)"
    case $variant in
    plain) build_one "$program" "$source" "$work/$program/$variant" clang-19 "" ;;
    default) build_one "$program" "$source" "$work/$program/$variant" "$cc" "" ;;
    richer) build_one "$program" "$source" "$work/$program/$variant" "$cc" "-fsampler-compare-constants \
      -fsampler-assign-into-field -fsampler-assign-into-index -fsampler-assign-across-pointer" ;;
    light) build_one "$program" "$source" "$work/$program/$variant" "$cc" \
      "-fsampler-schemes=branches,returns,function-entries" ;;
    profile) build_one "$program" "$source" "$work/$program/$variant" clang-19 "-fprofile-instr-generate" ;;
    esac || { echo "programs_bench.sh: the $variant build of $program failed (see $work/$program/$variant)" >&2; exit 1; }
    binary_of[$variant]=$binary
    built_of[$variant]=$binary  # with its debug sections, where --instructions runs a stripped copy
    make_of[$variant]=$make_seconds
    text_of[$variant]=$(text_size "${code_files[@]}")
    [ "$variant" = default ] && default_files=("${code_files[@]}")
    if [ "$instructions" = 1 ]; then
      # valgrind 3.19 cannot read clang-19's DWARF 5: callgrind runs copies without debug sections (the runtime
      # needs none), beside their libraries.
      stripped=$work/$program/$variant.stripped
      rm -rf "$stripped" && mkdir -p "$stripped"
      cp -a "$(dirname "$binary")"/lib*.so* "$stripped"/ 2>/dev/null
      for file in "${code_files[@]}"; do objcopy --strip-debug "$file" "$stripped/$(basename "$file")"; done
      binary_of[$variant]=$stripped/$(basename "$binary")
    fi
  done
  sites=$(for file in "${default_files[@]}"; do "$build/tools/extract-section" .debug_site_info "$file"; done 2>/dev/null |
    awk '/^<sites/ { match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); next }
         /^<\/sites>/ { next } { n[s]++ } END { for (k in n) printf "%s %d, ", k, n[k] }')

  # The runs: every configuration once per round, REPS rounds, the best kept. The first round keeps each run's
  # output, which must be plain clang's: the same work, whatever the build and the sampling.
  configs=("plain|" "default|" "default|SAMPLER_SPARSITY=1e15" "default|SAMPLER_SPARSITY=1000"
    "default|SAMPLER_SPARSITY=100" "richer|SAMPLER_SPARSITY=1000" "richer|SAMPLER_SPARSITY=100"
    "light|SAMPLER_SPARSITY=1000" "light|SAMPLER_SPARSITY=100" "profile|LLVM_PROFILE_FILE=$work/profile.profraw")
  case $program in
  bc) from=$bc_input; arguments=(-l); workload="bc -l, pi to 2,000 digits" ;;
  *) from=$input; arguments=(-9 -c); workload="$program -9 -c of ${megabytes} MB" ;;
  esac
  if [ "$instructions" = 1 ]; then
    case $program in
    bc) from=$work/pi500.bc; printf 'scale = 500\n4 * a(1)\n' >"$from"; workload="bc -l, pi to 500 digits" ;;
    *) from=$work/input2mb; head -c 2000000 "$input" >"$from"; workload="$program -9 -c of 2 MB" ;;
    esac
  fi
  if [ -n "$plan_budgets" ]; then
    learn_plans
    if [ -z "$plan_problem" ]; then
      configs+=("default|SAMPLER_PLAN=$checks_plan")
      for budget in $plan_budgets; do configs+=("default|SAMPLER_PLAN=${plan_of[$budget]}"); done
    fi
  fi
  declare -A best=()
  for ((round = 1; round <= reps; ++round)); do
    note "$program: round $round of $reps"
    for config in "${configs[@]}"; do
      variant=${config%%|*}
      environment=${config#*|}
      # Debian's bzip2 links its own libbz2.so, which must be the one just built, not the system's.
      to=/dev/null
      [ "$round" = 1 ] && to=$work/output
      measure=user_seconds
      [ "$instructions" = 1 ] && measure=instruction_count
      t=$($measure "$from" "$to" LD_LIBRARY_PATH="$(dirname "${binary_of[$variant]}")" SAMPLER_FILE=/dev/null \
        $environment "${binary_of[$variant]}" "${arguments[@]}")
      if [ "$round" = 1 ]; then
        sum=$(cksum <"$work/output")
        [ "$variant" = plain ] && plain_sum=$sum
        if [ "$sum" != "$plain_sum" ]; then
          echo "programs_bench.sh: $program's output differs from plain clang's: $variant, ${environment:-off}" >&2
          exit 1
        fi
        rm -f "$work/output"
      fi
      if [ -z "${best[$config]:-}" ] || awk -v a="$t" -v b="${best[$config]}" 'BEGIN { exit !(a < b) }'; then
        best[$config]=$t
      fi
    done
  done

  plain=${best["plain|"]}
  if [ "$instructions" = 1 ]; then
    echo "== $workload, instructions (sites: ${sites%, })"
    printf '%-34s %14s %7s %s\n' "build and sampling" "instructions" "ratio" "${plan_budgets:+  predicted}"
  else
    echo "== $workload, best user time of $reps (sites: ${sites%, })"
    printf '%-34s %8s %7s %s\n' "build and sampling" "user s" "ratio" "${plan_budgets:+  predicted}"
  fi
  [ -n "$plan_budgets" ] && echo "   ($training_note; predicted: the samples' and walks' share of plain's CPU time)"
  for config in "${configs[@]}"; do
    variant=${config%%|*}
    environment=${config#*|}
    predicted=
    case $environment in
    "") label="sampling off" ;;
    SAMPLER_SPARSITY=1e15) label="none in reach" ;;
    SAMPLER_SPARSITY=*) label="1/${environment#SAMPLER_SPARSITY=}" ;;
    SAMPLER_PLAN="${checks_plan-}") label="plan, every p = 0"; predicted="+0%" ;;
    SAMPLER_PLAN=*)
      budget=${environment##*/plan-}
      budget=${budget%.plan}
      label="plan at $budget % budget"
      predicted="+${predicted_of[$budget]}%"
      ;;
    *) label="every edge counted" ;;
    esac
    [ "$variant" = plain ] && label="clang-19"
    printf '%-34s %8s %7s   %s\n' "$variant, $label" "${best[$config]}" "$(ratio "${best[$config]}" "$plain")x" "$predicted"
  done
  if [ -n "$plan_budgets" ] && [ -n "$plan_problem" ]; then
    for budget in $plan_budgets; do
      printf '%-34s %8s %7s   %s\n' "default, plan at $budget % budget" "-" "-" "+${predicted_of[$budget]}%"
    done
    echo "   (not measured: $plan_problem)"
  fi
  printf '%-34s %8s %7s %10s %7s\n' "build" "make s" "ratio" ".text B" "ratio"
  for variant in "${variants[@]}"; do
    printf '%-34s %8s %7s %10s %7s\n' "$variant" "${make_of[$variant]}" \
      "$(ratio "${make_of[$variant]}" "${make_of[plain]}")x" "${text_of[$variant]}" \
      "$(ratio "${text_of[$variant]}" "${text_of[plain]}")x"
  done
  unset binary_of built_of make_of text_of plan_of predicted_of best
done
