#!/bin/sh
# record.sh OUT: runs job.py under each NCCL misconfiguration below on this
# host's GPUs (torchrun, NCCL_DEBUG=INFO) and writes each run's whole output,
# stdout and stderr as the user sees them, to OUT/<case>.log, with the
# case's environment on the first line of OUT/<case>.env.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0) on shared machines.
set -u
out=${1:?usage: record.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
ngpu=$(nvidia-smi -L | wc -l)
run() { # case nproc env...
	c=$1 np=$2; shift 2
	echo "$*" >"$out/$c.env"
	env NCCL_DEBUG=INFO NCCL_NVLS_ENABLE=0 "$@" timeout -k 5 120 \
		torchrun --standalone --nproc_per_node="$np" "$here/job.py" >"$out/$c.log" 2>&1
	echo "$c: exit $?" | tee -a "$out/exits.txt"
}
run healthy "$ngpu" FAULT=healthy
run socket-ifname-missing "$ngpu" NCCL_SOCKET_IFNAME=nosuch0
run duplicate-gpu $((ngpu + 1)) FAULT=duplicate-gpu
run net-ib-forced "$ngpu" NCCL_NET=IB
run net-plugin-missing "$ngpu" NCCL_NET_PLUGIN=nosuchplugin
run topo-file-missing "$ngpu" NCCL_TOPO_FILE=/nonexistent/topo.xml
run algo-invalid "$ngpu" NCCL_ALGO=NoSuchAlgo
run buffsize-huge "$ngpu" NCCL_BUFFSIZE=1099511627776
