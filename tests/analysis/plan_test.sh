#!/bin/bash
# sampler-analyze plan (docs/analysis.md, "Sampling plans: sampler-analyze plan"), black-box. Cases:
#   usage_errors  every usage error: exit status 2 and its exact message
#   progress      on a terminal, a progress line while reading, then the summary; nothing of it elsewhere
#   bad_input     bad reports and bad given plans: exit status 1, FILE:LINE messages; runs left out with warnings
#   own_time      runs' lengths are their outcomes' CPU seconds less their own samples at --sample-cost, never below
#                 10 % of them: three reports of known samples and seconds give the plan worked out by hand; with
#                 --sites naming none of their sites, a warning, a summary saying so and the same plan
#   end_to_end    a program built here by sampler-cc (argument 2), run 20 times at SAMPLER_SPARSITY=100 with
#                 SAMPLER_FILE; the plan at a 2% budget lowers the hot branch below 1/100, raises the branch taken
#                 once a run, predicts a cost within the budget (recomputed here from the reports), and reads back
#                 with the codec (as --given-plan)
# Usage: plan_test.sh CASE [SAMPLER-CC], with TOOLS, SCRATCH and SOURCE_DIR in the environment.
set -euo pipefail
case_name=$1
sampler_cc=${2:-}

source "$SOURCE_DIR/tests/tools/blackbox.sh"

run() {
  ran="sampler-analyze plan $*"
  status=0
  "$TOOLS/sampler-analyze" plan "$@" >out 2>err || status=$?
}

unit=0123456789abcdef0123456789abcdef
# report NAME SPARSITY CPU-SECONDS LINES...: a report of one branches section and an outcome.
report() {
  local name=$1 sparsity=$2 seconds=$3
  shift 3
  {
    printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n' "$unit"
    printf '%s\n' "$@"
    printf '</samples>\n</report>\n<report id="outcome">\nrun-id\tr1\nexit-status\t0\n'
    printf 'cpu-seconds\t%s\nsparsity\t%s\n</report>\n' "$seconds" "$sparsity"
  } >"$name"
}

case $case_name in
  own_time)
    # At 100 us a sample: 3000 samples in 1 s leave 0.7 s of the program's own, 5000 in 2 s 1.5 s, 9500 in 1 s
    # the floor, 0.1 s. A 1 % budget is then 230 samples over the 2.3 s, 115 for each site: site 0 executes
    # 1,650,000 times in the three runs (at 1/100), site 1 100,000.
    mkdir reports
    report reports/a 100 1.0 $'1000\t2000' $'0\t0'
    report reports/b 100 2.0 $'0\t4000' $'1000\t0'
    report reports/c 100 1.0 $'9000\t500' $'0\t0'
    run --budget 1% --sample-cost 100000 -o p reports
    [ "$status" = 0 ] || fail "$ran: status $status: $(cat err)"
    summary=$(cat err)
    [[ $summary == *"3 runs (0 left out), 0.767 CPU seconds a run on average without their own samples (1.33 measured), 1 runs taken at 10% of their length"* ]] ||
      fail "the summary: $summary"
    [[ $summary == *"predicted cost 1% of a run's CPU time (budget 1%)"* ]] || fail "the summary: $summary"
    entries=$(awk -F'\t' 'NF == 4 { printf "%s %s\n", $3, $4 }' p)
    awk -v e="$entries" 'BEGIN { split(e, l, "\n"); split(l[1], a, " "); split(l[2], b, " ");
      exit !(a[1] == 0 && b[1] == 1 && (a[2] - 115 / 1.65e6) ^ 2 < 1e-24 && (b[2] - 115 / 1e5) ^ 2 < 1e-24) }' ||
      fail "the plan's entries: $entries"
    # --sites of another program names none of these sites: a warning and the summary say so, and the plan is the
    # one without --sites.
    printf '<sites unit="%s" scheme="branches">\na.c\t1\tf\t1\tx\n</sites>\n' fedcba9876543210fedcba9876543210 \
      >other.sites
    run --budget 1% --sample-cost 100000 --sites other.sites -o q reports
    [ "$status" = 0 ] || fail "$ran: status $status: $(cat err)"
    summary=$(cat err)
    [[ $summary == *"2 sites have no site information in the --sites files"* ]] || fail "the warning: $summary"
    [[ $summary == *"functions not known (not given by --sites): slow-side walks not priced"* ]] ||
      fail "the summary: $summary"
    cmp -s p q || fail "--sites with none of the runs' sites changed the plan"
    ;;
  usage_errors)
    try="Try 'sampler-analyze plan --help' for more information.\n"
    mkdir reports
    report reports/a 100 1 $'1\t2'
    run -o p reports
    expect 2 '' "sampler-analyze plan: --budget PERCENT is required\n$try"
    run --budget 2% reports
    expect 2 '' "sampler-analyze plan: -o PLAN is required\n$try"
    for bad in 0 0% 101% -1 x 2%% ''; do
      run --budget "$bad" -o p reports
      expect 2 '' "sampler-analyze plan: --budget needs a percentage above 0 and at most 100, not '${bad//%/%%}'\n$try"
    done
    run --budget 2 --target 0 -o p reports
    expect 2 '' "sampler-analyze plan: --target needs a number above 0, not '0'\n$try"
    run --budget 2 --max-probability 1.5 -o p reports
    expect 2 '' "sampler-analyze plan: --max-probability needs a probability above 0 and at most 1, not '1.5'\n$try"
    run --budget 2 --sample-cost nan -o p reports
    expect 2 '' "sampler-analyze plan: --sample-cost needs a number of nanoseconds above 0, not 'nan'\n$try"
    run --budget 2 --sparsity 0.5 -o p reports
    expect 2 '' "sampler-analyze plan: --sparsity needs a number of at least 1, not '0.5'\n$try"
    run --budget 2 --run-seconds -3 -o p reports
    expect 2 '' "sampler-analyze plan: --run-seconds needs a number of seconds above 0, not '-3'\n$try"
    run --budget 2 --app x -o p reports
    expect 2 '' "sampler-analyze plan: --app and --version go with --database\n$try"
    run --budget 2 --database sqlite:db -o p
    expect 2 '' "sampler-analyze plan: --database needs --app NAME\n$try"
    run --budget 2 --database sqlite:db --app x -o p reports
    expect 2 '' "sampler-analyze plan: --database takes no REPORT-OR-DIR\n$try"
    run --budget 2 -o p
    expect 2 '' "sampler-analyze plan: no REPORT-OR-DIR given\n$try"
    run --budget 2 --bogus -o p reports
    [ "$status" = 2 ] || fail "an unknown option: exit status $status"
    [ -e p ] && fail "a usage error wrote the plan"
    # The control characters of an argument are shown escaped.
    run --budget $'\e[31m' -o p reports
    expect 2 '' "sampler-analyze plan: --budget needs a percentage above 0 and at most 100, not '\\\\x1b[31m'\n$try"
    ;;

  progress)
    mkdir reports
    for r in a b c; do report reports/$r 100 1 $'1\t2'; done
    status=0
    python3 "$SOURCE_DIR/tests/tools/on_terminal.py" terminal "$TOOLS/sampler-analyze" plan --budget 2% -o p.plan \
      reports >out || status=$?
    [ "$status" = 0 ] || fail "on a terminal: exit status $status"
    shown=$(tr '\r' '\n' <terminal)
    grep -Eq "^sampler-analyze plan: reading reports: 3 of 3 \(100%\), " <<<"$shown" || fail "no progress: $shown"
    grep -q "^sampler-analyze plan: predicted cost " <<<"$shown" || fail "no summary after it: $shown"
    run --budget 2% -o p.plan reports
    [ "$status" = 0 ] || fail "exit status $status"
    [ "$(grep -c '' err)" = 4 ] || fail "stderr on a file is not the 4 summary lines: $(cat err)"
    ;;

  bad_input)
    mkdir reports
    report reports/a 100 1 $'1\t2' $'0\t0'
    report reports/b 100 1 $'1\tx' $'0\t0'
    printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n1\t1\n0\t0\n</samples>\n</report>\n' \
      "$unit" >reports/c
    # A bad report is named with its line and left out; the plan is still written; the status is 1.
    run --budget 2% -o out.plan reports
    [ "$status" = 1 ] || fail "a bad report: exit status $status"
    grep -q "^sampler-analyze: 'reports/b':3: error: malformed samples line" err || fail "no FILE:LINE: $(cat err)"
    grep -q "^sampler-analyze: 'reports/c': warning: left out: its rate is unknown" err || fail "c: $(cat err)"
    grep -q "^sampler-analyze plan: 1 runs (2 left out)" err || fail "summary: $(cat err)"
    [ -s out.plan ] || fail "no plan written"
    # A malformed given plan stops the command before anything is written.
    printf 'sampler-plan\t1\nid\tp\n%s\tbranches\t0\t2\n' "$unit" >bad.plan
    run --budget 2% --given-plan bad.plan -o other.plan reports/a
    [ "$status" = 1 ] || fail "a bad given plan: exit status $status"
    grep -q "^sampler-analyze: 'bad.plan':3: error: .*: the plan is unusable" err || fail "given plan: $(cat err)"
    [ -e other.plan ] && fail "a bad given plan still wrote a plan"
    # No run left to learn from.
    run --budget 2% -o other.plan reports/c
    expect 1 '' "sampler-analyze: 'reports/c': warning: left out: its rate is unknown (no outcome subreport: \
give --sparsity N)\nsampler-analyze: error: no run to learn from (1 left out)\n"
    run --budget 2% -o other.plan no-such-dir
    [ "$status" = 1 ] || fail "a missing operand: exit status $status"
    # An output that cannot be written.
    run --budget 2% -o no-such-dir/x.plan reports/a
    [ "$status" = 1 ] || fail "an unwritable output: exit status $status"
    grep -q "^sampler-analyze: 'no-such-dir/x.plan': error: cannot write" err || fail "unwritable: $(cat err)"
    ;;

  end_to_end)
    [ -x "$sampler_cc" ] || { fail "sampler-cc is not built"; finish; }
    # One hot branch (every iteration), one taken once a run, one in an arm of the loop never taken, and one in a
    # function never called.
    cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static long never(long x) {
  if (x > 7) return x / 3;                        /* alone */
  return x;
}
int main(int argc, char **argv) {
  long sum = 0;
  int seed = argc > 1 ? atoi(argv[1]) : 0;
  for (long i = 0; i < 300000; ++i) {
    if ((i & 7) == 3) sum += i;                   /* hot */
    if (sum == -1) {                              /* an arm never taken: the sites inside it are never seen */
      if (seed > 3) sum = never(sum);             /* arm */
    }
  }
  if (seed % 5 == 0) puts("every fifth run");      /* rare */
  printf("%ld\n", sum);
  return 0;
}
EOF
    "$sampler_cc" -O1 -I"$SOURCE_DIR/runtime/include" prog.c -o prog >cc.log 2>&1 || fail "sampler-cc: $(cat cc.log)"
    mkdir reports
    for seed in $(seq 1 20); do
      SAMPLER_SPARSITY=100 SAMPLER_SEED=$seed SAMPLER_FILE=reports/run-$seed.txt ./prog "$seed" >/dev/null ||
        fail "run $seed failed"
    done
    # Bare reports have no outcome: the rate and a run's CPU time are given (1 ms, about what one run takes; the
    # plan's arithmetic is checked against it below).
    run --budget 2% --sparsity 100 --run-seconds 0.001 -o app.plan reports
    [ "$status" = 0 ] || fail "exit status $status: $(cat err)"
    grep -q "^sampler-analyze plan: 20 runs (0 left out)" err || fail "summary: $(cat err)"
    # The branches' indexes: their lines in the site information's branches section.
    "$TOOLS/extract-section" .debug_site_info prog >prog.sites || fail "no site information"
    hot_line=$(grep -n '/\* hot \*/' prog.c | cut -d: -f1)
    rare_line=$(grep -n '/\* rare \*/' prog.c | cut -d: -f1)
    index_of() {  # the 0-based index of the branches site at source line $1, and the unit
      awk -F'\t' -v line="$1" '/^<sites / { inside = /scheme="branches"/; n = 0; match($0, /unit="[0-9a-f]+"/);
        unit = substr($0, RSTART + 6, RLENGTH - 7); next } /^<\/sites>/ { inside = 0; next }
        inside { if ($2 == line) print unit "\t" n; n++ }' prog.sites | head -n 1
    }
    hot=$(index_of "$hot_line")
    rare=$(index_of "$rare_line")
    [ -n "$hot" ] && [ -n "$rare" ] || fail "branch sites not found (lines $hot_line, $rare_line)"
    # probability_of KEY [PLAN]: the branches site KEY's probability in PLAN (default app.plan).
    probability_of() {
      awk -F'\t' -v key="$1" '$1 "\t" $3 == key && $2 == "branches" { print $4 }' "${2:-app.plan}"
    }
    hot_p=$(probability_of "$hot")
    rare_p=$(probability_of "$rare")
    awk -v p="$hot_p" 'BEGIN { exit !(p > 0 && p < 0.01) }' || fail "the hot branch's probability $hot_p >= 1/100"
    awk -v p="$rare_p" 'BEGIN { exit !(p > 0.01 && p <= 1) }' || fail "the rare branch's probability $rare_p <= 1/100"
    # The predicted cost, recomputed from the reports: per site, its samples over the 20 runs times 100 is its
    # executions; times its probability, 30 ns each, over 20 runs of 1 ms. Sites never sampled are planned at
    # their upper bound, -ln(0.05) / (20 / 100) executions a run.
    cost=$(for f in reports/*; do
        awk '/^<samples / { match($0, /unit="[0-9a-f]+"/); unit = substr($0, RSTART + 6, RLENGTH - 7);
               match($0, /scheme="[^"]+"/); scheme = substr($0, RSTART + 8, RLENGTH - 9); n = 0; next }
             /^<\/samples>/ { scheme = ""; next }
             scheme != "" && scheme != "bounds" { s = 0; for (i = 1; i <= NF; i++) s += $i;
               print unit "\t" scheme "\t" n "\t" s; n++ }' "$f"
      done | awk -F'\t' 'FNR == NR { if (FNR > 2 && $0 !~ /^#/) p[$1 "\t" $2 "\t" $3] = $4; next }
        { k = $1 "\t" $2 "\t" $3; samples[k] += $4 }
        END { for (k in p) { e = samples[k] > 0 ? samples[k] * 100 / 20 : -log(0.05) / 0.2;
                             total += p[k] * e * 30e-9 / 0.001 }
              printf "%.6f\n", total }' app.plan -)
    awk -v c="$cost" 'BEGIN { exit !(c > 0.0199 && c <= 0.020001) }' || fail "the plan's cost is $cost, not 2%"
    grep -q "predicted cost 2% of a run's CPU time (budget 2%)" err || fail "summary: $(cat err)"
    # The id is the SHA-256 of the entry lines; the file reads back with the codec, as a plan runs used.
    id=$(sed -n 2p app.plan | cut -f2)
    [ "$id" = "$(tail -n +3 app.plan | sha256sum | cut -d' ' -f1)" ] || fail "the id is not the entries' digest"
    run --budget 2% --sparsity 100 --run-seconds 0.001 --given-plan app.plan -o again.plan reports
    [ "$status" = 0 ] || fail "the plan does not read back: $(cat err)"
    cmp -s app.plan again.plan || fail "the same runs gave another plan"
    # With each site's function (--sites): the arm in the loop, never seen, pays for the walks its weight causes
    # there and drops below what the rule of three alone gives it; the branch of the function never called, alone,
    # stays at probability 1; the predicted cost is still the budget.
    run --budget 2% --sparsity 100 --run-seconds 0.001 --sites prog -o priced.plan reports
    [ "$status" = 0 ] || fail "--sites: exit status $status: $(cat err)"
    grep -q "beside a hotter site of their function (.* never seen), priced with the slow-side walks" err ||
      fail "--sites summary: $(cat err)"
    grep -q "predicted cost 2% of a run's CPU time (budget 2%)" err || fail "--sites summary: $(cat err)"
    arm=$(index_of "$(grep -n '/\* arm \*/' prog.c | cut -d: -f1)")
    alone=$(index_of "$(grep -n '/\* alone \*/' prog.c | cut -d: -f1)")
    [ -n "$arm" ] && [ -n "$alone" ] || fail "branch sites not found (arm, alone)"
    arm_before=$(probability_of "$arm")
    arm_after=$(probability_of "$arm" priced.plan)
    alone_after=$(probability_of "$alone" priced.plan)
    awk -v a="$arm_before" -v b="$arm_after" 'BEGIN { exit !(b > 0 && b < a / 10) }' ||
      fail "the arm's probability: $arm_before by the bound, $arm_after priced"
    [ "$alone_after" = 1 ] || fail "the lone site's probability: $alone_after"
    ;;
  *) fail "unknown case" ;;
esac
finish
