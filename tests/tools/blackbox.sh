# Sourced by the tools' black-box test scripts: a fresh scratch directory, failure counting, and `expect`, which
# checks the exact exit status, stdout and stderr of the script's last `run`. Each script defines its own `run`
# (leaving stdout in ./out, stderr in ./err, the status in $status and the command in $ran) and ends with `finish`.
# Needs case_name, SCRATCH.
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
failures=0

fail() {
  echo "FAIL ($case_name): $*" >&2
  failures=$((failures + 1))
}

# differences EXPECTED ACTUAL: a diff to show; byte by byte (od -c) when either file holds NUL bytes.
differences() {
  if ! tr -d '\000' <"$1" | cmp -s - "$1" || ! tr -d '\000' <"$2" | cmp -s - "$2"; then
    diff <(od -c "$1") <(od -c "$2")
  else
    diff "$1" "$2"
  fi | head -40
}

# expect STATUS STDOUT STDERR: the last run's exact status and outputs (printf formats, so \n, \t and \0 work).
expect() {
  printf "$2" >expected.out
  printf "$3" >expected.err
  [ "$status" = "$1" ] || fail "$ran: exit status $status, expected $1"
  cmp -s out expected.out || fail "$ran: stdout differs:$(echo; differences expected.out out)"
  cmp -s err expected.err || fail "$ran: stderr differs:$(echo; differences expected.err err)"
}

# finish: PASS when every check held; the script's exit status says whether they did.
finish() {
  [ "$failures" = 0 ] || exit 1
  echo "PASS ($case_name)"
}

# expect_progress FILE LABEL DONE [TOTAL]: FILE (what a tool wrote to a terminal, tests/tools/on_terminal.py) is
# one progress line drawn in place: each state after a "\r", "LABEL: DONE[ of TOTAL (100%)], N MB, N MB/s, M:SS"
# last, then a newline. Diagnostics may come between states, each on a line of its own (the progress line erased).
expect_progress() {
  local of=${4:+ of $4 \\(100%\\)}
  [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$2: the progress line does not end with a newline"
  [ "$(head -c 1 "$1" | od -An -c | tr -d ' ')" = '\r' ] || fail "$2: the progress line is not drawn in place"
  tr '\r' '\n' <"$1" | grep -v '^ *$' | tail -n 1 |
    grep -Eq "^$2: $3$of, [0-9]+\.[0-9] MB, [0-9]+\.[0-9] MB/s, [0-9]+:[0-9]{2} *\$" ||
    fail "$2: last state: $(tr '\r' '\n' <"$1" | tail -n 2 | od -c | head -5)"
}

