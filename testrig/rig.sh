#!/bin/sh
# Start or stop a sparkrig test rig by hand: DGX Spark "hosts" as network
# namespaces with Spark-named veths and a real sshd each (needs root).
#
#   testrig/rig.sh up [-n 2] [-layout pair|ring|none]
#   testrig/rig.sh down DIR          (DIR as printed by up)
#
# Tests do not use this script: they call internal/testrig directly, which
# tears the rig down when the test ends.
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp "${TMPDIR:-/tmp}/rigctl.XXXXXX")
trap 'rm -f "$bin"' EXIT
go build -o "$bin" ./internal/testrig/rigctl
"$bin" "$@"
