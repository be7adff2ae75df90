#!/usr/bin/env bash
# Checks that the sites of an instrumented binary name the file, line and function its DWARF gives the code
# that samples them. Every site's slow path is a call of a sampler_take_* function carrying the site's debug
# location, so: every such call in the binary is symbolized (llvm-symbolizer, every frame of its inline chain),
# and each site of .debug_site_info is looked up among those locations:
#   agree       a call at the site's file (base name), line and function;
#   disagree    calls at the site's file and line, none of them in its function: the site names code that is
#               not where it says;
#   unverified  no call at the site's file and line: the optimiser removed the code (an unused static function,
#               dead code) or merged the calls of several sites and their locations with them.
# Usage: check-site-dwarf.sh [--extract-section PATH] [--symbolizer PATH] BINARY [SITES-FILE]
#   SITES-FILE: the site information to check (default: BINARY's own .debug_site_info).
# Prints "agree N disagree N unverified N" and, for up to 10 disagreeing sites, the site and what DWARF says.
# Exit status 0 when no site disagrees, 1 otherwise, 2 on a usage error.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
extract=$top/build/tools/extract-section
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || echo /usr/lib/llvm-19/bin/llvm-symbolizer)
while [ $# -gt 0 ]; do
  case $1 in
  --extract-section) extract=$2; shift 2 ;;
  --symbolizer) symbolizer=$2; shift 2 ;;
  -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: check-site-dwarf.sh [options] BINARY [SITES-FILE]" >&2; exit 2; }
binary=$1
[ -r "$binary" ] || { echo "check-site-dwarf.sh: cannot read $binary" >&2; exit 2; }
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
if [ $# -eq 2 ]; then
  cp "$2" "$scratch/sites" || exit 2
else
  "$extract" .debug_site_info "$binary" >"$scratch/sites" || exit 2
fi

# The addresses of the slow-path calls, then their locations: "function<TAB>file<TAB>line" per frame.
objdump -d --no-show-raw-insn "$binary" |
  awk '/call.*<sampler_take_[a-z_]*(@plt)?>/ { sub(":", "", $1); print "0x" $1 }' >"$scratch/calls"
# llvm-symbolizer prints per address one "function" line and one "path:line:column" line per frame, then a
# blank line. Sites name functions as DW_AT_name does (unqualified: `larger<int>`, `operator()`); with
# -gline-tables-only the DWARF of a C++ function may hold only its linkage name, which llvm-symbolizer
# demangles (`shapes::larger<int>(int, int)`): its parameters and qualifiers are taken off.
"$symbolizer" --obj="$binary" --inlining --functions=linkage <"$scratch/calls" |
  awk 'function unqualified(name,    i, c, depth, cut, start) {
         if (substr(name, length(name)) == ")" || name ~ /\) (const|volatile|&|&&)+$/) {
           depth = 0
           for (i = length(name); i > 0; i--) {
             c = substr(name, i, 1)
             if (c == ")") depth++
             else if (c == "(") { depth--; if (depth == 0) { cut = i; break } }
           }
           # (not the parentheses of operator() itself)
           if (cut > 1 && substr(name, 1, cut - 1) !~ /operator$/) name = substr(name, 1, cut - 1)
         }
         depth = 0; start = 1
         for (i = 1; i < length(name); i++) {
           c = substr(name, i, 1)
           if (c == "<" || c == "(") depth++
           else if ((c == ">" || c == ")") && depth > 0) depth--
           else if (depth == 0 && substr(name, i, 2) == "::") start = i + 2
         }
         return substr(name, start)
       }
       $0 == "" { have = 0; next }
       !have { fn = $0; have = 1; next }
       { have = 0; n = split($0, parts, ":"); path = parts[1]; for (i = 2; i < n - 1; i++) path = path ":" parts[i]
         m = split(path, dirs, "/"); if (fn != "??") print unqualified(fn) "\t" dirs[m] "\t" parts[n - 1] }' |
  sort -u >"$scratch/locations"

# Compared by the file's base name (sites name it relative to the compile directory, DWARF in full).
awk -F'\t' -v report="$scratch/report" '
  FNR == NR { full[$1 "\t" $2 "\t" $3] = 1; at_line[$2 "\t" $3] = 1; at_line_of[$2 "\t" $3] = $1; next }
  /^<\/?sites/ { next }
  {
    m = split($1, dirs, "/"); file = dirs[m]
    if ((($3 "\t" file "\t" $2) in full)) agree++
    else if ((file "\t" $2) in at_line) {
      disagree++
      if (disagree <= 10) print "disagree: " $0 "\t(DWARF: " at_line_of[file "\t" $2] ")" > report
    } else unverified++
  }
  END {
    printf "agree %d disagree %d unverified %d\n", agree, disagree, unverified
    if (agree == 0) print "no site agrees: is the symbolizer working?" > report
  }
' "$scratch/locations" "$scratch/sites"
[ -s "$scratch/report" ] && cat "$scratch/report" && exit 1
exit 0
