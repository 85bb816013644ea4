#!/bin/sh
# catalogue.sh: the catalogue of NCCL's WARN messages, read from NCCL source trees.
#
#   scripts/nccl-catalogue/catalogue.sh TREE... > internal/expect/nccl-warns.tsv
#
# Each TREE is an unpacked NCCL release (its src/ and makefiles/version.mk), for
# example one directory per release tag made with
#   git -C nccl archive --prefix=v2.30.7-1/ v2.30.7-1 src makefiles | tar -x -C trees
# The script runs offline: it reads only the trees it is given.
#
# It finds every WARN(...) call under src/ (the macro NCCL's debug.h defines for
# its "NCCL WARN" lines, also the ones inside the CHECK macros of the headers),
# joins the string literals that make up its format (a macro between literals,
# such as PRIu64 or a log prefix, becomes %?), and prints one row per distinct
# (file, format):
#
#   class <TAB> format <TAB> file:line <TAB> first <TAB> last <TAB> versions
#
# file:line is from the newest tree the message is in; versions lists the
# releases (as in version.mk) that have it, comma-separated; class says where it
# is raised: net-ib, socket-bootstrap, proxy, transport, cuda, resource,
# init-config (the rest). Tab, newline and backslash in a format are written as
# \t, \n and \\ (as in the source). Rows are sorted by class, file and format.
set -eu

if [ "$#" -eq 0 ]; then
	echo "usage: catalogue.sh NCCL_TREE..." >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nccl-catalogue.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

for tree in "$@"; do
	vm="$tree/makefiles/version.mk"
	if [ ! -f "$vm" ] || [ ! -d "$tree/src" ]; then
		echo "catalogue.sh: $tree: not an NCCL source tree (no makefiles/version.mk or src/)" >&2
		exit 1
	fi
	ver=$(awk '$1=="NCCL_MAJOR"{a=$3} $1=="NCCL_MINOR"{b=$3} $1=="NCCL_PATCH"{c=$3} END{print a "." b "." c}' "$vm")
	(cd "$tree" && find src -type f \( -name '*.cc' -o -name '*.c' -o -name '*.cu' -o -name '*.h' -o -name '*.cpp' \) | LC_ALL=C sort) |
	while IFS= read -r f; do
		awk -v ver="$ver" -v file="$f" -f "$(dirname "$0")/warns.awk" "$tree/$f"
	done
done > "$tmp/rows"

# rows: ver <TAB> file <TAB> line <TAB> format. Merge per (file, format).
LC_ALL=C awk -F '\t' -f "$(dirname "$0")/merge.awk" "$tmp/rows" | LC_ALL=C sort -t "$(printf '\t')" -k1,1 -k3,3 -k2,2
