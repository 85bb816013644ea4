#!/bin/sh
# Slurm HealthCheckProgram: slurmd runs it as root on each node. sparkrig
# drains the node itself on a problem (its exit status drains nothing) and
# resumes only its own drains; when it is missing or fails, nothing changes.
# Add options after "health" (--always ID, --never ID, --unhealthy-on warn).
exec "${SPARKRIG:-/usr/local/bin/sparkrig}" slurm health \
	--textfile "${SPARKRIG_TEXTFILE:-/var/lib/prometheus/node-exporter/sparkrig.prom}" "$@"
