# Sourced by the collector's black-box scripts: start a real sampler-collector on 127.0.0.1 with an ephemeral
# port, wait for its "listening on" line (read from a FIFO: no sleeping, no polling), stop it at the end.
# Needs TOOLS; sets server_pid, address, url. The server's stderr (its log) is ./server.err.
start_server() {  # start_server DATABASE-URL [EXTRA OPTIONS...]
  local database=$1
  shift
  rm -f server.fifo && mkfifo server.fifo
  "$TOOLS/sampler-collector" serve --listen "${LISTEN:-127.0.0.1:0}" --database "$database" --keys keys.tsv "$@" \
    >server.fifo 2>>server.err &
  server_pid=$!
  local line=""
  exec 7<server.fifo
  read -r line <&7 || { echo "FAIL: the collector did not start: $(cat server.err)" >&2; exit 1; }
  address=${line##* }
  url=http://$address
}

stop_server() {  # stop_server: SIGTERM, and the collector must exit 0
  kill -TERM "$server_pid" && wait "$server_pid"
  local status=$?
  exec 7<&-
  [ "$status" = 0 ] || fail "the collector exited $status after SIGTERM"
}

# upload KEY FILE [curl options...]: POSTs FILE; the answer in ./answer, the HTTP status in $http.
upload() {
  local key=$1 file=$2
  shift 2
  http=$(curl -s -o answer -w '%{http_code}' -H "Authorization: APIKey $key" -H 'Content-Type: text/plain' \
    --data-binary @"$file" "$@" "$url/api/reports")
}

# report RUNID [EXIT-STATUS]: a minimal report with an outcome subreport, on stdout.
report() {
  printf '<report id="samples">\n</report>\n<report id="outcome">\nrun-id\t%s\napp\twordfreq\nexit-status\t%s\n</report>\n' \
    "$1" "${2:-0}"
}
