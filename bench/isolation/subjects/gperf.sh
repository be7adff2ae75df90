# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# gperf: the C++ subject of the isolation benchmark (sourced by bench/isolation/isolate.sh; docs/isolation.md).
SUBJECT_PACKAGE=gperf
SUBJECT_LANGUAGE=c++
SUBJECT_BUG="gperf 3.1 (Debian 3.1-1) with the fix of the ChangeLog entry of 2002-11-02 (Bruno Haible, released \
in gperf 3.0: 'Bug fix. * src/options.cc (Options::print_options): Escape backquote inside double-quoted \
strings.'; upstream commit ada729a of 2002-12-05) reversed: print_options, which writes the command line into the \
generated code's first comment, shell-quotes an argument holding a single quote with double quotes, escaping \
\", \\ and \$ inside but no longer the backquote. An option value holding both ' and a backquote (a function or \
table name given with -N, -H, -Q, -Z, --word-array-name) is then written unescaped: wrong output, no crash."
SUBJECT_BUG_FILE=src/options.cc
SUBJECT_BUG_LINES=315-315  # in the buggy tree, as are all the subjects' lines
SUBJECT_BUG_FUNCTION=print_options  # Options::print_options, as the site information names it

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$(dirname "${BASH_SOURCE[0]}")/../patches/gperf.patch"
}

# Only the program: lib (getopt) and src; the documentation and tests are not built. gperf 3.1 declares
# `register` variables, an error in C++17 (clang's default).
subject_build() {
  (
    cd "$1" &&
      CC=$2 CXX=$3 CFLAGS="-g -O2" CXXFLAGS="-g -O2 -Wno-register" ./configure -q >configure.log 2>&1 &&
      make -C lib >make.log 2>&1 && make -C src >>make.log 2>&1
  ) || { echo "gperf: the build in $1 failed (see its configure.log, make.log)" >&2; return 1; }
  echo "$1/src/gperf"
}

# No RANDOM inside $(...) or a pipeline: subshells reseed it. A random keyword set (lengths 1-7) and a random
# command line: output options, and 0-3 of the options that name things in the generated code (-N, -H, -Q, -Z,
# --word-array-name), each name of letters and, one time in three, characters a shell quotes (' and the backquote
# twice as often as the others: the bug needs both in one name).
subject_input() {
  local seed=$1 dir=$2 n i len word letters=abcdefgh name option options=(-N -H -Q -Z --word-array-name=)
  local quoted=("'" '`' "'" '`' '"' '$' "\\" ' ' '*' '(')
  RANDOM=$seed
  n=$((4 + RANDOM % 30))
  : >"$dir/keywords.gperf"
  for ((i = 0; i < n; i++)); do
    len=$((1 + RANDOM % 7))
    word=
    while [ ${#word} -lt "$len" ]; do word+=${letters:RANDOM % ${#letters}:1}; done
    echo "$word" >>"$dir/keywords.gperf"
  done
  [ $((RANDOM % 2)) -eq 0 ] && echo -D
  case $((RANDOM % 4)) in
  0) echo "-k$((1 + RANDOM % 3)),\$" ;;
  1) echo "-k*" ;;
  esac
  case $((RANDOM % 4)) in
  0) echo -G ;;
  1) echo -S1 ;;
  2) echo -C ;;
  esac
  for ((i = RANDOM % 4; i > 0; i--)); do
    option=${options[RANDOM % ${#options[@]}]}
    name=
    len=$((2 + RANDOM % 8))
    while [ ${#name} -lt "$len" ]; do
      if [ $((RANDOM % 3)) -eq 0 ]; then
        name+=${quoted[RANDOM % ${#quoted[@]}]}
      else
        name+=${letters:RANDOM % ${#letters}:1}
      fi
    done
    echo "$option$name"
  done
  echo keywords.gperf
}
