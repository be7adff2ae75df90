#!/bin/sh
# Proves the formats library's core (sampler_core) is allocation-free and needs neither libstdc++ nor libc
# beyond what the compiler itself may emit: every undefined symbol of its object files must be defined by
# another of them, or be one of the few allowed below. The runtime's crash handler links these objects, so
# they must stay async-signal-safe (docs/instrumenting.md section 3), which this test proves with nm.
#
# usage: check_core_symbols.sh NM "OBJECT;OBJECT;..." [sanitize]
#   sanitize: the build is instrumented with sanitizers; their own __asan_/__ubsan_/__tsan_ hooks are allowed.
set -eu
nm_program=$1
objects=$2
sanitize=${3:-}

# The compiler may turn loops and struct copies into these; both are async-signal-safe in practice.
allowed="memcpy memset"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/defined"
: >"$tmp/undefined"
old_ifs=$IFS
IFS=';'
for object in $objects; do
  IFS=$old_ifs
  [ -f "$object" ] || { echo "missing object file: $object" >&2; exit 1; }
  "$nm_program" --defined-only --format=posix "$object" | awk '{print $1}' >>"$tmp/defined"
  "$nm_program" --undefined-only --format=posix "$object" | awk -v o="$object" '{print $1 "\t" o}' >>"$tmp/undefined"
  count=$((${count:-0} + 1))
  IFS=';'
done
IFS=$old_ifs
[ "${count:-0}" -gt 0 ] || { echo "no object files given" >&2; exit 1; }

status=0
while IFS="$(printf '\t')" read -r symbol object; do
  grep -qxF "$symbol" "$tmp/defined" && continue
  ok=no
  for a in $allowed; do [ "$symbol" = "$a" ] && ok=yes; done
  if [ -n "$sanitize" ]; then
    # (Instrumented position-independent code also refers to the GOT, which the linker defines.)
    case $symbol in __asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__stack_chk_fail|_GLOBAL_OFFSET_TABLE_) ok=yes ;; esac
  fi
  if [ $ok = no ]; then
    echo "$(basename "$object"): undefined symbol not allowed in the core: $symbol" >&2
    status=1
  fi
done <"$tmp/undefined"
[ $status -eq 0 ] && echo "sampler_core: $count object files, no disallowed undefined symbols"
exit $status
