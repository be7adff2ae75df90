#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds and runs every test with ctest.
# Usage: scripts/test.sh [--all] [BUILD_DIR]   (default BUILD_DIR: build)
#
# By default (a developer's run) only the ordinary build is tested. Under CI (CI=true) or with --all, three more
# stages follow (docs/reliability.md):
#   asan   BUILD_DIR-asan: everything with AddressSanitizer + UndefinedBehaviorSanitizer, the whole suite but the
#          'slow' label (the rpmbuild of the suite's own spec, which compiles the project once more)
#   tsan   BUILD_DIR-tsan: ThreadSanitizer, the runtime's tests (its threads, counters, crash path) and the
#          crash-path torture suite
#   fuzz   BUILD_DIR-fuzz: scripts/fuzz.sh 30, every fuzz target for 30 seconds
# One more stage runs only when SAMPLER_REAL_PROGRAMS=1:
#   real   scripts/real-programs.sh on BUILD_DIR: real Debian programs built with sampler-cc, their own test suites
#          run instrumented (the ctest label real-programs, when configured with -DSAMPLER_REAL_PROGRAMS=ON); then
#          scripts/real-symbols.sh: gzip built -O2 -g, our GSYM against llvm-symbolizer and llvm-gsymutil
# and one only when SAMPLER_ISOLATION=1:
#   isolation  bench/isolation/isolate.sh on BUILD_DIR: every subject of the isolation benchmark, its table printed
#          (docs/isolation.md); the plain stage runs its small subject (the ctest isolation_bc)
# Each stage first checks that what it uses is there and comes from a package scripts/setup.sh installs
# (scripts/setup.sh --check STAGE). Every stage runs even if an earlier one failed; the time of each is printed at
# the end; the exit status is 1 if any failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
all=no
[ "${CI:-}" = true ] && all=yes
if [ "${1:-}" = --all ]; then
  all=yes
  shift
fi
build=${1:-$top/build}
jobs=$(nproc)
werror=OFF
[ "${CI:-}" = true ] && werror=ON

"$top/scripts/setup.sh"

summary=()
failed=0
# Every ctest run's output is also kept here, so that the last line can total the tests of every stage.
ctest_log=$(mktemp)
trap 'rm -f "$ctest_log"' EXIT
run_ctest() { ctest "$@" 2>&1 | tee -a "$ctest_log"; }
# stage NAME COMMAND...: runs the command, records its time and outcome.
stage() {
  local name=$1 start status=0
  shift
  echo "==> test.sh: stage $name" >&2
  start=$(date +%s)
  # First what the stage needs: a missing package is named here, not found later as a link error.
  "$top/scripts/setup.sh" --check "$name" || status=$?
  [ $status -eq 0 ] && { ( set -e; "$@" ) || status=$?; }
  local elapsed=$(($(date +%s) - start))
  if [ $status -eq 0 ]; then
    summary+=("$(printf '%-8s %5ss  ok' "$name" "$elapsed")")
  else
    summary+=("$(printf '%-8s %5ss  FAILED (status %s)' "$name" "$elapsed" "$status")")
    failed=1
  fi
}

plain() {
  cmake -S "$top" -B "$build" -DSAMPLER_WERROR=$werror
  cmake --build "$build" -j"$jobs"
  (cd "$build" && run_ctest --output-on-failure -j"$jobs")
}

asan() {
  cmake -S "$top" -B "$build-asan" -DSAMPLER_WERROR=$werror -DSAMPLER_SANITIZE=ON -DSAMPLER_BUILD_BENCH=OFF
  cmake --build "$build-asan" -j"$jobs"
  # LeakSanitizer (part of AddressSanitizer) needs ptrace; where a container forbids it, every instrumented program
  # would fail at exit: then leaks go unchecked, and the rest of AddressSanitizer still runs.
  local probe
  if ! probe=$("$build-asan/tests/sections/diagnostics_test" --gtest_list_tests 2>&1) &&
    grep -q "LeakSanitizer has encountered a fatal error" <<<"$probe"; then
    echo "test.sh: LeakSanitizer cannot run here (no ptrace): ASAN_OPTIONS=detect_leaks=0" >&2
    export ASAN_OPTIONS=detect_leaks=0
  fi
  (cd "$build-asan" && run_ctest --output-on-failure -j"$jobs" -LE slow)
}

# The runtime's tests exercise its threads (every thread's countdown and generator, exact counts across threads,
# fork, a crash on a second thread); the torture suite adds 64 threads started and ended while sampling; the
# console's page workers hand pages between threads (PageFlights).
tsan_tests='^(runtime_unit\.|runtime_behaviour\.|torture_|PageFlights\.)'
tsan() {
  cmake -S "$top" -B "$build-tsan" -DSAMPLER_WERROR=$werror -DSAMPLER_TSAN=ON -DSAMPLER_BUILD_BENCH=OFF
  cmake --build "$build-tsan" -j"$jobs" --target runtime_unit_test runtime_behaviour_test torture_test \
    collector_page_workers_test
  (cd "$build-tsan" && run_ctest --output-on-failure -j"$jobs" -R "$tsan_tests")
}

fuzz() {
  SAMPLER_FUZZ_BUILD="$build-fuzz" SAMPLER_FUZZ_JOBS=$jobs "$top/scripts/fuzz.sh" 30
}

# Needs the plain stage's build (sampler-cc and the tools).
real() {
  "$top/scripts/real-programs.sh" --build "$build" && "$top/scripts/real-symbols.sh" --build "$build"
}

# Every subject of the isolation benchmark at its defaults (docs/isolation.md): hours, so only when asked.
isolation() {
  "$top/bench/isolation/isolate.sh" --build "$build"
}

stage plain plain
if [ $all = yes ]; then
  stage asan asan
  stage tsan tsan
  stage fuzz fuzz
fi
# Real programs' own test suites, instrumented: hours at sparsity 1, so only when asked (docs/reliability.md).
if [ "${SAMPLER_REAL_PROGRAMS:-}" = 1 ]; then stage real real; fi
if [ "${SAMPLER_ISOLATION:-}" = 1 ]; then stage isolation isolation; fi

echo "==> test.sh: stages" >&2
printf '%s\n' "${summary[@]}" >&2
# "N% tests passed, F tests failed out of T" per ctest run; a stage that failed before its tests counts as failed.
read -r passed failed_tests < <(awk '/tests passed, .* tests failed out of/ { f += $4; t += $NF }
                                      END { print t - f, f }' "$ctest_log")
[ "$failed" -ne 0 ] && [ "$failed_tests" -eq 0 ] && failed_tests=1
echo "tests: $passed passed, $failed_tests failed"
exit $failed
