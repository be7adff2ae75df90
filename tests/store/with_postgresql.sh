# Runs COMMAND... with a real PostgreSQL 15 server of its own: initdb and pg_ctl in a scratch directory, as an
# unprivileged user (nobody when run as root: initdb refuses root), listening on a Unix socket only (no port to
# collide with), stopped at the end whatever happens. COMMAND sees SAMPLER_TEST_POSTGRESQL_URL.
# usage: with_postgresql.sh COMMAND...   (environment: SCRATCH)
set -u
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "FAIL: no PostgreSQL server (scripts/setup.sh installs postgresql-15)" >&2; exit 1; }
# Beside SCRATCH, not in it: COMMAND may empty SCRATCH for its own use (tests/tools/blackbox.sh does).
pg=$SCRATCH-pg
rm -rf "$pg" && mkdir -p "$pg" || exit 1
cd "$pg" || exit 1
as_user=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$pg"
  # nobody must reach the directory: every ancestor needs search permission for others.
  d=$pg
  while [ "$d" != / ]; do d=$(dirname "$d"); chmod o+x "$d" 2>/dev/null; done
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env)
fi
"${as_user[@]}" "$bin/initdb" -D "$pg/data" -U sampler -A trust --no-locale -E UTF8 >"$pg/initdb.log" 2>&1 ||
  { cat "$pg/initdb.log" >&2; exit 1; }
stop() { "${as_user[@]}" "$bin/pg_ctl" -D "$pg/data" -m immediate stop >/dev/null 2>&1; }
trap stop EXIT
# -w: pg_ctl returns once the server accepts connections (it waits on the server's pid file, not a sleep).
"${as_user[@]}" "$bin/pg_ctl" -D "$pg/data" -w -l "$pg/server.log" \
  -o "-c listen_addresses= -c unix_socket_directories=$pg -c fsync=on -c max_connections=200" start >/dev/null ||
  { cat "$pg/server.log" >&2; exit 1; }
"$bin/../bin/createdb" -h "$pg" -U sampler reports 2>/dev/null || psql -h "$pg" -U sampler -c 'CREATE DATABASE reports' postgres >/dev/null
export SAMPLER_TEST_POSTGRESQL_REQUIRED=1 SAMPLER_TEST_POSTGRESQL_URL="postgresql://sampler@/reports?host=$pg"
"$@"
