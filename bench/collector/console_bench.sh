#!/usr/bin/env bash
# The console's pages over many stored runs (docs/performance.md, "The console: pages computed from the store"):
# RUNS made-up runs of the load client (about SIZE bytes of report each, one branches section, a third failing by
# exit status) uploaded to a real sampler-collector with the section's site information in --site-dir; then
#   - each page's time (curl's time_total, a `read` key), three times: the predictors (all releases) and the
#     application's page;
#   - the predictors' page again once every run's summary is cleared (as in a database migrated from schema
#     version 4), from a collector started afresh (as after a migration): the first page summarizes the reports
#     and stores the summaries, the next reads them;
#   - uploads alone and beside READERS readers of a page, in alternated rounds (ROUNDS of: alone, beside readers
#     of the predictors, alone, beside readers of the application's page): each flood is 64 upload clients x
#     FLOOD-REPORTS-PER-CLIENT reports of another application ("flood", so that the pages read the same RUNS
#     runs throughout); the readers are page_readers, one process, each reader a page every EVERY seconds. Per
#     flood: reports/s, the pages answered meanwhile and their latency, the CPU seconds of the collector, of the
#     readers' process and (on PostgreSQL) of the database server's processes, and the collector's RSS after it;
#     then one more flood alone, and each flood beside the readers against the mean of the floods alone on either
#     side of it (paired ratios: their median, spread and how many kept 80 %), beside the same statistic for each
#     flood alone against its own neighbours alone, which is what the machine's noise alone gives;
#   - the bytes a stored run takes: its summary, its body, and the database's size per run.
# SQLite by default; under tests/store/with_postgresql.sh, the PostgreSQL server it started. BUGS=B in the
# environment gives the RUNS runs' failures B causes (load_client --bugs), so that the predictor page ranks B
# predicates in B elimination rounds; without it no predicate predicts failure and the page makes no round.
# FLOOD_APP=load makes the floods runs of the readers' own application (each stored run then ends the pages the
# collector shows again within serve --console-fresh-ms, docs/decisions.md, "The console"; the pages read more runs
# with each flood, and each making asks the database for what was stored since the last: "The database's counts
# kept between pages").
# INTERIM=1 stores a run still going (one interim report) before the RUNS runs: the runs kept between pages stop
# before it (docs/decisions.md, "The runs kept between pages"), so that each predictor page reads every run again.
# usage: console_bench.sh SAMPLER-COLLECTOR LOAD-CLIENT PAGE-READERS
#                         [RUNS SIZE READERS EVERY FLOOD-REPORTS-PER-CLIENT ROUNDS]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/load_sites.sh"
collector=$(realpath -e "$1") load=$(realpath -e "$2") page_readers=$(realpath -e "$3") runs=${4:-100000}
size=${5:-2000} readers=${6:-20} every=${7:-10} per_client=${8:-250} rounds=${9:-3} bugs=${BUGS:-0}
flood_app=${FLOOD_APP:-flood}
work=$(mktemp -d)
cleanup() {
  [ -n "${readers_pid:-}" ] && kill "$readers_pid" 2>/dev/null
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:$work/reports.db}
printf 'load\tload-key\nload\tview\tread\nflood\tflood-key\n' >keys.tsv

mkdir -p site-dir/load
write_load_sites "$size" 50 0 site-dir/load/load.sites
sites=$load_sites

# start_collector: a collector on the database, its address in $url.
start_collector() {
  rm -f fifo && mkfifo fifo
  "$collector" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv --site-dir site-dir --rate 1e9 \
    --burst 1e9 --max-connections-per-client 128 >fifo 2>>collector.err &
  server_pid=$!
  exec {fd}<fifo
  read -r line <&"$fd" || { echo "the collector did not start: $(cat collector.err)" >&2; exit 1; }
  url=http://${line##* }
}
start_collector

if [ "${INTERIM:-0}" = 1 ]; then
  {
    printf '<report id="samples">\n<samples unit="0123456789abcdef0123456789abcdef" scheme="branches">\n'
    for ((i = 0; i < sites; i++)); do printf '0\t%d\n' "$((i % 3))"; done
    printf '</samples>\n</report>\n<report id="outcome">\nrun-id\tgoing-%s\napp\tload\n</report>\n' "$$"
    printf '<report id="interim">\nsequence\t1\n</report>\n'
  } >going.report
  curl -sSf -o /dev/null -H 'Authorization: APIKey load-key' -H 'Content-Type: text/plain' --data-binary @going.report \
    "$url/api/reports"
  echo "a run still going stored first (one interim report)"
fi
echo "uploading $runs runs of about $size bytes ($sites branch sites)"
# 50 clients: on PostgreSQL each commit waits for its fsync, and concurrent ones share it (4 clients: 110 runs/s).
"$load" "$url" load-key 50 "$((runs / 50))" "$size" --prefix "runs-$$" --bugs "$bugs" >upload.summary
cat upload.summary

# A page's time (wall) and the collector's CPU time while making it (utime + stime: what the machine's other work
# does not change), "WALL/CPU".
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }
page_time() {
  local before wall
  before=$(cpu_ticks)
  wall=$(curl -s -o page.html -w '%{time_total}' -H 'Authorization: APIKey view' "$url$1")
  printf '%.2f/%.2f' "$wall" "$(echo "($(cpu_ticks) - $before) / $hz" | bc -l)"
}
three_times() { echo "$1 (wall/CPU): $(page_time "$1") $(page_time "$1") $(page_time "$1") s"; }
three_times /ui/app/load/predictors/
echo "the predictor page: $(grep -o '[0-9]* elimination rounds explain [0-9]* of the failing runs' page.html)"
counted_by=SQLite
if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
  page=$(cat page.html)
  case $page in *counted-by-store*) counted_by="the database (PostgreSQL)" ;; *) counted_by="the collector" ;; esac
fi
echo "the predictors' first-round counts were summed by: $counted_by"
three_times /ui/app/load/
grep -c '^<tr' page.html >/dev/null || { echo "the application's page has no rows" >&2; exit 1; }
rss() { awk '/VmRSS/ { print $2 / 1024 " MB" }' "/proc/$server_pid/status"; }
echo "collector RSS: $(rss)"

sql() {
  if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then psql -qAt "$database" -c "$1"; else sqlite3 reports.db "$1"; fi
}
if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
  echo "bytes per run (summary, body; runs, run_bodies and run_counts with their indexes and TOAST): $(sql "SELECT
    avg(length(summary))::int, (SELECT avg(length(body))::int FROM run_bodies), pg_total_relation_size('runs') /
    count(*), pg_total_relation_size('run_bodies') / count(*), pg_total_relation_size('run_counts') / count(*)
    FROM runs")"
else
  echo "bytes per run (summary, body, the database file): $(sql "SELECT CAST(avg(length(summary)) AS INT),
    CAST(avg(length(body)) AS INT) FROM runs")|$(($(stat -c %s reports.db) / runs))"
fi

if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
  # As a database migrated from schema version 5: no summaries, no counts.
  sql "UPDATE runs SET summary = NULL, counted = false; DELETE FROM run_counts" >/dev/null
else
  sql "UPDATE runs SET summary = NULL" >/dev/null
fi
# A migration happens when a collector starts: the one above keeps the runs its pages read (docs/decisions.md,
# "The runs kept between pages"), so a collector started afresh makes these pages and the rest of the bench.
kill "$server_pid" && wait "$server_pid" || true
exec {fd}<&-
start_collector
echo "predictors without summaries (summarized and stored), then with (wall/CPU): $(
  page_time /ui/app/load/predictors/) $(page_time /ui/app/load/predictors/) s"

# Uploads alone and beside the readers, alternated. CPU seconds of a process (and of its reaped children).
cpu_seconds() { awk -v hz="$hz" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$1/stat"; }
# The database server's processes: the postmaster (with its reaped children) and its live children.
postmaster=
if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
  postmaster=$(head -1 "${SAMPLER_TEST_POSTGRESQL_URL##*host=}/data/postmaster.pid")
fi
database_cpu() {
  [ -n "$postmaster" ] || { echo 0; return; }
  local stats=("/proc/$postmaster/stat") child
  for child in $(cat /proc/"$postmaster"/task/*/children); do stats+=("/proc/$child/stat"); done
  # A backend that exits meanwhile is missing (its time is the postmaster's once reaped).
  awk -v hz="$hz" -v first="${stats[0]}" '{ t += $14 + $15; if (FILENAME == first) t += $16 + $17 }
    END { print t / hz }' "${stats[@]}" 2>/dev/null || true
}
# flood [PAGE]: 64 upload clients, alone or beside the readers of PAGE; one line of figures.
flood() {
  local page=${1:-} summary readers_line="" collector_before database_before readers_cpu=0 hold
  if [ -n "$page" ]; then
    rm -f readers.in && mkfifo readers.in
    "$page_readers" "$url" view "$readers" "$page" "$every" <readers.in >readers.out &
    readers_pid=$!
    exec {hold}>readers.in
  fi
  collector_before=$(cpu_seconds "$server_pid") database_before=$(database_cpu)
  floods=$((floods + 1))
  summary=$("$load" "$url" "${flood_app}-key" 64 "$per_client" "$size" --app "$flood_app" --prefix "flood-$floods-$$")
  echo "${page:-alone} $(echo "$summary" | sed -n 's/.* rate \([0-9.]*\) .*/\1/p')" >>rates
  local collector_cpu database_cpu_used
  collector_cpu=$(echo "$(cpu_seconds "$server_pid") - $collector_before" | bc -l)
  database_cpu_used=$(echo "$(database_cpu) - $database_before" | bc -l)
  if [ -n "$page" ]; then
    readers_cpu=$(cpu_seconds "$readers_pid")
    exec {hold}>&-
    wait "$readers_pid" || true  # a page that failed is counted in its line
    readers_pid=
    readers_line=" | $(cat readers.out)"
  fi
  printf '  %-26s %s | CPU s: collector %.1f database %.1f readers %.2f%s | collector RSS %s\n' "${page:-alone}" \
    "$summary" "$collector_cpu" "$database_cpu_used" "$readers_cpu" "$readers_line" "$(rss)"
}
floods=0
echo "uploads (64 clients x $per_client reports of $size bytes) alone and beside $readers readers, a page every $every s each:"
for ((round = 1; round <= rounds; round++)); do
  flood
  flood /ui/app/load/predictors/
  flood
  flood /ui/app/load/
done
flood
echo "collector RSS: $(rss)"

# The paired ratios: each flood beside readers over the mean of the floods alone just before and after it; each
# flood alone (the control) over the mean of the floods alone two floods before and after it.
python3 - rates <<'PAIRED'
import statistics, sys
floods = [(kind, float(rate)) for kind, rate in (line.split() for line in open(sys.argv[1]))]
ratios = {}
for i in range(2, len(floods) - 2):
    kind, rate = floods[i]
    before, after = (floods[i - 1], floods[i + 1]) if kind != "alone" else (floods[i - 2], floods[i + 2])
    if before[0] == after[0] == "alone":
        ratios.setdefault(kind, []).append(rate / ((before[1] + after[1]) / 2))
for i in {1, len(floods) - 2} if len(floods) > 2 else ():  # the first and last readers' floods
    kind, rate = floods[i]
    if kind != "alone":
        ratios.setdefault(kind, []).append(rate / ((floods[i - 1][1] + floods[i + 1][1]) / 2))
print("uploads beside the readers over the floods alone around them (paired ratios):")
for kind, values in sorted(ratios.items(), key=lambda item: item[0] != "alone"):
    values.sort()
    quartiles = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    print("  %-26s n %2d median %.3f quartiles %.3f %.3f min %.3f max %.3f, kept 80 %%: %d of %d" % (
        "alone (control)" if kind == "alone" else kind, len(values), statistics.median(values), quartiles[0],
        quartiles[2], values[0], values[-1], sum(v >= 0.8 for v in values), len(values)))
PAIRED
