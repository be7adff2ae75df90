#!/bin/sh
# The runtime's environment variables as a user sees them (docs/instrumenting.md section 2): every invalid value gets
# exactly one line on stderr naming the variable, the program behaves as if uninstrumented (same stdout, exit status 0),
# the variables are gone from the program's environment, and SAMPLER_VERBOSE explains each decision.
# usage: env_test.sh EXAMPLE
set -u
EXAMPLE=$1
failures=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check NAME EXPECTED_STDERR ENV... : runs "EXAMPLE run 50" under a clean environment plus ENV.
check() {
  name=$1 expected=$2
  shift 2
  env -i PATH="$PATH" "$@" "$EXAMPLE" run 50 >"$work/out" 2>"$work/err" </dev/null
  status=$?
  printf '%s' "$expected" >"$work/expected"
  [ -n "$expected" ] && echo >>"$work/expected"
  if [ "$status" -ne 0 ]; then
    echo "FAIL: $name: exit status $status"; failures=$((failures + 1))
  elif [ -s "$work/out" ]; then
    echo "FAIL: $name: unexpected stdout"; failures=$((failures + 1))
  elif ! cmp -s "$work/err" "$work/expected"; then
    echo "FAIL: $name: stderr differs"; diff "$work/expected" "$work/err"; failures=$((failures + 1))
  else
    echo "ok: $name"
  fi
}

# the coverage section's first line: the loop body's count
loop_count() { sed -n '/scheme="coverage"/{n;p;}' "$1"; }

report=$work/report.txt
check "sparsity not a number" \
  "sampler: SAMPLER_SPARSITY: invalid value 'often' (expected a number >= 1); sampling is off" \
  SAMPLER_SPARSITY=often SAMPLER_FILE="$report"
[ "$(loop_count "$report")" = 0 ] || { echo "FAIL: sampling must be off"; failures=$((failures + 1)); }
check "sparsity below 1" \
  "sampler: SAMPLER_SPARSITY: invalid value '0.5' (expected a number >= 1); sampling is off" \
  SAMPLER_SPARSITY=0.5 SAMPLER_FILE="$report"
check "sparsity empty" \
  "sampler: SAMPLER_SPARSITY: invalid value '' (expected a number >= 1); sampling is off" \
  SAMPLER_SPARSITY= SAMPLER_FILE="$report"
check "sparsity with blanks" \
  "sampler: SAMPLER_SPARSITY: invalid value ' 10' (expected a number >= 1); sampling is off" \
  "SAMPLER_SPARSITY= 10" SAMPLER_FILE="$report"
check "seed not an integer" \
  "sampler: SAMPLER_SEED: invalid value '12abc' (expected an integer (decimal, 0x hexadecimal or 0 octal) within 64 bits); sampling is off" \
  SAMPLER_SPARSITY=1 SAMPLER_SEED=12abc SAMPLER_FILE="$report"
[ "$(loop_count "$report")" = 0 ] || { echo "FAIL: sampling must be off after a bad seed"; failures=$((failures + 1)); }
check "seed beyond 64 bits" \
  "sampler: SAMPLER_SEED: invalid value '0x10000000000000000' (expected an integer (decimal, 0x hexadecimal or 0 octal) within 64 bits); sampling is off" \
  SAMPLER_SPARSITY=1 SAMPLER_SEED=0x10000000000000000 SAMPLER_FILE="$report"
long_seed="$(printf '%0300d' 0)1"
check "seed too long to keep" \
  "sampler: SAMPLER_SEED: invalid value '0000000000000000000000000000000000000000...' (too long); sampling is off" \
  SAMPLER_SPARSITY=1 SAMPLER_SEED="$long_seed" SAMPLER_FILE="$report"
[ "$(loop_count "$report")" = 0 ] || { echo "FAIL: sampling must be off after a long seed"; failures=$((failures + 1)); }
check "a newline in a value stays on one line" \
  "sampler: SAMPLER_SPARSITY: invalid value '1?2' (expected a number >= 1); sampling is off" \
  "SAMPLER_SPARSITY=1
2" SAMPLER_FILE="$report"
check "valid values are silent" "" SAMPLER_SPARSITY=1 SAMPLER_SEED=0x2a SAMPLER_FILE="$report"
[ "$(loop_count "$report")" = 50 ] || { echo "FAIL: sampling at sparsity 1 must count 50"; failures=$((failures + 1)); }

rm -f "$report"
check "file name empty" \
  "sampler: SAMPLER_FILE: invalid value '' (the file name is empty); no report" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE=
check "file name with an unknown % sequence" \
  "sampler: SAMPLER_FILE: invalid value '$work/r.%d' (only %p (the process id), %h (the host name), %t (seconds since the epoch), %c (counters in a file mapping) and %% may follow a % sign); no report" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$work/r.%d"
check "file in a missing directory" \
  "sampler: SAMPLER_FILE: cannot create '$work/missing/r.txt': No such file or directory; no report" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$work/missing/r.txt"
check "descriptor not a number" \
  "sampler: SAMPLER_REPORT_FD: invalid value 'stdout' (expected a descriptor number >= 0); no report" \
  SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=stdout
check "descriptor negative" \
  "sampler: SAMPLER_REPORT_FD: invalid value '-1' (expected a descriptor number >= 0); no report" \
  SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=-1
check "descriptor not open" \
  "sampler: SAMPLER_REPORT_FD: descriptor 9 is not open for writing; no report" \
  SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=9
check "descriptor open read-only (stdin from /dev/null)" \
  "sampler: SAMPLER_REPORT_FD: descriptor 0 is not open for writing; no report" \
  SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=0
check "invalid descriptor does not fall back to the file" \
  "sampler: SAMPLER_REPORT_FD: descriptor 9 is not open for writing; no report" \
  SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=9 SAMPLER_FILE="$report"
[ -e "$report" ] && { echo "FAIL: no report may be written"; failures=$((failures + 1)); }
check "interval not a whole number of seconds" \
  "sampler: SAMPLER_INTERVAL: invalid value '0.5' (expected a whole number of seconds from 1 to 1000000000); no interim reports" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$report" SAMPLER_INTERVAL=0.5
[ "$(loop_count "$report")" = 50 ] || { echo "FAIL: the report after a bad SAMPLER_INTERVAL"; failures=$((failures + 1)); }
[ -e "$work/r.%d" ] && { echo "FAIL: no file may be created for an invalid name"; failures=$((failures + 1)); }

# The variables are removed from the environment once read (exec'd children must not write the same report).
env -i PATH="$PATH" SAMPLER_SPARSITY=1 SAMPLER_SEED=1 SAMPLER_FILE="$work/e.txt" SAMPLER_VERBOSE=1 \
  SAMPLER_REPORT_FD=1 SAMPLER_SHARED_FD=1 SAMPLER_INTERVAL=1 "$EXAMPLE" env - 2>/dev/null >"$work/env.out"
if grep -q '^SAMPLER_' "$work/env.out"; then
  echo "FAIL: variables left in the environment: $(grep '^SAMPLER_' "$work/env.out")"; failures=$((failures + 1))
else
  echo "ok: variables removed from the environment"
fi

# SAMPLER_VERBOSE explains each decision.
env -i PATH="$PATH" SAMPLER_VERBOSE=1 SAMPLER_SPARSITY=10 SAMPLER_SEED=5 SAMPLER_FILE="$work/v.txt" \
  "$EXAMPLE" run 5 2>"$work/verbose.err" >/dev/null
cat >"$work/verbose.expected" <<END
sampler: sampling one opportunity in 10 on average (SAMPLER_SPARSITY), seeded from SAMPLER_SEED=5
sampler: writing the report to '$work/v.txt' (SAMPLER_FILE)
sampler: unit 5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9 registered
sampler: unit 5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9 unregistered: its samples are in the report
sampler: report written
END
if cmp -s "$work/verbose.err" "$work/verbose.expected"; then
  echo "ok: SAMPLER_VERBOSE"
else
  echo "FAIL: SAMPLER_VERBOSE output differs"; diff "$work/verbose.expected" "$work/verbose.err"
  failures=$((failures + 1))
fi
env -i PATH="$PATH" SAMPLER_VERBOSE= "$EXAMPLE" run 5 2>"$work/verbose.err" >/dev/null
cat >"$work/verbose.expected" <<END
sampler: SAMPLER_SPARSITY is not set: sites never sample
sampler: neither SAMPLER_FILE nor SAMPLER_REPORT_FD is set: no report
sampler: unit 5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9 registered
END
if cmp -s "$work/verbose.err" "$work/verbose.expected"; then
  echo "ok: SAMPLER_VERBOSE without sampling or report"
else
  echo "FAIL: SAMPLER_VERBOSE (nothing set) output differs"; diff "$work/verbose.expected" "$work/verbose.err"
  failures=$((failures + 1))
fi

# SAMPLER_SHARED_FD (docs/instrumenting.md, "Counters that outlive the process"): a bad descriptor gets one line and
# the program runs as without it, its report as usual; a good one is claimed (the header's magic) by one process only.
shared_check() {  # shared_check NAME EXPECTED_STDERR: the example with descriptor 9 as it is now
  check "$1" "$2" SAMPLER_SPARSITY=1 SAMPLER_FILE="$report" SAMPLER_SHARED_FD=9
  [ "$(loop_count "$report")" = 50 ] || { echo "FAIL: $1: the report's loop count"; failures=$((failures + 1)); }
}
shared_check "shared descriptor not open" \
  "sampler: SAMPLER_SHARED_FD: invalid value '9' (the descriptor is not open); no shared counters"
: >"$work/shared"
exec 9<"$work/shared"
shared_check "shared descriptor read-only" \
  "sampler: SAMPLER_SHARED_FD: invalid value '9' (expected a regular file (a memfd) open for reading and writing); no shared counters"
exec 9<&-
exec 9<>"$work/shared"
shared_check "shared file empty" \
  "sampler: SAMPLER_SHARED_FD: invalid value '9' (expected a file of one page to 1 GiB); no shared counters"
exec 9<&-
check "shared descriptor not a number" \
  "sampler: SAMPLER_SHARED_FD: invalid value 'x' (expected a descriptor number >= 0); no shared counters" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$report" SAMPLER_SHARED_FD=x
dd if=/dev/zero of="$work/shared" bs=4096 count=16 2>/dev/null
exec 9<>"$work/shared"
shared_check "shared file claimed" ""
[ "$(head -c 8 "$work/shared")" = SMPLSHM1 ] || { echo "FAIL: the shared file is not claimed"; failures=$((failures + 1)); }
shared_check "shared file claimed by another process" \
  "sampler: SAMPLER_SHARED_FD: the mapping is already used by another process; no shared counters"
exec 9<&-

# %c in SAMPLER_FILE (docs/instrumenting.md, "Counters in a file: %c"): the counters file beside the report is
# claimed while the program runs and removed at its normal exit, the report as without %c; SAMPLER_SHARED_FD wins
# over it; a report that is no regular file gets no counters file, with one line.
rm -f "$report"
check "counters file" "" SAMPLER_SPARSITY=1 SAMPLER_FILE="$report%c"
[ "$(loop_count "$report")" = 50 ] && [ ! -e "$report.counters" ] ||
  { echo "FAIL: counters file: the report or the removal"; failures=$((failures + 1)); }
dd if=/dev/zero of="$work/shared" bs=4096 count=16 2>/dev/null
exec 9<>"$work/shared"
check "counters file: SAMPLER_SHARED_FD wins" "" SAMPLER_SPARSITY=1 SAMPLER_FILE="$report%c" SAMPLER_SHARED_FD=9
[ "$(head -c 8 "$work/shared")" = SMPLSHM1 ] && [ ! -e "$report.counters" ] ||
  { echo "FAIL: SAMPLER_SHARED_FD must win over %c"; failures=$((failures + 1)); }
exec 9<&-
check "counters file beside a device" \
  "sampler: SAMPLER_FILE: %c needs a regular report file ('/dev/null' is not one); no shared counters" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE=/dev/null%c
ln -s "$work/elsewhere" "$report.counters"
check "counters file a symbolic link" \
  "sampler: SAMPLER_FILE: cannot create '$report.counters': it is a symbolic link; no shared counters" \
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$report%c"
[ ! -e "$work/elsewhere" ] && [ "$(loop_count "$report")" = 50 ] ||
  { echo "FAIL: counters file a symbolic link: followed, or no report"; failures=$((failures + 1)); }
rm -f "$report.counters"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
