#!/bin/bash
# The console (sampler-collector serve, GET /ui/; collector/console.h), black-box: a real collector on 127.0.0.1,
# runs uploaded through sampler-run, every page opened in headless Chromium (console_browser.py: the DevTools
# protocol on a pipe; DOMs and screenshots kept in SCRATCH as the test's artifacts). Cases:
#   pages    the demo (examples/wordfreq.c built by sampler-cc, 40 runs): its build ID listed as missing symbols
#            until they are pushed; sign in through the form; the crash group is count_initials (wordfreq.c:N), new
#            in 1.0, and its page's top predictors are the planted cause and the state it leaves; the predictor
#            table (ranked from the runs' summaries) is sampler-analyze --database --html's (from the reports), row
#            for row; runs without summaries (as after the migration) rank the same and get their summaries
#   access   no key, a report-only key, a symbols-only key and an unknown key get the login page or 403; the cookie's
#            flags; one application's key never reaches another's pages; keys never reach the log
#   releases the releases in the order their runs came; a crash new in 1.0, gone in 2.0, regressed in 3.0
#   hostile  markup in an application's name, a version, a stack's module and the site text: escaped on every page
# Usage: console_test.sh CASE [SAMPLER-CC], with TOOLS, SCRATCH and SOURCE_DIR in the environment (and
# SAMPLER_TEST_POSTGRESQL_URL for a PostgreSQL store instead of SQLite).
set -u
case_name=$1
sampler_cc=${2:-}
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/server.sh"
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED
# SQLite here, or the PostgreSQL server tests/store/with_postgresql.sh started.
database=${SAMPLER_TEST_POSTGRESQL_URL:-sqlite:reports.db}

browser=$(command -v chromium || command -v chromium-browser) || { fail "chromium is not installed"; finish; }
# browse PROFILE STEP...: console_browser.py's steps in one browser with a profile (and cookies) of its own.
browse() {
  local profile=$SCRATCH/profile-$1
  shift
  mkdir -p "$profile"
  python3 "$SOURCE_DIR/tests/collector/console_browser.py" "$browser" "$profile" "$@" 2>browser.err ||
    fail "the browser failed ($*): $(tail -5 browser.err)"
}
# get KEY PATH [curl options...]: the page as a script reads it (Authorization: APIKey KEY; "" for none), in ./page,
# its status in $http and its headers in ./headers.
get() {
  local key=$1 path=$2
  shift 2
  local auth=()
  [ -n "$key" ] && auth=(-H "Authorization: APIKey $key")
  http=$(curl -s -o page -D headers -w '%{http_code}' "${auth[@]}" "$@" "$url$path")
}
# section FILE ID: the element <table id="ID"> ... </table> of FILE.
section() { sed -n "/<table id=\"$2\">/,/<\/table>/p" "$1"; }

case $case_name in
  pages)
    [ -x "$sampler_cc" ] || { fail "sampler-cc is not built"; finish; }
    printf 'wordfreq\tdemo-key\nwordfreq\tbuild-key\tsymbols\nwordfreq\tview-key\tread\n' >keys.tsv
    # The demo's program (scripts/demo.sh): examples/wordfreq.c built by sampler-cc, its sites extracted.
    (cd "$SOURCE_DIR/examples" && "$sampler_cc" -DSAMPLER_UNINSTRUMENTED -I"$SOURCE_DIR/runtime/include" -O2 \
      wordfreq.c -o "$SCRATCH/wordfreq") >cc.log 2>&1 || fail "sampler-cc: $(cat cc.log)"
    mkdir -p sites/wordfreq
    "$TOOLS/extract-section" .debug_site_info wordfreq >sites/wordfreq/wordfreq.sites || fail "no site information"
    start_server "$database" --site-dir sites
    crashes=0
    for seed in $(seq 1 40); do
      ./wordfreq --generate "$seed" >in.txt
      status=0
      { "$TOOLS/sampler-run" --app wordfreq --version 1.0 --upload "$url" --api-key demo-key --sparsity 100 \
        --seed "$seed" -- ./wordfreq in.txt >/dev/null 2>&1; } 2>/dev/null || status=$?
      [ "$status" -gt 128 ] && crashes=$((crashes + 1))
    done
    [ "$crashes" -gt 0 ] && [ "$crashes" -lt 40 ] || fail "$crashes crashes in 40 runs: nothing to show"
    # Before its symbols are pushed, the program's build ID is in the missing-symbols list, with the command that
    # pushes it; once pushed, the list is empty (the stored crashes are symbolized when a page is made).
    build_id=$(readelf -n wordfreq | sed -n 's/^ *Build ID: //p')
    get view-key /ui/app/wordfreq/
    missing=$(section page missing-symbols)
    grep -q "<tr><td><code>$build_id</code></td><td>[^<]*wordfreq</td><td class=\"num\">$crashes</td><td><code>sampler-symbols push" \
      <<<"$missing" || fail "wordfreq's build ID $build_id is not listed as missing symbols: $missing"
    "$TOOLS/sampler-symbols" push --url "$url" --api-key build-key wordfreq >push.out 2>&1 ||
      fail "sampler-symbols push: $(cat push.out)"
    get view-key /ui/app/wordfreq/
    grep -q '<p id="missing-symbols">Every module of the crashes has its symbols.</p>' page ||
      fail "symbols still missing after the push: $(section page missing-symbols)"
    # The group's number, as a script reads the page.
    get view-key /ui/app/wordfreq/
    [ "$http" = 200 ] || fail "GET /ui/app/wordfreq/ with the key: $http"
    group=$(section page crash-groups | sed -n 's/^<tr id="group-\([0-9]*\)">.*SIGSEGV at count_initials (wordfreq\.c:.*/\1/p')
    [ -n "$group" ] || fail "no crash group named count_initials (wordfreq.c:...): $(section page crash-groups)"
    group=${group:-1}
    browse user login "$url/ui/login" view-key page "$url/ui/" apps page "$url/ui/app/wordfreq/" app \
      page "$url/ui/app/wordfreq/group/$group/" group page "$url/ui/app/wordfreq/release/1.0/" release \
      page "$url/ui/app/wordfreq/predictors/" all
    # Signed in through the form: back on /ui/, the key in an HttpOnly, SameSite=Strict cookie for /ui/ only.
    [ "$(cat after-login.url)" = "$url/ui/" ] || fail "after signing in: $(cat after-login.url)"
    cookie=$(python3 -c 'import json; c = [x for x in json.load(open("cookies.json")) if x["name"] == "sampler_key"]
print("%s %s %s %s" % (c[0]["httpOnly"], c[0]["sameSite"], c[0]["path"], c[0]["secure"]) if c else "none")')
    [ "$cookie" = "True Strict /ui/ False" ] || fail "the cookie (httpOnly sameSite path secure): $cookie"
    apps=$(cat apps.html)
    grep -q '<a href="/ui/app/wordfreq/">wordfreq</a>' <<<"$apps" || fail "/ui/ does not list wordfreq"
    # The application: its release, its runs, the chart, the crash group new in 1.0 with a symbolized stack.
    app=$(cat app.html)
    releases=$(section app.html releases)
    grep -q "<tr><td>1.0</td><td class=\"num\">40</td><td class=\"num\">$crashes</td>" <<<"$releases" ||
      fail "the release row is not 1.0, 40 runs, $crashes failing: $releases"
    grep -q '<svg class="chart"' <<<"$releases" || fail "no chart in the release row"
    row=$(section app.html crash-groups | grep "^<tr id=\"group-$group\">")
    grep -q '<span class="flag new">new in 1.0</span>' <<<"$row" || fail "the group is not flagged new in 1.0: $row"
    grep -q '<ol class="stack" start="0"><li>count_initials (wordfreq.c:[0-9]*)</li>' <<<"$row" ||
      fail "no symbolized sample stack: $row"
    latest=$(section app.html latest-runs | grep -c '^<tr><td>')
    [ "$latest" = 20 ] || fail "$latest latest runs, expected 20"
    "$TOOLS/sampler-analyze" --database "$database" --app wordfreq --sites sites/wordfreq --html html \
      >analyze.tsv 2>analyze.err || fail "sampler-analyze: $(cat analyze.err)"
    # The group's predictors: the planted cause, count_word()'s branch `length > WORD_CAPACITY` (wordfreq.c's too_long
    # site), and the state it leaves behind (an entry whose count is 0: by_count()'s `a <= 0` and its kin) come out
    # on top, as the README says: on these 40 runs the state ranks first, the cause within the first five rows.
    rows=$(section group.html predictors | grep '^<tr')
    cause=$(grep -n '(length &gt; WORD_CAPACITY) is true' <<<"$rows" | grep -m1 'count_word()' | cut -d: -f1)
    [ -n "$cause" ] && [ "$cause" -le 5 ] ||
      fail "the planted cause is not among the group's top predictors (row ${cause:-none}):$(echo; sed 's/<[^>]*>/ /g' <<<"$rows" | head -8)"
    top=$(grep -m1 'class="chosen"' <<<"$rows" | sed 's/.*<span class="predicate">\([^<]*\)<.*/\1/')
    tsv_top=$(awk -F'\t' 'NR == 2 { print $17 }' analyze.tsv | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')
    [ -n "$top" ] && [ "$top" = "$tsv_top" ] || fail "the group's top predictor '$top' is not sampler-analyze's '$tsv_top'"
    grep -q 'class="thermometer"' group.html || fail "no thermometer on the group's page"
    grep -q '<ol id="rounds">' release.html || fail "no elimination rounds on the release's page"
    # The same statistics and the same renderer as sampler-analyze --html: the predictor tables are equal.
    "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$SCRATCH/profile-file" \
      --dump-dom "file://$SCRATCH/html/index.html" >analyze.html 2>chromium.err || fail "chromium --dump-dom failed"
    section analyze.html predictors >analyze.table
    section all.html predictors >console.table
    [ -s console.table ] && cmp -s analyze.table console.table ||
      fail "the console's predictors differ from sampler-analyze's:$(echo; diff analyze.table console.table | head -20)"
    for shot in apps app group release all; do [ -s "$shot.png" ] || fail "no screenshot $shot.png"; done
    # On PostgreSQL the first round's counts of every predictor page were summed by the database (run_counts).
    if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
      for shot in group release all; do
        grep -q 'id="counted-by-store"' "$shot.html" || fail "the $shot page's counts were not the database's"
      done
    fi
    # Runs stored before summaries were kept (a database migrated from schema version 4) have none: the page
    # summarizes their reports instead, ranks them the same, and stores the summaries it made, the same bytes
    # as the collector makes at upload. A migration happens when a collector starts: the one that made the pages
    # above keeps the runs it read (docs/decisions.md, "The runs kept between pages"), so the pages below come
    # from a collector started on the database after the summaries were cleared.
    sql() {
      if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then psql -qAt "$database" -c "$1"
      else sqlite3 reports.db "$1"; fi
    }
    hex=$([ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ] && echo "encode(summary, 'hex')" || echo "hex(summary)")
    at_upload=$(sql "SELECT run_id, $hex FROM runs WHERE app = 'wordfreq' ORDER BY run_id")
    [ "$(grep -c . <<<"$at_upload")" = 40 ] && ! grep -q '|$' <<<"$at_upload" ||
      fail "not every uploaded run has a summary: $(head -3 <<<"$at_upload")"
    get view-key /ui/app/wordfreq/predictors/
    section page predictors >from-summaries.table
    if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
      # Nor counts (schema version 5 or 6): the page adds them, once, and ranks from them.
      counts=$(sql "SELECT version, crash_signature, failed, encode(section, 'hex'), runs, sites, predicates
                    FROM run_counts WHERE app = 'wordfreq' ORDER BY 1, 2, 3, 4")
      sql "UPDATE runs SET summary = NULL, counted = false WHERE app = 'wordfreq';
           DELETE FROM run_counts WHERE app = 'wordfreq'" >/dev/null
    else
      sql "UPDATE runs SET summary = NULL WHERE app = 'wordfreq'" >/dev/null
    fi
    stop_server
    # Each page made anew (no window, serve --console-fresh-ms): the second must use the counts the first added.
    start_server "$database" --site-dir sites --console-fresh-ms 0
    get view-key /ui/app/wordfreq/predictors/
    [ "$http" = 200 ] || fail "the predictors' page without summaries: $http"
    section page predictors >from-reports.table
    if [ -n "${SAMPLER_TEST_POSTGRESQL_URL:-}" ]; then
      get view-key /ui/app/wordfreq/predictors/
      grep -q 'id="counted-by-store"' page || fail "the counts the page added were not used"
      added=$(sql "SELECT version, crash_signature, failed, encode(section, 'hex'), runs, sites, predicates
                   FROM run_counts WHERE app = 'wordfreq' ORDER BY 1, 2, 3, 4")
      [ -n "$counts" ] && [ "$added" = "$counts" ] ||
        fail "the counts the page added differ from the upload's:$(echo; diff <(echo "$counts") <(echo "$added") | head -5)"
    fi
    [ -s from-reports.table ] && cmp -s from-summaries.table from-reports.table ||
      fail "the predictors from reports differ from those from summaries:$(echo; diff from-summaries.table from-reports.table | head -20)"
    filled=$(sql "SELECT run_id, $hex FROM runs WHERE app = 'wordfreq' ORDER BY run_id")
    [ "$filled" = "$at_upload" ] || fail "the summaries the page stored differ from the upload's"
    stop_server
    ;;

  access)
    printf '%s\n' $'wordfreq\treport-key' $'wordfreq\tsymbols-key\tsymbols' $'wordfreq\tview-key\tread' \
      $'other\tother-view\tread' $'other\tother-key' >keys.tsv
    start_server "$database"
    report wordfreq-run >wordfreq.report
    upload report-key wordfreq.report
    [ "$http" = 200 ] || fail "upload: $http $(cat answer)"
    sed 's/^app\twordfreq$/app\tother/' wordfreq.report | sed 's/wordfreq-run/other-run/' >other.report
    upload other-key other.report
    [ "$http" = 200 ] || fail "other's upload: $http $(cat answer)"
    # No key, an unknown one, a report-only and a symbols-only key: the login page (401) or 403, for every page.
    for path in /ui/ /ui/app/wordfreq/ /ui/app/wordfreq/predictors/; do
      get "" "$path"
      [ "$http" = 401 ] && grep -q '<form id="login"' page || fail "$path without a key: $http"
      get wrong-key "$path"
      [ "$http" = 401 ] && grep -q '<form id="login"' page || fail "$path with an unknown key: $http"
      for key in report-key symbols-key; do
        get "$key" "$path"
        [ "$http" = 403 ] || fail "$path with $key: $http"
        get "" "$path" -b "sampler_key=$key"
        [ "$http" = 403 ] || fail "$path with $key in the cookie: $http"
      done
      get view-key "$path"
      [ "$http" = 200 ] || fail "$path with the read key: $http"
    done
    # Signing in: a key without read gets 403 and no cookie; the read key gets 303 to /ui/ and the cookie.
    for key in report-key symbols-key; do
      get "" /ui/login --data-urlencode "key=$key"
      [ "$http" = 403 ] || fail "signing in with $key: $http"
      grep -qi '^set-cookie' headers && fail "signing in with $key set a cookie"
    done
    get "" /ui/login --data-urlencode "key=view-key"
    [ "$http" = 303 ] || fail "signing in with the read key: $http"
    grep -qi '^location: /ui/' headers || fail "no redirection to /ui/: $(cat headers)"
    grep -qi '^set-cookie: sampler_key=view-key; Path=/ui/; HttpOnly; SameSite=Strict; Max-Age=[0-9]*.$' headers ||
      fail "the cookie: $(grep -i set-cookie headers)"
    grep -qi "^content-security-policy: default-src 'none';" headers || fail "no Content-Security-Policy"
    # Read-only: other methods are refused.
    get view-key /ui/app/wordfreq/ -X POST
    [ "$http" = 405 ] || fail "POST to a page: $http"
    # One application's key: its own pages only; the other's are not found, as if they did not exist.
    get other-view /ui/
    grep -q '/ui/app/other/' page && ! grep -q 'wordfreq' page || fail "other's key lists: $(cat page)"
    get other-view /ui/app/wordfreq/
    [ "$http" = 404 ] || fail "other's key reads wordfreq: $http"
    get other-view /ui/app/other/
    [ "$http" = 200 ] && grep -q 'other-run' page && ! grep -q 'wordfreq-run' page || fail "other's page: $(cat page)"
    # In the browser: the login page for no key, and for a report-only key after its login attempt (403).
    browse anonymous status "$url/ui/app/wordfreq/" anonymous login "$url/ui/login" report-key
    [ "$(cat anonymous.status)" = 401 ] && grep -q '<form id="login"' anonymous.html ||
      fail "the browser without a key: $(cat anonymous.status)"
    grep -q sampler_key cookies.json && fail "a report-only key got a cookie: $(cat cookies.json)"
    # Keys never reach the log.
    grep -q -e view-key -e report-key -e symbols-key server.err && fail "a key in the log: $(cat server.err)"
    stop_server
    ;;

  releases)
    # Three releases, in the order their runs arrive: the crash in 1.0 (new there), gone in 2.0, back in 3.0
    # (regressed there); another crash only in 3.0 (new there). Legacy stacks: grouped as their lines are.
    printf 'app\treport-key\napp\tview-key\tread\n' >keys.tsv
    start_server "$database"
    n=0
    for run in 1.0:a 1.0:- 2.0:- 2.0:- 3.0:a 3.0:b 3.0:-; do
      n=$((n + 1))
      version=${run%%:*} stack=${run##*:}
      {
        printf '<report id="samples">\n</report>\n'
        [ "$stack" = - ] || printf '<report id="main-backtrace">\nsignal:11:SIGSEGV:0x0\nprog(crash_%s+0x1)[0x401000]\n</report>\n' "$stack"
        printf '<report id="outcome">\nrun-id\trun-%s\nversion\t%s\n' "$n" "$version"
        if [ "$stack" = - ]; then printf 'exit-status\t0\n'; else printf 'signal\t11\n'; fi
        printf '</report>\n'
      } >"run-$n.report"
      upload report-key "run-$n.report"
      [ "$http" = 200 ] || fail "upload $n: $http $(cat answer)"
    done
    browse user login "$url/ui/login" view-key page "$url/ui/app/app/" app
    releases=$(section app.html releases | grep '^<tr><td>' | sed 's/^<tr><td>\([^<]*\)<.*/\1/' | paste -sd' ')
    [ "$releases" = "3.0 2.0 1.0" ] || fail "the releases, newest first: '$releases'"
    groups=$(section app.html crash-groups)
    a=$(grep 'crash_a+0x1' <<<"$groups")
    b=$(grep 'crash_b+0x1' <<<"$groups")
    grep -q '<td>1.0, 3.0</td><td><span class="flag new">new in 1.0</span><span class="flag regressed">regressed in 3.0</span>' \
      <<<"$a" || fail "crash a is not new in 1.0 and regressed in 3.0: $a"
    grep -q '<td>3.0</td><td><span class="flag new">new in 3.0</span> <code' <<<"$b" || fail "crash b is not new in 3.0: $b"
    stop_server
    ;;

  hostile)
    # Markup wherever a report, keys.tsv or site information puts text on a page.
    app='x<script>alert(1)</script>'
    printf '%s\treport-key\n%s\tview-key\tread\n' "$app" "$app" >keys.tsv
    unit=0123456789abcdef0123456789abcdef
    mkdir -p "sites/$app"
    printf '<sites unit="%s" scheme="branches">\nw<b>.c\t7\t<script>f</script>\t0\t<img src=x onerror=alert(2)>\n</sites>\n' \
      "$unit" >"sites/$app/hostile.sites"
    start_server "$database" --site-dir sites
    for n in 1 2 3 4 5 6; do
      counts='1\t0' && [ "$n" -le 3 ] && counts='0\t1'
      {
        printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n'"$counts"'\n</samples>\n</report>\n' "$unit"
        if [ "$n" -le 3 ]; then
          printf '<report id="main-backtrace">\nsignal:11:SIGSEGV:0x0\nprog<img src=y onerror=alert(3)>(main+0x1)[0x401000]\n</report>\n'
        fi
        printf '<report id="outcome">\nrun-id\trun-%s\nversion\t1.0<img src=z onerror=alert(4)>\n' "$n"
        if [ "$n" -le 3 ]; then printf 'signal\t11\n'; else printf 'exit-status\t0\n'; fi
        printf '</report>\n'
      } >"run-$n.report"
      upload report-key "run-$n.report"
      [ "$http" = 200 ] || fail "upload $n: $http $(cat answer)"
    done
    base="/ui/app/$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$app")"
    version=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("1.0<img src=z onerror=alert(4)>", safe=""))')
    browse user login "$url/ui/login" view-key page "$url/ui/" apps page "$url$base/" app \
      page "$url$base/predictors/" all page "$url$base/release/$version/" release page "$url$base/group/1/" group
    for page in apps app all release group; do
      dom=$(cat "$page.html")
      # What the browser built: no element from the values (only the page's one script), their text shown escaped.
      grep -q -e '<img' -e '<b>' -e '<script>alert' -e '<script>f' <<<"$dom" && fail "raw markup on $page: $dom"
      [ "$(grep -o '<script' <<<"$dom" | wc -l)" = 1 ] || fail "$page has a script of its own"
      grep -q 'x&lt;script&gt;alert(1)&lt;/script&gt;' <<<"$dom" || fail "$page does not show the application's name"
    done
    grep -q '1.0&lt;img src=z onerror=alert(4)&gt;' app.html || fail "the version is not shown escaped"
    grep -q 'prog&lt;img src=y onerror=alert(3)&gt;' app.html || fail "the stack's module is not shown escaped"
    grep -q '&lt;img src=x onerror=alert(2)&gt;' all.html || fail "the site's text is not shown escaped: $(cat all.html)"
    grep -q 'w&lt;b&gt;.c:7 &lt;script&gt;f&lt;/script&gt;()' all.html || fail "the site's place is not shown escaped"
    stop_server
    ;;
  *) fail "unknown case" ;;
esac
finish
