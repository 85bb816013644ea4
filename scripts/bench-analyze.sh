#!/bin/sh
# bench-analyze.sh: how fast `sparkrig analyze` reads a large NCCL_DEBUG=INFO
# log, beside `grep -c 'NCCL INFO'` on the same file in the same run.
#
#   scripts/bench-analyze.sh [SIZE_MIB] [RUNS]     (default 1024 MiB, 3 runs)
#
# The log is the real DGX Spark nccl-tests + NCCL INFO output kept in
# internal/results/testdata, repeated to SIZE_MIB. Each tool runs RUNS times;
# the best wall time of each is reported, with user+sys CPU seconds and peak
# memory, so a busy machine penalises both alike.
set -eu

size_mib=${1:-1024}
runs=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-analyze.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

fixture="$root/internal/results/testdata/nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt"
awk '/^=== BEGIN VERBATIM ===$/{on=1;next} /^=== END VERBATIM ===$/{on=0;next} on' "$fixture" > "$work/unit.log"

# double the unit until it reaches the target size, then cut to it
cp "$work/unit.log" "$work/big.log"
target=$((size_mib * 1024 * 1024))
while [ "$(wc -c < "$work/big.log")" -lt "$target" ]; do
	cat "$work/big.log" "$work/big.log" > "$work/tmp.log"
	mv "$work/tmp.log" "$work/big.log"
done
head -c "$target" "$work/big.log" > "$work/tmp.log" && mv "$work/tmp.log" "$work/big.log"
bytes=$(wc -c < "$work/big.log")

(cd "$root" && CGO_ENABLED=0 go build -o "$work/sparkrig" ./cmd/sparkrig)

# measure NAME CMD...: prints "best_wall cpu maxrss_kb" for the best of $runs
measure() {
	name=$1
	shift
	best=""
	for _ in $(seq "$runs"); do
		# output goes to a file: GNU grep stops at the first match when
		# stdout is /dev/null; a non-zero exit (a WARNING verdict) is expected
		/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" > "$work/out" 2>&1 || true
		read -r wall user sys rss <<-TIMES
		$(tail -n 1 "$work/t")
		TIMES
		if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
			best=$wall
			cpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}")
			mem=$rss
		fi
	done
	mbs=$(awk "BEGIN{printf \"%.0f\", $bytes / 1e6 / ($best > 0 ? $best : 0.001)}")
	mbs_cpu=$(awk "BEGIN{printf \"%.0f\", $bytes / 1e6 / ($cpu > 0 ? $cpu : 0.001)}")
	printf '%-28s %7.2f s wall  %6s MB/s  | %6s s CPU  %6s MB/s per CPU s | peak RSS %s KB\n' "$name" "$best" "$mbs" "$cpu" "$mbs_cpu" "$mem"
	eval "${name%% *}_wall=$best; ${name%% *}_cpu=$cpu"
}

echo "file: $bytes bytes ($(grep -c 'NCCL INFO' "$work/big.log") NCCL INFO lines), best of $runs runs, $(nproc) CPUs"
measure "grep -c 'NCCL INFO'" grep -c 'NCCL INFO' "$work/big.log"
measure "sparkrig analyze" "$work/sparkrig" analyze --format json "$work/big.log"
awk "BEGIN{printf \"sparkrig / grep: %.2fx wall, %.2fx CPU (goal: within 3x)\n\", $sparkrig_wall / $grep_wall, $sparkrig_cpu / ($grep_cpu > 0 ? $grep_cpu : 0.01)}"
