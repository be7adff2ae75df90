#!/usr/bin/env bash
# End-to-end tests of sampler-cc and sampler-c++: programs compiled by the drivers, with no hand
# macros, run at SAMPLER_SPARSITY=1 (every site samples every time, so every counter is exact), read back with
# the existing tools. Usage: instrumentor_test.sh CASE
# (A pipe never ends in a quiet grep here: with pipefail, grep leaving at its first match can fail the pipeline
# by SIGPIPE.)
# Environment: DRIVERS (the build tree's instrumentor/), TOOLS, SCRATCH, SOURCE_DIR, SYMBOLIZER, and for the
# installed case PREFIX.
set -uo pipefail
case_name=$1
programs=$SOURCE_DIR/tests/instrumentor/programs
# shellcheck source=../tools/blackbox.sh
. "$SOURCE_DIR/tests/tools/blackbox.sh"
cc=$DRIVERS/sampler-cc
cxx=$DRIVERS/sampler-c++
# sites.expected and sites_cpp.expected hold these schemes; scalar-pairs has its own program (pairs.expected).
three=function-entries,branches,returns

# resolved PROGRAM REPORT: the report's samples resolved against the program, without the first column (the
# program's path): scheme, file, line, function, node, the scheme's fields, the counters.
resolved() { "$TOOLS/extract-report" samples <"$2" | "$TOOLS/resolveSamples" "$1" | cut -f3-; }

# check_sites PROGRAM EXPECTED [ARGS...]: runs PROGRAM at sparsity 1 and compares every site and counter.
check_sites() {
  local program=$1 expected=$2
  shift 2
  rm -f report
  SAMPLER_SPARSITY=1 SAMPLER_FILE=report "./$program" "$@" >run.out 2>run.err || fail "$program exited with $?"
  [ -s run.err ] && fail "$program wrote on stderr: $(cat run.err)"
  resolved "$program" report >resolved.txt 2>resolve.err || fail "resolveSamples $program failed: $(cat resolve.err)"
  cmp -s "$expected" resolved.txt || fail "$program: sites or counters differ:$(echo; diff "$expected" resolved.txt)"
}

# dwarf_agrees PROGRAM: no site names a file, line and function other than the DWARF of its slow-path call.
dwarf_agrees() {
  "$SOURCE_DIR/scripts/check-site-dwarf.sh" --extract-section "$TOOLS/extract-section" --symbolizer "$SYMBOLIZER" \
    "$1" >dwarf.txt 2>&1 || fail "$1: sites disagree with the DWARF:$(echo; cat dwarf.txt)"
}

# same_sampling REGION_PROGRAM SITE_PROGRAM [ARGS...]: the same source built with -fsampler-countdown=region and
# =site samples exactly the same sites at any sparsity (the same seed, the same countdowns): identical reports and
# output at sparsities where both the clones without sites (countdown above a region's sites) and the
# instrumented code run.
same_sampling() {
  local region=$1 site=$2 sparsity
  shift 2
  for sparsity in 2 3 5 10 1000; do
    SAMPLER_SPARSITY=$sparsity SAMPLER_SEED=7 SAMPLER_FILE=region.report "./$region" "$@" >region.out 2>&1
    SAMPLER_SPARSITY=$sparsity SAMPLER_SEED=7 SAMPLER_FILE=site.report "./$site" "$@" >site.out 2>&1
    resolved "$region" region.report >region.txt 2>&1 && resolved "$site" site.report >site.txt 2>&1 ||
      fail "sparsity $sparsity: a report does not resolve"
    cmp -s region.txt site.txt && cmp -s region.out site.out ||
      fail "sparsity $sparsity: region and site checks sample differently:$(echo; diff region.txt site.txt)"
  done
}

# same_as_per_site NAME: NAME.c built with regions and with a check per site, at -O1 and -O2, prints what plain
# clang's build prints, counts exactly as the per-site build at sparsity 1 and samples the same sites at one seed
# at sparsities 2 to 1000; with loops short enough (100) for the copies without checks to run and long enough
# (3000) for the checked loops to.
same_as_per_site() {
  local name=$1 level n expected
  clang-19 -O2 "$name.c" -o "$name-plain" || fail "plain $name.c"
  for level in -O1 -O2; do
    "$cc" $level "$name.c" -o "$name-region" && "$cc" $level -fsampler-countdown=site "$name.c" -o "$name-site" ||
      fail "sampler-cc $level $name.c"
    for n in 100 3000; do
      expected=$("./$name-plain" $n) || fail "plain $name.c $n"
      [ "$("./$name-region" $n)" = "$expected" ] || fail "$level: $name.c $n printed $("./$name-region" $n)"
      SAMPLER_SPARSITY=1 SAMPLER_FILE=region.report "./$name-region" $n >/dev/null &&
        SAMPLER_SPARSITY=1 SAMPLER_FILE=site.report "./$name-site" $n >/dev/null || fail "$level: $name.c at sparsity 1"
      resolved "$name-region" region.report >region.txt && resolved "$name-site" site.report >site.txt ||
        fail "$level: the sparsity-1 reports of $name.c do not resolve"
      cmp -s region.txt site.txt ||
        fail "$level $n: $name.c counts differently at sparsity 1:$(echo; diff region.txt site.txt)"
      same_sampling "$name-region" "$name-site" $n
    done
  done
}

# function_assembly FILE LABEL: the lines of the assembly FILE from LABEL (a regular expression) to the end of
# that function.
function_assembly() { awk -v label="$2" '$0 ~ label { f = 1 } f && /\.cfi_endproc/ { exit } f' "$1"; }

cp "$programs"/* . || exit 1
case $case_name in
c_sites)
  # Every branch (each && and || operand), call and function entry of a C program, with its file (a header
  # too), line, function, text and exact counters; the same at -O0 and -O2.
  # Both countdown checks (the amortized one per region, the default, and one per site) count exactly.
  for level in -O0 -O2; do
    for countdown in region site; do
      "$cc" -fsampler-schemes=$three -fsampler-countdown=$countdown $level -Wall -Werror sites.c \
        -o sites-$countdown || fail "sampler-cc $level sites.c failed"
      check_sites sites-$countdown sites.expected
      [ "$(cat run.out)" = "3 130 2" ] || fail "$level $countdown: the program printed $(cat run.out)"
    done
    same_sampling sites-region sites-site
    # Code from macro expansions: the predicate as written where the macro is used (glibc's isalpha, the
    # program's own macros, a macro's argument), not its expansion; a call a macro makes names its callee.
    "$cc" -fsampler-schemes=branches,returns $level -Wall -Werror macros.c -o macros ||
      fail "sampler-cc $level macros.c"
    check_sites macros macros.expected
    [ "$(cat run.out)" = "9 4" ] || fail "$level macros.c: the program printed $(cat run.out)"
  done
  # Separate compilation and link, and the static runtime.
  SAMPLER_CC_SCHEMES=$three "$cc" -c sites.c -o sites.o && "$cc" -static-libsampler sites.o -o sites-static ||
    fail "separate link failed"
  readelf -d sites-static | grep 'libsampler' >/dev/null && fail "-static-libsampler: still NEEDs libsampler.so"
  check_sites sites-static sites.expected
  ;;
cxx_sites)
  # C++: templates, methods, lambdas, calls that are invokes, temporaries and condition variables.
  for level in -O0 -O2; do
    for countdown in region site; do
      "$cxx" -fsampler-schemes=$three -fsampler-countdown=$countdown $level -Wall -Werror sites.cpp \
        -o cpp-$countdown || fail "sampler-c++ $level failed"
      check_sites cpp-$countdown sites_cpp.expected
      [ "$(cat run.out)" = "15" ] || fail "$level $countdown: the program printed $(cat run.out)"
      dwarf_agrees cpp-$countdown
    done
    same_sampling cpp-region cpp-site
    # Every scheme at once: the program still computes the same, and its report resolves.
    "$cxx" -fsampler-schemes=all $level -Wall -Werror sites.cpp -o sites-all || fail "sampler-c++ all $level failed"
    SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./sites-all >run.out || fail "sites-all failed"
    [ "$(cat run.out)" = "15" ] || fail "all schemes, $level: the program printed $(cat run.out)"
    [ "$(resolved sites-all report | cut -f1 | sort -u | tr '\n' ' ')" = \
      "bounds branches coverage function-entries returns scalar-pairs " ] ||
      fail "all schemes: $(resolved sites-all report | cut -f1 | sort -u)"
  done
  ;;
pairs)
  # scalar-pairs as the original defined it, by default: at each assignment to a named variable, the value just
  # assigned against 0 (NULL), the variable's old value, and each same-typed parameter, certainly initialised
  # local and earlier global. Not the pairs whose outcome is fixed (pairs_rules): `best = 0` and `i = 0` have
  # no 0, `best = v` no pair with v, `t = s` none with s; `p.x` and `arr[i]` none at all. pairs_original.c: the
  # original's own cases (a loop's counter, a global's ++ and --, a pointer, locals not certainly initialised).
  for level in -O0 -O2; do
    for countdown in region site; do
      SAMPLER_CC_COUNTDOWN=$countdown "$cc" -fsampler-schemes=scalar-pairs $level -Wall -Werror pairs.c \
        -o pairs-$countdown || fail "sampler-cc $level pairs.c"
      check_sites pairs-$countdown pairs.expected
      [ "$(cat run.out)" = "5 16" ] || fail "$level $countdown: the program printed $(cat run.out)"
    done
    same_sampling pairs-region pairs-site
    # The default schemes too: the pairs' checks and the branches' share regions.
    "$cc" $level pairs.c -o all-region && "$cc" -fsampler-countdown=site $level pairs.c -o all-site ||
      fail "sampler-cc $level pairs.c, default schemes"
    same_sampling all-region all-site
    # Samples counted in line (the default) and by the runtime's sampler_take_*() (what a unit with timestamps
    # calls): the same counters at every sparsity.
    "$cc" -fsampler-timestamps=first $level pairs.c -o all-stamped || fail "sampler-cc $level pairs.c, timestamps"
    same_sampling all-region all-stamped
    # The counters in line are reached through the scheme's `values`, loaded at run time (the runtime may place
    # them): no instruction names a counter array, every one is named by the scheme table only.
    "$cc" $level -S pairs.c -o pairs.s || fail "sampler-cc $level -S pairs.c"
    direct=$(grep -E '^[[:space:]]+[a-z]+[[:space:]].*__sampler_values_' pairs.s || true)
    [ -z "$direct" ] || fail "$level: code reaches counters by their address:$(echo; echo "$direct")"
    # (The unit's counting functions read it from their scheme argument, at offset 24: a unit with weights counts
    # its pairs through them.)
    grep -E '^[[:space:]]+(mov|add)[a-z]*[[:space:]]+(__sampler_schemes\+[0-9]+\(%rip\)|24\(%r(di|[0-9]+)\))' pairs.s >/dev/null ||
      fail "$level: no counter reached through the scheme table's values"
    # A comma whose value is unused (a for's increment `i++, j--`): its right operand is an assignment too.
    "$cc" -fsampler-schemes=scalar-pairs,bounds $level -Wall -Werror comma.c -o comma ||
      fail "sampler-cc $level comma.c"
    check_sites comma comma.expected
    [ "$(cat run.out)" = "5 6 71" ] || fail "$level comma.c: the program printed $(cat run.out)"
    "$cc" -fsampler-schemes=scalar-pairs $level -Wall -Werror pairs_original.c -o original ||
      fail "sampler-cc $level pairs_original.c"
    check_sites original pairs_original.expected
    [ "$(cat run.out)" = "1 6 x 5 2 6 2" ] || fail "$level pairs_original.c: the program printed $(cat run.out)"
    # The original's wider pairs, each asked for: the function's constants besides 0, and every lvalue kind.
    "$cc" -fsampler-schemes=scalar-pairs -fsampler-compare-constants -fsampler-assign-into-field \
      -fsampler-assign-into-index -fsampler-assign-across-pointer $level -Wall -Werror pairs.c -o wide ||
      fail "sampler-cc $level pairs.c, every scalar-pairs option"
    check_sites wide pairs_wide.expected
    [ "$(cat run.out)" = "5 16" ] || fail "$level wide: the program printed $(cat run.out)"
  done
  # store()'s assignments into a field, an array element, through a pointer (and through a pointer into a field):
  # which have pairs with which option, or its environment form.
  lvalues() {
    "$TOOLS/extract-section" .debug_site_info "$1" | awk -F'\t' '$3 == "store" && !seen[$5]++ { printf " %s", $5 }'
  }
  for case in "|" "-fsampler-assign-into-field| local.n" "-fsampler-assign-into-index| slots[v]" \
    "-fsampler-assign-across-pointer| *where" \
    "-fsampler-assign-across-pointer -fsampler-assign-into-field| local.n *where b->n" \
    "-fsampler-assign-into-index -fno-sampler-assign-into-index|"; do
    options=${case%%|*}
    # shellcheck disable=SC2086 # the options are words
    "$cc" -fsampler-schemes=scalar-pairs $options -c pairs_original.c -o store.o || fail "sampler-cc $options"
    [ "$(lvalues store.o)" = "${case#*|}" ] || fail "'$options': store() has pairs for$(lvalues store.o)"
  done
  SAMPLER_CC_ASSIGN_INTO_INDEX=1 "$cc" -fsampler-schemes=scalar-pairs -c pairs_original.c -o store.o ||
    fail "sampler-cc, SAMPLER_CC_ASSIGN_INTO_INDEX=1"
  [ "$(lvalues store.o)" = " slots[v]" ] || fail "SAMPLER_CC_ASSIGN_INTO_INDEX=1: pairs for$(lvalues store.o)"
  # The original's spelling of the schemes, in a build scripted for it.
  "$cc" -fsampler-scheme=scalar-pairs -fsampler-scheme=branches -c pairs_original.c -o spelled.o ||
    fail "sampler-cc -fsampler-scheme="
  "$TOOLS/extract-section" .debug_site_info spelled.o >spelled.sites || fail "extract-section spelled.o"
  [ "$(sed -n 's/.*scheme="\([^"]*\)".*/\1/p' spelled.sites | sort | tr '\n' ' ')" = "branches scalar-pairs " ] ||
    fail "-fsampler-scheme=: $(grep '^<' spelled.sites)"
  ;;
optimised)
  # Sites are lowered after the optimiser: what it did with them must not change what samples. The same seed
  # samples the same sites with the same values at -O0 (nothing optimised) and at -O2, where a callee's sites
  # run between the caller's (calls.c) and where LLVM hoists a pure call out of a loop with sites (strstr.c).
  for program in calls strstr; do
    "$cc" -O0 $program.c -o $program-O0 && "$cc" -O2 $program.c -o $program-O2 &&
      "$cc" -O2 -fsampler-countdown=site $program.c -o $program-O2-site || fail "sampler-cc $program.c failed"
    same_sampling $program-O2 $program-O0
    same_sampling $program-O2-site $program-O0
  done
  # The pure call left the loop: the instrumented program calls strstr once, as the plain one does (counted by
  # a wrapper the linker puts between them).
  clang-19 -O2 -c count_strstr.c -o count_strstr.o &&
    "$cc" -O2 strstr.c count_strstr.o -Wl,--wrap=strstr -o strstr-counted || fail "the counted strstr.c failed"
  ./strstr-counted >/dev/null 2>counted.txt
  [ "$(cat counted.txt)" = "strstr calls: 1" ] || fail "strstr-counted: $(cat counted.txt) (LLVM kept it in the loop)"
  # LTO: the compile step's bitcode holds the lowered sites (the link-time optimiser does not load the plugin).
  # LLVM 19 ends its ThinLTO compile step before the stage where the sites are lowered otherwise.
  for lto in -flto -flto=thin; do
    "$cc" -O2 $lto -c calls.c -o calls-lto.o || fail "sampler-cc $lto failed"
    llvm-nm-19 calls-lto.o >lto-symbols.txt || fail "llvm-nm-19 calls-lto.o failed"
    grep -q sampler_take_opportunity lto-symbols.txt && ! grep -q '__sampler\.site' lto-symbols.txt ||
      fail "$lto: the bitcode does not call the runtime, or still has markers:$(echo; cat lto-symbols.txt)"
  done
  # A loop whose body is two regions (lookahead.c, as gzip's longest_match): the body's check covers the loop's
  # condition too, which its fast side then enters without a check; the same sites sample as with per-site checks.
  for level in -O1 -O2; do
    "$cc" $level lookahead.c -o lookahead-region &&
      "$cc" $level -fsampler-countdown=site lookahead.c -o lookahead-site || fail "sampler-cc $level lookahead.c"
    [ "$(./lookahead-region)" = 18432 ] || fail "$level: lookahead.c printed $(./lookahead-region)"
    same_sampling lookahead-region lookahead-site
  done
  # Loops checked once at their entry (loops.c: eight innermost loops whose trips SCEV counts, and one that may
  # leave early, which keeps its checks): a copy without checks runs when the countdown is above the loop's trips
  # times its sites per iteration. The same sites sample as with per-site checks; and at 1/100 the samples are as
  # many as a binomial draw of the opportunities allows.
  "$cc" -O2 -S -emit-llvm -fno-discard-value-names loops.c -o loops.ll || fail "sampler-cc -emit-llvm loops.c"
  guards=$(grep -c '^sampler\.loop_guard[0-9]*:' loops.ll)
  [ "$guards" = 8 ] || fail "loops.c: $guards of its 8 counted innermost loops are checked at their entry"
  same_as_per_site loops
  # Every counter summed: the opportunities (sparsity 1), then the samples at 1/100, whose mean is a hundredth of
  # them; a countdown that skipped or repeated sites in the copies would move it by far more than five deviations.
  counted() { "$TOOLS/extract-report" samples <"$1" | awk -F'\t' '!/^</ { for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }'; }
  SAMPLER_SPARSITY=1 SAMPLER_FILE=all.report ./loops-region 3000 >/dev/null &&
    SAMPLER_SPARSITY=100 SAMPLER_SEED=3 SAMPLER_FILE=hundredth.report ./loops-region 3000 >/dev/null ||
    fail "loops.c at sparsities 1 and 100"
  opportunities=$(counted all.report) && samples=$(counted hundredth.report) || fail "loops.c: the reports do not read"
  awk -v n="$opportunities" -v s="$samples" 'BEGIN { m = n / 100; d = sqrt(n * 0.01 * 0.99); exit !(n > 100000 && (s - m) ^ 2 <= 25 * d * d) }' ||
    fail "loops.c: $samples samples of $opportunities opportunities at 1/100"
  # Loops around loops (nested.c): gzip's longest_match, an outer loop that may leave early around an inner one
  # that never runs past a fixed end, is checked once at its entry against SCEV's bounds, and so is a counted loop
  # of counted loops; an outer loop whose inner loop is bounded only by an int's range keeps its checks. The same
  # sites sample as with per-site checks.
  "$cc" -O2 -S -emit-llvm -fno-discard-value-names nested.c -o nested.ll || fail "sampler-cc -emit-llvm nested.c"
  guarded=$(awk '/^define/ { f = $0; sub(/^[^@]*@/, "", f); sub(/\(.*/, "", f) }
                 /^sampler\.loop_guard[0-9]*:/ { print f }' nested.ll | sort | uniq -c |
    awk '{ printf "%s %s, ", $2, $1 }')
  [ "$guarded" = "blocks.sampled 1, longest.sampled 1, main.sampled 3, " ] ||
    fail "nested.c: the loops checked at their entry are not the outer ones of longest() and blocks(): $guarded"
  same_as_per_site nested
  # Leaf functions' counted copies (counted.c): loops of few trips, so that B (a few hundred sites) is below most
  # countdowns at sparsity 1000 and the copies run, each loop's blocks that every iteration passes counted by its
  # iterations, where it leaves. The same sites sample as with per-site checks.
  same_as_per_site counted
  # The copies' bodies are their dispatches' own, but where the copy has a loop around a loop (runs) or calls
  # memset (spread): there it stays a function of its own, so that shrink-wrapping need not keep its saved registers
  # off the dispatch's other paths. The runs above cover both.
  "$cc" -O2 -S -emit-llvm counted.c -o counted.ll || fail "sampler-cc -emit-llvm counted.c"
  own=$(awk '/^define .*\.counted\(/ { f = $0; sub(/^[^@]*@/, "", f); sub(/\(.*/, "", f); printf "%s ", f }' counted.ll)
  [ "$own" = "spread.counted runs.counted " ] || fail "counted.c: the copies left functions of their own are: $own"
  # Sampling off, a function runs its twin without sites (the countdown does not move); sampling on, at a
  # sparsity whose countdowns stay in reach, it passes its 2 * 1000 + 1 sites. -O0 and -O2, both checks.
  for level in -O0 -O2 "-O2 -fsampler-countdown=site"; do
    "$cc" $level -fsampler-schemes=branches unsampled.c -o unsampled || fail "sampler-cc $level unsampled.c"
    off=$(./unsampled 1000) && on=$(SAMPLER_SPARSITY=1000000000000 SAMPLER_SEED=1 SAMPLER_FILE=on.report ./unsampled 1000) ||
      fail "$level: unsampled failed"
    [ "$off" = "332667 out-of-reach 0" ] || fail "$level: sampling off, the call moved the countdown: $off"
    [ "$on" = "332667 in-reach 2001" ] || fail "$level: sampling on, the call did not pass its sites: $on"
    [ "$(./unsampled 1000 twice | head -1)" = 948702 ] || fail "$level: sums() computed $(./unsampled 1000 twice)"
    # The twins have no symbol (llvm-symbolizer names their code by DWARF, as the function), and the twin of
    # sums() calls sum()'s, not sum(), which would check the countdown again.
    nm unsampled | grep 'sampled' >/dev/null && fail "$level: the twins have symbols: $(nm unsampled | grep sampled)"
    "$cc" $level -fsampler-schemes=branches -S unsampled.c -o unsampled.s || fail "sampler-cc $level -S unsampled.c"
    function_assembly unsampled.s '^\.Lsums\.unsampled:' >twin.s
    grep -Eq 'call[a-z]*[[:space:]]+\.Lsum\.unsampled' twin.s ||
      fail "$level: the twin of sums() does not call sum()'s twin:$(echo; cat twin.s)"
  done
  # The twin without sites is optimised as plain clang's code is once the markers are gone: in carry.c (bc's
  # decimal addition) the digit's carry becomes a select, not a branch on the data (bc ran 1.35x plain's time
  # with sampling off while the twin kept that branch).
  selects() { function_assembly "$1" "$2" | grep -Ec '^\s+(cmov|set)[a-z]+\s'; }  # the cmov and set instructions
  clang-19 -O2 -S carry.c -o carry-plain.s && "$cc" -O2 -S carry.c -o carry-twin.s || fail "-S carry.c"
  [ "$(selects carry-plain.s '^add_digits:')" -gt 0 ] || fail "plain clang-19 made no select in carry.c"
  [ "$(selects carry-twin.s '^\.Ladd_digits\.unsampled:')" -gt 0 ] ||
    fail "the twin of add_digits() branches on the carry:$(echo; cat carry-twin.s)"
  "$cc" -O2 carry.c -o carry && [ "$(./carry 500)" = 500 ] || fail "carry.c printed $(./carry 500)"
  # C++: an inline function with a loop in two units. Each unit emits it and its twin in its comdat group, and
  # the linker keeps one group: the twin of odd_in_squares() (outside the group) calls count_odd(), not the twin
  # in the group the linker may discard.
  for level in -O0 -O2; do
    "$cxx" $level -Wall -Werror twins_a.cpp twins_b.cpp -o twins || fail "sampler-c++ $level twins_a.cpp twins_b.cpp"
    off=$(./twins 1001) && on=$(SAMPLER_SPARSITY=1 SAMPLER_FILE=twins.report ./twins 1001) || fail "$level: twins failed"
    [ "$off" = "500 500" ] && [ "$on" = "500 500" ] || fail "$level: twins printed $off, sampling on $on"
  done
  # Structs passed by value in memory (byval.c): a function with a loop and such an argument gets no dispatch to a
  # twin (clang-19 compiled the guaranteed tail call that forwarded it into a copy over the return address, and
  # the program crashed, sampling off and on).
  for level in -O0 -O2; do
    "$cc" $level byval.c -o byval || fail "sampler-cc $level byval.c"
    off=$(./byval) || fail "$level: byval.c, sampling off, exited with $?"
    on=$(SAMPLER_SPARSITY=1 SAMPLER_FILE=byval.report ./byval) || fail "$level: byval.c, sampling on, exited with $?"
    [ "$off" = "52 103" ] && [ "$on" = "52 103" ] || fail "$level: byval.c printed $off, sampling on $on"
  done
  ;;
pairs_rules)
  # Pairs whose outcome is fixed at compile time are not sites: a constant value against constants, constants
  # outside the lvalue type's range, a variable against its copy, hidden variables, a global declared twice.
  # With the function's constants (-fsampler-compare-constants), and the per-function bound
  # (-fsampler-max-pairs): bounded() has 79 candidates, 10 assignments of a, g, 0 and the constants 3 (written 3
  # times), 5 (twice), 9 and 11 (once each), and in the 9 that are not x's declaration x's old value.
  for level in -O0 -O2; do
    "$cc" -fsampler-schemes=scalar-pairs -fsampler-compare-constants -fsampler-max-pairs=40 $level -Wall -Werror \
      pairs_rules.c -o rules ||
      fail "sampler-cc $level pairs_rules.c"
    check_sites rules pairs_rules.expected
    [ "$(cat run.out)" = "100 83 69" ] || fail "$level: the program printed $(cat run.out)"
  done
  # bounded()'s sites at each bound: the operands kept, and how many sites.
  operands() {
    "$TOOLS/extract-section" .debug_site_info "$1" |
      awk -F'\t' '$3 == "bounded" { n++; if (!seen[$8]++) list = list " " $8 } END { print n list }'
  }
  # The constants go first, least written first, 0 (the default's own) last of them; then the globals.
  for case in "0|79 a g 3 5 9 11 0 x" "40|39 a g 0 x" "30|29 a g x" "25|19 a x" "15|15 a x" "4|3 a x"; do
    bound=${case%%|*}
    SAMPLER_CC_COMPARE_CONSTANTS=1 SAMPLER_CC_MAX_PAIRS=$bound "$cc" -fsampler-schemes=scalar-pairs -O1 \
      pairs_rules.c -o bounded-$bound || fail "sampler-cc with the bound $bound"
    [ "$(operands bounded-$bound)" = "${case#*|}" ] ||
      fail "bound $bound: $(operands bounded-$bound), not ${case#*|}"
  done
  # At the bound 4 the first assignments keep theirs (source order): line 33's one (x's declaration), line 34's two.
  [ "$("$TOOLS/extract-section" .debug_site_info bounded-4 | awk -F'\t' '$3 == "bounded" { printf "%s ", $2 }')" = \
    "33 34 34 " ] || fail "bound 4: not the first assignments"
  # The default bound is far above these functions: the same sites as with no bound.
  "$cc" -fsampler-schemes=scalar-pairs -fsampler-compare-constants -O1 pairs_rules.c -o default-bound ||
    fail "sampler-cc, default bound"
  [ "$(operands default-bound)" = "79 a g 3 5 9 11 0 x" ] || fail "default bound: $(operands default-bound)"
  # Without -fsampler-compare-constants: 0 is the only constant.
  "$cc" -fsampler-schemes=scalar-pairs -O1 pairs_rules.c -o zero-only || fail "sampler-cc pairs_rules.c"
  [ "$(operands zero-only)" = "39 a g 0 x" ] || fail "without the function's constants: $(operands zero-only)"
  ;;
schemes)
  # float-kinds, bounds, coverage and atoms: every kind of float and bound type, every way of assigning
  # (declarations, =, op=, ++, --), every basic block (switch, goto), reads and writes of globals and through
  # pointers; the same sites and counters at -O0 and -O2 (pointer bounds vary from run to run: masked).
  for level in -O0 -O2; do
    "$cc" -fsampler-schemes=float-kinds,bounds,coverage,atoms $level -Wall -Werror schemes.c -o schemes ||
      fail "sampler-cc $level schemes.c"
    rm -f report
    SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./schemes >run.out 2>run.err || fail "schemes exited with $?"
    [ "$(cat run.out)" = "999997.0 0" ] || fail "$level: the program printed $(cat run.out)"
    resolved schemes report | sed -E 's/0x[0-9a-f]+/ADDRESS/g' >resolved.txt || fail "resolveSamples schemes"
    cmp -s schemes.expected resolved.txt ||
      fail "$level: sites or counters differ:$(echo; diff schemes.expected resolved.txt)"
    dwarf_agrees schemes
  done
  # coverage has the same sites and counts at every -O level, in C and C++: blocks.c (break, continue, the end
  # of an `if` before a loop, out of scopes with locals) and sites.cpp (condition variables: `if (int* p = ...)`,
  # `while (int* q = ...)`), where clang makes other blocks at -O1+ to end locals' lifetimes.
  for driver in "$cc" "$cxx -x c++"; do
    for level in -O0 -O1 -O2; do
      # shellcheck disable=SC2086
      $driver -fsampler-schemes=coverage $level -Wall -Werror blocks.c -o "blocks$level" ||
        fail "$driver $level blocks.c"
      rm -f report
      SAMPLER_SPARSITY=1 SAMPLER_FILE=report "./blocks$level" >run.out || fail "blocks $level exited with $?"
      [ "$(cat run.out)" = 100 ] || fail "$driver $level blocks.c: the program printed $(cat run.out)"
      resolved "blocks$level" report >"blocks$level.txt" || fail "resolveSamples blocks $level"
    done
    for level in -O1 -O2; do
      cmp -s blocks-O0.txt "blocks$level.txt" ||
        fail "$driver: coverage differs between -O0 and $level:$(echo; diff blocks-O0.txt "blocks$level.txt")"
    done
  done
  for level in -O0 -O2; do
    "$cxx" -fsampler-schemes=coverage $level -c sites.cpp -o "cpp$level.o" &&
      "$TOOLS/extract-section" .debug_site_info "cpp$level.o" | grep -v '^<' >"cpp$level.sites" ||
      fail "sampler-c++ $level sites.cpp"
  done
  [ -s cpp-O0.sites ] && cmp -s cpp-O0.sites cpp-O2.sites ||
    fail "sites.cpp: coverage sites differ between -O0 and -O2:$(echo; diff cpp-O0.sites cpp-O2.sites)"
  # `all` leaves atoms out; naming it adds it.
  "$cc" -fsampler-schemes=all -c schemes.c -o all.o && "$TOOLS/extract-section" .debug_site_info all.o >all.sites ||
    fail "-fsampler-schemes=all"
  grep -q 'scheme="atoms"' all.sites && fail "all includes atoms"
  grep -q 'scheme="coverage"' all.sites || fail "all has no coverage"
  ;;
choose)
  # Choosing what to instrument: exactly which functions have sites (the site information's third column), for
  # each option, its environment form and the pragma; the program computes what plain clang's computes.
  functions() {
    "$TOOLS/extract-section" .debug_site_info "$1" 2>/dev/null | awk -F'\t' '!/^</ { print $3 }' | LC_ALL=C sort -u |
      tr '\n' ' '
  }
  # chosen 'FUNCTIONS ' [OPTIONS...]: the program built with OPTIONS has sites in FUNCTIONS, prints what the plain
  # build prints, with sampling off and on, and its report resolves.
  chosen() {
    local expected=$1 how
    shift
    how="$(env | grep '^SAMPLER_CC_' | tr '\n' ' ')$*"
    "$cc" "$@" -O0 -Wall -Werror choose_main.c choose_codec.c -o chosen || fail "sampler-cc $how"
    [ "$(functions chosen)" = "$expected" ] || fail "$how: sites in '$(functions chosen)', not '$expected'"
    [ "$(./chosen)" = "$plain" ] || fail "$how: the program printed $(./chosen)"
    rm -f report
    [ "$(SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./chosen)" = "$plain" ] && resolved chosen report >/dev/null ||
      fail "$how: sampling on, the program failed or its report does not resolve"
  }
  clang-19 -O0 choose_main.c choose_codec.c -o plain && plain=$(./plain) && [ "$plain" = "37 666" ] ||
    fail "plain clang-19: choose printed $plain"
  everything='clamp codec_decode codec_encode codec_init codec_mask main parse_number '
  chosen "$everything"
  chosen 'clamp codec_decode codec_init codec_mask main parse_number ' -fsampler-exclude-function=codec_encode
  chosen 'main parse_number ' -fsampler-exclude-function='codec_*' -fsampler-exclude-function=clamp
  chosen 'codec_decode codec_encode codec_init codec_mask ' -fsampler-include-function='codec_*'
  chosen 'codec_decode codec_encode ' -fsampler-include-function='codec_*' -fsampler-exclude-function=codec_init \
    -fsampler-include-function=clamp -fsampler-exclude-function=codec_mask -fsampler-exclude-function=clamp
  # The original's idiom: only the functions included, '*' excluding the rest.
  chosen 'main ' -fsampler-include-function=main -fsampler-exclude-function='*'
  chosen '' -fsampler-exclude-function='*'
  # Files: the file of the definition (codec_mask's is the header), by base name without a '/', by the path as
  # compiled with one.
  chosen 'clamp codec_mask main parse_number ' -fsampler-exclude-file=choose_codec.c
  chosen 'clamp codec_decode codec_encode codec_init main parse_number ' -fsampler-exclude-file='*.h'
  chosen 'codec_mask ' -fsampler-include-file='choose_*.h'
  chosen '' -fsampler-include-file='*/choose_codec.c'
  "$cc" -fsampler-include-file='*/choose_codec.c' choose_main.c "$PWD/choose_codec.c" -o absolute ||
    fail "sampler-cc with an absolute path"
  [ "$(functions absolute)" = 'codec_decode codec_encode codec_init ' ] ||
    fail "-fsampler-include-file='*/choose_codec.c', an absolute path: sites in $(functions absolute)"
  # Both kinds at once: a function is instrumented when both choose it.
  chosen 'codec_decode codec_init ' -fsampler-include-file=choose_codec.c -fsampler-exclude-function=codec_encode
  # The environment's forms, comma-separated (blanks around a pattern are left out), added to the command line's.
  SAMPLER_CC_EXCLUDE_FUNCTION='codec_encode, clamp' chosen 'codec_decode codec_init codec_mask main parse_number '
  SAMPLER_CC_INCLUDE_FUNCTION='main,codec_init' chosen 'codec_init main '
  SAMPLER_CC_EXCLUDE_FILE='choose_codec.c' chosen 'clamp codec_mask main parse_number '
  SAMPLER_CC_INCLUDE_FILE='choose_main.c' chosen 'clamp main parse_number '
  SAMPLER_CC_EXCLUDE_FUNCTION=main chosen 'codec_decode codec_encode codec_init codec_mask parse_number ' \
    -fsampler-exclude-function=clamp
  # A bad pattern is a usage error, before clang runs.
  "$cc" -fsampler-exclude-function= -c choose_codec.c -o bad.o 2>err
  status=$?
  [ "$status" = 2 ] && grep -q "empty pattern in -fsampler-exclude-function=" err && [ ! -e bad.o ] ||
    fail "an empty pattern: status $status, $(cat err)"
  SAMPLER_CC_INCLUDE_FILE='a.c,,b.c' "$cc" -c choose_codec.c -o bad.o 2>err
  status=$?
  [ "$status" = 2 ] && grep -q "empty pattern in SAMPLER_CC_INCLUDE_FILE='a.c,,b.c'" err ||
    fail "an empty pattern in the environment: status $status, $(cat err)"
  # A unit left without sites, and one without functions, build and link with the others; no site information.
  printf 'const int choose_table[] = {1, 2, 3};\n' >data.c
  "$cc" -fsampler-exclude-function='*' -c choose_codec.c -o codec.o && "$cc" -c data.c -o data.o &&
    "$cc" choose_main.c codec.o data.o -o mixed || fail "units without sites do not build"
  readelf -S codec.o data.o | grep debug_site_info >/dev/null && fail "a unit without sites has site information"
  [ "$(functions mixed)" = 'clamp main parse_number ' ] || fail "mixed: sites in $(functions mixed)"
  [ "$(SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./mixed)" = "$plain" ] && resolved mixed report >/dev/null ||
    fail "mixed: the program failed or its report does not resolve"
  # A function left out is compiled as plain clang compiles it (the same instructions; local labels and
  # directives aside): codec_encode is, codec_decode (instrumented) is not. codec_mask goes too: at -O2 it is
  # inlined into codec_encode, and an instrumented function's sites go with its code.
  instructions() { function_assembly "$1" "^$2:" | grep -E '^\s+[a-z]' | sed -E 's/\.L[A-Za-z_.]*[0-9_]*/.L/g'; }
  for level in -O0 -O2; do
    clang-19 $level -gline-tables-only -gcolumn-info -S choose_codec.c -o plain.s &&
      "$cc" $level -fsampler-exclude-function=codec_encode -fsampler-exclude-function=codec_mask -S choose_codec.c \
        -o chosen.s || fail "-S $level"
    [ -n "$(instructions plain.s codec_encode)" ] && cmp -s <(instructions plain.s codec_encode) \
      <(instructions chosen.s codec_encode) ||
      fail "$level: codec_encode left out differs from plain clang's:$(echo; diff plain.s chosen.s)"
    cmp -s <(instructions plain.s codec_decode) <(instructions chosen.s codec_decode) &&
      fail "$level: codec_decode, instrumented, is plain clang's code"
  done
  # The pragma, before the definition and after it: the same sites at -O0 and -O2, no warning (-Werror), and the
  # functions it names compiled as plain clang compiles them (at -O0 only for early: late's body had been
  # rewritten when the pragma came, and -O0 keeps a copy its markers made).
  for level in -O0 -O2; do
    "$cc" $level -Wall -Werror choose_pragma.c -o pragma && [ "$(./pragma)" = "4 6 3 4" ] ||
      fail "$level: choose_pragma.c failed or printed $(./pragma)"
    [ "$(functions pragma)" = 'kept main ' ] || fail "$level: the pragma left sites in $(functions pragma)"
    clang-19 $level -gline-tables-only -gcolumn-info -S choose_pragma.c -o plain.s 2>/dev/null &&
      "$cc" $level -S choose_pragma.c -o pragma.s || fail "-S $level choose_pragma.c"
    named=early
    [ $level = -O2 ] && named="early late skip_this"
    for function in $named; do
      [ -n "$(instructions plain.s $function)" ] &&
        cmp -s <(instructions plain.s $function) <(instructions pragma.s $function) ||
        fail "$level: $function, named by the pragma, differs from plain clang's"
    done
  done
  # Plain clang ignores the pragma, silently unless asked (-Wunknown-pragmas, in -Wall).
  clang-19 -c choose_pragma.c -o plain.o 2>err && [ ! -s err ] || fail "plain clang-19 and the pragma: $(cat err)"
  # Malformed pragmas: a warning each, naming the file and line, and ignored; the compile goes on.
  printf '%s\n' '#pragma sampler_exclude_function' '#pragma sampler_exclude_function()' \
    '#pragma sampler_exclude_function(f g)' '#pragma sampler_exclude_function(f' \
    '#pragma sampler_exclude_function(f) g' '#pragma sampler_exclude_function(1)' \
    'int f(int x) { return x > 0 ? x : -x; }' >malformed.c
  "$cc" -c malformed.c -o malformed.o 2>err || fail "malformed pragmas failed the compile: $(cat err)"
  [ "$(grep -c "^malformed.c:[1-6]:[0-9]*: warning: malformed '#pragma sampler_exclude_function'" err)" = 6 ] ||
    fail "not one warning per malformed pragma:$(echo; cat err)"
  [ "$(functions malformed.o)" = 'f ' ] || fail "a malformed pragma left out f: sites in $(functions malformed.o)"
  # C++: the qualified name, a wildcard over scopes, a symbol (a constructor's variants by its name), a function
  # in an anonymous namespace, a template; a lambda goes with the function that holds it; the pragma.
  cpp_chosen() {
    local expected=$1
    shift
    "$cxx" "$@" -Wall -Werror choose.cpp -o choose-cpp || fail "sampler-c++ $*"
    [ "$(functions choose-cpp)" = "$expected" ] || fail "$*: sites in '$(functions choose-cpp)', not '$expected'"
    [ "$(./choose-cpp)" = "9 2 6 14 1" ] || fail "$*: the program printed $(./choose-cpp)"
  }
  cpp_chosen 'Codec apply decode encode helper main operator() twice<double> twice<int> ~Codec '
  cpp_chosen 'apply helper main operator() twice<double> twice<int> ' -fsampler-exclude-function='ns::Codec::*'
  cpp_chosen 'Codec apply decode helper main operator() twice<double> twice<int> ~Codec ' \
    -fsampler-exclude-function='*::encode'
  cpp_chosen 'Codec apply encode helper main operator() twice<double> twice<int> ~Codec ' \
    -fsampler-exclude-function=_ZNK2ns5Codec6decodeEi
  cpp_chosen 'Codec ' -fsampler-include-function=ns::Codec::Codec
  cpp_chosen 'Codec decode encode helper main twice<double> twice<int> ~Codec ' -fsampler-exclude-function=apply
  cpp_chosen 'Codec apply decode encode main operator() ~Codec ' -fsampler-exclude-function=twice \
    -fsampler-exclude-function='(anonymous namespace)::helper'
  cpp_chosen 'Codec apply decode helper main operator() twice<double> twice<int> ~Codec ' -DPRAGMA
  ;;
gobject)
  # g-object-unref in a GLib program: the object's state just before each g_object_unref.
  flags=$(pkg-config --cflags --libs gobject-2.0) || {
    fail "gobject-2.0 not found (scripts/setup.sh installs libglib2.0-dev)"
    finish
  }
  for level in -O0 -O2; do
    # shellcheck disable=SC2086
    "$cc" -fsampler-schemes=g-object-unref $level -Wall -Werror unref.c $flags -o unref ||
      fail "sampler-cc $level unref.c"
    rm -f report
    SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./unref >run.out 2>run.err || fail "unref exited with $?"
    grep -q "g_object_unref: assertion 'G_IS_OBJECT (object)' failed" run.err || fail "no GLib critical: $(cat run.err)"
    resolved unref report >resolved.txt || fail "resolveSamples unref"
    cmp -s unref.expected resolved.txt ||
      fail "$level: sites or counters differ:$(echo; diff unref.expected resolved.txt)"
  done
  ;;
many_sites)
  # A unit with 10^5 sites (branches in one function and across 1,000 functions) builds, runs and resolves.
  awk 'BEGIN {
    print "int sink;"
    for (f = 0; f < 1000; f++) {
      printf "int f%d(int x) {\n", f
      for (i = 0; i < 100; i++) printf "  if (x == %d) sink++;\n", i
      print "  return sink;\n}"
    }
    print "int main(void) { int t = 0;"
    for (f = 0; f < 1000; f++) printf "  t += f%d(%d);\n", f, f % 100
    print "  return t < 0; }"
  }' >many.c
  "$cc" -fsampler-schemes=branches -O1 many.c -o many || fail "a unit with 10^5 sites does not build"
  SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./many || fail "the 10^5-site program failed"
  [ "$(resolved many report | wc -l)" = 100000 ] || fail "not 10^5 sites: $(resolved many report | wc -l)"
  [ "$(resolved many report | awk -F'\t' '$8 == 1 { n++ } END { print n }')" = 1000 ] ||
    fail "not 1,000 true branches"
  ;;
site_info)
  # The site text is in a non-allocated .debug_site_info section; one unit per object; the signature is the
  # same for the same source and flags, different for another source; -fno-sampler and -E add nothing.
  "$cc" -c sites.c -o a.o && "$cc" -c sites.c -o b.o || fail "compiling twice failed"
  "$TOOLS/extract-section" .debug_site_info a.o >a.sites && "$TOOLS/extract-section" .debug_site_info b.o >b.sites ||
    fail "extract-section failed"
  readelf -SW a.o | grep ' .debug_site_info ' | grep ' A ' >/dev/null && fail ".debug_site_info is allocated"
  readelf -SW a.o | grep ' .debug_site_info ' >/dev/null | grep ' A ' && fail ".debug_site_info is allocated"
  units=$(grep -o 'unit="[0-9a-f]*"' a.sites | sort -u | wc -l)
  [ "$units" = 1 ] || fail "$units unit signatures in one object"
  grep -Eq '^<sites unit="[0-9a-f]{32}" scheme="(function-entries|branches|returns)">$' a.sites ||
    fail "bad sites tag: $(head -1 a.sites)"
  sed 's/clamp(50/clamp(51/' sites.c >other.c
  "$cc" -c other.c -o other.o && "$TOOLS/extract-section" .debug_site_info other.o >other.sites || fail "other.c"
  [ "$(grep -o 'unit="[0-9a-f]*"' other.sites | sort -u)" != "$(grep -o 'unit="[0-9a-f]*"' a.sites | sort -u)" ] ||
    fail "two different units have the same signature"
  # Two units in one program, compiled in one command: both register, both resolve.
  printf 'int helper(int x) { return x > 1 ? x : 1; }\n' >second.c
  "$cc" sites.c second.c -o two && SAMPLER_SPARSITY=1 SAMPLER_FILE=two.report ./two >/dev/null || fail "two units"
  [ "$(grep -o '<samples unit="[0-9a-f]*"' two.report | sort -u | wc -l)" = 2 ] || fail "not two units in the report"
  resolved two two.report >/dev/null || fail "the two units do not resolve"
  "$cc" -fno-sampler -c sites.c -o plain.o || fail "-fno-sampler failed"
  readelf -S plain.o | grep debug_site_info >/dev/null && fail "-fno-sampler still instrumented"
  nm plain.o | grep sampler_ >/dev/null && fail "-fno-sampler: the object references the runtime"
  "$cc" -fno-sampler plain.o -o plain && ./plain >/dev/null || fail "a -fno-sampler program does not link or run"
  SAMPLER_CC_SCHEMES=branches "$cc" -c sites.c -o env.o && "$TOOLS/extract-section" .debug_site_info env.o >env.sites ||
    fail "SAMPLER_CC_SCHEMES=branches failed"
  [ "$(grep -o 'scheme="[^"]*"' env.sites | sort -u)" = 'scheme="branches"' ] || fail "SAMPLER_CC_SCHEMES ignored"
  [ "$(grep -o 'scheme="[^"]*"' a.sites | sort -u | tr '\n' ' ')" = \
    'scheme="branches" scheme="function-entries" scheme="returns" scheme="scalar-pairs" ' ] ||
    fail "the default schemes: $(grep -o 'scheme="[^"]*"' a.sites | sort -u)"
  "$cc" -fsampler-timestamps=both sites.c -o stamped && SAMPLER_SPARSITY=1 SAMPLER_FILE=stamps ./stamped >/dev/null ||
    fail "-fsampler-timestamps=both failed"
  grep -q '<timestamps unit=.* scheme="branches" when="first"' stamps || fail "no first timestamps in the report"
  ;;
crash)
  # A crash in an automatically instrumented program still writes the samples and a main-backtrace whose
  # frames llvm-symbolizer names.
  "$cc" -fsampler-schemes=$three -g sites.c -o sites || fail "sampler-cc failed"
  { SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./sites crash; } 2>/dev/null
  status=$?
  [ "$status" = 139 ] || fail "the crash run exited with $status, not 128+SIGSEGV"
  resolved sites report | grep -x $'function-entries\tsites.c\t18\tcrash_here\t0\t1' >/dev/null ||
    fail "no samples for crash_here: $(resolved sites report)"
  build_id=$(readelf -n sites | sed -n 's/.*Build ID: //p')
  [ -n "$build_id" ] || fail "no build ID: the driver must link with --build-id"
  mkdir -p "symbols/.build-id/${build_id:0:2}"
  objcopy --only-keep-debug sites "symbols/.build-id/${build_id:0:2}/${build_id:2}.debug"
  "$TOOLS/resolve-backtrace" report >markup || fail "resolve-backtrace failed"
  "$SYMBOLIZER" --filter-markup --debug-file-directory=symbols <markup >symbolized 2>/dev/null
  grep -Eq '^ *#0 +0x[0-9a-f]+ crash_here .*sites.c:18:' symbolized ||
    fail "frame 0 is not crash_here: $(cat symbolized)"
  grep -Eq '^ *#1 +0x[0-9a-f]+ main .*sites.c:21:' symbolized || fail "frame 1 is not main: $(cat symbolized)"
  ;;
invalid_code)
  # Code clang rejects gets clang's own diagnostics and exit status, byte for byte.
  printf 'int main(void) {\n  return undeclared;\n}\n' >bad.c
  clang-19 -c bad.c -o bad.o 2>expected.err
  expected_status=$?
  "$cc" -c bad.c -o bad.o 2>err
  status=$?
  [ "$status" = "$expected_status" ] && [ "$status" != 0 ] || fail "status $status, clang's $expected_status"
  cmp -s expected.err err || fail "diagnostics differ:$(echo; diff expected.err err)"
  # A warning is a warning, and -Werror makes it an error, as with clang.
  printf 'int f(int x) { if (x = 2) return 1; return 0; }\n' >warn.c
  "$cc" -c warn.c -o warn.o 2>err || fail "a warning failed the compile"
  grep -q 'Wparentheses' err || fail "clang's warning is missing: $(cat err)"
  "$cc" -Werror -c warn.c -o warn.o 2>/dev/null && fail "-Werror did not fail"
  ;;
configure_probes)
  # What configure scripts ask of a compiler.
  run() { "$@" >out 2>err; status=$?; ran="$*"; }
  run "$cc" --version
  [ "$status" = 0 ] && head -1 out | grep -x 'sampler-cc (sampler) [0-9.]*' >/dev/null &&
    grep -q 'clang version 19' out ||
    fail "--version: $(cat out err)"
  run "$cc" -v
  [ "$status" = 0 ] && grep -q 'clang version 19' err || fail "-v: $status $(cat err)"
  printf '#include <stdio.h>\nint main(void) { return 0; }\n' >conftest.c
  run "$cc" -E conftest.c
  [ "$status" = 0 ] && grep -q 'int main' out && ! grep -q sampler out || fail "-E: $status"
  run "$cc" -M conftest.c
  [ "$status" = 0 ] && grep -q '^conftest.o: conftest.c' out || fail "-M: $(cat out err)"
  run "$cc" -MD -MF conftest.d -c conftest.c -o conftest.o
  [ "$status" = 0 ] && grep -q 'conftest.o:' conftest.d && readelf -S conftest.o | grep debug_site_info >/dev/null ||
    fail "-MD with a compile: $(cat err)"
  run "$cc" conftest.c -o conftest
  [ "$status" = 0 ] && ./conftest || fail "compile and link of conftest.c: $(cat err)"
  run "$cc" -c conftest.c -o -
  [ "$status" = 0 ] && head -c 4 out | grep ELF >/dev/null || fail "-o -: $status"
  printf -- '-c conftest.c -o rsp.o\n' >args.rsp
  run "$cc" @args.rsp
  [ "$status" = 0 ] && readelf -S rsp.o | grep debug_site_info >/dev/null || fail "@args.rsp: $(cat err)"
  printf '\t.globl f\nf:\n\tret\n' >asm.s
  run "$cc" -Werror -c asm.s -o asm.o
  [ "$status" = 0 ] && [ ! -s err ] || fail "an assembly input: $(cat err)"
  printf 'int g(void) { return 1; }\n' >g.c
  run "$cc" -fPIC -shared g.c -o libg.so
  [ "$status" = 0 ] && readelf -d libg.so | grep 'libsampler' >/dev/null || fail "-shared: $(cat err)"
  run "$cc" -c conftest.c g.c
  [ "$status" = 0 ] && [ -f conftest.o ] && [ -f g.o ] || fail "two sources in one command: $(cat err)"
  run "$cc" -### -c conftest.c
  [ "$status" = 0 ] && grep -q 'sampler-plugin.so' err || fail "-###: $(cat err)"
  run "$cc" -print-prog-name=ld
  [ "$status" = 0 ] && [ -s out ] || fail "-print-prog-name"
  run "$cc" -fsampler-schemes=nonsense -c conftest.c
  [ "$status" = 2 ] && grep -q "unknown instrumentation scheme 'nonsense'" err || fail "a bad scheme: $status"
  run "$cc" --help
  [ "$status" = 0 ] && grep -q -- '-fsampler-schemes=LIST' out || fail "--help"
  ;;
autotools)
  # A real autoconf/automake project: CC=sampler-cc ./configure && make && make check, then the report.
  command -v autoreconf >/dev/null || {
    fail "autoreconf not found (scripts/setup.sh installs autoconf, automake)"
    finish
  }
  mkdir -p proj && cd proj || exit 1
  cp ../sites.c ../helper.h .
  printf 'AC_INIT([sites], [1.0])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\nAC_CHECK_HEADERS([stdio.h])\n%s\n' \
    'AC_CONFIG_FILES([Makefile])' >configure.ac
  printf 'AC_OUTPUT\n' >>configure.ac
  printf 'bin_PROGRAMS = sites\nsites_SOURCES = sites.c helper.h\nTESTS = sites\n' >Makefile.am
  autoreconf -i >autoreconf.log 2>&1 || { fail "autoreconf: $(tail -5 autoreconf.log)"; finish; }
  export SAMPLER_CC_SCHEMES=$three
  CC=$cc ./configure >configure.log 2>&1 || fail "configure with CC=sampler-cc: $(tail -20 config.log)"
  grep -q "checking whether the C compiler works... yes" configure.log || fail "configure's compiler probe"
  make >make.log 2>&1 || fail "make: $(tail -20 make.log)"
  SAMPLER_SPARSITY=1 SAMPLER_FILE=../check-report make check >check.log 2>&1 || fail "make check: $(tail -20 check.log)"
  cd .. || exit 1
  resolved proj/sites check-report >resolved.txt || fail "resolveSamples of the make check report"
  cmp -s sites.expected resolved.txt || fail "autotools build: sites differ:$(echo; diff sites.expected resolved.txt)"
  ;;
cmake_project)
  # A CMake project with CMAKE_C_COMPILER=sampler-cc and CMAKE_CXX_COMPILER=sampler-c++.
  mkdir -p src && cp sites.c sites.cpp helper.h src/ || exit 1
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(sites C CXX)\n%s\n%s\n' \
    'add_executable(sites sites.c)' 'add_executable(sites-cpp sites.cpp)' >src/CMakeLists.txt
  SAMPLER_CC_SCHEMES=$three cmake -S src -B build -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >cmake.log 2>&1 || fail "cmake configure: $(tail -20 cmake.log)"
  SAMPLER_CC_SCHEMES=$three cmake --build build >build.log 2>&1 || fail "cmake --build: $(tail -20 build.log)"
  cp build/sites build/sites-cpp . || exit 1
  # CMake compiles by absolute path from build/: the files are named as the DWARF line table names them, relative
  # to the directory build/ and src/ have in common.
  sed -e "s#\tsites.c\t#\tsrc/sites.c\t#" -e "s#\t\./helper.h\t#\tsrc/helper.h\t#" sites.expected \
    >cmake-sites.expected
  sed "s#\tsites.cpp\t#\tsrc/sites.cpp\t#" sites_cpp.expected >cmake-sites-cpp.expected
  check_sites sites cmake-sites.expected
  check_sites sites-cpp cmake-sites-cpp.expected
  ;;
plugin_arguments)
  # The plugin checks its arguments as the drivers check their options (instrumentor/plugin/arguments.h): clang
  # loading it directly with a value the driver would refuse fails with the driver's words, not a silent default.
  plugin=$DRIVERS/sampler-plugin.so
  printf 'int g(int);\nint f(int x) {\n  int y = g(x);\n  if (y > 2) return 1;\n  return 0;\n}\n' >f.c
  run() { clang-19 -fplugin="$plugin" -fpass-plugin="$plugin" "$@" -c f.c -o f.o >out 2>err; status=$?; ran="$*"; }
  refused() {  # refused ARGUMENT MESSAGE: clang fails with exactly this one error
    run "-fplugin-arg-sampler-$1"
    expect 1 '' "error: sampler plugin: $2\n1 error generated.\n"
  }
  refused countdown=regions "invalid value 'regions' for -fplugin-arg-sampler-countdown (region, site)"
  refused countdown= "invalid value '' for -fplugin-arg-sampler-countdown (region, site)"
  refused timestamps=always \
    "invalid value 'always' for -fplugin-arg-sampler-timestamps (none, first, last, both)"
  refused schemes=branches,brnaches \
    "unknown instrumentation scheme 'brnaches' in -fplugin-arg-sampler-schemes=branches,brnaches"
  refused schemes=data "unknown instrumentation scheme 'data' in -fplugin-arg-sampler-schemes=data"
  refused max-pairs=1000000000 \
    "invalid value '1000000000' for -fplugin-arg-sampler-max-pairs (a number of sites, 0 to 999999999)"
  refused max-pairs=-1 "invalid value '-1' for -fplugin-arg-sampler-max-pairs (a number of sites, 0 to 999999999)"
  refused exclude-function= "unknown argument 'exclude-function='"
  refused sparsity=100 "unknown argument 'sparsity=100'"
  # What the drivers pass is taken: `all`, each value, and the schemes in the unit's order whatever the list's.
  run -fplugin-arg-sampler-schemes=returns,all,atoms -fplugin-arg-sampler-timestamps=both \
    -fplugin-arg-sampler-countdown=site -fplugin-arg-sampler-max-pairs=0 -gline-tables-only -gcolumn-info
  expect 0 '' ''
  schemes=$(readelf -p .debug_site_info f.o | sed -n 's/.*<sites unit="[0-9a-f]*" scheme="\([a-z-]*\)">.*/\1/p' |
    tr '\n' ' ')
  [ "$schemes" = "function-entries branches returns scalar-pairs bounds coverage " ] ||
    fail "the unit's schemes: $schemes"
  ;;
installed)
  # The installed drivers find the installed plugin and runtime (the packaging_install fixture's prefix).
  cc=$PREFIX/bin/sampler-cc
  [ -x "$cc" ] && [ "$(readlink "$PREFIX/bin/sampler-c++")" = sampler-cc ] || fail "bin/sampler-cc, bin/sampler-c++"
  [ -f "$PREFIX/lib/sampler/sampler-plugin.so" ] || fail "lib/sampler/sampler-plugin.so not installed"
  [ -s "$PREFIX/share/man/man1/sampler-cc.1" ] || fail "no man page"
  SAMPLER_CC_VERBOSE=1 "$cc" -fsampler-schemes=$three sites.c -o sites 2>verbose.txt ||
    fail "the installed sampler-cc failed"
  grep -q "$PREFIX/lib/sampler/sampler-plugin.so" verbose.txt || fail "not the installed plugin: $(cat verbose.txt)"
  ldd ./sites | grep "$PREFIX/.*libsampler.so" >/dev/null || fail "not the installed runtime: $(ldd ./sites)"
  check_sites sites sites.expected
  ;;
*)
  fail "unknown case"
  ;;
esac
finish
