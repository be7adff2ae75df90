#!/bin/sh
# The runtime's binary interface (docs/instrumenting.md): what libsampler exports and imports, what
# its crash-path files may call, that a C program links libsampler.a with plain gcc, and that the site text
# is in a non-allocated section.
# usage: abi_test.sh NM READELF STRIP CC CLANG SOURCE_DIR LIBSAMPLER_SO LIBSAMPLER_A EXAMPLE SANITIZE OBJECTS...
# SANITIZE is "sanitize" in a sanitizer build: the sanitizers' own runtimes bring libstdc++ and their calls, so the
# checks of NEEDED entries and of plain-gcc linking are skipped and __asan_/__ubsan_/__tsan_ calls are allowed.
set -u
NM=$1 READELF=$2 STRIP=$3 CC=$4 CLANG=$5 SOURCE=$6 SO=$7 ARCHIVE=$8 EXAMPLE=$9
shift 9
SANITIZE=$1
shift
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. No libstdc++ (nor any C++ runtime) is needed at run time.
if [ "$SANITIZE" = sanitize ]; then
  echo "skipped: NEEDED entries (sanitizer build)"
elif "$READELF" -d "$SO" | grep NEEDED | grep -E 'libstdc\+\+|libc\+\+|libsupc' >/dev/null; then
  fail "libsampler.so needs a C++ runtime: $("$READELF" -d "$SO" | grep NEEDED)"
else
  pass "no NEEDED C++ runtime"
fi
# (__cxa_finalize and __cxa_atexit are glibc's, versioned GLIBC_*: every shared object's start files use them.)
cxx_imports=$("$NM" -D --undefined-only "$SO" | awk '{print $NF}' | grep -v '@GLIBC_' |
  grep -E '^(_Z|__cxa_|__gxx_|_Unwind_Resume|__dynamic_cast)' || true)
[ -z "$cxx_imports" ] && pass "no C++ runtime symbol imported" || fail "C++ runtime symbols imported: $cxx_imports"

# 2. Every exported symbol is sampler_*.
foreign=$("$NM" -D --defined-only "$SO" | awk '{print $NF}' | grep -v '^sampler_' || true)
[ -z "$foreign" ] && pass "only sampler_* exported" || fail "exported beyond sampler_*: $foreign"
for symbol in sampler_register_unit sampler_unregister_unit sampler_countdown sampler_take_counter \
              sampler_take_bound sampler_finish_report; do
  "$NM" -D --defined-only "$SO" | awk '{print $NF}' | grep -qx "$symbol" || fail "$symbol is not exported"
done
"$READELF" --dyn-syms -W "$SO" | awk '$NF == "sampler_countdown" && $4 == "TLS" && $5 == "GLOBAL"' | grep -q . &&
  pass "sampler_countdown is an exported TLS variable" || fail "sampler_countdown is not an exported TLS variable"

# 3. The crash-path files (*_signal_safe.cpp) call only each other, the formats library's core, and a short list
#    of async-signal-safe functions; they may refer to the runtime's own data.
allowed_external='^(sigaction|memcpy|memset|memmove|memcmp|strlen|__errno_location|_Unwind_Backtrace|_Unwind_GetIPInfo|__stack_chk_fail|_GLOBAL_OFFSET_TABLE_)$'
allowed_data='^(_ZN7sampler7runtime8g_reportE|_ZN7sampler7runtime9g_verboseE)$'
safe_objects="" core_objects=""
for object in "$@"; do
  case "$object" in
    *_signal_safe.cpp.o) safe_objects="$safe_objects $object" ;;
    */sampler_core.dir/*) core_objects="$core_objects $object" ;;
  esac
done
[ -n "$safe_objects" ] || fail "no *_signal_safe.cpp.o among the objects"
# shellcheck disable=SC2086
"$NM" --defined-only $safe_objects $core_objects | awk 'NF == 3 {print $3}' | sort -u >"$work/defined"
for object in $safe_objects; do
  "$NM" -u "$object" | awk '{print $NF}' | while read -r symbol; do
    grep -qxF "$symbol" "$work/defined" && continue
    echo "$symbol" | grep -qE "$allowed_external" && continue
    echo "$symbol" | grep -qE "$allowed_data" && continue
    [ "$SANITIZE" = sanitize ] && echo "$symbol" | grep -qE '^__(asan|ubsan|tsan|sanitizer)_' && continue
    echo "$(basename "$object"): $symbol"
  done
done >"$work/forbidden"
[ -s "$work/forbidden" ] && fail "crash-path files call beyond the allowed set: $(cat "$work/forbidden")" ||
  pass "crash-path files call only signal-safe functions"

# 4. A C program links libsampler.a with plain gcc (no C++ driver, no -lstdc++), and with clang; it runs and
#    reports.
for compiler in "$CC" "$CLANG"; do
  name=$(basename "$compiler")
  if [ "$SANITIZE" = sanitize ]; then
    echo "skipped: plain $name link (sanitizer build: libsampler.a needs the sanitizer runtime)"
    continue
  fi
  if ! "$compiler" -std=c11 -O2 -Wall -Wextra -Werror -I"$SOURCE/runtime/include" -o "$work/example-$name" \
      "$SOURCE/examples/sampler_example.c" "$SOURCE/examples/crash.c" "$ARCHIVE" -lpthread 2>"$work/cc.err"; then
    fail "$name cannot link a C program with libsampler.a: $(cat "$work/cc.err")"
    continue
  fi
  SAMPLER_SPARSITY=1 SAMPLER_FILE="$work/report-$name.txt" "$work/example-$name" run 7
  if grep -qx '7' "$work/report-$name.txt" && head -1 "$work/report-$name.txt" | grep -qx '<report id="samples">'; then
    pass "$name: C program over libsampler.a runs and reports"
  else
    fail "$name: no report from the C program over libsampler.a"
  fi
done
# The headers compile as C++ too.
if "$CC" -x c++ -std=c++20 -Wall -Wextra -Werror -I"$SOURCE/runtime/include" -c -o "$work/cxx.o" \
    "$SOURCE/examples/plugin.c" 2>"$work/cxx.err"; then
  pass "headers compile as C++"
else
  fail "headers do not compile as C++: $(cat "$work/cxx.err")"
fi

# 5. The site text is in .debug_site_info without SHF_ALLOC (docs/formats.md section 2), and strip --strip-debug removes
# it. readelf -S -W: NAME TYPE ADDRESS OFFSET SIZE ES [FLAGS] LK INF AL; an empty FLAGS column is left out.
flags=$("$READELF" -S -W "$EXAMPLE" | sed 's/^.*\] *//' |
  awk '$1 == ".debug_site_info" { if (NF == 10) print $7; else print "-" }')
if [ -z "$flags" ]; then
  fail "no .debug_site_info in the example"
elif echo "$flags" | grep -q A; then
  fail ".debug_site_info is allocated (flags $flags)"
else
  pass ".debug_site_info is not allocated"
fi
"$STRIP" --strip-debug -o "$work/stripped" "$EXAMPLE"
"$READELF" -S -W "$work/stripped" | grep -q '\.debug_site_info' && fail "strip --strip-debug left .debug_site_info" ||
  pass "strip --strip-debug removes .debug_site_info"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
