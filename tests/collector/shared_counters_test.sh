#!/usr/bin/env bash
# The shared counters end to end (docs/collection.md, "Runs killed outright"): a program built by sampler-cc runs
# under sampler-run to a real collector on 127.0.0.1 and is killed with SIGKILL, which leaves its report unwritten;
# the stored run still has its samples, read from the shared mapping, and the outcome signal 9.
#   killed_after_signal   killed once it has said (through a FIFO) that it reached a point: exact counts
#   killed_with_plan      the same, given a sampling plan: the stored report has the plan subreport after its samples
#   kill9_instants [RUNS] killed at RUNS (default 50) random points of its loop: every stored counter is at most
#                         the full run's, the loop's sites agree with one another (none torn, none half-placed), and
#                         is_third counts at least the turns the program said it had made before the kill
#   forked_child          a child the program forks counts in its own copy, not in the parent's shared counters
#   interim_reports       sampler_write_report(): each call replaces the last interim report in the report file,
#                         the final report (here written on SIGTERM) replaces the last; under sampler-run, a program
#                         killed after one is reported from the shared counters, not from its stale interim report
#   final_kill9           after one sampler_write_report(), the program ends and strace holds the rename of what
#                         it writes beside the file: its unit's sections at exit (with a new interim report of the
#                         rest), its final report at exit, its final report from SIGTERM's crash path; killed then
#                         with SIGKILL, the file holds the interim report, whole, and the held one is whole beside
#                         it (report.new). Then a crash without the registry lock: SIGTERM delivered (by strace)
#                         inside an interim report's writer, its rename held: the file keeps the interim report
#                         before, the crash's report is whole beside it (report.crash); not held, the program dies
#                         of SIGTERM with its final report whole and nothing beside it. Skipped (exit 77) without
#                         strace
#   report_fd             SAMPLER_REPORT_FD, written in place: killed (by strace) at each of its writes to the file
#                         in turn, the file holds a whole report or one cut short, never an interim report joined
#                         to the next. Skipped (exit 77) without strace
#   interval_then_kill9   sampler-run --interval 1: once the collector has stored the third interim report (the
#                         stored run then says outcome unknown), the program is killed with SIGKILL; the stored run
#                         becomes the final one, with its samples and signal 9
#   interim_alone         sampler-run itself killed after its first interim report: the run stays stored with that
#                         report, outcome unknown, which sampler-analyze --database leaves out unless
#                         --include-unfinished; given a plan, that report carries the plan subreport
#   interval_reports      SAMPLER_INTERVAL=1 without sampler-run: a program that never calls the runtime gets interim
#                         reports in its report file (read when SAMPLER_VERBOSE says one is renamed in), each
#                         whole, of higher sequences and cumulative counters, while three threads sample; its final
#                         report replaces the last
#   interval_kill9        the same program killed with SIGKILL after its third interim report: the file holds the last
#                         one, whole; uploaded, it is an unfinished run (sampler-analyze --include-unfinished). Then
#                         killed while strace holds the rename of its second: the file holds the first, whole
#   oom_killed            a program that allocates until the kernel's OOM killer kills it (a memory cgroup the test
#                         makes: cgroup v2 or v1, else systemd-run --scope, else the test is skipped with the reason,
#                         exit 77) under sampler-run: the stored run has its samples and the outcome signal 9
#   crash_other_thread    a thread's report stops in its first write for good (its SIGXFSZ handler never returns),
#                         holding the registry lock; another thread crashes: the crash's report, whole, is renamed
#                         over the interim report before it, and the process dies of SIGSEGV (no deadlock)
#   concurrent_reports    four threads call sampler_write_report() 25 times each while they call is_third: each
#                         report read after one is said is whole, sequences and counters never go back, each
#                         sequence is written once, and the final report counts the calls (less the few that two
#                         threads counting at once may lose)
#   crash_resumed_writer  a program with its own SIGABRT handler, which returns: SIGABRT arrives while the same
#                         thread writes its report (an interim one, then at exit), held in its first write by a size
#                         limit; the crash's report stays the final one, whole, each count once (as a run without
#                         the signal counts), and the program exits with status 0
# usage: shared_counters_test.sh CASE [RUNS]; environment: TOOLS, DRIVERS, SCRATCH, SOURCE_DIR
set -euo pipefail
case_name=$1
runs=${2:-50}
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/server.sh"
source "$SOURCE_DIR/tests/collector/counters_check.sh"
printf 'killed\tgood-key\n' >keys.tsv
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED SAMPLER_SHARED_FD
R=$TOOLS/sampler-run
"$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
  "$SOURCE_DIR/tests/collector/programs/until_killed.c" -o until_killed

# launch ITERATIONS EVERY [wait]: starts the program under sampler-run (options: launch_options) at sparsity 1 (in the
# background: $launcher) and
# opens its progress FIFO on descriptor 8; reads the program's pid into $pid. When sampler-run ends, "ended" follows
# on the FIFO (a program that cannot start must not leave the test waiting for it).
launch_options=()
launch() {
  rm -f progress && mkfifo progress
  exec 8<>progress
  ( status=0
    "$R" "${launch_options[@]}" --app killed --sparsity 1 --upload "$url" --api-key good-key -- \
      ./until_killed "$1" "$2" progress ${3:+"$3"} 2>>run.err || status=$?
    echo ended >progress
    exit "$status" ) &
  launcher=$!
  read -r pid <&8
  [[ $pid =~ ^[0-9]+$ ]] || { fail "the program did not start: $(cat run.err)"; finish; }
}

# ended [SIGNAL]: waits for sampler-run, which must die of the signal (default 9, SIGKILL) as its program did.
ended() {
  local status=0 signal=${1:-9}
  wait "$launcher" || status=$?
  exec 8<&-
  [ "$status" = $((128 + signal)) ] ||
    fail "sampler-run ended with status $status, expected death by signal $signal: $(cat run.err)"
}

export_runs() {
  rm -rf exported
  "$TOOLS/sampler-collector" export --database sqlite:reports.db --app killed exported >/dev/null ||
    fail "export failed"
}

# runs ANALYZE-OPTIONS...: the runs of the database that sampler-analyze --database analysed (PROGRAM's sites).
runs() {
  "$TOOLS/sampler-analyze" --database sqlite:reports.db --app killed --sites "$program_file" --format json "$@" \
    >analysis.json 2>analysis.err || fail "sampler-analyze $*: $(cat analysis.err)"
  sed -n 's/^{"runs": \([0-9]*\).*/\1/p' analysis.json
}
program_file=until_killed

# whole FILE LABEL: FILE (a copy taken at one instant) is one whole report, its samples resolved (the sites of
# $program_file) in FILE.resolved.
whole() {
  "$TOOLS/extract-report" samples <"$1" >samples.txt 2>extract.err || fail "$2: extract-report: $(cat extract.err)"
  if [ -s extract.err ]; then fail "$2: the report is not whole: $(cat extract.err)"; fi
  [ "$(grep -c '^<report id="samples">$' "$1")" = 1 ] || fail "$2: samples subreports: $(cat "$1")"
  "$TOOLS/resolveSamples" "$program_file" <samples.txt | cut -f2- >"$1.resolved" || fail "$2: resolveSamples failed"
}

# sequence_of FILE: the interim subreport's sequence, empty when there is none.
sequence_of() {
  local pattern=$'^sequence\t([0-9]+)$' text
  text=$("$TOOLS/extract-report" interim <"$1" 2>/dev/null || true)
  if [[ $text =~ $pattern ]]; then echo "${BASH_REMATCH[1]}"; fi
}

# held_rename N: reads strace's output (descriptor 7) until the N-th rename has begun: strace writes a call's
# start ("renameat2(AT_FDCWD, "report.new", AT_FDCWD, "report", 0") as the program enters it, and holds the
# N-th there. False if strace's output ends first.
held_rename() {
  local text= c renames=0
  while IFS= read -r -N 1 c <&7; do
    text+=$c
    if [[ $text == *'"report", 0' ]]; then
      renames=$((renames + 1)) text=
      [ "$renames" -lt "$1" ] || return 0
    fi
  done
  return 1
}

case $case_name in
  killed_after_signal | killed_with_plan)
    if [ "$case_name" = killed_with_plan ]; then
      # Given a plan (here through SAMPLER_PLAN), the program killed outright still reports which plan it ran with:
      # sampler-run adds the plan subreport after the samples it reads from the shared counters.
      printf 'sampler-plan\t1\nid\tplan-k\n0123456789abcdef0123456789abcdef\tbranches\t0\t1\n' >plan
      export SAMPLER_PLAN=$SCRATCH/plan
    fi
    start_server sqlite:reports.db
    launch 1000 0 wait
    read -r reached <&8
    [ "$reached" = done ] || fail "the program said '$reached'"
    kill -KILL "$pid" || fail "the program had ended"
    ended
    stop_server
    export_runs
    reports=$(find exported -name '*.report')
    [ "$(echo "$reports" | wc -l)" = 1 ] || fail "stored runs: $reports"
    grep -q '^signal	9$' $reports || fail "outcome: $(cat $reports)"
    if [ "$case_name" = killed_with_plan ]; then
      subreports=$(sed -n 's/^<report id="\(.*\)">$/\1/p' $reports | tr '\n' ' ')
      [ "$subreports" = "samples plan outcome " ] || fail "subreports: $subreports"
      plan=$(sed -n '/^<report id="plan">$/,/^<\/report>$/p' $reports)
      [ "$plan" = "$(printf '<report id="plan">\nid\tplan-k\nsparsity\t1\n</report>')" ] || fail "plan subreport: $plan"
    else
      resolved $reports >killed.txt || fail "resolveSamples: $(cat killed.txt)"
      # 1000 calls of is_third, a third of them (turns 0, 3, ..., 999) true; the loop's 1000 turns.
      [ "$(counters is_third function-entries killed.txt)" = 1000 ] || fail "is_third entries: $(cat killed.txt)"
      [ "$(counters is_third branches killed.txt)" = "666	334" ] || fail "is_third branches: $(cat killed.txt)"
    fi
    ;;
  kill9_instants)
    start_server sqlite:reports.db
    # The full run, on the same path: to its end, then SIGTERM, on which the runtime writes its own report.
    iterations=1000000 every=10000
    launch $iterations $every wait
    while read -r line <&8 && [[ $line =~ ^[0-9]+$ ]]; do :; done
    kill -TERM "$pid" || { fail "the full run had ended: $(cat run.err)"; finish; }
    ended 15
    # Each killed run's id (sampler-run --verbose says it) with the last turn the program said it had reached before
    # the kill: its stored counters must count at least that far (reached), no farther than the full run.
    launch_options=(--verbose)
    : >reached
    for ((i = 0; i < runs; i++)); do
      # Past the loop's end, the program waits: then the run's counters are the full run's.
      target=$(((RANDOM * 32768 + RANDOM) % iterations))
      launch $iterations $every wait
      while read -r line <&8 && [[ $line =~ ^[0-9]+$ ]] && [ "$line" -lt "$target" ]; do :; done
      kill -KILL "$pid" || { fail "run $i: the program had ended: $(cat run.err)"; finish; }
      ended
      [ "$line" != done ] || line=$((iterations - 1))
      [[ $line =~ ^[0-9]+$ ]] || { fail "run $i: the program said '$line'"; finish; }
      run_id=$(sed -n 's/^sampler-run: report \([^ ]*\) sent to .*/\1/p' run.err | tail -n 1)
      [ -n "$run_id" ] && [ -z "$(awk -v id="$run_id" '$1 == id' reached)" ] ||
        { fail "run $i: no new run id: $(tail -n 3 run.err)"; finish; }
      echo "$run_id $line" >>reached
      : >run.err
    done
    stop_server
    export_runs
    full=$(grep -l -r '^signal	15$' exported || true)
    [ "$(echo "$full" | wc -w)" = 1 ] || fail "the full run: '$full'"
    resolved "$full" >full.txt
    killed=0
    for report in $(grep -l '^signal	9$' -r exported); do
      killed=$((killed + 1))
      resolved "$report" >run.txt || { fail "$report: resolveSamples failed"; continue; }
      # Site by site, field by field: the same static fields, counters no larger than the full run's.
      problem=$(at_most run.txt full.txt)
      [ -z "$problem" ] || fail "$report: $problem"
      # One turn at a time: is_third's entries, its branch's counts and their thirds agree (an entry may be
      # counted before its branch).
      entries=$(counters is_third function-entries run.txt)
      # No less than the program said it had done before the kill: turn N said, N + 1 calls of is_third made.
      run_id=$(sed -n 's/^run-id\t//p' "$report")
      said=$(awk -v id="$run_id" '$1 == id { print $2 }' reached)
      [ -n "$said" ] && [ "$entries" -gt "$said" ] || fail "$report: is_third $entries entries, turn '$said' said"
      read -r false true <<<"$(counters is_third branches run.txt)"
      turns=$((false + true))
      { [ "$turns" = "$entries" ] || [ "$turns" = $((entries - 1)) ]; } &&
        [ "$true" = $(((turns + 2) / 3)) ] || fail "$report: is_third $entries entries, branches $false $true"
    done
    [ "$killed" = "$runs" ] || fail "$killed killed runs stored, $runs expected"
    ;;
  forked_child)
    "$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
      "$SOURCE_DIR/tests/collector/programs/forked.c" -o until_killed
    start_server sqlite:reports.db
    rm -f progress && mkfifo progress
    "$R" --app killed --sparsity 1 --upload "$url" --api-key good-key -- ./until_killed progress 2>>run.err &
    launcher=$!
    exec 8<progress
    read -r line <&8
    [ "$line" = done ] || fail "the program said '$line'"
    kill -KILL "$(pgrep -P "$launcher" until_killed)"
    ended
    stop_server
    export_runs
    stored=$(find exported -name '*.report')
    grep -q '^signal	9$' $stored || fail "outcome: $(cat $stored)"
    resolved $stored >killed.txt || fail "resolveSamples: $(cat killed.txt)"
    [ "$(counters is_third function-entries killed.txt)" = 1000 ] || fail "is_third entries: $(cat killed.txt)"
    ;;
  interim_reports | final_kill9)
    "$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
      -I "$SOURCE_DIR/runtime/include" "$SOURCE_DIR/tests/collector/programs/interim.c" -o interim
    # check_report FILE ENTRIES SEQUENCE: one whole samples subreport with ENTRIES calls of is_third, and the
    # interim subreport SEQUENCE (none: no interim subreport).
    check_report() {
      cp "$1" now.txt
      "$TOOLS/extract-report" samples <now.txt >samples.txt 2>extract.err || fail "extract-report: $(cat extract.err)"
      if [ -s extract.err ]; then fail "$3: the report is not whole: $(cat extract.err)"; fi
      [ "$(grep -c '^<report id="samples">$' now.txt)" = 1 ] || fail "$3: samples subreports: $(cat now.txt)"
      "$TOOLS/resolveSamples" interim <samples.txt | cut -f2- >now.resolved || fail "resolveSamples: $(cat now.txt)"
      [ "$(counters is_third function-entries now.resolved)" = "$2" ] || fail "$3: is_third: $(cat now.resolved)"
      if [ "$3" = none ]; then
        if grep -q '^<report id="interim">$' now.txt; then
          fail "the final report holds an interim one: $(cat now.txt)"
        fi
      else
        [ "$("$TOOLS/extract-report" interim <now.txt)" = "sequence	$3" ] || fail "interim $3: $(cat now.txt)"
      fi
    }
    if [ "$case_name" = final_kill9 ]; then
      command -v strace >/dev/null || { echo "SKIP: strace not found: the held rename cannot be made"; exit 77; }
      # held END RENAME LEFT HELD: after interim report 1, the program ends by END (exit: a line on its input; term:
      # SIGTERM) while strace holds its renames from the RENAME-th on; once strace says the held rename has begun (the
      # file beside is whole), SIGKILL: the file must hold interim report LEFT, whole, and the file beside report.new
      # interim report HELD (none: the final one), each counting 1000 calls. Renames: 1 interim report 1; at exit 2
      # the unit's leaving (interim report 2), 3 the final report; from SIGTERM, 2 the crash path's final report.
      # END flock: a crash without the registry lock. After interim reports 1 and 2, interim report 3 begins and
      # strace delivers SIGTERM as it enters its file beside's flock(2) (the 4th: the report file's at start-up is the
      # first), so that the crash path finds the lock held by the writer it interrupted: the file beside is then
      # report.crash, with 3000 calls, and the file holds interim report LEFT (2000 calls).
      held() {
        local beside=report.new signal_options=() rounds=1 answered=1 left_calls=1000 held_calls=1000
        if [ "$1" = flock ]; then
          beside=report.crash rounds=3 answered=2 left_calls=2000 held_calls=3000
          signal_options=(-e inject=flock:signal=SIGTERM:when=4)
        fi
        rm -f report report.new report.crash progress answer traced && mkfifo progress answer traced
        SAMPLER_SPARSITY=1 SAMPLER_FILE=report strace -f -qq -o traced -e trace=renameat2,flock \
          -e inject=renameat2:delay_enter=600000000:when=$2+ "${signal_options[@]}" ./interim $rounds progress \
          <answer 2>traced.err &
        tracer=$!
        exec 9>answer 7<traced 8<progress  # strace opens its output before it starts the program
        for ((round = 1; round <= answered; round++)); do
          read -r line <&8 && [ "$line" = $round ] || fail "$1 $2: round '$line': $(cat traced.err)"
          check_report report $((round * 1000)) $round
          echo >&9  # with flock, the last answer lets round 3 begin: SIGTERM meets its interim report
        done
        traced=$(pgrep -P "$tracer" interim)
        if [ "$1" != flock ]; then
          read -r thirds <&8 && [ "$thirds" = 334 ] || fail "$1 $2: thirds '$thirds'"
          if [ "$1" = exit ]; then echo exit >&9; else kill -TERM "$traced"; fi
        fi
        held_rename "$2" || { fail "$1 $2: strace ended first: $(cat traced.err)"; finish; }
        # The program first (its SIGKILL pending aborts the held rename), then strace, which would wait out its delay.
        kill -KILL "$traced"
        kill -KILL "$tracer" 2>/dev/null || true
        wait "$tracer" || true
        exec 7<&- 8<&- 9>&-
        check_report report $left_calls "$3"
        check_report $beside $held_calls "$4"
        # (strace may say something of the signal that met its delayed rename: not the program.)
        said=$(grep -v '^strace: ' traced.err || true)
        [ -z "$said" ] || fail "$1 $2: the program said: $said"
      }
      held exit 2 1 2
      held exit 3 2 none
      held term 2 1 none
      held flock 3 2 none
      # The same crash without the lock, nothing held: the program dies of SIGTERM, its report whole and final with
      # its main-backtrace, nothing left beside it.
      rm -f report report.new report.crash progress answer && mkfifo progress answer
      SAMPLER_SPARSITY=1 SAMPLER_FILE=report strace -f -qq -o /dev/null -e trace=flock \
        -e inject=flock:signal=SIGTERM:when=4 ./interim 3 progress <answer 2>traced.err &
      tracer=$!
      exec 9>answer 8<progress
      for round in 1 2; do
        read -r line <&8 && [ "$line" = $round ] || fail "unheld: round '$line': $(cat traced.err)"
        echo >&9
      done
      status=0
      wait "$tracer" || status=$?
      exec 8<&- 9>&-
      [ "$status" = 143 ] || fail "unheld: status $status, expected death by SIGTERM: $(cat traced.err)"
      check_report report 3000 none
      grep -q '^<report id="main-backtrace">$' report || fail "unheld: no main-backtrace: $(cat report)"
      [ ! -e report.new ] && [ ! -e report.crash ] || fail "unheld: files left beside the report: $(ls)"
      finish
      exit 0
    fi
    rm -f progress answer && mkfifo progress answer
    SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./interim 2 progress <answer &
    program=$!
    exec 9>answer 8<progress
    read -r round <&8 && [ "$round" = 1 ] || fail "round '$round'"
    check_report report 1000 1
    echo >&9
    read -r round <&8 && [ "$round" = 2 ] || fail "round '$round'"
    check_report report 2000 2
    echo >&9
    read -r thirds <&8
    kill -TERM "$program"
    status=0
    wait "$program" || status=$?
    exec 8<&- 9>&-
    [ "$status" = 143 ] || fail "status $status after SIGTERM"
    check_report report 2000 none
    grep -q '^<report id="main-backtrace">$' report || fail "no main-backtrace: $(cat report)"
    # Under sampler-run: killed after its second interim report, the run comes from the shared counters.
    start_server sqlite:reports.db
    rm -f progress answer && mkfifo progress answer
    "$R" --app killed --sparsity 1 --upload "$url" --api-key good-key -- ./interim 2 progress <answer 2>>run.err &
    launcher=$!
    exec 9>answer 8<progress
    read -r round <&8
    echo >&9
    read -r round <&8
    pid=$(pgrep -P "$launcher" interim)
    kill -KILL "$pid"
    ended
    exec 9>&-
    stop_server
    export_runs
    stored=$(find exported -name '*.report')
    grep -q '^signal	9$' $stored || fail "outcome: $(cat $stored)"
    check_report $stored 2000 none
    ;;
  report_fd)
    # SAMPLER_REPORT_FD's reports are written in place (a descriptor has no name to rename over: docs/decisions.md,
    # "A descriptor's reports in place"). The program's report goes to descriptor 7, a regular file the test opened;
    # strace kills it with SIGKILL as it enters its WRITE-th write(2) to that file, for WRITE = 1, 2, ... until it
    # writes them all and exits. At every instant the file must be a whole report (an interim report, or the final
    # one) or one cut short, which extract-report says, with one samples subreport counting no more than was done
    # and no interim subreport: never an interim report joined to the next report, never a count twice.
    command -v strace >/dev/null || { echo "SKIP: strace not found: the kill at each write cannot be made"; exit 77; }
    "$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
      -I "$SOURCE_DIR/runtime/include" "$SOURCE_DIR/tests/collector/programs/interim.c" -o interim
    # check_fd_report LABEL CALLS SEQUENCE whole: the file is one whole report, its is_third called CALLS times, with
    # the interim subreport SEQUENCE (none: none). check_fd_report LABEL CALLS any killed: the file is empty, or a
    # whole report (the interim report of round N with N * 1000 calls, or the final one with CALLS), or cut short with
    # no interim subreport and at most CALLS calls; which of them, in $state.
    check_fd_report() {
      local problem sequence
      cp reportfd now.txt
      state=empty
      if [ "$4" = killed ] && [ ! -s now.txt ]; then return 0; fi
      [ "$(grep -c '^<report id="samples">$' now.txt)" = 1 ] ||
        { fail "$1: samples subreports: $(cat now.txt)"; return; }
      "$TOOLS/extract-report" samples <now.txt >samples.txt 2>extract.err ||
        fail "$1: extract-report: $(cat extract.err)"
      "$TOOLS/resolveSamples" interim <samples.txt | cut -f2- >now.resolved || fail "$1: resolveSamples: $(cat now.txt)"
      calls=$(counters is_third function-entries now.resolved)
      sequence=$(sequence_of now.txt)
      sequence=${sequence:-none}
      if [ -s extract.err ]; then
        problem=$(cat extract.err)
        [ "$4" = killed ] || fail "$1: not whole: $problem"
        [[ $problem == *"cut short"* ]] || fail "$1: not merely cut short: $problem"
        [ "$sequence" = none ] || fail "$1: an interim subreport after a report cut short: $(cat now.txt)"
        [ "${calls:-0}" -le "$2" ] || fail "$1: $calls calls of is_third, at most $2 made"
        state="cut short (${calls:-no} calls of is_third)"
      elif [ "$4" = whole ]; then
        [ "$sequence" = "$3" ] && [ "$calls" = "$2" ] || fail "$1: interim $sequence, $calls calls: $(cat now.txt)"
      elif [ "$sequence" = none ]; then
        [ "$calls" = "$2" ] || fail "$1: the final report has $calls calls of is_third: $(cat now.txt)"
        state="the final report, whole"
      else
        [ "$calls" = $((sequence * 1000)) ] || fail "$1: interim report $sequence with $calls calls: $(cat now.txt)"
        state="interim report $sequence, whole"
      fi
    }
    seen=
    for ((write = 1; ; write++)); do
      : >reportfd
      rm -f progress answer && mkfifo progress answer
      SAMPLER_SPARSITY=1 SAMPLER_REPORT_FD=7 strace -qq -o /dev/null -P "$PWD/reportfd" -e trace=write \
        -e inject=write:signal=SIGKILL:when=$write ./interim 2 progress <answer 7<>reportfd 2>fd.err &
      tracer=$!
      exec 9>answer 8<progress
      # Each round's interim report, then the exit (a line "exit"), as far as the program gets before the kill.
      round=0
      while read -r line <&8; do
        if [[ $line =~ ^[12]$ ]]; then
          round=$line
          check_fd_report "after round $round" $((round * 1000)) "$round" whole
          echo >&9
        else
          echo exit >&9
        fi
      done
      status=0
      wait "$tracer" || status=$?
      exec 8<&- 9>&-
      if [ "$status" = 0 ]; then
        check_fd_report "at its exit" 2000 none whole
        break
      fi
      [ "$status" = 137 ] || { fail "write $write: status $status: $(cat fd.err)"; finish; }
      check_fd_report "killed at write $write" 2000 any killed
      seen+="write $write: $state"$'\n'
      [ "$write" -lt 20 ] || { fail "still writing at write $write"; finish; }
    done
    echo "$seen"
    # Killed at its first write nothing is in the file; at each later one, the interim reports before it are whole
    # there, and during the exit's writes the report is cut short (its interim report taken back first).
    [[ $seen == *"cut short"* ]] || fail "no kill found the report cut short: $seen"
    ;;
  interval_then_kill9 | interim_alone)
    start_server sqlite:reports.db
    # sampler-run's --verbose lines come through the FIFO `said`; "ended" follows them when sampler-run ends, so
    # that a launcher that dies early never leaves the test waiting.
    rm -f progress said && mkfifo progress said
    exec 8<>progress 6<>said
    # interim_alone runs under a plan: its interim report, written from the shared counters, carries the plan too.
    printf 'sampler-plan\t1\nid\tplan-i\n' >plan
    plan_options=()
    [ "$case_name" = interim_alone ] && plan_options=(--plan plan)
    ( status=0
      "$R" --verbose --interval 1 "${plan_options[@]}" --app killed --sparsity 1 --upload "$url" --api-key good-key -- \
        ./until_killed 1000 0 progress wait 2>&6 || status=$?
      echo ended >&6
      exit "$status" ) &
    launcher=$!
    read -r pid <&8
    [[ $pid =~ ^[0-9]+$ ]] || { fail "the program did not start"; finish; }
    read -r reached <&8
    [ "$reached" = done ] || fail "the program said '$reached'"
    # wait_for_interim N: until sampler-run says the collector took interim report N (its answer came: stored).
    wait_for_interim() {
      local line
      while read -r line <&6; do
        case $line in
          "sampler-run: interim report $1 of run "*" sent to "*) return 0 ;;
          *"not sent"* | ended) fail "waiting for interim report $1: $line"; finish ;;
        esac
      done
    }
    # stored_run: exports the runs and checks there is one, in $stored.
    stored_run() {
      export_runs
      stored=$(find exported -name '*.report')
      [ "$(echo "$stored" | wc -w)" = 1 ] || { fail "stored runs: '$stored'"; finish; }
    }
    # unknown_outcome SEQUENCE: the stored run is interim report SEQUENCE or a later one (sampler-run goes on
    # sending), its outcome without an end, its samples the whole run's (the program reached "done" before the
    # first interval).
    unknown_outcome() {
      stored_run
      if grep -q -E '^(signal|exit-status)	' $stored; then fail "interim outcome with an end: $(cat $stored)"; fi
      local sequence pattern=$'^sequence\t([0-9]+)$'
      sequence=$("$TOOLS/extract-report" interim <$stored)
      [[ $sequence =~ $pattern ]] && [ "${BASH_REMATCH[1]}" -ge "$1" ] ||
        fail "interim $1: $(cat $stored)"
      resolved $stored >stored.txt || fail "resolveSamples: $(cat stored.txt)"
      [ "$(counters is_third function-entries stored.txt)" = 1000 ] || fail "is_third entries: $(cat stored.txt)"
    }
    if [ "$case_name" = interval_then_kill9 ]; then
      wait_for_interim 3
      unknown_outcome 3
      kill -KILL "$pid" || fail "the program had ended"
      status=0
      wait "$launcher" || status=$?
      [ "$status" = 137 ] || fail "sampler-run ended with status $status, expected death by signal 9"
      stop_server
      stored_run
      grep -q '^signal	9$' $stored || fail "outcome: $(cat $stored)"
      if grep -q '^<report id="interim">$' $stored; then fail "the final run is still interim: $(cat $stored)"; fi
      resolved $stored >killed.txt || fail "resolveSamples: $(cat killed.txt)"
      [ "$(counters is_third function-entries killed.txt)" = 1000 ] || fail "is_third entries: $(cat killed.txt)"
      [ "$(counters is_third branches killed.txt)" = "666	334" ] || fail "is_third branches: $(cat killed.txt)"
    else
      wait_for_interim 1
      # sampler-run dies outright (its host vanishing, as the collector sees it); the orphaned program goes too.
      read -r _ _ _ parent _ <"/proc/$pid/stat"  # the program's name (field 2) has no space: until_killed
      kill -KILL "$parent" || fail "sampler-run had ended"
      kill -KILL "$pid" || fail "the program had ended"
      wait "$launcher" || true
      stop_server
      unknown_outcome 1
      [ "$("$TOOLS/extract-report" plan <$stored)" = "$(printf 'id\tplan-i\nsparsity\t1')" ] ||
        fail "the interim report's plan subreport: $(cat $stored)"
      [ "$(runs)" = 0 ] || fail "the unfinished run was analysed: $(cat analysis.json)"
      [ "$(runs --include-unfinished)" = 1 ] || fail "--include-unfinished: $(cat analysis.json)"
    fi
    exec 6<&- 8<&-
    ;;
  interval_reports | interval_kill9)
    "$DRIVERS/sampler-cc" -O1 -g -pthread -fsampler-schemes=function-entries,branches \
      "$SOURCE_DIR/tests/collector/programs/ticking.c" -o ticking
    program_file=ticking
    # consistent FILE LABEL: in one snapshot, is_third's entries and branches agree (a snapshot taken on the sample
    # path of an entry has the entry and not yet its branch), its turns counted from 0.
    consistent() {
      local entries false true turns
      entries=$(counters is_third function-entries "$1.resolved")
      read -r false true <<<"$(counters is_third branches "$1.resolved")"
      turns=$((false + true))
      { [ "$turns" = "$entries" ] || [ "$turns" = $((entries - 1)) ]; } && [ "$true" = $(((turns + 2) / 3)) ] ||
        fail "$2: is_third $entries entries, branches $false $true"
    }
    rm -f input said && mkfifo input said  # not ./answer: upload() writes there
    # interval_reports: two more threads sample without pause, and race for each interim report.
    workers=0
    [ "$case_name" = interval_reports ] && workers=2
    # The program's stderr comes through the FIFO `said`: with SAMPLER_VERBOSE, the runtime says each interim report
    # once it is renamed over the file; "pid N" comes first, "ended STATUS" last, so that the test never waits for a
    # program that has gone.
    exec 6<>said
    ( SAMPLER_VERBOSE=1 SAMPLER_SPARSITY=1 SAMPLER_INTERVAL=1 SAMPLER_FILE=report ./ticking $workers <input 2>&6 &
      echo "pid $!" >&6
      status=0
      wait $! || status=$?
      echo "ended $status" >&6 ) 2>/dev/null &
    exec 9>input
    # The runtime's first lines may come before the subshell says the pid: they race, and are only its settings.
    while read -r line <&6 && [[ $line = "sampler: "* ]]; do :; done
    [[ $line =~ ^pid\ [0-9]+$ ]] || { fail "the program did not start: $line"; finish; }
    program=${line#pid }
    # hear [interim]: reads the program's lines until the runtime says it renamed an interim report over the file
    # (interim), else until the program ends, its status in $status. Anything but the runtime's lines fails.
    hear() {
      local line
      while read -r line <&6; do
        case $line in
          "sampler: interim report "*" written (the report file replaced)") [ "${1:-}" != interim ] || return 0 ;;
          "sampler: "*) ;;
          "ended "*)
            status=${line#ended }
            [ "${1:-}" != interim ] || { fail "the program ended: status $status"; finish; }
            return 0
            ;;
          *) fail "the program said: $line" ;;
        esac
      done
    }
    # After each interim report the runtime says it wrote, the file's content (a copy taken whole: the runtime replaces
    # the file by rename) is read, until its sequence has advanced three times; each interim report is whole and
    # counts at least what the one before counted.
    seen=0 previous=
    while [ "$seen" -lt 3 ]; do
      hear interim
      cp report probe.txt
      sequence=$(sequence_of probe.txt)
      [ -n "$sequence" ] || { fail "no interim report in the file: $(cat probe.txt)"; finish; }
      # (Two reports may come before the copy: the next one said is then the one already seen.)
      [ "$sequence" != "${last:-}" ] || continue
      last=$sequence seen=$((seen + 1))
      cp probe.txt "interim$seen.txt"
      whole "interim$seen.txt" "interim report $sequence"
      consistent "interim$seen.txt" "interim report $sequence"
      if [ -n "$previous" ]; then
        [ "$sequence" -gt "$(sequence_of "$previous")" ] || fail "sequence $sequence after $(sequence_of "$previous")"
        problem=$(at_most "$previous.resolved" "interim$seen.txt.resolved")
        [ -z "$problem" ] || fail "interim report $sequence counts less than the one before: $problem"
        # Cumulative: the loop never stops, so each report counts more entries of is_third than the last.
        [ "$(counters is_third function-entries "interim$seen.txt.resolved")" -gt \
          "$(counters is_third function-entries "$previous.resolved")" ] || fail "interim report $sequence: no more entries"
      fi
      previous=interim$seen.txt
    done
    if [ "$case_name" = interval_reports ]; then
      echo quit >&9
      hear
      [ "$status" = 0 ] || fail "the program exited $status"
      whole report "the final report"
      consistent report "the final report"
      if grep -q '^<report id="interim">$' report; then fail "the final report holds an interim one: $(cat report)"; fi
      problem=$(at_most "$previous.resolved" report.resolved)
      [ -z "$problem" ] || fail "the final report counts less than the last interim one: $problem"
      # (A kill in the middle of an interim report would leave one: not here.)
      [ ! -e report.new ] || fail "report.new left beside the report"
    else
      kill -KILL "$program"
      hear
      [ "$status" = 137 ] || fail "the program ended with status $status, expected death by SIGKILL"
      cp report killed.txt
      whole killed.txt "the report left by SIGKILL"
      consistent killed.txt "the report left by SIGKILL"
      [ "$(sequence_of killed.txt)" -ge "$last" ] || fail "the report left: $(cat killed.txt)"
      problem=$(at_most "$previous.resolved" killed.txt.resolved)
      [ -z "$problem" ] || fail "the report left counts less than the last interim one seen: $problem"
      # Uploaded with an outcome that says nothing of its end, it is an unfinished run.
      printf '<report id="outcome">\nrun-id\tinterval-kill9\napp\tkilled\n</report>\n' >>killed.txt
      start_server sqlite:reports.db
      upload good-key killed.txt
      [ "$http" = 200 ] || fail "upload: $http $(cat answer)"
      stop_server
      [ "$(runs)" = 0 ] || fail "the unfinished run was analysed: $(cat analysis.json)"
      [ "$(runs --include-unfinished)" = 1 ] || fail "--include-unfinished: $(cat analysis.json)"
      # Killed between writing its second interim report (report.new, whole) and renaming it over the report (strace
      # holds the rename): the report is still the first, whole.
      if command -v strace >/dev/null; then
        rm -f report report.new traced
        exec 9>&-
        rm -f input && mkfifo input traced
        SAMPLER_SPARSITY=1 SAMPLER_INTERVAL=1 SAMPLER_FILE=report strace -f -qq -o traced -e trace=renameat2 \
          -e inject=renameat2:delay_enter=600000000:when=2 ./ticking <input 2>traced.err &
        tracer=$!
        exec 9>input 7<traced
        held_rename 2 || { fail "strace ended first: $(cat traced.err)"; finish; }
        # The program first (its SIGKILL pending aborts the held rename), then strace, which would wait out its delay.
        kill -KILL "$(pgrep -P "$tracer" ticking)"
        kill -KILL "$tracer" 2>/dev/null || true
        wait "$tracer" || true
        exec 7<&-
        cp report held.txt
        whole held.txt "the report while the rename was held"
        [ "$(sequence_of held.txt)" = 1 ] || fail "the report while the rename was held: $(cat held.txt)"
        whole report.new "the held report"
        [ "$(sequence_of report.new)" = 2 ] || fail "the held report: $(cat report.new)"
      else
        echo "strace not found: the kill between write and rename is not tested"
      fi
    fi
    exec 9>&- 6<&-
    ;;
  oom_killed)
    "$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
      "$SOURCE_DIR/tests/collector/programs/allocate.c" -o allocate
    memory_cgroup $((64 << 20))
    start_server sqlite:reports.db
    status=0
    "${wrap[@]}" "$R" --app killed --sparsity 1 --upload "$url" --api-key good-key -- ./allocate "$procs" \
      >allocate.out 2>>run.err || status=$?
    [ "$status" = 137 ] || fail "sampler-run ended with status $status, expected death by signal 9: $(cat run.err)"
    [ "$(cat allocate.out)" = "allocating 334" ] || fail "the program said: $(cat allocate.out)"
    # The kernel's OOM killer, not something else, killed it.
    if [ -n "$oom_kills" ]; then
      kills=$(sed -n 's/^oom_kill \([0-9]*\)$/\1/p' "$oom_kills")
      [ "${kills:-0}" -ge 1 ] || fail "no OOM kill in $oom_kills: $(cat "$oom_kills")"
    fi
    stop_server
    export_runs
    stored=$(find exported -name '*.report')
    [ "$(echo "$stored" | wc -w)" = 1 ] || { fail "stored runs: '$stored'"; finish; }
    grep -q '^signal	9$' $stored || fail "outcome: $(cat $stored)"
    "$TOOLS/extract-report" samples <$stored | "$TOOLS/resolveSamples" allocate | cut -f2- >killed.txt ||
      fail "resolveSamples: $(cat killed.txt)"
    [ "$(counters is_third function-entries killed.txt)" = 1000 ] || fail "is_third entries: $(cat killed.txt)"
    [ "$(counters is_third branches killed.txt)" = "666	334" ] || fail "is_third branches: $(cat killed.txt)"
    [ "$(counters grow function-entries killed.txt)" -ge 1 ] || fail "grow entries: $(cat killed.txt)"
    ;;
  crash_other_thread | concurrent_reports | crash_resumed_writer)
    # crash_resumed_writer: the runtime linked in and the constructor that installs the program's SIGABRT handler
    # left without sites, so that it runs before the runtime initialises (a site would initialise it).
    static=()
    [ "$case_name" != crash_resumed_writer ] ||
      static=(-static-libsampler -fsampler-exclude-function=install_abort_handler)
    "$DRIVERS/sampler-cc" -O1 -g -pthread -fsampler-schemes=function-entries,branches "${static[@]}" \
      -I "$SOURCE_DIR/runtime/include" "$SOURCE_DIR/tests/collector/programs/report_threads.c" -o report_threads
    program_file=report_threads
    if [ "$case_name" = crash_other_thread ]; then
      # A crash while another thread holds the registry lock for good: that thread's report stops in its first write
      # (its SIGXFSZ handler never returns). The crash path's wait for the lock ends, and its report goes beside the
      # file (report.crash) and is renamed over it; the process dies of its SIGSEGV, the test's wait returns.
      rm -f report report.new report.crash progress answer && mkfifo progress answer
      SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./report_threads crash progress <answer 2>program.err &
      program=$!
      exec 9>answer 8<progress
      read -r line <&8 && [ "$line" = 1 ] || { fail "round '$line': $(cat program.err)"; finish; }
      interim_inode=$(stat -c %i report)
      echo >&9
      status=0
      wait "$program" || status=$?
      exec 8<&- 9>&-
      [ "$status" = 139 ] || fail "status $status, expected death by SIGSEGV: $(cat program.err)"
      [ ! -s program.err ] || fail "the program said: $(cat program.err)"
      cp report crashed.txt
      whole crashed.txt "the crash's report"
      [ "$(counters is_third function-entries crashed.txt.resolved)" = 2000 ] ||
        fail "is_third entries: $(cat crashed.txt.resolved)"
      [ -z "$(sequence_of crashed.txt)" ] || fail "the crash's report holds an interim one: $(cat crashed.txt)"
      backtrace=$("$TOOLS/extract-report" main-backtrace <crashed.txt 2>&1 || true)
      [[ $'\n'$backtrace == *$'\nsignal:11:SIGSEGV:'* ]] || fail "main-backtrace: $backtrace"
      # Renamed in (a new file under the name), not written in place over the interim report; the held writer's
      # report.new is left to it.
      [ "$(stat -c %i report)" != "$interim_inode" ] || fail "the crash's report was written in place"
      [ ! -e report.crash ] || fail "report.crash was left beside the report"
      [ -e report.new ] || fail "the held writer's report.new was removed"
    elif [ "$case_name" = concurrent_reports ]; then
      # THREADS threads call sampler_write_report() ROUNDS times each while they call is_third. After each interim
      # report the runtime says it wrote, the file (replaced by rename: a copy is one report) is read: whole, its
      # sequence and its counters never going back. Every sequence is said once; the final report counts every call.
      threads=4 rounds=25
      rm -f report said && mkfifo said
      exec 6<>said
      ( status=0
        SAMPLER_VERBOSE=1 SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./report_threads concurrent $threads $rounds \
          2>&6 || status=$?
        echo "ended $status" >&6 ) &
      said_sequences=() last=0 entries=0
      while read -r line <&6; do
        case $line in
          "sampler: interim report "*" written (the report file replaced)")
            sequence=${line#sampler: interim report }
            said_sequences+=("${sequence%% *}")
            cp report probe.txt
            whole probe.txt "after interim report ${sequence%% *}"
            # (The lines said outlive the program in the FIFO: the copy may be the final report, with no sequence.)
            sequence=$(sequence_of probe.txt)
            [ -z "$sequence" ] || { [ "$last" != final ] && [ "$sequence" -ge "$last" ]; } ||
              fail "sequence '$sequence' after $last: $(cat probe.txt)"
            now=$(counters is_third function-entries probe.txt.resolved)
            [ "$now" -ge "$entries" ] || fail "interim report $sequence: is_third $now after $entries"
            last=${sequence:-final} entries=$now
            ;;
          "sampler: "*) ;;
          "ended "*)
            [ "$line" = "ended 0" ] || fail "the program $line"
            break
            ;;
          *) fail "the program said: $line" ;;
        esac
      done
      exec 6<&-
      said=$(printf '%s\n' "${said_sequences[@]}" | sort -n)
      [ "$said" = "$(seq 1 $((threads * rounds)))" ] || fail "sequences said: $(echo $said)"
      whole report "the final report"
      # Every call counted, up to the counts two threads may lose in one instant of the counter's relaxed load and
      # store (docs/decisions.md, "The counter: counted by the unit"): never above the calls, never below the last
      # interim report read, and at most a hundredth lost.
      final=$(counters is_third function-entries report.resolved)
      [ "$final" -le $((threads * rounds * 100)) ] && [ "$final" -ge "$entries" ] &&
        [ "$final" -ge $((threads * rounds * 99)) ] || fail "final is_third $final after $entries: $(cat report.resolved)"
      [ -z "$(sequence_of report)" ] || fail "the final report holds an interim one: $(cat report)"
    else
      # The counts of a run without the signal: 2000 calls, interim report 1 after the first 1000.
      rm -f report
      SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./report_threads resumed none 2>program.err ||
        fail "the run without the signal failed: $(cat program.err)"
      whole report "the report without the signal"
      expected=$(for f in is_third calls; do counters "$f" function-entries report.resolved
                   counters "$f" branches report.resolved; done)
      [ "$(counters is_third function-entries report.resolved)" = 2000 ] ||
        fail "is_third entries without the signal: $(cat report.resolved)"
      # SIGABRT comes in the writer's first write of report.new (an interim report; at exit, the program's unit
      # leaving): the crash renames its final report in over interim report 1, the program's handler returns, and
      # so does the writer, which must leave that report alone (docs/decisions.md, "A writer resumed after a crash").
      for where in interim exit; do
        rm -f report report.new report.crash
        status=0
        SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./report_threads resumed "$where" 2>program.err || status=$?
        [ "$status" = 0 ] || fail "$where: status $status, expected 0: $(cat program.err)"
        [ ! -s program.err ] || fail "$where: the program said: $(cat program.err)"
        cp report "resumed_$where.txt"
        whole "resumed_$where.txt" "$where: the crash's report"
        counted=$(for f in is_third calls; do counters "$f" function-entries "resumed_$where.txt.resolved"
                    counters "$f" branches "resumed_$where.txt.resolved"; done)
        [ "$counted" = "$expected" ] || fail "$where: counts $(echo $counted), expected $(echo $expected)"
        # Each scheme's section once in the file, read by the tools or not.
        sections=$(grep -c '^<samples unit=' "resumed_$where.txt" || true)
        [ "$sections" = 2 ] || fail "$where: $sections samples sections, expected 2: $(cat "resumed_$where.txt")"
        [ -z "$(sequence_of "resumed_$where.txt")" ] ||
          fail "$where: an interim report after the crash's: $(cat "resumed_$where.txt")"
        backtrace=$("$TOOLS/extract-report" main-backtrace <"resumed_$where.txt" 2>&1 || true)
        [[ $'\n'$backtrace == *$'\nsignal:6:SIGABRT'* ]] || fail "$where: main-backtrace: $backtrace"
        # The crash's main-backtrace ends the file: nothing of the writer's follows it.
        after=$(sed -n '/^<report id="main-backtrace">$/,$p' "resumed_$where.txt" | sed '1,/^<\/report>$/d')
        [ -z "$after" ] || fail "$where: text after the main-backtrace: $after"
        [ ! -e report.new ] && [ ! -e report.crash ] || fail "$where: a file left beside the report: $(ls report.*)"
      done
    fi
    ;;
  *)
    fail "unknown case"
    ;;
esac
finish
