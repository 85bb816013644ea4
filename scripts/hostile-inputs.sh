#!/bin/bash
# hostile-inputs.sh: wall time, peak RSS, exit status and first stderr line
# of sparkrig on each hostile input of the inputs audit, for one or more
# builds side by side.
#
#   scripts/hostile-inputs.sh [BIN ...]
#
# Each BIN is a sparkrig binary (default: one built from this tree). To
# compare with an older build: git worktree add /tmp/old COMMIT &&
# (cd /tmp/old && go build -o /tmp/sparkrig-old ./cmd/sparkrig), then
# scripts/hostile-inputs.sh /tmp/sparkrig-old /tmp/sparkrig-new.
# TIMEOUT (seconds, default 60) bounds each case: a run killed there prints
# "hung past N s". Each run is limited to MEMLIMIT KiB of address space
# (default 8 GiB), so an input that makes a build fill memory ends there
# rather than taking the machine down. Peak RSS is GNU time's %M (the
# largest resident set of the process tree), or VmHWM from /proc for the
# exporter, which is scraped while it runs. The script holds
# /tmp/sparkrig-heavy.lock from its first run to its end when flock is
# installed.
set -u
TIMEOUT=${TIMEOUT:-60}
MEMLIMIT=${MEMLIMIT:-8388608}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
	(cd "$root" && go build -o "$work/sparkrig" ./cmd/sparkrig) || exit 1
	set -- "$work/sparkrig"
fi

# --- the inputs ---
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec sleep 600\n' >"$work/bin/nvidia-smi"
chmod +x "$work/bin/nvidia-smi"
mkfifo "$work/known_hosts.fifo" "$work/results.fifo"
nl_name="$work/bad
sparkrig: ok: forged.txt"
printf 'nothing known\n' >"$nl_name"
python3 - "$root" "$work" <<'EOF'
import copy, io, json, sys, tarfile
root, work = sys.argv[1], sys.argv[2]
# a doctor document of 16,000 hosts: the recorded two-node audit's hosts
# repeated under new names (95 MB), and one of 600,000 hosts each holding
# one finding (past the objects one report reads)
d = json.load(open(root + "/internal/render/testdata/doctor_rig_spark-pair_mtu-mismatch.json"))
base, hosts = d["hosts"], []
for i in range(16000):
    h = copy.deepcopy(base[i % len(base)]); h["host"] = "node-%05d" % i; hosts.append(h)
d["hosts"] = hosts
json.dump(d, open(work + "/doctor-16000.json", "w"))
with open(work + "/doctor-600000.json", "w") as f:
    f.write('{"schema_version":%d,"tool":"sparkrig","command":"doctor","status":"ok","hosts":[' % d["schema_version"])
    f.write(",".join('{"host":"n%d","status":"audited","findings":[{"id":"x","severity":"ok"}]}' % i for i in range(600000)))
    f.write("]}")
# the recorded H200 snapshot with 199,000 more items in its manifest
src = tarfile.open(root + "/testdata/nodes/gpu-h200x2.tar.gz")
out = tarfile.open(work + "/manifest-199k.tar.gz", "w:gz")
for m in src.getmembers():
    body = src.extractfile(m).read() if m.isfile() else None
    if m.name == "manifest.json":
        man = json.loads(body)
        man["items"] += [{"kind": "file", "name": "/x/%d" % i, "status": "missing",
                          "error": "open: no such file or directory"} for i in range(199000)]
        body = json.dumps(man).encode()
        m.size = len(body)
    out.addfile(m, io.BytesIO(body) if body is not None else None)
out.close()
EOF

# measure LABEL BIN ARGS...: one run under the timeout and the memory limit.
measure() {
	label=$1 bin=$2
	shift 2
	/usr/bin/time -f '%e %M' -o "$work/time" \
		timeout -s KILL "$TIMEOUT" sh -c 'ulimit -v '"$MEMLIMIT"'; exec "$@"' sh "$bin" "$@" \
		</dev/null >"$work/out" 2>"$work/err"
	rc=$?
	# GNU time writes "Command exited with non-zero status N" first
	read -r secs kb < <(tail -n 1 "$work/time" 2>/dev/null)
	case "${kb:-}" in '' | *[!0-9]*) secs=? kb=0 ;; esac
	if [ $rc -eq 137 ]; then
		# killed by timeout, whose rusage leaves out the child it killed
		what="hung past $TIMEOUT s" kb=-1
	else
		what="exit $rc"
	fi
	first=$(grep -v '^Command exited\|^Command terminated' "$work/err" | head -n 1 | cut -c1-150)
	[ -n "$first" ] || first="(stdout) $(head -n 1 "$work/out" | cut -c1-100)"
	printf '%-28s %-14s %8ss %8s MB  %-16s %s (stderr lines: %s)\n' "$label" "$(basename "$bin")" "$secs" "$([ "$kb" -ge 0 ] && echo $((kb / 1024)) || echo -)" "$what" "$first" "$(wc -l <"$work/err")"
}

# exporter LABEL BIN RESULTS: the exporter auditing this machine with
# --results RESULTS, scraped after 20 s: whether its last audit succeeded,
# and its peak RSS.
exporter() {
	label=$1 bin=$2 results=$3
	port=$((20000 + RANDOM % 20000))
	sh -c 'ulimit -v '"$MEMLIMIT"'; exec "$@"' sh "$bin" exporter --listen "127.0.0.1:$port" --interval 5s \
		--audit-timeout 10s --results "$results" >"$work/out" 2>"$work/err" &
	pid=$!
	sleep 20
	hwm=$(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null)
	m=$(curl -s -m 5 "http://127.0.0.1:$port/metrics" | grep -E '^sparkrig_exporter_(last_audit_success|audits_total|last_audit_failed)' | tr '\n' ' ')
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	printf '%-28s %-14s %8s  %8s MB  %s | %s\n' "$label" "$(basename "$bin")" "20s" "${hwm:-?}" "${m:-no metrics after 20 s}" "$(head -n 1 "$work/err" | cut -c1-90)"
}

if command -v flock >/dev/null 2>&1; then
	exec 9>/tmp/sparkrig-heavy.lock
	flock 9
fi
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), timeout ${TIMEOUT} s, address space ${MEMLIMIT} KiB"
printf '%-28s %-14s %9s %11s  %s\n' CASE BUILD WALL PEAK-RSS 'RESULT, FIRST STDERR LINE'
for bin in "$@"; do
	timeout_flag=""
	"$bin" doctor --help 2>&1 | grep -q -- '--npd-timeout' && timeout_flag="--npd-timeout=8s"
	PATH="$work/bin:$PATH" measure "hung nvidia-smi, doctor --npd" "$bin" doctor --npd --profile gpu-server --npd-checks 'gpu.*' $timeout_flag
	measure "analyze /dev/zero" "$bin" analyze /dev/zero
	measure "report /dev/zero" "$bin" report --format text /dev/zero
	exporter "exporter --results /dev/zero" "$bin" /dev/zero
	exporter "exporter --results FIFO" "$bin" "$work/results.fifo"
	measure "pdsh range at int64 limit" "$bin" doctor --hosts 'n[9223372036854775800-9223372036854775807]' --host-timeout 5s
	measure "report html, 16,000 hosts" "$bin" report --format html -o "$work/out.html" "$work/doctor-16000.json"
	measure "report html, 600,000 hosts" "$bin" report --format html -o "$work/out.html" "$work/doctor-600000.json"
	measure "199k-item manifest" "$bin" doctor --snapshot "$work/manifest-199k.tar.gz" --format json
	measure "known_hosts FIFO" "$bin" doctor --hosts 127.0.0.1 --known-hosts "$work/known_hosts.fifo" --host-timeout 5s
	measure "newline in a file name" "$bin" analyze "$nl_name"
done
