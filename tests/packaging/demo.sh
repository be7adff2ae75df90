#!/usr/bin/env bash
# Runs scripts/demo.sh (the README's first command) on the built tree, without set-up or build, and checks that
# each step of the story happened: twelve runs with some crashes, the site information, resolved samples, the
# predicate ranking, and a crash stack symbolized down to the crashing function's source line.
# Environment: BUILD_DIR, SOURCE_DIR, SCRATCH.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || exit 1
out=$SCRATCH/demo.out

start=$SECONDS
"$SOURCE_DIR/scripts/demo.sh" --no-setup --no-build "$BUILD_DIR" >"$out" 2>"$SCRATCH/demo.err" ||
  { cat "$SCRATCH/demo.err" >&2; fail "demo.sh exited with status $?"; }
elapsed=$((SECONDS - start))
[ "$elapsed" -lt 60 ] || fail "demo.sh took ${elapsed}s on a built tree (the goal is under a minute)"
[ -s "$SCRATCH/demo.err" ] && fail "demo.sh wrote on stderr: $(cat "$SCRATCH/demo.err")"

expect() { grep -Eq -- "$1" "$out" || fail "no line matching '$1' in the demo's output"; }
for step in 1 2 3 4 5; do expect "^==> $step\. "; done
expect '^    [0-9]+ sites in [0-9]+ schemes:'
[ "$(grep -Ec '^    [0-9]+ +(run|crash) [a-z0-9]+ +(exit 0|crashed: SIG[A-Z]+)$' "$out")" -eq 12 ] || fail "not 12 runs listed"
grep -Eq 'crashed: SIG' "$out" && grep -Eq 'exit 0$' "$out" || fail "expected both crashing and clean runs"
expect $'^    branches\tsampler_example\\.c\t[0-9]+\twork\t1\ti % 2 == 0\t[0-9]+\t[0-9]+$'
number='[0-9]\.[0-9]{3}'
expect "^    [+-]$number +$number +$number +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+  sampler_example\\.c:[0-9]+ [a-z_]+\\(\\): "
expect '^    Crashed with signal 11 \(SIGSEGV\)'
expect '^ +#0 +0x[0-9a-f]+ crash_segv [^ ]*examples/crash\.c:[0-9]+'
expect '^ +#[0-9]+ +0x[0-9a-f]+ main [^ ]*examples/sampler_example\.c:[0-9]+'
[ -s "$BUILD_DIR/demo/ranking.txt" ] || fail "no ranking written"

[ "$failures" -eq 0 ] && echo "demo: all checks passed in ${elapsed}s"
[ "$failures" -eq 0 ]
