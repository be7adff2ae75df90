# shellcheck shell=bash disable=SC2034 # sourced: the driver reads the SUBJECT_ variables
# jq-index: a subject of the isolation benchmark whose bug ends in SIGKILL (an unbounded allocation that the memory
# watchdog kills, as the OOM killer would); sourced by bench/isolation/isolate.sh; docs/isolation.md.
# The program, its build and its workload are jq's (subjects/jq.sh), with three more stages that search strings
# for the empty string.
# shellcheck source=jq.sh
. "$ISOLATION_DIR/subjects/jq.sh"
SUBJECT_BUG="jq 1.6 (Debian 1.6-2.1+deb12u2, which still has the bug) against the fix of jq bug report https://github.com/jqlang/jq/issues/1815 \
('jq error: cannot allocate memory': '\"\" | index(\"\")'), upstream commit 2660b04a of 2019-02-08 (Nicolas \
Williams, 'Fix infinite loop in index(\"\") (fix #1815)'), released in jq 1.7. jv_string_indexes, behind \
indices/1, index/1, rindex/1 and _strindices on strings, searches the input with memmem and steps past each match \
by the needle's length: with an empty needle memmem finds it where the search starts, the step is 0, and the loop \
appends the same index to the result array until memory runs out. The fix returns the empty array when the needle \
is empty. The fixed reference is Debian's source with that commit applied; the buggy build is Debian's source as \
it is. Killed by the memory watchdog (SIGKILL), as the OOM killer would in the field."
SUBJECT_BUG_FILE=src/jv.c
SUBJECT_BUG_LINES=715-716  # in the buggy tree: the fix's two lines go before 716 ('p = jstr;')
SUBJECT_BUG_FUNCTION=jv_string_indexes

jq_index_patch=$ISOLATION_DIR/patches/jq-index.patch  # the upstream fix reversed
subject_apply_fix() {
  patch -s -R -d "$1" -p1 <"$jq_index_patch"
}
subject_reinstate_bug() {
  patch -s -d "$1" -p1 <"$jq_index_patch"
}

# jq.sh's stages, and three that search for the empty string: in the input made a string (always the bug), in every
# string of the document (the bug if it has one), and in the input as it comes (the bug only when it is a string; an
# array or an object is indexed instead, harmlessly).
jq_more_stages=('tostring | index("")' '[.. | strings | rindex("")]' 'indices("")?')
