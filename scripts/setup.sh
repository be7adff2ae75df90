#!/usr/bin/env bash
# Installs, from Debian's archive, whatever sampler needs to build and test that is not already present, and checks
# that each stage of scripts/test.sh has what it needs.
#
# Usage: scripts/setup.sh             install the missing packages (needs root or sudo only when something is missing)
#        scripts/setup.sh --check STAGE...
#                                     check the named stages (plain, asan, tsan, fuzz, real, isolation): every tool,
#                                     header and runtime library a stage uses is present AND belongs to a package this
#                                     script installs;
#                                     each sanitizer stage also compiles and links a probe with its flags. A machine
#                                     prepared by hand cannot pass for a fresh one: a file that came from a package
#                                     not named here fails the check. Exit 1 naming the missing package.
set -euo pipefail

# What each stage uses, as "STAGE PACKAGE PROBE": PROBE is cmd:NAME (a program on PATH), file:PATH (a header or
# library), or link:COMPILER:FLAGS (compile and link a small program). The packages to install are exactly the
# packages named here.
requirements=(
  "plain make cmd:make"
  "plain gcc cmd:gcc"
  "plain g++ cmd:g++"
  "plain cmake cmd:cmake"
  "plain pkgconf cmd:pkg-config"
  "plain git cmd:git"
  "plain libelf-dev file:/usr/include/gelf.h"
  "plain libpugixml-dev file:/usr/include/pugixml.hpp"
  "plain zlib1g-dev file:/usr/include/zlib.h"
  "plain libzstd-dev file:/usr/include/zstd.h"
  "plain zstd cmd:zstd"
  "plain xz-utils cmd:xz"
  "plain libgtest-dev file:/usr/include/gtest/gtest.h"
  "plain elfutils cmd:eu-readelf"
  "plain binutils cmd:objcopy"
  "plain file cmd:file"
  "plain llvm-19 cmd:llvm-symbolizer-19"
  "plain llvm-19 cmd:yaml2obj-19"
  "plain llvm-19 cmd:llvm-gsymutil-19"
  "plain llvm-19 cmd:opt-19"  # the IR tests (tests/instrumentor/ir)
  "plain llvm-19-tools file:/usr/lib/llvm-19/bin/FileCheck"  # the IR tests' checks
  "plain llvm-19-dev file:/usr/include/llvm-19/llvm/DebugInfo/DWARF/DWARFContext.h"
  "plain llvm-19-dev file:/usr/lib/llvm-19/lib/libLLVMDemangle.a"
  "plain libclang-19-dev file:/usr/lib/llvm-19/include/clang/Frontend/FrontendPluginRegistry.h"  # sampler-cc's plugin
  "plain autoconf cmd:autoconf"   # the instrumentor's autotools test: CC=sampler-cc ./configure && make check
  "plain automake cmd:automake"
  "plain libglib2.0-dev file:/usr/include/glib-2.0/glib-object.h"  # the instrumentor's g-object-unref test (a GLib program)
  "plain clang-19 cmd:clang-19"
  "plain rpm cmd:rpmbuild"
  "plain rpm2cpio cmd:rpm2cpio"
  "plain cpio cmd:cpio"
  "plain chromium cmd:chromium"    # the HTML pages of sampler-analyze and the collector's console, in a real browser
  "plain systemd file:/lib/systemd/systemd"   # the documented unit run by a user manager the test starts
  "plain systemd cmd:systemctl"                 # (tests/collector/systemd_service_test.sh)
  "plain util-linux cmd:unshare"                # its mount and cgroup namespaces
  "plain util-linux cmd:findmnt"                # the cgroup2 hierarchy it makes its group in
  "plain mount cmd:mount"                       # tmpfs, cgroup2 and a bind mount in that namespace
  "plain libsqlite3-dev file:/usr/include/sqlite3.h"            # store/: the collector's default database
  "plain libpq-dev file:/usr/include/postgresql/libpq-fe.h"     # store/: the PostgreSQL store
  "plain postgresql-15 file:/usr/lib/postgresql/15/bin/initdb"  # a real server the PostgreSQL tests start
  "plain libmicrohttpd-dev file:/usr/include/microhttpd.h"      # collector/: the HTTP server
  "plain libssl-dev file:/usr/include/openssl/sha.h"            # collector/: API keys held as SHA-256
  "plain libcurl4-openssl-dev file:/usr/include/x86_64-linux-gnu/curl/curl.h"  # sampler-run's uploads
  "plain curl cmd:curl"                                         # the collector's black-box tests
  "plain openssl cmd:openssl"                                   # a certificate for the HTTPS upload test
  "plain dpkg-dev cmd:dpkg-source"  # apt-get source: the isolation benchmark's CI subject (bench/isolation/, bc)
  "plain patch cmd:patch"           # its bug reinstated (bench/isolation/patches/)
  "plain ed cmd:ed"                 # bc's build edits its generated libmath.h with ed (bc/fix-libmath_h)
  "real dpkg-dev cmd:dpkg-source"  # apt-get source, for scripts/real-programs.sh
  "isolation dpkg-dev cmd:dpkg-source"  # bench/isolation/isolate.sh, every subject (SAMPLER_ISOLATION=1)
  "isolation patch cmd:patch"
  "isolation ed cmd:ed"
  "isolation autopoint cmd:autopoint"  # autoreconf of subjects that use gettext
  "isolation libtool cmd:libtoolize"   # jq's autoreconf
  "isolation autoconf cmd:autoconf"    # the subjects built from their autotools sources (bc, jq)
  "isolation automake cmd:automake"
  "real autopoint cmd:autopoint"  # autoreconf of trees whose Makefile.am Debian patched (grep uses gettext)
  "real time file:/usr/bin/time"   # GNU time: the CPU times of bench/instrumentor/programs_bench.sh
  "asan libgcc-12-dev file:/usr/lib/gcc/x86_64-linux-gnu/12/libasan.so"
  "asan libgcc-12-dev file:/usr/lib/gcc/x86_64-linux-gnu/12/libubsan.so"
  "asan g++ link:g++:-fsanitize=address,undefined"
  "tsan libgcc-12-dev file:/usr/lib/gcc/x86_64-linux-gnu/12/libtsan.so"
  "tsan g++ link:g++:-fsanitize=thread"
  "fuzz clang-19 cmd:clang++-19"
  "fuzz libclang-rt-19-dev file:/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a"
  "fuzz libclang-rt-19-dev file:/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan-x86_64.a"
  "fuzz libclang-rt-19-dev file:/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.ubsan_standalone-x86_64.a"
  "fuzz libclang-rt-19-dev link:clang++-19:-fsanitize=fuzzer,address,undefined"
)

# owner FILE: the package that installed FILE (merged /usr: dpkg may know it under /bin or /lib; a program chosen
# through /etc/alternatives belongs to the package of the file the link ends at).
owner() {
  local path found
  for path in "$1" "${1#/usr}" "$(readlink -f "$1")"; do
    found=$(dpkg-query -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ -n "$found" ] && { echo "$found"; return; }
  done
}

# check_probe PACKAGE PROBE: prints why the probe fails, nothing if it passes.
check_probe() {
  local package=$1 probe=$2 path found
  case $probe in
    cmd:*)
      path=$(command -v "${probe#cmd:}") || { echo "${probe#cmd:} not found"; return; }
      found=$(owner "$path")
      [ "$found" = "$package" ] || echo "$path comes from '${found:-no package}', not from $package" ;;
    file:*)
      path=${probe#file:}
      [ -e "$path" ] || { echo "$path not found"; return; }
      found=$(owner "$path")
      [ "$found" = "$package" ] || echo "$path comes from '${found:-no package}', not from $package" ;;
    link:*)
      local rest=${probe#link:} dir
      local compiler=${rest%%:*} flags=${rest#*:}
      dir=$(mktemp -d)
      if [[ $flags == *fuzzer* ]]; then
        echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$dir/probe.cpp"
      else
        echo 'int main() { return 0; }' >"$dir/probe.cpp"
      fi
      # shellcheck disable=SC2086 # flags are a list
      "$compiler" $flags "$dir/probe.cpp" -o "$dir/probe" >"$dir/log" 2>&1 ||
        echo "$compiler $flags cannot link a program: $(grep -m1 -E 'error|cannot' "$dir/log" || head -n 1 "$dir/log")"
      rm -rf "$dir" ;;
  esac
}

if [ "${1:-}" = --check ]; then
  shift
  [ $# -gt 0 ] || { echo "usage: scripts/setup.sh --check STAGE..." >&2; exit 2; }
  status=0
  for stage in "$@"; do
    known=no
    for r in "${requirements[@]}"; do
      read -r s package probe <<<"$r"
      [ "$s" = "$stage" ] || continue
      known=yes
      why=$(check_probe "$package" "$probe")
      if [ -n "$why" ]; then
        echo "setup: stage $stage needs Debian package $package: $why (scripts/setup.sh installs it)" >&2
        status=1
      fi
    done
    [ $known = yes ] || { echo "setup: unknown stage '$stage'" >&2; exit 2; }
  done
  exit $status
fi

mapfile -t packages < <(for r in "${requirements[@]}"; do read -r _ p _ <<<"$r"; echo "$p"; done | sort -u)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
