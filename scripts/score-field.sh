#!/bin/sh
# score-field.sh: how many field cases analyze reads right.
#
#   scripts/score-field.sh DIR
#
# DIR holds cases NN_slug.txt, each with NN_slug.txt.SOURCE naming the
# thread's conclusion (TRUTH: healthy | <cause slug>). For each case it
# prints right, wrong or false-alarm, the truth and the cause analyze ranked
# first, then the total. Right: the truth's cause ranked first (slugs map to
# analyze's ids in internal/analyze/truth-ids.tsv), or for a healthy paste no
# warn or fail; false alarm: a warn or fail on a healthy paste.
set -eu
if [ "$#" -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: score-field.sh DIR (a directory of NN_slug.txt and .SOURCE cases)" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SPARKRIG_SCORE_DIR=$dir go test ./internal/analyze -run '^TestScoreField$' -count=1 -v |
	grep -E '^(right|wrong|false-alarm|total) ' || true
