#!/usr/bin/env bash
# The cost of sampler-cc on real programs' CPU-bound work: Debian's gzip, bzip2 and bc, fetched with `apt-get
# source` (nothing is committed), each built with the same flags by
#   plain     clang-19
#   default   sampler-cc at its defaults (scalar-pairs with the original's operands)
#   richer    sampler-cc with scalar-pairs' richer operand set (-fsampler-compare-constants,
#             -fsampler-assign-into-field, -fsampler-assign-into-index, -fsampler-assign-across-pointer)
#   light     sampler-cc without scalar-pairs (-fsampler-schemes=branches,returns,function-entries)
#   profile   clang-19 -fprofile-instr-generate: every edge counted, no sampling (what a user would otherwise pick)
# then the same work for every build (`gzip -9 -c` / `bzip2 -9 -c` of a ~100 MB input, `bc -l` computing pi to
# 2,000 digits): the default build with sampling off, with no sample in reach (SAMPLER_SPARSITY=1e15: sampling on,
# the fast sides alone), at 1/1000 and 1/100; richer and light at 1/1000 and 1/100. The runs of every build are
# interleaved, the best user CPU time of REPS kept (the machine is shared: user time, and the best of several, are
# the least disturbed by other work). Every run's output must be plain clang's.
# Prints per program: each run's user time and its ratio to plain clang's, and each build's time (make, CPU
# seconds), .text size and sites (bzip2: with its libbz2.so). The goals (docs/performance.md): default at 1/1000
# <= 1.10x, at 1/100 <= 1.5x, sampling off <= 1.03x, none in reach <= 1.05x, compile time <= 1.5x.
#
# --instructions counts instructions instead (callgrind, the runtime's included: the same figures on a busy
# machine), one run each on a small input (2 MB; bc: pi to 500 digits).
#
# Usage: bench/instrumentor/programs_bench.sh [--build BUILD_DIR] [--work DIR] [--reps N] [--megabytes M]
#                                             [--compile-only | --instructions] [PROGRAM...]
#   BUILD_DIR: the suite's build tree, with sampler-cc built (default build/)
#   DIR: sources, builds and input (default BUILD_DIR/programs-bench; the builds are redone each run)
#   M: the size of gzip's and bzip2's input (default 100)
#   --compile-only: only the compile time: plain and default builds alternated REPS times, the least CPU kept
#   PROGRAM: gzip, bzip2 and/or bc (default gzip and bzip2)
# Not run by ctest (minutes long, needs the network for apt-get source); see docs/performance.md.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
work=
reps=3
megabytes=100
compile_only=0
instructions=0
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --reps) reps=$2; shift 2 ;;
  --megabytes) megabytes=$2; shift 2 ;;
  --compile-only) compile_only=1; shift ;;
  --instructions) instructions=1; reps=1; shift ;;
  -h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "programs_bench.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=(gzip bzip2)
for program in "${programs[@]}"; do
  case $program in gzip | bzip2 | bc) ;; *) echo "programs_bench.sh: unknown program $program" >&2; exit 2 ;; esac
done
build=$(cd "$build" && pwd) || exit 2
work=${work:-$build/programs-bench}
cc=$build/instrumentor/sampler-cc
[ -x "$cc" ] || { echo "programs_bench.sh: $cc is not built" >&2; exit 2; }
note() { echo "programs-bench: $*" >&2; }
mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 1  # absolute: the builds run in their own directories

# shellcheck source=../../scripts/debian-source.sh
. "$(dirname "$0")/../../scripts/debian-source.sh"
ensure_deb_src || exit 1

# gzip's and bzip2's input: /usr/include and /usr/share/doc as one tar (text and some binary), repeated up to M
# megabytes. bc's: pi to 2,000 digits (bc -l's arctangent: its arbitrary-precision multiplication and division).
input=$work/input.tar
bc_input=$work/pi.bc
printf 'scale = 2000\n4 * a(1)\n' >"$bc_input"
compresses=0
[[ " ${programs[*]} " == *" gzip "* || " ${programs[*]} " == *" bzip2 "* ]] && compresses=1
if [ "$compile_only" = 0 ] && [ "$compresses" = 1 ] &&
  { [ ! -s "$input" ] || [ "$(stat -c %s "$input")" -ne $((megabytes * 1048576)) ]; }; then
  note "making a ${megabytes} MB input"
  tar -cf "$work/one.tar" /usr/include /usr/share/doc 2>/dev/null
  copies=$((megabytes * 1048576 / $(stat -c %s "$work/one.tar") + 1))
  for ((i = 0; i < copies; ++i)); do cat "$work/one.tar"; done 2>/dev/null | head -c $((megabytes * 1048576)) >"$input"
  rm -f "$work/one.tar"
fi

cpu_seconds() {  # LOG COMMAND...: CPU seconds (user + system) of the command and its children; output to LOG
  local log=$1 status
  shift
  /usr/bin/time -o "$work/time.out" -f '%U %S' "$@" >"$log" 2>&1
  status=$?
  awk '{ print $1 + $2 }' "$work/time.out"
  return $status
}
user_seconds() {  # INPUT OUTPUT ENVIRONMENT... PROGRAM ARGS...: user seconds of the program reading INPUT
  local from=$1 to=$2
  shift 2
  /usr/bin/time -o "$work/time.out" -f '%U' env "$@" <"$from" >"$to" 2>/dev/null ||
    { echo "programs_bench.sh: $* failed" >&2; exit 1; }
  cat "$work/time.out"
}
instruction_count() {  # INPUT OUTPUT ENVIRONMENT... PROGRAM ARGS...: the instructions callgrind counts
  local from=$1 to=$2
  shift 2
  local environment=()
  while [[ $1 == *=* ]]; do environment+=("$1"); shift; done
  env "${environment[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" <"$from" >"$to" \
    2>"$work/callgrind.err" || { echo "programs_bench.sh: $* failed under callgrind" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/callgrind.err"
}
text_size() { size -A "$@" | awk '$1 == ".text" { n += $2 } END { print n }'; }  # summed over the files
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# build PROGRAM SOURCE DIR CC EXTRA_CFLAGS: configure (gzip) or the Makefile (bzip2), then make, timed.
build_one() {
  local program=$1 source=$2 dir=$3 compiler=$4 flags=$5
  rm -rf "$dir" && cp -a "$source" "$dir" || return 1
  cd "$dir" || return 1
  case $program in
  gzip)
    ./configure CC="$compiler" CFLAGS="-g -O2 $flags" >configure.log 2>&1 || return 1
    make_seconds=$(cpu_seconds make.log make -j1 MAKEINFO=true) || return 1
    binary=$dir/gzip
    code_files=("$binary")
    ;;
  bc)
    # Debian's patches add a source to a Makefile.am: regenerated first, as Debian's build does. Old C that
    # clang 16+ rejects (dc calls functions it never declares) is let through, as in scripts/real-programs.sh.
    if [ -n "$(find . -name Makefile.am -newer configure)" ]; then autoreconf -fi >autoreconf.log 2>&1 || return 1; fi
    ./configure CC="$compiler" CFLAGS="-g -O2 -Wno-error=implicit-function-declaration -Wno-error=implicit-int \
      -Wno-error=int-conversion $flags" >configure.log 2>&1 || return 1
    make_seconds=$(cpu_seconds make.log make -j1 MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true \
      AUTOHEADER=true) || return 1
    binary=$dir/bc/bc
    code_files=("$binary")
    ;;
  bzip2)
    make_seconds=$(cpu_seconds make.log make -j1 bzip2 CC="$compiler" \
      CFLAGS="-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 $flags") || return 1
    binary=$dir/bzip2  # linked with the libbz2.so built beside it: run with LD_LIBRARY_PATH=$dir
    code_files=("$binary" "$dir/libbz2.so.1.0.4")  # the work is in the library
    [ -f "${code_files[1]}" ] || return 1
    ;;
  esac
  [ -x "$binary" ] || return 1
}

for program in "${programs[@]}"; do
  source=$(fetch_debian_source "$program" "$work/$program/fetch") || exit 1
  declare -A binary_of=() make_of=() text_of=()
  if [ "$compile_only" = 1 ]; then
    # Compile time alone: plain and region builds alternated (the machine's load hits both alike), least CPU kept.
    for ((round = 1; round <= reps; ++round)); do
      for variant in plain default; do
        note "$program: building ($variant), round $round of $reps"
        case $variant in
        plain) build_one "$program" "$source" "$work/$program/$variant" clang-19 "" ;;
        default) build_one "$program" "$source" "$work/$program/$variant" "$cc" "" ;;
        esac || { echo "programs_bench.sh: the $variant build of $program failed (see $work/$program/$variant)" >&2; exit 1; }
        if [ -z "${make_of[$variant]:-}" ] ||
          awk -v a="$make_seconds" -v b="${make_of[$variant]}" 'BEGIN { exit !(a < b) }'; then
          make_of[$variant]=$make_seconds
        fi
        text_of[$variant]=$(text_size "$binary")
        binary_of[$variant]=$binary
      done
    done
    sites=$("$build/tools/extract-section" .debug_site_info "${binary_of[default]}" 2>/dev/null |
      awk '/^<sites/ { match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); next }
           /^<\/sites>/ { next } { n[s]++ } END { for (k in n) printf "%s %d, ", k, n[k] }')
    echo "== $program build, least make CPU of $reps alternated rounds (sites: ${sites%, })"
    printf '%-34s %8s %7s %10s %7s\n' "build" "make s" "ratio" ".text B" "ratio"
    for variant in plain default; do
      printf '%-34s %8s %7s %10s %7s\n' "$variant" "${make_of[$variant]}" \
        "$(ratio "${make_of[$variant]}" "${make_of[plain]}")x" "${text_of[$variant]}" \
        "$(ratio "${text_of[$variant]}" "${text_of[plain]}")x"
    done
    unset binary_of make_of text_of
    continue
  fi
  variants=(plain default richer light profile)
  for variant in "${variants[@]}"; do
    note "$program: building ($variant)"
    case $variant in
    plain) build_one "$program" "$source" "$work/$program/$variant" clang-19 "" ;;
    default) build_one "$program" "$source" "$work/$program/$variant" "$cc" "" ;;
    richer) build_one "$program" "$source" "$work/$program/$variant" "$cc" "-fsampler-compare-constants \
      -fsampler-assign-into-field -fsampler-assign-into-index -fsampler-assign-across-pointer" ;;
    light) build_one "$program" "$source" "$work/$program/$variant" "$cc" \
      "-fsampler-schemes=branches,returns,function-entries" ;;
    profile) build_one "$program" "$source" "$work/$program/$variant" clang-19 "-fprofile-instr-generate" ;;
    esac || { echo "programs_bench.sh: the $variant build of $program failed (see $work/$program/$variant)" >&2; exit 1; }
    binary_of[$variant]=$binary
    make_of[$variant]=$make_seconds
    text_of[$variant]=$(text_size "${code_files[@]}")
    [ "$variant" = default ] && default_files=("${code_files[@]}")
    if [ "$instructions" = 1 ]; then
      # valgrind 3.19 cannot read clang-19's DWARF 5: callgrind runs copies without debug sections (the runtime
      # needs none), beside their libraries.
      stripped=$work/$program/$variant.stripped
      rm -rf "$stripped" && mkdir -p "$stripped"
      cp -a "$(dirname "$binary")"/lib*.so* "$stripped"/ 2>/dev/null
      for file in "${code_files[@]}"; do objcopy --strip-debug "$file" "$stripped/$(basename "$file")"; done
      binary_of[$variant]=$stripped/$(basename "$binary")
    fi
  done
  sites=$(for file in "${default_files[@]}"; do "$build/tools/extract-section" .debug_site_info "$file"; done 2>/dev/null |
    awk '/^<sites/ { match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); next }
         /^<\/sites>/ { next } { n[s]++ } END { for (k in n) printf "%s %d, ", k, n[k] }')

  # The runs: every configuration once per round, REPS rounds, the best kept. The first round keeps each run's
  # output, which must be plain clang's: the same work, whatever the build and the sampling.
  configs=("plain|" "default|" "default|SAMPLER_SPARSITY=1e15" "default|SAMPLER_SPARSITY=1000"
    "default|SAMPLER_SPARSITY=100" "richer|SAMPLER_SPARSITY=1000" "richer|SAMPLER_SPARSITY=100"
    "light|SAMPLER_SPARSITY=1000" "light|SAMPLER_SPARSITY=100" "profile|LLVM_PROFILE_FILE=$work/profile.profraw")
  case $program in
  bc) from=$bc_input; arguments=(-l); workload="bc -l, pi to 2,000 digits" ;;
  *) from=$input; arguments=(-9 -c); workload="$program -9 -c of ${megabytes} MB" ;;
  esac
  if [ "$instructions" = 1 ]; then
    case $program in
    bc) from=$work/pi500.bc; printf 'scale = 500\n4 * a(1)\n' >"$from"; workload="bc -l, pi to 500 digits" ;;
    *) from=$work/input2mb; head -c 2000000 "$input" >"$from"; workload="$program -9 -c of 2 MB" ;;
    esac
  fi
  declare -A best=()
  for ((round = 1; round <= reps; ++round)); do
    note "$program: round $round of $reps"
    for config in "${configs[@]}"; do
      variant=${config%%|*}
      environment=${config#*|}
      # Debian's bzip2 links its own libbz2.so, which must be the one just built, not the system's.
      to=/dev/null
      [ "$round" = 1 ] && to=$work/output
      measure=user_seconds
      [ "$instructions" = 1 ] && measure=instruction_count
      t=$($measure "$from" "$to" LD_LIBRARY_PATH="$(dirname "${binary_of[$variant]}")" SAMPLER_FILE=/dev/null \
        $environment "${binary_of[$variant]}" "${arguments[@]}")
      if [ "$round" = 1 ]; then
        sum=$(cksum <"$work/output")
        [ "$variant" = plain ] && plain_sum=$sum
        if [ "$sum" != "$plain_sum" ]; then
          echo "programs_bench.sh: $program's output differs from plain clang's: $variant, ${environment:-off}" >&2
          exit 1
        fi
        rm -f "$work/output"
      fi
      if [ -z "${best[$config]:-}" ] || awk -v a="$t" -v b="${best[$config]}" 'BEGIN { exit !(a < b) }'; then
        best[$config]=$t
      fi
    done
  done

  plain=${best["plain|"]}
  if [ "$instructions" = 1 ]; then
    echo "== $workload, instructions (sites: ${sites%, })"
    printf '%-34s %14s %7s\n' "build and sampling" "instructions" "ratio"
  else
    echo "== $workload, best user time of $reps (sites: ${sites%, })"
    printf '%-34s %8s %7s\n' "build and sampling" "user s" "ratio"
  fi
  for config in "${configs[@]}"; do
    variant=${config%%|*}
    environment=${config#*|}
    case $environment in
    "") label="sampling off" ;;
    SAMPLER_SPARSITY=1e15) label="none in reach" ;;
    SAMPLER_SPARSITY=*) label="1/${environment#SAMPLER_SPARSITY=}" ;;
    *) label="every edge counted" ;;
    esac
    [ "$variant" = plain ] && label="clang-19"
    printf '%-34s %8s %7s\n' "$variant, $label" "${best[$config]}" "$(ratio "${best[$config]}" "$plain")x"
  done
  printf '%-34s %8s %7s %10s %7s\n' "build" "make s" "ratio" ".text B" "ratio"
  for variant in "${variants[@]}"; do
    printf '%-34s %8s %7s %10s %7s\n' "$variant" "${make_of[$variant]}" \
      "$(ratio "${make_of[$variant]}" "${make_of[plain]}")x" "${text_of[$variant]}" \
      "$(ratio "${text_of[$variant]}" "${text_of[plain]}")x"
  done
  unset binary_of make_of text_of best
done
