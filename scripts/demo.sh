#!/usr/bin/env bash
# The README's first command: the whole sampler story, Cooperative Bug Isolation style, on the bundled word counter
# (examples/wordfreq.c), which crashes on some inputs and not on others. The story runs on the program as
# sampler-cc, the drop-in clang-19, instruments it automatically (every branch, call, assignment and function
# entry; the source's hand-instrumentation macros compiled out). Where sampler-cc is not built (no LLVM/Clang 19
# development files, or a sanitizer build) it runs on the hand-instrumented build of the same source (the macros
# of <sampler/unit.h>, which the examples keep to test the ABI).
# Installs what is missing (scripts/setup.sh), builds what the story needs, then:
#   1. builds the program with sampler-cc and extracts its site information (extract-section .debug_site_info);
#   2. starts a collector (sampler-collector, SQLite, on a free loopback port) and runs the program on 40
#      different made-up texts through sampler-run, sparsity 100 and a distinct seed each, which uploads each
#      report with its outcome: some runs crash;
#   3. extracts and resolves a run's samples (extract-report samples | resolveSamples);
#   4. ranks the predicates the sites observe over all runs the collector stored, with sampler-analyze
#      --database (CBI's statistics: Liblit et al., "Scalable Statistical Bug Isolation", PLDI 2005), shows the
#      table and the top one with its file, line and function, and writes the HTML page
#      (BUILD_DIR/demo/html/index.html);
#   5. symbolizes a crash: resolve-backtrace | llvm-symbolizer-19 --filter-markup.
# Takes a few seconds on a built tree. Everything it writes goes to BUILD_DIR/demo.
#
# Usage: scripts/demo.sh [--no-setup] [--no-build] [BUILD_DIR]     (BUILD_DIR default: build)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
setup=true
build_it=true
while [ $# -gt 0 ]; do
  case $1 in
    --no-setup) setup=false ;;
    --no-build) build_it=false ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "demo: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -le 1 ] || { echo "demo: too many arguments (try --help)" >&2; exit 2; }
build=$(mkdir -p "${1:-$top/build}" && cd "${1:-$top/build}" && pwd)
started=$SECONDS
runs=40

bold='' plain=''
[ -t 1 ] && bold=$'\033[1m' plain=$'\033[0m'
say() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
note() { printf '    %s\n' "$*"; }
indent() { sed 's/^/    /'; }

if $setup; then
  say "Checking the Debian packages sampler needs (scripts/setup.sh installs what is missing)"
  "$top/scripts/setup.sh"
fi
if $build_it; then
  say "Building the example and the tools in $build"
  cmake -S "$top" -B "$build" >"$build/demo-configure.log" 2>&1 || { cat "$build/demo-configure.log" >&2; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target sampler-example-wordfreq extract-section extract-report \
    resolveSamples resolve-backtrace sampler-analyze sampler-run sampler-collector >"$build/demo-build.log" 2>&1 ||
    { tail -30 "$build/demo-build.log" >&2; exit 1; }
  # sampler-cc exists where LLVM 19 and Clang 19 development files were found (not in sanitizer builds).
  # The target list is read whole before it is searched: `grep -q` stops at the first match, and under pipefail the
  # writer's SIGPIPE would make a found sampler-cc look missing.
  targets=$(cmake --build "$build" --target help 2>/dev/null || true)
  if grep -q '^\.\.\. sampler-cc$' <<<"$targets"; then
    cmake --build "$build" -j"$(nproc)" --target sampler-cc >>"$build/demo-build.log" 2>&1 ||
      { tail -30 "$build/demo-build.log" >&2; exit 1; }
  fi
fi

tools=$build/tools
hand=$build/examples/sampler-example-wordfreq
for file in "$hand" "$tools/extract-section" "$tools/extract-report" "$tools/resolveSamples" \
  "$tools/resolve-backtrace" "$tools/sampler-analyze" "$tools/sampler-run" "$tools/sampler-collector"; do
  [ -x "$file" ] || { echo "demo: $file is not built (run without --no-build)" >&2; exit 1; }
done
symbolizer=$(command -v llvm-symbolizer-19 || echo /usr/lib/llvm-19/bin/llvm-symbolizer)
work=$build/demo
rm -rf "$work" && mkdir -p "$work/inputs" "$work/runs" && cd "$work"
program=$hand
auto=false
if [ -x "$build/instrumentor/sampler-cc" ]; then
  # The source automatically instrumented: sampler-cc at its default schemes, the hand macros compiled out.
  # Compiled from examples/ so that the sites name the file as wordfreq.c; into the demo's directory, not among
  # the build's examples (whose site lists the tests compare with the sources'). Built on every run, so that
  # the program always comes from the current sampler-cc (a second or two).
  auto=true
  program=$work/sampler-example-wordfreq-auto
  (cd "$top/examples" && "$build/instrumentor/sampler-cc" -DSAMPLER_UNINSTRUMENTED -I"$top/runtime/include" -O2 \
    wordfreq.c -o "$program") >sampler-cc.log 2>&1 || { cat sampler-cc.log >&2; exit 1; }
fi
name=$(basename "$program")

# ---- 1. The site information ---------------------------------------------------------------------------
# count_sites FILE: "N sites in K schemes: scheme n, ..." of a site information file.
count_sites() {
  awk '/^<sites /{ match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); if (!(s in count)) order[++n] = s
         count[s] += 0; next }
    /^<\/sites>/ { next } { count[s]++; total++ }
    END { printf "%d sites in %d schemes:", total, n
          for (i = 1; i <= n; i++) printf " %s %d%s", order[i], count[order[i]], i < n ? "," : "\n" }' "$1" |
    fold -s -w 110 | sed "s/ *$//" | indent
}
say "1. The site information the build left in the program's .debug_site_info section"
if $auto; then
  note "The program: examples/wordfreq.c, a word counter ($name FILE), built by sampler-cc, the drop-in"
  note "clang-19, at its default schemes: every branch, call, assignment and function entry of the source is a"
  note "site, with no change to the source (its hand-instrumentation macros, which the examples keep to test"
  note "libsampler's ABI, are compiled out with -DSAMPLER_UNINSTRUMENTED):"
  note "\$ cd examples && sampler-cc -DSAMPLER_UNINSTRUMENTED -O2 wordfreq.c -o $name"
else
  note "The program: examples/wordfreq.c, a word counter ($name FILE), instrumented by hand (the macros of"
  note "<sampler/unit.h>): sampler-cc is not built here (no LLVM/Clang 19 development files, or a sanitizer build)."
fi
note "\$ extract-section .debug_site_info $name > wordfreq.sites"
"$tools/extract-section" .debug_site_info "$program" >wordfreq.sites
count_sites wordfreq.sites
note "the branches of count_word(), for example (file, line, function, CFG node, then the predicate as written):"
awk -F'\t' '/^<sites .*scheme="branches"/ { on = 1; next } /^</ { on = 0 } on && $3 == "count_word" && n++ < 4' \
  wordfreq.sites | indent
if $auto; then
  "$tools/extract-section" .debug_site_info "$hand" >wordfreq-hand.sites
  hand_sites=$(grep -vc '^<' wordfreq-hand.sites)
  note "(The same source instrumented by hand, sampler-example-wordfreq, has $hand_sites sites, chosen for it.)"
fi

# ---- 2. The runs -----------------------------------------------------------------------------------------
say "2. $runs runs on $runs different inputs, each sampling about one site execution in 100, sent to a collector"
# The collector: SQLite in this directory, port 0 (the kernel picks a free one); its first line on stdout says
# where it listens, read from a FIFO (no sleeping, no polling). Stopped when the demo ends, however it ends.
printf 'wordfreq\tdemo-key\n' >keys.tsv
mkfifo collector.fifo
"$tools/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:reports.db --keys keys.tsv \
  >collector.fifo 2>collector.log &
collector_pid=$!
trap 'kill -TERM "$collector_pid" 2>/dev/null; wait "$collector_pid" 2>/dev/null' EXIT
read -r listening <collector.fifo || { echo "demo: the collector did not start: $(cat collector.log)" >&2; exit 1; }
url=http://${listening##* }
note "\$ sampler-collector serve --listen 127.0.0.1:0 --database sqlite:reports.db --keys keys.tsv &"
note "${listening}   (keys.tsv: wordfreq<TAB>demo-key)"
# sampler-run's state (its --show-last copy, its spool) stays in the demo's directory.
export XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config
note "Each input is a made-up text of 4000 words ($name --generate SEED > inputs/text-SEED.txt);"
note "each run goes through the launcher, which adds the outcome and uploads the report (gzip):"
note "\$ sampler-run --app wordfreq --version 1.0 --upload $url --api-key demo-key --sparsity 100 \\"
note "      --seed SEED -- $name inputs/text-SEED.txt"
note "and 'sampler-run --show-last > runs/run-SEED.txt' shows what was sent."
"$program" --generate 1 >inputs/text-1.txt
note "inputs/text-1.txt begins: $(head -c 64 inputs/text-1.txt | head -1) ..."
: >runs/outcomes.txt
for seed in $(seq 1 $runs); do
  [ -f "inputs/text-$seed.txt" ] || "$program" --generate "$seed" >"inputs/text-$seed.txt"
  report=runs/run-$seed.txt
  # The group's stderr is closed too: bash reports a child killed by a signal ("Segmentation fault") there.
  status=0
  { "$tools/sampler-run" --app wordfreq --version 1.0 --upload "$url" --api-key demo-key --sparsity 100 \
    --seed "$seed" -- "$program" "inputs/text-$seed.txt" >"runs/output-$seed.txt" 2>&1; } 2>/dev/null || status=$?
  "$tools/sampler-run" --show-last >"$report" 2>"runs/sent-$seed.txt" || true
  grep -q "^sampler-run: report [0-9a-f]* sent to " "runs/sent-$seed.txt" ||
    { echo "demo: run $seed was not sent: $(cat "runs/sent-$seed.txt")" >&2; exit 1; }
  if [ $status -gt 128 ]; then
    outcome=crash
    shown="SIG$(kill -l $((status - 128)) 2>/dev/null || echo $((status - 128)))"
  elif [ $status -eq 0 ]; then
    outcome=clean
    shown="exit 0"
  else
    echo "demo: '$name inputs/text-$seed.txt' exited with status $status" >&2
    exit 1
  fi
  [ -s "$report" ] || { echo "demo: run $seed wrote no report" >&2; exit 1; }
  printf '%s\t%s\t%s\n' "$seed" "$outcome" "$shown" >>runs/outcomes.txt
done
crashes=$(awk -F'\t' '$2 == "crash"' runs/outcomes.txt | wc -l)
stored=$(curl -s "$url/metrics" | awk '$1 == "sampler_reports_stored_total" { print $2 }')
note "The collector stored $stored reports (GET $url/metrics: sampler_reports_stored_total $stored)."
[ "$stored" = "$runs" ] || { echo "demo: the collector stored ${stored:-no} reports, expected $runs" >&2; exit 1; }
note "Outcomes, $crashes of $runs runs crashed (seed: exit status or fatal signal):"
awk -F'\t' '{ row = row sprintf("%s%3d: %-8s", (NR - 1) % 5 ? "  " : "    ", $1, $3) }
  NR % 5 == 0 { sub(/ +$/, "", row); print row; row = "" }
  END { if (row != "") { sub(/ +$/, "", row); print row } }' runs/outcomes.txt
[ "$crashes" -gt 0 ] && [ "$crashes" -lt "$runs" ] ||
  { echo "demo: expected both crashing and clean runs, got $crashes crashes in $runs runs" >&2; exit 1; }

# ---- 3. Resolving the samples ----------------------------------------------------------------------------
say "3. A report's samples, joined with the sites they count"
note "\$ extract-report samples < runs/run-1.txt | resolveSamples wordfreq.sites"
"$tools/extract-report" samples <runs/run-1.txt >runs/samples-1.txt
"$tools/resolveSamples" wordfreq.sites <runs/samples-1.txt >runs/resolved-1.txt
note "the branches of count_word() in run 1 (FILE, unit, scheme, the site's fields, then its counters: false, true):"
awk -F'\t' '$3 == "branches" && $6 == "count_word"' runs/resolved-1.txt | cut -f3- | head -4 | indent

# ---- 4. Which predicates go with the crashes -------------------------------------------------------------
say "4. The predicates that predict the crash: sampler-analyze over the $runs runs the collector stored"
note "Each counter of a site is a predicate: a branch's condition false or true, a return value < 0, == 0 or > 0..."
note "For each predicate P over the $runs runs (Liblit et al., \"Scalable Statistical Bug Isolation\", PLDI 2005):"
note "  Failure(P) = F / (F + S)             F, S: crashing / clean runs where P was sampled true"
note "  Context(P) = F_obs / (F_obs + S_obs)  F_obs, S_obs: crashing / clean runs where P's site was sampled at all"
note "  Increase(P) = Failure(P) - Context(P): how much P being true raises the chance of a crash over merely"
note "  reaching its site. Only predicates whose Increase is above 0 at 95% confidence are kept, ranked by their"
note "  Importance (Increase balanced against how many crashing runs P was true in); then the top one's runs are"
note "  set aside and the rest ranked again, so that each distinct bug gets its own round (docs/analysis.md)."
note "A run failed if it died of a signal or exited non-zero: its stored outcome says (--failure-statuses to choose)."
note "\$ sampler-analyze --database sqlite:reports.db --app wordfreq --sites wordfreq.sites --html html \\"
note "      --source-dir examples > ranked.tsv"
"$tools/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites wordfreq.sites --html html \
  --source-dir "$top/examples" >ranked.tsv
[ "$(wc -l <ranked.tsv)" -gt 1 ] || { echo "demo: no predicate predicts the crashes" >&2; exit 1; }
# ranked.tsv: rank, round, importance, increase, increase_low, failure, context, importance, F, S, F_obs, S_obs,
# file, line, function, scheme, predicate.
printf '    %-5s %-5s %-10s %-8s %-7s %-7s %3s %3s  %s\n' rank round Importance Increase Failure Context F S \
  "site: predicate"
awk -F'\t' 'NR > 1 && NR <= 9 { printf "    %-5s %-5s %-10s %-8s %-7s %-7s %3d %3d  %s:%s %s(): %s\n", $1, $2, $3, $4,
  $6, $7, $9, $10, $13, $14, $15, $17 }' ranked.tsv
note "(predictors: $(($(wc -l <ranked.tsv) - 1)), in $work/ranked.tsv; round: the elimination round that chose it)"
IFS=$'\t' read -r _ _ _ _ _ failure context _ F S _ _ file line function _ predicate < <(sed -n 2p ranked.tsv)
echo
truth="in $F crashing and $S clean runs"
[ "$S" -eq 0 ] && truth="in $F crashing runs and in no clean run"
note "The top predicate, '$predicate', was sampled true $truth"
note "(Failure $failure), while its site was sampled in crashing and clean runs alike (Context $context)."
note "Its site, from the site information: file $file, line $line, function $function():"
source_file=$(find "$top/examples" -name "$file" -print -quit)
if [ -n "$source_file" ]; then
  printf '    %s:%s: %s\n' "${source_file#"$top"/}" "$line" "$(sed -n "${line}p" "$source_file" | sed 's/^ *//')"
fi
# Other sites whose predicates were also true in crashing runs only (the cause may be one of them when the state it
# leaves is sampled more often), at most three, as a reader looks down the table.
others=$(awk -F'\t' -v top="$file:$line" 'NR > 1 && $10 == 0 && $9 > 1 && ($13 ":" $14) != top && !seen[$13 ":" $14]++ {
  printf "      rank %s: %s:%s %s(): %s\n", $1, $13, $14, $15, $17; if (++n == 3) exit }' ranked.tsv)
if [ -n "$others" ]; then
  note "Also true in crashing runs only, at other sites:"
  printf '%s\n' "$others"
fi
note "The same with thermometers, elimination rounds and crash groups, in a browser: $work/html/index.html"

# ---- 5. A crash, symbolized ------------------------------------------------------------------------------
crashed=$(awk -F'\t' '$2 == "crash" { print $1; exit }' runs/outcomes.txt)
say "5. The stack of the crash in run $crashed, symbolized"
note "The report's main-backtrace holds the module map, the signal and the stack in Compact Backtrace Format:"
"$tools/extract-report" main-backtrace <"runs/run-$crashed.txt" >backtrace.txt
grep -v -e '{{{mmap' -e '{{{module' backtrace.txt | indent
# llvm-symbolizer finds each module's debug information by build ID: a .build-id directory pointing at the
# (unstripped) binaries named in the module map, as /usr/lib/debug would hold them from -debuginfo packages.
mkdir -p symbols
sed -n 's/^{{{module:[0-9a-fx]*:\([^:]*\):elf:\([0-9a-f]*\)}}}$/\2 \1/p' backtrace.txt |
  while read -r id path; do
    [ ${#id} -gt 2 ] && [ -f "$path" ] || continue
    mkdir -p "symbols/.build-id/${id:0:2}"
    ln -sf "$path" "symbols/.build-id/${id:0:2}/${id:2}.debug"
  done
note "\$ resolve-backtrace runs/run-$crashed.txt | llvm-symbolizer-19 --filter-markup --debug-file-directory=symbols"
"$tools/resolve-backtrace" "runs/run-$crashed.txt" >markup.txt
"$symbolizer" --filter-markup --debug-file-directory=symbols <markup.txt >symbolized.txt 2>symbolizer.err || true
grep -v '^\[\[\[ELF module' symbolized.txt | indent
[ -s symbolizer.err ] && { note "llvm-symbolizer said:"; indent <symbolizer.err; }
# Frame 0 of the stack, its innermost inlined function first (#0.1, #0.2, ... then #0).
crash_function=$(sed -n 's/^ *#0\(\.[0-9]*\)\{0,1\} *0x[0-9a-f]* \([^ ]*\) .*/\2/p' symbolized.txt | head -1)
note "The stack shows where the program died: in ${crash_function:-?}(). The ranking shows the state that led"
note "there, earlier and elsewhere: in $function() at $file:$line, found from sparse samples of $runs runs."

kill -TERM "$collector_pid" && wait "$collector_pid" || { echo "demo: the collector did not stop cleanly" >&2; exit 1; }
trap - EXIT
say "Done in $((SECONDS - started)) s. Inputs, reports, resolved samples, the collector's database and the full ranking are in $work"
note "Read on: docs/tools.md (each tool), docs/formats.md (the formats), docs/packaging.md (samplerinfo RPMs)."
