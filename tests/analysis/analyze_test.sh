#!/bin/bash
# Black-box tests of sampler-analyze (docs/analysis.md): exact stdout, stderr and exit status, one feature
# per ctest test. Usage: analyze_test.sh CASE VERSION, with TOOLS, SCRATCH and SOURCE_DIR in the environment.
# Reports are written here by hand: 10 failing runs (a main-backtrace subreport) where the branch "x > 0" was
# true, 10 successful runs where it was false; a returns site true in all of them says nothing.
set -u
case_name=$1
version=$2

source "$SOURCE_DIR/tests/tools/blackbox.sh"

# run ARGS...: sampler-analyze -j1 (messages in a fixed order); stdout in out, stderr in err, status in $status.
run() {
  "$TOOLS/sampler-analyze" "$@" >out 2>err
  status=$?
  ran="sampler-analyze $*"
}

U1=0123456789abcdef0123456789abcdef
U2=fedcba9876543210fedcba9876543210
printf '<sites unit="%s" scheme="branches">\na.c\t3\tf\t1\tx > 0\n</sites>\n' $U1 >app.sites
printf '<sites unit="%s" scheme="returns">\nb.c\t5\tg\t2\th\n</sites>\n' $U2 >lib.sites

# report BRANCH-COUNTERS CRASH: a report on stdout.
report() {
  printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n%s\n</samples>\n' $U1 "$1"
  printf '<samples unit="%s" scheme="returns">\n1\t0\t0\n</samples>\n</report>\n' $U2
  [ "$2" = crash ] && printf '<report id="main-backtrace">\nsignal:11:SIGSEGV\n</report>\n'
  return 0
}
mkdir -p reports
for i in $(seq 10 19); do
  report $'0\t5' crash >reports/fail-$i.txt
  report $'5\t0' clean >reports/ok-$i.txt
done

header='rank\tround\timportance\tincrease\tincrease_low\tfailure\tcontext\timportance\tF\tS\tF_obs\tS_obs\tfile\tline\t'
header+='function\tscheme\tpredicate\n'
# F 10, S 0, F obs 10, S obs 10: Failure 1, Context 0.5, Increase 0.5, its bound 0.5 - 1.96 sqrt(0.25 / 20) =
# 0.2809; Importance 2 / (1 / 0.5 + 1 / 1) = 0.6667.
row='1\t1\t0.6667\t0.5000\t0.2809\t1.0000\t0.5000\t0.6667\t10\t0\t10\t10\ta.c\t3\tf\tbranches\t(x > 0) is true\n'

case $case_name in
  tsv)
    run -j1 --sites app.sites lib.sites --format tsv reports
    expect 0 "$header$row" ''
    ;;
  progress)
    # On a terminal, stderr shows how far the reading got, redrawn in place; stdout is the same table. A report
    # left out is named on a line of its own. With stderr on a file (here, and in every other case) nothing extra.
    on_terminal="python3 $SOURCE_DIR/tests/tools/on_terminal.py"
    printf "$header$row" >expected.out
    $on_terminal terminal "$TOOLS/sampler-analyze" -j1 --sites app.sites lib.sites reports >out
    [ $? = 0 ] && cmp -s out expected.out || fail "on a terminal: stdout differs: $(differences expected.out out)"
    expect_progress terminal 'sampler-analyze: reading reports' 20 20
    printf '<report id="other">\n</report>\n' >reports/zz-none.txt
    $on_terminal terminal "$TOOLS/sampler-analyze" -j1 --sites app.sites lib.sites reports >out
    [ $? = 1 ] && cmp -s out expected.out || fail "on a terminal, a report left out: status or stdout"
    expect_progress terminal 'sampler-analyze: reading reports' 21 21
    tr '\r' '\n' <terminal | grep -qx "sampler-analyze: 'reports/zz-none.txt': error: no samples subreport; left out" ||
      fail "the error is not on a line of its own: $(od -c terminal | tail -n 8)"
    run -j1 --sites app.sites lib.sites reports
    expect 1 "$header$row" "sampler-analyze: 'reports/zz-none.txt': error: no samples subreport; left out\n"
    ;;
  sites_rule)
    # Nothing but operands after --sites: its first argument, then the .sites, ELF and ar files that follow, are
    # site information; a directory begins the reports.
    mkdir -p more sites && mv reports/ok-1[5-9].txt more/ && cp lib.sites sites/
    run -j1 --sites app.sites --sites lib.sites reports more
    expect 0 "$header$row" ''
    run -j1 --sites=app.sites -s lib.sites -- reports more
    expect 0 "$header$row" ''
    run -j1 --sites app.sites sites reports more
    expect 1 "$header$row" "sampler-analyze: 'sites/lib.sites':1: error: text outside a subreport (ignored up to \
the next <report> tag)\nsampler-analyze: 'sites/lib.sites': error: no samples subreport; left out
sampler-analyze: 'reports/fail-10.txt':5: error: no site information for unit $U2, scheme 'returns'\n"
    run -j1 --sites app.sites sites -j1 reports more
    expect 0 "$header$row" ''
    ;;
  labels)
    # No crash anywhere: the labels say which runs failed. One bad line, one unknown report.
    mkdir -p quiet
    for i in $(seq 10 19); do
      report $'0\t5' clean >quiet/bad-$i.txt
      report $'5\t0' clean >quiet/good-$i.txt
      printf './quiet/bad-%s.txt\tfailure\nquiet/good-%s.txt\tsuccess\n' $i $i >>labels.tsv
    done
    printf 'quiet/other.txt\tfailure\nquiet/bad-10.txt\tbroken\n' >>labels.tsv
    run -j1 --sites app.sites lib.sites --labels labels.tsv quiet
    expect 1 "$header$row" "sampler-analyze: 'labels.tsv':21: warning: no report 'quiet/other.txt' was read; label \
ignored\nsampler-analyze: 'labels.tsv':22: error: expected PATH, a tab, then 'success' or 'failure'\n"
    ;;
  bad_reports)
    # A missing operand, a broken gzip file and a report without samples: each named once, the rest analysed.
    printf '\037\213\010\000garbage' >reports/broken.gz
    printf '<report id="other">\nx\n</report>\n' >reports/nosamples.txt
    run -j1 --sites app.sites lib.sites reports missing.txt
    expect 1 "$header$row" "sampler-analyze: 'missing.txt': error: no such file or directory
sampler-analyze: 'reports/broken.gz':1: error: gzip data is truncated (the input ends inside a compressed stream)
sampler-analyze: 'reports/nosamples.txt': error: no samples subreport; left out\n"
    ;;
  gzip_crlf)
    for f in reports/*.txt; do sed 's/$/\r/' "$f" | gzip -c >"$f.gz" && rm "$f"; done
    run -j2 --sites app.sites lib.sites reports
    expect 0 "$header$row" ''
    ;;
  unknown_unit)
    # A unit no site information has: one error for the key over all reports; the rest still counts.
    run -j1 --sites app.sites reports
    expect 1 "$header$row" "sampler-analyze: 'reports/fail-10.txt':5: error: no site information for unit $U2, \
scheme 'returns'\n"
    ;;
  malformed_samples)
    printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n1\tx\n</samples>\n</report>\n' $U1 \
      >reports/zz-bad.txt
    printf '<report id="samples">\n<samples unit="%s" scheme="branches">\n1\t1\n1\t1\n</samples>\n</report>\n' $U1 \
      >reports/zz-long.txt
    run -j1 --sites app.sites lib.sites reports
    # Both runs still count (as successful runs that observed nothing): S obs stays 10, 22 runs in all.
    expect 1 "$header$row" "sampler-analyze: 'reports/zz-bad.txt':3: error: malformed samples line for scheme \
'branches': the section is left out
sampler-analyze: 'reports/zz-long.txt':2: error: unit $U1, scheme 'branches': 2 samples lines, but 1 sites in \
'app.sites':1\n"
    ;;
  truncated)
    # A report cut short by a crash inside its samples: a warning, what is there is used, exit 0. The line numbers
    # are the report's, though the samples subreport is read on its own.
    mkdir -p cut
    printf '<report id="main-backtrace">\nsignal:11:SIGSEGV\n</report>\n<report id="samples">\n' >cut/r.txt
    printf '<samples unit="%s" scheme="branches">\n0\t5\n' $U1 >>cut/r.txt
    run -j1 --sites app.sites cut
    expect 0 "$header" "sampler-analyze: 'cut/r.txt': warning: subreport 'samples' starting at line 4 was cut short \
(no </report>)\nsampler-analyze: 'cut/r.txt': warning: samples section starting at line 5 was cut short (no end \
tag)\n"
    ;;
  json)
    run -j1 --sites app.sites lib.sites --format json reports
    [ "$status" = 0 ] || fail "status $status"
    [ -s err ] && fail "stderr: $(cat err)"
    for field in '"runs": 20' '"failing": 10' '"succeeding": 10' '"metric": "importance"' \
      '"predicate": "(x > 0) is true"' '"F": 10' '"increase_low": 0.2809' '"failing_explained": 10' \
      '"signature": "SIGSEGV"' '"crash_groups": [{"group": 1, "runs": 10}]'; do
      grep -q -F "$field" out || fail "no $field in: $(cat out)"
    done
    ;;
  all_predicates)
    # --all-predicates: the table as without it, then every other predicate whose site was observed, over all
    # runs, best first (importance 0 for all: ties to the larger F, then site order). h() is negative in every
    # run: its three predicates true there have F 10, S 10, Increase 0, a bound of 0 - 1.96 sqrt(2 x 0.25 / 20)
    # = -0.3099; the others, like "(x > 0) is false", F 0, Failure 0, Increase -0.5 (-Context), bound -0.5 - 1.96
    # sqrt(0.25 / 20) = -0.7191.
    rest='2\t-\t0.0000\t0.0000\t-0.3099\t0.5000\t0.5000\t0.0000\t10\t10\t10\t10\tb.c\t5\tg\treturns\th() < 0\n'
    rest+='3\t-\t0.0000\t0.0000\t-0.3099\t0.5000\t0.5000\t0.0000\t10\t10\t10\t10\tb.c\t5\tg\treturns\th() <= 0\n'
    rest+='4\t-\t0.0000\t0.0000\t-0.3099\t0.5000\t0.5000\t0.0000\t10\t10\t10\t10\tb.c\t5\tg\treturns\th() != 0\n'
    rest+='5\t-\t0.0000\t-0.5000\t-0.7191\t0.0000\t0.5000\t0.0000\t0\t10\t10\t10\ta.c\t3\tf\tbranches\t(x > 0) is false\n'
    rest+='6\t-\t0.0000\t-0.5000\t-0.7191\t0.0000\t0.5000\t0.0000\t0\t0\t10\t10\tb.c\t5\tg\treturns\th() > 0\n'
    rest+='7\t-\t0.0000\t-0.5000\t-0.7191\t0.0000\t0.5000\t0.0000\t0\t0\t10\t10\tb.c\t5\tg\treturns\th() >= 0\n'
    rest+='8\t-\t0.0000\t-0.5000\t-0.7191\t0.0000\t0.5000\t0.0000\t0\t0\t10\t10\tb.c\t5\tg\treturns\th() == 0\n'
    run -j1 --sites app.sites lib.sites --all-predicates reports
    expect 0 "$header$row$rest" ''
    # Without it, the same first rows and nothing else (the tsv case); with --top, the first N rows.
    run -j1 --sites app.sites lib.sites reports
    expect 0 "$header$row" ''
    run -j1 --sites app.sites lib.sites --all-predicates --top 2 reports
    expect 0 "$header$row${rest%%h() < 0*}h() < 0\n" ''
    # A site that no run observed has no statistics: not listed.
    printf '<sites unit="%s" scheme="branches">\na.c\t3\tf\t1\tx > 0\na.c\t9\tf\t2\ty\n</sites>\n' $U1 >app.sites
    for f in reports/*.txt; do sed -i 's/^\([0-9]*\t[0-9]*\)$/\1\n0\t0/' "$f"; done
    run -j1 --sites app.sites lib.sites --all-predicates reports
    expect 0 "$header$row$rest" ''
    # The same rows from indexes, and in JSON with round 0.
    run index --sites app.sites lib.sites -o all.idx reports
    expect 0 '' ''
    run rank --all-predicates all.idx
    expect 0 "$header$row$rest" ''
    run -j1 --sites app.sites lib.sites --all-predicates --format json reports
    [ "$status" = 0 ] || fail "json: status $status"
    [ "$(grep -c '"round": 0, "scores"' out)" = 7 ] || fail "json: not 7 rows of round 0: $(cat out)"
    grep -q -F '"predicate": "h() == 0"' out || fail "json: no h() == 0 in: $(cat out)"
    run index --all-predicates --sites app.sites lib.sites -o all.idx reports
    expect 2 '' "sampler-analyze: --all-predicates goes with a table, not with 'index'
Try 'sampler-analyze --help' for more information.\n"
    ;;
  metric_top)
    run -j1 --sites app.sites lib.sites --metric ochiai --top 1 reports
    # Ochiai: 10 / sqrt(10 * 10) = 1.
    expect 0 "${header/importance/ochiai}${row/0.6667/1.0000}" ''
    ;;
  html)
    run -j1 --sites app.sites lib.sites --html 'page dir' reports
    expect 0 "$header$row" ''
    grep -q '<span class="predicate">(x &gt; 0) is true</span>' 'page dir/index.html' || fail "no predictor row"
    grep -q '<script src\|<link\|@import\|url(' 'page dir/index.html' && fail "an external asset"
    ;;
  control_characters)
    # Control characters from site information never reach the terminal (nor the page) as they are.
    printf '<sites unit="%s" scheme="branches">\na.c\t3\tf\x1b[31m\t1\tx\x07 > 0\n</sites>\n' $U1 >app.sites
    run -j1 --sites app.sites lib.sites --html page reports
    expect 0 "$header${row/f\\tbranches\\t(x > 0)/f\\\\x1b[31m\\tbranches\\t(x\\\\x07 > 0)}" ''
    grep -q $'\x1b\|\x07' page/index.html && fail "a control character in the page"
    ;;
  index_rank)
    # Two shards indexed apart and ranked together give the table of all reports at once.
    mkdir -p shard1 shard2 && mv reports/*-1[0-4].txt shard1/ && mv reports/*-1[5-9].txt shard2/
    run index --sites app.sites lib.sites -o one.idx shard1
    expect 0 '' ''
    run index --sites app.sites lib.sites --output two.idx -j2 shard2
    expect 0 '' ''
    [ "$(gzip -dc one.idx | head -1)" = 'sampler-index 1' ] || fail "one.idx is not a gzip'd index"
    run rank one.idx two.idx
    expect 0 "$header$row" ''
    # A broken index: its bad lines are named, the good ones still count.
    { gzip -dc two.idx; printf 'run\tfailure\t-\t-\t0,0\t\tx\nbogus\n'; } >three.idx
    run rank one.idx three.idx
    expect 1 "$header$row" "sampler-analyze: 'three.idx':17: error: malformed run line
sampler-analyze: 'three.idx':18: error: malformed line\n"
    run rank --sites app.sites one.idx
    expect 2 '' "sampler-analyze: rank takes no --sites: indexes hold them
Try 'sampler-analyze --help' for more information.\n"
    run index --sites app.sites shard1
    expect 2 '' "sampler-analyze: --output INDEX goes with 'index', and only with it
Try 'sampler-analyze --help' for more information.\n"
    ;;
  source_dir)
    # --source-dir shows a site's source line from a file under DIR, and never from outside it: not through an
    # absolute name, "..", or a link (the site information comes from a binary anyone may have built).
    mkdir -p src/sub outside && printf 'one\n  int y = x > 0;\n  if (x > 0) crash();\n' >src/a.c
    printf 'secret line 1\nsecret line 2\nsecret line 3\n' >outside/secret.c
    ln -s ../../outside src/sub/link
    for file in a.c "$SCRATCH/src/a.c" "$SCRATCH/outside/secret.c" ../outside/secret.c sub/../../outside/secret.c \
      sub/link/secret.c /etc/passwd; do
      printf '<sites unit="%s" scheme="branches">\n%s\t3\tf\t1\tx > 0\n</sites>\n' $U1 "$file" >src.sites
      run -j1 --sites src.sites lib.sites --html page --source-dir src reports
      [ "$status" = 0 ] || fail "--source-dir with a site in '$file': status $status"
      case $file in
        a.c | "$SCRATCH/src/a.c") grep -q 'if (x &gt; 0) crash();' page/index.html || fail "no source line of '$file'" ;;
        *) grep -q 'secret line\|root:' page/index.html && fail "'$file' was read from outside the source directory" ;;
      esac
    done
    ;;
  help)
    run --help
    [ "$status" = 0 ] || fail "--help: status $status"
    for option in --sites --section --labels --html --source-dir --format --metric --top --all-predicates --jobs \
      --crash-frames; do
      grep -q -- "$option" out || fail "--help does not explain $option"
    done
    ;;
  version)
    run --version
    expect 0 "sampler-analyze (sampler) $version\n" ''
    ;;
  usage_errors)
    try="Try 'sampler-analyze --help' for more information.\n"
    run reports
    expect 2 '' "sampler-analyze: --sites FILE... is required\n$try"
    run --sites app.sites
    expect 2 '' "sampler-analyze: no REPORT-OR-DIR given\n$try"
    run --sites app.sites --format xml reports
    expect 2 '' "sampler-analyze: --format must be tsv or json, not 'xml'\n$try"
    run --sites app.sites --metric best reports
    expect 2 '' "sampler-analyze: unknown --metric 'best'\n$try"
    run --sites app.sites --top 0 reports
    expect 2 '' "sampler-analyze: --top needs a positive number\n$try"
    run --sites app.sites -j x reports
    expect 2 '' "sampler-analyze: --jobs needs 1 to 1024\n$try"
    ;;
  *) fail "unknown case" ;;
esac
finish
