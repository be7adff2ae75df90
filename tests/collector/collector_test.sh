# Black-box tests of sampler-collector: a real server on 127.0.0.1 (ephemeral port), curl as the client.
# usage: collector_test.sh CASE VERSION
case_name=$1
version=$2
source "$(dirname "$0")/../tools/blackbox.sh"
source "$(dirname "$0")/server.sh"
printf 'wordfreq\tgood-key\nother\tsha256:%s\nwordfreq\tsecond-key\n' "$(printf other-key | sha256sum | cut -c1-64)" \
  >keys.tsv

run() {
  ran="$*"
  "$@" >out 2>err
  status=$?
}

# expect_answer STATUS CODE: the last upload's HTTP status and JSON error code (the symbfile upload API's shape).
expect_answer() {
  [ "$http" = "$1" ] || fail "HTTP status $http, expected $1: $(cat answer)"
  if [ "$1" = 200 ]; then
    grep -q '^{"success": true, "status": 200, "id": ' answer || fail "answer: $(cat answer)"
  else
    grep -q "^{\"success\": false, \"status\": $1, \"uuid\": \"[0-9a-f-]\{36\}\", \"error\": {\"Code\": \"$2\"" answer ||
      fail "answer: $(cat answer)"
    local uuid
    uuid=$(sed 's/.*"uuid": "\([0-9a-f-]*\)".*/\1/' answer)
    grep -q "$uuid $1 $2" server.err || fail "the log has no line for $uuid: $(cat server.err)"
  fi
}

# The database: SQLite unless with_postgresql.sh gave a server.
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:reports.db}

case $case_name in
  upload_and_export)
    start_server "$database"
    report run-1 >r1 && report run-2 1 >r2
    upload good-key r1 && expect_answer 200
    grep -q '"duplicate": false' answer || fail "first upload: $(cat answer)"
    upload good-key r1 && expect_answer 200
    grep -q '"duplicate": true' answer || fail "second upload: $(cat answer)"
    gzip -c r2 >r2.gz
    upload good-key r2.gz -H 'Content-Encoding: gzip' && expect_answer 200
    stop_server
    run "$TOOLS/sampler-collector" export --database "$database" --app wordfreq exported
    expect 0 '' ''
    [ "$(ls exported)" = "$(printf 'run-1.report\nrun-2.report')" ] || fail "exported: $(ls exported)"
    cmp -s r1 exported/run-1.report || fail "run-1 differs"
    cmp -s r2 exported/run-2.report || fail "run-2 differs"
    # Exported again over links planted in the output directory: the links are replaced, their targets untouched.
    printf 'precious\n' >precious
    rm exported/run-1.report && ln -s ../precious exported/run-1.report
    run "$TOOLS/sampler-collector" export --database "$database" --app wordfreq exported
    expect 0 '' ''
    [ "$(cat precious)" = precious ] || fail "export wrote through a planted link: $(head -c 80 precious)"
    [ ! -L exported/run-1.report ] && cmp -s r1 exported/run-1.report || fail "run-1 not exported over the link"
    # Restarted on the same database: the runs are still there, the duplicate still recognised.
    start_server "$database"
    upload good-key r2 && expect_answer 200
    grep -q '"duplicate": true' answer || fail "after restart: $(cat answer)"
    stop_server
    ;;
  export_progress)
    # On a terminal, export shows the runs written so far, redrawn in place; on a file, nothing.
    start_server sqlite:reports.db
    for i in 1 2 3; do
      report run-$i >r$i && upload good-key r$i && expect_answer 200
    done
    stop_server
    python3 "$SOURCE_DIR/tests/tools/on_terminal.py" terminal \
      "$TOOLS/sampler-collector" export --database sqlite:reports.db --app wordfreq exported >out
    status=$?
    [ "$status" = 0 ] && [ ! -s out ] || fail "export on a terminal: status $status, stdout $(cat out)"
    expect_progress terminal 'sampler-collector: exporting runs' 3
    [ "$(ls exported | wc -l)" = 3 ] || fail "exported: $(ls exported)"
    run "$TOOLS/sampler-collector" export --database sqlite:reports.db --app wordfreq exported
    expect 0 '' ''
    ;;
  api_keys)
    start_server sqlite:reports.db
    report run-1 >r1
    upload wrong-key r1 && expect_answer 401 unauthorized
    # Without a known key, the body is not read at all: a large one gets the same 401 (not 413).
    head -c 3000000 /dev/zero | tr '\0' 'a' >large
    upload wrong-key large && expect_answer 401 unauthorized
    http=$(curl -s -o answer -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary @r1 "$url/api/reports")
    expect_answer 401 unauthorized
    upload sha256:"$(printf other-key | sha256sum | cut -c1-64)" r1 && expect_answer 401 unauthorized
    sed 's/wordfreq/other/' r1 >r1-other
    upload other-key r1-other && expect_answer 200
    upload other-key r1 && expect_answer 403 wrong-app
    stop_server
    ;;
  bad_reports)
    start_server sqlite:reports.db
    printf '<report id="outcome">\nrun-id\tx\n</report>\nstray text\n' >stray
    upload good-key stray && expect_answer 400 bad-report
    grep -q '"Text": "line 4: text outside a subreport' answer || fail "answer: $(cat answer)"
    printf '<report id="samples">\n</report>\n' >no-outcome
    upload good-key no-outcome && expect_answer 400 bad-report
    head -c 20000 /dev/urandom >binary
    upload good-key binary && expect_answer 400 bad-report
    { report huge; printf '<report id="x">\n'; head -c 3000000 /dev/zero | tr '\0' 'a'; printf '\n</report>\n'; } >huge-line
    upload good-key huge-line && expect_answer 200
    printf 'not gzip' >fake.gz
    upload good-key fake.gz -H 'Content-Encoding: gzip' && expect_answer 400 bad-encoding
    report run-1 >r1
    http=$(curl -s -o answer -w '%{http_code}' -H 'Authorization: APIKey good-key' -H 'Content-Type: image/png' \
      --data-binary @r1 "$url/api/reports")
    expect_answer 415 unsupported-media-type
    # Control characters from a client are escaped in the answer and the log.
    printf '<report id="outcome">\nrun-id\t\033[31mred\n</report>\n' >escape
    upload good-key escape && expect_answer 400 bad-report
    if grep -q "$(printf '\033')" answer server.err; then fail "an escape character reached the answer or the log"; fi
    stop_server
    ;;
  limits)
    start_server sqlite:reports.db --max-body 100000 --max-report 1000000
    head -c 200000 /dev/zero | tr '\0' 'a' >big
    upload good-key big && expect_answer 413 body-too-large
    upload good-key big -H 'Transfer-Encoding: chunked' && expect_answer 413 body-too-large
    { report bomb; head -c 20000000 /dev/zero | tr '\0' '\n'; } | gzip -9 >bomb.gz
    [ "$(stat -c %s bomb.gz)" -lt 100000 ] || fail "the bomb is $(stat -c %s bomb.gz) bytes"
    upload good-key bomb.gz -H 'Content-Encoding: gzip' && expect_answer 413 report-too-large
    report run-1 >r1
    upload good-key r1 && expect_answer 200
    stop_server
    ;;
  report_shape_limits)
    # What a report holds is bounded by what a real one needs, with the defaults: lines, samples sections and
    # subreports each have a limit (413 past it), however well the report compresses.
    start_server sqlite:reports.db
    unit=0123456789abcdef0123456789abcdef
    { report lines; head -c 16777216 /dev/zero | tr '\0' '\n'; } | gzip >lines.gz
    upload good-key lines.gz -H 'Content-Encoding: gzip' && expect_answer 413 report-too-large
    grep -q '"Text": "the report has 16777223 lines, more than 16777216 (--max-lines)"' answer || fail "$(cat answer)"
    {
      printf '<report id="samples">\n'
      yes "<samples unit=\"$unit\" scheme=\"branches\">
</samples>" | head -n $((2 * 131073))
      printf '</report>\n'
      report sections
    } | gzip >sections.gz
    upload good-key sections.gz -H 'Content-Encoding: gzip' && expect_answer 413 report-too-large
    grep -q '131073 samples and timestamps sections, more than 131072 (--max-sections)' answer || fail "$(cat answer)"
    { yes '<report id="x"/>' | head -n 256; report subreports; } >subreports
    upload good-key subreports && expect_answer 413 report-too-large
    grep -q '258 subreports, more than 256 (--max-subreports)' answer || fail "$(cat answer)"
    # Just within each: stored.
    { report lines; head -c 16000000 /dev/zero | tr '\0' '\n'; } | gzip >lines.gz
    upload good-key lines.gz -H 'Content-Encoding: gzip' && expect_answer 200
    { yes '<report id="x"/>' | head -n 254; report subreports; } >subreports
    upload good-key subreports && expect_answer 200
    stop_server
    ;;
  rate_limit)
    start_server sqlite:reports.db --rate 0.001 --burst 2
    for i in 1 2; do report run-$i >r && upload good-key r && expect_answer 200; done
    report run-3 >r && upload good-key r && expect_answer 429 rate-limited
    sed 's/wordfreq/other/' r >r-other && upload other-key r-other && expect_answer 200
    # Per key, not per application: another key of the same application still has its own burst.
    upload second-key r && expect_answer 200
    stop_server
    ;;
  paths_health_metrics)
    start_server sqlite:reports.db
    http=$(curl -s -o answer -w '%{http_code}' "$url/nowhere") && expect_answer 404 not-found
    http=$(curl -s -o answer -w '%{http_code}' "$url/api/reports") && expect_answer 405 method-not-allowed
    http=$(curl -s -o answer -w '%{http_code}' "$url/health")
    [ "$http" = 200 ] && [ "$(cat answer)" = '{"success": true, "status": 200}' ] || fail "health: $http $(cat answer)"
    report run-1 >r1 && upload good-key r1 && expect_answer 200
    curl -s "$url/metrics" >metrics
    grep -qx 'sampler_reports_stored_total 1' metrics || fail "metrics: $(cat metrics)"
    grep -qx 'sampler_store_runs 1' metrics || fail "metrics: $(cat metrics)"
    grep -qx 'sampler_responses_total{class="4xx"} 2' metrics || fail "metrics: $(cat metrics)"
    stop_server
    ;;
  run_ids_per_app)
    # Run ids belong to their application: another application's key reusing one stores its own run, learns
    # nothing of the first, and the first stays as it was.
    start_server "$database"
    report shared-run 3 >mine && upload good-key mine && expect_answer 200
    report shared-run 5 | sed 's/wordfreq/other/' >theirs
    upload other-key theirs && expect_answer 200
    grep -q '"duplicate": false' answer || fail "another application's run id: $(cat answer)"
    upload other-key theirs && expect_answer 200
    grep -q '"duplicate": true' answer || fail "the same run again: $(cat answer)"
    stop_server
    for app in wordfreq other; do
      run "$TOOLS/sampler-collector" export --database "$database" --app "$app" "exported-$app"
      expect 0 '' ''
    done
    cmp -s mine exported-wordfreq/shared-run.report || fail "wordfreq's run: $(cat exported-wordfreq/*)"
    cmp -s theirs exported-other/shared-run.report || fail "other's run: $(ls exported-other)"
    ;;
  health_does_not_scan)
    # /health is a connection check: it never reads the runs (a table of millions takes a scan per call).
    # The runs table renamed away under the running server proves it: a query of it would fail.
    start_server sqlite:reports.db
    report run-1 >r1 && upload good-key r1 && expect_answer 200
    python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("ALTER TABLE runs RENAME TO runs_elsewhere"); db.commit()' reports.db ||
      fail "cannot rename the runs table"
    http=$(curl -s -o answer -w '%{http_code}' "$url/health")
    [ "$http" = 200 ] && [ "$(cat answer)" = '{"success": true, "status": 200}' ] || fail "health: $http $(cat answer)"
    # Yet it checks the database: one that cannot be read answers 503.
    python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("DROP TABLE schema_version"); db.commit()' reports.db ||
      fail "cannot drop the schema_version table"
    http=$(curl -s -o answer -w '%{http_code}' "$url/health")
    expect_answer 503 storage-unavailable
    stop_server
    ;;
  slow_and_truncated_clients)
    start_server sqlite:reports.db --timeout 1
    port=${address##*:}
    # A client that sends part of its body and stalls is disconnected after the timeout (cat returns at EOF).
    exec 5<>/dev/tcp/127.0.0.1/"$port"
    printf 'POST /api/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nAuthorization: APIKey good-key\r\n\r\nabc' >&5
    cat <&5 >slow.out
    exec 5<&-
    # A client that closes in the middle of its body: nothing stored, the server goes on.
    exec 5<>/dev/tcp/127.0.0.1/"$port"
    printf 'POST /api/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nAuthorization: APIKey good-key\r\n\r\nabc' >&5
    exec 5<&-
    report run-1 >r1 && upload good-key r1 && expect_answer 200
    curl -s "$url/metrics" | grep -qx 'sampler_reports_stored_total 1' || fail "metrics after truncated bodies"
    stop_server
    ;;
  slowloris)
    # 150 connections from one address, each trickling a header line a second (never idle, never done), against
    # --max-connections 100: one address gets its share and no more, a normal upload from another still gets its
    # answer at once, and every slow request is dropped once it has taken longer than --request-timeout.
    start_server sqlite:reports.db --max-connections 100 --timeout 10 --max-connections-per-client 20 \
      --request-timeout 3
    port=${address##*:}
    exec 6< <(exec python3 -c '
import select, socket, sys, time
port = int(sys.argv[1])
held = []
for _ in range(150):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))  # another loopback address: another client
    s.connect(("127.0.0.1", port))
    s.sendall(b"POST /api/reports HTTP/1.1\r\nHost: x\r\n")
    held.append(s)
print("open %d" % len(held), flush=True)
for second in range(60):
    time.sleep(1)
    for s in list(held):
        try:
            readable, _, _ = select.select([s], [], [], 0)
            if readable and not s.recv(4096):
                raise OSError("closed")
            s.sendall(b"X-Slow: 1\r\n")
        except OSError:
            held.remove(s)
    if not held:
        print("all closed", flush=True)
        sys.exit(0)
print("still open %d" % len(held), flush=True)
' "$port")
    read -r line <&6
    [ "$line" = "open 150" ] || fail "the slow client: $line"
    report run-1 >r1
    upload good-key r1 --max-time 5 && expect_answer 200
    read -r line <&6
    [ "$line" = "all closed" ] || fail "slow requests were not dropped: $line"
    grep -q 'request took over 3 s to arrive' server.err || fail "no log line for the dropped requests"
    stop_server
    ;;
  health_reserve)
    # Slow clients from four addresses (ten each, the per-client limit) hold all 20 connections; a few reserve
    # connections past them still answer GET /health, refuse anything else with 503 "busy", and a slow client that
    # lands in the reserve is dropped within its short deadline, so the reserve is free again.
    start_server sqlite:reports.db --max-connections 20 --max-connections-per-client 10 --timeout 60 \
      --request-timeout 60
    port=${address##*:}
    exec 6< <(exec python3 -c '
import os, select, socket, sys, time
port = int(sys.argv[1])
held = []
for client in range(2, 6):
    for _ in range(10):
        s = socket.socket()
        s.bind(("127.0.0.%d" % client, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /api/reports HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
reported, last_trickle = None, time.monotonic()
while not os.path.exists("stop"):
    for s in select.select(held, [], [], 0.1)[0]:
        try:
            if not s.recv(4096):
                held.remove(s)
        except OSError:
            held.remove(s)
    if time.monotonic() - last_trickle >= 1:
        last_trickle = time.monotonic()
        for s in held:
            s.sendall(b"X-Slow: 1\r\n")
    if len(held) != reported:
        reported = len(held)
        print("held %d" % reported, flush=True)
print("stopped", flush=True)
' "$port")
    line=""
    while [ "$line" != "held 20" ]; do
      read -r line <&6 || fail "the slow client ended early"
    done
    health=$(curl -s -o health.json -w '%{http_code}' --max-time 5 "$url/health") || true
    [ "$health" = 200 ] || fail "/health answered '$health' while slow clients held every connection"
    report run-1 >r1
    upload good-key r1 --max-time 5 || true
    expect_answer 503 busy
    touch stop
    while [ "$line" != stopped ]; do read -r line <&6 || fail "the slow client did not stop"; done
    stop_server
    ;;
  unprivileged)
    # The collector needs no privilege: as nobody, with a database in a directory nobody owns.
    if [ "$(id -u)" = 0 ]; then
      mkdir data && chown nobody data && chmod 755 "$SCRATCH"
      as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    else
      mkdir data
      as_nobody=()
    fi
    rm -f server.fifo && mkfifo server.fifo
    "${as_nobody[@]}" "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:data/r.db \
      --keys keys.tsv >server.fifo 2>>server.err &
    server_pid=$!
    exec 7<server.fifo
    read -r line <&7 || { cat server.err; exit 1; }
    url=http://${line##* }
    report run-1 >r1 && upload good-key r1 && expect_answer 200
    stop_server
    [ "$(id -u)" != 0 ] || [ "$(stat -c %U data/r.db)" = nobody ] || fail "the database belongs to $(stat -c %U data/r.db)"
    ;;
  bad_setup)
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:r.db --keys missing.tsv
    expect 1 '' "sampler-collector: 'missing.tsv': error: cannot read the API keys\n"
    printf 'app key\n' >bad.tsv
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:r.db --keys bad.tsv
    expect 1 '' "sampler-collector: 'bad.tsv':1: error: expected APP<TAB>KEY\n"
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database mysql://x --keys keys.tsv
    expect 1 '' "sampler-collector: error: unknown database URL 'mysql://x' (expected sqlite:PATH or postgresql://...)\n"
    run "$TOOLS/sampler-collector" serve --listen nonsense --database sqlite:r.db --keys keys.tsv
    expect 1 '' "sampler-collector: error: --listen wants HOST:PORT, not 'nonsense'\n"
    ;;
  help_version_usage)
    run "$TOOLS/sampler-collector" --version
    expect 0 "sampler-collector (sampler) $version\n" ''
    run "$TOOLS/sampler-collector" serve --help
    [ "$status" = 0 ] && grep -q -- '--max-report=BYTES' out || fail "serve --help: $(cat out)"
    run "$TOOLS/sampler-collector" export --help
    [ "$status" = 0 ] && grep -q -- '--app=NAME' out || fail "export --help: $(cat out)"
    run "$TOOLS/sampler-collector"
    expect 2 '' "sampler-collector: missing command (serve or export)\nTry 'sampler-collector --help' for more information.\n"
    run "$TOOLS/sampler-collector" serve --database sqlite:x --keys k
    expect 2 '' "sampler-collector serve: --listen is required\nTry 'sampler-collector serve --help' for more information.\n"
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:x --keys k --rate -1
    [ "$status" = 2 ] || fail "--rate -1: status $status"
    run "$TOOLS/sampler-collector" export --database sqlite:x --app a
    expect 2 '' "sampler-collector export: expected one OUTDIR operand\nTry 'sampler-collector export --help' for more information.\n"
    ;;
  plans)
    # Sampling plans: only a key with 'plans' uploads one, checked all or nothing; any key of the application reads
    # it back; each stored report's answer names its release's current plan; another application reaches none.
    printf 'wordfreq\tplan-key\tplans\nother\tother-plan-key\tplans\n' >>keys.tsv
    start_server "$database"
    upload_plan() {  # upload_plan KEY FILE [QUERY]
      http=$(curl -s -o answer -w '%{http_code}' -H "Authorization: APIKey $1" --data-binary @"$2" "$url/api/plans$3")
    }
    get_plan() {  # get_plan KEY ID: the plan in ./fetched
      http=$(curl -s -o fetched -w '%{http_code}' -H "Authorization: APIKey $1" "$url/api/plans/$2")
    }
    expect_plan_answer() {  # expect_plan_answer ID VERSION ENTRIES
      [ "$http" = 200 ] && [ "$(cat answer)" = "{\"success\": true, \"status\": 200, \"plan\": \"$1\", \"version\": \"$2\", \"entries\": $3}" ] ||
        fail "plan upload: $http $(cat answer)"
    }
    unit=0123456789abcdef0123456789abcdef
    printf 'sampler-plan\t1\nid\tplan-a\n# hot loop rarely, error path always\n%s\tbranches\t0\t1e-3\n%s\tbranches\t1\t1\n' \
      "$unit" "$unit" >plan-a
    upload_plan good-key plan-a '?version=1.0' && expect_answer 403 not-allowed
    upload_plan plan-key plan-a && expect_answer 400 missing-version
    upload_plan plan-key plan-a '?version=1.0' && expect_plan_answer plan-a 1.0 2
    # A bad plan is refused whole, with its line; a changed plan under a stored id too.
    { cat plan-a; printf '%s\tbranches\t1\t0.5\n' "$unit"; } >repeated
    upload_plan plan-key repeated '?version=1.0' && expect_answer 400 bad-plan
    grep -q '"Text": "line 6: the same unit, scheme and site as line 5"' answer || fail "repeated site: $(cat answer)"
    printf 'sampler-plan\t1\nid\tplan-b\n%s\tbranches\t0\t1.5\n' "$unit" >out-of-range
    upload_plan plan-key out-of-range '?version=1.0' && expect_answer 400 bad-plan
    grep -q '"Text": "line 3: ' answer || fail "probability 1.5: $(cat answer)"
    printf 'id\tplan-b\n' >headless
    upload_plan plan-key headless '?version=1.0' && expect_answer 400 bad-plan
    sed 's/1e-3/2e-3/' plan-a >changed
    upload_plan plan-key changed '?version=1.0' && expect_answer 409 plan-conflict
    # Read back by the users' key, byte for byte; an id never stored, or not an id, is unknown.
    get_plan good-key plan-a
    [ "$http" = 200 ] && cmp -s plan-a fetched || fail "GET plan-a: $http $(cat fetched)"
    get_plan good-key plan-b && cp fetched answer && expect_answer 404 no-such-plan
    get_plan good-key '..%2Fkeys' && cp fetched answer && expect_answer 404 no-such-plan
    http=$(curl -s -o answer -w '%{http_code}' "$url/api/plans/plan-a") && expect_answer 401 unauthorized
    http=$(curl -s -o answer -w '%{http_code}' -X POST -H 'Authorization: APIKey plan-key' "$url/api/plans/plan-a") &&
      expect_answer 405 method-not-allowed
    # A report of release 1.0 is answered with its plan; one of another release, or none, with null.
    report run-1 | sed 's/^app\twordfreq$/&\nversion\t1.0/' >r1 && upload good-key r1 && expect_answer 200
    grep -q '"duplicate": false, "plan": "plan-a"}$' answer || fail "report of 1.0: $(cat answer)"
    report run-2 >r2 && upload good-key r2 && expect_answer 200
    grep -q '"duplicate": false, "plan": null}$' answer || fail "report without a version: $(cat answer)"
    # Another application: no plan of wordfreq's reachable; its own plan under the same id is its own.
    get_plan other-key plan-a && cp fetched answer && expect_answer 404 no-such-plan
    get_plan other-plan-key plan-a && cp fetched answer && expect_answer 404 no-such-plan
    report run-3 | sed 's/^app\twordfreq$/app\tother\nversion\t1.0/' >r3 && upload other-key r3 && expect_answer 200
    grep -q '"plan": null}$' answer || fail "other's report names a plan: $(cat answer)"
    printf 'sampler-plan\t1\nid\tplan-a\n' >theirs
    upload_plan other-plan-key theirs '?version=1.0' && expect_plan_answer plan-a 1.0 0
    get_plan good-key plan-a
    cmp -s plan-a fetched || fail "wordfreq's plan-a after other's upload: $(cat fetched)"
    get_plan other-key plan-a
    cmp -s theirs fetched || fail "other's plan-a: $(cat fetched)"
    # The empty release (runs without --version) has a plan of its own; a restart keeps them all.
    printf 'sampler-plan\t1\nid\tplan-c\n%s\tbranches\t0\t0\n' "$unit" >plan-c
    upload_plan plan-key plan-c '?version=' && expect_plan_answer plan-c '' 1
    stop_server
    start_server "$database"
    report run-4 >r4 && upload good-key r4 && expect_answer 200
    grep -q '"plan": "plan-c"}$' answer || fail "after restart, a report without a version: $(cat answer)"
    report run-5 | sed 's/^app\twordfreq$/&\nversion\t1.0/' >r5 && upload good-key r5 && expect_answer 200
    grep -q '"plan": "plan-a"}$' answer || fail "after restart, a report of 1.0: $(cat answer)"
    stop_server
    ;;
  *) echo "unknown case $case_name" >&2; exit 2 ;;
esac
finish
