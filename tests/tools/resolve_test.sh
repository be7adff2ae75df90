#!/bin/bash
# Black-box tests of resolveSamples, resolveTimestamps and resolve-backtrace (docs/tools.md): exact stdout, stderr
# and exit status, one feature per ctest test. Usage: resolve_test.sh CASE VERSION SYMBOLIZER, with TOOLS and
# SCRATCH in the environment (see tests/tools/CMakeLists.txt). Fixtures are made here, at test time, with cc, ar,
# objcopy, strip, gzip and base64.
set -u
case_name=$1
version=$2
symbolizer=$3
cc=${CC:-cc}

source "$(dirname "$0")/blackbox.sh"

# run INPUT TOOL ARGS...: runs TOOL with INPUT on stdin; leaves stdout in out, stderr in err, status in $status.
run() {
  local input=$1 tool=$2
  shift 2
  "$TOOLS/$tool" "$@" <"$input" >out 2>err
  status=$?
  ran="$tool $* < $input"
}

U1=0123456789abcdef0123456789abcdef
U2=fedcba9876543210fedcba9876543210
U3=00000000000000000000000000000003

# Site information used throughout: app.sites (branches of U1, returns of U2), lib.sites (bounds of U3).
write_sites() {
  printf '<sites unit="%s" scheme="branches">\na.c\t10\tmain\t1\tx > 0\na.c\t12\tmain\t2\ty\n</sites>\n' $U1 >app.sites
  printf '<sites unit="%s" scheme="returns">\nb.c\t5\tf\t3\tg\n</sites>\n' $U2 >>app.sites
  printf '<sites unit="%s" scheme="bounds">\nc.c\t7\th\t4\tv\tlocal\tdirect\nc.c\t8\th\t5\tp\tmem\tfield\n</sites>\n' \
    $U3 >lib.sites
}

# samples UNIT SCHEME LINES (printf format): a samples section.
samples() { printf "<samples unit=\"%s\" scheme=\"%s\">\n$3</samples>\n" "$1" "$2"; }
# timestamps UNIT SCHEME WHEN LINES
timestamps() { printf "<timestamps unit=\"%s\" scheme=\"%s\" when=\"%s\">\n$4</timestamps>\n" "$1" "$2" "$3"; }

# The joined lines of app.sites for the counters given (printf format pieces).
B1="app.sites\t$U1\tbranches\ta.c\t10\tmain\t1\tx > 0"
B2="app.sites\t$U1\tbranches\ta.c\t12\tmain\t2\ty"
R1="app.sites\t$U2\treturns\tb.c\t5\tf\t3\tg"

# object NAME PAYLOAD-FILE [SECTION]: NAME.o whose SECTION (default .debug_site_info) holds the payload, emitted the
# way instrumented code does (a non-allocated section from top-level assembler).
object() {
  local section=${3:-.debug_site_info}
  printf '__asm__(".pushsection %s,\\"\\",@progbits\\n.incbin \\"%s\\"\\n.popsection");\n' "$section" "$2" >"$1.c"
  echo "int $1_function(void) { return 1; }" >>"$1.c"
  "$cc" -c "$1.c" -o "$1.o" || fail "cannot compile fixture $1"
}

# cbf BYTES (printf format): the base64 of those CBF bytes, on one line.
cbf() { printf "$1" | base64 -w0; }

case $case_name in
# ---------------------------------------------------------------------------------------------- resolveSamples
samples_basic)
  write_sites
  samples $U1 branches '5\t0\n1\t2\n' >in
  run in resolveSamples app.sites
  expect 0 "$B1\t5\t0\n$B2\t1\t2\n" ''
  # A whole report: only the samples subreport is read.
  { echo '<report id="samples">'; samples $U2 returns '1\t2\t3\n'; samples $U1 branches '5\t0\n1\t2\n'
    echo '</report>'; echo '<report id="main-backtrace">'; echo 'signal:6:SIGABRT'; echo '</report>'; } >report
  run report resolveSamples app.sites
  expect 0 "$R1\t1\t2\t3\n$B1\t5\t0\n$B2\t1\t2\n" ''
  ;;
samples_elf)
  # Sites read in-process from objects, a linked program (units separated by NUL bytes) and archive members.
  write_sites
  object app app.sites
  object lib lib.sites
  echo 'int main(void) { return 0; }' >main.c
  "$cc" app.o lib.o main.c -o program || fail "cannot link"
  ar rcs libx.a lib.o || fail "ar failed"
  { samples $U3 bounds '-1\t4\n0x10\t0x20\n'; samples $U1 branches '1\t1\n2\t2\n'; } >in
  run in resolveSamples program
  expect 0 "program\t$U3\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect\t-1\t4\nprogram\t$U3\tbounds\tc.c\t8\th\t5\tp\tmem\tfield\t0x10\t0x20\nprogram\t$U1\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\nprogram\t$U1\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n" ''
  run in resolveSamples app.o libx.a
  expect 0 "libx.a(lib.o)\t$U3\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect\t-1\t4\nlibx.a(lib.o)\t$U3\tbounds\tc.c\t8\th\t5\tp\tmem\tfield\t0x10\t0x20\napp.o\t$U1\tbranches\ta.c\t10\tmain\t1\tx > 0\t1\t1\napp.o\t$U1\tbranches\ta.c\t12\tmain\t2\ty\t2\t2\n" ''
  ;;
samples_section_argument)
  # The section: a first argument that begins with "." and has no "/", or --section; ".debug_X" finds ".zdebug_X".
  write_sites
  object other app.sites .sampler_sites
  object plain app.sites
  objcopy --compress-debug-sections=zlib-gnu plain.o legacy.o || fail "objcopy failed"
  readelf -S legacy.o | grep -q zdebug_site_info || fail "objcopy did not make a .zdebug section"
  samples $U2 returns '7\t8\t9\n' >in
  run in resolveSamples .sampler_sites other.o
  expect 0 "other.o\t$U2\treturns\tb.c\t5\tf\t3\tg\t7\t8\t9\n" ''
  run in resolveSamples --section=.sampler_sites other.o
  expect 0 "other.o\t$U2\treturns\tb.c\t5\tf\t3\tg\t7\t8\t9\n" ''
  run in resolveSamples legacy.o
  expect 0 "legacy.o\t$U2\treturns\tb.c\t5\tf\t3\tg\t7\t8\t9\n" ''
  # "./app.sites" has a "/": it is a FILE, not a section name.
  run in resolveSamples ./app.sites
  expect 0 "./app.sites\t$U2\treturns\tb.c\t5\tf\t3\tg\t7\t8\t9\n" ''
  # Under the default section, other.o has none: a warning, and its unit is unknown.
  run in resolveSamples other.o
  expect 1 '' "resolveSamples: 'other.o': warning: no section '.debug_site_info'\nresolveSamples: '<stdin>':1: error: no sites for unit $U2 scheme returns in the files given\n"
  ;;
samples_directory)
  # Directories are searched recursively for *.sites (where a samplerinfo package installs them).
  write_sites
  mkdir -p root/usr/lib/sampler/sites/usr/bin root/usr/lib/sampler/sites/usr/lib64
  cp app.sites root/usr/lib/sampler/sites/usr/bin/app.sites
  cp lib.sites root/usr/lib/sampler/sites/usr/lib64/libx.so.sites
  echo 'not sites' >root/usr/lib/sampler/sites/README
  { samples $U3 bounds '1\t2\n3\t4\n'; samples $U2 returns '0\t0\t1\n'; } >in
  run in resolveSamples root
  expect 0 "root/usr/lib/sampler/sites/usr/lib64/libx.so.sites\t$U3\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect\t1\t2\nroot/usr/lib/sampler/sites/usr/lib64/libx.so.sites\t$U3\tbounds\tc.c\t8\th\t5\tp\tmem\tfield\t3\t4\nroot/usr/lib/sampler/sites/usr/bin/app.sites\t$U2\treturns\tb.c\t5\tf\t3\tg\t0\t0\t1\n" ''
  mkdir empty
  run in resolveSamples empty lib.sites
  expect 1 "lib.sites\t$U3\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect\t1\t2\nlib.sites\t$U3\tbounds\tc.c\t8\th\t5\tp\tmem\tfield\t3\t4\n" "resolveSamples: 'empty': warning: no *.sites files in this directory\nresolveSamples: '<stdin>':5: error: no sites for unit $U2 scheme returns in the files given\n"
  ;;
samples_duplicate_sites)
  # Identical sites in two FILEs: used once, named by the first; different sites: an error naming both.
  write_sites
  cp app.sites copy.sites
  object app app.sites
  samples $U2 returns '1\t1\t1\n' >in
  run in resolveSamples copy.sites app.o app.sites
  expect 0 "copy.sites\t$U2\treturns\tb.c\t5\tf\t3\tg\t1\t1\t1\n" ''
  sed 's/x > 0/x >= 0/' app.sites >changed.sites
  { samples $U1 branches '1\t2\n3\t4\n'; samples $U2 returns '1\t1\t1\n'; } >in
  run in resolveSamples app.sites changed.sites
  expect 1 "$R1\t1\t1\t1\n" "resolveSamples: 'changed.sites':1: error: sites for unit $U1 scheme branches differ from those in 'app.sites':1; samples of this unit and scheme are not resolved\n"
  ;;
samples_merge)
  # A plugin loaded three times: counters summed, bounds min/max as the text shows them, printed where the unit
  # first appeared; --no-merge prints each section where it is.
  write_sites
  { samples $U3 bounds '-5\t3\n0x7ffc10\t0x7ffc20\n'
    samples $U1 branches '1\t0\n0\t1\n'
    samples $U3 bounds '-7\t2\n0x7ffb00\t0x7ffc18\n'
    samples $U3 bounds '18446744073709551615\t18446744073709551615\n0x7ffc00\t0x7ffd00\n'
    samples $U1 branches '18446744073709551614\t1\n0\t0\n'; } >in
  L1="lib.sites\t$U3\tbounds\tc.c\t7\th\t4\tv\tlocal\tdirect"
  L2="lib.sites\t$U3\tbounds\tc.c\t8\th\t5\tp\tmem\tfield"
  run in resolveSamples app.sites lib.sites
  expect 0 "$L1\t-7\t18446744073709551615\n$L2\t0x7ffb00\t0x7ffd00\n$B1\t18446744073709551615\t1\n$B2\t0\t1\n" ''
  run in resolveSamples --no-merge app.sites lib.sites
  expect 0 "$L1\t-5\t3\n$L2\t0x7ffc10\t0x7ffc20\n$B1\t1\t0\n$B2\t0\t1\n$L1\t-7\t2\n$L2\t0x7ffb00\t0x7ffc18\n$L1\t18446744073709551615\t18446744073709551615\n$L2\t0x7ffc00\t0x7ffd00\n$B1\t18446744073709551614\t1\n$B2\t0\t0\n" ''
  ;;
samples_counter_overflow)
  # Counters are 64-bit: a sum past 2^64-1 is an error naming the site, which is left out; the rest is merged.
  write_sites
  { samples $U1 branches '18446744073709551615\t0\n1\t1\n'; samples $U1 branches '1\t0\n1\t1\n'; } >in
  run in resolveSamples app.sites
  expect 1 "$B2\t2\t2\n" "resolveSamples: '<stdin>':1: error: counter overflow merging unit $U1 scheme branches (the sections at lines 1 5): site 1 sums past 18446744073709551615; left out\n"
  ;;
samples_unknown_unit)
  write_sites
  { samples $U3 bounds '1\t2\n'; samples $U1 branches '1\t2\n3\t4\n'; samples $U1 nosuchscheme '1\n'; } >in
  run in resolveSamples app.sites
  expect 1 "$B1\t1\t2\n$B2\t3\t4\n" "resolveSamples: '<stdin>':1: error: no sites for unit $U3 scheme bounds in the files given\nresolveSamples: '<stdin>':8: error: no sites for unit $U1 scheme nosuchscheme in the files given\n"
  ;;
samples_line_count_mismatch)
  write_sites
  { samples $U1 branches '1\t2\n3\t4\n5\t6\n'; samples $U2 returns '1\t2\t3\n'; } >in
  run in resolveSamples app.sites
  expect 1 "$R1\t1\t2\t3\n" "resolveSamples: '<stdin>':1: error: line count mismatch for unit $U1 scheme branches: 3 lines in this section, 2 sites in 'app.sites':1; section left out\n"
  ;;
samples_malformed_lines)
  # A 10 MB line and a line with the wrong number of counters: one message each section, the sites left out.
  write_sites
  { printf '<samples unit="%s" scheme="branches">\n' $U1; head -c 10485760 /dev/zero | tr '\0' '7'; printf '\t1\n3\t4\n</samples>\n'
    samples $U2 returns '1\t2\n'; } >in
  run in resolveSamples app.sites
  expect 1 "$B2\t3\t4\n" "resolveSamples: '<stdin>':2: error: '7777777777777777777777777777777777777777...' is not a counter (an unsigned decimal integer of at most 64 bits); site left out\nresolveSamples: '<stdin>':6: error: 2 values where scheme returns has 3 per site; site left out\n"
  ;;
samples_binary_input)
  # A binary file given as the report: errors, and a good section after it is still resolved.
  write_sites
  { head -c 3000 /dev/urandom | tr '<\n' 'xx'; printf '\n'; samples $U2 returns '4\t5\t6\n'; } >in
  run in resolveSamples app.sites
  [ "$status" = 1 ] || fail "$ran: exit status $status, expected 1"
  printf "$R1\t4\t5\t6\n" >expected.out
  cmp -s out expected.out || fail "$ran: stdout differs: $(cat out)"
  grep -q "^resolveSamples: '<stdin>':1: error: " err || fail "$ran: no error naming line 1: $(cat err)"
  [ "$(wc -l <err)" = 1 ] || fail "$ran: more than one message: $(cat err)"
  # An ELF file given as a report is binary too.
  run "$TOOLS/resolveSamples" resolveSamples app.sites
  [ "$status" = 1 ] || fail "$ran: exit status $status, expected 1"
  [ -s out ] && fail "$ran: unexpected output"
  ;;
samples_gzip_crlf)
  write_sites
  { samples $U2 returns '1\t2\t3\n'; samples $U1 branches '5\t0\n1\t2\n'; } >plain
  gzip -c plain >in.gz
  run in.gz resolveSamples app.sites
  expect 0 "$R1\t1\t2\t3\n$B1\t5\t0\n$B2\t1\t2\n" ''
  sed 's/$/\r/' plain >crlf
  sed 's/$/\r/' app.sites >crlf.sites
  run crlf resolveSamples crlf.sites
  expect 0 "crlf.sites\t$U2\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\ncrlf.sites\t$U1\tbranches\ta.c\t10\tmain\t1\tx > 0\t5\t0\ncrlf.sites\t$U1\tbranches\ta.c\t12\tmain\t2\ty\t1\t2\n" ''
  ;;
samples_truncated_report)
  # A report cut short by a crash: a warning, what is there is resolved, exit 0.
  write_sites
  { echo '<report id="samples">'; samples $U2 returns '1\t2\t3\n'; printf '<samples unit="%s" scheme="branches">\n5\t0\n' $U1; } >in
  run in resolveSamples app.sites
  [ "$status" = 0 ] || fail "$ran: exit status $status, expected 0"
  printf "$R1\t1\t2\t3\n$B1\t5\t0\n" >expected.out
  cmp -s out expected.out || fail "$ran: stdout differs: $(cat out)"
  grep -q "^resolveSamples: '<stdin>'.*: warning: .*cut short" err || fail "$ran: no warning: $(cat err)"
  grep -q "error" err && fail "$ran: an error: $(cat err)"
  ;;
samples_bad_files)
  # A FILE that cannot be read or is a malformed ELF: an error naming it, the other FILEs still used.
  write_sites
  printf '\177ELF\2\1\1\0\0\0\0\0\0\0\0\0garbage' >broken.o
  samples $U2 returns '1\t2\t3\n' >in
  run in resolveSamples missing.sites broken.o app.sites
  [ "$status" = 1 ] || fail "$ran: exit status $status, expected 1"
  printf "$R1\t1\t2\t3\n" >expected.out
  cmp -s out expected.out || fail "$ran: stdout differs: $(cat out)"
  head -1 err | grep -qx "resolveSamples: 'missing.sites': error: cannot open: No such file or directory" ||
    fail "$ran: stderr: $(cat err)"
  sed -n 2p err | grep -q "^resolveSamples: 'broken.o': error: " || fail "$ran: stderr: $(cat err)"
  [ "$(wc -l <err)" = 2 ] || fail "$ran: stderr: $(cat err)"
  ;;
samples_special_files)
  # A FIFO without a writer is read as empty at once (opening it used to wait for a writer); a
  # device is refused before anything is read (/dev/zero used to grow to gigabytes, then std::bad_alloc); a pipe
  # with a writer (a process substitution) is read whole.
  write_sites
  mkfifo fifo || fail "mkfifo failed"
  samples $U2 returns '1\t2\t3\n' >in
  # The memory cap stops a tool that would read /dev/zero to its end (as resolveSamples did) well before the machine
  # runs out; AddressSanitizer's shadow memory needs more address space than any such cap allows.
  cap=4000000
  ldd "$TOOLS/resolveSamples" 2>/dev/null | grep -q libasan && cap=unlimited
  (ulimit -v $cap; timeout 20 "$TOOLS/resolveSamples" fifo /dev/zero <(cat app.sites) <in >out 2>err)
  status=$?
  ran="resolveSamples fifo /dev/zero <(cat app.sites) < in"
  sed -i 's#^/dev/fd/[0-9]*\t#PIPE\t#' out
  expect 1 "PIPE\t$U2\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\n" \
    "resolveSamples: 'fifo': warning: no sites sections\n\
resolveSamples: '/dev/zero': error: not a regular file, directory or pipe (a character device)\n"
  ;;
samples_control_characters)
  # Bytes of the input quoted in a message are shown escaped, never sent to the terminal.
  write_sites
  printf '<samples unit="%s" scheme="returns">\n1\t2\t\033[31m3\a\n</samples>\n' $U2 >in
  run in resolveSamples app.sites "no$(printf '\033')]0;title$(printf '\a').sites"
  expect 1 '' "resolveSamples: 'no\\\\x1b]0;title\\\\x07.sites': error: cannot open: No such file or directory\n\
resolveSamples: '<stdin>':2: error: '\\\\x1b[31m3\\\\x07' is not a counter (an unsigned decimal integer of at most 64 bits); site left out\n"
  ;;
samples_malformed_tags)
  # A tag with a duplicated attribute, or a character reference to a character XML does not
  # allow (&#x0; used to cut the value short), is an error naming the column.
  printf '<sites unit="%s" scheme="returns" scheme="branches">\nb.c\t5\tf\t3\tg\n</sites>\n' $U2 >dup.sites
  printf '<sites unit="%s" scheme="ret&#x0;urns">\nb.c\t5\tf\t3\tg\n</sites>\n' $U2 >nul.sites
  samples $U2 returns '1\t2\t3\n' >in
  run in resolveSamples dup.sites nul.sites
  expect 1 '' "resolveSamples: 'dup.sites':1: error: malformed tag: duplicate attribute 'scheme' at column 65\n\
resolveSamples: 'nul.sites':1: error: malformed tag: character reference '&#x0;' at column 59 names a character XML does not allow\n\
resolveSamples: '<stdin>':1: error: no sites for unit $U2 scheme returns in the files given\n"
  ;;
samples_stripped)
  # The executable stripped of its sites, with the .sites file extracted beforehand.
  write_sites
  object app app.sites
  echo 'int main(void) { return 0; }' >main.c
  "$cc" app.o main.c -o program || fail "cannot link"
  strip --strip-debug -o stripped program || fail "strip failed"
  "$TOOLS/extract-section" .debug_site_info program >program.sites || fail "extract-section failed"
  samples $U2 returns '1\t2\t3\n' >in
  run in resolveSamples stripped program.sites
  expect 0 "program.sites\t$U2\treturns\tb.c\t5\tf\t3\tg\t1\t2\t3\n" "resolveSamples: 'stripped': warning: no section '.debug_site_info'\n"
  ;;
samples_usage)
  : >in
  run in resolveSamples --help
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  head -1 out | grep -qx 'Usage: resolveSamples \[SECTION\] FILE...' || fail "$ran: $(head -1 out)"
  grep -q -- '--no-merge' out || fail "$ran: --no-merge not described"
  [ -s err ] && fail "$ran: stderr: $(cat err)"
  run in resolveSamples --version
  expect 0 "resolveSamples (sampler) $version\n" ''
  run in resolveSamples
  expect 2 '' "resolveSamples: no FILE given (the files that hold the sites)\nTry 'resolveSamples --help' for more information.\n"
  run in resolveSamples .debug_site_info
  expect 2 '' "resolveSamples: no FILE given (the files that hold the sites)\nTry 'resolveSamples --help' for more information.\n"
  run in resolveSamples --merge app.sites
  expect 2 '' "resolveSamples: unrecognized option '--merge'\nTry 'resolveSamples --help' for more information.\n"
  run in resolveSamples --section= app.sites
  expect 2 '' "resolveSamples: the section name is empty\nTry 'resolveSamples --help' for more information.\n"
  ;;
# ------------------------------------------------------------------------------------------- resolveTimestamps
timestamps_basic)
  write_sites
  { echo '<report id="samples">'
    samples $U1 branches '1\t1\n1\t1\n'
    timestamps $U1 branches first '0\n500\n'
    timestamps $U1 branches last '40\n600\n'
    timestamps $U2 returns first '7\n'
    timestamps $U1 branches first '30\n0\n'
    timestamps $U1 branches last '0\n700\n'
    echo '</report>'; } >in
  run in resolveTimestamps app.sites
  expect 0 "30\tapp.sites\t$U1\tbranches\tfirst\ta.c\t10\tmain\t1\tx > 0\n500\tapp.sites\t$U1\tbranches\tfirst\ta.c\t12\tmain\t2\ty\n40\tapp.sites\t$U1\tbranches\tlast\ta.c\t10\tmain\t1\tx > 0\n700\tapp.sites\t$U1\tbranches\tlast\ta.c\t12\tmain\t2\ty\n7\tapp.sites\t$U2\treturns\tfirst\tb.c\t5\tf\t3\tg\n" ''
  run in resolveTimestamps --no-merge app.sites
  expect 0 "0\tapp.sites\t$U1\tbranches\tfirst\ta.c\t10\tmain\t1\tx > 0\n500\tapp.sites\t$U1\tbranches\tfirst\ta.c\t12\tmain\t2\ty\n40\tapp.sites\t$U1\tbranches\tlast\ta.c\t10\tmain\t1\tx > 0\n600\tapp.sites\t$U1\tbranches\tlast\ta.c\t12\tmain\t2\ty\n7\tapp.sites\t$U2\treturns\tfirst\tb.c\t5\tf\t3\tg\n30\tapp.sites\t$U1\tbranches\tfirst\ta.c\t10\tmain\t1\tx > 0\n0\tapp.sites\t$U1\tbranches\tfirst\ta.c\t12\tmain\t2\ty\n0\tapp.sites\t$U1\tbranches\tlast\ta.c\t10\tmain\t1\tx > 0\n700\tapp.sites\t$U1\tbranches\tlast\ta.c\t12\tmain\t2\ty\n" ''
  ;;
timestamps_errors)
  write_sites
  { timestamps $U3 bounds first '1\n'; timestamps $U1 branches last '1\nlate\n'; timestamps $U2 returns last '1\n2\n'
    timestamps $U2 returns first '9\n'; } >in
  run in resolveTimestamps app.sites
  expect 1 "1\tapp.sites\t$U1\tbranches\tlast\ta.c\t10\tmain\t1\tx > 0\n9\tapp.sites\t$U2\treturns\tfirst\tb.c\t5\tf\t3\tg\n" "resolveTimestamps: '<stdin>':1: error: no sites for unit $U3 scheme bounds in the files given\nresolveTimestamps: '<stdin>':6: error: 'late' is not a timestamp (an unsigned decimal integer); site left out\nresolveTimestamps: '<stdin>':8: error: line count mismatch for unit $U2 scheme returns: 2 lines in this section, 1 site in 'app.sites':5; section left out\n"
  ;;
timestamps_usage)
  : >in
  run in resolveTimestamps --version
  expect 0 "resolveTimestamps (sampler) $version\n" ''
  run in resolveTimestamps --help
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  head -1 out | grep -qx 'Usage: resolveTimestamps \[SECTION\] FILE...' || fail "$ran: $(head -1 out)"
  run in resolveTimestamps
  expect 2 '' "resolveTimestamps: no FILE given (the files that hold the sites)\nTry 'resolveTimestamps --help' for more information.\n"
  ;;
# ------------------------------------------------------------------------------------------- resolve-backtrace
# A 64-bit stack: pc absolute 0x555555555131, ra +0x10, rep 2, omit 3, ra absolute 0x7ffff7a29d90, trunc.
backtrace_report)
  { echo '<report id="samples">'; samples $U2 returns '1\t2\t3\n'; echo '</report>'
    echo '<report id="main-backtrace">'
    echo '{{{reset}}}'
    echo '{{{module:0:app:elf:0123456789abcdef}}}'
    echo '{{{mmap:0x555555554000:0x1000:load:0:r:0x00}}}'
    echo '{{{mmap:0x555555555000:0x1000:load:0:rx:0x1000}}}'
    echo '[vdso] 0x7ffff7fc1000-0x7ffff7fc3000: no build ID'
    echo 'signal:11:SIGSEGV:0x10'
    echo "cbf:$(cbf '\x02\x1f\x00\x00\x55\x55\x55\x55\x51\x31\x20\x10\x81\x42\x2f\x00\x00\x7f\xff\xf7\xa2\x9d\x90\x01')"
    echo '</report>'; } >report
  STACK='{{{bt:0:0x555555555131:pc}}}\n{{{bt:1:0x555555555141:ra}}}\n{{{bt:2:0x555555555141:ra}}}\n{{{bt:3:0x555555555141:ra}}}\n... 3 frames omitted (#4 to #6) ...\n{{{bt:7:0x7ffff7a29d90:ra}}}\n... stack truncated: deeper frames were not recorded ...\n'
  CONTEXT='{{{reset}}}\n{{{module:0:app:elf:0123456789abcdef}}}\n{{{mmap:0x555555554000:0x1000:load:0:r:0x00}}}\n{{{mmap:0x555555555000:0x1000:load:0:rx:0x1000}}}\n[vdso] 0x7ffff7fc1000-0x7ffff7fc3000: no build ID\nCrashed with signal 11 (SIGSEGV) at address 0x10\n'
  run report resolve-backtrace
  expect 0 "$CONTEXT$STACK" ''
  # FILE instead of stdin; "-" is stdin; gzip and CRLF.
  : >empty
  run empty resolve-backtrace report
  expect 0 "$CONTEXT$STACK" ''
  gzip -c report >report.gz
  run report.gz resolve-backtrace -
  expect 0 "$CONTEXT$STACK" ''
  sed 's/$/\r/' report >report.crlf
  run report.crlf resolve-backtrace
  expect 0 "$CONTEXT$STACK" ''
  # Bare bodies, as extract-report main-backtrace prints them: frame numbers restart for each stack.
  sed -n '/^{{{reset/,/^cbf/p' report >bodies
  sed -n '/^{{{reset/,/^cbf/p' report >>bodies
  run bodies resolve-backtrace
  expect 0 "$CONTEXT$STACK$CONTEXT$STACK" ''
  ;;
backtrace_legacy)
  # glibc backtrace_symbols lines (sampler manual) become bt elements without a kind suffix.
  { echo '<report id="main-backtrace">'
    printf 'ccrypt[0x804ff1c]\n/lib/tls/libc.so.6[0xaa78c8]\nccrypt[0x804c3df]\n'
    printf '/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n./ccrypt(_start+0x21) [0x8049171]\n'
    echo '</report>'
    echo '<report id="main-backtrace">'
    echo 'ccrypt[0x804ff1c]'
    echo '</report>'; } >report
  run report resolve-backtrace
  expect 0 '{{{bt:0:0x0804ff1c}}}\n{{{bt:1:0xaa78c8}}}\n{{{bt:2:0x0804c3df}}}\n{{{bt:3:0xa94e23}}}\n{{{bt:4:0x08049171}}}\n{{{bt:0:0x0804ff1c}}}\n' ''
  ;;
backtrace_frame_limit)
  # At most 10^6 frames per stack: a rep of 2^32 becomes 10^6 lines and one summary.
  { echo '<report id="main-backtrace">'; echo "cbf:$(cbf '\x02\x18\x42\x8c\x01\x00\x00\x00\x00\x00')"; echo '</report>'; } >report
  run report resolve-backtrace
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  [ "$(wc -l <out)" = 1000001 ] || fail "$ran: $(wc -l <out) lines"
  [ "$(sed -n 1000000p out)" = '{{{bt:999999:0x42:pc}}}' ] || fail "$ran: line 10^6 is $(sed -n 1000000p out)"
  [ "$(tail -1 out)" = '... 4293967297 more frames (#1000000 to #4294967296) not shown: at most 1000000 frames are expanded per stack ...' ] ||
    fail "$ran: last line $(tail -1 out)"
  [ -s err ] && fail "$ran: stderr: $(cat err)"
  ;;
backtrace_errors)
  # Each problem is one message naming the line; everything good is still written; exit 1.
  { echo '<report id="main-backtrace">'
    echo '{{{reset}}}'
    echo '{{{module:1:app:elf:}}}'
    echo 'signal:eleven:SIGSEGV'
    echo "cbf:$(cbf '\x02\x18\x42\x20\x01\xf0\x00')"
    echo "cbf:$(cbf '\x02\x18\x42\x20\x01\x00')!"
    echo '</report>'
    echo 'stray text'
    echo '<report id="main-backtrace">'
    printf '\001\002\003binary\n'
    echo 'ccrypt[0x10]'
    echo '</report>'; } >report
  run report resolve-backtrace
  # The frames before the reserved opcode (byte 5) and before the bad character (13) are still written.
  BT='{{{bt:0:0x42:pc}}}\n{{{bt:1:0x43:ra}}}\n'
  expect 1 "{{{reset}}}\n$BT$BT{{{bt:0:0x10}}}\n" "resolve-backtrace: '<stdin>':3: error: column 21: module: bad build ID: empty field; element left out
resolve-backtrace: '<stdin>':4: error: malformed signal line (expected signal:NUMBER:NAME or signal:NUMBER:NAME:0xADDRESS)
resolve-backtrace: '<stdin>':5: error: cbf line: malformed stack at byte 5: reserved CBF opcode; the stack ends there
resolve-backtrace: '<stdin>':6: error: cbf line: bad base64 at character 13: invalid base64 character; frames after it are lost
resolve-backtrace: '<stdin>':8: error: text outside a subreport: stray text
resolve-backtrace: '<stdin>':10: error: binary data in a main-backtrace body; lines of binary data are skipped
"
  # A binary file given as the report: one message, nothing written.
  run "$TOOLS/resolve-backtrace" resolve-backtrace
  expect 1 '' "resolve-backtrace: '<stdin>':1: error: binary data: the input is not a report or main-backtrace body\n"
  ;;
backtrace_truncated_report)
  { echo '<report id="main-backtrace">'; echo '{{{reset}}}'; echo 'signal:6:SIGABRT'; } >report
  run report resolve-backtrace
  expect 0 '{{{reset}}}\nCrashed with signal 6 (SIGABRT)\n' "resolve-backtrace: '<stdin>':1: warning: subreport cut short (no closing </report>); using what is there\n"
  # Cut inside the cbf line: the frames before the cut are written.
  { echo '<report id="main-backtrace">'; echo 'signal:6:SIGABRT'
    printf 'cbf:%s' "$(cbf '\x02\x18\x42\x20\x01\x20\x02\x00' | head -c 7)"; } >report
  run report resolve-backtrace
  expect 0 'Crashed with signal 6 (SIGABRT)\n{{{bt:0:0x42:pc}}}\n' "resolve-backtrace: '<stdin>':3: warning: cbf line cut short by the end of the report; the frames after the cut are lost
resolve-backtrace: '<stdin>':1: warning: subreport cut short (no closing </report>); using what is there
"
  ;;
backtrace_long_line)
  # A 10 MB line: one message, the lines around it still written.
  { echo '<report id="main-backtrace">'; echo 'signal:6:SIGABRT'
    printf 'cbf:'; head -c 10485760 /dev/zero | tr '\0' '!'; echo
    echo "cbf:$(cbf '\x02\x18\x42\x00')"; echo '</report>'; } >report
  run report resolve-backtrace
  expect 1 'Crashed with signal 6 (SIGABRT)\n{{{bt:0:0x42:pc}}}\n' "resolve-backtrace: '<stdin>':3: error: cbf line: bad base64 at character 5: invalid base64 character; frames after it are lost\n"
  ;;
backtrace_special_files)
  # A FIFO without a writer reads as empty at once; a device is refused.
  mkfifo fifo || fail "mkfifo failed"
  : >empty
  (timeout 20 "$TOOLS/resolve-backtrace" fifo <empty >out 2>err)
  status=$?
  ran="resolve-backtrace fifo"
  expect 1 '' "resolve-backtrace: 'fifo': error: no backtrace in the input (it is empty)\n"
  (timeout 20 "$TOOLS/resolve-backtrace" /dev/zero <empty >out 2>err)
  status=$?
  ran="resolve-backtrace /dev/zero"
  expect 1 '' "resolve-backtrace: '/dev/zero': error: not a regular file or pipe (a character device)\n"
  ;;
backtrace_control_characters)
  # Control characters of the report are shown escaped (\xNN) in the output and in messages.
  # SGR colour sequences outside elements are symbolizer markup (Symbolizer Markup Format), passed to llvm-symbolizer.
  { echo '<report id="main-backtrace">'
    printf 'signal:11:SIG\033[31mSEGV:0x10\n'
    printf '\033[1mbold\033[0m and \033[2J a cleared screen, \033]0;a title\n'
    printf '{{{module:1:\033[31mred:elf:00}}}\n'
    echo '</report>'; } >report
  run report resolve-backtrace
  expect 0 'Crashed with signal 11 (SIG\\x1b[31mSEGV) at address 0x10\n\033[1mbold\033[0m and \\x1b[2J a cleared screen, \\x1b]0;a title\n{{{module:1:\\x1b[31mred:elf:00}}}\n' ''
  : >empty
  run empty resolve-backtrace "crash$(printf '\033')[31m.txt"
  expect 1 '' "resolve-backtrace: 'crash\\\\x1b[31m.txt': error: cannot open: No such file or directory\n"
  run empty resolve-backtrace "--crash$(printf '\033')[31m"
  expect 2 '' "resolve-backtrace: unrecognized option '--crash\\\\x1b[31m'\nTry 'resolve-backtrace --help' for more information.\n"
  ;;
backtrace_lenient_markup)
  # Markup is read as leniently as llvm-symbolizer --filter-markup reads it: any number of hex
  # digits after 0x (compiler-rt prints %p with 0x%zx), odd build IDs, 0X/0b/0o integers, extra fields. An SGR
  # sequence around a contextual element does not hide it from the checks; a multi-line element (Symbolizer Markup
  # Format, hexdict) is passed through whole, its lines never taken for signal, cbf or backtrace_symbols lines.
  { echo '<report id="main-backtrace">'
    echo '{{{reset}}}'
    echo '{{{module:0X1:app:elf:123}}}'
    echo '{{{mmap:0x7f0000:0x1000:load:0X1:rx:0x0}}}'
    echo '{{{mmap:0x00000000000000000007f1000:0b1000000000000:load:1:r:0x1000:extra}}}'
    printf '\033[1m{{{module:2:lib:elf:zz}}}\033[0m\n'
    echo 'registers {{{hexdict:'
    echo '  app(main+0x10)[0x7f0010]'
    echo 'signal:11:SIGSEGV:0x7f0010 }}} end'
    echo 'signal:6:SIGABRT'
    echo '</report>'; } >report
  run report resolve-backtrace
  expect 1 '{{{reset}}}\n{{{module:0X1:app:elf:123}}}\n{{{mmap:0x7f0000:0x1000:load:0X1:rx:0x0}}}\n{{{mmap:0x00000000000000000007f1000:0b1000000000000:load:1:r:0x1000:extra}}}\nregisters {{{hexdict:\n  app(main+0x10)[0x7f0010]\nsignal:11:SIGSEGV:0x7f0010 }}} end\nCrashed with signal 6 (SIGABRT)\n' \
    "resolve-backtrace: '<stdin>':6: error: column 25: module: bad build ID: not a hex digit; element left out\n"
  # llvm-symbolizer accepts every element that was passed through (it only warns about the extra field).
  "$symbolizer" --filter-markup <out >symbolized 2>symbolizer.err
  grep -q 'error' symbolizer.err && fail "llvm-symbolizer rejected an element: $(cat symbolizer.err)"
  grep -q '\[\[\[ELF module #0x1 "app"; BuildID=0123 \[0x7f0000-0x7f0fff\](rx),\[0x7f1000-0x7f1fff\](r)\]\]\]' symbolized ||
    fail "llvm-symbolizer did not take the module map: $(cat symbolized)"
  ;;
backtrace_missing)
  { echo '<report id="samples">'; samples $U2 returns '1\t2\t3\n'; echo '</report>'; } >report
  run report resolve-backtrace
  expect 1 '' "resolve-backtrace: '<stdin>': error: no main-backtrace subreport in the report\n"
  : >empty
  run empty resolve-backtrace no-such-report
  expect 1 '' "resolve-backtrace: 'no-such-report': error: cannot open: No such file or directory\n"
  ;;
backtrace_usage)
  : >in
  run in resolve-backtrace --version
  expect 0 "resolve-backtrace (sampler) $version\n" ''
  run in resolve-backtrace --help
  [ "$status" = 0 ] || fail "$ran: exit status $status"
  head -1 out | grep -qx 'Usage: resolve-backtrace \[FILE\]' || fail "$ran: $(head -1 out)"
  run in resolve-backtrace a b
  expect 2 '' "resolve-backtrace: at most one FILE\nTry 'resolve-backtrace --help' for more information.\n"
  run in resolve-backtrace --frames=3
  expect 2 '' "resolve-backtrace: unrecognized option '--frames=3'\nTry 'resolve-backtrace --help' for more information.\n"
  ;;
backtrace_symbolizer)
  # The markup goes through the real llvm-symbolizer with a symbol directory laid out as .build-id/xx/rest.debug.
  # The "crash" is made by hand: a non-PIE program whose stack is the addresses of its own code, so the module map
  # is the program headers.
  cat >crash.c <<'EOF'
__attribute__((noinline)) int crash_here(volatile int *p) {
  return *p;
}
__attribute__((noinline)) int caller(volatile int *p) {
  return crash_here(p) + 1;
}
int main(void) { return caller(0); }
EOF
  "$cc" -g -O1 -no-pie -fno-pie -Wl,--build-id=sha1 crash.c -o crash || fail "cannot build"
  build_id=$(readelf -n crash | sed -n 's/.*Build ID: //p')
  [ -n "$build_id" ] || fail "no build ID"
  mkdir -p "symbols/.build-id/${build_id:0:2}"
  objcopy --only-keep-debug crash "symbols/.build-id/${build_id:0:2}/${build_id:2}.debug" || fail "objcopy failed"
  strip -g crash
  # The crashing instruction: the load in crash_here; the return address: after the call in caller.
  pc=$(objdump -d --no-show-raw-insn crash | awk '/<crash_here>:/{f=1;next} f&&/mov/{print $1; exit}' | tr -d ':')
  ra=$(objdump -d --no-show-raw-insn crash | awk '/<caller>:/{f=1;next} f&&/call/{c=1;next} c{print $1; exit}' | tr -d ':')
  [ -n "$pc" ] && [ -n "$ra" ] || fail "cannot find the addresses: pc=$pc ra=$ra"
  hex8() { printf '%016x' "0x$1" | sed 's/../\\x&/g'; }
  { echo '<report id="main-backtrace">'
    echo '{{{reset}}}'
    echo "{{{module:0:crash:elf:$build_id}}}"
    # One mmap per PT_LOAD segment: START page-aligned down, SIZE rounded up (docs/formats.md section 3).
    readelf -lW crash | awk '$1=="LOAD"{f=""; for(i=7;i<NF;i++) f=f $i; print $3, $6, f}' | while read -r vaddr memsz flags; do
      start=$((vaddr & ~0xfff)); end=$(((vaddr + memsz + 0xfff) & ~0xfff))
      perm=$(echo "$flags" | sed 's/[^RWE]//g; s/R/r/; s/W/w/; s/E/x/')
      printf '{{{mmap:0x%x:0x%x:load:0:%s:0x%x}}}\n' $start $((end - start)) "$perm" $start
    done
    echo 'signal:11:SIGSEGV:0x00'
    echo "cbf:$(cbf "\x02\x1f$(hex8 "$pc")\x2f$(hex8 "$ra")\x00")"
    echo '</report>'; } >report
  run report resolve-backtrace
  [ "$status" = 0 ] || fail "$ran: exit status $status: $(cat err)"
  "$symbolizer" --filter-markup --debug-file-directory=symbols <out >symbolized 2>symbolizer.err
  grep -q "Crashed with signal 11 (SIGSEGV) at address 0x00" symbolized || fail "no signal line: $(cat symbolized)"
  grep -Eq "#0 +0x0*$pc crash_here .*/crash.c:2:" symbolized || fail "frame 0 not symbolized: $(cat symbolized)"
  # llvm-symbolizer shows a return address minus one: the call instruction's last byte.
  grep -Eq "#1 +0x0*$(printf '%x' $((0x$ra - 1))) caller .*/crash.c:5:" symbolized || fail "frame 1 not symbolized: $(cat symbolized)"
  [ -s symbolizer.err ] && fail "llvm-symbolizer complained: $(cat symbolizer.err)"
  ;;
*)
  fail "unknown case"
  ;;
esac

finish
