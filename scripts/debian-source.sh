# Sourced, not run: the one way the scripts that build real Debian programs from source (scripts/real-programs.sh,
# bench/instrumentor/programs_bench.sh) get a Debian source package. Needs root or sudo the first time.

# ensure_deb_src: adds a deb-src entry for the running Debian release if there is none (apt-get source needs one;
# Debian's default images have none).
ensure_deb_src() {
  grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  local sudo="" codename
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  echo "debian-source: adding a deb-src entry for $codename" >&2
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\n%s\n' "$codename" \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
    $sudo tee /etc/apt/sources.list.d/sampler-deb-src.sources >/dev/null &&
    $sudo apt-get update -qq
}

# fetch_debian_source PACKAGE DIR: unpacks PACKAGE's source into DIR with apt-get source, unless DIR already holds
# it, and prints the source tree's path. On failure, apt-get's last lines go to stderr and the status is 1.
fetch_debian_source() {
  local package=$1 dir=$2 tree
  tree=$(find "$dir" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -1)
  if [ -z "$tree" ]; then
    mkdir -p "$dir" || return 1
    if ! (cd "$dir" && apt-get source -qq "$package" >fetch.log 2>&1); then
      echo "apt-get source $package failed: $(tail -3 "$dir/fetch.log")" >&2
      return 1
    fi
    tree=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -1)
  fi
  [ -n "$tree" ] && echo "$tree"
}
