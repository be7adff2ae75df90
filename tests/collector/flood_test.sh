# The collector under a flood (its reliability goals): kill -9 in the middle and restart, and 64 clients at
# once. The database is SQLite, or PostgreSQL when with_postgresql.sh runs this script.
# usage: flood_test.sh CASE LOAD-CLIENT
case_name=$1
load=$2
source "$(dirname "$0")/../tools/blackbox.sh"
source "$(dirname "$0")/server.sh"
printf 'load\tgood-key\n' >keys.tsv
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:reports.db}
unlimited=(--rate 1e9 --burst 1e9)

# check_all_stored ACKED EXPECTED: every acknowledged run id is in the database, once; EXPECTED runs in all.
check_all_stored() {
  rm -rf exported
  "$TOOLS/sampler-collector" export --database "$database" --app load exported || fail "export failed"
  (cd exported && ls | sed 's/\.report$//' | sort) >stored.txt
  sort "$1" >acked.sorted
  [ "$(sort -u "$1" | wc -l)" = "$(wc -l <"$1")" ] || fail "a run id was acknowledged twice"
  missing=$(comm -23 acked.sorted stored.txt | wc -l)
  [ "$missing" = 0 ] || fail "$missing acknowledged reports are not in the database: $(comm -23 acked.sorted stored.txt | head -3)"
  [ "$(wc -l <stored.txt)" = "$2" ] || fail "$(wc -l <stored.txt) runs stored, expected $2"
}

case $case_name in
  kill9)
    start_server "$database" "${unlimited[@]}"
    port=${address##*:}
    rm -f progress.fifo && mkfifo progress.fifo
    "$load" "$url" good-key 16 100 20000 --acked acked.txt --progress 400 >progress.fifo &
    load_pid=$!
    exec 8<progress.fifo
    read -r line <&8 || fail "the load client stopped early"
    [ "$line" = "progress 400" ] || fail "load client said: $line"
    kill -KILL "$server_pid"
    wait "$server_pid"
    exec 7<&-
    # Restarted on the same port; the clients retry what was not acknowledged.
    LISTEN=127.0.0.1:$port start_server "$database" "${unlimited[@]}"
    wait "$load_pid" || fail "the load client failed"
    read -r summary <&8
    echo "kill -9 flood: $summary"
    stop_server
    check_all_stored acked.txt 1600
    ;;
  load)
    # 64 clients, 64 x 157 = 10048 reports of 20 KB over loopback: none lost, none duplicated.
    start_server "$database" "${unlimited[@]}"
    "$load" "$url" good-key 64 157 20000 --acked acked.txt >summary.txt || fail "the load client failed"
    echo "64 clients, $database: $(cat summary.txt)"
    curl -s "$url/metrics" | grep -E '^sampler_(reports_stored|store_commits)_total ' ||
      fail "metrics: $(curl -s "$url/metrics")"
    # A retry after a client-side timeout may be a duplicate (stored once, acknowledged twice): only without
    # retries must the server have counted exactly 10048 stored.
    if grep -q ' retries 0$' summary.txt; then
      curl -s "$url/metrics" | grep -qx 'sampler_reports_stored_total 10048' || fail "metrics: $(curl -s "$url/metrics")"
    fi
    stop_server
    check_all_stored acked.txt 10048
    ;;
  *) echo "unknown case $case_name" >&2; exit 2 ;;
esac
finish
