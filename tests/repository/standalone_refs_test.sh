#!/usr/bin/env bash
# The repository stands alone: no tracked file cites a document its readers cannot look up. The project was planned
# in private documents (a specification cut into numbered sections, reference documents kept as numbered seeds, an
# issue tracker, a style guide); a citation such as "SPEC section 3", "seed 004" or "issue 12" means nothing to a reader of the
# repository. Cite the docs/ file and section that states the rule, or the public document by name (LLVM's
# Symbolizer Markup Format, Swift's Compact Backtrace Format, the GSYM and symbfile formats, the sampler manual's
# "File Formats"), or say what the thing is.
#
# Usage: standalone_refs_test.sh SOURCE_DIR
# In a git checkout the files are those `git ls-files` lists (git is then required); without .git (an unpacked
# tarball) every file of the tree but build*/ and out/, as scripts/make-tarball.sh takes them.
# Fails with one line per citation: FILE:LINE: the line.
set -euo pipefail

src=${1:?usage: standalone_refs_test.sh SOURCE_DIR}
self=tests/repository/standalone_refs_test.sh

# What a private citation looks like. This file quotes such citations in its comments, so it is left out of the
# search.
patterns=(
  '\bSPEC(\.md|'"'"'s)?\b'                        # the specification, in any form: SPEC section 6, SPEC 8's, SPEC.md
  '§'                                             # section signs: only the specification was cited that way
  '\b[Ss]eeds? ?0[0-9][0-9]\b'                    # seed 004, seeds 000 and 003, seed004
  '\bseeds/0[0-9]'                                # shared/seeds/003
  '\b[Ii]ssues? #?[0-9]+\b'                       # issue 12, Issue 11, issues 9 and 10, issue #4
  '\bSTYLE(\.md\b| ")'                            # the private style guide: STYLE.md, STYLE "runtime"
)
args=()
for p in "${patterns[@]}"; do args+=(-e "$p"); done

status=0
if [ -e "$src/.git" ]; then
  if ! command -v git >/dev/null; then
    echo "standalone_refs_test: $src is a git checkout but git is not installed: cannot list its tracked files" >&2
    exit 1
  fi
  # git grep searches exactly the tracked files (-I: not binary ones); exit status 1 means no match.
  found=$(git -C "$src" grep -n -I -E "${args[@]}" -- . ":(exclude)$self") || status=$?
  if [ "$status" -gt 1 ]; then
    echo "standalone_refs_test: git grep failed in $src (status $status)" >&2
    exit 1
  fi
else
  found=$(cd "$src" && grep -r -n -I -E "${args[@]}" --exclude-dir='build*' --exclude-dir=out --exclude-dir=.git \
    . | sed 's,^\./,,' | grep -v "^$self:") || status=$?
fi

if [ -n "$found" ]; then
  count=$(printf '%s\n' "$found" | wc -l)
  printf '%s\n' "$found" | sed 's/^\([^:]*\):\([0-9]*\):/\1:\2: private citation: /' >&2
  echo "standalone_refs_test: $count line(s) cite the project's private planning documents (see the comment at" \
    "the top of $self for what to cite instead)" >&2
  exit 1
fi
echo "standalone_refs_test: no private citation in $src"
