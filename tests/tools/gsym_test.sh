#!/bin/bash
# sampler-symbols and the GSYM reader against LLVM (correctness). Usage:
#   gsym_test.sh CASE SYMBOLIZER GSYMUTIL BINARY...
# with TOOLS and SCRATCH in the environment (see tests/tools/CMakeLists.txt). BINARY...: ELF files with DWARF and a
# build ID (the examples, and gsym_fixture_cxx: sampler-symbols-convert's main, C++ built -O2 -g, deep inlining).
#   symbolizer        every frame of COUNT random addresses inside function symbols, through our GSYM, equals
#                     llvm-symbolizer --no-demangle on the binary (function, file, line; GSYM holds no column)
#   llvm_reads_ours   llvm-gsymutil's lookups in our files equal ours
#   ours_reads_llvm   our lookups in files written by llvm-gsymutil --convert equal its own
#   resolve_crash     resolve-backtrace --symbols on a crash report of the first BINARY (an example that crashes
#                     with `crash segv`) prints llvm-symbolizer --filter-markup's lines (columns aside); frames in
#                     libc, which has no GSYM file, keep their module and offset
#   resolve_inline    the same over a body of 2000 legacy frames at random addresses of the last BINARY (inlined
#                     frames "#N.1" included)
#   errors            a file without a build ID, a file that is not ELF, a damaged GSYM: messages and statuses
#   lookup_alone      sampler-symbols does not load libLLVM (lookups start fast), and looks up alone, copied
#                     without sampler-symbols-convert, which gsym then names as missing
#   usage             --help, --version, usage errors
set -u
case_name=$1
symbolizer=$2
gsymutil=$3
shift 3
binaries=("$@")
COUNT=${GSYM_TEST_COUNT:-10000}

rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
failures=0
fail() {
  echo "FAIL ($case_name): $*" >&2
  failures=$((failures + 1))
}
check_file() { cmp -s "$2" "$3" || fail "$1 differs:$(echo; diff "$2" "$3" | head -40)"; }

# addresses BINARY COUNT SEED: random byte addresses inside the binary's sized function symbols, in hex.
addresses() {
  nm -S --defined-only "$1" | awk -v n="$2" -v seed="$3" '
    function hex(h,   v, i) {
      v = 0; h = tolower(h)
      for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
      return v
    }
    $3 ~ /^[TtWw]$/ { z = hex($2); if (z > 0) { start[k] = hex($1); size[k] = z; total += z; k++ } }
    END {
      srand(seed)
      for (i = 0; i < n; i++) {
        r = int(rand() * total)
        for (j = 0; j < k; j++) { if (r < size[j]) { printf "0x%x\n", start[j] + r; break } r -= size[j] }
      }
    }'
}

# llvm-symbolizer's answer without columns (GSYM has none).
symbolize() { "$symbolizer" --no-demangle -e "$1" <"$2" | sed -E 's/^(.*):([0-9]+):[0-9]+$/\1:\2/'; }

# llvm-gsymutil's lookups, in the form `sampler-symbols lookup` prints (NAME, FILE:LINE per frame, blank line).
gsymutil_lookup() {
  local file=$1 list=$2 args=()
  while read -r a; do args+=(--address "$a"); done <"$list"
  "$gsymutil" "$file" "${args[@]}" 2>&1 | awk '
    /^Looking up addresses/ { next }
    /^0x[0-9a-f]+: / { if (started) print ""; started = 1; sub(/^0x[0-9a-f]+: /, "") }
    { sub(/^ +/, "") }
    /^error: / { print "??"; print "??:0"; next }
    {
      line = $0; sub(/ \[inlined\]$/, "", line)
      if (match(line, / @ [^@]*$/)) { name = substr(line, 1, RSTART - 1); where = substr(line, RSTART + 3) }
      else { name = line; where = "??:0" }
      sub(/ \+ [0-9]+$/, "", name)
      print name; print where
    }
    END { if (started) print "" }'
}

convert_all() {  # -o names a directory that does not exist yet: sampler-symbols makes it
  "$TOOLS/sampler-symbols" gsym "${binaries[@]}" -o syms 2>convert.err ||
    fail "sampler-symbols gsym failed: $(cat convert.err)"
  [ -s convert.err ] && fail "sampler-symbols gsym: unexpected stderr: $(cat convert.err)"
}

gsym_of() { echo "syms/$(readelf -n "$1" | sed -n 's/^ *Build ID: //p').gsym"; }

case $case_name in
symbolizer)
  convert_all
  for b in "${binaries[@]}"; do
    g=$(gsym_of "$b")
    [ -f "$g" ] || { fail "no $g for $b"; continue; }
    addresses "$b" "$COUNT" 13 >addrs
    [ "$(wc -l <addrs)" -gt 0 ] || fail "no addresses in $b"
    "$TOOLS/sampler-symbols" lookup "$g" <addrs >ours 2>lookup.err || fail "lookup in $g failed: $(cat lookup.err)"
    symbolize "$b" addrs >theirs
    # The inline frames are there to compare: a binary without any would make this test weaker than it says.
    check_file "frames of $(wc -l <addrs) addresses in $(basename "$b") (ours, llvm-symbolizer)" theirs ours
    cat ours >>all_ours
  done
  # At least one binary must have inlined frames (two frames for one address), or the test checks too little.
  awk 'BEGIN { RS = "" } { if (NF > 2) found = 1 } END { exit !found }' all_ours ||
    fail "no inlined frame in any lookup"
  ;;
llvm_reads_ours)
  convert_all
  for b in "${binaries[@]}"; do
    g=$(gsym_of "$b")
    addresses "$b" 300 7 >addrs
    echo 0x10 >>addrs  # before every function: unknown to both
    "$TOOLS/sampler-symbols" lookup "$g" <addrs >ours
    gsymutil_lookup "$g" addrs >theirs
    check_file "llvm-gsymutil's lookups in our $(basename "$b").gsym" theirs ours
  done
  ;;
ours_reads_llvm)
  for b in "${binaries[@]}"; do
    "$gsymutil" --convert "$b" --out-file llvm.gsym >convert.log 2>&1 || fail "llvm-gsymutil --convert $b failed"
    addresses "$b" 300 5 >addrs
    "$TOOLS/sampler-symbols" lookup llvm.gsym <addrs >ours 2>lookup.err ||
      fail "our lookup in llvm's file: $(cat lookup.err)"
    gsymutil_lookup llvm.gsym addrs >theirs
    check_file "our lookups in llvm-gsymutil's file for $(basename "$b")" theirs ours
  done
  ;;
resolve_crash | resolve_inline)
  convert_all
  if [ "$case_name" = resolve_crash ]; then
    b=${binaries[0]}
    # (braces: the shell's own "Segmentation fault" notice goes to /dev/null too)
    { SAMPLER_SPARSITY=1 SAMPLER_FILE=report "$b" crash segv; } 2>/dev/null
    [ -s report ] || fail "the example left no report"
  else
    b=${binaries[$((${#binaries[@]} - 1))]}
    id=$(readelf -n "$b" | sed -n 's/^ *Build ID: //p')
    { echo '<report id="main-backtrace">'; echo '{{{reset}}}'
      echo "{{{module:0:$b:elf:$id}}}"; echo '{{{mmap:0x10000000:0x10000000:load:0:rx:0x00}}}'
      # a legacy frame is a return address: one past the address looked up
      addresses "$b" 2000 3 | awk '{ a = 0; h = substr($1, 3)
        for (i = 1; i <= length(h); i++) a = a * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
        printf "x[0x%x]\n", a + 268435456 + 1 }'
      echo '</report>'; } >report
  fi
  id=$(readelf -n "$b" | sed -n 's/^ *Build ID: //p')
  mkdir -p "debug/.build-id/${id:0:2}"
  objcopy --only-keep-debug "$b" "debug/.build-id/${id:0:2}/${id:2}.debug" || fail "objcopy failed"
  "$TOOLS/resolve-backtrace" report >markup 2>err || fail "resolve-backtrace: $(cat err)"
  "$symbolizer" --filter-markup --debug-file-directory=debug <markup 2>/dev/null |
    sed -E 's/^( *#[0-9.]+ +0x[0-9a-f]+ .*:[0-9]+):[0-9]+ (\(.*\))$/\1 \2/' >theirs
  "$TOOLS/resolve-backtrace" --symbols syms report >ours 2>err
  status=$?
  [ "$status" = 0 ] || fail "resolve-backtrace --symbols: exit status $status: $(cat err)"
  [ -s err ] && fail "resolve-backtrace --symbols: unexpected stderr: $(cat err)"
  # Modules without symbols: llvm-symbolizer prints the raw element, we the module and offset.
  grep -v '^\[\[\[bt:' theirs >theirs.known
  grep -Ev '^ *#[0-9]+ +0x[0-9a-f]+ \([^ ]*\+0x[0-9a-f]+\)$' ours >ours.known
  check_file "resolve-backtrace --symbols (llvm-symbolizer --filter-markup without columns, ours)" \
    theirs.known ours.known
  grep -q '^ *#[0-9]* *0x[0-9a-f]* [a-z_]* /' ours || fail "no symbolized frame at all: $(head ours)"
  if [ "$case_name" = resolve_crash ]; then
    grep -Eq '^ +#6 +0x[0-9a-f]+ \(/.*libc\.so\.6\+0x[0-9a-f]+\)$' ours || fail "libc frame #6: $(grep '#6' ours)"
  else
    grep -Eq '^ +#[0-9]+\.1 +0x' ours || fail "no inlined frame in the resolved stack"
  fi
  ;;
errors)
  mkdir -p syms
  printf 'int main(void) { return 0; }\n' >n.c
  cc -g -Wl,--build-id=none -o nobuildid n.c || fail "cannot build the fixture"
  echo "not an ELF file" >text.txt
  "$TOOLS/sampler-symbols" gsym nobuildid text.txt "${binaries[0]}" -o syms >out 2>err
  status=$?
  [ "$status" = 1 ] || fail "exit status $status, expected 1"
  grep -q "^sampler-symbols: 'nobuildid': error: no build ID" err || fail "no build ID message: $(cat err)"
  grep -q "^sampler-symbols: 'text.txt': error: cannot read" err || fail "not-ELF message: $(cat err)"
  [ "$(ls syms | wc -l)" = 1 ] || fail "the good file was not converted after the bad ones: $(ls syms)"
  # Compressed debug sections that lie about their size (LLVM would allocate what they state, and stop the
  # process when it cannot: "LLVM ERROR: out of memory", status 134): refused before LLVM reads them.
  cc -g -o small n.c && objcopy --compress-debug-sections=zlib small compressed || fail "cannot build the fixture"
  set_ch_size() {  # FILE SECTION SIZE: the stated size in the section's Elf64_Chdr
    python3 - "$@" <<'PY'
import struct, sys
path, wanted, size = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
data = bytearray(open(path, "rb").read())
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
def header(i): return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
names = header(shstrndx)[4]
for i in range(shnum):
    h = header(i)
    if data[names + h[0]:].split(b"\0", 1)[0] == wanted:
        struct.pack_into("<Q", data, h[4] + 8, size)
open(path, "wb").write(data)
PY
  }
  cp compressed huge && set_ch_size huge .debug_info $((1 << 40))
  cp compressed bomb && set_ch_size bomb .debug_info 300000000
  "$TOOLS/sampler-symbols" gsym huge bomb -o syms >out 2>err
  status=$?
  [ "$status" = 1 ] || fail "compressed sections that lie: exit status $status, expected 1: $(cat err)"
  grep -q "^sampler-symbols: 'huge': error: section '.debug_info' states a decompressed size of 1099511627776 bytes" \
    err || fail "2^40 bytes stated: $(cat err)"
  grep -q "^sampler-symbols: 'bomb': error: section '.debug_info' states a decompressed size of 300000000 bytes" err ||
    fail "a 300 MB section from a few hundred bytes: $(cat err)"
  grep -q "LLVM ERROR" err && fail "LLVM stopped the process: $(cat err)"
  # A damaged GSYM: the lookup says where.
  g=$(ls syms/*.gsym)
  head -c 40 "$g" >short.gsym
  "$TOOLS/sampler-symbols" lookup short.gsym 0x1000 >out 2>err
  status=$?
  [ "$status" = 1 ] || fail "lookup in a damaged file: exit status $status"
  grep -q "^sampler-symbols: 'short.gsym': error: byte 0: not a GSYM file (40 bytes, shorter than the header)" err ||
    fail "damaged file message: $(cat err)"
  # resolve-backtrace --symbols with a damaged GSYM file: one message, the frames keep module and offset.
  id=$(readelf -n "${binaries[0]}" | sed -n 's/^ *Build ID: //p')
  mkdir -p bad && cp short.gsym "bad/$id.gsym"
  printf '%s\n' '{{{reset}}}' "{{{module:0:app:elf:$id}}}" '{{{mmap:0x1000:0x100000:load:0:rx:0x00}}}' \
    'x[0x2001]' 'x[0x2002]' |
    "$TOOLS/resolve-backtrace" --symbols bad >out 2>err
  status=$?
  [ "$status" = 1 ] || fail "resolve-backtrace --symbols with a damaged file: exit status $status"
  [ "$(grep -c "bad/$id.gsym': error: byte 0: not a GSYM file" err)" = 1 ] || fail "damaged GSYM message: $(cat err)"
  grep -qx '    #1    0x0000000000002001 (app+0x1001)' out || fail "frame without symbols: $(cat out)"
  ;;
lookup_alone)
  ldd "$TOOLS/sampler-symbols" >ldd.out || fail "ldd sampler-symbols failed"
  grep -q 'libLLVM' ldd.out && fail "sampler-symbols loads libLLVM: $(grep libLLVM ldd.out)"
  grep -q 'libLLVM' <(ldd "$TOOLS/sampler-symbols-convert") || fail "sampler-symbols-convert without libLLVM?"
  mkdir -p syms alone
  "$TOOLS/sampler-symbols" gsym "${binaries[0]}" -o syms 2>err || fail "gsym through the converter: $(cat err)"
  cp "$TOOLS/sampler-symbols" alone/
  addresses "${binaries[0]}" 50 3 >addrs
  "$TOOLS/sampler-symbols" lookup syms/*.gsym <addrs >expected
  alone/sampler-symbols lookup syms/*.gsym <addrs >ours 2>err || fail "lookup alone failed: $(cat err)"
  check_file "lookup without the converter" expected ours
  grep -q '^[A-Za-z_]' ours || fail "no function named: $(head ours)"
  alone/sampler-symbols gsym "${binaries[0]}" -o syms >out 2>err
  status=$?
  [ "$status" = 1 ] || fail "gsym without the converter: exit status $status, expected 1"
  grep -q "^sampler-symbols: '.*/alone/sampler-symbols-convert': error: cannot run it (gsym and push need it): No such file" \
    err || fail "gsym without the converter: $(cat err)"
  ;;
usage)
  "$TOOLS/sampler-symbols" --help >out 2>err || fail "--help failed"
  grep -q "^Usage: sampler-symbols gsym" out || fail "--help: $(head -3 out)"
  "$TOOLS/sampler-symbols" --version >out 2>err || fail "--version failed"
  grep -q "sampler-symbols" out || fail "--version: $(cat out)"
  for args in "" "frobnicate x" "gsym" "lookup"; do
    # shellcheck disable=SC2086
    "$TOOLS/sampler-symbols" $args >out 2>err
    status=$?
    [ "$status" = 2 ] || fail "'sampler-symbols $args': exit status $status, expected 2"
    grep -q "^Try 'sampler-symbols --help'" err || fail "'sampler-symbols $args': $(cat err)"
  done
  # A missing output directory is made; one that cannot be (under a regular file) is a usage error.
  : >a-file
  "$TOOLS/sampler-symbols" gsym x -o a-file/dir >out 2>err
  [ $? = 2 ] || fail "an output directory under a file is not a usage error"
  grep -q "^sampler-symbols: 'a-file/dir' is not a directory" err || fail "-o a-file/dir: $(cat err)"
  ;;
*)
  fail "unknown case"
  ;;
esac
[ "$failures" = 0 ]
