# Black-box tests of sampler-run: exit statuses and signals are the program's, reports reach a real collector on
# 127.0.0.1, and wait in the spool while it is unreachable. usage: run_test.sh CASE VERSION WORDFREQ
case_name=$1
version=$2
wordfreq=$3
source "$(dirname "$0")/../tools/blackbox.sh"
source "$(dirname "$0")/server.sh"
printf 'wordfreq\tgood-key\n' >keys.tsv
# Everything sampler-run keeps goes under the scratch directory.
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED
R=$TOOLS/sampler-run

run() {
  ran="$*"
  "$@" >out 2>err
  status=$?
}

# died_of COMMAND...: prints how COMMAND ended, "exit N" or "signal N" (perl's system() sees the raw status).
died_of() {
  perl -e 'system { $ARGV[0] } @ARGV; my $s = $?; print(($s & 127) ? "signal " . ($s & 127) : "exit " . ($s >> 8))' \
    -- "$@" 2>/dev/null
}

exported_count() {
  rm -rf exported
  "$TOOLS/sampler-collector" export --database sqlite:reports.db --app wordfreq exported || fail "export failed"
  find exported -name '*.report' | wc -l
}

case $case_name in
  exit_status_and_streams)
    run "$R" --app wordfreq -- sh -c 'echo to-stdout; echo to-stderr >&2; exit 3'
    expect 3 'to-stdout\n' 'to-stderr\n'
    run "$R" --app wordfreq -- sh -c 'read line; echo "got $line"' <<<"input"
    expect 0 'got input\n' ''
    # The report descriptor is never one of the program's standard ones, even when those are closed.
    fd=$("$R" --app wordfreq -- sh -c 'echo "$SAMPLER_REPORT_FD"' <&- 2>&-)
    [ "$fd" -ge 3 ] 2>/dev/null || fail "SAMPLER_REPORT_FD is '$fd'"
    ;;
  fatal_signal)
    [ "$(died_of "$R" --app wordfreq -- sh -c 'kill -SEGV $$')" = "signal 11" ] || fail "SIGSEGV: $(died_of "$R" --app wordfreq -- sh -c 'kill -SEGV $$')"
    [ "$(died_of "$R" --app wordfreq -- sh -c 'kill -ABRT $$')" = "signal 6" ] || fail "SIGABRT"
    [ "$(died_of "$R" --app wordfreq -- sh -c 'exit 139')" = "exit 139" ] || fail "exit 139 is not a signal"
    printf 'a%.0s' {1..40} >long.txt
    [ "$(died_of "$R" --app wordfreq -- "$wordfreq" long.txt)" = "signal 11" ] || fail "the demo's crash"
    "$R" --show-last >last.txt 2>/dev/null || fail "--show-last failed"
    grep -q '^signal	11$' last.txt || fail "outcome: $(cat last.txt)"
    grep -q '^<report id="main-backtrace">$' last.txt || fail "no main-backtrace"
    ;;
  signals_forwarded)
    rm -f ready && mkfifo ready
    "$R" --app wordfreq -- sh -c 'trap "kill \$s; exit 42" USR1; sleep 300 & s=$!; echo up >ready; wait $s' &
    launcher=$!
    read -r _ <ready
    kill -USR1 "$launcher"
    wait "$launcher"
    status=$?
    [ "$status" = 42 ] || fail "after SIGUSR1: exit status $status, expected 42 (the program's trap)"
    "$R" --show-last >last.txt 2>/dev/null || fail "--show-last failed"
    grep -q '^exit-status	42$' last.txt || fail "outcome: $(cat last.txt)"
    ;;
  report_arrives)
    start_server sqlite:reports.db
    "$wordfreq" --generate 1 >text.txt
    run "$R" --app wordfreq --version 1.0 --upload "$url" --api-key good-key -- "$wordfreq" text.txt
    [ "$status" = 0 ] || fail "exit status $status"
    "$wordfreq" text.txt >direct.out
    cmp -s out direct.out || fail "the program's output differs under sampler-run"
    [ -s err ] && fail "sampler-run wrote on stderr: $(cat err)"
    printf 'a%.0s' {1..40} >long.txt
    "$R" --app wordfreq --upload "$url" --api-key good-key -- "$wordfreq" long.txt 2>/dev/null
    stop_server
    [ "$(exported_count)" = 2 ] || fail "exported $(ls exported)"
    grep -l '^exit-status	0$' exported/* | xargs grep -q '^<samples unit=' || fail "no samples in the clean run"
    grep -q '^version	1.0$' $(grep -l '^exit-status	0$' exported/*) || fail "no version"
    grep -l '^signal	11$' exported/* | xargs grep -q '^cbf:' || fail "no crash stack in the crashing run"
    grep -q "^build-id	[0-9a-f]\{16,\}	.*sampler-example-wordfreq$" exported/* || fail "no build ID"
    ;;
  spool_then_send)
    # Nothing listens on port 1: the report waits in the spool; the program's exit status is untouched.
    run "$R" --app wordfreq --upload http://127.0.0.1:1 --api-key good-key -- sh -c 'exit 5'
    expect 5 '' ''
    [ "$(ls cache/sampler/spool | wc -l)" = 1 ] || fail "spool: $(ls cache/sampler/spool)"
    run "$R" --app wordfreq --upload http://127.0.0.1:1 --api-key good-key -- true
    [ "$(ls cache/sampler/spool | wc -l)" = 2 ] || fail "spool: $(ls cache/sampler/spool)"
    start_server sqlite:reports.db
    run "$R" --app wordfreq --upload "$url" --api-key good-key -- true
    expect 0 '' ''
    stop_server
    [ -z "$(ls cache/sampler/spool)" ] || fail "still spooled: $(ls cache/sampler/spool)"
    [ "$(exported_count)" = 3 ] || fail "exported $(ls exported)"
    grep -q '^exit-status	5$' exported/* || fail "the spooled run is not the first one"
    ;;
  spool_bounded)
    # A spool over its size limit drops its oldest reports.
    printf 'spool-max-bytes = 1\n' >conf
    for i in 1 2 3; do "$R" --config conf --app wordfreq --upload http://127.0.0.1:1 --api-key k -- true; done
    [ "$(ls cache/sampler/spool | wc -l)" -le 1 ] || fail "spool not bounded: $(ls cache/sampler/spool)"
    ;;
  exit_delay_bounded)
    # A collector that accepts connections and never answers: the launcher gives up after its timeout and
    # spools the report (the bound is what --upload-timeout-ms says; the check allows a slow machine 20x).
    exec 6< <(exec python3 -c 'import socket,sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); sys.stdin.read()')
    read -r port <&6
    start=$(date +%s%N)
    run "$R" --app wordfreq --upload http://127.0.0.1:"$port" --api-key k --upload-timeout-ms 200 -- sh -c 'exit 7'
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    expect 7 '' ''
    [ "$elapsed_ms" -lt 4000 ] || fail "the exit was delayed ${elapsed_ms} ms with a 200 ms bound"
    [ "$(ls cache/sampler/spool | wc -l)" = 1 ] || fail "not spooled"
    ;;
  large_report_exit_delay_bounded)
    # A program that leaves a 60 MB report, and a collector that never answers: compressing, waiting for the answer
    # and spooling together are bounded by --upload-timeout-ms from the program's end, and the spooled report is
    # the whole report. The events say each share of the bound was kept: compressing 60 MB takes longer than
    # half of 300 ms at any zlib speed, so its rest goes uncompressed, and the send gave up to spool. The time
    # itself is checked only against 20x the bound, as exit_delay_bounded does: a loaded machine can take seconds
    # to write the 60 MB spool and state files.
    exec 6< <(exec python3 -c 'import socket,sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
import select; p = select.poll(); p.register(1, 0); p.poll()  # until the test ends (its stdout then errs)')
    read -r port <&6
    mkdir -p config/sampler && printf 'spool-max-bytes = 200000000\n' >config/sampler/run.conf  # room for it all
    run "$R" -v --app wordfreq --upload http://127.0.0.1:"$port" --api-key k --upload-timeout-ms 300 -- \
      python3 -c 'import os, random, time
random.seed(1)
block = "".join("0\t0\t0\n" if random.random() < 0.5 else "%d\t%d\t%d\n" % tuple(random.choices(range(300), k=3))
                for _ in range(100000))
out = ["<report id=\"samples\">\n"]
while sum(map(len, out)) < 60_000_000:
    out += ["<samples unit=\"%032x\" scheme=\"branches\">\n" % len(out), block, "</samples>\n"]
data = memoryview(("".join(out) + "</report>\n").encode())
while data:
    data = data[os.write(int(os.environ["SAMPLER_REPORT_FD"]), data):]
open("ended", "w").write(str(time.time_ns()))'
    elapsed_ms=$((($(date +%s%N) - $(cat ended)) / 1000000))
    [ "$status" = 0 ] || fail "exit status $status: $(cat err)"
    grep -q 'compressing the report took half of --upload-timeout-ms' err ||
      fail "compressed past its share: $(cat err)"
    grep -q 'spooled in ' err || fail "not spooled after the send's share: $(cat err)"
    [ "$elapsed_ms" -lt 6000 ] || fail "the exit was delayed ${elapsed_ms} ms with a 300 ms bound: $(cat err)"
    [ "$(ls cache/sampler/spool | wc -l)" = 1 ] || fail "not spooled: $(cat err)"
    "$R" --show-last >shown 2>/dev/null || fail "--show-last failed"
    [ "$(wc -c <shown)" -gt 60000000 ] || fail "--show-last: $(wc -c <shown) bytes"
    zcat cache/sampler/spool/*.report.gz | cmp -s - shown || fail "the spooled report is not the whole report"
    ;;
  keep_and_show_last)
    run "$R" --app wordfreq --keep kept -- sh -c 'exit 1'
    expect 1 '' ''
    [ "$(ls kept | wc -l)" = 1 ] || fail "kept: $(ls kept)"
    run "$R" --show-last
    [ "$status" = 0 ] || fail "--show-last: $status"
    cmp -s out kept/*.report || fail "--show-last differs from the kept copy"
    grep -q 'not sent (no upload URL)' err || fail "--show-last stderr: $(cat err)"
    # The state file is rewritten in place: after a long report, a short one is shown without the long one's tail.
    "$wordfreq" --generate 3 >text.txt
    run "$R" --app wordfreq --version "$(printf 'v%.0s' {1..2000})" -- "$wordfreq" text.txt
    run "$R" --app wordfreq --keep kept2 -- sh -c 'exit 2'
    run "$R" --show-last
    cmp -s out kept2/*.report || fail "--show-last after a longer report differs from the kept copy"
    rm -rf cache
    run "$R" --show-last
    [ "$status" = 1 ] || fail "--show-last with nothing: $status"
    ;;
  opt_out)
    mkdir -p config/sampler && printf '# no reports from me\nenabled = no\n' >config/sampler/run.conf
    run "$R" --app wordfreq --keep kept --upload http://127.0.0.1:1 --api-key k -- sh -c 'echo "[$SAMPLER_REPORT_FD]"; exit 4'
    expect 4 '[]\n' ''
    [ ! -e kept ] && [ ! -e cache/sampler ] || fail "opted out, yet something was kept"
    ;;
  program_missing)
    run "$R" --app wordfreq -- ./no-such-program
    expect 127 '' "sampler-run: cannot run './no-such-program': No such file or directory\n"
    ;;
  demo_through_database)
    # The collection's end-to-end goal: the demo's runs go through sampler-run to a collector on loopback with SQLite,
    # and sampler-analyze reads them from the database.
    start_server sqlite:reports.db
    crashes=0
    for i in $(seq 1 30); do
      "$wordfreq" --generate "$i" >in.txt
      version=1.0 && [ "$i" -gt 25 ] && version=2.0
      "$R" --app wordfreq --version "$version" --sparsity 1 --upload "$url" --api-key good-key -- \
        "$wordfreq" in.txt >/dev/null 2>&1
      [ $? -gt 128 ] && crashes=$((crashes + 1))
    done
    stop_server
    [ "$crashes" -gt 0 ] && [ "$crashes" -lt 30 ] || fail "$crashes crashes in 30 runs: nothing to analyse"
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq"
    [ "$status" = 0 ] || fail "sampler-analyze --database: status $status: $(cat err)"
    head -1 out | grep -q '^rank	round	' || fail "no header: $(head -1 out)"
    # The best predictor is in the word counter, and it was seen in every failing run (column F).
    best=$(sed -n 2p out)
    [ "$(cut -f15 <<<"$best")" = count_word ] || fail "best predictor: $best"
    [ "$(cut -f9 <<<"$best")" = "$crashes" ] || fail "F is not the $crashes crashes: $best"
    # --version V: only that version's runs (5 of them here).
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --version 2.0 --sites "$wordfreq" --top 1
    [ "$status" = 0 ] || fail "--version 2.0: status $status: $(cat err)"
    # A sampling plan from the same stored runs: each run's outcome gives its rate (sparsity 1) and CPU time (a run
    # too short to have any is left out with a warning).
    run "$TOOLS/sampler-analyze" plan --budget 2% --database sqlite:reports.db --app wordfreq -o wordfreq.plan
    [ "$status" = 0 ] || fail "plan --database: status $status: $(cat err)"
    grep -q "^sampler-analyze plan: [1-9][0-9]* runs" err || fail "plan --database: $(cat err)"
    [ "$(head -n 1 wordfreq.plan)" = $'sampler-plan\t1' ] || fail "plan --database: no plan written"
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --sites "$wordfreq"
    expect 2 '' "sampler-analyze: --database needs --app NAME\nTry 'sampler-analyze --help' for more information.\n"
    run "$TOOLS/sampler-analyze" --database sqlite:missing-dir/x.db --app wordfreq --sites "$wordfreq"
    [ "$status" = 1 ] && grep -q "^sampler-analyze: error: cannot open 'missing-dir/x.db'" err || fail "bad database: $(cat err)"
    # --failure-statuses: the default spelled out ranks the same; fatal signals stay failures with 'none'.
    "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" >default.tsv
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" \
      --failure-statuses=1-255
    [ "$status" = 0 ] && cmp -s out default.tsv || fail "--failure-statuses=1-255 differs from the default"
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" \
      --failure-statuses none
    [ "$status" = 0 ] && [ "$(sed -n 2p out | cut -f9)" = "$crashes" ] || fail "--failure-statuses none: $(sed -n 2p out)"
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" \
      --failure-statuses=1,300
    [ "$status" = 2 ] && grep -q "'300' is not an exit status" err || fail "--failure-statuses=1,300: $status $(cat err)"
    run "$TOOLS/sampler-analyze" --sites "$wordfreq" --failure-statuses=1 default.tsv
    [ "$status" = 2 ] && grep -q -- "--failure-statuses goes with --database" err || fail "without --database: $(cat err)"
    run "$TOOLS/sampler-analyze" --sites "$wordfreq" --include-unfinished default.tsv
    [ "$status" = 2 ] && grep -q -- "--include-unfinished goes with --database" err ||
      fail "--include-unfinished without --database: $(cat err)"
    ;;
  library_build_ids)
    # The outcome names the build IDs of the instrumented libraries the program loads (those with site
    # information), not the others; the answer is cached and redone when a library changes.
    printf 'int lib_value(void) { return %s; }\n' 41 >lib.c
    printf 'int plain_value(void) { return 1; }\n' >plain.c
    printf 'int lib_value(void); int plain_value(void);\nint main(void) { return lib_value() + plain_value() - 42; }\n' >main.c
    printf '<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">\nlib.c\t1\tlib_value\t0\tx\n</sites>\n' >sites
    build_lib() {
      cc -shared -fPIC -Wl,--build-id -o libinstrumented.so lib.c &&
        objcopy --add-section .debug_site_info=sites libinstrumented.so || fail "cannot build the library"
    }
    build_lib
    cc -shared -fPIC -Wl,--build-id -o libplain.so plain.c || fail "cannot build libplain.so"
    cc -Wl,--build-id -o prog main.c -L. -linstrumented -lplain -Wl,-rpath,"$SCRATCH" || fail "cannot build prog"
    id_of() { readelf -n "$1" | sed -n 's/^ *Build ID: //p'; }
    run "$R" --app wordfreq -- ./prog
    expect 0 '' ''
    "$R" --show-last 2>/dev/null | grep '^build-id' >ids.txt
    grep -qx "build-id	$(id_of prog)	$SCRATCH/prog" ids.txt || fail "no build ID of the program: $(cat ids.txt)"
    grep -qx "build-id	$(id_of libinstrumented.so)	$SCRATCH/libinstrumented.so" ids.txt ||
      fail "no build ID of the instrumented library: $(cat ids.txt)"
    [ "$(wc -l <ids.txt)" = 2 ] || fail "more than the program and the instrumented library: $(cat ids.txt)"
    [ "$(ls cache/sampler/libraries | wc -l)" = 1 ] || fail "no cache: $(ls -R cache)"
    # Finding the libraries never runs the program a second time: not a static one, not a script.
    printf '#include <stdio.h>\nint main(void) { FILE* f = fopen("ran.txt", "a"); fputs("ran\\n", f); return 0; }\n' >once.c
    if cc -static -o static-prog once.c 2>/dev/null; then
      rm -f ran.txt
      run "$R" --app wordfreq -- ./static-prog
      [ "$(cat ran.txt)" = ran ] || fail "the static program ran $(wc -l <ran.txt) times"
    fi
    printf '#!/bin/sh\necho ran >>ran.txt\n' >script.sh && chmod +x script.sh
    rm -f ran.txt
    run "$R" --app wordfreq -- ./script.sh
    [ "$(cat ran.txt)" = ran ] || fail "the script ran $(wc -l <ran.txt) times"
    # A changed library (another build ID) is seen at the next run.
    old=$(id_of libinstrumented.so)
    printf 'int lib_value(void) { return 41; }\nint lib_extra(void) { return 7; }\n' >lib.c
    build_lib
    [ "$(id_of libinstrumented.so)" != "$old" ] || fail "the rebuilt library has the same build ID"
    run "$R" --app wordfreq -- ./prog
    "$R" --show-last 2>/dev/null | grep -qx "build-id	$(id_of libinstrumented.so)	$SCRATCH/libinstrumented.so" ||
      fail "the rebuilt library's build ID is not in the outcome: $("$R" --show-last 2>/dev/null | grep build-id)"
    ;;
  https_upload)
    # The collector serving HTTPS itself (--tls-cert, --tls-key): sampler-run uploads over TLS when it trusts the
    # certificate (--ca-file), and spools the report when it does not (the certificate is checked).
    openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=127.0.0.1 \
      -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || fail "openssl cannot make a certificate"
    start_server sqlite:reports.db --tls-cert cert.pem --tls-key key.pem
    https_url=https://$address
    curl -s --cacert cert.pem "$https_url/health" | grep -q '"success": true' || fail "no HTTPS health answer"
    curl -s "http://$address/health" | grep -q success && fail "plain HTTP answered on the TLS port"
    run "$R" --app wordfreq --upload "$https_url" --api-key good-key --verbose -- sh -c 'exit 5'
    [ "$status" = 5 ] && grep -q "unreachable" err || fail "an untrusted certificate was accepted: $(cat err)"
    [ "$(ls cache/sampler/spool | wc -l)" = 1 ] || fail "not spooled: $(cat err)"
    run "$R" --app wordfreq --upload "$https_url" --api-key good-key --ca-file cert.pem --verbose -- sh -c 'exit 6'
    [ "$status" = 6 ] && grep -q "sent to $https_url" err || fail "not sent over https: $(cat err)"
    [ "$(ls cache/sampler/spool | wc -l)" = 0 ] || fail "the spooled report did not go too: $(cat err)"
    stop_server
    [ "$(exported_count)" = 2 ] || fail "$(exported_count) reports stored, expected 2"
    # Bad TLS files are refused at start-up with the file's name.
    printf 'not a certificate\n' >bad.pem
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:x.db --keys keys.tsv \
      --tls-cert bad.pem --tls-key key.pem
    [ "$status" = 1 ] && grep -q "bad.pem" err || fail "bad certificate: $status $(cat err)"
    run "$TOOLS/sampler-collector" serve --listen 127.0.0.1:0 --database sqlite:x.db --keys keys.tsv --tls-cert cert.pem
    [ "$status" = 2 ] || fail "--tls-cert without --tls-key: $status $(cat err)"
    ;;
  private_state)
    # sampler-run's files live only where the user alone can write. Root services, cron and `env -i` run it
    # without HOME: it must never fall back to a shared directory another user can prepare (a planted run.conf
    # would redirect the report, a planted link would make it overwrite any file).
    start_server sqlite:reports.db
    printf 'secret\n' >victim && chmod 600 victim
    # Without HOME and XDG variables: no configuration, no state, said once under -v; /tmp stays untouched.
    tmp_had_cache=no
    [ -e /tmp/.cache/sampler ] && tmp_had_cache=yes
    run env -u HOME -u XDG_CACHE_HOME -u XDG_CONFIG_HOME "$R" -v --app wordfreq -- sh -c 'exit 3'
    [ "$status" = 3 ] || fail "without HOME: exit status $status"
    grep -q '^sampler-run: no private home directory (HOME is not set): no configuration file, spool or --show-last$' \
      err || fail "without HOME, -v says: $(cat err)"
    [ "$(grep -c 'no private home' err)" = 1 ] || fail "said more than once: $(cat err)"
    [ $tmp_had_cache = yes ] || [ ! -e /tmp/.cache/sampler ] || fail "without HOME, /tmp/.cache/sampler was created"
    run env -u HOME -u XDG_CACHE_HOME -u XDG_CONFIG_HOME "$R" --show-last
    [ "$status" = 1 ] || fail "--show-last without HOME: $status"
    # A HOME that others can write (as /tmp is) is no home: what another user planted there is neither read nor
    # followed. As root, "another user" is nobody; without root, the planted files are the directory's only risk.
    mkdir -p shared/.config/sampler shared/.cache/sampler planted
    chmod 1777 shared
    printf 'upload = %s\napi-key = good-key\nkeep = %s/planted\n' "$url" "$SCRATCH" >shared/.config/sampler/run.conf
    ln -s "$SCRATCH/victim" shared/.cache/sampler/last
    [ "$(id -u)" = 0 ] && chown -R nobody shared/.config shared/.cache
    run env -u XDG_CACHE_HOME -u XDG_CONFIG_HOME HOME="$SCRATCH/shared" "$R" -v --app wordfreq -- sh -c 'exit 4'
    [ "$status" = 4 ] || fail "shared HOME: exit status $status"
    grep -q "^sampler-run: no private home directory (HOME: '$SCRATCH/shared' is writable by others)" err ||
      fail "shared HOME, -v says: $(cat err)"
    [ "$(cat victim)" = secret ] || fail "the planted link was followed: victim holds $(head -c 80 victim)"
    [ -z "$(ls planted)" ] || fail "the planted configuration's keep directory was used"
    # XDG variables count only when they name the user's own directories; else HOME's are used.
    if [ "$(id -u)" = 0 ]; then
      mkdir -p foreign/sampler && chown -R nobody foreign
      printf 'keep = %s/planted\n' "$SCRATCH" >foreign/sampler/run.conf
      run env XDG_CONFIG_HOME="$SCRATCH/foreign" XDG_CACHE_HOME="$SCRATCH/foreign" "$R" -v --app wordfreq -- true
      expect 0 '' ''
      [ -z "$(ls planted)" ] || fail "a configuration in another user's XDG_CONFIG_HOME was read"
      [ -d .cache/sampler ] || fail "with a foreign XDG_CACHE_HOME, the state did not go to HOME/.cache"
      # Inside a private directory, a configuration file someone else owns is not read either.
      mkdir -p .config/sampler && cp foreign/sampler/run.conf .config/sampler/ && chown nobody .config/sampler/run.conf
      run env -u XDG_CACHE_HOME -u XDG_CONFIG_HOME "$R" -v --app wordfreq -- true
      grep -q "configuration not read: '.*/run.conf' belongs to another user" err || fail "foreign run.conf: $(cat err)"
      [ -z "$(ls planted)" ] || fail "a run.conf owned by another user was read"
      rm -rf .config
    fi
    # In the user's own state directory: a link as "last" is not followed, and a spool others can write is not used.
    mkdir -p cache/sampler && ln -sf "$SCRATCH/victim" cache/sampler/last
    run "$R" --app wordfreq -- true
    [ "$(cat victim)" = secret ] || fail "cache/sampler/last, a link, was followed"
    mkdir -p open-spool && chmod 777 open-spool
    run "$R" -v --app wordfreq --spool open-spool --upload http://127.0.0.1:1 --api-key k -- true
    [ -z "$(ls open-spool)" ] || fail "a spool others can write was used: $(ls open-spool)"
    grep -q "lost ('open-spool' is writable by others)" err || fail "open spool, -v says: $(cat err)"
    # Everything written is the user's alone: 0600 files in 0700 directories.
    rm -rf cache
    run "$R" --app wordfreq --keep kept --upload http://127.0.0.1:1 --api-key k -- true
    for f in kept/*.report cache/sampler/spool/*.report.gz cache/sampler/last; do
      [ "$(stat -c %a "$f")" = 600 ] || fail "$f is mode $(stat -c %a "$f")"
    done
    for d in kept cache/sampler cache/sampler/spool; do
      [ "$(stat -c %a "$d")" = 700 ] || fail "$d is mode $(stat -c %a "$d")"
    done
    stop_server
    [ "$(exported_count)" = 0 ] || fail "a report reached the collector through a planted configuration"
    ;;
  killed_while_writing)
    # A program killed (SIGKILL) while writing its report: cut inside its second samples section, in the middle of
    # a line (docs/formats.md, "Cut short"). The run still arrives with its outcome and the whole first section;
    # the cut one is left out (closed, it would look whole but lack lines).
    start_server sqlite:reports.db
    whole='<samples unit="0123456789abcdef0123456789abcdef" scheme="branches">\n0\t4\n</samples>\n'
    cut_unit=fedcba9876543210fedcba9876543210
    for cut in '0\t4\n1' '0\t4\n</samp' '0\t4\n' ''; do
      run "$R" -v --app wordfreq --upload "$url" --api-key good-key -- sh -c \
        "printf '<report id=\"samples\">\\n$whole<samples unit=\"$cut_unit\" scheme=\"branches\">\\n$cut' \
           >&\$SAMPLER_REPORT_FD
         kill -KILL \$\$"
      [ "$status" = 137 ] || fail "cut '$cut': exit status $status (expected death by SIGKILL): $(cat err)"
      grep -q 'sent to' err || fail "cut '$cut': not sent: $(cat err)"
    done
    stop_server
    [ "$(exported_count)" = 4 ] || fail "exported $(ls exported)"
    [ "$(grep -l '^signal	9$' exported/* | wc -l)" = 4 ] || fail "outcomes: $(cat exported/*)"
    for f in exported/*; do
      [ "$(sed -n '/^<samples /,/^<\/samples>/p' "$f" | sed '1d;$d')" = "0	4" ] || fail "$f: $(cat "$f")"
      grep -q "$cut_unit" "$f" && fail "the cut section is still in $f"
    done
    ;;
  analysis_errors_capped)
    # Any report key can store a report of many bad sections; its analysis prints at most the formats library's
    # cap of errors for it (100, then one saying the rest are not reported), not one per section.
    start_server sqlite:reports.db
    {
      printf '<report id="samples">\n'
      for i in $(seq 1 300); do printf '<samples unit="%032x" scheme="branches">\n0\t1\n</samples>\n' "$i"; done
      printf '</report>\n<report id="outcome">\nrun-id\tmany-errors\napp\twordfreq\nexit-status\t0\n</report>\n'
    } >many
    upload good-key many
    [ "$http" = 200 ] || fail "upload: $http $(cat answer)"
    stop_server
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq"
    [ "$status" = 1 ] || fail "sampler-analyze: status $status"
    [ "$(grep -c ': error: no site information' err)" = 100 ] || fail "errors: $(grep -c ': error: ' err)"
    grep -q ': error: too many errors (100); the rest of this input is still read' err || fail "$(tail -3 err)"
    ;;
  answer_escaped)
    # Whatever a server answers (escape sequences, a newline) reaches neither the terminal raw nor, as a second
    # line, the state file that --show-last reads.
    exec 6< <(exec python3 -c 'import http.server, sys
class Answer(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b"{\"success\": true, \"id\": \"\x1b]0;owned\x07\x1b[2J\nforged line\"}"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
print(server.server_address[1], flush=True)
server.handle_request()')
    read -r port <&6
    run "$R" -v --app wordfreq --upload http://127.0.0.1:"$port" --api-key k -- true
    [ "$status" = 0 ] || fail "exit status $status"
    grep -q 'sent to' err || fail "-v: $(cat err)"
    LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' err && fail "-v printed control characters: $(od -c err | head)"
    grep -q '^forged line' err && fail "-v printed the answer's newline raw"
    run "$R" --show-last
    [ "$status" = 0 ] || fail "--show-last: $status"
    LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' err && fail "--show-last printed control characters"
    [ "$(wc -l <err)" = 1 ] || fail "--show-last's status is not one line: $(cat err)"
    grep -q '\\x1b' err || fail "the escape is not shown escaped: $(cat err)"
    ;;
  help_version_usage)
    run "$R" --version
    expect 0 "sampler-run (sampler) $version\n" ''
    run "$R" --help
    [ "$status" = 0 ] && grep -q -- '--upload=URL' out || fail "--help: $(cat out)"
    run "$R" --app wordfreq
    expect 2 '' "sampler-run: missing PROGRAM (after --)\nTry 'sampler-run --help' for more information.\n"
    run "$R" -- true
    expect 2 '' "sampler-run: --app is required\nTry 'sampler-run --help' for more information.\n"
    run "$R" --app a --upload http://x -- true
    expect 2 '' "sampler-run: an upload URL needs an API key (--api-key or SAMPLER_API_KEY)\nTry 'sampler-run --help' for more information.\n"
    printf 'colour = blue\n' >bad.conf
    run "$R" --config bad.conf --app a -- true
    expect 2 '' "sampler-run: 'bad.conf':1: error: unknown key 'colour'\n"
    for interval in 0 -1 1.5 x ''; do
      run "$R" --interval "$interval" --app a -- true
      expect 2 '' "sampler-run: --interval wants a whole number of seconds, 1 or more\nTry 'sampler-run --help' for more information.\n"
    done
    printf 'interval = 0\n' >bad.conf
    run "$R" --config bad.conf --app a -- true
    expect 2 '' "sampler-run: 'bad.conf':1: error: bad value for 'interval'\n"
    ;;
  plans)
    # The collector's current plan of a release reaches its runs: the first run's upload learns of it and fetches
    # it, the next runs give it to the program (SAMPLER_PLAN); --plan and --no-plan override it; a bad plan stops
    # sampler-run before the program runs. On PostgreSQL too (with_postgresql.sh).
    database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:reports.db}
    printf 'wordfreq\tplan-key\tplans\n' >>keys.tsv
    start_server "$database"
    upload_plan() {  # upload_plan FILE VERSION
      local http
      http=$(curl -s -o answer -w '%{http_code}' -H 'Authorization: APIKey plan-key' --data-binary @"$1" \
        "$url/api/plans?version=$2")
      [ "$http" = 200 ] || fail "plan upload: $http $(cat answer)"
    }
    unit=0123456789abcdef0123456789abcdef
    printf 'sampler-plan\t1\nid\tplan-a\n%s\tbranches\t0\t1e-3\n%s\tbranches\t1\t1\n' "$unit" "$unit" >plan-a
    sed 's/plan-a/plan-b/; s/1e-3/0.01/' plan-a >plan-b
    upload_plan plan-a 1.0
    # The program shows the plan it was given: its path on the first line, then the file.
    shows_plan=(sh -c 'printf "%s\n" "${SAMPLER_PLAN-none}"; [ -z "${SAMPLER_PLAN-}" ] || cat "$SAMPLER_PLAN"')
    run_1_0() { run "$R" --app wordfreq --version 1.0 --upload "$url" --api-key good-key "$@" -- "${shows_plan[@]}"; }
    # given_plan FILE PATH: the last run was given the plan FILE, as PATH.
    given_plan() {
      [ "$status" = 0 ] && [ ! -s err ] || fail "$ran: status $status, stderr $(cat err)"
      [ "$(head -n 1 out)" = "$2" ] || fail "$ran: SAMPLER_PLAN is '$(head -n 1 out)', expected '$2'"
      tail -n +2 out | cmp -s - "$1" || fail "$ran: the program read $(tail -n +2 out | head -3)"
    }
    run_1_0
    expect 0 'none\n' ''
    cached=(cache/sampler/plans/*.plan)
    [ "${#cached[@]}" = 1 ] && cmp -s plan-a "${cached[0]}" || fail "not cached: $(ls -la cache/sampler/plans)"
    [ "$(stat -c %a "${cached[0]}")" = 600 ] || fail "the cached plan's mode: $(stat -c %a "${cached[0]}")"
    run_1_0
    given_plan plan-a "$SCRATCH/${cached[0]}"
    # A new current plan on the collector: the next upload fetches it, the run after uses it.
    upload_plan plan-b 1.0
    run_1_0
    given_plan plan-a "$SCRATCH/${cached[0]}"
    run_1_0
    given_plan plan-b "$SCRATCH/${cached[0]}"
    # Another release has no plan: its runs get none, and the plan of 1.0 stays cached.
    run "$R" --app wordfreq --version 2.0 --upload "$url" --api-key good-key -- "${shows_plan[@]}"
    expect 0 'none\n' ''
    # --no-plan: none at all; --plan FILE, SAMPLER_PLAN or the configuration's plan: that one, as an absolute path.
    run_1_0 --no-plan
    expect 0 'none\n' ''
    run_1_0 --plan plan-a
    given_plan plan-a "$SCRATCH/plan-a"
    SAMPLER_PLAN=plan-a run_1_0
    given_plan plan-a "$SCRATCH/plan-a"
    printf 'plan = %s\n' "$SCRATCH/plan-a" >with-plan.conf
    run_1_0 --config with-plan.conf
    given_plan plan-a "$SCRATCH/plan-a"
    # A cached plan that is no plan any more is not given; the next upload fetches the current one again.
    printf 'sampler-plan\t1\n' >"${cached[0]}"
    run_1_0
    expect 0 'none\n' ''
    run_1_0
    given_plan plan-b "$SCRATCH/${cached[0]}"
    # A bad plan given: refused before the program runs, with its file and line, exit status 2.
    { cat plan-a; printf '%s\tbranches\t1\t0.5\n' "$unit"; } >repeated
    run "$R" --app wordfreq --plan repeated -- sh -c 'echo ran'
    expect 2 '' "sampler-run: 'repeated':5: error: the same unit, scheme and site as line 4\n"
    printf 'plan = repeated\n' >bad-plan.conf
    run "$R" --config bad-plan.conf --app wordfreq -- sh -c 'echo ran'
    expect 2 '' "sampler-run: 'repeated':5: error: the same unit, scheme and site as line 4\n"
    run "$R" --app wordfreq --plan no-such-file -- sh -c 'echo ran'
    expect 2 '' "sampler-run: 'no-such-file': error: cannot read the plan\n"
    # A file name with a control character is shown escaped.
    printf 'sampler-plan\t1\n' >"$(printf 'no\033id')"
    run "$R" --app wordfreq --plan "$(printf 'no\033id')" -- sh -c 'echo ran'
    [ "$status" = 2 ] && [ ! -s out ] && grep -q "^sampler-run: 'no\\\\x1bid':1: error: " err ||
      fail "a plan without an id: status $status, stdout $(cat out), stderr $(od -c err | head -3)"
    run "$R" --app wordfreq --plan plan-a --no-plan -- true
    expect 2 '' "sampler-run: --plan and --no-plan exclude each other\nTry 'sampler-run --help' for more information.\n"
    stop_server
    # A collector whose release has no plan ("plan": null): the run still gets the cached one, whose file the
    # upload's answer then drops; the next run gets none. The same address: the cache is per collector URL.
    LISTEN=$address start_server sqlite:no-plans.db
    run_1_0
    given_plan plan-b "$SCRATCH/${cached[0]}"
    [ ! -e "${cached[0]}" ] || fail "the cached plan stayed after an answer without a plan"
    run_1_0
    expect 0 'none\n' ''
    stop_server
    ;;
  *) echo "unknown case $case_name" >&2; exit 2 ;;
esac
finish
