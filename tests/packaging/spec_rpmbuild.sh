#!/usr/bin/env bash
# Builds the suite itself as RPMs: scripts/make-tarball.sh makes the source tarball of the checkout, then
# `rpmbuild -ba rpm/sampler.spec` in a private %_topdir (the whole project is compiled inside rpmbuild: slow).
# Checks the packages written and what they hold: tools and man pages, the runtime with its SONAME, the devel
# files (headers, CMake package, pkg-config file, RPM macros written for /usr).
# Environment: SOURCE_DIR, SCRATCH, VERSION.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
command -v rpmbuild >/dev/null || die "rpmbuild not found (Debian package rpm; scripts/setup.sh installs it)"

# The spec's Version is the project's.
spec_version=$(sed -n 's/^Version:[[:space:]]*//p' "$SOURCE_DIR/rpm/sampler.spec")
[ "$spec_version" = "$VERSION" ] || die "rpm/sampler.spec Version $spec_version, CMakeLists.txt $VERSION"

top=$SCRATCH/rpmbuild
mkdir -p "$top/SOURCES" "$top/tmp"
tarball=$("$SOURCE_DIR/scripts/make-tarball.sh" "$top/SOURCES") || die "make-tarball.sh"
[ "$tarball" = "$top/SOURCES/sampler-$VERSION.tar.gz" ] || die "make-tarball.sh wrote '$tarball'"
tar -tzf "$tarball" >tarball.list || die "tar -t $tarball"
grep -qx "sampler-$VERSION/rpm/sampler.spec" tarball.list || die "the tarball has no sampler-$VERSION/rpm/sampler.spec"
grep -Eq "^sampler-$VERSION/build[^/]*/" tarball.list && die "the tarball holds a build directory"

# Two jobs at most: the machine is shared with the rest of the test suite.
rpmbuild -ba --nodeps --define "_topdir $top" --define "_tmppath $top/tmp" --define "_smp_build_ncpus 2" \
  "$SOURCE_DIR/rpm/sampler.spec" >rpmbuild.log 2>&1 || {
  tail -40 rpmbuild.log >&2
  die "rpmbuild -ba failed (log: $SCRATCH/rpmbuild.log)"
}

arch=$(rpm --eval '%{_arch}')
libdir=$(rpm --eval '%{_libdir}')
nvr=$VERSION-1
for p in sampler sampler-libs sampler-devel sampler-static; do
  [ -f "$top/RPMS/$arch/$p-$nvr.$arch.rpm" ] || fail "$p-$nvr.$arch.rpm not written"
done
[ -f "$top/SRPMS/sampler-$nvr.src.rpm" ] || fail "sampler-$nvr.src.rpm not written"

# has PACKAGE PATH...: the package lists every PATH (a man page PATH.1 may have been compressed by brp-compress).
has() {
  local package=$1
  shift
  rpm -qlp "$top/RPMS/$arch/$package-$nvr.$arch.rpm" >"$package.list" 2>/dev/null
  for path in "$@"; do
    if [[ $path == *.1 ]]; then
      grep -Eqx -- "$path(\.gz|\.bz2|\.xz|\.zst)?" "$package.list" || fail "$package does not hold $path"
    else
      grep -qx -- "$path" "$package.list" || fail "$package does not hold $path"
    fi
  done
}
for t in extract-section extract-report resolveSamples resolveTimestamps resolve-backtrace find-sampler-info \
  sampler-analyze sampler-symbols; do
  has sampler "/usr/lib/sampler/tools/$t" "/usr/bin/$t" "/usr/share/man/man1/$t.1"
done
has sampler /usr/lib/sampler/sites /usr/lib/sampler/tools/sampler-symbols-convert
has sampler-libs "$libdir/libsampler.so.0" "$libdir/libsampler.so.$VERSION"
has sampler-devel /usr/include/sampler/sampler.h "$libdir/libsampler.so" "$libdir/cmake/Sampler/SamplerConfig.cmake" \
  "$libdir/pkgconfig/sampler.pc" /usr/lib/rpm/macros.d/macros.sampler
has sampler-static "$libdir/libsampler.a"
rpm -qp --provides "$top/RPMS/$arch/sampler-libs-$nvr.$arch.rpm" | grep '^libsampler.so.0()' >/dev/null ||
  fail "sampler-libs does not provide libsampler.so.0"

# The macros file in sampler-devel was written for /usr, not for the build root.
mkdir devel && (cd devel && rpm2cpio "$top/RPMS/$arch/sampler-devel-$nvr.$arch.rpm" | cpio -idm --quiet) ||
  fail "unpacking sampler-devel"
[ "$(rpm --load devel/usr/lib/rpm/macros.d/macros.sampler --eval '%{_sampler_prefix}')" = /usr ] ||
  fail "sampler-devel's macros.sampler does not say /usr"
grep -rq "$top" devel && fail "sampler-devel mentions the build root"

[ "$failures" -eq 0 ] && echo "sampler.spec: all checks passed"
[ "$failures" -eq 0 ]
