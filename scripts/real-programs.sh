#!/usr/bin/env bash
# The instrumentor's proof on real programs: fetches the sources of real Debian programs (apt-get source; nothing is
# committed), builds each twice, with plain clang-19 and with sampler-cc/sampler-c++ at their default schemes,
# runs the program's own test suite (`make check`) uninstrumented, then instrumented with sampling off
# (SAMPLER_SPARSITY unset: the functions' twins without sites run), at SAMPLER_SPARSITY=1 (every site, every time)
# and at 100, and checks that
#   - every test that passes uninstrumented passes instrumented;
#   - every run leaves a report, and `extract-report samples | resolveSamples` resolves each against the
#     site information of the binaries built, with no unknown unit;
#   - no site of any binary built names a file, line and function other than the DWARF of its slow-path call
#     (scripts/check-site-dwarf.sh);
# and prints per program: sites per scheme, the build-time ratio and the size ratio (text of the main binary).
# At SAMPLER_SPARSITY=1 every site calls the runtime (20-30 times slower): the few tests that feed the program
# gigabytes (gzip's list-big compresses a 4 GiB file) are left out of that pass, and only of that one (the
# table `bounded` below); they run at the other sparsities. Tests that read memory the program no longer owns
# (the table `undefined`) run, but their results are not compared: the runtime's calls change what is there.
# A program whose `make check` runs nothing (bc) gets a workload instead (the table `workload`), whose output
# must be the same instrumented as plain.
#
# Usage: scripts/real-programs.sh [--build BUILD_DIR] [--work DIR] [--sparsities "off 1 100"] [PROGRAM...]
#   BUILD_DIR: the suite's build tree (default build/), with sampler-cc and the tools built
#   DIR: where sources, builds and reports go (default BUILD_DIR/real-programs; emptied first)
#   PROGRAM: Debian source packages (default: gzip sed bc grep gperf; gperf is the C++ one)
# Needs apt-get source: adds a deb-src entry for the running Debian release if there is none (root or sudo).
# Exit status 0 when every check held for every program, 1 otherwise.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
work=
sparsities="off 1 100"
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --sparsities) sparsities=$2; shift 2 ;;
  -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "real-programs.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gzip sed bc grep gperf)
build=$(cd "$build" && pwd) || exit 2
work=${work:-$build/real-programs}
mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 2  # absolute: the script changes directory
drivers=$build/instrumentor
tools=$build/tools
for f in "$drivers/sampler-cc" "$tools/extract-report" "$tools/resolveSamples" "$tools/extract-section"; do
  [ -x "$f" ] || { echo "real-programs.sh: $f is not built" >&2; exit 2; }
done
jobs=$(nproc)
# Tests left out of the sparsity-1 pass, per program (paths in the source tree): too long at every site.
declare -A bounded=([gzip]="tests/list-big")
# Tests whose instrumented results are not compared: they read a dead stack frame, whose bytes any call made in
# between overwrites (gnulib's test-explicit_bzero checks that an earlier call's frame still holds zeros; a sampled
# site's call into the runtime writes that stack area).
declare -A undefined=([sed]="gnulib-tests/test-explicit_bzero" [grep]="gnulib-tests/test-explicit_bzero")
# Programs whose `make check` runs no test (bc's): a workload run after it, in the build tree, whose output must
# be the same instrumented as plain (recorded as the test "workload").
declare -A workload=([bc]='printf "scale=500\n4*a(1)\ne(1)\nl(10)\nsqrt(2)\n" | bc/bc -l')
failures=0
fail() { echo "FAIL ($program): $*" >&2; failures=$((failures + 1)); }
note() { echo "real-programs: $*" >&2; }

# shellcheck source=debian-source.sh
. "$top/scripts/debian-source.sh"

# elf_files DIR: the ELF executables and shared objects built under DIR.
elf_files() {
  find "$1" -type f \( -perm -u+x -o -name '*.so*' -o -name '*.o' \) -print0 |
    while IFS= read -r -d '' f; do
      [ "$(head -c 4 "$f" 2>/dev/null)" = $'\x7fELF' ] && printf '%s\n' "$f"
    done
}

# Debian's patches may change a Makefile.am (bc adds a source file): then the tree is regenerated with the
# installed autotools first, as Debian's build does (dh_autoreconf); make itself never regenerates (the automake
# version a Makefile.in names may be absent).
no_regeneration=(MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true)
old_c="-Wno-error=implicit-function-declaration -Wno-error=implicit-int -Wno-error=int-conversion"

# configure_and_make DIR CC CXX: a Debian source tree's autotools build (documentation left out).
configure_and_make() {
  (
    cd "$1" || exit 1
    local am
    for am in $(find . -name Makefile.am); do
      if [ "$am" -nt "${am%.am}.in" ]; then
        autoreconf -fi >autoreconf.log 2>&1 || exit 1
        break
      fi
    done
    # Old C that GCC only warns about and clang 16+ rejects (bc's dc calls functions it never declares): the
    # same relaxation for the plain and the instrumented build.
    # Old C++ the same way: gperf 3.1 declares `register` variables, an error in C++17 (clang's default).
    CC=$2 CXX=$3 CFLAGS="-g -O2 $old_c" CXXFLAGS="-g -O2 -Wno-register" ./configure -q >configure.log 2>&1 &&
      make -j"$jobs" "${no_regeneration[@]}" >make.log 2>&1
  )
}

# test_results DIR: "name result" per test of an automake test harness (the .trs files), or the exit status of
# make check for other suites.
test_results() {
  find "$1" -name '*.trs' -print0 | sort -z | while IFS= read -r -d '' trs; do
    printf '%s %s\n' "${trs#"$1"/}" "$(sed -n 's/^:test-result: //p' "$trs" | head -1)"
  done
}

# run_check DIR [--without "TEST..."] [ENV...]: make check with the given environment; writes DIR/check.log and
# DIR/results. The tests named by --without are replaced, for this run, by a script that skips (status 77).
run_check() {
  local dir=$1 without=""
  shift
  if [ "${1:-}" = --without ]; then
    without=$2
    shift 2
  fi
  # CC= and CXX= are make's variables (a Makefile's own assignment beats the environment), the rest environment.
  local t make_vars=() environment=()
  for t in "$@"; do
    case $t in
    CC=* | CXX=*) make_vars+=("$t") ;;
    *) environment+=("$t") ;;
    esac
  done
  set -- "${environment[@]}"
  for t in $without; do
    mv "$dir/$t" "$dir/$t.real-programs" && printf '#!/bin/sh\nexit 77\n' >"$dir/$t" && chmod +x "$dir/$t"
  done
  find "$dir" -name '*.trs' -delete
  (cd "$dir" && env "$@" make -k -j"$jobs" check "${no_regeneration[@]}" "${make_vars[@]}" >check.log 2>&1)
  echo "make-check-status $?" >"$dir/results"
  test_results "$dir" >>"$dir/results"
  if [ -n "${workload[$program]:-}" ]; then
    if (cd "$dir" && env "$@" sh -c "${workload[$program]}" >workload.out 2>&1); then
      if [ ! -f "$work/$program/plain/workload.out" ] || [ "$dir" = "$work/$program/plain" ] ||
        cmp -s "$dir/workload.out" "$work/$program/plain/workload.out"; then
        echo "workload PASS" >>"$dir/results"
      else
        echo "workload FAIL" >>"$dir/results"
      fi
    else
      echo "workload FAIL" >>"$dir/results"
    fi
  fi
  for t in $without; do
    mv "$dir/$t.real-programs" "$dir/$t"
  done
}

# keep_sites_compiler NAME REAL: a compiler for make check that runs REAL and keeps the site information of what
# it wrote (-o FILE) in $work/$program/kept.sites: a test suite may link a program, run it and overwrite it with
# another build (gperf's smtp, three times), and each run's report must still resolve.
keep_sites_compiler() {
  cat >"$work/$1" <<EOS
#!/bin/sh
"$2" "\$@" || exit \$?
out= prev=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
[ -n "\$out" ] && [ -f "\$out" ] && "$tools/extract-section" .debug_site_info "\$out" >>"\$SAMPLER_KEPT_SITES" 2>/dev/null
exit 0
EOS
  chmod +x "$work/$1"
}

seconds() { date +%s.%N; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

ensure_deb_src || exit 1
rm -rf "$work" && mkdir -p "$work" || exit 1
keep_sites_compiler keep-sites-cc "$drivers/sampler-cc"
keep_sites_compiler keep-sites-c++ "$drivers/sampler-c++"
summary=()
for program in "${programs[@]}"; do
  note "$program: fetching the source"
  dir=$work/$program
  if ! source=$(fetch_debian_source "$program" "$dir/fetch"); then
    fail "cannot fetch the source"
    continue
  fi
  cp -a "$source" "$dir/plain" && cp -a "$source" "$dir/instrumented" || exit 1

  note "$program: building with clang-19"
  start=$(seconds)
  configure_and_make "$dir/plain" clang-19 clang++-19 ||
    { fail "the plain build failed (see $dir/plain/*.log)"; continue; }
  plain_time=$(awk -v s="$start" -v e="$(seconds)" 'BEGIN { print e - s }')
  note "$program: building with sampler-cc"
  start=$(seconds)
  configure_and_make "$dir/instrumented" "$drivers/sampler-cc" "$drivers/sampler-c++" ||
    { fail "the instrumented build failed (see $dir/instrumented/*.log)"; continue; }
  instrumented_time=$(awk -v s="$start" -v e="$(seconds)" 'BEGIN { print e - s }')

  # The site information of everything built: each report must resolve against it (again after make check,
  # which builds the test programs).
  collect_sites() {
    elf_files "$dir/instrumented" | grep -v '\.o$' >"$dir/binaries"
    : >"$dir/all.sites"
    while IFS= read -r f; do
      "$tools/extract-section" .debug_site_info "$f" >>"$dir/all.sites" 2>/dev/null || true
    done <"$dir/binaries"
  }
  collect_sites
  main=$(grep -E "/(src/)?$program\$" "$dir/binaries" | head -1)
  [ -n "$main" ] || main=$(head -1 "$dir/binaries")
  plain_main=$dir/plain/${main#"$dir/instrumented/"}

  # Every site of every binary built agrees with the binary's DWARF.
  dwarf_counts=""
  while IFS= read -r f; do
    [ -s "$f" ] || continue
    "$tools/extract-section" .debug_site_info "$f" >"$dir/one.sites" 2>/dev/null && [ -s "$dir/one.sites" ] || continue
    if ! "$top/scripts/check-site-dwarf.sh" --extract-section "$tools/extract-section" "$f" "$dir/one.sites" \
      >"$dir/dwarf.txt" 2>&1; then
      fail "sites of ${f#"$dir/"} disagree with its DWARF: $(head -4 "$dir/dwarf.txt")"
    fi
    [ "$f" = "$main" ] && dwarf_counts=$(head -1 "$dir/dwarf.txt")
  done <"$dir/binaries"

  note "$program: make check, uninstrumented"
  run_check "$dir/plain"
  for sparsity in $sparsities; do
    if [ "$sparsity" = off ]; then
      note "$program: make check with sampling off (SAMPLER_SPARSITY unset)"
    else
      note "$program: make check at SAMPLER_SPARSITY=$sparsity"
    fi
    reports=$dir/reports-$sparsity
    mkdir -p "$reports"
    left_out=""
    [ "$sparsity" = 1 ] && left_out=${bounded[$program]:-}
    [ -n "$left_out" ] && note "$program: left out at sparsity 1: $left_out"
    not_compared=${undefined[$program]:-}
    [ -n "$not_compared" ] && note "$program: run but not compared: $not_compared"
    start=$(seconds)
    : >"$dir/kept.sites"
    sampling=(SAMPLER_SPARSITY="$sparsity")
    [ "$sparsity" = off ] && sampling=()
    run_check "$dir/instrumented" --without "$left_out" "${sampling[@]}" \
      SAMPLER_FILE="$reports/report.%p.txt" SAMPLER_KEPT_SITES="$dir/kept.sites" \
      CC="$work/keep-sites-cc" CXX="$work/keep-sites-c++"
    took=$(awk -v s="$start" -v e="$(seconds)" 'BEGIN { printf "%.0f", e - s }')
    note "$program: make check at sparsity $sparsity took $took s"
    collect_sites
    cat "$dir/kept.sites" >>"$dir/all.sites"
    # Every test that passed uninstrumented passes instrumented.
    while read -r name result; do
      [ "$name" = make-check-status ] && continue
      [ "$result" = PASS ] || continue
      case " $left_out $not_compared " in *" ${name%.trs} "*) continue ;; esac
      got=$(awk -v n="$name" '$1 == n { print $2 }' "$dir/instrumented/results")
      [ "$got" = PASS ] ||
        fail "sparsity $sparsity: test $name passes uninstrumented, gives '${got:-nothing}' instrumented"
    done <"$dir/plain/results"
    if [ -z "$left_out$not_compared" ] && grep -qx 'make-check-status 0' "$dir/plain/results" &&
      ! grep -qx 'make-check-status 0' "$dir/instrumented/results"; then
      fail "sparsity $sparsity: make check passes uninstrumented, fails instrumented ($dir/instrumented/check.log)"
    fi
    cp "$dir/instrumented/results" "$dir/results-$sparsity"
    # Every report resolves against the site information of the binaries built.
    count=0 unresolved=0
    for report in "$reports"/report.*.txt; do
      [ -e "$report" ] || continue
      count=$((count + 1))
      if ! "$tools/extract-report" samples <"$report" 2>/dev/null | "$tools/resolveSamples" "$dir/all.sites" \
        >/dev/null 2>"$dir/resolve.err"; then
        # A report may be empty: a process that exec()ed or was killed before writing its first unit.
        if [ -s "$report" ] || [ -s "$dir/resolve.err" ]; then
          unresolved=$((unresolved + 1))
          [ $unresolved -le 3 ] && fail "sparsity $sparsity: $report: $(head -2 "$dir/resolve.err")"
        fi
      fi
    done
    [ $count -gt 0 ] || fail "sparsity $sparsity: make check left no report"
    note "$program: sparsity $sparsity: $count reports, $unresolved unresolved"
  done

  sites=$(grep -o 'scheme="[^"]*"' <("$tools/extract-section" .debug_site_info "$main" 2>/dev/null) | sort -u |
    while read -r tag; do
      scheme=${tag#scheme=\"}
      scheme=${scheme%\"}
      n=$("$tools/extract-section" .debug_site_info "$main" | awk -v s="$scheme" '
        /^<sites / { in_s = index($0, "scheme=\"" s "\"") > 0; next } /^<\/sites>/ { in_s = 0; next } in_s { n++ }
        END { print n + 0 }')
      printf '%s=%s ' "$scheme" "$n"
    done)
  text_ratio=$(ratio "$(size -A "$main" | awk '$1 == ".text" { print $2 }')" \
    "$(size -A "$plain_main" | awk '$1 == ".text" { print $2 }')")
  file_ratio=$(ratio "$(stat -c %s "$main")" "$(stat -c %s "$plain_main")")
  summary+=("$(printf '%-8s %s| build time x%s | .text x%s, file x%s | DWARF: %s' "$program" "$sites" \
    "$(ratio "$instrumented_time" "$plain_time")" "$text_ratio" "$file_ratio" "$dwarf_counts")")
done

echo "real-programs: per program (main binary: sites per scheme; instrumented/plain ratios)"
printf '%s\n' "${summary[@]}"
[ "$failures" -eq 0 ] && echo "real-programs: all checks passed" || echo "real-programs: $failures failures"
[ "$failures" -eq 0 ]
