#!/usr/bin/env bash
# The oracle of one run, run by sampler-run in the program's place:
#   judge.sh [--memory-limit MIB] EXPECTED PROGRAM ARGS...
# Runs PROGRAM ARGS in the current directory (standard input: ./stdin if there is one, else /dev/null; with a limit,
# under a memory watchdog that kills it with SIGKILL past MIB mebibytes resident, below) and compares its standard
# output, its exit status and the files it leaves in the directory with the fixed build's on the same input
# (EXPECTED.out, EXPECTED.status, EXPECTED.files). A program's output may be a file (gzip compresses f.Ab to
# f.Ab.Ab, or leaves it alone): a judge of stdout and status alone labels such a run a success.
# judge.sh --files: prints the list of the current directory's files that the comparison uses (EXPECTED.files).
# The run's outcome is then said the way sampler-run and the collector record any run's, by the exit status:
#   0             same output and status as the fixed build (a successful run)
#   1             another output or status (a failing run: sampler-analyze --database's default
#                 --failure-statuses 1-255 counts it failed)
#   PROGRAM's signal, when it died of one that the fixed build did not (re-raised: the outcome records a crash)
# The instrumented program inherits sampler-run's report descriptor (SAMPLER_REPORT_FD) and writes its report
# there, as it would run directly.
set -uo pipefail
# files: every file under the current directory, by name, with its contents' checksum; not the judge's own
# judge.out and judge.err, nor the standard input.
files() {
  find . -type f ! -path ./judge.out ! -path ./judge.err ! -path ./stdin -print0 | sort -z | xargs -0 -r sha256sum
}
if [ "${1:-}" = --files ]; then files; exit; fi
memory_limit_kib=
if [ "${1:-}" = --memory-limit ]; then memory_limit_kib=$(($2 * 1024)); shift 2; fi
expected=$1
shift

# watch_memory PID: sends PID SIGKILL once its resident memory (VmRSS) passes the limit, looking every 10 ms, as
# earlyoom and systemd-oomd do for a machine (docs/decisions.md, "A memory watchdog, not a cgroup limit").
watch_memory() {
  local key value _
  while [ -e "/proc/$1" ]; do
    { while read -r key value _; do
        if [ "$key" = VmRSS: ] && [ "$value" -gt "$memory_limit_kib" ]; then kill -KILL "$1"; return; fi
      done <"/proc/$1/status"; } 2>/dev/null
    sleep 0.01
  done
}
input=/dev/null
[ -f stdin ] && input=stdin
ulimit -c 0  # no core file for the crashes the benchmark provokes
# The program runs under its name, not its path (argv[0]): the buggy and the fixed build live at different paths,
# and a program that prints its argv[0] (gperf, in the comment it writes) would differ on every run. (The group's
# stderr is closed: bash reports a child killed by a signal there.)
program=$1
shift
if [ -z "$memory_limit_kib" ]; then
  { (exec -a "${program##*/}" "$program" "$@") <"$input" >judge.out 2>judge.err; } 2>/dev/null
  status=$?
else
  # The address space bounded too (four times the limit), so that a program the watchdog missed fails its
  # allocations (and aborts) rather than take the machine's memory.
  { (ulimit -v $((4 * memory_limit_kib)) && exec -a "${program##*/}" "$program" "$@") <"$input" >judge.out \
    2>judge.err & } 2>/dev/null
  pid=$!
  watch_memory "$pid" &
  watchdog=$!
  { wait "$pid"; } 2>/dev/null
  status=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
fi
if [ "$status" = "$(cat "$expected.status")" ] && cmp -s judge.out "$expected.out" &&
  [ "$(files)" = "$(cat "$expected.files")" ]; then
  exit 0
fi
if [ "$status" -gt 128 ] && signal=$(kill -l "$status" 2>/dev/null); then
  trap - "$signal"
  kill -s "$signal" $$
fi
exit 1
