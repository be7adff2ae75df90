# Sourced by the shared counters' tests (shared_counters_test.sh, counters_file_test.sh): the samples of a report of
# tests/collector/programs/until_killed.c, resolved against its sites, and their checks; a memory cgroup for the OOM
# killer. Needs TOOLS, case_name and fail.

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


# memory_cgroup LIMIT: a memory cgroup of LIMIT bytes for a program that moves itself into it ($procs, its
# cgroup.procs, to give tests/collector/programs/allocate.c; $oom_kills, the file counting its OOM kills) or, where
# none can be made, $wrap, a systemd scope to run the whole command in; else the test is skipped (exit 77).
memory_cgroup() {
  local limit=$1 dir root own_v1 own_v2
  # The memory cgroup the program moves itself into: a child of the test's own cgroup, cgroup v2 where its memory
  # controller is enabled, else v1's memory hierarchy; else the whole command in a systemd scope.
  cgroup= procs=- wrap=() oom_kills=
  own_v2=$(sed -n 's/^0:://p' /proc/self/cgroup)
  own_v1=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
  for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [ -n "$own_v2" ] && [ -f "$root/cgroup.controllers" ] || continue
    dir=$root${own_v2%/}/sampler-oom-$$
    mkdir "$dir" 2>/dev/null || continue
    if [ -f "$dir/memory.max" ] && echo "$limit" >"$dir/memory.max"; then
      echo 0 >"$dir/memory.swap.max" 2>/dev/null || true
      cgroup=$dir oom_kills=$dir/memory.events
      break
    fi
    rmdir "$dir"
  done
  if [ -z "$cgroup" ] && [ -n "$own_v1" ] && [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
    dir=/sys/fs/cgroup/memory${own_v1%/}/sampler-oom-$$
    if mkdir "$dir" 2>/dev/null; then
      if echo "$limit" >"$dir/memory.limit_in_bytes"; then
        echo "$limit" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null || true
        cgroup=$dir oom_kills=$dir/memory.oom_control
      else
        rmdir "$dir"
      fi
    fi
  fi
  if [ -n "$cgroup" ]; then
    procs=$cgroup/cgroup.procs
    trap 'rmdir "$cgroup" 2>/dev/null || true' EXIT
  elif command -v systemd-run >/dev/null && systemd-run --scope --quiet -p MemoryMax=$limit true 2>scope.err; then
    wrap=(systemd-run --scope --quiet -p MemoryMax=$limit -p MemorySwapMax=0)
  else
    echo "SKIP ($case_name): no memory cgroup can be made here (cgroup v2 without its memory controller for" \
      "children, no writable cgroup v1 memory hierarchy, systemd-run --scope: $(head -c 200 scope.err 2>/dev/null))"
    exit 77
  fi
}
