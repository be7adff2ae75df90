#!/usr/bin/env bash
# What `sampler-run --interval` costs the launcher: a program built by sampler-cc (tests/collector/programs/
# until_killed.c, one unit) runs under sampler-run to a real collector on loopback, once killed as soon as it is
# ready (no interim report) and once killed after N interim reports were stored (sampler-run -v says each
# answer; the script waits on those lines, never on time). Printed: sampler-run's own CPU time at the instant of
# the kill (the first field of /proc/PID/schedstat, in ns: finer than the clock ticks of /proc/PID/stat), per case
# and ROUNDS times, alternating. The program pauses after its loop, so its own CPU time does not change between
# cases; the difference divided by N is one interim report: reading the mapping, writing the report, gzip, the
# HTTP upload (the first one also starts the loader that lists the instrumented libraries' build IDs).
# usage: interim_cost.sh BUILD-DIR [N [ROUNDS]]
set -euo pipefail
build=$(realpath "$1") reports=${2:-10} rounds=${3:-3}
top=$(cd "$(dirname "$(realpath "$0")")/../.." && pwd)
tools=$build/tools
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
export HOME=$work XDG_CACHE_HOME=$work/cache XDG_CONFIG_HOME=$work/config
"$build/instrumentor/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
  "$top/tests/collector/programs/until_killed.c" -o until_killed
printf 'bench\tkey\n' >keys.tsv
mkfifo server.fifo
"$tools/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:reports.db --keys keys.tsv \
  >server.fifo 2>server.err &
server=$!
exec 7<server.fifo
read -r line <&7
url=http://${line##* }

# measure N: sampler-run's CPU time (us) when its program is killed after N interim reports.
measure() {
  rm -f progress said && mkfifo progress said
  exec 8<>progress 6<>said
  local interval=()
  [ "$1" -gt 0 ] && interval=(--interval 1)
  ( "$tools/sampler-run" -v "${interval[@]}" --app bench --sparsity 1 --upload "$url" --api-key key -- \
      ./until_killed 1000 0 progress wait 2>&6 || true
    echo ended >&6 ) 2>/dev/null &  # bash's "Killed" notice: the kill is the point
  local launcher=$! pid ready sent=0 line parent ns
  read -r pid <&8
  read -r ready <&8
  while [ "$sent" -lt "$1" ] && read -r line <&6; do
    case $line in
      *"interim report "*" sent to "*) sent=$((sent + 1)) ;;
      ended) echo "sampler-run ended early" >&2; exit 1 ;;
    esac
  done
  read -r _ _ _ parent _ <"/proc/$pid/stat"
  read -r ns _ <"/proc/$parent/schedstat"
  kill -KILL "$pid"
  wait "$launcher" || true
  exec 6<&- 8<&-
  echo $((ns / 1000))
}

for ((round = 1; round <= rounds; round++)); do
  none=$(measure 0)
  some=$(measure "$reports")
  echo "round $round: no interim report ${none} us; $reports interim reports ${some} us;" \
       "per interim report $(((some - none) / reports)) us"
done
