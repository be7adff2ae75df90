#!/usr/bin/env bash
# The oracle of one run, run by sampler-run in the program's place: judge.sh EXPECTED PROGRAM ARGS...
# Runs PROGRAM ARGS in the current directory (standard input: ./stdin if there is one, else /dev/null) and compares
# its standard output, its exit status and the files it leaves in the directory with the fixed build's on the same
# input (EXPECTED.out, EXPECTED.status, EXPECTED.files). A program's output may be a file (gzip compresses f.Ab
# to f.Ab.Ab, or leaves it alone): a judge of stdout and status alone labels such a run a success.
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
expected=$1
shift
input=/dev/null
[ -f stdin ] && input=stdin
ulimit -c 0  # no core file for the crashes the benchmark provokes
# The program runs under its name, not its path (argv[0]): the buggy and the fixed build live at different paths,
# and a program that prints its argv[0] (gperf, in the comment it writes) would differ on every run. (The group's
# stderr is closed: bash reports a child killed by a signal there.)
program=$1
shift
{ (exec -a "${program##*/}" "$program" "$@") <"$input" >judge.out 2>judge.err; } 2>/dev/null
status=$?
if [ "$status" = "$(cat "$expected.status")" ] && cmp -s judge.out "$expected.out" &&
  [ "$(files)" = "$(cat "$expected.files")" ]; then
  exit 0
fi
if [ "$status" -gt 128 ] && signal=$(kill -l "$status" 2>/dev/null); then
  trap - "$signal"
  kill -s "$signal" $$
fi
exit 1
