#!/usr/bin/env bash
# The RPM integration test: builds tests/packaging/rpm/hello-sampler.spec (an instrumented program and shared
# library, and one uninstrumented program) with rpmbuild and the installed rpm/macros.sampler, in a private
# %_topdir, then checks what the sampler manual ("Embedding and Extraction") promises:
#   1. no binary of the main package carries .debug_site_info;
#   2. the -samplerinfo package holds exactly one .sites file per instrumented ELF file, equal to the site
#      information of the unstripped build with the build directory rewritten in the file field only;
#   3. a report written by the packaged (stripped) program resolves with resolveSamples against the extracted
#      .sites directory exactly as against the unstripped program (apart from the FILE column and the rewritten
#      file names);
#   4. with rpm's stripping turned off (__strip is /bin/true), the macros' final check still removes the section
#      from the main package's binaries, and says so in the build log.
# Environment: PREFIX (installed by the packaging_install_layout fixture), SCRATCH, SOURCE_DIR.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1
command -v rpmbuild >/dev/null || die "rpmbuild not found (Debian package rpm; scripts/setup.sh installs it)"
command -v cpio >/dev/null || die "cpio not found (scripts/setup.sh installs it)"

top=$SCRATCH/rpmbuild
mkdir -p "$top/SOURCES" "$top/tmp"
tar -C "$SOURCE_DIR/tests/packaging/rpm" -czf "$top/SOURCES/hello-sampler-1.0.tar.gz" hello-sampler-1.0 || die "tarball"

# --load: the suite is installed in a private prefix, not /usr, so rpm does not read its macros by itself.
# --nodeps: BuildRequires name rpm packages, which a Debian machine's rpm database does not have.
# --noclean: keep the build directory, whose binaries are the unstripped originals compared below.
rpmbuild -bb --nodeps --noclean \
  --define "_topdir $top" --define "_tmppath $top/tmp" \
  --load "$PREFIX/lib/rpm/macros.d/macros.sampler" \
  "$SOURCE_DIR/tests/packaging/rpm/hello-sampler.spec" >rpmbuild.log 2>&1 || {
  tail -50 rpmbuild.log >&2
  die "rpmbuild failed (log: $SCRATCH/rpmbuild.log)"
}
arch=$(rpm --eval '%{_arch}')
libdir=$(rpm --eval '%{_libdir}')
main_rpm=$top/RPMS/$arch/hello-sampler-1.0-1.$arch.rpm
info_rpm=$top/RPMS/$arch/hello-sampler-samplerinfo-1.0-1.$arch.rpm
[ -f "$main_rpm" ] && [ -f "$info_rpm" ] || die "expected packages not written: $(ls -R "$top/RPMS")"
builddir=$top/BUILD/hello-sampler-1.0
dest=/usr/src/debug/hello-sampler-1.0-1.$arch

mkdir main info
(cd main && rpm2cpio "$main_rpm" | cpio -idm --quiet) || die "unpacking $main_rpm"
(cd info && rpm2cpio "$info_rpm" | cpio -idm --quiet) || die "unpacking $info_rpm"

# ---- 1. The main package: no site information left -------------------------------------------------------
elves=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep $'^\x7fELF' >/dev/null || continue
  elves=$((elves + 1))
  readelf -SW "$f" | grep -E '\.z?debug_site_info' >/dev/null && fail "main package: ${f#main} still carries .debug_site_info"
done < <(find main -type f -print0)
[ "$elves" -eq 3 ] || fail "main package: expected 3 ELF files, found $elves"
grep -q '/usr/lib/sampler/sites' < <(rpm -qlp "$main_rpm") && fail "main package holds site information files"

# ---- 2. The samplerinfo package: one .sites per instrumented ELF, as built, names rewritten ---------------
(cd info && find . -type f | sort) >info.list
expected_list="./usr/lib/sampler/sites/usr/bin/hello-sampler.sites
./usr/lib/sampler/sites${libdir}/libgreet.so.1.sites"
[ "$(cat info.list)" = "$expected_list" ] || fail "samplerinfo files:
$(cat info.list)
expected:
$expected_list"
[ -z "$(rpm -qp --requires "$info_rpm" | grep -v '^rpmlib(')" ] || fail "samplerinfo package has dependencies"

# The rewrite changes the file field of site lines and nothing else: undo it on the unstripped build's section.
rewrite() { awk -F'\t' -v OFS='\t' -v from="$builddir" -v to="$dest" \
  '!/^</ && index($1, from "/") == 1 { $1 = to substr($1, length(from) + 1) } { print }'; }
for pair in "hello-sampler:usr/bin/hello-sampler.sites" "libgreet.so.1:${libdir#/}/libgreet.so.1.sites"; do
  built=$builddir/${pair%%:*}
  sites=info/usr/lib/sampler/sites/${pair#*:}
  "$PREFIX/bin/extract-section" --require .debug_site_info "$built" >built.sites 2>extract.err ||
    { fail "extract-section of the unstripped $built: $(cat extract.err)"; continue; }
  rewrite <built.sites >built-rewritten.sites
  cmp -s built-rewritten.sites "$sites" || fail "$sites is not the build's site information, rewritten:
$(diff built-rewritten.sites "$sites" | head)"
  grep -q "^$dest/" "$sites" || fail "$sites: no file name rewritten to $dest/"
  grep -q "$top" "$sites" && fail "$sites: still names the build directory"
done

# ---- 3. A report from the packaged, stripped program resolves as against the unstripped one ----------------
# The packaged program finds libgreet.so.1 in the unpacked package, and libsampler through the run path
# %sampler_ldflags gave it (the suite's private prefix).
LD_LIBRARY_PATH=$SCRATCH/main$libdir SAMPLER_SPARSITY=1 SAMPLER_SEED=7 SAMPLER_FILE=$SCRATCH/report.txt \
  main/usr/bin/hello-sampler packager >run.out 2>run.err || fail "the packaged program failed: $(cat run.err)"
[ "$(cat run.out)" = "$(printf 'hello, packager\n%.0s' 1 2 3)" ] || fail "the packaged program printed: $(cat run.out)"
[ -s report.txt ] || die "the packaged program wrote no report"
"$PREFIX/bin/extract-report" samples <report.txt >samples.txt || fail "extract-report samples"

"$PREFIX/bin/resolveSamples" info/usr/lib/sampler/sites <samples.txt >from-info.txt 2>from-info.err ||
  fail "resolveSamples against the samplerinfo directory: $(cat from-info.err)"
"$PREFIX/bin/resolveSamples" "$builddir/hello-sampler" "$builddir/libgreet.so.1" <samples.txt >from-build.txt \
  2>from-build.err || fail "resolveSamples against the unstripped build: $(cat from-build.err)"
# Without the FILE column, with the build's file names rewritten as the package's are: identical.
cut -f2- from-info.txt >info.cut
cut -f2- from-build.txt | awk -F'\t' -v OFS='\t' -v from="$builddir" -v to="$dest" \
  'index($3, from "/") == 1 { $3 = to substr($3, length(from) + 1) } { print }' >build.cut
[ -s info.cut ] || fail "nothing resolved"
[ "$(wc -l <info.cut)" -eq 5 ] || fail "expected 5 sites resolved, got $(wc -l <info.cut)"
cmp -s info.cut build.cut || fail "resolved samples differ:
$(diff build.cut info.cut)"
# The FILE column names the .sites file of the package each site came from.
cut -f1 from-info.txt | sort -u >files.txt
[ "$(cat files.txt)" = "info/usr/lib/sampler/sites/usr/bin/hello-sampler.sites
info/usr/lib/sampler/sites${libdir}/libgreet.so.1.sites" ] || fail "FILE column: $(cat files.txt)"
# And the counts are those of the run: main's branch argc > 1 taken once, i < 3 true 3 times, false twice.
grep -q $'\tbranches\t'"$dest"$'/hello.c\t30\tmain\t1\targc > 1\t0\t1$' info.cut || fail "argc > 1 counts: $(cat info.cut)"
grep -q $'\tbranches\t'"$dest"$'/hello.c\t33\tmain\t2\ti < 3\t2\t3$' info.cut || fail "i < 3 counts: $(cat info.cut)"

# The stripped program alone cannot resolve anything: the information is only in the samplerinfo package.
"$PREFIX/bin/resolveSamples" main/usr/bin/hello-sampler <samples.txt >/dev/null 2>stripped.err &&
  fail "resolveSamples against the stripped program succeeded"

# ---- 4. Stripping turned off: the final check of the macros removes the section itself ----------------------
top2=$SCRATCH/rpmbuild-nostrip
mkdir -p "$top2/SOURCES" "$top2/tmp" && cp "$top/SOURCES/hello-sampler-1.0.tar.gz" "$top2/SOURCES/"
rpmbuild -bb --nodeps --define "_topdir $top2" --define "_tmppath $top2/tmp" --define "__strip /bin/true" \
  --load "$PREFIX/lib/rpm/macros.d/macros.sampler" \
  "$SOURCE_DIR/tests/packaging/rpm/hello-sampler.spec" >rpmbuild-nostrip.log 2>&1 || {
  tail -50 rpmbuild-nostrip.log >&2
  die "rpmbuild with stripping off failed (log: $SCRATCH/rpmbuild-nostrip.log)"
}
mkdir main-nostrip && (cd main-nostrip && rpm2cpio "$top2/RPMS/$arch/hello-sampler-1.0-1.$arch.rpm" | cpio -idm --quiet) ||
  die "unpacking the package built with stripping off"
for f in main-nostrip/usr/bin/hello-sampler main-nostrip${libdir}/libgreet.so.1; do
  readelf -SW "$f" | grep -E '\.z?debug_site_info' >/dev/null && fail "stripping off: $f still carries .debug_site_info"
  readelf -SW "$f" | grep '\.debug_info' >/dev/null || fail "stripping off: $f lost its DWARF (only the site section should go)"
done
for f in /usr/bin/hello-sampler "$libdir/libgreet.so.1"; do
  grep -qx "sampler: stripping left .debug_site_info in $f; removing it" rpmbuild-nostrip.log ||
    fail "stripping off: the build log does not say the section was removed from $f"
done

[ "$failures" -eq 0 ] && echo "rpm samplerinfo: all checks passed"
[ "$failures" -eq 0 ]
