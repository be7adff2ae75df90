#!/usr/bin/env bash
# What each making of a console page costs the PostgreSQL server while its application's runs come
# (docs/performance.md, "The database's counts kept between pages"): 10^5 runs of the load client stored (about 2 KB
# each, five bugs), then ROUNDS rounds of (1,000 more runs of the application, its predictor page, its application
# page), the database server's CPU (utime + stime of its processes, in clock ticks) measured around each page
# alone; BEFORE first (a collector of schema 9), then AFTER on the same database (which it migrates). Pages are
# made for each request: every round stores runs of the application, which ends serve --console-fresh-ms's window.
# Run under tests/store/with_postgresql.sh.
# usage: console_page_cost.sh BEFORE-COLLECTOR AFTER-COLLECTOR LOAD-CLIENT [ROUNDS]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/load_sites.sh"
before=$(realpath -e "$1") after=$(realpath -e "$2") load=$(realpath -e "$3") rounds=${4:-10}
work=$(mktemp -d)
trap 'kill "${server_pid:-}" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
database=$SAMPLER_TEST_POSTGRESQL_URL
printf 'load\tload-key\nload\tview\tread\n' >keys.tsv
size=2000
mkdir -p site-dir/load
write_load_sites "$size" 50 0 site-dir/load/load.sites
start() {
  rm -f fifo && mkfifo fifo
  "$1" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv --site-dir site-dir --rate 1e9 \
    --burst 1e9 --max-connections-per-client 128 >fifo 2>>collector.err &
  server_pid=$!
  exec {fd}<fifo
  read -r line <&"$fd"
  url=http://${line##* }
}
hz=$(getconf CLK_TCK)
postmaster=$(head -1 "${SAMPLER_TEST_POSTGRESQL_URL##*host=}/data/postmaster.pid")
database_cpu() {
  local stats=("/proc/$postmaster/stat") child
  for child in $(cat /proc/"$postmaster"/task/*/children); do stats+=("/proc/$child/stat"); done
  awk -v hz="$hz" -v first="${stats[0]}" '{ t += $14 + $15; if (FILENAME == first) t += $16 + $17 }
    END { printf "%.3f\n", t / hz }' "${stats[@]}" 2>/dev/null || true
}
page_cost() {  # the database's CPU seconds for one page
  local b
  b=$(database_cpu)
  curl -sf -o page.html -H 'Authorization: APIKey view' "$url$1"
  echo "$(database_cpu) - $b" | bc -l
}
start "$before"
"$load" "$url" load-key 50 2000 "$size" --prefix base --bugs 5 >/dev/null
kill "$server_pid"; wait "$server_pid" || true
for name in before after; do
  collector=$before; [ "$name" = after ] && collector=$after
  start "$collector"
  echo "$name: first pages (predictors, application): $(page_cost /ui/app/load/predictors/) $(page_cost /ui/app/load/)"
  p=() a=()
  for ((r = 1; r <= rounds; r++)); do
    "$load" "$url" load-key 10 100 "$size" --prefix "$name-$r" --bugs 5 >/dev/null
    p+=("$(page_cost /ui/app/load/predictors/)") a+=("$(page_cost /ui/app/load/)")
  done
  echo "$name: predictors ${p[*]}"
  echo "$name: application ${a[*]}"
  kill "$server_pid"; wait "$server_pid" || true
  exec {fd}<&-
done
