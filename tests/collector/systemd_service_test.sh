#!/usr/bin/env bash
# The unit file of docs/collection.md, "A daemon under `sampler-run` (systemd)", run by a real systemd: the test
# starts its own service manager (`systemd --user`, in a mount and cgroup namespace of its own, in a cgroup v2 group
# it makes; see start_manager), loads the documented unit verbatim with a drop-in that points ExecStart at a program
# built by sampler-cc (until_killed, which never exits) and at a real collector on 127.0.0.1, starts it with
# `systemctl start`, and then:
#   1. once the collector has stored the third interim report (outcome unknown), the program alone is killed with
#      SIGKILL, as the OOM killer kills it: sampler-run reports the run from its shared counters, with its samples
#      and the outcome signal 9, and dies of SIGKILL itself, which systemd sees (Result=signal) and restarts the
#      service for (Restart=on-failure): a new sampler-run, a new run;
#   2. `systemctl kill --signal=SIGKILL` once the new run's first interim report is stored: the whole cgroup dies,
#      sampler-run with it (as when TimeoutStopSec runs out), so the run stays stored as that interim report, with
#      its samples and no end in its outcome; restarted once more;
#   3. `systemctl stop`: KillMode=mixed sends SIGTERM to sampler-run alone, which forwards it; the program's runtime
#      writes its final report and the run is stored with the outcome signal 15. Nothing of the unit is left running.
# usage: systemd_service_test.sh CASE (only `documented_unit`); environment: TOOLS, DRIVERS, SCRATCH, SOURCE_DIR
set -euo pipefail
case_name=$1
[ "$case_name" = documented_unit ] || { echo "unknown case $case_name" >&2; exit 2; }
source "$SOURCE_DIR/tests/tools/blackbox.sh"
source "$SOURCE_DIR/tests/collector/server.sh"
source "$SOURCE_DIR/tests/collector/counters_check.sh"
printf 'wordfreq\tgood-key\n' >keys.tsv
export XDG_CACHE_HOME=$SCRATCH/cache XDG_CONFIG_HOME=$SCRATCH/config HOME=$SCRATCH
unset SAMPLER_UPLOAD_URL SAMPLER_API_KEY SAMPLER_SPARSITY SAMPLER_SEED SAMPLER_SHARED_FD
"$DRIVERS/sampler-cc" -O1 -g -fsampler-schemes=function-entries,branches \
  "$SOURCE_DIR/tests/collector/programs/until_killed.c" -o until_killed
unit=wordfreqd.service

# The manager: `systemd --user` needs no logind and no bus daemon (systemctl --user speaks to its private socket in
# XDG_RUNTIME_DIR), only /run/systemd/system (its "booted with systemd" check) and a cgroup hierarchy to keep its
# units in. Both come from a mount namespace of its own (a tmpfs on /run, cgroup2 on /sys/fs/cgroup) and a cgroup
# namespace rooted at a group the test makes, so that nothing it does reaches the host's processes: a manager whose
# cgroup is the host's root moves every process of that root into its init.scope. Its units come from ./units alone
# (no host configuration, no generators); services inherit its environment (HOME and XDG_* above, sanitizer options).
start_manager() {
  local hierarchy own
  hierarchy=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
  [ -n "$hierarchy" ] || { fail "no cgroup2 hierarchy is mounted (findmnt -t cgroup2)"; finish; }
  own=$(sed -n 's/^0:://p' /proc/self/cgroup)
  group=$hierarchy${own%/}/sampler-systemd-test.$$
  mkdir "$group" || { fail "cannot make the cgroup $group"; finish; }
  export XDG_RUNTIME_DIR=$SCRATCH/runtime
  mkdir -m 700 "$XDG_RUNTIME_DIR" units generators
  cat >units/manager-ready.service <<EOF
[Unit]
DefaultDependencies=no
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo ready >$SCRATCH/manager.fifo'
EOF
  # What `systemctl --user exit` starts (as /usr/lib/systemd/user/exit.target does, without its shutdown chain).
  printf '[Unit]\nDefaultDependencies=no\nRequires=manager-exit.service\nAfter=manager-exit.service\n' \
    >units/exit.target
  printf '[Unit]\nDefaultDependencies=no\nSuccessAction=exit-force\n[Service]\nType=oneshot\nExecStart=/bin/true\n' \
    >units/manager-exit.service
  rm -f manager.fifo && mkfifo manager.fifo
  : >manager.log  # its log: it writes to /dev/console, which its mount namespace binds to this file
  exec 5<>manager.fifo
  ( echo "$BASHPID" >"$group/cgroup.procs"
    SYSTEMD_UNIT_PATH=$SCRATCH/units SYSTEMD_GENERATOR_PATH=$SCRATCH/generators \
      SYSTEMD_ENVIRONMENT_GENERATOR_PATH=$SCRATCH/generators SYSTEMD_LOG_TARGET=console \
      unshare --mount --cgroup sh -c 'mount -t tmpfs tmpfs /run && mkdir /run/systemd /run/systemd/system &&
        mount -t cgroup2 cgroup2 /sys/fs/cgroup && mount --bind manager.log /dev/console &&
        exec /lib/systemd/systemd --user --unit=manager-ready.service'
    echo "ended $?" >&5 ) 2>manager.err &
  manager=$!
  trap 'stop_manager; kill "$server_pid" 2>/dev/null || true' EXIT
  local line
  read -r line <&5
  [ "$line" = ready ] || { fail "systemd --user did not start ($line): $(head -20 manager.err manager.log)"; finish; }
}

# stop_manager: `systemctl --user exit`, and the manager must end of it, leaving no process in its cgroup; whatever
# is left (after a failure) is killed, and the groups are removed.
stop_manager() {
  trap - EXIT
  if systemctl --user exit 2>>manager.err; then
    read -r line <&5
    [ "$line" = "ended 0" ] || fail "the manager $line after systemctl --user exit: $(tail -20 manager.err manager.log)"
    [ -z "$(find "$group" -name cgroup.procs -exec cat {} +)" ] || fail "processes outlived the manager"
  else
    fail "systemctl --user exit: $(tail -20 manager.err manager.log)"
  fi
  echo 1 >"$group/cgroup.kill"
  wait "$manager" || true
  find "$group" -depth -type d -exec rmdir {} + || fail "the cgroup $group is left"
  exec 5<&-
}

# state PROPERTY: the unit's property.
state() { systemctl --user show --property="$1" --value "$unit"; }

start_server sqlite:reports.db
start_manager
# The unit as docs/collection.md shows it, installed as an administrator would, with a drop-in for this machine.
sed -n '/^# \/etc\/systemd\/system\/wordfreqd.service$/,/^```$/p' "$SOURCE_DIR/docs/collection.md" | sed '1d;$d' \
  >"units/$unit"
grep -q '^ExecStart=/usr/bin/sampler-run .*--interval' "units/$unit" || { fail "no unit in docs/collection.md"; finish; }
mkdir "units/$unit.d"
cat >"units/$unit.d/test.conf" <<EOF
[Unit]
# The test's manager has no boot targets (basic.target, network-online.target) to order the service after.
DefaultDependencies=no
# A service that fails for good (not restarted) says so where the test waits for the program's pid.
OnFailure=service-failed.service
[Service]
ExecStart=
ExecStart=$TOOLS/sampler-run --verbose --app wordfreq --version 1.0 --interval 1 --sparsity 1 --upload $url \
    -- $SCRATCH/until_killed 1000 0 $SCRATCH/progress wait
Environment=SAMPLER_API_KEY=good-key
# sampler-run's --verbose lines, then how the service ended, come through the FIFO said.
StandardError=append:$SCRATCH/said
ExecStopPost=/bin/sh -c 'echo "stopped \$\$SERVICE_RESULT \$\$EXIT_CODE \$\$EXIT_STATUS" >&2'
EOF
printf '[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nExecStart=/bin/sh -c "echo failed >%s"\n' \
  "$SCRATCH/progress" >units/service-failed.service
systemctl --user daemon-reload
rm -f progress said && mkfifo progress said
exec 8<>progress 6<>said

# started: reads the new program's pid and its "done" (every counter final) from the FIFO progress.
started() {
  read -r pid <&8
  [[ $pid =~ ^[0-9]+$ ]] || { fail "the program did not start: $pid"; finish; }
  local reached
  read -r reached <&8
  [ "$reached" = "done" ] || fail "the program said '$reached'"
  [ "$(state MainPID)" != "$pid" ] || fail "the program is the main process, not sampler-run"
}
# heard PATTERN: reads the service's lines until one matches PATTERN; a line saying the service stopped (when
# PATTERN is not that) fails.
heard() {
  local line
  while read -r line <&6; do
    # shellcheck disable=SC2053
    if [[ $line == $1 ]]; then return 0; fi
    case $line in stopped*) fail "waiting for '$1': $line"; finish ;; esac
  done
}
# stored_runs: the stored runs' reports (exported), one path a line.
stored_runs() {
  rm -rf exported
  "$TOOLS/sampler-collector" export --database sqlite:reports.db --app wordfreq exported >/dev/null ||
    fail "export failed"
  find exported -name '*.report' | sort
}
# run_ids: the stored runs' ids; the_run ID: the stored report of run ID.
run_ids() {
  local reports
  mapfile -t reports < <(stored_runs)
  sed -n 's/^run-id\t//p' "${reports[@]}"
}
the_run() {
  local reports
  mapfile -t reports < <(stored_runs)
  grep -l "^run-id	$1\$" "${reports[@]}"
}
# samples REPORT LABEL: the whole run's samples (the program reached "done" before the first interval).
samples() {
  resolved "$1" >"$2.txt" || fail "$2: resolveSamples: $(cat "$2.txt")"
  [ "$(counters is_third function-entries "$2.txt")" = 1000 ] || fail "$2: is_third entries: $(cat "$2.txt")"
  [ "$(counters is_third branches "$2.txt")" = "666	334" ] || fail "$2: is_third branches: $(cat "$2.txt")"
}

systemctl --user start "$unit"
started
heard "sampler-run: interim report 3 of run * sent to *"
stored=$(stored_runs)
[ "$(echo "$stored" | wc -w)" = 1 ] || { fail "stored runs: '$stored'"; finish; }
first=$(run_ids)
if grep -q -E '^(signal|exit-status)	' "$stored"; then fail "interim outcome with an end: $(cat "$stored")"; fi

# 1. The program alone killed outright (the OOM killer): its run ends with signal 9, and systemd restarts it.
kill -KILL "$pid"
heard "stopped signal killed KILL"
report=$(the_run "$first")
grep -q '^signal	9$' "$report" || fail "killed program: outcome: $(cat "$report")"
if grep -q '^<report id="interim">$' "$report"; then fail "the killed run is still interim: $(cat "$report")"; fi
samples "$report" killed
started  # Restart=on-failure, after RestartSec

# 2. The whole service killed (sampler-run too): the run stays what its last interim report said.
heard "sampler-run: interim report 1 of run * sent to *"
second=$(run_ids | grep -v -x "$first")
[ "$(echo "$second" | wc -w)" = 1 ] || { fail "runs after the restart: $(run_ids)"; finish; }
systemctl --user kill --signal=SIGKILL "$unit"
heard "stopped signal killed KILL"
report=$(the_run "$second")
if grep -q -E '^(signal|exit-status)	' "$report"; then fail "whole service killed: outcome: $(cat "$report")"; fi
grep -q '^<report id="interim">$' "$report" || fail "whole service killed: not an interim report: $(cat "$report")"
samples "$report" interim
started

# 3. systemctl stop: SIGTERM to sampler-run alone, forwarded to the program, whose final report ends the run.
systemctl --user stop "$unit"
heard "stopped success killed TERM"
[ "$(state ActiveState) $(state Result)" = "inactive success" ] ||
  fail "after systemctl stop: $(state ActiveState) $(state Result)"
third=$(run_ids | grep -v -x -e "$first" -e "$second")
[ "$(echo "$third" | wc -w)" = 1 ] || { fail "runs after systemctl stop: $(run_ids)"; finish; }
report=$(the_run "$third")
grep -q '^signal	15$' "$report" || fail "stopped program: outcome: $(cat "$report")"
samples "$report" stopped
exec 6<&- 8<&-
stop_manager
stop_server
finish
