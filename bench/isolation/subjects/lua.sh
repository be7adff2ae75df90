# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# lua: a subject of the isolation benchmark (sourced by bench/isolation/isolate.sh; docs/isolation.md).
SUBJECT_PACKAGE=lua5.4
SUBJECT_LANGUAGE=c
SUBJECT_BUG="Lua 5.4.4 (Debian 5.4.4-3+deb12u1) with the fix of 'Lua can generate wrong code when _ENV is <const>' \
reversed (lua.org's bug list for 5.4.4; upstream commit of 2022-02-15 by Roberto Ierusalimschy, released in Lua \
5.4.5; CVE-2022-28805, Debian bug 1010265; Debian's patch 0004-cve-2022-28805.patch): singlevar in the parser \
indexes _ENV for a global name without first putting _ENV in a register, so when _ENV is a compile-time constant \
(local _ENV <const> = 5) the code generator is handed a constant as the table. Lua 5.4.4 then refuses the whole \
chunk ('function or expression needs too many registers') where the fixed Lua compiles it and raises 'attempt to \
index a number value' only when the line runs: the program prints nothing and exits 1. Wrong output, no crash."
SUBJECT_BUG_FILE=src/lparser.c
SUBJECT_BUG_LINES=469-472  # in the buggy tree: the fix's call goes between 470 and 471
SUBJECT_BUG_FUNCTION=singlevar

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$(dirname "${BASH_SOURCE[0]}")/../patches/lua.patch"
}

# Only the interpreter, compiled in one command as Lua's own makefile does for `make linux` (Debian's makefile
# builds shared libraries with libtool, a C++ copy and luac too). luaconf.h includes the header with the
# multiarch triplet that debian/rules writes.
subject_build() {
  (
    cd "$1" &&
      printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
        "$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)" >src/lua5.4-deb-multiarch.h &&
      local sources=() f &&
      for f in src/*.c; do [ "$f" = src/luac.c ] || sources+=("$f"); done &&
      "$2" -std=gnu99 -g -O2 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -o lua "${sources[@]}" -lm -ldl >make.log 2>&1
  ) || { echo "lua: the build in $1 failed (see its make.log)" >&2; return 1; }
  echo "$1/lua"
}

# A random Lua program (prog.lua) of 10-40 statements that print what they compute: arithmetic, loops, strings,
# arrays, closures, errors caught with pcall, locals declared <const>, and functions that swap _ENV for a table
# (a local _ENV, const or not, whose globals are read and written). In about one program in ten one function
# declares `local _ENV <const> = LITERAL` and reads a global inside pcall: the construct the bug compiles wrong.
# Nothing printed depends on addresses or hash order.
subject_input() {
  local seed=$1 dir=$2 n i k lines=() literals=(5 0 -1 2.5 true false nil '"s"' '"abc"' 1e10)
  local names=(x y count total name value)
  RANDOM=$seed
  n=$((10 + RANDOM % 31))
  local buggy_at=-1
  [ $((RANDOM % 10)) -eq 0 ] && buggy_at=$((RANDOM % n))
  for ((i = 0; i < n; i++)); do
    if [ "$i" -eq "$buggy_at" ]; then
      lines+=("print(pcall(function() local _ENV <const> = ${literals[RANDOM % ${#literals[@]}]}; return ${names[RANDOM % ${#names[@]}]} end))")
      continue
    fi
    k=$((RANDOM % 100))
    case $((RANDOM % 9)) in
    0) lines+=("local v$i = $k * $((RANDOM % 50)) - $((RANDOM % 999)) // $((1 + RANDOM % 9)); print(v$i, v$i % 7, v$i / 4)") ;;
    1) lines+=("do local s = 0; for j = 1, $((RANDOM % 200)) do s = s + j * $k end; print('sum', s) end") ;;
    2) lines+=("print(string.format('%5.2f|%d|%s', $k / 3, $((RANDOM % 1000)), string.rep('ab', $((RANDOM % 5)), ',')))") ;;
    3) lines+=("do local t = {}; for j = 1, $((RANDOM % 30)) do t[#t + 1] = j * $k % 17 end; table.sort(t); print(#t, table.concat(t, ' ')) end") ;;
    4) lines+=("print(pcall(function() return nil + $k end))") ;;
    5) lines+=("do local c <const> = $k; local function f(a) return a * c + $((RANDOM % 9)) end; print(f($((RANDOM % 50))), c) end") ;;
    6) lines+=("do local _ENV = {print = print, ${names[RANDOM % ${#names[@]}]} = $k}; x = 1; print(x, y, count) end") ;;
    7) lines+=("do local _ENV <const> = {print = print, tostring = tostring, x = $k}; print(tostring(x), y) end") ;;
    8) lines+=("print(('$((RANDOM * 7))'):upper():sub($((RANDOM % 4)), $((RANDOM % 8))), #tostring($k ^ 2))") ;;
    esac
  done
  printf '%s\n' "${lines[@]}" >"$dir/prog.lua"
  echo prog.lua
}
