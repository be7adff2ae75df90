#!/usr/bin/env bash
# The console's pages over many stored runs (docs/performance.md, "The console: pages computed from the store"):
# RUNS made-up runs of the load client (about SIZE bytes of report each, one branches section, a third failing by
# exit status) uploaded to a real sampler-collector with the section's site information in --site-dir; then
#   - each page's time (curl's time_total, a `read` key), three times: the predictors (all releases) and the
#     application's page;
#   - the predictors' page again once every run's summary is cleared (as in a database migrated from schema
#     version 4): the first page summarizes the reports and stores the summaries, the next reads them;
#   - uploads alone, and beside READERS clients that each request a page again as soon as the last one came
#     (64 upload clients, 500 reports each): reports/s, and the pages made meanwhile;
#   - the bytes a stored run takes: its summary, its body, and the database's size per run.
# SQLite by default; under tests/store/with_postgresql.sh, the PostgreSQL server it started.
# usage: console_bench.sh SAMPLER-COLLECTOR LOAD-CLIENT [RUNS SIZE READERS FLOOD-REPORTS-PER-CLIENT]
set -euo pipefail
collector=$(realpath -e "$1") load=$(realpath -e "$2") runs=${3:-100000} size=${4:-2000} readers=${5:-20}
per_client=${6:-500}
work=$(mktemp -d)
declare -a pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:$work/reports.db}
printf 'load\tload-key\nload\tview\tread\n' >keys.tsv

# The load client's samples section: as many branch sites as it writes lines (load_client.cpp, make_samples).
sites=$(python3 -c '
size = int("'"$size"'")
text = "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n"
n = 0
while len(text) + 200 < size:
    text += "%d\t%d\n" % (n % 97, n % 13)
    n += 1
print(n)')
mkdir -p site-dir/load
{
  echo '<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">'
  for ((i = 0; i < sites; i++)); do printf 'load.c\t%d\tf%d\t%d\tx%d > 0\n' "$((i + 1))" "$((i % 50))" "$i" "$i"; done
  echo '</sites>'
} >site-dir/load/load.sites

rm -f fifo && mkfifo fifo
"$collector" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv --site-dir site-dir --rate 1e9 \
  --burst 1e9 --max-connections-per-client 128 >fifo 2>collector.err &
server_pid=$!
exec {fd}<fifo
read -r line <&"$fd" || { echo "the collector did not start: $(cat collector.err)" >&2; exit 1; }
url=http://${line##* }

echo "uploading $runs runs of about $size bytes ($sites branch sites)"
"$load" "$url" load-key 4 "$((runs / 4))" "$size" --prefix "runs-$$" >upload.summary
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
echo "predictors without summaries (summarized and stored), then with (wall/CPU): $(
  page_time /ui/app/load/predictors/) $(page_time /ui/app/load/predictors/) s"

# Uploads alone, then beside the readers.
flood() { "$load" "$url" load-key 64 "$per_client" "$size" --prefix "flood-$1-$$" | sed 's/^/  /'; }
echo "uploads alone:"
flood alone
for page in /ui/app/load/predictors/ /ui/app/load/; do
  rm -f stop pages.*
  for ((r = 0; r < readers; r++)); do
    (
      while [ ! -e stop ]; do
        curl -s -o /dev/null -H 'Authorization: APIKey view' "$url$page"
        echo >>"pages.$r"
      done
    ) &
    pids+=($!)
  done
  start=$(date +%s.%N)
  echo "uploads beside $readers readers of $page:"
  flood "$RANDOM"
  end=$(date +%s.%N)
  made=$( (cat pages.* 2>/dev/null || true) | wc -l)
  touch stop
  wait "${pids[@]}"
  pids=()
  echo "  pages made meanwhile: $made in $(python3 -c "print(round($end - $start, 1))") s"
done
echo "collector RSS: $(rss)"
