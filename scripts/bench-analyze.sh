#!/bin/sh
# bench-analyze.sh: how fast `sparkrig analyze` reads a large NCCL_DEBUG=INFO
# log, beside `grep -c 'NCCL INFO'` on the same file in the same run.
#
#   scripts/bench-analyze.sh [SIZE_MIB] [RUNS] [info|warn|both]   (default 512 MiB, 3 runs, info)
#
# info: the real DGX Spark nccl-tests + NCCL INFO output of one job kept in
# internal/results/testdata, repeated to SIZE_MIB (one job's startup, tables
# and INFO lines, as a long single-job log is).
# warn: a WARN-heavy log: the NCCL WARN lines and the error lines around them
# of the real pastes in internal/analyze/testdata/pasted, repeated to SIZE_MIB;
# its goal is a rate (MB/s per CPU second) of 100 or more.
# both: info, then warn, each with its ratio to grep -c.
# SPARKRIG=path measures that binary instead of building this tree;
# OLD=path measures that one too, on the same file in the same run (an
# older build to compare with). The generated log is
# removed at the end; nothing is kept in the tree. Each tool runs RUNS times;
# the run with the least CPU time (user+sys) of each is reported, with its
# wall time and peak memory. CPU time is what is compared: on a shared
# machine wall time measures the neighbours as much as the program.
set -eu

size_mib=${1:-512}
runs=${2:-3}
mode=${3:-info}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-analyze.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

case $mode in
info | warn | both) ;;
*)
	echo "bench-analyze.sh: mode is info, warn or both, not $mode" >&2
	exit 2
	;;
esac

if [ -n "${SPARKRIG:-}" ]; then
	cp "$SPARKRIG" "$work/sparkrig"
else
	(cd "$root" && CGO_ENABLED=0 go build -o "$work/sparkrig" ./cmd/sparkrig)
fi
if [ -n "${OLD:-}" ]; then
	cp "$OLD" "$work/old"
fi

# generate MODE: writes $work/big.log, SIZE_MIB of the mode's unit
generate() {
	case $1 in
	info)
		fixture="$root/internal/results/testdata/nccl-logs/09_dgx-spark_nccl2.28.9_net-ib-2-twins_gdr-disabled_gid0-on-second-twin.txt"
		awk '/^=== BEGIN VERBATIM ===$/{on=1;next} /^=== END VERBATIM ===$/{on=0;next} on' "$fixture" > "$work/unit.log"
		;;
	warn)
		# the verbatim part of every paste that has NCCL WARN lines: their WARN,
		# error and traceback lines as pasted
		for f in "$root"/internal/analyze/testdata/pasted/*.txt; do
			grep -q 'NCCL WARN' "$f" || continue
			awk '/^=== BEGIN VERBATIM ===$/{on=1;next} /^=== END VERBATIM ===$/{on=0;next} on' "$f"
		done | grep -E 'WARN|rror|ailed|imed out|refused' > "$work/lines.log"
		# a line in NCCL's own shape first: the measure is the reading, not
		# how the first character is taken
		{ grep -E '^[A-Za-z0-9._-]+:[0-9]+:[0-9]+ ' "$work/lines.log"; grep -vE '^[A-Za-z0-9._-]+:[0-9]+:[0-9]+ ' "$work/lines.log"; } > "$work/unit.log"
		;;
	esac
	# double the unit until it reaches the target size, then cut to it
	cp "$work/unit.log" "$work/big.log"
	target=$((size_mib * 1024 * 1024))
	while [ "$(wc -c < "$work/big.log")" -lt "$target" ]; do
		cat "$work/big.log" "$work/big.log" > "$work/tmp.log"
		mv "$work/tmp.log" "$work/big.log"
	done
	head -c "$target" "$work/big.log" > "$work/tmp.log" && mv "$work/tmp.log" "$work/big.log"
	bytes=$(wc -c < "$work/big.log")
}

# measure NAME CMD...: prints the run of $runs with the least CPU time
measure() {
	name=$1
	shift
	cpu=""
	for _ in $(seq "$runs"); do
		# output goes to a file: GNU grep stops at the first match when
		# stdout is /dev/null; a non-zero exit (a WARNING verdict) is expected
		/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" > "$work/out" 2>&1 || true
		read -r w user sys rss <<-TIMES
		$(tail -n 1 "$work/t")
		TIMES
		c=$(awk "BEGIN{printf \"%.2f\", $user + $sys}")
		if [ -z "$cpu" ] || awk "BEGIN{exit !($c < $cpu)}"; then
			cpu=$c
			wall=$w
			mem=$rss
		fi
	done
	mbs_cpu=$(awk "BEGIN{printf \"%.0f\", $bytes / 1e6 / ($cpu > 0 ? $cpu : 0.001)}")
	mbs=$(awk "BEGIN{printf \"%.0f\", $bytes / 1e6 / ($wall > 0 ? $wall : 0.001)}")
	printf '%-24s %6s s CPU  %6s MB/s per CPU s | %6.2f s wall  %6s MB/s | peak RSS %s KB\n' "$name" "$cpu" "$mbs_cpu" "$wall" "$mbs" "$mem"
	eval "${name%% *}_wall=$wall; ${name%% *}_cpu=$cpu"
}

# run MODE: measures grep, sparkrig (and the old build) on MODE's file
run() {
	generate "$1"
	echo "file ($1): $bytes bytes ($(grep -c 'NCCL INFO' "$work/big.log") NCCL INFO lines, $(grep -c 'NCCL WARN' "$work/big.log") NCCL WARN lines), least CPU of $runs runs, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	measure "grep -c 'NCCL INFO'" grep -c 'NCCL INFO' "$work/big.log"
	if [ -n "${OLD:-}" ]; then
		measure "old analyze" "$work/old" analyze --format json "$work/big.log"
	fi
	measure "sparkrig analyze" "$work/sparkrig" analyze --format json "$work/big.log"
	goal="1.5x or less"
	if [ "$1" = warn ]; then
		goal="100 MB per CPU second or more: $(awk "BEGIN{printf \"%.0f\", $bytes / 1e6 / ($sparkrig_cpu > 0 ? $sparkrig_cpu : 0.001)}") MB/s"
	fi
	if [ -n "${OLD:-}" ]; then
		awk "BEGIN{printf \"%s: old / grep = %.2fx, %.0f MB per CPU s\n\", \"$1\", $old_cpu / ($grep_cpu > 0 ? $grep_cpu : 0.01), $bytes / 1e6 / ($old_cpu > 0 ? $old_cpu : 0.001)}"
	fi
	awk "BEGIN{printf \"%s: CPU seconds: grep %.2f, sparkrig %.2f: sparkrig / grep = %.2fx (goal: %s; wall %.2fx)\n\", \"$1\", $grep_cpu, $sparkrig_cpu, $sparkrig_cpu / ($grep_cpu > 0 ? $grep_cpu : 0.01), \"$goal\", $sparkrig_wall / ($grep_wall > 0 ? $grep_wall : 0.01)}"
}

if [ "$mode" = both ]; then
	run info
	run warn
else
	run "$mode"
fi
