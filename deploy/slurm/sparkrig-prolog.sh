#!/bin/sh
# Slurm Prolog and Epilog: a non-zero exit drains the node (and requeues
# the job for a prolog), so only sparkrig's own "unhealthy" answer (exit 1)
# may fail it. sparkrig missing, crashing or killed exits 0 here: the check
# fails open. It calls no Slurm command. The mode is the first argument
# (prolog or epilog), else slurmd's SLURM_SCRIPT_CONTEXT (epilog_slurmd for
# the Epilog), else prolog; further arguments go to sparkrig.
mode=prolog
[ "${SLURM_SCRIPT_CONTEXT:-}" = epilog_slurmd ] && mode=epilog
case "$1" in prolog|epilog) mode=$1; shift;; esac
"${SPARKRIG:-/usr/local/bin/sparkrig}" slurm "$mode" "$@"
[ $? -eq 1 ] && exit 1
exit 0
