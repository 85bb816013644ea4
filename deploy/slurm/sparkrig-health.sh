#!/bin/sh
# Slurm HealthCheckProgram: slurmd runs it as root on each node, with no
# arguments. sparkrig drains the node itself on a problem (its exit status
# drains nothing) and resumes only its own drains; when it is missing or
# fails, or cannot tell, nothing changes. The policy's options (--always ID,
# --never ID, --unhealthy-on warn, --profile P) go in SPARKRIG_HEALTH_ARGS in
# /etc/default/sparkrig-health, which sparkrig-prolog.sh reads too:
#   SPARKRIG_HEALTH_ARGS="--always 'net.*' --never os.thp"
# They are split into words as the shell splits a command line, never
# matched against file names.
# slurmd gives it no search path: scontrol is found here.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
SPARKRIG_HEALTH_ARGS=
defaults=${SPARKRIG_DEFAULTS:-/etc/default/sparkrig-health}
# shellcheck disable=SC1090 # the site's policy file
[ -r "$defaults" ] && . "$defaults"
textfile=${SPARKRIG_TEXTFILE:-/var/lib/prometheus/node-exporter/sparkrig.prom}
set -f # no word of the policy is a file-name pattern
eval "set -- $SPARKRIG_HEALTH_ARGS"' "$@"'
exec "${SPARKRIG:-/usr/local/bin/sparkrig}" slurm health --textfile "$textfile" "$@"
