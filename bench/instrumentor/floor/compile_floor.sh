#!/usr/bin/env bash
# Compile time against its goal (docs/performance.md, "Compile time: the alternatives measured against 1.5x"): make
# CPU (user + system of make and what it ran) of bzip2's `make bzip2` and bc's `make`, in copies of the bench's
# plain trees (make clean, then make CC=...), plain clang-19, today's sampler-cc and the variants of a sampler-cc
# built with compile-floor.patch (SAMPLER_FLOOR=markers, single, single-noclean, single-bare-noclean,
# single-nocall-noclean, noclean) alternated round by round.
# Prints one line per build: round, program, variant, user s, system s, the load averages.
#
# Usage: bench/instrumentor/floor/compile_floor.sh --trees DIR --today CC --patched CC [--rounds N] [--work DIR]
#            [--variants "plain markers ..."]
#   DIR/{bzip2,bc}/plain: trees programs_bench.sh built with plain clang-19 (bc configured).
set -uo pipefail
trees='' today='' patched='' rounds=3 work='' chosen=()
while [ $# -gt 0 ]; do
  case $1 in
  --trees) trees=$2; shift 2 ;;
  --today) today=$2; shift 2 ;;
  --patched) patched=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --work) work=$2; shift 2 ;;
  --variants) read -ra chosen <<<"$2"; shift 2 ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "compile_floor.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ! -d "$trees/bzip2/plain" ] || [ ! -d "$trees/bc/plain" ] || [ ! -x "$today" ] || [ ! -x "$patched" ]; then
  echo "compile_floor.sh: needs --trees, --today and --patched (--help)" >&2
  exit 2
fi
today=$(readlink -f "$today") patched=$(readlink -f "$patched")
[ -z "$work" ] || mkdir -p "$work" || exit 1
[ -n "$work" ] || { work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT; } || exit 1
variants=(plain today markers single single-noclean single-bare-noclean single-nocall-noclean noclean)
[ ${#chosen[@]} -eq 0 ] || variants=("${chosen[@]}")
for program in bzip2 bc; do
  for variant in "${variants[@]}"; do
    rm -rf "${work:?}/$program-$variant" && cp -a "$trees/$program/plain" "$work/$program-$variant" || exit 1
  done
done
for ((round = 1; round <= rounds; ++round)); do
  for program in bzip2 bc; do
    for variant in "${variants[@]}"; do
      case $variant in
      plain) cc=clang-19 floor= ;;
      today) cc=$today floor= ;;
      *) cc=$patched floor=$variant ;;
      esac
      cd "$work/$program-$variant" || exit 1
      make clean >/dev/null 2>&1
      if [ "$program" = bzip2 ]; then
        set -- make -j1 bzip2 CC="$cc" CFLAGS="-Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64"
      else
        set -- make -j1 CC="$cc" MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true
      fi
      if ! SAMPLER_FLOOR=$floor /usr/bin/time -o time.log -f "%U %S" "$@" >make.log 2>&1; then
        echo "compile_floor.sh: $program-$variant failed (see $work/$program-$variant/make.log)" >&2
        exit 1
      fi
      cpu=$(tail -1 time.log)
      echo "$round $program $variant $cpu $(cut -d' ' -f1-3 /proc/loadavg)"
    done
  done
done
