#!/bin/sh
# Reproduces the `sparkrig bench gpu` vs PyTorch comparison on one node:
# all_reduce busbw per size (1 MiB … 8 GiB), bf16 8192³ GEMM TFLOP/s and
# device-to-device copy bandwidth. Usage:
#   scripts/gpu-compare/run.sh [SPARKRIG] [PYTHON] [OUTDIR]
# NCCL_NVLS_ENABLE=0 keeps NVLink SHARP off on machines where it is not usable.
set -eu
SPARKRIG=${1:-bin/sparkrig}
PY=${2:-python3}
OUT=${3:-gpu-compare-out}
HERE=$(dirname "$0")
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
SWEEP="-b 1M -e 8G -f 2 -n 50 -w 10"
mkdir -p "$OUT"

"$SPARKRIG" bench gpu info --python "$PY" | tee "$OUT/info.txt"

# all_reduce: sparkrig with the system NCCL, sparkrig with the Python env's NCCL
# (same library as torch), torch.distributed one process per GPU.
"$SPARKRIG" bench gpu collective --op all_reduce $SWEEP --json-file "$OUT/sparkrig_all_reduce.json" | tee "$OUT/sparkrig_all_reduce.txt"
"$SPARKRIG" bench gpu collective --op all_reduce $SWEEP --python "$PY" --json-file "$OUT/sparkrig_all_reduce_wheelnccl.json" | tee "$OUT/sparkrig_all_reduce_wheelnccl.txt"
"$PY" "$HERE/compare.py" allreduce --min 1M --max 8G --factor 2 --iters 50 --warmup 10 --out "$OUT/torch_all_reduce.json" > "$OUT/torch_all_reduce.txt"
# sparkrig one process per GPU, like torch: ranks meet over sparkrig's TCP rendezvous.
"$SPARKRIG" bench gpu collective --op all_reduce $SWEEP --nranks 2 --rank 1 --rendezvous 127.0.0.1:29512 > "$OUT/sparkrig_all_reduce_rank1.txt" 2>&1 &
"$SPARKRIG" bench gpu collective --op all_reduce $SWEEP --nranks 2 --rank 0 --rendezvous 127.0.0.1:29512 --json-file "$OUT/sparkrig_all_reduce_2proc.json" | tee "$OUT/sparkrig_all_reduce_2proc.txt"
wait
"$PY" "$HERE/compare.py" ratio "$OUT/sparkrig_all_reduce.json" "$OUT/torch_all_reduce.json" --label "system NCCL" | tee "$OUT/ratio_all_reduce.txt"
"$PY" "$HERE/compare.py" ratio "$OUT/sparkrig_all_reduce_wheelnccl.json" "$OUT/torch_all_reduce.json" --label "torch's NCCL" | tee "$OUT/ratio_all_reduce_wheelnccl.txt"
"$PY" "$HERE/compare.py" ratio "$OUT/sparkrig_all_reduce_2proc.json" "$OUT/torch_all_reduce.json" --label "system NCCL, one process per GPU" | tee "$OUT/ratio_all_reduce_2proc.txt"

# GEMM: sparkrig's cuBLAS run, then the same GEMM through torch.matmul.
"$SPARKRIG" bench gpu gemm --dtype bf16 --m 8192 --n 8192 --k 8192 --duration 10s --python "$PY" | tee "$OUT/gemm_bf16_8192.txt"

# Device-to-device copy, 1 GiB x 20 on GPU 0.
"$SPARKRIG" bench gpu memory --tests d2d --size 1G --iters 20 --devices 0 | tee "$OUT/memory_d2d.txt"
"$PY" "$HERE/compare.py" copy --size 1G --iters 20 --device 0 --out "$OUT/torch_copy.json" | tee "$OUT/torch_copy.txt"
