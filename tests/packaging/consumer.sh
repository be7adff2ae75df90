#!/usr/bin/env bash
# Builds tests/packaging/consumer/ (a project outside the sampler tree) against the installed PREFIX, runs the
# instrumented program with every opportunity sampled, and resolves its report with the installed tools.
#   consumer.sh cmake    find_package(Sampler) -> Sampler::runtime, and Sampler::runtime_static
#   consumer.sh pkg-config   cc $(pkg-config --cflags sampler) ... $(pkg-config --libs sampler)
# Environment: PREFIX (installed by the packaging_install_layout fixture), SCRATCH, SOURCE_DIR, LIBDIR.
set -uo pipefail

mode=${1:?usage: consumer.sh cmake|pkg-config}
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
source=$SOURCE_DIR/tests/packaging/consumer

# With SAMPLER_SPARSITY=1 every opportunity is sampled, so the counts are those of one run of consumer.c:
# main entered once, weigh 10 times; i % 2 != 0 false 5 times, true 5 times; weigh's result negative 5 times
# (odd i), zero once (i = 0), positive 4 times.
expected_sites='c0115e1ec0115e1ec0115e1ec0115e1e	function-entries	consumer.c	25	main	0	1
c0115e1ec0115e1ec0115e1ec0115e1e	function-entries	consumer.c	18	weigh	0	10
c0115e1ec0115e1ec0115e1ec0115e1e	branches	consumer.c	20	weigh	1	value % 2 != 0	5	5
c0115e1ec0115e1ec0115e1ec0115e1e	returns	consumer.c	29	main	2	weigh	5	1	4'

# check_program NAME PROGRAM: runs it sampled, checks its output, report and resolution.
check_program() {
  local name=$1 program=$2
  local out
  out=$(SAMPLER_SPARSITY=1 SAMPLER_SEED=1 SAMPLER_FILE="$SCRATCH/$name.report" "$program" 2>"$name.err")
  [ $? -eq 0 ] || { fail "$name: the program failed: $(cat "$name.err")"; return; }
  [ "$out" = "total -5" ] || fail "$name: printed '$out'"
  [ -s "$name.err" ] && fail "$name: wrote on stderr: $(cat "$name.err")"
  [ -s "$name.report" ] || { fail "$name: no report written"; return; }
  "$PREFIX/bin/extract-report" samples <"$name.report" >"$name.samples" || fail "$name: extract-report samples"
  "$PREFIX/bin/resolveSamples" "$program" <"$name.samples" >"$name.resolved" 2>"$name.resolve.err" ||
    fail "$name: resolveSamples: $(cat "$name.resolve.err")"
  # The FILE column is the program itself; the rest is fixed.
  local got
  got=$(awk -F'\t' -v OFS='\t' -v p="$program" \
    '$1 != p { print "bad FILE column: " $1; next } { $1 = ""; sub(/^\t/, ""); print }' "$name.resolved")
  [ "$got" = "$expected_sites" ] || fail "$name: resolved samples differ:
--- expected
$expected_sites
--- got
$got"
}

case $mode in
  cmake)
    for kind in shared static; do
      static=OFF
      [ $kind = static ] && static=ON
      cmake -S "$source" -B "build-$kind" -DCMAKE_PREFIX_PATH="$PREFIX" -DCONSUMER_STATIC=$static \
        >"configure-$kind.log" 2>&1 || { cat "configure-$kind.log" >&2; fail "cmake configure ($kind)"; continue; }
      grep -q "Sampler .*: tools in $PREFIX/lib/sampler/tools" "configure-$kind.log" ||
        fail "configure ($kind): Sampler_TOOLS_DIR not reported as $PREFIX/lib/sampler/tools"
      cmake --build "build-$kind" >"build-$kind.log" 2>&1 || { cat "build-$kind.log" >&2; fail "build ($kind)"; continue; }
      if [ $kind = shared ]; then
        readelf -d "build-$kind/consumer" | grep 'NEEDED.*\[libsampler.so.0\]' >/dev/null ||
          fail "shared: consumer does not need libsampler.so.0"
      else
        readelf -d "build-$kind/consumer" | grep 'NEEDED.*libsampler' >/dev/null && fail "static: consumer needs libsampler.so"
      fi
      check_program "cmake-$kind" "$SCRATCH/build-$kind/consumer"
    done
    ;;
  pkg-config)
    export PKG_CONFIG_PATH=$PREFIX/$LIBDIR/pkgconfig
    cflags=$(pkg-config --cflags sampler) && libs=$(pkg-config --libs sampler) || fail "pkg-config sampler"
    cflags=${cflags%"${cflags##*[![:space:]]}"}  # pkgconf ends its output with a space
    [ "$cflags" = "-I$PREFIX/include" ] || fail "pkg-config --cflags: '$cflags'"
    # shellcheck disable=SC2086 # word splitting of the flags is the point
    cc -std=c11 -Wall -Wextra -Werror $cflags -c "$source/consumer.c" -o consumer.o && cc consumer.o -o consumer $libs ||
      fail "pkg-config build"
    # pkg-config gives no run path; the dynamic loader is told where the prefix's libraries are.
    LD_LIBRARY_PATH=$PREFIX/$LIBDIR check_program pkg-config "$SCRATCH/consumer"
    ;;
  *) echo "usage: consumer.sh cmake|pkg-config" >&2; exit 2 ;;
esac

[ "$failures" -eq 0 ] && echo "consumer ($mode): all checks passed"
[ "$failures" -eq 0 ]
