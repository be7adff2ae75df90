#!/bin/bash
# Symbols on the collector, black-box: a real sampler-collector on 127.0.0.1, `sampler-symbols push`
# as the client, sampler-run uploading the demo's crashes, sampler-analyze reading them from the database.
#   push          push in many small parts, the same again (duplicates), a bad key, a key for reports only, a
#                 refused file, no server
#   per_app       symbols belong to the application that pushed them: another application's file for the same
#                 build ID names nothing in this one's crashes; different bytes for a stored file are refused
#                 (409) unless the key may replace symbols
#   crash_groups  the end-to-end goal: crashes uploaded by sampler-run appear in sampler-analyze's HTML page
#                 (loaded in headless Chromium) with function names and source lines, symbolized from the
#                 pushed symbols; the same page from --symbols DIR, and addresses only without symbols
# Usage: symbols_server_test.sh CASE WORDFREQ, with TOOLS, SCRATCH and SOURCE_DIR in the environment.
set -u
case_name=$1
wordfreq=$2
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/server.sh"
# good-key: reports and symbols (sampler-run and sampler-symbols push); user-key: reports only (the default);
# build-key: symbols that may replace a stored file; other-key: another application's symbols.
printf 'wordfreq\tgood-key\treports,symbols\nwordfreq\tuser-key\nwordfreq\tbuild-key\treplace-symbols\n' >keys.tsv
printf 'other\tother-key\tsymbols\n' >>keys.tsv
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED
S=$TOOLS/sampler-symbols

run() {
  ran="$*"
  "$@" >out 2>err
  status=$?
}

case $case_name in
  push)
    start_server sqlite:reports.db
    # Silent unless asked; parts of 1000 bytes (tens of requests per file).
    run "$S" push --url "$url" --api-key good-key --part-size 1000 "$wordfreq"
    expect 0 '' ''
    "$S" gsym --symbfile -o . "$wordfreq" || fail "gsym --symbfile failed"
    id=$(basename "$(ls ./*.gsym)" .gsym)
    # Files written by 'gsym' are pushed as they are: the same bytes as the ELF file's push gave, so all three
    # are duplicates of what is stored.
    run "$S" push -v --url "$url/" --api-key good-key "$id.gsym" "$id.ranges.symbfile" "$id.returnpads.symbfile"
    [ "$status" = 0 ] || fail "push of the written files: $status $(cat err)"
    for kind in gsym ranges returnpads; do
      grep -q "\"build_id\": \"$id\", \"kind\": \"$kind\", \"duplicate\": true}" out || fail "$kind: $(cat out)"
    done
    run "$S" push --url "$url" --api-key wrong-key "$id.gsym"
    expect 1 '' "sampler-symbols: '$id.gsym': error: the collector answered 401: missing or unknown API key (Authorization: APIKey KEY)\n"
    run "$S" push --url "$url" --api-key user-key "$id.gsym"
    expect 1 '' "sampler-symbols: '$id.gsym': error: the collector answered 403: this API key may not push symbols (keys.tsv: symbols)\n"
    # A file the collector refuses: its answer names what is wrong.
    head -c 100 "$id.ranges.symbfile" >"$id.returnpads.symbfile"
    run "$S" push --url "$url" --api-key good-key "$id.returnpads.symbfile"
    [ "$status" = 1 ] && grep -q "answered 400: symbfile byte [0-9]*: " err || fail "a cut file: $status $(cat err)"
    stop_server
    run "$S" push --url "$url" --api-key good-key "$id.gsym"
    [ "$status" = 1 ] && grep -q "error: cannot reach $url/api/symbols-gsym" err || fail "no server: $(cat err)"
    run "$S" push --api-key good-key "$id.gsym"
    expect 2 '' "sampler-symbols: push needs --url URL\nTry 'sampler-symbols --help' for more information.\n"
    ;;
  per_app)
    start_server sqlite:reports.db
    run "$S" push --url "$url" --api-key good-key "$wordfreq"
    expect 0 '' ''
    "$S" gsym -o . "$wordfreq" || fail "gsym failed"
    id=$(basename "$(ls ./*.gsym)" .gsym)
    # A well-formed GSYM for wordfreq's build ID that names its crashing function otherwise (same length: the
    # file's offsets stay right).
    mkdir forged && perl -0777 -pe 's/count_initials/forged_initial/g' "$id.gsym" >"forged/$id.gsym"
    cmp -s "$id.gsym" "forged/$id.gsym" && fail "nothing forged"
    run "$S" push -v --url "$url" --api-key other-key "forged/$id.gsym"
    [ "$status" = 0 ] || fail "other's push: $status $(cat err)"
    printf 'a%.0s' {1..40} >long.txt
    "$TOOLS/sampler-run" --app wordfreq --upload "$url" --api-key good-key -- "$wordfreq" long.txt >/dev/null 2>&1
    [ $? = 139 ] || fail "the demo did not crash"
    # The same build ID's file from wordfreq's own key: different bytes, refused without replace-symbols.
    run "$S" push --url "$url" --api-key good-key "forged/$id.gsym"
    expect 1 '' "sampler-symbols: 'forged/$id.gsym': error: the collector answered 409: a different gsym file is \
already stored for build ID $id (only a key with replace-symbols may replace it)\n"
    stop_server
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" --format json
    [ "$status" = 0 ] || fail "sampler-analyze: $status $(cat err)"
    grep -q '"signature": "SIGSEGV at count_initials (wordfreq.c:' out || fail "wordfreq's crash: $(grep signature out)"
    # A key that may replace symbols does.
    start_server sqlite:reports.db
    run "$S" push -v --url "$url" --api-key build-key "forged/$id.gsym"
    [ "$status" = 0 ] && grep -q '"duplicate": false' out || fail "replace: $status $(cat out err)"
    stop_server
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" --format json
    grep -q '"signature": "SIGSEGV at forged_initial (wordfreq.c:' out || fail "replaced: $(grep signature out)"
    ;;
  crash_groups)
    browser=$(command -v chromium || command -v chromium-browser) || { fail "chromium is not installed"; finish; }
    start_server sqlite:reports.db
    run "$S" push --url "$url" --api-key good-key "$wordfreq"
    expect 0 '' ''
    crashes=0
    for i in $(seq 1 12); do
      "$wordfreq" --generate "$i" >in.txt
      "$TOOLS/sampler-run" --app wordfreq --sparsity 1 --upload "$url" --api-key good-key -- \
        "$wordfreq" in.txt >/dev/null 2>&1
      [ $? -gt 128 ] && crashes=$((crashes + 1))
    done
    stop_server
    [ "$crashes" -gt 0 ] || fail "no crash in 12 runs: nothing to symbolize"
    run "$TOOLS/sampler-analyze" --database sqlite:reports.db --app wordfreq --sites "$wordfreq" --html page
    [ "$status" = 0 ] || fail "sampler-analyze --database: status $status: $(cat err)"
    chrome=("$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$SCRATCH/profile")
    "${chrome[@]}" --dump-dom "file://$SCRATCH/page/index.html" >dom.html 2>chromium.err ||
      fail "chromium --dump-dom failed: $(tail -5 chromium.err)"
    sed -n '/<table id="crashes">/,/<\/table>/p' dom.html >crashes.html
    # The crash (examples/wordfreq.c: count_initials reads a NULL word's first letter; inlined into report and
    # main) by name and line; the lines are those llvm-symbolizer gives for the same addresses (tests/symbols).
    line=$(grep -n 'SAMPLER_BRANCH(vowel_initial, is_vowel(word\[0\]))' "$SOURCE_DIR/examples/wordfreq.c" | cut -d: -f1)
    grep -q "<code>SIGSEGV at count_initials (wordfreq.c:$line) &lt; report (wordfreq.c:[0-9]*) &lt; main (wordfreq.c:[0-9]*)</code>" crashes.html ||
      fail "the DOM's crash groups: $(cat crashes.html)"
    runs=$(sed -n 's/.*<td class="num">#1<\/td><td class="num">\([0-9]*\)<.*/\1/p' crashes.html)
    [ "$runs" = "$crashes" ] || fail "group #1 has '$runs' runs, not the $crashes crashes"
    # The same signature from a directory of symbol files, and module+offset without any.
    "$S" gsym --symbfile -o . "$wordfreq" && mkdir -p dir && mv ./*.gsym ./*.symbfile dir/
    "$TOOLS/sampler-collector" export --database sqlite:reports.db --app wordfreq exported >/dev/null ||
      fail "export failed"
    "$TOOLS/sampler-analyze" --sites "$wordfreq" --symbols dir --format json exported >dir.json 2>err ||
      fail "--symbols: $(cat err)"
    grep -q "\"signature\": \"SIGSEGV at count_initials (wordfreq.c:$line) < report" dir.json ||
      fail "--symbols DIR: $(grep signature dir.json)"
    "$TOOLS/sampler-analyze" --sites "$wordfreq" --format json exported >raw.json 2>/dev/null
    grep -q '"signature": "SIGSEGV at sampler-example-wordfreq+0x' raw.json || fail "no symbols: $(grep signature raw.json)"
    ;;
  *) fail "unknown case" ;;
esac
finish
