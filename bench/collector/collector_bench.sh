#!/usr/bin/env bash
# The collector's throughput (the goal: ">= 2,000 reports/s of 20 KB on this 2-core machine into SQLite, more into
# PostgreSQL with two collectors"). A flood of uploads from the load client (CLIENTS threads, keep-alive, each
# report sent until acknowledged) against a real sampler-collector on loopback, for:
#   - the HTTP ceiling (baseline, same run): the same bodies POSTed to /metrics, which reads them and answers
#     without decoding, validating or storing: what libmicrohttpd, curl and the kernel cost on this machine;
#   - SQLite; PostgreSQL 15 (a server of its own, tests/store/with_postgresql.sh; fsync on), one collector and
#     two collectors sharing the database (when PostgreSQL is installed).
# Per case: reports/s, p50/p99 latency, the collector's own CPU time per report (utime+stime from /proc), and
# the store's commits (group commit: several reports per transaction). The client shares the machine's CPUs.
# usage: collector_bench.sh SAMPLER-COLLECTOR LOAD-CLIENT [CLIENTS REPORTS-PER-CLIENT SIZE]
set -euo pipefail
collector=$(realpath "$1") load=$(realpath "$2") clients=${3:-64} per_client=${4:-160} size=${5:-20000}
self=$(realpath "$0")
top=$(cd "$(dirname "$self")/../.." && pwd)
threads=${SAMPLER_BENCH_COLLECTOR_THREADS:-32}

# Collectors and load clients still running when the script stops (a failure) are stopped with it.
declare -a pids=() load_pids=()
cleanup() {
  local p
  for p in "${load_pids[@]}" "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ "${SAMPLER_BENCH_PHASE:-}" = postgresql ] || rm -rf "$work"
}
trap cleanup EXIT
if [ "${SAMPLER_BENCH_PHASE:-}" != postgresql ]; then
  work=$(mktemp -d)
else
  work=$SAMPLER_BENCH_WORK
fi
cd "$work"
printf 'load\tbench-key\n' >keys.tsv
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# start_collector N DATABASE: collector N in the background; waits for its "listening on" line (no sleep).
declare -a urls
start_collector() {
  local n=$1 database=$2 line
  rm -f "fifo$n" && mkfifo "fifo$n"
  "$collector" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv --rate 1e9 --burst 1e9 \
    --threads "$threads" >"fifo$n" 2>>"collector$n.err" &
  pids[n]=$!
  exec {fd}<"fifo$n"
  read -r line <&"$fd" || { echo "collector did not start: $(cat "collector$n.err")" >&2; exit 1; }
  urls[n]=http://${line##* }
}
stop_collector() { kill -TERM "${pids[$1]}" && wait "${pids[$1]}" && unset "pids[$1]"; }
metric() { curl -s "${urls[$1]}/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

# flood LABEL DATABASE COLLECTORS [PATH]: the load split over COLLECTORS collectors, one load client each.
flood() {
  local label=$1 database=$2 count=$3 path=${4:-/api/reports} n before=() ticks=0 stored=0 commits=0
  for ((n = 0; n < count; n++)); do start_collector "$n" "$database"; before[n]=$(cpu_ticks "${pids[n]}"); done
  local each=$((clients / count))
  for ((n = 0; n < count; n++)); do
    "$load" "${urls[n]}" bench-key "$each" "$per_client" "$size" --path "$path" --prefix "bench-$$-$RANDOM-$n" \
      >"summary$n" &
    load_pids[n]=$!
  done
  for ((n = 0; n < count; n++)); do
    wait "${load_pids[n]}" || { echo "load client failed" >&2; exit 1; }
    unset "load_pids[n]"
  done
  for ((n = 0; n < count; n++)); do
    ticks=$((ticks + $(cpu_ticks "${pids[n]}") - before[n]))
    if [ "$path" = /api/reports ]; then
      stored=$((stored + $(metric "$n" sampler_reports_stored_total)))
      commits=$((commits + $(metric "$n" sampler_store_commits_total)))
    fi
    stop_collector "$n"
  done
  # reports/s: all reports over the slowest client's time; latency: the first client's (they are alike).
  awk -v label="$label" -v ticks="$ticks" -v hz="$hz" -v stored="$stored" -v commits="$commits" '
    { reports += $2; if ($6 > seconds) seconds = $6; if (!p50) { p50 = $10; p99 = $12 } }
    END {
      printf "%s: %d reports in %.2f s: %.0f reports/s, p50 %.1f ms, p99 %.1f ms, collector CPU %.3f ms per report",
        label, reports, seconds, reports / seconds, p50, p99, ticks / hz * 1000 / reports
      if (commits > 0) printf ", %d commits (%.1f reports per commit)", commits, stored / commits
      printf "\n"
    }' summary*
  rm -f summary*
}

if [ "${SAMPLER_BENCH_PHASE:-}" = postgresql ]; then
  flood "postgresql, 1 collector" "$SAMPLER_TEST_POSTGRESQL_URL" 1
  flood "postgresql, 2 collectors" "$SAMPLER_TEST_POSTGRESQL_URL" 2
  exit 0
fi

echo "collector benchmark: $clients clients x $per_client reports of $size bytes, $threads request threads," \
  "$(nproc) CPUs shared with the client"
flood "HTTP ceiling (POST /metrics)" "sqlite:$work/ceiling.db" 1 /metrics
flood "sqlite" "sqlite:$work/reports.db" 1
echo "goal: sqlite >= 2000 reports/s"
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SAMPLER_BENCH_PHASE=postgresql SAMPLER_BENCH_WORK=$work SCRATCH=$work/pg \
    bash "$top/tests/store/with_postgresql.sh" bash "$self" "$collector" "$load" "$clients" "$per_client" "$size"
else
  echo "postgresql: not installed (scripts/setup.sh installs postgresql-15): skipped"
fi
