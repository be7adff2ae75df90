#!/bin/bash
# Black-box tests of extract-section (docs/tools.md): exact stdout, stderr and exit status, one feature per ctest
# test. Usage: extract_section_test.sh CASE YAML2OBJ VERSION, with TOOLS and SCRATCH in the environment (see
# tests/tools/CMakeLists.txt). Fixtures are made here, at test time, with cc, ar, objcopy and yaml2obj.
set -u
case_name=$1
yaml2obj=$2
version=$3
tool=$TOOLS/extract-section
cc=${CC:-cc}

source "$(dirname "$0")/blackbox.sh"

# run ARGS...: runs the tool; leaves its stdout in out, its stderr in err and its status in $status.
run() {
  "$tool" "$@" >out 2>err
  status=$?
  ran="extract-section $*"
}

# object NAME PAYLOAD (printf format): NAME.o whose .debug_site_info holds PAYLOAD, as instrumented code emits it.
object() {
  printf "$2" >"$1.payload"
  object_from_payload "$1"
}

# object_from_payload NAME: the same with the payload already in NAME.payload.
object_from_payload() {
  printf '__asm__(".pushsection .debug_site_info,\\"\\",@progbits\\n.incbin \\"%s\\"\\n.popsection");\n' \
    "$1.payload" >"$1.c"
  echo "int $1_function(void) { return 1; }" >>"$1.c"
  "$cc" -c "$1.c" -o "$1.o" || fail "cannot compile fixture $1"
}

# plain NAME: NAME.o without the section.
plain() {
  echo "int $1_function(void) { return 2; }" >"$1.c"
  "$cc" -c "$1.c" -o "$1.o" || fail "cannot compile fixture $1"
}

# yaml NAME SECTION-KEYS...: a yaml2obj ELF64 object whose .debug_site_info has the given keys.
yaml() {
  local name=$1
  shift
  {
    printf -- '--- !ELF\nFileHeader:\n  Class: ELFCLASS64\n  Data: ELFDATA2LSB\n  Type: ET_REL\n  Machine: EM_X86_64\n'
    printf 'Sections:\n  - Name: .debug_site_info\n    Type: SHT_PROGBITS\n'
    printf '    %s\n' "$@"
  } >"$name.yaml"
  "$yaml2obj" "$name.yaml" -o "$name" || fail "cannot make fixture $name"
}

# Site-info-like text, long enough for objcopy to compress it.
sites_text() {
  echo '<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">'
  for i in $(seq 1 300); do printf 'main.c\t%d\tmain\t%d\n' "$i" "$i"; done
  echo '</sites>'
}

case $case_name in
several_files)
  # Files in order; the linked program holds both objects' sections with NUL padding between them.
  object a 'from a\n\0'
  object b 'from b\n\0'
  echo 'int main(void) { return 0; }' >main.c
  "$cc" a.o b.o main.c -o program || fail "cannot link"
  run .debug_site_info b.o a.o program
  expect 0 'from b\nfrom a\nfrom a\nfrom b\n' ''
  ;;
nul_bytes)
  object nuls '\0\0one\0two\n\0\0three\n\0'
  run .debug_site_info nuls.o
  expect 0 'onetwo\nthree\n' ''
  ;;
archive_members)
  object a 'from a\n'
  plain nothing
  object b 'from b\n'
  ar rcs lib.a a.o nothing.o b.o || fail "ar failed"
  run .debug_site_info lib.a
  expect 0 'from a\nfrom b\n' "extract-section: 'lib.a(nothing.o)': warning: no section '.debug_site_info'\n"
  ;;
compressed)
  sites_text >sites.txt
  cp sites.txt big.payload
  object_from_payload big
  for mode in zlib zstd zlib-gnu; do
    objcopy --compress-debug-sections=$mode big.o "big-$mode.o" || fail "objcopy $mode failed"
    if grep -q 'main.c' "big-$mode.o"; then fail "objcopy did not compress with $mode"; fi
  done
  run .debug_site_info big-zlib.o big-zstd.o big-zlib-gnu.o
  cat sites.txt sites.txt sites.txt >three.txt
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  cmp -s out three.txt || fail "$ran: decompressed output differs from the payload"
  [ -s err ] && fail "$ran: unexpected stderr: $(cat err)"
  # The legacy name is found under either name.
  run .zdebug_site_info big-zlib-gnu.o
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  cmp -s out sites.txt || fail "$ran: output differs from the payload"
  [ -s err ] && fail "$ran: unexpected stderr: $(cat err)"
  ;;
big_endian)
  printf '%s\n' '--- !ELF' 'FileHeader:' '  Class: ELFCLASS32' '  Data: ELFDATA2MSB' '  Type: ET_REL' \
    '  Machine: EM_MIPS' \
    'Sections: [ { Name: .debug_site_info, Type: SHT_PROGBITS, Content: "6d6970730a" } ]' >mips.yaml
  "$yaml2obj" mips.yaml -o mips.o || fail "cannot make fixture"
  run .debug_site_info mips.o
  expect 0 'mips\n' ''
  ;;
missing_section)
  object a 'from a\n'
  plain nothing
  run .debug_site_info a.o nothing.o
  expect 0 'from a\n' "extract-section: 'nothing.o': warning: no section '.debug_site_info'\n"
  ;;
missing_section_required)
  object a 'from a\n'
  plain nothing
  run --require .debug_site_info a.o nothing.o
  expect 1 'from a\n' "extract-section: 'nothing.o': warning: no section '.debug_site_info'\n"
  run .debug_site_info --require a.o
  expect 0 'from a\n' ''
  ;;
empty_section)
  object empty ''
  object zeros '\0\0\0'
  run .debug_site_info empty.o zeros.o
  expect 0 '' "extract-section: 'empty.o': warning: section '.debug_site_info' is empty\n\
extract-section: 'zeros.o': warning: section '.debug_site_info' is empty\n"
  run --require .debug_site_info empty.o
  expect 1 '' "extract-section: 'empty.o': warning: section '.debug_site_info' is empty\n"
  ;;
not_elf_among_good)
  object a 'from a\n'
  object b 'from b\n'
  echo 'just text' >notes.txt
  mkdir dir
  run .debug_site_info a.o notes.txt absent.o dir b.o
  expect 1 'from a\nfrom b\n' "extract-section: 'notes.txt': error: not an ELF file or ar archive\n\
extract-section: 'absent.o': error: cannot open: No such file or directory\n\
extract-section: 'dir': error: is a directory\n"
  ;;
special_files)
  # A FILE that is not a regular file is refused at once, naming what it is. Opening a FIFO that
  # nobody writes to must not wait for a writer (it used to hang in open), and a device is never read.
  object a 'from a\n'
  mkfifo fifo || fail "mkfifo failed"
  timeout 20 "$tool" .debug_site_info fifo /dev/zero a.o >out 2>err
  status=$?
  ran="extract-section .debug_site_info fifo /dev/zero a.o"
  expect 1 'from a\n' "extract-section: 'fifo': error: not a regular file (a FIFO)\n\
extract-section: '/dev/zero': error: not a regular file (a character device)\n"
  ;;
archive_bad_member)
  # One malformed member (its long-name offset points past the archive's name table) is
  # reported and skipped; the members after it are still read, and the exit status says something was wrong.
  object first_long_member_name 'first\n'
  object second_long_member_name 'second\n'
  object third_long_member_name 'third\n'
  ar rc lib.a first_long_member_name.o second_long_member_name.o third_long_member_name.o || fail "ar failed"
  run .debug_site_info lib.a
  expect 0 'first\nsecond\nthird\n' ''
  # The second member's name is "/26": offset 26 of the name table "//" (the first name and its "/\n" are 26 bytes).
  offset=$(grep -abo '/26   ' lib.a | head -1 | cut -d: -f1)
  [ -n "$offset" ] || fail "no member header names offset 26"
  printf '/9999' | dd of=lib.a bs=1 seek="$offset" conv=notrunc status=none || fail "dd failed"
  run .debug_site_info lib.a
  expect 1 'first\nthird\n' "extract-section: 'lib.a(/9999)': error: the member's name is at offset 9999 of the \
archive's name table, which has 80 bytes; the member is skipped\n"
  ;;
lying_file)
  object a 'from a\n'
  yaml lying 'Content: "68656c6c6f0a"' 'ShSize: 0x10000000'
  size=$(stat -c %s lying)
  run .debug_site_info lying a.o
  expect 1 'from a\n' "extract-section: 'lying': error: section '.debug_site_info' (offset 0x40, size 0x10000000) \
extends past the end of the file ($size bytes)\n"
  ;;
decompression_bomb)
  # A gABI compression header (ELF64, little-endian) stating 100 GB, then a tiny zlib stream.
  object a 'from a\n'
  header=01000000''00000000''00e8764817000000''0100000000000000  # type zlib, reserved, size, alignment
  yaml bomb "Content: \"${header}789c030000000001\"" 'Flags: [ SHF_COMPRESSED ]'
  run .debug_site_info bomb a.o
  expect 1 'from a\n' "extract-section: 'bomb': error: section '.debug_site_info' states a decompressed size of \
100000000000 bytes, over the limit of 4294967296 bytes\n"
  ;;
output_order)
  # When stdout and stderr go to the same place, a warning comes after the output that preceded it.
  object a 'from a\n'
  plain nothing
  object b 'from b\n'
  "$tool" .debug_site_info a.o nothing.o b.o >both 2>&1
  status=$?
  ran="extract-section .debug_site_info a.o nothing.o b.o 2>&1"
  mv both out
  : >err
  expect 0 "from a\nextract-section: 'nothing.o': warning: no section '.debug_site_info'\nfrom b\n" ''
  ;;
write_error)
  object a 'from a\n'
  "$tool" .debug_site_info a.o >/dev/full 2>err
  status=$?
  ran="extract-section .debug_site_info a.o >/dev/full"
  : >out
  expect 1 '' "extract-section: error: cannot write standard output: No space left on device\n"
  ;;
help)
  run --help
  expect 0 "Usage: extract-section [--require] SECTION FILE...
Write section SECTION of each FILE to standard output, in order, with NUL bytes removed.

Options:
  --require               exit with status 1 if a file or member lacks the section
  --help                  print this help and exit
  --version               print the version and exit

FILE: ELF executables, shared libraries, relocatable objects (ELF32 or ELF64, either byte order), or ar
archives, whose members are read in order. Sections compressed with zlib or zstd (SHF_COMPRESSED) and
legacy .zdebug sections are decompressed; a request for .debug_X also finds .zdebug_X.

A file or member without the section, or with an empty one, gets a warning. A file that cannot be read,
is not ELF, or has a section whose headers are inconsistent gets an error; the other files are still
processed.

Exit status: 0 success, 1 the data is wrong or missing, 2 usage error.
" ''
  ;;
version)
  run --version
  expect 0 "extract-section (sampler) $version\n" ''
  ;;
usage_errors)
  try="Try 'extract-section --help' for more information.\n"
  run
  expect 2 '' "extract-section: missing SECTION and FILE operands\n$try"
  run .debug_site_info
  expect 2 '' "extract-section: no FILE given after the SECTION\n$try"
  run --bogus .debug_site_info a.o
  expect 2 '' "extract-section: unrecognized option '--bogus'\n$try"
  run --require=yes .debug_site_info a.o
  expect 2 '' "extract-section: option '--require' takes no argument\n$try"
  run '' a.o
  expect 2 '' "extract-section: the section name is empty\n$try"
  ;;
*)
  fail "unknown case"
  ;;
esac

finish
