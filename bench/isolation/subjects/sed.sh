# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# sed: a subject of the isolation benchmark (sourced by bench/isolation/isolate.sh; docs/isolation.md).
SUBJECT_PACKAGE="sed"
SUBJECT_LANGUAGE=c
SUBJECT_BUG="GNU sed 4.9 (Debian 4.9-1+deb12u1) with the fix of the ChangeLog entry 'sed: fix extraneous NUL in \
s///n command' (Assaf Gordon, 2018-08-03, found while investigating GNU bug 32271; NEWS of sed 4.6: 'sed no longer \
adds extraneous NUL when given s/\$//n command') reversed: do_subst copies the text left of a match into the \
output without moving 'start' past it, so when the match is empty at the end of the line and is not the Nth \
(s/\$/X/2, s/a*\$/X/3), the test 'start < line.length' that decides whether to step over one character sees the \
stale start and copies the line's terminating NUL into the output. Wrong output, no crash."
SUBJECT_BUG_FILE=sed/execute.c
SUBJECT_BUG_LINES=1071-1072  # in the buggy tree: the copy without 'start = offset'; its effect is at line 1100
SUBJECT_BUG_FUNCTION=do_subst

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$(dirname "${BASH_SOURCE[0]}")/../patches/sed.patch"
}

# Only the program (gnulib's lib/libsed.a and sed/sed), without translations, documentation or tests.
subject_build() {
  (
    cd "$1" &&
      CC=$2 CFLAGS="-g -O2" ./configure -q --disable-nls >configure.log 2>&1 &&
      make -j2 sed/sed MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true >make.log 2>&1
  ) || { echo "sed: the build in $1 failed (see its configure.log, make.log)" >&2; return 1; }
  echo "$1/sed/sed"
}

# A random text (input.txt: 3-12 lines of words over a small alphabet, some lines empty) and a random script of
# one to three commands: substitutions with a regular expression from a list (some can match empty, some at the
# end of the line only), a replacement, and flags (g, a number, both, p), and p, y, G, $!N between them; -n now
# and then.
subject_input() {
  local seed=$1 dir=$2 i n words=(a ab ba xa 0 12 b aab x) line regex flags commands=()
  local regexes=('a' 'b' 'ab*' '^' 'a*' 'x*' '[0-9]' '\(a\)\(b\)' '$' 'a*$' '[0-9]*$' 'b$')
  local replacements=('X' '' '<&>' '-' '\n')
  RANDOM=$seed
  : >"$dir/input.txt"
  for ((n = 3 + RANDOM % 10; n > 0; n--)); do
    line=
    for ((i = RANDOM % 6; i > 0; i--)); do line+="${words[RANDOM % ${#words[@]}]} "; done
    [ $((RANDOM % 3)) -eq 0 ] && line=${line% }  # some lines end with a word, others with a space
    printf '%s\n' "$line" >>"$dir/input.txt"
  done
  for ((n = 1 + RANDOM % 3; n > 0; n--)); do
    case $((RANDOM % 6)) in
    0) commands+=(p) ;;
    1) commands+=('y/abx/bxa/') ;;
    2) commands+=(G) ;;
    3) commands+=('$!N') ;;
    *)
      regex=${regexes[RANDOM % ${#regexes[@]}]}
      case $((RANDOM % 6)) in
      0) flags=g ;;
      1 | 2) flags=$((2 + RANDOM % 3)) ;;
      3) flags="$((2 + RANDOM % 3))g" ;;
      4) flags=p ;;
      *) flags= ;;
      esac
      commands+=("s/$regex/${replacements[RANDOM % ${#replacements[@]}]}/$flags") ;;
    esac
  done
  [ $((RANDOM % 4)) -eq 0 ] && printf '%s\n' -n  # (echo -n would print nothing)
  local command
  for command in "${commands[@]}"; do printf '%s\n' -e "$command"; done
  echo input.txt
}
