#!/bin/bash
# The planted-bug corpus: examples/twobugs.c has two independent bugs with known causes, the branch
# sites `negative_quantity` (SIGSEGV later) and `long_name` (SIGABRT later). RUNS runs at SAMPLER_SPARSITY=100;
# sampler-analyze must put each cause on top of its own elimination round. Cases:
#   planted_bugs   the table (TSV and JSON): rounds 1 and 2 are the two causes, each with its crash group
#   html_chromium  the HTML page loaded in headless Chromium: the DOM has the rows and the top predictor; the
#                  screenshot is kept as SCRATCH/page.png (a test artifact in the build directory)
# Usage: planted_bugs_test.sh CASE PROGRAM RUNS, with TOOLS and SCRATCH in the environment.
set -u
case_name=$1
program=$2
runs=$3

source "$SOURCE_DIR/tests/tools/blackbox.sh"

mkdir -p reports
for seed in $(seq 1 "$runs"); do
  # A run that crashes is the point: its status is not checked, its report is. The group's stderr is closed
  # too: bash reports a child killed by a signal there.
  { SAMPLER_SPARSITY=100 SAMPLER_SEED=$seed SAMPLER_FILE=reports/run-$seed.txt "$program" "$seed" \
    >/dev/null 2>&1; } 2>/dev/null
  [ -s "reports/run-$seed.txt" ] || fail "run $seed wrote no report"
done

negative='(quantity < 0) is true'
long='(name_length > NAME_CAPACITY) is true'

case $case_name in
  planted_bugs)
    "$TOOLS/sampler-analyze" -j2 --sites "$program" reports >table.tsv 2>err ||
      fail "exit status $? (stderr: $(cat err))"
    [ -s err ] && fail "unexpected stderr: $(cat err)"
    # Column 2 is the round, column 17 the predicate.
    first=$(awk -F'\t' '$2 == "1" { print $17 }' table.tsv)
    second=$(awk -F'\t' '$2 == "2" { print $17 }' table.tsv)
    case "$first|$second" in
      "$negative|$long" | "$long|$negative") ;;
      *) fail "rounds 1 and 2 are '$first' and '$second', expected the two causes:$(echo; cat table.tsv)" ;;
    esac
    [ "$(awk -F'\t' '$2 == "3"' table.tsv)" = "" ] || fail "a third round: $(awk -F'\t' '$2 == "3"' table.tsv)"
    [ "$(head -1 table.tsv | cut -f1-3,17)" = $'rank\tround\timportance\tpredicate' ] ||
      fail "header: $(head -1 table.tsv)"
    # JSON: each round's crash groups; the SIGSEGV group goes with bug 1, the SIGABRT group with bug 2.
    "$TOOLS/sampler-analyze" -j1 --format json --sites "$program" reports >table.json 2>err || fail "json: status $?"
    grep -q '"signature": "SIGSEGV at sampler-example-twobugs+0x' table.json || fail "no SIGSEGV group in the program"
    # abort()'s frames in libc are skipped: the group starts in the program.
    abort='"signature": "SIGABRT at sampler-example-twobugs+0x[0-9a-f]* < .*(after [0-9]* frames in system libraries)"'
    grep -q "$abort" table.json || fail "no SIGABRT group starting in the program"
    # Reading on one thread and on two gives the same table.
    "$TOOLS/sampler-analyze" -j1 --sites "$program" reports >table1.tsv 2>/dev/null
    cmp -s table.tsv table1.tsv || fail "-j1 and -j2 differ"
    ;;
  html_chromium)
    browser=$(command -v chromium || command -v chromium-browser) || { fail "chromium is not installed"; finish; }
    "$TOOLS/sampler-analyze" --sites "$program" --html page --source-dir "$SOURCE_DIR/examples" reports \
      >table.tsv 2>err || fail "exit status $? (stderr: $(cat err))"
    [ -s page/index.html ] || fail "no page/index.html"
    # No external asset: nothing the page loads names another file or the network.
    grep -E -q '(src|href)="(https?:|//|[^#"])' page/index.html && fail "the page refers to an external asset"
    # --no-sandbox: CI runs as root. A profile of its own in the scratch directory.
    chrome=("$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$SCRATCH/profile")
    "${chrome[@]}" --dump-dom "file://$SCRATCH/page/index.html" >dom.html 2>chromium.err ||
      fail "chromium --dump-dom failed: $(tail -5 chromium.err)"
    rows=$(sed -n '/<table id="predictors">/,/<\/table>/p' dom.html | grep -c '<tr')
    tsv_rows=$(($(wc -l <table.tsv) - 1))
    # One header row plus one per predictor.
    [ "$rows" = $((tsv_rows + 1)) ] || fail "the DOM's table has $rows rows, expected $((tsv_rows + 1))"
    top=$(sed -n '/<table id="predictors">/,/<\/table>/p' dom.html | grep -m1 'class="chosen"' |
      sed 's/.*<span class="predicate">\([^<]*\)<.*/\1/' | sed 's/&lt;/</g; s/&gt;/>/g')
    [ "$top" = "$(awk -F'\t' 'NR == 2 { print $17 }' table.tsv)" ] || fail "the DOM's top predictor is '$top'"
    grep -q 'class="thermometer"' dom.html || fail "no thermometer in the DOM"
    grep -q 'class="source">if (SAMPLER_BRANCH(' dom.html || fail "no source line in the DOM"
    "${chrome[@]}" --window-size=1400,900 --screenshot="$SCRATCH/page.png" "file://$SCRATCH/page/index.html" \
      >/dev/null 2>>chromium.err || fail "chromium --screenshot failed"
    [ -s page.png ] || fail "no screenshot"
    ;;
  *) fail "unknown case" ;;
esac
finish
