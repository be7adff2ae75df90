#!/usr/bin/env bash
# Counters in a file mapping, without sampler-run (docs/instrumenting.md, "Counters in a file: %c"): a program built
# by sampler-cc runs with %c in SAMPLER_FILE, as a shell script, a test harness or systemd would run it, and
# `sampler-run --recover NAME` makes its report from what it left, whatever ended it.
#   killed_instants [RUNS] killed with SIGKILL at RUNS (default 20) random points of its loop: the report file is
#                          empty, the counters file beside it gives a report whose counters are no larger than the
#                          full run's at sparsity 1 and no smaller than the turn the program said it had reached
#                          (the loop's sites agreeing with one another: none torn), and sampler-analyze reads them
#   normal_exit            a normal exit writes the same report, byte for byte, as without %c, and removes the
#                          counters file; --recover prints that report. A crash (SIGTERM) keeps its counters file,
#                          and --recover prefers the whole crash report
#   second_process         a second process given the same name while the first runs gets no report and leaves the
#                          first's counters file alone; --recover of a live process warns and gives its counts so far
#   oom_killed             a program that allocates until the kernel's OOM killer kills it (in a memory cgroup the
#                          test makes, as shared_counters_test.sh oom_killed; skipped, exit 77, where none can be
#                          made): the counters file gives its samples
#   bad_input              counters files that are none (garbage, zeros, too short, truncated, a damaged record, a
#                          directory) and missing files: an error naming the file, exit status 1, never a crash
# usage: counters_file_test.sh CASE [RUNS]; environment: TOOLS, DRIVERS, SCRATCH, SOURCE_DIR
set -euo pipefail
case_name=$1
runs=${2:-20}
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/counters_check.sh"
unset SAMPLER_FILE SAMPLER_REPORT_FD SAMPLER_SHARED_FD SAMPLER_SPARSITY SAMPLER_SEED SAMPLER_INTERVAL SAMPLER_PLAN
unset SAMPLER_VERBOSE
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
R=$TOOLS/sampler-run
"$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
  "$SOURCE_DIR/tests/collector/programs/until_killed.c" -o until_killed

# start PATTERN ITERATIONS EVERY [wait]: starts the program with SAMPLER_FILE=PATTERN at sparsity 1 in the background
# ($program), its progress FIFO open on descriptor 8, its pid in $pid.
start() {
  rm -f progress && mkfifo progress
  exec 8<>progress
  SAMPLER_FILE=$1 SAMPLER_SPARSITY=1 ./until_killed "$2" "$3" progress ${4:+"$4"} 2>>run.err &
  program=$!
  read -r pid <&8
  [ "$pid" = "$program" ] || { fail "the program did not start: $(cat run.err)"; finish; }
}

# stopped SIGNAL: waits for the program, which must die of SIGNAL.
stopped() {
  local status=0
  wait "$program" || status=$?
  exec 8<&-
  [ "$status" = $((128 + $1)) ] || fail "the program ended with status $status, expected signal $1: $(cat run.err)"
}

# recover NAME: sampler-run --recover NAME into NAME.report; its status in $status, its stderr in recover.err.
recover() {
  status=0
  "$R" --recover "$1" >"$1.report" 2>recover.err || status=$?
}

case $case_name in
  killed_instants)
    # The full run: to the loop's end, then SIGTERM, on which the runtime writes its crash report.
    iterations=1000000 every=10000
    start 'full-%p%c' $iterations $every wait
    while read -r line <&8 && [[ $line =~ ^[0-9]+$ ]]; do :; done
    [ "$line" = done ] || fail "the full run said '$line'"
    kill -TERM "$pid"
    stopped 15
    recover "full-$pid"
    [ "$status" = 0 ] && [ ! -s recover.err ] || fail "--recover of the full run: status $status: $(cat recover.err)"
    cmp -s "full-$pid" "full-$pid.report" || fail "--recover did not print the whole crash report"
    resolved "full-$pid" >full.txt
    [ "$(counters is_third function-entries full.txt)" = $iterations ] || fail "the full run: $(cat full.txt)"
    mkdir reports
    for ((i = 0; i < runs; i++)); do
      target=$(((RANDOM * 32768 + RANDOM) % iterations))
      start 'killed-%p%c' $iterations $every wait
      while read -r line <&8 && [[ $line =~ ^[0-9]+$ ]] && [ "$line" -lt "$target" ]; do :; done
      kill -KILL "$pid"
      stopped 9
      [ "$line" != done ] || line=$((iterations - 1))
      [[ $line =~ ^[0-9]+$ ]] || { fail "run $i: the program said '$line'"; finish; }
      # The runtime had no chance to write: the report file is empty, the counters are in the file beside it.
      [ -f "killed-$pid" ] && [ ! -s "killed-$pid" ] || fail "run $i: the report file: $(ls -l "killed-$pid"*)"
      recover "killed-$pid"
      [ "$status" = 0 ] && [ ! -s recover.err ] || { fail "run $i: --recover: status $status: $(cat recover.err)"; continue; }
      mv "killed-$pid.report" reports/
      resolved "reports/killed-$pid.report" >run.txt || { fail "run $i: resolveSamples failed"; continue; }
      problem=$(at_most run.txt full.txt)
      [ -z "$problem" ] || fail "run $i: $problem"
      # Turn N said, N + 1 calls of is_third made; an entry may be counted before its branch.
      entries=$(counters is_third function-entries run.txt)
      [ "$entries" -gt "$line" ] || fail "run $i: is_third $entries entries, turn $line said"
      read -r false true <<<"$(counters is_third branches run.txt)"
      turns=$((false + true))
      { [ "$turns" = "$entries" ] || [ "$turns" = $((entries - 1)) ]; } &&
        [ "$true" = $(((turns + 2) / 3)) ] || fail "run $i: is_third $entries entries, branches $false $true"
    done
    # The analysis takes the recovered reports as it takes any report.
    analyzed=0
    "$TOOLS/sampler-analyze" --sites until_killed --format json reports >analysis.json 2>analysis.err || analyzed=$?
    [ "$analyzed" = 0 ] || fail "sampler-analyze: status $analyzed: $(cat analysis.err)"
    [ "$(sed -n 's/^{"runs": \([0-9]*\).*/\1/p' analysis.json)" = "$runs" ] || fail "analysis: $(head -c 300 analysis.json)"
    ;;
  normal_exit)
    SAMPLER_FILE=plain SAMPLER_SPARSITY=1 ./until_killed 1000 0 /dev/null
    SAMPLER_FILE='mapped%c' SAMPLER_SPARSITY=1 ./until_killed 1000 0 /dev/null
    cmp -s plain mapped || fail "the reports differ:$(echo; differences plain mapped)"
    [ ! -e mapped.counters ] || fail "the counters file is still there after a normal exit"
    resolved mapped >mapped.txt
    [ "$(counters is_third branches mapped.txt)" = "666	334" ] || fail "is_third: $(cat mapped.txt)"
    recover mapped
    [ "$status" = 0 ] && [ ! -s recover.err ] || fail "--recover: status $status: $(cat recover.err)"
    cmp -s mapped mapped.report || fail "--recover printed another report:$(echo; differences mapped mapped.report)"
    # A crash report: whole, and the counters file stays (the crash path leaves it), --recover takes the report.
    start 'crashed%c' 1000 0 wait
    read -r line <&8
    kill -TERM "$pid"
    stopped 15
    [ -s crashed.counters ] || fail "the crash removed the counters file"
    recover crashed
    [ "$status" = 0 ] && cmp -s crashed crashed.report || fail "--recover of the crash report: $(cat recover.err)"
    [ "$("$TOOLS/extract-report" main-backtrace <crashed.report | grep -c '^signal:15:')" = 1 ] ||
      fail "no main-backtrace in $(cat crashed.report)"
    ;;
  second_process)
    start 'same%c' 1000 0 wait
    read -r line <&8
    [ "$line" = done ] || fail "the first program said '$line'"
    first=$pid
    status=0
    SAMPLER_FILE='same%c' SAMPLER_SPARSITY=1 ./until_killed 10 0 /dev/null 2>second.err || status=$?
    [ "$status" = 0 ] || fail "the second program: status $status"
    [ "$(cat second.err)" = "sampler: SAMPLER_FILE: 'same' is being written by another process (%p in the name gives each process its own file); no report" ] ||
      fail "the second program said: $(cat second.err)"
    # The first one, alive: a snapshot, with a warning.
    recover same
    [ "$status" = 0 ] || fail "--recover of a live process: status $status: $(cat recover.err)"
    [ "$(cat recover.err)" = "sampler-run: 'same.counters': warning: in use by a running process: its counters so far" ] ||
      fail "--recover of a live process said: $(cat recover.err)"
    pid=$first
    kill -KILL "$pid"
    stopped 9
    recover same
    [ "$status" = 0 ] && [ ! -s recover.err ] || fail "--recover: status $status: $(cat recover.err)"
    resolved same.report >same.txt
    [ "$(counters is_third branches same.txt)" = "666	334" ] || fail "is_third: $(cat same.txt)"
    ;;
  oom_killed)
    "$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
      "$SOURCE_DIR/tests/collector/programs/allocate.c" -o allocate
    memory_cgroup $((64 << 20))
    status=0
    "${wrap[@]}" env SAMPLER_FILE='oom%c' SAMPLER_SPARSITY=1 ./allocate "$procs" >allocate.out 2>>run.err || status=$?
    [ "$status" = 137 ] || fail "the program ended with status $status, expected death by signal 9: $(cat run.err)"
    [ "$(cat allocate.out)" = "allocating 334" ] || fail "the program said: $(cat allocate.out)"
    if [ -n "$oom_kills" ]; then
      kills=$(sed -n 's/^oom_kill \([0-9]*\)$/\1/p' "$oom_kills")
      [ "${kills:-0}" -ge 1 ] || fail "no OOM kill in $oom_kills: $(cat "$oom_kills")"
    fi
    recover oom
    [ "$status" = 0 ] && [ ! -s recover.err ] || fail "--recover: status $status: $(cat recover.err)"
    "$TOOLS/extract-report" samples <oom.report | "$TOOLS/resolveSamples" allocate | cut -f2- >killed.txt ||
      fail "resolveSamples: $(cat killed.txt)"
    [ "$(counters is_third function-entries killed.txt)" = 1000 ] || fail "is_third entries: $(cat killed.txt)"
    [ "$(counters is_third branches killed.txt)" = "666	334" ] || fail "is_third branches: $(cat killed.txt)"
    ;;
  bad_input)
    # A real counters file to damage: a run killed after its loop.
    start 'good%c' 1000 0 wait
    read -r line <&8
    kill -KILL "$pid"
    stopped 9
    recover good
    [ "$status" = 0 ] || fail "--recover good: status $status: $(cat recover.err)"
    # expect_error NAME MESSAGE: --recover NAME fails with status 1 and exactly MESSAGE on stderr.
    expect_error() {
      recover "$1"
      [ "$status" = 1 ] || fail "--recover $1: status $status, expected 1: $(cat recover.err)"
      [ "$(cat recover.err)" = "$2" ] || fail "--recover $1 said: $(cat recover.err)"
    }
    : >garbage
    head -c 65536 /dev/urandom >garbage.counters
    expect_error garbage "sampler-run: 'garbage.counters': error: not a counters file, or one no process has counted in (no header)"
    truncate -s 8192 zeros.counters
    expect_error zeros "sampler-run: 'zeros.counters': error: not a counters file, or one no process has counted in (no header)"
    head -c 100 good.counters >short.counters
    expect_error short "sampler-run: 'short.counters': error: not a counters file (100 bytes; a counters file has one page to 1 GiB): truncated?"
    # Cut inside its records: a file of one page whose header says 8 KiB of records are published (the header's
    # end of records, a little-endian word at offset 32, as shared_counters.h lays it out).
    head -c 4096 good.counters >cut.counters
    printf '\x00\x20\x00\x00\x00\x00\x00\x00' | dd of=cut.counters bs=1 seek=32 conv=notrunc status=none
    expect_error cut "sampler-run: 'cut.counters': error: the mapping's header is malformed"
    # The first unit record's size made odd: the walk stops there, with no unit to report.
    cp good.counters damaged.counters
    printf '\x07' | dd of=damaged.counters bs=1 seek=40 conv=notrunc status=none
    expect_error damaged "sampler-run: 'damaged.counters': error: a unit record is malformed"
    [ ! -s damaged.report ] || fail "damaged: $(cat damaged.report)"
    mkdir directory.counters
    expect_error directory "sampler-run: 'directory.counters': error: not a counters file (not a regular file)"
    expect_error missing "sampler-run: 'missing': error: no such report, and no counters file beside it"
    printf '<report id="samples">\n' >cut_report
    expect_error cut_report "sampler-run: 'cut_report': error: holds no whole report, and there is no counters file beside it (SAMPLER_FILE without %c?)"
    # A name with a control character is escaped, never written raw.
    name=$'bad\x1bname'
    head -c 100 /dev/zero >"$name.counters"
    recover "$name"
    [ "$status" = 1 ] || fail "--recover of an escaped name: status $status"
    [[ $(cat recover.err) != *$'\x1b'* ]] || fail "a control character reached stderr raw"
    ;;
  *)
    fail "unknown case"
    ;;
esac
finish
