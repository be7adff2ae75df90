#!/usr/bin/env bash
# Runs scripts/demo.sh (the README's first command) on the built tree, without set-up or build, and checks that
# each step of the story happened, on the program sampler-cc instrumented automatically where sampler-cc is built
# (the hand-instrumented one in sanitizer builds): the site information, 40 runs on different inputs with some
# crashes (sent through sampler-run to a collector the demo starts and stops, analysed from its database),
# resolved samples, sampler-analyze's ranking with a predicate true in crashing runs only first and the known cause
# of examples/wordfreq.c's crash among the first (named by its file, line and function, and by its predicate as
# the source writes it) and its HTML page, and a
# crash stack symbolized down to the crashing function's source line.
# With the argument "clean", demo.sh builds what it needs itself, in an empty build directory, as on a fresh
# machine: where this build has sampler-cc (LLVM and Clang 19 found), the demo's build must have built it and
# used it.
# Environment: BUILD_DIR, SOURCE_DIR, SCRATCH.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || exit 1
out=$SCRATCH/demo.out

# The time is reported, not checked: a loaded machine must neither fail this test nor make it pass vacuously
# (the goal, under a minute on a built tree, is a figure to watch, printed on success). Every check below
# waits for demo.sh to finish and reads what it did.
start=$SECONDS
if [ "${1:-built}" = clean ]; then
  demo_build=$SCRATCH/build
  "$SOURCE_DIR/scripts/demo.sh" --no-setup "$demo_build" >"$out" 2>"$SCRATCH/demo.err" ||
    { cat "$SCRATCH/demo.err" >&2; fail "demo.sh exited with status $?"; }
else
  demo_build=$BUILD_DIR
  "$SOURCE_DIR/scripts/demo.sh" --no-setup --no-build "$BUILD_DIR" >"$out" 2>"$SCRATCH/demo.err" ||
    { cat "$SCRATCH/demo.err" >&2; fail "demo.sh exited with status $?"; }
fi
elapsed=$((SECONDS - start))
[ -s "$SCRATCH/demo.err" ] && fail "demo.sh wrote on stderr: $(cat "$SCRATCH/demo.err")"

expect() { grep -Eq -- "$1" "$out" || fail "no line matching '$1' in the demo's output"; }
# The source line of a site's recording macro (the site information names it: tests/tools, case site_lines).
source=$SOURCE_DIR/examples/wordfreq.c
line_of() { grep -nF -- "$1" "$source" | head -1 | cut -d: -f1; }
cause=$(line_of 'SAMPLER_BRANCH(too_long,')
fault=$(line_of 'SAMPLER_BRANCH(vowel_initial,') # count_initials() reads word[0] of a slot without a word
[ -n "$cause" ] && [ -n "$fault" ] || fail "the sites too_long and vowel_initial are not in $source"
# The program the story runs: built by sampler-cc where it is built. Its branch at the cause is the predicate
# as written: the macro's argument (the `?:` SAMPLER_BRANCH expands to) or the whole invocation (the `if`); both
# are the same predicate, and which of the two is sampled in more crashing runs depends on the seeds. (This
# build's sampler-cc says whether the machine can build it; a clean demo build must then have built it too.)
if [ -x "$BUILD_DIR/instrumentor/sampler-cc" ]; then
  name=sampler-example-wordfreq-auto
  predicate='\((SAMPLER_BRANCH\(too_long, )?length > WORD_CAPACITY\)?\) is true'
  expect '^    The program: examples/wordfreq\.c, a word counter \(sampler-example-wordfreq-auto FILE\), built by'
  expect '^    \$ cd examples && sampler-cc -DSAMPLER_UNINSTRUMENTED -O2 wordfreq\.c -o sampler-example-wordfreq-auto$'
else
  name=sampler-example-wordfreq
  predicate='\(length > WORD_CAPACITY\) is true'
  expect '^    The program: examples/wordfreq\.c, a word counter \(sampler-example-wordfreq FILE\), instrumented'
fi
expect "^ +--seed SEED -- $name inputs/text-SEED\\.txt\$"

for step in 1 2 3 4 5; do expect "^==> $step\. "; done
expect '^    [0-9]+ sites in [0-9]+ schemes:'
# Step 2: 40 runs, five to a line ("  SEED: exit 0" or "  SEED: SIGSEGV"), both outcomes present.
runs=$(grep -Eo '[0-9]+: (exit 0|SIG[A-Z]+)' "$out" | wc -l)
[ "$runs" -eq 40 ] || fail "$runs runs listed, not 40"
crashes=$(grep -Eo '[0-9]+: SIGSEGV' "$out" | wc -l)
[ "$crashes" -gt 0 ] && [ "$crashes" -lt 40 ] || fail "expected both crashing and clean runs, got $crashes crashes"
expect "^    Outcomes, $crashes of 40 runs crashed"
# ... sent through sampler-run to the collector the demo started on loopback, and analysed from its database.
expect '^    sampler-collector: listening on 127\.0\.0\.1:[0-9]+ '
expect '^    The collector stored 40 reports '
expect '^    \$ sampler-analyze --database sqlite:reports\.db --app wordfreq '
# Step 3: a resolved branches line of the program.
expect $'^    branches\twordfreq\\.c\t[0-9]+\tcount_word\t[0-9]+\t[^\t]+\t[0-9]+\t[0-9]+$'
# Step 4: sampler-analyze's table. Its first row is chosen by elimination round 1 and is true in crashing runs
# only; the cause is among the rows shown, true in crashing runs only too. (With sampler-cc's scalar-pairs, the
# state the bug leaves, an entry whose count is 0, compared many times by qsort's by_count(), is sampled true in
# more crashing runs than the cause's branch, which runs once a run: it may rank first, and the cause, with the
# same failing runs, just after it.) ranked.tsv holds the same; the HTML page is written and named, and shows the
# cause; the top predicate's site is shown from the site information and the source.
number='[0-9]\.[0-9]{4}'
# (Each text is captured before it is searched: under pipefail, `grep -q` leaving a pipe early can fail it.)
table=$(grep -E -A8 '^    rank +round +Importance +Increase +Failure +Context' "$out")
first_row=$(sed -n 2p <<<"$table")
grep -Eq "^    1 +1 +$number +$number +1\.0000 +$number +[1-9][0-9]* +0  wordfreq\.c:[0-9]+ " <<<"$first_row" ||
  fail "the first ranked predicate is not of round 1, true in crashing runs only: '$first_row'"
grep -Eq "^    [1-8] +[-0-9]+ +$number +$number +1\.0000 +$number +[1-9][0-9]* +0  wordfreq\.c:$cause \
count_word\(\): $predicate\$" <<<"$table" ||
  fail "the cause at wordfreq.c:$cause is not among the first rows, true in crashing runs only"
IFS=$'\t' read -r _ round _ _ _ _ _ _ _ _ _ _ file line function _ top < <(sed -n 2p "$demo_build/demo/ranked.tsv")
[ "$round:$file" = "1:wordfreq.c" ] && grep -q "  $file:$line $function(): " <<<"$first_row" ||
  fail "ranked.tsv's first predictor is round $round, $file:$line $function $top, the table's: '$first_row'"
ranked_sites=$(cut -f13,14,15,17 "$demo_build/demo/ranked.tsv")
grep -Eq "^wordfreq\.c	$cause	count_word	$predicate\$" <<<"$ranked_sites" || fail "ranked.tsv does not hold the cause"
expect "^    Its site, from the site information: file wordfreq\.c, line $line, function $function\(\):\$"
expect "^    examples/wordfreq\.c:$line: "
expect "in a browser: $demo_build/demo/html/index\.html\$"
grep -q 'length &gt; WORD_CAPACITY) is true' "$demo_build/demo/html/index.html" ||
  fail "the HTML page does not show the cause"
# Step 5: the crash, in count_initials() (frame 0 or its innermost inlined frame), called from main.
expect '^    Crashed with signal 11 \(SIGSEGV\)'
expect "^ +#0(\\.1)? +0x[0-9a-f]+ count_initials [^ ]*examples/wordfreq\\.c:$fault:[0-9]+ "
expect '^ +#[0-9.]+ +0x[0-9a-f]+ main [^ ]*examples/wordfreq\.c:[0-9]+'
expect "^    The stack shows where the program died: in count_initials\\(\\)"

[ "$failures" -eq 0 ] && echo "demo: all checks passed in ${elapsed}s"
[ "$failures" -eq 0 ]
