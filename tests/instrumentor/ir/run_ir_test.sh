#!/bin/bash
# Runs one IR test: each `; RUN:` line of TEST (a .ll file), with %opt, %passes (sampler-passes.so),
# %FileCheck and %s (TEST) replaced, under pipefail (a line ending in \ goes on on the next RUN line); fails if
# one fails, or if TEST has no RUN line.
# Usage: run_ir_test.sh OPT PASSES_SO FILECHECK TEST
set -euo pipefail
if [[ $# -ne 4 ]]; then
  echo "usage: run_ir_test.sh OPT PASSES_SO FILECHECK TEST" >&2
  exit 2
fi
opt=$1 passes=$2 filecheck=$3 test=$4
[[ -r $test ]] || { echo "run_ir_test.sh: cannot read $test" >&2; exit 2; }

runs=()
partial=""  # a RUN line ending in a backslash goes on on the next RUN line
while IFS= read -r line; do
  if [[ $line =~ ^\;\ RUN:\ +(.*)$ ]]; then
    command=$partial${BASH_REMATCH[1]}
    if [[ $command == *\\ ]]; then
      partial="${command%\\} "
      continue
    fi
    partial=""
    command=${command//%opt/$opt}
    command=${command//%passes/$passes}
    command=${command//%FileCheck/$filecheck}
    command=${command//%s/$test}
    runs+=("$command")
  fi
done < "$test"
if [[ -n $partial ]]; then
  echo "run_ir_test.sh: $test: the last '; RUN:' line ends in a backslash" >&2
  exit 1
fi
if [[ ${#runs[@]} -eq 0 ]]; then
  echo "run_ir_test.sh: $test has no '; RUN:' line" >&2
  exit 1
fi
for command in "${runs[@]}"; do
  echo "RUN: $command"
  bash -o pipefail -c "$command"
done
