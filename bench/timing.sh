# Timing for the benchmark scripts (sourced: `source "$(dirname "${BASH_SOURCE[0]}")/../timing.sh"`).
#
#   best_ns [--cpu] [--input FILE] COMMAND...
#
# Runs COMMAND $runs times (the caller's variable; 3 if unset), its output to /dev/null and its input from FILE
# (default /dev/null), and prints the least time in nanoseconds: the wall clock, or with --cpu the CPU time (user
# + system, of the command and its children), which a machine busy with other work does not inflate; with --cpu
# the command's stderr is discarded too (it would mix with the time's report).
best_ns() {
  local cpu=0 input=/dev/null best=0 took start r
  while (($# > 0)); do
    case $1 in
      --cpu) cpu=1; shift ;;
      --input) input=$2; shift 2 ;;
      *) break ;;
    esac
  done
  for ((r = 0; r < ${runs:-3}; r++)); do
    if ((cpu)); then
      took=$( { TIMEFORMAT='%3U %3S'; time "$@" <"$input" >/dev/null 2>&1; } 2>&1 |
        awk '{ printf "%.0f", ($1 + $2) * 1e9 }')
    else
      start=$(date +%s%N)
      "$@" <"$input" >/dev/null
      took=$(($(date +%s%N) - start))
    fi
    if ((best == 0 || took < best)); then best=$took; fi
  done
  echo "$best"
}
