# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# gzip: a subject of the isolation benchmark (sourced by bench/isolation/isolate.sh; docs/isolation.md).
SUBJECT_PACKAGE=gzip
SUBJECT_LANGUAGE=c
SUBJECT_BUG="gzip 1.12 (Debian 1.12-1) with the fix of GNU bug 29006 reversed (ChangeLog: 'gzip: fix bug with any \
upper case custom (-S-specified) suffix', Jim Meyering, 2017-10-29; NEWS of gzip 1.9: 'gzip -d -S SUFFIX file.SUFFIX \
would fail for any upper-case byte in SUFFIX'): get_suffix lower-cases the file name's tail but compares it with \
the -S suffix as given, so a suffix with an upper-case letter never matches. 'gzip -d -S .Ab f.Ab' warns \
'unknown suffix -- ignored' and exits 2 instead of decompressing (a wrong exit status, no crash); 'gzip -S .Ab \
f.Ab' compresses to f.Ab.Ab a file the fixed gzip leaves alone, with the same status and output. The patch \
keeps the fix's restructuring to one return point and reverses only its lower-cased copy of the suffix."
SUBJECT_BUG_FILE=gzip.c
SUBJECT_BUG_LINES=1198-1200  # in the buggy tree: the suffix vector's entry, where the fix lower-cases it
SUBJECT_BUG_FUNCTION=get_suffix

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$(dirname "${BASH_SOURCE[0]}")/../patches/gzip.patch"
}

# Only the program: gnulib's lib/ and gzip itself, not the scripts, documentation or tests. Debian's patches touch
# tests/Makefile.am: make must not regenerate (the automake version it names may be absent).
subject_build() {
  local no_regeneration=(MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true)
  (
    cd "$1" &&
      CC=$2 CFLAGS="-g -O2" ./configure -q >configure.log 2>&1 &&
      make -C lib -j2 "${no_regeneration[@]}" >make.log 2>&1 &&
      make version.h gzip "${no_regeneration[@]}" >>make.log 2>&1
  ) || { echo "gzip: the build in $1 failed (see its configure.log, make.log)" >&2; return 1; }
  echo "$1/gzip"
}

# One file of random text (words, digits, runs; a few KiB) under a random name, and a random command line:
# compress or decompress (the file compressed beforehand, by this generator, with the same program's format:
# the system's gzip -n), with or without -c, -k, -f, -v, -q, a level, and a suffix
# -S of 2-4 letters in random case (in half the runs), which the file's name ends with most of the time.
subject_input() {
  local seed=$1 dir=$2 i n words=(the gzip data of a and to compress 0 1 42 zzzz abab "\n" "  " xyzzy) text=
  local name suffix='' letters=abcgxzABCGXZ
  RANDOM=$seed
  n=$((RANDOM % 2000))
  for ((i = 0; i < n; i++)); do text+="${words[RANDOM % ${#words[@]}]} "; done
  name=file$((RANDOM % 100))
  if [ $((RANDOM % 2)) -eq 0 ]; then
    suffix=.
    for ((i = 1 + RANDOM % 3; i > 0; i--)); do suffix+=${letters:RANDOM % ${#letters}:1}; done
  fi
  local decompress=false
  [ $((RANDOM % 2)) -eq 0 ] && decompress=true
  local file=$name
  if [ -n "$suffix" ] && [ $((RANDOM % 4)) -ne 0 ]; then
    # The name ends with the suffix, in the same case or another.
    if [ $((RANDOM % 2)) -eq 0 ]; then file=$name${suffix^^}; else file=$name$suffix; fi
  elif $decompress; then
    file=$name.gz
  fi
  if $decompress; then
    local level=$((1 + RANDOM % 9))  # outside the pipeline: its subshells reseed RANDOM
    printf '%b' "$text" | gzip -n -"$level" >"$dir/$file"
    echo -d
  else
    printf '%b' "$text" >"$dir/$file"
    [ $((RANDOM % 2)) -eq 0 ] && echo "-$((1 + RANDOM % 9))"
  fi
  [ $((RANDOM % 5)) -eq 0 ] && echo -c
  [ $((RANDOM % 4)) -eq 0 ] && echo -k
  [ $((RANDOM % 4)) -eq 0 ] && echo -f
  [ $((RANDOM % 4)) -eq 0 ] && echo -v
  [ $((RANDOM % 6)) -eq 0 ] && echo -q
  [ -n "$suffix" ] && printf '%s\n' -S "$suffix"
  echo "$file"
}
