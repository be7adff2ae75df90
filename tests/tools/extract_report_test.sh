#!/bin/bash
# Black-box tests of extract-report (docs/tools.md): exact stdout, stderr and exit status, one feature per ctest
# test. Usage: extract_report_test.sh CASE VERSION, with TOOLS and SCRATCH in the environment (see
# tests/tools/CMakeLists.txt). Inputs are made here, at test time, with printf, gzip and awk.
set -u
case_name=$1
version=$2
tool=$TOOLS/extract-report

source "$(dirname "$0")/blackbox.sh"

# run ARGS... <INPUT: runs the tool; leaves its stdout in out, its stderr in err and its status in $status.
run() {
  "$tool" "$@" >out 2>err
  status=$?
  ran="extract-report $*"
}

unit=0123456789abcdef0123456789abcdef

# The report of a crashed run, as the runtime writes it (the sampler manual and docs/formats.md section 3).
report() {
  printf '<report id="samples">\n'
  printf '<samples unit="%s" scheme="branches">\n0\t4\n12\t0\n</samples>\n' $unit
  printf '<timestamps unit="%s" scheme="branches" when="first">\n3\n0\n</timestamps>\n' $unit
  printf '</report>\n'
  printf '<report id="main-backtrace">\n{{{reset}}}\n{{{module:0:app:elf:0123abcd}}}\n'
  printf '{{{mmap:0x400000:0x1000:load:0:rx:0x0}}}\nsignal:11:SIGSEGV:0x0\ncbf:AAEC\n</report>\n'
}
samples_body="<samples unit=\"$unit\" scheme=\"branches\">\n0\t4\n12\t0\n</samples>\n<timestamps unit=\"$unit\" scheme=\"branches\" when=\"first\">\n3\n0\n</timestamps>\n"
backtrace_body="{{{reset}}}\n{{{module:0:app:elf:0123abcd}}}\n{{{mmap:0x400000:0x1000:load:0:rx:0x0}}}\nsignal:11:SIGSEGV:0x0\ncbf:AAEC\n"

case $case_name in
samples)
  report >report.log
  run samples <report.log
  expect 0 "$samples_body" ''
  ;;
main_backtrace)
  report >report.log
  run main-backtrace <report.log
  expect 0 "$backtrace_body" ''
  # The legacy body of the sampler manual, as glibc's backtrace_symbols wrote it.
  printf '<report id="main-backtrace">\nccrypt[0x804ff1c]\n/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n</report>\n' >legacy.log
  run main-backtrace <legacy.log
  expect 0 'ccrypt[0x804ff1c]\n/lib/tls/libc.so.6(__libc_start_main+0xd3)[0xa94e23]\n' ''
  ;;
every_match_in_order)
  # Repeated subreports (several reports concatenated) come out in input order; others are left out.
  { report; printf '<report id="other">\nno\n</report>\n<report id="samples">\nsecond\n</report>\n'; } >report.log
  run samples <report.log
  expect 0 "${samples_body}second\n" ''
  run other <report.log
  expect 0 'no\n' ''
  ;;
body_is_not_xml)
  # Body lines are copied as they are: entities stay, lines starting with '<' that are not report tags stay.
  printf '<report id="x&amp;y">\n&amp; <b>\n<reports>\n</report >\n' >report.log
  run 'x&y' <report.log
  expect 0 '&amp; <b>\n<reports>\n' ''
  ;;
gzip)
  report | gzip -c >report.gz
  run samples <report.gz
  expect 0 "$samples_body" ''
  # Concatenated gzip members are one stream, as for gzip(1).
  { report | gzip -c; printf '<report id="samples">\nmore\n</report>\n' | gzip -c; } >two.gz
  run samples <two.gz
  expect 0 "${samples_body}more\n" ''
  ;;
crlf)
  report | sed 's/$/\r/' >report.log
  run samples <report.log
  expect 0 "$samples_body" ''
  ;;
pipe)
  # Standard input is a pipe filled slowly, a few bytes at a time, and gzip-compressed.
  report | gzip -c >report.gz
  { head -c 5 report.gz; sleep 0.2; tail -c +6 report.gz; } | "$tool" samples >out 2>err
  status=$?
  ran="extract-report samples <slow pipe"
  expect 0 "$samples_body" ''
  ;;
truncated_report)
  # A crash while the report was written: the last subreport has no </report> and its last line no newline.
  printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n0\t4\n12' $unit >crash.log
  run samples <crash.log
  expect 0 "<samples unit=\"$unit\" scheme=\"branches\">\n0\t4\n12\n" \
    "extract-report: '<stdin>': warning: subreport 'samples' starting at line 1 was cut short (no </report>)\n"
  ;;
truncated_gzip)
  # The lines before the damage are written; the error names the line where reading stopped.
  awk 'BEGIN { print "<report id=\"samples\">"; for (i = 0; i < 50000; i++) print i "\t" i * 7; print "</report>" }' \
    >big.log
  gzip -c big.log >big.gz
  head -c $(($(stat -c %s big.gz) - 20)) big.gz >cut.gz
  run samples <cut.gz
  lines=$(wc -l <out)
  [ "$status" = 1 ] || fail "truncated gzip: exit status $status, expected 1"
  [ "$lines" -gt 49000 ] || fail "truncated gzip: only $lines lines written"
  head -n "$lines" <(tail -n +2 big.log) | cmp -s - out || fail "truncated gzip: the lines written differ"
  printf "extract-report: '<stdin>':%d: error: gzip data is truncated (the input ends inside a compressed stream)\nextract-report: '<stdin>': warning: subreport 'samples' starting at line 1 was cut short (no </report>)\n" \
    $((lines + 2)) >expected.err
  cmp -s err expected.err || fail "truncated gzip: stderr differs:$(echo; diff expected.err err)"
  ;;
not_found)
  report >report.log
  run nothing <report.log
  expect 1 '' "extract-report: '<stdin>': error: no subreport with id 'nothing'\n"
  run samples </dev/null
  expect 1 '' "extract-report: '<stdin>': error: no subreport with id 'samples'\n"
  ;;
malformed)
  # Each problem gets one message with its line; everything good is still written; the status is 1.
  printf 'junk\nmore junk\n<report id="samples">\na\n<report id="samples">\nb\n</report>\n</report>\n<report name="x">\nc\n</report>\n<report id="samples">\nd\n</report>\n' >bad.log
  run samples <bad.log
  expect 1 'a\nb\nd\n' "extract-report: '<stdin>':1: error: text outside a subreport (ignored up to the next <report> tag)
extract-report: '<stdin>':5: error: subreport 'samples' starting at line 3 has no closing tag before this <report>
extract-report: '<stdin>':8: error: </report> without a matching <report> tag
extract-report: '<stdin>':9: error: <report> tag has no id attribute (its subreport is skipped)
"
  ;;
binary_garbage)
  # Random bytes: no crash, a bounded number of messages, status 1.
  head -c 3000000 /dev/urandom >garbage
  run samples <garbage
  [ "$status" = 1 ] || fail "garbage: exit status $status, expected 1"
  [ "$(wc -l <err)" -le 102 ] || fail "garbage: $(wc -l <err) lines of diagnostics"
  grep -q "error: no subreport with id 'samples'" err || fail "garbage: no 'not found' error"
  # Garbage inside a subreport is body (once no line starts with '<'): copied through byte for byte, less the
  # "\r" before each "\n".
  LC_ALL=C tr -d '<' <garbage >body
  { printf '<report id="g">\n'; cat body; printf '\n</report>\n'; } >wrapped
  { cat body; printf '\n'; } | LC_ALL=C sed 's/\r$//' >expected.body
  "$tool" g <wrapped >out 2>err
  status=$?
  [ "$status" = 0 ] || fail "wrapped garbage: exit status $status: $(cat err)"
  cmp -s out expected.body || fail "wrapped garbage: output differs"
  ;;
large)
  # A big report: the output is exactly the body, whatever the buffer boundaries.
  awk 'BEGIN { for (r = 0; r < 20; r++) { print "<report id=\"samples\">"; for (i = 0; i < 20000; i++) print r "\t" i; print "</report>"; print "<report id=\"main-backtrace\">"; print "{{{reset}}}"; print "</report>" } }' >big.log
  grep -v -e '^<' -e '{{{reset}}}' big.log >expected.body
  "$tool" samples <big.log >out 2>err
  status=$?
  [ "$status" = 0 ] || fail "large: exit status $status"
  cmp -s out expected.body || fail "large: output differs"
  [ -s err ] && fail "large: unexpected stderr: $(cat err)"
  ;;
write_error)
  report >report.log
  "$tool" samples <report.log >/dev/full 2>err
  status=$?
  ran="extract-report samples >/dev/full"
  : >out
  expect 1 '' "extract-report: error: cannot write standard output: No space left on device\n"
  ;;
help)
  run --help
  expect 0 "Usage: extract-report ID
Write the body of every subreport <report id=\"ID\"> read on standard input, in order, without its tags.

Options:
  --help                  print this help and exit
  --version               print the version and exit

Standard input: a feedback report, plain or gzip-compressed (recognised by its magic bytes), with LF or
CRLF line ends. 'extract-report samples' prints the samples subreport that resolveSamples and
resolveTimestamps read; 'extract-report main-backtrace' the crash stack for resolve-backtrace.

A last subreport cut short by a crash (no </report>) is written as far as it goes, with a warning; that
is not an error. It is an error when no subreport has that id, or when the input is malformed (text
outside subreports, bad tags, corrupt gzip data): everything readable is still written.

Exit status: 0 success, 1 the data is wrong or missing, 2 usage error.
" ''
  ;;
version)
  run --version
  expect 0 "extract-report (sampler) $version\n" ''
  ;;
usage_errors)
  try="Try 'extract-report --help' for more information.\n"
  run </dev/null
  expect 2 '' "extract-report: missing ID operand (the subreport's id)\n$try"
  run samples report.log </dev/null
  expect 2 '' "extract-report: extra operand 'report.log' (the report is read on standard input)\n$try"
  run '' </dev/null
  expect 2 '' "extract-report: the subreport id is empty\n$try"
  run --bogus samples </dev/null
  expect 2 '' "extract-report: unrecognized option '--bogus'\n$try"
  ;;
*)
  fail "unknown case"
  ;;
esac

finish
