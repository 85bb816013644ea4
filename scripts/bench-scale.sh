#!/bin/sh
# bench-scale.sh: sparkrig's own cost at scale, one benchmark per process so
# each peak-RSS figure is that case's alone.
#
#   scripts/bench-scale.sh
#
# fan-out: N in-process SSH servers on loopback (in a child process, so their
#   CPU and memory are not counted) answer the capture script at once with a
#   capture of this machine; reported: wall time, sparkrig's CPU ms per host
#   and peak RSS, for N = 1, 32, 256, 1000, 4000 and 10,000 (each node's
#   capture is read into facts as it arrives and all but what fix reads is
#   dropped, as doctor does).
# doctor: a whole doctor run after acquisition (checks, cluster checks, fix
#   plan, text and JSON) over 1000, 4000 and 10,000 switched DGX Spark nodes,
#   each read from its own evidence; wall, CPU ms per node, peak RSS.
# ring checks: the cluster model and checks over a switchless ring of 100,
#   1000 and 10,000 nodes (2 subnets a cable): time per node.
# exporter: 100 audits of 100 hosts through the exporter's Server; the live
#   heap and RSS after the 1st, 10th and 100th audit.
# hostile: 32 nodes that answer with endless zeros; one node per stream
#   attack (a header line without end, endless empty records).
# snapshots: 16 snapshots at the 128 MiB cap read as doctor --snapshot does;
#   one archive of 500,000 entries (refused past the entry cap); one whose
#   manifest lists 2 million items (refused past the item cap).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
echo "$(nproc) CPUs, $(go version | cut -d' ' -f3)"
# Each case in its own process; the load average beside it says how busy
# the machine was (wall times on a shared machine move with it).
run() {
	pkg=${2:-./internal/acquire}
	load=$(cut -d' ' -f1 /proc/loadavg)
	go test "$pkg" -run '^$' -bench "$1" -benchtime 1x -timeout 30m 2>&1 | grep '^Benchmark' |
		awk -v load="$load" '{printf "%-40s %8.2f s wall", $1, $3/1e9; for (i = 5; i < NF; i += 2) printf "  %s %s", $i, $(i+1); printf "  (load %s)\n", load}'
}
for n in 1 32 256 1000 4000 10000; do run "BenchmarkRemote/hosts=$n\$"; done
for n in 1000 4000 10000; do run "BenchmarkDoctor/nodes=$n\$" ./internal/doctor; done
run 'BenchmarkRingChecks$' ./internal/cluster
run 'BenchmarkExporterAudits$'
run 'BenchmarkHostileNodes/hosts=32$'
for h in endless-header endless-empty-links endless-empty-commands; do run "BenchmarkHostileNode/$h\$"; done
run 'BenchmarkSnapshots/cap-x16$'
run 'BenchmarkSnapshots/entries-500k$'
run 'BenchmarkSnapshots/manifest-items-2M$'
