# shellcheck shell=bash
# Sourced by the collector's benches and tests. write_load_sites SIZE FUNCTIONS SUFFIX FILE: the site information
# of the load client's samples section (load_client.cpp, make_samples(): a report of SIZE bytes has as many branch
# sites as it writes lines), spread over FUNCTIONS functions, each condition's text ending in SUFFIX, written to
# FILE; sets load_sites to their number.
write_load_sites() {
  local size=$1 functions=$2 suffix=$3 file=$4 i
  load_sites=$(python3 -c '
text = "<report id=\"samples\">\n<samples unit=\"0123456789abcdef0123456789abcdef\" scheme=\"branches\">\n"
n = 0
while len(text) + 200 < '"$size"':
    text += "%d\t%d\n" % (n % 97, n % 13)
    n += 1
print(n)')
  {
    echo '<sites unit="0123456789abcdef0123456789abcdef" scheme="branches">'
    for ((i = 0; i < load_sites; i++)); do
      printf 'load.c\t%d\tf%d\t%d\tx%d > %s\n' "$((i + 1))" "$((i % functions))" "$i" "$i" "$suffix"
    done
    echo '</sites>'
  } >"$file"
}
