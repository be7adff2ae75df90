#!/usr/bin/env bash
# scripts/setup.sh --check: passes on this machine (ctest runs after setup.sh), and cannot be fooled by a machine
# prepared by hand: a program that no package of setup.sh's list installed, found first on PATH, fails the check and
# the message names the package that should have provided it. An unknown stage is a usage error.
case_name=setup_check
source "$SOURCE_DIR/tests/tools/blackbox.sh"
run() { ran="setup.sh $*"; status=0; "$SOURCE_DIR/scripts/setup.sh" "$@" >out 2>err || status=$?; }

run --check plain
expect 0 "" ""

# A zstd of our own, as a machine set up by hand might have: not from Debian's zstd package.
mkdir -p fake-bin
printf '#!/bin/sh\nexit 0\n' >fake-bin/zstd
chmod +x fake-bin/zstd
PATH=$PWD/fake-bin:$PATH run --check plain
expect 1 "" "setup: stage plain needs Debian package zstd: $PWD/fake-bin/zstd comes from 'no package', not from zstd\
 (scripts/setup.sh installs it)\n"

# Programs missing altogether: a PATH with only what the check itself runs.
mkdir -p bare-bin
for tool in bash dpkg-query head cut; do ln -sf "$(command -v $tool)" bare-bin/; done
PATH=$PWD/bare-bin run --check plain
grep -q "^setup: stage plain needs Debian package make: make not found" err || fail "a missing make is not named: $(cat err)"
[ "$status" = 1 ] || fail "a missing program: exit status $status, expected 1"

run --check nonsense
expect 2 "" "setup: unknown stage 'nonsense'\n"
finish
