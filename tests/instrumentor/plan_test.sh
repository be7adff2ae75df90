#!/usr/bin/env bash
# Sampling plans (docs/instrumenting.md, "Sampling plans"): a program built by sampler-cc run with SAMPLER_PLAN.
# Usage: plan_test.sh CASE, CASE one of
#   uniform      a plan giving every site 1/SPARSITY samples exactly the sites uniform sampling does (same seed),
#                and so does a plan naming no site (the pairs of plan_loop's assignments among them, walked as a
#                group); the report's `plan` subreport names the plan
#   certain      a site at p = 1 counts every execution, sites at p = 0 (and unnamed ones without SAMPLER_SPARSITY)
#                never sample
#   quarter      a site at p = 0.25 samples within binomial bounds (a fixed seed: deterministic)
#   mixed        hot sites near p = 0, the cold sites of rare() at p = 1, some at p = 0: each cold site counts
#                every execution (its region's threshold under the plan keeps it checked), a p = 0 site never samples
#   branches     arms()'s region, whose paths weigh differently, at rates of its own per site: each site samples
#                within binomial bounds (the region's fast side subtracts the weights of the path it took)
#   loops        plan_inner's counted innermost loop, entered once a row: a plan giving every site 1/SPARSITY
#                samples exactly the sites uniform sampling does, its copy for plans running where the countdown
#                is above the loop's weight and the sites after the loop sampling from what the copy left
#   nests        plan_nest's loop around a loop, entered once a row: a plan giving every site 1/SPARSITY samples
#                exactly the sites uniform sampling does, the nest's copy for plans running an iteration at a time
#   off          plan_off's functions with twins: under a plan of p = 0 everywhere each runs its twin, as with sampling
#                off; under one that samples leaf() only, outer(), whose twin calls leaf()'s, runs its code with
#                sites and leaf()'s sites count every execution, while lone() runs its twin
#   first_countdown  under a plan of p = 0 everywhere, the initialising thread's countdown is drawn (not left at 1)
#   malformed    a malformed plan is refused with its file and line, and the run samples uniformly
#   plugin       a plan naming the sites of a dlopen()ed library: loaded, used and closed twice by a host built
#                without instrumentation (the library brings the runtime in) and by an instrumented one, the site
#                at p = 1 counts every execution in both loads, the site at p = 0 none; the plan subreport is there
# Environment: DRIVERS (the build tree's instrumentor/), TOOLS, SCRATCH, SOURCE_DIR.
set -euo pipefail
case_name=$1
# shellcheck source=../tools/blackbox.sh
. "$SOURCE_DIR/tests/tools/blackbox.sh"
set -euo pipefail
cp "$SOURCE_DIR/tests/instrumentor/programs/plan_loop.c" .
"$DRIVERS/sampler-cc" -O2 plan_loop.c -o plan_loop

# samples REPORT: the report's samples subreport.
samples() { "$TOOLS/extract-report" samples <"$1"; }
# resolved REPORT: its samples resolved against the program: scheme, file, line, function, node, fields, counters.
resolved() { samples "$1" | "$TOOLS/resolveSamples" ./plan_loop | cut -f3-; }
# every_site PROBABILITY: plan entries for every site of the unit in REPORT ($2), at PROBABILITY.
every_site() {
  samples "$2" | awk -v p="$1" -F'"' '
    /^<samples / { unit = $2; scheme = $4; site = 0; inside = 1; next }
    /^<\/samples>/ { inside = 0; next }
    inside { printf "%s\t%s\t%d\t%s\n", unit, scheme, site++, p }'
}
# site_index REPORT SCHEME FUNCTION: the index of the first SCHEME site in FUNCTION.
site_index() {
  resolved "$1" | awk -F'\t' -v scheme="$2" -v fn="$3" '
    $1 == scheme { if ($4 == fn) { print n; exit } ++n }'
}
# counters REPORT SCHEME INDEX: the sum of that site's counters (the scheme's last columns: branches 2, others 1).
counters() {
  resolved "$1" | awk -F'\t' -v scheme="$2" -v index_="$3" '
    $1 == scheme { if (n == index_) { print scheme == "branches" ? $(NF - 1) + $NF : $NF; exit } ++n }'
}
# total REPORT: every counter of every site, summed.
total() { samples "$1" | awk -F'\t' '!/^</ { for (i = 1; i <= NF; ++i) s += $i } END { print s + 0 }'; }
# count_at REPORT SCHEME LINE [NTH]: the sum of the counters of the NTH (default 1st) SCHEME site on LINE.
count_at() {
  resolved "$1" | awk -F'\t' -v scheme="$2" -v line="$3" -v nth="${4:-1}" '
    BEGIN { split("branches 2 returns 3 scalar-pairs 3 function-entries 1", c, " "); for (i = 1; i < 8; i += 2) k[c[i]] = c[i + 1] }
    $1 == scheme && $3 == line && ++seen == nth { for (i = NF - k[scheme] + 1; i <= NF; ++i) s += $i; print s + 0; exit }'
}
# plan_at REPORT P [SCHEME LINE NTH Q]...: every site at P, but the NTH SCHEME site on LINE at Q.
plan_at() {
  local report=$1 default=$2
  shift 2
  resolved "$report" | awk -F'\t' -v unit="$unit" -v p="$default" -v given="$*" '
    BEGIN { n = split(given, g, /[[:space:]]+/); for (i = 1; i <= n; i += 4) q[g[i] SUBSEP g[i + 1] SUBSEP g[i + 2]] = g[i + 3] }
    { seen = ++nth[$1 SUBSEP $3]; key = $1 SUBSEP $3 SUBSEP seen; printf "%s\t%s\t%d\t%s\n", unit, $1, index_[$1]++, (key in q) ? q[key] : p }'
}
unit_of() { samples "$1" | awk -F'"' '/^<samples / { print $2; exit }'; }
plan_header() { printf 'sampler-plan\t1\nid\t%s\n' "$1"; }
# same_as_uniform NAME ROWS: programs/NAME.c built with sampler-cc -O2, run at SAMPLER_SPARSITY=1000 with three
# seeds, uniformly and under a plan giving every site p = 1/1000: the same samples and output, some samples.
same_as_uniform() {
  cp "$SOURCE_DIR/tests/instrumentor/programs/$1.c" .
  "$DRIVERS/sampler-cc" -O2 "$1.c" -o "$1"
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$1_all.report" "./$1" 100 >/dev/null
  { plan_header "$1"; every_site 0.001 "$1_all.report"; } >"$1.plan"
  for seed in 1 2 3; do
    SAMPLER_SPARSITY=1000 SAMPLER_SEED=$seed SAMPLER_FILE="$1_uniform.report" "./$1" "$2" >"$1_uniform.out"
    SAMPLER_PLAN="$1.plan" SAMPLER_SPARSITY=1000 SAMPLER_SEED=$seed SAMPLER_FILE="$1_plan.report" "./$1" "$2" \
      >"$1_plan.out"
    samples "$1_uniform.report" >"$1_uniform.samples"
    samples "$1_plan.report" >"$1_plan.samples"
    cmp -s "$1_uniform.samples" "$1_plan.samples" ||
      fail "seed $seed: the samples differ from uniform sampling:
$(diff "$1_uniform.samples" "$1_plan.samples" | head)"
    cmp -s "$1_uniform.out" "$1_plan.out" || fail "seed $seed: the program's output differs"
    [ "$(total "$1_plan.report")" -gt 0 ] || fail "seed $seed: nothing sampled"
  done
}

# A report at sparsity 1, for the sites' order and the unit's signature.
SAMPLER_SPARSITY=1 SAMPLER_FILE=all.report ./plan_loop 100 >/dev/null
unit=$(unit_of all.report)

case $case_name in
uniform)
  # The comparison covers the pairs of an assignment walked as a group under a plan (the unit's group function).
  symbols=$(nm plan_loop)
  [[ $symbols == *sampler_weigh_compares_in_unit* ]] || fail "plan_loop has no group of pairs: nothing compares them"
  { plan_header every-site; every_site 0.01 all.report; } >every.plan
  { plan_header no-site; echo "# only the uniform rate"; } >none.plan
  for n in 50 20000; do
    SAMPLER_SPARSITY=100 SAMPLER_SEED=11 SAMPLER_FILE=uniform.report ./plan_loop $n >uniform.out
    for plan in every none; do
      SAMPLER_PLAN=$plan.plan SAMPLER_SPARSITY=100 SAMPLER_SEED=11 SAMPLER_FILE=$plan.report ./plan_loop $n >$plan.out
      samples uniform.report >uniform.samples
      samples $plan.report >$plan.samples
      cmp -s uniform.samples $plan.samples ||
        fail "$plan.plan, $n iterations: the samples differ from uniform sampling:$(echo; diff uniform.samples $plan.samples | head)"
      cmp -s uniform.out $plan.out || fail "$plan.plan: the program's output differs"
      [ "$(total $plan.report)" -gt 0 ] || [ $n = 50 ] || fail "$plan.plan, $n iterations: nothing sampled"
    done
  done
  plan_subreport=$("$TOOLS/extract-report" plan <every.report)
  [ "$plan_subreport" = "$(printf 'id\tevery-site\nsparsity\t100')" ] || fail "the plan subreport: $plan_subreport"
  uniform_subreport=$("$TOOLS/extract-report" plan <uniform.report 2>/dev/null || true)
  [ -z "$uniform_subreport" ] || fail "a report without a plan has a plan subreport: $uniform_subreport"
  ;;
certain)
  branch=$(site_index all.report branches step)
  entry=$(site_index all.report function-entries is_third)
  [ -n "$branch" ] && [ -n "$entry" ] || fail "the sites of step() and is_third() are not in the report"
  { plan_header certain; printf '%s\tbranches\t%s\t1\n%s\tfunction-entries\t%s\t0\n' "$unit" "$branch" "$unit" "$entry"; } >certain.plan
  SAMPLER_PLAN=certain.plan SAMPLER_SEED=3 SAMPLER_FILE=certain.report ./plan_loop 30000 >/dev/null
  [ "$(counters certain.report branches "$branch")" = 30000 ] ||
    fail "the branch at p = 1 counted $(counters certain.report branches "$branch") of 30000 executions"
  [ "$(counters certain.report function-entries "$entry")" = 0 ] || fail "the site at p = 0 sampled"
  [ "$(total certain.report)" = 30000 ] || fail "sites the plan does not name sampled: $(total certain.report) counts"
  # With a uniform rate the unnamed sites sample too, the named ones keep their rates.
  SAMPLER_PLAN=certain.plan SAMPLER_SPARSITY=10 SAMPLER_SEED=3 SAMPLER_FILE=mixed.report ./plan_loop 30000 >/dev/null
  [ "$(counters mixed.report branches "$branch")" = 30000 ] || fail "at SAMPLER_SPARSITY=10, the branch at p = 1"
  [ "$(counters mixed.report function-entries "$entry")" = 0 ] || fail "at SAMPLER_SPARSITY=10, the site at p = 0"
  [ "$(total mixed.report)" -gt 30000 ] || fail "at SAMPLER_SPARSITY=10 the unnamed sites never sampled"
  ;;
quarter)
  branch=$(site_index all.report branches step)
  { plan_header quarter; printf '%s\tbranches\t%s\t0.25\n' "$unit" "$branch"; } >quarter.plan
  SAMPLER_PLAN=quarter.plan SAMPLER_SEED=5 SAMPLER_FILE=quarter.report ./plan_loop 40000 >/dev/null
  count=$(counters quarter.report branches "$branch")
  # Binomial(40000, 0.25): mean 10000, standard deviation 86.6; five of them either side.
  [ "$count" -ge 9567 ] && [ "$count" -le 10433 ] || fail "the branch at p = 0.25 sampled $count of 40000 executions"
  [ "$(total quarter.report)" = "$count" ] || fail "sites the plan does not name sampled"
  ;;
mixed)
  { plan_header mixed
    plan_at all.report 0.000001 branches 25 1 1 function-entries 24 1 1 returns 37 1 1 \
      function-entries 7 1 0 branches 17 1 0 scalar-pairs 19 1 0; } >mixed.plan
  SAMPLER_PLAN=mixed.plan SAMPLER_SEED=3 SAMPLER_FILE=mixed.report ./plan_loop 30000 >/dev/null
  for cold in "branches 25" "function-entries 24" "returns 37"; do
    # shellcheck disable=SC2086 # two words: the scheme and the line
    [ "$(count_at mixed.report $cold)" = 30 ] || fail "the cold site $cold counted $(count_at mixed.report $cold) of 30 executions"
  done
  for never in "function-entries 7" "branches 17" "scalar-pairs 19"; do
    # shellcheck disable=SC2086
    [ "$(count_at mixed.report $never)" = 0 ] || fail "the site $never at p = 0 sampled"
  done
  ;;
branches)
  { plan_header branches
    plan_at all.report 0 branches 15 1 0.3 branches 17 1 0.05 scalar-pairs 16 1 0.5 scalar-pairs 16 2 0.5 \
      scalar-pairs 19 1 0.1 scalar-pairs 19 2 0.1; } >branches.plan
  SAMPLER_PLAN=branches.plan SAMPLER_SEED=5 SAMPLER_FILE=branches.report ./plan_loop 40000 >/dev/null
  # within_bounds SCHEME LINE NTH EXECUTIONS P: Binomial(EXECUTIONS, P), five standard deviations either side.
  within_bounds() {
    local count
    count=$(count_at branches.report "$1" "$2" "$3")
    awk -v c="$count" -v n="$4" -v p="$5" 'BEGIN { d = 5 * sqrt(n * p * (1 - p)); exit !(c >= n * p - d && c <= n * p + d) }' ||
      fail "$1 at line $2 ($3) at p = $5 sampled $count of $4 executions"
  }
  within_bounds branches 15 1 40000 0.3
  within_bounds branches 17 1 16000 0.05
  within_bounds scalar-pairs 16 1 16000 0.5
  within_bounds scalar-pairs 16 2 16000 0.5
  within_bounds scalar-pairs 19 1 24000 0.1
  within_bounds scalar-pairs 19 2 24000 0.1
  [ "$(count_at branches.report branches 10)" = 0 ] || fail "step()'s branch at p = 0 sampled"
  ;;
loops)
  # p = 1/1000: a row's loop of 8 to 15 iterations weighs a few hundredths of the clock's mean, so its copy for
  # plans runs in most rows, and 20,000 rows take about 2,000 samples.
  same_as_uniform plan_inner 20000
  ;;
nests)
  # p = 1/1000: one iteration of the chain (up to 64 bytes compared) weighs about a twentieth of the clock's
  # mean, so the nest's copy for plans runs most iterations; a copy subtracting counts (1 a site, where a weight
  # is 2^48 / 1000) would leave the countdown where it was and sample far less.
  same_as_uniform plan_nest 20000
  ;;
off)
  # plan_off prints, per function, where its calls of where() return to (offsets from its symbol): its twin's
  # calls with sampling off, its code with sites at a uniform rate (which the comparisons below rely on).
  cp "$SOURCE_DIR/tests/instrumentor/programs/plan_off.c" .
  "$DRIVERS/sampler-cc" -O2 plan_off.c -o plan_off
  SAMPLER_FILE=/dev/null ./plan_off 100 >twin.out
  SAMPLER_SPARSITY=1000 SAMPLER_FILE=/dev/null ./plan_off 100 >sampled.out
  SAMPLER_SPARSITY=1 SAMPLER_FILE=off_all.report ./plan_off 100 >/dev/null
  line_of() { grep "^$2 " "$1"; }
  for f in leaf outer lone; do
    [ "$(line_of twin.out $f)" != "$(line_of sampled.out $f)" ] || fail "$f: its twin and its code with sites look alike"
  done
  # off_plan NAME FUNCTION: every site of plan_off at p = 0 but FUNCTION's, at p = 1.
  off_plan() {
    plan_header "$1"
    samples off_all.report | "$TOOLS/resolveSamples" ./plan_off | cut -f3- |
      awk -F'\t' -v unit="$(unit_of off_all.report)" -v on="$2" '
        { printf "%s\t%s\t%d\t%s\n", unit, $1, index_[$1]++, $4 == on ? 1 : 0 }'
  }
  off_plan zero "" >zero.plan
  off_plan leaf leaf >leaf.plan
  SAMPLER_PLAN=zero.plan SAMPLER_SPARSITY=1000 SAMPLER_SEED=1 SAMPLER_FILE=zero.report ./plan_off 100 >zero.out
  for f in leaf outer lone; do
    [ "$(line_of zero.out $f)" = "$(line_of twin.out $f)" ] || fail "every site at p = 0: $f does not run its twin"
  done
  [ "$(total zero.report)" = 0 ] || fail "every site at p = 0: $(total zero.report) counts"
  # leaf() samples: outer(), whose twin would call leaf()'s twin, stays on; lone() and where() are off.
  SAMPLER_PLAN=leaf.plan SAMPLER_SPARSITY=1000 SAMPLER_SEED=1 SAMPLER_FILE=leaf.report ./plan_off 100 >leaf.out
  [ "$(line_of leaf.out lone)" = "$(line_of twin.out lone)" ] || fail "leaf() at p = 1: lone() does not run its twin"
  for f in leaf outer; do
    [ "$(line_of leaf.out $f)" != "$(line_of twin.out $f)" ] || fail "leaf() at p = 1: $f runs its twin"
  done
  [ "$(head -1 leaf.out)" = "$(head -1 twin.out)" ] || fail "leaf() at p = 1: the program's output differs"
  # leaf()'s sites count every execution, as at sparsity 1; no other site samples.
  leaf_sites() { samples "$1" | "$TOOLS/resolveSamples" ./plan_off | cut -f3- | awk -F'\t' '$4 == "leaf"'; }
  [ "$(leaf_sites leaf.report)" = "$(leaf_sites off_all.report)" ] ||
    fail "leaf() at p = 1 does not count every execution:$(echo; diff <(leaf_sites off_all.report) <(leaf_sites leaf.report))"
  others=$(samples leaf.report | "$TOOLS/resolveSamples" ./plan_off | cut -f3- | awk -F'\t' '
    BEGIN { split("branches 2 returns 3 scalar-pairs 3 function-entries 1", c, " "); for (i = 1; i < 8; i += 2) k[c[i]] = c[i + 1] }
    $4 != "leaf" { for (i = NF - k[$1] + 1; i <= NF; ++i) s += $i } END { print s + 0 }')
  [ "$others" = 0 ] || fail "leaf() at p = 1: sites at p = 0 sampled $others times"
  ;;
first_countdown)
  # Under a plan the initialising thread's countdown is drawn when the plan is applied: with every site at
  # p = 0 (a plan naming none, no SAMPLER_SPARSITY) no site would ever draw it, and it stayed at 1.
  printf '#include <stdint.h>\n#include <stdio.h>\nextern __thread int64_t sampler_countdown;\n%s\n' \
    'int main(void) { printf("%lld\n", (long long)sampler_countdown); return 0; }' >countdown.c
  "$DRIVERS/sampler-cc" -O2 countdown.c -o countdown
  { plan_header zero; echo "# every site at p = 0"; } >zero.plan
  first=$(SAMPLER_PLAN=zero.plan SAMPLER_SEED=1 SAMPLER_FILE=/dev/null ./countdown)
  [ "$first" -gt 1 ] || fail "under a plan of p = 0 the countdown is $first, never drawn"
  again=$(SAMPLER_PLAN=zero.plan SAMPLER_SEED=1 SAMPLER_FILE=/dev/null ./countdown)
  [ "$first" = "$again" ] || fail "the first countdown differs at the same seed: $first, $again"
  ;;
malformed)
  { plan_header bad; printf '%s\tbranches\t0\t0.5\n%s\tbranches\t1\t1.5\n' "$unit" "$unit"; } >bad.plan
  SAMPLER_SPARSITY=7 SAMPLER_SEED=2 SAMPLER_FILE=uniform.report ./plan_loop 5000 >/dev/null
  SAMPLER_PLAN=bad.plan SAMPLER_SPARSITY=7 SAMPLER_SEED=2 SAMPLER_FILE=bad.report ./plan_loop 5000 >/dev/null 2>bad.err
  expected="sampler: SAMPLER_PLAN: bad.plan:4: probability is not a decimal number in [0, 1]; the plan is not used, sampling is uniform"
  [ "$(cat bad.err)" = "$expected" ] || fail "the message: $(cat bad.err)"
  samples uniform.report >uniform.samples
  samples bad.report >bad.samples
  cmp -s uniform.samples bad.samples || fail "with a malformed plan the run does not sample uniformly"
  bad_subreport=$("$TOOLS/extract-report" plan <bad.report 2>/dev/null || true)
  [ -z "$bad_subreport" ] || fail "a refused plan is in the report: $bad_subreport"
  # The same entry twice: the second one's line.
  { plan_header twice; printf '%s\tbranches\t0\t0.5\n# again\n%s\tbranches\t0\t0.25\n' "$unit" "$unit"; } >twice.plan
  SAMPLER_PLAN=twice.plan SAMPLER_SPARSITY=7 SAMPLER_FILE=twice.report ./plan_loop 10 >/dev/null 2>twice.err
  expected="sampler: SAMPLER_PLAN: twice.plan:5: the same unit, scheme and site twice; the plan is not used, sampling is uniform"
  [ "$(cat twice.err)" = "$expected" ] || fail "the message for a repeated entry: $(cat twice.err)"
  ;;
plugin)
  cp "$SOURCE_DIR/tests/instrumentor/programs/plan_plugin.c" "$SOURCE_DIR/tests/instrumentor/programs/plan_host.c" .
  "$DRIVERS/sampler-cc" -O2 -g -fPIC -shared plan_plugin.c -o libplan_plugin.so
  "$DRIVERS/sampler-cc" -O2 -g plan_host.c -o plan_host_instrumented
  clang -O2 plan_host.c -o plan_host_plain
  plugin=$PWD/libplan_plugin.so
  # The library's unit and sites, from a run at sparsity 1 (the only unit: the host is not instrumented).
  SAMPLER_SPARSITY=1 SAMPLER_FILE=plugin_all.report ./plan_host_plain "$plugin" 1 10 >/dev/null
  plugin_unit=$(unit_of plugin_all.report)
  # in_plugin REPORT: the library's sections of REPORT resolved against it (both loads' sections merged).
  in_plugin() {
    samples "$1" | awk -v unit="$plugin_unit" '/^<(samples|timestamps) / { keep = index($0, "unit=\"" unit "\"") > 0 }
      keep { print } /^<\/(samples|timestamps)>/ { keep = 0 }' | "$TOOLS/resolveSamples" "$plugin" | cut -f3-
  }
  # plugin_site REPORT FUNCTION: the index of the branches site in FUNCTION; plugin_counters REPORT INDEX: its
  # counters summed.
  plugin_site() { in_plugin "$1" | awk -F'\t' -v fn="$2" '$1 == "branches" { if ($4 == fn) { print n + 0; exit } ++n }'; }
  plugin_counters() {
    in_plugin "$1" | awk -F'\t' -v i="$2" '$1 == "branches" { if (n == i) { print $(NF - 1) + $NF; exit } ++n }'
  }
  third=$(plugin_site plugin_all.report plugin_is_third)
  fifth=$(plugin_site plugin_all.report plugin_is_fifth)
  [ -n "$third" ] && [ -n "$fifth" ] || fail "the library's branches are not in its report: $(in_plugin plugin_all.report)"
  { plan_header plugin; printf '%s\tbranches\t%s\t1\n%s\tbranches\t%s\t0\n' "$plugin_unit" "$third" "$plugin_unit" "$fifth"; } >plugin.plan
  # Two loads of 3000 calls: 6000 executions of each branch.
  for host in plain instrumented; do
    sparsity=() uniform=
    # The instrumented host at a uniform rate: its sites, and the library's sites the plan does not name, sample too.
    [ $host = instrumented ] && sparsity=(SAMPLER_SPARSITY=10) uniform=10
    env "${sparsity[@]}" SAMPLER_PLAN=plugin.plan SAMPLER_SEED=4 SAMPLER_FILE=$host.report \
      ./plan_host_$host "$plugin" 2 3000 >$host.out 2>$host.err
    [ ! -s $host.err ] || fail "$host host: the runtime said: $(cat $host.err)"
    [ "$(cat $host.out)" = "$(./plan_host_plain "$plugin" 2 3000)" ] || fail "$host host: the output differs"
    [ "$(grep -c "^<samples unit=\"$plugin_unit\" scheme=\"branches\">" $host.report)" = 2 ] ||
      fail "$host host: the library's branches are not written once per load: $(cat $host.report)"
    [ "$(plugin_counters $host.report "$third")" = 6000 ] ||
      fail "$host host: the branch at p = 1 counted $(plugin_counters $host.report "$third") of 6000 executions"
    [ "$(plugin_counters $host.report "$fifth")" = 0 ] || fail "$host host: the branch at p = 0 sampled"
    plan_subreport=$("$TOOLS/extract-report" plan <$host.report)
    [ "$plan_subreport" = "$(printf 'id\tplugin\nsparsity\t%s' "$uniform")" ] ||
      fail "$host host: the plan subreport: $plan_subreport"
  done
  [ "$(total plain.report)" = 6000 ] || fail "sites the plan does not name sampled: $(total plain.report) counts"
  [ "$(total instrumented.report)" -gt 6000 ] || fail "at SAMPLER_SPARSITY=10 the unnamed sites never sampled"
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
[ "$failures" = 0 ] || exit 1
echo "plan_test $case_name: ok"
