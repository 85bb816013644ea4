#!/bin/sh
# bench-scale.sh: sparkrig's own cost at scale, one benchmark per process so
# each peak-RSS figure is that case's alone.
#
#   scripts/bench-scale.sh
#
# fan-out: N in-process SSH servers on loopback (in a child process, so their
#   CPU and memory are not counted) answer the capture script at once with a
#   capture of this machine; reported: wall time, sparkrig's CPU ms per host
#   and peak RSS, for N = 1, 32, 256, 1000.
# hostile: 32 nodes that answer with endless zeros; one node per stream
#   attack (a header line without end, endless empty records).
# snapshots: 16 snapshots at the 128 MiB cap read as doctor --snapshot does;
#   one archive of 500,000 entries (refused past the entry cap); one whose
#   manifest lists 2 million items (refused past the item cap).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
echo "$(nproc) CPUs, $(go version | cut -d' ' -f3)"
run() {
	go test ./internal/acquire -run '^$' -bench "$1" -benchtime 1x 2>&1 | grep '^Benchmark' |
		awk '{printf "%-40s %8.2f s wall", $1, $3/1e9; for (i = 5; i < NF; i += 2) printf "  %s %s", $i, $(i+1); print ""}'
}
for n in 1 32 256 1000; do run "BenchmarkRemote/hosts=$n\$"; done
run 'BenchmarkHostileNodes/hosts=32$'
for h in endless-header endless-empty-links endless-empty-commands; do run "BenchmarkHostileNode/$h\$"; done
run 'BenchmarkSnapshots/cap-x16$'
run 'BenchmarkSnapshots/entries-500k$'
run 'BenchmarkSnapshots/manifest-items-2M$'
