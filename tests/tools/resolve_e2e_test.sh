#!/bin/bash
# End-to-end tests of the resolve tools over the instrumented examples: run the
# examples with SAMPLER_SPARSITY=1, then extract, resolve and symbolize what they leave behind, and check the result
# against the examples' sources. Usage:
#   resolve_e2e_test.sh CASE EXAMPLE HOST PLUGIN SYMBOLIZER
# with TOOLS, SCRATCH and SOURCE_DIR in the environment (see tests/tools/CMakeLists.txt). Case site_lines checks
# every example of examples/ (sources, and the binaries in EXAMPLE's directory).
set -u
case_name=$1
example=$2
host=$3
plugin=$4
symbolizer=$5

rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
failures=0

fail() {
  echo "FAIL ($case_name): $*" >&2
  failures=$((failures + 1))
}

# check_file NAME EXPECTED-FILE ACTUAL-FILE
check_file() { cmp -s "$2" "$3" || fail "$1 differs:$(echo; diff "$2" "$3" | head -40)"; }

# no_stderr FILE WHAT
no_stderr() { [ -s "$1" ] && fail "$2: unexpected stderr: $(cat "$1")"; }

# The site lines of a .sites text, each prefixed by "FILE<TAB>unit<TAB>scheme<TAB>".
sites_with_keys() {
  awk -v file="$1" '
    /^<sites / { match($0, /unit="[^"]*"/); unit = substr($0, RSTART + 6, RLENGTH - 7)
                 match($0, /scheme="[^"]*"/); scheme = substr($0, RSTART + 8, RLENGTH - 9); next }
    /^<\/sites>/ { next }
    { printf "%s\t%s\t%s\t%s\n", file, unit, scheme, $0 }' "$2"
}

# line_of FILE TEXT: the number of FILE's first line holding TEXT (the examples' sites name the lines of their
# recording macros: case site_lines checks that for every site, the other cases look the lines up the same way).
line_of() { grep -nF -- "$2" "$1" | head -1 | cut -d: -f1; }
main_c=$SOURCE_DIR/examples/sampler_example.c
plugin_c=$SOURCE_DIR/examples/plugin.c
host_c=$SOURCE_DIR/examples/plugin_host.c

# check_segv_frames INPUT SYMBOLIZED: llvm-symbolizer's output for `crash segv` names the signal, then each frame of
# the example with its function, file and line (the line of the statement, found in the source).
check_segv_frames() {
  grep -qx 'Crashed with signal 11 (SIGSEGV) at address 0x00' "$2" || fail "$1: no signal line: $(cat "$2")"
  local crash_c="$SOURCE_DIR/examples/crash.c" n=0 frame
  for frame in \
    "crash_segv $crash_c:$(line_of "$crash_c" '*null_pointer = 42;')" \
    "crash_level_3 $crash_c:$(line_of "$crash_c" 'if (strcmp(kind, "segv") == 0) crash_segv();')" \
    "crash_level_2 $crash_c:$(line_of "$crash_c" 'crash_level_2(const char* kind)')" \
    "crash_level_1 $crash_c:$(line_of "$crash_c" 'crash_level_1(const char* kind)')" \
    "example_crash $crash_c:$(line_of "$crash_c" 'int example_crash(const char* kind)')" \
    "main $main_c:$(line_of "$main_c" 'if (example_crash(argv[2]) != 0)')"; do
    grep -Eq "^ *#$n +0x[0-9a-f]+ ${frame%% *} ${frame#* }:[0-9]+ " "$2" ||
      fail "$1: frame #$n is not ${frame}: $(grep "#$n " "$2")"
    n=$((n + 1))
  done
}

U=5a3d1c0e9b8f47d2a6c4e1f0b3d5a7c9
N=12

case $case_name in
samples)
  # extract-report samples | resolveSamples EXE: exactly one line per site, its static fields from the sites and
  # its counters from the report, in report order; spot checks against the closed forms of the example's workload.
  SAMPLER_SPARSITY=1 SAMPLER_FILE=report "$example" run $N || fail "the example failed"
  "$TOOLS/extract-section" .debug_site_info "$example" >exe.sites 2>extract.err || fail "extract-section failed"
  no_stderr extract.err extract-section
  "$TOOLS/extract-report" samples <report >samples 2>report.err || fail "extract-report failed"
  no_stderr report.err extract-report
  "$TOOLS/resolveSamples" "$example" <samples >resolved 2>resolve.err
  status=$?
  [ "$status" = 0 ] || fail "resolveSamples EXE: exit status $status"
  no_stderr resolve.err "resolveSamples EXE"
  # One line per site, and nothing else: the sites in the report's section order, each with its counters.
  expected_lines=$(grep -vc '^<' exe.sites)
  [ "$(wc -l <resolved)" = "$expected_lines" ] || fail "$(wc -l <resolved) lines for $expected_lines sites"
  awk -F'\t' -v exe="$example" '
    FILENAME == ARGV[1] {
      if ($0 ~ /^<sites /) { match($0, /unit="[^"]*"/); u = substr($0, RSTART + 6, RLENGTH - 7)
                             match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); i = 0; next }
      if ($0 ~ /^</) next
      site[u, s, i++] = $0; next
    }
    /^<samples / { match($0, /unit="[^"]*"/); u = substr($0, RSTART + 6, RLENGTH - 7)
                   match($0, /scheme="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9); i = 0; in_samples = 1
                   next }
    /^</ { in_samples = 0; next }
    in_samples { printf "%s\t%s\t%s\t%s\t%s\n", exe, u, s, site[u, s, i++], $0 }' exe.sites samples >expected
  check_file "resolveSamples EXE output" expected resolved
  # Closed forms for N=12 (examples/sampler_example.c, work(i, n) for i < n).
  for line in \
    "function-entries	sampler_example.c	$(line_of "$main_c" 'SAMPLER_FUNCTION_ENTRY(work_entry)')	work	0	12" \
    "function-entries	sampler_example.c	$(line_of "$main_c" 'SAMPLER_FUNCTION_ENTRY(never_entry)')	never_called	0	0" \
    "branches	sampler_example.c	$(line_of "$main_c" 'SAMPLER_BRANCH(is_even,')	work	1	i % 2 == 0	6	6" \
    "branches	sampler_example.c	$(line_of "$main_c" 'SAMPLER_BRANCH(is_multiple_of_3,')	work	2	i % 3 == 0	8	4" \
    "returns	sampler_example.c	$(line_of "$main_c" 'SAMPLER_RETURN(compare_to_ten,')	work	3	compare_to_ten	10	1	1" \
    "scalar-pairs	sampler_example.c	$(line_of "$main_c" 'SAMPLER_SCALAR_PAIR(i_vs_half,')	work	4	i	local	direct	half	local	6	1	5" \
    "coverage	sampler_example.c	$(line_of "$main_c" 'SAMPLER_COVERAGE(loop_body)')	work	9	12" \
    "coverage	sampler_example.c	$(line_of "$main_c" 'SAMPLER_COVERAGE(child_only)')	main	0	0" \
    "bounds	sampler_example.c	$(line_of "$main_c" 'SAMPLER_BOUND(shifted,')	work	12	shifted	local	direct	-5	6" \
    "bounds	sampler_example.c	$(line_of "$main_c" 'SAMPLER_BOUND(byte,')	work	13	byte	local	direct	0	77" \
    "bounds	sampler_example.c	$(line_of "$main_c" 'SAMPLER_BOUND(unused,')	never_called	2	v	local	direct	32767	-32768"; do
    grep -qxF "$example	$U	$line" resolved || fail "no line '$line' in: $(cat resolved)"
  done

  # The same with the .sites file extracted beforehand, and with the stripped executable plus that file.
  "$TOOLS/resolveSamples" exe.sites <samples >resolved.sites 2>sites.err || fail "resolveSamples exe.sites failed"
  no_stderr sites.err "resolveSamples exe.sites"
  sed "s|^$example	|exe.sites	|" resolved >expected.sites
  check_file "resolveSamples exe.sites output" expected.sites resolved.sites
  strip --strip-debug -o stripped "$example" || fail "strip failed"
  "$TOOLS/resolveSamples" stripped exe.sites <samples >resolved.stripped 2>stripped.err ||
    fail "resolveSamples stripped exe.sites failed"
  check_file "resolveSamples stripped exe.sites output" expected.sites resolved.stripped
  printf "resolveSamples: 'stripped': warning: no section '.debug_site_info'\n" >expected.err
  check_file "resolveSamples stripped exe.sites stderr" expected.err stripped.err

  # The timestamps of the same run: one line per time-stamped site, timestamps from 1 up in sampling order.
  "$TOOLS/resolveTimestamps" "$example" <samples >timestamps 2>timestamps.err || fail "resolveTimestamps failed"
  no_stderr timestamps.err resolveTimestamps
  [ "$(wc -l <timestamps)" = "$(grep -c '^[0-9]' <(sed -n '/^<timestamps/,/^<\/timestamps>/p' samples))" ] ||
    fail "resolveTimestamps: wrong line count: $(cat timestamps)"
  never_branch=$(line_of "$main_c" 'SAMPLER_BRANCH(never_branch,')
  grep -qxF "0	$example	$U	branches	first	sampler_example.c	$never_branch	never_called	1	i < 0" timestamps ||
    fail "never_called's branch should have timestamp 0: $(cat timestamps)"
  ;;
plugin_merge)
  # A plugin loaded three times leaves three sections per scheme: merged into one line per site, at the place of
  # the first; --no-merge keeps all three.
  SAMPLER_SPARSITY=1 SAMPLER_FILE=report "$host" "$plugin" 3 10 >host.out || fail "the host failed"
  "$TOOLS/extract-report" samples <report >samples || fail "extract-report failed"
  [ "$(grep -c '^<samples unit="0f1e2d3c4b5a69788796a5b4c3d2e1f0" scheme="branches">' samples)" = 3 ] ||
    fail "expected three plugin branches sections: $(cat samples)"
  "$TOOLS/resolveSamples" "$host" "$plugin" <samples >merged 2>merged.err || fail "resolveSamples failed"
  no_stderr merged.err resolveSamples
  P=0f1e2d3c4b5a69788796a5b4c3d2e1f0
  H=7c6b5a49382716050f1e2d3c4b5a6978
  # Loads call plugin_work(10), (11), (12): 3 entries; i % 2 != 0 false 5+6+6, true 5+5+6; n from 10 to 12.
  printf '%s\t%s\tfunction-entries\tplugin.c\t%s\tplugin_work\t0\t3\n' "$plugin" $P \
    "$(line_of "$plugin_c" 'SAMPLER_FUNCTION_ENTRY(plugin_work_entry)')" >expected
  printf '%s\t%s\tbranches\tplugin.c\t%s\tplugin_work\t1\ti %% 2 != 0\t17\t16\n' "$plugin" $P \
    "$(line_of "$plugin_c" 'SAMPLER_BRANCH(is_odd,')" >>expected
  printf '%s\t%s\tbounds\tplugin.c\t%s\tplugin_work\t2\tn\tlocal\tdirect\t10\t12\n' "$plugin" $P \
    "$(line_of "$plugin_c" 'SAMPLER_BOUND(argument,')" >>expected
  printf '%s\t%s\tcoverage\tplugin_host.c\t%s\tmain\t1\t3\n' "$host" $H \
    "$(line_of "$host_c" 'SAMPLER_COVERAGE(load)')" >>expected
  check_file "merged output" expected merged
  "$TOOLS/resolveSamples" --no-merge "$host" "$plugin" <samples >separate 2>separate.err || fail "--no-merge failed"
  [ "$(wc -l <separate)" = 10 ] || fail "--no-merge: expected 10 lines: $(cat separate)"
  grep -c "	branches	" separate | grep -qx 3 || fail "--no-merge: expected 3 branches lines: $(cat separate)"
  ;;
crash)
  # A crashing run: resolve-backtrace | llvm-symbolizer names the crashing function and its callers with file and
  # line, from a symbol directory laid out as DIR/.build-id/xx/rest.debug.
  # (braces: the shell's own "Segmentation fault" notice goes to /dev/null too)
  { SAMPLER_SPARSITY=1 SAMPLER_FILE=report "$example" crash segv; } 2>/dev/null
  status=$?
  [ "$status" = 139 ] || fail "the crash run exited with $status, not 128+SIGSEGV"
  "$TOOLS/extract-report" main-backtrace <report >bodies || fail "extract-report found no backtrace"
  build_id=$(readelf -n "$example" | sed -n 's/.*Build ID: //p')
  [ -n "$build_id" ] || fail "the example has no build ID"
  mkdir -p "symbols/.build-id/${build_id:0:2}"
  objcopy --only-keep-debug "$example" "symbols/.build-id/${build_id:0:2}/${build_id:2}.debug" || fail "objcopy failed"
  for input in report bodies; do
    "$TOOLS/resolve-backtrace" "$input" >markup 2>markup.err
    status=$?
    [ "$status" = 0 ] || fail "resolve-backtrace $input: exit status $status: $(cat markup.err)"
    no_stderr markup.err "resolve-backtrace $input"
    "$symbolizer" --filter-markup --debug-file-directory=symbols <markup >symbolized 2>/dev/null
    check_segv_frames "$input" symbolized
  done
  ;;
crash_symbol_dir)
  # The crash pipeline after one set-up step (docs/reliability.md, "Symbolizing without a hand-made directory"): the
  # example runs stripped, as a shipped program would; sampler-symbol-dir lays out the symbol directory from its
  # unstripped build and the directory of the examples, and llvm-symbolizer names every frame of the program.
  strip --strip-all -o app "$example" || fail "strip failed"
  { SAMPLER_SPARSITY=1 SAMPLER_FILE=report ./app crash segv; } 2>/dev/null
  status=$?
  [ "$status" = 139 ] || fail "the crash run exited with $status, not 128+SIGSEGV"
  "$TOOLS/sampler-symbol-dir" symbols app "$example" "$(dirname "$example")" >symbol-dir.out 2>symbol-dir.err
  status=$?
  [ "$status" = 0 ] || fail "sampler-symbol-dir: exit status $status: $(cat symbol-dir.err)"
  no_stderr symbol-dir.err sampler-symbol-dir
  build_id=$(readelf -n app | sed -n 's/.*Build ID: //p')
  [ -n "$build_id" ] || fail "the example has no build ID"
  cmp -s "$example" "symbols/.build-id/${build_id:0:2}/${build_id:2}.debug" ||
    fail "the entry of the example's build ID is not its unstripped build"
  "$TOOLS/resolve-backtrace" report >markup 2>markup.err || fail "resolve-backtrace failed: $(cat markup.err)"
  "$symbolizer" --filter-markup --debug-file-directory=symbols <markup >symbolized 2>/dev/null
  check_segv_frames report symbolized
  ;;
overflow)
  # A stack overflow: the recursion is stored as `rep` and the capture limit as `trunc`; resolve-backtrace expands
  # them and llvm-symbolizer names every frame of the recursion.
  { SAMPLER_SPARSITY=1 SAMPLER_FILE=report "$example" crash overflow; } 2>/dev/null
  [ "$?" = 139 ] || fail "the overflow run did not die of SIGSEGV"
  build_id=$(readelf -n "$example" | sed -n 's/.*Build ID: //p')
  mkdir -p "symbols/.build-id/${build_id:0:2}"
  objcopy --only-keep-debug "$example" "symbols/.build-id/${build_id:0:2}/${build_id:2}.debug" || fail "objcopy failed"
  "$TOOLS/resolve-backtrace" report >markup 2>markup.err || fail "resolve-backtrace failed: $(cat markup.err)"
  frames=$(grep -c '^{{{bt:' markup)
  [ "$frames" -ge 100 ] || fail "only $frames frames"
  tail -1 markup | grep -qx '... stack truncated: deeper frames were not recorded ...' || fail "no trunc line"
  "$symbolizer" --filter-markup --debug-file-directory=symbols <markup >symbolized 2>/dev/null
  [ "$(grep -Ec '^ *#[0-9]+ +0x[0-9a-f]+ crash_overflow .*/crash.c:[0-9]+' symbolized)" = "$frames" ] ||
    fail "not every frame is crash_overflow: $(grep -v crash_overflow symbolized | head)"
  ;;
site_lines)
  # Every site of every example names the real source line of its recording macro, so that a report resolved
  # against the site information points at the code that counted: line L of examples/FILE holds the recording
  # macro of the site's scheme with the site's name (SAMPLER_BRANCH(name, ...), SAMPLER_TUPLE(scheme, name, ...)),
  # inside the function the site names. Checked from the sources' site lists (the only place that knows the names),
  # and the binaries' .debug_site_info must say exactly what those lists say, so neither can drift from the code.
  examples_dir=$(dirname "$example")
  : >source.sites
  for source in "$SOURCE_DIR"/examples/*.c; do
    grep -q '^SAMPLER_DEFINE_UNIT(' "$source" || continue
    awk -v source="$source" -v base="$(basename "$source")" '
      # The quoted fields of a site entry, unescaped as the assembler does (\\\" is ", \\\\ is \).
      function fields(text,    out, n, field) {
        out = ""; n = 0
        while (match(text, /"([^"\\]|\\.)*"/)) {
          field = substr(text, RSTART + 1, RLENGTH - 2); text = substr(text, RSTART + RLENGTH)
          gsub(/\\\\\\"/, "\"", field); gsub(/\\\\\\\\/, "\\", field)
          out = out (n++ ? "\t" : "") field
        }
        return out
      }
      function problem(message) { printf "%s: %s\n", source, message > "/dev/stderr"; bad = 1 }
      { line[NR] = $0 }
      /^#define [A-Z_]+\(SCHEME, SITE, BOUND, END\)/ { in_list = 1; next }
      in_list && /^SAMPLER_DEFINE_UNIT\(/ { in_list = 0 }
      in_list && match($0, /SCHEME\([a-z_0-9]+,/) { scheme = substr($0, RSTART + 7, RLENGTH - 8); next }
      in_list && match($0, /(SITE|BOUND)\([a-z_0-9]+,/) {
        kind = substr($0, RSTART, 4) == "SITE" ? "SITE" : "BOUND"
        name = substr($0, RSTART + length(kind) + 1, RLENGTH - length(kind) - 2)
        text = fields($0)
        if (split(text, f, "\t") < 4) { problem("cannot read the site entry: " $0); next }
        sites++; site_name[sites] = name; site_scheme[sites] = scheme; site_text[sites] = text
        site_file[sites] = f[1]; site_line[sites] = f[2]; site_function[sites] = f[3]
        next
      }
      END {
        macro["function_entries"] = "FUNCTION_ENTRY"; macro["branches"] = "BRANCH"
        macro["returns"] = "RETURN(_UNSIGNED|_POINTER)?"; macro["scalar_pairs"] = "SCALAR_PAIR(_UNSIGNED|_POINTER)?"
        macro["float_kinds"] = "FLOAT_KIND"; macro["atoms"] = "ATOM"; macro["g_object_unref"] = "G_OBJECT_UNREF"
        macro["coverage"] = "COVERAGE"; macro["data"] = "DATA"; macro["bounds"] = "BOUND"
        if (sites == 0) problem("a unit without a readable site list")
        for (i = 1; i <= sites; i++) {
          name = site_name[i]; n = site_line[i] + 0
          where = "site " name " (" site_file[i] ":" site_line[i] " " site_function[i] ")"
          if (site_file[i] != base) problem(where ": names the file " site_file[i] ", not " base)
          if (site_scheme[i] in macro)
            pattern = "SAMPLER_" macro[site_scheme[i]] "\\( *" name " *[,)]"
          else
            pattern = "SAMPLER_TUPLE\\( *" site_scheme[i] " *, *" name " *[,)]"
          if (site_line[i] !~ /^[1-9][0-9]*$/ || !(n in line) || line[n] !~ pattern) {
            actual = ""
            for (k = 1; k in line; k++) if (line[k] ~ pattern) { actual = k; break }
            problem(where ": line " site_line[i] " does not record this site" \
                    (actual != "" ? " (its macro is on line " actual ")" : " (no recording macro found)"))
            continue
          }
          # The enclosing function: the nearest definition above, a line at column 0 that ends with "{".
          header = ""
          for (k = n - 1; k > 0; k--) if (line[k] ~ /^[A-Za-z_][^;]*\)[^;]*\{[ \t]*$/) { header = line[k]; break }
          if (header !~ ("(^|[^A-Za-z0-9_])" site_function[i] "\\("))
            problem(where ": line " n " is not in function " site_function[i] " (it follows: " header ")")
          print site_text[i]
        }
        exit bad
      }' "$source" >>source.sites 2>>lines.err || true
  done
  [ -s lines.err ] && fail "site lines that name the wrong place:$(echo; cat lines.err)"
  # What the built examples carry, over every ELF file in their directory (the uninstrumented ones carry none).
  : >binary.sites
  for file in "$examples_dir"/*; do
    [ -f "$file" ] && [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    "$TOOLS/extract-section" .debug_site_info "$file" 2>/dev/null | grep -v '^<' >>binary.sites
  done
  [ -s source.sites ] || fail "no site found in the sources"
  sort -u source.sites >source.sorted
  sort -u binary.sites >binary.sorted
  check_file "the built examples' site lines (vs the sources' site lists)" source.sorted binary.sorted
  ;;
*)
  fail "unknown case"
  ;;
esac

[ "$failures" = 0 ] || exit 1
echo "PASS ($case_name)"
