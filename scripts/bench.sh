#!/usr/bin/env bash
# Runs every benchmark of the project (bench/: formats library, runtime, tools) in an optimised build and prints,
# per benchmark, the project's figure, the baseline measured in the same run, the ratio and the goal; then the
# same table in Markdown with the machine it ran on (what docs/performance.md holds).
# Usage: scripts/bench.sh [BUILD_DIR]      (default: build-bench at the top of the checkout)
#        SAMPLER_BENCH_QUICK=1 scripts/bench.sh    tiny inputs: a check of the script, not a measurement
# CPU-heavy (inputs of 256 MB to 1 GB are generated in $TMPDIR): run it on an otherwise idle machine.
# Each benchmark's own output is kept in BUILD_DIR/bench-logs/NAME.log and shown as it runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
"$top/scripts/setup.sh"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAMPLER_BUILD_BENCH=ON -DSAMPLER_BUILD_TESTS=OFF \
  -DSAMPLER_SANITIZE=OFF -DSAMPLER_TSAN=OFF >/dev/null
logs=$build/bench-logs
mkdir -p "$logs"

# SAMPLER_BENCH_QUICK=1: tiny inputs, one run each (checks this script and the benchmarks, measures nothing).
quick=${SAMPLER_BENCH_QUICK:-}
# name: the benchmark (what each measures: see its source under bench/)
declare -A command=(
  [text_formats]="$build/bench/sections/text_formats_bench ${quick:+8}"
  [runtime]="$build/bench/runtime/runtime_bench ${quick:+0.05}"
  [extract_section]="bash $top/bench/tools/extract_section_bench.sh $build/tools/extract-section ${quick:+4 1}"
  [extract_report]="bash $top/bench/tools/extract_report_bench.sh $build/tools/extract-report ${quick:+8 1}"
  [resolve_samples]="bash $top/bench/tools/resolve_bench.sh samples $build/tools/resolveSamples ${quick:+10000 1}"
  [resolve_backtrace]="bash $top/bench/tools/resolve_bench.sh backtrace $build/tools/resolve-backtrace
    $build/bench/tools/make_backtrace_report ${quick:+10 1000 1}"
  [analyze]="bash $top/bench/analysis/analyze_bench.sh $build/tools/sampler-analyze
    $build/bench/analysis/analysis_bench $build/tools/extract-report $build/tools/resolveSamples
    ${quick:+200 1000 20 1}"
  [collector]="bash $top/bench/collector/collector_bench.sh $build/tools/sampler-collector
    $build/bench/collector/collector_load_client ${quick:+4 10 20000}"
  [sampler_run]="bash $top/bench/collector/sampler_run_bench.sh $build/tools/sampler-run
    $build/examples/sampler-example-wordfreq ${quick:+2 5}"
)
order=(text_formats runtime extract_section extract_report resolve_samples resolve_backtrace analyze collector sampler_run)
# Targets each needs built.
declare -A targets=(
  [text_formats]=text_formats_bench [runtime]=runtime_bench [extract_section]=extract-section
  [extract_report]=extract-report [resolve_samples]=resolveSamples
  [resolve_backtrace]="resolve-backtrace make_backtrace_report"
  [analyze]="sampler-analyze analysis_bench extract-report resolveSamples"
  [collector]="sampler-collector collector_load_client" [sampler_run]="sampler-run sampler-example-wordfreq"
)
# The script benchmarks run through bench_NAME targets; one added later without an entry above still runs.
known_targets=" bench_text_formats bench_runtime bench_extract_section bench_extract_report "
known_targets+="bench_resolve_samples bench_resolve_backtrace bench_analyze bench_collector bench_sampler_run "
extra=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \(bench_[A-Za-z0-9_]*\).*/\1/p' |
  while read -r t; do case $known_targets in *" $t "*) ;; *) echo "$t" ;; esac; done)

build_targets=()
for name in "${order[@]}"; do
  # A benchmark whose part is not there yet (its target is unknown) is left out, and said so.
  for t in ${targets[$name]}; do build_targets+=("$t"); done
done
cmake --build "$build" -j2 --target "${build_targets[@]}" >/dev/null

failed=()
for name in "${order[@]}"; do
  echo "==> $name: ${command[$name]}"
  if ! ${command[$name]} 2>&1 | tee "$logs/$name.log"; then failed+=("$name"); fi
done
for t in $extra; do
  echo "==> $t (no summary parser in scripts/bench.sh: its own output only)"
  cmake --build "$build" --target "$t" 2>&1 | tee "$logs/$t.log" || failed+=("$t")
done

# ---- summary: one row per figure, parsed from each benchmark's own lines (bash regular expressions)
rows=()
row() { rows+=("$(printf '%s\t' "$@")"); }
verdict() {  # VALUE <=|>= GOAL
  awk -v a="$1" -v op="$2" -v b="$3" \
    'BEGIN { ok = op == "<=" ? a + 0 <= b + 0 : a + 0 >= b + 0; print ok ? "met" : "missed" }'
}
n='([0-9.]+)'  # a figure
re_text_row="^  (.{38}) +$n +$n "
re_fast="^fast path, sampling off: +$n ns per iteration uninstrumented, $n instrumented:.*ratio $n"
# Each dense workload is labelled by its density: "dense workload (records, a site every ~40 instructions), ..."
re_dense="^dense workload \\(([^)]*)\\), sparsity ([0-9a-z]+) *: $n ns per iteration uninstrumented, "
re_dense+="$n instrumented: overhead ([-+][0-9.]+)%"
re_report="^report of ([0-9]+) sites:.* $n MB/s \\(goal >= ([0-9]+)\\)"
re_section="^([a-z]+) +[0-9]+ MB: (.*[^ ]) +$n s +extract-section +$n s +ratio $n \\(goal <= $n"
re_sed="^  sed -n.* $n s +[0-9]+ MiB/s"
re_extract="^  extract-report samples +$n s"
re_extract_ratio="ratio extract-report / sed: $n \\(goal <= $n"
re_sites="^resolveSamples benchmark: ([0-9]+) sites"
re_paste="^paste \\(pre-aligned\\) +$n s +resolveSamples +$n s +ratio $n \\(goal <= $n"
re_no_merge="resolveSamples --no-merge +$n s +ratio $n"
re_frames="^resolve-backtrace benchmark: ([0-9]+) frames"
re_backtrace="^cat +$n s +resolve-backtrace +$n s +([0-9.]+)e6 frames/s"
re_analyze_head="^sampler-analyze benchmark: ([0-9]+) reports of ([0-9]+) sites \\(([0-9]+) MB"
re_analyze_one="^  -j1: $n s wall, $n s CPU: ([0-9]+) MB/s per core"
re_analyze_all="^  -j([0-9]+): $n s, ([0-9]+) MB/s\$"
re_analyze_memory="^  peak memory: ([0-9]+) MB"
re_analyze_rank="^  rank: ([0-9]+) runs x ([0-9]+) predicates: $n s"
re_analyze_awk="^awk pipeline of the old demo on ([0-9]+) reports $n s +sampler-analyze $n s +ratio $n"
re_collector="^([A-Za-z][^:]*): ([0-9]+) reports in $n s: ([0-9]+) reports/s, p50 $n ms, p99 $n ms, collector CPU $n ms"
re_run="^sampler-run: ([0-9]+) runs of (.*): directly $n ms, through sampler-run $n ms: ([-+][0-9.]+) ms per run, ratio $n"
summarise() {
  local name=$1 line base="" tables=0 sed_s="" tool_s="" paste_s="" sites="" frames="" what="" m
  [ -f "$logs/$name.log" ] || return 0
  while IFS= read -r line; do
    m=()
    case $name in
      text_formats)
        # The first (full-size) table; each parser's baseline is the wc -l row above it.
        if [[ $line == inputs:* ]]; then tables=$((tables + 1)); continue; fi
        [ $tables -eq 1 ] && [[ $line =~ $re_text_row ]] || continue
        m=("${BASH_REMATCH[@]}")
        local label=${m[1]%"${m[1]##*[! ]}"}
        if [[ $label == wc\ -l* ]]; then base=${m[2]}; continue; fi
        row "text formats: $label" "${m[2]} s" "$base s (wc -l)" "${m[3]}" "<= 2" "$(verdict "${m[3]}" "<=" 2)" ;;
      runtime)
        if [[ $line =~ $re_fast ]]; then
          m=("${BASH_REMATCH[@]}")
          row "runtime: fast path, sampling off" "${m[2]} ns/iteration" "${m[1]} ns (uninstrumented)" "${m[3]}" \
            "reference" "-"
        elif [[ $line =~ $re_dense ]]; then
          # The ratio is the benchmark's own: the median of paired per-round ratios (robust on a busy machine).
          m=("${BASH_REMATCH[@]}")
          local r goal=""
          r=$(awk -v p="${m[5]}" 'BEGIN { printf "%.3f", 1 + p / 100 }')
          [ "${m[2]}" = 1000 ] && goal=1.05
          [ "${m[2]}" = 100 ] && goal=1.15
          row "runtime: dense workload (${m[1]}), sparsity ${m[2]}" "${m[4]} ns/iteration" \
            "${m[3]} ns (uninstrumented)" "$r" \
            "${goal:+<= }${goal:-reference}" "$(if [ -n "$goal" ]; then verdict "$r" "<=" "$goal"; else echo -; fi)"
        elif [[ $line =~ $re_report ]]; then
          m=("${BASH_REMATCH[@]}")
          row "runtime: report writing, ${m[1]} sites" "${m[2]} MB/s" "-" "-" ">= ${m[3]} MB/s" \
            "$(verdict "${m[2]}" ">=" "${m[3]}")"
        fi ;;
      extract_section)
        [[ $line =~ $re_section ]] || continue
        m=("${BASH_REMATCH[@]}")
        row "extract-section, ${m[1]}" "${m[4]} s" "${m[3]} s (${m[2]})" "${m[5]}" "<= ${m[6]}" \
          "$(verdict "${m[5]}" "<=" "${m[6]}")" ;;
      extract_report)
        if [[ $line =~ $re_sed ]]; then sed_s=${BASH_REMATCH[1]}
        elif [[ $line =~ $re_extract ]]; then tool_s=${BASH_REMATCH[1]}
        elif [[ $line =~ $re_extract_ratio ]]; then
          m=("${BASH_REMATCH[@]}")
          row "extract-report samples" "$tool_s s" "$sed_s s (sed -n)" "${m[1]}" "<= ${m[2]}" \
            "$(verdict "${m[1]}" "<=" "${m[2]}")"
        fi ;;
      resolve_samples)
        if [[ $line =~ $re_sites ]]; then sites=${BASH_REMATCH[1]}
        elif [[ $line =~ $re_paste ]]; then
          m=("${BASH_REMATCH[@]}")
          paste_s=${m[1]}
          row "resolveSamples, $sites sites in shuffled sections" "${m[2]} s" "$paste_s s (paste, pre-aligned)" \
            "${m[3]}" "<= ${m[4]}" "$(verdict "${m[3]}" "<=" "${m[4]}")"
        elif [[ $line =~ $re_no_merge ]]; then
          m=("${BASH_REMATCH[@]}")
          row "resolveSamples --no-merge" "${m[1]} s" "$paste_s s (paste, pre-aligned)" "${m[2]}" "-" "-"
        fi ;;
      resolve_backtrace)
        if [[ $line =~ $re_frames ]]; then frames=${BASH_REMATCH[1]}
        elif [[ $line =~ $re_backtrace ]]; then
          m=("${BASH_REMATCH[@]}")
          row "resolve-backtrace, $frames frames" "${m[3]}e6 frames/s (${m[2]} s)" "${m[1]} s (cat)" "-" \
            ">= 1e6 frames/s" "$(verdict "${m[3]}" ">=" 1)"
        fi ;;
      analyze)
        if [[ $line =~ $re_analyze_head ]]; then
          what="${BASH_REMATCH[1]} reports of ${BASH_REMATCH[2]} sites (${BASH_REMATCH[3]} MB)"
        elif [[ $line =~ $re_analyze_one ]]; then
          m=("${BASH_REMATCH[@]}")
          row "\`sampler-analyze -j1\`, $what" "${m[3]} MB/s per core (${m[2]} s CPU, ${m[1]} s wall)" "-" "-" \
            ">= 300 MB/s" "$(verdict "${m[3]}" ">=" 300)"
        elif [[ $line =~ $re_analyze_all ]]; then
          m=("${BASH_REMATCH[@]}")
          row "\`sampler-analyze -j${m[1]}\`, the same" "${m[3]} MB/s (${m[2]} s)" "-" "-" "-" "-"
        elif [[ $line =~ $re_analyze_memory ]]; then
          row "\`sampler-analyze\` peak memory, the same" "${BASH_REMATCH[1]} MB" "-" "-" "< 1024 MB" \
            "$(verdict "${BASH_REMATCH[1]}" "<=" 1023)"
        elif [[ $line =~ $re_analyze_rank ]]; then
          m=("${BASH_REMATCH[@]}")
          row "ranking with elimination, ${m[1]} runs x ${m[2]} predicates" "${m[3]} s" "-" "-" "< 1 s" \
            "$(verdict "${m[3]}" "<=" 0.999)"
        elif [[ $line =~ $re_analyze_awk ]]; then
          m=("${BASH_REMATCH[@]}")
          row "\`sampler-analyze\`, ${m[1]} reports" "${m[3]} s" "${m[2]} s (the old demo's awk pipeline)" "${m[4]}" \
            "<= 0.02" "$(verdict "${m[4]}" "<=" 0.02)"
        fi ;;
      collector)
        # The HTTP ceiling is the baseline of the same run; the goal is SQLite's rate.
        [[ $line =~ $re_collector ]] || continue
        m=("${BASH_REMATCH[@]}")
        if [[ ${m[1]} == HTTP* ]]; then base=${m[4]}; continue; fi
        local r goal="-" v="-"
        r=$(awk -v a="${m[4]}" -v b="$base" 'BEGIN { printf "%.2f", b > 0 ? a / b : 0 }')
        if [ "${m[1]}" = sqlite ]; then goal=">= 2000 reports/s"; v=$(verdict "${m[4]}" ">=" 2000); fi
        row "collector, ${m[1]}, ${m[2]} uploads of 20 KB" \
          "${m[4]} reports/s (p50 ${m[5]} ms, p99 ${m[6]} ms; ${m[7]} ms CPU per report)" \
          "$base reports/s (HTTP ceiling: POST /metrics)" "$r" "$goal" "$v" ;;
      sampler_run)
        [[ $line =~ $re_run ]] || continue
        m=("${BASH_REMATCH[@]}")
        row "\`sampler-run\` vs the program alone (${m[2]})" "${m[4]} ms per run (${m[5]} ms)" \
          "${m[3]} ms (the program alone)" "${m[6]}" "<= +5 ms" "$(verdict "${m[5]}" "<=" 5)" ;;
    esac
  done <"$logs/$name.log"
}
for name in "${order[@]}"; do summarise "$name"; done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "## Benchmarks ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r)." \
  "Build: RelWithDebInfo (gcc $(gcc -dumpfullversion))."
echo
echo "| benchmark | sampler | baseline (same run) | ratio | goal | |"
echo "|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS=$'\t' read -r a b c d e f <<<"$r"
  echo "| $a | $b | $c | $d | $e | $f |"
done
for name in "${order[@]}"; do
  grep -q "^[^ ]" "$logs/$name.log" 2>/dev/null || echo "| $name | (no output: see $logs/$name.log) | | | | |"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "bench.sh: failed: ${failed[*]}" >&2
  exit 1
fi
