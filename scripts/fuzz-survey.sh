#!/bin/sh
# fuzz-survey.sh: run every fuzz target under internal/ for a fixed time, one
# at a time, and print how many inputs each executed.
#
#   scripts/fuzz-survey.sh [FUZZTIME [PATTERN]]
#
# FUZZTIME defaults to 10s; PATTERN (a grep -E expression matched against
# "PKG NAME") picks a subset. Each line reads: package, target, executions,
# executions per second over the whole elapsed time, as the last
# "fuzz: elapsed: T, execs: N (R/sec)" line of go's output gives them ("-"
# when go printed none). A target whose go test failed (a build failure, or
# an input that broke its property) is marked FAIL and its output kept. A
# target that executes fewer than about 100 inputs per second of FUZZTIME is
# barely fuzzed. Other load on the machine lowers every number: the load
# average is printed before and after.
# FUZZMINIMIZETIME (e.g. 1s), when set, is passed as -fuzzminimizetime: go
# minimises every input that finds new coverage for up to 60 s by default,
# with tries that grow with the square of its size, and a worker that
# minimises executes nothing new meanwhile, so a target with seeds of a few
# KB or executions of a few ms can spend a short run doing only that.
# Each run takes /tmp/sparkrig-heavy.lock when flock is installed, so it does
# not share the machine with another heavy job.
set -eu
fuzztime=${1:-10s}
pattern=${2:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
lock=""
if command -v flock >/dev/null 2>&1; then
	lock="flock /tmp/sparkrig-heavy.lock"
fi
echo "# fuzztime $fuzztime, fuzzminimizetime ${FUZZMINIMIZETIME:-default}, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %-28s %12s %10s\n' PKG TARGET EXECS EXECS/S
grep -rn '^func Fuzz' internal --include='*_test.go' |
	sed -n 's|^\(.*\)/[^/]*_test\.go:[0-9]*:func \(Fuzz[A-Za-z0-9_]*\)(.*|./\1 \2|p' |
	sort -u | grep -E -- "$pattern" |
	while read -r pkg name; do
		out="$tmp/$(echo "$pkg.$name" | tr '/' '_').log"
		# GOFLAGS is left to the caller; -run '^$' skips the unit tests.
		status=""
		if ! $lock go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" ${FUZZMINIMIZETIME:+-fuzzminimizetime "$FUZZMINIMIZETIME"} >"$out" 2>&1; then
			status=" FAIL"
		fi
		last=$(grep 'fuzz: elapsed:.*execs:' "$out" | tail -n 1 || true)
		# The "(R/sec)" of go's last line covers only its last interval,
		# which at the end may be a fraction of a second; the rate printed
		# here is executions over the whole elapsed time.
		execs=$(echo "$last" | sed -n 's/.*execs: \([0-9]*\) .*/\1/p')
		rate=$(echo "$last" | sed -n 's/.*elapsed: \([0-9hms]*\),.*/\1/p' |
			awk -v n="${execs:-0}" '{ s = 0; t = $0
				if (match(t, /[0-9]+h/)) s += 3600 * substr(t, RSTART, RLENGTH - 1)
				if (match(t, /[0-9]+m/)) s += 60 * substr(t, RSTART, RLENGTH - 1)
				if (match(t, /[0-9]+s/)) s += substr(t, RSTART, RLENGTH - 1)
				printf "%d", (s > 0 ? n / s : n) }')
		if [ -z "$execs" ] || [ -n "$status" ]; then
			execs=${execs:--} rate=${rate:--}
			note="$status (see $out)"
		else
			note=""
			rm -f "$out"
		fi
		printf '%-28s %-28s %12s %10s%s\n' "${pkg#./internal/}" "$name" "$execs" "$rate" "$note"
	done
echo "# done, load $(cut -d' ' -f1-3 /proc/loadavg)"
