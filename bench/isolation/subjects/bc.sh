# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# Subject bc, the original's own (Liblit et al., PLDI 2003 section 4.2 and PLDI 2005 section 4): sourced by
# bench/isolation/isolate.sh. The interface is bench/isolation/README.md's.

SUBJECT_PACKAGE="bc"
SUBJECT_LANGUAGE=c
SUBJECT_BUG="GNU bc 1.06: more_arrays() in bc/storage.c, which grows the table of arrays by 32 when a program \
names one array more than it holds, sets the new entries to NULL up to v_count, the count of simple variables, \
instead of a_count (a copy-and-paste from more_variables). With more variables than arrays it writes NULLs past \
the end of the new table (heap corruption); with fewer it leaves entries uninitialised, which get_array_num() \
later takes for arrays. Fixed upstream by the ChangeLog entry of 2001-05-23 (Phil Nelson: 'bc/storage.c: correct \
expansion of variables and arrays'), in the releases after 1.06 (the NEWS of 1.07: 'fixed a symbol table bug \
when using more than 32 names'); Debian's 1.07.1 has the fix, and \
bench/isolation/patches/bc.patch reverses it (a_count back to v_count). The failures are crashes (SIGSEGV, or \
glibc's abort on a corrupted heap) and wrong output."
SUBJECT_BUG_FILE=bc/storage.c
SUBJECT_BUG_LINES=185-186

subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$ISOLATION_DIR/patches/bc.patch"
}

# The plain and the instrumented build are configured alike: bc's dc calls functions it never declares (an error
# in clang 16+, a warning in GCC), so those errors are warnings, as scripts/real-programs.sh does. Debian's patch to
# bc/Makefile.am makes the tree regenerate with the installed autotools first, as Debian's build does; the manual
# is not built (MAKEINFO=true).
subject_build() {
  local tree=$1 cc=$2 cxx=$3
  (
    cd "$tree" &&
      autoreconf -fi &&
      CC=$cc CXX=$cxx CFLAGS="-g -O2 -Wno-error=implicit-function-declaration -Wno-error=implicit-int" \
        ./configure -q &&
      make -j2 MAKEINFO=true ACLOCAL=true AUTOMAKE=true AUTOCONF=true AUTOHEADER=true
  ) >"$tree/subject-build.log" 2>&1 || { echo "bc: the build failed: $tree/subject-build.log" >&2; return 1; }
  echo "$tree/bc/bc"
}

# subject_input SEED DIR: a random bc program on DIR/stdin, in the spirit of the original's workload (random
# programs with many variables and arrays): it names up to 100 simple variables and up to 80 arrays in a random
# order, assigns them, calls a function with an auto array, and prints sums. The bug needs 32 arrays or more
# (the table's second growth) and a count of variables at that moment other than the new count of arrays; where
# the stale entries are read, or the heap corruption hits, depends on the program's allocations, so some of those
# runs fail and the rest do not. bash's RANDOM seeded with SEED makes the same program from the same seed.
subject_input() {
  local seed=$1 dir=$2
  RANDOM=$seed
  local nvars=$((RANDOM % 100 + 1)) narrays=$((RANDOM % 80 + 1))
  local v=0 a=0 i k line=()
  line+=("scale=$((RANDOM % 5))")
  line+=("define f(n) { auto t[], i; for (i = 0; i < n; i++) t[i] = i * n; return (t[n-1] + n); }")
  while [ $v -lt $nvars ] || [ $a -lt $narrays ]; do
    if [ $a -ge $narrays ] || { [ $v -lt $nvars ] && [ $((RANDOM % (nvars + narrays))) -lt $nvars ]; }; then
      line+=("v$v = $((RANDOM % 1000)) / $((RANDOM % 9 + 1))")
      v=$((v + 1))
    else
      k=$((RANDOM % 4 + 1))
      for ((i = 0; i < k; i++)); do line+=("a${a}[$((RANDOM % 50))] = $((RANDOM % 100)) + f($((RANDOM % 5 + 1)))"); done
      a=$((a + 1))
    fi
    if [ $((RANDOM % 8)) -eq 0 ] && [ $a -gt 0 ] && [ $v -gt 0 ]; then
      line+=("v$((RANDOM % v)) + a$((RANDOM % a))[$((RANDOM % 50))]")
    fi
  done
  # Every array is read back once more, some by a second name's index: the stale entries are read here.
  for ((i = 0; i < narrays; i++)); do line+=("a${i}[$((RANDOM % 50))] + v$((RANDOM % nvars))"); done
  line+=("s = 0; for (i = 0; i < $nvars; i++) s = s + i; s")
  printf '%s\n' "${line[@]}" >"$dir/stdin"
}
