# One rank of a small NCCL job: all-reduce in a loop, one line per second.
# JOB_GPU picks the GPU (default 0); touching /tmp/hang.<rank> makes the
# host thread stop issuing collectives.
import os, sys, time
import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
gpu = int(os.environ.get("JOB_GPU", "0"))
torch.cuda.set_device(gpu)
dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device(f"cuda:{gpu}"))
x = torch.ones(4 << 20, device="cuda")
i = 0
last = time.time()
print(f"rank {rank} pid {os.getpid()} gpu {gpu} up", flush=True)
hang = f"/tmp/hang.{rank}"
while True:
    if os.path.exists(hang):
        print(f"rank {rank} iter {i}: host thread stops issuing collectives", flush=True)
        time.sleep(3600)
    dist.all_reduce(x)
    x.fill_(1.0)
    i += 1
    if i % 20 == 0:
        torch.cuda.synchronize()
    now = time.time()
    if now - last >= 1:
        print(f"rank {rank} iter {i}", flush=True)
        last = now
    time.sleep(0.01)
