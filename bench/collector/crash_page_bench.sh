#!/usr/bin/env bash
# The application's page over many crashes (docs/performance.md, "The console: pages computed from the store"):
# RUNS runs of the load client (about SIZE bytes of report each, a third crashing with one of STACKS stacks:
# load_client --crashes) uploaded to the first COLLECTOR's store (SQLite; under tests/store/with_postgresql.sh,
# the PostgreSQL server it started); then each COLLECTOR in turn serves that
# store, and its application's page is timed three times (curl's time_total, wall, and the collector's CPU
# seconds while it made the page). The crash groups' tables and the symbols' section of every collector's page
# must be the same (the first's is the reference), else the script fails; then again with the last COLLECTOR once
# every summary is cleared.
# usage: crash_page_bench.sh LOAD-CLIENT RUNS SIZE STACKS COLLECTOR...
set -euo pipefail
load=$(realpath -e "$1") runs=$2 size=$3 stacks=$4
shift 4
collectors=()
for collector in "$@"; do collectors+=("$(realpath -e "$collector")"); done
work=$(mktemp -d)
cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
printf 'load\tload-key\nload\tview\tread\n' >keys.tsv
hz=$(getconf CLK_TCK)
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:$work/reports.db}

start() {
  rm -f fifo && mkfifo fifo
  "$1" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv --rate 1e9 --burst 1e9 \
    --max-connections-per-client 128 >fifo 2>collector.err &
  server_pid=$!
  exec {fd}<fifo
  read -r line <&"$fd" || { echo "the collector did not start: $(cat collector.err)" >&2; exit 1; }
  url=http://${line##* }
}
stop() {
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}
page_time() {
  local before wall
  before=$(awk '{ print $14 + $15 }' "/proc/$server_pid/stat")
  wall=$(curl -s -o page.html -w '%{time_total}' -H 'Authorization: APIKey view' "$url/ui/app/load/")
  printf '%.2f/%.2f' "$wall" "$(echo "($(awk '{ print $14 + $15 }' "/proc/$server_pid/stat") - $before) / $hz" | bc -l)"
}
# The crash groups' table and the symbols' section (the page from "<h2>Crash groups" to the latest runs).
groups_of() { sed -n '/<h2>Crash groups/,/<h2>Latest/p' page.html; }

start "${collectors[0]}"
echo "uploading $runs runs of about $size bytes, a third crashing with one of $stacks stacks"
"$load" "$url" load-key 50 "$((runs / 50))" "$size" --prefix "runs-$$" --crashes "$stacks"
stop
for collector in "${collectors[@]}"; do
  start "$collector"
  echo "$collector: the application's page (wall/CPU): $(page_time) $(page_time) $(page_time) s"
  stop
  groups_of >groups.html
  grep -q '<tr id="group-1"' groups.html || { echo "$collector: no crash group on the page" >&2; exit 1; }
  if [ -f reference.html ]; then
    cmp -s reference.html groups.html || { echo "$collector: other crash groups than ${collectors[0]}'s" >&2; exit 1; }
  else
    mv groups.html reference.html
    echo "crash groups: $(grep -c '<tr id="group-' reference.html)"
  fi
done
# As a database migrated from schema version 4: no summaries. The last collector's first page summarizes the
# crashes' reports (and stores the summaries), the next reads them; the crash groups stay the same.
if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
  psql -qAt "$database" -c "UPDATE runs SET summary = NULL" >/dev/null
else
  sqlite3 reports.db "UPDATE runs SET summary = NULL"
fi
start "${collectors[-1]}"
echo "${collectors[-1]} without summaries, then with (wall/CPU): $(page_time) $(page_time) s"
stop
groups_of >groups.html
cmp -s reference.html groups.html || { echo "without summaries: other crash groups" >&2; exit 1; }
