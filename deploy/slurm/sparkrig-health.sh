#!/bin/sh
# Slurm HealthCheckProgram: slurmd runs it as root on each node, with no
# arguments. sparkrig drains the node itself on a problem (its exit status
# drains nothing) and resumes only its own drains; when it is missing or
# fails, nothing changes. The policy's options (--always ID, --never ID,
# --unhealthy-on warn) go in SPARKRIG_HEALTH_ARGS in
# /etc/default/sparkrig-health.
# slurmd gives it no search path: scontrol is found here.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
SPARKRIG_HEALTH_ARGS=
[ -r /etc/default/sparkrig-health ] && . /etc/default/sparkrig-health
# shellcheck disable=SC2086 # the options are words
exec "${SPARKRIG:-/usr/local/bin/sparkrig}" slurm health \
	--textfile "${SPARKRIG_TEXTFILE:-/var/lib/prometheus/node-exporter/sparkrig.prom}" $SPARKRIG_HEALTH_ARGS "$@"
