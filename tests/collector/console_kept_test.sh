#!/usr/bin/env bash
# The runs the console keeps between predictor pages (docs/decisions.md, "The console", "The runs kept between
# pages"), black-box: one collector makes every page of the test and so keeps the runs it read; after each change
# (runs uploaded, a run's interim report replaced by a later one and then by its final report, a run gone quiet
# for longer than a run may go on, the site information rewritten) each predictor page it makes, and the
# application's page, must be the same bytes as that of a second collector started afresh on the same database,
# which keeps nothing yet (the runs, the database's counts: docs/decisions.md, "The database's counts kept between
# pages"). Then the bound on what is kept (serve --console-memory): two more applications, each of whose runs fit
# in it alone and not together, so that each one's pages drop the other's runs (the least recently used); the
# pages must still be a fresh collector's, and /metrics must show the drops and the kept bytes within the bound.
# Usage: console_kept_test.sh LOAD-CLIENT, with TOOLS, SCRATCH and SOURCE_DIR in the environment (and
# SAMPLER_TEST_POSTGRESQL_URL for a PostgreSQL store instead of SQLite: several collectors over one database).
case_name=kept
load=$1
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/server.sh"
source "$SOURCE_DIR/bench/collector/load_sites.sh"
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:$SCRATCH/reports.db}
printf 'load\tload-key\nload\tview\tread\nother\tother-key\nother\tview\tread\nmore\tmore-key\nmore\tview\tread\n' \
  >keys.tsv
size=600
write_sites() {  # write_sites SUFFIX: the load client's sites, each condition's text ending in SUFFIX
  mkdir -p site-dir/load
  write_load_sites "$size" 5 "$1" site-dir/load/load.sites.new
  mv site-dir/load/load.sites.new site-dir/load/load.sites
  for app in other more; do mkdir -p "site-dir/$app" && cp site-dir/load/load.sites "site-dir/$app/$app.sites"; done
  sites=$load_sites
}
write_sites 0

# report RUN-ID [OUTCOME-LINES...]: a report of release 2.0 whose branches are all taken (predicates no other run
# has), its outcome's lines as given (none: an interim report), on stdout.
crafted() {
  local run=$1 i
  shift
  printf '<report id="samples">\n<samples unit="0123456789abcdef0123456789abcdef" scheme="branches">\n'
  for ((i = 0; i < sites; i++)); do printf '0\t%d\n' "$((i % 3))"; done
  printf '</samples>\n</report>\n<report id="outcome">\nrun-id\t%s\napp\tload\nversion\t2.0\n' "$run"
  [ $# -eq 0 ] || printf '%s\n' "$@"
  printf '</report>\n'
}
post() {  # post FILE: uploaded with the load key, or the test fails
  http=$(curl -s -o answer -w '%{http_code}' -H 'Authorization: APIKey load-key' -H 'Content-Type: text/plain' \
    --data-binary @"$1" "$url/api/reports")
  [ "$http" = 200 ] || fail "upload of $1: $http $(cat answer)"
}

# No window (serve --console-fresh-ms 0), on both collectors: the site information is rewritten behind the
# collector's back, which a page made in the last seconds would not show, and a page made within a window says
# when it was made; every page here is made for its request.
start_server "$database" --site-dir site-dir --console-memory 1 --console-fresh-ms 0
kept_url=$url
# fresh PATH: the page from a collector started for it on the same database (it keeps nothing yet), in ./fresh.
fresh() {
  rm -f fresh.fifo && mkfifo fresh.fifo
  "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database "$database" --keys keys.tsv \
    --site-dir site-dir --console-fresh-ms 0 >fresh.fifo 2>>fresh.err &
  local pid=$! line=""
  exec 8<fresh.fifo
  read -r line <&8 || { fail "the fresh collector did not start: $(cat fresh.err)"; return; }
  curl -s -o fresh -H 'Authorization: APIKey view' "http://${line##* }$1"
  kill -TERM "$pid" && wait "$pid" || fail "the fresh collector exited $? after SIGTERM"
  exec 8<&-
}
# same STEP [APP]: every predictor page (all releases, each release, each crash group) of APP (load) of the
# collector that keeps equals a fresh collector's, byte for byte.
same() {
  local app=${2:-load} path
  local paths=("/ui/app/$app/predictors/")
  curl -s -o app.html -H 'Authorization: APIKey view' "$kept_url/ui/app/$app/"
  while read -r path; do paths+=("$path"); done < <(grep -o "href=\"/ui/app/$app/[a-z]*/[^\"]*/\"" app.html |
    sed 's/^href="//; s/"$//' | sort -u)
  [ "${#paths[@]}" -ge 3 ] || fail "$1: the application's page links to ${#paths[@]} predictor pages"
  # The application's page too: its counts per release and day are the ones kept since its last making, with
  # those of the runs stored since and of the runs going (docs/decisions.md, "The database's counts kept between
  # pages").
  fresh "/ui/app/$app/"
  cmp -s app.html fresh || fail "$1: /ui/app/$app/ differs from a fresh collector's:$(echo; differences fresh app.html)"
  for path in "${paths[@]}"; do
    curl -s -o kept -H 'Authorization: APIKey view' "$kept_url$path"
    grep -q '<table id="predictors">' kept || fail "$1: $path has no predictors' table: $(head -c 300 kept)"
    fresh "$path"
    cmp -s kept fresh || fail "$1: $path differs from a fresh collector's:$(echo; differences fresh kept)"
  done
}

# 120 runs, a third failing with 3 stacks and 2 bugs: crash groups and elimination rounds.
"$load" "$kept_url" load-key 4 30 "$size" --prefix first --bugs 2 --crashes 3 >load.out || fail "load: $(cat load.out)"
same "the first page"
same "the same runs again"
"$load" "$kept_url" load-key 3 20 "$size" --prefix second --bugs 2 --crashes 4 >load.out || fail "load: $(cat load.out)"
same "runs uploaded since"
# A run still going: its interim reports replace one another, then its final report replaces them; its row keeps
# its place among the runs (the store's id), so the collector must read it again.
{ crafted going; printf '<report id="interim">\nsequence\t1\n</report>\n'; } >going.1
post going.1
same "an interim report"
crafted later-run $'exit-status\t0' >later.report
post later.report
{ crafted going; printf '<report id="interim">\nsequence\t2\n</report>\n'; } >going.2
post going.2
same "the interim report replaced"
crafted going $'signal\t11' >going.final
post going.final
same "the final report"
# A run gone quiet for longer than a run may go on (store.h, kGoingSeconds: 7 days; its report's time set back in
# the database here): it is over, no page asks for it again, and a final report that comes after changes nothing.
sql() {
  if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
    psql -qAt "$database" -c "$1"
  else
    sqlite3 -cmd '.timeout 10000' reports.db "$1"
  fi
}
{ crafted quiet; printf '<report id="interim">\nsequence\t1\n</report>\n'; } >quiet.1
post quiet.1
same "a run going, before it is quiet"
sql "UPDATE runs SET received = received - 8 * 86400 WHERE run_id = 'quiet'" >/dev/null || fail "UPDATE failed"
same "a run quiet for 8 days"
crafted quiet $'exit-status\t0' >quiet.final
post quiet.final
grep -q '"duplicate": true' answer || fail "the final report of a run quiet for 8 days was stored: $(cat answer)"
same "the final report of a run quiet for 8 days"
# Other site information: every kept run is read again.
write_sites 1
same "the site information rewritten"
"$load" "$kept_url" load-key 2 10 "$size" --prefix third --bugs 2 --crashes 3 >load.out || fail "load: $(cat load.out)"
same "runs after the new site information"

# The bound: 1 MiB. The estimate counts the containers' capacities, which double: here 0.13 MiB for the load
# application's 161 runs, 0.48 MiB for 1,000 runs of a second application (room for 1,024), 0.95 MiB for 2,000
# of a third (room for 2,048). The second fits beside the first, the third alone.
metric() { curl -s "$kept_url/metrics" | sed -n "s/^$1 //p"; }
# kept STEP APPS DROPPED: after STEP, APPS applications hold kept runs, DROPPED were dropped in all, within 1 MiB.
kept() {
  local apps bytes dropped
  apps=$(metric sampler_console_kept_apps) bytes=$(metric sampler_console_kept_bytes)
  dropped=$(metric sampler_console_kept_dropped_total)
  [ "$apps" = "$2" ] && [ "$dropped" = "$3" ] && [ "$bytes" -le $((1 << 20)) ] ||
    fail "$1: $apps applications kept in $bytes bytes, $dropped dropped; expected $2 kept within 1 MiB, $3 dropped"
}
kept "before the bound is reached" 1 0
for app_runs in other:125 more:250; do
  app=${app_runs%:*}
  "$load" "$kept_url" "$app-key" 8 "${app_runs#*:}" "$size" --app "$app" --prefix "$app" --bugs 2 --crashes 3 \
    >load.out || fail "load $app: $(cat load.out)"
done
same "another application's pages" other
kept "another application's pages" 2 0
same "a third application's pages, past the bound" more
kept "a third application's pages, past the bound" 1 2  # load's runs, then other's, the least recently used
"$load" "$kept_url" other-key 2 10 "$size" --app other --prefix other-again --bugs 2 --crashes 3 >load.out ||
  fail "load other: $(cat load.out)"
same "the dropped application's pages again" other  # every run read again, those stored since the drop too
kept "the dropped application's pages again" 1 3
same "the pages of the application dropped last" more
kept "the pages of the application dropped last" 1 4
stop_server
finish
