#!/bin/bash
# Writes the input of an IR test: the module of SOURCE as sampler-lower receives it in sampler-cc, that is after
# sampler-collect and the optimiser (clang's -print-before=sampler-lower), without the dump's header line and the
# site text's module assembler (the lowering does not read them). Paste it under the test's RUN and CHECK lines.
# Usage: make_input.sh SAMPLER_CC SOURCE [SAMPLER-CC OPTIONS...] > INPUT.ll
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: make_input.sh SAMPLER_CC SOURCE [OPTIONS...] > INPUT.ll" >&2
  exit 2
fi
cc=$1 source=$2
shift 2
dump=$("$cc" "$@" -c "$source" -o /dev/null -mllvm -print-before=sampler-lower 2>&1)
if [[ $dump != *"IR Dump Before"* ]]; then
  echo "make_input.sh: no module printed for $source (no site?):" >&2
  printf '%s\n' "$dump" | cat -v >&2
  exit 1
fi
printf '%s\n' "$dump" | grep -v '^; \*\*\* IR Dump\|^module asm'
