# Run by `sparkrig bench gpu ... --python PATH`: reports the environment's
# PyTorch stack and, when asked, times the same GEMM sparkrig runs. Prints one
# JSON object.
import json, site, sys, sysconfig, time

mode = sys.argv[1]
out = {"python": sys.version.split()[0], "site_packages": sorted(set(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))}
try:
    import torch
except Exception as e:  # no torch: still useful for library discovery
    out["error"] = "import torch: %s" % e
    print(json.dumps(out))
    sys.exit(0)
out["torch"] = torch.__version__
out["torch_cuda"] = torch.version.cuda
out["arch_list"] = torch.cuda.get_arch_list() if torch.cuda.is_available() else []
out["cuda_available"] = torch.cuda.is_available()
if torch.cuda.is_available():
    out["nccl"] = ".".join(map(str, torch.cuda.nccl.version())) if hasattr(torch.cuda, "nccl") else None
if mode == "gemm" and torch.cuda.is_available():
    dtype = {"bfloat16": torch.bfloat16, "half": torch.float16}[sys.argv[2]]
    m, n, k, dur, dev = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
    torch.cuda.set_device(dev)
    a = (torch.rand(m, k, device="cuda") * 2 - 1).to(dtype)
    b = (torch.rand(k, n, device="cuda") * 2 - 1).to(dtype)
    flops = 2.0 * m * n * k
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    batch = 1
    for _ in range(3):  # warm-up, size a batch to ~100 ms
        start.record()
        for _ in range(batch):
            c = a @ b
        end.record(); end.synchronize()
        batch = max(1, int(0.1 / (start.elapsed_time(end) / 1e3 / batch)))
    iters, secs, best, t0 = 0, 0.0, 0.0, time.time()
    while time.time() - t0 < dur:
        start.record()
        for _ in range(batch):
            c = a @ b
        end.record(); end.synchronize()
        s = start.elapsed_time(end) / 1e3
        iters += batch; secs += s; best = max(best, flops * batch / s / 1e12)
    out["gemm"] = {"tool": "torch " + torch.__version__, "dtype": sys.argv[2], "m": m, "n": n, "k": k,
                   "iters": iters, "gpu_seconds": secs, "tflops": flops * iters / secs / 1e12, "best_tflops": best}
print(json.dumps(out))
