"""One NCCL job for record.sh: init a process group, run all_reduce, print
the bus bandwidth. FAULT picks a misconfiguration record.sh sets up."""
import datetime
import os
import time

import torch
import torch.distributed as dist

fault = os.environ.get("FAULT", "healthy")
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
local = int(os.environ["LOCAL_RANK"])
# Every rank on GPU 0 when the host has one GPU, as a job does when it
# sets no device per local rank.
dev = local % torch.cuda.device_count()
torch.cuda.set_device(dev)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=30),
                        device_id=torch.device("cuda", dev))
x = torch.ones(64 * 1024 * 1024, device="cuda")  # 256 MiB of float32
for _ in range(3):
    dist.all_reduce(x)
torch.cuda.synchronize()
n = 20
t = time.perf_counter()
for _ in range(n):
    dist.all_reduce(x)
torch.cuda.synchronize()
dt = (time.perf_counter() - t) / n
size = x.numel() * x.element_size()
if rank == 0:
    busbw = size / dt * 2 * (world - 1) / world / 1e9 if world > 1 else 0.0
    print(f"all_reduce {size} bytes x{world} ranks: {dt * 1e3:.3f} ms, busbw {busbw:.1f} GB/s", flush=True)
dist.destroy_process_group()
