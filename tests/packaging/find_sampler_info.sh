#!/usr/bin/env bash
# Black-box test of find-sampler-info (tools/man/find-sampler-info.1): a build root made at test time with gcc,
# as, ar and objcopy, holding instrumented executables, a shared library and an archive, plus what must be left
# alone (uninstrumented ELF, text, symbolic links, usr/lib/debug). Checks exact stdout, stderr, exit status, the
# .sites files written byte for byte, and that no ELF file was modified.
# Environment: TOOLS (the built tools), SCRATCH (a scratch directory, emptied here).
set -uo pipefail

tool=$TOOLS/find-sampler-info
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run NAME STATUS [ARGS...]: runs the tool, keeping stdout in NAME.out and stderr in NAME.err, checks the status.
run() {
  local name=$1 status=$2
  shift 2
  "$tool" "$@" >"$name.out" 2>"$name.err"
  local got=$?
  [ "$got" -eq "$status" ] || fail "$name: exit status $got, expected $status; stderr: $(cat "$name.err")"
}
# expect_file NAME FILE EXPECTED-TEXT: FILE holds exactly EXPECTED-TEXT.
expect_file() {
  printf '%s' "$3" >expected.tmp
  cmp -s expected.tmp "$2" || fail "$1: $2 differs:$(diff expected.tmp "$2" | head -20)"
}

# ---- Fixtures ------------------------------------------------------------------------------------------------
# Site information as an instrumented unit carries it; the file names use the "build directory" /build/hello.
unit_a='<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">
/build/hello/src/main.c	10	main	3	argc > 1
/build/hello/src/main.c	12	main	5	/build/hello/src/main.c
/build/helloworld/x.c	1	f	0	p
</sites>
'
unit_b='<sites unit="00000000000000000000000000000001" scheme="returns">
/build/hello/src/util.c	7	helper	1	strlen
</sites>
<sites unit="00000000000000000000000000000001" scheme="function-entries">
src/relative.c	7	helper	0
</sites>
'
unit_c='<sites unit="00000000000000000000000000000002" scheme="coverage">
/build/hello/lib/lib.c	3	lib_fn	0
</sites>
'
unit_d='<sites unit="00000000000000000000000000000003" scheme="data">
/build/hello/lib/other.c	5	other_fn	0
</sites>
'
mkdir -p src
printf '%s' "$unit_a" >src/a.sites
printf '%s' "$unit_b" >src/b.sites
printf '%s' "$unit_c" >src/c.sites
printf '%s' "$unit_d" >src/d.sites
# unit.s: carries FILE as a non-allocated .debug_site_info section (docs/formats.md section 2), then NUL padding as a
# linker may leave between units.
make_unit() {
  printf '\t.pushsection .debug_site_info,"",@progbits\n\t.incbin "%s"\n\t.byte 0,0,0\n\t.popsection\n' "$1" >"$2.s"
  printf '\t.section .note.GNU-stack,"",@progbits\n' >>"$2.s"
  gcc -c "$2.s" -o "$2.o"
}
make_unit src/a.sites src/ua
make_unit src/b.sites src/ub
make_unit src/c.sites src/uc
make_unit src/d.sites src/ud
printf 'int main(void) { return 0; }\n' >src/main.c
printf 'int lib_fn(void) { return 1; }\n' >src/lib.c
gcc -c src/main.c -o src/main.o && gcc -fPIC -c src/lib.c -o src/lib.o || exit 1

root=$SCRATCH/root
mkdir -p "$root/usr/bin" "$root/usr/lib64" "$root/usr/share/doc/hello" "$root/usr/lib/debug/usr/bin" "$root/opt/empty"
gcc src/main.o src/ua.o src/ub.o -o "$root/usr/bin/hello"                 # two units, linked together
gcc -shared src/lib.o src/uc.o -o "$root/usr/lib64/libhello.so.1"
ln -s libhello.so.1 "$root/usr/lib64/libhello.so"                          # a link: not followed
gcc src/main.o -o "$root/usr/bin/plain"                                     # ELF without the section
printf 'not an object\n' >src/notes.txt
ar rc "$root/usr/lib64/libhello.a" src/uc.o src/lib.o src/notes.txt src/ud.o  # with, without, not ELF, with
ar rc "$root/usr/share/doc/hello/text.a" src/notes.txt                         # an archive of no ELF at all
objcopy --compress-debug-sections=zlib "$root/usr/bin/hello" "$root/usr/bin/hello-z"  # SHF_COMPRESSED
printf 'hello\n' >"$root/usr/share/doc/hello/README"
printf '\177ELF' >"$root/usr/share/doc/hello/tiny"                          # says ELF, is not
cp "$root/usr/bin/hello" "$root/usr/lib/debug/usr/bin/hello.debug"          # debuginfo: skipped
for f in usr/bin/hello usr/bin/hello-z usr/lib64/libhello.so.1 usr/bin/plain; do
  readelf -S "$root/$f" >/dev/null 2>&1 || fail "fixture $f is not ELF"
done
readelf -S "$root/usr/bin/hello-z" | grep -A1 debug_site_info | grep ' C ' >/dev/null ||
  fail "fixture usr/bin/hello-z: .debug_site_info is not compressed"
checksums() { (cd "$root" && find . -type f ! -path './usr/lib/sampler/*' -print0 | sort -z | xargs -0 sha256sum); }
checksums >before.sum

# ---- A malformed ELF makes exit 1, and is the only file left out -------------------------------------------
run bad 1 "$root"
expect_file bad bad.out ''
grep -q "^find-sampler-info: '$root/usr/share/doc/hello/tiny'" bad.err ||
  fail "bad: no error naming usr/share/doc/hello/tiny: $(cat bad.err)"
[ "$(wc -l <bad.err)" -eq 1 ] || fail "bad: expected one diagnostic: $(cat bad.err)"
rm "$root/usr/share/doc/hello/tiny"
checksums >before.sum
rm -rf "$root/usr/lib/sampler"

# ---- Default run: one .sites per ELF file or archive carrying the section, byte for byte -------------------
run default 0 "$root"
expect_file default default.out ''
expect_file default default.err ''
(cd "$root" && find usr/lib/sampler -type f | sort) >written.txt
expect_file default written.txt 'usr/lib/sampler/sites/usr/bin/hello-z.sites
usr/lib/sampler/sites/usr/bin/hello.sites
usr/lib/sampler/sites/usr/lib64/libhello.a.sites
usr/lib/sampler/sites/usr/lib64/libhello.so.1.sites
'
sites=$root/usr/lib/sampler/sites
expect_file default "$sites/usr/bin/hello.sites" "$unit_a$unit_b"
expect_file default "$sites/usr/bin/hello-z.sites" "$unit_a$unit_b"
expect_file default "$sites/usr/lib64/libhello.so.1.sites" "$unit_c"
expect_file default "$sites/usr/lib64/libhello.a.sites" "$unit_c$unit_d"
checksums >after.sum
cmp -s before.sum after.sum || fail "default: files in the build root changed: $(diff before.sum after.sum)"

# A second run rewrites the same files (the sites directory itself is not searched).
run again 0 -v "$root"
expect_file again again.out 'usr/bin/hello	usr/lib/sampler/sites/usr/bin/hello.sites
usr/bin/hello-z	usr/lib/sampler/sites/usr/bin/hello-z.sites
usr/lib64/libhello.a	usr/lib/sampler/sites/usr/lib64/libhello.a.sites
usr/lib64/libhello.so.1	usr/lib/sampler/sites/usr/lib64/libhello.so.1.sites
'
expect_file again again.err ''
(cd "$root" && find usr/lib/sampler -type f | sort) >written2.txt
cmp -s written.txt written2.txt || fail "again: different files: $(diff written.txt written2.txt)"

# ---- Prefix rewrite: the file field of site lines only, whole path components only -------------------------
rm -rf "$root/usr/lib/sampler"
run rewrite 0 --base-dir=/build/hello/ -d /usr/src/debug/hello-1.0-1.x86_64 "$root"
expect_file rewrite "$sites/usr/lib64/libhello.so.1.sites" '<sites unit="00000000000000000000000000000002" scheme="coverage">
/usr/src/debug/hello-1.0-1.x86_64/lib/lib.c	3	lib_fn	0
</sites>
'
expect_file rewrite "$sites/usr/bin/hello.sites" '<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">
/usr/src/debug/hello-1.0-1.x86_64/src/main.c	10	main	3	argc > 1
/usr/src/debug/hello-1.0-1.x86_64/src/main.c	12	main	5	/build/hello/src/main.c
/build/helloworld/x.c	1	f	0	p
</sites>
<sites unit="00000000000000000000000000000001" scheme="returns">
/usr/src/debug/hello-1.0-1.x86_64/src/util.c	7	helper	1	strlen
</sites>
<sites unit="00000000000000000000000000000001" scheme="function-entries">
src/relative.c	7	helper	0
</sites>
'
rm -rf "$root/usr/lib/sampler"
run relative 0 -b /build/hello -d '' --sites-dir=srv/sites "$root"
expect_file relative "$root/srv/sites/usr/lib64/libhello.so.1.sites" '<sites unit="00000000000000000000000000000002" scheme="coverage">
lib/lib.c	3	lib_fn	0
</sites>
'
[ -e "$root/usr/lib/sampler" ] && fail "relative: wrote into usr/lib/sampler despite --sites-dir"
rm -rf "$root/srv"

# ---- Dry run: lists, writes nothing ------------------------------------------------------------------------
run dry 0 --dry-run "$root"
expect_file dry dry.out 'usr/bin/hello
usr/bin/hello-z
usr/lib64/libhello.a
usr/lib64/libhello.so.1
'
expect_file dry dry.err ''
[ -e "$root/usr/lib/sampler" ] && fail "dry: wrote files"

# After stripping (what rpm's brp-strip does), nothing is left to find.
strip -g "$root/usr/bin/hello" "$root/usr/bin/hello-z" "$root/usr/lib64/libhello.so.1"
mkdir stripped && cp src/uc.o src/ud.o stripped/ && strip -g stripped/uc.o stripped/ud.o || exit 1
rm "$root/usr/lib64/libhello.a" && ar rc "$root/usr/lib64/libhello.a" stripped/uc.o src/notes.txt stripped/ud.o
run stripped 0 -n "$root"
expect_file stripped stripped.out ''
expect_file stripped stripped.err ''

# ---- Malformed site information: reported with the file and line, still saved, exit 1 ---------------------
printf '<sites unit="0123" scheme="branches">\n/build/hello/a.c\t1\tf\t0\tc\n</sites>\n' >src/bad.sites
make_unit src/bad.sites src/ubad
gcc src/main.o src/ubad.o -o "$root/usr/bin/badsites"
run badsites 1 "$root"
expect_file badsites badsites.out ''
[ "$(wc -l <badsites.err)" -eq 1 ] && grep -q "^find-sampler-info: '$root/usr/bin/badsites':1: error: " badsites.err ||
  fail "badsites: expected one error at line 1 of usr/bin/badsites: $(cat badsites.err)"
expect_file badsites "$sites/usr/bin/badsites.sites" "$(cat src/bad.sites)
"

# ---- Usage errors (exit 2) and a missing build root (exit 1) -----------------------------------------------
run noarg 2
expect_file noarg noarg.err "find-sampler-info: expected one BUILDROOT
Try 'find-sampler-info --help' for more information.
"
run halfmap 2 -b /build/hello "$root"
expect_file halfmap halfmap.err "find-sampler-info: --base-dir and --dest-dir go together
Try 'find-sampler-info --help' for more information.
"
run abssites 2 --sites-dir=/abs "$root"
expect_file abssites abssites.err "find-sampler-info: --sites-dir must be a relative path
Try 'find-sampler-info --help' for more information.
"
run missing 1 "$SCRATCH/no-such-root"
expect_file missing missing.out ''
expect_file missing missing.err "find-sampler-info: '$SCRATCH/no-such-root': error: cannot read directory: No such file or directory
"
run help 0 --help
grep -q '^Usage: find-sampler-info \[OPTIONS\] BUILDROOT$' help.out || fail "help: no usage line"

[ "$failures" -eq 0 ] && echo "find-sampler-info: all checks passed"
[ "$failures" -eq 0 ]
