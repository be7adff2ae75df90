#!/bin/bash
# sampler-symbols' correctness proof on a real program: fetches the source of a Debian package (apt-get source; nothing
# is committed), builds it with plain clang-19 and CFLAGS='-O2 -g' (inlining on), and runs the GSYM checks of
# tests/tools/gsym_test.sh on each of its executables:
#   symbolizer        every frame of COUNT (default 10^4) random code addresses, looked up through our GSYM,
#                     equals llvm-symbolizer-19 --no-demangle on the same binary (function, file, line)
#   llvm_reads_ours   llvm-gsymutil-19 reads our GSYM file with the same answers as ours
#   ours_reads_llvm   we read llvm-gsymutil-19's GSYM file with the same answers as it
# and prints how many frames were compared, how many of them inlined.
#
# Usage: scripts/real-symbols.sh [--build BUILD_DIR] [--work DIR] [--count N] [PROGRAM...]
#   BUILD_DIR: the suite's build tree (default build/), with sampler-symbols built
#   DIR: where sources and builds go (default BUILD_DIR/real-symbols; emptied first)
#   PROGRAM: Debian source packages (default: gzip; bc 1.07 and gperf 3.1 do not build with clang-19 as shipped)
# Needs apt-get source: adds a deb-src entry if there is none (scripts/debian-source.sh; root or sudo).
# Not in the default ctest run: the test real_symbols has the label real-programs (-DSAMPLER_REAL_PROGRAMS=ON).
# Exit status 0 when every check held for every program, 1 otherwise.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
work=
count=10000
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --count) count=$2; shift 2 ;;
  -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "real-symbols.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gzip)
build=$(cd "$build" && pwd) || exit 2
work=${work:-$build/real-symbols}
tools=$build/tools
[ -x "$tools/sampler-symbols" ] || { echo "real-symbols.sh: $tools/sampler-symbols is not built" >&2; exit 2; }
symbolizer=${SYMBOLIZER:-llvm-symbolizer-19}
gsymutil=${GSYMUTIL:-llvm-gsymutil-19}
jobs=$(nproc)
failures=0
fail() { echo "FAIL ($program): $*" >&2; failures=$((failures + 1)); }
note() { echo "real-symbols: $*" >&2; }

# shellcheck source=debian-source.sh
. "$top/scripts/debian-source.sh"

# Debian's patches can leave a Makefile.am newer than its Makefile.in: build with the generated files shipped.
no_autotools="ACLOCAL=true AUTOCONF=true AUTOMAKE=true AUTOHEADER=true"

ensure_deb_src || exit 1
rm -rf "$work" && mkdir -p "$work" || exit 1
summary=()
for program in "${programs[@]}"; do
  note "$program: fetching the source"
  dir=$work/$program
  if ! source=$(fetch_debian_source "$program" "$dir/fetch"); then
    fail "cannot fetch the source"
    continue
  fi
  note "$program: building with clang-19 -O2 -g"
  if ! (cd "$source" && CC=clang-19 CXX=clang++-19 CFLAGS='-O2 -g' CXXFLAGS='-O2 -g' ./configure -q \
    >configure.log 2>&1 && make -j"$jobs" MAKEINFO=true $no_autotools >make.log 2>&1); then
    fail "the build failed (see $source/*.log)"
    continue
  fi
  # The program's executables with DWARF and a build ID (libtool wrappers and scripts are not ELF).
  binaries=()
  while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" 2>/dev/null)" = $'\x7fELF' ] || continue
    readelf -S "$f" 2>/dev/null | grep '\.debug_info' >/dev/null || continue
    readelf -n "$f" 2>/dev/null | grep 'Build ID' >/dev/null || continue
    binaries+=("$f")
  done < <(find "$source" -type f -perm -u+x -print0 | sort -z)
  [ ${#binaries[@]} -gt 0 ] || { fail "no executable with DWARF and a build ID under $source"; continue; }
  note "$program: ${#binaries[@]} executables: ${binaries[*]#"$source"/}"
  for case in symbolizer llvm_reads_ours ours_reads_llvm; do
    scratch=$dir/check-$case
    if TOOLS=$tools SCRATCH=$scratch GSYM_TEST_COUNT=$count \
      bash "$top/tests/tools/gsym_test.sh" "$case" "$symbolizer" "$gsymutil" "${binaries[@]}" \
      >"$dir/$case.log" 2>&1; then
      note "$program: $case: passed"
    else
      fail "$case: $(head -20 "$dir/$case.log")"
    fi
  done
  # What the symbolizer case compared: frames, and addresses with inlined frames.
  read -r addresses frames inlined < <(awk 'BEGIN { RS = ""; FS = "\n" } { a++; f += NF / 2; if (NF > 2) i++ }
    END { print a + 0, f + 0, i + 0 }' "$dir/check-symbolizer/all_ours" 2>/dev/null || echo "0 0 0")
  summary+=("$(printf '%-8s %d executables, %d addresses, %d frames equal to llvm-symbolizer-19 (%d addresses with' \
    "$program" "${#binaries[@]}" "$addresses" "$frames" "$inlined") inlined frames)")
done

echo "real-symbols: per program (clang-19 -O2 -g)"
printf '%s\n' "${summary[@]}"
[ "$failures" -eq 0 ] && echo "real-symbols: all checks passed" || echo "real-symbols: $failures failures"
[ "$failures" -eq 0 ]
