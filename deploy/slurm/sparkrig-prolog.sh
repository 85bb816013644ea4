#!/bin/sh
# Slurm Prolog and Epilog: a non-zero exit drains the node (and requeues
# the job for a prolog), so only sparkrig's own "unhealthy" answer (exit 1)
# may fail it. sparkrig missing, crashing, killed or unable to tell exits 0
# here: the check fails open. It calls no Slurm command. The mode is the
# first argument (prolog or epilog), else slurmd's SLURM_SCRIPT_CONTEXT
# (epilog_slurmd for the Epilog), else prolog; further arguments go to
# sparkrig. The policy is the health check's: SPARKRIG_HEALTH_ARGS in
# /etc/default/sparkrig-health (see sparkrig-health.sh).
mode=prolog
[ "${SLURM_SCRIPT_CONTEXT:-}" = epilog_slurmd ] && mode=epilog
case "${1:-}" in prolog|epilog) mode=$1; shift;; esac
SPARKRIG_HEALTH_ARGS=
defaults=${SPARKRIG_DEFAULTS:-/etc/default/sparkrig-health}
# shellcheck disable=SC1090 # the site's policy file
[ -r "$defaults" ] && . "$defaults"
set -f # no word of the policy is a file-name pattern
eval "set -- $SPARKRIG_HEALTH_ARGS"' "$@"'
"${SPARKRIG:-/usr/local/bin/sparkrig}" slurm "$mode" "$@"
[ $? -eq 1 ] && exit 1
exit 0
