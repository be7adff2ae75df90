#!/usr/bin/env bash
# The README's first command: the whole sampler story on the bundled example (examples/sampler_example.c).
# Installs what is missing (scripts/setup.sh), builds what the story needs, then:
#   1. extracts the example's site information (extract-section .debug_site_info);
#   2. runs it a dozen times with SAMPLER_SPARSITY=100 and distinct SAMPLER_SEEDs, some runs crashing;
#   3. extracts and resolves each run's samples (extract-report samples | resolveSamples);
#   4. ranks the predicates the sites observe by how much more often they are true in crashing runs than in
#      clean ones (the Cooperative Bug Isolation "Increase" score);
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
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "demo: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -le 1 ] || { echo "demo: too many arguments (try --help)" >&2; exit 2; }
build=$(mkdir -p "${1:-$top/build}" && cd "${1:-$top/build}" && pwd)
started=$SECONDS

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
  cmake --build "$build" -j"$(nproc)" --target sampler-example extract-section extract-report resolveSamples \
    resolve-backtrace >"$build/demo-build.log" 2>&1 || { tail -30 "$build/demo-build.log" >&2; exit 1; }
fi

tools=$build/tools
example=$build/examples/sampler-example
for program in "$example" "$tools/extract-section" "$tools/extract-report" "$tools/resolveSamples" \
  "$tools/resolve-backtrace"; do
  [ -x "$program" ] || { echo "demo: $program is not built (run without --no-build)" >&2; exit 1; }
done
symbolizer=$(command -v llvm-symbolizer-19 || echo /usr/lib/llvm-19/bin/llvm-symbolizer)
work=$build/demo
rm -rf "$work" && mkdir -p "$work/runs" && cd "$work"

# ---- 1. The site information ---------------------------------------------------------------------------
say "1. The site information the build left in the example's .debug_site_info section"
note "\$ extract-section .debug_site_info examples/sampler-example > example.sites"
"$tools/extract-section" .debug_site_info "$example" >example.sites
awk -F'\t' '/^<sites /{ match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); order[++n] = s; next }
  /^<\/sites>/ { next } { count[s]++; total++ }
  END { printf "%d sites in %d schemes:", total, n
        for (i = 1; i <= n; i++) printf " %s %d%s", order[i], count[order[i]], i < n ? "," : "\n" }' \
  example.sites | fold -s -w 110 | indent
note "for example (file, line, function, CFG node, then the scheme's own fields):"
grep -m3 -v '^<' example.sites | indent

# ---- 2. The runs -----------------------------------------------------------------------------------------
say "2. Twelve runs, each sampling about one site execution in 100 (SAMPLER_SPARSITY=100), with its own seed"
note "clean runs: 'sampler-example run N' runs the workload N times and exits normally;"
note "crashing runs: 'sampler-example crash KIND' runs it 1000 times, then crashes in crash_KIND (examples/crash.c)."
note "Each run writes its feedback report to runs/run-SEED.txt (SAMPLER_FILE)."
runs=("run 1000" "crash segv" "run 400" "run 1000" "crash fpe" "run 700"
  "run 1000" "crash abrt" "run 300" "run 900" "crash ill" "run 1000")
printf '    %-5s %-20s %s\n' seed command outcome
: >runs/outcomes.txt
seed=0
for command in "${runs[@]}"; do
  seed=$((seed + 1))
  report=runs/run-$seed.txt
  # The group's stderr is closed too: bash reports a child killed by a signal ("Segmentation fault") there.
  status=0
  # shellcheck disable=SC2086 # the command's words are its arguments
  { SAMPLER_SPARSITY=100 SAMPLER_SEED=$seed SAMPLER_FILE=$report "$example" $command >/dev/null 2>&1; } 2>/dev/null ||
    status=$?
  if [ $status -gt 128 ]; then
    outcome=crash
    signal=$(kill -l $((status - 128)) 2>/dev/null || echo $((status - 128)))
    shown="crashed: SIG$signal"
  elif [ $status -eq 0 ]; then
    outcome=clean
    shown="exit 0"
  else
    echo "demo: 'sampler-example $command' exited with status $status" >&2
    exit 1
  fi
  [ -s "$report" ] || { echo "demo: run $seed wrote no report" >&2; exit 1; }
  printf '%s\t%s\n' "$seed" "$outcome" >>runs/outcomes.txt
  printf '    %-5s %-20s %s\n' "$seed" "$command" "$shown"
done

# ---- 3. Resolving the samples ----------------------------------------------------------------------------
say "3. Each report's samples, joined with the sites they count"
note "\$ extract-report samples < runs/run-1.txt | resolveSamples example.sites"
: >runs/all.txt
while IFS=$'\t' read -r seed outcome; do
  "$tools/extract-report" samples <"runs/run-$seed.txt" >"runs/samples-$seed.txt"
  "$tools/resolveSamples" example.sites <"runs/samples-$seed.txt" >"runs/resolved-$seed.txt"
  # For the analysis: the run's outcome, then the resolved line (FILE unit scheme fields... counters).
  sed "s/^/$seed\t$outcome\t/" "runs/resolved-$seed.txt" >>runs/all.txt
done <runs/outcomes.txt
note "the first lines of run 1 (FILE, unit, scheme, the site's fields, then its counters in this run):"
cut -f3- runs/resolved-1.txt | head -4 | indent
# resolveSamples sums repeated sections (seed 004: counters of a unit reported twice are added), so the
# samples of several runs, one after the other, resolve to their counters summed per site.
for outcome in crash clean; do
  awk -F'\t' -v o=$outcome '$2 == o { print "runs/samples-" $1 ".txt" }' runs/outcomes.txt | xargs cat |
    "$tools/resolveSamples" example.sites >"sum-$outcome.txt"
done
crash_seeds=$(awk -F'\t' '$2 == "crash" { printf "%s%s", sep, $1; sep = "," }' runs/outcomes.txt)
note "summed per site over the crashing runs (resolveSamples adds up repeated sections), and the same for the"
note "clean runs in sum-clean.txt:"
note "\$ cat runs/samples-{$crash_seeds}.txt | resolveSamples example.sites > sum-crash.txt"
cut -f3- sum-crash.txt | sed -n 3,4p | indent

# ---- 4. Which predicates go with the crashes -------------------------------------------------------------
say "4. The predicates most associated with crashing (Cooperative Bug Isolation's Increase score)"
note "Each counter of a site is a predicate: a branch taken or not, a return value < 0, == 0 or > 0, ..."
note "For each predicate P over the $(wc -l <runs/outcomes.txt) runs:"
note "  Failure(P) = F / (F + S)   F, S: crashing / clean runs where P was observed true"
note "  Context(P) = F_obs / (F_obs + S_obs)   F_obs, S_obs: runs where P's site was sampled at all"
note "  Increase(P) = Failure(P) - Context(P): how much P being true raises the chance of a crash."
note "Sums: how often P was sampled true over all crashing / all clean runs (sum-crash.txt, sum-clean.txt)."
note "Sampling sees a site only now and then, so short runs say little; bounds (min/max) are not predicates."
awk -F'\t' -f - runs/all.txt sum-crash.txt sum-clean.txt >ranking.txt <<'AWK'
# Counters per site of the schemes SPEC section 2 names (bounds are a min/max pair, not counters: left out);
# a scheme it does not name counts its trailing numeric fields.
BEGIN {
  split("branches 2 returns 3 scalar-pairs 3 function-entries 1 coverage 1 data 1 atoms 2 g-object-unref 4 " \
        "float-kinds 9", pairs, " ")
  for (i = 1; i in pairs; i += 2) columns[pairs[i]] = pairs[i + 1]
  split("is false|is true", label_branches, "|")
  split("< 0|== 0|> 0", label_returns, "|")
  split("<|==|>", label_pairs, "|")
  split("accessed by the same thread|accessed by another thread", label_atoms, "|")
  split("-inf|negative normal|negative subnormal|-0|NaN|+0|positive subnormal|positive normal|+inf", label_floats, "|")
  split("refcount 0|refcount 1|refcount > 1|not a GObject", label_unref, "|")
}
# The predicate of column c of the site whose resolved line starts at field b (FILE, unit, scheme, file, line,
# function, CFG node, the scheme's fields..., counters).
function predicate(b, scheme, c) {
  where = $(b + 3) ":" $(b + 4) " " $(b + 5) "()"
  field = $(b + 7)
  if (scheme == "branches") what = "(" field ") " label_branches[c + 1]
  else if (scheme == "returns") what = field "() " label_returns[c + 1]
  else if (scheme == "scalar-pairs") what = field " " label_pairs[c + 1] " " $(b + 10)
  else if (scheme == "function-entries") what = "entered"
  else if (scheme == "coverage" || scheme == "data") what = "reached"
  else if (scheme == "atoms") what = field " " label_atoms[c + 1]
  else if (scheme == "float-kinds") what = field " is " label_floats[c + 1]
  else if (scheme == "g-object-unref") what = field " " label_unref[c + 1]
  else what = scheme " " (first > b + 7 ? field " " : "") "= " c
  return where "\t" what
}
{
  b = FILENAME == "runs/all.txt" ? 3 : 1  # runs/all.txt has the run and its outcome first
  scheme = $(b + 2)
  if (scheme == "bounds") next
  n = columns[scheme]
  if (n == "") { n = 0; for (i = NF; i > b + 6 && $i ~ /^[0-9]+$/; i--) n++ }
  first = NF - n + 1
  observed = 0
  for (c = 0; c < n; c++) observed += $(first + c)
  for (c = 0; c < n; c++) {
    key = predicate(b, scheme, c)
    if (FILENAME == "sum-crash.txt") { sum[key, "crash"] = $(first + c); continue }
    if (FILENAME == "sum-clean.txt") { sum[key, "clean"] = $(first + c); continue }
    if (!(key in seen)) { seen[key] = 1; order[++keys] = key }
    if (observed > 0) obs[key, $2]++
    if ($(first + c) > 0) truth[key, $2]++
  }
}
END {
  for (k = 1; k <= keys; k++) {
    key = order[k]
    F = truth[key, "crash"] + 0; S = truth[key, "clean"] + 0
    Fo = obs[key, "crash"] + 0; So = obs[key, "clean"] + 0
    if (F == 0) continue
    failure = F / (F + S); context = Fo / (Fo + So)
    printf "%.3f\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t%s\n", failure - context, failure, context, F, S, \
      sum[key, "crash"], sum[key, "clean"], key
  }
}
AWK
printf '    %-8s %-7s %-7s %3s %3s %6s %6s  %s\n' Increase Failure Context F S "sum F" "sum S" "site: predicate"
sort -t$'\t' -k1,1gr -k4,4nr ranking.txt | head -8 |
  awk -F'\t' '{ printf "    %+.3f   %.3f   %.3f   %3d %3d %6d %6d  %s: %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
crashes=$(grep -c crash runs/outcomes.txt || true)
note "(all $(wc -l <ranking.txt) predicates true in some crashing run: $work/ranking.txt)"
note "Here every run executes the same workload, and the crashes are requested on the command line: so no"
note "predicate should stand out, and the Increase scores stay near zero (the differences are sampling noise"
note "over $crashes crashing runs). In a program whose crashes follow from some state, the predicates"
note "describing that state rise to the top: that is how a bug shows itself in many sparse reports."

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

say "Done in $((SECONDS - started)) s. Reports, resolved samples and the full ranking are in $work"
note "Read on: docs/tools.md (each tool), docs/formats.md (the formats), docs/packaging.md (samplerinfo RPMs)."
