#!/bin/sh
# Records the raw samples under testdata/gpu/ on a GPU machine (the
# comparison itself is run.sh). Usage:
#   scripts/gpu-compare/record.sh [SPARKRIG] [PYTHON] [OUTDIR]
# Every command's stdout+stderr goes to OUTDIR/NAME.txt and its exit status to
# OUTDIR/NAME.rc; the directory is packed into OUTDIR.tar.gz.
set -u
SPARKRIG=${1:-bin/sparkrig}
PY=${2:-python3}
OUT=${3:-gpu-record-out}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
mkdir -p "$OUT"
rec() { name=$1; shift; "$@" > "$OUT/$name.txt" 2>&1; echo $? > "$OUT/$name.rc"; }

rec proc-driver-nvidia-version cat /proc/driver/nvidia/version
rec ldconfig-p sh -c "ldconfig -p | head -1; ldconfig -p | grep -E 'libcuda|libnccl|libcublas|libcudart'"
rec nvidia-smi-topo-m nvidia-smi topo -m
rec torch-py-info "$PY" internal/gpu/torch_probe.py info
rec info-json "$SPARKRIG" bench gpu info --format json --python "$PY"
rec collective-all-ops "$SPARKRIG" bench gpu collective --op all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv -b 1M -e 256M -f 4 --json-file "$OUT/collective-all-ops.json"
rec collective-bf16 "$SPARKRIG" bench gpu collective --op all_reduce,reduce_scatter -d bf16 -b 64K -e 16M -f 4
rec collective-2proc-rank1 "$SPARKRIG" bench gpu collective --op all_reduce,all_gather -b 1M -e 64M -f 8 --nranks 2 --rank 1 --rendezvous 127.0.0.1:29513 &
rec collective-2proc-rank0 "$SPARKRIG" bench gpu collective --op all_reduce,all_gather -b 1M -e 64M -f 8 --nranks 2 --rank 0 --rendezvous 127.0.0.1:29513 --json-file "$OUT/collective-2proc.json"
wait
rec memory "$SPARKRIG" bench gpu memory --size 1G
rec memory-json "$SPARKRIG" bench gpu memory --size 256M --tests d2d,peer --format json
rec gemm-fp16-python "$SPARKRIG" bench gpu gemm --dtype fp16 --duration 5s --python "$PY"
rec cap-refusal "$SPARKRIG" bench gpu collective -e 64G
rec bad-lib-dir "$SPARKRIG" bench gpu info --lib-dir /nonexistent
tar -czf "$OUT.tar.gz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
