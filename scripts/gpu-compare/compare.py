#!/usr/bin/env python3
"""PyTorch side of the `sparkrig bench gpu` comparison (see run.sh).

  compare.py allreduce --min 1M --max 8G --factor 2 --iters 50 --warmup 10 --out torch.json
      torch.distributed all_reduce, NCCL backend, one process per GPU, timed the
      way sparkrig and nccl-tests time it: per size `warmup` untimed calls, then
      `iters` calls between two host timestamps taken after a stream sync.
  compare.py copy --size 1G --iters 20 --device 0 --out torch_copy.json
      device-to-device copy (dst.copy_(src)) timed with CUDA events.
  compare.py ratio SPARKRIG.json TORCH.json [--label NAME]
      per-size busbw table and sparkrig/torch ratio (in-place vs torch's in-place call).
"""
import argparse, json, os, sys, time


def parse_size(s):
    s = s.upper().rstrip("B").rstrip("I")
    mult = 1
    if s and s[-1] in "KMGT":
        mult = 1 << (10 * ("KMGT".index(s[-1]) + 1))
        s = s[:-1]
    return int(s) * mult


def sizes(a):
    lo, hi, out = parse_size(a.min), parse_size(a.max), []
    while lo <= hi:
        out.append(lo)
        lo *= a.factor
    return out


def allreduce_worker(rank, world, a, q):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    rows = []
    for size in sizes(a):
        t = torch.zeros(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(a.warmup):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        us = (time.perf_counter() - t0) / a.iters * 1e6
        algbw = size / us / 1e3
        rows.append({"size_bytes": size, "time_us": us, "algbw_gbs": algbw, "busbw_gbs": algbw * 2 * (world - 1) / world})
        del t
        torch.cuda.empty_cache()
    if rank == 0:
        q.put({"tool": "torch " + torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
               "ranks": world, "iters": a.iters, "warmup": a.warmup, "rows": rows})
    dist.destroy_process_group()


def cmd_allreduce(a):
    import torch
    import torch.multiprocessing as mp
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    world = torch.cuda.device_count()
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.start_processes(allreduce_worker, args=(world, a, q), nprocs=world, start_method="spawn")
    res = q.get()
    json.dump(res, open(a.out, "w"), indent=1)
    for r in res["rows"]:
        print("%12d %10.2f us %8.2f GB/s busbw" % (r["size_bytes"], r["time_us"], r["busbw_gbs"]))


def cmd_copy(a):
    import torch
    torch.cuda.set_device(a.device)
    n = parse_size(a.size)
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(a.iters):
        dst.copy_(src)
    end.record()
    end.synchronize()
    gbs = n * a.iters / (start.elapsed_time(end) / 1e3) / 1e9
    res = {"tool": "torch " + torch.__version__, "name": "d2d", "bytes": n, "iters": a.iters, "gbs": gbs}
    json.dump(res, open(a.out, "w"), indent=1)
    print("torch d2d copy %d bytes x %d: %.2f GB/s" % (n, a.iters, gbs))


def cmd_ratio(a):
    tables = json.load(open(a.sparkrig))
    sp = next(t for t in tables if t["collective"] == "all_reduce")
    th = json.load(open(a.torch))
    tb = {r["size_bytes"]: r["busbw_gbs"] for r in th["rows"]}
    procs = "one process" if len(sp["devices"]) == sp["ranks"] else "one process per GPU"
    print("all_reduce busbw, %s: sparkrig (NCCL %s, %d ranks, %s) vs %s (NCCL %s, one process per GPU)"
          % (a.label, sp.get("nccl_version", "?"), sp["ranks"], procs, th["tool"], th["nccl"]))
    print("%12s %14s %14s %12s %9s %9s" % ("size(B)", "sparkrig_oop", "sparkrig_ip", "torch", "ratio_ip", "ratio_oop"))
    worst = None
    for r in sp["rows"]:
        s = r["size_bytes"]
        if s not in tb:
            continue
        ip, oop = r["in_place"]["busbw_gbs"], r["out_of_place"]["busbw_gbs"]
        ratio, ratio_oop = ip / tb[s], oop / tb[s]
        if s >= 256 << 20:
            worst = ratio if worst is None else min(worst, ratio)
        print("%12d %14.2f %14.2f %12.2f %9.3f %9.3f" % (s, oop, ip, tb[s], ratio, ratio_oop))
    if worst is not None:
        print("lowest in-place ratio at >= 256 MiB: %.3f (goal >= 0.98: %s)" % (worst, "met" if worst >= 0.98 else "NOT met"))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    ar = sub.add_parser("allreduce")
    ar.add_argument("--min", default="1M"); ar.add_argument("--max", default="8G")
    ar.add_argument("--factor", type=int, default=2); ar.add_argument("--iters", type=int, default=50)
    ar.add_argument("--warmup", type=int, default=10); ar.add_argument("--out", default="torch_all_reduce.json")
    cp = sub.add_parser("copy")
    cp.add_argument("--size", default="1G"); cp.add_argument("--iters", type=int, default=20)
    cp.add_argument("--device", type=int, default=0); cp.add_argument("--out", default="torch_copy.json")
    ra = sub.add_parser("ratio")
    ra.add_argument("sparkrig"); ra.add_argument("torch"); ra.add_argument("--label", default="")
    a = p.parse_args()
    {"allreduce": cmd_allreduce, "copy": cmd_copy, "ratio": cmd_ratio}[a.cmd](a)


if __name__ == "__main__":
    main()
