#!/usr/bin/env bash
# What sampler-run adds to a program's run (the goal: "sampler-run adds <= 5 ms to a program's run, measured
# against running it directly"). The demo's instrumented wordfreq on a small input, run directly (no sampling, no
# report: the program as its users run it; the goal's baseline), directly with sampling and a report file
# (SAMPLER_SPARSITY=100 SAMPLER_FILE=...: the same work without the launcher), and through `sampler-run --app wordfreq --` (the report read back from its descriptor, outcome added, the copy
# for --show-last written; no upload: that one is bounded by --upload-timeout-ms and measured by the collector
# benchmark), in alternating rounds so that both see the same machine load. Per round: the mean wall time of each; printed: the
# medians over the rounds, the median of the per-round differences, and CPU time (user + system of the children).
# usage: sampler_run_bench.sh SAMPLER-RUN WORDFREQ [ROUNDS [RUNS-PER-ROUND]]
set -euo pipefail
run=$(realpath "$1") wordfreq=$(realpath "$2") rounds=${3:-20} per_round=${4:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# sampler-run's state (the --show-last copy) and configuration go here, not in the user's home.
export HOME=$work XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED SAMPLER_FILE SAMPLER_REPORT_FD
"$wordfreq" --generate 1 | head -c 4000 >small.txt
"$wordfreq" small.txt >/dev/null  # warm the page cache

# children_cpu_ms: user + system time of the finished children so far (bash's `times`, in this shell), in $cpu.
children_cpu_ms() {
  times >times.txt
  cpu=$(tail -1 times.txt | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }')
}
# batch COMMAND...: runs it per_round times; prints the mean wall ms per run.
batch() {
  local start end i
  start=$(date +%s%N)
  for ((i = 0; i < per_round; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  awk -v t=$((end - start)) -v n="$per_round" 'BEGIN { printf "%.3f", t / n / 1e6 }'
}
direct=() with_file=() through=() cpu_direct=0 cpu_through=0
for ((r = 0; r < rounds; r++)); do
  children_cpu_ms; c0=$cpu
  direct+=("$(batch "$wordfreq" small.txt)")
  children_cpu_ms; c_direct=$cpu
  with_file+=("$(SAMPLER_SPARSITY=100 SAMPLER_FILE=$work/direct.report batch "$wordfreq" small.txt)")
  children_cpu_ms; c1=$cpu
  through+=("$(batch "$run" --app wordfreq -- "$wordfreq" small.txt)")
  children_cpu_ms; c2=$cpu
  cpu_direct=$((cpu_direct + c_direct - c0)) cpu_through=$((cpu_through + c2 - c1))
done
"$run" --show-last >/dev/null 2>&1 || { echo "sampler-run kept no report: the runs did not go through it" >&2; exit 1; }
grep -q '^<report id="samples">' direct.report || { echo "the direct runs wrote no report" >&2; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
differences=()
for ((r = 0; r < rounds; r++)); do differences+=("$(awk -v a="${through[r]}" -v b="${direct[r]}" 'BEGIN { print a - b }')"); done
d=$(median "${direct[@]}") f=$(median "${with_file[@]}") t=$(median "${through[@]}")
diff=$(median "${differences[@]}")
runs=$((rounds * per_round))
awk -v runs="$runs" -v d="$d" -v f="$f" -v t="$t" -v diff="$diff" -v cd="$cpu_direct" -v ct="$cpu_through" 'BEGIN {
  printf "sampler-run: %d runs of wordfreq (4 KB input): directly %.2f ms, through sampler-run %.2f ms: %+.2f ms per run, ratio %.2f\n",
    runs, d, t, diff, t / d
  printf "  directly with SAMPLER_SPARSITY=100 SAMPLER_FILE (the same report, written to a file): %.2f ms\n", f
  printf "  CPU (user + system): directly %.2f ms, through sampler-run %.2f ms per run: %+.2f ms\n",
    cd / runs, ct / runs, (ct - cd) / runs
  printf "  goal: <= +5 ms per run\n"
}'
