#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ with libFuzzer (clang-19, -fsanitize=fuzzer,address,undefined) for SECONDS each.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]      (default: 30 seconds, every target)
# Environment: SAMPLER_FUZZ_BUILD  build directory (default: build-fuzz at the top of the checkout)
#              SAMPLER_FUZZ_JOBS   targets run at the same time (default 1; each uses one core)
# Each target starts from a fresh copy of its seed corpus and past findings (fuzz/corpus/NAME, fuzz/regressions/NAME)
# and prints: executions, time, coverage (libFuzzer's cov: edges and ft: features at the end), findings.
# Any finding (crash, sanitizer report, failed invariant, leak, timeout, out-of-memory) makes the exit status 1; its
# input is in the work directory named in the output (add it to fuzz/regressions/NAME once fixed).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-30}
[ $# -gt 0 ] && shift
case $seconds in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2 ;; esac
build=${SAMPLER_FUZZ_BUILD:-$top/build-fuzz}
jobs=${SAMPLER_FUZZ_JOBS:-1}

# Longest input libFuzzer makes per target: enough for several sections/stacks/elements, small enough to stay fast.
declare -A max_len=(
  [site_info]=4096 [report]=4096 [cbf]=512 [markup]=2048 [base64]=1024 [elf]=8192 [backtrace]=4096 [resolve]=4096
  [gsym]=8192 [collector_request]=8192 [symbfile]=8192 [driver_args]=1024
)
targets=("$@")
[ ${#targets[@]} -eq 0 ] &&
  targets=(site_info report cbf markup base64 elf backtrace resolve gsym collector_request symbfile driver_args)
for t in "${targets[@]}"; do
  [ -n "${max_len[$t]:-}" ] || { echo "fuzz.sh: unknown target '$t' (known: ${!max_len[*]})" >&2; exit 2; }
done

command -v clang++-19 >/dev/null || { echo "fuzz.sh: clang++-19 not found (scripts/setup.sh installs it)" >&2; exit 1; }
CC=clang-19 CXX=clang++-19 cmake -S "$top" -B "$build" -DSAMPLER_FUZZ=ON -DSAMPLER_BUILD_TESTS=OFF \
  -DSAMPLER_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_targets -j2 >/dev/null

work=$build/fuzz-work
# LeakSanitizer needs ptrace; where a container forbids it, every run would end in its fatal error: then leaks go
# unchecked (the rest of AddressSanitizer and UBSan still run).
mkdir -p "$work/probe"
if ! probe=$("$build/fuzz/${targets[0]}_fuzz" -runs=0 "$work/probe" "$top/fuzz/corpus/${targets[0]}" 2>&1) &&
  grep -q "LeakSanitizer has encountered a fatal error" <<<"$probe"; then
  echo "fuzz.sh: LeakSanitizer cannot run here (no ptrace): leaks are not checked" >&2
  export ASAN_OPTIONS=detect_leaks=0
fi
run_target() {
  local t=$1 dir=$work/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$top/fuzz/corpus/$t/"* "$dir/corpus/"
  if [ -d "$top/fuzz/regressions/$t" ]; then cp "$top/fuzz/regressions/$t/"* "$dir/corpus/" 2>/dev/null || true; fi
  local start end rc=0
  start=$(date +%s)
  # -timeout: one input taking this long is a hang (a finding); -rss_limit_mb: the parsers' own size limits
  # must keep memory far below this.
  "$build/fuzz/${t}_fuzz" -max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
  end=$(date +%s)
  echo "$rc $((end - start))" >"$dir/result"
}

running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

status=0
problems=""
printf '%-10s %12s %8s %8s %8s %9s\n' target executions time cov ft findings
for t in "${targets[@]}"; do
  dir=$work/$t
  read -r rc elapsed <"$dir/result"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  findings=$(find "$dir/artifacts" -type f | wc -l)
  if [ "$rc" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # e.g. a crash before an artifact was written
  printf '%-10s %12s %7ss %8s %8s %9s\n' "$t" "${execs:-?}" "$elapsed" "${cov:-?}" "${ft:-?}" "$findings"
  if [ "$findings" -ne 0 ]; then
    status=1
    problems+="fuzz.sh: $t: finding(s) in $dir/artifacts (log: $dir/log):"$'\n'
    problems+=$(grep -E 'ERROR|SUMMARY|fuzz invariant|runtime error|Test unit written' "$dir/log" | head -20)$'\n'
  fi
done
[ -z "$problems" ] || printf '%s' "$problems" >&2
exit $status
