# Sourced by the shared counters' tests (shared_counters_test.sh, counters_file_test.sh): the samples of a report of
# tests/collector/programs/until_killed.c, resolved against its sites, and their checks. Needs TOOLS and fail.

# resolved REPORT: its samples joined with the program's sites, one line per site (tools' FILE column dropped).
resolved() { "$TOOLS/extract-report" samples <"$1" | "$TOOLS/resolveSamples" until_killed | cut -f2-; }

# at_most SMALLER LARGER: nothing when the resolved files have the same lines and fields, each counter of SMALLER
# no larger than LARGER's; else what differs first.
at_most() {
  awk -F'\t' 'NR == FNR { full[FNR] = $0; next }
    { n = split(full[FNR], f, "\t"); if (n != NF) { print "line " FNR ": fields differ"; failed = 1; exit }
      for (i = 1; i <= NF; i++) if ($i != f[i] && !($i ~ /^[0-9]+$/ && f[i] ~ /^[0-9]+$/ && $i + 0 <= f[i] + 0)) {
        print "line " FNR ": " $0 " against " full[FNR]; failed = 1; exit } }
    END { if (!failed && FNR != length(full)) print FNR " lines, the other has " length(full) }' "$2" "$1"
}

# counters FUNCTION SCHEME FILE: the counters (the last fields: two for branches, else one) of FUNCTION's sites of
# SCHEME in a resolved file (unit, scheme, file, line, function, ...), tab-separated.
counters() {
  awk -F'\t' -v f="$1" -v s="$2" '$2 == s && $5 == f {
    print (s == "branches" ? $(NF - 1) "\t" $NF : $NF) }' "$3"
}

