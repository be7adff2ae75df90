#!/usr/bin/env bash
# Installs the built suite into a scratch prefix with `cmake --install` and checks the layout of docs/packaging.md:
# headers, libsampler.so (SONAME, version) and .a, the tools in lib/sampler/tools with bin/ symlinks, a man page
# per tool, lib/cmake/Sampler, lib/pkgconfig/sampler.pc and lib/rpm/macros.d/macros.sampler, the last two
# written for the prefix installed into (and never containing DESTDIR).
# Environment: BUILD_DIR, PREFIX (installed by the packaging_install fixture), SCRATCH, VERSION (the project's),
# LIBDIR (CMAKE_INSTALL_LIBDIR).
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" || exit 1
[ -d "$PREFIX" ] || { echo "FAIL: $PREFIX not installed (the packaging_install test does it)" >&2; exit 1; }

tools=(extract-section extract-report resolveSamples resolveTimestamps resolve-backtrace find-sampler-info
  sampler-analyze sampler-symbols sampler-symbol-dir
  sampler-collector sampler-run)
for t in "${tools[@]}"; do
  [ -x "$PREFIX/lib/sampler/tools/$t" ] && [ ! -L "$PREFIX/lib/sampler/tools/$t" ] ||
    fail "lib/sampler/tools/$t: not an installed executable"
  [ "$(readlink "$PREFIX/bin/$t")" = "../lib/sampler/tools/$t" ] || fail "bin/$t: not a symlink to ../lib/sampler/tools/$t"
  [ -s "$PREFIX/share/man/man1/$t.1" ] || fail "share/man/man1/$t.1 missing"
  "$PREFIX/bin/$t" --version >"$SCRATCH/version.out" 2>&1 || fail "bin/$t --version failed"
  [ "$(cat "$SCRATCH/version.out")" = "$t (sampler) $VERSION" ] || fail "bin/$t --version: $(cat "$SCRATCH/version.out")"
done

# sampler-symbols' helper for gsym and push (docs/decisions.md): beside it, internal, so no bin/ link or man page;
# run through the bin/ link, sampler-symbols finds it.
[ -x "$PREFIX/lib/sampler/tools/sampler-symbols-convert" ] || fail "lib/sampler/tools/sampler-symbols-convert missing"
[ -e "$PREFIX/bin/sampler-symbols-convert" ] && fail "bin/sampler-symbols-convert: an internal helper got a link"
mkdir -p "$SCRATCH/syms"
"$PREFIX/bin/sampler-symbols" gsym -o "$SCRATCH/syms" "$PREFIX/lib/sampler/tools/sampler-symbol-dir" \
  >"$SCRATCH/gsym.out" 2>&1 || fail "bin/sampler-symbols gsym: $(cat "$SCRATCH/gsym.out")"
ls "$SCRATCH"/syms/*.gsym >/dev/null 2>&1 || fail "bin/sampler-symbols gsym wrote no GSYM file"

[ -f "$PREFIX/lib/systemd/system/sampler-collector.service" ] || fail "lib/systemd/system/sampler-collector.service missing"

for h in sampler.h abi.h record.h unit.h; do
  [ -f "$PREFIX/include/sampler/$h" ] || fail "include/sampler/$h missing"
done

lib=$PREFIX/$LIBDIR
[ -f "$lib/libsampler.a" ] || fail "$LIBDIR/libsampler.a missing"
[ -L "$lib/libsampler.so" ] || fail "$LIBDIR/libsampler.so is not the development symlink"
soname=$(readelf -d "$lib/libsampler.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libsampler.so.0" ] || fail "SONAME is '$soname', expected libsampler.so.0"
[ -L "$lib/$soname" ] || fail "$LIBDIR/$soname: not a symlink to the versioned library"
[ "$(readlink -f "$lib/libsampler.so")" = "$(readlink -f "$lib/libsampler.so.$VERSION")" ] ||
  fail "$LIBDIR/libsampler.so does not lead to libsampler.so.$VERSION"

[ -f "$lib/cmake/Sampler/SamplerConfig.cmake" ] || fail "$LIBDIR/cmake/Sampler/SamplerConfig.cmake missing"
[ -f "$lib/cmake/Sampler/SamplerConfigVersion.cmake" ] || fail "$LIBDIR/cmake/Sampler/SamplerConfigVersion.cmake missing"
grep -q 'Sampler::runtime' "$lib/cmake/Sampler/"SamplerTargets*.cmake || fail "no Sampler::runtime target exported"

pc=$lib/pkgconfig/sampler.pc
[ -f "$pc" ] || fail "$LIBDIR/pkgconfig/sampler.pc missing"
[ "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --modversion sampler)" = "$VERSION" ] || fail "pkg-config --modversion"
[ "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --variable=prefix sampler)" = "$PREFIX" ] || fail "sampler.pc prefix"

macros=$PREFIX/lib/rpm/macros.d/macros.sampler
[ -f "$macros" ] || fail "lib/rpm/macros.d/macros.sampler missing"
[ "$(rpm --load "$macros" --eval '%{_sampler_prefix}')" = "$PREFIX" ] || fail "macros.sampler: %_sampler_prefix"
[ -x "$(rpm --load "$macros" --eval '%{__find_sampler_info}')" ] || fail "macros.sampler: %__find_sampler_info"
[ "$(rpm --load "$macros" --eval '%{sampler_cflags}')" = "-I$PREFIX/include" ] || fail "macros.sampler: %sampler_cflags"

# A staged install for /usr (what rpmbuild does): the files name /usr, never the staging directory.
DESTDIR=$SCRATCH/stage cmake --install "$BUILD_DIR" --prefix /usr >"$SCRATCH/stage.log" 2>&1 || fail "DESTDIR install"
stage_macros=$SCRATCH/stage/usr/lib/rpm/macros.d/macros.sampler
[ "$(rpm --load "$stage_macros" --eval '%{_sampler_prefix}')" = "/usr" ] || fail "staged macros.sampler: prefix"
[ "$(rpm --load "$stage_macros" --eval 'x%{sampler_cflags}x')" = "xx" ] || fail "staged: -I/usr/include given"
if grep -rq "$SCRATCH/stage" "$stage_macros" "$SCRATCH/stage/usr/$LIBDIR/pkgconfig/sampler.pc"; then
  fail "staged files mention DESTDIR"
fi

[ "$failures" -eq 0 ] && echo "install layout: all checks passed"
[ "$failures" -eq 0 ]
