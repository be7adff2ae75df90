#!/usr/bin/env bash
# Makes the source tarball that rpm/sampler.spec builds from: sampler-VERSION.tar.gz, one top directory
# sampler-VERSION/, VERSION taken from the top-level CMakeLists.txt's project() line.
#
# Usage: scripts/make-tarball.sh [--head] [OUTPUT_DIR]      (OUTPUT_DIR default: the current directory)
#   default  the checkout as it is on disk: tracked files plus untracked ones that .gitignore does not exclude
#            (what a developer is building and testing), so build directories never get in
#   --head   exactly the committed tree (git archive HEAD), for a release
# Without git (an unpacked tarball), the whole tree except build*/ directories is taken.
# Prints the tarball's path on stdout. The spec is inside, so `rpmbuild -ta TARBALL` works too.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
head=false
if [ "${1:-}" = "--head" ]; then head=true; shift; fi
[ $# -le 1 ] || { echo "usage: $0 [--head] [OUTPUT_DIR]" >&2; exit 2; }
out=$(mkdir -p "${1:-.}" && cd "${1:-.}" && pwd)

version=$(sed -n 's/^project(sampler VERSION \([0-9][0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
[ -n "$version" ] || { echo "$0: no 'project(sampler VERSION x.y.z' line in $top/CMakeLists.txt" >&2; exit 1; }
name=sampler-$version
tarball=$out/$name.tar.gz

# Fixed owner, group and modification time, sorted names: the same tree gives the same archive.
tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --transform "s,^\./,,;s,^,$name/,")
if [ -e "$top/.git" ] && command -v git >/dev/null; then
  if $head; then
    git -C "$top" archive --format=tar.gz --prefix="$name/" -o "$tarball" HEAD
  else
    # Files deleted on disk but still tracked are left out (tar would fail on them).
    git -C "$top" ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do if [ -e "$top/$f" ] || [ -L "$top/$f" ]; then printf '%s\0' "$f"; fi; done |
      LC_ALL=C sort -z |
      tar -C "$top" "${tar_flags[@]}" --null --no-recursion -T - -cf - | gzip -n9 > "$tarball"
  fi
else
  $head && { echo "$0: --head needs a git checkout" >&2; exit 1; }
  tar -C "$top" "${tar_flags[@]}" --exclude='./build*' --exclude='./out' -cf - . | gzip -n9 > "$tarball"
fi
echo "$tarball"
