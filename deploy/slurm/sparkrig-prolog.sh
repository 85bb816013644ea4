#!/bin/sh
# Slurm Prolog (or Epilog, with "epilog" as the first argument): a non-zero
# exit drains the node (and requeues the job for a prolog), so only
# sparkrig's own "unhealthy" answer (exit 1) may fail it. sparkrig missing,
# crashing or killed exits 0 here: the check fails open. It calls no Slurm
# command.
mode=prolog
case "$1" in prolog|epilog) mode=$1; shift;; esac
"${SPARKRIG:-/usr/local/bin/sparkrig}" slurm "$mode" "$@"
[ $? -eq 1 ] && exit 1
exit 0
