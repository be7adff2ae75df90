#!/bin/bash
# Black-box tests of sampler-symbol-dir (docs/tools.md, "Symbolizing without a hand-made directory"): exact stdout,
# stderr and exit status, one feature per ctest test. Usage: symbol_dir_test.sh CASE VERSION SYMBOLIZER, with TOOLS
# and SCRATCH in the environment (see tests/tools/CMakeLists.txt). Fixtures are made here with cc, objcopy, strip
# and ar.
set -u
case_name=$1
version=$2
symbolizer=$3
tool=$TOOLS/sampler-symbol-dir
cc=${CC:-cc}

source "$(dirname "$0")/blackbox.sh"

# run ARGS...: runs the tool; leaves its stdout in out, its stderr in err and its status in $status.
run() {
  "$tool" "$@" >out 2>err
  status=$?
  ran="sampler-symbol-dir $*"
}

# program NAME [CFLAGS...]: an executable NAME with debug information and a build ID, whose main crashes in f().
program() {
  local name=$1
  shift
  cat >"$name.c" <<'C'
__attribute__((noinline)) int f(volatile int* p) { return *p; }
int main(void) { return f(0); }
C
  "$cc" -g -O1 -Wl,--build-id=sha1 "$@" "$name.c" -o "$name" || fail "cannot build $name"
}

# entry FILE: the symbol directory entry of FILE's build ID, relative to the directory.
entry() {
  local id
  id=$(readelf -n "$1" | sed -n 's/.*Build ID: //p')
  [ -n "$id" ] || fail "$1 has no build ID"
  echo ".build-id/${id:0:2}/${id:2}.debug"
}

# same_file A B: A and B are one file (a hard link).
same_file() { [ "$(stat -L -c %d:%i "$1")" = "$(stat -L -c %d:%i "$2")" ]; }

case $case_name in
binary)
  # An unstripped binary: its entry is a hard link to it; a second run finds it there and changes nothing.
  program app
  e=$(entry app)
  run -v symbols app
  expect 0 "app\t$e\n" ''
  same_file app "symbols/$e" || fail "symbols/$e is not a hard link to app"
  run -v symbols app
  expect 0 '' ''
  ;;
separate_debug_file)
  # A stripped binary and its separate debug file, in either order: the entry is the debug file. The stripped
  # binary alone gives nothing to link: a warning.
  program app
  objcopy --only-keep-debug app app.debug || fail "objcopy failed"
  strip --strip-all app || fail "strip failed"
  e=$(entry app)
  run -v symbols app app.debug
  expect 0 "app.debug\t$e\n" ''
  same_file app.debug "symbols/$e" || fail "the entry is not app.debug"
  rm -r symbols
  run -v symbols app.debug app
  expect 0 "app.debug\t$e\n" ''
  rm -r symbols
  run -v symbols app
  expect 0 '' "sampler-symbol-dir: 'app': warning: no debug information and no symbol table: nothing for a symbolizer, not linked (give its unstripped binary or separate debug file too)\n"
  [ -e symbols ] && fail "symbols was created for nothing"
  ;;
existing_entries)
  # An entry already there stays if it is as useful or more, and is replaced by a more useful file.
  program app
  e=$(entry app)
  cp app full
  strip --strip-debug app -o symtab-only || fail "strip failed"
  run -v symbols symtab-only
  expect 0 "symtab-only\t$e\n" ''
  run -v symbols full
  expect 0 "full\t$e\n" ''
  same_file full "symbols/$e" || fail "the entry is not the unstripped binary"
  run -v symbols symtab-only
  expect 0 '' ''
  same_file full "symbols/$e" || fail "the more useful entry was replaced"
  # An entry made by hand as a symbolic link, dangling or to another build's file, is replaced.
  ln -sf /nonexistent "symbols/$e"
  run -v symbols symtab-only
  expect 0 "symtab-only\t$e\n" ''
  [ -L "symbols/$e" ] && fail "the symbolic link is still there"
  ;;
directories)
  # A package's /usr/lib/debug: the debug files under usr/, with .build-id links to them (found once), and other
  # files (a README, an archive, a text file) passed over in silence.
  program app
  objcopy --only-keep-debug app app.debug || fail "objcopy failed"
  e=$(entry app)
  root=pkg/usr/lib/debug
  mkdir -p "$root/usr/bin" "$root/$(dirname "$e")"
  cp app.debug "$root/usr/bin/app.debug"
  ln -s ../../usr/bin/app.debug "$root/$e"
  echo 'not ELF' >"$root/README"
  echo 'int g(void) { return 1; }' >g.c && "$cc" -c g.c -o g.o && ar rc "$root/usr/bin/libg.a" g.o
  run -v symbols pkg/usr/lib/debug
  expect 0 "pkg/usr/lib/debug/$e\t$e\n" ''
  cmp -s app.debug "symbols/$e" || fail "the entry is not the debug file"
  # A directory without any ELF file makes nothing, and says nothing.
  mkdir empty
  run -v other empty
  expect 0 '' ''
  ;;
errors)
  # Each input that cannot be used is one error; the others are still linked; exit status 1.
  program app
  e=$(entry app)
  "$cc" -Wl,--build-id=none app.c -o no-id || fail "cannot build no-id"
  echo 'just text' >notes.txt
  echo 'int g(void) { return 1; }' >g.c && "$cc" -c g.c -o g.o && ar rc lib.a g.o
  mkfifo fifo
  run -v symbols missing notes.txt no-id lib.a fifo app
  expect 1 "app\t$e\n" "sampler-symbol-dir: 'missing': error: cannot open: No such file or directory
sampler-symbol-dir: 'notes.txt': error: not an ELF file or ar archive
sampler-symbol-dir: 'no-id': error: no GNU build ID: a symbolizer cannot look it up (link it with -Wl,--build-id)
sampler-symbol-dir: 'lib.a': error: an ar archive, not one ELF file: archives have no build ID
sampler-symbol-dir: 'fifo': error: not a regular file or directory (a FIFO)
"
  # The directory cannot be made: an error naming it.
  : >plain-file
  run plain-file app
  expect 1 '' "sampler-symbol-dir: 'plain-file/.build-id/${e:10:2}': error: cannot create directory: Not a directory\n"
  ;;
copy_across_file_systems)
  # Where no hard link can be made (another file system), the entry is a copy.
  program app
  e=$(entry app)
  other=$(mktemp -d /dev/shm/symbol-dir-test.XXXXXX 2>/dev/null) || other=
  if [ -z "$other" ] || [ "$(stat -c %d "$other")" = "$(stat -c %d .)" ]; then
    echo "no second file system to copy to: skipped"
  else
    run -v "$other/symbols" app
    expect 0 "app\t$e\n" ''
    cmp -s app "$other/symbols/$e" || fail "the copy differs"
    same_file app "$other/symbols/$e" && fail "a hard link across file systems?"
    rm -rf "$other"
  fi
  ;;
dry_run)
  program app
  e=$(entry app)
  run --dry-run symbols app
  expect 0 "app\t$e\n" ''
  [ -e symbols ] && fail "--dry-run created symbols"
  ;;
symbolizer)
  # The crash pipeline after one set-up step: llvm-symbolizer names the crashing function from the directory made.
  program app -no-pie -fno-pie
  objcopy --only-keep-debug app app.debug || fail "objcopy failed"
  strip --strip-all app || fail "strip failed"
  run symbols app app.debug
  expect 0 '' ''
  id=$(readelf -n app | sed -n 's/.*Build ID: //p')
  pc=$(objdump -d --no-show-raw-insn app.debug 2>/dev/null | awk '/<f>:/{f=1;next} f&&/mov/{print $1; exit}' | tr -d ':')
  [ -n "$pc" ] || pc=$(nm app.debug | awk '$3=="f"{print $1}')
  printf '{{{reset}}}\n{{{module:0:app:elf:%s}}}\n' "$id" >markup
  readelf -lW app | awk '$1=="LOAD"{f=""; for(i=7;i<NF;i++) f=f $i; print $3, $6, f}' | while read -r vaddr memsz flags; do
    start=$((vaddr & ~0xfff)); end=$(((vaddr + memsz + 0xfff) & ~0xfff))
    perm=$(echo "$flags" | sed 's/[^RWE]//g; s/R/r/; s/W/w/; s/E/x/')
    printf '{{{mmap:0x%x:0x%x:load:0:%s:0x%x}}}\n' $start $((end - start)) "$perm" $start
  done >>markup
  printf '{{{bt:0:0x%x:pc}}}\n' "0x$pc" >>markup
  "$symbolizer" --filter-markup --debug-file-directory=symbols <markup >symbolized 2>symbolizer.err
  grep -Eq '#0 +0x[0-9a-f]+ f .*/app.c:1:' symbolized || fail "frame 0 not symbolized: $(cat symbolized symbolizer.err)"
  ;;
help)
  run --help
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  head -1 out | grep -qx 'Usage: sampler-symbol-dir \[OPTIONS\] DIR FILE...' || fail "$ran: $(head -1 out)"
  grep -q -- '--dry-run' out || fail "$ran: --dry-run not described"
  [ -s err ] && fail "$ran: stderr: $(cat err)"
  ;;
version)
  run --version
  expect 0 "sampler-symbol-dir (sampler) $version\n" ''
  ;;
usage_errors)
  run
  expect 2 '' "sampler-symbol-dir: missing DIR and FILE operands\nTry 'sampler-symbol-dir --help' for more information.\n"
  run symbols
  expect 2 '' "sampler-symbol-dir: no FILE given after DIR\nTry 'sampler-symbol-dir --help' for more information.\n"
  run --copy symbols app
  expect 2 '' "sampler-symbol-dir: unrecognized option '--copy'\nTry 'sampler-symbol-dir --help' for more information.\n"
  ;;
*)
  fail "unknown case"
  ;;
esac

finish
