# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# jq: a subject of the isolation benchmark (sourced by bench/isolation/isolate.sh; docs/isolation.md).
SUBJECT_PACKAGE=jq
SUBJECT_LANGUAGE=c
SUBJECT_BUG="jq 1.6 (Debian 1.6-2.1+deb12u2) with the fix of CVE-2026-39956 reversed (upstream commit fdf8ef0 \
of 2026-04-08, 'Add runtime type checks to f_string_indexes'; Debian's patch CVE-2026-39956.patch, in 1.6-2.1+deb12u2): \
the builtin _strindices, which indices/1 uses on strings but which any filter may call, passes its input and its \
argument to jv_string_indexes without checking that both are strings; jv_string_indexes asserts it, so \
'123 | _strindices(\"a\")' or '\"abc\" | _strindices(1)' aborts (SIGABRT) where the fixed jq raises a type error \
('number (123) cannot be searched, as it is not a string'), which try/catch can catch. A crash."
SUBJECT_BUG_FILE=src/builtin.c
SUBJECT_BUG_LINES=1149-1150  # in the buggy tree: the fix's checks go before 1150
SUBJECT_BUG_FUNCTION=f_string_indexes

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$(dirname "${BASH_SOURCE[0]}")/../patches/jq.patch"
}

# jq 1.6's source has no configure script: autoreconf (autoconf, automake, libtool) writes it. Only the program,
# linked statically against its own library (with shared libraries ./jq would be libtool's wrapper script), without
# the manual and without oniguruma (the regular-expression builtins then raise an error, in both builds).
subject_build() {
  (
    cd "$1" &&
      autoreconf -fi >autoreconf.log 2>&1 &&
      CC=$2 CFLAGS="-g -O2" ./configure -q --disable-docs --disable-maintainer-mode --disable-shared \
        --with-oniguruma=no >configure.log 2>&1 &&
      make -j2 src/builtin.inc src/version.h >make.log 2>&1 &&
      make -j2 jq >>make.log 2>&1
  ) || { echo "jq: the build in $1 failed (see its autoreconf.log, configure.log, make.log)" >&2; return 1; }
  echo "$1/jq"
}

# A random JSON document (input.json: nested objects, arrays, strings, numbers, booleans, null) and a random
# filter of one to three stages, each a builtin or path drawn from a list, some stages wrapped in try/catch, and
# random output options. The list holds _strindices four ways: on strings only (harmless), and on whatever comes
# (the bug's crash when that is not a string), with a string or a number argument.
subject_input() {
  local seed=$1 dir=$2 i n filter='' stage
  local words=('"a"' '"b,c"' '"abc"' '"x y"' '""' '"1,2,3"' '"ba"' '"aaa"')
  local stages=(
    '.a' '.b' '.[]?' '.[0]?' 'length' 'keys?' 'tostring' 'tojson' 'type' 'map(type)?' '[.[]?|numbers]'
    '[.. | strings]' 'ascii_downcase?' 'split(",")?' 'indices(",")?' 'index("a")?' 'ltrimstr("a")' 'add?'
    'sort?' 'unique?' 'to_entries?' '[paths]' '.[1:3]?' 'reverse?' 'tostring | explode' '@base64?' 'not'
    '[.. | numbers] | add' 'with_entries(.value |= type)?' '[.[]? | length]' 'del(.a)?' '{k: .}'
    'strings | _strindices("a")' '[.. | strings | _strindices(",")]' 'tostring | _strindices("1")'
    '_strindices("a")' '_strindices(1)'
    ${jq_more_stages[@]+"${jq_more_stages[@]}"}  # a subject that sources this file may add stages (jq-index)
  )
  RANDOM=$seed
  # gen_value DEPTH: appends one random JSON value to the variable json (no subshell: RANDOM must advance).
  local json=
  gen_value() {
    local depth=$1 k count
    case $((depth > 2 ? RANDOM % 4 : RANDOM % 7)) in
    0) json+=${words[RANDOM % ${#words[@]}]} ;;
    1) json+=$((RANDOM % 2000 - 500)) ;;
    2) json+=$(((RANDOM % 3 == 0) ? 0 : 1))
       [ $((RANDOM % 2)) -eq 0 ] && json+=.5 ;;
    3) local literals=(true false null) ; json+=${literals[RANDOM % 3]} ;;
    4 | 5)
      json+='{'
      count=$((RANDOM % 4))
      for ((k = 0; k < count; k++)); do
        [ "$k" -gt 0 ] && json+=,
        json+="\"${keys:k:1}\":"
        gen_value $((depth + 1))
      done
      json+='}' ;;
    6)
      json+='['
      count=$((RANDOM % 5))
      for ((k = 0; k < count; k++)); do
        [ "$k" -gt 0 ] && json+=,
        gen_value $((depth + 1))
      done
      json+=']' ;;
    esac
    return 0  # not the status of a last [ ... ] && ... (the driver runs under set -e)
  }
  local keys=abcd
  gen_value 0
  printf '%s\n' "$json" >"$dir/input.json"
  n=$((1 + RANDOM % 3))
  for ((i = 0; i < n; i++)); do
    stage=${stages[RANDOM % ${#stages[@]}]}
    [ $((RANDOM % 4)) -eq 0 ] && stage="try ($stage) catch \"caught\""
    if [ -z "$filter" ]; then filter=$stage; else filter+=" | $stage"; fi
  done
  [ $((RANDOM % 2)) -eq 0 ] && echo -c
  [ $((RANDOM % 4)) -eq 0 ] && echo -S
  [ $((RANDOM % 4)) -eq 0 ] && echo -r
  echo "$filter"
  echo input.json
}
